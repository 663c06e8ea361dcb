//! The persistent tee store: persistence, retention, several processes, SIGKILL, and files that
//! are damaged, read-only or cannot grow.
//!
//! Tests that need another process run this test executable again, selecting the ignored test
//! `tee_sqlite::child` with the variable `PARROT_TEE_CHILD` naming what the child does.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use parrot_host::{Retention, TeeError, TeeStore};
use parrot_tee_sqlite::{SqliteTeeError, SqliteTeeStore};

const CHILD: &str = "PARROT_TEE_CHILD";
const CHILD_STORE: &str = "PARROT_TEE_CHILD_STORE";
const CHILD_PREFIX: &str = "PARROT_TEE_CHILD_PREFIX";
const CHILD_GO: &str = "PARROT_TEE_CHILD_GO";
/// Printed by a child before each key whose put returned Ok.
const STORED: &str = "stored-key=";

const UNLIMITED: Retention = Retention {
    max_entries: None,
    max_bytes: None,
    max_age: None,
};

/// The original stored under `key` by every test here: bytes that are not UTF-8, of a length
/// from 100 bytes to 300 KB chosen by the key, so that the parent can check a child's puts.
fn original_of(key: &str) -> Vec<u8> {
    let seed = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
    }) | 1;
    let len = [100, 1_000, 4_096, 70_000, 300_000][(seed % 5) as usize];
    crate::support::noise(seed, len)
}

fn assert_recovers(store: &SqliteTeeStore, key: &str) {
    let back = store.get(key).unwrap();
    assert!(
        back.as_deref() == Some(&original_of(key)[..]),
        "{key}: got {:?} bytes back",
        back.map(|b| b.len())
    );
}

/// A time the test moves by hand, in seconds since the epoch.
fn fake_time() -> Arc<AtomicU64> {
    Arc::new(AtomicU64::new(1_000_000))
}

/// A store's clock reading `seconds`.
fn clock(seconds: &Arc<AtomicU64>) -> impl Fn() -> SystemTime + Send + Sync + 'static {
    let seconds = Arc::clone(seconds);
    move || SystemTime::UNIX_EPOCH + Duration::from_secs(seconds.load(Ordering::SeqCst))
}

#[test]
fn entries_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nested/dirs/tee.sqlite");
    let keys: Vec<String> = (0..20).map(|n| format!("__tee__:t:{n:012x}")).collect();
    {
        let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
        for key in &keys {
            store.put(key, &original_of(key)).unwrap();
        }
    }
    let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
    for key in &keys {
        assert_recovers(&store, key);
    }
    assert!(matches!(
        store.put(&keys[0], b"other"),
        Err(TeeError::KeyExists { .. })
    ));
}

#[test]
fn retention_by_count_deletes_the_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    let retention = Retention {
        max_entries: Some(5),
        max_bytes: None,
        max_age: None,
    };
    let keys: Vec<String> = (0..12).map(|n| format!("k{n}")).collect();
    {
        let store = SqliteTeeStore::open(&file, retention).unwrap();
        for key in &keys {
            store.put(key, &original_of(key)).unwrap();
        }
        for (n, key) in keys.iter().enumerate() {
            if n < 7 {
                assert_eq!(store.get(key).unwrap(), None, "{key} should be gone");
            } else {
                assert_recovers(&store, key);
            }
        }
    }
    // A smaller limit applies from the open on.
    let fewer = Retention {
        max_entries: Some(3),
        max_bytes: None,
        max_age: None,
    };
    let store = SqliteTeeStore::open(&file, fewer).unwrap();
    for (n, key) in keys.iter().enumerate() {
        if n < 9 {
            assert_eq!(store.get(key).unwrap(), None, "{key} should be gone");
        } else {
            assert_recovers(&store, key);
        }
    }
}

