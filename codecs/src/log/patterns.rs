//! The pattern table: which lines signal a failure, a warning, a test-runner summary or a
//! status line (a warning summary, a package that passed), and which lines after them belong
//! to the same block (a diagnostic, a traceback, a stack trace, a failing test's section).
//!
//! The table is data: one row per pattern, matched as a plain, case-sensitive substring (case
//! variants are listed as rows of their own). A line's matches are those of an Aho-Corasick
//! automaton over every row, leftmost-first (so a longer row listed before a shorter one that
//! starts at the same place wins: `panicked at` before `panic`), each kept if it is placed and
//! followed as its row says.
//!
//! Few lines hold a row, so the automaton runs only on the lines that may: one SIMD pass over
//! the payload looks for the rows matched anywhere by a rare piece of each (its *anchor*:
//! `rror:` for `error:` and `Error:`, the row itself for `OOMKilled`), and a look at each
//! line's first bytes finds the rows placed at its start (`failures:`, `Tests:` after the
//! indentation). A row that counts on a line has its anchor or its start there, so a line
//! neither finds has no verdict, and the others get the automaton's, as if it had read the
//! whole payload (no row holds a line break). The tests hold the scan to a plain search, row
//! by row, on the corpus's logs, the benchmark payloads and generated lines.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind, packed};

use super::lines::Lines;

/// How much a line matters; the order is the keep priority (a line takes the highest class of
/// any pattern it matches, or of the block it belongs to).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    /// Everything else: folded into templates, or omitted.
    Noise = 0,
    /// A warning: each distinct one kept once, its repeats folded with a count.
    Warning = 1,
    /// A unit's status line that is not a failure: a warning summary (cargo's `warning: `x`
    /// (lib) generated 12 warnings`, rustc's `warning: 3 warnings emitted`, a count alone,
    /// `13 warnings`) or a progress line that says a unit passed (go test's `ok  \tpkg\t0.2s`).
    /// Kept verbatim while the budget allows, the last of the ordinary lines to go (see the
    /// module documentation).
    Status = 2,
    /// A failure, a line of its block, or a test-runner summary: kept verbatim, always.
    Failure = 3,
}

/// Where in a line a pattern must start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum At {
    /// Anywhere in the line.
    Anywhere,
    /// At the first byte of the line.
    LineStart,
    /// At the first byte after the line's leading spaces and tabs.
    AfterIndent,
    /// After a run of this byte that starts the line (pytest's `____ test_x ____`: the
    /// automaton's leftmost match starts at the last underscores of the run).
    AfterRunOf(u8),
}

/// What must follow a pattern's match for it to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Then {
    /// Anything, or the end of the line.
    Any,
    /// An ASCII digit (`file.go:12`).
    Digit,
    /// A digit from 1 to 9 (`exit code 1`, not `exit code 0`).
    NonZeroDigit,
    /// The line ends with this text (`---- name stdout ----`).
    LineEndsWith(&'static str),
    /// The rest of the line holds this text (`collected 0 items / 2 errors`).
    Holds(&'static str),
    /// A title, then the line ends with the run of `_` it started with: pytest's section
    /// header `____ test_x ____`, not the `_ _ _ _` line between traceback entries.
    Title,
    /// A count alone before the match (after the indentation) and nothing after it but `.`
    /// or ` generated.`: a summary `13 warnings`, not `3 warnings in module x`.
    CountOf,
}

/// Which lines after a matching line belong to its block (and take its class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// The line stands alone.
    None,
    /// A compiler diagnostic's lines: rustc's and gcc's `-->`, `|`, `^`, `= note`, `::: `
    /// lines and gutters (see [`is_diagnostic_line`]); clang's and gcc's source line printed
    /// without a gutter above its `^~~~` marker, their located `file:1:2: note:` lines and the
    /// closing `1 error generated.`. Any other line ends it, so an indented status line
    /// (`   Compiling x`) after an error is not part of it.
    Diagnostic,
    /// A stack trace's frames (see [`is_frame`]): node's and the JVM's `at …` lines, the JVM's
    /// `... 12 more`, `Caused by:` and `Suppressed:`, node's `Require stack:` list; a frame
    /// that opens an object (node's `at … {`) is followed by its properties through the
    /// closing `}` ([`Block::Props`]). Any other line ends it: indentation alone does not.
    Frames,
    /// node's error properties after the last frame (`  code: 'ERR_X',`), through the line
    /// that closes them (`}`); a blank line ends them too.
    Props,
    /// A Python traceback: `  File "…", line N, in f` lines, each with the indented source line
    /// under it ([`Block::TracebackSource`]) and its `^~~~` markers, then the exception line
    /// that closes it (the first other non-blank line).
    Traceback,
    /// A Python traceback just after a `File "…"` line: one indented line is its source line.
    TracebackSource,
    /// A Rust panic's `panicked at …:` line: the message on the next line belongs to it, then
    /// its tail ([`Block::PanicTail`]).
    Panic,
    /// A Rust panic after its message: `  left:`/` right:` lines, `note:` lines, `stack
    /// backtrace:` and its frames (`   3: name`, `at path:12:5`).
    PanicTail,
    /// cargo test's `failures:` list: the failing tests' names, one per line, indented.
    FailureList,
    /// A failing Go test: its `    file_test.go:12: message` lines (with the lines of a
    /// message indented under them, [`Block::GoMessage`]) and its subtests' `--- FAIL:` lines.
    GoTest,
    /// A Go test's message after its `file_test.go:12:` line, indented by this many bytes: the
    /// message's further lines are indented deeper.
    GoMessage(u8),
    /// Every line up to (not including) the next line that starts with one of these texts.
    Until(&'static [&'static str]),
    /// A failing test's section, from its header to the next section header or summary
    /// banner (see [`Section`]).
    Section(Section),
    /// Every line up to (not including) the next blank line: gradle's `* What went wrong:`.
    UntilBlank,
    /// A Go goroutine dump: frames (`pkg.(*T).F(…)`), their tab-indented `file.go:12 +0x1d`
    /// lines, `created by …`. A blank line or any other line ends it.
    Goroutines,
}

