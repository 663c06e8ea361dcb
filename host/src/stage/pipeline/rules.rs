//! Rules 2 to 11 of the stage (rule 1, the kill switch, is [`super::process`]'s own), in the
//! order they apply, numbered as CONTRACT §4 states them.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parrot_codec_api::{Level, Outcome, Payload, PayloadKind};

use super::Run;
use super::cut::OwnCut;
use super::pointer::{
    self, DIGEST_BESIDE_BYTES, Digest, KEY_HEX_DIGITS, attach_pointer, tee_pointer, text_pointer,
};
use crate::call::{Meta, NoGain, Skip, Status};
use crate::metering::gauge::Tokens;
use crate::plugins::facts::Resolved;
use crate::routing::auto::{Decision, Part, Refused};
use crate::routing::budget::{Admission, Breaker, Place};
use crate::stage::entries::Engine;
use parrot_json::{JsonCheck, Member, TopLevel};

/// A new payload, with what the stage read and counted to decide it.
pub(super) struct Decided<'i> {
    /// The payload the model sees.
    pub(super) output: String,
    /// The input as the text it was read as.
    pub(super) text: &'i str,
    /// The input's tokens, when the router or the no-gain rule counted them.
    pub(super) before: Option<Tokens>,
    /// The output's tokens, when the no-gain rule counted the payload that goes out.
    pub(super) after: Option<Tokens>,
}

/// Decides the call's output: `Some` new payload, or `None` (the input goes out), filling in
/// the metadata.
pub(super) fn decide<'i>(
    run: &Run<'_, '_>,
    input: &'i [u8],
    known: Option<&'i str>,
    meta: &mut Meta,
) -> Option<Decided<'i>> {
    store_error_result(run, input, meta);
    match compress(run, input, known, meta) {
        Ok(decided) => Some(decided),
        Err(skip) => {
            meta.skipped = Some(skip);
            if skip == Skip::NoGain && meta.no_gain.is_none() {
                meta.no_gain = Some(NoGain::Declined);
            }
            None
        }
    }
}

/// Rules 3 to 11: the new payload (with the input's text), or why the input goes out.
///
/// `known` is the input as text when the caller gave text (it is not checked again).
fn compress<'i>(
    run: &Run<'_, '_>,
    input: &'i [u8],
    known: Option<&'i str>,
    meta: &mut Meta,
) -> Result<Decided<'i>, Skip> {
    passthrough_flags(run)?;
    if parrot_codec_api::is_retrieval(input) {
        // A recovery call's result, sent back through a pipeline: compressing it again would
        // replace the part asked for with markers pointing at the same original.
        return Err(Skip::AlreadyCompressed);
    }
    if !digest_beside(run, input) {
        return compress_keyed(run, input, known, meta, &Digest::Later);
    }
    let unwanted = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let digest = Digest::beside(scope, input, &unwanted);
        let result = compress_keyed(run, input, known, meta, &digest);
        digest.forget();
        result
    })
}

/// Whether the input's digest is computed beside the codec: a large input whose key the
/// pointer may need (a lossy level with a store, or every outcome with `tee_lossless`). A call
/// that ends without a key stops the thread within a chunk of its hashing.
fn digest_beside(run: &Run<'_, '_>, input: &[u8]) -> bool {
    input.len() >= DIGEST_BESIDE_BYTES
        && run.tee.is_some()
        && (run.level.allows_loss() || run.stage.settings.tee_lossless)
}

