//! Streamed answers to a request the recovery tool was added to: the server-sent events are
//! held only until the first content block (Anthropic), the first delta with content or a tool
//! call (Chat Completions), or the first output item (Responses) shows whether the model calls
//! [`RECOVERY_TOOL`]. Thinking and reasoning blocks before it are held too (they come first,
//! and say nothing about the call). If the model does not call it, the held events go to the
//! client at once and the rest as it arrives. If it does, the whole stream is read, the model's
//! turn rebuilt from its events, and the calls answered as for an answer that is not streamed.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::llm::Api;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming};
use serde_json::Value;

use crate::RECOVERY_TOOL;
pub(crate) use crate::api::{Decision, Rebuild};

/// The error of a body that streams: the upstream's, or the relay's own when it stops one.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Splits a stream of bytes into server-sent events.
#[derive(Debug, Default)]
pub(crate) struct Events {
    line: Vec<u8>,
    raw: Vec<u8>,
    data: Option<String>,
}

/// One server-sent event: its bytes as they came (the blank line that ends it included), and
/// its `data` (`None`: an event without data, as a comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) raw: Vec<u8>,
    pub(crate) data: Option<String>,
}

impl Events {
    /// Each event that `bytes` completes.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<Event> {
        let mut done = Vec::new();
        for &byte in bytes {
            self.raw.push(byte);
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let line = String::from_utf8_lossy(&line);
            let line = line.strip_suffix('\r').unwrap_or(&line);
            if line.is_empty() {
                done.push(Event {
                    raw: std::mem::take(&mut self.raw),
                    data: self.data.take(),
                });
            } else if let Some(value) = line.strip_prefix("data:") {
                let value = value.strip_prefix(' ').unwrap_or(value);
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_owned()),
                }
            }
        }
        done
    }

    /// The bytes of an event the stream did not finish.
    pub(crate) fn rest(&mut self) -> Vec<u8> {
        self.line.clear();
        self.data = None;
        std::mem::take(&mut self.raw)
    }
}

/// What one event says (its data parsed; `None`: not JSON, as Chat's `[DONE]`).
pub(crate) fn decide(api: Api, event: Option<&Value>) -> Decision {
    match event {
        Some(event) => api.rules().decide(event),
        None => Decision::Theirs,
    }
}

/// The model's turn, rebuilt from a stream's events, in the shape of the API's answer that is
/// not streamed (what [`crate::recovery::calls`] and [`crate::recovery::follow_up`] read).
#[derive(Debug)]
pub(crate) struct Turn(Box<dyn Rebuild>);

impl Turn {
    pub(crate) fn new(api: Api) -> Turn {
        Turn(api.rules().rebuild())
    }

    pub(crate) fn feed(&mut self, event: &Value) {
        self.0.feed(event);
    }

    /// Feeds the data of `events` that is JSON.
    pub(crate) fn feed_all(&mut self, events: Vec<Event>) {
        for event in events {
            if let Some(data) = event.data.and_then(|d| serde_json::from_str(&d).ok()) {
                self.feed(&data);
            }
        }
    }

    /// The turn as the API's answer.
    pub(crate) fn finish(&self) -> Value {
        self.0.finish()
    }
}

/// One Anthropic message streamed to the client over the proxy's recovery rounds (see
/// [`crate::merge`]): each round's events pass through as they arrive, their blocks numbered
/// after the blocks of earlier rounds, until a block calls [`RECOVERY_TOOL`]; from that block
/// on, the round's events are held until its end shows whether the proxy answers the calls
/// ([`Merger::end`] says [`End::Answer`]) or the client gets them: then the held events go out
/// without the recovery tool's blocks (an answer that also calls the client's tools).
#[derive(Debug)]
pub(crate) struct Merger {
    /// The API (one whose answers are merged: its events are Messages').
    api: Api,
    /// The blocks the client got, rebuilt from the events it got.
    shown: Turn,
    /// How many blocks the client got before this round.
    offset: usize,
    /// This round's blocks: the client's index of each (`None`: not sent, a recovery call).
    map: Vec<Option<usize>>,
    first_round: bool,
    last_round: bool,
    /// The index of this round's first call of [`RECOVERY_TOOL`], once seen.
    holding: Option<usize>,
    held: Vec<Value>,
    /// This round's turn as the model wrote it.
    upstream: Turn,
}

