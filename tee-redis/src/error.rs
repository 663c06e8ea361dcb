//! What can go wrong with a Redis tee store: its URL ([`RedisTeeError::Url`]), opening it
//! ([`RedisTeeError::Open`]), and a put, a get or its statistics failing, which reach the caller
//! as a [`TeeError::Backend`] naming the store; why, in a [`RedisFailure`].

#[cfg(doc)]
use parrot_tee::TeeError;

/// A Redis tee store that cannot be opened, or a call on one that failed.
///
/// [`crate::RedisTeeStore::open`] returns [`RedisTeeError::Url`] and [`RedisTeeError::Open`] as
/// they are. A put, a get, a listing of keys or [`crate::RedisTeeStore::stats`] that fails
/// returns a [`TeeError::Backend`] holding the `Put`, `Get`, `Keys` or `Stats` variant, and
/// naming the store (its
/// URL, the password masked) in front of it: `tee store redis://cache:6379/0: cannot store key
/// "…": …` ([`TeeError::backend`] gives the variant back).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisTeeError {
    /// A tee store URL that cannot be used: not a `redis://` or `rediss://` URL, no host, a
    /// database that is not a number, an unknown or bad parameter, or `rediss://` in a build
    /// without TLS. The URL is given with its password masked.
    #[error("tee store URL {url}: {reason}")]
    Url {
        /// The URL, its password masked.
        url: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A Redis store cannot be opened: its host does not resolve, or Redis refuses the
    /// credentials. (A Redis that does not answer is not an error at open: the store opens and
    /// its calls fail until it answers.)
    #[error("tee store {store}: cannot open: {source}")]
    Open {
        /// The store (its URL, the password masked).
        store: String,
        /// Why.
        source: RedisFailure,
    },

    /// Redis could not store an original: it cannot be reached or did not answer in time,
    /// the store is waiting before trying again, or Redis refused (`OOM`, `READONLY`).
    #[error("cannot store key \"{key}\": {source}")]
    Put {
        /// The key.
        key: String,
        /// Why.
        source: RedisFailure,
    },

    /// Redis could not return an original: it cannot be reached or did not answer in time,
    /// or the store is waiting before trying again.
    #[error("cannot read key \"{key}\": {source}")]
    Get {
        /// The key.
        key: String,
        /// Why.
        source: RedisFailure,
    },

    /// Redis could not list what the store holds.
    #[error("cannot read its entries: {source}")]
    Stats {
        /// Why.
        source: RedisFailure,
    },

    /// Redis could not list the keys the store holds.
    #[error("cannot list its keys: {source}")]
    Keys {
        /// Why.
        source: RedisFailure,
    },
}

/// Why a Redis tee store could not be opened or a call on it failed; the [`RedisTeeError`]
/// around it says which (with, for a call, the [`TeeError::Backend`] around that naming the
/// store).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisFailure {
    /// The client's error: Redis refused the connection or closed it, did not answer within
    /// the timeout, refused the credentials, or answered with an error (`OOM`, `READONLY`).
    #[error("{source}")]
    Redis {
        /// The client's error.
        source: redis::RedisError,
    },

    /// The call was not tried: Redis could not be reached a moment ago, and the store waits
    /// before trying again.
    #[error("not tried: Redis could not be reached ({last}); next attempt in {} ms", .retry_in.as_millis())]
    Backoff {
        /// How long until the next attempt.
        retry_in: std::time::Duration,
        /// The last failure to reach it.
        last: String,
    },

    /// Redis refused the credentials, or asks for some and the URL gave none.
    #[error(
        "Redis refused the credentials ({source}); give the password in the URL \
         (redis://:PASSWORD@HOST) or in PARROT_TEE_REDIS_PASSWORD"
    )]
    Credentials {
        /// The client's error.
        source: redis::RedisError,
    },

    /// The store's host name does not resolve.
    #[error("host \"{host}\" does not resolve: {reason}")]
    Resolve {
        /// The host name.
        host: String,
        /// The resolver's answer.
        reason: String,
    },
}
