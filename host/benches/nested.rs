//! The nested-response table: the o200k_base tokens of every item of the nested set
//! (`set = "nested"` in `corpus/registry.toml`: real API responses whose size comes from
//! nesting) as given, through the default configuration, as reference TOON (the `toon-format`
//! crate, default options) and as compact JSON; then the totals of the whole set, of the part
//! changes are tuned on and of the held-out part.
//!
//! The default configuration is what a new user gets: a host with no manifest of its own and no
//! plugins (the core default `auto` at `normal`), a memory tee store, compressing inline at any
//! size with no cut of long results. Tee keys are content digests, so every count is the same
//! from run to run.
//!
//! `cargo bench -p parrot-host --bench nested`, after `cargo xtask bench-corpus` (without the
//! fetched set the table says so and there is nothing to measure).

use std::fmt::Write as _;
use std::sync::Arc;

use parrot_host::{Call, Host, Input, MemoryTeeStore, TokenCounter as _, Tokenizer};
use serde_json::Value;

use parrot_bench_corpus as corpus;

/// The counts of one item, or the sums of several.
#[derive(Default, Clone, Copy)]
struct Counts {
    items: usize,
    input: usize,
    before: usize,
    default: usize,
    lossy: usize,
    toon: usize,
    compact: usize,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.items += other.items;
        self.input += other.input;
        self.before += other.before;
        self.default += other.default;
        self.lossy += other.lossy;
        self.toon += other.toon;
        self.compact += other.compact;
    }
}

/// `after` as the share of `before` saved, in percent.
fn saved(before: usize, after: usize) -> f64 {
    if before == 0 {
        0.0
    } else {
        (1.0 - after as f64 / before as f64) * 100.0
    }
}

/// Whether `payload` points at its original with the reason `lossy`. The pointer is a top-level
/// `_tee` member: the last member of an object payload, or beside `result` in the object that
/// wraps any other payload.
fn lossy(payload: &str) -> bool {
    serde_json::from_str::<Value>(payload).is_ok_and(|value| {
        value
            .get("_tee")
            .and_then(|pointer| pointer.get("reason"))
            .and_then(Value::as_str)
            == Some("lossy")
    })
}

const HEADER: &str = "Real API responses whose size comes from nesting (pull requests with \
their users and repositories, webhook deliveries, workflow runs, check suites, npm registry \
documents with their versions, `cargo metadata`, PyPI's JSON API, `npm audit --json`), fetched \
by `cargo xtask bench-corpus` at the pinned versions of `corpus/registry.toml` (`set = \
\"nested\"`). A part is held out, by the rule stated there (a digest of the item's name, not its \
figures): the changes to the codecs are tuned on the rest, and the held-out total says whether \
they carry over. o200k_base tokens. *input*: the response as the package ships it (pretty or \
compact). *before*: the default as it was before `json_nested` (the same `auto` with the \
candidates `rows = [toon, columnar, json_compact]` and `object = [json_compact, toon]`). \
*default*: what the model sees from a host with no manifest and no plugins (the core \
default `auto` at `normal`, a memory tee store, inline at any size, no cut of long results), \
`_tee` pointer included; *codec*: the codec that produced it (`-` when the input went out \
unchanged); *lossy*: the payload points at its original with the reason `lossy`. *TOON*: the \
reference encoder (`toon-format`, default options); *compact JSON*: the same value without \
whitespace.\n\n\
| item | source | held out | input | before | saved | default | saved | codec | lossy | TOON | compact JSON |\n\
|---|---|---|---|---|---|---|---|---|---|---|---|\n";

