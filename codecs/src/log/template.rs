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
/// `1.2.3-rc1`), `<n>` (`12`, `-3.5`, `1,024`, `99%`), `<hex>` (`0x1f`, 6+ hex digits); else
/// each run of letters and digits in it is kept, or replaced by `<n>` (all digits) or `<hex>`
/// (8+ hex digits), or has its digit runs replaced by `<n>` (`crate_171` → `crate_<n>`).
pub(crate) fn template(line: &str, out: &mut Vec<u8>) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let test = test_name(line);
    let mut first: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < bytes.len() {
        if let Some((start, end)) = test
            && i == start
        {
            out.extend_from_slice(b"<test>");
            first.get_or_insert((start, end));
            i = end;
            continue;
        }
        let byte = bytes[i];
        if byte == b' ' || byte == b'\t' {
            out.push(byte);
            i += 1;
            continue;
        }
        let start = i;
        let mut digit = false;
        while i < bytes.len() && bytes[i] != b' ' && bytes[i] != b'\t' {
            digit |= bytes[i].is_ascii_digit();
            i += 1;
        }
        if digit || digitless_placeholder(&bytes[start..i]) {
            if word(&line[start..i], out) {
                first.get_or_insert((start, i));
            }
        } else {
            out.extend_from_slice(&bytes[start..i]);
        }
    }
    first
}

/// Whether a word without a digit may still be a placeholder's value: a path (`src/app/x.tsx`)
/// or hex digits that happen to be letters (`deadbeef`). Such a word is templated like one
/// with a digit, so that a template's placeholder stands for every value of its kind: a fold
/// of `<path>` lines never leaves out a line whose path has no digit.
fn digitless_placeholder(word: &[u8]) -> bool {
    if word.iter().any(|b| matches!(b, b'/' | b'\\')) {
        return true;
    }
    let letters = word.iter().filter(|b| b.is_ascii_alphabetic()).count();
    letters >= 6
        && word
            .iter()
            .all(|b| b.is_ascii_hexdigit() || !b.is_ascii_alphanumeric())
}

/// Writes the template of one word that holds a digit, or that [`digitless_placeholder`]
/// picks; whether it wrote a placeholder.
fn word(word: &str, out: &mut Vec<u8>) -> bool {
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
    let core = &bytes[lead..bytes.len() - trail];
    out.extend_from_slice(&bytes[..lead]);
    let whole = if core.is_empty() {
        None
    } else if is_uuid(core) {
        Some("<uuid>")
    } else if is_time(core) {
        Some("<time>")
    } else if is_path(core) {
        Some("<path>")
    } else if is_duration(core) {
        Some("<dur>")
    } else if is_version(core) {
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

/// A word that is no one placeholder: each run of ASCII letters and digits is templated on its
/// own, everything between runs kept.
fn mixed(core: &[u8], out: &mut Vec<u8>) -> bool {
    let mut placed = false;
    let mut i = 0;
    while i < core.len() {
        if !core[i].is_ascii_alphanumeric() {
            out.push(core[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < core.len() && core[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let run = &core[start..i];
        if !run.iter().any(u8::is_ascii_digit) {
            out.extend_from_slice(run);
        } else if run.iter().all(u8::is_ascii_digit) {
            out.extend_from_slice(b"<n>");
            placed = true;
        } else if run.len() >= 8 && run.iter().all(u8::is_ascii_hexdigit) {
            out.extend_from_slice(b"<hex>");
            placed = true;
        } else {
            let mut j = 0;
            while j < run.len() {
                if run[j].is_ascii_digit() {
                    while j < run.len() && run[j].is_ascii_digit() {
                        j += 1;
                    }
                    out.extend_from_slice(b"<n>");
                    placed = true;
                } else {
                    out.push(run[j]);
                    j += 1;
                }
            }
        }
    }
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

fn is_path(b: &[u8]) -> bool {
    b.iter().any(|c| matches!(c, b'/' | b'\\')) && b.iter().any(u8::is_ascii_alphabetic)
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
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let rest = &line[indent..];
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
    // pytest -v: `tests/test_a.py::test_x PASSED [ 50%]`.
    let (name, after) = rest.split_once(' ')?;
    let verdict = after.trim_start_matches(' ');
    if name.contains("::")
        && ["PASSED", "SKIPPED", "XFAIL", "XPASS"]
            .iter()
            .any(|word| verdict.starts_with(word))
    {
        return Some((indent, indent + name.len()));
    }
    None
}

/// The text with ANSI escape sequences removed and each line's carriage-return redraws
/// resolved to the line's final state (the last non-empty `\r`-separated part; a `\r` ending a
/// line, as in `\r\n`, only ends it). Line breaks are never removed, so line `i` of the result
/// is line `i` of the input. Borrowed when there is nothing to clean.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    if memchr::memchr2(0x1b, b'\r', text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut plain = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        plain.clear();
        strip_ansi(line, &mut plain);
        let body = plain.strip_suffix('\r').unwrap_or(&plain);
        let last = body
            .rsplit('\r')
            .find(|part| !part.is_empty())
            .unwrap_or("");
        out.push_str(last);
    }
    Cow::Owned(out)
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
    let bytes = text.as_bytes();
    let mut tokens = 0;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        let start = i;
        if byte.is_ascii_alphabetic() {
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            tokens += (i - start).div_ceil(6);
        } else if byte.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            tokens += (i - start).div_ceil(3);
        } else if byte == b' ' {
            while i < bytes.len() && bytes[i] == b' ' {
                i += 1;
            }
            tokens += usize::from(i - start > 1);
        } else if byte.is_ascii() {
            i += 1;
            tokens += 1;
        } else {
            while i < bytes.len() && !bytes[i].is_ascii() {
                i += 1;
            }
            tokens += (i - start).div_ceil(2);
        }
    }
    tokens
}
