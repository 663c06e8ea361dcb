//! parrot-tee-sqlite: the persistent tee store of parrot-compress, one SQLite file shared by
//! every process that opens it ([`SqliteTeeStore`]).
//!
//! A crate of its own so that a program over `parrot-host` that keeps its originals elsewhere
//! compiles no SQLite. The store is a [`parrot_tee::TeeStore`] like any, and needs nothing
//! of the host: give it to `parrot_host::HostBuilder::tee_store`.
//!
//! ```
//! use std::sync::Arc;
//! use parrot_host::{Host, Retention};
//! use parrot_tee_sqlite::SqliteTeeStore;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store = SqliteTeeStore::open(dir.path().join(".parrot/tee.db"), Retention::default())?;
//! let host = Host::builder()
//!     .project(dir.path())
//!     .plugin_path(None)
//!     .tee_store(Arc::new(store))
//!     .build()
//!     .unwrap();
//! # drop(host);
//! # Ok::<(), parrot_tee_sqlite::SqliteTeeError>(())
//! ```
#![forbid(unsafe_code)]

mod error;

pub use error::{SqliteTeeError, TeeOpenError};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use parrot_tee::{Retention, TeeError, TeeStats, TeeStore};

/// Written in the file header, so that a file of another application is refused rather than
/// written to. The bytes spell "PRRT".
const APPLICATION_ID: i32 = 0x5052_5254;

/// The version of [`SCHEMA`], in the file header's `user_version`. Version 1 (no `size`, no
/// totals) is upgraded in place when opened for writing, and read as it is otherwise.
const SCHEMA_VERSION: i32 = 2;

/// How long a put or an open waits for another process holding the write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Past this size the write-ahead log is truncated after a checkpoint, so a burst of large
/// originals does not leave a large `-wal` file behind for good.
const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// How much of the file SQLite keeps in memory between calls, in KiB: its own default.
const CACHE_KIB: i64 = 2000;

/// The most the cache grows to for the put of a large original, in KiB: enough for an original
/// of about 55 MiB; a larger one is read from the file as often as the put needs it.
const MAX_CACHE_KIB: i64 = 64 * 1024;

/// The file header's `application_id` and `user_version`, and the number of schema objects.
const HEADER: &str = "SELECT application_id, user_version, (SELECT count(*) FROM sqlite_schema)
    FROM pragma_application_id, pragma_user_version";

