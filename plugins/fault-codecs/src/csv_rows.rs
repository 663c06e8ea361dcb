//! `csv_rows`: the one well-behaved codec of this fixture, and one that declares text output
//! ([`Codec::TEXT_OUTPUT`]): it keeps the host's handling of a plugin's text output (taken as it
//! is, verified through the inverse, wrapped as a JSON string under a `_tee` pointer) under test
//! across a real library boundary, now that no shipped plugin writes text for JSON.
//!
//! A JSON array of one or more objects that all have the same member names in the same order,
//! every member a scalar, becomes CSV (RFC 4180 quoting, `\n` between records and none after
//! the last): the names on the first record, then one record per object.
//!
//! - Numbers, `true`, `false` and `null` are written as their JSON text (`1.50` stays `1.50`).
//! - A string is written bare when it is not empty, holds none of `,` `"` CR LF, and does not
//!   read as a number or a literal; any other string is quoted, each `"` doubled. Names follow
//!   the same rule.
//! - Reading back, a quoted cell is a string; a bare cell is a number or a literal when it reads
//!   as one, else a string. So the inverse gives back every value exactly.
//!
//! Lossless at every level. Text payloads, other JSON shapes, and tables whose CSV would not be
//! strictly smaller pass through.
//!
//! It also offers a cut of its own output ([`Codec::CUT`]), the one plugin codec that does: the
//! stage's last rule (CONTRACT §4, rule 11) is held to treat a plugin's cut as it treats the
//! built-in `log` codec's. The cut keeps the names and whole records (a quoted cell's line
//! breaks never end one), and ends with
//! `[… cut at max_result_chars: rows K-L of N not shown (R rows, C characters of this result); wm_get_result {"rows":"K-L"}]`,
//! `K-L` being the original array's elements not shown (0-based, as the `rows` selector counts
//! them), `R` how many and `C` the characters of the output removed.
//!
//! ```text
//! [{"id":1,"name":"ada","note":null},{"id":2,"name":"a, b","note":"7"}]
//! id,name,note
//! 1,ada,null
//! 2,"a, b","7"
//! ```

use std::borrow::Cow;
use std::collections::HashSet;

use parrot_codec_api::{
    Codec, CodecError, Cut, CutAt, Inverse, Level, Outcome, Params, Payload, RECOVERY_TOOL,
    json_string_chars,
};
use parrot_json::Value;

/// Writes arrays of flat objects as CSV; see the module documentation.
pub struct CsvRows;

impl Codec for CsvRows {
    const NAME: &'static str = "csv_rows";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    const TEXT_OUTPUT: bool = true;
    const CUT: Option<Cut<Self>> = Some(Self::cut);

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(CsvRows)
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if !payload.is_json() || !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        Ok(match encode(input) {
            Some(csv) if csv.len() < input.len() => Outcome::lossless(csv),
            _ => Outcome::Unchanged,
        })
    }
}

impl CsvRows {
    /// The inverse: the rows back as compact JSON.
    fn expand(&self, payload: &str) -> Result<String, CodecError> {
        decode(payload)
    }

    /// The cut of `output`, this codec's CSV, to `room`: the names and the most whole records
    /// that fit with the marker, at least one record removed (see the module documentation).
    /// `None` for an output that is not this codec's (no record under the names).
    fn cut(&self, _original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        let ends = record_ends(output);
        // The records: the names, then one per row; the last has no line break after it.
        let rows = ends.len().checked_sub(1).filter(|&rows| rows > 0)?;
        // The characters and the cost of the output up to each record's end.
        let mut start = 0;
        let upto: Vec<(usize, usize)> = ends
            .iter()
            .scan((0, 0), |(chars, cost), &end| {
                let piece = &output[start..end];
                start = end;
                *chars += piece.chars().count();
                *cost += json_string_chars(piece);
                Some((*chars, *cost))
            })
            .collect();
        let all_chars = upto.last().map_or(0, |&(chars, _)| chars);
        let marker = |kept_chars: usize, first_row: usize| {
            format!(
                "[\u{2026} cut at max_result_chars: rows {first_row}-{last} of {rows} not shown \
                 ({}, {}); {RECOVERY_TOOL} {{\"rows\":\"{first_row}-{last}\"}}]",
                counted(rows - first_row, "row", "rows"),
                counted(
                    all_chars - kept_chars,
                    "character of this result",
                    "characters of this result"
                ),
                last = rows - 1,
            )
        };
        // Keeping the names and `k` rows ends at `ends[k]`: the most that fits, from the most
        // rows down (one row at least goes).
        for k in (0..rows).rev() {
            let (chars, cost) = upto[k];
            let marker = marker(chars, k);
            if cost + json_string_chars(&marker) <= room {
                return Some(CutAt::new(ends[k], marker));
            }
        }
        Some(CutAt::new(0, marker(0, 0)))
    }
}

