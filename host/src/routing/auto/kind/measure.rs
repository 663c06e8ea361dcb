//! The text-kind rule measured on data this project did not write (an ignored test; CONTRACT
//! §2.8 and the README say how to run it):
//!
//! ```text
//! PARROT_KIND_LOGS=/dir/of/more/logs cargo test -p parrot-host --release --lib kind::measure -- --ignored --nocapture
//! ```
//!
//! - **File contents**: the files of the crates the workspace's `Cargo.lock` pins, read from
//!   cargo's registry sources (`$CARGO_HOME/registry/src/*/<name>-<version>/`): `.rs`,
//!   `.toml`, `.json`, `.md`, `.yml`/`.yaml`, `.c`/`.h`, `.py`, `.sh`, `.js`, `.txt`
//!   excluded (anything), at most [`PER_CRATE`] files of each extension per crate (the first
//!   by path). Each is classified raw and as a numbered read (`format!("{:>6}\t{}", n, line)`,
//!   as `cat -n` and an agent's file read print it, and with `→`).
//! - **Logs**: `corpus/build-log.txt`, `corpus/logs/**.log`, `/var/log/dpkg.log`,
//!   `/var/log/apt/{term,history}.log`, `/var/log/alternatives.log`, and every file in
//!   `PARROT_KIND_LOGS` (captured output of real programs: `cargo build -vv`, `cargo test`,
//!   `pip install`, `npm install`); each whole and in windows of [`WINDOW`] lines (at most
//!   [`WINDOWS`] per log), as a tool would return part of one.
//!
//! Each item is in the held-out set when the FNV-1a hash of its crate (files) or its path
//! (logs) is divisible by 3, else in the tuning set. The test prints the confusion counts of
//! both sets, the o200k tokens of the log set before (the log codec on every text, the
//! routing before kinds) and after (the default `auto`), how many files the default changes,
//! how many of them lossily (a file read as a log), and what the classification costs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parrot_codec_api::{Level, Outcome, Payload, PayloadKind};
use serde_json::{Map, Value};

use super::{Kind, classify};
use crate::metering::tokens::TokenCounter;
use crate::plugins::registry::Registry;
use crate::routing::auto::Auto;

/// Files of each extension taken from one crate.
const PER_CRATE: usize = 6;
/// Lines of a log window.
const WINDOW: usize = 200;
/// Windows taken from one log.
const WINDOWS: usize = 12;
/// Files larger than this are left out (a tool reads a part of them).
const MAX_FILE: u64 = 256 * 1024;

const EXTENSIONS: &[&str] = &[
    "rs", "toml", "json", "md", "yml", "yaml", "c", "h", "py", "sh", "js",
];

