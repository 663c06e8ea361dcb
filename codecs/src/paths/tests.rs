use std::path::{Path, PathBuf};

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Payload};

use super::Paths;

fn compress(input: &str) -> Outcome {
    Paths
        .compress(Payload::text_only(input), Level::Minimal)
        .unwrap()
}

fn o200k(text: &str) -> usize {
    parrot_bpe::O200K_BASE.count(text)
}

/// Checks the codec's promise on `input`: unchanged, or a smaller lossless tree that expands
/// back to it byte for byte, and whose own compression is unchanged or expands back too.
#[track_caller]
fn holds(input: &str) -> Option<String> {
    let out = compress(input);
    let Outcome::Changed { payload, lossy } = out else {
        return None;
    };
    assert!(!lossy, "lossy on {input:?}");
    assert!(
        payload.len() < input.len(),
        "not smaller: {input:?} -> {payload:?}"
    );
    let back = Paths
        .expand(&payload)
        .unwrap_or_else(|err| panic!("{err} expanding {payload:?} of {input:?}"));
    assert_eq!(back, input, "round trip of {input:?} through {payload:?}");
    if let Outcome::Changed { payload: again, .. } = compress(&payload) {
        assert_eq!(Paths.expand(&again).unwrap(), payload, "again: {payload:?}");
    }
    Some(payload)
}

