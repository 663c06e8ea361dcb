//! Headroom's `compress()` on the logs the `log` benchmark times, in a venv the benchmark makes.
//!
//! [`Headroom::set_up`] makes `target/headroom-venv/` with `python3 -m venv` and
//! `pip install -r requirements.txt` (every package pinned; see that file for why this version),
//! and reuses it while the requirements and the Python it was made with are the ones it
//! recorded. [`Headroom::measure`] runs `compress_log.py` in it on one log: the log as one
//! tool message, offline (see [`Headroom::command`]), the median of timed calls with Headroom's
//! caches cleared before each. Whatever fails, from a missing `python3` to a failed install, is
//! returned as the sentence the report prints after "not measured".

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// This folder, with the requirements and the script.
const HERE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/headroom");

/// How long one payload's measurement may take before it is stopped (the 10 MB log's runs take
/// tens of seconds each on a 2-core machine).
const DEADLINE: Duration = Duration::from_secs(30 * 60);

/// What `compress_log.py` reported for one log.
pub struct Measured {
    /// The median of the timed `compress()` calls.
    pub median: Duration,
    /// Each timed call.
    pub runs: Vec<Duration>,
    /// The tool message's content after `compress()`, in bytes of UTF-8.
    pub output_bytes: u64,
    /// Headroom's own token counts of the messages, before and after.
    pub tokens: (u64, u64),
    /// The token counter Headroom used (`TiktokenCounter` with `o200k_base`, unless the
    /// vocabulary could not be provided).
    pub token_counter: String,
    /// What Headroom did to the tool message, in a sentence.
    pub what_ran: String,
    /// The caches cleared before each timed call.
    pub caches_cleared: Vec<String>,
}

/// A venv with the pinned Headroom, ready to run the script.
pub struct Headroom {
    python: PathBuf,
    /// The `o200k_base` vocabulary (gzipped), when the `bpe-openai` crate's copy was found.
    o200k: Option<PathBuf>,
    /// Whether the script runs in a network namespace of its own (`unshare -n`).
    isolated: bool,
    /// Where the logs, Headroom's workspace and tiktoken's cache go.
    work: PathBuf,
}

/// The `headroom-ai` version `requirements.txt` pins.
pub fn pinned_version() -> String {
    requirements()
        .lines()
        .find_map(|line| line.strip_prefix("headroom-ai=="))
        .unwrap_or("(no headroom-ai pin in requirements.txt)")
        .trim()
        .to_owned()
}

fn requirements_path() -> PathBuf {
    Path::new(HERE).join("requirements.txt")
}

