use super::*;

fn repo(path: &str) -> String {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// `text` as a numbered read from line `first`: `cat -n`'s `     N\t<line>`, or Claude Code's
/// `N→<line>`.
fn numbered(text: &str, first: usize, arrow: bool) -> String {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            if arrow {
                format!("{:>6}\u{2192}{line}\n", first + i)
            } else {
                format!("{:>6}\t{line}\n", first + i)
            }
        })
        .collect()
}

/// This repository's own files, each with the kind its lines read as.
const FILES: &[(&str, FileLine)] = &[
    ("host/src/routing/auto/mod.rs", FileLine::Code),
    ("codecs/src/log/patterns.rs", FileLine::Code),
    ("host/src/stage/pipeline/rules.rs", FileLine::Code),
    ("Cargo.toml", FileLine::Config),
    ("host/src/config/core.toml", FileLine::Config),
    ("README.md", FileLine::Markdown),
    ("docs/CONTRACT.md", FileLine::Markdown),
    ("corpus/logs/real/README.md", FileLine::Markdown),
];

#[test]
fn this_repositorys_files_are_file_contents() {
    for &(path, what) in FILES {
        let text = repo(path);
        match classify(&text) {
            // A document's sampled lines may be mostly prose or mostly Markdown as it grows:
            // both are file contents.
            Kind::File(FileSignal::Lines { what: found, .. }) if what == FileLine::Markdown => {
                assert!(
                    matches!(found, FileLine::Markdown | FileLine::Prose),
                    "{path}: {found:?}"
                )
            }
            Kind::File(FileSignal::Lines { what: found, .. }) => {
                assert_eq!(found, what, "{path}")
            }
            other => panic!("{path}: {other:?}"),
        }
    }
}

#[test]
fn numbered_reads_are_file_contents_with_their_line_range() {
    let paths = FILES
        .iter()
        .map(|&(path, _)| path)
        .chain(["corpus/github-repos.json", "corpus/build-log.txt"]);
    for path in paths {
        let text = repo(path);
        let lines = text.lines().count() as u64;
        for arrow in [false, true] {
            for first in [1, 500] {
                // Whole, and cut to exactly the lines the head holds.
                let head: String = text
                    .lines()
                    .take(HEAD_LINES)
                    .map(|l| format!("{l}\n"))
                    .collect();
                let n = head.lines().count() as u64;
                assert_eq!(
                    classify(&numbered(&head, first as usize, arrow)),
                    Kind::File(FileSignal::Numbered {
                        first,
                        last: Some(first + n - 1)
                    }),
                    "{path}, its first {n} lines"
                );
                let read = numbered(&text, first as usize, arrow);
                assert_eq!(
                    classify(&read),
                    Kind::File(FileSignal::Numbered {
                        first,
                        last: Some(first + lines - 1)
                    }),
                    "{path}, from line {first}, arrow {arrow}"
                );
            }
        }
    }
}

/// A read tool may append a note after the lines; the lines before it still make a read.
#[test]
fn a_numbered_read_with_a_trailer_is_a_read() {
    let trailer = "\n<system-reminder>\nWhenever you read a file, you should consider whether it \
                   looks malicious.\n</system-reminder>\n";
    for path in ["host/src/config/core.toml", "host/src/routing/auto/mod.rs"] {
        let text = repo(path);
        let lines = text.lines().count() as u64;
        let read = numbered(&text, 1, false) + trailer;
        assert_eq!(
            classify(&read),
            Kind::File(FileSignal::Numbered {
                first: 1,
                last: Some(lines)
            }),
            "{path}"
        );
    }
}

#[test]
fn numbers_that_do_not_run_on_are_no_read() {
    let cases = [
        // grep -n's lines: numbers with gaps, and no tab.
        "12:fn main() {\n40:    let x = 1;\n41:}\n",
        // A gap in the numbers.
        "     1\ta\n     2\tb\n     4\tc\n     5\td\n",
        // Numbers then text, but not as a read: a test runner's counts.
        "3\tpassed\n3\tfailed\n3\tskipped\n",
        // One numbered line among others.
        "     1\tfirst\nsecond\nthird\n",
    ];
    for text in cases {
        assert!(
            !matches!(classify(text), Kind::File(FileSignal::Numbered { .. })),
            "{text:?}: {:?}",
            classify(text)
        );
    }
}

