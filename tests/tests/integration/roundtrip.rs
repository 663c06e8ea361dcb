//! Property tests: every lossless outcome expands back to its input (CONTRACT §2.1), and every
//! lossy one does not.
//!
//! The inputs are generated JSON texts with what breaks naive codecs: nulls in objects, rows
//! and arrays; `1`, `1.0` and `true` side by side; 20- to 30-digit numbers; Unicode, escapes and
//! surrogate pairs written both ways; empty arrays and objects; runs of equal elements; objects
//! already shaped like the codecs' own output (`_repeat`/`_value`, `columns`/`rows`/
//! `constants`, `_columns`/`_rows`/`_constant`, `$ref`); the query-result shape; nested
//! documents with tables at any depth and the same subtree under several names; random
//! whitespace.
//!
//! Each property runs 256 cases by default; for the 10,000-case run:
//!
//! ```text
//! PROPTEST_CASES=10000 cargo test -p parrot-tests --release --test integration roundtrip::
//! ```

use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
use parrot_codecs::{Columnar, JsonCompact, JsonNested, Toon};
use proptest::prelude::*;
use serde_json::Value;

/// A generated JSON value; strings and numbers are kept as the text to write.
#[derive(Debug, Clone)]
enum Json {
    Scalar(String),
    Array(Vec<Json>),
    /// Member names decoded (distinct), each written with its own escape choices.
    Object(Vec<(String, Json)>),
}

/// A small deterministic source of choices for rendering (whitespace, escapes).
struct Choices(u64);

impl Choices {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }

    fn whitespace(&mut self, out: &mut String) {
        if self.one_in(3) {
            let options = [" ", "\n", "\t", "\r\n  ", "  "];
            out.push_str(options[(self.next() % options.len() as u64) as usize]);
        }
    }
}

/// Writes a string as JSON, choosing for each character whether to escape it.
fn write_string(value: &str, choices: &mut Choices, out: &mut String) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' if choices.one_in(2) => out.push_str("\\n"),
            '/' if choices.one_in(2) => out.push_str("\\/"),
            c if (c as u32) < 0x20 || choices.one_in(8) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{:04x}", unit));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn render(json: &Json, choices: &mut Choices, out: &mut String) {
    match json {
        Json::Scalar(text) => {
            if let Some(value) = text.strip_prefix('\u{0}') {
                write_string(value, choices, out);
            } else {
                out.push_str(text);
            }
        }
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                choices.whitespace(out);
                render(item, choices, out);
                choices.whitespace(out);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                choices.whitespace(out);
                write_string(key, choices, out);
                choices.whitespace(out);
                out.push(':');
                choices.whitespace(out);
                render(value, choices, out);
            }
            choices.whitespace(out);
            out.push('}');
        }
    }
}

fn to_text(json: &Json, seed: u64) -> String {
    let mut out = String::new();
    let mut choices = Choices(seed | 1);
    choices.whitespace(&mut out);
    render(json, &mut choices, &mut out);
    choices.whitespace(&mut out);
    out
}

/// A string value: rendered later with its escapes (marked by a leading NUL in `Scalar`).
fn string(value: impl Into<String>) -> Json {
    Json::Scalar(format!("\u{0}{}", value.into()))
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_owned()),
        Just("1".to_owned()),
        Just("1.0".to_owned()),
        Just("-0".to_owned()),
        Just("123456789012345678901".to_owned()),
        Just("0.100000000000000000000000000001".to_owned()),
        Just("1E400".to_owned()),
        Just("-1.5e-7".to_owned()),
        "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
        (0u32..5).prop_map(|n| n.to_string()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("a".to_owned()),
        Just("A".to_owned()),
        Just("é😀\u{2028}".to_owned()),
        Just("quote \" backslash \\ slash / newline \n tab \t".to_owned()),
        Just("1".to_owned()),
        Just("null".to_owned()),
        "\\PC{0,12}",
        ".{0,6}",
    ]
}

