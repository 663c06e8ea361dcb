//! The command, whole process, against a whole process that only scans the same file.
//!
//! ```text
//! cargo bench -p parrot-compress --bench command
//! ```
//!
//! Both programs run as copies in the benchmark's temporary folder, as installed (see
//! `Binaries`). The yardstick is this benchmark's own binary run again with
//! `PARROT_BENCH_SCAN=FILE`: it
//! reads the file and runs the workspace's scan yardstick on it (serde_json into
//! `serde::de::IgnoredAny`, allocating nothing) and exits, so it pays a process's start, the
//! read and one validating pass. Each round runs both, in alternating order; the ratio is the
//! median of the rounds' ratios; the start-up is the median of the rounds' differences. Rows:
//!
//! - `compress --no-tee` of 10 MB of rows (the default configuration: `auto`);
//! - `compress` of 1 KB of rows with the default configuration (its tee store in the project
//!   folder), the whole call, and with `--level none`, which reads and writes the payload and
//!   compresses nothing: everything the command does around its input (manifest discovery,
//!   plugin loading), whose time over the scan's is the start-up. The command opens its store
//!   only for a result it stores, which neither of these is; the last row's is (a status other
//!   than `success`), so it opens the store and puts the payload (a renewal after the first).
//!
//! `cargo xtask bench` puts the table into docs/BENCHMARKS.md ("The command").

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use parrot_bench_corpus as corpus;

const COMMAND: &str = env!("CARGO_BIN_EXE_parrot-compress");

fn main() {
    if let Some(file) = std::env::var_os("PARROT_BENCH_SCAN") {
        let text = std::fs::read_to_string(&file).expect("the payload file");
        let _: serde::de::IgnoredAny = serde_json::from_str(&text).expect("valid JSON");
        return;
    }
    // `cargo bench` passes `--bench`; a plain run of the binary measures too.
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).expect("the project folder");
    let big = dir.path().join("rows-10MB.json");
    let small = dir.path().join("rows-1KB.json");
    std::fs::write(&big, corpus::query_rows(10 << 20, usize::MAX)).expect("write");
    std::fs::write(&small, corpus::query_rows(1 << 10, usize::MAX)).expect("write");

    let binaries = Binaries::installed(dir.path());
    let rows: [(&str, &Path, &[&str], usize); 4] = [
        (
            "10 MB of rows, `compress --no-tee`",
            &big,
            &["--no-tee"],
            if quick { 5 } else { 21 },
        ),
        (
            "1 KB of rows, `compress` (default store)",
            &small,
            &[],
            if quick { 11 } else { 41 },
        ),
        (
            "1 KB of rows, `compress --level none` (start-up)",
            &small,
            &["--level", "none"],
            if quick { 21 } else { 101 },
        ),
        (
            "1 KB of rows, `compress --status error` (stored: the store opened)",
            &small,
            &["--status", "error"],
            if quick { 11 } else { 41 },
        ),
    ];
    let mut table = String::from(
        "`cargo bench -p parrot-compress --bench command`. Whole processes, each round both in \
         alternating order: the command on a payload file, with the default configuration (no \
         manifest: `auto`) and a fresh project folder, against a process that reads the same \
         file and runs the scan yardstick on it (the benchmark's own binary). p50 of each, and \
         the medians of the rounds' ratios and of their differences (*over the scan*: the \
         command's time minus the scan's in the same round).\n\n\
         | run | rounds | scan p50 | command p50 | over the scan | ratio |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut results = Vec::new();
    for (name, file, args, rounds) in rows {
        let measured = interleaved(&binaries, &project, file, args, rounds);
        table.push_str(&format!(
            "| {name} | {rounds} | {} | {} | {} | {:.2}x |\n",
            ms(measured.scan),
            ms(measured.command),
            ms(measured.over),
            measured.ratio,
        ));
        results.push(measured);
    }
    corpus::report("command.md", &table);
    let (big_ratio, startup) = (results[0].ratio, results[2].over);
    corpus::target(
        "command",
        &[
            format!(
                "- The command, whole process, `compress --no-tee` of 10 MB of rows ≤ 2.0x a \
                 process that scans the same file: **{}**, {big_ratio:.2}x.",
                verdict(big_ratio <= 2.0)
            ),
            format!(
                "- The command's start-up (`compress --level none` of 1 KB, default \
                 configuration, over a process that scans it) ≤ 2 ms: **{}**, {}.",
                verdict(startup <= Duration::from_millis(2)),
                ms(startup)
            ),
        ],
    );
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "missed" }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// What [`interleaved`] measured over its rounds.
struct Measured {
    /// The p50 of the scan and of the command.
    scan: Duration,
    command: Duration,
    /// The median of the rounds' ratios (command over scan) and of their differences
    /// (command minus scan): each round's pair ran back to back, so a drift in the machine's
    /// speed over the rounds moves both sides of a round alike.
    ratio: f64,
    over: Duration,
}

/// The two programs' times, paired round by round, over `rounds` rounds.
/// The two programs each round runs, copied into the benchmark's folder as an install copies
/// them: on this machine a binary fresh from the linker starts slower than the same bytes
/// copied (its pages in the page cache as the linker wrote them; the command measured 4.5-4.9
/// ms where its copy took 3.6 ms), so without the copy the row would measure how the binary
/// was written, not what a user runs. The scan's program is copied too, on the same footing.
struct Binaries {
    command: std::path::PathBuf,
    scan: std::path::PathBuf,
}

impl Binaries {
    fn installed(dir: &Path) -> Binaries {
        let copy = |from: &Path, name: &str| {
            let to = dir.join(name);
            std::fs::copy(from, &to)
                .unwrap_or_else(|e| panic!("copy {} to {}: {e}", from.display(), to.display()));
            to
        };
        Binaries {
            command: copy(Path::new(COMMAND), "parrot-compress"),
            scan: copy(&std::env::current_exe().expect("this binary"), "scan"),
        }
    }
}

fn interleaved(
    binaries: &Binaries,
    project: &Path,
    file: &Path,
    args: &[&str],
    rounds: usize,
) -> Measured {
    let scan = || {
        let started = Instant::now();
        let status = Command::new(&binaries.scan)
            .env("PARROT_BENCH_SCAN", file)
            .stdout(Stdio::null())
            .status()
            .expect("the scan process");
        assert!(status.success(), "the scan process failed");
        started.elapsed()
    };
    let command = || {
        let started = Instant::now();
        let status = Command::new(&binaries.command)
            .arg("--project")
            .arg(project)
            .args(["compress", "--tool", "rows"])
            .args(args)
            .arg(file)
            .env_remove("PARROT_COMPRESSION_DISABLED")
            .env_remove("PARROT_PLUGIN_PATH")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the command");
        assert!(status.success(), "the command failed");
        started.elapsed()
    };
    // One of each first: the files are in the page cache, the store exists.
    scan();
    command();
    let (mut scans, mut commands, mut ratios, mut overs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (s, c) = if round % 2 == 0 {
            let s = scan();
            (s, command())
        } else {
            let c = command();
            (scan(), c)
        };
        ratios.push(c.as_secs_f64() / s.as_secs_f64());
        overs.push(c.saturating_sub(s));
        scans.push(s);
        commands.push(c);
    }
    scans.sort();
    commands.sort();
    ratios.sort_by(f64::total_cmp);
    overs.sort();
    Measured {
        scan: scans[rounds / 2],
        command: commands[rounds / 2],
        ratio: ratios[rounds / 2],
        over: overs[rounds / 2],
    }
}
