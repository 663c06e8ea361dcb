//! Splitting a text into pieces (pre-tokenization), exactly as the tokenizers' patterns do.
//!
//! Each tokenizer splits with a pattern of alternatives tried in order at the current position
//! (leftmost-first, greedy), plus two whitespace patterns that stand in for a negative
//! lookahead (`\s+(?!\S)`): `\s+\s` with its last character given back, then `\s+`.
//!
//! For `o200k_base`, a hand-written matcher decides every piece whose decision rests on ASCII
//! bytes alone: it walks the pattern's alternatives over byte classes, and the moment the
//! decision would depend on a byte outside ASCII (a letter, a mark, a digit or a space of
//! another script could continue or end the piece), that piece is left to the pattern itself,
//! compiled with `regex-automata` when first needed. Both give the same pieces; the tests
//! compare them on the corpus and on generated texts built from the bytes where the
//! alternatives part ways.

use std::sync::{Mutex, OnceLock};

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson;
use regex_automata::{Anchored, Input, MatchKind};

/// A tokenizer's splitting pattern: alternatives in priority order, each with whether its last
/// character is a lookahead to give back.
///
/// Compiled when first needed to a lazy DFA, forward only: a piece starts where the last one
/// ended, so only the end of an anchored match is needed (no reverse automaton, no captures,
/// about half the compile time of a full regex).
pub(crate) struct Pattern {
    patterns: &'static [(&'static str, bool)],
    dfa: OnceLock<Option<DFA>>,
    /// Caches of the lazy DFA, one per search running at a time.
    caches: Mutex<Vec<Cache>>,
}

impl Pattern {
    pub(crate) const fn new(patterns: &'static [(&'static str, bool)]) -> Pattern {
        Pattern {
            patterns,
            dfa: OnceLock::new(),
            caches: Mutex::new(Vec::new()),
        }
    }

    fn dfa(&self) -> Option<&DFA> {
        self.dfa
            .get_or_init(|| {
                let sources: Vec<&str> = self.patterns.iter().map(|&(source, _)| source).collect();
                DFA::builder()
                    .configure(
                        DFA::config()
                            .match_kind(MatchKind::LeftmostFirst)
                            // Never give up on a text that keeps clearing the cache: slower,
                            // not wrong.
                            .minimum_cache_clear_count(None),
                    )
                    .thompson(thompson::Config::new().shrink(false))
                    .build_many(&sources)
                    .ok()
            })
            .as_ref()
    }

    /// A cache for one search; give it back with [`Pattern::give_back`].
    fn take_cache(&self) -> Option<Cache> {
        let dfa = self.dfa()?;
        let reused = self
            .caches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        Some(reused.unwrap_or_else(|| dfa.create_cache()))
    }

    pub(crate) fn give_back(&self, cache: Cache) {
        self.caches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(cache);
    }

    /// The end of the piece that starts at `at` (`at < text.len()`), by the pattern.
    pub(crate) fn piece_end(&self, text: &str, at: usize, cache: &mut Option<Cache>) -> usize {
        let rest = &text[at..];
        if cache.is_none() {
            *cache = self.take_cache();
        }
        let found = match (self.dfa(), cache.as_mut()) {
            (Some(dfa), Some(cache)) => dfa
                .try_search_fwd(cache, &Input::new(rest).anchored(Anchored::Yes))
                .ok()
                .flatten(),
            _ => None,
        };
        let Some(found) = found else {
            // Every character starts some alternative of these patterns; were one not to, it
            // would be a piece of its own rather than lost.
            return at + rest.chars().next().map_or(rest.len(), char::len_utf8);
        };
        let mut end = found.offset();
        if self.patterns[found.pattern().as_usize()].1 {
            let lookahead = rest[..end].chars().next_back().map_or(0, char::len_utf8);
            if end > lookahead {
                end -= lookahead;
            }
        }
        at + end
    }
}

/// ASCII byte classes, as the `o200k_base` pattern sees them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    Lower,
    Digit,
    /// White space other than a line break: space, tab, vertical tab, form feed.
    Blank,
    /// `\r` and `\n`.
    Newline,
    /// Neither letter, digit nor white space: punctuation, symbols, control characters.
    Other,
}

const fn class_table() -> [Class; 128] {
    let mut table = [Class::Other; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = match b as u8 {
            b'A'..=b'Z' => Class::Upper,
            b'a'..=b'z' => Class::Lower,
            b'0'..=b'9' => Class::Digit,
            b' ' | b'\t' | 0x0B | 0x0C => Class::Blank,
            b'\r' | b'\n' => Class::Newline,
            _ => Class::Other,
        };
        b += 1;
    }
    table
}

