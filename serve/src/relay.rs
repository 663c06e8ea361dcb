//! Relaying one request: routing, the rewrite, the recovery rounds, and the upstream's answer.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use crate::llm::{self, Api};
use bytes::Bytes;
use http_body_util::channel::{Channel, Sender};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use parrot_host::{Host, Namespace, Report};
use serde_json::{Value, json};

use crate::merge::{Conversation, Inserted, Merges, Unsaved};
use crate::recovery::{self, Calls};
use crate::stream::{self, BoxError, Decision, End, Events, Merger, Prefixed, Tapped, Turn};
use crate::{CONNECT_TIMEOUT, MAX_ROUNDS, RESPONSE_TIMEOUT, State};

pub(crate) type Body = UnsyncBoxBody<Bytes, BoxError>;
pub(crate) type Client = hyper_util::client::legacy::Client<HttpsConnector<HttpConnector>, Body>;

/// An upstream API: `http` or `https`, a host, and a path prefix (often empty).
///
/// Shown (`Display`, `Debug`, every message and log line) with the password of the URL's user
/// information masked, as the Redis store's URL is: `http://u:***@host/v1`.
#[derive(Clone, PartialEq, Eq)]
pub struct Upstream {
    scheme: String,
    authority: String,
    prefix: String,
}

impl Upstream {
    /// Reads an upstream URL: `http://` or `https://`, a host (and port), and an optional path
    /// prefix; no query.
    ///
    /// # Errors
    ///
    /// A message naming what is wrong with `url` (its password masked).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_serve::Upstream;
    ///
    /// let upstream = Upstream::parse("http://127.0.0.1:9000/openai/").unwrap();
    /// assert_eq!(upstream.to_string(), "http://127.0.0.1:9000/openai");
    /// assert_eq!(
    ///     Upstream::parse("ftp://example.com").unwrap_err(),
    ///     "\"ftp://example.com\": the upstream must be an http:// or https:// URL"
    /// );
    /// let upstream = Upstream::parse("http://u:secret@127.0.0.1:9000").unwrap();
    /// assert_eq!(upstream.to_string(), "http://u:***@127.0.0.1:9000");
    /// ```
    pub fn parse(url: &str) -> Result<Upstream, String> {
        // A message shows the URL as every log line does: its password masked.
        let shown = parrot_host::mask_password(url);
        let uri: Uri = url
            .parse()
            .map_err(|err| format!("\"{shown}\": not a URL: {err}"))?;
        let scheme = match uri.scheme_str() {
            Some(scheme @ ("http" | "https")) => scheme.to_owned(),
            _ => {
                return Err(format!(
                    "\"{shown}\": the upstream must be an http:// or https:// URL"
                ));
            }
        };
        let Some(authority) = uri.authority() else {
            return Err(format!("\"{shown}\": no host"));
        };
        if uri.query().is_some() {
            return Err(format!("\"{shown}\": an upstream URL takes no query"));
        }
        Ok(Upstream {
            scheme,
            authority: authority.as_str().to_owned(),
            prefix: uri.path().trim_end_matches('/').to_owned(),
        })
    }

    /// The URL of `path_and_query` at this upstream.
    fn uri(&self, path_and_query: &str) -> Result<Uri, hyper::http::Error> {
        Uri::builder()
            .scheme(self.scheme.as_str())
            .authority(self.authority.as_str())
            .path_and_query(format!("{}{path_and_query}", self.prefix))
            .build()
    }
}

impl std::fmt::Display for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = format!("{}://{}{}", self.scheme, self.authority, self.prefix);
        f.write_str(&parrot_host::mask_password(&url))
    }
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Upstream").field(&self.to_string()).finish()
    }
}

/// The upstream client: HTTP/1.1, TLS by rustls (ring) with Mozilla's roots, pooled connections.
pub(crate) fn client() -> Result<Client, rustls::Error> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.set_nodelay(true);
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())?
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Ok(hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(https))
}

/// The API whose rewrite applies to a `POST` to `path`, and whether its answer can call tools.
fn rewritable(path: &str) -> Option<(Api, bool)> {
    if let Some(api) = Api::ALL
        .into_iter()
        .find(|api| api.rules().counting_path() == Some(path))
    {
        return Some((api, false));
    }
    Api::from_path(path).map(|api| (api, true))
}

/// Whether a request goes to the Anthropic upstream (see the crate documentation).
fn is_anthropic(parts: &Parts) -> bool {
    let path = parts.uri.path();
    path == "/v1/messages"
        || path.starts_with("/v1/messages/")
        || parts.headers.contains_key("anthropic-version")
}

/// The answer to `GET /parrot/report`: the report, for a request to a loopback name or the
/// listening address only.
fn report_to(state: &State, parts: &Parts) -> Response<Body> {
    match refused_host(parts, state.listen.ip()) {
        None => report(state),
        Some(why) => error_response(
            StatusCode::FORBIDDEN,
            "permission_error",
            &format!(
                "parrot-compress serve: /parrot/report answers only requests to a loopback \
                 name (localhost, 127.0.0.1, [::1]) or to the address it listens on ({}), so \
                 that a page of another site cannot read it through DNS rebinding; {why}",
                state.listen
            ),
            None,
        ),
    }
}

/// The body of a request to rewrite, read whole: a bounded read (`limit` bytes), refused
/// before a byte is read when its declared length is over the bound; `Err` with the answer
/// that refuses it.
async fn read_body(parts: &Parts, body: Incoming, limit: usize) -> Result<Bytes, Response<Body>> {
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large(limit));
    }
    let received = match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => return Err(too_large(limit)),
        Err(err) => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("cannot read the request body: {err}"),
                None,
            ));
        }
    };
    Ok(received)
}

