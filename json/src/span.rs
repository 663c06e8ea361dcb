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
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut at = pos;
            loop {
                at = next_structural(bytes, at);
                match *bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
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
        at = crate::reader::string_stop(bytes, at);
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
}

/// The first byte from `at` on that may be a quote or a bracket, or the length of `bytes`;
/// eight bytes at a time. It may also stop at a byte 0x02 (a quote once bit 5 is set), which
/// the caller passes over.
fn next_structural(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        // Bit 5 set folds `[` onto `{` and `]` onto `}`. Each test's lowest hit is exact, so
        // the lowest of them is.
        let folded = u64::from_le_bytes(word) | (ONES * 0x20);
        let hits = (zero_bytes(folded ^ (ONES * u64::from(b'"')))
            | zero_bytes(folded ^ (ONES * u64::from(b'{')))
            | zero_bytes(folded ^ (ONES * u64::from(b'}'))))
            & HIGHS;
        if hits != 0 {
            return at + hits.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    while let Some(&byte) = bytes.get(at) {
        if matches!(byte, b'"' | b'[' | b']' | b'{' | b'}') {
            break;
        }
        at += 1;
    }
    at
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
