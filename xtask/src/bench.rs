//! `cargo xtask bench`: the benchmark corpus, every benchmark, and `docs/BENCHMARKS.md`.
//!
//! 1. [`corpus`]: the registry payloads of `corpus/registry.toml` are downloaded (once; a
//!    tarball already on disk is reused when its digest matches), checked against their sha256
//!    and extracted into `target/bench-corpus/`, with an `index.json` the benchmarks read (each
//!    item's set, if any, and whether it is held out).
//! 2. The Python package is installed from `python/` into `python/.venv` (as `cargo xtask test`
//!    does), for the binding's benchmark.
//! 3. `cargo bench -p parrot-codecs -p parrot-host -p parrot-benches -p parrot-compress -p
//!    parrot-bpe -p parrot-serve -p parrot-compress-python`, with `PARROT_BENCH_REPORT` pointing at
//!    `target/bench-report/`: the criterion benchmarks leave their estimates there
//!    (`CRITERION_HOME`), the others write their tables and target lines as Markdown.
//! 4. `docs/BENCHMARKS.md` is rewritten from those: machine, date, toolchain, every table, and
//!    the targets with what was measured against each.
//!
//! `--quick` shortens every measurement (for checking the command itself; the numbers are
//! noisier, and the file says so).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The cargo target folder: `CARGO_TARGET_DIR`, else `target/` in the workspace.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Fetches, checks and extracts the registry corpus; returns its folder.
pub fn corpus(root: &Path) -> Result<PathBuf> {
    let manifest_path = root.join("corpus/registry.toml");
    let manifest: toml::Table = toml::from_str(
        &std::fs::read_to_string(&manifest_path)
            .with_context(|| manifest_path.display().to_string())?,
    )
    .with_context(|| manifest_path.display().to_string())?;
    let out = target_dir(root).join("bench-corpus");
    std::fs::create_dir_all(out.join("tarballs"))?;
    let packages = manifest
        .get("package")
        .and_then(toml::Value::as_array)
        .with_context(|| format!("{}: no [[package]]", manifest_path.display()))?;
    let mut index: Vec<Value> = Vec::new();
    for (n, package) in packages.iter().enumerate() {
        for entry in package_items(package, n, &out, &manifest_path)? {
            // Each item is written to a file of its name: a second would overwrite the first.
            if index.iter().any(|seen| seen["name"] == entry["name"]) {
                bail!(
                    "{}: two items named {}",
                    manifest_path.display(),
                    entry["name"]
                );
            }
            index.push(entry);
        }
    }
    std::fs::write(
        out.join("index.json"),
        serde_json::to_string_pretty(&index)?,
    )?;
    println!(
        "registry corpus: {} items in {}",
        index.len(),
        out.display()
    );
    Ok(out)
}

/// The registries a package may come from (`registry`, npm when absent): each serves a
/// gzipped tarball, and the name is what an item's `source` says.
const REGISTRIES: [&str; 3] = ["npm", "crates.io", "PyPI"];

/// The sets an item may belong to besides the general registry corpus.
const SETS: [&str; 1] = ["nested"];

/// Fetches (unless a tarball with the recorded digest is there), checks and extracts the
/// `n`th `[[package]]` into `out`, writes each of its items there and returns their index
/// entries.
fn package_items(
    package: &toml::Value,
    n: usize,
    out: &Path,
    manifest_path: &Path,
) -> Result<Vec<Value>> {
    let field = |key: &str| -> Result<&str> {
        package
            .get(key)
            .and_then(toml::Value::as_str)
            .with_context(|| {
                format!(
                    "{}: package {}: missing string {key:?}",
                    manifest_path.display(),
                    n + 1
                )
            })
    };
    let (name, version, url, sha256) = (
        field("name")?,
        field("version")?,
        field("tarball")?,
        field("sha256")?,
    );
    let registry = package
        .get("registry")
        .map_or(Some("npm"), toml::Value::as_str)
        .filter(|r| REGISTRIES.contains(r))
        .with_context(|| {
            format!(
                "{}: {name}: registry is one of {REGISTRIES:?}",
                manifest_path.display()
            )
        })?;
    let package_set = set_of(package, name, None, manifest_path)?;
    let slug = format!(
        "{}-{version}",
        name.trim_start_matches('@').replace('/', "-")
    );
    let tarball = out.join("tarballs").join(format!("{slug}.tgz"));
    if !tarball.is_file() || sha256_of(&tarball)? != sha256 {
        println!("fetching {name}@{version} from {url}");
        download(url, sha256, &tarball, manifest_path)?;
    }
    let unpacked = out.join("src").join(&slug);
    extract(&tarball, &unpacked)?;
    let source = format!("{registry} {name}@{version}");
    let items = package
        .get("items")
        .and_then(toml::Value::as_array)
        .with_context(|| format!("{}: {name}: no items", manifest_path.display()))?;
    let mut index = Vec::new();
    for item in items {
        let (item_name, text) = read_item(item, name, &unpacked, manifest_path)?;
        let set = set_of(item, &item_name, package_set, manifest_path)?;
        let held_out = held_out(item, &item_name, set, manifest_path)?;
        let written = format!("{item_name}.json");
        std::fs::write(out.join(&written), &text)?;
        index.push(serde_json::json!({
            "name": item_name,
            "source": source,
            "file": written,
            "bytes": text.len(),
            "set": set,
            "held_out": held_out,
        }));
    }
    Ok(index)
}

