//! What the no-gain rule's token gauge adds to `process` (CONTRACT §2.1).
//!
//! `cargo bench -p parrot-host --bench gauge` prints a Markdown table. Two hosts run the same
//! calls, interleaved with the yardstick (a non-allocating serde_json scan of the same bytes):
//! one decides rule 9 with the real o200k tokenizer (the gauge), the other with a no-op counter
//! (the gauge then falls back to bytes, as before tokens decided). Both have the savings
//! report's background counting off (`HostBuilder::report_tokens(false)`), so the difference is
//! the gauge's cost on the caller's path. Payloads from 1 KB to 256 KB (the router's inline
//! threshold), in shapes that take the gauge's paths: rows through `columnar` (the output is
//! under half the bytes: uncounted), pretty-printed rows and rows written with a space after
//! each `:` and `,` through `json_compact` (counted up to 32 KB a text, estimated above), and
//! rows with no foldable column and a space between rows only through `json_compact` (a few
//! bytes and 3% of the tokens fewer: the close zone, counted exactly up to 64 KB of input and
//! output together, refused above). 31 KB and 33 KB sit on either side of the exact count.

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parrot_host::{Call, Host, Input, Level, TokenCounter as _, Tokenizer};

use parrot_bench_corpus as corpus;
mod support;

/// Seeded rows of about `bytes` bytes, as the calibration bench makes them, each row laid out
/// by `row`.
fn rows(bytes: usize, row: fn(u64, u64) -> String, open: &str, sep: &str, close: &str) -> String {
    let mut out = String::from(open);
    let mut i = 0u64;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    loop {
        state = corpus::xorshift(state);
        let next = row(i, state);
        if out.len() + next.len() + sep.len() + close.len() > bytes {
            break;
        }
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&next);
        i += 1;
    }
    out.push_str(close);
    out
}

fn spaced_row(i: u64, state: u64) -> String {
    corpus::query_row(i, state)
        .replace("\":", "\": ")
        .replace(",\"", ", \"")
}

/// A row with no column json_compact can fold (the space goes between rows, as the
/// separator).
fn varied_row(i: u64, state: u64) -> String {
    let region = ["north", "south", "east", "west"][(state % 4) as usize];
    format!(
        "{{\"store_id\":\"S{:04}\",\"revenue\":{}.{:02},\"region\":\"{region}\",\"notes\":\"n{}\",\"units\":{}}}",
        i % 10_000,
        1000 + state % 9000,
        state % 100,
        state % 997,
        state % 500
    )
}

fn pretty_row(i: u64, state: u64) -> String {
    let value: serde_json::Value = serde_json::from_str(&corpus::query_row(i, state)).expect("row");
    let pretty = serde_json::to_string_pretty(&value).expect("row");
    pretty.replace('\n', "\n    ")
}

fn scan(text: &str) -> Duration {
    let started = Instant::now();
    let _: serde::de::IgnoredAny = serde_json::from_str(black_box(text)).expect("valid JSON");
    started.elapsed()
}

fn p50(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".parrot")).expect("project");
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.\"rows_columnar\"]\ncodec = \"columnar\"\n\
         [compressor.\"rows_json\"]\ncodec = \"json_compact\"\n",
    )
    .expect("manifest");
    let host = |gauge: bool| {
        let mut builder = Host::builder();
        builder
            .project(dir.path())
            .plugin_path(None)
            .inline_at_any_size(true)
            .max_result_chars(0)
            .report_tokens(false);
        if !gauge {
            builder.tokenizer(Arc::new(support::NoTokens));
        }
        builder.build().expect("host")
    };
    let (bytes_host, gauge_host) = (host(false), host(true));
    Tokenizer::O200k.count("warm up");

    let mut table = String::from(
        "`cargo bench -p parrot-host --bench gauge`. `Host::process` at `minimal`, no tee store, \
         report counting off; each cell the p50 of the calls and its ratio to the p50 of the \
         yardstick (a non-allocating serde_json scan of the same bytes, interleaved). `bytes`: \
         rule 9 decided by bytes (a no-op counter); `gauge`: by o200k tokens; the gauge's cost \
         is their difference.\n\n\
         | payload | codec | out/in bytes | out/in tokens | path | scan p50 | bytes | gauge | gauge adds | runs |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    let volume: usize = if quick { 8 << 20 } else { 64 << 20 };
    type Row = fn(u64, u64) -> String;
    let shapes: [(&str, &str, Row, &str, &str, &str); 4] = [
        (
            "rows",
            "rows_columnar",
            corpus::query_row,
            "{\"rows\":[",
            ",",
            "]}",
        ),
        (
            "pretty rows",
            "rows_json",
            pretty_row,
            "{\n  \"rows\": [\n    ",
            ",\n    ",
            "\n  ]\n}",
        ),
        (
            "spaced rows",
            "rows_json",
            spaced_row,
            "{\"rows\": [",
            ", ",
            "]}",
        ),
        (
            "varied rows, spaced apart",
            "rows_json",
            varied_row,
            "{\"rows\":[",
            ", ",
            "]}",
        ),
    ];
    for size in [1 << 10, 10 << 10, 31 << 10, 33 << 10, 100 << 10, 256 << 10] {
        for (shape, tool, row, open, sep, close) in shapes {
            let payload = rows(size, row, open, sep, close);
            let call = || Call::new(tool, Input::Text(&payload)).level(Level::Minimal);
            let out = gauge_host.process(call());
            let output = out.text().expect("UTF-8").to_owned();
            let codec = out.meta.codec.clone().unwrap_or_default();
            let byte_ratio = output.len() as f64 / payload.len() as f64;
            let token_ratio =
                Tokenizer::O200k.count(&output) as f64 / Tokenizer::O200k.count(&payload) as f64;
            let path = if !out.meta.compressed && output == payload {
                format!(
                    "passed through ({})",
                    out.meta.skipped.map_or("?", |skip| skip.as_str())
                )
            } else if byte_ratio <= 0.5 {
                "uncounted".to_owned()
            } else if payload.len() <= 32 << 10 && output.len() <= 32 << 10 {
                "counted".to_owned()
            } else {
                "estimated".to_owned()
            };
            let runs = (volume / payload.len()).clamp(20, 2000);
            let (mut scans, mut by_bytes, mut by_gauge) = (vec![], vec![], vec![]);
            for _ in 0..runs {
                scans.push(scan(&payload));
                let started = Instant::now();
                black_box(bytes_host.process(call()));
                by_bytes.push(started.elapsed());
                let started = Instant::now();
                black_box(gauge_host.process(call()));
                by_gauge.push(started.elapsed());
            }
            let (scan50, bytes50, gauge50) = (p50(scans), p50(by_bytes), p50(by_gauge));
            let ratio = |d: Duration| d.as_secs_f64() / scan50.as_secs_f64();
            let adds = gauge50.saturating_sub(bytes50);
            let _ = writeln!(
                table,
                "| {:.1} KB {shape} | {codec} | {byte_ratio:.2} | {token_ratio:.2} | {path} | {} ms | {} ms ({:.1}x) | {} ms ({:.1}x) | {} ms ({:.1}x) | {runs} |",
                payload.len() as f64 / 1024.0,
                ms(scan50),
                ms(bytes50),
                ratio(bytes50),
                ms(gauge50),
                ratio(gauge50),
                ms(adds),
                ratio(adds),
            );
        }
    }
    corpus::report("gauge.md", &table);
}
