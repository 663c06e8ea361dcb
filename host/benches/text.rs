//! The text kinds: the real captures of `corpus/text/` (listings, search hits, tables, trees,
//! version-control output, HTML; `corpus/text/README.md` names each command, its version and
//! its source's license), each through a host with the core defaults alone and a memory tee
//! store, and the o200k_base tokens of what the model sees.
//!
//! Every output that is not lossy is expanded back through its codec's inverse and compared
//! with the capture byte for byte. A capture is held out when the first byte of the SHA-256 of
//! its name (without `.txt`) is a multiple of 3; the held-out totals are shown apart.
//!
//! `cargo bench -p parrot-host --bench text`. Targets (issue 46): no lossy output on listings,
//! hits, tables, trees and VCS output, each expanded back exactly; listings ≥ 55% saved, grep
//! hits over a crate ≥ 40%, package tables ≥ 25%, the whole set ≥ 20%.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use parrot_codec_api::Params;
use parrot_host::{Call, Host, Input, MemoryTeeStore, TokenCounter as _, Tokenizer};
use sha2::{Digest as _, Sha256};

use parrot_bench_corpus as corpus;

/// One capture and what the default made of it.
struct Row {
    name: String,
    kind: String,
    held_out: bool,
    before: usize,
    after: usize,
    codec: String,
    lossy: bool,
    exact: Option<bool>,
}

fn held_out(stem: &str) -> bool {
    Sha256::digest(stem.as_bytes())[0].is_multiple_of(3)
}

/// The original of a lossless `payload` of the built-in `codec`, through its inverse.
fn expand(codec: &str, payload: &str) -> Option<String> {
    let builtin = parrot_codecs::builtins()
        .into_iter()
        .find(|builtin| builtin.meta.name() == codec)?;
    let built = (builtin.build)(Params::empty()).ok()?;
    built.expand(payload).ok()
}

fn run(host: &Host, path: &Path) -> Row {
    let o200k = Tokenizer::O200k;
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    let bytes = std::fs::read(path).expect("capture");
    let processed = host.process(Call::new("bash", Input::Bytes(&bytes)));
    let meta = &processed.meta;
    let input = String::from_utf8_lossy(&bytes);
    let payload = String::from_utf8_lossy(&processed.payload);
    let lossy = meta.compressed && meta.teed;
    let codec = if meta.compressed {
        meta.codec.clone().unwrap_or_default()
    } else {
        format!(
            "- ({})",
            meta.skipped.map(|s| s.to_string()).unwrap_or_default()
        )
    };
    let exact = (meta.compressed && !lossy).then(|| {
        let codec = meta.codec.as_deref().unwrap_or_default();
        expand(codec, &payload).is_some_and(|original| original.as_bytes() == bytes)
    });
    Row {
        kind: stem.split('-').next().unwrap_or_default().to_owned(),
        held_out: held_out(&stem),
        name: stem,
        before: o200k.count(&input),
        after: o200k.count(&payload),
        codec,
        lossy,
        exact,
    }
}

/// The tokens in and out of the rows `pick` selects.
fn sum(rows: &[Row], pick: impl Fn(&Row) -> bool) -> (usize, usize) {
    rows.iter()
        .filter(|row| pick(row))
        .fold((0, 0), |(a, b), row| (a + row.before, b + row.after))
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let project = tempfile::tempdir().expect("temp dir");
    let host = Host::builder()
        .project(project.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::new(64)))
        .inline_at_any_size(true)
        .build()
        .expect("host with the core defaults");
    let mut paths: Vec<_> = std::fs::read_dir(root.join("corpus/text"))
        .expect("corpus/text")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    paths.sort();
    let rows: Vec<Row> = paths.iter().map(|path| run(&host, path)).collect();
    host.flush();
    corpus::report("text.md", &table(&rows));
    let targets = targets(&rows);
    for line in &targets {
        println!("{line}");
    }
    corpus::target("text", &targets);
}

