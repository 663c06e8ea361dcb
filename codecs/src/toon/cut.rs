//! An output of this codec cut to a size between whole rows of its last table, ending with a
//! marker that says how many rows the cut removed and the selector that returns them.
//!
//! A table's rows are one line each, in the order of the array's elements. When the document
//! ends with a table, the lines kept from the start are everything above the table's rows (its
//! header, and the constant columns said once above a hoisted table's `_rows`), always kept
//! whole, and its first rows; what the cut removes is then the elements from the first row
//! not shown to the array's end, one range the `rows` selector returns exactly:
//!
//! `[… cut at max_result_chars: R of N rows not shown, rows A-B of the array at /key; wm_get_result {"pointer":"/key","rows":"A-B"}]`
//!
//! (`A-B` 0-based and inclusive, as the selector counts; for a root array, `of the root
//! array` and `{"rows":"A-B"}`). When not even the head fits with it, nothing is kept and the
//! marker says so: `[… cut at max_result_chars: all of this result not shown, N rows of the
//! array at /key among it; wm_get_result {} returns the whole original]`. The table is at the top level of the document: the root
//! array, or a member of the root object written with a plain key (`rows[N]{…}:`, or hoisted,
//! `rows:` then `_constants:` and `_rows[N]{…}:`). Any other document (one that does not end
//! with such a table, a key written in quotes) is not cut by its grammar: the host cuts it as
//! text.

use parrot_codec_api::{CutAt, Payload, RECOVERY_TOOL, json_string_chars};

use super::Toon;
use crate::cut::{Unit, cut, lines_with_ends};

/// The last table of an output: where its array is in the original, and its rows.
struct Table {
    /// The JSON Pointer of the array (RFC 6901), empty for the root array.
    pointer: String,
    /// How many lines of the output come before its first row.
    head: usize,
    /// Its rows (the array's elements).
    rows: usize,
}

impl Toon {
    /// The codec's cut ([`parrot_codec_api::Codec::CUT`]): `output`, this codec's TOON of the
    /// JSON `original`, cut between whole rows of the table it ends with, so that the kept
    /// lines and the marker cost at most `room`. `None` for a text original, a document that
    /// does not end with a table at its top level (see the module documentation), or whose
    /// table's rows are not the elements of the array at that place in `original` (an output
    /// that is not this codec's output of `original`). The output is read by its lines and the
    /// original by spans: nothing is expanded or parsed into values, so that the cut of a
    /// large result costs little memory beside it.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
    ///
    /// let toon: parrot_codecs::Toon = parrot_codec_api::build(Params::empty()).unwrap();
    /// let rows: Vec<String> = (0..50)
    ///     .map(|i| format!(r#"{{"id":{i},"name":"user {i}"}}"#))
    ///     .collect();
    /// let input = format!(r#"{{"driver":"pg","rows":[{}]}}"#, rows.join(","));
    /// let original = Payload::json(&input);
    /// let Outcome::Changed { payload, .. } = toon.compress(original, Level::Minimal).unwrap()
    /// else {
    ///     panic!("a table");
    /// };
    /// assert!(payload.starts_with("driver: pg\nrows[50]{id,name}:\n  0,user 0\n"));
    /// let cut = toon.cut(original, &payload, 300).unwrap();
    /// assert!(payload[..cut.kept].ends_with("  9,user 9\n"));
    /// assert_eq!(
    ///     cut.marker,
    ///     "[… cut at max_result_chars: 40 of 50 rows not shown, rows 10-49 of the array at \
    ///      /rows; wm_get_result {\"pointer\":\"/rows\",\"rows\":\"10-49\"}]"
    /// );
    /// ```
    pub fn cut(&self, original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        if !original.is_json() {
            return None;
        }
        let lines: Vec<(&str, usize)> = lines_with_ends(output).collect();
        let table = last_table(&lines)?;
        if array_len(original.text(), &table.pointer)? != table.rows {
            return None;
        }
        let head = &lines[..table.head];
        let mut units = vec![Unit {
            end: head.last().map_or(0, |&(_, end)| end),
            cost: head.iter().map(|&(line, _)| json_string_chars(line)).sum(),
            ..Unit::default()
        }];
        units.extend(lines[table.head..].iter().map(|&(line, end)| Unit {
            end,
            cost: json_string_chars(line),
            lines: 1,
            counted: 1,
            ..Unit::default()
        }));
        let n = table.rows;
        // `kept` units are the head and `kept - 1` rows: the first row not shown is row
        // `kept - 1` (0-based). Nothing kept, the head goes too: the whole original.
        let marker_after = |kept: usize| match kept {
            0 => whole(&table.pointer, n),
            _ => marker(&table.pointer, n, kept - 1),
        };
        let widest = n.max(2);
        let reserve = json_string_chars(&marker(&table.pointer, widest, widest - 1))
            .max(json_string_chars(&whole(&table.pointer, widest)));
        cut(&units, room, reserve, marker_after)
    }
}

