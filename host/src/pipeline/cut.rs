//! Rule 11's cut: a final payload over `max_result_chars` code points goes out as
//! `{"result":"<the codec's payload, cut>\n<a cut marker>","_tee":<pointer, reason cut>}`,
//! holding at most `max_result_chars` code points in all.
//!
//! What is cut is the codec's own payload (never the payload with its pointer, so there is one
//! wrapper, never a wrapper in a wrapper), and the text kept always ends with a marker saying
//! what the cut removed and how to get it back:
//!
//! - an output of the `log` codec for the whole input is cut by its grammar, at a line
//!   boundary between its units (a verbatim line, or a region with its fold lines and its
//!   marker), and ends with a marker of the codec's own family that gives the original lines
//!   not shown, the output lines and the failure lines removed, and the selector that returns
//!   those lines ([`parrot_codecs::Log::cut`]);
//! - any other payload (another codec's text, JSON on one line) is cut at the last line break
//!   that fits when the kept text then keeps at least half of what would fit, else at a
//!   character, and ends with
//!   `[… cut at max_result_chars: R lines of this result not shown, from its line L on (C characters); wm_get_result {} returns the whole original]`,
//!   or, cut inside a line,
//!   `[… cut at max_result_chars inside line L of this result: C characters not shown; wm_get_result {} returns the whole original]`.
//!   Its lines are the payload's, not the original's, so the selector is the whole original.
//!
//! Sizes are the JSON text's code points: the text is measured as its JSON string writes it
//! (`"`, `\`, and control characters escaped), and the marker is sized for the largest numbers
//! it can hold before the cut is chosen. A limit smaller than the wrapper and the marker alone
//! (a few hundred code points) cannot be met: the output is then the wrapper around the
//! marker alone.

use parrot_codec_api::RECOVERY_TOOL;
use parrot_codecs::Log;

use crate::counted;

/// The codec's `payload` cut so that `{"result":"<kept>\n<marker>","_tee":<pointer>}` holds at
/// most `max` code points; `log` is the `log` codec and the text it compressed, when the
/// payload is its output for the whole input.
pub(super) fn cut(payload: &str, log: Option<(&Log, &str)>, pointer: &str, max: usize) -> String {
    let room = max.saturating_sub(wrap("", pointer).chars().count());
    let text = log
        .and_then(|(codec, original)| codec.cut(original, payload, room, &escaped))
        .map(|cut| format!("{}{}", &payload[..cut.kept], cut.marker))
        .unwrap_or_else(|| cut_text(payload, room));
    wrap(&text, pointer)
}

/// `text` as the `result` of a wrapper with `pointer` as its `_tee`.
fn wrap(text: &str, pointer: &str) -> String {
    format!(
        "{{\"result\":{},\"_tee\":{pointer}}}",
        serde_json::to_string(text).unwrap_or_default()
    )
}

/// How many code points `text` takes inside a JSON string, as `serde_json` writes it.
fn escaped(text: &str) -> usize {
    text.chars().map(escaped_char).sum()
}

/// How many code points `c` takes inside a JSON string, as `serde_json` writes it.
fn escaped_char(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if c < ' ' => 6,
        _ => 1,
    }
}

/// A payload that is not a `log` output, cut to cost at most `room` with its marker (see the
/// module docs): at a line break or at a character, never inside one.
fn cut_text(payload: &str, room: usize) -> String {
    let chars = payload.chars().count();
    let lines = payload.split_inclusive('\n').count();
    // Counts of at least 2 take the plural, the longer form, with as many digits as 1.
    let (most_lines, most_chars) = (lines.max(2), chars.max(2));
    let reserve = escaped("\n")
        + escaped(&line_marker(most_lines, most_lines, most_chars))
            .max(escaped(&inside_marker(most_lines, most_chars)));
    // At least one character goes: what goes out is always a cut.
    let budget = room
        .saturating_sub(reserve)
        .min(escaped(payload).saturating_sub(1));
    let mut end = 0;
    let mut spent = 0;
    let mut last_break = None;
    for (at, c) in payload.char_indices() {
        spent += escaped_char(c);
        if spent > budget {
            break;
        }
        end = at + c.len_utf8();
        if c == '\n' {
            last_break = Some(at);
        }
    }
    let (kept, rest) = payload.split_at(end);
    match last_break.filter(|&at| 2 * (at + 1) >= end) {
        Some(at) => {
            let (shown, rest) = payload.split_at(at + 1);
            let from = shown.matches('\n').count() + 1;
            let marker = line_marker(lines - (from - 1), from, rest.chars().count());
            format!("{shown}{marker}")
        }
        None => {
            let line = kept.matches('\n').count() + 1;
            let marker = inside_marker(line, rest.chars().count());
            format!("{kept}\n{marker}")
        }
    }
}

/// The marker of a cut at a line break: `lines` lines, from line `from` of the payload on,
/// `chars` characters, not shown.
fn line_marker(lines: usize, from: usize, chars: usize) -> String {
    format!(
        "[\u{2026} cut at max_result_chars: {} of this result not shown, from its line {from} \
         on ({}); {RECOVERY_TOOL} {{}} returns the whole original]",
        counted(lines, "line", "lines"),
        counted(chars, "character", "characters"),
    )
}

/// The marker of a cut inside line `line` of the payload: `chars` characters not shown.
fn inside_marker(line: usize, chars: usize) -> String {
    format!(
        "[\u{2026} cut at max_result_chars inside line {line} of this result: {} not shown; \
         {RECOVERY_TOOL} {{}} returns the whole original]",
        counted(chars, "character", "characters"),
    )
}

