//! The relay's message logic, without any I/O: what becomes of each line from either side.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use parrot_json::{Span, encode_string};
use serde_json::{Map, Value, json};

use parrot_host::{Call, Host, Input, Namespace};
use parrot_recover::{
    RECOVERY_TOOL, Recover, RetrieveError, Selector, is_retrieval, recovery_tool_definition,
};

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

/// The recovery calls of one client line, held back by [`Relay::route_client`] for
/// [`Relay::answer`].
#[derive(Debug)]
pub(crate) struct Recoveries {
    /// The line was a batch: the answers go back in an array.
    batch: bool,
    calls: Vec<Recovery>,
}

/// One recovery call.
#[derive(Debug)]
struct Recovery {
    /// The id as the client wrote it.
    id: String,
    params: Option<Value>,
    /// The call as the client wrote it, to forward to a server with a recovery tool of its own.
    request: Vec<u8>,
}

/// What [`Relay::answer`] made of the recovery calls of one line.
#[derive(Debug, Default)]
pub(crate) struct Answered {
    /// A whole line for the client.
    pub(crate) answer: Option<Vec<u8>>,
    /// A whole line for the server.
    pub(crate) forward: Option<Vec<u8>>,
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
/// use parrot_mcp::Relay;
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
///     b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"c\\\":1}\"}]}}"
/// );
/// ```
pub struct Relay {
    host: Arc<Host>,
    /// Where the session's originals are stored, and the only place its recoveries look.
    namespace: Option<Namespace>,
    pending: Mutex<HashMap<String, Pending>>,
    /// The server listed a tool named [`RECOVERY_TOOL`] itself.
    server_recovers: AtomicBool,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("namespace", &self.namespace)
            .field("server_recovers", &self.server_recovers)
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// A relay that compresses through `host` and recovers from its tee store.
    /// Its originals are stored under their plain keys, which any relay or `recover` of the
    /// same store reads; [`Relay::in_namespace`] keeps a session's to itself.
    pub fn new(host: Arc<Host>) -> Relay {
        Relay {
            host,
            namespace: None,
            pending: Mutex::default(),
            server_recovers: AtomicBool::new(false),
        }
    }

    /// A relay whose originals are stored in `namespace`, and whose recovery calls find only
    /// those: another session over the same store, in another namespace, gets "no original
    /// is stored" for this one's keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_mcp::Relay;
    /// use parrot_host::{Host, MemoryTeeStore, Namespace, TeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-relay-namespace");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let store = Arc::new(MemoryTeeStore::default());
    /// store.put("mine/k", b"original").unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).tee_store(store).build().unwrap();
    /// let host = Arc::new(host);
    /// let recover = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wm_get_result","arguments":{"key":"k"}}}"#;
    /// let mine = Relay::in_namespace(Arc::clone(&host), Namespace::new("mine").unwrap());
    /// let answer = String::from_utf8(mine.from_client(recover).answer.unwrap()).unwrap();
    /// assert!(answer.contains("original"), "{answer}");
    /// let theirs = Relay::in_namespace(host, Namespace::new("theirs").unwrap());
    /// let answer = String::from_utf8(theirs.from_client(recover).answer.unwrap()).unwrap();
    /// assert!(answer.contains(r#"no original is stored under \"k\""#), "{answer}");
    /// ```
    pub fn in_namespace(host: Arc<Host>, namespace: Namespace) -> Relay {
        Relay {
            namespace: Some(namespace),
            ..Relay::new(host)
        }
    }