/// The marker of a cut that shows the first `from` rows of the `n` of the array at `pointer`.
fn marker(pointer: &str, n: usize, from: usize) -> String {
    let last = n - 1;
    let (place, selector) = if pointer.is_empty() {
        (
            "of the root array".to_owned(),
            format!("{{\"rows\":\"{from}-{last}\"}}"),
        )
    } else {
        (
            format!("of the array at {pointer}"),
            format!("{{\"pointer\":\"{pointer}\",\"rows\":\"{from}-{last}\"}}"),
        )
    };
    format!(
        "[\u{2026} cut at max_result_chars: {} of {} not shown, rows {from}-{last} {place}; \
         {RECOVERY_TOOL} {selector}]",
        n - from,
        crate::counted::counted(n, "row", "rows"),
    )
}

/// The marker of a cut that keeps nothing, not even the table's head: the whole original,
/// which holds the `n` rows of the array at `pointer`.
fn whole(pointer: &str, n: usize) -> String {
    let place = if pointer.is_empty() {
        "the root array".to_owned()
    } else {
        format!("the array at {pointer}")
    };
    format!(
        "[\u{2026} cut at max_result_chars: all of this result not shown, {} of {place} \
         among it; {RECOVERY_TOOL} {{}} returns the whole original]",
        crate::counted::counted(n, "row", "rows"),
    )
}

/// The table the document ends with, when it is at the top level (see the module
/// documentation): rows at one indent up to the last line, under a header `key[N]{…}:` with
/// `N` of them.
fn last_table(lines: &[(&str, usize)]) -> Option<Table> {
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let (last, _) = lines.last()?;
    let depth = indent(last);
    let first_row = lines.iter().rposition(|&(line, _)| indent(line) != depth)? + 1;
    let header = lines[first_row - 1].0;
    let rows = lines.len() - first_row;
    if depth == 0 || indent(header) + 2 != depth || header_rows(text(header))? != rows {
        return None;
    }
    let key = text(header).split_once('[')?.0;
    let pointer = match (indent(header), key) {
        (0, "") => String::new(),
        (0, "_rows") if hoisted(&lines[..first_row - 1], 0) => String::new(),
        (0, key) => format!("/{}", plain_key(key)?),
        // A hoisted table: `key:`, then `_constants:` and `_rows[N]{…}:` under it.
        (2, "_rows") if hoisted(&lines[..first_row - 1], 2) => {
            let parent = lines[..first_row - 1]
                .iter()
                .rev()
                .find(|&&(line, _)| indent(line) == 0)?;
            let key = text(parent.0).strip_suffix(':')?;
            format!("/{}", plain_key(key)?)
        }
        _ => return None,
    };
    Some(Table {
        pointer,
        head: first_row,
        rows,
    })
}

/// A line without its indent and its line break.
fn text(line: &str) -> &str {
    line.trim_end_matches('\n').trim_start_matches(' ')
}

/// `N` of a table's header `key[N]{fields}:`.
fn header_rows(header: &str) -> Option<usize> {
    let (_, rest) = header.split_once('[')?;
    let (count, rest) = rest.split_once(']')?;
    (rest.starts_with('{') && rest.ends_with("}:") && count.bytes().all(|b| b.is_ascii_digit()))
        .then(|| count.parse().ok())
        .flatten()
}

/// Whether the lines above a `_rows` header at `indent` hold, at that indent, the
/// `_constants:` of a hoisted table just before it (its members between them, deeper).
fn hoisted(above: &[(&str, usize)], indent: usize) -> bool {
    let at = |line: &str| line.len() - line.trim_start_matches(' ').len();
    above
        .iter()
        .rev()
        .find(|&&(line, _)| at(line) <= indent)
        .is_some_and(|&(line, _)| {
            at(line) == indent && line.trim_matches([' ', '\n']) == "_constants:"
        })
}

/// A key written without quotes, as it is in a JSON Pointer: TOON writes a key bare only when
/// it is a letter or `_`, then letters, digits, `_` and `.`, none of which a pointer escapes.
fn plain_key(key: &str) -> Option<&str> {
    let mut bytes = key.bytes();
    let first = bytes.next()?;
    ((first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
    .then_some(key)
}

/// How many elements the array at `pointer` (empty, or `/key` of the root object) of the JSON
/// `text` has; `None` when there is none. Read by spans (the root object's members, the
/// array's elements), without building the document's values: the cut runs on results over
/// the host's size limit, and its memory stays a small part of theirs.
fn array_len(text: &str, pointer: &str) -> Option<usize> {
    let root = text.len() - text.trim_start().len();
    let start = match pointer.strip_prefix('/') {
        None => root,
        Some(key) => {
            // The codec read the original whole already: its members by structure alone.
            let members = parrot_json::members_unchecked(text, root)?;
            members
                .into_iter()
                .find(|member| member.name.is(key))?
                .value
                .start
        }
    };
    if text.as_bytes().get(start) != Some(&b'[') {
        return None;
    }
    parrot_json::elements(text, start)
        .ok()
        .map(|elements| elements.len())
}
