use parrot_codec_api::{Codec, ErrorKind, Level, Outcome, Params, Payload};

use super::Hits;

fn hits() -> Hits {
    parrot_codec_api::build(Params::empty()).unwrap()
}

fn compress(input: &str) -> Option<String> {
    match hits()
        .compress(Payload::text_only(input), Level::Minimal)
        .unwrap()
    {
        Outcome::Unchanged => None,
        Outcome::Changed { payload, lossy } => {
            assert!(!lossy, "lossy outcome for {input:?}");
            Some(payload)
        }
    }
}

fn o200k(text: &str) -> usize {
    parrot_bpe::O200K_BASE.count(text)
}

/// One row per case: the input, and the output (`None`: unchanged).
const CASES: &[(&str, &str, Option<&str>)] = &[
    (
        "grep -rn, two files",
        "src/a.rs:3:fn a() {}\nsrc/a.rs:9:fn b() {}\nsrc/b.rs:1:use a;\n",
        Some("src/a.rs\n3:fn a() {}\n9:fn b() {}\n\nsrc/b.rs\n1:use a;\n"),
    ),
    (
        "no final newline",
        "src/a.rs:3:fn a() {}\nsrc/a.rs:9:fn b() {}",
        Some("src/a.rs\n3:fn a() {}\n9:fn b() {}"),
    ),
    (
        "a file that comes back is named again",
        "src/a.rs:1:x\nsrc/a.rs:2:y\nsrc/b.rs:1:z\nsrc/a.rs:5:w\n",
        Some("src/a.rs\n1:x\n2:y\n\nsrc/b.rs\n1:z\n\nsrc/a.rs\n5:w\n"),
    ),
    (
        "context after, with -- between groups and between files",
        "src/lib.rs:10:fn parse() {\nsrc/lib.rs-11-    lex();\n--\nsrc/lib.rs:40:fn run() {\nsrc/lib.rs-41-    go();\n--\nsrc/main.rs:2:fn main() {\nsrc/main.rs-3-    run();\n",
        Some(
            "src/lib.rs\n10:fn parse() {\n11-    lex();\n--\n40:fn run() {\n41-    go();\n--\n\nsrc/main.rs\n2:fn main() {\n3-    run();\n",
        ),
    ),
    (
        "context before a new file's first match takes the match's path",
        "src/a.rs:7:x\nsrc/a.rs-8-y\n--\nsrc/b.rs-1-use a;\nsrc/b.rs-2-\nsrc/b.rs:3:x\n",
        Some("src/a.rs\n7:x\n8-y\n--\n\nsrc/b.rs\n1-use a;\n2-\n3:x\n"),
    ),
    (
        "a path with -N- in it, context lines found by the match's path",
        "pkg-1-2/a.rs-4-before\npkg-1-2/a.rs:5:match\npkg-1-2/a.rs-6-after\n",
        Some("pkg-1-2/a.rs\n4-before\n5:match\n6-after\n"),
    ),
    (
        "a path with a colon and spaces",
        "C:\\My Docs\\a b.txt:1:one\nC:\\My Docs\\a b.txt:2:two: three\n",
        Some("C:\\My Docs\\a b.txt\n1:one\n2:two: three\n"),
    ),
    (
        "a match whose text holds :N: keeps the first one as its number",
        "a.py:3:x = y[1:2:3]\na.py:4:t = '12:30:00'\n",
        Some("a.py\n3:x = y[1:2:3]\n4:t = '12:30:00'\n"),
    ),
    (
        "git grep on a tree: the revision is part of the path",
        "HEAD:src/a.rs:1:fn a\nHEAD:src/a.rs:2:fn b\n",
        Some("HEAD:src/a.rs\n1:fn a\n2:fn b\n"),
    ),
    (
        "grep -r without line numbers",
        "src/a.rs:fn a() {}\nsrc/a.rs:fn b() {}\nsrc/b.rs:use a;\n",
        Some("src/a.rs\nfn a() {}\nfn b() {}\n\nsrc/b.rs\nuse a;\n"),
    ),
    (
        "plain hits whose texts begin with N: stay plain beside one that does not",
        "notes.txt:12:30 lunch\nnotes.txt:read mail\nnotes.txt:call bob\n",
        Some("notes.txt\n12:30 lunch\nread mail\ncall bob\n"),
    ),
    (
        "plain hits whose texts all begin with N- would read as numbered",
        "log.txt:12-30 lunch\nlog.txt:13-00 call\nlog.txt:14-00 tea\nlog.txt:15-10 go\n",
        None,
    ),
    (
        "texts that begin with N: without line numbers read as numbered hits, exactly",
        "log.txt:12:30 lunch\nlog.txt:13:00 call\nlog.txt:14:00 tea\n",
        Some("log.txt\n12:30 lunch\n13:00 call\n14:00 tea\n"),
    ),
    (
        "plain hits with a -- line (context without numbers)",
        "a.rs:x\na.rs:y\n--\na.rs:z\n",
        None,
    ),
    (
        "lines that are not hits stay verbatim, alone",
        "src/a.rs:1:x\nsrc/a.rs:2:y\nBinary file target/app matches\nsrc/a.rs:3:z\nsrc/a.rs:4:w\nsrc/a.rs:5:v\n",
        Some("src/a.rs\n1:x\n2:y\n\nBinary file target/app matches\n\nsrc/a.rs\n3:z\n4:w\n5:v\n"),
    ),
    (
        "a plain hit among numbered ones stays verbatim",
        "src/a.rs:1:x\nsrc/a.rs:2:y\nsrc/a.rs:z\nsrc/a.rs:3:w\nsrc/a.rs:4:v\n",
        Some("src/a.rs\n1:x\n2:y\n\nsrc/a.rs:z\n\nsrc/a.rs\n3:w\n4:v\n"),
    ),
    (
        "numbered hits among plain ones are plain hits, exactly",
        "src/a.rs:x\nsrc/a.rs:y\nsrc/a.rs:1:z\nsrc/a.rs:w\n",
        Some("src/a.rs\nx\ny\n1:z\nw\n"),
    ),
    (
        "grep's messages stay verbatim",
        "grep: src/secret: Permission denied\nsrc/a.rs:1:x\nsrc/a.rs:2:y\nsrc/a.rs:3:z\n",
        Some("grep: src/secret: Permission denied\n\nsrc/a.rs\n1:x\n2:y\n3:z\n"),
    ),
    (
        "a context line whose text holds :N: before its group's match",
        "src/b.rs-5-t = a:1:b\nsrc/b.rs-6-u\nsrc/b.rs:7:match\n",
        Some("src/b.rs\n5-t = a:1:b\n6-u\n7:match\n"),
    ),
    (
        "mixed CRLF and LF lines",
        "src/a.rs:1:x\r\nsrc/a.rs:2:y\nsrc/a.rs:3:z\r",
        Some("src/a.rs\n1:x\r\n2:y\n3:z\r"),
    ),
    (
        "CRLF everywhere, the -- lines too",
        "src/a.rs:1:x\r\nsrc/a.rs-2-y\r\n--\r\nsrc/a.rs:9:z\r\n",
        Some("src/a.rs\n1:x\r\n2-y\r\n--\r\n9:z\r\n"),
    ),
    (
        "CRLF lines keep their \\r at the end of the hit",
        "src/a.rs:1:x\r\nsrc/a.rs:2:y\r\nsrc/a.rs:3:z\r\n",
        Some("src/a.rs\n1:x\r\n2:y\r\n3:z\r\n"),
    ),
    (
        "an empty match text",
        "src/a.rs:1:\nsrc/a.rs:2:\nsrc/a.rs:3:x\n",
        Some("src/a.rs\n1:\n2:\n3:x\n"),
    ),
    ("empty", "", None),
    ("a newline alone", "\n", None),
    (
        "a blank line inside",
        "src/a.rs:1:x\nsrc/a.rs:2:y\n\nsrc/a.rs:3:z\n",
        None,
    ),
    (
        "a blank line at the end",
        "src/a.rs:1:x\nsrc/a.rs:2:y\nsrc/a.rs:3:z\n\n",
        None,
    ),
    (
        "one hit per file does not get shorter",
        "src/a.rs:1:x\nsrc/b.rs:2:y\nsrc/c.rs:3:z\nsrc/d.rs:4:w\n",
        None,
    ),
    (
        "prose is not search results",
        "The build failed.\nSee the log for details.\nRun it again.\n",
        None,
    ),
    (
        "too many lines that are not hits",
        "src/a.rs:1:x\nsrc/a.rs:2:y\nnot a hit\nnot one either\nsrc/a.rs:3:z\n",
        None,
    ),
    (
        "the codec's own output",
        "src/a.rs\n3:fn a() {}\n9:fn b() {}\n",
        None,
    ),
    ("one hit is no shorter under a heading", "a:1:x\n", None),
    (
        "two hits of a one-letter path gain a byte",
        "a:1:x\na:2:y\n",
        Some("a\n1:x\n2:y\n"),
    ),
];

