//! The `log` codec at `normal` on generated build-and-test logs of 1 MB and 10 MB
//! (`parrot-bench-corpus`, `log_payload`), against a plain line split of the same bytes in the
//! same run (`text.split('\n').count()`: the least any line-based codec must do), against its
//! own floor, and side by side with Headroom's log compressor.
//!
//! ```text
//! cargo bench -p parrot-codecs --bench log
//! ```
//!
//! Criterion measures the split and the codec; the ratios the targets are judged on are medians
//! of interleaved rounds (split, then codec, then the other order), which cancel a drift of the
//! machine's speed between two criterion groups. The codec's floor is its first two stages
//! alone (`Log::run_stages`), the line table with the cleaning, then the pattern scan, which
//! every output depends on, timed the same way against the split. Targets: the codec at most 2x
//! its floor (its ratio to the split over the floor's), and at least 50x faster than Headroom's
//! `compress()` on the same logs, passed as one tool message, offline (see `headroom/`: a venv
//! the benchmark makes with the pinned `headroom-ai`, the median of calls each after Headroom's
//! caches are cleared). Where Headroom cannot be installed or run, the table and the target say
//! "not measured" and why. The passing logs (the same lines without failures and warnings),
//! on which every line is templated, are measured against their floor the same way and shown
//! beside the target. Peak memory is measured by the `log_memory` benchmark. `cargo xtask
//! bench` puts both into docs/BENCHMARKS.md ("Log codec").

mod headroom;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
use parrot_codecs::Log;
use parrot_codecs::log::Stage;

use parrot_bench_corpus as corpus;

use headroom::{Headroom, Measured};

/// The payloads: name, size in bytes, and how many timed calls Headroom gets (full, quick).
const SIZES: [(&str, usize, [usize; 2]); 2] = [
    ("log_1MB", 1_000_000, [5, 3]),
    ("log_10MB", 10_000_000, [3, 1]),
];

/// The passing logs (`passing_log_payload`: no failure, no warning), on which the budget keeps
/// noise folds, so every line is templated: measured the same way, shown beside the target.
const PASSING: [(&str, usize); 2] = [("passing_1MB", 1_000_000), ("passing_10MB", 10_000_000)];

/// The most the codec may take over its floor, and the least Headroom's time over the codec's.
const FLOOR_BOUND: f64 = 2.0;
const HEADROOM_BOUND: f64 = 50.0;

fn codec() -> Log {
    parrot_codec_api::build(Params::empty()).expect("the log codec's defaults")
}

/// One payload's measurements of the codec.
struct Row {
    name: &'static str,
    text: String,
    /// The codec's output in bytes (`None`: it left the payload unchanged).
    output: Option<usize>,
    split_time: Duration,
    codec_time: Duration,
    /// The codec's time over the split's, then the two stages' (lines; lines + scan).
    ratio: f64,
    lines: f64,
    scan: f64,
}

impl Row {
    /// The codec's time over its floor's (lines + scan), both as ratios to the same split.
    fn over_floor(&self) -> f64 {
        self.ratio / self.scan
    }

    fn output_cell(&self) -> String {
        self.output
            .map_or_else(|| "unchanged".to_owned(), |n| format!("{n} bytes"))
    }
}

/// Criterion's groups for one payload, then the interleaved ratios of the codec and of its
/// floor's stages.
fn measure(c: &mut Criterion, codec: &Log, name: &'static str, text: String, quick: bool) -> Row {
    let output = match codec.compress(Payload::text_only(&text), Level::Normal) {
        Ok(Outcome::Changed { payload, .. }) => Some(payload.len()),
        Ok(Outcome::Unchanged) => None,
        Err(err) => panic!("{name}: {err}"),
    };
    let mut group = c.benchmark_group(format!("log.{name}"));
    group
        .throughput(Throughput::Bytes(text.len() as u64))
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs_f64(if quick { 0.2 } else { 0.5 }))
        .measurement_time(Duration::from_secs_f64(if quick { 0.5 } else { 3.0 }))
        .sample_size(10);
    group.bench_function("split", |b| b.iter(|| corpus::split(black_box(&text))));
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
    let (ratio, split_time, codec_time) = corpus::split_ratio(&text, &run_codec, rounds);
    let stage = |stage: Stage| {
        let run = || {
            black_box(codec.run_stages(black_box(&text), stage));
        };
        corpus::split_ratio(&text, &run, rounds).0
    };
    let (lines, scan) = (stage(Stage::Lines), stage(Stage::Scan));
    Row {
        name,
        text,
        output,
        split_time,
        codec_time,
        ratio,
        lines,
        scan,
    }
}

