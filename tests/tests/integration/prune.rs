//! The `tool_result_prune` package (`plugins/tool-result-prune`), loaded from its real cdylib
//! through the host: its semantics, its param checks at host construction, its shipped manifest,
//! and the tee pointer and recovery the host adds to its lossy outcomes.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use crate::support::{self, shipped_package};
use parrot_host::{
    Call, Host, Input, Level, MatchKind, MemoryTeeStore, Outcome, OwnedCall, OwnedInput, Payload,
    Processed,
};

const PRUNE: &str = "parrot_plugin_tool_result_prune";
const MARKER: &str = "\n\n[... tool result middle pruned ...]\n\n";
const FAMILY: &str = "👩\u{200d}👩\u{200d}👧";

/// A host whose only package declares the tool `t` → `tool_result_prune` at `normal` with
/// `params` (TOML lines), with a memory tee store.
fn host(params: &str) -> Result<(tempfile::TempDir, Host), parrot_host::BuildError> {
    let entry = format!(
        "[compressor.\"t\"]\ncodec = \"tool_result_prune\"\nlevel = \"normal\"\n\
         [compressor.\"t\".params]\n{params}\n"
    );
    support::one_package_host(PRUNE, "prune", &entry)
}

fn small() -> (tempfile::TempDir, Host) {
    host("threshold_chars = 50\nhead_chars = 4\ntail_chars = 3").expect("host builds")
}

/// The host's pointer to the original stored under `out`'s tee key.
fn pointer(out: &Processed<'_>) -> String {
    let key = out.meta.tee_key.as_deref().expect("a tee key");
    format!(
        r#""_tee":{{"key":"{key}","reason":"lossy","hint":{}}}"#,
        serde_json::Value::from(parrot_host::TEE_HINT)
    )
}

/// The text of a pruned plain-text result, before its pointer line.
fn wrapped_text(out: &Processed<'_>) -> String {
    crate::support::pointed(out.text().unwrap())
        .expect("a pointer line")
        .text
}

fn assert_teed_and_recoverable(host: &Host, out: &Processed<'_>, input: &str) {
    assert!(out.meta.compressed && out.meta.teed, "{:?}", out.meta);
    assert_eq!(out.meta.codec.as_deref(), Some("tool_result_prune"));
    assert_eq!(out.meta.level, Level::Normal);
    let key = out.meta.tee_key.as_deref().unwrap();
    assert_eq!(host.recover(key).unwrap().unwrap(), input.as_bytes());
}

