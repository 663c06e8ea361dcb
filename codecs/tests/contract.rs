//! The codec contract (`parrot_codec_test`) held by every built-in codec, with each params
//! row, on every corpus file and on inputs made to make each codec act.

use parrot_codec_api::{DynCodec, Params};

/// The rows of params other than the defaults (JSON objects, as the host hands params to a
/// codec). Every built-in is also checked with its default params, `{}`, without a row here:
/// a built-in registered with inventory is held to the contract as soon as it is linked.
const PARAMS: [(&str, &str); 5] = [
    (
        "json_compact",
        r#"{"max_string_chars": 41, "max_array_items": 3}"#,
    ),
    ("json_compact", r#"{"elide_nulls": false, "dedup": false}"#),
    (
        "columnar",
        r#"{"min_rows": 2, "max_field_chars": 41, "sample_rows": 1}"#,
    ),
    ("toon", r#"{"hoist": false}"#),
    ("json_nested", r#"{"min_rows": 1, "min_ref_bytes": 1}"#),
];

/// Every built-in with its default params, then the rows of [`PARAMS`].
fn rows() -> Vec<(&'static str, &'static str)> {
    let defaults = parrot_codecs::builtins()
        .into_iter()
        .map(|builtin| (builtin.meta.name(), "{}"));
    defaults.chain(PARAMS).collect()
}

/// Inputs on which each codec acts: a long string inside JSON, an MCP tool result, rows with
/// nulls, pretty JSON, a query result, repeated lines.
fn made_inputs() -> Vec<(String, String)> {
    let retry = "retrying the connection to db-7.internal:5432 in 5 s\n".repeat(8);
    let lines = format!("start\n{retry}connected\n{}done", "ok\n".repeat(30));
    let long = format!(r#"{{"log": "{}"}}"#, "line of output ".repeat(60));
    let mcp = format!(
        r#"{{"content": [{{"type": "text", "text": "{}"}}], "isError": false}}"#,
        "x".repeat(900)
    );
    let rows = (0..12)
        .map(|i| format!(r#"{{"id": {i}, "name": "n{i}", "note": null, "ok": true, "v": 1.50}}"#))
        .collect::<Vec<_>>()
        .join(",\n  ");
    [
        ("repeated lines", lines),
        ("a long string", long),
        ("an MCP tool result", mcp),
        ("rows", format!("[\n  {rows}\n]")),
        (
            "a query result",
            format!(r#"{{"driver": "pg", "rows": [{rows}]}}"#),
        ),
    ]
    .into_iter()
    .map(|(name, text)| (name.to_owned(), text))
    .collect()
}

fn codec(name: &str, params: &str) -> Box<dyn DynCodec> {
    let builtin = parrot_codecs::builtins()
        .into_iter()
        .find(|builtin| builtin.meta.name() == name)
        .unwrap_or_else(|| panic!("no built-in \"{name}\""));
    (builtin.build)(Params::from_json(params).unwrap()).unwrap_or_else(|err| panic!("{err}"))
}

#[test]
fn every_builtin_keeps_the_contract_on_the_corpus_and_made_inputs() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let mut inputs = parrot_codec_test::inputs(corpus).unwrap_or_else(|err| panic!("{err}"));
    assert!(inputs.len() >= 8, "the corpus is in {corpus}");
    // The real captures of listings, hits, tables and VCS output, on which the text codecs act.
    let text = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/text");
    inputs.extend(parrot_codec_test::inputs(text).unwrap_or_else(|err| panic!("{err}")));
    inputs.extend(made_inputs());
    let mut found = Vec::new();
    for (name, params) in rows() {
        let codec = codec(name, params);
        let checked = inputs.iter().map(|(input, text)| (input, text.as_str()));
        if let Err(violations) = parrot_codec_test::check_all(codec.as_ref(), checked) {
            found.extend(
                violations
                    .iter()
                    .map(|(input, violation)| format!("{name} {params} on {input}: {violation}")),
            );
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n\n"));
}

#[test]
fn every_builtin_is_checked_and_every_params_row_names_one() {
    let builtins: Vec<&str> = parrot_codecs::builtins()
        .iter()
        .map(|builtin| builtin.meta.name())
        .collect();
    assert!(builtins.len() >= 8, "{builtins:?}");
    let rows = rows();
    for name in &builtins {
        assert!(
            rows.contains(&(name, "{}")),
            "no default row for \"{name}\""
        );
    }
    for (name, _) in PARAMS {
        assert!(
            builtins.contains(&name),
            "a params row for no built-in: \"{name}\""
        );
    }
}