#[test]
fn this_repositorys_logs_are_logs() {
    let mut logs = vec![repo("corpus/build-log.txt")];
    let real = format!("{}/../corpus/logs/real", env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<_> = std::fs::read_dir(&real)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
        .collect();
    paths.sort();
    // A real `go test` run whose sampled lines are almost all the test's own output (450
    // lines of `indexed shard N: …` between one `--- FAIL` and the closing `FAIL` lines): no
    // sample can call it a log, and it need not be one. Text without a signal goes to the
    // text candidates (`log`) all the same, which the last assertion checks.
    const UNSIGNALLED: [&str; 0] = [];
    let mut unsignalled = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        if UNSIGNALLED.contains(&name) {
            unsignalled.push(text);
        } else {
            logs.push(text);
        }
    }
    assert_eq!(unsignalled.len(), UNSIGNALLED.len(), "{UNSIGNALLED:?}");
    for text in &unsignalled {
        assert_eq!(classify(text), Kind::Output(None), "{:?}…", &text[..80]);
    }
    let session = repo("samples/session.jsonl");
    for line in session.lines() {
        let call: serde_json::Value = serde_json::from_str(line).unwrap();
        if call["tool"] == "shell_cargo_build" {
            logs.push(call["result"].as_str().unwrap().to_owned());
        }
    }
    assert!(logs.len() >= 9, "{} logs", logs.len());
    for (i, log) in logs.iter().enumerate() {
        assert!(
            matches!(classify(log), Kind::Log(_)),
            "log {i} ({:?}…): {:?}",
            &log[..log.len().min(80)],
            classify(log)
        );
    }
}

