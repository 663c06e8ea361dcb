//! A borrowing JSON reader and a compact writer, shared by the codecs.
//!
//! The codecs never build an owned value tree on their hot paths: the [`Reader`] validates the
//! input as it goes and hands out slices of it (a number exactly as written, a string with its
//! quotes and escapes as written), and the codecs copy those slices into their output. That is
//! what keeps numbers byte-exact (`1`, `1.0` and a 30-digit decimal are just text here) and what
//! makes a codec cost little more than one validating scan of its input.
//!
//! [`Value`] is a small borrowed tree for the cold paths (the inverses, summaries, tests).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;

/// How deeply arrays and objects may nest in an input before it is refused (the host's own
/// parser refuses far shallower JSON, so nothing it hands over is refused here).
pub(crate) const MAX_DEPTH: usize = 512;

/// Why a text was refused. Codecs pass such a payload through unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reject {
    /// Not JSON: the byte offset where reading failed.
    Syntax(usize),
    /// Nested deeper than [`MAX_DEPTH`] (or the limit given).
    TooDeep,
    /// An object with two members of the same name: keeping either would lose the other.
    DuplicateKey,
}

impl std::fmt::Display for Reject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reject::Syntax(at) => write!(f, "not valid JSON (at byte {at})"),
            Reject::TooDeep => f.write_str("JSON nested too deeply"),
            Reject::DuplicateKey => f.write_str("JSON object with a duplicate member name"),
        }
    }
}

/// A JSON string as written: its quotes, its escapes, its raw UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
}

impl<'a> RawStr<'a> {
    /// The string as written, quotes included.
    pub(crate) fn raw(&self) -> &'a str {
        self.raw
    }

    /// The text between the quotes, escapes as written.
    pub(crate) fn content(&self) -> &'a str {
        self.raw
            .get(1..self.raw.len().saturating_sub(1))
            .unwrap_or("")
    }

    /// Whether the string contains any escape sequence.
    pub(crate) fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// The string's value, decoded; borrowed when it has no escapes.
    pub(crate) fn decoded(&self) -> Cow<'a, str> {
        if self.escaped {
            Cow::Owned(decode(self.content()))
        } else {
            Cow::Borrowed(self.content())
        }
    }

    /// Whether the decoded value is `name`.
    pub(crate) fn is(&self, name: &str) -> bool {
        if self.escaped {
            decode(self.content()) == name
        } else {
            self.content() == name
        }
    }

    /// Whether two strings have the same decoded value.
    pub(crate) fn same_value(&self, other: &RawStr<'_>) -> bool {
        if !self.escaped && !other.escaped {
            self.raw == other.raw
        } else {
            self.decoded() == other.decoded()
        }
    }
}

/// Decodes the escapes of a string's content (validated by the [`Reader`]).
fn decode(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut chars = content.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next() {
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let high = hex4(&mut chars);
                if (0xD800..0xDC00).contains(&high) {
                    // The reader only lets a high surrogate through with its low half after it.
                    chars.next();
                    chars.next();
                    let low = hex4(&mut chars);
                    let code =
                        0x10000 + ((high - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                    char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
                } else {
                    char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER)
                }
            }
            Some(other) => other,
            None => break,
        };
        out.push(decoded);
    }
    out
}

