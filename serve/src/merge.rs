//! Recoveries kept in the conversation: what the proxy answered in its own turns is put back,
//! byte for byte, at the same place in every later request.
//!
//! # Chat Completions and Responses
//!
//! The client receives the last answer only. The proxy records the turns it appended (the
//! model's calls and the answers, as the follow-ups carried them) under the fingerprint of that
//! answer's message (Chat: its text and tool calls) or first output item (Responses: a
//! message's text, a call's id, name and arguments, an item's id), and puts them back just
//! before it in every later request that holds it.
//!
//! # Anthropic Messages: what the client sees, and what the model saw
//!
//! When the model's answer calls [`RECOVERY_TOOL`](crate::RECOVERY_TOOL) (alone, or after a
//! text or thinking block), the proxy answers the calls and sends the follow-up; the client
//! receives one assistant message, *merged*: the blocks of each answered turn that came before
//! its first call of the recovery tool, then the blocks of the last answer. The model saw more:
//!
//! ```text
//! assistant [T, wm_get_result call]   user [tool_result: the original]   assistant [F]
//! ```
//!
//! while the client keeps `assistant [T, F]`. A [`Merged`] records, for one merged message,
//! where each answered turn's calls went (after how many of the client's blocks) and the exact
//! text of the calls and of the answers, as the follow-up carried them.
//!
//! # Putting it back
//!
//! [`Merges::reinsert`] reads every assistant message of a later request; one whose blocks are
//! those of a recorded merged message (compared by what the model wrote: text, thinking and its
//! signature, tool calls' ids, names and inputs — not `cache_control` or other markers a client
//! adds) is replaced by the turns the model saw: the client's own block texts where the client
//! had them, the recorded calls and answers between them. The recorded parts are the same bytes
//! in every request, so the conversation's prefix, and the prompt cache's, holds from one
//! request to the next.
//!
//! The record is in the proxy's memory (the last [`KEPT`] merged messages): after a restart, or
//! for a message the client changed, nothing is put back and the model sees the merged message
//! as the client sent it, a well-formed conversation in which it can ask again.
//!
//! # Whose records
//!
//! A record is kept under the namespace of the request that answered the calls (its API key's,
//! or none) and put back only into requests of the same namespace: the answers hold originals,
//! and a client with another key that sends the same message (the same prompt answered the
//! same way) must not receive them, as it would not from the tee store.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use crate::llm::Api;
use parrot_host::Namespace;
use serde_json::{Map, Value};

/// How many merged messages the proxy remembers (the oldest go first).
pub const KEPT: usize = 1024;

/// One answered turn of a merged message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inserted {
    /// How many of the merged message's blocks come before this turn's first call.
    pub(crate) at: usize,
    /// The turn's blocks from its first call of the recovery tool on, as the follow-up sent
    /// them (one JSON text each).
    pub(crate) calls: Vec<String>,
    /// The `user` message of the answers, as the follow-up sent it.
    pub(crate) answers: String,
}

/// A merged message: its blocks' fingerprint, how many there are, and its answered turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Merged {
    pub(crate) blocks: usize,
    pub(crate) turns: Vec<Inserted>,
}

/// What the proxy answered before a message the client received.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Record {
    /// Anthropic: a merged message's answered turns.
    Merged(Merged),
    /// Chat Completions and Responses: the elements that go just before the message or item.
    Before(Vec<String>),
}

/// The messages the proxy has sent after answering recovery calls, by their fingerprint.
#[derive(Debug, Default)]
pub(crate) struct Merges {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_print: HashMap<Print, Arc<Record>>,
    order: VecDeque<Print>,
}

/// A record's place: the namespace of the request that made it, and the fingerprint of the
/// message it goes with.
type Print = (Option<Namespace>, u64);

impl Merges {
    /// Remembers that the client received an Anthropic message of `blocks` after the proxy
    /// answered `turns`, in a request of `namespace`.
    pub(crate) fn record(
        &self,
        namespace: Option<&Namespace>,
        blocks: &[Value],
        turns: Vec<Inserted>,
    ) {
        if turns.is_empty() || blocks.is_empty() {
            return;
        }
        let merged = Merged {
            blocks: blocks.len(),
            turns,
        };
        self.keep(
            (namespace.cloned(), fingerprint(blocks)),
            Record::Merged(merged),
        );
    }

