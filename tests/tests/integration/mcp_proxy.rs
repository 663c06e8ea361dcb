//! `parrot-compress mcp-proxy`, run as an agent runs it: a scripted fake server
//! (`tests/mcp/fake_server.py`) for what a real server rarely does on demand, and the real
//! filesystem server from the npm registry driven by the official SDK's client
//! (`tests/mcp/client.mjs`, and `tests/mcp/close.mjs` for how `close()` ends a session; `npm ci`
//! runs in `tests/mcp` once when its modules are missing). The ending tests find every process
//! of a session by a variable in its environment, whoever its parent is by then.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use parrot_host::{Namespace, Retention, TeeStore};
use parrot_tee_sqlite::SqliteTeeStore;
use serde_json::{Value, json};

use crate::redis_server::RedisServer;
use crate::support;

/// How long a test waits for any one line before it fails.
const LINE_TIMEOUT: Duration = Duration::from_secs(20);

fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp")
}

fn fake_server() -> Vec<String> {
    support::require(&support::PYTHON3);
    vec![
        "python3".to_owned(),
        mcp_dir().join("fake_server.py").display().to_string(),
    ]
}

/// A process spoken to in JSON lines: its stdout read on a thread, its stderr collected.
struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Receiver<String>,
}

impl Peer {
    fn start(mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {command:?}: {err}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match stdout.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let (tx, stderr_text) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = tx.send(text);
        });
        Peer {
            child,
            stdin,
            lines,
            stderr: stderr_text,
        }
    }

    /// The proxy in `project` in front of `server`; `kill_switch` sets
    /// PARROT_COMPRESSION_DISABLED=1.
    fn proxy(project: &Path, server: &[String], kill_switch: bool) -> Peer {
        Peer::proxy_with(project, &[], server, kill_switch)
    }

    /// [`Peer::proxy`] with global options (`--tee-store URL`).
    fn proxy_with(project: &Path, options: &[&str], server: &[String], kill_switch: bool) -> Peer {
        Peer::proxy_in(project, options, &[], server, kill_switch)
    }

    /// [`Peer::proxy_with`] with options of `mcp-proxy` itself (`--namespace NAME`).
    fn proxy_in(
        project: &Path,
        options: &[&str],
        proxy_options: &[&str],
        server: &[String],
        kill_switch: bool,
    ) -> Peer {
        let mut command = Command::new(support::binary());
        command
            .arg("--project")
            .arg(project)
            .args(options)
            .arg("mcp-proxy")
            .args(proxy_options)
            .arg("--")
            .args(server)
            .env_remove("PARROT_PLUGIN_PATH")
            .env_remove("PARROT_COMPRESSION_DISABLED");
        if kill_switch {
            command.env("PARROT_COMPRESSION_DISABLED", "1");
        }
        Peer::start(command)
    }

    fn direct(server: &[String]) -> Peer {
        let mut command = Command::new(&server[0]);
        command.args(&server[1..]);
        Peer::start(command)
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write to the peer");
        stdin.write_all(b"\n").expect("write to the peer");
        stdin.flush().expect("flush to the peer");
    }

    fn send_json(&mut self, value: &Value) {
        self.send(&value.to_string());
    }

    fn recv(&self) -> String {
        self.lines
            .recv_timeout(LINE_TIMEOUT)
            .unwrap_or_else(|_| panic!("no line within {LINE_TIMEOUT:?}"))
    }

    /// Every line up to and including the response with `id`.
    fn until_response(&self, id: &Value) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let line = self.recv();
            let done = serde_json::from_str::<Value>(&line)
                .ok()
                .is_some_and(|v| is_response_to(&v, id));
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    fn response(&self, id: &Value) -> Value {
        let lines = self.until_response(id);
        serde_json::from_str(lines.last().expect("a line")).expect("JSON response")
    }

    /// The handshake; the lines received.
    fn initialize(&mut self) -> Vec<String> {
        self.send_json(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        );
        let lines = self.until_response(&json!(0));
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        lines
    }

    fn call(&mut self, id: Value, tool: &str, arguments: Value) -> Value {
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        self.response(&id)
    }

    /// Kills the proxy's server with SIGKILL.
    fn kill_server(&self) {
        let server = server_pid(&self.child);
        let killed = Command::new("kill")
            .args(["-KILL", &server.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }

    /// Waits for the proxy to exit on its own, asserting it does within a second; its status
    /// and its last stderr line.
    fn ended_within_a_second(&mut self) -> (ExitStatus, String) {
        let at = Instant::now();
        let status = wait_within(&mut self.child, Duration::from_secs(1));
        assert!(at.elapsed() < Duration::from_secs(1));
        (status, self.stderr.recv_timeout(LINE_TIMEOUT).unwrap())
    }

    /// Closes the proxy's input and waits for it to exit (at most `within`).
    fn finish(mut self, within: Duration) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let status = wait_within(&mut self.child, within);
        let stderr = self.stderr.recv_timeout(LINE_TIMEOUT).unwrap_or_default();
        (status, stderr)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_response_to(value: &Value, id: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|item| is_response_to(item, id)),
        Value::Object(map) => {
            map.get("id") == Some(id)
                && !map.contains_key("method")
                && (map.contains_key("result") || map.contains_key("error"))
        }
        _ => false,
    }
}

fn wait_within(child: &mut Child, within: Duration) -> ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the proxy did not exit within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn json_of(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
}

/// The text of a tools/call result's first content block.
fn first_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block: {response}"))
}

/// The fake server's `rows` text: what `rows_text()` in fake_server.py writes.
fn rows_text(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!("  {{\n    \"id\": {i},\n    \"name\": \"row {i}\",\n    \"note\": null\n  }}")
        })
        .collect();
    format!("[\n{}\n]", rows.join(",\n"))
}