/// Writes a string (validated by the [`Reader`]) with only the escapes JSON requires: `\"`,
/// `\\` and control characters stay escaped (in their short form where they were written so);
/// every other escape (`\/`, `\u00e9`, a surrogate pair) is written as the character itself.
/// The value is the same string; JSON text escaped for ASCII-only transport (Python's
/// `json.dumps` default) costs several times the tokens of the characters it stands for.
pub(crate) fn write_unescaped(string: RawStr<'_>, out: &mut Vec<u8>) {
    if !string.escaped {
        out.extend_from_slice(string.raw.as_bytes());
        return;
    }
    let content = string.content();
    out.push(b'"');
    let mut rest = content;
    while let Some(at) = rest.find('\\') {
        out.extend_from_slice(rest.get(..at).unwrap_or_default().as_bytes());
        let escape = rest.get(at..).unwrap_or_default();
        let len = match escape.as_bytes().get(1) {
            Some(b'u') => {
                let mut chars = escape.get(2..).unwrap_or_default().chars();
                let code = hex4(&mut chars);
                let (code, len) = if (0xD800..0xDC00).contains(&code) {
                    // The reader only lets a high surrogate through with its low half after it.
                    let mut low = escape.get(8..).unwrap_or_default().chars();
                    let low = hex4(&mut low);
                    (
                        0x10000 + ((code - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF),
                        12,
                    )
                } else {
                    (code, 6)
                };
                match char::from_u32(code) {
                    Some('"') => out.extend_from_slice(b"\\\""),
                    Some('\\') => out.extend_from_slice(b"\\\\"),
                    Some(c) if c >= ' ' => {
                        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    // A control character keeps its escape.
                    _ => out.extend_from_slice(escape.get(..len).unwrap_or_default().as_bytes()),
                }
                len
            }
            Some(b'/') => {
                out.push(b'/');
                2
            }
            // \" \\ \b \f \n \r \t: required, and already short.
            _ => {
                out.extend_from_slice(escape.get(..2).unwrap_or_default().as_bytes());
                2
            }
        };
        rest = escape.get(len..).unwrap_or_default();
    }
    out.extend_from_slice(rest.as_bytes());
    out.push(b'"');
}

fn hex4(chars: &mut std::str::Chars<'_>) -> u32 {
    (0..4).fold(0, |acc, _| {
        acc * 16 + chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0)
    })
}

/// Whether two scalars written as JSON (`null`, `true`, a number, a string) are equal as
/// SPEC §2.1 counts it: numbers by their exact text, strings by their decoded value.
pub(crate) fn scalar_eq(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if !(a.starts_with('"') && b.starts_with('"')) || !(a.contains('\\') || b.contains('\\')) {
        return false;
    }
    let a = RawStr {
        raw: a,
        escaped: true,
    };
    let b = RawStr {
        raw: b,
        escaped: true,
    };
    a.decoded() == b.decoded()
}

/// Compares two JSON numbers by value, exactly (no rounding through `f64`): `1` and `1.0` are
/// equal here, `10000000000000000000001` is greater than `10000000000000000000000`.
pub(crate) fn cmp_numbers(a: &str, b: &str) -> Ordering {
    // Integers (the common case) order by sign, then length (JSON integers have no leading
    // zeros), then digits.
    if let (Some((a_negative, a_digits)), Some((b_negative, b_digits))) = (integer(a), integer(b))
        && a_digits != "0"
        && b_digits != "0"
    {
        let magnitude = a_digits
            .len()
            .cmp(&b_digits.len())
            .then_with(|| a_digits.cmp(b_digits));
        return match (a_negative, b_negative) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        };
    }
    let a = Decimal::parse(a);
    let b = Decimal::parse(b);
    match (a.is_zero(), b.is_zero()) {
        (true, true) => return Ordering::Equal,
        (true, false) => {
            return if b.negative {
                Ordering::Greater
            } else {
                Ordering::Less
            };
        }
        (false, true) => {
            return if a.negative {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        (false, false) => {}
    }
    match (a.negative, b.negative) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => a.cmp_magnitude(&b),
        (true, true) => b.cmp_magnitude(&a),
    }
}

/// A JSON integer as its sign (negative) and digits.
fn integer(text: &str) -> Option<(bool, &str)> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then_some((text.starts_with('-'), digits))
}

/// A JSON number as `±0.DIGITS × 10^exponent`, where DIGITS (`int` then `frac`, borrowed from
/// the text) has no leading or trailing zeros.
struct Decimal<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    exponent: i128,
}