/// The `set` of a package or an item (`named` in messages), else `inherited` (the package's,
/// for an item).
fn set_of<'a>(
    table: &'a toml::Value,
    named: &str,
    inherited: Option<&'a str>,
    manifest_path: &Path,
) -> Result<Option<&'a str>> {
    match table.get("set") {
        None => Ok(inherited),
        Some(set) => set
            .as_str()
            .filter(|s| SETS.contains(s))
            .map(Some)
            .with_context(|| {
                format!(
                    "{}: {named}: set is one of {SETS:?}",
                    manifest_path.display()
                )
            }),
    }
}

/// Whether the item `name` is held out: the first byte of the SHA-256 of its name is a
/// multiple of 3 (about a third of the items, and none chosen by looking at results).
fn held_out_by_rule(name: &str) -> bool {
    Sha256::digest(name.as_bytes())[0] % 3 == 0
}

/// The item's `held_out` (false when absent), checked against [`held_out_by_rule`] for an
/// item of a set; an item of no set is never held out.
fn held_out(
    item: &toml::Value,
    name: &str,
    set: Option<&str>,
    manifest_path: &Path,
) -> Result<bool> {
    let recorded = match item.get("held_out") {
        None => false,
        Some(value) => value.as_bool().with_context(|| {
            format!(
                "{}: {name}: held_out is true or false",
                manifest_path.display()
            )
        })?,
    };
    match set {
        None if recorded => bail!(
            "{}: {name}: held_out, but the item is in no set",
            manifest_path.display()
        ),
        None => Ok(false),
        Some(_) if recorded != held_out_by_rule(name) => bail!(
            "{}: {name}: held_out = {recorded}, but the rule (the first byte of the SHA-256 of \
             the name is a multiple of 3) says {}",
            manifest_path.display(),
            !recorded
        ),
        Some(_) => Ok(recorded),
    }
}

/// Downloads `url` to `tarball` (through a partial file, so a cut download is never taken
/// for the tarball), checked against the `sha256` recorded in `manifest_path`.
fn download(url: &str, sha256: &str, tarball: &Path, manifest_path: &Path) -> Result<()> {
    let partial = tarball.with_extension("part");
    let status = Command::new("curl")
        .args(["-sSfL", "--retry", "3", "-o"])
        .arg(&partial)
        .arg(url)
        .status()
        .context("running curl (is it installed?)")?;
    if !status.success() {
        bail!("downloading {url} failed: curl {status}");
    }
    let got = sha256_of(&partial)?;
    if got != sha256 {
        bail!(
            "{url}: sha256 {got} does not match the {sha256} recorded in {}",
            manifest_path.display()
        );
    }
    std::fs::rename(&partial, tarball)?;
    Ok(())
}

/// Extracts `tarball` into `unpacked`, emptied first.
fn extract(tarball: &Path, unpacked: &Path) -> Result<()> {
    if unpacked.exists() {
        std::fs::remove_dir_all(unpacked)?;
    }
    std::fs::create_dir_all(unpacked)?;
    let status = Command::new("tar")
        .arg("xzf")
        .arg(tarball)
        .arg("-C")
        .arg(unpacked)
        .status()
        .context("running tar")?;
    if !status.success() {
        bail!("extracting {} failed: tar {status}", tarball.display());
    }
    Ok(())
}

