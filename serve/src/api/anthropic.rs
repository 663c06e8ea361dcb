//! Anthropic's Messages API, `POST /v1/messages` (and `/v1/messages/count_tokens`, which takes
//! the same body).

use serde_json::{Value, json};

use super::LlmApi;
use super::calls::{Answer, Calls, EditError, Found, drop_recovery_calls, str_of};
use super::targets::{
    CallNames, Origin, Path, RewriteError, Target, array, object, optional, required, shape,
    string, texts,
};
use super::tree::Node;

/// Anthropic's Messages API.
pub(crate) struct AnthropicMessages;

/// The members the request rules read.
const KEEP: &[&str] = &[
    "messages",
    "role",
    "content",
    "type",
    "id",
    "name",
    "tool_use_id",
    "is_error",
    "text",
];

/// What a tool result's content may hold: the type of its text parts, and what the API allows
/// there (for the error).
const BLOCKS: (&str, &str) = ("text", "a string or an array of content blocks");

impl LlmApi for AnthropicMessages {
    fn name(&self) -> &'static str {
        "Anthropic Messages"
    }

    fn short_name(&self) -> &'static str {
        "anthropic"
    }

    fn path(&self) -> &'static str {
        "/v1/messages"
    }

    #[cfg(feature = "proxy")]
    fn counting_path(&self) -> Option<&'static str> {
        Some("/v1/messages/count_tokens")
    }

    fn keep(&self) -> &'static [&'static str] {
        KEEP
    }

    /// The `content` of each `tool_result` block of a `user` message, named by the `tool_use`
    /// block of an earlier `assistant` message with the same id.
    fn targets<'a>(&self, root: &Node<'a>) -> Result<Vec<Target<'a>>, RewriteError> {
        let body = Path::Body;
        object(root, body, "an object")?;
        let messages_path = body.name("messages");
        let messages = array(root, "messages", body, "an array of messages")?;
        let mut calls = CallNames::new();
        let mut targets = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            let path = messages_path.index(index);
            object(message, path, "a message (an object)")?;
            let role = string(message, "role", path)?;
            let blocks = match required(message, "content", path)? {
                Node::String(..) => continue,
                Node::Array(blocks) => blocks,
                other => {
                    return Err(shape(path.name("content"), BLOCKS.1, other));
                }
            };
            let blocks_path = path.name("content");
            for (index, block) in blocks.iter().enumerate() {
                let path = blocks_path.index(index);
                object(block, path, "a content block (an object)")?;
                let kind = string(block, "type", path)?;
                match (role.as_ref(), kind.as_ref()) {
                    ("assistant", "tool_use") => {
                        let id = string(block, "id", path)?;
                        calls.insert(id, string(block, "name", path)?);
                    }
                    ("user", "tool_result") => {
                        let id = string(block, "tool_use_id", path)?;
                        let is_error = match optional(block, "is_error") {
                            None | Some(Node::Scalar("false")) => false,
                            Some(Node::Scalar("true")) => true,
                            Some(other) => {
                                return Err(shape(path.name("is_error"), "true or false", other));
                            }
                        };
                        let Some(content) = optional(block, "content") else {
                            continue;
                        };
                        let tool = calls.get(&id).cloned();
                        texts(
                            content,
                            path.name("content"),
                            BLOCKS,
                            Origin { tool, is_error },
                            &mut targets,
                        )?;
                    }
                    _ => {}
                }
            }
        }
        Ok(targets)
    }

    /// `{"name", "description", "input_schema"}`.
    fn tool(&self, description: &Value, schema: &Value) -> Value {
        json!({
            "name": crate::RECOVERY_TOOL,
            "description": description,
            "input_schema": schema,
        })
    }

    fn tool_name<'v>(&self, tool: &'v Value) -> Option<&'v str> {
        str_of(tool, "name")
    }

    fn conversation(&self) -> &'static str {
        "messages"
    }

    /// The `tool_use` blocks of the answer's `content`.
    fn calls(&self, response: &Value) -> Calls {
        let mut found = Found::default();
        for block in super::calls::array(response, "content") {
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                found.push(
                    str_of(block, "name"),
                    str_of(block, "id"),
                    block.get("input").and_then(Value::as_object).cloned(),
                );
            }
        }
        found.calls()
    }

    fn strip(&self, response: &mut Value) {
        drop_recovery_calls(response, "content", "tool_use");
    }

    /// The assistant's content, then one user turn of tool results.
    fn turns(&self, response: &Value, answers: &[Answer]) -> Result<Vec<Value>, EditError> {
        let content = response
            .get("content")
            .cloned()
            .ok_or_else(|| EditError("response: no \"content\" member".to_owned()))?;
        let results: Vec<Value> = answers
            .iter()
            .map(|answer| {
                let mut result = json!({
                    "type": "tool_result",
                    "tool_use_id": answer.id,
                    "content": answer.text,
                });
                if answer.is_error {
                    result["is_error"] = Value::Bool(true);
                }
                result
            })
            .collect();
        Ok(vec![
            json!({"role": "assistant", "content": content}),
            json!({"role": "user", "content": results}),
        ])
    }

    #[cfg(feature = "proxy")]
    fn merges(&self) -> bool {
        true
    }

    #[cfg(feature = "proxy")]
    fn sent_back<'v>(&self, answer: &'v Value) -> Option<&'v Value> {
        Some(answer)
    }

    #[cfg(feature = "proxy")]
    fn is_answer(&self, element: &Value) -> bool {
        element.get("role").and_then(Value::as_str) == Some("assistant")
            && element.get("content").is_some_and(Value::is_array)
    }

    /// What the model wrote in each of the message's blocks.
    #[cfg(feature = "proxy")]
    fn written(&self, element: &Value) -> Option<Value> {
        let blocks = element.get("content")?.as_array()?;
        Some(Value::Array(blocks.iter().map(block_written).collect()))
    }

    /// The role, and what was written in each block (a content string counts as its one text
    /// block).
    #[cfg(feature = "proxy")]
    fn canonical(&self, message: &Value) -> Value {
        let content: Vec<Value> = match message.get("content") {
            Some(Value::String(text)) => {
                vec![json!({"type": "text", "text": text})]
            }
            Some(Value::Array(blocks)) => blocks.iter().map(block_written).collect(),
            other => vec![other.cloned().unwrap_or(Value::Null)],
        };
        json!([message.get("role"), content])
    }

    /// The first content block decides; thinking before it is held.
    #[cfg(feature = "proxy")]
    fn decide(&self, event: &Value) -> super::Decision {
        use super::Decision;
        match event.get("type").and_then(Value::as_str) {
            Some("content_block_start") => {
                let block = &event["content_block"];
                match block.get("type").and_then(Value::as_str) {
                    Some("thinking" | "redacted_thinking") => Decision::Undecided,
                    Some("tool_use") => super::ours(block.get("name")),
                    _ => Decision::Theirs,
                }
            }
            Some("message_stop" | "error") => Decision::Theirs,
            _ => Decision::Undecided,
        }
    }

    #[cfg(feature = "proxy")]
    fn rebuild(&self) -> Box<dyn super::Rebuild> {
        Box::new(Blocks::default())
    }
}

