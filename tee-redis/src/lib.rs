//! parrot-tee-redis: the shared tee store of parrot-compress, originals kept in Redis
//! ([`RedisTeeStore`]), so that a pointer written by a host on one machine resolves on any other
//! that reaches the same Redis.
//!
//! A crate of its own so that a program over `parrot-host` that does not share its originals
//! compiles no Redis client. The store is a [`parrot_tee::TeeStore`] like any, and needs
//! nothing of the host: give it to `parrot_host::HostBuilder::tee_store`. The feature `tls`
//! adds `rediss://` (Redis over TLS, with rustls and its ring provider: a C and assembly build
//! that plain `redis://` does not need).
#![forbid(unsafe_code)]

mod error;

pub use error::{RedisFailure, RedisTeeError};

use std::fmt;
use std::net::ToSocketAddrs;
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use redis::{Client, Connection, IntoConnectionInfo, RedisError};

use parrot_tee::{Retention, TeeError, TeeStats, TeeStore, mask_password};

/// The environment variable holding the password of a store URL that carries none.
pub const REDIS_PASSWORD_ENV: &str = "PARROT_TEE_REDIS_PASSWORD";

/// Stores `ARGV[1]` under `KEYS[1]` unless the key is taken, in one step on the server: 1 when
/// stored; 2 when the key already held exactly these bytes (its expiry renewed, as a put of
/// them counts as just stored); 0 when it holds other bytes (left as they are). `ARGV[2]` is
/// the expiry in milliseconds, 0 for none.
const PUT: &str = r"
local ttl = tonumber(ARGV[2])
local stored
if ttl > 0 then
  stored = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl)
else
  stored = redis.call('SET', KEYS[1], ARGV[1], 'NX')
end
if stored then return 1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 2
";

/// At most this many connections wait between calls; a burst of threads opens more, and those
/// are closed after their call.
const MAX_IDLE: usize = 8;

/// After a failure to reach Redis, calls fail at once for this long, doubling with each
/// further failure up to [`MAX_BACKOFF`]; the first call after it tries again.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// The longest wait between two attempts to reach Redis: a store comes back within about a
/// second of Redis coming back.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// How a [`RedisTeeStore`] names and keeps its keys, and how long it waits for Redis.
///
/// Read from the store URL's query (`?prefix=team-a:&ttl=86400&timeout_ms=250`: a slower link's deadline), or set on
/// [`RedisTeeStore::open_with`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use parrot_tee::Retention;
/// use parrot_tee_redis::RedisSettings;
///
/// let settings = RedisSettings::default();
/// assert_eq!(settings.prefix, "parrot:");
/// assert_eq!(settings.ttl, Retention::default().max_age, "the SQLite store's age limit");
/// assert_eq!(settings.connect_timeout, Duration::from_millis(50));
/// assert_eq!(settings.timeout, Duration::from_millis(25));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisSettings {
    /// Put before every tee key (`parrot:__tee__:tool:5e7f4481d0cd`), so that several projects
    /// can share one Redis database. URL parameter `prefix`; may be empty.
    pub prefix: String,
    /// How long an original is kept after its last put: the key's expiry in Redis. `None`
    /// keeps it until Redis evicts it. URL parameter `ttl`, in seconds (`0`: none).
    pub ttl: Option<Duration>,
    /// The longest wait for a connection to Redis. URL parameter `connect_timeout_ms`.
    pub connect_timeout: Duration,
    /// The longest wait for Redis to accept a request's bytes, and again for its answer.
    /// URL parameter `timeout_ms`.
    pub timeout: Duration,
}

impl RedisSettings {
    /// The default `prefix`.
    pub const DEFAULT_PREFIX: &str = "parrot:";

    /// The default `connect_timeout`. With [`Self::DEFAULT_TIMEOUT`] each way, a stuck Redis
    /// holds a call at most 100 ms, the pipeline's budget for a call on its executor.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_millis(50);

    /// The default `timeout` (on a LAN a put of 1 MB takes a few milliseconds; a slower link
    /// sets its own in the URL).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(25);
}

