//! What every tee store promises, checked on all three (Redis on a real `redis-server`): the
//! exact bytes back, no key overwritten, a put of the same bytes a success that stores nothing
//! new, and all of it under many threads at once. Plus the bound of the stores that count
//! entries.

use std::any::Any;
use std::sync::Arc;
use std::thread;

use parrot_host::{MemoryTeeStore, Namespace, Retention, TeeError, TeeStore, nearest_key};
use parrot_tee_redis::RedisTeeStore;
use parrot_tee_sqlite::SqliteTeeStore;

use crate::redis_server::RedisServer;
use crate::support::noise;

/// A store under test, with what must outlive it (its directory, its server).
type Kept = (Arc<dyn TeeStore>, Option<Box<dyn Any>>);

/// Each store under test.
fn stores(max_entries: usize) -> Vec<Kept> {
    let mut stores = bounded_stores(max_entries);
    let server = RedisServer::start(&[]);
    let redis = RedisTeeStore::open(&server.url("")).unwrap();
    stores.push((Arc::new(redis), Some(Box::new(server))));
    stores
}

/// The stores that keep at most `max_entries` (Redis's bound is its memory, not a count).
fn bounded_stores(max_entries: usize) -> Vec<Kept> {
    let dir = tempfile::tempdir().unwrap();
    let retention = Retention {
        max_entries: Some(max_entries),
        max_bytes: None,
        max_age: None,
    };
    let sqlite = SqliteTeeStore::open(dir.path().join("tee.sqlite"), retention).unwrap();
    vec![
        (Arc::new(MemoryTeeStore::new(max_entries)), None),
        (Arc::new(sqlite), Some(Box::new(dir))),
    ]
}

#[test]
fn round_trip_returns_the_exact_bytes() {
    let all_byte_values: Vec<u8> = (0..=255).collect();
    let cases: [(&str, &str, Vec<u8>); 8] = [
        ("empty", "__tee__:t:e3b0c44298fc", Vec::new()),
        (
            "json",
            "__tee__:sql_select:2d6b2f0a2f6c",
            br#"[{"id":1}]"#.to_vec(),
        ),
        (
            "invalid UTF-8",
            "k:invalid-utf8",
            vec![0xff, 0xfe, 0x80, b'a', 0xc3],
        ),
        ("NUL bytes", "k:nul", b"a\0b\0\0c".to_vec()),
        ("every byte value", "k:bytes", all_byte_values),
        (
            "unicode key",
            "__tee__:outil_é🦜:ffffffffffff",
            b"x".to_vec(),
        ),
        ("4 MB of noise", "k:noise", noise(7, 4 * 1024 * 1024)),
        ("3 MB of zeros", "k:zeros", vec![0; 3 * 1024 * 1024]),
    ];
    for (store, _dir) in stores(100) {
        for (case, key, original) in &cases {
            store.put(key, original).unwrap();
            let back = store.get(key).unwrap();
            assert!(
                back.as_deref() == Some(&original[..]),
                "{}: {case}: got {:?} bytes back for {} stored",
                store.name(),
                back.map(|b| b.len()),
                original.len()
            );
        }
        assert_eq!(store.get("never stored").unwrap(), None, "{}", store.name());
    }
}

#[test]
fn a_key_is_never_overwritten() {
    for (store, _dir) in stores(100) {
        store.put("k", b"first").unwrap();
        let err = store.put("k", b"second").unwrap_err();
        assert!(
            matches!(&err, TeeError::KeyExists { key } if key == "k"),
            "{}: {err}",
            store.name()
        );
        assert_eq!(
            store.get("k").unwrap().as_deref(),
            Some(&b"first"[..]),
            "{}",
            store.name()
        );
    }
}

