//! The LLM APIs the proxy knows, one module each behind one trait, [`LlmApi`]: everything that
//! differs from one API to the next — the path it serves, where tool results are in a request,
//! the recovery tool's definition, the calls in an answer and the turns of a follow-up, what
//! the merge records fingerprint, how a streamed answer's events are read — is in the API's
//! module, and the rest of the crate asks the API through the trait.
//!
//! # Adding an API
//!
//! 1. Write a module next to these (`gemini.rs`): a unit struct implementing [`LlmApi`], with
//!    its unit tests in the module (its requests' tool results, its recovery calls and
//!    follow-up, its stream events).
//! 2. Register it here, in one place: a variant of [`Api`], its arm in [`Api::rules`], and the
//!    variant in [`Api::ALL`].
//!
//! Nothing else changes: the rewrite ([`crate::llm`]), the recovery rounds
//! ([`crate::recovery`]), the records put back into later requests and the streamed answers
//! read the API through the trait, and the Python package names it by [`LlmApi::short_name`].
//! Which upstream a request goes to is decided by its path and headers (see the crate
//! documentation): a provider other than Anthropic and OpenAI also needs its upstream there.

mod anthropic;
pub(crate) mod calls;
mod chat;
mod responses;
pub(crate) mod targets;
pub(crate) mod tree;

use serde_json::Value;

use calls::{Answer, Calls, EditError};
use targets::{RewriteError, Target};
use tree::Node;

/// The LLM APIs whose requests [`crate::llm::rewrite`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Api {
    /// Anthropic's Messages API, `POST /v1/messages`.
    AnthropicMessages,
    /// OpenAI's Chat Completions API (and every API compatible with it),
    /// `POST /v1/chat/completions`.
    OpenAiChat,
    /// OpenAI's Responses API, `POST /v1/responses`.
    OpenAiResponses,
}

impl Api {
    /// Every API, in the order [`Api::from_path`] and [`Api::from_short_name`] try them.
    pub const ALL: [Api; 3] = [
        Api::AnthropicMessages,
        Api::OpenAiChat,
        Api::OpenAiResponses,
    ];

    /// The module that implements the API: the one place an [`Api`] becomes its rules.
    pub(crate) fn rules(self) -> &'static dyn LlmApi {
        match self {
            Api::AnthropicMessages => &anthropic::AnthropicMessages,
            Api::OpenAiChat => &chat::OpenAiChat,
            Api::OpenAiResponses => &responses::OpenAiResponses,
        }
    }

    /// The API a `POST` to `path` (a request target's path, with or without its query string)
    /// calls; `None` for any other path. The method is the caller's to check: these endpoints
    /// take `POST` only.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_serve::llm::Api;
    ///
    /// assert_eq!(Api::from_path("/v1/messages?beta=true"), Some(Api::AnthropicMessages));
    /// assert_eq!(Api::from_path("/v1/chat/completions"), Some(Api::OpenAiChat));
    /// assert_eq!(Api::from_path("/v1/responses"), Some(Api::OpenAiResponses));
    /// assert_eq!(Api::from_path("/v1/messages/count_tokens"), None);
    /// ```
    pub fn from_path(path: &str) -> Option<Api> {
        let path = path.split_once('?').map_or(path, |(path, _)| path);
        Api::ALL.into_iter().find(|api| api.path() == path)
    }

    /// The API whose short name ([`Api::short_name`]) is `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_serve::llm::Api;
    ///
    /// assert_eq!(Api::from_short_name("openai-chat"), Some(Api::OpenAiChat));
    /// assert_eq!(Api::from_short_name("gemini"), None);
    /// ```
    pub fn from_short_name(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|api| api.short_name() == name)
    }

    /// The path of the API's endpoint.
    pub fn path(self) -> &'static str {
        self.rules().path()
    }

    /// The name callers outside Rust give the API (the Python package's `api=`): `anthropic`,
    /// `openai-chat`, `openai-responses`.
    pub fn short_name(self) -> &'static str {
        self.rules().short_name()
    }
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rules().name())
    }
}

/// One LLM API: what the proxy needs to know of its requests, its answers and its streams.
/// Each method reads or writes the API's own JSON; the code that calls them is the same for
/// every API.
pub(crate) trait LlmApi: Sync {
    /// The API's name in messages: `Anthropic Messages`.
    fn name(&self) -> &'static str;

    /// The name callers outside Rust give it ([`Api::short_name`]).
    fn short_name(&self) -> &'static str;

    /// The path of the endpoint whose requests are rewritten and whose answers can call the
    /// recovery tool.
    fn path(&self) -> &'static str;

