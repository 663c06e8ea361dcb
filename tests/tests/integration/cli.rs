//! The `parrot-compress` command: `check` and `plugins`, run as a user runs them.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{self, package, plugin_manifest, shipped_package};

fn run(project: &Path, args: &[&str]) -> Output {
    Command::new(support::binary())
        .arg("--project")
        .arg(project)
        .args(args)
        .env_remove("PARROT_PLUGIN_PATH")
        .output()
        .expect("parrot-compress runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

#[test]
fn check_passes_and_summarises_loaded_plugins() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    shipped_package(&plugins, "line-dedup", "parrot_plugin_line_dedup");
    shipped_package(&plugins, "ansi-strip", "parrot_plugin_ansi_strip");
    let out = run(
        dir.path(),
        &["--plugins", plugins.to_str().unwrap(), "check"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let ansi = plugins.join("ansi-strip/compressors.toml");
    let dedup = plugins.join("line-dedup/compressors.toml");
    // Folder of packages: taken in name order.
    assert!(
        stdout.contains(&format!("  1. {} (package, library ", ansi.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  2. {} (package, library ", dedup.display())),
        "{stdout}"
    );
    assert!(stdout.contains("  3. <core> (core)"), "{stdout}");
    // The built-ins and the two packages' codecs.
    let codecs = support::builtin_names().len() + 2;
    assert!(
        stdout.ends_with(&format!(
            "ok: 3 sources, {codecs} codecs, 4 entries (0 shadowed)\n"
        )),
        "{stdout}"
    );
}

#[test]
fn plugins_lists_each_codec_with_origin_and_interface_version() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = shipped_package(dir.path(), "line-dedup", "parrot_plugin_line_dedup");
    let out = run(dir.path(), &["plugins", "--plugins", pkg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let library = pkg
        .join("libparrot_plugin_line_dedup.so")
        .canonicalize()
        .unwrap();
    let version = parrot_codec_api::INTERFACE_VERSION;
    let plugin = format!(
        "{} (package {})",
        library.display(),
        pkg.join("compressors.toml").display()
    );
    // Every built-in from the registry of built-ins, the package's codec among them in name order.
    let mut codecs: Vec<(&str, &str)> = support::builtin_names()
        .into_iter()
        .map(|name| (name, "built-in"))
        .chain([("line_dedup", plugin.as_str())])
        .collect();
    codecs.sort();
    let width = codecs.iter().map(|(name, _)| name.len()).max().unwrap();
    let mut expected = format!("{:<width$}  interface  origin\n", "codec");
    for (name, origin) in codecs {
        expected.push_str(&format!("{name:<width$}  {version:<9}  {origin}\n"));
    }
    expected.push_str("router: auto (built-in), routes each payload by its shape:\n");
    expected.push_str("  \"*\" from <core>:\n");
    expected.push_str(&support::core_routes("    "));
    assert_eq!(text(&out.stdout), expected);
}

#[test]
fn check_exits_2_listing_every_bad_library() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("bad");
    package(
        &source,
        "a-missing",
        None,
        &plugin_manifest("parrot_plugin_nowhere", ""),
    );
    package(
        &source,
        "b-not-plugin",
        Some("parrot_plugin_fault_not_plugin"),
        &plugin_manifest("parrot_plugin_fault_not_plugin", ""),
    );
    package(
        &source,
        "c-old",
        Some("parrot_plugin_fault_version"),
        &plugin_manifest("parrot_plugin_fault_version", ""),
    );
    package(
        &source,
        "d-abort",
        Some("parrot_plugin_fault_abort"),
        &plugin_manifest("parrot_plugin_fault_abort", ""),
    );
    let out = run(
        dir.path(),
        &["--plugins", source.to_str().unwrap(), "check"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    let expectations = [
        (
            "a-missing",
            "libparrot_plugin_nowhere.so",
            "library file not found",
        ),
        (
            "b-not-plugin",
            "libparrot_plugin_fault_not_plugin.so",
            "not a parrot-compress codec plugin",
        ),
        (
            "c-old",
            "libparrot_plugin_fault_version.so",
            "plugin built against parrot-codec-api 0.0.3",
        ),
        (
            "d-abort",
            "libparrot_plugin_fault_abort.so",
            "built with panic = \"abort\"",
        ),
    ];
    for (line, (pkg, library, reason)) in lines.iter().zip(expectations) {
        let pkg = source.join(pkg);
        assert!(
            line.starts_with(&format!("error: {}: ", pkg.join(library).display())),
            "{line}"
        );
        assert!(line.contains(reason), "{line}");
        assert!(
            line.ends_with(&format!(
                "(declared by {})",
                pkg.join("compressors.toml").display()
            )),
            "{line}"
        );
    }
}

#[test]
fn check_exits_2_on_an_invalid_project_manifest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    let manifest = dir.path().join(".parrot/compressors.toml");
    std::fs::write(&manifest, "[compressor.\"t\"]\ncodec = \"zstd\"\n").unwrap();
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}:2: entry \"t\": unknown codec \"zstd\" (known: {})\n",
            manifest.display(),
            support::known_codecs()
        )
    );
}

#[test]
fn plugins_dir_with_no_package_is_not_accepted_in_silence() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    // A build folder: libraries, but no manifest declaring them.
    let build = dir.path().join("build");
    std::fs::create_dir_all(build.join("deps")).unwrap();
    std::fs::write(build.join("libparrot_plugin_line_dedup.so"), b"").unwrap();
    for (given, holds) in [
        (&empty, "(it is empty)".to_owned()),
        (
            &build,
            "(it holds deps/, libparrot_plugin_line_dedup.so); a library loads only from a \
             package"
                .to_owned(),
        ),
    ] {
        let out = run(dir.path(), &["--plugins", given.to_str().unwrap(), "check"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "{}: no plugin package loaded from it: no compressors.toml in it or in any \
                 folder directly in it {holds}",
                given.display()
            )),
            "{stderr}"
        );
    }
    // One source and one entry are counted in the singular ("1 sources" was printed).
    let stdout = text(&run(dir.path(), &["check"]).stdout);
    let codecs = support::builtin_names().len();
    assert!(
        stdout.ends_with(&format!(
            "ok: 1 source, {codecs} codecs, 1 entry (0 shadowed)\n"
        )),
        "{stdout}"
    );
    // A folder of packages says nothing.
    let plugins = plugins_dir(dir.path());
    let out = run(
        dir.path(),
        &["--plugins", plugins.to_str().unwrap(), "check"],
    );
    assert_eq!(text(&out.stderr), "");
}

/// `auto` is the host's router, not a registered codec: both listings show it, with the
/// candidates each entry that uses it routes to (its params, not the defaults).
#[test]
fn check_and_plugins_show_the_router_with_what_each_entry_routes_to() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".parrot")).unwrap();
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"db_*\"]\ncodec = \"auto\"\nparams = { rows = [\"columnar\"], text = [] }\n",
    )
    .unwrap();
    for command in ["check", "plugins"] {
        let out = run(dir.path(), &[command]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let router = stdout
            .find("router: auto (built-in), routes each payload by its shape:\n")
            .unwrap_or_else(|| panic!("{command}: no router in\n{stdout}"));
        let routes = &stdout[router..];
        let project = dir.path().join(".parrot/compressors.toml");
        let expected = format!(
            "  \"db_*\" from {}:\n    rows:   columnar (at minimal, lossless)\n",
            project.display()
        );
        assert!(routes.contains(&expected), "{command}: {routes}");
        assert!(
            routes.contains("    text:   none (passes through) (listings"),
            "{command}: {routes}"
        );
        assert!(
            routes.contains(&format!(
                "  \"*\" from <core>:\n    rows:   {} ",
                support::core_list("rows").join(", ")
            )),
            "{command}: {routes}"
        );
    }
}

