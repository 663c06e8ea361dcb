//! A small JSON reader and compact writer that keep every number exactly as written.
//!
//! The reader builds a [`Value`] tree that borrows from the input: a number is its text (`1`,
//! `1.0`, `1E5` and a 30-digit integer are just text here), a string without escapes is a slice.
//! That is what lets the TOON written from it carry each number byte-exact. The streaming
//! encoder ([`crate::stream`]) reads with the same [`Reader`] without building a tree, taking
//! strings raw ([`Reader::raw_string`]) and decoding only those that hold an escape.

use std::borrow::Cow;

/// How deeply arrays and objects may nest before a text is refused (the host's own reader
/// refuses shallower JSON, so nothing it hands over is refused here).
pub(crate) const MAX_DEPTH: usize = 256;

/// A JSON value. Object members keep their order; strings are decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    /// The number's text, exactly as written.
    Number(Cow<'a, str>),
    String(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl Value<'_> {
    /// Whether the value is neither an array nor an object.
    pub(crate) fn is_primitive(&self) -> bool {
        !matches!(self, Value::Array(_) | Value::Object(_))
    }

    /// Equality as the contract counts it: numbers by their text, strings by their decoded
    /// value, object members in any order.
    pub(crate) fn same(&self, other: &Value<'_>) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) | (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.same(b))
            }
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, value)| {
                        b.iter()
                            .find(|(other, _)| other == key)
                            .is_some_and(|(_, other)| value.same(other))
                    })
            }
            _ => false,
        }
    }
}

/// The member `name` of an object's `members`, looked for first at `index` (the rows of a
/// table usually share one member order, so this is one comparison per cell).
pub(crate) fn member<'v, 'a>(
    members: &'v [(Cow<'a, str>, Value<'a>)],
    index: usize,
    name: &str,
) -> Option<&'v Value<'a>> {
    match members.get(index) {
        Some((key, value)) if key == name => Some(value),
        _ => members
            .iter()
            .find_map(|(key, value)| (key == name).then_some(value)),
    }
}

/// Reads one JSON text. `None` when it is not JSON, nests deeper than [`MAX_DEPTH`], or has an
/// object with two members of one name (keeping either would lose the other).
pub(crate) fn parse(text: &str) -> Option<Value<'_>> {
    let mut reader = Reader::new(text);
    let value = reader.value(0)?;
    reader.skip_ws();
    (reader.pos == text.len()).then_some(value)
}

/// Reads a text that must be one JSON string, and returns its value.
#[cfg(test)]
pub(crate) fn parse_string(text: &str) -> Option<Cow<'_, str>> {
    let mut reader = Reader::new(text);
    reader.skip_ws();
    let value = reader.string()?;
    reader.skip_ws();
    (reader.pos == text.len()).then_some(value)
}

/// Decodes a string that [`Reader::raw_string`] accepted (quotes included).
pub(crate) fn decode_raw(quoted: &str) -> Option<Cow<'_, str>> {
    Reader::new(quoted).string()
}

