//! Rule 11's cut: a final payload over `max_result_chars` code points goes out as
//! `{"result":"<the codec's payload, cut>\n<a cut marker>","_tee":<pointer, reason cut>}`,
//! holding at most `max_result_chars` code points in all.
//!
//! What is cut is the codec's own payload (never the payload with its pointer, so there is one
//! wrapper, never a wrapper in a wrapper), and the text kept always ends with a marker saying
//! what the cut removed and how to get it back:
//!
//! - the output of a codec that offers a cut of its own output (`DynCodec::cut`, declared with
//!   `Codec::CUT`; built in or a plugin's), for the whole input, is cut by the codec, at its
//!   grammar's boundaries, and ends with the codec's own marker (the `log` codec's: between
//!   its units, a verbatim line or a region with its fold lines and its marker, with the
//!   original lines not shown, the output lines and the failure lines removed, and the
//!   selector that returns those lines), when the cut keeps the rules (`Cut`'s: whole lines,
//!   within the room, a marker of one line); a cut that breaks them is not taken;
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

use parrot_codec_api::{CutAt, DynCodec, Payload, RECOVERY_TOOL};

use crate::counted;

/// The codec that produced a payload for the whole input, when it offers a cut of its own
/// output, and the input it was given.
#[derive(Clone, Copy)]
pub(super) struct OwnCut<'r> {
    pub(super) codec: &'r dyn DynCodec,
    pub(super) original: Payload<'r>,
}

/// The codec's `payload` cut so that `{"result":"<kept>\n<marker>","_tee":<pointer>}` holds at
/// most `max` code points; `own` is the codec that produced it for the whole input, when it
/// offers a cut of its own output.
pub(super) fn cut(payload: &str, own: Option<OwnCut<'_>>, pointer: &Pointer, max: usize) -> String {
    let room = max.saturating_sub(pointer.wrap("", "").chars().count());
    match own.and_then(|own| own_cut(own, payload, room)) {
        Some(cut) => pointer.wrap(&payload[..cut.kept], &cut.marker),
        None => {
            let (kept, marker) = cut_text(payload, room);
            pointer.wrap(kept, &marker)
        }
    }
}

/// The codec's own cut of `payload` to `room`, when it gives one that keeps the rules
/// (`parrot_codec_api::Cut`): whole lines of the payload, less than all of it, within the room
/// with the marker (or nothing kept and the marker alone), and a marker of one line. A panic,
/// or a cut that breaks them, is logged, and the payload is cut as text.
fn own_cut(own: OwnCut<'_>, payload: &str, room: usize) -> Option<CutAt> {
    let codec = own.codec;
    let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        codec.cut(own.original, payload, room)
    }));
    let cut = match cut {
        Ok(cut) => cut?,
        Err(_) => {
            tracing::warn!(
                codec = codec.name(),
                "the codec's cut panicked: cut as text"
            );
            return None;
        }
    };
    match cut.check(payload, room) {
        Ok(()) => Some(cut),
        Err(broken) => {
            tracing::warn!(
                codec = codec.name(),
                kept = cut.kept,
                "the codec's cut {broken}: cut as text"
            );
            None
        }
    }
}

/// The pointer a cut payload goes out with, which decides its form.
pub(super) enum Pointer {
    /// A `_tee` member's value: the cut text goes out as the `result` of a JSON wrapper.
    Json(String),
    /// A text pointer line ([`super::pointer::text_pointer`]): the cut text goes out as text,
    /// the pointer its last line. The cut is measured as the JSON string would be (escapes
    /// cost more than the characters they stand for), so a text cut fits with room to spare.
    Text(String),
}

impl Pointer {
    /// `kept`, then `marker`, then the pointer, in this pointer's form.
    fn wrap(&self, kept: &str, marker: &str) -> String {
        match self {
            Pointer::Json(pointer) => wrap(kept, marker, pointer),
            Pointer::Text(line) => format!("{kept}{marker}\n{line}"),
        }
    }
}