/// One row per case: a listing and its tree, `None` where the codec declines.
const ROWS: &[(&str, &str, Option<&str>)] = &[
    (
        "find -type f: the common ./ said once",
        "./src/lib.rs\n./src/main.rs\n./src/parser/mod.rs\n./src/parser/lexer.rs\n./README.md\n",
        Some("./\n  src/\n    lib.rs main.rs\n    parser/\n      mod.rs lexer.rs\n  README.md\n"),
    ),
    (
        "find . (the module's example): a directory that is a line of the input has no /",
        ".\n./Cargo.toml\n./src\n./src/lib.rs\n./src/main.rs\n./src/parser\n./src/parser/mod.rs\n./src/parser/lexer.rs\n./README.md\n",
        Some(
            ".\n  Cargo.toml\n  src\n    lib.rs main.rs\n    parser\n      mod.rs lexer.rs\n  README.md\n",
        ),
    ),
    (
        "git ls-files (the module's example): no common prefix, runs grouped",
        ".gitignore\nCargo.toml\ncodecs/Cargo.toml\ncodecs/src/lib.rs\ncodecs/src/log/mod.rs\ncodecs/src/log/tests.rs\ncodecs/src/toon/mod.rs\nhost/src/main.rs\nhost/src/lib.rs\nREADME.md\n",
        Some(
            ".gitignore Cargo.toml\ncodecs/\n  Cargo.toml\n  src/\n    lib.rs\n    log/\n      mod.rs tests.rs\n    toon/mod.rs\nhost/src/\n  main.rs lib.rs\nREADME.md\n",
        ),
    ),
    (
        "an absolute root that find prints first",
        "/usr/include\n/usr/include/stdio.h\n/usr/include/stdlib.h\n/usr/include/linux\n/usr/include/linux/types.h\n/usr/include/linux/fs.h\n",
        Some("/usr/include\n  stdio.h stdlib.h\n  linux\n    types.h fs.h\n"),
    ),
    (
        "a directory that comes back is named again",
        "src/x.rs\nsrc/y.rs\ntests/z.rs\ntests/w.rs\nsrc/v.rs\nsrc/u.rs\n",
        Some("src/\n  x.rs y.rs\ntests/\n  z.rs w.rs\nsrc/\n  v.rs u.rs\n"),
    ),
    (
        "a single line inside a short directory line goes beside it",
        ".\n./benches\n./benches/parse.rs\n./src\n./src/lib.rs\n./src/impls.rs\n",
        Some(".\n  benches benches/parse.rs\n  src\n    lib.rs impls.rs\n"),
    ),
    (
        "a single line inside a long directory line goes under it",
        ".\n./integration_tests\n./integration_tests/main.rs\n./README.md\n",
        Some(".\n  integration_tests\n    main.rs\n  README.md\n"),
    ),
    (
        "ls -p's directory line, then lines inside it",
        "src/\nsrc/a.rs\nsrc/b.rs\nREADME.md\n",
        Some("src/\nsrc/\n  a.rs b.rs\nREADME.md\n"),
    ),
    (
        "a line equal to the directory the run shares is not under it",
        "lib/core/\nlib/core/x.rs\nlib/core/y.rs\n",
        Some("lib/\n  core/\n  core/\n    x.rs y.rs\n"),
    ),
    (
        "names with spaces are quoted",
        "docs/My Notes.md\ndocs/plan.md\ndocs/faq.md\ndocs/api.md\ndocs/old drafts/one.md\ndocs/index.md\ndocs/intro.md\ndocs/usage.md\n",
        Some(
            "docs/\n  'My Notes.md' plan.md faq.md api.md 'old drafts/one.md' index.md intro.md usage.md\n",
        ),
    ),
    (
        "no final line break stays so",
        "./a/b.rs\n./a/c.rs",
        Some("./a/\n  b.rs c.rs"),
    ),
    (
        "unicode and colons are names like any other",
        "données/été.txt\ndonnées/hiver:2.txt\ndonnées/日本.md\n",
        Some("données/\n  été.txt hiver:2.txt 日本.md\n"),
    ),
    (
        "empty directories in between",
        "data//b.csv\ndata//c.csv\n",
        Some("data//\n  b.csv c.csv\n"),
    ),
    (
        "ls -R: the tree of its sections, an empty directory with its /",
        ".:\nCargo.toml\nempty\nsrc\n\n./empty:\n\n./src:\nlib.rs\nnfa\n\n./src/nfa:\nmod.rs\ndfa.rs\n",
        Some(".:\n  Cargo.toml empty/\n  src\n    lib.rs\n    nfa\n      mod.rs dfa.rs\n"),
    ),
    (
        "ls -R (the module's example)",
        ".:\nCOPYING\nCargo.toml\nempty\nsrc\n\n./empty:\n\n./src:\nlib.rs\npacked\n\n./src/packed:\napi.rs\n",
        Some(".:\n  COPYING Cargo.toml empty/\n  src\n    lib.rs\n    packed\n      api.rs\n"),
    ),
    (
        "ls -R with names holding spaces",
        ".:\nmy docs\nsrc\n\n./my docs:\nnotes.md\nplan.md\n\n./src:\nlib.rs\nmain.rs\n",
        Some(".:\n  'my docs'\n    notes.md plan.md\n  src\n    lib.rs main.rs\n"),
    ),
    ("empty", "", None),
    ("a line break alone", "\n", None),
    (
        "flat ls -1: nothing to share",
        "Cargo.toml\nREADME.md\nsrc\ntests\n",
        None,
    ),
    ("nothing shared", "a/x\nb/y\nc/z\n", None),
    ("CRLF lines", "./a/b.rs\r\n./a/c.rs\r\n./a/d.rs\r\n", None),
    ("a tab", "./a/b.rs\n./a/c\td.rs\n./a/e.rs\n", None),
    ("an empty line", "./a/b.rs\n\n./a/c.rs\n./a/d.rs\n", None),
    (
        "prose",
        "The build failed in src/lib.rs because of a type error.\nSee docs/errors.md for more.\n",
        None,
    ),
    (
        "grep -n output",
        "src/lib.rs:12:    let x = 1;\nsrc/lib.rs:40:    let y = 2;\nsrc/main.rs:3: fn main() {\n",
        None,
    ),
    (
        "git status --porcelain",
        " M src/lib.rs\n M src/main.rs\n?? src/new.rs\n",
        None,
    ),
    (
        "an entry that starts with a quote",
        "a/'quoted\na/plain\n",
        None,
    ),
    (
        "an entry with a space and a quote",
        "a/it's here\na/plain\n",
        None,
    ),
    (
        "the tree's first line would end with a colon",
        "x\ny:\nd/a\nd/b\n",
        None,
    ),
    ("ls -R with two roots", "a:\nx\n\nb:\ny\n", None),
    (
        "ls -R of a folder without subfolders",
        ".:\na\nb\nc\n",
        None,
    ),
    (
        "ls -Rp: an entry with a /",
        ".:\nsrc/\n\n./src:\na.rs\n",
        None,
    ),
    (
        "ls -R whose section is not under an entry",
        ".:\nsrc\n\n./lib:\na.rs\n",
        None,
    ),
    (
        "ls -R sections out of ls's order",
        ".:\na\nb\n\n./b:\nx\n\n./a:\ny\n",
        None,
    ),
    ("ls -R with two blank lines", ".:\na\n\n\n./a:\nx\n", None),
];

