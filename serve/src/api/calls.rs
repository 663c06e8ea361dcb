//! What the APIs' answers call, and what the proxy answers: the types every API's recovery
//! rules ([`super::LlmApi::calls`], [`super::LlmApi::turns`]) read and write, and the readers
//! of an answer's JSON they share.

use serde_json::{Map, Value};

use parrot_recover::RECOVERY_TOOL;

/// Why the proxy cannot add its turns to a body: it sends what it has unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EditError(pub(crate) String);

impl From<parrot_json::Error> for EditError {
    fn from(err: parrot_json::Error) -> EditError {
        EditError(format!("body: {err}"))
    }
}

/// One call of [`RECOVERY_TOOL`] in a model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call's id (`tool_use` id, `tool_calls[].id`, `call_id`).
    pub id: String,
    /// Its arguments, as the model wrote them (`None`: not a JSON object).
    pub arguments: Option<Map<String, Value>>,
}

/// What a model's answer calls.
#[derive(Debug, Clone, PartialEq)]
pub enum Calls {
    /// No call of [`RECOVERY_TOOL`]: the answer goes to the client as it is.
    None,
    /// Calls of [`RECOVERY_TOOL`] and of no other tool: the proxy answers them.
    Ours(Vec<Call>),
    /// Calls of [`RECOVERY_TOOL`] and of the client's tools, or an answer with several choices
    /// (Chat Completions' `n`) calling it: the client gets it [`strip`](crate::recovery::strip)ped.
    Mixed,
}

/// The answer to one call: its id, the text, and whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The call's id.
    pub id: String,
    /// The retrieval (header line, then the original or its selected part), or the error.
    pub text: String,
    /// Whether `text` is an error (unknown key, bad selector, store failure).
    pub is_error: bool,
}

/// The calls found in an answer so far, sorted into the recovery tool's and the others.
#[derive(Debug, Default)]
pub(crate) struct Found {
    ours: Vec<Call>,
    theirs: usize,
}

impl Found {
    /// Counts one call of the tool `name`, with its `id` and `arguments`.
    pub(crate) fn push(
        &mut self,
        name: Option<&str>,
        id: Option<&str>,
        arguments: Option<Map<String, Value>>,
    ) {
        if name == Some(RECOVERY_TOOL) {
            self.ours.push(Call {
                id: id.unwrap_or_default().to_owned(),
                arguments,
            });
        } else {
            self.theirs += 1;
        }
    }

    /// Whether a call of the recovery tool was found.
    pub(crate) fn any_ours(&self) -> bool {
        !self.ours.is_empty()
    }

    /// What the calls found make of the answer.
    pub(crate) fn calls(self) -> Calls {
        match (self.ours.is_empty(), self.theirs) {
            (true, _) => Calls::None,
            (false, 0) => Calls::Ours(self.ours),
            (false, _) => Calls::Mixed,
        }
    }
}

/// The array member `name` of `value` (empty when it is not one).
pub(crate) fn array<'v>(value: &'v Value, name: &str) -> &'v [Value] {
    value
        .get(name)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The string member `name` of `value`.
pub(crate) fn str_of<'v>(value: &'v Value, name: &str) -> Option<&'v str> {
    value.get(name).and_then(Value::as_str)
}

/// Takes out of the array `member` of `response` every item of type `call_type` that calls
/// [`crate::RECOVERY_TOOL`] by its `name` (the answer's other items stay, in order).
pub(crate) fn drop_recovery_calls(response: &mut Value, member: &str, call_type: &str) {
    if let Some(Value::Array(items)) = response.get_mut(member) {
        items.retain(|item| {
            !(str_of(item, "type") == Some(call_type)
                && str_of(item, "name") == Some(crate::RECOVERY_TOOL))
        });
    }
}

/// A call's `arguments`: a JSON string holding an object.
pub(crate) fn arguments_of(arguments: Option<&Value>) -> Option<Map<String, Value>> {
    match arguments? {
        Value::String(text) => serde_json::from_str(text).ok(),
        Value::Object(map) => Some(map.clone()),
        _ => None,
    }
}
