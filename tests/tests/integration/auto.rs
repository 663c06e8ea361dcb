//! The routing codec `auto`, the core default for `"*"`: the winner's flags in the stage
//! (text output, its own inverse for verification), plugin codecs as candidates, errors in its
//! params, and what the default saves on the corpus and the sample session.

use std::path::Path;
use std::sync::Arc;

use parrot_host::{
    Call, Host, Input, Level, MemoryTeeStore, PayloadKind, Skip, TokenCounter, Tokenizer,
    Verification,
};
use serde_json::{Map, Value};

use crate::support::{self, one_package_host, package, plugin_manifest};

const FAULTS: &str = "parrot_plugin_fault_codecs";
const LINE_DEDUP: &str = "parrot_plugin_line_dedup";

/// A host with no manifest and no plugin (an empty project), a memory tee store, compressing
/// inline at any size as the command does.
fn default_host() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .inline_at_any_size(true)
        // As the command builds its hosts: whole MCP results are opened.
        .envelope(Arc::new(parrot_mcp::ContentBlocks))
        .build()
        .unwrap();
    (dir, host)
}

fn corpus(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus")
            .join(name),
    )
    .unwrap()
}

/// `auto` on `"*"` with `params` (TOML lines), in a package holding the library `crate_name`.
fn auto_host(crate_name: &str, level: &str, params: &str) -> (tempfile::TempDir, Host) {
    let entries = format!(
        "[compressor.\"*\"]\ncodec = \"auto\"\nlevel = \"{level}\"\n  [compressor.\"*\".params]\n{params}"
    );
    one_package_host(crate_name, "pkg", &entries).expect("host builds")
}

#[test]
fn a_toon_winner_goes_out_as_toon_text() {
    let (_dir, host) = default_host();
    let input = corpus("github-labels.json");
    let out = host.process(Call::new("github_labels", Input::Text(&input)));
    assert_eq!(out.meta.codec.as_deref(), Some("toon"), "{:?}", out.meta);
    assert!(!out.meta.teed, "lossless: no pointer");
    let toon = host.registry().instantiate("toon", Map::new()).unwrap();
    let direct = toon
        .compress(parrot_host::Payload::json(&input), Level::Minimal)
        .unwrap();
    assert_eq!(out.text(), direct.payload());
    assert!(
        serde_json::from_str::<Value>(out.text().unwrap()).is_err(),
        "TOON text, not JSON"
    );
    let route = out.meta.route.as_deref().unwrap();
    assert!(route.starts_with("rows: toon "), "{route}");
}

#[test]
fn a_plugin_codec_is_a_candidate() {
    let (_dir, host) = auto_host(LINE_DEDUP, "minimal", "  text = [\"line_dedup\"]\n");
    let input: String = (0..40).map(|i| format!("step {}\n", i / 10)).collect();
    let out = host.process(Call::new("shell_run", Input::Text(&input)));
    assert_eq!(
        out.meta.codec.as_deref(),
        Some("line_dedup"),
        "{:?}",
        out.meta
    );
    assert_eq!(
        out.meta.route.as_deref(),
        Some(
            "text: output (an aligned table, 40 of 40 sampled lines): line_dedup, the only \
             candidate to change it"
        )
    );
    let codec = host
        .registry()
        .instantiate("line_dedup", Map::new())
        .unwrap();
    assert_eq!(codec.expand(out.text().unwrap()).unwrap(), input);
}

/// `fault_liar` claims lossless but keeps half the text: only its own inverse, run by the
/// stage on the winner, shows it.
#[test]
fn a_plugin_winner_is_verified_through_its_own_inverse() {
    let input = "0123456789".repeat(200);
    let (_dir, host) = auto_host(FAULTS, "minimal", "  text = [\"fault_liar\"]\n");
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert_eq!(out.meta.codec.as_deref(), Some("fault_liar"));
    assert_eq!(out.meta.skipped, Some(Skip::CodecError), "{:?}", out.meta);
    assert_eq!(out.text(), Some(input.as_str()));

    let out = host.process(Call::new("t", Input::Text(&input)).level(Level::Normal));
    assert!(
        out.meta.teed,
        "found lossy, so the original is kept: {:?}",
        out.meta
    );
    let pointed = crate::support::pointed(out.text().unwrap()).expect("a pointer line");
    assert_eq!(pointed.reason, "lossy");

    // With plugin verification off, the lie goes out as lossless: the check above was the
    // inverse's.
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    package(
        &plugins,
        "pkg",
        Some(FAULTS),
        &plugin_manifest(
            FAULTS,
            "[compressor.\"*\"]\ncodec = \"auto\"\nlevel = \"minimal\"\n  [compressor.\"*\".params]\n  text = [\"fault_liar\"]\n",
        ),
    );
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .plugin_dir(&plugins)
        .verification(Verification {
            plugins: false,
            builtins_every: 0,
        })
        .build()
        .unwrap();
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert!(out.meta.compressed, "{:?}", out.meta);
    assert_eq!(out.text(), Some(&input[..1000]));
}