/// [`compress`] with the input's digest from `digest`.
fn compress_keyed<'i>(
    run: &Run<'_, '_>,
    input: &'i [u8],
    known: Option<&'i str>,
    meta: &mut Meta,
    digest: &Digest<'_>,
) -> Result<Decided<'i>, Skip> {
    // Rule 4: the text and its kind (checked, or left to the codec's own pass).
    let read = read(run, input, known)?;
    let text = read.text;
    // Rules 5 and 6: the placement and the breaker.
    let admitted = admit(run, input, &read)?;
    // Rule 7: the codec's call, once, and its checks.
    let produced = run_codec(run, input, read, admitted, meta)?;
    let produced = verify(run, produced)?;
    let own = own_cut(&produced, text);
    let routed = produced.tokens;
    // Rule 8: the pointer.
    let mut pointed = point(run, input, produced, digest)?;
    // Rule 9: the gain. The router's counts are of its own payload: with a pointer added,
    // only the input's count stands.
    let carried = routed.filter(|_| pointed.unpointed.is_none());
    let weighed = gain(run, text, &pointed, carried, meta)?;
    // Rules 10 and 11: the original stored, then the cut when the payload is over the limit.
    let cut = must_cut(run, &pointed.payload);
    let tentative = pointed.key.clone();
    store_original(run, input, &mut pointed, cut, meta)?;
    // A pointer rewritten to the whole digest, or a cut, changes the payload that goes out.
    let unchanged = !cut && pointed.key == tentative;
    let output = if cut {
        cut_payload(run, &pointed, own)
    } else {
        pointed.payload
    };
    Ok(Decided {
        output,
        text,
        // The exact count of the input, from whichever counted it exactly.
        before: [weighed, routed]
            .into_iter()
            .flatten()
            .map(|(before, _)| before)
            .find(|before| before.exact),
        after: weighed.filter(|_| unchanged).map(|(_, after)| after),
    })
}

/// The codec whose output is the whole payload, when it compressed the whole text (directly,
/// or as `auto`'s winner) and offers a cut of its own output, with that text: rule 11 then
/// asks it to cut its output by its grammar.
fn own_cut<'r>(produced: &Produced<'r>, text: &'r str) -> Option<OwnCut<'r>> {
    whole_part(&produced.parts, text)
        .filter(|part| part.facts.cuts)
        .map(|part| OwnCut {
            codec: part.codec,
            original: Payload::new(text, part.kind),
        })
}

/// The part that is the whole payload, when the payload has one part: the codec's output for
/// all of `text` (a part's output is `None` when it is the routed payload itself).
fn whole_part<'p, 'r>(parts: &'p [Part<'r>], text: &str) -> Option<&'p Part<'r>> {
    match parts {
        [part] if part.output.is_none() && std::ptr::eq(part.input.as_ref(), text) => Some(part),
        _ => None,
    }
}

/// Rule 2: a status other than `success` is stored (reason `error`), so nothing is lost when
/// the caller raises; the payload then goes out by rule 3 (its level is `none`).
fn store_error_result(run: &Run<'_, '_>, input: &[u8], meta: &mut Meta) {
    let call = run.call;
    if call.status == Status::Success {
        return;
    }
    let Some(tee) = run.tee else {
        return;
    };
    match pointer::store(tee, call.tool, input, None) {
        Ok(key) => {
            meta.teed = true;
            meta.tee_key = Some(key);
        }
        Err(err) => tracing::warn!(tool = call.tool, "storing an error payload failed: {err}"),
    }
}

/// Rule 3: `return_direct`, `already_compressed`, and the effective level `none` pass through;
/// so does a retrieval (a payload whose first line is a recovery call's header, see
/// [`parrot_codec_api::is_retrieval`]), as `already_compressed`.
fn passthrough_flags(run: &Run<'_, '_>) -> Result<(), Skip> {
    if run.call.return_direct {
        Err(Skip::ReturnDirect)
    } else if run.call.already_compressed {
        Err(Skip::AlreadyCompressed)
    } else if run.level == Level::None {
        Err(Skip::LevelNone)
    } else {
        Ok(())
    }
}

/// What rule 4 read of the payload: its text and its kind, checked, or left to the codec's own
/// pass (fused).
struct Read<'i> {
    text: &'i str,
    kind: PayloadKind,
    /// A JSON object's members, for an engine that takes them ([`Engine::reads_members`]).
    members: Option<Vec<Member<'i>>>,
    /// The JSON check is left to the codec's validating pass ([`fused_json`]): the payload is
    /// given as JSON, and may turn out to be text or one the stage never changes (rule 7 then
    /// runs the check, once).
    fused: bool,
}

