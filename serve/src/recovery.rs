//! The recovery tool in the loop: [`RECOVERY_TOOL`] offered to the model, and its calls
//! answered by the proxy.
//!
//! # The tool
//!
//! [`definition`] is the MCP proxy's tool ([`parrot_recover::recovery_tool_definition`]: the same
//! description, schema and selectors) in each API's format: Anthropic's
//! `{"name", "description", "input_schema"}`, Chat Completions'
//! `{"type": "function", "function": {"name", "description", "parameters"}}`, and the
//! Responses API's `{"type": "function", "name", "description", "parameters", "strict": false}`
//! (not strict: the selectors are optional, which strict mode does not allow). [`add_tool`]
//! appends it to the request's `tools`.
//!
//! # When the tool is offered
//!
//! In every request of the three APIs that defines `tools`, whether or not the request carries
//! a pointer yet: `tools` opens the prompt cache's prefix, so a conversation's tools are the
//! same bytes from its first request on. A request without `tools` gets it only when it needs
//! it (a `_tee` pointer, or recovery calls put back, below); Messages' `count_tokens` only when
//! calls of it were put back (a request holding them must define it): a count is not where
//! calls are answered, and counts what the client sent (Claude Code counts a file's text with
//! `"tools": []`). A host without a tee store never offers it.
//!
//! # The turns the proxy adds
//!
//! When the model's answer calls [`RECOVERY_TOOL`] and no tool of the client's ([`calls`] says
//! [`Calls::Ours`]; text and thinking blocks may come before the calls), each call is answered
//! from the tee store in the request's namespace ([`parrot_recover::Recover::recover_for_model_in`]:
//! the retrieval's header line and the part asked for; a bad selector, or a key the namespace
//! does not hold, is a tool error naming it), and
//! [`follow_up`] appends to the conversation:
//!
//! - Anthropic Messages: the answer's `content` as an `assistant` message, then a `user`
//!   message of one `tool_result` block per call (`"is_error": true` for an error);
//! - Chat Completions: the answer's message as an `assistant` message (`role`, `content` and
//!   `tool_calls` only), then one `role: "tool"` message per call;
//! - Responses: the answer's `output` items, then one `function_call_output` item per call (an
//!   `input` that is a string becomes a `user` message first).
//!
//! The appended text goes after the last element of `messages` / `input`; every earlier byte is
//! the request's, so the follow-up shares the request's cached prefix.
//!
//! # What the client receives
//!
//! Anthropic Messages: one assistant message, *merged* over the rounds — the blocks of each
//! answered turn before its first call of [`RECOVERY_TOOL`], then the last answer's blocks (its
//! `stop_reason` and `usage` are the last answer's). The proxy remembers what it answered, and
//! puts the calls and their answers back at the same place, the same bytes, in every later
//! request that holds the merged message, so the model sees the retrieval again in later turns
//! and does not ask for it twice (the merge module's docs say how a message is recognised, and
//! what is not put back: a proxy restarted since, a message the client changed).
//!
//! Chat Completions and Responses: the last answer alone; the proxy's turns (the calls and
//! their answers) go back just before that answer's message (Chat) or first output item
//! (Responses) in every later request that holds it, the same bytes as the follow-up's. (A
//! Responses client that chains with `previous_response_id` needs nothing put back: the API
//! keeps the follow-up's input, turns included.)
//!
//! # An answer that mixes the proxy's tool with the client's
//!
//! The proxy cannot answer the client's calls, and the client cannot answer the proxy's (an
//! agent answers a call of a tool it does not know with an error, or stops: the OpenAI Agents
//! SDK raises). So the client receives the answer without the calls of [`RECOVERY_TOOL`]
//! ([`strip`]): it sees only calls of its own tools, answers them, and its next request is a
//! well-formed conversation, one in which the model did not ask for the original; it can ask
//! again. Nothing else of the answer changes (it is re-serialized, so its whitespace may).
//!
//! # Streamed answers
//!
//! Anthropic: the events go to the client as they arrive until a block calls
//! [`RECOVERY_TOOL`]; from that block on, the round's events are held until the message ends.
//! A turn that calls only the proxy's tool is answered, and the follow-up's events continue the
//! same message (its `message_start` left out, its blocks numbered after those the client
//! has); a turn that also calls the client's tools reaches the client without the proxy's
//! blocks, the others renumbered.
//!
//! Chat Completions and Responses: the proxy holds the answer's events only until the first
//! delta with text or a tool call (Chat Completions), or the first output item that is not
//! reasoning (Responses) shows whether the model calls [`RECOVERY_TOOL`]. If not, the held
//! events go to the client at once and the rest as it arrives. If so, the proxy reads the
//! whole stream, rebuilds the model's turn from its events (tool calls with their arguments;
//! the Responses API's `response.completed` event carries the whole response), answers the
//! calls and sends the follow-up, itself streamed: the client receives the events of the last
//! answer only. A stream whose first call is [`RECOVERY_TOOL`] but that also calls the
//! client's tools is relayed as it came: the client then sees a call of a tool it does not
//! have, which agents answer with an error (and the model can call it again).
//!
//! A stream the upstream drops reaches the client as what came before the drop, then
//! dropped (an agent retries), in every API; a follow-up the upstream refuses ends an Anthropic
//! stream with the upstream's error as an `error` event.

