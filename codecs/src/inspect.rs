//! Cheap facts about JSON text, from the same validating reader the codecs use: whether a text
//! is JSON a codec may be given, and the top-level shape of a codec's output. The host uses
//! them on every call, so they allocate nothing on the common path.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::json::{
    DistinctNames, MAX_DEPTH, RawStr, Reader, Reject, Value, all_distinct, scalar_eq,
};

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
    let mut left = Side::new(a);
    let mut right = Side::new(b);
    left.reader.skip_ws();
    right.reader.skip_ws();
    matches!(same(&mut left, &mut right, 0, nulls_absent), Ok(true))
        && left.reader.finish().is_ok()
        && right.reader.finish().is_ok()
}

/// One of the two texts [`equivalent`] walks, with the member names of the objects it is in.
struct Side<'a> {
    reader: Reader<'a>,
    names: Vec<RawStr<'a>>,
    distinct: DistinctNames<'a>,
}

impl<'a> Side<'a> {
    fn new(text: &'a str) -> Side<'a> {
        Side {
            reader: Reader::new(text),
            names: Vec::new(),
            distinct: DistinctNames::default(),
        }
    }

    /// Reads the next member name of the object the cursor is in (skipping members whose
    /// value is `null` when `nulls_absent`) and stops at its value; `None` at the object's end.
    fn next_member(
        &mut self,
        more: &mut bool,
        nulls_absent: bool,
    ) -> Result<Option<RawStr<'a>>, Reject> {
        while *more {
            let name = self.reader.string()?;
            self.names.push(name);
            self.reader.expect(b':')?;
            self.reader.skip_ws();
            if nulls_absent && self.reader.peek() == Some(b'n') {
                self.reader.literal()?;
                *more = self.reader.next_or_close(b'}')?;
                continue;
            }
            return Ok(Some(name));
        }
        Ok(None)
    }
}

/// Compares the values at both cursors, walking the two texts side by side. Objects whose
/// members come in the same order (the common case: a codec's inverse writes them back in
/// order) are compared member by member as they are read; an object whose members differ in
/// order or number is read again from its start into two borrowed trees and compared there,
/// so memory stays bounded by the largest such object instead of the whole payload.
fn same(
    a: &mut Side<'_>,
    b: &mut Side<'_>,
    depth: usize,
    nulls_absent: bool,
) -> Result<bool, Reject> {
    match (a.reader.scalar()?, b.reader.scalar()?) {
        (Some(x), Some(y)) => return Ok(scalar_eq(x, y)),
        (None, None) => {}
        _ => return Ok(false),
    }
    if depth >= MAX_DEPTH {
        return Err(Reject::TooDeep);
    }
    let array = a.reader.peek() == Some(b'[');
    if array != (b.reader.peek() == Some(b'[')) {
        return Ok(false);
    }
    if array {
        a.reader.bump();
        b.reader.bump();
        let (empty_a, empty_b) = (
            a.reader.empty_container(b']'),
            b.reader.empty_container(b']'),
        );
        if empty_a || empty_b {
            return Ok(empty_a && empty_b);
        }
        loop {
            if !same(a, b, depth + 1, nulls_absent)? {
                return Ok(false);
            }
            match (a.reader.next_or_close(b']')?, b.reader.next_or_close(b']')?) {
                (true, true) => {}
                (false, false) => return Ok(true),
                _ => return Ok(false),
            }
        }
    }
    let (start_a, start_b) = (a.reader.clone(), b.reader.clone());
    let (base_a, base_b) = (a.names.len(), b.names.len());
    let in_order = objects_in_order(a, b, depth, nulls_absent);
    a.names.truncate(base_a);
    b.names.truncate(base_b);
    if let Some(result) = in_order? {
        return Ok(result);
    }
    a.reader = start_a;
    b.reader = start_b;
    let tree_a = Value::read(&mut a.reader, depth, MAX_DEPTH)?;
    let tree_b = Value::read(&mut b.reader, depth, MAX_DEPTH)?;
    Ok(values_equal(&tree_a, &tree_b, nulls_absent))
}

