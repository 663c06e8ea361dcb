//! Templates: a line with its variable fields replaced by placeholders, so that lines which
//! differ only in numbers, ids, times, paths or versions share one template. Also the two other
//! per-line transforms: ANSI/carriage-return cleaning and the token estimate.

use std::borrow::Cow;

/// The placeholders a template may hold, in the order [`template`] tries them on a word.
#[cfg(test)]
pub(crate) const PLACEHOLDERS: [&str; 8] = [
    "<uuid>", "<time>", "<path>", "<dur>", "<ver>", "<n>", "<hex>", "<test>",
];

/// Writes the template of `line` into `out` and returns the byte span, in `line`, of the first
/// word that holds a placeholder (the value a fold line shows as first/last), if any.
///
/// The line is cut into words at spaces and tabs (kept as they are). A word without an ASCII
/// digit is kept, except a path or a run of 6+ hex letters (`src/app/x.tsx`, `deadbeef`: see
/// below) and the test name of a passing test's line (`test x ... ok`, `--- PASS: x`,
/// `=== RUN x`, `✓ x`, `path::x PASSED`), which becomes `<test>`. A word with a digit (or a
/// path, or hex letters) loses its wrapping punctuation (kept), and its core becomes one placeholder when the
/// whole core is one: `<uuid>`, `<time>` (dates, clock times, ISO timestamps), `<path>` (a `/`
/// or `\` and a letter), `<dur>` (`12ms`, `1.5s`, `2m30s`), `<ver>` (`v1.2`, `1.2.3`,
/// `1.2.3-rc1`), `<n>` (`12`, `-3.5`, `1,024`, `99%`), `<hex>` (`0x1f`, 6+ hex digits); a
/// `key=value` core keeps `key=` and its value is tried as the core (`request_id=<uuid>`); else
/// each run of letters and digits in it is kept, or replaced by `<n>` (all digits) or `<hex>`
/// (8+ hex digits), or has its digit runs replaced by `<n>` (`crate_171` → `crate_<n>`).
pub(crate) fn template(line: &str, out: &mut Vec<u8>) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut test = test_name(line);
    let mut first: Option<(usize, usize)> = None;
    // `bytes[copied..i]` is kept as it is, and written in one piece when something replaced
    // comes (most of a line is kept).
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some((start, end)) = test
            && i == start
        {
            out.extend_from_slice(&bytes[copied..i]);
            out.extend_from_slice(b"<test>");
            first.get_or_insert((start, end));
            // Once: an empty name must not stop the walk.
            test = None;
            i = end;
            copied = end;
            continue;
        }
        if BYTE_CLASS[usize::from(bytes[i])] & SEPARATOR != 0 {
            i += 1;
            continue;
        }
        let start = i;
        let seen;
        (i, seen) = word_end(bytes, i);
        if seen & DIGIT != 0 || digitless_placeholder(&bytes[start..i], seen) {
            out.extend_from_slice(&bytes[copied..start]);
            if word(&line[start..i], seen, out) {
                first.get_or_insert((start, i));
            }
            copied = i;
        }
    }
    out.extend_from_slice(&bytes[copied..]);
    first
}

/// The end of the word that starts at `i` (the next space or tab, or the end), and the
/// [`BYTE_CLASS`] bits of its bytes, or-ed.
///
/// Eight bytes at a time: most of a log's bytes are inside words, and a word's end is found
/// in a whole word of the machine at once (a byte equal to a space or a tab is a zero byte of
/// the word xor-ed with eight of them).
#[inline]
fn word_end(bytes: &[u8], mut i: usize) -> (usize, u8) {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    const TABS: u64 = u64::from_ne_bytes([b'\t'; 8]);
    // The high bit of each zero byte of `x` (and maybe of bytes after the first zero byte,
    // which the lowest set bit is not).
    let zeros = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let class = |b: u8| BYTE_CLASS[usize::from(b)];
    let mut seen = 0;
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*chunk);
        let ends = zeros(x ^ SPACES) | zeros(x ^ TABS);
        if ends == 0 {
            seen |= class(chunk[0])
                | class(chunk[1])
                | class(chunk[2])
                | class(chunk[3])
                | class(chunk[4])
                | class(chunk[5])
                | class(chunk[6])
                | class(chunk[7]);
            i += 8;
            continue;
        }
        let len = (ends.trailing_zeros() / 8) as usize;
        for &b in &chunk[..len] {
            seen |= class(b);
        }
        return (i + len, seen);
    }
    while let Some(&b) = bytes.get(i) {
        let c = class(b);
        if c & SEPARATOR != 0 {
            break;
        }
        seen |= c;
        i += 1;
    }
    (i, seen)
}