fn requirements() -> String {
    let path = requirements_path();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Headroom {
    /// Makes or reuses the venv under `target`; the reason when that is not possible.
    pub fn set_up(target: &Path) -> Result<Headroom, String> {
        let python = std::ffi::OsStr::new("python3");
        let version = run(Command::new(python).arg("--version"))
            .map_err(|e| format!("no Python to make Headroom's venv with: {e}"))?;
        let venv = target.join("headroom-venv");
        let stamp = venv.join("parrot-requirements.txt");
        let wanted = format!("# {}\n{}", version.trim(), requirements());
        let venv_python = venv.join("bin/python");
        if !(venv_python.is_file() && std::fs::read_to_string(&stamp).ok() == Some(wanted.clone()))
        {
            make_venv(python, &venv)?;
            std::fs::write(&stamp, &wanted).map_err(|e| format!("{}: {e}", stamp.display()))?;
        }
        Ok(Headroom {
            python: venv_python,
            o200k: o200k_vocabulary(),
            isolated: run(Command::new("unshare").args(["-n", "true"])).is_ok(),
            work: target.join("headroom-run"),
        })
    }

    /// How Headroom was configured and kept offline, for the report.
    pub fn configuration(&self) -> String {
        let cut = if self.isolated {
            "in a network namespace with no interfaces (`unshare -n`), so nothing it tried could \
             reach a network"
        } else {
            "with its network not cut off (`unshare -n` is not available here): HTTP(S) proxies \
             set to a closed port, so a download would fail"
        };
        let vocabulary = match &self.o200k {
            Some(_) => {
                "tiktoken's `o200k_base` vocabulary put in its cache from the `bpe-openai` \
                 crate's copy (SHA-256 checked), so Headroom counts tokens as it does online"
            }
            None => {
                "no `o200k_base` vocabulary (the `bpe-openai` crate's copy was not found), so \
                 Headroom counts tokens with its character estimate"
            }
        };
        format!(
            "`HEADROOM_OFFLINE=1` and `HF_HUB_OFFLINE=1`, run {cut}; {vocabulary}; its 20 s \
             budget for compressing one message turned off \
             (`HEADROOM_COMPRESSION_DEADLINE_MS=0`), since past it `compress()` gives the log \
             back unchanged and the 10 MB log takes about that long here"
        )
    }

    /// Runs the script on `log` (written to a file named `name`) with `runs` timed calls.
    pub fn measure(&self, name: &str, log: &str, runs: usize) -> Result<Measured, String> {
        let at = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
        let workspace = self.work.join("workspace");
        if workspace.exists() {
            std::fs::remove_dir_all(&workspace).map_err(|e| at(&workspace, e))?;
        }
        std::fs::create_dir_all(&workspace).map_err(|e| at(&workspace, e))?;
        let file = self.work.join(format!("{name}.txt"));
        std::fs::write(&file, log).map_err(|e| at(&file, e))?;
        let mut command = self.command(&file, runs);
        let output = wait(&mut command, DEADLINE)?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!(
                "compress_log.py failed ({}): {}",
                output.status,
                last_line(&String::from_utf8_lossy(&output.stderr))
            ));
        }
        let report = self.work.join(format!("{name}.json"));
        std::fs::write(&report, stdout.as_bytes()).map_err(|e| at(&report, e))?;
        let json: Value = serde_json::from_str(last_line(&stdout))
            .map_err(|e| format!("compress_log.py printed no JSON report ({e}): {stdout}"))?;
        measured(&json)
    }

    /// The script's command: offline by Headroom's own switch (no telemetry beacon, update
    /// check, model or vocabulary download), with Hugging Face offline and proxies pointing at
    /// a closed port for any library that ignores it, its workspace (where its retrieval store
    /// keeps each original) fresh under the target folder, and in a network namespace of its
    /// own where `unshare -n` works. Headroom's 20 s budget for compressing one message is
    /// turned off (`HEADROOM_COMPRESSION_DEADLINE_MS=0`): the 10 MB log takes about that long
    /// here, and past the budget `compress()` returns the log unchanged while the work goes on
    /// in a thread, which would neither compress the log nor leave the next run alone.
    fn command(&self, log: &Path, runs: usize) -> Command {
        let mut command = if self.isolated {
            let mut c = Command::new("unshare");
            c.args(["-n", "--"]).arg(&self.python);
            c
        } else {
            Command::new(&self.python)
        };
        command
            .arg(Path::new(HERE).join("compress_log.py"))
            .arg(log)
            .arg(runs.to_string());
        if let Some(o200k) = &self.o200k {
            command.arg(o200k);
        }
        let closed = "http://127.0.0.1:9";
        command
            .env("HEADROOM_OFFLINE", "1")
            .env("HF_HUB_OFFLINE", "1")
            .env("TRANSFORMERS_OFFLINE", "1")
            .env("HEADROOM_COMPRESSION_DEADLINE_MS", "0")
            .env("HEADROOM_WORKSPACE_DIR", self.work.join("workspace"))
            .env("HF_HOME", self.work.join("workspace/hf"))
            .env("TIKTOKEN_CACHE_DIR", self.work.join("tiktoken"))
            .env("HTTPS_PROXY", closed)
            .env("HTTP_PROXY", closed)
            .env("ALL_PROXY", closed)
            .env_remove("NO_PROXY");
        command
    }
}

/// Makes the venv in `venv` (emptied first) and installs the requirements into it; the full
/// output of pip goes to `pip.log` beside it.
fn make_venv(python: &std::ffi::OsStr, venv: &Path) -> Result<(), String> {
    if venv.exists() {
        std::fs::remove_dir_all(venv).map_err(|e| format!("{}: {e}", venv.display()))?;
    }
    eprintln!(
        "log: making {} (pip install -r {})",
        venv.display(),
        requirements_path().display()
    );
    run(Command::new(python).arg("-m").arg("venv").arg(venv))
        .map_err(|e| format!("`python3 -m venv` failed: {e}"))?;
    let log = venv.with_extension("pip.log");
    let output = Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "--disable-pip-version-check", "-r"])
        .arg(requirements_path())
        .output()
        .map_err(|e| format!("running the venv's pip: {e}"))?;
    let text = [output.stdout, output.stderr].concat();
    std::fs::write(&log, &text).map_err(|e| format!("{}: {e}", log.display()))?;
    if !output.status.success() {
        // A venv without its packages must not be reused.
        let _ = std::fs::remove_dir_all(venv);
        let text = String::from_utf8_lossy(&text);
        return Err(format!(
            "`pip install -r codecs/benches/headroom/requirements.txt` failed ({}): {}{} (full \
             output in {})",
            output.status,
            last_line(&text),
            unreachable_index(&text)
                .map(|why| format!(", the package index being out of reach ({why})"))
                .unwrap_or_default(),
            log.display()
        ));
    }
    Ok(())
}

