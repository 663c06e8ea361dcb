//! The real Claude Code (npm `@anthropic-ai/claude-code`, pinned in `tests/claude`, installed
//! by `.ci/run`) through `parrot-compress serve`, against a scripted Anthropic Messages upstream
//! that records every request and, turn by turn, asks Claude Code to use its own tools: Read a
//! Rust source of this repository and `corpus/github-repos.json`, run a Bash command whose output
//! is too large to keep, then recover a compressed result in the proxy (alone, then after a text
//! block), run one more command, and drop the stream of the next answer once.
//!
//! Every check runs and the test fails with the list of those that did not hold, each with what
//! the upstream received; the tokens of every tool result, before and after the proxy, are
//! printed.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use parrot_host::{Namespace, Retention, TeeStore, TokenCounter, Tokenizer};
use parrot_tee_sqlite::SqliteTeeStore;
use serde_json::{Value, json};

use crate::serve::{Proxy, Recorded};
use crate::support;

/// The text of the scripted session's last answer; Claude Code prints it as its result.
const FINAL: &str = "Done: the source, the JSON file and the build log are read.";
/// The text the model writes before its second recovery call.
const BEFORE_CALL: &str = "Let me look at the first lines of that output.";
/// The file the upstream has Claude Code read, a source of this repository.
const SOURCE: &str = "host/src/host.rs";
/// How long Claude Code may take for the whole session.
const SESSION_TIMEOUT: Duration = Duration::from_secs(120);

/// The API key Claude Code sends; the proxy scopes the session's originals by it.
const API_KEY: &str = "sk-ant-test-key";

/// The ids of the scripted model's tool calls, in the order it makes them.
const READ_SOURCE: &str = "toolu_01_read_source";
const READ_JSON: &str = "toolu_02_read_json";
const BASH_LARGE: &str = "toolu_03_bash_large";
const RECOVER: &str = "toolu_04_recover";
const RECOVER_AFTER_TEXT: &str = "toolu_05_recover_after_text";
const BASH_SMALL: &str = "toolu_06_bash_small";
const STEPS: [&str; 6] = [
    READ_SOURCE,
    READ_JSON,
    BASH_LARGE,
    RECOVER,
    RECOVER_AFTER_TEXT,
    BASH_SMALL,
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Claude Code's binary: `tests/claude` installed with `npm ci` once, when its
/// `node_modules` is missing (as `.ci/run` does; the lock is in the target directory, so test
/// binaries running at once do not race).
fn claude() -> PathBuf {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let dir = workspace().join("tests/claude");
            let lock = std::fs::File::create(support::profile_dir().join("claude-npm-ci.lock"))
                .expect("create the npm lock file");
            lock.lock().expect("lock the npm lock file");
            if !dir.join("node_modules/.package-lock.json").is_file() {
                support::require(&support::NPM);
                let status = Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&dir)
                    .status()
                    .expect("npm runs (it comes with Node.js)");
                assert!(
                    status.success(),
                    "npm ci in {} failed (it needs the npm registry): this test runs the real \
                     Claude Code; `cargo xtask test` installs it",
                    dir.display()
                );
            }
            let bin = dir.join("node_modules/.bin/claude");
            match Command::new(&bin).arg("--version").output() {
                Ok(out) if out.status.success() => bin,
                Ok(out) => panic!(
                    "{} --version failed ({}): {}; reinstall it: \
                     `cargo xtask test` runs npm ci in tests/claude when its node_modules is \
                     older than its package-lock.json, or by hand: \
                     npm ci --prefix tests/claude --no-audit --no-fund",
                    bin.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ),
                Err(err) => panic!(
                    "Claude Code did not install ({}: {err}); `cargo xtask test` \
                     installs it, or by hand: npm ci --prefix tests/claude --no-audit --no-fund",
                    bin.display()
                ),
            }
        })
        .clone()
}

// ---------------------------------------------------------------------------------------------
// The scripted upstream.

