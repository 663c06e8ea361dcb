//! Calibration of the router's thresholds and budgets: `process` latency (p50, p99) against
//! payload size, per codec and level, on seeded row payloads; and token counting throughput.
//!
//! `cargo bench -p parrot-benches --bench calibration` prints Markdown tables (`cargo xtask
//! bench` puts them into docs/BENCHMARKS.md; the README's budgets are derived from them). Each
//! row interleaves its yardstick with the calls — a non-allocating serde_json scan of the same
//! bytes, run just before each call — and gives the median of the calls' ratios to it. `process` runs with no tee store, a memory store, a SQLite
//! store and a Redis store (a `redis-server` the benchmark starts on a loopback port; left out,
//! with a line saying so, without `redis-server` on `PATH`). The stage's decisions count o200k tokens as a host's do (the no-gain rule's gauge,
//! on the caller's path), and the savings report counts every call on its background worker,
//! as a host does by default. `CALIBRATION_TOKENS` says how that worker runs beside the calls:
//!
//! - unset (`between`): each call's count finishes before the next call (`Host::flush`,
//!   untimed, after each call), so a cell is the caller's cost with counting on (the worker's
//!   copies of the input and the output included), as when calls come at an agent's pace;
//! - `back-to-back`: the calls follow each other with no pause, and the worker, which counts
//!   about 6x slower than the scan per byte, never catches up: it shares the machine with the
//!   caller and the scan for the whole row;
//! - `off`: no counting for the report (`HostBuilder::report_tokens(false)`).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::fmt::Write as _;

use parrot_host::{
    Call, Host, Input, Level, MemoryTeeStore, Retention, TeeStore, TokenCounter as _, Tokenizer,
};
use parrot_tee_redis::RedisTeeStore;
use parrot_tee_sqlite::SqliteTeeStore;

mod support;
use support::RedisServer;

use parrot_bench_corpus as corpus;

/// How the savings report's counting runs beside the calls: see the module docs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counting {
    Between,
    BackToBack,
    Off,
}

fn scan(text: &str) -> Duration {
    let started = Instant::now();
    let _: serde::de::IgnoredAny = serde_json::from_str(black_box(text)).expect("valid JSON");
    started.elapsed()
}

