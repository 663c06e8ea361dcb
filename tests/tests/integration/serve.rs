//! `parrot-compress serve`, driven by the official SDKs (PyPI `anthropic` and `openai`, pinned
//! in `tests/llm/requirements.txt`, installed in `tests/llm/.venv` once): each test starts a
//! scripted upstream on a free loopback port (it records every request and answers with canned
//! responses, plain JSON or server-sent events), the proxy in front of it, and a Python script
//! (`tests/llm/client.py`) that sends one request through the SDK, pointed at the proxy.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use parrot_host::{Call, Host, Input, MemoryTeeStore, Retention, Skip, TeeStore, Tokenizer};
use parrot_serve::llm::Api;
use parrot_tee_sqlite::SqliteTeeStore;
use serde_json::{Value, json};

use crate::support;

mod merges;

fn llm_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("llm")
}

/// The venv's python, the venv created and the pinned SDKs installed once (the lock is in the
/// target directory, so test binaries running at once do not race).
fn python() -> PathBuf {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let venv = llm_dir().join(".venv");
            let python = venv.join("bin/python");
            let lock = std::fs::File::create(support::profile_dir().join("llm-venv.lock"))
                .expect("create the venv lock file");
            lock.lock().expect("lock the venv lock file");
            let installed = venv.join("installed.txt");
            let wanted = std::fs::read_to_string(llm_dir().join("requirements.txt"))
                .expect("tests/llm/requirements.txt");
            if std::fs::read_to_string(&installed).ok().as_deref() != Some(wanted.as_str()) {
                support::require(&support::PYTHON3);
                let status = Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(&venv)
                    .status()
                    .expect("python3 runs");
                assert!(
                    status.success(),
                    "python3 -m venv {} failed: the serve tests need python3's venv module \
                     (Debian: apt-get install python3-venv)",
                    venv.display()
                );
                let status = Command::new(&python)
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                    ])
                    .arg("-r")
                    .arg(llm_dir().join("requirements.txt"))
                    .status()
                    .expect("the venv's python runs");
                assert!(
                    status.success(),
                    "pip install -r tests/llm/requirements.txt failed (it needs PyPI): the \
                     serve tests drive the official LLM SDKs; `cargo xtask test` installs them"
                );
                std::fs::write(&installed, &wanted).expect("write the venv's installed.txt");
            }
            python
        })
        .clone()
}

// ---------------------------------------------------------------------------------------------
// The scripted upstream.

/// One canned response.
#[derive(Clone)]
enum Canned {
    /// A status and a JSON body.
    Json(u16, String),
    /// Server-sent events: each chunk written after its pause.
    Sse(Vec<(Duration, String)>),
    /// Server-sent events in one chunk of a chunked body, then the connection closed without
    /// the body's end: a stream dropped.
    Dropped(String),
}

/// A request the upstream received.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the upstream got JSON")
    }
}

/// An HTTP/1.1 server on a free loopback port: one connection per request, closed after the
/// answer (so a streamed answer ends with the connection).
struct Upstream {
    addr: SocketAddr,
    recorded: Arc<Mutex<Vec<Recorded>>>,
}

impl Upstream {
    fn start(script: Vec<Canned>) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().unwrap();
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        {
            let recorded = Arc::clone(&recorded);
            let script = Arc::clone(&script);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { return };
                    let recorded = Arc::clone(&recorded);
                    let script = Arc::clone(&script);
                    std::thread::spawn(move || serve_one(stream, &recorded, &script));
                }
            });
        }
        Upstream { addr, recorded }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn recorded(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }
}

/// Reads one HTTP/1.1 request (its body by `content-length` or chunked), or `None` when the
/// connection ends first or is not HTTP.
pub(crate) fn read_request(stream: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if let Some(length) = header("content-length") {
        body.resize(length.parse().ok()?, 0);
        reader.read_exact(&mut body).ok()?;
    } else if header("transfer-encoding").is_some_and(|te| te.contains("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    Some(Recorded {
        path,
        headers,
        body,
    })
}

fn serve_one(stream: TcpStream, recorded: &Mutex<Vec<Recorded>>, script: &Mutex<VecDeque<Canned>>) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    recorded.lock().unwrap().push(request);
    let canned =
        script.lock().unwrap().pop_front().unwrap_or_else(|| {
            Canned::Json(500, r#"{"error": "no canned response left"}"#.to_owned())
        });
    let mut stream = stream;
    match canned {
        Canned::Json(status, body) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 x-upstream: scripted\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Canned::Sse(chunks) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                 connection: close\r\n\r\n"
            );
            for (pause, chunk) in chunks {
                std::thread::sleep(pause);
                let _ = stream.write_all(chunk.as_bytes());
                let _ = stream.flush();
            }
        }
        Canned::Dropped(chunk) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                 transfer-encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n",
                chunk.len()
            );
            let _ = stream.flush();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The proxy and the SDK.

/// `parrot-compress serve` in a fresh project, in front of `upstream` for both APIs.
pub(crate) struct Proxy {
    child: Child,
    pub(crate) url: String,
    _project: tempfile::TempDir,
    stderr: Arc<Mutex<String>>,
}

impl Proxy {
    pub(crate) fn start(upstream: &str, kill_switch: bool) -> Proxy {
        Proxy::start_with(upstream, kill_switch, &[])
    }

    /// [`Proxy::start`] with more options of `serve`.
    pub(crate) fn start_with(upstream: &str, kill_switch: bool, options: &[&str]) -> Proxy {
        let project = tempfile::tempdir().expect("temp dir");
        let mut command = Command::new(support::binary());
        command
            .arg("--project")
            .arg(project.path())
            .args(["serve", "--listen", "127.0.0.1:0", "--report"])
            .args(options)
            .args([
                "--upstream-anthropic",
                upstream,
                "--upstream-openai",
                upstream,
            ])
            .env_remove("PARROT_PLUGIN_PATH")
            .env_remove("PARROT_COMPRESSION_DISABLED")
            .env("PARROT_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if kill_switch {
            command.env("PARROT_COMPRESSION_DISABLED", "1");
        }
        let mut child = command.spawn().expect("parrot-compress serve starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the listening line");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no listening line: {line:?}"))
            .to_owned();
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let stderr = Arc::clone(&stderr);
            let mut pipe = child.stderr.take().unwrap();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    stderr
                        .lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        Proxy {
            child,
            url,
            _project: project,
            stderr,
        }
    }

    /// The project folder the proxy runs in (its tee store is `.parrot/tee.db` there).
    pub(crate) fn project(&self) -> &Path {
        self._project.path()
    }

    /// Stops the proxy with SIGTERM and returns its stderr.
    pub(crate) fn stop(mut self) -> String {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let exit = self.child.wait().expect("the proxy ends");
        assert!(exit.success(), "the proxy ended with {exit}");
        std::thread::sleep(Duration::from_millis(100));
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends one request through the SDK; returns what the script printed.
fn sdk(sdk: &str, api: &str, base_url: &str, kwargs: &Value, stream: bool) -> Value {
    let spec =
        json!({"sdk": sdk, "api": api, "base_url": base_url, "kwargs": kwargs, "stream": stream});
    let mut child = Command::new(python())
        .arg(llm_dir().join("client.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the venv's python runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("client.py ends");
    assert!(
        out.status.success(),
        "client.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        panic!(
            "client.py printed no JSON ({err}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

// ---------------------------------------------------------------------------------------------
// What the pipeline makes of a result, independently of the proxy.

fn corpus(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus")
            .join(name),
    )
    .expect("a corpus file")
}

/// A host configured as `serve` configures its own (tee lossless, large results compressed
/// off the request's thread, the default tokenizer), in a fresh project.
fn reference_host() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tokenizer(Arc::new(Tokenizer::O200k))
        .tee_lossless(true)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .build()
        .expect("a host");
    (dir, host)
}

/// The text the model should see for `tool`'s result `text`, and its tee key: processed as
/// `serve` processes it, off the request's thread (a large result as an executor call).
fn processed(host: &Host, tool: &str, text: &str) -> (String, String) {
    let processed = host.process_offloaded(Call::new(tool, Input::Text(text)));
    assert!(processed.meta.compressed, "{tool}'s result is compressed");
    let key = processed.meta.tee_key.clone().expect("a tee key");
    (processed.text().expect("text").to_owned(), key)
}

fn literal(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// `body` with each `(from, to)` literal replaced, each found exactly once.
fn replaced(body: &[u8], edits: &[(String, String)]) -> String {
    let mut text = String::from_utf8(body.to_vec()).unwrap();
    for (from, to) in edits {
        assert_eq!(
            text.matches(from.as_str()).count(),
            1,
            "the SDK's body holds the literal once"
        );
        text = text.replace(from.as_str(), to);
    }
    text
}

/// `body` without the recovery tool's definition (`definition` as inserted: `,{...}` at the end
/// of `tools`, or a `,"tools":[{...}]` member).
fn without_tool(body: &[u8], api: Api) -> String {
    let text = String::from_utf8(body.to_vec()).unwrap();
    let definition = parrot_serve::recovery::definition(api);
    let member = format!(",\"tools\":[{definition}]");
    let element = format!(",{definition}");
    assert!(
        text.matches(&member).count() + text.matches(&element).count() >= 1,
        "the recovery tool is offered: {}",
        &text[text.len().saturating_sub(300)..]
    );
    if text.contains(&member) {
        text.replacen(&member, "", 1)
    } else {
        text.replacen(&element, "", 1)
    }
}

// ---------------------------------------------------------------------------------------------
// Canned answers.

fn anthropic_message(content: Value, stop: &str) -> String {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 20}
    })
    .to_string()
}

fn chat_completion(message: Value, finish: &str) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
    .to_string()
}

fn response(output: Value) -> String {
    json!({
        "id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
        "model": "gpt-test", "output": output, "parallel_tool_calls": true,
        "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}}
    })
    .to_string()
}

fn anthropic_stream(text: &str, pause: Duration) -> Canned {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    Canned::Sse(vec![
        (
            Duration::ZERO,
            event(
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_02", "type": "message",
                    "role": "assistant", "model": "claude-test", "content": [],
                    "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 100, "output_tokens": 1}}}),
            ) + &event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
            ),
        ),
        (
            pause,
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": text}}),
            ) + &event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ) + &event(
                "message_delta",
                json!({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                    "usage": {"output_tokens": 5}}),
            ) + &event("message_stop", json!({"type": "message_stop"})),
        ),
    ])
}