/// The members an item may have.
const ITEM_KEYS: [&str; 6] = ["name", "file", "response", "pointer", "set", "held_out"];

/// One `[[package.items]]` of the package `package` (extracted in `unpacked`): its name and
/// its text, the file as it is, the `response` of one entry of a recording, or the value at a
/// JSON Pointer.
fn read_item(
    item: &toml::Value,
    package: &str,
    unpacked: &Path,
    manifest_path: &Path,
) -> Result<(String, String)> {
    let item_name = item
        .get("name")
        .and_then(toml::Value::as_str)
        .with_context(|| {
            format!(
                "{}: {package}: an item without name",
                manifest_path.display()
            )
        })?;
    if let Some(key) = item
        .as_table()
        .and_then(|t| t.keys().find(|k| !ITEM_KEYS.contains(&k.as_str())))
    {
        bail!(
            "{}: {item_name}: unknown member {key:?} (an item has {ITEM_KEYS:?})",
            manifest_path.display()
        );
    }
    let file = item
        .get("file")
        .and_then(toml::Value::as_str)
        .with_context(|| format!("{}: {item_name}: no file", manifest_path.display()))?;
    let path = unpacked.join(file);
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let parsed = || -> Result<Value> {
        serde_json::from_str(&text).with_context(|| path.display().to_string())
    };
    let response = item.get("response").and_then(toml::Value::as_integer);
    let pointer = item.get("pointer").and_then(toml::Value::as_str);
    let text = match (response, pointer) {
        (None, None) => text,
        (Some(_), Some(_)) => bail!(
            "{}: {item_name}: both response and pointer (an item takes one)",
            manifest_path.display()
        ),
        (Some(entry), None) => {
            let response = parsed()?
                .get(usize::try_from(entry)?)
                .and_then(|e| e.get("response"))
                .cloned()
                .with_context(|| format!("{}: entry {entry} has no response", path.display()))?;
            serde_json::to_string(&response)?
        }
        (None, Some(pointer)) => {
            let document = parsed()?;
            let value = document.pointer(pointer).with_context(|| {
                format!("{}: nothing at the pointer {pointer:?}", path.display())
            })?;
            serde_json::to_string(value)?
        }
    };
    Ok((item_name.to_owned(), text))
}

fn sha256_of(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The line of `docs/BENCHMARKS.md` from which the file is kept as it is when rewritten.
const KEPT_MARKER: &str = "<!-- measured outside cargo xtask bench";

/// Runs everything and rewrites `docs/BENCHMARKS.md`.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(other) = args.iter().find(|a| *a != "--quick") {
        bail!("unknown argument {other:?} (usage: cargo xtask bench [--quick])");
    }
    let corpus = corpus(root)?;
    let report = target_dir(root).join("bench-report");
    if report.exists() {
        std::fs::remove_dir_all(&report)?;
    }
    std::fs::create_dir_all(&report)?;
    // Without the package, its benchmark says it was not measured, and why.
    let python = match crate::test::python_package(root) {
        Ok(python) => Some(python),
        Err(err) => {
            eprintln!("xtask bench: the Python package is not installed: {err:#}");
            None
        }
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut bench = Command::new(cargo);
    bench
        .current_dir(root)
        .args([
            "bench",
            "-p",
            "parrot-codecs",
            "-p",
            "parrot-host",
            "-p",
            "parrot-benches",
            "-p",
            "parrot-compress",
            "-p",
            "parrot-bpe",
            "-p",
            "parrot-serve",
            "-p",
            "parrot-compress-python",
        ])
        .env("PARROT_BENCH_REPORT", &report)
        .env("PARROT_BENCH_CORPUS", &corpus)
        .env("CRITERION_HOME", report.join("criterion"));
    if quick {
        bench.env("PARROT_BENCH_QUICK", "1");
    }
    if let Some(python) = python {
        bench.env("PARROT_PYTHON", python);
    }
    let status = bench.status().context("running cargo bench")?;
    if !status.success() {
        bail!("cargo bench failed: {status}");
    }
    let mut text = render(&report, quick)?;
    let out = root.join("docs/BENCHMARKS.md");
    // The figures measured by tests and scripts, not by `cargo bench`, live below the marker.
    let previous = std::fs::read_to_string(&out).unwrap_or_default();
    if let Some(at) = previous.find(KEPT_MARKER) {
        text.push('\n');
        text.push_str(&previous[at..]);
    }
    std::fs::write(&out, text)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// One criterion estimate: the median of the samples, in nanoseconds.
struct Estimate {
    median_ns: f64,
    bytes: Option<u64>,
}

/// Every criterion estimate under `dir`, by group then function (with its parameter).
fn estimates(dir: &Path) -> Result<BTreeMap<String, BTreeMap<String, Estimate>>> {
    let mut all: BTreeMap<String, BTreeMap<String, Estimate>> = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "new") {
                    let bench: Value = read_json(&path.join("benchmark.json"))?;
                    let est: Value = read_json(&path.join("estimates.json"))?;
                    let group = bench["group_id"].as_str().unwrap_or_default().to_owned();
                    let mut function = bench["function_id"].as_str().unwrap_or_default().to_owned();
                    if let Some(value) = bench["value_str"].as_str() {
                        function = format!("{function}/{value}");
                    }
                    let median_ns = est["median"]["point_estimate"]
                        .as_f64()
                        .with_context(|| format!("{}: no median", path.display()))?;
                    let bytes = bench["throughput"]["Bytes"].as_u64();
                    all.entry(group)
                        .or_default()
                        .insert(function, Estimate { median_ns, bytes });
                } else {
                    stack.push(path);
                }
            }
        }
    }
    Ok(all)
}

