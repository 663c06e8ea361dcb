//! What can go wrong with a SQLite tee store: opening its file ([`SqliteTeeError::Open`], why in
//! a [`TeeOpenError`]), and a put, a get or its statistics failing, which reach the caller as a
//! [`TeeError::Backend`] naming the store.

use std::path::PathBuf;

#[cfg(doc)]
use parrot_tee::TeeError;

/// A SQLite tee store that cannot be opened, or a call on one that failed.
///
/// [`crate::SqliteTeeStore::open`] returns [`SqliteTeeError::Open`] as it is. A put, a get, a
/// listing of keys or [`crate::SqliteTeeStore::stats`] that fails returns a
/// [`TeeError::Backend`] holding the `Put`, `Get`, `Keys` or `Stats` variant, and naming the store's file in front of it: `tee store
/// /data/tee.db: cannot store key "…": database or disk is full`
/// ([`TeeError::backend`] gives the variant back).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteTeeError {
    /// A store file cannot be opened as a tee store.
    #[error("{}: cannot open as a tee store: {source}", .file.display())]
    Open {
        /// The store file.
        file: PathBuf,
        /// What is wrong with it.
        source: TeeOpenError,
    },

    /// SQLite could not store an original: the file is read-only or full, another process held
    /// the write lock past the busy timeout, the original is over SQLite's size limit, or a
    /// page is damaged.
    #[error("cannot store key \"{key}\": {source}")]
    Put {
        /// The key.
        key: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },

    /// SQLite could not read an original back (a damaged page, an I/O error).
    #[error("cannot read key \"{key}\": {source}")]
    Get {
        /// The key.
        key: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },

    /// SQLite could not read what the store holds (a damaged page, an I/O error).
    #[error("cannot read its entries: {source}")]
    Stats {
        /// SQLite's error.
        source: rusqlite::Error,
    },

    /// SQLite could not list the keys the store holds (a damaged page, an I/O error).
    #[error("cannot list its keys: {source}")]
    Keys {
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl SqliteTeeError {
    /// Whether the store could not be opened or created because of where it is — a directory
    /// that cannot be created, a file that cannot be read, no space, no permission — rather
    /// than because the file is not a tee store (garbage, another application's database, a
    /// later schema, not a regular file). The command goes on without a store in the first
    /// case, and refuses the file in the second.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Retention;
    /// use parrot_tee_sqlite::SqliteTeeStore;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("file"), b"x").unwrap();
    /// let err = SqliteTeeStore::open(dir.path().join("file/tee.db"), Retention::default())
    ///     .unwrap_err();
    /// assert!(err.is_unavailable(), "a directory that cannot be created: {err}");
    ///
    /// std::fs::write(dir.path().join("garbage"), b"not a database, not at all").unwrap();
    /// let err = SqliteTeeStore::open(dir.path().join("garbage"), Retention::default())
    ///     .unwrap_err();
    /// assert!(!err.is_unavailable(), "not a tee store: {err}");
    /// ```
    pub fn is_unavailable(&self) -> bool {
        let SqliteTeeError::Open { source, .. } = self else {
            return false;
        };
        match source {
            TeeOpenError::CreateDir { .. }
            | TeeOpenError::Unreadable { .. }
            | TeeOpenError::EmptyReadOnly => true,
            TeeOpenError::Sqlite { source } => matches!(
                source.sqlite_error_code(),
                Some(
                    rusqlite::ErrorCode::DiskFull
                        | rusqlite::ErrorCode::CannotOpen
                        | rusqlite::ErrorCode::ReadOnly
                        | rusqlite::ErrorCode::PermissionDenied
                        | rusqlite::ErrorCode::SystemIoFailure
                )
            ),
            _ => false,
        }
    }
}

/// Why a file cannot be opened as a tee store; [`SqliteTeeError::Open`] names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TeeOpenError {
    /// The file's directory does not exist and cannot be created.
    #[error("cannot create its directory {}: {source}", .dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// The path exists but is not a regular file.
    #[error("not a regular file")]
    NotAFile,

    /// The file exists but cannot be read.
    #[error("cannot read: {source}")]
    Unreadable {
        /// The I/O error.
        source: std::io::Error,
    },

    /// SQLite refused the file: not a database, truncated, or locked by another process past
    /// the busy timeout.
    #[error("{source}")]
    Sqlite {
        /// SQLite's error.
        source: rusqlite::Error,
    },

    /// A tee store of a schema this build does not read.
    #[error("a tee store of schema version {found}; this build reads version {supported}")]
    SchemaVersion {
        /// The file's schema version.
        found: i32,
        /// The version this build reads.
        supported: i32,
    },

    /// An empty database that cannot be written, so the tee table cannot be created.
    #[error("empty, and read-only: the tee table cannot be created")]
    EmptyReadOnly,

    /// A SQLite database of another application.
    #[error(
        "a SQLite database of another application (application_id {application_id:#x}, {objects} tables and indexes), not a tee store"
    )]
    ForeignDatabase {
        /// The file's `application_id`.
        application_id: i32,
        /// How many tables and indexes it holds.
        objects: i64,
    },

    /// The file cannot be switched to WAL mode, which sharing between processes needs.
    #[error(
        "journal mode is {journal_mode} and cannot be set to WAL, which several processes need to share the store"
    )]
    NotWal {
        /// The journal mode it kept.
        journal_mode: String,
    },
}

impl From<rusqlite::Error> for TeeOpenError {
    fn from(source: rusqlite::Error) -> TeeOpenError {
        TeeOpenError::Sqlite { source }
    }
}