/// Headroom on each payload, in the order of `rows`; the reason for each it was not measured
/// on.
fn headroom(rows: &[Row], quick: bool) -> (Option<Headroom>, Vec<Result<Measured, String>>) {
    // Beside this crate, not `corpus::workspace_root()`, which is fixed where that crate was
    // compiled (a target folder copied from another checkout keeps the other checkout's).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("the crate sits in the workspace")
                .join("target")
        });
    let headroom = match Headroom::set_up(&target) {
        Ok(headroom) => headroom,
        Err(reason) => {
            eprintln!("log: Headroom not measured: {reason}");
            return (None, rows.iter().map(|_| Err(reason.clone())).collect());
        }
    };
    let measured = rows
        .iter()
        .zip(SIZES)
        .map(|(row, (_, _, runs))| {
            let result = headroom.measure(row.name, &row.text, runs[usize::from(quick)]);
            if let Err(reason) = &result {
                eprintln!("log: Headroom not measured on {}: {reason}", row.name);
            }
            result
        })
        .collect();
    (Some(headroom), measured)
}

fn speed_table(rows: &[&Row]) -> String {
    let mut table = String::from(
        "`cargo bench -p parrot-codecs --bench log`. The `log` codec at `normal` (default \
         params) on a generated build-and-test log (timestamps, UUIDs, ANSI colours, progress \
         redraws, passing tests, a failure every 2,000 lines), against a plain line split of \
         the same bytes (`text.split('\\n').count()`) in the same run. Ratio: the median of \
         interleaved rounds of the two. *floor*: the codec's first two stages alone, timed \
         the same way against the split: the line table with the cleaning of coloured and \
         redrawn lines (*lines*), then also the pattern scan that finds the failure and warning \
         lines (*lines + scan*, SIMD searches: `memchr` and an Aho-Corasick Teddy searcher). \
         Every output depends on both, and neither templates a line yet. *× floor*: the \
         codec's ratio over the floor's (lines + scan), what the target bounds. The *passing* \
         logs are the same generator's lines without its failures and warnings (a build and \
         test run that passed): there the budget keeps fold lines, so every line is templated, \
         where on the logs with failures the failure lines alone are over the budget and the \
         noise is not templated (the codec's rule 8; the output is the same either way).\n\n\
         | payload | `split` count | output | split | log | ratio | floor: lines | floor: lines + scan | × floor |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        table.push_str(&format!(
            "| {} ({:.1} MB) | {} | {} | {:.2} ms | {:.2} ms | {:.2}x | {:.2}x | {:.2}x | \
             {:.2}x |\n",
            row.name,
            row.text.len() as f64 / 1e6,
            corpus::split(&row.text),
            row.output_cell(),
            row.split_time.as_secs_f64() * 1e3,
            row.codec_time.as_secs_f64() * 1e3,
            row.ratio,
            row.lines,
            row.scan,
            row.over_floor(),
        ));
    }
    table
}

fn headroom_table(
    rows: &[Row],
    headroom: Option<&Headroom>,
    measured: &[Result<Measured, String>],
) -> String {
    let runs = |quick: usize| {
        let [(first, _, a), (second, _, b)] = SIZES;
        format!("{} calls on {first} and {} on {second}", a[quick], b[quick])
    };
    let configuration = headroom.map_or_else(
        || "not set up (see the table)".to_owned(),
        Headroom::configuration,
    );
    let caches = measured
        .iter()
        .find_map(|m| m.as_ref().ok())
        .map_or_else(|| "–".to_owned(), |m| m.caches_cleared.join(", "));
    let mut table = format!(
        "\nSide by side with Headroom's log compressor: headroom-ai {} from PyPI, pinned with \
         everything it installs (`codecs/benches/headroom/requirements.txt`), in a venv the \
         benchmark makes. Its `compress()` with its defaults, given the log as one tool \
         message: the user's request (\"The build failed. What went wrong?\"), the assistant's \
         `bash` call (`cargo build && cargo test`), then the tool message whose content is the \
         log, so that its router picks what it picks for a log. Configuration: {configuration}. \
         Each timed call is `compress()` alone, after one warm-up call on a different log (the \
         payload's first 4,000 lines in reverse order, which takes the same path) so that \
         imports and one-off set-up are not counted, and after every cache Headroom keeps is \
         emptied ({caches}; the loaded vocabulary and compressors are kept). Headroom: the \
         median of {} ({} under `PARROT_BENCH_QUICK`); `log`: the codec's median from the \
         interleaved rounds above. *What ran*: one more call, watched and not timed: Headroom's \
         decision for the tool message, then the stages of its log path with what each gave.\n\n\
         | payload | `log` | Headroom `compress()` | Headroom / `log` | `log` output | Headroom output | Headroom's tokens | what ran |\n\
         |---|---|---|---|---|---|---|---|\n",
        headroom::pinned_version(),
        runs(0),
        runs(1),
    );
    for (row, measured) in rows.iter().zip(measured) {
        table.push_str(&format!(
            "| {} ({:.1} MB) | {:.2} ms | {}\n",
            row.name,
            row.text.len() as f64 / 1e6,
            row.codec_time.as_secs_f64() * 1e3,
            headroom_cells(row, measured),
        ));
    }
    table
}

