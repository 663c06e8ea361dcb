//! The commands README.md and docs/GUIDE.md show, run as written, and their links resolved.
//!
//! The convention the documents follow: a fenced block whose info string is exactly `sh` is
//! run, each command (a line, with `\` continuations joined; `#` lines skipped) on its own
//! with bash and `pipefail`, in a copy of the repository (so the tee store a command creates
//! lands in the copy), with the command this test binary built first on `PATH` as
//! `parrot-compress`. Each must exit 0. A ```` ```text ```` block right after an `sh` block
//! (nothing but blank lines between) is that block's output, stdout and stderr merged as a
//! terminal shows them, compared modulo figures that vary by machine: decimal numbers not
//! followed by `%` (times such as `compression_duration_ms` and the report's ms columns; the
//! token and byte counts are integers and compared exactly), runs of spaces (the report's
//! column widths follow its times), and the copy's folder, shown as `/path/to/parrot-compress`.
//! An output block may leave out what a reader needs no copy of and what changes whenever a
//! built-in codec is added (the list of built-ins, the routing lists of `host/src/config/core.toml`):
//! `…` stands for any text within a line, and a line of `…` alone for any lines, none included.
//! Blocks with another info string (`sh manual`, for a command that needs a network, a server
//! or a release build) are shown, not run.
//!
//! Two commands are not run as themselves. `cargo run -p parrot-compress -- ARGS` runs the
//! built command with ARGS (a nested `cargo run` would resolve other features and rebuild
//! much of the tree); `cargo xtask test` is skipped, since it runs this test. Any other
//! `cargo` fails the test, saying so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parrot_host::{BreakerConfig, Budgets, Call, Host, Input, MemoryTeeStore, Skip};

use crate::support;

/// How the copy's folder is shown in the documents' output blocks.
const CLONE: &str = "/path/to/parrot-compress";

/// The longest a documented command may take (a debug build on a loaded machine).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Stands in for cargo in the documents' commands; see the module docs.
const CARGO_SHIM: &str = r#"#!/bin/sh
if [ "$1" = run ] && [ "$2" = -p ] && [ "$3" = parrot-compress ] && [ "$4" = -- ]; then
    shift 4
    exec parrot-compress "$@"
fi
echo "readme test: \"cargo $*\" is not run by this test: show it in a sh manual block" >&2
exit 97
"#;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the workspace folder")
}

/// One fenced block of a Markdown file.
struct Block {
    info: String,
    /// The line of the opening fence, 1-based.
    line: usize,
    body: Vec<String>,
    /// Only blank lines stand between the previous block's closing fence and this one.
    follows_previous: bool,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut blank_since_block = false;
    for (index, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (Some(_), Some(rest)) if rest.trim().is_empty() => {
                blocks.push(open.take().expect("an open block"));
                blank_since_block = true;
            }
            (Some(block), _) => block.body.push(line.to_owned()),
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    line: index + 1,
                    body: Vec::new(),
                    follows_previous: blank_since_block,
                });
            }
            (None, None) => blank_since_block &= line.trim().is_empty(),
        }
    }
    assert!(open.is_none(), "a fenced block is never closed");
    blocks
}

/// The commands of an `sh` block: continuations joined, comments and blank lines left out.
fn commands(body: &[String]) -> Vec<String> {
    let mut commands = Vec::new();
    let mut current = String::new();
    for line in body {
        if current.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                commands.push(std::mem::take(&mut current));
            }
        }
    }
    assert!(
        current.is_empty(),
        "a continued command never ends: {current}"
    );
    commands
}

/// A decimal number not followed by `%` becomes `#`, runs of spaces one space, the copy's
/// folder [`CLONE`].
fn normalize(text: &str, root: &Path) -> String {
    let text = text.replace(root.to_str().expect("a UTF-8 temporary path"), CLONE);
    let mut out = String::new();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        let mut masked = String::new();
        while i < chars.len() {
            if chars[i].is_ascii_digit() {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                let run: String = chars[start..i].iter().collect();
                let decimal = run.trim_end_matches('.').contains('.');
                if decimal && chars.get(i) != Some(&'%') {
                    masked.push('#');
                    if run.ends_with('.') {
                        masked.push('.');
                    }
                } else {
                    masked.push_str(&run);
                }
            } else {
                masked.push(chars[i]);
                i += 1;
            }
        }
        let collapsed = masked.split(' ').filter(|w| !w.is_empty());
        out.push_str(&collapsed.collect::<Vec<_>>().join(" "));
        out.push('\n');
    }
    out
}

