//! `parrot-compress recover KEY` with selectors, run as a person runs it: the corpus build log
//! and query result compressed by the command into a project's store, then each selector's
//! output held to an independent slice of the original file (`str::lines` for lines and grep,
//! serde_json for pointer and rows), and each bad selector to one line on stderr and exit 2.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(name)
}

fn run(project: &Path, args: &[&str], input: Option<&[u8]>) -> Output {
    support::run_in(project, args, input.unwrap_or_default())
}

fn stdout(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A project whose `sql_query` results get the lossy `columnar` summary, with the build log
/// (default entry: the log codec) and the query result compressed into its store; their keys.
fn project() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".parrot")).unwrap();
    std::fs::write(
        dir.path().join(".parrot/compressors.toml"),
        "[compressor.sql_query]\ncodec = \"columnar\"\nlevel = \"aggressive\"\n",
    )
    .unwrap();
    let key = |tool: &str, file: &str| -> String {
        let path = corpus(file);
        let out = run(
            dir.path(),
            &["compress", "--tool", tool, path.to_str().unwrap()],
            None,
        );
        crate::support::pointed(&stdout(&out))
            .expect("a pointer")
            .key
    };
    let log = key("shell_cargo_build", "build-log.txt");
    let query = key("sql_query", "query-500x12.json");
    (dir, log, query)
}

/// The output without its header line, after checking the header names the key.
fn body<'a>(text: &'a str, key: &str) -> &'a str {
    let (header, rest) = text.split_once('\n').unwrap();
    assert!(
        header.starts_with(&format!("[wm_get_result {{\"key\":\"{key}\"")),
        "{header}"
    );
    rest
}

#[test]
fn each_selector_matches_an_independent_slice_of_the_original() {
    let (dir, log_key, query_key) = project();
    let log = std::fs::read_to_string(corpus("build-log.txt")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let recover = |key: &str, flags: &[&str]| {
        let mut args = vec!["recover", key];
        args.extend_from_slice(flags);
        stdout(&run(dir.path(), &args, None))
    };

    let out = recover(&log_key, &["--lines", "4095-4105"]);
    let expected: String = lines[4094..4105].iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(body(&out, &log_key), expected);

    let out = recover(&log_key, &["--lines", "-3"]);
    let expected: String = lines[lines.len() - 3..]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(body(&out, &log_key), expected);

    let out = recover(&log_key, &["--grep", r"^error\[E\d+\]", "--context", "1"]);
    let at = lines.iter().position(|l| l.starts_with("error[")).unwrap();
    let expected = format!(
        "[1 matching line in lines 1-{}]\n{}-{}\n{}:{}\n{}-{}\n",
        lines.len(),
        at,
        lines[at - 1],
        at + 1,
        lines[at],
        at + 2,
        lines[at + 1]
    );
    assert_eq!(body(&out, &log_key), expected);

    let query: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus("query-500x12.json")).unwrap())
            .unwrap();
    let out = recover(&query_key, &["--pointer", "/rows/17"]);
    let value: Value = serde_json::from_str(body(&out, &query_key)).unwrap();
    assert_eq!(Some(&value), query.pointer("/rows/17"));

    // Rows come back as the entry's codec writes a table (columnar); rebuilt here from its
    // columns, rows and constants.
    let out = recover(&query_key, &["--rows", "40-59"]);
    let rest = body(&out, &query_key);
    let (note, table) = rest.split_once('\n').unwrap();
    assert_eq!(note, "[rows 40-59 of 500 at /rows]");
    let table: Value = serde_json::from_str(table).unwrap();
    let columns = table["columns"].as_array().unwrap();
    let rebuilt: Vec<Value> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut object = serde_json::Map::new();
            for (name, cell) in columns.iter().zip(row.as_array().unwrap()) {
                object.insert(name.as_str().unwrap().to_owned(), cell.clone());
            }
            for (name, constant) in table["constants"].as_object().unwrap() {
                object.insert(name.clone(), constant.clone());
            }
            Value::Object(object)
        })
        .collect();
    assert_eq!(
        rebuilt.as_slice(),
        &query["rows"].as_array().unwrap()[40..60]
    );
}

#[test]
fn a_cut_part_names_the_command_that_returns_the_next() {
    let (dir, log_key, _) = project();
    let out = stdout(&run(
        dir.path(),
        &["recover", &log_key, "--lines", "10-", "--max-chars", "500"],
        None,
    ));
    let last = out.lines().last().unwrap();
    let next = last
        .strip_prefix("[more: parrot-compress ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{out}"));
    let args: Vec<&str> = next.split(' ').collect();
    assert_eq!(args[..2], ["recover", log_key.as_str()]);
    assert_eq!(args[2], "--lines");
    let following = stdout(&run(dir.path(), &args, None));
    let first_line: usize = args[3].trim_end_matches('-').parse().unwrap();
    let log = std::fs::read_to_string(corpus("build-log.txt")).unwrap();
    let expected = log.lines().nth(first_line - 1).unwrap();
    assert_eq!(following.lines().nth(1), Some(expected));
}