impl Default for RedisSettings {
    fn default() -> RedisSettings {
        RedisSettings {
            prefix: RedisSettings::DEFAULT_PREFIX.to_owned(),
            ttl: Retention::DEFAULT_MAX_AGE.into(),
            connect_timeout: RedisSettings::DEFAULT_CONNECT_TIMEOUT,
            timeout: RedisSettings::DEFAULT_TIMEOUT,
        }
    }
}

/// A tee store in Redis, shared by every process on every machine that reaches it.
///
/// Selected by URL: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?PARAMS]`, or `rediss://` for
/// TLS (feature `tls`). The port defaults to 6379 and the database to 0. A URL
/// without a password takes the one in `PARROT_TEE_REDIS_PASSWORD`, if set. `PARAMS` are those
/// of [`RedisSettings`]: `prefix`, `ttl`, `connect_timeout_ms`, `timeout_ms`. The store's
/// [`TeeStore::name`], which every message uses, is the URL with its password masked
/// (`redis://:***@cache:6379/2`).
///
/// # Keys
///
/// Each original is one Redis string at `prefix` + its tee key. A put is one script run on the
/// server, atomic: `SET … NX` stores it when the key is free; when the key holds exactly these
/// bytes the put succeeds and renews the key's expiry; when it holds other bytes the put returns
/// [`TeeError::KeyExists`] and changes nothing. A get returns the bytes stored, or `None`.
///
/// # Retention
///
/// By age: every key expires `ttl` after its last put (default 7 days, as the SQLite store's
/// `max_age`). By size: Redis's own `maxmemory` is the bound, set by whoever runs Redis. Under
/// `maxmemory-policy volatile-ttl` Redis evicts the keys closest to expiry first, which with one
/// ttl for every key is the oldest first; under the default, `noeviction`, a full Redis refuses
/// puts (`OOM`), each of which then fails and its result goes out uncompressed, and nothing
/// stored is lost. There is no entry limit. Durability across a restart of Redis is Redis's
/// persistence (`appendonly yes` keeps every acknowledged put).
///
/// # Fork
///
/// A process forked from one that holds the store (Python's `multiprocessing` with the `fork`
/// start method, a pre-forking server) opens connections of its own: the idle ones it copied
/// are the parent's sockets, closed in the child at its first call (the parent's stay open).
///
/// # Faults
///
/// No call waits longer than its deadline: a connection is given `connect_timeout`, and each
/// request `timeout` to be sent and `timeout` again for its answer. A call that cannot reach
/// Redis (refused, dropped, timed out) fails with [`RedisTeeError::Put`] or
/// [`RedisTeeError::Get`] (in a [`TeeError::Backend`]), and the host sends that result out
/// uncompressed (`tee_failed`). Then calls fail at once, without waiting, for 50 ms, doubling
/// with each further failure up to 1 s, and the next call after that connects again: when
/// Redis is back, the store is too. An
/// answer that is an error (`OOM`, `READONLY` from a replica) fails that call alone. A
/// connection that was idle and turns out closed (Redis restarted) is replaced once, at no cost
/// to the call.
///
/// Opening checks the URL, resolves the host and connects once. A URL that cannot be read, a
/// host that does not resolve, or a server that refuses the credentials is an error then; a
/// Redis that cannot be reached is not (one warning; the store opens, and its calls fail until
/// Redis answers).
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use parrot_host::Host;
/// use parrot_tee_redis::RedisTeeStore;
///
/// let store = RedisTeeStore::open("redis://127.0.0.1:6379/0?prefix=team-a:")?;
/// let host = Host::builder().tee_store(Arc::new(store)).build().unwrap();
/// # Ok::<(), parrot_tee_redis::RedisTeeError>(())
/// ```
pub struct RedisTeeStore {
    client: Client,
    name: String,
    settings: RedisSettings,
    idle: Mutex<Idle>,
    health: Mutex<Health>,
}

