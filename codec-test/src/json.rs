//! JSON as the host reads it.

/// Whether `text` is JSON the host hands a codec as a JSON payload (valid, no object with two
/// members of one name, at most 512 levels deep).
pub(crate) fn is_json(text: &str) -> bool {
    parrot_json::check(text) == parrot_json::JsonCheck::Json
}
