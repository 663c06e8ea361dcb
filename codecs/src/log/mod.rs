//! `log`: build, test and command output, with the noise folded and every failure kept.
//!
//! Text payloads only (a JSON payload is [`Outcome::Unchanged`]); lossy, so it acts at
//! `normal` and `aggressive` only (at `minimal`: unchanged). The original is in the host's tee
//! store, and every cut says what it removed, with exact counts. The output is always strictly
//! smaller than the input, else the payload is unchanged.
//!
//! # Rules
//!
//! 1. **Cleaning.** ANSI escape sequences are removed and each line's carriage-return redraws
//!    are resolved to the line's final state (its last non-empty `\r`-separated part; a `\r`
//!    before `\n` only ends the line). A redraw never hides a failure: each state the final
//!    one overwrote is matched against the failure rows of the table (and `failure_patterns`)
//!    as a line of its own, and a state that is a failure is kept, verbatim and in order,
//!    before the final state, each followed by `␍` (U+240D, which no terminal acts on):
//!    `progress 50%\rERROR: disk full, write failed\rprogress 100%` is the failure line
//!    `ERROR: disk full, write failed␍progress 100%` (a state equal to the one kept before it,
//!    or to the final state, is kept once). Line breaks are never removed: line *i* stays line
//!    *i*. "Original line" below means a line after cleaning.
//! 2. **Too short, or already compressed.** Fewer than `min_lines` lines, or any line that is
//!    a fold line or a marker of this codec, or looks like one to a reader: unchanged (so
//!    compressing an output again changes nothing, and the codec never writes its markers
//!    beside a forged one: a 300-line log holding `[x4000 lines 1-4000] …` passes as it is).
//!    A lookalike is compared as a reader sees it: whitespace and invisible characters (a
//!    leading space, a zero-width space, a byte order mark) skipped, fullwidth forms, ASCII
//!    case, and the families of brackets (`[`, `［`, `【` …), signs (`×`, `x`, `*`, Cyrillic
//!    `х` …), ellipses (`…`, `...`, `⋯` …), dashes, digits and Latin-looking Cyrillic letters
//!    each read as one; a line that then starts with a bracket, signs or ellipses, a number,
//!    `lines` (optionally `omitted`, punctuation, `lines` again) and a range `A-B` is one,
//!    and so is one with `warnings` (optionally `like this` and punctuation) between the
//!    number and `lines` (the full rule: `fold.rs`, `looks_like_own_line`). An overwritten failure state kept by
//!    cleaning is held to the same rule. Payloads of 4 GiB or more: unchanged.
//! 3. **Classes.** Every line is a *failure*, a *warning*, a *status line* or *noise*, from a
//!    pattern table searched in one pass (see `patterns.rs`: cargo/rustc, pytest and Python
//!    tracebacks, go test/build, jest/npm/node, javac/maven/gradle, make/gcc/clang,
//!    kubectl/docker, generic `ERROR`/`FATAL`/`panic`/`Exception`/`FAIL`/`failed` and non-zero
//!    exit summaries; test runner summaries such as `test result:` count as failures, so they
//!    are always kept). A status line is a unit's summary or progress line that is not a
//!    failure: a warning summary (cargo's `warning: `x` (lib) generated 12 warnings`, rustc's
//!    `warning: 3 warnings emitted`, a count alone, `13 warnings`) or a package that passed
//!    (go test's `ok  \tpkg\t0.2s`); one per crate or package, they add up in a workspace's
//!    build, so they give way to the budget (rule 8).
//!    A matching line may head a block whose lines take its class. A block ends at the first
//!    line that is not a line of the construct it describes; indentation alone never extends
//!    one (a node build's `Error:` and its `at` frames end before the indented
//!    `  compiled src/a.js -> dist/a.js` lines after them):
//!    a compiler diagnostic's `-->`/`|`/`N |`/`^`/`= note`/`help:`/`note:` lines (and clang's
//!    and gcc's source line above its `^~~~` marker, their `file:1:2: note:` lines,
//!    `1 error generated.`); a stack trace's frames after an `Error:`/`Exception` line
//!    (node's and the JVM's `at …`, the JVM's `Caused by:`, `Suppressed:`, `... 12 more`,
//!    node's `Require stack:` list, and the properties node prints after a frame ending in
//!    `{`, through their `}`); a Python traceback's `File "…", line N` lines, each with its
//!    indented source line and `^~~` markers, through the exception line that closes it; a
//!    Rust panic's message, `left:`/`right:`, `note:` and `stack backtrace:` lines and frames;
//!    cargo's `failures:` list of names; a failing Go test's `file_test.go:12: message` lines
//!    (a message's further lines indented under them) and its subtests' `--- FAIL:` lines; a
//!    failing test's section (from
//!    its header to the next section header or summary banner: cargo's `---- t stdout ----`
//!    through its closing `note:` line, pytest's `____ test_x ____` through its
//!    `file.py:12: AssertionError` line, jest's `● Suite › test` through its `at …` lines;
//!    pytest's `FAILURES` section), gradle's `* What went wrong:` paragraph, a goroutine dump
//!    (`goroutine N [running]:`, frames `pkg.f(…)`, their tab-indented `/path/file.go:12 +0x1d`
//!    lines, `created by …`).
//!    A line printed just before a failure to say where it is takes its class: gcc's
//!    `file.c: In function 'f':`, go build's `# example.com/pkg`, node's uncaught-exception
//!    preamble (`file.js:12`, the source line, its `^`). A run that collected nothing or
//!    stopped because of errors is a failure (`collected 0 items / 2 errors`,
//!    `2 errors in 0.09s`, `no tests ran`); go's `[no test files]` is not.
//!    A line in which a tool says it cut its output or saved it elsewhere is a failure too, so
//!    the model learns that what it sees is a part and where the rest is: Claude Code's
//!    `Output too large (458.2KB). Full output saved to: <path>` and its `Preview (first 2KB):`
//!    line, `truncated` in any of its cases (`[output truncated]`, `(truncated)`,
//!    `Output truncated`), `N more lines`, `N lines omitted`, `N chars clipped`.
//!    `failure_patterns` adds plain substrings.
//! 4. **Failure lines are kept verbatim, always, whole** (never clipped, never dropped by the
//!    budget). Each run of failure lines pulls in `context_before` lines before it and
//!    `context_after` after it.
//! 5. **The frame**: the first `head_lines` and the last `tail_lines` lines are kept.
//! 6. **Warnings, once each, with their count.** A warning's first line is a line a warning
//!    row matches itself (not a line of its block). Of each distinct warning (each template of
//!    such lines) the first occurrence is kept verbatim, with its block (rustc's `-->`, `|`,
//!    `= note` lines); when the template has repeats, the line after it is the count
//!    `[×N warnings like this, lines A-B; wm_get_result {"lines":"A-B"}]`: `N` lines of the
//!    original have this template (this one among them), the first being line `A` (this
//!    one) and the last line `B`. The repeats, and the blocks of the repeats, are folded by
//!    template in their regions like every other line.
//! 7. **Folding.** Every line not kept verbatim lies in a *region* (a maximal run of such
//!    lines). Within a region, lines with the same template (variable fields replaced, see
//!    *Placeholders*) fold into one fold line, wherever they are in the region, in the order
//!    of their first line; lines longer than `max_line_bytes` are not templated (omitted).
//!    Passing tests' lines (`test x ... ok`, `--- PASS: x`, `✓ x`, `x PASSED`) share one
//!    template, `<test>` standing for the name.
//! 8. **Budget.** The output is estimated in tokens (see *Budget*). While it is over the
//!    budget, the least informative kept items go first, in this order: head and tail lines
//!    (the innermost first), context lines (the farthest first), fold lines of noise templates
//!    (the smallest counts first, all regions at once), the first and the last line; then the
//!    warnings' repeats (fold lines of warning templates, the smallest counts first), the
//!    blocks of the warnings' first occurrences (the last first); then the status lines (the
//!    last first), and last the first line of each distinct warning with its count (the last
//!    first). Those two go only while what is left of them costs more than the budget alone
//!    (their lines, and between them, for each run of other lines, the cheaper of a marker
//!    and the run written out): so never while an ordinary line, a fold line or another line
//!    of a warning is still kept, and the status lines and warnings kept never take more than
//!    the budget on their own. A summary counts a unit's warnings, which the warnings' counts
//!    do not, so it outlasts their repeats and blocks; a distinct warning says what is wrong,
//!    so it outlasts the summaries. A dropped verbatim line joins its region (a status line
//!    is not templated: dropped, it counts as omitted); a dropped template's lines count as
//!    omitted. Failure lines never go. When what the budget keeps until the noise folds are
//!    gone is already over it, no noise line is templated: the budget would drop every fold
//!    line of theirs all the same (the output is the same byte for byte; a test compares both
//!    ways on every log of the corpus at seven budgets and both levels). Then what costs more
//!    folded than written out is written out: a region whose lines cost no more than its
//!    marker and fold lines (a lone blank line), and a fold line at a region's edge standing
//!    for one line, when the line costs no more or the budget has room for the difference.
//! 9. **Saying why the output is over the budget.** Only the output as written, after rule 8
//!    (its markers at their estimate, the regions written out at their lines'), is held to
//!    the budget, and when it is over, every marker says what kept it there, if it is one of:
//!    the failure lines, when there are some, no layout that keeps them all fits (their lines,
//!    and between them, for each run of other lines, the cheaper of a marker and the run
//!    written out, are over the budget) and the budget dropped a line or a fold line for
//!    them: `; over budget to keep every failure line`; else the lines of the last two tiers
//!    it keeps: `; over budget to keep each distinct warning once` (the distinct warnings'
//!    first lines), `; over budget to keep each summary line` (status lines), `; over budget
//!    to keep each distinct warning and summary line once` (both). Otherwise (what is over is
//!    the markers themselves, or the only lines omitted are too long to keep) the markers say
//!    nothing of the budget: a marker never claims a cut the budget did not make.
//!
//! # Output grammar
//!
//! The output is lines joined by `\n` (ending with `\n` when the input did), each one of:
//!
//! - a **verbatim line**: an original line, exactly;
//! - a **warning count**, right after the verbatim first line of a warning with repeats:
//!   `[×N warnings like this, lines A-B; wm_get_result {"lines":"A-B"}]` (see rule 6); it
//!   stands for no line of its own: the repeats are in their regions;
//! - a **fold line**: `[×N lines A-B] TEMPLATE (FIRST … LAST)`: `N` lines of the region, the
//!   first being line `A` and the last line `B` (1-based, inclusive; `A-B` may hold lines of
//!   other templates too), share `TEMPLATE`; `FIRST` and `LAST` are the first and the last
//!   line's values of the template's first word holding a placeholder. When the `N` lines are
//!   all the same line (exact repeats), or `N` is 1, the fold line is `[×N lines A-B] LINE`
//!   with the original line and no values;
//! - an **omission marker**, closing every region:
//!   `[… O lines omitted, lines A-B: F folded above; 0 failure lines omitted; wm_get_result {"lines":"A-B"}]`
//!   where `A-B` is the whole region, `F` is how many of its lines the fold lines just above
//!   it stand for, and `O` how many of its lines appear nowhere (dropped templates, over-long
//!   lines): `F + O = B - A + 1`. When the output is over the budget, what kept it there
//!   comes before `; wm_get_result …` (rule 9): `; over budget to keep every failure line`,
//!   `; over budget to keep each distinct warning once`, `; over budget to keep each summary
//!   line` or `; over budget to keep each distinct warning and summary line once`.
//!
//! So, walking the output (warning counts aside): verbatim lines and regions follow each other in the original's
//! order and account for every original line exactly once; each region is zero or more fold
//! lines followed by its marker, and every fold line's range lies inside its marker's range.
//! Numbers are plain decimal digits, without thousands separators. A marker ends with the
//! selector that returns exactly its region of the original: `wm_get_result {"lines":"A-B"}`
//! is the host's recovery tool called with the key of the `_tee` pointer the host adds to a
//! lossy result (`{"result": …, "_tee": {"key": …}}`) and `"lines":"A-B"` (the command:
//! `recover KEY --lines A-B`).
//!
//! # Cutting an output to a size
//!
//! [`Log::cut`] cuts an output of this codec to a size the caller gives (the host's
//! `max_result_chars`, for a log whose failure lines alone are over it), keeping whole units
//! only: verbatim lines, and regions with all their fold lines and their marker. The kept
//! lines are followed by one more marker of this family:
//! `[… O lines omitted, lines A-B: cut at max_result_chars, R lines of this result not shown; F failure lines omitted; wm_get_result {"lines":"A-B"}]`,
//! where `A` is the first original line the kept lines do not show, `B` the original's last
//! line, `O = B - A + 1`, `R` the output lines removed and `F` the failure lines among them
//! (exact: the original is classified again, with the entry's `failure_patterns`; the kept
//! failure lines and `F` are all of them). It is a line of this codec's own, so compressing a
//! text that holds it changes nothing.
//!
//! # Placeholders
//!
//! Lines are cut into words at spaces and tabs. A word with an ASCII digit (or a `/` or `\`,
//! or 6+ hex letters and no other letter) loses its wrapping
//! punctuation (`(`, `[`, `"`, `)`, `,`, `:` …, kept as they are) and its core becomes
//! `<uuid>`, `<time>` (a date `2026-11-29…` or clock time `10:08:09…`), `<path>` (a `/` or `\`
//! and a letter), `<dur>` (`12ms`, `1.5s`, `2m30s`), `<ver>` (`v1.2`, `1.2.3`, `1.2.3-rc.1`),
//! `<n>` (`12`, `-3.5`, `1,024`, `99%`) or `<hex>` (`0x1f`, 6+ hex digits), tried in that
//! order; a core `key=value` (a key of letters, digits, `_`, `-` and `.` that starts with a
//! letter or `_`) keeps its key and `=`, and its value is the core tried
//! (`request_id=<uuid>`, `status=<n>`, `took=<dur>`); a core that is none of these keeps its
//! letters and has each digit run replaced by `<n>` (or an 8+ hex-digit run by `<hex>`): `crate_171` → `crate_<n>`. Other words are
//! kept, except a passing test's name, which becomes `<test>`. So a placeholder stands for
//! every value of its kind: `<path>` for `src/app/x.tsx` as for `src/app/x1.tsx`.
//!
//! # Budget
//!
//! The budget is `min(budget_tokens, max(200, budget_ratio × the input's estimate))`, halved
//! at `aggressive`. Tokens are estimated without a tokenizer: a run of ASCII letters costs one
//! token per 6 letters (rounded up), a run of digits one per 3, a run of two or more spaces
//! one (a single space joins the next word), any other ASCII byte one, and non-ASCII text one
//! per 2 bytes of UTF-8. On the corpus's build log and the sample session's builds this is
//! within 10% of o200k, a little above it. A marker is counted as 46 tokens.
//!
//! # Params
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `min_lines` | 20 | fewer lines: unchanged (≥ 1) |
//! | `head_lines`, `tail_lines` | 10, 10 | the frame kept at each end |
//! | `context_before`, `context_after` | 3, 3 | context lines around each run of failure lines |
//! | `budget_tokens` | 600 | the most estimated tokens (≥ 1) |
//! | `budget_ratio` | 0.12 | the budget as a fraction of the input's estimate, in (0, 1] |
//! | `max_line_bytes` | 1000 | longer lines are not kept or templated unless failures (≥ 1) |
//! | `failure_patterns` | `[]` | extra failure substrings (non-empty, one line each) |
//!
//! # Examples
//!
//! ```
//! use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
//!
//! let log: parrot_codecs::Log = parrot_codec_api::build(Params::empty()).unwrap();
//! let mut lines: Vec<String> = (0..40).map(|i| format!("   Compiling crate_{i} v0.1.{i}")).collect();
//! lines[20] = "error[E0308]: mismatched types".to_owned();
//! let input = lines.join("\n");
//! let Outcome::Changed { payload, lossy: true } =
//!     log.compress(Payload::text_only(&input), Level::Normal).unwrap()
//! else {
//!     panic!("a 40-line build log is compressed");
//! };
//! assert!(payload.lines().any(|line| line == "error[E0308]: mismatched types"));
//! assert!(payload.contains("[×"));
//! assert!(payload.contains(" lines omitted, lines "));
//! assert_eq!(log.compress(Payload::text_only(&payload), Level::Normal).unwrap(), Outcome::Unchanged);
//! ```

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};

