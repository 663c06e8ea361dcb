//! The pipeline stage every tool result passes through: [`crate::Host::process`].
//!
//! The rules, their order and their skip reasons are stated once, in CONTRACT §4 ("The
//! pipeline stage", `docs/CONTRACT.md`); the code names each by its number there (rule 1 here,
//! rules 2 to 11 in `rules.rs`, one function or two each).
//!
//! # One payload through the stage
//!
//! What [`crate::Host::process`] runs, step by step, each step once. Two payloads with the
//! default configuration (the core `"*"` entry: `auto` at `normal`) and a tee store: a 469 KB
//! build log, and a JSON array of objects.
//!
//! 1. `Host::process_on`: `EntryTable::resolve` finds the entry (`"*"`) and its
//!    `Engine`, resolved when the host was built (here the router;
//!    for a codec, its facts: name, built-in, validates JSON, inverse, text output, cut);
//!    `Host::level_of` gives the level (`normal`; `minimal` without a store); the store is
//!    scoped to the call's namespace; a `Run` holds it all.
//! 2. `pipeline::process`: rule 1, the kill switch, a flag decided when the host was built; the call
//!    gets its number and its metadata.
//! 3. `rules::decide` → `store_error_result`: rule 2 (the status is
//!    [`Status::Success`](crate::Status): nothing to store).
//! 4. `rules::compress`: rule 3 (`passthrough_flags`, `is_retrieval`); `digest_beside`
//!    decides whether the input's key is hashed beside the codec.
//! 5. `rules::compress_keyed`, the rules from 4 on, one line each, in order. `read`: rule 4,
//!    fused when the engine says it fuses JSON (`Engine::fuses_json`) and the payload starts
//!    like JSON (`fused_json`): *the array* is given as JSON without the check, which the
//!    codec's own validating pass stands for. *The log* does not start like JSON: `supported`
//!    → `classify` checks it (UTF-8, not empty, not JSON: text; an object's members read for an
//!    engine that takes them, `Engine::reads_members`). Then `admit` → `budget` (rule 5, at the
//!    level the engine runs the kind at, `Engine::runs_at`: over the size threshold with no
//!    executor, a library's host passes it through here, `budget_passthrough`, unless built
//!    with `inline_at_any_size` as the command is) and the breaker (rule 6).
//! 6. `run_codec`: rule 7, the codec's call, once, timed for the breaker: `call` runs the
//!    engine. The engine is the router:
//!    `Auto::route_read` → `Auto::unit` (the log: `kind::classify`, log lines; the array:
//!    `Auto::recognise_top` → `recognise` → `rows_at`, rows; a JSON object would first be
//!    offered to each envelope the host was given) → `Auto::choose`: each candidate of the shape runs
//!    (`run`; the log: `log` at `normal`; the array: `toon`, `columnar`, `json_compact` at
//!    `minimal`), the input and each output counted once (`Gauge::tokens`, or
//!    `Gauge::weigh` when one output alone changed it), the fewest tokens win
//!    (`write_route` says so), and `Auto::whole` hands back the winner with its counts.
//!    For the array, `validated` finds that a validating built-in changed the whole: its pass
//!    stands for rule 4's check. (A payload that starts like JSON and is not: the check runs
//!    here, once, then rule 5's placement of text, and the router routes it as text in the
//!    same call; nothing is rolled back.)
//! 7. `produced` and `verify`: rule 7's checks with the winner's facts (a lossless outcome of
//!    a built-in is verified one in N).
//! 8. `point`: rule 8 (the log's lossy outcome gets its `_tee` pointer under the input's
//!    content key; the array's lossless one none).
//! 9. `gain`: rule 9, with the router's counts when the payload is the router's own (the
//!    array: nothing counted again); otherwise `Gauge::weigh` counts only where the bytes
//!    cannot decide.
//! 10. `must_cut` (rule 11's test), then `store_original`: rule 10, the log's input stored
//!     under the pointer's key; then `cut_payload` (rule 11) only over `max_result_chars`:
//!     `own_cut` found, after rule 7, the codec that produced the whole payload when it offers a
//!     cut of its own output (its facts' `cuts`; the log: `auto`'s winner `log`), and `cut.rs`
//!     asks it through `DynCodec::cut` (the log: `Log::cut_to_room` → `Log::cut`; a plugin's:
//!     across the boundary), taking its cut when it keeps the rules, else cutting as text.
//! 11. Back in `pipeline::process`: sizes and time to the metadata, the observers' `on_processed`,
//!     and the token worker's job, given the counts the stage made exactly
//!     (`tokens::Count::Known`) and a copy of only what it must count; the [`Processed`]
//!     returned holds the slot its counts arrive in ([`Processed::tokens`]).
//!
//! # What the walk visits, counted (issue 48)
//!
//! The stage's own functions the log's walk above visits (the payload not cut), each counted
//! once however often it is called:
//!
//! | | before | after |
//! |---|---|---|
//! | `mod.rs` | 9: `process`, `untouched`, `Run::codec_name`, `Run::fuses_json`, `Run::auto`, `Stage::breaker`, `count_before`, `count_of`, `notify` | 7: the same without `Run::fuses_json` and `Run::auto` |
//! | the engine's answers (`stage/entries.rs`) | none: the stage matched on `Engine` or asked for the router (`Run::auto`) | 4: `Engine::name`, `fuses_json`, `reads_members`, `runs_at` |
//! | `rules.rs` | 21: `decide`, `store_error_result`, `compress`, `passthrough_flags`, `digest_beside`, `compress_keyed`, `fused_json`, `supported`, `classify`, `admit`, `budget`, `run_codec`, `produced`, `winner`, `Admitted::record`, `verify`, `log_output`, `point`, `gain`, `must_cut`, `store_original` | 23: the same, `own_cut` for `log_output`, and `read` (rule 4's one entry) and `call` (the engine's call, out of `run_codec`) |
//! | `pointer.rs` | 7: `Digest::beside`, `Digest::key`, `Digest::forget`, `key_of`, `store`, `text_pointer`, `attach_pointer` | 7 |
//! | in all | 37 functions in 3 files | 41 in 4 files |
//!
//! The functions grew by four, and each rule is now one call in `compress_keyed`, in the
//! order of CONTRACT §4. What changed most is the walk of a payload that starts like JSON and
//! is text (a log whose lines start with `[`), under the router:
//!
//! | | before | after |
//! |---|---|---|
//! | rule 4 | `fused_json`, then `supported` → `classify` after the codec ran | `read` → `fused_json`, then `supported` → `classify` in `run_codec` |
//! | rule 5 | `budget` as JSON in `admit`, as text after the codec ran | the same: the placement of text is asked only of a payload found to be text, so that JSON pays nothing for it |
//! | rule 6 | `admit` once | `admit` once |
//! | rule 7 | `run_codec` → `produced` → `winner` twice (the JSON attempt's metadata rolled back, `meta` copied before it) | `run_codec` once: `call` twice (the engine as JSON, then as text), `produced` → `winner` once, nothing rolled back |
//! | the breaker | told the text call's time | told the whole call's time |
//!
//! The branches on the router in the stage: the router asked for (`Run::auto`) at 4 places
//! of `rules.rs` (`fused`'s members and its second run as text, `supported`, `budget`) and
//! `Engine` matched at 3 (`Run::codec_name`, `Run::fuses_json`, `run_codec`) before; after,
//! the router asked for at none, and `Engine` matched only where it runs (`call`: the
//! router's routing or the codec's call) and in the engine's own answers. Cut, the walk adds
//! `cut_payload` and, in `cut.rs`, `cut` and either the `log` codec reached by its type
//! (`log_output`, by `Any`, then `Log::cut` by name: before) or `own_cut` → `DynCodec::cut`
//! for whichever codec produced the payload (after). The engine runs twice on a payload that
//! starts like JSON and is text, by design: the check is fused into the codec's pass, so that
//! JSON (most payloads that start like it) is read once, and text is known only after it.

