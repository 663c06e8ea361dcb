//! `paths`: listings of paths (`find`, `git ls-files`, globs, `ls -R`) as an indented tree in
//! which each directory is named once; lossless.
//!
//! A listing repeats every directory on every line below it. This codec writes the listing as
//! a tree, like `tree` prints one without its box drawing, and lists the entries of one
//! directory side by side, as `ls` does. Text payloads only (a JSON payload is
//! [`Outcome::Unchanged`]); it acts from `minimal` up, and its inverse gives the input back
//! byte for byte.
//!
//! # Format
//!
//! The output is lines joined by `\n`, ending with `\n` when the input did. A line is indented
//! two spaces per level and holds entries separated by one space; an entry that holds a space
//! is written between single quotes (`'My Documents/'`). A line followed by a line two spaces
//! deeper is a *directory line* and holds one entry; the lines under it, up to the next line
//! at its indent or less, are inside it. Each entry is a path relative to the directory line
//! above it (at indent 0, to nothing):
//!
//! - a directory line whose entry ends in `/` (`src/`) only names the directory: it stands for
//!   no line of the input;
//! - a directory line whose entry does not (`src`, as `find` prints a directory before what it
//!   holds) stands for a line of the input, and the entries under it are relative to it and a
//!   `/`;
//! - every other entry stands for one line of the input (so `ls -p`'s `src/` is an entry like
//!   any other, on a line with no line indented under it);
//!
//! and the lines of the input come back in the order of the entries.
//!
//! `find .` in a crate:
//!
//! ```text
//! .
//! ./Cargo.toml
//! ./src
//! ./src/lib.rs
//! ./src/main.rs
//! ./src/parser
//! ./src/parser/mod.rs
//! ./src/parser/lexer.rs
//! ./README.md
//! ```
//!
//! becomes
//!
//! ```text
//! .
//!   Cargo.toml
//!   src
//!     lib.rs main.rs
//!     parser
//!       mod.rs lexer.rs
//!   README.md
//! ```
//!
//! and `git ls-files` (`.gitignore`, `Cargo.toml`, `codecs/Cargo.toml`, `codecs/src/lib.rs`,
//! `codecs/src/log/mod.rs`, `codecs/src/log/tests.rs`, `codecs/src/toon/mod.rs`,
//! `host/src/main.rs`, `host/src/lib.rs`, `README.md`) becomes
//!
//! ```text
//! .gitignore Cargo.toml
//! codecs/
//!   Cargo.toml
//!   src/
//!     lib.rs
//!     log/
//!       mod.rs tests.rs
//!     toon/mod.rs
//! host/src/
//!   main.rs lib.rs
//! README.md
//! ```
//!
//! Why this form: entries side by side cost a space where one a line costs a line break and
//! an indent, and the tree names a directory once however the listing interleaves files and
//! subdirectories (`find` lists a directory's files around its subdirectories), where one line
//! per directory (`src/parser/: mod.rs lexer.rs`) names it again after each subdirectory. On
//! real listings (o200k tokens) it saves more than either form alone, and it is how `tree` and
//! `ls` print.
//!
//! ## Which lines are grouped
//!
//! Lines are taken in order. Two or more lines in a row that share a directory (beyond the
//! directory line they are under) get a directory line naming the longest directory all of
//! them share (`share/python-build/`), with the lines under it. A line followed by lines
//! inside it (`./src`, then `./src/a.rs`) is their directory line instead when they are all
//! the lines of that run, and, when there is no such run, when they are two or more, or its
//! entry is 12 bytes or longer: a shorter directory with a single line inside it goes beside
//! it (`benches benches/parse.rs`), which costs fewer tokens than two lines. Other entries go
//! side by side while the line stays within 160 bytes (indent included); a longer entry has a
//! line of its own. A directory that comes back after another is named again.
//!
//! ## `ls -R`
//!
//! Output of `ls -R` (a header `dir:`, its entries, a blank line, the next header) is written
//! as the tree of the same entries, under its first header as `ls` wrote it. These sections:
//!
//! ```text
//! .:
//! COPYING
//! Cargo.toml
//! empty
//! src
//!
//! ./empty:
//!
//! ./src:
//! lib.rs
//! packed
//!
//! ./src/packed:
//! api.rs
//! ```
//!
//! become
//!
//! ```text
//! .:
//!   COPYING Cargo.toml empty/
//!   src
//!     lib.rs
//!     packed
//!       api.rs
//! ```
//!
//! A directory with entries is a directory line; an empty directory is its name and a `/`.
//! The inverse prints the sections back: the root's entries, then each directory's section,
//! depth first, in the order of the entries, as `ls -R` prints them. A payload whose first
//! line ends with `:` is read this way.
//!
//! # When it declines
//!
//! The payload is [`Outcome::Unchanged`] when it is JSON, at level `none`, or:
//!
//! - it is empty or 4 GiB or more, holds a tab or a carriage return, or a line (other than
//!   `ls -R`'s blank line between two sections) is empty or longer than 4,096 bytes;
//! - of its first 64 lines, more than a quarter hold a space (prose, tables, `grep -n`
//!   output, `git status`), or, unless the first line ends with `:`, none holds a `/` (a flat
//!   `ls -1`: nothing to save);
//! - an entry would start with a quote, or hold both a space and a quote;
//! - nothing is grouped (no directory line would be written);
//! - the first line of the tree would end with `:` (that is how the inverse tells `ls -R`);
//! - for `ls -R`: the first header is empty or holds a space or a quote, an entry holds a `/`
//!   (`ls -Rp`), the sections are not each under an entry of the sections before them in the
//!   order `ls -R` prints them (`ls -R a b` has two roots), or there is no subdirectory;
//! - the tree is not strictly smaller, in bytes, than the payload.
//!
//! # Cutting an output to a size
//!
//! [`Paths::cut`] (the codec's `CUT`, which the host asks for when a result is over its
//! `max_result_chars`) keeps whole lines of a listing's tree from the start, a directory line
//! only with a line under it. The tree gives the original's lines in the order of its entries,
//! so what the cut removes is one range of the original, and the marker says so:
//! `[… cut at max_result_chars: R of T paths not shown, original lines A-B; wm_get_result {"lines":"A-B"}]`
//! (the wording is shared with `hits` and `table`, see `crate::cut`). An `ls -R` tree is not
//! cut by its grammar: its start stands for lines of several of the original's sections.