fn scalar() -> impl Strategy<Value = Json> {
    prop_oneof![
        3 => Just(Json::Scalar("null".to_owned())),
        1 => Just(Json::Scalar("true".to_owned())),
        1 => Just(Json::Scalar("false".to_owned())),
        4 => number().prop_map(Json::Scalar),
        4 => text().prop_map(string),
    ]
}

/// Member names, among them the codecs' own (`_repeat`, `_value`, `columns`, …).
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "_repeat", "_value", "_omitted", "columns", "rows", "constants", "_columns", "_rows",
            "_constant", "$ref", "id", "a", "b", "é", "",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,6}",
    ]
}

fn object_of(value: impl Strategy<Value = Json>) -> impl Strategy<Value = Json> {
    prop::collection::vec((key(), value), 0..5).prop_map(|members| {
        let mut seen = std::collections::HashSet::new();
        Json::Object(
            members
                .into_iter()
                .filter(|(key, _)| seen.insert(key.clone()))
                .collect(),
        )
    })
}

/// Arrays with runs: each element repeated 1 to 3 times.
fn array_of(value: impl Strategy<Value = Json>) -> impl Strategy<Value = Json> {
    prop::collection::vec((value, 1usize..4), 0..5).prop_map(|runs| {
        Json::Array(
            runs.into_iter()
                .flat_map(|(item, times)| std::iter::repeat_n(item, times))
                .collect(),
        )
    })
}

fn json() -> impl Strategy<Value = Json> {
    scalar().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            3 => array_of(inner.clone()),
            3 => object_of(inner.clone()),
            // Already shaped like a run.
            1 => (1u32..4, inner).prop_map(|(count, value)| {
                Json::Object(vec![
                    ("_repeat".to_owned(), Json::Scalar(count.to_string())),
                    ("_value".to_owned(), value),
                ])
            }),
        ]
    })
}

/// Rows for `columnar`: shared columns of various kinds, rows in random member order.
#[derive(Debug, Clone, Copy)]
enum ColumnKind {
    /// A value per row.
    Varied,
    /// The same value in every row.
    Constant,
    /// `null` in every row.
    AllNull,
    /// Absent from some rows.
    Sparse,
    /// An array or object in some rows.
    Nested,
}

fn column_kind() -> impl Strategy<Value = ColumnKind> {
    prop_oneof![
        6 => Just(ColumnKind::Varied),
        3 => Just(ColumnKind::Constant),
        1 => Just(ColumnKind::AllNull),
        1 => Just(ColumnKind::Sparse),
        1 => Just(ColumnKind::Nested),
    ]
}

fn rows() -> impl Strategy<Value = Json> {
    let columns = prop::collection::vec((key(), column_kind(), scalar()), 1..7);
    let cells = prop::collection::vec(prop::collection::vec(scalar(), 7), 0..30);
    (columns, cells, any::<u64>()).prop_map(|(columns, cells, seed)| {
        let mut seen = std::collections::HashSet::new();
        let columns: Vec<_> = columns
            .into_iter()
            .filter(|(name, _, _)| seen.insert(name.clone()))
            .collect();
        let mut choices = Choices(seed | 1);
        let rows = cells
            .into_iter()
            .map(|row| {
                let mut members: Vec<(String, Json)> = Vec::new();
                for ((name, kind, constant), cell) in columns.iter().zip(row) {
                    let value = match kind {
                        ColumnKind::Varied => cell,
                        ColumnKind::Constant => constant.clone(),
                        ColumnKind::AllNull => Json::Scalar("null".to_owned()),
                        ColumnKind::Sparse if choices.one_in(3) => continue,
                        ColumnKind::Sparse => cell,
                        ColumnKind::Nested if choices.one_in(4) => Json::Array(vec![cell]),
                        ColumnKind::Nested => cell,
                    };
                    members.push((name.clone(), value));
                }
                if choices.one_in(4) && members.len() > 1 {
                    let at = (choices.next() % members.len() as u64) as usize;
                    members.rotate_left(at);
                }
                Json::Object(members)
            })
            .collect();
        Json::Array(rows)
    })
}