/// `kept` and then `marker`, as one JSON string, the `result` of a wrapper with `pointer` as
/// its `_tee`. The string is written as `serde_json` writes it ([`parrot_json::write_string`]
/// writes the same text), without first joining the two.
fn wrap(kept: &str, marker: &str, pointer: &str) -> String {
    let mut out = String::with_capacity(kept.len() + marker.len() + pointer.len() + 32);
    out.push_str("{\"result\":");
    parrot_json::write_string(kept, &mut out);
    // One string: the kept text's closing quote and the marker's opening one go.
    out.pop();
    let from = out.len();
    parrot_json::write_string(marker, &mut out);
    out.remove(from);
    out.push_str(",\"_tee\":");
    out.push_str(pointer);
    out.push('}');
    out
}

/// How many code points `text` takes inside a JSON string, as `serde_json` writes it: one per
/// character, two for `"`, `\` and the controls with a short escape (`\b`, `\f`, `\n`, `\r`,
/// `\t`), six for the other controls (`\u00XX`).
fn escaped(text: &str) -> usize {
    let (blocks, rest) = text.as_bytes().as_chunks::<BLOCK>();
    let whole: usize = blocks.iter().map(|block| measure(block).cost).sum();
    whole + rest.iter().map(|&b| byte_cost(b)).sum::<usize>()
}

/// What [`escaped`] counts for one byte: a character's first byte counts the character, the
/// bytes that continue it count nothing.
fn byte_cost(byte: u8) -> usize {
    match byte {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0..0x20 => 6,
        0x80..0xc0 => 0,
        _ => 1,
    }
}

/// The bytes [`measure`] takes at once: at most 6 code points each, 192 in all, so its sums
/// fit the `u8` lanes the compiler turns its loop into (a smaller block or wider sums were
/// measured slower).
const BLOCK: usize = 32;

/// What a run of bytes costs inside a JSON string and what it holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Measure {
    /// Its escaped code points ([`escaped`]).
    cost: usize,
    /// Its code points.
    chars: usize,
    /// Its line breaks.
    breaks: usize,
}

impl Measure {
    fn add(&mut self, other: Measure) {
        self.cost += other.cost;
        self.chars += other.chars;
        self.breaks += other.breaks;
    }
}

/// [`byte_cost`] summed over `block`, its code points and its line breaks, with arithmetic and
/// no branch so that the compiler measures many bytes in one instruction (the unit tests hold
/// it to [`byte_cost`] for every byte).
fn measure(block: &[u8; BLOCK]) -> Measure {
    let (mut cost, mut chars, mut breaks) = (0u8, 0u8, 0u8);
    for &byte in block {
        let starts_char = u8::from(byte & 0xc0 != 0x80);
        let quote = u8::from(byte == b'"' || byte == b'\\');
        let control = u8::from(byte < 0x20);
        // \b \t \n \f \r: 0x08 to 0x0d but for 0x0b.
        let short = u8::from(byte.wrapping_sub(0x08) < 6 && byte != 0x0b);
        cost += starts_char + quote + control * 5 - short * 4;
        chars += starts_char;
        breaks += u8::from(byte == b'\n');
    }
    Measure {
        cost: usize::from(cost),
        chars: usize::from(chars),
        breaks: usize::from(breaks),
    }
}

/// The code points and line breaks of `bytes`, 128 bytes at a time (at most 128 of each, so
/// `u8` sums again): the compiler turns this block into vector instructions, where a block of
/// 32 was measured many times slower.
fn count(bytes: &[u8]) -> (usize, usize) {
    let (blocks, rest) = bytes.as_chunks::<128>();
    let (mut chars, mut breaks) = (0, 0);
    for block in blocks {
        let (mut block_chars, mut block_breaks) = (0u8, 0u8);
        for &byte in block {
            block_chars += u8::from(byte & 0xc0 != 0x80);
            block_breaks += u8::from(byte == b'\n');
        }
        chars += usize::from(block_chars);
        breaks += usize::from(block_breaks);
    }
    for &byte in rest {
        chars += usize::from(byte & 0xc0 != 0x80);
        breaks += usize::from(byte == b'\n');
    }
    (chars, breaks)
}

/// The longest start of a payload whose escaped code points fit a budget, as [`keep`] finds
/// it.
#[derive(Debug, Default)]
struct Kept {
    /// Its length in bytes.
    end: usize,
    /// What it costs and holds.
    measure: Measure,
    /// Where its last line break is.
    last_break: Option<usize>,
}

