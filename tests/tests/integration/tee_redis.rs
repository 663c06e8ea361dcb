//! The Redis tee store against a real `redis-server` (see `redis_server`): two processes sharing
//! it, Redis killed and restarted under a host, expiry, a paused Redis, a read-only replica, a
//! full Redis, credentials, and the command (`compress`, `recover`, `store`) on a Redis URL.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parrot_host::{Call, Host, Input, Skip, TeeStore};
use parrot_tee_redis::{RedisSettings, RedisTeeError, RedisTeeStore};
use serde_json::Value;
use sha2::Digest;

use crate::redis_server::RedisServer;
use crate::support::{self, noise};

/// A build log of 80 lines with one error, different for each `seed`: the default
/// configuration folds it with the `log` codec, lossy, so its original must be stored.
fn build_log(seed: u64) -> String {
    let mut log = String::new();
    for n in 0..80u64 {
        if n == 41 {
            log.push_str(&format!(
                "error[E0308]: mismatched types --> src/run_{seed}.rs:{n}:17 expected `u8`\n"
            ));
        }
        log.push_str(&format!(
            "2026-11-29T10:07:{:02}.{:03}Z INFO  compiling crate_{} v0.{}.{} (build step {})\n",
            n % 60,
            (seed * 7 + n) % 1000,
            seed * 100 + n,
            n % 9,
            seed,
            4000 + n
        ));
    }
    log
}

/// A host of the default configuration whose tee store is `store`.
fn host(project: &Path, store: Arc<dyn TeeStore>) -> Host {
    Host::builder()
        .project(project)
        .plugin_path(None)
        .tee_store(store)
        .build()
        .unwrap_or_else(|err| panic!("{err}"))
}

fn settings(timeout_ms: u64) -> RedisSettings {
    let mut settings = RedisSettings::default();
    settings.timeout = Duration::from_millis(timeout_ms);
    settings.connect_timeout = Duration::from_millis(timeout_ms);
    settings
}

