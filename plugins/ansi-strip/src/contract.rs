//! The codec contract (`parrot_codec_test`) held by `ansi_strip`, with each params row, on
//! every corpus file and on inputs made to make it act.

use parrot_codec_api::{Codec, Level, Params, Payload, build};

use super::AnsiStrip;

/// One row per params the contract is held with.
const PARAMS: [&str; 2] = ["{}", r#"{"collapse_cr": false}"#];

/// Terminal output: colours, a window title, progress redraws.
fn made_inputs() -> Vec<(String, String)> {
    let terminal = "\u{1b}[1;31merror\u{1b}[0m: 10%\r50%\r100%\n\u{1b}]0;title\u{7}ok\n".repeat(3);
    vec![
        ("terminal output".to_owned(), terminal),
        (
            "a JSON text".to_owned(),
            r#"{"log": "\u001b[32mok\u001b[0m"}"#.to_owned(),
        ),
    ]
}

#[test]
fn ansi_strip_keeps_the_contract_on_the_corpus_and_made_inputs() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus");
    parrot_codec_test::assert_contract_on::<AnsiStrip>(&PARAMS, corpus, made_inputs());
}

/// The made inputs make the codec act, so the contract is held on its outcomes, not only on
/// its passthroughs.
#[test]
fn made_inputs_are_compressed() {
    let codec: AnsiStrip = build(Params::empty()).unwrap();
    let (_, lines) = &made_inputs()[0];
    let out = codec
        .compress(Payload::text_only(lines), Level::Normal)
        .unwrap();
    assert!(out.payload().is_some_and(|out| out.len() < lines.len()));
}