/// How a round of a [`Merger`] ended.
#[derive(Debug)]
pub(crate) enum End {
    /// The round is over; these events go to the client last (nothing when none was held).
    Done(Vec<Bytes>),
    /// The round's turn calls only [`RECOVERY_TOOL`]: the proxy answers it. `at` is the index
    /// of its first call.
    Answer { turn: Value, at: usize },
}

impl Merger {
    /// A merger for the first round; with `last_round`, calls of [`RECOVERY_TOOL`] go to the
    /// client like any other.
    pub(crate) fn new(api: Api, last_round: bool) -> Merger {
        Merger {
            api,
            shown: Turn::new(api),
            offset: 0,
            map: Vec::new(),
            first_round: true,
            last_round,
            holding: None,
            held: Vec::new(),
            upstream: Turn::new(api),
        }
    }

    /// What to send the client for one event (`raw` as it came, `data` parsed): the event as
    /// it is, renumbered, or nothing (held, or a later round's `message_start`).
    pub(crate) fn event(&mut self, raw: &[u8], data: Option<Value>) -> Vec<Bytes> {
        let Some(data) = data else {
            return vec![Bytes::copy_from_slice(raw)];
        };
        self.upstream.feed(&data);
        let kind = data.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "message_start" if !self.first_round => Vec::new(),
            "ping" => vec![Bytes::copy_from_slice(raw)],
            // A failed stream: what was held was the proxy's own call.
            "error" => {
                self.holding = None;
                self.held.clear();
                vec![Bytes::copy_from_slice(raw)]
            }
            _ if self.holding.is_some() => {
                self.held.push(data);
                Vec::new()
            }
            "content_block_start" => {
                let index = index_of(&data);
                let block = &data["content_block"];
                let ours = block.get("type").and_then(Value::as_str) == Some("tool_use")
                    && block.get("name").and_then(Value::as_str) == Some(RECOVERY_TOOL);
                if ours && !self.last_round {
                    self.holding = index;
                    self.held.push(data);
                    return Vec::new();
                }
                self.send(raw, data).into_iter().collect()
            }
            _ => self.send(raw, data).into_iter().collect(),
        }
    }

    /// The event for the client: its block numbered after the blocks the client has.
    fn send(&mut self, raw: &[u8], mut data: Value) -> Option<Bytes> {
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(index) = index_of(&data) else {
            self.shown.feed(&data);
            return Some(Bytes::copy_from_slice(raw));
        };
        if kind == "content_block_start" {
            if self.map.len() <= index {
                self.map.resize(index + 1, None);
            }
            let next = self.offset + self.map.iter().flatten().count();
            self.map[index] = Some(next);
        }
        let client = (*self.map.get(index)?)?;
        if client == index {
            self.shown.feed(&data);
            return Some(Bytes::copy_from_slice(raw));
        }
        data["index"] = Value::from(client);
        self.shown.feed(&data);
        Some(Bytes::from(format!("event: {kind}\ndata: {data}\n\n")))
    }

    /// The end of a round's stream.
    pub(crate) fn end(&mut self) -> End {
        let Some(at) = self.holding else {
            return End::Done(Vec::new());
        };
        let turn = self.upstream.finish();
        match crate::recovery::calls(self.api, &turn) {
            crate::recovery::Calls::Ours(_) => End::Answer { turn, at },
            _ => End::Done(self.release()),
        }
    }

    /// The held events without the blocks that call [`RECOVERY_TOOL`].
    fn release(&mut self) -> Vec<Bytes> {
        let held = std::mem::take(&mut self.held);
        self.holding = None;
        let mut ours = Vec::new();
        let mut out = Vec::new();
        for data in held {
            let index = index_of(&data);
            if data.get("type").and_then(Value::as_str) == Some("content_block_start")
                && data["content_block"].get("name").and_then(Value::as_str) == Some(RECOVERY_TOOL)
            {
                ours.extend(index);
            }
            if index.is_some_and(|index| ours.contains(&index)) {
                continue;
            }
            let raw = format!(
                "event: {}\ndata: {data}\n\n",
                data.get("type").and_then(Value::as_str).unwrap_or_default()
            );
            out.extend(self.send(raw.as_bytes(), data));
        }
        out
    }

    /// Starts the next round (the follow-up's stream).
    pub(crate) fn next_round(&mut self, last_round: bool) {
        self.offset += self.map.iter().flatten().count();
        self.map.clear();
        self.first_round = false;
        self.last_round = last_round;
        self.holding = None;
        self.held.clear();
        self.upstream = Turn::new(self.api);
    }

    /// The blocks the client got, as it will send them back.
    pub(crate) fn shown(&self) -> Vec<Value> {
        match self.shown.finish().get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            _ => Vec::new(),
        }
    }

    /// How many blocks the client got.
    pub(crate) fn shown_count(&self) -> usize {
        self.offset + self.map.iter().flatten().count()
    }
}

