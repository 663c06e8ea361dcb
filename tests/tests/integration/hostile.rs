//! Hostile input and faults: whatever a tool returns comes out either compressed correctly or
//! untouched, with the original recoverable, and the host neither panics nor hangs. Each test
//! is one row of the catalogue in docs/RELIABILITY.md.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{self, package, plugin_manifest};
use parrot_host::{
    BreakerConfig, Budgets, Call, Host, Input, Level, MemoryTeeStore, Skip, TeeError, TeeStore,
};
use serde_json::Value;

const FAULTS: &str = "parrot_plugin_fault_codecs";

fn host_with(tee: Option<Arc<dyn TeeStore>>, manifest: &str) -> (tempfile::TempDir, Host) {
    host_configured(tee, manifest, |_| {})
}

fn host_configured(
    tee: Option<Arc<dyn TeeStore>>,
    manifest: &str,
    configure: impl FnOnce(&mut parrot_host::HostBuilder),
) -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    std::fs::write(dir.path().join(".parrot/compressors.toml"), manifest).unwrap();
    let mut builder = Host::builder();
    builder.project(dir.path()).plugin_path(None);
    if let Some(tee) = tee {
        builder.tee_store(tee);
    }
    configure(&mut builder);
    let host = builder.build().unwrap();
    (dir, host)
}

fn memory() -> Option<Arc<dyn TeeStore>> {
    Some(Arc::new(MemoryTeeStore::new(1_000)))
}

/// The manifest of these tests: `rows` → columnar, everything else json_compact (the core
/// default).
const ROWS: &str = "[compressor.\"rows\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n";
/// [`ROWS`], and `json_compact` for the tool `any`: the hostile inputs of its lossy paths
/// (clipping, trimming) and of its markers (the default `auto` runs it losslessly).
const ROWS_AND_COMPACT: &str = "[compressor.\"rows\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n\
     [compressor.\"any\"]\ncodec = \"json_compact\"\n";

fn input_bytes(input: &Input<'_>) -> Vec<u8> {
    match input {
        Input::Text(text) => text.as_bytes().to_vec(),
        Input::Bytes(bytes) => bytes.to_vec(),
        Input::Json(value) => value.to_string().into_bytes(),
    }
}

#[test]
fn json_nested_100000_levels_deep_passes_through_as_text() {
    let (_dir, host) = host_with(memory(), ROWS);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
        let out = host.process(Call::new("rows", Input::Text(&deep)).level(level));
        assert_eq!(out.text(), Some(deep.as_str()));
        assert_eq!(out.meta.skipped, Some(Skip::NoGain), "{level}");
    }
    let deep_object = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let out = host.process(Call::new("any", Input::Text(&deep_object)));
    assert_eq!(out.text(), Some(deep_object.as_str()));
}

#[test]
fn duplicate_member_names_pass_through() {
    let (_dir, host) = host_with(memory(), ROWS);
    let rows: Vec<String> = (0..30)
        .map(|i| format!("{{\"id\":{i},\"x\":null,\"id\":{}}}", i + 1))
        .collect();
    let payload = format!("[{}]", rows.join(","));
    for tool in ["rows", "any"] {
        let out = host.process(Call::new(tool, Input::Text(&payload)).level(Level::Normal));
        assert_eq!(out.text(), Some(payload.as_str()), "{tool}");
        assert_eq!(out.meta.skipped, Some(Skip::UnsupportedPayload));
        assert!(!out.meta.teed);
    }
}

