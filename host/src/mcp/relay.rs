//! The relay's message logic, without any I/O: what becomes of each line from either side.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use super::RECOVERY_TOOL;
use crate::call::{Call, Input};
use crate::error::RetrieveError;
use crate::host::Host;
use crate::retrieve::{Selector, is_retrieval};

/// What becomes of one line.
#[derive(Debug, Default)]
pub struct Routed<'a> {
    /// Bytes to send on in the line's direction (the line itself when unchanged).
    pub forward: Option<Cow<'a, [u8]>>,
    /// Bytes to send back to the client (the proxy's own answers), a whole line.
    pub answer: Option<Vec<u8>>,
    /// What was wrong with the line, for the log.
    pub warning: Option<String>,
}

impl<'a> Routed<'a> {
    /// The line forwarded as it is.
    pub(super) fn unchanged(line: &'a [u8]) -> Routed<'a> {
        Routed {
            forward: Some(Cow::Borrowed(line)),
            ..Routed::default()
        }
    }

    fn warn(mut self, warning: String) -> Routed<'a> {
        self.warning = Some(warning);
        self
    }
}

/// A client request still waiting for the server's response.
#[derive(Debug, Clone)]
struct Pending {
    method: String,
    /// For `tools/call`: the tool's name.
    tool: Option<String>,
    /// For `tools/list`: asked without a cursor.
    first_page: bool,
}

/// The message logic of the proxy, without any I/O: what to do with each line from either side.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use parrot_host::mcp::Relay;
/// use parrot_host::{Host, MemoryTeeStore};
///
/// let dir = std::env::temp_dir().join("parrot-doc-relay");
/// std::fs::create_dir_all(&dir).unwrap();
/// let host = Host::builder()
///     .project(&dir)
///     .plugin_path(None)
///     .tee_store(Arc::new(MemoryTeeStore::default()))
///     .build()
///     .unwrap();
/// let relay = Relay::new(Arc::new(host));
/// let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{}}}"#;
/// assert_eq!(relay.from_client(call).forward.unwrap().as_ref(), call.as_slice());
/// let result = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"a\": null, \"b\": null, \"c\": 1}"}]}}"#;
/// let routed = relay.from_server(result);
/// assert_eq!(
///     routed.forward.unwrap().as_ref(),
///     b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"c\\\":1}\"}]}}\n"
/// );
/// ```
pub struct Relay {
    host: Arc<Host>,
    pending: Mutex<HashMap<String, Pending>>,
    /// The server listed a tool named [`RECOVERY_TOOL`] itself.
    server_recovers: AtomicBool,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("server_recovers", &self.server_recovers)
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// A relay that compresses through `host` and recovers from its tee store.
    pub fn new(host: Arc<Host>) -> Relay {
        Relay {
            host,
            pending: Mutex::default(),
            server_recovers: AtomicBool::new(false),
        }
    }

