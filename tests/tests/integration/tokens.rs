//! The no-gain rule in tokens (CONTRACT §2.1): no payload the model sees holds more o200k
//! tokens than the input, for every codec the registry offers (the built-ins and the shipped
//! plugin packages, loaded from their cdylibs), at every level, over the whole corpus and the
//! sample session.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::support::shipped_package;
use parrot_host::{
    Call, Host, Input, Level, MemoryTeeStore, Outcome, Payload, Skip, TokenCounter, Tokenizer,
};
use serde_json::Value;

/// The shipped plugin packages: folder under `plugins/`, and library.
const PACKAGES: [(&str, &str); 3] = [
    ("line-dedup", "parrot_plugin_line_dedup"),
    ("ansi-strip", "parrot_plugin_ansi_strip"),
    ("tool-result-prune", "parrot_plugin_tool_result_prune"),
];

const LEVELS: [Level; 3] = [Level::Minimal, Level::Normal, Level::Aggressive];

fn tokens(text: &str) -> usize {
    Tokenizer::O200k.count(text)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every JSON file of the corpus and its build log as they are on disk, then every result of
/// the sample session as `replay` gives it to the host (a string result is its text, any other
/// value its compact JSON); a text that appears twice is kept once.
fn payloads() -> Vec<(String, String)> {
    let corpus = root().join("corpus");
    let mut names: Vec<String> = std::fs::read_dir(&corpus)
        .expect("corpus/")
        .map(|entry| {
            entry
                .expect("corpus entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".json") || name == "build-log.txt")
        .collect();
    names.sort();
    assert_eq!(names.len(), 8, "{names:?}");
    let mut payloads: Vec<(String, String)> = names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(corpus.join(&name))
                .unwrap_or_else(|err| panic!("corpus/{name}: {err}"));
            (format!("corpus/{name}"), text)
        })
        .collect();
    let session = std::fs::read_to_string(root().join("samples/session.jsonl")).expect("session");
    for (i, line) in session.lines().enumerate() {
        let call: Value = serde_json::from_str(line).expect("session line");
        let result = match &call["result"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let name = format!(
            "session line {} ({})",
            i + 1,
            call["tool"].as_str().unwrap()
        );
        if payloads.iter().all(|(_, text)| *text != result) {
            payloads.push((name, result));
        }
    }
    // The real captures of listings, hits, tables and VCS output (under 40 KB: the larger ones
    // add time, not shapes), on which the text codecs act.
    let text = corpus.join("text");
    let mut captures: Vec<_> = std::fs::read_dir(&text)
        .expect("corpus/text/")
        .map(|entry| entry.expect("corpus/text entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    captures.sort();
    for path in captures {
        let capture = std::fs::read_to_string(&path).expect("a UTF-8 capture");
        if capture.len() < 40_000 {
            let name = path.file_name().unwrap().to_string_lossy();
            payloads.push((format!("corpus/text/{name}"), capture));
        }
    }
    payloads
}

/// A host with the shipped packages and a memory tee store that compresses inline at any size
/// (as the command does, so the largest payloads reach their codecs), with a project manifest
/// naming every codec the registry offers under the tool `via_<codec>`. The savings report's
/// background counting is off: the test counts what it checks itself.
fn host_with_every_codec() -> (tempfile::TempDir, Host, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let plugins = dir.path().join("plugins");
    for (package, library) in PACKAGES {
        shipped_package(&plugins, package, library);
    }
    let build = |dir: &Path| {
        Host::builder()
            .project(dir)
            .plugin_path(None)
            .plugin_dir(&plugins)
            .tee_store(Arc::new(MemoryTeeStore::new(100_000)))
            .inline_at_any_size(true)
            .report_tokens(false)
            .build()
            .expect("host builds")
    };
    let codecs: Vec<String> = build(dir.path())
        .registry()
        .codecs()
        .map(|codec| codec.meta.name().to_owned())
        .collect();
    let manifest: String = codecs
        .iter()
        .map(|codec| format!("[compressor.\"via_{codec}\"]\ncodec = \"{codec}\"\n"))
        .collect();
    std::fs::create_dir_all(dir.path().join(".parrot")).expect("project folder");
    std::fs::write(dir.path().join(".parrot/compressors.toml"), manifest).expect("manifest");
    let host = build(dir.path());
    (dir, host, codecs)
}

#[test]
fn no_payload_of_the_corpus_or_the_session_comes_out_with_more_tokens_for_any_codec_at_any_level() {
    let (_dir, host, codecs) = host_with_every_codec();
    for expected in [
        "json_compact",
        "columnar",
        "line_dedup",
        "ansi_strip",
        "tool_result_prune",
        "toon",
    ] {
        assert!(
            codecs.iter().any(|c| c == expected),
            "{expected}: {codecs:?}"
        );
    }
    let mut compressed = 0;
    let mut checked = 0;
    // The text codecs, and the captures each compressed.
    let mut text_codecs = [("hits", 0), ("paths", 0), ("table", 0)];
    for (name, input) in payloads() {
        let capture = name.starts_with("corpus/text/");
        let before = tokens(&input);
        for codec in &codecs {
            let tool = format!("via_{codec}");
            for level in LEVELS {
                let out = host.process(Call::new(&tool, Input::Text(&input)).level(level));
                let seen = out.text().expect("a UTF-8 payload");
                let after = tokens(seen);
                assert!(
                    after <= before,
                    "{name}, {codec} at {level}: {after} tokens out of {before} ({:?})",
                    out.meta
                );
                // The corpus and the session are the other codecs' measure: the text codecs
                // act on the captures (counted apart below).
                let text_codec = text_codecs.iter().any(|(name, _)| name == codec);
                let counted = !capture && !text_codec;
                if out.meta.compressed {
                    assert!(seen.len() < input.len(), "{name}, {codec} at {level}");
                    compressed += usize::from(counted);
                    for (text_codec, count) in &mut text_codecs {
                        *count += usize::from(capture && codec == text_codec);
                    }
                } else {
                    assert_eq!(seen, input, "{name}, {codec} at {level}");
                }
                checked += usize::from(counted);
            }
        }
    }
    // Not a vacuous pass: most codecs compress something of the corpus and the session at
    // some level, and each text codec some of the captures.
    assert!(compressed > checked / 5, "{compressed} of {checked}");
    for (codec, count) in text_codecs {
        assert!(count > 0, "{codec} compressed no capture");
    }
}

/// A host with the built-in `toon` on `"*"` at `minimal`, with a memory tee store.
fn toon_everywhere() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".parrot")).expect("project");
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"*\"]\ncodec = \"toon\"\nlevel = \"minimal\"\n",
    )
    .expect("manifest");
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .build()
        .expect("host builds");
    (dir, host)
}

fn compact(json: &str) -> String {
    serde_json::from_str::<Value>(json).unwrap().to_string()
}

/// Regression: with `toon` on `"*"`, these two nested API responses came out smaller in bytes
/// and larger in tokens (4.9% and 7.5% more), because the no-gain rule compared bytes.
#[test]
fn toon_on_a_nested_api_response_never_adds_tokens() {
    let (_dir, host) = toon_everywhere();
    for (tool, file) in [
        ("github_get_repository", "github-get-repository.json"),
        ("github_project_cards", "github-project-cards.json"),
    ] {
        let input = compact(
            &std::fs::read_to_string(root().join("corpus").join(file)).expect("corpus file"),
        );
        // What TOON makes of it: fewer bytes, more tokens.
        let Outcome::Changed { payload, lossy } = host
            .compress(tool, Payload::json(&input), Level::Minimal)
            .expect("toon runs")
        else {
            panic!("{file}: toon left it unchanged");
        };
        assert!(!lossy);
        assert!(payload.len() < input.len(), "{file}");
        assert!(tokens(&payload) > tokens(&input), "{file}");

        let out = host.process(Call::new(tool, Input::Text(&input)));
        assert_eq!(out.text(), Some(input.as_str()), "{file}: byte-identical");
        assert!(!out.meta.compressed, "{file}");
        assert_eq!(out.meta.skipped, Some(Skip::NoGain), "{file}");
        assert!(
            !out.meta.teed,
            "{file}: nothing stored for a discarded outcome"
        );
    }
}

/// Fewer bytes and as many tokens is a gain: the rule forbids more tokens, not equal ones
/// (the sample session's `get_time` result: TOON drops the braces and quotes, not a token).
#[test]
fn toon_with_fewer_bytes_and_as_many_tokens_goes_out() {
    let (_dir, host) = toon_everywhere();
    let input = r#"{"now":"2026-11-30T03:00:00Z"}"#;
    let Outcome::Changed { payload, .. } = host
        .compress("get_time", Payload::json(input), Level::Minimal)
        .expect("toon runs")
    else {
        panic!("toon left it unchanged");
    };
    assert!(payload.len() < input.len());
    assert_eq!(tokens(&payload), tokens(input));
    let out = host.process(Call::new("get_time", Input::Text(input)));
    assert!(out.meta.compressed, "{:?}", out.meta);
    assert_eq!(out.text(), Some(payload.as_str()));
}