// ---------------------------------------------------------------------------------------------
// Conversations.

/// An Anthropic conversation with a query result, a log (as a text block), and a tool error.
fn anthropic_conversation(rows: &str, log: &str) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 1024,
        "system": "You are a careful analyst.",
        "tools": [
            {"name": "sql", "description": "Runs SQL.", "input_schema": {"type": "object"}},
            {"name": "bash", "description": "Runs a command.", "input_schema": {"type": "object"}}
        ],
        "messages": [
            {"role": "user", "content": "Which stores are active, and do the tests pass?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "sql", "input": {"q": "select *"}},
                {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"cmd": "cargo test"}},
                {"type": "tool_use", "id": "toolu_3", "name": "bash", "input": {"cmd": "cat x"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": rows},
                {"type": "tool_result", "tool_use_id": "toolu_2",
                 "content": [{"type": "text", "text": log}]},
                {"type": "tool_result", "tool_use_id": "toolu_3", "is_error": true,
                 "content": rows}
            ]}
        ]
    })
}

fn chat_conversation(rows: &str) -> Value {
    json!({
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You are a careful analyst."},
            {"role": "user", "content": "Which stores are active?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "sql", "arguments": "{\"q\": \"select *\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": rows}
        ],
        "tools": [{"type": "function", "function": {"name": "sql", "parameters": {"type": "object"}}}]
    })
}

fn responses_conversation(rows: &str) -> Value {
    json!({
        "model": "gpt-test",
        "instructions": "You are a careful analyst.",
        "input": [
            {"role": "user", "content": "Which stores are active?"},
            {"type": "function_call", "call_id": "call_1", "name": "sql",
             "arguments": "{\"q\": \"select *\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": rows}
        ]
    })
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// Anthropic Messages through the SDK: the query result and the log arrive compressed, exactly
/// as the pipeline makes them, the tool error unchanged, every other byte as the SDK sent it
/// (the SDK's own bytes are what it sends to the upstream directly), the recovery tool
/// appended to `tools`; the model's `wm_get_result` call is answered inside the proxy, whose
/// follow-up carries the original, and the SDK sees only the final answer.
#[test]
fn anthropic_results_arrive_compressed_and_recovery_happens_in_the_proxy() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let (_dir, host) = reference_host();
    let (rows_after, rows_key) = processed(&host, "sql", &rows);
    let (log_after, _) = processed(&host, "bash", &log);
    let conversation = anthropic_conversation(&rows, &log);

    // The SDK's own bytes, sent to the upstream directly.
    let direct = Upstream::start(vec![Canned::Json(
        200,
        anthropic_message(json!([{"type": "text", "text": "direct"}]), "end_turn"),
    )]);
    let answer = sdk("anthropic", "messages", &direct.url(), &conversation, false);
    assert_eq!(answer["result"]["content"][0]["text"], "direct");
    let sent = direct.recorded().remove(0);

    let upstream = Upstream::start(vec![
        Canned::Json(
            200,
            anthropic_message(
                json!([
                    {"type": "text", "text": "I need row 17."},
                    {"type": "tool_use", "id": "toolu_9", "name": "wm_get_result",
                     "input": {"key": rows_key, "pointer": "/rows/17"}}
                ]),
                "tool_use",
            ),
        ),
        Canned::Json(
            200,
            anthropic_message(
                json!([{"type": "text", "text": "Store S0017 is active."}]),
                "end_turn",
            ),
        ),
        Canned::Json(
            200,
            anthropic_message(
                json!([{"type": "text", "text": "You are welcome."}]),
                "end_turn",
            ),
        ),
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "Again."}]), "end_turn"),
        ),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let answer = sdk("anthropic", "messages", &proxy.url, &conversation, false);
    assert_eq!(
        answer["result"]["content"],
        json!([{"type": "text", "text": "I need row 17.", "citations": null},
               {"type": "text", "text": "Store S0017 is active.", "citations": null}]),
        "one message: the text before the call, then the follow-up's answer: {answer}"
    );
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2, "the request and the proxy's follow-up");
    let first = &recorded[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(
        first.header("authorization"),
        Some("Bearer sk-ant-test-key")
    );
    assert_eq!(
        first.header("anthropic-version"),
        sent.header("anthropic-version")
    );
    // The tool error's literal (the same rows) stays: replace only the first two occurrences.
    let sdk_body = String::from_utf8(sent.body.clone()).unwrap();
    let rows_literal = literal(&rows);
    assert_eq!(
        sdk_body.matches(&rows_literal).count(),
        2,
        "the result and the tool error"
    );
    let expected = sdk_body
        .replacen(&rows_literal, &literal(&rows_after), 1)
        .replacen(&literal(&log), &literal(&log_after), 1);
    assert_eq!(
        without_tool(&first.body, Api::AnthropicMessages),
        expected,
        "only the two results changed, and the recovery tool was appended"
    );
    let body = first.json();
    assert_eq!(
        body["messages"][2]["content"][2]["content"],
        rows.as_str(),
        "is_error unchanged"
    );
    assert_eq!(body["tools"].as_array().unwrap().len(), 3);
    assert_eq!(body["tools"][2]["name"], "wm_get_result");

    // The follow-up: the request's bytes up to its last message, then the model's turn and the
    // proxy's answer.
    let follow = &recorded[1];
    let messages = follow.json()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 5);
    assert_eq!(messages[3]["role"], "assistant");
    assert_eq!(messages[3]["content"][1]["name"], "wm_get_result");
    let result = &messages[4]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_9");
    let text = result["content"].as_str().unwrap();
    let row17: Value = serde_json::from_str::<Value>(&rows).unwrap()["rows"][17].clone();
    assert!(
        text.starts_with("[wm_get_result"),
        "a retrieval's header: {text}"
    );
    let part: Value = serde_json::from_str(text.split_once('\n').unwrap().1).unwrap();
    assert_eq!(part, row17, "row 17 of the original");
    assert_shares_messages(&first.body, &follow.body, "the follow-up");

    // The client's next request holds the merged message; the upstream sees the turns the
    // model saw in its place, the call and its answer as the follow-up sent them, the same
    // bytes each time.
    let mut next = conversation.clone();
    let merged = json!({"role": "assistant", "content": answer["result"]["content"]});
    next["messages"].as_array_mut().unwrap().push(merged);
    next["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "Thanks."}));
    for _ in 0..2 {
        sdk("anthropic", "messages", &proxy.url, &next, false);
    }
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 4, "no recovery round for the next requests");
    let follow_text = String::from_utf8(follow.body.clone()).unwrap();
    let call_and_answer = &follow_text[follow_text
        .find("{\"type\":\"tool_use\",\"id\":\"toolu_9\"")
        .unwrap()
        ..follow_text.len() - tail_after_messages(&follow.body)];
    for later in &recorded[2..] {
        let text = String::from_utf8(later.body.clone()).unwrap();
        assert!(
            text.contains(call_and_answer),
            "the call and its answer are back, byte for byte"
        );
        let messages = later.json()["messages"].clone();
        let roles: Vec<&str> = messages
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            [
                "user",
                "assistant",
                "user",
                "assistant",
                "user",
                "assistant",
                "user"
            ]
        );
        assert_eq!(messages[3]["content"][0]["text"], "I need row 17.");
        assert_eq!(messages[3]["content"][1]["id"], "toolu_9");
        assert_eq!(messages[4]["content"][0]["tool_use_id"], "toolu_9");
        assert_eq!(messages[5]["content"][0]["text"], "Store S0017 is active.");
    }
    assert_eq!(recorded[2].body, recorded[3].body);
    let stderr = proxy.stop();
    assert!(
        !stderr.contains("sk-ant-test-key"),
        "no API key in the log: {stderr}"
    );
    assert!(stderr.contains("sql"), "the report at stop: {stderr}");
}

/// Asserts that `later` (`what`) holds `earlier`'s bytes up to the end of its last message:
/// the prefix a provider caches.
fn assert_shares_messages(earlier: &[u8], later: &[u8], what: &str) {
    let shared = common_prefix(earlier, later);
    let through_last_message = earlier.len() - tail_after_messages(earlier);
    assert!(
        shared >= through_last_message,
        "{what} shares {shared} bytes; the earlier body's messages end at {through_last_message}"
    );
}

/// Bytes two bodies share at their start.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Bytes of `body` after its `messages` array's last element.
fn tail_after_messages(body: &[u8]) -> usize {
    let text = std::str::from_utf8(body).unwrap();
    let root = parrot_json::value_span(text).unwrap();
    let members = parrot_json::members(text, root.start).unwrap();
    let messages = members
        .iter()
        .find(|member| member.name.is("messages") || member.name.is("input"))
        .unwrap();
    let elements = parrot_json::elements(text, messages.value.start).unwrap();
    body.len() - elements.last().unwrap().end
}

