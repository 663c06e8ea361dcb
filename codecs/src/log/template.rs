//! Templates: a line with its variable fields replaced by placeholders, so that lines which
//! differ only in numbers, ids, times, paths or versions share one template. Also the two other
//! per-line transforms: ANSI/carriage-return cleaning and the token estimate.
//!
//! [`template`] runs on nearly every line of a payload, so it does not walk a line byte by
//! byte. It first classifies the line's bytes 16 at a time (safe SIMD from `wide`) into one
//! bit per byte for each class it needs (space or tab, digit or slash, slash, letter, letter
//! that is not a hex digit, key byte), 64 bytes to a [`Block`]. The words to template are then found
//! from those bits alone (see [`template`]), so a word with no digit, no slash and no run of
//! hex letters is never looked at, a `key=` is found in one step, and a UUID is told by comparing its hex and hyphen bits with
//! the UUID's pattern. The other kinds are still told by short loops over the bytes of the
//! few words that get that far.

use wide::u8x16;

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
/// path, or hex letters) loses its wrapping punctuation (kept), and its core becomes one
/// placeholder when the whole core is one: `<uuid>`, `<time>` (dates, clock times, ISO
/// timestamps), `<path>` (a `/` or `\` and a letter), `<dur>` (`12ms`, `1.5s`, `2m30s`), `<ver>`
/// (`v1.2`, `1.2.3`, `1.2.3-rc1`), `<n>` (`12`, `-3.5`, `1,024`, `99%`), `<hex>` (`0x1f`, 6+ hex
/// digits); a `key=value` core keeps `key=` and its value is tried as the core
/// (`request_id=<uuid>`); else each run of letters and digits in it is kept, or replaced by
/// `<n>` (all digits) or `<hex>` (8+ hex digits), or has its digit runs replaced by `<n>`
/// (`crate_171` → `crate_<n>`).
///
/// The line's bytes are classified first, 16 at a time, into one bit per byte and class (see
/// [`Block`]), and the words to template are found from those bits, without a loop over the
/// bytes: in a mask of the bytes inside words, adding the bits of the bytes of some class
/// carries each word holding one into the bit just after it (`word_ends`). So the words that
/// hold a digit or a slash, and those that hold hex letters and no other letter, are found
/// at once, and every other word costs nothing.
pub(crate) fn template(line: &str, out: &mut Vec<u8>) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let len = bytes.len();
    // One block more than the bytes need when `len` is a multiple of 64, so that the bit just
    // after the last word is in a block.
    let count = len / 64 + 1;
    let mut stack = [Block::default(); STACK_BLOCKS];
    let mut heap = Vec::new();
    let blocks: &mut [Block] = if count <= STACK_BLOCKS {
        &mut stack[..count]
    } else {
        heap.resize(count, Block::default());
        &mut heap
    };
    let mut chunks = bytes.chunks_exact(64);
    for (block, chunk) in blocks.iter_mut().zip(&mut chunks) {
        *block = Block::new(chunk.try_into().expect("chunks of 64 bytes"), 4);
    }
    let mut tail = [0u8; 64];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    blocks[count - 1] = Block::new(&tail, chunks.remainder().len().div_ceil(16));
    let mut carries = [false; 3];
    for (index, block) in blocks.iter_mut().enumerate() {
        let inside = !block.sep & low_bits(len.saturating_sub(64 * index));
        let marked = word_ends(inside, block.marked, &mut carries[0]);
        let hex = word_ends(inside, block.letter & !block.not_hex, &mut carries[1]);
        let other = word_ends(inside, block.not_hex, &mut carries[2]);
        block.ends = marked | (hex & !other);
        block.marked_ends = marked;
    }
    let masks = Masks { blocks };

    // The test name, if a walk from word to word would meet it (it does not start inside a
    // word): it is written in place of the words from its start to its end.
    let mut test =
        test_name(line, &masks).filter(|&(name, _)| name < len && masks.walk_stops_at(name));
    let mut first: Option<(usize, usize)> = None;
    // `bytes[copied..]` is not written yet: it is kept as it is, and written in one piece when
    // something replaced comes (most of a line is kept).
    let mut copied = 0;
    let mut ends = masks.blocks.iter().enumerate().flat_map(|(index, block)| {
        let mut ends = block.ends;
        std::iter::from_fn(move || {
            let at = (ends != 0).then(|| 64 * index + ends.trailing_zeros() as usize);
            ends &= ends.wrapping_sub(1);
            at
        })
    });
    loop {
        let next = ends.next().map(|end| (masks.word_start(end), end));
        let at = next.map_or(len, |(start, _)| start);
        if let Some((name, end)) = test
            && name <= at
        {
            out.extend_from_slice(&bytes[copied..name]);
            out.extend_from_slice(b"<test>");
            first.get_or_insert((name, end));
            copied = end;
            test = None;
        }
        let Some((start, end)) = next else { break };
        // A word inside the test name is part of it; one of hex letters and no other letter
        // is templated only with 6 of them.
        if start < copied
            || (masks.blocks[end / 64].marked_ends >> (end % 64) & 1 == 0
                && masks.count(start, end, |b| b.letter) < 6)
        {
            continue;
        }
        out.extend_from_slice(&bytes[copied..start]);
        if word(bytes, &masks, start, end, out) {
            first.get_or_insert((start, end));
        }
        copied = end;
    }
    out.extend_from_slice(&bytes[copied..]);
    first
}