/// [`BYTE_CLASS`] bits: a space or a tab (a word ends).
const SEPARATOR: u8 = 1;
/// [`BYTE_CLASS`] bits: an ASCII digit.
const DIGIT: u8 = 2;
/// [`BYTE_CLASS`] bits: an ASCII letter.
const LETTER: u8 = 4;
/// [`BYTE_CLASS`] bits: an ASCII letter that is not a hex digit.
const NOT_HEX: u8 = 8;
/// [`BYTE_CLASS`] bits: `/` or `\`.
const SLASH: u8 = 16;
/// [`BYTE_CLASS`] bits: `=` (a `key=value` word).
const EQUALS: u8 = 32;
/// [`BYTE_CLASS`] bits: `-` or `:` (a date or a clock time holds one).
const TIME_PUNCT: u8 = 64;
/// [`BYTE_CLASS`] bits: `.` (a version holds one).
const DOT: u8 = 128;

/// Each byte's class bits, so a word is walked with one lookup per byte.
static BYTE_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b' ' as usize] = SEPARATOR;
    table[b'\t' as usize] = SEPARATOR;
    table[b'/' as usize] = SLASH;
    table[b'\\' as usize] = SLASH;
    table[b'=' as usize] = EQUALS;
    table[b'-' as usize] = TIME_PUNCT;
    table[b':' as usize] = TIME_PUNCT;
    table[b'.' as usize] = DOT;
    let mut byte = 0;
    while byte < 128 {
        let c = byte as u8;
        if c.is_ascii_digit() {
            table[byte] = DIGIT;
        } else if c.is_ascii_hexdigit() {
            table[byte] = LETTER;
        } else if c.is_ascii_alphabetic() {
            table[byte] = LETTER | NOT_HEX;
        }
        byte += 1;
    }
    table
};

/// Whether a word without a digit may still be a placeholder's value: a path (`src/app/x.tsx`)
/// or hex digits that happen to be letters (`deadbeef`). Such a word is templated like one
/// with a digit, so that a template's placeholder stands for every value of its kind: a fold
/// of `<path>` lines never leaves out a line whose path has no digit. `seen` is the
/// [`BYTE_CLASS`] bits of its bytes, or-ed.
fn digitless_placeholder(word: &[u8], seen: u8) -> bool {
    if seen & SLASH != 0 {
        return true;
    }
    // Only hex letters, if any letters: count them.
    seen & (LETTER | NOT_HEX) == LETTER
        && word.iter().filter(|b| b.is_ascii_alphabetic()).count() >= 6
}

/// Writes the template of one word that holds a digit, or that [`digitless_placeholder`]
/// picks; whether it wrote a placeholder.
///
/// `seen` is the [`BYTE_CLASS`] bits of its bytes, or-ed (its wrapping punctuation has none).
fn word(word: &str, seen: u8, out: &mut Vec<u8>) -> bool {
    let bytes = word.as_bytes();
    let lead = bytes
        .iter()
        .take_while(|b| matches!(b, b'(' | b'[' | b'{' | b'<' | b'"' | b'\'' | b'`' | b'#'))
        .count();
    let trail = bytes[lead..]
        .iter()
        .rev()
        .take_while(|b| {
            matches!(
                b,
                b')' | b']'
                    | b'}'
                    | b'>'
                    | b'"'
                    | b'\''
                    | b'`'
                    | b','
                    | b';'
                    | b':'
                    | b'.'
                    | b'!'
                    | b'?'
            )
        })
        .count();
    let mut core = &bytes[lead..bytes.len() - trail];
    out.extend_from_slice(&bytes[..lead]);
    let mut seen = seen;
    // The bits of `seen` rule out most kinds at once (each needs a byte of some class).
    if let Some(eq) = (seen & EQUALS != 0).then(|| key_length(core)).flatten() {
        // `key=value`: the key is kept and the value stands as the core (so a `<uuid>` after
        // `request_id=` is one placeholder, not its hex runs one by one).
        out.extend_from_slice(&core[..=eq]);
        core = &core[eq + 1..];
        seen = core
            .iter()
            .fold(0, |seen, &b| seen | BYTE_CLASS[usize::from(b)]);
    }
    let whole = if core.is_empty() {
        None
    } else if seen & TIME_PUNCT != 0 && is_uuid(core) {
        Some("<uuid>")
    } else if seen & (TIME_PUNCT | SLASH) != 0 && is_time(core) {
        Some("<time>")
    } else if seen & SLASH != 0 && seen & LETTER != 0 {
        // A path: a `/` or `\` and a letter.
        Some("<path>")
    } else if seen & NOT_HEX != 0 && is_duration(core) {
        // Every unit holds a letter that is not a hex digit (`µs`: its `s`).
        Some("<dur>")
    } else if seen & (DOT | NOT_HEX) != 0 && is_version(core) {
        // `1.2.3` holds a `.`; `v1` a `v`.
        Some("<ver>")
    } else if is_number(core) {
        Some("<n>")
    } else if is_hex(core) {
        Some("<hex>")
    } else {
        None
    };
    let placed = match whole {
        Some(placeholder) => {
            out.extend_from_slice(placeholder.as_bytes());
            true
        }
        None => mixed(core, out),
    };
    out.extend_from_slice(&bytes[bytes.len() - trail..]);
    placed
}

