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

fn inputs() -> Vec<(String, String)> {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus");
    let mut inputs = parrot_codec_test::inputs(corpus).unwrap_or_else(|err| panic!("{err}"));
    assert!(inputs.len() >= 8, "the corpus is in {corpus}");
    inputs.extend(made_inputs());
    inputs
}

#[test]
fn line_dedup_keeps_the_contract_on_the_corpus_and_made_inputs() {
    let inputs = inputs();
    for params in PARAMS {
        let codec: LineDedup = build(Params::from_json(params).unwrap()).unwrap();
        let checked = inputs.iter().map(|(name, text)| (name, text.as_str()));
        if let Err(violations) = parrot_codec_test::check_all(&codec, checked) {
            let lines: Vec<String> = violations
                .iter()
                .map(|(input, violation)| format!("{params} on {input}: {violation}"))
                .collect();
            panic!("{}", lines.join("\n\n"));
        }
    }
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
