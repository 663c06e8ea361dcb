//! The built-in `toon` codec through the host, with no plugin loaded: lossless TOON of every
//! corpus file, the hoisted constant columns read back by the reference TOON decoder, token
//! counts against the reference TOON encoder, the no-gain rule on payloads TOON handles badly,
//! and a `toon` entry beside the `tool_result_prune` plugin in one `replay`.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use crate::support::{self, shipped_package};
use parrot_host::{
    Call, Host, Input, Level, MemoryTeeStore, Outcome, Payload, Processed, Skip, TokenCounter,
    Tokenizer, Verification,
};
use serde_json::Value;

const PRUNE: &str = "parrot_plugin_tool_result_prune";

/// A host with no plugin whose project manifest declares the tool `t` → `toon` at `level` with
/// `params` (TOML lines), with a memory tee store. Every lossless outcome of a built-in is
/// verified through its inverse (by default one in none is), so a payload that does not
/// expand back would be teed as lossy.
fn host_with(
    level: &str,
    params: &str,
) -> Result<(tempfile::TempDir, Host), parrot_host::BuildError> {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join(".parrot")).expect("project folder");
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        format!(
            "[compressor.\"t\"]\ncodec = \"toon\"\nlevel = \"{level}\"\n[compressor.\"t\".params]\n{params}\n"
        ),
    )
    .expect("project manifest");
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .verification(Verification {
            plugins: true,
            builtins_every: 1,
        })
        .build()?;
    Ok((dir, host))
}

fn host() -> (tempfile::TempDir, Host) {
    host_with("minimal", "").expect("host builds")
}

fn corpus(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(name);
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("corpus/{name}: {err}"))
}

/// Every JSON file of the corpus.
fn corpus_json() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    names
}

fn compact(json: &str) -> String {
    serde_json::to_string(&serde_json::from_str::<Value>(json).unwrap()).unwrap()
}

fn tokens(text: &str) -> usize {
    Tokenizer::O200k.count(text)
}

/// The reference encoder's TOON for `json` (toon-format, default options).
fn reference_toon(json: &str) -> String {
    toon_format::encode_default(&serde_json::from_str::<Value>(json).unwrap()).unwrap()
}

/// The TOON document a `toon` payload is (the codec declares text output: the payload is the
/// document itself).
fn document(payload: &str) -> String {
    payload.to_owned()
}

/// Equality as the contract counts it (CONTRACT §2.1): numbers by their exact text, member order
/// ignored (serde_json with `arbitrary_precision` and `preserve_order`).
fn exactly_equal(a: &str, b: &str) -> bool {
    serde_json::from_str::<Value>(a).unwrap() == serde_json::from_str::<Value>(b).unwrap()
}

/// Runs `input` through the host's tool `t` and checks the outcome: lossless TOON that the
/// codec's own inverse, resolved through the host, expands back to exactly `input`.
fn toon_of(host: &Host, input: &str) -> Processed<'static> {
    let out = host
        .process(Call::new("t", Input::Text(input)))
        .into_owned();
    assert!(out.meta.compressed, "{:?}", out.meta);
    assert_eq!(out.meta.codec.as_deref(), Some("toon"));
    // Verified lossless by the host (it expands every outcome here): nothing was stored.
    assert!(
        !out.meta.teed && out.meta.tee_key.is_none(),
        "{:?}",
        out.meta
    );
    let payload = out.text().unwrap();
    let entry = host.resolve("t").entry.unwrap();
    let expanded = entry
        .codec()
        .expect("a codec")
        .expand(payload)
        .expect("the payload expands");
    assert!(exactly_equal(&expanded, input), "expanded:\n{expanded}");
    out
}

/// Puts hoisted tables back into what the reference decoder read: an object with exactly the
/// members `_constants` (an object) then `_rows` (an array of objects) becomes its rows, each
/// taking the constant members.
fn unhoist(value: Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(unhoist).collect()),
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            if keys == ["_constants", "_rows"]
                && map["_constants"].is_object()
                && map["_rows"]
                    .as_array()
                    .is_some_and(|rows| rows.iter().all(Value::is_object))
            {
                let constants = map["_constants"].as_object().unwrap().clone();
                let rows = map["_rows"].as_array().unwrap().clone();
                return Value::Array(
                    rows.into_iter()
                        .map(|mut row| {
                            row.as_object_mut().unwrap().extend(constants.clone());
                            row
                        })
                        .collect(),
                );
            }
            Value::Object(map.into_iter().map(|(k, v)| (k, unhoist(v))).collect())
        }
        other => other,
    }
}

