//! Just enough JSON to find the texts of a tool result and splice pruned texts back in.
//!
//! Nothing is parsed into a tree and written out again: the scanner finds byte spans, and the
//! output is the input with a few spans replaced, so every member the cut does not touch keeps
//! its exact text (whitespace, number text, member order, escapes). The host hands codecs valid
//! JSON only; on anything the scanner does not expect it gives up and the payload is left alone.

use std::borrow::Cow;
use std::ops::Range;

/// A byte range of the payload.
pub(crate) type Span = Range<usize>;

/// Where the text of a JSON tool result lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The payload is one JSON string (the span includes its quotes).
    String(Span),
    /// An array of content blocks: the payload itself, or the `content` member of an object
    /// (the MCP tool-result shape).
    Blocks {
        /// The blocks, in order.
        blocks: Vec<Block>,
    },
}

/// One element of a content-block array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// The whole block.
    pub(crate) span: Span,
    /// For a text block (`"type": "text"` with a string `text`), the span of that string.
    pub(crate) text: Option<Span>,
}

/// Finds the shape of a JSON payload, or `None` when it holds no text this codec prunes.
pub(crate) fn shape(json: &str) -> Option<Shape> {
    let mut scanner = Scanner { json, pos: 0 };
    let value = scanner.value()?;
    scanner.skip_ws();
    if scanner.pos != json.len() {
        return None;
    }
    match json.as_bytes()[value.start] {
        b'"' => Some(Shape::String(value)),
        b'[' => blocks(json, value),
        b'{' => {
            let content = member(json, &members(json, value.start)?, "content")?;
            if json.as_bytes()[content.start] == b'[' {
                blocks(json, content)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The decoded value of a JSON string literal (quotes included).
pub(crate) fn decode(literal: &str) -> Option<Cow<'_, str>> {
    let content = literal.strip_prefix('"')?.strip_suffix('"')?;
    if content.contains('\\') {
        serde_json::from_str(literal).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(content))
    }
}

/// `text` as a JSON string literal.
pub(crate) fn encode(text: &str) -> Option<String> {
    serde_json::to_string(text).ok()
}

/// The blocks of the array at `array`, when every element is an object.
fn blocks(json: &str, array: Span) -> Option<Shape> {
    let blocks = Scanner::at(json, array.start)
        .elements()?
        .into_iter()
        .map(|span| {
            if json.as_bytes()[span.start] != b'{' {
                return None;
            }
            let members = members(json, span.start)?;
            let is_text = member(json, &members, "type")
                .is_some_and(|kind| decode(&json[kind]).is_some_and(|kind| kind == "text"));
            let text = member(json, &members, "text")
                .filter(|text| is_text && json.as_bytes()[text.start] == b'"');
            Some(Block { span, text })
        })
        .collect::<Option<Vec<Block>>>()?;
    Some(Shape::Blocks { blocks })
}

/// The members (key span, value span) of the object starting at byte `start`.
fn members(json: &str, start: usize) -> Option<Vec<(Span, Span)>> {
    Scanner::at(json, start).members()
}

/// The value of the member named `name` (keys compared by their decoded value).
fn member(json: &str, members: &[(Span, Span)], name: &str) -> Option<Span> {
    members
        .iter()
        .find(|(key, _)| decode(&json[key.clone()]).is_some_and(|key| key == name))
        .map(|(_, value)| value.clone())
}

/// A cursor over the payload that skips values and reports their spans.
struct Scanner<'a> {
    json: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn at(json: &'a str, pos: usize) -> Scanner<'a> {
        Scanner { json, pos }
    }

    fn peek(&self) -> Option<u8> {
        self.json.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Consumes `byte` (after whitespace) if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    /// Skips one value (after whitespace) and returns its span.
    fn value(&mut self) -> Option<Span> {
        self.skip_ws();
        let start = self.pos;
        match self.peek()? {
            b'"' => self.string()?,
            b'[' | b'{' => self.nested()?,
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b':' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return None;
                }
            }
        }
        Some(start..self.pos)
    }

    /// Skips a string, from its opening quote to past its closing one.
    fn string(&mut self) -> Option<()> {
        self.pos += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
    }

    /// Skips an array or object, from its opening bracket to past the matching close.
    fn nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => self.string()?,
                b'[' | b'{' => {
                    depth += 1;
                    self.pos += 1;
                }
                b']' | b'}' => {
                    depth -= 1;
                    self.pos += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                _ => self.pos += 1,
            }
        }
    }

    /// The spans of the elements of the array whose `[` is at the cursor.
    fn elements(&mut self) -> Option<Vec<Span>> {
        self.pos += 1;
        let mut elements = Vec::new();
        if self.eat(b']') {
            return Some(elements);
        }
        loop {
            elements.push(self.value()?);
            if self.eat(b']') {
                return Some(elements);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// The (key, value) spans of the members of the object whose `{` is at the cursor.
    fn members(&mut self) -> Option<Vec<(Span, Span)>> {
        self.pos += 1;
        let mut members = Vec::new();
        if self.eat(b'}') {
            return Some(members);
        }
        loop {
            let key = self.value()?;
            if self.json.as_bytes()[key.start] != b'"' || !self.eat(b':') {
                return None;
            }
            members.push((key, self.value()?));
            if self.eat(b'}') {
                return Some(members);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(json: &str) -> Option<Vec<Option<&str>>> {
        match shape(json)? {
            Shape::String(span) => Some(vec![Some(&json[span])]),
            Shape::Blocks { blocks } => Some(
                blocks
                    .into_iter()
                    .map(|block| block.text.map(|text| &json[text]))
                    .collect(),
            ),
        }
    }

    #[test]
    fn shapes_are_found_by_their_text() {
        let cases: &[(&str, Option<Vec<Option<&str>>>)] = &[
            (r#" "a\"b" "#, Some(vec![Some(r#""a\"b""#)])),
            (
                r#"[{"type":"text","text":"x"},{"type":"image","data":"y"}]"#,
                Some(vec![Some(r#""x""#), None]),
            ),
            (
                r#"{"isError":false,"content":[ {"text":"x", "type" : "text"} ]}"#,
                Some(vec![Some(r#""x""#)]),
            ),
            (
                r#"[{"type":"t\u0065xt","text":"x"}]"#,
                Some(vec![Some(r#""x""#)]),
            ),
            (r#"[{"type":"text","text":7}]"#, Some(vec![None])),
            (r#"[{"type":"reasoning","text":"x"}]"#, Some(vec![None])),
            (
                r#"[{"type":"text","text":"]}{["},{"type":"x","v":[{"a":"\\"}]}]"#,
                Some(vec![Some(r#""]}{[""#), None]),
            ),
            ("[]", Some(vec![])),
            (r#"[{"type":"text","text":"x"}, 1]"#, None),
            (r#"{"content":"x"}"#, None),
            (r#"{"result":[{"type":"text","text":"x"}]}"#, None),
            ("12.50", None),
            ("null", None),
            (r#"["x""#, None),
        ];
        for (json, expected) in cases {
            assert_eq!(texts(json), *expected, "for {json}");
        }
    }

    #[test]
    fn strings_decode_and_encode() {
        assert_eq!(decode(r#""plain""#).as_deref(), Some("plain"));
        assert_eq!(decode(r#""\ud83d\ude00 \n""#).as_deref(), Some("😀 \n"));
        assert_eq!(decode(r#""\ud83d""#), None);
        assert_eq!(encode("a\"\n\u{1}é").as_deref(), Some(r#""a\"\n\u0001é""#));
    }
}
