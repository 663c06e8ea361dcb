//! What the stage keeps in the tee store and how the output points at it: content-addressed tee
//! keys (`__tee__:<tool>:<12 hex digits of the original's SHA-256>`, the whole digest when a
//! different original holds the short key), and the `_tee` pointer spliced into a payload.

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::error::TeeError;
use crate::tee::TeeStore;
use parrot_json::TopLevel;

/// The hint every tee pointer carries: how to call the recovery tool, for the whole original
/// or for the part a marker names (each marker names its selector: `{"lines":"A-B"}`,
/// `"pointer"`, `"rows"`). Short, because every lossy result pays for it.
pub const TEE_HINT: &str =
    "wm_get_result with this key returns it all; add a marker's selector for that part";

/// The hex digits of the digest in a key: 48 bits, about 7 tokens of o200k (16 digits cost
/// about 9.4). Among 10,000 originals of one tool, two share a short key with a chance of about
/// 2 in 10^7; that is not an error: the second original goes under the whole digest
/// ([`store`]), so the only cost of a collision is a longer key.
pub(crate) const KEY_HEX_DIGITS: usize = 12;

/// The key of `original` from `tool`, with the first `digits` hex digits of its SHA-256.
pub(super) fn content_key(tool: &str, original: &[u8], digits: usize) -> String {
    format!("__tee__:{tool}:{}", &sha256_hex(original)[..digits.min(64)])
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// Stores `original` from `tool` under its content key, the same for the same bytes wherever
/// and whenever they are stored; returns the key. `key` is that key when the caller has it
/// already (the pointer's), saving a second digest of the original. A store that holds other
/// bytes under the short key keeps them, and `original` goes under the whole digest.
///
/// # Errors
///
/// The store's error; [`TeeError::KeyExists`] if even the whole digest holds other bytes.
pub(super) fn store(
    tee: &dyn TeeStore,
    tool: &str,
    original: &[u8],
    key: Option<String>,
) -> Result<String, TeeError> {
    let short = key.unwrap_or_else(|| content_key(tool, original, KEY_HEX_DIGITS));
    match tee.put(&short, original) {
        Err(TeeError::KeyExists { .. }) => {
            let whole = content_key(tool, original, 64);
            tee.put(&whole, original).map(|()| whole)
        }
        stored => stored.map(|()| short),
    }
}

/// The `_tee` member's value: `{"key": …, "reason": …, "hint": …}`.
pub(super) fn tee_pointer(key: &str, reason: &str) -> String {
    json!({"key": key, "reason": reason, "hint": TEE_HINT}).to_string()
}

/// Gives a payload its `_tee` pointer: a last member of an object that has none, else a
/// `{"result": …, "_tee": …}` wrapper (text becomes a JSON string).
pub(super) fn attach_pointer(
    payload: &str,
    shape: Option<TopLevel>,
    key: &str,
    reason: &str,
) -> String {
    let pointer = tee_pointer(key, reason);
    match shape {
        Some(TopLevel::Object {
            has_tee: false,
            empty,
        }) => {
            let body = payload.trim_end();
            let body = body.strip_suffix('}').unwrap_or(body);
            if empty {
                format!("{{\"_tee\":{pointer}}}")
            } else {
                format!("{body},\"_tee\":{pointer}}}")
            }
        }
        Some(_) => format!("{{\"result\":{},\"_tee\":{pointer}}}", payload.trim()),
        None => format!(
            "{{\"result\":{},\"_tee\":{pointer}}}",
            serde_json::to_string(payload).unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tee::MemoryTeeStore;

    #[test]
    fn pointers_go_last_in_objects_and_wrap_everything_else() {
        let obj = Some(TopLevel::Object {
            has_tee: false,
            empty: false,
        });
        let cases = [
            (
                r#"{"a":1}"#,
                obj,
                r#"{"a":1,"_tee":{"key":"k","reason":"lossy","hint":"wm_get_result with this key returns it all; add a marker's selector for that part"}}"#,
            ),
            (
                "{}",
                Some(TopLevel::Object {
                    has_tee: false,
                    empty: true,
                }),
                r#"{"_tee":{"key":"k","reason":"lossy","hint":"wm_get_result with this key returns it all; add a marker's selector for that part"}}"#,
            ),
            (
                r#"{"_tee":1}"#,
                Some(TopLevel::Object {
                    has_tee: true,
                    empty: false,
                }),
                r#"{"result":{"_tee":1},"_tee":{"key":"k","reason":"lossy","hint":"wm_get_result with this key returns it all; add a marker's selector for that part"}}"#,
            ),
            (
                "[1,2]",
                Some(TopLevel::Other),
                r#"{"result":[1,2],"_tee":{"key":"k","reason":"lossy","hint":"wm_get_result with this key returns it all; add a marker's selector for that part"}}"#,
            ),
            (
                "plain \"text\"",
                None,
                r#"{"result":"plain \"text\"","_tee":{"key":"k","reason":"lossy","hint":"wm_get_result with this key returns it all; add a marker's selector for that part"}}"#,
            ),
        ];
        for (payload, shape, expected) in cases {
            assert_eq!(
                attach_pointer(payload, shape, "k", "lossy"),
                expected,
                "for {payload}"
            );
        }
    }

    #[test]
    fn keys_are_the_tool_and_twelve_hex_digits_of_the_sha256() {
        // SHA-256("abc"), FIPS 180-2's first example.
        assert_eq!(
            content_key("t", b"abc", KEY_HEX_DIGITS),
            "__tee__:t:ba7816bf8f01"
        );
        assert_eq!(
            content_key("t", b"abc", 64),
            "__tee__:t:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_same_original_is_stored_once_under_one_key() {
        let tee = MemoryTeeStore::new(10);
        let first = store(&tee, "t", b"original", None).unwrap();
        let again = store(&tee, "t", b"original", None).unwrap();
        assert_eq!(first, again);
        assert_eq!(first, content_key("t", b"original", KEY_HEX_DIGITS));
        assert_ne!(store(&tee, "other_tool", b"original", None).unwrap(), first);
        assert_ne!(store(&tee, "t", b"original!", None).unwrap(), first);
    }

    #[test]
    fn a_collision_on_the_short_key_goes_under_the_whole_digest() {
        // With one hex digit, two of any 17 originals share a short key.
        let originals: Vec<Vec<u8>> = (0..17u8).map(|n| vec![n; 3]).collect();
        let (a, b) = originals
            .iter()
            .enumerate()
            .find_map(|(i, a)| {
                originals[i + 1..]
                    .iter()
                    .find(|b| content_key("t", a, 1) == content_key("t", b, 1))
                    .map(|b| (a, b))
            })
            .expect("pigeonhole");
        let short = |original: &[u8]| Some(content_key("t", original, 1));
        let tee = MemoryTeeStore::new(10);
        let key_a = store(&tee, "t", a, short(a)).unwrap();
        let key_b = store(&tee, "t", b, short(b)).unwrap();
        assert_eq!(key_a, content_key("t", a, 1));
        assert_eq!(key_b, content_key("t", b, 64));
        assert_eq!(tee.get(&key_a).unwrap().as_deref(), Some(&a[..]));
        assert_eq!(tee.get(&key_b).unwrap().as_deref(), Some(&b[..]));
        // Stored again, each finds its own key and nothing new is stored.
        assert_eq!(store(&tee, "t", b, short(b)).unwrap(), key_b);
        assert_eq!(store(&tee, "t", a, short(a)).unwrap(), key_a);
    }

    /// A store that holds other bytes under every key.
    struct Squatted;

    impl TeeStore for Squatted {
        fn put(&self, key: &str, _: &[u8]) -> Result<(), TeeError> {
            Err(TeeError::KeyExists {
                key: key.to_owned(),
            })
        }

        fn get(&self, _: &str) -> Result<Option<Vec<u8>>, TeeError> {
            Ok(Some(b"someone else's".to_vec()))
        }
    }

    #[test]
    fn a_collision_on_the_whole_digest_too_is_an_error_not_a_claim() {
        let err = store(&Squatted, "t", b"abc", None).unwrap_err();
        assert!(
            matches!(&err, TeeError::KeyExists { key } if key == &content_key("t", b"abc", 64)),
            "{err}"
        );
    }
}
