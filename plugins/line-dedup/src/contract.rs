//! The codec contract (`parrot_codec_test`) held by `line_dedup`, with each params row, on
//! every corpus file and on inputs made to make it act.

use parrot_codec_api::{Codec, Level, Params, Payload, build};

use super::LineDedup;

/// One row per params the contract is held with.
const PARAMS: [&str; 2] = ["{}", r#"{"min_run": 2}"#];

/// Repeated lines in runs long enough to pay for the marker: on short runs (`a\na\na`, blank
/// lines) the output is longer than the input, a breach of the contract the unit tests pin
/// and the host's no-gain rule hides.
fn made_inputs() -> Vec<(String, String)> {
    let retry = "retrying the connection to db-7.internal:5432 in 5 s\n".repeat(8);
    let lines = format!("start\n{retry}connected\n{}done", "ok\n".repeat(30));
    vec![
        ("repeated lines".to_owned(), lines),
        (
            "a JSON text".to_owned(),
            format!("[{}1]", "1,\n".repeat(40)),
        ),
    ]
}

#[test]
fn line_dedup_keeps_the_contract_on_the_corpus_and_made_inputs() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus");
    parrot_codec_test::assert_contract_on::<LineDedup>(&PARAMS, corpus, made_inputs());
}

/// The made inputs make the codec act, so the contract is held on its outcomes, not only on
/// its passthroughs.
#[test]
fn made_inputs_are_compressed() {
    let codec: LineDedup = build(Params::empty()).unwrap();
    let (_, lines) = &made_inputs()[0];
    let out = codec
        .compress(Payload::text_only(lines), Level::Minimal)
        .unwrap();
    assert!(out.payload().is_some_and(|out| out.len() < lines.len()));
}
