//! The call types every part of the host shares: what a caller hands the pipeline ([`Call`],
//! [`Input`], and their owned forms for the async entry point), and what comes back
//! ([`Processed`], its [`Meta`], and the [`Skip`] reason when the payload went out unchanged).
//!
//! They live apart from the engine so that the engine, the observers, the savings report and
//! the token worker all depend on them and none of those depends on another through them.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex};

use parrot_codec_api::Level;
use serde_json::{Value, json};

use crate::tee::Namespace;

/// A tool result as given to the stage.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// Text (JSON or not).
    Text(&'a str),
    /// Raw bytes, possibly not UTF-8 (those pass through untouched).
    Bytes(&'a [u8]),
    /// A JSON value: its compact serialization (member order and number text kept) is the
    /// input as given.
    Json(&'a Value),
}

impl<'a> Input<'a> {
    /// The input's bytes as given (a JSON value's compact serialization).
    pub(crate) fn bytes(self) -> Cow<'a, [u8]> {
        match self {
            Input::Text(text) => Cow::Borrowed(text.as_bytes()),
            Input::Bytes(bytes) => Cow::Borrowed(bytes),
            Input::Json(value) => Cow::Owned(value.to_string().into_bytes()),
        }
    }
}

/// A tool call's status: only a successful call's result is compressed (CONTRACT §4, rule
/// 2). A status is given as the word its caller has; every word but `success` is a failure.
///
/// # Examples
///
/// ```
/// use parrot_host::Status;
///
/// assert_eq!(Status::from("success"), Status::Success);
/// assert_eq!(Status::from("error"), Status::Failure);
/// assert_eq!(Status::from("Success"), Status::Failure, "the word is exact");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Status {
    /// `success`: the result may be compressed.
    #[default]
    Success,
    /// Any other status (`error`, `timeout`, …): the result goes out as it came, and is stored
    /// when there is a tee store.
    Failure,
}

impl Status {
    /// The status a caller's word names: `success`, or a failure.
    pub fn of(word: &str) -> Status {
        if word == "success" {
            Status::Success
        } else {
            Status::Failure
        }
    }
}

impl From<&str> for Status {
    fn from(word: &str) -> Status {
        Status::of(word)
    }
}

impl From<&String> for Status {
    fn from(word: &String) -> Status {
        Status::of(word)
    }
}

/// One tool call to process.
///
/// # Examples
///
/// ```
/// use parrot_host::{Call, Input, Level};
///
/// let call = Call::new("sql_query", Input::Text("[]"))
///     .status("success")
///     .level(Level::Minimal);
/// assert_eq!(call.tool, "sql_query");
/// ```
///
/// A call in a namespace keeps its original where only a recovery in that namespace finds it:
///
/// ```
/// use std::sync::Arc;
/// use parrot_host::{Call, Host, Input, Level, MemoryTeeStore, Namespace};
///
/// let dir = std::env::temp_dir().join("parrot-doc-call-namespace");
/// std::fs::create_dir_all(&dir).unwrap();
/// let host = Host::builder()
///     .project(&dir)
///     .plugin_path(None)
///     .tee_store(Arc::new(MemoryTeeStore::default()))
///     .build()
///     .unwrap();
/// let alice = Namespace::new("alice").unwrap();
/// let out = host.process(
///     Call::new("error_tool", Input::Text("boom")).status("error").namespace(&alice),
/// );
/// let key = out.meta.tee_key.unwrap();
/// assert!(key.starts_with("__tee__:error_tool:"), "the plain key: {key}");
/// assert_eq!(host.recover_in(Some(&alice), &key).unwrap().as_deref(), Some(&b"boom"[..]));
/// assert_eq!(host.recover(&key).unwrap(), None, "not unscoped");
/// let bob = Namespace::new("bob").unwrap();
/// assert_eq!(host.recover_in(Some(&bob), &key).unwrap(), None, "nor in another namespace");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The call's status; a failure is never compressed.
    pub status: Status,
    /// The result.
    pub payload: Input<'a>,
    /// The result goes straight to the user, not to a model.
    pub return_direct: bool,
    /// The result's metadata already says `_compressed`.
    pub already_compressed: bool,
    /// A per-call level override.
    pub level: Option<Level>,
    /// Where the call's original is stored: under `{namespace}/{key}` (the model still sees
    /// the plain key), found only by a recovery in the same namespace
    /// (`parrot_recover`'s `recover_for_model_in`); `None` stores it under the key alone.
    pub namespace: Option<&'a Namespace>,
}

