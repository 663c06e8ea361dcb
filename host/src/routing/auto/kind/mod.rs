//! What a text payload is: file contents, or a log (any other text). `auto` routes the first
//! to its `file` candidates and the second to its `text` candidates (the module docs of
//! `auto`, *Text kinds*, state the rule; CONTRACT §2.8 too).
//!
//! The decision reads a bounded sample, whatever the payload's size: the first
//! [`HEAD_LINES`] lines within the first [`HEAD_BYTES`] bytes, and the last [`TAIL_LINES`]
//! lines within the last [`TAIL_BYTES`] bytes. Each sampled line is read in one loop, mostly
//! by its first bytes and its last (prefix lists, a few counts over the line), so a payload
//! costs about the same at 1 KB as at 100 MB: at most 20 KiB are read. The same text always
//! gets the same kind.

use std::borrow::Cow;
use std::fmt;

mod output;

#[cfg(test)]
pub(crate) use output::Asked;
pub(crate) use output::OutputSignal;

/// The lines read from a payload's start.
pub(crate) const HEAD_LINES: usize = 64;
/// The bytes those lines lie in.
pub(crate) const HEAD_BYTES: usize = 16 * 1024;
/// The lines read from a payload's end (when the head did not reach it).
pub(crate) const TAIL_LINES: usize = 16;
/// The bytes those lines lie in.
pub(crate) const TAIL_BYTES: usize = 4 * 1024;
/// A log: at least this share (in percent) of the sampled non-blank lines carry a log signal
/// (and at least two lines do).
pub(crate) const LOG_SHARE: usize = 20;
/// File contents: at least this share (in percent) of the sampled non-blank lines carry a
/// file signal and no log signal.
pub(crate) const FILE_SHARE: usize = 50;
/// A table: at least this many sampled lines, all with the same number of separators.
pub(crate) const TABLE_LINES: usize = 3;

/// The kind of a text payload, with the evidence for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// File contents: a numbered read, source code, configuration, structured text.
    File(FileSignal),
    /// A log: build, test or program output with a log's own signals.
    Log(LogSignal),
    /// Output an agent asked to see (a listing, search hits, a table, VCS output), or text
    /// with no signal either way: never folded, only compressed losslessly.
    Output(Option<OutputSignal>),
}

/// Why a text is file contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileSignal {
    /// Every line is `N\t<text>` or `N→<text>` with consecutive numbers (`cat -n`, an agent's
    /// file read), from line `first` to line `last` (when the sample saw the end).
    Numbered { first: u64, last: Option<u64> },
    /// Most sampled lines look like this kind of file.
    Lines {
        /// The kind most of the file lines look like.
        what: FileLine,
        /// The sampled lines with a file signal.
        lines: usize,
        /// The sampled non-blank lines.
        sampled: usize,
    },
    /// Every sampled line holds the same number (≥ 1) of this separator: CSV or TSV.
    Table { separator: char, sampled: usize },
}

/// Why a text is a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LogSignal {
    /// The signal most of the log lines carry.
    pub(crate) what: LogLine,
    /// The sampled lines with a log signal.
    pub(crate) lines: usize,
    /// The sampled non-blank lines.
    pub(crate) sampled: usize,
}

/// A file signal of one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FileLine {
    /// A keyword at the start, a comment, or a line that ends with a bracket, `;`, `,`.
    Code = 0,
    /// `[section]`, `key = value`, `key: value`, `KEY=value`, a Dockerfile instruction.
    Config = 1,
    /// A heading, a list item, a fence, a quote, a table row.
    Markdown = 2,
    /// `"key": value`.
    Json = 3,
    /// A sentence: words and punctuation, few digits.
    Prose = 4,
}

/// A log signal of one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LogLine {
    /// A date or a time of day near its start.
    Timestamp = 0,
    /// A level word near its start (`INFO`, `[warn]`, `level=error`).
    Level = 1,
    /// A build tool's, test runner's or package manager's status line.
    Runner = 2,
    /// A compiler diagnostic or a stack trace line.
    Diagnostic = 3,
}

impl FileLine {
    const ALL: [FileLine; 5] = [
        FileLine::Code,
        FileLine::Config,
        FileLine::Markdown,
        FileLine::Json,
        FileLine::Prose,
    ];