const SCHEMA: &str = "
    CREATE TABLE tee (
        key        TEXT    PRIMARY KEY NOT NULL,
        original   BLOB    NOT NULL,
        created_at INTEGER NOT NULL,
        seq        INTEGER NOT NULL,
        size       INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX tee_seq ON tee (seq);
    CREATE INDEX tee_created_at ON tee (created_at);
";

/// The running totals that retention reads on every put, kept by triggers so that they stay
/// exact whichever process (and whichever statement) inserts or deletes.
const TOTALS: &str = "
    CREATE TABLE tee_totals (
        one     INTEGER PRIMARY KEY CHECK (one = 1),
        entries INTEGER NOT NULL,
        bytes   INTEGER NOT NULL
    );
    INSERT INTO tee_totals SELECT 1, count(*), IFNULL(SUM(size), 0) FROM tee;
    CREATE TRIGGER tee_inserted AFTER INSERT ON tee BEGIN
        UPDATE tee_totals SET entries = entries + 1, bytes = bytes + NEW.size;
    END;
    CREATE TRIGGER tee_deleted AFTER DELETE ON tee BEGIN
        UPDATE tee_totals SET entries = entries - 1, bytes = bytes - OLD.size;
    END;
";

/// Schema version 1 to 2: the size of each original, and the totals.
const UPGRADE_FROM_1: &str = "
    ALTER TABLE tee ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
    UPDATE tee SET size = length(original);
";

/// The next `seq` is computed under the write lock that the insert holds, so it is one more
/// than any other, in whichever process. A key already present inserts nothing.
const INSERT: &str = "INSERT INTO tee (key, original, created_at, seq, size)
    VALUES (?1, ?2, ?3, (SELECT IFNULL(MAX(seq), 0) + 1 FROM tee), ?4)
    ON CONFLICT (key) DO NOTHING";

/// The length of the original under a key: a put of other bytes is refused without reading
/// the stored ones when the lengths differ. `length()` of a blob is read from the row's header,
/// where `size`, stored after the original, is reached through every page of it.
const SIZE_OF: &str = "SELECT length(original) FROM tee WHERE key = ?1";

/// A put of the original a key already holds: the entry counts as new for retention. SQLite
/// compares the two blobs itself, in the statement that renews, so the stored one is read
/// once; a key holding other bytes is left as it was.
const RENEW: &str = "UPDATE tee SET created_at = ?3,
    seq = (SELECT IFNULL(MAX(seq), 0) + 1 FROM tee) WHERE key = ?1 AND original = ?2";

/// How much of the file SQLite reads through a memory map (`PRAGMA mmap_size`): 256 MiB of
/// address space, not memory; pages are the page cache's whether mapped or read.
const MMAP_SIZE: i64 = 256 << 20;

const SELECT: &str = "SELECT original FROM tee WHERE key = ?1";

/// Every key, from the primary key's index alone (no original is read).
const KEYS: &str = "SELECT key FROM tee";

const TOTALS_NOW: &str = "SELECT entries, bytes FROM tee_totals";

/// Read from the entries themselves, so that it also answers for a version 1 file opened
/// read-only (no totals there).
const STATS: &str = "SELECT count(*), IFNULL(SUM(length(original)), 0), MIN(created_at) FROM tee";

/// When the oldest entry was stored or renewed; walks the `created_at` index to its first entry.
const OLDEST: &str = "SELECT MIN(created_at) FROM tee";

const DELETE_OLDER_THAN: &str = "DELETE FROM tee WHERE created_at < ?1";

/// The `?1` oldest entries, by insertion order; walks the `seq` index from its oldest end.
const DELETE_OLDEST: &str =
    "DELETE FROM tee WHERE seq IN (SELECT seq FROM tee ORDER BY seq LIMIT ?1)";

/// A persistent store on disk: one SQLite file that survives restarts and that several threads
/// and processes can use at once.
///
/// # Schema
///
/// Created on first use:
///
/// ```sql
/// CREATE TABLE tee (
///     key        TEXT    PRIMARY KEY NOT NULL, -- the tee key
///     original   BLOB    NOT NULL,             -- the original's exact bytes
///     created_at INTEGER NOT NULL,             -- ms since the Unix epoch, by the store's clock
///     seq        INTEGER NOT NULL,             -- insertion order: one more than any before
///     size       INTEGER NOT NULL              -- length(original)
/// );
/// CREATE UNIQUE INDEX tee_seq ON tee (seq);
/// CREATE INDEX tee_created_at ON tee (created_at);
/// -- One row: count(*) and SUM(size) of tee, kept by an insert and a delete trigger.
/// CREATE TABLE tee_totals (one INTEGER PRIMARY KEY CHECK (one = 1),
///                          entries INTEGER NOT NULL, bytes INTEGER NOT NULL);
/// ```
///
/// The file header carries `application_id` 0x50525254 ("PRRT") and `user_version` 2, so a
/// SQLite file of another application, or of a later schema, is refused at open instead of being
/// written to. A file of version 1 (no `size`, no totals) is upgraded when opened for writing;
/// opened read-only, it serves gets as it is.
///
/// # Keys
///
/// A put never overwrites: the primary key refuses a second insert of a key atomically, in
/// whichever process it comes from. A put of the original the key already holds (the same
/// bytes) stores nothing new and succeeds; it renews the entry, which then counts for retention
/// as if just stored. A put of different bytes under a taken key returns
/// [`TeeError::KeyExists`] and leaves the entry as it was.
///
/// # Retention
///
/// Applied at open and by every put, in the put's transaction: entries older than
/// [`Retention::max_age`] are deleted, then the oldest by insertion order until at most
/// [`Retention::max_entries`] remain and their originals hold at most [`Retention::max_bytes`];
/// the newest entry always stays. The deletes walk an index from the oldest end and the counts
/// come from the totals row, so a put costs the same whatever the store holds. A get returns what
/// the file holds, even if it has aged since the last put. Deleted pages are reused by later
/// puts; the file does not shrink.
///
/// # Several threads and processes
///
/// The file is in WAL mode: readers never wait for the writer, and one writer at a time holds
/// the lock, waited for up to 5 seconds ([`SqliteTeeError::Put`] after that). Within a process, one
/// connection is shared behind a mutex, so calls on one store run one at a time.
///
/// # Durability
///
/// The store uses `synchronous = NORMAL`: a commit is written to the write-ahead log before the
/// put returns but not flushed to the device. A put that returned survives the process being
/// killed (SIGKILL, a panic, an abort), since the operating system has the data; after a power
/// loss or an operating-system crash the last puts may be missing, and the file is still
/// consistent. `FULL` would flush on every put, for a guarantee the pipeline does not need: the
/// original of an outcome that never reached the model is not missed.
///
/// A put of an original larger than 1 MiB holds its pages in memory while it runs (up to
/// 64 MiB of them).
///
/// # Limits
///
/// An original longer than SQLite's limit of 1,000,000,000 bytes is refused with
/// [`SqliteTeeError::Put`].
///
/// # Damaged files
///
/// Open refuses a file that is not a SQLite database (garbage), a truncated one, or one of
/// another application, with [`SqliteTeeError::Open`] naming the file. Damage inside pages that
/// open does not read surfaces as [`SqliteTeeError::Get`] or [`SqliteTeeError::Put`] from the get or put
/// that reads them.
///
/// # Examples
///
/// ```
/// use parrot_tee::{Retention, TeeStore};
/// use parrot_tee_sqlite::SqliteTeeStore;
///
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("tee.sqlite");
///
/// let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
/// store.put("__tee__:sql_select:a615eeaee21d", b"[1,2,3]").unwrap();
/// drop(store);
///
/// let reopened = SqliteTeeStore::open(&file, Retention::default()).unwrap();
/// let original = reopened.get("__tee__:sql_select:a615eeaee21d").unwrap();
/// assert_eq!(original.as_deref(), Some(&b"[1,2,3]"[..]));
/// assert_eq!(reopened.name(), file.display().to_string());
/// ```
pub struct SqliteTeeStore {
    path: PathBuf,
    name: String,
    retention: Retention,
    clock: Box<dyn Fn() -> SystemTime + Send + Sync>,
    connection: Mutex<Connection>,
    read_only: bool,
}

impl SqliteTeeStore {
    /// Opens the store at `path`, creating the file and its parent directories on first use.
    ///
    /// A file that is not a tee store is refused untouched: its header is read before anything
    /// is written. A tee store that the process may read but not write (a read-only file,
    /// directory or mount, a full disk) opens read-only, with one warning naming it: gets work,
    /// puts return [`SqliteTeeError::Put`] ([`SqliteTeeStore::is_read_only`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::{Retention, TeeStore};
    /// use parrot_tee_sqlite::SqliteTeeStore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = SqliteTeeStore::open(dir.path().join("new/dir/tee.sqlite"), Retention::default())
    ///     .unwrap();
    /// assert_eq!(store.get("absent").unwrap(), None);
    ///
    /// std::fs::write(dir.path().join("garbage"), b"not a database, not at all").unwrap();
    /// let err = SqliteTeeStore::open(dir.path().join("garbage"), Retention::default()).unwrap_err();
    /// assert!(err.to_string().contains("garbage"), "{err}");
    /// ```
    ///
    /// # Errors
    ///
    /// [`SqliteTeeError::Open`], naming the file, when its directory cannot be created, it cannot
    /// be read, it is not a SQLite database or is truncated, it belongs to another application,
    /// or another process holds it locked for longer than the busy timeout.
    pub fn open(
        path: impl AsRef<Path>,
        retention: Retention,
    ) -> Result<SqliteTeeStore, SqliteTeeError> {
        SqliteTeeStore::open_with_clock(path, retention, SystemTime::now)
    }

    /// Like [`SqliteTeeStore::open`], with `clock` telling the time for `created_at` and for
    /// [`Retention::max_age`] in place of [`SystemTime::now`], so that tests can age entries
    /// without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::time::{Duration, SystemTime};
    /// use parrot_tee::{Retention, TeeStore};
    /// use parrot_tee_sqlite::SqliteTeeStore;
    ///
    /// let elapsed_secs = Arc::new(AtomicU64::new(0));
    /// let clock = {
    ///     let elapsed_secs = Arc::clone(&elapsed_secs);
    ///     move || SystemTime::UNIX_EPOCH + Duration::from_secs(elapsed_secs.load(Ordering::SeqCst))
    /// };
    /// let retention = Retention { max_entries: None, max_bytes: None, max_age: Some(Duration::from_secs(60)) };
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = SqliteTeeStore::open_with_clock(dir.path().join("tee.sqlite"), retention, clock)
    ///     .unwrap();
    ///
    /// store.put("old", b"1").unwrap();
    /// elapsed_secs.store(61, Ordering::SeqCst);
    /// store.put("new", b"2").unwrap();
    /// assert_eq!(store.get("old").unwrap(), None, "aged out by the put of \"new\"");
    /// assert_eq!(store.get("new").unwrap().as_deref(), Some(&b"2"[..]));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`SqliteTeeStore::open`].
    pub fn open_with_clock(
        path: impl AsRef<Path>,
        retention: Retention,
        clock: impl Fn() -> SystemTime + Send + Sync + 'static,
    ) -> Result<SqliteTeeStore, SqliteTeeError> {
        let path = path.as_ref();
        let fail = |source: TeeOpenError| SqliteTeeError::Open {
            file: path.to_owned(),
            source,
        };
        let existed = check_file(path).map_err(fail)?;
        // A connection that may write rolls back a rollback journal left beside the file when it
        // first reads it: a file with one, which may not be a tee store, is looked at read-only
        // first, so that it is refused as it was found.
        if existed && journal_beside(path).exists() {
            inspect(path).map_err(fail)?;
        }
        let now = millis_since_epoch(clock());
        let (connection, read_only) = match open_for_writing(path, existed, &retention, now) {
            Ok(connection) => {
                let read_only = connection.is_readonly("main").unwrap_or(false);
                (connection, read_only)
            }
            Err(NotOpened { error, checked }) if cannot_write(&error) => {
                // This process cannot change the file (a read-only file, directory or mount, a
                // full disk); if it is a tee store, gets can still be served. When the failure
                // came after the file was found to be one, that failure is the one to report;
                // before, what the read-only look finds is.
                match inspect(path) {
                    Ok(connection) => (connection, true),
                    Err(found) if !checked => return Err(fail(found)),
                    Err(_) => return Err(fail(error)),
                }
            }
            Err(NotOpened { error, .. }) => return Err(fail(error)),
        };
        if read_only {
            tracing::warn!(
                "tee store {}: cannot be written, opened read-only: originals stored before are \
                 served, lossy results go out uncompressed",
                path.display()
            );
        }
        Ok(SqliteTeeStore {
            path: path.to_owned(),
            name: path.display().to_string(),
            retention,
            clock: Box::new(clock),
            connection: Mutex::new(connection),
            read_only,
        })
    }

    /// The file of the store, as given to [`SqliteTeeStore::open`].
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Retention;
    /// use parrot_tee_sqlite::SqliteTeeStore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = SqliteTeeStore::open(dir.path().join("tee.sqlite"), Retention::default()).unwrap();
    /// assert_eq!(store.path(), dir.path().join("tee.sqlite"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The retention the store applies.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Retention;
    /// use parrot_tee_sqlite::SqliteTeeStore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let retention = Retention { max_entries: Some(5), max_bytes: None, max_age: None };
    /// let store = SqliteTeeStore::open(dir.path().join("tee.sqlite"), retention).unwrap();
    /// assert_eq!(store.retention(), retention);
    /// ```
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// What the store holds now: its entries, the bytes of their originals, and when the
    /// oldest was stored (or last renewed).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use parrot_tee::{Retention, TeeStore};
    /// use parrot_tee_sqlite::SqliteTeeStore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    /// let store =
    ///     SqliteTeeStore::open_with_clock(dir.path().join("tee.sqlite"), Retention::default(), move || at)
    ///         .unwrap();
    /// assert_eq!(store.stats().unwrap().entries, 0);
    /// store.put("a", b"12345").unwrap();
    /// store.put("b", b"678").unwrap();
    /// let stats = store.stats().unwrap();
    /// assert_eq!((stats.entries, stats.bytes, stats.oldest), (2, 8, Some(at)));
    /// ```
    ///
    /// # Errors
    ///
    /// [`TeeError::Backend`] holding [`SqliteTeeError::Stats`] when the file cannot be read.
    pub fn stats(&self) -> Result<TeeStats, TeeError> {
        let connection = self.connection();
        connection
            .prepare_cached(STATS)
            .and_then(|mut stats| {
                stats.query_row([], |row| {
                    let count = |n: i64| u64::try_from(n).unwrap_or(0);
                    let oldest: Option<i64> = row.get(2)?;
                    Ok(TeeStats::new(
                        count(row.get(0)?),
                        count(row.get(1)?),
                        oldest.map(|ms| {
                            UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
                        }),
                    ))
                })
            })
            .map_err(|source| self.failed(SqliteTeeError::Stats { source }))
    }

    /// Whether the store was opened read-only, because the process cannot write its file (a
    /// read-only file, directory or mount, a full disk): gets work, puts return
    /// [`SqliteTeeError::Put`]. Open logs one warning naming the file when it is.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Retention;
    /// use parrot_tee_sqlite::SqliteTeeStore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = SqliteTeeStore::open(dir.path().join("tee.sqlite"), Retention::default()).unwrap();
    /// assert!(!store.is_read_only());
    /// ```
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// `err` as the store's failure, naming the store.
    fn failed(&self, err: SqliteTeeError) -> TeeError {
        TeeError::Backend {
            store: self.name.clone(),
            source: Box::new(err),
        }
    }

    fn connection(&self) -> MutexGuard<'_, Connection> {
        // Transactions roll back when their guard drops, even while unwinding, so the connection
        // behind a poisoned lock is as usable as any.
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl TeeStore for SqliteTeeStore {
    fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
        let now = millis_since_epoch((self.clock)());
        let size = i64::try_from(original.len()).unwrap_or(i64::MAX);
        let mut connection = self.connection();
        if !connection.is_autocommit() {
            // Only a failed COMMIT whose rollback also failed leaves a transaction open; it
            // would make every later BEGIN fail.
            let _ = connection.execute_batch("ROLLBACK");
        }
        // A put reads or writes the original's pages more than once (a renewal compares them,
        // then rewrites the entry, which compares them again): while it runs, the cache holds
        // them all, so that they are read from the file once. Afterwards it shrinks back.
        let cache_kib = i64::try_from(original.len() / 1024 / 8 * 9)
            .unwrap_or(i64::MAX)
            .saturating_add(CACHE_KIB)
            .min(MAX_CACHE_KIB);
        let grown = original.len() > 1 << 20;
        let stored = (|| {
            if grown {
                connection.pragma_update(None, "cache_size", -cache_kib)?;
            }
            // IMMEDIATE takes the write lock first, waiting for other writers; a deferred
            // transaction could fail on upgrading its read snapshot without waiting.
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // Looked up first, so that the original is handed to SQLite (which copies it) only
            // for the statement that stores or compares it.
            let held: Option<i64> = transaction
                .prepare_cached(SIZE_OF)?
                .query_row([key], |row| row.get(0))
                .optional()?;
            let stored = match held {
                None => transaction
                    .prepare_cached(INSERT)?
                    .execute(params![key, original, now, size])?,
                Some(held) if held == size => transaction
                    .prepare_cached(RENEW)?
                    .execute(params![key, original, now])?,
                Some(_) => 0,
            };
            if stored == 0 {
                // Dropping the transaction rolls it back: nothing changed.
                return Ok(false);
            }
            apply_retention(&transaction, &self.retention, now)?;
            transaction.commit().map(|()| true)
        })();
        if grown {
            // Only memory is at stake: the put's outcome stands whatever this returns.
            let _ = connection.pragma_update(None, "cache_size", -CACHE_KIB);
        }
        match stored {
            Ok(true) => Ok(()),
            Ok(false) => Err(TeeError::KeyExists {
                key: key.to_owned(),
            }),
            Err(source) => Err(self.failed(SqliteTeeError::Put {
                key: key.to_owned(),
                source,
            })),
        }
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        let connection = self.connection();
        connection
            .prepare_cached(SELECT)
            .and_then(|mut select| select.query_row([key], |row| row.get(0)).optional())
            .map_err(|source| {
                self.failed(SqliteTeeError::Get {
                    key: key.to_owned(),
                    source,
                })
            })
    }

    fn keys(&self) -> Result<Option<Vec<String>>, TeeError> {
        let connection = self.connection();
        connection
            .prepare_cached(KEYS)
            .and_then(|mut keys| {
                keys.query_map([], |row| row.get(0))?
                    .collect::<rusqlite::Result<Vec<String>>>()
            })
            .map(Some)
            .map_err(|source| self.failed(SqliteTeeError::Keys { source }))
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

impl fmt::Debug for SqliteTeeStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteTeeStore")
            .field("path", &self.path)
            .field("retention", &self.retention)
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

/// Creates the parent directory, and tells what is wrong with an existing path in words SQLite
/// does not have ("unable to open database file" says neither why nor which). Returns whether
/// the file exists.
fn check_file(path: &Path) -> Result<bool, TeeOpenError> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(|source| TeeOpenError::CreateDir {
            dir: parent.to_owned(),
            source,
        })?;
    }
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => Err(TeeOpenError::NotAFile),
        Ok(_) => std::fs::File::open(path)
            .map(|_| true)
            .map_err(|source| TeeOpenError::Unreadable { source }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(TeeOpenError::Unreadable { source }),
    }
}

/// Why [`open_for_writing`] failed.
struct NotOpened {
    error: TeeOpenError,
    /// Whether the file had been found to be a tee store (or was new) when it failed.
    checked: bool,
}

/// A connection that may write `path`, the schema created or upgraded and retention applied.
/// SQLite opens a file it may not write read-only by itself; [`Connection::is_readonly`] tells.
///
/// One connection does it all: an existing file's header is read through it before anything is
/// written, so a file that is not a tee store is refused as it was found, without even its
/// journal mode switched (and its log, if it has one, not checkpointed into it at close).
fn open_for_writing(
    path: &Path,
    existed: bool,
    retention: &Retention,
    now: i64,
) -> Result<Connection, NotOpened> {
    let unchecked = |error: TeeOpenError| NotOpened {
        error,
        checked: !existed,
    };
    let mut connection = Connection::open_with_flags(
        path,
        // No URI flag: a path is a path, even one starting with "file:". The mutex of the
        // store serializes use of the connection, so SQLite's own is not needed.
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|err| unchecked(err.into()))?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(|err| unchecked(err.into()))?;
    if existed {
        connection
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(|err| unchecked(err.into()))?;
        // The first statement to read the file: a garbage or truncated file fails here.
        retry_while_busy(|| check_header(&connection)).map_err(unchecked)?;
        connection
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false)
            .map_err(|err| unchecked(err.into()))?;
    }
    retry_while_busy(|| prepare(&mut connection, retention, now)).map_err(|error| NotOpened {
        error,
        checked: true,
    })?;
    Ok(connection)
}

