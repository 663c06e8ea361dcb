//! Peak heap of the `log` codec at `normal` on the generated 1 MB and 10 MB logs
//! (`parrot-bench-corpus`, `log_payload`), as a multiple of the payload: the peak of live bytes
//! allocated through this process's global allocator during one `compress` call, above the
//! live bytes before it (the payload itself is the caller's and is not counted; the output is).
//!
//! `cargo bench -p parrot-codecs --bench log_memory`. Target: peak ≤ 3x the payload.

use std::sync::atomic::Ordering;

use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
use parrot_codecs::Log;

use parrot_bench_corpus as corpus;

use heap::{LIVE, PEAK};
use parrot_bench_corpus::heap;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that names neither payload skips all.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let codec: Log = parrot_codec_api::build(Params::empty()).expect("the log codec's defaults");
    // A small call first: anything the codec builds lazily is not this call's peak.
    let small = corpus::log_payload(10_000);
    std::hint::black_box(codec.compress(Payload::text_only(&small), Level::Normal)).ok();
    let mut table = String::from(
        "`cargo bench -p parrot-codecs --bench log_memory`. One `compress` call of the `log` \
         codec at `normal` on the generated logs; **heap**: the peak of live bytes of the \
         process's allocator during the call above those before it (the payload is the \
         caller's and not counted; the output is).\n\n\
         | payload | output | heap peak | × payload |\n|---|---|---|---|\n",
    );
    let mut worst: f64 = 0.0;
    for (name, size) in [("log_1MB", 1_000_000), ("log_10MB", 10_000_000)] {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let text = corpus::log_payload(size);
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let outcome = codec.compress(Payload::text_only(&text), Level::Normal);
        let heap = PEAK.load(Ordering::Relaxed).saturating_sub(before);
        let output = match outcome {
            Ok(Outcome::Changed { payload, .. }) => format!("{} bytes", payload.len()),
            Ok(Outcome::Unchanged) => "unchanged".to_owned(),
            Err(err) => panic!("{name}: {err}"),
        };
        let ratio = heap as f64 / text.len() as f64;
        worst = worst.max(ratio);
        table.push_str(&format!(
            "| {name} ({:.1} MB) | {output} | {:.2} MB | {ratio:.2}x |\n",
            text.len() as f64 / 1e6,
            heap as f64 / 1e6,
        ));
    }
    corpus::report("log-memory.md", &table);
    corpus::target(
        "log-memory",
        &[format!(
            "- `log` codec's peak heap ≤ 3x the payload (1 MB and 10 MB logs, worst): **{}**, \
             {worst:.2}x.",
            if worst <= 3.0 { "met" } else { "missed" }
        )],
    );
}
