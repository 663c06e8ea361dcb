//! The Python package's cost, against yardsticks measured in the same run:
//!
//! - `Host.compress` from Python against the same call in Rust (`Host::process` and the
//!   metadata with its token counts, what `compress` returns), on the generated rows and log of
//!   the other benchmarks at 10 KB and 1 MB, each host set up by `parrot_setup` from the same
//!   settings (a project of its own, its SQLite tee store). The two sides alternate every few
//!   calls: a batch of the Rust call timed in this process, then a batch of the Python call in
//!   an interpreter that stays up between batches (`python/bench/host.py`, asked over a pipe);
//!   each pair's ratio is the two batches' medians, and the figure is the median ratio, so a
//!   drift of the shared machine's speed cancels out. Target: at most 1.2x at 1 MB.
//! - `parrot_codec.columnarize` against ai-parrot's pure-Python transform on about 1 MB of rows
//!   (`python/bench/columnarize.py`: the bytes-in, bytes-out path ai-parrot would otherwise
//!   run: decode, transform, encode).
//!
//! `cargo bench -p parrot-compress-python --bench binding`. It runs `PARROT_PYTHON`, else the
//! interpreter of `python/.venv`, where `cargo xtask bench` (and `cargo xtask test`) install the
//! package built from `python/`; without one, the report says it was not measured, and why.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use parrot_bench_corpus as corpus;
use parrot_host::{Call, Input};
use parrot_setup::Settings;
use serde_json::Value;

/// Pairs of batches of each payload; each batch times `iterations` calls.
const PAIRS: usize = 41;

struct Payload {
    name: String,
    tool: &'static str,
    text: String,
    iterations: usize,
}

fn payloads(quick: bool) -> Vec<Payload> {
    let scale = |n: usize| if quick { (n / 5).max(1) } else { n };
    let rows = (
        "rows",
        "dq_execute_database_query",
        corpus::rows_payload as fn(usize) -> String,
    );
    let log = (
        "log",
        "shell_cargo_build",
        corpus::log_payload as fn(usize) -> String,
    );
    let sizes = [("10 KB", 10 * 1024, 40), ("1 MB", 1024 * 1024, 3)];
    [rows, log]
        .into_iter()
        .flat_map(|(kind, tool, make)| {
            sizes.map(|(size, bytes, iterations)| Payload {
                name: format!("{kind} {size}"),
                tool,
                text: make(bytes),
                iterations: scale(iterations),
            })
        })
        .collect()
}

fn python() -> PathBuf {
    std::env::var_os("PARROT_PYTHON").map_or_else(
        || corpus::workspace_root().join("python/.venv/bin/python"),
        PathBuf::from,
    )
}