/// Answers one request.
pub(crate) async fn handle(state: Arc<State>, request: Request<Incoming>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    if parts.uri.path() == "/parrot/report" && parts.method == Method::GET {
        return report_to(&state, &parts);
    }
    let upstream = if is_anthropic(&parts) {
        &state.anthropic
    } else {
        &state.openai
    };
    let rewrite = match (&state.host, &parts.method) {
        (Some(host), &Method::POST) => rewritable(parts.uri.path()).map(|found| (host, found)),
        _ => None,
    };
    let Some((host, (api, answers_calls))) = rewrite else {
        let body = body.map_err(BoxError::from).boxed_unsync();
        return match send(&state, upstream, &parts, body, None, false).await {
            Ok(response) => relayed(response),
            Err(failed) => failed,
        };
    };
    let received = match read_body(&parts, body, state.max_body_bytes).await {
        Ok(received) => received,
        Err(refused) => return refused,
    };
    let owner = Owner::of(&parts, state.shared_unscoped);
    let prepared = {
        let host = Arc::clone(host);
        let path = parts.uri.path().to_owned();
        let received = received.clone();
        let state = Arc::clone(&state);
        tokio::task::spawn_blocking(move || {
            let scope = Scope {
                host: &host,
                namespace: owner.namespace.as_ref(),
            };
            let merges = owner.merges(&state);
            prepare(scope, merges, api, &path, received, answers_calls)
        })
        .await
    };
    let prepared = prepared.unwrap_or_else(|err| {
        tracing::warn!(
            "serve: {} {}: the rewrite failed ({err}); relayed as sent",
            parts.method,
            parts.uri.path()
        );
        Prepared {
            body: received,
            answer_calls: false,
            conversation: Conversation::default(),
        }
    });
    if !prepared.answer_calls {
        let length = prepared.body.len();
        let body = full(prepared.body);
        return match send(&state, upstream, &parts, body, Some(length), false).await {
            Ok(response) => relayed(response),
            Err(failed) => failed,
        };
    }
    rounds(
        &state,
        host,
        prepared.conversation,
        upstream,
        &parts,
        api,
        prepared.body,
    )
    .await
}

/// The credential headers the proxied APIs read, in the order a request's credential is taken
/// from them: the API-key headers of Anthropic (`x-api-key`), Azure OpenAI (`api-key`) and
/// Gemini (`x-goog-api-key`), then `authorization` (OpenAI's and every compatible API's bearer
/// token, Azure's Entra ID token, Anthropic's OAuth token). The first header with a value that
/// is not empty gives the credential; the `key` query parameter (Gemini's `?key=`) gives it when
/// none has one.
const CREDENTIAL_HEADERS: [&str; 4] = ["x-api-key", "api-key", "x-goog-api-key", "authorization"];

/// The credential of a request ([`CREDENTIAL_HEADERS`] says where it is looked for, and in
/// which order): a header's value, for `authorization` its bearer token (or the whole value of
/// another scheme), or the `key` query parameter, percent-decoded; leading and trailing spaces
/// taken off. `None` for a request with none, or with only empty values.
fn credential_of(parts: &Parts) -> Option<Cow<'_, [u8]>> {
    let header = CREDENTIAL_HEADERS.iter().find_map(|&name| {
        let value = parts.headers.get(name)?.as_bytes().trim_ascii();
        let value = match value.split_first_chunk::<7>() {
            Some((scheme, token))
                if name == "authorization" && scheme.eq_ignore_ascii_case(b"bearer ") =>
            {
                token.trim_ascii()
            }
            _ => value,
        };
        (!value.is_empty()).then_some(Cow::Borrowed(value))
    });
    header.or_else(|| {
        let query = parts.uri.query()?;
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix("key="))
            .map(|key| percent_decoded(key.as_bytes()))
            .map(|key| key.trim_ascii().to_vec())
            .filter(|key| !key.is_empty())
            .map(Cow::Owned)
    })
}

/// `text` with each `%XX` replaced by the byte it encodes (a `%` not followed by two hex
/// digits stays as it is).
fn percent_decoded(text: &[u8]) -> Vec<u8> {
    let hex = |byte: u8| char::from(byte).to_digit(16);
    let mut decoded = Vec::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let pair = text
            .get(at + 1..at + 3)
            .and_then(|pair| Some(hex(pair[0])? * 16 + hex(pair[1])?));
        match (text[at], pair) {
            (b'%', Some(byte)) => {
                decoded.push(byte as u8);
                at += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                at += 1;
            }
        }
    }
    decoded
}

/// Whose a request's originals, recoveries and recorded merges are.
#[derive(Debug, Clone)]
struct Owner {
    /// The namespace its originals are stored in and its recovery calls answered from.
    namespace: Option<Namespace>,
    /// Whether the recoveries answered for it are recorded, and earlier ones put back in it
    /// ([`crate::merge`]).
    merges: bool,
}

impl Owner {
    /// A request's owner: the namespace of its credential ([`credential_of`],
    /// [`Namespace::of_secret`], derived and never stored or logged). A request without one is
    /// unscoped: with [`Config::shared_unscoped`](crate::Config::shared_unscoped), every such
    /// request shares the originals of no namespace and the merges recorded for them; without
    /// it (the default), the request is alone in a namespace of its own, new for it
    /// ([`Namespace::random`]), so that its originals are read by its own recovery rounds only,
    /// and nothing it answered is recorded or put back.
    fn of(parts: &Parts, shared_unscoped: bool) -> Owner {
        match credential_of(parts) {
            Some(secret) => Owner {
                namespace: Some(Namespace::of_secret(&secret)),
                merges: true,
            },
            None if shared_unscoped => Owner {
                namespace: None,
                merges: true,
            },
            None => Owner {
                namespace: Some(Namespace::random()),
                merges: false,
            },
        }
    }