#[test]
fn a_bad_selector_is_one_line_naming_it_and_exit_2() {
    let (dir, log_key, query_key) = project();
    let cases: [(&str, &[&str], &str); 7] = [
        (
            &log_key,
            &["--lines", "12-x"],
            "error: selector \"lines\": \"12-x\" is not a range",
        ),
        (
            &log_key,
            &["--lines", "6003-"],
            "error: selector \"lines\": \"6003-\" starts past the end: there are 6002 lines (1-6002)",
        ),
        (
            &log_key,
            &["--grep", "a(b"],
            "error: selector \"grep\": \"a(b\" is not a valid regular expression",
        ),
        (
            &log_key,
            &["--pointer", "/rows/1"],
            "error: selector \"pointer\": the original is text, not JSON",
        ),
        (
            &log_key,
            &["--context", "2"],
            "error: selector \"context\": needs grep",
        ),
        (
            &query_key,
            &["--rows", "490-500"],
            "error: selector \"rows\": \"490-500\" ends past the end: there are 500 elements (0-499)",
        ),
        (
            &query_key,
            &["--max-chars", "many"],
            "error: selector \"max_chars\": expected a non-negative integer, got \"many\"",
        ),
    ];
    for (key, flags, start) in cases {
        let mut args = vec!["recover", key];
        args.extend_from_slice(flags);
        let out = run(dir.path(), &args, None);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.starts_with(start), "{flags:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(out.stdout.is_empty());
    }
    let out = run(dir.path(), &["recover", "nope", "--lines", "1-2"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: no original is stored under \"nope\"\n"
    );
}

#[test]
fn a_retrieval_sent_back_through_compress_comes_out_unchanged() {
    let (dir, log_key, _) = project();
    let part = run(dir.path(), &["recover", &log_key, "--lines", "1-400"], None);
    let part = stdout(&part);
    let again = run(
        dir.path(),
        &["compress", "--tool", "shell_cargo_build", "--meta"],
        Some(part.as_bytes()),
    );
    assert_eq!(stdout(&again), part);
    let meta: Value = serde_json::from_slice(&again.stderr).unwrap();
    assert_eq!(meta["compression_skipped"], "already_compressed", "{meta}");
}

/// `--context` of 2^64 − 1, or a number past what usize holds, shows the match with every line
/// of the range around it: the group's end saturates instead of wrapping before the match.
#[test]
fn the_largest_context_shows_the_match_with_the_lines_around_it() {
    let (dir, log_key, _) = project();
    let log = std::fs::read_to_string(corpus("build-log.txt")).unwrap();
    let n = log.lines().position(|l| l.starts_with("error[")).unwrap() + 1;
    let expected: String = log
        .lines()
        .enumerate()
        .skip(n - 3)
        .take(5)
        .map(|(i, line)| format!("{}{}{line}\n", i + 1, if i + 1 == n { ':' } else { '-' }))
        .collect();
    let range = format!("{}-{}", n - 2, n + 2);
    for context in ["18446744073709551615", "18446744073709551616"] {
        let out = run(
            dir.path(),
            &[
                "recover",
                &log_key,
                "--lines",
                &range,
                "--grep",
                r"^error\[",
                "--context",
                context,
            ],
            None,
        );
        let text = stdout(&out);
        let body = body(&text, &log_key);
        assert_eq!(
            body,
            format!("[1 matching line in lines {range}]\n{expected}"),
            "--context {context}"
        );
    }
}

/// An original stored in a namespace (as `serve` stores a client's, by its API key) is read
/// with `--namespace`, the one `parrot-compress namespace` computes from the key: not without
/// it, nor in another namespace; a cut part's continuation names the namespace; a bad name is
/// a usage error naming it.
#[test]
fn recover_namespace_reads_a_scoped_original_and_only_that() {
    use parrot_host::{Namespace, Retention, TeeStore};
    use parrot_tee_sqlite::SqliteTeeStore;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".parrot")).unwrap();
    let log = std::fs::read_to_string(corpus("build-log.txt")).unwrap();
    let key = "__tee__:shell_cargo_build:0123456789ab";
    let out = support::run_in_with(
        dir.path(),
        &["namespace", "--env", "CLIENT_KEY"],
        b"",
        &[("CLIENT_KEY", "sk-ant-client-a")],
    );
    let namespace = stdout(&out).trim().to_owned();
    assert_eq!(
        namespace,
        Namespace::of_secret(b"sk-ant-client-a").as_str(),
        "the proxy's namespace of that key"
    );
    assert_eq!(
        stdout(&run(dir.path(), &["namespace"], Some(b"sk-ant-client-a\n"))).trim(),
        namespace,
        "the same from stdin"
    );
    let scoped = Namespace::new(&namespace).unwrap().scoped_key(key);
    SqliteTeeStore::open(dir.path().join(".parrot/tee.db"), Retention::default())
        .unwrap()
        .put(&scoped, log.as_bytes())
        .unwrap();

    assert_eq!(
        stdout(&run(
            dir.path(),
            &["recover", "--namespace", &namespace, key],
            None
        )),
        log
    );
    let unscoped = run(dir.path(), &["recover", key], None);
    assert_eq!(unscoped.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&unscoped.stderr),
        format!("error: no original is stored under \"{key}\"\n")
    );
    let other = run(
        dir.path(),
        &["recover", "--namespace", "other", key, "--lines", "1"],
        None,
    );
    assert_eq!(other.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&other.stderr),
        format!("error: no original is stored under \"{key}\" in namespace \"other\"\n")
    );

    let part = stdout(&run(
        dir.path(),
        &[
            "recover",
            "--namespace",
            &namespace,
            key,
            "--lines",
            "10-",
            "--max-chars",
            "500",
        ],
        None,
    ));
    let next = part
        .lines()
        .last()
        .and_then(|last| last.strip_prefix("[more: parrot-compress "))
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{part}"));
    let args: Vec<&str> = next.split(' ').collect();
    assert_eq!(
        args[..4],
        ["recover", "--namespace", namespace.as_str(), key]
    );
    let following = stdout(&run(dir.path(), &args, None));
    let first_line: usize = args[5].trim_end_matches('-').parse().unwrap();
    assert_eq!(
        following.lines().nth(1),
        log.lines().nth(first_line - 1),
        "the continuation reads the next lines"
    );

    let bad = run(dir.path(), &["recover", "--namespace", "a/b", key], None);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains(
            "namespace \"a/b\": character '/' at byte 1 is not allowed (only A-Z a-z 0-9 . _ -)"
        ),
        "{stderr}"
    );
}

