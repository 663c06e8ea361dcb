//! Output an agent asked to see: a listing of paths, a search's hits, VCS output, an aligned
//! table. Each is told by its whole shape — every sampled line (or all but a tenth) has the
//! form — not by words in it, so a listing of files named `error.rs` or `2026-12-03.log`, a
//! grep for `ERROR`, or a commit message that says `FAIL` stays what it is: the answer the
//! agent asked for, never folded as a log.

use std::fmt;

use super::Sample;

/// At least this share (in percent) of the sampled non-blank lines have the kind's form.
pub(crate) const OUTPUT_SHARE: usize = 90;
/// A listing or a table: at least this many sampled non-blank lines.
pub(crate) const OUTPUT_LINES: usize = 3;

/// A kind of output an agent asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// `git log`, `git show`, `git diff`, `git blame`, `git log --oneline`, a diffstat.
    Vcs,
    /// `path:N:text`, `path-N-text`, `path:text` lines (grep, ripgrep, `git grep`).
    Hits,
    /// One path a line (`find`, `ls -1`, `git ls-files`, `ls -R`, `git status --short`).
    Paths,
    /// Whitespace-aligned columns (`ls -l`, `ps`, `pip list`, `dpkg -l`, `df`).
    Table,
}

/// Why a text is output an agent asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OutputSignal {
    /// The kind of output.
    pub(crate) what: Asked,
    /// The sampled lines with its form.
    pub(crate) lines: usize,
    /// The sampled non-blank lines.
    pub(crate) sampled: usize,
}

impl Asked {
    fn as_str(self) -> &'static str {
        match self {
            Asked::Vcs => "version control output",
            Asked::Hits => "search hits",
            Asked::Paths => "a listing of paths",
            Asked::Table => "an aligned table",
        }
    }
}

