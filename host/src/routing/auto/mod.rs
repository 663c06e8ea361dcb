//! The routing codec `auto` (CONTRACT §2.8): per payload, it recognises the payload's shape and runs the
//! candidate codecs that fit it, keeping the output with the fewest tokens of the host's
//! tokenizer.
//!
//! Its candidates may be plugin codecs, so it is not built from params alone like other
//! codecs: the entry table builds it from the registry (see [`Auto::build`]), and the stage
//! knows it — the winner's flags apply to what it produced (its `text_output`, its inverse for
//! verification, the verification policy of a built-in or a plugin).
//!
//! # Shapes
//!
//! Recognised from the JSON reader's spans, reading only what the decision needs:
//!
//! - `rows`: a top-level array whose elements are objects, or an object whose largest member
//!   (by bytes as written) is such an array (`{"rows": […]}`, `{"items": […]}`,
//!   `{"driver": …, "rows": […]}`). Only the first `sample_rows` elements are looked at;
//! - `object`: any other JSON object or array (nested API responses, arrays of scalars);
//! - `text`: a text payload. A JSON string payload is its decoded text; when that text is
//!   itself JSON (not another string), that JSON is routed instead. Text is routed by its kind
//!   (see *Text kinds*): file contents to the `file` candidates, logs to the `log` candidates,
//!   anything else (a listing, search hits, a table, VCS output, text with no signal) to the
//!   `text` candidates;
//! - an envelope ([`crate::Envelope`]): before the shapes, each envelope the host was given
//!   opens a JSON object if it is its own. The texts it finds are routed each on its own as
//!   above, and the object is rebuilt with every other byte as it was; a result it finds to
//!   report a failure passes through untouched: an error is never compressed. The host knows
//!   no protocol: `parrot-mcp`'s `ContentBlocks` opens MCP results (`{"content": [{"type":
//!   "text", "text": …}, …], …}`, failing when `"isError": true`), and the command registers it;
//! - anything else (a number, `true`, an empty text): no shape; the payload passes through
//!   exactly as before ([`Outcome::Unchanged`]).
//!
//! # Text kinds
//!
//! A file read, a source file, a configuration file or pretty JSON behind a line of text is
//! not a log: an agent that reads a file to edit it quotes its lines, and a log codec folding
//! it into templates leaves nothing to quote. Nor is a listing, a search's hits, a table or a
//! diff: they are the answer the agent asked for. So each text (a payload, a decoded string, an
//! MCP text block) is classified first, in `auto/kind/mod.rs`, on a bounded sample: the first 64
//! lines within its first 16 KiB and, when those do not reach its end, the last 16 lines
//! within its last 4 KiB. Each sampled line is looked at a few times, mostly by its first and
//! last bytes, so the cost does not grow with the payload (a few microseconds). The first rule
//! that holds decides (CONTRACT §2.8 gives each rule's evidence in full):
//!
//! 1. **A numbered read** (`N\t<text>`, `N→<text>`, numbered on by one) is file contents;
//! 2. **output an agent asked for**, told by its whole shape and never by the words in it
//!    (`auto/kind/output.rs`): version control output (`commit <hex>`, `diff --git` first, or
//!    lines led by a hash, a diffstat), search hits (`path:N:text`, `path-N-text`, `--`), a
//!    listing of paths (one a line) goes to the `text` candidates;
//! 3. **a log**: at least 20% of the sampled non-blank lines, and at least two, carry a log
//!    signal (a timestamp or level word near the start, a build tool's, test runner's or
//!    package manager's status line, a compiler diagnostic or stack frame);
//! 4. **a table** (every line the same number of tabs or commas: TSV, CSV) is file contents;
//! 5. **a log by its results**: a status line of a build tool or test runner in text that is
//!    mostly not a file;
//! 6. **an aligned table** (`ls -l`, or columns starting at the same byte: `ps`, `pip list`,
//!    `dpkg -l`) goes to the `text` candidates;
//! 7. **file contents**: at least 50% of the sampled lines carry a file signal (source code,
//!    configuration, Markdown, JSON text, prose);
//! 8. anything else goes to the `text` candidates.
//!
//! The thresholds were set on the files of the crates `Cargo.lock` pins, on real logs and on
//! the real captures of `corpus/text/`, with a held-out part (CONTRACT §2.8 has the counts; the
//! ignored test `auto::kind::measure` repeats them). File contents go to the `file`
//! candidates, none by default: they pass through. A numbered read holding JSON is not handed
//! to the JSON candidates: compact JSON drops the indentation that is part of every line's
//! text, so a line could not be quoted back from what the model sees.
//!
//! # Params
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `rows` | the core manifest's | the candidates for `rows`, in order of preference |
//! | `object` | the core manifest's | the candidates for `object` |
//! | `text` | the core manifest's | the candidates for output an agent asked for and text with no log signal (run at `minimal`) |
//! | `log` | the core manifest's | the candidates for logs (run at the call's level) |
//! | `file` | the core manifest's | the candidates for file contents (run at `minimal`) |
//! | `lossy_json` | `false` | run the JSON candidates at the call's level rather than `minimal` |
//! | `sample_bytes` | `65536` | payloads of this many bytes or more are routed on a sample of at most a quarter of it |
//! | `sample_rows` | `32` | the most rows of that sample |
//! | *a candidate's name* | its defaults | a table: that candidate's own params |
//!
//! The candidate lists' defaults are written in one place, the core manifest
//! (`host/src/config/core.toml`, its `"*"` entry's params): a list an entry leaves out is the core
//! entry's (`parrot-compress explain` and `plugins` print them). The other defaults are this
//! table's. A list may be empty (that shape then passes through). A candidate that names no registered
//! codec, `auto` itself, a name given twice in one list, a table named after no candidate, or
//! any other key is refused when the host is built, naming the key.
//!
//! # Levels
//!
//! The JSON candidates (`rows`, `object`) run at `minimal`, so a JSON payload is compressed
//! losslessly at every level, unless `lossy_json = true`. The log candidates run at the
//! call's level: a log codec is lossy and acts from `normal` (its original kept by the tee
//! store). The text and file candidates run at `minimal` at every level (or `none`): what an
//! agent asked to see and file contents are never compressed lossily.
//!
//! # Choosing
//!
//! Every candidate that fits the shape runs; the changed output with the fewest tokens wins
//! (on a tie, the earlier candidate), provided it holds no more tokens than the input, as the
//! stage's no-gain rule decides it (`crate::metering::gauge`). A candidate that leaves the payload
//! unchanged, fails or panics is out of the running. When no output qualifies, the payload
//! passes through. Tokens are the host's tokenizer's (o200k by default); with a tokenizer that
//! counts nothing, bytes stand for them.
//!
//! # Sampling
//!
//! A payload of `sample_bytes` or more is not compressed by every candidate in full:
//!
//! - `rows`: the candidates run on a sample, the first `sample_rows` rows re-wrapped in the
//!   same shape (the other members of a wrapping object kept), fewer when those rows hold more
//!   than a quarter of `sample_bytes` (the rows that fit, at least two), and the sample's winner alone
//!   runs on the whole payload (if it leaves it unchanged, the next best does);
//! - `object`, `text` and `file`: the candidates run in full; their outputs' tokens are the gauge's
//!   (exact up to 32 KB, above that estimated from evenly spaced windows, `crate::metering::gauge`).
//!
//! # What it says
//!
//! The stage's metadata names the winner as `compression_codec` and the decision as
//! `compression_route`, one line: the shape (for text, its kind and signal when it has one:
//! `file contents (…)` or `log lines (…)`), then each candidate that changed the payload with
//! its tokens, fewest first, then those that did not (when only one changed it, nothing is
//! ranked and nothing is counted but what the no-gain rule needs); for example
//! `rows: toon 1,946 < columnar 2,003 < json_compact 2,944 tokens`,
//! `rows (sample of 64 rows): toon 1,210 < json_compact 1,804 tokens; toon ran on the whole`,
//! `text: log lines (timestamps, 64 of 64 sampled lines): log, the only candidate to change it`,
//! `text: file contents (numbered read, lines 1-1,303): no candidate, passed through`,
//! `text: file contents (source code, 58 of 64 sampled lines): no candidate, passed through`,
//! `text: log, the only candidate to change it` (text with no signal either way),
//! `mcp: block 1: text: log lines (…): log, the only candidate to change it (line_dedup unchanged)`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