/// The bits just after the words (runs of set bits of `inside`) that hold a bit of `marks`,
/// with `carry` in from the block before and out to the block after: adding a word's marked
/// bits to it carries into the bit after it, and no further.
fn word_ends(inside: u64, marks: u64, carry: &mut bool) -> u64 {
    let (sum, over) = inside.overflowing_add(marks & inside);
    let (sum, carried) = sum.overflowing_add(u64::from(*carry));
    *carry = over || carried;
    sum & !inside
}

/// How many [`Block`]s of a line [`template`] keeps on the stack; a longer line's are on the
/// heap (one allocation, small next to the work on so many bytes).
const STACK_BLOCKS: usize = 4;

/// The classes of 64 bytes of a line: bit `i` of a field is set when byte `i` is of that
/// class. Bytes past the line's end are of no class.
#[derive(Clone, Copy, Default)]
struct Block {
    /// A space or a tab (a word ends).
    sep: u64,
    /// An ASCII digit, `/` or `\\`.
    marked: u64,
    /// `/` or `\\`.
    slash: u64,
    /// An ASCII letter.
    letter: u64,
    /// An ASCII letter that is not a hex digit.
    not_hex: u64,
    /// The byte just after a word to template: one holding a digit or a slash, or hex letters
    /// and no other letter (a space, a tab, or the line's end).
    ends: u64,
    /// The bits of `ends` after a word holding a digit or a slash.
    marked_ends: u64,
}

impl Block {
    /// The classes of the first `chunks` times 16 of 64 bytes, 16 at a time.
    fn new(bytes: &[u8; 64], chunks: usize) -> Block {
        let (mut sep, mut marked, mut slash, mut letter, mut not_hex) = (0, 0, 0, 0, 0);
        for (k, lanes) in bytes.chunks_exact(16).take(chunks).enumerate() {
            let v = u8x16::new(lanes.try_into().expect("16 bytes"));
            let bits = |lanes: u8x16| u64::from(lanes.to_bitmask()) << (16 * k);
            let is = |c: u8| v.simd_eq(u8x16::splat(c));
            // `x <= max` for unsigned lanes, as `x - max` saturating to zero.
            let at_most =
                |x: u8x16, max: u8| x.saturating_sub(u8x16::splat(max)).simd_eq(u8x16::ZERO);
            // A letter's lower case, counted from `a` (wrapping: any other byte lands above 25).
            let from_a = (v | u8x16::splat(0x20)) - u8x16::splat(b'a');
            let slashes = is(b'/') | is(b'\\');
            let letters = at_most(from_a, 25);
            let digits = at_most(v - u8x16::splat(b'0'), 9);
            sep |= bits(is(b' ') | is(b'\t'));
            marked |= bits(digits | slashes);
            slash |= bits(slashes);
            letter |= bits(letters);
            not_hex |= bits(letters & !at_most(from_a, 5));
        }
        Block {
            sep,
            marked,
            slash,
            letter,
            not_hex,
            ends: 0,
            marked_ends: 0,
        }
    }
}