impl<'a> Call<'a> {
    /// A successful call with no override, in no namespace.
    pub fn new(tool: &'a str, payload: Input<'a>) -> Call<'a> {
        Call {
            tool,
            status: Status::Success,
            payload,
            return_direct: false,
            already_compressed: false,
            level: None,
            namespace: None,
        }
    }

    /// Stores the call's original in `namespace` (see the field `namespace`); `None` for none.
    pub fn namespace(mut self, namespace: impl Into<Option<&'a Namespace>>) -> Call<'a> {
        self.namespace = namespace.into();
        self
    }

    /// Sets the status (a word such as `"error"`, or a [`Status`]).
    pub fn status(mut self, status: impl Into<Status>) -> Call<'a> {
        self.status = status.into();
        self
    }

    /// Overrides the level for this call.
    pub fn level(mut self, level: Level) -> Call<'a> {
        self.level = Some(level);
        self
    }

    /// Marks the result as going straight to the user.
    pub fn return_direct(mut self, yes: bool) -> Call<'a> {
        self.return_direct = yes;
        self
    }

    /// Marks the result as already compressed.
    pub fn already_compressed(mut self, yes: bool) -> Call<'a> {
        self.already_compressed = yes;
        self
    }
}

/// An owned tool result, for the async entry point (the payload moves to another thread).
#[derive(Debug, Clone)]
pub enum OwnedInput {
    /// Text (JSON or not).
    Text(String),
    /// Raw bytes, possibly not UTF-8.
    Bytes(Vec<u8>),
    /// A JSON value.
    Json(Value),
}

impl OwnedInput {
    /// The payload's size in bytes (for a JSON value, of its compact serialization).
    #[cfg(feature = "tokio")]
    pub(crate) fn len(&self) -> usize {
        match self {
            OwnedInput::Text(text) => text.len(),
            OwnedInput::Bytes(bytes) => bytes.len(),
            OwnedInput::Json(value) => value.to_string().len(),
        }
    }

    pub(crate) fn as_input(&self) -> Input<'_> {
        match self {
            OwnedInput::Text(text) => Input::Text(text),
            OwnedInput::Bytes(bytes) => Input::Bytes(bytes),
            OwnedInput::Json(value) => Input::Json(value),
        }
    }
}

/// An owned [`Call`], for the async entry point.
#[derive(Debug, Clone)]
pub struct OwnedCall {
    /// The tool's name.
    pub tool: String,
    /// The call's status.
    pub status: Status,
    /// The result.
    pub payload: OwnedInput,
    /// The result goes straight to the user.
    pub return_direct: bool,
    /// The result was already compressed.
    pub already_compressed: bool,
    /// A per-call level override.
    pub level: Option<Level>,
    /// The namespace the original is stored in (as `Call`'s `namespace`).
    pub namespace: Option<Namespace>,
}

impl OwnedCall {
    /// A successful call with no override, in no namespace.
    pub fn new(tool: impl Into<String>, payload: OwnedInput) -> OwnedCall {
        OwnedCall {
            tool: tool.into(),
            status: Status::Success,
            payload,
            return_direct: false,
            already_compressed: false,
            level: None,
            namespace: None,
        }
    }

    /// The borrowed view of this call.
    pub fn as_call(&self) -> Call<'_> {
        Call {
            tool: &self.tool,
            status: self.status,
            payload: self.payload.as_input(),
            return_direct: self.return_direct,
            already_compressed: self.already_compressed,
            level: self.level,
            namespace: self.namespace.as_ref(),
        }
    }
}

/// Why a call's payload went out unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Skip {
    /// `PARROT_COMPRESSION_DISABLED=1`.
    KillSwitch,
    /// The result goes straight to the user.
    ReturnDirect,
    /// The result was already compressed.
    AlreadyCompressed,
    /// The effective level is `none` (for example an error status).
    LevelNone,
    /// The codec's breaker is open.
    BreakerOpen,
    /// Over the placement's thresholds with no executor to run on.
    BudgetPassthrough,
    /// The codec failed, panicked, or broke its contract.
    CodecError,
    /// The outcome was lossy but the tee store failed.
    TeeFailed,
    /// The final payload would not be smaller than the input.
    NoGain,
    /// A payload the stage never changes: not UTF-8, empty, or JSON with a duplicate member
    /// name (decision: not one of the contract's reasons, which do not cover these).
    UnsupportedPayload,
}

impl Skip {
    /// The reason as metadata spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::KillSwitch => "kill_switch",
            Skip::ReturnDirect => "return_direct",
            Skip::AlreadyCompressed => "already_compressed",
            Skip::LevelNone => "level_none",
            Skip::BreakerOpen => "breaker_open",
            Skip::BudgetPassthrough => "budget_passthrough",
            Skip::CodecError => "codec_error",
            Skip::TeeFailed => "tee_failed",
            Skip::NoGain => "no_gain",
            Skip::UnsupportedPayload => "unsupported_payload",
        }
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which no-gain a call's `no_gain` is (CONTRACT §4, rules 7 and 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NoGain {
    /// The codec left the payload unchanged (for `auto`: no candidate's output was kept).
    Declined,
    /// The final payload, pointer included, was not strictly smaller in bytes than the input.
    NotSmaller,
    /// The final payload was smaller in bytes but held more tokens than the input: the host
    /// rejected it on tokens. The counts are the no-gain rule's (exact up to 32 KB, else its
    /// estimate, CONTRACT §2.1).
    MoreTokens {
        /// Tokens of the rejected output.
        rejected: usize,
        /// Tokens of the input, counted alike.
        input: usize,
    },
}

