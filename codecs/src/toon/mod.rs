//! `toon`: JSON tool results as lossless TOON (Token-Oriented Object Notation), with the
//! columns that hold one value in every row hoisted out of each table.
//!
//! TOON writes an array of objects with the same keys as a table: the keys once in a header,
//! then one line of comma-separated cells per row. Its savings are the repeated keys; a column
//! whose value is the same in every row (a `region`, an `active` flag, an all-null `notes`) is
//! still written once per row. This codec writes those columns once, above the table:
//!
//! ```text
//! rows:
//!   _constants:
//!     region: south
//!     active: true
//!   _rows[500]{store_id,revenue,c1}:
//!     S0000,1000.0,0
//!     S0001,1001.37,1
//! ```
//!
//! Any TOON reader parses that, as `{"_constants": {…}, "_rows": […]}`; the codec's inverse
//! puts each constant member back into every row (see [`Toon`] for the exact rule).
//!
//! Lossless at every level, so it acts from `minimal` up:
//!
//! - numbers are written as the input wrote them (`1000.0`, `1E5`, 30-digit integers), where
//!   the reference encoder would write `1000`; they are numbers under TOON's grammar all the
//!   same. A payload with a number outside the range of a double (`1E400`, a 500-digit
//!   integer) passes through: a TOON decoder reads such a number as a string (the reference
//!   one does), and quoting it would make it one, so no TOON form of it is lossless;
//! - everything else follows the reference layout (TOON spec 4.4, two-space indent, comma
//!   delimiter), strings and keys quoted by `toon-format`'s own rules.
//!
//! The codec declares text output ([`Codec::TEXT_OUTPUT`]): its output for a JSON payload is the
//! TOON document itself, which the host takes as it is; only when the host adds a `_tee`
//! pointer does it wrap the document, as a JSON string, in `{"result": …, "_tee": …}`. Payloads
//! that are not a non-empty object or array, that hold a number beyond a double's range, JSON
//! nested deeper than the host's limit
//! (`parrot_json::MAX_DEPTH`, 512 levels), text payloads, and payloads whose TOON would not be
//! strictly smaller than the input pass through.
//!
//! Tables of flat rows (a root array of objects with the same members, or a root object of
//! such arrays and primitives: most query results) are written without building a tree, in
//! two passes over the input (`stream.rs`), and the inverse writes their JSON line by line;
//! every other shape goes through a tree of the input (`parrot_json::Value`). Both ways write
//! the same bytes.
//!
//! It is a built-in (it was a plugin package before) so that, with no plugin loaded, a table
//! comes out at or under reference TOON's size, with its constant columns hoisted (CONTRACT
//! §2.5).
//!
//! # Cutting an output to a size
//!
//! [`Toon::cut`] (the codec's `CUT`, which the host asks for when a result is over its
//! `max_result_chars`) cuts a document that ends with a table at its top level between whole
//! rows, everything above the rows kept whole, and names the rows not shown with the `pointer`
//! and `rows` selectors:
//! `[… cut at max_result_chars: R of N rows not shown, rows A-B of the array at /rows; wm_get_result {"pointer":"/rows","rows":"A-B"}]`.
//! Any other document is left to the host (see `cut.rs`).

mod cut;
mod decode;
mod encode;
mod hoist;
mod stream;

use parrot_codec_api::{Codec, CodecError, Cut, Inverse, Level, Outcome, Params, Payload};
use parrot_json::{Str, Value};

/// Whether the JSON number `text` is outside the range of a double (it would read as infinity):
/// TOON decoders read such a number back as a string.
fn beyond_double(text: &str) -> bool {
    // Below 1.7e308 (309 digits) without an exponent, nothing overflows: most numbers stop here.
    let maybe = text.len() > 300 || text.bytes().any(|b| b | 0x20 == b'e');
    maybe && !text.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Whether any number in `value` is [`beyond_double`].
fn holds_number_beyond_double(value: &Value<'_>) -> bool {
    match value {
        Value::Number(text) => beyond_double(text),
        Value::Array(items) => items.iter().any(holds_number_beyond_double),
        Value::Object(members) => members.iter().any(|(_, v)| holds_number_beyond_double(v)),
        _ => false,
    }
}

/// The members of an object of the tree, in order.
type Members<'a> = Vec<(Str<'a>, Value<'a>)>;

/// The member `name` (compared decoded) of an object's `members`, looked for first at `index`
/// (the rows of a table usually share one member order, so this is one comparison per cell).
fn member<'v, 'a>(
    members: &'v [(Str<'a>, Value<'a>)],
    index: usize,
    name: &str,
) -> Option<&'v Value<'a>> {
    match members.get(index) {
        Some((key, value)) if key.is(name) => Some(value),
        _ => members
            .iter()
            .find_map(|(key, value)| key.is(name).then_some(value)),
    }
}

/// The `toon` codec.
///
/// Params, checked when the host is built:
///
/// | key     | default | meaning                                                      |
/// |---------|---------|--------------------------------------------------------------|
/// | `hoist` | `true`  | move columns that hold one value in every row out of tables  |
///
/// With `hoist`, a table (an array the reference encoder writes as `key[N]{fields}:`) of two
/// or more rows in which some columns hold one value in every row (equal as the contract
/// counts it: numbers by their text) is written as the object
/// `{"_constants": {<column>: <value>, …}, "_rows": [<the rows without those columns>]}`, when
/// that is strictly shorter. Reading back, an object with exactly the members `_constants` (an
/// object) then `_rows` (an array of objects) becomes the array of its rows, each row taking
/// the constant members after its own. A payload that already holds an object of that shape is
/// passed through, so reading back is never ambiguous.
///
/// # Examples
///
/// At `minimal`, `{"driver":"pg","rows":[…]}` with four rows of
/// `{"id":i,"region":"south","active":true,"notes":null}` becomes this TOON document (the
/// codec declares text output, so the host takes it as it is):
///
/// ```text
/// driver: pg
/// rows:
///   _constants:
///     region: south
///     active: true
///     notes: null
///   _rows[4]{id}:
///     0
///     1
///     2
///     3
/// ```
///
/// With two such rows the plain table, `rows[2]{id,region,active,notes}:`, is shorter, and is
/// written instead.
#[derive(Debug)]
pub struct Toon {
    hoist: bool,
}

impl Toon {
    /// Rebuilds the JSON of a lossless outcome from its TOON, compact.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput` naming what cannot be read when `payload` is not
    /// TOON this codec wrote.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        let toon = payload;
        if let Some(json) = decode::expand(toon, self.hoist) {
            return Ok(json);
        }
        let value =
            decode::decode(toon).map_err(|err| CodecError::invalid_input(err.to_string()))?;
        let value = if self.hoist {
            hoist::unhoist(value)
        } else {
            value
        };
        let mut out = String::with_capacity(toon.len() * 2);
        value.write(&mut out);
        Ok(out)
    }
}

