use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};

use super::Log;
use super::patterns::Class;
use crate::counted::counted;

fn codec(params: &str) -> Log {
    parrot_codec_api::build(Params::from_json(params).unwrap()).unwrap()
}

fn o200k(text: &str) -> usize {
    parrot_bpe::O200K_BASE.count(text)
}

fn corpus(name: &str) -> String {
    let path = format!("{}/../corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
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
    // `key=value`: the value is templated as a word of its own.
    (
        "request_id=550e8400-e29b-41d4-a716-446655440000 status=200 (took=12ms)",
        "request_id=<uuid> status=<n> (took=<dur>)",
    ),
    ("boto3==1.34.0 x=y", "boto3==<n>.<n>.<n> x=y"),
    // Paths and hex ids without a digit take their placeholder too (npm-01.log's fold).
    (
        "vite v5.0.4 transforming (1829) src/routes/dfcaeb.tsx",
        "vite <ver> transforming (<n>) <path>",
    ),
    (
        "see (/usr/lib/foo) and/or commit deadbeef",
        "see (<path>) <path> commit <hex>",
    ),
    ("plain fade words", "plain fade words"),
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
    // A passing test's line with an empty name: one placeholder, and the walk goes on.
    ("test  ... ok", "test <test> ... ok"),
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

fn compress(codec: &Log, input: &str, level: Level) -> Option<String> {
    match codec.compress(Payload::text_only(input), level).unwrap() {
        Outcome::Unchanged => None,
        Outcome::Changed { payload, lossy } => {
            assert!(lossy, "the log codec's outcomes are lossy");
            assert!(payload.len() < input.len(), "output not smaller than input");
            Some(payload)
        }
    }
}

fn number(text: &str) -> (usize, &str) {
    let len = text.bytes().take_while(u8::is_ascii_digit).count();
    (text[..len].parse().expect("a number"), &text[len..])
}

fn range(text: &str) -> (usize, usize, &str) {
    let (a, rest) = number(text);
    let (b, rest) = number(rest.strip_prefix('-').expect("A-B"));
    (a, b, rest)
}

/// Checks the output grammar against the original: verbatim lines are the original lines in
/// order; each region's fold lines lie in its marker's range, and their counts and the
/// marker's omitted count add up to the range's size; each fold line's count is the number of
/// lines of its range it stands for. Returns the verbatim line numbers (1-based).
fn check_grammar(original: &str, output: &str) -> Vec<usize> {
    check_grammar_of(&codec("{}"), original, output)
}

/// [`check_grammar`] for the output of `log`, whose failure patterns decide which redraw
/// states the original's lines keep.
fn check_grammar_of(log: &Log, original: &str, output: &str) -> Vec<usize> {
    let original = super::template::clean(original, |state| log.matcher.is_failure(state));
    let lines: Vec<&str> = original
        .strip_suffix('\n')
        .unwrap_or(&original)
        .split('\n')
        .collect();
    let mut next = 1;
    let mut verbatim = Vec::new();
    let mut folds: Vec<(usize, usize, usize)> = Vec::new();
    for line in output.strip_suffix('\n').unwrap_or(output).split('\n') {
        if let Some(rest) = line.strip_prefix("[\u{d7}")
            && let (count, rest) = number(rest)
            && let Some(rest) = rest.strip_prefix(" warnings like this, lines ")
        {
            // A warning's count: right after its first line, the range from that line.
            let (a, b, rest) = range(rest);
            assert_eq!(verbatim.last(), Some(&a), "{line:?} after its warning");
            assert!(
                folds.is_empty() && count >= 2 && b - a + 1 >= count,
                "{line:?}"
            );
            assert_eq!(rest, format!("; wm_get_result {{\"lines\":\"{a}-{b}\"}}]"));
            assert!(b <= lines.len(), "{line:?} past the original");
        } else if let Some(rest) = line.strip_prefix("[\u{d7}") {
            let (count, rest) = number(rest);
            let noun = if count == 1 { " line " } else { " lines " };
            let (a, b, rest) = range(rest.strip_prefix(noun).expect("fold grammar"));
            assert!(rest.starts_with("] "), "fold line {line:?}");
            assert!(count >= 1 && a <= b && b - a + 1 >= count, "{line:?}");
            folds.push((count, a, b));
        } else if let Some(rest) = line.strip_prefix("[\u{2026} ") {
            let (omitted, rest) = number(rest);
            let noun = if omitted == 1 { " line" } else { " lines" };
            let rest = rest
                .strip_prefix(noun)
                .and_then(|rest| rest.strip_prefix(" omitted, lines "))
                .expect("marker grammar");
            let (a, b, rest) = range(rest);
            assert!(rest.contains("0 failure lines omitted"), "{line:?}");
            assert!(
                rest.ends_with(&format!("; wm_get_result {{\"lines\":\"{a}-{b}\"}}]")),
                "the marker's selector is its region: {line:?}"
            );
            assert_eq!(a, next, "marker {line:?} starts where the output is");
            let folded: usize = folds.iter().map(|(count, _, _)| count).sum();
            for &(_, fa, fb) in &folds {
                assert!(
                    a <= fa && fb <= b,
                    "fold {fa}-{fb} outside its region {a}-{b}"
                );
            }
            assert_eq!(folded + omitted, b - a + 1, "counts of region {a}-{b}");
            folds.clear();
            next = b + 1;
        } else {
            assert!(
                folds.is_empty(),
                "fold lines not closed by a marker before {line:?}"
            );
            assert_eq!(lines.get(next - 1), Some(&line), "verbatim line {next}");
            verbatim.push(next);
            next += 1;
        }
    }
    assert!(folds.is_empty(), "fold lines after the last marker");
    assert_eq!(next, lines.len() + 1, "every original line accounted for");
    verbatim
}

#[test]
fn build_log_keeps_the_error_and_the_summary_within_700_tokens() {
    let input = corpus("build-log.txt");
    let out = compress(&codec("{}"), &input, Level::Normal).expect("compressed");
    let verbatim = check_grammar(&input, &out);
    assert!(
        verbatim.contains(&4101) && verbatim.contains(&6002),
        "{out}"
    );
    // The host wraps lossy text as {"result": "…", "_tee": {…}}: about 40 tokens.
    let wrapped = serde_json::json!({"result": out, "_tee": {"key": "__tee__:shell_cargo_build:0123abcd4567", "reason": "lossy", "hint": "wm_get_result with this key returns it all; add a marker's selector for that part"}}).to_string();
    assert!(o200k(&wrapped) <= 700, "{} tokens:\n{out}", o200k(&wrapped));
    assert_eq!(
        compress(&codec("{}"), &out, Level::Normal),
        None,
        "idempotent"
    );
}

#[test]
fn the_sessions_cargo_builds_save_85_percent_and_keep_their_failures() {
    let logs = session_logs();
    assert_eq!(logs.len(), 3);
    for input in logs {
        let out = compress(&codec("{}"), &input, Level::Normal).expect("compressed");
        let verbatim = check_grammar(&input, &out);
        let lines: Vec<&str> = input.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with("error") || line.starts_with("test result") {
                assert!(verbatim.contains(&(i + 1)), "line {} lost:\n{out}", i + 1);
            }
        }
        let (before, after) = (o200k(&input), o200k(&out));
        assert!(
            after * 100 <= before * 15,
            "{before} -> {after} tokens:\n{out}"
        );
        assert_eq!(
            compress(&codec("{}"), &out, Level::Normal),
            None,
            "idempotent"
        );
    }
}

/// A line of noise, `i`-th of its run.
fn noise(i: usize) -> String {
    format!(
        "2026-11-29T10:{:02}:{:02}.{:03}Z INFO  compiling crate_{} v0.{}.1",
        i / 60 % 60,
        i % 60,
        i * 7 % 1000,
        i * 13 % 400,
        i % 20
    )
}

/// One row per case: params, input, expected output (`None`: unchanged).
fn rows() -> Vec<(&'static str, String, Option<String>)> {
    let log = |lines: &[String]| lines.join("\n");
    let mut rows = Vec::new();
    // Short logs are left alone.
    rows.push(("{}", log(&(0..19).map(noise).collect::<Vec<_>>()), None));
    // Pure noise folds to the frame, one template line and its marker.
    let lines: Vec<String> = (0..30).map(noise).collect();
    rows.push((
        r#"{"head_lines": 2, "tail_lines": 1, "min_lines": 5}"#,
        log(&lines),
        Some(format!(
            "{}\n{}\n[\u{d7}27 lines 3-29] <time> INFO  compiling crate_<n> <ver> (2026-11-29T10:00:02.014Z \u{2026} 2026-11-29T10:00:28.196Z)\n[\u{2026} 0 lines omitted, lines 3-29: 27 folded above; 0 failure lines omitted; wm_get_result {{\"lines\":\"3-29\"}}]\n{}",
            lines[0], lines[1], lines[29]
        )),
    ));
    // A failure in the middle keeps its context; exact repeats fold without values.
    let mut lines: Vec<String> = (0..16).map(|_| "waiting for lock".to_owned()).collect();
    lines.push("before".to_owned());
    lines.push("thread 'main' panicked at src/main.rs:2:5:".to_owned());
    lines.push("boom".to_owned());
    lines.push("after".to_owned());
    lines.extend((0..16).map(|_| "waiting for lock".to_owned()));
    rows.push((
        r#"{"head_lines": 0, "tail_lines": 0, "context_before": 1, "context_after": 1, "min_lines": 5}"#,
        log(&lines),
        Some("[\u{d7}16 lines 1-16] waiting for lock\n[\u{2026} 0 lines omitted, lines 1-16: 16 folded above; 0 failure lines omitted; wm_get_result {\"lines\":\"1-16\"}]\nbefore\nthread 'main' panicked at src/main.rs:2:5:\nboom\nafter\n[\u{d7}16 lines 21-36] waiting for lock\n[\u{2026} 0 lines omitted, lines 21-36: 16 folded above; 0 failure lines omitted; wm_get_result {\"lines\":\"21-36\"}]".to_owned()),
    ));
    // ANSI colours and progress redraws are cleaned; a rustc diagnostic is kept whole, and
    // the indented status lines after it are not part of it; the blank line after it, the
    // only line of its template there, is written as it is, not as a one-line fold.
    let mut lines: Vec<String> = (0..14)
        .map(|i| format!("   Compiling crate{} v0.1.{i}", ["a", "b"][i % 2]))
        .collect();
    lines.push("\u{1b}[1m\u{1b}[31merror[E0308]\u{1b}[0m: mismatched types".to_owned());
    lines.push("  --> src/main.rs:4:20".to_owned());
    lines.push("   |".to_owned());
    lines.push("4  |     let x: i32 = \"a\";".to_owned());
    lines.push("   |                  ^^^ expected `i32`, found `&str`".to_owned());
    lines.push("".to_owned());
    lines.extend((0..14).map(|i| format!("   Compiling crate{} v0.2.{i}\r", ["a", "b"][i % 2])));
    lines.push("Downloading 10%\rDownloading 50%\rDownloading 100%".to_owned());
    rows.push((
        r#"{"head_lines": 1, "tail_lines": 1, "context_before": 0, "context_after": 0, "min_lines": 5, "budget_ratio": 1}"#,
        log(&lines),
        Some("   Compiling cratea v0.1.0\n[\u{d7}7 lines 2-14]    Compiling crateb <ver> (v0.1.1 \u{2026} v0.1.13)\n[\u{d7}6 lines 3-13]    Compiling cratea <ver> (v0.1.2 \u{2026} v0.1.12)\n[\u{2026} 0 lines omitted, lines 2-14: 13 folded above; 0 failure lines omitted; wm_get_result {\"lines\":\"2-14\"}]\nerror[E0308]: mismatched types\n  --> src/main.rs:4:20\n   |\n4  |     let x: i32 = \"a\";\n   |                  ^^^ expected `i32`, found `&str`\n\n[\u{d7}7 lines 21-33]    Compiling cratea <ver> (v0.2.0 \u{2026} v0.2.12)\n[\u{d7}7 lines 22-34]    Compiling crateb <ver> (v0.2.1 \u{2026} v0.2.13)\n[\u{2026} 0 lines omitted, lines 21-34: 14 folded above; 0 failure lines omitted; wm_get_result {\"lines\":\"21-34\"}]\nDownloading 100%".to_owned()),
    ));
    rows
}

#[test]
fn rows_compress_to_their_expected_output() {
    for (i, (params, input, expected)) in rows().into_iter().enumerate() {
        let out = compress(&codec(params), &input, Level::Normal);
        assert_eq!(
            out,
            expected,
            "row {i}:\n{}",
            out.as_deref().unwrap_or("(unchanged)")
        );
        if let Some(out) = out {
            check_grammar(&input, &out);
            assert_eq!(
                compress(&codec(params), &out, Level::Normal),
                None,
                "row {i} idempotent"
            );
        }
    }
}

/// The contract checks the codec's cut of each output too (`Codec::CUT`), and holds it to
/// cutting every output of several lines: the log's units always leave a boundary to cut at.
#[test]
fn rows_hold_the_codec_contract() {
    let log = codec("{}");
    assert!(parrot_codec_api::DynCodec::cuts(&log));
    let contract = parrot_codec_test::Contract::new(&log).cuts_every_output();
    for (_, input, _) in rows() {
        contract.assert(&input);
    }
    contract.assert(&corpus("build-log.txt"));
}

#[test]
fn minimal_level_and_json_payloads_are_unchanged() {
    let input = corpus("build-log.txt");
    let log = codec("{}");
    assert_eq!(
        log.compress(Payload::text_only(&input), Level::Minimal)
            .unwrap(),
        Outcome::Unchanged
    );
    let json = serde_json::to_string(&input).unwrap();
    assert_eq!(
        log.compress(Payload::json(&json), Level::Normal).unwrap(),
        Outcome::Unchanged
    );
}

#[test]
fn failure_lines_over_the_budget_are_all_kept_and_the_marker_says_so() {
    let mut lines: Vec<String> = (0..400).map(noise).collect();
    for i in (5..400).step_by(4) {
        lines[i] = format!("ERROR job {i} failed to start");
    }
    let input = lines.join("\n");
    let out = compress(&codec("{}"), &input, Level::Normal).expect("compressed");
    let verbatim = check_grammar(&input, &out);
    for i in (5..400).step_by(4) {
        assert!(verbatim.contains(&(i + 1)), "failure line {} lost", i + 1);
    }
    assert!(
        out.contains("over budget to keep every failure line"),
        "{out}"
    );
}

/// The least the failure lines of `input` cost kept alone, as the budget counts (each line's
/// estimate and its line break; for each run of other lines between them, the cheaper of a
/// marker and the run written out; 0 without failure lines), and how many of the other lines
/// are too long to keep (omitted whatever the budget).
fn failures_alone(log: &Log, input: &str) -> (usize, usize) {
    let class = log.classes(input).expect("not compressed already");
    let cleaned = super::template::clean(input, |state| log.matcher.is_failure(state));
    let lines: Vec<&str> = cleaned
        .strip_suffix('\n')
        .unwrap_or(&cleaned)
        .split('\n')
        .collect();
    let marker = super::fold::MARKER_TOKENS;
    let (mut total, mut run, mut long) = (0, 0, 0);
    for (line, class) in lines.iter().zip(&class) {
        let cost = super::template::estimate_tokens(line) + 1;
        if *class == Class::Failure {
            total += run.min(marker) + cost;
            run = 0;
        } else {
            run += cost;
            long += usize::from(line.len() > 1000);
        }
    }
    if !class.contains(&Class::Failure) {
        total = 0;
        run = 0;
    }
    (total + run.min(marker), long)
}

/// The lines the markers of `output` say are omitted (neither verbatim nor folded).
fn omitted(output: &str) -> usize {
    output
        .lines()
        .filter_map(|line| line.strip_prefix("[\u{2026} "))
        .map(|rest| number(rest).0)
        .sum()
}

/// gradle-01.log at `aggressive` (a budget of 300) came out at 272 estimated tokens, its
/// markers saying `over budget to keep every failure line`: the phrase was chosen on the
/// layout's cost before the lone blank lines between its failure lines were written out, each
/// still counted as a marker, and every marker said it.
#[test]
fn a_build_log_within_its_budget_is_not_said_to_be_over_it_to_keep_its_failure_lines() {
    let log = codec("{}");
    let input = corpus("logs/gradle-01.log");
    let out = compress(&log, &input, Level::Aggressive).expect("compressed");
    check_grammar(&input, &out);
    let (failures, _) = failures_alone(&log, &input);
    assert!(failures <= 300, "{failures}");
    assert!(!out.contains("over budget"), "{out}");
}

/// cargo-build-warnings.log: the markers said `over budget to keep every failure line` while
/// its failure lines fit the budget three times over: the markers between the warnings'
/// first lines and the crates' summaries were charged to the failure lines.
#[test]
fn the_markers_of_other_kept_lines_are_not_charged_to_the_failure_lines() {
    let log = codec("{}");
    let input = corpus("logs/real/cargo-build-warnings.log");
    let out = compress(&log, &input, Level::Normal).expect("compressed");
    let (failures, _) = failures_alone(&log, &input);
    assert!(failures * 3 <= 600, "{failures}");
    assert!(!out.contains("every failure line"), "{out}");
    assert!(
        out.contains("; over budget to keep each distinct warning and summary line once;"),
        "{out}"
    );
}

/// Failure lines over the budget, and every other line too long to keep: the budget drops
/// nothing (the long lines are omitted whatever it is), so no marker says it is over the
/// budget. One short line more, which the budget does drop, and every marker says it.
#[test]
fn over_budget_is_said_only_when_the_budget_dropped_a_line_for_the_failure_lines() {
    let log = codec(r#"{"budget_tokens": 100}"#);
    let long = |i: usize| {
        format!(
            "   Running `rustc --crate-name crate_{i} {}`",
            "--cfg x ".repeat(150)
        )
    };
    let mut lines: Vec<String> = (0..30)
        .map(|i| match i % 3 {
            0 => format!("error[E0308]: mismatched types in crate_{i}"),
            _ => long(i),
        })
        .collect();
    let input = lines.join("\n");
    let (failures, long_lines) = failures_alone(&log, &input);
    assert!(failures > 100, "{failures}");
    let out = compress(&log, &input, Level::Normal).expect("compressed");
    check_grammar(&input, &out);
    assert_eq!(omitted(&out), long_lines, "{out}");
    assert!(!out.contains("over budget"), "{out}");

    lines[1] = "   Compiling crate_1 v0.1.1".to_owned();
    let input = lines.join("\n");
    let out = compress(&log, &input, Level::Normal).expect("compressed");
    check_grammar(&input, &out);
    let markers = out
        .lines()
        .filter(|line| line.starts_with("[\u{2026} "))
        .count();
    assert_eq!(
        out.matches("; over budget to keep every failure line;")
            .count(),
        markers,
        "{out}"
    );
}

#[test]
fn hostile_text_never_panics_and_keeps_the_guarantees() {
    let log = codec(r#"{"min_lines": 2}"#);
    let long = "x".repeat(5_000_000);
    let cases: Vec<String> = vec![
        String::new(),
        "\n\n\n\n".repeat(50),
        "\r".repeat(1000),
        "\0\0\0\n".repeat(100),
        "line\r\n".repeat(100),
        long.clone(),
        format!("{long}\n{long}\n"),
        format!("ERROR {long}\n{}", "noise 1\n".repeat(50)),
        "\u{1b}[".repeat(100) + "\n" + &"\u{1b}]8;;x\n".repeat(100),
        "[\u{d7}".repeat(100) + "\n[\u{2026} 3 lines omitted, lines 1-3\n",
        // An empty test name once sent the templating into an endless loop.
        "test  ... ok\n".repeat(50),
    ];
    for input in &cases {
        for level in Level::ALL {
            if let Some(out) = compress(&log, input, level) {
                check_grammar(input, &out);
            }
        }
    }
    // A failure line is never clipped, however long.
    let input = &cases[7];
    let out = compress(&log, input, Level::Normal).expect("the noise folds");
    assert!(out.lines().any(|line| line.len() == long.len() + 6));
}

#[test]
fn params_are_validated_naming_the_key() {
    for (params, key) in [
        (r#"{"failure_patterns": [""]}"#, "failure_patterns"),
        (r#"{"failure_patterns": "x"}"#, "failure_patterns"),
        (r#"{"failure_patterns": [1]}"#, "failure_patterns"),
        (r#"{"failure_patterns": ["a\nb"]}"#, "failure_patterns"),
        (r#"{"budget_ratio": 0}"#, "budget_ratio"),
        (r#"{"budget_ratio": 1.5}"#, "budget_ratio"),
        (r#"{"budget_tokens": 0}"#, "budget_tokens"),
        (r#"{"min_lines": 0}"#, "min_lines"),
        (r#"{"head_lines": -1}"#, "head_lines"),
        (r#"{"context_afterr": 1}"#, "context_afterr"),
    ] {
        let err = parrot_codec_api::build::<Log>(Params::from_json(params).unwrap()).unwrap_err();
        assert_eq!(err.key(), Some(key), "{params}: {err}");
    }
}

#[test]
fn extra_failure_patterns_keep_their_lines() {
    let mut lines: Vec<String> = (0..60).map(noise).collect();
    lines[30] = "deploy aborted by policy".to_owned();
    let input = lines.join("\n");
    let plain = compress(&codec("{}"), &input, Level::Normal).unwrap();
    assert!(!check_grammar(&input, &plain).contains(&31));
    let log = codec(r#"{"failure_patterns": ["aborted by"]}"#);
    let out = compress(&log, &input, Level::Normal).unwrap();
    assert!(check_grammar(&input, &out).contains(&31), "{out}");
}

/// One row per tool family: a failure line the table must keep.
const FAILURES: &[&str] = &[
    "error: could not compile `app` (bin \"app\") due to 1 previous error",
    "test result: FAILED. 1 passed; 1 failed; 0 ignored",
    "thread 'tests::it_fails' panicked at src/lib.rs:9:9:",
    "Traceback (most recent call last):",
    "E       assert 3 == 4",
    "FAILED tests/test_calc.py::test_add - assert 3 == 4",
    "--- FAIL: TestParse (0.00s)",
    "FAIL\texample.com/pkg\t0.012s",
    "panic: runtime error: index out of range [3] with length 3",
    "./main.go:5:2: undefined: x",
    "goroutine 1 [running]:",
    "  \u{2715} adds numbers (3 ms)",
    "npm ERR! code ELIFECYCLE",
    "[ERROR] BUILD FAILURE",
    "FAILURE: Build failed with an exception.",
    "Exception in thread \"main\" java.lang.IllegalStateException: boom",
    "Caused by: java.io.IOException: disk",
    "main.c:12:5: error: expected ';' before '}' token",
    "make: *** [Makefile:3: all] Error 1",
    "/usr/bin/ld: main.o: undefined reference to `foo'",
    "Error from server (NotFound): pods \"web\" not found",
    "web-5d9c   0/1   CrashLoopBackOff   5   3m",
    "ERROR: failed to solve: process \"/bin/sh -c make\" did not complete",
    "2026-11-29 10:00:00 FATAL db unreachable",
    "Process completed with exit code 1.",
    "container exited with code 137",
];

#[test]
fn every_tool_familys_failure_line_is_kept() {
    for failure in FAILURES {
        let mut lines: Vec<String> = (0..60).map(noise).collect();
        lines[30] = (*failure).to_owned();
        let input = lines.join("\n");
        let out = compress(&codec("{}"), &input, Level::Normal).unwrap();
        assert!(
            check_grammar(&input, &out).contains(&31),
            "{failure}:\n{out}"
        );
    }
}

/// Lines in which a tool says it cut its output or saved it elsewhere, as tools print them.
const TRUNCATIONS: &[&str] = &[
    // Claude Code's Bash tool, over 30,000 characters.
    "Output too large (458.2KB). Full output saved to: /root/.claude/projects/-work-app/3f2a9c1e-7b4d-4e8a-9c0f-2d6b8e1a5f3c/tool-results/toolu_01XkR7mV2pQ9sT4wY6zB8nLc.txt",
    "Preview (first 2KB):",
    "Full output saved to: /tmp/claude-output-1733224800.txt",
    // Other agents' and tools' markers.
    "[output truncated]",
    "... (truncated)",
    "<response clipped><NOTE>To save on context only part of this file has been shown to you.</NOTE> [Output truncated: 48213 characters]",
    "Output truncated to 1000 lines.",
    "warning: output truncated (exceeded 10 MB)",
    "\u{2026} 2,418 more lines",
    "  ... 312 more lines",
    "... 57 lines omitted ...",
    "  \"body\": \"Steps to reproduce[\u{2026} 18342 chars clipped \u{2026}]\",",
    "[TRUNCATED] log exceeds the 4 MiB limit",
    "Truncated 120 lines from the middle of the output",
];

#[test]
fn truncation_notices_are_kept_verbatim() {
    for notice in TRUNCATIONS {
        for at in [0, 1, 2, 30, 59] {
            let mut lines: Vec<String> = (0..60).map(noise).collect();
            lines[at] = (*notice).to_owned();
            let input = lines.join("\n");
            let out = compress(&codec("{}"), &input, Level::Normal).unwrap();
            assert!(
                check_grammar(&input, &out).contains(&(at + 1)),
                "{notice} at line {}:\n{out}",
                at + 1
            );
        }
    }
}

/// Claude Code's notice heads a 2 KB preview of varied lines; the budget drops head lines
/// from the innermost out, and dropped the preview's header with them.
#[test]
fn a_saved_outputs_notice_survives_the_budget() {
    const WORDS: &[&str] = &[
        "resolving",
        "feature",
        "unification",
        "for",
        "target",
        "host",
        "build",
        "script",
        "output",
        "linking",
        "metadata",
        "pipelined",
        "crate",
        "graph",
        "fingerprint",
        "dirty",
        "fresh",
        "rerun",
        "because",
        "changed",
        "environment",
        "variable",
        "profile",
        "release",
    ];
    let mut lines = vec![
        TRUNCATIONS[0].to_owned(),
        String::new(),
        TRUNCATIONS[1].to_owned(),
    ];
    // Lines of words without digits, each its own template, as a preview of unlike lines.
    lines.extend((0..40).map(|i| {
        (0..12)
            .map(|k| WORDS[(i * 7 + k * (i % 5 + 1)) % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }));
    let input = lines.join("\n");
    let out = compress(&codec("{}"), &input, Level::Normal).unwrap();
    let kept = check_grammar(&input, &out);
    assert!(kept.contains(&1) && kept.contains(&3), "{out}");
    assert!(o200k(&out) < o200k(&input), "still folded: {out}");
}

#[test]
fn a_zero_exit_code_is_not_a_failure() {
    let mut lines: Vec<String> = (0..60).map(noise).collect();
    lines[30] = "Process completed with exit code 0.".to_owned();
    let input = lines.join("\n");
    let out = compress(&codec("{}"), &input, Level::Normal).unwrap();
    assert!(!check_grammar(&input, &out).contains(&31), "{out}");
}

/// A line the block rows put around their block: noise, and not part of any block.
fn plain(i: usize) -> String {
    format!("Downloaded crate_{i} v0.1.{i}")
}

/// One row per block shape that once lost (or swallowed) lines: the block's lines, and which
/// of them are failure lines. Every other line of the block, and the plain lines around it,
/// must not be.
const BLOCKS: &[(&str, &[&str], &[usize])] = &[
    (
        "pytest_section_kept_through_its_location_line",
        &[
            "_________________________ test_client_4_527 _________________________",
            "",
            "    def test_client_4_527():",
            "        result = client.compute(seed=86)",
            ">       assert result.total == 131",
            "E       AssertionError: assert 86 == 131",
            "E        +  where 86 = Result(total=86).total",
            "",
            "tests/test_client.py:16: AssertionError",
            "tests/auth/test_x.py::test_slow_826 SKIPPED (requires network) [ 47%]",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8],
    ),
    (
        "pytest_traceback_entries_do_not_end_the_section",
        &[
            "____________________ ERROR collecting tests/test_export.py _____________________",
            "ImportError while importing test module '/tmp/invoices/tests/test_export.py'.",
            "Traceback:",
            "/usr/lib/python3.11/importlib/__init__.py:126: in import_module",
            "    return _bootstrap._gcd_import(name[level:], package, level)",
            "tests/test_export.py:1: in <module>",
            "    from invoices.export import to_csv",
            "E   ModuleNotFoundError: No module named 'invoices'",
            "_________________ test_a _________________",
            "    def test_a():",
            "======================== warnings summary ========================",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    ),
    (
        "pytest_separator_between_traceback_entries_is_not_a_header",
        &["_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _"],
        &[],
    ),
    (
        "jest_section_kept_through_its_stack",
        &[
            " FAIL  src/lib/cart4.test.ts",
            "  \u{25cf} Cart \u{203a} computes total for basket 4",
            "",
            "    expect(received).toBe(expected) // Object.is equality",
            "",
            "    Expected: 685",
            "    Received: 6",
            "",
            "      at Object.<anonymous> (src/lib/cart4.test.ts:285:20)",
            "      at processTicksAndRejections (node:internal/process/task_queues:86:5)",
            " PASS  src/utils/client104.test.tsx (1.86s)",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    ),
    (
        "jest_cross_does_not_pull_in_the_passing_tests_after_it",
        &[
            "  \u{2715} formats currency for locale #0213 (1 ms)",
            "  \u{2713} formats currency for locale #0214 (1 ms)",
            "  \u{2713} formats currency for locale #0215 (1 ms)",
        ],
        &[0],
    ),
    (
        "cargo_section_ends_at_its_note_line",
        &[
            "---- tee::tests::case_1 stdout ----",
            "thread 'tee::tests::case_1' panicked at src/tee.rs:455:29:",
            "assertion `left == right` failed: counts differ for shard 1",
            "  left: 153",
            " right: 705",
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
            "",
            "test tee::tests::other ... ok",
        ],
        &[0, 1, 2, 3, 4, 5],
    ),
    (
        "clang_diagnostic_kept_with_source_caret_note_and_count",
        &[
            "src/lexer/reader_1.cpp:438:22: error: no matching function for call to 'encode1'",
            "    auto out = encode1(buffer, len, Mode::Fast);",
            "               ^~~~~~~",
            "include/codec.h:42:4: note: candidate function not viable: requires 2 arguments, but 3 were provided",
            "1 error generated.",
        ],
        &[0, 1, 2, 3, 4],
    ),
    (
        "gcc_in_function_header_kept_before_its_error",
        &[
            "src/lexer/registry_6.c: In function 'parse_6':",
            "src/lexer/registry_6.c:499:9: error: 'count6' undeclared (first use in this function)",
            "  499 |     total += count6 * stride;",
            "      |              ^^^^^^^",
        ],
        &[0, 1, 2, 3],
    ),
    (
        "gcc_in_function_header_before_a_warning_is_not_a_failure",
        &[
            "src/a.c: In function 'f':",
            "src/a.c:3:9: warning: unused variable 'x' [-Wunused-variable]",
        ],
        &[],
    ),
    (
        "go_build_package_header_kept_before_its_errors",
        &[
            "# github.com/acme/svc/pkg/api",
            "./api_4.go:133:12: undefined: handler494",
        ],
        &[0, 1],
    ),
    (
        "a_heading_before_plain_lines_is_not_a_package_header",
        &["# github.com/acme/svc/pkg/api", "# Release notes"],
        &[],
    ),
    (
        "node_uncaught_exception_preamble_kept",
        &[
            "/home/ci/web/node_modules/vite/dist/node/chunks/dep-4ea0e50d.js:28343",
            "          throw new Error(`Could not resolve \"./widget1\" from \"src/app.tsx\"`);",
            "          ^",
            "",
            "Error: Could not resolve \"./widget1\" from \"src/app.tsx\"",
            "    at file:///home/ci/web/node_modules/vite/dist/node/chunks/dep-3f320619.js:48278:24",
            "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
        ],
        &[0, 1, 2, 4, 5, 6],
    ),
    (
        "gradle_what_went_wrong_kept_with_its_reason",
        &[
            "FAILURE: Build failed with an exception.",
            "",
            "* What went wrong:",
            "Execution failed for task ':core:test'.",
            "> There were failing tests. See the report at: file:///ci/core/index.html",
            "",
            "BUILD FAILED in 2m 8s",
        ],
        &[0, 2, 3, 4, 6],
    ),
    (
        "pytest_run_that_collected_nothing_because_of_errors_is_a_failure",
        &[
            "collected 0 items / 2 errors",
            "collecting ... collected 9 items / 1 error",
            "!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!",
            "============================== 2 errors in 0.09s ===============================",
            "============================= no tests ran in 0.01s =============================",
            "======================== 1 error in 0.20s ========================",
        ],
        &[0, 1, 2, 3, 4, 5],
    ),
    (
        "pytest_collected_items_without_errors_is_not_a_failure",
        &[
            "collected 12 items",
            "collected 10 items / 2 deselected / 8 selected",
        ],
        &[],
    ),
    (
        "go_no_test_files_is_not_a_failure",
        &["?   \tgithub.com/acme/svc/cmd\t[no test files]"],
        &[],
    ),
    (
        "jest_no_tests_found_is_a_failure_unless_it_exits_0",
        &[
            "No tests found, exiting with code 1",
            "No tests found, exiting with code 0",
        ],
        &[0],
    ),
    (
        "goroutine_dump_ends_at_its_last_frame",
        &[
            "panic: assignment to entry in nil map",
            "",
            "goroutine 36 [running]:",
            "main.(*Ledger).Append(0xc000428ae2)",
            "\t/src/search/ledger.go:224 +0xa4e",
            "created by main.main in goroutine 1",
            "\t/src/main.go:12 +0x1d",
            "2026-12-02T04:55:20.752Z INFO  [auth] flushed 4261 events to kafka",
        ],
        &[0, 2, 3, 4, 5, 6],
    ),
    // Issue 36: a stack ends at the first line that is not a frame of its language, however
    // indented the lines after it are.
    (
        "node_error_ends_at_its_last_frame_not_at_the_indented_progress_after_it",
        &[
            "Error: ENOENT: no such file or directory, open 'src/mod_745.js'",
            "    at Object.openSync (node:fs:573:18)",
            "    at readModule (/tmp/logcap2/node/build.js:18:13)",
            "    at Module._compile (node:internal/modules/cjs/loader:1554:14) {",
            "  errno: -2,",
            "  code: 'ENOENT',",
            "  path: 'src/mod_745.js'",
            "}",
            "  compiled src/mod_746.js -> dist/mod_746.js (1.70 kB) in 0.1ms",
            "  compiled src/mod_747.js -> dist/mod_747.js (5.02 kB) in 0.2ms",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7],
    ),
    (
        "python_traceback_ends_at_its_exception_line",
        &[
            "Traceback (most recent call last):",
            "  File \"/tmp/logcap2/python/ingest.py\", line 29, in main",
            "    row = load(record)",
            "          ^^^^^^^^^^^^",
            "  File \"<frozen runpy>\", line 88, in _run_code",
            "  File \"/tmp/logcap2/python/ingest.py\", line 14, in parse_amount",
            "    return int(text)",
            "ValueError: invalid literal for int() with base 10: '12a'",
            "  loaded record r313: amount 5 (0.004 ms)",
            "  loaded record r314: amount 77 (0.003 ms)",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7],
    ),
    (
        "jvm_stack_ends_after_its_causes_and_more_line",
        &[
            "java.lang.IllegalStateException: record r240 has a bad amount",
            "\tat Ingest.load(Ingest.java:16)",
            "\tat Ingest.main(Ingest.java:31)",
            "Caused by: java.lang.NumberFormatException: For input string: \"12a\"",
            "\tat java.base/java.lang.Integer.parseInt(Integer.java:662)",
            "\t... 2 more",
            "  loaded record r241: amount 12 (0.010 ms)",
            "\tloaded record r242: amount 7 (0.010 ms)",
        ],
        &[0, 1, 2, 3, 4, 5],
    ),
    (
        "go_test_failure_ends_at_its_messages",
        &[
            "--- FAIL: TestSum (0.00s)",
            "    shards_test.go:10: Sum([1 2 3]) = 3, want 6",
            "        and a second line of the message",
            "    --- FAIL: TestSum/empty (0.00s)",
            "        shards_test.go:14: got 1",
            "    indexed shard 0: 7 keys in 1 pages",
            "    indexed shard 1: 11 keys in 2 pages",
        ],
        &[0, 1, 2, 3, 4],
    ),
    (
        "goroutine_dump_ends_before_a_tab_indented_line_that_is_no_frame",
        &[
            "goroutine 1 [running]:",
            "main.main()",
            "\t/src/main.go:12 +0x1d",
            "\tflushed 4261 events to kafka",
        ],
        &[0, 1, 2],
    ),
    (
        "rust_panic_ends_after_its_backtrace",
        &[
            "thread 'main' panicked at src/main.rs:4:5:",
            "assertion `left == right` failed",
            "  left: 1",
            " right: 2",
            "stack backtrace:",
            "   0: rust_begin_unwind",
            "             at /rustc/library/std/src/panicking.rs:665:5",
            "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
            "    indexed shard 0 in 3 pages",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7],
    ),
    (
        "cargo_failures_list_ends_at_its_last_name",
        &[
            "failures:",
            "    tests::lines_with_trailing_newline",
            "    tests::empty input",
        ],
        &[0, 1],
    ),
];

/// One row per line: a status line (a warning summary, a passing package) is neither a
/// failure nor a warning, and a line that only looks like one keeps its own class.
const STATUS: &[(&str, Class)] = &[
    (
        "warning: `ledger` (lib) generated 51 warnings",
        Class::Status,
    ),
    (
        "warning: `report` (lib) generated 51 warnings (run `cargo fix --lib -p report` to apply 41 suggestions)",
        Class::Status,
    ),
    ("warning: 3 warnings emitted", Class::Status),
    ("warning: 1 warning emitted", Class::Status),
    ("13 warnings", Class::Status),
    ("  2 warnings generated.", Class::Status),
    (
        "ok  \tgithub.com/acme/svc/pkg/metrics\t1.30s",
        Class::Status,
    ),
    ("ok  \texample.com/shards\t(cached)", Class::Status),
    ("3 warnings in module x", Class::Noise),
    ("warning: unused variable: `v1`", Class::Warning),
    (
        "FAIL\tgithub.com/acme/svc/internal/queue\t7.67s",
        Class::Failure,
    ),
    ("test result: ok. 5 passed; 0 failed", Class::Failure),
];

#[test]
fn status_lines_are_neither_failures_nor_warnings() {
    let log = codec("{}");
    for (line, expected) in STATUS {
        let mut lines: Vec<String> = (0..5).map(plain).collect();
        lines.push((*line).to_owned());
        lines.extend((5..10).map(plain));
        let class = log.classes(&lines.join("\n")).unwrap();
        assert_eq!(class[5], *expected, "{line:?}");
        for (i, class) in class.iter().enumerate().filter(|(i, _)| *i != 5) {
            assert_eq!(*class, Class::Noise, "{line:?}: line {i}");
        }
    }
}

#[test]
fn blocks_keep_their_lines_and_stop_where_they_end() {
    let log = codec("{}");
    for (name, block, failures) in BLOCKS {
        let mut lines: Vec<String> = (0..5).map(plain).collect();
        lines.extend(block.iter().map(|line| (*line).to_owned()));
        lines.extend((5..10).map(plain));
        let class = log
            .classes(&lines.join("\n"))
            .expect("not compressed already");
        for (i, line) in lines.iter().enumerate() {
            let in_block = i.checked_sub(5).filter(|j| *j < block.len());
            let expected = in_block.is_some_and(|j| failures.contains(&j));
            assert_eq!(
                class[i] == Class::Failure,
                expected,
                "{name}: line {i} {line:?} is {:?}",
                class[i]
            );
        }
    }
}

#[test]
fn a_path_without_a_digit_folds_with_the_paths_that_have_one() {
    // npm-01.log: `src/routes/dfcaeb.tsx` kept its text while its neighbours' paths became
    // `<path>`, so the fold's template matched a line the fold did not count.
    let lines: Vec<String> = (0..40)
        .map(|i| {
            let path = if i == 17 {
                "src/routes/dfcaeb.tsx".to_owned()
            } else {
                format!("src/app/{:06x}.tsx", i * 7919)
            };
            format!(
                "vite v5.{}.{} transforming ({}) {path}",
                i % 4,
                i % 9,
                i * 13
            )
        })
        .collect();
    let input = lines.join("\n");
    let out = compress(
        &codec(r#"{"head_lines": 0, "tail_lines": 0}"#),
        &input,
        Level::Normal,
    )
    .unwrap();
    assert!(
        out.starts_with(
            "[\u{d7}40 lines 1-40] vite <ver> transforming (<n>) <path> (v5.0.0 \u{2026} v5.3.3)\n"
        ),
        "{out}"
    );
    check_grammar(&input, &out);
}

#[test]
fn a_head_line_dropped_by_the_budget_counts_in_the_fold_that_starts_at_it() {
    // The fold's `A` and first value are its first line's: a head line the budget dropped
    // counts in that fold, never as omitted.
    let mut lines: Vec<String> = vec!["$ cargo build".to_owned()];
    lines.extend((1..40).map(noise));
    let input = lines.join("\n");
    let out = compress(
        &codec(r#"{"head_lines": 10, "tail_lines": 0, "budget_tokens": 120}"#),
        &input,
        Level::Normal,
    )
    .unwrap();
    let first = lines[1].split(' ').next().unwrap();
    assert!(
        out.starts_with(&format!(
            "$ cargo build\n[\u{d7}39 lines 2-40] <time> INFO  compiling crate_<n> <ver> ({first} \u{2026}"
        )),
        "{out}"
    );
    assert!(
        out.contains("[\u{2026} 0 lines omitted, lines 2-40: 39 folded above;"),
        "{out}"
    );
    check_grammar(&input, &out);
}

#[test]
fn a_one_line_fold_at_a_region_edge_is_written_as_the_line() {
    // npm-01.log: `[×1 lines 705-705] ` and `[×1 lines 710-710] Node.js v20.4.3`, each with
    // a marker of its own, cost more than the lines.
    let mut lines: Vec<String> = (0..30).map(noise).collect();
    lines.push("Error: Could not resolve \"./widget1\"".to_owned());
    lines.push("".to_owned());
    lines.push("Node.js v20.4.3".to_owned());
    lines.extend((30..60).map(noise));
    lines.push("npm ERR! code ELIFECYCLE".to_owned());
    let input = lines.join("\n");
    let out = compress(
        &codec(
            r#"{"head_lines": 0, "tail_lines": 0, "context_before": 0, "context_after": 0, "budget_ratio": 1}"#,
        ),
        &input,
        Level::Normal,
    )
    .unwrap();
    assert!(!out.contains("[\u{d7}1 line"), "{out}");
    let verbatim = check_grammar(&input, &out);
    assert!(verbatim.contains(&32) && verbatim.contains(&33), "{out}");
}

/// The benchmark's stages count what they ran on: lines (a coloured and a redrawn one among
/// them), then the lines the pattern table matched.
#[test]
fn the_benchmarks_stages_count_lines_and_matches() {
    use super::Stage;
    let log = codec("{}");
    let text = "\u{1b}[32m   Compiling\u{1b}[0m a v0.1.0\nerror[E0308]: mismatched types\n  \
                Building [==  ] 10%\r  Building [====] 100%\nwarning: unused variable: `x`\n\
                done\n";
    assert_eq!(log.run_stages(text, Stage::Lines), 5);
    assert_eq!(log.run_stages(text, Stage::Scan), 2);
    assert_eq!(log.run_stages("no failure here\nnor here", Stage::Scan), 0);
}

/// A 40-line log of noise with `line` as its line 21 (in the middle, outside the frame).
fn with_line_21(line: &str) -> String {
    let mut lines: Vec<String> = (0..40).map(noise).collect();
    lines[20] = line.to_owned();
    lines.join("\n")
}

/// One row per carriage-return redraw: params, the line (raw), and what the output shows of
/// it, verbatim (`None`: it is noise, folded to its final state's template).
const REDRAWS: &[(&str, &str, Option<&str>)] = &[
    // The review's line: the failure between two progress states.
    (
        "{}",
        "progress 50%\rERROR: disk full, write failed\rprogress 100%",
        Some("ERROR: disk full, write failed\u{240d}progress 100%"),
    ),
    // Coloured states, a rustc error overwritten by a cleared line.
    (
        "{}",
        "\u{1b}[32mBuilding 10%\u{1b}[0m\r\u{1b}[1;31merror[E0308]\u{1b}[0m: mismatched types\r\u{1b}[2KBuilding 100%",
        Some("error[E0308]: mismatched types\u{240d}Building 100%"),
    ),
    // Two failures, in their order, then the final state.
    (
        "{}",
        "run 1%\rFAILED tests/test_calc.py::test_add - assert 3 == 4\rrun 50%\rthread 'main' panicked at src/main.rs:2:5:\rrun 100%",
        Some(
            "FAILED tests/test_calc.py::test_add - assert 3 == 4\u{240d}thread 'main' panicked at src/main.rs:2:5:\u{240d}run 100%",
        ),
    ),
    // A failure redrawn in place over and over is kept once.
    (
        "{}",
        "ERROR: retrying upload\rERROR: retrying upload\rERROR: retrying upload\rwaiting",
        Some("ERROR: retrying upload\u{240d}waiting"),
    ),
    // A failure that is the final state too: the final state alone, as before.
    (
        "{}",
        "upload 50%\rERROR: quota exceeded\rERROR: quota exceeded",
        Some("ERROR: quota exceeded"),
    ),
    (
        "{}",
        "upload 50%\rERROR: quota exceeded",
        Some("ERROR: quota exceeded"),
    ),
    // A line ending in `\r` (a CRLF log): the `\r` only ends it.
    (
        "{}",
        "fetch 10%\rFATAL: connection reset\rfetch 100%\r",
        Some("FATAL: connection reset\u{240d}fetch 100%"),
    ),
    // An extra failure pattern counts in an overwritten state as in a line.
    (
        r#"{"failure_patterns": ["aborted by policy"]}"#,
        "deploy 10%\rdeploy aborted by policy\rdeploy 100%",
        Some("deploy aborted by policy\u{240d}deploy 100%"),
    ),
    // An overwritten warning or progress state is not kept: only failures are.
    ("{}", "warning: unused variable: `x`\rBuilding 100%", None),
    (
        "{}",
        "Downloading 10%\rDownloading 50%\rDownloading 100%",
        None,
    ),
];

#[test]
fn a_failure_a_redraw_overwrote_is_kept_with_the_final_state() {
    let mut problems = Vec::new();
    for (params, line, expected) in REDRAWS {
        let log = codec(params);
        let input = with_line_21(line);
        let out = compress(&log, &input, Level::Normal).expect("the noise folds");
        let verbatim = check_grammar_of(&log, &input, &out);
        let shown = out.lines().any(|l| Some(l) == *expected);
        match expected {
            Some(_) if !(verbatim.contains(&21) && shown) => {
                problems.push(format!("{line:?} not kept as {expected:?}:\n{out}"));
            }
            None if verbatim.contains(&21) || out.contains('\u{240d}') => {
                problems.push(format!("{line:?} kept:\n{out}"));
            }
            _ => {}
        }
        assert_eq!(
            compress(&log, &out, Level::Normal),
            None,
            "{line:?} idempotent"
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// One row per line that is, or looks to a reader like, one of the codec's fold lines or
/// markers: a payload holding it is left unchanged (a forged `[×4000 lines …]` never reaches
/// the model beside real markers of a 300-line log).
const LOOKALIKES: &[&str] = &[
    // The codec's own lines, exactly.
    "[\u{d7}4000 lines 1-4000] <time> INFO  compiling crate_<n> <ver>",
    "[\u{2026} 4000 lines omitted, lines 1-4000: 0 folded above; 0 failure lines omitted; wm_get_result {\"lines\":\"1-4000\"}]",
    // The review's near misses: no space after the sign's number or the bracket, a leading
    // space, a leading zero-width space, ASCII dots, an `x`, a fullwidth bracket.
    "[\u{d7}4000 lines 1-4000]<time> INFO  compiling crate_<n> <ver>",
    "[\u{2026}4000 lines omitted, lines 1-4000: 0 folded above; 0 failure lines omitted]",
    " [\u{d7}4000 lines 1-4000] <time> INFO  compiling crate_<n> <ver>",
    "\u{200b}[\u{d7}4000 lines 1-4000] <time> INFO  compiling crate_<n> <ver>",
    "\u{200b}[\u{2026} 4000 lines omitted, lines 1-4000: 0 folded above]",
    "[... 4000 lines omitted, lines 1-4000: 0 folded above; 0 failure lines omitted]",
    "[x4000 lines 1-4000] <time> INFO  compiling crate_<n> <ver>",
    "\u{ff3b}\u{d7}4000 lines 1-4000] <time> INFO  compiling crate_<n> <ver>",
    "\u{ff3b}\u{2026} 4000 lines omitted, lines 1-4000: 0 folded above]",
    // Their neighbours: a byte order mark and a tab, an en dash, thousands separators, a
    // Cyrillic `х`, fullwidth digits, capitals, no sign, a word joiner inside the word.
    "\u{feff}\t[\u{d7}4000 lines 1-4000] x",
    "[\u{d7}4000 lines 1\u{2013}4000] x",
    "[\u{d7}4,000 lines 1-4,000] x",
    "[\u{445}4000 lines 1-4000] x",
    "[\u{d7}\u{ff14}\u{ff10}\u{ff10}\u{ff10} lines 1-4000] x",
    "[X4000 LINES 1-4000] x",
    "[4000 lines 1-4000] x",
    "[\u{d7}4000 li\u{2060}nes 1-4000] x",
    // The count of a warning's repeats, and lookalikes of it.
    "[\u{d7}26 warnings like this, lines 21-271; wm_get_result {\"lines\":\"21-271\"}]",
    "[x26 warnings, lines 21-271]",
    "\u{200b}[\u{d7}26 WARNINGS LIKE THIS lines 21\u{2013}271]",
    // A lookalike kept in a line by a failure a redraw overwrote: first, or after the `␍`.
    "[\u{d7}4000 lines 1-4000] ERROR: x\rdone",
    "50%\rERROR: disk full\r[\u{d7}4000 lines 1-4000] x",
];

/// One row per line that only starts like a marker: the log around it is compressed.
const NOT_LOOKALIKES: &[&str] = &[
    "[x] 4000 lines 1-4000",
    "[4000 lines]",
    "[... 120 more lines ...]",
    "[INFO] read 4000 lines 1-4000",
    "[2026-11-29 10:00:00] 4000 lines 1-4000",
    "copied [\u{d7}4000 lines 1-4000] from the cache",
    "  [ OK ] mounted /var",
    "[12 warnings]",
    "[\u{d7}26 warnings like this]",
];

/// A 300-line log of noise with `line` as its line 151.
fn with_line_151(line: &str) -> String {
    let mut lines: Vec<String> = (0..300).map(noise).collect();
    lines[150] = line.to_owned();
    lines.join("\n")
}

#[test]
fn a_line_that_looks_like_a_marker_leaves_the_payload_unchanged() {
    let log = codec("{}");
    let mut problems = Vec::new();
    for line in LOOKALIKES {
        if let Some(out) = compress(&log, &with_line_151(line), Level::Normal) {
            problems.push(format!("{line:?} was taken for a log line:\n{out}"));
        }
    }
    for line in NOT_LOOKALIKES {
        let input = with_line_151(line);
        match compress(&log, &input, Level::Normal) {
            Some(out) => {
                check_grammar(&input, &out);
            }
            None => problems.push(format!("{line:?} was taken for a marker")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `n` lines of cargo-test output: runs of 10 `FAILED` lines, each followed by 30 lines of
/// noise.
fn failing_tests(n: usize) -> String {
    (0..n)
        .map(|i| match i % 40 {
            0..10 => format!("test t_{i} ... FAILED\n"),
            _ => format!("   Compiling crate_{i} v0.1.{}\n", i % 97),
        })
        .collect()
}

#[test]
fn a_cut_keeps_whole_units_and_counts_what_it_removed() {
    let log = codec("{}");
    let input = failing_tests(2_000);
    let output = compress(&log, &input, Level::Normal).expect("compressed");
    let chars = |text: &str| text.chars().count();
    for room in [0, 300, 1_000, 5_000, chars(&output) - 1] {
        let cut = log
            .cut(&input, &output, room, &chars)
            .expect("a log output walks");
        let kept = &output[..cut.kept];
        assert!(
            chars(kept) + chars(&cut.marker) <= room || kept.is_empty(),
            "room {room}"
        );
        assert!(kept.is_empty() || kept.ends_with('\n'), "room {room}");
        let shown = kept.lines().filter(|l| l.ends_with("FAILED")).count();
        assert_eq!(shown, cut.kept_failures, "room {room}");
        assert_eq!(shown + cut.removed_failures, 500, "room {room}");
        assert_eq!(
            kept.lines().count() + cut.removed_lines,
            output.lines().count(),
            "room {room}"
        );
        assert_eq!(cut.to, 2_000);
        let omitted = cut.to - cut.from + 1;
        assert_eq!(
            cut.marker,
            format!(
                "[\u{2026} {} omitted, lines {}-2000: cut at max_result_chars, {} of this \
                 result not shown; {} omitted; wm_get_result {{\"lines\":\"{}-2000\"}}]",
                counted(omitted, "line", "lines"),
                cut.from,
                counted(cut.removed_lines, "line", "lines"),
                counted(cut.removed_failures, "failure line", "failure lines"),
                cut.from
            )
        );
        // The kept lines end with line A - 1: a verbatim line or a region's marker.
        let before = kept
            .lines()
            .last()
            .map_or(0, |last| match last.strip_prefix("test t_") {
                Some(rest) => rest.split(' ').next().unwrap().parse::<usize>().unwrap() + 1,
                None => {
                    let range = last.split_once(", lines ").unwrap().1;
                    let to = range.split_once(':').unwrap().0.split_once('-').unwrap().1;
                    to.parse().unwrap()
                }
            });
        assert_eq!(cut.from, before + 1, "room {room}");
    }
}

#[test]
fn a_cut_marker_is_a_line_of_the_codecs_own() {
    let log = codec("{}");
    let input = failing_tests(2_000);
    let output = compress(&log, &input, Level::Normal).expect("compressed");
    let chars = |text: &str| text.chars().count();
    let cut = log.cut(&input, &output, 3_000, &chars).unwrap();
    assert!(super::fold::looks_like_own_line(&cut.marker));
    // The cut text, or a log holding its marker, is compressed again to nothing new.
    let again = format!("{}{}\n", &output[..cut.kept], cut.marker);
    assert_eq!(compress(&log, &again, Level::Normal), None);
    assert_eq!(
        compress(&log, &with_line_151(&cut.marker), Level::Normal),
        None
    );
}

#[test]
fn a_text_that_is_not_the_codecs_output_of_the_original_is_not_cut_by_its_lines() {
    let log = codec("{}");
    let input = failing_tests(2_000);
    let output = compress(&log, &input, Level::Normal).expect("compressed");
    let chars = |text: &str| text.chars().count();
    let other = failing_tests(1_999);
    let cases = [
        ("another original", other.as_str(), output.as_str()),
        (
            "a line dropped",
            input.as_str(),
            output.split_once('\n').unwrap().1,
        ),
        ("an empty output", input.as_str(), ""),
    ];
    for (name, original, text) in cases {
        assert_eq!(log.cut(original, text, 1_000, &chars), None, "{name}");
    }
}

/// 300 lines of noise with two distinct one-line warnings repeated among them: 26 of
/// `warning: unused variable: `vN`` (lines 21-271) and 13 of `WARN deprecated option …`
/// (lines 26-266).
fn repeated_warnings() -> String {
    let mut lines: Vec<String> = (0..300).map(noise).collect();
    for i in (20..280).step_by(10) {
        lines[i] = format!("warning: unused variable: `v{i}`");
    }
    for i in (25..280).step_by(20) {
        lines[i] = format!("WARN deprecated option --fast{i} ignored");
    }
    lines.join("\n")
}

#[test]
fn each_distinct_warning_is_kept_once_with_its_exact_count() {
    let input = repeated_warnings();
    let log = codec("{}");
    let out = compress(&log, &input, Level::Normal).expect("compressed");
    check_grammar(&input, &out);
    for (first, count, a, b) in [
        ("warning: unused variable: `v20`", 26, 21, 271),
        ("WARN deprecated option --fast25 ignored", 13, 26, 266),
    ] {
        let marker = format!(
            "[\u{d7}{count} warnings like this, lines {a}-{b}; wm_get_result {{\"lines\":\"{a}-{b}\"}}]"
        );
        assert!(out.contains(&format!("{first}\n{marker}\n")), "{out}");
    }
    assert_eq!(compress(&log, &out, Level::Normal), None, "idempotent");
}

#[test]
fn the_budget_drops_ordinary_lines_before_a_distinct_warnings_first_line() {
    let input = repeated_warnings();
    let lines: Vec<&str> = input.lines().collect();
    // Each distinct warning's first line and the line of its count, and what they cost.
    let firsts = [
        ("warning: unused variable: `v20`", 26, 21, 271),
        ("WARN deprecated option --fast25 ignored", 13, 26, 266),
    ]
    .map(|(first, count, a, b)| {
        format!(
            "{first}\n[\u{d7}{count} warnings like this, lines {a}-{b}; wm_get_result {{\"lines\":\"{a}-{b}\"}}]"
        )
    });
    let cost = |text: &str| {
        text.lines()
            .map(|line| super::template::estimate_tokens(line) + 1)
            .sum::<usize>()
    };
    // Room for the warnings and the markers, not for the frame and every fold.
    let out = compress(&codec(r#"{"budget_tokens": 300}"#), &input, Level::Normal).unwrap();
    check_grammar(&input, &out);
    assert!(
        !out.contains(lines[1]),
        "a head line outlasted the warnings:\n{out}"
    );
    for first in &firsts {
        assert!(out.contains(first.as_str()), "{out}");
    }
    // What the first lines at `at` (0-based) cost kept alone: their lines and counts, and
    // for each run of other lines around them the cheaper of a marker and the run written out.
    let alone = |at: &[usize]| -> usize {
        let mut total = 0;
        let mut run = 0;
        for (i, line) in lines.iter().enumerate() {
            if let Some(k) = at.iter().position(|&a| a == i) {
                total += run.min(super::fold::MARKER_TOKENS) + cost(&firsts[k]);
                run = 0;
            } else {
                run += cost(line);
            }
        }
        total + run.min(super::fold::MARKER_TOKENS)
    };
    // At every budget: while a distinct warning's first line is dropped, no ordinary line, no
    // fold line and no other line of a warning is kept; the later warning goes first, and
    // only while the first lines alone, with the markers between them, cost more than the
    // budget.
    let mut seen = [false; 3];
    for budget in 1..=300 {
        let out = compress(
            &codec(&format!(r#"{{"budget_tokens": {budget}}}"#)),
            &input,
            Level::Normal,
        )
        .unwrap();
        let verbatim = check_grammar(&input, &out);
        let kept = [0, 1].map(|k| out.contains(firsts[k].as_str()));
        let count = kept.iter().filter(|&&k| k).count();
        seen[count] = true;
        if count < 2 {
            assert!(
                !out.contains("] "),
                "budget {budget}: a fold line stayed:\n{out}"
            );
            assert_eq!(
                verbatim.len(),
                count,
                "budget {budget}: a line other than the warnings' first stayed:\n{out}"
            );
            assert!(
                kept[0] || !kept[1],
                "budget {budget}: the later warning outlasted the first:\n{out}"
            );
            let all = alone(&[20, 25]);
            assert!(
                all > budget,
                "budget {budget}: both fit ({all}) yet one went:\n{out}"
            );
            if kept[0] {
                assert!(alone(&[20]) <= budget, "budget {budget}:\n{out}");
            } else {
                assert!(alone(&[20]) > budget, "budget {budget}: it fit:\n{out}");
            }
        }
        if count > 0 && cost(&out) > budget {
            assert!(
                out.contains("; over budget to keep each distinct warning once;"),
                "budget {budget}: over it without saying why:\n{out}"
            );
        }
    }
    assert_eq!(
        seen, [true; 3],
        "budgets that keep none, one and both warnings"
    );
}

#[test]
fn status_lines_outlast_every_ordinary_line_and_go_before_the_distinct_warnings() {
    // `repeated_warnings` with four crates' warning summaries among its lines.
    let mut lines: Vec<String> = repeated_warnings().lines().map(str::to_owned).collect();
    let status = [101, 151, 201, 251];
    for (k, &i) in status.iter().enumerate() {
        lines[i] = format!("warning: `crate{k}` (lib) generated {} warnings", 10 + k);
    }
    let input = lines.join("\n");
    let firsts = [20, 25];
    let mut seen = [false; 5];
    for budget in (1..=600).step_by(3) {
        let out = compress(
            &codec(&format!(r#"{{"budget_tokens": {budget}}}"#)),
            &input,
            Level::Normal,
        )
        .unwrap();
        let verbatim = check_grammar(&input, &out);
        let kept = |at: &[usize]| at.iter().filter(|&&i| verbatim.contains(&(i + 1))).count();
        let (summaries, warnings) = (kept(&status), kept(&firsts));
        seen[summaries] = true;
        // The last go first.
        assert!(
            status[..summaries]
                .iter()
                .all(|&i| verbatim.contains(&(i + 1))),
            "budget {budget}: a later summary outlasted an earlier one:\n{out}"
        );
        if summaries < status.len() {
            assert!(
                !out.contains("] ") && verbatim.len() == summaries + warnings,
                "budget {budget}: a summary went while an ordinary line stayed:\n{out}"
            );
        }
        if warnings < firsts.len() {
            assert_eq!(
                summaries, 0,
                "budget {budget}: a summary outlasted a distinct warning:\n{out}"
            );
        }
    }
    assert_eq!(seen, [true; 5], "budgets that keep 0 to 4 summaries");
}

#[test]
fn a_cut_keeps_a_warnings_count_with_its_first_line() {
    let log = codec("{}");
    let input = repeated_warnings();
    let output = compress(&log, &input, Level::Normal).unwrap();
    let chars = |text: &str| text.chars().count();
    for room in (200..chars(&output)).step_by(40) {
        let cut = log.cut(&input, &output, room, &chars).expect("walks");
        let kept = &output[..cut.kept];
        if let Some(last) = kept.lines().last() {
            assert!(
                !last.starts_with("warning:") && !last.starts_with("WARN "),
                "room {room}: {kept}"
            );
        }
    }
}

/// Every log of the corpus (generated and real captures), the sample session's builds, the
/// benchmark's generated log and the logs of the tests above.
fn every_log() -> Vec<String> {
    let mut logs = Vec::new();
    for dir in ["logs", "logs/real"] {
        let path = format!("{}/../corpus/{dir}", env!("CARGO_MANIFEST_DIR"));
        let mut names: Vec<_> = std::fs::read_dir(&path)
            .unwrap_or_else(|err| panic!("{path}: {err}"))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
            .collect();
        names.sort();
        logs.extend(
            names
                .iter()
                .map(|name| std::fs::read_to_string(name).unwrap()),
        );
    }
    logs.push(corpus("build-log.txt"));
    logs.extend(session_logs());
    logs.push(parrot_bench_corpus::log_payload(300_000));
    logs.extend(rows().into_iter().map(|(_, input, _)| input));
    logs.push(repeated_warnings());
    logs.push(failing_tests(400));
    logs
}

#[test]
fn over_budget_to_keep_every_failure_line_is_said_only_when_they_alone_are_over_it() {
    // On every log at seven budgets and both levels: the markers say it exactly when the
    // failure lines alone are over the budget and the budget dropped a line for them (a line
    // omitted that is not too long to keep).
    let logs = every_log();
    let mut said = 0;
    for budget in [1, 30, 100, 200, 400, 600, 2000] {
        let log = codec(&format!(r#"{{"budget_tokens": {budget}, "min_lines": 5}}"#));
        for (k, input) in logs.iter().enumerate() {
            for level in [Level::Normal, Level::Aggressive] {
                let Some(out) = compress(&log, input, level) else {
                    continue;
                };
                let lines = super::lines::Lines::new(input, |state| log.matcher.is_failure(state));
                let effective = log.budget(&lines, level == Level::Aggressive);
                let (failures, long) = failures_alone(&log, input);
                let expected = failures > effective && omitted(&out) > long;
                let says = out.contains("over budget to keep every failure line");
                assert_eq!(
                    says,
                    expected,
                    "log {k}, budget {budget} ({effective}), {level:?}: failure lines alone \
                     {failures}, {} omitted, {long} too long:\n{out}",
                    omitted(&out)
                );
                said += usize::from(says);
            }
        }
    }
    assert!(said > 50, "the phrase is said {said} times");
}

/// The real captures (`corpus/logs/real/`) each come out at most 15% of their o200k tokens,
/// or within 700 (a capture of a few dozen lines is mostly its failure lines).
#[test]
fn every_real_capture_comes_out_within_15_percent_of_its_tokens() {
    let log = codec("{}");
    let path = format!("{}/../corpus/logs/real", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<_> = std::fs::read_dir(&path)
        .unwrap_or_else(|err| panic!("{path}: {err}"))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
        .collect();
    names.sort();
    let mut table = String::new();
    let mut over = 0;
    for name in &names {
        let input = std::fs::read_to_string(name).unwrap();
        let out = compress(&log, &input, Level::Normal).unwrap_or_else(|| input.clone());
        let (before, after) = (o200k(&input), o200k(&out));
        let fits = after * 100 <= before * 15 || after <= 700;
        over += usize::from(!fits);
        table += &format!(
            "{} {before} -> {after} ({:.1}%){}\n",
            name.file_name().unwrap().to_string_lossy(),
            after as f64 * 100.0 / before as f64,
            if fits { "" } else { " over" }
        );
    }
    assert!(names.len() >= 13, "{table}");
    assert_eq!(over, 0, "{table}");
}

#[test]
fn a_log_whose_failures_alone_are_over_the_budget_is_written_as_the_full_budget_writes_it() {
    // The shortcut skips the templates; the budget, walking through every layout, drops every
    // template all the same. So the two outputs are the same, byte for byte, at every budget.
    let logs = every_log();
    let (mut shortcut, mut full) = (0, 0);
    for budget in [1, 30, 100, 200, 400, 600, 2000] {
        let log = codec(&format!(r#"{{"budget_tokens": {budget}, "min_lines": 5}}"#));
        for (k, input) in logs.iter().enumerate() {
            for aggressive in [false, true] {
                let fast = log.fold_with(input, aggressive, true);
                let slow = log.fold_with(input, aggressive, false);
                assert_eq!(
                    fast, slow,
                    "log {k}, budget {budget}, aggressive {aggressive}: the shortcut differs"
                );
                if log.takes_shortcut(input, aggressive) {
                    shortcut += 1;
                } else {
                    full += 1;
                }
            }
        }
    }
    // Both ways are taken many times, so the comparison covers both.
    assert!(
        shortcut > 50 && full > 50,
        "shortcut {shortcut}, full {full}"
    );
}

#[test]
fn the_benchmarks_logs_take_both_ways() {
    // The log with failures is over the budget on its failures and warnings alone; the passing
    // one keeps noise folds, so every line of it is templated.
    let log = codec("{}");
    assert!(log.takes_shortcut(&parrot_bench_corpus::log_payload(1_000_000), false));
    assert!(!log.takes_shortcut(&parrot_bench_corpus::passing_log_payload(1_000_000), false));
}