/// The help of a command lists the configuration options it takes and no other: `store`
/// reads the store alone, `recover` adds what a selector uses, `namespace` takes none.
#[test]
fn each_commands_help_lists_only_the_options_it_takes() {
    let help = |command: &str| {
        let out = Command::new(support::binary())
            .args([command, "--help"])
            .output()
            .expect("parrot-compress runs");
        assert_eq!(out.status.code(), Some(0), "{command}");
        text(&out.stdout)
    };
    let all = [
        "--project",
        "--plugins",
        "--trust-project-plugins",
        "--tee-store",
        "--no-tee",
        "--tokenizer",
    ];
    let takes: [(&str, &[&str]); 10] = [
        ("compress", &all),
        ("replay", &all),
        ("mcp-proxy", &all),
        ("check", &all[..3]),
        ("plugins", &all[..3]),
        ("expand", &all[..3]),
        (
            "explain",
            &[
                "--project",
                "--plugins",
                "--trust-project-plugins",
                "--no-tee",
            ],
        ),
        (
            "recover",
            &[
                "--project",
                "--plugins",
                "--trust-project-plugins",
                "--tee-store",
                "--tokenizer",
            ],
        ),
        ("store", &["--project", "--tee-store"]),
        ("namespace", &[]),
    ];
    for (command, options) in takes {
        let help = help(command);
        for option in all {
            let listed = help.contains(&format!("      {option} "));
            assert_eq!(
                listed,
                options.contains(&option),
                "{command} --help and {option}:\n{help}"
            );
        }
    }
}