/// The kinds of failing-test sections, each with its own end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    /// cargo test's `---- name stdout ----`: up to the next `---- ` header, `failures:` or
    /// `test result:`, or through the `note: ` line that closes a panic's report.
    Cargo,
    /// pytest's `____ test_x ____`: up to the next section header or `===` banner, or through
    /// the `file.py:12: AssertionError` line that closes the test's traceback.
    Pytest,
    /// jest's `● Suite › test`: blank lines and lines indented by 4 or more (the assertion,
    /// `Expected:`, `Received:`, the code frame, the `at …` lines).
    Jest,
}

/// Whether a line belongs to the block being read, whether the block ends with it, and the
/// kind the block goes on as after it (a traceback after a `File` line expects its source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) belongs: bool,
    pub(crate) ends: bool,
    pub(crate) becomes: Option<Block>,
}

impl Block {
    /// What `line`, the next line after the block so far, does to it; `next` is the line
    /// after `line` (a source line belongs to a diagnostic when a caret marker follows it).
    pub(crate) fn step(self, line: &str, next: Option<&str>) -> Step {
        let blank = line.trim().is_empty();
        let (belongs, ends) = match self {
            Block::None => (false, true),
            Block::Diagnostic => {
                let more = is_diagnostic_line(line)
                    || is_marker(line)
                    || located(line).is_some_and(|rest| rest.starts_with("note:"))
                    || is_generated_count(line)
                    || (!blank && located(line).is_none() && next.is_some_and(is_marker));
                (more, !more)
            }
            Block::Frames
            | Block::Props
            | Block::Traceback
            | Block::TracebackSource
            | Block::Panic
            | Block::PanicTail
            | Block::FailureList
            | Block::GoTest
            | Block::GoMessage(_) => return self.step_trace(line, blank),
            Block::Until(stops) => {
                let stop = stops.iter().any(|stop| line.starts_with(stop));
                (!stop, stop)
            }
            Block::Section(Section::Cargo) => {
                const STOPS: [&str; 3] = ["---- ", "failures:", "test result:"];
                if STOPS.iter().any(|stop| line.starts_with(stop)) {
                    (false, true)
                } else {
                    (true, line.starts_with("note: "))
                }
            }
            Block::Section(Section::Pytest) => {
                if is_pytest_header(line) || line.starts_with("===") {
                    (false, true)
                } else {
                    (true, is_pytest_location(line))
                }
            }
            Block::Section(Section::Jest) => {
                let more = blank || line.starts_with("    ") || line.starts_with('\t');
                (more, !more)
            }
            Block::UntilBlank => (!blank, blank),
            Block::Goroutines => {
                let more = !blank
                    && ((line.starts_with('\t') && line.contains(".go:"))
                        || line.starts_with("created by ")
                        || is_go_frame(line));
                (more, !more)
            }
        };
        Step {
            belongs,
            ends,
            becomes: None,
        }
    }

    /// [`Block::step`] for the blocks of a stack trace, a traceback, a panic or a failing
    /// test's messages: each line of its construct belongs, and the first other line ends it.
    fn step_trace(self, line: &str, blank: bool) -> Step {
        let (belongs, ends) = match self {
            // A frame that opens an object (node's `at … {`): its properties follow.
            Block::Frames if is_frame(line) && line.ends_with('{') => {
                return Step::to(Block::Props);
            }
            Block::Frames => {
                let more = is_frame(line);
                (more, !more)
            }
            Block::Props => (!blank, blank || line.trim() == "}"),
            Block::Traceback | Block::TracebackSource => {
                let body = line.trim_start_matches([' ', '\t']);
                if body.starts_with("File \"") {
                    return Step::to(Block::TracebackSource);
                }
                let indented = body.len() < line.len();
                if is_marker(line)
                    || body.starts_with("[Previous line repeated ")
                    || (self == Block::TracebackSource && indented && !blank)
                {
                    return Step::to(Block::Traceback);
                }
                (!blank, true)
            }
            Block::Panic => {
                if blank {
                    (false, true)
                } else {
                    return Step::to(Block::PanicTail);
                }
            }
            Block::PanicTail => {
                let more = is_panic_tail(line);
                (more, !more)
            }
            Block::FailureList => {
                let name = line.strip_prefix("    ").unwrap_or("");
                let more = !name.is_empty() && !name.contains([' ', '\t']);
                (more, !more)
            }
            Block::GoTest | Block::GoMessage(_) => {
                let body = line.trim_start_matches(' ');
                let indent = line.len() - body.len();
                if let Block::GoMessage(under) = self
                    && indent > usize::from(under)
                    && !blank
                {
                    return Step::to(self);
                }
                if is_go_location(body) {
                    return Step::to(Block::GoMessage(indent.min(255) as u8));
                }
                let more = indent > 0
                    && ["--- FAIL:", "--- PASS:", "--- SKIP:"]
                        .iter()
                        .any(|start| body.starts_with(start));
                if more {
                    return Step::to(Block::GoTest);
                }
                (false, true)
            }
            _ => (false, true),
        };
        Step {
            belongs,
            ends,
            becomes: None,
        }
    }
}

