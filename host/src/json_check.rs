//! What the stage checks about JSON text: whether it is JSON the codecs may see and the shape
//! of a codec's output (both from the codecs' own validating reader, which builds no value
//! tree), and equality as the contract counts it (for verification, a cold path).

use serde_json::Value;

pub(crate) use parrot_codecs::inspect::{JsonCheck, TopLevel, check, top_level};

/// Whether two JSON texts hold equal values as the contract counts it: numbers by their exact
/// text, strings by their decoded value, members in any order; with `nulls_absent`, a member
/// whose value is `null` counts as absent (json_compact's null elision).
pub(crate) fn equivalent(a: &str, b: &str, nulls_absent: bool) -> bool {
    let (Ok(mut a), Ok(mut b)) = (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) else {
        return false;
    };
    if nulls_absent {
        drop_null_members(&mut a);
        drop_null_members(&mut b);
    }
    a == b
}

fn drop_null_members(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_null_members);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_members),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_counts_number_text_and_ignores_member_order() {
        assert!(equivalent(r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#, false));
        assert!(!equivalent("[1]", "[1.0]", false));
        assert!(!equivalent("[1]", "[true]", false));
        assert!(equivalent(
            "[123456789012345678901234567890]",
            "[123456789012345678901234567890]",
            false
        ));
        assert!(equivalent(r#"{"a":"\u00e9"}"#, r#"{"a":"é"}"#, false));
        assert!(!equivalent(r#"{"a":null}"#, "{}", false));
        assert!(equivalent(
            r#"{"a":null,"b":[{"c":null}]}"#,
            r#"{"b":[{}]}"#,
            true
        ));
        assert!(!equivalent("[null]", "[]", true));
    }
}