/// The server's pid, from the proxy's children in /proc.
fn server_pid(proxy: &Child) -> u32 {
    let pid = proxy.id();
    let deadline = Instant::now() + LINE_TIMEOUT;
    loop {
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .expect("/proc/PID/task/PID/children is readable (Linux)");
        if let Some(child) = children.split_whitespace().next() {
            return child.parse().expect("a pid");
        }
        assert!(Instant::now() < deadline, "the proxy started no server");
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ---------------------------------------------------------------------------------------------
// The scripted fake server.

#[test]
fn tools_list_gains_wm_get_result_and_a_json_result_is_compressed_and_recovered_exactly() {
    let project = tempfile::tempdir().unwrap();
    let proxy = Peer::proxy(project.path(), &fake_server(), false);
    list_compress_and_recover(proxy);
}

/// The same session with the store in Redis, in a namespace it was given; then a second
/// process, with another project, returns the original from the same Redis, by `recover
/// --namespace` and by its own proxy's `wm_get_result` in the same namespace.
#[test]
fn with_a_redis_store_another_process_recovers_what_the_proxy_stored() {
    let redis = RedisServer::start(&[]);
    let url = redis.url("?prefix=agents:");
    let project = tempfile::tempdir().unwrap();
    let proxy = Peer::proxy_in(
        project.path(),
        &["--tee-store", &url],
        &["--namespace", "team-a"],
        &fake_server(),
        false,
    );
    let key = list_compress_and_recover(proxy);

    let elsewhere = tempfile::tempdir().unwrap();
    let out = support::run_in(
        elsewhere.path(),
        &[
            "--tee-store",
            &url,
            "recover",
            "--namespace",
            "team-a",
            &key,
        ],
        b"",
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        rows_text(40),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut other = Peer::proxy_in(
        elsewhere.path(),
        &["--tee-store", &url],
        &["--namespace", "team-a"],
        &fake_server(),
        false,
    );
    other.initialize();
    let recovered = other.call(json!(1), "wm_get_result", json!({"key": key}));
    assert_eq!(
        first_text(&recovered),
        format!("[wm_get_result {{\"key\":\"{key}\"}}]\n{}", rows_text(40))
    );
    let (status, stderr) = other.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {stderr}");
}

/// The key of the `_tee` pointer of a `rows` call through `proxy` (request `id`).
fn rows_key(proxy: &mut Peer, id: u64) -> String {
    let response = proxy.call(json!(id), "rows", json!({}));
    crate::support::pointed(first_text(&response))
        .expect("a pointer")
        .key
}

/// The namespace an `mcp-proxy` logged at its start.
fn logged_namespace(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|line| line.starts_with("mcp-proxy: this session's originals are in namespace "))
        .unwrap_or_else(|| panic!("no namespace line: {stderr}"));
    line.split(' ').nth(7).expect("the namespace").to_owned()
}

/// One session read another's original by key over a shared store (the review's finding):
/// each session stores in a namespace of its own, logged once at start, and a second session
/// over the same SQLite file asking for the first one's key gets the tool error of a key
/// nobody holds. `recover --namespace` with the logged name returns it; two sessions given
/// the same `--namespace` share their originals.
#[test]
fn a_session_cannot_read_another_sessions_originals_unless_they_share_a_namespace() {
    let project = tempfile::tempdir().unwrap();
    let mut first = Peer::proxy(project.path(), &fake_server(), false);
    first.initialize();
    let key = rows_key(&mut first, 1);
    let mut second = Peer::proxy(project.path(), &fake_server(), false);
    second.initialize();
    let foreign = second.call(json!(1), "wm_get_result", json!({"key": key}));
    assert_eq!(foreign["result"]["isError"], true, "{foreign}");
    assert_eq!(
        first_text(&foreign),
        format!("no original is stored under \"{key}\"")
    );
    let own = first.call(json!(2), "wm_get_result", json!({"key": key}));
    assert_eq!(
        first_text(&own),
        format!("[wm_get_result {{\"key\":\"{key}\"}}]\n{}", rows_text(40))
    );
    let (status, first_log) = first.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {first_log}");
    let (status, second_log) = second.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {second_log}");
    let namespace = logged_namespace(&first_log);
    assert!(namespace.starts_with("session-"), "{namespace}");
    assert_ne!(namespace, logged_namespace(&second_log));

    let out = support::run_in(
        project.path(),
        &["recover", "--namespace", &namespace, &key],
        b"",
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), rows_text(40));
    let out = support::run_in(project.path(), &["recover", &key], b"");
    assert_eq!(out.status.code(), Some(1), "not stored unscoped");

    let shared = ["--namespace", "pair"];
    let mut one = Peer::proxy_in(project.path(), &[], &shared, &fake_server(), false);
    one.initialize();
    assert_eq!(rows_key(&mut one, 1), key, "the same content, the same key");
    let mut two = Peer::proxy_in(project.path(), &[], &shared, &fake_server(), false);
    two.initialize();
    let recovered = two.call(json!(1), "wm_get_result", json!({"key": key}));
    assert_eq!(
        first_text(&recovered),
        format!("[wm_get_result {{\"key\":\"{key}\"}}]\n{}", rows_text(40))
    );
    for peer in [one, two] {
        let (status, log) = peer.finish(Duration::from_secs(5));
        assert!(status.success(), "{status}: {log}");
        assert_eq!(logged_namespace(&log), "pair");
    }
}

/// Lists the tools, calls `rows` (compressed, with a pointer) and `wm_get_result` (the exact
/// original back; an unknown key is a tool error); the key, once the proxy has exited 0.
fn list_compress_and_recover(mut proxy: Peer) -> String {
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let list = proxy.response(&json!(1));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"rows"));
    assert_eq!(names.last(), Some(&"wm_get_result"));
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().last().unwrap()["inputSchema"]["required"],
        json!(["key"])
    );

    let response = proxy.call(json!(2), "rows", json!({}));
    let text = first_text(&response);
    let original = rows_text(40);
    assert!(
        text.len() < original.len() / 2,
        "not compressed: {} bytes of {}",
        text.len(),
        original.len()
    );
    let key = crate::support::pointed(text).expect("a pointer").key;
    assert!(key.starts_with("__tee__:rows:"), "{key}");

    let recovered = proxy.call(json!(3), "wm_get_result", json!({"key": key}));
    assert_eq!(
        first_text(&recovered),
        format!("[wm_get_result {{\"key\":\"{key}\"}}]\n{original}")
    );
    assert!(recovered["result"].get("isError").is_none());

    let unknown = proxy.call(json!(4), "wm_get_result", json!({"key": "nope"}));
    assert_eq!(unknown["result"]["isError"], true);
    assert_eq!(first_text(&unknown), "no original is stored under \"nope\"");
    let (status, stderr) = proxy.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {stderr}");
    key
}

/// The corpus build log 20 times (9.4 MB, 120,040 lines), stored under a key in `project`'s
/// store as a proxy would have stored it.
fn store_a_big_log(project: &Path, key: &str) -> String {
    store_the_log(project, key, 20)
}

/// The corpus build log (469 KB, 6,002 lines).
fn build_log() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/build-log.txt")
}

/// The corpus build log `times` times over, stored under `key` in `project`'s store.
fn store_the_log(project: &Path, key: &str, times: usize) -> String {
    let original = std::fs::read_to_string(build_log()).unwrap().repeat(times);
    std::fs::create_dir_all(project.join(".parrot")).unwrap();
    SqliteTeeStore::open(project.join(".parrot/tee.db"), Retention::default())
        .unwrap()
        .put(key, original.as_bytes())
        .unwrap();
    original
}

/// The ids of the responses in `lines`, in the order they came (a batch's in its order).
fn response_ids(lines: &[String]) -> Vec<Value> {
    let mut ids = Vec::new();
    for line in lines {
        let value = json_of(line);
        let messages = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        for message in messages {
            if message.get("method").is_none() && message.get("id").is_some() {
                ids.push(message["id"].clone());
            }
        }
    }
    ids
}

/// Reads lines until a response to each of `ids` has come (at most `within`).
fn until_responses(proxy: &Peer, ids: &[Value], within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    let mut lines = Vec::new();
    while !ids.iter().all(|id| response_ids(&lines).contains(id)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match proxy.lines.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => panic!("not every one of {ids:?} answered within {within:?}: {lines:?}"),
        }
    }
    lines
}