/// Two objects member by member, in order: `Some(equal)` when their (non-skipped) members have
/// the same names in the same order, `None` as soon as they do not.
fn objects_in_order(
    a: &mut Side<'_>,
    b: &mut Side<'_>,
    depth: usize,
    nulls_absent: bool,
) -> Result<Option<bool>, Reject> {
    let (base_a, base_b) = (a.names.len(), b.names.len());
    a.reader.bump();
    b.reader.bump();
    let mut more_a = !a.reader.empty_container(b'}');
    let mut more_b = !b.reader.empty_container(b'}');
    loop {
        match (
            a.next_member(&mut more_a, nulls_absent)?,
            b.next_member(&mut more_b, nulls_absent)?,
        ) {
            (None, None) => break,
            (Some(x), Some(y)) if x.same_value(&y) => {
                if !same(a, b, depth + 1, nulls_absent)? {
                    return Ok(Some(false));
                }
                more_a = a.reader.next_or_close(b'}')?;
                more_b = b.reader.next_or_close(b'}')?;
            }
            _ => return Ok(None),
        }
    }
    if !a
        .distinct
        .check(depth, a.names.get(base_a..).unwrap_or_default())
        || !b
            .distinct
            .check(depth, b.names.get(base_b..).unwrap_or_default())
    {
        return Err(Reject::DuplicateKey);
    }
    Ok(Some(true))
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
            let kept = |members: &'_ [(RawStr<'_>, Value<'_>)]| {
                members
                    .iter()
                    .filter(|(_, value)| !(nulls_absent && matches!(value, Value::Scalar("null"))))
                    .count()
            };
            if kept(a) != kept(b) {
                return false;
            }
            // Names are unique within each object (the reader refuses duplicates). A small
            // object (a row) is searched directly: no map to build for each one.
            if b.len() <= 16 {
                return a.iter().all(|(name, value)| {
                    if nulls_absent && matches!(value, Value::Scalar("null")) {
                        return true;
                    }
                    b.iter()
                        .find(|(other, _)| other.same_value(name))
                        .is_some_and(|(_, other)| values_equal(value, other, nulls_absent))
                });
            }
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
            // In order, then out of order deeper down (the tree fallback), then a difference
            // after the fallback point.
            (
                r#"[{"a":1,"b":{"x":[1,{"p":1,"q":2}],"y":2}},{"a":2}]"#,
                r#"[{"a":1,"b":{"x":[1,{"q":2,"p":1}],"y":2}},{"a":2}]"#,
                false,
                true,
            ),
            (
                r#"[{"a":1,"b":{"y":2,"x":3}},{"a":2}]"#,
                r#"[{"a":1,"b":{"x":3,"y":2}},{"a":3}]"#,
                false,
                false,
            ),
            // Nulls skipped on either side at any position, with members reordered too.
            (
                r#"{"a":null,"b":1,"c":null,"d":{"e":null}}"#,
                r#"{"d":{},"b":1}"#,
                true,
                true,
            ),
            (r#"{"b":1,"a":null}"#, r#"{"a":null,"b":1}"#, true, true),
            // Duplicate names are never equal, even where nulls are absent.
            (r#"{"a":1,"a":null}"#, r#"{"a":1}"#, true, false),
            (r#"{"a":1,"a":1}"#, r#"{"a":1,"a":1}"#, false, false),
            // Shapes and lengths.
            ("[]", "[[]]", false, false),
            ("[1,2]", "[1,2,3]", false, false),
            ("{}", "[]", false, false),
            (r#"{"a":[]}"#, r#"{"a":{}}"#, false, false),
            ("[1] ", " [1]", false, true),
            ("[1] x", "[1]", false, false),
        ];
        for (a, b, nulls_absent, expected) in cases {
            assert_eq!(equivalent(a, b, nulls_absent), expected, "{a} vs {b}");
            assert_eq!(equivalent(b, a, nulls_absent), expected, "{b} vs {a}");
        }
        // Objects wider than the direct search (a map is built), reordered.
        let member = |i: usize| format!("\"k{i}\":{i}");
        let wide: Vec<String> = (0..20).map(member).collect();
        let reversed: Vec<String> = (0..20).rev().map(member).collect();
        let mut changed = reversed.clone();
        changed[3] = "\"k16\":17".to_owned();
        let object = |members: &[String]| format!("{{{}}}", members.join(","));
        assert!(equivalent(&object(&wide), &object(&reversed), false));
        assert!(!equivalent(&object(&wide), &object(&changed), false));
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