#[test]
fn cases_compress_to_their_rows_and_expand_back() {
    let codec = hits();
    for &(name, input, expected) in CASES {
        let out = compress(input);
        assert_eq!(out.as_deref(), expected, "{name}");
        if let Some(out) = out {
            assert_eq!(codec.expand(&out).unwrap(), input, "{name}: expand");
        }
    }
}

#[test]
fn json_payloads_and_level_none_are_unchanged() {
    let input = "src/a.rs:3:fn a() {}\nsrc/a.rs:9:fn b() {}\n";
    let codec = hits();
    let json = codec.compress(Payload::json(input), Level::Minimal);
    assert_eq!(json.unwrap(), Outcome::Unchanged);
    let none = codec.compress(Payload::text_only(input), Level::None);
    assert_eq!(none.unwrap(), Outcome::Unchanged);
    for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
        let out = codec.compress(Payload::text_only(input), level).unwrap();
        assert!(
            matches!(out, Outcome::Changed { lossy: false, .. }),
            "{level}"
        );
    }
}

/// One row per bad input: what `expand` is given, and its exact message.
const BAD: &[(&str, &str)] = &[
    ("", "hits: the text is empty"),
    ("\n", "hits line 1: a blank line before the first file"),
    (
        "\nsrc/a.rs\n1:x",
        "hits line 1: a blank line before the first file",
    ),
    (
        "src/a.rs\n1:x\n\n\nsrc/b.rs\n2:y",
        "hits line 4: a second blank line in a row (files are separated by one blank line)",
    ),
    (
        "src/a.rs\n1:x\n\n",
        "hits line 3: a blank line after the last file",
    ),
    (
        "just one line",
        "hits: no file heading followed by its hits",
    ),
    (
        "one line\n\nanother",
        "hits: no file heading followed by its hits",
    ),
    (
        "src/a.rs\n--\n1:x",
        "hits line 2: a `--` separator before the file's first hit",
    ),
    (
        "src/a.rs\n1:x\n\nsrc/b.rs\n--\n2:y",
        "hits line 5: a `--` separator before the file's first hit",
    ),
    (
        "src/a.rs\nfn a()\n--\nfn b()",
        "hits line 3: a `--` separator in hits without line numbers",
    ),
    (
        "src/a.rs\nfn a()\n--\r\nfn b()",
        "hits line 3: a `--` separator in hits without line numbers",
    ),
];

