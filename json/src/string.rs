//! JSON strings: as written ([`RawStr`], [`Str`]), decoded on demand, and written back with the
//! escapes JSON requires.

use std::borrow::Cow;
use std::ops::Range;

use crate::scan::string_stop;
use crate::write::Output;

/// A JSON string as the [`Reader`](crate::Reader) found it: its quotes, its escapes, its raw UTF-8.
///
/// Copying one copies a reference. Its value is decoded only when asked for, and is borrowed
/// from the text when the string holds no escape.
///
/// # Examples
///
/// ```
/// use parrot_json::Reader;
///
/// let string = Reader::new(r#""caf\u00e9""#).string().unwrap();
/// assert_eq!(string.raw(), r#""caf\u00e9""#);
/// assert_eq!(string.content(), r#"caf\u00e9"#);
/// assert!(string.is_escaped());
/// assert_eq!(string.decoded(), "café");
/// assert!(string.is("café"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
}

/// Equal as written (the same bytes between the same quotes), not by decoded value (that is
/// [`RawStr::same_value`]). Member names are compared this way once per object by
/// [`crate::DistinctNames`], so short ones are compared without a call
/// ([`crate::same_bytes`]).
impl PartialEq for RawStr<'_> {
    #[inline]
    fn eq(&self, other: &RawStr<'_>) -> bool {
        self.escaped == other.escaped
            && crate::same_bytes(self.raw.as_bytes(), other.raw.as_bytes())
    }
}

impl Eq for RawStr<'_> {}

impl<'a> RawStr<'a> {
    /// A string the reader checked: `raw` with its quotes, `escaped` when it holds a `\`.
    #[inline]
    pub(crate) fn new(raw: &'a str, escaped: bool) -> RawStr<'a> {
        RawStr { raw, escaped }
    }

    /// The string as written, quotes included.
    #[inline]
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// The text between the quotes, escapes as written.
    #[inline]
    pub fn content(&self) -> &'a str {
        self.raw
            .get(1..self.raw.len().saturating_sub(1))
            .unwrap_or("")
    }

    /// Whether the string contains any escape sequence.
    #[inline]
    pub fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// The string's value, decoded; borrowed when it has no escapes.
    #[inline]
    pub fn decoded(&self) -> Cow<'a, str> {
        self.text().decoded()
    }

    /// The characters of the string's value, decoded one by one (nothing allocated).
    #[inline]
    pub fn chars(&self) -> Decoded<'a> {
        self.text().chars()
    }

    /// The characters of the string as written, one by one: each one's byte range in
    /// [`RawStr::content`] (a character, or the escape or surrogate pair of escapes that stands
    /// for it) and the character it is.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_json::Reader;
    ///
    /// let string = Reader::new(r#""é\n\ud83d\ude00""#).string().unwrap();
    /// let written: Vec<_> = string.written_chars().collect();
    /// assert_eq!(written, [(0..2, 'é'), (2..4, '\n'), (4..16, '😀')]);
    /// ```
    #[inline]
    pub fn written_chars(&self) -> WrittenChars<'a> {
        self.text().written_chars()
    }

    /// Whether the decoded value is `name`.
    #[inline]
    pub fn is(&self, name: &str) -> bool {
        self.text().is(name)
    }

    /// Whether two strings have the same decoded value.
    #[inline]
    pub fn same_value(&self, other: &RawStr<'_>) -> bool {
        self.text().same_value(other.text())
    }

    #[inline]
    fn text(&self) -> Text<'a> {
        Text {
            content: self.content(),
            escaped: self.escaped,
        }
    }
}

/// The text between a string's quotes and whether it holds an escape: what [`RawStr`] and
/// [`Str`] decode and compare.
#[derive(Clone, Copy)]
struct Text<'a> {
    content: &'a str,
    escaped: bool,
}

impl<'a> Text<'a> {
    #[inline]
    fn decoded(self) -> Cow<'a, str> {
        if self.escaped {
            Cow::Owned(decode_escapes(self.content))
        } else {
            Cow::Borrowed(self.content)
        }
    }

    #[inline]
    fn chars(self) -> Decoded<'a> {
        Decoded(self.written_chars())
    }

    #[inline]
    fn written_chars(self) -> WrittenChars<'a> {
        WrittenChars {
            content: self.content,
            pos: 0,
        }
    }

    #[inline]
    fn is(self, name: &str) -> bool {
        if self.escaped {
            self.chars().eq(name.chars())
        } else {
            self.content == name
        }
    }

    #[inline]
    fn same_value(self, other: Text<'_>) -> bool {
        self.content == other.content
            || ((self.escaped || other.escaped) && self.chars().eq(other.chars()))
    }
}

