//! The borrowed tree, for the paths where a codec needs the whole value at hand.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;

use crate::reader::{Error, MAX_DEPTH, Reader};
use crate::string::Str;
use crate::write::Output;

/// A JSON value borrowed from its text: numbers and strings as written, members in order.
///
/// Built by [`Value::parse`] (a string or a number is a slice of the text, nothing is decoded)
/// or by hand (a string from its value with [`Str::new`]). [`Value::write`] writes it back
/// compactly, each scalar exactly as it is held. `==` compares the text as written;
/// [`Value::equivalent`] is the contract's equality.
///
/// # Examples
///
/// ```
/// use parrot_json::Value;
///
/// let value = Value::parse(r#"{"id": 1.50, "name": "caf\u00e9", "tags": []}"#).unwrap();
/// assert_eq!(value.member("id"), Some(&Value::Number("1.50".into())));
/// let Some(Value::String(name)) = value.member("name") else { panic!() };
/// assert_eq!(name.decoded(), "café");
///
/// let mut out = String::new();
/// value.write(&mut out);
/// assert_eq!(out, r#"{"id":1.50,"name":"caf\u00e9","tags":[]}"#);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, its text exactly as written (`1`, `1.0`, `1E5` and a 30-digit integer stay
    /// what they are).
    Number(Cow<'a, str>),
    /// A string, as written.
    String(Str<'a>),
    /// An array's elements in order.
    Array(Vec<Value<'a>>),
    /// An object's members in order (no two of the same decoded name when parsed).
    Object(Vec<(Str<'a>, Value<'a>)>),
}

impl<'a> Value<'a> {
    /// Parses one JSON text (whitespace around the value allowed), nesting at most
    /// [`MAX_DEPTH`] deep, with no duplicate member names.
    ///
    /// # Errors
    ///
    /// [`Error::Syntax`] with the byte where reading failed, [`Error::TooDeep`],
    /// [`Error::DuplicateName`].
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_json::{Error, Value};
    ///
    /// assert_eq!(Value::parse(" [1, true] "), Ok(Value::Array(vec![
    ///     Value::Number("1".into()),
    ///     Value::Bool(true),
    /// ])));
    /// assert_eq!(Value::parse(r#"{"a":1,"a":2}"#), Err(Error::DuplicateName));
    /// assert_eq!(Value::parse("[1,]"), Err(Error::Syntax(3)));
    /// ```
    pub fn parse(text: &'a str) -> Result<Value<'a>, Error> {
        Value::parse_with_limit(text, MAX_DEPTH)
    }

    /// [`Value::parse`] with another depth limit: for a codec's inverse, which reads the
    /// codec's own output, where its markers may nest a little deeper than its input did.
    pub fn parse_with_limit(text: &'a str, max_depth: usize) -> Result<Value<'a>, Error> {
        let mut reader = Reader::new(text);
        reader.skip_ws();
        let value = Value::read(&mut reader, 0, max_depth)?;
        reader.finish()?;
        Ok(value)
    }

    /// Reads the value at the reader's cursor (`depth`: the nesting of its container).
    pub(crate) fn read(
        reader: &mut Reader<'a>,
        depth: usize,
        max_depth: usize,
    ) -> Result<Value<'a>, Error> {
        match reader.peek() {
            Some(b'"') => return reader.string().map(|s| Value::String(s.into())),
            Some(b'n') => return reader.literal().map(|_| Value::Null),
            Some(b't' | b'f') => return reader.literal().map(|word| Value::Bool(word == "true")),
            Some(b'[' | b'{') => {}
            _ => return reader.number().map(|n| Value::Number(Cow::Borrowed(n))),
        }
        if depth >= max_depth {
            return Err(Error::TooDeep);
        }
        let array = reader.peek() == Some(b'[');
        reader.bump();
        if array {
            let mut items = Vec::new();
            reader.each_element(|reader| {
                items.push(Value::read(reader, depth + 1, max_depth)?);
                Ok(())
            })?;
            return Ok(Value::Array(items));
        }
        let mut members = Vec::new();
        reader.each_member(depth, |reader, name| {
            members.push((name.into(), Value::read(reader, depth + 1, max_depth)?));
            Ok(())
        })?;
        Ok(Value::Object(members))
    }

    /// The value of member `name` (compared decoded), when this is an object that has it.
    pub fn member(&self, name: &str) -> Option<&Value<'a>> {
        match self {
            Value::Object(members) => members
                .iter()
                .find(|(key, _)| key.is(name))
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// Whether the value is a scalar: neither an array nor an object.
    #[inline]
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Value::Array(_) | Value::Object(_))
    }

    /// Writes the value compactly, each number and string exactly as it is held.
    pub fn write<O: Output + ?Sized>(&self, out: &mut O) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(text) => out.push_str(text),
            Value::String(string) => string.write(out),
            Value::Array(items) => {
                out.push_ascii(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_ascii(b',');
                    }
                    item.write(out);
                }
                out.push_ascii(b']');
            }
            Value::Object(members) => {
                write_object(members.iter().map(|(name, value)| (name, value)), out)
            }
        }
    }

    /// Whether two values are equal as the contract counts it (CONTRACT §2.1): numbers by
    /// their exact text (`1`, `1.0` and `true` differ), strings by their decoded value, members
    /// in any order; with `nulls_absent`, a member whose value is `null` counts as absent. The
    /// objects' member names must be distinct (as [`Value::parse`] makes them).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_json::Value;
    ///
    /// let a = Value::parse(r#"{"a":1,"b":"\u00e9","c":null}"#).unwrap();
    /// let b = Value::parse(r#"{"b":"é","a":1}"#).unwrap();
    /// assert!(!a.equivalent(&b, false));
    /// assert!(a.equivalent(&b, true));
    /// assert!(!Value::parse("1").unwrap().equivalent(&Value::parse("1.0").unwrap(), false));
    /// ```
    pub fn equivalent(&self, other: &Value<'_>, nulls_absent: bool) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a.same_value(b),
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.equivalent(b, nulls_absent))
            }
            (Value::Object(a), Value::Object(b)) => objects_equivalent(a, b, nulls_absent),
            _ => false,
        }
    }
}