/// Where each record of `csv` ends: after its line break, or at the end for the last. A line
/// break inside a quoted cell is the cell's.
fn record_ends(csv: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut quoted = false;
    for (at, byte) in csv.bytes().enumerate() {
        match byte {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => ends.push(at + 1),
            _ => {}
        }
    }
    ends.push(csv.len());
    ends
}

/// `n` and its noun, singular for one.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The CSV of `input`, when it is a table this codec takes.
fn encode(input: &str) -> Option<String> {
    let Ok(Value::Array(rows)) = Value::parse(input) else {
        return None;
    };
    let Some(Value::Object(names)) = rows.first() else {
        return None;
    };
    if names.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(input.len() / 2);
    for (i, (name, _)) in names.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_string(&name.decoded(), &mut out);
    }
    for row in &rows {
        let Value::Object(members) = row else {
            return None;
        };
        if members.len() != names.len() {
            return None;
        }
        out.push('\n');
        for (i, ((name, value), (expected, _))) in members.iter().zip(names).enumerate() {
            if !name.same_value(expected) {
                return None;
            }
            if i > 0 {
                out.push(',');
            }
            match value {
                Value::Null => out.push_str("null"),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Number(number) => out.push_str(number),
                Value::String(text) => push_string(&text.decoded(), &mut out),
                Value::Array(_) | Value::Object(_) => return None,
            }
        }
    }
    Some(out)
}

/// Whether a bare cell is a JSON number or literal rather than a string.
fn reads_as_scalar(cell: &str) -> bool {
    matches!(cell, "true" | "false" | "null") || parrot_json::is_number(cell)
}

/// A string cell: bare when nothing could misread it, else quoted.
fn push_string(text: &str, out: &mut String) {
    if !text.is_empty() && !text.contains([',', '"', '\r', '\n']) && !reads_as_scalar(text) {
        out.push_str(text);
    } else {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    }
}

/// One cell as read: its text (quotes removed, doubled quotes made single) and whether it was
/// quoted.
struct Cell<'a> {
    text: Cow<'a, str>,
    quoted: bool,
}

fn malformed(record: usize, what: &str) -> CodecError {
    CodecError::invalid_input(format!("CSV record {record}: {what}"))
}

/// The records of `csv`, each a list of cells.
fn records(csv: &str) -> Result<Vec<Vec<Cell<'_>>>, CodecError> {
    let bytes = csv.as_bytes();
    let (mut records, mut record) = (Vec::new(), Vec::new());
    let mut pos = 0;
    loop {
        let number = records.len() + 1;
        let cell = if bytes.get(pos) == Some(&b'"') {
            let mut text = String::new();
            let mut start = pos + 1;
            loop {
                let Some(quote) = csv[start..].find('"').map(|at| start + at) else {
                    return Err(malformed(number, "a quoted cell is not closed"));
                };
                text.push_str(&csv[start..quote]);
                if bytes.get(quote + 1) == Some(&b'"') {
                    text.push('"');
                    start = quote + 2;
                } else {
                    pos = quote + 1;
                    break;
                }
            }
            Cell {
                text: Cow::Owned(text),
                quoted: true,
            }
        } else {
            let end = csv[pos..]
                .find([',', '\n', '"', '\r'])
                .map_or(csv.len(), |at| pos + at);
            let text = &csv[pos..end];
            pos = end;
            Cell {
                text: Cow::Borrowed(text),
                quoted: false,
            }
        };
        record.push(cell);
        match bytes.get(pos) {
            None => {
                records.push(record);
                return Ok(records);
            }
            Some(b',') => pos += 1,
            Some(b'\n') => {
                records.push(std::mem::take(&mut record));
                pos += 1;
            }
            Some(b'"') => return Err(malformed(number, "a quote inside a bare cell")),
            Some(b'\r') => return Err(malformed(number, "a carriage return outside quotes")),
            Some(_) => return Err(malformed(number, "text after a quoted cell")),
        }
    }
}