mod cut;
mod fold;
mod lines;
mod patterns;
mod template;
#[cfg(test)]
mod tests;

pub use cut::Cut;
use patterns::Matcher;

/// The `log` codec: see the [module documentation](self).
#[derive(Debug)]
pub struct Log {
    matcher: Matcher,
    min_lines: usize,
    head_lines: usize,
    tail_lines: usize,
    context_before: usize,
    context_after: usize,
    budget_tokens: usize,
    budget_ratio: f64,
    max_line_bytes: usize,
}

impl Codec for Log {
    const NAME: &'static str = "log";
    const CUT: Option<parrot_codec_api::Cut<Self>> = Some(Self::cut_to_room);

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        let budget_ratio = params.f64("budget_ratio", 0.12)?;
        if !(budget_ratio > 0.0 && budget_ratio <= 1.0) {
            return Err(CodecError::invalid_param(
                "budget_ratio",
                format!("expected a number above 0 and at most 1, got {budget_ratio}"),
            ));
        }
        let extra = failure_patterns(params)?;
        let matcher = Matcher::new(&extra)
            .map_err(|err| CodecError::invalid_param("failure_patterns", err))?;
        Ok(Log {
            matcher,
            min_lines: params.positive("min_lines", 20)?,
            head_lines: params.usize("head_lines", 10)?,
            tail_lines: params.usize("tail_lines", 10)?,
            context_before: params.usize("context_before", 3)?,
            context_after: params.usize("context_after", 3)?,
            budget_tokens: params.positive("budget_tokens", 600)?,
            budget_ratio,
            max_line_bytes: params.positive("max_line_bytes", 1000)?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if payload.is_json() || !level.allows_loss() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        let folded = self
            .fold(input, level == Level::Aggressive)
            .map(|text| crate::Transformed { text, lossy: true });
        Ok(crate::Transformed::outcome(folded, input))
    }
}

/// The first stages of [`Log::compress`] on their own, for the benchmark that measures what
/// they cost (`benches/log.rs`, "the codec's floor"). Not part of the API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The line table and the cleaning of coloured and redrawn lines.
    Lines,
    /// Those, then the pattern scan that finds the failure and warning lines.
    Scan,
}

