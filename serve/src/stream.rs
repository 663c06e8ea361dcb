//! Streamed answers to a request the recovery tool was added to: the server-sent events are
//! held only until the first content block (Anthropic), the first delta with content or a tool
//! call (Chat Completions), or the first output item (Responses) shows whether the model calls
//! [`RECOVERY_TOOL`]. Thinking and reasoning blocks before it are held too (they come first,
//! and say nothing about the call). If the model does not call it, the held events go to the
//! client at once and the rest as it arrives. If it does, the whole stream is read, the model's
//! turn rebuilt from its events, and the calls answered as for an answer that is not streamed.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming};
use parrot_host::llm::Api;
use serde_json::{Map, Value, json};

use crate::RECOVERY_TOOL;
use crate::relay::BoxError;

/// What the events so far say about the model's first call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Nothing yet: keep holding.
    Undecided,
    /// The first content is a call of [`RECOVERY_TOOL`].
    Ours,
    /// The first content is something else: relay.
    Theirs,
}

/// Splits a stream of bytes into the `data` of server-sent events.
#[derive(Debug, Default)]
pub(crate) struct Events {
    line: Vec<u8>,
    data: Option<String>,
}

impl Events {
    /// The data of each event that `bytes` completes.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut done = Vec::new();
        for &byte in bytes {
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let line = String::from_utf8_lossy(&line);
            let line = line.strip_suffix('\r').unwrap_or(&line);
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    done.push(data);
                }
            } else if let Some(value) = line.strip_prefix("data:") {
                let value = value.strip_prefix(' ').unwrap_or(value);
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_owned()),
                }
            }
        }
        done
    }
}

/// What one event says (its data parsed; `None`: not JSON, as Chat's `[DONE]`).
pub(crate) fn decide(api: Api, event: Option<&Value>) -> Decision {
    let Some(event) = event else {
        return Decision::Theirs;
    };
    let kind = event.get("type").and_then(Value::as_str);
    let ours = |name: Option<&Value>| {
        if name.and_then(Value::as_str) == Some(RECOVERY_TOOL) {
            Decision::Ours
        } else {
            Decision::Theirs
        }
    };
    match api {
        Api::AnthropicMessages => match kind {
            Some("content_block_start") => {
                let block = &event["content_block"];
                match block.get("type").and_then(Value::as_str) {
                    Some("thinking" | "redacted_thinking") => Decision::Undecided,
                    Some("tool_use") => ours(block.get("name")),
                    _ => Decision::Theirs,
                }
            }
            Some("message_stop" | "error") => Decision::Theirs,
            _ => Decision::Undecided,
        },
        Api::OpenAiChat => {
            let Some(choice) = event.get("choices").and_then(|c| c.get(0)) else {
                return Decision::Undecided;
            };
            let delta = &choice["delta"];
            if let Some(call) = delta.get("tool_calls").and_then(|calls| calls.get(0)) {
                return ours(call.get("function").and_then(|f| f.get("name")));
            }
            let has_text = delta
                .get("content")
                .and_then(Value::as_str)
                .is_some_and(|text| !text.is_empty());
            if has_text || !choice["finish_reason"].is_null() {
                Decision::Theirs
            } else {
                Decision::Undecided
            }
        }
        _ => match kind {
            Some("response.output_item.added") => {
                let item = &event["item"];
                match item.get("type").and_then(Value::as_str) {
                    Some("reasoning") => Decision::Undecided,
                    Some("function_call") => ours(item.get("name")),
                    _ => Decision::Theirs,
                }
            }
            Some("response.completed" | "response.failed" | "response.incomplete" | "error") => {
                Decision::Theirs
            }
            _ => Decision::Undecided,
        },
    }
}

/// The model's turn, rebuilt from a stream's events, in the shape of the API's answer that is
/// not streamed (what [`crate::recovery::calls`] and [`crate::recovery::follow_up`] read).
#[derive(Debug)]
pub(crate) struct Turn {
    api: Api,
    /// Anthropic: the content blocks, and each one's partial JSON input.
    blocks: Vec<(Value, String)>,
    /// Chat: the text, and the tool calls (arguments as text).
    content: Option<String>,
    calls: Vec<Value>,
    /// Responses: the response the `response.completed` event carries.
    response: Option<Value>,
}

impl Turn {
    pub(crate) fn new(api: Api) -> Turn {
        Turn {
            api,
            blocks: Vec::new(),
            content: None,
            calls: Vec::new(),
            response: None,
        }
    }

