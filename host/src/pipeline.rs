//! The pipeline stage every tool result passes through: [`crate::Host::process`].
//!
//! Order of the rules, first that applies wins:
//! 1. kill switch (`PARROT_COMPRESSION_DISABLED=1`): the input goes out byte-identical and
//!    nothing else runs — no store write, no event, no counting;
//! 2. a status other than `success`: the payload goes out byte-identical, and is stored in the
//!    tee store (reason `error`) so nothing is lost when the caller raises;
//! 3. `return_direct`, `already_compressed`, effective level `none`: passthrough;
//! 4. payloads the stage never changes (not UTF-8, empty, JSON with a duplicate member name):
//!    passthrough, reason `unsupported_payload`; JSON nested deeper than the parser's limit is
//!    treated as text;
//! 5. breaker open, or over the router's thresholds without an executor: passthrough;
//! 6. the codec runs (an error or panic: passthrough, `codec_error`); an outcome that claims to
//!    be lossless is verified through the codec's inverse when verification is on (a mismatch
//!    makes it lossy); a lossy outcome at `minimal` is refused (`codec_error`);
//! 7. a lossy outcome stores the input before the output gets its `_tee` pointer (store failure:
//!    the input goes out, `tee_failed`); so does a lossless one that changed the payload when
//!    the host was built with `tee_lossless` (pointer reason `lossless`);
//! 8. no gain: a final payload not strictly smaller than the input is discarded (`no_gain`);
//! 9. last line of defense: a final payload over `max_result_chars` code points is cut, with
//!    the original stored under the call's key (only with a tee store).

use std::borrow::Cow;
use std::collections::HashMap;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use parrot_codec_api::{DynCodec, Level, Outcome, Payload, PayloadKind};
use serde_json::json;

use crate::budget::{Admission, Breaker, BreakerConfig, Clock, Route, Router};
use crate::call::{Call, Input, Meta, Processed, Skip};
use crate::error::Error;
use crate::observe::{CallEvent, Observer};
use crate::report::Report;
use crate::tokens::{Job, TokenWorker};

/// The environment variable of the kill switch.
pub const KILL_SWITCH_ENV: &str = "PARROT_COMPRESSION_DISABLED";

/// The hint every tee pointer carries.
pub const TEE_HINT: &str = "use wm_get_result for the full payload";

/// How outcomes that claim to be lossless are checked through the codec's inverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verification {
    /// Verify every lossless outcome of a plugin codec (default true).
    pub plugins: bool,
    /// Verify one lossless outcome in N of a built-in codec (0: never; default 0, since
    /// property tests prove the built-ins).
    pub builtins_every: u32,
}

impl Default for Verification {
    fn default() -> Verification {
        Verification {
            plugins: true,
            builtins_every: 0,
        }
    }
}

/// The stage's settings and state, owned by the host.
pub(crate) struct Stage {
    pub(crate) router: Router,
    pub(crate) breaker_config: BreakerConfig,
    pub(crate) breakers: Mutex<HashMap<String, Arc<Breaker>>>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) observers: Arc<Vec<Arc<dyn Observer>>>,
    pub(crate) report: Arc<Report>,
    pub(crate) tokens: TokenWorker,
    pub(crate) kill_switch: Option<bool>,
    pub(crate) inline_at_any_size: bool,
    pub(crate) tee_lossless: bool,
    pub(crate) max_result_chars: usize,
    pub(crate) verification: Verification,
    pub(crate) calls: AtomicU64,
    pub(crate) verify_counter: AtomicU64,
    pub(crate) keys: Mutex<TeeKeys>,
}

/// Tee key allocation: `__tee__:<tool>:<8 hex, random per stage>:<n>`, `n` per tool from 1.
pub(crate) struct TeeKeys {
    prefix: String,
    next: HashMap<String, u64>,
}

impl TeeKeys {
    pub(crate) fn new() -> TeeKeys {
        TeeKeys {
            prefix: random_prefix(),
            next: HashMap::new(),
        }
    }