    /// The record of merges this request reads and adds to, when it does.
    fn merges<'s>(&self, state: &'s State) -> Option<&'s Merges> {
        self.merges.then_some(&state.merges)
    }
}

/// The host a request's results go through, and the namespace they are stored in.
#[derive(Clone, Copy)]
struct Scope<'a> {
    host: &'a Host,
    namespace: Option<&'a Namespace>,
}

/// A request body ready to send.
struct Prepared {
    body: Bytes,
    /// Whether the proxy answers calls of [`recovery::RECOVERY_TOOL`] in the answer (it added
    /// the tool, and the answer can call tools).
    answer_calls: bool,
    /// The conversation the answer belongs to, when the proxy answers calls in it.
    conversation: Conversation,
}

/// Rewrites a body, puts back the recoveries answered in earlier requests ([`crate::merge`]),
/// and offers the recovery tool (on a blocking thread: the pipeline is synchronous).
///
/// The tool goes in every request that defines `tools`, whether or not it carries a pointer,
/// so that the tools a conversation sends, which open the prompt cache's prefix, are the same
/// bytes from its first request on; a request without `tools` gets it only when it needs it
/// (a pointer, or recovery calls put back), and a count of tokens only when calls of it were
/// put back. A host without a tee store never offers it: nothing can be recovered. Without
/// `merges` (a request alone in its namespace, [`Owner`]), nothing is put back and nothing it
/// answers will be recorded.
fn prepare(
    scope: Scope<'_>,
    merges: Option<&Merges>,
    api: Api,
    path: &str,
    received: Bytes,
    answers_calls: bool,
) -> Prepared {
    let Scope { host, namespace } = scope;
    let (body, pointed) = match llm::rewrite_in(api, &received, host, namespace) {
        Ok(rewrite) => {
            let pointed = rewrite.pointed();
            tracing::debug!(
                "serve: POST {path}: {} tool results, {} compressed, {} errors, {} unknown calls",
                rewrite.counts.seen,
                rewrite.counts.compressed,
                rewrite.counts.errors,
                rewrite.counts.unknown
            );
            match rewrite.body {
                Cow::Borrowed(_) => (received.clone(), pointed),
                Cow::Owned(body) => (Bytes::from(body), pointed),
            }
        }
        Err(err) => {
            tracing::warn!("serve: POST {path}: not rewritten, relayed as sent: {err}");
            return Prepared {
                body: received,
                answer_calls: false,
                conversation: Conversation::default(),
            };
        }
    };
    let reinserted = merges.and_then(|merges| merges.reinsert(namespace, api, &received, &body));
    let (body, reinserted) = match reinserted {
        Some(body) => (Bytes::from(body), true),
        None => (body, false),
    };
    // A count of tokens gets the tool only where the conversation needs it defined (calls of it
    // put back): it is not where calls are answered, and its count is of what the client sent.
    let offered = host.tee_store().is_some()
        && (reinserted || (answers_calls && (pointed || recovery::has_tools(&body))));
    if !offered {
        return Prepared {
            body,
            answer_calls: false,
            conversation: Conversation::default(),
        };
    }
    match recovery::add_tool(api, &body) {
        Ok(Some(with_tool)) => Prepared {
            body: Bytes::from(with_tool),
            answer_calls: answers_calls,
            conversation: match (answers_calls, merges) {
                (false, _) => Conversation::default(),
                (true, Some(_)) => Conversation::new(namespace.cloned(), api, received.clone()),
                (true, None) => Conversation::unrecorded(namespace.cloned()),
            },
        },
        Ok(None) => Prepared {
            body,
            answer_calls: false,
            conversation: Conversation::default(),
        },
        Err(err) => {
            tracing::warn!(
                "serve: POST {path}: {} not offered: {err}",
                recovery::RECOVERY_TOOL
            );
            Prepared {
                body,
                answer_calls: false,
                conversation: Conversation::default(),
            }
        }
    }
}

/// Sends `body` and answers the model's calls of the recovery tool, up to [`MAX_ROUNDS`]
/// follow-ups; returns the last answer (an Anthropic answer merged, [`crate::merge`]).
async fn rounds(
    state: &Arc<State>,
    host: &Arc<Host>,
    conversation: Conversation,
    upstream: &crate::Upstream,
    parts: &Parts,
    api: Api,
    mut body: Bytes,
) -> Response<Body> {
    let streamed = recovery::streams(&body);
    let mut round = 0;
    let mut so_far = Answered::default();
    loop {
        let response = match send_round(state, upstream, parts, &body, streamed).await {
            Ok(response) => response,
            Err(response) => return response,
        };
        let (mut head, incoming) = response.into_parts();
        if streamed && api.rules().merges() {
            head.headers = end_to_end(&head.headers);
            let channel = merged_stream(
                Arc::clone(state),
                Arc::clone(host),
                api,
                conversation,
                upstream.clone(),
                copy_of(parts),
                body,
                incoming,
            );
            return Response::from_parts(head, channel.boxed_unsync());
        }
        let read = if streamed {
            let last = round == MAX_ROUNDS;
            read_streamed(state, &conversation, api, last, head, incoming, &mut so_far).await
        } else {
            read_whole(upstream, head, incoming).await
        };
        let (mut answer, bytes, head) = match read {
            Ok(read) => read,
            Err(response) => return response,
        };
        let calls = match recovery::calls(api, &answer) {
            Calls::None => {
                return merged(state, &conversation, api, head, bytes, answer, so_far).await;
            }
            // A Chat or Responses stream is relayed as it came: its events cannot lose a call
            // as simply.
            Calls::Mixed if streamed => return buffered(head, bytes),
            Calls::Mixed => {
                let bytes = stripped(parts, api, &mut answer);
                return merged(state, &conversation, api, head, bytes, answer, so_far).await;
            }
            Calls::Ours(_) if round == MAX_ROUNDS => {
                return merged(state, &conversation, api, head, bytes, answer, so_far).await;
            }
            Calls::Ours(calls) => calls,
        };
        round += 1;
        let Some(next) = answered(host, &conversation, parts, api, &body, &answer, calls).await
        else {
            return merged(state, &conversation, api, head, bytes, answer, so_far).await;
        };
        so_far.add(api, &answer, next.turns);
        body = Bytes::from(next.body);
    }
}