impl<'a> Decimal<'a> {
    fn parse(text: &'a str) -> Decimal<'a> {
        let text = text.as_bytes();
        let (negative, text) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        let (mantissa, exp) = match text.iter().position(|&b| b == b'e' || b == b'E') {
            Some(at) => (&text[..at], &text[at + 1..]),
            None => (text, &b""[..]),
        };
        let (mut int, mut frac) = match mantissa.iter().position(|&b| b == b'.') {
            Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
            None => (mantissa, &b""[..]),
        };
        let (exp_negative, exp_digits) = match exp.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, exp),
        };
        // Exponents beyond any real payload saturate; they still order correctly.
        let mut exponent: i128 = 0;
        for d in exp_digits {
            exponent = (exponent * 10 + i128::from(d.wrapping_sub(b'0'))).min(1 << 100);
        }
        if exp_negative {
            exponent = -exponent;
        }
        exponent += int.len() as i128;
        while let Some((b'0', rest)) = int.split_first() {
            int = rest;
            exponent -= 1;
        }
        if int.is_empty() {
            while let Some((b'0', rest)) = frac.split_first() {
                frac = rest;
                exponent -= 1;
            }
        }
        while let Some((b'0', rest)) = frac.split_last() {
            frac = rest;
        }
        if frac.is_empty() {
            while let Some((b'0', rest)) = int.split_last() {
                int = rest;
            }
        }
        Decimal {
            negative,
            int,
            frac,
            exponent,
        }
    }

    fn is_zero(&self) -> bool {
        self.int.is_empty() && self.frac.is_empty()
    }

    fn cmp_magnitude(&self, other: &Decimal<'_>) -> Ordering {
        self.exponent.cmp(&other.exponent).then_with(|| {
            self.int
                .iter()
                .chain(self.frac)
                .cmp(other.int.iter().chain(other.frac))
        })
    }
}

/// The bytes of `word` (little-endian) that end a run of plain string bytes, `"`, `\` or a
/// control character, each marked by its high bit. Eight bytes at a time is what keeps strings
/// cheap to validate. Bytes above a marked byte may be marked spuriously (a borrow carries up),
/// never those below: the lowest mark is exact.
#[inline]
fn string_specials(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    (below_space
        | zero_bytes(word ^ (ONES * b'"' as u64))
        | zero_bytes(word ^ (ONES * b'\\' as u64)))
        & HIGHS
}