#[test]
fn a_put_of_the_bytes_a_key_holds_succeeds_and_stores_nothing_new() {
    for (store, _dir) in stores(100) {
        store.put("k", b"same").unwrap();
        store.put("k", b"same").unwrap();
        assert!(
            matches!(store.put("k", b"other"), Err(TeeError::KeyExists { .. })),
            "{}",
            store.name()
        );
        store.put("k", b"same").unwrap();
        assert_eq!(
            store.get("k").unwrap().as_deref(),
            Some(&b"same"[..]),
            "{}",
            store.name()
        );
        // A prefix, a longer original, the empty one: all different bytes.
        for other in [&b"sam"[..], b"same!", b""] {
            assert!(
                store.put("k", other).is_err(),
                "{}: {other:?}",
                store.name()
            );
        }
    }
}

#[test]
fn a_put_of_the_bytes_a_key_holds_makes_it_the_newest() {
    for (store, _dir) in bounded_stores(3) {
        for key in ["k0", "k1", "k2"] {
            store.put(key, key.as_bytes()).unwrap();
        }
        // k0 stored again: k1 is now the oldest, and goes first.
        store.put("k0", b"k0").unwrap();
        store.put("k3", b"k3").unwrap();
        for (key, kept) in [("k0", true), ("k1", false), ("k2", true), ("k3", true)] {
            assert_eq!(
                store.get(key).unwrap().is_some(),
                kept,
                "{}: {key}",
                store.name()
            );
        }
    }
}

#[test]
fn racing_puts_of_the_same_bytes_all_succeed() {
    for (store, _dir) in stores(100) {
        thread::scope(|scope| {
            for _ in 0..8 {
                let store = &store;
                scope.spawn(move || {
                    for _ in 0..50 {
                        store.put("shared", &noise(3, 5000)).unwrap();
                    }
                });
            }
        });
        assert_eq!(
            store.get("shared").unwrap(),
            Some(noise(3, 5000)),
            "{}",
            store.name()
        );
    }
}

