use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;
use parrot_host::{CallEvent, MemoryTeeStore, Observer};

fn host(dir: &Path) -> Host {
    host_with(dir, Arc::new(Stored::default()))
}

fn host_with(dir: &Path, stored: Arc<Stored>) -> Host {
    Host::builder()
        .project(dir)
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .observer(stored)
        .build()
        .unwrap()
}

/// The tee keys of the calls a host stored, with their tools.
#[derive(Default)]
struct Stored(Mutex<Vec<(String, String)>>);

impl Observer for Stored {
    fn on_processed(&self, event: &CallEvent) {
        if let Some(key) = &event.meta.tee_key {
            self.0
                .lock()
                .unwrap()
                .push((event.tool.clone(), key.clone()));
        }
    }
}

/// A file of the repository (corpus/, samples/).
fn repo(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The result of line `line` (1-based) of the sample session, as the tool returned its text.
fn session(line: usize) -> String {
    let session = repo("samples/session.jsonl");
    let call: serde_json::Value =
        serde_json::from_str(session.lines().nth(line - 1).unwrap()).expect("session line");
    match &call["result"] {
        serde_json::Value::String(text) => text.clone(),
        // As the tool printed it: Python's `json.dumps`, spaces after `:` and `,`.
        other => serde_json::to_string_pretty(other).unwrap(),
    }
}

/// Real tool results, each of a kind the default configuration compresses.
struct Corpus {
    /// GitHub labels, rows of an API response.
    labels: String,
    /// A database query's rows.
    query: String,
    /// A cargo build's output.
    build: String,
    /// A failing `go test`'s output.
    go_test: String,
}

fn corpus() -> Corpus {
    Corpus {
        labels: repo("corpus/github-labels.json"),
        query: session(4),
        build: session(19),
        go_test: repo("corpus/logs/go-test-03.log"),
    }
}

/// What should become of a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Replaced by the JSON encoding of what the host makes of it, which is smaller.
    Compressed,
    /// Left exactly as written.
    Unchanged,
}

/// A request body in pieces: bytes as the client wrote them, and tool results.
enum Piece {
    Raw(String),
    Result {
        /// The string as the client wrote it.
        literal: String,
        tool: &'static str,
        fate: Fate,
    },
}

fn raw(text: impl Into<String>) -> Piece {
    Piece::Raw(text.into())
}

fn result(tool: &'static str, text: &str, fate: Fate) -> Piece {
    Piece::Result {
        literal: serde_json::to_string(text).unwrap(),
        tool,
        fate,
    }
}

fn body(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Raw(text) => text.as_str(),
            Piece::Result { literal, .. } => literal.as_str(),
        })
        .collect()
}