/// The decoded characters of a string ([`RawStr::chars`]).
#[derive(Debug, Clone)]
pub struct Decoded<'a>(WrittenChars<'a>);

impl Iterator for Decoded<'_> {
    type Item = char;

    #[inline]
    fn next(&mut self) -> Option<char> {
        self.0.next().map(|(_, c)| c)
    }
}

/// The characters of a string as written, with their byte ranges ([`RawStr::written_chars`]).
#[derive(Debug, Clone)]
pub struct WrittenChars<'a> {
    content: &'a str,
    pos: usize,
}

impl Iterator for WrittenChars<'_> {
    type Item = (Range<usize>, char);

    fn next(&mut self) -> Option<(Range<usize>, char)> {
        let start = self.pos;
        let mut chars = self.content.get(start..)?.chars();
        let c = chars.next()?;
        let (c, len) = if c != '\\' {
            (c, c.len_utf8())
        } else {
            match chars.next() {
                Some('b') => ('\u{8}', 2),
                Some('f') => ('\u{c}', 2),
                Some('n') => ('\n', 2),
                Some('r') => ('\r', 2),
                Some('t') => ('\t', 2),
                Some('u') => {
                    let high = hex4(&mut chars);
                    if (0xD800..0xDC00).contains(&high) {
                        // The reader only lets a high surrogate through with its low half
                        // after it.
                        chars.next();
                        chars.next();
                        let low = hex4(&mut chars);
                        let code =
                            0x10000 + ((high - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                        (
                            char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
                            12,
                        )
                    } else {
                        (
                            char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER),
                            6,
                        )
                    }
                }
                Some(other) => (other, 2),
                None => return None,
            }
        };
        self.pos = (start + len).min(self.content.len());
        Some((start..self.pos, c))
    }
}

/// The value of `content`, the text between a string's quotes: the same characters as
/// [`WrittenChars`] gives, in a few copies rather than one push per character. Each run
/// between backslashes is copied whole, and each escape the reader lets through is decoded in
/// place; anything else (text the reader would have refused) is left to [`WrittenChars`] from
/// that escape on, so the value is the same for every text.
fn decode_escapes(content: &str) -> String {
    let mut value = String::with_capacity(content.len());
    let mut from = 0;
    while let Some(at) = next_backslash(content.get(from..).unwrap_or_default()) {
        let at = from + at;
        value.push_str(content.get(from..at).unwrap_or_default());
        let Some((c, len)) = checked_escape(content.as_bytes().get(at..).unwrap_or_default())
        else {
            value.extend(WrittenChars { content, pos: at }.map(|(_, c)| c));
            return value;
        };
        value.push(c);
        from = at + len;
    }
    value.push_str(content.get(from..).unwrap_or_default());
    value
}

/// Where the first backslash of `text` is. [`string_stop`]'s scan, inlined and eight bytes at
/// a time, costs less than `str::find` when escapes are a few dozen bytes apart (a readme's
/// `\n`); the quotes and control characters it also stops at are passed over (text the reader
/// checked has none).
#[inline]
fn next_backslash(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        at = string_stop(bytes, at);
        if *bytes.get(at)? == b'\\' {
            return Some(at);
        }
        at += 1;
    }
}

/// The character that the escape at the start of `escape` stands for and the escape's length
/// in bytes, for the escapes the reader lets through (a lone surrogate, a bad hex digit or an
/// unknown letter give `None`).
#[inline]
fn checked_escape(escape: &[u8]) -> Option<(char, usize)> {
    let c = match *escape.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let high = checked_hex4(escape.get(2..6)?)?;
            if !(0xD800..0xE000).contains(&high) {
                return Some((char::from_u32(high)?, 6));
            }
            if high >= 0xDC00 || escape.get(6..8)? != b"\\u" {
                return None;
            }
            let low = checked_hex4(escape.get(8..12)?)?;
            if !(0xDC00..0xE000).contains(&low) {
                return None;
            }
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            return Some((char::from_u32(code)?, 12));
        }
        _ => return None,
    };
    Some((c, 2))
}

/// The number four hex digits write, when all four are hex digits.
#[inline]
fn checked_hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0, |acc, &digit| {
        Some(acc * 16 + char::from(digit).to_digit(16)?)
    })
}