impl NoGain {
    /// The kind as metadata spells it (`compression_no_gain`).
    pub fn as_str(self) -> &'static str {
        match self {
            NoGain::Declined => "codec_declined",
            NoGain::NotSmaller => "not_smaller",
            NoGain::MoreTokens { .. } => "more_tokens",
        }
    }
}

/// The metadata of one processed call.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// `_compressed`: the output is a compressed payload.
    pub compressed: bool,
    /// `compression_codec`: the codec that applied (or would have).
    pub codec: Option<String>,
    /// `compression_level`: the effective level.
    pub level: Level,
    /// `result_size_bytes_original`: bytes of the input as given.
    pub size_before: usize,
    /// `result_size_bytes`: bytes of the final payload, pointer included.
    pub size_after: usize,
    /// `compression_duration_ms`.
    pub duration_ms: f64,
    /// `compression_teed`: the original was stored.
    pub teed: bool,
    /// `compression_tee_key`: where anything was stored (errors included).
    pub tee_key: Option<String>,
    /// `compression_skipped`: why the payload went out unchanged.
    pub skipped: Option<Skip>,
    /// `compression_no_gain` (and, on tokens, `compression_rejected_tokens`): which no-gain a
    /// `no_gain` skip is; `None` for every other call.
    pub no_gain: Option<NoGain>,
    /// `compression_route`: for the routing codec `auto`, the shape it recognised and the
    /// candidates it ran with their token counts, fewest first, in one line (for example
    /// `rows: toon 1,946 < columnar 2,003 < json_compact 2,944 tokens`); `None` for other
    /// codecs. `codec` then names the winner.
    pub route: Option<String>,
}

impl Meta {
    /// The metadata of a payload of `size` bytes that went out as it came, for `skip`.
    pub fn passed_through(size: usize, skip: Skip) -> Meta {
        Meta {
            compressed: false,
            codec: None,
            level: Level::None,
            size_before: size,
            size_after: size,
            duration_ms: 0.0,
            teed: false,
            tee_key: None,
            skipped: Some(skip),
            no_gain: None,
            route: None,
        }
    }

    /// The metadata as a JSON object with the contract's member names. Token counts are added
    /// by whoever waits for them (`tokens_before`, `tokens_after`).
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        map.insert("_compressed".into(), json!(self.compressed));
        map.insert("compression_codec".into(), json!(self.codec));
        map.insert("compression_level".into(), json!(self.level.as_str()));
        map.insert("result_size_bytes_original".into(), json!(self.size_before));
        map.insert("result_size_bytes".into(), json!(self.size_after));
        map.insert(
            "compression_duration_ms".into(),
            json!((self.duration_ms * 1000.0).round() / 1000.0),
        );
        map.insert("compression_teed".into(), json!(self.teed));
        if let Some(key) = &self.tee_key {
            map.insert("compression_tee_key".into(), json!(key));
        }
        if let Some(skip) = self.skipped {
            map.insert("compression_skipped".into(), json!(skip.as_str()));
        }
        if let Some(no_gain) = self.no_gain {
            map.insert("compression_no_gain".into(), json!(no_gain.as_str()));
            if let NoGain::MoreTokens { rejected, .. } = no_gain {
                map.insert("compression_rejected_tokens".into(), json!(rejected));
            }
        }
        if let Some(route) = &self.route {
            map.insert("compression_route".into(), json!(route));
        }
        Value::Object(map)
    }
}

/// A call's tokens before and after the stage, as the host's tokenizer counts them.
///
/// # Examples
///
/// ```
/// use parrot_host::{Call, Host, Input};
///
/// let dir = std::env::temp_dir().join("parrot-doc-token-counts");
/// std::fs::create_dir_all(&dir).unwrap();
/// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
/// let out = host.process(Call::new("t", Input::Text("[1, 2, 3]")));
/// let tokens = out.tokens().expect("the host counts tokens");
/// assert!(tokens.after < tokens.before, "{tokens:?}");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenCounts {
    /// Tokens of the input as given.
    pub before: usize,
    /// Tokens of the payload the model sees.
    pub after: usize,
}

/// Where the worker leaves one call's counts for whoever holds the call's result.
#[derive(Debug, Default)]
pub(crate) struct TokenSlot {
    /// `None` while pending; `Some(None)` when the job was dropped uncounted.
    counts: Mutex<Option<Option<TokenCounts>>>,
    ready: Condvar,
}