/// The connections waiting between calls, and the process that opened them.
///
/// A process forked from this one (Python's `multiprocessing` with the `fork` start method, a
/// pre-forking server) holds copies of them: the same sockets as its parent's. Two processes
/// writing requests on one socket would read each other's answers, so a process finds only the
/// connections it opened itself ([`RedisTeeStore::idle`]).
#[derive(Default)]
struct Idle {
    pid: u32,
    connections: Vec<Connection>,
}

/// Whether Redis was reachable at the last attempt, and when to try again if not.
#[derive(Debug, Default)]
struct Health {
    failures: u32,
    retry_at: Option<Instant>,
    last: String,
}

impl RedisTeeStore {
    /// Opens the store at `url`, with the settings its query gives (the defaults of
    /// [`RedisSettings`] for the others) and, when the URL carries no password, the one in
    /// `PARROT_TEE_REDIS_PASSWORD`.
    ///
    /// # Errors
    ///
    /// [`RedisTeeError::Url`] for a URL that is not a Redis store's (its scheme, host, port,
    /// database or a parameter), or `rediss://` in a build without TLS; [`RedisTeeError::Open`]
    /// when its host does not resolve or Redis refuses the credentials.
    pub fn open(url: &str) -> Result<RedisTeeStore, RedisTeeError> {
        let password = std::env::var(REDIS_PASSWORD_ENV).ok();
        let (target, settings) = Target::parse(url, RedisSettings::default())?;
        RedisTeeStore::connect(target, settings, password)
    }

    /// [`RedisTeeStore::open`] with `settings` in place of the defaults (the URL's query still
    /// overrides them) and `password` in place of `PARROT_TEE_REDIS_PASSWORD` (a password in the
    /// URL wins).
    ///
    /// # Errors
    ///
    /// As [`RedisTeeStore::open`].
    pub fn open_with(
        url: &str,
        settings: RedisSettings,
        password: Option<&str>,
    ) -> Result<RedisTeeStore, RedisTeeError> {
        let (target, settings) = Target::parse(url, settings)?;
        RedisTeeStore::connect(target, settings, password.map(str::to_owned))
    }