/// Equality with numbers compared by value, as a TOON reader reads them (`1000.0` reads as
/// `1000`).
fn equal_by_number_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal_by_number_value(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| equal_by_number_value(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn every_corpus_json_file_round_trips_exactly_or_passes_through() {
    let (_dir, host) = host();
    let mut encoded = Vec::new();
    for name in corpus_json() {
        for input in [corpus(&name), compact(&corpus(&name))] {
            let out = host.process(Call::new("t", Input::Text(&input)));
            if !out.meta.compressed {
                // Only where TOON is not smaller: nested API responses.
                assert_eq!(out.meta.skipped, Some(Skip::NoGain), "{name}");
                assert_eq!(out.text(), Some(input.as_str()), "{name}");
                continue;
            }
            let out = toon_of(&host, &input);
            // The reference decoder reads the document, and with hoisted tables put back it is
            // the input, numbers compared by value.
            let read: Value = toon_format::decode_strict(&document(out.text().unwrap()))
                .unwrap_or_else(|err| panic!("{name}: {err}"));
            let input_value: Value = serde_json::from_str(&input).unwrap();
            assert!(
                equal_by_number_value(&unhoist(read), &input_value),
                "{name}"
            );
            encoded.push(name.clone());
        }
    }
    encoded.dedup();
    for name in [
        "github-labels.json",
        "github-repos.json",
        "query-500x12.json",
    ] {
        assert!(
            encoded.iter().any(|e| e == name),
            "{name} not encoded: {encoded:?}"
        );
    }
}

#[test]
fn github_repos_at_minimal_is_the_reference_toon_document_and_reads_back_exactly() {
    let (_dir, host) = host();
    let input = corpus("github-repos.json");
    let out = toon_of(&host, &input);
    let payload = out.text().unwrap();
    let reference = reference_toon(&input);
    // No column is constant here: the document is the reference encoder's, byte for byte.
    assert_eq!(document(payload), reference);
    assert!(tokens(&document(payload)) <= tokens(&reference));
    // The reference decoder reads back exactly the input (its numbers are canonical).
    let read: Value = toon_format::decode_strict(&document(payload)).unwrap();
    assert_eq!(read, serde_json::from_str::<Value>(&input).unwrap());
    // The payload is that document itself (the codec declares text output), well under
    // compact JSON.
    assert_eq!(payload, reference);
    assert!(tokens(payload) <= tokens(&reference));
    assert!(tokens(payload) * 100 < tokens(&compact(&input)) * 80);
}

#[test]
fn query_result_at_minimal_is_at_least_15_percent_under_reference_toon() {
    let (_dir, host) = host();
    let input = corpus("query-500x12.json");
    let out = toon_of(&host, &input);
    let payload = out.text().unwrap();
    let reference = reference_toon(&input);
    assert_eq!(tokens(&reference), 14_041);
    let ours = tokens(payload);
    assert!(
        ours * 100 <= tokens(&reference) * 85,
        "{ours} tokens against the reference's {}",
        tokens(&reference)
    );
    // Its four constant columns are hoisted; `1000.0` keeps its text (the reference: `1000`).
    let document = document(payload);
    assert!(document.contains(
        "rows:\n  _constants:\n    region: south\n    active: true\n    notes: null\n    c0: 0\n  \
         _rows[500]{store_id,revenue,c1,c2,c3,c4,c5,c6}:\n    S0000,1000.0,0,0,0,0,0,0\n"
    ));
    assert!(reference.contains("\n  S0000,1000,south,true,null,0,0,0,0,0,0,0\n"));
}

#[test]
fn hoisted_constants_read_back_under_the_reference_decoder() {
    let (_dir, host) = host();
    let rows: Vec<String> = (0..40)
        .map(|i| {
            format!(
                r#"{{"id":{i},"name":"item {i}","status":"active","owner":{{"login":"ada","type":"User"}},"score":{}.5,"deleted":null}}"#,
                i * 3
            )
        })
        .collect();
    let input = format!(r#"{{"page":1,"items":[{}],"total":40}}"#, rows.join(","));
    let out = toon_of(&host, &input);
    let document = document(out.text().unwrap());
    assert!(
        document.starts_with(
            "page: 1\nitems:\n  _constants:\n    status: active\n    owner:\n      login: ada\n      \
             type: User\n    deleted: null\n  _rows[40]{id,name,score}:\n    0,item 0,0.5\n"
        ),
        "{document}"
    );
    let read: Value = toon_format::decode_strict(&document).unwrap();
    // What the reader sees: an object holding the constants and the rows.
    assert_eq!(read["items"]["_constants"]["owner"]["login"], "ada");
    assert_eq!(read["items"]["_rows"].as_array().unwrap().len(), 40);
    assert_eq!(
        unhoist(read),
        serde_json::from_str::<Value>(&input).unwrap()
    );
}

#[test]
fn numbers_keep_their_text_where_reference_toon_rewrites_them() {
    let (_dir, host) = host();
    let rows: Vec<String> = (0..10)
        .map(|i| {
            format!(
                r#"{{"n":{i},"price":1000.0,"big":123456789012345678901234567890,"e":1E5,"z":-0}}"#
            )
        })
        .collect();
    let input = format!("[{}]", rows.join(","));
    let out = toon_of(&host, &input);
    let document = document(out.text().unwrap());
    assert!(
        document.starts_with("_constants:\n  price: 1000.0\n  big: 123456789012345678901234567890\n  e: 1E5\n  z: -0\n"),
        "{document}"
    );
    // The reference encoder would write `1000`, `1.2345678901234568e29`-like rewrites and `0`.
    let reference = reference_toon(&input);
    assert!(reference.contains(",1000,"), "{reference}");
    assert!(!reference.contains("1000.0"));
}

#[test]
fn payloads_toon_handles_badly_keep_their_compact_json() {
    let (_dir, host) = host();
    // Deep nesting: every level costs TOON an indented line.
    let opening: String = (0..30).map(|i| format!(r#"{{"level{i}":"#)).collect();
    let deep = format!("{opening}[1,2]{}", "}".repeat(30));
    // Semi-uniform rows: not one table, so every row is a list item with a line per member.
    let semi: Vec<String> = (0..40)
        .map(|i| match i % 4 {
            0 => format!(r#"{{"id":{i},"a":1}}"#),
            1 => format!(r#"{{"id":{i},"b":{{"c":[1,{{"d":2}}]}}}}"#),
            2 => format!(r#"{{"id":{i},"tags":[["x"],{{"y":1}}]}}"#),
            _ => format!(r#"{{"id":{i},"a":1,"e":null}}"#),
        })
        .collect();
    let semi = format!("[{}]", semi.join(","));
    for input in [deep, semi] {
        let out = host.process(Call::new("t", Input::Text(&input)));
        assert_eq!(out.text(), Some(input.as_str()), "byte-identical");
        assert!(!out.meta.compressed);
        assert_eq!(out.meta.skipped, Some(Skip::NoGain));
        // The codec itself declines: its TOON would not be smaller.
        let outcome = host
            .compress("t", Payload::json(&input), Level::Minimal)
            .unwrap();
        assert_eq!(outcome, Outcome::Unchanged);
    }
}

#[test]
fn every_level_gives_the_same_lossless_output() {
    let input = compact(&corpus("github-labels.json"));
    let mut payloads = Vec::new();
    for level in ["minimal", "normal", "aggressive"] {
        let (_dir, host) = host_with(level, "").unwrap();
        let out = host.process(Call::new("t", Input::Text(&input)));
        assert!(
            out.meta.compressed && !out.meta.teed,
            "{level}: {:?}",
            out.meta
        );
        payloads.push(out.text().unwrap().to_owned());
    }
    assert!(payloads.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn hoist_false_writes_the_reference_layout() {
    let (_dir, host) = host_with("minimal", "hoist = false").unwrap();
    let input = corpus("query-500x12.json");
    let out = toon_of(&host, &input);
    let document = document(out.text().unwrap());
    // The reference's layout; only numbers such as `1000.0` keep their text (the reference
    // writes `1000`).
    assert!(document.contains("\n  S0000,1000.0,south,true,null,0,0,0,0,0,0,0\n"));
    assert!(document.replace(".0,", ",") == reference_toon(&input));
}

#[test]
fn bad_params_fail_at_host_construction() {
    let cases = [
        ("hoist = \"yes\"", "param \"hoist\""),
        (
            "hoisting = true",
            "param \"hoisting\": unknown key (known: hoist)",
        ),
    ];
    for (params, expected) in cases {
        let Err(err) = host_with("minimal", params) else {
            panic!("the host accepted {params}");
        };
        let lines: Vec<String> = err.errors.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("entry \"t\": codec \"toon\""),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(expected), "for {params}: {}", lines[0]);
    }
}

#[test]
fn builtin_toon_and_tool_result_prune_plugin_are_listed_and_used_in_one_replay() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    shipped_package(&plugins, "tool-result-prune", PRUNE);
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".parrot")).unwrap();
    std::fs::write(
        project.join(".parrot/compressors.toml"),
        "[compressor.\"github_list_repos\"]\ncodec = \"toon\"\nlevel = \"minimal\"\n\n\
         [compressor.\"read_build_output\"]\ncodec = \"tool_result_prune\"\nlevel = \"normal\"\n",
    )
    .unwrap();
    let repos: Value = serde_json::from_str(&corpus("github-repos.json")).unwrap();
    let log: String = corpus("build-log.txt").chars().take(20_000).collect();
    let session = dir.path().join("session.jsonl");
    let lines = [
        serde_json::json!({"tool": "github_list_repos", "status": "success", "result": repos}),
        serde_json::json!({"tool": "read_build_output", "status": "success", "result": log}),
    ];
    std::fs::write(
        &session,
        lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let out_file = dir.path().join("out.jsonl");
    let run = |args: &[&str]| {
        let out = Command::new(support::binary())
            .arg("--project")
            .arg(&project)
            .arg("--plugins")
            .arg(&plugins)
            .args(args)
            .env_remove("PARROT_PLUGIN_PATH")
            .output()
            .expect("parrot-compress runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    };

    let listing = run(&["plugins"]);
    for (codec, origin) in [("toon", "built-in"), ("tool_result_prune", PRUNE)] {
        let line = listing
            .lines()
            .find(|line| line.starts_with(&format!("{codec} ")))
            .unwrap_or_else(|| panic!("{codec} is not listed:\n{listing}"));
        assert!(line.contains(origin), "{line}");
    }

    let report = run(&[
        "replay",
        session.to_str().unwrap(),
        "--json",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    let report: Value = serde_json::from_str(&report).expect("a JSON report");
    for tool in ["github_list_repos", "read_build_output"] {
        let row = report["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["tool"] == tool)
            .unwrap_or_else(|| panic!("no row for {tool}: {report}"));
        assert_eq!(row["compressed"], 1, "{row}");
        assert!(
            row["tokens_after"].as_u64() < row["tokens_before"].as_u64(),
            "{row}"
        );
    }
    let calls: Vec<Value> = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(calls[0]["meta"]["compression_codec"], "toon");
    assert_eq!(calls[0]["meta"]["compression_teed"], false);
    // `--out` writes each payload as its text: here the TOON document.
    let payload = document(calls[0]["payload"].as_str().expect("the payload text"));
    assert!(
        payload.starts_with("[100]{id,name,repo,description,"),
        "{payload:.80}"
    );
    assert_eq!(calls[1]["meta"]["compression_codec"], "tool_result_prune");
    assert_eq!(calls[1]["meta"]["compression_teed"], true);
}

/// What the reference TOON decoder of the npm registry (`@toon-format/toon`, pinned in
/// `tests/mcp`) reads `toon` as.
fn reference_decode(toon: &str) -> Value {
    use std::io::Write;
    let script = crate::mcp_proxy::node_modules()
        .parent()
        .expect("tests/mcp")
        .join("toon_decode.mjs");
    let mut child = Command::new(crate::mcp_proxy::node())
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(toon.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the reference decoder failed on:\n{toon}"
    );
    serde_json::from_slice(&out.stdout).expect("the decoder writes JSON")
}

#[test]
fn numbers_beyond_a_double_are_never_claimed_lossless_as_bare_toon() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".parrot")).unwrap();
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"t\"]\ncodec = \"toon\"\n",
    )
    .unwrap();
    let rows = |big: &str| {
        let rows: Vec<String> = (0..20)
            .map(|i| {
                let v = if i == 7 {
                    big.to_owned()
                } else {
                    i.to_string()
                };
                format!(r#"{{"id":{i},"name":"row {i}","v":{v}}}"#)
            })
            .collect();
        format!("[{}]", rows.join(","))
    };
    let digits = "7".repeat(500);
    // The last row is the control: the harness reads ordinary TOON back as its JSON.
    for (big, bare) in [
        ("1E400", false),
        ("1e999999", false),
        (digits.as_str(), false),
        ("-2.5e300", true),
    ] {
        let input = rows(big);
        let out = support::run_in(
            dir.path(),
            &["--no-tee", "compress", "--tool", "t", "--meta"],
            input.as_bytes(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let payload = String::from_utf8(out.stdout).unwrap();
        let meta: Value = serde_json::from_slice(&out.stderr).expect("one meta line");
        if bare {
            assert_eq!(meta["compression_codec"], "toon", "{meta}");
            assert!(payload.contains(big), "{payload}");
        }
        if meta["compression_codec"] == "toon" && meta["_compressed"] == true {
            let read = reference_decode(&payload);
            let expected: Value = serde_json::from_str(&input).unwrap();
            assert!(
                equal_by_number_value(&unhoist(read.clone()), &expected),
                "{big}: the reference decoder reads\n{read}\nfrom\n{payload}"
            );
        } else {
            assert!(!bare, "{big}: {meta}");
        }
    }
}

/// Issue 48: a TOON document over `max_result_chars` was cut by the host as text, inside its
/// table, with a marker whose selector was the whole original. The codec now cuts its own
/// output: the corpus's query result (its 500 rows, a hoisted table, last in the document) is
/// cut between whole rows, its head kept, and the marker's `pointer` and `rows` return exactly
/// the rows not shown.
#[test]
fn a_toon_table_over_max_result_chars_is_cut_between_rows_and_its_selector_returns_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join(".parrot")).expect("project folder");
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"t\"]\ncodec = \"toon\"\nlevel = \"minimal\"\n",
    )
    .expect("project manifest");
    let max = 2_000;
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .max_result_chars(max)
        .build()
        .expect("host builds");
    // The members after the rows go: a document that does not end with its table is cut as
    // text (what the cut removes would be two parts of the original).
    let query: Value = serde_json::from_str(&corpus("query-500x12.json")).unwrap();
    let input = serde_json::json!({"driver": query["driver"], "rows": query["rows"]}).to_string();
    let out = host.process(Call::new("t", Input::Text(&input)).level(Level::Minimal));
    assert_eq!(out.meta.codec.as_deref(), Some("toon"), "{:?}", out.meta);
    let text = out.text().unwrap();
    assert!(text.chars().count() <= max, "{}", text.chars().count());
    let pointed = support::pointed(text).expect("a pointer");
    assert_eq!(pointed.reason, "cut");
    let (kept, marker) = pointed.text.rsplit_once('\n').unwrap();
    assert!(
        kept.starts_with("driver: pg\nrows:\n  _constants:\n"),
        "{kept}"
    );
    let shown = kept
        .lines()
        .filter(|line| line.starts_with("    S0"))
        .count();
    assert!(shown > 10, "{shown} rows shown: {kept}");
    let last = kept.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("    S{:04},", shown - 1)),
        "{last}"
    );
    assert_eq!(
        marker,
        format!(
            "[\u{2026} cut at max_result_chars: {} of 500 rows not shown, rows {shown}-499 of \
             the array at /rows; wm_get_result {{\"pointer\":\"/rows\",\"rows\":\"{shown}-499\"}}]",
            500 - shown
        )
    );
    let selector = parrot_recover::Selector {
        pointer: Some("/rows".to_owned()),
        rows: Some(format!("{shown}-499")),
        max_chars: Some(0),
        ..parrot_recover::Selector::default()
    };
    let part = parrot_recover::Recover::recover_selected(&host, &pointed.key, &selector).unwrap();
    assert!(
        part.notes
            .iter()
            .any(|note| note == &format!("rows {shown}-499 of 500 at /rows")),
        "{:?}",
        part.notes
    );
    let first_not_shown = format!("S{shown:04}");
    let first_shown_not = format!("S{:04}", shown - 1);
    assert!(part.body.contains(&first_not_shown) && part.body.contains("S0499"));
    assert!(
        !part.body.contains(&first_shown_not),
        "{}",
        &part.body[..300]
    );
}