/// Rows as the payload, or in the query-result shape among other members.
fn table() -> impl Strategy<Value = Json> {
    let extra = prop::collection::vec((key(), json()), 0..3);
    (rows(), extra, any::<bool>(), any::<prop::sample::Index>()).prop_map(
        |(rows, extra, query, at)| {
            if !query {
                return rows;
            }
            let mut seen = std::collections::HashSet::from(["rows".to_owned()]);
            let mut members: Vec<(String, Json)> = extra
                .into_iter()
                .filter(|(key, _)| seen.insert(key.clone()))
                .collect();
            members.insert(at.index(members.len() + 1), ("rows".to_owned(), rows));
            Json::Object(members)
        },
    )
}

/// Nested documents, as `json_nested` meets them: a few shared values (tables among them),
/// each placed under several names at several depths, tables inside objects and arrays, and
/// now and then a member named as one of `json_nested`'s forms.
fn nested() -> impl Strategy<Value = Json> {
    let shared = prop::collection::vec(prop_oneof![2 => json(), 1 => rows()], 1..4);
    let slots = prop::collection::vec((key(), 0usize..8), 1..9);
    (shared, slots, rows()).prop_map(|(shared, slots, rows)| {
        let mut seen = std::collections::HashSet::new();
        let pick = |n: usize| shared[n % shared.len()].clone();
        let members = slots
            .into_iter()
            .filter(|(key, _)| seen.insert(key.clone()))
            .map(|(key, slot)| {
                let value = match slot {
                    0..=2 => pick(slot),
                    3 => rows.clone(),
                    4 => Json::Array(vec![pick(0), rows.clone(), pick(1)]),
                    5 => Json::Object(vec![
                        ("inner".to_owned(), pick(2)),
                        ("rows".to_owned(), rows.clone()),
                    ]),
                    6 => Json::Object(vec![("$ref".to_owned(), string("#/a"))]),
                    _ => Json::Object(vec![
                        ("_columns".to_owned(), Json::Array(vec![string("a")])),
                        (
                            "_rows".to_owned(),
                            Json::Array(vec![Json::Array(vec![pick(0)])]),
                        ),
                    ]),
                };
                (key, value)
            })
            .collect();
        Json::Object(members)
    })
}