/// One payload's cells of the Headroom table after the codec's time.
fn headroom_cells(row: &Row, measured: &Result<Measured, String>) -> String {
    let m = match measured {
        Ok(m) => m,
        Err(reason) => {
            return format!(
                "not measured: {} | – | {} | – | – | – |",
                reason.replace('|', "\\|"),
                row.output_cell()
            );
        }
    };
    let (low, high) = m.runs.iter().fold((f64::MAX, 0.0_f64), |(l, h), r| {
        (l.min(r.as_secs_f64()), h.max(r.as_secs_f64()))
    });
    let spread = match m.runs.len() {
        1 => "1 call".to_owned(),
        n => format!("{n} calls, {:.0}–{:.0} ms", low * 1e3, high * 1e3),
    };
    format!(
        "{:.0} ms ({spread}) | {:.0}x | {} | {} bytes | {} → {} ({}) | {} |",
        m.median.as_secs_f64() * 1e3,
        m.median.as_secs_f64() / row.codec_time.as_secs_f64(),
        row.output_cell(),
        m.output_bytes,
        m.tokens.0,
        m.tokens.1,
        m.token_counter,
        m.what_ran,
    )
}

/// The two target lines: the codec over its floor (worst payload; the passing logs' worst
/// beside it), and Headroom's time over the codec's (worst payload, so the smallest), or why
/// that was not measured.
fn targets(rows: &[Row], passing: &[Row], measured: &[Result<Measured, String>]) -> Vec<String> {
    let worst = |rows: &[Row]| rows.iter().map(Row::over_floor).fold(0.0, f64::max);
    let (worst_floor, worst_passing) = (worst(rows), worst(passing));
    let verdict = |met: bool| if met { "met" } else { "missed" };
    let floor = format!(
        "- `log` codec at most {FLOOR_BOUND:.0}x its own floor (the line table + pattern scan \
         stages, 1 MB and 10 MB logs, worst): **{}**, {worst_floor:.2}x; on the passing logs, \
         where every line is templated: {}, {worst_passing:.2}x.",
        verdict(worst_floor <= FLOOR_BOUND),
        verdict(worst_passing <= FLOOR_BOUND)
    );
    let speedups: Result<Vec<f64>, &String> = rows
        .iter()
        .zip(measured)
        .map(|(row, m)| {
            m.as_ref()
                .map(|m| m.median.as_secs_f64() / row.codec_time.as_secs_f64())
        })
        .collect();
    let outcome = match speedups {
        Ok(speedups) => {
            let worst = speedups.into_iter().fold(f64::INFINITY, f64::min);
            format!("**{}**, {worst:.0}x", verdict(worst >= HEADROOM_BOUND))
        }
        Err(reason) => format!("not measured ({reason})"),
    };
    let headroom = format!(
        "- `log` codec at least {HEADROOM_BOUND:.0}x faster than Headroom's log compressor \
         (headroom-ai {}, `compress()` on the log as one tool message, offline; 1 MB and 10 MB \
         logs, worst): {outcome}.",
        headroom::pinned_version()
    );
    vec![floor, headroom]
}

fn bench(c: &mut Criterion) {
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let codec = codec();
    let rows: Vec<Row> = SIZES
        .iter()
        .map(|&(name, size, _)| measure(c, &codec, name, corpus::log_payload(size), quick))
        .collect();
    let passing: Vec<Row> = PASSING
        .iter()
        .map(|&(name, size)| measure(c, &codec, name, corpus::passing_log_payload(size), quick))
        .collect();
    let (headroom, measured) = headroom(&rows, quick);
    let every: Vec<&Row> = rows.iter().chain(&passing).collect();
    let mut report = speed_table(&every);
    report.push_str(&headroom_table(&rows, headroom.as_ref(), &measured));
    corpus::report("log.md", &report);
    corpus::target("log", &targets(&rows, &passing, &measured));
}

criterion_group!(benches, bench);
criterion_main!(benches);
