//! Latency budgets: the [`Placement`] that decides where a codec call runs, and the per-codec
//! [`Breaker`] that stops calling a codec that keeps busting its budget.
//!
//! Placement, per call: `minimal` runs inline at any size; above it, a payload under both
//! `size_threshold_bytes` and `row_threshold` runs inline, a larger one runs on an executor
//! when the caller is async, else passes through.
//!
//! Breaker, per codec: calls are grouped in windows of `window_calls` calls or
//! `window_duration`, whichever ends first. A window is over budget when a strict majority of
//! its calls exceeded their budget. `windows_to_open` consecutive over-budget windows open the
//! breaker for `cooldown` (the codec is skipped: passthrough). After the cooldown exactly one
//! probe call runs the codec: within budget closes the breaker, over budget reopens it for
//! another cooldown. Other calls during a probe pass through. Only a call in which the codec
//! actually ran can resolve a probe.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::SettingsError;

/// A source of time, so that tests can drive the breaker without sleeping.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use parrot_host::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let start = clock.now();
/// clock.advance(Duration::from_secs(61));
/// assert_eq!(clock.now() - start, Duration::from_secs(61));
/// ```
#[derive(Debug)]
pub struct ManualClock {
    origin: Instant,
    offset_nanos: AtomicU64,
}

impl ManualClock {
    /// A clock standing at the moment of its creation.
    pub fn new() -> ManualClock {
        ManualClock {
            origin: Instant::now(),
            offset_nanos: AtomicU64::new(0),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.offset_nanos.fetch_add(nanos, Ordering::SeqCst);
    }
}

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.origin + Duration::from_nanos(self.offset_nanos.load(Ordering::SeqCst))
    }
}

/// Where a codec call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// On the caller's thread.
    Inline,
    /// Off the caller's async runtime, on a blocking thread.
    Executor,
    /// Not at all: the payload passes through.
    Passthrough,
}

/// Thresholds and latency budgets.
///
/// The defaults come from measured `process` latencies of the built-in codecs (release build,
/// `cargo bench -p parrot-benches --bench calibration`; docs/BENCHMARKS.md has the table): at
/// 256 KB the p99 stays under 1.4 ms, about half the inline budget; a 1 MB payload at
/// `minimal` takes 2–4 ms, within its budget; the executor's budget covers the p99 of a 10 MB
/// payload.
///
/// [`Budgets::default`] is the one place they are written. Budgets are settings of the host
/// ([`crate::HostBuilder::budgets`]), not of a manifest, so the core manifest holds none; the
/// tables of CONTRACT §6 and the GUIDE and the README's thresholds show them, held to this by
/// the integration test `readme::the_documented_budgets_are_budgets_default`.
///
/// # Allowed values
///
/// [`crate::HostBuilder::build`] refuses, with a [`SettingsError`] naming the key and the
/// value:
///
/// - a threshold of 0: every payload above `minimal` would leave the inline path (to the
///   executor, or through uncompressed), whatever its size. Unlike `max_result_chars`, 0 does
///   not mean "no limit" here: for that, use `usize::MAX`.
///
/// Any budget is allowed. A zero budget makes every call that takes measurable time over
/// budget (a way to open a breaker on purpose); `Duration::MAX` is no budget at all.
///
/// # Examples
///
/// ```
/// use parrot_host::{Budgets, Host};
///
/// let dir = std::env::temp_dir().join("parrot-doc-budgets");
/// std::fs::create_dir_all(&dir).unwrap();
/// let err = Host::builder()
///     .project(&dir)
///     .plugin_path(None)
///     .budgets(Budgets { row_threshold: 0, ..Budgets::default() })
///     .build()
///     .unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "Budgets: key \"row_threshold\": 0 would send every payload above minimal off the inline \
///      path (expected at least 1; usize::MAX for no limit)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budgets {
    /// Payloads of this many bytes or more leave the inline path.
    pub size_threshold_bytes: usize,
    /// Payloads with an estimated row count of this or more leave the inline path.
    pub row_threshold: usize,
    /// Budget of a call at `minimal`.
    pub minimal_budget: Duration,
    /// Budget of an inline call above `minimal`.
    pub inline_budget: Duration,
    /// Budget of a call on the executor.
    pub executor_budget: Duration,
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            size_threshold_bytes: 256 * 1024,
            row_threshold: 1_500,
            minimal_budget: Duration::from_millis(5),
            inline_budget: Duration::from_millis(3),
            executor_budget: Duration::from_millis(100),
        }
    }
}