/// Rewrites the body the pieces make and checks it against them: each result to compress
/// is the JSON encoding of what `host.process` makes of its text under its tool (and smaller),
/// every other byte is the client's. Returns what the rewrite reported.
fn check(api: Api, pieces: &[Piece], host: &Host) -> (Vec<Replaced>, Counts) {
    let sent = body(pieces);
    let rewrite = rewrite(api, sent.as_bytes(), host).unwrap();
    let mut expected = String::new();
    for piece in pieces {
        match piece {
            Piece::Raw(text) => expected.push_str(text),
            Piece::Result {
                literal,
                fate: Fate::Unchanged,
                ..
            } => expected.push_str(literal),
            Piece::Result {
                literal,
                tool,
                fate: Fate::Compressed,
            } => {
                let text: String = serde_json::from_str(literal).unwrap();
                let processed = host.process(Call::new(tool, Input::Text(&text)));
                let new = processed.text().unwrap();
                assert!(processed.meta.compressed, "{tool}: {:?}", processed.meta);
                assert!(new.len() < text.len(), "{tool}");
                expected.push_str(&encode_string(new));
            }
        }
    }
    let out = String::from_utf8(rewrite.body.to_vec()).unwrap();
    if out != expected {
        let at = out
            .bytes()
            .zip(expected.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(out.len().min(expected.len()));
        panic!(
            "the bodies differ from byte {at}:\n got: {:?}\nwant: {:?}",
            &out[at.saturating_sub(40)..(at + 80).min(out.len())],
            &expected[at.saturating_sub(40)..(at + 80).min(expected.len())]
        );
    }
    (rewrite.replaced, rewrite.counts)
}

fn counts(seen: usize, compressed: usize, errors: usize, unknown: usize) -> Counts {
    Counts {
        seen,
        compressed,
        errors,
        unknown,
    }
}

/// Whether the host would compress `text` as `tool`'s successful result: what makes a test
/// that it was left alone mean something.
fn compressible(host: &Host, tool: &str, text: &str) -> bool {
    host.process(Call::new(tool, Input::Text(text)))
        .meta
        .compressed
}

#[test]
fn from_path_names_the_three_endpoints_and_nothing_else() {
    let cases = [
        ("/v1/messages", Some(Api::AnthropicMessages)),
        ("/v1/messages?beta=true", Some(Api::AnthropicMessages)),
        ("/v1/chat/completions", Some(Api::OpenAiChat)),
        ("/v1/chat/completions?", Some(Api::OpenAiChat)),
        (
            "/v1/responses?stream=true&x=/v1/messages",
            Some(Api::OpenAiResponses),
        ),
        ("/v1/messages/count_tokens", None),
        ("/v1/messages/", None),
        ("/v1/responses/resp_1", None),
        ("/v1/completions", None),
        ("/v1/models", None),
        ("v1/messages", None),
        ("/V1/MESSAGES", None),
        ("", None),
        ("?/v1/messages", None),
    ];
    for (path, api) in cases {
        assert_eq!(Api::from_path(path), api, "{path}");
    }
}

#[test]
fn anthropic_tool_results_arrive_compressed_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let stored = Arc::new(Stored::default());
    let host = host_with(dir.path(), Arc::clone(&stored));
    let c = corpus();
    use Fate::{Compressed, Unchanged};
    // Escapes, numbers serde_json would rewrite (1E3, -0.0), whitespace and member orders of
    // every kind around the results.
    let pieces = [
        raw(
            "{\"model\" : \"claude-sonnet-4-5\",\"max_tokens\":1E3,\n  \"system\": [{\"type\":\"text\",\
             \"text\":\"caf\\u00e9 \\/ rules\",\"cache_control\":{\"type\":\"ephemeral\"}}],\n  \
             \"tools\":[{\"name\":\"github_labels\",\"input_schema\":{\"type\":\"object\"}}],\n  \
             \"messages\" : [\n    {\"content\": \"List the labels, then build.\", \"role\": \"user\"},\n    \
             {\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Looking \\u2014 now.\"},\
             {\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"github_labels\",\"input\":{\"repo\":\"o\\/r\",\"n\":-0.0}},\
             {\"type\":\"tool_use\",\"id\":\"toolu_02\",\"name\":\"shell_cargo_build\",\"input\":{}},\
             {\"name\":\"go_test\",\"input\":{},\"id\":\"toolu_03\",\"type\":\"tool_use\"},\
             {\"type\":\"tool_use\",\"id\":\"toolu_04\",\"name\":\"dq_query\",\"input\":{}}]},\n    \
             {\"role\":\"user\",\"content\":[\n      {\"type\":\"tool_result\",\"tool_use_id\":\"toolu_01\",\"content\": ",
        ),
        result("github_labels", &c.labels, Compressed),
        raw("},\n      {\"tool_use_id\" : \"toolu_02\", \"content\":[{\"type\":\"text\",\"text\":"),
        result("shell_cargo_build", &c.build, Compressed),
        raw(
            "},{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\
             \"data\":\"iVBORw0KGgo=\"}},{\"text\":",
        ),
        result("shell_cargo_build", "ok", Unchanged),
        raw(",\"type\":\"text\"}], \"type\":\"tool_result\"},\n      \
             {\"type\":\"tool_result\",\"is_error\":true,\"tool_use_id\":\"toolu_03\",\"content\":"),
        result("go_test", &c.go_test, Unchanged),
        raw("},\n      {\"type\":\"tool_result\",\"tool_use_id\":\"toolu_99\",\"content\":"),
        result("dq_query", &c.query, Unchanged),
        raw(
            "},\n      {\"type\":\"tool_result\",\"tool_use_id\":\"toolu_04\",\"is_error\":false},\n      \
             {\"type\":\"text\",\"text\":\"Go on \\ud83d\\ude00\"}]}\n  ]\n}\n",
        ),
    ];
    let (replaced, found) = check(Api::AnthropicMessages, &pieces, &host);
    assert_eq!(found, counts(5, 2, 1, 1));
    let described: Vec<(&str, &str, bool)> = replaced
        .iter()
        .map(|r| (r.tool.as_str(), r.path.as_str(), r.tee_key.is_some()))
        .collect();
    assert_eq!(
        described,
        [
            ("github_labels", "messages[2].content[0].content", false),
            (
                "shell_cargo_build",
                "messages[2].content[1].content[0].text",
                true
            ),
        ]
    );
    assert_eq!(replaced[0].bytes_before, c.labels.len());
    assert!(replaced[0].bytes_after < c.labels.len());
    // The log was folded lossily: its pointer gets the original back.
    let key = replaced[1].tee_key.as_deref().unwrap();
    assert_eq!(host.recover(key).unwrap().unwrap(), c.build.as_bytes());
    // The tool error was stored, not compressed, as any tool error is.
    let errors: Vec<String> = stored
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(tool, _)| tool == "go_test")
        .map(|(_, key)| key.clone())
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        host.recover(&errors[0]).unwrap().unwrap(),
        c.go_test.as_bytes()
    );
    // The tool error and the result of an unknown call would have been compressed.
    assert!(compressible(&host, "go_test", &c.go_test));
    assert!(compressible(&host, "dq_query", &c.query));
}