/// Rule 4: the payload's text and kind ([`supported`]); or, when [`fused_json`] lets it
/// through, the payload as JSON without checking it first, the check fused into the codec's
/// own pass (for the router, an object's members found by structure alone).
fn read<'i>(run: &Run<'_, '_>, input: &'i [u8], known: Option<&'i str>) -> Result<Read<'i>, Skip> {
    if let Some((text, start)) = fused_json(run, input, known) {
        let members = (run.engine.reads_members() && text.as_bytes()[start] == b'{')
            .then(|| parrot_json::members_unchecked(text, start))
            .flatten();
        return Ok(Read {
            text,
            kind: PayloadKind::Json,
            members,
            fused: true,
        });
    }
    let (kind, text, members) = supported(run, input, known)?;
    Ok(Read {
        text,
        kind,
        members,
        fused: false,
    })
}

/// Rule 4, fused: whether the payload is given as JSON without checking it first, when the
/// engine says it fuses JSON ([`Engine::fuses_json`]: `auto`, or a built-in that validates
/// JSON in its own pass) and the payload is UTF-8 that starts, after whitespace, like an object
/// or an array: the text, and where its value starts. The validation's time counts in the
/// codec call's budget, as it is part of the codec's pass.
fn fused_json<'i>(
    run: &Run<'_, '_>,
    input: &'i [u8],
    known: Option<&'i str>,
) -> Option<(&'i str, usize)> {
    if !run.engine.fuses_json() {
        return None;
    }
    let start = input
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if !matches!(input[start], b'{' | b'[') {
        return None;
    }
    let text = match known {
        Some(text) => text,
        None => std::str::from_utf8(input).ok()?,
    };
    Some((text, start))
}

/// Whitespace around a JSON value.
const WS: &[char] = &[' ', '\t', '\n', '\r'];

/// Rule 4: the text a codec gets and its kind; payloads the stage never changes (not UTF-8,
/// empty, JSON with a duplicate member name) pass through. JSON nested deeper than the
/// parser's limit is text.
///
/// For `auto`, a JSON object is read member by member in this one validating pass (the same
/// checks as `parrot_json::check`), and the members go to the routing: it then need not read
/// the payload again to find its shape.
fn supported<'i>(
    run: &Run<'_, '_>,
    input: &'i [u8],
    known: Option<&'i str>,
) -> Result<(PayloadKind, &'i str, Option<Vec<Member<'i>>>), Skip> {
    classify(input, known, run.engine.reads_members()).map_err(|why| {
        tracing::debug!(tool = run.call.tool, "payload passes through: {why}");
        Skip::UnsupportedPayload
    })
}

/// The payload's kind, and with `members`, a JSON object's members; `known` is `bytes` as text
/// when the caller has it.
fn classify<'b>(
    bytes: &'b [u8],
    known: Option<&'b str>,
    members: bool,
) -> Result<(PayloadKind, &'b str, Option<Vec<Member<'b>>>), &'static str> {
    let text = match known {
        Some(text) => text,
        None => std::str::from_utf8(bytes).map_err(|_| "not UTF-8")?,
    };
    if text.is_empty() {
        return Err("empty");
    }
    let body = text.trim_start_matches(WS);
    if members && body.starts_with('{') {
        let start = text.len() - body.len();
        return match parrot_json::members(text, start) {
            Ok(found) => {
                let end = found.last().map_or(start + 1, |m| m.value.end);
                let rest = text[end..].trim_start_matches(WS);
                match rest.strip_prefix('}') {
                    Some(after) if after.trim_start_matches(WS).is_empty() => {
                        Ok((PayloadKind::Json, text, Some(found)))
                    }
                    _ => Ok((PayloadKind::Text, text, None)),
                }
            }
            Err(parrot_json::Error::DuplicateName) => Err("duplicate member name"),
            Err(_) => Ok((PayloadKind::Text, text, None)),
        };
    }
    match parrot_json::check(text) {
        JsonCheck::Json => Ok((PayloadKind::Json, text, None)),
        JsonCheck::DuplicateMember => Err("duplicate member name"),
        JsonCheck::TooDeep | JsonCheck::NotJson => Ok((PayloadKind::Text, text, None)),
    }
}

