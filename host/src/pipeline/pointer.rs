//! What the stage keeps in the tee store and how the output points at it: tee keys
//! (`__tee__:<tool>:<8 hex>:<n>`), storing an original under a fresh key when another process
//! took the one planned, and the `_tee` pointer spliced into a payload.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use super::Stage;
use crate::error::TeeError;
use crate::tee::TeeStore;
use parrot_json::TopLevel;

/// The hint every tee pointer carries.
pub const TEE_HINT: &str = "use wm_get_result for the full payload";

/// Tee key allocation: `__tee__:<tool>:<8 hex, random per stage>:<n>`, `n` per tool from 1.
pub(super) struct TeeKeys {
    prefix: String,
    next: HashMap<String, u64>,
}

impl TeeKeys {
    pub(super) fn new() -> TeeKeys {
        TeeKeys {
            prefix: random_prefix(),
            next: HashMap::new(),
        }
    }

    fn next_key(&mut self, tool: &str) -> String {
        let n = self.next.entry(tool.to_owned()).or_insert(0);
        *n += 1;
        format!("__tee__:{tool}:{}:{n}", self.prefix)
    }

    /// After a collision (another process shares the store): a fresh prefix.
    fn renew(&mut self) {
        self.prefix = random_prefix();
        self.next.clear();
    }
}

/// Eight hex digits from the process's random hasher keys, the time and a counter.
fn random_prefix() -> String {
    use std::hash::{BuildHasher, Hasher};
    static SALT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(SALT.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.write_u32(std::process::id());
    format!("{:08x}", hasher.finish() as u32)
}

impl Stage {
    /// Stores `original` under `key` (a fresh key for `tool` when `None`), taking a new prefix
    /// on collision; returns the key it went under.
    pub(super) fn store(
        &self,
        tee: &dyn TeeStore,
        tool: &str,
        original: &[u8],
        key: Option<String>,
    ) -> Result<String, TeeError> {
        let mut key = match key {
            Some(key) => key,
            None => self.next_key(tool),
        };
        for _ in 0..8 {
            match tee.put(&key, original) {
                Ok(()) => return Ok(key),
                Err(TeeError::KeyExists { .. }) => {
                    let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
                    keys.renew();
                    key = keys.next_key(tool);
                }
                Err(err) => return Err(err),
            }
        }
        Err(TeeError::KeyExists { key })
    }

    /// The next key for `tool`, without storing anything under it yet.
    pub(super) fn next_key(&self, tool: &str) -> String {
        self.keys
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_key(tool)
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
                r#"{"a":1,"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                "{}",
                Some(TopLevel::Object {
                    has_tee: false,
                    empty: true,
                }),
                r#"{"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                r#"{"_tee":1}"#,
                Some(TopLevel::Object {
                    has_tee: true,
                    empty: false,
                }),
                r#"{"result":{"_tee":1},"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                "[1,2]",
                Some(TopLevel::Other),
                r#"{"result":[1,2],"_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
            ),
            (
                "plain \"text\"",
                None,
                r#"{"result":"plain \"text\"","_tee":{"key":"k","reason":"lossy","hint":"use wm_get_result for the full payload"}}"#,
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
    fn tee_keys_count_per_tool_under_one_prefix() {
        let mut keys = TeeKeys::new();
        let a1 = keys.next_key("a");
        let a2 = keys.next_key("a");
        let b1 = keys.next_key("b");
        let prefix = &keys.prefix;
        assert_eq!(prefix.len(), 8);
        assert!(prefix.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a1, format!("__tee__:a:{prefix}:1"));
        assert_eq!(a2, format!("__tee__:a:{prefix}:2"));
        assert_eq!(b1, format!("__tee__:b:{prefix}:1"));
        let old = prefix.clone();
        keys.renew();
        assert_ne!(keys.prefix, old);
    }
}