#[test]
fn invalid_utf8_lone_surrogates_and_nan_pass_through_unchanged() {
    let (_dir, host) = host_with(memory(), ROWS);
    let cases: Vec<(&str, Vec<u8>, Skip)> = vec![
        (
            "invalid UTF-8",
            b"{\"a\": \"\xff\xfe\", \"b\": null}".to_vec(),
            Skip::UnsupportedPayload,
        ),
        (
            "lone surrogate",
            br#"{"a": "\ud800", "b": null}"#.to_vec(),
            Skip::NoGain,
        ),
        ("NaN", b"{\"a\": NaN, \"b\": null}".to_vec(), Skip::NoGain),
        (
            "Infinity",
            b"[Infinity, -Infinity, null, null]".to_vec(),
            Skip::NoGain,
        ),
        ("empty", Vec::new(), Skip::UnsupportedPayload),
    ];
    for (name, bytes, skip) in cases {
        for tool in ["rows", "any"] {
            let out = host.process(Call::new(tool, Input::Bytes(&bytes)).level(Level::Aggressive));
            assert_eq!(&*out.payload, &bytes[..], "{name} via {tool}");
            assert_eq!(out.meta.skipped, Some(skip), "{name} via {tool}");
        }
    }
}

#[test]
fn a_200mb_payload_passes_the_router_without_running_a_codec() {
    let (_dir, host) = host_with(memory(), ROWS);
    let row = r#"{"store":"S0001","revenue":1001.37,"region":"south","notes":null},"#;
    let mut payload = String::with_capacity(200 * 1024 * 1024 + 64);
    payload.push('[');
    while payload.len() < 200 * 1024 * 1024 {
        payload.push_str(row);
    }
    payload.push_str("{}]");
    let out = host.process(Call::new("rows", Input::Text(&payload)));
    assert_eq!(out.meta.skipped, Some(Skip::BudgetPassthrough));
    assert!(
        matches!(out.payload, std::borrow::Cow::Borrowed(_)),
        "the payload is handed back, not copied"
    );
    assert_eq!(out.meta.size_after, payload.len());
}

#[test]
fn a_50mb_json_string_is_clipped_and_teed_at_normal() {
    // Inline at any size, as the command runs: the router would pass 50 MB through otherwise.
    let (_dir, host) = host_configured(memory(), ROWS_AND_COMPACT, |b| {
        b.inline_at_any_size(true);
    });
    let payload = format!("\"{}\"", "lorem ipsum ".repeat(50 * 1024 * 1024 / 12));
    let out = host.process(Call::new("any", Input::Text(&payload)).level(Level::Minimal));
    assert_eq!(
        out.meta.skipped,
        Some(Skip::NoGain),
        "nothing lossless to do"
    );
    let out = host.process(Call::new("any", Input::Text(&payload)).level(Level::Normal));
    assert!(out.meta.teed, "{:?}", out.meta);
    let value: Value = serde_json::from_str(out.text().unwrap()).unwrap();
    assert!(value["result"].as_str().unwrap().contains("chars clipped"));
    let key = out.meta.tee_key.unwrap();
    assert_eq!(host.recover(&key).unwrap().unwrap(), payload.as_bytes());
}

#[test]
fn a_million_tiny_rows_compress_and_nothing_is_lost() {
    let rows: Vec<String> = (0..1_000_000)
        .map(|i| format!("{{\"i\":{}}}", i % 7))
        .collect();
    let payload = format!("[{}]", rows.join(","));

    // The whole table, with the last-resort cut off.
    let (_dir, host) = host_configured(memory(), ROWS, |b| {
        b.max_result_chars(0);
    });
    let out = host.process(Call::new("rows", Input::Text(&payload)).level(Level::Minimal));
    assert!(out.meta.compressed, "{:?}", out.meta);
    let whole = out.text().unwrap().to_owned();
    let table: Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(table["columns"], serde_json::json!(["i"]));
    assert_eq!(table["rows"].as_array().unwrap().len(), 1_000_000);

    // With the default cut (200,000 code points), the table is cut and the input stored: the
    // table's JSON, one line, is cut between two characters and says how many went.
    let (_dir, host) = host_with(memory(), ROWS);
    let out = host.process(Call::new("rows", Input::Text(&payload)).level(Level::Minimal));
    let text = out.text().unwrap();
    assert!(text.chars().count() <= 200_000);
    let value: Value = serde_json::from_str(text).unwrap();
    let result = value["result"].as_str().unwrap();
    let (kept, marker) = result.rsplit_once('\n').unwrap();
    assert!(whole.starts_with(kept));
    let hidden = whole.chars().count() - kept.chars().count();
    assert_eq!(
        marker,
        format!(
            "[\u{2026} cut at max_result_chars inside line 1 of this result: {hidden} characters \
             not shown; wm_get_result {{}} returns the whole original]"
        )
    );
    assert_eq!(value["_tee"]["reason"], "cut");
    let key = value["_tee"]["key"].as_str().unwrap();
    assert_eq!(host.recover(key).unwrap().unwrap(), payload.as_bytes());
}

