//! Where the texts of a JSON tool result lie, so that pruned texts can be spliced back in.
//!
//! Nothing is parsed into a tree and written out again: `parrot_json` gives byte spans, and the
//! output is the input with a few spans replaced, so every member the cut does not touch keeps
//! its exact text (whitespace, number text, member order, escapes). Anything that is not JSON
//! of one of the shapes below is left alone.

use parrot_json::{Member, Span};

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

/// Finds the shape of a JSON payload, or `None` when it holds no text this codec prunes (or
/// is not JSON).
pub(crate) fn shape(json: &str) -> Option<Shape> {
    let value = parrot_json::value_span(json).ok()?;
    match json.as_bytes().get(value.start)? {
        b'"' => Some(Shape::String(value)),
        b'[' => blocks(json, value.start),
        b'{' => {
            let content = member(&parrot_json::members(json, value.start).ok()?, "content")?;
            blocks(json, content.start)
        }
        _ => None,
    }
}

/// The blocks of the array at byte `array`, when it is an array whose every element is an
/// object.
fn blocks(json: &str, array: usize) -> Option<Shape> {
    let blocks = parrot_json::elements(json, array)
        .ok()?
        .into_iter()
        .map(|span| {
            let members = parrot_json::members(json, span.start).ok()?;
            let is_text = member(&members, "type").is_some_and(|kind| {
                parrot_json::decode_string(&json[kind]).is_ok_and(|kind| kind == "text")
            });
            let text = member(&members, "text")
                .filter(|text| is_text && json.as_bytes().get(text.start) == Some(&b'"'));
            Some(Block { span, text })
        })
        .collect::<Option<Vec<Block>>>()?;
    Some(Shape::Blocks { blocks })
}

/// The value of the member named `name` (names compared by their decoded value).
fn member(members: &[Member<'_>], name: &str) -> Option<Span> {
    members
        .iter()
        .find(|member| member.name.is(name))
        .map(|member| member.value.clone())
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
            // Not JSON, though the blocks are where they would be.
            (r#"[{"type":"text","text":"x"}] x"#, None),
            (r#"{"content":[{"type":"text","text":"x"}],"n":01}"#, None),
        ];
        for (json, expected) in cases {
            assert_eq!(texts(json), *expected, "for {json}");
        }
    }
}