#[test]
fn rows_give_their_trees() {
    let wrong: Vec<String> = ROWS
        .iter()
        .filter_map(|&(name, input, expected)| {
            let out = holds(input);
            (out.as_deref() != expected).then(|| format!("{name}: {out:?}, not {expected:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn level_none_and_json_payloads_are_unchanged() {
    let input = "./src/lib.rs\n./src/main.rs\n./src/util.rs\n";
    assert!(compress(input).payload().is_some());
    assert_eq!(
        Paths
            .compress(Payload::text_only(input), Level::None)
            .unwrap(),
        Outcome::Unchanged
    );
    assert_eq!(
        Paths
            .compress(Payload::json(r#"["a/b", "a/c"]"#), Level::Aggressive)
            .unwrap(),
        Outcome::Unchanged
    );
}

#[test]
fn long_runs_of_entries_wrap_at_the_width() {
    let input: String = (0..100).map(|i| format!("src/file_{i:03}.rs\n")).collect();
    let out = holds(&input).expect("a listing");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "src/");
    assert!(lines.len() > 2, "{out}");
    for line in &lines[1..] {
        assert!(line.len() <= super::tree::WIDTH, "{line}");
        assert!(line.starts_with("  file_"), "{line}");
    }
    let long = format!(
        "src/module/{}\nsrc/module/b\nsrc/module/c\n",
        "x".repeat(300)
    );
    assert_eq!(
        holds(&long).as_deref(),
        Some(format!("src/module/\n  {}\n  b c\n", "x".repeat(300)).as_str())
    );
}

#[test]
fn expand_refuses_what_the_codec_does_not_write() {
    let rows: Vec<(&str, &str)> = vec![
        ("", "paths: an empty payload"),
        ("\n", "paths line 1: an empty line"),
        ("a/\n  b\n\n  c\n", "paths line 3: an empty line"),
        ("a/\n   b c\n", "paths line 2: an odd indent of 3 spaces"),
        (
            "  a\n",
            "paths line 1: an indent of 2 spaces on the first line",
        ),
        (
            "a/\n  b/\n      c\n",
            "paths line 3: an indent of 6 spaces under a parent at 2",
        ),
        ("a/\n  b  c\n", "paths line 2: two spaces between entries"),
        (
            "a/\n  b c \n",
            "paths line 2: a space at the end of the line",
        ),
        ("a/\n  b\n   \n", "paths line 3: an empty line"),
        ("a/\n  'b c\n", "paths line 2: a quote that does not close"),
        (
            "a/\n  'bc'\n",
            "paths line 2: a quoted entry without a space ('bc')",
        ),
        (
            "a/\n  'b c'd\n",
            "paths line 2: text right after a closing quote",
        ),
        (
            "a b/\n  c\n",
            "paths line 1: 2 entries on a line with lines indented under it (a directory line holds one)",
        ),
        ("a/\n  b\r\n", "paths line 2: a carriage return"),
        ("a/\n\tb\n", "paths line 2: a tab"),
        (
            ".:\n  a\nb\n",
            "paths line 3: a second root (an ls -R tree has one line at indent 0)",
        ),
        (".:\n  a/b\n", "paths line 2: a '/' in the name \"a/b\""),
        (
            ".:\n  a/\n    b\n",
            "paths line 2: a '/' in the name \"a/\"",
        ),
        (".:\n  //\n", "paths line 2: a '/' in the name \"//\""),
        (
            ":\n  a\n",
            "paths line 1: an ls -R root that is empty or holds a space or a quote (\"\")",
        ),
        (
            ".:\n    a\n",
            "paths line 2: an indent of 4 spaces under a parent at 0",
        ),
    ];
    for (payload, message) in rows {
        let err: CodecError = Paths.expand(payload).unwrap_err();
        assert_eq!(err.message(), message, "{payload:?}");
    }
}

/// SplitMix64: a seeded generator, so that every run checks the same inputs.
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

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const NAMES: [&str; 24] = [
    "src",
    "lib.rs",
    "mod.rs",
    "main.rs",
    "tests",
    "README.md",
    "Cargo.toml",
    ".github",
    "workflows",
    "ci.yml",
    "a",
    "b",
    "x_y-z.txt",
    ".hidden",
    "données",
    "日本語.md",
    "🦀.rs",
    "util",
    "parser",
    "3.12.0",
    "node_modules",
    "index.js",
    "v8-json.h",
    "pyenv-exec",
];

const HOSTILE: [&str; 22] = [
    "a b",
    "it's",
    "'q",
    "name:",
    "a -> b",
    " lead",
    "trail ",
    "-dash",
    "x'",
    "a\tb",
    "c\rd",
    "..",
    ".",
    "  ",
    "'a b'",
    "x:y",
    "tab\t",
    "q' r",
    "end/",
    "\u{a0}nbsp",
    "\u{feff}bom",
    "ends:",
];

/// A random tree: each node a name and its children.
struct Node {
    name: String,
    children: Vec<Node>,
}

fn tree(rng: &mut Rng, depth: usize, hostile: usize) -> Vec<Node> {
    let count = 1 + rng.below(if depth == 0 { 8 } else { 5 });
    let mut nodes: Vec<Node> = Vec::with_capacity(count);
    for _ in 0..count {
        let mut name = if rng.chance(hostile) {
            rng.pick(&HOSTILE).to_owned()
        } else {
            rng.pick(&NAMES).to_owned()
        };
        if rng.chance(30) {
            name.push_str(&rng.below(100).to_string());
        }
        if rng.chance(1) {
            name = "n".repeat(200 + rng.below(300));
        }
        if nodes.iter().any(|node| node.name == name) {
            continue;
        }
        let children = if depth < 5 && rng.chance(35) {
            tree(rng, depth + 1, hostile)
        } else {
            Vec::new()
        };
        nodes.push(Node { name, children });
    }
    nodes
}

/// The paths of `nodes` under `prefix`, depth first: each directory's line before what it
/// holds when `directories`, and with a `/` after it when `slash`.
fn walk(nodes: &[Node], prefix: &str, directories: bool, slash: bool, out: &mut Vec<String>) {
    for node in nodes {
        let path = format!("{prefix}{}", node.name);
        if node.children.is_empty() || directories {
            let end = if slash && !node.children.is_empty() {
                "/"
            } else {
                ""
            };
            out.push(format!("{path}{end}"));
        }
        walk(&node.children, &format!("{path}/"), directories, slash, out);
    }
}

/// `ls -R` of `nodes` under the root `root`: the root's section, then each directory's.
fn ls_r(nodes: &[Node], root: &str) -> Vec<String> {
    let mut out = vec![format!("{root}:")];
    out.extend(nodes.iter().map(|node| node.name.clone()));
    sections(nodes, root, &mut out);
    out
}

fn sections(nodes: &[Node], path: &str, out: &mut Vec<String>) {
    for node in nodes.iter().filter(|node| !node.children.is_empty()) {
        let path = format!("{path}/{}", node.name);
        out.push(String::new());
        out.push(format!("{path}:"));
        out.extend(node.children.iter().map(|child| child.name.clone()));
        sections(&node.children, &path, out);
    }
}

/// A listing of a random tree in one of the shapes tools print, maybe made hostile.
fn listing(rng: &mut Rng) -> String {
    let hostile = [0, 0, 3, 10, 30][rng.below(5)];
    let nodes = tree(rng, 0, hostile);
    let mut lines = Vec::new();
    match rng.below(8) {
        0 => {
            lines.push(".".to_owned());
            walk(&nodes, "./", true, false, &mut lines);
        }
        1 => walk(&nodes, "./", false, false, &mut lines),
        2 => {
            walk(&nodes, "", false, false, &mut lines);
            lines.sort();
        }
        3 => {
            lines.push("/tmp/work dir".to_owned());
            walk(&nodes, "/tmp/work dir/", true, false, &mut lines);
        }
        4 => walk(&nodes, "", true, true, &mut lines),
        5 => lines = ls_r(&nodes, rng.pick(&[".", "src", "/abs/root", "a b"])),
        6 => {
            walk(
                &nodes,
                "/root/.cargo/registry/src/index/",
                false,
                false,
                &mut lines,
            );
            for i in (1..lines.len()).rev() {
                lines.swap(i, rng.below(i + 1));
            }
        }
        _ => walk(&nodes, "", true, false, &mut lines),
    }
    spoil(rng, &mut lines);
    let mut text = lines.join("\n");
    if rng.chance(70) {
        text.push('\n');
    }
    text
}

/// Makes some listings hostile: CRLF, trailing spaces, blank lines, indents, our own format.
fn spoil(rng: &mut Rng, lines: &mut Vec<String>) {
    if lines.is_empty() || !rng.chance(40) {
        return;
    }
    let at = rng.below(lines.len());
    match rng.below(10) {
        0 => lines.iter_mut().for_each(|line| line.push('\r')),
        1 => lines[at].push('\r'),
        2 => lines[at].push_str("  "),
        3 => lines.insert(at, String::new()),
        4 => lines[at].insert_str(0, "  "),
        5 => lines.insert(at, "  src/".to_owned()),
        6 => lines.insert(at, "'a b' c".to_owned()),
        7 => lines[at] = lines[at].replace('/', "//"),
        8 => lines.insert(at, lines[at].clone()),
        _ => lines[at].push(':'),
    }
}

#[test]
fn generated_listings_round_trip_or_pass_through() {
    let mut rng = Rng(0x5EED_0001);
    let (mut changed, mut total) = (0, 0);
    for _ in 0..6000 {
        let input = listing(&mut rng);
        total += 1;
        changed += usize::from(holds(&input).is_some());
    }
    // Most generated listings share directories: the codec must act on them, not only pass.
    assert!(changed * 3 > total, "{changed} of {total} changed");
}

#[test]
fn line_by_line_noise_round_trips_or_passes_through() {
    let mut rng = Rng(0x5EED_0002);
    let pieces = [
        "a", "b/", "/", "//", " ", "'", ":", "\n", "  ", "./", "x y", "c/d", "é", "\r", "\t", "-",
    ];
    for _ in 0..6000 {
        let len = rng.below(40);
        let input: String = (0..len).map(|_| rng.pick(&pieces)).collect();
        holds(&input);
    }
}

#[test]
fn expand_never_panics_on_noise() {
    let mut rng = Rng(0x5EED_0003);
    let pieces = [
        "a", "b/", "/", " ", "  ", "'", ":", "\n", "\n  ", "\n    ", "x y", ".:", "é", "'a b'",
    ];
    for _ in 0..6000 {
        let len = rng.below(30);
        let payload: String = (0..len).map(|_| rng.pick(&pieces)).collect();
        if let Ok(back) = Paths.expand(&payload) {
            // What expands is a listing whose tree, if the codec writes one, expands back.
            holds(&back);
        }
    }
}

/// The files and folders under `dir` (without `target` and hidden folders), sorted, as
/// `find .` and `find . -type f` print them.
fn find(dir: &Path) -> (String, String) {
    fn visit(dir: &Path, rel: &str, all: &mut String, files: &mut String) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() && (name.starts_with('.') || name.starts_with("target")) {
                continue;
            }
            let rel = format!("{rel}/{name}");
            all.push_str(&rel);
            all.push('\n');
            if path.is_dir() {
                visit(&path, &rel, all, files);
            } else {
                files.push_str(&rel);
                files.push('\n');
            }
        }
    }
    let (mut all, mut files) = (String::from(".\n"), String::new());
    visit(dir, ".", &mut all, &mut files);
    (all, files)
}

#[test]
fn the_workspace_listed_saves_half_its_tokens() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seen = Vec::new();
    for dir in [".", "codecs", "host"] {
        let (all, files) = find(&root.join(dir));
        for (shape, input) in [("find .", &all), ("find . -type f", &files)] {
            let out = holds(input).unwrap_or_else(|| panic!("{dir} {shape}: unchanged"));
            let (before, after) = (o200k(input), o200k(&out));
            seen.push((
                format!("{dir} {shape}: {before} -> {after} tokens"),
                after * 2 <= before,
            ));
        }
    }
    assert!(seen.iter().all(|(_, half)| *half), "{seen:#?}");
}

/// The listings of `corpus/text` (`paths-*.txt`), when the folder is there.
fn text_corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/text");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, String)> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_text_corpus_round_trips_or_passes_through() {
    for (name, text) in text_corpus() {
        let out = holds(&text);
        if name.starts_with("paths-") && !name.contains("status") && !name.ends_with("-ls.txt") {
            assert!(out.is_some(), "{name}: unchanged");
        }
    }
}

/// Listings the codec acts on, for the contract.
fn made() -> Vec<(String, String)> {
    let mut made: Vec<(String, String)> = ROWS
        .iter()
        .map(|&(name, input, _)| (name.to_owned(), input.to_owned()))
        .collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (all, files) = find(&root.join("src"));
    made.push(("find . of codecs/src".to_owned(), all));
    made.push(("find -type f of codecs/src".to_owned(), files));
    let mut rng = Rng(0x5EED_0004);
    made.extend((0..200).map(|i| (format!("generated {i}"), listing(&mut rng))));
    made
}

#[test]
fn listings_hold_the_codec_contract() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    parrot_codec_test::assert_contract_on::<Paths>(&["{}"], corpus, made());
    let text = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/text");
    if Path::new(text).is_dir() {
        parrot_codec_test::assert_contract_on::<Paths>(&["{}"], text, Vec::new());
    }
}