impl Log {
    /// Runs `text` through the first stages of the codec, up to `stage`, and returns how many
    /// lines it has (with `Scan`: how many the table matched, so nothing is optimised away).
    /// For the benchmark only; not part of the API.
    #[doc(hidden)]
    pub fn run_stages(&self, text: &str, stage: Stage) -> usize {
        if text.len() >= u32::MAX as usize {
            return 0;
        }
        let lines = lines::Lines::new(text, |state| self.matcher.is_failure(state));
        match stage {
            Stage::Lines => lines.len(),
            Stage::Scan => self.matcher.scan(&lines).iter().flatten().count(),
        }
    }
}

/// The `failure_patterns` param: a list of non-empty single-line strings.
fn failure_patterns(params: &mut Params) -> Result<Vec<String>, CodecError> {
    const KEY: &str = "failure_patterns";
    let patterns: Vec<String> = params.list(KEY)?;
    let bad = |message: String| Err(CodecError::invalid_param(KEY, message));
    for (i, text) in patterns.iter().enumerate() {
        if text.is_empty() {
            return bad(format!(
                "item {i} is an empty string, which would match every line"
            ));
        }
        if text.contains(['\n', '\r']) {
            return bad(format!(
                "item {i} ({text:?}) holds a line break; patterns match within one line"
            ));
        }
    }
    Ok(patterns)
}

inventory::submit! { crate::Builtin::of::<Log>() }