fn read_json(path: &Path) -> Result<Value> {
    serde_json::from_str(
        &std::fs::read_to_string(path).with_context(|| path.display().to_string())?,
    )
    .with_context(|| path.display().to_string())
}

fn time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    }
}

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines().find_map(|l| {
                let kb: u64 = l
                    .strip_prefix("MemTotal:")?
                    .trim()
                    .trim_end_matches(" kB")
                    .parse()
                    .ok()?;
                Some(format!("{:.0} GiB", kb as f64 / (1 << 20) as f64))
            })
        })
        .unwrap_or_else(|| "unknown memory".to_owned());
    format!(
        "{cpu}, {cores} cores, {memory}, {}",
        command_output("uname", &["-sr"])
    )
}

fn fragment(report: &Path, name: &str) -> String {
    std::fs::read_to_string(report.join(name))
        .unwrap_or_else(|_| format!("(missing: the benchmark that writes `{name}` did not run)\n"))
}

fn render(report: &Path, quick: bool) -> Result<String> {
    let estimates = estimates(&report.join("criterion"))?;
    let mut out = String::new();
    preamble(&mut out, quick)?;
    let codec_rows = codec_table(&estimates, report);
    let boundary = boundary_table(&estimates, report);
    targets(&mut out, report, &[&codec_rows.1, &boundary.1])?;

    writeln!(out, "## The default configuration on 32 payloads\n")?;
    out.push_str(&fragment(report, "defaults.md"));
    writeln!(out, "\n## Corpus\n")?;
    out.push_str(&fragment(report, "corpus.md"));
    writeln!(out, "\n## Nested API responses\n")?;
    out.push_str(&fragment(report, "nested.md"));
    writeln!(out, "\n## Tokens\n")?;
    out.push_str(&fragment(report, "tokens.md"));
    writeln!(out, "\n## Codec speed: text in → text out\n")?;
    writeln!(
        out,
        "`cargo bench -p parrot-codecs --bench codecs`. Each codec's `compress` on a `&str`, \
         returning its new text, against two yardsticks on the same bytes in the same run:\n\n\
         - **scan**: serde_json deserializing into `serde::de::IgnoredAny`, a validating scan \
         that allocates nothing (the floor for anything that must read all of its input);\n\
         - **Value**: a serde_json `Value` parse + `to_string` (features `arbitrary_precision` \
         and `preserve_order`), what a codec built on an owned tree pays at least.\n\n\
         Criterion medians; each cell is the time and its ratio to the scan. `check` is \
         `parrot_json::check`, the validating pass with which the host classifies every payload \
         before a codec sees it (JSON without duplicate member names, or not). `toon` is the \
         built-in TOON codec (lossless, the same output at every level). Codec \
         parameters are the defaults.\n"
    )?;
    out.push_str(&codec_rows.0);
    writeln!(
        out,
        "\n## Plugin boundary: the same codec in-process and through its cdylib\n"
    )?;
    writeln!(
        out,
        "`cargo bench -p parrot-host --bench plugin_boundary`. Each codec linked into the \
         benchmark as an rlib and called through `&dyn DynCodec`, and the same codec loaded by a \
         `Host` from its cdylib (payload passed as a borrowed `RStr`, output returned as an \
         `RString`, a panic guard inside the plugin). Both paths are first checked to give the \
         same bytes. Criterion measures the two paths one after the other, so a drift in the \
         machine's speed between them reads as a difference; the interleaved ratio is the \
         median of 1,000 ratios of two batches of about a millisecond timed back to back \
         (their order alternating), which cancels that drift, and is what the target is \
         judged on.\n"
    )?;
    out.push_str(&boundary.0);
    writeln!(out, "\n## `process` end to end\n")?;
    out.push_str(&fragment(report, "process.md"));
    writeln!(out, "\n## The command\n")?;
    out.push_str(&fragment(report, "command.md"));
    writeln!(out, "\n## The HTTP proxy (`serve`)\n")?;
    out.push_str(&fragment(report, "serve.md"));
    writeln!(out, "\n## The routing codec `auto`\n")?;
    out.push_str(&fragment(report, "auto.md"));
    writeln!(out, "\n## The token gauge: the no-gain rule in tokens\n")?;
    out.push_str(&fragment(report, "gauge.md"));
    writeln!(out, "\n## Token counting\n")?;
    out.push_str(&fragment(report, "token-counting.md"));
    out.push('\n');
    out.push_str(&fragment(report, "tokenizer.md"));
    writeln!(out, "\n## Tee stores\n")?;
    out.push_str(&tee_table(&estimates));
    writeln!(out, "\n## Host construction\n")?;
    out.push_str(&fragment(report, "construction.md"));
    out.push_str(&construction_table(&estimates));
    writeln!(out, "\n## Peak memory\n")?;
    out.push_str(&fragment(report, "memory.md"));
    writeln!(out, "\n## From Python\n")?;
    out.push_str(&fragment(report, "python.md"));
    text_sections(&mut out, report)?;
    writeln!(out, "\n## Log codec\n")?;
    out.push_str(&fragment(report, "log.md"));
    out.push('\n');
    out.push_str(&fragment(report, "log-memory.md"));
    Ok(out)
}