#[test]
fn expand_refuses_what_the_codec_never_writes() {
    let codec = hits();
    for &(bad, message) in BAD {
        let err = codec.expand(bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad:?}");
        assert_eq!(err.message(), message, "{bad:?}");
    }
}

/// A seeded generator (SplitMix64), so that every run tests the same inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const PATHS: &[&str] = &[
    "src/lib.rs",
    "src/parser/mod.rs",
    "tokio-1.54.1/src/runtime/task/core.rs",
    "serde-1.0.229/src/de/impls.rs",
    "README.md",
    "dir with spaces/a b.txt",
    "C:\\Users\\x\\file.rs",
    "a:1:b/c.rs",
    "pkg-1-2/a.rs",
    "x-3-",
    "ünïcödé/файл.rs",
    "--",
    "12",
    "src/a.rs-4-b.rs",
    " leading space.rs",
    "tab\there.rs",
    "HEAD:src/lib.rs",
];

const TEXTS: &[&str] = &[
    "fn main() {",
    "    let x = parse(input)?;",
    "",
    " ",
    "\t\tindented with tabs",
    "trailing spaces   ",
    "12:34 looks numbered",
    "5-looks like context",
    "-7-",
    "--",
    ":",
    "a:1:b:2:c",
    "x = y[1:2:3]",
    "error: panic FAIL",
    "ünïcödé ✓ 文字",
    "src/lib.rs",
    "src/lib.rs:3:nested hit",
    "Binary file x matches",
    "\r",
    "ends with cr\r",
];