/// A JSON reader over `text`; [`parse`] builds a tree with it, the streaming encoder
/// ([`crate::stream`]) reads tokens with it and keeps strings raw.
pub(crate) struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str) -> Reader<'a> {
        Reader { text, pos: 0 }
    }

    /// A reader of `text` from the byte offset `pos` (one [`Reader::position`] returned).
    pub(crate) fn at(text: &'a str, pos: usize) -> Reader<'a> {
        Reader { text, pos }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Moves past `len` bytes already read once (the caller knows what they hold).
    pub(crate) fn skip(&mut self, len: usize) {
        self.pos += len;
    }

    /// Moves past `expected` when the text goes on with it.
    pub(crate) fn eat_str(&mut self, expected: &str) -> bool {
        // Names are short: a loop beats a call to memcmp.
        let found = self
            .text
            .as_bytes()
            .get(self.pos..self.pos + expected.len())
            .is_some_and(|bytes| bytes.iter().zip(expected.as_bytes()).all(|(a, b)| a == b));
        if found {
            self.pos += expected.len();
        }
        found
    }

    /// Whether the whole text has been read.
    pub(crate) fn at_end(&self) -> bool {
        self.pos == self.text.len()
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    pub(crate) fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Reads a string as [`Reader::string`] does, allocating nothing: its text with the
    /// quotes, and whether it holds an escape (then it must be decoded with [`decode_raw`]).
    pub(crate) fn raw_string(&mut self) -> Option<(&'a str, bool)> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut pos = start + 1;
        let mut escaped = false;
        loop {
            pos = string_stop(bytes, pos);
            match *bytes.get(pos)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    match *bytes.get(pos + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => pos += 2,
                        b'u' => {
                            self.pos = pos + 2;
                            self.unicode_escape()?;
                            pos = self.pos;
                        }
                        _ => return None,
                    }
                }
                0..=0x1f => return None,
                _ => pos += 1,
            }
        }
        self.pos = pos + 1;
        Some((&self.text[start..self.pos], escaped))
    }

    /// A `true`, `false` or `null` at the current position, or `None`.
    pub(crate) fn keyword(&mut self) -> Option<&'static str> {
        let bytes = &self.text.as_bytes()[self.pos..];
        let word = match bytes.first()? {
            b't' if bytes.get(..4) == Some(b"true") => "true",
            b'f' if bytes.get(..5) == Some(b"false") => "false",
            b'n' if bytes.get(..4) == Some(b"null") => "null",
            _ => return None,
        };
        self.pos += word.len();
        Some(word)
    }

    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn value(&mut self, depth: usize) -> Option<Value<'a>> {
        self.skip_ws();
        match self.peek()? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(Value::String),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            _ => self.number().map(|text| Value::Number(Cow::Borrowed(text))),
        }
    }

    fn literal(&mut self, word: &str, value: Value<'a>) -> Option<Value<'a>> {
        self.text[self.pos..].starts_with(word).then(|| {
            self.pos += word.len();
            value
        })
    }

    fn object(&mut self, depth: usize) -> Option<Value<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        let mut members = Vec::new();
        if self.eat(b'}') {
            return Some(Value::Object(members));
        }
        loop {
            self.skip_ws();
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            let value = self.value(depth)?;
            members.push((key, value));
            if self.eat(b'}') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
        }
        distinct(members.iter().map(|(key, _)| key.as_ref())).then_some(Value::Object(members))
    }

    fn array(&mut self, depth: usize) -> Option<Value<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        let mut items = Vec::new();
        if self.eat(b']') {
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            if self.eat(b']') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
        }
        Some(Value::Array(items))
    }

    /// A number per the JSON grammar; its text as written.
    pub(crate) fn number(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let digits = |pos: &mut usize| {
            let from = *pos;
            while bytes.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos > from
        };
        let mut pos = self.pos;
        if bytes.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match bytes.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => {
                digits(&mut pos);
            }
            _ => return None,
        }
        if bytes.get(pos) == Some(&b'.') {
            pos += 1;
            if !digits(&mut pos) {
                return None;
            }
        }
        if matches!(bytes.get(pos), Some(b'e' | b'E')) {
            pos += 1;
            if matches!(bytes.get(pos), Some(b'+' | b'-')) {
                pos += 1;
            }
            if !digits(&mut pos) {
                return None;
            }
        }
        self.pos = pos;
        Some(&self.text[start..pos])
    }

    fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.pos += 1;
        let start = self.pos;
        let bytes = self.text.as_bytes();
        // The common case: no escapes, so the value is a slice of the input.
        loop {
            self.pos = string_stop(bytes, self.pos);
            match bytes.get(self.pos)? {
                b'"' => {
                    let value = &self.text[start..self.pos];
                    self.pos += 1;
                    return Some(Cow::Borrowed(value));
                }
                b'\\' => break,
                0..=0x1f => return None,
                _ => self.pos += 1,
            }
        }
        let mut value = String::from(&self.text[start..self.pos]);
        loop {
            let rest = &self.text[self.pos..];
            let plain = rest.find(['"', '\\']).unwrap_or(rest.len());
            if rest[..plain].bytes().any(|b| b < 0x20) {
                return None;
            }
            value.push_str(&rest[..plain]);
            self.pos += plain;
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(Cow::Owned(value));
                }
                _ => {
                    self.pos += 1;
                    let escaped = match self.peek()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            self.pos += 1;
                            let code = self.unicode_escape()?;
                            value.push(code);
                            continue;
                        }
                        _ => return None,
                    };
                    self.pos += 1;
                    value.push(escaped);
                }
            }
        }
    }

    /// The code point of `XXXX` (after `\u`), joining a surrogate pair; a lone surrogate has
    /// no UTF-8 form, so the text is refused.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        if !(0xD800..0xDC00).contains(&first) {
            return char::from_u32(first);
        }
        if !self.text[self.pos..].starts_with("\\u") {
            return None;
        }
        self.pos += 2;
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return None;
        }
        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.pos..self.pos + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        u32::from_str_radix(digits, 16).ok()
    }
}

/// Whether no two of `names` are equal: pairwise for a few, sorted beyond that (hashing
/// short names costs more than comparing them).
pub(crate) fn distinct<'n>(names: impl ExactSizeIterator<Item = &'n str> + Clone) -> bool {
    if names.len() <= 8 {
        return names
            .clone()
            .enumerate()
            .all(|(i, name)| names.clone().take(i).all(|other| other != name));
    }
    let mut sorted: Vec<&str> = names.collect();
    sorted.sort_unstable();
    sorted.windows(2).all(|pair| pair[0] != pair[1])
}

