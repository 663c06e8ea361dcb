//! The cost of the plugin boundary for `toon`: called in-process (linked as an rlib) against the
//! same codec loaded from its cdylib through the host, on the generated 10 KB rows.
//!
//! `cargo bench -p parrot-host --bench plugin_boundary_toon`. Target: ≤ 5% at 10 KB.

use criterion::{Criterion, criterion_group, criterion_main};
use parrot_codec_api::{Params, Payload};
use parrot_plugin_toon::Toon;

#[path = "../../benches/corpus.rs"]
mod corpus;
mod support;

fn boundary(c: &mut Criterion) {
    let rows = corpus::rows_payload(10_000);
    support::compare(
        c,
        "toon, 10 KB rows",
        Box::new(parrot_codec_api::build::<Toon>(Params::empty()).expect("codec")),
        support::PACKAGES[1],
        Payload::json(&rows),
    );
}

criterion_group!(benches, boundary);
criterion_main!(benches);
