//! parrot-tee: the tee store interface of parrot-compress. A tee store is where the original
//! of every lossy outcome is kept, so that nothing goes lossy without a way back.
//!
//! This crate is what a store needs and nothing of the host: the [`TeeStore`] trait, its error
//! [`TeeError`], the [`Retention`] and [`TeeStats`] the persistent stores share, the
//! [`Namespace`] a key is kept under, and [`MemoryTeeStore`], bounded and gone with the
//! process. It depends on no codec, so a store crate built on it compiles none. The persistent
//! stores are crates of their own, so that a host that does not use them compiles neither
//! SQLite nor a Redis client: `parrot-tee-sqlite` (`SqliteTeeStore`, a file on disk that
//! survives restarts and is shared by several processes) and `parrot-tee-redis`
//! (`RedisTeeStore`, shared by every machine that reaches one Redis). `parrot-host` re-exports
//! every item of this crate and takes any store through `HostBuilder::tee_store`.
//!
//! A store never overwrites a key: a put of the bytes a key already holds is a success that
//! stores nothing new, a put of other bytes is refused. Without a store, the host caps `normal`
//! and `aggressive` to `minimal`.
//!
//! A key is a content hash anyone who saw it can name; a [`Namespace`] says whose an original
//! is. A call in a namespace is stored under `{namespace}/{key}`, and only a recovery in that
//! namespace reads it (see [`Namespace`]).
//!
//! # Writing a store
//!
//! A store implements [`TeeStore`]'s `put` and `get`, refusing to overwrite a key with other
//! bytes, and reports its own failures as [`TeeError::Backend`]:
//!
//! ```
//! use std::collections::HashMap;
//! use std::sync::Mutex;
//!
//! use parrot_tee::{TeeError, TeeStore};
//!
//! #[derive(Default)]
//! struct Store(Mutex<HashMap<String, Vec<u8>>>);
//!
//! impl TeeStore for Store {
//!     fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
//!         let mut held = self.0.lock().unwrap();
//!         match held.get(key) {
//!             Some(bytes) if bytes.as_slice() != original => {
//!                 Err(TeeError::KeyExists { key: key.to_owned() })
//!             }
//!             Some(_) => Ok(()),
//!             None => {
//!                 held.insert(key.to_owned(), original.to_vec());
//!                 Ok(())
//!             }
//!         }
//!     }
//!
//!     fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
//!         Ok(self.0.lock().unwrap().get(key).cloned())
//!     }
//! }
//!
//! let store = Store::default();
//! store.put("__tee__:sh:0123456789ab", b"[1,2]").unwrap();
//! assert!(store.put("__tee__:sh:0123456789ab", b"[3]").is_err());
//! assert_eq!(store.get("__tee__:sh:0123456789ab").unwrap().as_deref(), Some(&b"[1,2]"[..]));
//! ```
#![forbid(unsafe_code)]

mod error;
mod memory;
mod namespace;
mod retention;

pub use error::{NamespaceError, TeeError};
pub use memory::MemoryTeeStore;
pub use namespace::{MAX_NAMESPACE_LEN, Namespace};
pub use retention::{Retention, TeeStats};

/// The start of the keys under which a program keeps records of its own in a tee store, beside
/// the originals: `parrot-compress serve` keeps there the recoveries it puts back into a
/// conversation (in the conversation's namespace, `{namespace}/__record__:…`), so that every
/// proxy sharing the store finds them. They live and go as originals do (the store's
/// retention), but they are none: the host's `Host::recover_in` finds nothing under such a key,
/// and its `nearest_key` never suggests one.
pub const RECORD_KEY_PREFIX: &str = "__record__:";

/// Somewhere to keep originals by key.
///
/// # Examples
///
/// ```
/// use parrot_tee::{MemoryTeeStore, TeeStore};
///
/// let store = MemoryTeeStore::new(2);
/// store.put("k1", b"one").unwrap();
/// assert!(store.put("k1", b"again").is_err(), "keys are never overwritten");
/// store.put("k1", b"one").unwrap(); // the same bytes: nothing new to store
/// store.put("k2", b"two").unwrap();
/// store.put("k3", b"three").unwrap();
/// assert_eq!(store.get("k1").unwrap(), None, "the oldest is evicted");
/// assert_eq!(store.get("k3").unwrap().as_deref(), Some(&b"three"[..]));
/// assert_eq!(store.name(), "memory");
/// ```
pub trait TeeStore: Send + Sync {
    /// Stores `original` under `key`. When `key` already holds exactly these bytes, the put
    /// succeeds without storing them again; a store with an eviction order counts the entry as
    /// just stored, so that a key handed out again lasts as long as a new one.
    ///
    /// # Errors
    ///
    /// [`TeeError::KeyExists`] when the key holds different bytes (they stay as they were), or
    /// [`TeeError::Backend`] with the store's own error when it fails.
    fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError>;

    /// The original stored under `key`, if any.
    ///
    /// # Errors
    ///
    /// [`TeeError::Backend`] with the store's own error when it fails.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError>;

    /// Every key the store holds, in no promised order: what a caller given a key that is not
    /// there searches for the one that was meant (the host's `nearest_key`). `Ok(None)` when
    /// the store cannot list its keys, which is the default, so that a store of another crate
    /// need not.
    ///
    /// # Errors
    ///
    /// [`TeeError::Backend`] with the store's own error when it fails.
    fn keys(&self) -> Result<Option<Vec<String>>, TeeError> {
        Ok(None)
    }

    /// What to call the store in messages: `memory`, or the path of the file. Defaults to the
    /// implementing type's name.
    fn name(&self) -> String {
        std::any::type_name::<Self>().to_owned()
    }
}

/// `url` with the password of its user information replaced by `***`, read as written (so
/// that a URL no parser accepts is masked too). Every message that shows a URL a person gave
/// (a Redis store's name, a proxy's upstream) shows it through this.
///
/// # Examples
///
/// ```
/// use parrot_tee::mask_password;
///
/// assert_eq!(mask_password("redis://u:secret@h:1/0"), "redis://u:***@h:1/0");
/// assert_eq!(mask_password("http://u:secret@h/v1"), "http://u:***@h/v1");
/// assert_eq!(mask_password("http://h/v1"), "http://h/v1");
/// ```
pub fn mask_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let authority_start = scheme_end + 3;
    let authority_end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| authority_start + at);
    let authority = &url[authority_start..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    let userinfo = &authority[..at];
    let Some(colon) = userinfo.find(':') else {
        return url.to_owned();
    };
    format!(
        "{}{}:***{}",
        &url[..authority_start],
        &userinfo[..colon],
        &url[authority_start + at..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_masked_wherever_the_url_puts_it() {
        let cases = [
            ("redis://:secret@h:1/0", "redis://:***@h:1/0"),
            (
                "redis://user:secret@h/0?prefix=a",
                "redis://user:***@h/0?prefix=a",
            ),
            ("redis://user@h", "redis://user@h"),
            ("redis://h:1", "redis://h:1"),
            ("rediss://:p@ss:w@rd@h", "rediss://:***@h"),
            ("http://:secret@", "http://:***@"),
            ("no scheme :secret@h", "no scheme :secret@h"),
        ];
        for (url, masked) in cases {
            assert_eq!(mask_password(url), masked, "{url}");
        }
    }
}