    fn next_key(&mut self, tool: &str) -> String {
        let n = self.next.entry(tool.to_owned()).or_insert(0);
        *n += 1;
        format!("__tee__:{tool}:{}:{n}", self.prefix)
    }

    /// After a collision (another process shares the store): a fresh prefix.
    fn renew(&mut self) {
        self.prefix = random_prefix();
        self.next.clear();
    }
}

/// Eight hex digits from the process's random hasher keys, the time and a counter.
fn random_prefix() -> String {
    use std::hash::{BuildHasher, Hasher};
    static SALT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(SALT.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.write_u32(std::process::id());
    format!("{:08x}", hasher.finish() as u32)
}

/// What the stage hands a codec: the text and its kind, or why the payload is never changed.
fn classify(bytes: &[u8]) -> Result<(PayloadKind, &str), &'static str> {
    use crate::json_check::JsonCheck;
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8")?;
    if text.is_empty() {
        return Err("empty");
    }
    match crate::json_check::check(text) {
        JsonCheck::Json => Ok((PayloadKind::Json, text)),
        JsonCheck::DuplicateMember => Err("duplicate member name"),
        JsonCheck::TooDeep | JsonCheck::NotJson => Ok((PayloadKind::Text, text)),
    }
}

/// The per-call context of one `process` run.
pub(crate) struct Run<'h, 'a> {
    pub(crate) stage: &'h Stage,
    pub(crate) tee: Option<&'h dyn crate::tee::TeeStore>,
    pub(crate) codec: &'h dyn DynCodec,
    pub(crate) builtin: bool,
    pub(crate) level: Level,
    pub(crate) call: Call<'a>,
    /// The call runs on an executor thread (the async entry point offloaded it).
    pub(crate) offloaded: bool,
}

impl Stage {
    fn breaker(&self, codec: &str) -> Arc<Breaker> {
        let mut breakers = self.breakers.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(
            breakers
                .entry(codec.to_owned())
                .or_insert_with(|| Arc::new(Breaker::new(self.breaker_config))),
        )
    }

    fn kill_switch_on(&self) -> bool {
        self.kill_switch
            .unwrap_or_else(|| std::env::var_os(KILL_SWITCH_ENV).is_some_and(|v| v == "1"))
    }

    /// Stores `original` under a fresh key for `tool`, taking a new prefix on collision.
    fn store(
        &self,
        tee: &dyn crate::tee::TeeStore,
        tool: &str,
        original: &[u8],
        key: Option<String>,
    ) -> Result<String, Error> {
        let mut key = match key {
            Some(key) => key,
            None => self
                .keys
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .next_key(tool),
        };
        for _ in 0..8 {
            match tee.put(&key, original) {
                Ok(()) => return Ok(key),
                Err(Error::TeeKeyExists { .. }) => {
                    let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
                    keys.renew();
                    key = keys.next_key(tool);
                }
                Err(err) => return Err(err),
            }
        }
        Err(Error::TeeKeyExists { key })
    }

    fn next_key(&self, tool: &str) -> String {
        self.keys
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_key(tool)
    }
}

