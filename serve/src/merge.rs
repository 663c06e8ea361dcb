//! Recoveries kept in the conversation: what the proxy answered in its own turns is put back,
//! byte for byte, at the same place in every later request of that conversation.
//!
//! # Chat Completions and Responses
//!
//! The client receives the last answer only. The proxy records the turns it appended (the
//! model's calls and the answers, as the follow-ups carried them) for that answer's message
//! (Chat: its text and tool calls) or first output item (Responses: a message's text, a call's
//! id, name and arguments, an item's id), and puts them back just before it in every later
//! request of the same conversation that holds it.
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
//! [`Merges::reinsert`] reads every message of a later request that a model could have
//! written; one that is a recorded answer, in the conversation it was answered in (below), is
//! replaced by the turns the model saw (Anthropic: the client's own block texts where the
//! client had them, the recorded calls and answers between them), or preceded by them (Chat,
//! Responses). A message is compared by what the model wrote: text, thinking and its
//! signature, tool calls' ids, names and inputs — not `cache_control` or other markers a client
//! adds. The recorded parts are the same bytes in every request, so the conversation's prefix,
//! and the prompt cache's, holds from one request to the next.
//!
//! # Which conversation
//!
//! The same answer text (`Done.`) ends many conversations. A record is found by three things,
//! all of which a later request must match:
//!
//! - the namespace of the request that answered the calls (its credential's; none only with
//!   `serve --shared-unscoped`: without it a request with no credential is alone in a
//!   namespace of its own, and nothing it answered is recorded or put back): the answers hold
//!   originals, and a client with another key must not receive them, as it would not from the
//!   tee store;
//! - the fingerprint of the messages that request held, the conversation before the answer, as
//!   the client sent them: each message's role and what was written in it (the blocks compared
//!   as above, `cache_control` and other client markers left out; a content string counts as
//!   its one text block), in order. In a later request, the messages before the answer must be
//!   those: the client's own, as it sends them back, with any earlier merged message in its
//!   merged form (the fingerprint is taken before anything is put back, so an earlier
//!   recovery does not change it). A server that shares one API key among its users puts one
//!   user's recovery back only into that user's conversation; a conversation the client
//!   changed before the answer (edited, compacted) gets nothing back, and the model sees the
//!   answer as the client sent it, a well-formed conversation in which it can ask again;
//! - the fingerprint of the answer itself.
//!
//! The system prompt, the tools and the other members of a request are not part of it: a
//! client may change them between requests of one conversation, and the messages are what
//! make it one.
//!
//! # Where records are kept
//!
//! With a tee store (the only case in which the proxy answers recovery calls), a record is
//! stored in it, as JSON, under `{namespace}/__record__:merge:<SHA-256 of the three>` (no
//! `{namespace}/` for a request without a credential, under `--shared-unscoped`), so that every proxy sharing the store (replicas
//! behind a load balancer, on one Redis) puts back what another answered; it lives as long as
//! the store's retention keeps it, as an original does. The key starts with
//! [`parrot_host::RECORD_KEY_PREFIX`]: no recovery reads it ([`parrot_host::Host::recover_in`]
//! finds nothing under such a key), so a model cannot fetch a record as an original, and it
//! is no tee key (`__tee__:…`). A store keeps the first record of a key: the same answer in
//! the same conversation answered again (a retried request) is put back with the turns of the
//! first. The record is written before the client gets the answer (for a Chat Completions or
//! Responses stream, as its end goes out). The proxy also keeps the last [`KEPT`] records it
//! wrote or read in memory, and the answers it has looked for in vain in the store (not the
//! latest ones of a request, which may still be on their way from another proxy), so that a
//! request reads the store only for messages it has not seen.
//!
//! A store that fails (Redis down, a timeout) fails no request: the record is kept in memory
//! alone, or nothing is put back, with a warning; the model then sees the answer as the
//! client sent it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use crate::llm::Api;
use parrot_host::{Host, Namespace, RECORD_KEY_PREFIX, TeeError};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// How many records the proxy keeps in memory (the oldest go first); the store keeps them as
/// long as its retention does.
pub const KEPT: usize = 1024;

/// How many answers with no record the proxy remembers, so as not to ask the store again.
const MISSES_KEPT: usize = 8 * KEPT;

/// The domain tag of a conversation's fingerprint.
const BEFORE_TAG: &[u8] = b"parrot-compress serve conversation v1\0";

/// The domain tag of an answer's fingerprint.
const ANSWER_TAG: &[u8] = b"parrot-compress serve answer v1\0";

