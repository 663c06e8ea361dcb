//! `replay`: a session of tool calls through one pipeline, and its savings report.

use std::io::{IsTerminal, Write};
use std::path::Path;

use parrot_host::{Call, Input, Report, TokenCounter};
use serde_json::json;
use serde_json::value::RawValue;

use crate::Failure;
use crate::args::Options;
use crate::host::{host, killed, killed_meta, tokenizer};

/// The sample session replayed when `replay` is given no file: realistic tool calls (query
/// results, API responses, build logs, errors).
pub(crate) const SAMPLE_SESSION: &str = include_str!("../../samples/session.jsonl");

/// One parsed line of a session file.
pub(crate) struct SessionCall {
    tool: String,
    status: String,
    result: String,
}

/// The members of one session line in file order, each value as its raw text: a member named
/// twice is seen (a map would keep one of them silently), and the result is not parsed at all.
pub(crate) struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<Box<RawValue>>()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

pub(crate) fn parse_session(name: &str, text: &str) -> Result<Vec<SessionCall>, Failure> {
    // A byte order mark is not part of the first line's JSON.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{name}:{}", i + 1);
        match parse_call(line) {
            Ok(call) => calls.push(call),
            Err(message) => errors.push(format!("{at}: {message}")),
        }
    }
    if errors.is_empty() {
        Ok(calls)
    } else {
        Err(Failure {
            code: 1,
            lines: errors,
        })
    }
}

/// One session line, or what is wrong with it.
pub(crate) fn parse_call(line: &str) -> Result<SessionCall, String> {
    let Members(members) =
        serde_json::from_str(line).map_err(|err| format!("not a JSON object: {err}"))?;
    let mut seen: Vec<&str> = Vec::new();
    for (key, _) in &members {
        if !["tool", "status", "result"].contains(&key.as_str()) {
            return Err(format!(
                "unknown key \"{key}\" (expected: tool, status, result)"
            ));
        }
        if seen.contains(&key.as_str()) {
            return Err(format!("key \"{key}\" appears twice"));
        }
        seen.push(key);
    }
    let member = |key: &str| {
        members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.get())
    };
    let string = |raw: &str| serde_json::from_str::<String>(raw).ok();
    let tool = member("tool")
        .and_then(string)
        .ok_or("key \"tool\": missing or not a string")?;
    let status = match member("status") {
        None => "success".to_owned(),
        Some(raw) => string(raw).ok_or("key \"status\": not a string")?,
    };
    // A string result is the text of the call; any other value goes to the pipeline as the
    // bytes the file holds, as `compress` would read them from a file.
    let result = match member("result") {
        Some(raw) if raw.starts_with('"') => {
            string(raw).ok_or("key \"result\": not a valid JSON string")?
        }
        Some(raw) => raw.to_owned(),
        None => return Err("missing key \"result\"".to_owned()),
    };
    Ok(SessionCall {
        tool,
        status,
        result,
    })
}

pub(crate) fn replay(
    cli: &Options,
    file: Option<&Path>,
    out: Option<&Path>,
    as_json: bool,
) -> Result<(), Failure> {
    let (name, text) = match file {
        Some(path) => (
            path.display().to_string(),
            std::fs::read_to_string(path).map_err(|err| {
                Failure::runtime(format!("{}: cannot read: {err}", path.display()))
            })?,
        ),
        None => ("<sample session>".to_owned(), SAMPLE_SESSION.to_owned()),
    };
    let calls = parse_session(&name, &text)?;
    // With the kill switch on no host is built (see `compress`): every call goes out as it came.
    let host = if killed() {
        None
    } else {
        Some(host(cli, true, None)?)
    };
    let mut writer = match out {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|err| {
                Failure::runtime(format!("{}: cannot create: {err}", path.display()))
            })?,
        )),
        None => None,
    };
    let bar = progress_bar(calls.len());
    for call in &calls {
        let (payload, meta) = match &host {
            Some(host) => {
                let processed = host
                    .process(Call::new(&call.tool, Input::Text(&call.result)).status(&call.status));
                (processed.payload.into_owned(), processed.meta)
            }
            None => (
                call.result.as_bytes().to_vec(),
                killed_meta(call.result.len()),
            ),
        };
        if let Some(writer) = writer.as_mut() {
            let line = json!({
                "tool": call.tool,
                "payload": String::from_utf8_lossy(&payload),
                "meta": meta.to_json(),
            });
            writeln!(writer, "{line}")
                .map_err(|err| Failure::runtime(format!("--out: cannot write: {err}")))?;
        }
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(mut writer) = writer {
        writer
            .flush()
            .map_err(|err| Failure::runtime(format!("--out: cannot write: {err}")))?;
    }
    let report = match &host {
        Some(host) => {
            host.flush();
            host.report().snapshot()
        }
        None => Report::new(tokenizer(cli).name()).snapshot(),
    };
    if as_json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.render_table());
    }
    Ok(())
}

/// A progress bar of `calls` calls for a person at a terminal; none in a pipe or a log file.
fn progress_bar(calls: usize) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(calls as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} calls {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}