mod cut;
mod pointer;
mod rules;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use parrot_codec_api::Level;

pub use pointer::{TEE_HINT, split_text_pointer, text_pointer};

use crate::call::{Call, Meta, Processed, Skip, TokenSlot};
use crate::metering::gauge::Gauge;
use crate::metering::observe::{CallEvent, Observer};
use crate::metering::report::Report;
use crate::metering::tokens::{Count, Job, TokenCounter, TokenWorker};
use crate::routing::budget::{Breaker, BreakerConfig, Budgets, Clock, Placement};
use crate::stage::entries::Engine;
use crate::tee::TeeStore;

/// The environment variable of the kill switch.
pub const KILL_SWITCH_ENV: &str = "PARROT_COMPRESSION_DISABLED";

/// Whether the environment turns the kill switch on ([`KILL_SWITCH_ENV`] is `1`). A host reads
/// it once, when it is built ([`crate::HostBuilder::kill_switch`]); a caller that must decide
/// before building one (the command, which passes a broken configuration through under the
/// switch) reads it here and gives the host its answer.
///
/// # Examples
///
/// ```
/// // The variable is unset in the doctests' environment.
/// assert!(!parrot_host::kill_switch_from_env());
/// ```
pub fn kill_switch_from_env() -> bool {
    std::env::var_os(KILL_SWITCH_ENV).is_some_and(|v| v == "1")
}

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