#[test]
fn retention_by_age_deletes_the_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let seconds = fake_time();
    let retention = Retention {
        max_entries: None,
        max_bytes: None,
        max_age: Some(Duration::from_secs(60)),
    };
    let store =
        SqliteTeeStore::open_with_clock(dir.path().join("tee.sqlite"), retention, clock(&seconds))
            .unwrap();
    let start = seconds.load(Ordering::SeqCst);
    // One put every 10 s: k0 at +0 s … k9 at +90 s.
    for n in 0..10 {
        seconds.store(start + 10 * n, Ordering::SeqCst);
        store
            .put(&format!("k{n}"), &original_of(&format!("k{n}")))
            .unwrap();
    }
    // At +90 s, the limit is +30 s: k0, k1 and k2 went by the last puts.
    let rows: [(&str, bool); 10] = [
        ("k0", false),
        ("k1", false),
        ("k2", false),
        ("k3", true),
        ("k4", true),
        ("k5", true),
        ("k6", true),
        ("k7", true),
        ("k8", true),
        ("k9", true),
    ];
    for (key, kept) in rows {
        if kept {
            assert_recovers(&store, key);
        } else {
            assert_eq!(store.get(key).unwrap(), None, "{key} should be gone");
        }
    }
    // Time passes with no put: nothing is deleted until the next put.
    seconds.store(start + 145, Ordering::SeqCst);
    assert_recovers(&store, "k3");
    store.put("k10", &original_of("k10")).unwrap();
    for n in 0..=8 {
        assert_eq!(
            store.get(&format!("k{n}")).unwrap(),
            None,
            "k{n} should be gone"
        );
    }
    assert_recovers(&store, "k9");
    assert_recovers(&store, "k10");
}

#[test]
fn retention_by_count_and_age_together() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    let retention = Retention {
        max_entries: Some(4),
        max_bytes: None,
        max_age: Some(Duration::from_secs(100)),
    };
    let seconds = fake_time();
    let start = seconds.load(Ordering::SeqCst);
    {
        let store = SqliteTeeStore::open_with_clock(&file, retention, clock(&seconds)).unwrap();
        for n in 0..6 {
            seconds.store(start + 30 * n, Ordering::SeqCst);
            store
                .put(&format!("k{n}"), &original_of(&format!("k{n}")))
                .unwrap();
        }
        // By count: k2..k5; by age at +150 s (limit +50 s): k2..k5 as well.
        for n in 0..2 {
            assert_eq!(store.get(&format!("k{n}")).unwrap(), None);
        }
        for n in 2..6 {
            assert_recovers(&store, &format!("k{n}"));
        }
    }
    // Reopened at +250 s (limit +150 s): only k5, put at +150 s, is young enough.
    seconds.store(start + 250, Ordering::SeqCst);
    let store = SqliteTeeStore::open_with_clock(&file, retention, clock(&seconds)).unwrap();
    for n in 0..5 {
        assert_eq!(
            store.get(&format!("k{n}")).unwrap(),
            None,
            "k{n} should be gone"
        );
    }
    assert_recovers(&store, "k5");
}

#[test]
fn retention_by_bytes_deletes_the_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    let retention = Retention {
        max_entries: None,
        max_bytes: Some(10_000),
        max_age: None,
    };
    let sizes: [usize; 6] = [3_000, 4_000, 2_000, 3_000, 1_000, 5_000];
    let original = |n: usize| crate::support::noise(n as u64, sizes[n]);
    let store = SqliteTeeStore::open(&file, retention).unwrap();
    // After each put: which keys remain, and their bytes.
    let rows: [(&[usize], u64); 6] = [
        (&[0], 3_000),
        (&[0, 1], 7_000),
        (&[0, 1, 2], 9_000),
        (&[1, 2, 3], 9_000),
        (&[1, 2, 3, 4], 10_000),
        (&[3, 4, 5], 9_000),
    ];
    for (n, (kept, bytes)) in rows.into_iter().enumerate() {
        store.put(&format!("k{n}"), &original(n)).unwrap();
        for m in 0..=n {
            let back = store.get(&format!("k{m}")).unwrap();
            if kept.contains(&m) {
                assert_eq!(back, Some(original(m)), "after k{n}: k{m} kept");
            } else {
                assert_eq!(back, None, "after k{n}: k{m} should be gone");
            }
        }
        let stats = store.stats().unwrap();
        assert_eq!(
            (stats.entries, stats.bytes),
            (kept.len() as u64, bytes),
            "after k{n}"
        );
    }
    drop(store);
    // A smaller limit applies from the open on.
    let smaller = Retention {
        max_bytes: Some(6_000),
        ..retention
    };
    let store = SqliteTeeStore::open(&file, smaller).unwrap();
    assert_eq!(store.get("k3").unwrap(), None);
    assert_eq!(store.get("k4").unwrap(), Some(original(4)));
    assert_eq!(store.get("k5").unwrap(), Some(original(5)));
    assert_eq!(store.stats().unwrap().bytes, 6_000);
}