/// A line's [`Block`]s, queried over byte ranges.
struct Masks<'a> {
    blocks: &'a [Block],
}

impl Masks<'_> {
    /// The first byte in `from..to` of the class `class` picks from a block, or `to`.
    #[inline]
    fn find(&self, from: usize, to: usize, class: impl Fn(&Block) -> u64) -> usize {
        let mut at = from;
        while at < to {
            let bits = class(&self.blocks[at / 64]) >> (at % 64);
            if bits != 0 {
                return (at + bits.trailing_zeros() as usize).min(to);
            }
            at = (at / 64 + 1) * 64;
        }
        to
    }

    /// Whether a byte in `from..to` is of the class `class` picks.
    #[inline]
    fn any(&self, from: usize, to: usize, class: impl Fn(&Block) -> u64) -> bool {
        self.find(from, to, class) < to
    }

    /// How many bytes in `from..to` are of the class `class` picks.
    fn count(&self, from: usize, to: usize, class: impl Fn(&Block) -> u64) -> u32 {
        let mut count = 0;
        let mut at = from;
        while at < to {
            let n = (to - at).min(64 - at % 64);
            count += (class(&self.blocks[at / 64]) >> (at % 64) & low_bits(n)).count_ones();
            at += n;
        }
        count
    }

    /// The 64 bits of the class `class` picks from byte `at` on.
    fn window(&self, at: usize, class: impl Fn(&Block) -> u64) -> u64 {
        let (index, shift) = (at / 64, at % 64);
        let low = self.blocks.get(index).map_or(0, &class) >> shift;
        match (shift, self.blocks.get(index + 1)) {
            (1.., Some(next)) => low | class(next) << (64 - shift),
            _ => low,
        }
    }

    /// Whether the core `line[from..to]` is a UUID: hyphens at 8, 13, 18 and 23, hex digits
    /// elsewhere.
    fn is_uuid(&self, line: &[u8], from: usize, to: usize) -> bool {
        const DASHES: u64 = 1 << 8 | 1 << 13 | 1 << 18 | 1 << 23;
        let all = low_bits(36);
        let hex = |b: &Block| (b.marked & !b.slash) | (b.letter & !b.not_hex);
        to - from == 36
            && self.window(from, hex) & all == all & !DASHES
            && [8, 13, 18, 23].iter().all(|&at| line[from + at] == b'-')
    }

    /// Where the word ending at `end` starts: just after the space or tab before it, or 0.
    fn word_start(&self, end: usize) -> usize {
        let mut index = end / 64;
        let mut seps = self.blocks[index].sep & low_bits(end % 64);
        while seps == 0 {
            if index == 0 {
                return 0;
            }
            index -= 1;
            seps = self.blocks[index].sep;
        }
        64 * index + 64 - seps.leading_zeros() as usize
    }

    /// Whether a walk of the line from word to word stands at byte `at`: a space, a tab, or a
    /// word's first byte.
    fn walk_stops_at(&self, at: usize) -> bool {
        let bit = |at: usize| self.blocks[at / 64].sep >> (at % 64) & 1 == 1;
        at == 0 || bit(at) || bit(at - 1)
    }
}

/// The `n` low bits set (all 64 from 64 on).
fn low_bits(n: usize) -> u64 {
    u64::MAX.checked_shr(64 - n.min(64) as u32).unwrap_or(0)
}

/// [`BYTE_CLASS`] bits: an ASCII digit.
const DIGIT: u8 = 1;
/// [`BYTE_CLASS`] bits: an ASCII letter.
const LETTER: u8 = 2;
/// [`BYTE_CLASS`] bits: an ASCII letter that is not a hex digit.
const NOT_HEX: u8 = 4;

/// [`BYTE_CLASS`] bits: a byte a `key=value` word's key may hold: an ASCII letter or digit,
/// `_`, `-` or `.`.
const KEY: u8 = 8;