const NOT_HITS: &[&str] = &[
    "Binary file target/app matches",
    "grep: /root/secret: Permission denied",
    "grep: /usr/lib/libz.so: binary file matches",
    "--",
    "src/lib.rs",
    "12:3",
    ":1:x",
    "a:",
    "",
    "\r",
];

/// A text of a hit: most from `TEXTS`, some long, some random bytes of the awkward kinds.
fn text(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => "long ".repeat(200 + rng.below(300)),
        1 => (0..rng.below(20))
            .map(|_| [":", "-", "1", "2", " ", "\t", "\r", "x", "é"][rng.below(9)])
            .collect(),
        _ => rng.pick(TEXTS).to_owned(),
    }
}

/// Search results of one of the three shapes (numbered, with context, plain), made hostile
/// now and then.
fn search_results(rng: &mut Rng) -> String {
    let shape = rng.below(3);
    let mut lines: Vec<String> = Vec::new();
    for group in 0..1 + rng.below(12) {
        let path = if rng.one_in(4) {
            rng.pick(PATHS).to_owned()
        } else {
            format!("src/m{}.rs", rng.below(5))
        };
        if shape == 1 && group > 0 {
            lines.push("--".to_owned());
        }
        let start = 1 + rng.below(500);
        for n in start..start + 1 + rng.below(6) {
            let line = match shape {
                0 => format!("{path}:{n}:{}", text(rng)),
                1 if rng.one_in(3) => format!("{path}:{n}:{}", text(rng)),
                1 => format!("{path}-{n}-{}", text(rng)),
                _ => format!("{path}:{}", text(rng)),
            };
            lines.push(line);
        }
    }
    hostile(rng, &mut lines);
    let mut out = lines.join("\n");
    if !rng.one_in(5) {
        out.push('\n');
    }
    out
}

/// Now and then: lines that are not hits, CRLF on some or all lines, a line of the codec's
/// own output.
fn hostile(rng: &mut Rng, lines: &mut Vec<String>) {
    if rng.one_in(3) {
        let at = rng.below(lines.len() + 1);
        lines.insert(at, rng.pick(NOT_HITS).to_owned());
    }
    match rng.below(6) {
        0 => lines.iter_mut().for_each(|line| line.push('\r')),
        1 => lines
            .iter_mut()
            .filter(|_| rng.one_in(2))
            .for_each(|line| line.push('\r')),
        _ => {}
    }
    if rng.one_in(10) {
        lines.insert(0, "src/lib.rs".to_owned());
    }
}

/// Lines of random awkward bytes, which the codec must leave or give back exactly.
fn noise(rng: &mut Rng) -> String {
    let parts = [
        "a", "b/c", ":", "-", "1", "23", "--", "\n", "\r", " ", "\t", "é", "x.rs",
    ];
    (0..rng.below(80))
        .map(|_| parts[rng.below(parts.len())])
        .collect()
}

/// What every changed outcome must be: lossless, strictly smaller, and expanding to `input`.
fn assert_exact(codec: &Hits, input: &str) -> Option<String> {
    let outcome = codec
        .compress(Payload::text_only(input), Level::Minimal)
        .unwrap();
    let Outcome::Changed { payload, lossy } = outcome else {
        return None;
    };
    assert!(!lossy, "lossy on {input:?}");
    assert!(payload.len() < input.len(), "not smaller on {input:?}");
    let expanded = codec.expand(&payload);
    assert_eq!(expanded.as_deref(), Ok(input), "output {payload:?}");
    Some(payload)
}

