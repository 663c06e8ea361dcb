//! Tee stores, as the host uses them: the interface is `parrot-tee`'s, re-exported whole, so
//! that a store crate needs nothing of the host; what only the host does with a store is here —
//! a store seen through a call's namespace ([`Scoped`]), and the key a recovery that finds
//! nothing suggests instead ([`nearest_key`]).

pub use parrot_tee::*;

/// A store seen through a namespace: every key is [`Namespace::scoped_key`]'s. The pipeline
/// stores a scoped call's original through it, so the rules that store and the collision
/// fallback to the whole digest work the same on scoped keys, and hand back the plain key.
pub(crate) struct Scoped<'s> {
    pub(crate) store: &'s dyn TeeStore,
    pub(crate) namespace: &'s Namespace,
}

impl TeeStore for Scoped<'_> {
    fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
        self.store.put(&self.namespace.scoped_key(key), original)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        self.store.get(&self.namespace.scoped_key(key))
    }

    fn keys(&self) -> Result<Option<Vec<String>>, TeeError> {
        let prefix = self.namespace.scoped_key("");
        Ok(self.store.keys()?.map(|keys| {
            keys.into_iter()
                .filter_map(|key| key.strip_prefix(&prefix).map(str::to_owned))
                .collect()
        }))
    }

    fn name(&self) -> String {
        self.store.name()
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
        .filter(|candidate| namespace.is_some() || Namespace::split_scoped(candidate).is_none())
        .filter(|candidate| candidate != key && !candidate.starts_with(RECORD_KEY_PREFIX))
        .map(|candidate| (strsim::damerau_levenshtein(key, &candidate), candidate))
        .filter(|(distance, _)| *distance <= within)
        .min_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.cmp(y)))
        .map(|(_, candidate)| candidate)
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
    fn a_call_in_a_namespace_is_stored_under_it_and_points_at_the_plain_key() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(MemoryTeeStore::new(10));
        let host = crate::Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .tee_store(store.clone())
            .tee_lossless(true)
            .build()
            .unwrap();
        let team = Namespace::new("team").unwrap();
        let rows: Vec<String> = (0..40)
            .map(|i| format!("  {{\n    \"id\": {i},\n    \"note\": null\n  }}"))
            .collect();
        let input = &format!("[\n{}\n]", rows.join(",\n"));
        let call = crate::Call::new("q", crate::Input::Text(input));
        let scoped = host.process(call.namespace(&team));
        let key = scoped.meta.tee_key.clone().expect("a pointer");
        assert!(key.starts_with("__tee__:q:"), "{key}");
        assert!(
            scoped.text().unwrap().contains(&key),
            "the pointer names the plain key"
        );
        assert_eq!(
            store.get(&format!("team/{key}")).unwrap().as_deref(),
            Some(input.as_bytes())
        );
        assert_eq!(store.get(&key).unwrap(), None);
        // Unscoped, as before: the same key, stored under itself.
        let plain = host.process(call);
        assert_eq!(plain.meta.tee_key.as_deref(), Some(key.as_str()));
        assert_eq!(store.get(&key).unwrap().as_deref(), Some(input.as_bytes()));
    }

    /// The review's finding (issue 47): `recover("alice/KEY")` read alice's original, since
    /// the store holds it under exactly that name.
    #[test]
    fn an_unscoped_recovery_of_a_key_naming_a_namespace_finds_nothing() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(MemoryTeeStore::new(10));
        let alice = Namespace::new("alice").unwrap();
        let key = "__tee__:sh:f3eb0123abcd";
        store.put(&alice.scoped_key(key), b"alice's").unwrap();
        store
            .put("__tee__:gh/search:0123456789ab", b"plain")
            .unwrap();
        let host = crate::Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .tee_store(store)
            .build()
            .unwrap();
        // (the namespace of the recovery, the key asked for, what it finds)
        let cases: [(Option<&str>, &str, Option<&str>); 6] = [
            (None, "alice/__tee__:sh:f3eb0123abcd", None),
            (None, "key-0123456789abcdef/__tee__:sh:f3eb0123abcd", None),
            (Some("alice"), key, Some("alice's")),
            // A tool's name may hold a `/`: its key is of no namespace.
            (None, "__tee__:gh/search:0123456789ab", Some("plain")),
            // In a namespace, a key holding a `/` stays in it.
            (Some("alice"), "alice/__tee__:sh:f3eb0123abcd", None),
            (Some("bob"), "../alice/__tee__:sh:f3eb0123abcd", None),
        ];
        for (namespace, key, found) in cases {
            let namespace = namespace.map(|name| Namespace::new(name).unwrap());
            assert_eq!(
                host.recover_in(namespace.as_ref(), key).unwrap().as_deref(),
                found.map(str::as_bytes),
                "{namespace:?} {key}"
            );
        }
    }

    #[test]
    fn a_scoped_store_keeps_originals_under_the_namespace_and_finds_only_its_own() {
        let store = MemoryTeeStore::new(10);
        let a = Namespace::new("a").unwrap();
        let b = Namespace::new("b").unwrap();
        let in_a = Scoped {
            store: &store,
            namespace: &a,
        };
        in_a.put("__tee__:t:0123456789ab", b"A's").unwrap();
        assert_eq!(
            store.get("a/__tee__:t:0123456789ab").unwrap().as_deref(),
            Some(&b"A's"[..])
        );
        assert_eq!(store.get("__tee__:t:0123456789ab").unwrap(), None);
        let in_b = Scoped {
            store: &store,
            namespace: &b,
        };
        assert_eq!(in_b.get("__tee__:t:0123456789ab").unwrap(), None);
        // The same key in another namespace holds other bytes without a collision.
        in_b.put("__tee__:t:0123456789ab", b"B's").unwrap();
        assert_eq!(
            in_a.get("__tee__:t:0123456789ab").unwrap().as_deref(),
            Some(&b"A's"[..])
        );
    }
}
