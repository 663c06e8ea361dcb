//! What the host's benchmarks share: the plugin cdylibs cargo builds beside them (the plugins
//! are dev-dependencies) and plugin packages made from them.

#![allow(dead_code)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::Criterion;
use parrot_codec_api::{DynCodec, Level, Payload};
use parrot_codec_test::{Package, plugin_manifest};
use parrot_host::{Host, TokenCounter};

/// A plugin package in `dir/name/`: the cdylib of `library` that cargo built beside this bench
/// binary and a `compressors.toml` declaring `codec`, plus `entries` (manifest text). Returns
/// the package folder.
pub fn package(dir: &Path, name: &str, library: &str, codec: &str, entries: &str) -> PathBuf {
    let built = parrot_codec_test::cdylib(library)
        .unwrap_or_else(|err| panic!("{err} (the plugins are the benches' dev-dependencies)"));
    Package::new(dir, name)
        .library(built)
        .manifest(plugin_manifest(
            library,
            &format!("codecs = [\"{codec}\"]\n{entries}"),
        ))
        .create()
        .unwrap_or_else(|err| panic!("{err}"))
}

/// The three shippable packages the construction benchmark loads.
pub const PACKAGES: [(&str, &str, &str); 3] = [
    ("line-dedup", "parrot_plugin_line_dedup", "line_dedup"),
    (
        "tool-result-prune",
        "parrot_plugin_tool_result_prune",
        "tool_result_prune",
    ),
    ("ansi-strip", "parrot_plugin_ansi_strip", "ansi_strip"),
];

/// Measures `in_process` against the codec of the same name loaded from its package.
pub fn compare(
    c: &mut Criterion,
    name: &str,
    in_process: Box<dyn DynCodec>,
    (package, library, codec): (&str, &str, &str),
    payload: Payload<'_>,
) {
    let project = tempfile::tempdir().expect("temp dir");
    let package = self::package(
        project.path(),
        package,
        library,
        codec,
        &format!("[compressor.\"bench\"]\ncodec = \"{codec}\"\n"),
    );
    let host = Host::builder()
        .project(project.path())
        .plugin_path(None)
        .plugin_dir(&package)
        .build()
        .expect("host loads the plugin");
    let through_plugin = host
        .resolve("bench")
        .entry
        .expect("entry")
        .codec()
        .expect("a codec");
    assert_eq!(
        through_plugin
            .compress(payload, Level::Minimal)
            .expect("plugin"),
        in_process
            .compress(payload, Level::Minimal)
            .expect("in-process"),
        "both paths give the same bytes"
    );
    let mut group = c.benchmark_group(format!("boundary.{name}"));
    group.throughput(criterion::Throughput::Bytes(payload.text().len() as u64));
    if std::env::var_os("PARROT_BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_millis(500))
            .sample_size(10);
    }
    group.bench_function("in_process", |b| {
        b.iter(|| in_process.compress(black_box(payload), Level::Minimal))
    });
    group.bench_function("through_cdylib", |b| {
        b.iter(|| through_plugin.compress(black_box(payload), Level::Minimal))
    });
    group.finish();

    let (median, q1, q3) = interleaved(in_process.as_ref(), through_plugin, payload);
    println!("boundary.{name}: interleaved ratio {median:.3} (interquartile {q1:.3}–{q3:.3})");
    if let Some(dir) = std::env::var_os("PARROT_BENCH_REPORT") {
        let path = std::path::Path::new(&dir).join(format!("boundary-{}.txt", slug(name)));
        std::fs::write(&path, format!("{median} {q1} {q3}\n"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// The file-name form of a benchmark name.
pub fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The boundary's cost as the median of many ratios, each from two batches of calls timed back
/// to back (through the cdylib / in-process, their order alternating): drift in the machine's
/// speed during the run, which sequential measurements of the two paths take as a difference,
/// cancels out. Returns the median and the interquartile range.
fn interleaved(
    in_process: &dyn DynCodec,
    through_plugin: &dyn DynCodec,
    payload: Payload<'_>,
) -> (f64, f64, f64) {
    let batch = |codec: &dyn DynCodec, calls: u32| {
        let started = std::time::Instant::now();
        for _ in 0..calls {
            black_box(codec.compress(black_box(payload), Level::Minimal)).ok();
        }
        started.elapsed().as_secs_f64()
    };
    // Batches of about a millisecond.
    let once = batch(in_process, 10) / 10.0;
    let calls = ((1e-3 / once.max(1e-9)) as u32).clamp(1, 100_000);
    let rounds = if std::env::var_os("PARROT_BENCH_QUICK").is_some() {
        100
    } else {
        1000
    };
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|round| {
            if round % 2 == 0 {
                let inside = batch(in_process, calls);
                batch(through_plugin, calls) / inside
            } else {
                let outside = batch(through_plugin, calls);
                outside / batch(in_process, calls)
            }
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.25), at(0.75))
}

/// Counts nothing: for benchmarks that count tokens themselves, or that isolate the pipeline's
/// own cost from the background counting that shares the machine's cores with it.
pub struct NoTokens;

impl TokenCounter for NoTokens {
    fn name(&self) -> &str {
        "none"
    }

    fn count(&self, _: &str) -> usize {
        0
    }
}