fn hex4(chars: &mut std::str::Chars<'_>) -> u32 {
    (0..4).fold(0, |acc, _| {
        acc * 16 + chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0)
    })
}

/// A string of a [`crate::Value`]: the text between its quotes as JSON writes it (escapes
/// and all), borrowed from the text it was read from, or from the value a string was built
/// from ([`Str::new`]) when that needs no escape. Decoded on demand, like [`RawStr`].
///
/// `==` compares the text as written; [`Str::same_value`] compares values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Str<'a> {
    content: Cow<'a, str>,
    escaped: bool,
}

impl<'a> Str<'a> {
    /// The string whose value is `value`, with the escapes JSON requires ([`write_string`]);
    /// `value` itself, borrowed or owned, when it needs none.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_json::Str;
    ///
    /// let string = Str::new("say \"hi\"\n");
    /// assert_eq!(string.content(), r#"say \"hi\"\n"#);
    /// assert_eq!(string.decoded(), "say \"hi\"\n");
    /// assert!(!Str::new("plain").is_escaped());
    /// ```
    pub fn new(value: impl Into<Cow<'a, str>>) -> Str<'a> {
        let value = value.into();
        if string_stop(value.as_bytes(), 0) == value.len() {
            return Str {
                content: value,
                escaped: false,
            };
        }
        let mut quoted = String::with_capacity(value.len() + 8);
        write_string(&value, &mut quoted);
        quoted.pop();
        quoted.remove(0);
        Str {
            content: Cow::Owned(quoted),
            escaped: true,
        }
    }

    /// The text between the quotes, escapes as written.
    #[inline]
    pub fn content(&self) -> &str {
        &self.content
    }

    /// Whether the string contains any escape sequence.
    #[inline]
    pub fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// The string's value, decoded; borrowed when it has no escapes.
    #[inline]
    pub fn decoded(&self) -> Cow<'_, str> {
        self.text().decoded()
    }

    /// Whether the decoded value is `name`.
    #[inline]
    pub fn is(&self, name: &str) -> bool {
        self.text().is(name)
    }

    /// Whether two strings have the same decoded value.
    #[inline]
    pub fn same_value(&self, other: &Str<'_>) -> bool {
        self.text().same_value(other.text())
    }

    #[inline]
    fn text(&self) -> Text<'_> {
        Text {
            content: &self.content,
            escaped: self.escaped,
        }
    }

    /// Writes the string as JSON, quotes included.
    pub fn write<O: Output + ?Sized>(&self, out: &mut O) {
        out.push_ascii(b'"');
        out.push_str(&self.content);
        out.push_ascii(b'"');
    }

    /// Writes the string as JSON without the escapes JSON does not require, in one pass, as
    /// [`write_unescaped`] writes a [`RawStr`].
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_json::Value;
    ///
    /// let Value::String(string) = Value::parse(r#""caf\u00e9 \/ \"x\"""#).unwrap() else {
    ///     unreachable!()
    /// };
    /// let mut out = String::new();
    /// string.write_unescaped(&mut out);
    /// assert_eq!(out, r#""café / \"x\"""#);
    /// ```
    pub fn write_unescaped<O: Output + ?Sized>(&self, out: &mut O) {
        if self.escaped {
            write_unescaped_escapes(&self.content, out);
        } else {
            self.write(out);
        }
    }
}

impl<'a> From<RawStr<'a>> for Str<'a> {
    #[inline]
    fn from(string: RawStr<'a>) -> Str<'a> {
        Str {
            content: Cow::Borrowed(string.content()),
            escaped: string.escaped,
        }
    }
}

/// Writes `value` as a JSON string: `"` and `\` escaped, the control characters as `\b`, `\f`,
/// `\n`, `\r`, `\t` or `\u00XX` (lower-case hex), everything else as it is. The same text as
/// JavaScript's `JSON.stringify` and serde_json write.
///
/// # Examples
///
/// ```
/// let mut out = String::new();
/// parrot_json::write_string("tab\there \"é\"\u{1}", &mut out);
/// assert_eq!(out, r#""tab\there \"é\"\u0001""#);
/// ```
pub fn write_string<O: Output + ?Sized>(value: &str, out: &mut O) {
    out.push_ascii(b'"');
    let bytes = value.as_bytes();
    let mut from = 0;
    loop {
        // Every byte that needs an escape is ASCII, so `at` is a character boundary.
        let at = string_stop(bytes, from);
        out.push_str(value.get(from..at).unwrap_or_default());
        let Some(&byte) = bytes.get(at) else {
            break;
        };
        match byte {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            control => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push_ascii(HEX[usize::from(control >> 4)]);
                out.push_ascii(HEX[usize::from(control & 0xf)]);
            }
        }
        from = at + 1;
    }
    out.push_ascii(b'"');
}