/// Sends one round's `body`: `Err` with what the client gets, relayed, when the answer is not
/// one the rounds read (a failure, a status other than 200, a body not of the type asked).
async fn send_round(
    state: &State,
    upstream: &crate::Upstream,
    parts: &Parts,
    body: &Bytes,
    streamed: bool,
) -> Result<Response<Incoming>, Response<Body>> {
    let length = body.len();
    let response = send(
        state,
        upstream,
        parts,
        full(body.clone()),
        Some(length),
        true,
    )
    .await?;
    let wanted = if streamed {
        is_plain(response.headers(), "text/event-stream")
    } else {
        is_plain(response.headers(), "application/json")
    };
    if response.status() != StatusCode::OK || !wanted {
        return Err(relayed(response));
    }
    Ok(response)
}

/// `answer` without its calls of the recovery tool (it calls other tools too), and its text.
fn stripped(parts: &Parts, api: Api, answer: &mut Value) -> Bytes {
    tracing::info!(
        "serve: {}: the answer calls {} and other tools; the client gets it without {}'s calls",
        parts.uri.path(),
        recovery::RECOVERY_TOOL,
        recovery::RECOVERY_TOOL
    );
    recovery::strip(api, answer);
    Bytes::from(answer.to_string())
}

/// A streamed answer of one round, read: `Ok` with the answer, its bytes and the response
/// head when it calls the recovery tool and only that; `Err` with what the client gets when
/// the stream is relayed as it comes, or read and finished as it is (`last`: the last round,
/// whose calls are not answered).
async fn read_streamed(
    state: &Arc<State>,
    conversation: &Conversation,
    api: Api,
    last: bool,
    mut head: hyper::http::response::Parts,
    incoming: Incoming,
    so_far: &mut Answered,
) -> Result<(Value, Bytes, hyper::http::response::Parts), Response<Body>> {
    match read_stream(api, incoming, last).await {
        Streamed::Relay(relay) => {
            head.headers = end_to_end(&head.headers);
            if so_far.appended.is_empty() {
                return Err(Response::from_parts(head, relay.boxed_unsync()));
            }
            // The last answer, watched on its way to record what goes back before it.
            // The record is written as the stream's end goes out.
            let state = Arc::clone(state);
            let conversation = conversation.clone();
            let appended = std::mem::take(&mut so_far.appended);
            let tapped = Tapped::new(api, relay, move |answer| {
                let unsaved = state
                    .merges
                    .record_before(&conversation, api, &answer, appended);
                if let Some(unsaved) = unsaved {
                    tokio::task::spawn_blocking(move || state.merges.save(unsaved));
                }
            });
            Err(Response::from_parts(head, tapped.boxed_unsync()))
        }
        Streamed::Read(bytes) => {
            let answer = stream::rebuilt(api, &bytes);
            let so_far = std::mem::take(so_far);
            Err(merged(state, conversation, api, head, bytes, answer, so_far).await)
        }
        Streamed::Ours { answer, bytes } => Ok((answer, bytes, head)),
    }
}

/// A JSON answer of one round, read whole: `Ok` with the answer, its bytes and the response
/// head; `Err` with what the client gets when it cannot be read (a bad gateway) or is not JSON
/// (the bytes as they came).
async fn read_whole(
    upstream: &crate::Upstream,
    head: hyper::http::response::Parts,
    incoming: Incoming,
) -> Result<(Value, Bytes, hyper::http::response::Parts), Response<Body>> {
    let bytes = match incoming.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) => return Err(bad_gateway(upstream, &chain(&err))),
    };
    let Ok(answer) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(buffered(head, bytes));
    };
    Ok((answer, bytes, head))
}

/// What the recovery rounds of one request answered so far.
#[derive(Debug, Default)]
struct Answered {
    /// Anthropic: the blocks the client gets before the last answer's, and the turns answered.
    shown: Vec<Value>,
    inserted: Vec<Inserted>,
    /// Chat Completions and Responses: every element the follow-ups appended.
    appended: Vec<String>,
}

impl Answered {
    /// Records one answered round: `answer`, whose recovery calls were answered, and `turns`,
    /// what the follow-up appended (the model's turn, then the answers).
    fn add(&mut self, api: Api, answer: &Value, turns: Vec<String>) {
        if api.rules().merges() {
            let content = blocks_of(answer);
            let at = first_call(&content);
            self.shown.extend(content[..at].iter().cloned());
            self.inserted.push(Inserted {
                at: self.shown.len(),
                calls: content[at..].iter().map(Value::to_string).collect(),
                answers: turns.last().cloned().unwrap_or_default(),
            });
        } else {
            self.appended.extend(turns);
        }
    }
}