/// A validating cursor over JSON text that hands out slices of it.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// The member names of the objects [`Reader::skip_value`] is in, innermost last.
    names: Vec<RawStr<'a>>,
    /// The duplicate-name check of [`Reader::skip_value`].
    distinct: DistinctNames<'a>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            names: Vec::new(),
            distinct: DistinctNames::default(),
        }
    }

    /// The byte offset of the cursor.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The input between two offsets the reader has passed (always on character boundaries).
    pub(crate) fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or("")
    }

    pub(crate) fn error(&self) -> Reject {
        Reject::Syntax(self.pos)
    }

    #[inline]
    pub(crate) fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte, without consuming it.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Consumes one byte (after a [`Reader::peek`]).
    #[inline]
    pub(crate) fn bump(&mut self) {
        self.pos += 1;
    }

    /// Skips whitespace, then consumes `byte` or fails.
    #[inline]
    pub(crate) fn expect(&mut self, byte: u8) -> Result<(), Reject> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// After a member or an element: skips whitespace and consumes `,` (returns true) or
    /// `close` (returns false).
    #[inline]
    pub(crate) fn next_or_close(&mut self, close: u8) -> Result<bool, Reject> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.error()),
        }
    }

    /// After an opening `[` or `{`: skips whitespace and consumes `close` if the container is
    /// empty.
    #[inline]
    pub(crate) fn empty_container(&mut self, close: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Checks that nothing but whitespace is left.
    pub(crate) fn finish(&mut self) -> Result<(), Reject> {
        self.skip_ws();
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Reads a string at the cursor (which must be at its opening quote).
    #[inline]
    pub(crate) fn string(&mut self) -> Result<RawStr<'a>, Reject> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return Err(self.error());
        }
        let bytes = self.bytes;
        let mut pos = start + 1;
        let mut escaped = false;
        loop {
            while let Some(chunk) = bytes.get(pos..pos + 8) {
                let Ok(word) = <[u8; 8]>::try_from(chunk) else {
                    break;
                };
                let specials = string_specials(u64::from_le_bytes(word));
                if specials != 0 {
                    pos += specials.trailing_zeros() as usize / 8;
                    break;
                }
                pos += 8;
            }
            match bytes.get(pos) {
                Some(b'"') => {
                    self.pos = pos + 1;
                    return Ok(RawStr {
                        raw: self.slice(start, self.pos),
                        escaped,
                    });
                }
                Some(b'\\') => {
                    escaped = true;
                    self.pos = pos;
                    self.escape()?;
                    pos = self.pos;
                }
                Some(0..0x20) | None => {
                    self.pos = pos;
                    return Err(self.error());
                }
                // Only within the last eight bytes of the text.
                Some(_) => pos += 1,
            }
        }
    }

    fn escape(&mut self) -> Result<(), Reject> {
        // At the backslash.
        self.pos += 1;
        match self.peek() {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.pos += 1;
                Ok(())
            }
            Some(b'u') => {
                self.pos += 1;
                let code = self.hex4()?;
                match code {
                    0xD800..=0xDBFF => {
                        // A high surrogate stands only with a low one after it.
                        if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                            return Err(self.error());
                        }
                        self.pos += 2;
                        match self.hex4()? {
                            0xDC00..=0xDFFF => Ok(()),
                            _ => Err(self.error()),
                        }
                    }
                    0xDC00..=0xDFFF => Err(self.error()),
                    _ => Ok(()),
                }
            }
            _ => Err(self.error()),
        }
    }

    fn hex4(&mut self) -> Result<u32, Reject> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|b| char::from(b).to_digit(16))
                .ok_or_else(|| self.error())?;
            code = code * 16 + digit;
            self.pos += 1;
        }
        Ok(code)
    }

    /// Reads a number at the cursor, returning it exactly as written.
    pub(crate) fn number(&mut self) -> Result<&'a str, Reject> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error()),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.required_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            self.required_digits()?;
        }
        Ok(self.slice(start, self.pos))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn required_digits(&mut self) -> Result<(), Reject> {
        let start = self.pos;
        self.digits();
        if self.pos == start {
            Err(self.error())
        } else {
            Ok(())
        }
    }

    /// Reads `null`, `true` or `false` at the cursor.
    pub(crate) fn literal(&mut self) -> Result<&'a str, Reject> {
        let word: &[u8] = match self.peek() {
            Some(b'n') => b"null",
            Some(b't') => b"true",
            Some(b'f') => b"false",
            _ => return Err(self.error()),
        };
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            let start = self.pos;
            self.pos += word.len();
            Ok(self.slice(start, self.pos))
        } else {
            Err(self.error())
        }
    }

    /// Reads a scalar (`null`, `true`, `false`, a number or a string) and returns its text as
    /// written; `Ok(None)` when the cursor is at an array or object (nothing consumed).
    #[inline]
    pub(crate) fn scalar(&mut self) -> Result<Option<&'a str>, Reject> {
        match self.peek() {
            Some(b'"') => self.string().map(|s| Some(s.raw())),
            Some(b'n' | b't' | b'f') => self.literal().map(Some),
            Some(b'-' | b'0'..=b'9') => self.number().map(Some),
            Some(b'[' | b'{') => Ok(None),
            _ => Err(self.error()),
        }
    }

    /// Reads any value and returns its text as written (whitespace inside included), checking
    /// it fully: syntax, depth (`depth` is the nesting of the value's container) and duplicate
    /// member names.
    pub(crate) fn skip_value(&mut self, depth: usize) -> Result<&'a str, Reject> {
        let start = self.pos;
        self.skip_nested(depth)?;
        Ok(self.slice(start, self.pos))
    }

    fn skip_nested(&mut self, depth: usize) -> Result<(), Reject> {
        if self.scalar()?.is_some() {
            return Ok(());
        }
        if depth >= MAX_DEPTH {
            return Err(Reject::TooDeep);
        }
        if self.peek() == Some(b'[') {
            self.pos += 1;
            if self.empty_container(b']') {
                return Ok(());
            }
            loop {
                self.skip_nested(depth + 1)?;
                if !self.next_or_close(b']')? {
                    return Ok(());
                }
            }
        }
        self.pos += 1;
        if self.empty_container(b'}') {
            return Ok(());
        }
        let base = self.names.len();
        loop {
            let name = self.string()?;
            self.names.push(name);
            self.expect(b':')?;
            self.skip_ws();
            self.skip_nested(depth + 1)?;
            if !self.next_or_close(b'}')? {
                break;
            }
        }
        if !self
            .distinct
            .check(depth, self.names.get(base..).unwrap_or_default())
        {
            return Err(Reject::DuplicateKey);
        }
        self.names.truncate(base);
        Ok(())
    }
}

