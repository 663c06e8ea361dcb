//! `hits`: search results (`grep -rn`, `grep -r`, `grep -rn -C2`, `git grep -n`,
//! `rg -n --no-heading`) grouped under their files, as ripgrep's `--heading` form writes them.
//!
//! Text payloads only (a JSON payload is [`Outcome::Unchanged`]); lossless, so it acts from
//! `minimal` up, and its inverse ([`Hits::expand`]) gives the input back byte for byte. The
//! output is always strictly smaller than the input, else the payload is unchanged.
//!
//! # Format
//!
//! Search tools write one hit a line, each naming its file: `path:N:text` for a match at line
//! `N`, `path-N-text` for a context line (`-A`, `-B`, `-C`), `--` between groups of context,
//! and `path:text` without line numbers (`grep -r`). The output names each file once, on a
//! line of its own, with its hits under it without the path: `N:text` for a match, `N-text`
//! for a context line, `--` where the input had one, and `text` for a hit without a line
//! number. A blank line stands between two files; a file whose hits come back later (not
//! next to each other) is named again there. A `--` that stood between two files ends the
//! block of the first one.
//!
//! ```text
//! src/lib.rs:12:pub fn parse(input: &str) -> Result<Ast, Error> {
//! src/lib.rs-13-    let tokens = lex(input)?;
//! src/lib.rs:40:    parse(input).unwrap()
//! src/main.rs:3:use crate::parse;
//! ```
//!
//! becomes
//!
//! ```text
//! src/lib.rs
//! 12:pub fn parse(input: &str) -> Result<Ast, Error> {
//! 13-    let tokens = lex(input)?;
//! 40:    parse(input).unwrap()
//!
//! src/main.rs
//! 3:use crate::parse;
//! ```
//!
//! A line that is not a hit (`Binary file x matches`, `grep: x: Permission denied`) is kept
//! verbatim, alone between blank lines. So the output is blocks of non-empty lines separated
//! by single blank lines, ending with `\n` when the input did: a block of one line is a line
//! of the input as it was; a block of more is a path and its hits. The hits of an output are
//! numbered when every hit line in it is digits followed by `:` or `-`, or `--`; else they
//! are plain (`path:text`). Each hit line `L` under the path `P` is the input line `P:L`,
//! except, when numbered, `P-L` when `L`'s digits are followed by `-`, and a `--` line
//! stands for itself. (Everywhere here, a `--` line is `--`, or `--\r` in CRLF text.)
//!
//! # Reading the input
//!
//! - **Numbering.** The input is read as numbered hits when that reading (below) keeps at
//!   most a quarter of its first 32 lines verbatim; else as plain hits. (Plain hits read
//!   almost any line as a hit, `grep: x: Permission denied` as a hit of `grep`, so they are
//!   the reading of last resort; numbered hits among plain ones are plain hits whose text
//!   starts with `N:`, which the output keeps exactly.)
//! - **Paths, numbered.** A *mark* is `:N:` or `-N-` (digits between two `:` or two `-`)
//!   after at least one byte. A line that starts with the path of the block above it followed
//!   by a mark is a hit of that file (so a path holding `:` or `-N-` keeps its hits together
//!   once it is known). Else, when the line's first mark is `:N:`, it is a match of the path
//!   before that mark. When its first mark is `-N-`, it is a context line that opens a group
//!   (`-B`, `-C`: context comes before its file's first match), and its path is taken from
//!   the next line that holds `:N:`, before any `--`: the path before that line's first
//!   `:N:`, or else the path before its first `-N-` (that line is then a context line whose
//!   text holds `:N:`), whichever the line goes on with followed by `-N-`; the next line is
//!   looked for over at most 256 lines, then the look starts again. Failing that, it
//!   is a match of the path before its first `:N:`, if it has one. A `--` after a hit joins
//!   its block. Anything else is verbatim.
//! - **Paths, plain.** A line is a hit of the path before its first `:`, when the path and the
//!   text are not empty and the text is not `--`; else it is verbatim.
//!
//! # When it declines
//!
//! The payload is unchanged when it is JSON, the level is `none`, or:
//!
//! - it is empty, or holds an empty line (one before the final `\n` counts);
//! - after the first 32 lines, and again at the end, more than half of the lines read so far
//!   are verbatim, or fewer than a quarter of them joined the block above them (a hit of the
//!   same file as the line before it, or a `--` after a hit): text that is not search
//!   results, and search results whose files have one hit each, which do not get shorter;
//! - at the end, more than a quarter of the lines are verbatim;
//! - it is read as plain hits and holds a `--` line (context without line numbers, which
//!   cannot be told from matches), or every text of its hits is digits followed by `:` or `-`
//!   (its output would read as numbered);
//! - the output is not strictly smaller than the input.
//!
//! A `\r` is part of the text it ends (CRLF lines keep it at the end of their hit line), and
//! any path or text is copied as it is, so the inverse is exact even when a path was guessed
//! wrong (a path that holds `:N:` is cut before it).
//!
//! # Cutting an output to a size
//!
//! [`Hits::cut`] (the codec's `CUT`, which the host asks for when a result is over its
//! `max_result_chars`) keeps whole units from the start: a hit line, with the blank line and
//! the heading before it when it is the first of its block (a heading is never kept without a
//! hit of it) and with the `--` lines before it; or a line kept verbatim. The output gives the
//! original's lines in their order, so what it removes is one range of the original, and the
//! marker says so:
//! `[… cut at max_result_chars: R of T hit lines not shown, in F files, original lines A-B; wm_get_result {"lines":"A-B"}]`
//! (`F` the distinct files of the hit lines not shown; the wording is shared with `paths` and
//! `table`, see `crate::cut`).

mod cut;
mod decode;
mod encode;
#[cfg(test)]
mod tests;

use parrot_codec_api::{Codec, CodecError, Cut, Inverse, Level, Outcome, Params, Payload};

/// The `hits` codec: see the [module documentation](self). It takes no params.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload, build};
/// use parrot_codecs::Hits;
///
/// let hits: Hits = build(Params::empty()).unwrap();
/// let input = "src/a.rs:3:fn a() {}\nsrc/a.rs:9:fn b() {}\nsrc/b.rs:1:use a;\n";
/// let out = hits.compress(Payload::text_only(input), Level::Minimal).unwrap();
/// let grouped = "src/a.rs\n3:fn a() {}\n9:fn b() {}\n\nsrc/b.rs\n1:use a;\n";
/// assert_eq!(out, Outcome::lossless(grouped));
/// assert_eq!(hits.expand(grouped).unwrap(), input);
/// ```
#[derive(Debug, Default)]
pub struct Hits;

impl Hits {
    /// Rebuilds the search results of a lossless outcome from its grouped form.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput` when `payload` is not this codec's output,
    /// naming the 1-based line at fault: a blank line first, last or after another, a `--`
    /// before a file's first hit or among hits without line numbers, or no file with hits.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        decode::decode(payload)
    }
}

impl Codec for Hits {
    const NAME: &'static str = "hits";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    const CUT: Option<Cut<Self>> = Some(Self::cut);

    fn new(_: &mut Params) -> Result<Self, CodecError> {
        Ok(Hits)
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if payload.is_json() || !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        let grouped = encode::encode(input).map(|text| crate::Transformed { text, lossy: false });
        Ok(crate::Transformed::outcome(grouped, input))
    }
}

inventory::submit! { crate::Builtin::of::<Hits>() }