/// The configuration options are taken after the command's name and, as when they were global,
/// before it; after the name, a command refuses one it does not take.
#[test]
fn configuration_options_are_taken_before_and_after_the_command_name() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugins_dir(dir.path());
    let plugins = plugins.to_str().unwrap();
    let before = run(dir.path(), &["--plugins", plugins, "check"]);
    let after = run(dir.path(), &["check", "--plugins", plugins]);
    assert_eq!(before.status.code(), Some(0), "{}", text(&before.stderr));
    assert_eq!(text(&before.stdout), text(&after.stdout));
    assert!(text(&after.stdout).contains("line_dedup"));

    let out = run(dir.path(), &["store", "--plugins", plugins]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unexpected argument '--plugins'"),
        "{}",
        text(&out.stderr)
    );
    let store = dir.path().join("other.db");
    let store = store.to_str().unwrap();
    for args in [
        &["--no-tee", "compress", "--tool", "t", "--tee-store", store][..],
        &["compress", "--tool", "t", "--no-tee", "--tee-store", store][..],
    ] {
        let out = run(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr)
                .contains("the argument '--no-tee' cannot be used with '--tee-store <PATH|URL>'"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn unknown_option_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["check", "--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

fn run_with_input(project: &Path, args: &[&str], input: &[u8]) -> Output {
    support::run_in(project, args, input)
}

fn plugins_dir(root: &Path) -> std::path::PathBuf {
    let plugins = root.join("plugins");
    shipped_package(&plugins, "line-dedup", "parrot_plugin_line_dedup");
    shipped_package(&plugins, "ansi-strip", "parrot_plugin_ansi_strip");
    plugins
}

#[test]
fn compress_writes_exactly_the_payload_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugins_dir(dir.path());
    let line = "warning: unused variable `x` in src/pipeline.rs:218";
    let input = format!("{line}\n{line}\n{line}\n{line}\nb\n");
    let out = run_with_input(
        dir.path(),
        &[
            "--plugins",
            plugins.to_str().unwrap(),
            "compress",
            "--tool",
            "shell_x",
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{line}\n[... previous line repeated 3 more times ...]\nb\n")
    );
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn compress_meta_is_one_json_line_with_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let input = r#"{"a": 1, "b": null, "c": [{"x": 1}, {"x": 1}]}"#;
    let out = run_with_input(
        dir.path(),
        &["compress", "--tool", "t", "--meta"],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let meta: serde_json::Value = serde_json::from_str(&stderr).unwrap();
    for key in [
        "_compressed",
        "compression_codec",
        "compression_level",
        "result_size_bytes_original",
        "result_size_bytes",
        "compression_duration_ms",
        "compression_teed",
        "compression_route",
        "tokens_before",
        "tokens_after",
    ] {
        assert!(meta.get(key).is_some(), "missing {key} in {meta}");
    }
    assert_eq!(meta["result_size_bytes_original"], input.len());
    assert_eq!(meta["result_size_bytes"], out.stdout.len());
    // The default `auto` routes the payload by its shape (its largest member is an array of
    // objects: rows) and names the winner, which the route ranks first.
    let winner = meta["compression_codec"].as_str().unwrap();
    let route = meta["compression_route"].as_str().unwrap();
    assert!(route.starts_with(&format!("rows: {winner} ")), "{route}");
    assert!(
        support::core_list("rows").iter().any(|name| name == winner),
        "{meta}"
    );
    // The entry's level is `normal`; `auto` runs JSON candidates at `minimal`, and the meta
    // names the level the winner ran at.
    assert_eq!(meta["compression_level"], "minimal");
}

#[test]
fn lossy_compress_then_recover_gives_back_the_exact_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugins_dir(dir.path());
    let input: String = (0..30)
        .map(|i| format!("\u{1b}[32mPASS\u{1b}[0m case {i}\r\n"))
        .collect();
    let out = run_with_input(
        dir.path(),
        &[
            "--plugins",
            plugins.to_str().unwrap(),
            "compress",
            "--tool",
            "terminal_x",
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let pointed = crate::support::pointed(&text(&out.stdout)).expect("a pointer line");
    let key = pointed.key.as_str();
    assert!(
        dir.path().join(".parrot/tee.db").is_file(),
        "default store path"
    );

    let recovered = run_with_input(dir.path(), &["recover", key], b"");
    assert_eq!(recovered.status.code(), Some(0));
    assert_eq!(recovered.stdout, input.as_bytes());
}

#[test]
fn error_status_passes_through_and_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let input = b"{\"message\": \"Not Found\"}";
    let out = run_with_input(
        dir.path(),
        &["compress", "--tool", "t", "--status", "error", "--meta"],
        input,
    );
    assert_eq!(out.stdout, input);
    let meta: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(meta["compression_level"], "none");
    let key = meta["compression_tee_key"].as_str().unwrap();
    let recovered = run_with_input(dir.path(), &["recover", key], b"");
    assert_eq!(recovered.stdout, input);
}

#[test]
fn kill_switch_output_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let input = b"{ \"a\" : null }";
    let out = Command::new(support::binary())
        .args([
            "--project",
            dir.path().to_str().unwrap(),
            "compress",
            "--tool",
            "t",
        ])
        .arg(write_file(dir.path(), "in.json", input))
        .env("PARROT_COMPRESSION_DISABLED", "1")
        .output()
        .unwrap();
    assert_eq!(out.stdout, input);
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn runtime_failures_exit_1_and_usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_input(dir.path(), &["recover", "__tee__:t:000000000000"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: no original is stored under \"__tee__:t:000000000000\"\n"
    );

    let missing = dir.path().join("missing.json");
    let out = run_with_input(
        dir.path(),
        &["compress", "--tool", "t", missing.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with(&format!("error: {}: cannot read", missing.display())));

    let out = run_with_input(
        dir.path(),
        &["compress", "--tool", "t", "--level", "NORMAL"],
        b"x",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("expected one of: none, minimal, normal, aggressive"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn replay_prints_the_report_of_the_sample_session() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_input(dir.path(), &["replay"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("tool "), "{stdout}");
    assert!(stdout.contains("\nTOTAL "), "{stdout}");
    assert!(stdout.contains("dq_execute_database_query"), "{stdout}");
    assert!(stdout.ends_with(
        "tokens: o200k_base (token counts are exact for this tokenizer; other models' tokenizers differ)\n"
    ));

    let out = run_with_input(dir.path(), &["replay", "--json"], b"");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["total"]["calls"], 24);
    assert_eq!(report["tokenizer"], "o200k_base");
}

#[test]
fn replay_out_writes_one_line_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let session = write_file(
        dir.path(),
        "s.jsonl",
        b"{\"tool\":\"a\",\"status\":\"success\",\"result\":{\"x\": null, \"y\": 1}}\n\
          {\"tool\":\"b\",\"status\":\"error\",\"result\":\"boom\"}\n",
    );
    let out_file = dir.path().join("out.jsonl");
    let out = run_with_input(
        dir.path(),
        &[
            "replay",
            session.to_str().unwrap(),
            "--out",
            out_file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["tool"], "a");
    assert_eq!(lines[0]["payload"], "{\"y\":1}");
    assert_eq!(lines[0]["meta"]["_compressed"], true);
    assert_eq!(lines[1]["payload"], "boom");
    assert_eq!(lines[1]["meta"]["compression_level"], "none");
}

#[test]
fn replay_names_the_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let session = write_file(
        dir.path(),
        "s.jsonl",
        b"{\"tool\":\"a\",\"result\":1}\n{\"tool\":\"a\",\"reslt\":1}\n",
    );
    let out = run_with_input(dir.path(), &["replay", session.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}:2: unknown key \"reslt\" (expected: tool, status, result)\n",
            session.display()
        )
    );
}

#[test]
fn kill_switch_is_byte_identical_over_the_whole_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    // The files of `corpus/`, not its folders (`logs/` has the log codec's own corpus).
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for file in files {
        for tool in ["dq_execute_database_query", "shell_x", "anything"] {
            let out = Command::new(support::binary())
                .args(["--project", dir.path().to_str().unwrap()])
                .args(["compress", "--tool", tool, "--level", "aggressive"])
                .arg(&file)
                .env("PARROT_COMPRESSION_DISABLED", "1")
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(
                out.stdout,
                std::fs::read(&file).unwrap(),
                "{}",
                file.display()
            );
        }
    }
}

#[test]
fn check_reports_three_independent_mistakes_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    let manifest = dir.path().join(".parrot/compressors.toml");
    std::fs::write(
        &manifest,
        "[compressor.\"a\"]\ncodec = \"zstd\"\n\n\
         [compressor.\"b\"]\ncodec = \"columnar\"\nlevle = \"normal\"\n\n\
         [compressor.\"c\"]\ncodec = \"columnar\"\nparams = { min_rows = -1 }\n",
    )
    .unwrap();
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let m = manifest.display();
    assert_eq!(
        lines,
        [
            format!(
                "error: {m}:6: entry \"b\": unknown key \"levle\"; did you mean \"level\"? (expected: codec, level, tee, params)"
            ),
            format!(
                "error: {m}:2: entry \"a\": unknown codec \"zstd\" (known: {})",
                support::known_codecs()
            ),
            format!(
                "error: {m}:10: entry \"c\": codec \"columnar\": param \"min_rows\": expected a positive integer, got a number (-1)"
            ),
        ],
        "{stderr}"
    );
}

#[test]
fn the_query_result_compresses_to_a_table_with_a_pointer_and_recovers_exactly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"dq_execute_database_query\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n",
    )
    .unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/query-500x12.json");
    let out = Command::new(support::binary())
        .args(["--project", dir.path().to_str().unwrap()])
        .args(["compress", "--tool", "dq_execute_database_query"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(value["rows"]["columns"].is_array(), "{value:.200}");
    assert!(value["rows"]["rows"].is_array());
    assert!(value["rows"]["constants"].is_object());
    let key = value["_tee"]["key"].as_str().unwrap();
    assert!(key.starts_with("__tee__:dq_execute_database_query:"));
    let recovered = run_with_input(dir.path(), &["recover", key], b"");
    assert_eq!(recovered.status.code(), Some(0));
    assert_eq!(recovered.stdout, std::fs::read(&file).unwrap());
}

/// `package`: lays out `--out` from `args`, run in `dir` with no other configuration.
fn run_package(dir: &Path, args: &[&str]) -> Output {
    Command::new(support::binary())
        .arg("package")
        .args(args)
        .current_dir(dir)
        .env_remove("PARROT_PLUGIN_PATH")
        .output()
        .expect("parrot-compress runs")
}

/// The files of the folder `dir`, by name, hidden ones too (a staging folder left behind).
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A package laid out from a built cdylib and its manifest is one the host loads: the codec
/// runs through `--plugins`, and packaging again replaces it.
#[test]
fn package_lays_out_a_package_the_host_loads_from_a_built_library() {
    let dir = tempfile::tempdir().unwrap();
    let library = support::library("parrot_plugin_ansi_strip");
    let manifest = support::plugin_source("ansi-strip").join("compressors.toml");
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let out = plugins.join("ansi-strip");
    let args = [
        "--library",
        library.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    for _ in 0..2 {
        let packaged = run_package(dir.path(), &args);
        assert_eq!(
            packaged.status.code(),
            Some(0),
            "{}",
            text(&packaged.stderr)
        );
        assert_eq!(
            text(&packaged.stdout),
            format!(
                "packaged parrot_plugin_ansi_strip (codecs ansi_strip; {}) -> {}\n",
                manifest.display(),
                out.display()
            )
        );
        assert_eq!(names_in(&plugins), ["ansi-strip"]);
        assert_eq!(
            names_in(&out),
            ["compressors.toml", "libparrot_plugin_ansi_strip.so"]
        );
    }
    let input: String = (0..30)
        .map(|i| format!("\u{1b}[32mPASS\u{1b}[0m case {i}\r\n"))
        .collect();
    let out = run_with_input(
        dir.path(),
        &[
            "--plugins",
            plugins.to_str().unwrap(),
            "compress",
            "--tool",
            "terminal_x",
            "--meta",
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let meta: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(meta["compression_codec"], "ansi_strip", "{meta}");
    assert!(
        !text(&out.stdout).contains('\u{1b}'),
        "{}",
        text(&out.stdout)
    );
}

/// What `package` refuses, each with the message that names the problem: nothing is left at
/// `--out` (nor a staging folder beside it).
#[test]
fn package_refuses_what_the_host_would_not_load_naming_what_is_wrong() {
    let ansi = support::library("parrot_plugin_ansi_strip");
    let not_plugin = support::library("parrot_plugin_fault_not_plugin");
    let dedup_manifest = support::plugin_source("line-dedup").join("compressors.toml");
    let rows: [(&str, &Path, &str, &str); 5] = [
        (
            "a manifest naming another library",
            &ansi,
            "",
            "[plugin] library = \"parrot_plugin_line_dedup\" is looked up as \
             libparrot_plugin_line_dedup.so in the package, but the library given is \
             libparrot_plugin_ansi_strip.so: set library = \"parrot_plugin_ansi_strip\"",
        ),
        (
            "a codec the library does not export",
            &ansi,
            "[plugin]\nlibrary = \"parrot_plugin_ansi_strip\"\ncodecs = [\"ansi_strip\", \"strip_more\"]\n",
            "declares codec \"strip_more\" but the library does not provide it (it provides: \
             ansi_strip)",
        ),
        (
            "an entry naming an unknown codec",
            &ansi,
            "[plugin]\nlibrary = \"parrot_plugin_ansi_strip\"\n[compressor.\"t\"]\ncodec = \"ansi_stirp\"\n",
            "compressors.toml:4: entry \"t\": unknown codec \"ansi_stirp\"",
        ),
        (
            "a library that is no plugin",
            &not_plugin,
            "[plugin]\nlibrary = \"parrot_plugin_fault_not_plugin\"\n",
            "a shared library, but not a parrot-compress codec plugin",
        ),
        (
            "no [plugin] table",
            &ansi,
            "[compressor.\"t\"]\ncodec = \"ansi_strip\"\n",
            "compressors.toml: no [plugin] library",
        ),
    ];
    for (case, library, manifest_text, expected) in rows {
        let dir = tempfile::tempdir().unwrap();
        let manifest = if manifest_text.is_empty() {
            dedup_manifest.clone()
        } else {
            write_file(dir.path(), "compressors.toml", manifest_text.as_bytes())
        };
        let out = dir.path().join("pkg");
        let refused = run_package(
            dir.path(),
            &[
                "--library",
                library.to_str().unwrap(),
                "--manifest",
                manifest.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(refused.status.code(), Some(2), "{case}");
        let stderr = text(&refused.stderr);
        assert!(stderr.contains(expected), "{case}: {stderr}");
        assert!(!out.exists(), "{case}: a package was left");
        assert!(
            names_in(dir.path())
                .iter()
                .all(|name| !name.ends_with(".packaging")),
            "{case}: {:?}",
            names_in(dir.path())
        );
    }

    // A folder that holds more than a package is not replaced.
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "Cargo.toml", b"[package]\n");
    let manifest = support::plugin_source("ansi-strip").join("compressors.toml");
    let refused = run_package(
        dir.path(),
        &[
            "--library",
            ansi.to_str().unwrap(),
            "--manifest",
            manifest.to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr)
            .contains("the folder exists and holds Cargo.toml besides a package's files"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(names_in(dir.path()), ["Cargo.toml"]);
}

/// Given a crate, `package` builds it with cargo and packages the cdylib cargo reports, with
/// the crate's own compressors.toml. (Its own target folder: the build resolves the crate's
/// features alone, and must not overwrite the libraries the other tests load.)
#[test]
fn package_builds_a_plugin_crate_with_cargo_and_packages_its_cdylib() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ansi-strip");
    let target = support::profile_dir()
        .parent()
        .unwrap()
        .join("package-crate");
    let crate_dir = support::plugin_source("ansi-strip");
    let packaged = Command::new(support::binary())
        .args(["package", "--crate"])
        .arg(&crate_dir)
        .args(["--profile", "dev", "--out"])
        .arg(&out)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("parrot-compress runs");
    assert_eq!(
        packaged.status.code(),
        Some(0),
        "{}",
        text(&packaged.stderr)
    );
    assert!(
        text(&packaged.stdout)
            .starts_with("packaged parrot_plugin_ansi_strip (codecs ansi_strip; "),
        "{}",
        text(&packaged.stdout)
    );
    assert_eq!(
        std::fs::read(out.join("compressors.toml")).unwrap(),
        std::fs::read(crate_dir.join("compressors.toml")).unwrap()
    );
    let checked = run(dir.path(), &["--plugins", out.to_str().unwrap(), "check"]);
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    assert!(
        text(&checked.stdout).contains("ansi_strip"),
        "{}",
        text(&checked.stdout)
    );
}

/// `compress` then `expand`: the original's JSON value back, from stdin and from a file.
#[test]
fn expand_gives_back_the_value_compress_made_its_output_from() {
    let dir = tempfile::tempdir().unwrap();
    let input = r#"{"id": 7, "tags": null, "items": [{"x": 1}, {"x": 1}, {"x": 1}]}"#;
    let out = run_with_input(
        dir.path(),
        &["compress", "--tool", "x", "--meta"],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(meta["compression_codec"], "json_compact", "{meta}");
    let payload = out.stdout;
    assert_ne!(payload, input.as_bytes());

    let expanded = run_with_input(dir.path(), &["expand", "--codec", "json_compact"], &payload);
    assert_eq!(
        expanded.status.code(),
        Some(0),
        "{}",
        text(&expanded.stderr)
    );
    assert_eq!(text(&expanded.stderr), "");
    // json_compact leaves out null members, which the contract counts as absent.
    assert!(
        parrot_json::equivalent(input, &text(&expanded.stdout), true),
        "{}",
        text(&expanded.stdout)
    );
    let file = write_file(dir.path(), "payload.json", &payload);
    let from_file = run_with_input(
        dir.path(),
        &["expand", "--codec", "json_compact", file.to_str().unwrap()],
        b"",
    );
    assert_eq!(
        from_file.status.code(),
        Some(0),
        "{}",
        text(&from_file.stderr)
    );
    assert_eq!(from_file.stdout, expanded.stdout);
}

#[test]
fn expand_with_an_unknown_codec_exits_2_naming_the_nearest() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_input(dir.path(), &["expand", "--codec", "jsn_compact"], b"[1]");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: unknown codec \"jsn_compact\" (known: {})",
            support::builtin_names().join(", ")
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("; did you mean \"json_compact\"?\n"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// A lossy output cannot be expanded: the message gives the command that returns its
/// original, and that command does.
#[test]
fn expand_of_a_lossy_log_gives_the_recover_command_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("tee.db");
    let store = store.to_str().unwrap();
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/build-log.txt");
    let out = run_with_input(
        dir.path(),
        &[
            "compress",
            "--tool",
            "shell_cargo_build",
            "--meta",
            "--tee-store",
            store,
            log.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(meta["compression_codec"], "log", "{meta}");
    let key = meta["compression_tee_key"].as_str().unwrap();

    let expanded = run_with_input(dir.path(), &["expand", "--codec", "log"], &out.stdout);
    assert_eq!(expanded.status.code(), Some(2));
    assert_eq!(text(&expanded.stdout), "");
    assert_eq!(
        text(&expanded.stderr),
        format!(
            "error: the payload is a lossy output (its tee pointer's reason is \"lossy\"): no \
             codec can rebuild its original from it; the tee store holds the original: \
             parrot-compress recover {key}\n"
        )
    );
    let recovered = run_with_input(dir.path(), &["recover", key, "--tee-store", store], b"");
    assert_eq!(
        recovered.status.code(),
        Some(0),
        "{}",
        text(&recovered.stderr)
    );
    assert_eq!(recovered.stdout, std::fs::read(&log).unwrap());
}

/// A payload the codec did not write is its inverse's error; bytes that are not UTF-8 were
/// written by no codec.
#[test]
fn expand_of_garbage_exits_2_with_the_codecs_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_input(
        dir.path(),
        &["expand", "--codec", "json_compact"],
        b"garbage {",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "error: codec \"json_compact\" cannot expand this payload: json_compact cannot expand: "
        ),
        "{stderr}"
    );
    let out = run_with_input(dir.path(), &["expand", "--codec", "toon"], b"[\xff]");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: stdin: not UTF-8 at byte 1: a codec's output is text, so no codec wrote this\n"
    );
    let out = run_with_input(dir.path(), &["expand", "--codec", "auto"], b"[1]");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("\"compression_codec\""),
        "{}",
        text(&out.stderr)
    );
}

/// A codec that says `lossless` and offers no inverse (the fixture's `fault_unchecked`, which
/// keeps half its input) is named by `check` and by `package`, with how many probes it claimed:
/// the host treats such outcomes as lossy, and the author learns it before a user does. Codecs
/// that offer their inverse (`line_dedup`, `csv_rows`) and one that is only lossy
/// (`ansi_strip`) are not named.
#[test]
fn check_and_package_warn_about_lossless_claims_the_host_cannot_check() {
    const FAULTS: &str = "parrot_plugin_fault_codecs";
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    shipped_package(&plugins, "line-dedup", "parrot_plugin_line_dedup");
    shipped_package(&plugins, "ansi-strip", "parrot_plugin_ansi_strip");
    package(
        &plugins,
        "faults",
        Some(FAULTS),
        &plugin_manifest(FAULTS, ""),
    );
    let warned = "warning: codec fault_unchecked (";
    let claim = "claimed a lossless outcome for 14 of 14 probe payloads but offers no inverse: \
                 the host cannot check the claim, so it treats each such outcome as lossy";
    let not_named = [
        "codec line_dedup",
        "codec csv_rows",
        "codec ansi_strip",
        "codec fault_liar",
    ];

    let checked = run(
        dir.path(),
        &["--plugins", plugins.to_str().unwrap(), "check"],
    );
    let stderr = text(&checked.stderr);
    assert_eq!(checked.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(warned) && stderr.contains(claim),
        "{stderr}"
    );
    for name in not_named {
        assert!(!stderr.contains(name), "{stderr}");
    }
    assert!(
        text(&checked.stdout).contains("ok: 4 sources"),
        "{}",
        text(&checked.stdout)
    );

    let manifest = dir.path().join("faults.toml");
    std::fs::write(&manifest, plugin_manifest(FAULTS, "")).unwrap();
    let library = support::library(FAULTS);
    let packaged = run_package(
        dir.path(),
        &[
            "--library",
            library.to_str().unwrap(),
            "--manifest",
            manifest.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
    );
    let stderr = text(&packaged.stderr);
    assert_eq!(packaged.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(warned) && stderr.contains(claim),
        "{stderr}"
    );
    assert!(!stderr.contains("codec csv_rows"), "{stderr}");
}