/// A fingerprint: the SHA-256 of a canonical text, the same in every process and build, so
/// that proxies sharing a store compute the same keys.
pub(crate) type Print = [u8; 32];

/// The conversation a request's answer belongs to: the request's namespace, and the
/// fingerprint of the messages it held as the client sent them, taken when first asked for (a
/// record is made only when the proxy answered a recovery call). The default belongs to none:
/// nothing is recorded for it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Conversation {
    pub(crate) namespace: Option<Namespace>,
    asked: Option<Arc<Asked>>,
}

/// A request as the client sent it, and its messages' fingerprint once taken.
#[derive(Debug)]
struct Asked {
    api: Api,
    received: Bytes,
    before: OnceLock<Option<Print>>,
}

impl Conversation {
    /// The conversation of a request of `api` in `namespace`, whose body, as the client sent
    /// it, is `received`.
    pub(crate) fn new(namespace: Option<Namespace>, api: Api, received: Bytes) -> Conversation {
        Conversation {
            namespace,
            asked: Some(Arc::new(Asked {
                api,
                received,
                before: OnceLock::new(),
            })),
        }
    }

    /// The conversation of a request that keeps no record (one alone in a namespace of its
    /// own, `serve` without `--shared-unscoped`): its recovery calls are answered from
    /// `namespace`, and nothing it answered is recorded.
    pub(crate) fn unrecorded(namespace: Option<Namespace>) -> Conversation {
        Conversation {
            namespace,
            asked: None,
        }
    }

    /// The fingerprint of the request's messages, `None` when it has no list of them (a parse
    /// of the whole request the first time: call it where blocking is allowed).
    pub(crate) fn before(&self) -> Option<Print> {
        let asked = self.asked.as_deref()?;
        *asked.before.get_or_init(|| {
            let (text, elements) = list_of(asked.api, &asked.received)?;
            let mut before = Before::new(asked.api);
            for element in &elements {
                before.add(&serde_json::from_str(&text[element.clone()]).unwrap_or(Value::Null));
            }
            Some(before.print())
        })
    }
}

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

/// A merged message: how many blocks it has, and its answered turns.
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

impl Record {
    /// The record as stored: `{"merged": {"blocks": n, "turns": [{"at", "calls", "answers"}]}}`
    /// or `{"before": [element, …]}`, each element and call a JSON text as sent.
    fn to_json(&self) -> String {
        let record = match self {
            Record::Merged(merged) => {
                let turns: Vec<Value> = merged
                    .turns
                    .iter()
                    .map(|turn| {
                        serde_json::json!({"at": turn.at, "calls": turn.calls,
                            "answers": turn.answers})
                    })
                    .collect();
                serde_json::json!({"merged": {"blocks": merged.blocks, "turns": turns}})
            }
            Record::Before(turns) => serde_json::json!({ "before": turns }),
        };
        record.to_string()
    }

