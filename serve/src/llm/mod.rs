//! Rewriting the requests an agent sends to an LLM API: every tool result inside goes through
//! the pipeline, and nothing else of the request changes.
//!
//! Tool results reach a model inside the request the agent sends to the LLM API: Claude Code's
//! Bash and Read, Codex's shell, every framework's own function tools. [`rewrite`] takes such a
//! request's body, finds the tool results in it, runs each through [`Host::process`] under the
//! name of the tool that produced it, and splices the payload the model should see into the
//! body. There is no networking here: this is the layer a proxy in front of the API calls on
//! each request ([`Api::from_path`] says which requests it applies to).
//!
//! # What is rewritten
//!
//! A tool result's *text* is one JSON string: a result's content when it is a string, or the
//! `text` of one text part when it is an array of parts (each part is processed on its own;
//! images, documents and other parts are left alone).
//!
//! - **Anthropic Messages** (`POST /v1/messages`, [`Api::AnthropicMessages`]): in a `user`
//!   message, each `tool_result` block's `content` (a string, or its `{"type": "text"}` blocks).
//!   The tool is the `name` of the `tool_use` block whose `id` is the result's `tool_use_id`, in
//!   an earlier `assistant` message. A result with `"is_error": true` is never compressed: it is
//!   processed with status `error`, which stores it in the tee store when there is one (as the
//!   MCP proxy does with a tool error), and its bytes stay as they are.
//! - **OpenAI Chat Completions** (`POST /v1/chat/completions`, [`Api::OpenAiChat`]): each
//!   `role: "tool"` message's `content` (a string, or its `{"type": "text"}` parts). The tool is
//!   the `function.name` (or `custom.name`) of the entry of an earlier `assistant` message's
//!   `tool_calls` whose `id` is the message's `tool_call_id`.
//! - **OpenAI Responses** (`POST /v1/responses`, [`Api::OpenAiResponses`]): each `input` item of
//!   type `function_call_output` (or `custom_tool_call_output`): its `output` (a string, or its
//!   `{"type": "input_text"}` parts). The tool is the `name` of the earlier `function_call` (or
//!   `custom_tool_call`) item with the same `call_id`. An `input` that is a plain string holds
//!   no tool result.
//!
//! The entry the tool's name resolves to decides what happens to its text, as for any call
//! (with no manifest, `auto` routes it by shape: rows to a table, logs folded, CONTRACT §2.8).
//! A result whose call is not in the body (no earlier call with its id: a conversation the
//! client trimmed, or one continued with the Responses API's `previous_response_id`, where the
//! calls live upstream) has no tool name, and passes through unchanged.
//!
//! # What is never touched
//!
//! The body is edited in place: the only bytes that change are those of the string literals
//! replaced, each by the JSON encoding of the new text. Every other byte — whitespace, member
//! order, escapes, numbers as written, the model, the system prompt, tool definitions,
//! messages, tool calls and their arguments — goes on exactly as the client sent it. A result
//! the pipeline leaves as it is (too small to gain, a tool error, a level of `none`, the kill
//! switch) keeps its original literal, escapes included. A lossy result carries its `_tee`
//! pointer inside its new text; [`Rewrite::pointed`] says whether any does, for a caller that
//! then offers the recovery tool ([`crate::RECOVERY_TOOL`]).
//!
//! # Determinism
//!
//! Agents resend the whole conversation on every turn, and providers cache the prefix. The same
//! body rewrites to the same bytes every time, on any host built with the same configuration:
//! the codecs are deterministic, and a pointer names its original by a hash of its bytes (no
//! timestamps, no counters). So the part of a rewritten request that precedes a new turn is the
//! part the previous request sent, byte for byte. What can still change a result from one request
//! to the next is the pipeline deciding otherwise: a codec's breaker that opened, or closed
//! again (CONTRACT §6), or the kill switch turned on or off.
//!
//! # Every size
//!
//! [`rewrite`] runs each result through
//! [`Host::process_offloaded`](parrot_host::Host::process_offloaded): its caller runs it off
//! the request's thread (`serve`: tokio's blocking pool), so a result at or over the
//! placement's thresholds is compressed as an executor call, under the executor's budget,
//! never passed through for its size (`budget_passthrough`): the largest results, the ones
//! that cost a context most, reach the model compressed. A host that compresses inline at any
//! size ([`inline_at_any_size`](parrot_host::HostBuilder::inline_at_any_size), as the MCP proxy
//! and Python's are) runs them the same way, in place.
//!
//! Nothing is remembered between requests: each one runs every result it carries through the
//! pipeline again, and the report counts it again. The tee store gets the same key for the
//! same original, so an original is stored once however often it is resent.
//!
//! # Bodies it does not rewrite
//!
//! A body that is not UTF-8 JSON, holds an object with a member named twice (which of the two
//! the API reads is not known), or is not shaped like the API's request where the rules above
//! look (`messages` not an array, a tool result's content a number, …) is not rewritten:
//! [`rewrite`] returns a [`RewriteError`] naming what was wrong and where, and the caller sends
//! the body on unchanged. Members the rules do not read are checked as JSON only.
//!
//! # Examples
//!
//! ```
//! use std::sync::Arc;
//! use parrot_serve::llm::{self, Api};
//! use parrot_host::{Host, MemoryTeeStore};
//!
//! let dir = std::env::temp_dir().join("parrot-doc-llm");
//! std::fs::create_dir_all(&dir).unwrap();
//! let host = Host::builder()
//!     .project(&dir)
//!     .plugin_path(None)
//!     .tee_store(Arc::new(MemoryTeeStore::default()))
//!     .build()
//!     .unwrap();
//! let body = br#"{"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
//!   {"role": "user", "content": "Which rows are active?"},
//!   {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "sql", "input": {}}]},
//!   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
//!     "content": "{\"a\": null, \"b\": null, \"c\": 1}"}]}
//! ]}"#;
//! let api = Api::from_path("/v1/messages?beta=true").unwrap();
//! let rewrite = llm::rewrite(api, body, &host).unwrap();
//! let sent = String::from_utf8(rewrite.body.to_vec()).unwrap();
//! assert_eq!(
//!     sent,
//!     String::from_utf8_lossy(body).replace(
//!         r#""{\"a\": null, \"b\": null, \"c\": 1}""#,
//!         r#""{\"c\":1}""#,
//!     )
//! );
//! assert_eq!((rewrite.counts.seen, rewrite.counts.compressed), (1, 1));
//! assert_eq!(rewrite.replaced[0].tool, "sql");
//! assert_eq!(rewrite.replaced[0].path, "messages[2].content[0].content");
//!
//! let broken = br#"{"messages": [{"role": "user", "content": 7}]}"#;
//! let err = llm::rewrite(Api::AnthropicMessages, broken, &host).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "messages[0].content: expected a string or an array of content blocks, found a number"
//! );
//! ```