fn fnv(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn held_out(id: &str) -> bool {
    fnv(id).is_multiple_of(3)
}

struct Item {
    group: String,
    held_out: bool,
    name: String,
    text: String,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The crates `Cargo.lock` pins from a registry, as `name-version`.
fn pinned() -> Vec<String> {
    let lock = std::fs::read_to_string(workspace().join("Cargo.lock")).expect("Cargo.lock");
    let lock: toml::Table = lock.parse().expect("Cargo.lock is TOML");
    lock["package"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| p.get("source").is_some())
        .map(|p| {
            format!(
                "{}-{}",
                p["name"].as_str().unwrap(),
                p["version"].as_str().unwrap()
            )
        })
        .collect()
}

fn registry_sources() -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn numbered(text: &str, arrow: bool) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (n, line) in text.lines().enumerate() {
        if arrow {
            out.push_str(&format!("{:>6}\u{2192}{line}\n", n + 1));
        } else {
            out.push_str(&format!("{:>6}\t{line}\n", n + 1));
        }
    }
    out
}

fn files() -> Vec<Item> {
    let sources = registry_sources();
    let mut items = Vec::new();
    for krate in pinned() {
        let Some(dir) = sources.iter().map(|s| s.join(&krate)).find(|d| d.is_dir()) else {
            continue;
        };
        let mut paths = Vec::new();
        walk(&dir, &mut paths);
        let mut taken: BTreeMap<&str, usize> = BTreeMap::new();
        for path in paths {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            let Some(ext) = EXTENSIONS.iter().find(|&&e| e == ext) else {
                continue;
            };
            let count = taken.entry(ext).or_default();
            if *count == PER_CRATE {
                continue;
            }
            let size = path.metadata().map(|m| m.len()).unwrap_or(0);
            if !(64..=MAX_FILE).contains(&size) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if text.lines().count() < 3 {
                continue;
            }
            *count += 1;
            let name = path.strip_prefix(&dir).unwrap().display().to_string();
            let held = held_out(&krate);
            let ext = match *ext {
                "yml" => "yaml",
                "h" => "c",
                other => other,
            };
            items.push(Item {
                group: format!("file .{ext} raw"),
                held_out: held,
                name: format!("{krate}/{name}"),
                text: text.clone(),
            });
            items.push(Item {
                group: "file numbered read (tab)".to_owned(),
                held_out: held,
                name: format!("{krate}/{name} (numbered)"),
                text: numbered(&text, false),
            });
            items.push(Item {
                group: "file numbered read (arrow)".to_owned(),
                held_out: held,
                name: format!("{krate}/{name} (numbered, arrow)"),
                text: numbered(&text, true),
            });
        }
    }
    items
}

/// The corpus's recorded JSON responses (third-party fixtures, `corpus/README.md`),
/// pretty-printed behind a text prefix as an MCP echo tool returns them.
fn prefixed_json() -> Vec<Item> {
    let root = workspace().join("corpus");
    let mut paths = Vec::new();
    walk(&root, &mut paths);
    paths
        .into_iter()
        .filter(|p| {
            p.parent() == Some(root.as_path()) && p.extension().is_some_and(|e| e == "json")
        })
        .map(|path| {
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            Item {
                group: "file JSON behind a prefix".to_owned(),
                held_out: held_out(&name),
                text: format!("Echo: {}", serde_json::to_string_pretty(&value).unwrap()),
                name,
            }
        })
        .collect()
}

fn logs() -> Vec<Item> {
    let root = workspace().join("corpus");
    let mut paths = vec![root.join("build-log.txt")];
    let mut corpus = Vec::new();
    walk(&root.join("logs"), &mut corpus);
    paths.extend(
        corpus
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "log")),
    );
    for system in [
        "/var/log/dpkg.log",
        "/var/log/apt/term.log",
        "/var/log/apt/history.log",
        "/var/log/alternatives.log",
    ] {
        paths.push(PathBuf::from(system));
    }
    if let Some(dir) = std::env::var_os("PARROT_KIND_LOGS") {
        let mut more = Vec::new();
        walk(Path::new(&dir), &mut more);
        paths.extend(more);
    }
    let mut items = Vec::new();
    for path in paths {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if text.trim().is_empty() {
            continue;
        }
        let name = path.display().to_string();
        let group = if name.contains("/corpus/logs/real/") {
            "log corpus (real)".to_owned()
        } else if name.contains("/corpus/") {
            "log corpus (generated)".to_owned()
        } else if name.starts_with("/var/log") {
            "log system (/var/log)".to_owned()
        } else {
            "log programs (captured)".to_owned()
        };
        let held = held_out(path.file_name().unwrap().to_str().unwrap());
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if lines.len() > WINDOW {
            for (k, window) in lines.chunks(WINDOW).take(WINDOWS).enumerate() {
                items.push(Item {
                    group: group.clone(),
                    held_out: held,
                    name: format!("{name} window {}", k + 1),
                    text: window.concat(),
                });
            }
        }
        items.push(Item {
            group,
            held_out: held,
            name,
            text,
        });
    }
    items
}

fn core_params() -> Map<String, Value> {
    let core: toml::Table = include_str!("../../../config/core.toml").parse().unwrap();
    let params = &core["compressor"]["*"]["params"];
    match serde_json::to_value(params).unwrap() {
        Value::Object(map) => map,
        _ => panic!("the core entry's params are a table"),
    }
}

#[derive(Default)]
struct Counts {
    file: usize,
    log: usize,
    text: usize,
}

