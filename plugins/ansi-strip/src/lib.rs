//! `ansi_strip`: removes terminal escape sequences (colours, cursor movement, window titles)
//! from text output and, with `collapse_cr` (default true), keeps only the last redraw of
//! each line that a progress bar rewrote with carriage returns.
//!
//! Lossy (the removed bytes cannot be rebuilt), so it acts at `normal` and `aggressive` and
//! passes through at `minimal`. JSON payloads pass through.
#![forbid(unsafe_code)]

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';

/// The `ansi_strip` codec.
///
/// # Examples
///
/// At `normal`, `"\x1b[1;31merror\x1b[0m: disk full\n"` becomes `"error: disk full\n"`, and
/// `"build 10%\rbuild 50%\rbuild 100%\n"` becomes `"build 100%\n"`: a carriage return starts
/// the line again, so everything before the last one on a line goes (the unit tests pin both).
#[derive(Debug)]
pub struct AnsiStrip {
    collapse_cr: bool,
}

impl Codec for AnsiStrip {
    const NAME: &'static str = "ansi_strip";

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        Ok(AnsiStrip {
            collapse_cr: params.bool("collapse_cr", true)?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if payload.is_json() || !level.allows_loss() {
            return Ok(Outcome::Unchanged);
        }
        let stripped = strip_escapes(payload.text());
        let out = if self.collapse_cr {
            collapse_redraws(&stripped)
        } else {
            stripped
        };
        Ok(if out == payload.text() {
            Outcome::Unchanged
        } else {
            Outcome::lossy(out)
        })
    }
}

/// Removes CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC ] … ESC \`) and two-character
/// escape sequences.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ESC {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameter and intermediate bytes, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == BEL {
                        break;
                    }
                    if c == ESC && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Keeps, on each line, only what follows the last carriage return (a `\r\n` line ending is
/// kept as is).
fn collapse_redraws(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (body, crlf) = match line.strip_suffix('\r') {
            Some(body) => (body, true),
            None => (line, false),
        };
        out.push_str(body.rsplit('\r').next().unwrap_or(body));
        if crlf {
            out.push('\r');
        }
    }
    out
}

parrot_codec_api::export_codecs!(AnsiStrip);

#[cfg(test)]
mod contract;

#[cfg(test)]
mod tests {
    use super::*;
    use parrot_codec_api::build;

    #[test]
    fn escapes_and_redraws_are_removed() {
        let cases: &[(bool, &str, Option<&str>)] = &[
            (true, "\u{1b}[32mok\u{1b}[0m", Some("ok")),
            (true, "\u{1b}]0;title\u{7}prompt$ ", Some("prompt$ ")),
            (
                true,
                "\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\",
                Some("link"),
            ),
            (true, "1%\r2%\r3%\ndone\r\n", Some("3%\ndone\r\n")),
            (false, "1%\r2%\r3%\n", None),
            (true, "plain text\n", None),
            (true, "\u{1b}[2K\u{1b}[1Gbuilding", Some("building")),
            // The examples in the codec's documentation.
            (
                true,
                "\u{1b}[1;31merror\u{1b}[0m: disk full\n",
                Some("error: disk full\n"),
            ),
            (
                true,
                "build 10%\rbuild 50%\rbuild 100%\n",
                Some("build 100%\n"),
            ),
        ];
        for (collapse_cr, input, expected) in cases {
            let codec = AnsiStrip {
                collapse_cr: *collapse_cr,
            };
            let out = codec
                .compress(Payload::text_only(input), Level::Normal)
                .unwrap();
            match expected {
                Some(expected) => assert_eq!(out, Outcome::lossy(*expected), "for {input:?}"),
                None => assert_eq!(out, Outcome::Unchanged, "for {input:?}"),
            }
        }
    }

    #[test]
    fn lossless_levels_pass_through() {
        let codec = build::<AnsiStrip>(Params::empty()).unwrap();
        let out = codec
            .compress(Payload::text_only("\u{1b}[32mok"), Level::Minimal)
            .unwrap();
        assert_eq!(out, Outcome::Unchanged);
    }
}