/// The length of the key of a `key=value` core: letters, digits, `_`, `-` and `.`, starting
/// with a letter or `_`, then `=` and a non-empty value; `None` for any other core.
fn key_length(core: &[u8]) -> Option<usize> {
    // Most cores start with a digit (a time, a number): one comparison rules them out.
    if !core
        .first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
    {
        return None;
    }
    let eq = core
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))?;
    (core[eq] == b'=' && eq + 1 < core.len()).then_some(eq)
}

/// A word that is no one placeholder: each run of ASCII letters and digits is templated on its
/// own, everything between runs kept.
fn mixed(core: &[u8], out: &mut Vec<u8>) -> bool {
    let mut placed = false;
    // `core[copied..i]` is kept as it is, written when a replaced run comes.
    let mut copied = 0;
    let mut i = 0;
    while i < core.len() {
        if BYTE_CLASS[usize::from(core[i])] & (DIGIT | LETTER) == 0 {
            i += 1;
            continue;
        }
        let start = i;
        let mut seen = 0;
        while i < core.len() {
            let class = BYTE_CLASS[usize::from(core[i])];
            if class & (DIGIT | LETTER) == 0 {
                break;
            }
            seen |= class;
            i += 1;
        }
        if seen & DIGIT == 0 {
            continue;
        }
        out.extend_from_slice(&core[copied..start]);
        copied = i;
        placed = true;
        let run = &core[start..i];
        if seen & LETTER == 0 {
            out.extend_from_slice(b"<n>");
        } else if run.len() >= 8 && seen & NOT_HEX == 0 {
            out.extend_from_slice(b"<hex>");
        } else {
            let mut j = 0;
            while j < run.len() {
                if run[j].is_ascii_digit() {
                    while j < run.len() && run[j].is_ascii_digit() {
                        j += 1;
                    }
                    out.extend_from_slice(b"<n>");
                } else {
                    out.push(run[j]);
                    j += 1;
                }
            }
        }
    }
    out.extend_from_slice(&core[copied..]);
    placed
}