/// What the header of a database and its schema say it is.
struct Header {
    application_id: i32,
    version: i32,
    /// Its tables, indexes and triggers.
    objects: i64,
}

/// Reads the header of the database of `connection` and counts its schema objects.
fn read_header(connection: &Connection) -> rusqlite::Result<Header> {
    connection.prepare_cached(HEADER)?.query_row([], |row| {
        Ok(Header {
            application_id: row.get(0)?,
            version: row.get(1)?,
            objects: row.get(2)?,
        })
    })
}

/// Refuses a database that is not a tee store of a version this build reads, or empty.
fn check_header(connection: &Connection) -> Result<(), TeeOpenError> {
    let header = read_header(connection)?;
    match (header.application_id, header.version) {
        (APPLICATION_ID, 1 | SCHEMA_VERSION) => Ok(()),
        (APPLICATION_ID, found) => Err(TeeOpenError::SchemaVersion {
            found,
            supported: SCHEMA_VERSION,
        }),
        (0, 0) if header.objects == 0 => Ok(()),
        (application_id, _) => Err(TeeOpenError::ForeignDatabase {
            application_id,
            objects: header.objects,
        }),
    }
}

/// The rollback journal SQLite keeps beside `path` in other journal modes than WAL.
fn journal_beside(path: &Path) -> PathBuf {
    let mut journal = path.as_os_str().to_owned();
    journal.push("-journal");
    PathBuf::from(journal)
}