/// `value` with every object member whose value is `null` removed, at every depth.
fn without_null_members(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(members) => {
                members.retain(|_, member| !member.is_null());
                members.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// Checks one codec on one input at every level: deterministic, never larger, lossless only
/// at minimal, lossless outcomes expand back, lossy ones do not.
fn check<C: Codec>(codec: &C, input: &str, same: impl Fn(&str, &str) -> bool) {
    for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
        let outcome = codec.compress(Payload::json(input), level).unwrap();
        assert_eq!(
            outcome,
            codec.compress(Payload::json(input), level).unwrap(),
            "not deterministic at {level}"
        );
        let Outcome::Changed { payload, lossy } = outcome else {
            continue;
        };
        assert!(payload.len() < input.len(), "grew at {level}: {payload}");
        let expanded = parrot_codec_api::DynCodec::expand(codec, &payload);
        if lossy {
            assert!(level.allows_loss(), "lossy at minimal: {payload}");
            if let Ok(expanded) = expanded {
                assert!(
                    !same(&expanded, input),
                    "claims loss but expands back at {level}: {payload}"
                );
            }
        } else {
            let expanded = expanded.unwrap_or_else(|err| panic!("{err} at {level}: {payload}"));
            assert!(
                same(&expanded, input),
                "at {level}\n  input    {input}\n  output   {payload}\n  expanded {expanded}"
            );
        }
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|err| panic!("{err}: {text}"))
}

fn json_compact(params: &str) -> JsonCompact {
    parrot_codec_api::build(Params::from_json(params).unwrap()).unwrap()
}

fn columnar(params: &str) -> Columnar {
    parrot_codec_api::build(Params::from_json(params).unwrap()).unwrap()
}

fn json_nested(params: &str) -> JsonNested {
    parrot_codec_api::build(Params::from_json(params).unwrap()).unwrap()
}

fn toon(hoist: bool) -> Toon {
    parrot_codec_api::build(Params::from_json(&format!(r#"{{"hoist": {hoist}}}"#)).unwrap())
        .unwrap()
}

proptest! {
    #[test]
    fn json_compact_round_trips(value in json(), seed in any::<u64>(), params in prop::sample::select(vec![
        "{}",
        r#"{"max_string_chars": 41, "max_array_items": 3}"#,
        r#"{"elide_nulls": false}"#,
        r#"{"dedup": false, "max_array_items": 1}"#,
    ])) {
        let input = to_text(&value, seed);
        let codec = json_compact(params);
        check(&codec, &input, |a, b| without_null_members(parse(a)) == without_null_members(parse(b)));
    }

    #[test]
    fn columnar_round_trips(value in table(), seed in any::<u64>(), params in prop::sample::select(vec![
        r#"{"min_rows": 1}"#,
        r#"{"min_rows": 3, "max_field_chars": 41, "sample_rows": 2}"#,
        r#"{"min_rows": 2, "heterogeneity_ratio": 1}"#,
    ])) {
        let input = to_text(&value, seed);
        let codec = columnar(params);
        check(&codec, &input, |a, b| parse(a) == parse(b));
    }

    #[test]
    fn toon_round_trips(value in json(), seed in any::<u64>(), hoist in any::<bool>()) {
        let input = to_text(&value, seed);
        check(&toon(hoist), &input, |a, b| parse(a) == parse(b));
    }

    #[test]
    fn toon_on_rows_round_trips(value in table(), seed in any::<u64>(), hoist in any::<bool>()) {
        let input = to_text(&value, seed);
        check(&toon(hoist), &input, |a, b| parse(a) == parse(b));
    }

    #[test]
    fn json_nested_round_trips(value in prop_oneof![nested(), json(), table()], seed in any::<u64>(), params in prop::sample::select(vec![
        "{}",
        r#"{"min_rows": 1, "min_ref_bytes": 1}"#,
        r#"{"refs": false}"#,
        r#"{"tables": false, "min_ref_bytes": 8}"#,
    ])) {
        let input = to_text(&value, seed);
        let codec = json_nested(params);
        check(&codec, &input, |a, b| without_null_members(parse(a)) == without_null_members(parse(b)));
    }

    #[test]
    fn json_compact_on_rows_round_trips(value in table(), seed in any::<u64>()) {
        let input = to_text(&value, seed);
        check(&json_compact("{}"), &input, |a, b| {
            without_null_members(parse(a)) == without_null_members(parse(b))
        });
    }
}

#[test]
fn corpus_files_round_trip_at_every_level() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the corpus beside the repository")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    let compact = json_compact("{}");
    let table = columnar("{}");
    let toon = toon(true);
    let nested = json_nested("{}");
    let small = json_nested(r#"{"min_rows": 1, "min_ref_bytes": 1}"#);
    for path in files {
        let input = std::fs::read_to_string(&path).unwrap();
        check(&compact, &input, |a, b| {
            without_null_members(parse(a)) == without_null_members(parse(b))
        });
        check(&table, &input, |a, b| parse(a) == parse(b));
        check(&toon, &input, |a, b| parse(a) == parse(b));
        for codec in [&nested, &small] {
            check(codec, &input, |a, b| {
                without_null_members(parse(a)) == without_null_members(parse(b))
            });
        }
    }
}
