//! Token counts for the stage's decisions, on the caller's path (CONTRACT §2.1, the no-gain
//! rule).
//!
//! The savings report counts every payload exactly, off the caller's path
//! ([`crate::metering::tokens`]). Decisions cannot wait for that: rule 9 must know, before the payload
//! goes out, that it holds no more tokens than the input. A full count runs at about 50 MB/s
//! (a 256 KB payload: 5 ms, over the inline budget), so the gauge counts only what it must:
//!
//! - an output at most [`MUCH_SMALLER`] of the input's bytes is fewer tokens, uncounted;
//! - a text up to [`EXACT_BYTES`] is counted exactly;
//! - a larger text is estimated from [`WINDOWS`] windows of [`WINDOW_BYTES`] bytes, evenly
//!   spaced and cut at character boundaries, counted exactly and scaled by the text's bytes
//!   over the windows' bytes; the estimate is within [`ESTIMATE_ERROR`] of the real count on
//!   every text of the corpus, the sample session and the built-in codecs' outputs of them,
//!   and on slices of those (the tests assert it);
//! - the no-gain rule looks first at [`FIRST_WINDOWS`] of those windows (half the counting),
//!   whose estimate is within [`FIRST_ERROR`] on the same texts; when those wider
//!   ranges do not overlap the decision is made, else the other windows are counted too (the
//!   first ones are not counted again) and the rule decides on the full estimate;
//! - when the estimates' ranges overlap (the close zone), both texts are counted exactly if
//!   together they are at most [`CLOSE_EXACT_BYTES`]; above that the output is refused: it
//!   cannot be shown within the budget to add no tokens, and it would save at most about
//!   twice the error bound.
//!
//! A tokenizer that counts nothing (a no-op counter, as benchmarks and tests use) gives no
//! evidence: the gauge then falls back to bytes, and an output may replace the input when it is
//! no larger.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::metering::tokens::TokenCounter;

/// An output at most this fraction of the input's bytes holds fewer tokens, uncounted.
///
/// For it to hold more, its tokens per byte would have to be over twice the input's. The
/// highest ratio measured, over every payload of the corpus and the sample session (and their
/// compact JSON), every codec and every level, is 1.56 (TOON of the 500-row query result: 23%
/// of the bytes, 36% of the tokens); the outputs that did add tokens kept 98.8% and 99.6% of
/// their input's bytes.
pub(crate) const MUCH_SMALLER: f64 = 0.5;

/// Texts up to this many bytes are counted exactly (about 0.65 ms at 50 MB/s).
pub(crate) const EXACT_BYTES: usize = 32 * 1024;

/// How many windows a larger text's estimate counts.
pub(crate) const WINDOWS: usize = 32;

/// The bytes of one window (its ends move back to character boundaries): 32 of them count
/// 16 KB, about 0.33 ms, whatever the text's size.
pub(crate) const WINDOW_BYTES: usize = 512;

/// The estimator's relative error bound: an estimate `e` of a text of `n` tokens satisfies
/// `|e - n| <= ESTIMATE_ERROR * n` on every text the tests measure (the largest measured is
/// 1.2%).
pub(crate) const ESTIMATE_ERROR: f64 = 0.025;

/// How many of the [`WINDOWS`] windows the no-gain rule's first look counts: the ones nearest
/// `k / (FIRST_WINDOWS - 1)` of the way through the text, so the first and the last among them.
pub(crate) const FIRST_WINDOWS: usize = 16;

/// The first look's relative error bound, as [`ESTIMATE_ERROR`] is the full estimate's: the
/// largest measured from 16 KB up is 3.8% (a 23 KB TOON text), from 32 KB up, where the
/// first look is taken, 1.3%. With it a first look decides when the output's estimate is at
/// most 0.887 of the input's (1 MB of rows through json_compact at `minimal` keeps 0.871 of
/// the tokens). Eight windows measured 5.2%, and would decide only under 0.852.
pub(crate) const FIRST_ERROR: f64 = 0.06;

// The counted windows are bits of a `u64`; the first look's are among them, both ends included.
const _: () = assert!(WINDOWS <= 64 && 2 <= FIRST_WINDOWS && FIRST_WINDOWS <= WINDOWS);

/// The close zone is counted exactly up to this many bytes of input and output together
/// (about 1.3 ms at 50 MB/s); above it, an output in the close zone is refused.
pub(crate) const CLOSE_EXACT_BYTES: usize = 64 * 1024;