/// Each byte's [`DIGIT`], [`LETTER`], [`NOT_HEX`] and [`KEY`] bits, for the byte loops of
/// [`mixed`] and [`key_length`].
static BYTE_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 128 {
        let c = byte as u8;
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.') {
            table[byte] = KEY;
        }
        if c.is_ascii_digit() {
            table[byte] |= DIGIT;
        } else if c.is_ascii_hexdigit() {
            table[byte] |= LETTER;
        } else if c.is_ascii_alphabetic() {
            table[byte] |= LETTER | NOT_HEX;
        }
        byte += 1;
    }
    table
};

/// Writes the template of the word `line[start..end]`, one that holds a digit, a slash, or 6+
/// hex letters and no other letter; whether it wrote a placeholder.
fn word(line: &[u8], masks: &Masks<'_>, start: usize, end: usize, out: &mut Vec<u8>) -> bool {
    let bytes = &line[start..end];
    let lead = bytes
        .iter()
        .position(|&b| WRAP[usize::from(b)] & OPENING == 0)
        .unwrap_or(bytes.len());
    let trail = bytes[lead..]
        .iter()
        .rev()
        .position(|&b| WRAP[usize::from(b)] & CLOSING == 0)
        .unwrap_or(bytes.len() - lead);
    // The core is `line[from..to]`.
    let (mut from, to) = (start + lead, end - trail);
    if lead > 0 {
        out.extend_from_slice(&bytes[..lead]);
    }
    if let Some(key) = key_length(line, from, to) {
        // `key=value`: the key is kept and the value stands as the core (so a `<uuid>` after
        // `request_id=` is one placeholder, not its hex runs one by one).
        out.extend_from_slice(&line[from..=from + key]);
        from += key + 1;
    }
    let core = &line[from..to];
    // Each kind but a path is ruled in by its own test; the classes of the core's bytes rule
    // some out before it.
    let holds = |class: fn(&Block) -> u64| masks.any(from, to, class);
    let whole = if core.is_empty() {
        None
    } else if masks.is_uuid(line, from, to) {
        Some("<uuid>")
    } else if is_time(core) {
        Some("<time>")
    } else if holds(|b| b.slash) && holds(|b| b.letter) {
        // A path: a `/` or `\` and a letter.
        Some("<path>")
    } else if holds(|b| b.not_hex) && is_duration(core) {
        // Every unit holds a letter that is not a hex digit (`µs`: its `s`).
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
    if trail > 0 {
        out.extend_from_slice(&bytes[bytes.len() - trail..]);
    }
    placed
}

/// The length of the key of the `key=value` core `line[from..to]`: letters, digits, `_`, `-`
/// and `.`, starting with a letter or `_`, then `=` and a non-empty value; `None` for any other
/// core.
fn key_length(line: &[u8], from: usize, to: usize) -> Option<usize> {
    let core = &line[from..to];
    // Most cores start with a digit (a time, a number): one comparison rules them out.
    if !core
        .first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
    {
        return None;
    }
    let key = core
        .iter()
        .position(|&b| BYTE_CLASS[usize::from(b)] & KEY == 0)
        .unwrap_or(core.len());
    (key + 1 < core.len() && core[key] == b'=').then_some(key)
}

/// [`WRAP`] bits: a byte a word's core may be wrapped in on its left.
const OPENING: u8 = 1;
/// [`WRAP`] bits: a byte a word's core may be wrapped in on its right.
const CLOSING: u8 = 2;

/// Each byte's [`OPENING`] and [`CLOSING`] bits: the punctuation [`word`] keeps around a core.
static WRAP: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 128 {
        let c = byte as u8;
        if matches!(c, b'(' | b'[' | b'{' | b'<' | b'"' | b'\'' | b'`' | b'#') {
            table[byte] |= OPENING;
        }
        if matches!(
            c,
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
        ) {
            table[byte] |= CLOSING;
        }
        byte += 1;
    }
    table
};

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