/// The JSON array of objects that `csv` holds.
fn decode(csv: &str) -> Result<String, CodecError> {
    let records = records(csv)?;
    let Some((names, rows)) = records.split_first().filter(|(_, rows)| !rows.is_empty()) else {
        return Err(malformed(2, "no row under the names"));
    };
    let mut seen = HashSet::new();
    if let Some(name) = names.iter().find(|name| !seen.insert(&name.text)) {
        return Err(malformed(1, &format!("the name \"{}\" twice", name.text)));
    }
    let mut out = String::with_capacity(csv.len() * 2);
    out.push('[');
    for (at, row) in rows.iter().enumerate() {
        if row.len() != names.len() {
            return Err(malformed(
                at + 2,
                &format!("{} cells under {} names", row.len(), names.len()),
            ));
        }
        if at > 0 {
            out.push(',');
        }
        out.push('{');
        for (i, (name, cell)) in names.iter().zip(row).enumerate() {
            if i > 0 {
                out.push(',');
            }
            parrot_json::write_string(&name.text, &mut out);
            out.push(':');
            if !cell.quoted && reads_as_scalar(&cell.text) {
                out.push_str(&cell.text);
            } else {
                parrot_json::write_string(&cell.text, &mut out);
            }
        }
        out.push('}');
    }
    out.push(']');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(input: &str) -> Outcome {
        CsvRows
            .compress(Payload::json(input), Level::Minimal)
            .unwrap()
    }

    /// One row per case: the JSON, and the CSV it becomes.
    #[test]
    fn tables_become_csv_and_expand_back_exactly() {
        let cases = [
            (
                r#"[{"id":1,"name":"ada","note":null},{"id":2,"name":"a, b","note":"7"}]"#,
                "id,name,note\n1,ada,null\n2,\"a, b\",\"7\"",
            ),
            (
                r#"[ {"n": 1.50, "ok": true, "s": ""}, {"n": -0, "ok": false, "s": "say \"hi\""} ]"#,
                "n,ok,s\n1.50,true,\"\"\n-0,false,\"say \"\"hi\"\"\"",
            ),
            (
                r#"[{"a b":"line\none","null":"null","x":"\u0061"},{"a b":"tab\there","null":"True","x":"1e5x"}]"#,
                "a b,\"null\",x\n\"line\none\",\"null\",a\ntab\there,True,1e5x",
            ),
            (
                r#"[{"k,":123456789012345678901234567890},{"k,":1E5}]"#,
                "\"k,\"\n123456789012345678901234567890\n1E5",
            ),
        ];
        for (input, csv) in cases {
            let out = compress(input);
            assert_eq!(out, Outcome::lossless(csv), "for {input}");
            let expanded = CsvRows.expand(csv).unwrap();
            assert!(
                parrot_json::equivalent(&expanded, input, false),
                "{input} came back as {expanded}"
            );
        }
    }

    #[test]
    fn other_payloads_pass_through() {
        let cases = [
            Payload::text_only("id,name\n1,ada"),
            Payload::json("[]"),
            Payload::json("[{}]"),
            Payload::json(r#"{"id":1,"name":"a long enough name"}"#),
            Payload::json(r#"[{"id":1,"tags":["a"]},{"id":2,"tags":[]}]"#),
            Payload::json(r#"[{"id":1,"name":"ada"},{"name":"bob","id":2}]"#),
            Payload::json(r#"[{"id":1,"name":"ada"},{"id":2}]"#),
            Payload::json(r#"[{"id":1,"name":"ada"},3]"#),
        ];
        for payload in cases {
            for level in Level::ALL {
                let out = CsvRows.compress(payload, level).unwrap();
                assert_eq!(out, Outcome::Unchanged, "for {payload:?} at {level:?}");
            }
        }
    }

    /// One row per case: CSV this codec never writes, and what the error says.
    #[test]
    fn expand_names_the_record_it_cannot_read() {
        let cases = [
            ("a,b\n1,\"x", "CSV record 2: a quoted cell is not closed"),
            ("a,b\n1,x\"y", "CSV record 2: a quote inside a bare cell"),
            ("a,b\n\"x\"y,1", "CSV record 2: text after a quoted cell"),
            (
                "a,b\r\n1,2",
                "CSV record 1: a carriage return outside quotes",
            ),
            ("a,b\n1,2\n3", "CSV record 3: 1 cells under 2 names"),
            ("a,a\n1,2", "CSV record 1: the name \"a\" twice"),
            ("a,b", "CSV record 2: no row under the names"),
        ];
        for (csv, expected) in cases {
            let err = CsvRows.expand(csv).unwrap_err();
            assert!(err.to_string().contains(expected), "for {csv:?}: {err}");
        }
    }
}
