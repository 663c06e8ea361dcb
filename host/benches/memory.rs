//! Peak memory of one `process` call on the 10 MB generated rows, as a multiple of the payload,
//! per codec and level, with the default configuration otherwise (a memory tee store, the
//! default last-resort cut, o200k token counting on the background worker).
//!
//! Two measures per call, both from just before the call until `Host::flush` returns (so the
//! token worker's copies count):
//! - heap: the peak of live bytes allocated through this process's global allocator above the
//!   live bytes before the call (the payload itself is the caller's and is not counted). Every
//!   codec measured is a built-in, so all of its allocations are seen;
//! - RSS: the kernel's high-water mark of resident memory (`VmHWM`, reset through
//!   `/proc/self/clear_refs` before each call) above the resident memory before the call. It
//!   also counts pages the allocator keeps.
//!
//! `cargo bench -p parrot-host --bench memory`. Targets: peak ≤ 4x the payload at 10 MB, and
//! ≤ 4x with the default on the registry corpus's `countries` (754 KB of nested JSON, routed
//! to `json_nested`), when `cargo xtask bench-corpus` has fetched it.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use parrot_codec_api::Level;
use parrot_host::{Call, Host, Input, MemoryTeeStore};

use parrot_bench_corpus as corpus;

use heap::{LIVE, PEAK};
use parrot_bench_corpus::heap;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// `VmRSS` or `VmHWM` from /proc/self/status, in bytes (0 where there is no /proc).
fn status(field: &str) -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix(field)?
                    .trim_start_matches(':')
                    .trim()
                    .trim_end_matches(" kB")
                    .parse::<usize>()
                    .ok()
            })
        })
        .map_or(0, |kb| kb * 1024)
}

/// Set in a child: measure one case, `TOOL LEVEL`, and print `HEAP RSS OUTCOME`.
const CASE: &str = "PARROT_BENCH_MEMORY_CASE";

fn host(dir: &Path) -> Host {
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".parrot")).expect("project");
    std::fs::write(
        project.join(".parrot/compressors.toml"),
        "[compressor.\"rows_json_compact\"]\ncodec = \"json_compact\"\n\
         [compressor.\"rows_columnar\"]\ncodec = \"columnar\"\n\
         [compressor.\"rows_toon\"]\ncodec = \"toon\"\n",
    )
    .expect("manifest");
    Host::builder()
        .project(&project)
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::new(4)))
        .inline_at_any_size(true)
        .build()
        .expect("host")
}

/// The payload of a case: the 10 MB rows, or the registry corpus's `countries` (754 KB of
/// nested JSON, which the default routes to `json_nested`) when `nested`.
fn payload(nested: bool) -> Option<String> {
    if !nested {
        return Some(corpus::rows_payload(10_000_000));
    }
    corpus::registry()
        .into_iter()
        .find(|item| item.name == "countries")
        .map(|item| item.text)
}