/// A read-only connection to the existing file `path`, once its header and schema say it is a
/// tee store (of a version this build reads) or an empty database. Nothing is written: not the
/// journal mode, not a transaction.
fn inspect(path: &Path) -> Result<Connection, TeeOpenError> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    // The first statement to read the file: a garbage or truncated file fails here.
    let connection = match read_header(&connection) {
        Err(err) if is_read_only_wal(&err) => {
            // A WAL file read-only in a directory this process cannot write either: SQLite
            // needs a shared-memory file beside it to read it, and cannot create one. When
            // there is none, no writer has the file open and its log was checkpointed into it
            // when the last one closed, so the file alone holds every entry: read it as
            // immutable, without the shared memory.
            let immutable = Connection::open_with_flags(
                immutable_uri(path),
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )?;
            read_header(&immutable)?;
            immutable
        }
        read => {
            read?;
            connection
        }
    };
    check_header(&connection)?;
    Ok(connection)
}

/// Whether reading failed because SQLite could not set up the shared memory of a WAL file.
fn is_read_only_wal(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

/// The `file:` URI of `path` opened as immutable (its bytes percent-encoded but for the
/// unreserved ones and `/`, so that `?`, `#` and `%` in a name stay part of it).
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for &byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Whether opening for writing failed because the file cannot be changed (read-only file,
/// directory or mount, no permission, a full disk, a failing write) rather than because of
/// what it holds or another process holding it.
fn cannot_write(err: &TeeOpenError) -> bool {
    use rusqlite::ErrorCode;
    let TeeOpenError::Sqlite { source } = err else {
        return false;
    };
    matches!(
        source.sqlite_error_code(),
        Some(
            ErrorCode::ReadOnly
                | ErrorCode::CannotOpen
                | ErrorCode::DiskFull
                | ErrorCode::PermissionDenied
                | ErrorCode::SystemIoFailure
        )
    )
}

/// `attempt`, retried while another process holds the file busy: switching a new file to WAL
/// can fail at once with SQLITE_BUSY, without waiting on the busy timeout, when two processes
/// create the store at the same moment.
fn retry_while_busy(
    mut attempt: impl FnMut() -> Result<(), TeeOpenError>,
) -> Result<(), TeeOpenError> {
    let started = Instant::now();
    loop {
        match attempt() {
            Err(TeeOpenError::Sqlite { source: err })
                if matches!(
                    err.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                ) && started.elapsed() < BUSY_TIMEOUT =>
            {
                thread::sleep(Duration::from_millis(10));
            }
            done => return done,
        }
    }
}

/// Sets the connection up (WAL, synchronous), creates the schema in a new file, refuses a file
/// that is not a tee store, and applies retention.
fn prepare(
    connection: &mut Connection,
    retention: &Retention,
    now: i64,
) -> Result<(), TeeOpenError> {
    // The first statement to read a new file.
    let journal_mode: String =
        connection.pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    // Pages are read through a memory map rather than a read call each: a put that renews a
    // large original reads it whole (to compare), and at 4 KiB a page a 10 MB original is
    // 2,500 reads. A 10 MB renewal measured 14-18 ms with reads, 11-14 ms mapped (one run,
    // a loaded machine). SQLite maps up to this much of the file and reads the rest.
    connection.pragma_update(None, "mmap_size", MMAP_SIZE)?;
    connection.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
    let read_only = connection.is_readonly("main")?;
    let transaction = connection.transaction_with_behavior(if read_only {
        TransactionBehavior::Deferred
    } else {
        TransactionBehavior::Immediate
    })?;
    // Read again under the lock: another process may have created the store since.
    let Header {
        application_id,
        version,
        objects,
    } = read_header(&transaction)?;
    match (application_id, version) {
        (APPLICATION_ID, SCHEMA_VERSION) => {}
        (APPLICATION_ID, 1) if read_only => {}
        (APPLICATION_ID, 1) => {
            transaction.execute_batch(UPGRADE_FROM_1)?;
            transaction.execute_batch(TOTALS)?;
            transaction.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        (APPLICATION_ID, found) => {
            return Err(TeeOpenError::SchemaVersion {
                found,
                supported: SCHEMA_VERSION,
            });
        }
        (0, 0) if objects == 0 && read_only => return Err(TeeOpenError::EmptyReadOnly),
        (0, 0) if objects == 0 => {
            transaction.execute_batch(SCHEMA)?;
            transaction.execute_batch(TOTALS)?;
            transaction.pragma_update(None, "application_id", APPLICATION_ID)?;
            transaction.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        _ => {
            return Err(TeeOpenError::ForeignDatabase {
                application_id,
                objects,
            });
        }
    }
    if !journal_mode.eq_ignore_ascii_case("wal") {
        return Err(TeeOpenError::NotWal { journal_mode });
    }
    if !read_only {
        apply_retention(&transaction, retention, now)?;
    }
    transaction.commit()?;
    Ok(())
}

/// Deletes what `retention` no longer keeps, the oldest first, always keeping the newest entry.
fn apply_retention(
    connection: &Connection,
    retention: &Retention,
    now: i64,
) -> rusqlite::Result<()> {
    if let Some(max_age) = retention.max_age {
        let max_age = i64::try_from(max_age.as_millis()).unwrap_or(i64::MAX);
        let limit = now.saturating_sub(max_age);
        // Looked at first (the end of an index): the delete, which compiles the delete trigger,
        // is prepared only once something is that old.
        let oldest: Option<i64> = connection
            .prepare_cached(OLDEST)?
            .query_row([], |row| row.get(0))?;
        if oldest.is_some_and(|oldest| oldest < limit) {
            connection
                .prepare_cached(DELETE_OLDER_THAN)?
                .execute([limit])?;
        }
    }
    if let Some(max_entries) = retention.max_entries {
        let max_entries = i64::try_from(max_entries.max(1)).unwrap_or(i64::MAX);
        let (entries, _) = totals(connection)?;
        if entries > max_entries {
            connection
                .prepare_cached(DELETE_OLDEST)?
                .execute([entries - max_entries])?;
        }
    }
    if let Some(max_bytes) = retention.max_bytes {
        let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
        // One at a time: how many go depends on their sizes; a put usually evicts one or none.
        loop {
            let (entries, bytes) = totals(connection)?;
            if bytes <= max_bytes || entries <= 1 {
                break;
            }
            connection.prepare_cached(DELETE_OLDEST)?.execute([1])?;
        }
    }
    Ok(())
}

/// The number of entries and the bytes of their originals, from the totals row.
fn totals(connection: &Connection) -> rusqlite::Result<(i64, i64)> {
    connection
        .prepare_cached(TOTALS_NOW)?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))
}

/// `created_at` of an entry stored at `time`; a clock before the epoch counts as the epoch.
fn millis_since_epoch(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
    })
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn a_garbage_file_is_refused_with_sqlites_error_as_the_source() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("garbage");
        std::fs::write(&file, b"not a database, not at all".repeat(200)).unwrap();
        let err = SqliteTeeStore::open(&file, Retention::default()).unwrap_err();
        let SqliteTeeError::Open { file: named, .. } = &err else {
            panic!("expected an open error, got {err:?}");
        };
        assert_eq!(named, &file);
        let cause = err.source().expect("the open error has a cause");
        assert!(
            matches!(
                cause.downcast_ref::<TeeOpenError>(),
                Some(TeeOpenError::Sqlite { .. })
            ),
            "{cause:?}"
        );
        assert!(cause.source().unwrap().is::<rusqlite::Error>());
    }

    #[test]
    fn a_directory_that_cannot_be_created_keeps_the_io_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        let err = SqliteTeeStore::open(dir.path().join("file/sub/tee.db"), Retention::default())
            .unwrap_err();
        let cause = err.source().unwrap();
        assert!(
            matches!(
                cause.downcast_ref::<TeeOpenError>(),
                Some(TeeOpenError::CreateDir { .. })
            ),
            "{cause:?}"
        );
        assert!(cause.source().unwrap().is::<std::io::Error>());
        assert!(
            err.to_string()
                .contains(": cannot open as a tee store: cannot create its directory "),
            "{err}"
        );
    }

    #[test]
    fn a_read_only_store_refuses_a_put_with_sqlites_error_as_the_source() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tee.sqlite");
        SqliteTeeStore::open(&file, Retention::default())
            .unwrap()
            .put("kept", b"1")
            .unwrap();
        let store = SqliteTeeStore::open(&file, Retention::default()).unwrap();
        // A store whose connection cannot write: SQLite's query_only refuses every write.
        store
            .connection()
            .pragma_update(None, "query_only", true)
            .unwrap();
        let err = store.put("new", b"2").unwrap_err();
        assert!(
            matches!(err.backend(), Some(SqliteTeeError::Put { key, .. }) if key == "new"),
            "{err:?}"
        );
        assert!(
            err.source()
                .unwrap()
                .source()
                .unwrap()
                .is::<rusqlite::Error>()
        );
        assert!(
            err.to_string().starts_with(&format!(
                "tee store {}: cannot store key \"new\": ",
                file.display()
            )),
            "{err}"
        );
    }

    /// The file and what SQLite keeps beside it, each as its bytes (`None` when absent).
    fn snapshot(file: &Path) -> Vec<(String, Option<Vec<u8>>)> {
        ["", "-wal", "-journal"]
            .into_iter()
            .map(|suffix| {
                let mut name = file.as_os_str().to_owned();
                name.push(suffix);
                (suffix.to_owned(), std::fs::read(name).ok())
            })
            .collect()
    }

    #[test]
    fn another_applications_log_is_not_checkpointed_into_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("theirs.sqlite");
        {
            let db = Connection::open(&file).unwrap();
            db.pragma_update(None, "journal_mode", "wal").unwrap();
            db.execute_batch("CREATE TABLE notes (body TEXT); PRAGMA wal_checkpoint(TRUNCATE);")
                .unwrap();
            db.execute("INSERT INTO notes VALUES ('only in the log')", [])
                .unwrap();
            // Closed as a process that was killed leaves it: the insert is in the log alone.
            db.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
                .unwrap();
        }
        let before = snapshot(&file);
        assert!(before[1].1.as_ref().is_some_and(|log| !log.is_empty()));

        let err = SqliteTeeStore::open(&file, Retention::default()).unwrap_err();
        assert!(err.to_string().contains("another application"), "{err}");
        assert!(snapshot(&file) == before, "the file or its log changed");
    }

    #[test]
    fn another_applications_hot_journal_is_not_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs.sqlite");
        let file = dir.path().join("crashed.sqlite");
        let db = Connection::open(&theirs).unwrap();
        db.execute_batch(
            "PRAGMA cache_size = 1;
             CREATE TABLE notes (body BLOB);
             INSERT INTO notes SELECT zeroblob(4000) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3);
             BEGIN;
             UPDATE notes SET body = randomblob(4000);",
        )
        .unwrap();
        // Copied mid-transaction: the copy is the file of a process that crashed there, its
        // rollback journal hot.
        std::fs::copy(&theirs, &file).unwrap();
        std::fs::copy(journal_beside(&theirs), journal_beside(&file)).unwrap();
        drop(db);
        let before = snapshot(&file);
        assert!(
            before[2]
                .1
                .as_ref()
                .is_some_and(|journal| !journal.is_empty())
        );

        assert!(SqliteTeeStore::open(&file, Retention::default()).is_err());
        assert!(snapshot(&file) == before, "the file or its journal changed");
    }

    #[test]
    fn other_bytes_of_the_same_length_are_refused_and_renew_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let seconds = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(1_000));
        let clock = {
            let seconds = std::sync::Arc::clone(&seconds);
            move || {
                UNIX_EPOCH + Duration::from_secs(seconds.load(std::sync::atomic::Ordering::SeqCst))
            }
        };
        let at = |s: u64| {
            seconds.store(s, std::sync::atomic::Ordering::SeqCst);
            UNIX_EPOCH + Duration::from_secs(s)
        };
        let retention = Retention {
            max_entries: Some(2),
            max_bytes: None,
            max_age: None,
        };
        let store =
            SqliteTeeStore::open_with_clock(dir.path().join("tee.sqlite"), retention, clock)
                .unwrap();
        // Larger than the cache, so that the put grows it for the while.
        let big: Vec<u8> = (0..3 << 20).map(|n: u32| (n % 251) as u8).collect();
        let mut other = big.clone();
        *other.last_mut().unwrap() ^= 1;

        let stored_at = at(1_000);
        store.put("big", &big).unwrap();
        at(1_001);
        store.put("small", b"1").unwrap();
        at(1_002);
        let err = store.put("big", &other).unwrap_err();
        assert!(
            matches!(&err, TeeError::KeyExists { key } if key == "big"),
            "{err:?}"
        );
        let err = store.put("small", b"2").unwrap_err();
        assert!(
            matches!(&err, TeeError::KeyExists { key } if key == "small"),
            "{err:?}"
        );
        assert_eq!(
            store.stats().unwrap().oldest,
            Some(stored_at),
            "nothing renewed"
        );

        // The same bytes renew "big": "small" is now the oldest, and goes first.
        store.put("big", &big).unwrap();
        at(1_003);
        store.put("next", b"3").unwrap();
        assert_eq!(store.get("small").unwrap(), None);
        assert!(store.get("big").unwrap() == Some(big));
        assert_eq!(store.get("next").unwrap().as_deref(), Some(&b"3"[..]));
    }
}