/// Chat Completions through the SDK: the tool message arrives compressed, everything else as
/// the SDK sent it; the recovery round trip happens in the proxy.
#[test]
fn chat_results_arrive_compressed_and_recovery_happens_in_the_proxy() {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (rows_after, key) = processed(&host, "sql", &rows);
    let conversation = chat_conversation(&rows);
    let direct = Upstream::start(vec![Canned::Json(
        200,
        chat_completion(json!({"role": "assistant", "content": "direct"}), "stop"),
    )]);
    sdk("openai", "chat", &direct.url(), &conversation, false);
    let sent = direct.recorded().remove(0);

    let arguments = json!({"key": key, "rows": "3-4"}).to_string();
    let upstream = Upstream::start(vec![
        Canned::Json(
            200,
            chat_completion(
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_9", "type": "function",
                     "function": {"name": "wm_get_result", "arguments": arguments}}
                ]}),
                "tool_calls",
            ),
        ),
        Canned::Json(
            200,
            chat_completion(
                json!({"role": "assistant", "content": "Rows 3 and 4 are active."}),
                "stop",
            ),
        ),
        Canned::Json(
            200,
            chat_completion(json!({"role": "assistant", "content": "Bye."}), "stop"),
        ),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let answer = sdk("openai", "chat", &proxy.url, &conversation, false);
    assert_eq!(
        answer["result"]["choices"][0]["message"]["content"],
        "Rows 3 and 4 are active."
    );
    assert_eq!(
        answer["result"]["choices"][0]["message"]["tool_calls"],
        Value::Null
    );
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(
        recorded[0].header("authorization"),
        Some("Bearer sk-test-key")
    );
    assert_eq!(
        without_tool(&recorded[0].body, Api::OpenAiChat),
        replaced(&sent.body, &[(literal(&rows), literal(&rows_after))])
    );
    let messages = recorded[1].json()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 6);
    assert_eq!(messages[4]["tool_calls"][0]["id"], "call_9");
    assert_eq!(messages[5]["role"], "tool");
    assert_eq!(messages[5]["tool_call_id"], "call_9");
    let text = messages[5]["content"].as_str().unwrap();
    assert!(text.starts_with("[wm_get_result"), "{text}");
    assert!(
        text.contains("S0003") && text.contains("S0004") && !text.contains("S0005"),
        "{text}"
    );
    assert_shares_messages(&recorded[0].body, &recorded[1].body, "the follow-up");

    // The client's next request holds the answer it got; the call and its answer go back just
    // before it, as the follow-up carried them.
    let mut next = conversation.clone();
    let got = answer["result"]["choices"][0]["message"].clone();
    next["messages"]
        .as_array_mut()
        .unwrap()
        .extend([got, json!({"role": "user", "content": "Thanks."})]);
    sdk("openai", "chat", &proxy.url, &next, false);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 3);
    let later = recorded[2].json()["messages"].clone();
    assert_eq!(later.as_array().unwrap().len(), 8);
    assert_eq!(later[4], messages[4], "the call");
    assert_eq!(later[5], messages[5], "its answer");
    assert_eq!(later[6]["content"], "Rows 3 and 4 are active.");
    let follow = String::from_utf8(recorded[1].body.clone()).unwrap();
    let appended = &follow[follow
        .find("{\"role\":\"assistant\",\"content\":null")
        .unwrap()
        ..follow.len() - tail_after_messages(&recorded[1].body)];
    assert!(
        String::from_utf8_lossy(&recorded[2].body).contains(appended),
        "the same bytes as the follow-up's"
    );
}

/// The Responses API through the SDK: the `function_call_output` arrives compressed; the
/// recovery round trip happens in the proxy.
#[test]
fn responses_results_arrive_compressed_and_recovery_happens_in_the_proxy() {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (rows_after, key) = processed(&host, "sql", &rows);
    let conversation = responses_conversation(&rows);
    let final_output = json!([{"type": "message", "id": "msg_2", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": "All 500 rows read.",
        "annotations": []}]}]);
    let direct = Upstream::start(vec![Canned::Json(200, response(final_output.clone()))]);
    sdk("openai", "responses", &direct.url(), &conversation, false);
    let sent = direct.recorded().remove(0);

    let arguments = json!({"key": key, "pointer": "/rows/499"}).to_string();
    let upstream = Upstream::start(vec![
        Canned::Json(
            200,
            response(
                json!([{"type": "function_call", "id": "fc_9", "call_id": "call_9",
                "name": "wm_get_result", "arguments": arguments, "status": "completed"}]),
            ),
        ),
        Canned::Json(200, response(final_output)),
        Canned::Json(200, response(json!([]))),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let answer = sdk("openai", "responses", &proxy.url, &conversation, false);
    assert_eq!(
        answer["result"]["output"][0]["content"][0]["text"],
        "All 500 rows read."
    );
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].path, "/v1/responses");
    assert_eq!(
        without_tool(&recorded[0].body, Api::OpenAiResponses),
        replaced(&sent.body, &[(literal(&rows), literal(&rows_after))])
    );
    let input = recorded[1].json()["input"].clone();
    assert_eq!(input.as_array().unwrap().len(), 5);
    assert_eq!(input[3]["type"], "function_call");
    assert_eq!(input[4]["type"], "function_call_output");
    assert_eq!(input[4]["call_id"], "call_9");
    let text = input[4]["output"].as_str().unwrap();
    let (header, original) = text.split_once('\n').unwrap();
    assert!(header.starts_with("[wm_get_result"), "{header}");
    assert_eq!(
        serde_json::from_str::<Value>(original).unwrap(),
        serde_json::from_str::<Value>(&rows).unwrap()["rows"][499],
        "the last row of the original"
    );

    // A client that sends the whole conversation again: the proxy's call and its answer go
    // back just before the output item the client got.
    let mut next = conversation.clone();
    next["input"].as_array_mut().unwrap().extend([
        answer["result"]["output"][0].clone(),
        json!({"role": "user", "content": "Thanks."}),
    ]);
    sdk("openai", "responses", &proxy.url, &next, false);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 3);
    let later = recorded[2].json()["input"].clone();
    assert_eq!(later.as_array().unwrap().len(), 7);
    assert_eq!(later[3], input[3], "the call");
    assert_eq!(later[4], input[4], "its answer");
    assert_eq!(later[5]["content"][0]["text"], "All 500 rows read.");
}

/// A streamed request whose answer does not call the recovery tool: its results arrive
/// compressed, and the events reach the SDK as the upstream sends them: those up to the first
/// content block before the upstream's pause, the rest after it.
#[test]
fn a_stream_is_relayed_as_it_arrives_and_its_request_compressed() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let (_dir, host) = reference_host();
    let (rows_after, _) = processed(&host, "sql", &rows);
    let (log_after, _) = processed(&host, "bash", &log);
    let conversation = anthropic_conversation(&rows, &log);
    let pause = Duration::from_millis(1500);
    let direct = Upstream::start(vec![anthropic_stream("direct", Duration::ZERO)]);
    sdk("anthropic", "messages", &direct.url(), &conversation, true);
    let sent = direct.recorded().remove(0);

    let upstream = Upstream::start(vec![anthropic_stream("Streamed answer.", pause)]);
    let proxy = Proxy::start(&upstream.url(), false);
    let streamed = sdk("anthropic", "messages", &proxy.url, &conversation, true);
    let events = streamed["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(events[2]["delta"]["text"], "Streamed answer.");
    let times: Vec<f64> = streamed["times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert!(
        times[2] - times[0] >= pause.as_secs_f64() * 0.8,
        "message_start arrived before the upstream's pause, not with the rest: {times:?}"
    );
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 1);
    let sdk_body = String::from_utf8(sent.body).unwrap();
    let expected = sdk_body
        .replacen(&literal(&rows), &literal(&rows_after), 1)
        .replacen(&literal(&log), &literal(&log_after), 1);
    assert_eq!(
        without_tool(&recorded[0].body, Api::AnthropicMessages),
        expected
    );
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// A streamed answer that calls the recovery tool: the proxy reads it, answers the call with
/// the arguments rebuilt from the deltas, and streams the follow-up's answer to the SDK, which
/// sees only that one.
#[test]
fn a_streamed_recovery_call_is_answered_in_the_proxy() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let arguments = json!({"key": key, "pointer": "/rows/42/store_id"}).to_string();
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    let call = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1",
            "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": "wm_get_result", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": head}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": tail}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 9}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    let upstream = Upstream::start(vec![
        Canned::Sse(vec![(Duration::ZERO, call)]),
        anthropic_stream("Store S0042.", Duration::ZERO),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let conversation = anthropic_conversation(&rows, &log);
    let streamed = sdk("anthropic", "messages", &proxy.url, &conversation, true);
    let events = streamed["events"].as_array().unwrap();
    assert_eq!(events.len(), 6, "{streamed}");
    assert_eq!(
        events[0]["message"]["id"], "msg_1",
        "one message: the first answer's start, then the final answer's blocks"
    );
    assert_eq!(events[1]["index"], 0);
    assert_eq!(events[2]["delta"]["text"], "Store S0042.");
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    let follow = recorded[1].json();
    assert_eq!(follow["stream"], true);
    let messages = follow["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(
        messages[3],
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9",
            "name": "wm_get_result", "input": {"key": key, "pointer": "/rows/42/store_id"}}]})
    );
    let result = &messages[4]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_9");
    let text = result["content"].as_str().unwrap();
    assert_eq!(text.split_once('\n').unwrap().1, "\"S0042\"", "{text}");
    assert_shares_messages(&recorded[0].body, &recorded[1].body, "the follow-up");
}