    /// What to do with a line from the client (trailing newline included, if any): forward it,
    /// answer it from the tee store, or both (a batch). A batch that loses its recovery calls
    /// goes on with every other byte as the client wrote it, and each answer carries its id as
    /// the client wrote it.
    ///
    /// The recovery calls are answered before this returns; the proxy itself answers them off
    /// its reading thread (`Relay::route_client`, then `Relay::answer`).
    pub fn from_client<'a>(&self, line: &'a [u8]) -> Routed<'a> {
        let (mut routed, recoveries) = self.route_client(line);
        if let Some(recoveries) = recoveries {
            let answered = self.answer(recoveries);
            routed.answer = answered.answer;
            routed.forward = match (routed.forward.take(), answered.forward) {
                (Some(first), Some(second)) => Some(Cow::Owned([&first[..], &second].concat())),
                (first, second) => first.or(second.map(Cow::Owned)),
            };
        }
        routed
    }

    /// [`Relay::from_client`] without answering: what to forward at once (a batch without its
    /// recovery calls) and the recovery calls to answer with [`Relay::answer`], on any thread.
    pub(crate) fn route_client<'a>(&self, line: &'a [u8]) -> (Routed<'a>, Option<Recoveries>) {
        let body = line.trim_ascii();
        if body.is_empty() {
            return (Routed::unchanged(line), None);
        }
        let parsed = match serde_json::from_slice::<Value>(body) {
            Ok(parsed) => parsed,
            Err(err) => {
                return (
                    Routed::unchanged(line).warn(format!("not JSON ({err})")),
                    None,
                );
            }
        };
        // serde_json read it, so it is UTF-8.
        let text = std::str::from_utf8(body).unwrap_or_default();
        match parsed {
            Value::Object(message) => {
                if !self.client_message(&message) {
                    return (Routed::unchanged(line), None);
                }
                let call = Recovery {
                    id: id_text(&message, raw_member(text, 0, "id")),
                    params: message.get("params").cloned(),
                    request: line.to_vec(),
                };
                let recoveries = Recoveries {
                    batch: false,
                    calls: vec![call],
                };
                (Routed::default(), Some(recoveries))
            }
            Value::Array(batch) => self.route_batch(line, text, &batch),
            other => (
                Routed::unchanged(line).warn(format!("not a JSON-RPC message ({})", kind(&other))),
                None,
            ),
        }
    }

    /// [`Relay::route_client`] for a batch (`text`, the line's JSON, read as `batch`): the
    /// batch without its recovery calls to forward (none when every element is one), and the
    /// calls.
    fn route_batch<'a>(
        &self,
        line: &'a [u8],
        text: &str,
        batch: &[Value],
    ) -> (Routed<'a>, Option<Recoveries>) {
        let spans = parrot_json::elements(text, 0).ok();
        let mut calls = Vec::new();
        let mut answered = Vec::new();
        let mut odd = 0;
        for (index, item) in batch.iter().enumerate() {
            let Value::Object(message) = item else {
                odd += 1;
                continue;
            };
            if self.client_message(message) {
                let span = spans.as_ref().and_then(|spans| spans.get(index));
                let raw = span.and_then(|span| text.get(span.clone()));
                calls.push(Recovery {
                    id: id_text(message, span.and_then(|s| raw_member(text, s.start, "id"))),
                    params: message.get("params").cloned(),
                    request: raw
                        .map_or_else(|| item.to_string(), str::to_owned)
                        .into_bytes(),
                });
                answered.push(index);
            }
        }
        let (mut routed, recoveries) = if calls.is_empty() {
            (Routed::unchanged(line), None)
        } else {
            let forward = (answered.len() < batch.len()).then(|| match &spans {
                Some(spans) => splice(line, body_start(line), removals(spans, &answered)),
                // The text has a member named twice: the rest as read.
                None => to_line(&Value::Array(
                    batch
                        .iter()
                        .enumerate()
                        .filter(|(index, _)| !answered.contains(index))
                        .map(|(_, item)| item.clone())
                        .collect(),
                )),
            });
            let routed = Routed {
                forward: forward.map(Cow::Owned),
                ..Routed::default()
            };
            (routed, Some(Recoveries { batch: true, calls }))
        };
        if odd > 0 {
            routed.warning = Some(format!("{odd} batch element(s) are not JSON objects"));
        }
        (routed, recoveries)
    }

    /// Answers the recovery calls [`Relay::route_client`] held back: the answer to send the
    /// client (an array for a batch), and the calls whose key the proxy does not hold while
    /// the server has a recovery tool of its own, to send the server (a batch's as an array of
    /// their own).
    pub(crate) fn answer(&self, recoveries: Recoveries) -> Answered {
        let mut answers = Vec::new();
        let mut forwarded = Vec::new();
        for call in recoveries.calls {
            match self.recover(call.params.as_ref()) {
                Some(result) => answers.push(response(&call.id, &result)),
                None => forwarded.push(call.request),
            }
        }
        if !recoveries.batch {
            return Answered {
                answer: answers
                    .pop()
                    .map(|answer| format!("{answer}\n").into_bytes()),
                forward: forwarded.pop(),
            };
        }
        let forward = (!forwarded.is_empty()).then(|| {
            let mut line = b"[".to_vec();
            line.extend_from_slice(&forwarded.join(&b","[..]));
            line.extend_from_slice(b"]\n");
            line
        });
        Answered {
            answer: (!answers.is_empty())
                .then(|| format!("[{}]\n", answers.join(",")).into_bytes()),
            forward,
        }
    }

    /// Whether a line from the server is long enough to be worth relaying off the thread that
    /// reads the server: the router's size threshold, at which [`Host::process_async`] leaves
    /// the caller's thread too.
    pub(crate) fn is_big(&self, line: &[u8]) -> bool {
        line.len() >= self.host.size_threshold_bytes()
    }

    /// What to do with a line from the server: forward it, compressed where it answers a
    /// `tools/call`, with the recovery tool where it answers a `tools/list`. A changed line is
    /// the server's line with the changed strings and tools spliced in: every other byte
    /// (numbers as written, escapes, whitespace, member order, the line's ending) stays.
    pub fn from_server<'a>(&self, line: &'a [u8]) -> Routed<'a> {
        let body = line.trim_ascii();
        if body.is_empty() {
            return Routed::unchanged(line);
        }
        let parsed = match serde_json::from_slice::<Value>(body) {
            Ok(parsed) => parsed,
            Err(err) => return Routed::unchanged(line).warn(format!("not JSON ({err})")),
        };
        // serde_json read it, so it is UTF-8.
        let text = std::str::from_utf8(body).unwrap_or_default();
        let mut odd = 0;
        let edits = match parsed {
            Value::Object(message) => match self.server_message(&message) {
                Some(change) => change.edits(text, 0),
                None => Ok(Vec::new()),
            },
            Value::Array(batch) => {
                let mut changes = Vec::new();
                for (index, item) in batch.iter().enumerate() {
                    match item {
                        Value::Object(message) => {
                            changes.extend(self.server_message(message).map(|c| (index, c)));
                        }
                        _ => odd += 1,
                    }
                }
                if changes.is_empty() {
                    Ok(Vec::new())
                } else {
                    batch_edits(text, &changes)
                }
            }
            other => {
                return Routed::unchanged(line)
                    .warn(format!("not a JSON-RPC message ({})", kind(&other)));
            }
        };
        let mut routed = match edits {
            Ok(edits) if edits.is_empty() => Routed::unchanged(line),
            Ok(edits) => Routed {
                forward: Some(Cow::Owned(splice(line, body_start(line), edits))),
                ..Routed::default()
            },
            Err(err) => {
                Routed::unchanged(line).warn(format!("cannot edit the response in place ({err})"))
            }
        };
        if odd > 0 {
            let batch = format!("{odd} batch element(s) are not JSON objects");
            routed.warning = Some(match routed.warning.take() {
                Some(warning) => format!("{warning}; {batch}"),
                None => batch,
            });
        }
        routed
    }

    /// Records a client request; whether it is a recovery call, for the proxy to answer.
    fn client_message(&self, message: &Map<String, Value>) -> bool {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return false;
        };
        let params = message.get("params");
        if method == "notifications/cancelled" {
            if let Some(id) = params.and_then(|p| p.get("requestId")).and_then(id_key) {
                self.pending().remove(&id);
            }
            return false;
        }
        let Some(key) = message.get("id").and_then(id_key) else {
            return false;
        };
        let tool = match method {
            "tools/call" => params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        };
        if tool.as_deref() == Some(RECOVERY_TOOL) {
            return true;
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
        false
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
        match self
            .host
            .recover_for_model_in(self.namespace.as_ref(), &key, &selector)
        {
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

    /// What the proxy changes in a server response, if anything.
    fn server_message(&self, message: &Map<String, Value>) -> Option<Change> {
        if message.contains_key("method")
            || !(message.contains_key("result") || message.contains_key("error"))
        {
            return None;
        }
        let key = message.get("id").and_then(id_key)?;
        let pending = self.pending().remove(&key)?;
        let Some(Value::Object(result)) = message.get("result") else {
            return None;
        };
        match (pending.method.as_str(), pending.tool) {
            ("tools/list", _) => self.list_tools(result, pending.first_page),
            ("tools/call", Some(tool)) if tool != RECOVERY_TOOL => self.compress(&tool, result),
            _ => None,
        }
    }

    /// Puts the recovery tool in a `tools/list` result, in place of a server's own.
    fn list_tools(&self, result: &Map<String, Value>, first_page: bool) -> Option<Change> {
        let Some(Value::Array(tools)) = result.get("tools") else {
            return None;
        };
        let removed: Vec<usize> = tools
            .iter()
            .enumerate()
            .filter(|(_, tool)| tool.get("name").and_then(Value::as_str) == Some(RECOVERY_TOOL))
            .map(|(index, _)| index)
            .collect();
        if !removed.is_empty() {
            self.server_recovers.store(true, Ordering::Relaxed);
        }
        (first_page || !removed.is_empty()).then_some(Change::Tools {
            removed,
            append: first_page,
        })
    }

    /// Compresses the text blocks of a `tools/call` result, JSON or plain text (the tool's
    /// entry decides what happens to each); tees those of a tool error.
    fn compress(&self, tool: &str, result: &Map<String, Value>) -> Option<Change> {
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        let Some(Value::Array(blocks)) = result.get("content") else {
            return None;
        };
        // (block index, original text, compressed text)
        let mut replaced: Vec<(usize, &str, String)> = Vec::new();
        for (index, block) in blocks.iter().enumerate() {
            if block.get("type").and_then(Value::as_str) != Some("text") {
                continue;
            }
            let Some(Value::String(text)) = block.get("text") else {
                continue;
            };
            if is_retrieval(text.as_bytes()) {
                // A recovery result relayed from a proxy behind this one: already the part
                // the agent asked for.
                continue;
            }
            if is_error {
                // Not compressed, but stored: nothing is lost when the caller raises.
                self.host.process(
                    Call::new(tool, Input::Text(text))
                        .status("error")
                        .namespace(self.namespace.as_ref()),
                );
                continue;
            }
            let processed = self
                .host
                .process(Call::new(tool, Input::Text(text)).namespace(self.namespace.as_ref()));
            if !processed.meta.compressed {
                continue;
            }
            let Some(compressed) = processed.text().map(str::to_owned) else {
                continue;
            };
            replaced.push((index, text, compressed));
        }
        if replaced.is_empty() {
            return None;
        }
        let structured = match result.get("structuredContent") {
            Some(Value::Object(members)) => members
                .iter()
                .filter_map(|(name, value)| {
                    let Value::String(text) = value else {
                        return None;
                    };
                    let (_, _, compressed) =
                        replaced.iter().find(|(_, original, _)| original == text)?;
                    Some((name.clone(), compressed.clone()))
                })
                .collect(),
            _ => Vec::new(),
        };
        Some(Change::Compressed {
            blocks: replaced
                .into_iter()
                .map(|(index, _, compressed)| (index, compressed))
                .collect(),
            structured,
        })
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A change to a message's text: the bytes at the span (of the message's body) become the
/// string.
type Edit = (Span, String);

/// What the proxy changes in a server response: found on the parsed message, made in its text
/// ([`Change::edits`]), so that nothing else of the message is re-serialized.
#[derive(Debug)]
enum Change {
    /// A `tools/call` result: the new texts of content blocks (by index) and of top-level
    /// string members of `structuredContent` (by name).
    Compressed {
        blocks: Vec<(usize, String)>,
        structured: Vec<(String, String)>,
    },
    /// A `tools/list` result: the tools to remove (by index, ascending) and whether to append
    /// the recovery tool.
    Tools { removed: Vec<usize>, append: bool },
}

impl Change {
    /// The edits that make this change in the response whose `{` is at byte `at` of `text`.
    /// Fails where the text holds an object with a member named twice: which of the two the
    /// parsed message kept is not known.
    fn edits(&self, text: &str, at: usize) -> Result<Vec<Edit>, parrot_json::Error> {
        let Some(result) = member(text, at, "result")? else {
            return Ok(Vec::new());
        };
        let members = parrot_json::members(text, result.start)?;
        let span_of = |name: &str| {
            members
                .iter()
                .find(|member| member.name.is(name))
                .map(|member| member.value.clone())
        };
        let mut edits = Vec::new();
        match self {
            Change::Compressed { blocks, structured } => {
                if let Some(content) = span_of("content") {
                    let elements = parrot_json::elements(text, content.start)?;
                    for (index, compressed) in blocks {
                        if let Some(block) = elements.get(*index)
                            && let Some(string) = member(text, block.start, "text")?
                        {
                            edits.push((string, encode_string(compressed)));
                        }
                    }
                }
                if let Some(object) =
                    span_of("structuredContent").filter(|_| !structured.is_empty())
                {
                    for member in parrot_json::members(text, object.start)? {
                        if let Some((_, compressed)) =
                            structured.iter().find(|(name, _)| member.name.is(name))
                        {
                            edits.push((member.value, encode_string(compressed)));
                        }
                    }
                }
            }
            Change::Tools { removed, append } => {
                let Some(tools) = span_of("tools") else {
                    return Ok(Vec::new());
                };
                let elements = parrot_json::elements(text, tools.start)?;
                edits = removals(&elements, removed);
                if *append {
                    let close = tools.end - 1;
                    let comma = if elements.len() > removed.len() {
                        ","
                    } else {
                        ""
                    };
                    edits.push((
                        close..close,
                        format!("{comma}{}", recovery_tool_definition()),
                    ));
                }
            }
        }
        Ok(edits)
    }
}

/// The edits of the changed responses of a batch (`text`), each change with its element's
/// index.
fn batch_edits(text: &str, changes: &[(usize, Change)]) -> Result<Vec<Edit>, parrot_json::Error> {
    let elements = parrot_json::elements(text, 0)?;
    let mut edits = Vec::new();
    for (index, change) in changes {
        if let Some(element) = elements.get(*index) {
            edits.extend(change.edits(text, element.start)?);
        }
    }
    Ok(edits)
}

/// The span of the value of member `name` of the object whose `{` is at byte `at` of `text`.
fn member(text: &str, at: usize, name: &str) -> Result<Option<Span>, parrot_json::Error> {
    Ok(parrot_json::members(text, at)?
        .into_iter()
        .find(|member| member.name.is(name))
        .map(|member| member.value))
}

/// The text of member `name` of the object at byte `at` of `text`, as written; `None` when
/// the object cannot be read span by span (a member named twice).
fn raw_member<'t>(text: &'t str, at: usize, name: &str) -> Option<&'t str> {
    text.get(member(text, at, name).ok()??)
}