/// A token count: exact, or estimated by [`Gauge::tokens`]'s windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tokens {
    /// The number of tokens.
    pub(crate) count: usize,
    /// Whether `count` is the tokenizer's own count of the whole text.
    pub(crate) exact: bool,
}

/// A no-gain decision with the counts behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Weighed {
    /// The output holds no more tokens than the input.
    pub(crate) fits: bool,
    /// The input's and the output's tokens as last counted (first look, full look or exact);
    /// `None` when the bytes decided alone.
    pub(crate) counts: Option<(Tokens, Tokens)>,
}

/// Token counts for decisions, in the configured tokenizer.
pub(crate) struct Gauge {
    counter: Arc<dyn TokenCounter>,
    /// The counter counted nothing in a text that has tokens: decisions fall back to bytes.
    /// Probed at the first decision, not when the host is built: a tokenizer may load its
    /// tables when it first counts (the built-in ones do not; another counter might), which
    /// host construction must not pay.
    blind: OnceLock<bool>,
}

thread_local! {
    /// How long this thread has waited for a gauge's first count (the tokenizer's start-up:
    /// loading its tables, or waiting for another thread that loads them), in nanoseconds.
    /// [`crate::Host::process`] leaves it out of the duration it reports.
    static STARTUP_NANOS: Cell<u64> = const { Cell::new(0) };
}

/// How long this thread has waited for the tokenizer's start-up so far, in nanoseconds.
pub(crate) fn startup_nanos() -> u64 {
    STARTUP_NANOS.with(Cell::get)
}

impl Gauge {
    /// A gauge counting with `counter`.
    pub(crate) fn new(counter: Arc<dyn TokenCounter>) -> Gauge {
        Gauge {
            counter,
            blind: OnceLock::new(),
        }
    }

    /// The tokenizer.
    pub(crate) fn counter(&self) -> &dyn TokenCounter {
        &*self.counter
    }

    /// Whether the counter counts nothing (a no-op counter): then bytes decide.
    pub(crate) fn blind(&self) -> bool {
        if let Some(&blind) = self.blind.get() {
            return blind;
        }
        // The first count: the tokenizer's start-up, timed for this thread.
        let started = Instant::now();
        let blind = *self
            .blind
            .get_or_init(|| self.counter.count("a text with tokens") == 0);
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        STARTUP_NANOS.with(|spent| spent.set(spent.get().saturating_add(nanos)));
        blind
    }

    /// Tokens of `text`: exact up to [`EXACT_BYTES`], else estimated from [`WINDOWS`] evenly
    /// spaced windows of [`WINDOW_BYTES`] bytes, counted exactly and scaled by the text's
    /// bytes over the windows' bytes (within [`ESTIMATE_ERROR`] on the measured texts).
    pub(crate) fn tokens(&self, text: &str) -> Tokens {
        if text.len() <= EXACT_BYTES {
            Tokens {
                count: self.counter.count(text),
                exact: true,
            }
        } else {
            Tokens {
                count: self.estimate(text),
                exact: false,
            }
        }
    }

    /// Whether `output` may replace `input`: never more tokens than the input (rule 9).
    ///
    /// Equal tokens are allowed; whether the bytes must shrink too is the caller's rule.
    #[cfg(test)]
    pub(crate) fn no_more_tokens(&self, input: &str, output: &str) -> bool {
        self.weigh(input, output, None).fits
    }

    /// [`Gauge::no_more_tokens`], with the counts it made (or was given in `counted`), so a
    /// caller can pass them on instead of counting again.
    pub(crate) fn weigh(
        &self,
        input: &str,
        output: &str,
        counted: Option<(Tokens, Tokens)>,
    ) -> Weighed {
        let mut seen = counted;
        let fits = self.no_more_tokens_with(input, output, &mut seen);
        Weighed { fits, counts: seen }
    }

    /// [`Gauge::no_more_tokens`] for a caller that has counted both texts already with
    /// [`Gauge::tokens`] (`auto`'s ranking): the same decision, without counting them again.
    /// With a blind tokenizer the counts are not read (bytes decide, as there).
    pub(crate) fn no_more_tokens_counted(
        &self,
        input: &str,
        before: Tokens,
        output: &str,
        after: Tokens,
    ) -> bool {
        self.no_more_tokens_with(input, output, &mut Some((before, after)))
    }