impl fmt::Display for OutputSignal {
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

/// Version control output, search hits or a listing of paths: the kinds that are told before
/// a log's signals are counted (see the module docs).
pub(crate) fn asked(sample: &Sample<'_>) -> Option<OutputSignal> {
    let lines: Vec<&str> = sample.lines().filter(|l| !l.trim().is_empty()).collect();
    let sampled = lines.len();
    if sampled == 0 {
        return None;
    }
    if vcs_opening(lines[0], lines.get(1).copied().unwrap_or_default()) {
        return Some(OutputSignal {
            what: Asked::Vcs,
            lines: sampled,
            sampled,
        });
    }
    let share =
        |fitting: usize, least: usize| fitting >= least && fitting * 100 >= OUTPUT_SHARE * sampled;
    let vcs = lines.iter().filter(|l| vcs_line(l)).count();
    if share(vcs, 2) {
        return Some(signal(Asked::Vcs, vcs, sampled));
    }
    let hits = hits(&lines);
    if share(hits, 2) {
        return Some(signal(Asked::Hits, hits, sampled));
    }
    let paths = lines.iter().filter(|l| path_line(l)).count();
    if share(paths, OUTPUT_LINES) {
        return Some(signal(Asked::Paths, paths, sampled));
    }
    None
}

/// An aligned table: told after a log's signals (a log's fixed-width timestamps and levels
/// line up in columns too).
pub(crate) fn table(sample: &Sample<'_>) -> Option<OutputSignal> {
    let lines: Vec<&str> = sample.lines().filter(|l| !l.trim().is_empty()).collect();
    let sampled = lines.len();
    if sampled < OUTPUT_LINES {
        return None;
    }
    let listed = lines.iter().filter(|l| long_listing_line(l)).count();
    if listed * 100 >= OUTPUT_SHARE * sampled {
        return Some(signal(Asked::Table, listed, sampled));
    }
    let aligned = aligned(&lines);
    (aligned * 100 >= OUTPUT_SHARE * sampled).then(|| signal(Asked::Table, aligned, sampled))
}

fn signal(what: Asked, lines: usize, sampled: usize) -> OutputSignal {
    OutputSignal {
        what,
        lines,
        sampled,
    }
}

/// The number of hex digits at the start of `text` (7 to 40 make an abbreviated or whole
/// object name), followed by a space.
fn hash_then_space(text: &str) -> bool {
    let digits = text
        .bytes()
        .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        .count();
    (7..=40).contains(&digits) && text.as_bytes().get(digits) == Some(&b' ')
}

/// The first line of `git log`, `git show`, `git diff`, `diff -u` (`---` then `+++`), `git
/// format-patch`; `next` is the line after it.
fn vcs_opening(line: &str, next: &str) -> bool {
    if let Some(rest) = line.strip_prefix("commit ") {
        let digits = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        return (7..=64).contains(&digits);
    }
    if let Some(rest) = line.strip_prefix("From ") {
        return rest.bytes().take_while(u8::is_ascii_hexdigit).count() == 40;
    }
    line.starts_with("diff --git ")
        || line.starts_with("diff -")
        || line.starts_with("diff --cc ")
        || (line.starts_with("--- ") && next.starts_with("+++ "))
}

/// A line of `git log --oneline` (maybe under `--graph`), `git log --format='%h …'`, `git
/// blame` (`^` marks a boundary commit), or a diffstat (` src/a.rs | 12 +++--`,
/// ` 3 files changed, …`).
fn vcs_line(line: &str) -> bool {
    let body = line.trim_start_matches(['*', '|', ' ', '/', '\\']);
    let body = body.strip_prefix('^').unwrap_or(body);
    if hash_then_space(body) {
        return true;
    }
    let trimmed = line.trim();
    if let Some((_, counts)) = trimmed.rsplit_once(" | ") {
        let counts = counts.trim_start();
        let digits = counts.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &counts[digits..];
        return (digits > 0 && rest.bytes().all(|b| matches!(b, b' ' | b'+' | b'-')))
            || counts.starts_with("Bin ");
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0
        && (trimmed[digits..].starts_with(" file changed")
            || trimmed[digits..].starts_with(" files changed"))
}

/// Where a hit's path ends in `line`: the `:` of `path:N:`, or of `path:` when the path has a
/// folder (`grep -r` without `-n`). The path holds no whitespace.
fn hit_path(line: &str) -> Option<(&str, bool)> {
    let head = &line.as_bytes()[..line.len().min(512)];
    let mut from = 0;
    while let Some(at) = head[from..].iter().position(|&b| b == b':') {
        let at = from + at;
        let path = &line[..at];
        if !path_like(path) {
            break;
        }
        let rest = &head[at + 1..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest.get(digits) == Some(&b':') {
            return Some((path, true));
        }
        from = at + 1;
    }
    let at = line.find(':')?;
    let path = &line[..at];
    let plain = !path.is_empty()
        && path.contains('/')
        && !path.contains("//")
        && !path.bytes().any(|b| b == b' ' || b == b'\t');
    // Not a URL (`https://`), nor a test's node id (pytest's `tests/test_a.py::test_x PASSED`).
    (plain && !line[at..].starts_with("://") && !line[at..].starts_with("::"))
        .then_some((path, false))
}

/// A hit's path: no whitespace, and a folder, an extension, or a name of letters alone
/// (`Makefile`); not a timestamp's date and hour (`2026-12-03T10`).
fn path_like(path: &str) -> bool {
    !path.is_empty()
        && !path.bytes().any(|b| b == b' ' || b == b'\t')
        && (path.contains(['/', '.'])
            || path
                .bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'-'))
}

/// A compiler's located diagnostic, which shares the form `path:N:` with a hit:
/// `src/a.c:12:5: error: …`, `a.py:3: warning: …`.
fn located_diagnostic(after_path: &str) -> bool {
    let rest = after_path.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':');
    let rest = rest.trim_start();
    [
        "error:",
        "warning:",
        "note:",
        "fatal error:",
        "error[",
        "warning[",
    ]
    .iter()
    .any(|kind| rest.starts_with(kind))
}

/// How many of `lines` are hits: `path:N:text` or `path:text` matches (not a compiler's
/// located diagnostics), `path-N-text` context lines of a path that has a match among them,
/// and `--` group separators.
fn hits(lines: &[&str]) -> usize {
    let mut matched: Vec<&str> = Vec::new();
    let mut fitting = 0;
    for line in lines {
        if let Some((path, numbered)) = hit_path(line)
            && !(numbered && located_diagnostic(&line[path.len() + 1..]))
        {
            if matched.last() != Some(&path) && !matched.contains(&path) {
                matched.push(path);
            }
            fitting += 1;
        }
    }
    if matched.is_empty() {
        return 0;
    }
    for line in lines {
        if *line == "--" || context_of(line, &matched) {
            fitting += 1;
        }
    }
    fitting
}

/// `path-N-text` for one of `paths`.
fn context_of(line: &str, paths: &[&str]) -> bool {
    paths.iter().any(|path| {
        line.strip_prefix(path)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|rest| {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                digits > 0 && rest.as_bytes().get(digits) == Some(&b'-')
            })
    })
}

