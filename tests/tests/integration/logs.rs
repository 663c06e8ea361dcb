//! The built-in `log` codec through a real host, held to issue 17's "done when":
//!
//! - over the seeded corpus (`corpus/logs/*.log`) and the real captures (`corpus/logs/real/`),
//!   with the ground truth of `corpus/logs/failures.json` (never the codec's own
//!   classification): every failure line comes out verbatim, every marker's counts are recounted
//!   from the original, compressing the output again changes nothing, and the tee gives the
//!   original back byte for byte;
//! - `corpus/build-log.txt` and the sample session's three build logs within their token
//!   targets (o200k);
//! - hostile text (no newline, one 8 MB line, only carriage returns, NULs, CRLF, only empty
//!   lines, invalid UTF-8) never panics and, when cut, keeps the same guarantees.
//!
//! # The grammar the recount reads
//!
//! Every line of the codec's output is one of:
//! - a verbatim line: an original line exactly, after ANSI sequences are removed and
//!   carriage-return redraws resolved (the last non-empty text between carriage returns);
//! - a fold line `[×N lines A-B] TEMPLATE (first … last)`: N original lines within the 1-based
//!   inclusive range A-B, each matching TEMPLATE; `(first … last)` (omitted for exact repeats)
//!   shows what varied in the first and the last of them;
//! - an omission marker `[… N lines omitted, lines A-B: DETAIL; 0 failure lines omitted; full
//!   text: _tee]`: N original lines within A-B that appear neither verbatim nor in a fold.
//!
//! Numbers may carry `,` thousands separators. The recount gives every original line one fate
//! (verbatim, folded, omitted) and checks each line of the output against the lines it claims,
//! so a count that is off by one, a fold that claims a line its template does not match, a line
//! accounted twice or not at all, or a verbatim line that is not an original line all fail.
//! The codec's module docs (`codecs/src/log/mod.rs`) state the same grammar, with regions.
//!
//! With `PARROT_LOGS_DUMP=<dir>` set, each log's codec output is written to `<dir>/<name>.out`,
//! to read beside a failure's list of problems.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parrot_host::{
    Budgets, Call, Host, Input, Level, MemoryTeeStore, Outcome, Payload, Processed, TokenCounter,
    Tokenizer,
};
use serde_json::Value;

/// The tool every corpus log is sent as.
const TOOL: &str = "log";

/// The project manifest: the corpus tool and the session's build tool on the `log` codec.
const MANIFEST: &str = "[compressor.\"log\"]\ncodec = \"log\"\nlevel = \"normal\"\n\
     [compressor.\"shell_cargo_build\"]\ncodec = \"log\"\nlevel = \"normal\"\n";

/// A host on [`MANIFEST`] with a memory tee store, compressing inline at any size with
/// budgets no debug build misses (the breaker must not turn a slow debug run into passthrough).
fn host() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".parrot")).expect("project folder");
    std::fs::write(dir.path().join(".parrot/compressors.toml"), MANIFEST).expect("manifest");
    let forever = Duration::from_secs(3600);
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::new(10_000)))
        .inline_at_any_size(true)
        .budgets(Budgets {
            minimal_budget: forever,
            inline_budget: forever,
            executor_budget: forever,
            ..Budgets::default()
        })
        .build()
        .unwrap_or_else(|err| panic!("{err}"));
    (dir, host)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// The original's lines, as the grammar sees them.
// ---------------------------------------------------------------------------------------------

/// `line` without ANSI escape sequences: CSI (`ESC [`, parameter and intermediate bytes, a
/// final byte), OSC (`ESC ]` … BEL or `ESC \\`), and two-byte escapes (`ESC` and one byte of
/// 0x20-0x7e). A sequence cut short by an unexpected byte ends there, and that byte is kept.
fn strip_ansi(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != 0x1b {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        i += 1;
        match bytes.get(i) {
            Some(b'[') => {
                i += 1;
                while bytes.get(i).is_some_and(|b| (0x20..=0x3f).contains(b)) {
                    i += 1;
                }
                if bytes.get(i).is_some_and(|b| (0x40..=0x7e).contains(b)) {
                    i += 1;
                }
            }
            Some(b']') => {
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|&b| b != 0x07 && b != 0x1b && b >= 0x20)
                {
                    i += 1;
                }
                if bytes.get(i) == Some(&0x07) {
                    i += 1;
                } else if bytes.get(i) == Some(&0x1b) && bytes.get(i + 1) == Some(&b'\\') {
                    i += 2;
                }
            }
            Some(b) if (0x20..=0x7e).contains(b) => i += 1,
            _ => {}
        }
    }
    // Only whole ASCII sequences were removed: the rest is the line's own UTF-8.
    String::from_utf8(out).expect("UTF-8 stays UTF-8 when ASCII sequences are removed")
}

/// What a terminal shows of one `\n`-separated line: without ANSI sequences, without a
/// CRLF's `\r`, the last non-empty state of a carriage-return redraw.
fn resolve(raw: &str) -> String {
    let plain = strip_ansi(raw);
    let body = plain.strip_suffix('\r').unwrap_or(&plain);
    body.rsplit('\r')
        .find(|part| !part.is_empty())
        .unwrap_or("")
        .to_owned()
}