/// Writes an object, `{"name":value,…}`, from its members' names and values, each value as
/// [`Value::write`] writes it: for an object whose members come from several places.
///
/// # Examples
///
/// ```
/// use parrot_json::{Str, Value, write_object};
///
/// let names = [Str::new("id"), Str::new("tags")];
/// let values = [Value::Number("7".into()), Value::Array(Vec::new())];
/// let mut out = String::new();
/// write_object(names.iter().zip(&values), &mut out);
/// assert_eq!(out, r#"{"id":7,"tags":[]}"#);
/// ```
pub fn write_object<'v, 'a: 'v, O: Output + ?Sized>(
    members: impl IntoIterator<Item = (&'v Str<'a>, &'v Value<'a>)>,
    out: &mut O,
) {
    let Ok(()) = try_write_object(members, out, |_, value, out| {
        value.write(out);
        Ok::<(), Infallible>(())
    });
}

/// [`write_object`], each value written by `write_value` instead (given the member's name and
/// value); the first error it returns stops the writing and is returned.
///
/// # Examples
///
/// ```
/// use parrot_json::{Str, Value, try_write_object};
///
/// // Every number doubled; anything else refused.
/// fn doubled(_: &Str<'_>, value: &Value<'_>, out: &mut String) -> Result<(), String> {
///     let Value::Number(n) = value else { return Err(format!("not a number: {value:?}")) };
///     let n: u64 = n.parse().map_err(|_| format!("not an integer: {n}"))?;
///     out.push_str(&(2 * n).to_string());
///     Ok(())
/// }
///
/// let Value::Object(members) = Value::parse(r#"{"a": 1, "b": 20}"#).unwrap() else { panic!() };
/// let mut out = String::new();
/// try_write_object(members.iter().map(|(name, value)| (name, value)), &mut out, doubled).unwrap();
/// assert_eq!(out, r#"{"a":2,"b":40}"#);
/// ```
pub fn try_write_object<'v, 'a: 'v, O: Output + ?Sized, E>(
    members: impl IntoIterator<Item = (&'v Str<'a>, &'v Value<'a>)>,
    out: &mut O,
    mut write_value: impl FnMut(&'v Str<'a>, &'v Value<'a>, &mut O) -> Result<(), E>,
) -> Result<(), E> {
    out.push_ascii(b'{');
    for (i, (name, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push_ascii(b',');
        }
        name.write(out);
        out.push_ascii(b':');
        write_value(name, value, out)?;
    }
    out.push_ascii(b'}');
    Ok(())
}

