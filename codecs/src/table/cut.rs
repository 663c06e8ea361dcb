//! An output of this codec cut to a size between whole lines, ending with a marker that says
//! how many rows the cut removed and the range of the original they are in (the rule is in
//! the module documentation of [`crate::cut`]).
//!
//! Below its note, the output is the original's lines in their order, one for one, so the
//! lines kept from the start stand for the original's first lines, and what the cut removes
//! is one range, to its last line. The first unit is the *head*, always kept whole: the note
//! (without it no row can be read), the lines down to the first row (a title, `total 92`), the
//! first row (the column names, in most tables), the rows at the top that keep the constant
//! columns (the note's ` after the first N`), and the rules right under them (`---- ----`). Each
//! line after it is a unit of its own.
//!
//! The rows kept are the rows of the whole table, one space apart: the inverse finds each
//! section's widths from all its rows, so a cut table is for reading, not for expanding (the
//! original is in the tee store, and the marker's selector returns the lines removed).

use parrot_codec_api::{CutAt, Payload, json_string_chars};

use super::Table;
use super::decode::rows;
use crate::cut::{Removed, Unit, cut_lines, line_count, lines_with_ends};

impl Table {
    /// The codec's cut ([`parrot_codec_api::Codec::CUT`]): `output`, this codec's output for
    /// `original`, cut between whole lines, its head always kept (see the module
    /// documentation), so that the kept lines and the marker cost at most `room`. `None` for a
    /// JSON original, or an output that is not this codec's output of `original` (its inverse
    /// does not give `original` back).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
    ///
    /// let table: parrot_codecs::Table = parrot_codec_api::build(Params::empty()).unwrap();
    /// let mut input = String::from("Package            Version\n------------------ -------\n");
    /// for i in 0..40 {
    ///     input.push_str(&format!("package-{i:<10} 1.{i}.0\n"));
    /// }
    /// let original = Payload::text_only(&input);
    /// let Outcome::Changed { payload, .. } = table.compress(original, Level::Minimal).unwrap()
    /// else {
    ///     panic!("a table");
    /// };
    /// let cut = table.cut(original, &payload, 400).unwrap();
    /// assert!(payload[..cut.kept].starts_with("[table: 2 columns"));
    /// assert_eq!(
    ///     cut.marker,
    ///     "[… cut at max_result_chars: 29 of 42 rows not shown, original lines 14-42; \
    ///      wm_get_result {\"lines\":\"14-42\"}]"
    /// );
    /// ```
    pub fn cut(&self, original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        if original.is_json() || self.expand(output).ok()? != original.text() {
            return None;
        }
        let (rows, header_rows) = rows(output)?;
        let lines = line_count(original.text());
        let units = walk(output, &rows, header_rows, lines)?;
        let total = rows.iter().filter(|&&row| row).count();
        let largest = Removed {
            removed: total,
            total,
            noun: ("row", "rows"),
            files: None,
        };
        let removed = |kept: usize| Removed {
            removed: units[kept..].iter().map(|unit| unit.counted).sum(),
            ..largest
        };
        cut_lines(&units, lines, room, largest, removed)
    }
}

/// The units of `output` (see the module documentation), whose lines below the note are rows
/// where `rows` says so, the first `header_rows` rows keeping the constant columns; `None`
/// when its lines below the note are not the original's `lines` lines.
fn walk(output: &str, rows: &[bool], header_rows: usize, lines: usize) -> Option<Vec<Unit>> {
    let mut pieces = lines_with_ends(output);
    let (note, _) = pieces.next()?;
    let mut head = Unit {
        cost: json_string_chars(note),
        from: 1,
        ..Unit::default()
    };
    let mut units = Vec::new();
    let mut head_rows = 0;
    for (k, (piece, end)) in pieces.enumerate() {
        let row = *rows.get(k)?;
        let line = piece.strip_suffix('\n').unwrap_or(piece);
        let in_head = units.is_empty()
            && (head_rows == 0 || head_rows < header_rows || (row && is_rule(line)));
        let unit = Unit {
            end,
            cost: json_string_chars(piece),
            lines: 1,
            from: k + 1,
            counted: usize::from(row),
        };
        if in_head {
            head.end = end;
            head.cost += unit.cost;
            head.lines += 1;
            head.counted += unit.counted;
            head_rows += unit.counted;
            continue;
        }
        if units.is_empty() {
            units.push(head);
        }
        units.push(unit);
    }
    if units.is_empty() && head.lines > 0 {
        units.push(head);
    }
    let last = units.last()?;
    (last.from + last.lines - 1 == lines).then_some(units)
}

/// Whether a row is a rule under a header (`---- ----`, `====`, `+--+`): dashes or equal
/// signs, and nothing but them, `+`, `|`, spaces (and the `\r` of a CRLF line).
fn is_rule(line: &str) -> bool {
    line.contains(['-', '='])
        && line
            .bytes()
            .all(|b| matches!(b, b'-' | b'=' | b'+' | b'|' | b' ' | b'\r'))
}