/// The same through Chat Completions' stream: the call's arguments arrive in pieces.
#[test]
fn a_streamed_chat_recovery_call_is_answered_in_the_proxy() {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let arguments = json!({"key": key, "rows": "7"}).to_string();
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let call = chunk(json!({"role": "assistant", "content": null}), Value::Null)
        + &chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_9", "type": "function",
                "function": {"name": "wm_get_result", "arguments": head}}]}),
            Value::Null,
        )
        + &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": tail}}]}),
            Value::Null,
        )
        + &chunk(json!({}), json!("tool_calls"))
        + "data: [DONE]\n\n";
    let answer = chunk(
        json!({"role": "assistant", "content": "Row 7"}),
        Value::Null,
    ) + &chunk(json!({}), json!("stop"))
        + "data: [DONE]\n\n";
    let bye = chunk(
        json!({"role": "assistant", "content": "Bye."}),
        json!("stop"),
    ) + "data: [DONE]\n\n";
    let upstream = Upstream::start(vec![
        Canned::Sse(vec![(Duration::ZERO, call)]),
        Canned::Sse(vec![(Duration::ZERO, answer)]),
        Canned::Sse(vec![(Duration::ZERO, bye)]),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let streamed = sdk(
        "openai",
        "chat",
        &proxy.url,
        &chat_conversation(&rows),
        true,
    );
    let events = streamed["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "{streamed}");
    assert_eq!(events[0]["choices"][0]["delta"]["content"], "Row 7");
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    let messages = recorded[1].json()["messages"].clone();
    assert_eq!(
        messages[4]["tool_calls"][0]["function"]["arguments"],
        arguments.as_str()
    );
    assert_eq!(messages[5]["tool_call_id"], "call_9");
    let text = messages[5]["content"].as_str().unwrap();
    assert!(text.contains("S0007") && !text.contains("S0008"), "{text}");

    // The streamed answer the client rebuilt, in its next request: the proxy's call and its
    // answer go back just before it.
    let mut next = chat_conversation(&rows);
    next["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": "Row 7"}),
        json!({"role": "user", "content": "Thanks."}),
    ]);
    sdk("openai", "chat", &proxy.url, &next, true);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 3);
    let later = recorded[2].json()["messages"].clone();
    assert_eq!(later[4], messages[4], "the call");
    assert_eq!(later[5], messages[5], "its answer");
    assert_eq!(later[6]["content"], "Row 7");
}

/// The prompt cache: the same conversation twice gives the same upstream bytes, and with one
/// more turn the upstream body starts with the earlier body's bytes up to its last message.
#[test]
fn the_same_conversation_gives_the_same_bytes_and_a_longer_one_their_prefix() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let mut conversation = anthropic_conversation(&rows, &log);
    let answer = || {
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "ok"}]), "end_turn"),
        )
    };
    let upstream = Upstream::start(vec![answer(), answer(), answer()]);
    let proxy = Proxy::start(&upstream.url(), false);
    sdk("anthropic", "messages", &proxy.url, &conversation, false);
    sdk("anthropic", "messages", &proxy.url, &conversation, false);
    let messages = conversation["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_4", "name": "bash", "input": {"cmd": "cargo build"}}
    ]}));
    messages.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_4", "content": corpus("logs/cargo-build-01.log")}
    ]}));
    sdk("anthropic", "messages", &proxy.url, &conversation, false);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 3);
    assert_eq!(
        recorded[0].body, recorded[1].body,
        "the same conversation, the same bytes"
    );
    assert_shares_messages(
        &recorded[0].body,
        &recorded[2].body,
        "the longer conversation",
    );
    // And the bytes after the messages (the recovery tool's definition among them) too.
    let tail = tail_after_messages(&recorded[0].body);
    assert!(
        recorded[2]
            .body
            .ends_with(&recorded[0].body[recorded[0].body.len() - tail..])
    );
    assert!(String::from_utf8_lossy(&recorded[2].body).contains("wm_get_result"));
}

/// A result of 256 KiB or more reaches the model compressed, as a smaller one does: `serve`
/// rewrites a request off its thread, and a large result is an executor call there (before,
/// it went upstream whole, `budget_passthrough`). The same conversation still gives the same
/// bytes.
#[test]
fn a_result_over_the_size_threshold_arrives_compressed() {
    let captures = [
        "node-error-then-progress.log",
        "python-traceback-then-progress.log",
        "jvm-stack-then-progress.log",
        "cargo-build-many-crates-warnings.log",
    ];
    let mut log = String::new();
    while log.len() < 300 * 1024 {
        for name in captures {
            log.push_str(&corpus(&format!("logs/real/{name}")));
        }
    }
    let rows = corpus("query-500x12.json");
    let conversation = anthropic_conversation(&rows, &log);
    let answer = || {
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "ok"}]), "end_turn"),
        )
    };
    let upstream = Upstream::start(vec![answer(), answer()]);
    let proxy = Proxy::start(&upstream.url(), false);
    sdk("anthropic", "messages", &proxy.url, &conversation, false);
    sdk("anthropic", "messages", &proxy.url, &conversation, false);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].body, recorded[1].body, "the same bytes twice");
    let body = recorded[0].json();
    let sent = body["messages"][2]["content"][1]["content"][0]["text"]
        .as_str()
        .expect("the log's text block");
    let (_dir, host) = reference_host();
    assert!(log.len() >= host.size_threshold_bytes());
    assert_eq!(
        host.process(Call::new("bash", Input::Text(&log)))
            .meta
            .skipped,
        Some(Skip::BudgetPassthrough),
        "on the request's thread, the log would pass through"
    );
    let (expected, key) = processed(&host, "bash", &log);
    assert_eq!(sent, expected);
    assert!(
        sent.len() * 10 < log.len(),
        "{} bytes of {}",
        sent.len(),
        log.len()
    );
    assert!(sent.contains(&key), "the pointer names the original");
}

/// With the kill switch on, the proxy is a pure relay: the upstream gets the SDK's bytes, and
/// no tool is offered.
#[test]
fn the_kill_switch_makes_a_pure_relay() {
    let rows = corpus("query-500x12.json");
    let conversation = chat_conversation(&rows);
    let canned = chat_completion(json!({"role": "assistant", "content": "ok"}), "stop");
    let direct = Upstream::start(vec![Canned::Json(200, canned.clone())]);
    let direct_answer = sdk("openai", "chat", &direct.url(), &conversation, false);
    let upstream = Upstream::start(vec![Canned::Json(200, canned)]);
    let proxy = Proxy::start(&upstream.url(), true);
    let answer = sdk("openai", "chat", &proxy.url, &conversation, false);
    assert_eq!(answer, direct_answer);
    assert_eq!(upstream.recorded()[0].body, direct.recorded()[0].body);
}

/// An upstream that is down: a 502 the SDK reports as an API error naming the upstream.
#[test]
fn an_upstream_that_is_down_is_a_502_naming_it() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let proxy = Proxy::start(&url, false);
    let answer = sdk(
        "anthropic",
        "messages",
        &proxy.url,
        &anthropic_conversation("[1, 2]", "ok"),
        false,
    );
    assert_eq!(answer["error"]["status"], 502, "{answer}");
    let message = answer["error"]["body"]["error"]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains(&url), "{message}");
    assert_eq!(answer["error"]["body"]["error"]["upstream"], url.as_str());
}

/// An https upstream is spoken to over TLS: an upstream that answers in plain HTTP is a 502
/// naming the upstream and the TLS failure (the sandbox has no route to the real APIs).
#[test]
fn an_https_upstream_is_spoken_to_over_tls() {
    let upstream = Upstream::start(vec![Canned::Json(200, "{}".to_owned())]);
    let url = format!("https://{}", upstream.addr);
    let proxy = Proxy::start(&url, false);
    let (status, body) = raw_request(&proxy.url, "GET", "/v1/models", b"");
    assert_eq!(status, 502, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["upstream"], url.as_str());
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(&url), "{message}");
    assert!(
        message.to_lowercase().contains("tls") || message.contains("corrupt"),
        "a TLS failure: {message}"
    );
}