/// The answer the client gets after the rounds, what they answered recorded in `state`'s
/// merges (and saved before the client gets it): an Anthropic answer merged (the blocks shown
/// before each answered turn's first call, then the answer's own); any other answer as
/// `bytes` came.
async fn merged(
    state: &Arc<State>,
    conversation: &Conversation,
    api: Api,
    head: hyper::http::response::Parts,
    bytes: Bytes,
    mut answer: Value,
    mut so_far: Answered,
) -> Response<Body> {
    if !api.rules().merges() {
        let unsaved = state
            .merges
            .record_before(conversation, api, &answer, so_far.appended);
        saved(state, unsaved).await;
        return buffered(head, bytes);
    }
    if so_far.inserted.is_empty() {
        return buffered(head, bytes);
    }
    so_far.shown.extend(blocks_of(&answer));
    let unsaved = state
        .merges
        .record(conversation, &so_far.shown, so_far.inserted);
    saved(state, unsaved).await;
    answer["content"] = Value::Array(so_far.shown);
    buffered(head, Bytes::from(answer.to_string()))
}

/// Writes a record to the tee store on the blocking pool, and waits for it: the next request of
/// the conversation may reach another proxy sharing the store.
async fn saved(state: &Arc<State>, unsaved: Option<Unsaved>) {
    let Some(unsaved) = unsaved else {
        return;
    };
    let state = Arc::clone(state);
    if let Err(err) = tokio::task::spawn_blocking(move || state.merges.save(unsaved)).await {
        tracing::warn!("serve: a recovery record was not saved: {err}");
    }
}

/// Answers `calls` from the tee store and builds the follow-up request, or `None` (logged):
/// the answer then goes to the client as it is.
async fn answered(
    host: &Arc<Host>,
    conversation: &Conversation,
    parts: &Parts,
    api: Api,
    body: &Bytes,
    answer: &Value,
    calls: Vec<recovery::Call>,
) -> Option<recovery::FollowUp> {
    let next = {
        let host = Arc::clone(host);
        let conversation = conversation.clone();
        let body = body.clone();
        let answer = answer.clone();
        tokio::task::spawn_blocking(move || {
            // Taken here, off the runtime's threads: what answers are recorded under.
            conversation.before();
            let answers: Vec<_> = calls
                .iter()
                .map(|call| recovery::answer(&host, conversation.namespace.as_ref(), call))
                .collect();
            recovery::follow_up(api, &body, &answer, &answers)
        })
        .await
    };
    match next {
        Ok(Ok(next)) => {
            tracing::debug!(
                "serve: {}: answered {} in the proxy",
                parts.uri.path(),
                recovery::RECOVERY_TOOL
            );
            Some(next)
        }
        Ok(Err(err)) => {
            tracing::warn!(
                "serve: {}: cannot answer {}: {err}; the answer goes to the client as it is",
                parts.uri.path(),
                recovery::RECOVERY_TOOL
            );
            None
        }
        Err(err) => {
            tracing::warn!("serve: {}: {err}", parts.uri.path());
            None
        }
    }
}

/// An Anthropic answer's content blocks.
fn blocks_of(answer: &Value) -> Vec<Value> {
    match answer.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    }
}

/// The index of the first block that calls the recovery tool (the length when none does).
fn first_call(blocks: &[Value]) -> usize {
    blocks
        .iter()
        .position(|block| {
            block.get("type").and_then(Value::as_str) == Some("tool_use")
                && block.get("name").and_then(Value::as_str) == Some(recovery::RECOVERY_TOOL)
        })
        .unwrap_or(blocks.len())
}

/// Forwards one round's stream to the client, event by event through `merger`; `None` when
/// the stream stops: the upstream dropped it (the client's stream is aborted) or the client
/// is gone.
async fn forward(
    incoming: &mut Incoming,
    events: &mut Events,
    merger: &mut Merger,
    mut client: Sender<Bytes, BoxError>,
) -> Option<Sender<Bytes, BoxError>> {
    while let Some(frame) = incoming.frame().await {
        let data = match frame {
            Ok(frame) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            Err(err) => {
                client.abort(BoxError::from(err));
                return None;
            }
        };
        for event in events.push(&data) {
            let parsed = event
                .data
                .as_deref()
                .and_then(|data| serde_json::from_str::<Value>(data).ok());
            for bytes in merger.event(&event.raw, parsed) {
                if client.send_data(bytes).await.is_err() {
                    return None;
                }
            }
        }
    }
    Some(client)
}

/// Sends a follow-up `body` for the merged stream: the next round's stream (and the client's,
/// given back), or `None` when it ends the client's stream: aborted when the follow-up cannot
/// be sent, an `error` event when the upstream refuses it (its error, or one naming the
/// status).
async fn send_follow_up(
    state: &State,
    upstream: &crate::Upstream,
    parts: &Parts,
    body: &Bytes,
    mut client: Sender<Bytes, BoxError>,
) -> Option<(Incoming, Sender<Bytes, BoxError>)> {
    let length = body.len();
    let response = match send(
        state,
        upstream,
        parts,
        full(body.clone()),
        Some(length),
        true,
    )
    .await
    {
        Ok(response) => response,
        Err(_) => {
            client.abort(BoxError::from("the follow-up could not be sent"));
            return None;
        }
    };
    if response.status() != StatusCode::OK || !is_plain(response.headers(), "text/event-stream") {
        let status = response.status();
        let error = match response.into_body().collect().await {
            Ok(collected) => serde_json::from_slice::<Value>(&collected.to_bytes()).ok(),
            Err(_) => None,
        };
        let error = error
            .filter(|error| error.get("type").and_then(Value::as_str) == Some("error"))
            .unwrap_or_else(|| {
                json!({"type": "error", "error": {"type": "api_error", "message":
                    format!("parrot-compress serve: upstream {upstream}: the follow-up \
                             after answering {} got {status}", recovery::RECOVERY_TOOL)}})
            });
        let _ = client
            .send_data(Bytes::from(format!("event: error\ndata: {error}\n\n")))
            .await;
        return None;
    }
    Some((response.into_body(), client))
}

