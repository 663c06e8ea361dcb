//! The pipeline stage through real plugin codecs: levels, tee, skips, the no-gain rule, the
//! last-resort cut, verification, observers and the report.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{package, plugin_manifest, shipped_package};
use parrot_host::{
    BreakerConfig, Budgets, Call, CallEvent, Host, Input, Level, MemoryTeeStore, Observer, Skip,
    TokenCounter, TokenEvent, Tokenizer, Verification,
};
use parrot_recover::{Recover, Selector};
use serde_json::Value;

const FAULTS: &str = "parrot_plugin_fault_codecs";

struct Setup {
    _dir: tempfile::TempDir,
    host: Host,
}

/// A host with both shipped plugins, the fault codecs on `fault_*` tools, a memory tee store
/// unless `tee` is false, and `configure` applied to the builder.
fn setup(tee: bool, configure: impl FnOnce(&mut parrot_host::HostBuilder)) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    shipped_package(&plugins, "line-dedup", "parrot_plugin_line_dedup");
    shipped_package(&plugins, "ansi-strip", "parrot_plugin_ansi_strip");
    let entries: String = [
        "fault_error",
        "fault_panic",
        "fault_liar",
        "fault_unchecked",
        "fault_garbage",
        "fault_bloat",
        "csv_rows",
    ]
    .iter()
    .map(|codec| format!("[compressor.\"{codec}\"]\ncodec = \"{codec}\"\nlevel = \"normal\"\n"))
    .collect();
    package(
        &plugins,
        "faults",
        Some(FAULTS),
        &plugin_manifest(FAULTS, &entries),
    );
    let mut builder = Host::builder();
    builder
        .project(dir.path())
        .plugin_path(None)
        .plugin_dir(&plugins);
    if tee {
        builder.tee_store(Arc::new(MemoryTeeStore::default()));
    }
    configure(&mut builder);
    Setup {
        host: builder.build().expect("host builds"),
        _dir: dir,
    }
}

fn log_with_runs() -> String {
    let mut log = String::new();
    for i in 0..50 {
        for _ in 0..4 {
            log.push_str(&format!("step {i}: waiting for lock\n"));
        }
    }
    log
}

fn colored(n: usize) -> String {
    (0..n)
        .map(|i| format!("\u{1b}[32mok\u{1b}[0m test_{i}\n"))
        .collect()
}