/// The index of the first byte from `pos` on that ends a string's plain run (`"`, `\` or a
/// control), or the length of `bytes`. Eight bytes at a time while none of them does.
pub(crate) fn string_stop(bytes: &[u8], mut pos: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let word = u64::from_le_bytes(chunk);
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        // High bits set where a byte is below 0x20, or zero in `quote` or `backslash`; a
        // borrow can only mark a byte above a real one, so zero means none stops.
        let stops = (word.wrapping_sub(ONES * 0x20) & !word)
            | (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash);
        if stops & HIGHS != 0 {
            break;
        }
        pos += 8;
    }
    while let Some(&byte) = bytes.get(pos) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            break;
        }
        pos += 1;
    }
    pos
}

/// Writes `value` as compact JSON.
pub(crate) fn write(value: &Value<'_>, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(text) => out.push_str(text),
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write(value, out);
            }
            out.push('}');
        }
    }
}

/// Writes `text` as a JSON string.
pub(crate) fn write_string(text: &str, out: &mut String) {
    out.push('"');
    let bytes = text.as_bytes();
    let mut from = 0;
    loop {
        // Every byte that needs an escape is ASCII, so `at` is a character boundary.
        let at = string_stop(bytes, from);
        out.push_str(&text[from..at]);
        let Some(&byte) = bytes.get(at) else {
            break;
        };
        match byte {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            control => out.push_str(&format!("\\u{control:04x}")),
        }
        from = at + 1;
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings_read_back_as_written() {
        let cases = [
            ("1000.0", "1000.0"),
            (
                "[1E5,-0,0.50,12345678901234567890123]",
                "[1E5,-0,0.50,12345678901234567890123]",
            ),
            (
                r#"{"a" : "x\u00e9\n\ud83d\ude00\/" }"#,
                "{\"a\":\"xé\\n😀/\"}",
            ),
            (" [ ] ", "[]"),
            ("{}", "{}"),
        ];
        for (input, expected) in cases {
            let mut out = String::new();
            write(&parse(input).expect(input), &mut out);
            assert_eq!(out, expected, "for {input}");
        }
    }

    #[test]
    fn string_stop_finds_the_first_quote_backslash_or_control() {
        let pieces: [&[u8]; 8] = [
            b"a",
            b"\"",
            b"\\",
            b"\n",
            b"\x1f",
            b" ",
            "\u{e9}".as_bytes(),
            b"~",
        ];
        let mut state = 7u64;
        for _ in 0..20_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (state >> 59) as usize;
            let mut bytes = Vec::new();
            for i in 0..len {
                let piece = (state >> (i % 16 * 3)) as usize % pieces.len();
                // Mostly plain bytes, so the eight-byte steps are taken.
                bytes.extend_from_slice(if i % 5 == 4 { pieces[piece] } else { b"x" });
            }
            for from in 0..=bytes.len() {
                let naive = bytes[from..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .map_or(bytes.len(), |at| from + at);
                assert_eq!(string_stop(&bytes, from), naive, "{bytes:?} from {from}");
            }
        }
    }

    #[test]
    fn strings_are_written_with_the_escapes_they_need() {
        let cases = [
            ("plain", r#""plain""#),
            ("", r#""""#),
            ("q\"b\\s/", r#""q\"b\\s/""#),
            (
                "l\nr\rt\tb\u{8}f\u{c}\u{1f}",
                r#""l\nr\rt\tb\u0008f\u000c\u001f""#,
            ),
            (
                "é😀 long enough for eight bytes at a time\n",
                r#""é😀 long enough for eight bytes at a time\n""#,
            ),
        ];
        for (text, expected) in cases {
            let mut out = String::new();
            write_string(text, &mut out);
            assert_eq!(out, expected);
            assert_eq!(parse(&out), Some(Value::String(text.into())));
        }
    }

    #[test]
    fn refused_texts() {
        for input in [
            "",
            "[1,]",
            "01",
            "1.",
            "-",
            "\"\\ud800\"",
            "\"a\nb\"",
            r#"{"a":1,"a":2}"#,
            "[1] x",
            "tru",
        ] {
            assert_eq!(parse(input), None, "for {input:?}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(parse(&deep), None);
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_some());
    }

    #[test]
    fn equality_counts_number_text_and_ignores_member_order() {
        let same = |a: &str, b: &str| parse(a).unwrap().same(&parse(b).unwrap());
        assert!(same(r#"{"a":1,"b":"x"}"#, r#"{"b":"\u0078","a":1}"#));
        assert!(!same("1", "1.0"));
        assert!(!same("1", "true"));
        assert!(!same("[1,2]", "[2,1]"));
        assert!(!same(r#"{"a":1}"#, r#"{"a":1,"b":2}"#));
    }
}