    /// Remembers that the client received `answer` (a Chat Completions or Responses answer)
    /// after the proxy appended `turns` to the conversation, in a request of `namespace`.
    pub(crate) fn record_before(
        &self,
        namespace: Option<&Namespace>,
        api: Api,
        answer: &Value,
        turns: Vec<String>,
    ) {
        if turns.is_empty() {
            return;
        }
        let last = match api {
            Api::OpenAiChat => answer.pointer("/choices/0/message"),
            _ => answer.pointer("/output/0"),
        };
        if let Some(last) = last {
            self.keep(
                (namespace.cloned(), print_of(api, last)),
                Record::Before(turns),
            );
        }
    }

    fn keep(&self, print: Print, record: Record) {
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if kept
            .by_print
            .insert(print.clone(), Arc::new(record))
            .is_none()
        {
            kept.order.push_back(print);
        }
        while kept.order.len() > KEPT {
            if let Some(oldest) = kept.order.pop_front() {
                kept.by_print.remove(&oldest);
            }
        }
    }

    fn find(&self, namespace: Option<&Namespace>, print: u64) -> Option<Arc<Record>> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.by_print.get(&(namespace.cloned(), print)).cloned()
    }

    fn is_empty(&self) -> bool {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.by_print.is_empty()
    }

    /// `body` (a request of `api` in `namespace`) with the turns the proxy answered in that
    /// namespace put back at their places (see the module docs), or `None` when there is
    /// nothing to put back.
    pub(crate) fn reinsert(
        &self,
        namespace: Option<&Namespace>,
        api: Api,
        body: &[u8],
    ) -> Option<Vec<u8>> {
        if self.is_empty() {
            return None;
        }
        let text = std::str::from_utf8(body).ok()?;
        let root = parrot_json::value_span(text).ok()?;
        let members = parrot_json::members(text, root.start).ok()?;
        let list = match api {
            Api::AnthropicMessages | Api::OpenAiChat => "messages",
            _ => "input",
        };
        let messages = members.iter().find(|m| m.name.is(list))?.value.clone();
        if text.as_bytes().get(messages.start) != Some(&b'[') {
            return None;
        }
        let mut out = String::new();
        let mut copied = 0;
        for message in parrot_json::elements(text, messages.start).ok()? {
            let turns = match api {
                Api::AnthropicMessages => self.expanded(namespace, text, message.clone()),
                _ => self.before(namespace, api, text, message.clone()),
            };
            let Some(turns) = turns else {
                continue;
            };
            out.push_str(&text[copied..message.start]);
            out.push_str(&turns);
            copied = message.end;
        }
        if copied == 0 {
            return None;
        }
        out.push_str(&text[copied..]);
        Some(out.into_bytes())
    }

    /// The turns that replace the message at `span`, when it is a recorded merged message.
    fn expanded(
        &self,
        namespace: Option<&Namespace>,
        text: &str,
        span: std::ops::Range<usize>,
    ) -> Option<String> {
        let members = parrot_json::members(text, span.start).ok()?;
        let role = members.iter().find(|m| m.name.is("role"))?;
        if &text[role.value.clone()] != "\"assistant\"" {
            return None;
        }
        let content = members.iter().find(|m| m.name.is("content"))?.value.clone();
        let blocks = parrot_json::elements(text, content.start).ok()?;
        let values: Vec<Value> = blocks
            .iter()
            .map(|block| serde_json::from_str(&text[block.clone()]))
            .collect::<Result<_, _>>()
            .ok()?;
        let record = self.find(namespace, fingerprint(&values))?;
        let Record::Merged(merged) = &*record else {
            return None;
        };
        let last = merged.turns.last()?.at;
        if merged.blocks != blocks.len() || last >= blocks.len() {
            return None;
        }
        let raw = |range: std::ops::Range<usize>| -> Vec<&str> {
            blocks[range]
                .iter()
                .map(|block| &text[block.clone()])
                .collect()
        };
        let mut out = String::new();
        let mut from = 0;
        for turn in &merged.turns {
            let mut content = raw(from..turn.at);
            content.extend(turn.calls.iter().map(String::as_str));
            out.push_str("{\"role\":\"assistant\",\"content\":[");
            out.push_str(&content.join(","));
            out.push_str("]},");
            out.push_str(&turn.answers);
            out.push(',');
            from = turn.at;
        }
        // The client's own message, holding the blocks after the last call.
        out.push_str(&text[span.start..content.start]);
        out.push('[');
        out.push_str(&raw(from..blocks.len()).join(","));
        out.push(']');
        out.push_str(&text[content.end..span.end]);
        Some(out)
    }
}