/// The original's lines, 1-based at index + 1: split on `\n`, a final `\n` ending the last
/// line rather than starting an empty one.
fn original_lines(text: &str) -> Vec<String> {
    split_lines(text).map(resolve).collect()
}

/// `text`'s `\n`-separated lines, a final `\n` ending the last line rather than starting an
/// empty one.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .take(if text.is_empty() { 0 } else { usize::MAX })
}

// ---------------------------------------------------------------------------------------------
// Parsing the output.
// ---------------------------------------------------------------------------------------------

/// One line of the codec's output.
#[derive(Debug)]
enum Item<'a> {
    Verbatim(&'a str),
    Fold {
        n: usize,
        range: (usize, usize),
        template: &'a str,
        span: Option<(&'a str, &'a str)>,
    },
    Omission {
        n: usize,
        range: (usize, usize),
        failures: usize,
    },
    /// `[×N warnings like this, lines A-B; wm_get_result {"lines":"A-B"}]`, right after the
    /// first of the N lines of a warning's template (line A); it stands for no line itself.
    Warnings {
        n: usize,
        range: (usize, usize),
    },
}

/// A count: digits, with `,` only as a thousands separator (`1,212`, never `12,12`).
fn number(text: &str) -> Option<usize> {
    let mut groups = text.split(',');
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 && text.contains(',') {
        return None;
    }
    let mut digits = first.to_owned();
    for group in groups {
        if group.len() != 3 {
            return None;
        }
        digits.push_str(group);
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `A-B`, 1-based and inclusive, A ≤ B.
fn range(text: &str) -> Option<(usize, usize)> {
    let (a, b) = text.split_once('-')?;
    let (a, b) = (number(a)?, number(b)?);
    (1 <= a && a <= b).then_some((a, b))
}

/// Splits a fold's tail into its template and its `(first … last)`, when it ends with one.
fn template_and_span(tail: &str) -> (&str, Option<(&str, &str)>) {
    if let Some(inner) = tail.strip_suffix(')') {
        // The span is the last ` (` … `)` group holding ` … `; a template may end in a
        // parenthesis of its own (`Compiling x v<n> (/path)`), which has no ` … `.
        if let Some(open) = inner.rfind(" (") {
            let span = &inner[open + 2..];
            if let Some((first, last)) = span.split_once(" … ") {
                return (&tail[..open], Some((first, last)));
            }
        }
    }
    (tail, None)
}

fn parse_item(line: &str) -> Result<Item<'_>, String> {
    if let Some(rest) = line.strip_prefix("[×")
        && let Some((n, rest)) = rest.split_once(" warnings like this, lines ")
    {
        let bad = || format!("a malformed warning count: {line:?}");
        let (lines, selector) = rest.split_once("; wm_get_result ").ok_or_else(bad)?;
        if selector != format!("{{\"lines\":\"{lines}\"}}]") {
            return Err(bad());
        }
        return Ok(Item::Warnings {
            n: number(n).ok_or_else(bad)?,
            range: range(lines).ok_or_else(bad)?,
        });
    }
    if let Some(rest) = line.strip_prefix("[×") {
        let bad = || format!("a malformed fold line: {line:?}");
        // A count of one takes the singular.
        let (n, rest) = rest
            .strip_prefix("1 line ")
            .map(|rest| ("1", rest))
            .or_else(|| rest.split_once(" lines "))
            .ok_or_else(bad)?;
        let (lines, tail) = rest.split_once("] ").ok_or_else(bad)?;
        let (template, span) = template_and_span(tail);
        return Ok(Item::Fold {
            n: number(n).ok_or_else(bad)?,
            range: range(lines).ok_or_else(bad)?,
            template,
            span,
        });
    }
    if let Some(rest) = line.strip_prefix("[… ") {
        let bad = || format!("a malformed omission marker: {line:?}");
        let (rest, selector) = rest.rsplit_once("; wm_get_result ").ok_or_else(bad)?;
        let (n, rest) = rest
            .strip_prefix("1 line omitted, lines ")
            .map(|rest| ("1", rest))
            .or_else(|| rest.split_once(" lines omitted, lines "))
            .ok_or_else(bad)?;
        let (lines, detail) = rest.split_once(": ").ok_or_else(bad)?;
        // The selector returns exactly the region.
        if selector != format!("{{\"lines\":\"{lines}\"}}]") {
            return Err(bad());
        }
        // The detail is free text in `; `-separated parts, one of them the failure count.
        let failures = detail
            .split("; ")
            .find_map(|part| match part {
                "1 failure line omitted" => Some(1),
                _ => number(part.strip_suffix(" failure lines omitted")?),
            })
            .ok_or_else(bad)?;
        return Ok(Item::Omission {
            n: number(n).ok_or_else(bad)?,
            range: range(lines).ok_or_else(bad)?,
            failures,
        });
    }
    Ok(Item::Verbatim(line))
}

/// The placeholders a fold's template puts where its lines differ (the codec's template docs).
const PLACEHOLDERS: &[&str] = &[
    "<uuid>", "<time>", "<path>", "<dur>", "<ver>", "<n>", "<hex>", "<test>",
];

fn digits(text: &[u8]) -> usize {
    text.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// The placeholder a value becomes, tried in the codec's order: `<uuid>` (8-4-4-4-12 hex),
/// `<time>` (a date `2026-11-29` or `2026/11/29`, or a clock time `10:08` with anything
/// after), `<path>` (a `/` or `\` and a letter), `<dur>` (number-unit pairs: `12ms`, `1.5s`,
/// `2m30s`), `<ver>` (`v1.2`, `1.2.3`, `1.2.3-rc1`), `<n>` (`12`, `-3.5`, `1,024`, `99%`,
/// `3x`), `<hex>` (`0x1f`, six or more hex digits).
fn placeholder_of(text: &str) -> Option<&'static str> {
    let b = text.as_bytes();
    let uuid = b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        });
    let date = b.len() >= 10
        && digits(b) == 4
        && (b[4] == b'-' || b[4] == b'/')
        && digits(&b[5..]) == 2
        && b[7] == b[4]
        && digits(&b[8..]) == 2;
    let hour = digits(b);
    let clock = (1..=2).contains(&hour)
        && b.get(hour) == Some(&b':')
        && digits(&b[hour + 1..]) == 2
        && b.get(hour + 3).is_none_or(|c| b":.,Z+-".contains(c));
    let path = b.iter().any(|c| *c == b'/' || *c == b'\\') && b.iter().any(u8::is_ascii_alphabetic);
    if uuid {
        Some("<uuid>")
    } else if date || clock {
        Some("<time>")
    } else if path {
        Some("<path>")
    } else if is_duration(b) {
        Some("<dur>")
    } else if is_version(b) {
        Some("<ver>")
    } else if is_number(b) {
        Some("<n>")
    } else if b.strip_prefix(b"0x").map_or(
        b.len() >= 6 && b.iter().all(u8::is_ascii_hexdigit),
        |rest| !rest.is_empty() && rest.iter().all(u8::is_ascii_hexdigit),
    ) {
        Some("<hex>")
    } else {
        None
    }
}