/// The duplicate-name check for a reader that meets many objects: per depth, the last list of
/// member names found distinct, so that rows of one shape are checked with one comparison each
/// instead of one per pair of names.
#[derive(Debug, Clone, Default)]
pub(crate) struct DistinctNames<'a> {
    known: Vec<Vec<RawStr<'a>>>,
}

impl<'a> DistinctNames<'a> {
    /// Whether no two of `names` (the members of one object at `depth`) have the same decoded
    /// value.
    pub(crate) fn check(&mut self, depth: usize, names: &[RawStr<'a>]) -> bool {
        if self
            .known
            .get(depth)
            .is_some_and(|known| known.as_slice() == names)
        {
            return true;
        }
        if !all_distinct(names) {
            return false;
        }
        if self.known.len() <= depth {
            self.known.resize_with(depth + 1, Vec::new);
        }
        if let Some(slot) = self.known.get_mut(depth) {
            slot.clear();
            slot.extend_from_slice(names);
        }
        true
    }
}

/// Whether no two member names have the same decoded value.
pub(crate) fn all_distinct(keys: &[RawStr<'_>]) -> bool {
    if keys.len() <= 16 {
        keys.iter()
            .enumerate()
            .all(|(i, a)| keys[i + 1..].iter().all(|b| !a.same_value(b)))
    } else {
        let mut seen: HashSet<Cow<'_, str>, foldhash::fast::RandomState> =
            HashSet::with_capacity_and_hasher(keys.len(), Default::default());
        keys.iter().all(|key| seen.insert(key.decoded()))
    }
}

/// Copies a checked JSON value into `out` without insignificant whitespace.
pub(crate) fn write_compact(value: &str, out: &mut Vec<u8>) {
    let bytes = value.as_bytes();
    let mut i = 0;
    let mut run_start = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => {
                out.extend_from_slice(bytes.get(run_start..i).unwrap_or_default());
                i += 1;
                run_start = i;
            }
            b'"' => {
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    i += 1;
                    match c {
                        b'\\' => i += 1,
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            _ => i += 1,
        }
    }
    out.extend_from_slice(bytes.get(run_start..).unwrap_or_default());
}

/// A JSON value borrowed from its text: scalars as written, members in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    /// `null`, `true`, `false`, a number or a string, exactly as written.
    Scalar(&'a str),
    /// An array's elements in order.
    Array(Vec<Value<'a>>),
    /// An object's members in order.
    Object(Vec<(RawStr<'a>, Value<'a>)>),
}

impl<'a> Value<'a> {
    /// Parses one JSON text, nesting at most `max_depth` deep, with no duplicate member names.
    pub(crate) fn parse(text: &'a str, max_depth: usize) -> Result<Value<'a>, Reject> {
        let mut reader = Reader::new(text);
        reader.skip_ws();
        let value = Value::read(&mut reader, 0, max_depth)?;
        reader.finish()?;
        Ok(value)
    }

    /// Reads the value at the reader's cursor (`depth`: the nesting of its container).
    pub(crate) fn read(
        reader: &mut Reader<'a>,
        depth: usize,
        max_depth: usize,
    ) -> Result<Value<'a>, Reject> {
        if let Some(scalar) = reader.scalar()? {
            return Ok(Value::Scalar(scalar));
        }
        if depth >= max_depth {
            return Err(Reject::TooDeep);
        }
        let array = reader.peek() == Some(b'[');
        reader.bump();
        if array {
            let mut items = Vec::new();
            if !reader.empty_container(b']') {
                loop {
                    items.push(Value::read(reader, depth + 1, max_depth)?);
                    if !reader.next_or_close(b']')? {
                        break;
                    }
                }
            }
            return Ok(Value::Array(items));
        }
        let mut members = Vec::new();
        if !reader.empty_container(b'}') {
            loop {
                let key = reader.string()?;
                reader.expect(b':')?;
                reader.skip_ws();
                members.push((key, Value::read(reader, depth + 1, max_depth)?));
                if !reader.next_or_close(b'}')? {
                    break;
                }
            }
        }
        let keys: Vec<RawStr<'a>> = members.iter().map(|(key, _)| *key).collect();
        if !all_distinct(&keys) {
            return Err(Reject::DuplicateKey);
        }
        Ok(Value::Object(members))
    }

    /// The value of member `name`, when this is an object that has it.
    pub(crate) fn member(&self, name: &str) -> Option<&Value<'a>> {
        match self {
            Value::Object(members) => members
                .iter()
                .find(|(key, _)| key.is(name))
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// Writes the value compactly.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        match self {
            Value::Scalar(text) => out.extend_from_slice(text.as_bytes()),
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write(out);
                }
                out.push(b']');
            }
            Value::Object(members) => {
                out.push(b'{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(key.raw().as_bytes());
                    out.push(b':');
                    value.write(out);
                }
                out.push(b'}');
            }
        }
    }
}