fn text_block(text: &str) -> String {
    format!(r#"{{"type":"text","text":"{text}"}}"#)
}

const REASONING: &str = r#"{"type":"reasoning","text":"the middle is noise","signature":"c2ln"}"#;
const TOOL_CALL: &str =
    r#"{"type":"tool_call","id":"call_1","name":"grep","arguments":{"pattern":"x","max":1.50}}"#;

/// `[A×400 text, reasoning, B×300 text, tool-call, C×300 text]`.
fn blocks() -> String {
    format!(
        "[{},{REASONING},{},{TOOL_CALL},{}]",
        text_block(&"A".repeat(400)),
        text_block(&"B".repeat(300)),
        text_block(&"C".repeat(300)),
    )
}

/// What [`blocks`] becomes with 50/4/3: `[AAAA + marker, reasoning, tool-call, CCC]`.
fn pruned_blocks() -> String {
    format!(
        "[{},{REASONING},{TOOL_CALL},{}]",
        text_block(r"AAAA\n\n[... tool result middle pruned ...]\n\n"),
        text_block("CCC"),
    )
}

#[test]
fn defaults_prune_ten_thousand_code_points_to_5159_with_the_marker_at_4096() {
    let (_dir, host) = host("").unwrap();
    // Four code points of 1, 2, 3 and 4 bytes, so code points and bytes never agree.
    let text: String = "aé漢😀".chars().cycle().take(10_000).collect();
    let out = host.process(Call::new("t", Input::Text(&text)));
    assert_teed_and_recoverable(&host, &out, &text);

    let pruned = wrapped_text(&out);
    let chars: Vec<char> = pruned.chars().collect();
    assert_eq!(chars.len(), 4096 + 39 + 1024);
    assert_eq!(chars.len(), 5159);
    assert_eq!(chars[4096..4096 + 39].iter().collect::<String>(), MARKER);
    let source: Vec<char> = text.chars().collect();
    assert_eq!(chars[..4096], source[..4096]);
    assert_eq!(chars[4096 + 39..], source[10_000 - 1024..]);

    // Pruning the output again returns it unchanged: the codec leaves it alone, and so does
    // the whole stage (byte-identical, nothing stored).
    let again = host
        .compress("t", Payload::text_only(&pruned), Level::Normal)
        .unwrap();
    assert_eq!(again, Outcome::Unchanged);
    let second = host.process(Call::new("t", Input::Text(&pruned)));
    assert_eq!(second.text(), Some(pruned.as_str()));
    assert!(!second.meta.compressed && second.meta.tee_key.is_none());
    let wrapped = out.text().unwrap();
    let second = host.process(Call::new("t", Input::Text(wrapped)));
    assert_eq!(second.text(), Some(wrapped));
}

#[test]
fn three_hundred_emoji_keep_four_the_marker_and_three() {
    let (_dir, host) = small();
    // Sixty were once enough; with the no-gain rule in tokens (CONTRACT §2.1), seven emoji, the
    // marker and the pointer must also hold fewer tokens than the input.
    let input = "😀".repeat(300);
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert_teed_and_recoverable(&host, &out, &input);
    let pruned = wrapped_text(&out);
    assert_eq!(pruned, format!("😀😀😀😀{MARKER}😀😀😀"));
    assert!(!out.text().unwrap().contains('\u{fffd}'));
    assert!(!out.text().unwrap().contains("\\u"), "no escaped halves");
}

#[test]
fn content_blocks_keep_non_text_blocks_in_place_under_the_tee_pointer() {
    let (_dir, host) = small();
    let input = blocks();
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert_teed_and_recoverable(&host, &out, &input);
    // A pruned array is wrapped: {"result": <payload>, "_tee": {...}} (CONTRACT §5).
    assert_eq!(
        out.text().unwrap(),
        format!(r#"{{"result":{},{}}}"#, pruned_blocks(), pointer(&out))
    );
}

#[test]
fn mcp_tool_result_keeps_is_error_and_takes_the_pointer_as_its_last_member() {
    let (_dir, host) = small();
    for is_error in ["false", "true"] {
        let input = format!(r#"{{"content":{},"isError":{is_error}}}"#, blocks());
        let out = host.process(Call::new("t", Input::Text(&input)));
        assert_teed_and_recoverable(&host, &out, &input);
        assert_eq!(
            out.text().unwrap(),
            format!(
                r#"{{"content":{},"isError":{is_error},{}}}"#,
                pruned_blocks(),
                pointer(&out)
            )
        );
    }
}

#[test]
fn a_json_string_result_is_pruned_as_text() {
    let (_dir, host) = small();
    let input = format!(r#""{}""#, r"line\n".repeat(60));
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert_teed_and_recoverable(&host, &out, &input);
    assert_eq!(wrapped_text(&out), format!("line{MARKER}ne\n"));
}

#[test]
fn at_threshold_the_result_is_left_alone() {
    let (_dir, host) = small();
    let input = "x".repeat(50);
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert_eq!(out.text(), Some(input.as_str()));
    assert!(!out.meta.compressed && out.meta.tee_key.is_none());
}

#[test]
fn minimal_passes_through() {
    let (_dir, host) = small();
    let input = "x".repeat(500);
    let out = host.process(Call::new("t", Input::Text(&input)).level(Level::Minimal));
    assert_eq!(out.text(), Some(input.as_str()));
    assert_eq!(out.meta.level, Level::Minimal);
    assert!(!out.meta.compressed && out.meta.tee_key.is_none());
    let outcome = host
        .compress("t", Payload::text_only(&input), Level::Minimal)
        .unwrap();
    assert_eq!(outcome, Outcome::Unchanged);
}

#[test]
fn graphemes_keep_whole_family_clusters_only() {
    let (_dir, host) =
        host("threshold_chars = 100\nhead_chars = 30\ntail_chars = 31\nunit = \"graphemes\"")
            .unwrap();
    let input = FAMILY.repeat(3000);
    let out = host.process(Call::new("t", Input::Text(&input)));
    assert_teed_and_recoverable(&host, &out, &input);
    let pruned = wrapped_text(&out);
    assert_eq!(
        pruned,
        format!("{}{MARKER}{}", FAMILY.repeat(30), FAMILY.repeat(31))
    );
    // Each side of the marker is whole families: no woman, girl or joiner left over.
    for side in pruned.split(MARKER) {
        assert_eq!(side.replace(FAMILY, ""), "", "a split cluster in {side:?}");
    }
    // 100 clusters: within the threshold, so a second pass changes nothing.
    let again = host
        .compress("t", Payload::text_only(&pruned), Level::Normal)
        .unwrap();
    assert_eq!(again, Outcome::Unchanged);
}

#[test]
fn bad_params_fail_at_host_construction_stating_the_rule() {
    let cases = [
        (
            "head_chars = 20\ntail_chars = 20\nthreshold_chars = 50",
            "head_chars + 39 + tail_chars = 20 + 39 + 20 = 79 exceeds threshold_chars = 50",
        ),
        (
            "threshold_chars = 0",
            "param \"threshold_chars\": expected a positive integer, got 0",
        ),
        (
            "threshold_chars = -8",
            "param \"threshold_chars\": expected a positive integer, got -8",
        ),
        (
            "head_chars = -1",
            "param \"head_chars\": expected a non-negative integer, got a number (-1)",
        ),
        (
            "tail_chars = 10.5",
            "param \"tail_chars\": expected a non-negative integer, got a number (10.5)",
        ),
        (
            "tail_chars = \"ten\"",
            "param \"tail_chars\": expected a non-negative integer, got a string (\"ten\")",
        ),
        (
            "max_chars = 10",
            "param \"max_chars\": unknown key; did you mean \"head_chars\"? \
             (known: threshold_chars, head_chars, tail_chars, unit)",
        ),
        (
            "limit = 10",
            "param \"limit\": unknown key (known: threshold_chars, head_chars, tail_chars, unit)",
        ),
        (
            "unit = \"words\"",
            "param \"unit\": expected one of \"code_points\", \"graphemes\", got a string (\"words\")",
        ),
    ];
    for (params, expected) in cases {
        let Err(err) = host(params) else {
            panic!("the host accepted {params}");
        };
        let lines: Vec<String> = err.errors.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line = &lines[0];
        // The host names the file, the entry and the codec; the codec states the rule.
        assert!(line.contains("compressors.toml:"), "{line}");
        assert!(
            line.contains("entry \"t\": codec \"tool_result_prune\""),
            "{line}"
        );
        assert!(line.contains(expected), "for {params}: {line}");
    }
}

/// All three shipped packages side by side, as `cargo xtask package-plugins` lays them out.
fn shipped() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    shipped_package(&plugins, "line-dedup", "parrot_plugin_line_dedup");
    shipped_package(&plugins, "ansi-strip", "parrot_plugin_ansi_strip");
    shipped_package(&plugins, "tool-result-prune", PRUNE);
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .plugin_dir(&plugins)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .build()
        .expect("the shipped packages load together");
    (dir, host)
}

#[test]
fn shipped_manifest_routes_shell_log_and_search_tools_by_glob() {
    let (_dir, host) = shipped();
    let cases = [
        ("Bash", "tool_result_prune", MatchKind::Glob),
        ("bash", "tool_result_prune", MatchKind::Glob),
        ("developer__shell", "tool_result_prune", MatchKind::Glob),
        ("exec_command", "tool_result_prune", MatchKind::Glob),
        ("execute_command", "tool_result_prune", MatchKind::Glob),
        ("ci_build_log", "tool_result_prune", MatchKind::Glob),
        ("log_tail", "tool_result_prune", MatchKind::Glob),
        ("logs_query", "tool_result_prune", MatchKind::Glob),
        ("Grep", "tool_result_prune", MatchKind::Glob),
        ("grep_search", "tool_result_prune", MatchKind::Glob),
        ("ripgrep", "tool_result_prune", MatchKind::Glob),
        ("search_files", "tool_result_prune", MatchKind::Exact),
        // The other packages keep their own keys, and JSON APIs keep the lossless default.
        ("shell_cargo_build", "line_dedup", MatchKind::Glob),
        ("service_logs", "line_dedup", MatchKind::Glob),
        ("terminal_run", "ansi_strip", MatchKind::Glob),
        ("github_search_issues", "auto", MatchKind::Wildcard),
    ];
    for (tool, codec, kind) in cases {
        let resolution = host.resolve(tool);
        let entry = resolution.entry.expect("an entry");
        assert_eq!(
            (entry.codec_name.as_str(), resolution.kind),
            (codec, kind),
            "for {tool}"
        );
        if codec == "tool_result_prune" {
            assert_eq!(entry.level, Level::Normal, "for {tool}");
        }
    }
}

fn build_log() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/build-log.txt");
    std::fs::read_to_string(path).expect("corpus/build-log.txt")
}

#[test]
fn build_log_through_a_glob_entry_is_pruned_teed_and_recovered_byte_exact() {
    let (_dir, host) = shipped();
    let host = Arc::new(host);
    let log = build_log();
    assert!(log.chars().count() > 8192);
    // 469 KB and 6,000 lines are over the router's inline budgets: a synchronous `process`
    // passes such a payload through (CONTRACT §6), the async entry point runs it off the runtime.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let call = OwnedCall::new("ci_build_log", OwnedInput::Text(log.clone()));
    let out = runtime.block_on(host.process_async(call));
    assert_eq!(host.resolve("ci_build_log").kind, MatchKind::Glob);
    assert_teed_and_recoverable(&host, &out, &log);
    assert!(
        out.meta.size_after < out.meta.size_before / 50,
        "{:?}",
        out.meta
    );

    let pruned = wrapped_text(&out);
    let head: String = log.chars().take(4096).collect();
    let tail: String = log.chars().skip(log.chars().count() - 1024).collect();
    assert_eq!(pruned, format!("{head}{MARKER}{tail}"));
}

#[test]
fn build_log_through_the_command_recovers_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    shipped_package(&plugins, "tool-result-prune", PRUNE);
    let log_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/build-log.txt");
    let run = |args: &[&str]| {
        let out = Command::new(support::binary())
            .arg("--project")
            .arg(dir.path())
            .arg("--plugins")
            .arg(&plugins)
            .args(args)
            .env_remove("PARROT_PLUGIN_PATH")
            .output()
            .expect("parrot-compress runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        out.stdout
    };

    let listing = String::from_utf8(run(&["plugins"])).unwrap();
    let line = listing
        .lines()
        .find(|line| line.starts_with("tool_result_prune "))
        .unwrap_or_else(|| panic!("tool_result_prune is not listed:\n{listing}"));
    assert!(
        line.contains("libparrot_plugin_tool_result_prune"),
        "{line}"
    );

    let compressed = run(&[
        "compress",
        "--tool",
        "ci_build_log",
        log_file.to_str().unwrap(),
    ]);
    let pointed =
        crate::support::pointed(std::str::from_utf8(&compressed).unwrap()).expect("a pointer line");
    assert!(pointed.text.contains(MARKER));
    let key = pointed.key.as_str();
    assert!(key.starts_with("__tee__:ci_build_log:"), "{key}");
    let recovered = run(&["recover", key]);
    assert_eq!(recovered, std::fs::read(&log_file).unwrap());
}