#[test]
fn openai_chat_tool_messages_arrive_compressed_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let c = corpus();
    use Fate::{Compressed, Unchanged};
    let pieces = [
        raw(
            "{\"model\":\"gpt-4.1\", \"temperature\": 0.50, \"messages\":[\n\
             {\"role\":\"system\",\"content\":\"You are \\\"careful\\\".\"},\n\
             {\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Query, then test.\"}]},\n\
             {\"role\":\"assistant\",\"content\":null,\"tool_calls\":[\
             {\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"dq_query\",\"arguments\":\"{\\\"sql\\\":\\\"select *\\\"}\"}},\
             {\"type\":\"function\",\"function\":{\"arguments\":\"{}\",\"name\":\"go_test\"},\"id\":\"call_b\"},\
             {\"id\":\"call_c\",\"type\":\"custom\",\"custom\":{\"name\":\"shell_cargo_build\",\"input\":\"cargo build\"}}]},\n\
             {\"role\":\"tool\",\"tool_call_id\":\"call_a\",\"content\":",
        ),
        result("dq_query", &c.query, Compressed),
        raw("},\n{\"content\":[{\"type\":\"text\",\"text\":"),
        result("go_test", &c.go_test, Compressed),
        raw("},{\"type\":\"text\",\"text\":"),
        result("go_test", "exit status 2", Unchanged),
        raw(
            "}],\"tool_call_id\":\"call_b\",\"role\":\"tool\"},\n{\"role\":\"tool\",\"tool_call_id\":\"call_c\",\"content\":",
        ),
        result("shell_cargo_build", &c.build, Compressed),
        raw("},\n{\"role\":\"tool\",\"tool_call_id\":\"call_zz\",\"content\":"),
        result("github_labels", &c.labels, Unchanged),
        raw(
            "},\n{\"role\":\"assistant\",\"content\":\"Done \\u00e9.\",\"tool_calls\":null}],\n\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"dq_query\",\"parameters\":{}}}]}",
        ),
    ];
    let (replaced, found) = check(Api::OpenAiChat, &pieces, &host);
    assert_eq!(found, counts(5, 3, 0, 1));
    let described: Vec<(&str, &str)> = replaced
        .iter()
        .map(|r| (r.tool.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(
        described,
        [
            ("dq_query", "messages[3].content"),
            ("go_test", "messages[4].content[0].text"),
            ("shell_cargo_build", "messages[5].content"),
        ]
    );
    assert!(compressible(&host, "github_labels", &c.labels));
}

#[test]
fn openai_responses_outputs_arrive_compressed_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let c = corpus();
    use Fate::{Compressed, Unchanged};
    let pieces = [
        raw(
            "{\"model\":\"gpt-5\",\"instructions\":\"Be brief \\/ exact.\",\"input\":[\n\
             {\"role\":\"user\",\"content\":\"Labels and the build, please.\"},\n\
             {\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[]},\n\
             {\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"github_labels\",\"arguments\":\"{}\"},\n\
             {\"call_id\":\"call_2\",\"arguments\":\"{}\",\"type\":\"function_call\",\"name\":\"shell_cargo_build\"},\n\
             {\"type\":\"custom_tool_call\",\"call_id\":\"call_3\",\"name\":\"go_test\",\"input\":\"go test ./...\"},\n\
             {\"type\":\"function_call_output\",\"call_id\":\"call_1\",\"output\":",
        ),
        result("github_labels", &c.labels, Compressed),
        raw("},\n{\"output\":"),
        result("shell_cargo_build", &c.build, Compressed),
        raw(
            ",\"type\":\"function_call_output\",\"call_id\":\"call_2\"},\n{\"type\":\"custom_tool_call_output\",\"call_id\":\"call_3\",\"output\":[{\"type\":\"input_text\",\"text\":",
        ),
        result("go_test", &c.go_test, Compressed),
        raw(
            "},{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,iVBORw0KGgo=\"}]},\n{\"type\":\"function_call_output\",\"call_id\":\"call_9\",\"output\":",
        ),
        result("dq_query", &c.query, Unchanged),
        raw(
            "}\n],\"tools\":[{\"type\":\"function\",\"name\":\"github_labels\",\"parameters\":{\"type\":\"object\"}}],\"max_output_tokens\":1.0E4}",
        ),
    ];
    let (replaced, found) = check(Api::OpenAiResponses, &pieces, &host);
    assert_eq!(found, counts(4, 3, 0, 1));
    let paths: Vec<&str> = replaced.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "input[5].output",
            "input[6].output",
            "input[7].output[0].text"
        ]
    );
    assert!(compressible(&host, "dq_query", &c.query));
}

