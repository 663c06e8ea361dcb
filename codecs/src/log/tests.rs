use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};

use super::Log;

fn codec(params: &str) -> Log {
    parrot_codec_api::build(Params::from_json(params).unwrap()).unwrap()
}

fn o200k(text: &str) -> usize {
    bpe_openai::o200k_base().count(text)
}

fn corpus(name: &str) -> String {
    let path = format!("{}/../corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

#[test]
fn show_build_log() {
    let input = corpus("build-log.txt");
    let params = std::env::var("LOG_PARAMS").unwrap_or("{}".into());
    let out = codec(&params)
        .compress(Payload::text_only(&input), Level::Normal)
        .unwrap();
    let Outcome::Changed { payload, .. } = out else {
        panic!("unchanged")
    };
    println!("{payload}");
    println!(
        "tokens {} est {}",
        o200k(&payload),
        super::template::estimate_tokens(&payload)
    );
    println!(
        "in tokens {} est {}",
        o200k(&input),
        super::template::estimate_tokens(&input)
    );
}

/// The sample session's `shell_cargo_build` results.
fn session_logs() -> Vec<String> {
    let path = format!("{}/../samples/session.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"));
    text.lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|call| call["tool"] == "shell_cargo_build")
        .map(|call| call["result"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn show_session() {
    let params = std::env::var("LOG_PARAMS").unwrap_or("{}".into());
    for input in session_logs() {
        let out = codec(&params)
            .compress(Payload::text_only(&input), Level::Normal)
            .unwrap();
        let Outcome::Changed { payload, .. } = out else {
            panic!("unchanged")
        };
        println!("{payload}");
        let (a, b) = (o200k(&input), o200k(&payload));
        println!(
            "tokens {a} -> {b}: saved {:.1}% est {}",
            100.0 - 100.0 * b as f64 / a as f64,
            super::template::estimate_tokens(&payload)
        );
    }
}

/// One row per kind of variable field: a line, and its template.
const TEMPLATES: &[(&str, &str)] = &[
    ("plain words stay", "plain words stay"),
    (
        "id 550e8400-e29b-41d4-a716-446655440000 done",
        "id <uuid> done",
    ),
    ("2026-11-29T10:08:09.835Z INFO  up", "<time> INFO  up"),
    ("[10:08:09] tick", "[<time>] tick"),
    (
        "cache hit for target/debug/deps/libsyn-8a4e08f2cb66a2fa.rlib",
        "cache hit for <path>",
    ),
    ("finished in 38.21s", "finished in <dur>"),
    ("took 120ms (2m30s)", "took <dur> (<dur>)"),
    ("compiling serde v1.0.197", "compiling serde <ver>"),
    ("upgraded 1.2.3-rc.1", "upgraded <ver>"),
    ("(build step 4089)", "(build step <n>)"),
    ("loss -3.5, 99%", "loss <n>, <n>"),
    ("at 0x7ffd1234 sha deadbeef01", "at <hex> sha <hex>"),
    ("compiling crate_171 now", "compiling crate_<n> now"),
    ("unused variable `x66`", "unused variable `x<n>`"),
    ("blob sha256:9f86d081884c7d65 ok", "blob sha<n>:<hex> ok"),
    ("test tests::parses_levels ... ok", "test <test> ... ok"),
    ("    test a::b ... ignored", "    test <test> ... ignored"),
    ("--- PASS: TestParse (0.00s)", "--- PASS: <test> (<dur>)"),
    ("=== RUN   TestParse", "=== RUN   <test>"),
    (
        "  \u{2713} renders the header (5 ms)",
        "  \u{2713} <test> (<n> ms)",
    ),
    (
        "tests/test_a.py::test_x PASSED [ 50%]",
        "<test> PASSED [ <n>]",
    ),
    ("", ""),
];

#[test]
fn templates_replace_each_kind_of_variable_field() {
    for (line, expected) in TEMPLATES {
        let mut out = Vec::new();
        super::template::template(line, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), *expected, "for {line:?}");
    }
    for placeholder in super::template::PLACEHOLDERS {
        assert!(
            TEMPLATES.iter().any(|(_, t)| t.contains(placeholder)),
            "no row shows {placeholder}"
        );
    }
}