    /// The definition of [`RECOVERY_TOOL`], as `tools/list` shows it: the key, and every
    /// selector with examples (see [`crate::Selector`]).
    pub fn recovery_tool() -> Value {
        json!({
            "name": RECOVERY_TOOL,
            "description": "Returns the original of a tool result that was shortened for you, \
                or the part of it you need. Pass the key of the result's \"_tee\" pointer, and \
                optionally selectors: lines or grep (with context) for text, pointer and/or rows \
                for JSON, max_chars with any. The answer's first line names the key and the \
                selectors; a result cut to size ends with \"[more: wm_get_result {...}]\", the \
                exact arguments that return the next part. Without selectors, an original over \
                25,000 tokens returns its first part with an outline (lines, top-level members, \
                array lengths).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "key": {
                        "type": "string",
                        "description": "The \"key\" of a \"_tee\" pointer.",
                        "examples": ["__tee__:read_text_file:1a2b3c4d:1"]
                    },
                    "lines": {
                        "type": "string",
                        "description": "Lines of a text original, 1-based and inclusive, as \
                            the markers of a shortened log name them (\"lines 118-1330\"): \
                            \"A-B\", \"-N\" for the last N, \"A-\" from A to the end, \"A\" \
                            for one line. Returned exactly as written. Combines with grep.",
                        "examples": ["118-1330", "-50", "4000-", "17"]
                    },
                    "grep": {
                        "type": "string",
                        "description": "A regular expression (Rust regex syntax); returns each \
                            matching line as \"N:line\" with its 1-based number, context lines \
                            as \"N-line\", groups separated by \"--\". Within lines, if given.",
                        "examples": ["^error", "(?i)panicked|failed", "E0308"]
                    },
                    "context": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "With grep: lines to show before and after each match \
                            (default 0).",
                        "examples": [3]
                    },
                    "pointer": {
                        "type": "string",
                        "description": "An RFC 6901 JSON Pointer into a JSON original; returns \
                            the value there as written. Array indices are 0-based; \"~1\" \
                            stands for \"/\" and \"~0\" for \"~\" in a member name. With \
                            rows: the array whose rows to return.",
                        "examples": ["/rows/17", "/items/3/title", "/data/a~1b"]
                    },
                    "rows": {
                        "type": "string",
                        "description": "Elements of the array that was tabulated or cut \
                            (0-based, inclusive: \"40-59\", \"-10\" for the last 10, \"40-\"), \
                            returned as the same compressed table the shortened result used. \
                            The array is the one at pointer; without it, the original itself \
                            when it is an array, else its member \"rows\", else its longest \
                            array member.",
                        "examples": ["40-59", "-10", "100-"]
                    },
                    "max_chars": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "The most characters to return; a longer result is cut \
                            on a line or row boundary and ends with the arguments of the next \
                            part. 0: no limit. Without it, results are held to 25,000 tokens.",
                        "examples": [4000]
                    }
                },
                "required": ["key"],
                "additionalProperties": false
            }
        })
    }

    /// What to do with a line from the client (trailing newline included, if any): forward it,
    /// answer it from the tee store, or both (a batch).
    pub fn from_client<'a>(&self, line: &'a [u8]) -> Routed<'a> {
        let body = line.trim_ascii();
        if body.is_empty() {
            return Routed::unchanged(line);
        }
        match serde_json::from_slice::<Value>(body) {
            Err(err) => Routed::unchanged(line).warn(format!("not JSON ({err})")),
            Ok(Value::Object(message)) => match self.client_message(&message) {
                Some(answer) => Routed {
                    answer: Some(to_line(&answer)),
                    ..Routed::default()
                },
                None => Routed::unchanged(line),
            },
            Ok(Value::Array(batch)) => {
                let mut answers = Vec::new();
                let mut rest = Vec::new();
                let mut odd = 0;
                for item in batch {
                    let answer = match &item {
                        Value::Object(message) => self.client_message(message),
                        _ => {
                            odd += 1;
                            None
                        }
                    };
                    match answer {
                        Some(answer) => answers.push(answer),
                        None => rest.push(item),
                    }
                }
                let mut routed = if answers.is_empty() {
                    Routed::unchanged(line)
                } else {
                    Routed {
                        forward: (!rest.is_empty())
                            .then(|| Cow::Owned(to_line(&Value::Array(rest)))),
                        answer: Some(to_line(&Value::Array(answers))),
                        warning: None,
                    }
                };
                if odd > 0 {
                    routed.warning = Some(format!("{odd} batch element(s) are not JSON objects"));
                }
                routed
            }
            Ok(other) => {
                Routed::unchanged(line).warn(format!("not a JSON-RPC message ({})", kind(&other)))
            }
        }
    }

    /// What to do with a line from the server: forward it, compressed where it answers a
    /// `tools/call`, with the recovery tool where it answers a `tools/list`.
    pub fn from_server<'a>(&self, line: &'a [u8]) -> Routed<'a> {
        let body = line.trim_ascii();
        if body.is_empty() {
            return Routed::unchanged(line);
        }
        match serde_json::from_slice::<Value>(body) {
            Err(err) => Routed::unchanged(line).warn(format!("not JSON ({err})")),
            Ok(Value::Object(mut message)) => {
                if self.server_message(&mut message) {
                    Routed {
                        forward: Some(Cow::Owned(to_line(&Value::Object(message)))),
                        ..Routed::default()
                    }
                } else {
                    Routed::unchanged(line)
                }
            }
            Ok(Value::Array(mut batch)) => {
                let mut changed = false;
                let mut odd = 0;
                for item in &mut batch {
                    match item {
                        Value::Object(message) => changed |= self.server_message(message),
                        _ => odd += 1,
                    }
                }
                let mut routed = if changed {
                    Routed {
                        forward: Some(Cow::Owned(to_line(&Value::Array(batch)))),
                        ..Routed::default()
                    }
                } else {
                    Routed::unchanged(line)
                };
                if odd > 0 {
                    routed.warning = Some(format!("{odd} batch element(s) are not JSON objects"));
                }
                routed
            }
            Ok(other) => {
                Routed::unchanged(line).warn(format!("not a JSON-RPC message ({})", kind(&other)))
            }
        }
    }

    /// Records a client request; answers it when it is a recovery call the proxy can answer.
    fn client_message(&self, message: &Map<String, Value>) -> Option<Value> {
        let method = message.get("method").and_then(Value::as_str)?;
        let params = message.get("params");
        if method == "notifications/cancelled" {
            if let Some(id) = params.and_then(|p| p.get("requestId")).and_then(id_key) {
                self.pending().remove(&id);
            }
            return None;
        }
        let id = message.get("id")?;
        let key = id_key(id)?;
        let tool = match method {
            "tools/call" => params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        };
        if tool.as_deref() == Some(RECOVERY_TOOL)
            && let Some(answer) = self.recover(params)
        {
            return Some(json!({"jsonrpc": "2.0", "id": id, "result": answer}));
        }
        let first_page = params.and_then(|p| p.get("cursor")).is_none();
        self.pending().insert(
            key,
            Pending {
                method: method.to_owned(),
                tool,
                first_page,
            },
        );
        None
    }

    /// The result of a recovery call, or `None` to forward it to a server that has its own.
    /// A bad selector, an unknown key or a store that fails is a tool error (`isError`).
    fn recover(&self, params: Option<&Value>) -> Option<Value> {
        let Some(Value::Object(arguments)) = params.and_then(|p| p.get("arguments")) else {
            return Some(tool_error(format!(
                "{RECOVERY_TOOL} needs the arguments {{\"key\": string}}: the key of a \"_tee\" pointer"
            )));
        };
        let (key, selector) = match Selector::from_arguments(arguments) {
            Ok(found) => found,
            Err(err) => return Some(tool_error(err.to_string())),
        };
        match self.host.recover_selected(&key, &selector) {
            Ok(retrieval) => Some(json!({
                "content": [{"type": "text", "text": retrieval.text()}]
            })),
            Err(RetrieveError::NotFound { .. }) if self.server_recovers.load(Ordering::Relaxed) => {
                None
            }
            Err(RetrieveError::Tee(err)) => Some(tool_error(format!(
                "cannot read the original stored under \"{key}\": {err}"
            ))),
            Err(err) => Some(tool_error(err.to_string())),
        }
    }

    /// Rewrites a server response where the proxy has a say; true when it changed anything.
    fn server_message(&self, message: &mut Map<String, Value>) -> bool {
        if message.contains_key("method")
            || !(message.contains_key("result") || message.contains_key("error"))
        {
            return false;
        }
        let Some(key) = message.get("id").and_then(id_key) else {
            return false;
        };
        let Some(pending) = self.pending().remove(&key) else {
            return false;
        };
        let Some(Value::Object(result)) = message.get_mut("result") else {
            return false;
        };
        match (pending.method.as_str(), pending.tool) {
            ("tools/list", _) => self.list_tools(result, pending.first_page),
            ("tools/call", Some(tool)) if tool != RECOVERY_TOOL => self.compress(&tool, result),
            _ => false,
        }
    }

    /// Puts the recovery tool in a `tools/list` result, in place of a server's own.
    fn list_tools(&self, result: &mut Map<String, Value>, first_page: bool) -> bool {
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return false;
        };
        let before = tools.len();
        tools.retain(|tool| tool.get("name").and_then(Value::as_str) != Some(RECOVERY_TOOL));
        let had_own = tools.len() != before;
        if had_own {
            self.server_recovers.store(true, Ordering::Relaxed);
        }
        if first_page {
            tools.push(Relay::recovery_tool());
        }
        had_own || first_page
    }

    /// Compresses the text blocks of a `tools/call` result, JSON or plain text (the tool's
    /// entry decides what happens to each); tees those of a tool error.
    fn compress(&self, tool: &str, result: &mut Map<String, Value>) -> bool {
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        let Some(Value::Array(blocks)) = result.get_mut("content") else {
            return false;
        };
        let mut replaced: Vec<(String, String)> = Vec::new();
        for block in blocks.iter_mut() {
            if block.get("type").and_then(Value::as_str) != Some("text") {
                continue;
            }
            let Some(Value::String(text)) = block.get_mut("text") else {
                continue;
            };
            if is_retrieval(text.as_bytes()) {
                // A recovery result relayed from a proxy behind this one: already the part
                // the agent asked for.
                continue;
            }
            if is_error {
                // Not compressed, but stored: nothing is lost when the caller raises.
                self.host
                    .process(Call::new(tool, Input::Text(text)).status("error"));
                continue;
            }
            let processed = self.host.process(Call::new(tool, Input::Text(text)));
            if !processed.meta.compressed {
                continue;
            }
            let Some(compressed) = processed.text().map(str::to_owned) else {
                continue;
            };
            replaced.push((std::mem::replace(text, compressed.clone()), compressed));
        }
        if replaced.is_empty() {
            return false;
        }
        if let Some(Value::Object(structured)) = result.get_mut("structuredContent") {
            for value in structured.values_mut() {
                if let Value::String(text) = value
                    && let Some((_, compressed)) =
                        replaced.iter().find(|(original, _)| original == text)
                {
                    *text = compressed.clone();
                }
            }
        }
        true
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A JSON-RPC id as a map key: numbers (by their text) and strings never collide.
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(text) => Some(format!("s:{text}")),
        Value::Number(number) => Some(format!("n:{number}")),
        _ => None,
    }
}