/// Why the package cannot be measured with `python`, if it cannot.
fn unusable(python: &Path) -> Option<String> {
    // Run away from `python/`: `-c` puts the working directory first on the import path, and
    // there `parrot_compress` is the source folder, without the built extension.
    let imported = Command::new(python)
        .args(["-c", "import parrot_compress, parrot_codec"])
        .current_dir(std::env::temp_dir())
        .output();
    match imported {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "{} cannot import the package: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(err) => Some(format!("{}: {err}", python.display())),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The median time of one call in Rust, over `iterations` calls.
fn rust_call(host: &parrot_host::Host, payload: &Payload) -> f64 {
    let mut times = Vec::with_capacity(payload.iterations);
    for _ in 0..payload.iterations {
        let start = Instant::now();
        let processed = host.process(Call::new(payload.tool, Input::Text(&payload.text)));
        let meta = processed.meta_json();
        std::hint::black_box((&processed.payload, &meta));
        times.push(start.elapsed().as_nanos() as f64);
    }
    median(times)
}

/// An interpreter running `python/bench/host.py` on one payload: it times batches of the
/// Python call when asked.
struct Interpreter {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl Interpreter {
    fn start(python: &Path, project: &Path, file: &Path, tool: &str) -> Interpreter {
        let script = corpus::workspace_root().join("python/bench/host.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(project)
            .arg(file)
            .arg(tool)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run python/bench/host.py");
        let input = child.stdin.take().expect("its stdin");
        let output = std::io::BufReader::new(child.stdout.take().expect("its stdout"));
        let mut interpreter = Interpreter {
            child,
            input,
            output,
        };
        interpreter.line();
        interpreter
    }

    fn line(&mut self) -> Value {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut self.output, &mut line).expect("host.py's output");
        serde_json::from_str(&line)
            .unwrap_or_else(|err| panic!("python/bench/host.py: {err}: {line:?}"))
    }

    /// The median times of one call from Python with a `str` and with `bytes`, and of
    /// CPython's encoding of the `str`, over `iterations` of each.
    fn batch(&mut self, iterations: usize) -> [f64; 3] {
        use std::io::Write as _;
        writeln!(self.input, "{iterations}").expect("host.py's input");
        self.input.flush().expect("host.py's input");
        let line = self.line();
        ["str_ns", "bytes_ns", "encode_ns"].map(|name| line[name].as_f64().expect(name))
    }
}

impl Drop for Interpreter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binding's table, and its target line.
fn binding(python: &Path, quick: bool) -> (String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut table = String::from(
        "| payload | bytes | codec | Rust `process` | Python, a `str` | ratio | Python, `bytes` | ratio | CPython's `str.encode()` |\n\
         |---|---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut at_1mb = Vec::new();
    for (n, payload) in payloads(quick).iter().enumerate() {
        let file = dir.path().join(format!("payload-{n}"));
        std::fs::write(&file, &payload.text).expect("payload file");
        let (ours, theirs) = (
            dir.path().join(format!("rust-{n}")),
            dir.path().join(format!("py-{n}")),
        );
        std::fs::create_dir_all(&ours).expect("project");
        std::fs::create_dir_all(&theirs).expect("project");
        let settings = Settings {
            project: Some(ours),
            ..Settings::default()
        };
        let host = parrot_setup::build(
            &mut parrot_setup::builder(&settings, true, None).expect("builder"),
        )
        .expect("host");
        let codec = host
            .process(Call::new(payload.tool, Input::Text(&payload.text)))
            .meta
            .codec
            .unwrap_or_else(|| "-".to_owned());
        let mut interpreter = Interpreter::start(python, &theirs, &file, payload.tool);
        let mut times: [Vec<f64>; 4] = Default::default();
        let (mut str_ratios, mut bytes_ratios) = (Vec::new(), Vec::new());
        for _ in 0..PAIRS {
            let rust = rust_call(&host, payload);
            let [text, bytes, encode] = interpreter.batch(payload.iterations);
            for (list, time) in times.iter_mut().zip([rust, text, bytes, encode]) {
                list.push(time);
            }
            str_ratios.push(text / rust);
            bytes_ratios.push(bytes / rust);
        }
        let [rust, text, bytes, encode] = times.map(|list| median(list) / 1e6);
        let ratio = median(str_ratios);
        let _ = writeln!(
            table,
            "| {} | {} | {codec} | {rust:.3} ms | {text:.3} ms | **{ratio:.3}x** | {bytes:.3} ms | \
             {:.3}x | {encode:.3} ms |",
            payload.name,
            corpus::thousands(payload.text.len()),
            median(bytes_ratios),
        );
        if payload.name.ends_with("1 MB") {
            at_1mb.push(format!("{} {ratio:.3}x", payload.name));
        }
    }
    let worst = at_1mb
        .iter()
        .filter_map(|entry| {
            entry
                .rsplit(' ')
                .next()?
                .trim_end_matches('x')
                .parse::<f64>()
                .ok()
        })
        .fold(0.0, f64::max);
    let target = format!(
        "- `Host.compress` from Python at 1 MB ≤ 1.2x the same call in Rust: {} — **{}**",
        at_1mb.join(", "),
        if worst <= 1.2 { "met" } else { "missed" }
    );
    (table, target)
}

/// `python/bench/columnarize.py`'s line, as a table.
fn columnarize(python: &Path) -> String {
    let script = corpus::workspace_root().join("python/bench/columnarize.py");
    let out = Command::new(python).arg(script).output();
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) => {
            return format!(
                "not measured: python/bench/columnarize.py failed: {}\n",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Err(err) => return format!("not measured: {err}\n"),
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
    else {
        return format!("not measured: python/bench/columnarize.py printed no JSON line: {text}\n");
    };
    format!(
        "| payload | rows | `parrot_codec.columnarize` | pure Python (decode, transform, encode) | speed-up |\n\
         |---:|---:|---:|---:|---:|\n\
         | {} bytes | {} | {} ms | {} ms | **{}x** |\n",
        line["payload_bytes"], line["rows"], line["rust_ms"], line["python_ms"], line["speedup"]
    )
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let python = python();
    let mut text = String::from(
        "`cargo bench -p parrot-compress-python --bench binding`, with the package installed from \
         `python/` (a release build) in the interpreter it runs.\n\n",
    );
    if let Some(why) = unusable(&python) {
        let _ = writeln!(text, "Not measured: {why}.");
        corpus::report("python.md", &text);
        corpus::target(
            "python",
            &[format!(
                "- `Host.compress` from Python at 1 MB ≤ 1.2x the same call in Rust: not measured ({why})"
            )],
        );
        return;
    }
    let (table, target) = binding(&python, quick);
    text.push_str(
        "`Host.compress` from Python against the same call in Rust (`Host::process` and the \
         metadata with its token counts), each host set up by `parrot_setup` from the same \
         settings (its own project and SQLite tee store), on the generated rows and log of the \
         other benchmarks, the payload given as a `str` and as `bytes`. The two sides alternate \
         every few calls (a batch timed here, then a batch in an interpreter that stays up \
         between batches); the times are the batches' medians, each ratio the median of the \
         pairs' ratios. What the binding adds: a `str` encoded to UTF-8 by CPython (a copy for \
         ASCII text; for text with any character past Latin-1, as these rows have, CPython's \
         encoder, whose time alone is the last column), the payload made a `str` (or `bytes`) \
         again, the metadata made a dict. The target is judged on the `str`.\n\n",
    );
    text.push_str(&table);
    text.push_str(
        "\n`parrot_codec.columnarize` against ai-parrot 1.2.4's pure-Python transform (its \
         JSON decoder, `ColumnarCodec._columnarize`, its JSON encoder: what the codec runs on \
         `bytes` without the extension) on the same rows, their outputs equal:\n\n",
    );
    text.push_str(&columnarize(&python));
    corpus::report("python.md", &text);
    corpus::target("python", &[target]);
}