/// The stage's settings, as the host builder resolved them.
pub(crate) struct Settings {
    /// The placement's thresholds and the latency budgets.
    pub(crate) budgets: Budgets,
    /// The breakers' windows and cooldown.
    pub(crate) breaker: BreakerConfig,
    /// The clock of the breakers and the budgets.
    pub(crate) clock: Arc<dyn Clock>,
    /// The kill switch, decided when the host was built (rule 1).
    pub(crate) kill_switch: bool,
    /// Compress inline at any size (the command).
    pub(crate) inline_at_any_size: bool,
    /// Keep the original of lossless outcomes that changed the payload too.
    pub(crate) tee_lossless: bool,
    /// Rule 11's limit in code points (0: off).
    pub(crate) max_result_chars: usize,
    /// Rule 7's verification.
    pub(crate) verification: Verification,
    /// Count the savings report's tokens on the background worker (the decisions count with
    /// the tokenizer either way).
    pub(crate) report_tokens: bool,
    /// The default size of a retrieval, in tokens (0: none).
    pub(crate) retrieval_limit_tokens: usize,
    /// The most characters of a recovery call's answer in a proxy (0: no cap).
    pub(crate) recovery_max_chars: usize,
}

/// The stage's settings and state, owned by the host.
pub(crate) struct Stage {
    settings: Settings,
    placement: Placement,
    breakers: Mutex<HashMap<String, Arc<Breaker>>>,
    observers: Arc<Vec<Arc<dyn Observer>>>,
    report: Arc<Report>,
    tokens: TokenWorker,
    gauge: Gauge,
    calls: AtomicU64,
    verify_counter: AtomicU64,
}