#[test]
fn bad_params_are_one_line_errors_naming_file_entry_and_key() {
    let unknown = format!(
        "key \"rows\": unknown codec \"tooon\" (known: {})",
        support::builtin_names().join(", ")
    );
    let cases = [
        ("text = []\nrows = [\"tooon\"]", unknown.as_str()),
        (
            "text = []\nobject = [\"auto\"]",
            "key \"object\": \"auto\" cannot be its own candidate",
        ),
        (
            "text = \"line_dedup\"",
            "key \"text\": expected an array of codec names, got a string (\"line_dedup\")",
        ),
        (
            "text = []\nsample_row = 3",
            "key \"sample_row\": unknown key (file, log, lossy_json, object, rows, sample_bytes, sample_rows, text, or a table named after a candidate)",
        ),
        (
            "text = []\nrows = [\"columnar\"]\ncolumnar = { min_rows = 0 }",
            "key \"columnar.min_rows\": expected a positive integer, got a number (0)",
        ),
    ];
    for (params, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join(".parrot/compressors.toml");
        std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
        std::fs::write(
            &manifest,
            format!("[compressor.\"*\"]\ncodec = \"auto\"\n[compressor.\"*\".params]\n{params}\n"),
        )
        .unwrap();
        let err = Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .build()
            .unwrap_err();
        assert_eq!(err.errors.len(), 1, "{err}");
        let line = err.errors[0].to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with(&format!("{}:", manifest.display())),
            "{line}"
        );
        assert!(
            line.ends_with(&format!("entry \"*\": {expected}")),
            "{line}\nexpected the end: {expected}"
        );
    }
}

#[test]
fn a_payload_auto_cannot_place_passes_through_byte_identical() {
    let (_dir, host) = default_host();
    for input in ["12345", "true", "\"OK\"", "   "] {
        let out = host.process(Call::new("t", Input::Text(input)));
        assert!(!out.meta.compressed, "{input}: {:?}", out.meta);
        assert_eq!(&*out.payload, input.as_bytes());
    }
    let error = r#"{"content": [{"type": "text", "text": "{\"a\": null, \"b\": [1, 1, 1]}"}], "isError": true}"#;
    let out = host.process(Call::new("t", Input::Text(error)));
    assert_eq!(&*out.payload, error.as_bytes());
    assert_eq!(
        out.meta.route.as_deref(),
        Some("mcp: isError, passed through")
    );
}

#[test]
fn explain_lists_the_shapes_and_candidates_of_auto() {
    let (_dir, host) = default_host();
    let text = host.explain("anything").to_string();
    assert!(text.contains("codec:           auto\n"), "{text}");
    assert!(
        text.contains(&format!(
            "routes by shape, fewest tokens wins:\n{}",
            support::core_routes("  ")
        )),
        "{text}"
    );
}

/// The tool results of the sample session (24) and the corpus files (8), as (name, text).
fn payloads() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    let session = std::fs::read_to_string(root.join("samples/session.jsonl")).unwrap();
    for (i, line) in session.lines().enumerate() {
        let call: Value = serde_json::from_str(line).unwrap();
        let result = match &call["result"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        out.push((
            format!("session {:>2} {}", i + 1, call["tool"].as_str().unwrap()),
            result,
        ));
    }
    let mut files: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("json" | "txt")
            )
        })
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        out.push((
            format!("corpus {name}"),
            std::fs::read_to_string(path).unwrap(),
        ));
    }
    out
}