use std::sync::OnceLock;

use crate::llm::Api;
use parrot_host::{Host, Namespace};
use parrot_recover::{Recover, RetrieveError, Selector, recovery_tool_definition};
use serde_json::Value;

pub use crate::api::calls::{Answer, Call, Calls, EditError};
pub use parrot_recover::RECOVERY_TOOL;

/// The definition of [`RECOVERY_TOOL`] in `api`'s format, as the bytes [`add_tool`] inserts
/// (the same every time: the prompt cache depends on it).
pub fn definition(api: Api) -> &'static str {
    static DEFINITIONS: OnceLock<[String; Api::ALL.len()]> = OnceLock::new();
    let definitions = DEFINITIONS.get_or_init(|| {
        let mcp = recovery_tool_definition();
        Api::ALL.map(|api| {
            api.rules()
                .tool(&mcp["description"], &mcp["inputSchema"])
                .to_string()
        })
    });
    let at = Api::ALL
        .iter()
        .position(|known| *known == api)
        .unwrap_or_default();
    &definitions[at]
}

/// The body with [`definition`] appended to `tools` (created as the last member when absent),
/// or `None` when the client defines a tool named [`RECOVERY_TOOL`] itself (its own is left in
/// charge: nothing is added).
///
/// # Errors
///
/// A body whose top level is not an object, or whose `tools` is not an array.
pub fn add_tool(api: Api, body: &[u8]) -> Result<Option<Vec<u8>>, EditError> {
    let text = std::str::from_utf8(body).map_err(|err| EditError(format!("body: {err}")))?;
    let root = object_at(text)?;
    let members = parrot_json::members(text, root.start)?;
    let tool = definition(api);
    let Some(tools) = members.iter().find(|member| member.name.is("tools")) else {
        let (at, insert) = match members.last() {
            Some(last) => (last.value.end, format!(",\"tools\":[{tool}]")),
            None => (root.end - 1, format!("\"tools\":[{tool}]")),
        };
        return Ok(Some(insert_at(text, at, &insert)));
    };
    let tools = tools.value.clone();
    if text.as_bytes().get(tools.start) != Some(&b'[') {
        return Err(EditError("tools: expected an array".to_owned()));
    }
    let existing: Vec<Value> = serde_json::from_str(&text[tools.clone()])
        .map_err(|err| EditError(format!("tools: {err}")))?;
    if existing
        .iter()
        .any(|tool| api.rules().tool_name(tool) == Some(RECOVERY_TOOL))
    {
        return Ok(None);
    }
    Ok(Some(append_elements(text, tools, &[tool.to_owned()])?))
}

/// Whether the body's top level has a `tools` member.
pub fn has_tools(body: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(body) else {
        return false;
    };
    let Ok(root) = object_at(text) else {
        return false;
    };
    parrot_json::members(text, root.start)
        .is_ok_and(|members| members.iter().any(|member| member.name.is("tools")))
}

/// Whether the body's top level has `"stream": true`.
pub fn streams(body: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(body) else {
        return false;
    };
    let Ok(root) = object_at(text) else {
        return false;
    };
    parrot_json::members(text, root.start).is_ok_and(|members| {
        members
            .iter()
            .any(|member| member.name.is("stream") && &text[member.value.clone()] == "true")
    })
}