/// Edits that remove the elements at `removed` (ascending) from an array whose elements lie at
/// `elements`, each with one separator: the one before it, or after it for a leading element.
fn removals(elements: &[Span], removed: &[usize]) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut kept_before = false;
    let mut previous_end = None;
    for (index, span) in elements.iter().enumerate() {
        if removed.contains(&index) {
            let remove = match (kept_before, previous_end, elements.get(index + 1)) {
                (true, Some(end), _) => end..span.end,
                (_, _, Some(next)) => span.start..next.start,
                _ => span.clone(),
            };
            edits.push((remove, String::new()));
        } else {
            kept_before = true;
        }
        previous_end = Some(span.end);
    }
    edits
}

/// Where a line's body (the text without surrounding whitespace) starts.
fn body_start(line: &[u8]) -> usize {
    line.len() - line.trim_ascii_start().len()
}

/// `line` with `edits` (spans of its body, which starts at byte `body`) made: every other
/// byte as it was, the line's ending included.
fn splice(line: &[u8], body: usize, mut edits: Vec<Edit>) -> Vec<u8> {
    edits.sort_by_key(|(span, _)| (span.start, span.end));
    let mut out = Vec::with_capacity(line.len());
    let mut from = 0;
    for (span, with) in edits {
        let start = body + span.start;
        out.extend_from_slice(line.get(from..start).unwrap_or_default());
        out.extend_from_slice(with.as_bytes());
        from = from.max(body + span.end);
    }
    out.extend_from_slice(line.get(from..).unwrap_or_default());
    out
}