/// The issue's measure: with no manifest and no plugin, the 32 payloads save at least 80% of
/// o200k tokens, the JSON payloads at least 53%, and no JSON payload goes lossy.
#[test]
fn the_default_saves_80_percent_of_the_corpus_and_53_percent_of_its_json_losslessly() {
    let (_dir, host) = default_host();
    let o200k = Tokenizer::O200k;
    let payloads = payloads();
    assert_eq!(payloads.len(), 32);
    let (mut all_in, mut all_out, mut json_in, mut json_out) = (0, 0, 0, 0);
    let mut table = String::new();
    for (name, text) in &payloads {
        let out = host.process(Call::new("t", Input::Text(text)));
        let after = out.text().unwrap();
        let (before, after_tokens) = (o200k.count(text), o200k.count(after));
        assert!(after_tokens <= before, "{name}: more tokens out than in");
        let json = serde_json::from_str::<Value>(text).is_ok();
        if json {
            assert!(
                !after.contains(r#""reason":"lossy""#),
                "{name}: a JSON payload went lossy: {:?}",
                out.meta
            );
            json_in += before;
            json_out += after_tokens;
        }
        all_in += before;
        all_out += after_tokens;
        table.push_str(&format!(
            "{name:<44} {:>6} {before:>7} {after_tokens:>7} {:>5.1}%  {}\n",
            if json { "json" } else { "text" },
            saved(before, after_tokens),
            out.meta.codec.as_deref().unwrap_or("-"),
        ));
    }
    table.push_str(&format!(
        "total {all_in} -> {all_out} ({:.1}% saved); JSON {json_in} -> {json_out} ({:.1}% saved)\n",
        saved(all_in, all_out),
        saved(json_in, json_out)
    ));
    println!("{table}");
    assert!(saved(all_in, all_out) >= 80.0, "{table}");
    assert!(saved(json_in, json_out) >= 53.0, "{table}");
}

fn saved(before: usize, after: usize) -> f64 {
    100.0 * (1.0 - after as f64 / before as f64)
}

/// A JSON string payload holding JSON is routed as that JSON.
#[test]
fn a_json_string_holding_json_is_routed_as_json() {
    let (_dir, host) = default_host();
    let inner = corpus("github-labels.json");
    let input = serde_json::to_string(&inner).unwrap();
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert_eq!(out.meta.codec.as_deref(), Some("toon"), "{:?}", out.meta);
    let direct = host
        .registry()
        .instantiate("toon", Map::new())
        .unwrap()
        .compress(
            parrot_host::Payload::new(&inner, PayloadKind::Json),
            Level::Minimal,
        )
        .unwrap();
    assert_eq!(out.text(), direct.payload());
}

/// A library host (no `inline_at_any_size`) with the core default sends payloads over the
/// router's thresholds above `minimal` off the inline path; `auto` runs JSON at `minimal`, so a
/// large JSON payload is a `minimal` call and is compressed inline, as under the old default.
#[test]
fn large_json_under_auto_is_a_minimal_call_for_the_router() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .build()
        .unwrap();
    let rows: Vec<String> = (0..6_000)
        .map(|i| {
            format!(
                r#"{{"id":{i},"name":"row {i}","region":"south","score":{}.5}}"#,
                i % 97
            )
        })
        .collect();
    let input = format!(r#"{{"driver":"pg","rows":[{}]}}"#, rows.join(","));
    assert!(
        input.len() > 256 * 1024 && rows.len() > 1_500,
        "over both thresholds"
    );
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert!(out.meta.compressed, "{:?}", out.meta);
    assert!(!out.meta.teed, "lossless: {:?}", out.meta);

    // A log over the size threshold is a `normal` call: with no executor it passes through.
    let log: String = (0..20_000)
        .map(|i| format!("2026-11-29T10:00:{:02}.000Z INFO step {i} done\n", i % 60))
        .collect();
    assert!(log.len() > 256 * 1024);
    let out = host.process(Call::new("t", Input::Text(&log)));
    assert_eq!(
        out.meta.skipped,
        Some(Skip::BudgetPassthrough),
        "{:?}",
        out.meta
    );

    // So does one whose lines start like JSON: given as JSON first (the fused pass), it is
    // found to be text and placed as text, not as the `minimal` JSON call it looked like.
    let bracketed: String = log
        .lines()
        .map(|line| format!("[worker] {line}\n"))
        .collect();
    let out = host.process(Call::new("t", Input::Text(&bracketed)));
    assert_eq!(
        out.meta.skipped,
        Some(Skip::BudgetPassthrough),
        "{:?}",
        out.meta
    );
    assert_eq!(&*out.payload, bracketed.as_bytes());
    // Under the threshold, the same lines are routed as text, to the log codec.
    let small: String = bracketed
        .lines()
        .take(400)
        .map(|line| format!("{line}\n"))
        .collect();
    let out = host.process(Call::new("t", Input::Text(&small)));
    assert_eq!(out.meta.codec.as_deref(), Some("log"), "{:?}", out.meta);
    assert!(
        out.meta
            .route
            .as_deref()
            .unwrap_or_default()
            .starts_with("text: ")
    );
}

/// `text` as an agent's file read prints it: `cat -n`'s `     N\t<line>`.
fn numbered_read(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, line)| format!("{:>6}\t{line}\n", i + 1))
        .collect()
}