#[test]
fn generated_search_results_round_trip_exactly() {
    let codec = hits();
    let mut rng = Rng(0x5EED_0001);
    let (mut changed, mut again_changed) = (0, 0);
    for _ in 0..6000 {
        let input = search_results(&mut rng);
        let Some(out) = assert_exact(&codec, &input) else {
            continue;
        };
        changed += 1;
        if assert_exact(&codec, &out).is_some() {
            again_changed += 1;
        }
    }
    assert!(changed > 2500, "only {changed} of 6000 changed");
    assert!(
        again_changed < 50,
        "{again_changed} outputs compressed again"
    );
}

/// Paths as search tools print them: no mark (`:N:`, `-N-`) in them, and none that is
/// another followed by a mark.
const CLEAN_PATHS: &[&str] = &[
    "src/lib.rs",
    "src/m1.rs",
    "src/m2.rs",
    "tokio-1.54.1/src/runtime/task/core.rs",
    "dir with spaces/a b.txt",
    "C:\\Users\\x\\file.rs",
    "ünïcödé/файл.rs",
    "HEAD:src/lib.rs",
];

/// Search results from known paths (LF or CRLF lines), and the output that groups them under
/// those paths.
fn clean_results(rng: &mut Rng) -> (String, String) {
    let shape = rng.below(3);
    let eol = if rng.one_in(4) { "\r\n" } else { "\n" };
    let (mut input, mut output) = (String::new(), String::new());
    let mut block: Option<&str> = None;
    for group in 0..1 + rng.below(10) {
        let mut path = rng.pick(CLEAN_PATHS);
        while shape == 2 && path.contains(':') {
            path = rng.pick(CLEAN_PATHS);
        }
        if shape == 1 && group > 0 {
            input.push_str(&format!("--{eol}"));
            output.push_str(&format!("--{eol}"));
        }
        let start = 1 + rng.below(900);
        let lines = 1 + rng.below(5);
        // Every group of context holds a match, as search tools print them.
        let matched = start + rng.below(lines);
        for n in start..start + lines {
            let text = rng.pick(TEXTS);
            let (sep, hit) = match shape {
                0 => (":", format!("{n}:{text}")),
                1 if n == matched || rng.one_in(3) => (":", format!("{n}:{text}")),
                1 => ("-", format!("{n}-{text}")),
                // A plain text holding `:N:` may read as a numbered hit (of another path,
                // exactly all the same): plain texts here hold no `:`.
                _ if text.is_empty() || text == "--" || text.contains(':') => {
                    (":", "plain".to_owned())
                }
                _ => (":", text.to_owned()),
            };
            input.push_str(&format!("{path}{sep}{hit}{eol}"));
            if block != Some(path) {
                if block.is_some() {
                    output.push('\n');
                }
                output.push_str(path);
                output.push('\n');
                block = Some(path);
            }
            output.push_str(&hit);
            output.push_str(eol);
        }
    }
    (input, output)
}

#[test]
fn generated_search_results_are_grouped_under_their_own_paths() {
    let codec = hits();
    let mut rng = Rng(0x5EED_0005);
    let mut changed = 0;
    for _ in 0..4000 {
        let (input, expected) = clean_results(&mut rng);
        if let Some(out) = assert_exact(&codec, &input) {
            assert_eq!(out, expected, "input {input:?}");
            changed += 1;
        }
    }
    assert!(changed > 2000, "only {changed} of 4000 changed");
}

#[test]
fn random_bytes_round_trip_or_pass() {
    let codec = hits();
    let mut rng = Rng(0x5EED_0002);
    for _ in 0..20_000 {
        let input = noise(&mut rng);
        assert_exact(&codec, &input);
        // Whatever it is given, expand answers without panicking.
        let _ = codec.expand(&input);
    }
}

