//! The envelope of an MCP `tools/call` result, for the router of any host that is handed
//! whole results (the command's `compress` and `replay`, a library's caller): see
//! [`ContentBlocks`].

use parrot_host::{Envelope, Member, Opened};
use parrot_json::Span;

/// Opens an MCP `tools/call` result, `{"content": [{"type": "text", "text": …}, …], …}`: the
/// router `auto` routes each text block's text on its own and rebuilds the result with every
/// other byte as it was. A result with `"isError": true` passes through untouched: an error
/// is never compressed.
///
/// It opens an object whose `content` holds content blocks only (objects with a string
/// `type`) and at least one text block with a string `text`; anything else is left to the
/// router's shapes. The relay ([`crate::Relay`]) does not need it: it hands the host each
/// block's text itself.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use parrot_host::{Call, Host, Input};
///
/// let dir = std::env::temp_dir().join("parrot-doc-content-blocks");
/// std::fs::create_dir_all(&dir).unwrap();
/// let host = Host::builder()
///     .project(&dir)
///     .plugin_path(None)
///     .envelope(Arc::new(parrot_mcp::ContentBlocks))
///     .build()
///     .unwrap();
/// let result = r#"{"content": [{"type": "text", "text": "{\"a\": null, \"b\": [1, 1, 1, 1]}"}]}"#;
/// let out = host.process(Call::new("query", Input::Text(result)));
/// assert!(out.meta.route.unwrap().starts_with("mcp: block 1: object: "));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ContentBlocks;

impl Envelope for ContentBlocks {
    fn name(&self) -> &str {
        "mcp"
    }

    fn describe(&self) -> &str {
        "each text block routed as above; isError results pass through"
    }

    fn open(&self, text: &str, members: &[Member<'_>]) -> Option<Opened> {
        let content = members.iter().find(|m| m.name.is("content"))?;
        let blocks = text_blocks(text, content.value.start)?;
        let error = members
            .iter()
            .any(|m| m.name.is("isError") && &text[m.value.clone()] == "true");
        Some(if error {
            Opened::Failure("isError")
        } else {
            Opened::Texts(blocks)
        })
    }
}

/// The `text` literals of a `content` array's text blocks, when the array at `start` holds
/// content blocks only (objects with a string `type`) and at least one text block.
fn text_blocks(text: &str, start: usize) -> Option<Vec<Span>> {
    let elements = parrot_json::elements(text, start).ok()?;
    let mut texts = Vec::new();
    for element in elements {
        let members = parrot_json::members(text, element.start).ok()?;
        let kind = members.iter().find(|m| m.name.is("type"))?;
        let kind = &text[kind.value.clone()];
        if !kind.starts_with('"') {
            return None;
        }
        if kind == "\"text\"" {
            let literal = members.iter().find(|m| m.name.is("text"))?;
            if !text[literal.value.clone()].starts_with('"') {
                return None;
            }
            texts.push(literal.value.clone());
        }
    }
    (!texts.is_empty()).then_some(texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the envelope makes of `text`: the texts it opens, a failure, or nothing.
    fn opened(text: &str) -> String {
        let members = parrot_json::members(text, 0).expect("an object");
        match ContentBlocks.open(text, &members) {
            Some(Opened::Texts(spans)) => {
                let texts: Vec<&str> = spans.iter().map(|s| &text[s.clone()]).collect();
                format!("texts {}", texts.join(" "))
            }
            Some(Opened::Failure(why)) => format!("failure {why}"),
            None => "none".to_owned(),
        }
    }

    #[test]
    fn text_blocks_are_opened_and_errors_are_failures() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"content":[{"type":"text","text":"hi"},{"type":"image","data":"x"},{"type":"text","text":"[1]"}]}"#,
                r#"texts "hi" "[1]""#,
            ),
            (
                r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#,
                "failure isError",
            ),
            (
                r#"{"content":[{"type":"text","text":"ok"}],"isError":false}"#,
                r#"texts "ok""#,
            ),
            // No text block, a block that is no content block, a text that is no string:
            // not a result this envelope opens.
            (r#"{"content":[{"type":"image","data":"x"}]}"#, "none"),
            (r#"{"content":[{"kind":"text"}]}"#, "none"),
            (r#"{"content":[{"type":"text","text":12}]}"#, "none"),
            (r#"{"content":"text"}"#, "none"),
            (r#"{"rows":[{"type":"text","text":"x"}]}"#, "none"),
        ];
        for (input, expected) in cases {
            assert_eq!(opened(input), *expected, "{input}");
        }
    }
}