impl Stage {
    /// A stage with `settings`, counting tokens with `tokenizer` for its decisions (rule 9) and
    /// for the savings report (always the first observer) and `observers`.
    pub(crate) fn new(
        settings: Settings,
        tokenizer: Arc<dyn TokenCounter>,
        observers: &[Arc<dyn Observer>],
    ) -> Stage {
        let report = Arc::new(Report::new(tokenizer.name()));
        let mut all: Vec<Arc<dyn Observer>> = vec![report.clone()];
        all.extend(observers.iter().cloned());
        let observers = Arc::new(all);
        let gauge = Gauge::new(Arc::clone(&tokenizer));
        let tokens = if settings.report_tokens {
            TokenWorker::start(tokenizer, Arc::clone(&observers))
        } else {
            TokenWorker::off()
        };
        Stage {
            placement: Placement {
                budgets: settings.budgets,
            },
            settings,
            breakers: Mutex::default(),
            gauge,
            tokens,
            observers,
            report,
            calls: AtomicU64::new(0),
            verify_counter: AtomicU64::new(0),
        }
    }

    /// The placement's thresholds and the budgets.
    pub(crate) fn budgets(&self) -> Budgets {
        self.placement.budgets
    }

    /// The token gauge of the stage's decisions, in the configured tokenizer.
    pub(crate) fn gauge(&self) -> &Gauge {
        &self.gauge
    }

    /// The default size of a retrieval, in tokens (0: none).
    pub(crate) fn retrieval_limit_tokens(&self) -> usize {
        self.settings.retrieval_limit_tokens
    }

    /// The most characters of a recovery call's answer in a proxy (0: no cap).
    pub(crate) fn recovery_max_chars(&self) -> usize {
        self.settings.recovery_max_chars
    }

    /// The live savings report.
    pub(crate) fn report(&self) -> &Report {
        &self.report
    }

    /// Waits until every processed call's tokens are delivered to the observers.
    pub(crate) fn flush(&self) {
        self.tokens.flush();
    }

    fn breaker(&self, codec: &str) -> Arc<Breaker> {
        let mut breakers = self.breakers.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(
            breakers
                .entry(codec.to_owned())
                .or_insert_with(|| Arc::new(Breaker::new(self.settings.breaker))),
        )
    }
}

/// The per-call context of one `process` run.
pub(crate) struct Run<'h, 'a> {
    pub(crate) stage: &'h Stage,
    pub(crate) tee: Option<&'h dyn TeeStore>,
    /// What runs the payload: the entry's codec with its facts, resolved when the host was
    /// built, or the router `auto` (the winner's facts then apply).
    pub(crate) engine: &'h Engine,
    pub(crate) level: Level,
    pub(crate) call: Call<'a>,
    /// The call runs on an executor thread (the async entry point offloaded it).
    pub(crate) offloaded: bool,
}

impl Run<'_, '_> {
    /// The name metadata and logs give the entry's codec (`auto` for the router).
    pub(crate) fn codec_name(&self) -> &str {
        self.engine.name()
    }
}

/// Runs the stage on one call.
pub(crate) fn process<'a>(run: Run<'_, 'a>) -> Processed<'a> {
    let stage = run.stage;
    let call = run.call;
    let input = call.payload.bytes();
    if stage.settings.kill_switch {
        return Processed::passed_through(input, Skip::KillSwitch);
    }
    let started = Instant::now();
    let startup_before = crate::metering::gauge::startup_nanos();
    let call_id = stage.calls.fetch_add(1, Ordering::Relaxed) + 1;
    let mut meta = untouched(&run, input.len());

    // Text the caller gave is UTF-8 already: the stage does not check it again.
    let known = match call.payload {
        crate::Input::Text(text) => Some(text),
        _ => None,
    };
    let decided = rules::decide(&run, &input, known, &mut meta);
    // The input as the text the stage read, when it read one (no need to check it again).
    let read = decided.as_ref().map(|decided| decided.text);
    // What the stage counted exactly already, the worker does not count again.
    let exact = |tokens: Option<crate::metering::gauge::Tokens>| {
        tokens.filter(|t| t.exact).map(|t| t.count)
    };
    let (before, after) = decided.as_ref().map_or((None, None), |decided| {
        (exact(decided.before), exact(decided.after))
    });
    let output: Option<String> = decided.map(|decided| decided.output);
    let counting = stage.tokens.is_on();
    let after_count = output
        .as_deref()
        .filter(|_| counting)
        .map(|text| count_of(stage, text, after));
    let payload = match output {
        Some(text) => {
            meta.compressed = true;
            Cow::Owned(text.into_bytes())
        }
        None => input.clone(),
    };
    meta.size_after = payload.len();
    // The compression alone: the tokenizer's start-up, paid once by the first call that counts
    // tokens, is not this call's work.
    let startup = Duration::from_nanos(crate::metering::gauge::startup_nanos() - startup_before);
    meta.duration_ms = started.elapsed().saturating_sub(startup).as_secs_f64() * 1000.0;

    notify(stage, call_id, call.tool, &meta);
    let slot = counting.then(|| {
        let before = count_before(stage, &input, before, read);
        let slot = Arc::new(TokenSlot::default());
        stage.tokens.submit(Job {
            call_id,
            tool: call.tool.to_owned(),
            before,
            after: after_count,
            slot: Arc::clone(&slot),
        });
        slot
    });
    Processed {
        payload,
        meta,
        call_id,
        tokens: slot,
    }
}

