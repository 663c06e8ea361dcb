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