/// The review's finding (issue 47): `recover <namespace>/<key>` without `--namespace` read the
/// namespace's original, stored under exactly that name. Now it is a usage error naming the
/// flag that reads it, with or without a selector, and prints nothing of the original.
#[test]
fn recover_of_a_key_naming_a_namespace_asks_for_namespace() {
    use parrot_host::{Namespace, Retention, TeeStore};
    use parrot_tee_sqlite::SqliteTeeStore;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".parrot")).unwrap();
    let log = std::fs::read_to_string(corpus("build-log.txt")).unwrap();
    let key = "__tee__:shell_cargo_build:0123456789ab";
    let alice = Namespace::new("alice").unwrap();
    SqliteTeeStore::open(dir.path().join(".parrot/tee.db"), Retention::default())
        .unwrap()
        .put(&alice.scoped_key(key), log.as_bytes())
        .unwrap();
    let named = format!("alice/{key}");
    for selector in [&[][..], &["--lines", "1-3"][..]] {
        let args = [&["recover", named.as_str()][..], selector].concat();
        let out = run(dir.path(), &args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "nothing of alice's original");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "error: key \"{named}\" names namespace \"alice\": without --namespace, recover \
                 reads only originals of no namespace; run `parrot-compress recover --namespace \
                 alice {key}`\n"
            ),
        );
    }
    assert_eq!(
        stdout(&run(
            dir.path(),
            &["recover", "--namespace", "alice", key],
            None
        )),
        log,
        "the command it names reads it"
    );
}

/// A key copied with a slip (its last character lost, two swapped) is not found, and the
/// message names the key the store holds nearest it; in a namespace, only that namespace's
/// keys are offered. A key far from every stored one gets the plain message.
#[test]
fn recover_of_a_slipped_key_suggests_the_stored_one() {
    use parrot_host::{Namespace, Retention, TeeStore};
    use parrot_tee_sqlite::SqliteTeeStore;
    let dir = tempfile::tempdir().unwrap();
    let key = "__tee__:shell_cargo_build:0123456789ab";
    let team = Namespace::new("team-a").unwrap();
    let store =
        SqliteTeeStore::open(dir.path().join(".parrot/tee.db"), Retention::default()).unwrap();
    store.put(key, b"plain").unwrap();
    store
        .put(&team.scoped_key("__tee__:grep:00aa11bb22cc"), b"scoped")
        .unwrap();
    drop(store);

    let cases: [(&[&str], &str); 4] = [
        (
            &["recover", "__tee__:shell_cargo_build:0123456789a"],
            "error: no original is stored under \"__tee__:shell_cargo_build:0123456789a\"; did you \
             mean \"__tee__:shell_cargo_build:0123456789ab\"?\n",
        ),
        (
            &[
                "recover",
                "__tee__:shell_cargo_build:0123456789ba",
                "--lines",
                "1",
            ],
            "error: no original is stored under \"__tee__:shell_cargo_build:0123456789ba\"; did you \
             mean \"__tee__:shell_cargo_build:0123456789ab\"?\n",
        ),
        (
            &[
                "recover",
                "--namespace",
                "team-a",
                "__tee__:grep:00aa11bb22c",
            ],
            "error: no original is stored under \"__tee__:grep:00aa11bb22c\" in namespace \
             \"team-a\"; did you mean \"__tee__:grep:00aa11bb22cc\"?\n",
        ),
        (
            &["recover", "__tee__:grep:00aa11bb22c"],
            "error: no original is stored under \"__tee__:grep:00aa11bb22c\"\n",
        ),
    ];
    for (args, message) in cases {
        let out = run(dir.path(), args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), message, "{args:?}");
        assert!(out.stdout.is_empty());
    }
}
