//! Recoveries put back by conversation: a record of the proxy's recovery turns goes back only
//! into the conversation it was answered in (one API key shared by many users, the same final
//! answer text in two conversations), and every proxy sharing one tee store (replicas on one
//! Redis) puts back what another answered.

use serde_json::{Value, json};

use super::{
    Canned, Proxy, Upstream, anthropic_conversation, anthropic_message, assert_shares_messages,
    chat_completion, chat_conversation, corpus, processed, raw_request_with, reference_host,
    response, responses_conversation, tail_after_messages,
};
use crate::redis_server::RedisServer;
use parrot_serve::llm::Api;

/// The API key every user of a server shares.
const SHARED_KEY: &str = "x-api-key: sk-shared-by-every-user";

/// Sends `body` to `path` of `proxy` with the shared key; the answer, which must be a 200.
fn send(proxy: &Proxy, path: &str, body: &Value) -> Value {
    let (status, answer) = raw_request_with(
        &proxy.url,
        proxy.url.strip_prefix("http://").unwrap(),
        &[SHARED_KEY, "anthropic-version: 2023-06-01"],
        "POST",
        path,
        body.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{answer}");
    serde_json::from_str(&answer).expect("a JSON answer")
}

/// `body` as the upstream got it, with the recovery tool the proxy offers taken out.
fn as_offered(body: &[u8], api: Api) -> String {
    let definition = parrot_serve::recovery::definition(api);
    let text = String::from_utf8(body.to_vec()).unwrap();
    for offered in [
        format!(",\"tools\":[{definition}]"),
        format!(",{definition}"),
    ] {
        if text.contains(&offered) {
            return text.replacen(&offered, "", 1);
        }
    }
    text
}

/// The proxy's turns in a follow-up: its bytes from `start` (the model's call, as the
/// follow-up carried it) to the end of its last message.
fn proxys_turns(follow_up: &[u8], start: &str) -> String {
    let text = String::from_utf8(follow_up.to_vec()).unwrap();
    let from = text.find(start).expect("the model's call in the follow-up");
    text[from..text.len() - tail_after_messages(follow_up)].to_owned()
}

/// What one API's scenario needs: X's conversation and the answers the model gives.
struct Scenario {
    api: Api,
    path: &'static str,
    /// X's first request: a query result the model then asks for again.
    x: Value,
    /// The model's answer calling the recovery tool with `key`.
    call: fn(&str) -> Canned,
    /// The model's final answer to X, `Done.`.
    done: Canned,
    /// Another answer.
    said: fn(&str) -> Canned,
    /// Where the model's call starts in the follow-up.
    call_starts: &'static str,
    /// The list of `body` (`messages`, `input`), and the answer the client got in its form.
    list: &'static str,
    got: fn(&Value) -> Value,
    /// Y's request: another user's conversation (the same key) that ended with `Done.` too.
    y: fn(&Value) -> Value,
    /// A user's message.
    user: fn(&str) -> Value,
}

/// The review's scenario (issue 47, item 1): X's request is answered after the proxy recovered
/// part of X's original; Y, another user of the same API key, sends a conversation that ended
/// with the same answer text. Y's request reaches the upstream as Y sent it (with the recovery
/// tool offered), none of X's turns in it; X's own next request gets them back byte for byte,
/// its prefix that of the follow-up the model last saw.
fn one_conversations_recovery_stays_in_it(scenario: &Scenario) {
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let upstream = Upstream::start(vec![
        (scenario.call)(&key),
        scenario.done.clone(),
        (scenario.said)("Y's answer."),
        (scenario.said)("X's answer."),
    ]);
    let proxy = Proxy::start(&upstream.url(), false);
    let answer = send(&proxy, scenario.path, &scenario.x);
    let recorded = upstream.recorded();
    assert_eq!(recorded.len(), 2, "X's request and the proxy's follow-up");
    let follow_up = &recorded[1];
    let turns = proxys_turns(&follow_up.body, scenario.call_starts);
    assert!(turns.contains("S0017"), "the recovered rows: {turns}");

    let y = (scenario.y)(&(scenario.got)(&answer));
    let y_sent = y.to_string();
    send(&proxy, scenario.path, &y);
    let got = upstream.recorded()[2].body.clone();
    assert!(
        !String::from_utf8_lossy(&got).contains("S0017"),
        "Y sent {} bytes; the upstream got {} bytes, with X's recovered rows",
        y_sent.len(),
        got.len()
    );
    assert_eq!(
        as_offered(&got, scenario.api),
        y_sent,
        "Y's request as Y sent it"
    );

    let mut next = scenario.x.clone();
    next[scenario.list]
        .as_array_mut()
        .unwrap()
        .extend([(scenario.got)(&answer), (scenario.user)("Thanks.")]);
    send(&proxy, scenario.path, &next);
    let later = upstream.recorded()[3].body.clone();
    assert!(
        String::from_utf8_lossy(&later).contains(&turns),
        "X's turns are back, byte for byte"
    );
    assert_shares_messages(&follow_up.body, &later, "X's next request");
}

fn anthropic() -> Scenario {
    Scenario {
        api: Api::AnthropicMessages,
        path: "/v1/messages",
        x: anthropic_conversation(&corpus("query-500x12.json"), "ok"),
        call: |key| {
            Canned::Json(
                200,
                anthropic_message(
                    json!([{"type": "tool_use", "id": "toolu_x", "name": "wm_get_result",
                            "input": {"key": key, "pointer": "/rows/17"}}]),
                    "tool_use",
                ),
            )
        },
        done: Canned::Json(
            200,
            anthropic_message(json!([{"type": "text", "text": "Done."}]), "end_turn"),
        ),
        said: |text| {
            Canned::Json(
                200,
                anthropic_message(json!([{"type": "text", "text": text}]), "end_turn"),
            )
        },
        call_starts: "{\"type\":\"tool_use\",\"id\":\"toolu_x\"",
        list: "messages",
        got: |answer| json!({"role": "assistant", "content": answer["content"]}),
        y: |got| {
            json!({
                "model": "claude-test",
                "max_tokens": 1024,
                "tools": [{"name": "sql", "description": "Runs SQL.",
                           "input_schema": {"type": "object"}}],
                "messages": [
                    {"role": "user", "content": "Tidy my notes."},
                    got,
                    {"role": "user", "content": "What did you read?"}
                ]
            })
        },
        user: |text| json!({"role": "user", "content": text}),
    }
}

#[test]
fn an_anthropic_recovery_goes_back_only_into_its_own_conversation_of_a_shared_key() {
    one_conversations_recovery_stays_in_it(&anthropic());
}

#[test]
fn a_chat_recovery_goes_back_only_into_its_own_conversation_of_a_shared_key() {
    one_conversations_recovery_stays_in_it(&Scenario {
        api: Api::OpenAiChat,
        path: "/v1/chat/completions",
        x: chat_conversation(&corpus("query-500x12.json")),
        call: |key| {
            let arguments = json!({"key": key, "rows": "17"}).to_string();
            Canned::Json(
                200,
                chat_completion(
                    json!({"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_x", "type": "function",
                         "function": {"name": "wm_get_result", "arguments": arguments}}
                    ]}),
                    "tool_calls",
                ),
            )
        },
        done: Canned::Json(
            200,
            chat_completion(json!({"role": "assistant", "content": "Done."}), "stop"),
        ),
        said: |text| {
            Canned::Json(
                200,
                chat_completion(json!({"role": "assistant", "content": text}), "stop"),
            )
        },
        call_starts: "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_x\"",
        list: "messages",
        got: |answer| answer["choices"][0]["message"].clone(),
        y: |got| {
            json!({
                "model": "gpt-test",
                "messages": [
                    {"role": "user", "content": "Tidy my notes."},
                    got,
                    {"role": "user", "content": "What did you read?"}
                ],
                "tools": [{"type": "function",
                           "function": {"name": "sql", "parameters": {"type": "object"}}}]
            })
        },
        user: |text| json!({"role": "user", "content": text}),
    });
}