use parrot_codec_api::{CodecError, DynCodec, Level, Outcome, Payload, PayloadKind};
use parrot_json::{JsonCheck, Member, Reader, Span};
use serde_json::{Map, Value};

use crate::metering::gauge::{Gauge, Tokens};
use crate::metering::tokens::TokenCounter;
use crate::plugins::facts::{Facts, Resolved};
use crate::plugins::registry::Registry;
use crate::routing::envelope::{Envelope, Opened};

mod kind;

/// The routing codec's name in manifests (the registry reserves it).
pub(crate) const NAME: &str = crate::plugins::registry::AUTO;

const DEFAULT_SAMPLE_BYTES: usize = 64 * 1024;
const DEFAULT_SAMPLE_ROWS: usize = 32;
/// The keys of `auto`'s own params, for messages.
const KEYS: &str = "file, log, lossy_json, object, rows, sample_bytes, sample_rows, text, or a table named after a candidate";
/// How deep a JSON string holding JSON is unwrapped: once.
const MAX_UNWRAP: usize = 1;

/// A payload shape `auto` routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// An array of objects, at the top level or as the largest member of an object.
    Rows,
    /// Any other JSON object or array.
    Object,
    /// Text that is neither file contents nor a log: output an agent asked to see (a
    /// listing, search hits, a table, VCS output) or text with no signal (see [`kind`]).
    Text,
    /// A log: build, test or program output with a log's signals.
    Log,
    /// File contents: a numbered read, source code, configuration, structured text.
    File,
}

impl Shape {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Shape::Rows => "rows",
            Shape::Object => "object",
            Shape::Text | Shape::Log | Shape::File => "text",
        }
    }
}

/// One candidate codec, built with its params, its facts read once.
struct Candidate {
    name: String,
    codec: Resolved,
}

/// The routing codec (see the module docs).
pub struct Auto {
    rows: Vec<Arc<Candidate>>,
    object: Vec<Arc<Candidate>>,
    text: Vec<Arc<Candidate>>,
    log: Vec<Arc<Candidate>>,
    file: Vec<Arc<Candidate>>,
    lossy_json: bool,
    sample_bytes: usize,
    sample_rows: usize,
    /// Its token counts; when the tokenizer counts nothing (a no-op counter), bytes stand for
    /// tokens.
    gauge: Gauge,
    /// The envelopes it opens, in the order tried.
    envelopes: Vec<Arc<dyn Envelope>>,
}

impl std::fmt::Debug for Auto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auto")
            .field("candidates", &self.describe())
            .finish_non_exhaustive()
    }
}

/// A part of a routed payload that one candidate produced: what the stage verifies through
/// that candidate's inverse.
pub(crate) struct Part<'a> {
    /// The candidate that produced it.
    pub(crate) codec: &'a dyn DynCodec,
    /// Its facts: built in (for the verification policy), validating JSON in its own pass
    /// (its output for a JSON input vouches that the input is JSON the check accepts: the
    /// fused pass, CONTRACT §4), its inverse.
    pub(crate) facts: &'a Facts,
    /// The kind of the part's input.
    pub(crate) kind: PayloadKind,
    /// The part's input (the payload itself, a JSON string's decoded text, a block's text).
    pub(crate) input: Cow<'a, str>,
    /// The candidate's output for it; `None` when it is the routed payload itself.
    pub(crate) output: Option<String>,
}

/// What routing made of a payload that a candidate changed.
pub(crate) struct Routed<'a> {
    /// The new payload.
    pub(crate) payload: String,
    /// Some part is lossy.
    pub(crate) lossy: bool,
    /// The payload is text, not JSON (a text winner, or a JSON winner declaring text output).
    pub(crate) text_output: bool,
    /// The codec that produced the payload: the winner, or `auto` when the texts of an
    /// envelope had different winners.
    pub(crate) codec: String,
    /// Each candidate's part, for verification.
    pub(crate) parts: Vec<Part<'a>>,
    /// The tokens of the payload and of `payload` as the choice counted them, when it counted
    /// the whole payload (not a sample, a decoded string or a block): the stage's no-gain
    /// rule and its token counts take them rather than counting again.
    pub(crate) tokens: Option<(Tokens, Tokens)>,
    /// The level the winners ran at, when every part's winner ran at the same one.
    pub(crate) level: Option<Level>,
}

/// The routing decision for one payload.
pub(crate) struct Decision<'a> {
    /// The routed payload, or `None`: the payload passes through.
    pub(crate) routed: Option<Routed<'a>>,
    /// The decision in one line (see the module docs).
    pub(crate) route: String,
    /// When the payload passes through because the no-gain rule refused the best output a
    /// candidate made (and not because every candidate left it unchanged): why. Only for a
    /// payload routed whole, not on a sample.
    pub(crate) refused: Option<Refused>,
}

/// Why the router refused the best output it had: the no-gain rule's own reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// It held more tokens than the payload: the counts, as they were made.
    Tokens {
        /// Tokens of the refused output.
        rejected: usize,
        /// Tokens of the payload, counted alike.
        input: usize,
    },
    /// Not smaller in bytes (or the bytes decided alone, for a tokenizer that counts
    /// nothing).
    Bytes,
}

/// The winner of one unit (a whole payload, a decoded string, a block's text).
struct Won<'a> {
    candidate: &'a Candidate,
    output: String,
    lossy: bool,
    kind: PayloadKind,
    input: Cow<'a, str>,
    /// The payload went out as text.
    text_output: bool,
    /// The unit's and the output's tokens, when the choice counted them on the whole unit.
    tokens: Option<(Tokens, Tokens)>,
    /// The level the winner ran at.
    level: Level,
}

/// Where the rows of a `rows` payload lie.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RowsAt {
    /// The array, `[` to `]`.
    array: Span,
    /// The first rows' spans (at most `sample_rows`).
    first: Vec<Span>,
    /// Whether there are rows after those.
    more: bool,
}

/// A recognised JSON payload.
#[derive(Debug, PartialEq, Eq)]
enum Json {
    Rows(RowsAt),
    Object,
    /// A JSON string: its literal's span.
    String,
    /// A number, `true`, `false` or `null`.
    Scalar,
}

impl Auto {
    /// Builds `auto` from its entry's params, its candidates from `registry`.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidParams` naming the key: an unknown key, a value of the
    /// wrong type, a candidate no source provides, `auto` as a candidate, a name twice in one
    /// list, a table named after no candidate, or a candidate's own params refused (the key is
    /// then `<candidate>.<param>`).
    pub(crate) fn build(
        registry: &Registry,
        params: &Map<String, Value>,
        counter: Arc<dyn TokenCounter>,
        envelopes: &[Arc<dyn Envelope>],
    ) -> Result<Auto, CodecError> {
        let lists = candidate_lists(registry, params)?;
        let lossy_json = match params.get("lossy_json") {
            None => false,
            Some(Value::Bool(yes)) => *yes,
            Some(other) => {
                return Err(CodecError::invalid_param(
                    "lossy_json",
                    format!("expected a boolean, got {}", describe(other)),
                ));
            }
        };
        let sample_bytes = positive(params, "sample_bytes", DEFAULT_SAMPLE_BYTES)?;
        let sample_rows = positive(params, "sample_rows", DEFAULT_SAMPLE_ROWS)?;
        check_other_keys(registry, params, &lists)?;
        let mut built: Vec<Arc<Candidate>> = Vec::new();
        let mut build = |names: &[String]| candidates(registry, params, names, &mut built);
        Ok(Auto {
            rows: build(&lists[0].1)?,
            object: build(&lists[1].1)?,
            text: build(&lists[2].1)?,
            log: build(&lists[3].1)?,
            file: build(&lists[4].1)?,
            lossy_json,
            sample_bytes,
            sample_rows,
            gauge: Gauge::new(counter),
            envelopes: envelopes.to_vec(),
        })
    }