/// The text kinds' sections: what the default makes of the real captures, and the text
/// codecs' speed.
fn text_sections(out: &mut String, report: &Path) -> std::fmt::Result {
    writeln!(out, "\n## Text kinds: listings, hits, tables, VCS output\n")?;
    out.push_str(&fragment(report, "text.md"));
    writeln!(out, "\n## Text codec speed\n")?;
    out.push_str(&fragment(report, "text-speed.md"));
    Ok(())
}

/// The page's title, how it was made and on what, and how to read its figures.
fn preamble(out: &mut String, quick: bool) -> std::fmt::Result {
    let date = command_output("date", &["-u", "+%Y-%m-%d"]);
    writeln!(out, "# Benchmarks\n")?;
    writeln!(
        out,
        "Generated by `cargo xtask bench`, which rewrites this file down to the section \"Measured outside `cargo xtask bench`\", kept as it is; do not edit the generated part by hand.\n\n\
         - date: {date}\n- machine: {}\n- toolchain: {}\n- profile: `bench` (release, line tables)\n",
        machine(),
        command_output("rustc", &["-V"]),
    )?;
    if quick {
        writeln!(
            out,
            "**This run used `--quick`: every measurement was shortened, so the times are noisier \
             than a full run's.**\n"
        )?;
    }
    writeln!(
        out,
        "Speed is given as ratios against a yardstick measured in the same run — these machines \
         are shared and noisy, so absolute times are printed only beside their ratio. Token \
         counts are exact (o200k_base) and the same on every run.\n"
    )?;
    Ok(())
}