    fn connect(
        target: Target,
        settings: RedisSettings,
        password: Option<String>,
    ) -> Result<RedisTeeStore, RedisTeeError> {
        let Target {
            name,
            address,
            host,
            port,
        } = target;
        let url_error = |reason: String| RedisTeeError::Url {
            url: name.clone(),
            reason,
        };
        let mut info = address
            .as_str()
            .into_connection_info()
            .map_err(|err| url_error(err.to_string()))?;
        if info.redis_settings().password().is_none()
            && let Some(password) = password.filter(|p| !p.is_empty())
        {
            let redis = info.redis_settings().clone().set_password(password);
            info = info.set_redis_settings(redis);
        }
        let redis = info.redis_settings().clone().set_skip_set_lib_name();
        info = info.set_redis_settings(redis);
        #[cfg(feature = "tls")]
        {
            // The one provider this build has; an error means one is installed already.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let client = Client::open(info).map_err(|err| url_error(err.to_string()))?;
        let store = RedisTeeStore {
            client,
            name,
            settings,
            idle: Mutex::default(),
            health: Mutex::default(),
        };
        store.check_host(&host, port)?;
        let pinged = store.connection().and_then(|mut connection| {
            redis::cmd("PING")
                .query::<String>(&mut connection)
                .map(|_| connection)
        });
        match pinged {
            Ok(connection) => store.keep(connection),
            Err(err) if refuses_credentials(&err) => {
                return Err(RedisTeeError::Open {
                    store: store.name.clone(),
                    source: RedisFailure::Credentials { source: err },
                });
            }
            Err(err) => {
                // No backoff yet: the first call tries again, and fails with its own reason.
                tracing::warn!(
                    "tee store {}: cannot reach Redis ({err}); lossy results go out \
                     uncompressed until it answers",
                    store.name
                );
            }
        }
        Ok(store)
    }

    /// The settings the store runs with.
    pub fn settings(&self) -> &RedisSettings {
        &self.settings
    }

    /// What the store holds now: the keys under its prefix, the bytes of their originals, and
    /// when the oldest was stored or last renewed (from its remaining time to live; `None` when
    /// the store is empty or keeps keys without expiry). Walks the keys with `SCAN`, a few
    /// hundred at a time, so Redis goes on serving others meanwhile.
    ///
    /// # Errors
    ///
    /// [`TeeError::Backend`] holding [`RedisTeeError::Stats`] when Redis cannot be reached or
    /// answers with an error.
    pub fn stats(&self) -> Result<TeeStats, TeeError> {
        let pattern = format!("{}*", glob_escape(&self.settings.prefix));
        let ttl = self.settings.ttl;
        let now = SystemTime::now();
        self.call(|connection| {
            let mut stats = TeeStats::new(0, 0, None);
            let mut cursor = 0u64;
            loop {
                let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(500)
                    .query(connection)?;
                if !keys.is_empty() {
                    let mut pipe = redis::pipe();
                    for key in &keys {
                        pipe.cmd("STRLEN").arg(key).cmd("PTTL").arg(key);
                    }
                    let answers: Vec<i64> = pipe.query(connection)?;
                    for pair in answers.chunks(2) {
                        let [size, left] = pair else { continue };
                        if *left == -2 {
                            continue; // expired between SCAN and PTTL
                        }
                        stats.entries += 1;
                        stats.bytes += u64::try_from(*size).unwrap_or(0);
                        if let (Some(ttl), Ok(left)) = (ttl, u64::try_from(*left)) {
                            let age = ttl.saturating_sub(Duration::from_millis(left));
                            let at = now.checked_sub(age).unwrap_or(now);
                            stats.oldest = Some(stats.oldest.map_or(at, |o: SystemTime| o.min(at)));
                        }
                    }
                }
                if next == 0 {
                    return Ok(stats);
                }
                cursor = next;
            }
        })
        .map_err(|source| self.failed_call(RedisTeeError::Stats { source }))
    }

    /// Runs `request` on a connection: an idle one, else a new one. A call that cannot reach
    /// Redis starts (or extends) the backoff; one that finds an idle connection closed tries
    /// once more on a new one.
    fn call<T>(
        &self,
        mut request: impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, RedisFailure> {
        self.ready()?;
        let idle = self.idle().connections.pop();
        let reused = idle.is_some();
        let mut connection = match idle {
            Some(connection) => connection,
            None => self.connection().map_err(|err| self.failed(&err))?,
        };
        let err = match request(&mut connection) {
            Ok(answer) => {
                self.keep(connection);
                self.healthy();
                return Ok(answer);
            }
            Err(err) => err,
        };
        if !unreachable(&err) {
            // Redis answered, with an error: the connection is as good as before.
            self.keep(connection);
            self.healthy();
            return Err(RedisFailure::Redis { source: err });
        }
        drop(connection);
        if !(reused && err.is_connection_dropped()) {
            return Err(self.failed(&err));
        }
        // The idle connection was closed while it waited (Redis restarted, or closed it):
        // the request never reached Redis. Every other idle one is likely closed too.
        self.idle().connections.clear();
        let mut connection = self.connection().map_err(|err| self.failed(&err))?;
        match request(&mut connection) {
            Ok(answer) => {
                self.keep(connection);
                self.healthy();
                Ok(answer)
            }
            Err(err) if !unreachable(&err) => {
                self.keep(connection);
                Err(RedisFailure::Redis { source: err })
            }
            Err(err) => Err(self.failed(&err)),
        }
    }

    /// A new connection, with the store's timeouts.
    fn connection(&self) -> redis::RedisResult<Connection> {
        let connection = self
            .client
            .get_connection_with_timeout(self.settings.connect_timeout)?;
        connection.set_read_timeout(Some(self.settings.timeout))?;
        connection.set_write_timeout(Some(self.settings.timeout))?;
        Ok(connection)
    }

    /// Fails at once while the backoff after a failure lasts.
    fn ready(&self) -> Result<(), RedisFailure> {
        let health = self.health();
        match health.retry_at {
            Some(at) => {
                let now = Instant::now();
                if now < at {
                    Err(RedisFailure::Backoff {
                        retry_in: at - now,
                        last: health.last.clone(),
                    })
                } else {
                    Ok(())
                }
            }
            None => Ok(()),
        }
    }

    /// Records a failure to reach Redis: the idle connections go, and the backoff grows.
    fn failed(&self, err: &RedisError) -> RedisFailure {
        self.idle().connections.clear();
        let mut health = self.health();
        health.failures = health.failures.saturating_add(1);
        let wait = FIRST_BACKOFF
            .saturating_mul(1 << (health.failures - 1).min(16))
            .min(MAX_BACKOFF);
        health.retry_at = Some(Instant::now() + wait);
        health.last = err.to_string();
        RedisFailure::Redis {
            source: err.clone(),
        }
    }

    fn healthy(&self) {
        let mut health = self.health();
        if health.failures > 0 {
            tracing::info!("tee store {}: Redis answers again", self.name);
        }
        *health = Health::default();
    }

    fn keep(&self, connection: Connection) {
        let mut idle = self.idle();
        if idle.connections.len() < MAX_IDLE {
            idle.connections.push(connection);
        }
    }

    /// Refuses a host name that does not resolve (a typo, not an outage). The lookup is given
    /// the connect timeout; a resolver that does not answer by then counts as an outage.
    fn check_host(&self, host: &str, port: u16) -> Result<(), RedisTeeError> {
        if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
            return Ok(());
        }
        let (tx, rx) = mpsc::channel();
        let lookup = (host.to_owned(), port);
        std::thread::spawn(move || {
            let _ = tx.send(
                lookup
                    .to_socket_addrs()
                    .map(|mut addrs| addrs.next().is_some()),
            );
        });
        match rx.recv_timeout(self.settings.connect_timeout.max(Duration::from_secs(1))) {
            Ok(Ok(true)) | Err(_) => Ok(()),
            Ok(Ok(false)) => Err(RedisTeeError::Open {
                store: self.name.clone(),
                source: RedisFailure::Resolve {
                    host: host.to_owned(),
                    reason: "no address".to_owned(),
                },
            }),
            Ok(Err(err)) => Err(RedisTeeError::Open {
                store: self.name.clone(),
                source: RedisFailure::Resolve {
                    host: host.to_owned(),
                    reason: err.to_string(),
                },
            }),
        }
    }

    /// `err` as the store's failure, naming the store.
    fn failed_call(&self, err: RedisTeeError) -> TeeError {
        TeeError::Backend {
            store: self.name.clone(),
            source: Box::new(err),
        }
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.settings.prefix)
    }