#[cfg(test)]
mod tests;

use std::borrow::Cow;

pub use crate::api::Api;
pub use crate::api::targets::RewriteError;
use crate::api::targets::Target;
use crate::api::tree;
use parrot_host::{Call, Host, Input, Namespace};
use parrot_json::encode_string;

/// What [`rewrite`] did to a body.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Rewrite<'b> {
    /// The body to send upstream: the client's own bytes (borrowed) when nothing was replaced.
    pub body: Cow<'b, [u8]>,
    /// Each result whose text was replaced, in the order of the body.
    pub replaced: Vec<Replaced>,
    /// How many results were found, and what became of them.
    pub counts: Counts,
}

impl Rewrite<'_> {
    /// Whether any replaced result carries a `_tee` pointer to its original: a request the
    /// recovery tool ([`crate::RECOVERY_TOOL`]) should be offered to.
    pub fn pointed(&self) -> bool {
        self.replaced
            .iter()
            .any(|replaced| replaced.tee_key.is_some())
    }
}

/// One tool result text that [`rewrite`] replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Replaced {
    /// The tool whose result it is (the name the pipeline resolved an entry for).
    pub tool: String,
    /// Where the string is in the body, as [`RewriteError`] writes paths
    /// (`messages[4].content[0].content`).
    pub path: String,
    /// The codec that compressed it.
    pub codec: Option<String>,
    /// Bytes of the text before (decoded, as the pipeline saw it).
    pub bytes_before: usize,
    /// Bytes of the new text, pointer included (before JSON encoding).
    pub bytes_after: usize,
    /// The tee key its `_tee` pointer names, when the new text carries one: always for a lossy
    /// result; for a lossless one when the host tees those too.
    pub tee_key: Option<String>,
}

/// How many tool result texts [`rewrite`] found, and what became of them. A text is one JSON
/// string: a result's whole content, or one text part of it. A text counts in at most one of
/// `compressed`, `errors` and `unknown` (a tool error of an unknown call is `unknown`); the
/// rest of `seen` went through the pipeline and came back unchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Texts found.
    pub seen: usize,
    /// Texts replaced by what the pipeline made of them.
    pub compressed: usize,
    /// Texts of results marked `is_error` (Anthropic): never compressed.
    pub errors: usize,
    /// Texts of results whose call id matches no earlier tool call: passed through unchanged.
    pub unknown: usize,
}

/// Runs every tool result of a request body for `api` through `host`, and returns the body
/// with each result's text replaced by the payload the model should see; every other byte is
/// the client's. See the [module documentation](self) for what is rewritten in each API.
///
/// # Errors
///
/// A body this cannot rewrite, to be sent on unchanged: [`RewriteError::NotUtf8`];
/// [`RewriteError::Json`] for a syntax error, a member named twice, or nesting too deep;
/// [`RewriteError::Shape`] and [`RewriteError::Missing`] for a body not shaped like the API's
/// request where the rules read it. Each names the place in the body.
pub fn rewrite<'b>(api: Api, body: &'b [u8], host: &Host) -> Result<Rewrite<'b>, RewriteError> {
    rewrite_in(api, body, host, None)
}