/// [`write_string`] into a new `String`.
///
/// # Examples
///
/// ```
/// assert_eq!(parrot_json::encode_string("a\"b"), r#""a\"b""#);
/// ```
pub fn encode_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    write_string(value, &mut out);
    out
}

/// Writes a string (checked by the [`Reader`](crate::Reader)) with only the escapes JSON requires: `\"`,
/// `\\` and control characters stay escaped (in their short form where they were written so);
/// every other escape (`\/`, `\u00e9`, a surrogate pair) is written as the character itself.
/// The value is the same string; JSON text escaped for ASCII-only transport (Python's
/// `json.dumps` default) costs several times the tokens of the characters it stands for.
///
/// # Examples
///
/// ```
/// use parrot_json::{Reader, write_unescaped};
///
/// let string = Reader::new(r#""caf\u00e9 \/ \"\u0001""#).string().unwrap();
/// let mut out = Vec::new();
/// write_unescaped(string, &mut out);
/// assert_eq!(String::from_utf8(out).unwrap(), r#""café / \"\u0001""#);
/// ```
#[inline]
pub fn write_unescaped<O: Output + ?Sized>(string: RawStr<'_>, out: &mut O) {
    if !string.escaped {
        out.push_str(string.raw);
        return;
    }
    write_unescaped_escapes(string.content(), out);
}

fn write_unescaped_escapes<O: Output + ?Sized>(content: &str, out: &mut O) {
    out.push_ascii(b'"');
    let bytes = content.as_bytes();
    // The run of bytes not yet written starts at `from`; `at` looks for the next escape. A
    // string's text holds no quote and no control character, so the scan stops at escapes
    // only; every escape is ASCII, so each stop is a character boundary.
    let mut from = 0;
    let mut at = string_stop(bytes, 0);
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            // Not in a string the reader read, but a text may have been given by hand: a quote
            // or a control character is kept as it is.
            at = string_stop(bytes, at + 1);
            continue;
        }
        out.push_str(content.get(from..at).unwrap_or_default());
        let escape = bytes.get(at..).unwrap_or_default();
        let len = match escape.get(1) {
            Some(b'u') => {
                let code = hex4_bytes(escape.get(2..6));
                let (code, len) = if (0xD800..0xDC00).contains(&code) {
                    // The reader only lets a high surrogate through with its low half after it.
                    let low = hex4_bytes(escape.get(8..12));
                    (
                        0x10000 + ((code - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF),
                        12,
                    )
                } else {
                    (code, 6)
                };
                match char::from_u32(code) {
                    Some('"') => out.push_str("\\\""),
                    Some('\\') => out.push_str("\\\\"),
                    Some(c) if c >= ' ' => out.push_str(c.encode_utf8(&mut [0; 4])),
                    // A control character keeps its escape.
                    _ => out.push_str(content.get(at..at + len).unwrap_or_default()),
                }
                len
            }
            Some(b'/') => {
                out.push_ascii(b'/');
                2
            }
            // \" \\ \b \f \n \r \t: required, and already short.
            _ => {
                out.push_str(content.get(at..at + 2).unwrap_or_default());
                2
            }
        };
        from = at + len;
        at = string_stop(bytes, from);
    }
    out.push_str(content.get(from..).unwrap_or_default());
    out.push_ascii(b'"');
}