    /// The idle connections of this process: those a parent process opened before forking
    /// this one are closed here first (closing a copy leaves the parent's socket open).
    fn idle(&self) -> MutexGuard<'_, Idle> {
        // A connection is pushed or popped whole; a poisoned lock guards a usable list.
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let pid = std::process::id();
        if idle.pid != pid {
            idle.connections.clear();
            idle.pid = pid;
        }
        idle
    }

    fn health(&self) -> MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TeeStore for RedisTeeStore {
    fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
        let ttl_ms = self.settings.ttl.map_or(0, |ttl| {
            u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
        });
        let stored_key = self.key(key);
        let stored = self.call(|connection| {
            redis::cmd("EVAL")
                .arg(PUT)
                .arg(1)
                .arg(&stored_key)
                .arg(original)
                .arg(ttl_ms)
                .query::<i64>(connection)
        });
        match stored {
            Ok(1 | 2) => Ok(()),
            Ok(_) => Err(TeeError::KeyExists {
                key: key.to_owned(),
            }),
            Err(source) => Err(self.failed_call(RedisTeeError::Put {
                key: key.to_owned(),
                source,
            })),
        }
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        let stored_key = self.key(key);
        self.call(|connection| {
            redis::cmd("GET")
                .arg(&stored_key)
                .query::<Option<Vec<u8>>>(connection)
        })
        .map_err(|source| {
            self.failed_call(RedisTeeError::Get {
                key: key.to_owned(),
                source,
            })
        })
    }

    /// The keys under the store's prefix, the prefix taken off, walked with `SCAN` as
    /// [`RedisTeeStore::stats`] does; a key that is not UTF-8 is none of a host's, and is left
    /// out.
    fn keys(&self) -> Result<Option<Vec<String>>, TeeError> {
        let pattern = format!("{}*", glob_escape(&self.settings.prefix));
        let prefix = self.settings.prefix.as_bytes();
        self.call(|connection| {
            let mut found = Vec::new();
            let mut cursor = 0u64;
            loop {
                let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(500)
                    .query(connection)?;
                found.extend(keys.into_iter().filter_map(|key| {
                    let key = key.strip_prefix(prefix)?;
                    String::from_utf8(key.to_vec()).ok()
                }));
                if next == 0 {
                    return Ok(Some(found));
                }
                cursor = next;
            }
        })
        .map_err(|source| self.failed_call(RedisTeeError::Keys { source }))
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

impl fmt::Debug for RedisTeeStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTeeStore")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Whether `err` says Redis could not be reached or did not answer in time, rather than
/// answering with an error.
fn unreachable(err: &RedisError) -> bool {
    err.is_io_error()
        || err.is_timeout()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
}

/// Whether connecting failed because Redis refused the credentials (or needs some).
fn refuses_credentials(err: &RedisError) -> bool {
    matches!(err.kind(), redis::ErrorKind::AuthenticationFailed)
        || matches!(err.code(), Some("WRONGPASS" | "NOAUTH" | "NOPERM"))
}

/// A Redis store URL, read.
struct Target {
    /// The URL with its password masked.
    name: String,
    /// The URL as the client reads it: no query, no fragment.
    address: String,
    host: String,
    port: u16,
}

impl Target {
    /// Reads `url`, its query applied over `settings`.
    fn parse(
        url: &str,
        mut settings: RedisSettings,
    ) -> Result<(Target, RedisSettings), RedisTeeError> {
        let name = mask_password(url);
        let error = |reason: String| RedisTeeError::Url {
            url: name.clone(),
            reason,
        };
        let mut parsed = url::Url::parse(url).map_err(|err| error(err.to_string()))?;
        check_scheme(parsed.scheme()).map_err(error)?;
        let (host, port) = host_and_port(&parsed).map_err(error)?;
        apply_query(&parsed, &mut settings).map_err(error)?;
        parsed.set_query(None);
        parsed.set_fragment(None);
        Ok((
            Target {
                name,
                address: parsed.into(),
                host,
                port,
            },
            settings,
        ))
    }
}

/// Why a store URL's `scheme` is not one this build reads, if it is not.
fn check_scheme(scheme: &str) -> Result<(), String> {
    match scheme {
        "redis" => Ok(()),
        "rediss" if cfg!(feature = "tls") => Ok(()),
        "rediss" => Err(
            "rediss:// (Redis over TLS) is not in this build; build parrot-tee-redis \
             with the feature tls (parrot-compress: redis-tls)"
                .to_owned(),
        ),
        other => Err(format!(
            "unsupported scheme \"{other}\" (expected redis:// or rediss://)"
        )),
    }
}

/// The host and port of a store URL (6379 when it names none), its database checked a number.
fn host_and_port(parsed: &url::Url) -> Result<(String, u16), String> {
    let host = match parsed.host_str() {
        Some(host) if !host.is_empty() => host.to_owned(),
        _ => return Err("no host (expected redis://HOST[:PORT][/DB])".to_owned()),
    };
    let port = parsed.port().unwrap_or(6379);
    if port == 0 {
        return Err("port 0 (expected 1-65535)".to_owned());
    }
    let db = parsed.path().trim_start_matches('/');
    if !db.is_empty() && db.parse::<u16>().is_err() {
        return Err(format!(
            "database \"{db}\" is not a number (expected /0, /1, …)"
        ));
    }
    Ok((host, port))
}

/// Applies the parameters of a store URL's query over `settings`, in order.
fn apply_query(parsed: &url::Url, settings: &mut RedisSettings) -> Result<(), String> {
    for (param, value) in parsed.query_pairs() {
        let millis = |value: &str| -> Result<Duration, String> {
            match value.parse::<u64>() {
                Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
                _ => Err(format!(
                    "parameter \"{param}\": expected a positive number of milliseconds, got \"{value}\""
                )),
            }
        };
        match &*param {
            "prefix" => settings.prefix = value.into_owned(),
            "ttl" => {
                settings.ttl = match value.parse::<u64>() {
                    Ok(0) => None,
                    Ok(secs) => Some(Duration::from_secs(secs)),
                    Err(_) => {
                        return Err(format!(
                            "parameter \"ttl\": expected seconds (0: no expiry), got \"{value}\""
                        ));
                    }
                }
            }
            "timeout_ms" => settings.timeout = millis(&value)?,
            "connect_timeout_ms" => settings.connect_timeout = millis(&value)?,
            other => {
                return Err(format!(
                    "unknown parameter \"{other}\" (known: prefix, ttl, timeout_ms, \
                     connect_timeout_ms)"
                ));
            }
        }
    }
    Ok(())
}

/// `text` with the characters `SCAN … MATCH` reads as a pattern escaped.
fn glob_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_sets_each_setting_and_a_bad_one_is_named() {
        let (target, settings) = Target::parse(
            "redis://:pw@localhost:7000/3?prefix=team-a:&ttl=60&timeout_ms=20&connect_timeout_ms=30",
            RedisSettings::default(),
        )
        .unwrap();
        assert_eq!(
            target.name,
            "redis://:***@localhost:7000/3?prefix=team-a:&ttl=60&timeout_ms=20&connect_timeout_ms=30"
        );
        assert_eq!(target.address, "redis://:pw@localhost:7000/3");
        assert_eq!((target.host.as_str(), target.port), ("localhost", 7000));
        assert_eq!(settings.prefix, "team-a:");
        assert_eq!(settings.ttl, Some(Duration::from_secs(60)));
        assert_eq!(settings.timeout, Duration::from_millis(20));
        assert_eq!(settings.connect_timeout, Duration::from_millis(30));
        let (_, settings) =
            Target::parse("redis://h?ttl=0&prefix=", RedisSettings::default()).unwrap();
        assert_eq!((settings.ttl, settings.prefix.as_str()), (None, ""));

        let refused = [
            (
                "http://:pw@h:1",
                "tee store URL http://:***@h:1: unsupported scheme \"http\" (expected redis:// or rediss://)",
            ),
            (
                "redis://:pw@/0",
                "tee store URL redis://:***@/0: empty host",
            ),
            (
                "redis://:pw@h/x",
                "tee store URL redis://:***@h/x: database \"x\" is not a number (expected /0, /1, …)",
            ),
            (
                "redis://h?tll=5",
                "tee store URL redis://h?tll=5: unknown parameter \"tll\" (known: prefix, ttl, timeout_ms, connect_timeout_ms)",
            ),
            (
                "redis://h?ttl=-1",
                "tee store URL redis://h?ttl=-1: parameter \"ttl\": expected seconds (0: no expiry), got \"-1\"",
            ),
            (
                "redis://h?timeout_ms=0",
                "tee store URL redis://h?timeout_ms=0: parameter \"timeout_ms\": expected a positive number of milliseconds, got \"0\"",
            ),
            (
                "redis://h:99999",
                "tee store URL redis://h:99999: invalid port number",
            ),
        ];
        for (url, message) in refused {
            let err = Target::parse(url, RedisSettings::default()).err().unwrap();
            assert_eq!(err.to_string(), message, "{url}");
        }
    }

    #[test]
    fn scan_patterns_match_the_prefix_literally() {
        assert_eq!(glob_escape("a*b?[c]\\:"), "a\\*b\\?\\[c\\]\\\\:");
    }
}
