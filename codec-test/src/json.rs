//! JSON as the contract counts it, from the host's own reader.

/// Whether two JSON texts hold equal values as the contract counts it (numbers by their exact
/// text, strings by their decoded value, members in any order; with `nulls_absent`, a member
/// whose value is `null` counts as absent); `false` when either is not JSON the host accepts
/// (valid, no object with two members of one name, at most 512 levels deep).
///
/// The one place this crate reads JSON: it uses the host's reader, so the check judges
/// exactly as the host's verification does.
pub(crate) fn same(a: &str, b: &str, nulls_absent: bool) -> bool {
    parrot_codecs::inspect::equivalent(a, b, nulls_absent)
}

/// Whether `text` is JSON the host hands a codec as a JSON payload: a text that is JSON is
/// equal to itself, and [`same`] refuses everything else.
pub(crate) fn is_json(text: &str) -> bool {
    same(text, text, false)
}
