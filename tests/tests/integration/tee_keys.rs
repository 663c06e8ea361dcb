//! Content-addressed tee keys, recovery that needs only the store, and the store's size: through
//! the library's `Host::process` and through the command, as a user runs them.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use parrot_host::{Call, Host, Input, Retention, TeeStore};
use parrot_tee_sqlite::SqliteTeeStore;
use sha2::{Digest, Sha256};

use crate::support;

/// A build log the core defaults compress lossily (the log codec at `normal`).
fn build_log() -> String {
    let mut log: String = (0..80)
        .map(|i| {
            format!(
                "2026-11-29T10:07:{:02}.{:03}Z INFO  compiling crate_{i} v0.5.{} (build step {})\n",
                i % 60,
                i * 7 % 1000,
                i % 13,
                4000 + i
            )
        })
        .collect();
    log.push_str("error[E0308]: mismatched types --> src/pipeline.rs:218:17\n");
    log
}

/// The key of `original` from `tool`, computed here independently of the host.
fn expected_key(tool: &str, original: &[u8], hex_digits: usize) -> String {
    let hex: String = Sha256::digest(original)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("__tee__:{tool}:{}", &hex[..hex_digits])
}

/// A SQLite store, `dir/tee.db`, with the default retention.
fn store_in(dir: &Path) -> Arc<SqliteTeeStore> {
    Arc::new(SqliteTeeStore::open(dir.join("tee.db"), Retention::default()).unwrap())
}

fn host_with(store: Arc<dyn TeeStore>, project: &Path) -> Host {
    Host::builder()
        .project(project)
        .plugin_path(None)
        .tee_store(store)
        .build()
        .unwrap()
}

#[test]
fn compressing_the_same_payload_twice_is_byte_identical_with_one_store_entry() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let log = build_log();
    let expected = expected_key("shell_cargo_build", log.as_bytes(), 12);
    let outputs: Vec<Vec<u8>> = (0..2)
        .map(|_| {
            // A new host each time: the same key must not depend on the process's state.
            let host = host_with(store.clone(), dir.path());
            let out = host.process(Call::new("shell_cargo_build", Input::Text(&log)));
            assert_eq!(
                out.meta.tee_key.as_deref(),
                Some(expected.as_str()),
                "{:?}",
                out.meta
            );
            out.payload.into_owned()
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
    let pointed =
        crate::support::pointed(std::str::from_utf8(&outputs[0]).unwrap()).expect("a pointer");
    assert_eq!(pointed.key.as_str(), expected.as_str());
    assert_eq!(store.stats().unwrap().entries, 1);
    assert_eq!(store.stats().unwrap().bytes, log.len() as u64);
    assert_eq!(
        store.get(&expected).unwrap().as_deref(),
        Some(log.as_bytes())
    );
}

#[test]
fn the_same_bytes_from_another_tool_get_another_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let host = host_with(store.clone(), dir.path());
    let log = build_log();
    let a = host
        .process(Call::new("build_a", Input::Text(&log)))
        .meta
        .tee_key;
    let b = host
        .process(Call::new("build_b", Input::Text(&log)))
        .meta
        .tee_key;
    assert_eq!(a, Some(expected_key("build_a", log.as_bytes(), 12)));
    assert_eq!(b, Some(expected_key("build_b", log.as_bytes(), 12)));
    assert_eq!(store.stats().unwrap().entries, 2);
}

#[test]
fn another_original_under_the_short_key_is_kept_and_the_input_goes_under_the_whole_digest() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let log = build_log();
    let short = expected_key("shell_cargo_build", log.as_bytes(), 12);
    let whole = expected_key("shell_cargo_build", log.as_bytes(), 64);
    // A collision, forced: other bytes already under the input's short key.
    store.put(&short, b"another original").unwrap();
    let host = host_with(store.clone(), dir.path());
    let out = host.process(Call::new("shell_cargo_build", Input::Text(&log)));
    assert_eq!(out.meta.tee_key.as_deref(), Some(whole.as_str()));
    let pointed =
        crate::support::pointed(std::str::from_utf8(&out.payload).unwrap()).expect("a pointer");
    assert_eq!(
        pointed.key.as_str(),
        whole.as_str(),
        "the pointer names the key used"
    );
    assert_eq!(store.get(&whole).unwrap().as_deref(), Some(log.as_bytes()));
    assert_eq!(
        store.get(&short).unwrap().as_deref(),
        Some(&b"another original"[..]),
        "never overwritten"
    );
    // Again: the same key, nothing new stored.
    let again = host.process(Call::new("shell_cargo_build", Input::Text(&log)));
    assert_eq!(again.payload, out.payload);
    assert_eq!(store.stats().unwrap().entries, 2);
}