impl Step {
    /// The line belongs, and the block goes on as `kind`.
    fn to(kind: Block) -> Step {
        Step {
            belongs: true,
            ends: false,
            becomes: Some(kind),
        }
    }
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pattern {
    pub(crate) text: &'static str,
    pub(crate) at: At,
    pub(crate) then: Then,
    pub(crate) class: Class,
    pub(crate) block: Block,
}

const fn row(text: &'static str, at: At, then: Then, class: Class, block: Block) -> Pattern {
    Pattern {
        text,
        at,
        then,
        class,
        block,
    }
}

/// A failure anywhere in the line, standing alone.
const fn fail(text: &'static str) -> Pattern {
    row(text, At::Anywhere, Then::Any, Class::Failure, Block::None)
}

/// A failure anywhere in the line that heads a block.
const fn fail_block(text: &'static str, block: Block) -> Pattern {
    row(text, At::Anywhere, Then::Any, Class::Failure, block)
}

/// A failure at the start of the line (after its indentation).
const fn fail_start(text: &'static str, block: Block) -> Pattern {
    row(text, At::AfterIndent, Then::Any, Class::Failure, block)
}

/// A warning anywhere in the line that heads a diagnostic.
const fn warn(text: &'static str) -> Pattern {
    row(
        text,
        At::Anywhere,
        Then::Any,
        Class::Warning,
        Block::Diagnostic,
    )
}

/// A unit's status line (see [`Class::Status`]): the text anywhere in the line, standing
/// alone.
const fn status(text: &'static str) -> Pattern {
    row(text, At::Anywhere, Then::Any, Class::Status, Block::None)
}

/// A test-runner summary at the start of the line: kept verbatim, like a failure.
const fn summary(text: &'static str) -> Pattern {
    row(
        text,
        At::AfterIndent,
        Then::Any,
        Class::Failure,
        Block::None,
    )
}

/// The built-in table. Longer rows come before the shorter rows they contain.
pub(crate) const TABLE: &[Pattern] = &[
    // cargo and rustc: diagnostics with their `-->`, `|` and `^^^` lines, failing tests'
    // sections, panics, the summary.
    fail_block("error[E", Block::Diagnostic),
    fail_block("error:", Block::Diagnostic),
    row(
        "---- ",
        At::LineStart,
        Then::LineEndsWith(" ----"),
        Class::Failure,
        Block::Section(Section::Cargo),
    ),
    row(
        "failures:",
        At::LineStart,
        Then::Any,
        Class::Failure,
        Block::FailureList,
    ),
    fail_block("panicked at", Block::Panic),
    summary("test result:"),
    // pytest and Python tracebacks.
    fail_start("Traceback (most recent call last):", Block::Traceback),
    fail_block("= FAILURES =", Block::Until(&["==="])),
    fail_block("= ERRORS =", Block::Until(&["==="])),
    fail_block("short test summary", Block::Until(&["==="])),
    row(
        "_ ",
        At::AfterRunOf(b'_'),
        Then::Title,
        Class::Failure,
        Block::Section(Section::Pytest),
    ),
    // A run that collected nothing, or stopped, because of errors is a failure, not "no
    // tests": `collected 0 items / 2 errors`, `=== 2 errors in 0.09s ===`.
    row(
        "collected ",
        At::Anywhere,
        Then::Holds(" error"),
        Class::Failure,
        Block::None,
    ),
    fail(" errors in "),
    fail(" error in "),
    fail("during collection"),
    fail("no tests ran"),
    row(
        "E   ",
        At::LineStart,
        Then::Any,
        Class::Failure,
        Block::None,
    ),
    fail(" passed in "),
    fail(" passed, "),
    // go test and go build.
    fail_start("--- FAIL:", Block::GoTest),
    row(
        "goroutine ",
        At::LineStart,
        Then::Digit,
        Class::Failure,
        Block::Goroutines,
    ),
    row(
        ".go:",
        At::Anywhere,
        Then::Digit,
        Class::Failure,
        Block::None,
    ),
    // A package that passed: a progress line, which gives way to the budget.
    row(
        "ok  \t",
        At::LineStart,
        Then::Any,
        Class::Status,
        Block::None,
    ),
    // jest, npm, node.
    // A failing test's `✕` line stands alone: the lines after it are the suite's other
    // tests; its details come later, in its `●` section.
    fail_start("\u{2715}", Block::None),
    fail_start("\u{25cf} ", Block::Section(Section::Jest)),
    fail_start("npm ERR!", Block::None),
    fail_start("npm error", Block::None),
    summary("Tests:"),
    summary("Test Suites:"),
    row(
        "No tests found, exiting with code ",
        At::AfterIndent,
        Then::NonZeroDigit,
        Class::Failure,
        Block::None,
    ),
    // javac, maven, gradle.
    fail_block("Exception in thread", Block::Frames),
    fail_start("Caused by:", Block::Frames),
    row(
        "* What went wrong:",
        At::LineStart,
        Then::Any,
        Class::Failure,
        Block::UntilBlank,
    ),
    summary("Tests run:"),
    // make, gcc, clang, the linker.
    row(
        "] Error ",
        At::Anywhere,
        Then::Digit,
        Class::Failure,
        Block::None,
    ),
    fail("make: ***"),
    fail("undefined reference"),
    fail("ld returned"),
    fail("Segmentation fault"),
    fail("core dumped"),
    // kubectl and docker.
    fail("Error from server"),
    fail("CrashLoopBackOff"),
    fail("ImagePullBackOff"),
    fail("ErrImagePull"),
    fail("OOMKilled"),
    fail("failed to solve"),
    // Non-zero exits.
    row(
        "exit code ",
        At::Anywhere,
        Then::NonZeroDigit,
        Class::Failure,
        Block::None,
    ),
    row(
        "exited with code ",
        At::Anywhere,
        Then::NonZeroDigit,
        Class::Failure,
        Block::None,
    ),
    row(
        "exit status ",
        At::Anywhere,
        Then::NonZeroDigit,
        Class::Failure,
        Block::None,
    ),
    fail("non-zero exit"),
    // A tool saying it cut its output, or saved it elsewhere: without the line the model
    // takes a preview for the whole, and loses where the rest is. Claude Code's
    // `Output too large (458.2KB). Full output saved to: <path>` and the `Preview (first
    // 2KB):` line after it; `[output truncated]`, `(truncated)`, `… 120 more lines`,
    // `... 40 lines omitted ...`, `[… 1234 chars clipped …]`.
    fail("Output too large"),
    fail("output saved to"),
    row(
        "Preview (first ",
        At::AfterIndent,
        Then::Any,
        Class::Failure,
        Block::None,
    ),
    fail("truncated"),
    fail("Truncated"),
    fail("TRUNCATED"),
    fail(" more lines"),
    fail(" lines omitted"),
    fail(" chars clipped"),
    // Generic levels and words; `Error:` also ends `TypeError:`, `ValueError:`.
    fail_block("Error:", Block::Frames),
    fail_block("Exception", Block::Frames),
    fail("ERROR"),
    fail("FATAL"),
    fail("Fatal"),
    fail("CRITICAL"),
    fail("panic"),
    fail("Panic"),
    fail("PANIC"),
    fail("FAIL"),
    fail("failed"),
    fail("Failed"),
    // Warning summaries, kept while the budget allows (one per crate in a workspace's build
    // adds up): cargo's `warning: `x` (lib) generated 12 warnings`, rustc's `warning: 3
    // warnings emitted`, a count alone (`13 warnings`).
    row(
        ") generated ",
        At::Anywhere,
        Then::Digit,
        Class::Status,
        Block::None,
    ),
    status("warnings emitted"),
    status("warning emitted"),
    row(
        "warnings",
        At::Anywhere,
        Then::CountOf,
        Class::Status,
        Block::None,
    ),
    // Warnings.
    warn("warning:"),
    warn("Warning:"),
    warn("WARN"),
];

/// The compiled table: the built-in rows, then the params' extra failure substrings (each
/// matched anywhere in a line, standing alone).
///
/// Few lines hold a row, so the whole table is searched only on the lines that may hold
/// one, found by two cheap tests that never miss a line where a row matches:
///
/// - the rows matched anywhere ([`At::Anywhere`]) by their *anchors*, each a piece of its
///   row that starts at a rare fingerprint ([`PIECES`], else the row itself), searched in one
///   SIMD pass over the text;
/// - the rows placed at the line's start (every other [`At`]) by a look at the line's first
///   bytes, after its indentation.
///
/// A line with a match that counts holds that row, so its anchor or its start: the lines
/// neither test marks have no hit, and the marked ones are searched with every row as before.
///
/// A codec without extra rows shares [`BUILT_IN`], built on the first scan that needs it.
pub(crate) enum Matcher {
    /// The built-in table alone: [`BUILT_IN`].
    Table,
    /// The table and the entry's `failure_patterns`, compiled when the codec is built (so a
    /// pattern set too large to compile is the entry's error).
    Extended(Box<Compiled>),
}

/// A [`Matcher`]'s automaton, searcher and tables.
pub(crate) struct Compiled {
    /// Every row, leftmost-first, run on the marked lines.
    automaton: AhoCorasick,
    /// The anchors of the rows matched anywhere that are [`ANCHOR`] bytes or longer.
    anchors: Searcher,
    /// The rows matched anywhere shorter than that (only extra rows can be).
    short: Vec<memchr::memmem::Finder<'static>>,
    /// The rows placed at the line's start (where, and the row's text), by the byte a line
    /// holding one starts with (after its indentation, for [`At::AfterIndent`]).
    placed: Vec<Vec<Placed>>,
}

/// A row placed at the line's start.
#[derive(Clone, Copy)]
struct Placed {
    at: At,
    text: &'static str,
    /// The row's first 8 bytes, read as [`head`] reads a line's: most lines differ from the
    /// row there, and are told apart by one comparison.
    head: u64,
    /// The bits of `head` the row's text fills.
    mask: u64,
}

impl Placed {
    fn new(at: At, text: &'static str) -> Placed {
        let filled = text.len().min(8);
        Placed {
            at,
            text,
            head: head(text.as_bytes()),
            mask: head(&[0xff; 8][..filled]),
        }
    }

