//! The cost of keeping an original: put and get of 1 KB and 1 MB originals in the memory store,
//! in the SQLite store (a file in a temporary directory, WAL, `synchronous = NORMAL`) and in the
//! Redis store (a `redis-server` this benchmark starts on a loopback port, no persistence).
//!
//! The SQLite store keeps 200 entries, so the puts measure the steady state, where each put
//! also deletes the oldest entry; Redis is given 256 MiB under `volatile-ttl`, the policy the
//! README recommends, so that its puts reach the same steady state. Without `redis-server` on
//! `PATH` the Redis rows are left out, with a line saying so.
//!
//! `cargo bench -p parrot-host --bench tee`

use std::hint::black_box;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use parrot_host::{MemoryTeeStore, RedisTeeStore, Retention, SqliteTeeStore, TeeStore};

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

/// A `redis-server` on a free loopback port, killed when dropped.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    /// Starts one in `dir`; `None`, with a line saying why, when there is no `redis-server`.
    fn start(dir: &std::path::Path) -> Option<RedisServer> {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
            .arg(dir)
            .args(["--save", "", "--appendonly", "no"])
            .args(["--maxmemory", "256mb", "--maxmemory-policy", "volatile-ttl"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(err) => {
                eprintln!(
                    "tee: the Redis store is left out: cannot start redis-server ({err}); \
                     install it (Debian: apt-get install redis-server)"
                );
                return None;
            }
        };
        let mut server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline || server.child.try_wait().ok().flatten().is_some() {
                eprintln!("tee: the Redis store is left out: redis-server did not start");
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Listening means ready: a server with no data to load takes commands at once.
        Some(server)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    let redis = RedisServer::start(dir.path());
    if let Some(server) = &redis {
        let url = format!("redis://127.0.0.1:{}/0?prefix=bench:", server.port);
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