/// A request's id as the client wrote it (`raw`), or as read when its text could not be found.
fn id_text(request: &Map<String, Value>, raw: Option<&str>) -> String {
    match raw {
        Some(raw) => raw.to_owned(),
        None => request.get("id").unwrap_or(&Value::Null).to_string(),
    }
}

/// The proxy's response to the client request with `id` (as [`id_text`] wrote it).
fn response(id: &str, result: &Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
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
    use parrot_host::{MemoryTeeStore, TeeStore as _};

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

    impl parrot_host::Observer for Keys {
        fn on_processed(&self, event: &parrot_host::CallEvent) {
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

    /// The review's finding (issue 47): a relay of no namespace answered a recovery call of
    /// `<namespace>/<key>` with that namespace's original, stored under exactly that name.
    #[test]
    fn a_relay_of_no_namespace_does_not_find_a_key_naming_a_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(MemoryTeeStore::default());
        store
            .put("session-0123456789abcdef/k", b"the session's")
            .unwrap();
        let mut builder = Host::builder();
        builder
            .project(dir.path())
            .plugin_path(None)
            .tee_store(store);
        let relay = Relay::new(Arc::new(builder.build().unwrap()));
        let recover = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params":
            {"name": RECOVERY_TOOL, "arguments": {"key": "session-0123456789abcdef/k"}}});
        let answer = relay.from_client(recover.to_string().as_bytes()).answer;
        let answer = value(&answer.expect("answered by the proxy"));
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            "no original is stored under \"session-0123456789abcdef/k\""
        );
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
        // The winner writes text (TOON): its pointer is its last line.
        let (_, key) = parrot_host::split_text_pointer(compressed).expect("a pointer line");
        assert!(compressed.contains("returns the original of this lossless result"));

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
            Some(parrot_host::Skip::AlreadyCompressed)
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
        let (folded, key) = parrot_host::split_text_pointer(compressed).expect("a pointer line");
        assert!(folded.lines().any(|line| line == error), "{folded}");
        assert!(compressed.contains("returns the original of this lossy result"));
        assert_eq!(
            relay.host.recover(&key).unwrap().unwrap(),
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
        assert_eq!(tools[1], recovery_tool_definition());
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

    #[test]
    fn routing_a_client_line_forwards_at_once_and_leaves_its_recovery_calls_for_later() {
        let dir = tempfile::tempdir().unwrap();
        let (relay, key, _) = relay_with_log(dir.path());
        let recovery = |id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"wm_get_result","arguments":{{"key":"{key}","lines":"2"}}}}}}"#
            )
        };
        let single = recovery("\"one\"");
        let (routed, held) = relay.route_client(single.as_bytes());
        assert!(routed.forward.is_none() && routed.answer.is_none());
        let answered = relay.answer(held.unwrap());
        assert!(answered.forward.is_none());
        let answer = answered.answer.unwrap();
        assert!(answer.ends_with(b"}\n") && !answer.starts_with(b"["));
        assert_eq!(value(&answer)["id"], "one");

        let batch = format!(
            "[{}, {}, {}]\n",
            recovery("1"),
            call("2", "q"),
            recovery("3")
        );
        let (routed, held) = relay.route_client(batch.as_bytes());
        assert_eq!(text(&routed), format!("[{}]\n", call("2", "q")));
        assert!(routed.answer.is_none());
        let answered = relay.answer(held.unwrap());
        assert!(answered.forward.is_none());
        let answers = value(&answered.answer.unwrap());
        assert_eq!(answers[0]["id"], 1);
        assert_eq!(answers[1]["id"], 3);
        assert_eq!(answers[0]["result"], answers[1]["result"]);

        // Nothing to hold back: nothing for later.
        let other = call("4", "q");
        let (routed, held) = relay.route_client(other.as_bytes());
        assert_eq!(text(&routed), other);
        assert!(held.is_none());
    }

    #[test]
    fn recovery_calls_a_server_with_its_own_tool_answers_are_forwarded_when_answered() {
        let dir = tempfile::tempdir().unwrap();
        let (relay, key, _) = relay_with_log(dir.path());
        relay.from_client(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let list = result("1", json!({"tools": [{"name": "wm_get_result"}]}));
        relay.from_server(list.as_bytes());
        let theirs = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wm_get_result","arguments":{"key":"theirs"}}}"#;
        let ours = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"wm_get_result","arguments":{{"key":"{key}"}}}}}}"#
        );
        let batch = format!("[{theirs} , {ours}, {}]\n", call("4", "q"));
        let (routed, held) = relay.route_client(batch.as_bytes());
        assert_eq!(text(&routed), format!("[{}]\n", call("4", "q")));
        let answered = relay.answer(held.unwrap());
        assert_eq!(
            String::from_utf8(answered.forward.unwrap()).unwrap(),
            format!("[{theirs}]\n")
        );
        assert_eq!(value(&answered.answer.unwrap())[0]["id"], 3);
    }

    #[test]
    fn a_compressed_response_differs_from_the_servers_only_inside_the_compressed_string() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        let id = "123456789012345678901234567890";
        relay.from_client(call(id, "read_text_file").as_bytes());
        let original = pretty_rows();
        // Numbers that serde_json writes otherwise (1E400 as 1e+400), escapes it would decode,
        // whitespace and member order it would drop, around the block that gets compressed.
        let before = "{ \"result\" :\t{\"structuredContent\": { \"big\": 1E400, \"zero\":-0.0 ,\
             \"one\":\t1.0, \"name\": \"caf\\u00e9 \\/ x\" },\"_meta\" : {\"n\": -1E-400, \
             \"t\": \"\\u00e9\"}, \"content\" : [ {\"type\":\"text\", \"text\" : ";
        let after = format!(
            " }} ,{{\"type\" : \"text\",\"text\":\"caf\\u00e9\"}} ] }} , \"id\" :{id} ,\t\
             \"jsonrpc\":\"2.0\" }}\r\n"
        );
        let line = format!(
            "{before}{}{after}",
            serde_json::to_string(&original).unwrap()
        );
        let out = text(&relay.from_server(line.as_bytes()));
        let compressed = value(out.as_bytes())["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(compressed.len() < original.len(), "{compressed}");
        assert_eq!(
            out,
            format!("{before}{}{after}", encode_string(&compressed))
        );
    }

    #[test]
    fn the_recovery_tool_is_spliced_into_the_servers_list() {
        let ours = recovery_tool_definition().to_string();
        let own = r#"{"name":"wm_get_result", "inputSchema":{}}"#;
        let q = r#"{ "name": "q", "n": 1E400 }"#;
        let cases = [
            (format!("[ {q} ]"), format!("[ {q} ,{ours}]")),
            ("[ ]".to_owned(), format!("[ {ours}]")),
            (format!("[{own}, {q}]"), format!("[{q},{ours}]")),
            (format!("[{q} , {own} ]"), format!("[{q} ,{ours}]")),
            (format!("[{own}]"), format!("[{ours}]")),
            (format!("[ {q},{own},{q} ]"), format!("[ {q},{q} ,{ours}]")),
        ];
        for (tools, expected) in cases {
            let dir = tempfile::tempdir().unwrap();
            let relay = relay(dir.path());
            relay.from_client(br#"{"jsonrpc":"2.0","id":1E400,"method":"tools/list"}"#);
            let list =
                |tools: &str| format!("{{\"id\": 1E400 , \"result\": {{\"tools\": {tools}}}}}\n");
            let out = text(&relay.from_server(list(&tools).as_bytes()));
            assert_eq!(out, list(&expected), "{tools}");
        }
    }

    #[test]
    fn a_client_batch_keeps_the_bytes_of_what_goes_on_and_answers_with_ids_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        let first = r#"{"jsonrpc":"2.0", "id":1.0, "method":"tools/call", "params":{"name":"q","arguments":{"x": 1E400}}}"#;
        let recovery = r#"{"jsonrpc":"2.0","id":1E400,"method":"tools/call","params":{"name":"wm_get_result","arguments":{"key":"k"}}}"#;
        let last =
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":-0.0}}"#;
        let batch = format!("[ {first} ,\t{recovery}, {last} ]\r\n");
        let routed = relay.from_client(batch.as_bytes());
        assert_eq!(text(&routed), format!("[ {first}, {last} ]\r\n"));
        let answer = String::from_utf8(routed.answer.unwrap()).unwrap();
        assert!(
            answer.starts_with(r#"[{"jsonrpc":"2.0","id":1E400,"result":{"#),
            "{answer}"
        );
    }

    #[test]
    fn a_response_with_a_member_named_twice_is_relayed_as_the_server_sent_it() {
        let dir = tempfile::tempdir().unwrap();
        let relay = relay(dir.path());
        relay.from_client(call("1", "q").as_bytes());
        let rows = serde_json::to_string(&pretty_rows()).unwrap();
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{{"a":1,"a":2}},"content":[{{"type":"text","text":{rows}}}]}}}}"#
        );
        let routed = relay.from_server(line.as_bytes());
        assert_eq!(text(&routed), line);
        assert_eq!(
            routed.warning.as_deref(),
            Some("cannot edit the response in place (JSON object with a duplicate member name)")
        );
    }
}
