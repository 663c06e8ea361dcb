//! The in-memory tee store.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::TeeStore;
use crate::error::TeeError;

/// A bounded in-memory store: at most `max_retained` originals, the oldest evicted first (a put
/// of the bytes a key already holds makes that entry the newest).
///
/// Everything is lost with the process; use [`crate::SqliteTeeStore`] for originals that must
/// outlive it. One lock guards the map and the eviction order together, so concurrent puts and
/// gets from any number of threads see a consistent store.
///
/// # Examples
///
/// ```
/// use parrot_host::{MemoryTeeStore, TeeStore};
///
/// let store = MemoryTeeStore::default();
/// store.put("__tee__:sql_select:a615eeaee21d", b"[1,2,3]").unwrap();
/// assert_eq!(
///     store.get("__tee__:sql_select:a615eeaee21d").unwrap().as_deref(),
///     Some(&b"[1,2,3]"[..]),
/// );
/// ```
#[derive(Debug)]
pub struct MemoryTeeStore {
    max_retained: usize,
    inner: Mutex<Retained>,
}

#[derive(Debug, Default)]
struct Retained {
    /// Shared so that a get copies a large original after releasing the lock.
    by_key: HashMap<String, Arc<[u8]>>,
    /// Keys in insertion order, the oldest at the front.
    order: VecDeque<String>,
}

impl MemoryTeeStore {
    /// The default bound.
    pub const DEFAULT_MAX_RETAINED: usize = 200;

    /// A store keeping at most `max_retained` originals (at least one).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{MemoryTeeStore, TeeStore};
    ///
    /// let store = MemoryTeeStore::new(0);
    /// store.put("only", b"kept").unwrap();
    /// assert_eq!(store.get("only").unwrap().as_deref(), Some(&b"kept"[..]), "0 keeps one");
    /// ```
    pub fn new(max_retained: usize) -> MemoryTeeStore {
        MemoryTeeStore {
            max_retained: max_retained.max(1),
            inner: Mutex::default(),
        }
    }

    fn retained(&self) -> MutexGuard<'_, Retained> {
        // Every update leaves the map and the order consistent before anything that could panic
        // (only allocation), so a poisoned lock still guards a usable store.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryTeeStore {
    fn default() -> MemoryTeeStore {
        MemoryTeeStore::new(MemoryTeeStore::DEFAULT_MAX_RETAINED)
    }
}

impl TeeStore for MemoryTeeStore {
    fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
        // Copy outside the lock: a large original must not stall the other threads.
        let original: Arc<[u8]> = Arc::from(original);
        let mut retained = self.retained();
        if let Some(held) = retained.by_key.get(key) {
            if **held != *original {
                return Err(TeeError::KeyExists {
                    key: key.to_owned(),
                });
            }
            let Retained { order, .. } = &mut *retained;
            if let Some(renewed) = order
                .iter()
                .position(|k| k == key)
                .and_then(|at| order.remove(at))
            {
                order.push_back(renewed);
            }
            return Ok(());
        }
        while retained.order.len() >= self.max_retained {
            let Some(oldest) = retained.order.pop_front() else {
                break;
            };
            retained.by_key.remove(&oldest);
        }
        retained.by_key.insert(key.to_owned(), original);
        retained.order.push_back(key.to_owned());
        Ok(())
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        let found = self.retained().by_key.get(key).cloned();
        Ok(found.map(|original| original.to_vec()))
    }

    fn name(&self) -> String {
        "memory".to_owned()
    }
}
