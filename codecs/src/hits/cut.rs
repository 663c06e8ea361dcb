//! An output of this codec cut to a size between whole units of its grammar, ending with a
//! marker that says how many hit lines the cut removed, in how many files, and the range of
//! the original they are in (the rule is in the module documentation of [`crate::cut`]).
//!
//! The output walks as the original's lines in their order: every line under a heading (a hit
//! line or a `--`) and every block of one line (a line kept verbatim) is the next line of the
//! original; headings and blank lines stand for none. So the units kept from the start stand
//! for the original's first lines, and what the cut removes is one range, to its last line. A
//! unit is a hit line, with the blank line and the heading before it when it is the first of
//! its block (a heading is never kept without a hit), and with the `--` lines just before it
//! in its block (a `--` that ends a block goes with the hit line above it); or a line kept
//! verbatim, with the blank line before it.

use std::collections::HashSet;

use parrot_codec_api::{CutAt, Payload, json_string_chars};

use super::Hits;
use super::encode::is_separator;
use crate::cut::{Removed, Unit, cut_lines, line_count, lines_with_ends};

/// What a unit of this codec's output holds besides what every cut counts: the path of the
/// file its hit line is in (none for a line kept verbatim, which is no hit).
type File<'a> = Option<&'a str>;

impl Hits {
    /// The codec's cut ([`parrot_codec_api::Codec::CUT`]): `output`, this codec's output for
    /// `original`, cut between whole units so that the kept lines and the marker cost at most
    /// `room`. `None` for a JSON original, or an output that is not this codec's output of
    /// `original` (its inverse does not give `original` back): a text that is not one is not
    /// cut by its grammar.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
    ///
    /// let hits: parrot_codecs::Hits = parrot_codec_api::build(Params::empty()).unwrap();
    /// let input: String = (1..=60)
    ///     .map(|i| format!("src/f{}.rs:{i}:let value_{i} = {i};\n", i / 20))
    ///     .collect();
    /// let original = Payload::text_only(&input);
    /// let Outcome::Changed { payload, .. } = hits.compress(original, Level::Minimal).unwrap()
    /// else {
    ///     panic!("grouped");
    /// };
    /// let cut = hits.cut(original, &payload, 400).unwrap();
    /// // The first file's first 12 hits; its other 7 are among those not shown.
    /// assert!(payload[..cut.kept].ends_with("\n12:let value_12 = 12;\n"));
    /// assert_eq!(
    ///     cut.marker,
    ///     "[… cut at max_result_chars: 48 of 60 hit lines not shown, in 4 files, original \
    ///      lines 13-60; wm_get_result {\"lines\":\"13-60\"}]"
    /// );
    /// ```
    pub fn cut(&self, original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        if original.is_json() || self.expand(output).ok()? != original.text() {
            return None;
        }
        let (units, files) = walk(output)?;
        let lines = line_count(original.text());
        let last = units.last()?;
        if last.from + last.lines - 1 != lines {
            return None;
        }
        let all: HashSet<&str> = files.iter().flatten().copied().collect();
        let total = units.iter().map(|unit| unit.counted).sum();
        let largest = Removed {
            removed: total,
            total,
            noun: ("hit line", "hit lines"),
            files: Some(all.len()),
        };
        let removed = |kept: usize| {
            let in_files: HashSet<&str> = files[kept..].iter().flatten().copied().collect();
            Removed {
                removed: units[kept..].iter().map(|unit| unit.counted).sum(),
                files: Some(in_files.len()),
                ..largest
            }
        };
        cut_lines(&units, lines, room, largest, removed)
    }
}

/// The units of `output` (see the module documentation), each with the file of its hit line;
/// `None` when a block does not read as this codec writes one.
fn walk(output: &str) -> Option<(Vec<Unit>, Vec<File<'_>>)> {
    let mut units = Vec::new();
    let mut files = Vec::new();
    // The lines of the block being read, each with where it ends; and the blank line before
    // it, which goes with its first unit.
    let mut block: Vec<(&str, usize)> = Vec::new();
    let mut blank = 0;
    let mut next = 1;
    for (piece, end) in lines_with_ends(output) {
        let line = piece.strip_suffix('\n').unwrap_or(piece);
        if line.is_empty() {
            read_block(&block, blank, &mut next, &mut units, &mut files)?;
            block.clear();
            blank = json_string_chars(piece);
            continue;
        }
        block.push((piece, end));
    }
    read_block(&block, blank, &mut next, &mut units, &mut files)?;
    Some((units, files))
}

/// Adds the units of one block (its lines with where each ends; `blank` the cost of the blank
/// line before it) to `units`; `next` is the original line its first line stands for.
fn read_block<'a>(
    block: &[(&'a str, usize)],
    blank: usize,
    next: &mut usize,
    units: &mut Vec<Unit>,
    files: &mut Vec<File<'a>>,
) -> Option<()> {
    let [(first, first_end), rest @ ..] = block else {
        return None;
    };
    let mut unit = Unit {
        cost: blank + json_string_chars(first),
        from: *next,
        ..Unit::default()
    };
    if rest.is_empty() {
        units.push(Unit {
            end: *first_end,
            lines: 1,
            ..unit
        });
        files.push(None);
        *next += 1;
        return Some(());
    }
    let path = first.strip_suffix('\n').unwrap_or(first);
    for &(piece, end) in rest {
        unit.cost += json_string_chars(piece);
        unit.lines += 1;
        unit.end = end;
        *next += 1;
        let line = piece.strip_suffix('\n').unwrap_or(piece);
        if !is_separator(line) {
            units.push(Unit { counted: 1, ..unit });
            files.push(Some(path));
            unit = Unit {
                from: *next,
                ..Unit::default()
            };
        }
    }
    if unit.lines > 0 {
        // `--` lines that end the block go with the hit line above them.
        let last = units
            .last_mut()
            .filter(|_| files.last() == Some(&Some(path)))?;
        last.cost += unit.cost;
        last.lines += unit.lines;
        last.end = unit.end;
    }
    Some(())
}
