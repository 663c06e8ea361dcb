//! The in-memory tee store.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::TeeStore;
use crate::error::TeeError;

/// A bounded in-memory store: at most `max_retained` originals, the oldest evicted first (a put
/// of the bytes a key already holds makes that entry the newest).
///
/// Everything is lost with the process; use a persistent store (`parrot-tee-sqlite`,
/// `parrot-tee-redis`) for originals that must outlive it. One lock guards the map and the
/// eviction order together, so concurrent puts and gets from any number of threads see a
/// consistent store.
///
/// # Examples
///
/// ```
/// use parrot_tee::{MemoryTeeStore, TeeStore};
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

impl Retained {
    /// Makes `key` the newest entry, if the store holds it.
    fn renew(&mut self, key: &str) {
        if let Some(renewed) = self
            .order
            .iter()
            .position(|k| k == key)
            .and_then(|at| self.order.remove(at))
        {
            self.order.push_back(renewed);
        }
    }
}

impl MemoryTeeStore {
    /// The default bound.
    pub const DEFAULT_MAX_RETAINED: usize = 200;

    /// A store keeping at most `max_retained` originals (at least one).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::{MemoryTeeStore, TeeStore};
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
        // Keys are content addresses: a tool that gives the same result again gets the key it
        // got before, so the bytes held are compared before anything is copied. Both the
        // comparison and the copy run outside the lock: a large original must not stall the
        // other threads.
        let held = self.retained().by_key.get(key).cloned();
        if let Some(held) = held {
            if *held != *original {
                return Err(TeeError::KeyExists {
                    key: key.to_owned(),
                });
            }
            let mut retained = self.retained();
            if retained
                .by_key
                .get(key)
                .is_some_and(|now| Arc::ptr_eq(now, &held))
            {
                retained.renew(key);
                return Ok(());
            }
            // Evicted since it was compared (and perhaps stored again): as if it were new.
        }
        let original: Arc<[u8]> = Arc::from(original);
        let mut retained = self.retained();
        // Another thread may have stored the key between the two locks.
        if let Some(held) = retained.by_key.get(key) {
            if **held != *original {
                return Err(TeeError::KeyExists {
                    key: key.to_owned(),
                });
            }
            retained.renew(key);
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

    fn keys(&self) -> Result<Option<Vec<String>>, TeeError> {
        Ok(Some(self.retained().order.iter().cloned().collect()))
    }

    fn name(&self) -> String {
        "memory".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;

    fn held(store: &MemoryTeeStore, key: &str) -> Arc<[u8]> {
        Arc::clone(&store.retained().by_key[key])
    }

    fn consistent(store: &MemoryTeeStore) -> usize {
        let retained = store.retained();
        assert_eq!(retained.by_key.len(), retained.order.len());
        assert!(
            retained
                .order
                .iter()
                .all(|k| retained.by_key.contains_key(k))
        );
        retained.order.len()
    }

    #[test]
    fn the_keys_listed_are_those_still_held_oldest_first() {
        let store = MemoryTeeStore::new(2);
        assert_eq!(store.keys().unwrap(), Some(vec![]));
        for key in ["a", "b", "c"] {
            store.put(key, key.as_bytes()).unwrap();
        }
        assert_eq!(
            store.keys().unwrap(),
            Some(vec!["b".to_owned(), "c".to_owned()])
        );
        store.put("b", b"b").unwrap();
        assert_eq!(
            store.keys().unwrap(),
            Some(vec!["c".to_owned(), "b".to_owned()])
        );
    }

    #[test]
    fn a_put_of_the_bytes_a_key_holds_stores_nothing_new() {
        let store = MemoryTeeStore::new(10);
        let original = vec![7u8; 300 * 1024];
        store.put("k", &original).unwrap();
        let first = held(&store, "k");
        store.put("k", &original.clone()).unwrap();
        assert!(
            Arc::ptr_eq(&first, &held(&store, "k")),
            "the copy stored first is the one kept"
        );
        assert_eq!(consistent(&store), 1);
    }

    #[test]
    fn other_bytes_under_a_taken_key_are_refused_and_the_held_ones_stay() {
        let store = MemoryTeeStore::new(10);
        store.put("k", b"first").unwrap();
        let first = held(&store, "k");
        let err = store.put("k", b"first!").unwrap_err();
        assert!(
            matches!(&err, TeeError::KeyExists { key } if key == "k"),
            "{err}"
        );
        assert!(Arc::ptr_eq(&first, &held(&store, "k")));
        assert_eq!(consistent(&store), 1);
    }

    #[test]
    fn repeated_puts_from_many_threads_while_evicting_stay_consistent() {
        // Two slots, three keys: every put may find its key held, evicted since it looked, or
        // stored again by another thread.
        let store = MemoryTeeStore::new(2);
        let originals: Vec<Vec<u8>> = (0..3u8).map(|n| vec![n; 4096]).collect();
        thread::scope(|scope| {
            for t in 0..4 {
                let (store, originals) = (&store, &originals);
                scope.spawn(move || {
                    for n in 0..500 {
                        let i = (n + t) % originals.len();
                        store.put(&format!("k{i}"), &originals[i]).unwrap();
                    }
                });
            }
        });
        assert_eq!(consistent(&store), 2);
        for (i, original) in originals.iter().enumerate() {
            if let Some(back) = store.get(&format!("k{i}")).unwrap() {
                assert_eq!(&back, original, "k{i}");
            }
        }
    }
}