/// A body that is not JSON goes on unchanged (with a warning), and so does any other path.
#[test]
fn a_body_that_is_not_json_is_relayed_unchanged() {
    let upstream = Upstream::start(vec![
        Canned::Json(400, r#"{"error": "bad json"}"#.to_owned()),
        Canned::Json(200, r#"{"data": []}"#.to_owned()),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let body = b"{\"messages\": [not json";
    let (status, answer) = raw_request(&proxy.url, "POST", "/v1/messages?beta=true", body);
    assert_eq!(status, 400);
    assert_eq!(answer, r#"{"error": "bad json"}"#);
    let (status, answer) = raw_request(&proxy.url, "GET", "/v1/models", b"");
    assert_eq!(status, 200);
    assert_eq!(answer, r#"{"data": []}"#);
    let recorded = upstream.recorded();
    assert_eq!(recorded[0].path, "/v1/messages?beta=true");
    assert_eq!(recorded[0].body, body);
    assert_eq!(recorded[1].path, "/v1/models");
    let (status, report) = raw_request(&proxy.url, "GET", "/parrot/report", b"");
    assert_eq!(status, 200);
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["total"]["calls"], 0);
    let stderr = proxy.stop();
    assert!(
        stderr.contains("not rewritten, relayed as sent"),
        "the warning names the problem: {stderr}"
    );
}

/// `GET /parrot/report` counts the results a request carried.
#[test]
fn the_report_endpoint_counts_the_results() {
    let rows = corpus("query-500x12.json");
    let upstream = Upstream::start(vec![Canned::Json(
        200,
        chat_completion(json!({"role": "assistant", "content": "ok"}), "stop"),
    )]);
    let proxy = Proxy::start(&upstream.url(), false);
    sdk(
        "openai",
        "chat",
        &proxy.url,
        &chat_conversation(&rows),
        false,
    );
    let (status, report) = raw_request(&proxy.url, "GET", "/parrot/report", b"");
    assert_eq!(status, 200);
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["total"]["calls"], 1, "{report}");
    assert_eq!(report["tools"][0]["tool"], "sql");
    assert!(
        report["total"]["bytes_after"].as_u64().unwrap()
            < report["total"]["bytes_before"].as_u64().unwrap()
    );
}

/// A model's `wm_get_result` with `max_chars: 0` for a 9.4 MB original in the project's store
/// (which `compress` and `mcp-proxy` share; the whole original went into the follow-up, 109 MB
/// for a 100 MB one): the answer the follow-up carries upstream is held to the cap, 200,000
/// characters, says so with the exact counts and ends with the next part's arguments.
#[test]
fn a_models_max_chars_0_is_held_to_the_cap_in_the_follow_up() {
    let key = "__tee__:bash:0123456789ab";
    let upstream = Upstream::start(vec![
        Canned::Json(
            200,
            anthropic_message(
                json!([{"type": "tool_use", "id": "toolu_c", "name": "wm_get_result",
                        "input": {"key": key, "max_chars": 0}}]),
                "tool_use",
            ),
        ),
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "Read."}]), "end_turn"),
        ),
    ]);
    // The original is stored unscoped, and the request carries no key: requests without a
    // credential share the originals of no namespace only when the operator says so.
    let proxy = Proxy::start_with(&upstream.url(), false, &["--shared-unscoped"]);
    let original = corpus("build-log.txt").repeat(20);
    SqliteTeeStore::open(proxy.project().join(".parrot/tee.db"), Retention::default())
        .unwrap()
        .put(key, original.as_bytes())
        .unwrap();
    let request = json!({
        "model": "claude-test",
        "max_tokens": 100,
        "tools": [{"name": "bash", "description": "Runs a command.",
                   "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "Read the whole build log."}]
    });
    let at = Instant::now();
    let (status, answer) = raw_request(
        &proxy.url,
        "POST",
        "/v1/messages",
        request.to_string().as_bytes(),
    );
    let elapsed = at.elapsed();
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["content"][0]["text"], "Read.", "{answer}");

    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2, "the request and the proxy's follow-up");
    let follow = &recorded[1];
    assert!(
        follow.body.len() < 300_000,
        "a follow-up of {} bytes",
        follow.body.len()
    );
    let messages = follow.json()["messages"].clone();
    let result = &messages[2]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_c");
    assert!(result.get("is_error").is_none(), "{result}");
    let text = result["content"].as_str().unwrap();
    let cap = parrot_host::DEFAULT_RECOVERY_MAX_CHARS;
    let (head, more) = text.rsplit_once("[more: ").expect("a next part");
    let mut lines = head.split_inclusive('\n');
    assert_eq!(
        lines.next(),
        Some(format!("[wm_get_result {{\"key\":\"{key}\",\"max_chars\":0}}]\n").as_str())
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("[outline: 120040 lines, ")
    );
    let note = lines.next().unwrap();
    let body: String = lines.collect();
    let shown = body.chars().count();
    assert!(shown <= cap && shown > cap * 9 / 10, "{shown} characters");
    assert_eq!(
        note,
        format!(
            "[capped: one answer here holds at most {cap} characters, whatever its selector \
             asks, max_chars 0 included; the part below is {shown} characters of the original's \
             {}; the next part: the [more: …] line below; the exact original, uncapped: \
             parrot-compress recover {key}]\n",
            original.chars().count()
        )
    );
    assert!(original.starts_with(&body), "the original's first lines");
    let next = body.lines().count() + 1;
    assert_eq!(
        more,
        format!("wm_get_result {{\"key\":\"{key}\",\"lines\":\"{next}-\",\"max_chars\":0}}]\n")
    );
}

/// One request over a fresh connection; the status and the body.
fn raw_request(base: &str, method: &str, target: &str, body: &[u8]) -> (u16, String) {
    let addr = base.strip_prefix("http://").unwrap();
    raw_request_to(base, addr, method, target, body)
}

/// [`raw_request`] with `host` as its Host header.
fn raw_request_to(
    base: &str,
    host: &str,
    method: &str,
    target: &str,
    body: &[u8],
) -> (u16, String) {
    raw_request_with(base, host, &[], method, target, body)
}

/// [`raw_request_to`] with more headers (`name: value` lines).
fn raw_request_with(
    base: &str,
    host: &str,
    headers: &[&str],
    method: &str,
    target: &str,
    body: &[u8],
) -> (u16, String) {
    let addr = base.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let headers: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n\
         {headers}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, rest) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    (status, body)
}

fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        text = &rest[size + 2..];
    }
    out
}

/// An answer that calls the recovery tool and one of the client's: the client gets it without
/// the recovery call (it could not answer it), and nothing is sent upstream again.
#[test]
fn a_mixed_answer_reaches_the_client_without_the_recovery_call() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let upstream = Upstream::start(vec![Canned::Json(
        200,
        anthropic_message(
            json!([
                {"type": "tool_use", "id": "toolu_8", "name": "wm_get_result",
                 "input": {"key": "__tee__:sql:0"}},
                {"type": "tool_use", "id": "toolu_9", "name": "sql",
                 "input": {"q": "select 1"}}
            ]),
            "tool_use",
        ),
    )]);
    let proxy = Proxy::start(&upstream.url(), false);
    let answer = sdk(
        "anthropic",
        "messages",
        &proxy.url,
        &anthropic_conversation(&rows, &log),
        false,
    );
    let content = answer["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{answer}");
    assert_eq!(content[0]["name"], "sql");
    assert_eq!(content[0]["id"], "toolu_9");
    assert_eq!(answer["result"]["stop_reason"], "tool_use");
    assert_eq!(upstream.recorded().len(), 1);
}

/// The same through the Responses API's stream: the call is the first output item, and the
/// proxy takes the model's turn from the `response.completed` event.
#[test]
fn a_streamed_responses_recovery_call_is_answered_in_the_proxy() {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let arguments = json!({"key": key, "pointer": "/rows/3/revenue"}).to_string();
    let event = |data: Value| {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap()
        )
    };
    let call_item = json!({"type": "function_call", "id": "fc_9", "call_id": "call_9",
        "name": "wm_get_result", "arguments": arguments, "status": "completed"});
    let call = event(json!({"type": "response.created", "sequence_number": 0,
            "response": serde_json::from_str::<Value>(&response(json!([]))).unwrap()}))
        + &event(
            json!({"type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": {"type": "function_call", "id": "fc_9",
            "call_id": "call_9", "name": "wm_get_result", "arguments": "",
            "status": "in_progress"}}),
        )
        + &event(
            json!({"type": "response.function_call_arguments.delta", "sequence_number": 2,
            "output_index": 0, "item_id": "fc_9", "delta": arguments}),
        )
        + &event(
            json!({"type": "response.output_item.done", "sequence_number": 3,
            "output_index": 0, "item": call_item}),
        )
        + &event(json!({"type": "response.completed", "sequence_number": 4,
            "response": serde_json::from_str::<Value>(&response(json!([call_item]))).unwrap()}));
    let message = json!({"type": "message", "id": "msg_2", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": "1004.11",
        "annotations": []}]});
    let answer = event(json!({"type": "response.created", "sequence_number": 0,
            "response": serde_json::from_str::<Value>(&response(json!([]))).unwrap()}))
        + &event(
            json!({"type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": message}),
        )
        + &event(json!({"type": "response.completed", "sequence_number": 2,
            "response": serde_json::from_str::<Value>(&response(json!([message]))).unwrap()}));
    let upstream = Upstream::start(vec![
        Canned::Sse(vec![(Duration::ZERO, call)]),
        Canned::Sse(vec![(Duration::ZERO, answer)]),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let streamed = sdk(
        "openai",
        "responses",
        &proxy.url,
        &responses_conversation(&rows),
        true,
    );
    let events = streamed["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.output_item.added",
            "response.completed"
        ],
        "only the final answer's events: {streamed}"
    );
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    let input = recorded[1].json()["input"].clone();
    assert_eq!(input[3]["name"], "wm_get_result");
    assert_eq!(input[4]["type"], "function_call_output");
    let text = input[4]["output"].as_str().unwrap();
    assert_eq!(text.split_once('\n').unwrap().1, "1004.11", "{text}");
}

/// [`anthropic_events`] as one canned stream, sent at once.
fn anthropic_sse(id: &str, blocks: &[Value], stop: &str) -> Canned {
    Canned::Sse(vec![(Duration::ZERO, anthropic_events(id, blocks, stop))])
}

/// The events of a streamed Anthropic answer: `message_start`, then each block's start, one
/// delta and stop, then `message_delta` with `stop` and `message_stop`.
fn anthropic_events(id: &str, blocks: &[Value], stop: &str) -> String {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message",
            "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block["type"].as_str() {
            Some("tool_use") => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            ),
            _ => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            ),
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 9}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    sse(&events)
}

/// A streamed answer with text before its recovery call: the text reaches the client at once,
/// the call is answered in the proxy, and the follow-up's blocks continue the same message,
/// numbered after the text; the client's next request gets the call and its answer back in
/// place.
#[test]
fn a_streamed_call_after_text_is_answered_and_kept_in_the_conversation() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let call = json!({"type": "tool_use", "id": "toolu_7", "name": "wm_get_result",
        "input": {"key": key, "pointer": "/rows/3/store_id"}});
    let upstream = Upstream::start(vec![
        anthropic_sse(
            "msg_a",
            &[
                json!({"type": "text", "text": "Checking row 3."}),
                call.clone(),
            ],
            "tool_use",
        ),
        anthropic_sse(
            "msg_b",
            &[json!({"type": "text", "text": "It is S0003."})],
            "end_turn",
        ),
        anthropic_sse(
            "msg_c",
            &[json!({"type": "text", "text": "Bye."})],
            "end_turn",
        ),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let conversation = anthropic_conversation(&rows, &log);
    let streamed = sdk("anthropic", "messages", &proxy.url, &conversation, true);
    let events = streamed["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ],
        "{streamed}"
    );
    assert_eq!(events[0]["message"]["id"], "msg_a");
    assert_eq!(events[2]["delta"]["text"], "Checking row 3.");
    assert_eq!(events[4]["index"], 1, "the follow-up's block comes second");
    assert_eq!(events[5]["delta"]["text"], "It is S0003.");
    assert_eq!(events[7]["delta"]["stop_reason"], "end_turn");
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    let follow = recorded[1].json();
    let result = &follow["messages"][4]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_7");
    assert_eq!(
        result["content"]
            .as_str()
            .unwrap()
            .split_once('\n')
            .unwrap()
            .1,
        "\"S0003\""
    );

    let mut next = conversation.clone();
    next["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Checking row 3."},
            {"type": "text", "text": "It is S0003."}
        ]}),
        json!({"role": "user", "content": "Thanks."}),
    ]);
    sdk("anthropic", "messages", &proxy.url, &next, true);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 3);
    let messages = recorded[2].json()["messages"].clone();
    assert_eq!(
        messages[3], follow["messages"][3],
        "the call, as the model made it"
    );
    assert_eq!(messages[4], follow["messages"][4], "its answer");
    assert_eq!(
        messages[5]["content"],
        json!([{"type": "text", "text": "It is S0003."}])
    );
    assert_eq!(messages[6]["content"], "Thanks.");
}

