//! The codec contract (`parrot-codec-test`) held by every codec as a host hands it out: the
//! built-ins, and the shipped plugin codecs through their cdylibs, loaded across the boundary,
//! on every corpus file and on inputs made to make each codec act, with default params.
//!
//! Each codec's own crate holds it to the contract with every params row (`src/contract.rs` of
//! each shipped plugin, `codecs/tests/contract.rs`); what only this test can do is load the
//! libraries, so it checks that the boundary changes nothing of what the contract sees.
//! The codecs are called directly, as the contract check calls them, not through the pipeline.

use std::path::Path;

use parrot_codec_test::Contract;
use parrot_host::Host;

use crate::support::shipped_package;

/// One row per shipped plugin codec, with default params: the codec's name, and whether its
/// metadata declares that `null` members count as absent (as the host reads it from across the
/// boundary). The built-ins have no rows here: [`codecs`] takes each from the registry of
/// built-ins with its own declaration, so that a built-in added is checked with no edit.
const PLUGIN_CODECS: [(&str, bool); 3] = [
    ("line_dedup", false),
    ("ansi_strip", false),
    ("tool_result_prune", false),
];

/// Every codec checked: each built-in (its declaration as the codec states it), then
/// [`PLUGIN_CODECS`].
fn codecs() -> Vec<(&'static str, bool)> {
    let builtins = parrot_codecs::builtins()
        .into_iter()
        .map(|builtin| (builtin.meta.name(), builtin.meta.null_members_absent()));
    builtins.chain(PLUGIN_CODECS).collect()
}

/// The shipped packages: their folder under `plugins/` and their library.
const SHIPPED: [(&str, &str); 3] = [
    ("ansi-strip", "parrot_plugin_ansi_strip"),
    ("line-dedup", "parrot_plugin_line_dedup"),
    ("tool-result-prune", "parrot_plugin_tool_result_prune"),
];

/// A host with every shipped package and one entry per row of [`codecs`], the tool `row<i>`.
fn host() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().expect("temp dir");
    let plugins = dir.path().join("plugins");
    for (folder, library) in SHIPPED {
        shipped_package(&plugins, folder, library);
    }
    let entries: String = codecs()
        .iter()
        .enumerate()
        .map(|(i, (codec, _))| format!("[compressor.\"row{i}\"]\ncodec = \"{codec}\"\n"))
        .collect();
    std::fs::create_dir(dir.path().join(".parrot")).expect("project folder");
    std::fs::write(dir.path().join(".parrot/compressors.toml"), entries).expect("manifest");
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .plugin_dir(&plugins)
        .build()
        .unwrap_or_else(|err| panic!("{err}"));
    (dir, host)
}

/// Every corpus file (the JSON tool results and the build log), by name.
fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.expect("corpus entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "json" || ext == "txt")
        })
        .map(|path| {
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            (name, text)
        })
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the corpus is in {}", dir.display());
    files
}

/// Inputs on which each codec acts: repeated lines, terminal escapes and redraws, a long
/// string inside JSON, an MCP tool result, rows with nulls, pretty JSON.
fn made_inputs() -> Vec<(String, String)> {
    // Runs long enough to pay for line_dedup's marker: on short runs ("a\na\na", blank lines)
    // its output is longer than its input, a breach of the contract that its own tests pin and
    // the host's no-gain rule hides.
    let retry = "retrying the connection to db-7.internal:5432 in 5 s\n".repeat(8);
    let lines = format!("start\n{retry}connected\n{}done", "ok\n".repeat(30));
    let terminal = "\u{1b}[1;31merror\u{1b}[0m: 10%\r50%\r100%\n\u{1b}]0;title\u{7}ok\n".repeat(3);
    let long = format!(r#"{{"log": "{}"}}"#, "line of output ".repeat(60));
    let mcp = format!(
        r#"{{"content": [{{"type": "text", "text": "{}"}}], "isError": false}}"#,
        "x".repeat(900)
    );
    let rows = (0..12)
        .map(|i| format!(r#"{{"id": {i}, "name": "n{i}", "note": null, "ok": true, "v": 1.50}}"#))
        .collect::<Vec<_>>()
        .join(",\n  ");
    [
        ("repeated lines", lines),
        ("terminal output", terminal),
        ("a long string", long),
        ("an MCP tool result", mcp),
        ("rows", format!("[\n  {rows}\n]")),
        (
            "a query result",
            format!(r#"{{"driver": "pg", "rows": [{rows}]}}"#),
        ),
    ]
    .into_iter()
    .map(|(name, text)| (name.to_owned(), text))
    .collect()
}

#[test]
fn every_codec_keeps_the_contract_on_the_corpus_and_made_inputs() {
    let (_dir, host) = host();
    let inputs: Vec<(String, String)> = corpus().into_iter().chain(made_inputs()).collect();
    let mut violations = Vec::new();
    for (i, (name, nulls_absent)) in codecs().into_iter().enumerate() {
        let tool = format!("row{i}");
        let entry = host.resolve(&tool).entry;
        let codec = entry
            .unwrap_or_else(|| panic!("{tool}: no entry"))
            .codec()
            .unwrap_or_else(|| panic!("{tool}: not a codec"));
        assert_eq!(codec.name(), name, "{tool}");
        assert_eq!(
            codec.meta().null_members_absent(),
            nulls_absent,
            "{name}'s declaration"
        );
        let contract = Contract::new(codec);
        for (input, text) in &inputs {
            if let Err(violation) = contract.check(text) {
                violations.push(format!("{name} on {input}: {violation}"));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n\n"));
}

#[test]
fn every_builtin_and_shipped_codec_has_a_row() {
    let (_dir, host) = host();
    let rows: Vec<&str> = codecs().iter().map(|(name, _)| *name).collect();
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins");
    let shipped = std::fs::read_dir(&plugins)
        .expect("plugins folder")
        .map(|entry| entry.expect("plugin folder").file_name())
        .filter(|folder| plugins.join(folder).join("compressors.toml").is_file())
        .count();
    assert_eq!(
        shipped,
        SHIPPED.len(),
        "a shipped package missing from SHIPPED"
    );
    // Each shipped plugin holds its codecs to the contract in its own crate.
    for (folder, _) in SHIPPED {
        let lib = std::fs::read_to_string(plugins.join(folder).join("src/lib.rs"))
            .expect("the plugin's lib.rs");
        assert!(
            lib.contains("#[cfg(test)]\nmod contract;")
                && plugins.join(folder).join("src/contract.rs").is_file(),
            "plugins/{folder} has no contract test of its own (src/contract.rs)"
        );
    }
    let codecs: Vec<String> = host
        .registry()
        .codecs()
        .map(|codec| codec.meta.name().to_owned())
        .collect();
    assert!(codecs.len() >= 6, "{codecs:?}");
    for codec in codecs {
        assert!(
            rows.contains(&codec.as_str()),
            "no contract row for \"{codec}\""
        );
    }
}