/// Runs the stage on one call.
pub(crate) fn process<'a>(run: Run<'_, 'a>) -> Processed<'a> {
    let stage = run.stage;
    let call = run.call;
    let input: Cow<'a, [u8]> = match call.payload {
        Input::Text(text) => Cow::Borrowed(text.as_bytes()),
        Input::Bytes(bytes) => Cow::Borrowed(bytes),
        Input::Json(value) => Cow::Owned(value.to_string().into_bytes()),
    };
    if stage.kill_switch_on() {
        let size = input.len();
        return Processed {
            payload: input,
            meta: Meta {
                compressed: false,
                codec: None,
                level: Level::None,
                size_before: size,
                size_after: size,
                duration_ms: 0.0,
                teed: false,
                tee_key: None,
                skipped: Some(Skip::KillSwitch),
            },
            call_id: 0,
        };
    }
    let started = Instant::now();
    let call_id = stage.calls.fetch_add(1, Ordering::Relaxed) + 1;
    let mut meta = Meta {
        compressed: false,
        codec: Some(run.codec.name().to_owned()),
        level: run.level,
        size_before: input.len(),
        size_after: input.len(),
        duration_ms: 0.0,
        teed: false,
        tee_key: None,
        skipped: None,
    };

    let output: Option<String> = decide(&run, &input, &mut meta);

    // The token worker gets its own copies: the caller keeps the input and the output. Text is
    // copied as it is (it was checked as UTF-8 already); only a payload that is not UTF-8
    // goes through the lossy conversion.
    let text_of = |bytes: &[u8]| match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    };
    let after_copy = output.clone();
    let payload = match output {
        Some(text) => {
            meta.compressed = true;
            Cow::Owned(text.into_bytes())
        }
        None => input.clone(),
    };
    meta.size_after = payload.len();
    meta.duration_ms = started.elapsed().as_secs_f64() * 1000.0;

    let event = CallEvent {
        call_id,
        tool: call.tool.to_owned(),
        meta: meta.clone(),
    };
    for observer in stage.observers.iter() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            observer.on_processed(&event);
        }));
    }
    stage.tokens.submit(Job {
        call_id,
        tool: call.tool.to_owned(),
        before: text_of(&input),
        after: after_copy,
    });
    Processed {
        payload,
        meta,
        call_id,
    }
}