    /// The shapes and their candidates, one line each, as `explain` prints them.
    pub(crate) fn describe(&self) -> Vec<String> {
        let json_level = if self.lossy_json {
            "at the call's level"
        } else {
            "at minimal, lossless"
        };
        let list = |candidates: &[Arc<Candidate>]| {
            if candidates.is_empty() {
                "none (passes through)".to_owned()
            } else {
                candidates
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        vec![
            format!("rows:   {} ({json_level})", list(&self.rows)),
            format!("object: {} ({json_level})", list(&self.object)),
            format!(
                "text:   {} (listings, search hits, tables, VCS output, text with no log \
                 signal; at minimal, lossless)",
                list(&self.text)
            ),
            format!("log:    {} (logs, at the call's level)", list(&self.log)),
            format!(
                "file:   {} (file contents: numbered reads, source, configuration, structured \
                 text; at minimal, lossless)",
                list(&self.file)
            ),
        ]
        .into_iter()
        .chain(self.envelopes.iter().map(|envelope| {
            format!(
                "{:<8}{}",
                format!("{}:", envelope.name()),
                envelope.describe()
            )
        }))
        .chain([format!(
            "fewest tokens wins; from {} bytes on, rows are chosen on a sample of {} rows, {} bytes at most",
            thousands(self.sample_bytes),
            self.sample_rows,
            thousands(self.sample_bytes / 4)
        )])
        .collect()
    }

    /// Routes one payload at `level` (see the module docs).
    pub(crate) fn route<'a>(
        &'a self,
        text: &'a str,
        kind: PayloadKind,
        level: Level,
    ) -> Decision<'a> {
        self.route_read(text, kind, None, level)
    }

