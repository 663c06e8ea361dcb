//! The value model: a decoded JSON value as the Python object `orjson.loads` makes of it.

use parrot_json::RawStr;

/// A decoded JSON value, as the Python object `orjson.loads` makes of it.
#[derive(Debug, Clone)]
pub(crate) enum Value<'a> {
    /// `None`: `null`, and what `row.get(column)` gives for an absent member.
    Null,
    /// `True` or `False`.
    Bool(bool),
    /// An int in the range of `i64`.
    Int(i64),
    /// An int above `i64::MAX`, up to `u64::MAX` (orjson's ints reach that far).
    UInt(u64),
    /// A float: every number with a fraction or an exponent, and every integer outside
    /// `i64::MIN..=u64::MAX`, rounded from its text. The text is kept when it is what orjson
    /// writes for the float ([`super::write::written_as_orjson`]): most floats of a query result are
    /// copied, not formatted.
    Float(f64, Option<&'a str>),
    /// A string, as written: copied as it is when it holds no escape, decoded otherwise.
    Str(RawStr<'a>),
    /// A list.
    List(Vec<Value<'a>>),
    /// A dict: its members in insertion order, names distinct by decoded value.
    Dict(Vec<(RawStr<'a>, Value<'a>)>),
}
