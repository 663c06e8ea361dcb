//! OpenAI's Responses API, `POST /v1/responses`.

use serde_json::{Value, json};

use super::LlmApi;
use super::calls::{Answer, Calls, EditError, Found, arguments_of, drop_recovery_calls, str_of};
use super::targets::{
    CallNames, Origin, Path, RewriteError, Target, object, optional, required, shape, string, texts,
};
use super::tree::Node;

/// OpenAI's Responses API.
pub(crate) struct OpenAiResponses;

/// The members the request rules read.
const KEEP: &[&str] = &["input", "type", "call_id", "name", "output", "text"];

/// What a tool result's content may hold: the type of its text parts, and what the API allows
/// there (for the error).
const INPUT_PARTS: (&str, &str) = ("input_text", "a string or an array of content parts");

impl LlmApi for OpenAiResponses {
    fn name(&self) -> &'static str {
        "OpenAI Responses"
    }

    fn short_name(&self) -> &'static str {
        "openai-responses"
    }

    fn path(&self) -> &'static str {
        "/v1/responses"
    }

    fn keep(&self) -> &'static [&'static str] {
        KEEP
    }

    /// The `output` of each `function_call_output` (and `custom_tool_call_output`) item of
    /// `input`, named by the earlier `function_call` (or `custom_tool_call`) item with its
    /// `call_id`.
    fn targets<'a>(&self, root: &Node<'a>) -> Result<Vec<Target<'a>>, RewriteError> {
        let body = Path::Body;
        object(root, body, "an object")?;
        let items_path = body.name("input");
        let items = match optional(root, "input") {
            None | Some(Node::String(..)) => return Ok(Vec::new()),
            Some(Node::Array(items)) => items,
            Some(other) => {
                return Err(shape(
                    items_path,
                    "a string or an array of input items",
                    other,
                ));
            }
        };
        let mut calls = CallNames::new();
        let mut targets = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let path = items_path.index(index);
            object(item, path, "an input item (an object)")?;
            // A message may be given without its type.
            if optional(item, "type").is_none() {
                continue;
            }
            match string(item, "type", path)?.as_ref() {
                "function_call" | "custom_tool_call" => {
                    let id = string(item, "call_id", path)?;
                    calls.insert(id, string(item, "name", path)?);
                }
                "function_call_output" | "custom_tool_call_output" => {
                    let id = string(item, "call_id", path)?;
                    let tool = calls.get(&id).cloned();
                    texts(
                        required(item, "output", path)?,
                        path.name("output"),
                        INPUT_PARTS,
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

    /// `{"type": "function", "name", "description", "parameters", "strict": false}` (not
    /// strict: the selectors are optional, which strict mode does not allow).
    fn tool(&self, description: &Value, schema: &Value) -> Value {
        json!({
            "type": "function",
            "name": crate::RECOVERY_TOOL,
            "description": description,
            "parameters": schema,
            "strict": false,
        })
    }

    fn tool_name<'v>(&self, tool: &'v Value) -> Option<&'v str> {
        str_of(tool, "name")
    }

    fn conversation(&self) -> &'static str {
        "input"
    }

    /// An `input` given as a string is the user's message.
    fn opening_message(&self, literal: &str) -> Option<String> {
        Some(format!("{{\"role\":\"user\",\"content\":{literal}}}"))
    }

    /// The `function_call` items of the answer's `output`.
    fn calls(&self, response: &Value) -> Calls {
        let mut found = Found::default();
        for item in super::calls::array(response, "output") {
            if item.get("type").and_then(Value::as_str) == Some("function_call") {
                found.push(
                    str_of(item, "name"),
                    str_of(item, "call_id"),
                    arguments_of(item.get("arguments")),
                );
            }
        }
        found.calls()
    }

    fn strip(&self, response: &mut Value) {
        drop_recovery_calls(response, "output", "function_call");
    }

    /// The response's output items, then one function call output per answer.
    fn turns(&self, response: &Value, answers: &[Answer]) -> Result<Vec<Value>, EditError> {
        let output = response
            .get("output")
            .and_then(Value::as_array)
            .ok_or_else(|| EditError("response: no \"output\" array".to_owned()))?;
        let mut turns: Vec<Value> = output.clone();
        for answer in answers {
            turns.push(json!({
                "type": "function_call_output",
                "call_id": answer.id,
                "output": answer.text,
            }));
        }
        Ok(turns)
    }

    #[cfg(feature = "proxy")]
    fn sent_back<'v>(&self, answer: &'v Value) -> Option<&'v Value> {
        answer.pointer("/output/0")
    }

    /// Any item but a call's output and the messages of the user, system and developer.
    #[cfg(feature = "proxy")]
    fn is_answer(&self, element: &Value) -> bool {
        let is =
            |name: &str, wanted: &str| element.get(name).and_then(Value::as_str) == Some(wanted);
        element.is_object()
            && !is("type", "function_call_output")
            && !is("role", "user")
            && !is("role", "system")
            && !is("role", "developer")
    }

    #[cfg(feature = "proxy")]
    fn written(&self, element: &Value) -> Option<Value> {
        Some(written(element))
    }

    /// A call's output, a message's role and texts (a part without text, unmarked), or what
    /// the model wrote in another item.
    #[cfg(feature = "proxy")]
    fn canonical(&self, message: &Value) -> Value {
        use super::unmarked;
        match message.get("type").and_then(Value::as_str) {
            Some("function_call_output") => json!([
                "function_call_output",
                message.get("call_id"),
                message.get("output").map(unmarked)
            ]),
            Some("message") | None => {
                let content = match message.get("content") {
                    Some(Value::Array(parts)) => Value::Array(
                        parts
                            .iter()
                            .map(|part| part.get("text").cloned().unwrap_or_else(|| unmarked(part)))
                            .collect(),
                    ),
                    Some(Value::String(text)) => Value::Array(vec![Value::String(text.clone())]),
                    other => other.cloned().unwrap_or(Value::Null),
                };
                json!(["message", message.get("role"), content])
            }
            _ => written(message),
        }
    }

    /// The first output item that is not reasoning decides.
    #[cfg(feature = "proxy")]
    fn decide(&self, event: &Value) -> super::Decision {
        use super::Decision;
        match event.get("type").and_then(Value::as_str) {
            Some("response.output_item.added") => {
                let item = &event["item"];
                match item.get("type").and_then(Value::as_str) {
                    Some("reasoning") => Decision::Undecided,
                    Some("function_call") => super::ours(item.get("name")),
                    _ => Decision::Theirs,
                }
            }
            Some("response.completed" | "response.failed" | "response.incomplete" | "error") => {
                Decision::Theirs
            }
            _ => Decision::Undecided,
        }
    }

    #[cfg(feature = "proxy")]
    fn rebuild(&self) -> Box<dyn super::Rebuild> {
        Box::new(Completed::default())
    }
}