    /// [`Auto::route`], given a JSON object's members when the caller read them already (the
    /// stage's rule 4 does), so that the payload is not read again to find its shape.
    pub(crate) fn route_read<'a>(
        &'a self,
        text: &'a str,
        kind: PayloadKind,
        members: Option<Vec<Member<'_>>>,
        level: Level,
    ) -> Decision<'a> {
        let mut route = String::new();
        let mut refused = None;
        let routed = match kind {
            PayloadKind::Text => self
                .unit(
                    Cow::Borrowed(text),
                    None,
                    level,
                    0,
                    &mut route,
                    Some(&mut refused),
                )
                .map(|won| self.whole(won, text)),
            PayloadKind::Json => match self.recognise_top(text, members) {
                Err((envelope, Opened::Texts(texts))) => {
                    self.enveloped(text, envelope, &texts, level, &mut route)
                }
                Err((envelope, Opened::Failure(why))) => {
                    let _ = write!(route, "{}: {why}, passed through", envelope.name());
                    None
                }
                Ok(json) => self
                    .unit(
                        Cow::Borrowed(text),
                        Some(json),
                        level,
                        0,
                        &mut route,
                        Some(&mut refused),
                    )
                    .map(|won| self.whole(won, text)),
            },
        };
        Decision {
            refused: refused.filter(|_| routed.is_none()),
            routed,
            route,
        }
    }

    /// A unit's winner as the routed payload.
    fn whole<'a>(&self, won: Won<'a>, text: &str) -> Routed<'a> {
        let same = matches!(won.input, Cow::Borrowed(input) if std::ptr::eq(input, text));
        let tokens = won.tokens.filter(|_| same);
        let (payload, output) = if same {
            (won.output, None)
        } else {
            (won.output.clone(), Some(won.output))
        };
        Routed {
            level: Some(won.level),
            payload,
            lossy: won.lossy,
            text_output: won.text_output,
            codec: won.candidate.name.clone(),
            tokens,
            parts: vec![Part {
                codec: &*won.candidate.codec.codec,
                facts: &won.candidate.codec.facts,
                kind: won.kind,
                input: won.input,
                output,
            }],
        }
    }

    /// Routes one unit: a payload, a JSON string's decoded text, or a block's text.
    fn unit<'a>(
        &'a self,
        text: Cow<'a, str>,
        json: Option<Json>,
        level: Level,
        unwrapped: usize,
        route: &mut String,
        refused: Option<&mut Option<Refused>>,
    ) -> Option<Won<'a>> {
        let kind = match json {
            None => PayloadKind::Text,
            Some(_) => PayloadKind::Json,
        };
        match json {
            None => {
                let (shape, label) = match kind::classify(&text) {
                    kind::Kind::File(signal) => (Shape::File, format!("file contents ({signal})")),
                    kind::Kind::Log(signal) => (Shape::Log, format!("log lines ({signal})")),
                    kind::Kind::Output(Some(signal)) => (Shape::Text, format!("output ({signal})")),
                    kind::Kind::Output(None) => (Shape::Text, String::new()),
                };
                let at = route.len();
                let won = self.choose(shape, text, kind, level, None, route, refused);
                if !label.is_empty() {
                    // `text: <kind> (<signal>): <decision>`.
                    route.insert_str(at + "text".len(), &format!(": {label}"));
                }
                won
            }
            Some(Json::Rows(rows)) => {
                let rows = Some(rows);
                self.choose(Shape::Rows, text, kind, level, rows, route, refused)
            }
            Some(Json::Object) => {
                self.choose(Shape::Object, text, kind, level, None, route, refused)
            }
            Some(Json::String) => {
                let decoded = parrot_json::decode_string(text.trim()).ok()?.into_owned();
                let inner = match parrot_json::check(&decoded) {
                    JsonCheck::Json
                        if unwrapped < MAX_UNWRAP && !decoded.trim_start().starts_with('"') =>
                    {
                        PayloadKind::Json
                    }
                    _ => PayloadKind::Text,
                };
                let json =
                    (inner == PayloadKind::Json).then(|| recognise(&decoded, self.sample_rows));
                let mut won =
                    self.unit(Cow::Owned(decoded), json, level, unwrapped + 1, route, None)?;
                // The decoded text goes out as itself, not as a JSON string.
                won.text_output = won.text_output || inner == PayloadKind::Text;
                Some(won)
            }
            Some(Json::Scalar) => {
                route.push_str("no shape (a JSON scalar), passed through");
                None
            }
        }
    }

    /// Runs the candidates of `shape` on `text` and keeps the fewest tokens.
    // Eight: the unit (shape, text, kind, rows), the level, and the two things the decision
    // writes back to the caller (the route, why an output was refused); a struct for them would
    // be built at each of the three calls only to be taken apart here.
    #[allow(clippy::too_many_arguments)]
    fn choose<'a>(
        &'a self,
        shape: Shape,
        text: Cow<'a, str>,
        kind: PayloadKind,
        level: Level,
        rows: Option<RowsAt>,
        route: &mut String,
        refused: Option<&mut Option<Refused>>,
    ) -> Option<Won<'a>> {
        let (candidates, level) = self.candidates_of(shape, level);
        if text.trim().is_empty() {
            route.push_str("no shape (empty text), passed through");
            return None;
        }
        let large = text.len() >= self.sample_bytes;
        let rows = rows.map(|rows| self.bounded(rows));
        let sample = match (&rows, large) {
            (Some(rows), true) if rows.more => Some(sample_of(&text, rows)),
            _ => None,
        };
        let on = sample.as_deref().unwrap_or(&text);
        let mut ran: Vec<Ran<'_>> = Vec::with_capacity(candidates.len());
        for candidate in candidates.iter() {
            ran.push(Ran {
                candidate,
                result: run(candidate, on, kind, level),
                tokens: None,
                counts: None,
                fits: false,
            });
        }
        let input = self.weigh_all(on, &mut ran);
        // Fewest tokens first; a stable sort keeps the earlier candidate first on a tie.
        let mut order: Vec<usize> = (0..ran.len()).filter(|&i| ran[i].result.is_ok()).collect();
        order.sort_by_key(|&i| ran[i].tokens.map_or(0, |t| t.count));
        let sampled = sample.as_ref().map(|_| rows_sampled(&rows));
        write_route(route, shape, sampled, &ran, &order, input);
        // The fewest-token output, counted, that the rule refused: the caller says so.
        if let (Some(refused), None, Some(&best)) = (refused, &sample, order.first())
            && !order.iter().any(|&i| ran[i].fits)
        {
            let smaller = matches!(&ran[best].result, Ok((output, _)) if output.len() < on.len());
            *refused = Some(match ran[best].counts {
                Some((before, after)) if smaller => Refused::Tokens {
                    rejected: after.count,
                    input: before.count,
                },
                _ => Refused::Bytes,
            });
        }
        order.retain(|&i| ran[i].fits);
        if sample.is_some() {
            // The sample's ranking decides; the winner runs on the whole payload.
            for &i in &order {
                let candidate = ran[i].candidate;
                if let Ok((output, lossy)) = run(candidate, &text, kind, level) {
                    let _ = write!(route, "; {} ran on the whole", candidate.name);
                    // Counted on the sample: nothing to carry for the whole.
                    return Some(self.won(candidate, (output, lossy, None), (kind, level), text));
                }
                let _ = write!(route, "; {} left the whole unchanged", candidate.name);
            }
            return None;
        }
        let best = *order.first()?;
        let r = ran.swap_remove(best);
        let (output, lossy) = r.result.ok()?;
        Some(self.won(r.candidate, (output, lossy, r.counts), (kind, level), text))
    }

    /// The candidates of `shape` and the level they run at for a call at `level`.
    fn candidates_of(&self, shape: Shape, level: Level) -> (&[Arc<Candidate>], Level) {
        match shape {
            Shape::Rows => (&self.rows, self.json_level(level)),
            Shape::Object => (&self.object, self.json_level(level)),
            Shape::Text => (&self.text, self.file_level(level)),
            Shape::File => (&self.file, self.file_level(level)),
            Shape::Log => (&self.log, level),
        }
    }

    /// `rows` with its sample cut to at most a quarter of `sample_bytes` (but at least two
    /// rows): a sample of 32 rows of 3 KB each would cost the candidates and the tokenizer
    /// more than the winner's run on the whole.
    fn bounded(&self, mut rows: RowsAt) -> RowsAt {
        let budget = self.sample_bytes / 4;
        let mut bytes = 0;
        let keep = rows
            .first
            .iter()
            .take_while(|span| {
                bytes += span.len() + 1;
                bytes <= budget
            })
            .count()
            .max(2);
        if keep < rows.first.len() {
            rows.first.truncate(keep);
            rows.more = true;
        }
        rows
    }

    /// Weighs each changed output against the input `on`, as the no-gain rule does; the
    /// input's tokens when there was a ranking to count them for.
    ///
    /// The input is the yardstick: an output must hold no more tokens than what it replaces
    /// (the stage's no-gain rule, decided the same way). With one output there is nothing to
    /// rank: only the rule decides, and it needs no count when the output has at most half
    /// the input's bytes (so a log's route never starts the tokenizer).
    fn weigh_all(&self, on: &str, ran: &mut [Ran<'_>]) -> Option<Tokens> {
        let changed = ran.iter().filter(|r| r.result.is_ok()).count();
        if changed == 1 {
            for r in ran.iter_mut() {
                if let Ok((output, _)) = &r.result {
                    let weighed = self.gauge.weigh(on, output, None);
                    r.fits = weighed.fits;
                    r.counts = weighed.counts;
                }
            }
            return None;
        }
        if changed == 0 {
            return None;
        }
        let before = self.count(on);
        for r in ran.iter_mut() {
            if let Ok((output, _)) = &r.result {
                let after = self.count(output);
                r.tokens = Some(after);
                r.counts = Some((before, after));
                r.fits = self.gauge.no_more_tokens_counted(on, before, output, after);
            }
        }
        Some(before)
    }

    /// The winner `candidate` with its output, lossy flag and counted tokens.
    fn won<'a>(
        &self,
        candidate: &'a Candidate,
        (output, lossy, tokens): (String, bool, Option<(Tokens, Tokens)>),
        (kind, level): (PayloadKind, Level),
        input: Cow<'a, str>,
    ) -> Won<'a> {
        Won {
            level,
            tokens: tokens.filter(|_| !self.gauge.blind()),
            text_output: kind == PayloadKind::Text || candidate.codec.facts.text_output,
            candidate,
            output,
            lossy,
            kind,
            input,
        }
    }

    /// The level the file and text candidates run at for a call at `level`: `minimal`, so
    /// file contents and the output an agent asked for are never compressed lossily.
    pub(crate) fn file_level(&self, level: Level) -> Level {
        if level == Level::None {
            level
        } else {
            Level::Minimal
        }
    }

    /// The level the JSON candidates run at for a call at `level`.
    pub(crate) fn json_level(&self, level: Level) -> Level {
        if self.lossy_json || level == Level::None {
            level
        } else {
            Level::Minimal
        }
    }

    /// The tokens of `text` (estimated by the gauge above its exact size); its bytes when the
    /// tokenizer counts nothing (a no-op counter gives no evidence, as in the stage).
    fn count(&self, text: &str) -> Tokens {
        if self.gauge.blind() {
            return Tokens {
                count: text.len(),
                exact: false,
            };
        }
        self.gauge.tokens(text)
    }

    /// The shape of a whole JSON payload, or the envelope that opened it: a top-level object
    /// (its members read once, or given by the caller) goes to each envelope first.
    fn recognise_top<'e>(
        &'e self,
        text: &str,
        members: Option<Vec<Member<'_>>>,
    ) -> Result<Json, (&'e dyn Envelope, Opened)> {
        let start = text.len() - text.trim_start().len();
        let members = match members {
            Some(members) => members,
            None if text.as_bytes().get(start) == Some(&b'{') => {
                match parrot_json::members(text, start) {
                    Ok(members) => members,
                    Err(_) => return Ok(Json::Object),
                }
            }
            None => return Ok(recognise(text, self.sample_rows)),
        };
        for envelope in &self.envelopes {
            if let Some(opened) = envelope.open(text, &members) {
                return Err((&**envelope, opened));
            }
        }
        Ok(object_of(text, &members, self.sample_rows))
    }

    /// Routes each text an envelope found and rebuilds the payload around them.
    fn enveloped<'a>(
        &'a self,
        text: &'a str,
        envelope: &dyn Envelope,
        blocks: &[Span],
        level: Level,
        route: &mut String,
    ) -> Option<Routed<'a>> {
        let _ = write!(route, "{}:", envelope.name());
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut parts = Vec::new();
        let mut lossy = false;
        let mut levels: Vec<Level> = Vec::new();
        for (n, span) in blocks.iter().enumerate() {
            let _ = write!(route, "{} block {}: ", if n == 0 { "" } else { ";" }, n + 1);
            let Ok(decoded) = parrot_json::decode_string(&text[span.clone()]) else {
                route.push_str("not a string, kept");
                continue;
            };
            let json = match parrot_json::check(&decoded) {
                JsonCheck::Json => Some(recognise(&decoded, self.sample_rows)),
                _ => None,
            };
            let decoded = Cow::Owned(decoded.into_owned());
            let Some(won) = self.unit(decoded, json, level, 0, route, None) else {
                continue;
            };
            out.push_str(&text[copied..span.start]);
            out.push_str(&parrot_json::encode_string(&won.output));
            copied = span.end;
            lossy |= won.lossy;
            levels.push(won.level);
            parts.push(Part {
                codec: &*won.candidate.codec.codec,
                facts: &won.candidate.codec.facts,
                kind: won.kind,
                input: won.input,
                output: Some(won.output),
            });
        }
        let first = parts.first()?;
        let codec = if parts.iter().all(|p| p.facts.name == first.facts.name) {
            first.facts.name.clone()
        } else {
            NAME.to_owned()
        };
        out.push_str(&text[copied..]);
        Some(Routed {
            level: levels.iter().all(|&l| l == levels[0]).then_some(levels[0]),
            payload: out,
            lossy,
            text_output: false,
            codec,
            parts,
            tokens: None,
        })
    }
}

