//! The token table: o200k_base tokens of every corpus item as pretty JSON, compact JSON,
//! reference TOON (the `toon-format` crate, default options) and our payloads — what the model
//! sees, `_tee` pointer included — from `json_compact`, `columnar` and `toon` (all three
//! built-ins, no plugin loaded) at `minimal` and `normal`.
//!
//! Token counts are deterministic: the one random part of a payload, the 8-hex prefix of a tee
//! key, is replaced by `00000000` before counting (same length; the pointer's tokens otherwise
//! vary by one or two from run to run).
//!
//! `cargo bench -p parrot-host --bench tokens`. Target: on every tabular item (one the
//! reference encoder writes at least one tabular array for), our best lossless payload ≤ TOON's
//! tokens.

use std::fmt::Write as _;
use std::sync::Arc;

use parrot_codec_api::Level;
use parrot_host::{Call, Host, Input, MemoryTeeStore, TokenCounter as _, Tokenizer};
use serde_json::Value;

use parrot_bench_corpus as corpus;
mod support;

/// One of our payloads: its tokens, and whether it is the input unchanged or lossy.
struct Ours {
    tokens: usize,
    unchanged: bool,
    lossy: bool,
}

const CODECS: [&str; 3] = ["json_compact", "columnar", "toon"];
const LEVELS: [Level; 2] = [Level::Minimal, Level::Normal];

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".parrot")).expect("project");
    let mut manifest = String::new();
    for codec in CODECS {
        let _ = writeln!(manifest, "[compressor.\"{codec}\"]\ncodec = \"{codec}\"");
    }
    std::fs::write(project.join(".parrot/compressors.toml"), manifest).expect("manifest");
    let host = Host::builder()
        .project(&project)
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::new(4)))
        // The stage decides with o200k (the no-gain rule in tokens, `auto`'s choice); the
        // report's own counting is off, as this bench counts every payload itself.
        .tokenizer(Arc::new(Tokenizer::O200k))
        .report_tokens(false)
        .inline_at_any_size(true)
        .max_result_chars(0)
        .build()
        .expect("host");
    let o200k = Tokenizer::O200k;

    let mut corpus_table = String::from(
        "Every item is one tool result as the tool gave it (pretty or compact). Generated items \
         are seeded (the same bytes every run); registry items are fetched by `cargo xtask \
         bench-corpus` at the pinned versions of `corpus/registry.toml`, checked against their \
         recorded sha256. *Tabular*: the reference TOON encoder writes at least one tabular \
         array for it.\n\n| item | source | bytes | tabular |\n|---|---|---|---|\n",
    );
    let mut table = String::from(
        "o200k_base tokens. Our payloads are what the model sees: `*` the input unchanged (the \
         codec passed it through: not its shape, or no gain), `†` lossy (the original kept in \
         the tee store; the `_tee` pointer is counted). `toon` is lossless at every level. \
         *best lossless* is the fewest tokens among our lossless payloads, against reference \
         TOON. *default*: the core default (`auto` at `normal`, no manifest), what a new user \
         gets. *winner*: the fewest tokens in the row.\n\n\
         | item | pretty JSON | compact JSON | TOON | json_compact minimal | json_compact normal \
         | columnar minimal | columnar normal | toon minimal | toon normal | default (auto) \
         | best lossless vs TOON | winner |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut totals = [0usize; 10];
    let mut more_tokens = Vec::new();
    let mut tabular_items = 0;
    let mut misses = Vec::new();
    for item in corpus::all() {
        let value: Value = serde_json::from_str(&item.text).expect("corpus items are JSON");
        let pretty = o200k.count(&serde_json::to_string_pretty(&value).expect("pretty"));
        let compact = o200k.count(&serde_json::to_string(&value).expect("compact"));
        let toon_text = toon_format::encode_default(&value).expect("reference TOON");
        let toon = o200k.count(&toon_text);
        let tabular = toon_text
            .lines()
            .any(|line| line.contains("]{") && line.trim_end().ends_with("}:"));
        let _ = writeln!(
            corpus_table,
            "| {} | {} | {} | {} |",
            item.name,
            item.source,
            corpus::thousands(item.text.len()),
            if tabular { "yes" } else { "no" }
        );

        let given = o200k.count(&item.text);
        let mut ours = Vec::new();
        let runs = CODECS
            .iter()
            .flat_map(|codec| LEVELS.map(|level| (*codec, Some(level))))
            .chain([("no manifest entry", None)]);
        for (tool, level) in runs {
            {
                let mut call = Call::new(tool, Input::Text(&item.text));
                if let Some(level) = level {
                    call = call.level(level);
                }
                let out = host.process(call);
                let mut text = out.text().expect("UTF-8").to_owned();
                if let Some(key) = &out.meta.tee_key {
                    let mut parts: Vec<&str> = key.rsplitn(3, ':').collect();
                    parts[1] = "00000000";
                    parts.reverse();
                    text = text.replace(key.as_str(), &parts.join(":"));
                }
                let tokens = o200k.count(&text);
                if tokens > given {
                    more_tokens.push(format!(
                        "{} through {tool} at {:?} ({} > {})",
                        item.name,
                        level,
                        corpus::thousands(tokens),
                        corpus::thousands(given)
                    ));
                }
                ours.push(Ours {
                    tokens,
                    unchanged: !out.meta.compressed,
                    lossy: out.meta.teed,
                });
            }
        }
        let best_lossless = ours
            .iter()
            .filter(|o| !o.lossy)
            .map(|o| o.tokens)
            .min()
            .expect("minimal is lossless");
        let row: Vec<usize> = [pretty, compact, toon]
            .into_iter()
            .chain(ours.iter().map(|o| o.tokens))
            .collect();
        for (total, n) in totals.iter_mut().zip(&row) {
            *total += n;
        }
        let names = [
            "pretty JSON",
            "compact JSON",
            "TOON",
            "json_compact minimal",
            "json_compact normal",
            "columnar minimal",
            "columnar normal",
            "toon minimal",
            "toon normal",
            "default (auto)",
        ];
        let fewest = *row.iter().min().expect("columns");
        let winners: Vec<&str> = names
            .iter()
            .zip(&row)
            .filter(|(_, n)| **n == fewest)
            .map(|(name, _)| *name)
            .collect();
        let _ = write!(
            table,
            "| {} | {} | {} | {} |",
            item.name,
            corpus::thousands(pretty),
            corpus::thousands(compact),
            corpus::thousands(toon)
        );
        for o in &ours {
            let mark = if o.unchanged {
                "*"
            } else if o.lossy {
                "†"
            } else {
                ""
            };
            let _ = write!(table, " {}{mark} |", corpus::thousands(o.tokens));
        }
        let _ = writeln!(
            table,
            " {} ({:+.1}%) | {} |",
            corpus::thousands(best_lossless),
            (best_lossless as f64 / toon as f64 - 1.0) * 100.0,
            winners.join(", ")
        );
        if tabular {
            tabular_items += 1;
            if best_lossless > toon {
                misses.push(format!(
                    "{} ({} against TOON's {})",
                    item.name,
                    corpus::thousands(best_lossless),
                    corpus::thousands(toon)
                ));
            }
        }
    }
    let _ = write!(table, "| **total** |");
    for total in totals {
        let _ = write!(table, " {} |", corpus::thousands(total));
    }
    table.push_str(" | |\n");
    corpus::report("corpus.md", &corpus_table);
    corpus::report("tokens.md", &table);
    let no_more = if more_tokens.is_empty() {
        "- No corpus item comes out with more tokens than it went in, through any codec at any \
         level or the default: **met**."
            .to_owned()
    } else {
        format!(
            "- No corpus item comes out with more tokens than it went in, through any codec at \
             any level or the default: **missed**: {}.",
            more_tokens.join("; ")
        )
    };
    corpus::target(
        "tokens",
        &[
            no_more,
            if misses.is_empty() {
                format!(
                    "- On every tabular corpus item our best lossless payload ≤ TOON's tokens: \
                 **met** on all {tabular_items}."
                )
            } else {
                format!(
                    "- On every tabular corpus item our best lossless payload ≤ TOON's tokens: \
                 **missed** on {} of {tabular_items}: {}.",
                    misses.len(),
                    misses.join("; ")
                )
            },
        ],
    );
}