/// How the upstream answers one request.
enum Reply {
    /// A status and a JSON body.
    Json(u16, String),
    /// Server-sent events, sent in chunks and ended properly.
    Sse(Vec<String>),
    /// The first event (`message_start`), then the connection is shut without the chunked
    /// body's last chunk: a dropped stream.
    Dropped(String),
}

/// What the scripted model does; it answers every request from the request alone and the
/// drop it made, so a retried request gets the same answer as the first.
struct Script {
    project: PathBuf,
    dropped: Mutex<Option<Value>>,
    next_id: AtomicU64,
}

/// An HTTP/1.1 server on a free loopback port that records every request and answers it from
/// the script (one request per connection).
struct Upstream {
    addr: SocketAddr,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    /// When each request arrived, after the upstream started.
    arrived: Arc<Mutex<Vec<Duration>>>,
}

impl Upstream {
    fn start(script: Script) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().unwrap();
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let arrived = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(script);
        let started = Instant::now();
        {
            let recorded = Arc::clone(&recorded);
            let arrived = Arc::clone(&arrived);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { return };
                    let recorded = Arc::clone(&recorded);
                    let arrived = Arc::clone(&arrived);
                    let script = Arc::clone(&script);
                    std::thread::spawn(move || {
                        let Some(request) = crate::serve::read_request(&stream) else {
                            return;
                        };
                        let mut log = recorded.lock().unwrap();
                        log.push(request.clone());
                        arrived.lock().unwrap().push(started.elapsed());
                        drop(log);
                        write_reply(stream, script.answer(&request));
                    });
                }
            });
        }
        Upstream {
            addr,
            recorded,
            arrived,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn recorded(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }

    fn arrived(&self) -> Vec<Duration> {
        self.arrived.lock().unwrap().clone()
    }
}

fn write_reply(mut stream: TcpStream, reply: Reply) {
    let chunk = |text: &str| format!("{:x}\r\n{text}\r\n", text.len());
    let sse_head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                    transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    match reply {
        Reply::Json(status, body) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Reply::Sse(events) => {
            let _ = stream.write_all(sse_head.as_bytes());
            for event in events {
                let _ = stream.write_all(chunk(&event).as_bytes());
                let _ = stream.flush();
            }
            let _ = stream.write_all(b"0\r\n\r\n");
        }
        Reply::Dropped(first) => {
            let _ = stream.write_all(sse_head.as_bytes());
            let _ = stream.write_all(chunk(&first).as_bytes());
            let _ = stream.flush();
            std::thread::sleep(Duration::from_millis(50));
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// The names of a request's tools.
fn tool_names(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .collect()
}

/// Every content block of the request's messages.
fn blocks(body: &Value) -> impl Iterator<Item = &Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["content"].as_array())
        .flatten()
}

/// The `tool_result` block answering `id`, if the request holds one.
fn tool_result<'a>(body: &'a Value, id: &str) -> Option<&'a Value> {
    blocks(body).find(|block| block["type"] == "tool_result" && block["tool_use_id"] == id)
}

/// The `tool_use` block with `id`.
fn tool_use<'a>(body: &'a Value, id: &str) -> Option<&'a Value> {
    blocks(body).find(|block| block["type"] == "tool_use" && block["id"] == id)
}

/// A tool result's text: its string content, or its text blocks joined.
fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The tee key of a compressed result: its pointer line's, or its `_tee` member's.
fn tee_key(text: &str) -> Option<String> {
    crate::support::pointed(text).map(|pointed| pointed.key)
}

/// What the model reads of a result: the text before its pointer, else the text.
fn visible(text: &str) -> String {
    crate::support::pointed(text).map_or_else(|| text.to_owned(), |pointed| pointed.text)
}

/// Whether a Messages request (not a token count): its path is `/v1/messages`, with Claude
/// Code's `?beta=true` query.
fn is_messages(request: &Recorded) -> bool {
    request.path.starts_with("/v1/messages?") || request.path == "/v1/messages"
}