    /// A stored record, or `None` when `bytes` are not one.
    fn from_json(bytes: &[u8]) -> Option<Record> {
        let record: Value = serde_json::from_slice(bytes).ok()?;
        let texts = |value: &Value| -> Option<Vec<String>> {
            value
                .as_array()?
                .iter()
                .map(|text| text.as_str().map(str::to_owned))
                .collect()
        };
        if let Some(before) = record.get("before") {
            return texts(before).map(Record::Before);
        }
        let merged = record.get("merged")?;
        let turns = merged
            .get("turns")?
            .as_array()?
            .iter()
            .map(|turn| {
                Some(Inserted {
                    at: usize::try_from(turn.get("at")?.as_u64()?).ok()?,
                    calls: texts(turn.get("calls")?)?,
                    answers: turn.get("answers")?.as_str()?.to_owned(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Record::Merged(Merged {
            blocks: usize::try_from(merged.get("blocks")?.as_u64()?).ok()?,
            turns,
        }))
    }
}

/// A record made in memory, to be written to the store ([`Merges::save`]).
#[derive(Debug)]
pub(crate) struct Unsaved {
    key: String,
    json: String,
}

/// The records of the answers the proxy gave after answering recovery calls: in the host's tee
/// store when it has one, and the latest in memory.
#[derive(Debug, Default)]
pub(crate) struct Merges {
    host: Option<Arc<Host>>,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_key: HashMap<String, Arc<Record>>,
    order: VecDeque<String>,
    missing: HashSet<String>,
    missing_order: VecDeque<String>,
}

impl Kept {
    fn keep(&mut self, key: String, record: Arc<Record>) {
        if self.missing.remove(&key) {
            self.missing_order.retain(|missing| missing != &key);
        }
        if self.by_key.insert(key.clone(), record).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.by_key.remove(&oldest);
            }
        }
    }

    fn miss(&mut self, key: String) {
        if self.missing.insert(key.clone()) {
            self.missing_order.push_back(key);
        }
        while self.missing_order.len() > MISSES_KEPT {
            if let Some(oldest) = self.missing_order.pop_front() {
                self.missing.remove(&oldest);
            }
        }
    }
}

impl Merges {
    /// Records kept in `host`'s tee store (when it has one) and in memory.
    pub(crate) fn new(host: Option<Arc<Host>>) -> Merges {
        Merges {
            host,
            kept: Mutex::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Remembers that the client received an Anthropic message of `blocks` after the proxy
    /// answered `turns`, in `conversation`; what to [`save`](Merges::save) in the store.
    pub(crate) fn record(
        &self,
        conversation: &Conversation,
        blocks: &[Value],
        turns: Vec<Inserted>,
    ) -> Option<Unsaved> {
        if turns.is_empty() || blocks.is_empty() {
            return None;
        }
        let api = conversation.asked.as_deref()?.api;
        let message = serde_json::json!({"role": "assistant", "content": blocks});
        let print = answer_print(api, &message)?;
        let merged = Merged {
            blocks: blocks.len(),
            turns,
        };
        self.keep(conversation, print, Record::Merged(merged))
    }

    /// Remembers that the client received `answer` (a Chat Completions or Responses answer)
    /// after the proxy appended `turns` to `conversation`; what to [`save`](Merges::save).
    pub(crate) fn record_before(
        &self,
        conversation: &Conversation,
        api: Api,
        answer: &Value,
        turns: Vec<String>,
    ) -> Option<Unsaved> {
        if turns.is_empty() {
            return None;
        }
        let last = api.rules().sent_back(answer)?;
        self.keep(
            conversation,
            answer_print(api, last)?,
            Record::Before(turns),
        )
    }

    fn keep(&self, conversation: &Conversation, answer: Print, record: Record) -> Option<Unsaved> {
        let key = record_key(
            conversation.namespace.as_ref(),
            &conversation.before()?,
            &answer,
        );
        let json = record.to_json();
        self.kept().keep(key.clone(), Arc::new(record));
        Some(Unsaved { key, json })
    }

    /// Writes a record to the store (blocking: call it where blocking is allowed). A key the
    /// store holds already keeps its record, which this proxy then reads too; a store that
    /// fails leaves the record in memory alone, with a warning.
    pub(crate) fn save(&self, unsaved: Unsaved) {
        let Some(store) = self.host.as_deref().and_then(Host::tee_store) else {
            return;
        };
        match store.put(&unsaved.key, unsaved.json.as_bytes()) {
            Ok(()) => {}
            Err(TeeError::KeyExists { .. }) => {
                let mut kept = self.kept();
                kept.by_key.remove(&unsaved.key);
                kept.order.retain(|key| key != &unsaved.key);
            }
            Err(err) => tracing::warn!(
                "serve: the tee store {} cannot keep a recovery put back into later requests \
                 ({err}); only this proxy will put it back",
                store.name()
            ),
        }
    }

    /// The record under `key`: in memory, else in the store while `reachable` (set to false,
    /// with a warning, when the store fails: a request asks it once in vain, not once per
    /// message). A key the store does not hold is remembered when `settled` (the store is not
    /// asked again).
    fn find(&self, key: &str, settled: bool, reachable: &mut bool) -> Option<Arc<Record>> {
        {
            let kept = self.kept();
            if let Some(record) = kept.by_key.get(key) {
                return Some(Arc::clone(record));
            }
            if kept.missing.contains(key) {
                return None;
            }
        }
        if !*reachable {
            return None;
        }
        let store = self.host.as_deref().and_then(Host::tee_store)?;
        match store.get(key) {
            Ok(Some(bytes)) => {
                let Some(record) = Record::from_json(&bytes) else {
                    tracing::warn!(
                        "serve: the tee store {} holds a recovery record that cannot be read; \
                         nothing put back",
                        store.name()
                    );
                    return None;
                };
                let record = Arc::new(record);
                self.kept().keep(key.to_owned(), Arc::clone(&record));
                Some(record)
            }
            Ok(None) => {
                if settled {
                    self.kept().miss(key.to_owned());
                }
                None
            }
            Err(err) => {
                *reachable = false;
                tracing::warn!(
                    "serve: the tee store {} cannot be read for recoveries to put back ({err}); \
                     the request goes on without them",
                    store.name()
                );
                None
            }
        }
    }

    /// Whether nothing can be found: no store, and nothing in memory.
    fn is_empty(&self) -> bool {
        self.host.as_deref().and_then(Host::tee_store).is_none() && self.kept().by_key.is_empty()
    }

    /// `body` (a request of `api` in `namespace`, `received` as the client sent it, rewritten
    /// in place) with the turns the proxy answered in the same conversation put back at their
    /// places (see the module docs), or `None` when there is nothing to put back.
    pub(crate) fn reinsert(
        &self,
        namespace: Option<&Namespace>,
        api: Api,
        received: &[u8],
        body: &[u8],
    ) -> Option<Vec<u8>> {
        if self.is_empty() {
            return None;
        }
        let (seen, seen_elements) = list_of(api, received)?;
        let (text, elements) = list_of(api, body)?;
        if elements.len() != seen_elements.len() {
            return None;
        }
        let values: Vec<Value> = seen_elements
            .iter()
            .map(|element| serde_json::from_str(&seen[element.clone()]).unwrap_or(Value::Null))
            .collect();
        let candidates: Vec<bool> = values.iter().map(|v| is_answer(api, v)).collect();
        // The latest answers of the request (its last run of them) may have been recorded a
        // moment ago by another proxy: a miss of theirs is not remembered.
        let last = candidates.iter().rposition(|&c| c)?;
        let latest = candidates[..=last]
            .iter()
            .rposition(|&c| !c)
            .map_or(0, |at| at + 1);
        let mut before = Before::new(api);
        let mut reachable = true;
        let mut out = String::new();
        let mut copied = 0;
        for (at, (value, span)) in values.iter().zip(&elements).enumerate() {
            let put_back = candidates[at]
                .then(|| {
                    let key = record_key(namespace, &before.print(), &answer_print(api, value)?);
                    let record = self.find(&key, at < latest, &mut reachable)?;
                    match (api.rules().merges(), &*record) {
                        (true, Record::Merged(merged)) => expanded(merged, text, span.clone()),
                        (true, _) | (_, Record::Merged(_)) => None,
                        (_, Record::Before(turns)) => {
                            let mut out = turns.join(",");
                            out.push(',');
                            out.push_str(&text[span.clone()]);
                            Some(out)
                        }
                    }
                })
                .flatten();
            before.add(value);
            let Some(turns) = put_back else {
                continue;
            };
            out.push_str(&text[copied..span.start]);
            out.push_str(&turns);
            copied = span.end;
        }
        if copied == 0 {
            return None;
        }
        out.push_str(&text[copied..]);
        Some(out.into_bytes())
    }
}

/// The text of a request body of `api` and the spans of its list of messages (`messages`) or
/// items (`input`), or `None` when it has none.
fn list_of(api: Api, body: &[u8]) -> Option<(&str, Vec<std::ops::Range<usize>>)> {
    let text = std::str::from_utf8(body).ok()?;
    let root = parrot_json::value_span(text).ok()?;
    let members = parrot_json::members(text, root.start).ok()?;
    let list = api.rules().conversation();
    let messages = members.iter().find(|m| m.name.is(list))?.value.clone();
    if text.as_bytes().get(messages.start) != Some(&b'[') {
        return None;
    }
    let elements = parrot_json::elements(text, messages.start).ok()?;
    Some((text, elements))
}

/// Where a record is kept: `{namespace}/__record__:merge:<hex>`, the hex digits those of the
/// SHA-256 of the conversation's fingerprint and the answer's.
fn record_key(namespace: Option<&Namespace>, before: &Print, answer: &Print) -> String {
    let mut hasher = Sha256::new();
    hasher.update(before);
    hasher.update(answer);
    let hex = hasher
        .finalize()
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            use std::fmt::Write as _;
            let _ = write!(hex, "{byte:02x}");
            hex
        });
    let key = format!("{RECORD_KEY_PREFIX}merge:{hex}");
    match namespace {
        Some(namespace) => namespace.scoped_key(&key),
        None => key,
    }
}

/// Whether an element of a request's list is one a model wrote, which can be an answer the
/// client received.
fn is_answer(api: Api, value: &Value) -> bool {
    api.rules().is_answer(value)
}

/// The fingerprint of an answer as the client sends it back: an Anthropic message's blocks, a
/// Chat Completions message, a Responses item (what the model wrote in it, [`LlmApi::written`]).
///
/// [`LlmApi::written`]: crate::api::LlmApi::written
pub(crate) fn answer_print(api: Api, value: &Value) -> Option<Print> {
    api.rules().written(value).map(|written| hashed(&written))
}

/// The turns that replace the merged message at `span`, when it has the recorded number of
/// blocks.
fn expanded(merged: &Merged, text: &str, span: std::ops::Range<usize>) -> Option<String> {
    let members = parrot_json::members(text, span.start).ok()?;
    let content = members.iter().find(|m| m.name.is("content"))?.value.clone();
    let blocks = parrot_json::elements(text, content.start).ok()?;
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

/// The fingerprint of a conversation's messages, taken one message at a time: each message's
/// canonical form ([`LlmApi::canonical`](crate::api::LlmApi::canonical)), its length first.
#[derive(Clone)]
struct Before {
    api: Api,
    hasher: Sha256,
}

impl Before {
    fn new(api: Api) -> Before {
        let mut hasher = Sha256::new();
        hasher.update(BEFORE_TAG);
        Before { api, hasher }
    }

    fn add(&mut self, message: &Value) {
        let text = self.api.rules().canonical(message).to_string();
        self.hasher.update((text.len() as u64).to_le_bytes());
        self.hasher.update(text.as_bytes());
    }

    fn print(&self) -> Print {
        digest(self.hasher.clone())
    }
}

fn digest(hasher: Sha256) -> Print {
    let mut print = [0; 32];
    print.copy_from_slice(&hasher.finalize());
    print
}

fn hashed(written: &Value) -> Print {
    let mut hasher = Sha256::new();
    hasher.update(ANSWER_TAG);
    hasher.update(written.to_string().as_bytes());
    digest(hasher)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> String {
        json!({"type": "tool_use", "id": id, "name": crate::RECOVERY_TOOL, "input": {"key": "k1"}})
            .to_string()
    }

    /// The conversation of a request of `api` in `namespace` whose body is `body`.
    fn asked(namespace: Option<&Namespace>, api: Api, body: &str) -> Conversation {
        Conversation::new(namespace.cloned(), api, Bytes::from(body.to_owned()))
    }

    fn put_back(
        merges: &Merges,
        namespace: Option<&Namespace>,
        api: Api,
        body: &str,
    ) -> Option<String> {
        merges
            .reinsert(namespace, api, body.as_bytes(), body.as_bytes())
            .map(|out| String::from_utf8(out).unwrap())
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
        let hi = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
        merges.record(
            &asked(None, Api::AnthropicMessages, hi),
            &blocks,
            vec![Inserted {
                at: 1,
                calls: vec![call("toolu_1")],
                answers: answers("toolu_1"),
            }],
        );
        // The client adds a cache marker and its own spacing: still the same message.
        let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}, {"role": "assistant", "content": [{"type":"text","text":"Let me look."}, {"type":"text","text":"Row 17 is Ada.","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":"thanks"}]}"#;
        let out = put_back(&merges, None, Api::AnthropicMessages, body).unwrap();
        let expected = format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}}, {{"role":"assistant","content":[{{"type":"text","text":"Let me look."}},{}]}},{},{{"role": "assistant", "content": [{{"type":"text","text":"Row 17 is Ada.","cache_control":{{"type":"ephemeral"}}}}]}},{{"role":"user","content":"thanks"}}]}}"#,
            call("toolu_1"),
            answers("toolu_1")
        );
        assert_eq!(out, expected);
        assert_eq!(
            put_back(&merges, None, Api::AnthropicMessages, body).unwrap(),
            out,
            "the same bytes every time"
        );
        // The first message as a block with a cache marker: still the same conversation.
        let marked = body.replace(
            r#"{"role":"user","content":"hi"}"#,
            r#"{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}"#,
        );
        assert!(put_back(&merges, None, Api::AnthropicMessages, &marked).is_some());
    }

    /// A client with another API key that sends the same message got the answers recorded for
    /// the first key put back in its request (originals included): records are scoped.
    #[test]
    fn a_record_goes_back_only_into_requests_of_its_namespace() {
        let merges = Merges::default();
        let alice = Namespace::of_secret(b"alice");
        let bob = Namespace::of_secret(b"bob");
        let blocks = [json!({"type": "text", "text": "Row 17 is Ada."})];
        let empty = r#"{"messages":[]}"#;
        merges.record(
            &asked(Some(&alice), Api::AnthropicMessages, empty),
            &blocks,
            vec![Inserted {
                at: 0,
                calls: vec![call("toolu_1")],
                answers: answers("toolu_1"),
            }],
        );
        let body = r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"Row 17 is Ada."}]}]}"#;
        let api = Api::AnthropicMessages;
        assert!(
            put_back(&merges, Some(&alice), api, body)
                .unwrap()
                .contains("the original")
        );
        assert_eq!(put_back(&merges, Some(&bob), api, body), None);
        assert_eq!(put_back(&merges, None, api, body), None);

        let answer = json!({"choices": [{"message": {"role": "assistant", "content": "Ada."}}]});
        let conversation = asked(Some(&alice), Api::OpenAiChat, empty);
        merges.record_before(&conversation, Api::OpenAiChat, &answer, vec![answers("c1")]);
        let body = r#"{"messages":[{"role":"assistant","content":"Ada."}]}"#;
        assert!(put_back(&merges, Some(&alice), Api::OpenAiChat, body).is_some());
        assert_eq!(put_back(&merges, Some(&bob), Api::OpenAiChat, body), None);
    }

    /// The review's finding: a record was found by its answer's text alone, so a conversation
    /// of the same API key that held an answer of the same text (`Done.`) got another
    /// conversation's recovery, its original included. A record goes back only after the
    /// messages of the request that was answered.
    #[test]
    fn a_record_goes_back_only_into_the_conversation_it_was_answered_in() {
        let merges = Merges::default();
        let key = Namespace::of_secret(b"one key for every user");
        let api = Api::AnthropicMessages;
        let x = r#"{"messages":[{"role":"user","content":"Read X's file."}]}"#;
        let done = [json!({"type": "text", "text": "Done."})];
        let turn = Inserted {
            at: 0,
            calls: vec![call("toolu_x")],
            answers: answers("toolu_x"),
        };
        merges.record(&asked(Some(&key), api, x), &done, vec![turn]);
        let later = |first: &str| {
            format!(
                r#"{{"messages":[{{"role":"user","content":"{first}"}},{{"role":"assistant","content":[{{"type":"text","text":"Done."}}]}},{{"role":"user","content":"And?"}}]}}"#
            )
        };
        assert!(
            put_back(&merges, Some(&key), api, &later("Read X's file."))
                .unwrap()
                .contains("the original"),
            "X's own next request"
        );
        assert_eq!(
            put_back(&merges, Some(&key), api, &later("Read Y's file.")),
            None,
            "Y's conversation, the same key and answer"
        );
        let no_first =
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"Done."}]}]}"#;
        assert_eq!(put_back(&merges, Some(&key), api, no_first), None);

        let chat = Api::OpenAiChat;
        let x = r#"{"messages":[{"role":"user","content":"Read X's file."}]}"#;
        let answer = json!({"choices": [{"message": {"role": "assistant", "content": "Done."}}]});
        merges.record_before(
            &asked(Some(&key), chat, x),
            chat,
            &answer,
            vec![answers("c1")],
        );
        let later = |first: &str| {
            format!(
                r#"{{"messages":[{{"role":"user","content":"{first}"}},{{"role":"assistant","content":"Done.","refusal":null}}]}}"#
            )
        };
        assert!(put_back(&merges, Some(&key), chat, &later("Read X's file.")).is_some());
        assert_eq!(
            put_back(&merges, Some(&key), chat, &later("Read Y's file.")),
            None
        );

        let responses = Api::OpenAiResponses;
        let x = r#"{"input":[{"role":"user","content":"Read X's file."}]}"#;
        let answer = json!({"output": [{"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Done."}]}]});
        merges.record_before(
            &asked(Some(&key), responses, x),
            responses,
            &answer,
            vec![answers("c2")],
        );
        let later = |first: &str| {
            format!(
                r#"{{"input":[{{"role":"user","content":"{first}"}},{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"Done."}}]}}]}}"#
            )
        };
        assert!(put_back(&merges, Some(&key), responses, &later("Read X's file.")).is_some());
        assert_eq!(
            put_back(&merges, Some(&key), responses, &later("Read Y's file.")),
            None
        );
    }

    /// A conversation's second recovery was answered in a request that held the first merged
    /// message as the client keeps it: both go back, the fingerprint taken before anything is
    /// put back.
    #[test]
    fn an_earlier_recovery_leaves_the_conversation_of_a_later_one_the_same() {
        let merges = Merges::default();
        let api = Api::AnthropicMessages;
        let first = r#"{"role":"user","content":"one"}"#;
        let merged_one = r#"{"role":"assistant","content":[{"type":"text","text":"A."}]}"#;
        let second = r#"{"role":"user","content":"two"}"#;
        let merged_two = r#"{"role":"assistant","content":[{"type":"text","text":"B."}]}"#;
        let turn = |id: &str| Inserted {
            at: 0,
            calls: vec![call(id)],
            answers: answers(id),
        };
        merges.record(
            &asked(None, api, &format!(r#"{{"messages":[{first}]}}"#)),
            &[json!({"type": "text", "text": "A."})],
            vec![turn("a")],
        );
        merges.record(
            &asked(
                None,
                api,
                &format!(r#"{{"messages":[{first},{merged_one},{second}]}}"#),
            ),
            &[json!({"type": "text", "text": "B."})],
            vec![turn("b")],
        );
        let body = format!(
            r#"{{"messages":[{first},{merged_one},{second},{merged_two},{{"role":"user","content":"three"}}]}}"#
        );
        let out: Value =
            serde_json::from_str(&put_back(&merges, None, api, &body).unwrap()).unwrap();
        let ids: Vec<&Value> = out["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m.pointer("/content/0/id"))
            .collect();
        assert_eq!(ids, ["a", "b"]);
    }

    /// A proxy that asked the store in vain for a conversation's latest answer (its record was
    /// still on its way from another proxy) finds the record when it arrives; an older answer
    /// with no record is not asked for again.
    #[test]
    fn only_a_settled_answer_with_no_record_is_not_asked_for_again() {
        let dir = tempfile::tempdir().unwrap();
        let host = Arc::new(
            Host::builder()
                .project(dir.path())
                .plugin_path(None)
                .tee_store(Arc::new(parrot_host::MemoryTeeStore::default()))
                .build()
                .unwrap(),
        );
        let api = Api::AnthropicMessages;
        let one = Merges::new(Some(Arc::clone(&host)));
        let other = Merges::new(Some(Arc::clone(&host)));
        let record = |merges: &Merges, asked_body: &str, text: &str| {
            let unsaved = merges
                .record(
                    &asked(None, api, asked_body),
                    &[json!({"type": "text", "text": text})],
                    vec![Inserted {
                        at: 0,
                        calls: vec![call(text)],
                        answers: answers(text),
                    }],
                )
                .unwrap();
            merges.save(unsaved);
        };
        let u1 = r#"{"role":"user","content":"one"}"#;
        let a = r#"{"role":"assistant","content":[{"type":"text","text":"A."}]}"#;
        let u2 = r#"{"role":"user","content":"two"}"#;
        let b = r#"{"role":"assistant","content":[{"type":"text","text":"B."}]}"#;
        let u3 = r#"{"role":"user","content":"three"}"#;
        let latest = format!(r#"{{"messages":[{u1},{a},{u2}]}}"#);
        assert_eq!(put_back(&one, None, api, &latest), None, "no record yet");
        record(&other, &format!(r#"{{"messages":[{u1}]}}"#), "A.");
        assert!(
            put_back(&one, None, api, &latest).is_some(),
            "found when it came"
        );

        // B. has no record, and is settled once another answer follows it.
        let settled = format!(r#"{{"messages":[{u1},{a},{u2},{b},{u3},{a},{u3}]}}"#);
        put_back(&one, None, api, &settled);
        record(&other, &format!(r#"{{"messages":[{u1},{a},{u2}]}}"#), "B.");
        let out = put_back(&one, None, api, &settled).unwrap();
        assert!(
            !out.contains(r#""id":"B.""#),
            "B. not asked for again: {out}"
        );
        assert!(
            put_back(&other, None, api, &settled)
                .unwrap()
                .contains(r#""id":"B.""#)
        );
    }

    /// Records are kept in the host's tee store: a proxy that did not answer the calls (another
    /// replica) puts them back, and a model cannot read one as an original.
    #[test]
    fn a_record_in_the_store_is_found_by_another_proxy_and_is_no_original() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(parrot_host::MemoryTeeStore::default());
        let host = Arc::new(
            Host::builder()
                .project(dir.path())
                .plugin_path(None)
                .tee_store(store.clone())
                .build()
                .unwrap(),
        );
        let key = Namespace::of_secret(b"sk");
        let api = Api::AnthropicMessages;
        let asked_body = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
        let one = Merges::new(Some(Arc::clone(&host)));
        let conversation = asked(Some(&key), api, asked_body);
        let unsaved = one
            .record(
                &conversation,
                &[json!({"type": "text", "text": "Done."})],
                vec![Inserted {
                    at: 0,
                    calls: vec![call("toolu_1")],
                    answers: answers("toolu_1"),
                }],
            )
            .unwrap();
        let stored = unsaved.key.clone();
        one.save(unsaved);
        assert!(
            stored.starts_with(&format!("{key}/__record__:merge:")),
            "{stored}"
        );

        let other = Merges::new(Some(Arc::clone(&host)));
        let later = r#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"Done."}]},{"role":"user","content":"ok"}]}"#;
        assert_eq!(
            put_back(&other, Some(&key), api, later),
            put_back(&one, Some(&key), api, later)
        );
        assert!(put_back(&other, Some(&key), api, later).is_some());

        let named = stored.split_once('/').unwrap().1;
        assert_eq!(host.recover_in(Some(&key), named).unwrap(), None);
        assert!(
            parrot_host::TeeStore::get(&*store, &stored)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn two_answered_turns_go_back_in_order_and_a_call_first_leaves_no_text_before_it() {
        let merges = Merges::default();
        let blocks = [json!({"type": "text", "text": "Done."})];
        merges.record(
            &asked(None, Api::AnthropicMessages, r#"{"messages":[]}"#),
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
            serde_json::from_str(&put_back(&merges, None, Api::AnthropicMessages, body).unwrap())
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
            put_back(&merges, None, Api::AnthropicMessages, r#"{"messages":[]}"#),
            None,
            "nothing recorded"
        );
        merges.record(
            &asked(None, Api::AnthropicMessages, r#"{"messages":[]}"#),
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
                put_back(&merges, None, Api::AnthropicMessages, body),
                None,
                "{body}"
            );
        }
    }

    #[test]
    fn the_oldest_records_go_beyond_the_bound() {
        let merges = Merges::default();
        let api = Api::AnthropicMessages;
        let conversation = asked(None, api, r#"{"messages":[]}"#);
        for n in 0..=KEPT {
            merges.record(
                &conversation,
                &[json!({"type": "text", "text": n.to_string()})],
                vec![Inserted {
                    at: 0,
                    calls: vec![call("x")],
                    answers: answers("x"),
                }],
            );
        }
        let before = conversation.before().unwrap();
        let print = |text: String| {
            answer_print(api, &json!({"content": [{"type": "text", "text": text}]})).unwrap()
        };
        let first = print("0".to_owned());
        assert_eq!(merges.kept().order.len(), KEPT);
        let last = print(KEPT.to_string());
        let mut reachable = true;
        assert!(
            merges
                .find(&record_key(None, &before, &first), true, &mut reachable)
                .is_none()
        );
        assert!(
            merges
                .find(&record_key(None, &before, &last), true, &mut reachable)
                .is_some()
        );
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
        let hi = asked(
            None,
            Api::OpenAiChat,
            r#"{"messages":[{"role":"user","content":"hi"}]}"#,
        );
        merges.record_before(&hi, Api::OpenAiChat, &answer, chat_turns.clone());
        // The client sends the message back with an empty refusal and its own spacing.
        let body = r#"{"messages":[{"role":"user","content":"hi"},{"role": "assistant", "content": "Row 3.", "refusal": null},{"role":"user","content":"ok"}]}"#;
        let out = put_back(&merges, None, Api::OpenAiChat, body).unwrap();
        assert_eq!(
            out,
            format!(
                r#"{{"messages":[{{"role":"user","content":"hi"}},{},{},{{"role": "assistant", "content": "Row 3.", "refusal": null}},{{"role":"user","content":"ok"}}]}}"#,
                chat_turns[0], chat_turns[1]
            )
        );
        assert_eq!(
            put_back(
                &merges,
                None,
                Api::OpenAiChat,
                r#"{"messages":[{"role":"user","content":"hi"},{"role":"user","content":"Row 3."}]}"#
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
        let q = asked(
            None,
            Api::OpenAiResponses,
            r#"{"input":[{"role":"user","content":"q"}]}"#,
        );
        merges.record_before(&q, Api::OpenAiResponses, &answer, responses_turns.clone());
        let body = r#"{"input":[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Found."}]}]}"#;
        let out: Value =
            serde_json::from_str(&put_back(&merges, None, Api::OpenAiResponses, body).unwrap())
                .unwrap();
        assert_eq!(out["input"][1]["call_id"], "c2");
        assert_eq!(out["input"][2]["type"], "function_call_output");
        assert_eq!(out["input"][3]["content"][0]["text"], "Found.");
    }
}
