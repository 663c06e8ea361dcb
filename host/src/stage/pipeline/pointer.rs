//! What the stage keeps in the tee store and how the output points at it: content-addressed tee
//! keys (`__tee__:<tool>:<12 hex digits of the original's SHA-256>`, the whole digest when a
//! different original holds the short key), and the `_tee` pointer spliced into a payload.

use serde_json::json;
use sha2::{Digest as _, Sha256};

use crate::error::TeeError;
use crate::tee::TeeStore;
use parrot_json::TopLevel;

/// The hint every tee pointer carries: how to call the recovery tool, for the whole original
/// or for the part a marker names (each marker names its selector: `{"lines":"A-B"}`,
/// `"pointer"`, `"rows"`). Short, because every lossy result pays for it.
pub const TEE_HINT: &str = concat!(
    parrot_codec_api::__recovery_tool_name!(),
    " with this key returns it all; add a marker's selector for that part"
);

/// The hex digits of the digest in a key: 48 bits, about 7 tokens of o200k (16 digits cost
/// about 9.4). Among 10,000 originals of one tool, two share a short key with a chance of about
/// 2 in 10^7; that is not an error: the second original goes under the whole digest
/// ([`store`]), so the only cost of a collision is a longer key.
pub(crate) const KEY_HEX_DIGITS: usize = 12;

/// The key of `original` from `tool`, with the first `digits` hex digits of its SHA-256.
pub(super) fn content_key(tool: &str, original: &[u8], digits: usize) -> String {
    key_of(tool, &Sha256::digest(original).into(), digits)
}

/// The key of the original whose SHA-256 is `digest`, from `tool` (see [`content_key`]).
pub(super) fn key_of(tool: &str, digest: &[u8; 32], digits: usize) -> String {
    use std::fmt::Write as _;
    let hex = digest
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        });
    format!("__tee__:{tool}:{}", &hex[..digits.min(64)])
}

/// Inputs from this size up whose key may be needed get their digest on a thread of their own
/// while the codec runs ([`Digest::beside`]). SHA-256 runs at about 1.4 GB/s here (with the
/// CPU's SHA instructions), 0.7 ms a MB. Measured with the other core busy (columnar at
/// `normal`, memory store, the median ratio to the scan): at 10 MB 1.85-2.02x became
/// 1.43-1.57x; at 1 MB nothing was gained (1.53-1.89x against 1.79-2.10x), as a thread
/// that waits for a core gives nothing back. So from 4 MB, where the digest alone is 2.8 ms.
pub(super) const DIGEST_BESIDE_BYTES: usize = 4 << 20;

/// How much the digest thread hashes between looks at whether it is still wanted.
const DIGEST_CHUNK: usize = 256 << 10;

/// Where an input's SHA-256 comes from when its key is needed: computed then, or by a thread
/// started before the codec ran.
pub(super) enum Digest<'s> {
    /// Computed by the caller when the key is needed.
    Later,
    /// Being computed beside the codec; taken once.
    Beside {
        thread: std::cell::Cell<Option<std::thread::ScopedJoinHandle<'s, Option<[u8; 32]>>>>,
        /// Set when the call ends without taking it: the thread stops at its next chunk.
        unwanted: &'s std::sync::atomic::AtomicBool,
    },
}