/// The metadata of a call the stage has not changed (yet): `size` bytes through the entry's
/// codec at its level.
fn untouched(run: &Run<'_, '_>, size: usize) -> Meta {
    Meta {
        compressed: false,
        codec: Some(run.codec_name().to_owned()),
        level: run.level,
        size_before: size,
        size_after: size,
        duration_ms: 0.0,
        teed: false,
        tee_key: None,
        skipped: None,
        no_gain: None,
        route: None,
    }
}

/// What the token worker gets of the input: the count the stage made exact (`known`), else the
/// text the stage read (`read`), else the input itself.
fn count_before(stage: &Stage, input: &[u8], known: Option<usize>, read: Option<&str>) -> Count {
    match (known, read) {
        (Some(n), _) => Count::Known(n),
        (None, Some(text)) => count_of(stage, text, None),
        // Only a payload that is not UTF-8 goes through the lossy conversion.
        (None, None) => match std::str::from_utf8(input) {
            Ok(text) => count_of(stage, text, None),
            Err(_) => Count::Text(String::from_utf8_lossy(input).into_owned()),
        },
    }
}

/// What the token worker gets of `text`: its count when the stage has it exact (`known`),
/// else its own copy (in a buffer it gave back after earlier counts, when it has one): the
/// caller keeps the input and the output.
fn count_of(stage: &Stage, text: &str, known: Option<usize>) -> Count {
    match known {
        Some(n) => Count::Known(n),
        None => Count::Text(stage.tokens.copy(text)),
    }
}

