//! Recoveries kept in the conversation (Anthropic Messages): what the proxy answered in its
//! own turns is put back, byte for byte, at the same place in every later request.
//!
//! # What the client sees, and what the model saw
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

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

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

/// The merged messages the proxy has sent, by the fingerprint of their blocks.
#[derive(Debug, Default)]
pub(crate) struct Merges {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_print: HashMap<u64, Arc<Merged>>,
    order: VecDeque<u64>,
}

impl Merges {
    /// Remembers that the client received a message of `blocks` after the proxy answered
    /// `turns`.
    pub(crate) fn record(&self, blocks: &[Value], turns: Vec<Inserted>) {
        if turns.is_empty() || blocks.is_empty() {
            return;
        }
        let print = fingerprint(blocks);
        let merged = Arc::new(Merged {
            blocks: blocks.len(),
            turns,
        });
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if kept.by_print.insert(print, merged).is_none() {
            kept.order.push_back(print);
        }
        while kept.order.len() > KEPT {
            if let Some(oldest) = kept.order.pop_front() {
                kept.by_print.remove(&oldest);
            }
        }
    }

    fn find(&self, print: u64) -> Option<Arc<Merged>> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.by_print.get(&print).cloned()
    }

    fn is_empty(&self) -> bool {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.by_print.is_empty()
    }

    /// `body` (a Messages request) with every recorded merged message replaced by the turns
    /// the model saw (see the module docs), or `None` when no message is one.
    pub(crate) fn reinsert(&self, body: &[u8]) -> Option<Vec<u8>> {
        if self.is_empty() {
            return None;
        }
        let text = std::str::from_utf8(body).ok()?;
        let root = parrot_json::value_span(text).ok()?;
        let members = parrot_json::members(text, root.start).ok()?;
        let messages = members
            .iter()
            .find(|m| m.name.is("messages"))?
            .value
            .clone();
        let mut out = String::new();
        let mut copied = 0;
        for message in parrot_json::elements(text, messages.start).ok()? {
            let Some(turns) = self.expanded(text, message.clone()) else {
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
    fn expanded(&self, text: &str, span: std::ops::Range<usize>) -> Option<String> {
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
        let merged = self.find(fingerprint(&values))?;
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
            &blocks,
            vec![Inserted {
                at: 1,
                calls: vec![call("toolu_1")],
                answers: answers("toolu_1"),
            }],
        );
        // The client adds a cache marker and its own spacing: still the same message.
        let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}, {"role": "assistant", "content": [{"type":"text","text":"Let me look."}, {"type":"text","text":"Row 17 is Ada.","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":"thanks"}]}"#;
        let out = String::from_utf8(merges.reinsert(body.as_bytes()).unwrap()).unwrap();
        let expected = format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}}, {{"role":"assistant","content":[{{"type":"text","text":"Let me look."}},{}]}},{},{{"role": "assistant", "content": [{{"type":"text","text":"Row 17 is Ada.","cache_control":{{"type":"ephemeral"}}}}]}},{{"role":"user","content":"thanks"}}]}}"#,
            call("toolu_1"),
            answers("toolu_1")
        );
        assert_eq!(out, expected);
        assert_eq!(
            merges.reinsert(body.as_bytes()).unwrap(),
            out.as_bytes(),
            "the same bytes every time"
        );
    }

    #[test]
    fn two_answered_turns_go_back_in_order_and_a_call_first_leaves_no_text_before_it() {
        let merges = Merges::default();
        let blocks = [json!({"type": "text", "text": "Done."})];
        merges.record(
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
        let out: Value =
            serde_json::from_slice(&merges.reinsert(body.as_bytes()).unwrap()).unwrap();
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
            merges.reinsert(br#"{"messages":[]}"#),
            None,
            "nothing recorded"
        );
        merges.record(
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
            assert_eq!(merges.reinsert(body.as_bytes()), None, "{body}");
        }
    }

    #[test]
    fn the_oldest_records_go_beyond_the_bound() {
        let merges = Merges::default();
        for n in 0..=KEPT {
            merges.record(
                &[json!({"type": "text", "text": n.to_string()})],
                vec![Inserted {
                    at: 0,
                    calls: vec![call("x")],
                    answers: answers("x"),
                }],
            );
        }
        let first = fingerprint(&[json!({"type": "text", "text": "0"})]);
        let last = fingerprint(&[json!({"type": "text", "text": KEPT.to_string()})]);
        assert!(merges.find(first).is_none());
        assert!(merges.find(last).is_some());
    }
}
