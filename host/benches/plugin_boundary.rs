//! The cost of the plugin boundary: `line_dedup` called in-process (its source compiled into
//! this benchmark) against the same codec loaded from its cdylib through the host, on a 10 KB
//! build log.
//!
//! `cargo bench -p parrot-host --bench plugin_boundary`. Target: ≤ 5% at 10 KB.

use criterion::{Criterion, criterion_group, criterion_main};
use parrot_codec_api::{Params, Payload};

mod support;

// The plugin is a cdylib alone, as a plugin template should be: its source, compiled here, is
// the in-process side. The root module it exports is this binary's, never looked up; its
// tests, compiled when cargo checks the benchmarks, are run by its own crate.
#[allow(unused)]
#[path = "../../plugins/line-dedup/src/lib.rs"]
mod line_dedup;

use line_dedup::LineDedup;

/// A deterministic 10 KB build log with runs of repeated lines.
fn log_10kb() -> String {
    let mut text = String::new();
    let mut i = 0u32;
    while text.len() < 10 * 1024 {
        let line = format!(
            "2026-11-30T03:{:02}:{:02} INFO worker {} heartbeat ok",
            i / 60 % 60,
            i % 60,
            i % 7
        );
        let repeats = 1 + (i * 7919) % 5;
        for _ in 0..repeats {
            text.push_str(&line);
            text.push('\n');
        }
        i += 1;
    }
    text
}

fn boundary(c: &mut Criterion) {
    let log = log_10kb();
    support::compare(
        c,
        "line_dedup, 10 KB build log",
        Box::new(parrot_codec_api::build::<LineDedup>(Params::empty()).expect("codec")),
        support::PACKAGES[0],
        Payload::text_only(&log),
    );
}

criterion_group!(benches, boundary);
criterion_main!(benches);