/// One candidate's run: its output and lossy flag, or why it is out of the running.
struct Ran<'a> {
    candidate: &'a Candidate,
    result: Result<(String, bool), &'static str>,
    tokens: Option<Tokens>,
    /// The input's and the output's tokens as the no-gain decision counted them.
    counts: Option<(Tokens, Tokens)>,
    /// Its output holds no more tokens than the input.
    fits: bool,
}

/// Runs one candidate, a panic or an error counting as no output.
fn run(
    candidate: &Candidate,
    text: &str,
    kind: PayloadKind,
    level: Level,
) -> Result<(String, bool), &'static str> {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        candidate
            .codec
            .codec
            .compress(Payload::new(text, kind), level)
    }));
    match result {
        Ok(Ok(Outcome::Changed { payload, lossy })) => Ok((payload, lossy)),
        Ok(Ok(Outcome::Unchanged)) => Err("unchanged"),
        Ok(Err(err)) => {
            tracing::debug!(candidate = candidate.name, "auto: candidate failed: {err}");
            Err("failed")
        }
        Err(_) => {
            tracing::warn!(candidate = candidate.name, "auto: candidate panicked");
            Err("panicked")
        }
    }
}

/// Appends the decision for one unit to `route`: the candidates that changed it, fewest
/// tokens first, against the input's tokens; then those out of the running.
fn write_route(
    route: &mut String,
    shape: Shape,
    sampled: Option<usize>,
    ran: &[Ran<'_>],
    order: &[usize],
    input: Option<Tokens>,
) {
    route.push_str(shape.as_str());
    if let Some(rows) = sampled {
        let _ = write!(route, " (sample of {rows} rows)");
    }
    route.push_str(": ");
    let tokens = |tokens: Tokens| {
        let about = if tokens.exact { "" } else { "~" };
        format!("{about}{}", thousands(tokens.count))
    };
    match (order, input) {
        (_, _) if ran.is_empty() => route.push_str("no candidate, passed through"),
        (&[only], None) => {
            let _ = write!(
                route,
                "{}, the only candidate to change it",
                ran[only].candidate.name
            );
            if !ran[only].fits {
                route.push_str(", not fewer tokens than the input: passed through");
            }
        }
        ([], _) | (_, None) => route.push_str("no candidate changed it"),
        (_, Some(input)) => {
            let ranked: Vec<String> = order
                .iter()
                .filter_map(|&i| {
                    let count = ran[i].tokens?;
                    Some(format!("{} {}", ran[i].candidate.name, tokens(count)))
                })
                .collect();
            let _ = write!(
                route,
                "{} tokens (input {})",
                ranked.join(" < "),
                tokens(input)
            );
            if !order.iter().any(|&i| ran[i].fits) {
                route.push_str(", none fewer: passed through");
            }
        }
    }
    let out: Vec<String> = ran
        .iter()
        .filter_map(|r| {
            r.result
                .as_ref()
                .err()
                .map(|why| format!("{} {why}", r.candidate.name))
        })
        .collect();
    if !out.is_empty() && !order.is_empty() {
        let _ = write!(route, "; {}", out.join(", "));
    }
}

fn rows_sampled(rows: &Option<RowsAt>) -> usize {
    rows.as_ref().map_or(0, |rows| rows.first.len())
}

/// `n` with a comma every three digits.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The first rows of `text`, re-wrapped in the same shape (valid JSON).
fn sample_of(text: &str, rows: &RowsAt) -> String {
    let mut out = String::with_capacity(
        rows.first.iter().map(|s| s.len() + 1).sum::<usize>() + text.len() - rows.array.len(),
    );
    out.push_str(&text[..rows.array.start]);
    out.push('[');
    for (i, span) in rows.first.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&text[span.clone()]);
    }
    out.push(']');
    out.push_str(&text[rows.array.end..]);
    out
}

/// Recognises a JSON payload's shape (the text is valid JSON: rule 4 checked it).
fn recognise(text: &str, sample_rows: usize) -> Json {
    let start = text.len() - text.trim_start().len();
    match text.as_bytes().get(start) {
        Some(b'[') => match rows_at(text, start..text.trim_end().len(), sample_rows) {
            Some(rows) => Json::Rows(rows),
            None => Json::Object,
        },
        Some(b'{') => object(text, start, sample_rows),
        Some(b'"') => Json::String,
        _ => Json::Scalar,
    }
}

/// An object: rows under its largest member, or an object.
fn object(text: &str, start: usize, sample_rows: usize) -> Json {
    match parrot_json::members(text, start) {
        Ok(members) => object_of(text, &members, sample_rows),
        Err(_) => Json::Object,
    }
}

