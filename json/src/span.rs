//! Byte spans of values, for a codec that splices: it finds where members and elements lie,
//! replaces a few spans, and copies every other byte of the text as it was.

use std::ops::Range;

use crate::reader::{Error, Reader};
use crate::string::RawStr;

/// A byte range of a JSON text holding one value as written (`text[span]`).
pub type Span = Range<usize>;

/// A member of an object: its name, and the span of its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member<'a> {
    /// The member's name, as written.
    pub name: RawStr<'a>,
    /// Where its value lies in the text.
    pub value: Span,
}

/// The span of the one value `text` holds, without the whitespace around it. The whole text
/// is checked as [`crate::check`] checks it.
///
/// # Errors
///
/// [`Error::Syntax`], [`Error::TooDeep`], [`Error::DuplicateName`].
///
/// # Examples
///
/// ```
/// let text = " [1, 2] ";
/// let span = parrot_json::value_span(text).unwrap();
/// assert_eq!(&text[span], "[1, 2]");
/// assert!(parrot_json::value_span("[1, 2] 3").is_err());
/// ```
pub fn value_span(text: &str) -> Result<Span, Error> {
    let mut reader = Reader::new(text);
    reader.skip_ws();
    let start = reader.pos();
    reader.skip_value(0)?;
    let end = reader.pos();
    reader.finish()?;
    Ok(start..end)
}

/// The spans of the elements of the array whose `[` is at byte `start` of `text`. Each element
/// is checked fully; the depth limit counts from this array.
///
/// # Errors
///
/// [`Error::Syntax`] (also when no array starts at `start`), [`Error::TooDeep`],
/// [`Error::DuplicateName`].
///
/// # Examples
///
/// ```
/// let text = r#"{"rows": [1, {"a": "]"} ]}"#;
/// let spans = parrot_json::elements(text, 9).unwrap();
/// let elements: Vec<&str> = spans.into_iter().map(|span| &text[span]).collect();
/// assert_eq!(elements, ["1", r#"{"a": "]"}"#]);
/// ```
pub fn elements(text: &str, start: usize) -> Result<Vec<Span>, Error> {
    let mut reader = opened(text, start, b'[')?;
    let mut elements = Vec::new();
    reader.each_element(|reader| {
        let at = reader.pos();
        reader.skip_value(1)?;
        elements.push(at..reader.pos());
        Ok(())
    })?;
    Ok(elements)
}

/// The members of the object whose `{` is at byte `start` of `text`: each name, and the span
/// of its value. Each value is checked fully, and the names must be distinct; the depth limit
/// counts from this object.
///
/// # Errors
///
/// [`Error::Syntax`] (also when no object starts at `start`), [`Error::TooDeep`],
/// [`Error::DuplicateName`].
///
/// # Examples
///
/// ```
/// let text = r#"{"type": "text", "text": "hello"}"#;
/// let members = parrot_json::members(text, 0).unwrap();
/// let text_member = members.iter().find(|member| member.name.is("text")).unwrap();
/// assert_eq!(&text[text_member.value.clone()], r#""hello""#);
/// ```
pub fn members(text: &str, start: usize) -> Result<Vec<Member<'_>>, Error> {
    let mut reader = opened(text, start, b'{')?;
    let mut members = Vec::new();
    reader.each_member(0, |reader, name| {
        let at = reader.pos();
        reader.skip_value(1)?;
        members.push(Member {
            name,
            value: at..reader.pos(),
        });
        Ok(())
    })?;
    Ok(members)
}