/// A codec call the budgets let through: the codec's breaker, what it admitted, and the
/// budget the call must meet.
struct Admitted {
    breaker: Arc<Breaker>,
    admission: Admission,
    budget: Duration,
}

/// Rules 5 and 6: the placement (over its thresholds without an executor: passthrough), then the
/// codec's breaker (open: passthrough). A fused payload the stage never changes says so first,
/// as it would with rule 4's check first ([`checked_first`]).
fn admit(run: &Run<'_, '_>, input: &[u8], read: &Read<'_>) -> Result<Admitted, Skip> {
    let budget =
        budget(run, read.kind, read.text).map_err(|skip| checked_first(run, input, read, skip))?;
    let stage = run.stage;
    let breaker = stage.breaker(run.codec_name());
    let admission = breaker.admit(stage.settings.clock.now());
    if admission == Admission::Open {
        return Err(checked_first(run, input, read, Skip::BreakerOpen));
    }
    Ok(Admitted {
        breaker,
        admission,
        budget,
    })
}

/// `skip`, unless the payload is a fused one that rule 4's check would have passed through
/// (`unsupported_payload`): then that.
fn checked_first(run: &Run<'_, '_>, input: &[u8], read: &Read<'_>, skip: Skip) -> Skip {
    match read.fused.then(|| supported(run, input, Some(read.text))) {
        Some(Err(unsupported)) => unsupported,
        _ => skip,
    }
}

/// Rule 5, the placement alone: the budget of a call it lets through, or `budget_passthrough`.
fn budget(run: &Run<'_, '_>, kind: PayloadKind, text: &str) -> Result<Duration, Skip> {
    let stage = run.stage;
    // The level the codec really runs at: `auto` runs JSON candidates at `minimal` unless its
    // entry says `lossy_json` (CONTRACT §2.8), so a JSON payload under `auto` is judged, and
    // budgeted, as the `minimal` call it is.
    let minimal = run.engine.runs_at(kind, run.level) == Level::Minimal;
    let place = if stage.settings.inline_at_any_size {
        Place::Inline
    } else {
        stage.placement.place_text(minimal, text, run.offloaded)
    };
    if place == Place::Passthrough {
        return Err(Skip::BudgetPassthrough);
    }
    Ok(stage.placement.budget(minimal, place))
}

impl Admitted {
    /// Tells the breaker how the codec's call went: over `budget` or not.
    fn record(&self, run: &Run<'_, '_>, elapsed: Duration, budget: Duration) {
        self.breaker.record(
            run.stage.settings.clock.now(),
            self.admission,
            elapsed > budget,
        );
    }

    /// Gives back an admission whose call does not count (a probe stays available).
    fn abandon(&self) {
        if self.admission == Admission::Probe {
            self.breaker.abandon_probe();
        }
    }
}

/// What a codec returned, once rule 7 accepted it.
struct Produced<'r> {
    payload: String,
    lossy: bool,
    /// The output's top-level shape, when it was read.
    shape: Option<TopLevel>,
    /// The payload is text for a JSON input: the codec declares text output (TOON, CSV), or
    /// `auto`'s winner does, or `auto` routed a JSON string's text.
    text_output: bool,
    /// What rule 7 verifies: each part of the payload with the codec that produced it (one
    /// part, the whole payload, unless `auto` routed an MCP result's blocks one by one).
    parts: Vec<Part<'r>>,
    /// The router's counts of the input and of `payload`, when it counted the whole input.
    tokens: Option<(Tokens, Tokens)>,
}

