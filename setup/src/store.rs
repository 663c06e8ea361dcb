//! The tee store a host is set up with, from [`Settings::tee_store`], [`Settings::no_tee`] and
//! the project folder.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use parrot_host::{Retention, TeeError, TeeStore};
#[cfg(feature = "redis")]
use parrot_tee_redis::{RedisTeeError, RedisTeeStore};
use parrot_tee_sqlite::SqliteTeeStore;

use crate::{Settings, SetupError};

/// Where the persistent tee store of `settings` is: a file, or a URL (a value with `://` in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreAt {
    /// A SQLite file.
    File(PathBuf),
    /// A URL (`redis://…`).
    Url(String),
}

impl StoreAt {
    /// Where the persistent tee store of `settings` is.
    pub fn of(settings: &Settings) -> StoreAt {
        match &settings.tee_store {
            Some(given) => match given.to_str() {
                Some(url) if url.contains("://") => StoreAt::Url(url.to_owned()),
                _ => StoreAt::File(given.clone()),
            },
            None => StoreAt::File(settings.project_dir().join(".parrot").join("tee.db")),
        }
    }
}

/// The persistent tee store of a host's settings, opened (a file is created on first use).
pub enum Persistent {
    /// A SQLite file.
    Sqlite(SqliteTeeStore),
    /// A Redis store.
    #[cfg(feature = "redis")]
    Redis(RedisTeeStore),
}

impl Persistent {
    /// The store, to be shared by a host and its callers.
    pub fn shared(self) -> Arc<dyn TeeStore> {
        match self {
            Persistent::Sqlite(store) => Arc::new(store),
            #[cfg(feature = "redis")]
            Persistent::Redis(store) => Arc::new(store),
        }
    }
}

/// Opens the store at `url`.
///
/// # Errors
///
/// A URL that cannot be used is [`SetupError::Config`] (bad usage, exit 2); a Redis that
/// refuses the credentials or a host that does not resolve is [`SetupError::Runtime`] (exit 1).
#[cfg(feature = "redis")]
pub fn open_url(url: &str) -> Result<Persistent, SetupError> {
    match RedisTeeStore::open(url) {
        Ok(store) => Ok(Persistent::Redis(store)),
        Err(err @ RedisTeeError::Url { .. }) => Err(SetupError::Config(vec![err.to_string()])),
        Err(err) => Err(SetupError::Runtime(err.to_string())),
    }
}

/// Refuses `url`: this build has no Redis store.
///
/// # Errors
///
/// Always [`SetupError::Config`].
#[cfg(not(feature = "redis"))]
pub fn open_url(url: &str) -> Result<Persistent, SetupError> {
    Err(SetupError::Config(vec![format!(
        "tee store URL {url}: this build has no Redis tee store (feature redis)"
    )]))
}

/// The persistent tee store of `settings`, opened (and a file created on first use).
///
/// # Errors
///
/// A file that cannot be opened or is refused, [`SetupError::Runtime`]; a URL, as [`open_url`].
pub fn open_store(settings: &Settings) -> Result<Persistent, SetupError> {
    match StoreAt::of(settings) {
        StoreAt::File(path) => SqliteTeeStore::open(path, Retention::default())
            .map(Persistent::Sqlite)
            .map_err(|err| SetupError::Runtime(err.to_string())),
        StoreAt::Url(url) => open_url(&url),
    }
}

/// The persistent store for the commands that compress. When a file cannot be opened at all
/// because of where it is (its directory cannot be created, no space, no permission): one
/// warning and a store that refuses every put, so lossless work goes on and a lossy result goes
/// out uncompressed (`tee_failed`) rather than the command stopping. A file that is not a tee
/// store is still refused, naming it. (A store that exists but cannot be written opens
/// read-only.) A Redis store opens even when Redis does not answer: its puts fail until it does.
///
/// # Errors
///
/// A file that is refused, [`SetupError::Runtime`]; a URL, as [`open_url`].
pub fn persistent_or_unavailable(settings: &Settings) -> Result<Arc<dyn TeeStore>, SetupError> {
    let path = match StoreAt::of(settings) {
        StoreAt::File(path) => path,
        StoreAt::Url(url) => return open_url(&url).map(Persistent::shared),
    };
    open_file_or_unavailable(path).map_err(SetupError::Runtime)
}