/// Decides the call's output: `Some(new payload)` or `None` (the input goes out), filling in
/// the metadata.
fn decide(run: &Run<'_, '_>, input: &[u8], meta: &mut Meta) -> Option<String> {
    let stage = run.stage;
    let call = run.call;
    if call.status != "success"
        && let Some(tee) = run.tee
    {
        match stage.store(tee, call.tool, input, None) {
            Ok(key) => {
                meta.teed = true;
                meta.tee_key = Some(key);
            }
            Err(err) => tracing::warn!(tool = call.tool, "storing an error payload failed: {err}"),
        }
    }
    let skip = if call.return_direct {
        Some(Skip::ReturnDirect)
    } else if call.already_compressed {
        Some(Skip::AlreadyCompressed)
    } else if run.level == Level::None {
        Some(Skip::LevelNone)
    } else {
        None
    };
    if let Some(skip) = skip {
        meta.skipped = Some(skip);
        return None;
    }
    let (kind, text) = match classify(input) {
        Ok(classified) => classified,
        Err(why) => {
            tracing::debug!(tool = call.tool, "payload passes through: {why}");
            meta.skipped = Some(Skip::UnsupportedPayload);
            return None;
        }
    };

    let minimal = run.level == Level::Minimal;
    let route = if stage.inline_at_any_size {
        Route::Inline
    } else {
        stage.router.route(
            minimal,
            text.len(),
            Router::estimate_rows(text),
            run.offloaded,
        )
    };
    if route == Route::Passthrough {
        meta.skipped = Some(Skip::BudgetPassthrough);
        return None;
    }
    let breaker = stage.breaker(run.codec.name());
    let admission = breaker.admit(stage.clock.now());
    if admission == Admission::Open {
        meta.skipped = Some(Skip::BreakerOpen);
        return None;
    }

    let codec_started = stage.clock.now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run.codec.compress(Payload::new(text, kind), run.level)
    }));
    let elapsed = stage.clock.now().saturating_duration_since(codec_started);
    breaker.record(
        stage.clock.now(),
        admission,
        elapsed > stage.router.budget(minimal, route),
    );

    let outcome = match result {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(err)) => {
            tracing::warn!(
                tool = call.tool,
                codec = run.codec.name(),
                "codec failed: {err}"
            );
            meta.skipped = Some(Skip::CodecError);
            return None;
        }
        Err(_) => {
            tracing::warn!(tool = call.tool, codec = run.codec.name(), "codec panicked");
            meta.skipped = Some(Skip::CodecError);
            return None;
        }
    };
    let (payload, mut lossy) = match outcome {
        Outcome::Unchanged => {
            meta.skipped = Some(Skip::NoGain);
            return None;
        }
        Outcome::Changed { payload, lossy } => (payload, lossy),
    };
    // A plugin's output for a JSON payload must be JSON, unless the codec declares text output
    // (TOON, CSV): it is checked here. A built-in's is JSON by construction (property-tested
    // and fuzzed), so its shape is read only when a pointer needs it.
    let text_output = run.codec.text_output();
    let mut output_shape = None;
    if kind == PayloadKind::Json && !run.builtin && !text_output {
        output_shape = crate::json_check::top_level(&payload);
        if output_shape.is_none() {
            tracing::warn!(
                tool = call.tool,
                codec = run.codec.name(),
                "codec returned invalid JSON for a JSON payload"
            );
            meta.skipped = Some(Skip::CodecError);
            return None;
        }
    }
    if !lossy && should_verify(run) && !expands_back(run, text, kind, &payload) {
        tracing::warn!(
            tool = call.tool,
            codec = run.codec.name(),
            "an outcome claimed lossless does not expand back to the input: treated as lossy"
        );
        lossy = true;
    }
    if lossy && !run.level.allows_loss() {
        tracing::warn!(
            tool = call.tool,
            codec = run.codec.name(),
            "codec returned a lossy outcome at minimal: refused"
        );
        meta.skipped = Some(Skip::CodecError);
        return None;
    }

    if lossy && run.tee.is_none() {
        // Unreachable through the host (levels are capped without a store); kept as the
        // runtime guard: nothing lossy goes out without a way back.
        meta.skipped = Some(Skip::TeeFailed);
        return None;
    }
    // What is kept gets its pointer under a tentative key first: the no-gain rule counts the
    // pointer, and nothing is stored for an outcome that will be discarded.
    let keep = lossy || (stage.tee_lossless && run.tee.is_some());
    let reason = if lossy { "lossy" } else { "lossless" };
    let mut key = keep.then(|| stage.next_key(call.tool));
    if keep && output_shape.is_none() && !text_output {
        output_shape = crate::json_check::top_level(&payload);
    }
    let with_pointer =
        |payload: &str, key: &str| attach_pointer(payload, output_shape, key, reason);
    // The codec's payload is kept apart only when a pointer may have to be rewritten.
    let (mut final_payload, unpointed) = match &key {
        Some(key) => (with_pointer(&payload, key), Some(payload)),
        None => (payload, None),
    };
    if final_payload.len() >= input.len() {
        meta.skipped = Some(Skip::NoGain);
        return None;
    }
    let max = stage.max_result_chars;
    let over = max > 0 && final_payload.chars().count() > max;
    if over && run.tee.is_none() {
        tracing::warn!(
            tool = call.tool,
            chars = final_payload.chars().count(),
            max,
            "payload over max_result_chars goes out uncut: no tee store to keep the original"
        );
    }
    let cut = over && run.tee.is_some();
    if let (Some(tee), true) = (run.tee, keep || cut) {
        match stage.store(tee, call.tool, input, key.clone()) {
            Ok(stored) => {
                if let (Some(unpointed), true) =
                    (&unpointed, key.as_deref() != Some(stored.as_str()))
                {
                    // A collision gave the call another key: point at it.
                    final_payload = with_pointer(unpointed, &stored);
                }
                key = Some(stored);
            }
            Err(err) => {
                tracing::warn!(
                    tool = call.tool,
                    "tee store failed, the original goes out: {err}"
                );
                meta.skipped = Some(Skip::TeeFailed);
                return None;
            }
        }
        meta.teed = true;
        meta.tee_key = key.clone();
    }
    if cut {
        let before = final_payload.chars().count();
        let head: String = final_payload.chars().take(max).collect();
        let pointer = tee_pointer(key.as_deref().unwrap_or_default(), "cut");
        final_payload = format!(
            "{{\"result\":{},\"_tee\":{pointer}}}",
            serde_json::to_string(&head).unwrap_or_default()
        );
        tracing::warn!(
            tool = call.tool,
            before,
            after = max,
            "payload over max_result_chars was cut (original in the tee store)"
        );
    }
    Some(final_payload)
}

