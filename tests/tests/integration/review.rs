//! The command against a hostile or careless setup, as a user runs it: a cloned project's
//! plugins, a FIFO where a file belongs, a manifest far too large, the kill switch past broken
//! configuration, names with control characters, colour in a pipe, odd session files, and an
//! entry with several mistakes. Each test is one row of docs/RELIABILITY.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{self, package, plugin_manifest};

/// `parrot-compress --project <project> <args>` with `stdin`, in a clean environment, killed
/// (and the test failed) if it runs longer than a minute: a hang is a failure, not a stuck run.
fn run_env(project: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    use std::io::Write;
    let mut command = Command::new(support::binary());
    command
        .arg("--project")
        .arg(project)
        .args(args)
        .env_remove("PARROT_PLUGIN_PATH")
        .env_remove("PARROT_COMPRESSION_DISABLED")
        .env_remove("PARROT_TRUST_PROJECT_PLUGINS")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("parrot-compress runs");
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("parrot-compress {args:?} hung (killed after 60 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    writer.join().unwrap();
    child.wait_with_output().unwrap()
}

fn run(project: &Path, args: &[&str]) -> Output {
    run_env(project, args, b"", &[])
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

fn project(manifest: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    if let Some(manifest) = manifest {
        std::fs::write(dir.path().join(".parrot/compressors.toml"), manifest).unwrap();
    }
    dir
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A project whose `.parrot/plugins` holds a package with a file that is not a library at all:
/// loading it is the only way to get the loader's error.
fn project_with_own_plugin() -> (tempfile::TempDir, PathBuf) {
    let dir = project(None);
    let plugins = dir.path().join(".parrot/plugins");
    let package = package(
        &plugins,
        "cloned",
        None,
        &plugin_manifest("parrot_plugin_cloned", ""),
    );
    std::fs::write(
        package.join(format!(
            "{}parrot_plugin_cloned{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )),
        b"not a library",
    )
    .unwrap();
    (dir, plugins)
}

// ---------------------------------------------------------------------------------------------
// 3. A project's own plugins run only when the user trusts the project.

#[test]
fn a_cloned_projects_plugins_are_not_loaded_without_trust() {
    let (dir, plugins) = project_with_own_plugin();
    let out = run(dir.path(), &["check"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let notices: Vec<&str> = stderr.lines().collect();
    assert_eq!(notices.len(), 1, "{stderr}");
    assert!(
        notices[0].contains(&format!(
            "{}: the project's plugins are not loaded",
            plugins.display()
        )) && notices[0].contains("--trust-project-plugins"),
        "{stderr}"
    );
}

#[test]
fn a_trusted_projects_plugins_are_loaded_by_flag_or_environment() {
    let (dir, _) = project_with_own_plugin();
    for out in [
        run(dir.path(), &["--trust-project-plugins", "check"]),
        run_env(
            dir.path(),
            &["check"],
            b"",
            &[("PARROT_TRUST_PROJECT_PLUGINS", "1")],
        ),
    ] {
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not a loadable shared library"), "{stderr}");
    }
}

#[test]
fn a_pinned_library_is_loaded_under_its_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let library = support::library("parrot_plugin_line_dedup");
    let digest = {
        use sha2::Digest;
        let bytes = std::fs::read(&library).unwrap();
        sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let manifest = plugin_manifest("parrot_plugin_line_dedup", "").replacen(
        "\n",
        &format!("\nsha256 = \"{digest}\"\n"),
        1,
    );
    let package = package(
        &dir.path().join("plugins"),
        "p",
        Some("parrot_plugin_line_dedup"),
        &manifest,
    );
    let out = run(
        dir.path(),
        &["--plugins", package.to_str().unwrap(), "plugins"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = stdout
        .lines()
        .find(|line| line.starts_with("line_dedup "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains(&package.canonicalize().unwrap().display().to_string()),
        "{line}"
    );
}

// ---------------------------------------------------------------------------------------------
// 4. A manifest has a size limit.

#[test]
fn a_manifest_over_the_size_limit_is_one_error_naming_it() {
    let dir = project(None);
    let manifest = dir.path().join(".parrot/compressors.toml");
    let entries: String = (0..20_000)
        .map(|i| format!("[compressor.\"tool_{i}_*\"]\ncodec = \"json_compact\"\n"))
        .collect();
    assert!(entries.len() as u64 > parrot_host::MAX_MANIFEST_BYTES);
    std::fs::write(&manifest, &entries).unwrap();
    let started = Instant::now();
    let out = run(dir.path(), &["check"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: {}: {} bytes, over the limit of {} bytes for a manifest (a manifest this \
             large would cost seconds and gigabytes at every start; split it, or use glob keys)\n",
            manifest.display(),
            entries.len(),
            parrot_host::MAX_MANIFEST_BYTES
        )
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

// ---------------------------------------------------------------------------------------------
// 5. A FIFO (or anything but a regular file) where a file belongs is refused, never read.

#[test]
fn a_fifo_as_the_project_manifest_is_one_error_not_a_hang() {
    let dir = project(None);
    let manifest = dir.path().join(".parrot/compressors.toml");
    mkfifo(&manifest);
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}: cannot read: not a regular file (a FIFO)\n",
            manifest.display()
        )
    );
}

#[test]
fn a_fifo_as_a_plugin_library_is_one_error_not_a_hang() {
    for pinned in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut manifest = plugin_manifest("parrot_plugin_fifo", "");
        if pinned {
            manifest = manifest.replacen("\n", &format!("\nsha256 = \"{}\"\n", "0".repeat(64)), 1);
        }
        let package = package(&dir.path().join("plugins"), "p", None, &manifest);
        let library = package.join(format!(
            "{}parrot_plugin_fifo{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ));
        mkfifo(&library);
        let out = run(
            dir.path(),
            &["--plugins", package.to_str().unwrap(), "check"],
        );
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: {}: not a regular file (a FIFO); a plugin library must be a file \
                 (declared by {})\n",
                library.display(),
                package.join("compressors.toml").display()
            ),
            "pinned: {pinned}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 6. The kill switch comes before any configuration.

#[test]
fn the_kill_switch_gets_past_a_broken_manifest_and_a_missing_plugin() {
    let dir = project(Some("[compressor.\"t\"\ncodec = "));
    let payload = br#"{"rows":[{"a":1},{"a":2}]}"#;
    let killed = [("PARROT_COMPRESSION_DISABLED", "1")];
    let missing = dir.path().join("no-such-plugins");
    let compress = [
        "--plugins",
        missing.to_str().unwrap(),
        "compress",
        "--tool",
        "t",
        "--meta",
    ];
    let out = run_env(dir.path(), &compress, payload, &killed);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout, payload);
    let meta: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(meta["compression_skipped"], "kill_switch");
    assert!(!dir.path().join(".parrot/tee.db").exists());

    let session = dir.path().join("s.jsonl");
    std::fs::write(&session, "{\"tool\":\"t\",\"result\":{\"a\":1}}\n").unwrap();
    let out_file = dir.path().join("out.jsonl");
    let replay = [
        "--plugins",
        missing.to_str().unwrap(),
        "replay",
        session.to_str().unwrap(),
        "--out",
        out_file.to_str().unwrap(),
        "--json",
    ];
    let out = run_env(dir.path(), &replay, b"", &killed);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&out_file).unwrap().trim()).unwrap();
    assert_eq!(line["payload"], "{\"a\":1}");
    assert_eq!(line["meta"]["compression_skipped"], "kill_switch");
    assert!(!dir.path().join(".parrot/tee.db").exists());

    // Without the switch the same configuration is refused.
    let out = run(dir.path(), &compress);
    assert_eq!(out.status.code(), Some(2));
}

// ---------------------------------------------------------------------------------------------
// 8. Names from files are printed with their control characters escaped.

#[test]
fn control_characters_in_entry_names_are_escaped_in_errors_and_the_listing() {
    let dir = project(Some(
        "[compressor.\"evil\\nerror: forged\\u001b]0;x\\u0007\"]\ncodec = \"zstd\"\n",
    ));
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    assert!(
        stderr.contains(r#"entry "evil\nerror: forged\u{1b}]0;x\u{7}": unknown codec "zstd""#),
        "{stderr}"
    );

    let dir = project(Some(
        "[compressor.\"evil\\nforged\\u001b]0;x\\u0007\"]\ncodec = \"toon\"\n",
    ));
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|line| line.contains(r#""evil\nforged\u{1b}]0;x\u{7}""#)
                && line.contains("toon/minimal")),
        "{stdout}"
    );
}

#[test]
fn control_characters_in_entry_names_are_escaped_in_explain() {
    let dir = project(Some("[compressor.\"a\\u0007b\\nc\"]\ncodec = \"toon\"\n"));
    let out = run(dir.path(), &["explain", "a\u{7}b\nc"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{7}'), "{stdout}");
    assert!(
        stdout.contains("tool:            a\\u{7}b\\nc\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("entry:           \"a\\u{7}b\\nc\" in "),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------------------------
// 9. Colour only on a terminal.

#[test]
fn warnings_in_a_pipe_carry_no_colour_escapes() {
    // A project entry with the key of a core entry gives a warning.
    let dir = project(Some("[compressor.\"*\"]\ncodec = \"toon\"\n"));
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("WARN"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

// ---------------------------------------------------------------------------------------------
// 11. Replay reads a session line the way it is written.

fn replay(dir: &Path, session: &[u8]) -> Output {
    let path = dir.join("s.jsonl");
    std::fs::write(&path, session).unwrap();
    run(
        dir,
        &["--no-tee", "replay", path.to_str().unwrap(), "--json"],
    )
}

#[test]
fn replay_refuses_a_member_named_twice_naming_file_and_line() {
    let dir = project(None);
    let session = dir.path().join("s.jsonl");
    let out = replay(
        dir.path(),
        b"{\"tool\":\"a\",\"result\":1}\n{\"tool\":\"a\",\"tool\":\"b\",\"result\":1}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}:2: key \"tool\" appears twice\n",
            session.display()
        )
    );
}

#[test]
fn replay_passes_a_result_with_duplicate_members_through_as_compress_does() {
    let dir = project(None);
    let result = r#"{"id":1,"id":2,"rows":[{"a":1},{"a":1},{"a":1}]}"#;
    let line = format!("{{\"tool\":\"t\",\"result\":{result}}}\n");
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, &line).unwrap();
    let out_file = dir.path().join("out.jsonl");
    let out = run(
        dir.path(),
        &[
            "--no-tee",
            "replay",
            path.to_str().unwrap(),
            "--out",
            out_file.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&out_file).unwrap().trim()).unwrap();
    let compressed = run_env(
        dir.path(),
        &["--no-tee", "compress", "--tool", "t"],
        result.as_bytes(),
        &[],
    );
    assert_eq!(written["payload"], text(&compressed.stdout));
    assert_eq!(written["payload"], result);
}

#[test]
fn replay_takes_a_byte_order_mark_and_a_very_deep_result() {
    let dir = project(None);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut session = "\u{feff}{\"tool\":\"a\",\"result\":{\"x\":1}}\n"
        .as_bytes()
        .to_vec();
    session.extend(format!("{{\"tool\":\"deep\",\"result\":{deep}}}\n").as_bytes());
    let out = replay(dir.path(), &session);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["total"]["calls"], 2, "{report}");
}

// ---------------------------------------------------------------------------------------------
// 12. Every error of an entry.

#[test]
fn check_reports_every_error_of_one_entry() {
    let dir = project(Some(
        "[compressor.\"t\"]\ncodec = \"zstd\"\nlevle = \"normal\"\n\n\
         [compressor.\"u\"]\ncodec = \"columnar\"\nlevel = \"loud\"\nparams = { min_rows = -1 }\n",
    ));
    let manifest = dir.path().join(".parrot/compressors.toml");
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let m = manifest.display();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].starts_with(&format!("error: {m}:3: entry \"t\": unknown key \"levle\"")),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(&format!("error: {m}:7: entry \"u\": key \"level\"")),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with(&format!(
            "error: {m}:2: entry \"t\": unknown codec \"zstd\""
        )),
        "{stderr}"
    );
    assert!(
        lines[3].starts_with(&format!(
            "error: {m}:8: entry \"u\": codec \"columnar\": param \"min_rows\""
        )),
        "{stderr}"
    );
}

/// Item 1, a store that cannot be opened at all (its directory cannot be created: here a
/// regular file stands where the directory would be): lossless work goes on (and `compress`,
/// which opens its store only for a result it stores, does not even try), a lossy result goes
/// out uncompressed (`tee_failed`) with one warning naming the store.
#[test]
fn a_store_that_cannot_be_opened_leaves_lossless_work_going() {
    let dir = project(None);
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let store = blocker.join("tee.db");
    let store = store.to_str().unwrap();

    let json = br#"{"id": 7, "tags": null, "items": [{"x": 1}, {"x": 1}, {"x": 1}]}"#;
    let args = ["--tee-store", store, "compress", "--tool", "t", "--meta"];
    let out = run_env(dir.path(), &args, json, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        r#"{"id":7,"items":[{"_repeat":3,"_value":{"x":1}}]}"#
    );
    let warnings: Vec<String> = text(&out.stderr)
        .lines()
        .filter(|line| line.contains("WARN"))
        .map(str::to_owned)
        .collect();
    assert_eq!(warnings, Vec::<String>::new(), "the store is not opened");

    let log: String = (0..200)
        .map(|i| {
            format!(
                "2026-11-29T10:00:{:02}.000Z INFO  compiling crate_{i} v0.1.{i}\n",
                i % 60
            )
        })
        .collect();
    let out = run_env(dir.path(), &args, log.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        out.stdout,
        log.as_bytes(),
        "the lossy result goes out as it came"
    );
    let meta = text(&out.stderr);
    assert!(
        meta.contains(r#""compression_skipped":"tee_failed""#),
        "{meta}"
    );
    let opening: Vec<&str> = meta
        .lines()
        .filter(|line| line.contains("WARN") && line.contains("lossy results go out uncompressed"))
        .collect();
    assert_eq!(opening.len(), 1, "{meta}");
    assert!(opening[0].contains("blocker"), "{opening:?}");
}