/// Rule 7: the codec runs, once, timed for the breaker against the call's budget. An error or
/// a panic is `codec_error`; an unchanged outcome is `no_gain`; a plugin's output for a JSON
/// payload must be JSON unless the codec declares text output (else `codec_error`).
///
/// For `auto`, the routing runs (every candidate it ran counts in the time) and the winner
/// stands for the codec: the metadata names it and the route; its `text_output` and its
/// origin apply, here and in rule 7's checks.
///
/// A fused payload ([`Read::fused`]): a pass that validated the whole payload and changed it
/// ([`validated`]) stands for rule 4's check. Otherwise the check runs now, once: a payload the
/// stage never changes passes through as the check would have sent it, with nothing for the
/// breaker to count; JSON keeps the pass's result (on JSON the structural members are the
/// checked ones); text is left alone by a codec that validates JSON (`no_gain`), and the
/// router routes it as text in the same call, under the placement's answer for text (rule 5,
/// asked then: a payload it would pass through as text passes through). The breaker sees one
/// call, its time all of the call's.
fn run_codec<'r>(
    run: &'r Run<'_, '_>,
    input: &[u8],
    read: Read<'r>,
    admitted: Admitted,
    meta: &mut Meta,
) -> Result<Produced<'r>, Skip> {
    let Read {
        text,
        mut kind,
        members,
        fused,
    } = read;
    let clock = &run.stage.settings.clock;
    let started = clock.now();
    let mut ran = call(run, kind, text, members);
    let mut budget = admitted.budget;
    if fused && !validated(&ran, text) {
        match supported(run, input, Some(text)) {
            Err(skip) => {
                admitted.abandon();
                return Err(skip);
            }
            Ok((PayloadKind::Json, ..)) => {}
            Ok(_) if !run.engine.runs_text_again() => {
                admitted.record(run, clock.now().saturating_duration_since(started), budget);
                return Err(Skip::NoGain);
            }
            // Rule 5's placement of text, deferred with rule 4's check: only a payload found
            // to be text is placed as text, and JSON, most of what starts like it, is not.
            Ok(_) => match self::budget(run, PayloadKind::Text, text) {
                Err(skip) => {
                    admitted.abandon();
                    return Err(skip);
                }
                Ok(text_budget) => {
                    (kind, budget) = (PayloadKind::Text, text_budget);
                    ran = call(run, kind, text, None);
                }
            },
        }
    }
    admitted.record(run, clock.now().saturating_duration_since(started), budget);
    produced(run, kind, text, ran, meta)
}

/// What the engine's call gave: its outcome (or its error), or the panic it raised.
type Called<'r> = std::thread::Result<Result<Ran<'r>, parrot_codec_api::CodecError>>;

/// The engine run on `text` as `kind`, a panic caught: the router's routing, or the codec's
/// call.
fn call<'r>(
    run: &'r Run<'_, '_>,
    kind: PayloadKind,
    text: &'r str,
    members: Option<Vec<Member<'r>>>,
) -> Called<'r> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match run.engine {
        Engine::Router(auto) => Ok(Ran::Routed(auto.route_read(text, kind, members, run.level))),
        Engine::Codec(resolved) => resolved
            .codec
            .compress(Payload::new(text, kind), run.level)
            .map(|outcome| Ran::Codec(outcome, resolved)),
    }))
}

/// Whether a call on a fused payload validated it: the whole payload ([`whole_part`]), given
/// as JSON to a codec that validates JSON in its own pass, which changed it. The payload is
/// then JSON the check accepts.
fn validated(called: &Called<'_>, text: &str) -> bool {
    match called {
        Ok(Ok(Ran::Codec(Outcome::Changed { .. }, resolved))) => resolved.facts.validates_json,
        Ok(Ok(Ran::Routed(decision))) => decision.routed.as_ref().is_some_and(|routed| {
            whole_part(&routed.parts, text)
                .is_some_and(|part| part.facts.validates_json && part.kind == PayloadKind::Json)
        }),
        _ => false,
    }
}

