//! What can go wrong with a tee store: a put or a get that fails ([`TeeError`]), a namespace
//! name that is not one ([`NamespaceError`]). Each message is one line naming the store, the
//! key or the name.

/// A namespace name ([`crate::Namespace::new`]) that is not one: empty, too long, or with a
/// character outside `A-Z a-z 0-9 . _ -`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("namespace \"{name}\": {problem}")]
pub struct NamespaceError {
    /// The name given.
    pub name: String,
    /// What is wrong with it, and where.
    pub problem: String,
}

/// A tee store that failed to keep or return an original.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TeeError {
    /// The store holds a different original under the key (a store never overwrites; a put of
    /// the same bytes succeeds).
    #[error("tee store: key \"{key}\" already holds a different original")]
    KeyExists {
        /// The key.
        key: String,
    },

    /// A recovery (the host's `Host::recover`) on a host built without a tee store.
    #[error("tee store none: no tee store is configured")]
    NotConfigured,

    /// The store failed: its own error, which says what it could not do (`cannot store key
    /// "…": …`) and why. The stores of `parrot-tee-sqlite` and `parrot-tee-redis` fail this
    /// way, as does any store of another crate; [`TeeError::backend`] gives the store's error
    /// back as its type.
    #[error("tee store {store}: {source}")]
    Backend {
        /// The store, as its [`crate::TeeStore::name`] says.
        store: String,
        /// The store's own error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl TeeError {
    /// The error of the store that failed, when it is a [`TeeError::Backend`] of an `E`: how a
    /// caller tells one store's failures apart (a Redis that cannot be reached, a SQLite file
    /// that is read-only) without this crate knowing the store.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::TeeError;
    ///
    /// let err = TeeError::Backend {
    ///     store: "/tmp/tee.db".to_owned(),
    ///     source: Box::new(std::io::Error::other("disk full")),
    /// };
    /// assert_eq!(err.to_string(), "tee store /tmp/tee.db: disk full");
    /// assert!(err.backend::<std::io::Error>().is_some());
    /// assert!(err.backend::<std::fmt::Error>().is_none());
    /// assert!(TeeError::NotConfigured.backend::<std::io::Error>().is_none());
    /// ```
    pub fn backend<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            TeeError::Backend { source, .. } => source.downcast_ref::<E>(),
            _ => None,
        }
    }
}