#[test]
fn a_responses_recovery_goes_back_only_into_its_own_conversation_of_a_shared_key() {
    one_conversations_recovery_stays_in_it(&Scenario {
        api: Api::OpenAiResponses,
        path: "/v1/responses",
        x: responses_conversation(&corpus("query-500x12.json")),
        call: |key| {
            let arguments = json!({"key": key, "pointer": "/rows/17"}).to_string();
            Canned::Json(
                200,
                response(
                    json!([{"type": "function_call", "id": "fc_x", "call_id": "call_x",
                    "name": "wm_get_result", "arguments": arguments, "status": "completed"}]),
                ),
            )
        },
        done: Canned::Json(
            200,
            response(
                json!([{"type": "message", "id": "msg_x", "status": "completed",
                "role": "assistant", "content": [{"type": "output_text", "text": "Done.",
                "annotations": []}]}]),
            ),
        ),
        said: |text| {
            Canned::Json(
                200,
                response(
                    json!([{"type": "message", "id": "msg_s", "status": "completed",
                    "role": "assistant", "content": [{"type": "output_text", "text": text,
                    "annotations": []}]}]),
                ),
            )
        },
        call_starts: "{\"type\":\"function_call\",\"id\":\"fc_x\"",
        list: "input",
        got: |answer| answer["output"][0].clone(),
        y: |got| {
            json!({
                "model": "gpt-test",
                "input": [
                    {"role": "user", "content": "Tidy my notes."},
                    got,
                    {"role": "user", "content": "What did you read?"}
                ],
                "tools": [{"type": "function", "name": "sql", "parameters": {"type": "object"}}]
            })
        },
        user: |text| json!({"role": "user", "content": text}),
    });
}