    fn as_str(self) -> &'static str {
        match self {
            FileLine::Code => "source code",
            FileLine::Config => "configuration",
            FileLine::Markdown => "Markdown",
            FileLine::Json => "JSON text",
            FileLine::Prose => "prose",
        }
    }
}

impl LogLine {
    const ALL: [LogLine; 4] = [
        LogLine::Timestamp,
        LogLine::Level,
        LogLine::Runner,
        LogLine::Diagnostic,
    ];

    fn as_str(self) -> &'static str {
        match self {
            LogLine::Timestamp => "timestamps",
            LogLine::Level => "log levels",
            LogLine::Runner => "build or test output",
            LogLine::Diagnostic => "diagnostics",
        }
    }
}

impl fmt::Display for FileSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FileSignal::Numbered {
                first,
                last: Some(last),
            } => write!(
                f,
                "numbered read, lines {}-{}",
                super::thousands(first as usize),
                super::thousands(last as usize)
            ),
            FileSignal::Numbered { first, last: None } => write!(
                f,
                "numbered read from line {}",
                super::thousands(first as usize)
            ),
            FileSignal::Lines {
                what,
                lines,
                sampled,
            } => write!(f, "{}, {lines} of {sampled} sampled lines", what.as_str()),
            FileSignal::Table { separator, sampled } => {
                let name = if separator == '\t' { "TSV" } else { "CSV" };
                write!(f, "{name}, {sampled} sampled lines")
            }
        }
    }
}

impl fmt::Display for LogSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} of {} sampled lines",
            self.what.as_str(),
            self.lines,
            self.sampled
        )
    }
}

/// The kind of `text` (see the module docs).
pub(crate) fn classify(text: &str) -> Kind {
    let sample = Sample::of(text);
    if let Some(signal) = numbered_read(&sample) {
        return Kind::File(signal);
    }
    if let Some(signal) = output::asked(&sample) {
        return Kind::Output(Some(signal));
    }
    let (sampled, log, file) = signals(&sample);
    let logs: usize = log.iter().sum();
    if logs >= 2 && logs * 100 >= LOG_SHARE * sampled {
        return Kind::Log(LogSignal {
            what: most(&LogLine::ALL, &log),
            lines: logs,
            sampled,
        });
    }
    if let Some(signal) = table(&sample) {
        return Kind::File(signal);
    }
    let files: usize = file.iter().sum();
    let mostly_file = files > 0 && files * 100 >= FILE_SHARE * sampled;
    // Few log lines, but a build tool's or test runner's status line among text that is not
    // a file: a test's failure followed by hundreds of lines of its own output. A shell
    // prompt echoing the command (`$ kubectl get pods -w`) says what ran, not that its output
    // is a log: it is no such evidence.
    let prompts = || {
        sample
            .lines()
            .filter(|line| plain(line).trim_start().starts_with("$ "))
            .count()
    };
    if log[LogLine::Runner as usize] > 0
        && !mostly_file
        && log[LogLine::Runner as usize] > prompts()
    {
        return Kind::Log(LogSignal {
            what: most(&LogLine::ALL, &log),
            lines: logs,
            sampled,
        });
    }
    // An aligned table, unless most lines are code or configuration (aligned assignments).
    let written = file[FileLine::Code as usize] + file[FileLine::Config as usize];
    if written * 100 < FILE_SHARE * sampled
        && let Some(signal) = output::table(&sample)
    {
        return Kind::Output(Some(signal));
    }
    if mostly_file {
        return Kind::File(FileSignal::Lines {
            what: most(&FileLine::ALL, &file),
            lines: files,
            sampled,
        });
    }
    Kind::Output(None)
}

/// The sampled non-blank lines, and how many carry each log signal and each file signal.
fn signals(
    sample: &Sample<'_>,
) -> (
    usize,
    [usize; LogLine::ALL.len()],
    [usize; FileLine::ALL.len()],
) {
    let mut sampled = 0;
    let mut log = [0usize; LogLine::ALL.len()];
    let mut file = [0usize; FileLine::ALL.len()];
    for part in [&sample.head, &sample.tail] {
        // Inside a Markdown fence, a line is the document's, whatever it shows (a shell
        // session, a program's output).
        let mut fenced = false;
        for line in part.iter() {
            let line = plain(line);
            let line = line.as_ref();
            if line.trim().is_empty() {
                continue;
            }
            sampled += 1;
            let fence = is_fence(line);
            if fenced || fence {
                file[FileLine::Markdown as usize] += 1;
            } else if let Some(what) = log_line(line) {
                log[what as usize] += 1;
            } else if let Some(what) = file_line(line) {
                file[what as usize] += 1;
            }
            fenced ^= fence;
        }
    }
    (sampled, log, file)
}

