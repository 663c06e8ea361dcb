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
//! byte, in its later requests; a Chat Completions or Responses client receives the last
//! answer only, and the proxy's turns go back just before it in later requests. See [`recovery`] for each API's turns, what happens to an answer that mixes the
//! proxy's tool with the client's, and streamed answers.
//!
//! # Whose originals
//!
//! Each request's originals are stored in the namespace of its API key (`x-api-key`, else the
//! credentials of `authorization`: a bearer token, or the whole value of another scheme), derived
//! with [`parrot_host::Namespace::of_secret`] and never stored; the recovery calls in its answers
//! are answered from that namespace alone ([`parrot_recover::Recover::recover_for_model_in`]), and the
//! recoveries put back into later requests are recorded and put back under it. A key of another
//! client's original is a tool error, `no original is stored under "<key>"`, the same as a key
//! nobody holds. A request with neither header is unscoped: its originals are stored under the
//! plain key, which no keyed request reads, and it reads none of theirs.
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
//! # Kill switch
//!
//! Built without a host ([`Server::bind`] with `None`, what `parrot-compress serve` does when
//! `PARROT_COMPRESSION_DISABLED=1`), the proxy is a pure relay: no body is read, nothing added.

pub mod llm;
mod merge;
pub mod recovery;
mod relay;
mod stream;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use parrot_host::Host;

pub use llm::Api;
pub use parrot_recover::RECOVERY_TOOL;
pub use relay::Upstream;

/// The address `parrot-compress serve` listens on by default.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// The Anthropic API, the default upstream of Anthropic requests.
pub const DEFAULT_ANTHROPIC: &str = "https://api.anthropic.com";

/// The OpenAI API, the default upstream of every other request.
pub const DEFAULT_OPENAI: &str = "https://api.openai.com";

/// How long connecting to an upstream may take before the request is answered with a 502.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an upstream may take to send a response's headers (a model answering without
/// streaming can think for minutes) before the request is answered with a 502.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(600);

/// How many follow-up requests the proxy sends for one client request when the model keeps
/// calling [`RECOVERY_TOOL`]; after the last, the answer goes to the client as it is.
pub const MAX_ROUNDS: usize = 4;

/// The default for [`Config::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// The default for [`Config::header_read_timeout`]: hyper's own.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long running requests have to finish once the server is told to stop.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The default bound of a request body the proxy reads to rewrite: 32 MiB, the Anthropic
/// Messages API's own limit for a request.
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// What the proxy listens on and forwards to.
#[derive(Debug, Clone)]
pub struct Config {
    /// The address to listen on (port 0: any free port; [`Server::local_addr`] says which).
    pub listen: SocketAddr,
    /// Where Anthropic requests go.
    pub anthropic: Upstream,
    /// Where every other request goes.
    pub openai: Upstream,
    /// The tokenizer's name, for the report when there is no host (the kill switch).
    pub tokenizer: String,
    /// The largest request body the proxy reads to rewrite ([`DEFAULT_MAX_BODY_BYTES`] by
    /// default); a longer one is answered `413` (before it is read, when its `Content-Length`
    /// says so). Bodies the proxy does not rewrite are streamed, whatever their size.
    pub max_body_bytes: usize,
    /// How many client connections may be open at once ([`DEFAULT_MAX_CONNECTIONS`] by default,
    /// under a process's usual limit of 1,024 open files, with room for the upstream
    /// connections); one more is closed as soon as it is accepted, with a warning.
    pub max_connections: usize,
    /// How long a client has to send a request's headers, counted from when the connection is
    /// ready for them: a new connection, or one kept alive after an answer
    /// ([`DEFAULT_HEADER_READ_TIMEOUT`] by default). A connection that sends nothing, or its
    /// headers too slowly, is closed then.
    pub header_read_timeout: Duration,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The TLS client for the upstreams could not be set up.
    #[error("cannot set up TLS for the upstreams: {0}")]
    Tls(rustls::Error),
    /// The async runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// Everything a request handler needs.
pub(crate) struct State {
    pub(crate) host: Option<Arc<Host>>,
    pub(crate) anthropic: Upstream,
    pub(crate) openai: Upstream,
    pub(crate) client: relay::Client,
    pub(crate) tokenizer: String,
    /// The address the server listens on (a Host the report answers, besides loopback names).
    pub(crate) listen: SocketAddr,
    /// The merged messages sent (what [`merge::Merges::reinsert`] puts back).
    pub(crate) merges: merge::Merges,
    /// [`Config::max_body_bytes`].
    pub(crate) max_body_bytes: usize,
    /// [`Config::max_connections`] and [`Config::header_read_timeout`].
    pub(crate) max_connections: usize,
    pub(crate) header_read_timeout: Duration,
}

/// A bound server, ready to [`run`](Server::run).
pub struct Server {
    listener: tokio::net::TcpListener,
    state: Arc<State>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listen", &self.listener.local_addr().ok())
            .field("anthropic", &self.state.anthropic)
            .field("openai", &self.state.openai)
            .field("compressing", &self.state.host.is_some())
            .finish()
    }
}