#[test]
fn contract_holds_on_the_corpus_and_on_search_results() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let mut made: Vec<(String, String)> = CASES
        .iter()
        .map(|&(name, input, _)| (name.to_owned(), input.to_owned()))
        .collect();
    let mut rng = Rng(0x5EED_0003);
    made.extend((0..200).map(|i| (format!("generated {i}"), search_results(&mut rng))));
    parrot_codec_test::assert_contract_on::<Hits>(&["{}"], corpus, made);
}

/// Token savings on captures of real searches: every file of the folder `HITS_CAPTURES`
/// (default `/tmp/hits`), each held to the round trip. Run with `--ignored --nocapture`.
#[test]
#[ignore = "reads captures made on the developer's machine"]
fn captures_token_savings() {
    let dir = std::env::var("HITS_CAPTURES").unwrap_or_else(|_| "/tmp/hits".to_owned());
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{dir}: {err}"))
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    let codec = hits();
    let (mut all_in, mut all_out) = (0, 0);
    for path in paths {
        let input = std::fs::read_to_string(&path).unwrap();
        let out = assert_exact(&codec, &input);
        let before = o200k(&input);
        let after = out.as_deref().map_or(before, o200k);
        all_in += before;
        all_out += after;
        let name = path.file_name().unwrap().to_string_lossy();
        let saved = 100.0 * (before - after) as f64 / before.max(1) as f64;
        let lines = input.lines().count();
        println!("{name:45} {lines:6} lines {before:7} -> {after:7} tokens  {saved:5.1}% saved");
    }
    let saved = 100.0 * (all_in - all_out) as f64 / all_in.max(1) as f64;
    println!(
        "{:45} {:12} {all_in:7} -> {all_out:7} tokens  {saved:5.1}% saved",
        "all", ""
    );
}

/// The codec's time against a plain split of the same bytes into lines, at 1 MB and 10 MB of
/// `grep -rn -C2`-like output. Run in release with `--ignored --nocapture`.
#[test]
#[ignore = "a timing, meaningful in release only"]
fn speed_against_a_line_split() {
    use std::hint::black_box;
    use std::time::Instant;
    let codec = hits();
    let mut rng = Rng(0x5EED_0004);
    let mut unit = String::new();
    for file in 0..400 {
        let path = format!("tokio-1.54.1/src/runtime/scheduler/multi_thread/worker{file}.rs");
        for group in 0..4 {
            if file + group > 0 {
                unit.push_str("--\n");
            }
            for n in 0..5 {
                let sep = if n == 2 { ':' } else { '-' };
                let line = 100 * group + n + 1;
                let text = rng.pick(TEXTS).trim_end_matches('\r');
                unit.push_str(&format!("{path}{sep}{line}{sep}    {text} // {n}\n"));
            }
        }
    }
    for mb in [1, 10] {
        let mut input = String::new();
        while input.len() < mb << 20 {
            input.push_str(&unit);
        }
        let time = |f: &dyn Fn() -> usize| {
            (0..7)
                .map(|_| {
                    let start = Instant::now();
                    black_box(f());
                    start.elapsed()
                })
                .min()
                .unwrap()
        };
        let split = time(&|| black_box(input.as_str()).split('\n').count());
        let hits = time(&|| {
            let out = codec.compress(Payload::text_only(black_box(&input)), Level::Minimal);
            out.unwrap().payload().map_or(0, str::len)
        });
        let out = codec.compress(Payload::text_only(&input), Level::Minimal);
        let out = out.unwrap().payload().unwrap().to_owned();
        let expand = time(&|| codec.expand(black_box(&out)).unwrap().len());
        let ratio = hits.as_secs_f64() / split.as_secs_f64();
        let expand_ratio = expand.as_secs_f64() / split.as_secs_f64();
        println!(
            "{mb:2} MB: split {split:?}, hits {hits:?} ({ratio:.2}x), expand {expand:?} ({expand_ratio:.2}x)"
        );
    }
}