/// The number four hex digits write (a digit that is none counts as 0: the reader checked
/// them).
#[inline]
fn hex4_bytes(digits: Option<&[u8]>) -> u32 {
    digits.unwrap_or_default().iter().fold(0, |acc, &digit| {
        acc * 16 + char::from(digit).to_digit(16).unwrap_or(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Reader, decode_string};

    /// `count` texts of up to `most` pieces each, drawn from `pieces` by a seeded stream (the
    /// same texts on every run).
    fn pieced<'p>(
        pieces: &'p [&'p str],
        seed: u64,
        count: usize,
        most: usize,
    ) -> impl Iterator<Item = String> + 'p {
        let mut state = seed;
        (0..count).map(move |_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (state >> 40) as usize % (most + 1);
            (0..len)
                .map(|i| pieces[(state >> (i * 3 % 40)) as usize % pieces.len()])
                .collect()
        })
    }

    #[test]
    fn strings_decode_escapes_and_surrogate_pairs() {
        let cases = [
            (r#""plain""#, "plain", true),
            (r#""a\n\u00e9\ud83d\ude00\/""#, "a\né😀/", true),
            (r#""\"\\\b\f\r\t""#, "\"\\\u{8}\u{c}\r\t", true),
            (r#""\u0041\u00""#, "", false),
        ];
        for (raw, value, valid) in cases {
            let read = Reader::new(raw).string();
            assert_eq!(read.is_ok(), valid, "{raw}");
            let Ok(string) = read else { continue };
            assert_eq!(string.decoded(), value, "{raw}");
            assert!(string.chars().eq(value.chars()), "{raw}");
            assert!(string.is(value), "{raw}");
            assert!(!string.is("other"), "{raw}");
            assert_eq!(decode_string(raw).unwrap(), value, "{raw}");
        }
        assert!(decode_string(r#" "a" "#).is_err());
        assert!(decode_string(r#""a"b"#).is_err());
    }

    /// The decoder that copies runs between escapes gives what decoding character by character
    /// gives, for strings the reader accepts (and then what serde_json reads) and for any other
    /// text between quotes: bad escapes, lone surrogates, a backslash at the end, a raw quote or
    /// control character.
    #[test]
    fn decoding_by_runs_gives_what_decoding_by_chars_gives() {
        const PIECES: [&str; 36] = [
            "a",
            // Raw, as no string the reader accepts holds them.
            "\"",
            "\u{1}",
            "plain run of text",
            " ",
            "é",
            "😀",
            "日本",
            "\u{7f}",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\n",
            "\\r",
            "\\t",
            "\\u0000",
            "\\u001f",
            "\\u0041",
            "\\u00e9",
            "\\u00E9",
            "\\u2028",
            "\\uffff",
            "\\ud83d\\ude00",
            "\\uD83D\\uDE00",
            "\\udbff\\udfff",
            "\\ud800",
            "\\udc00",
            "\\ud800\\u0041",
            "\\u12",
            "\\u12g4",
            "\\q",
            "\\é",
            "\\u00é",
            "\\",
        ];
        let mut accepted = 0;
        for content in pieced(&PIECES, 11, 50_000, 15) {
            let text = Text {
                content: &content,
                escaped: true,
            };
            let by_chars: String = text.chars().collect();
            assert_eq!(text.decoded(), by_chars, "for {content:?}");
            let raw = format!("\"{content}\"");
            if let Ok(decoded) = decode_string(&raw) {
                accepted += 1;
                let expected: String = serde_json::from_str(&raw).unwrap();
                assert_eq!(decoded, expected, "for {raw}");
            }
        }
        assert!(accepted > 5_000, "{accepted} strings the reader accepted");
    }

    /// What decoding and [`write_unescaped`] find their escapes with: the first backslash, as
    /// `str::find` finds it, whatever else the text holds.
    #[test]
    fn the_next_backslash_is_the_first_one() {
        let pieces = [
            "a",
            "é",
            "😀",
            "\\",
            "\"",
            "\n",
            "\u{1}",
            "\u{7f}",
            "long plain run",
        ];
        for text in pieced(&pieces, 13, 20_000, 31) {
            assert_eq!(next_backslash(&text), text.find('\\'), "for {text:?}");
        }
    }

    #[test]
    fn values_compare_decoded() {
        let read = |raw: &'static str| Reader::new(raw).string().unwrap();
        let cases = [
            (r#""A""#, r#""\u0041""#, true),
            (r#""\u0041""#, r#""\u0041""#, true),
            (r#""\u0041""#, r#""B""#, false),
            (r#""é""#, r#""\u00e9""#, true),
            (r#""😀""#, r#""\ud83d\ude00""#, true),
            (r#""ab""#, r#""a\u0062c""#, false),
            (r#""a""#, r#""b""#, false),
        ];
        for (a, b, same) in cases {
            assert_eq!(read(a).same_value(&read(b)), same, "{a} vs {b}");
            assert_eq!(read(b).same_value(&read(a)), same, "{b} vs {a}");
            assert_eq!(Str::from(read(a)).same_value(&Str::from(read(b))), same);
        }
    }

    #[test]
    fn strings_are_written_with_the_escapes_they_need() {
        let cases = [
            ("plain", r#""plain""#),
            ("", r#""""#),
            ("q\"b\\s/", r#""q\"b\\s/""#),
            (
                "l\nr\rt\tb\u{8}f\u{c}\u{1}\u{1f}\u{7f}",
                "\"l\\nr\\rt\\tb\\bf\\f\\u0001\\u001f\u{7f}\"",
            ),
            (
                "é😀 long enough for eight bytes at a time\n",
                r#""é😀 long enough for eight bytes at a time\n""#,
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(encode_string(value), expected);
            let mut bytes = Vec::new();
            write_string(value, &mut bytes);
            assert_eq!(bytes, expected.as_bytes());
            let string = Str::new(value);
            let mut written = String::new();
            string.write(&mut written);
            assert_eq!(written, expected);
            assert_eq!(string.decoded(), value);
            assert_eq!(string.is_escaped(), expected.contains('\\'));
            assert_eq!(decode_string(expected).unwrap(), value);
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut values: Vec<String> = (0..0x80u8).map(|b| char::from(b).to_string()).collect();
        values.extend(["é😀\u{2028}\u{feff}".to_owned(), String::new()]);
        let mut state = 5u64;
        for _ in 0..2000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (state >> 60) as usize + 1;
            let value: String = (0..len)
                .map(|i| {
                    char::from(
                        ((state >> (i * 4)) & 0x3f) as u8 + if i % 3 == 0 { 0 } else { 0x20 },
                    )
                })
                .collect();
            values.push(value);
        }
        for value in values {
            assert_eq!(
                encode_string(&value),
                serde_json::to_string(&value).unwrap(),
                "{value:?}"
            );
        }
    }

    #[test]
    fn write_unescaped_keeps_only_the_required_escapes() {
        let cases = [
            (r#""plain""#, r#""plain""#),
            (r#""caf\u00e9\/""#, r#""café/""#),
            (r#""\ud83d\ude00""#, r#""😀""#),
            (r#""\u0022\u005c""#, r#""\"\\""#),
            (r#""\b\f\n\r\t\"\\""#, r#""\b\f\n\r\t\"\\""#),
            (r#""\u0001\u001F""#, r#""\u0001\u001F""#),
        ];
        for (raw, expected) in cases {
            let mut out = String::new();
            write_unescaped(Reader::new(raw).string().unwrap(), &mut out);
            assert_eq!(out, expected, "{raw}");
        }
    }

    /// The writer that copies runs between escapes writes what the one that went escape by
    /// escape through `str::find` and `chars` wrote, on generated strings the reader accepts.
    #[test]
    fn unescaped_writing_by_runs_matches_writing_escape_by_escape() {
        fn by_escapes(content: &str) -> String {
            let mut out = String::from("\"");
            let mut rest = content;
            while let Some(at) = rest.find('\\') {
                out.push_str(&rest[..at]);
                let escape = &rest[at..];
                let len = match escape.as_bytes().get(1) {
                    Some(b'u') => {
                        let code = u32::from_str_radix(&escape[2..6], 16).unwrap();
                        let (code, len) = if (0xD800..0xDC00).contains(&code) {
                            let low = u32::from_str_radix(&escape[8..12], 16).unwrap();
                            (0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), 12)
                        } else {
                            (code, 6)
                        };
                        match char::from_u32(code) {
                            Some('"') => out.push_str("\\\""),
                            Some('\\') => out.push_str("\\\\"),
                            Some(c) if c >= ' ' => out.push(c),
                            _ => out.push_str(&escape[..len]),
                        }
                        len
                    }
                    Some(b'/') => {
                        out.push('/');
                        2
                    }
                    _ => {
                        out.push_str(&escape[..2]);
                        2
                    }
                };
                rest = &escape[len..];
            }
            out.push_str(rest);
            out.push('"');
            out
        }
        const PIECES: [&str; 18] = [
            "a",
            "plain run of text ",
            "é",
            "😀",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\n",
            "\\t",
            "\\u0000",
            "\\u001f",
            "\\u0022",
            "\\u005c",
            "\\u00e9",
            "\\u0623",
            "\\ud83d\\ude00",
            "\\uD83D\\uDE00",
        ];
        for content in pieced(&PIECES, 17, 20_000, 15) {
            let raw = format!("\"{content}\"");
            let string = Reader::new(&raw).string().unwrap();
            let mut out = String::new();
            write_unescaped(string, &mut out);
            assert_eq!(out, by_escapes(string.content()), "{raw}");
        }
    }
}
