//! Hoisting: the columns of a table that hold one value in every row move out of it.
//!
//! A tabular array of two or more rows in which some columns are constant becomes an object of
//! exactly two members, in this order:
//!
//! - `_constants`: an object holding each constant column's name and value, in column order;
//! - `_rows`: the rows without those columns.
//!
//! It is written only where it is strictly shorter than the plain table. Four rows of
//! `{"id":i,"region":"south","active":true,"notes":null}` under `rows` become the TOON of
//! `{"rows":{"_constants":{"region":"south","active":true,"notes":null},"_rows":[{"id":0},…]}}`,
//! which any TOON reader parses:
//!
//! ```text
//! rows:
//!   _constants:
//!     region: south
//!     active: true
//!     notes: null
//!   _rows[4]{id}:
//!     0
//!     1
//!     2
//!     3
//! ```
//!
//! Reading it back, every object shaped like that (`_constants` holding an object, then `_rows`
//! holding an array of objects, nothing else) becomes the array of its rows, each row taking
//! every constant member after its own. A payload that already contains an object of that
//! shape is not encoded at all, so reading back is never ambiguous.

use parrot_json::{Str, Value};

use super::{Members, member};

/// The member that holds the hoisted columns.
pub(crate) const CONSTANTS: &str = "_constants";
/// The member that holds the rows without them.
pub(crate) const ROWS: &str = "_rows";

/// Whether an object has the hoisted shape: `_constants` (an object), then `_rows` (an array
/// of objects), and no other member.
pub(crate) fn is_hoisted(members: &[(Str<'_>, Value<'_>)]) -> bool {
    match members {
        [(constants, Value::Object(_)), (rows, Value::Array(items))] => {
            constants.is(CONSTANTS)
                && rows.is(ROWS)
                && items.iter().all(|item| matches!(item, Value::Object(_)))
        }
        _ => false,
    }
}

/// Whether any object in `value` has the hoisted shape.
pub(crate) fn contains_hoisted(value: &Value<'_>) -> bool {
    match value {
        Value::Array(items) => items.iter().any(contains_hoisted),
        Value::Object(members) => {
            is_hoisted(members) || members.iter().any(|(_, value)| contains_hoisted(value))
        }
        _ => false,
    }
}

/// The hoisted form of a table, or `None` when no column is constant (or there are fewer
/// than two rows). `columns` are the table's column names, in header order.
pub(crate) fn split<'a>(rows: &[&Members<'a>], columns: &[&str]) -> Option<Value<'a>> {
    let (first, rest) = rows.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let constants: Members<'a> = columns
        .iter()
        .enumerate()
        .filter_map(|(i, &name)| {
            let value = member(first, i, name)?;
            rest.iter()
                .all(|row| member(row, i, name).is_some_and(|other| other.equivalent(value, false)))
                .then(|| (Str::new(name.to_owned()), value.clone()))
        })
        .collect();
    if constants.is_empty() {
        return None;
    }
    let rows = rows
        .iter()
        .map(|row| {
            Value::Object(
                row.iter()
                    .filter(|(key, _)| !constants.iter().any(|(name, _)| name.same_value(key)))
                    .cloned()
                    .collect(),
            )
        })
        .collect();
    Some(Value::Object(vec![
        (Str::new(CONSTANTS), Value::Object(constants)),
        (Str::new(ROWS), Value::Array(rows)),
    ]))
}

/// `value` with every hoisted table put back: each row takes every constant member.
pub(crate) fn unhoist(value: Value<'_>) -> Value<'_> {
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(unhoist).collect()),
        // The same shape as `is_hoisted`, matched by value to take the parts apart.
        Value::Object(members) => match <[_; 2]>::try_from(members) {
            Ok(
                [
                    (constants_key, Value::Object(constants)),
                    (rows_key, Value::Array(rows)),
                ],
            ) if constants_key.is(CONSTANTS)
                && rows_key.is(ROWS)
                && rows.iter().all(|row| matches!(row, Value::Object(_))) =>
            {
                Value::Array(
                    rows.into_iter()
                        .map(|row| match row {
                            Value::Object(mut row) => {
                                row.extend(constants.iter().cloned());
                                Value::Object(row)
                            }
                            other => other,
                        })
                        .collect(),
                )
            }
            Ok(pair) => unhoist_members(Vec::from(pair)),
            Err(members) => unhoist_members(members),
        },
        other => other,
    }
}

fn unhoist_members(members: Members<'_>) -> Value<'_> {
    Value::Object(
        members
            .into_iter()
            .map(|(key, value)| (key, unhoist(value)))
            .collect(),
    )
}