/// A `wm_get_result` of a 100 MB original (the finding: 155 s, and every other message waited
/// for it), here a case-insensitive grep through all of it (3 s in a debug build): answered
/// off the thread that reads the client, so a `tools/call` the server answers, a `ping` and a
/// short recovery call sent after it, each on its own line and in a batch, are all answered
/// before it; and each answer is whole and right.
#[test]
fn a_long_recovery_call_holds_up_neither_the_other_calls_nor_short_recoveries() {
    let project = tempfile::tempdir().unwrap();
    // Stored in the namespace the proxy is given: a session reads only its own.
    let namespace = Namespace::new("long-and-short").unwrap();
    let big = "__tee__:shell_build:00000000000b";
    let original = store_the_log(project.path(), &namespace.scoped_key(big), 213);
    assert!(original.len() > 99_000_000, "{}", original.len());
    let small = "__tee__:shell_build:00000000000s";
    let log = std::fs::read_to_string(build_log()).unwrap();
    let short: String = log.split_inclusive('\n').take(40).collect();
    SqliteTeeStore::open(project.path().join(".parrot/tee.db"), Retention::default())
        .unwrap()
        .put(&namespace.scoped_key(small), short.as_bytes())
        .unwrap();
    let mut proxy = Peer::proxy_in(
        project.path(),
        &[],
        &["--namespace", namespace.as_str()],
        &fake_server(),
        false,
    );
    proxy.initialize();
    let recovery = |id: &str, key: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "wm_get_result", "arguments": {"key": key, "lines": "1-"}}})
    };
    let grep = r"(?i)mis+match(ed)?\s+types";
    proxy.send_json(
        &json!({"jsonrpc": "2.0", "id": "big", "method": "tools/call",
        "params": {"name": "wm_get_result", "arguments": {"key": big, "grep": grep}}}),
    );
    proxy.send_json(
        &json!({"jsonrpc": "2.0", "id": "rows", "method": "tools/call",
        "params": {"name": "rows", "arguments": {}}}),
    );
    proxy.send_json(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}));
    proxy.send_json(&recovery("small", small));
    proxy.send_json(&json!([
        recovery("small-in-batch", small),
        {"jsonrpc": "2.0", "id": "ping-in-batch", "method": "ping"}
    ]));
    let ids = [
        "rows",
        "ping",
        "small",
        "small-in-batch",
        "ping-in-batch",
        "big",
    ]
    .map(|id| json!(id));
    let lines = until_responses(&proxy, &ids, Duration::from_secs(300));
    let order = response_ids(&lines);
    assert_eq!(order.last(), Some(&json!("big")), "{order:?}");
    assert_eq!(order.len(), ids.len(), "{order:?}");

    let by_id = |id: &str| {
        lines
            .iter()
            .flat_map(|line| match json_of(line) {
                Value::Array(items) => items,
                other => vec![other],
            })
            .find(|message| message["id"] == id && message.get("method").is_none())
            .unwrap()
    };
    let rows = by_id("rows");
    assert!(
        crate::support::pointed(first_text(&rows)).is_some(),
        "{rows}"
    );
    assert_eq!(by_id("ping")["result"]["echo"], "ping");
    assert_eq!(by_id("ping-in-batch")["result"]["echo"], "ping");
    for id in ["small", "small-in-batch"] {
        let answer = by_id(id);
        assert_eq!(
            first_text(&answer),
            format!("[wm_get_result {{\"key\":\"{small}\",\"lines\":\"1-\"}}]\n{short}")
        );
    }
    let answer = by_id("big");
    assert!(answer["result"].get("isError").is_none(), "{answer}");
    let text = first_text(&answer);
    let (header, body) = text.split_once('\n').unwrap();
    assert_eq!(
        header,
        format!("[wm_get_result {}]", json!({"key": big, "grep": grep}))
    );
    // Every matching line, "N:line", is line N of the original, as it is.
    let lines: Vec<&str> = original.lines().collect();
    let mut matches = 0;
    let not_a_note_or_separator = |line: &&str| !line.starts_with('[') && *line != "--";
    for found in body.lines().filter(not_a_note_or_separator) {
        let (number, line) = found.split_once(':').unwrap_or_else(|| panic!("{found}"));
        let number: usize = number.parse().unwrap_or_else(|_| panic!("{found}"));
        assert_eq!(line, lines[number - 1]);
        assert!(line.contains("mismatched types"), "{line}");
        matches += 1;
    }
    let expected = lines
        .iter()
        .filter(|line| line.to_lowercase().contains("mismatched types"))
        .count();
    assert_eq!(matches, expected, "{text}");
    let (status, stderr) = proxy.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {stderr}");
}

/// A tool result of 20 MB is compressed off the thread that reads the server: the server's
/// answer to a `ping` sent after the call, written after the result, reaches the client
/// first; the result comes whole, compressed, and its original is recovered exactly.
#[test]
fn a_big_result_being_compressed_holds_up_none_of_the_servers_later_messages() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    let log = std::fs::read_to_string(build_log()).unwrap();
    let times = 43;
    proxy.send_json(
        &json!({"jsonrpc": "2.0", "id": "file", "method": "tools/call",
        "params": {"name": "file", "arguments": {"path": build_log(), "times": times}}}),
    );
    proxy.send_json(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}));
    let lines = until_responses(
        &proxy,
        &[json!("file"), json!("ping")],
        Duration::from_secs(300),
    );
    assert_eq!(response_ids(&lines), [json!("ping"), json!("file")]);
    let result = json_of(lines.last().unwrap());
    let text = first_text(&result);
    let original = log.repeat(times);
    assert!(text.len() < original.len() / 10, "{} bytes", text.len());
    let key = crate::support::pointed(text).expect("a pointer").key;
    let recovered = proxy.call(
        json!(3),
        "wm_get_result",
        json!({"key": key, "lines": "1-20"}),
    );
    let first: String = original.split_inclusive('\n').take(20).collect();
    assert!(first_text(&recovered).ends_with(&first), "{recovered}");
    let (status, stderr) = proxy.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {stderr}");
}

/// `wm_get_result` with `max_chars: 0` on a 9.4 MB original (the whole of it came back, 115 MB
/// for a 100 MB one): held to the proxy's cap, 200,000 characters by default or
/// `--recovery-max-chars`, with a note giving the cap and the exact counts, the part exactly
/// the original's first lines, and the next part's arguments, which the cap holds alike.
#[test]
fn max_chars_0_is_held_to_the_proxys_cap_and_says_so() {
    let project = tempfile::tempdir().unwrap();
    let key = "__tee__:shell_build:0123456789ab";
    let namespace = Namespace::new("capped").unwrap();
    let original = store_a_big_log(project.path(), &namespace.scoped_key(key));
    let total = original.chars().count();
    for (options, cap) in [
        (&[][..], parrot_host::DEFAULT_RECOVERY_MAX_CHARS),
        (&["--recovery-max-chars", "50000"][..], 50_000),
    ] {
        let mut command = Command::new(support::binary());
        command
            .arg("--project")
            .arg(project.path())
            .args(["mcp-proxy", "--namespace", namespace.as_str()])
            .args(options)
            .arg("--")
            .args(fake_server())
            .env_remove("PARROT_PLUGIN_PATH")
            .env_remove("PARROT_COMPRESSION_DISABLED");
        let mut proxy = Peer::start(command);
        proxy.initialize();
        let mut arguments = json!({"key": key, "lines": "1-", "max_chars": 0});
        let mut from = 1;
        for id in 1..=2 {
            let at = Instant::now();
            let response = proxy.call(json!(id), "wm_get_result", arguments.clone());
            let elapsed = at.elapsed();
            assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
            assert!(response["result"].get("isError").is_none(), "{response}");
            let text = first_text(&response);
            let mut lines = text.split_inclusive('\n');
            let header = lines.next().unwrap();
            assert_eq!(
                header,
                format!("[wm_get_result {}]\n", arguments),
                "the header names the selector asked"
            );
            let note = lines.next().unwrap();
            let rest: String = lines.collect();
            let (body, more) = rest.rsplit_once("[more: ").expect("a next part");
            let shown = body.chars().count();
            assert!(shown <= cap && shown > cap * 9 / 10, "{shown} characters");
            assert_eq!(
                note,
                format!(
                    "[capped: one answer here holds at most {cap} characters, whatever its \
                     selector asks, max_chars 0 included; the part below is {shown} characters \
                     of the original's {total}; the next part: the [more: …] line below; the \
                     exact original, uncapped: parrot-compress recover --namespace capped \
                     {key}]\n"
                )
            );
            let expected: String = original
                .split_inclusive('\n')
                .skip(from - 1)
                .take(body.lines().count())
                .collect();
            assert_eq!(body, expected, "the original's lines from {from}, exactly");
            from += body.lines().count();
            let next =
                format!(r#"wm_get_result {{"key":"{key}","lines":"{from}-","max_chars":0}}]"#);
            assert_eq!(more, format!("{next}\n"));
            arguments = json!({"key": key, "lines": format!("{from}-"), "max_chars": 0});
        }
        let (status, stderr) = proxy.finish(Duration::from_secs(5));
        assert!(status.success(), "{status}: {stderr}");
    }
}

#[test]
fn tool_errors_reach_the_client_byte_for_byte() {
    let project = tempfile::tempdir().unwrap();
    let mut direct = Peer::direct(&fake_server());
    direct.initialize();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rows_error","arguments":{}}}"#;
    direct.send(call);
    proxy.send(call);
    let expected = direct.until_response(&json!(5));
    assert_eq!(proxy.until_response(&json!(5)), expected);
    assert_eq!(first_text(&json_of(&expected[0])), rows_text(40));
}

#[test]
fn progress_notifications_reach_the_client_before_the_result() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"tok-7"}}}"#);
    let lines = proxy.until_response(&json!(7));
    assert_eq!(lines.len(), 3, "{lines:?}");
    for (line, step) in lines.iter().zip([1, 2]) {
        // Relayed as the server wrote them, separators included.
        assert_eq!(
            line,
            &format!(
                "{{\"jsonrpc\": \"2.0\", \"method\": \"notifications/progress\", \"params\": {{\"progressToken\": \"tok-7\", \"progress\": {step}, \"total\": 2}}}}\n"
            )
        );
    }
    assert!(crate::support::pointed(first_text(&json_of(&lines[2]))).is_some());
}

