//! Tee stores: where the original of every lossy outcome is kept, so that nothing goes lossy
//! without a way back.
//!
//! A store never overwrites a key. Without a store, the host caps `normal` and `aggressive` to
//! `minimal`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::error::Error;

/// Somewhere to keep originals by key.
///
/// # Examples
///
/// ```
/// use parrot_compress::{MemoryTeeStore, TeeStore};
///
/// let store = MemoryTeeStore::new(2);
/// store.put("k1", b"one").unwrap();
/// assert!(store.put("k1", b"again").is_err(), "keys are never overwritten");
/// store.put("k2", b"two").unwrap();
/// store.put("k3", b"three").unwrap();
/// assert_eq!(store.get("k1").unwrap(), None, "the oldest is evicted");
/// assert_eq!(store.get("k3").unwrap().as_deref(), Some(&b"three"[..]));
/// ```
pub trait TeeStore: Send + Sync {
    /// Stores `original` under `key`.
    ///
    /// # Errors
    ///
    /// [`Error::TeeKeyExists`] when the key is taken (the caller picks another), or
    /// [`Error::TeeStore`] when the store fails.
    fn put(&self, key: &str, original: &[u8]) -> Result<(), Error>;

    /// The original stored under `key`, if any.
    ///
    /// # Errors
    ///
    /// [`Error::TeeStore`] when the store fails.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error>;
}

/// A bounded in-memory store: at most `max_retained` originals, the oldest evicted first.
#[derive(Debug)]
pub struct MemoryTeeStore {
    max_retained: usize,
    inner: Mutex<Retained>,
}

#[derive(Debug, Default)]
struct Retained {
    by_key: HashMap<String, Vec<u8>>,
    order: VecDeque<String>,
}

impl MemoryTeeStore {
    /// The default bound.
    pub const DEFAULT_MAX_RETAINED: usize = 200;

    /// A store keeping at most `max_retained` originals (at least one).
    pub fn new(max_retained: usize) -> MemoryTeeStore {
        MemoryTeeStore {
            max_retained: max_retained.max(1),
            inner: Mutex::default(),
        }
    }
}

impl Default for MemoryTeeStore {
    fn default() -> MemoryTeeStore {
        MemoryTeeStore::new(MemoryTeeStore::DEFAULT_MAX_RETAINED)
    }
}

impl TeeStore for MemoryTeeStore {
    fn put(&self, key: &str, original: &[u8]) -> Result<(), Error> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.by_key.contains_key(key) {
            return Err(Error::TeeKeyExists {
                key: key.to_owned(),
            });
        }
        while inner.order.len() >= self.max_retained {
            if let Some(oldest) = inner.order.pop_front() {
                inner.by_key.remove(&oldest);
            }
        }
        inner.by_key.insert(key.to_owned(), original.to_vec());
        inner.order.push_back(key.to_owned());
        Ok(())
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        Ok(inner.by_key.get(key).cloned())
    }
}