/// A plugin codec that declares text output (the fixture's `csv_rows`): the host takes its CSV
/// for a JSON payload as it is (no `codec_error` for output that is not JSON), verifies it
/// through the inverse across the boundary, and, when a pointer is attached, it goes out as
/// text still, its last line the pointer (CONTRACT §5).
#[test]
fn plugin_text_output_is_taken_as_is_and_stays_text_under_a_pointer() {
    let input = format!(
        "[{}]",
        (0..20)
            .map(|i| format!(r#"{{"id": {i}, "name": "user {i}", "score": {i}.50, "note": null}}"#))
            .collect::<Vec<_>>()
            .join(",\n ")
    );
    let csv = std::iter::once("id,name,score,note".to_owned())
        .chain((0..20).map(|i| format!("{i},user {i},{i}.50,null")))
        .collect::<Vec<_>>()
        .join("\n");

    let s = setup(true, |_| {});
    let out = s.host.process(Call::new("csv_rows", Input::Text(&input)));
    assert!(out.meta.compressed && !out.meta.teed, "{:?}", out.meta);
    assert_eq!(out.meta.codec.as_deref(), Some("csv_rows"));
    assert_eq!(out.text(), Some(csv.as_str()));
    let codec = s
        .host
        .resolve("csv_rows")
        .entry
        .expect("entry")
        .codec()
        .expect("a codec");
    assert!(codec.text_output());
    assert!(codec.cuts());
    parrot_codec_test::Contract::new(codec)
        .cuts_every_output()
        .assert(&input);

    let s = setup(true, |builder| {
        builder.tee_lossless(true);
    });
    let out = s.host.process(Call::new("csv_rows", Input::Text(&input)));
    assert!(out.meta.compressed && out.meta.teed, "{:?}", out.meta);
    let text = out.text().unwrap();
    assert!(
        text.starts_with(&format!("{csv}\n[wm_get_result ")),
        "{text}"
    );
    let pointed = crate::support::pointed(text).expect("a pointer line");
    assert_eq!(pointed.text, csv);
    assert_eq!(pointed.reason, "lossless");
    assert_eq!(Some(&pointed.key), out.meta.tee_key.as_ref());
    assert_eq!(
        s.host.recover(&pointed.key).unwrap().unwrap(),
        input.as_bytes()
    );
}

#[test]
fn lossless_outcome_goes_out_without_a_pointer() {
    let s = setup(true, |_| {});
    let log = log_with_runs();
    let out = s.host.process(Call::new("shell_build", Input::Text(&log)));
    let text = out.text().unwrap();
    assert!(out.meta.compressed);
    assert!(!out.meta.teed);
    assert_eq!(out.meta.tee_key, None);
    assert_eq!(out.meta.skipped, None);
    assert_eq!(out.meta.level, Level::Minimal);
    assert_eq!(out.meta.codec.as_deref(), Some("line_dedup"));
    assert_eq!(out.meta.size_before, log.len());
    assert_eq!(out.meta.size_after, text.len());
    assert!(text.starts_with(
        "step 0: waiting for lock\n[... previous line repeated 3 more times ...]\nstep 1"
    ));
}

#[test]
fn lossy_outcome_is_teed_and_recovers_the_exact_input() {
    let s = setup(true, |_| {});
    let input = colored(40);
    let out = s
        .host
        .process(Call::new("terminal_test", Input::Text(&input)));
    assert!(out.meta.compressed && out.meta.teed, "{:?}", out.meta);
    assert_eq!(out.meta.level, Level::Normal);
    let pointed = crate::support::pointed(out.text().unwrap()).expect("a pointer line");
    let key = pointed.key.as_str();
    assert_eq!(Some(key), out.meta.tee_key.as_deref());
    assert_eq!(pointed.reason, "lossy");
    let parts: Vec<&str> = key.split(':').collect();
    assert_eq!(parts, ["__tee__", "terminal_test", parts[2]]);
    assert_eq!(parts[2].len(), 12);
    assert!(parts[2].bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
    assert!(pointed.text.starts_with("ok test_0\nok test_1\n"));
    assert_eq!(s.host.recover(key).unwrap().unwrap(), input.as_bytes());

    // The key is the content's: the same input, the same key; another input, another key.
    let second = s
        .host
        .process(Call::new("terminal_test", Input::Text(&input)));
    assert_eq!(second.meta.tee_key.as_deref(), Some(key));
    let other = colored(41);
    let third = s
        .host
        .process(Call::new("terminal_test", Input::Text(&other)));
    assert_ne!(third.meta.tee_key.as_deref(), Some(key));
    assert_eq!(
        s.host
            .recover(&third.meta.tee_key.unwrap())
            .unwrap()
            .unwrap(),
        other.as_bytes()
    );
}

#[test]
fn normal_entry_without_a_store_runs_at_minimal_and_says_so() {
    let s = setup(false, |_| {});
    let input = colored(40);
    let out = s
        .host
        .process(Call::new("terminal_test", Input::Text(&input)));
    assert_eq!(out.meta.level, Level::Minimal);
    assert!(!out.meta.compressed);
    assert_eq!(out.meta.skipped, Some(Skip::NoGain));
    assert_eq!(out.text(), Some(input.as_str()));
}

#[test]
fn error_results_go_out_unchanged_but_are_stored() {
    let s = setup(true, |_| {});
    let input = colored(40);
    let out = s
        .host
        .process(Call::new("terminal_test", Input::Text(&input)).status("error"));
    assert_eq!(out.text(), Some(input.as_str()));
    assert_eq!(out.meta.level, Level::None);
    assert_eq!(out.meta.skipped, Some(Skip::LevelNone));
    assert!(out.meta.teed);
    let key = out.meta.tee_key.unwrap();
    assert_eq!(s.host.recover(&key).unwrap().unwrap(), input.as_bytes());
}

#[test]
fn skips_leave_the_payload_byte_identical() {
    let s = setup(true, |_| {});
    let log = log_with_runs();
    let cases: Vec<(Call<'_>, Skip)> = vec![
        (
            Call::new("shell_x", Input::Text(&log)).return_direct(true),
            Skip::ReturnDirect,
        ),
        (
            Call::new("shell_x", Input::Text(&log)).already_compressed(true),
            Skip::AlreadyCompressed,
        ),
        (
            Call::new("shell_x", Input::Text(&log)).level(Level::None),
            Skip::LevelNone,
        ),
        (
            Call::new("shell_x", Input::Bytes(b"\xff\xfe not utf-8 \n\n\n")),
            Skip::UnsupportedPayload,
        ),
        (
            Call::new("shell_x", Input::Text("")),
            Skip::UnsupportedPayload,
        ),
        (
            Call::new("fault_bloat", Input::Text(r#"{"a":1,"a":2}"#)),
            Skip::UnsupportedPayload,
        ),
        (
            Call::new("fault_error", Input::Text(&log)),
            Skip::CodecError,
        ),
        (
            Call::new("fault_panic", Input::Text(&log)),
            Skip::CodecError,
        ),
        (
            Call::new("fault_garbage", Input::Text("[1, 2, 3]")),
            Skip::CodecError,
        ),
        (Call::new("fault_bloat", Input::Text(&log)), Skip::NoGain),
    ];
    for (call, skip) in cases {
        let input: Vec<u8> = match call.payload {
            Input::Text(t) => t.as_bytes().to_vec(),
            Input::Bytes(b) => b.to_vec(),
            Input::Json(v) => v.to_string().into_bytes(),
        };
        let out = s.host.process(call);
        assert_eq!(out.meta.skipped, Some(skip), "{:?}", call.payload);
        assert_eq!(&*out.payload, &input[..], "{skip}");
        assert!(!out.meta.compressed);
        assert!(!out.meta.teed);
    }
}

#[test]
fn kill_switch_is_byte_identical_and_runs_nothing() {
    let s = setup(true, |b| {
        b.kill_switch(Some(true));
    });
    let input = colored(40);
    let out = s
        .host
        .process(Call::new("terminal_test", Input::Text(&input)));
    assert_eq!(out.text(), Some(input.as_str()));
    assert_eq!(out.meta.skipped, Some(Skip::KillSwitch));
    s.host.flush();
    assert_eq!(s.host.report().snapshot().total.calls, 0);
}

#[test]
fn a_claimed_lossless_outcome_that_does_not_expand_back_is_treated_as_lossy() {
    let s = setup(true, |_| {});
    let input = log_with_runs();
    let out = s.host.process(Call::new("fault_liar", Input::Text(&input)));
    assert!(out.meta.teed, "{:?}", out.meta);
    let key = out.meta.tee_key.clone().unwrap();
    assert_eq!(s.host.recover(&key).unwrap().unwrap(), input.as_bytes());

    // At minimal a lossy outcome is refused: the input goes out.
    let out = s
        .host
        .process(Call::new("fault_liar", Input::Text(&input)).level(Level::Minimal));
    assert_eq!(out.meta.skipped, Some(Skip::CodecError));
    assert_eq!(out.text(), Some(input.as_str()));
}

/// A plugin's lossless claim that the host cannot check is not believed: `fault_unchecked`
/// keeps half its input, says lossless and offers no inverse. At `normal` the outcome is teed as
/// lossy (its pointer says so, and the original comes back whole); at `minimal` it is refused
/// and the input goes out. Before, it went out as a lossless `_compressed` result with nothing
/// stored: the half was gone.
#[test]
fn a_lossless_claim_without_an_inverse_is_teed_as_lossy_and_refused_at_minimal() {
    let s = setup(true, |_| {});
    let input = log_with_runs();
    let out = s
        .host
        .process(Call::new("fault_unchecked", Input::Text(&input)));
    assert_eq!(out.meta.codec.as_deref(), Some("fault_unchecked"));
    assert!(out.meta.teed, "{:?}", out.meta);
    let text = out.text().unwrap();
    assert!(
        text.ends_with(
            "returns the original of this lossy result; add a marker's selector for that part]"
        ),
        "{text}"
    );
    let (body, key) = parrot_host::split_text_pointer(text).unwrap();
    assert_eq!(body.len(), input.len() / 2);
    assert_eq!(Some(&key), out.meta.tee_key.as_ref());
    assert_eq!(s.host.recover(&key).unwrap().unwrap(), input.as_bytes());

    let out = s
        .host
        .process(Call::new("fault_unchecked", Input::Text(&input)).level(Level::Minimal));
    assert_eq!(out.meta.skipped, Some(Skip::CodecError));
    assert_eq!(out.text(), Some(input.as_str()));
    assert!(!out.meta.teed);

    // Without a store, `normal` runs at `minimal` (§5): refused there too, nothing lost.
    let s = setup(false, |_| {});
    let out = s
        .host
        .process(Call::new("fault_unchecked", Input::Text(&input)));
    assert_eq!(out.text(), Some(input.as_str()));
    assert!(!out.meta.compressed && !out.meta.teed, "{:?}", out.meta);
}

/// `json_compact` declares null members absent (`Codec::NULL_MEMBERS_ABSENT`): verifying its
/// null elision through its inverse finds the input again, so the outcome stays lossless.
#[test]
fn verified_null_elision_of_json_compact_stays_lossless() {
    let s = setup(true, |builder| {
        builder.verification(Verification {
            plugins: true,
            builtins_every: 1,
        });
    });
    let input = r#"{"id": 7, "note": null, "tags": ["a", null], "more": {"x": null}}"#;
    let out = s
        .host
        .process(Call::new("lookup", Input::Text(input)).level(Level::Minimal));
    assert_eq!(out.meta.codec.as_deref(), Some("json_compact"));
    assert_eq!(out.meta.skipped, None, "{:?}", out.meta);
    assert!(!out.meta.teed, "{:?}", out.meta);
    assert_eq!(out.text(), Some(r#"{"id":7,"tags":["a",null],"more":{}}"#));
}

#[test]
fn no_gain_discards_an_outcome_the_pointer_would_grow() {
    let s = setup(true, |_| {});
    // Stripping one short colour code saves fewer bytes than the pointer costs.
    let input = "\u{1b}[1mbold\u{1b}[0m";
    let out = s.host.process(Call::new("terminal_x", Input::Text(input)));
    assert_eq!(out.meta.skipped, Some(Skip::NoGain));
    assert!(!out.meta.teed);
    assert_eq!(
        out.meta.tee_key, None,
        "nothing stored for a discarded outcome"
    );
    assert_eq!(out.text(), Some(input));
}

#[test]
fn over_max_result_chars_is_cut_with_the_original_stored() {
    let s = setup(true, |b| {
        b.max_result_chars(400);
    });
    let log = log_with_runs();
    let out = s.host.process(Call::new("shell_x", Input::Text(&log)));
    let text = out.text().unwrap();
    assert!(text.chars().count() <= 400, "{text}");
    let pointed = crate::support::pointed(text).expect("a pointer line");
    let result = pointed.text.as_str();
    // line-dedup's output is not the log codec's: it is cut as text, and says so.
    assert!(
        result
            .lines()
            .last()
            .unwrap()
            .starts_with("[\u{2026} cut at max_result_chars: "),
        "{result}"
    );
    assert_eq!(pointed.reason, "cut");
    let key = pointed.key.as_str();
    assert_eq!(out.meta.tee_key.as_deref(), Some(key));
    assert_eq!(s.host.recover(key).unwrap().unwrap(), log.as_bytes());
}

/// The codec contract checks a plugin codec's cut of its own output across the real library
/// boundary as it checks a built-in's: `csv_rows`' cut, asked through the loaded library at a
/// spread of rooms on tables whose records hold line breaks, quotes, escapes and
/// multibyte characters, keeps whole records, fits the room with its marker and names the
/// recovery tool, and cuts every output of several lines.
#[test]
fn a_plugin_codecs_cut_keeps_the_contract_across_the_boundary() {
    let s = setup(true, |_| {});
    let codec = s
        .host
        .resolve("csv_rows")
        .entry
        .expect("entry")
        .codec()
        .expect("a codec");
    assert!(codec.cuts());
    let table = |rows: usize, row: &dyn Fn(usize) -> String| {
        let rows: Vec<String> = (0..rows).map(row).collect();
        format!("[{}]", rows.join(",\n "))
    };
    let inputs = [
        table(200, &|i| {
            format!(r#"{{"id": {i}, "name": "user {i}", "note": "a, b"}}"#)
        }),
        table(1, &|_| {
            r#"{"id": 1, "name": "the only row, quoted"}"#.to_owned()
        }),
        table(30, &|i| {
            format!(r#"{{"id": {i}, "text": "line one\nline \"two\"\n", "tab": "a\tb"}}"#)
        }),
        table(40, &|i| {
            format!(r#"{{"名前": "日本語 {i}", "emoji": "😀 {i}"}}"#)
        }),
    ];
    let contract = parrot_codec_test::Contract::new(codec).cuts_every_output();
    for input in &inputs {
        let out = codec
            .compress(parrot_host::Payload::json(input), Level::Normal)
            .unwrap();
        assert!(out.payload().is_some(), "csv_rows acts on {input}");
        contract.assert(input);
    }
}

/// Issue 48: the last rule cut only the built-in `log` codec's output by its grammar, which it
/// reached by its type. A plugin codec that offers a cut of its own output (the fixture's
/// `csv_rows`, across the real library boundary) is asked as the built-in is: its output over
/// `max_result_chars` is cut between whole records, within the limit, and ends with its own
/// marker, whose counts are exact and whose selector returns the rows it did not show.
#[test]
fn a_plugin_codecs_own_cut_is_used_as_the_built_in_ones() {
    let rows = 200;
    let input = format!(
        "[{}]",
        (0..rows)
            .map(|i| format!(r#"{{"id": {i}, "name": "user {i}", "note": "a, b"}}"#))
            .collect::<Vec<_>>()
            .join(",\n ")
    );
    let whole = setup(true, |_| {});
    let uncut = whole
        .host
        .process(Call::new("csv_rows", Input::Text(&input)));
    let uncut = uncut.text().unwrap().to_owned();
    assert!(
        uncut.starts_with("id,name,note\n0,user 0,\"a, b\"\n"),
        "{uncut}"
    );

    let max = 1_000;
    let s = setup(true, |b| {
        b.max_result_chars(max);
    });
    let out = s.host.process(Call::new("csv_rows", Input::Text(&input)));
    assert!(out.meta.compressed && out.meta.teed, "{:?}", out.meta);
    let text = out.text().unwrap();
    assert!(text.chars().count() <= max, "{}", text.chars().count());
    let pointed = crate::support::pointed(text).expect("a pointer line");
    assert_eq!(pointed.reason, "cut");
    let (kept, marker) = pointed.text.rsplit_once('\n').unwrap();
    let kept = format!("{kept}\n");
    // Whole records of the codec's output: the names, then rows 0 to K - 1.
    assert!(uncut.starts_with(&kept), "{kept}");
    let shown = kept.lines().count() - 1;
    assert!(shown > 5, "{shown} rows shown");
    let last = rows - 1;
    let removed = uncut.chars().count() - kept.chars().count();
    assert_eq!(
        marker,
        format!(
            "[\u{2026} cut at max_result_chars: rows {shown}-{last} of {rows} not shown ({} rows, \
             {removed} characters of this result); wm_get_result {{\"rows\":\"{shown}-{last}\"}}]",
            rows - shown
        )
    );
    let key = pointed.key.as_str();
    assert_eq!(s.host.recover(key).unwrap().unwrap(), input.as_bytes());
    let selector = Selector {
        rows: Some(format!("{shown}-{last}")),
        max_chars: Some(0),
        ..Selector::default()
    };
    let body = s.host.recover_selected(key, &selector).unwrap().body;
    let holds = |row: usize| {
        let name = format!("user {row}");
        body.match_indices(&name)
            .any(|(at, _)| !body[at + name.len()..].starts_with(|c: char| c.is_ascii_digit()))
    };
    assert!(holds(shown) && holds(last) && !holds(shown - 1), "{body}");
}

/// Issue 48: the output of the lossless text codecs (`hits`, `paths`, `table`), `auto`'s
/// winners for search results, listings and tables, was cut by the last rule as text, its
/// marker's selector the whole original. Each now cuts its own output: on a real capture of
/// each, through the host with a small `max_result_chars`, the result is cut between whole
/// units of the codec's grammar and ends with the codec's marker, whose selector returns
/// exactly the original lines the kept part does not show.
#[test]
fn the_text_codecs_outputs_are_cut_by_their_own_grammar_and_their_selector_returns_the_rest() {
    let max = 3_000;
    let captures = [
        ("hits-tokio-grep.txt", "search_code", "hits", "hit lines"),
        ("paths-tokio-find.txt", "find_files", "paths", "paths"),
        ("table-dpkg-l.txt", "list_packages", "table", "rows"),
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/text");
    let s = setup(true, |b| {
        b.max_result_chars(max);
    });
    let whole = setup(true, |_| {});
    for (file, tool, codec, noun) in captures {
        let input = std::fs::read_to_string(dir.join(file)).unwrap();
        let call = Call::new(tool, Input::Text(&input)).level(Level::Minimal);
        let uncut = whole.host.process(call);
        assert_eq!(uncut.meta.codec.as_deref(), Some(codec), "{file}");
        let uncut = uncut.text().unwrap().to_owned();

        let out = s.host.process(call);
        assert_eq!(out.meta.codec.as_deref(), Some(codec), "{file}");
        let text = out.text().unwrap();
        assert!(
            text.chars().count() <= max,
            "{file}: {}",
            text.chars().count()
        );
        let pointed = crate::support::pointed(text).expect("a pointer line");
        assert_eq!(pointed.reason, "cut", "{file}");
        let (kept, marker) = pointed.text.rsplit_once('\n').unwrap();
        let kept = format!("{kept}\n");
        assert!(
            uncut.starts_with(&kept),
            "{file}: not a start of the codec's output"
        );
        assert!(kept.len() > max / 2, "{file}: {} bytes kept", kept.len());
        // The codec's marker, not the host's: its selector names the original's lines.
        let rest = marker
            .strip_prefix("[\u{2026} cut at max_result_chars: ")
            .unwrap_or_else(|| panic!("{file}: {marker}"));
        let (_, range) = rest
            .split_once(&format!(" {noun} not shown"))
            .and_then(|(_, rest)| rest.split_once("original lines "))
            .unwrap_or_else(|| panic!("{file}: {marker}"));
        let (range, selector) = range.split_once("; ").unwrap();
        assert_eq!(
            selector,
            format!("wm_get_result {{\"lines\":\"{range}\"}}]"),
            "{file}"
        );
        let (from, to) = range.split_once('-').unwrap();
        let (from, to): (usize, usize) = (from.parse().unwrap(), to.parse().unwrap());
        assert_eq!(to, input.lines().count(), "{file}");
        assert!(from > 10, "{file}: {marker}");

        let selector = Selector {
            lines: Some(range.to_owned()),
            max_chars: Some(0),
            ..Selector::default()
        };
        let key = pointed.key.as_str();
        let part = s.host.recover_selected(key, &selector).unwrap();
        let returned: Vec<&str> = part.body.lines().collect();
        let original: Vec<&str> = input.lines().collect();
        assert_eq!(returned, original[from - 1..], "{file}");
    }
}

/// `lines` lines of cargo-test output, a quarter of them failures: runs of 10 `FAILED` lines,
/// each followed by 30 lines of noise (`Compiling` lines and passing tests).
fn failing_log(lines: usize) -> String {
    (0..lines)
        .map(|i| match i % 40 {
            0..10 => format!("test t_{i} ... FAILED\n"),
            _ if i % 3 == 0 => format!("test ok_{i} ... ok\n"),
            _ => format!("   Compiling crate_{i} v0.1.{}\n", i % 97),
        })
        .collect()
}

/// The numbers of the cut marker `[… O lines omitted, lines A-B: cut at max_result_chars, R
/// lines of this result not shown; F failure lines omitted; wm_get_result {"lines":"A-B"}]`:
/// `(O, A, B, R, F, the selector's range)`.
fn cut_marker(line: &str) -> (usize, usize, usize, usize, usize, String) {
    let number = |text: &str| -> usize { text.parse().unwrap_or_else(|_| panic!("{line}")) };
    let rest = line.strip_prefix("[\u{2026} ").expect(line);
    let (omitted, rest) = rest.split_once(" lines omitted, lines ").expect(line);
    let (range, rest) = rest.split_once(": cut at max_result_chars, ").expect(line);
    let (from, to) = range.split_once('-').expect(line);
    let (removed, rest) = rest
        .split_once(" lines of this result not shown; ")
        .expect(line);
    let (failures, rest) = rest.split_once(" failure lines omitted; ").expect(line);
    let selector = rest
        .strip_prefix("wm_get_result {\"lines\":\"")
        .and_then(|rest| rest.strip_suffix("\"}]"))
        .expect(line);
    (
        number(omitted),
        number(from),
        number(to),
        number(removed),
        number(failures),
        selector.to_owned(),
    )
}

/// Issue 33, finding 3: a log whose failure lines alone are over `max_result_chars` was cut
/// with its pointer, as text: wrapped twice, cut inside a marker, and 903 of 5,000 failures
/// shown with nothing saying that the others were not.
#[test]
fn a_cut_log_is_wrapped_once_and_its_marker_counts_the_failures_it_hides() {
    // The log is 540 KB: over the router's size threshold, it runs inline, as the command
    // runs it.
    let s = setup(true, |b| {
        b.inline_at_any_size(true);
    });
    let whole = setup(true, |b| {
        b.inline_at_any_size(true).max_result_chars(0);
    });
    // Text goes out as text, escapes and all: 40,000 lines put the log codec's whole output
    // over the limit.
    let log = failing_log(40_000);
    let failures: Vec<&str> = log.lines().filter(|l| l.ends_with("FAILED")).collect();
    assert_eq!(failures.len(), 10_000);
    // `auto` (the core entry) routes it to the log codec.
    let call = Call::new("cargo_test", Input::Text(&log)).level(Level::Normal);

    // The log codec's whole output, with no limit: every failure line, and over the limit.
    let uncut = whole.host.process(call);
    assert!(uncut.text().unwrap().chars().count() > 200_000);
    let uncut = crate::support::pointed(uncut.text().unwrap()).unwrap().text;
    assert_eq!(
        uncut.lines().filter(|l| l.ends_with("FAILED")).count(),
        10_000
    );

    let out = s.host.process(call);
    let text = out.text().unwrap();
    assert!(text.chars().count() <= 200_000, "{}", text.chars().count());
    let pointed = crate::support::pointed(text).expect("a pointer line");
    let result = pointed.text.as_str();
    assert!(
        crate::support::pointed(result).is_none(),
        "one pointer: {}",
        &result[result.len() - 300..]
    );
    assert_eq!(pointed.reason, "cut");

    let (kept, marker) = result.rsplit_once('\n').unwrap();
    let kept = format!("{kept}\n");
    assert!(
        uncut.starts_with(&kept),
        "the kept text is whole lines of the codec's output"
    );
    let (omitted, from, to, removed, hidden, selector) = cut_marker(marker);
    let shown: Vec<&str> = kept.lines().filter(|l| l.ends_with("FAILED")).collect();
    assert!(shown.len() > 4_000, "{} failure lines shown", shown.len());
    assert_eq!(shown.len() + hidden, 10_000);
    assert_eq!(kept.lines().count() + removed, uncut.lines().count());
    assert_eq!(to, 40_000);
    assert_eq!(omitted, to - from + 1);
    assert_eq!(selector, format!("{from}-{to}"));
    // The kept text ends just before line A: its last line is line A - 1, or a region's
    // marker ending there.
    let last = kept.lines().last().unwrap();
    let last_line = match last.strip_prefix("test t_") {
        Some(rest) => rest.split(' ').next().unwrap().parse::<usize>().unwrap() + 1,
        None => {
            let (_, range) = last.split_once(" lines omitted, lines ").unwrap();
            range
                .split(':')
                .next()
                .unwrap()
                .split('-')
                .nth(1)
                .unwrap()
                .parse()
                .unwrap()
        }
    };
    assert_eq!(from, last_line + 1);

    // The marker's selector returns the original lines holding every failure not shown.
    let key = pointed.key.as_str();
    let selector = Selector {
        lines: Some(selector),
        max_chars: Some(0),
        ..Selector::default()
    };
    let part = s.host.recover_selected(key, &selector).unwrap();
    let returned: Vec<&str> = part.body.lines().collect();
    assert_eq!(returned, log.lines().skip(from - 1).collect::<Vec<_>>());
    let recovered: Vec<&str> = returned
        .iter()
        .copied()
        .filter(|l| l.ends_with("FAILED"))
        .collect();
    assert_eq!(recovered, failures[shown.len()..]);
    assert_eq!(shown, failures[..shown.len()]);
}

#[test]
fn over_max_result_chars_without_a_store_goes_out_uncut() {
    let s = setup(false, |b| {
        b.max_result_chars(100);
    });
    let log = log_with_runs();
    let out = s.host.process(Call::new("shell_x", Input::Text(&log)));
    assert!(out.meta.compressed);
    assert!(out.text().unwrap().chars().count() > 100);
}

#[test]
fn json_values_are_taken_as_their_compact_serialization() {
    let s = setup(true, |_| {});
    let value: Value = serde_json::from_str(r#"{ "b": 1.50, "a": [1, 2] }"#).unwrap();
    let out = s
        .host
        .process(Call::new("fault_error", Input::Json(&value)));
    assert_eq!(out.meta.skipped, Some(Skip::CodecError));
    assert_eq!(out.text(), Some(r#"{"b":1.50,"a":[1,2]}"#));
}

#[test]
fn a_codec_over_budget_opens_its_breaker() {
    let s = setup(true, |b| {
        b.budgets(Budgets {
            minimal_budget: Duration::ZERO,
            ..Budgets::default()
        })
        .breaker(BreakerConfig {
            window_calls: 2,
            ..BreakerConfig::default()
        });
    });
    let log = log_with_runs();
    let skips: Vec<Option<Skip>> = (0..8)
        .map(|_| {
            s.host
                .process(Call::new("shell_x", Input::Text(&log)))
                .meta
                .skipped
        })
        .collect();
    assert_eq!(skips[..6], [None; 6]);
    assert_eq!(skips[6..], [Some(Skip::BreakerOpen); 2]);
}

#[test]
fn oversized_payload_above_minimal_passes_through_without_an_executor() {
    let s = setup(true, |b| {
        b.budgets(Budgets {
            size_threshold_bytes: 64,
            ..Budgets::default()
        });
    });
    let input = colored(40);
    let out = s.host.process(Call::new("terminal_x", Input::Text(&input)));
    assert_eq!(out.meta.skipped, Some(Skip::BudgetPassthrough));
    // minimal runs inline at any size.
    let log = log_with_runs();
    let out = s.host.process(Call::new("shell_x", Input::Text(&log)));
    assert!(out.meta.compressed);
}

#[derive(Default)]
struct Recorder {
    calls: Mutex<Vec<CallEvent>>,
    tokens: Mutex<Vec<TokenEvent>>,
    panics_seen: AtomicU64,
}

impl Observer for Recorder {
    fn on_processed(&self, event: &CallEvent) {
        self.calls.lock().unwrap().push(event.clone());
    }
    fn on_tokens(&self, event: &TokenEvent) {
        self.tokens.lock().unwrap().push(event.clone());
    }
}

struct Panicker(Arc<Recorder>);

impl Observer for Panicker {
    fn on_processed(&self, _: &CallEvent) {
        self.0.panics_seen.fetch_add(1, Ordering::Relaxed);
        panic!("observer bug");
    }
}

#[test]
fn observers_see_final_figures_and_tokens_follow() {
    let recorder = Arc::new(Recorder::default());
    let s = setup(true, |b| {
        b.observer(Arc::new(Panicker(recorder.clone())))
            .observer(recorder.clone());
    });
    let log = log_with_runs();
    let colors = colored(40);
    let a = s.host.process(Call::new("shell_x", Input::Text(&log)));
    let b = s
        .host
        .process(Call::new("terminal_x", Input::Text(&colors)));
    s.host.flush();

    let calls = recorder.calls.lock().unwrap();
    assert_eq!(
        calls.len(),
        2,
        "a panicking observer does not stop the others"
    );
    assert_eq!(recorder.panics_seen.load(Ordering::Relaxed), 2);
    assert_eq!(calls[0].meta, a.meta);
    assert_eq!(calls[1].meta, b.meta);

    let tokens = recorder.tokens.lock().unwrap();
    assert_eq!(tokens.len(), 2);
    let counter = Tokenizer::O200k;
    assert_eq!(tokens[0].tokens_before, counter.count(&log));
    assert_eq!(tokens[0].tokens_after, counter.count(a.text().unwrap()));
    assert!(tokens[0].tokens_after < tokens[0].tokens_before);
}

#[test]
fn report_totals_equal_the_sum_of_the_calls() {
    let s = setup(true, |_| {});
    let log = log_with_runs();
    let colors = colored(40);
    let mut bytes_before = 0;
    let mut bytes_after = 0;
    let mut compressed = 0;
    for i in 0..30 {
        let call = match i % 3 {
            0 => Call::new("shell_x", Input::Text(&log)),
            1 => Call::new("terminal_x", Input::Text(&colors)),
            _ => Call::new("fault_error", Input::Text(&log)),
        };
        let out = s.host.process(call);
        bytes_before += out.meta.size_before as u64;
        bytes_after += out.meta.size_after as u64;
        compressed += u64::from(out.meta.compressed);
    }
    s.host.flush();
    let report = s.host.report().snapshot();
    assert_eq!(report.tokenizer, "o200k_base");
    assert_eq!(report.total.calls, 30);
    assert_eq!(report.total.compressed, compressed);
    assert_eq!(report.total.bytes_before, bytes_before);
    assert_eq!(report.total.bytes_after, bytes_after);
    assert_eq!(report.total.tokens_pending, 0);
    assert_eq!(report.total.skips.get("codec_error"), Some(&10));
    let tools: Vec<&str> = report.tools.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(tools, ["fault_error", "shell_x", "terminal_x"]);
    let fault = &report.tools[0];
    assert_eq!(fault.tokens_saved_pct, 0.0);
    assert!(report.render_table().contains("tokens: o200k_base"));
    assert_eq!(report.to_json()["total"]["calls"], 30);
}

#[test]
fn eight_threads_share_one_pipeline_and_every_key_recovers() {
    let s = setup(true, |b| {
        b.tee_store(Arc::new(MemoryTeeStore::new(100_000)));
    });
    let host = Arc::new(s.host);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let host = Arc::clone(&host);
            std::thread::spawn(move || {
                let mut keys = Vec::new();
                for i in 0..250 {
                    let input = format!("\u{1b}[31mthread {t}\u{1b}[0m call {i}\n").repeat(40);
                    let out = host.process(Call::new("terminal_x", Input::Text(&input)));
                    let key = out.meta.tee_key.expect("lossy outcome teed");
                    keys.push((key, input));
                }
                keys
            })
        })
        .collect();
    let mut all = Vec::new();
    for thread in threads {
        all.extend(thread.join().unwrap());
    }
    let mut unique: Vec<&String> = all.iter().map(|(k, _)| k).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 2000, "no two calls share a key");
    for (key, input) in &all {
        assert_eq!(host.recover(key).unwrap().unwrap(), input.as_bytes());
    }
}

/// Counts whitespace-separated words: a cheap stand-in where the test is about keys and
/// totals, not about a particular tokenizer.
struct Words;

impl TokenCounter for Words {
    fn name(&self) -> &str {
        "words"
    }

    fn count(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

#[test]
fn eight_threads_ten_thousand_calls_each_through_the_persistent_store() {
    let store_dir = tempfile::tempdir().unwrap();
    let store = parrot_tee_sqlite::SqliteTeeStore::open(
        store_dir.path().join("tee.db"),
        parrot_host::Retention {
            max_entries: None,
            max_bytes: None,
            max_age: None,
        },
    )
    .unwrap();
    let recorder = Arc::new(Recorder::default());
    let s = setup(false, |b| {
        b.tee_store(Arc::new(store))
            .tokenizer(Arc::new(Words))
            .observer(recorder.clone());
    });
    let host = Arc::new(s.host);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let host = Arc::clone(&host);
            std::thread::spawn(move || {
                let mut teed = Vec::new();
                for i in 0..10_000 {
                    let (tool, input) = match i % 4 {
                        0 => (
                            "terminal_run",
                            format!(
                                "\u{1b}[1;31mthread\u{1b}[0m \u{1b}[2m{t}\u{1b}[0m \u{1b}[33mcall\u{1b}[0m \
                                 \u{1b}[36m{i}\u{1b}[0m \u{1b}[1;31mfailed\u{1b}[0m\n"
                            )
                            .repeat(40),
                        ),
                        1 => ("shell_run", format!("thread {t} polling {i}\n").repeat(6)),
                        2 => ("get_rows", format!("[{{\"t\":{t},\"i\":{i},\"x\":null}}]")),
                        _ => ("fault_error", format!("thread {t} call {i}")),
                    };
                    let out = host.process(Call::new(tool, Input::Text(&input)));
                    if let Some(key) = out.meta.tee_key {
                        teed.push((key, input));
                    }
                }
                teed
            })
        })
        .collect();
    let mut teed = Vec::new();
    for thread in threads {
        teed.extend(thread.join().unwrap());
    }
    assert_eq!(teed.len(), 20_000, "every terminal_run call is teed");
    let mut keys: Vec<&str> = teed.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), teed.len(), "no two calls share a key");
    for (key, input) in &teed {
        assert_eq!(
            host.recover(key).unwrap().unwrap(),
            input.as_bytes(),
            "{key}"
        );
    }

    host.flush();
    let calls = recorder.calls.lock().unwrap();
    assert_eq!(calls.len(), 80_000);
    let report = host.report().snapshot();
    let sum = |f: fn(&parrot_host::Meta) -> u64| calls.iter().map(|e| f(&e.meta)).sum::<u64>();
    assert_eq!(report.total.calls, 80_000);
    assert_eq!(report.total.compressed, sum(|m| u64::from(m.compressed)));
    assert_eq!(report.total.bytes_before, sum(|m| m.size_before as u64));
    assert_eq!(report.total.bytes_after, sum(|m| m.size_after as u64));
    let tokens = recorder.tokens.lock().unwrap();
    assert_eq!(
        report.total.tokens_before,
        tokens.iter().map(|e| e.tokens_before as u64).sum::<u64>()
    );
    assert_eq!(
        report.total.tokens_after,
        tokens.iter().map(|e| e.tokens_after as u64).sum::<u64>()
    );
    assert_eq!(report.total.tokens_pending, 0);
}

/// A tokenizer whose first count takes 400 ms, as a real one loads its tables on first use.
struct SlowStart {
    started: std::sync::Once,
}

impl TokenCounter for SlowStart {
    fn name(&self) -> &str {
        "slow-start words"
    }

    fn count(&self, text: &str) -> usize {
        self.started
            .call_once(|| std::thread::sleep(Duration::from_millis(400)));
        text.split_whitespace().count()
    }
}

#[test]
fn the_reported_duration_leaves_out_the_tokenizers_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tokenizer(Arc::new(SlowStart {
            started: std::sync::Once::new(),
        }))
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .inline_at_any_size(true)
        .build()
        .unwrap();
    // Rows under the default configuration: the router counts tokens to choose, so the
    // first call is the one that starts the tokenizer.
    let rows: Vec<String> = (0..200)
        .map(|i| {
            format!(
                r#"{{"id":{i},"name":"user {i}","region":"south","score":{}}}"#,
                i * 7
            )
        })
        .collect();
    let input = format!("[{}]", rows.join(","));
    for call in 0..2 {
        let started = std::time::Instant::now();
        let processed = host.process(Call::new("get_rows", Input::Text(&input)));
        let took = started.elapsed();
        assert!(
            processed.meta.compressed,
            "call {call}: {:?}",
            processed.meta
        );
        if call == 0 {
            assert!(
                took >= Duration::from_millis(400),
                "the start-up was in the call"
            );
        }
        assert!(
            processed.meta.duration_ms < 200.0,
            "call {call}: {} ms reported for a 200-row payload",
            processed.meta.duration_ms
        );
    }
}

/// The built-ins that validate JSON in their own pass run before the payload is checked (the
/// fused pass); every payload still ends where the check alone sent it: a duplicate member
/// name anywhere is `unsupported_payload`, text that only starts like JSON (cut, trailing
/// bytes, nested too deep, not JSON at all) is text, which they leave alone (`no_gain`), and
/// valid JSON is compressed. The payload of every skip is the input, byte for byte. `auto`
/// (which finds an object's members by structure, then lets its winner validate) ends each
/// the same way and routes text as text.
#[test]
fn the_fused_pass_ends_every_payload_where_the_check_would() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    let entries: String = ["json_compact", "columnar", "toon", "auto"]
        .iter()
        .map(|codec| format!("[compressor.\"rows_{codec}\"]\ncodec = \"{codec}\"\n"))
        .collect();
    std::fs::write(dir.path().join(".parrot/compressors.toml"), entries).unwrap();
    let mut builder = Host::builder();
    builder
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()));
    let host = builder.build().expect("host builds");

    let row = |i: usize| format!(r#"{{"id":{i},"name":"row {i}","empty":null,"tag":"t"}}"#);
    let rows = |n: usize| format!("[{}]", (0..n).map(row).collect::<Vec<_>>().join(","));
    let valid = rows(60);
    let deep = format!("[{}{}{}]", "[".repeat(600), "1", "]".repeat(600));
    let cases: Vec<(&str, String, Option<Skip>)> = vec![
        ("valid rows", valid.clone(), None),
        (
            "a duplicate at the top",
            format!(r#"{{"rows":{valid},"rows":[]}}"#),
            Some(Skip::UnsupportedPayload),
        ),
        (
            "a duplicate in the last row",
            valid.replacen(r#"{"id":59,"#, r#"{"id":59,"id":60,"#, 1),
            Some(Skip::UnsupportedPayload),
        ),
        (
            "trailing bytes",
            format!("{valid} and more"),
            Some(Skip::NoGain),
        ),
        (
            "cut short",
            valid[..valid.len() - 3].to_owned(),
            Some(Skip::NoGain),
        ),
        ("nested too deep", deep, Some(Skip::NoGain)),
        (
            "not JSON",
            "{ this is a note, not JSON }\n".repeat(20),
            Some(Skip::NoGain),
        ),
    ];
    // `auto` ends each the same way, and routes what is not JSON as text.
    for level in [Level::Minimal, Level::Normal] {
        for (what, payload, skipped) in &cases {
            let out = host.process(Call::new("rows_auto", Input::Text(payload)).level(level));
            assert_eq!(out.meta.skipped, *skipped, "auto at {level}: {what}");
            let route = out.meta.route.as_deref().unwrap_or_default();
            match skipped {
                Some(Skip::NoGain) => {
                    assert!(route.starts_with("text: "), "auto: {what}: {route}");
                    assert_eq!(&*out.payload, payload.as_bytes(), "auto: {what}");
                }
                Some(_) => assert_eq!(&*out.payload, payload.as_bytes(), "auto: {what}"),
                None => assert!(route.starts_with("rows: "), "auto: {what}: {route}"),
            }
        }
    }
    // A log whose lines start with a brace is text: `auto` routes it to the log codec (its
    // level words are a log's evidence).
    let log: String = (0..80)
        .map(|i| format!("{{worker {}}} INFO step {i}: waiting for the lock\n", i % 3))
        .collect();
    let out = host.process(Call::new("rows_auto", Input::Text(&log)).level(Level::Normal));
    assert_eq!(out.meta.skipped, None);
    assert_eq!(out.meta.codec.as_deref(), Some("log"));
    assert!(out.payload.len() < log.len());
    for codec in ["json_compact", "columnar", "toon"] {
        let tool = format!("rows_{codec}");
        for level in [Level::Minimal, Level::Normal] {
            for (what, payload, skipped) in &cases {
                let out = host.process(Call::new(&tool, Input::Text(payload)).level(level));
                assert_eq!(out.meta.skipped, *skipped, "{codec} at {level}: {what}");
                match skipped {
                    Some(_) => {
                        assert_eq!(&*out.payload, payload.as_bytes(), "{codec}: {what}");
                        assert!(!out.meta.compressed, "{codec}: {what}");
                    }
                    None => {
                        assert!(out.meta.compressed, "{codec}: {what}");
                        assert!(out.payload.len() < payload.len(), "{codec}: {what}");
                    }
                }
            }
        }
    }
}