#[test]
fn a_ping_from_the_server_is_relayed_and_its_answer_reaches_the_server() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ping_me","arguments":{}}}"#);
    let ping = proxy.recv();
    assert_eq!(
        ping,
        "{\"jsonrpc\": \"2.0\", \"id\": \"server-ping-1\", \"method\": \"ping\"}\n"
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":"server-ping-1","result":{}}"#);
    let response = proxy.response(&json!(8));
    assert_eq!(
        first_text(&response),
        r#"pong received: {"jsonrpc": "2.0", "id": "server-ping-1", "result": {}}"#
    );
}

/// Without python3 the scripted server cannot start, and a test used to wait out its line
/// timeout and fail with only `no line within 20s`. This runs one such test in a child test
/// process whose `PATH` holds nothing.
#[test]
fn a_missing_python3_fails_the_fake_server_tests_at_once_naming_it() {
    let empty = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "mcp_proxy::a_ping_from_the_server_is_relayed_and_its_answer_reaches_the_server",
            "--exact",
        ])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{output}");
    assert!(
        output.contains("python3 is missing") && output.contains("`cargo xtask test`"),
        "{output}"
    );
    assert!(started.elapsed() < LINE_TIMEOUT, "{:?}", started.elapsed());
}

#[test]
fn a_cancellation_reaches_the_server() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait_cancel","arguments":{}}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}"#);
    assert_eq!(
        proxy.recv(),
        "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/message\", \"params\": {\"level\": \"info\", \"data\": \"cancelled 9\"}}\n"
    );
}

#[test]
fn out_of_order_responses_are_each_compressed_for_their_own_call() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"name":"hold","arguments":{}}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"release","arguments":{}}}"#);
    let release = json_of(&proxy.recv());
    let hold = json_of(&proxy.recv());
    assert_eq!((&release["id"], &hold["id"]), (&json!(11), &json!("first")));
    for (response, tool, rows) in [(&release, "release", 30), (&hold, "hold", 50)] {
        let pointed = crate::support::pointed(first_text(response)).expect("a pointer");
        let key = pointed.key.as_str();
        assert!(key.starts_with(&format!("__tee__:{tool}:")), "{key}");
        let recovered = proxy.call(
            json!(format!("r-{tool}")),
            "wm_get_result",
            json!({"key": key}),
        );
        assert_eq!(
            first_text(&recovered),
            format!("[wm_get_result {{\"key\":\"{key}\"}}]\n{}", rows_text(rows))
        );
    }
}

#[test]
fn a_batch_response_is_compressed_inside_its_array() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"batch","arguments":{}}}"#);
    let batch = json_of(&proxy.recv());
    let items = batch.as_array().expect("a batch array");
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["params"]["data"], "batch follows");
    assert_eq!(items[1]["id"], 12);
    assert!(crate::support::pointed(first_text(&items[1])).is_some());
}

#[test]
fn a_compressed_result_keeps_every_byte_of_the_servers_line_outside_its_text() {
    let project = tempfile::tempdir().unwrap();
    let mut direct = Peer::direct(&fake_server());
    direct.initialize();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    let id = "123456789012345678901234567890";
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"exotic","arguments":{{}}}}}}"#
    );
    direct.send(&call);
    proxy.send(&call);
    let sent = direct.until_response(&json_of(id)).concat();
    assert!(sent.contains("1E400") && sent.contains(id), "{sent}");
    let relayed = proxy.until_response(&json_of(id)).concat();
    let (before, after) = sent
        .split_once(&serde_json::to_string(&rows_text(40)).unwrap())
        .expect("the server's line holds the rows as one JSON string");
    let compressed = first_text(&json_of(&relayed)).to_owned();
    assert!(
        crate::support::pointed(&compressed).is_some(),
        "{compressed}"
    );
    assert_eq!(
        relayed,
        format!(
            "{before}{}{after}",
            serde_json::to_string(&compressed).unwrap()
        )
    );
}

#[test]
fn a_malformed_server_line_is_relayed_and_reported() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"garbage","arguments":{}}}"#);
    assert_eq!(proxy.recv(), "this is not JSON {\n");
    let response = json_of(&proxy.recv());
    assert_eq!(response["id"], 13);
    assert!(crate::support::pointed(first_text(&response)).is_some());
    let (status, stderr) = proxy.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        stderr.contains("warning: mcp-proxy: server line 2: not JSON (expected ident at line 1 column 2); relayed as is"),
        "{stderr}"
    );
}

#[test]
fn a_malformed_client_line_is_forwarded_and_reported() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send("{\"jsonrpc\": \"2.0\", oops");
    let error = json_of(&proxy.recv());
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(error["error"]["data"], "{\"jsonrpc\": \"2.0\", oops");
    // The session goes on.
    let response = proxy.call(json!(14), "rows", json!({}));
    assert!(crate::support::pointed(first_text(&response)).is_some());
    let (status, stderr) = proxy.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        stderr.contains("warning: mcp-proxy: client line 3: not JSON (key must be a string at line 1 column 20); relayed as is"),
        "{stderr}"
    );
}

#[test]
fn other_traffic_is_byte_identical_with_compression_on() {
    let script = [
        r#"{"jsonrpc":"2.0","id":20,"method":"resources/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":"p","method":"prompts/get","params":{"name":"x","arguments":{"a":"1.50"}}}"#,
        r#"{"jsonrpc":"2.0","id":21,"method":"custom/unknown","params":{"n":1.0e3}}"#,
        r#"{"jsonrpc":"2.0","id":22,"method":"ping"}"#,
        r#"[{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{"uri":"file:///x"}},{"jsonrpc":"2.0","id":24,"method":"ping"}]"#,
    ];
    let ids = [json!(20), json!("p"), json!(21), json!(22), json!(24)];
    let project = tempfile::tempdir().unwrap();
    let mut direct = Peer::direct(&fake_server());
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    for peer in [&mut direct, &mut proxy] {
        peer.initialize();
    }
    for (line, id) in script.iter().zip(&ids) {
        direct.send(line);
        proxy.send(line);
        assert_eq!(proxy.until_response(id), direct.until_response(id));
    }
}

/// A client session exercising every behaviour of the fake server that needs no answer from the
/// client; every line received, in order.
fn scripted_session(peer: &mut Peer) -> Vec<String> {
    let mut received = Vec::new();
    peer.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#);
    received.extend(peer.until_response(&json!(0)));
    peer.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let steps: [(&str, Value); 8] = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            json!(1),
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rows","arguments":{}}}"#,
            json!(2),
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":3}}}"#,
            json!(3),
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"batch","arguments":{}}}"#,
            json!(4),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"garbage","arguments":{}}}"#,
            json!(5),
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"rows_error","arguments":{}}}"#,
            json!(6),
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wm_get_result","arguments":{"key":"k"}}}"#,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"custom/unknown","params":{"x":[1,2]}}"#,
            json!(8),
        ),
    ];
    for (line, id) in steps {
        peer.send(line);
        received.extend(peer.until_response(&id));
    }
    peer.send("not json");
    received.push(peer.recv());
    received
}

#[test]
fn kill_switch_makes_the_proxy_a_pure_relay() {
    let project = tempfile::tempdir().unwrap();
    let expected = scripted_session(&mut Peer::direct(&fake_server()));
    let mut proxy = Peer::proxy(project.path(), &fake_server(), true);
    let received = scripted_session(&mut proxy);
    assert_eq!(received.len(), expected.len());
    for (i, (got, want)) in received.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "line {i} differs");
    }
    let (status, stderr) = proxy.finish(Duration::from_secs(5));
    assert!(status.success(), "{status}: {stderr}");
    // Nothing was stored: the kill switch builds no host, so the store was not even created.
    assert!(!project.path().join(".parrot/tee.db").exists());

    // And the same session with compression on does differ (the relay above was not a no-op).
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    assert_ne!(scripted_session(&mut proxy), expected);
}

