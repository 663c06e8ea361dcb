//! Calibration of the router's thresholds and budgets: `process` latency (p50, p99) against
//! payload size, per codec and level, on seeded row payloads; and token counting throughput.
//!
//! `cargo bench -p parrot-compress --bench calibration` prints Markdown tables (the README's
//! calibration section is pasted from them). Times are absolute here, so the yardstick of each
//! row is printed beside it: a non-allocating serde_json scan of the same bytes. By default the
//! token counter is a no-op, which isolates the pipeline's cost; `CALIBRATION_TOKENS=1` counts
//! o200k tokens on the background worker, as a host does, to show what that costs the caller
//! on a machine whose cores it shares.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parrot_compress::{Call, Host, Input, Level, MemoryTeeStore, TokenCounter, Tokenizer};

/// Counts nothing: isolates the pipeline's own cost from the background token counting that
/// shares the machine's cores with it.
struct NoTokens;

impl TokenCounter for NoTokens {
    fn name(&self) -> &str {
        "none"
    }

    fn count(&self, _: &str) -> usize {
        0
    }
}

/// A seeded query result of about `bytes` bytes: `{"driver", "rows": [...]}` with a constant
/// column and an all-null column, like the corpus's query result.
fn rows(bytes: usize) -> String {
    let mut out = String::from("{\"driver\":\"pg\",\"rows\":[");
    let mut i = 0u64;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    while out.len() < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"store_id\":\"S{:04}\",\"revenue\":{}.{:02},\"region\":\"south\",\"active\":{},\"notes\":null,\"units\":{}}}",
            i % 10_000,
            1000 + state % 9000,
            state % 100,
            state.is_multiple_of(3),
            state % 500
        ));
        i += 1;
    }
    out.push_str("]}");
    out
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
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".parrot")).expect("project");
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"rows_json\"]\ncodec = \"json_compact\"\n\
         [compressor.\"rows_columnar\"]\ncodec = \"columnar\"\n",
    )
    .expect("manifest");
    let counting_in_background = std::env::var_os("CALIBRATION_TOKENS").is_some();
    let mut builder = Host::builder();
    builder
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::new(16)))
        .inline_at_any_size(true)
        .max_result_chars(0);
    if !counting_in_background {
        builder.tokenizer(Arc::new(NoTokens));
    }
    let host = builder.build().expect("host");

    println!(
        "token counting: {}",
        if counting_in_background {
            "o200k_base on the background worker (CALIBRATION_TOKENS set)"
        } else {
            "off (set CALIBRATION_TOKENS=1 to count on the background worker)"
        }
    );
    println!();
    println!("| payload | codec | level | p50 ms | p99 ms | scan p50 ms | p50 / scan | runs |");
    println!("|---|---|---|---|---|---|---|---|");
    for size in [1 << 10, 10 << 10, 100 << 10, 256 << 10, 1 << 20, 10 << 20] {
        let payload = rows(size);
        let runs = (200 * 1024 * 1024 / size).clamp(5, 2000);
        for (tool, codec) in [("rows_json", "json_compact"), ("rows_columnar", "columnar")] {
            for level in [Level::Minimal, Level::Normal] {
                let mut times = Vec::with_capacity(runs);
                let mut scans = Vec::with_capacity(runs);
                for _ in 0..runs {
                    scans.push(scan(&payload));
                    let started = Instant::now();
                    let out = host.process(Call::new(tool, Input::Text(&payload)).level(level));
                    times.push(started.elapsed());
                    black_box(out);
                }
                host.flush();
                times.sort();
                scans.sort();
                let (p50, p99, scan50) = (
                    percentile(&times, 50.0),
                    percentile(&times, 99.0),
                    percentile(&scans, 50.0),
                );
                println!(
                    "| {} KB | {codec} | {level} | {} | {} | {} | {:.1}x | {runs} |",
                    payload.len() / 1024,
                    ms(p50),
                    ms(p99),
                    ms(scan50),
                    p50.as_secs_f64() / scan50.as_secs_f64()
                );
            }
        }
    }

    println!();
    println!("| tokenizer | payload | MB/s |");
    println!("|---|---|---|");
    let text = rows(4 << 20);
    for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k] {
        tokenizer.count("warm up");
        let started = Instant::now();
        let n = tokenizer.count(black_box(&text));
        let secs = started.elapsed().as_secs_f64();
        black_box(n);
        println!(
            "| {} | 4 MB rows | {:.1} |",
            tokenizer.name(),
            text.len() as f64 / secs / 1e6
        );
    }
}