    /// The decision; `counted` holds the counts given, or receives the last counts made
    /// (`None` when the bytes decided alone).
    fn no_more_tokens_with(
        &self,
        input: &str,
        output: &str,
        counted: &mut Option<(Tokens, Tokens)>,
    ) -> bool {
        // First, as it needs no tokenizer (and holds for a blind one too: fewer bytes).
        if (output.len() as f64) <= MUCH_SMALLER * input.len() as f64 {
            return true;
        }
        if self.blind() {
            return output.len() <= input.len();
        }
        let (before, after) = match *counted {
            Some(counts) => counts,
            None => {
                let mut input_windows = Windows::new(input);
                let before = self.first_look(&mut input_windows);
                if before.count == 0 && !input.is_empty() {
                    return output.len() <= input.len();
                }
                let mut output_windows = Windows::new(output);
                let after = self.first_look(&mut output_windows);
                *counted = Some((before, after));
                if let Some(decided) = separated(before, after, FIRST_ERROR) {
                    return decided;
                }
                let full = (
                    self.full_look(&mut input_windows, before),
                    self.full_look(&mut output_windows, after),
                );
                *counted = Some(full);
                full
            }
        };
        if before.count == 0 && !input.is_empty() {
            // The counter saw no tokens where there are some: no evidence, bytes decide.
            return output.len() <= input.len();
        }
        if let Some(decided) = separated(before, after, ESTIMATE_ERROR) {
            decided
        } else if input.len() + output.len() <= CLOSE_EXACT_BYTES {
            let exact = (
                Tokens {
                    count: self.exact(input, before),
                    exact: true,
                },
                Tokens {
                    count: self.exact(output, after),
                    exact: true,
                },
            );
            *counted = Some(exact);
            exact.1.count <= exact.0.count
        } else {
            false
        }
    }

    /// The exact count of `text`, reusing `tokens` when it is exact already.
    fn exact(&self, text: &str, tokens: Tokens) -> usize {
        if tokens.exact {
            tokens.count
        } else {
            self.counter.count(text)
        }
    }

    /// The windows' estimate of `text`'s tokens.
    fn estimate(&self, text: &str) -> usize {
        let mut windows = Windows::new(text);
        self.count_all(&mut windows)
    }

    /// Counts every window of [`WINDOWS`] not counted yet; returns the estimate.
    fn count_all(&self, windows: &mut Windows<'_>) -> usize {
        for i in 0..WINDOWS {
            windows.count(&*self.counter, i);
        }
        windows.estimate(&*self.counter)
    }

    /// The no-gain rule's first look: the exact count of a text up to [`EXACT_BYTES`], else the
    /// estimate of its [`FIRST_WINDOWS`] windows (within [`FIRST_ERROR`]).
    fn first_look(&self, windows: &mut Windows<'_>) -> Tokens {
        if windows.text.len() <= EXACT_BYTES {
            return Tokens {
                count: self.counter.count(windows.text),
                exact: true,
            };
        }
        for k in 0..FIRST_WINDOWS {
            windows.count(&*self.counter, first_window(k));
        }
        Tokens {
            count: windows.estimate(&*self.counter),
            exact: false,
        }
    }

    /// The look after a first one that did not decide: the same exact count, or the estimate
    /// of all [`WINDOWS`] windows (the first look's are not counted again), the same as
    /// [`Gauge::tokens`] gives.
    fn full_look(&self, windows: &mut Windows<'_>, first: Tokens) -> Tokens {
        if first.exact {
            return first;
        }
        Tokens {
            count: self.count_all(windows),
            exact: false,
        }
    }
}

/// Which of the [`WINDOWS`] windows is the first look's `k`-th: the nearest to
/// `k / (FIRST_WINDOWS - 1)` of the way through the text.
fn first_window(k: usize) -> usize {
    (k * (WINDOWS - 1) + (FIRST_WINDOWS - 1) / 2) / (FIRST_WINDOWS - 1)
}

/// The windows of one text counted so far: an estimate that can grow from the first look to
/// all [`WINDOWS`] windows without counting a window twice.
struct Windows<'t> {
    text: &'t str,
    /// The bytes and tokens of the windows counted.
    bytes: usize,
    tokens: usize,
    /// Bit `i`: window `i` is counted.
    counted: u64,
}