/// The members of the object whose `{` is at byte `start` of `text`, found by structure alone:
/// each name is read as [`members`] reads it, but each value is only skipped, a string to its
/// closing quote and a container to its matching bracket, without checking what it holds (its
/// syntax, depth or names). Nor are the names checked for duplicates, nor what follows the
/// object, nor that each bracket closes one of its kind. For a caller that validates the values
/// in a pass of its own (the host's fused pass, CONTRACT §4): on JSON that [`crate::check`]
/// accepts, the result is exactly [`members`]'s; on other text it is `None` or spans that a
/// validating pass will refuse.
///
/// # Examples
///
/// ```
/// let text = r#"{"driver": "pg", "rows": [{"a": "]"}, {"a": 2}]}"#;
/// let found = parrot_json::members_unchecked(text, 0).unwrap();
/// assert_eq!(found, parrot_json::members(text, 0).unwrap());
/// assert_eq!(&text[found[1].value.clone()], r#"[{"a": "]"}, {"a": 2}]"#);
/// // Values are not checked: a validating pass must follow.
/// assert!(parrot_json::members_unchecked(r#"{"a": [01, 02]}"#, 0).is_some());
/// assert!(parrot_json::members_unchecked(r#"{"a": [1, 2}"#, 0).is_none());
/// ```
pub fn members_unchecked(text: &str, start: usize) -> Option<Vec<Member<'_>>> {
    let bytes = text.as_bytes();
    let mut reader = opened(text, start, b'{').ok()?;
    let mut members = Vec::new();
    if reader.empty_container(b'}') {
        return Some(members);
    }
    loop {
        let name = reader.string().ok()?;
        reader.expect(b':').ok()?;
        reader.skip_ws();
        let at = reader.pos();
        let end = structural_end(bytes, at)?;
        reader.skip(end - at);
        members.push(Member {
            name,
            value: at..end,
        });
        if !reader.next_or_close(b'}').ok()? {
            return Some(members);
        }
    }
}

