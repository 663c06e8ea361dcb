//! The codec contract (`parrot_codec_test`) held by `tool_result_prune`, with each params row, on
//! every corpus file and on inputs made to make it act.

use parrot_codec_api::{Codec, Level, Params, Payload, build};

use super::ToolResultPrune;

/// One row per params the contract is held with.
const PARAMS: [&str; 2] = [
    "{}",
    r#"{"threshold_chars": 300, "head_chars": 100, "tail_chars": 50, "unit": "graphemes"}"#,
];

/// Over-budget results of each shape the codec prunes: plain text, a JSON string, content
/// blocks in an MCP tool result; and JSON it passes through.
fn made_inputs() -> Vec<(String, String)> {
    let text =
        "line of output, with a family \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}\n".repeat(400);
    let long = format!(r#"{{"log": "{}"}}"#, "line of output ".repeat(60));
    let string = format!(r#""{}""#, "x".repeat(9000));
    let mcp = format!(
        r#"{{"content": [{{"type": "text", "text": "{}"}}, {{"type": "image", "data": "AA=="}}, {{"type": "text", "text": "{}"}}], "isError": false}}"#,
        "a".repeat(6000),
        "b".repeat(6000)
    );
    vec![
        ("a long text".to_owned(), text),
        ("a long string member".to_owned(), long),
        ("a long JSON string".to_owned(), string),
        ("an MCP tool result".to_owned(), mcp),
    ]
}

#[test]
fn tool_result_prune_keeps_the_contract_on_the_corpus_and_made_inputs() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus");
    parrot_codec_test::assert_contract_on::<ToolResultPrune>(&PARAMS, corpus, made_inputs());
}

/// The made inputs make the codec act, so the contract is held on its outcomes, not only on
/// its passthroughs.
#[test]
fn made_inputs_are_compressed() {
    let codec: ToolResultPrune = build(Params::empty()).unwrap();
    let (_, lines) = &made_inputs()[0];
    let out = codec
        .compress(Payload::text_only(lines), Level::Normal)
        .unwrap();
    assert!(out.payload().is_some_and(|out| out.len() < lines.len()));
}
