//! Tee stores: where the original of every lossy outcome is kept, so that nothing goes lossy
//! without a way back.
//!
//! A store never overwrites a key: a put of the bytes a key already holds is a success that
//! stores nothing new, a put of other bytes is refused. Without a store, the host caps `normal`
//! and `aggressive` to `minimal`. This crate has [`MemoryTeeStore`], bounded and gone with the
//! process; the persistent stores are crates of their own, so that a host that does not use
//! them compiles neither SQLite nor a Redis client: `parrot-tee-sqlite` (`SqliteTeeStore`, a
//! file on disk that survives restarts and is shared by several processes) and
//! `parrot-tee-redis` (`RedisTeeStore`, shared by every machine that reaches one Redis).
//!
//! A key is a content hash anyone who saw it can name; a [`Namespace`] says whose an original
//! is. A call in a namespace is stored under `{namespace}/{key}`, and only a recovery in that
//! namespace reads it (see [`Namespace`]).

mod memory;
mod namespace;
mod retention;

pub use memory::MemoryTeeStore;
pub(crate) use namespace::Scoped;
pub use namespace::{MAX_NAMESPACE_LEN, Namespace};
pub use retention::{Retention, TeeStats};

use crate::error::TeeError;

/// The start of the keys under which a program keeps records of its own in a tee store, beside
/// the originals: `parrot-compress serve` keeps there the recoveries it puts back into a
/// conversation (in the conversation's namespace, `{namespace}/__record__:…`), so that every
/// proxy sharing the store finds them. They live and go as originals do (the store's
/// retention), but they are none: [`Host::recover_in`](crate::Host::recover_in) finds nothing
/// under such a key, and [`nearest_key`] never suggests one.
pub const RECORD_KEY_PREFIX: &str = "__record__:";

/// Somewhere to keep originals by key.
///
/// # Examples
///
/// ```
/// use parrot_host::{MemoryTeeStore, TeeStore};
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
    /// there searches for the one that was meant ([`nearest_key`]). `Ok(None)` when the store
    /// cannot list its keys, which is the default, so that a store of another crate need not.
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

/// The key `store` holds nearest `key`, in `namespace` (given and returned as the plain key) or
/// among the keys of no namespace, when one is near enough to be a slip in copying it: at most
/// 2 edits, or a tenth of the key's length when that is more. Keys are hashes, so two keys of
/// one tool differ in most of their last characters and a suggestion further off would name
/// another original. `None` too when the store cannot list its keys, or fails to: a
/// suggestion is a courtesy, never a reason for a second error.
///
/// # Examples
///
/// ```
/// use parrot_host::{MemoryTeeStore, Namespace, TeeStore, nearest_key};
///
/// let store = MemoryTeeStore::default();
/// store.put("__tee__:sql_select:a615eeaee21d", b"[1,2,3]").unwrap();
/// let team = Namespace::new("team-a").unwrap();
/// store.put(&team.scoped_key("__tee__:grep:0123456789ab"), b"x").unwrap();
///
/// let slip = "__tee__:sql_select:a615eeaee21";
/// assert_eq!(nearest_key(&store, None, slip).as_deref(), Some("__tee__:sql_select:a615eeaee21d"));
/// assert_eq!(nearest_key(&store, None, "__tee__:sql_select:ffffffffffff"), None);
/// assert_eq!(
///     nearest_key(&store, Some(&team), "__tee__:grep:0123456789a").as_deref(),
///     Some("__tee__:grep:0123456789ab"),
/// );
/// assert_eq!(nearest_key(&store, None, "__tee__:grep:0123456789a"), None, "another namespace's");
/// // A record of the proxy's is no original to suggest.
/// store.put("__record__:merge:0123", b"{}").unwrap();
/// assert_eq!(nearest_key(&store, None, "__record__:merge:0124"), None);
/// ```
pub fn nearest_key(
    store: &dyn TeeStore,
    namespace: Option<&Namespace>,
    key: &str,
) -> Option<String> {
    let keys = match namespace {
        Some(namespace) => Scoped { store, namespace }.keys(),
        None => store.keys(),
    };
    let keys = keys.ok()??;
    let within = (key.len() / 10).max(2);
    keys.into_iter()
        .filter(|candidate| namespace.is_some() || !Namespace::is_scoped(candidate))
        .filter(|candidate| candidate != key && !candidate.starts_with(RECORD_KEY_PREFIX))
        .map(|candidate| (strsim::damerau_levenshtein(key, &candidate), candidate))
        .filter(|(distance, _)| *distance <= within)
        .min_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.cmp(y)))
        .map(|(_, candidate)| candidate)
}

/// `url` with the password of its user information replaced by `***`, read as written (so
/// that a URL no parser accepts is masked too). Every message that shows a URL a person gave
/// (a Redis store's name, a proxy's upstream) shows it through this.
///
/// # Examples
///
/// ```
/// use parrot_host::mask_password;
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

    const HELD: &str = "__tee__:sql_select:a615eeaee21d";

    #[test]
    fn a_slipped_key_is_suggested_and_another_originals_is_not() {
        let store = MemoryTeeStore::default();
        store.put(HELD, b"[1]").unwrap();
        store
            .put("__tee__:sql_select:0b1c2d3e4f50", b"[2]")
            .unwrap();
        let cases = [
            (
                "the last character lost",
                "__tee__:sql_select:a615eeaee21",
                Some(HELD),
            ),
            ("two swapped", "__tee__:sql_select:a615eeaee2d1", Some(HELD)),
            (
                "three typed wrong",
                "__tee__:sql_select:a615eeaee999",
                Some(HELD),
            ),
            ("four typed wrong", "__tee__:sql_select:a615eee99999", None),
            ("another tool's", "__tee__:grep:a615eeaee21d", None),
            ("the key itself is not a suggestion", HELD, None),
            ("nothing like it", "nope", None),
        ];
        for (case, key, near) in cases {
            assert_eq!(nearest_key(&store, None, key).as_deref(), near, "{case}");
        }
    }

    #[test]
    fn the_nearest_key_is_sought_in_the_namespace_asked_alone() {
        let store = MemoryTeeStore::default();
        // One character: the scoped key is 2 edits from the plain one, near enough to offer.
        let team = Namespace::new("a").unwrap();
        let other = Namespace::new("b").unwrap();
        store.put(&team.scoped_key(HELD), b"a").unwrap();
        let slip = &HELD[..HELD.len() - 1];
        assert_eq!(
            nearest_key(&store, Some(&team), slip).as_deref(),
            Some(HELD)
        );
        assert_eq!(nearest_key(&store, Some(&other), slip), None);
        assert_eq!(
            nearest_key(&store, None, slip),
            None,
            "a scoped key is not unscoped"
        );
        store.put(HELD, b"plain").unwrap();
        assert_eq!(nearest_key(&store, None, slip).as_deref(), Some(HELD));
    }

    /// A store of another crate that does not list its keys.
    struct Unlisted(MemoryTeeStore);

    impl TeeStore for Unlisted {
        fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
            self.0.put(key, original)
        }

        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
            self.0.get(key)
        }
    }

    #[test]
    fn a_store_that_cannot_list_its_keys_gets_no_suggestion() {
        let store = Unlisted(MemoryTeeStore::default());
        store.put(HELD, b"[1]").unwrap();
        assert_eq!(store.keys().unwrap(), None);
        assert_eq!(nearest_key(&store, None, &HELD[..HELD.len() - 1]), None);
    }

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