/// A result is named by a call *before* it, in the message of the right role; a call or a
/// result anywhere else names nothing and is nothing.
#[test]
fn results_are_named_only_by_earlier_calls_of_the_right_role() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let c = corpus();
    use Fate::Unchanged;
    let anthropic = [
        // The result comes before its call.
        raw(
            "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":",
        ),
        result("github_labels", &c.labels, Unchanged),
        raw(
            "}]},{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"github_labels\",\"input\":{}}]},",
        ),
        // A tool_use in a user message, a tool_result in an assistant message.
        raw(
            "{\"role\":\"user\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"github_labels\",\"input\":{}}]},",
        ),
        raw(
            "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":",
        ),
        result("github_labels", &c.labels, Unchanged),
        raw(
            "}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t2\",\"content\":",
        ),
        result("github_labels", &c.labels, Unchanged),
        raw("}]}]}"),
    ];
    assert_eq!(
        check(Api::AnthropicMessages, &anthropic, &host).1,
        counts(2, 0, 0, 2)
    );
    let responses = [
        raw("{\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":"),
        result("github_labels", &c.labels, Unchanged),
        raw(
            "},{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"github_labels\",\"arguments\":\"{}\"}]}",
        ),
    ];
    assert_eq!(
        check(Api::OpenAiResponses, &responses, &host).1,
        counts(1, 0, 0, 1)
    );
}