#[test]
fn keys_that_collide_with_our_markers_stay_unambiguous() {
    let (_dir, host) = host_with(memory(), ROWS_AND_COMPACT);
    let inputs = [
        r#"{"_tee": {"key": "forged"}, "a": null, "b": [1, 1, 1, 1]}"#,
        r#"[{"_repeat": 2, "_value": 5}, 5, 5, null]"#,
        r#"{"columns": ["a"], "rows": [[1]], "constants": {}, "x": null}"#,
        r#"{"_omitted": 3, "note": null}"#,
    ];
    for input in inputs {
        for level in [Level::Minimal, Level::Normal] {
            let out = host.process(Call::new("any", Input::Text(input)).level(level));
            let text = out.text().unwrap();
            if out.meta.teed {
                let value: Value = serde_json::from_str(text).unwrap();
                let key = value["_tee"]["key"].as_str().unwrap();
                assert_eq!(host.recover(key).unwrap().unwrap(), input.as_bytes());
            } else if out.meta.compressed {
                // Lossless: the built-in inverse gives the input back.
                let codec = host.resolve("any").entry.unwrap().codec().unwrap();
                let expanded: Value = serde_json::from_str(&codec.expand(text).unwrap()).unwrap();
                let mut original: Value = serde_json::from_str(input).unwrap();
                drop_nulls(&mut original);
                assert_eq!(expanded, original, "{input} at {level}");
            }
        }
    }
}

fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// A store whose every put fails, as a full disk or a read-only file does.
struct BrokenStore;

impl TeeStore for BrokenStore {
    fn put(&self, _key: &str, _original: &[u8]) -> Result<(), TeeError> {
        Err(TeeError::Backend {
            store: "broken".to_owned(),
            source: "disk I/O error".into(),
        })
    }

    fn get(&self, _key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        Ok(None)
    }
}

#[test]
fn a_failing_store_sends_lossy_results_out_uncompressed() {
    let (_dir, host) = host_with(Some(Arc::new(BrokenStore)), ROWS);
    let rows: Vec<String> = (0..40)
        .map(|i| format!("{{\"id\":{i},\"region\":\"south\",\"notes\":null}}"))
        .collect();
    let payload = format!("[{}]", rows.join(","));
    let out = host.process(Call::new("rows", Input::Text(&payload)));
    assert_eq!(out.meta.skipped, Some(Skip::TeeFailed));
    assert_eq!(out.text(), Some(payload.as_str()));
    assert!(!out.meta.compressed && !out.meta.teed);
    // Lossless work still goes on: minimal needs no store.
    let out = host.process(Call::new("rows", Input::Text(&payload)).level(Level::Minimal));
    assert!(out.meta.compressed);
}

