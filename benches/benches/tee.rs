//! The cost of keeping an original: put and get of 1 KB and 1 MB originals in the memory store,
//! in the SQLite store (a file in a temporary directory, WAL, `synchronous = NORMAL`) and in the
//! Redis store (a `redis-server` this benchmark starts on a loopback port, no persistence).
//!
//! The SQLite store keeps 200 entries, so the puts measure the steady state, where each put
//! also deletes the oldest entry; Redis is given 256 MiB under `volatile-ttl`, the policy the
//! README recommends, so that its puts reach the same steady state. Without `redis-server` on
//! `PATH` the Redis rows are left out, with a line saying so.
//!
//! `cargo bench -p parrot-benches --bench tee`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use parrot_host::{MemoryTeeStore, Retention, TeeStore};
use parrot_tee_redis::RedisTeeStore;
use parrot_tee_sqlite::SqliteTeeStore;

mod support;
use support::RedisServer;

const SIZES: [(&str, usize); 2] = [("1KB", 1024), ("1MB", 1024 * 1024)];

/// Bytes that do not compress, as a tool's binary-ish output would not.
fn original(len: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

fn tee(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let retention = Retention {
        max_entries: Some(200),
        max_bytes: None,
        max_age: None,
    };
    let mut stores: Vec<(&str, Box<dyn TeeStore>)> = vec![
        ("memory", Box::new(MemoryTeeStore::new(200))),
        (
            "sqlite",
            Box::new(SqliteTeeStore::open(dir.path().join("tee.sqlite"), retention).expect("open")),
        ),
    ];
    let redis = RedisServer::start(dir.path(), "tee");
    if let Some(server) = &redis {
        // The bench measures a put, not the store's deadline: the default 25 ms (a call's
        // budget on a LAN) failed a 1 MB put on a 2-core machine that was also building.
        let url = format!(
            "redis://127.0.0.1:{}/0?prefix=bench:&timeout_ms=2000",
            server.port
        );
        stores.push(("redis", Box::new(RedisTeeStore::open(&url).expect("open"))));
    }
    let mut group = c.benchmark_group("tee");
    if std::env::var_os("PARROT_BENCH_QUICK").is_some() {
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(500));
    } else {
        group
            .sample_size(30)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
    }
    for (size_name, len) in SIZES {
        let original = original(len);
        group.throughput(Throughput::Bytes(len as u64));
        for (store_name, store) in &stores {
            let mut n = 0u64;
            group.bench_function(
                BenchmarkId::new(format!("put/{store_name}"), size_name),
                |b| {
                    b.iter(|| {
                        n += 1;
                        store
                            .put(
                                &format!("__tee__:bench:{size_name}:{n}"),
                                black_box(&original),
                            )
                            .expect("put")
                    })
                },
            );
            let key = format!("__tee__:bench:{size_name}:{n}");
            group.bench_function(
                BenchmarkId::new(format!("get/{store_name}"), size_name),
                |b| b.iter(|| store.get(black_box(&key)).expect("get").expect("stored")),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, tee);
criterion_main!(benches);