/// What the model wrote in an output item: a message's role and texts, a call's id, name and
/// arguments, another item's id.
#[cfg(feature = "proxy")]
fn written(value: &Value) -> Value {
    let pick = |names: &[&str]| -> Value {
        let mut out = serde_json::Map::new();
        for &name in names {
            if let Some(found) = value.get(name).filter(|v| !v.is_null()) {
                out.insert(name.to_owned(), found.clone());
            }
        }
        Value::Object(out)
    };
    match value.get("type").and_then(Value::as_str) {
        Some("function_call") => pick(&["type", "call_id", "name", "arguments"]),
        Some("message") | None => {
            let texts: Vec<Value> = value
                .get("content")
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(|p| p.get("text").cloned())
                        .collect()
                })
                .unwrap_or_default();
            json!(["message", value.get("role"), texts])
        }
        _ => pick(&["type", "id"]),
    }
}

/// A streamed response: the response its `response.completed` event carries.
#[cfg(feature = "proxy")]
#[derive(Debug, Default)]
struct Completed(Option<Value>);

#[cfg(feature = "proxy")]
impl super::Rebuild for Completed {
    fn feed(&mut self, event: &Value) {
        if event.get("type").and_then(Value::as_str) == Some("response.completed") {
            self.0 = event.get("response").cloned();
        }
    }

    fn finish(&self) -> Value {
        self.0.clone().unwrap_or_else(|| json!({"output": []}))
    }
}

#[cfg(test)]
mod tests {
    use crate::RECOVERY_TOOL;
    use crate::api::Api;
    use crate::recovery::{Answer, follow_up};
    use serde_json::{Value, json};

    #[test]
    fn a_responses_input_given_as_a_string_becomes_the_first_message() {
        let body = br#"{"model": "m", "input": "Hi", "tools": []}"#;
        let response = json!({"output": [{"type": "function_call", "call_id": "c1",
            "name": RECOVERY_TOOL, "arguments": "{\"key\": \"k\"}"}]});
        let answers = [Answer {
            id: "c1".to_owned(),
            text: "text".to_owned(),
            is_error: false,
        }];
        let next = follow_up(Api::OpenAiResponses, body, &response, &answers).unwrap();
        assert_eq!(next.turns.len(), 2, "the call and its answer");
        let next: Value = serde_json::from_slice(&next.body).unwrap();
        assert_eq!(
            next["input"],
            json!([
                {"role": "user", "content": "Hi"},
                {"type": "function_call", "call_id": "c1", "name": RECOVERY_TOOL,
                 "arguments": "{\"key\": \"k\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "text"}
            ])
        );
        assert_eq!(
            follow_up(Api::OpenAiChat, body, &response, &answers)
                .unwrap_err()
                .to_string(),
            "body: no \"messages\" member"
        );
    }
}