#[test]
fn a_server_exiting_mid_call_ends_the_proxy_with_its_status() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(
        r#"{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"die","arguments":{}}}"#,
    );
    let (status, stderr) = proxy.ended_within_a_second();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.ends_with("error: MCP server exited with status 3\n"),
        "{stderr}"
    );
}

#[test]
fn killing_the_server_mid_call_ends_the_proxy_within_a_second() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"hang","arguments":{}}}"#);
    proxy.kill_server();
    let (status, stderr) = proxy.ended_within_a_second();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.ends_with("error: MCP server was killed by signal 9\n"),
        "{stderr}"
    );
}

#[test]
fn closing_the_clients_input_stops_the_server_and_exits_0() {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &fake_server(), false);
    proxy.initialize();
    let server = server_pid(&proxy.child);
    let (status, stderr) = proxy.finish(Duration::from_secs(3));
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        !Path::new(&format!("/proc/{server}")).exists()
            || std::fs::read_to_string(format!("/proc/{server}/stat"))
                .is_ok_and(|stat| stat.contains(") Z ")),
        "the server still runs"
    );
}

#[test]
fn a_server_that_cannot_start_is_an_error_naming_it() {
    let project = tempfile::tempdir().unwrap();
    let proxy = Peer::proxy(
        project.path(),
        &["/nonexistent/mcp-server".to_owned(), "--flag".to_owned()],
        false,
    );
    let (status, stderr) = proxy.finish(Duration::from_secs(5));
    assert_eq!(status.code(), Some(1));
    // After the session's namespace line, the error.
    let error = stderr.lines().nth(1).unwrap_or_default();
    assert!(
        error.starts_with(
            "error: cannot start the MCP server /nonexistent/mcp-server --flag: No such file or directory"
        ),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------------
// The real filesystem server from the npm registry, through the official SDK's client.

/// `node`, or a failure that says what is missing.
pub(crate) fn node() -> &'static str {
    support::require(&support::NODE);
    "node"
}

/// `tests/mcp/node_modules`, installed with `npm ci` once (the lock is in the target
/// directory, so test binaries running at once do not race).
pub(crate) fn node_modules() -> PathBuf {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            node();
            let dir = mcp_dir();
            let modules = dir.join("node_modules");
            let lock = std::fs::File::create(support::profile_dir().join("mcp-npm-ci.lock"))
                .expect("create the npm lock file");
            lock.lock().expect("lock the npm lock file");
            if !modules.join(".package-lock.json").is_file() {
                support::require(&support::NPM);
                let status = Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&dir)
                    .status()
                    .expect("npm runs (it comes with Node.js)");
                assert!(
                    status.success(),
                    "npm ci in {} failed (it needs the npm registry): the mcp-proxy tests with \
                     the real MCP server need its packages; `cargo xtask test` installs them",
                    dir.display()
                );
            }
            modules
        })
        .clone()
}

fn filesystem_server(allowed: &Path) -> Vec<String> {
    let index = node_modules().join("@modelcontextprotocol/server-filesystem/dist/index.js");
    vec![
        node().to_owned(),
        index.display().to_string(),
        allowed.display().to_string(),
    ]
}

/// A folder holding two corpus files, as the filesystem server sees it (its real path).
fn data_dir() -> (tempfile::TempDir, PathBuf) {
    data_dir_of(&["github-repos.json", "query-500x12.json"])
}

/// A folder holding `files` of the corpus, as the filesystem server sees it (its real path).
fn data_dir_of(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    for &file in files {
        std::fs::copy(corpus.join(file), data.join(file)).unwrap();
    }
    let data = data.canonicalize().unwrap();
    (dir, data)
}

/// Runs client.mjs against `command` and returns what it printed.
fn sdk_client(data: &Path, file: &Path, command: &[String], kill_switch: bool) -> Value {
    sdk_client_with(data, file, command, kill_switch, None)
}

