//! The validating cursor: JSON grammar, escapes, surrogates, the depth limit and the
//! duplicate-name check, handing out slices of the text.

use std::borrow::Cow;

use crate::names::DistinctNames;
use crate::scan::string_specials;
use crate::string::RawStr;

/// How deeply arrays and objects may nest: a text with 512 nested containers is read, one with
/// 513 is refused ([`Error::TooDeep`]). The host classifies payloads by this limit
/// ([`crate::check`]), so every codec that reads with it accepts what the host hands it.
pub const MAX_DEPTH: usize = 512;

/// Why a text was refused.
///
/// A codec passes such a payload through unchanged; the host never hands a codec JSON that
/// [`crate::check`] refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Not JSON: the byte offset where reading failed.
    Syntax(usize),
    /// Nested deeper than [`MAX_DEPTH`] (or the limit a caller gave).
    TooDeep,
    /// An object with two members of the same decoded name: keeping either would lose the
    /// other.
    DuplicateName,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Syntax(at) => write!(f, "not valid JSON (at byte {at})"),
            Error::TooDeep => f.write_str("JSON nested too deeply"),
            Error::DuplicateName => f.write_str("JSON object with a duplicate member name"),
        }
    }
}

impl std::error::Error for Error {}

/// A validating cursor over JSON text that hands out slices of it.
///
/// The reader is the building block of every other reading function of the crate: a codec
/// that writes its output while it reads ([`Reader::string`], [`Reader::number`],
/// [`Reader::next_or_close`], …) pays for one validating pass and allocates nothing but its
/// output. Every method that fails leaves an [`Error`] naming the byte offset where reading
/// stopped; whitespace is skipped only where a method says so.
///
/// # Examples
///
/// Reading the names of an object's members and skipping their values:
///
/// ```
/// use parrot_json::Reader;
///
/// let mut reader = Reader::new(r#" {"id": 1.50, "tags": ["a", {"b": null}]} "#);
/// reader.skip_ws();
/// reader.expect(b'{').unwrap();
/// let mut names = Vec::new();
/// if !reader.empty_container(b'}') {
///     loop {
///         names.push(reader.string().unwrap().decoded());
///         reader.expect(b':').unwrap();
///         reader.skip_ws();
///         reader.skip_value(1).unwrap();
///         if !reader.next_or_close(b'}').unwrap() {
///             break;
///         }
///     }
/// }
/// reader.finish().unwrap();
/// assert_eq!(names, ["id", "tags"]);
/// ```
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// The member names of the objects being read by [`Reader::skip_value`] or into a tree,
    /// innermost last.
    pub(crate) names: Vec<RawStr<'a>>,
    /// Their duplicate-name check.
    pub(crate) distinct: DistinctNames<'a>,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text`.
    pub fn new(text: &'a str) -> Reader<'a> {
        Reader::at(text, 0)
    }

    /// A reader of `text` from byte offset `pos` (one [`Reader::pos`] returned, or the start
    /// of a value a [`crate::Span`] gave).
    pub fn at(text: &'a str, pos: usize) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos,
            names: Vec::new(),
            distinct: DistinctNames::default(),
        }
    }

    /// The byte offset of the cursor.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The text between two offsets the reader has passed (always on character boundaries);
    /// empty when they are not in the text.
    #[inline]
    pub fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or("")
    }

    /// The syntax error at the cursor.
    #[cold]
    pub fn error(&self) -> Error {
        Error::Syntax(self.pos)
    }

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    #[inline]
    pub fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte, without consuming it.
    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Consumes one byte (after a [`Reader::peek`] that saw an ASCII byte).
    #[inline]
    pub fn bump(&mut self) {
        self.pos += 1;
    }

    /// Skips whitespace, then consumes `byte` or fails.
    #[inline]
    pub fn expect(&mut self, byte: u8) -> Result<(), Error> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Skips whitespace, then consumes `byte` if it is next; whether it was.
    #[inline]
    pub fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    /// Consumes `expected` if the text goes on with exactly those bytes (no whitespace
    /// skipped); whether it did. For a name already read once, as written: matching its bytes
    /// reads it.
    #[inline]
    pub fn eat_str(&mut self, expected: &str) -> bool {
        // Names are short: a loop beats a call to memcmp.
        let found = self
            .bytes
            .get(self.pos..self.pos + expected.len())
            .is_some_and(|bytes| bytes.iter().zip(expected.as_bytes()).all(|(a, b)| a == b));
        if found {
            self.pos += expected.len();
        }
        found
    }

    /// Moves the cursor `len` bytes on, checking nothing: for a second pass over text this
    /// reader checked once, where the caller knows what those bytes hold (a member name that
    /// [`Reader::eat_str`] matched in every row).
    #[inline]
    pub fn skip(&mut self, len: usize) {
        self.pos += len;
    }

    /// After a member or an element: skips whitespace and consumes `,` (returns true, and
    /// skips the whitespace after it) or `close` (returns false).
    #[inline]
    pub fn next_or_close(&mut self, close: u8) -> Result<bool, Error> {
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
    /// empty; whether it was.
    #[inline]
    pub fn empty_container(&mut self, close: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Checks that nothing but whitespace is left.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.skip_ws();
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Reads a string at the cursor (which must be at its opening quote): its text as written,
    /// escapes checked (a lone surrogate is refused: it has no UTF-8 form).
    #[inline(always)]
    pub fn string(&mut self) -> Result<RawStr<'a>, Error> {
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
                    return Ok(RawStr::new(self.slice(start, self.pos), escaped));
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

    fn escape(&mut self) -> Result<(), Error> {
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

    fn hex4(&mut self) -> Result<u32, Error> {
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
    #[inline(always)]
    pub fn number(&mut self) -> Result<&'a str, Error> {
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

    #[inline]
    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    #[inline]
    fn required_digits(&mut self) -> Result<(), Error> {
        let start = self.pos;
        self.digits();
        if self.pos == start {
            Err(self.error())
        } else {
            Ok(())
        }
    }

    /// Reads `null`, `true` or `false` at the cursor.
    #[inline(always)]
    pub fn literal(&mut self) -> Result<&'static str, Error> {
        let word = match self.peek() {
            Some(b'n') => "null",
            Some(b't') => "true",
            Some(b'f') => "false",
            _ => return Err(self.error()),
        };
        let written = self.bytes.get(self.pos..self.pos + word.len());
        if written.is_some_and(|written| crate::same_bytes(written, word.as_bytes())) {
            self.pos += word.len();
            Ok(word)
        } else {
            Err(self.error())
        }
    }

    /// Reads a scalar (`null`, `true`, `false`, a number or a string) and returns its text as
    /// written; `Ok(None)` when the cursor is at an array or object (nothing consumed).
    #[inline]
    pub fn scalar(&mut self) -> Result<Option<&'a str>, Error> {
        match self.peek() {
            Some(b'"') => self.string().map(|s| Some(s.raw())),
            Some(b'n' | b't' | b'f') => self.literal().map(Some),
            Some(b'-' | b'0'..=b'9') => self.number().map(Some),
            Some(b'[' | b'{') => Ok(None),
            _ => Err(self.error()),
        }
    }

    /// Reads any value and returns its text as written (whitespace inside included), checking
    /// it fully: syntax, depth (`depth` is the nesting of the value's container: 0 for a value
    /// that is the whole text) and duplicate member names.
    pub fn skip_value(&mut self, depth: usize) -> Result<&'a str, Error> {
        let start = self.pos;
        self.skip_nested(depth)?;
        Ok(self.slice(start, self.pos))
    }

    fn skip_nested(&mut self, depth: usize) -> Result<(), Error> {
        if self.scalar()?.is_some() {
            return Ok(());
        }
        if depth >= MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        let array = self.peek() == Some(b'[');
        self.pos += 1;
        if array {
            self.each_element(|reader| reader.skip_nested(depth + 1))
        } else {
            self.each_member(depth, |reader, _| reader.skip_nested(depth + 1))
        }
    }

    /// Reads the elements of the array whose `[` the cursor is past, calling `element` with the
    /// cursor at each one (it reads the element whole), through the closing `]`.
    #[inline]
    pub(crate) fn each_element<F>(&mut self, mut element: F) -> Result<(), Error>
    where
        F: FnMut(&mut Reader<'a>) -> Result<(), Error>,
    {
        if self.empty_container(b']') {
            return Ok(());
        }
        loop {
            element(self)?;
            if !self.next_or_close(b']')? {
                return Ok(());
            }
        }
    }

    /// Reads the members of the object (its container at `depth`) whose `{` the cursor is
    /// past, calling `value` with each name and the cursor at its value (it reads the value
    /// whole), through the closing `}`; then checks that no two names are the same.
    #[inline]
    pub(crate) fn each_member<F>(&mut self, depth: usize, mut value: F) -> Result<(), Error>
    where
        F: FnMut(&mut Reader<'a>, RawStr<'a>) -> Result<(), Error>,
    {
        if self.empty_container(b'}') {
            return Ok(());
        }
        let base = self.names.len();
        loop {
            let name = self.string()?;
            self.names.push(name);
            self.expect(b':')?;
            self.skip_ws();
            value(self, name)?;
            if !self.next_or_close(b'}')? {
                break;
            }
        }
        self.check_names(base, depth)
    }

    /// Checks the member names pushed since `base` (one object at `depth`) for duplicates,
    /// then forgets them.
    fn check_names(&mut self, base: usize, depth: usize) -> Result<(), Error> {
        if !self
            .distinct
            .check(depth, self.names.get(base..).unwrap_or_default())
        {
            return Err(Error::DuplicateName);
        }
        self.names.truncate(base);
        Ok(())
    }
}

/// The value of a text that is exactly one JSON string literal, quotes included (whitespace
/// around it is refused too); borrowed when it holds no escape.
///
/// # Errors
///
/// [`Error::Syntax`] when the text is anything else.
///
/// # Examples
///
/// ```
/// assert_eq!(parrot_json::decode_string(r#""a\nb""#).unwrap(), "a\nb");
/// assert!(parrot_json::decode_string(r#""\ud83d""#).is_err());
/// assert!(parrot_json::decode_string("12").is_err());
/// ```
pub fn decode_string(literal: &str) -> Result<Cow<'_, str>, Error> {
    let mut reader = Reader::new(literal);
    let string = reader.string()?;
    if reader.pos() == literal.len() {
        Ok(string.decoded())
    } else {
        Err(reader.error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

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
            ("tru", false),
            ("[1,]", false),
            ("{\"a\":1,}", false),
            ("{\"a\" 1}", false),
            ("[1 2]", false),
            ("\"tab\there\"", false),
            ("\"a\nb\"", false),
            (r#""\x""#, false),
            (r#""\ud800""#, false),
            (r#""\udc00""#, false),
            (r#""\ud800\u0041""#, false),
            ("\"unterminated", false),
            ("", false),
            ("1 2", false),
            ("[1] x", false),
            ("[", false),
        ];
        for &(text, valid) in cases {
            assert_eq!(Value::parse(text).is_ok(), valid, "{text:?}");
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
            (r#"[{"a":1,"b":2},{"a":1,"b":2},{"b":1,"b":2}]"#, true),
            (r#"{"a":1,"A":2}"#, false),
            (r#"[{"a":1,"b":2},{"b":1,"a":2}]"#, false),
        ];
        for (text, duplicate) in cases {
            assert_eq!(
                Value::parse(text) == Err(Error::DuplicateName),
                duplicate,
                "{text}"
            );
            let mut reader = Reader::new(text);
            assert_eq!(
                reader.skip_value(0) == Err(Error::DuplicateName),
                duplicate,
                "skip {text}"
            );
        }
        let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 39)).collect();
        let text = format!("{{{}}}", many.join(","));
        assert_eq!(Value::parse(&text), Err(Error::DuplicateName));
    }

    #[test]
    fn depth_limit_reads_512_levels_and_refuses_513() {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let nested = |n: usize| format!("{}0{}", open.repeat(n), close.repeat(n));
            let (at_limit, over) = (nested(MAX_DEPTH), nested(MAX_DEPTH + 1));
            assert!(Value::parse(&at_limit).is_ok());
            assert_eq!(Value::parse(&over), Err(Error::TooDeep));
            assert!(Reader::new(&at_limit).skip_value(0).is_ok());
            assert_eq!(Reader::new(&over).skip_value(0), Err(Error::TooDeep));
        }
        let ten = format!("{}{}", "[".repeat(10), "]".repeat(10));
        let eleven = format!("{}{}", "[".repeat(11), "]".repeat(11));
        assert!(Value::parse_with_limit(&ten, 10).is_ok());
        assert_eq!(Value::parse_with_limit(&eleven, 10), Err(Error::TooDeep));
    }

    #[test]
    fn the_cursor_moves_only_past_what_matches() {
        let text = r#" {"id" : 1}, {"id":2}"#;
        let mut reader = Reader::new(text);
        assert!(!reader.eat(b'['));
        assert_eq!(reader.pos(), 1, "whitespace skipped, nothing else");
        assert!(reader.eat(b'{'));
        assert!(!reader.eat_str(r#""ids""#));
        assert!(reader.eat_str(r#""id""#));
        assert!(reader.eat(b':'));
        reader.skip_ws();
        assert_eq!(reader.number(), Ok("1"));
        let second = text.rfind('{').unwrap();
        let mut again = Reader::at(text, second);
        again.bump();
        again.skip(r#""id""#.len());
        assert!(again.eat(b':'));
        assert_eq!(again.scalar(), Ok(Some("2")));
        assert_eq!(again.finish(), Err(Error::Syntax(text.len() - 1)));
    }

    #[test]
    fn errors_name_the_byte_where_reading_stopped() {
        let cases = [
            ("[1,]", Error::Syntax(3)),
            ("{\"a\" 1}", Error::Syntax(5)),
            (r#"["\ud800"]"#, Error::Syntax(8)),
            ("[1] x", Error::Syntax(4)),
        ];
        for (text, expected) in cases {
            assert_eq!(Value::parse(text), Err(expected), "{text}");
        }
        assert_eq!(Error::Syntax(3).to_string(), "not valid JSON (at byte 3)");
        assert_eq!(Error::TooDeep.to_string(), "JSON nested too deeply");
        assert_eq!(
            Error::DuplicateName.to_string(),
            "JSON object with a duplicate member name"
        );
    }
}
