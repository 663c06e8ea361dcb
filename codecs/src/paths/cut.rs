//! An output of this codec cut to a size between whole lines of its tree, ending with a marker
//! that says how many paths the cut removed and the range of the original they are in (the
//! rule is in the module documentation of [`crate::cut`]).
//!
//! A listing's tree gives the original's lines back in the order of its entries (a directory
//! line that is a line of the input, `src`, before the entries under it), so the lines kept
//! from the start stand for the original's first lines, and what the cut removes is one range,
//! to its last line. A unit is a line of entries, with the directory lines just above it that
//! have no line of theirs kept yet: a directory line is never kept without a line under it.
//!
//! An `ls -R` tree is not cut by its grammar (its cut is `None`, and the host cuts it as
//! text): `ls -R` prints the root's entries first, then each directory's section, while the
//! tree writes a directory's entries where the directory is, so the start of the tree stands
//! for lines from several sections of the original, and what it leaves out is not one range.

use parrot_codec_api::{CutAt, Payload, json_string_chars};

use super::Paths;
use super::expand::entry_count;
use crate::cut::{Removed, Unit, cut_lines, line_count, lines_with_ends};

impl Paths {
    /// The codec's cut ([`parrot_codec_api::Codec::CUT`]): `output`, this codec's tree of
    /// `original`, cut between whole lines so that the kept lines and the marker cost at most
    /// `room`. `None` for a JSON original, an `ls -R` tree (see the module documentation), or
    /// an output that is not this codec's output of `original` (its inverse does not give
    /// `original` back).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
    ///
    /// let paths: parrot_codecs::Paths = parrot_codec_api::build(Params::empty()).unwrap();
    /// let input: String = (0..40)
    ///     .map(|i| format!("./src/module_{}/file_{i}.rs\n", i / 10))
    ///     .collect();
    /// let original = Payload::text_only(&input);
    /// let Outcome::Changed { payload, .. } = paths.compress(original, Level::Minimal).unwrap()
    /// else {
    ///     panic!("a tree");
    /// };
    /// let cut = paths.cut(original, &payload, 300).unwrap();
    /// assert!(payload[..cut.kept].ends_with("file_9.rs\n"));
    /// assert_eq!(
    ///     cut.marker,
    ///     "[… cut at max_result_chars: 30 of 40 paths not shown, original lines 11-40; \
    ///      wm_get_result {\"lines\":\"11-40\"}]"
    /// );
    /// ```
    pub fn cut(&self, original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        let first = output.split('\n').next().unwrap_or_default();
        let recursive = first.ends_with(':') && !first.starts_with(' ');
        if original.is_json() || recursive || self.expand(output).ok()? != original.text() {
            return None;
        }
        let units = walk(output)?;
        let lines = line_count(original.text());
        if units.iter().map(|unit| unit.lines).sum::<usize>() != lines {
            return None;
        }
        let largest = Removed {
            removed: lines,
            total: lines,
            noun: ("path", "paths"),
            files: None,
        };
        let removed = |kept: usize| Removed {
            removed: units[kept..].iter().map(|unit| unit.counted).sum(),
            ..largest
        };
        cut_lines(&units, lines, room, largest, removed)
    }
}

/// A line of the tree: where it ends in the output, what it costs, its indent and its text.
struct Line<'a> {
    end: usize,
    cost: usize,
    indent: usize,
    text: &'a str,
}

/// The units of a listing's tree (see the module documentation); `None` when a line does not
/// read as this codec writes one, or a directory line has no line under it.
fn walk(output: &str) -> Option<Vec<Unit>> {
    let rows: Vec<Line<'_>> = lines_with_ends(output)
        .map(|(piece, end)| {
            let line = piece.strip_suffix('\n').unwrap_or(piece);
            let text = line.trim_start_matches(' ');
            Line {
                end,
                cost: json_string_chars(piece),
                indent: line.len() - text.len(),
                text,
            }
        })
        .collect();
    let mut units = Vec::new();
    let mut unit = Unit {
        from: 1,
        ..Unit::default()
    };
    for (k, row) in rows.iter().enumerate() {
        unit.cost += row.cost;
        unit.end = row.end;
        let directory = rows.get(k + 1).is_some_and(|next| next.indent > row.indent);
        if directory {
            // A directory line the tree adds for grouping (`src/`) stands for no line.
            let entry = row.text.trim_matches('\'');
            unit.lines += usize::from(!entry.ends_with('/'));
            continue;
        }
        unit.lines += entry_count(row.text)?;
        unit.counted = unit.lines;
        let from = unit.from + unit.lines;
        units.push(unit);
        unit = Unit {
            from,
            ..Unit::default()
        };
    }
    (unit.cost == 0).then_some(units)
}