/// A streamed Anthropic answer, merged over the recovery rounds ([`Merger`]): the client's
/// body, fed by a task that reads each round's stream, answers the calls and sends the
/// follow-ups. A stream the upstream drops (or a follow-up that cannot be sent) drops the
/// client's stream too, as it would have without the proxy; a follow-up the upstream refuses
/// ends the client's stream with its error as an `error` event.
// Each argument is moved into the task that feeds the client's stream.
#[allow(clippy::too_many_arguments)]
fn merged_stream(
    state: Arc<State>,
    host: Arc<Host>,
    api: Api,
    conversation: Conversation,
    upstream: crate::Upstream,
    parts: Parts,
    mut body: Bytes,
    mut incoming: Incoming,
) -> Channel<Bytes, BoxError> {
    let (mut client, channel) = Channel::<Bytes, BoxError>::new(16);
    tokio::spawn(async move {
        let mut merger = Merger::new(api, MAX_ROUNDS == 0);
        let mut inserted: Vec<Inserted> = Vec::new();
        let mut round = 0;
        loop {
            let mut events = Events::default();
            let Some(sender) = forward(&mut incoming, &mut events, &mut merger, client).await
            else {
                return;
            };
            client = sender;
            let rest = events.rest();
            let (turn, at) = match merger.end() {
                End::Done(last) => {
                    // Saved before the stream's end goes out: the next request may reach
                    // another proxy sharing the store.
                    let unsaved = state
                        .merges
                        .record(&conversation, &merger.shown(), inserted);
                    saved(&state, unsaved).await;
                    for bytes in last.into_iter().chain([Bytes::from(rest)]) {
                        if !bytes.is_empty() && client.send_data(bytes).await.is_err() {
                            return;
                        }
                    }
                    return;
                }
                End::Answer { turn, at } => (turn, at),
            };
            let recovery::Calls::Ours(calls) = recovery::calls(api, &turn) else {
                // The merger answers only a turn that calls the proxy's tool alone.
                client.abort(BoxError::from("the recovery calls could not be read"));
                return;
            };
            round += 1;
            let Some(next) = answered(&host, &conversation, &parts, api, &body, &turn, calls).await
            else {
                client.abort(BoxError::from("the recovery call could not be answered"));
                return;
            };
            inserted.push(Inserted {
                at: merger.shown_count(),
                calls: blocks_of(&turn)[at..]
                    .iter()
                    .map(Value::to_string)
                    .collect(),
                answers: next.turns.last().cloned().unwrap_or_default(),
            });
            body = Bytes::from(next.body);
            let Some((next, sender)) =
                send_follow_up(&state, &upstream, &parts, &body, client).await
            else {
                return;
            };
            (incoming, client) = (next, sender);
            merger.next_round(round == MAX_ROUNDS);
        }
    });
    channel
}

/// A copy of a request's method, URI and headers (what [`send`] reads).
fn copy_of(parts: &Parts) -> Parts {
    let mut request = Request::new(());
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.headers_mut() = parts.headers.clone();
    request.into_parts().0
}

/// What reading the start of a streamed answer found.
enum Streamed {
    /// Not a call of the recovery tool (or a stream the upstream dropped): the events held,
    /// then the rest as it arrives (or the drop).
    Relay(Prefixed),
    /// The stream ended before anything showed: all of it.
    Read(Bytes),
    /// A call of the recovery tool: the model's turn rebuilt, and the whole stream.
    Ours { answer: Value, bytes: Bytes },
}

/// Holds a stream's events until one shows whether the model calls the recovery tool (see
/// [`crate::stream`]); on the last round, a call is relayed like anything else. A stream the
/// upstream drops reaches the client as what came, then dropped.
async fn read_stream(api: Api, mut incoming: Incoming, last_round: bool) -> Streamed {
    let mut events = Events::default();
    let mut turn = Turn::new(api);
    let mut held = Vec::new();
    let mut feed = |data: &[u8], turn: &mut Turn, decision: &mut Decision| {
        for event in events.push(data) {
            let Some(data) = event.data else {
                continue;
            };
            let event = serde_json::from_str::<Value>(&data).ok();
            if let Some(event) = &event {
                turn.feed(event);
            }
            if *decision == Decision::Undecided {
                *decision = stream::decide(api, event.as_ref());
            }
        }
    };
    let dropped = |held: Vec<u8>, err: hyper::Error| {
        Streamed::Relay(Prefixed {
            prefix: Some(Bytes::from(held)),
            rest: None,
            dropped: Some(BoxError::from(err)),
        })
    };
    let mut decision = Decision::Undecided;
    loop {
        if decision == Decision::Theirs || (decision == Decision::Ours && last_round) {
            return Streamed::Relay(Prefixed {
                prefix: Some(Bytes::from(held)),
                rest: Some(incoming),
                dropped: None,
            });
        }
        match incoming.frame().await {
            None => break,
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    held.extend_from_slice(&data);
                    feed(&data, &mut turn, &mut decision);
                }
            }
            Some(Err(err)) => return dropped(held, err),
        }
    }
    if decision == Decision::Undecided {
        return Streamed::Read(Bytes::from(held));
    }
    Streamed::Ours {
        answer: turn.finish(),
        bytes: Bytes::from(held),
    }
}