    /// Whether `line` (whose [`head`] is `line_head`) starts with the row.
    fn starts(&self, line: &[u8], line_head: u64) -> bool {
        line_head & self.mask == self.head && line.starts_with(self.text.as_bytes())
    }
}

/// The first 8 bytes of `bytes` as a number, zero past its end.
fn head(bytes: &[u8]) -> u64 {
    if let Some(word) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*word);
    }
    let mut word = [0u8; 8];
    let filled = bytes.len().min(8);
    word[..filled].copy_from_slice(&bytes[..filled]);
    u64::from_le_bytes(word)
}

/// The built-in table's matcher, built on the first scan that needs it and shared by every
/// `log` codec without extra rows. Building it costs the automaton over every row (about
/// 1.5 ms to compile) and the SIMD searcher of the anchors with the placed rows (0.25 M
/// instructions, a sixth of the command's start-up), and a host builds the `log` codec for
/// every entry that may route to it (`auto` among them) whether or not a log ever comes: the
/// command paid them on every start. The table is constant; the unit test
/// `built_in_table_compiles` builds it.
static BUILT_IN: LazyLock<Compiled> = LazyLock::new(|| {
    Compiled::new(&[]).expect("the built-in table compiles: see the test built_in_table_compiles")
});

/// A leftmost-first automaton over `texts`.
///
/// # Errors
///
/// The automaton's error when the patterns are too many or too long to compile.
fn leftmost(texts: &[&str]) -> Result<AhoCorasick, String> {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(texts)
        .map_err(|err| err.to_string())
}

/// How the anchors are searched: packed (SIMD) when the CPU has it, which is several times
/// faster than the automaton.
enum Searcher {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::Table => f.write_str("Matcher::Table"),
            Matcher::Extended(compiled) => f
                .debug_struct("Matcher::Extended")
                .field("rows", &compiled.automaton.patterns_len())
                .finish(),
        }
    }
}

/// The SIMD search compares each position with the anchors' first `ANCHOR` bytes (its
/// fingerprints; fewer when an anchor is shorter, which would make it try nearly every
/// position): rows matched anywhere shorter than this are searched on their own.
const ANCHOR: usize = 4;

/// Rare pieces of the rows matched anywhere, in the order they are tried: a row's anchor is
/// the row from the first of these it holds (`rror:` for `error:`, `Error:`, `] Error `…;
/// `exit` for `non-zero exit`), else the whole row. Rows whose fingerprints differ only in
/// case (`fail`, `FAIL`) share the search's bucket and cost about one fingerprint; so do rows
/// that share a piece, while a common start (`] E`, ` err`, `non-`) would be tried often.
const PIECES: &[&str] = &["rror", "RROR", "FAIL", "exit", "Imag", "collect"];

/// The extra rows' shape: a failure anywhere, standing alone.
const EXTRA: Pattern = fail("");

/// What the table says about one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) class: Class,
    pub(crate) block: Block,
}

/// The anchor of `text`, a row matched anywhere: see [`PIECES`].
fn anchor(text: &str) -> &str {
    PIECES
        .iter()
        .find_map(|piece| text.find(piece))
        .map_or(text, |at| &text[at..])
}