fn index_of(event: &Value) -> Option<usize> {
    event
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
}

/// The turn a whole stream of `api`'s events holds, in the shape of the answer that is not
/// streamed.
pub(crate) fn rebuilt(api: Api, bytes: &[u8]) -> Value {
    let mut turn = Turn::new(api);
    turn.feed_all(Events::default().push(bytes));
    turn.finish()
}

/// A streamed body relayed as it comes, its events read on the way: at its end, `done` gets the
/// turn they hold (not when the stream breaks off).
pub(crate) struct Tapped {
    body: Prefixed,
    events: Events,
    turn: Turn,
    done: Option<Box<dyn FnOnce(Value) + Send>>,
}

impl Tapped {
    pub(crate) fn new(
        api: Api,
        body: Prefixed,
        done: impl FnOnce(Value) + Send + 'static,
    ) -> Tapped {
        Tapped {
            body,
            events: Events::default(),
            turn: Turn::new(api),
            done: Some(Box::new(done)),
        }
    }
}

impl Body for Tapped {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        let this = &mut *self;
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.turn.feed_all(this.events.push(data));
                }
            }
            Poll::Ready(None) => {
                if let Some(done) = this.done.take() {
                    done(this.turn.finish());
                }
            }
            _ => {}
        }
        polled
    }
}

/// A response body: bytes already read, then the rest of the upstream's body as it arrives, or
/// the error that dropped it.
pub(crate) struct Prefixed {
    pub(crate) prefix: Option<Bytes>,
    pub(crate) rest: Option<Incoming>,
    pub(crate) dropped: Option<BoxError>,
}