impl Codec for Toon {
    const NAME: &'static str = "toon";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    const TEXT_OUTPUT: bool = true;
    const CUT: Option<Cut<Self>> = Some(Self::cut);

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        Ok(Toon {
            hoist: params.bool("hoist", true)?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if !payload.is_json() || !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        if let Some(toon) = stream::encode(input, self.hoist) {
            return Ok(if toon.len() < input.len() {
                Outcome::lossless(toon)
            } else {
                Outcome::Unchanged
            });
        }
        let Ok(value) = Value::parse(input) else {
            return Ok(Outcome::Unchanged);
        };
        let container = match &value {
            Value::Array(items) => !items.is_empty(),
            Value::Object(members) => !members.is_empty(),
            _ => false,
        };
        if !container
            || (self.hoist && hoist::contains_hoisted(&value))
            || holds_number_beyond_double(&value)
        {
            return Ok(Outcome::Unchanged);
        }
        let toon = encode::encode(&value, self.hoist);
        Ok(if toon.len() < input.len() {
            Outcome::lossless(toon)
        } else {
            Outcome::Unchanged
        })
    }
}

inventory::submit! { crate::Builtin::validating::<Toon>() }

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use parrot_codec_api::build;

    fn codec(hoist: bool) -> Toon {
        build::<Toon>(Params::from_json(&format!(r#"{{"hoist": {hoist}}}"#)).unwrap()).unwrap()
    }

    fn corpus(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus")
            .join(name);
        std::fs::read_to_string(path).unwrap()
    }

    const CORPUS_JSON: [&str; 7] = [
        "github-get-repository.json",
        "github-labels.json",
        "github-paginate-issues.json",
        "github-project-cards.json",
        "github-repos.json",
        "github-search-issues.json",
        "query-500x12.json",
    ];

    /// The TOON written for `input` (no JSON-string wrapper), whether or not it is smaller.
    fn toon(input: &str, hoist: bool) -> String {
        encode::encode(&Value::parse(input).expect(input), hoist)
    }

    /// Decodes `toon` with this crate's reader and puts hoisted tables back: compact JSON.
    fn read_back(toon: &str, hoist: bool) -> String {
        let value = decode::decode(toon).unwrap_or_else(|err| panic!("{err} in\n{toon}"));
        let value = if hoist { hoist::unhoist(value) } else { value };
        let mut out = String::new();
        value.write(&mut out);
        out
    }

    fn same(a: &str, b: &str) -> bool {
        parrot_json::equivalent(a, b, false)
    }

    /// How many containers deep `value` nests.
    fn nesting(value: &Value<'_>) -> usize {
        match value {
            Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
            Value::Object(members) => {
                1 + members
                    .iter()
                    .map(|(_, value)| nesting(value))
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    /// Every form of the reference layout, with canonical numbers.
    const FORMS: &[&str] = &[
        r#"{"name":"Alice","age":30,"ok":true,"none":null}"#,
        r#"{"user":{"name":"Alice","tags":["a","b"]},"empty":{},"list":[]}"#,
        r#"[1,"two",true,null,-3.5]"#,
        r#"[[1,2],[],["a","b,c"]]"#,
        r#"{"users":[{"id":1,"name":"Alice"},{"id":2,"name":"Bob"}]}"#,
        r#"{"orders":[{"id":1,"customer":{"name":"Ada","country":"DK"},"total":99},{"id":2,"customer":{"name":"Bob","country":"UK"},"total":149}]}"#,
        r#"{"servers":{"alpha":{"host":"a.example.com","port":8080},"beta":{"host":"b.example.com","port":9090}}}"#,
        r#"{"alice":{"age":30,"city":"Berlin"},"bob":{"age":25,"city":"Oslo"}}"#,
        r#"{"items":[1,[2,3],{"a":1},{},[{"x":1}],"s"]}"#,
        r#"[{"t":[{"a":1},{"a":2}],"n":1},{"k":{"p":{"x":1},"q":{"x":2}},"m":2},{"e":[],"f":1},{"g":[1,2]},{"h":[[1],{"z":0}]},{"o":{"deep":{"er":1}},"r":[]},{"p":"v"}]"#,
        r##"{"quoted":["", " pad", "true", "42", "-x", "#c", "a:b", "q\"uote", "back\\slash", "line\nbreak", "tab\tx", "[b]", "{c}", "05", "1e3", "café"]}"##,
        r#"{"weird key":1,"123":2,"café":3,"a.b_c":4,"":5,"-k":6}"#,
        r#"[{"a b":1,"c":"x,y"},{"a b":2,"c":"z"}]"#,
        r#"{"nested":[[{"a":1}],[[1,2],[3]]]}"#,
        "[{},{}]",
        r#"[{"a":[]},{"a":[]}]"#,
        r#"{"a":{"b":{"c":{"d":[{"e":1,"f":{"g":2}},{"e":3,"f":{"g":4}}]}}}}"#,
    ];

    #[test]
    fn without_hoisting_the_output_is_the_reference_encoders() {
        let corpus: Vec<String> = CORPUS_JSON
            .iter()
            .filter(|name| **name != "query-500x12.json")
            .map(|name| corpus(name))
            .collect();
        for input in FORMS
            .iter()
            .copied()
            .chain(corpus.iter().map(String::as_str))
        {
            let value: serde_json::Value = serde_json::from_str(input).unwrap();
            let reference = toon_format::encode_default(&value).unwrap();
            assert_eq!(toon(input, false), reference, "for {input}");
        }
    }

    #[test]
    fn every_form_reads_back_exactly_and_as_the_reference_decoder_reads_it() {
        for hoist in [false, true] {
            for input in FORMS {
                let written = toon(input, hoist);
                assert!(
                    same(&read_back(&written, hoist), input),
                    "{input} → {written}"
                );
                // Before hoisted tables are put back, this reader and the reference agree.
                let ours: serde_json::Value =
                    serde_json::from_str(&read_back(&written, false)).unwrap();
                let reference: serde_json::Value = toon_format::decode_strict(&written)
                    .unwrap_or_else(|err| panic!("{err} in\n{written}"));
                assert_eq!(ours, reference, "for {input}");
            }
        }
    }

    #[test]
    fn numbers_keep_their_text() {
        let cases = [
            (r#"{"a":1000.0}"#, "a: 1000.0"),
            (r#"{"a":[1E5,-0,0.50,1e-7]}"#, "a[4]: 1E5,-0,0.50,1e-7"),
            (
                r#"{"big":123456789012345678901234567890}"#,
                "big: 123456789012345678901234567890",
            ),
            (r#"{"s":"1000.0"}"#, r#"s: "1000.0""#),
        ];
        for (input, expected) in cases {
            let written = toon(input, true);
            assert_eq!(written, expected);
            assert_eq!(read_back(&written, true), input);
        }
    }

    /// `n` rows of `{"id": i, <constant members>}`.
    fn rows(n: usize, constants: &str) -> String {
        let rows: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"id":{i},{constants}}}"#))
            .collect();
        format!("[{}]", rows.join(","))
    }

    #[test]
    fn constant_columns_are_hoisted_where_shorter() {
        let region = r#""region":"south","active":true,"notes":null"#;
        let cases: Vec<(String, String)> = vec![
            // Root table.
            (
                rows(4, region),
                "_constants:\n  region: south\n  active: true\n  notes: null\n_rows[4]{id}:\n  0\n  1\n  2\n  3".into(),
            ),
            // A member's table.
            (
                format!(r#"{{"driver":"pg","rows":{}}}"#, rows(4, region)),
                "driver: pg\nrows:\n  _constants:\n    region: south\n    active: true\n    notes: null\n  _rows[4]{id}:\n    0\n    1\n    2\n    3".into(),
            ),
            // A list item's first member.
            (
                format!(r#"[{{"t":{}}},1]"#, rows(8, region)),
                "[2]:\n  - t:\n      _constants:\n        region: south\n        active: true\n        notes: null\n      _rows[8]{id}:\n        0\n        1\n        2\n        3\n        4\n        5\n        6\n        7\n  - 1".into(),
            ),
            // Every column constant: the rows are empty objects.
            (
                format!("[{}]", [r#"{"region":"south","active":true}"#; 4].join(",")),
                "_constants:\n  region: south\n  active: true\n_rows[4]:\n  -\n  -\n  -\n  -".into(),
            ),
            // A constant group column is hoisted whole.
            (
                rows(6, r#""user":{"name":"ada","org":"acme"}"#),
                "_constants:\n  user:\n    name: ada\n    org: acme\n_rows[6]{id}:\n  0\n  1\n  2\n  3\n  4\n  5".into(),
            ),
            // Too short to pay: the plain table.
            (rows(2, r#""k":"v""#), "[2]{id,k}:\n  0,v\n  1,v".into()),
            // `1000` and `1000.0` are different values: nothing is constant.
            (
                r#"[{"a":1000,"b":1},{"a":1000.0,"b":2},{"a":1000,"b":3}]"#.into(),
                "[3]{a,b}:\n  1000,1\n  1000.0,2\n  1000,3".into(),
            ),
        ];
        for (input, expected) in cases {
            let written = toon(&input, true);
            assert_eq!(written, expected, "for {input}");
            assert!(same(&read_back(&written, true), &input), "for {input}");
            // Off, the same table is written plain.
            assert!(!toon(&input, false).contains("_constants"));
        }
    }

    #[test]
    fn hoisted_rows_take_the_constants_after_their_own_members() {
        let input = rows(4, r#""k":"v","n":null"#);
        let written = toon(&input, true);
        assert_eq!(
            read_back(&written, true),
            r#"[{"id":0,"k":"v","n":null},{"id":1,"k":"v","n":null},{"id":2,"k":"v","n":null},{"id":3,"k":"v","n":null}]"#
        );
        // Member order is not kept (the contract does not count it): constants come last.
        let reordered: Vec<String> = (0..4)
            .map(|i| format!(r#"{{"kind":"constant value","id":{i}}}"#))
            .collect();
        let reordered = format!("[{}]", reordered.join(","));
        let written = toon(&reordered, true);
        assert!(written.starts_with("_constants:"), "{written}");
        assert_eq!(
            read_back(&written, true),
            r#"[{"id":0,"kind":"constant value"},{"id":1,"kind":"constant value"},{"id":2,"kind":"constant value"},{"id":3,"kind":"constant value"}]"#
        );
        assert!(same(&read_back(&written, true), &reordered));
    }

    #[test]
    fn compress_writes_the_document_and_expands_back() {
        for (hoist, name) in [true, false]
            .into_iter()
            .flat_map(|hoist| CORPUS_JSON.map(|name| (hoist, name)))
        {
            let codec = codec(hoist);
            let input = corpus(name);
            let out = codec
                .compress(Payload::json(&input), Level::Minimal)
                .unwrap();
            let Outcome::Changed { payload, lossy } = out else {
                // Left alone only when its TOON is not smaller.
                let document = toon(&input, hoist);
                assert!(document.len() >= input.len(), "{name} was left unchanged");
                assert!(same(&read_back(&document, hoist), &input), "{name}");
                continue;
            };
            assert!(!lossy);
            assert!(payload.len() < input.len());
            assert_eq!(payload, toon(&input, hoist));
            assert!(same(&codec.expand(&payload).unwrap(), &input), "{name}");
        }
    }

    #[test]
    fn query_result_hoists_its_four_constant_columns() {
        let input = corpus("query-500x12.json");
        let written = toon(&input, true);
        assert!(
            written.contains(
                "rows:\n  _constants:\n    region: south\n    active: true\n    notes: null\n    c0: 0\n  _rows[500]{store_id,revenue,c1,c2,c3,c4,c5,c6}:\n    S0000,1000.0,0,0,0,0,0,0\n"
            ),
            "{}",
            &written[..400]
        );
    }

    #[test]
    fn numbers_beyond_a_double_pass_through() {
        let digits = "9".repeat(500);
        let payloads = [
            r#"[{"id":1,"v":1E400},{"id":2,"v":3},{"id":3,"v":4}]"#.to_owned(),
            r#"{"a":{"b":[1,2,-1e999999]},"c":"some text to shorten"}"#.to_owned(),
            format!(r#"{{"n":{digits},"rows":[{{"a":1,"b":2}},{{"a":3,"b":4}}]}}"#),
            format!(r#"[{{"k":"x","v":{digits}}},{{"k":"y","v":2}}]"#),
        ];
        for input in &payloads {
            for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
                let out = codec(true).compress(Payload::json(input), level).unwrap();
                assert_eq!(out, Outcome::Unchanged, "for {input} at {level:?}");
            }
        }
        // The edge: the largest double still is one; a small exponent or a long fraction too.
        for text in [
            "1.7976931348623157e308",
            "1e-400",
            "0.5",
            &format!("0.{digits}"),
        ] {
            assert!(!beyond_double(text), "{text}");
        }
        for text in ["1.8e308", "1E400", "-1e999999", &digits] {
            assert!(beyond_double(text), "{text}");
        }
    }

    #[test]
    fn payloads_it_does_not_take_pass_through() {
        let deep = format!("{}1{}", r#"{"a":"#.repeat(40), "}".repeat(40));
        let semi: Vec<String> = (0..30)
            .map(|i| match i % 3 {
                0 => format!(r#"{{"id":{i},"a":1}}"#),
                1 => format!(r#"{{"id":{i},"b":[1]}}"#),
                _ => format!(r#"{{"id":{i},"c":{{"d":null}}}}"#),
            })
            .collect();
        let semi = format!("[{}]", semi.join(","));
        let shaped_rows: Vec<String> = (0..10)
            .map(|i| format!(r#"{{"x":{i},"y":{i},"z":{i}}}"#))
            .collect();
        let shaped = format!(
            r#"{{"a":{{"_constants":{{"k":1}},"_rows":[{}]}}}}"#,
            shaped_rows.join(",")
        );
        let cases = [
            Payload::text_only("a: 1"),
            Payload::json("42"),
            Payload::json(r#""text""#),
            Payload::json("[]"),
            Payload::json("{}"),
            Payload::json(&deep),
            Payload::json(&semi),
            // Already as short as TOON makes it.
            Payload::json("[1,2]"),
            // Holds the hoisted shape: reading back could not tell it from a hoisted table.
            Payload::json(&shaped),
        ];
        for payload in cases {
            for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
                let out = codec(true).compress(payload, level).unwrap();
                assert_eq!(out, Outcome::Unchanged, "for {payload:?} at {level:?}");
            }
        }
        // Without hoisting, the hoisted shape is ordinary data.
        let codec = codec(false);
        let out = codec
            .compress(Payload::json(&shaped), Level::Minimal)
            .unwrap();
        let payload = out.payload().expect("encoded");
        assert!(same(&codec.expand(payload).unwrap(), &shaped));
    }

    #[test]
    fn payloads_nested_512_deep_are_encoded_and_513_pass_through() {
        // A table whose repeated keys pay for the indentation of the deep member's lines.
        let rows: Vec<String> = (0..6000)
            .map(|i| {
                format!(
                    r#"{{"identifier_number":{i},"description_text":"row {i}","category_name":"c{}"}}"#,
                    i % 7
                )
            })
            .collect();
        // The root object, then `deep`'s chain: `depth` nested containers in all. Chains of
        // objects, of arrays, and of list items (an array holding an object holding an array).
        let chains: [(&str, &str, usize); 3] =
            [(r#"{"a":"#, "}", 1), ("[", "]", 1), (r#"[{"a":"#, "}]", 2)];
        for (open, close, levels) in chains {
            let payload = |depth: usize| {
                let links = (depth - 1) / levels;
                let inner = if (depth - 1) % levels == 1 {
                    "[1]"
                } else {
                    "1"
                };
                let chain = format!("{}{inner}{}", open.repeat(links), close.repeat(links));
                format!(r#"{{"rows":[{}],"deep":{chain}}}"#, rows.join(","))
            };
            let (at_limit, over) = (payload(parrot_json::MAX_DEPTH), payload(513));
            assert_eq!(parrot_json::check(&at_limit), parrot_json::JsonCheck::Json);
            assert_eq!(parrot_json::check(&over), parrot_json::JsonCheck::TooDeep);
            for hoist in [true, false] {
                let codec = codec(hoist);
                let out = codec
                    .compress(Payload::json(&at_limit), Level::Minimal)
                    .unwrap();
                let document = out.payload().expect("encoded at 512 levels");
                assert!(same(&codec.expand(document).unwrap(), &at_limit), "{open}");
                let out = codec.compress(Payload::json(&over), Level::Minimal);
                assert_eq!(out, Ok(Outcome::Unchanged), "{open}");
            }
        }
    }

    #[test]
    fn the_deepest_document_the_reader_takes_expands_without_overflow() {
        let document = |levels: usize| {
            let lines: Vec<String> = (0..levels)
                .map(|depth| format!("{}a:", "  ".repeat(depth)))
                .chain(std::iter::once(format!("{}a: 1", "  ".repeat(levels))))
                .collect();
            lines.join("\n")
        };
        let levels = decode::MAX_INDENT;
        let json = codec(true).expand(&document(levels)).unwrap();
        let nested = format!(
            "{}1{}",
            r#"{"a":"#.repeat(levels + 1),
            "}".repeat(levels + 1)
        );
        assert_eq!(json, nested);
        let err = codec(true).expand(&document(levels + 1)).unwrap_err();
        // The last line, one level too deep.
        let line = format!("TOON line {}:", levels + 2);
        assert!(err.to_string().starts_with(&line), "{err}");
    }

    #[test]
    fn expand_refuses_what_it_did_not_write() {
        // Each document is written as a JSON string, for its escapes.
        let cases = [
            (
                r#""a:\n   b: 1""#,
                "TOON line 2: a blank line, or an indent",
            ),
            (
                r#""a[3]: 1,2""#,
                "TOON line 1: the header announces 3 values, the line has 2",
            ),
            (r#""[2]{a,b}:\n  1,2""#, "TOON line 3: missing a table row"),
            (
                r#""[1]{a,b}:\n  1""#,
                "TOON line 2: expected 2 cells, the row has 1",
            ),
            (r#""a: \"x""#, "TOON line 1: an unterminated string"),
            (r#""a: 1\n  b: 2""#, "TOON line 2: unexpected indent"),
            (r#""a\n""#, "TOON line 2: a blank line"),
            (r#""a b: 1""#, "TOON line 1: expected ':' after the key"),
        ];
        for (payload, expected) in cases {
            let document = parrot_json::decode_string(payload).unwrap();
            let err = codec(true).expand(&document).unwrap_err();
            assert!(err.to_string().contains(expected), "for {payload}: {err}");
        }
    }

    #[test]
    fn params_are_checked() {
        let err = build::<Toon>(Params::from_json(r#"{"hoist": "yes"}"#).unwrap()).unwrap_err();
        assert!(err.to_string().contains("param \"hoist\""), "{err}");
        let err = build::<Toon>(Params::from_json(r#"{"hoisting": true}"#).unwrap()).unwrap_err();
        assert!(err.to_string().contains("unknown key"), "{err}");
    }

    /// A small deterministic generator of JSON texts rich in what TOON treats specially:
    /// tables (with constant columns), nested groups, keyed objects, lists, awkward strings and
    /// every form of number.
    struct Generator(u64);

    impl Generator {
        fn next(&mut self, below: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % below
        }

        fn scalar(&mut self) -> String {
            const STRINGS: [&str; 14] = [
                r#""a""#,
                r#""""#,
                r#"" x""#,
                r#""true""#,
                r#""12""#,
                r#""-d""#,
                r#""a:b""#,
                r#""q\"t""#,
                r#""l\nb""#,
                r#""c,d""#,
                r#""[x]""#,
                r#""é😀""#,
                r##""#h""##,
                r#""1e5""#,
            ];
            const NUMBERS: [&str; 8] = [
                "0",
                "-0",
                "1.0",
                "1E5",
                "-2.50e-3",
                "7",
                "123456789012345678901234",
                "0.1",
            ];
            match self.next(5) {
                0 => "null".into(),
                1 => ["true", "false"][self.next(2) as usize].into(),
                2 => NUMBERS[self.next(8) as usize].into(),
                _ => STRINGS[self.next(14) as usize].into(),
            }
        }

        fn key(&mut self) -> String {
            const KEYS: [&str; 8] = ["id", "name", "a.b", "_rows", "x y", "", "café", "k-1"];
            format!("{:?}", KEYS[self.next(8) as usize])
        }

        fn value(&mut self, depth: u32) -> String {
            if depth == 0 {
                return self.scalar();
            }
            match self.next(6) {
                0 => self.scalar(),
                1 => self.table(depth),
                2 | 3 => {
                    let n = self.next(4);
                    let items: Vec<String> = (0..n).map(|_| self.value(depth - 1)).collect();
                    format!("[{}]", items.join(","))
                }
                _ => {
                    let n = self.next(4);
                    let mut keys: Vec<String> = (0..n).map(|_| self.key()).collect();
                    keys.sort();
                    keys.dedup();
                    let members: Vec<String> = keys
                        .into_iter()
                        .map(|key| format!("{key}:{}", self.value(depth - 1)))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }
            }
        }

        /// Rows with the same keys; some columns constant, some nested objects.
        fn table(&mut self, depth: u32) -> String {
            let rows = 1 + self.next(8);
            let columns = 1 + self.next(4);
            let constant: Vec<Option<String>> = (0..columns)
                .map(|_| (self.next(2) == 0).then(|| self.value(depth.saturating_sub(2))))
                .collect();
            let rows: Vec<String> = (0..rows)
                .map(|_| {
                    let cells: Vec<String> = constant
                        .iter()
                        .enumerate()
                        .map(|(c, value)| {
                            let value = value.clone().unwrap_or_else(|| self.scalar());
                            format!(r#""c{c}":{value}"#)
                        })
                        .collect();
                    format!("{{{}}}", cells.join(","))
                })
                .collect();
            format!("[{}]", rows.join(","))
        }
    }

    /// A generated table: `rows` objects with the same members in the same order, some
    /// columns constant (some of those written differently in each row: `"a"` and `"\u0061"`),
    /// as a root array or as a member of a root object beside primitives.
    fn flat_table(generator: &mut Generator) -> String {
        const KEYS: [&str; 10] = [
            "id", "name", "a.b", "x y", "café", "123", "_rows", "", "k-1", "notes",
        ];
        let rows = 1 + generator.next(6);
        let columns = 1 + generator.next(5) as usize;
        let start = generator.next(KEYS.len() as u64) as usize;
        let keys: Vec<&str> = (0..columns)
            .map(|c| KEYS[(start + c) % KEYS.len()])
            .collect();
        let constant: Vec<Option<String>> = (0..columns)
            .map(|_| (generator.next(2) == 0).then(|| generator.scalar()))
            .collect();
        let rows: Vec<String> = (0..rows)
            .map(|_| {
                let cells: Vec<String> = keys
                    .iter()
                    .zip(&constant)
                    .map(|(key, value)| {
                        let value = match value {
                            Some(value) if value == r#""a""# && generator.next(2) == 0 => {
                                r#""\u0061""#.to_owned()
                            }
                            Some(value) => value.clone(),
                            None => generator.scalar(),
                        };
                        format!("{key:?}:{value}")
                    })
                    .collect();
                format!("{{{}}}", cells.join(", "))
            })
            .collect();
        let table = format!("[ {} ]", rows.join(",\n "));
        match generator.next(3) {
            0 => table,
            1 => format!(r#"{{"driver":"pg","rows":{table},"empty":[],"n":-0}}"#),
            _ => format!(r#"{{"t":{table}}}"#),
        }
    }

    #[test]
    fn the_quoting_check_agrees_with_toon_formats() {
        const PIECES: [&str; 30] = [
            "a", "Z", "0", "7", "+", "-", ".", "e", "E", " ", "\t", ":", "\"", "\\", "[", "]", "{",
            "}", ",", "#", "\n", "\u{1}", "\u{1f}", "é", "😀", "true", "null", "fals", "1e5", "|",
        ];
        let mut generator = Generator(3);
        for _ in 0..200_000 {
            let len = generator.next(6);
            let text: String = (0..len)
                .map(|_| PIECES[generator.next(PIECES.len() as u64) as usize])
                .collect();
            assert_eq!(
                encode::needs_quoting(&text),
                toon_format::needs_quoting(&text, ','),
                "for {text:?}"
            );
            let mut written = String::new();
            encode::push_string(&text, &mut written);
            let reference = if toon_format::needs_quoting(&text, ',') {
                format!("\"{}\"", toon_format::escape_string(&text))
            } else {
                text.clone()
            };
            assert_eq!(written, reference);
        }
    }

    #[test]
    fn the_escaping_agrees_with_toon_formats() {
        // Every ASCII character (the C0 controls, `"`, `\\`, DEL among them), non-ASCII of
        // each UTF-8 length, and runs long enough for the eight-byte steps of the scan.
        let mut pieces: Vec<String> = (0..0x80u8).map(|b| char::from(b).to_string()).collect();
        pieces.extend(
            ["é", "😀", "日本", "\u{2028}", "\u{feff}", "plain text run"].map(String::from),
        );
        let mut generator = Generator(9);
        for i in 0..100_000 {
            let text: String = if i < pieces.len() {
                pieces[i].clone()
            } else {
                let len = generator.next(12);
                (0..len)
                    .map(|_| pieces[generator.next(pieces.len() as u64) as usize].as_str())
                    .collect()
            };
            let mut written = String::new();
            encode::push_quoted(&text, &mut written);
            let reference = format!("\"{}\"", toon_format::escape_string(&text));
            assert_eq!(written, reference, "for {text:?}");
        }
    }

    #[test]
    fn the_streaming_encoder_writes_what_the_tree_writes() {
        let mut generator = Generator(21);
        let mut hoisted = 0;
        for _ in 0..5000 {
            let input = flat_table(&mut generator);
            let tree = Value::parse(&input).expect(&input);
            for hoist in [true, false] {
                let streamed = stream::encode(&input, hoist);
                let expected = encode::encode(&tree, hoist);
                assert_eq!(streamed.as_deref(), Some(expected.as_str()), "for {input}");
                hoisted += usize::from(expected.contains("_constants:"));
            }
        }
        assert!(hoisted > 500, "{hoisted} hoisted tables");
        // Whatever it takes, it writes as the tree does; what is not JSON it refuses.
        let mut generator = Generator(5);
        for _ in 0..3000 {
            let input = generator.value(3);
            for hoist in [true, false] {
                if let Some(streamed) = stream::encode(&input, hoist) {
                    let tree = Value::parse(&input).expect(&input);
                    assert_eq!(streamed, encode::encode(&tree, hoist), "for {input}");
                }
            }
        }
        // Spacing anywhere JSON allows it, and tables wider than eight columns.
        let wide: Vec<String> = (0..3)
            .map(|row| {
                let cells: Vec<String> = (0..12)
                    .map(|c| format!(r#""c{c}" :{}"#, if c % 3 == 0 { row } else { c }))
                    .collect();
                format!("{{ {} }}", cells.join(" ,\r\n\t"))
            })
            .collect();
        let wide = format!(" [\n{}\n] ", wide.join(" ,\n"));
        for input in [
            wide.as_str(),
            "{ \"n\" : 1.0 , \"rows\" : [ {\"a\" :true ,\"b\": \"x\" } , {\"a\":true,\"b\":\"y\"} ,{\"a\":true,\"b\":\"z\"}]}",
        ] {
            let tree = Value::parse(input).expect(input);
            for hoist in [true, false] {
                let expected = encode::encode(&tree, hoist);
                assert_eq!(stream::encode(input, hoist), Some(expected), "for {input}");
            }
        }
        let duplicate = wide.replace("\"c11\"", "\"c10\"");
        assert_eq!(stream::encode(&duplicate, true), None);
        assert!(Value::parse(&duplicate).is_err());
        for input in [
            "[{\"a\":1},]",
            "[{\"a\":01}]",
            "[{\"a\":\"\\ud800\"}]",
            "[{\"a\":1,\"a\":2}]",
            "{\"a\":1,\"a\":[]}",
            "[{\"a\":1},{\"a\":tru}]",
            "[{\"a\":\"x\ny\"}]",
            "[{\"a\":1}] x",
            "[{\"a\":1},{\"b\":1}]",
            "[{\"a\":1},{}]",
        ] {
            assert_eq!(stream::encode(input, true), None, "for {input}");
        }
    }

    #[test]
    fn the_streaming_expand_writes_what_the_tree_reads() {
        let mut generator = Generator(34);
        let mut streamed = 0;
        for round in 0..6000 {
            let input = if round % 2 == 0 {
                flat_table(&mut generator)
            } else {
                generator.value(3)
            };
            let Ok(tree) = Value::parse(&input) else {
                continue;
            };
            if tree.is_scalar() {
                continue;
            }
            for hoist in [true, false] {
                let written = encode::encode(&tree, hoist);
                let Some(json) = decode::expand(&written, hoist) else {
                    continue;
                };
                assert_eq!(json, read_back(&written, hoist), "for {input}\n{written}");
                streamed += 1;
                // A line dropped, repeated, or moved a level: what it still takes, the tree
                // takes too, and reads the same.
                let mut lines: Vec<String> = written.split('\n').map(str::to_owned).collect();
                let at = generator.next(lines.len() as u64) as usize;
                match generator.next(4) {
                    0 => drop(lines.remove(at)),
                    1 => lines.insert(at, lines[at].clone()),
                    2 => lines[at].insert_str(0, "  "),
                    _ => lines[at] = lines[at].replacen("  ", "", 1),
                }
                let mutated = lines.join("\n");
                if let Some(json) = decode::expand(&mutated, hoist) {
                    let value = decode::decode(&mutated)
                        .unwrap_or_else(|err| panic!("{err}: the tree refuses\n{mutated}"));
                    let value = if hoist { hoist::unhoist(value) } else { value };
                    let mut tree = String::new();
                    value.write(&mut tree);
                    assert_eq!(json, tree, "for\n{mutated}");
                }
            }
        }
        assert!(
            streamed > 4000,
            "{streamed} documents expanded line by line"
        );
    }

    #[test]
    fn generated_payloads_expand_back_exactly_and_parse_under_the_reference_decoder() {
        let mut generator = Generator(8);
        let (mut encoded, mut hoisted) = (0, 0);
        for _ in 0..3000 {
            let input = generator.value(4);
            for hoist in [true, false] {
                let codec = codec(hoist);
                if let Ok(value) = Value::parse(&input)
                    && matches!(value, Value::Array(_) | Value::Object(_))
                {
                    let written = encode::encode(&value, hoist);
                    // The reader's indentation bound rests on this.
                    let indent = written
                        .split('\n')
                        .map(|line| (line.len() - line.trim_start_matches(' ').len()) / 2)
                        .max();
                    assert!(indent <= Some(nesting(&value)), "{input}\n{written}");
                    if !written.is_empty() {
                        toon_format::decode_strict::<serde_json::Value>(&written)
                            .unwrap_or_else(|err| panic!("{err}: {input}\n{written}"));
                    }
                }
                match codec
                    .compress(Payload::json(&input), Level::Minimal)
                    .unwrap()
                {
                    Outcome::Unchanged => {}
                    Outcome::Changed { payload, lossy } => {
                        assert!(!lossy);
                        let expanded = codec.expand(&payload).unwrap();
                        assert!(same(&expanded, &input), "{input}\n{expanded}");
                        encoded += 1;
                        hoisted += usize::from(payload.contains("_constants:"));
                    }
                }
            }
        }
        assert!(
            encoded > 500 && hoisted > 50,
            "{encoded} payloads encoded, {hoisted} with hoisted tables"
        );
    }

    /// The numbers of a marker of this codec's cut: `R of N rows not shown, rows A-B of the
    /// array at P; wm_get_result {"pointer":"P","rows":"A-B"}]` → `(R, N, A, B, P)`.
    fn cut_marker(marker: &str) -> (usize, usize, usize, usize, String) {
        let number = |text: &str| -> usize { text.parse().expect(marker) };
        let rest = marker
            .strip_prefix("[\u{2026} cut at max_result_chars: ")
            .expect(marker);
        let (removed, rest) = rest.split_once(" of ").expect(marker);
        let (n, rest) = rest.split_once(" rows not shown, rows ").expect(marker);
        let (range, rest) = rest.split_once(' ').expect(marker);
        let (pointer, selector) = match rest.strip_prefix("of the array at ") {
            Some(rest) => rest.split_once("; ").expect(marker),
            None => ("", rest.strip_prefix("of the root array; ").expect(marker)),
        };
        let expected = if pointer.is_empty() {
            format!("wm_get_result {{\"rows\":\"{range}\"}}]")
        } else {
            format!("wm_get_result {{\"pointer\":\"{pointer}\",\"rows\":\"{range}\"}}]")
        };
        assert_eq!(selector, expected, "{marker}");
        let (from, to) = range.split_once('-').expect(marker);
        (
            number(removed),
            number(n),
            number(from),
            number(to),
            pointer.to_owned(),
        )
    }

    /// Issue 48: a cut of this codec's TOON was the host's, as text, its selector the whole
    /// original. On the corpus's JSON (and on a root array, hoisted and not) at many rooms, a
    /// document that ends with a table at its top level is cut between whole rows, its head
    /// kept whole, and the marker's `pointer` and `rows` name exactly the elements not shown.
    #[test]
    fn a_cut_keeps_the_head_and_whole_rows_and_its_selector_names_the_rows_removed() {
        let root_rows: Vec<String> = (0..300)
            .map(|i| format!(r#"{{"id":{i},"name":"user {i}","region":"south"}}"#))
            .collect();
        let root_array = format!("[{}]", root_rows.join(","));
        let mut inputs: Vec<(String, String)> = CORPUS_JSON
            .iter()
            .map(|name| (name.to_string(), corpus(name)))
            .collect();
        inputs.push(("a root array".to_owned(), root_array));
        let mut cut_documents = Vec::new();
        for hoist in [true, false] {
            let codec = codec(hoist);
            for (name, input) in &inputs {
                let original = Payload::json(input);
                let Outcome::Changed {
                    payload: output, ..
                } = codec.compress(original, Level::Minimal).unwrap()
                else {
                    continue;
                };
                let Some(first) = codec.cut(original, &output, 0) else {
                    continue;
                };
                cut_documents.push(format!("{name}, hoist {hoist}"));
                assert!(
                    first.marker.contains("all of this result not shown"),
                    "{name}"
                );
                let all = parrot_codec_api::json_string_chars(&output);
                for room in [300, 1_000, 3_000, all / 2, all - 1] {
                    let at = format!("{name}, hoist {hoist}, room {room}");
                    let cut = codec.cut(original, &output, room).expect(&at);
                    let kept = &output[..cut.kept];
                    assert!(cut.kept < output.len() && (kept.is_empty() || kept.ends_with('\n')));
                    let cost = parrot_codec_api::json_string_chars;
                    assert!(
                        kept.is_empty() || cost(kept) + cost(&cut.marker) <= room,
                        "{at}"
                    );
                    if kept.is_empty() {
                        continue;
                    }
                    let (removed, n, from, to, pointer) = cut_marker(&cut.marker);
                    let value: serde_json::Value = serde_json::from_str(input).unwrap();
                    let array = value
                        .pointer(&pointer)
                        .and_then(|v| v.as_array())
                        .expect(&at);
                    assert_eq!((n, to, removed), (array.len(), n - 1, n - from), "{at}");
                    // The kept text ends with the table's first `from` rows, under its header.
                    let lines: Vec<&str> = output.lines().collect();
                    let header = lines
                        .iter()
                        .rposition(|line| line.ends_with("}:"))
                        .expect(&at);
                    assert_eq!(kept.lines().count(), header + 1 + from, "{at}");
                    assert_eq!(lines.len(), header + 1 + n, "{at}");
                }
            }
        }
        // The other documents do not end with a table at their top level.
        let expected: Vec<String> = ["github-labels.json", "github-repos.json", "a root array"]
            .iter()
            .flat_map(|name| [true, false].map(|hoist| (hoist, name)))
            .map(|(hoist, name)| format!("{name}, hoist {hoist}"))
            .collect();
        cut_documents.sort();
        let mut expected = expected;
        expected.sort();
        assert_eq!(cut_documents, expected);
    }

    #[test]
    fn a_document_that_does_not_end_with_a_top_level_table_is_not_cut_by_its_grammar() {
        let codec = codec(true);
        let rows: Vec<String> = (0..40)
            .map(|i| format!(r#"{{"id":{i},"name":"user {i}"}}"#))
            .collect();
        let cases = [
            format!(r#"{{"rows":[{}],"driver":"pg"}}"#, rows.join(",")),
            format!(r#"{{"a":{{"rows":[{}]}}}}"#, rows.join(",")),
            format!(r#"{{"a b":[{}]}}"#, rows.join(",")),
        ];
        for input in &cases {
            let original = Payload::json(input);
            let Outcome::Changed { payload, .. } =
                codec.compress(original, Level::Minimal).unwrap()
            else {
                panic!("{input}");
            };
            assert_eq!(codec.cut(original, &payload, 300), None, "{payload}");
        }
        let input = format!(r#"{{"rows":[{}]}}"#, rows.join(","));
        let original = Payload::json(&input);
        let Outcome::Changed { payload, .. } = codec.compress(original, Level::Minimal).unwrap()
        else {
            panic!("{input}");
        };
        assert!(codec.cut(original, &payload, 300).is_some());
        // A table whose rows are not the array's elements in the original (one row fewer), a
        // text original, an empty output.
        let fewer = format!(r#"{{"rows":[{}]}}"#, rows[1..].join(","));
        for (original, text) in [
            (Payload::json(&fewer), payload.as_str()),
            (Payload::text_only(&input), payload.as_str()),
            (original, ""),
        ] {
            assert_eq!(codec.cut(original, text, 300), None);
        }
    }

    /// A cut of any generated document's TOON keeps the rules of a cut or leaves the cut to
    /// the host, and so does a cut of a TOON cut short, without a panic.
    #[test]
    fn a_cut_of_generated_documents_keeps_the_rules_and_never_panics() {
        let mut generator = Generator(48);
        let cost = parrot_codec_api::json_string_chars;
        let mut cut = 0;
        for _ in 0..1500 {
            let input = generator.value(4);
            let codec = codec(true);
            let original = Payload::json(&input);
            let Outcome::Changed { payload, .. } =
                codec.compress(original, Level::Minimal).unwrap()
            else {
                continue;
            };
            for room in [0, 60, 200, cost(&payload) / 2] {
                let Some(at) = codec.cut(original, &payload, room) else {
                    continue;
                };
                cut += 1;
                assert_eq!(at.check(&payload, room), Ok(()), "{payload}");
            }
            // Cut short, a TOON is refused, or cut by the rules of a cut (it still ends with
            // a table of as many rows as the array has), never with a panic.
            for end in (0..payload.len()).step_by(11) {
                if payload.is_char_boundary(end) {
                    let short = &payload[..end];
                    if let Some(at) = codec.cut(original, short, 200) {
                        assert_eq!(at.check(short, 200), Ok(()), "{short}");
                    }
                }
            }
        }
        assert!(cut > 50, "{cut} cuts");
    }
}
