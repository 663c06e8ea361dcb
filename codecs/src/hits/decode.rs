//! The inverse: the grouped hits written back as one `path:…` line each, in one pass over the
//! codec's output (two when its hits turn out to be plain).

use parrot_codec_api::CodecError;

use super::encode::{Lines, is_separator};

/// An error naming the 1-based line of the codec's output it is about.
fn at_line(line: usize, message: &str) -> CodecError {
    CodecError::invalid_input(format!("hits line {line}: {message}"))
}

/// Why a pass over an output stopped.
enum Stop {
    /// The output is not one the codec writes.
    Invalid(CodecError),
    /// A hit line does not read as numbered: the hits are plain.
    Plain,
}

impl From<CodecError> for Stop {
    fn from(error: CodecError) -> Stop {
        Stop::Invalid(error)
    }
}

/// The input a `hits` output stands for (see the module documentation for the format).
pub(super) fn decode(payload: &str) -> Result<String, CodecError> {
    if payload.is_empty() {
        return Err(CodecError::invalid_input("hits: the text is empty"));
    }
    let (body, final_newline) = match payload.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (payload, false),
    };
    // Read as numbered first, as most search results are; the first hit line that is not
    // starts the pass again as plain (for plain hits, that is usually the second line).
    let out = match write(body, true) {
        Err(Stop::Plain) => write(body, false),
        done => done,
    };
    let mut out = out.map_err(|stop| match stop {
        Stop::Invalid(error) => error,
        // Never: a plain pass takes every hit line as it is.
        Stop::Plain => CodecError::failed("hits: plain hits read as numbered"),
    })?;
    if final_newline {
        out.push('\n');
    }
    Ok(out)
}

/// Writes the input that `body` (an output without its final `\n`) stands for, its hits read
/// as `numbered` or plain, checking its blocks on the way: one blank line between blocks, none
/// before the first or after the last, and at least one heading with hits.
fn write(body: &str, numbered: bool) -> Result<String, Stop> {
    let mut out = String::with_capacity(body.len() + body.len() / 2);
    // The first line of the block being read, and whether a hit of it was written.
    let mut heading: Option<(&str, bool)> = None;
    let (mut hit_blocks, mut n) = (0, 0);
    for (line, _) in Lines::new(body, 0) {
        n += 1;
        if !line.is_empty() {
            match heading {
                None => heading = Some((line, false)),
                Some((path, written)) => {
                    if !written {
                        hit_blocks += 1;
                    }
                    match separator(line, numbered, written, n)? {
                        None => push_line(&mut out, &[line]),
                        Some(sep) => push_line(&mut out, &[path, sep, line]),
                    }
                    heading = Some((path, true));
                }
            }
            continue;
        }
        match heading {
            _ if n == 1 => return Err(at_line(n, "a blank line before the first file").into()),
            None => {
                let message =
                    "a second blank line in a row (files are separated by one blank line)";
                return Err(at_line(n, message).into());
            }
            Some((alone, false)) => push_line(&mut out, &[alone]),
            Some(_) => {}
        }
        heading = None;
    }
    match heading {
        None => return Err(at_line(n, "a blank line after the last file").into()),
        Some((alone, false)) => push_line(&mut out, &[alone]),
        Some(_) => {}
    }
    if hit_blocks == 0 {
        let message = "hits: no file heading followed by its hits";
        return Err(CodecError::invalid_input(message).into());
    }
    Ok(out)
}

/// Writes one line of the input, after a `\n` unless it is the first (no line of an input
/// the codec changed is empty).
fn push_line(out: &mut String, parts: &[&str]) {
    if !out.is_empty() {
        out.push('\n');
    }
    parts.iter().for_each(|part| out.push_str(part));
}

/// What goes between a block's path and a hit `line` (line `n` of the output): `:` for a
/// match or a plain hit, `-` for a context line, `None` for a `--` line (`--\r` in CRLF
/// text), which stands alone.
fn separator(
    line: &str,
    numbered: bool,
    after_hit: bool,
    n: usize,
) -> Result<Option<&'static str>, Stop> {
    if is_separator(line) {
        return match (numbered, after_hit) {
            (false, _) => Err(at_line(n, "a `--` separator in hits without line numbers").into()),
            (true, false) => Err(at_line(n, "a `--` separator before the file's first hit").into()),
            (true, true) => Ok(None),
        };
    }
    if !numbered {
        return Ok(Some(":"));
    }
    let bytes = line.as_bytes();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    match bytes.get(digits) {
        Some(b':') if digits > 0 => Ok(Some(":")),
        Some(b'-') if digits > 0 => Ok(Some("-")),
        _ => Err(Stop::Plain),
    }
}