static CLASSES: [Class; 128] = class_table();

/// What the byte at an index is, to the matcher.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Ascii(Class),
    /// Past the end of the text.
    End,
    /// A byte outside ASCII: the matcher cannot decide.
    Beyond,
}

#[inline]
fn at(bytes: &[u8], i: usize) -> At {
    match bytes.get(i) {
        None => At::End,
        Some(&b) if b < 0x80 => At::Ascii(CLASSES[b as usize]),
        Some(_) => At::Beyond,
    }
}

/// The end of the `o200k_base` piece starting at `p`, when ASCII bytes alone decide it.
#[inline]
pub(crate) fn o200k_ascii_piece(bytes: &[u8], p: usize) -> Option<usize> {
    let At::Ascii(first) = at(bytes, p) else {
        return None;
    };
    match first {
        Class::Upper | Class::Lower => letters(bytes, p),
        Class::Digit => {
            // `\p{N}{1,3}`.
            let mut i = p + 1;
            while i < p + 3 {
                match at(bytes, i) {
                    At::Ascii(Class::Digit) => i += 1,
                    At::Beyond => return None,
                    _ => break,
                }
            }
            Some(i)
        }
        Class::Blank | Class::Other => {
            // Either may be the optional first character before letters.
            let next = at(bytes, p + 1);
            match next {
                At::Beyond => None,
                At::Ascii(Class::Upper | Class::Lower) => letters(bytes, p + 1),
                // A symbol after a space (` ?[^\s\p{L}\p{N}]+`), or symbols from here.
                At::Ascii(Class::Other) if bytes[p] == b' ' => symbols(bytes, p + 1),
                _ if first == Class::Other => symbols(bytes, p + 1),
                _ => white_space(bytes, p),
            }
        }
        Class::Newline => white_space(bytes, p),
    }
}

/// Letters from `q` (a letter), then an optional contraction: the first two alternatives.
#[inline]
fn letters(bytes: &[u8], q: usize) -> Option<usize> {
    let mut i = q;
    loop {
        match at(bytes, i) {
            At::Ascii(Class::Upper) => i += 1,
            At::Beyond => return None,
            _ => break,
        }
    }
    // Capitals then lower case (the first alternative), or capitals alone (the second).
    loop {
        match at(bytes, i) {
            At::Ascii(Class::Lower) => i += 1,
            At::Beyond => return None,
            _ => break,
        }
    }
    contraction(bytes, i)
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `i`.
#[inline]
fn contraction(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'\'') {
        return Some(i);
    }
    let folded = |k: usize| bytes.get(k).map(|b| b.to_ascii_lowercase());
    if bytes.get(i + 1).is_some_and(|&b| b >= 0x80) {
        // `ſ` folds to `s`.
        return None;
    }
    let second = match folded(i + 1) {
        Some(b's' | b't' | b'm' | b'd') => return Some(i + 2),
        Some(b'r' | b'v') => b'e',
        Some(b'l') => b'l',
        _ => return Some(i),
    };
    if bytes.get(i + 2).is_some_and(|&b| b >= 0x80) {
        return None;
    }
    Some(if folded(i + 2) == Some(second) {
        i + 3
    } else {
        i
    })
}

/// ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, its first symbol's successor at `i`.
#[inline]
fn symbols(bytes: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match at(bytes, i) {
            At::Ascii(Class::Other) => i += 1,
            At::Beyond => return None,
            _ => break,
        }
    }
    while matches!(bytes.get(i), Some(b'\r' | b'\n' | b'/')) {
        i += 1;
    }
    Some(i)
}

/// A run of white space from `p`: up to its last line break (`\s*[\r\n]+`), or to the end of
/// the text (`\s+$`), or all but its last character (`\s+(?!\S)`), or its one character.
#[inline]
fn white_space(bytes: &[u8], p: usize) -> Option<usize> {
    let mut i = p;
    let mut last_newline = None;
    loop {
        match at(bytes, i) {
            At::Ascii(Class::Newline) => {
                last_newline = Some(i);
                i += 1;
            }
            At::Ascii(Class::Blank) => i += 1,
            At::Beyond => return None,
            _ => break,
        }
    }
    Some(match last_newline {
        Some(newline) => newline + 1,
        None if i == bytes.len() => i,
        None if i - p >= 2 => i - 1,
        None => i,
    })
}