/// [`sdk_client`], with `grep` for the recovery calls with selectors (PARROT_TEST_GREP).
fn sdk_client_with(
    data: &Path,
    file: &Path,
    command: &[String],
    kill_switch: bool,
    grep: Option<&str>,
) -> Value {
    let mut client = Command::new(node());
    if let Some(grep) = grep {
        client.env("PARROT_TEST_GREP", grep);
    }
    client
        .arg(mcp_dir().join("client.mjs"))
        .arg(data)
        .arg(file)
        .arg("--")
        .args(command)
        .env_remove("PARROT_PLUGIN_PATH")
        .env_remove("PARROT_COMPRESSION_DISABLED");
    if kill_switch {
        client.env("PARROT_COMPRESSION_DISABLED", "1");
    }
    let out = client.output().expect("node runs client.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client.mjs failed: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(stdout.trim())
}

fn proxy_command(project: &Path, server: &[String]) -> Vec<String> {
    let mut command = vec![
        support::binary().display().to_string(),
        "--project".to_owned(),
        project.display().to_string(),
        "mcp-proxy".to_owned(),
        "--".to_owned(),
    ];
    command.extend(server.iter().cloned());
    command
}

#[test]
fn real_server_file_read_is_compressed_and_wm_get_result_returns_the_exact_original() {
    let (_dir, data) = data_dir();
    let project = tempfile::tempdir().unwrap();
    let file = data.join("github-repos.json");
    let original = std::fs::read_to_string(&file).unwrap();
    let server = filesystem_server(&data);
    let out = sdk_client(&data, &file, &proxy_command(project.path(), &server), false);

    let tools = out["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("read_text_file")), "{tools:?}");
    assert_eq!(tools.last(), Some(&json!("wm_get_result")));

    let read = out["read"]["text"][0].as_str().unwrap();
    assert!(
        read.len() * 10 < original.len() * 9,
        "not compressed: {} bytes of {}",
        read.len(),
        original.len()
    );
    // The SDK validated structuredContent against the tool's outputSchema; it mirrors the text.
    assert_eq!(out["read"]["structured"]["content"], read);
    let key = out["pointer"]["key"].as_str().expect("a _tee pointer");
    assert!(key.starts_with("__tee__:read_text_file:"), "{key}");
    assert_eq!(out["recovered"]["isError"], false);
    assert_eq!(
        out["recovered"]["text"][0],
        format!("[wm_get_result {{\"key\":\"{key}\"}}]\n{original}")
    );
    assert_eq!(out["unknown"]["isError"], true);
    assert_eq!(
        out["unknown"]["text"][0],
        "no original is stored under \"no-such-key\""
    );
    // Plain text passes through; the JSON directory tree is small enough to gain nothing.
    assert_eq!(
        out["list_directory"]["text"][0],
        "[FILE] github-repos.json\n[FILE] query-500x12.json"
    );

    // The same session straight to the server: the proxy changed nothing but the read.
    let direct = sdk_client(&data, &file, &server, false);
    assert_eq!(direct["read"]["text"][0], original.as_str());
    assert_eq!(direct["list_directory"], out["list_directory"]);
    assert_eq!(direct["directory_tree"], out["directory_tree"]);
    assert!(direct.get("recovered").is_none());

    // Through the proxy with the kill switch on, the SDK's client sees what it sees directly.
    let relayed = sdk_client(&data, &file, &proxy_command(project.path(), &server), true);
    assert_eq!(relayed, direct);
}

/// The SDK's client through the proxy with its store in Redis: the read compressed, and
/// `wm_get_result` returning the exact file, as with the SQLite store.
#[test]
fn real_server_with_a_redis_store_returns_the_exact_original() {
    let redis = RedisServer::start(&[]);
    let (_dir, data) = data_dir();
    let project = tempfile::tempdir().unwrap();
    let file = data.join("github-repos.json");
    let original = std::fs::read_to_string(&file).unwrap();
    let mut command = proxy_command(project.path(), &filesystem_server(&data));
    command.splice(3..3, ["--tee-store".to_owned(), redis.url("")]);
    // Named, so that the store can be read in the session's namespace.
    command.splice(6..6, ["--namespace".to_owned(), "fs".to_owned()]);
    let out = sdk_client(&data, &file, &command, false);
    let read = out["read"]["text"][0].as_str().unwrap();
    assert!(read.len() < original.len(), "not compressed");
    let key = out["pointer"]["key"].as_str().expect("a _tee pointer");
    assert_eq!(out["recovered"]["isError"], false);
    assert_eq!(
        out["recovered"]["text"][0],
        format!("[wm_get_result {{\"key\":\"{key}\"}}]\n{original}")
    );
    let store = parrot_tee_redis::RedisTeeStore::open(&redis.url("")).unwrap();
    assert_eq!(
        parrot_host::TeeStore::get(&store, &Namespace::new("fs").unwrap().scoped_key(key))
            .unwrap()
            .as_deref(),
        Some(original.as_bytes())
    );
}

#[test]
fn real_server_through_the_kill_switch_is_byte_identical() {
    let (_dir, data) = data_dir();
    let project = tempfile::tempdir().unwrap();
    let server = filesystem_server(&data);
    let file = data.join("query-500x12.json").display().to_string();
    let dir = data.display().to_string();
    let script = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": file}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "directory_tree", "arguments": {"path": dir}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": "/outside"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
    ];
    let session = |peer: &mut Peer| {
        let mut received = peer.initialize();
        for message in &script {
            peer.send_json(message);
            received.extend(peer.until_response(&message["id"]));
        }
        received
    };
    let expected = session(&mut Peer::direct(&server));
    let received = session(&mut Peer::proxy(project.path(), &server, true));
    assert_eq!(received, expected);
    // The read is big: with compression on it would differ.
    let compressed = session(&mut Peer::proxy(project.path(), &server, false));
    assert_ne!(compressed[2], expected[2]);
}

#[test]
fn real_server_killed_mid_session_ends_the_proxy_within_a_second() {
    let (_dir, data) = data_dir();
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::proxy(project.path(), &filesystem_server(&data), false);
    proxy.initialize();
    proxy.kill_server();
    let (status, stderr) = proxy.ended_within_a_second();
    assert_ne!(status.code(), Some(0));
    assert!(
        stderr.contains("error: MCP server was killed by signal 9"),
        "{stderr}"
    );
}

#[test]
fn real_server_build_log_slices_come_back_exactly_and_small() {
    build_log_slices(None);
}

/// The same slices with the proxy's store in Redis.
#[test]
fn real_server_build_log_slices_come_back_exactly_from_a_redis_store() {
    let redis = RedisServer::start(&[]);
    build_log_slices(Some(redis.url("")));
}

/// The SDK's client reads the corpus's build log through the proxy (its store SQLite, or the
/// one at `store`) and asks `wm_get_result` for slices of it: each comes back exact and small.
fn build_log_slices(store: Option<String>) {
    use parrot_host::{TokenCounter, Tokenizer};

    let (_dir, data) = data_dir_of(&["build-log.txt"]);
    let project = tempfile::tempdir().unwrap();
    let file = data.join("build-log.txt");
    let log = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let server = filesystem_server(&data);
    let mut command = proxy_command(project.path(), &server);
    if let Some(url) = &store {
        command.splice(3..3, ["--tee-store".to_owned(), url.clone()]);
        command.splice(6..6, ["--namespace".to_owned(), "fs".to_owned()]);
    }
    let out = sdk_client_with(&data, &file, &command, false, Some(r"^error\["));
    let key = out["pointer"]["key"].as_str().expect("a _tee pointer");
    if let Some(url) = &store {
        let redis = parrot_tee_redis::RedisTeeStore::open(url).unwrap();
        let held =
            parrot_host::TeeStore::get(&redis, &Namespace::new("fs").unwrap().scoped_key(key))
                .unwrap();
        assert_eq!(
            held.as_deref(),
            Some(log.as_bytes()),
            "the original is in Redis"
        );
    }
    let selected = out["selected"].as_array().expect("the recovery calls ran");
    assert_eq!(
        selected.len(),
        3,
        "a marker names a line range: {selected:?}"
    );
    let answer = |i: usize| -> &str {
        assert_eq!(selected[i]["isError"], false, "{}", selected[i]);
        selected[i]["text"][0].as_str().unwrap()
    };

    // grep: the error line with its number and two lines around it.
    let grep = answer(0);
    assert!(Tokenizer::O200k.count(grep) < 2_000);
    let at = lines.iter().position(|l| l.starts_with("error[")).unwrap();
    let expected: String = (at - 2..=at + 2)
        .map(|i| {
            let mark = if i == at { ':' } else { '-' };
            format!("{}{mark}{}\n", i + 1, lines[i])
        })
        .collect();
    let body = grep.split_once("]\n").unwrap().1;
    let (note, body) = body.split_once('\n').unwrap();
    assert_eq!(
        note,
        format!("[1 matching line in lines 1-{}]", lines.len())
    );
    assert_eq!(body, expected);

    // lines: the range the first marker names (its fold spans thousands of lines), held to
    // 4,000 characters: exactly its first lines, then the arguments of the next part.
    let range = selected[1]["arguments"]["lines"].as_str().unwrap();
    let (a, b) = range.split_once('-').unwrap();
    let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
    let text = answer(1);
    assert!(Tokenizer::O200k.count(text) < 2_000, "lines {range}");
    let (header, rest) = text.split_once('\n').unwrap();
    assert_eq!(
        header,
        format!("[wm_get_result {{\"key\":\"{key}\",\"lines\":\"{range}\",\"max_chars\":4000}}]")
    );
    let (body, more) = rest.rsplit_once("[more: ").unwrap();
    let shown = body.lines().count();
    assert!(shown > 10, "{body}");
    let expected: String = lines[a - 1..a - 1 + shown]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(body, expected);
    assert_eq!(
        more,
        format!(
            "wm_get_result {{\"key\":\"{key}\",\"lines\":\"{}-{b}\",\"max_chars\":4000}}]\n",
            a + shown
        )
    );

    // A malformed range: a tool error naming it.
    assert_eq!(selected[2]["isError"], true);
    assert!(
        selected[2]["text"][0]
            .as_str()
            .unwrap()
            .starts_with("selector \"lines\": \"12-x\" is not a range"),
        "{}",
        selected[2]
    );

    // Without selectors the 200,000-token log comes back as its first part, not whole.
    let whole = out["recovered"]["text"][0].as_str().unwrap();
    assert!(Tokenizer::O200k.count(whole) <= 25_500);
    assert!(
        whole.contains("\n[outline: 6002 lines, "),
        "{}",
        &whole[..300]
    );
    assert!(
        whole.trim_end().ends_with("-\"}]"),
        "{}",
        &whole[whole.len() - 200..]
    );
}

// ---------------------------------------------------------------------------------------------
// Ending on signals: the server's process group goes, the report is printed.

/// The variable that marks every process of one session: the proxy, its server and what the
/// server starts inherit it, so a scan of /proc finds them all, whoever their parent is now.
const SESSION_MARKER: &str = "PARROT_TEST_SESSION";

/// The processes of one session, found by their marker; those left are SIGKILLed when it is
/// dropped, so that a failing test leaves nothing running either.
struct Marked(String);

impl Marked {
    fn new() -> Marked {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Marked(format!("{}-{n}", std::process::id()))
    }

    fn set(&self, command: &mut Command) {
        command.env(SESSION_MARKER, &self.0);
    }

    /// The pids and command lines of the session's running processes. A zombie has no
    /// environment left to read, so it is not counted: it runs nothing.
    fn running(&self) -> Vec<(u32, String)> {
        let entry = format!("{SESSION_MARKER}={}", self.0);
        let mut found = Vec::new();
        for dir in std::fs::read_dir("/proc").expect("/proc is readable (Linux)") {
            let Ok(dir) = dir else { continue };
            let Some(pid) = dir.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(environ) = std::fs::read(dir.path().join("environ")) else {
                continue;
            };
            if environ
                .split(|&b| b == 0)
                .any(|var| var == entry.as_bytes())
            {
                let cmdline = std::fs::read(dir.path().join("cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push((pid, cmdline.trim_end().to_owned()));
            }
        }
        found
    }

    /// Asserts that no process of the session runs (allowing three seconds for signals already
    /// sent to be delivered: on a loaded 2-core machine one second was seen not to be enough).
    fn assert_none_left(&self) {
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let left = self.running();
            if left.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "processes of the session still run: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Marked {
    fn drop(&mut self) {
        for (pid, _) in self.running() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

impl Peer {
    /// The proxy with `--report` in front of `server`, its processes marked by `marked`.
    fn reporting(project: &Path, server: &[String], marked: &Marked) -> Peer {
        let mut command = Command::new(support::binary());
        command
            .arg("--project")
            .arg(project)
            .args(["mcp-proxy", "--report", "--"])
            .args(server)
            .env_remove("PARROT_PLUGIN_PATH")
            .env_remove("PARROT_COMPRESSION_DISABLED");
        marked.set(&mut command);
        Peer::start(command)
    }

    /// Calls the fake server's `tool` and returns its first text block.
    fn call_text(&mut self, id: u64, tool: &str) -> String {
        first_text(&self.call(json!(id), tool, json!({}))).to_owned()
    }

    /// Sends `signal` (a name, as `kill -TERM` takes it) to the proxy.
    fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} failed");
    }

    /// Waits up to `within` for the proxy to exit, asserts that no process of the session is
    /// left, and returns the proxy's status, its stderr and how long it took to exit. (A process
    /// left would hold the stderr pipe open: it is looked for first.)
    fn exit_within(&mut self, within: Duration, marked: &Marked) -> (ExitStatus, String, Duration) {
        let at = Instant::now();
        let status = wait_within(&mut self.child, within);
        let took = at.elapsed();
        marked.assert_none_left();
        let stderr = self.stderr.recv_timeout(LINE_TIMEOUT).unwrap_or_default();
        (status, stderr, took)
    }
}

/// Whether `stderr` holds the report's table with a row for one call of `tool`.
fn reports_one_call_of(stderr: &str, tool: &str) -> bool {
    let row = |line: &str| {
        let mut fields = line.split_whitespace();
        fields.next() == Some(tool) && fields.next() == Some("1")
    };
    stderr.lines().any(|l| l.starts_with("tool ")) && stderr.lines().any(row)
}

/// A session with the fake server, its `rows` called (so the report has a row), `setup`'s tools
/// called, then `tool`, which answers `pid N` for a process it started (`what` in messages);
/// returned once that process is among the session's. Python starts it with vfork: the server
/// runs on (and answers) once the child's execve has switched its memory, a moment before the
/// kernel has set where its environment is, so /proc shows it without its marker for that
/// moment.
fn session_with_a_process(
    marked: &Marked,
    setup: &[&str],
    tool: &str,
    what: &str,
) -> (tempfile::TempDir, Peer, u32) {
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::reporting(project.path(), &fake_server(), marked);
    proxy.initialize();
    proxy.call_text(1, "rows");
    for (i, tool) in setup.iter().enumerate() {
        proxy.call_text(10 + i as u64, tool);
    }
    let text = proxy.call_text(2, tool);
    let pid: u32 = text
        .strip_prefix("pid ")
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("{tool} answered {text:?}"));
    let deadline = Instant::now() + Duration::from_secs(3);
    while !marked.running().iter().any(|&(running, _)| running == pid) {
        assert!(
            Instant::now() < deadline,
            "{what} {pid} is not among the session's processes"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    (project, proxy, pid)
}

/// A session with the fake server, its `rows` called (so the report has a row) and a child of
/// the server's own running; `setup` names tools to call before the signal.
fn session_with_a_child(marked: &Marked, setup: &[&str]) -> (tempfile::TempDir, Peer, u32) {
    session_with_a_process(marked, setup, "spawn", "the server's child")
}

/// `signal` to the proxy: the server's last message reaches the client, the whole group goes,
/// the report is printed and the status is 128 + the signal's number.
fn a_signal_ends_the_session(signal: &str, code: i32) {
    let marked = Marked::new();
    let (_project, mut proxy, _child) = session_with_a_child(&marked, &["goodbye"]);
    proxy.signal(signal);
    // The server hears SIGTERM whichever signal the proxy got.
    let last = proxy.recv();
    assert!(
        last.contains("terminated by signal 15"),
        "the server's last message was not relayed: {last}"
    );
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(2), &marked);
    assert_eq!(status.code(), Some(code), "{stderr}");
    assert!(reports_one_call_of(&stderr, "rows"), "no report: {stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
    // SIGTERM was enough: no grace period was waited out (but for the zombie of the child
    // where nothing reaps orphans: then the group looks alive for the 500 ms).
    assert!(took < Duration::from_millis(900), "took {took:?}");
}

#[test]
fn sigterm_ends_the_server_group_prints_the_report_and_exits_143() {
    a_signal_ends_the_session("TERM", 143);
}

#[test]
fn sigint_ends_the_server_group_prints_the_report_and_exits_130() {
    a_signal_ends_the_session("INT", 130);
}

#[test]
fn sighup_ends_the_server_group_prints_the_report_and_exits_129() {
    a_signal_ends_the_session("HUP", 129);
}

#[test]
fn a_server_group_that_ignores_sigterm_is_killed_after_the_grace() {
    let marked = Marked::new();
    // The child is started after ignore_term: it ignores SIGTERM too.
    let (_project, mut proxy, _child) = session_with_a_child(&marked, &["ignore_term"]);
    proxy.signal("TERM");
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(2), &marked);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(reports_one_call_of(&stderr, "rows"), "no report: {stderr}");
    // SIGTERM, 500 ms, SIGKILL.
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_millis(1200),
        "took {took:?}"
    );
}

#[test]
fn closing_the_input_of_a_server_that_stays_kills_its_group_and_exits_0() {
    let marked = Marked::new();
    let (_project, mut proxy, _child) = session_with_a_child(&marked, &["linger", "ignore_term"]);
    drop(proxy.stdin.take());
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(3), &marked);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(reports_one_call_of(&stderr, "rows"), "no report: {stderr}");
    // 1 s for the server to exit on its own, SIGTERM, 500 ms, SIGKILL: over before the SDK's
    // close() would send its SIGTERM (2 s).
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_millis(2000),
        "took {took:?}"
    );
}

#[test]
fn a_signal_while_the_server_has_its_input_grace_cuts_it_short() {
    let marked = Marked::new();
    let (_project, mut proxy, _child) = session_with_a_child(&marked, &["linger", "goodbye"]);
    drop(proxy.stdin.take());
    std::thread::sleep(Duration::from_millis(200));
    proxy.signal("TERM");
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(2), &marked);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(reports_one_call_of(&stderr, "rows"), "no report: {stderr}");
    // Well before the 1 s grace would have ended (200 ms of it had passed).
    assert!(took < Duration::from_millis(700), "took {took:?}");
}

