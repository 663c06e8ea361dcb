//! Each selector against an independent slice of a real original: the corpus build log for
//! `lines` and `grep` (sliced with `str::lines`), the corpus JSON for `pointer` and `rows`
//! (read with serde_json's own `Value::pointer`).

use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
use parrot_codecs::Columnar;
use parrot_host::{DEFAULT_LIMIT_TOKENS, Tokenizer};
use serde_json::Value;

use super::*;
use crate::is_retrieval;

fn corpus(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn compact(_: &str) -> Option<String> {
    None
}

fn columnar(rows: &str) -> Option<String> {
    let codec =
        parrot_codec_api::build::<Columnar>(Params::from_json(r#"{"min_rows": 1}"#).unwrap())
            .unwrap();
    match codec.compress(Payload::json(rows), Level::Minimal).unwrap() {
        Outcome::Changed {
            payload,
            lossy: false,
        } => Some(payload),
        _ => None,
    }
}

fn retrieve(
    original: &str,
    selector: &Selector,
    table: &dyn Fn(&str) -> Option<String>,
) -> Result<Retrieval, RetrieveError> {
    Retriever {
        limit_tokens: DEFAULT_LIMIT_TOKENS,
        cap_chars: 0,
        namespace: None,
        counter: &Tokenizer::O200k,
        table,
    }
    .retrieve("k", original.as_bytes(), selector)
}

fn select(original: &str, selector: Selector) -> Retrieval {
    retrieve(original, &selector, &compact).unwrap()
}

fn error(original: &str, selector: Selector) -> String {
    retrieve(original, &selector, &compact)
        .unwrap_err()
        .to_string()
}

fn lines(range: &str) -> Selector {
    Selector {
        lines: Some(range.into()),
        ..Selector::default()
    }
}

/// Lines `from..=to` (1-based) of `text`, each with a newline.
fn slice(text: &str, from: usize, to: usize) -> String {
    text.lines()
        .skip(from - 1)
        .take(to + 1 - from)
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn lines_of_the_build_log_are_exactly_those_lines() {
    let log = corpus("build-log.txt");
    let count = log.lines().count();
    let cases = [
        ("4095-4105", 4095, 4105),
        ("7", 7, 7),
        ("-50", count - 49, count),
        ("5990-", 5990, count),
    ];
    for (range, from, to) in cases {
        let part = select(&log, lines(range));
        assert_eq!(part.body, slice(&log, from, to), "lines {range}");
        assert_eq!(part.next, None, "lines {range}");
        assert!(part.notes.is_empty());
    }
}

#[test]
fn max_chars_ends_with_the_selector_of_the_next_part_and_the_parts_join_up() {
    let log = corpus("build-log.txt");
    let mut selector = Selector {
        lines: Some("100-400".into()),
        max_chars: Some(5_000),
        ..Selector::default()
    };
    let mut joined = String::new();
    let mut parts = 0;
    loop {
        let part = select(&log, selector.clone());
        assert!(part.body.chars().count() <= 5_000);
        joined.push_str(&part.body);
        parts += 1;
        match part.next {
            Some(next) => {
                assert_eq!(next.max_chars, Some(5_000));
                assert!(next.lines.as_deref().unwrap().ends_with("-400"), "{next:?}");
                selector = next;
            }
            None => break,
        }
    }
    assert!(parts > 3, "{parts} parts");
    assert_eq!(joined, slice(&log, 100, 400));
}

#[test]
fn the_continuation_is_written_for_the_tool_and_for_the_command() {
    let part = select(
        "a\nb\nc\n",
        Selector {
            max_chars: Some(2),
            ..lines("1-")
        },
    );
    assert_eq!(
        part.text(),
        "[wm_get_result {\"key\":\"k\",\"lines\":\"1-\",\"max_chars\":2}]\na\n\
         [more: wm_get_result {\"key\":\"k\",\"lines\":\"2-\",\"max_chars\":2}]\n"
    );
    assert!(
        part.command_text()
            .ends_with("[more: parrot-compress recover k --lines 2- --max-chars 2]\n")
    );
    assert!(is_retrieval(part.text().as_bytes()));
}

#[test]
fn grep_returns_the_error_with_its_number_and_context() {
    let log = corpus("build-log.txt");
    let part = select(
        &log,
        Selector {
            grep: Some(r"^error\[".into()),
            context: Some(2),
            ..Selector::default()
        },
    );
    let (number, _) = log
        .lines()
        .enumerate()
        .find(|(_, line)| line.starts_with("error["))
        .unwrap();
    let n = number + 1;
    let expected: String = log
        .lines()
        .enumerate()
        .skip(n - 3)
        .take(5)
        .map(|(i, line)| format!("{}{}{line}\n", i + 1, if i + 1 == n { ':' } else { '-' }))
        .collect();
    assert_eq!(part.body, expected);
    assert_eq!(
        part.notes,
        [format!(
            "1 matching line in lines 1-{}",
            log.lines().count()
        )]
    );
}

#[test]
fn grep_merges_overlapping_groups_and_separates_the_others() {
    let text = "x1\na\nx3\nb\nc\nd\ne\nx8\n";
    let part = select(
        text,
        Selector {
            grep: Some("^x".into()),
            context: Some(1),
            ..Selector::default()
        },
    );
    assert_eq!(part.body, "1:x1\n2-a\n3:x3\n4-b\n--\n7-e\n8:x8\n");
}

#[test]
fn grep_within_lines_searches_only_those() {
    let log = corpus("build-log.txt");
    let part = select(
        &log,
        Selector {
            grep: Some("crate_1[0-9]{2} ".into()),
            lines: Some("10-60".into()),
            ..Selector::default()
        },
    );
    let pattern = regex::Regex::new("crate_1[0-9]{2} ").unwrap();
    let mut expected = String::new();
    let mut previous = None;
    for (i, line) in log.lines().enumerate().skip(9).take(51) {
        if !pattern.is_match(line) {
            continue;
        }
        if previous.is_some_and(|p| p + 1 != i) {
            expected.push_str("--\n");
        }
        previous = Some(i);
        expected.push_str(&format!("{}:{line}\n", i + 1));
    }
    assert!(!expected.is_empty());
    assert_eq!(part.body, expected);
}

#[test]
fn a_pointer_returns_the_value_as_written() {
    let query = corpus("query-500x12.json");
    let parsed: Value = serde_json::from_str(&query).unwrap();
    for pointer in [
        "/rows/17",
        "/rows/17/revenue",
        "/driver",
        "/rows/499/store_id",
    ] {
        let part = select(
            &query,
            Selector {
                pointer: Some(pointer.into()),
                ..Selector::default()
            },
        );
        let value: Value = serde_json::from_str(&part.body).unwrap();
        assert_eq!(Some(&value), parsed.pointer(pointer), "{pointer}");
    }
    // As written: the number keeps its text.
    let part = select(
        &query,
        Selector {
            pointer: Some("/rows/0/revenue".into()),
            ..Selector::default()
        },
    );
    assert_eq!(part.body, "1000.0");
}

#[test]
fn pointer_tokens_unescape_tilde_and_slash() {
    let text = r#"{"a/b": {"c~d": [10, 20]}, "": 5}"#;
    let cases = [("/a~1b/c~0d/1", "20"), ("/", "5"), ("", text)];
    for (pointer, expected) in cases {
        let part = select(
            text,
            Selector {
                pointer: Some(pointer.into()),
                ..Selector::default()
            },
        );
        assert_eq!(part.body, expected, "{pointer}");
    }
}

#[test]
fn rows_are_those_elements_of_the_tabulated_array() {
    let query = corpus("query-500x12.json");
    let parsed: Value = serde_json::from_str(&query).unwrap();
    let all = parsed["rows"].as_array().unwrap();
    // Without a pointer: the original's member `rows`; as compact JSON here.
    let part = select(
        &query,
        Selector {
            rows: Some("40-59".into()),
            ..Selector::default()
        },
    );
    let rows: Value = serde_json::from_str(&part.body).unwrap();
    assert_eq!(rows.as_array().unwrap().as_slice(), &all[40..60]);
    assert_eq!(part.notes, ["rows 40-59 of 500 at /rows"]);

    // As a table, read back through the codec's inverse.
    let part = retrieve(
        &query,
        &Selector {
            pointer: Some("/rows".into()),
            rows: Some("-10".into()),
            ..Selector::default()
        },
        &columnar,
    )
    .unwrap();
    assert!(part.body.starts_with("{\"columns\":"), "{}", part.body);
    let codec = parrot_codec_api::build::<Columnar>(Params::from_json("{}").unwrap()).unwrap();
    let expanded: Value =
        serde_json::from_str(&codec.expand(part.body.trim_end()).unwrap()).unwrap();
    assert_eq!(expanded.as_array().unwrap().as_slice(), &all[490..500]);
    assert_eq!(part.notes, ["rows 490-499 of 500 at /rows"]);
}

#[test]
fn rows_over_max_chars_continue_with_the_next_rows() {
    let repos = corpus("github-repos.json");
    let parsed: Value = serde_json::from_str(&repos).unwrap();
    let all = parsed.as_array().unwrap();
    let mut selector = Selector {
        rows: Some("0-".into()),
        max_chars: Some(8_000),
        ..Selector::default()
    };
    let mut seen = Vec::new();
    loop {
        let part = select(&repos, selector.clone());
        assert!(part.body.chars().count() <= 8_001, "{}", part.body.len());
        let rows: Value = serde_json::from_str(&part.body).unwrap();
        seen.extend(rows.as_array().unwrap().iter().cloned());
        match part.next {
            Some(next) => selector = next,
            None => break,
        }
    }
    assert_eq!(seen.as_slice(), all.as_slice());
}

#[test]
fn without_a_selector_a_big_original_gives_its_first_part_an_outline_and_the_next() {
    let log = corpus("build-log.txt");
    let part = select(&log, Selector::default());
    let next = part.next.clone().unwrap();
    let last: usize = next
        .lines
        .as_deref()
        .unwrap()
        .trim_end_matches('-')
        .parse()
        .unwrap();
    assert_eq!(part.body, slice(&log, 1, last - 1));
    assert!(Tokenizer::O200k.count(&part.body) <= DEFAULT_LIMIT_TOKENS);
    assert!(Tokenizer::O200k.count(&part.body) > DEFAULT_LIMIT_TOKENS * 9 / 10);
    assert!(
        part.notes[0].starts_with(&format!(
            "outline: {} lines, {} bytes, ",
            log.lines().count(),
            log.len()
        )),
        "{:?}",
        part.notes
    );

    let query = corpus("query-500x12.json");
    let part = retrieve(
        &query,
        &Selector {
            max_chars: Some(3_000),
            ..Selector::default()
        },
        &compact,
    )
    .unwrap();
    assert!(part.body.chars().count() <= 3_000);
    let next = part.next.unwrap();
    assert_eq!(next.pointer.as_deref(), Some("/rows"));
    assert_eq!(next.max_chars, Some(3_000));
    let part = Retriever {
        limit_tokens: 2_000,
        cap_chars: 0,
        namespace: None,
        counter: &Tokenizer::O200k,
        table: &compact,
    }
    .retrieve("k", query.as_bytes(), &Selector::default())
    .unwrap();
    assert_eq!(
        part.notes[0],
        "outline: JSON, 78036 bytes, 1 line; an object: /driver (a string), /rows (an array of 500), \
         /row_count (a number), /columns (an array of 0), /execution_time_ms (a number)"
    );
    assert!(part.notes[1].starts_with("rows 0-"), "{:?}", part.notes);
    assert_eq!(
        part.next.as_ref().unwrap().pointer.as_deref(),
        Some("/rows")
    );

    let small = "a small original\n";
    assert_eq!(select(small, Selector::default()).body, small);
}

#[test]
fn bad_selectors_are_one_line_errors_naming_them() {
    let log = "one\ntwo\nthree\n";
    let json = r#"{"rows": [1, 2, 3], "name": "x"}"#;
    let cases: [(&str, Selector, &str); 14] = [
        (
            log,
            lines("2-x"),
            "selector \"lines\": \"2-x\" is not a range: expected A-B, -N (the last N), A- (A to the end) or A, with whole numbers from 1",
        ),
        (
            log,
            lines("0-2"),
            "selector \"lines\": \"0-2\" is not a range: expected A-B, -N (the last N), A- (A to the end) or A, with whole numbers from 1",
        ),
        (
            log,
            lines("3-2"),
            "selector \"lines\": \"3-2\" ends before it starts",
        ),
        (
            log,
            lines("4-"),
            "selector \"lines\": \"4-\" starts past the end: there are 3 lines (1-3)",
        ),
        (
            log,
            lines("2-9"),
            "selector \"lines\": \"2-9\" ends past the end: there are 3 lines (1-3)",
        ),
        (
            log,
            Selector {
                grep: Some("a(".into()),
                ..Selector::default()
            },
            "selector \"grep\": \"a(\" is not a valid regular expression: error: unclosed group",
        ),
        (
            log,
            Selector {
                pointer: Some("/a".into()),
                ..Selector::default()
            },
            "selector \"pointer\": the original is text, not JSON (3 lines): use lines or grep",
        ),
        (
            json,
            Selector {
                pointer: Some("rows".into()),
                ..Selector::default()
            },
            "selector \"pointer\": \"rows\" must be empty or start with \"/\" (RFC 6901), e.g. /rows/17",
        ),
        (
            json,
            Selector {
                pointer: Some("/rows/3".into()),
                ..Selector::default()
            },
            "selector \"pointer\": \"/rows/3\": index 3 is past the end of /rows (3 elements)",
        ),
        (
            json,
            Selector {
                pointer: Some("/nope".into()),
                ..Selector::default()
            },
            "selector \"pointer\": \"/nope\": the root has no member \"nope\"",
        ),
        (
            json,
            Selector {
                pointer: Some("/a~2".into()),
                ..Selector::default()
            },
            "selector \"pointer\": \"/a~2\": \"~\" must be followed by 0 or 1 (\"~0\" is ~, \"~1\" is /)",
        ),
        (
            json,
            Selector {
                pointer: Some("/name".into()),
                rows: Some("0-1".into()),
                ..Selector::default()
            },
            "selector \"rows\": /name is a string, not an array",
        ),
        (
            json,
            Selector {
                rows: Some("1-5".into()),
                ..Selector::default()
            },
            "selector \"rows\": \"1-5\" ends past the end: there are 3 elements (0-2)",
        ),
        (
            json,
            Selector {
                lines: Some("1".into()),
                pointer: Some("/rows".into()),
                ..Selector::default()
            },
            "selector \"lines\": does not combine with pointer (these combine: lines+grep, grep+context, pointer+rows, max_chars with any)",
        ),
    ];
    for (original, selector, expected) in cases {
        let message = error(original, selector.clone());
        assert_eq!(message, expected, "{selector:?}");
        assert!(!message.contains('\n'));
    }
    assert_eq!(
        error(
            log,
            Selector {
                context: Some(2),
                ..Selector::default()
            }
        ),
        "selector \"context\": needs grep: the lines around each match"
    );
}

#[test]
fn arguments_round_trip_and_bad_ones_name_the_member() {
    let selector = Selector {
        lines: Some("1-5".into()),
        grep: Some("e'r".into()),
        context: Some(1),
        pointer: Some("/a b".into()),
        rows: Some("2-".into()),
        max_chars: Some(100),
    };
    let arguments: Value = serde_json::from_str(&selector.to_arguments("k")).unwrap();
    let (key, back) = Selector::from_arguments(arguments.as_object().unwrap()).unwrap();
    assert_eq!((key.as_str(), &back), ("k", &selector));
    assert_eq!(
        selector.to_flags("__tee__:t:1"),
        r#"recover __tee__:t:1 --lines 1-5 --grep 'e'\''r' --context 1 --pointer '/a b' --rows 2- --max-chars 100"#
    );
    let cases = [
        (
            serde_json::json!({"lines": "1"}),
            "selector \"key\": missing: the key of a \"_tee\" pointer",
        ),
        (
            serde_json::json!({"key": 1}),
            "selector \"key\": expected a string, got 1",
        ),
        (
            serde_json::json!({"key": "k", "context": -1}),
            "selector \"context\": expected a non-negative integer, got -1",
        ),
        (
            serde_json::json!({"key": "k", "grep": 5}),
            "selector \"grep\": expected a string, got 5",
        ),
    ];
    for (arguments, expected) in cases {
        let err = Selector::from_arguments(arguments.as_object().unwrap()).unwrap_err();
        assert_eq!(err.to_string(), expected);
    }
    let (_, numeric) = Selector::from_arguments(
        serde_json::json!({"key": "k", "lines": 7})
            .as_object()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(numeric.lines.as_deref(), Some("7"));
}

#[test]
fn only_a_header_line_marks_a_retrieval() {
    let cases: [(&[u8], bool); 6] = [
        (b"[wm_get_result {\"key\":\"k\"}]\nbody", true),
        (
            b"[wm_get_result {\"key\":\"k\",\"lines\":\"1-2\"}]\r\n",
            true,
        ),
        (b"[wm_get_result {\"lines\":\"1-2\"}]\n", false),
        (b"[wm_get_result {\"key\":\"k\"}] and more\n", false),
        (b"body\n[wm_get_result {\"key\":\"k\"}]\n", false),
        (b"{\"key\":\"k\"}", false),
    ];
    for (payload, expected) in cases {
        assert_eq!(
            is_retrieval(payload),
            expected,
            "{}",
            String::from_utf8_lossy(payload)
        );
    }
}

#[test]
fn a_line_longer_than_the_limit_is_cut_and_the_next_part_moves_on() {
    let text = format!("short\n{}\nend\n", "x".repeat(100));
    let part = select(
        &text,
        Selector {
            max_chars: Some(10),
            ..lines("2-")
        },
    );
    assert_eq!(part.body, "xxxxxxxxxx\n[line 2 cut: over the size]\n");
    assert_eq!(part.next.unwrap().lines.as_deref(), Some("3-"));

    let part = select(
        &text,
        Selector {
            grep: Some("x".into()),
            max_chars: Some(10),
            ..Selector::default()
        },
    );
    assert_eq!(part.body, "2:xxxxxxxx\n[line 2 cut: over the size]\n");
    let next = part.next.unwrap();
    assert_eq!(
        (next.lines.as_deref(), next.grep.as_deref()),
        (Some("3-"), Some("x"))
    );
}

/// The largest numbers a selector takes (2^64 − 1 from a recovery call's arguments) neither
/// wrap nor panic: a `context` that reaches past both ends shows every line around the match,
/// a range counted from the end takes all there is, a bound past the end is an error naming it.
#[test]
fn grep_with_the_largest_context_shows_the_match_and_the_largest_numbers_do_not_wrap() {
    let text = "a\nb\nx\nc\n";
    let max = u64::MAX.to_string();
    let over = "18446744073709551616";
    let whole = "1-a\n2-b\n3:x\n4-c\n";
    let arguments = |json: &str| -> Selector {
        let value: Value = serde_json::from_str(json).unwrap();
        Selector::from_arguments(value.as_object().unwrap())
            .unwrap()
            .1
    };
    let grep = |context: usize, lines: Option<&str>| Selector {
        grep: Some("^x".into()),
        context: Some(context),
        lines: lines.map(Into::into),
        ..Selector::default()
    };
    let cases: [(Selector, &str); 9] = [
        (grep(usize::MAX, None), whole),
        (grep(usize::MAX - 1, None), whole),
        (
            arguments(&format!(r#"{{"key":"k","grep":"^x","context":{max}}}"#)),
            whole,
        ),
        (
            arguments(&format!(r#"{{"key":"k","grep":"^x","context":{over}}}"#)),
            whole,
        ),
        (lines(&format!("-{over}")), text),
        (grep(usize::MAX, Some("2-3")), "2-b\n3:x\n"),
        (
            Selector {
                max_chars: Some(usize::MAX),
                ..lines("2-")
            },
            "b\nx\nc\n",
        ),
        (lines(&format!("-{max}")), text),
        (
            Selector {
                rows: Some(format!("-{max}")),
                ..Selector::default()
            },
            "[1,2]\n",
        ),
    ];
    for (selector, expected) in cases {
        let original = if selector.rows.is_some() {
            "[1, 2]"
        } else {
            text
        };
        let part = select(original, selector.clone());
        assert_eq!(part.body, expected, "{selector:?}");
        assert_eq!(part.next, None, "{selector:?}");
    }
    let part = select(text, grep(usize::MAX, None));
    assert_eq!(part.notes, ["1 matching line in lines 1-4"]);

    let errors = [
        (
            lines(&format!("2-{max}")),
            format!("selector \"lines\": \"2-{max}\" ends past the end: there are 4 lines (1-4)"),
        ),
        (
            lines(&format!("{max}-")),
            format!("selector \"lines\": \"{max}-\" starts past the end: there are 4 lines (1-4)"),
        ),
        (
            lines(over),
            format!("selector \"lines\": \"{over}\" starts past the end: there are 4 lines (1-4)"),
        ),
        (
            lines(&format!("1-{over}")),
            format!("selector \"lines\": \"1-{over}\" ends past the end: there are 4 lines (1-4)"),
        ),
        (
            lines(&format!("{max}-2")),
            format!("selector \"lines\": \"{max}-2\" starts past the end: there are 4 lines (1-4)"),
        ),
        (
            Selector {
                pointer: Some(format!("/{max}")),
                ..Selector::default()
            },
            format!(
                "selector \"pointer\": \"/{max}\": index {max} is past the end of the root (2 \
                 elements)"
            ),
        ),
        (
            Selector {
                pointer: Some(format!("/{over}")),
                ..Selector::default()
            },
            format!(
                "selector \"pointer\": \"/{over}\": index {over} is past the end of the root (2 \
                 elements)"
            ),
        ),
    ];
    for (selector, expected) in errors {
        let original = if selector.pointer.is_some() {
            "[1, 2]"
        } else {
            text
        };
        assert_eq!(error(original, selector), expected);
    }
}

/// "there are 1 lines" was the note of a one-line original; every count in a message takes
/// its number.
#[test]
fn counts_of_one_in_messages_are_singular() {
    let cases = [
        (
            "only\n",
            lines("2"),
            "selector \"lines\": \"2\" starts past the end: there is 1 line (1-1)",
        ),
        (
            "only\n",
            lines("1-3"),
            "selector \"lines\": \"1-3\" ends past the end: there is 1 line (1-1)",
        ),
        (
            "only\n",
            Selector {
                rows: Some("0".into()),
                ..Selector::default()
            },
            "selector \"rows\": the original is text, not JSON (1 line): use lines or grep",
        ),
        (
            "[1]",
            Selector {
                pointer: Some("/3".into()),
                ..Selector::default()
            },
            "selector \"pointer\": \"/3\": index 3 is past the end of the root (1 element)",
        ),
    ];
    for (original, selector, expected) in cases {
        assert_eq!(error(original, selector), expected);
    }
}

fn capped(original: &str, selector: &Selector, cap: usize, limit_tokens: usize) -> Retrieval {
    Retriever {
        limit_tokens,
        cap_chars: cap,
        namespace: None,
        counter: &Tokenizer::O200k,
        table: &compact,
    }
    .retrieve("k", original.as_bytes(), selector)
    .unwrap()
}

/// A proxy's cap holds every selector's body, `max_chars: 0` and a larger `max_chars`
/// included, says so with the exact counts, and its parts join up to the whole original.
#[test]
fn the_cap_holds_every_selector_and_says_so_with_the_counts() {
    let log = corpus("build-log.txt");
    let query = corpus("query-500x12.json");
    let cap = 10_000;
    let note = |part: &Retrieval, original: &str| -> String {
        let rest = if part.next.is_some() {
            "the next part: the [more: …] line below"
        } else {
            "the rest of this part is not returned here"
        };
        let asked = match part.selector.max_chars {
            Some(0) => ", max_chars 0 included",
            Some(_) => ", a larger max_chars included",
            None => "",
        };
        format!(
            "capped: one answer here holds at most {cap} characters, whatever its selector \
             asks{asked}; the part below is {} characters of the original's {}; {rest}; the \
             exact original, uncapped: parrot-compress recover k",
            part.body.chars().count(),
            original.chars().count()
        )
    };
    let with = |max_chars: Option<usize>, selector: Selector| Selector {
        max_chars,
        ..selector
    };
    let grep = Selector {
        grep: Some("INFO".into()),
        context: Some(1),
        ..Selector::default()
    };
    let rows = Selector {
        rows: Some("0-".into()),
        ..Selector::default()
    };
    let cases = [
        (
            &log,
            with(Some(0), Selector::default()),
            DEFAULT_LIMIT_TOKENS,
        ),
        (&log, with(Some(0), lines("1-")), DEFAULT_LIMIT_TOKENS),
        (
            &log,
            with(Some(usize::MAX), lines("-4000")),
            DEFAULT_LIMIT_TOKENS,
        ),
        (&log, with(Some(0), grep.clone()), DEFAULT_LIMIT_TOKENS),
        (&log, lines("1-"), 0),
        (&query, with(Some(0), rows.clone()), DEFAULT_LIMIT_TOKENS),
        (
            &query,
            with(Some(0), Selector::default()),
            DEFAULT_LIMIT_TOKENS,
        ),
    ];
    for (original, selector, limit_tokens) in cases {
        let part = capped(original, &selector, cap, limit_tokens);
        let size = part.body.chars().count();
        assert!(size <= cap, "{selector:?}: {size} characters");
        assert!(size > cap / 2, "{selector:?}: only {size} characters");
        assert_eq!(
            part.notes.last(),
            Some(&note(&part, original)),
            "{selector:?}"
        );
        assert!(part.next.is_some(), "{selector:?}");
    }

    // The parts join up to the whole log, each held to the cap; the continuation keeps the
    // selector asked, so each is capped alike.
    let mut selector = with(Some(0), lines("1-"));
    let mut joined = String::new();
    let mut parts = 0;
    loop {
        let part = capped(&log, &selector, cap, DEFAULT_LIMIT_TOKENS);
        assert!(part.body.chars().count() <= cap);
        joined.push_str(&part.body);
        parts += 1;
        match part.next {
            Some(next) => {
                assert_eq!(next.max_chars, Some(0));
                selector = next;
            }
            None => break,
        }
    }
    assert_eq!(joined, log);
    assert!(parts >= log.chars().count() / cap, "{parts} parts");

    // A value that is not an array is cut, with no part after it: the note says so.
    let big = format!("{{\"text\": \"{}\"}}", "word ".repeat(5_000));
    let part = capped(
        &big,
        &with(
            Some(0),
            Selector {
                pointer: Some("/text".into()),
                ..Selector::default()
            },
        ),
        cap,
        DEFAULT_LIMIT_TOKENS,
    );
    assert_eq!(part.body.chars().count(), cap);
    assert_eq!(part.next, None);
    assert_eq!(part.notes.last(), Some(&note(&part, &big)));

    // Under the cap, nothing changes: a smaller max_chars is the limit, a part that fits has
    // no note.
    for selector in [with(Some(4_000), lines("1-")), with(Some(0), lines("1-5"))] {
        let part = capped(&log, &selector, cap, DEFAULT_LIMIT_TOKENS);
        assert_eq!(part, select(&log, selector.clone()), "{selector:?}");
        assert!(part.notes.iter().all(|n| !n.starts_with("capped")));
    }
    let part = capped(&query, &with(Some(0), rows), 0, DEFAULT_LIMIT_TOKENS);
    assert_eq!(
        part.next, None,
        "without a cap, max_chars 0 is the whole array"
    );
}