/// A stream the upstream drops while the proxy could still answer a recovery call reaches the
/// client as a dropped stream (which an agent retries), never as a 502.
#[test]
fn a_dropped_stream_reaches_the_client_as_a_dropped_stream() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let start = sse(&[(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_d", "type": "message",
            "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    )]);
    let upstream = Upstream::start(vec![Canned::Dropped(start)]);
    let proxy = Proxy::start(&upstream.url(), false);
    let conversation = anthropic_conversation(&rows, &log);
    let streamed = sdk("anthropic", "messages", &proxy.url, &conversation, true);
    let dropped = &streamed["dropped"];
    assert!(dropped.is_object(), "{streamed}");
    assert!(
        streamed["error"].is_null(),
        "no status error (a 502): {streamed}"
    );
    let recorded = upstream.recorded();
    assert!(
        String::from_utf8_lossy(&recorded[0].body).contains("\"name\":\"wm_get_result\""),
        "the proxy held the stream: its tool was offered"
    );
}

/// The recovery tool is in every request that defines tools, from the first one (which carries
/// no pointer yet), so the tools a conversation sends are the same bytes in every request.
#[test]
fn the_recovery_tool_is_offered_from_the_first_request() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let upstream = Upstream::start(vec![
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "Hello."}]), "end_turn"),
        ),
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "Done."}]), "end_turn"),
        ),
        Canned::Json(200, r#"{"input_tokens": 12}"#.to_owned()),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let conversation = anthropic_conversation(&rows, &log);
    let mut first = conversation.clone();
    first["messages"] = json!([conversation["messages"][0].clone()]);
    sdk("anthropic", "messages", &proxy.url, &first, false);
    sdk("anthropic", "messages", &proxy.url, &conversation, false);
    let recorded = upstream.recorded();
    let tools = |body: &[u8]| -> String {
        let text = std::str::from_utf8(body).unwrap();
        let root = parrot_json::value_span(text).unwrap();
        let members = parrot_json::members(text, root.start).unwrap();
        let tools = members.iter().find(|m| m.name.is("tools")).unwrap();
        text[tools.value.clone()].to_owned()
    };
    // A pointer in either form: a JSON result's `_tee` member, or a text's pointer line (both
    // inside a JSON string of the request body).
    let pointer_in = |body: &[u8]| {
        let body = String::from_utf8_lossy(body);
        body.contains("\\\"_tee\\\":{") || body.contains("\\n[wm_get_result {\\\"key\\\":")
    };
    assert!(
        !pointer_in(&recorded[0].body),
        "the first request has no pointer"
    );
    assert!(tools(&recorded[0].body).contains("\"wm_get_result\""));
    assert!(pointer_in(&recorded[1].body));
    assert_eq!(tools(&recorded[0].body), tools(&recorded[1].body));

    // A count of tokens counts what the client sent: no tool is added to it.
    let count =
        br#"{"model":"claude-test","messages":[{"role":"user","content":"[1, 2]"}],"tools":[]}"#;
    let (status, _) = raw_request(&proxy.url, "POST", "/v1/messages/count_tokens", count);
    assert_eq!(status, 200);
    assert_eq!(upstream.recorded()[2].body, count);
}

/// A follow-up the upstream refuses (overloaded) ends the client's stream with the upstream's
/// own error, as an `error` event the SDK raises.
#[test]
fn a_refused_follow_up_ends_the_stream_with_the_upstreams_error() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let call = json!({"type": "tool_use", "id": "toolu_5", "name": "wm_get_result",
        "input": {"key": key}});
    let overloaded = json!({"type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let upstream = Upstream::start(vec![
        anthropic_sse("msg_o", &[call], "tool_use"),
        Canned::Json(529, overloaded.to_string()),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let conversation = anthropic_conversation(&rows, &log);
    let streamed = sdk("anthropic", "messages", &proxy.url, &conversation, true);
    assert_eq!(streamed["error"]["body"], overloaded, "{streamed}");
    assert_eq!(
        upstream.recorded().len(),
        2,
        "the request and the follow-up"
    );
}

/// Two recovery calls in one streamed answer: both answered in one `user` message, and both,
/// with their answers, back in place in the client's next request.
#[test]
fn two_recovery_calls_in_one_answer_are_answered_together_and_kept() {
    let rows = corpus("query-500x12.json");
    let log = corpus("logs/cargo-test-01.log");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let first = json!({"type": "tool_use", "id": "toolu_a", "name": "wm_get_result",
        "input": {"key": key, "pointer": "/rows/1/store_id"}});
    let second = json!({"type": "tool_use", "id": "toolu_b", "name": "wm_get_result",
        "input": {"key": key, "pointer": "/rows/2/store_id"}});
    let upstream = Upstream::start(vec![
        anthropic_sse("msg_t", &[first, second], "tool_use"),
        anthropic_sse(
            "msg_u",
            &[json!({"type": "text", "text": "S0001, S0002."})],
            "end_turn",
        ),
        anthropic_sse(
            "msg_v",
            &[json!({"type": "text", "text": "Bye."})],
            "end_turn",
        ),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let conversation = anthropic_conversation(&rows, &log);
    let streamed = sdk("anthropic", "messages", &proxy.url, &conversation, true);
    let texts: Vec<&Value> = streamed["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.pointer("/delta/text"))
        .collect();
    assert_eq!(texts, ["S0001, S0002."], "{streamed}");
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    let follow = recorded[1].json();
    let answers = follow["messages"][4]["content"].as_array().unwrap();
    assert_eq!(answers.len(), 2, "one user message, one result per call");
    for (answer, (id, store)) in answers
        .iter()
        .zip([("toolu_a", "S0001"), ("toolu_b", "S0002")])
    {
        assert_eq!(answer["tool_use_id"], id);
        assert!(
            answer["content"]
                .as_str()
                .unwrap()
                .ends_with(&format!("\"{store}\""))
        );
    }

    let mut next = conversation.clone();
    next["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": [{"type": "text", "text": "S0001, S0002."}]}),
        json!({"role": "user", "content": "Thanks."}),
    ]);
    sdk("anthropic", "messages", &proxy.url, &next, true);
    let later = upstream.recorded()[2].json();
    assert_eq!(later["messages"][3], follow["messages"][3], "both calls");
    assert_eq!(later["messages"][4], follow["messages"][4], "both answers");
}

/// A Chat Completions stream the upstream drops while the proxy holds it (nothing has shown
/// yet whether the model calls the recovery tool) reaches the client as a dropped stream.
#[test]
fn a_dropped_chat_stream_reaches_the_client_as_a_dropped_stream() {
    let rows = corpus("query-500x12.json");
    let start = format!(
        "data: {}\n\n",
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
               "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}]})
    );
    let upstream = Upstream::start(vec![Canned::Dropped(start)]);
    let proxy = Proxy::start(&upstream.url(), false);
    let streamed = sdk(
        "openai",
        "chat",
        &proxy.url,
        &chat_conversation(&rows),
        true,
    );
    assert!(streamed["dropped"].is_object(), "{streamed}");
    assert!(streamed["error"].is_null(), "no 502: {streamed}");
}

/// A request body the proxy would read to rewrite is bounded (`--max-body-bytes`): over the
/// bound it is a 413, answered before a byte is read when `Content-Length` declares it, and
/// nothing reaches the upstream; under it, and any body the proxy does not rewrite, goes on.
#[test]
fn a_body_over_the_bound_is_refused_with_413_and_others_go_on() {
    let upstream = Upstream::start(vec![
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "Small."}]), "end_turn"),
        ),
        Canned::Json(200, r#"{"id": "file_1"}"#.to_owned()),
    ]);
    let proxy = Proxy::start_with(&upstream.url(), false, &["--max-body-bytes", "4096"]);
    let message = |text: &str| {
        json!({"model": "claude-test", "max_tokens": 10,
               "messages": [{"role": "user", "content": text}]})
        .to_string()
    };

    // Declared at 1 GB, a few bytes sent: refused at once, the connection not held.
    let addr = proxy.url.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: 1000000000\r\n\r\n{{\"model\":"
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 413");

    // Sent whole, over the bound: 413 with the API's error shape.
    let (status, body) = raw_request(
        &proxy.url,
        "POST",
        "/v1/messages",
        message(&"x".repeat(5000)).as_bytes(),
    );
    assert_eq!(status, 413, "{body}");
    assert!(
        body.contains("\"request_too_large\"") && body.contains("4096"),
        "{body}"
    );
    assert!(
        upstream.recorded().is_empty(),
        "nothing reached the upstream"
    );

    // Under the bound: relayed.
    let small = message("hello");
    let (status, _) = raw_request(&proxy.url, "POST", "/v1/messages", small.as_bytes());
    assert_eq!(status, 200);
    // A body the proxy does not rewrite is streamed on, whatever its size.
    let file = vec![b'z'; 20_000];
    let (status, _) = raw_request(&proxy.url, "POST", "/v1/files", &file);
    assert_eq!(status, 200);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].body, small.as_bytes());
    assert_eq!(recorded[1].body, file);
}

/// Reads from `stream` until the proxy closes it; fails if it is still open after 10 seconds.
fn closed_by_the_proxy(stream: &mut TcpStream, what: &str) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => continue,
            Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => return,
            Err(err) => panic!("{what}: still open after 10 s ({err})"),
        }
    }
}