fn percentile(sorted: &[Duration], pct: f64) -> Duration {
    let rank = ((pct / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".parrot")).expect("project");
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"rows_json\"]\ncodec = \"json_compact\"\n\
         [compressor.\"rows_columnar\"]\ncodec = \"columnar\"\n",
    )
    .expect("manifest");
    let counting = match std::env::var("CALIBRATION_TOKENS").as_deref() {
        Err(std::env::VarError::NotPresent) | Ok("between") => Counting::Between,
        Ok("back-to-back") => Counting::BackToBack,
        Ok("off") => Counting::Off,
        other => {
            eprintln!("CALIBRATION_TOKENS: expected between, back-to-back or off, got {other:?}");
            std::process::exit(2);
        }
    };
    let retention = Retention {
        max_entries: Some(64),
        max_bytes: None,
        max_age: None,
    };
    let mut stores: Vec<(&str, Option<Arc<dyn TeeStore>>)> = vec![
        ("no store", None),
        ("memory", Some(Arc::new(MemoryTeeStore::new(64)))),
        (
            "SQLite",
            Some(Arc::new(
                SqliteTeeStore::open(dir.path().join("tee.db"), retention).expect("store"),
            )),
        ),
    ];
    let redis = RedisServer::start(dir.path(), "calibration");
    if let Some(server) = &redis {
        let url = format!("redis://127.0.0.1:{}/0?prefix=calibration:", server.port);
        let store = RedisTeeStore::open(&url).expect("the Redis store");
        stores.push(("Redis", Some(Arc::new(store))));
    }
    let hosts: Vec<(&str, Host)> = stores
        .iter()
        .map(|(name, store)| {
            let mut builder = Host::builder();
            builder
                .project(dir.path())
                .plugin_path(None)
                .inline_at_any_size(true)
                .max_result_chars(0);
            if let Some(store) = store {
                builder.tee_store(Arc::clone(store));
            }
            builder.report_tokens(counting != Counting::Off);
            (*name, builder.build().expect("host"))
        })
        .collect();

    let mut table = format!(
        "`cargo bench -p parrot-benches --bench calibration`. Seeded row payloads shaped like \
         a query result (`{{\"driver\", \"rows\": [...]}}`, a constant column, an all-null \
         column); `Host::process`, inline at any size, no last-resort cut, token counting {}. \
         Each cell is the p50 of the calls and the median of their ratios to the yardstick, \
         a non-allocating serde_json scan of the same bytes run just before each call (a \
         machine whose load drifts during a row moves both sides of a ratio); *scan p50* is \
         the yardstick's p50 over the row. Without a \
         tee store `normal` is capped to `minimal` (nothing lossy may go out without its \
         original kept), so that column measures `minimal` there; with a store, `columnar` at \
         `normal` is lossy and its call includes the store's put (Redis: a `redis-server` on \
         a loopback port, no persistence).\n\n\
         | payload | codec | level | scan p50 | no store | memory store | SQLite store |{} p99 \
         (memory) | runs |\n\
         |---|---|---|---|---|---|---|{}---|---|\n",
        match counting {
            Counting::Between => {
                "o200k for the no-gain rule's decisions, and for the report on its background \
                 worker, each call's count finished (untimed) before the next call"
            }
            Counting::BackToBack => {
                "o200k for the no-gain rule's decisions, and for the report on its background \
                 worker with the calls back to back (`CALIBRATION_TOKENS=back-to-back`)"
            }
            Counting::Off => {
                "o200k for the no-gain rule's decisions, off for the report \
                 (`CALIBRATION_TOKENS=off`)"
            }
        },
        if redis.is_some() {
            " Redis store |"
        } else {
            ""
        },
        if redis.is_some() { "---|" } else { "" },
    );
    let volume: usize = if quick { 20 << 20 } else { 100 << 20 };
    // The cells the targets are judged on: (payload size, codec, level, store) → ratio.
    let mut judged: Vec<(usize, &str, Level, &str, f64)> = Vec::new();
    for size in [1 << 10, 10 << 10, 100 << 10, 1 << 20, 10 << 20] {
        let payload = corpus::query_rows(size, usize::MAX);
        let runs = (volume / size).clamp(5, 2000);
        for (tool, codec) in [("rows_json", "json_compact"), ("rows_columnar", "columnar")] {
            for level in [Level::Minimal, Level::Normal] {
                let mut scans = Vec::with_capacity(runs * hosts.len());
                let mut cells = Vec::new();
                let mut p99_memory = Duration::ZERO;
                for (store, host) in &hosts {
                    let mut times = Vec::with_capacity(runs);
                    let mut ratios = Vec::with_capacity(runs);
                    for _ in 0..runs {
                        let yardstick = scan(&payload);
                        scans.push(yardstick);
                        let started = Instant::now();
                        let out = host.process(Call::new(tool, Input::Text(&payload)).level(level));
                        let took = started.elapsed();
                        times.push(took);
                        ratios.push(took.as_secs_f64() / yardstick.as_secs_f64());
                        black_box(out);
                        if counting == Counting::Between {
                            host.flush();
                        }
                    }
                    host.flush();
                    times.sort();
                    ratios.sort_by(f64::total_cmp);
                    if *store == "memory" {
                        p99_memory = percentile(&times, 99.0);
                    }
                    cells.push((percentile(&times, 50.0), ratios[ratios.len() / 2]));
                }
                scans.sort();
                let scan50 = percentile(&scans, 50.0);
                let _ = write!(
                    table,
                    "| {} KB | {codec} | {level} | {} ms |",
                    payload.len() / 1024,
                    ms(scan50)
                );
                for ((store, _), (cell, ratio)) in hosts.iter().zip(cells) {
                    let _ = write!(table, " {} ms ({ratio:.1}x) |", ms(cell));
                    judged.push((size, codec, level, store, ratio));
                }
                let _ = writeln!(table, " {} ms | {runs} |", ms(p99_memory));
            }
        }
    }
    corpus::report("process.md", &table);
    // json_compact at minimal and columnar at normal, at 1 MB and 10 MB: with no store (where
    // normal runs as minimal) and with the SQLite store.
    let target = |store: &str, bound: f64| {
        let cells: Vec<(usize, &str, Level, f64)> = judged
            .iter()
            .filter(|&&(size, codec, level, s, _)| {
                size >= 1 << 20
                    && s == store
                    && matches!(
                        (codec, level),
                        ("json_compact", Level::Minimal) | ("columnar", Level::Normal)
                    )
            })
            .map(|&(size, codec, level, _, ratio)| (size, codec, level, ratio))
            .collect();
        let worst = cells.iter().map(|cell| cell.3).fold(0.0, f64::max);
        let listed: Vec<String> = cells
            .iter()
            .map(|(size, codec, level, ratio)| {
                format!("{codec}/{level} {} MB {ratio:.1}x", size >> 20)
            })
            .collect();
        format!(
            "- `process`, {store}, {}, json_compact/minimal and columnar/normal at 1 MB and \
             10 MB ≤ {bound:.1}x the scan (median ratios): **{}**, worst {worst:.1}x ({}).",
            match counting {
                Counting::Between => "the report's counting on its worker",
                Counting::BackToBack => "the report's counting on its worker, calls back to back",
                Counting::Off => "the report's counting off",
            },
            if worst <= bound { "met" } else { "missed" },
            listed.join(", ")
        )
    };
    corpus::target("process", &[target("no store", 2.0), target("SQLite", 2.5)]);

    let mut counting = String::from(
        "Token counting (parrot-bpe, vocabularies built into the binary), on 4 MB of the same rows, against the \
         non-allocating scan of the same bytes:\n\n\
         | tokenizer | MB/s | ms per MB | × scan |\n|---|---|---|---|\n",
    );
    let text = corpus::query_rows(4 << 20, usize::MAX);
    let scan_time = (0..5).map(|_| scan(&text)).min().expect("runs");
    for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k] {
        tokenizer.count("warm up");
        let started = Instant::now();
        let n = tokenizer.count(black_box(&text));
        let secs = started.elapsed().as_secs_f64();
        black_box(n);
        let mb = text.len() as f64 / 1e6;
        let _ = writeln!(
            counting,
            "| {} | {:.1} | {:.1} | {:.0}x |",
            tokenizer.name(),
            mb / secs,
            secs * 1e3 / mb,
            secs / scan_time.as_secs_f64()
        );
    }
    corpus::report("token-counting.md", &counting);
}
