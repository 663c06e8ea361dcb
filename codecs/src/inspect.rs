//! Cheap facts about JSON text, from the same validating reader the codecs use: whether a text
//! is JSON a codec may be given, and the top-level shape of a codec's output. The host uses
//! them on every call, so they allocate nothing on the common path.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::json::{MAX_DEPTH, Reader, Reject, Value, all_distinct, scalar_eq};

/// What a text is, read once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonCheck {
    /// One valid JSON value, no object with two members of the same decoded name.
    Json,
    /// Valid JSON, but an object has two members of the same decoded name: keeping either
    /// would lose the other.
    DuplicateMember,
    /// Nested deeper than the reader's limit (512 levels).
    TooDeep,
    /// Not JSON (including lone surrogate escapes, `NaN`, trailing text).
    NotJson,
}

/// Reads `text` once and says what it is.
///
/// # Examples
///
/// ```
/// use parrot_codecs::inspect::{JsonCheck, check};
///
/// assert_eq!(check(r#"{"a": [1, 2.50]}"#), JsonCheck::Json);
/// assert_eq!(check(r#"{"a": 1, "\u0061": 2}"#), JsonCheck::DuplicateMember);
/// assert_eq!(check("compiling 3 crates"), JsonCheck::NotJson);
/// ```
pub fn check(text: &str) -> JsonCheck {
    let mut reader = Reader::new(text);
    reader.skip_ws();
    match reader.skip_value(0).and_then(|_| reader.finish()) {
        Ok(()) => JsonCheck::Json,
        Err(Reject::DuplicateKey) => JsonCheck::DuplicateMember,
        Err(Reject::TooDeep) => JsonCheck::TooDeep,
        Err(Reject::Syntax(_)) => JsonCheck::NotJson,
    }
}

/// The top level of a JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopLevel {
    /// An object.
    Object {
        /// It has a top-level member named `_tee`.
        has_tee: bool,
        /// It has no member.
        empty: bool,
    },
    /// Any other value.
    Other,
}

/// The top-level shape of `text`, or `None` when `text` is not valid JSON (by [`check`]'s
/// rules).
///
/// # Examples
///
/// ```
/// use parrot_codecs::inspect::{TopLevel, top_level};
///
/// assert_eq!(
///     top_level(r#"{"rows": [], "_tee": {}}"#),
///     Some(TopLevel::Object { has_tee: true, empty: false })
/// );
/// assert_eq!(top_level("[1]"), Some(TopLevel::Other));
/// assert_eq!(top_level("{"), None);
/// ```
pub fn top_level(text: &str) -> Option<TopLevel> {
    let mut reader = Reader::new(text);
    reader.skip_ws();
    if reader.peek() != Some(b'{') {
        reader.skip_value(0).ok()?;
        reader.finish().ok()?;
        return Some(TopLevel::Other);
    }
    reader.bump();
    if reader.empty_container(b'}') {
        reader.finish().ok()?;
        return Some(TopLevel::Object {
            has_tee: false,
            empty: true,
        });
    }
    let mut names = Vec::new();
    loop {
        names.push(reader.string().ok()?);
        reader.expect(b':').ok()?;
        reader.skip_ws();
        reader.skip_value(1).ok()?;
        if !reader.next_or_close(b'}').ok()? {
            break;
        }
    }
    reader.finish().ok()?;
    if !all_distinct(&names) {
        return None;
    }
    Some(TopLevel::Object {
        has_tee: names.iter().any(|name| name.is("_tee")),
        empty: false,
    })
}

/// Whether two JSON texts hold equal values as the contract counts it (SPEC §2.1): numbers by
/// their exact text (`1`, `1.0` and `true` differ), strings by their decoded value, members in
/// any order; with `nulls_absent`, a member whose value is `null` counts as absent (what
/// `json_compact`'s null elision relies on). Reads both texts without building owned values;
/// `false` when either is not JSON.
///
/// # Examples
///
/// ```
/// use parrot_codecs::inspect::equivalent;
///
/// assert!(equivalent(r#"{"a":1,"b":"\u00e9"}"#, r#"{"b":"é","a":1}"#, false));
/// assert!(!equivalent("[1]", "[1.0]", false));
/// assert!(equivalent(r#"{"a":null,"b":2}"#, r#"{"b":2}"#, true));
/// ```
pub fn equivalent(a: &str, b: &str, nulls_absent: bool) -> bool {
    match (Value::parse(a, MAX_DEPTH), Value::parse(b, MAX_DEPTH)) {
        (Ok(a), Ok(b)) => values_equal(&a, &b, nulls_absent),
        _ => false,
    }
}

