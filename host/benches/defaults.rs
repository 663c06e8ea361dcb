//! What a new user gets with no configuration: the 24 results of the sample session and the 8
//! files of `corpus/` (32 payloads), each through a host with no manifest of its own, no
//! plugins and a memory tee store — the core defaults alone — and the o200k_base tokens of what
//! the model sees, `_tee` pointer included.
//!
//! Each call keeps its session status (an error result passes through, as it must); the corpus
//! files are successful results. Token counts are deterministic: the 8-hex random prefix of a
//! tee key is replaced by `00000000` before counting.
//!
//! `cargo bench -p parrot-host --bench defaults`. Targets (issue 16): at least 80% of the tokens
//! saved in total, at least 53% on the JSON payloads, and no JSON payload lossy (no `_tee`
//! pointer of reason `lossy`).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use parrot_host::{Call, Host, Input, MemoryTeeStore, TokenCounter as _, Tokenizer};
use serde_json::Value;

use parrot_bench_corpus as corpus;

/// One payload of the 32.
struct Item {
    name: String,
    tool: String,
    status: String,
    input: String,
    json: bool,
}

fn items(root: &Path) -> Vec<Item> {
    let session = std::fs::read_to_string(root.join("samples/session.jsonl")).expect("session");
    let mut items = Vec::new();
    for (n, line) in session.lines().enumerate() {
        let call: Value = serde_json::from_str(line).expect("session line");
        let (input, json) = match &call["result"] {
            Value::String(text) => (
                text.clone(),
                parrot_json::check(text) == parrot_json::JsonCheck::Json,
            ),
            other => (other.to_string(), true),
        };
        items.push(Item {
            name: format!("session #{}", n + 1),
            tool: call["tool"].as_str().expect("tool").to_owned(),
            status: call["status"].as_str().unwrap_or("success").to_owned(),
            input,
            json,
        });
    }
    let mut files: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .expect("corpus")
        .map(|entry| entry.expect("corpus entry").path())
        .filter(|path| {
            matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("json" | "txt")
            )
        })
        .collect();
    files.sort();
    for path in files {
        let input = std::fs::read_to_string(&path).expect("corpus file");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = path
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace('-', "_");
        items.push(Item {
            json: parrot_json::check(&input) == parrot_json::JsonCheck::Json,
            name: format!("corpus/{name}"),
            tool: stem,
            status: "success".to_owned(),
            input,
        });
    }
    items
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let project = tempfile::tempdir().expect("temp dir");
    let host = Host::builder()
        .project(project.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::new(64)))
        // As the command and the MCP proxy do; a library host without an executor passes a
        // log over the router's size threshold through at `normal` (CONTRACT §6).
        .inline_at_any_size(true)
        .build()
        .expect("host with the core defaults");
    let o200k = Tokenizer::O200k;

    let mut table = String::from(
        "`cargo bench -p parrot-host --bench defaults`. The 24 results of `samples/session.jsonl` \
         and the 8 files of `corpus/`, each through a host built with no manifest of its own, no \
         plugins and a memory tee store, compressing inline at any size as the command and the MCP \
         proxy do: the core defaults alone, what a new user gets. o200k_base \
         tokens of what the model sees (`_tee` pointer included). Error results keep their \
         status and pass through. *codec*: the codec that produced the payload (`-`: the input \
         went out unchanged, with the reason); *lossy*: the original is in the tee store and \
         the payload points at it.\n\n\
         | payload | tool | kind | tokens in | tokens out | saved | codec | lossy |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let (mut total_in, mut total_out) = (0, 0);
    let (mut json_in, mut json_out) = (0, 0);
    let mut lossy_json = Vec::new();
    let mut more_tokens = Vec::new();
    for item in items(&root) {
        let processed =
            host.process(Call::new(&item.tool, Input::Text(&item.input)).status(&item.status));
        let payload = processed.text().expect("UTF-8 payload");
        let before = o200k.count(&item.input);
        let after = o200k.count(payload);
        let meta = &processed.meta;
        let lossy = meta.compressed && meta.teed && payload.contains("\"reason\":\"lossy\"");
        let codec = if meta.compressed {
            meta.codec.clone().unwrap_or_default()
        } else {
            format!(
                "- ({})",
                meta.skipped.map(|s| s.to_string()).unwrap_or_default()
            )
        };
        total_in += before;
        total_out += after;
        if item.json {
            json_in += before;
            json_out += after;
            if lossy {
                lossy_json.push(item.name.clone());
            }
        }
        if after > before {
            more_tokens.push(item.name.clone());
        }
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {} | {:.1}% | {} | {} |",
            item.name,
            item.tool,
            if item.json { "JSON" } else { "text" },
            corpus::thousands(before),
            corpus::thousands(after),
            corpus::saved_percent(before, after),
            codec,
            if lossy { "yes" } else { "" },
        );
    }
    host.flush();
    let _ = writeln!(
        table,
        "| **total** | | | {} | {} | {:.1}% | | |\n| **JSON payloads** | | | {} | {} | {:.1}% | | |",
        corpus::thousands(total_in),
        corpus::thousands(total_out),
        corpus::saved_percent(total_in, total_out),
        corpus::thousands(json_in),
        corpus::thousands(json_out),
        corpus::saved_percent(json_in, json_out),
    );

    let met = |ok: bool| if ok { "**met**" } else { "**missed**" };
    let saved = corpus::saved_percent(total_in, total_out);
    let json_saved = corpus::saved_percent(json_in, json_out);
    let mut targets: Vec<String> = Vec::new();
    targets.push(format!(
        "- The default configuration saves ≥ 80% of o200k tokens on the 32 payloads: {}, {saved:.1}% \
         ({} → {}).",
        met(saved >= 80.0),
        corpus::thousands(total_in),
        corpus::thousands(total_out),
    ));
    targets.push(format!(
        "- …and ≥ 53% on its JSON payloads, losslessly: {}, {json_saved:.1}%{}.",
        met(json_saved >= 53.0 && lossy_json.is_empty()),
        if lossy_json.is_empty() {
            ", none lossy".to_owned()
        } else {
            format!(", lossy: {}", lossy_json.join(", "))
        },
    ));
    targets.push(format!(
        "- No payload of the 32 comes out with more tokens than it went in: {}{}.",
        met(more_tokens.is_empty()),
        if more_tokens.is_empty() {
            String::new()
        } else {
            format!(" ({})", more_tokens.join(", "))
        },
    ));

    corpus::report("defaults.md", &table);
    for line in &targets {
        println!("{line}");
    }
    corpus::target("defaults", &targets);
}