/// The low half of each of an anchor's first bytes: anchors alike in these share a bucket of
/// the SIMD search (as case variants do).
fn low_nibbles(anchor: &str) -> Vec<u8> {
    anchor.bytes().take(ANCHOR).map(|b| b & 0x0f).collect()
}

impl Matcher {
    /// The built-in table plus `extra` failure substrings: the shared built-in matcher when
    /// there are none (nothing is compiled here), else one compiled now.
    ///
    /// # Errors
    ///
    /// The automaton's error when the patterns are too many or too long to compile.
    pub(crate) fn new(extra: &[String]) -> Result<Matcher, String> {
        if extra.is_empty() {
            Ok(Matcher::Table)
        } else {
            Compiled::new(extra).map(|compiled| Matcher::Extended(Box::new(compiled)))
        }
    }

    /// The table's verdict on every line of `lines`: `None` where no row matches
    /// ([`Compiled::scan`]).
    pub(crate) fn scan(&self, lines: &Lines<'_>) -> Vec<Option<Hit>> {
        self.compiled().scan(lines)
    }

    /// Whether a row of the table (or an extra pattern) makes `line` a failure on its own, as
    /// [`Matcher::scan`] would find it on a line of that text (blocks aside): used on the
    /// states of a carriage-return redraw that the final state overwrites.
    pub(crate) fn is_failure(&self, line: &str) -> bool {
        self.compiled().automaton.find_iter(line).any(|m| {
            let row = TABLE.get(m.pattern().as_usize()).unwrap_or(&EXTRA);
            row.class == Class::Failure && counts(row, line, m.start(), m.end(), 0, line.len())
        })
    }

    fn compiled(&self) -> &Compiled {
        match self {
            Matcher::Table => &BUILT_IN,
            Matcher::Extended(compiled) => compiled,
        }
    }
}

impl Compiled {
    /// The built-in table plus `extra` failure substrings, compiled.
    ///
    /// # Errors
    ///
    /// The automaton's error when the patterns are too many or too long to compile.
    fn new(extra: &[String]) -> Result<Compiled, String> {
        let texts: Vec<&str> = TABLE
            .iter()
            .map(|row| row.text)
            .chain(extra.iter().map(String::as_str))
            .collect();
        let automaton = leftmost(&texts)?;
        let mut anchors: Vec<&str> = Vec::new();
        let mut short = Vec::new();
        let mut placed = vec![Vec::new(); 256];
        for row in TABLE {
            match row.at {
                At::Anywhere if row.text.len() < ANCHOR => {
                    short.push(memchr::memmem::Finder::new(row.text.as_bytes()).into_owned());
                }
                At::Anywhere => anchors.push(anchor(row.text)),
                At::LineStart | At::AfterIndent => {
                    placed[usize::from(row.text.as_bytes()[0])].push(Placed::new(row.at, row.text));
                }
                At::AfterRunOf(byte) => {
                    placed[usize::from(byte)].push(Placed::new(row.at, row.text));
                    if row.text.as_bytes()[0] != byte {
                        placed[usize::from(row.text.as_bytes()[0])]
                            .push(Placed::new(row.at, row.text));
                    }
                }
            }
        }
        for text in extra {
            if text.len() < ANCHOR {
                short.push(memchr::memmem::Finder::new(text.as_bytes()).into_owned());
            } else {
                anchors.push(anchor(text));
            }
        }
        anchors.sort_unstable();
        anchors.dedup();
        // The search gives the anchors buckets in turn, and an anchor alike (in
        // `low_nibbles`) to one before it that one's bucket: so one anchor of each kind
        // first, each kind then in a bucket of its own while there are buckets enough.
        let mut kinds = std::collections::HashSet::new();
        let (leaders, rest): (Vec<&str>, Vec<&str>) = anchors
            .iter()
            .partition(|anchor| kinds.insert(low_nibbles(anchor)));
        let anchors: Vec<&str> = leaders.into_iter().chain(rest).collect();
        let packed = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .heuristic_pattern_limits(false)
            .builder()
            .extend(&anchors)
            .build();
        let anchors = match packed {
            Some(packed) => Searcher::Packed(packed),
            None => Searcher::Automaton(leftmost(&anchors)?),
        };
        Ok(Compiled {
            automaton,
            anchors,
            short,
            placed,
        })
    }

    /// The table's verdict on every line of `text` whose line starts are `starts` (line `i` is
    /// `text[starts[i]..ends[i]]`): `None` where no row matches.
    pub(crate) fn scan(&self, lines: &Lines<'_>) -> Vec<Option<Hit>> {
        let text = lines.text();
        let (starts, ends) = lines.bounds();
        let bytes = text.as_bytes();
        let mut marked = vec![false; starts.len()];
        // The payload is searched as it is, but a line that cleaning changes counts only by its
        // cleaned text, searched apart (all of them at once).
        self.mark(bytes, starts, ends, |line| {
            marked[line] |= !lines.changed(line)
        });
        let (cleaned, clean_starts, clean_ends, changed) = lines.changed_lines();
        self.mark(cleaned.as_bytes(), clean_starts, clean_ends, |k| {
            marked[changed[k] as usize] = true;
        });
        let mut hits: Vec<Option<Hit>> = vec![None; starts.len()];
        let automaton = &self.automaton;
        for (i, hit) in hits.iter_mut().enumerate() {
            let line = lines.get(i);
            if !marked[i] && !self.may_place(line.as_bytes()) {
                continue;
            }
            for m in automaton.find_iter(line) {
                let row = TABLE.get(m.pattern().as_usize()).unwrap_or(&EXTRA);
                if counts(row, line, m.start(), m.end(), 0, line.len()) {
                    merge(hit, row);
                }
            }
        }
        hits
    }

