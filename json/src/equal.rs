//! The contract's equality over two texts, read side by side without building trees.

use crate::names::DistinctNames;
use crate::reader::{Error, MAX_DEPTH, Reader};
use crate::string::RawStr;
use crate::value::Value;

/// Whether two byte strings are equal, for the short ones JSON is full of (member names,
/// cells): up to 16 bytes they are compared as two overlapping words each, with no loop and
/// no call; longer ones as slices.
///
/// # Examples
///
/// ```
/// use parrot_json::same_bytes;
///
/// assert!(same_bytes(b"\"store_id\"", b"\"store_id\""));
/// assert!(!same_bytes(b"\"units\"", b"\"notes\""));
/// ```
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |bytes: &[u8], at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map_or(0, u64::from_le_bytes)
    };
    let half = |bytes: &[u8], at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|w| <[u8; 4]>::try_from(w).ok())
            .map_or(0, u32::from_le_bytes)
    };
    match n {
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        4..8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        0..4 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// Whether two scalars written as JSON (`null`, `true`, a number, a string: text one
/// [`Reader::scalar`] returned) are equal as the contract counts it (CONTRACT §2.1): numbers by
/// their exact text, strings by their decoded value.
///
/// # Examples
///
/// ```
/// use parrot_json::scalar_eq;
///
/// assert!(scalar_eq(r#""\u0041""#, r#""A""#));
/// assert!(!scalar_eq("1", "1.0"));
/// assert!(!scalar_eq("1", "true"));
/// ```
#[inline]
pub fn scalar_eq(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if !(a.starts_with('"') && b.starts_with('"')) || !(a.contains('\\') || b.contains('\\')) {
        return false;
    }
    RawStr::new(a, true).same_value(&RawStr::new(b, true))
}

/// Whether two JSON texts hold equal values as the contract counts it (CONTRACT §2.1): numbers
/// by their exact text (`1`, `1.0` and `true` differ), strings by their decoded value, members
/// in any order; with `nulls_absent`, a member whose value is `null` counts as absent (what
/// `json_compact`'s null elision relies on). Reads both texts without building owned values;
/// `false` when either is not JSON by [`crate::check`]'s rules.
///
/// # Examples
///
/// ```
/// use parrot_json::equivalent;
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
    ) -> Result<Option<RawStr<'a>>, Error> {
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
) -> Result<bool, Error> {
    match (a.reader.scalar()?, b.reader.scalar()?) {
        (Some(x), Some(y)) => return Ok(scalar_eq(x, y)),
        (None, None) => {}
        _ => return Ok(false),
    }
    if depth >= MAX_DEPTH {
        return Err(Error::TooDeep);
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
    Ok(tree_a.equivalent(&tree_b, nulls_absent))
}

/// Two objects member by member, in order: `Some(equal)` when their (non-skipped) members have
/// the same names in the same order, `None` as soon as they do not.
fn objects_in_order(
    a: &mut Side<'_>,
    b: &mut Side<'_>,
    depth: usize,
    nulls_absent: bool,
) -> Result<Option<bool>, Error> {
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
        return Err(Error::DuplicateName);
    }
    Ok(Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_at_every_length() {
        for n in 0..40 {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_bytes(&a, &a.clone()), "{n}");
            assert!(!same_bytes(&a, &[a.as_slice(), b"z"].concat()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] = b'.';
                assert!(!same_bytes(&a, &b), "{n} bytes, differing at {at}");
            }
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
    fn scalars_compare_by_text_and_decoded_value() {
        let cases = [
            (r#""\u0041""#, r#""A""#, true),
            (r#""A""#, r#""A""#, true),
            (r#""\n""#, r#""\u000a""#, true),
            (r#""A""#, r#""B""#, false),
            ("1", "1.0", false),
            ("1", "true", false),
            ("null", "null", true),
            (r#""1""#, "1", false),
        ];
        for (a, b, expected) in cases {
            assert_eq!(scalar_eq(a, b), expected, "{a} vs {b}");
            assert_eq!(scalar_eq(b, a), expected, "{b} vs {a}");
        }
    }
}