fn tool_error(message: String) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

fn to_line(value: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    line
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tee::MemoryTeeStore;

    fn relay(dir: &std::path::Path) -> Relay {
        relay_with(dir, Arc::new(Keys::default()))
    }

    fn relay_with(dir: &std::path::Path, keys: Arc<Keys>) -> Relay {
        let mut builder = Host::builder();
        builder
            .project(dir)
            .plugin_path(None)
            .tee_store(Arc::new(MemoryTeeStore::default()))
            .tee_lossless(true)
            .observer(keys);
        Relay::new(Arc::new(builder.build().unwrap()))
    }

    /// The tee keys of the calls a host processed.
    #[derive(Default)]
    struct Keys(Mutex<Vec<String>>);

    impl crate::observe::Observer for Keys {
        fn on_processed(&self, event: &crate::observe::CallEvent) {
            if let Some(key) = &event.meta.tee_key {
                self.0.lock().unwrap().push(key.clone());
            }
        }
    }

    fn text(routed: &Routed<'_>) -> String {
        String::from_utf8(routed.forward.as_deref().unwrap().to_vec()).unwrap()
    }

    fn value(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    /// A pretty-printed JSON array big enough that compacting it pays for a pointer.
    fn pretty_rows() -> String {
        let rows: Vec<String> = (0..30)
            .map(|i| format!("  {{\n    \"id\": {i},\n    \"name\": \"row {i}\"\n  }}"))
            .collect();
        format!("[\n{}\n]", rows.join(",\n"))
    }

    fn call(id: &str, tool: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        )
    }

    fn result(id: &str, result: Value) -> String {
        json!({"jsonrpc": "2.0", "id": value(id.as_bytes()), "result": result}).to_string()
    }

    #[test]
    fn lines_nobody_asked_about_go_through_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        let lines: [&[u8]; 5] = [
            b"{\"jsonrpc\": \"2.0\", \"method\": \"notifications/progress\", \"params\": {\"progress\": 1.50}}\n",
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\r\n",
            b"not json at all\n",
            b"\n",
            b"[1, 2]",
        ];
        for line in lines {
            assert_eq!(relay.from_server(line).forward.unwrap().as_ref(), line);
            assert_eq!(relay.from_client(line).forward.unwrap().as_ref(), line);
        }
    }

    #[test]
    fn a_json_text_block_is_compressed_and_recovered_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        let original = pretty_rows();
        relay.from_client(call("\"a\"", "read_text_file").as_bytes());
        let response = result(
            "\"a\"",
            json!({
                "content": [
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    {"type": "text", "text": original},
                    {"type": "text", "text": "plain words"}
                ],
                "structuredContent": {"content": original, "other": 1}
            }),
        );
        let routed = relay.from_server(response.as_bytes());
        let out = value(text(&routed).as_bytes());
        let content = &out["result"]["content"];
        assert_eq!(content[0]["type"], "image");
        assert_eq!(content[2]["text"], "plain words");
        let compressed = content[1]["text"].as_str().unwrap();
        assert!(compressed.len() < original.len());
        assert_eq!(out["result"]["structuredContent"]["content"], compressed);
        assert_eq!(out["result"]["structuredContent"]["other"], 1);
        let pointer = &value(compressed.as_bytes())["_tee"];
        let key = pointer["key"].as_str().unwrap();
        assert_eq!(pointer["reason"], "lossless");

        let recover = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"wm_get_result","arguments":{{"key":"{key}"}}}}}}"#
        );
        let routed = relay.from_client(recover.as_bytes());
        assert!(routed.forward.is_none());
        let answer = value(&routed.answer.unwrap());
        assert_eq!(answer["id"], 7);
        let header = format!("[wm_get_result {{\"key\":\"{key}\"}}]\n");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            format!("{header}{original}")
        );
        assert!(answer["result"].get("isError").is_none());
    }

    /// A relay with a log stored under the returned key, as a `shell_cargo_build` result
    /// compressed by the log codec.
    fn relay_with_log(dir: &std::path::Path) -> (Relay, String, String) {
        let keys = Arc::new(Keys::default());
        let relay = relay_with(dir, Arc::clone(&keys));
        let mut lines: Vec<String> = (1..=300)
            .map(|i| format!("   Compiling crate_{i} v0.{i}.1 (build step {i})"))
            .collect();
        lines[150] = "error[E0308]: mismatched types".to_owned();
        let log = lines.join("\n") + "\n";
        relay.from_client(call("1", "shell_cargo_build").as_bytes());
        let response = result("1", json!({"content": [{"type": "text", "text": log}]}));
        relay.from_server(response.as_bytes());
        let key = keys.0.lock().unwrap()[0].clone();
        (relay, key, log)
    }

    fn recovery_call(id: u32, arguments: Value) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "wm_get_result", "arguments": arguments}})
        .to_string()
    }

    /// The text of the proxy's answer to a recovery call, and whether it is a tool error.
    fn recovered(relay: &Relay, arguments: Value) -> (String, bool) {
        let line = recovery_call(5, arguments);
        let routed = relay.from_client(line.as_bytes());
        assert!(routed.forward.is_none());
        let answer = value(&routed.answer.unwrap());
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        (text, answer["result"]["isError"] == true)
    }

    #[test]
    fn selectors_return_exactly_the_lines_asked() {
        let dir = tempfile::tempdir().unwrap();
        let (relay, key, log) = relay_with_log(dir.path());
        let expected = |from: usize, to: usize| -> String {
            log.lines()
                .skip(from - 1)
                .take(to + 1 - from)
                .map(|l| format!("{l}\n"))
                .collect()
        };

        let (text, error) = recovered(&relay, json!({"key": key, "lines": "149-153"}));
        assert!(!error);
        let header = format!("[wm_get_result {{\"key\":\"{key}\",\"lines\":\"149-153\"}}]\n");
        assert_eq!(text, format!("{header}{}", expected(149, 153)));

        let (text, error) = recovered(&relay, json!({"key": key, "grep": "^error", "context": 1}));
        assert!(!error);
        let body: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(
            body,
            [
                "150-   Compiling crate_150 v0.150.1 (build step 150)",
                "151:error[E0308]: mismatched types",
                "152-   Compiling crate_152 v0.152.1 (build step 152)"
            ]
        );

        let (text, _) = recovered(&relay, json!({"key": key, "lines": "1-", "max_chars": 200}));
        assert!(
            text.ends_with(&format!(
                "[more: wm_get_result {{\"key\":\"{key}\",\"lines\":\"5-\",\"max_chars\":200}}]\n"
            )),
            "{text}"
        );
    }

    #[test]
    fn a_bad_selector_is_a_tool_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let (relay, key, _) = relay_with_log(dir.path());
        let cases = [
            (
                json!({"key": key, "lines": "9-x"}),
                "selector \"lines\": \"9-x\" is not a range",
            ),
            (
                json!({"key": key, "grep": "(("}),
                "selector \"grep\": \"((\" is not a valid regular expression",
            ),
            (
                json!({"key": key, "pointer": "/rows/1"}),
                "selector \"pointer\": the original is text, not JSON",
            ),
            (
                json!({"key": key, "lines": "301-"}),
                "selector \"lines\": \"301-\" starts past the end",
            ),
            (
                json!({"key": key, "colour": "red"}),
                "selector \"colour\": unknown",
            ),
            (
                json!({"key": key, "max_chars": "ten"}),
                "selector \"max_chars\": expected a non-negative integer",
            ),
        ];
        for (arguments, start) in cases {
            let (text, error) = recovered(&relay, arguments);
            assert!(error, "{text}");
            assert!(text.starts_with(start), "{text}");
            assert!(!text.contains('\n'), "{text}");
        }
    }

    #[test]
    fn a_second_proxy_in_front_relays_retrievals_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let (inner, key, log) = relay_with_log(dir.path());
        let outer_dir = tempfile::tempdir().unwrap();
        let outer = relay(outer_dir.path());
        // tools/list goes through both: the outer proxy learns that its server (the inner
        // proxy) answers wm_get_result.
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        outer.from_client(list);
        inner.from_client(list);
        let tools = result("1", json!({"tools": []}));
        let listed = inner.from_server(tools.as_bytes());
        outer.from_server(listed.forward.as_deref().unwrap());

        let asked = recovery_call(2, json!({"key": key, "lines": "1-"}));
        let through_outer = outer.from_client(asked.as_bytes());
        assert!(through_outer.answer.is_none());
        let answered = inner.from_client(through_outer.forward.as_deref().unwrap());
        let answer = answered.answer.unwrap();
        let relayed = outer.from_server(&answer);
        assert_eq!(relayed.forward.as_deref().unwrap(), answer.as_slice());
        let text = value(&answer)["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.ends_with(&log));

        // The same text as another tool's result is not compressed either.
        outer.from_client(call("3", "shell_cargo_build").as_bytes());
        let other = result("3", json!({"content": [{"type": "text", "text": text}]}));
        assert_eq!(
            String::from_utf8(
                outer
                    .from_server(other.as_bytes())
                    .forward
                    .unwrap()
                    .to_vec()
            )
            .unwrap(),
            other
        );
    }

    #[test]
    fn the_pipeline_passes_a_retrieval_sent_back_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let (relay, key, log) = relay_with_log(dir.path());
        let (text, _) = recovered(&relay, json!({"key": key}));
        assert!(text.ends_with(&log));
        let processed = relay
            .host
            .process(Call::new("shell_cargo_build", Input::Text(&text)));
        assert!(!processed.meta.compressed);
        assert_eq!(
            processed.meta.skipped,
            Some(crate::call::Skip::AlreadyCompressed)
        );
        assert_eq!(processed.text(), Some(text.as_str()));
        // The log itself is compressed: the header is what let the retrieval through.
        let direct = relay
            .host
            .process(Call::new("shell_cargo_build", Input::Text(&log)));
        assert!(direct.meta.compressed);
    }

    #[test]
    fn a_plain_text_block_goes_to_its_entry_and_is_recovered_exactly() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".parrot")).unwrap();
        std::fs::write(
            dir.path().join(".parrot/compressors.toml"),
            "[compressor.\"shell_cargo_build\"]\ncodec = \"log\"\nlevel = \"normal\"\n",
        )
        .unwrap();
        let relay = relay(dir.path());
        let mut lines: Vec<String> = (0..200)
            .map(|i| format!("   Compiling crate_{i} v0.{i}.1 (build step {i})"))
            .collect();
        let error = "error[E0308]: mismatched types";
        lines[120] = error.to_owned();
        let original = lines.join("\n");
        relay.from_client(call("4", "shell_cargo_build").as_bytes());
        let response = result(
            "4",
            json!({"content": [{"type": "text", "text": original}]}),
        );
        let routed = relay.from_server(response.as_bytes());
        let out = value(text(&routed).as_bytes());
        let compressed = out["result"]["content"][0]["text"].as_str().unwrap();
        assert!(compressed.len() < original.len() / 4, "{compressed}");
        let wrapped = value(compressed.as_bytes());
        let folded = wrapped["result"].as_str().unwrap();
        assert!(folded.lines().any(|line| line == error), "{folded}");
        let key = wrapped["_tee"]["key"].as_str().unwrap();
        assert_eq!(wrapped["_tee"]["reason"], "lossy");
        assert_eq!(
            relay.host.recover(key).unwrap().unwrap(),
            original.as_bytes()
        );
    }

    #[test]
    fn tool_errors_are_stored_not_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Arc::new(Keys::default());
        let relay = relay_with(dir.path(), Arc::clone(&keys));
        relay.from_client(call("1", "q").as_bytes());
        let response = result(
            "1",
            json!({"content": [{"type": "text", "text": pretty_rows()}], "isError": true}),
        );
        let routed = relay.from_server(response.as_bytes());
        assert_eq!(text(&routed), response);
        let keys = keys.0.lock().unwrap().clone();
        assert_eq!(keys.len(), 1);
        assert_eq!(
            relay.host.recover(&keys[0]).unwrap().unwrap(),
            pretty_rows().as_bytes()
        );
    }

    #[test]
    fn an_unknown_key_is_a_tool_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        let recover = r#"{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"wm_get_result","arguments":{"key":"nope"}}}"#;
        let answer = value(&relay.from_client(recover.as_bytes()).answer.unwrap());
        assert_eq!(answer["id"], "r");
        assert_eq!(answer["result"]["isError"], true);
        assert_eq!(
            answer["result"]["content"][0]["text"],
            "no original is stored under \"nope\""
        );
    }

    #[test]
    fn numeric_and_string_ids_are_distinct_requests() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        relay.from_client(call("1", "q").as_bytes());
        // The answer to id "1" (a string) is not the answer to id 1.
        let wrong = result(
            "\"1\"",
            json!({"content": [{"type": "text", "text": pretty_rows()}]}),
        );
        assert_eq!(text(&relay.from_server(wrong.as_bytes())), wrong);
        let right = result(
            "1",
            json!({"content": [{"type": "text", "text": pretty_rows()}]}),
        );
        assert_ne!(text(&relay.from_server(right.as_bytes())), right);
    }

    #[test]
    fn the_recovery_tool_replaces_a_servers_own_and_forwards_keys_the_proxy_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        relay.from_client(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let list = result(
            "1",
            json!({"tools": [{"name": "wm_get_result", "inputSchema": {"type": "object"}}, {"name": "q", "inputSchema": {"type": "object"}}]}),
        );
        let out = value(text(&relay.from_server(list.as_bytes())).as_bytes());
        let tools = out["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0]["name"], "q");
        assert_eq!(tools[1], Relay::recovery_tool());
        let recover = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wm_get_result","arguments":{"key":"theirs"}}}"#;
        let routed = relay.from_client(recover.as_bytes());
        assert!(routed.answer.is_none());
        assert_eq!(routed.forward.unwrap().as_ref(), recover.as_bytes());
    }

    #[test]
    fn a_client_batch_loses_its_recovery_calls_to_the_proxys_answer() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        let batch = format!(
            "[{},{}]",
            call("1", "q"),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wm_get_result","arguments":{"key":"k"}}}"#
        );
        let routed = relay.from_client(batch.as_bytes());
        let forwarded = value(&routed.forward.unwrap());
        assert_eq!(forwarded, value(format!("[{}]", call("1", "q")).as_bytes()));
        let answers = value(&routed.answer.unwrap());
        assert_eq!(answers[0]["id"], 2);
        assert_eq!(answers[0]["result"]["isError"], true);
    }
}
