//! The pattern table: which lines signal a failure, a warning or a test-runner summary, and
//! which lines after them belong to the same block (a diagnostic, a traceback, a stack trace,
//! a failing test's section).
//!
//! The table is data: one row per pattern, matched as a plain, case-sensitive substring (case
//! variants are listed as rows of their own). All rows are searched in one pass over the whole
//! payload (an Aho-Corasick automaton, leftmost-first, so a longer row listed before a shorter
//! one that starts at the same place wins: `panicked at` before `panic`).

use aho_corasick::{AhoCorasick, MatchKind, packed};

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
    /// The continuation lines that follow (see [`is_continuation`]): indented lines, stack
    /// frames, and the diagnostic lines. A blank line or any other line ends it.
    Continuation,
    /// As [`Block::Continuation`], and the first other non-blank line belongs to the block too
    /// and ends it: the exception line closing a Python traceback, the message on the line
    /// after Rust's `panicked at …:`.
    ContinuationThenOne,
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

/// Whether a line belongs to the block being read, and whether the block ends with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) belongs: bool,
    pub(crate) ends: bool,
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
            Block::Continuation => {
                let more = is_continuation(line);
                (more, !more)
            }
            Block::ContinuationThenOne => {
                if is_continuation(line) {
                    (true, false)
                } else {
                    (!blank, true)
                }
            }
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
                    && (line.starts_with('\t')
                        || line.starts_with("created by ")
                        || is_go_frame(line));
                (more, !more)
            }
        };
        Step { belongs, ends }
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
    fail_start("--- FAIL:", Block::Continuation),
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
    row(
        "ok  \t",
        At::LineStart,
        Then::Any,
        Class::Failure,
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
    fail_block("Exception in thread", Block::Continuation),
    fail_start("Caused by:", Block::Continuation),
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
    /// Every row.
    automaton: AhoCorasick,
    /// The rows of 3 bytes or more, and each one's index in the whole list. Few lines hold a
    /// shorter row, and a short row makes the SIMD search try nearly every position; so the
    /// lines that hold one are searched with `automaton`, the rest with this.
    long: Searcher,
    long_rows: Vec<u32>,
    /// The rows shorter than 3 bytes.
    short: Vec<memchr::memmem::Finder<'static>>,
}

/// How the long rows are searched: packed (SIMD) when the CPU has it, which is several times
/// faster than the automaton (whose own SIMD prefilter is skipped past 64 rows).
enum Searcher {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("rows", &self.automaton.patterns_len())
            .finish()
    }
}

/// Rows shorter than this many bytes are searched only on the lines that hold one.
const SHORT: usize = 3;

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
        let texts: Vec<&str> = TABLE
            .iter()
            .map(|row| row.text)
            .chain(extra.iter().map(String::as_str))
            .collect();
        let leftmost = |texts: &[&str]| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(texts)
                .map_err(|err| err.to_string())
        };
        let automaton = leftmost(&texts)?;
        let long_rows: Vec<u32> = (0..texts.len() as u32)
            .filter(|&i| texts[i as usize].len() >= SHORT)
            .collect();
        let long_texts: Vec<&str> = long_rows.iter().map(|&i| texts[i as usize]).collect();
        let packed = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .heuristic_pattern_limits(false)
            .builder()
            .extend(&long_texts)
            .build();
        let long = match packed {
            Some(packed) => Searcher::Packed(packed),
            None => Searcher::Automaton(leftmost(&long_texts)?),
        };
        let short = texts
            .iter()
            .filter(|text| text.len() < SHORT)
            .map(|text| memchr::memmem::Finder::new(text.as_bytes()).into_owned())
            .collect();
        Ok(Matcher {
            automaton,
            long,
            long_rows,
            short,
        })
    }

    /// The table's verdict on every line of `text` whose line starts are `starts` (line `i` is
    /// `text[starts[i]..ends[i]]`): `None` where no row matches.
    pub(crate) fn scan(&self, text: &str, starts: &[u32], ends: &[u32]) -> Vec<Option<Hit>> {
        let mut hits: Vec<Option<Hit>> = vec![None; starts.len()];
        let bytes = text.as_bytes();
        let mut line = 0usize;
        let mut each = |row: u32, at: usize, found_end: usize| {
            // Matches come in order, so the line index only moves forward.
            while line + 1 < starts.len() && starts[line + 1] as usize <= at {
                line += 1;
            }
            let (start, end) = (starts[line] as usize, ends[line] as usize);
            let row = TABLE.get(row as usize).unwrap_or(&EXTRA);
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
                Then::LineEndsWith(tail) => {
                    found_end <= end && text[found_end..end].ends_with(tail)
                }
                Then::Holds(part) => found_end <= end && text[found_end..end].contains(part),
                Then::Title => found_end <= end && is_pytest_header(&text[start..end]),
            };
            if !(placed && followed) {
                return;
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
        };
        // No row holds a line break, so a line's matches are those of the line alone: the
        // lines that hold a short row are searched with every row, the text between them
        // with the long rows only (the short ones cannot match there).
        let mut marked: Vec<u32> = Vec::new();
        for finder in &self.short {
            marked.extend(
                finder
                    .find_iter(bytes)
                    .map(|at| starts.partition_point(|&start| start as usize <= at) as u32 - 1),
            );
        }
        marked.sort_unstable();
        marked.dedup();
        let mut from = 0;
        for &line in marked.iter().chain([&(starts.len() as u32)]) {
            let to = starts
                .get(line as usize)
                .map_or(text.len(), |&at| at as usize);
            let part = &text[from..to];
            match &self.long {
                Searcher::Packed(packed) => packed.find_iter(part).for_each(|m| {
                    each(
                        self.long_rows[m.pattern().as_usize()],
                        from + m.start(),
                        from + m.end(),
                    )
                }),
                Searcher::Automaton(automaton) => automaton.find_iter(part).for_each(|m| {
                    each(
                        self.long_rows[m.pattern().as_usize()],
                        from + m.start(),
                        from + m.end(),
                    )
                }),
            }
            let Some(&end) = ends.get(line as usize) else {
                break;
            };
            from = to;
            for m in self.automaton.find_iter(&text[from..end as usize]) {
                each(m.pattern().as_u32(), from + m.start(), from + m.end());
            }
            from = end as usize;
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