#[test]
fn unknown_params_are_refused() {
    let params = parrot_codec_api::Params::from_json(r#"{"width": 80}"#).unwrap();
    let err = parrot_codec_api::build::<Paths>(params).unwrap_err();
    assert_eq!(err.key(), Some("width"), "{err}");
}

/// Issue 48: a cut of this codec's tree was the host's, as text, its selector the whole
/// original. On every listing capture the codec acts on and at many rooms, the codec's own
/// cut keeps the rules of a cut, keeps a directory line only with a line under it, counts the
/// paths it removed exactly, and its selector returns exactly the original lines the kept
/// part does not show. An `ls -R` tree is left to the host (see `cut.rs`).
#[test]
fn a_cut_keeps_whole_tree_lines_and_its_selector_returns_the_lines_removed() {
    use crate::cut::check::{assert_rules, captures, first_lines, lines, read, rooms};
    let mut cut_captures = 0;
    for (name, input) in captures("paths-") {
        let Some(output) = holds(&input) else {
            continue;
        };
        let original = Payload::text_only(&input);
        if name.ends_with("-ls-R.txt") {
            assert_eq!(Paths.cut(original, &output, 1_000), None, "{name}");
            continue;
        }
        cut_captures += 1;
        for room in rooms(&output) {
            let cut = Paths.cut(original, &output, room).expect(&name);
            assert_rules(&output, &cut, room, &name);
            let marker = read(&cut.marker, ("path", "paths"));
            let kept = &output[..cut.kept];
            let at = format!("{name}, room {room}: {}", cut.marker);
            let all = input.lines().count();
            assert_eq!((marker.to, marker.total), (all, all), "{at}");
            assert_eq!(marker.removed, marker.to - marker.from + 1, "{at}");
            // The kept lines expand to the original's first lines: a directory line left
            // without a line under it would read as an entry, a path of its own.
            let shown = if kept.is_empty() {
                String::new()
            } else {
                Paths.expand(kept).expect(&at)
            };
            assert_eq!(shown, first_lines(&input, marker.from - 1), "{at}");
            let removed = lines(&input, marker.from, marker.to);
            assert_eq!(format!("{shown}{removed}"), input, "{at}");
            if room >= 2_000 {
                assert!(!kept.is_empty(), "{at}");
            }
        }
    }
    assert!(cut_captures >= 4, "{cut_captures} captures made trees");
}

#[test]
fn a_directory_line_is_kept_with_its_first_line_or_not_at_all() {
    let input: String = (0..30)
        .map(|i| {
            format!(
                "./a_directory_with_a_long_name/sub_{}/file_{i}.rs\n",
                i / 10
            )
        })
        .collect();
    let output = holds(&input).unwrap();
    assert!(output.starts_with("./a_directory_with_a_long_name/\n  sub_0/\n    file_0.rs"));
    let original = Payload::text_only(&input);
    let cost = |text: &str| parrot_codec_api::json_string_chars(text);
    // The first unit: both directory lines and the line of entries under them.
    let first_unit: usize = output.split_inclusive('\n').take(3).map(str::len).sum();
    let after_first = "[\u{2026} cut at max_result_chars: 20 of 30 paths not shown, original \
                       lines 11-30; wm_get_result {\"lines\":\"11-30\"}]";
    let nothing = "[\u{2026} cut at max_result_chars: 30 of 30 paths not shown, original lines \
                   1-30; wm_get_result {\"lines\":\"1-30\"}]";
    let just = cost(&output[..first_unit]) + cost(after_first);
    for (room, kept, marker) in [
        (0, 0, nothing),
        (just - 1, 0, nothing),
        (just, first_unit, after_first),
    ] {
        let cut = Paths.cut(original, &output, room).unwrap();
        assert_eq!(
            (cut.kept, cut.marker.as_str()),
            (kept, marker),
            "room {room}"
        );
    }
}

#[test]
fn a_text_that_is_not_the_codecs_tree_of_the_original_is_not_cut_by_its_grammar() {
    let input = "./src/lib.rs\n./src/main.rs\n./src/parser/mod.rs\n./src/parser/lexer.rs\n";
    let output = holds(input).unwrap();
    let other = "./src/lib.rs\n./src/main.rs\n./src/parser/mod.rs\n./src/parser/other.rs\n";
    let cases = [
        (
            "another original",
            Payload::text_only(other),
            output.as_str(),
        ),
        ("a JSON original", Payload::json(input), output.as_str()),
        ("an empty output", Payload::text_only(input), ""),
        (
            "a line dropped",
            Payload::text_only(input),
            output.split_once('\n').unwrap().1,
        ),
    ];
    for (name, original, text) in cases {
        assert_eq!(Paths.cut(original, text, 30), None, "{name}");
    }
}

#[test]
fn a_cut_of_generated_listings_keeps_the_rules_and_never_panics() {
    let mut rng = Rng(0x5EED_0048);
    let mut cut_outputs = 0;
    for _ in 0..300 {
        let input = listing(&mut rng);
        let Some(output) = holds(&input) else {
            continue;
        };
        cut_outputs += 1;
        let original = Payload::text_only(&input);
        crate::cut::check::assert_cuts_hold(&input, &output, ("path", "paths"), |text, room| {
            Paths.cut(original, text, room)
        });
    }
    assert!(cut_outputs >= 100, "{cut_outputs} outputs");
}
