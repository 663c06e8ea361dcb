//! Peak heap of the `log` codec at `normal` on the generated 1 MB and 10 MB logs
//! (`benches/corpus.rs`, `log_payload`), as a multiple of the payload: the peak of live bytes
//! allocated through this process's global allocator during one `compress` call, above the
//! live bytes before it (the payload itself is the caller's and is not counted; the output is).
//!
//! `cargo bench -p parrot-codecs --bench log_memory`. Target: peak ≤ 3x the payload.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
use parrot_codecs::Log;

#[path = "../../benches/corpus.rs"]
mod corpus;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[allow(unsafe_code)]
// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counters are bookkeeping only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

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