/// The section of targets: the `measured` lines of the tables rendered here, then those the
/// benchmarks wrote.
fn targets(out: &mut String, report: &Path, measured: &[&str]) -> std::fmt::Result {
    writeln!(out, "## Targets\n")?;
    writeln!(out, "Each target, and what this run measured against it.\n")?;
    for line in measured {
        out.push_str(line);
    }
    for name in [
        "defaults",
        "nested",
        "process",
        "command",
        "serve",
        "auto",
        "construction",
        "memory",
        "tokens",
        "text",
        "text-speed",
        "log",
        "log-memory",
        "python",
    ] {
        out.push_str(&fragment(report, &format!("targets-{name}.md")));
    }
    out.push('\n');
    Ok(())
}

/// The codec speed table and its target line (each codec ≤ 2x the scan at 1 MB).
fn codec_table(
    all: &BTreeMap<String, BTreeMap<String, Estimate>>,
    report: &Path,
) -> (String, String) {
    let interleaved = interleaved_ratios(report);
    let mut groups: Vec<(&String, &BTreeMap<String, Estimate>)> = all
        .iter()
        .filter_map(|(g, f)| g.strip_prefix("codecs.").map(|_| (g, f)))
        .collect();
    groups.sort_by_key(|(_, f)| f.values().find_map(|e| e.bytes).unwrap_or(0));
    let mut table = String::from("| payload | scan |");
    for column in CODEC_COLUMNS {
        let _ = write!(table, " {column} |");
    }
    table.push_str("\n|---|---|");
    table.push_str(&"---|".repeat(CODEC_COLUMNS.len()));
    table.push('\n');
    let mut targets = String::new();
    for (group, functions) in groups {
        let name = group.trim_start_matches("codecs.");
        let Some(scan) = functions.get("scan") else {
            continue;
        };
        let bytes = scan.bytes.unwrap_or(0);
        let _ = write!(
            table,
            "| {name} ({}) | {} |",
            size(bytes),
            time(scan.median_ns)
        );
        for column in CODEC_COLUMNS {
            match functions.get(column) {
                Some(e) => {
                    let _ = write!(
                        table,
                        " {} ({:.2}x) |",
                        time(e.median_ns),
                        e.median_ns / scan.median_ns
                    );
                }
                None => table.push_str(" – |"),
            }
        }
        table.push('\n');
        if name == "rows_1MB" {
            targets = codec_target(functions, scan, &interleaved);
        }
    }
    (table, targets)
}

/// The columns of the codec speed table, after the scan.
const CODEC_COLUMNS: [&str; 10] = [
    "check",
    "json_compact/minimal",
    "json_compact/normal",
    "json_compact/aggressive",
    "columnar/minimal",
    "columnar/normal",
    "columnar/aggressive",
    "toon/minimal",
    "json_nested/minimal",
    "value",
];

/// The target's ratios, interleaved with the scan (the benchmark's `interleaved`), when the
/// benchmark wrote them: `COLUMN MEDIAN` lines.
fn interleaved_ratios(report: &Path) -> BTreeMap<String, f64> {
    std::fs::read_to_string(report.join("codecs-interleaved.txt"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (column, median) = line.split_once(' ')?;
            Some((column.to_owned(), median.parse().ok()?))
        })
        .collect()
}

/// The codec target's line, judged on the 1 MB rows' `functions`: the interleaved ratio of each
/// codec where the benchmark wrote one, else the ratio of its median to the `scan`'s.
fn codec_target(
    functions: &BTreeMap<String, Estimate>,
    scan: &Estimate,
    interleaved: &BTreeMap<String, f64>,
) -> String {
    let mut worst: Option<(&str, f64)> = None;
    let mut over = Vec::new();
    let mut cells = Vec::new();
    for column in CODEC_COLUMNS
        .iter()
        .filter(|c| !matches!(**c, "value" | "check"))
    {
        let ratio = match (interleaved.get(*column), functions.get(*column)) {
            (Some(median), _) => Some(*median),
            (None, Some(e)) => Some(e.median_ns / scan.median_ns),
            (None, None) => None,
        };
        if let Some(ratio) = ratio {
            cells.push(format!("{column} {ratio:.2}x"));
            if ratio > 2.0 {
                over.push(format!("{column} ({ratio:.2}x)"));
            }
            if worst.is_none_or(|(_, w)| ratio > w) {
                worst = Some((column, ratio));
            }
        }
    }
    let verdict = match worst {
        Some((_, w)) if w <= 2.0 => "**met**".to_owned(),
        // Every codec over the bound is named, not only the worst.
        Some(_) => format!("**missed** by {}", over.join(", ")),
        None => "not measured".to_owned(),
    };
    format!(
        "- Each codec ≤ 2x the non-allocating scan on the 1 MB rows ({}): {verdict}. {}.\n",
        if interleaved.is_empty() {
            "ratio of criterion's medians"
        } else {
            "median of ratios, each call timed after a scan"
        },
        cells.join(", ")
    )
}

