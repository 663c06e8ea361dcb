//! The property that lets the host fuse its JSON check into a codec's pass (see
//! [`crate::Builtin::validates_json`]): a validating built-in returns `Changed` for a payload
//! given as JSON only when `parrot_json::check` accepts the whole text, and leaves text alone.

use parrot_codec_api::{Level, Outcome, Params, Payload};
use parrot_json::JsonCheck;

use crate::builtins;

fn corpus_json() -> Vec<(String, String)> {
    let root = format!("{}/../corpus", env!("CARGO_MANIFEST_DIR"));
    let mut items: Vec<(String, String)> = std::fs::read_dir(&root)
        .unwrap_or_else(|err| panic!("{root}: {err}"))
        .map(|entry| entry.expect("a corpus entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a corpus file");
            (path.display().to_string(), text)
        })
        .collect();
    assert!(items.len() >= 7, "the corpus's JSON items: {}", items.len());
    let rows = |n: usize, cell: &str| {
        let rows: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"name":"n{}","tag":"t","cell":{cell}}}"#,
                    i % 3
                )
            })
            .collect();
        format!("[{}]", rows.join(","))
    };
    items.push(("rows".to_owned(), rows(40, "null")));
    items.push(("nested rows".to_owned(), rows(40, r#"{"a":[1,{"b":2}]}"#)));
    items.push((
        "query result".to_owned(),
        format!(
            r#"{{"driver":"pg","rows":{},"meta":{{"took":3}}}}"#,
            rows(40, "1.5")
        ),
    ));
    items.push((
        "repeats".to_owned(),
        format!("[{}]", vec![r#"{"x":null,"y":[1,1,1]}"#; 30].join(",")),
    ));
    items
}

/// Where each object of `text` opens (inside strings too: an insertion there stays valid).
fn object_starts(text: &str) -> Vec<usize> {
    text.match_indices('{').map(|(at, _)| at).collect()
}

/// Invalid variants of `text`, each with what it breaks: duplicate names and too-deep values
/// at objects near the start, the middle and the end, trailing bytes, a cut, a bad number,
/// a bad escape.
fn variants(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let starts = object_starts(text);
    let picks: Vec<usize> = if starts.is_empty() {
        Vec::new()
    } else {
        let last = starts.len() - 1;
        let mut picks = vec![0, last / 3, 2 * last / 3, last];
        picks.dedup();
        picks.into_iter().map(|k| starts[k]).collect()
    };
    let deep = format!("{}1{}", "[".repeat(520), "]".repeat(520));
    for at in picks {
        let insert = |member: &str| format!("{}{member},{}", &text[..=at], &text[at + 1..]);
        // An empty object gets a trailing comma: invalid too, which is what is tested.
        out.push((format!("duplicate at {at}"), insert(r#""dup":1,"dup":2"#)));
        out.push((
            format!("too deep at {at}"),
            insert(&format!(r#""deep":{deep}"#)),
        ));
        out.push((format!("bad escape at {at}"), insert(r#""e\x":1"#)));
        out.push((format!("bad number at {at}"), insert(r#""n":01"#)));
    }
    for tail in [" x", "]", "}", "{}", " 1", ","] {
        out.push((format!("trailing {tail:?}"), format!("{text}{tail}")));
    }
    for cut in [text.len() / 2, text.trim_end().len().saturating_sub(1)] {
        let mut cut = cut;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push((format!("cut at {cut}"), text[..cut].to_owned()));
    }
    out
}

#[test]
fn validating_builtins_change_only_json_that_the_check_accepts() {
    let codecs: Vec<_> = builtins()
        .into_iter()
        .filter(|builtin| builtin.validates_json)
        .collect();
    let names: Vec<&str> = codecs.iter().map(|b| b.meta.name()).collect();
    // Those known to claim it; a built-in added with the claim is held to it below as well.
    for claims in ["columnar", "json_compact", "json_nested", "toon"] {
        assert!(names.contains(&claims), "{claims}: {names:?}");
    }
    let params = [
        "{}",
        r#"{"dedup": false}"#,
        r#"{"elide_nulls": false}"#,
        r#"{"min_rows": 1}"#,
    ];
    for (name, text) in corpus_json() {
        assert_eq!(parrot_json::check(&text), JsonCheck::Json, "{name}");
        let mut cases = variants(&text);
        cases.push(("as it is".to_owned(), text.clone()));
        for builtin in &codecs {
            let codec_name = builtin.meta.name();
            for params in params {
                let Ok(codec) = (builtin.build)(Params::from_json(params).expect("params")) else {
                    continue; // a param this codec does not take
                };
                for level in [
                    Level::None,
                    Level::Minimal,
                    Level::Normal,
                    Level::Aggressive,
                ] {
                    for (what, case) in &cases {
                        let check = parrot_json::check(case);
                        let out = codec.compress(Payload::json(case), level);
                        if let Ok(Outcome::Changed { .. }) = out {
                            assert_eq!(
                                check,
                                JsonCheck::Json,
                                "{codec_name} {params} at {level} changed {name}, {what}"
                            );
                        }
                        assert_eq!(
                            codec.compress(Payload::text_only(case), level).ok(),
                            Some(Outcome::Unchanged),
                            "{codec_name} changed a text payload: {name}, {what}"
                        );
                    }
                }
            }
        }
    }
}

/// The variants break what they say: every one is refused by the check.
#[test]
fn the_invalid_variants_are_invalid() {
    for (name, text) in corpus_json() {
        for (what, case) in variants(&text) {
            assert_ne!(
                parrot_json::check(&case),
                JsonCheck::Json,
                "{name}, {what}: {}",
                &case[..case.len().min(200)]
            );
        }
    }
}
