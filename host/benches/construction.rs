//! Host construction with 0, 1 and 3 plugin packages: manifest discovery and validation,
//! library loading, codec construction, entry resolution.
//!
//! Two measurements:
//! - cold: the first construction in a fresh process (the libraries are opened, their root
//!   modules checked and initialized), the number that matters for a command or an agent's
//!   start-up. The benchmark runs itself as a child process per sample and reports the median
//!   and the worst of the children's construction times (the timer is inside the child, around
//!   `HostBuilder::build`, so process start-up is not counted).
//! - warm: criterion, in one process, where the libraries are already loaded (the host never
//!   unloads them), as for every construction after the first.
//!
//! `cargo bench -p parrot-host --bench construction`. Target: ≤ 20 ms with 3 packages.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use parrot_host::Host;

use parrot_bench_corpus as corpus;
mod support;

/// Set in a child: build one host from these package folders and print the microseconds.
const COLD: &str = "PARROT_BENCH_CONSTRUCTION_COLD";

fn build(project: &Path, packages: &[PathBuf]) -> Host {
    let mut builder = Host::builder();
    builder.project(project).plugin_path(None);
    for package in packages {
        builder.plugin_dir(package);
    }
    builder.build().expect("host")
}

fn main() {
    if let Some(list) = std::env::var_os(COLD) {
        let list = list.to_str().expect("UTF-8 paths").to_owned();
        let mut parts = list.split('\n');
        let project = PathBuf::from(parts.next().expect("project"));
        let packages: Vec<PathBuf> = parts.filter(|p| !p.is_empty()).map(PathBuf::from).collect();
        let started = Instant::now();
        let host = build(&project, &packages);
        let elapsed = started.elapsed();
        assert_eq!(
            host.sources().len(),
            packages.len() + 1,
            "every package loaded"
        );
        println!("{}", elapsed.as_micros());
        return;
    }

    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).expect("project");
    let all: Vec<PathBuf> = support::PACKAGES
        .iter()
        .map(|(name, library, codec)| support::package(dir.path(), name, library, codec, ""))
        .collect();
    let cases: [(&str, &[PathBuf]); 3] = [
        ("0 packages", &[]),
        ("1 package", &all[..1]),
        ("3 packages", &all[..]),
    ];

    let children = if quick { 5 } else { 21 };
    let mut table = String::from(
        "`cargo bench -p parrot-host --bench construction`. The packages: `line_dedup`, \
         `tool_result_prune`, `ansi_strip` (their cdylibs as built by the benchmark, each in its own \
         folder with a `compressors.toml`); the core manifest is always there.\n\n\
         Cold (the first construction in a fresh process, timed inside the process around \
         `HostBuilder::build`; ",
    );
    table.push_str(&format!(
        "{children} processes per row):\n\n| packages | median | worst |\n|---|---|---|\n"
    ));
    let mut three = Duration::ZERO;
    for (name, packages) in cases {
        let mut list = project.display().to_string();
        for package in packages {
            list.push('\n');
            list.push_str(&package.display().to_string());
        }
        let mut times: Vec<Duration> = (0..children)
            .map(|_| {
                let out = Command::new(std::env::current_exe().expect("bench executable"))
                    .env(COLD, &list)
                    .output()
                    .expect("child");
                assert!(out.status.success(), "child failed: {out:?}");
                let micros: u64 = String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse()
                    .expect("microseconds");
                Duration::from_micros(micros)
            })
            .collect();
        times.sort();
        let median = times[times.len() / 2];
        table.push_str(&format!(
            "| {name} | {:.2} ms | {:.2} ms |\n",
            median.as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3
        ));
        if packages.len() == 3 {
            three = median;
        }
    }
    corpus::report("construction.md", &table);
    let ms = three.as_secs_f64() * 1e3;
    corpus::target(
        "construction",
        &[format!(
            "- Host construction with 3 plugin packages ≤ 20 ms (cold, median): **{}**, {ms:.2} ms.",
            if ms <= 20.0 { "met" } else { "missed" }
        )],
    );

    let mut criterion = Criterion::default().configure_from_args();
    if quick {
        criterion = criterion
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(500))
            .sample_size(10);
    }
    let mut group = criterion.benchmark_group("construction");
    for (name, packages) in cases {
        group.bench_function(name, |b| b.iter(|| black_box(build(&project, packages))));
    }
    group.finish();
    criterion.final_summary();
}