fn digits(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A date (`2026-11-29`, `2026/11/29`, with anything after) or a clock time (`10:08:09`,
/// `9:05`, with anything after).
fn is_time(b: &[u8]) -> bool {
    let date = b.len() >= 10
        && digits(b) == 4
        && matches!(b[4], b'-' | b'/')
        && digits(&b[5..]) == 2
        && b[7] == b[4]
        && digits(&b[8..]) == 2;
    let lead = digits(b);
    let clock = (1..=2).contains(&lead)
        && b.get(lead) == Some(&b':')
        && digits(&b[lead + 1..]) == 2
        && b.get(lead + 3)
            .is_none_or(|c| matches!(c, b':' | b'.' | b',' | b'Z' | b'+' | b'-'));
    date || clock
}

/// One or more number-unit pairs: `12ms`, `1.5s`, `2m30s`, `3 sec` is two words.
fn is_duration(b: &[u8]) -> bool {
    const UNITS: [&[u8]; 10] = [
        b"ns",
        b"us",
        "\u{b5}s".as_bytes(),
        b"ms",
        b"secs",
        b"sec",
        b"min",
        b"s",
        b"m",
        b"h",
    ];
    let mut i = 0;
    let mut pairs = 0;
    while i < b.len() {
        let whole = digits(&b[i..]);
        if whole == 0 {
            return false;
        }
        i += whole;
        if b.get(i) == Some(&b'.') {
            let frac = digits(&b[i + 1..]);
            if frac == 0 {
                return false;
            }
            i += 1 + frac;
        }
        let Some(unit) = UNITS.iter().find(|unit| b[i..].starts_with(unit)) else {
            return false;
        };
        i += unit.len();
        pairs += 1;
    }
    pairs > 0
}

/// `v1.2`, `1.2.3`, `1.2.3-rc.1`, `2.0.0+build5`.
fn is_version(b: &[u8]) -> bool {
    let v = usize::from(matches!(b.first(), Some(b'v' | b'V')));
    let mut i = v;
    let mut parts = 0;
    loop {
        let run = digits(&b[i..]);
        if run == 0 {
            return false;
        }
        i += run;
        parts += 1;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        } else {
            break;
        }
    }
    let enough = if v == 1 {
        parts >= 2 || i == b.len()
    } else {
        parts >= 3
    };
    let suffix = b[i..].first().is_none_or(|c| matches!(c, b'-' | b'+'))
        && b[i..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.'));
    enough && suffix
}

/// `12`, `-3.5`, `1,024`, `1_000`, `99%`, `3x`.
fn is_number(b: &[u8]) -> bool {
    let sign = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let mut i = sign;
    loop {
        let run = digits(&b[i..]);
        if run == 0 {
            return false;
        }
        i += run;
        if matches!(b.get(i), Some(b'.' | b',' | b'_'))
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            i += 1;
        } else {
            break;
        }
    }
    matches!(&b[i..], b"" | b"%" | b"x")
}

fn is_hex(b: &[u8]) -> bool {
    match b.strip_prefix(b"0x") {
        Some(rest) => !rest.is_empty() && rest.iter().all(u8::is_ascii_hexdigit),
        None => b.len() >= 6 && b.iter().all(u8::is_ascii_hexdigit),
    }
}

/// The span of the test name in a passing (or skipped) test's line of a recognised runner.
fn test_name(line: &str) -> Option<(usize, usize)> {
    let indent = line
        .bytes()
        .position(|b| b != b' ' && b != b'\t')
        .unwrap_or(line.len());
    let rest = &line[indent..];
    // Every runner's form below starts with one of these bytes, but pytest's (a path).
    let first = rest.as_bytes().first().copied().unwrap_or(0);
    if !matches!(first, b't' | b'-' | b'=' | b'P' | 0xe2) {
        return pytest_passed(rest).map(|len| (indent, indent + len));
    }
    // cargo test: `test path::name ... ok`.
    if let Some(name) = rest.strip_prefix("test ")
        && (rest.ends_with(" ... ok") || rest.contains(" ... ignored"))
    {
        let end = name.find(" ... ")?;
        return Some((indent + 5, indent + 5 + end));
    }
    // go test.
    for prefix in [
        "--- PASS: ",
        "--- SKIP: ",
        "=== RUN ",
        "=== PAUSE ",
        "=== CONT ",
        "=== NAME ",
    ] {
        if let Some(after) = rest.strip_prefix(prefix) {
            let pad = after.len() - after.trim_start_matches(' ').len();
            let start = indent + prefix.len() + pad;
            let len = line[start..].find(' ').unwrap_or(line.len() - start);
            return (len > 0).then_some((start, start + len));
        }
    }
    // jest: `✓ name (5 ms)`, `PASS src/a.test.js`.
    for prefix in ["\u{2713} ", "\u{221a} ", "PASS "] {
        if let Some(after) = rest.strip_prefix(prefix) {
            let start = indent + prefix.len();
            let len = match after.rfind(" (") {
                Some(at) if after.ends_with(')') => at,
                _ => after.len(),
            };
            return (len > 0).then_some((start, start + len));
        }
    }
    pytest_passed(rest).map(|len| (indent, indent + len))
}

/// pytest -v: `tests/test_a.py::test_x PASSED [ 50%]`: the name's length.
fn pytest_passed(rest: &str) -> Option<usize> {
    let space = rest.bytes().position(|b| b == b' ')?;
    let (name, after) = (&rest[..space], &rest[space + 1..]);
    let verdict = after.trim_start_matches(' ');
    // The verdict first: it rules out most lines at once.
    let passed = ["PASSED", "SKIPPED", "XFAIL", "XPASS"]
        .iter()
        .any(|word| verdict.starts_with(word));
    (passed && name.contains("::")).then_some(name.len())
}

/// The text with ANSI escape sequences removed and each line's carriage-return redraws
/// resolved to the line's final state (the last non-empty `\r`-separated part; a `\r` ending a
/// line, as in `\r\n`, only ends it). Line breaks are never removed, so line `i` of the result
/// is line `i` of the input. Borrowed when there is nothing to clean.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(mut at) = memchr::memchr2(0x1b, b'\r', bytes) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    let mut plain = String::new();
    // Only the lines holding an ESC or a CR change; the text between them is copied in one
    // piece. `text[copied..]` is not written yet, and `copied` is a line's start or its `\n`.
    let mut copied = 0;
    loop {
        let start = memchr::memrchr(b'\n', &bytes[copied..at]).map_or(copied, |p| copied + p + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
        out.push_str(&text[copied..start]);
        plain.clear();
        strip_ansi(&text[start..end], &mut plain);
        let body = plain.strip_suffix('\r').unwrap_or(&plain);
        out.push_str(last_state(body));
        copied = end;
        match memchr::memchr2(0x1b, b'\r', &bytes[end..]) {
            Some(p) => at = end + p,
            None => break,
        }
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The last non-empty `\r`-separated part of `line`, or `""`.
fn last_state(line: &str) -> &str {
    let mut end = line.len();
    while let Some(at) = memchr::memrchr(b'\r', &line.as_bytes()[..end]) {
        if at + 1 < end {
            return &line[at + 1..end];
        }
        end = at;
    }
    &line[..end]
}

/// Appends `line` without its ANSI escape sequences: CSI (`ESC [` … final byte), OSC (`ESC ]`
/// … BEL or `ESC \`), and two-byte escapes. A sequence cut short by an unexpected byte ends
/// there; that byte is kept.
fn strip_ansi(line: &str, out: &mut String) {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut kept = 0;
    while let Some(at) = memchr::memchr(0x1b, &bytes[i..]).map(|at| i + at) {
        out.push_str(&line[kept..at]);
        let mut j = at + 1;
        match bytes.get(j) {
            Some(b'[') => {
                j += 1;
                while j < bytes.len() && (0x20..=0x3f).contains(&bytes[j]) {
                    j += 1;
                }
                if j < bytes.len() && (0x40..=0x7e).contains(&bytes[j]) {
                    j += 1;
                }
            }
            Some(b']') => {
                j += 1;
                while j < bytes.len() && bytes[j] != 0x07 && bytes[j] != 0x1b && bytes[j] >= 0x20 {
                    j += 1;
                }
                if bytes.get(j) == Some(&0x07) {
                    j += 1;
                } else if bytes.get(j) == Some(&0x1b) && bytes.get(j + 1) == Some(&b'\\') {
                    j += 2;
                }
            }
            Some(c) if (0x40..=0x7e).contains(c) || (0x20..=0x2f).contains(c) => j += 1,
            _ => {}
        }
        i = j;
        kept = j;
    }
    out.push_str(&line[kept..]);
}

/// An estimate of the o200k token count of `text`, without a tokenizer: a run of ASCII letters
/// costs one token per 6 letters (rounded up), a run of digits one per 3 digits, a run of
/// spaces one token when longer than one space (a single space joins the next word), any other
/// ASCII byte one token, and a non-ASCII character one token per 2 bytes of UTF-8 (rounded up).
/// Calibrated on the corpus and the sample session's logs (see the tests).
pub(crate) fn estimate_tokens(text: &str) -> usize {
    estimate_bytes(text.as_bytes())
}

/// [`estimate_tokens`] of UTF-8 text given as bytes.
pub(crate) fn estimate_bytes(bytes: &[u8]) -> usize {
    let mut tokens = 0;
    let mut i = 0;
    while i < bytes.len() {
        let kind = TOKEN_KIND[usize::from(bytes[i])];
        let start = i;
        i += 1;
        if kind == kind::OTHER {
            tokens += 1;
            continue;
        }
        while i < bytes.len() && TOKEN_KIND[usize::from(bytes[i])] == kind {
            i += 1;
        }
        let run = i - start;
        tokens += match kind {
            kind::LETTERS => run.div_ceil(6),
            kind::DIGITS => run.div_ceil(3),
            kind::SPACES => usize::from(run > 1),
            _ => run.div_ceil(2),
        };
    }
    tokens
}

/// [`TOKEN_KIND`] values: the kinds of run [`estimate_tokens`] prices.
mod kind {
    pub(super) const LETTERS: u8 = 0;
    pub(super) const DIGITS: u8 = 1;
    pub(super) const SPACES: u8 = 2;
    pub(super) const OTHER: u8 = 3;
    pub(super) const NON_ASCII: u8 = 4;
}

/// Each byte's kind of run for the estimate.
static TOKEN_KIND: [u8; 256] = {
    let mut table = [kind::NON_ASCII; 256];
    let mut byte = 0;
    while byte < 128 {
        let c = byte as u8;
        table[byte] = if c.is_ascii_alphabetic() {
            kind::LETTERS
        } else if c.is_ascii_digit() {
            kind::DIGITS
        } else if c == b' ' {
            kind::SPACES
        } else {
            kind::OTHER
        };
        byte += 1;
    }
    table
};