/// Calls `attempt` until it returns `Some`, for at most `within`.
fn eventually<T>(within: Duration, mut attempt: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(done) = attempt() {
            return done;
        }
        assert!(Instant::now() < deadline, "not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn originals_live_under_the_prefix_and_prefixes_keep_projects_apart() {
    let server = RedisServer::start(&[]);
    let team_a = RedisTeeStore::open(&server.url("?prefix=team-a:")).unwrap();
    let team_b = RedisTeeStore::open(&server.url("?prefix=team-b:")).unwrap();
    let raw = RedisTeeStore::open(&server.url("?prefix=")).unwrap();
    team_a.put("__tee__:t:1", b"from a").unwrap();
    team_b.put("__tee__:t:1", b"from b").unwrap();
    assert_eq!(
        team_a.get("__tee__:t:1").unwrap().as_deref(),
        Some(&b"from a"[..])
    );
    assert_eq!(
        team_b.get("__tee__:t:1").unwrap().as_deref(),
        Some(&b"from b"[..])
    );
    assert_eq!(
        raw.get("team-a:__tee__:t:1").unwrap().as_deref(),
        Some(&b"from a"[..])
    );
    assert_eq!(raw.get("__tee__:t:1").unwrap(), None);
    let default = RedisTeeStore::open(&server.url("")).unwrap();
    default.put("k", b"v").unwrap();
    assert_eq!(raw.get("parrot:k").unwrap().as_deref(), Some(&b"v"[..]));

    let stats = team_a.stats().unwrap();
    assert_eq!((stats.entries, stats.bytes), (1, 6));
    assert!(stats.oldest.is_some());
}

#[test]
fn a_host_on_redis_stores_each_lossy_original_and_falls_back_to_the_whole_digest() {
    let server = RedisServer::start(&[]);
    let project = tempfile::tempdir().unwrap();
    let store = Arc::new(RedisTeeStore::open(&server.url("")).unwrap());
    let host = host(project.path(), store.clone());
    let log = build_log(1);
    let processed = host.process(Call::new("shell_cargo_build", Input::Text(&log)));
    assert!(processed.meta.teed, "{:?}", processed.meta);
    let key = processed.meta.tee_key.clone().unwrap();
    assert_eq!(store.get(&key).unwrap().as_deref(), Some(log.as_bytes()));

    // Another original under the short key of the next one: the host stores it under the
    // whole digest instead, and the pointer names that.
    let other = build_log(2);
    let first = Call::new("shell_cargo_build", Input::Text(&other));
    // The key a tee key is: the tool and 12 hex digits of the original's SHA-256.
    let digest = sha2::Sha256::digest(other.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let short = format!("__tee__:shell_cargo_build:{}", &hex[..12]);
    store.put(&short, b"someone else's original").unwrap();
    let processed = host.process(first);
    let whole = processed.meta.tee_key.clone().unwrap();
    assert_ne!(whole, short);
    assert_eq!(whole.rsplit(':').next().unwrap().len(), 64, "{whole}");
    assert_eq!(
        store.get(&whole).unwrap().as_deref(),
        Some(other.as_bytes())
    );
    assert_eq!(
        store.get(&short).unwrap().as_deref(),
        Some(&b"someone else's original"[..])
    );
}

/// The second half of [`two_processes_write_a_thousand_keys_each_and_each_reads_all`]: run
/// as a child process of it (with `PARROT_TEST_REDIS_URL` and `PARROT_TEST_WRITER` set); it
/// returns at once otherwise.
#[test]
#[ignore = "a child process of two_processes_write_a_thousand_keys_each_and_each_reads_all"]
fn writer_process() {
    let (Ok(url), Ok(me)) = (
        std::env::var("PARROT_TEST_REDIS_URL"),
        std::env::var("PARROT_TEST_WRITER"),
    ) else {
        return;
    };
    let me: u64 = me.parse().unwrap();
    let store = RedisTeeStore::open_with(&url, settings(2000), None).unwrap();
    for n in 0..1000u64 {
        store
            .put(&format!("w{me}:{n}"), &noise(me * 1000 + n, 300))
            .unwrap();
        // Keys both write: the same bytes, so each put succeeds and one copy is kept.
        if n % 10 == 0 {
            store
                .put(&format!("shared:{n}"), &noise(7_000_000 + n, 300))
                .unwrap();
        }
    }
    let other = 1 - me;
    eventually(Duration::from_secs(60), || {
        store.get(&format!("w{other}:999")).unwrap().map(drop)
    });
    for writer in 0..2u64 {
        for n in 0..1000u64 {
            assert_eq!(
                store.get(&format!("w{writer}:{n}")).unwrap(),
                Some(noise(writer * 1000 + n, 300)),
                "writer {me} reading w{writer}:{n}"
            );
        }
    }
    for n in (0..1000u64).step_by(10) {
        assert_eq!(
            store.get(&format!("shared:{n}")).unwrap(),
            Some(noise(7_000_000 + n, 300))
        );
    }
}

#[test]
fn two_processes_write_a_thousand_keys_each_and_each_reads_all() {
    let server = RedisServer::start(&[]);
    let children: Vec<_> = (0..2)
        .map(|writer| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "tee_redis::writer_process",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                ])
                .env("PARROT_TEST_REDIS_URL", server.url(""))
                .env("PARROT_TEST_WRITER", writer.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let store = RedisTeeStore::open(&server.url("")).unwrap();
    assert_eq!(store.stats().unwrap().entries, 2100);
}

#[test]
fn redis_killed_mid_session_loses_nothing_acknowledged_and_calls_recover_after_restart() {
    let mut server = RedisServer::durable();
    let project = tempfile::tempdir().unwrap();
    let store = Arc::new(
        RedisTeeStore::open_with(
            &server.url("?timeout_ms=300&connect_timeout_ms=300"),
            settings(300),
            None,
        )
        .unwrap(),
    );
    let host = host(project.path(), store.clone());
    let mut acknowledged = Vec::new();
    for seed in 0..5 {
        let log = build_log(seed);
        let processed = host.process(Call::new("shell_cargo_build", Input::Text(&log)));
        assert!(processed.meta.teed, "{:?}", processed.meta);
        acknowledged.push((processed.meta.tee_key.unwrap(), log));
    }

    server.kill();
    for seed in 10..13 {
        let log = build_log(seed);
        let started = Instant::now();
        let processed = host.process(Call::new("shell_cargo_build", Input::Text(&log)));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            processed.meta.skipped,
            Some(Skip::TeeFailed),
            "{:?}",
            processed.meta
        );
        assert_eq!(
            &*processed.payload,
            log.as_bytes(),
            "the original goes out as it came"
        );
    }
    // Lossless work goes on: compact JSON needs no original kept.
    let rows = r#"[ {"id": 1, "tags": null}, {"id": 1, "tags": null}, {"id": 1, "tags": null} ]"#;
    let processed = host.process(Call::new("sql_select", Input::Text(rows)));
    assert!(processed.meta.compressed, "{:?}", processed.meta);
    assert!(!processed.meta.teed);
    assert!(matches!(
        store.get(&acknowledged[0].0).unwrap_err().backend(),
        Some(RedisTeeError::Get { .. })
    ));

    server.restart();
    let log = build_log(20);
    let processed = eventually(Duration::from_secs(5), || {
        let processed = host.process(Call::new("shell_cargo_build", Input::Text(&log)));
        processed.meta.teed.then_some(processed)
    });
    assert_eq!(
        store
            .get(processed.meta.tee_key.as_deref().unwrap())
            .unwrap()
            .as_deref(),
        Some(log.as_bytes())
    );
    for (key, log) in &acknowledged {
        assert_eq!(
            store.get(key).unwrap().as_deref(),
            Some(log.as_bytes()),
            "{key}"
        );
    }
}

#[test]
fn an_original_expires_its_ttl_after_its_last_put() {
    let server = RedisServer::start(&[]);
    let mut short = settings(500);
    short.ttl = Some(Duration::from_millis(1500));
    let store = RedisTeeStore::open_with(&server.url(""), short, None).unwrap();
    let started = Instant::now();
    store.put("renewed", b"1").unwrap();
    store.put("left", b"2").unwrap();
    std::thread::sleep(Duration::from_millis(800));
    store.put("renewed", b"1").unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(store.get("left").unwrap(), None, "1.5 s after its put");
    let renewed = store.get("renewed").unwrap();
    if started.elapsed() < Duration::from_millis(2300) {
        assert_eq!(renewed.as_deref(), Some(&b"1"[..]), "renewed at 0.8 s");
    }
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(store.get("renewed").unwrap(), None);

    // ttl=0 in the URL: no expiry at all.
    let forever = RedisTeeStore::open(&server.url("?ttl=0")).unwrap();
    forever.put("kept", b"3").unwrap();
    assert_eq!(forever.settings().ttl, None);
    assert_eq!(
        forever.stats().unwrap().oldest,
        None,
        "no ttl, no age known"
    );
}

#[test]
fn a_paused_redis_fails_the_call_within_its_deadline_and_the_store_comes_back() {
    let server = RedisServer::start(&[]);
    let store = RedisTeeStore::open_with(
        &server.url("?timeout_ms=200&connect_timeout_ms=200"),
        settings(200),
        None,
    )
    .unwrap();
    store.put("before", b"1").unwrap();
    server.pause();
    let started = Instant::now();
    let err = store.put("during", &noise(1, 1 << 20)).unwrap_err();
    let took = started.elapsed();
    assert!(
        matches!(err.backend(), Some(RedisTeeError::Put { .. })),
        "{err}"
    );
    assert!(took < Duration::from_secs(2), "the put waited {took:?}");
    // Meanwhile calls fail at once rather than waiting again.
    let started = Instant::now();
    assert!(store.get("before").is_err());
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    server.resume();
    eventually(Duration::from_secs(5), || store.put("after", b"2").ok());
    assert_eq!(store.get("before").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn a_read_only_replica_refuses_puts_and_serves_gets() {
    let primary = RedisServer::start(&[]);
    let port = primary.port().to_string();
    let replica = RedisServer::start(&["--replicaof", "127.0.0.1", &port]);
    RedisTeeStore::open(&primary.url(""))
        .unwrap()
        .put("k", b"v")
        .unwrap();
    let store = RedisTeeStore::open(&replica.url("")).unwrap();
    let got = eventually(Duration::from_secs(10), || store.get("k").unwrap());
    assert_eq!(got, b"v");
    let err = store.put("new", b"x").unwrap_err();
    assert!(
        matches!(err.backend(), Some(RedisTeeError::Put { .. })),
        "{err:?}"
    );
    assert!(err.to_string().contains("read only replica"), "{err}");
    // An answer that is an error is not an outage: the next call goes to Redis at once.
    assert_eq!(store.get("k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn a_full_redis_refuses_puts_and_keeps_what_it_holds() {
    let server = RedisServer::start(&["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]);
    let store = RedisTeeStore::open(&server.url("")).unwrap();
    let mut kept = Vec::new();
    let err = (0..20u64)
        .find_map(|n| match store.put(&format!("k{n}"), &noise(n, 1 << 20)) {
            Ok(()) => {
                kept.push(n);
                None
            }
            Err(err) => Some(err),
        })
        .expect("4 MB of Redis cannot hold 20 MB");
    assert!(err.to_string().contains("OOM"), "{err}");
    assert!(!kept.is_empty());
    for n in kept {
        assert_eq!(
            store.get(&format!("k{n}")).unwrap(),
            Some(noise(n, 1 << 20))
        );
    }
}

#[test]
fn wrong_credentials_are_one_error_naming_the_url_with_the_password_masked() {
    let server = RedisServer::start(&["--requirepass", "right-one"]);
    let url = server.url("").replace("redis://", "redis://:wrong-one@");
    let err = RedisTeeStore::open(&url).unwrap_err().to_string();
    let masked = url.replace(":wrong-one@", ":***@");
    assert!(
        err.starts_with(&format!(
            "tee store {masked}: cannot open: Redis refused the credentials"
        )),
        "{err}"
    );
    assert!(!err.contains("wrong-one") && !err.contains('\n'), "{err}");

    let store =
        RedisTeeStore::open_with(&server.url(""), RedisSettings::default(), Some("right-one"))
            .unwrap();
    store.put("k", b"v").unwrap();

    let out = command(&["--tee-store", &url, "recover", "k"], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: tee store {masked}: cannot open: ")),
        "{stderr}"
    );
    assert!(!stderr.contains("wrong-one"), "{stderr}");

    let out = command(
        &["--tee-store", &server.url(""), "recover", "k"],
        b"",
        &[("PARROT_TEE_REDIS_PASSWORD", "right-one")],
    );
    assert_eq!(out.stdout, b"v", "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_bad_store_url_is_one_line_naming_it_with_the_password_masked() {
    let cases = [
        (
            "http://:pw@127.0.0.1:1/0",
            2,
            "error: tee store URL http://:***@127.0.0.1:1/0: unsupported scheme \"http\" (expected redis:// or rediss://)",
        ),
        (
            "redis://:pw@/0",
            2,
            "error: tee store URL redis://:***@/0: empty host",
        ),
        (
            "redis://:pw@127.0.0.1:1/zero",
            2,
            "error: tee store URL redis://:***@127.0.0.1:1/zero: database \"zero\" is not a number (expected /0, /1, …)",
        ),
        (
            "redis://:pw@no-such-host.invalid:6379/0",
            1,
            "error: tee store redis://:***@no-such-host.invalid:6379/0: cannot open: host \"no-such-host.invalid\" does not resolve: ",
        ),
    ];
    for (url, code, line) in cases {
        for args in [
            &["--tee-store", url, "recover", "k"][..],
            &["--tee-store", url, "compress", "--tool", "t"][..],
        ] {
            let out = command(args, b"{}", &[]);
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert_eq!(out.status.code(), Some(code), "{url}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{url}: {stderr}");
            assert!(stderr.starts_with(line), "{url}: {stderr}");
            assert!(!stderr.contains("pw@"), "{stderr}");
        }
    }
}

/// Runs the command in a fresh project with `envs` and `input` on stdin, without the variables
/// that would change what it does.
/// The command in a project of its own (nothing but the store is shared between two runs).
fn command(args: &[&str], input: &[u8], envs: &[(&str, &str)]) -> Output {
    let project = tempfile::tempdir().unwrap();
    support::run_in_with(project.path(), args, input, envs)
}

fn meta(out: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {stderr}"))
}

#[test]
fn compress_on_one_process_and_recover_on_another_give_the_exact_bytes() {
    let server = RedisServer::start(&[]);
    let url = server.url("?prefix=proj:");
    let log = build_log(3);
    let out = command(
        &[
            "--tee-store",
            &url,
            "compress",
            "--tool",
            "shell_cargo_build",
            "--meta",
        ],
        log.as_bytes(),
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta = meta(&out);
    assert_eq!(meta["compression_teed"], true, "{meta}");
    let key = meta["compression_tee_key"].as_str().unwrap();
    let pointed =
        crate::support::pointed(std::str::from_utf8(&out.stdout).unwrap()).expect("a pointer");
    assert_eq!(pointed.key, key);

    let out = command(&["--tee-store", &url, "recover", key], b"", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, log.as_bytes());
    let out = command(
        &["--tee-store", &url, "recover", key, "--lines", "42"],
        b"",
        &[],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("error[E0308]"));

    let out = command(&["--tee-store", &url, "store"], b"", &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!(
            "store:     {url}\nentries:   1\nbytes:     {}",
            log.len()
        )),
        "{text}"
    );
    assert!(
        text.ends_with("retention: ttl 7d, max_bytes Redis maxmemory, prefix \"proj:\"\n"),
        "{text}"
    );

    // Another prefix is another store.
    let out = command(&["--tee-store", &server.url(""), "recover", key], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn with_redis_stopped_compress_sends_the_input_unchanged_within_the_put_deadline() {
    let mut server = RedisServer::start(&[]);
    let log = build_log(4);
    let args = |url: &str| -> Vec<String> {
        [
            "--tee-store",
            url,
            "compress",
            "--tool",
            "shell_cargo_build",
            "--meta",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    // Paused: connections are accepted, nothing answers; each wait is 200 ms.
    let url = server.url("?timeout_ms=200&connect_timeout_ms=200");
    let timed = || {
        let started = Instant::now();
        let out = command(
            &args(&url).iter().map(String::as_str).collect::<Vec<_>>(),
            log.as_bytes(),
            &[],
        );
        (out, started.elapsed())
    };
    server.pause();
    let (out, paused) = timed();
    server.resume();
    server.kill();
    let (out_stopped, stopped) = timed();
    for (out, took) in [(out, paused), (out_stopped, stopped)] {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, log.as_bytes());
        let meta = meta(&out);
        assert_eq!(meta["compression_skipped"], "tee_failed", "{meta}");
        assert_eq!(meta["compression_teed"], false);
        // The codec and a process start take a fraction of this; the store's waits add at
        // most a connect and a request (200 ms each) at open and again at the put.
        assert!(took < Duration::from_secs(5), "{took:?}");
    }
    assert!(
        paused < stopped + Duration::from_millis(1500),
        "paused {paused:?}, stopped {stopped:?}"
    );
}