/// [`persistent_or_unavailable`]'s SQLite file: the store, or [`Unavailable`] (with its
/// warning), or the message of a file that is refused.
///
/// # Errors
///
/// The message of a file that is refused (not a tee store, a later schema).
pub fn open_file_or_unavailable(path: PathBuf) -> Result<Arc<dyn TeeStore>, String> {
    match SqliteTeeStore::open(path, Retention::default()) {
        Ok(store) => Ok(Arc::new(store)),
        Err(err) if err.is_unavailable() => {
            let reason = err.to_string();
            tracing::warn!("{reason}; lossy results go out uncompressed");
            Ok(Arc::new(Unavailable { reason }))
        }
        Err(err) => Err(err.to_string()),
    }
}

/// The `compress` command's SQLite store, opened by the first put or get, that is by a call that stores
/// its original (a lossy result, or a status other than `success`); a call that needs no store
/// never opens (nor creates) the file. Opening costs more than the rest of the command's
/// start-up (about 1.4 ms: SQLite's log and its index are created, and removed at close), and
/// most results are not stored. Once opened it is [`open_file_or_unavailable`]'s store: a file
/// that cannot be opened where it is warns and refuses every put (the result goes out
/// uncompressed, `tee_failed`); a file that is refused (not a tee store, a later schema) is
/// remembered, and the command fails with its message instead of writing the result (after
/// the pipeline's warning that the put failed; a call with a status other than `success`,
/// always stored, opens the store before it runs). A Redis store is not deferred: opening one
/// does not connect.
pub struct Deferred {
    path: PathBuf,
    opened: OnceLock<Arc<dyn TeeStore>>,
    refused: Mutex<Option<String>>,
}

impl Deferred {
    /// The store of the file at `path`, not yet opened.
    pub fn new(path: PathBuf) -> Deferred {
        Deferred {
            path,
            opened: OnceLock::new(),
            refused: Mutex::new(None),
        }
    }

    /// The store, opened by the first call.
    pub fn store(&self) -> &Arc<dyn TeeStore> {
        self.opened
            .get_or_init(|| match open_file_or_unavailable(self.path.clone()) {
                Ok(store) => store,
                Err(reason) => {
                    *self.refused.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.clone());
                    Arc::new(Unavailable { reason })
                }
            })
    }

    /// Why the file was refused, when a call opened it and it was.
    pub fn refused(&self) -> Option<String> {
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl TeeStore for Deferred {
    fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
        self.store().put(key, original)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        self.store().get(key)
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// A tee store that could not be opened: every put fails with why, nothing is stored.
#[derive(Debug)]
pub struct Unavailable {
    reason: String,
}

impl TeeStore for Unavailable {
    fn put(&self, _key: &str, _original: &[u8]) -> Result<(), TeeError> {
        Err(TeeError::Backend {
            store: self.name(),
            source: self.reason.clone().into(),
        })
    }

    fn get(&self, _key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        Ok(None)
    }

    fn name(&self) -> String {
        "unavailable".to_owned()
    }
}

/// The store for the commands that only read it (`recover`, `store`): no host is built, so a
/// broken manifest or a missing plugin cannot stand between a key and its original, and the
/// kill switch (which stops compression) does not stop recovery.
///
/// # Errors
///
/// [`SetupError::Runtime`] with [`TeeError::NotConfigured`]'s message under `no_tee`; else as
/// [`open_store`].
pub fn store_only(settings: &Settings) -> Result<Persistent, SetupError> {
    if settings.no_tee {
        return Err(SetupError::Runtime(TeeError::NotConfigured.to_string()));
    }
    open_store(settings)
}