/// The calls in an answer of `api` (a parsed response body).
pub fn calls(api: Api, response: &Value) -> Calls {
    api.rules().calls(response)
}

/// Removes every call of [`RECOVERY_TOOL`] from an answer of `api`.
pub fn strip(api: Api, response: &mut Value) {
    api.rules().strip(response);
}

/// Answers `call` from `host`'s tee store in `namespace` (the request's: originals stored
/// with another API key are not found), as the MCP proxy answers it
/// ([`Recover::recover_for_model_in`]: held to the host's cap on one answer, so a model's
/// `max_chars: 0` cannot make the follow-up carry a whole 100 MB original upstream).
pub fn answer(host: &Host, namespace: Option<&Namespace>, call: &Call) -> Answer {
    let error = |text: String| Answer {
        id: call.id.clone(),
        text,
        is_error: true,
    };
    let Some(arguments) = &call.arguments else {
        return error(format!(
            "{RECOVERY_TOOL} needs the arguments {{\"key\": string}}: the key of a \"_tee\" pointer"
        ));
    };
    let (key, selector) = match Selector::from_arguments(arguments) {
        Ok(found) => found,
        Err(err) => return error(err.to_string()),
    };
    match host.recover_for_model_in(namespace, &key, &selector) {
        Ok(retrieval) => Answer {
            id: call.id.clone(),
            text: retrieval.text(),
            is_error: false,
        },
        Err(RetrieveError::Tee(err)) => error(format!(
            "cannot read the original stored under \"{key}\": {err}"
        )),
        Err(err) => error(err.to_string()),
    }
}

/// A follow-up request, and the turns it appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    /// The request's body.
    pub body: Vec<u8>,
    /// The appended elements of `messages` / `input`, one JSON text each, as `body` has them:
    /// the model's turn, then the answers.
    pub turns: Vec<String>,
}

/// The follow-up request: `body` (the request just sent) with the model's turn from `response`
/// and the `answers` appended to the conversation; every byte before them is `body`'s.
///
/// # Errors
///
/// A body without the conversation array, or a response without the turn.
pub fn follow_up(
    api: Api,
    body: &[u8],
    response: &Value,
    answers: &[Answer],
) -> Result<FollowUp, EditError> {
    let text = std::str::from_utf8(body).map_err(|err| EditError(format!("body: {err}")))?;
    let root = object_at(text)?;
    let members = parrot_json::members(text, root.start)?;
    let list = api.rules().conversation();
    let span = members
        .iter()
        .find(|member| member.name.is(list))
        .map(|member| member.value.clone())
        .ok_or_else(|| EditError(format!("body: no \"{list}\" member")))?;
    let turns = api.rules().turns(response, answers)?;
    let turns: Vec<String> = turns.iter().map(Value::to_string).collect();
    let first = text.as_bytes().get(span.start);
    let opening = (first == Some(&b'"'))
        .then(|| api.rules().opening_message(&text[span.clone()]))
        .flatten();
    let body = match (first, opening) {
        (Some(b'['), _) => append_elements(text, span, &turns)?,
        // A conversation given as a string (a Responses `input`): its message, then the turns.
        (_, Some(message)) => {
            let array = format!("[{message},{}]", turns.join(","));
            let mut out = String::with_capacity(text.len() + array.len());
            out.push_str(&text[..span.start]);
            out.push_str(&array);
            out.push_str(&text[span.end..]);
            out.into_bytes()
        }
        _ => return Err(EditError(format!("{list}: expected an array"))),
    };
    Ok(FollowUp { body, turns })
}

/// The span of the top-level value, which must be an object.
fn object_at(text: &str) -> Result<std::ops::Range<usize>, EditError> {
    let root = parrot_json::value_span(text)?;
    if text.as_bytes().get(root.start) != Some(&b'{') {
        return Err(EditError("body: expected a JSON object".to_owned()));
    }
    Ok(root)
}