/// Why pip could not connect, when its retries say so: its last answer to "Failed to
/// establish a new connection" (a failed install names only the first package it missed).
fn unreachable_index(pip_output: &str) -> Option<&str> {
    let marker = "Failed to establish a new connection: ";
    let line = pip_output.lines().rev().find(|l| l.contains(marker))?;
    let why = &line[line.find(marker)? + marker.len()..];
    Some(why.split("')").next().unwrap_or(why))
}

/// The gzipped `o200k_base.tiktoken` inside the `bpe-openai` crate (the workspace's pinned
/// copy, which `parrot-bpe` builds its vocabulary from), found with `cargo metadata`.
fn o200k_vocabulary() -> Option<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--manifest-path",
        ])
        .arg(manifest)
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let metadata: Value = serde_json::from_slice(&output.stdout).ok()?;
    metadata["packages"]
        .as_array()?
        .iter()
        .filter(|p| p["name"] == "bpe-openai")
        .filter_map(|p| {
            Some(
                Path::new(p["manifest_path"].as_str()?)
                    .parent()?
                    .to_path_buf(),
            )
        })
        .map(|dir| dir.join("data/o200k_base.tiktoken.gz"))
        .find(|path| path.is_file())
}

/// The script's report, read.
fn measured(json: &Value) -> Result<Measured, String> {
    let pinned = pinned_version();
    let version = json["headroom_version"].as_str().unwrap_or("unknown");
    if version != pinned {
        return Err(format!(
            "the venv has headroom-ai {version}, but requirements.txt pins {pinned}"
        ));
    }
    let seconds = |v: &Value| v.as_f64().map(Duration::from_secs_f64);
    let number = |key: &str| {
        json[key]
            .as_u64()
            .ok_or_else(|| format!("the report has no {key}"))
    };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    Ok(Measured {
        median: seconds(&json["median_s"]).ok_or("the report has no median_s")?,
        runs: json["runs_s"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(seconds)
            .collect(),
        output_bytes: number("output_bytes")?,
        tokens: (number("tokens_before")?, number("tokens_after")?),
        token_counter: json["token_counter"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned(),
        what_ran: what_ran(json),
        caches_cleared: strings(&json["caches_cleared"]),
    })
}

/// What Headroom did to the tool message, from the watched call: its decision, then each stage
/// of its log path that ran and what it gave.
fn what_ran(json: &Value) -> String {
    let mut parts = vec![format!(
        "`{}`",
        json["tool_message_action"]
            .as_str()
            .unwrap_or("no decision reported")
    )];
    let fold = &json["lossless_fold"];
    if let Some(chars) = fold["chars"].as_array() {
        parts.push(format!(
            "lossless fold ({}) {} → {} chars",
            fold["label"].as_str().unwrap_or("nothing folded"),
            chars[0],
            chars[1]
        ));
    }
    let split = &json["relevance_split"];
    if let Some(adopted) = split["adopted"].as_bool() {
        parts.push(format!(
            "relevance split ({}) {}",
            split["scorer"].as_str().unwrap_or("?"),
            if adopted { "kept" } else { "not kept" }
        ));
    }
    for call in json["log_compressor_calls"]
        .as_array()
        .into_iter()
        .flatten()
    {
        parts.push(format!(
            "{}`LogCompressor` (native) {} → {} lines, format {}, {:.0} ms",
            if call["within_relevance_split"] == true {
                "in the split, "
            } else {
                ""
            },
            call["lines"][0],
            call["lines"][1],
            call["format_detected"].as_str().unwrap_or("?"),
            call["seconds"].as_f64().unwrap_or(f64::NAN) * 1e3
        ));
    }
    parts.join("; ")
}

/// Runs `command` to its end; its stdout, or what went wrong (its stderr's last line).
fn run(command: &mut Command) -> Result<String, String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let output = command
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{program} exited with {}: {}",
            output.status,
            last_line(&String::from_utf8_lossy(&output.stderr))
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs `command`, stopping it after `deadline`.
fn wait(command: &mut Command, deadline: Duration) -> Result<Output, String> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot run {}: {e}",
                command.get_program().to_string_lossy()
            )
        })?;
    // The pipes are drained on threads, so a child that prints a lot cannot block on them.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "compress_log.py was stopped after {} s",
                    deadline.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("waiting for compress_log.py: {e}")),
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no output)")
        .trim()
}