mod cut;
mod expand;
mod list;
mod recursive;
mod tree;

#[cfg(test)]
mod tests;

use parrot_codec_api::{Codec, CodecError, Cut, Inverse, Level, Outcome, Params, Payload};

/// How many lines the codec looks at before reading the whole payload.
const SNIFF_LINES: usize = 64;

/// The `paths` codec. It takes no params.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
/// use parrot_codecs::Paths;
///
/// let codec = Paths::new(&mut Params::empty()).unwrap();
/// let input = "./src/lib.rs\n./src/main.rs\n./src/parser/mod.rs\n./src/parser/lexer.rs\n./README.md\n";
/// let tree = "./\n  src/\n    lib.rs main.rs\n    parser/\n      mod.rs lexer.rs\n  README.md\n";
/// let out = codec.compress(Payload::text_only(input), Level::Minimal).unwrap();
/// assert_eq!(out, Outcome::lossless(tree));
/// assert_eq!(codec.expand(tree).unwrap(), input);
/// ```
#[derive(Debug)]
pub struct Paths;

impl Paths {
    /// Rebuilds the listing a tree stands for, byte for byte.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput` naming the line (1-based) and what is wrong when
    /// `payload` is not a tree this codec writes: `paths line 7: an indent of 6 spaces under
    /// a parent at 2`.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        expand::expand(payload)
    }
}

impl Codec for Paths {
    const NAME: &'static str = "paths";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    const CUT: Option<Cut<Self>> = Some(Self::cut);

    fn new(_: &mut Params) -> Result<Self, CodecError> {
        Ok(Paths)
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if payload.is_json() || !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        Ok(match encode(input) {
            Some(tree) if tree.len() < input.len() => Outcome::lossless(tree),
            _ => Outcome::Unchanged,
        })
    }
}

inventory::submit! { crate::Builtin::of::<Paths>() }

/// The tree of `text`, or `None` when the codec declines it (see the module documentation).
fn encode(text: &str) -> Option<String> {
    let (body, newline) = match text.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (text, false),
    };
    u32::try_from(text.len()).ok()?;
    let recursive = sniff(body)?;
    let mut tree = if recursive {
        recursive::encode(body)?
    } else {
        list::encode(body)?
    };
    if newline {
        tree.push('\n');
    }
    Some(tree)
}

/// Whether the first lines of `body` may be a listing: `Some(true)` for `ls -R` (the first
/// line ends with `:`), `Some(false)` for a listing of paths, `None` for neither.
fn sniff(body: &str) -> Option<bool> {
    let bytes = body.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    let (mut lines, mut slashes, mut spaces) = (0, 0, 0);
    let mut start = 0;
    let mut recursive = false;
    for end in memchr::memchr_iter(b'\n', bytes)
        .chain([bytes.len()])
        .take(SNIFF_LINES)
    {
        let line = &bytes[start..end];
        if line.len() > list::MAX_LINE {
            return None;
        }
        if lines == 0 {
            recursive = line.ends_with(b":");
        }
        lines += 1;
        slashes += usize::from(memchr::memchr(b'/', line).is_some());
        spaces += usize::from(memchr::memchr(b' ', line).is_some());
        start = end + 1;
    }
    (4 * spaces <= lines && (recursive || slashes > 0)).then_some(recursive)
}