/// Connections over `--max-connections` are closed as soon as they are accepted, with one
/// warning; once a connection ends, a request is served again.
#[test]
fn connections_over_the_cap_are_closed_with_a_warning() {
    let upstream = Upstream::start(vec![Canned::Json(
        200,
        anthropic_message(json!([{"type": "text", "text": "Served."}]), "end_turn"),
    )]);
    let proxy = Proxy::start_with(&upstream.url(), false, &["--max-connections", "3"]);
    let addr = proxy.url.strip_prefix("http://").unwrap().to_owned();
    let idle: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut fourth = TcpStream::connect(&addr).unwrap();
    closed_by_the_proxy(&mut fourth, "a connection over the cap");
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    let body =
        br#"{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#;
    let (status, _) = raw_request(&proxy.url, "POST", "/v1/messages", body);
    assert_eq!(status, 200, "served once the idle connections are gone");
    let stderr = proxy.stop();
    assert!(
        stderr.contains("3 connections open, the most allowed (--max-connections)"),
        "{stderr}"
    );
}

/// A connection that sends nothing, or its headers a byte at a time, is closed after
/// `--header-read-timeout`; a client that sends its request is served as before.
#[test]
fn idle_and_slow_connections_are_closed_after_the_header_timeout() {
    let upstream = Upstream::start(vec![Canned::Json(
        200,
        anthropic_message(json!([{"type": "text", "text": "Served."}]), "end_turn"),
    )]);
    let proxy = Proxy::start_with(&upstream.url(), false, &["--header-read-timeout", "1"]);
    let addr = proxy.url.strip_prefix("http://").unwrap().to_owned();
    let mut idle = TcpStream::connect(&addr).unwrap();
    let mut slow = TcpStream::connect(&addr).unwrap();
    let writer = {
        let mut slow = slow.try_clone().unwrap();
        std::thread::spawn(move || {
            for byte in b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-slow: yes\r\n".iter() {
                if slow.write_all(&[*byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    closed_by_the_proxy(&mut idle, "a connection that sends nothing");
    closed_by_the_proxy(
        &mut slow,
        "a connection that sends its headers a byte at a time",
    );
    writer.join().unwrap();
    let body =
        br#"{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#;
    let (status, _) = raw_request(&proxy.url, "POST", "/v1/messages", body);
    assert_eq!(status, 200);
}

/// An upstream URL's password never reaches a client or the log: the 502 of an upstream that
/// is down, the warning it logs, and the error for a URL the proxy refuses show it masked.
#[test]
fn an_upstreams_password_is_masked_in_the_502_and_the_log() {
    const PASSWORD: &str = "s3cret-pw";
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let proxy = Proxy::start(&format!("http://user:{PASSWORD}@{addr}"), false);
    let masked = format!("http://user:***@{addr}");
    let rewritten = anthropic_conversation("[1, 2]", "ok").to_string();
    for (method, target, body) in [
        ("GET", "/v1/models", &b""[..]),
        ("POST", "/v1/messages", rewritten.as_bytes()),
    ] {
        let (status, answer) = raw_request(&proxy.url, method, target, body);
        assert_eq!(status, 502, "{answer}");
        assert!(!answer.contains(PASSWORD), "{answer}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["upstream"], masked.as_str());
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(&masked), "{message}");
    }
    let stderr = proxy.stop();
    assert!(stderr.contains(&masked), "the failure is logged: {stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");

    let refused = Command::new(support::binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--upstream-openai"])
        .arg(format!("http://user:{PASSWORD}@{addr}/v1?key=1"))
        .env_remove("PARROT_COMPRESSION_DISABLED")
        .output()
        .expect("parrot-compress runs");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("takes no query"), "{stderr}");
    assert!(stderr.contains("user:***@"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");
}

/// `GET /parrot/report` answers a request to a loopback name or the listening address, and
/// refuses another Host (a page that reached the proxy through DNS rebinding) with a 403 saying
/// why.
#[test]
fn the_report_refuses_a_host_that_is_not_loopback() {
    let upstream = Upstream::start(Vec::new());
    let proxy = Proxy::start(&upstream.url(), false);
    let port = proxy.url.rsplit(':').next().unwrap().to_owned();
    let listening = proxy.url.strip_prefix("http://").unwrap().to_owned();
    for host in [
        listening.as_str(),
        "localhost",
        &format!("localhost:{port}"),
        "127.0.0.1",
        &format!("[::1]:{port}"),
    ] {
        let (status, report) = raw_request_to(&proxy.url, host, "GET", "/parrot/report", b"");
        assert_eq!(status, 200, "Host {host}: {report}");
        let report: Value = serde_json::from_str(&report).unwrap();
        assert_eq!(report["total"]["calls"], 0, "{report}");
    }
    for host in [
        "attacker.example".to_owned(),
        format!("attacker.example:{port}"),
        format!("localhost.attacker.example:{port}"),
    ] {
        let (status, answer) = raw_request_to(&proxy.url, &host, "GET", "/parrot/report", b"");
        assert_eq!(status, 403, "Host {host}: {answer}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["type"], "permission_error", "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("Host \"{host}\" is not one")),
            "{message}"
        );
        assert!(message.contains("DNS rebinding"), "{message}");
        assert!(
            !message.contains("\"tools\""),
            "no part of the report: {message}"
        );
    }
    let (status, answer) = raw_request_to(
        &proxy.url,
        &listening,
        "GET",
        "http://attacker.example/parrot/report",
        b"",
    );
    assert_eq!(
        status, 403,
        "an absolute target names the host too: {answer}"
    );
    assert!(
        upstream.recorded().is_empty(),
        "the report is never relayed"
    );
}

/// A model asked, through client B's request, for the key of client A's original and got it
/// (the review's finding: different API keys, one proxy). Originals are kept in the namespace
/// of the API key of the request that carried them: B's model (bearer token) gets the tool
/// error of a key nobody holds, as does a request with no key; A's gets its part, whether
/// its key comes as `x-api-key` or as a bearer token; `recover --namespace` with the namespace
/// `parrot-compress namespace` computes from A's key returns the original.
#[test]
fn a_key_stored_with_one_api_key_is_not_found_with_another() {
    let rows = corpus("query-500x12.json");
    let asked = |id: &str, key: &str| {
        Canned::Json(
            200,
            anthropic_message(
                json!([{"type": "tool_use", "id": id, "name": "wm_get_result",
                        "input": {"key": key, "pointer": "/rows/17"}}]),
                "tool_use",
            ),
        )
    };
    let said = |text: &str| {
        Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": text}]), "end_turn"),
        )
    };
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let upstream = Upstream::start(vec![
        said("Stored."),
        asked("toolu_b", &key),
        said("Not found."),
        asked("toolu_none", &key),
        said("Not found either."),
        asked("toolu_a", &key),
        said("Found."),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let send = |headers: &[&str], body: &Value| {
        let (status, answer) = raw_request_with(
            &proxy.url,
            proxy.url.strip_prefix("http://").unwrap(),
            headers,
            "POST",
            "/v1/messages",
            body.to_string().as_bytes(),
        );
        assert_eq!(status, 200, "{answer}");
    };
    let a_key = "x-api-key: sk-ant-client-a";
    send(&[a_key], &anthropic_conversation(&rows, "ok"));
    let first = upstream.recorded().remove(0);
    assert!(
        String::from_utf8(first.body).unwrap().contains(&key),
        "A's result went out compressed, with a pointer to {key}"
    );

    let question = json!({
        "model": "claude-test",
        "max_tokens": 100,
        "tools": [{"name": "sql", "description": "Runs SQL.", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "What is row 17?"}]
    });
    // The answer to the proxy's one recovery call, in the follow-up after request `at`.
    let answered = |at: usize| -> Value {
        let recorded = upstream.recorded();
        let follow = recorded[at].json();
        follow["messages"][2]["content"][0].clone()
    };
    send(&["authorization: Bearer sk-ant-client-b"], &question);
    let b = answered(2);
    assert_eq!(b["tool_use_id"], "toolu_b");
    assert_eq!(b["is_error"], true, "{b}");
    assert_eq!(
        b["content"],
        format!("no original is stored under \"{key}\"")
    );

    send(&[], &question);
    let none = answered(4);
    assert_eq!(none["is_error"], true, "{none}");
    assert_eq!(
        none["content"],
        format!("no original is stored under \"{key}\"")
    );

    send(&["authorization: Bearer sk-ant-client-a"], &question);
    let a = answered(6);
    assert!(a.get("is_error").is_none(), "{a}");
    let text = a["content"].as_str().unwrap();
    let row17 = serde_json::from_str::<Value>(&rows).unwrap()["rows"][17].clone();
    let part: Value = serde_json::from_str(text.split_once('\n').unwrap().1).unwrap();
    assert_eq!(part, row17, "A's own original");
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 7);
    for (at, request) in recorded[1..5].iter().enumerate() {
        assert!(
            !String::from_utf8_lossy(&request.body).contains("S0017"),
            "request {} (B's, or without a key) carries none of A's rows",
            at + 1
        );
    }

    let out = support::run_in(proxy.project(), &["namespace"], b"sk-ant-client-a\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let namespace = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(namespace.starts_with("key-"), "{namespace}");
    let recovered = support::run_in(
        proxy.project(),
        &["recover", "--namespace", &namespace, &key],
        b"",
    );
    assert_eq!(String::from_utf8(recovered.stdout).unwrap(), rows);
    let stderr = proxy.stop();
    assert!(
        !stderr.contains("client-a") && !stderr.contains("client-b"),
        "no API key in the log: {stderr}"
    );
}

/// A Chat Completions answer that calls the recovery tool once, for `arguments`.
fn chat_recovery_call(id: &str, arguments: &Value) -> Canned {
    Canned::Json(
        200,
        chat_completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": "wm_get_result", "arguments": arguments.to_string()}}
            ]}),
            "tool_calls",
        ),
    )
}

/// A Chat Completions answer of text.
fn chat_text(text: &str) -> Canned {
    Canned::Json(
        200,
        chat_completion(json!({"role": "assistant", "content": text}), "stop"),
    )
}

/// A Chat Completions question that defines a tool (so the recovery tool is offered) and
/// carries no result.
fn chat_question() -> Value {
    json!({
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "What is row 17?"}],
        "tools": [{"type": "function", "function": {"name": "sql", "parameters": {"type": "object"}}}]
    })
}

/// The answer to the proxy's one recovery call in a Chat Completions follow-up: its text.
fn chat_answer_in(follow_up: &Recorded) -> String {
    let messages = follow_up.json()["messages"].clone();
    let last = messages.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "tool", "{last}");
    last["content"].as_str().unwrap().to_owned()
}