impl Budgets {
    /// Every value [`Budgets`]' docs say is not allowed, one error each.
    pub(crate) fn check(&self) -> Vec<SettingsError> {
        let threshold = |key, value: usize| {
            (value == 0).then(|| SettingsError::OutOfRange {
                settings: "Budgets",
                key,
                value: value.to_string(),
                problem: "would send every payload above minimal off the inline path",
                expected: "at least 1; usize::MAX for no limit",
            })
        };
        [
            threshold("size_threshold_bytes", self.size_threshold_bytes),
            threshold("row_threshold", self.row_threshold),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Decides where a call runs from a cheap size estimate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Placement {
    /// The thresholds and budgets.
    pub budgets: Budgets,
}

impl Placement {
    /// Where a call runs: `minimal` inline at any size; otherwise inline under both
    /// thresholds, else the executor when the caller can offload, else passthrough.
    pub fn place(&self, minimal: bool, bytes: usize, rows: usize, can_offload: bool) -> Place {
        if minimal
            || (bytes < self.budgets.size_threshold_bytes && rows < self.budgets.row_threshold)
        {
            Place::Inline
        } else if can_offload {
            Place::Executor
        } else {
            Place::Passthrough
        }
    }

    /// The budget a call placed at `place` at the given level must meet.
    pub fn budget(&self, minimal: bool, place: Place) -> Duration {
        match (minimal, place) {
            (true, _) => self.budgets.minimal_budget,
            (false, Place::Executor) => self.budgets.executor_budget,
            (false, _) => self.budgets.inline_budget,
        }
    }

    /// [`Placement::place`] for a payload's text: its rows are counted only when its level and
    /// its bytes do not decide the place, and only until they reach the row threshold
    /// ([`Placement::rows_reach`]).
    pub fn place_text(&self, minimal: bool, text: &str, can_offload: bool) -> Place {
        let threshold = self.budgets.row_threshold;
        // The rows matter only under the size threshold, and then only whether they reach it.
        let counted = !minimal && text.len() < self.budgets.size_threshold_bytes;
        let rows = if counted && Placement::rows_reach(text, threshold) {
            threshold
        } else {
            0
        };
        self.place(minimal, text.len(), rows, can_offload)
    }

    /// A cheap row estimate: the number of `{` bytes (one per object), without parsing.
    pub fn estimate_rows(text: &str) -> usize {
        memchr::memchr_iter(b'{', text.as_bytes()).count()
    }

    /// Whether [`Placement::estimate_rows`] of `text` is at least `rows`, found by counting up to
    /// `rows` only.
    pub fn rows_reach(text: &str, rows: usize) -> bool {
        rows == 0
            || memchr::memchr_iter(b'{', text.as_bytes())
                .nth(rows - 1)
                .is_some()
    }
}

/// The breaker's parameters.
///
/// # Allowed values
///
/// [`crate::HostBuilder::build`] refuses, with a [`SettingsError`] naming the key and the
/// value:
///
/// - `window_calls` of 0 or a zero `window_duration`: every call would be a window of its own,
///   so one slow call would count as a whole window over budget;
/// - `windows_to_open` of 0: the breaker would open after any window, even one within budget;
/// - a zero `cooldown`: the next call would probe at once, so an open breaker would skip
///   nothing; a `cooldown` over [`BreakerConfig::MAX_COOLDOWN`] (365 days), which would push
///   the breaker's reopening past what the clock can be sure to represent.
///
/// # Examples
///
/// ```
/// use parrot_host::{BreakerConfig, Host};
///
/// let dir = std::env::temp_dir().join("parrot-doc-breaker");
/// std::fs::create_dir_all(&dir).unwrap();
/// let err = Host::builder()
///     .project(&dir)
///     .plugin_path(None)
///     .breaker(BreakerConfig { windows_to_open: 0, ..BreakerConfig::default() })
///     .build()
///     .unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "BreakerConfig: key \"windows_to_open\": 0 would open the breaker after any window, \
///      even one within budget (expected at least 1)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// A window ends after this many calls…
    pub window_calls: u32,
    /// …or after this long, whichever comes first.
    pub window_duration: Duration,
    /// Consecutive over-budget windows that open the breaker.
    pub windows_to_open: u32,
    /// How long the breaker stays open before a probe.
    pub cooldown: Duration,
}

impl Default for BreakerConfig {
    fn default() -> BreakerConfig {
        BreakerConfig {
            window_calls: 100,
            window_duration: Duration::from_secs(60),
            windows_to_open: 3,
            cooldown: Duration::from_secs(300),
        }
    }
}

impl BreakerConfig {
    /// The longest `cooldown` allowed.
    pub const MAX_COOLDOWN: Duration = Duration::from_secs(365 * 24 * 60 * 60);

    /// Every value [`BreakerConfig`]'s docs say is not allowed, one error each.
    pub(crate) fn check(&self) -> Vec<SettingsError> {
        let error = |key, value: String, problem, expected| SettingsError::OutOfRange {
            settings: "BreakerConfig",
            key,
            value,
            problem,
            expected,
        };
        let one_call_windows = "would make every call a window of its own";
        let mut errors = Vec::new();
        if self.window_calls == 0 {
            errors.push(error(
                "window_calls",
                "0".to_owned(),
                one_call_windows,
                "at least 1",
            ));
        }
        if self.window_duration.is_zero() {
            errors.push(error(
                "window_duration",
                format!("{:?}", self.window_duration),
                one_call_windows,
                "more than 0",
            ));
        }
        if self.windows_to_open == 0 {
            errors.push(error(
                "windows_to_open",
                "0".to_owned(),
                "would open the breaker after any window, even one within budget",
                "at least 1",
            ));
        }
        let cooldown = "more than 0 and at most 365 days";
        if self.cooldown.is_zero() {
            errors.push(error(
                "cooldown",
                format!("{:?}", self.cooldown),
                "would let the next call probe at once, so an open breaker skips nothing",
                cooldown,
            ));
        } else if self.cooldown > BreakerConfig::MAX_COOLDOWN {
            errors.push(error(
                "cooldown",
                format!("{:?}", self.cooldown),
                "would push the breaker's reopening past what the clock can be sure to represent",
                cooldown,
            ));
        }
        errors
    }
}

/// What the breaker says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Run the codec.
    Run,
    /// Run the codec as the one probe of an open breaker; report with [`Breaker::record`] or
    /// [`Breaker::abandon_probe`].
    Probe,
    /// Skip the codec: the breaker is open (or another call is probing).
    Open,
}

#[derive(Debug)]
struct BreakerState {
    window_start: Option<Instant>,
    window_calls: u32,
    window_over: u32,
    over_windows: u32,
    open_until: Option<Instant>,
    probing: bool,
}

/// A circuit breaker for one codec.
#[derive(Debug)]
pub struct Breaker {
    config: BreakerConfig,
    state: Mutex<BreakerState>,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(config: BreakerConfig) -> Breaker {
        Breaker {
            config,
            state: Mutex::new(BreakerState {
                window_start: None,
                window_calls: 0,
                window_over: 0,
                over_windows: 0,
                open_until: None,
                probing: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BreakerState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a call at `now` may run the codec.
    pub fn admit(&self, now: Instant) -> Admission {
        let mut state = self.lock();
        match state.open_until {
            None => Admission::Run,
            Some(until) if now < until || state.probing => Admission::Open,
            Some(_) => {
                state.probing = true;
                Admission::Probe
            }
        }
    }

    /// Whether the breaker is open at `now` (a probe in flight counts as open).
    pub fn is_open(&self, now: Instant) -> bool {
        let state = self.lock();
        state
            .open_until
            .is_some_and(|until| now < until || state.probing)
    }

    /// Records a call in which the codec ran, and whether it exceeded its budget.
    pub fn record(&self, now: Instant, admission: Admission, over_budget: bool) {
        let mut state = self.lock();
        match admission {
            Admission::Open => {}
            Admission::Probe => {
                state.probing = false;
                if over_budget {
                    state.open_until = Some(now + self.config.cooldown);
                } else {
                    state.open_until = None;
                    state.over_windows = 0;
                    state.window_start = None;
                    state.window_calls = 0;
                    state.window_over = 0;
                }
            }
            Admission::Run => {
                if state.open_until.is_some() {
                    return;
                }
                if state
                    .window_start
                    .is_some_and(|start| now.duration_since(start) >= self.config.window_duration)
                {
                    self.close_window(&mut state, now);
                }
                if state.window_start.is_none() {
                    state.window_start = Some(now);
                }
                state.window_calls += 1;
                state.window_over += u32::from(over_budget);
                if state.window_calls >= self.config.window_calls {
                    self.close_window(&mut state, now);
                }
            }
        }
    }

    /// Releases a probe in which the codec did not run (the payload was skipped for another
    /// reason), so that the next call probes instead.
    pub fn abandon_probe(&self) {
        self.lock().probing = false;
    }

    fn close_window(&self, state: &mut BreakerState, now: Instant) {
        let over = state.window_over * 2 > state.window_calls;
        state.window_start = None;
        state.window_calls = 0;
        state.window_over = 0;
        if over {
            state.over_windows += 1;
        } else {
            state.over_windows = 0;
        }
        if state.over_windows >= self.config.windows_to_open {
            state.over_windows = 0;
            state.open_until = Some(now + self.config.cooldown);
            tracing::warn!(
                cooldown_s = self.config.cooldown.as_secs(),
                "codec busted its latency budget in {} consecutive windows: breaker open",
                self.config.windows_to_open
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> BreakerConfig {
        BreakerConfig::default()
    }

    /// Runs one full window of 100 calls, `over` of them over budget.
    fn window(breaker: &Breaker, clock: &ManualClock, over: u32) {
        for i in 0..100 {
            let admission = breaker.admit(clock.now());
            assert_eq!(admission, Admission::Run);
            breaker.record(clock.now(), admission, i < over);
            clock.advance(Duration::from_millis(1));
        }
    }

    #[test]
    fn three_over_budget_windows_open_the_breaker() {
        let clock = ManualClock::new();
        let breaker = Breaker::new(config());
        window(&breaker, &clock, 51);
        window(&breaker, &clock, 51);
        assert_eq!(breaker.admit(clock.now()), Admission::Run);
        window(&breaker, &clock, 51);
        assert_eq!(breaker.admit(clock.now()), Admission::Open);
    }

    #[test]
    fn exactly_half_over_budget_is_not_a_majority() {
        let clock = ManualClock::new();
        let breaker = Breaker::new(config());
        for _ in 0..5 {
            window(&breaker, &clock, 50);
        }
        assert_eq!(breaker.admit(clock.now()), Admission::Run);
    }

    #[test]
    fn a_good_window_resets_the_count() {
        let clock = ManualClock::new();
        let breaker = Breaker::new(config());
        window(&breaker, &clock, 100);
        window(&breaker, &clock, 100);
        window(&breaker, &clock, 0);
        window(&breaker, &clock, 100);
        window(&breaker, &clock, 100);
        assert_eq!(breaker.admit(clock.now()), Admission::Run);
    }

    #[test]
    fn a_window_also_ends_after_sixty_seconds() {
        let clock = ManualClock::new();
        let breaker = Breaker::new(config());
        for _ in 0..3 {
            // Two slow calls, then a minute passes: the window closes with 2/2 over budget.
            for _ in 0..2 {
                let a = breaker.admit(clock.now());
                breaker.record(clock.now(), a, true);
            }
            clock.advance(Duration::from_secs(60));
        }
        let a = breaker.admit(clock.now());
        assert_eq!(
            a,
            Admission::Run,
            "the third window closes on the next call"
        );
        breaker.record(clock.now(), a, true);
        assert_eq!(breaker.admit(clock.now()), Admission::Open);
    }

    fn opened() -> (ManualClock, Breaker) {
        let clock = ManualClock::new();
        let breaker = Breaker::new(config());
        for _ in 0..3 {
            window(&breaker, &clock, 100);
        }
        assert_eq!(breaker.admit(clock.now()), Admission::Open);
        (clock, breaker)
    }

    #[test]
    fn a_successful_probe_closes_the_breaker() {
        let (clock, breaker) = opened();
        clock.advance(Duration::from_secs(299));
        assert_eq!(breaker.admit(clock.now()), Admission::Open);
        clock.advance(Duration::from_secs(1));
        let probe = breaker.admit(clock.now());
        assert_eq!(probe, Admission::Probe);
        breaker.record(clock.now(), probe, false);
        assert_eq!(breaker.admit(clock.now()), Admission::Run);
    }

    #[test]
    fn a_failed_probe_reopens_the_breaker_for_another_cooldown() {
        let (clock, breaker) = opened();
        clock.advance(Duration::from_secs(300));
        let probe = breaker.admit(clock.now());
        assert_eq!(probe, Admission::Probe);
        breaker.record(clock.now(), probe, true);
        clock.advance(Duration::from_secs(299));
        assert_eq!(breaker.admit(clock.now()), Admission::Open);
        clock.advance(Duration::from_secs(1));
        assert_eq!(breaker.admit(clock.now()), Admission::Probe);
    }

    #[test]
    fn a_second_caller_during_a_probe_passes_through() {
        let (clock, breaker) = opened();
        clock.advance(Duration::from_secs(300));
        assert_eq!(breaker.admit(clock.now()), Admission::Probe);
        assert_eq!(breaker.admit(clock.now()), Admission::Open);
    }

    #[test]
    fn an_abandoned_probe_lets_the_next_call_probe() {
        let (clock, breaker) = opened();
        clock.advance(Duration::from_secs(300));
        assert_eq!(breaker.admit(clock.now()), Admission::Probe);
        breaker.abandon_probe();
        assert_eq!(breaker.admit(clock.now()), Admission::Probe);
    }

    #[test]
    fn placement_places_by_level_and_size() {
        let placement = Placement::default();
        let big = 256 * 1024;
        let cases = [
            (true, big * 10, 100_000, false, Place::Inline),
            (false, big - 1, 1_499, false, Place::Inline),
            (false, big, 0, false, Place::Passthrough),
            (false, 10, 1_500, false, Place::Passthrough),
            (false, big, 0, true, Place::Executor),
        ];
        for (minimal, bytes, rows, offload, expected) in cases {
            assert_eq!(
                placement.place(minimal, bytes, rows, offload),
                expected,
                "minimal={minimal} bytes={bytes} rows={rows} offload={offload}"
            );
        }
    }

    /// `place_text` places every text as `place` does with the full row estimate, though it
    /// counts less: around both thresholds, at every level and with or without an executor.
    #[test]
    fn placing_a_text_agrees_with_the_full_row_estimate() {
        let placement = Placement::default();
        let rows = |n: usize| "{}".repeat(n);
        let mut texts = vec![String::new(), "no rows".to_owned()];
        for n in [1, 1_498, 1_499, 1_500, 1_501, 3_000] {
            texts.push(rows(n));
        }
        let big = placement.budgets.size_threshold_bytes;
        for len in [big - 1, big, big + 1] {
            texts.push("{".repeat(10) + &" ".repeat(len - 10));
        }
        for text in &texts {
            assert_eq!(
                Placement::rows_reach(text, placement.budgets.row_threshold),
                Placement::estimate_rows(text) >= placement.budgets.row_threshold
            );
            for minimal in [false, true] {
                for offload in [false, true] {
                    assert_eq!(
                        placement.place_text(minimal, text, offload),
                        placement.place(
                            minimal,
                            text.len(),
                            Placement::estimate_rows(text),
                            offload
                        ),
                        "{} bytes, {} rows",
                        text.len(),
                        Placement::estimate_rows(text)
                    );
                }
            }
        }
        assert!(Placement::rows_reach("", 0));
        assert_eq!(Placement::estimate_rows("{\"a\":{\"b\":[{}]}}"), 3);
    }

    fn messages(errors: Vec<SettingsError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_defaults_are_allowed() {
        assert!(Budgets::default().check().is_empty());
        assert!(BreakerConfig::default().check().is_empty());
    }

    #[test]
    fn zero_thresholds_are_refused_naming_the_key_and_what_no_limit_is() {
        let cases = [
            (
                Budgets {
                    size_threshold_bytes: 0,
                    ..Budgets::default()
                },
                "Budgets: key \"size_threshold_bytes\": 0 would send every payload above minimal \
                 off the inline path (expected at least 1; usize::MAX for no limit)",
            ),
            (
                Budgets {
                    row_threshold: 0,
                    ..Budgets::default()
                },
                "Budgets: key \"row_threshold\": 0 would send every payload above minimal off \
                 the inline path (expected at least 1; usize::MAX for no limit)",
            ),
        ];
        for (budgets, expected) in cases {
            assert_eq!(messages(budgets.check()), [expected]);
        }
    }

    #[test]
    fn zero_and_unlimited_budgets_are_allowed() {
        let zero = Budgets {
            minimal_budget: Duration::ZERO,
            inline_budget: Duration::ZERO,
            executor_budget: Duration::ZERO,
            ..Budgets::default()
        };
        assert!(zero.check().is_empty());
        let unlimited = Budgets {
            size_threshold_bytes: usize::MAX,
            row_threshold: usize::MAX,
            minimal_budget: Duration::MAX,
            inline_budget: Duration::MAX,
            executor_budget: Duration::MAX,
        };
        assert!(unlimited.check().is_empty());
    }

    #[test]
    fn meaningless_breaker_settings_are_refused_naming_the_key_and_the_value() {
        let cases = [
            (
                BreakerConfig {
                    window_calls: 0,
                    ..config()
                },
                "BreakerConfig: key \"window_calls\": 0 would make every call a window of its own \
                 (expected at least 1)",
            ),
            (
                BreakerConfig {
                    window_duration: Duration::ZERO,
                    ..config()
                },
                "BreakerConfig: key \"window_duration\": 0ns would make every call a window of its \
                 own (expected more than 0)",
            ),
            (
                BreakerConfig {
                    windows_to_open: 0,
                    ..config()
                },
                "BreakerConfig: key \"windows_to_open\": 0 would open the breaker after any \
                 window, even one within budget (expected at least 1)",
            ),
            (
                BreakerConfig {
                    cooldown: Duration::ZERO,
                    ..config()
                },
                "BreakerConfig: key \"cooldown\": 0ns would let the next call probe at once, so an \
                 open breaker skips nothing (expected more than 0 and at most 365 days)",
            ),
            (
                BreakerConfig {
                    cooldown: Duration::MAX,
                    ..config()
                },
                "BreakerConfig: key \"cooldown\": 18446744073709551615.999999999s would push the \
                 breaker's reopening past what the clock can be sure to represent (expected more \
                 than 0 and at most 365 days)",
            ),
        ];
        for (breaker, expected) in cases {
            assert_eq!(messages(breaker.check()), [expected]);
        }
    }

    #[test]
    fn the_longest_cooldown_is_allowed_and_every_bad_key_is_reported() {
        let longest = BreakerConfig {
            cooldown: BreakerConfig::MAX_COOLDOWN,
            ..config()
        };
        assert!(longest.check().is_empty());
        let all_bad = BreakerConfig {
            window_calls: 0,
            window_duration: Duration::ZERO,
            windows_to_open: 0,
            cooldown: Duration::ZERO,
        };
        let keys: Vec<&str> = all_bad
            .check()
            .iter()
            .map(|err| match err {
                SettingsError::OutOfRange { key, .. } => *key,
            })
            .collect();
        assert_eq!(
            keys,
            [
                "window_calls",
                "window_duration",
                "windows_to_open",
                "cooldown"
            ]
        );
    }
}