/// Tells every observer about the call; a panicking observer does not stop the stage.
fn notify(stage: &Stage, call_id: u64, tool: &str, meta: &Meta) {
    let event = CallEvent {
        call_id,
        tool: tool.to_owned(),
        meta: meta.clone(),
    };
    for observer in stage.observers.iter() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            observer.on_processed(&event);
        }));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{Call, Host, Input, MemoryTeeStore, NoGain, Skip, TokenCounter, Tokenizer};

    fn host(dir: &std::path::Path) -> Host {
        Host::builder()
            .project(dir)
            .plugin_path(None)
            .tee_store(Arc::new(MemoryTeeStore::default()))
            .build()
            .unwrap()
    }

    fn rows(n: usize) -> String {
        let rows: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"id": {i}, "name": "label-{i}", "color": "ff0000"}}"#))
            .collect();
        format!("[{}]", rows.join(", "))
    }

    /// The counts the router carried into the no-gain rule and on to the worker are the
    /// tokenizer's own counts of the input and of the payload that went out.
    #[test]
    fn carried_token_counts_are_the_tokenizers_own() {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        for input in [rows(9), rows(300), "plain text".to_owned()] {
            let out = host.process(Call::new("t", Input::Text(&input)));
            let tokens = out.tokens().expect("counted");
            let o200k = Tokenizer::O200k;
            assert_eq!(tokens.before, o200k.count(&input), "{:?}", out.meta);
            assert_eq!(
                tokens.after,
                o200k.count(out.text().unwrap()),
                "{:?}",
                out.meta
            );
            let meta = out.meta_json();
            assert_eq!(meta["tokens_before"], tokens.before);
            assert_eq!(meta["tokens_after"], tokens.after);
        }
    }

    #[test]
    fn no_gain_says_the_codec_declined() {
        let dir = tempfile::tempdir().unwrap();
        let out = host(dir.path()).process(Call::new("t", Input::Text("plain text")));
        assert_eq!(out.meta.skipped, Some(Skip::NoGain));
        assert_eq!(out.meta.no_gain, Some(NoGain::Declined));
        assert_eq!(out.meta.to_json()["compression_no_gain"], "codec_declined");
    }

    /// A codec whose output is smaller in bytes than a run of letters and holds more tokens.
    struct Dense;

    impl parrot_codec_api::Codec for Dense {
        const NAME: &'static str = "dense";

        fn new(_: &mut parrot_codec_api::Params) -> Result<Self, parrot_codec_api::CodecError> {
            Ok(Dense)
        }

        fn compress(
            &self,
            _: parrot_codec_api::Payload<'_>,
            _: crate::Level,
        ) -> Result<parrot_codec_api::Outcome, parrot_codec_api::CodecError> {
            Ok(parrot_codec_api::Outcome::lossless("\u{2042}".repeat(20)))
        }
    }

    /// The router refusing its only candidate on tokens was reported as `codec_declined`: it
    /// is `more_tokens`, with the refused output's tokens and the input's.
    #[test]
    fn a_router_refusal_on_tokens_is_more_tokens_with_the_counts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
        std::fs::write(
            dir.path().join(".parrot/compressors.toml"),
            "[compressor.t]\ncodec = \"auto\"\nlevel = \"minimal\"\n\
             [compressor.t.params]\ntext = [\"dense\"]\n",
        )
        .unwrap();
        let host = Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .codec::<Dense>()
            .build()
            .unwrap();
        let input = "a".repeat(100);
        let output = "\u{2042}".repeat(20);
        let o200k = Tokenizer::O200k;
        let (before, after) = (o200k.count(&input), o200k.count(&output));
        assert!(
            output.len() < input.len() && after > before,
            "the made case holds: {} < {} bytes, {after} > {before} tokens",
            output.len(),
            input.len()
        );
        let out = host.process(Call::new("t", Input::Text(&input)));
        assert_eq!(out.meta.skipped, Some(Skip::NoGain), "{:?}", out.meta);
        assert_eq!(
            out.meta.no_gain,
            Some(NoGain::MoreTokens {
                rejected: after,
                input: before
            }),
            "{:?}",
            out.meta
        );
        let meta = out.meta.to_json();
        assert_eq!(meta["compression_no_gain"], "more_tokens");
        assert_eq!(meta["compression_rejected_tokens"], after);
    }

    #[test]
    fn a_call_that_gained_names_no_no_gain() {
        let dir = tempfile::tempdir().unwrap();
        let input = rows(9);
        let out = host(dir.path()).process(Call::new("t", Input::Text(&input)));
        assert!(out.meta.compressed, "{:?}", out.meta);
        assert_eq!(out.meta.no_gain, None);
        assert!(out.meta.to_json().get("compression_no_gain").is_none());
    }

    #[test]
    fn nothing_counts_the_tokens_of_a_host_that_does_not_report_them() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .report_tokens(false)
            .build()
            .unwrap();
        let input = rows(9);
        let out = host.process(Call::new("t", Input::Text(&input)));
        assert_eq!(out.tokens(), None);
        assert!(out.meta_json().get("tokens_before").is_none());
    }
}
