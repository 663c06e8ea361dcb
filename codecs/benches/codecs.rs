//! Each codec, text in → text out, against two yardsticks measured in the same run on the same
//! bytes: a validating scan that allocates nothing (serde_json into `serde::de::IgnoredAny`),
//! and a serde_json `Value` parse + serialize (what a codec built on an owned tree would pay at
//! least).
//!
//! Payloads: the benchmark corpus (`parrot-bench-corpus`): generated rows of 10 KB to 10 MB, the
//! JSON files of `corpus/`, and the registry payloads when fetched (the 17 MB `cities` is left
//! out here: the 10 MB rows already cover that size).
//!
//! ```text
//! cargo bench -p parrot-codecs                 # everything
//! cargo bench -p parrot-codecs -- rows_1MB     # one payload
//! ```
//!
//! Target: each codec at most 2x the scan on the 1 MB row payload, judged on interleaved
//! ratios (see [`interleaved`]). `cargo xtask bench` puts the table into docs/BENCHMARKS.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use parrot_codec_api::{Codec, Level, Params, Payload};
use parrot_codecs::{Columnar, JsonCompact, JsonNested, Toon};

use parrot_bench_corpus as corpus;

fn bench(c: &mut Criterion) {
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let compact: JsonCompact = parrot_codec_api::build(Params::empty()).expect("defaults");
    let columnar: Columnar = parrot_codec_api::build(Params::empty()).expect("defaults");
    let toon: Toon = parrot_codec_api::build(Params::empty()).expect("defaults");
    let nested: JsonNested = parrot_codec_api::build(Params::empty()).expect("defaults");
    for item in corpus::all()
        .into_iter()
        .filter(|item| item.text.len() < 12 << 20)
    {
        let text = item.text;
        let mut group = c.benchmark_group(format!("codecs.{}", item.name));
        group.throughput(Throughput::Bytes(text.len() as u64));
        let large = text.len() >= 1_000_000;
        let (warm_up, measure, samples) = match (quick, large) {
            (true, _) => (0.2, 0.5, 10),
            (false, true) => (0.5, 4.0, 10),
            (false, false) => (0.3, 1.0, 40),
        };
        group
            .warm_up_time(Duration::from_secs_f64(warm_up))
            .measurement_time(Duration::from_secs_f64(measure))
            .sample_size(samples);
        if large {
            // The same number of iterations in every sample: the linear default would run
            // the 10 MB Value round trip hundreds of times.
            group.sampling_mode(SamplingMode::Flat);
        }
        group.bench_function("scan", |b| {
            b.iter(|| serde_json::from_str::<serde::de::IgnoredAny>(black_box(&text)).is_ok())
        });
        group.bench_function("check", |b| b.iter(|| parrot_json::check(black_box(&text))));
        group.bench_function("value", |b| {
            b.iter(|| {
                let value: serde_json::Value =
                    serde_json::from_str(black_box(&text)).expect("JSON");
                serde_json::to_string(&value).expect("serializable")
            })
        });
        for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
            group.bench_function(format!("json_compact/{level}"), |b| {
                b.iter(|| compact.compress(Payload::json(black_box(&text)), level))
            });
            group.bench_function(format!("columnar/{level}"), |b| {
                b.iter(|| columnar.compress(Payload::json(black_box(&text)), level))
            });
        }
        group.bench_function("toon/minimal", |b| {
            b.iter(|| toon.compress(Payload::json(black_box(&text)), Level::Minimal))
        });
        group.bench_function("json_nested/minimal", |b| {
            b.iter(|| nested.compress(Payload::json(black_box(&text)), Level::Minimal))
        });
        group.finish();
        if item.name == "rows_1MB" {
            interleaved(
                &text,
                &compact,
                &columnar,
                &toon,
                &nested,
                if quick { 11 } else { 41 },
            );
        }
    }
}

/// The target's payload again, each codec's ratio to the scan as the median of `rounds` ratios,
/// each a call timed right after a scan of the same bytes: criterion measures one function
/// after another for seconds each, and a load that drifts between them shows as a difference
/// between codecs. Printed, and written to `codecs-interleaved.txt` (`COLUMN MEDIAN` lines) in
/// the report folder, where `cargo xtask bench` judges the target on it.
fn interleaved(
    text: &str,
    compact: &JsonCompact,
    columnar: &Columnar,
    toon: &Toon,
    nested: &JsonNested,
    rounds: usize,
) {
    let scan = || {
        let started = Instant::now();
        black_box(serde_json::from_str::<serde::de::IgnoredAny>(black_box(text)).is_ok());
        started.elapsed().as_secs_f64()
    };
    let timed = |run: &dyn Fn()| {
        let started = Instant::now();
        run();
        started.elapsed().as_secs_f64()
    };
    let mut runs: Vec<(String, Box<dyn Fn() + '_>)> = Vec::new();
    for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
        runs.push((
            format!("json_compact/{level}"),
            Box::new(move || drop(black_box(compact.compress(Payload::json(text), level)))),
        ));
        runs.push((
            format!("columnar/{level}"),
            Box::new(move || drop(black_box(columnar.compress(Payload::json(text), level)))),
        ));
    }
    runs.push((
        "toon/minimal".to_owned(),
        Box::new(|| {
            drop(black_box(
                toon.compress(Payload::json(text), Level::Minimal),
            ))
        }),
    ));
    runs.push((
        "json_nested/minimal".to_owned(),
        Box::new(|| {
            drop(black_box(
                nested.compress(Payload::json(text), Level::Minimal),
            ))
        }),
    ));
    let mut lines = String::new();
    for (column, run) in &runs {
        run();
        let mut ratios: Vec<f64> = (0..rounds)
            .map(|_| {
                let yardstick = scan();
                timed(run.as_ref()) / yardstick
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        let median = ratios[rounds / 2];
        println!("codecs.rows_1MB {column}: interleaved ratio {median:.2}");
        lines.push_str(&format!("{column} {median}\n"));
    }
    if let Some(dir) = corpus::report_dir() {
        let path = dir.join("codecs-interleaved.txt");
        std::fs::write(&path, lines).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
