//! The lossless text codecs (`paths`, `hits`, `table`) against a plain line split of the same
//! bytes (`text.split('\n').count()`), at 1 MB and 10 MB.
//!
//! Each payload is a real capture of `corpus/text/` repeated to the size, each copy's paths
//! under a folder of its own (`copy12/src/…`) so that the listing and the hits stay what they
//! were, and a table's rows repeated under its header. Ratio: the median over interleaved rounds
//! of the codec's time over the split's, each round timing both back to back in alternating
//! order (a machine whose speed drifts moves both). Every output is expanded back through the
//! codec's inverse and compared with the payload once, untimed.
//!
//! `cargo bench -p parrot-codecs --bench text`. Target (issue 46): each codec ≤ 2x the split.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use parrot_bench_corpus as corpus;
use parrot_codec_api::{DynCodec, Level, Outcome, Params, Payload};

/// The most a codec may take over the split.
const BOUND: f64 = 2.0;

/// The capture `name` of `corpus/text/`.
fn capture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/text")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// `lines` repeated to `bytes`, copy `n`'s lines rewritten by `each(n, line)`, after `header`.
fn grown(header: &str, lines: &str, bytes: usize, each: impl Fn(usize, &str) -> String) -> String {
    let mut out = String::with_capacity(bytes + lines.len());
    out.push_str(header);
    let mut n = 0;
    while out.len() < bytes {
        for line in lines.lines() {
            out.push_str(&each(n, line));
            out.push('\n');
        }
        n += 1;
    }
    out
}

/// The payloads of `codec` at `bytes`.
fn payload(codec: &str, bytes: usize) -> String {
    match codec {
        "paths" => grown(
            "",
            &capture("paths-tokio-find.txt"),
            bytes,
            |n, line| match line.strip_prefix("./") {
                Some(rest) => format!("./copy{n}/{rest}"),
                None => format!("./copy{n}"),
            },
        ),
        "hits" => grown("", &capture("hits-tokio-grep.txt"), bytes, |n, line| {
            format!("copy{n}/{line}")
        }),
        "table" => {
            let dpkg = capture("table-dpkg-l.txt");
            let at = dpkg.find("\nii ").map_or(0, |at| at + 1);
            grown(&dpkg[..at], &dpkg[at..], bytes, |_, line| line.to_owned())
        }
        other => panic!("no payload for {other}"),
    }
}

fn built(name: &str) -> Box<dyn DynCodec> {
    let builtin = parrot_codecs::builtins()
        .into_iter()
        .find(|builtin| builtin.meta.name() == name)
        .unwrap_or_else(|| panic!("no built-in codec {name}"));
    (builtin.build)(Params::empty()).expect("defaults")
}

fn millis(time: Duration) -> String {
    format!("{:.2} ms", time.as_secs_f64() * 1e3)
}

fn main() {
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let mut table = String::from(
        "`cargo bench -p parrot-codecs --bench text`. Each lossless text codec at `minimal` on a \
         real capture of `corpus/text/` repeated to the size (each copy's paths under a folder \
         of its own; a table's rows under one header), against a plain line split of the same \
         bytes (`text.split('\\n').count()`). Ratio: the median of interleaved rounds of the \
         two; times are the medians. Every output was expanded back through the codec's \
         inverse and compared with the payload.\n\n\
         | codec | payload | output | split | codec | ratio |\n|---|---|---|---|---|---|\n",
    );
    let mut worst: Vec<(String, f64)> = Vec::new();
    for name in ["paths", "hits", "table"] {
        let codec = built(name);
        for (label, bytes, rounds) in [("1 MB", 1_000_000, 41), ("10 MB", 10_000_000, 11)] {
            let rounds = if quick { rounds.min(5) } else { rounds };
            let text = payload(name, bytes);
            let out = codec
                .compress(Payload::text_only(&text), Level::Minimal)
                .expect("compress");
            let Outcome::Changed { payload, .. } = &out else {
                panic!("{name} left its {label} payload unchanged");
            };
            assert_eq!(
                codec.expand(payload).expect("expand"),
                text,
                "{name} {label}"
            );
            let work = || {
                black_box(
                    codec
                        .compress(Payload::text_only(black_box(&text)), Level::Minimal)
                        .ok(),
                );
            };
            let (ratio, split_time, codec_time) = corpus::split_ratio(&text, &work, rounds);
            table.push_str(&format!(
                "| {name} | {label} ({} bytes) | {} bytes ({:.1}%) | {} | {} | {ratio:.2}x |\n",
                corpus::thousands(text.len()),
                corpus::thousands(payload.len()),
                100.0 * payload.len() as f64 / text.len() as f64,
                millis(split_time),
                millis(codec_time),
            ));
            worst.push((format!("{name} {label}"), ratio));
        }
    }
    print!("{table}");
    corpus::report("text-speed.md", &table);
    let over: Vec<String> = worst
        .iter()
        .filter(|(_, ratio)| *ratio > BOUND)
        .map(|(what, ratio)| format!("{what} {ratio:.2}x"))
        .collect();
    let max = worst.iter().map(|(_, r)| *r).fold(0.0, f64::max);
    let line = if over.is_empty() {
        format!(
            "- Each lossless text codec ≤ {BOUND}x a plain line split at 1 MB and 10 MB: **met**, worst {max:.2}x."
        )
    } else {
        format!(
            "- Each lossless text codec ≤ {BOUND}x a plain line split at 1 MB and 10 MB: **missed**: {}.",
            over.join(", ")
        )
    };
    println!("{line}");
    corpus::target("text-speed", &[line]);
}