fn run(project: &Path, args: &[&str], input: &[u8]) -> Output {
    support::run_in(project, args, input)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_command_compresses_the_same_payload_twice_to_the_same_bytes_and_one_entry() {
    let dir = tempfile::tempdir().unwrap();
    let log = build_log();
    let args = ["compress", "--tool", "shell_cargo_build"];
    let first = run(dir.path(), &args, log.as_bytes());
    let second = run(dir.path(), &args, log.as_bytes());
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(first.stdout, second.stdout);
    let pointed =
        crate::support::pointed(std::str::from_utf8(&first.stdout).unwrap()).expect("a pointer");
    assert_eq!(
        pointed.key.as_str(),
        expected_key("shell_cargo_build", log.as_bytes(), 12).as_str()
    );

    let store = run(dir.path(), &["store"], b"");
    assert_eq!(store.status.code(), Some(0), "{}", text(&store.stderr));
    let stdout = text(&store.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("store:     {}", dir.path().join(".parrot/tee.db").display())
    );
    assert_eq!(lines[1], "entries:   1");
    assert_eq!(
        lines[2],
        format!(
            "bytes:     {} ({:.1} KiB)",
            log.len(),
            log.len() as f64 / 1024.0
        )
    );
    assert!(
        lines[3].starts_with("oldest:    ") && lines[3].ends_with("s ago"),
        "{stdout}"
    );
    assert_eq!(
        lines[4],
        "retention: max_entries 10000, max_bytes 1073741824 (1.0 GiB), max_age 7d"
    );
    assert_eq!(lines.len(), 5, "{stdout}");
}

#[test]
fn store_reports_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["store"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("\nentries:   0\nbytes:     0\noldest:    none\n"),
        "{stdout}"
    );

    let out = run(dir.path(), &["--no-tee", "store"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: tee store none: no tee store is configured\n"
    );
}

/// Breaks the project after a key was stored: recovery must not need the manifest, nor the
/// plugins it names.
#[test]
fn recover_needs_only_the_store() {
    let breakages: [(&str, &str); 3] = [
        ("invalid TOML", "[compressor.\"t\"\ncodec = \n"),
        (
            "an unknown key",
            "[compressor.\"t\"]\ncodec = \"log\"\nlevle = \"normal\"\n",
        ),
        (
            "a codec whose plugin is not loaded",
            "[compressor.\"shell_cargo_build\"]\ncodec = \"tool_result_prune\"\nlevel = \"normal\"\n",
        ),
    ];
    for (case, manifest) in breakages {
        let dir = tempfile::tempdir().unwrap();
        let log = build_log();
        let out = run(
            dir.path(),
            &["compress", "--tool", "shell_cargo_build"],
            log.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{case}: {}", text(&out.stderr));
        let pointed =
            crate::support::pointed(std::str::from_utf8(&out.stdout).unwrap()).expect("a pointer");
        let key = pointed.key.clone();

        std::fs::write(dir.path().join(".parrot/compressors.toml"), manifest).unwrap();
        let check = run(dir.path(), &["check"], b"");
        assert_eq!(
            check.status.code(),
            Some(2),
            "{case}: the project is broken"
        );

        let recovers = |args: &[&str]| {
            let recovered = run(dir.path(), args, b"");
            assert_eq!(
                recovered.status.code(),
                Some(0),
                "{case}: {}",
                text(&recovered.stderr)
            );
            assert_eq!(recovered.stdout, log.as_bytes(), "{case}");
        };
        recovers(&["recover", &key]);
        // A plugin folder that does not exist is no reason to fail either.
        let gone = dir.path().join("gone");
        recovers(&["--plugins", gone.to_str().unwrap(), "recover", &key]);
        assert_eq!(
            run(dir.path(), &["store"], b"").status.code(),
            Some(0),
            "{case}"
        );
    }
}

#[test]
fn recover_works_under_the_kill_switch() {
    let dir = tempfile::tempdir().unwrap();
    let log = build_log();
    let out = run(
        dir.path(),
        &["compress", "--tool", "shell_cargo_build"],
        log.as_bytes(),
    );
    let pointed =
        crate::support::pointed(std::str::from_utf8(&out.stdout).unwrap()).expect("a pointer");
    let key = pointed.key.as_str();
    let recovered = Command::new(support::binary())
        .arg("--project")
        .arg(dir.path())
        .args(["recover", key])
        .env("PARROT_COMPRESSION_DISABLED", "1")
        .output()
        .unwrap();
    assert_eq!(
        recovered.status.code(),
        Some(0),
        "{}",
        text(&recovered.stderr)
    );
    assert_eq!(recovered.stdout, log.as_bytes());
}

/// An input of 4 MB or more whose key may be needed is hashed on a thread beside the codec:
/// the key is the same as computed here, and one the codec leaves lossless (no key) is not
/// held back by that thread.
#[test]
fn a_large_input_hashed_beside_the_codec_gets_the_same_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"rows\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n",
    )
    .unwrap();
    let rows: Vec<String> = (0..60_000)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"region\":\"south\",\"note\":null,\"name\":\"customer {}\",\"score\":{}}}",
                i * 7919 % 100_003,
                i % 97
            )
        })
        .collect();
    let payload = format!("[{}]", rows.join(","));
    assert!(payload.len() >= 4 << 20, "{} bytes", payload.len());
    let store: Arc<dyn TeeStore> = Arc::new(parrot_host::MemoryTeeStore::new(4));
    // Inline at any size: a debug build is far slower than the router's budgets assume.
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(store.clone())
        .inline_at_any_size(true)
        .max_result_chars(0)
        .build()
        .unwrap();
    let out = host.process(Call::new("rows", Input::Text(&payload)));
    let expected = expected_key("rows", payload.as_bytes(), 12);
    assert_eq!(
        out.meta.tee_key.as_deref(),
        Some(expected.as_str()),
        "{:?}",
        out.meta
    );
    assert_eq!(
        store.get(&expected).unwrap().as_deref(),
        Some(payload.as_bytes())
    );
    let lossless =
        host.process(Call::new("rows", Input::Text(&payload)).level(parrot_host::Level::Minimal));
    assert!(
        lossless.meta.compressed && lossless.meta.tee_key.is_none(),
        "{:?}",
        lossless.meta
    );
}