impl<'t> Windows<'t> {
    fn new(text: &'t str) -> Windows<'t> {
        Windows {
            text,
            bytes: 0,
            tokens: 0,
            counted: 0,
        }
    }

    /// Counts window `i` of [`WINDOWS`] (evenly spaced, [`WINDOW_BYTES`] long, its ends moved
    /// back to character boundaries), unless it is counted already.
    fn count(&mut self, counter: &dyn TokenCounter, i: usize) {
        if self.counted & (1 << i) != 0 {
            return;
        }
        self.counted |= 1 << i;
        let text = self.text;
        let last_start = text.len().saturating_sub(WINDOW_BYTES);
        let start = floor_boundary(text, last_start * i / (WINDOWS - 1));
        let end = floor_boundary(text, (start + WINDOW_BYTES).min(text.len()));
        if end > start {
            self.bytes += end - start;
            self.tokens += counter.count(&text[start..end]);
        }
    }

    /// The windows' tokens scaled by the text's bytes over theirs (the whole text counted when
    /// no window holds a byte).
    fn estimate(&self, counter: &dyn TokenCounter) -> usize {
        if self.bytes == 0 {
            return counter.count(self.text);
        }
        let scaled = self.tokens as f64 * self.text.len() as f64 / self.bytes as f64;
        scaled.round() as usize
    }
}

/// The decision when the ranges of `before` and `after` (estimates within `error`, or exact
/// counts) do not overlap: whether `after` is no more; `None` when they overlap.
fn separated(before: Tokens, after: Tokens, error: f64) -> Option<bool> {
    let (before_low, before_high) = bounds(before, error);
    let (after_low, after_high) = bounds(after, error);
    if after_high <= before_low {
        Some(true)
    } else if after_low > before_high {
        Some(false)
    } else {
        None
    }
}

/// The range an estimate within `error` puts its true count in (a point for an exact count).
fn bounds(tokens: Tokens, error: f64) -> (f64, f64) {
    let count = tokens.count as f64;
    if tokens.exact {
        (count, count)
    } else {
        (count / (1.0 + error), count / (1.0 - error))
    }
}

/// The largest character boundary of `text` at or before `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use parrot_codec_api::{Level, Outcome, Params, Payload, PayloadKind};

    use super::*;
    use crate::metering::tokens::Tokenizer;

    fn o200k() -> Gauge {
        Gauge::new(Arc::new(Tokenizer::O200k))
    }

    /// Counts nothing, like the benchmarks' no-op counter.
    struct NoTokens;

    impl TokenCounter for NoTokens {
        fn name(&self) -> &str {
            "none"
        }

        fn count(&self, _: &str) -> usize {
            0
        }
    }

    fn kind(text: &str) -> PayloadKind {
        if parrot_json::check(text) == parrot_json::JsonCheck::Json {
            PayloadKind::Json
        } else {
            PayloadKind::Text
        }
    }