fn should_verify(run: &Run<'_, '_>) -> bool {
    if !run.codec.expands() {
        return false;
    }
    let v = run.stage.verification;
    if run.builtin {
        v.builtins_every > 0
            && run
                .stage
                .verify_counter
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(u64::from(v.builtins_every))
    } else {
        v.plugins
    }
}

fn expands_back(run: &Run<'_, '_>, input: &str, kind: PayloadKind, payload: &str) -> bool {
    let expanded = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run.codec.expand(payload)
    })) {
        Ok(Ok(expanded)) => expanded,
        _ => return false,
    };
    match kind {
        PayloadKind::Text => expanded == input,
        PayloadKind::Json => {
            crate::json_check::equivalent(input, &expanded, run.codec.name() == "json_compact")
        }
    }
}

fn tee_pointer(key: &str, reason: &str) -> String {
    json!({"key": key, "reason": reason, "hint": TEE_HINT}).to_string()
}

/// Gives a payload its `_tee` pointer: a last member of an object that has none, else a
/// `{"result": …, "_tee": …}` wrapper (text becomes a JSON string).
fn attach_pointer(
    payload: &str,
    shape: Option<crate::json_check::TopLevel>,
    key: &str,
    reason: &str,
) -> String {
    let pointer = tee_pointer(key, reason);
    match shape {
        Some(crate::json_check::TopLevel::Object {
            has_tee: false,
            empty,
        }) => {
            let body = payload.trim_end();
            let body = body.strip_suffix('}').unwrap_or(body);
            if empty {
                format!("{{\"_tee\":{pointer}}}")
            } else {
                format!("{body},\"_tee\":{pointer}}}")
            }
        }
        Some(_) => format!("{{\"result\":{},\"_tee\":{pointer}}}", payload.trim()),
        None => format!(
            "{{\"result\":{},\"_tee\":{pointer}}}",
            serde_json::to_string(payload).unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_check::TopLevel;

    #[test]
    fn pointers_go_last_in_objects_and_wrap_everything_else() {
        let obj = Some(TopLevel::Object {
            has_tee: false,
            empty: false,
        });
        let cases = [
            (
                r#"{"a":1}"#,
                obj,
                r#"{"a":1,"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                "{}",
                Some(TopLevel::Object {
                    has_tee: false,
                    empty: true,
                }),
                r#"{"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                r#"{"_tee":1}"#,
                Some(TopLevel::Object {
                    has_tee: true,
                    empty: false,
                }),
                r#"{"result":{"_tee":1},"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                "[1,2]",
                Some(TopLevel::Other),
                r#"{"result":[1,2],"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                "plain \"text\"",
                None,
                r#"{"result":"plain \"text\"","_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
        ];
        for (payload, shape, expected) in cases {
            assert_eq!(
                attach_pointer(payload, shape, "k", "lossy"),
                expected,
                "for {payload}"
            );
        }
    }

    #[test]
    fn tee_keys_count_per_tool_under_one_prefix() {
        let mut keys = TeeKeys::new();
        let a1 = keys.next_key("a");
        let a2 = keys.next_key("a");
        let b1 = keys.next_key("b");
        let prefix = &keys.prefix;
        assert_eq!(prefix.len(), 8);
        assert!(prefix.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a1, format!("__tee__:a:{prefix}:1"));
        assert_eq!(a2, format!("__tee__:a:{prefix}:2"));
        assert_eq!(b1, format!("__tee__:b:{prefix}:1"));
        let old = prefix.clone();
        keys.renew();
        assert_ne!(keys.prefix, old);
    }
}