impl Server {
    /// Binds `config.listen`. With `host`, requests are rewritten through it; without, the
    /// server is a pure relay (the kill switch). Call from within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`ServeError::Bind`] when the address cannot be bound.
    pub async fn bind(config: Config, host: Option<Arc<Host>>) -> Result<Server, ServeError> {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| ServeError::Bind {
                addr: config.listen,
                source,
            })?;
        let listen = listener.local_addr().unwrap_or(config.listen);
        Ok(Server {
            listener,
            state: Arc::new(State {
                host,
                anthropic: config.anthropic,
                openai: config.openai,
                client: relay::client().map_err(ServeError::Tls)?,
                tokenizer: config.tokenizer,
                max_body_bytes: config.max_body_bytes,
                max_connections: config.max_connections,
                header_read_timeout: config.header_read_timeout,
                listen,
                merges: merge::Merges::default(),
            }),
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Serves until `shutdown` completes, then stops accepting and gives running requests
    /// five seconds to finish.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()>) {
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        let slots = Arc::new(tokio::sync::Semaphore::new(self.state.max_connections));
        // One warning per burst of refused connections, not one per connection.
        let mut refused = 0usize;
        loop {
            let (stream, peer) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(err) => {
                        // Out of file descriptors and the like: wait, and go on.
                        tracing::warn!("serve: cannot accept a connection: {err}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                if refused == 0 {
                    tracing::warn!(
                        "serve: {} connections open, the most allowed (--max-connections): \
                         closing new ones until one ends (the first from {peer})",
                        self.state.max_connections
                    );
                }
                refused += 1;
                drop(stream);
                continue;
            };
            if refused > 0 {
                tracing::warn!("serve: {refused} connections were closed at the limit");
                refused = 0;
            }
            let _ = stream.set_nodelay(true);
            let state = Arc::clone(&self.state);
            let service = service_fn(move |request| {
                let state = Arc::clone(&state);
                async move { Ok::<_, Infallible>(relay::handle(state, request).await) }
            });
            let connection = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(self.state.header_read_timeout)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                let _slot = slot;
                if let Err(err) = connection.await {
                    tracing::debug!("serve: connection from {peer}: {err}");
                }
            });
        }
        drop(self.listener);
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    }
}

/// Runs the proxy on a runtime of its own until SIGINT or SIGTERM (Ctrl-C elsewhere), calling
/// `bound` with the listening address once it listens (to print it).
///
/// # Errors
///
/// [`ServeError`] when the runtime cannot start or the address cannot be bound.
pub fn run_until_signal(
    config: Config,
    host: Option<Arc<Host>>,
    bound: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        let server = Server::bind(config, host).await?;
        bound(server.local_addr());
        server.run(stop_signal()).await;
        Ok(())
    })
}

/// Completes on SIGINT or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut interrupt), Ok(mut terminate)) => {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