#[test]
fn a_body_with_nothing_to_compress_goes_on_as_the_clients_own_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let cases: [(Api, &str, Counts); 6] = [
        (
            Api::AnthropicMessages,
            r#"{"model":"m","messages":[{"role":"user","content":"hi \u00e9 \/"}],"max_tokens":1E3}"#,
            counts(0, 0, 0, 0),
        ),
        // Results the pipeline leaves as they are keep their literal, escapes included.
        (
            Api::AnthropicMessages,
            r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"ls","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"caf\u00e9 \/ ok\n"},{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"\u0041"}]},{"type":"tool_result","tool_use_id":"a","content":""}]}]}"#,
            counts(3, 0, 0, 0),
        ),
        (
            Api::OpenAiChat,
            r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"[1,2]"}]}"#,
            counts(1, 0, 0, 0),
        ),
        (
            Api::OpenAiResponses,
            r#"{"model":"gpt-5","input":"Say hi \u00e9."}"#,
            counts(0, 0, 0, 0),
        ),
        (
            Api::OpenAiResponses,
            r#"{"model":"gpt-5","previous_response_id":"resp_1"}"#,
            counts(0, 0, 0, 0),
        ),
        (
            Api::OpenAiResponses,
            r#"{"previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c","output":"{\"rows\": [1, 2, 3]}"}]}"#,
            counts(1, 0, 0, 1),
        ),
    ];
    for (api, body, expected) in cases {
        let rewrite = rewrite(api, body.as_bytes(), &host).unwrap();
        assert!(
            matches!(&rewrite.body, Cow::Borrowed(sent) if sent.as_ptr() == body.as_ptr() && sent.len() == body.len()),
            "{body}"
        );
        assert_eq!(rewrite.counts, expected, "{body}");
        assert!(rewrite.replaced.is_empty() && !rewrite.pointed());
    }
}

#[test]
fn with_the_kill_switch_on_every_result_goes_on_as_it_came() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .kill_switch(Some(true))
        .build()
        .unwrap();
    let c = corpus();
    let pieces = [
        raw(
            "{\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"b\",\"input\":{}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"content\":",
        ),
        result("b", &c.build, Fate::Unchanged),
        raw("}]}]}"),
    ];
    assert_eq!(
        check(Api::AnthropicMessages, &pieces, &host).1,
        counts(1, 0, 0, 0)
    );
}

/// One turn of a conversation: a call of `tool` and its result, in each API's shape.
fn turn(api: Api, index: usize, tool: &str, text: &str) -> String {
    let id = format!("call_{index}");
    let text = serde_json::to_string(text).unwrap();
    match api {
        Api::AnthropicMessages => format!(
            "{{\"role\": \"assistant\", \"content\": [{{\"type\": \"text\", \"text\": \"Step {index} \\u2014\"}}, \
             {{\"type\": \"tool_use\", \"id\": \"{id}\", \"name\": \"{tool}\", \"input\": {{\"n\": {index}.0}}}}]}},\n\
             {{\"role\": \"user\", \"content\": [{{\"type\": \"tool_result\", \"tool_use_id\": \"{id}\", \"content\": {text}}}]}}"
        ),
        Api::OpenAiChat => format!(
            "{{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{{\"id\": \"{id}\", \"type\": \"function\", \
             \"function\": {{\"name\": \"{tool}\", \"arguments\": \"{{\\\"n\\\": {index}}}\"}}}}]}},\n\
             {{\"role\": \"tool\", \"tool_call_id\": \"{id}\", \"content\": {text}}}"
        ),
        Api::OpenAiResponses => format!(
            "{{\"type\": \"function_call\", \"call_id\": \"{id}\", \"name\": \"{tool}\", \"arguments\": \"{{}}\"}},\n\
             {{\"type\": \"function_call_output\", \"call_id\": \"{id}\", \"output\": {text}}}"
        ),
    }
}

/// A conversation of `turns` tool turns; the body ends with `CLOSE`.
fn conversation(api: Api, turns: usize) -> String {
    let c = corpus();
    let results = [
        ("github_labels", c.labels.as_str()),
        ("shell_cargo_build", c.build.as_str()),
        ("dq_query", c.query.as_str()),
        ("go_test", c.go_test.as_str()),
    ];
    let (head, first) = match api {
        Api::AnthropicMessages => (
            "{\"model\": \"claude-sonnet-4-5\", \"max_tokens\": 4096, \"messages\": [\n",
            "{\"role\": \"user\", \"content\": \"Look around \\u00e9.\"}",
        ),
        Api::OpenAiChat => (
            "{\"model\": \"gpt-4.1\", \"messages\": [\n",
            "{\"role\": \"user\", \"content\": \"Look around \\u00e9.\"}",
        ),
        Api::OpenAiResponses => (
            "{\"model\": \"gpt-5\", \"input\": [\n",
            "{\"role\": \"user\", \"content\": \"Look around \\u00e9.\"}",
        ),
    };
    let mut messages = vec![first.to_owned()];
    for index in 0..turns {
        let (tool, text) = results[index % results.len()];
        messages.push(turn(api, index, tool, text));
    }
    format!("{head}{}{CLOSE}", messages.join(",\n"))
}

