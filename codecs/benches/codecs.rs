//! Each codec, text in → text out, against the yardstick measured in the same run: a validating
//! scan of the same bytes that allocates nothing (serde_json into `serde::de::IgnoredAny`), and
//! a serde_json `Value` parse + serialize (what a codec built on an owned tree would pay at
//! least).
//!
//! Payloads: generated row arrays (seeded, the same bytes every run) of about 10 KB, 100 KB,
//! 1 MB and 10 MB, and the JSON files of `corpus/` (flat rows, a query result, nested
//! API responses).
//!
//! ```text
//! cargo bench -p parrot-codecs                 # everything
//! cargo bench -p parrot-codecs -- rows_1MB     # one payload
//! ```
//!
//! Target (issue 4): each codec at most 2x the scan on the 1 MB row payload.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use parrot_codec_api::{Codec, Level, Params, Payload};
use parrot_codecs::{Columnar, JsonCompact};

/// xorshift64*: a fixed sequence, so every run measures the same bytes.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A database-style result: an array of flat rows (ids, names, a decimal, timestamps, a
/// mostly-null column, a constant column), written as Python's `json.dumps` writes it.
fn rows_payload(target_bytes: usize) -> String {
    const REGIONS: [&str; 4] = ["north", "south", "east", "west"];
    let mut rng = Seeded(0x5EED_5EED);
    let mut out = String::with_capacity(target_bytes + 512);
    out.push('[');
    let mut id = 0;
    while out.len() < target_bytes {
        if id > 0 {
            out.push_str(", ");
        }
        let notes = if rng.below(10) == 0 {
            format!(
                "\"follow up on ticket #{} — customer asked for a callback\"",
                rng.below(100_000)
            )
        } else {
            "null".to_owned()
        };
        let _ = write!(
            out,
            "{{\"id\": {id}, \"name\": \"user-{:05}\", \"email\": \"user{}@example.com\", \
             \"region\": \"{}\", \"active\": {}, \"score\": {}.{:02}, \"visits\": {}, \
             \"created_at\": \"2024-{:02}-{:02}T{:02}:{:02}:00Z\", \"notes\": {notes}, \
             \"source\": \"crm\"}}",
            rng.below(100_000),
            rng.below(1_000_000),
            REGIONS[rng.below(4) as usize],
            rng.below(2) == 0,
            rng.below(1000),
            rng.below(100),
            rng.below(10_000),
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
        );
        id += 1;
    }
    out.push(']');
    out
}

fn corpus() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
                .filter_map(|path| {
                    let name = path.file_stem()?.to_str()?.to_owned();
                    Some((name, std::fs::read_to_string(&path).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn payloads() -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = [
        ("rows_10KB", 10_000),
        ("rows_100KB", 100_000),
        ("rows_1MB", 1_000_000),
        ("rows_10MB", 10_000_000),
    ]
    .into_iter()
    .map(|(name, size)| (name.to_owned(), rows_payload(size)))
    .collect();
    all.extend(corpus());
    all
}

fn bench(c: &mut Criterion) {
    let compact: JsonCompact = parrot_codec_api::build(Params::empty()).expect("defaults");
    let columnar: Columnar = parrot_codec_api::build(Params::empty()).expect("defaults");
    for (name, text) in payloads() {
        let mut group = c.benchmark_group(&name);
        group.throughput(Throughput::Bytes(text.len() as u64));
        if text.len() >= 1_000_000 {
            group
                .sample_size(20)
                .measurement_time(Duration::from_secs(8));
        }
        group.bench_function("scan", |b| {
            b.iter(|| serde_json::from_str::<serde::de::IgnoredAny>(black_box(&text)).is_ok())
        });
        group.bench_function("serde_value", |b| {
            b.iter(|| {
                let value: serde_json::Value =
                    serde_json::from_str(black_box(&text)).expect("JSON");
                serde_json::to_string(&value).expect("serializable")
            })
        });
        for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
            group.bench_function(format!("json_compact_{level}"), |b| {
                b.iter(|| compact.compress(Payload::json(black_box(&text)), level))
            });
            group.bench_function(format!("columnar_{level}"), |b| {
                b.iter(|| columnar.compress(Payload::json(black_box(&text)), level))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