    /// Calls `mark` with each line of `bytes` (lines `starts[i]..ends[i]`, each followed by a
    /// line break) that holds an anchor or a short row: at the first anchor of a line the
    /// search goes on at the next line (no row holds a line break, so neither does an anchor).
    fn mark(&self, bytes: &[u8], starts: &[u32], ends: &[u32], mut mark: impl FnMut(usize)) {
        let mut line = 0usize;
        let mut from = 0usize;
        while from < bytes.len() {
            let Some(at) = self.find_anchor(bytes, from) else {
                break;
            };
            while line + 1 < starts.len() && starts[line + 1] as usize <= at {
                line += 1;
            }
            mark(line);
            from = ends[line] as usize + 1;
        }
        for finder in &self.short {
            for at in finder.find_iter(bytes) {
                mark(starts.partition_point(|&start| start as usize <= at) - 1);
            }
        }
    }

    /// Where the first anchor in `bytes[from..]` starts.
    fn find_anchor(&self, bytes: &[u8], from: usize) -> Option<usize> {
        match &self.anchors {
            Searcher::Packed(packed) => packed
                .find_in(bytes, aho_corasick::Span::from(from..bytes.len()))
                .map(|m| m.start()),
            Searcher::Automaton(automaton) => automaton
                .find(aho_corasick::Input::new(bytes).span(from..bytes.len()))
                .map(|m| m.start()),
        }
    }

    /// Whether `line` may hold a placed row where it counts: it starts (after its
    /// indentation, for [`At::AfterIndent`]) with the row, or with the run before it.
    fn may_place(&self, line: &[u8]) -> bool {
        let Some(&lead) = line.first() else {
            return false;
        };
        let rows = &self.placed[usize::from(lead)];
        if !rows.is_empty() {
            let line_head = head(line);
            let at_start = rows.iter().any(|row| match row.at {
                At::AfterRunOf(byte) => lead == byte || row.starts(line, line_head),
                _ => row.starts(line, line_head),
            });
            if at_start {
                return true;
            }
        }
        if lead != b' ' && lead != b'\t' {
            return false;
        }
        let Some(indent) = line.iter().position(|&b| b != b' ' && b != b'\t') else {
            return false;
        };
        let body = &line[indent..];
        let rows = &self.placed[usize::from(body[0])];
        if rows.is_empty() {
            return false;
        }
        let body_head = head(body);
        rows.iter()
            .any(|row| row.at == At::AfterIndent && row.starts(body, body_head))
    }
}

/// Whether the match of `row` at `at..found_end` in `text`, on the line `start..end`, counts:
/// it is placed as the row says, and followed as it says.
fn counts(
    row: &Pattern,
    text: &str,
    at: usize,
    found_end: usize,
    start: usize,
    end: usize,
) -> bool {
    let bytes = text.as_bytes();
    let placed = match row.at {
        At::Anywhere => true,
        At::LineStart => at == start,
        At::AfterIndent => bytes[start..at].iter().all(|&b| b == b' ' || b == b'\t'),
        At::AfterRunOf(byte) => bytes[start..at].iter().all(|&b| b == byte),
    };
    let followed = match row.then {
        Then::Any => true,
        Then::Digit => bytes.get(found_end).is_some_and(u8::is_ascii_digit),
        Then::NonZeroDigit => bytes
            .get(found_end)
            .is_some_and(|b| (b'1'..=b'9').contains(b)),
        Then::LineEndsWith(tail) => found_end <= end && text[found_end..end].ends_with(tail),
        Then::Holds(part) => found_end <= end && text[found_end..end].contains(part),
        Then::Title => found_end <= end && is_pytest_header(&text[start..end]),
        Then::CountOf => {
            let count = text[start..at].trim_start_matches([' ', '\t']);
            let digits = count.bytes().take_while(u8::is_ascii_digit).count();
            let rest = if found_end <= end {
                &text[found_end..end]
            } else {
                ""
            };
            digits > 0 && &count[digits..] == " " && matches!(rest, "" | "." | " generated.")
        }
    };
    placed && followed
}

/// Adds a counting match of `row` to its line's verdict: the highest class wins; at the same
/// class, the first match that heads a block gives the block.
fn merge(hit: &mut Option<Hit>, row: &Pattern) {
    match hit {
        Some(seen) if seen.class > row.class => {}
        Some(seen) if seen.class == row.class => {
            if seen.block == Block::None {
                seen.block = row.block;
            }
        }
        _ => {
            *hit = Some(Hit {
                class: row.class,
                block: row.block,
            })
        }
    }
}

/// Whether `line` is a frame of a stack trace, after its indentation: node's and the JVM's
/// `at …`, the JVM's `... 12 more`, `Caused by: …` and `Suppressed: …`, node's `Require
/// stack:` and the `- /path/file.js` lines under it.
pub(crate) fn is_frame(line: &str) -> bool {
    let body = line.trim_start_matches([' ', '\t']);
    if body.starts_with("at ") && body.len() > 3 {
        return true;
    }
    if let Some(rest) = body.strip_prefix("... ") {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        return digits > 0 && rest[digits..].starts_with(" more");
    }
    const STARTS: [&str; 4] = ["Caused by:", "Suppressed:", "Require stack:", "- /"];
    STARTS.iter().any(|start| body.starts_with(start))
}

/// Whether `line` is part of a Rust panic's report after its message: `  left: 1` and
/// ` right: 2` (`assert_eq!`), `note: …`, `stack backtrace:`, a backtrace frame (`  12: name`)
/// or its location (`at /path/file.rs:12:5`).
fn is_panic_tail(line: &str) -> bool {
    let body = line.trim_start_matches(' ');
    const STARTS: [&str; 5] = ["left:", "right:", "note: ", "stack backtrace:", "at "];
    if STARTS.iter().any(|start| body.starts_with(start)) {
        return true;
    }
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && body.len() < line.len() && body[digits..].starts_with(": ")
}

/// Whether `body` (a line after its indentation) is a Go test's location and message,
/// `file_test.go:12: message`.
fn is_go_location(body: &str) -> bool {
    let Some((file, rest)) = body.split_once(".go:") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    !file.is_empty() && !file.contains([' ', '\t']) && digits > 0 && rest[digits..].starts_with(':')
}