/// What stands for text the documents leave out of an output block (see the module docs).
const ELLIPSIS: &str = "…";

/// Whether the normalized output block `shown` shows `printed`: equal, but for what `…` leaves
/// out (any text within a line; as a line of its own, any lines).
fn shows(shown: &str, printed: &str) -> bool {
    let shown: Vec<&str> = shown.lines().collect();
    let printed: Vec<&str> = printed.lines().collect();
    // matched[j]: the shown lines so far can stand for the first j printed lines.
    let mut matched = vec![false; printed.len() + 1];
    matched[0] = true;
    for line in shown {
        let mut next = vec![false; printed.len() + 1];
        for j in 0..=printed.len() {
            next[j] = if line == ELLIPSIS {
                matched[j] || (j > 0 && next[j - 1])
            } else {
                j > 0 && matched[j - 1] && line_shows(line, printed[j - 1])
            };
        }
        matched = next;
    }
    matched[printed.len()]
}

/// Whether one shown line stands for one printed line, `…` standing for any text.
fn line_shows(shown: &str, printed: &str) -> bool {
    let mut parts = shown.split(ELLIPSIS);
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = printed.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Copies the repository as a fresh clone has it: no build output, no installed packages, no
/// tee store.
fn copy_tree(from: &Path, to: &Path) {
    const LEFT_OUT: &[&str] = &["target", ".git", "node_modules", ".venv", ".parrot"];
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if LEFT_OUT.iter().any(|left| name == *left) {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(&name));
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// A copy of the repository with `parrot-compress` and the cargo stand-in in a folder of its
/// own, for `PATH`.
struct Clone {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
}

impl Clone {
    fn new() -> Clone {
        let binary = support::binary();
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("parrot-compress");
        copy_tree(&workspace(), &root);
        let bin = base.join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(&binary, bin.join("parrot-compress")).unwrap();
        let cargo = bin.join("cargo");
        std::fs::write(&cargo, CARGO_SHIM).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
        Clone {
            _dir: dir,
            root,
            bin,
        }
    }

    /// Runs one command; its exit status and its output, stderr merged into stdout.
    fn run(&self, command: &str) -> (Option<i32>, String) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.bin.clone()];
        paths.extend(std::env::split_paths(&path));
        let mut child = Command::new("bash")
            .args(["-o", "pipefail", "-c", &format!("exec 2>&1\n{command}")])
            .current_dir(&self.root)
            .env("PATH", std::env::join_paths(paths).unwrap())
            .env("NO_COLOR", "1")
            .env_remove("PARROT_PLUGIN_PATH")
            .env_remove("PARROT_COMPRESSION_DISABLED")
            .env_remove("PARROT_TRUST_PROJECT_PLUGINS")
            .env_remove("PARROT_TEE_REDIS_PASSWORD")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("bash runs");
        let mut stdout = child.stdout.take().expect("a piped stdout");
        let reader = std::thread::spawn(move || {
            let mut text = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut text).map(|_| text)
        });
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{command}: still running after {COMMAND_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = reader.join().unwrap().unwrap();
        (status.code(), String::from_utf8_lossy(&output).into_owned())
    }
}