fn table(rows: &[Row]) -> String {
    let mut table = String::from(
        "`cargo bench -p parrot-host --bench text`. The real captures of `corpus/text/` \
         (its README names each command, the tool's version and the source's license), each \
         through a host with the core defaults alone (no manifest, no plugin, a memory tee \
         store) as the output of a tool `bash`: what a coding agent's shell result gets through \
         `serve`. o200k_base tokens of what the model sees, pointer included. *codec*: the \
         codec that produced the payload (`-`: passed through, with the reason); *exact*: the \
         output expanded through its codec's inverse is the capture, byte for byte; ★: held \
         out (the first byte of the SHA-256 of the name is a multiple of 3).\n\n\
         | capture | tokens in | tokens out | saved | codec | lossy | exact |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let _ = writeln!(
            table,
            "| {}{} | {} | {} | {:.1}% | {} | {} | {} |",
            row.name,
            if row.held_out { " ★" } else { "" },
            corpus::thousands(row.before),
            corpus::thousands(row.after),
            corpus::saved_percent(row.before, row.after),
            row.codec,
            if row.lossy { "yes" } else { "" },
            match row.exact {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "",
            },
        );
    }
    for kind in ["paths", "hits", "table", "tree", "vcs", "html", "other"] {
        for (label, held) in [("tuning", false), ("held out", true)] {
            let (before, after) = sum(rows, |row| row.kind == kind && row.held_out == held);
            if before > 0 {
                let _ = writeln!(
                    table,
                    "| **{kind}, {label}** | {} | {} | {:.1}% | | | |",
                    corpus::thousands(before),
                    corpus::thousands(after),
                    corpus::saved_percent(before, after),
                );
            }
        }
    }
    let (before, after) = sum(rows, |_| true);
    let _ = writeln!(
        table,
        "| **all** | {} | {} | {:.1}% | | | |",
        corpus::thousands(before),
        corpus::thousands(after),
        corpus::saved_percent(before, after),
    );
    table
}

fn targets(rows: &[Row]) -> Vec<String> {
    let met = |ok: bool| if ok { "**met**" } else { "**missed**" };
    let asked = |row: &Row| {
        matches!(
            row.kind.as_str(),
            "paths" | "hits" | "table" | "tree" | "vcs"
        )
    };
    let lossy: Vec<&str> = rows
        .iter()
        .filter(|row| asked(row) && row.lossy)
        .map(|row| row.name.as_str())
        .collect();
    let inexact: Vec<&str> = rows
        .iter()
        .filter(|row| row.exact == Some(false))
        .map(|row| row.name.as_str())
        .collect();
    let mut targets = vec![format!(
        "- No lossy output on listings, hits, tables, trees and VCS output ({} captures): {}{}; \
         every compressed one expanded back byte for byte: {}{}.",
        rows.iter().filter(|row| asked(row)).count(),
        met(lossy.is_empty()),
        if lossy.is_empty() {
            String::new()
        } else {
            format!(" (lossy: {})", lossy.join(", "))
        },
        met(inexact.is_empty()),
        if inexact.is_empty() {
            String::new()
        } else {
            format!(" (not exact: {})", inexact.join(", "))
        },
    )];
    let mut share = |what: &str, least: f64, pick: &dyn Fn(&Row) -> bool| {
        let (before, after) = sum(rows, pick);
        let saved = corpus::saved_percent(before, after);
        targets.push(format!(
            "- {what} ≥ {least:.0}% saved: {}, {saved:.1}% ({} → {}).",
            met(saved >= least),
            corpus::thousands(before),
            corpus::thousands(after),
        ));
    };
    share("Listings (`paths-*`)", 55.0, &|row| row.kind == "paths");
    share("Grep hits over a crate (`hits-*`)", 40.0, &|row| {
        row.kind == "hits"
    });
    share("Package tables (`dpkg -l`, `pip list`)", 25.0, &|row| {
        matches!(row.name.as_str(), "table-dpkg-l" | "table-pip-list")
    });
    share("The whole set", 20.0, &|_| true);
    targets
}