/// One case in this (fresh) process: a small call first, so that the tokenizer's tables are
/// loaded, then the measured call.
fn measure(tool: &str, level: Level, nested: bool) {
    let Some(payload) = payload(nested) else {
        println!("-");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let host = host(dir.path());
    let small = corpus::rows_payload(10_000);
    std::hint::black_box(host.process(Call::new(tool, Input::Text(&small)).level(level)));
    host.flush();
    let resettable = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_before = status("VmRSS");
    let live_before = LIVE.load(Ordering::Relaxed);
    PEAK.store(live_before, Ordering::Relaxed);
    let out = host.process(Call::new(tool, Input::Text(&payload)).level(level));
    let outcome = match (&out.meta.skipped, out.meta.teed) {
        (Some(skip), _) => format!("skipped: {skip}"),
        (None, true) => format!("{} bytes, teed", out.payload.len()),
        (None, false) => format!("{} bytes", out.payload.len()),
    };
    drop(out);
    host.flush();
    let heap = PEAK.load(Ordering::Relaxed).saturating_sub(live_before);
    let rss = if resettable {
        status("VmHWM").saturating_sub(rss_before).to_string()
    } else {
        "-".to_owned()
    };
    println!("{heap} {rss} {} {outcome}", payload.len());
}

fn main() {
    if let Ok(case) = std::env::var(CASE) {
        let mut words = case.split(' ');
        let (tool, level) = (words.next().expect("TOOL"), words.next().expect("LEVEL"));
        let level = match level {
            "minimal" => Level::Minimal,
            "normal" => Level::Normal,
            other => panic!("level {other}"),
        };
        measure(tool, level, words.next() == Some("countries"));
        return;
    }
    let mut table = String::from(
        "`cargo bench -p parrot-host --bench memory`. One `process` call on the generated \
         10 MB rows, default configuration (memory tee store, default last-resort cut, o200k \
         counting on the background worker), each case in a fresh process after one small \
         call (which loads the tokenizer's tables), measured from just before the call until \
         `flush` returns; every codec is a built-in. **heap**: peak live bytes of the \
         process's allocator above those before the call (the caller's payload not counted). \
         **RSS**: the kernel's resident high-water mark (`VmHWM`, reset through \
         `/proc/self/clear_refs`) above the resident size before the call, pages the \
         allocator keeps included.\n\n\
         | codec | level | outcome | heap peak | × payload | RSS peak | × payload |\n\
         |---|---|---|---|---|---|---|\n",
    );
    let mut worst: f64 = 0.0;
    for (tool, codec) in [
        ("rows_json_compact", "json_compact"),
        ("rows_columnar", "columnar"),
        ("rows_toon", "toon"),
    ] {
        for level in ["minimal", "normal"] {
            let (row, times) = case(&format!("{tool} {level}"), codec, level).expect("rows");
            table.push_str(&row);
            worst = worst.max(times);
        }
    }
    // The nested corpus item through the default (no entry for the tool: `auto`).
    let nested = case("t normal countries", "auto (default), countries", "normal");
    if let Some((row, _)) = &nested {
        table.push_str(row);
    }
    corpus::report("memory.md", &table);
    let nested = match nested {
        Some((_, times)) => format!(
            "- Peak memory of `process` with the default on 1 MB of nested JSON (countries, \
             heap or RSS) ≤ 4x the payload: **{}**, {times:.2}x.",
            if times <= 4.0 { "met" } else { "missed" }
        ),
        None => "- Peak memory with the default on nested JSON: not measured (the registry \
                 corpus is not fetched: `cargo xtask bench-corpus`)."
            .to_owned(),
    };
    corpus::target(
        "memory",
        &[
            format!(
                "- Peak memory ≤ 4x the payload at 10 MB (worst codec and level, heap or RSS): \
                 **{}**, {worst:.2}x.",
                if worst <= 4.0 { "met" } else { "missed" }
            ),
            nested,
        ],
    );
}

/// Runs `case` (`TOOL LEVEL [countries]`) in a child process: its table row (named `codec`)
/// and its worst multiple of the payload (heap or RSS); `None` when the child had no payload.
fn case(case: &str, codec: &str, level: &str) -> Option<(String, f64)> {
    let out = Command::new(std::env::current_exe().expect("bench executable"))
        .env(CASE, case)
        .output()
        .expect("child");
    assert!(out.status.success(), "child failed: {out:?}");
    let line = String::from_utf8_lossy(&out.stdout);
    if line.trim() == "-" {
        return None;
    }
    let mut fields = line.trim().splitn(4, ' ');
    let mut number = || fields.next().expect("field").to_owned();
    let (heap, rss, payload) = (number(), number(), number());
    let outcome = fields.next().unwrap_or_default().to_owned();
    let payload: f64 = payload.parse().expect("payload size");
    let heap: f64 = heap.parse().expect("heap bytes");
    let mut worst = heap / payload;
    let rss_cells = match rss.parse::<f64>() {
        Ok(rss) => {
            worst = worst.max(rss / payload);
            format!("{:.1} MB | {:.2}x", rss / 1e6, rss / payload)
        }
        Err(_) => "– | –".to_owned(),
    };
    let row = format!(
        "| {codec} | {level} | {outcome} | {:.1} MB | {:.2}x | {rss_cells} |\n",
        heap / 1e6,
        heap / payload,
    );
    Some((row, worst))
}