#[test]
fn an_original_larger_than_max_bytes_is_kept_alone() {
    let dir = tempfile::tempdir().unwrap();
    let retention = Retention {
        max_entries: None,
        max_bytes: Some(1_000),
        max_age: None,
    };
    let store = SqliteTeeStore::open(dir.path().join("tee.sqlite"), retention).unwrap();
    store.put("small", &[1; 500]).unwrap();
    store.put("large", &[2; 5_000]).unwrap();
    assert_eq!(store.get("small").unwrap(), None);
    assert_eq!(
        store.get("large").unwrap(),
        Some(vec![2; 5_000]),
        "the newest stays"
    );
    store.put("next", &[3; 10]).unwrap();
    assert_eq!(store.get("large").unwrap(), None);
    assert_eq!(store.stats().unwrap().bytes, 10);
}

#[test]
fn a_renewed_entry_is_evicted_last_and_its_age_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let seconds = fake_time();
    let start = seconds.load(Ordering::SeqCst);
    let retention = Retention {
        max_entries: Some(3),
        max_bytes: None,
        max_age: Some(Duration::from_secs(60)),
    };
    let store =
        SqliteTeeStore::open_with_clock(dir.path().join("tee.sqlite"), retention, clock(&seconds))
            .unwrap();
    for (n, key) in ["a", "b", "c"].into_iter().enumerate() {
        seconds.store(start + n as u64, Ordering::SeqCst);
        store.put(key, key.as_bytes()).unwrap();
    }
    seconds.store(start + 50, Ordering::SeqCst);
    store.put("a", b"a").unwrap();
    let stats = store.stats().unwrap();
    assert_eq!(stats.entries, 3, "stored once");
    assert_eq!(
        stats.oldest,
        Some(SystemTime::UNIX_EPOCH + Duration::from_secs(start + 1)),
        "b is now the oldest"
    );
    // At +70 s the limit is +10 s: b and c go by age; a, renewed at +50 s, stays.
    seconds.store(start + 70, Ordering::SeqCst);
    store.put("d", b"d").unwrap();
    assert_eq!(store.get("a").unwrap().as_deref(), Some(&b"a"[..]));
    assert_eq!(store.get("b").unwrap(), None);
    assert_eq!(store.get("c").unwrap(), None);
    assert_eq!(store.stats().unwrap().entries, 2);
}