fn is_duration(b: &[u8]) -> bool {
    // Longest units first, so that `ms` is not read as `m` then `s`.
    const UNITS: [&str; 10] = [
        "secs", "sec", "min", "ns", "us", "\u{b5}s", "ms", "s", "m", "h",
    ];
    let mut rest = b;
    while !rest.is_empty() {
        let whole = digits(rest);
        if whole == 0 {
            return false;
        }
        rest = &rest[whole..];
        if let Some(frac) = rest.strip_prefix(b".") {
            if digits(frac) == 0 {
                return false;
            }
            rest = &frac[digits(frac)..];
        }
        match UNITS.iter().find(|unit| rest.starts_with(unit.as_bytes())) {
            Some(unit) => rest = &rest[unit.len()..],
            None => return false,
        }
    }
    !b.is_empty()
}

/// Dot-separated digit runs, optionally after `v`: three or more runs, or with the `v` two or
/// one; then nothing, or a `-`/`+` suffix of letters, digits, dots, dashes and pluses.
fn is_version(b: &[u8]) -> bool {
    let v = usize::from(matches!(b.first(), Some(b'v' | b'V')));
    let mut i = v;
    let mut parts = 0;
    loop {
        let run = digits(&b[i..]);
        if run == 0 {
            return false;
        }
        i += run;
        parts += 1;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        } else {
            break;
        }
    }
    let enough = if v == 1 {
        parts >= 2 || i == b.len()
    } else {
        parts >= 3
    };
    let suffix = &b[i..];
    enough
        && suffix.first().is_none_or(|c| *c == b'-' || *c == b'+')
        && suffix
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-+.".contains(c))
}

/// Digit runs joined by `.`, `,` or `_`, optionally signed, optionally ending in `%` or `x`.
fn is_number(b: &[u8]) -> bool {
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    loop {
        let run = digits(&b[i..]);
        if run == 0 {
            return false;
        }
        i += run;
        if b.get(i).is_some_and(|c| b".,_".contains(c))
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            i += 1;
        } else {
            break;
        }
    }
    matches!(&b[i..], b"" | b"%" | b"x")
}

/// Whether `line` is `template` with each placeholder standing for a value it would become:
/// `<test>` for a test's name (any text, spaces included), the others for a piece of one word
/// that [`placeholder_of`] gives that placeholder.
fn matches(template: &str, line: &str) -> bool {
    // Literal pieces, each after the placeholder that precedes it (None for the first).
    let mut pieces: Vec<(Option<&str>, &str)> = vec![];
    let mut rest = template;
    let mut before = None;
    loop {
        let next = PLACEHOLDERS
            .iter()
            .filter_map(|p| rest.find(p).map(|at| (at, *p)))
            .min();
        match next {
            Some((at, placeholder)) => {
                pieces.push((before, &rest[..at]));
                before = Some(placeholder);
                rest = &rest[at + placeholder.len()..];
            }
            None => {
                pieces.push((before, rest));
                break;
            }
        }
    }
    glob(&pieces, line)
}

