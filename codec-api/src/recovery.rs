//! The recovery tool's name and the shape of its results' first line: part of the codec
//! contract, because codecs write the name in their markers.
//!
//! A lossy codec that drops part of a payload says where the rest is: its marker names the
//! recovery tool and the selector of what it cut (the `log` codec's
//! `wm_get_result {"lines":"A-B"}`), and the host's `_tee` pointer gives the key. The name lives
//! here, in the one crate every codec, the host and the recovery tool's own crate
//! (`parrot-recover`) share, so that it is spelled once and a marker cannot name a tool that
//! does not exist.

use serde_json::Value;

/// The recovery tool's name, as a literal: [`RECOVERY_TOOL`] for code, this for constants that
/// spell the name inside longer text (`concat!` takes literals only).
#[doc(hidden)]
#[macro_export]
macro_rules! __recovery_tool_name {
    () => {
        "wm_get_result"
    };
}

/// The name of the recovery tool, which returns a stored original or the part of it a
/// selector chooses: the tool the MCP proxy and `serve` offer, and the name every `_tee`
/// pointer's hint and every marker of a shortened result spells.
///
/// # Examples
///
/// ```
/// let marker = format!("[… 40 lines omitted; {} {{\"lines\":\"1-40\"}}]", parrot_codec_api::RECOVERY_TOOL);
/// assert_eq!(marker, "[… 40 lines omitted; wm_get_result {\"lines\":\"1-40\"}]");
/// ```
pub const RECOVERY_TOOL: &str = __recovery_tool_name!();

/// Whether `payload` is a retrieval, a result of the recovery tool: its first line is a
/// retrieval's header, `[wm_get_result {"key":…}]` (the tool's name and its arguments, with a
/// string `key`). The host passes such a payload through untouched, so a retrieval sent back
/// through a pipeline or a second proxy is never compressed again.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::is_retrieval;
///
/// assert!(is_retrieval(b"[wm_get_result {\"key\":\"k\"}]\nbody"));
/// assert!(!is_retrieval(b"[wm_get_result] is a tool"));
/// ```
pub fn is_retrieval(payload: &[u8]) -> bool {
    // The prefix first: most payloads fail it at the first byte, and a payload of one 100 MB
    // line is not scanned for its end.
    let Some(rest) = payload
        .strip_prefix(b"[")
        .and_then(|rest| rest.strip_prefix(RECOVERY_TOOL.as_bytes()))
        .and_then(|rest| rest.strip_prefix(b" "))
        .filter(|rest| rest.starts_with(b"{"))
    else {
        return false;
    };
    let first = rest.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = first.strip_suffix(b"\r").unwrap_or(first);
    let Some(arguments) = first.strip_suffix(b"]") else {
        return false;
    };
    matches!(
        serde_json::from_slice::<Value>(arguments),
        Ok(Value::Object(members)) if members.get("key").is_some_and(Value::is_string)
    )
}