/// The review's finding (issue 47): the proxy scoped only `x-api-key` and `authorization`, so
/// clients whose key came in Azure OpenAI's `api-key`, Gemini's `x-goog-api-key` or its
/// `?key=` counted as keyless and shared originals (Bob's request went upstream with 40 lines
/// of Alice's). Each is a credential now: for each, Bob's model asking for the key of Alice's
/// original gets the answer of a key nobody holds and his requests carry none of her rows;
/// Alice's own model gets row 17.
#[test]
fn a_key_stored_with_an_azure_or_gemini_key_is_not_found_with_another() {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let arguments = json!({"key": key, "rows": "17-17"});
    /// How a client sends its credential: headers, and the query of the request's target.
    type Credential = fn(&str) -> (Vec<String>, String);
    let styles: [(&str, Credential); 3] = [
        ("api-key", |secret| {
            (vec![format!("api-key: {secret}")], String::new())
        }),
        ("x-goog-api-key", |secret| {
            (vec![format!("x-goog-api-key: {secret}")], String::new())
        }),
        ("?key=", |secret| (Vec::new(), format!("?key={secret}"))),
    ];
    for (style, credential) in styles {
        let upstream = Upstream::start(vec![
            chat_text("Stored."),
            chat_recovery_call("call_b", &arguments),
            chat_text("Not found."),
            chat_recovery_call("call_a", &arguments),
            chat_text("Found."),
        ]);
        let proxy = Proxy::start(&upstream.url(), false);
        let send = |secret: &str, body: &Value| {
            let (headers, query) = credential(secret);
            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
            let (status, answer) = raw_request_with(
                &proxy.url,
                proxy.url.strip_prefix("http://").unwrap(),
                &headers,
                "POST",
                &format!("/v1/chat/completions{query}"),
                body.to_string().as_bytes(),
            );
            assert_eq!(status, 200, "{style}: {answer}");
        };
        send("alice-secret", &chat_conversation(&rows));
        assert!(
            String::from_utf8_lossy(&upstream.recorded()[0].body).contains(&key),
            "{style}: Alice's result went out with a pointer to {key}"
        );
        send("bob-secret", &chat_question());
        send("alice-secret", &chat_question());
        let recorded = upstream.recorded();
        assert_eq!(recorded.len(), 5, "{style}");
        assert_eq!(
            chat_answer_in(&recorded[2]),
            format!("no original is stored under \"{key}\""),
            "{style}: Bob's model"
        );
        for (at, request) in recorded[1..3].iter().enumerate() {
            assert!(
                !String::from_utf8_lossy(&request.body).contains("S0017"),
                "{style}: Bob's request {} carries none of Alice's rows",
                at + 1
            );
        }
        let alices = chat_answer_in(&recorded[4]);
        assert!(alices.contains("S0017"), "{style}: Alice's own: {alices}");
        let stderr = proxy.stop();
        assert!(
            !stderr.contains("alice-secret") && !stderr.contains("bob-secret"),
            "{style}: no credential in the log: {stderr}"
        );
    }
}

/// An Anthropic answer of text.
fn anthropic_text(text: &str) -> Canned {
    Canned::Json(
        200,
        anthropic_message(json!([{"type": "text", "text": text}]), "end_turn"),
    )
}

/// An Anthropic answer that says `text`, then calls the recovery tool once, for `input`.
fn anthropic_recovery_call(id: &str, text: &str, input: &Value) -> Canned {
    Canned::Json(
        200,
        anthropic_message(
            json!([{"type": "text", "text": text},
                   {"type": "tool_use", "id": id, "name": "wm_get_result", "input": input}]),
            "tool_use",
        ),
    )
}

/// An Anthropic question that defines a tool (so the recovery tool is offered) and carries no
/// result.
fn anthropic_question() -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 100,
        "tools": [{"name": "sql", "description": "Runs SQL.", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "What is row 17?"}]
    })
}

/// The answer to the proxy's one recovery call in an Anthropic follow-up.
fn anthropic_answer_in(follow_up: &Recorded) -> Value {
    let messages = follow_up.json()["messages"].clone();
    let last = messages.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user", "{last}");
    last["content"][0].clone()
}

/// A request with no credential to `proxy`'s `/v1/messages`; the answer's JSON.
fn unscoped_message(proxy: &Proxy, body: &Value) -> Value {
    let (status, answer) = raw_request(
        &proxy.url,
        "POST",
        "/v1/messages",
        body.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{answer}");
    serde_json::from_str(&answer).unwrap()
}

/// The review's finding (issue 47): requests without a credential shared one scope, each
/// reading the others' originals and getting the recoveries answered for the others put back.
/// By default now, a request without a credential is alone: its own recovery rounds read its
/// originals (row 17 comes back within the request), but another such request's model gets
/// the answer of a key nobody holds, and the next request of the conversation gets nothing put
/// back. With `--shared-unscoped`, the operator's choice, they share as before.
#[test]
fn a_request_without_a_credential_shares_nothing_unless_the_operator_says_so() {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let input = json!({"key": key, "pointer": "/rows/17"});
    for shared in [false, true] {
        let options: &[&str] = if shared { &["--shared-unscoped"] } else { &[] };
        let upstream = Upstream::start(vec![
            anthropic_recovery_call("toolu_9", "I need row 17.", &input),
            anthropic_text("Store S0017 is active."),
            anthropic_recovery_call("toolu_b", "Let me look.", &input),
            anthropic_text("Answered."),
            anthropic_text("You are welcome."),
        ]);
        let proxy = Proxy::start_with(&upstream.url(), false, options);
        let conversation = anthropic_conversation(&rows, "ok");
        let answer = unscoped_message(&proxy, &conversation);
        let within = anthropic_answer_in(&upstream.recorded()[1]);
        assert!(
            within["content"].as_str().unwrap().contains("S0017"),
            "shared {shared}: the request's own original, within it: {within}"
        );

        unscoped_message(&proxy, &anthropic_question());
        let other = anthropic_answer_in(&upstream.recorded()[3]);
        let not_found = format!("no original is stored under \"{key}\"");
        if shared {
            assert!(
                other["content"].as_str().unwrap().contains("S0017"),
                "shared: another request's original: {other}"
            );
        } else {
            assert_eq!(other["content"], not_found.as_str(), "alone: {other}");
            assert_eq!(other["is_error"], true);
        }

        let mut next = conversation.clone();
        let messages = next["messages"].as_array_mut().unwrap();
        messages.push(json!({"role": "assistant", "content": answer["content"]}));
        messages.push(json!({"role": "user", "content": "Thanks."}));
        unscoped_message(&proxy, &next);
        let recorded = upstream.recorded();
        assert_eq!(recorded.len(), 5, "shared {shared}");
        let later = String::from_utf8_lossy(&recorded[4].body);
        assert_eq!(
            later.contains("toolu_9"),
            shared,
            "shared {shared}: the recovery answered in the first request put back"
        );
    }
}

/// The review's finding (issue 47): a request with no credential whose model asked for
/// `<namespace>/<key>` got a keyed client's original, stored under exactly that name. Whether
/// unscoped requests are alone (the default) or share (`--shared-unscoped`), such a key is one
/// nobody holds, and the request carries none of the original upstream.
#[test]
fn a_key_naming_a_namespace_is_not_found_without_a_credential() {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let alice = parrot_host::Namespace::of_secret(b"sk-ant-client-a");
    let named = alice.scoped_key(&key);
    for options in [&[][..], &["--shared-unscoped"][..]] {
        let upstream = Upstream::start(vec![
            anthropic_text("Stored."),
            anthropic_recovery_call("toolu_n", "Let me look.", &json!({"key": named})),
            anthropic_text("Not found."),
        ]);
        let proxy = Proxy::start_with(&upstream.url(), false, options);
        let (status, answer) = raw_request_with(
            &proxy.url,
            proxy.url.strip_prefix("http://").unwrap(),
            &["x-api-key: sk-ant-client-a"],
            "POST",
            "/v1/messages",
            anthropic_conversation(&rows, "ok").to_string().as_bytes(),
        );
        assert_eq!(status, 200, "{answer}");
        unscoped_message(&proxy, &anthropic_question());
        let recorded = upstream.recorded();
        assert_eq!(recorded.len(), 3, "{options:?}");
        let answer = anthropic_answer_in(&recorded[2]);
        assert_eq!(
            answer["content"],
            format!("no original is stored under \"{named}\""),
            "{options:?}: {answer}"
        );
        assert_eq!(answer["is_error"], true);
        for request in &recorded[1..] {
            assert!(
                !String::from_utf8_lossy(&request.body).contains("S0017"),
                "{options:?}: the request without a credential carries none of Alice's rows"
            );
        }
        let recovered = support::run_in(
            proxy.project(),
            &["recover", "--namespace", alice.as_str(), &key],
            b"",
        );
        assert_eq!(
            String::from_utf8(recovered.stdout).unwrap(),
            rows,
            "{options:?}: the original is where it was stored"
        );
    }
}