/// What the codec call gave, under rule 7.
fn produced<'r>(
    run: &'r Run<'_, '_>,
    kind: PayloadKind,
    text: &'r str,
    result: Called<'r>,
    meta: &mut Meta,
) -> Result<Produced<'r>, Skip> {
    let (tool, codec) = (run.call.tool, run.codec_name());
    let ran = match result {
        Ok(Ok(ran)) => ran,
        Ok(Err(err)) => {
            tracing::warn!(tool, codec, "codec failed: {err}");
            return Err(Skip::CodecError);
        }
        Err(_) => {
            tracing::warn!(tool, codec, "codec panicked");
            return Err(Skip::CodecError);
        }
    };
    let mut produced = match ran {
        Ran::Codec(Outcome::Unchanged, _) => return Err(Skip::NoGain),
        Ran::Codec(Outcome::Changed { payload, lossy }, resolved) => Produced {
            payload,
            lossy,
            shape: None,
            text_output: resolved.facts.text_output,
            parts: vec![Part {
                codec: &*resolved.codec,
                facts: &resolved.facts,
                kind,
                input: Cow::Borrowed(text),
                output: None,
            }],
            tokens: None,
        },
        Ran::Routed(decision) => winner(decision, meta)?,
    };
    // A built-in's output is JSON by construction (property-tested and fuzzed), so its shape
    // is read only when a pointer needs it.
    let builtin = produced.parts.iter().all(|part| part.facts.builtin);
    if kind == PayloadKind::Json && !builtin && !produced.text_output {
        produced.shape = parrot_json::top_level(&produced.payload);
        if produced.shape.is_none() {
            tracing::warn!(
                tool,
                codec = meta.codec.as_deref().unwrap_or_default(),
                "codec returned invalid JSON for a JSON payload"
            );
            return Err(Skip::CodecError);
        }
    }
    Ok(produced)
}

/// The router's winner as what the codec produced: the metadata names it, its route and the
/// level it ran at; no winner is `no_gain`.
fn winner<'r>(decision: Decision<'r>, meta: &mut Meta) -> Result<Produced<'r>, Skip> {
    meta.route = Some(decision.route);
    let Some(routed) = decision.routed else {
        // Refused on tokens is rule 9's `more_tokens`, with the figures; otherwise every
        // candidate declined (the stage says `codec_declined`).
        meta.no_gain = match decision.refused {
            Some(Refused::Tokens { rejected, input }) => {
                Some(NoGain::MoreTokens { rejected, input })
            }
            Some(Refused::Bytes) => Some(NoGain::NotSmaller),
            None => meta.no_gain,
        };
        return Err(Skip::NoGain);
    };
    meta.codec = Some(routed.codec);
    // The level the winners ran at: JSON, text and file candidates at `minimal` (unless
    // `lossy_json`), a log's at the call's.
    if let Some(level) = routed.level {
        meta.level = level;
    }
    Ok(Produced {
        payload: routed.payload,
        lossy: routed.lossy,
        shape: None,
        text_output: routed.text_output,
        parts: routed.parts,
        tokens: routed.tokens,
    })
}

/// What the codec call gave: a plain codec's outcome (with the codec), or `auto`'s decision.
enum Ran<'r> {
    Codec(Outcome, &'r Resolved),
    Routed(Decision<'r>),
}

/// Rule 7, its checks: an outcome claimed lossless is believed only when the host can check it.
/// A part whose codec offers no inverse makes it lossy (the claim cannot be checked, CONTRACT
/// §10.4), and so does a part that does not expand back through its codec's inverse when
/// verification is on for that codec (each part through its own, for `auto`). A lossy outcome
/// at `minimal` is refused (`codec_error`), with a warning that says why it is lossy.
fn verify<'r>(run: &Run<'_, '_>, mut produced: Produced<'r>) -> Result<Produced<'r>, Skip> {
    let tool = run.call.tool;
    let minimal = !run.level.allows_loss();
    if !produced.lossy {
        let payload = &produced.payload;
        let doubt = produced.parts.iter().find_map(|part| {
            if !part.facts.expands {
                Some((part.facts.name.as_str(), "has no inverse to check it with"))
            } else if should_verify(run, part) && !expands_back(part, payload) {
                Some((
                    part.facts.name.as_str(),
                    "does not expand back to the input",
                ))
            } else {
                None
            }
        });
        if let Some((codec, why)) = doubt {
            let then = if minimal {
                "refused at minimal"
            } else {
                "treated as lossy"
            };
            tracing::warn!(tool, codec, "an outcome claimed lossless {why}: {then}");
            produced.lossy = true;
            if minimal {
                return Err(Skip::CodecError);
            }
        }
    }
    if produced.lossy && minimal {
        tracing::warn!(
            tool,
            codec = run.codec_name(),
            "codec returned a lossy outcome at minimal: refused"
        );
        return Err(Skip::CodecError);
    }
    Ok(produced)
}

