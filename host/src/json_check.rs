//! What the stage checks about JSON text without building a value tree: whether it is JSON the
//! codecs may see, the shape of a codec's output, and equality as the contract counts it.

use std::collections::HashSet;
use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// What a text is, as the stage sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checked {
    /// One valid JSON value without duplicate member names.
    Json,
    /// Valid JSON, but an object has two members of the same (decoded) name: keeping one would
    /// lose the other, so the stage never changes it.
    DuplicateMember,
    /// Nested deeper than the parser's limit (128): treated as text.
    TooDeep,
    /// Not JSON: text.
    NotJson,
}

const DUPLICATE: &str = "parrot: duplicate member name";

/// The map key under which serde_json (with `arbitrary_precision`) passes a number.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Classifies `text` in one validating pass.
pub(crate) fn check(text: &str) -> Checked {
    let mut de = serde_json::Deserializer::from_str(text);
    let result = Unique.deserialize(&mut de).and_then(|()| de.end());
    match result {
        Ok(()) => Checked::Json,
        Err(err) if err.to_string().starts_with(DUPLICATE) => Checked::DuplicateMember,
        Err(err) if err.to_string().starts_with("recursion limit exceeded") => Checked::TooDeep,
        Err(_) => Checked::NotJson,
    }
}

/// A seed that validates a value and rejects objects with a repeated member name.
#[derive(Clone, Copy)]
struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Unique)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Most objects are small: a linear scan beats hashing until they are not.
        let mut few: Vec<String> = Vec::new();
        let mut many: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let repeated = if many.is_empty() && few.len() < 16 {
                let seen = few.contains(&key);
                few.push(key);
                seen
            } else {
                if many.is_empty() {
                    many.extend(few.drain(..));
                }
                !many.insert(key)
            };
            if repeated {
                return Err(de::Error::custom(DUPLICATE));
            }
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }
}

/// The top level of a codec's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TopLevel {
    /// An object: whether it has a `_tee` member, and whether it is `{}`.
    Object {
        /// It has a top-level `_tee` member.
        has_tee: bool,
        /// It has no member at all.
        empty: bool,
    },
    /// Any other JSON value.
    Other,
}

/// The top-level shape of `text`, or `None` when it is not valid JSON.
pub(crate) fn top_level(text: &str) -> Option<TopLevel> {
    struct Shape;

    impl<'de> Visitor<'de> for Shape {
        type Value = TopLevel;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<TopLevel, E> {
            Ok(TopLevel::Other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<TopLevel, E> {
            Ok(TopLevel::Other)
        }
        fn visit_u64<E>(self, _: u64) -> Result<TopLevel, E> {
            Ok(TopLevel::Other)
        }
        fn visit_f64<E>(self, _: f64) -> Result<TopLevel, E> {
            Ok(TopLevel::Other)
        }
        fn visit_str<E>(self, _: &str) -> Result<TopLevel, E> {
            Ok(TopLevel::Other)
        }
        fn visit_unit<E>(self) -> Result<TopLevel, E> {
            Ok(TopLevel::Other)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TopLevel, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(TopLevel::Other)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
            let mut has_tee = false;
            let mut empty = true;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if empty && key == NUMBER_TOKEN {
                    // serde_json's arbitrary_precision hands a number over as this map.
                    map.next_value::<IgnoredAny>()?;
                    return Ok(TopLevel::Other);
                }
                empty = false;
                has_tee |= key == "_tee";
                map.next_value::<IgnoredAny>()?;
            }
            Ok(TopLevel::Object { has_tee, empty })
        }
    }

    let mut de = serde_json::Deserializer::from_str(text);
    let shape = de.deserialize_any(Shape).ok()?;
    de.end().ok()?;
    Some(shape)
}

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
    fn texts_are_classified() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let cases = [
            (r#"{"a":1,"b":[1,2,{"c":null}]}"#, Checked::Json),
            ("  [1, 2]  ", Checked::Json),
            ("\"just a string\"", Checked::Json),
            (r#"{"a":1,"a":2}"#, Checked::DuplicateMember),
            (r#"{"a":1,"\u0061":2}"#, Checked::DuplicateMember),
            (r#"[{"x":{"k":1,"k":1}}]"#, Checked::DuplicateMember),
            (deep.as_str(), Checked::TooDeep),
            ("compiling 3 crates", Checked::NotJson),
            ("{\"a\":1} trailing", Checked::NotJson),
            ("NaN", Checked::NotJson),
        ];
        for (text, expected) in cases {
            assert_eq!(check(text), expected, "for {text:.40}");
        }
    }

    #[test]
    fn many_members_are_checked_through_a_set() {
        let members: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let ok = format!("{{{}}}", members.join(","));
        assert_eq!(check(&ok), Checked::Json);
        let dup = format!("{{{},\"k3\":0}}", members.join(","));
        assert_eq!(check(&dup), Checked::DuplicateMember);
    }

    #[test]
    fn top_level_shapes() {
        assert_eq!(
            top_level(r#"{"a":1,"_tee":2}"#),
            Some(TopLevel::Object {
                has_tee: true,
                empty: false
            })
        );
        assert_eq!(
            top_level(" {} "),
            Some(TopLevel::Object {
                has_tee: false,
                empty: true
            })
        );
        assert_eq!(top_level("[1]"), Some(TopLevel::Other));
        assert_eq!(top_level("12.50"), Some(TopLevel::Other));
        assert_eq!(top_level("not json"), None);
    }

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