impl Merges {
    /// The element at `span` preceded by the turns recorded before it (Chat, Responses).
    fn before(
        &self,
        namespace: Option<&Namespace>,
        api: Api,
        text: &str,
        span: std::ops::Range<usize>,
    ) -> Option<String> {
        let members = parrot_json::members(text, span.start).ok()?;
        let is = |name: &str, value: &str| {
            members
                .iter()
                .any(|m| m.name.is(name) && &text[m.value.clone()] == value)
        };
        // Only what a model wrote can be an answer the client received.
        let candidate = match api {
            Api::OpenAiChat => is("role", "\"assistant\""),
            _ => {
                !is("type", "\"function_call_output\"")
                    && !is("role", "\"user\"")
                    && !is("role", "\"system\"")
                    && !is("role", "\"developer\"")
            }
        };
        if !candidate {
            return None;
        }
        let value: Value = serde_json::from_str(&text[span.clone()]).ok()?;
        let record = self.find(namespace, print_of(api, &value))?;
        let Record::Before(turns) = &*record else {
            return None;
        };
        let mut out = turns.join(",");
        out.push(',');
        out.push_str(&text[span]);
        Some(out)
    }
}

/// The fingerprint of a Chat Completions message or a Responses item: what the model wrote.
fn print_of(api: Api, value: &Value) -> u64 {
    let pick = |names: &[&str]| -> Value {
        let mut out = Map::new();
        for &name in names {
            if let Some(found) = value.get(name).filter(|v| !v.is_null()) {
                out.insert(name.to_owned(), found.clone());
            }
        }
        Value::Object(out)
    };
    let written = match api {
        Api::OpenAiChat => {
            let content = match value.get("content") {
                Some(Value::String(text)) if text.is_empty() => Value::Null,
                Some(content) => content.clone(),
                None => Value::Null,
            };
            let calls: Vec<Value> = value
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(|calls| {
                    calls
                        .iter()
                        .map(|call| {
                            serde_json::json!([
                                call.get("id"),
                                call.pointer("/function/name"),
                                call.pointer("/function/arguments")
                            ])
                        })
                        .collect()
                })
                .unwrap_or_default();
            serde_json::json!([content, calls])
        }
        _ => match value.get("type").and_then(Value::as_str) {
            Some("function_call") => pick(&["type", "call_id", "name", "arguments"]),
            Some("message") | None => {
                let texts: Vec<Value> = value
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").cloned())
                            .collect()
                    })
                    .unwrap_or_default();
                serde_json::json!(["message", value.get("role"), texts])
            }
            _ => pick(&["type", "id"]),
        },
    };
    let mut hasher = DefaultHasher::new();
    written.to_string().hash(&mut hasher);
    hasher.finish()
}

/// A fingerprint of content blocks: what the model wrote in them, not what a client adds.
pub(crate) fn fingerprint(blocks: &[Value]) -> u64 {
    let written: Vec<Value> = blocks.iter().map(written).collect();
    let mut hasher = DefaultHasher::new();
    Value::Array(written).to_string().hash(&mut hasher);
    hasher.finish()
}