#[test]
fn racing_puts_of_one_key_store_exactly_one() {
    for (store, _dir) in stores(100) {
        let winners: Vec<Vec<u8>> = thread::scope(|scope| {
            let handles: Vec<_> = (0..8u8)
                .map(|t| {
                    let store = &store;
                    scope.spawn(move || {
                        let original = vec![t; 1000];
                        match store.put("contested", &original) {
                            Ok(()) => Some(original),
                            Err(TeeError::KeyExists { .. }) => None,
                            Err(err) => panic!("{err}"),
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        assert_eq!(winners.len(), 1, "{}", store.name());
        assert_eq!(
            store.get("contested").unwrap(),
            Some(winners[0].clone()),
            "{}",
            store.name()
        );
    }
}

#[test]
fn eight_threads_of_a_thousand_puts_all_recover() {
    const THREADS: u64 = 8;
    const PUTS: u64 = 1000;
    for (store, _dir) in stores((THREADS * PUTS) as usize) {
        thread::scope(|scope| {
            for t in 0..THREADS {
                let store = &store;
                scope.spawn(move || {
                    for n in 0..PUTS {
                        let seed = t * PUTS + n;
                        store
                            .put(&format!("__tee__:tool{t}:{n:012x}"), &noise(seed, 200))
                            .unwrap();
                    }
                });
            }
        });
        for t in 0..THREADS {
            for n in 0..PUTS {
                let key = format!("__tee__:tool{t}:{n:012x}");
                assert_eq!(
                    store.get(&key).unwrap(),
                    Some(noise(t * PUTS + n, 200)),
                    "{}: {key}",
                    store.name()
                );
            }
        }
    }
}

#[test]
fn memory_store_evicts_the_oldest_first() {
    let store = MemoryTeeStore::new(3);
    for n in 0..5u64 {
        store.put(&format!("k{n}"), &noise(n, 10)).unwrap();
    }
    for (key, expected) in [
        ("k0", None),
        ("k1", None),
        ("k2", Some(noise(2, 10))),
        ("k3", Some(noise(3, 10))),
        ("k4", Some(noise(4, 10))),
    ] {
        assert_eq!(store.get(key).unwrap(), expected, "{key}");
    }
}

#[test]
fn memory_store_stays_bounded_under_concurrency() {
    let store = MemoryTeeStore::new(100);
    thread::scope(|scope| {
        for t in 0..8 {
            let store = &store;
            scope.spawn(move || {
                for n in 0..1000 {
                    store.put(&format!("t{t}:{n}"), b"x").unwrap();
                }
            });
        }
    });
    let retained: Vec<(usize, usize)> = (0..8)
        .flat_map(|t| (0..1000).map(move |n| (t, n)))
        .filter(|(t, n)| store.get(&format!("t{t}:{n}")).unwrap().is_some())
        .collect();
    assert_eq!(retained.len(), 100);
    // Within one thread the puts are ordered, so what a thread kept is its newest puts.
    for t in 0..8 {
        let kept: Vec<usize> = retained
            .iter()
            .filter(|(rt, _)| *rt == t)
            .map(|(_, n)| *n)
            .collect();
        let newest: Vec<usize> = (1000 - kept.len()..1000).collect();
        assert_eq!(kept, newest, "thread {t}");
    }
}

#[test]
fn names_say_where_the_originals_are() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tee.sqlite");
    let sqlite = SqliteTeeStore::open(&file, Retention::default()).unwrap();
    assert_eq!(sqlite.name(), file.display().to_string());
    assert_eq!(MemoryTeeStore::default().name(), "memory");
    let server = RedisServer::start(&["--requirepass", "secret"]);
    let url = server
        .url("?prefix=p:")
        .replace("redis://", "redis://:secret@");
    let redis = RedisTeeStore::open(&url).unwrap();
    assert_eq!(redis.name(), url.replace(":secret@", ":***@"));
}

/// Each store lists the keys it holds, exactly and only those (not what retention removed, not
/// another prefix's on the same Redis), and a key copied with a slip finds the one meant in
/// each, in its namespace.
#[test]
fn every_store_lists_the_keys_it_holds_and_the_nearest_is_suggested() {
    let held = [
        "__tee__:sql_select:a615eeaee21d",
        "__tee__:shell_cargo_build:0123456789ab",
        "__tee__:outil_é🦜:ffffffffffff",
    ];
    let team = Namespace::new("team-a").unwrap();
    let scoped = team.scoped_key("__tee__:grep:00aa11bb22cc");
    let server = RedisServer::start(&[]);
    RedisTeeStore::open(&server.url("?prefix=other:"))
        .unwrap()
        .put("__tee__:sql_select:a615eeaee21c", b"another prefix's")
        .unwrap();
    let mut stores = bounded_stores(4);
    let redis = RedisTeeStore::open(&server.url("?prefix=mine:")).unwrap();
    stores.push((Arc::new(redis), None));
    for (store, _dir) in stores {
        store.put("__tee__:t:evicted00000", b"first in").unwrap();
        for key in held {
            store.put(key, key.as_bytes()).unwrap();
        }
        store.put(&scoped, b"scoped").unwrap();
        let mut keys = store.keys().unwrap().expect("the store lists its keys");
        keys.sort();
        let mut expected: Vec<String> = held.iter().map(|k| k.to_string()).collect();
        expected.push(scoped.clone());
        if store.name().starts_with("redis://") {
            // Redis's bound is its memory, not a count: the first key is still there.
            expected.push("__tee__:t:evicted00000".to_owned());
        }
        expected.sort();
        assert_eq!(keys, expected, "{}", store.name());

        let slip = "__tee__:sql_select:a615eeaee21";
        assert_eq!(
            nearest_key(store.as_ref(), None, slip).as_deref(),
            Some(held[0]),
            "{}",
            store.name()
        );
        assert_eq!(
            nearest_key(store.as_ref(), Some(&team), "__tee__:grep:00aa11bb22").as_deref(),
            Some("__tee__:grep:00aa11bb22cc"),
            "{}",
            store.name()
        );
        assert_eq!(
            nearest_key(store.as_ref(), None, "__tee__:grep:00aa11bb22"),
            None,
            "{}: a namespace's key is not offered outside it",
            store.name()
        );
    }
}
