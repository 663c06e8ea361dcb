//! Python's `==` over decoded values: what decides that a column is constant.
//!
//! It is not JSON's equality. `True == 1 == 1.0`, `False == 0 == 0.0 == -0.0`; an int and a
//! float are compared exactly (`9007199254740993 != 9007199254740992.0`, though the int rounds
//! to that float); dicts are equal with their members in any order; `None` equals only `None`;
//! strings are equal when their characters are, however they were escaped.

use std::borrow::Cow;
use std::collections::HashMap;

use parrot_json::RawStr;

use super::value::Value;

/// Whether `a == b` in Python.
pub(crate) fn python_eq(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Str(a), Value::Str(b)) => same_string(a, b),
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| python_eq(a, b))
        }
        (Value::Dict(a), Value::Dict(b)) => dict_eq(a, b),
        (Value::Float(a, _), Value::Float(b, _)) => a == b,
        (Value::Float(float, _), other) | (other, Value::Float(float, _)) => {
            integer(other).is_some_and(|int| int_eq_float(int, *float))
        }
        _ => match (integer(a), integer(b)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
    }
}

/// The value of an int or a bool (Python's `bool` is an `int`).
fn integer(value: &Value<'_>) -> Option<i128> {
    match *value {
        Value::Bool(b) => Some(i128::from(b)),
        Value::Int(int) => Some(i128::from(int)),
        Value::UInt(int) => Some(i128::from(int)),
        _ => None,
    }
}

/// Whether an int equals a float exactly, as Python compares them (never by rounding the int).
fn int_eq_float(int: i128, float: f64) -> bool {
    // Every int here is in -2^63..2^64; a float outside that range, or with a fraction,
    // equals none of them. Inside it, an integral float converts to i128 exactly.
    const LOW: f64 = -9_223_372_036_854_775_808.0;
    const HIGH: f64 = 18_446_744_073_709_551_616.0;
    (LOW..HIGH).contains(&float) && float.fract() == 0.0 && float as i128 == int
}

/// Whether two strings hold the same characters: the same bytes when neither has an escape.
fn same_string(a: &RawStr<'_>, b: &RawStr<'_>) -> bool {
    if a.is_escaped() || b.is_escaped() {
        a.same_value(b)
    } else {
        parrot_json::same_bytes(a.raw().as_bytes(), b.raw().as_bytes())
    }
}

/// Dicts wider than this are compared through an index of one side's names.
const LINEAR_MEMBERS: usize = 16;

/// Whether two dicts (names distinct in each) have the same names, each with equal values.
fn dict_eq(a: &[(RawStr<'_>, Value<'_>)], b: &[(RawStr<'_>, Value<'_>)]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    // The usual case: the same names in the same order.
    let in_order = a.iter().zip(b).all(|((a, _), (b, _))| same_string(a, b));
    if in_order {
        return a.iter().zip(b).all(|((_, a), (_, b))| python_eq(a, b));
    }
    if a.len() <= LINEAR_MEMBERS {
        return a.iter().all(|(name, value)| {
            b.iter()
                .find(|(other, _)| same_string(name, other))
                .is_some_and(|(_, other)| python_eq(value, other))
        });
    }
    let index: HashMap<Cow<'_, str>, &Value<'_>> = b
        .iter()
        .map(|(name, value)| (name.decoded(), value))
        .collect();
    a.iter().all(|(name, value)| {
        index
            .get(&name.decoded())
            .is_some_and(|other| python_eq(value, other))
    })
}