/// The schema of version 1, as its builds created it.
const SCHEMA_1: &str = "
    CREATE TABLE tee (
        key        TEXT    PRIMARY KEY NOT NULL,
        original   BLOB    NOT NULL,
        created_at INTEGER NOT NULL,
        seq        INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX tee_seq ON tee (seq);
    CREATE INDEX tee_created_at ON tee (created_at);
    PRAGMA application_id = 1347572308;
    PRAGMA user_version = 1;
    PRAGMA journal_mode = wal;
";

fn write_a_store_of_schema_1(file: &Path) {
    let db = rusqlite::Connection::open(file).unwrap();
    db.execute_batch(SCHEMA_1).unwrap();
    for n in 0..5i64 {
        let key = format!("__tee__:t:0a1b2c3d:{n}");
        db.execute(
            "INSERT INTO tee VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![key, original_of(&key), 1_000 + n, n + 1],
        )
        .unwrap();
    }
}

#[test]
fn a_store_of_schema_1_is_upgraded_and_keeps_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    write_a_store_of_schema_1(&file);
    let old: Vec<String> = (0..5).map(|n| format!("__tee__:t:0a1b2c3d:{n}")).collect();
    let bytes: u64 = old.iter().map(|key| original_of(key).len() as u64).sum();
    let retention = Retention {
        max_entries: Some(5),
        ..UNLIMITED
    };
    let store = SqliteTeeStore::open(&file, retention).unwrap();
    for key in &old {
        assert_recovers(&store, key);
    }
    assert_eq!(store.stats().unwrap().bytes, bytes);
    store.put("new", &original_of("new")).unwrap();
    assert_eq!(
        store.get(&old[0]).unwrap(),
        None,
        "the oldest goes by count"
    );
    let stats = store.stats().unwrap();
    assert_eq!(stats.entries, 5);
    assert_eq!(
        stats.bytes,
        bytes - original_of(&old[0]).len() as u64 + original_of("new").len() as u64
    );
    drop(store);
    let db = rusqlite::Connection::open(&file).unwrap();
    let version: i32 = db
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, 2);
}

/// Writes something that is not a tee store at `file`.
type Damage = fn(&Path);

fn write_garbage(file: &Path) {
    std::fs::write(file, vec![0x5a; 64 * 1024]).unwrap();
}

fn write_a_truncated_store(file: &Path) {
    write_a_store(file);
    let len = std::fs::metadata(file).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
}

fn write_a_store_cut_inside_its_header(file: &Path) {
    write_a_store(file);
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_len(50)
        .unwrap();
}

fn write_a_store(file: &Path) {
    let store = SqliteTeeStore::open(file, UNLIMITED).unwrap();
    for n in 0..40 {
        store.put(&format!("k{n}"), &[7; 4000]).unwrap();
    }
}

fn write_another_applications_database(file: &Path) {
    let db = rusqlite::Connection::open(file).unwrap();
    db.execute_batch("CREATE TABLE tee (x); INSERT INTO tee VALUES (1);")
        .unwrap();
}

fn write_a_store_of_a_later_schema(file: &Path) {
    write_a_store(file);
    let db = rusqlite::Connection::open(file).unwrap();
    db.pragma_update(None, "user_version", 3).unwrap();
}

fn make_a_directory(file: &Path) {
    std::fs::create_dir(file).unwrap();
}

#[test]
fn open_refuses_what_is_not_a_tee_store_naming_the_file() {
    let cases: [(&str, Damage, &str); 6] = [
        ("garbage", write_garbage, "not a database"),
        ("truncated", write_a_truncated_store, "malformed"),
        (
            "cut inside its header",
            write_a_store_cut_inside_its_header,
            "malformed",
        ),
        (
            "another application's",
            write_another_applications_database,
            "another application",
        ),
        (
            "a later schema",
            write_a_store_of_a_later_schema,
            "schema version 3",
        ),
        ("a directory", make_a_directory, "not a regular file"),
    ];
    for (case, damage, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tee.sqlite");
        damage(&file);
        let err = SqliteTeeStore::open(&file, Retention::default()).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(&err, SqliteTeeError::Open { file: named, .. } if named == &file),
            "{case}: {message}"
        );
        assert!(
            message.starts_with(&file.display().to_string()) && message.contains(says),
            "{case}: {message}"
        );
        assert_eq!(message.lines().count(), 1, "{case}: {message}");
    }
}

#[test]
fn open_says_when_the_directory_cannot_be_created() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a-file"), b"").unwrap();
    let file = dir.path().join("a-file/tee.sqlite");
    let err = SqliteTeeStore::open(&file, Retention::default()).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(&file.display().to_string()) && message.contains("directory"),
        "{message}"
    );
}

/// This executable running its `child` test with `mode`, the store `file` and more variables.
fn run_child(mode: &str, file: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "tee_sqlite::child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, mode)
        .env(CHILD_STORE, file);
    command
}