fn objects_equivalent(
    a: &[(Str<'_>, Value<'_>)],
    b: &[(Str<'_>, Value<'_>)],
    nulls_absent: bool,
) -> bool {
    let absent = |value: &Value<'_>| nulls_absent && matches!(value, Value::Null);
    let kept = |members: &[(Str<'_>, Value<'_>)]| {
        members.iter().filter(|(_, value)| !absent(value)).count()
    };
    if kept(a) != kept(b) {
        return false;
    }
    // Names are unique within each object. A small object (a row) is searched directly: no
    // map to build for each one.
    if b.len() <= 16 {
        return a.iter().all(|(name, value)| {
            absent(value)
                || b.iter()
                    .find(|(other, _)| other.same_value(name))
                    .is_some_and(|(_, other)| value.equivalent(other, nulls_absent))
        });
    }
    let by_name: HashMap<Cow<'_, str>, &Value<'_>, foldhash::fast::RandomState> = b
        .iter()
        .map(|(name, value)| (name.decoded(), value))
        .collect();
    a.iter().all(|(name, value)| {
        absent(value)
            || by_name
                .get(&name.decoded())
                .is_some_and(|other| value.equivalent(other, nulls_absent))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings_are_kept_as_written() {
        let cases = [
            ("1000.0", "1000.0"),
            (
                "[1E5,-0,0.50,12345678901234567890123]",
                "[1E5,-0,0.50,12345678901234567890123]",
            ),
            (
                r#"{"a" : "x\u00e9\n\ud83d\ude00\/" }"#,
                r#"{"a":"x\u00e9\n\ud83d\ude00\/"}"#,
            ),
            (" [ ] ", "[]"),
            ("{}", "{}"),
            ("[null,true,false]", "[null,true,false]"),
        ];
        for (input, expected) in cases {
            let mut out = String::new();
            Value::parse(input).expect(input).write(&mut out);
            assert_eq!(out, expected, "for {input}");
        }
    }

    #[test]
    fn built_values_write_as_json() {
        let value = Value::Object(vec![
            (Str::new("a\"b"), Value::String(Str::new("line\nbreak"))),
            (
                Str::new("n"),
                Value::Array(vec![Value::Number("1.0".into()), Value::Null]),
            ),
        ]);
        let mut out = Vec::new();
        value.write(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#"{"a\"b":"line\nbreak","n":[1.0,null]}"#);
        assert!(Value::parse(&text).unwrap().equivalent(&value, false));
    }

    #[test]
    fn members_are_found_by_decoded_name() {
        let value = Value::parse(r#"{"\u0061":1,"b":2}"#).unwrap();
        assert_eq!(value.member("a"), Some(&Value::Number("1".into())));
        assert_eq!(value.member("c"), None);
        assert_eq!(Value::parse("[1]").unwrap().member("a"), None);
    }

    #[test]
    fn tree_equality_counts_number_text_and_ignores_member_order() {
        let cases = [
            (r#"{"a":1,"b":"x"}"#, r#"{"b":"\u0078","a":1}"#, false, true),
            ("1", "1.0", false, false),
            ("1", "true", false, false),
            ("null", "null", false, true),
            ("[1,2]", "[2,1]", false, false),
            (r#"{"a":1}"#, r#"{"a":1,"b":2}"#, false, false),
            (r#"{"a":null}"#, "{}", false, false),
            (r#"{"a":null}"#, "{}", true, true),
            ("[null]", "[]", true, false),
        ];
        for (a, b, nulls_absent, expected) in cases {
            let (a, b) = (Value::parse(a).unwrap(), Value::parse(b).unwrap());
            assert_eq!(a.equivalent(&b, nulls_absent), expected, "{a:?} vs {b:?}");
            assert_eq!(b.equivalent(&a, nulls_absent), expected, "{b:?} vs {a:?}");
        }
    }
}
