//! An HTTP proxy in front of LLM APIs: every tool result an agent sends to the model goes
//! through the [`parrot_host`] pipeline on its way, and nothing else of the request changes.
//!
//! The agent talks to the proxy instead of the API (`ANTHROPIC_BASE_URL=http://127.0.0.1:8787`,
//! `OPENAI_BASE_URL=http://127.0.0.1:8787/v1`); the proxy forwards each request to the real API
//! (the *upstream*) and relays the answer back.
//!
//! # Where a request goes
//!
//! A request whose path is `/v1/messages` or below it (`/v1/messages/count_tokens`,
//! `/v1/messages/batches`), or that carries an `anthropic-version` header (every Anthropic SDK
//! sends one), goes to the Anthropic upstream; every other request goes to the OpenAI upstream.
//! The upstream URL's own path, if any, is put in front of the request's
//! (`http://gateway/openai` + `/v1/chat/completions`). `GET /parrot/report` is the proxy's own:
//! the savings report so far, as JSON ([`parrot_host::ReportSnapshot::to_json`]), to a request
//! whose `Host` is a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any port) or the address
//! the proxy listens on; another `Host` (a page that reached the proxy through DNS rebinding)
//! gets a `403` saying why.
//!
//! # What changes
//!
//! Only `POST` bodies of the three APIs [`llm::rewrite`] knows (and
//! `/v1/messages/count_tokens`, which takes a Messages body, so that a count counts the results
//! as they are sent; the recovery tool is not added there): each tool result's text is replaced
//! by what the pipeline makes of it, in place, every other byte as the client sent it;
//! `Content-Length` is set to the new length. The rewrite runs on tokio's blocking pool; how
//! large a result is compressed in the request's time is the host's to say (`parrot-compress
//! serve` builds it so that a result the router would not compress inline passes through, the
//! same way on every request). A body that is
//! not such a request (not JSON, another shape) goes on unchanged, with a warning naming what
//! was wrong. Every other request — any method, any path — is relayed as it is: method, path and
//! query, headers (API keys included; they are never logged) and body, streamed. Hop-by-hop
//! headers (`Connection` and those it names, `Keep-Alive`, `Transfer-Encoding`, `TE`, `Trailer`,
//! `Upgrade`, `Proxy-*`) are the connection's own and are not forwarded, and `Host` names the
//! upstream. Responses come back the same way: status, headers and body, a streamed body
//! (server-sent events, chunked) frame by frame as it arrives, never buffered.
//!
//! # Recovery in the loop
//!
//! When the host has a tee store, the proxy adds one tool to every request that defines
//! `tools` (and to one without `tools` that carries a lossy result, [`llm::Rewrite::pointed`]):
//! [`RECOVERY_TOOL`] — the MCP proxy's, same schema and selectors — in the API's own format,
//! appended as the last element of `tools` (the array created, as the body's last member, when
//! there is none). It is there from a conversation's first request, before any result carries
//! a pointer, and its definition is the same bytes every time with the earlier tools not
//! touched, so the prompt cache's prefix, which `tools` opens, holds from request 1. A client
//! that defines a tool of that name itself keeps its own: nothing is added, and calls of it
//! are the client's.
//!
//! When the model's answer calls [`RECOVERY_TOOL`] and no other tool, the proxy answers the
//! calls from the tee store itself, appends the model's turn and the answers to the
//! conversation, and sends that follow-up upstream, up to [`MAX_ROUNDS`] times. An Anthropic
//! client receives one message, merged over the rounds (the text before each call, then the
//! last answer), and the calls with their answers are put back at the same place, byte for
//! byte, in the later requests of that conversation; a Chat Completions or Responses client
//! receives the last answer only, and the proxy's turns go back just before it in the later
//! requests of that conversation. What the proxy answered is recorded in the tee store, so
//! every proxy sharing the store puts it back (the module `merge` in the source says which
//! conversation and where records are kept). See [`recovery`] for each API's turns, what
//! happens to an answer that mixes the proxy's tool with the client's, and streamed answers.
//!
//! # Whose originals
//!
//! Each request's originals are stored in the namespace of its credential, derived with
//! [`parrot_host::Namespace::of_secret`] and never stored or logged; the recovery calls in its
//! answers are answered from that namespace alone
//! ([`parrot_recover::Recover::recover_for_model_in`]), and the recoveries put back into later
//! requests are recorded and put back under it. The credential is the value of the first of
//! these headers that holds one that is not empty: `x-api-key` (Anthropic), `api-key` (Azure
//! OpenAI), `x-goog-api-key` (Gemini), `authorization` (OpenAI and every compatible API: the
//! token of `Bearer <token>`, or the whole value of another scheme); else the request's `key`
//! query parameter (Gemini's `?key=`), percent-decoded. A key of another client's original is a
//! tool error, `no original is stored under "<key>"`, the same as a key nobody holds; so is a
//! key written `<namespace>/<key>` ([`parrot_host::Host::recover_in`]).
//!
//! A request without a credential is alone: its originals are stored in a namespace of its own,
//! new for the request ([`parrot_host::Namespace::random`]), which its own recovery rounds read
//! and no other request does, and the recoveries answered for it are neither recorded nor put
//! back into a later request. With [`Config::shared_unscoped`] (`serve --shared-unscoped`), the
//! operator says such requests are one user's: they store and recover plain keys, which no
//! keyed request reads, and share the recoveries put back.
//!
//! # Failures
//!
//! An upstream that cannot be reached (refused, no route, DNS, TLS, no connection within
//! [`CONNECT_TIMEOUT`], no response headers within [`RESPONSE_TIMEOUT`]) is answered with
//! `502 Bad Gateway` and a JSON body naming the upstream URL (its password masked, as in every
//! log line: [`parrot_host::mask_password`]) and the error, in the shape both
//! SDKs read as an API error: `{"type": "error", "error": {"type": "upstream_unreachable",
//! "message": …, "upstream": …}}`. The upstream's own errors (4xx, 5xx) are relayed as they
//! are. A streamed answer the upstream drops reaches the client as a dropped stream, never as
//! a 502 (the status was already sent). Nothing the proxy receives makes it stop.
//!
//! # Where each API lives
//!
//! Everything that differs from one LLM API to the next is in one module per API, behind one
//! trait (the source's `api` module, its trait `LlmApi`): the path it serves, where a request's
//! tool results are and which call named them, the recovery tool's definition, the calls in an
//! answer and the turns a follow-up appends, what the records put back into later requests
//! fingerprint, and how a streamed answer's events are read. The rewrite, the recovery rounds,
//! the records and the streams are the same code for every API. To add an API (Gemini's
//! `generateContent`, Bedrock's Converse):
//!
//! 1. write `serve/src/api/<name>.rs`: a unit struct implementing `LlmApi`, with its unit
//!    tests (its requests' tool results, its recovery calls and follow-up, its stream events);
//! 2. register it in `serve/src/api/mod.rs`: a variant of [`Api`], its arm in `Api::rules`,
//!    and the variant in [`Api::ALL`];
//! 3. if its requests go to a provider other than Anthropic's and OpenAI's, route them (see
//!    [Where a request goes](#where-a-request-goes)) to an upstream of its own.
//!
//! The Python package's `compress_request(api=…)` and `recovery_tool(api=…)` name it by its
//! [`Api::short_name`] with no change of their own.
//!
//! # Kill switch
//!
//! Built without a host ([`Server::bind`] with `None`, what `parrot-compress serve` does when
//! `PARROT_COMPRESSION_DISABLED=1`), the proxy is a pure relay: no body is read, nothing added.

mod api;
pub mod llm;
#[cfg(feature = "proxy")]
mod merge;
pub mod recovery;
#[cfg(feature = "proxy")]
mod relay;
#[cfg(feature = "proxy")]
mod server;
#[cfg(feature = "proxy")]
mod stream;

pub use llm::Api;
pub use parrot_recover::RECOVERY_TOOL;
#[cfg(feature = "proxy")]
pub(crate) use server::State;
#[cfg(feature = "proxy")]
pub use server::{
    CONNECT_TIMEOUT, Config, DEFAULT_ANTHROPIC, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_LISTEN,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS, DEFAULT_OPENAI, MAX_ROUNDS, RESPONSE_TIMEOUT,
    ServeError, Server, Upstream, run_until_signal,
};