/// The item with the highest count (the first on a tie).
fn most<T: Copy>(items: &[T], counts: &[usize]) -> T {
    let mut best = 0;
    for (i, &count) in counts.iter().enumerate() {
        if count > counts[best] {
            best = i;
        }
    }
    items[best]
}

/// The lines a decision reads: the head, and the tail when the head did not reach the end.
struct Sample<'a> {
    head: Vec<&'a str>,
    /// The head holds every line of the payload.
    whole: bool,
    tail: Vec<&'a str>,
}

impl<'a> Sample<'a> {
    fn of(text: &'a str) -> Sample<'a> {
        let cut = floor_boundary(text, HEAD_BYTES.min(text.len()));
        let region = &text[..cut];
        let mut head: Vec<&str> = region.split('\n').take(HEAD_LINES + 1).collect();
        let mut end = 0;
        // A last line that ends with a line break leaves an empty piece after it.
        let lines = head.len() - usize::from(head.len() > 1 && head.last() == Some(&""));
        let mut whole = cut == text.len() && lines <= HEAD_LINES;
        if whole {
            end = text.len();
            if head.last() == Some(&"") && head.len() > 1 {
                head.pop();
            }
        } else {
            // The last piece is a line cut short (by the bytes) or one past the count.
            head.pop();
            for line in &head {
                end += line.len() + 1;
            }
            if head.is_empty() {
                whole = false;
            }
        }
        let head: Vec<&str> = head.into_iter().map(without_cr).collect();
        let mut tail = Vec::new();
        if !whole {
            let from = ceil_boundary(text, text.len().saturating_sub(TAIL_BYTES).max(end));
            let body = text[from..].strip_suffix('\n').unwrap_or(&text[from..]);
            let mut pieces: Vec<&str> = body.split('\n').collect();
            if from > end && !pieces.is_empty() {
                // Starts mid-line.
                pieces.remove(0);
            }
            let skip = pieces.len().saturating_sub(TAIL_LINES);
            tail = pieces.into_iter().skip(skip).map(without_cr).collect();
        }
        Sample { head, whole, tail }
    }

    fn lines(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.head.iter().chain(&self.tail).copied()
    }
}

fn without_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The number and the text of a numbered line: `     12\t<text>` (`cat -n`) or `12→<text>`.
fn numbered(line: &str) -> Option<(u64, &str)> {
    let body = line.trim_start_matches(' ');
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = &body[digits..];
    let text = rest
        .strip_prefix('\t')
        .or_else(|| rest.strip_prefix('\u{2192}'))?;
    Some((body[..digits].parse().ok()?, text))
}

/// A numbered read: the sample's lines are numbered consecutively from its first line (at
/// least two of them, or the payload's one line), up to a blank line that may open a trailer
/// (a note the reading tool appends) or the sample's end; the tail's numbered lines go on from
/// a later number.
fn numbered_read(sample: &Sample<'_>) -> Option<FileSignal> {
    let (first, run, last) = run_of(&sample.head, None)?;
    let reached_end = run == sample.head.len();
    if !reached_end {
        let after = sample.head[run];
        if !after.trim().is_empty() || run < 2 {
            return None;
        }
        return Some(FileSignal::Numbered {
            first,
            last: Some(last),
        });
    }
    if sample.whole {
        if run < 2 && sample.head.len() > 1 {
            return None;
        }
        return Some(FileSignal::Numbered {
            first,
            last: Some(last),
        });
    }
    if run < 2 {
        return None;
    }
    // The tail: numbered lines going on from a later number, then maybe a trailer.
    match run_of(&sample.tail, Some(last)) {
        Some((_, tail_run, tail_last)) => {
            let ends_well =
                tail_run == sample.tail.len() || sample.tail[tail_run].trim().is_empty();
            ends_well.then_some(FileSignal::Numbered {
                first,
                last: Some(tail_last),
            })
        }
        // The tail holds no numbered line: a trailer longer than the tail, or not a read.
        None => {
            let trailer = sample.tail.iter().all(|line| numbered(line).is_none());
            trailer.then_some(FileSignal::Numbered { first, last: None })
        }
    }
}

/// The run of consecutively numbered lines that starts `lines`: its first number, its length
/// and its last number. With `after`, the run's first number must be above it.
fn run_of(lines: &[&str], after: Option<u64>) -> Option<(u64, usize, u64)> {
    let (first, _) = numbered(lines.first()?)?;
    if after.is_some_and(|after| first <= after) {
        return None;
    }
    let mut last = first;
    let mut run = 1;
    for line in &lines[1..] {
        match numbered(line) {
            Some((n, _)) if n == last + 1 => {
                last = n;
                run += 1;
            }
            _ => break,
        }
    }
    Some((first, run, last))
}

/// A table: every sampled non-blank line holds the same number (≥ 1 tabs, ≥ 2 commas) of one
/// separator, over at least [`TABLE_LINES`] lines.
fn table(sample: &Sample<'_>) -> Option<FileSignal> {
    for (separator, least) in [('\t', 1), (',', 2)] {
        let mut count = None;
        let mut sampled = 0;
        let same = sample.lines().filter(|l| !l.trim().is_empty()).all(|line| {
            sampled += 1;
            let n = line.bytes().filter(|&b| b == separator as u8).count();
            n >= least && *count.get_or_insert(n) == n
        });
        if same && sampled >= TABLE_LINES {
            return Some(FileSignal::Table { separator, sampled });
        }
    }
    None
}

/// `line` without its ANSI colour sequences (`\x1b[1m\x1b[92m   Compiling\x1b[0m serde`):
/// copied only when it holds one.
fn plain(line: &str) -> Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('\u{1b}') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(body) = rest.strip_prefix('[') {
            let end = body
                .bytes()
                .position(|b| (0x40..=0x7e).contains(&b))
                .map_or(body.len(), |at| at + 1);
            rest = &body[end..];
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Status lines of build tools, test runners and package managers, after the indentation.
const RUNNER_STARTS: &[&str] = &[
    // cargo and rustc.
    "Compiling ",
    "Checking ",
    "Documenting ",
    "Fresh ",
    "Running ",
    "Finished ",
    "Downloaded ",
    "Downloading ",
    "Updating ",
    "Locking ",
    "Adding ",
    "Blocking ",
    "Building ",
    "Built ",
    "Installing ",
    "Installed ",
    "Replacing ",
    "Packaging ",
    "Verifying ",
    "Uploading ",
    "Removed ",
    "Doc-tests ",
    "running ",
    "test result:",
    "failures:",
    "---- ",
    "[Running ",
    "Executable ",
    // pip and Python.
    "Collecting ",
    "Requirement already",
    "Successfully ",
    "Using cached ",
    "Obtaining ",
    "Preparing metadata",
    "Getting requirements",
    "Created wheel",
    "Stored in directory",
    "Attempting uninstall",
    "Uninstalling ",
    "Looking in indexes",
    "platform ",
    "rootdir:",
    "cachedir:",
    "plugins:",
    "collected ",
    "collecting ",
    "E   ",
    // npm, yarn, node test runners.
    "npm ",
    "added ",
    "removed ",
    "changed ",
    "audited ",
    "found 0 ",
    "up to date",
    "packages are looking",
    "run `npm",
    "yarn ",
    "PASS ",
    "FAIL ",
    "Test Suites:",
    "Tests:",
    "Snapshots:",
    "Time:",
    "Ran all test",
    "\u{2713} ",
    "\u{2715} ",
    "\u{2714} ",
    "\u{2716} ",
    "\u{25cb} ",
    "\u{25cf} ",
    // go.
    "=== RUN",
    "=== PAUSE",
    "=== CONT",
    "--- PASS",
    "--- FAIL",
    "--- SKIP",
    "FAIL\t",
    "ok  \t",
    "?   \t",
    "go: ",
    // Debian packages (dpkg, apt).
    "Selecting previously",
    "Preparing to unpack",
    "Unpacking ",
    "Setting up ",
    "Processing triggers",
    "Get:",
    "Hit:",
    "Ign:",
    "Err:",
    "Fetched ",
    "Reading package lists",
    "Reading state information",
    "Building dependency tree",
    "Log started:",
    "Log ended:",
    "Start-Date:",
    "End-Date:",
    "Commandline:",
    "Requested-By:",
    "update-alternatives:",
    // make, cmake, compilers, docker, gradle, maven.
    "make[",
    "make:",
    "gcc ",
    "g++ ",
    "cc ",
    "c++ ",
    "clang ",
    "clang++ ",
    "ld ",
    "ar ",
    "-- Build files",
    "-- Configuring",
    "-- Generating",
    "Scanning dependencies",
    "Linking ",
    "Step ",
    "Sending build context",
    "Successfully built",
    "Successfully tagged",
    "> Task ",
    "BUILD SUCCESSFUL",
    "BUILD FAILED",
    "Starting a Gradle",
    "[INFO]",
    "[WARNING]",
    "[ERROR]",
    "[DEBUG]",
    // A shell's prompt echoing the command.
    "$ ",
];

/// Level words, matched as whole words within the first [`LEVEL_WINDOW`] bytes.
const LEVELS: &[&str] = &[
    "TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "ERR", "FATAL", "CRITICAL",
    "CRIT", "SEVERE", "PASSED", "FAILED", "SKIPPED", "XFAIL",
];

/// Where a level word counts: within this many bytes from the line's start.
const LEVEL_WINDOW: usize = 48;

/// The log signal of `line` (without its colours), if any.
fn log_line(line: &str) -> Option<LogLine> {
    let body = line.trim_start_matches([' ', '\t']);
    if timestamp_near_start(line) {
        return Some(LogLine::Timestamp);
    }
    if level_near_start(line) {
        return Some(LogLine::Level);
    }
    if diagnostic(body) {
        return Some(LogLine::Diagnostic);
    }
    if runner(body) || timed(body) {
        return Some(LogLine::Runner);
    }
    None
}

/// Units of the measures a step reports at the end of its line.
const MEASURES: &[&str] = &[
    "ns", "µs", "us", "ms", "s", "sec", "secs", "min", "B", "kB", "KB", "KiB", "MB", "MiB", "GB",
    "GiB", "%",
];

/// A step that reports what it took at the end of its line: `loaded r1: amount 7 (0.036
/// ms)`, `compiled a.js -> dist/a.js (5.02 kB) in 10.7ms`, `done (12%)`. Source code does
/// not end a line with a measured number in brackets or after ` in `.
fn timed(body: &str) -> bool {
    let body = body.trim_end();
    let measure = |text: &str| {
        let text = text.trim();
        let digits = text
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        digits > 0
            && text.as_bytes()[0].is_ascii_digit()
            && MEASURES.contains(&text[digits..].trim_start())
    };
    if let Some(inner) = body.strip_suffix(')')
        && let Some(open) = inner.rfind('(')
    {
        return measure(&inner[open + 1..]);
    }
    body.rfind(" in ")
        .is_some_and(|at| measure(&body[at + 4..]))
}

fn runner(body: &str) -> bool {
    if RUNNER_STARTS.iter().any(|start| body.starts_with(start)) {
        return true;
    }
    // pytest's banners and section headers, `=== 2 failed in 0.1s ===`, `___ test_x ___`
    // (not a bare rule, which underlines a heading in Markdown and reStructuredText).
    if (body.starts_with("===") || body.starts_with("___")) && body.trim_end().contains(' ') {
        return true;
    }
    // cargo test's `test name ... ok`, docker buildkit's `#12 [2/7] RUN …`, cmake's
    // `[ 40%] Building …`.
    if body.starts_with("test ")
        && body.contains(" ... ")
        && [" ok", " FAILED", " ignored", " bench"]
            .iter()
            .any(|end| body.contains(end))
    {
        return true;
    }
    if let Some(rest) = body.strip_prefix('#') {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(' ') {
            return true;
        }
    }
    if let Some(rest) = body.strip_prefix('[') {
        let rest = rest.trim_start();
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with("%]") {
            return true;
        }
    }
    // pytest's verbose result: `tests/test_a.py::test_x[case-1] PASSED`, maybe then `[ 27%]`.
    if body.contains(".py::") {
        let result = body.trim_end();
        let result = match result.rsplit_once(" [") {
            Some((before, after)) if after.ends_with("%]") => before.trim_end(),
            _ => result,
        };
        if ["PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", "XPASS"]
            .iter()
            .any(|word| result.ends_with(word))
        {
            return true;
        }
    }
    // pytest's progress at the end of a line: `tests/test_a.py ....  [ 27%]`.
    if let Some(rest) = body.trim_end().strip_suffix("%]") {
        let digits = rest.bytes().rev().take_while(u8::is_ascii_digit).count();
        return digits > 0 && rest[..rest.len() - digits].trim_end().ends_with('[');
    }
    false
}

/// A compiler diagnostic (`error[E0308]: …`, `  --> src/a.rs:3:5`, `3 |     let x …`,
/// `file.c:12:5: error: …`), a traceback or a stack frame.
fn diagnostic(body: &str) -> bool {
    const STARTS: &[&str] = &[
        "error[",
        "error:",
        "warning:",
        "warning[",
        "note:",
        "help:",
        "-->",
        "= note",
        "= help",
        "::: ",
        "Traceback (most recent call last)",
        "File \"",
        "Caused by:",
        "panicked at",
        "thread '",
        "Exception in thread",
        "stack backtrace:",
    ];
    if STARTS.iter().any(|start| body.starts_with(start)) {
        return true;
    }
    // A gutter: `|`, `12 |`, not a Markdown table row (which ends with `|`).
    // Without a number, the gutter holds nothing or, after a space, a marker (`^^^`, `---`,
    // `|`), which tells it from a Rust or-pattern's `| Expr::Array(_)` and a condition's
    // `|| x == y`.
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let after = body[digits..].trim_start_matches(' ');
    if let Some(rest) = after.strip_prefix('|') {
        let spaced = rest.starts_with(' ');
        let rest = rest.trim_start();
        let marker =
            rest.is_empty() || (spaced && rest.starts_with(['^', '-', '|', '_', '~', '+']));
        if !body.trim_end().ends_with('|')
            && ((digits > 0 && after.len() < body.len() - digits) || marker)
        {
            return true;
        }
    }
    // A located diagnostic: `src/a.c:12:5: error: …`, the location before any space.
    let location = &body[..body.find(' ').unwrap_or(body.len())];
    if location.ends_with(':') && location[..location.len() - 1].contains(':') {
        let rest = &body[location.len()..];
        if [" error:", " warning:", " note:", " fatal error:"]
            .iter()
            .any(|kind| rest.starts_with(kind))
        {
            return true;
        }
    }
    // A stack frame: `at f (file.js:1:2)`, `at com.x.Y.f(Y.java:12)`.
    body.starts_with("at ") && body.ends_with(')') && body.contains(':')
}

/// A date (`2026-12-03`, `2026/12/03`), a syslog date (`Dec  3 10:00:00`), a kernel time
/// (`[  12.345678]`) at the start, or a time of day (`10:00:00`) within the first
/// [`CLOCK_WINDOW`] bytes and before any `"`.
fn timestamp_near_start(line: &str) -> bool {
    let bytes = line.as_bytes();
    let start = bytes
        .iter()
        .position(|&b| !matches!(b, b' ' | b'[' | b'(' | b'\t'))
        .unwrap_or(bytes.len());
    let at = &bytes[start..];
    let digit = |i: usize| at.get(i).is_some_and(u8::is_ascii_digit);
    let date = (0..4).all(digit)
        && matches!(at.get(4), Some(b'-' | b'/'))
        && (5..7).all(digit)
        && at.get(7) == at.get(4)
        && (8..10).all(digit);
    if date {
        return true;
    }
    const MONTHS: [&[u8]; 12] = [
        b"Jan ", b"Feb ", b"Mar ", b"Apr ", b"May ", b"Jun ", b"Jul ", b"Aug ", b"Sep ", b"Oct ",
        b"Nov ", b"Dec ",
    ];
    if MONTHS.iter().any(|month| at.starts_with(month)) && clock_in(&at[4..at.len().min(12)]) {
        return true;
    }
    if line.starts_with('[') && digit(0) {
        let seconds = at.iter().take_while(|b| b.is_ascii_digit()).count();
        if at.get(seconds) == Some(&b'.')
            && at[seconds + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
                >= 3
        {
            return true;
        }
    }
    // A time of day near the start, before any quote: not a value inside a JSON or YAML
    // string (`"createdAt": "2018-05-09T12:03:18Z"`).
    let window = &bytes[..bytes.len().min(CLOCK_WINDOW)];
    let window = match window.iter().position(|&b| b == b'"') {
        Some(quote) => &window[..quote],
        None => window,
    };
    clock_in(window)
}

/// Where a time of day counts as a log's timestamp: within this many bytes from the line's
/// start.
const CLOCK_WINDOW: usize = 24;

/// Whether `bytes` hold a time of day, `12:34:56`, not inside a longer run of digits.
fn clock_in(bytes: &[u8]) -> bool {
    bytes.windows(8).enumerate().any(|(i, w)| {
        let d = |k: usize| w[k].is_ascii_digit();
        d(0) && d(1)
            && w[2] == b':'
            && d(3)
            && d(4)
            && w[5] == b':'
            && d(6)
            && d(7)
            && (i == 0 || !bytes[i - 1].is_ascii_digit())
    })
}

/// A level word (see [`LEVELS`]), or `level=`/`lvl=`, or a bracketed lower-case level
/// (`[warn]`), within the first [`LEVEL_WINDOW`] bytes.
fn level_near_start(line: &str) -> bool {
    let window = &line[..floor_boundary(line, line.len().min(LEVEL_WINDOW))];
    if window.contains("level=") || window.contains("lvl=") {
        return true;
    }
    for lower in [
        "[info]", "[warn]", "[error]", "[debug]", "[trace]", "[notice]",
    ] {
        if window.contains(lower) {
            return true;
        }
    }
    let bytes = window.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_uppercase() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_uppercase() {
            i += 1;
        }
        let before = start.checked_sub(1).map(|k| bytes[k]);
        let after = bytes.get(i).copied();
        let opens = matches!(
            before,
            None | Some(b' ' | b'[' | b'(' | b'|' | b'<' | b'\t')
        );
        let closes = matches!(
            after,
            None | Some(b' ' | b']' | b')' | b':' | b'|' | b'>' | b'\t')
        );
        // A word cut by the window's end may be longer than it looks.
        let whole = i < bytes.len() || window.len() == line.len();
        if opens && closes && whole && LEVELS.contains(&&window[start..i]) {
            return true;
        }
    }
    false
}

/// Words that start a line of source code, followed by a space or a bracket.
const KEYWORDS: &[&str] = &[
    "fn",
    "pub",
    "use",
    "mod",
    "impl",
    "let",
    "const",
    "static",
    "struct",
    "enum",
    "trait",
    "type",
    "match",
    "if",
    "else",
    "for",
    "while",
    "loop",
    "return",
    "import",
    "export",
    "from",
    "def",
    "class",
    "function",
    "var",
    "package",
    "func",
    "async",
    "await",
    "try",
    "catch",
    "switch",
    "case",
    "break",
    "continue",
    "extern",
    "unsafe",
    "where",
    "interface",
    "public",
    "private",
    "protected",
    "namespace",
    "template",
    "typedef",
    "do",
    "with",
    "elif",
    "except",
    "raise",
    "yield",
    "lambda",
    "module",
    "require",
    "assert",
    "assert_eq",
    "self",
    "super",
    "crate",
    "macro_rules",
    "local",
    "end",
    "then",
    "fi",
    "done",
    "esac",
    "echo",
    "set",
    "unset",
    "new",
    "throw",
    "delete",
    "int",
    "void",
    "char",
    "bool",
    "double",
    "float",
    "unsigned",
    "long",
    "auto",
];

/// Dockerfile instructions.
const DOCKERFILE: &[&str] = &[
    "FROM ",
    "RUN ",
    "COPY ",
    "ADD ",
    "CMD ",
    "ENTRYPOINT ",
    "ENV ",
    "ARG ",
    "WORKDIR ",
    "EXPOSE ",
    "USER ",
    "LABEL ",
    "VOLUME ",
    "HEALTHCHECK ",
    "SHELL ",
    "ONBUILD ",
];

/// The bytes of a line read for [`prose`].
const PROSE_BYTES: usize = 256;

/// The file signal of `line` (without its colours), if any.
fn file_line(line: &str) -> Option<FileLine> {
    let body = line.trim_start_matches([' ', '\t']).trim_end();
    let first = body.as_bytes()[0];
    // Markdown's block starts.
    if markdown(body) {
        return Some(FileLine::Markdown);
    }
    if first == b'"' && body[1..].contains("\":") || json_item(body) {
        return Some(FileLine::Json);
    }
    if config(body) {
        return Some(FileLine::Config);
    }
    if code(body) {
        return Some(FileLine::Code);
    }
    if prose(body) {
        return Some(FileLine::Prose);
    }
    None
}

/// A Markdown code fence: ```` ``` ```` or `~~~`, with or without an info string.
fn is_fence(line: &str) -> bool {
    let body = line.trim_start_matches(' ');
    body.starts_with("```") || body.starts_with("~~~")
}

fn markdown(body: &str) -> bool {
    let hashes = body.bytes().take_while(|&b| b == b'#').count();
    if (1..=6).contains(&hashes) && body[hashes..].starts_with(' ') {
        return true;
    }
    if ["- ", "* ", "+ ", "> ", "```", "~~~", "---"]
        .iter()
        .any(|start| body.starts_with(start))
    {
        return true;
    }
    if body.starts_with('|') && body.ends_with('|') && body.len() > 2 {
        return true;
    }
    // A link definition, `[name]: https://…`.
    if body.starts_with('[') && body.contains("]: ") {
        return true;
    }
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    (1..=3).contains(&digits) && body[digits..].starts_with(". ")
}

/// An item of a pretty-printed JSON array: a string, `true`, `false` or `null` (with or
/// without its comma), or a number with its comma (a bare number is as likely a count).
fn json_item(body: &str) -> bool {
    let (item, comma) = match body.strip_suffix(',') {
        Some(item) => (item, true),
        None => (body, false),
    };
    let number = !item.is_empty()
        && item.len() <= 24
        && item
            .bytes()
            .all(|b| b.is_ascii_digit() || b"-+.eE".contains(&b))
        && item.as_bytes()[0] != b'e';
    matches!(item, "true" | "false" | "null")
        || (item.len() >= 2 && item.starts_with('"') && item.ends_with('"'))
        || (number && comma)
}

fn config(body: &str) -> bool {
    let bytes = body.as_bytes();
    // `[section]`, `[[array.of.tables]]`.
    if bytes[0] == b'['
        && body.ends_with(']')
        && bytes
            .get(1)
            .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'[' || b == b'"')
    {
        return true;
    }
    if DOCKERFILE.iter().any(|start| body.starts_with(start)) {
        return true;
    }
    let key = bytes
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'"'))
        .count();
    if key == 0 || !(bytes[0].is_ascii_alphabetic() || bytes[0] == b'_' || bytes[0] == b'"') {
        return false;
    }
    let rest = &body[key..];
    // `key = value` (TOML, INI), `KEY=value` (.env).
    if rest.trim_start_matches(' ').starts_with('=') && !rest.starts_with("==") {
        return true;
    }
    // `key: value`, `key:` (YAML), with a lower-case key: a log's `Error: …`, `Caused by:`
    // start upper-case.
    bytes[0].is_ascii_lowercase() && (rest == ":" || rest.starts_with(": "))
}