impl TokenSlot {
    /// Delivers the counts (`None`: the job was dropped uncounted) to whoever waits.
    pub(crate) fn fill(&self, counts: Option<TokenCounts>) {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner()) = Some(counts);
        self.ready.notify_all();
    }

    /// The counts, once the worker delivered them (`None`: dropped uncounted).
    pub(crate) fn wait(&self) -> Option<TokenCounts> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(delivered) = *counts {
                return delivered;
            }
            counts = self.ready.wait(counts).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The result of [`crate::Host::process`]: the payload the model sees and the metadata.
#[derive(Debug, Clone)]
pub struct Processed<'a> {
    /// The payload the model sees (the input itself when nothing changed).
    pub payload: Cow<'a, [u8]>,
    /// The call's metadata.
    pub meta: Meta,
    /// The call's number within this host (0 for kill-switch calls, which are not counted).
    pub call_id: u64,
    /// Where the token worker leaves this call's counts; `None` when nothing counts them.
    pub(crate) tokens: Option<Arc<TokenSlot>>,
}

impl<'a> Processed<'a> {
    /// The input going out as it came, before the stage counted the call (call id 0): with
    /// the kill switch on, or when the runtime shut down before an offloaded call ran.
    pub(crate) fn passed_through(payload: Cow<'a, [u8]>, skip: Skip) -> Processed<'a> {
        let size = payload.len();
        Processed {
            payload,
            meta: Meta::passed_through(size, skip),
            call_id: 0,
            tokens: None,
        }
    }
}

impl Processed<'_> {
    /// The payload as text, when it is UTF-8 (it always is unless the input was not).
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.payload).ok()
    }

    /// The same result, owning its payload.
    pub fn into_owned(self) -> Processed<'static> {
        Processed {
            payload: Cow::Owned(self.payload.into_owned()),
            meta: self.meta,
            call_id: self.call_id,
            tokens: self.tokens,
        }
    }

    /// The call's token counts (`tokens_before`, `tokens_after`), waiting for the host's
    /// token worker to count them off the caller's thread (CONTRACT §4, §7); `None` when
    /// nothing counts them (the kill switch, [`crate::HostBuilder::report_tokens`] off).
    ///
    /// # Examples
    ///
    /// See [`crate::TokenCounts`].
    pub fn tokens(&self) -> Option<TokenCounts> {
        self.tokens.as_ref().and_then(|slot| slot.wait())
    }

    /// The metadata as JSON ([`Meta::to_json`]) with the token counts, when there are any,
    /// as its last two members (`tokens_before`, `tokens_after`): what the command's
    /// `--meta` prints. Waits for the counts as [`Processed::tokens`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{Call, Host, Input};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-meta-json");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// let meta = host.process(Call::new("t", Input::Text("[1, 2]"))).meta_json();
    /// let (before, after) = (meta["tokens_before"].as_u64(), meta["tokens_after"].as_u64());
    /// assert!(before.is_some() && after <= before, "{meta}");
    /// ```
    pub fn meta_json(&self) -> Value {
        let mut meta = self.meta.to_json();
        if let (Value::Object(map), Some(tokens)) = (&mut meta, self.tokens()) {
            map.insert("tokens_before".into(), json!(tokens.before));
            map.insert("tokens_after".into(), json!(tokens.after));
        }
        meta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_on_tokens_gives_the_rejected_outputs_tokens() {
        let mut meta = Meta::passed_through(100, Skip::NoGain);
        meta.no_gain = Some(NoGain::MoreTokens {
            rejected: 31,
            input: 30,
        });
        let json = meta.to_json();
        assert_eq!(json["compression_skipped"], "no_gain");
        assert_eq!(json["compression_no_gain"], "more_tokens");
        assert_eq!(json["compression_rejected_tokens"], 31);
        meta.no_gain = Some(NoGain::NotSmaller);
        let json = meta.to_json();
        assert_eq!(json["compression_no_gain"], "not_smaller");
        assert!(json.get("compression_rejected_tokens").is_none());
    }

    #[test]
    fn meta_uses_the_contract_names() {
        let meta = Meta {
            compressed: true,
            codec: Some("columnar".into()),
            level: Level::Normal,
            size_before: 100,
            size_after: 40,
            duration_ms: 0.1234,
            teed: true,
            tee_key: Some("__tee__:t:00000000abcd".into()),
            skipped: None,
            no_gain: None,
            route: None,
        };
        assert_eq!(
            meta.to_json().to_string(),
            r#"{"_compressed":true,"compression_codec":"columnar","compression_level":"normal","result_size_bytes_original":100,"result_size_bytes":40,"compression_duration_ms":0.123,"compression_teed":true,"compression_tee_key":"__tee__:t:00000000abcd"}"#
        );
    }
}