#[test]
fn a_server_that_dies_leaving_a_child_takes_the_child_with_it() {
    let marked = Marked::new();
    let (_project, mut proxy, child) = session_with_a_child(&marked, &[]);
    proxy.send(
        r#"{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"die","arguments":{}}}"#,
    );
    // The child holds the server's output open: the proxy sees the server exit, not its
    // output close.
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(2), &marked);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: MCP server exited with status 3\n"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(!marked.running().iter().any(|&(pid, _)| pid == child));
}

/// Whether `pid` runs: it is in /proc and not a zombie.
fn runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

/// How long `pid` takes to stop running, if it does within `within`.
fn stops_within(pid: u32, within: Duration) -> Option<Duration> {
    let at = Instant::now();
    while runs(pid) {
        if at.elapsed() >= within {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Some(at.elapsed())
}

/// The process group and the session of `pid` (the fields after the state and the parent in
/// /proc/PID/stat).
fn group_and_session(pid: u32) -> (u32, u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let field = |n: usize| fields[n].parse().unwrap_or_else(|_| panic!("{stat}"));
    (field(2), field(3))
}

/// A session with the fake server, its `rows` called (so the report has a row), whose `detach`
/// started a daemon: a `sleep` in a session of its own (setsid()), out of the server's process
/// group, whose parent exited at once; `setup` names tools to call before. The proxy, and the
/// daemon's pid.
fn session_with_a_daemon(marked: &Marked, setup: &[&str]) -> (tempfile::TempDir, Peer, u32) {
    let (project, proxy, daemon) = session_with_a_process(marked, setup, "detach", "the daemon");
    // Out of the server's process group and session: neither the group's signals nor a
    // hang-up of the server's session reach it.
    let server = server_pid(&proxy.child);
    let (group, session) = group_and_session(daemon);
    assert_ne!(group, server, "the daemon is in the server's group");
    assert_ne!(
        session,
        group_and_session(server).1,
        "the daemon is in the server's session"
    );
    (project, proxy, daemon)
}

#[test]
fn closing_the_input_ends_a_daemon_the_server_detached_with_setsid() {
    let marked = Marked::new();
    let (_project, mut proxy, daemon) = session_with_a_daemon(&marked, &[]);
    let at = Instant::now();
    drop(proxy.stdin.take());
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(3), &marked);
    let daemon_ended = stops_within(daemon, Duration::from_secs(3))
        .map(|_| at.elapsed())
        .expect("the daemon still runs");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(reports_one_call_of(&stderr, "rows"), "no report: {stderr}");
    // The server exits on its own when its input closes; SIGTERM ends the daemon: no grace
    // period is waited out.
    assert!(took < Duration::from_millis(900), "took {took:?}");
    eprintln!("the proxy exited in {took:?}, the daemon had ended {daemon_ended:?} after EOF");
}

#[test]
fn sigterm_ends_a_daemon_the_server_detached_with_setsid() {
    let marked = Marked::new();
    let (_project, mut proxy, daemon) = session_with_a_daemon(&marked, &[]);
    let at = Instant::now();
    proxy.signal("TERM");
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(3), &marked);
    let daemon_ended = stops_within(daemon, Duration::from_secs(3))
        .map(|_| at.elapsed())
        .expect("the daemon still runs");
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(reports_one_call_of(&stderr, "rows"), "no report: {stderr}");
    assert!(took < Duration::from_millis(900), "took {took:?}");
    eprintln!("the proxy exited in {took:?}, the daemon had ended {daemon_ended:?} after SIGTERM");
}