/// The longest start of `payload` that costs at most `budget` escaped code points ([`escaped`]),
/// in one pass: [`BLOCK`] bytes at a time while they fit, then byte by byte. A byte that
/// continues a character costs nothing, so the start found always ends between characters.
fn keep(payload: &str, budget: usize) -> Kept {
    let bytes = payload.as_bytes();
    let mut kept = Kept::default();
    // The last whole block kept with a line break in it.
    let mut block_with_break = None;
    for block in bytes.as_chunks::<BLOCK>().0 {
        let block_measure = measure(block);
        if kept.measure.cost + block_measure.cost > budget {
            break;
        }
        if block_measure.breaks > 0 {
            block_with_break = Some(kept.end);
        }
        kept.end += BLOCK;
        kept.measure.add(block_measure);
    }
    kept.last_break = block_with_break.and_then(|start| {
        let block = bytes.get(start..start + BLOCK)?;
        block.iter().rposition(|&b| b == b'\n').map(|at| start + at)
    });
    for &byte in bytes.get(kept.end..).unwrap_or_default() {
        let cost = byte_cost(byte);
        if kept.measure.cost + cost > budget {
            break;
        }
        kept.measure.add(Measure {
            cost,
            chars: usize::from(cost > 0),
            breaks: usize::from(byte == b'\n'),
        });
        if byte == b'\n' {
            kept.last_break = Some(kept.end);
        }
        kept.end += 1;
    }
    kept
}