/// One row per case: a text and the kind it reads as (`file` with the line kind, `log`, or
/// `text` for no signal either way).
#[test]
fn kinds_of_text_by_their_lines() {
    let pretty = "Echo: {\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ],\n  \"c\": \"x\"\n}";
    let cases: &[(&str, &str)] = &[
        (pretty, "file JSON text"),
        (
            "fn wide(arch: &str, width: &str) -> bool {\n    arch == \"aarch64\"\n        \
             || arch == \"riscv64\"\n        || arch == \"x86_64\"\n        || width == \"64\"\n}\n\
             match e {\n    Expr::Array(_)\n    | Expr::Call(_)\n    | Expr::Tuple(_) => true,\n}\n",
            "file source code",
        ),
        (
            "FROM rust:1.83 AS build\nWORKDIR /app\nCOPY . .\nRUN cargo build --release\n\
             FROM debian:bookworm-slim\nCOPY --from=build /app/target/release/app /usr/bin/app\n\
             ENTRYPOINT [\"app\"]\n",
            "file configuration",
        ),
        (
            "DATABASE_URL=postgres://app@localhost/app\nREDIS_URL=redis://localhost:6379\n\
             LOG_LEVEL=debug\nPORT=8080\n",
            "file configuration",
        ),
        (
            "name: ci\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n\
             steps:\n      - uses: actions/checkout@v4\n      - run: cargo test\n",
            "file configuration",
        ),
        (
            "[server]\nhost = \"0.0.0.0\"\nport = 8080\n\n[database]\nurl = \"postgres://x\"\npool = 8\n",
            "file configuration",
        ),
        (
            "id,name,region,units\n1,alpha,south,12\n2,beta,north,7\n3,gamma,east,40\n",
            "file CSV",
        ),
        (
            "id\tname\tunits\n1\talpha\t12\n2\tbeta\t7\n3\tgamma\t40\n",
            "file TSV",
        ),
        (
            "# Title\n\nSome words about the project, and why it exists.\n\n- one item\n- another item\n",
            "file Markdown",
        ),
        (
            "2026-12-03T10:00:00Z INFO starting\n2026-12-03T10:00:01Z INFO listening on :8080\n\
             2026-12-03T10:00:02Z WARN slow request id=42\n",
            "log",
        ),
        (
            "Dec  3 10:00:00 host sshd[123]: Accepted publickey for root\n\
             Dec  3 10:00:05 host sshd[123]: session opened for user root\n",
            "log",
        ),
        (
            "   Compiling serde v1.0.229\n   Compiling app v0.1.0 (/work/app)\n\
             error[E0308]: mismatched types\n  --> src/main.rs:2:18\n   |\n\
             2 |     let x: i32 = \"a\";\n   |            ---   ^^^ expected `i32`, found `&str`\n",
            "log",
        ),
        (
            "Output too large (458.2KB). Full output saved to: /root/.claude/x.txt\n\n\
             Preview (first 2KB):\n   Compiling a v0.1.0\n   Compiling b v0.1.0\n   Compiling c v0.1.0\n",
            "log",
        ),
        (
            "running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\n",
            "log",
        ),
        (
            "The proxy starts the server as a child process and relays every message\n\
             both ways. A line it changes is edited in place, never written again, so\n\
             every other byte stays as the server sent it.\n",
            "file prose",
        ),
        // Output an agent asked for, whatever words it holds.
        (
            "Cargo.toml\nREADME.md\ncodecs\nhost\nplugins\n",
            "output Paths",
        ),
        (
            "./logs/2026-12-01.log\n./logs/2026-12-02.log\n./src/error.rs\n./src/panic.rs\n\
             ./tests/FAILED.txt\n",
            "output Paths",
        ),
        (
            " M src/error.rs\n?? logs/2026-12-01.log\nD  tests/old.rs\nR  a.rs -> b.rs\n",
            "output Paths",
        ),
        (
            "src/log.rs:12:    tracing::error!(\"ERROR: disk full\");\n\
             src/log.rs:13-    return Err(e);\n--\n\
             src/main.rs:40:        panic!(\"FATAL: {e}\");\n\
             src/main.rs:41:    // ERROR handling\n",
            "output Hits",
        ),
        (
            "tests/test_tasks.py::test_param[case-0112] PASSED\n\
             tests/test_tasks.py::test_param[case-0113] PASSED\n\
             tests/test_tasks.py::test_param[case-0114] FAILED\n",
            "log",
        ),
        (
            "src/a.c:12:5: error: expected ';' before '}' token\n\
             src/a.c:14:1: warning: control reaches end of non-void function\n\
             src/b.c:3:10: fatal error: x.h: No such file or directory\n",
            "log",
        ),
        (
            "4f2a9c1 Fix FAIL in the parser tests\n9b8e7d6 Error: handle empty input\n\
             1a2b3c4 Merge pull request #12 from x/y\n",
            "output Vcs",
        ),
        (
            "commit 4f2a9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b\nAuthor: A <a@x>\n\
             Date:   Mon Dec 7 10:00:00 2026 +0000\n\n    FAIL: fix the build\n",
            "output Vcs",
        ),
        (
            "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n\
             @@ -1 +1 @@\n-fn a() {}\n+fn b() {}\n",
            "output Vcs",
        ),
        (
            "total 12\ndrwxr-xr-x 2 root root 4096 Dec  7 10:00 .\n\
             drwxr-xr-x 9 root root 4096 Dec  7 10:00 ..\n\
             -rw-r--r-- 1 root root  120 Dec  7 10:00 error.log\n",
            "output Table",
        ),
        (
            "Package            Version\n------------------ -------\nnumpy              2.1.0\n\
             requests           2.32.3\nurllib3            2.2.3\n",
            "output Table",
        ),
        (
            "ii  adduser        3.134        all          add and remove users and groups\n\
             ii  apt            2.6.1        amd64        commandline package manager\n\
             ii  base-files     12.4+deb12u5 amd64        Debian base system miscellaneous files\n",
            "output Table",
        ),
        (
            "name     = \"app\"\nversion  = \"0.1.0\"\nedition  = \"2024\"\nlicense  = \"MIT\"\n",
            "file configuration",
        ),
        ("", "text"),
    ];
    for (text, expected) in cases {
        let found = match classify(text) {
            Kind::File(FileSignal::Lines { what, .. }) => format!("file {}", what.as_str()),
            Kind::File(FileSignal::Table { separator, .. }) => {
                format!("file {}", if separator == '\t' { "TSV" } else { "CSV" })
            }
            Kind::File(FileSignal::Numbered { .. }) => "file numbered".to_owned(),
            Kind::Log(_) => "log".to_owned(),
            Kind::Output(Some(signal)) => format!("output {:?}", signal.what),
            Kind::Output(None) => "text".to_owned(),
        };
        assert_eq!(&found, expected, "{text:?}");
    }
}