fn assert_success(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what}: {}\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The keys a child printed after their puts returned, from whole lines only.
fn stored_keys(stdout: impl BufRead) -> Vec<String> {
    let mut keys = Vec::new();
    for line in stdout.split(b'\n') {
        let line = String::from_utf8(line.unwrap()).unwrap();
        // libtest may print "test child ... " on the same line before the child's first line.
        if let Some(at) = line.find(STORED) {
            keys.push(line[at + STORED.len()..].to_owned());
        }
    }
    keys
}

#[test]
fn two_processes_write_one_store_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    let go = dir.path().join("go");
    // Both children open the file, which does not exist yet, at the same moment.
    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|prefix| {
            run_child("write", &file)
                .env(CHILD_PREFIX, prefix)
                .env(CHILD_GO, &go)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    std::fs::write(&go, b"").unwrap();
    let mut printed = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert_success("writer", &output);
        printed.extend(stored_keys(&output.stdout[..]));
    }
    assert_eq!(printed.len(), 2 * CHILD_PUTS);
    let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
    for prefix in ["a", "b"] {
        for n in 0..CHILD_PUTS {
            assert_recovers(&store, &format!("{prefix}-{n}"));
        }
    }
}

#[test]
fn a_put_that_returned_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    let mut writer = run_child("write-until-killed", &file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(writer.stdout.take().unwrap());
    let mut returned = Vec::new();
    let mut line = Vec::new();
    while returned.len() < 300 {
        line.clear();
        assert_ne!(
            stdout.read_until(b'\n', &mut line).unwrap(),
            0,
            "the writer stopped"
        );
        returned.extend(stored_keys(&line[..]));
    }
    // On Unix, kill sends SIGKILL: no destructor, no checkpoint, no flush.
    writer.kill().unwrap();
    let status = writer.wait().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "the writer was killed mid-run");
    }
    #[cfg(not(unix))]
    assert!(!status.success());
    // Lines still in the pipe were printed before the kill, after their puts returned.
    returned.extend(stored_keys(stdout));

    let store = SqliteTeeStore::open(&file, UNLIMITED).unwrap();
    for key in &returned {
        assert_recovers(&store, key);
    }
}

/// Makes `command` run without the privilege that bypasses file permissions: when this process
/// may give files away (root), the child runs as nobody, owning `dir` and `file`, whose
/// permission bits then bind it as they bind any owner.
#[cfg(unix)]
fn without_root_privilege(command: &mut Command, dir: &Path, file: &Path) {
    use std::os::unix::process::CommandExt;
    const NOBODY: u32 = 65534;
    if std::os::unix::fs::chown(file, Some(NOBODY), Some(NOBODY)).is_ok() {
        std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).unwrap();
        command.uid(NOBODY).gid(NOBODY);
    }
}

