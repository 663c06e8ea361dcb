//! Exact token counts for OpenAI's `o200k_base` and `cl100k_base`, with nothing to load.
//!
//! A tokenizer's vocabulary is usually read into hash maps when a process first counts: for
//! `o200k_base` that is 75–90 ms, longer than most of what a command-line call does. Here the
//! build script lays each vocabulary out as a flat hash table that is embedded in the binary
//! and read where it lies, so the first count costs what every later one does.
//!
//! Counting is the tokenizers' own: the text is split into pieces by the tokenizer's pattern
//! (for `o200k_base`, ASCII is split by a hand-written matcher of the same pattern, see
//! [`Encoding::pieces`]), and each piece becomes as many tokens as byte-pair merging by rank
//! leaves. The counts equal the reference implementation's on every text the tests compare.
//!
//! # Examples
//!
//! ```
//! use parrot_bpe::{CL100K_BASE, O200K_BASE};
//!
//! assert_eq!(O200K_BASE.count("hello world"), 2);
//! assert_eq!(O200K_BASE.name(), "o200k_base");
//! assert_eq!(CL100K_BASE.count("hello world"), 2);
//! assert_eq!(O200K_BASE.pieces("It's 2026!").collect::<Vec<_>>(), ["It's", " ", "202", "6", "!"]);
//! ```

#![forbid(unsafe_code)]

mod hash;
mod merge;
mod split;
mod vocabulary;

use merge::{Scratch, count_piece};
use split::Pattern;
use vocabulary::Vocabulary;

/// A tokenizer: a vocabulary and the pattern that splits text before merging.
pub struct Encoding {
    name: &'static str,
    vocabulary: Vocabulary,
    pattern: Pattern,
    /// Whether the hand-written `o200k_base` matcher splits ASCII.
    ascii: bool,
}

/// `o200k_base` (GPT-4o and later).
pub static O200K_BASE: Encoding = Encoding {
    name: "o200k_base",
    vocabulary: Vocabulary::new(include_bytes!(concat!(
        env!("OUT_DIR"),
        "/o200k_base.table"
    ))),
    pattern: Pattern::new(&[
        (
            concat!(
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"|\p{N}{1,3}",
                r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
                r"|\s*[\r\n]+",
                r"|\s+$",
            ),
            false,
        ),
        (r"\s+\s", true),
        (r"\s+", false),
    ]),
    ascii: true,
};

/// `cl100k_base` (GPT-4, GPT-3.5).
pub static CL100K_BASE: Encoding = Encoding {
    name: "cl100k_base",
    vocabulary: Vocabulary::new(include_bytes!(concat!(
        env!("OUT_DIR"),
        "/cl100k_base.table"
    ))),
    pattern: Pattern::new(&[
        (
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+$",
            false,
        ),
        (r"\s+\s", true),
        (r"\s+", false),
    ]),
    ascii: false,
};

impl Encoding {
    /// The tokenizer's name, as OpenAI spells it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The number of tokens `text` encodes to (no special tokens: `<|endoftext|>` is text).
    ///
    /// Exact for every piece of up to [`EXACT_PIECE_BYTES`] bytes: every piece of ordinary
    /// text (words, numbers, punctuation runs, whitespace). A longer piece — a run of letters
    /// with no break, as a long hex or base64 string without separators, or a pathological
    /// `aaaa…` — is estimated: its first and its last [`EXACT_PIECE_BYTES`] (cut at character
    /// boundaries) are counted exactly, and the bytes between at the average tokens per byte of
    /// those two, rounded. Exact merging costs `n log n` in the piece with merge state of tens
    /// of bytes per byte (a 100 MB piece held gigabytes and took minutes); the estimate costs
    /// the same for any length.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_bpe::{EXACT_PIECE_BYTES, O200K_BASE};
    ///
    /// assert_eq!(O200K_BASE.count("Hello, world!"), 4);
    /// // "aaaaaaaa" is one token: a run of them is estimated exactly.
    /// let run = "a".repeat(100 * EXACT_PIECE_BYTES);
    /// assert_eq!(O200K_BASE.count(&run), run.len() / 8);
    /// ```
    pub fn count(&self, text: &str) -> usize {
        let mut scratch = Scratch::default();
        self.pieces(text)
            .map(|piece| self.count_piece(piece, &mut scratch))
            .sum()
    }

    /// One piece's tokens: exact up to [`EXACT_PIECE_BYTES`], estimated above (see
    /// [`Encoding::count`]).
    fn count_piece(&self, piece: &str, scratch: &mut Scratch) -> usize {
        if piece.len() <= 2 * EXACT_PIECE_BYTES {
            return count_piece(&self.vocabulary, piece.as_bytes(), scratch);
        }
        let mut head = EXACT_PIECE_BYTES;
        while !piece.is_char_boundary(head) {
            head -= 1;
        }
        let mut tail = piece.len() - EXACT_PIECE_BYTES;
        while !piece.is_char_boundary(tail) {
            tail += 1;
        }
        let counted = count_piece(&self.vocabulary, &piece.as_bytes()[..head], scratch)
            + count_piece(&self.vocabulary, &piece.as_bytes()[tail..], scratch);
        let sampled = head + (piece.len() - tail);
        let middle = tail - head;
        // Rounded to the nearest token: middle × counted / sampled.
        counted + (middle * counted + sampled / 2) / sampled
    }

    /// The pieces the tokenizer's pattern splits `text` into, in order; together they are
    /// `text`.
    pub fn pieces<'a>(&'a self, text: &'a str) -> Pieces<'a> {
        Pieces {
            encoding: self,
            text,
            at: 0,
            cache: None,
        }
    }
}

/// [`Encoding::count`] counts a piece exactly up to twice this many bytes; a longer piece is
/// estimated from its first and last this many bytes.
pub const EXACT_PIECE_BYTES: usize = 16 * 1024;

/// The pieces of a text: see [`Encoding::pieces`].
pub struct Pieces<'a> {
    encoding: &'a Encoding,
    text: &'a str,
    at: usize,
    /// The pattern's search cache, taken when a piece first needs the pattern.
    cache: Option<regex_automata::hybrid::dfa::Cache>,
}

impl Drop for Pieces<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.cache.take() {
            self.encoding.pattern.give_back(cache);
        }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let start = self.at;
        if start >= self.text.len() {
            return None;
        }
        let fast = if self.encoding.ascii {
            split::o200k_ascii_piece(self.text.as_bytes(), start)
        } else {
            None
        };
        let end = match fast {
            Some(end) => end,
            None => self
                .encoding
                .pattern
                .piece_end(self.text, start, &mut self.cache),
        };
        self.at = end;
        Some(&self.text[start..end])
    }
}