/// Plugin codecs: every lossless outcome (unless turned off); built-ins: one in N. Asked only
/// of a part whose codec offers an inverse ([`verify`] asks that first).
fn should_verify(run: &Run<'_, '_>, part: &Part<'_>) -> bool {
    let v = run.stage.settings.verification;
    if part.facts.builtin {
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

/// Whether the part's codec gives its input back from its output (`payload` when the part
/// is the whole payload).
fn expands_back(part: &Part<'_>, payload: &str) -> bool {
    let output = part.output.as_deref().unwrap_or(payload);
    let expanded = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        part.codec.expand(output)
    })) {
        Ok(Ok(expanded)) => expanded,
        _ => return false,
    };
    part.facts
        .meta
        .gives_back(part.kind, &part.input, &expanded)
}

/// The output with its pointer (rule 8), before the original is stored (rule 10).
struct Pointed {
    payload: String,
    /// The codec's payload, kept apart when `payload` has a pointer (which may have to be
    /// rewritten, and which rule 11's cut leaves out); `None` when `payload` is the codec's.
    unpointed: Option<String>,
    /// The tentative key the pointer names.
    key: Option<String>,
    shape: Option<TopLevel>,
    /// The payload is text for a JSON input (see [`Produced::text_output`]).
    text_output: bool,
    reason: &'static str,
}

/// Rule 8: a lossy outcome gets its `_tee` pointer (without a tee store it cannot,
/// and goes out as the input: `tee_failed`); so does a lossless one that changed the payload
/// when the host was built with `tee_lossless` (reason `lossless`). The pointer names the
/// input's content key: the no-gain rule counts it, and nothing is stored for an outcome that
/// rule 9 discards; rule 10 stores it ([`store_original`]).
fn point(
    run: &Run<'_, '_>,
    input: &[u8],
    produced: Produced<'_>,
    digest: &Digest<'_>,
) -> Result<Pointed, Skip> {
    // A built-in's output for a JSON input is JSON by construction (property-tested and
    // fuzzed): its shape is read by structure alone. Any other output is checked.
    let json_by_construction = produced
        .parts
        .iter()
        .all(|part| part.facts.builtin && part.kind == PayloadKind::Json);
    let Produced {
        payload,
        lossy,
        mut shape,
        text_output,
        ..
    } = produced;
    if lossy && run.tee.is_none() {
        // Unreachable through the host (levels are capped without a store); kept as the
        // runtime guard: nothing lossy goes out without a way back.
        return Err(Skip::TeeFailed);
    }
    let keep = lossy || (run.stage.settings.tee_lossless && run.tee.is_some());
    let reason = if lossy { "lossy" } else { "lossless" };
    let Some(key) = keep.then(|| digest.key(run.call.tool, input, KEY_HEX_DIGITS)) else {
        return Ok(Pointed {
            payload,
            unpointed: None,
            key: None,
            shape,
            text_output,
            reason,
        });
    };
    if shape.is_none() && !text_output {
        shape = if json_by_construction {
            parrot_json::top_level_unchecked(&payload)
        } else {
            parrot_json::top_level(&payload)
        };
    }
    Ok(Pointed {
        payload: attach_pointer(&payload, shape, &key, reason),
        unpointed: Some(payload),
        key: Some(key),
        shape,
        text_output,
        reason,
    })
}