/// Whether `line` matches `pieces` (see [`matches`]), by backtracking over each placeholder's
/// possible lengths (templates have few placeholders and lines are short).
fn glob(pieces: &[(Option<&str>, &str)], line: &str) -> bool {
    let Some(((placeholder, literal), rest)) = pieces.split_first() else {
        return line.is_empty();
    };
    let Some(placeholder) = placeholder else {
        return line
            .strip_prefix(literal)
            .is_some_and(|line| glob(rest, line));
    };
    let test = *placeholder == "<test>";
    for (at, c) in line.char_indices() {
        if !test && (c == ' ' || c == '\t') {
            return false;
        }
        let (value, after) = line.split_at(at + c.len_utf8());
        if after.starts_with(literal)
            && (test || placeholder_of(value) == Some(placeholder))
            && glob(rest, &after[literal.len()..])
        {
            return true;
        }
    }
    false
}

// ---------------------------------------------------------------------------------------------
// The recount.
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    Unaccounted,
    Verbatim,
    Folded(usize),
    Omitted(usize),
}

/// Checks `output` (the codec's text) against `original` and its failure lines (1-based):
/// every problem found, as sentences naming the output line or the original line.
fn recount(original: &str, output: &str, failures: &[usize]) -> Vec<String> {
    let lines = original_lines(original);
    let total = lines.len();
    let mut problems = vec![];
    let items: Vec<(usize, Item<'_>)> = split_lines(output)
        .enumerate()
        .filter_map(|(at, line)| match parse_item(line) {
            Ok(item) => Some((at + 1, item)),
            Err(err) => {
                problems.push(format!("output line {}: {err}", at + 1));
                None
            }
        })
        .collect();
    let mut fate = vec![Fate::Unaccounted; total];

    // Verbatim lines, in order: each the first original line at or after the cursor with its
    // text. A fold moves the cursor to its first line (the lines it interrupts come after it),
    // an omission past its last.
    let mut cursor = 0;
    // The original line (1-based) of the verbatim line just before, if the last item was one.
    let mut after_verbatim = None;
    for (at, item) in &items {
        let verbatim = after_verbatim.take();
        match item {
            Item::Verbatim(text) => {
                match (cursor..total).find(|&i| fate[i] == Fate::Unaccounted && lines[i] == *text) {
                    Some(i) => {
                        fate[i] = Fate::Verbatim;
                        cursor = i + 1;
                        after_verbatim = Some(i + 1);
                    }
                    None => problems.push(format!(
                        "output line {at}: {text:?} is not an original line at or after line {}",
                        cursor + 1
                    )),
                }
            }
            Item::Fold { range, .. } => cursor = cursor.max(range.0 - 1),
            Item::Omission { range, .. } => cursor = cursor.max(range.1),
            Item::Warnings { n, range: (a, b) } => {
                if verbatim != Some(*a) || *b > total || *n < 2 || *n > b - a + 1 {
                    problems.push(format!(
                        "output line {at}: a warning count of {n} in {a}-{b} that does not follow \
                         its first line (the line before is original line {verbatim:?}) or does \
                         not fit in the original's {total} lines"
                    ));
                }
            }
        }
    }

    let mut accounted = fate.iter().filter(|f| **f == Fate::Verbatim).count();
    for (at, item) in &items {
        let Item::Fold {
            n,
            range: (a, b),
            template,
            span,
        } = item
        else {
            continue;
        };
        if *b > total {
            problems.push(format!(
                "output line {at}: fold range {a}-{b} past the original's {total} lines"
            ));
            continue;
        }
        let claimed: Vec<usize> = (a - 1..*b)
            .filter(|&i| fate[i] == Fate::Unaccounted && matches(template, &lines[i]))
            .collect();
        if claimed.len() != *n {
            problems.push(format!(
                "output line {at}: fold says {n} lines in {a}-{b} match {template:?}, the \
                 original has {} such lines not accounted otherwise",
                claimed.len()
            ));
        }
        if let (Some((first, last)), Some(&i), Some(&j)) = (span, claimed.first(), claimed.last())
            && (!lines[i].contains(first) || !lines[j].contains(last))
        {
            problems.push(format!(
                "output line {at}: fold span ({first} … {last}) is not in its first and last \
                 lines {:?} … {:?}",
                lines[i], lines[j]
            ));
        }
        for &i in &claimed {
            fate[i] = Fate::Folded(*at);
        }
        accounted += n;
    }

    for (at, item) in &items {
        let Item::Omission {
            n,
            range: (a, b),
            failures: said,
        } = item
        else {
            continue;
        };
        if *b > total {
            problems.push(format!(
                "output line {at}: omission range {a}-{b} past the original's {total} lines"
            ));
            continue;
        }
        let omitted: Vec<usize> = (a - 1..*b)
            .filter(|&i| fate[i] == Fate::Unaccounted)
            .collect();
        if omitted.len() != *n {
            problems.push(format!(
                "output line {at}: marker says {n} lines omitted in {a}-{b}, the original has {} \
                 lines there neither verbatim nor folded",
                omitted.len()
            ));
        }
        if *said != 0 {
            problems.push(format!(
                "output line {at}: marker says {said} failure lines omitted"
            ));
        }
        for &i in &omitted {
            fate[i] = Fate::Omitted(*at);
        }
        accounted += n;
    }

    let unaccounted: Vec<usize> = (0..total)
        .filter(|&i| fate[i] == Fate::Unaccounted)
        .map(|i| i + 1)
        .collect();
    if !unaccounted.is_empty() {
        problems.push(format!(
            "{} original lines appear nowhere (verbatim, folded or omitted), first ones: {:?}",
            unaccounted.len(),
            &unaccounted[..unaccounted.len().min(10)]
        ));
    }
    if accounted != total {
        problems.push(format!(
            "verbatim lines + fold counts + omission counts = {accounted}, the original has \
             {total} lines"
        ));
    }

    // The ground truth: each failure line verbatim (its own position, and its text among the
    // output's lines).
    let output_lines: std::collections::HashSet<&str> = split_lines(output).collect();
    for &line in failures {
        let Some(text) = lines.get(line - 1) else {
            problems.push(format!(
                "failure line {line} is past the original's {total} lines"
            ));
            continue;
        };
        if !output_lines.contains(text.as_str()) {
            problems.push(format!(
                "failure line {line} is not in the output: {text:?}"
            ));
            continue;
        }
        match fate[line - 1] {
            Fate::Verbatim => {}
            Fate::Folded(at) => problems.push(format!(
                "failure line {line} {text:?} is folded by output line {at}"
            )),
            Fate::Omitted(at) => problems.push(format!(
                "failure line {line} {text:?} is omitted by output line {at}"
            )),
            Fate::Unaccounted => problems.push(format!(
                "failure line {line} {text:?} is not accounted in order"
            )),
        }
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// One log through the codec and the host.
// ---------------------------------------------------------------------------------------------

/// The text the model reads, without its pointer: the text before the pointer line when the
/// outcome was teed (CONTRACT §5), the payload itself otherwise.
fn model_text(out: &Processed<'_>) -> String {
    let text = out.text().expect("a text payload");
    if out.meta.teed {
        let pointed = crate::support::pointed(text)
            .unwrap_or_else(|| panic!("a teed text result ends with its pointer line: {text}"));
        assert_eq!(Some(&pointed.key), out.meta.tee_key.as_ref());
        return pointed.text;
    }
    text.to_owned()
}

/// The codec's own output for `text` at `normal`: `None` when it leaves the text alone.
fn codec_output(host: &Host, tool: &str, text: &str) -> Option<String> {
    match host.compress(tool, Payload::text_only(text), Level::Normal) {
        Ok(Outcome::Unchanged) => None,
        Ok(Outcome::Changed { payload, .. }) => Some(payload),
        Err(err) => panic!("{err}"),
    }
}

/// Every check of one log, as problems prefixed with `name`: (a) failure lines verbatim and
/// (b) the recount, on the codec's output and on what the host sends; (c) the codec's output
/// a fixed point; (d) the original recovered byte for byte when teed.
fn check_log(host: &Host, tool: &str, name: &str, text: &str, failures: &[usize]) -> Vec<String> {
    let mut problems = vec![];
    // Left alone, the original goes out whole: nothing to recount.
    let codec = codec_output(host, tool, text);
    if let Some(codec) = &codec {
        if let Some(dir) = std::env::var_os("PARROT_LOGS_DUMP") {
            let path = Path::new(&dir).join(name.replace('/', "_"));
            std::fs::write(path.with_extension("out"), codec).expect("dump");
        }
        problems.extend(recount(text, codec, failures));
        if let Some(again) = codec_output(host, tool, codec).filter(|again| again != codec) {
            problems.push(format!(
                "compressing the output again changed it ({} bytes to {} bytes)",
                codec.len(),
                again.len()
            ));
        }
    }
    let codec = codec.unwrap_or_else(|| text.to_owned());

    let out = host.process(Call::new(tool, Input::Text(text)));
    let seen = model_text(&out);
    if out.meta.teed {
        let key = out.meta.tee_key.as_deref().expect("a tee key");
        match host.recover(key) {
            Ok(Some(original)) if original == text.as_bytes() => {}
            Ok(Some(_)) => problems.push("the tee holds different bytes".to_owned()),
            Ok(None) => problems.push(format!("the tee has no entry {key}")),
            Err(err) => problems.push(format!("the tee failed: {err}")),
        }
        if seen != codec {
            problems.push("the host sent another text than the codec's output".to_owned());
        }
    } else if out.meta.compressed {
        problems.push(format!(
            "a changed outcome went out without the original teed: {:?}",
            out.meta
        ));
    } else if seen != text {
        problems.push("an unchanged outcome is not the original".to_owned());
    }
    problems
        .into_iter()
        .map(|problem| format!("{name}: {problem}"))
        .collect()
}

fn failures_manifest() -> serde_json::Map<String, Value> {
    let path = workspace().join("corpus/logs/failures.json");
    match serde_json::from_str(&read(&path)) {
        Ok(Value::Object(map)) => map,
        other => panic!("{}: not a JSON object: {other:?}", path.display()),
    }
}

fn line_numbers(name: &str, value: &Value) -> Vec<usize> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("failures.json: {name}: not an array"))
        .iter()
        .map(|n| {
            n.as_u64()
                .unwrap_or_else(|| panic!("failures.json: {name}: {n} is not a line number"))
                as usize
        })
        .collect()
}

/// Every log of the corpus and the real captures against the ground truth; one failure
/// listing every problem of every file.
#[test]
fn every_failure_line_survives_verbatim_and_every_count_is_exact() {
    let (_dir, host) = host();
    let manifest = failures_manifest();
    let dir = workspace().join("corpus/logs");
    let mut on_disk: Vec<String> = ["", "real/"]
        .iter()
        .flat_map(|sub| {
            let folder = dir.join(sub);
            std::fs::read_dir(&folder)
                .unwrap_or_else(|err| panic!("{}: {err}", folder.display()))
                .map(|entry| entry.expect("dir entry").path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
                .map(move |path| format!("{sub}{}", path.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = manifest.keys().cloned().collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "failures.json lists exactly the logs on disk"
    );
    let generated = listed.iter().filter(|n| !n.starts_with("real/")).count();
    assert!(generated >= 30, "{generated} generated logs");
    assert!(listed.len() - generated >= 3, "the real captures");

    let mut problems = vec![];
    for (name, lines) in &manifest {
        let failures = line_numbers(name, lines);
        assert!(!failures.is_empty(), "{name}: no failure lines listed");
        let text = read(&dir.join(name));
        problems.extend(check_log(&host, TOOL, name, &text, &failures));
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The recount itself fails on what it must catch: a count off by one, a verbatim line that
/// is not the original's, a fold whose template does not match, a failure line omitted, a
/// marker whose selector is not its region.
#[test]
fn the_recount_catches_wrong_counts_and_lost_lines() {
    let original = "a 1\na 2\na 3\nERROR x\nb\nc\n";
    let good = "[×3 lines 1-3] a <n> (1 … 3)\nERROR x\n[… 2 lines omitted, lines 5-6: b, c; 0 failure lines omitted; wm_get_result {\"lines\":\"5-6\"}]";
    assert_eq!(recount(original, good, &[4]), Vec::<String>::new());
    let rows = [
        // An omission count one short.
        "[×3 lines 1-3] a <n> (1 … 3)\nERROR x\n[… 1 lines omitted, lines 5-6: b; 0 failure lines omitted; wm_get_result {\"lines\":\"5-6\"}]",
        // A fold claiming one line more than match.
        "[×4 lines 1-3] a <n> (1 … 3)\nERROR x\n[… 2 lines omitted, lines 5-6: b, c; 0 failure lines omitted; wm_get_result {\"lines\":\"5-6\"}]",
        // A fold template matching nothing.
        "[×3 lines 1-3] z <n> (1 … 3)\nERROR x\n[… 2 lines omitted, lines 5-6: b, c; 0 failure lines omitted; wm_get_result {\"lines\":\"5-6\"}]",
        // The failure line omitted.
        "[×3 lines 1-3] a <n> (1 … 3)\n[… 3 lines omitted, lines 4-6: x; 0 failure lines omitted; wm_get_result {\"lines\":\"4-6\"}]",
        // A selector that does not return the region.
        "[×3 lines 1-3] a <n> (1 … 3)\nERROR x\n[… 2 lines omitted, lines 5-6: b, c; 0 failure lines omitted; wm_get_result {\"lines\":\"5-7\"}]",
        // A verbatim line that was never there.
        "[×3 lines 1-3] a <n> (1 … 3)\nERROR y\n[… 2 lines omitted, lines 5-6: b, c; 0 failure lines omitted; wm_get_result {\"lines\":\"5-6\"}]",
        // Line 6 accounted nowhere.
        "[×3 lines 1-3] a <n> (1 … 3)\nERROR x\nb",
        // A wrong span.
        "[×3 lines 1-3] a <n> (1 … 9)\nERROR x\n[… 2 lines omitted, lines 5-6: b, c; 0 failure lines omitted; wm_get_result {\"lines\":\"5-6\"}]",
    ];
    for row in rows {
        assert!(!recount(original, row, &[4]).is_empty(), "accepted:\n{row}");
    }
    assert_eq!(number("1,212"), Some(1212));
    assert_eq!(number("12,12"), None);
    assert_eq!(resolve("\u{1b}[32m 50%\r100%\r"), "100%");
}

// ---------------------------------------------------------------------------------------------
// build-log.txt and the sample session.
// ---------------------------------------------------------------------------------------------

#[test]
fn build_log_fits_700_tokens_with_its_error_and_summary_verbatim() {
    let (_dir, host) = host();
    let text = read(&workspace().join("corpus/build-log.txt"));
    let lines = original_lines(&text);
    assert!(lines[4100].starts_with("error[E0308]"), "{}", lines[4100]);
    assert!(
        lines[6001].starts_with("test result: FAILED"),
        "{}",
        lines[6001]
    );
    let problems = check_log(&host, TOOL, "build-log.txt", &text, &[4101, 6002]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let out = host.process(Call::new(TOOL, Input::Text(&text)));
    assert!(out.meta.teed, "{:?}", out.meta);
    let payload = out.text().expect("text");
    let tokens = Tokenizer::O200k.count(payload);
    assert!(tokens <= 700, "{tokens} o200k tokens:\n{payload}");
    let seen = model_text(&out);
    for line in [&lines[4100], &lines[6001]] {
        assert!(
            split_lines(&seen).any(|l| l == line),
            "{line:?} missing:\n{seen}"
        );
    }
}

#[test]
fn session_build_logs_each_save_85_percent() {
    let (_dir, host) = host();
    let session = read(&workspace().join("samples/session.jsonl"));
    let mut seen = 0;
    for line in session.lines() {
        let call: Value = serde_json::from_str(line).expect("a JSON line");
        if call["tool"] != "shell_cargo_build" {
            continue;
        }
        seen += 1;
        let text = call["result"].as_str().expect("a text result");
        let out = host.process(Call::new("shell_cargo_build", Input::Text(text)));
        let before = Tokenizer::O200k.count(text);
        let after = Tokenizer::O200k.count(out.text().expect("text"));
        let saved = 1.0 - after as f64 / before as f64;
        assert!(
            saved >= 0.85,
            "build log {seen}: {before} → {after} o200k tokens, {:.1}% saved",
            saved * 100.0
        );
        // Its failure lines (any line the grammar's ground truth would list: the error and the
        // failed test summary) verbatim, and the counts exact.
        let failures: Vec<usize> = original_lines(text)
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("error[") || l.starts_with("test result: FAILED"))
            .map(|(i, _)| i + 1)
            .collect();
        let problems = check_log(&host, "shell_cargo_build", "session", text, &failures);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
    assert_eq!(seen, 3, "the session's shell_cargo_build calls");
}

// ---------------------------------------------------------------------------------------------
// Hostile text.
// ---------------------------------------------------------------------------------------------

/// A log whose only failure is line 2,001 of 4,000, for the hostile variants below.
fn plain_log() -> (String, usize) {
    let mut text = String::new();
    for i in 0..4000 {
        if i == 2000 {
            text.push_str("2026-11-29T10:00:00.000Z ERROR worker 7 lost its lease\n");
        } else {
            text.push_str(&format!(
                "2026-11-29T10:{:02}:{:02}.{:03}Z INFO  worker {} renewed its lease in {}ms\n",
                i / 60 % 60,
                i % 60,
                i % 1000,
                i % 8,
                i % 97
            ));
        }
    }
    (text, 2001)
}

#[test]
fn hostile_text_never_panics_and_keeps_the_guarantees() {
    let (_dir, host) = host();
    let (log, error_line) = plain_log();
    let mut cases: Vec<(&str, String, Vec<usize>)> = vec![
        ("no newline", "word ".repeat(40_000), vec![]),
        ("only carriage returns", "\r".repeat(100_000), vec![]),
        ("only empty lines", "\n".repeat(100_000), vec![]),
        (
            "NULs",
            log.replace("renewed", "re\0newed").replace("lost", "l\0st"),
            vec![error_line],
        ),
        ("CRLF", log.replace('\n', "\r\n"), vec![error_line]),
        (
            "progress redraws only",
            (0..2000)
                .map(|i| format!("{:>3}%\r", i % 100))
                .collect::<String>(),
            vec![],
        ),
    ];
    // One 8 MB line: the 50 MB of the issue take minutes through a debug build (the codec,
    // the tee copy, the checks); 8 MB is past every size threshold of the host and the codec.
    let long: String = (0..8_000_000 / 16).map(|i| format!("{i:015x} ")).collect();
    // The same line inside a log, so that the codec runs (a single line is below its
    // threshold and goes out as it came).
    let mut inside: Vec<&str> = log.lines().collect();
    inside[1000] = &long;
    let inside = inside.join("\n");
    cases.push(("an 8 MB line inside a log", inside, vec![error_line]));
    cases.push(("one 8 MB line", long, vec![]));
    cases.push(("carriage-return lines", "\r\n".repeat(5000), vec![]));
    let mut problems = vec![];
    for (name, text, failures) in &cases {
        problems.extend(check_log(&host, TOOL, name, text, failures));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // Invalid UTF-8 passes through untouched.
    let mut bytes = log.clone().into_bytes();
    bytes[100] = 0xff;
    bytes[5000] = 0xc3;
    let out = host.process(Call::new(TOOL, Input::Bytes(&bytes)));
    assert_eq!(out.payload.as_ref(), &bytes[..]);
    assert!(!out.meta.compressed);
}

// ---------------------------------------------------------------------------------------------
// Issue 36: blocks that end where the failure ends, warnings kept once with their count.
// ---------------------------------------------------------------------------------------------

/// Real captures (`corpus/logs/real/README.md`) of a failure followed by hundreds of ordinary
/// indented lines, one per block rule.
const FAILURE_THEN_INDENTED: &[&str] = &[
    "real/node-error-then-progress.log",
    "real/python-traceback-then-progress.log",
    "real/jvm-stack-then-progress.log",
    "real/go-test-fail-then-output.log",
    "real/cargo-keep-going-error-then-compiling.log",
];

/// The last line (1-based) of the first failure block of `failures`: its lines follow each
/// other with at most two lines between them (a blank line, a line a tool prints between).
fn first_block_end(failures: &[usize]) -> usize {
    let mut end = failures[0];
    for &line in &failures[1..] {
        if line > end + 3 {
            break;
        }
        end = line;
    }
    end
}

#[test]
fn a_failure_followed_by_hundreds_of_indented_lines_ends_at_its_last_frame() {
    let (_dir, host) = host();
    let manifest = failures_manifest();
    let dir = workspace().join("corpus/logs");
    let mut problems = vec![];
    for name in FAILURE_THEN_INDENTED {
        let text = read(&dir.join(name));
        let failures = line_numbers(name, &manifest[*name]);
        problems.extend(check_log(&host, TOOL, name, &text, &failures));
        let out = codec_output(&host, TOOL, &text).expect("a long log is compressed");
        let (before, after) = (Tokenizer::O200k.count(&text), Tokenizer::O200k.count(&out));
        if after * 100 > before * 15 && after > 700 {
            problems.push(format!("{name}: {before} -> {after} o200k tokens"));
        }
        // The ordinary lines after the block are folded: one fold line, starting just after
        // the block and its context lines, stands for nearly all of them.
        let end = first_block_end(&failures);
        let ordinary = original_lines(&text).len() - end;
        let folded = split_lines(&out)
            .filter_map(|line| match parse_item(line) {
                // After the block and its context lines, or after the head of the frame.
                Ok(Item::Fold { n, range, .. })
                    if range.0 > end && range.0 <= (end + 8).max(12) =>
                {
                    Some(n)
                }
                _ => None,
            })
            .max()
            .unwrap_or(0);
        if folded * 10 < ordinary * 8 {
            problems.push(format!(
                "{name}: of the {ordinary} lines after the block ending at line {end}, the fold \
                 after it stands for {folded}:\n{out}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The real `cargo build` with 164 unused variables and 40 unused functions in four crates and
/// one error: each distinct warning once, verbatim, with its exact count and range; each
/// crate's `generated N warnings` summary verbatim; the error's diagnostic verbatim.
#[test]
fn a_builds_warnings_are_kept_once_each_with_their_exact_count() {
    let (_dir, host) = host();
    let name = "real/cargo-build-warnings.log";
    let text = read(&workspace().join("corpus/logs").join(name));
    let failures = line_numbers(name, &failures_manifest()[name]);
    let problems = check_log(&host, TOOL, name, &text, &failures);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let out = codec_output(&host, TOOL, &text).expect("compressed");
    let (before, after) = (Tokenizer::O200k.count(&text), Tokenizer::O200k.count(&out));
    assert!(
        after * 100 <= before * 15 || after <= 700,
        "{before} -> {after} o200k tokens:\n{out}"
    );
    let lines = original_lines(&text);
    let output: Vec<&str> = split_lines(&out).collect();
    for (kind, count) in [
        ("warning: unused variable: `v", 164),
        ("warning: function `helper", 40),
    ] {
        let at: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with(kind))
            .collect();
        assert_eq!(at.len(), count, "{kind}: the capture's count");
        let (a, b) = (at[0] + 1, at[count - 1] + 1);
        let first = output
            .iter()
            .position(|line| *line == lines[at[0]])
            .unwrap_or_else(|| panic!("{kind}: first occurrence not kept:\n{out}"));
        assert_eq!(
            output.get(first + 1).copied(),
            Some(
                format!(
                    "[×{count} warnings like this, lines {a}-{b}; wm_get_result {{\"lines\":\"{a}-{b}\"}}]"
                )
                .as_str()
            ),
            "{kind}:\n{out}"
        );
        let verbatim = output.iter().filter(|line| line.starts_with(kind)).count();
        assert_eq!(verbatim, 1, "{kind}: one line per distinct warning:\n{out}");
    }
    let summaries: Vec<&String> = lines
        .iter()
        .filter(|line| line.starts_with("warning: `") && line.contains(") generated "))
        .collect();
    assert_eq!(summaries.len(), 4, "the four crates' summaries");
    for summary in summaries {
        assert!(output.contains(&summary.as_str()), "{summary:?}:\n{out}");
    }
}