/// The plugin boundary table and its target line (≤ 5% at 10 KB), judged on the interleaved
/// ratio the benchmark writes beside criterion's estimates.
fn boundary_table(
    all: &BTreeMap<String, BTreeMap<String, Estimate>>,
    report: &Path,
) -> (String, String) {
    let mut table = String::from(
        "| codec, payload | in-process | through cdylib | ratio of the medians | interleaved ratio (median, interquartile) |\n\
         |---|---|---|---|---|\n",
    );
    let mut targets = String::new();
    for (group, functions) in all.iter().filter(|(g, _)| g.starts_with("boundary.")) {
        let (Some(inside), Some(outside)) =
            (functions.get("in_process"), functions.get("through_cdylib"))
        else {
            continue;
        };
        let name = group.trim_start_matches("boundary.");
        let slug: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let interleaved: Option<Vec<f64>> =
            std::fs::read_to_string(report.join(format!("boundary-{slug}.txt")))
                .ok()
                .and_then(|text| text.split_whitespace().map(|n| n.parse().ok()).collect());
        let (cell, judged) = match interleaved.as_deref() {
            Some([median, q1, q3]) => (format!("{median:.3} ({q1:.3}–{q3:.3})"), *median),
            _ => ("–".to_owned(), outside.median_ns / inside.median_ns),
        };
        let _ = writeln!(
            table,
            "| {name} | {} | {} | {:.3} | {cell} |",
            time(inside.median_ns),
            time(outside.median_ns),
            outside.median_ns / inside.median_ns
        );
        let verdict = if judged <= 1.05 { "met" } else { "missed" };
        let _ = writeln!(
            targets,
            "- Plugin boundary ≤ 5% at 10 KB ({name}, interleaved median): **{verdict}**, {:+.1}%.",
            (judged - 1.0) * 100.0
        );
    }
    (table, targets)
}

fn tee_table(all: &BTreeMap<String, BTreeMap<String, Estimate>>) -> String {
    let mut table = String::from(
        "`cargo bench -p parrot-benches --bench tee`: criterion medians. The SQLite store \
         (WAL, `synchronous=NORMAL`) is held at 200 entries, so each put also deletes the \
         oldest; the Redis store talks to a `redis-server` the benchmark starts on a loopback \
         port (no persistence, 256 MiB under `volatile-ttl`), each call a round trip.\n\n\
         | operation | store | payload | median |\n|---|---|---|---|\n",
    );
    if let Some(functions) = all.get("tee") {
        for (function, e) in functions {
            let mut parts = function.splitn(3, '/');
            let (op, store, payload) = (
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
            );
            let _ = writeln!(
                table,
                "| {op} | {store} | {payload} | {} |",
                time(e.median_ns)
            );
        }
    }
    table
}