const CLOSE: &str = "\n]}\n";

/// The prompt-cache property: the same conversation rewrites to the same bytes, on the same
/// host and on a new one (a restarted proxy); with one more turn, everything before the new
/// turn is what the previous request sent.
#[test]
fn a_conversation_rewrites_to_the_same_prefix_on_every_turn() {
    for api in [
        Api::AnthropicMessages,
        Api::OpenAiChat,
        Api::OpenAiResponses,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let host = host(dir.path());
        let before = conversation(api, 3);
        let first = rewrite(api, before.as_bytes(), &host).unwrap();
        assert_eq!(first.counts.compressed, 3, "{api}");
        assert!(first.pointed(), "{api}");
        let again = rewrite(api, before.as_bytes(), &host).unwrap();
        assert_eq!(again.body, first.body, "{api}");
        let other_dir = tempfile::tempdir().unwrap();
        let restarted = rewrite(api, before.as_bytes(), &self::host(other_dir.path())).unwrap();
        assert_eq!(restarted.body, first.body, "{api}");

        let after = conversation(api, 4);
        assert!(after.starts_with(&before[..before.len() - CLOSE.len()]));
        let next = rewrite(api, after.as_bytes(), &host).unwrap();
        assert_eq!(next.counts.compressed, 4, "{api}");
        let prefix = &first.body[..first.body.len() - CLOSE.len()];
        let common = next
            .body
            .iter()
            .zip(first.body.iter())
            .take_while(|(a, b)| a == b)
            .count();
        assert!(
            common >= prefix.len(),
            "{api}: the rewritten bodies part at byte {common} of {}",
            prefix.len()
        );
        assert_eq!(next.replaced[..3], first.replaced[..], "{api}");
    }
}