/// Issue 47, item 9: two `serve` replicas behind a load balancer, one Redis tee store. A
/// conversation's first request reaches replica A, which answers the model's recovery call;
/// its next request reaches replica B, which puts A's turns back (the upstream body's messages
/// up to the new turn are the bytes of A's follow-up: the prompt cache's prefix holds). A third
/// replica whose store is down fails no request: it puts nothing back, and says why.
#[test]
fn a_recovery_answered_by_one_replica_is_put_back_by_another_sharing_its_redis() {
    let scenario = anthropic();
    let mut redis = RedisServer::start(&[]);
    let store = redis.url("?prefix=replicas:");
    let rows = corpus("query-500x12.json");
    let (_dir, host) = reference_host();
    let (_, key) = processed(&host, "sql", &rows);
    let upstream = Upstream::start(vec![
        (scenario.call)(&key),
        scenario.done.clone(),
        (scenario.said)("X's answer."),
        (scenario.said)("Again."),
    ]);
    let options = ["--tee-store", store.as_str()];
    let a = Proxy::start_with(&upstream.url(), false, &options);
    let b = Proxy::start_with(&upstream.url(), false, &options);
    let c = Proxy::start_with(&upstream.url(), false, &options);
    let answer = send(&a, scenario.path, &scenario.x);
    let follow_up = upstream.recorded()[1].body.clone();
    let turns = proxys_turns(&follow_up, scenario.call_starts);

    let mut next = scenario.x.clone();
    next["messages"]
        .as_array_mut()
        .unwrap()
        .extend([(scenario.got)(&answer), (scenario.user)("Thanks.")]);
    send(&b, scenario.path, &next);
    let later = upstream.recorded()[2].body.clone();
    assert!(
        String::from_utf8_lossy(&later).contains(&turns),
        "replica B put back replica A's turns, byte for byte"
    );
    assert_shares_messages(&follow_up, &later, "the next request, through replica B");

    redis.kill();
    send(&c, scenario.path, &next);
    let without = upstream.recorded()[3].body.clone();
    assert!(
        !String::from_utf8_lossy(&without).contains("toolu_x"),
        "nothing put back without the store"
    );
    let stderr = c.stop();
    assert!(
        stderr.contains("cannot be read for recoveries to put back"),
        "the warning: {stderr}"
    );
}