/// One path: a line without whitespace (`src/a.rs`, `Cargo.toml`, `./src:` heading an `ls -R`
/// section), a path from a root that may hold spaces (`./My Files/a b.txt`, `/srv/x y`), or
/// `git status --short`'s `XY path`.
fn path_line(line: &str) -> bool {
    if line.len() > 4096 {
        return false;
    }
    let status = line.as_bytes();
    if status.len() > 3
        && status[..2] != *b"  "
        && status[..2].iter().all(|b| b" MADRCUT?!".contains(b))
        && status[2] == b' '
        && status[3] != b' '
    {
        return true;
    }
    let first = line.as_bytes()[0];
    // Not markup or code, not `KEY=value` (an environment file), not CSV.
    if matches!(
        first,
        b'#' | b'-' | b'{' | b'}' | b'[' | b'<' | b'"' | b'\'' | b'(' | b')'
    ) || line.contains(['=', ','])
    {
        return false;
    }
    if line.starts_with("./") || line.starts_with('/') || line.starts_with("~/") {
        return !line.ends_with(' ');
    }
    !line.bytes().any(|b| b == b' ' || b == b'\t')
}

/// A line of `ls -l`: `total 48`, or a mode string then a space
/// (`-rw-r--r--`, `drwxr-xr-x.`, `lrwxrwxrwx@`), or an `ls -lR` section's heading (`./src:`).
fn long_listing_line(line: &str) -> bool {
    if let Some(rest) = line.strip_prefix("total ") {
        return rest.bytes().next().is_some_and(|b| b.is_ascii_digit());
    }
    if line.ends_with(':') && !line.contains(' ') {
        return true;
    }
    let bytes = line.as_bytes();
    if bytes.len() < 11 || !b"-bcdlpsDn".contains(&bytes[0]) {
        return false;
    }
    let mode = bytes[1..10].iter().all(|b| b"rwxsStTl-".contains(b));
    let after = &bytes[10..];
    mode && (after[0] == b' ' || (b".+@".contains(&after[0]) && after.get(1) == Some(&b' ')))
}

/// How many of `lines` share the table's column starts: a column starts where a word follows a
/// space at the same byte in almost every line (at least [`OUTPUT_SHARE`] percent), after the
/// line's first word; a table has at least one such column. The lines that hold a word at
/// each shared start are counted.
fn aligned(lines: &[&str]) -> usize {
    const WIDTH: usize = 256;
    let mut starts = [0usize; WIDTH];
    for line in lines {
        let bytes = &line.as_bytes()[..line.len().min(WIDTH)];
        let mut seen_word = false;
        for (at, pair) in bytes.windows(2).enumerate() {
            if pair[0] != b' ' {
                seen_word = true;
            } else if pair[1] != b' ' && seen_word {
                starts[at + 1] += 1;
            }
        }
    }
    let shared: Vec<usize> = (1..WIDTH)
        .filter(|&at| starts[at] * 100 >= OUTPUT_SHARE * lines.len())
        .collect();
    if shared.is_empty() {
        return 0;
    }
    lines
        .iter()
        .filter(|line| {
            let bytes = line.as_bytes();
            shared
                .iter()
                .all(|&at| at < bytes.len() && bytes[at - 1] == b' ' && bytes[at] != b' ')
        })
        .count()
}