/// The file reads that the log codec folded to templates (a 1,303-line JSON read became
/// 1,376 characters of `[×100 lines …]` fold lines) go out byte for byte: an agent that edits
/// a file quotes its lines.
#[test]
fn a_numbered_read_passes_through_the_default_unchanged() {
    let (_dir, host) = default_host();
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src/routing/auto/mod.rs"),
    )
    .unwrap();
    for (name, file) in [
        ("host/src/routing/auto/mod.rs", source),
        ("github-repos.json", corpus("github-repos.json")),
    ] {
        let read = numbered_read(&file);
        let lines = file.lines().count();
        let out = host.process(Call::new("Read", Input::Text(&read)));
        assert_eq!(out.text(), Some(read.as_str()), "{name}: {:?}", out.meta);
        assert!(!out.meta.compressed, "{name}");
        let route = out.meta.route.as_deref().unwrap();
        let lines = if lines >= 1000 {
            format!("{},{:03}", lines / 1000, lines % 1000)
        } else {
            lines.to_string()
        };
        assert_eq!(
            route,
            format!(
                "text: file contents (numbered read, lines 1-{lines}): no candidate, passed through"
            ),
            "{name}"
        );
        // The same read in an MCP text block, and pretty JSON behind a text prefix.
        let echo = format!("Echo: {file}");
        for text in [read.as_str(), echo.as_str()] {
            let block =
                serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
            let out = host.process(Call::new("mcp_read", Input::Text(&block)));
            assert_eq!(
                out.text(),
                Some(block.as_str()),
                "{name} in a block: {:?}",
                out.meta
            );
            let route = out.meta.route.as_deref().unwrap();
            assert!(
                route.starts_with("mcp: block 1: text: file contents ("),
                "{name}: {route}"
            );
        }
    }
}

/// A log still goes to the log codec, and says why; a tool's truncation notice at its head
/// stays, verbatim.
#[test]
fn a_log_is_still_folded_and_keeps_its_truncation_notice() {
    let (_dir, host) = default_host();
    let notice = "Output too large (458.2KB). Full output saved to: \
                  /root/.claude/projects/-work-app/tool-results/toolu_01XkR7mV2pQ9sT4wY6zB8nLc.txt";
    let log = format!(
        "{notice}\n\nPreview (first 2KB):\n{}",
        corpus("build-log.txt")
    );
    let out = host.process(Call::new("Bash", Input::Text(&log)));
    assert_eq!(out.meta.codec.as_deref(), Some("log"), "{:?}", out.meta);
    assert!(out.meta.compressed);
    let route = out.meta.route.as_deref().unwrap();
    assert!(
        route.starts_with("text: log lines (timestamps, "),
        "{route}"
    );
    assert!(
        out.payload.len() * 10 < log.len(),
        "folded: {}",
        out.payload.len()
    );
    let text = out.text().unwrap();
    for header in [notice, "Preview (first 2KB):"] {
        let quoted = serde_json::to_string(header).unwrap();
        assert!(
            text.contains(&quoted[1..quoted.len() - 1]),
            "{header:?} kept verbatim: {text}"
        );
    }
}