/// Sends a request upstream with `parts`' method, path, query and end-to-end headers, and
/// `body` (`length` bytes, when known: a body the proxy read). With `identity`, the answer
/// is asked for uncompressed (the proxy reads it). A failure is the 502 to send back.
async fn send(
    state: &State,
    upstream: &crate::Upstream,
    parts: &Parts,
    body: Body,
    length: Option<usize>,
    identity: bool,
) -> Result<Response<Incoming>, Response<Body>> {
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    let uri = upstream
        .uri(path_and_query)
        .map_err(|err| bad_gateway(upstream, &format!("cannot form the upstream URL: {err}")))?;
    let mut request = Request::new(body);
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = uri;
    let headers = request.headers_mut();
    *headers = end_to_end(&parts.headers);
    headers.remove(header::HOST);
    // The proxy has read the client's body, or streams it: the upstream need not confirm.
    headers.remove(header::EXPECT);
    if let Some(length) = length {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
    if identity {
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("identity"),
        );
    }
    match tokio::time::timeout(RESPONSE_TIMEOUT, state.client.request(request)).await {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(err)) => {
            let message = chain(&err);
            tracing::warn!(
                "serve: {} {}: {upstream}: {message}",
                parts.method,
                parts.uri.path()
            );
            Err(bad_gateway(upstream, &message))
        }
        Err(_) => Err(bad_gateway(
            upstream,
            &format!("no response within {} seconds", RESPONSE_TIMEOUT.as_secs()),
        )),
    }
}

/// The upstream's response as it came, its body streamed frame by frame.
fn relayed(response: Response<Incoming>) -> Response<Body> {
    let (mut head, body) = response.into_parts();
    head.headers = end_to_end(&head.headers);
    Response::from_parts(head, body.map_err(BoxError::from).boxed_unsync())
}

/// A response the proxy read whole (`head` is the upstream's), with `bytes` as its body.
fn buffered(mut head: hyper::http::response::Parts, bytes: Bytes) -> Response<Body> {
    head.headers = end_to_end(&head.headers);
    head.headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    Response::from_parts(head, full(bytes))
}

/// The headers without the hop-by-hop ones (RFC 9110 §7.6.1): those the `Connection` header
/// names, and the standard ones.
fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    const HOP_BY_HOP: [&str; 9] = [
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ];
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    let mut kept = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if !HOP_BY_HOP.contains(&name.as_str()) && !named.contains(name) {
            kept.append(name.clone(), value.clone());
        }
    }
    kept
}

/// Whether the body's content type is `media` and it is not content-encoded (a body the proxy
/// can read as it is).
fn is_plain(headers: &HeaderMap, media: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with(media))
        && !headers.contains_key(header::CONTENT_ENCODING)
}

fn full(bytes: Bytes) -> Body {
    Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// Why a request for the report is refused: it names a host other than a loopback name or
/// `listen` (in its Host header, or in an absolute request target). A page that a name of its
/// own resolved to 127.0.0.1 (DNS rebinding) sends that name; an address typed as such cannot be
/// rebound, so any loopback address passes.
fn refused_host(parts: &Parts, listen: IpAddr) -> Option<String> {
    let mut hosts = parts.headers.get_all(header::HOST).iter();
    let Some(host) = hosts.next() else {
        return Some("the request has no Host header".to_owned());
    };
    if hosts.next().is_some() {
        return Some("the request has more than one Host header".to_owned());
    }
    let Ok(host) = host.to_str() else {
        return Some("its Host header is not text".to_owned());
    };
    if !is_local(host, listen) {
        return Some(format!("Host \"{}\" is not one", host.escape_debug()));
    }
    match parts.uri.authority() {
        Some(target) if !is_local(target.as_str(), listen) => Some(format!(
            "the request target's host \"{}\" is not one",
            target.as_str().escape_debug()
        )),
        _ => None,
    }
}

/// Whether `authority` (`host[:port]`, an IPv6 address in brackets) names `localhost`, a
/// loopback address, or `listen`; any port.
fn is_local(authority: &str, listen: IpAddr) -> bool {
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, rest)) => match rest.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return false,
            },
            None => return false,
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if port.is_some_and(|port| !port.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let ip = if authority.starts_with('[') {
        host.parse::<Ipv6Addr>().map(IpAddr::V6)
    } else {
        host.parse::<Ipv4Addr>().map(IpAddr::V4)
    };
    ip.is_ok_and(|ip| {
        let ip = ip.to_canonical();
        ip.is_loopback() || ip == listen.to_canonical()
    })
}

/// The report so far, as JSON.
fn report(state: &State) -> Response<Body> {
    let snapshot = match &state.host {
        Some(host) => host.report().snapshot(),
        None => Report::new(state.tokenizer.clone()).snapshot(),
    };
    json_response(StatusCode::OK, &snapshot.to_json())
}

/// The 413 for a body over the proxy's bound (the type is the Anthropic API's own for it).
fn too_large(limit: usize) -> Response<Body> {
    tracing::warn!("serve: a request body over {limit} bytes refused (413)");
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request_too_large",
        &format!(
            "parrot-compress serve: the request body is over {limit} bytes, the proxy's bound \
             for a body it rewrites (--max-body-bytes)"
        ),
        None,
    )
}

/// The 502 for an upstream that could not be reached.
fn bad_gateway(upstream: &crate::Upstream, message: &str) -> Response<Body> {
    error_response(
        StatusCode::BAD_GATEWAY,
        "upstream_unreachable",
        &format!("parrot-compress serve: upstream {upstream}: {message}"),
        Some(upstream),
    )
}