#[test]
fn a_daemon_that_ignores_sigterm_is_killed_after_the_grace() {
    let marked = Marked::new();
    // Started after ignore_term: the daemon ignores SIGTERM too.
    let (_project, mut proxy, _daemon) = session_with_a_daemon(&marked, &["ignore_term"]);
    proxy.signal("TERM");
    let (status, stderr, took) = proxy.exit_within(Duration::from_secs(3), &marked);
    assert_eq!(status.code(), Some(143), "{stderr}");
    // SIGTERM, 500 ms, SIGKILL.
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_millis(1200),
        "took {took:?}"
    );
}

#[test]
fn a_detached_daemon_becomes_the_proxys_child_and_is_reaped_when_it_exits() {
    let marked = Marked::new();
    let (_project, proxy, daemon) = session_with_a_daemon(&marked, &[]);
    let parent = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()
            })
    };
    // Its shell exited at once: the daemon is an orphan, and the proxy its reaper.
    assert_eq!(parent(daemon), Some(proxy.child.id()));
    let killed = Command::new("kill")
        .args(["-KILL", &daemon.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Reaped while the session runs (once a second): no zombie waits for the session's end.
    let deadline = Instant::now() + Duration::from_secs(3);
    while Path::new(&format!("/proc/{daemon}")).exists() {
        assert!(
            Instant::now() < deadline,
            "the daemon's zombie was not reaped"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(runs(proxy.child.id()), "the session ended");
}

#[test]
fn a_proxy_killed_with_sigkill_leaves_its_server_a_sigterm() {
    let marked = Marked::new();
    let project = tempfile::tempdir().unwrap();
    let mut proxy = Peer::reporting(project.path(), &fake_server(), &marked);
    proxy.initialize();
    // The server stays when its input closes: only a signal ends it.
    proxy.call_text(1, "linger");
    let server = server_pid(&proxy.child);
    let at = Instant::now();
    proxy.signal("KILL");
    let status = wait_within(&mut proxy.child, Duration::from_secs(2));
    assert_eq!(status.code(), None, "{status}");
    let ended = stops_within(server, Duration::from_secs(3)).map(|_| at.elapsed());
    let ended = ended.expect("the server still runs 3 s after its proxy was killed");
    eprintln!("the server ended {ended:?} after SIGKILL to its proxy");
    marked.assert_none_left();
}

/// Runs close.mjs (the official SDK's client: one call, then `close()`) through the proxy with
/// `--report` in front of `server`; what it printed, and its stderr (the proxy's).
fn sdk_close(data: &Path, server: &[String], marked: &Marked) -> (Value, String) {
    let project = tempfile::tempdir().unwrap();
    let mut command = proxy_command(project.path(), server);
    command.insert(command.len() - server.len() - 1, "--report".to_owned());
    let mut client = Command::new(node());
    client
        .arg(mcp_dir().join("close.mjs"))
        .arg(data)
        .arg("--")
        .args(&command)
        .env_remove("PARROT_PLUGIN_PATH")
        .env_remove("PARROT_COMPRESSION_DISABLED");
    marked.set(&mut client);
    let mut client = client
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs close.mjs");
    let mut stderr = client.stderr.take().expect("stderr");
    let (tx, stderr_text) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    // Its stdout is its own (the proxy's is a pipe to it): it ends when the client exits.
    let mut stdout = String::new();
    client
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .unwrap();
    let status = wait_within(&mut client, LINE_TIMEOUT);
    // Every process of the session inherited the client's stderr: one left would hold it open.
    marked.assert_none_left();
    let stderr = stderr_text.recv_timeout(LINE_TIMEOUT).unwrap_or_default();
    assert!(
        status.success(),
        "close.mjs failed: {status}\n{stdout}{stderr}"
    );
    (json_of(stdout.trim()), stderr)
}

/// The SDK's close() through the proxy ended everything ([`sdk_close`] found nothing of the
/// session left): the call answered, the proxy exited on its own (neither the SDK's SIGKILL
/// nor its SIGTERM's default action), the report printed.
fn assert_sdk_close_ended_everything(out: &Value, stderr: &str) {
    assert_eq!(
        out["list_directory"][0], "[FILE] github-repos.json",
        "{out}"
    );
    assert_eq!(out["exit"]["signal"], Value::Null, "{out}");
    assert!(
        out["exit"]["code"] == 0 || out["exit"]["code"] == 143,
        "{out}"
    );
    // Before the SDK would send SIGKILL (4 s after closing the input).
    assert!(out["close_ms"].as_u64().unwrap() < 4000, "{out}");
    assert!(
        reports_one_call_of(stderr, "list_directory"),
        "no report: {stderr}"
    );
}

#[test]
fn sdk_close_on_a_server_that_leaves_a_helper_behind_leaves_no_process() {
    let (_dir, data) = data_dir_of(&["github-repos.json"]);
    let marked = Marked::new();
    // The server starts a helper sharing its output (a watcher, a language server) and does
    // not end it: it exits when its input closes, the helper stays.
    let mut server = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        r#"sleep 600 & "$@""#.to_owned(),
        "sh".to_owned(),
    ];
    server.extend(filesystem_server(&data));
    let (out, stderr) = sdk_close(&data, &server, &marked);
    assert_sdk_close_ended_everything(&out, &stderr);
    // The proxy's own ending: the server exited on its own, its helper got SIGTERM.
    assert_eq!(out["exit"]["code"], 0, "{out}");
}

#[test]
fn sdk_close_on_a_wrapper_that_ignores_sigterm_and_outlives_its_server_leaves_no_process() {
    let (_dir, data) = data_dir_of(&["github-repos.json"]);
    let marked = Marked::new();
    // The worst launcher: it ignores SIGTERM and goes on running after the server exits (as
    // the old proxy found it: SIGKILL to the launcher only left the rest running).
    let mut server = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        r#"trap '' TERM; "$@"; sleep 600"#.to_owned(),
        "sh".to_owned(),
    ];
    server.extend(filesystem_server(&data));
    let (out, stderr) = sdk_close(&data, &server, &marked);
    assert_sdk_close_ended_everything(&out, &stderr);
    // 1 s for the group to exit on its own, SIGTERM, 500 ms, SIGKILL.
    assert!(out["close_ms"].as_u64().unwrap() >= 1400, "{out}");
}