/// Where the value that starts at `pos` ends, by structure alone: a string past its closing
/// quote, a container past the bracket that closes it (brackets of either kind counted alike,
/// outside strings), any other value at the next `,`, `]`, `}` or whitespace. `None` when the
/// text ends first or closes more than it opened.
fn structural_end(bytes: &[u8], pos: usize) -> Option<usize> {
    match *bytes.get(pos)? {
        b'"' => string_end(bytes, pos),
        b'[' | b'{' => container_end(bytes, pos),
        _ => Some(
            bytes[pos..]
                .iter()
                .position(|b| matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
                .map_or(bytes.len(), |len| pos + len),
        ),
    }
}

/// Past the closing quote of the string whose opening quote is at `pos`, or `None`.
fn string_end(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut at = pos + 1;
    loop {
        at = crate::scan::string_stop(bytes, at);
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
}

/// Past the bracket that closes the container opening at `pos`, or `None`.
///
/// 64 bytes at a time: their quotes, backslashes and brackets as bit masks (16 bytes a
/// vector), the bytes inside strings as the running parity of the quotes before them
/// (a prefix XOR), and the brackets outside strings counted in order. A block holding a
/// backslash, and the text's last bytes, go byte by byte.
fn container_end(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut scan = Scan::default();
    let mut at = pos;
    let mut blocks = bytes[pos..].chunks_exact(64);
    for block in &mut blocks {
        let block: &[u8; 64] = block.try_into().expect("64 bytes");
        let classes = Classes::of(block);
        let end = if classes.backslashes == 0 && !scan.escaped {
            scan.block(&classes)
        } else {
            scan.bytes(block)
        };
        if let Some(end) = end {
            return Some(at + end);
        }
        at += 64;
    }
    scan.bytes(blocks.remainder()).map(|end| at + end)
}

/// The state of [`container_end`] between blocks.
#[derive(Default)]
struct Scan {
    /// Brackets opened and not closed yet.
    depth: usize,
    /// The next byte is inside a string.
    in_string: bool,
    /// The next byte is escaped (after a backslash inside a string).
    escaped: bool,
}

impl Scan {
    /// A block without a backslash, from its masks: where the container ends in it (past its
    /// closing bracket), or `None` with the state carried on.
    fn block(&mut self, classes: &Classes) -> Option<usize> {
        let mut inside = prefix_xor(classes.quotes);
        if self.in_string {
            inside = !inside;
        }
        let mut brackets = (classes.opens | classes.closes) & !inside;
        while brackets != 0 {
            let at = brackets.trailing_zeros() as usize;
            if classes.opens >> at & 1 == 1 {
                self.depth += 1;
            } else {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    return Some(at + 1);
                }
            }
            brackets &= brackets - 1;
        }
        self.in_string = inside >> 63 == 1;
        None
    }

    /// Any bytes, one at a time.
    fn bytes(&mut self, bytes: &[u8]) -> Option<usize> {
        for (at, &byte) in bytes.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if byte == b'\\' {
                    self.escaped = true;
                } else if byte == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(at + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// Bit `i` of a mask is byte `i` of a 64-byte block.
struct Classes {
    quotes: u64,
    backslashes: u64,
    /// `[` and `{`.
    opens: u64,
    /// `]` and `}`.
    closes: u64,
}

impl Classes {
    fn of(block: &[u8; 64]) -> Classes {
        use wide::u8x16;
        let mut classes = Classes {
            quotes: 0,
            backslashes: 0,
            opens: 0,
            closes: 0,
        };
        for (k, lanes) in block.chunks_exact(16).enumerate() {
            let v = u8x16::new(lanes.try_into().expect("16 bytes"));
            // Bit 5 set folds `[` onto `{` and `]` onto `}`.
            let folded = v | u8x16::splat(0x20);
            let bits = |lanes: u8x16| u64::from(lanes.to_bitmask()) << (16 * k);
            classes.quotes |= bits(v.simd_eq(u8x16::splat(b'"')));
            classes.backslashes |= bits(v.simd_eq(u8x16::splat(b'\\')));
            classes.opens |= bits(folded.simd_eq(u8x16::splat(b'{')));
            classes.closes |= bits(folded.simd_eq(u8x16::splat(b'}')));
        }
        classes
    }
}

/// Bit `i` is the parity of the set bits of `x` at `i` and below.
fn prefix_xor(mut x: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        x ^= x << shift;
    }
    x
}

/// A reader just past the `open` at byte `start` of `text`.
fn opened(text: &str, start: usize, open: u8) -> Result<Reader<'_>, Error> {
    let mut reader = Reader::at(text, start);
    if reader.peek() != Some(open) {
        return Err(reader.error());
    }
    reader.bump();
    Ok(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_hold_each_value_as_written() {
        let text = "{ \"a\" : [ 1.50 , \"x\\\"]\" , { } ] , \"b\\u0062\" : null }";
        let members = members(text, 0).unwrap();
        let found: Vec<(String, &str)> = members
            .iter()
            .map(|m| (m.name.decoded().into_owned(), &text[m.value.clone()]))
            .collect();
        assert_eq!(
            found,
            [
                ("a".to_owned(), "[ 1.50 , \"x\\\"]\" , { } ]"),
                ("bb".to_owned(), "null"),
            ]
        );
        let array = members[0].value.start;
        let items: Vec<&str> = elements(text, array)
            .unwrap()
            .into_iter()
            .map(|span| &text[span])
            .collect();
        assert_eq!(items, ["1.50", "\"x\\\"]\"", "{ }"]);
        assert_eq!(&text[value_span(text).unwrap()], text);
    }

    /// On valid JSON the structural scan finds what the validating one does, whatever the
    /// strings hold; on broken structure it gives up.
    #[test]
    fn unchecked_members_are_the_members_of_valid_json() {
        let texts = [
            r#"{}"#,
            r#" {"a":1} "#,
            r#"{"a" : "x\"]}\\" , "b":[{"c":"[","d":[1,[2,{}]]}],"e":-1.5e3,"f":true,"g":null}"#,
            r#"{"rows":[{"id":1,"v":"}"},{"id":2,"v":"\u005d"}],"n":{"x":{"y":[]}}}"#,
            "{\"a\":\t[ 1 ,\n2 ]\r\n,\"b\":\"\"}",
        ];
        for text in texts {
            let start = text.len() - text.trim_start().len();
            assert_eq!(
                members_unchecked(text, start),
                Some(members(text, start).unwrap()),
                "{text}"
            );
        }
        for broken in [
            r#"{"a":[1,2}"#,
            r#"{"a":[1]]}"#,
            r#"{"a":"unterminated}"#,
            r#"{"a":[1,2"#,
            r#"{"a" 1}"#,
            r#"{"a":1"#,
            "[1]",
        ] {
            assert_eq!(members_unchecked(broken, 0), None, "{broken}");
        }
    }

    /// Generated JSON, 64-byte blocks cut anywhere: strings with escaped quotes and
    /// backslashes (at block ends too), brackets inside strings, long strings, nesting.
    #[test]
    fn unchecked_members_match_on_generated_json() {
        struct Rng(u64);
        impl Rng {
            fn below(&mut self, n: u64) -> u64 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0 % n
            }
        }
        fn string(rng: &mut Rng, out: &mut String) {
            const PIECES: &[&str] = &[
                "a", "word", "[", "]", "{", "}", "\\\"", "\\\\", "\\\\\\\"", "\\n", "\\u0041", " ",
                ",", ":", "é", "\\/",
            ];
            out.push('"');
            for _ in 0..rng.below(40) {
                out.push_str(PIECES[rng.below(PIECES.len() as u64) as usize]);
            }
            out.push('"');
        }
        fn value(rng: &mut Rng, depth: u32, out: &mut String) {
            match if depth > 4 {
                rng.below(3)
            } else {
                rng.below(6)
            } {
                0 => string(rng, out),
                1 => out.push_str(["1", "-2.5e3", "true", "null"][rng.below(4) as usize]),
                2 => out.push_str(" 0 "),
                3 | 4 => {
                    out.push('[');
                    for i in 0..rng.below(6) {
                        if i > 0 {
                            out.push(',');
                        }
                        value(rng, depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..rng.below(6) {
                        if i > 0 {
                            out.push_str(" , ");
                        }
                        out.push_str(&format!("\"k{i}\""));
                        out.push(':');
                        value(rng, depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
        let mut rng = Rng(0x5eed_cafe);
        let mut checked = 0;
        for _ in 0..3000 {
            let mut text = String::from("{");
            for i in 0..rng.below(5) + 1 {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&format!("\"m{i}\": "));
                value(&mut rng, 0, &mut text);
            }
            text.push('}');
            let Ok(expected) = members(&text, 0) else {
                continue;
            };
            assert_eq!(members_unchecked(&text, 0), Some(expected), "{text}");
            checked += 1;
        }
        assert!(checked > 2500, "{checked}");
    }

    #[test]
    fn spans_of_what_is_not_there_are_refused() {
        let cases: [(&str, usize, bool); 8] = [
            ("[]", 0, true),
            ("{}", 0, true),
            ("[1,]", 0, false),
            ("[1", 0, false),
            (r#"{"a":1,"a":2}"#, 0, false),
            (r#"{"a" 1}"#, 0, false),
            ("x[1]", 0, false),
            (" [1]", 0, false),
        ];
        for (text, start, ok) in cases {
            let read = if text.trim_start().starts_with('{') {
                members(text, start).map(|_| ())
            } else {
                elements(text, start).map(|_| ())
            };
            assert_eq!(read.is_ok(), ok, "{text}");
        }
        assert_eq!(members(r#"{"a":1,"a":2}"#, 0), Err(Error::DuplicateName));
        assert_eq!(value_span(""), Err(Error::Syntax(0)));
        assert_eq!(value_span(" 1 2"), Err(Error::Syntax(3)));
    }
}