    pub(crate) fn feed(&mut self, event: &Value) {
        match self.api {
            Api::AnthropicMessages => self.feed_anthropic(event),
            Api::OpenAiChat => self.feed_chat(event),
            _ => {
                if event.get("type").and_then(Value::as_str) == Some("response.completed") {
                    self.response = event.get("response").cloned();
                }
            }
        }
    }

    fn feed_anthropic(&mut self, event: &Value) {
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok());
        match (event.get("type").and_then(Value::as_str), index) {
            (Some("content_block_start"), Some(index)) => {
                if self.blocks.len() <= index {
                    self.blocks.resize(index + 1, (Value::Null, String::new()));
                }
                self.blocks[index] = (event["content_block"].clone(), String::new());
            }
            (Some("content_block_delta"), Some(index)) => {
                let Some((block, partial)) = self.blocks.get_mut(index) else {
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
                if let Some((block, partial)) = self.blocks.get_mut(index)
                    && !partial.is_empty()
                {
                    block["input"] =
                        serde_json::from_str(partial).unwrap_or_else(|_| Value::Object(Map::new()));
                }
            }
            _ => {}
        }
    }

    fn feed_chat(&mut self, event: &Value) {
        let Some(delta) = event
            .get("choices")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("delta"))
        else {
            return;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.get_or_insert_with(String::new).push_str(text);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(self.calls.len());
            if self.calls.len() <= index {
                self.calls.resize(
                    index + 1,
                    json!({"id": "", "type": "function", "function": {"name": "", "arguments": ""}}),
                );
            }
            let entry = &mut self.calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                entry["id"] = Value::from(id);
            }
            let function = &call["function"];
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                entry["function"]["name"] = Value::from(name);
            }
            if let Some(more) = function.get("arguments").and_then(Value::as_str) {
                let arguments = entry["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
                    + more;
                entry["function"]["arguments"] = Value::String(arguments);
            }
        }
    }

    /// The turn as the API's answer.
    pub(crate) fn finish(self) -> Value {
        match self.api {
            Api::AnthropicMessages => json!({
                "content": self.blocks.into_iter().map(|(block, _)| block).collect::<Vec<_>>()
            }),
            Api::OpenAiChat => {
                let mut message = json!({"role": "assistant", "content": self.content});
                if !self.calls.is_empty() {
                    message["tool_calls"] = Value::Array(self.calls);
                }
                json!({"choices": [{"index": 0, "message": message}]})
            }
            _ => self.response.unwrap_or_else(|| json!({"output": []})),
        }
    }
}

/// A response body: bytes already read, then the rest of the upstream's body as it arrives.
pub(crate) struct Prefixed {
    pub(crate) prefix: Option<Bytes>,
    pub(crate) rest: Option<Incoming>,
}

impl Body for Prefixed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(prefix) = self.prefix.take()
            && !prefix.is_empty()
        {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        match self.rest.as_mut() {
            None => Poll::Ready(None),
            Some(rest) => Pin::new(rest)
                .poll_frame(cx)
                .map(|frame| frame.map(|frame| frame.map_err(BoxError::from))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_across_chunks_and_lines() {
        let mut events = Events::default();
        assert!(events.push(b"event: a\ndata: {\"x\"").is_empty());
        assert_eq!(
            events.push(b": 1}\r\n\r\ndata: [DONE]\n\n"),
            ["{\"x\": 1}", "[DONE]"]
        );
        assert_eq!(events.push(b"data: one\ndata: two\n\n"), ["one\ntwo"]);
    }

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

    #[test]
    fn a_chat_tool_call_is_rebuilt_from_its_deltas() {
        let mut turn = Turn::new(Api::OpenAiChat);
        let first = json!({"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}]});
        assert_eq!(decide(Api::OpenAiChat, Some(&first)), Decision::Undecided);
        let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1",
            "type": "function", "function": {"name": RECOVERY_TOOL, "arguments": "{\"ke"}}]}}]});
        assert_eq!(decide(Api::OpenAiChat, Some(&call)), Decision::Ours);
        let more = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "function": {"arguments": "y\": \"k\"}"}}]}}]});
        for event in [&first, &call, &more] {
            turn.feed(event);
        }
        assert_eq!(
            turn.finish()["choices"][0]["message"]["tool_calls"][0],
            json!({"id": "c1", "type": "function",
                   "function": {"name": RECOVERY_TOOL, "arguments": "{\"key\": \"k\"}"}})
        );
        let text =
            json!({"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]});
        assert_eq!(decide(Api::OpenAiChat, Some(&text)), Decision::Theirs);
        assert_eq!(decide(Api::OpenAiChat, None), Decision::Theirs, "[DONE]");
    }
}
