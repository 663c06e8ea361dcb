//! parrot-bpe against the reference implementation (bpe-openai): the first count in a fresh
//! process, and counting speed.
//!
//! ```text
//! cargo bench -p parrot-bpe --bench tokenizer
//! ```
//!
//! - *first count*: a process (this binary run again) counts one short text and reports how
//!   long that took; for bpe-openai that includes deserialising its tables, for parrot-bpe
//!   there is nothing to load. Median of the rounds, each round running both in turn.
//! - *speed*: counting 4 MB of the benchmarks' query rows and the 1 MB corpus build log, best
//!   of five, against the non-allocating serde_json scan of the rows (the workspace's
//!   yardstick; the log is not JSON, so its ratio is against the rows' scan per byte).
//!
//! `cargo xtask bench` puts the table into docs/BENCHMARKS.md ("Token counting").

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use parrot_bench_corpus as corpus;

/// One counter: ours, or the reference, for one vocabulary.
#[derive(Clone, Copy)]
enum Counter {
    Ours(&'static parrot_bpe::Encoding),
    Reference(fn() -> &'static bpe_openai::Tokenizer),
}

impl Counter {
    fn count(self, text: &str) -> usize {
        match self {
            Counter::Ours(encoding) => encoding.count(text),
            Counter::Reference(tokenizer) => tokenizer().count(text),
        }
    }
}

const COUNTERS: [(&str, &str, Counter); 4] = [
    (
        "o200k_base",
        "parrot-bpe",
        Counter::Ours(&parrot_bpe::O200K_BASE),
    ),
    (
        "o200k_base",
        "bpe-openai",
        Counter::Reference(bpe_openai::o200k_base),
    ),
    (
        "cl100k_base",
        "parrot-bpe",
        Counter::Ours(&parrot_bpe::CL100K_BASE),
    ),
    (
        "cl100k_base",
        "bpe-openai",
        Counter::Reference(bpe_openai::cl100k_base),
    ),
];

fn main() {
    if let Some(which) = std::env::var_os("PARROT_BENCH_FIRST_COUNT") {
        let index: usize = which
            .to_str()
            .and_then(|s| s.parse().ok())
            .expect("an index");
        let started = Instant::now();
        black_box(COUNTERS[index].2.count(black_box("a text with tokens")));
        println!("{}", started.elapsed().as_nanos());
        return;
    }
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let rounds = if quick { 3 } else { 11 };
    let me = std::env::current_exe().expect("this benchmark's binary");
    let mut first: Vec<Vec<Duration>> = vec![Vec::new(); COUNTERS.len()];
    for _ in 0..rounds {
        for (index, times) in first.iter_mut().enumerate() {
            let out = Command::new(&me)
                .env("PARROT_BENCH_FIRST_COUNT", index.to_string())
                .output()
                .expect("the benchmark runs itself");
            let nanos: u64 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .expect("the child prints nanoseconds");
            times.push(Duration::from_nanos(nanos));
        }
    }

    let rows = corpus::query_rows(4 << 20, usize::MAX);
    let log_path = corpus::workspace_root().join("corpus/build-log.txt");
    let log = std::fs::read_to_string(&log_path).expect("corpus/build-log.txt");
    let scan = best(|| {
        let _: serde::de::IgnoredAny = serde_json::from_str(black_box(&rows)).expect("JSON");
    });
    let scan_per_byte = scan.as_secs_f64() / rows.len() as f64;

    let mut table = String::from(
        "Token counting in `parrot-bpe` (the host's tokenizer: vocabularies laid out in the \
         binary at build time) against `bpe-openai` (tables deserialised on the first count), \
         `cargo bench -p parrot-bpe --bench tokenizer`. *First count*: a fresh process counting \
         one short text, median of the rounds. *MB/s*: best of five; *× scan*: against the \
         non-allocating serde_json scan of the rows, per byte. The counts are the same (the \
         crate's tests compare them).\n\n\
         | tokenizer | implementation | first count | rows MB/s | × scan | build log MB/s | × scan |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for ((vocabulary, implementation, counter), times) in COUNTERS.iter().zip(&mut first) {
        times.sort();
        let first_count = times[times.len() / 2];
        counter.count("warm up");
        let on_rows = best(|| {
            black_box(counter.count(black_box(&rows)));
        });
        let on_log = best(|| {
            black_box(counter.count(black_box(&log)));
        });
        let mbs = |time: Duration, bytes: usize| bytes as f64 / 1e6 / time.as_secs_f64();
        let ratio =
            |time: Duration, bytes: usize| time.as_secs_f64() / (scan_per_byte * bytes as f64);
        table.push_str(&format!(
            "| {vocabulary} | {implementation} | {:.2} ms | {:.1} | {:.0}x | {:.1} | {:.0}x |\n",
            first_count.as_secs_f64() * 1e3,
            mbs(on_rows, rows.len()),
            ratio(on_rows, rows.len()),
            mbs(on_log, log.len()),
            ratio(on_log, log.len()),
        ));
    }
    corpus::report("tokenizer.md", &table);
}

fn best(mut run: impl FnMut()) -> Duration {
    (0..5)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .min()
        .expect("five runs")
}