#[test]
#[ignore = "reads cargo's registry sources and /var/log; run by hand (see the module docs)"]
fn measure() {
    let counter: Arc<dyn TokenCounter> = Arc::new(crate::Tokenizer::O200k);
    let registry = Registry::with_builtins();
    let auto = Auto::build(&registry, &core_params(), Arc::clone(&counter), &[]).unwrap();
    let log_codec = registry.instantiate("log", Map::new()).unwrap();
    let tokens = |text: &str| counter.count(text);

    let mut items = files();
    assert!(!items.is_empty(), "no registry sources found");
    items.extend(prefixed_json());
    items.extend(logs());

    let mut confusion: BTreeMap<(bool, String), Counts> = BTreeMap::new();
    let mut wrong: Vec<String> = Vec::new();
    let mut saved: BTreeMap<bool, [usize; 3]> = BTreeMap::new();
    let mut files_changed = [0usize; 2];
    let mut files_lossy = [0usize; 2];
    let mut files_folded_before = [0usize; 2];
    let mut slowest = (Duration::ZERO, 0usize);
    let mut total = Duration::ZERO;
    for item in &items {
        let started = Instant::now();
        let kind = classify(&item.text);
        let took = started.elapsed();
        total += took;
        if took > slowest.0 {
            slowest = (took, item.text.len());
        }
        let counts = confusion
            .entry((item.held_out, item.group.clone()))
            .or_default();
        match kind {
            Kind::File(_) => counts.file += 1,
            Kind::Log(_) => counts.log += 1,
            Kind::Output(_) => counts.text += 1,
        }
        let is_file = item.group.starts_with("file");
        let right = matches!(kind, Kind::File(_)) == is_file;
        if !right && !item.held_out {
            let head: Vec<&str> = item.text.lines().take(3).collect();
            wrong.push(format!("{} [{}] {kind:?}: {head:?}", item.name, item.group));
        }
        let before = match log_codec.compress(Payload::text_only(&item.text), Level::Normal) {
            Ok(Outcome::Changed { payload, .. }) if tokens(&payload) <= tokens(&item.text) => {
                Some(payload)
            }
            _ => None,
        };
        let decision = auto.route(&item.text, PayloadKind::Text, Level::Normal);
        let after = decision
            .routed
            .filter(|r| tokens(&r.payload) <= tokens(&item.text));
        if is_file {
            let k = usize::from(item.held_out);
            files_folded_before[k] += usize::from(before.is_some());
            if let Some(after) = &after {
                files_changed[k] += 1;
                files_lossy[k] += usize::from(after.lossy);
            }
        } else {
            let sums = saved.entry(item.held_out).or_default();
            let input = tokens(&item.text);
            sums[0] += input;
            sums[1] += before.as_deref().map_or(input, tokens);
            sums[2] += after.as_ref().map_or(input, |a| tokens(&a.payload));
        }
    }
    for (set, held) in [("tuning", false), ("held-out", true)] {
        println!("\n{set} set: group | file | log | text (no signal: the log codec's)");
        let mut right = 0;
        let mut all = 0;
        for ((h, group), c) in &confusion {
            if *h != held {
                continue;
            }
            println!("  {group} | {} | {} | {}", c.file, c.log, c.text);
            let n = c.file + c.log + c.text;
            all += n;
            right += if group.starts_with("file") {
                c.file
            } else {
                c.log + c.text
            };
        }
        println!("  right: {right} of {all}");
        let k = usize::from(held);
        println!(
            "  files folded by the log codec (routing before kinds): {}; files changed by the default now: {} ({} lossily)",
            files_folded_before[k], files_changed[k], files_lossy[k]
        );
        if let Some([input, before, after]) = saved.get(&held) {
            println!(
                "  log tokens (o200k): input {input}, before {before} ({:.1}% saved), after {after} ({:.1}% saved)",
                100.0 * (1.0 - *before as f64 / *input as f64),
                100.0 * (1.0 - *after as f64 / *input as f64)
            );
        }
    }
    println!(
        "\nclassification: {} payloads, {:.1} µs each on average, slowest {:.1} µs ({} bytes)",
        items.len(),
        total.as_secs_f64() * 1e6 / items.len() as f64,
        slowest.0.as_secs_f64() * 1e6,
        slowest.1
    );
    if std::env::var_os("PARROT_KIND_WRONG").is_some() {
        println!("\ntuning set, wrong:");
        for line in &wrong {
            println!("  {line}");
        }
    }
}