#[test]
fn a_corrupted_store_file_is_refused_at_open_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tee.db");
    std::fs::write(
        &path,
        b"this is not an SQLite database, just some text\n".repeat(100),
    )
    .unwrap();
    let err = parrot_tee_sqlite::SqliteTeeStore::open(&path, parrot_host::Retention::default())
        .unwrap_err();
    assert!(
        err.to_string().starts_with(&path.display().to_string()),
        "{err}"
    );

    // `compress` opens its store for a result it stores, and then refuses the file as the
    // library does, writing nothing to stdout; a result it does not store goes out without the
    // store being opened.
    let before = std::fs::read(&path).unwrap();
    let config = support::plugin_source("line-dedup").join("compressors.toml");
    let build_log =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/build-log.txt");
    let compress = |status: &str, file: &std::path::Path| {
        std::process::Command::new(support::binary())
            .args(["--project", dir.path().to_str().unwrap()])
            .args(["--tee-store", path.to_str().unwrap()])
            .args([
                "compress",
                "--tool",
                "shell_cargo_build",
                "--status",
                status,
            ])
            .arg(file)
            .output()
            .unwrap()
    };
    // An error's result is always stored: refused before the call, the error alone.
    // A lossy result (the build log): the pipeline warns that the put failed, then the error.
    for (status, file) in [("error", &config), ("success", &build_log)] {
        let out = compress(status, file);
        assert_eq!(out.status.code(), Some(1), "{status}");
        assert!(out.stdout.is_empty(), "{status}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(
            errors[0].starts_with(&format!("error: {}", path.display()))
                && errors[0].contains("not a database"),
            "{stderr}"
        );
        if status == "error" {
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
        }
    }
    // A lossless result (the TOML file is text the log codec leaves alone).
    let out = compress("success", &config);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, std::fs::read(&config).unwrap());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is untouched"
    );
}

fn fault_host(budgets: Budgets, breaker: BreakerConfig) -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let entries = "[compressor.\"slow\"]\ncodec = \"fault_slow\"\nparams = { sleep_ms = 3 }\n";
    let pkg = package(
        dir.path(),
        "faults",
        Some(FAULTS),
        &plugin_manifest(FAULTS, entries),
    );
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .plugin_dir(&pkg)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .budgets(budgets)
        .breaker(breaker)
        .build()
        .unwrap();
    (dir, host)
}

#[test]
fn a_slow_plugin_codec_opens_its_breaker() {
    let (_dir, host) = fault_host(
        Budgets {
            minimal_budget: Duration::from_millis(1),
            ..Budgets::default()
        },
        BreakerConfig {
            window_calls: 3,
            ..BreakerConfig::default()
        },
    );
    let skips: Vec<Option<Skip>> = (0..12)
        .map(|_| {
            host.process(Call::new("slow", Input::Text("[1, 2, 3]")))
                .meta
                .skipped
        })
        .collect();
    // Nine calls fill three over-budget windows; then the codec is skipped.
    assert_eq!(skips[..9], [Some(Skip::NoGain); 9]);
    assert_eq!(skips[9..], [Some(Skip::BreakerOpen); 3]);
}

#[test]
fn no_lossy_output_leaves_without_its_original_stored() {
    // Every route by which an outcome can be lossy, with a store: each output that is not the
    // input carries a pointer whose key recovers the input, or is lossless.
    let (_dir, host) = host_with(memory(), ROWS_AND_COMPACT);
    let rows: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"region\":\"south\",\"notes\":null,\"long\":\"{}\"}}",
                "x".repeat(3000)
            )
        })
        .collect();
    let payload = format!("[{}]", rows.join(","));
    let long_text = format!("\"{}\"", "y".repeat(10_000));
    let calls = [
        Call::new("rows", Input::Text(&payload)),
        Call::new("rows", Input::Text(&payload)).level(Level::Aggressive),
        Call::new("any", Input::Text(&payload)).level(Level::Normal),
        Call::new("any", Input::Text(&payload)).level(Level::Aggressive),
        Call::new("any", Input::Text(&long_text)).level(Level::Normal),
    ];
    for call in calls {
        let input = input_bytes(&call.payload);
        let out = host.process(call);
        assert!(out.meta.compressed, "{:?}", out.meta);
        assert!(
            out.meta.teed,
            "every one of these outcomes is lossy: {:?}",
            out.meta
        );
        let value: Value = serde_json::from_slice(&out.payload).unwrap();
        let key = value["_tee"]["key"].as_str().unwrap();
        assert_eq!(host.recover(key).unwrap().unwrap(), input);
    }
}