/// Whether `line` is part of a compiler diagnostic: after its indentation, `-->`, `|`, `^`,
/// `= `, `::: `, `...`, `note:`, `help:`, or a source line under a gutter (`12 |`).
pub(crate) fn is_diagnostic_line(line: &str) -> bool {
    let line = line.trim_start_matches([' ', '\t']);
    const STARTS: [&str; 8] = ["-->", "|", "^", "= ", "::: ", "...", "note:", "help:"];
    if STARTS.iter().any(|start| line.starts_with(start)) {
        return true;
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && line[digits..].trim_start_matches(' ').starts_with('|')
}

/// Whether `line` is a pytest section header: `____ test_x ____`, a title between two runs
/// of `_` (not the `_ _ _ _` line between the entries of one traceback).
pub(crate) fn is_pytest_header(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('_') else {
        return false;
    };
    let title = rest.trim_matches('_');
    title.len() > 2
        && line.ends_with('_')
        && title.starts_with(' ')
        && title.ends_with(' ')
        && title.bytes().any(|b| b != b'_' && b != b' ')
}

/// Whether `line` closes a pytest traceback: the location of the failure and its exception,
/// `tests/test_x.py:12: AssertionError` (not an entry's `file.py:3: in <module>`).
fn is_pytest_location(line: &str) -> bool {
    located(line).is_some_and(|rest| !rest.is_empty() && !rest.starts_with("in "))
}

/// The text after a `file:12: ` or `file:12:3: ` location that starts the line (as compilers
/// and pytest print them), if the line starts with one.
pub(crate) fn located(line: &str) -> Option<&str> {
    let (place, rest) = line.split_once(": ")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (file, number) = place.rsplit_once(':')?;
    if !digits(number) {
        return None;
    }
    let file = match file.rsplit_once(':') {
        Some((file, number)) if digits(number) => file,
        _ => file,
    };
    (!file.is_empty() && !file.contains([' ', '\t'])).then_some(rest)
}

/// Whether `line` is a caret marker under a source line: `^`, `^~~~~`, `~~~ ^ ~~~`, after
/// its indentation.
pub(crate) fn is_marker(line: &str) -> bool {
    let marker = line.trim();
    marker.starts_with(['^', '~']) && marker.bytes().all(|b| matches!(b, b'^' | b'~' | b' '))
}

/// clang's closing count: `1 error generated.`, `2 warnings and 1 error generated.`.
fn is_generated_count(line: &str) -> bool {
    line.starts_with(|c: char| c.is_ascii_digit()) && line.ends_with(" generated.")
}

/// A frame of a Go goroutine dump: `pkg.(*T).Method(0xc000…)`, `main.main()`.
fn is_go_frame(line: &str) -> bool {
    match line.split_once('(') {
        Some((name, _)) => !name.is_empty() && !name.contains([' ', '\t']) && line.ends_with(')'),
        None => false,
    }
}

/// Whether `line` is printed just before a diagnostic to say where it is: gcc's
/// `file.c: In function 'f':` (and `In member function`, `At top level:`), the
/// `In file included from a.h:3,` chain, go build's `# example.com/pkg`.
fn is_preamble(line: &str) -> bool {
    if let Some(package) = line.strip_prefix("# ") {
        return !package.is_empty() && !package.contains([' ', '\t']);
    }
    let trimmed = line.trim_start();
    let chain = line.starts_with("In file included from ")
        || (trimmed.len() < line.len() && trimmed.starts_with("from "));
    if chain {
        return line.ends_with(',') || line.ends_with(':');
    }
    line.ends_with(':') && (line.contains(": In ") || line.contains(": At top level:"))
}

/// node's uncaught-exception location line: `/app/dist/index.js:28343`.
fn is_node_location(line: &str) -> bool {
    match line.rsplit_once(':') {
        Some((file, number)) => {
            !file.is_empty()
                && !line.contains([' ', '\t'])
                && file.contains('.')
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// Gives the lines printed just before a failure to say where it is the failure's class:
/// a compiler's preamble (see [`is_preamble`]) takes the class of the diagnostic under it, and
/// node's uncaught-exception preamble (the location `file.js:12`, the source line, its `^`
/// marker, a blank line, then `Error: …`) the class of the error. `line(i)` is line `i`.
pub(crate) fn preambles<'t>(line: impl Fn(usize) -> &'t str, class: &mut [Class]) {
    let n = class.len();
    for i in (0..n.saturating_sub(1)).rev() {
        let below = class[i + 1];
        if below > class[i] && below >= Class::Warning && is_preamble(line(i)) {
            class[i] = below;
            continue;
        }
        // The array lookups first: the text is read only before an error.
        let error_below = match (class.get(i + 3), class.get(i + 4)) {
            (Some(Class::Failure), _) => !line(i + 3).trim().is_empty(),
            (_, Some(Class::Failure)) => line(i + 3).trim().is_empty(),
            _ => false,
        };
        if error_below
            && class[i] != Class::Failure
            && is_marker(line(i + 2))
            && is_node_location(line(i))
        {
            class[i..i + 3].fill(Class::Failure);
        }
    }
}

#[cfg(test)]
mod tests {
    // The benchmark payload (`log_payload`), shared with the benchmarks.
    use super::*;
    use parrot_bench_corpus as corpus;

    /// The verdicts the table gives, found the plain way: on each line, from its start, the
    /// leftmost place where a row starts (the first row listed, where several do), then on
    /// after that match; each match that counts merged into the line's verdict.
    fn reference(extra: &[String], text: &str) -> Vec<Option<Hit>> {
        let rows: Vec<(&Pattern, &str)> = TABLE
            .iter()
            .map(|row| (row, row.text))
            .chain(extra.iter().map(|text| (&EXTRA, text.as_str())))
            .collect();
        let mut verdicts = Vec::new();
        let mut start = 0;
        for line in text.split_terminator('\n') {
            let end = start + line.len();
            let mut hit = None;
            let mut from = 0;
            loop {
                let found = rows
                    .iter()
                    .filter_map(|&(row, piece)| line[from..].find(piece).map(|at| (at, row, piece)))
                    .min_by_key(|&(at, ..)| at);
                let Some((at, row, piece)) = found else {
                    break;
                };
                let at = start + from + at;
                if counts(row, text, at, at + piece.len(), start, end) {
                    merge(&mut hit, row);
                }
                from = at - start + piece.len();
            }
            verdicts.push(hit);
            start = end + 1;
        }
        verdicts
    }

    /// Asserts that the scan of `raw` (each line cleaned on its own, the payload never copied)
    /// gives the reference's verdicts on the cleaned text, line by line.
    fn assert_same(name: &str, extra: &[String], raw: &str) {
        let matcher = Matcher::new(extra).unwrap();
        let lines = Lines::new(raw, |state| matcher.is_failure(state));
        let found = matcher.scan(&lines);
        let text = super::super::template::clean(raw, |state| matcher.is_failure(state));
        let expected = reference(extra, &text);
        assert_eq!(found.len(), expected.len(), "{name}: line count");
        for (i, (found, expected)) in found.iter().zip(&expected).enumerate() {
            let line = lines.get(i);
            assert_eq!(
                found,
                expected,
                "{name}, extra {extra:?}, line {}: {line:?}",
                i + 1
            );
        }
    }

    fn extras() -> Vec<Vec<String>> {
        let list = |items: &[&str]| items.iter().map(|item| item.to_string()).collect();
        vec![
            Vec::new(),
            list(&["request_id=", "zz"]),
            list(&["a", "\u{e9}", "ok", "Error", "rror", "panicked at the"]),
        ]
    }

    #[test]
    fn built_in_table_compiles() {
        let built_in = Compiled::new(&[]).unwrap();
        assert_eq!(built_in.automaton.patterns_len(), TABLE.len());
        assert_eq!(BUILT_IN.automaton.patterns_len(), TABLE.len());
        assert!(matches!(Matcher::new(&[]).unwrap(), Matcher::Table));
        let extended = Matcher::new(&["request_id=".to_string()]).unwrap();
        let Matcher::Extended(extended) = extended else {
            panic!("extra rows get a matcher of their own");
        };
        assert_eq!(extended.automaton.patterns_len(), TABLE.len() + 1);
    }

    #[test]
    fn scan_matches_the_reference_on_the_corpus() {
        let root = format!("{}/../corpus", env!("CARGO_MANIFEST_DIR"));
        let mut paths = vec![format!("{root}/build-log.txt")];
        for dir in ["logs", "logs/real"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
                let path = entry.unwrap().path();
                let log = path.extension().is_some_and(|ext| ext == "log")
                    || path.parent().is_some_and(|dir| dir.ends_with("real"));
                if path.is_file() && log {
                    paths.push(path.display().to_string());
                }
            }
        }
        assert!(paths.len() > 30, "the corpus's logs: {paths:?}");
        for path in &paths {
            let bytes = std::fs::read(path).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for extra in extras() {
                assert_same(path, &extra, &text);
            }
        }
    }

    #[test]
    fn scan_matches_the_reference_on_the_benchmark_payloads() {
        for size in [1_000_000, 10_000_000] {
            let text = corpus::log_payload(size);
            assert_same(&format!("log_payload({size})"), &[], &text);
        }
    }

    /// xorshift64: the same lines every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// A line made of pieces: rows of the table and extra rows (as listed, or in another
    /// case, or cut short), the texts their conditions read (digits, ` ----`, ` error`, runs of
    /// `_`), indentation, words, unicode.
    fn generated_line(rng: &mut Rng, extra: &[String]) -> String {
        const BITS: &[&str] = &[
            " ",
            "  ",
            "\t",
            "    ",
            "0",
            "1",
            "7",
            ":",
            " ----",
            " error",
            "___",
            "_",
            "__ ",
            " _",
            "-",
            "= ",
            "===",
            "word",
            "x",
            "\u{e9}",
            "\u{2715}",
            "\u{25cf}",
            "\u{65e5}\u{672c}",
            "E",
            "  \t",
            "ok",
            ".",
            "] ",
            "[E0308]",
            "no",
            "exit",
            "rr",
            "RR",
            "Pull",
        ];
        let mut line = String::new();
        if rng.below(8) == 0 {
            // A pytest section header, or something close to one.
            let run = |rng: &mut Rng| "_".repeat(rng.below(5));
            let title = generated_line(rng, extra);
            let spaced = if rng.below(4) == 0 { "" } else { " " };
            return format!("{}{spaced}{title}{spaced}{}", run(rng), run(rng));
        }
        for _ in 0..1 + rng.below(6) {
            let piece: String = match rng.below(5) {
                0 | 1 => TABLE[rng.below(TABLE.len())].text.to_string(),
                2 => BITS[rng.below(BITS.len())].to_string(),
                3 if !extra.is_empty() => extra[rng.below(extra.len())].clone(),
                _ => {
                    let text = TABLE[rng.below(TABLE.len())].text;
                    match rng.below(4) {
                        0 => text.to_uppercase(),
                        1 => text.to_lowercase(),
                        2 => text.chars().skip(1).collect(),
                        _ => text
                            .chars()
                            .take(text.chars().count().saturating_sub(1))
                            .collect(),
                    }
                }
            };
            line.push_str(&piece);
        }
        line
    }

    #[test]
    fn scan_matches_the_reference_on_generated_lines() {
        let mut rng = Rng(0x5eed_1065);
        for extra in extras() {
            for round in 0..40 {
                let mut text = String::new();
                for k in 0..200 {
                    // Some lines coloured, some redrawn, as a terminal shows them: the scan
                    // cleans those lines on their own.
                    let line = generated_line(&mut rng, &extra);
                    match k % 11 {
                        3 => text.push_str(&format!("\u{1b}[1;31m{line}\u{1b}[0m")),
                        7 => text.push_str(&format!("error: 10%\r{line}")),
                        9 => text.push_str(&format!("{line}\r")),
                        _ => text.push_str(&line),
                    }
                    text.push('\n');
                }
                if round % 2 == 1 {
                    text.pop();
                }
                assert_same(&format!("generated round {round}"), &extra, &text);
            }
        }
    }

    #[test]
    fn every_row_has_an_anchor_or_a_place() {
        for row in TABLE {
            match row.at {
                At::Anywhere => {
                    assert!(
                        row.text.len() >= ANCHOR,
                        "{:?} is searched on its own",
                        row.text
                    );
                    assert!(row.text.contains(anchor(row.text)));
                }
                _ => assert!(!row.text.is_empty()),
            }
        }
    }
}
