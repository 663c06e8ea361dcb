//! OpenAI's Chat Completions API (and every API compatible with it), `POST /v1/chat/completions`.

use serde_json::{Value, json};

use super::LlmApi;
use super::calls::{Answer, Calls, EditError, Found, arguments_of, str_of};
use super::targets::{
    CallNames, Origin, Path, RewriteError, Target, array, object, optional, required, shape,
    string, texts,
};
use super::tree::Node;

/// OpenAI's Chat Completions API.
pub(crate) struct OpenAiChat;

/// The members the request rules read.
const KEEP: &[&str] = &[
    "messages",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "id",
    "function",
    "custom",
    "name",
    "type",
    "text",
];

/// What a tool result's content may hold: the type of its text parts, and what the API allows
/// there (for the error).
const PARTS: (&str, &str) = ("text", "a string or an array of content parts");

impl LlmApi for OpenAiChat {
    fn name(&self) -> &'static str {
        "OpenAI Chat Completions"
    }

    fn short_name(&self) -> &'static str {
        "openai-chat"
    }

    fn path(&self) -> &'static str {
        "/v1/chat/completions"
    }

    fn keep(&self) -> &'static [&'static str] {
        KEEP
    }

    /// The `content` of each `tool` message, named by the tool call of an earlier `assistant`
    /// message with its `tool_call_id`.
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
            match string(message, "role", path)?.as_ref() {
                "assistant" => declared(message, path, &mut calls)?,
                "tool" => {
                    let id = string(message, "tool_call_id", path)?;
                    let tool = calls.get(&id).cloned();
                    texts(
                        required(message, "content", path)?,
                        path.name("content"),
                        PARTS,
                        Origin {
                            tool,
                            is_error: false,
                        },
                        &mut targets,
                    )?;
                }
                _ => {}
            }
        }
        Ok(targets)
    }

    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    fn tool(&self, description: &Value, schema: &Value) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": crate::RECOVERY_TOOL,
                "description": description,
                "parameters": schema,
            },
        })
    }

    fn tool_name<'v>(&self, tool: &'v Value) -> Option<&'v str> {
        tool.get("function")
            .or_else(|| tool.get("custom"))
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
    }

    fn conversation(&self) -> &'static str {
        "messages"
    }

    /// The `tool_calls` of each choice's message; an answer with several choices calling the
    /// recovery tool is [`Calls::Mixed`].
    fn calls(&self, response: &Value) -> Calls {
        let mut found = Found::default();
        let choices = super::calls::array(response, "choices");
        for choice in choices {
            for call in choice
                .get("message")
                .map(|message| super::calls::array(message, "tool_calls"))
                .unwrap_or_default()
            {
                let function = call.get("function");
                found.push(
                    function.and_then(|f| str_of(f, "name")),
                    str_of(call, "id"),
                    function.and_then(|f| arguments_of(f.get("arguments"))),
                );
            }
        }
        if choices.len() > 1 && found.any_ours() {
            return Calls::Mixed;
        }
        found.calls()
    }

    fn strip(&self, response: &mut Value) {
        if let Some(Value::Array(choices)) = response.get_mut("choices") {
            for choice in choices {
                if let Some(Value::Array(calls)) = choice
                    .get_mut("message")
                    .and_then(|message| message.get_mut("tool_calls"))
                {
                    calls.retain(|call| {
                        call.get("function").and_then(|f| str_of(f, "name"))
                            != Some(crate::RECOVERY_TOOL)
                    });
                }
            }
        }
    }

    /// The assistant's message with its tool calls, then one tool turn per answer.
    fn turns(&self, response: &Value, answers: &[Answer]) -> Result<Vec<Value>, EditError> {
        let message = response
            .get("choices")
            .and_then(|choices| choices.get(0))
            .and_then(|choice| choice.get("message"))
            .ok_or_else(|| EditError("response: no choices[0].message".to_owned()))?;
        let mut turns = vec![json!({
            "role": "assistant",
            "content": message.get("content").cloned().unwrap_or(Value::Null),
            "tool_calls": message.get("tool_calls").cloned().unwrap_or(Value::Null),
        })];
        for answer in answers {
            turns.push(json!({
                "role": "tool",
                "tool_call_id": answer.id,
                "content": answer.text,
            }));
        }
        Ok(turns)
    }

    #[cfg(feature = "proxy")]
    fn sent_back<'v>(&self, answer: &'v Value) -> Option<&'v Value> {
        answer.pointer("/choices/0/message")
    }

    #[cfg(feature = "proxy")]
    fn is_answer(&self, element: &Value) -> bool {
        element.get("role").and_then(Value::as_str) == Some("assistant")
    }

    #[cfg(feature = "proxy")]
    fn written(&self, element: &Value) -> Option<Value> {
        Some(written(element))
    }

    /// The role, name and call id, and what was written (not the members a client adds when
    /// it sends a model's answer back: `refusal: null`).
    #[cfg(feature = "proxy")]
    fn canonical(&self, message: &Value) -> Value {
        let fields: Vec<Value> = ["role", "name", "tool_call_id"]
            .iter()
            .map(|name| message.get(name).cloned().unwrap_or(Value::Null))
            .collect();
        json!([fields, written(message)])
    }

    /// The first delta with text or a tool call decides.
    #[cfg(feature = "proxy")]
    fn decide(&self, event: &Value) -> super::Decision {
        use super::Decision;
        let Some(choice) = event.get("choices").and_then(|c| c.get(0)) else {
            return Decision::Undecided;
        };
        let delta = &choice["delta"];
        if let Some(call) = delta.get("tool_calls").and_then(|calls| calls.get(0)) {
            return super::ours(call.get("function").and_then(|f| f.get("name")));
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

    #[cfg(feature = "proxy")]
    fn rebuild(&self) -> Box<dyn super::Rebuild> {
        Box::new(Message::default())
    }
}

/// Adds the tool calls an `assistant` message at `path` declares to `calls`.
fn declared<'a>(
    message: &Node<'a>,
    path: Path<'_>,
    calls: &mut CallNames<'a>,
) -> Result<(), RewriteError> {
    let Some(list) = optional(message, "tool_calls") else {
        return Ok(());
    };
    let Node::Array(list) = list else {
        return Err(shape(
            path.name("tool_calls"),
            "an array of tool calls",
            list,
        ));
    };
    let list_path = path.name("tool_calls");
    for (index, call) in list.iter().enumerate() {
        let path = list_path.index(index);
        object(call, path, "a tool call (an object)")?;
        let id = string(call, "id", path)?;
        let (kind, function) = match (optional(call, "function"), optional(call, "custom")) {
            (Some(function), _) => ("function", function),
            (None, Some(custom)) => ("custom", custom),
            (None, None) => {
                return Err(RewriteError::Missing {
                    path: path.to_string(),
                    member: "function",
                });
            }
        };
        let function_path = path.name(kind);
        object(function, function_path, "an object")?;
        calls.insert(id, string(function, "name", function_path)?);
    }
    Ok(())
}