/// The text of what a codec wrote: always UTF-8, since every byte came from `&str` slices
/// cut at character boundaries or from ASCII.
pub(crate) fn into_text(out: Vec<u8>) -> Option<String> {
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_accepts_and_refuses_like_the_json_grammar() {
        let cases: &[(&str, bool)] = &[
            ("0", true),
            ("-0", true),
            ("-0.0e+00", true),
            ("123456789012345678901", true),
            ("0.100000000000000000000000000001", true),
            ("1E400", true),
            (r#""a\"b\\c\/\b\f\n\r\t\u00e9\ud83d\ude00""#, true),
            (r#"{"a":[1,{"b":null}],"c":true}"#, true),
            (" [ ] ", true),
            ("01", false),
            ("1.", false),
            (".5", false),
            ("1e", false),
            ("+1", false),
            ("-", false),
            ("nul", false),
            ("[1,]", false),
            ("{\"a\":1,}", false),
            ("{\"a\" 1}", false),
            ("[1 2]", false),
            ("\"tab\there\"", false),
            (r#""\x""#, false),
            (r#""\ud800""#, false),
            (r#""\udc00""#, false),
            (r#""\ud800\u0041""#, false),
            ("\"unterminated", false),
            ("", false),
            ("1 2", false),
            ("[", false),
        ];
        for &(text, valid) in cases {
            assert_eq!(Value::parse(text, MAX_DEPTH).is_ok(), valid, "{text:?}");
            let mut reader = Reader::new(text);
            reader.skip_ws();
            let skipped = reader.skip_value(0).and_then(|_| reader.finish());
            assert_eq!(skipped.is_ok(), valid, "skip {text:?}");
        }
    }

    #[test]
    fn string_scan_finds_every_special_byte_at_every_offset() {
        // (inserted text, whether the string is still valid, whether it has an escape)
        let specials = [
            ("\\n", true, true),
            ("\\u00e9", true, true),
            ("\\ud83d\\ude00", true, true),
            ("\\q", false, true),
            ("\u{1}", false, false),
            ("\u{1f}", false, false),
            ("\t", false, false),
            (" ", true, false),
            ("é😀\u{7f}", true, false),
        ];
        for len in 0..20 {
            for at in 0..=len {
                for (special, valid, escaped) in specials {
                    let content = format!("{}{special}{}", "a".repeat(at), "b".repeat(len - at));
                    for tail in ["", "  ,1"] {
                        let text = format!("\"{content}\"{tail}");
                        let mut reader = Reader::new(&text);
                        let read = reader.string();
                        assert_eq!(read.is_ok(), valid, "{text:?}");
                        if let Ok(string) = read {
                            assert_eq!(string.content(), content, "{text:?}");
                            assert_eq!(string.is_escaped(), escaped, "{text:?}");
                            assert_eq!(reader.pos(), content.len() + 2);
                        }
                    }
                }
                let cut = format!("\"{}", "a".repeat(len));
                assert!(Reader::new(&cut).string().is_err(), "{cut:?}");
            }
        }
    }

    #[test]
    fn duplicate_member_names_are_refused_by_decoded_value() {
        let cases = [
            (r#"{"a":1,"a":2}"#, true),
            (r#"{"a":1,"\u0061":2}"#, true),
            (r#"{"a":1,"b":{"c":1,"c":null}}"#, true),
            (r#"{"a":1,"A":2}"#, false),
        ];
        for (text, duplicate) in cases {
            let parsed = Value::parse(text, MAX_DEPTH);
            assert_eq!(parsed == Err(Reject::DuplicateKey), duplicate, "{text}");
        }
        let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 39)).collect();
        let text = format!("{{{}}}", many.join(","));
        assert_eq!(Value::parse(&text, MAX_DEPTH), Err(Reject::DuplicateKey));
    }

    #[test]
    fn depth_limit_refuses_deeper_nesting() {
        let ok = format!("{}{}", "[".repeat(10), "]".repeat(10));
        let deep = format!("{}{}", "[".repeat(11), "]".repeat(11));
        assert!(Value::parse(&ok, 10).is_ok());
        assert_eq!(Value::parse(&deep, 10), Err(Reject::TooDeep));
    }

    #[test]
    fn strings_decode_escapes_and_surrogate_pairs() {
        let mut reader = Reader::new(r#""a\n\u00e9\ud83d\ude00\/""#);
        let s = reader.string().unwrap();
        assert!(s.is_escaped());
        assert_eq!(s.decoded(), "a\né😀/");
        assert!(scalar_eq(r#""\u0041""#, r#""A""#));
        assert!(!scalar_eq("1", "1.0"));
        assert!(!scalar_eq("1", "true"));
    }

    #[test]
    fn write_compact_drops_whitespace_outside_strings_only() {
        let mut out = Vec::new();
        write_compact("{ \"a b\" : [ 1 , \"\\\" x \" ] }", &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"a b":[1,"\" x "]}"#);
    }

    #[test]
    fn numbers_compare_exactly() {
        let cases = [
            ("1", "1.0", Ordering::Equal),
            ("0", "-0.0", Ordering::Equal),
            ("10", "1e1", Ordering::Equal),
            ("-1", "0", Ordering::Less),
            ("-2", "-1", Ordering::Less),
            ("0.5", "5e-1", Ordering::Equal),
            (
                "123456789012345678901",
                "123456789012345678900",
                Ordering::Greater,
            ),
            ("0.100000000000000000000000000001", "0.1", Ordering::Greater),
            ("1E400", "9e399", Ordering::Greater),
            ("0.001", "0.01", Ordering::Less),
        ];
        for (a, b, expected) in cases {
            assert_eq!(cmp_numbers(a, b), expected, "{a} vs {b}");
            assert_eq!(cmp_numbers(b, a), expected.reverse(), "{b} vs {a}");
        }
    }
}