fn code(body: &str) -> bool {
    const ENDS: &[&str] = &[
        "{", "}", ";", "(", ")", "[", "]", ",", "=>", "->", "\\", "};", "),", "});", "*/",
    ];
    if ENDS.iter().any(|end| body.ends_with(end)) {
        return true;
    }
    const COMMENTS: &[&str] = &["//", "/*", "*", "#", "--", "<!--", "<", "@"];
    if COMMENTS.iter().any(|start| body.starts_with(start)) {
        return true;
    }
    let word = body
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || b == b'_')
        .count();
    let after = body.as_bytes().get(word).copied();
    word > 0
        && matches!(
            after,
            None | Some(b' ' | b'(' | b'{' | b'<' | b':' | b'!' | b'.')
        )
        && KEYWORDS.contains(&&body[..word])
}

/// A sentence: three or more words, starting with a letter (or markup around one: `` ` ``,
/// `[`, `*`, `_`, a quote, a bracket), mostly letters, almost no digits.
fn prose(body: &str) -> bool {
    // A sentence shows within its first bytes; a long line is not read further.
    let bytes = &body.as_bytes()[..body.len().min(PROSE_BYTES)];
    if !(bytes[0].is_ascii_alphabetic() || b"`[*_(\"'".contains(&bytes[0])) {
        return false;
    }
    let words = bytes.iter().filter(|&&b| b == b' ').count() + 1;
    let letters = bytes.iter().filter(|b| b.is_ascii_alphabetic()).count();
    let digits = bytes.iter().filter(|b| b.is_ascii_digit()).count();
    words >= 3 && letters * 10 >= bytes.len() * 6 && digits * 20 <= bytes.len()
}

#[cfg(test)]
mod measure;

#[cfg(test)]
mod tests;