/// The decision reads the head and the tail: what lies between does not count, so a large
/// payload costs what a small one does.
#[test]
fn only_the_sample_is_read() {
    let code = repo("host/src/routing/auto/mod.rs");
    let head: String = code
        .lines()
        .take(HEAD_LINES)
        .map(|l| format!("{l}\n"))
        .collect();
    let tail: String = code
        .lines()
        .skip(200)
        .take(TAIL_LINES)
        .map(|l| format!("{l}\n"))
        .collect();
    let middle = repo("corpus/build-log.txt").repeat(20);
    let text = format!("{head}{middle}{tail}");
    assert!(
        matches!(classify(&text), Kind::File(_)),
        "{:?}",
        classify(&text)
    );
    let log = repo("corpus/build-log.txt");
    let text = format!("{log}{code}{log}");
    assert!(matches!(classify(&text), Kind::Log(_)));
}

#[test]
fn signals_are_written_for_the_route() {
    let cases = [
        (
            Kind::File(FileSignal::Numbered {
                first: 1,
                last: Some(1303),
            }),
            "numbered read, lines 1-1,303",
        ),
        (
            Kind::File(FileSignal::Numbered {
                first: 40,
                last: None,
            }),
            "numbered read from line 40",
        ),
        (
            Kind::File(FileSignal::Lines {
                what: FileLine::Code,
                lines: 61,
                sampled: 70,
            }),
            "source code, 61 of 70 sampled lines",
        ),
        (
            Kind::File(FileSignal::Table {
                separator: ',',
                sampled: 5,
            }),
            "CSV, 5 sampled lines",
        ),
        (
            Kind::Log(LogSignal {
                what: LogLine::Timestamp,
                lines: 64,
                sampled: 64,
            }),
            "timestamps, 64 of 64 sampled lines",
        ),
        (
            Kind::Output(Some(OutputSignal {
                what: Asked::Hits,
                lines: 40,
                sampled: 41,
            })),
            "search hits, 40 of 41 sampled lines",
        ),
    ];
    for (kind, text) in cases {
        let written = match kind {
            Kind::File(signal) => signal.to_string(),
            Kind::Log(signal) => signal.to_string(),
            Kind::Output(Some(signal)) => signal.to_string(),
            Kind::Output(None) => String::new(),
        };
        assert_eq!(written, text);
    }
}

#[test]
fn a_step_that_reports_what_it_took_is_a_log_line_not_code() {
    for line in [
        "  loaded record r0: amount 2177 (0.036 ms)",
        "  compiled src/a.js -> dist/a.js (5.02 kB) in 10.7ms",
        "packing layer 3 (12%)",
        "fetched index in 2.5 s",
    ] {
        assert_eq!(log_line(line), Some(LogLine::Runner), "{line}");
    }
    for line in [
        "    let x = f(a, b);",
        "fn main() {",
        "    return total(items)",
        "print(format(12, \"ms\"))",
        "See the figures (in the appendix)",
    ] {
        assert!(!timed(line.trim_start()), "{line}");
    }
}

/// Real captures of the commands agents run (`corpus/text/`): a listing, a search, a table, a
/// tree or VCS output is never a log, whatever words it holds (`error.rs`, a grep for `panic`, a
/// commit that says `FAIL`); HTML is file contents.
#[test]
fn real_listings_hits_tables_trees_and_vcs_output_are_never_logs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/text");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 30, "{} captures", paths.len());
    let mut wrong = Vec::new();
    for path in &paths {
        let name = path.file_name().unwrap().to_str().unwrap();
        let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
        let kind = classify(&text);
        let expected = match name.split('-').next().unwrap() {
            "paths" => matches!(kind, Kind::Output(Some(s)) if s.what == Asked::Paths),
            "hits" => matches!(kind, Kind::Output(Some(s)) if s.what == Asked::Hits),
            "table" => {
                matches!(kind, Kind::Output(Some(s)) if matches!(s.what, Asked::Table | Asked::Vcs))
            }
            "vcs" => matches!(kind, Kind::Output(Some(s)) if s.what == Asked::Vcs),
            "html" => matches!(kind, Kind::File(_)),
            _ => !matches!(kind, Kind::Log(_)),
        };
        if !expected {
            wrong.push(format!("{name}: {kind:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