impl Script {
    fn answer(&self, request: &Recorded) -> Reply {
        if request.path.contains("/count_tokens") {
            let tokens = request.body.len() / 4;
            return Reply::Json(200, json!({"input_tokens": tokens}).to_string());
        }
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return Reply::Json(
                400,
                json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": "the scripted upstream got a body that is not JSON"}})
                .to_string(),
            );
        };
        let stream = body["stream"] == true;
        let model = body["model"].as_str().unwrap_or("claude-test").to_owned();
        if !is_messages(request) || !tool_names(&body).contains(&"Bash") {
            // Side requests (titles, topics, summaries): a short answer.
            return self.message(
                &model,
                stream,
                vec![text_block("Scripted answer.")],
                "end_turn",
            );
        }
        let done = STEPS
            .iter()
            .rposition(|id| tool_use(&body, id).is_some())
            .map_or(0, |last| last + 1);
        let file = |name: &str| self.project.join(name).display().to_string();
        let (content, stop) = match STEPS.get(done) {
            Some(&READ_SOURCE) => (
                vec![call(
                    READ_SOURCE,
                    "Read",
                    json!({"file_path": file("host.rs")}),
                )],
                "tool_use",
            ),
            Some(&READ_JSON) => (
                vec![call(
                    READ_JSON,
                    "Read",
                    json!({"file_path": file("github-repos.json")}),
                )],
                "tool_use",
            ),
            Some(&BASH_LARGE) => (
                vec![call(
                    BASH_LARGE,
                    "Bash",
                    json!({"command": "cat build-log.txt", "description": "Print the build log"}),
                )],
                "tool_use",
            ),
            Some(&RECOVER) => match pointer(&body) {
                Some(key) => (
                    vec![call(RECOVER, "wm_get_result", json!({"key": key}))],
                    "tool_use",
                ),
                None => (
                    vec![text_block(
                        "No tool result carries a _tee pointer: nothing to recover.",
                    )],
                    "end_turn",
                ),
            },
            Some(&RECOVER_AFTER_TEXT) => {
                let key = pointer(&body).unwrap_or_default();
                (
                    vec![
                        text_block(BEFORE_CALL),
                        call(
                            RECOVER_AFTER_TEXT,
                            "wm_get_result",
                            json!({"key": key, "lines": "1-5"}),
                        ),
                    ],
                    "tool_use",
                )
            }
            Some(&BASH_SMALL) => (
                vec![call(
                    BASH_SMALL,
                    "Bash",
                    json!({"command": "wc -l build-log.txt", "description": "Count the lines"}),
                )],
                "tool_use",
            ),
            _ => {
                let mut dropped = self.dropped.lock().unwrap();
                if dropped.is_none() {
                    *dropped = Some(body["messages"].clone());
                    let start = self.message_start(&model);
                    return Reply::Dropped(start);
                }
                (vec![text_block(FINAL)], "end_turn")
            }
        };
        self.message(&model, stream, content, stop)
    }

    fn message_start(&self, model: &str) -> String {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        event(
            "message_start",
            json!({"type": "message_start", "message": {"id": format!("msg_{id:04}"),
                "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 100, "output_tokens": 1}}}),
        )
    }

    /// An answer, streamed or not as the request asked. Each answer has its own message id:
    /// Claude Code merges consecutive assistant messages that share one.
    fn message(&self, model: &str, stream: bool, content: Vec<Value>, stop: &str) -> Reply {
        if !stream {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            return Reply::Json(
                200,
                json!({"id": format!("msg_{id:04}"), "type": "message", "role": "assistant",
                    "model": model, "content": content, "stop_reason": stop,
                    "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 20}})
                .to_string(),
            );
        }
        let mut events = vec![self.message_start(model)];
        for (index, block) in content.iter().enumerate() {
            let (start, delta) = if block["type"] == "text" {
                (
                    json!({"type": "text", "text": ""}),
                    json!({"type": "text_delta", "text": block["text"]}),
                )
            } else {
                (
                    json!({"type": "tool_use", "id": block["id"], "name": block["name"],
                        "input": {}}),
                    json!({"type": "input_json_delta",
                        "partial_json": block["input"].to_string()}),
                )
            };
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
            events.push(event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        events.push(event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": 20}}),
        ));
        events.push(event("message_stop", json!({"type": "message_stop"})));
        Reply::Sse(events)
    }
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// The key of a `_tee` pointer in the request's tool results: the large Bash output's first,
/// else any.
fn pointer(body: &Value) -> Option<String> {
    let bash = tool_result(body, BASH_LARGE).and_then(|block| tee_key(&result_text(block)));
    bash.or_else(|| {
        blocks(body)
            .filter(|block| block["type"] == "tool_result")
            .find_map(|block| tee_key(&result_text(block)))
    })
}

// ---------------------------------------------------------------------------------------------
// Raw bytes of a body.

/// The bytes of the top-level member `name` of the JSON object `body`, as sent.
fn member_bytes<'a>(body: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let mut at = skip_ws(body, 0);
    if body.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_ws(body, at);
        if body.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = value_end(body, at)?;
        let key: String = serde_json::from_slice(&body[at..key_end]).ok()?;
        at = skip_ws(body, key_end);
        if body.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_ws(body, at + 1);
        let end = value_end(body, start)?;
        if key == name {
            return Some(&body[start..end]);
        }
        at = skip_ws(body, end);
        match body.get(at) {
            Some(b',') => at += 1,
            _ => return None,
        }
    }
}

fn skip_ws(body: &[u8], mut at: usize) -> usize {
    while body.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

/// The end of the JSON value that starts at `at`.
fn value_end(body: &[u8], at: usize) -> Option<usize> {
    let string_end = |mut i: usize| -> Option<usize> {
        i += 1;
        loop {
            match *body.get(i)? {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
    };
    match *body.get(at)? {
        b'"' => string_end(at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match *body.get(i)? {
                    b'"' => i = string_end(i)?,
                    b'{' | b'[' => {
                        depth += 1;
                        i += 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        i += 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => i += 1,
                }
            }
        }
        _ => {
            let mut i = at;
            while body
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                i += 1;
            }
            Some(i)
        }
    }
}

/// `value` without its `cache_control` members, which Claude Code moves to the newest blocks on
/// every turn.
fn without_cache_control(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| key.as_str() != "cache_control")
                .map(|(key, value)| (key.clone(), without_cache_control(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_cache_control).collect()),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// The session.

/// Every line of `file` is in `seen` as Claude Code's Read numbers it (`N\t<line>`), the text
/// compared without its indentation (a lossless transformation may re-indent); the first lines
/// that are not.
fn missing_lines(file: &str, seen: &str) -> Vec<String> {
    let numbered: BTreeMap<&str, &str> = seen
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .collect();
    file.lines()
        .enumerate()
        .filter(|(i, line)| {
            numbered
                .get((i + 1).to_string().as_str())
                .is_none_or(|text| text.trim() != line.trim())
        })
        .map(|(i, line)| format!("{}\t{line}", i + 1))
        .collect()
}

/// Claude Code's session transcript entries (`~/.claude/projects/*/*.jsonl`).
fn transcript(home: &Path) -> Vec<Value> {
    let projects = home.join(".claude/projects");
    let mut entries = Vec::new();
    for dir in std::fs::read_dir(&projects).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if file.path().extension().is_some_and(|ext| ext == "jsonl") {
                let text = std::fs::read_to_string(file.path()).unwrap_or_default();
                entries.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
            }
        }
    }
    entries
}

/// The file Claude Code saved the large output to (`…/tool-results/<id>.txt`), found by content.
fn saved_output(home: &Path, content: &[u8]) -> Option<PathBuf> {
    let mut stack = vec![home.join(".claude/projects")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.parent().is_some_and(|p| p.ends_with("tool-results"))
                && std::fs::read(&path).is_ok_and(|saved| saved == content)
            {
                return Some(path);
            }
        }
    }
    None
}

/// Claude Code's size label (`458.2KB`), as its notice writes it.
fn size_label(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    }
}

/// A one-line view of a request for the messages of failed checks.
fn describe(index: usize, request: &Recorded) -> String {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| {
            let text = without_cache_control(m).to_string();
            text.chars().take(300).collect::<String>()
        })
        .unwrap_or_default();
    format!(
        "request {index} {} ({} bytes, {} tools, {} messages, retry {}): last message {last}",
        request.path,
        request.body.len(),
        tool_names(&body).len(),
        body["messages"].as_array().map_or(0, Vec::len),
        request.header("x-stainless-retry-count").unwrap_or("-"),
    )
}

#[test]
fn claude_code_through_serve_keeps_its_reads_its_cache_prefix_and_its_recoveries() {
    let claude = claude();
    let project = tempfile::tempdir().expect("temp dir");
    let home = tempfile::tempdir().expect("temp dir");
    let source = std::fs::read_to_string(workspace().join(SOURCE)).expect("the source file");
    let repos =
        std::fs::read_to_string(workspace().join("corpus/github-repos.json")).expect("corpus");
    let log = std::fs::read(workspace().join("corpus/build-log.txt")).expect("corpus");
    std::fs::write(project.path().join("host.rs"), &source).unwrap();
    std::fs::write(project.path().join("github-repos.json"), &repos).unwrap();
    std::fs::write(project.path().join("build-log.txt"), &log).unwrap();
    // Claude Code names files by the real path of its working directory.
    let project_path = project.path().canonicalize().unwrap();

    let upstream = Upstream::start(Script {
        project: project_path.clone(),
        dropped: Mutex::new(None),
        next_id: AtomicU64::new(1),
    });
    let proxy = Proxy::start(&upstream.url(), false);

    let started = Instant::now();
    let mut child = Command::new(&claude)
        .args([
            "-p",
            "Read the files of this project and tell me what they hold.",
            "--output-format",
            "json",
            "--dangerously-skip-permissions",
        ])
        .current_dir(&project_path)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", &proxy.url)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("IS_SANDBOX", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("{} starts: {err}", claude.display()));
    let deadline = Instant::now() + SESSION_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .ok();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .ok();
    let session_secs = started.elapsed().as_secs_f64();

    let recorded = upstream.recorded();
    let bodies: Vec<Value> = recorded
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
        .collect();
    let main: Vec<usize> = (0..recorded.len())
        .filter(|&i| is_messages(&recorded[i]) && tool_names(&bodies[i]).contains(&"Bash"))
        .collect();
    let arrived = upstream.arrived();
    let sequence: Vec<String> = recorded
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{:>6.2} s {}", arrived[i].as_secs_f64(), describe(i, r)))
        .collect();
    eprintln!(
        "Claude Code session: {session_secs:.1} s, {} requests reached the upstream:\n{}",
        recorded.len(),
        sequence.join("\n")
    );

    let mut failures: Vec<String> = Vec::new();

    // The session succeeds.
    let output: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    match status {
        Some(status) if status.success() && output["result"] == FINAL => {}
        Some(status) => failures.push(format!(
            "the session did not succeed: Claude Code exited with {status}, result {} \
             (is_error {}); stderr: {stderr}",
            output["result"], output["is_error"]
        )),
        None => failures.push(format!(
            "the session did not end within {SESSION_TIMEOUT:?}; stdout: {stdout}; stderr: {stderr}"
        )),
    }

    // Each Read reaches the upstream with every line of the file readable.
    for (id, name, text) in [
        (READ_SOURCE, "the Rust source", &source),
        (READ_JSON, "github-repos.json", &repos),
    ] {
        let seen: Vec<(usize, String)> = main
            .iter()
            .filter_map(|&i| tool_result(&bodies[i], id).map(|b| (i, result_text(b))))
            .collect();
        if seen.is_empty() {
            failures.push(format!("no request carried the Read of {name}"));
        }
        if let Some((i, content)) = seen
            .iter()
            .find(|(_, content)| !missing_lines(text, &visible(content)).is_empty())
        {
            let missing = missing_lines(text, &visible(content));
            failures.push(format!(
                "the Read of {name} ({} lines) reached the upstream with {} of its lines not \
                 readable (request {i}; the first: {:?}); the model saw {} chars: {:?}",
                text.lines().count(),
                missing.len(),
                &missing[..missing.len().min(3)],
                content.chars().count(),
                content.chars().take(400).collect::<String>()
            ));
        }
    }

    // The truncation notice of the large Bash output is verbatim.
    let saved = saved_output(home.path(), &log);
    match &saved {
        None => failures.push(
            "Claude Code saved no copy of the large Bash output under ~/.claude/projects".into(),
        ),
        Some(path) => {
            let notice = format!(
                "Output too large ({}). Full output saved to: {}",
                size_label(log.len()),
                path.display()
            );
            for &i in &main {
                if let Some(block) = tool_result(&bodies[i], BASH_LARGE) {
                    let seen = visible(&result_text(block));
                    let lines: Vec<&str> = seen.lines().collect();
                    if !lines.contains(&notice.as_str()) || !lines.contains(&"Preview (first 2KB):")
                    {
                        failures.push(format!(
                            "request {i}: the large Bash output's notice {notice:?} (and its \
                             \"Preview (first 2KB):\" line) is not verbatim in what the model \
                             saw: {:?}",
                            seen.chars().take(600).collect::<String>()
                        ));
                        break;
                    }
                }
            }
        }
    }

    // `tools` is byte-identical in every request of the conversation.
    if let Some(&first) = main.first() {
        let tools = member_bytes(&recorded[first].body, "tools");
        for &i in &main[1..] {
            let other = member_bytes(&recorded[i].body, "tools");
            if other != tools {
                failures.push(format!(
                    "`tools` changed between request {first} ({} bytes, {} tools: {:?}) and \
                     request {i} ({} bytes, {} tools: {:?})",
                    tools.map_or(0, <[u8]>::len),
                    tool_names(&bodies[first]).len(),
                    tool_names(&bodies[first]),
                    other.map_or(0, <[u8]>::len),
                    tool_names(&bodies[i]).len(),
                    tool_names(&bodies[i]),
                ));
                break;
            }
        }
    } else {
        failures.push("no request of the conversation reached the upstream".into());
    }

    // A recovery answered in the proxy is in every later request, the same each time.
    for id in [RECOVER, RECOVER_AFTER_TEXT] {
        let answered = main
            .iter()
            .find(|&&i| tool_result(&bodies[i], id).is_some());
        let Some(&answered) = answered else {
            failures.push(format!(
                "no request carried an answer to the recovery call {id}"
            ));
            continue;
        };
        let call = without_cache_control(tool_use(&bodies[answered], id).unwrap());
        let result = without_cache_control(tool_result(&bodies[answered], id).unwrap());
        if result["is_error"] == true {
            failures.push(format!(
                "request {answered}: the recovery call {id} was answered with an error: {}",
                result_text(&result).chars().take(300).collect::<String>()
            ));
        }
        for &i in main.iter().filter(|&&i| i > answered) {
            let later_call = tool_use(&bodies[i], id).map(without_cache_control);
            let later_result = tool_result(&bodies[i], id).map(without_cache_control);
            if later_call.as_ref() != Some(&call) || later_result.as_ref() != Some(&result) {
                failures.push(format!(
                    "the recovery {id} answered in request {answered} is {} in the later {}",
                    if later_call.is_none() && later_result.is_none() {
                        "missing"
                    } else {
                        "changed"
                    },
                    describe(i, &recorded[i])
                ));
                break;
            }
        }
    }

    // Text before the call: the proxy answers it, Claude Code never sees it.
    for (i, body) in bodies.iter().enumerate() {
        if let Some(block) = blocks(body).find(|block| {
            block["type"] == "tool_result" && result_text(block).contains("No such tool available")
        }) {
            failures.push(format!(
                "request {i}: Claude Code answered a recovery call itself: {}",
                result_text(block)
            ));
            break;
        }
    }

    // The dropped stream: it held a pointer, Claude Code saw a dropped connection and sent
    // the same conversation again.
    let drops: Vec<usize> = main
        .iter()
        .copied()
        .filter(|&i| tool_use(&bodies[i], BASH_SMALL).is_some())
        .collect();
    match drops.as_slice() {
        [] => failures.push("the conversation never reached the dropped answer".into()),
        [dropped, rest @ ..] => {
            if pointer(&bodies[*dropped]).is_none() {
                failures.push(format!(
                    "request {dropped}, whose stream was dropped, held no `_tee` pointer"
                ));
            }
            let same = rest.iter().find(|&&i| {
                without_cache_control(&bodies[i]["messages"])
                    == without_cache_control(&bodies[*dropped]["messages"])
            });
            if same.is_none() {
                failures.push(format!(
                    "after the stream of request {dropped} was dropped, the upstream never saw \
                     the same conversation again"
                ));
            }
            let errors: Vec<Value> = transcript(home.path())
                .into_iter()
                .filter(|entry| entry["subtype"] == "api_error")
                .map(|entry| entry["error"].clone())
                .collect();
            eprintln!("the errors Claude Code's transcript records: {errors:?}");
            // An answer with an HTTP status (the proxy's 502) is not a dropped stream.
            if let Some(error) = errors.iter().find(|error| !error["status"].is_null()) {
                failures.push(format!(
                    "Claude Code did not see a dropped stream but an HTTP {} answer: {}",
                    error["status"], error["message"]
                ));
            }
        }
    }

    // Tokens of each tool result, before and after the proxy (each result once, as first seen).
    let store =
        SqliteTeeStore::open(proxy.project().join(".parrot/tee.db"), Retention::default()).ok();
    // The proxy keeps each original in the namespace of the session's API key.
    let namespace = Namespace::of_secret(API_KEY.as_bytes());
    let counter = Tokenizer::O200k;
    let mut per_tool: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut per_result: Vec<String> = Vec::new();
    let mut counted: Vec<String> = Vec::new();
    for &i in &main {
        for block in blocks(&bodies[i]).filter(|b| b["type"] == "tool_result") {
            let id = block["tool_use_id"].as_str().unwrap_or_default().to_owned();
            if counted.contains(&id) {
                continue;
            }
            counted.push(id.clone());
            let Some(name) = tool_use(&bodies[i], &id).and_then(|u| u["name"].as_str()) else {
                continue;
            };
            let after = result_text(block);
            let before = tee_key(&after)
                .and_then(|key| {
                    store
                        .as_ref()?
                        .get(&namespace.scoped_key(&key))
                        .ok()
                        .flatten()
                })
                .map_or_else(
                    || after.clone(),
                    |o| String::from_utf8_lossy(&o).into_owned(),
                );
            let (tokens_before, tokens_after) = (counter.count(&before), counter.count(&after));
            per_result.push(format!(
                "  {id} ({name}): {} -> {} chars, {tokens_before} -> {tokens_after} tokens",
                before.chars().count(),
                after.chars().count()
            ));
            let row = per_tool.entry(name.to_owned()).or_default();
            row.0 += 1;
            row.1 += tokens_before;
            row.2 += tokens_after;
        }
    }
    eprintln!(
        "each tool result as first seen, before and after the proxy (o200k):\n{}",
        per_result.join("\n")
    );
    eprintln!("by tool:");
    for (tool, (results, before, after)) in &per_tool {
        let saved = 100.0 * (1.0 - *after as f64 / (*before).max(1) as f64);
        eprintln!("  {tool}: {results} results, {before} -> {after} tokens ({saved:.1}% saved)");
    }
    let report = report(&proxy.url);
    eprintln!("serve's report (every result of every request): {report}");
    drop(store);
    proxy.stop();

    assert!(
        failures.is_empty(),
        "{} checks failed:\n- {}",
        failures.len(),
        failures.join("\n- ")
    );
}

/// `GET /parrot/report`, the proxy's savings so far.
fn report(base: &str) -> String {
    let addr = base.strip_prefix("http://").unwrap();
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return "unreachable".into();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = write!(
        stream,
        "GET /parrot/report HTTP/1.0\r\nhost: {addr}\r\n\r\n"
    );
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_once("\r\n\r\n")
        .map_or(answer.clone(), |(_, body)| body.to_owned())
}