/// A date (`2026-11-29`, `2026/11/29`, with anything after) or a clock time (`10:08:09`,
/// `9:05`, with anything after).
fn is_time(b: &[u8]) -> bool {
    let lead = digits(b);
    match lead {
        4 => {
            b.len() >= 10
                && matches!(b[4], b'-' | b'/')
                && digits(&b[5..]) == 2
                && b[7] == b[4]
                && digits(&b[8..]) == 2
        }
        1 | 2 => {
            b.get(lead) == Some(&b':')
                && digits(&b[lead + 1..]) == 2
                && b.get(lead + 3)
                    .is_none_or(|c| matches!(c, b':' | b'.' | b',' | b'Z' | b'+' | b'-'))
        }
        _ => false,
    }
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
    enough
        && b[i..].first().is_none_or(|c| matches!(c, b'-' | b'+'))
        && b[i..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.'))
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
fn test_name(line: &str, masks: &Masks<'_>) -> Option<(usize, usize)> {
    let indent = masks.find(0, line.len(), |b| !b.sep);
    let rest = &line[indent..];
    let pytest = || {
        // The first space, from the bits when it is the first space or tab.
        let sep = masks.find(indent, line.len(), |b| b.sep);
        let space = match line.as_bytes().get(sep) {
            Some(b' ') => Some(sep - indent),
            Some(_) => rest.bytes().position(|b| b == b' '),
            None => None,
        };
        pytest_passed(rest, space?).map(|len| (indent, indent + len))
    };
    // Every runner's form below starts with one of these bytes, but pytest's (a path).
    let first = rest.as_bytes().first().copied().unwrap_or(0);
    if !matches!(first, b't' | b'-' | b'=' | b'P' | 0xe2) {
        return pytest();
    }
    // cargo test: `test path::name ... ok`.
    if rest.starts_with("test ") && (rest.ends_with(" ... ok") || rest.contains(" ... ignored")) {
        // The first ` ... `, from one space to the next.
        let mut at = indent + 5;
        let end = loop {
            let space = masks.find(at, line.len(), |b| b.sep);
            if space == line.len() {
                return None;
            }
            if line.as_bytes()[space..].starts_with(b" ... ") {
                break space;
            }
            at = space + 1;
        };
        return Some((indent + 5, end));
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
    pytest()
}

/// pytest -v: `tests/test_a.py::test_x PASSED [ 50%]`: the name's length.
/// `space` is where the first space of `rest` is.
fn pytest_passed(rest: &str, space: usize) -> Option<usize> {
    let (name, after) = (&rest[..space], &rest[space + 1..]);
    let verdict = after.trim_start_matches(' ');
    // The verdict first: it rules out most lines at once.
    let passed = matches!(verdict.as_bytes().first(), Some(b'P' | b'S' | b'X'))
        && ["PASSED", "SKIPPED", "XFAIL", "XPASS"]
            .iter()
            .any(|word| verdict.starts_with(word));
    (passed && name.contains("::")).then_some(name.len())
}

/// The text with each line cleaned (see [`clean_line`]). Line breaks are never removed, so
/// line `i` of the result is line `i` of the input. Borrowed when there is nothing to clean.
#[cfg(test)]
pub(crate) fn clean<'t>(
    text: &'t str,
    failure: impl Fn(&str) -> bool,
) -> std::borrow::Cow<'t, str> {
    let bytes = text.as_bytes();
    let Some(mut at) = memchr::memchr2(0x1b, b'\r', bytes) else {
        return std::borrow::Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    let mut scratch = String::new();
    // Only the lines holding an ESC or a CR change; the text between them is copied in one
    // piece. `text[copied..]` is not written yet, and `copied` is a line's start or its `\n`.
    let mut copied = 0;
    loop {
        let start = memchr::memrchr(b'\n', &bytes[copied..at]).map_or(copied, |p| copied + p + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
        out.push_str(&text[copied..start]);
        clean_line(&text[start..end], &mut scratch, &mut out, &failure);
        copied = end;
        match memchr::memchr2(0x1b, b'\r', &bytes[end..]) {
            Some(p) => at = end + p,
            None => break,
        }
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
}

/// What stands for a carriage return between the redraw states a cleaned line keeps: U+240D
/// SYMBOL FOR CARRIAGE RETURN, which no terminal acts on (a `\r` written back would hide the
/// failure again wherever the output is shown).
pub(crate) const REDRAW: char = '\u{240d}';

/// Appends `line` (without its line break) cleaned: its ANSI escape sequences removed and its
/// carriage-return redraws resolved to its final state (the last non-empty `\r`-separated
/// part; a `\r` ending the line, as in `\r\n`, only ends it). An earlier state that
/// `failure` says is a failure is kept, verbatim and in order, before the final state, each
/// followed by [`REDRAW`]: `progress 50%\rERROR: disk full\rprogress 100%` is
/// `ERROR: disk full␍progress 100%` (a state equal to the one kept before it, or to the final
/// state, is kept once). Returns whether an earlier state was kept. `scratch` is working space.
pub(crate) fn clean_line(
    line: &str,
    scratch: &mut String,
    out: &mut String,
    failure: impl Fn(&str) -> bool,
) -> bool {
    scratch.clear();
    strip_ansi(line, scratch);
    let body = scratch.strip_suffix('\r').unwrap_or(scratch);
    let (start, end) = last_state(body);
    let (before, last) = (&body[..start], &body[start..end]);
    let mut kept: Option<&str> = None;
    let mark = out.len();
    let mut last_kept_at = mark;
    for state in before.split('\r') {
        if state.is_empty() || kept == Some(state) || !failure(state) {
            continue;
        }
        last_kept_at = out.len();
        out.push_str(state);
        out.push(REDRAW);
        kept = Some(state);
    }
    if kept == Some(last) {
        out.truncate(last_kept_at);
    }
    out.push_str(last);
    out.len() > mark + last.len()
}

/// Where the last non-empty `\r`-separated part of `line` starts and ends (an empty range
/// when there is none); what comes before it are the states it overwrote.
fn last_state(line: &str) -> (usize, usize) {
    let mut end = line.len();
    while let Some(at) = memchr::memrchr(b'\r', &line.as_bytes()[..end]) {
        if at + 1 < end {
            return (at + 1, end);
        }
        end = at;
    }
    (0, end)
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

#[cfg(test)]
mod block_tests {
    use super::template;

    type Span = Option<(usize, usize)>;

    /// Words placed across the 64-byte blocks of the masks, and lines long enough for their
    /// masks to be on the heap: (line, template, span of the first placeholder word).
    #[test]
    fn words_across_blocks() {
        let uuid = "3fa2b1c4-1a2b-4c3d-a123-123456789abc";
        let pad = |n: usize| " ".repeat(n);
        let rows: Vec<(String, String, Span)> = vec![
            (
                format!("{}{uuid}", pad(40)),
                format!("{}<uuid>", pad(40)),
                Some((40, 76)),
            ),
            (
                format!("{}{uuid}", pad(64)),
                format!("{}<uuid>", pad(64)),
                Some((64, 100)),
            ),
            (
                format!("{} request_id={uuid}", "x".repeat(50)),
                format!("{} request_id=<uuid>", "x".repeat(50)),
                Some((51, 98)),
            ),
            (
                format!("{}key=12ms", pad(60)),
                format!("{}key=<dur>", pad(60)),
                Some((60, 68)),
            ),
            (
                format!("{}facade", pad(61)),
                format!("{}<hex>", pad(61)),
                Some((61, 67)),
            ),
            (
                format!("{}faced", pad(61)),
                format!("{}faced", pad(61)),
                None,
            ),
            (
                format!("{} 12", "x".repeat(64)),
                format!("{} <n>", "x".repeat(64)),
                Some((65, 67)),
            ),
            ("1".repeat(200), "<n>".to_owned(), Some((0, 200))),
            (
                format!("{}id=12 2026-11-29", "word ".repeat(60)),
                format!("{}id=<n> <time>", "word ".repeat(60)),
                Some((300, 305)),
            ),
            (
                format!("{}::test_x PASSED [ 50%]", "a".repeat(63)),
                "<test> PASSED [ <n>]".to_owned(),
                Some((0, 71)),
            ),
            (
                format!("{}:x:test_x PASSED", "a".repeat(63)),
                format!("{}:x:test_x PASSED", "a".repeat(63)),
                None,
            ),
            (
                format!("{}test a::b ... ok", pad(70)),
                format!("{}test <test> ... ok", pad(70)),
                Some((75, 79)),
            ),
            (
                "test  ... ok".to_owned(),
                "test <test> ... ok".to_owned(),
                Some((5, 5)),
            ),
        ];
        for (line, expected, span) in rows {
            let mut out = Vec::new();
            let first = template(&line, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), expected, "{line:?}");
            assert_eq!(first, span, "{line:?}");
        }
    }
}