fn main() {
    let items = corpus::nested();
    if items.is_empty() {
        corpus::report(
            "nested.md",
            "(not measured: the nested set is fetched by `cargo xtask bench-corpus`)\n",
        );
        return;
    }
    let project = tempfile::tempdir().expect("temp dir");
    let host = host_of(project.path(), items.len());
    let earlier = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(earlier.path().join(".parrot")).expect("project");
    std::fs::write(
        earlier.path().join(".parrot/compressors.toml"),
        "[compressor.\"*\"]\ncodec = \"auto\"\nlevel = \"normal\"\n\
         [compressor.\"*\".params]\nrows = [\"toon\", \"columnar\", \"json_compact\"]\n\
         object = [\"json_compact\", \"toon\"]\n\
         [compressor.\"*\".params.columnar]\nmin_rows = 2\n",
    )
    .expect("manifest");
    let before = host_of(earlier.path(), items.len());
    let o200k = Tokenizer::O200k;
    let seen = |host: &Host, text: &str| {
        let out = host.process(Call::new("no manifest entry", Input::Text(text)));
        o200k.count(out.text().expect("UTF-8 payload"))
    };

    let mut table = String::from(HEADER);
    // Items that came out with more tokens than they went in.
    let mut grown = 0;
    let (mut all, mut tuned, mut held_out) =
        (Counts::default(), Counts::default(), Counts::default());
    for nested in &items {
        let item = &nested.item;
        let value: Value = serde_json::from_str(&item.text).expect("nested items are JSON");
        let out = host.process(Call::new("no manifest entry", Input::Text(&item.text)));
        let payload = out.text().expect("UTF-8 payload");
        let is_lossy = out.meta.teed && lossy(payload);
        let counts = Counts {
            items: 1,
            input: o200k.count(&item.text),
            before: seen(&before, &item.text),
            default: o200k.count(payload),
            lossy: usize::from(is_lossy),
            toon: o200k.count(&toon_format::encode_default(&value).expect("reference TOON")),
            compact: o200k.count(&serde_json::to_string(&value).expect("compact")),
        };
        let codec = match (&out.meta.codec, out.meta.compressed) {
            (Some(codec), true) => codec.as_str(),
            _ => "-",
        };
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {} | {:.1}% | {} | {:.1}% | {codec} | {} | {} | {} |",
            item.name,
            item.source,
            if nested.held_out { "yes" } else { "no" },
            corpus::thousands(counts.input),
            corpus::thousands(counts.before),
            saved(counts.input, counts.before),
            corpus::thousands(counts.default),
            saved(counts.input, counts.default),
            if is_lossy { "yes" } else { "no" },
            corpus::thousands(counts.toon),
            corpus::thousands(counts.compact),
        );
        if counts.default > counts.input {
            grown += 1;
        }
        all.add(counts);
        if nested.held_out {
            held_out.add(counts);
        } else {
            tuned.add(counts);
        }
    }
    host.flush();
    before.flush();
    for (label, total) in [("total", all), ("tuned", tuned), ("held out", held_out)] {
        let _ = writeln!(
            table,
            "| **{label}** ({} items) | | | {} | {} | {:.1}% | {} | {:.1}% | | {} lossy | {} | {} |",
            total.items,
            corpus::thousands(total.input),
            corpus::thousands(total.before),
            saved(total.input, total.before),
            corpus::thousands(total.default),
            saved(total.input, total.default),
            total.lossy,
            corpus::thousands(total.toon),
            corpus::thousands(total.compact),
        );
    }
    println!("{table}");
    corpus::report("nested.md", &table);
    corpus::target(
        "nested",
        &[format!(
            "- The default saves ≥ 40% of o200k tokens on the nested set, losslessly, no item \
             growing: **{}**, {:.1}% ({} → {}; held out {:.1}%), {} lossy, {grown} grown.",
            if saved(all.input, all.default) >= 40.0 && all.lossy == 0 && grown == 0 {
                "met"
            } else {
                "missed"
            },
            saved(all.input, all.default),
            corpus::thousands(all.input),
            corpus::thousands(all.default),
            saved(held_out.input, held_out.default),
            all.lossy,
        )],
    );
}

/// A host of `project` with the defaults the table measures.
fn host_of(project: &std::path::Path, items: usize) -> Host {
    Host::builder()
        .project(project)
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::new(items)))
        // The stage decides with o200k (the no-gain rule in tokens, `auto`'s choice); this
        // bench counts every payload itself.
        .tokenizer(Arc::new(Tokenizer::O200k))
        .report_tokens(false)
        .kill_switch(Some(false))
        .inline_at_any_size(true)
        .max_result_chars(0)
        .build()
        .expect("host with the core defaults")
}