#[test]
fn a_body_it_cannot_rewrite_is_refused_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let deep = format!(
        "{{\"system\": {}{}, \"messages\": []}}",
        "[".repeat(600),
        "]".repeat(600)
    );
    let use_a =
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}"#;
    let result_of_a = |rest: &str| {
        format!(
            r#"{{"messages":[{use_a},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"a"{rest}}}]}}]}}"#
        )
    };
    let cases: Vec<(Api, Vec<u8>, &str)> = vec![
        (Api::AnthropicMessages, b"{\"messages\": [\xff]}".to_vec(), "body: not UTF-8 (at byte 14)"),
        (Api::AnthropicMessages, b"".to_vec(), "body: not valid JSON (at byte 0)"),
        (Api::AnthropicMessages, b"not json".to_vec(), "body: not valid JSON (at byte 0)"),
        (Api::AnthropicMessages, br#"{"messages": [] } x"#.to_vec(), "body: not valid JSON (at byte 18)"),
        (Api::AnthropicMessages, br#"{"messages": ["#.to_vec(), "messages[0]: not valid JSON (at byte 14)"),
        (Api::AnthropicMessages, br#"{"system": "a\u12", "messages": []}"#.to_vec(), "system: not valid JSON (at byte 17)"),
        (Api::AnthropicMessages, deep.into_bytes(), "system: JSON nested too deeply"),
        (Api::AnthropicMessages, br#"{"messages": [], "messages": []}"#.to_vec(), "body: JSON object with a duplicate member name"),
        (
            Api::AnthropicMessages,
            br#"{"messages": [{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{"x":1,"x":2}}]}]}"#.to_vec(),
            "messages[0].content[0].input: JSON object with a duplicate member name",
        ),
        (Api::AnthropicMessages, b"[1, 2]".to_vec(), "body: expected an object, found an array"),
        (Api::AnthropicMessages, br#"{"model": "m"}"#.to_vec(), "body: no \"messages\" member"),
        (Api::AnthropicMessages, br#"{"messages": {}}"#.to_vec(), "messages: expected an array of messages, found an object"),
        (Api::AnthropicMessages, br#"{"messages": [null]}"#.to_vec(), "messages[0]: expected a message (an object), found null"),
        (Api::AnthropicMessages, br#"{"messages": [{"content": "hi"}]}"#.to_vec(), "messages[0]: no \"role\" member"),
        (Api::AnthropicMessages, br#"{"messages": [{"role": 1, "content": "hi"}]}"#.to_vec(), "messages[0].role: expected a string, found a number"),
        (Api::AnthropicMessages, br#"{"messages": [{"role": "user"}]}"#.to_vec(), "messages[0]: no \"content\" member"),
        (Api::AnthropicMessages, br#"{"messages": [{"role": "user", "content": [{"text": "x"}]}]}"#.to_vec(), "messages[0].content[0]: no \"type\" member"),
        (Api::AnthropicMessages, br#"{"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]}]}"#.to_vec(), "messages[0].content[0]: no \"name\" member"),
        (Api::AnthropicMessages, result_of_a(r#","content":7"#).into_bytes(), "messages[1].content[0].content: expected a string or an array of content blocks, found a number"),
        (Api::AnthropicMessages, result_of_a(r#","content":[7]"#).into_bytes(), "messages[1].content[0].content[0]: expected a content part (an object), found a number"),
        (Api::AnthropicMessages, result_of_a(r#","content":[{"type":"text","text":false}]"#).into_bytes(), "messages[1].content[0].content[0].text: expected a string, found false"),
        (Api::AnthropicMessages, result_of_a(r#","content":"x","is_error":"yes""#).into_bytes(), "messages[1].content[0].is_error: expected true or false, found a string"),
        (Api::AnthropicMessages, br#"{"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}"#.to_vec(), "messages[0].content[0]: no \"tool_use_id\" member"),
        (Api::OpenAiChat, br#"{"messages": [{"role": "tool", "content": "x"}]}"#.to_vec(), "messages[0]: no \"tool_call_id\" member"),
        (Api::OpenAiChat, br#"{"messages": [{"role": "tool", "tool_call_id": "a", "content": 1.5}]}"#.to_vec(), "messages[0].content: expected a string or an array of content parts, found a number"),
        (Api::OpenAiChat, br#"{"messages": [{"role": "assistant", "tool_calls": {}}]}"#.to_vec(), "messages[0].tool_calls: expected an array of tool calls, found an object"),
        (Api::OpenAiChat, br#"{"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function"}]}]}"#.to_vec(), "messages[0].tool_calls[0]: no \"function\" member"),
        (Api::OpenAiChat, br#"{"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": ["x"]}}]}]}"#.to_vec(), "messages[0].tool_calls[0].function.name: expected a string, found an array"),
        (Api::OpenAiResponses, br#"{"input": 3}"#.to_vec(), "input: expected a string or an array of input items, found a number"),
        (Api::OpenAiResponses, br#"{"input": ["x"]}"#.to_vec(), "input[0]: expected an input item (an object), found a string"),
        (Api::OpenAiResponses, br#"{"input": [{"type": "function_call", "call_id": "a"}]}"#.to_vec(), "input[0]: no \"name\" member"),
        (Api::OpenAiResponses, br#"{"input": [{"type": "function_call_output", "call_id": "a", "output": {}}]}"#.to_vec(), "input[0].output: expected a string or an array of content parts, found an object"),
        (Api::OpenAiResponses, br#"{"input": [{"type": "function_call_output", "output": "x"}]}"#.to_vec(), "input[0]: no \"call_id\" member"),
    ];
    for (api, body, message) in cases {
        let shown = String::from_utf8_lossy(&body).into_owned();
        match rewrite(api, &body, &host) {
            Err(err) => assert_eq!(err.to_string(), message, "{api}: {shown}"),
            Ok(rewrite) => panic!("{api}: {shown} was rewritten: {:?}", rewrite.counts),
        }
    }
}
