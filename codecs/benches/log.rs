//! The `log` codec at `normal` on generated build-and-test logs of 1 MB and 10 MB
//! (`parrot-bench-corpus`, `log_payload`), against a plain line split of the same bytes in the
//! same run (`text.split('\n').count()`: the least any line-based codec must do).
//!
//! ```text
//! cargo bench -p parrot-codecs --bench log
//! ```
//!
//! Criterion measures both; the ratio the target is judged on is the median of interleaved
//! rounds (split, then codec, then the other order), which cancels a drift of the machine's
//! speed between two criterion groups. Target: the codec at most 3x the split. The codec's
//! floor is measured the same way: its first two stages alone (`Log::run_stages`), the line
//! table with the cleaning, then the pattern scan, which every output depends on. Peak memory is
//! measured by the `log_memory` benchmark. `cargo xtask bench` puts both into
//! docs/BENCHMARKS.md ("Log codec").

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
use parrot_codecs::Log;
use parrot_codecs::log::Stage;

use parrot_bench_corpus as corpus;

/// The payloads: name and size in bytes.
const SIZES: [(&str, usize); 2] = [("log_1MB", 1_000_000), ("log_10MB", 10_000_000)];

fn split(text: &str) -> usize {
    text.split('\n').count()
}

fn codec() -> Log {
    parrot_codec_api::build(Params::empty()).expect("the log codec's defaults")
}

/// The median over `rounds` of (`work` time / split time), each round timing both back to
/// back in alternating order; with the median split and work times.
fn interleaved_ratio(text: &str, work: &dyn Fn(), rounds: usize) -> (f64, Duration, Duration) {
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    let run_split = || {
        black_box(split(black_box(text)));
    };
    let mut ratios = Vec::with_capacity(rounds);
    let (mut splits, mut works) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (s, w) = if round % 2 == 0 {
            let s = time(&run_split);
            (s, time(work))
        } else {
            let w = time(work);
            (time(&run_split), w)
        };
        ratios.push(w.as_secs_f64() / s.as_secs_f64());
        splits.push(s);
        works.push(w);
    }
    ratios.sort_by(f64::total_cmp);
    splits.sort();
    works.sort();
    (ratios[rounds / 2], splits[rounds / 2], works[rounds / 2])
}

fn bench(c: &mut Criterion) {
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let codec = codec();
    let mut table = String::from(
        "`cargo bench -p parrot-codecs --bench log`. The `log` codec at `normal` (default \
         params) on a generated build-and-test log (timestamps, UUIDs, ANSI colours, progress \
         redraws, passing tests, a failure every 2,000 lines), against a plain line split of \
         the same bytes (`text.split('\\n').count()`) in the same run. Ratio: the median of \
         interleaved rounds of the two. *floor*: the codec's first two stages alone, timed \
         the same way against the split: the line table with the cleaning of coloured and \
         redrawn lines (*lines*), then also the pattern scan that finds the failure and warning \
         lines (*lines + scan*, SIMD searches: `memchr` and an Aho-Corasick Teddy searcher). \
         Every output depends on both, and neither templates a line yet.\n\n\
         | payload | `split` count | output | split | log | ratio | floor: lines | floor: lines + scan |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let mut worst: f64 = 0.0;
    for (name, size) in SIZES {
        let text = corpus::log_payload(size);
        let out = match codec.compress(Payload::text_only(&text), Level::Normal) {
            Ok(Outcome::Changed { payload, .. }) => format!("{} bytes", payload.len()),
            Ok(Outcome::Unchanged) => "unchanged".to_owned(),
            Err(err) => panic!("{name}: {err}"),
        };
        let mut group = c.benchmark_group(format!("log.{name}"));
        group
            .throughput(Throughput::Bytes(text.len() as u64))
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_secs_f64(if quick { 0.2 } else { 0.5 }))
            .measurement_time(Duration::from_secs_f64(if quick { 0.5 } else { 3.0 }))
            .sample_size(10);
        group.bench_function("split", |b| b.iter(|| split(black_box(&text))));
        group.bench_function("log/normal", |b| {
            b.iter(|| codec.compress(Payload::text_only(black_box(&text)), Level::Normal))
        });
        group.finish();

        let rounds = if quick { 9 } else { 31 };
        let run_codec = || {
            black_box(
                codec
                    .compress(Payload::text_only(black_box(&text)), Level::Normal)
                    .is_ok(),
            );
        };
        let (ratio, split_time, codec_time) = interleaved_ratio(&text, &run_codec, rounds);
        let stage = |stage: Stage| {
            let run = || {
                black_box(codec.run_stages(black_box(&text), stage));
            };
            interleaved_ratio(&text, &run, rounds).0
        };
        let (lines, scan) = (stage(Stage::Lines), stage(Stage::Scan));
        worst = worst.max(ratio);
        table.push_str(&format!(
            "| {name} ({:.1} MB) | {} | {out} | {:.2} ms | {:.2} ms | {ratio:.2}x | {lines:.2}x | \
             {scan:.2}x |\n",
            text.len() as f64 / 1e6,
            split(&text),
            split_time.as_secs_f64() * 1e3,
            codec_time.as_secs_f64() * 1e3,
        ));
    }
    corpus::report("log.md", &table);
    corpus::target(
        "log",
        &[format!(
            "- `log` codec at most 3x a plain line split of the same bytes (1 MB and 10 MB \
             logs, worst): **{}**, {worst:.2}x.",
            if worst <= 3.0 { "met" } else { "missed" }
        )],
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