/// Rule 9: a final payload (its pointer included) that is not strictly smaller than the input
/// in bytes, or that holds more tokens of the configured tokenizer, is discarded (`no_gain`).
/// The tokens are the gauge's (CONTRACT §2.1): counted only where the bytes cannot decide.
///
/// `carried` are the router's counts of this input and this payload, which decide without
/// counting again. Returns the counts the decision made or was given (`None` when the bytes
/// decided alone); a discarded payload's kind of no gain goes to the metadata, with the
/// rejected output's tokens when they decided.
fn gain(
    run: &Run<'_, '_>,
    input: &str,
    pointed: &Pointed,
    carried: Option<(Tokens, Tokens)>,
    meta: &mut Meta,
) -> Result<Option<(Tokens, Tokens)>, Skip> {
    let payload = pointed.payload.as_str();
    if payload.len() >= input.len() {
        meta.no_gain = Some(NoGain::NotSmaller);
        return Err(Skip::NoGain);
    }
    let weighed = run.stage.gauge().weigh(input, payload, carried);
    if weighed.fits {
        return Ok(weighed.counts);
    }
    meta.no_gain = Some(match weighed.counts {
        Some((before, after)) => NoGain::MoreTokens {
            rejected: after.count,
            input: before.count,
        },
        None => NoGain::NotSmaller,
    });
    Err(Skip::NoGain)
}

/// Rule 11, its test: whether the final payload is over `max_result_chars` code points and
/// will be cut (only with a tee store, which keeps the original). Its code points are counted
/// once, and only when its bytes are over the limit (a text has no more code points than
/// bytes).
fn must_cut(run: &Run<'_, '_>, payload: &str) -> bool {
    let max = run.stage.settings.max_result_chars;
    if max == 0 || payload.len() <= max {
        return false;
    }
    let chars = payload.chars().count();
    if chars > max && run.tee.is_none() {
        tracing::warn!(
            tool = run.call.tool,
            chars,
            max,
            "payload over max_result_chars goes out uncut: no tee store to keep the original"
        );
    }
    chars > max && run.tee.is_some()
}

/// Rule 10: the input is stored before the output goes out, under the pointer's
/// content key. A store failure sends the input out (`tee_failed`); when the short key holds
/// another original, the input goes under its whole digest, and the pointer is rewritten to
/// name it.
fn store_original(
    run: &Run<'_, '_>,
    input: &[u8],
    pointed: &mut Pointed,
    cut: bool,
    meta: &mut Meta,
) -> Result<(), Skip> {
    let keep = pointed.key.is_some();
    let (Some(tee), true) = (run.tee, keep || cut) else {
        return Ok(());
    };
    match pointer::store(tee, run.call.tool, input, pointed.key.clone()) {
        Ok(stored) => {
            if let (Some(unpointed), true) = (
                &pointed.unpointed,
                pointed.key.as_deref() != Some(stored.as_str()),
            ) {
                pointed.payload = attach_pointer(unpointed, pointed.shape, &stored, pointed.reason);
            }
            pointed.key = Some(stored);
        }
        Err(err) => {
            tracing::warn!(
                tool = run.call.tool,
                "tee store failed, the original goes out: {err}"
            );
            return Err(Skip::TeeFailed);
        }
    }
    meta.teed = true;
    meta.tee_key = pointed.key.clone();
    Ok(())
}

/// Rule 11: the codec's payload (without its pointer) cut to fit, in one wrapper
/// with a pointer (reason `cut`) to the original, its last line a marker saying what the cut
/// removed (see `cut.rs`); `own` is the codec that produced the whole payload when it offers
/// a cut of its own output, cut by its grammar.
fn cut_payload(run: &Run<'_, '_>, pointed: &Pointed, own: Option<OwnCut<'_>>) -> String {
    let max = run.stage.settings.max_result_chars;
    let payload = pointed.unpointed.as_deref().unwrap_or(&pointed.payload);
    let key = pointed.key.as_deref().unwrap_or_default();
    let text = pointed.shape.is_none()
        && (pointed.text_output || parrot_json::top_level(payload).is_none());
    let pointer = if text {
        super::cut::Pointer::Text(text_pointer(key, "cut"))
    } else {
        super::cut::Pointer::Json(tee_pointer(key, "cut"))
    };
    let cut = super::cut::cut(payload, own, &pointer, max);
    tracing::warn!(
        tool = run.call.tool,
        before = pointed.payload.chars().count(),
        after = cut.chars().count(),
        max,
        "payload over max_result_chars was cut (original in the tee store)"
    );
    cut
}