/// A payload that is not a `log` output, cut to cost at most `room` with its marker (see the
/// module docs): at a line break or at a character, never inside one. Returns the text kept
/// and the text that follows it (a line break, unless the cut is at one, and the marker).
fn cut_text(payload: &str, room: usize) -> (&str, String) {
    let (chars, breaks) = count(payload.as_bytes());
    // A last line without a line break after it is a line too.
    let lines = breaks + usize::from(!payload.is_empty() && !payload.ends_with('\n'));
    // Counts of at least 2 take the plural, the longer form, with as many digits as 1.
    let (most_lines, most_chars) = (lines.max(2), chars.max(2));
    let reserve = escaped("\n")
        + escaped(&line_marker(most_lines, most_lines, most_chars))
            .max(escaped(&inside_marker(most_lines, most_chars)));
    let mut kept = keep(payload, room.saturating_sub(reserve));
    if kept.end == payload.len() {
        // At least one character goes: what goes out is always a cut.
        kept = keep(payload, kept.measure.cost.saturating_sub(1));
    }
    let Measure {
        chars: kept_chars,
        breaks: kept_breaks,
        ..
    } = kept.measure;
    match kept.last_break.filter(|&at| 2 * (at + 1) >= kept.end) {
        // The text shown ends at the last line break kept: it holds every line break kept.
        Some(at) => {
            let after_break = payload.get(at + 1..kept.end).unwrap_or_default();
            let shown_chars = kept_chars - after_break.chars().count();
            let from = kept_breaks + 1;
            let marker = line_marker(lines - kept_breaks, from, chars - shown_chars);
            (&payload[..=at], marker)
        }
        None => {
            let marker = inside_marker(kept_breaks + 1, chars - kept_chars);
            (&payload[..kept.end], format!("\n{marker}"))
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
    use std::sync::Arc;

    use parrot_codec_api::{Level, Outcome};

    use super::*;

    const POINTER: &str = r#"{"key":"k","reason":"cut"}"#;

    /// A 40-line build log: 6 failure lines (one only by the entry's `failure_patterns`)
    /// among `Compiling` lines, and what the `log` codec (with `failure_patterns = ["flaky"]`)
    /// makes of it. The codec is the registry's, as the stage holds it: its cut is reached
    /// through `DynCodec` alone.
    fn log() -> (Arc<dyn DynCodec>, String, String) {
        let params = serde_json::json!({
            "failure_patterns": ["flaky"],
            "head_lines": 0,
            "tail_lines": 0,
            "context_before": 0,
            "context_after": 0,
        });
        let serde_json::Value::Object(params) = params else {
            unreachable!("an object")
        };
        let codec = crate::plugins::registry::Registry::with_builtins()
            .instantiate("log", params)
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
        let own = |original| OwnCut {
            codec: &*codec,
            original: Payload::text_only(original),
        };
        type Row<'a> = (&'a str, &'a str, Option<OwnCut<'a>>, usize, String);
        let cases: Vec<Row<'_>> = vec![
            // Lines 20, 25 (a failure by `failure_patterns` only), 31 and 32 are the failures
            // removed; the 7 lines are those four and three regions' markers.
            (
                "a log output, cut between its units",
                &output,
                Some(own(&original)),
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
                Some(own(&original)),
                100,
                "[… 40 lines omitted, lines 1-40: cut at max_result_chars, 11 lines of this \
                 result not shown; 6 failure lines omitted; wm_get_result {\"lines\":\"1-40\"}]"
                    .to_owned(),
            ),
            (
                "a text that is not the log's output is cut as text",
                &output,
                Some(own("another original")),
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
        for (name, payload, own, max, expected) in cases {
            // As text: a cut of the same kind (a shorter pointer leaves more room), the pointer
            // its last line, within the limit.
            let line = "[pointer line]";
            let text = cut(payload, own, &Pointer::Text(line.to_owned()), max);
            let (body, last) = text.rsplit_once('\n').unwrap();
            assert_eq!(last, line, "{name}");
            let (kept, marker) = body.rsplit_once('\n').unwrap_or(("", body));
            let (expected_kept, _) = expected.rsplit_once('\n').unwrap_or(("", &expected));
            assert!(kept.starts_with(expected_kept), "{name}: {text}");
            assert!(marker.starts_with("[\u{2026} "), "{name}: {marker}");
            assert!(
                text.chars().count() <= max || !expected.contains('\n'),
                "{name}"
            );
            let out = cut(payload, own, &Pointer::Json(POINTER.to_owned()), max);
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

    /// Payloads of every kind of byte: escaped ones, line breaks, characters of each UTF-8
    /// length, and runs long enough to fill whole blocks.
    fn generated(cases: usize, seed: u64) -> Vec<String> {
        let mut pieces: Vec<String> = (0..0x80u8).map(|b| char::from(b).to_string()).collect();
        let more = [
            "é",
            "日本",
            "😀",
            "\u{2028}",
            "line of text\n",
            "\"quoted\"",
            "plain text ",
        ];
        pieces.extend(more.map(String::from));
        let mut state = seed;
        let mut next = |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % below
        };
        (0..cases)
            .map(|_| {
                let len = next(120);
                // Mostly one piece repeated, so that blocks of plain text and of dense escapes
                // both occur.
                let common = next(pieces.len());
                (0..len)
                    .map(|_| {
                        let piece = if next(3) == 0 {
                            next(pieces.len())
                        } else {
                            common
                        };
                        pieces[piece].as_str()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn blocks_are_measured_as_their_bytes() {
        for byte in 0..=255u8 {
            let cost = byte_cost(byte);
            let expected = Measure {
                cost: BLOCK * cost,
                chars: BLOCK * usize::from(cost > 0),
                breaks: BLOCK * usize::from(byte == b'\n'),
            };
            assert_eq!(measure(&[byte; BLOCK]), expected, "byte {byte:#04x}");
            let counted = (
                300 * usize::from(cost > 0),
                300 * usize::from(byte == b'\n'),
            );
            assert_eq!(count(&[byte; 300]), counted, "byte {byte:#04x}");
        }
        for text in generated(2000, 3) {
            let bytes = text.as_bytes();
            for block in bytes.as_chunks::<BLOCK>().0 {
                let mut expected = Measure::default();
                for &byte in block {
                    expected.add(Measure {
                        cost: byte_cost(byte),
                        chars: usize::from(byte_cost(byte) > 0),
                        breaks: usize::from(byte == b'\n'),
                    });
                }
                assert_eq!(measure(block), expected, "{block:?}");
            }
            assert_eq!(
                count(bytes),
                (text.chars().count(), text.matches('\n').count())
            );
        }
    }

    #[test]
    fn escaped_sizes_and_wrappers_are_what_serde_json_writes() {
        for text in generated(3000, 5) {
            let written = serde_json::to_string(&text).unwrap();
            assert_eq!(escaped(&text), written.chars().count() - 2, "{text:?}");
            // The unit a codec's own cut is given its room in.
            let unit = parrot_codec_api::json_string_chars(&text);
            assert_eq!(unit, escaped(&text), "{text:?}");
            let (kept, marker) = text.split_at(text.floor_char_boundary(text.len() / 2));
            assert_eq!(
                wrap(kept, marker, POINTER),
                format!("{{\"result\":{written},\"_tee\":{POINTER}}}"),
                "{text:?}"
            );
        }
    }

    /// The cut as it was first written, character by character: the reference the cut by
    /// blocks is held to.
    fn cut_by_chars(payload: &str, room: usize) -> String {
        let escaped_char = |c: char| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if c < ' ' => 6,
            _ => 1,
        };
        let escaped = |text: &str| text.chars().map(escaped_char).sum::<usize>();
        let chars = payload.chars().count();
        let lines = payload.split_inclusive('\n').count();
        let (most_lines, most_chars) = (lines.max(2), chars.max(2));
        let reserve = escaped("\n")
            + escaped(&line_marker(most_lines, most_lines, most_chars))
                .max(escaped(&inside_marker(most_lines, most_chars)));
        let budget = room
            .saturating_sub(reserve)
            .min(escaped(payload).saturating_sub(1));
        let (mut end, mut spent, mut last_break) = (0, 0, None);
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

    #[test]
    fn cuts_by_blocks_are_the_cuts_by_characters() {
        let mut at_breaks = 0;
        for (i, payload) in generated(3000, 7).into_iter().enumerate() {
            let most = escaped(&payload) + 300;
            let rooms = [0, 150, 250, 280, 300, 320, 350, 400, 500, 700];
            for room in rooms.into_iter().chain([most - i % 300, most]) {
                let (kept, marker) = cut_text(&payload, room);
                let expected = cut_by_chars(&payload, room);
                assert_eq!(format!("{kept}{marker}"), expected, "{payload:?} in {room}");
                at_breaks += usize::from(!marker.starts_with('\n'));
            }
        }
        assert!(at_breaks > 1000, "{at_breaks} cuts at a line break");
    }

    /// A codec whose cut is whatever the test sets: its cut is taken only when it keeps the
    /// rules, and otherwise the payload is cut as text.
    struct Cutter(parrot_codec_api::CutAt);

    impl parrot_codec_api::Codec for Cutter {
        const NAME: &'static str = "cutter";
        const CUT: Option<parrot_codec_api::Cut<Self>> =
            Some(|codec, _, _, _| Some(codec.0.clone()));

        fn new(_: &mut parrot_codec_api::Params) -> Result<Self, parrot_codec_api::CodecError> {
            Ok(Cutter(CutAt::new(0, "")))
        }

        fn compress(
            &self,
            _: Payload<'_>,
            _: Level,
        ) -> Result<Outcome, parrot_codec_api::CodecError> {
            Ok(Outcome::Unchanged)
        }
    }

    #[test]
    fn a_codecs_cut_that_breaks_the_rules_is_not_taken() {
        let payload: String = (1..=50)
            .map(|i| format!("line {i:02} of the text\n"))
            .collect();
        let marker = "[codec's marker]";
        // Each row: the case, the codec's cut, whether it is taken (else cut as text).
        let cases = [
            ("whole lines within the room", CutAt::new(60, marker), true),
            (
                "nothing kept, the marker alone",
                CutAt::new(0, marker),
                true,
            ),
            ("inside a line", CutAt::new(61, marker), false),
            ("everything kept", CutAt::new(payload.len(), marker), false),
            (
                "past the end",
                CutAt::new(payload.len() + 20, marker),
                false,
            ),
            ("over the room", CutAt::new(20 * 20, marker), false),
            ("an empty marker", CutAt::new(60, ""), false),
            ("a marker of two lines", CutAt::new(60, "[a]\n[b]"), false),
        ];
        for (name, given, taken) in cases {
            let expected = given.clone();
            let codec = Cutter(given);
            let own = OwnCut {
                codec: &codec,
                original: Payload::text_only("the original"),
            };
            let out = cut(
                &payload,
                Some(own),
                &Pointer::Text("[pointer]".to_owned()),
                400,
            );
            let as_text = cut(&payload, None, &Pointer::Text("[pointer]".to_owned()), 400);
            if taken {
                let kept = &payload[..expected.kept];
                assert_eq!(
                    out,
                    format!("{kept}{}\n[pointer]", expected.marker),
                    "{name}"
                );
            } else {
                assert_eq!(out, as_text, "{name}");
            }
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