#[cfg(unix)]
fn set_mode(file: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
#[test]
fn a_read_only_store_serves_gets_and_refuses_puts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    {
        let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
        store.put("kept", &original_of("kept")).unwrap();
    }
    set_mode(&file, 0o444);
    let mut reader = run_child("read-only", &file);
    without_root_privilege(&mut reader, dir.path(), &file);
    let output = reader.output().unwrap();
    assert_success("reader", &output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let refused = format!(
        "refused: tee store {}: cannot store key \"new\": ",
        file.display()
    );
    assert!(stdout.contains(&refused), "{stdout}");
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_an_open_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    write_a_store(&file);
    set_mode(&file, 0o000);
    let mut opener = run_child("unreadable", &file);
    without_root_privilege(&mut opener, dir.path(), &file);
    let output = opener.output().unwrap();
    assert_success("opener", &output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let refused = format!(
        "refused: {}: cannot open as a tee store: cannot read: ",
        file.display()
    );
    assert!(stdout.contains(&refused), "{stdout}");
}

#[cfg(unix)]
#[test]
fn a_put_that_cannot_be_written_is_a_store_error_naming_the_file() {
    // A full disk, as the child sees it: files may not grow past 1 MiB (2048 blocks of 512
    // bytes), and the signal that would kill it for trying is ignored, so the write fails.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    let command = run_child("cannot-grow", &file);
    let output = Command::new("sh")
        .arg("-c")
        .arg(r#"trap "" XFSZ && ulimit -f 2048 && exec "$0" "$@""#)
        .arg(command.get_program())
        .args(command.get_args())
        .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .output()
        .unwrap();
    assert_success("writer", &output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let refused = format!(
        "refused: tee store {}: cannot store key \"big\": ",
        file.display()
    );
    assert!(stdout.contains(&refused), "{stdout}");

    let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
    assert_recovers(&store, "small");
    assert_eq!(store.get("big").unwrap(), None);
    store.put("after", &original_of("after")).unwrap();
    assert_recovers(&store, "after");
}

/// Puts per child in `two_processes_write_one_store_at_once`.
const CHILD_PUTS: usize = 300;

/// The other side of the tests that run a child process; does nothing when run as a test.
#[test]
#[ignore = "run by the tests that need a second process"]
fn child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    let file = PathBuf::from(std::env::var_os(CHILD_STORE).unwrap());
    // libtest may have printed "test child ... " without a line end.
    println!();
    match mode.as_str() {
        "write" => {
            let prefix = std::env::var(CHILD_PREFIX).unwrap();
            let go = PathBuf::from(std::env::var_os(CHILD_GO).unwrap());
            let started = Instant::now();
            while !go.exists() {
                assert!(started.elapsed() < Duration::from_secs(60), "no go");
                std::thread::sleep(Duration::from_millis(1));
            }
            let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
            for n in 0..CHILD_PUTS {
                let key = format!("{prefix}-{n}");
                store.put(&key, &original_of(&key)).unwrap();
                println!("{STORED}{key}");
            }
        }
        "write-until-killed" => {
            let store = SqliteTeeStore::open(&file, UNLIMITED).unwrap();
            // Bounded, in case the parent dies before it kills.
            for n in 0..100_000 {
                let key = format!("killed-{n}");
                store.put(&key, &original_of(&key)).unwrap();
                println!("{STORED}{key}");
            }
        }
        "read-only" => {
            let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
            assert_recovers(&store, "kept");
            match store.put("new", b"x") {
                Err(err) if matches!(err.backend(), Some(SqliteTeeError::Put { .. })) => {
                    println!("refused: {err}")
                }
                other => panic!("a put to a read-only store gave {other:?}"),
            }
            assert_recovers(&store, "kept");
        }
        "unreadable" => match SqliteTeeStore::open(&file, Retention::default()) {
            Err(err @ SqliteTeeError::Open { .. }) => println!("refused: {err}"),
            other => panic!("opening an unreadable file gave {other:?}"),
        },
        "cannot-grow" => {
            let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
            store.put("small", &original_of("small")).unwrap();
            match store.put("big", &vec![1; 8 * 1024 * 1024]) {
                Err(err) if matches!(err.backend(), Some(SqliteTeeError::Put { .. })) => {
                    println!("refused: {err}")
                }
                other => panic!("a put past the file size limit gave {other:?}"),
            }
            assert_recovers(&store, "small");
        }
        other => panic!("unknown child mode {other}"),
    }
}

/// A SQLite file of another application, in the default rollback-journal mode, is refused
/// exactly as it was: not a byte changed, its journal mode not switched, no log beside it.
#[test]
fn another_applications_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("theirs.sqlite");
    {
        let db = rusqlite::Connection::open(&file).unwrap();
        let mode: String = db
            .pragma_update_and_check(None, "journal_mode", "delete", |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        db.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    let listing = |dir: &Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let files_before = listing(dir.path());

    let err = SqliteTeeStore::open(&file, Retention::default()).unwrap_err();
    assert!(err.to_string().contains("another application"), "{err}");

    assert!(std::fs::read(&file).unwrap() == before, "the file changed");
    assert_eq!(
        listing(dir.path()),
        files_before,
        "files appeared beside it"
    );
    let db =
        rusqlite::Connection::open_with_flags(&file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mode: String = db
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
}

/// A project whose store this user cannot write (another user's, as on a read-only mount: the
/// file and its directory both read-only to the command): every command still runs, with one
/// warning naming the store. Lossless work goes on, a lossy result goes out uncompressed
/// (`tee_failed`), `recover` reads what was stored.
#[cfg(unix)]
#[test]
fn the_command_works_on_a_store_it_cannot_write() {
    use std::os::unix::process::CommandExt;

    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".parrot")).unwrap();
    std::fs::write(
        project.join(".parrot/compressors.toml"),
        "[compressor.\"rows\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n",
    )
    .unwrap();
    let rows: Vec<String> = (0..40)
        .map(|i| format!("{{\"id\":{i},\"region\":\"south\",\"notes\":null}}"))
        .collect();
    let payload = format!("[{}]", rows.join(","));
    let input = dir.path().join("rows.json");
    std::fs::write(&input, &payload).unwrap();
    let store = project.join(".parrot/tee.db");

    let command = |args: &[&str]| {
        let mut command = Command::new(crate::support::binary());
        command
            .arg("--project")
            .arg(&project)
            .args(args)
            .env_remove("PARROT_COMPRESSION_DISABLED")
            .env("NO_COLOR", "1");
        command
    };
    let meta_of = |output: &Output| -> serde_json::Value {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr.lines().rfind(|line| line.starts_with('{')).unwrap();
        serde_json::from_str(line).unwrap()
    };
    let compress = [
        "compress",
        "--tool",
        "rows",
        "--meta",
        input.to_str().unwrap(),
    ];

    // Stored while the store could still be written.
    let output = command(&compress).output().unwrap();
    assert_success("first compress", &output);
    let key = meta_of(&output)["compression_tee_key"]
        .as_str()
        .unwrap()
        .to_owned();

    // Read-only to whoever runs the command next. Root passes permission bits by, so then the
    // command runs as nobody, and the files stay root's.
    set_mode(dir.path(), 0o755);
    let as_root = std::fs::metadata(dir.path()).map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    });
    let as_root = as_root.unwrap() && std::os::unix::fs::chown(&store, Some(0), None).is_ok();
    if !as_root {
        set_mode(&store, 0o444);
        set_mode(&project.join(".parrot"), 0o555);
    }
    // `warned`: whether the run opens the store (`compress` opens it only for a result it
    // stores), and so warns, once, naming it.
    let unprivileged = |args: &[&str], warned: bool| {
        let mut command = command(args);
        if as_root {
            command.uid(65534).gid(65534);
        }
        let output = command.output().unwrap();
        assert_success(&args.join(" "), &output);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let warning = format!(
            "tee store {}: cannot be written, opened read-only",
            store.display()
        );
        assert_eq!(
            stderr.matches(&warning).count(),
            usize::from(warned),
            "warned {warned}, naming the store: {stderr}"
        );
        output
    };
    let before = std::fs::read(&store).unwrap();

    let lossy = unprivileged(&compress, true);
    assert!(
        lossy.stdout == payload.as_bytes(),
        "the lossy result goes out as it came"
    );
    let meta = meta_of(&lossy);
    assert_eq!(meta["compression_skipped"], "tee_failed", "{meta}");

    let minimal = [&compress[..], &["--level", "minimal"]].concat();
    let lossless = unprivileged(&minimal, false);
    assert_eq!(meta_of(&lossless)["_compressed"], true);
    assert!(lossless.stdout.len() < payload.len());

    let recovered = unprivileged(&["recover", &key], true);
    assert!(
        recovered.stdout == payload.as_bytes(),
        "recover reads the store"
    );

    assert!(
        std::fs::read(&store).unwrap() == before,
        "the store changed"
    );

    if !as_root {
        set_mode(&project.join(".parrot"), 0o755);
    }
}