fn values_equal(a: &Value<'_>, b: &Value<'_>, nulls_absent: bool) -> bool {
    match (a, b) {
        (Value::Scalar(a), Value::Scalar(b)) => scalar_eq(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(a, b)| values_equal(a, b, nulls_absent))
        }
        (Value::Object(a), Value::Object(b)) => {
            let kept = |members: &'_ [(crate::json::RawStr<'_>, Value<'_>)]| {
                members
                    .iter()
                    .filter(|(_, value)| !(nulls_absent && matches!(value, Value::Scalar("null"))))
                    .count()
            };
            if kept(a) != kept(b) {
                return false;
            }
            // Names are unique within each object (the reader refuses duplicates).
            let by_name: HashMap<Cow<'_, str>, &Value<'_>, foldhash::fast::RandomState> = b
                .iter()
                .map(|(name, value)| (name.decoded(), value))
                .collect();
            a.iter().all(|(name, value)| {
                if nulls_absent && matches!(value, Value::Scalar("null")) {
                    return true;
                }
                by_name
                    .get(&name.decoded())
                    .is_some_and(|other| values_equal(value, other, nulls_absent))
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_classified() {
        let deep = format!("{}{}", "[".repeat(600), "]".repeat(600));
        let fine = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let cases = [
            (r#"{"a":1,"b":[1,2,{"c":null}]}"#, JsonCheck::Json),
            ("  [1, 2]  ", JsonCheck::Json),
            ("\"just a string\"", JsonCheck::Json),
            ("12.50", JsonCheck::Json),
            (fine.as_str(), JsonCheck::Json),
            (r#"{"a":1,"a":2}"#, JsonCheck::DuplicateMember),
            (r#"[{"x":{"k":1,"k":1}}]"#, JsonCheck::DuplicateMember),
            (deep.as_str(), JsonCheck::TooDeep),
            ("compiling 3 crates", JsonCheck::NotJson),
            ("{\"a\":1} trailing", JsonCheck::NotJson),
            ("NaN", JsonCheck::NotJson),
            (r#"["\ud800"]"#, JsonCheck::NotJson),
            ("", JsonCheck::NotJson),
        ];
        for (text, expected) in cases {
            assert_eq!(check(text), expected, "for {text:.40}");
        }
    }

    #[test]
    fn equality_counts_number_text_and_ignores_member_order() {
        let cases = [
            (r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#, false, true),
            ("[1]", "[1.0]", false, false),
            ("[1]", "[true]", false, false),
            ("[1,2]", "[2,1]", false, false),
            (
                "[123456789012345678901234567890]",
                "[123456789012345678901234567890]",
                false,
                true,
            ),
            (r#"{"a":"\u00e9"}"#, r#"{"a":"é"}"#, false, true),
            (r#"{"a":null}"#, "{}", false, false),
            (
                r#"{"a":null,"b":[{"c":null}]}"#,
                r#"{"b":[{}]}"#,
                true,
                true,
            ),
            ("[null]", "[]", true, false),
            (r#"{"a":1}"#, r#"{"a":1,"b":2}"#, false, false),
            (r#"{"a":1,"c":null}"#, r#"{"a":1,"b":null}"#, true, true),
            ("not json", "not json", false, false),
        ];
        for (a, b, nulls_absent, expected) in cases {
            assert_eq!(equivalent(a, b, nulls_absent), expected, "{a} vs {b}");
            assert_eq!(equivalent(b, a, nulls_absent), expected, "{b} vs {a}");
        }
    }

    #[test]
    fn top_level_shapes() {
        let cases = [
            (
                r#"{"a":1,"_tee":2}"#,
                Some(TopLevel::Object {
                    has_tee: true,
                    empty: false,
                }),
            ),
            (
                r#"{"a":{"_tee":2}}"#,
                Some(TopLevel::Object {
                    has_tee: false,
                    empty: false,
                }),
            ),
            (
                " {} ",
                Some(TopLevel::Object {
                    has_tee: false,
                    empty: true,
                }),
            ),
            (
                r#"{"\u005ftee":1}"#,
                Some(TopLevel::Object {
                    has_tee: true,
                    empty: false,
                }),
            ),
            ("[1]", Some(TopLevel::Other)),
            ("12.50", Some(TopLevel::Other)),
            ("not json", None),
            (r#"{"a":1,"a":1}"#, None),
            (r#"{"a":1} x"#, None),
        ];
        for (text, expected) in cases {
            assert_eq!(top_level(text), expected, "for {text}");
        }
    }
}