#[cfg(test)]
mod tests {
    use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};

    use super::*;

    const POINTER: &str = r#"{"key":"k","reason":"cut"}"#;

    /// A 40-line build log: 6 failure lines (one only by the entry's `failure_patterns`)
    /// among `Compiling` lines, and what the `log` codec (with `failure_patterns = ["flaky"]`)
    /// makes of it.
    fn log() -> (Log, String, String) {
        let codec: Log = parrot_codec_api::build(
            Params::from_json(r#"{"failure_patterns":["flaky"],"head_lines":0,"tail_lines":0,"context_before":0,"context_after":0}"#).unwrap(),
        )
        .unwrap();
        let original: String = (1..=40)
            .map(|i| match i {
                5 | 6 | 20 | 31 | 32 => format!("error[E0{i}]: mismatched types in crate_{i}\n"),
                25 => "test t_25 is flaky\n".to_owned(),
                _ => format!("   Compiling crate_{i} v0.1.{i}\n"),
            })
            .collect();
        let Outcome::Changed { payload, .. } = codec
            .compress(Payload::text_only(&original), Level::Normal)
            .unwrap()
        else {
            panic!("the log is compressed");
        };
        (codec, original, payload)
    }

    #[test]
    fn cuts_fit_the_limit_in_one_wrapper_at_a_boundary_and_say_what_they_removed() {
        let (codec, original, output) = log();
        let json = format!("{{\"a\":\"{}\"}}", "x".repeat(400));
        let lines: String = (1..=50)
            .map(|i| format!("line {i:02} of the text\n"))
            .collect();
        let multibyte = format!("{}\n{}", "é".repeat(30), "日本語".repeat(200));
        let head = "[… 4 lines omitted, lines 1-4: 0 folded above; 0 failure lines omitted; \
            over budget to keep every failure line; wm_get_result {\"lines\":\"1-4\"}]\n\
            error[E05]: mismatched types in crate_5\n\
            error[E06]: mismatched types in crate_6\n\
            [… 13 lines omitted, lines 7-19: 0 folded above; 0 failure lines omitted; \
            over budget to keep every failure line; wm_get_result {\"lines\":\"7-19\"}]\n";
        // Each row: the case, the payload, the log codec and its original, the limit, the
        // result expected.
        type Row<'a> = (&'a str, &'a str, Option<(&'a Log, &'a str)>, usize, String);
        let cases: Vec<Row<'_>> = vec![
            // Lines 20, 25 (a failure by `failure_patterns` only), 31 and 32 are the failures
            // removed; the 7 lines are those four and three regions' markers.
            (
                "a log output, cut between its units",
                &output,
                Some((&codec, &original)),
                600,
                format!(
                    "{head}[… 21 lines omitted, lines 20-40: cut at max_result_chars, 7 lines of \
                     this result not shown; 4 failure lines omitted; \
                     wm_get_result {{\"lines\":\"20-40\"}}]"
                ),
            ),
            (
                "a log output under a limit the marker alone is over",
                &output,
                Some((&codec, &original)),
                100,
                "[… 40 lines omitted, lines 1-40: cut at max_result_chars, 11 lines of this \
                 result not shown; 6 failure lines omitted; wm_get_result {\"lines\":\"1-40\"}]"
                    .to_owned(),
            ),
            (
                "a text that is not the log's output is cut as text",
                &output,
                Some((&codec, "another original")),
                600,
                format!(
                    "{head}[… cut at max_result_chars: 7 lines of this result not shown, from \
                     its line 5 on (586 characters); wm_get_result {{}} returns the whole \
                     original]"
                ),
            ),
            (
                "JSON on one line, cut at a character",
                &json,
                None,
                400,
                format!(
                    "{{\"a\":\"{}\n[… cut at max_result_chars inside line 1 of this result: 203 \
                     characters not shown; wm_get_result {{}} returns the whole original]",
                    "x".repeat(199)
                ),
            ),
            (
                "lines of text, cut at a line break",
                &lines,
                None,
                400,
                format!(
                    "{}[… cut at max_result_chars: 41 lines of this result not shown, from its \
                     line 10 on (820 characters); wm_get_result {{}} returns the whole original]",
                    &lines[..9 * 20]
                ),
            ),
            (
                "multibyte text, cut between two characters",
                &multibyte,
                None,
                400,
                format!(
                    "{}\n{}日本\n[… cut at max_result_chars inside line 2 of this result: 424 \
                     characters not shown; wm_get_result {{}} returns the whole original]",
                    "é".repeat(30),
                    "日本語".repeat(58)
                ),
            ),
        ];
        for (name, payload, log, max, expected) in cases {
            let out = cut(payload, log, POINTER, max);
            let value: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(
                value["_tee"],
                serde_json::json!({"key":"k","reason":"cut"}),
                "{name}"
            );
            assert_eq!(value["result"].as_str(), Some(&*expected), "{name}");
            assert!(
                out.chars().count() <= max || !expected.contains('\n'),
                "{name}: {} code points",
                out.chars().count()
            );
        }
    }

    /// "1 lines" was printed for a count of one.
    #[test]
    fn a_count_of_one_takes_the_singular() {
        assert_eq!(
            super::line_marker(1, 2, 1),
            "[\u{2026} cut at max_result_chars: 1 line of this result not shown, from its line 2 \
             on (1 character); wm_get_result {} returns the whole original]"
        );
        assert!(super::inside_marker(3, 1).contains(" 1 character not shown;"));
    }
}