/// [`object`], given its members.
fn object_of(text: &str, members: &[Member<'_>], sample_rows: usize) -> Json {
    let largest = members.iter().max_by_key(|m| m.value.len());
    match largest {
        Some(m) if text.as_bytes()[m.value.start] == b'[' => {
            match rows_at(text, m.value.clone(), sample_rows) {
                Some(rows) => Json::Rows(rows),
                None => Json::Object,
            }
        }
        _ => Json::Object,
    }
}

/// The array `text[array]` as rows: its first `sample_rows` elements must be objects (an
/// empty array is not rows). Only those elements are read.
fn rows_at(text: &str, array: Span, sample_rows: usize) -> Option<RowsAt> {
    let mut reader = Reader::at(text, array.start);
    reader.expect(b'[').ok()?;
    if reader.empty_container(b']') {
        return None;
    }
    let mut first = Vec::new();
    loop {
        if reader.peek() != Some(b'{') {
            return None;
        }
        let at = reader.pos();
        reader.skip_value(1).ok()?;
        first.push(at..reader.pos());
        let more = reader.next_or_close(b']').ok()?;
        if !more || first.len() == sample_rows {
            return Some(RowsAt { array, first, more });
        }
    }
}

/// The candidate lists of `params` (`rows`, `object`, `text`, `log`, `file`, in that order), each
/// its default when not given; every name a registered codec other than `auto`, none twice.
///
/// A list's default is the core manifest's (`host/src/config/core.toml`, read through
/// [`crate::config::manifest::core_params`]): the routing defaults are written there and nowhere else,
/// so an `auto` entry that names no list routes as the core entry does.
fn candidate_lists(
    registry: &Registry,
    params: &Map<String, Value>,
) -> Result<[(&'static str, Vec<String>); 5], CodecError> {
    let list = |key: &'static str| -> Result<_, CodecError> {
        let names = match params
            .get(key)
            .or_else(|| crate::config::manifest::core_params().get(key))
        {
            None => Vec::new(),
            Some(value) => names(key, value)?,
        };
        for (i, name) in names.iter().enumerate() {
            if name == NAME {
                return Err(CodecError::invalid_param(
                    key,
                    "\"auto\" cannot be its own candidate",
                ));
            }
            if registry.get(name).is_none() {
                return Err(CodecError::invalid_param(
                    key,
                    format!("unknown codec \"{name}\" (known: {})", registry.names()),
                ));
            }
            if names[..i].contains(name) {
                return Err(CodecError::invalid_param(
                    key,
                    format!("codec \"{name}\" named twice"),
                ));
            }
        }
        Ok((key, names))
    };
    Ok([
        list("rows")?,
        list("object")?,
        list("text")?,
        list("log")?,
        list("file")?,
    ])
}

/// Refuses every key of `params` that is neither one of `auto`'s own nor a table of a
/// candidate's params (a table named after a codec that is no candidate names the shapes).
fn check_other_keys(
    registry: &Registry,
    params: &Map<String, Value>,
    lists: &[(&'static str, Vec<String>)],
) -> Result<(), CodecError> {
    let is_candidate = |name: &str| {
        lists
            .iter()
            .any(|(_, names)| names.iter().any(|n| n == name))
    };
    for (key, value) in params {
        if matches!(
            key.as_str(),
            "rows"
                | "object"
                | "text"
                | "log"
                | "file"
                | "lossy_json"
                | "sample_bytes"
                | "sample_rows"
        ) {
            continue;
        }
        let message = match value {
            Value::Object(_) if is_candidate(key) => continue,
            Value::Object(_) if registry.get(key).is_some() => {
                format!(
                    "codec \"{key}\" is a candidate of no shape (rows, object, text, log, file)"
                )
            }
            _ => format!("unknown key ({KEYS})"),
        };
        return Err(CodecError::invalid_param(key.clone(), message));
    }
    Ok(())
}

/// The candidates `names`, each built once with its own params (a table of `params` named
/// after it) and its facts; `built` keeps those built for the other lists.
fn candidates(
    registry: &Registry,
    params: &Map<String, Value>,
    names: &[String],
    built: &mut Vec<Arc<Candidate>>,
) -> Result<Vec<Arc<Candidate>>, CodecError> {
    names
        .iter()
        .map(|name| {
            if let Some(done) = built.iter().find(|c| &c.name == name) {
                return Ok(Arc::clone(done));
            }
            let own = match params.get(name) {
                Some(Value::Object(own)) => own.clone(),
                _ => Map::new(),
            };
            let codec = registry.instantiate(name, own).map_err(|err| {
                let key = match err.key() {
                    Some(param) => format!("{name}.{param}"),
                    None => name.clone(),
                };
                CodecError::invalid_param(key, err.message().to_owned())
            })?;
            let candidate = Arc::new(Candidate {
                name: name.clone(),
                codec: Resolved::new(registry, name, codec),
            });
            built.push(Arc::clone(&candidate));
            Ok(candidate)
        })
        .collect()
}

/// A list of codec names.
fn names(key: &'static str, value: &Value) -> Result<Vec<String>, CodecError> {
    let Value::Array(items) = value else {
        return Err(CodecError::invalid_param(
            key,
            format!("expected an array of codec names, got {}", describe(value)),
        ));
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(name) => Ok(name.clone()),
            other => Err(CodecError::invalid_param(
                key,
                format!("expected codec names, got {}", describe(other)),
            )),
        })
        .collect()
}

fn positive(
    params: &Map<String, Value>,
    key: &'static str,
    default: usize,
) -> Result<usize, CodecError> {
    match params.get(key) {
        None => Ok(default),
        Some(value) => value
            .as_u64()
            .filter(|&n| n > 0)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                CodecError::invalid_param(
                    key,
                    format!("expected a positive integer, got {}", describe(value)),
                )
            }),
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => format!("a boolean ({value})"),
        Value::Number(_) => format!("a number ({value})"),
        Value::String(_) => format!("a string ({value})"),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "a table".to_owned(),
    }
}

