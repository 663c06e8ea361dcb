//! The pattern table: which lines signal a failure, a warning or a test-runner summary, and
//! which lines after them belong to the same block (a diagnostic, a traceback, a stack trace,
//! a failing test's section).
//!
//! The table is data: one row per pattern, matched as a plain, case-sensitive substring (case
//! variants are listed as rows of their own). All rows are searched in one pass over the whole
//! payload (an Aho-Corasick automaton, leftmost-first, so a longer row listed before a shorter
//! one that starts at the same place wins: `panicked at` before `panic`).

use aho_corasick::{AhoCorasick, MatchKind};

/// How much a line matters; the order is the keep priority (a line takes the highest class of
/// any pattern it matches, or of the block it belongs to).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    /// Everything else: folded into templates, or omitted.
    Noise = 0,
    /// A warning: each distinct one kept once, its repeats folded with a count.
    Warning = 1,
    /// A failure, a line of its block, or a test-runner summary: kept verbatim, always.
    Failure = 2,
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
}

/// Which lines after a matching line belong to its block (and take its class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// The line stands alone.
    None,
    /// A compiler diagnostic's lines (see [`is_diagnostic_line`]): rustc's and gcc's `-->`,
    /// `|`, `^`, `= note`, `::: ` lines and gutters (`12 |`). Any other line ends it, so an
    /// indented status line (`   Compiling x`) after an error is not part of it.
    Diagnostic,
    /// The continuation lines that follow (see [`is_continuation`]): indented lines, stack
    /// frames, and the diagnostic lines. A blank line or any other line ends it.
    Continuation,
    /// As [`Block::Continuation`], and the first other non-blank line belongs to the block too
    /// and ends it: the exception line closing a Python traceback, the message on the line
    /// after Rust's `panicked at …:`.
    ContinuationThenOne,
    /// Every line up to (not including) the next line that starts with one of these texts: a
    /// failing test's section.
    Until(&'static [&'static str]),
    /// Every line up to (not including) the next blank line: a Go goroutine dump.
    UntilBlank,
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
        Block::Until(&["---- ", "failures:", "test result:"]),
    ),
    row(
        "failures:",
        At::LineStart,
        Then::Any,
        Class::Failure,
        Block::Continuation,
    ),
    fail_block("panicked at", Block::ContinuationThenOne),
    summary("test result:"),
    // pytest and Python tracebacks.
    fail_start(
        "Traceback (most recent call last):",
        Block::ContinuationThenOne,
    ),
    fail_block("= FAILURES =", Block::Until(&["==="])),
    fail_block("= ERRORS =", Block::Until(&["==="])),
    fail_block("short test summary", Block::Until(&["==="])),
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
    fail_start("--- FAIL:", Block::Continuation),
    row(
        "goroutine ",
        At::LineStart,
        Then::Digit,
        Class::Failure,
        Block::UntilBlank,
    ),
    row(
        ".go:",
        At::Anywhere,
        Then::Digit,
        Class::Failure,
        Block::None,
    ),
    row(
        "ok  \t",
        At::LineStart,
        Then::Any,
        Class::Failure,
        Block::None,
    ),
    // jest, npm, node.
    fail_start("\u{2715}", Block::Continuation),
    fail_start("\u{25cf} ", Block::Continuation),
    fail_start("npm ERR!", Block::None),
    fail_start("npm error", Block::None),
    summary("Tests:"),
    summary("Test Suites:"),
    // javac, maven, gradle.
    fail_block("Exception in thread", Block::Continuation),
    fail_start("Caused by:", Block::Continuation),
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
    // Generic levels and words; `Error:` also ends `TypeError:`, `ValueError:`.
    fail_block("Error:", Block::Continuation),
    fail_block("Exception", Block::Continuation),
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
    // Warnings.
    warn("warning:"),
    warn("Warning:"),
    warn("WARN"),
];

/// The compiled table: the built-in rows, then the params' extra failure substrings (each
/// matched anywhere in a line, standing alone).
pub(crate) struct Matcher {
    automaton: AhoCorasick,
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("rows", &self.automaton.patterns_len())
            .finish()
    }
}

/// The extra rows' shape: a failure anywhere, standing alone.
const EXTRA: Pattern = fail("");

/// What the table says about one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) class: Class,
    pub(crate) block: Block,
}

impl Matcher {
    /// The built-in table plus `extra` failure substrings.
    ///
    /// # Errors
    ///
    /// The automaton's error when the patterns are too many or too long to compile.
    pub(crate) fn new(extra: &[String]) -> Result<Matcher, String> {
        let texts = TABLE
            .iter()
            .map(|row| row.text)
            .chain(extra.iter().map(String::as_str));
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(texts)
            .map_err(|err| err.to_string())?;
        Ok(Matcher { automaton })
    }

    /// The table's verdict on every line of `text` whose line starts are `starts` (line `i` is
    /// `text[starts[i]..ends[i]]`): `None` where no row matches.
    pub(crate) fn scan(&self, text: &str, starts: &[u32], ends: &[u32]) -> Vec<Option<Hit>> {
        let mut hits: Vec<Option<Hit>> = vec![None; starts.len()];
        let bytes = text.as_bytes();
        let mut line = 0usize;
        for found in self.automaton.find_iter(text) {
            let at = found.start();
            // Matches come in order, so the line index only moves forward.
            while line + 1 < starts.len() && starts[line + 1] as usize <= at {
                line += 1;
            }
            let (start, end) = (starts[line] as usize, ends[line] as usize);
            let row = TABLE.get(found.pattern().as_usize()).unwrap_or(&EXTRA);
            let placed = match row.at {
                At::Anywhere => true,
                At::LineStart => at == start,
                At::AfterIndent => bytes[start..at].iter().all(|&b| b == b' ' || b == b'\t'),
            };
            let followed = match row.then {
                Then::Any => true,
                Then::Digit => bytes.get(found.end()).is_some_and(u8::is_ascii_digit),
                Then::NonZeroDigit => bytes
                    .get(found.end())
                    .is_some_and(|b| (b'1'..=b'9').contains(b)),
                Then::LineEndsWith(tail) => {
                    found.end() <= end && text[found.end()..end].ends_with(tail)
                }
            };
            if !(placed && followed) {
                continue;
            }
            let hit = &mut hits[line];
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
        hits
    }
}

/// Whether `line` continues the block above it: indented, a stack frame, or a line of a
/// compiler diagnostic ([`is_diagnostic_line`]).
pub(crate) fn is_continuation(line: &str) -> bool {
    let bytes = line.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    if first == b' ' || first == b'\t' {
        return bytes.iter().any(|b| !b.is_ascii_whitespace());
    }
    is_diagnostic_line(line) || line.starts_with("at ") || line.starts_with("Caused by:")
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