    /// Another path that takes the same request body but whose answer calls no tool
    /// (Messages' `count_tokens`): its tool results are rewritten, and the recovery tool is
    /// added only where calls of it were put back.
    #[cfg(feature = "proxy")]
    fn counting_path(&self) -> Option<&'static str> {
        None
    }

    // The rewrite of a request's tool results (crate::llm).

    /// The members the API's request rules read; every other member is checked and skipped.
    fn keep(&self) -> &'static [&'static str];

    /// The strings of a request (read keeping [`LlmApi::keep`]) that are tool results' texts,
    /// each with the tool that produced it, in the order of the body.
    ///
    /// # Errors
    ///
    /// A body not shaped like the API's request where the rules read it.
    fn targets<'a>(&self, root: &Node<'a>) -> Result<Vec<Target<'a>>, RewriteError>;

    // The recovery tool and its calls (crate::recovery).

    /// The recovery tool's definition in the API's format, from the MCP tool's `description`
    /// and input `schema`.
    fn tool(&self, description: &Value, schema: &Value) -> Value;

    /// The name a tool definition of the API gives its tool.
    fn tool_name<'v>(&self, tool: &'v Value) -> Option<&'v str>;

    /// The request's member that holds the conversation: `messages`, `input`.
    fn conversation(&self) -> &'static str;

    /// The conversation given as a string (the JSON literal as written), as the message that
    /// opens the array a follow-up needs; `None` when the API allows no string there.
    fn opening_message(&self, _literal: &str) -> Option<String> {
        None
    }

    /// What an answer (a parsed response body) calls.
    fn calls(&self, response: &Value) -> Calls;

    /// Removes every call of the recovery tool from an answer.
    fn strip(&self, response: &mut Value);

    /// The elements a follow-up appends to the conversation: the model's turn from
    /// `response`, then the `answers`.
    ///
    /// # Errors
    ///
    /// A response without the turn.
    fn turns(&self, response: &Value, answers: &[Answer]) -> Result<Vec<Value>, EditError>;

    // The records put back into later requests (crate::merge).

    /// Whether the client receives one message merged over the recovery rounds (the blocks of
    /// each answered turn before its first call, then the last answer's), rather than the last
    /// answer with the proxy's turns put back before it. The merged path reads Messages'
    /// shape (`content` blocks, their stream events).
    #[cfg(feature = "proxy")]
    fn merges(&self) -> bool {
        false
    }

    /// The part of an answer the client sends back as an element of the conversation, whose
    /// fingerprint a record is found by: the answer itself (Messages), its first choice's
    /// message (Chat Completions), its first output item (Responses).
    #[cfg(feature = "proxy")]
    fn sent_back<'v>(&self, answer: &'v Value) -> Option<&'v Value>;

    /// Whether an element of a request's conversation is one a model wrote, which can be an
    /// answer the client received.
    #[cfg(feature = "proxy")]
    fn is_answer(&self, element: &Value) -> bool;

    /// What the model wrote in an answer as the client sends it back (`None`: not an answer's
    /// shape): what its fingerprint is taken of.
    #[cfg(feature = "proxy")]
    fn written(&self, element: &Value) -> Option<Value>;

    /// What counts of an element of a conversation for the conversation's fingerprint: its
    /// role and what was written in it, not the markers a client adds or moves from one
    /// request to the next (`cache_control`).
    #[cfg(feature = "proxy")]
    fn canonical(&self, element: &Value) -> Value;

    // Streamed answers (crate::stream).

    /// What one event of a streamed answer (its data, parsed) says about the model's first
    /// call.
    #[cfg(feature = "proxy")]
    fn decide(&self, event: &Value) -> Decision;

    /// A new rebuilder of the model's turn from the stream's events.
    #[cfg(feature = "proxy")]
    fn rebuild(&self) -> Box<dyn Rebuild>;
}

/// What the events of a streamed answer so far say about the model's first call.
#[cfg(feature = "proxy")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Nothing yet: keep holding.
    Undecided,
    /// The first content is a call of [`crate::RECOVERY_TOOL`].
    Ours,
    /// The first content is something else: relay.
    Theirs,
}

/// The decision for the first content, a call of the tool named `name`: [`Decision::Ours`]
/// when that is [`crate::RECOVERY_TOOL`].
#[cfg(feature = "proxy")]
pub(crate) fn ours(name: Option<&Value>) -> Decision {
    if name.and_then(Value::as_str) == Some(crate::RECOVERY_TOOL) {
        Decision::Ours
    } else {
        Decision::Theirs
    }
}

/// The model's turn, rebuilt one event at a time from a stream of one API.
#[cfg(feature = "proxy")]
pub(crate) trait Rebuild: Send + std::fmt::Debug {
    /// Reads one event (its data, parsed).
    fn feed(&mut self, event: &Value);

    /// The turn so far, in the shape of the API's answer that is not streamed.
    fn finish(&self) -> Value;
}

/// `value` without the `cache_control` markers of it and of its elements: what a client adds
/// or moves from one request to the next, which no fingerprint reads.
#[cfg(feature = "proxy")]
pub(crate) fn unmarked(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(name, _)| name.as_str() != "cache_control")
                .map(|(name, value)| (name.clone(), unmarked(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::Api;

    /// A registration that reuses another API's path or short name would make one of them
    /// unreachable: each API is found again by both.
    #[test]
    fn every_registered_api_is_found_by_its_own_path_and_short_name() {
        for api in Api::ALL {
            assert_eq!(Api::from_path(api.path()), Some(api), "{api}");
            assert_eq!(Api::from_short_name(api.short_name()), Some(api), "{api}");
            assert_eq!(api.rules().name(), api.to_string());
        }
    }
}