/// The members of a block that the model wrote.
fn written(block: &Value) -> Value {
    let keep: &[&str] = match block.get("type").and_then(Value::as_str) {
        Some("text") => &["type", "text"],
        Some("thinking") => &["type", "thinking", "signature"],
        Some("redacted_thinking") => &["type", "data"],
        Some("tool_use" | "server_tool_use") => &["type", "id", "name", "input"],
        _ => {
            let mut block = block.clone();
            if let Some(object) = block.as_object_mut() {
                object.remove("cache_control");
            }
            return block;
        }
    };
    let mut out = Map::new();
    for &name in keep {
        if let Some(value) = block.get(name) {
            out.insert(name.to_owned(), value.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> String {
        json!({"type": "tool_use", "id": id, "name": crate::RECOVERY_TOOL, "input": {"key": "k1"}})
            .to_string()
    }

    fn answers(id: &str) -> String {
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "the original"}
        ]})
        .to_string()
    }

    #[test]
    fn a_merged_message_is_replaced_by_the_turns_the_model_saw() {
        let merges = Merges::default();
        let blocks = [
            json!({"type": "text", "text": "Let me look."}),
            json!({"type": "text", "text": "Row 17 is Ada."}),
        ];
        merges.record(
            None,
            &blocks,
            vec![Inserted {
                at: 1,
                calls: vec![call("toolu_1")],
                answers: answers("toolu_1"),
            }],
        );
        // The client adds a cache marker and its own spacing: still the same message.
        let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}, {"role": "assistant", "content": [{"type":"text","text":"Let me look."}, {"type":"text","text":"Row 17 is Ada.","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":"thanks"}]}"#;
        let out = String::from_utf8(
            merges
                .reinsert(None, Api::AnthropicMessages, body.as_bytes())
                .unwrap(),
        )
        .unwrap();
        let expected = format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}}, {{"role":"assistant","content":[{{"type":"text","text":"Let me look."}},{}]}},{},{{"role": "assistant", "content": [{{"type":"text","text":"Row 17 is Ada.","cache_control":{{"type":"ephemeral"}}}}]}},{{"role":"user","content":"thanks"}}]}}"#,
            call("toolu_1"),
            answers("toolu_1")
        );
        assert_eq!(out, expected);
        assert_eq!(
            merges
                .reinsert(None, Api::AnthropicMessages, body.as_bytes())
                .unwrap(),
            out.as_bytes(),
            "the same bytes every time"
        );
    }

    /// A client with another API key that sends the same message got the answers recorded for
    /// the first key put back in its request (originals included): records are scoped.
    #[test]
    fn a_record_goes_back_only_into_requests_of_its_namespace() {
        let merges = Merges::default();
        let alice = Namespace::of_secret(b"alice");
        let bob = Namespace::of_secret(b"bob");
        let blocks = [json!({"type": "text", "text": "Row 17 is Ada."})];
        merges.record(
            Some(&alice),
            &blocks,
            vec![Inserted {
                at: 0,
                calls: vec![call("toolu_1")],
                answers: answers("toolu_1"),
            }],
        );
        let body = r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"Row 17 is Ada."}]}]}"#;
        let put_back = merges.reinsert(Some(&alice), Api::AnthropicMessages, body.as_bytes());
        assert!(
            String::from_utf8(put_back.unwrap())
                .unwrap()
                .contains("the original")
        );
        assert_eq!(
            merges.reinsert(Some(&bob), Api::AnthropicMessages, body.as_bytes()),
            None
        );
        assert_eq!(
            merges.reinsert(None, Api::AnthropicMessages, body.as_bytes()),
            None
        );

        let answer = json!({"choices": [{"message": {"role": "assistant", "content": "Ada."}}]});
        merges.record_before(Some(&alice), Api::OpenAiChat, &answer, vec![answers("c1")]);
        let body = r#"{"messages":[{"role":"assistant","content":"Ada."}]}"#;
        assert!(
            merges
                .reinsert(Some(&alice), Api::OpenAiChat, body.as_bytes())
                .is_some()
        );
        assert_eq!(
            merges.reinsert(Some(&bob), Api::OpenAiChat, body.as_bytes()),
            None
        );
    }

    #[test]
    fn two_answered_turns_go_back_in_order_and_a_call_first_leaves_no_text_before_it() {
        let merges = Merges::default();
        let blocks = [json!({"type": "text", "text": "Done."})];
        merges.record(
            None,
            &blocks,
            vec![
                Inserted {
                    at: 0,
                    calls: vec![call("a")],
                    answers: answers("a"),
                },
                Inserted {
                    at: 0,
                    calls: vec![call("b")],
                    answers: answers("b"),
                },
            ],
        );
        let body =
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"Done."}]}]}"#;
        let out: Value = serde_json::from_slice(
            &merges
                .reinsert(None, Api::AnthropicMessages, body.as_bytes())
                .unwrap(),
        )
        .unwrap();
        let roles: Vec<&str> = out["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            ["assistant", "user", "assistant", "user", "assistant"]
        );
        assert_eq!(out["messages"][0]["content"][0]["id"], "a");
        assert_eq!(out["messages"][2]["content"][0]["id"], "b");
        assert_eq!(out["messages"][4]["content"][0]["text"], "Done.");
    }

    #[test]
    fn a_message_the_client_changed_or_never_got_is_left_as_it_is() {
        let merges = Merges::default();
        assert_eq!(
            merges.reinsert(None, Api::AnthropicMessages, br#"{"messages":[]}"#),
            None,
            "nothing recorded"
        );
        merges.record(
            None,
            &[
                json!({"type": "text", "text": "A"}),
                json!({"type": "text", "text": "B"}),
            ],
            vec![Inserted {
                at: 1,
                calls: vec![call("c")],
                answers: answers("c"),
            }],
        );
        for body in [
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"A"},{"type":"text","text":"B!"}]}]}"#,
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"A"},{"type":"text","text":"B"}]}]}"#,
            r#"{"messages":[{"role":"assistant","content":"AB"}]}"#,
            "not json",
        ] {
            assert_eq!(
                merges.reinsert(None, Api::AnthropicMessages, body.as_bytes()),
                None,
                "{body}"
            );
        }
    }

    #[test]
    fn the_oldest_records_go_beyond_the_bound() {
        let merges = Merges::default();
        for n in 0..=KEPT {
            merges.record(
                None,
                &[json!({"type": "text", "text": n.to_string()})],
                vec![Inserted {
                    at: 0,
                    calls: vec![call("x")],
                    answers: answers("x"),
                }],
            );
        }
        let first = fingerprint(&[json!({"type": "text", "text": "0"})]);
        assert_eq!(merges.kept.lock().unwrap().order.len(), KEPT);
        let last = fingerprint(&[json!({"type": "text", "text": KEPT.to_string()})]);
        assert!(merges.find(None, first).is_none());
        assert!(merges.find(None, last).is_some());
    }

    #[test]
    fn chat_and_responses_turns_go_back_before_the_answer_the_client_got() {
        let merges = Merges::default();
        let chat_turns = vec![
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                "type": "function", "function": {"name": crate::RECOVERY_TOOL,
                "arguments": "{\"key\":\"k\"}"}}]})
            .to_string(),
            json!({"role": "tool", "tool_call_id": "c1", "content": "the original"}).to_string(),
        ];
        let answer = json!({"choices": [{"message": {"role": "assistant", "content": "Row 3."}}]});
        merges.record_before(None, Api::OpenAiChat, &answer, chat_turns.clone());
        // The client sends the message back with an empty refusal and its own spacing.
        let body = r#"{"messages":[{"role":"user","content":"hi"},{"role": "assistant", "content": "Row 3.", "refusal": null},{"role":"user","content":"ok"}]}"#;
        let out = String::from_utf8(
            merges
                .reinsert(None, Api::OpenAiChat, body.as_bytes())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            out,
            format!(
                r#"{{"messages":[{{"role":"user","content":"hi"}},{},{},{{"role": "assistant", "content": "Row 3.", "refusal": null}},{{"role":"user","content":"ok"}}]}}"#,
                chat_turns[0], chat_turns[1]
            )
        );
        assert_eq!(
            merges.reinsert(
                None,
                Api::OpenAiChat,
                br#"{"messages":[{"role":"user","content":"Row 3."}]}"#
            ),
            None,
            "a user's message is never an answer"
        );

        let responses_turns = vec![
            json!({"type": "function_call", "call_id": "c2", "name": crate::RECOVERY_TOOL,
                "arguments": "{}"})
            .to_string(),
            json!({"type": "function_call_output", "call_id": "c2", "output": "o"}).to_string(),
        ];
        let answer = json!({"output": [{"type": "message", "id": "msg_9", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Found.", "annotations": []}]}]});
        merges.record_before(None, Api::OpenAiResponses, &answer, responses_turns.clone());
        let body = r#"{"input":[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Found."}]}]}"#;
        let out: Value = serde_json::from_slice(
            &merges
                .reinsert(None, Api::OpenAiResponses, body.as_bytes())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(out["input"][1]["call_id"], "c2");
        assert_eq!(out["input"][2]["type"], "function_call_output");
        assert_eq!(out["input"][3]["content"][0]["text"], "Found.");
    }
}