/// An error in the shape both SDKs read: `{"type": "error", "error": {"type", "message"}}`.
fn error_response(
    status: StatusCode,
    kind: &str,
    message: &str,
    upstream: Option<&crate::Upstream>,
) -> Response<Body> {
    let mut error = json!({"type": kind, "message": message});
    if let Some(upstream) = upstream {
        error["upstream"] = Value::String(upstream.to_string());
    }
    json_response(status, &json!({"type": "error", "error": error}))
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let bytes = Bytes::from(value.to_string());
    let mut response = Response::new(full(bytes.clone()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    response
}

/// An error and its causes, `: `-separated (hyper's own message alone says little:
/// "client error (Connect)").
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstreams_password_is_masked_wherever_it_is_shown() {
        let upstream = Upstream::parse("http://user:s3cret-pw@127.0.0.1:9/v1/").unwrap();
        let shown = [
            upstream.to_string(),
            format!("{upstream:?}"),
            Upstream::parse("http://user:s3cret-pw@127.0.0.1:9/v1?q=1").unwrap_err(),
            Upstream::parse("ftp://user:s3cret-pw@127.0.0.1:9").unwrap_err(),
        ];
        assert_eq!(shown[0], "http://user:***@127.0.0.1:9/v1");
        for text in shown {
            assert!(!text.contains("s3cret-pw"), "{text}");
            assert!(text.contains("user:***@"), "{text}");
        }
        let uri = upstream.uri("/v1/chat/completions").unwrap();
        assert_eq!(
            uri.host(),
            Some("127.0.0.1"),
            "the requests still go to the host"
        );
    }

    /// The request's parts: `target` and `headers` (`name: value`).
    fn parts(target: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request = Request::builder().method(Method::POST).uri(target);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    /// The review's finding (issue 47): a key in Azure's `api-key`, Gemini's `x-goog-api-key`
    /// or `?key=` counted as none. One row per place a credential is read, and the precedence
    /// between them: the API-key headers in their order, then `authorization`, then `?key=`.
    #[test]
    fn a_credential_is_read_from_every_header_the_apis_use_in_order() {
        type Headers = &'static [(&'static str, &'static str)];
        let cases: [(&str, Headers, Option<&str>); 16] = [
            (
                "/v1/messages",
                &[("x-api-key", "sk-ant-a")],
                Some("sk-ant-a"),
            ),
            (
                "/v1/chat/completions",
                &[("api-key", "azure-a")],
                Some("azure-a"),
            ),
            (
                "/v1/chat/completions",
                &[("x-goog-api-key", "AIza-a")],
                Some("AIza-a"),
            ),
            (
                "/v1/chat/completions",
                &[("authorization", "Bearer sk-a")],
                Some("sk-a"),
            ),
            (
                "/v1/chat/completions",
                &[("authorization", "bearer  sk-a ")],
                Some("sk-a"),
            ),
            (
                "/v1/chat/completions",
                &[("authorization", "Basic dTpw")],
                Some("Basic dTpw"),
            ),
            ("/v1/chat/completions?key=AIza-q", &[], Some("AIza-q")),
            (
                "/v1/chat/completions?alt=sse&key=AIza%2Dq%3D",
                &[],
                Some("AIza-q="),
            ),
            ("/v1/chat/completions?apikey=x&monkey=y", &[], None),
            ("/v1/chat/completions?key=", &[], None),
            ("/v1/chat/completions", &[("api-key", " ")], None),
            ("/v1/chat/completions", &[], None),
            // Precedence: the first of x-api-key, api-key, x-goog-api-key, authorization that
            // holds a value, then ?key=.
            (
                "/v1/messages?key=q",
                &[("authorization", "Bearer t"), ("x-api-key", "a")],
                Some("a"),
            ),
            (
                "/v1/chat/completions?key=q",
                &[
                    ("authorization", "Bearer t"),
                    ("x-goog-api-key", "g"),
                    ("api-key", "z"),
                ],
                Some("z"),
            ),
            (
                "/v1/chat/completions?key=q",
                &[("authorization", "Bearer t"), ("api-key", "")],
                Some("t"),
            ),
            (
                "/v1/chat/completions?key=q",
                &[("x-api-key", "")],
                Some("q"),
            ),
        ];
        for (target, headers, expected) in cases {
            let parts = parts(target, headers);
            assert_eq!(
                credential_of(&parts).as_deref(),
                expected.map(str::as_bytes),
                "{target} {headers:?}"
            );
        }
    }

    #[test]
    fn a_request_without_a_credential_is_alone_unless_unscoped_requests_share() {
        let keyed = parts("/v1/chat/completions", &[("api-key", "azure-a")]);
        for shared in [false, true] {
            let owner = Owner::of(&keyed, shared);
            assert_eq!(owner.namespace, Some(Namespace::of_secret(b"azure-a")));
            assert!(owner.merges);
        }
        let unscoped = parts("/v1/chat/completions", &[]);
        let shared = Owner::of(&unscoped, true);
        assert_eq!((shared.namespace, shared.merges), (None, true));
        let [one, two] = [Owner::of(&unscoped, false), Owner::of(&unscoped, false)];
        assert!(!one.merges && !two.merges, "nothing recorded nor put back");
        let (one, two) = (one.namespace.unwrap(), two.namespace.unwrap());
        assert_ne!(one, two, "each request in a namespace of its own");
        assert!(one.as_str().starts_with("session-"), "{one}");
    }

    #[test]
    fn the_report_answers_loopback_names_and_the_listening_address_only() {
        let listen: IpAddr = "192.0.2.7".parse().unwrap();
        let cases = [
            ("localhost", true),
            ("localhost:8787", true),
            ("LocalHost.:8787", true),
            ("127.0.0.1", true),
            ("127.0.0.1:8787", true),
            ("127.1.2.3:8787", true),
            ("[::1]", true),
            ("[::1]:8787", true),
            ("[::ffff:127.0.0.1]:8787", true),
            ("192.0.2.7:8787", true),
            ("attacker.example", false),
            ("attacker.example:8787", false),
            ("localhost.attacker.example", false),
            ("127.0.0.1.attacker.example", false),
            ("192.0.2.8:8787", false),
            ("localhost:87x", false),
            ("[::1]x", false),
            ("[::1", false),
            ("::1", false),
            ("", false),
        ];
        for (host, local) in cases {
            assert_eq!(is_local(host, listen), local, "{host}");
        }
    }
}