impl Body for Prefixed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(prefix) = self.prefix.take()
            && !prefix.is_empty()
        {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        match self.rest.as_mut() {
            None => Poll::Ready(self.dropped.take().map(Err)),
            Some(rest) => Pin::new(rest)
                .poll_frame(cx)
                .map(|frame| frame.map(|frame| frame.map_err(BoxError::from))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_are_split_across_chunks_and_lines() {
        let mut events = Events::default();
        let data = |events: Vec<Event>| -> Vec<Option<String>> {
            events.into_iter().map(|event| event.data).collect()
        };
        assert!(events.push(b"event: a\ndata: {\"x\"").is_empty());
        let done = events.push(b": 1}\r\n\r\ndata: [DONE]\n\n");
        assert_eq!(done[0].raw, b"event: a\ndata: {\"x\": 1}\r\n\r\n");
        assert_eq!(
            data(done),
            [Some("{\"x\": 1}".to_owned()), Some("[DONE]".to_owned())]
        );
        assert_eq!(
            data(events.push(b"data: one\ndata: two\n\n: comment\n\n")),
            [Some("one\ntwo".to_owned()), None]
        );
        assert!(events.push(b"data: cut").is_empty());
        assert_eq!(events.rest(), b"data: cut");
    }

    /// Feeds `events` to `merger`; returns what the client got, parsed.
    fn merged(merger: &mut Merger, events: &[Value]) -> Vec<Value> {
        let mut out = Vec::new();
        for event in events {
            let raw = format!("event: x\ndata: {event}\n\n");
            for bytes in merger.event(raw.as_bytes(), Some(event.clone())) {
                out.push(bytes);
            }
        }
        if let End::Done(last) = merger.end() {
            out.extend(last);
        }
        out.iter()
            .map(|bytes| {
                let text = std::str::from_utf8(bytes).unwrap();
                let data = text.split_once("data: ").unwrap().1.trim_end();
                serde_json::from_str(data).unwrap()
            })
            .collect()
    }

    fn block(index: usize, block: Value) -> [Value; 2] {
        [
            json!({"type": "content_block_start", "index": index, "content_block": block}),
            json!({"type": "content_block_stop", "index": index}),
        ]
    }

    fn kinds_and_indexes(events: &[Value]) -> Vec<(String, Option<u64>)> {
        events
            .iter()
            .map(|e| (e["type"].as_str().unwrap().to_owned(), e["index"].as_u64()))
            .collect()
    }

    #[test]
    fn a_mixed_stream_reaches_the_client_without_the_recovery_call_renumbered() {
        let mut merger = Merger::new(Api::AnthropicMessages, false);
        let mut events = vec![json!({"type": "message_start", "message": {"id": "m"}})];
        events.extend(block(0, json!({"type": "text", "text": "Two calls."})));
        events.extend(block(
            1,
            json!({"type": "tool_use", "id": "a", "name": RECOVERY_TOOL, "input": {}}),
        ));
        events.extend(block(
            2,
            json!({"type": "tool_use", "id": "b", "name": "Bash", "input": {}}),
        ));
        events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}));
        events.push(json!({"type": "message_stop"}));
        let got = merged(&mut merger, &events);
        let start = |i| ("content_block_start".to_owned(), Some(i));
        let stop = |i| ("content_block_stop".to_owned(), Some(i));
        assert_eq!(
            kinds_and_indexes(&got),
            [
                ("message_start".to_owned(), None),
                start(0),
                stop(0),
                start(1),
                stop(1),
                ("message_delta".to_owned(), None),
                ("message_stop".to_owned(), None),
            ]
        );
        assert_eq!(got[3]["content_block"]["name"], "Bash");
        assert_eq!(merger.shown().len(), 2);
    }

    #[test]
    fn a_call_after_text_is_answered_and_the_follow_up_continues_the_message() {
        let mut merger = Merger::new(Api::AnthropicMessages, false);
        let mut first = vec![json!({"type": "message_start", "message": {"id": "m1"}})];
        first.extend(block(0, json!({"type": "text", "text": "Looking."})));
        first.extend(block(
            1,
            json!({"type": "tool_use", "id": "a", "name": RECOVERY_TOOL, "input": {}}),
        ));
        first.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}));
        first.push(json!({"type": "message_stop"}));
        let mut out = Vec::new();
        for event in &first {
            out.extend(merger.event(b"", Some(event.clone())));
        }
        assert_eq!(
            out.len(),
            3,
            "the start and the text block, nothing of the call"
        );
        let End::Answer { turn, at } = merger.end() else {
            panic!("the proxy answers a call of its own tool alone");
        };
        assert_eq!(at, 1);
        assert_eq!(turn["content"][1]["id"], "a");
        assert_eq!(merger.shown_count(), 1);

        merger.next_round(false);
        let mut second = vec![json!({"type": "message_start", "message": {"id": "m2"}})];
        second.extend(block(0, json!({"type": "text", "text": "Found."})));
        second.push(json!({"type": "message_stop"}));
        let got = merged(&mut merger, &second);
        assert_eq!(
            kinds_and_indexes(&got),
            [
                ("content_block_start".to_owned(), Some(1)),
                ("content_block_stop".to_owned(), Some(1)),
                ("message_stop".to_owned(), None),
            ],
            "no second message_start; the block numbered after the text"
        );
        assert_eq!(
            merger.shown(),
            [
                json!({"type": "text", "text": "Looking."}),
                json!({"type": "text", "text": "Found."})
            ]
        );
    }

    #[test]
    fn on_the_last_round_a_recovery_call_goes_to_the_client() {
        let mut merger = Merger::new(Api::AnthropicMessages, true);
        let events = block(
            0,
            json!({"type": "tool_use", "id": "a", "name": RECOVERY_TOOL, "input": {}}),
        );
        assert_eq!(merged(&mut merger, &events).len(), 2);
    }
}
