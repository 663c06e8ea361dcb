//! Lines, words and rows: what both directions read the same way.

/// One word of a line: a run of bytes other than the space, where it lies in the payload
/// (bytes) and in its line (characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Field {
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) char_start: u32,
    pub(super) char_end: u32,
}

impl Field {
    /// The word's length in characters.
    pub(super) fn chars(&self) -> u32 {
        self.char_end - self.char_start
    }
}

/// Where each line of `text` starts and ends, in bytes: the text split at every `\n`, so a
/// text ending with a line break has an empty last line, and the lines joined by `\n` give
/// the text back.
pub(super) fn line_bounds(text: &str) -> Vec<(u32, u32)> {
    let mut lines = Vec::with_capacity(text.len() / 48 + 1);
    let mut start = 0u32;
    for at in memchr::memchr_iter(b'\n', text.as_bytes()) {
        lines.push((start, at as u32));
        start = at as u32 + 1;
    }
    lines.push((start, text.len() as u32));
    lines
}

/// Whether a line separates two sections: empty, or only spaces, tabs and carriage returns.
pub(super) fn is_separator(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Pushes the first `max` words of `line` (which starts at byte `base` of the payload) to
/// `out`, and returns how many it found.
pub(super) fn words(line: &[u8], base: u32, max: usize, out: &mut Vec<Field>) -> usize {
    if line.is_ascii() {
        return ascii_words(line, base, max, out);
    }
    let (mut i, mut chars, mut found) = (0usize, 0u32, 0usize);
    while found < max {
        while i < line.len() && line[i] == b' ' {
            i += 1;
            chars += 1;
        }
        if i == line.len() {
            break;
        }
        let (start, char_start) = (i, chars);
        while i < line.len() && line[i] != b' ' {
            // A character is counted at its first byte: every byte but UTF-8's continuation
            // bytes (0b10xx_xxxx).
            chars += u32::from(line[i] & 0xC0 != 0x80);
            i += 1;
        }
        out.push(Field {
            start: base + start as u32,
            end: base + i as u32,
            char_start,
            char_end: chars,
        });
        found += 1;
    }
    found
}

/// [`words`] of an ASCII line, where a character is a byte.
fn ascii_words(line: &[u8], base: u32, max: usize, out: &mut Vec<Field>) -> usize {
    let (mut i, mut found) = (0usize, 0usize);
    while found < max {
        while i < line.len() && line[i] == b' ' {
            i += 1;
        }
        if i == line.len() {
            break;
        }
        let start = i;
        while i < line.len() && line[i] != b' ' {
            i += 1;
        }
        out.push(Field {
            start: base + start as u32,
            end: base + i as u32,
            char_start: start as u32,
            char_end: i as u32,
        });
        found += 1;
    }
    found
}

/// Reads `line` as the codec writes a row of `words` words: the words one space apart,
/// none empty, then (`free`) a space and free text, which may be empty or hold spaces, or
/// (not `free`) nothing. Calls `word` with where each word starts and ends, and returns
/// where the free text starts (the line's end without free text), or `None` when `line` is
/// not such a row. Both directions read rows with it, so they agree on what a row is.
pub(super) fn read_row(
    line: &[u8],
    words: usize,
    free: bool,
    mut word: impl FnMut(usize, usize),
) -> Option<usize> {
    let mut i = 0;
    for n in 0..words {
        let start = i;
        while i < line.len() && line[i] != b' ' {
            i += 1;
        }
        if i == start {
            return None;
        }
        word(start, i);
        if n + 1 < words {
            if i == line.len() {
                return None;
            }
            i += 1;
        }
    }
    if free {
        (line.get(i) == Some(&b' ')).then_some(i + 1)
    } else {
        (i == line.len()).then_some(i)
    }
}

/// Whether `line` reads as a row of `words` words (see [`read_row`]).
pub(super) fn is_row(line: &[u8], words: usize, free: bool) -> bool {
    read_row(line, words, free, |_, _| {}).is_some()
}

/// The length of `text` in characters, which is what the padding of a column counts: its
/// bytes less UTF-8's continuation bytes (a loop the compiler vectorises, faster on words
/// than `chars().count()`).
pub(super) fn width(text: &str) -> usize {
    text.len() - text.bytes().filter(|&b| b & 0xC0 == 0x80).count()
}

/// Writes `count` spaces.
pub(super) fn pad(out: &mut String, mut count: usize) {
    const SPACES: &str = "                                                                ";
    while count > 0 {
        let step = count.min(SPACES.len());
        out.push_str(&SPACES[..step]);
        count -= step;
    }
}