impl<'s> Digest<'s> {
    /// Starts hashing `input` on a thread of `scope`; [`Digest::Later`] when no thread starts.
    pub(super) fn beside<'e>(
        scope: &'s std::thread::Scope<'s, 'e>,
        input: &'s [u8],
        unwanted: &'s std::sync::atomic::AtomicBool,
    ) -> Digest<'s> {
        let started = std::thread::Builder::new()
            .name("parrot-digest".to_owned())
            .spawn_scoped(scope, move || {
                let mut hasher = Sha256::new();
                for chunk in input.chunks(DIGEST_CHUNK) {
                    if unwanted.load(std::sync::atomic::Ordering::Relaxed) {
                        return None;
                    }
                    hasher.update(chunk);
                }
                Some(hasher.finalize().into())
            });
        match started {
            Ok(thread) => Digest::Beside {
                thread: std::cell::Cell::new(Some(thread)),
                unwanted,
            },
            Err(_) => Digest::Later,
        }
    }

    /// The key of `input` from `tool` ([`content_key`]'s), from the thread's digest when there
    /// is one.
    pub(super) fn key(&self, tool: &str, input: &[u8], digits: usize) -> String {
        if let Digest::Beside { thread, .. } = self
            && let Some(Ok(Some(digest))) = thread.take().map(|thread| thread.join())
        {
            return key_of(tool, &digest, digits);
        }
        content_key(tool, input, digits)
    }

    /// Tells the thread, if it is still hashing, that its digest is not wanted.
    pub(super) fn forget(&self) {
        if let Digest::Beside { unwanted, .. } = self {
            unwanted.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
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

/// The pointer a text payload ends with, a line of its own: the recovery call with the key,
/// which returns the whole original (or, with a marker's selector added, that part).
/// `[wm_get_result {"key":"__tee__:sh:3f2a…"} returns the original of this lossy result; add a
/// marker's selector for that part]`.
pub fn text_pointer(key: &str, reason: &str) -> String {
    format!(
        "[{} {{\"key\":{}}} returns the original of this {reason} result; add a marker's \
         selector for that part]",
        parrot_codec_api::RECOVERY_TOOL,
        serde_json::to_string(key).unwrap_or_default()
    )
}

/// The key and the text before it, when `payload`'s last line is a text pointer
/// ([`text_pointer`]): what the proxies, `expand` and the tests read back.
pub fn split_text_pointer(payload: &str) -> Option<(&str, String)> {
    let (body, line) = payload.rsplit_once('\n')?;
    let rest = line.strip_prefix(concat!(
        "[",
        parrot_codec_api::__recovery_tool_name!(),
        " {\"key\":"
    ))?;
    let end = rest.find("} returns the original of this ")?;
    let key: String = serde_json::from_str(&rest[..end]).ok()?;
    Some((body, key))
}

/// Gives a payload its `_tee` pointer: a last member of an object that has none, a
/// `{"result": …, "_tee": …}` wrapper around other JSON, and a last line
/// ([`text_pointer`]) after text, which goes out as text.
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
        None => format!("{payload}\n{}", text_pointer(key, reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tee::MemoryTeeStore;

    #[test]
    fn a_digest_beside_gives_the_same_key_and_stops_when_forgotten() {
        let input: Vec<u8> = (0..3 * DIGEST_CHUNK + 17)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let unwanted = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let digest = Digest::beside(scope, &input, &unwanted);
            assert!(matches!(digest, Digest::Beside { .. }));
            assert_eq!(
                digest.key("t", &input, KEY_HEX_DIGITS),
                content_key("t", &input, KEY_HEX_DIGITS)
            );
            // Taken once; asked again, the key is computed on the spot, the same.
            assert_eq!(digest.key("t", &input, 64), content_key("t", &input, 64));
        });
        let unwanted = std::sync::atomic::AtomicBool::new(true);
        std::thread::scope(|scope| {
            let Digest::Beside { thread, .. } = Digest::beside(scope, &input, &unwanted) else {
                panic!("no thread started");
            };
            let stopped = thread.take().map(|thread| thread.join().unwrap());
            assert_eq!(
                stopped,
                Some(None),
                "an unwanted digest stops before its first chunk"
            );
        });
        assert_eq!(
            Digest::Later.key("t", &input, KEY_HEX_DIGITS),
            content_key("t", &input, KEY_HEX_DIGITS)
        );
    }

    #[test]
    fn pointers_go_last_in_objects_wrap_other_json_and_end_text() {
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
                "plain \"text\"\n",
                None,
                "plain \"text\"\n\n[wm_get_result {\"key\":\"k\"} returns the original of this lossy result; add a marker's selector for that part]",
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
    fn a_text_pointer_is_read_back_with_its_key_and_the_text_before_it() {
        for body in ["", "a\nb", "a\nb\n", "[wm_get_result {\"lines\":\"1-2\"}]"] {
            for key in ["__tee__:sh:0123456789ab", "__tee__:a \"b\":c"] {
                let pointed = attach_pointer(body, None, key, "lossy");
                assert_eq!(
                    split_text_pointer(&pointed),
                    Some((body, key.to_owned())),
                    "{pointed}"
                );
            }
        }
        assert_eq!(
            split_text_pointer("a\n[wm_get_result {\"lines\":\"1-2\"}]"),
            None
        );
        assert_eq!(split_text_pointer("no pointer"), None);
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