/// `text` with `elements` appended to the array at `span`.
fn append_elements(
    text: &str,
    span: std::ops::Range<usize>,
    elements: &[String],
) -> Result<Vec<u8>, EditError> {
    let existing = parrot_json::elements(text, span.start)?;
    let joined = elements.join(",");
    Ok(match existing.last() {
        Some(last) => insert_at(text, last.end, &format!(",{joined}")),
        None => insert_at(text, span.end - 1, &joined),
    })
}

fn insert_at(text: &str, at: usize, insert: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + insert.len());
    out.extend_from_slice(&text.as_bytes()[..at]);
    out.extend_from_slice(insert.as_bytes());
    out.extend_from_slice(&text.as_bytes()[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tool_is_appended_to_tools_or_added_as_the_last_member() {
        let body = br#"{"model": "m", "tools": [{"name": "sql"}], "messages": []}"#;
        let added = String::from_utf8(add_tool(Api::AnthropicMessages, body).unwrap().unwrap());
        let anthropic = definition(Api::AnthropicMessages);
        assert_eq!(
            added.unwrap(),
            format!(
                r#"{{"model": "m", "tools": [{{"name": "sql"}},{anthropic}], "messages": []}}"#
            )
        );
        let body = br#"{"model": "m", "messages": [] }"#;
        let added = String::from_utf8(add_tool(Api::OpenAiChat, body).unwrap().unwrap()).unwrap();
        let chat = definition(Api::OpenAiChat);
        assert_eq!(
            added,
            format!(r#"{{"model": "m", "messages": [],"tools":[{chat}] }}"#)
        );
        let empty = br#"{"tools": [ ]}"#;
        let added = String::from_utf8(add_tool(Api::OpenAiResponses, empty).unwrap().unwrap());
        assert_eq!(
            added.unwrap(),
            format!(r#"{{"tools": [ {}]}}"#, definition(Api::OpenAiResponses))
        );
    }

    #[test]
    fn a_client_tool_of_the_same_name_is_left_in_charge() {
        let body = br#"{"tools": [{"type": "function", "function": {"name": "wm_get_result"}}]}"#;
        assert_eq!(add_tool(Api::OpenAiChat, body).unwrap(), None);
        let body = br#"{"tools": {"name": "x"}}"#;
        assert_eq!(
            add_tool(Api::AnthropicMessages, body)
                .unwrap_err()
                .to_string(),
            "tools: expected an array"
        );
    }

    #[test]
    fn the_definitions_carry_the_mcp_schema() {
        let mcp = recovery_tool_definition();
        let anthropic: Value = serde_json::from_str(definition(Api::AnthropicMessages)).unwrap();
        assert_eq!(anthropic["input_schema"], mcp["inputSchema"]);
        let chat: Value = serde_json::from_str(definition(Api::OpenAiChat)).unwrap();
        assert_eq!(chat["function"]["parameters"], mcp["inputSchema"]);
        let responses: Value = serde_json::from_str(definition(Api::OpenAiResponses)).unwrap();
        assert_eq!(responses["parameters"], mcp["inputSchema"]);
        assert_eq!(responses["strict"], false);
    }

    #[test]
    fn calls_say_whether_only_the_recovery_tool_is_called() {
        let ours = json!({"content": [
            {"type": "text", "text": "Let me see."},
            {"type": "tool_use", "id": "t1", "name": RECOVERY_TOOL, "input": {"key": "k"}}
        ]});
        let found = calls(Api::AnthropicMessages, &ours);
        let key = json!({"key": "k"}).as_object().cloned();
        assert_eq!(
            found,
            Calls::Ours(vec![Call {
                id: "t1".to_owned(),
                arguments: key
            }])
        );
        let mut mixed = json!({"content": [
            {"type": "tool_use", "id": "t1", "name": RECOVERY_TOOL, "input": {"key": "k"}},
            {"type": "tool_use", "id": "t2", "name": "sql", "input": {}}
        ]});
        assert_eq!(calls(Api::AnthropicMessages, &mixed), Calls::Mixed);
        strip(Api::AnthropicMessages, &mut mixed);
        assert_eq!(
            mixed,
            json!({"content": [{"type": "tool_use", "id": "t2", "name": "sql", "input": {}}]})
        );
        let none = json!({"output": [{"type": "message", "content": []}]});
        assert_eq!(calls(Api::OpenAiResponses, &none), Calls::None);
    }
}