fn construction_table(all: &BTreeMap<String, BTreeMap<String, Estimate>>) -> String {
    let mut table = String::from(
        "\nWarm (criterion medians, the libraries already loaded in the process, as on every \
         construction after the first):\n\n| packages | median |\n|---|---|\n",
    );
    if let Some(functions) = all.get("construction") {
        for (function, e) in functions {
            let _ = writeln!(table, "| {function} | {} |", time(e.median_ns));
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str) -> toml::Value {
        toml::Value::Table(toml::from_str(text).expect("an item's TOML"))
    }

    /// `read_item` on `item` with `file` written in a fresh folder as `doc.json`.
    fn read(item_toml: &str, file: &str) -> Result<(String, String)> {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("doc.json"), file).expect("doc.json");
        read_item(
            &item(item_toml),
            "pkg",
            dir.path(),
            Path::new("registry.toml"),
        )
    }

    const EXAMPLES: &str = "[\n  {\"name\": \"push\", \"examples\": [\n    {\"z\": 1.50, \"a\": {\"b\": [1, 12345678901234567890123]}}\n  ]}\n]\n";

    #[test]
    fn a_pointer_selects_one_value_as_compact_json_keeping_order_and_number_text() {
        let (name, text) = read(
            "name = \"x\"\nfile = \"doc.json\"\npointer = \"/0/examples/0\"",
            EXAMPLES,
        )
        .expect("selected");
        assert_eq!(name, "x");
        assert_eq!(text, r#"{"z":1.50,"a":{"b":[1,12345678901234567890123]}}"#);
    }

    #[test]
    fn an_item_without_a_selector_is_the_file_as_it_is() {
        let (_, text) = read("name = \"x\"\nfile = \"doc.json\"", EXAMPLES).expect("read");
        assert_eq!(text, EXAMPLES);
    }

    #[test]
    fn a_pointer_to_nothing_names_the_pointer() {
        let err = read(
            "name = \"x\"\nfile = \"doc.json\"\npointer = \"/0/examples/7\"",
            EXAMPLES,
        )
        .expect_err("nothing there");
        assert!(err.to_string().contains("\"/0/examples/7\""), "{err}");
    }

    #[test]
    fn an_item_with_both_response_and_pointer_is_refused() {
        let err = read(
            "name = \"x\"\nfile = \"doc.json\"\nresponse = 0\npointer = \"/0\"",
            EXAMPLES,
        )
        .expect_err("two selectors");
        assert!(
            err.to_string().contains("both response and pointer"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_item_member_is_refused() {
        let err = read(
            "name = \"x\"\nfile = \"doc.json\"\nheld-out = true",
            EXAMPLES,
        )
        .expect_err("a misspelt member");
        assert!(err.to_string().contains("\"held-out\""), "{err}");
    }

    #[test]
    fn held_out_must_agree_with_the_rule() {
        let path = Path::new("registry.toml");
        // The first bytes of these names' digests: 0x97 (151, not a multiple of 3), 0x87 (135).
        assert!(!held_out_by_rule("packument-request"));
        assert!(held_out_by_rule("packument-underscore"));
        let marked = item("held_out = true");
        let unmarked = item("name = \"x\"");
        assert!(held_out(&marked, "packument-underscore", Some("nested"), path).unwrap());
        assert!(!held_out(&unmarked, "packument-request", Some("nested"), path).unwrap());
        let err = held_out(&unmarked, "packument-underscore", Some("nested"), path)
            .expect_err("the rule holds it out");
        assert!(err.to_string().contains("says true"), "{err}");
        assert!(held_out(&marked, "packument-request", Some("nested"), path).is_err());
        let err = held_out(&marked, "x", None, path).expect_err("no set");
        assert!(err.to_string().contains("in no set"), "{err}");
    }

    #[test]
    fn an_item_takes_its_packages_set_unless_it_names_one() {
        let path = Path::new("registry.toml");
        let package = item("set = \"nested\"");
        let inherited = set_of(&package, "pkg", None, path).unwrap();
        assert_eq!(inherited, Some("nested"));
        assert_eq!(
            set_of(&item("name = \"x\""), "x", inherited, path).unwrap(),
            Some("nested")
        );
        assert_eq!(
            set_of(&item("name = \"x\""), "x", None, path).unwrap(),
            None
        );
        assert!(set_of(&item("set = \"flat\""), "x", None, path).is_err());
    }

    /// The committed manifest: every item of a set is marked held out exactly when the rule
    /// says so, and the nested set has at least 30 items, a part of them held out.
    #[test]
    fn the_registry_marks_held_out_items_by_the_rule() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let path = root.join("corpus/registry.toml");
        let manifest: toml::Table =
            toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let (mut nested, mut held) = (0, 0);
        for package in manifest["package"].as_array().unwrap() {
            let package_set = set_of(package, "package", None, &path).unwrap();
            for entry in package["items"].as_array().unwrap() {
                let name = entry["name"].as_str().unwrap();
                let set = set_of(entry, name, package_set, &path).unwrap();
                let out = held_out(entry, name, set, &path).unwrap_or_else(|e| panic!("{e}"));
                if set == Some("nested") {
                    nested += 1;
                    held += usize::from(out);
                }
            }
        }
        assert!(nested >= 30, "{nested} nested items");
        assert!(held > 0 && held < nested, "{held} of {nested} held out");
    }
}