/// Runs every `sh` block of `doc` (a path from the workspace's root) and checks the output
/// blocks after them; returns how many commands ran.
fn check_document(doc: &str) -> usize {
    let markdown = std::fs::read_to_string(workspace().join(doc)).unwrap();
    let clone = Clone::new();
    let blocks = blocks(&markdown);
    let mut ran = 0;
    let mut failures = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        if block.info != "sh" {
            continue;
        }
        let mut output = String::new();
        for command in commands(&block.body) {
            // It runs this test.
            if command.trim_start().starts_with("cargo xtask test") {
                continue;
            }
            let (status, out) = clone.run(&command);
            ran += 1;
            if status != Some(0) {
                failures.push(format!(
                    "{doc}:{}: `{command}` exited with {status:?}:\n{out}",
                    block.line
                ));
            }
            output.push_str(&out);
        }
        let Some(shown) = blocks.get(index + 1) else {
            continue;
        };
        if shown.info == "text" && shown.follows_previous {
            let expected = normalize(&(shown.body.join("\n") + "\n"), &clone.root);
            let actual = normalize(&output, &clone.root);
            if !shows(&expected, &actual) {
                failures.push(format!(
                    "{doc}:{}: the output of the block at line {} differs from what it shows\n\
                     --- shown (normalized)\n{expected}--- printed (normalized)\n{actual}",
                    shown.line, block.line
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    ran
}

#[test]
fn readme_commands_run_as_written() {
    let ran = check_document("README.md");
    assert!(
        ran >= 8,
        "only {ran} commands found in README.md's sh blocks"
    );
}

#[test]
fn guide_commands_run_as_written() {
    let ran = check_document("docs/GUIDE.md");
    assert!(
        ran >= 10,
        "only {ran} commands found in docs/GUIDE.md's sh blocks"
    );
}

/// The README's library example: a library host passes a 469 KB log through under its
/// budgets, and compresses it with `inline_at_any_size`, as the command does.
#[test]
fn readme_library_example_passes_a_large_log_through_unless_inline_at_any_size() {
    let log = std::fs::read_to_string(workspace().join("corpus/build-log.txt")).unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryTeeStore::default());
    let build = |inline: bool| {
        Host::builder()
            .project(project.path())
            .plugin_path(None)
            .tee_store(store.clone())
            .inline_at_any_size(inline)
            .build()
            .unwrap()
    };

    let out = build(false).process(Call::new("shell_cargo_build", Input::Text(&log)));
    assert_eq!(
        out.meta.skipped,
        Some(Skip::BudgetPassthrough),
        "{:?}",
        out.meta
    );
    assert_eq!(out.text(), Some(log.as_str()));

    let out = build(true).process(Call::new("shell_cargo_build", Input::Text(&log)));
    assert_eq!(out.meta.codec.as_deref(), Some("log"), "{:?}", out.meta);
    assert!(out.meta.compressed && out.meta.teed, "{:?}", out.meta);
    assert!(out.payload.len() < log.len() / 100, "{:?}", out.meta);
}

/// The value of a documented budget, the first words of a table's cell: a count (`1,500`), a
/// size (`256 KB`, `262,144 (256 KiB)`: bytes unless a unit follows) or a time (`3 ms`), as
/// bytes, a count or nanoseconds.
fn documented_value(cell: &str) -> u128 {
    let mut words = cell.split_whitespace();
    let number: u128 = words
        .next()
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap_or_else(|| panic!("no number in \"{cell}\""));
    match words.next() {
        Some("KB" | "KiB") => number * 1024,
        Some("ms") => number * 1_000_000,
        Some("s") => number * 1_000_000_000,
        _ => number,
    }
}

/// The budgets are written once, in `Budgets::default`: the tables of CONTRACT §6 and the
/// GUIDE, and the README's thresholds, show its values.
#[test]
fn the_documented_budgets_are_budgets_default() {
    let budgets = Budgets::default();
    let fields = [
        ("size_threshold_bytes", budgets.size_threshold_bytes as u128),
        ("row_threshold", budgets.row_threshold as u128),
        ("minimal_budget", budgets.minimal_budget.as_nanos()),
        ("inline_budget", budgets.inline_budget.as_nanos()),
        ("executor_budget", budgets.executor_budget.as_nanos()),
    ];
    for doc in ["docs/CONTRACT.md", "docs/GUIDE.md"] {
        let text = std::fs::read_to_string(workspace().join(doc)).unwrap();
        for (field, value) in fields {
            let row = format!("| `{field}` | ");
            let rows: Vec<&str> = text.lines().filter(|l| l.starts_with(&row)).collect();
            assert_eq!(rows.len(), 1, "{doc}: one table row for {field}: {rows:?}");
            let cell = rows[0][row.len()..].split('|').next().unwrap();
            assert_eq!(documented_value(cell), value, "{doc}: {field}: {cell}");
        }
    }
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let thresholds = format!(
        "({} KB, or {} rows)",
        budgets.size_threshold_bytes / 1024,
        thousands(budgets.row_threshold)
    );
    assert!(
        readme.replace('\n', " ").contains(&thresholds),
        "README.md: the router's thresholds {thresholds}"
    );
}

/// The breaker's settings are written once, in `BreakerConfig::default`: CONTRACT §6 and the
/// GUIDE say its window, the windows that open it and its cooldown with its values.
#[test]
fn the_documented_breaker_is_breaker_config_default() {
    let breaker = BreakerConfig::default();
    let window = format!(
        "windows of {} calls or {} s, whichever ends first",
        breaker.window_calls,
        breaker.window_duration.as_secs()
    );
    let minutes = breaker.cooldown.as_secs() / 60;
    assert_eq!(
        breaker.cooldown.as_secs() % 60,
        0,
        "a cooldown of whole minutes"
    );
    let opens = |it: &str| {
        format!(
            "{} consecutive over-budget windows open {it} for {minutes} minutes",
            breaker.windows_to_open
        )
    };
    for (doc, opens) in [
        ("docs/CONTRACT.md", opens("the breaker")),
        ("docs/GUIDE.md", opens("it")),
    ] {
        let text = std::fs::read_to_string(workspace().join(doc)).unwrap();
        // The sentences wrap at any space.
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains(&window), "{doc}: \"{window}\"");
        assert!(text.contains(&opens), "{doc}: \"{opens}\"");
    }
}

/// `n` with a comma between thousands, as the documents write counts.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[test]
fn normalize_masks_times_and_keeps_counts_and_percentages() {
    let root = Path::new("/tmp/x/parrot-compress");
    assert_eq!(
        normalize(
            "a  1,234  76.4%   0.252 v0.1.0 /tmp/x/parrot-compress/.parrot\n",
            root
        ),
        "a 1,234 76.4% # v# /path/to/parrot-compress/.parrot\n"
    );
}

#[test]
fn an_ellipsis_stands_for_any_text_in_a_line_and_a_line_of_it_for_any_lines() {
    let printed = "codecs:\na built-in\nb built-in\nc built-in\nrows: b, a, c (lossless)\nok\n";
    for shown in [
        printed,
        "codecs:\n…\nb built-in\n…\nrows: … (lossless)\nok\n",
        "codecs:\n…\nrows: b, … (…)\n…\nok\n",
        "…\n",
        "codecs:\na built-in\nb built-in\nc built-in\n…\nrows: …\nok\n",
    ] {
        assert!(shows(shown, printed), "{shown}");
    }
    for shown in [
        "codecs:\n…\nrows: … (lossless)\n",
        "codecs:\n…\nd built-in\n…\nok\n",
        "codecs:\n…\nrows: a, … (lossless)\nok\n",
        "codecs:\nb built-in\n…\nok\n",
        "rows: …\n",
        "",
    ] {
        assert!(!shows(shown, printed), "{shown}");
    }
    assert!(shows("", ""));
    assert!(!line_shows("a…a", "a"));
    assert!(line_shows("a…a", "aa"));
}

#[test]
fn blocks_pair_an_output_with_the_block_right_before_it() {
    let doc = "```sh\necho a \\\n  b\n# note\n```\n\n```text\na b\n```\nprose\n```text\nx\n```\n";
    let found = blocks(doc);
    assert_eq!(found.len(), 3);
    assert_eq!(commands(&found[0].body), ["echo a    b"]);
    assert!(found[1].follows_previous);
    assert!(!found[2].follows_previous);
}

/// The anchor GitHub gives a heading: lower case, spaces as `-`, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside fenced blocks).
fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// Every relative link of README.md and docs/GUIDE.md names a file of the repository, and each
/// `#anchor` a heading of it.
#[test]
fn readme_and_guide_links_resolve() {
    let root = workspace();
    let mut broken = Vec::new();
    for doc in ["README.md", "docs/GUIDE.md"] {
        let path = root.join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let target = &rest[..rest.find(')').expect("a link's closing parenthesis")];
            if target.contains("://") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let linked = match file {
                "" => path.clone(),
                file => path.parent().unwrap().join(file),
            };
            let Ok(linked_text) = std::fs::read_to_string(&linked) else {
                broken.push(format!("{doc}: {target}: no such file"));
                continue;
            };
            if !fragment.is_empty() && !anchors(&linked_text).iter().any(|a| a == fragment) {
                broken.push(format!("{doc}: {target}: no such heading"));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn anchors_follow_github() {
    assert_eq!(
        anchor(" 2.8 `auto` (the core default: content-aware routing)"),
        "28-auto-the-core-default-content-aware-routing"
    );
    assert_eq!(
        anchor(" Trusting a project's plugins"),
        "trusting-a-projects-plugins"
    );
}
