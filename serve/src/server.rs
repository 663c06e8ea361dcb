//! The proxy itself: its configuration, the listening server, and the signal that stops it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::{merge, relay};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use parrot_host::Host;

pub use crate::relay::Upstream;

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
/// calling [`crate::RECOVERY_TOOL`]; after the last, the answer goes to the client as it is.
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
    /// Whether requests without a credential share one scope (`false` by default). A request's
    /// credential (its API key or token, in any header the proxied APIs read, or Gemini's
    /// `?key=`) keeps its originals, recoveries and merges to the requests with the same
    /// credential. Without one, a request is alone by default: its originals are stored in a
    /// namespace of its own, new for the request, which only its own recovery rounds read, and
    /// the recoveries answered for it are not put back in later requests. With `true` (`serve
    /// --shared-unscoped`), every request without a credential stores its originals under the
    /// plain key and reads any other such request's, and the recoveries answered for one are put
    /// back in another's: for an operator whose clients without a credential are all one user's
    /// (a local model with no key), who wants a conversation's recoveries kept from one request
    /// to the next.
    pub shared_unscoped: bool,
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
    /// The recoveries answered, by conversation (what [`merge::Merges::reinsert`] puts back),
    /// kept in the host's tee store.
    pub(crate) merges: merge::Merges,
    /// [`Config::max_body_bytes`].
    pub(crate) max_body_bytes: usize,
    /// [`Config::max_connections`] and [`Config::header_read_timeout`].
    pub(crate) max_connections: usize,
    pub(crate) header_read_timeout: Duration,
    /// [`Config::shared_unscoped`].
    pub(crate) shared_unscoped: bool,
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
        let merges = merge::Merges::new(host.clone());
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
                shared_unscoped: config.shared_unscoped,
                listen,
                merges,
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