/// The members of a block that the model wrote (for a block of another type, all of it but
/// its `cache_control`).
#[cfg(feature = "proxy")]
fn block_written(block: &Value) -> Value {
    let keep: &[&str] = match block.get("type").and_then(Value::as_str) {
        Some("text") => &["type", "text"],
        Some("thinking") => &["type", "thinking", "signature"],
        Some("redacted_thinking") => &["type", "data"],
        Some("tool_use" | "server_tool_use") => &["type", "id", "name", "input"],
        _ => return super::unmarked(block),
    };
    let mut out = serde_json::Map::new();
    for &name in keep {
        if let Some(value) = block.get(name) {
            out.insert(name.to_owned(), value.clone());
        }
    }
    Value::Object(out)
}

/// A streamed message's content blocks, and each one's partial JSON input.
#[cfg(feature = "proxy")]
#[derive(Debug, Default)]
struct Blocks(Vec<(Value, String)>);

#[cfg(feature = "proxy")]
impl super::Rebuild for Blocks {
    fn feed(&mut self, event: &Value) {
        let blocks = &mut self.0;
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok());
        match (event.get("type").and_then(Value::as_str), index) {
            (Some("content_block_start"), Some(index)) => {
                if blocks.len() <= index {
                    blocks.resize(index + 1, (Value::Null, String::new()));
                }
                blocks[index] = (event["content_block"].clone(), String::new());
            }
            (Some("content_block_delta"), Some(index)) => {
                let Some((block, partial)) = blocks.get_mut(index) else {
                    return;
                };
                let delta = &event["delta"];
                let append = |block: &mut Value, member: &str, more: &Value| {
                    let more = more.as_str().unwrap_or_default();
                    let text = block[member].as_str().unwrap_or_default().to_owned() + more;
                    block[member] = Value::String(text);
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => append(block, "text", &delta["text"]),
                    Some("thinking_delta") => append(block, "thinking", &delta["thinking"]),
                    Some("signature_delta") => block["signature"] = delta["signature"].clone(),
                    Some("input_json_delta") => {
                        partial.push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    _ => {}
                }
            }
            (Some("content_block_stop"), Some(index)) => {
                if let Some((block, partial)) = blocks.get_mut(index)
                    && !partial.is_empty()
                {
                    block["input"] = serde_json::from_str(partial)
                        .unwrap_or_else(|_| Value::Object(serde_json::Map::new()));
                }
            }
            _ => {}
        }
    }

    fn finish(&self) -> Value {
        json!({
            "content": self.0.iter().map(|(block, _)| block.clone()).collect::<Vec<_>>()
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::RECOVERY_TOOL;
    use crate::api::Api;
    use crate::stream::{Decision, Turn, decide};
    use serde_json::json;

    #[test]
    fn an_anthropic_tool_call_is_rebuilt_from_its_deltas() {
        let mut turn = Turn::new(Api::AnthropicMessages);
        let events = [
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "thinking_delta", "thinking": "Row 17."}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "signature_delta", "signature": "sig"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1,
                   "content_block": {"type": "tool_use", "id": "t1", "name": RECOVERY_TOOL, "input": {}}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"key\": \"k"}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
        ];
        let decisions: Vec<Decision> = events
            .iter()
            .map(|event| {
                turn.feed(event);
                decide(Api::AnthropicMessages, Some(event))
            })
            .collect();
        assert_eq!(decisions[0], Decision::Undecided, "thinking says nothing");
        assert_eq!(decisions[4], Decision::Ours);
        assert_eq!(
            turn.finish(),
            json!({"content": [
                {"type": "thinking", "thinking": "Row 17.", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": RECOVERY_TOOL, "input": {"key": "k"}}
            ]})
        );
    }
}