    /// Every corpus file, the sample session's results, the compact JSON of both, and what
    /// every built-in codec makes of each at every level.
    fn texts() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut inputs = Vec::new();
        let mut names: Vec<String> = std::fs::read_dir(root.join("corpus"))
            .expect("corpus/")
            .map(|entry| {
                entry
                    .expect("corpus entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name.ends_with(".json") || name.ends_with(".txt"))
            .collect();
        names.sort();
        for name in names {
            let text =
                std::fs::read_to_string(root.join("corpus").join(&name)).expect("corpus file");
            inputs.push((name, text));
        }
        let session = std::fs::read_to_string(root.join("samples/session.jsonl")).expect("session");
        for (i, line) in session.lines().enumerate() {
            let call: serde_json::Value = serde_json::from_str(line).expect("session line");
            let result = match &call["result"] {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            inputs.push((format!("session line {}", i + 1), result));
        }
        let compact: Vec<(String, String)> = inputs
            .iter()
            .filter_map(|(name, text)| {
                let value: serde_json::Value = serde_json::from_str(text).ok()?;
                let compact = value.to_string();
                (compact != *text).then(|| (format!("{name}, compact"), compact))
            })
            .collect();
        inputs.extend(compact);
        let mut all = inputs.clone();
        for builtin in parrot_codecs::builtins() {
            let codec = (builtin.build)(Params::empty()).expect("built-in with default params");
            for (name, text) in &inputs {
                for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
                    if let Ok(Outcome::Changed { payload, .. }) =
                        codec.compress(Payload::new(text, kind(text)), level)
                    {
                        all.push((
                            format!("{name}, {} at {level}", builtin.meta.name()),
                            payload,
                        ));
                    }
                }
            }
        }
        all
    }

    /// Slices of the texts over 32 KB: 20, 50, 100 and 256 KB from the start, the middle and
    /// the end, cut at character boundaries.
    fn slices(texts: &[(String, String)]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (name, text) in texts.iter().filter(|(_, t)| t.len() > 32 * 1024) {
            for size in [20 * 1024, 50 * 1024, 100 * 1024, 256 * 1024] {
                if size >= text.len() {
                    continue;
                }
                for at in [0, (text.len() - size) / 2, text.len() - size] {
                    let start = floor_boundary(text, at);
                    let end = floor_boundary(text, start + size);
                    out.push((
                        format!("{name}, {size} bytes at {start}"),
                        text[start..end].to_owned(),
                    ));
                }
            }
        }
        out
    }

    /// Every measured text once, with its exact count.
    fn measured() -> Vec<(String, String, usize)> {
        let mut all = texts();
        all.sort_by(|a, b| a.1.cmp(&b.1));
        all.dedup_by(|a, b| a.1 == b.1);
        let sliced = slices(&all);
        all.extend(sliced);
        all.into_iter()
            .map(|(name, text)| {
                let exact = Tokenizer::O200k.count(&text);
                (name, text, exact)
            })
            .collect()
    }

    #[test]
    fn small_texts_are_counted_exactly() {
        let gauge = o200k();
        for text in ["", "hello world", "{\"a\":[1,2,3]}", &"word ".repeat(6000)] {
            assert!(text.len() <= EXACT_BYTES);
            let tokens = gauge.tokens(text);
            assert!(tokens.exact, "{text:.20}");
            assert_eq!(tokens.count, Tokenizer::O200k.count(text), "{text:.20}");
        }
        assert!(!gauge.tokens(&"word ".repeat(7000)).exact);
    }

    /// The bound is asserted from 16 KB up, half the size where the estimate is used.
    #[test]
    fn the_estimate_is_within_its_error_bound_on_every_measured_text() {
        let gauge = o200k();
        let mut worst = (0.0f64, String::new());
        let mut count = 0;
        for (name, text, exact) in measured() {
            if text.len() <= 16 * 1024 {
                continue;
            }
            let error = (gauge.estimate(&text) as f64 - exact as f64).abs() / exact as f64;
            if error > worst.0 {
                worst = (error, name);
            }
            count += 1;
        }
        assert!(count >= 40, "only {count} texts over 16 KB");
        assert!(
            worst.0 <= ESTIMATE_ERROR,
            "{:.2}% on {}",
            worst.0 * 100.0,
            worst.1
        );
    }

    #[test]
    fn the_first_look_takes_distinct_windows_from_the_first_to_the_last() {
        let windows: Vec<usize> = (0..FIRST_WINDOWS).map(first_window).collect();
        assert_eq!(
            windows,
            [0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31]
        );
    }

    /// As the full estimate's bound: from 16 KB up, on every measured text.
    #[test]
    fn the_first_look_is_within_its_error_bound_on_every_measured_text() {
        let gauge = o200k();
        let mut worst = (0.0f64, String::new());
        for (name, text, exact) in measured() {
            if text.len() <= 16 * 1024 {
                continue;
            }
            let mut windows = Windows::new(&text);
            for k in 0..FIRST_WINDOWS {
                windows.count(gauge.counter(), first_window(k));
            }
            let first = windows.estimate(gauge.counter());
            let error = (first as f64 - exact as f64).abs() / exact as f64;
            if error > worst.0 {
                worst = (error, name);
            }
            // Counting the rest gives the full estimate.
            for i in 0..WINDOWS {
                windows.count(gauge.counter(), i);
            }
            assert_eq!(windows.estimate(gauge.counter()), gauge.estimate(&text));
        }
        assert!(
            worst.0 <= FIRST_ERROR,
            "{:.2}% on {}",
            worst.0 * 100.0,
            worst.1
        );
    }

    /// Counts with o200k and records how many texts it was given.
    #[derive(Default)]
    struct Recording(std::sync::atomic::AtomicUsize);

    impl TokenCounter for Recording {
        fn name(&self) -> &str {
            "recording"
        }

        fn count(&self, text: &str) -> usize {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Tokenizer::O200k.count(text)
        }
    }

    /// A clear gain is decided on the first look's windows; a close call counts the rest of
    /// them, each window once, and decides as the full estimate does.
    #[test]
    fn the_first_look_decides_a_clear_gain_and_a_close_call_counts_every_window() {
        let row = |i: usize, notes: bool| {
            let notes = if notes { ", \"notes\": null" } else { "" };
            format!("{{\"id\": {i}, \"name\": \"store {i}\"{notes}}}, ")
        };
        let rows: String = (0..4000).map(|i| row(i, true)).collect();
        // Without the notes: 0.76 of the tokens; without every fourth row's: 0.94.
        let clear: String = (0..4000).map(|i| row(i, false)).collect();
        let close: String = (0..4000).map(|i| row(i, i % 4 != 0)).collect();
        for (output, counts) in [(&clear, 2 * FIRST_WINDOWS), (&close, 2 * WINDOWS)] {
            assert!(output.len() > rows.len() / 2 && output.len() > EXACT_BYTES);
            let recording = Arc::new(Recording::default());
            let gauge = Gauge::new(recording.clone());
            let allowed = gauge.no_more_tokens(&rows, output);
            let counted = recording.0.load(std::sync::atomic::Ordering::Relaxed);
            // One count is the blindness probe.
            assert_eq!(
                counted - 1,
                counts,
                "{} of {} bytes",
                output.len(),
                rows.len()
            );
            let (before, after) = (
                Tokenizer::O200k.count(&rows),
                Tokenizer::O200k.count(output),
            );
            assert!(allowed, "{after} of {before} tokens");
        }
    }

    /// Every pair of a measured text and a shorter one the byte gate leaves to counting stands
    /// in for an input and an output: the gauge never lets through more tokens, and lets
    /// through every clear gain. (The gate itself is a claim about a codec's output of its own
    /// input, checked over the corpus by the integration tests' `tokens::`.)
    #[test]
    fn the_gauge_decides_as_the_exact_count_does_outside_the_close_zone() {
        let gauge = o200k();
        let texts = measured();
        let mut decided = 0;
        for (_, input, tokens_in) in &texts {
            for (name, output, tokens_out) in &texts {
                if output.len() >= input.len()
                    || (output.len() as f64) <= MUCH_SMALLER * input.len() as f64
                {
                    continue;
                }
                let allowed = gauge.no_more_tokens(input, output);
                if allowed {
                    assert!(
                        tokens_out <= tokens_in,
                        "{name}: {tokens_out} > {tokens_in}"
                    );
                }
                let clear = (*tokens_out as f64) < (1.0 - 3.0 * ESTIMATE_ERROR) * *tokens_in as f64;
                let small = input.len() + output.len() <= CLOSE_EXACT_BYTES;
                if clear || small {
                    assert_eq!(allowed, tokens_out <= tokens_in, "{name}");
                }
                decided += 1;
            }
        }
        assert!(decided > 500, "{decided}");
    }

    #[test]
    fn an_output_denser_in_tokens_is_refused_at_any_size() {
        let gauge = o200k();
        // About one token per six bytes against one per three (digits go in threes).
        for words in [1_000, 10_000, 50_000] {
            let input = " hello".repeat(words);
            let output: String = "0123456789"
                .chars()
                .cycle()
                .take(input.len() * 8 / 10)
                .collect();
            assert!(Tokenizer::O200k.count(&output) > Tokenizer::O200k.count(&input));
            assert!(
                !gauge.no_more_tokens(&input, &output),
                "{} bytes",
                input.len()
            );
        }
    }

    #[test]
    fn a_counter_that_counts_nothing_falls_back_to_bytes() {
        let gauge = Gauge::new(Arc::new(NoTokens));
        let input = " hello".repeat(100);
        assert!(gauge.no_more_tokens(&input, &"1".repeat(599)));
        assert!(gauge.no_more_tokens(&input, &"1".repeat(600)));
        assert!(!gauge.no_more_tokens(&input, &"1".repeat(601)));
        // A counter blind to this input alone gives no evidence either.
        struct BlindToHello;
        impl TokenCounter for BlindToHello {
            fn name(&self) -> &str {
                "blind to hello"
            }
            fn count(&self, text: &str) -> usize {
                if text.contains("hello") {
                    0
                } else {
                    text.len()
                }
            }
        }
        let gauge = Gauge::new(Arc::new(BlindToHello));
        assert!(gauge.no_more_tokens(&input, &"1".repeat(599)));
        assert!(!gauge.no_more_tokens(&input, &"1".repeat(601)));
    }
}