/// `auto` as a codec, for what calls a codec directly ([`crate::Host::compress`]): the routed
/// payload, without the stage's verification. It is never built from params alone.
impl Auto {
    /// The routed payload alone, without the stage's rules: what [`crate::Host::compress`]
    /// returns for an entry whose codec is `auto`. The router is not a codec (it has no
    /// params of a codec's, no inverse, and the stage calls it as a step of its own), so it
    /// offers this instead of [`Codec`].
    pub(crate) fn compress(&self, payload: Payload<'_>, level: Level) -> Outcome {
        match self.route(payload.text(), payload.kind(), level).routed {
            Some(routed) => Outcome::Changed {
                payload: routed.payload,
                lossy: routed.lossy,
            },
            None => Outcome::Unchanged,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parrot_codec_api::{Codec, Params};

    /// What `recognise` says, in words: the shape, with the rows' count and array for `rows`.
    fn shape(text: &str) -> String {
        match recognise(text, 3) {
            Json::Rows(rows) => format!(
                "rows {}{} in {}",
                rows.first.len(),
                if rows.more { "+" } else { "" },
                &text[rows.array]
            ),
            Json::Object => "object".to_owned(),
            Json::String => "string".to_owned(),
            Json::Scalar => "scalar".to_owned(),
        }
    }

    #[test]
    fn shapes_are_recognised() {
        let cases: &[(&str, &str)] = &[
            (r#"[{"a":1},{"a":2}]"#, r#"rows 2 in [{"a":1},{"a":2}]"#),
            (" [ {\"a\":1} ] \n", r#"rows 1 in [ {"a":1} ]"#),
            (
                r#"[{"a":1},{"a":2},{"a":3},{"a":4}]"#,
                r#"rows 3+ in [{"a":1},{"a":2},{"a":3},{"a":4}]"#,
            ),
            (
                r#"{"driver":"pg","rows":[{"a":1},{"a":2}]}"#,
                r#"rows 2 in [{"a":1},{"a":2}]"#,
            ),
            (
                r#"{"total_count":2,"items":[{"id":1},{"id":2}]}"#,
                r#"rows 2 in [{"id":1},{"id":2}]"#,
            ),
            (
                r#"{"data":[{"x":"y"}],"next":null}"#,
                r#"rows 1 in [{"x":"y"}]"#,
            ),
            // The largest member is not the array of objects.
            (
                r#"{"rows":[{"a":1}],"readme":"a long text, longer than the rows"}"#,
                "object",
            ),
            // Rows are objects from the first element on.
            (r#"[1,{"a":1}]"#, "object"),
            (r#"[{"a":1},2]"#, "object"),
            (
                r#"[{"a":1},{"a":2},{"a":3},4]"#,
                r#"rows 3+ in [{"a":1},{"a":2},{"a":3},4]"#,
            ),
            ("[]", "object"),
            ("[1,2,3]", "object"),
            (r#"{"a":{"b":[1]}}"#, "object"),
            ("{}", "object"),
            (r#""a string""#, "string"),
            ("12.5", "scalar"),
            ("true", "scalar"),
            ("null", "scalar"),
            // Content blocks are rows to a host without envelopes (see the envelope tests).
            (
                r#"{"content":[{"type":"image","data":"x"}]}"#,
                r#"rows 1 in [{"type":"image","data":"x"}]"#,
            ),
            (
                r#"{"content":[{"kind":"text"}]}"#,
                r#"rows 1 in [{"kind":"text"}]"#,
            ),
            (r#"{"content":"text"}"#, "object"),
        ];
        for (input, expected) in cases {
            assert_eq!(shape(input), *expected, "{input}");
        }
    }

    #[test]
    fn a_sample_is_the_first_rows_in_the_same_shape() {
        let text = r#"{"driver":"pg","rows":[{"a":1}, {"a":2},{"a":3},{"a":4}],"n":4}"#;
        let Json::Rows(rows) = recognise(text, 2) else {
            panic!("rows");
        };
        assert_eq!(
            sample_of(text, &rows),
            r#"{"driver":"pg","rows":[{"a":1},{"a":2}],"n":4}"#
        );
        let text = r#" [{"a":1},{"a":2},{"a":3}] "#;
        let Json::Rows(rows) = recognise(text, 1) else {
            panic!("rows");
        };
        assert_eq!(sample_of(text, &rows), r#" [{"a":1}] "#);
    }

    fn counter() -> Arc<dyn TokenCounter> {
        Arc::new(crate::Tokenizer::O200k)
    }

    fn auto(params: &str) -> Result<Auto, CodecError> {
        let Value::Object(params) = serde_json::from_str(params).unwrap() else {
            panic!("params must be an object");
        };
        Auto::build(&Registry::with_builtins(), &params, counter(), &[])
    }

    fn refused(params: &str) -> String {
        let err = auto(params).expect_err("refused");
        format!("{}: {}", err.key().unwrap_or("-"), err.message())
    }

    #[test]
    fn an_entry_naming_no_list_takes_every_list_from_the_core_manifest() {
        let bare = auto("{}").unwrap();
        let core = crate::config::manifest::core_params();
        let lists = [
            ("rows", &bare.rows),
            ("object", &bare.object),
            ("text", &bare.text),
            ("log", &bare.log),
            ("file", &bare.file),
        ];
        for (key, candidates) in lists {
            let names: Vec<&str> = candidates.iter().map(|c| c.name.as_str()).collect();
            let written: Vec<&str> = core[key]
                .as_array()
                .unwrap_or_else(|| panic!("core.toml: \"{key}\" is no list"))
                .iter()
                .map(|name| name.as_str().expect("a codec name"))
                .collect();
            assert_eq!(names, written, "{key}");
        }
        let core = Auto::build(&Registry::with_builtins(), core, counter(), &[]).unwrap();
        assert_eq!(bare.describe(), core.describe());
    }

    #[test]
    fn bad_params_are_refused_naming_the_key() {
        let known = Registry::with_builtins().names();
        let cases: Vec<(&str, String)> = vec![
            (
                r#"{"rows": ["tooon"], "text": []}"#,
                format!("rows: unknown codec \"tooon\" (known: {known})"),
            ),
            (
                r#"{"object": ["auto"], "text": []}"#,
                "object: \"auto\" cannot be its own candidate".to_owned(),
            ),
            (
                r#"{"rows": "toon", "text": []}"#,
                "rows: expected an array of codec names, got a string (\"toon\")".to_owned(),
            ),
            (
                r#"{"rows": [1], "text": []}"#,
                "rows: expected codec names, got a number (1)".to_owned(),
            ),
            (
                r#"{"rows": ["toon", "toon"], "text": []}"#,
                "rows: codec \"toon\" named twice".to_owned(),
            ),
            (
                r#"{"text": [], "lossy_json": "yes"}"#,
                "lossy_json: expected a boolean, got a string (\"yes\")".to_owned(),
            ),
            (
                r#"{"text": [], "sample_rows": 0}"#,
                "sample_rows: expected a positive integer, got a number (0)".to_owned(),
            ),
            (
                r#"{"text": [], "row": ["toon"]}"#,
                format!("row: unknown key ({KEYS})"),
            ),
            (
                r#"{"rows": ["toon"], "text": [], "columnar": {"min_rows": 2}}"#,
                "columnar: codec \"columnar\" is a candidate of no shape (rows, object, text, log, file)"
                    .to_owned(),
            ),
            (
                r#"{"text": [], "columnar": {"min_rows": 0}}"#,
                "columnar.min_rows: expected a positive integer, got a number (0)".to_owned(),
            ),
            (
                r#"{"text": [], "columnar": {"min_row": 2}}"#,
                "columnar.min_row: unknown key; did you mean \"min_rows\"? (known: min_rows, heterogeneity_ratio, max_field_chars, sample_rows)".to_owned(),
            ),
        ];
        for (params, expected) in cases {
            assert_eq!(refused(params), expected, "{params}");
        }
    }

    #[test]
    fn a_payload_without_a_shape_passes_through() {
        let auto = auto(r#"{"text": []}"#).unwrap();
        for (text, kind) in [
            ("12", PayloadKind::Json),
            ("true", PayloadKind::Json),
            (r#""OK""#, PayloadKind::Json),
            ("plain text", PayloadKind::Text),
            ("   ", PayloadKind::Text),
        ] {
            let decision = auto.route(text, kind, Level::Normal);
            assert!(decision.routed.is_none(), "{text}: {}", decision.route);
            assert_eq!(
                auto.compress(Payload::new(text, kind), Level::Normal),
                Outcome::Unchanged
            );
        }
        let decision = auto.route("12", PayloadKind::Json, Level::Normal);
        assert_eq!(decision.route, "no shape (a JSON scalar), passed through");
    }

    #[test]
    fn the_fewest_tokens_win_and_the_route_says_so() {
        let auto = auto(r#"{"rows": ["json_compact", "toon", "columnar"], "text": [], "columnar": {"min_rows": 2}}"#).unwrap();
        let rows: Vec<String> = (0..9)
            .map(|i| format!(r#"{{"id": {i}, "name": "label-{i}", "color": "ff0000"}}"#))
            .collect();
        let input = format!("[{}]", rows.join(", "));
        let decision = auto.route(&input, PayloadKind::Json, Level::Normal);
        let routed = decision.routed.expect("routed");
        let gauge = Gauge::new(counter());
        let mut counts: Vec<(usize, &str)> = ["json_compact", "toon", "columnar"]
            .into_iter()
            .map(|name| {
                let c = Registry::with_builtins()
                    .instantiate(
                        name,
                        serde_json::from_str(if name == "columnar" {
                            r#"{"min_rows": 2}"#
                        } else {
                            "{}"
                        })
                        .unwrap(),
                    )
                    .unwrap();
                let out = c.compress(Payload::json(&input), Level::Minimal).unwrap();
                (gauge.tokens(out.payload().unwrap()).count, name)
            })
            .collect();
        counts.sort_by_key(|&(n, _)| n);
        assert_eq!(routed.codec, counts[0].1);
        let expected: Vec<String> = counts
            .iter()
            .map(|(n, name)| format!("{name} {}", thousands(*n)))
            .collect();
        let input_tokens = thousands(gauge.tokens(&input).count);
        assert_eq!(
            decision.route,
            format!(
                "rows: {} tokens (input {input_tokens})",
                expected.join(" < ")
            )
        );
        assert!(!routed.lossy);
        assert_eq!(routed.parts.len(), 1);
        assert!(routed.parts[0].output.is_none());
    }

    /// A candidate that turns any payload into `[0]`.
    struct Zero<const N: u8>;

    impl<const N: u8> Codec for Zero<N> {
        const NAME: &'static str = if N == 0 { "zero_a" } else { "zero_b" };

        fn new(_: &mut Params) -> Result<Self, CodecError> {
            Ok(Zero)
        }

        fn compress(&self, _: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
            Ok(Outcome::lossless("[0]"))
        }
    }

    fn candidate(codec: Arc<dyn DynCodec>) -> Arc<Candidate> {
        let name = codec.name().to_owned();
        let mut codec = Resolved::new(&Registry::with_builtins(), &name, codec);
        codec.facts.builtin = true;
        Arc::new(Candidate { name, codec })
    }

    /// A candidate whose output has more tokens than `[{"a": 1}]` (`auto` weighs tokens, not bytes).
    struct Wordy;

    impl Codec for Wordy {
        const NAME: &'static str = "wordy";

        fn new(_: &mut Params) -> Result<Self, CodecError> {
            Ok(Wordy)
        }

        fn compress(&self, _: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
            Ok(Outcome::lossless("⁂⁂⁂⁂⁂"))
        }
    }

    fn only(rows: Vec<Arc<Candidate>>) -> Auto {
        Auto {
            rows,
            object: Vec::new(),
            text: Vec::new(),
            log: Vec::new(),
            file: Vec::new(),
            lossy_json: false,
            sample_bytes: DEFAULT_SAMPLE_BYTES,
            sample_rows: DEFAULT_SAMPLE_ROWS,
            gauge: Gauge::new(counter()),
            envelopes: Vec::new(),
        }
    }

    #[test]
    fn an_output_with_no_fewer_tokens_than_the_input_is_not_kept() {
        let auto = only(vec![candidate(Arc::new(Wordy))]);
        let input = r#"[{"a": 1}]"#;
        let gauge = Gauge::new(counter());
        let (wordy, before) = (gauge.tokens("⁂⁂⁂⁂⁂").count, gauge.tokens(input).count);
        assert!(wordy >= before, "the made case holds: {wordy} >= {before}");
        let decision = auto.route(input, PayloadKind::Json, Level::Minimal);
        assert!(decision.routed.is_none());
        assert_eq!(
            decision.route,
            "rows: wordy, the only candidate to change it, not fewer tokens than the input: \
             passed through"
        );
    }

    #[test]
    fn a_tie_goes_to_the_earlier_candidate() {
        let (a, b) = (
            candidate(Arc::new(Zero::<0>)),
            candidate(Arc::new(Zero::<1>)),
        );
        for (rows, winner) in [
            (vec![a.clone(), b.clone()], "zero_a"),
            (vec![b, a], "zero_b"),
        ] {
            let auto = only(rows);
            let decision = auto.route(r#"[{"a": 1}]"#, PayloadKind::Json, Level::Minimal);
            assert_eq!(decision.routed.expect("routed").codec, winner);
            assert!(
                decision.route.starts_with(&format!("rows: {winner} 3 < ")),
                "{}",
                decision.route
            );
        }
    }

    #[test]
    fn a_json_string_is_routed_as_its_text() {
        let auto = auto(r#"{"text": [], "object": ["json_compact"]}"#).unwrap();
        let inner = r#"{"a": 1, "b": null, "c": [1, 1, 1, 1, 1, 1], "d": null}"#;
        let input = parrot_json::encode_string(inner);
        let decision = auto.route(&input, PayloadKind::Json, Level::Normal);
        let routed = decision.routed.expect("routed");
        assert_eq!(routed.codec, "json_compact");
        assert_eq!(routed.payload, r#"{"a":1,"c":[{"_repeat":6,"_value":1}]}"#);
        assert_eq!(routed.parts[0].input, inner);
        assert_eq!(routed.parts[0].kind, PayloadKind::Json);
        assert_eq!(
            routed.parts[0].output.as_deref(),
            Some(routed.payload.as_str())
        );
    }

    /// A test envelope: `{"texts": ["…", …]}`, each string of `texts` a text to route; a
    /// failure when a member `"failed": true` is there.
    struct Texts;

    impl Envelope for Texts {
        fn name(&self) -> &str {
            "texts"
        }

        fn describe(&self) -> &str {
            "each string of texts routed as above"
        }

        fn open(&self, text: &str, members: &[Member<'_>]) -> Option<Opened> {
            let texts = members.iter().find(|m| m.name.is("texts"))?;
            if members
                .iter()
                .any(|m| m.name.is("failed") && &text[m.value.clone()] == "true")
            {
                return Some(Opened::Failure("failed"));
            }
            let elements = parrot_json::elements(text, texts.value.start).ok()?;
            Some(Opened::Texts(elements))
        }
    }

    fn with_texts(params: &str) -> Auto {
        let Value::Object(params) = serde_json::from_str(params).unwrap() else {
            panic!("params are a table");
        };
        let envelopes: Vec<Arc<dyn Envelope>> = vec![Arc::new(Texts)];
        Auto::build(&Registry::with_builtins(), &params, counter(), &envelopes).unwrap()
    }

    #[test]
    fn an_envelope_s_texts_are_routed_one_by_one_and_the_object_rebuilt() {
        let router = with_texts(r#"{"text": [], "object": ["json_compact"]}"#);
        let block = r#"{"a": 1, "b": null}"#;
        let input = format!(
            r#"{{"texts": [{}, "plain", 12], "failed": false}}"#,
            parrot_json::encode_string(block)
        );
        let decision = router.route(&input, PayloadKind::Json, Level::Normal);
        let routed = decision.routed.expect("routed");
        assert_eq!(
            routed.payload,
            r#"{"texts": ["{\"a\":1}", "plain", 12], "failed": false}"#
        );
        assert_eq!(routed.codec, "json_compact");
        assert!(!routed.text_output);
        assert_eq!(routed.parts.len(), 1);
        assert_eq!(routed.parts[0].input, block);
        assert!(
            decision
                .route
                .starts_with("texts: block 1: object: json_compact"),
            "{}",
            decision.route
        );
        assert!(
            decision.route.ends_with("; block 3: not a string, kept"),
            "{}",
            decision.route
        );
        // Without the envelope, the same payload is an object.
        let plain = auto(r#"{"text": [], "object": ["json_compact"]}"#).unwrap();
        let decision = plain.route(&input, PayloadKind::Json, Level::Normal);
        assert!(decision.route.starts_with("object: "), "{}", decision.route);
    }

    #[test]
    fn an_envelope_s_failure_passes_through_and_explain_names_it() {
        let auto = with_texts(r#"{"object": ["json_compact"]}"#);
        let input = r#"{"texts": ["{\"a\": null}"], "failed": true}"#;
        let decision = auto.route(input, PayloadKind::Json, Level::Normal);
        assert!(decision.routed.is_none());
        assert_eq!(decision.route, "texts: failed, passed through");
        assert_eq!(
            auto.compress(Payload::json(input), Level::Normal),
            Outcome::Unchanged
        );
        let lines = auto.describe();
        assert!(
            lines.contains(&"texts:  each string of texts routed as above".to_owned()),
            "{lines:?}"
        );
    }

    #[test]
    fn json_candidates_run_at_minimal_unless_lossy_json() {
        let long = "x".repeat(3000);
        let input = format!(r#"{{"a": "{long}", "b": [1, 2]}}"#);
        let lossless = auto(r#"{"text": [], "object": ["json_compact"]}"#).unwrap();
        let routed = lossless
            .route(&input, PayloadKind::Json, Level::Normal)
            .routed
            .expect("compacted");
        assert!(!routed.lossy);
        assert!(routed.payload.contains(&long));
        let lossy =
            auto(r#"{"text": [], "object": ["json_compact"], "lossy_json": true}"#).unwrap();
        let routed = lossy
            .route(&input, PayloadKind::Json, Level::Normal)
            .routed
            .expect("clipped");
        assert!(routed.lossy);
    }

    #[test]
    fn large_rows_are_chosen_on_a_sample_and_the_winner_runs_on_the_whole() {
        let auto = auto(
            r#"{"text": [], "sample_bytes": 1000, "sample_rows": 4, "columnar": {"min_rows": 2}}"#,
        )
        .unwrap();
        let rows: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    r#"{{"id": {i}, "region": "south", "units": {}}}"#,
                    i * 7 % 13
                )
            })
            .collect();
        let input = format!(r#"{{"driver": "pg", "rows": [{}]}}"#, rows.join(", "));
        let decision = auto.route(&input, PayloadKind::Json, Level::Normal);
        let routed = decision.routed.expect("routed");
        assert!(
            decision.route.starts_with("rows (sample of 4 rows): "),
            "{}",
            decision.route
        );
        assert!(
            decision
                .route
                .ends_with(&format!("; {} ran on the whole", routed.codec)),
            "{}",
            decision.route
        );
        let winner = Registry::with_builtins()
            .instantiate(
                &routed.codec,
                if routed.codec == "columnar" {
                    serde_json::from_str(r#"{"min_rows": 2}"#).unwrap()
                } else {
                    Map::new()
                },
            )
            .unwrap();
        assert_eq!(
            winner
                .compress(Payload::json(&input), Level::Minimal)
                .unwrap(),
            Outcome::lossless(routed.payload)
        );
    }

    #[test]
    fn numbers_are_written_with_thousands_separators() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1_946_000, "1,946,000"),
        ];
        for (n, text) in cases {
            assert_eq!(thousands(n), text);
        }
    }
}