/// [`rewrite`] with every result's original stored in `namespace` (see
/// [`Call::namespace`](parrot_host::Call#structfield.namespace)): what `parrot-compress serve` does
/// with the namespace of a request's API key, so that only requests with that key recover
/// them. The pointers name the plain keys, as without a namespace.
///
/// # Errors
///
/// As [`rewrite`].
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use parrot_serve::llm::{self, Api};
/// use parrot_host::{Host, MemoryTeeStore, Namespace};
///
/// let dir = std::env::temp_dir().join("parrot-doc-rewrite-in");
/// std::fs::create_dir_all(&dir).unwrap();
/// let host = Host::builder()
///     .project(&dir)
///     .plugin_path(None)
///     .tee_store(Arc::new(MemoryTeeStore::default()))
///     .tee_lossless(true)
///     .build()
///     .unwrap();
/// let rows: Vec<_> = (0..40).map(|i| serde_json::json!({"id": i, "note": null})).collect();
/// let result = serde_json::to_string_pretty(&rows).unwrap();
/// let body = serde_json::json!({"messages": [
///     {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "q", "input": {}}]},
///     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}]}
/// ]})
/// .to_string();
/// let alice = Namespace::new("alice").unwrap();
/// let rewrite =
///     llm::rewrite_in(Api::AnthropicMessages, body.as_bytes(), &host, Some(&alice)).unwrap();
/// let key = rewrite.replaced[0].tee_key.clone().unwrap();
/// assert!(host.recover_in(Some(&alice), &key).unwrap().is_some());
/// assert!(host.recover(&key).unwrap().is_none());
/// ```
pub fn rewrite_in<'b>(
    api: Api,
    body: &'b [u8],
    host: &Host,
    namespace: Option<&Namespace>,
) -> Result<Rewrite<'b>, RewriteError> {
    let text = std::str::from_utf8(body).map_err(|err| RewriteError::NotUtf8 {
        at: err.valid_up_to(),
    })?;
    let rules = api.rules();
    let root = tree::read(text, rules.keep()).map_err(|(error, path)| RewriteError::Json {
        path: if path.is_empty() {
            "body".to_owned()
        } else {
            path
        },
        error,
    })?;
    let found = rules.targets(&root)?;
    let mut counts = Counts::default();
    let mut replaced = Vec::new();
    let mut edits = Vec::new();
    for target in found {
        counts.seen += 1;
        let Target {
            text,
            at,
            tool,
            is_error,
            path,
        } = target;
        let Some(tool) = tool else {
            counts.unknown += 1;
            continue;
        };
        let original = text.decoded();
        if is_error {
            counts.errors += 1;
            // Not compressed, but stored like any tool error.
            host.process_offloaded(
                Call::new(&tool, Input::Text(&original))
                    .status("error")
                    .namespace(namespace),
            );
            continue;
        }
        // The rewrite runs off the request's thread (see the module docs): every result is
        // compressed, a large one as an executor call.
        let processed =
            host.process_offloaded(Call::new(&tool, Input::Text(&original)).namespace(namespace));
        let Some(new) = processed
            .text()
            .filter(|new| processed.meta.compressed && *new != original)
        else {
            continue;
        };
        counts.compressed += 1;
        // The literal as written, quotes included.
        let span = at..at + text.raw().len();
        edits.push((span, encode_string(new)));
        let bytes_after = new.len();
        let meta = processed.meta;
        replaced.push(Replaced {
            tool: tool.into_owned(),
            path,
            codec: meta.codec,
            bytes_before: original.len(),
            bytes_after,
            tee_key: meta.tee_key,
        });
    }
    Ok(Rewrite {
        body: splice(body, edits),
        replaced,
        counts,
    })
}

/// `body` with the bytes of each span replaced by its text; the spans do not overlap.
fn splice(body: &[u8], mut edits: Vec<(parrot_json::Span, String)>) -> Cow<'_, [u8]> {
    if edits.is_empty() {
        return Cow::Borrowed(body);
    }
    edits.sort_by_key(|(span, _)| span.start);
    let grown: usize = edits.iter().map(|(_, text)| text.len()).sum();
    let mut out = Vec::with_capacity(body.len() + grown);
    let mut copied = 0;
    for (span, text) in edits {
        out.extend_from_slice(body.get(copied..span.start).unwrap_or_default());
        out.extend_from_slice(text.as_bytes());
        copied = span.end;
    }
    out.extend_from_slice(body.get(copied..).unwrap_or_default());
    Cow::Owned(out)
}