/// The file of each hit line of a `hits` output, in order: the lines under a heading but its
/// `--` lines.
fn hit_files(output: &str) -> Vec<&str> {
    let mut files = Vec::new();
    for block in output.split("\n\n") {
        let mut lines = block.lines();
        let heading = lines.next().unwrap_or_default();
        files.extend(
            lines
                .filter(|line| !super::encode::is_separator(line))
                .map(|_| heading),
        );
    }
    files
}

/// Issue 48: a cut of this codec's output was the host's, as text, its selector the whole
/// original. On every search capture and at many rooms, the codec's own cut keeps the rules
/// of a cut, keeps a heading only with a hit of it, counts the hit lines and files it removed
/// exactly, and its selector returns exactly the original lines the kept part does not show.
#[test]
fn a_cut_keeps_whole_blocks_and_its_selector_returns_the_lines_removed() {
    use crate::cut::check::{assert_rules, captures, first_lines, lines, read, rooms};
    let codec = hits();
    let mut cut_captures = 0;
    for (name, input) in captures("hits-") {
        let Some(output) = compress(&input) else {
            continue;
        };
        cut_captures += 1;
        let original = Payload::text_only(&input);
        let all_files = hit_files(&output);
        for room in rooms(&output) {
            let cut = codec.cut(original, &output, room).expect(&name);
            assert_rules(&output, &cut, room, &name);
            let marker = read(&cut.marker, ("hit line", "hit lines"));
            let kept = &output[..cut.kept];
            let at = format!("{name}, room {room}: {}", cut.marker);
            assert_eq!(marker.to, input.lines().count(), "{at}");
            // The kept blocks expand to the original's first lines: a heading left without
            // its hit would expand to a line of its own, which the original does not have.
            let shown = if kept.is_empty() {
                String::new()
            } else {
                codec.expand(kept).expect(&at)
            };
            assert_eq!(shown, first_lines(&input, marker.from - 1), "{at}");
            let removed = lines(&input, marker.from, marker.to);
            assert_eq!(format!("{shown}{removed}"), input, "{at}");
            let kept_hits = hit_files(kept).len();
            assert_eq!(marker.total, all_files.len(), "{at}");
            assert_eq!(marker.removed, all_files.len() - kept_hits, "{at}");
            let files: std::collections::HashSet<&str> =
                all_files[kept_hits..].iter().copied().collect();
            assert_eq!(marker.files, Some(files.len()), "{at}");
            if room >= 2_000 {
                assert!(!kept.is_empty(), "{at}");
            }
        }
    }
    assert!(cut_captures >= 5, "{cut_captures} captures grouped");
}

#[test]
fn a_text_that_is_not_the_codecs_output_of_the_original_is_not_cut_by_its_grammar() {
    let codec = hits();
    let input = "src/a.rs:3:fn a() {}\nsrc/a.rs:9:fn b() {}\nsrc/b.rs:1:use a;\n";
    let output = compress(input).unwrap();
    let other = "src/a.rs:3:fn a() {}\nsrc/a.rs:9:fn c() {}\nsrc/b.rs:1:use a;\n";
    let cases = [
        (
            "another original",
            Payload::text_only(other),
            output.as_str(),
        ),
        ("a JSON original", Payload::json(input), output.as_str()),
        ("an empty output", Payload::text_only(input), ""),
        ("not grouped", Payload::text_only(input), input),
    ];
    for (name, original, text) in cases {
        assert_eq!(codec.cut(original, text, 30), None, "{name}");
    }
}

#[test]
fn a_cut_of_generated_search_results_keeps_the_rules_and_never_panics() {
    let codec = hits();
    let mut rng = Rng(0x5EED_0048);
    let mut cut_outputs = 0;
    for _ in 0..300 {
        let input = search_results(&mut rng);
        let Some(output) = compress(&input) else {
            continue;
        };
        cut_outputs += 1;
        let original = Payload::text_only(&input);
        crate::cut::check::assert_cuts_hold(
            &input,
            &output,
            ("hit line", "hit lines"),
            |text, room| codec.cut(original, text, room),
        );
    }
    assert!(cut_outputs >= 100, "{cut_outputs} outputs");
}