/// What the model wrote in a message: its content (an empty one as none) and its tool calls'
/// ids, names and arguments.
#[cfg(feature = "proxy")]
fn written(value: &Value) -> Value {
    let content = match value.get("content") {
        Some(Value::String(text)) if text.is_empty() => Value::Null,
        Some(content) => super::unmarked(content),
        None => Value::Null,
    };
    let calls: Vec<Value> = value
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|call| {
                    json!([
                        call.get("id"),
                        call.pointer("/function/name"),
                        call.pointer("/function/arguments")
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    json!([content, calls])
}

/// A streamed message: its text, and its tool calls (arguments as text).
#[cfg(feature = "proxy")]
#[derive(Debug, Default)]
struct Message {
    content: Option<String>,
    calls: Vec<Value>,
}

#[cfg(feature = "proxy")]
impl super::Rebuild for Message {
    fn feed(&mut self, event: &Value) {
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

    fn finish(&self) -> Value {
        let mut message = json!({"role": "assistant", "content": self.content});
        if !self.calls.is_empty() {
            message["tool_calls"] = Value::Array(self.calls.clone());
        }
        json!({"choices": [{"index": 0, "message": message}]})
    }
}

#[cfg(test)]
mod tests {
    use crate::RECOVERY_TOOL;
    use crate::api::Api;
    use crate::stream::{Decision, Turn, decide};
    use serde_json::json;

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
