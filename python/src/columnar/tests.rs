//! The transform held to the outputs of ai-parrot's pure-Python path (orjson 3.13), case by
//! case; `python/tests/test_parrot_codec.py` compares the two on generated payloads.

use parrot_json::{MAX_DEPTH, Reader};

use super::equal::python_eq;
use super::read::{Value, read_value};
use super::write::{write_float, write_value};
use super::*;

fn columnarized(input: &str) -> String {
    match columnarize(input.as_bytes()) {
        Ok(out) => String::from_utf8(out).unwrap_or_else(|_| "<not UTF-8>".into()),
        Err(error) => format!("error: {error}"),
    }
}

fn value(text: &str) -> Value<'_> {
    read_value(&mut Reader::new(text), 0)
        .expect("test values are JSON")
        .0
}

#[test]
fn transform_matches_the_pure_python_path() {
    let cases: &[(&str, &str)] = &[
        ("[]", r#"{"columns":[],"rows":[],"constants":{}}"#),
        ("[{}]", r#"{"columns":[],"rows":[[]],"constants":{}}"#),
        ("[{},{}]", r#"{"columns":[],"rows":[[],[]],"constants":{}}"#),
        (
            r#"[{"a":1}]"#,
            r#"{"columns":["a"],"rows":[[1]],"constants":{}}"#,
        ),
        (
            r#"[{"a":null}]"#,
            r#"{"columns":[],"rows":[[]],"constants":{}}"#,
        ),
        (
            r#"[{"a":1,"b":null},{"a":2}]"#,
            r#"{"columns":["a"],"rows":[[1],[2]],"constants":{}}"#,
        ),
        (
            r#"[{"a":null},{"a":1}]"#,
            r#"{"columns":["a"],"rows":[[null],[1]],"constants":{}}"#,
        ),
        (
            r#"[{"a":1,"b":2},{"c":3,"b":4,"a":5}]"#,
            r#"{"columns":["a","b","c"],"rows":[[1,2,null],[5,4,3]],"constants":{}}"#,
        ),
        (
            r#"[{"a":1},{"a":1,"b":2},{"a":1,"b":2}]"#,
            r#"{"columns":["b"],"rows":[[null],[2],[2]],"constants":{"a":1}}"#,
        ),
        (
            r#" [ { "a" : 1 } , { "a" : 2 } ] "#,
            r#"{"columns":["a"],"rows":[[1],[2]],"constants":{}}"#,
        ),
        (
            r#"[{"l":[1,2]},{"l":[1,2,3]}]"#,
            r#"{"columns":["l"],"rows":[[[1,2]],[[1,2,3]]],"constants":{}}"#,
        ),
    ];
    for &(input, expected) in cases {
        assert_eq!(columnarized(input), expected, "{input}");
    }
}

#[test]
fn constants_keep_the_first_rows_value_under_python_equality() {
    let cases: &[(&str, &str)] = &[
        (
            r#"[{"f":1},{"f":true},{"f":1.0}]"#,
            r#"{"columns":[],"rows":[[],[],[]],"constants":{"f":1}}"#,
        ),
        (
            r#"[{"f":true},{"f":1}]"#,
            r#"{"columns":[],"rows":[[],[]],"constants":{"f":true}}"#,
        ),
        (
            r#"[{"f":0},{"f":false},{"f":-0.0},{"f":0.0}]"#,
            r#"{"columns":[],"rows":[[],[],[],[]],"constants":{"f":0}}"#,
        ),
        (
            r#"[{"x":-0.0},{"x":0}]"#,
            r#"{"columns":[],"rows":[[],[]],"constants":{"x":-0.0}}"#,
        ),
        (
            r#"[{"a":9007199254740993},{"a":9007199254740992.0}]"#,
            r#"{"columns":["a"],"rows":[[9007199254740993],[9007199254740992.0]],"constants":{}}"#,
        ),
        (
            r#"[{"o":{"x":1,"y":2,"x":3}},{"o":{"y":2.0,"x":3}}]"#,
            r#"{"columns":[],"rows":[[],[]],"constants":{"o":{"x":3,"y":2}}}"#,
        ),
        (
            r#"[{"e":"\ud83d\ude00"},{"e":"😀"}]"#,
            r#"{"columns":[],"rows":[[],[]],"constants":{"e":"😀"}}"#,
        ),
    ];
    for &(input, expected) in cases {
        assert_eq!(columnarized(input), expected, "{input}");
    }
}

#[test]
fn duplicate_names_keep_their_first_place_and_last_value() {
    let cases: &[(&str, &str)] = &[
        (
            r#"[{"a":1,"b":2,"a":3},{"b":5,"a":3}]"#,
            r#"{"columns":["b"],"rows":[[2],[5]],"constants":{"a":3}}"#,
        ),
        (
            r#"[{"a":1,"a":null},{"a":null}]"#,
            r#"{"columns":[],"rows":[[],[]],"constants":{}}"#,
        ),
        (
            r#"[{"a":1,"b":2,"\u0061":3}]"#,
            r#"{"columns":["a","b"],"rows":[[3,2]],"constants":{}}"#,
        ),
        (
            r#"[{"o":{"x":1,"y":2,"x":[3]}}]"#,
            r#"{"columns":["o"],"rows":[[{"x":[3],"y":2}]],"constants":{}}"#,
        ),
    ];
    for &(input, expected) in cases {
        assert_eq!(columnarized(input), expected, "{input}");
    }
    // Wider than the linear search: the index finds the repeated name.
    let members: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 39)).collect();
    let input = format!("[{{\"o\":{{{}}}}}]", members.join(","));
    let mut expected: Vec<String> = (1..39).map(|i| format!("\"k{i}\":{i}")).collect();
    expected.insert(0, "\"k0\":39".into());
    assert_eq!(
        columnarized(&input),
        format!(
            "{{\"columns\":[\"o\"],\"rows\":[[{{{}}}]],\"constants\":{{}}}}",
            expected.join(",")
        )
    );
}

#[test]
fn numbers_are_read_as_orjson_reads_them() {
    let cases: &[(&str, &str)] = &[
        ("0", "0"),
        ("-0", "0"),
        ("-0.0", "-0.0"),
        ("-0e0", "-0.0"),
        ("1E5", "100000.0"),
        ("1.0e2", "100.0"),
        ("1.50", "1.5"),
        ("1e-400", "0.0"),
        ("9223372036854775807", "9223372036854775807"),
        ("9223372036854775808", "9223372036854775808"),
        ("18446744073709551615", "18446744073709551615"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("-9223372036854775809", "-9.223372036854776e+18"),
        ("123456789012345678901234567890", "1.2345678901234568e+29"),
        ("0.30000000000000004441", "0.30000000000000004"),
        ("1234.56", "1234.56"),
        ("-0.00012", "-0.00012"),
        ("0.000001", "1e-6"),
        ("100.0", "100.0"),
        ("0.10", "0.1"),
        ("123456789012345.6", "123456789012345.6"),
        ("1234567890123456.7", "1234567890123456.8"),
    ];
    for &(number, expected) in cases {
        let mut out = Vec::new();
        write_value(&mut out, &value(number));
        assert_eq!(String::from_utf8_lossy(&out), expected, "{number}");
    }
}

#[test]
fn floats_are_written_as_orjson_writes_them() {
    let cases: &[(f64, &str)] = &[
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (-2.5, "-2.5"),
        (0.1, "0.1"),
        (1.0 / 3.0, "0.3333333333333333"),
        (100000.0, "100000.0"),
        (123456789.123, "123456789.123"),
        // Halfway between two candidates of the shortest length: the even one. (Written as
        // sums: each exact value has more digits than its shortest form.)
        (131_237_838_911_150.0 + 0.125, "131237838911150.12"),
        (131_237_838_911_150.0 + 0.375, "131237838911150.38"),
        (661_743_415_219_110.0 + 0.25, "661743415219110.2"),
        (626_544_150_242_478.0 + 0.25, "626544150242478.2"),
        (998_951_099_668_373.0 + 0.25, "998951099668373.2"),
        (1e15, "1000000000000000.0"),
        (9999999999999998.0, "9999999999999998.0"),
        (1e16, "1e+16"),
        (1.2345e16, "1.2345e+16"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (-1e100, "-1e+100"),
        (f64::MAX, "1.7976931348623157e+308"),
        (0.0001, "0.0001"),
        (1e-5, "0.00001"),
        (1.2345e-5, "0.000012345"),
        (2.5e-5, "0.000025"),
        (1e-6, "1e-6"),
        (9.87654321e-9, "9.87654321e-9"),
        (123e-20, "1.23e-18"),
        (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        (5e-324, "5e-324"),
    ];
    for &(float, expected) in cases {
        let mut out = Vec::new();
        write_float(&mut out, float);
        assert_eq!(String::from_utf8_lossy(&out), expected, "{float:e}");
    }
}

#[test]
fn float_texts_orjson_would_write_are_copied() {
    let cases: &[(&str, bool)] = &[
        ("1234.56", true),
        ("-1234.56", true),
        ("0.0", true),
        ("-0.0", true),
        ("100.0", true),
        ("0.5", true),
        ("0.00001", true),
        ("0.000012345", true),
        ("123456789012345.6", false),
        ("12345678901234.5", true),
        ("0.123456789012345", true),
        ("0.1234567890123456", false),
        ("0.000001", false),
        ("1.50", false),
        ("100.00", false),
        ("0.00", false),
        ("1E5", false),
        ("1.5e3", false),
        ("15", false),
    ];
    for &(text, copied) in cases {
        assert_eq!(write::written_as_orjson(text), copied, "{text}");
        if copied {
            let mut out = Vec::new();
            write_float(&mut out, text.parse().unwrap_or(f64::NAN));
            assert_eq!(String::from_utf8_lossy(&out), text);
        }
    }
}

#[test]
fn strings_are_written_with_orjsons_escapes_only() {
    let cases: &[(&str, &str)] = &[
        (r#""plain é 😀 /""#, r#""plain é 😀 /""#),
        (r#""a\/b""#, r#""a/b""#),
        (r#""\u00e9\ud83d\ude00""#, r#""é😀""#),
        (r#""\"\\""#, r#""\"\\""#),
        (r#""\b\f\n\r\t""#, r#""\b\f\n\r\t""#),
        (r#""\u0000\u001F\u000b""#, r#""\u0000\u001f\u000b""#),
        (r#""\u007f\u2028""#, "\"\u{7f}\u{2028}\""),
    ];
    for &(input, expected) in cases {
        let mut out = Vec::new();
        write_value(&mut out, &value(input));
        assert_eq!(String::from_utf8_lossy(&out), expected, "{input}");
    }
}

#[test]
fn python_equality_of_values() {
    let cases: &[(&str, &str, bool)] = &[
        ("null", "null", true),
        ("null", "0", false),
        ("null", "false", false),
        ("null", "\"\"", false),
        ("1", "1.0", true),
        ("1", "true", true),
        ("true", "1.0", true),
        ("2", "true", false),
        ("0", "false", true),
        ("false", "-0.0", true),
        ("0.0", "-0.0", true),
        ("0.5", "true", false),
        ("9007199254740993", "9007199254740992.0", false),
        ("9007199254740992", "9007199254740992.0", true),
        ("-9223372036854775808", "-9223372036854775808.0", true),
        ("18446744073709551615", "18446744073709551615.0", false),
        ("18446744073709551616", "18446744073709551616.0", true),
        ("18446744073709551615", "18446744073709551615", true),
        ("\"1\"", "1", false),
        ("\"a\"", r#""\u0061""#, true),
        ("\"é\"", r#""\u00e9""#, true),
        ("\"😀\"", r#""\ud83d\ude00""#, true),
        ("\"a\"", "\"A\"", false),
        ("[1,2]", "[true,2.0]", true),
        ("[1,2]", "[2,1]", false),
        ("[1]", "[1,1]", false),
        ("[]", "{}", false),
        (r#"{"a":1,"b":[2]}"#, r#"{"b":[2.0],"a":true}"#, true),
        (r#"{"a":1}"#, r#"{"a":1,"b":null}"#, false),
        (r#"{"a":1,"a":2}"#, r#"{"a":2}"#, true),
        (r#"{"a":1,"b":2}"#, r#"{"a":1,"c":2}"#, false),
    ];
    for &(a, b, equal) in cases {
        assert_eq!(python_eq(&value(a), &value(b)), equal, "{a} == {b}");
        assert_eq!(python_eq(&value(b), &value(a)), equal, "{b} == {a}");
    }
    let wide = |order: &mut dyn Iterator<Item = usize>| {
        let members: Vec<String> = order.map(|i| format!("\"k{i}\":{i}")).collect();
        format!("{{{}}}", members.join(","))
    };
    let (forward, backward) = (wide(&mut (0..30)), wide(&mut (0..30).rev()));
    assert!(python_eq(&value(&forward), &value(&backward)));
    let other = forward.replace("\"k7\":7", "\"k7\":8");
    assert!(!python_eq(&value(&other), &value(&backward)));
}

#[test]
fn errors_say_what_and_where() {
    let cases: &[(&[u8], ColumnarError)] = &[
        (b"[\"\xff\"]", ColumnarError::NotUtf8 { offset: 2 }),
        (b"", ColumnarError::NotJson { offset: 0 }),
        (b"[1,]", ColumnarError::NotJson { offset: 3 }),
        (b"[{\"a\":NaN}]", ColumnarError::NotJson { offset: 6 }),
        (
            br#"[{"a":"\ud800"}]"#,
            ColumnarError::NotJson { offset: 13 },
        ),
        (b"[{\"a\":1}] x", ColumnarError::NotJson { offset: 10 }),
        (
            b"[{\"a\":1},null,{\"a\":",
            ColumnarError::NotJson { offset: 19 },
        ),
        (
            b"{\"rows\":[]}",
            ColumnarError::NotAnArray {
                offset: 0,
                found: "an object",
            },
        ),
        (
            b" \"[]\"",
            ColumnarError::NotAnArray {
                offset: 1,
                found: "a string",
            },
        ),
        (
            b"[{\"a\":1}, 2, []]",
            ColumnarError::RowNotObject {
                row: 1,
                offset: 10,
                found: "a number",
            },
        ),
        (
            b"[{\"a\":1e400}]",
            ColumnarError::NumberOutOfRange { offset: 6 },
        ),
        (
            b"[{\"a\":-1e309}]",
            ColumnarError::NumberOutOfRange { offset: 6 },
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            columnarize(input).as_ref(),
            Err(expected),
            "{}",
            String::from_utf8_lossy(input)
        );
    }
    let huge = format!("[{{\"a\":1{}}}]", "0".repeat(400));
    assert_eq!(
        columnarize(huge.as_bytes()),
        Err(ColumnarError::NumberOutOfRange { offset: 6 })
    );
    assert_eq!(
        ColumnarError::RowNotObject {
            row: 3,
            offset: 40,
            found: "null"
        }
        .to_string(),
        "row 3 is null, not an object (at byte 40)"
    );
}

/// `[{"a": v}, {"a": w}]` where `v` nests `first` lists and `w` nests `second` (0: a number).
fn nested_rows(first: usize, second: usize) -> String {
    let nest = |n: usize| match n {
        0 => "0".to_string(),
        _ => format!("{}{}", "[".repeat(n), "]".repeat(n)),
    };
    format!("[{{\"a\":{}}},{{\"a\":{}}}]", nest(first), nest(second))
}

#[test]
fn output_nesting_stops_where_orjson_stops_writing() {
    // A kept column's values sit three levels down in the output, a constant's two.
    let cases: &[(usize, usize, Option<usize>)] = &[
        (251, 0, None),
        (252, 0, Some(255)),
        (0, 252, Some(255)),
        (252, 252, None),
        (253, 253, Some(255)),
    ];
    for &(first, second, too_deep) in cases {
        let result = columnarize(nested_rows(first, second).as_bytes());
        match too_deep {
            None => assert!(result.is_ok(), "{first}, {second}"),
            Some(depth) => assert_eq!(
                result,
                Err(ColumnarError::TooDeepToWrite {
                    column: "a".into(),
                    depth
                }),
                "{first}, {second}"
            ),
        }
    }
}

#[test]
fn a_value_a_repeated_name_replaced_is_not_written_so_its_depth_does_not_count() {
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let input = format!("[{{\"a\":{deep},\"a\":1}},{{\"a\":2}}]");
    assert_eq!(
        columnarized(&input),
        r#"{"columns":["a"],"rows":[[1],[2]],"constants":{}}"#
    );
}

#[test]
fn reading_stops_at_the_workspace_depth_limit() {
    // The array and a row are two of the containers.
    let at_limit = nested_rows(MAX_DEPTH - 2, 0);
    assert!(matches!(
        columnarize(at_limit.as_bytes()),
        Err(ColumnarError::TooDeepToWrite { .. })
    ));
    let over = nested_rows(MAX_DEPTH - 1, 0);
    assert_eq!(
        columnarize(over.as_bytes()),
        Err(ColumnarError::TooDeep {
            offset: 6 + MAX_DEPTH - 2,
            limit: MAX_DEPTH
        })
    );
}
