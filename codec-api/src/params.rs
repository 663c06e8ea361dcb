use serde::de::{self, DeserializeOwned, IntoDeserializer};
use serde_json::{Map, Value};

use crate::CodecError;

/// The parameters of one manifest entry (its `params` table), read by a codec's constructor.
///
/// Each getter takes the key it reads and a default for when the key is absent, checks the
/// value's type and range, and remembers the key as known. After the constructor returns, the
/// export machinery calls [`Params::finish`], so a key no getter asked for is an error naming
/// it, the keys the codec knows, and the nearest one: a codec cannot forget to reject unknown
/// keys.
///
/// The getters: [`Params::bool`], [`Params::u64`], [`Params::usize`], [`Params::positive`],
/// [`Params::i64`], [`Params::f64`], [`Params::string`], [`Params::choice`], [`Params::list`],
/// and [`Params::get`] for a value of any type of the codec's own that implements
/// `serde::Deserialize`. Every error names the key. How the values are held is this crate's
/// business: the manifest's TOML reaches a codec as JSON text across the plugin boundary, and
/// nothing of that representation is part of the API.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::Params;
///
/// let mut params = Params::from_json(r#"{"min_rows": 5, "levle": 1}"#).unwrap();
/// assert_eq!(params.u64("min_rows", 20).unwrap(), 5);
/// assert!(params.bool("dedup", true).unwrap());
/// let err = params.finish().unwrap_err();
/// assert_eq!(err.key(), Some("levle"));
/// assert_eq!(
///     err.to_string(),
///     "param \"levle\": unknown key (known: min_rows, dedup)"
/// );
/// ```
#[derive(Debug, Clone, Default)]
pub struct Params {
    values: Map<String, Value>,
    known: Vec<&'static str>,
}

impl Params {
    /// No parameters: every getter returns its default.
    pub fn empty() -> Params {
        Params::default()
    }

    /// Parameters from a JSON object.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] when the text is not a JSON object.
    pub fn from_json(text: &str) -> Result<Params, CodecError> {
        if text.trim().is_empty() {
            return Ok(Params::empty());
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(values)) => Ok(Params::from_map(values)),
            Ok(other) => Err(CodecError::invalid_params(format!(
                "params must be a table, got {}",
                type_name(&other)
            ))),
            Err(err) => Err(CodecError::invalid_params(format!(
                "params are not valid JSON: {err}"
            ))),
        }
    }

    fn from_map(values: Map<String, Value>) -> Params {
        Params {
            values,
            known: Vec::new(),
        }
    }

    /// The value of `key`, if given, marking the key as known.
    fn value(&mut self, key: &'static str) -> Option<&Value> {
        if !self.known.contains(&key) {
            self.known.push(key);
        }
        self.values.get(key)
    }

    /// A non-negative integer.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` when the value is not an integer ≥ 0.
    pub fn u64(&mut self, key: &'static str, default: u64) -> Result<u64, CodecError> {
        match self.value(key) {
            None => Ok(default),
            Some(value) => value.as_u64().ok_or_else(|| {
                CodecError::invalid_param(
                    key,
                    format!("expected a non-negative integer, got {}", describe(value)),
                )
            }),
        }
    }

    /// A non-negative integer that fits in `usize`.
    ///
    /// # Errors
    ///
    /// As [`Params::u64`], and when the value does not fit in `usize`.
    pub fn usize(&mut self, key: &'static str, default: usize) -> Result<usize, CodecError> {
        let value = self.u64(key, default as u64)?;
        usize::try_from(value).map_err(|_| {
            CodecError::invalid_param(key, format!("{value} is too large for this machine"))
        })
    }

    /// A positive integer (at least 1).
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` when the value is not an integer ≥ 1.
    pub fn positive(&mut self, key: &'static str, default: usize) -> Result<usize, CodecError> {
        let Some(value) = self.value(key) else {
            return Ok(default);
        };
        match value.as_u64().map(usize::try_from) {
            Some(Ok(n)) if n > 0 => Ok(n),
            Some(Err(_)) => Err(CodecError::invalid_param(
                key,
                format!("{value} is too large for this machine"),
            )),
            _ => Err(CodecError::invalid_param(
                key,
                format!("expected a positive integer, got {}", describe(value)),
            )),
        }
    }

    /// A finite number.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` when the value is not a number.
    pub fn f64(&mut self, key: &'static str, default: f64) -> Result<f64, CodecError> {
        match self.value(key) {
            None => Ok(default),
            Some(value) => value.as_f64().filter(|n| n.is_finite()).ok_or_else(|| {
                CodecError::invalid_param(
                    key,
                    format!("expected a number, got {}", describe(value)),
                )
            }),
        }
    }

    /// A boolean.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` when the value is not `true`/`false`.
    pub fn bool(&mut self, key: &'static str, default: bool) -> Result<bool, CodecError> {
        match self.value(key) {
            None => Ok(default),
            Some(value) => value.as_bool().ok_or_else(|| {
                CodecError::invalid_param(
                    key,
                    format!("expected true or false, got {}", describe(value)),
                )
            }),
        }
    }

    /// An integer, of either sign.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::Params;
    ///
    /// let mut params = Params::from_json(r#"{"offset": -3}"#).unwrap();
    /// assert_eq!(params.i64("offset", 0).unwrap(), -3);
    /// assert_eq!(params.i64("shift", 2).unwrap(), 2);
    /// ```
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` when the value is not an integer that
    /// fits in `i64`.
    pub fn i64(&mut self, key: &'static str, default: i64) -> Result<i64, CodecError> {
        match self.value(key) {
            None => Ok(default),
            Some(value) => value.as_i64().ok_or_else(|| {
                CodecError::invalid_param(
                    key,
                    format!("expected an integer, got {}", describe(value)),
                )
            }),
        }
    }

    /// A string.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::Params;
    ///
    /// let mut params = Params::from_json(r#"{"marker": "[cut]"}"#).unwrap();
    /// assert_eq!(params.string("marker", "...").unwrap(), "[cut]");
    /// assert_eq!(params.string("separator", "\n").unwrap(), "\n");
    /// let err = Params::from_json(r#"{"marker": 3}"#).unwrap().string("marker", "").unwrap_err();
    /// assert_eq!(err.to_string(), "param \"marker\": expected a string, got a number (3)");
    /// ```
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` when the value is not a string.
    pub fn string(&mut self, key: &'static str, default: &str) -> Result<String, CodecError> {
        match self.value(key) {
            None => Ok(default.to_owned()),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(value) => Err(CodecError::invalid_param(
                key,
                format!("expected a string, got {}", describe(value)),
            )),
        }
    }

    /// A list (a TOML array), each item read as a `T`; an absent key is an empty list.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::Params;
    ///
    /// let mut params = Params::from_json(r#"{"patterns": ["aborted", "timed out"]}"#).unwrap();
    /// assert_eq!(params.list::<String>("patterns").unwrap(), ["aborted", "timed out"]);
    /// assert!(params.list::<u64>("ports").unwrap().is_empty());
    ///
    /// let mut params = Params::from_json(r#"{"patterns": ["a", 2]}"#).unwrap();
    /// assert_eq!(
    ///     params.list::<String>("patterns").unwrap_err().to_string(),
    ///     "param \"patterns\": item 1: invalid type: integer `2`, expected a string"
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` when the value is not a list, or
    /// naming `key` and the item's position (from 0) when an item is not a `T`.
    pub fn list<T: DeserializeOwned>(&mut self, key: &'static str) -> Result<Vec<T>, CodecError> {
        let Some(value) = self.value(key) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = value else {
            return Err(CodecError::invalid_param(
                key,
                format!("expected a list, got {}", describe(value)),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                read(item).map_err(|err| CodecError::invalid_param(key, format!("item {i}: {err}")))
            })
            .collect()
    }

    /// The value of `key` read as any type of the codec's own that implements
    /// `serde::Deserialize` (a table as a struct, a string as an enum), or `None` when the key
    /// is absent.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::Params;
    /// use serde::Deserialize;
    ///
    /// #[derive(Debug, PartialEq, Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Retry {
    ///     attempts: u32,
    ///     backoff_ms: f64,
    /// }
    ///
    /// let mut params =
    ///     Params::from_json(r#"{"retry": {"attempts": 3, "backoff_ms": 1.50}}"#).unwrap();
    /// let retry: Option<Retry> = params.get("retry").unwrap();
    /// assert_eq!(retry, Some(Retry { attempts: 3, backoff_ms: 1.5 }));
    /// assert_eq!(params.get::<Retry>("fallback").unwrap(), None);
    ///
    /// let mut params = Params::from_json(r#"{"retry": {"attempts": -1}}"#).unwrap();
    /// assert_eq!(
    ///     params.get::<Retry>("retry").unwrap_err().to_string(),
    ///     "param \"retry\": invalid value: integer `-1`, expected u32"
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key`, with serde's message, when the value
    /// is not a `T`.
    pub fn get<T: DeserializeOwned>(&mut self, key: &'static str) -> Result<Option<T>, CodecError> {
        let Some(value) = self.value(key) else {
            return Ok(None);
        };
        read(value)
            .map(Some)
            .map_err(|err| CodecError::invalid_param(key, err.to_string()))
    }

    /// One string out of a fixed set.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming `key` and listing `choices` when the value is
    /// not one of them.
    pub fn choice(
        &mut self,
        key: &'static str,
        choices: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, CodecError> {
        let Some(value) = self.value(key) else {
            return Ok(default);
        };
        let given = value.as_str();
        choices
            .iter()
            .copied()
            .find(|choice| Some(*choice) == given)
            .ok_or_else(|| {
                CodecError::invalid_param(
                    key,
                    format!(
                        "expected one of {}, got {}",
                        quoted_list(choices),
                        describe(value)
                    ),
                )
            })
    }

    /// Rejects every key that no getter asked for.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] naming the first unknown key (in the table's order),
    /// the known keys, and the nearest known key when one is close.
    pub fn finish(self) -> Result<(), CodecError> {
        let Some(unknown) = self
            .values
            .keys()
            .find(|key| !self.known.contains(&key.as_str()))
        else {
            return Ok(());
        };
        let known = if self.known.is_empty() {
            "this codec takes no params".to_owned()
        } else {
            format!("known: {}", self.known.join(", "))
        };
        let message = match closest(unknown, &self.known) {
            Some(near) => format!("unknown key; did you mean \"{near}\"? ({known})"),
            None => format!("unknown key ({known})"),
        };
        Err(CodecError::invalid_param(unknown.clone(), message))
    }
}

/// The candidate nearest to `word` by edit distance, when it is near enough to be a typo.
fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(word, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.chars().count() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("\"{item}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A param's value as serde reads it into a codec's own type. The host's JSON keeps a number's
/// text as written (`1.50`), which serde_json would offer that type as a map, and report as
/// "invalid number"; here a number is the `u64`, `i64` or `f64` it reads as, so serde's errors
/// show it (``invalid value: integer `-1`, expected u32``).
#[derive(Clone, Copy)]
struct Plain<'a>(&'a Value);

impl<'de> de::Deserializer<'de> for Plain<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, Some(f)) if f.is_finite() => visitor.visit_f64(f),
                _ => visitor.visit_str(&n.to_string()),
            },
            Value::String(text) => visitor.visit_str(text),
            Value::Array(items) => {
                let mut seq = de::value::SeqDeserializer::new(items.iter().map(Plain));
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Value::Object(members) => {
                let mut map = de::value::MapDeserializer::new(
                    members
                        .iter()
                        .map(|(name, member)| (name.as_str(), Plain(member))),
                );
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::String(text) => visitor.visit_enum(text.as_str().into_deserializer()),
            Value::Object(members) => visitor.visit_enum(de::value::MapAccessDeserializer::new(
                de::value::MapDeserializer::new(
                    members
                        .iter()
                        .map(|(name, member)| (name.as_str(), Plain(member))),
                ),
            )),
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, de::value::Error> for Plain<'_> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// Reads `value` as a `T`.
fn read<T: DeserializeOwned>(value: &Value) -> Result<T, de::value::Error> {
    T::deserialize(Plain(value))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Number(_) | Value::Bool(_) | Value::String(_) => {
            format!("{} ({value})", type_name(value))
        }
        other => type_name(other).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> Params {
        Params::from_json(json).unwrap()
    }

    #[test]
    fn absent_keys_take_their_defaults() {
        let mut p = Params::empty();
        assert_eq!(p.u64("a", 7).unwrap(), 7);
        assert!(!p.bool("b", false).unwrap());
        assert_eq!(p.choice("c", &["x", "y"], "y").unwrap(), "y");
        p.finish().unwrap();
    }

    #[test]
    fn wrong_types_name_the_key_and_the_value() {
        let cases = [
            (
                r#"{"n": "5"}"#,
                "param \"n\": expected a non-negative integer, got a string (\"5\")",
            ),
            (
                r#"{"n": -1}"#,
                "param \"n\": expected a non-negative integer, got a number (-1)",
            ),
            (
                r#"{"n": 1.5}"#,
                "param \"n\": expected a non-negative integer, got a number (1.5)",
            ),
        ];
        for (json, expected) in cases {
            let err = params(json).u64("n", 0).unwrap_err();
            assert_eq!(err.to_string(), expected, "for {json}");
        }
        let err = params(r#"{"flag": 1}"#).bool("flag", true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "param \"flag\": expected true or false, got a number (1)"
        );
    }

    #[test]
    fn positive_rejects_zero_negatives_and_other_types() {
        for (json, got) in [
            (r#"{"t": 0}"#, "a number (0)"),
            (r#"{"t": -8}"#, "a number (-8)"),
            (r#"{"t": 1.5}"#, "a number (1.5)"),
            (r#"{"t": "5"}"#, "a string (\"5\")"),
        ] {
            let err = params(json).positive("t", 1).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("param \"t\": expected a positive integer, got {got}")
            );
        }
    }

    #[test]
    fn choice_lists_the_allowed_values() {
        let err = params(r#"{"unit": "bytes"}"#)
            .choice("unit", &["code_points", "graphemes"], "code_points")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "param \"unit\": expected one of \"code_points\", \"graphemes\", got a string (\"bytes\")"
        );
    }

    #[test]
    fn unknown_key_suggests_the_nearest_known_key() {
        let mut p = params(r#"{"treshold_chars": 10}"#);
        p.u64("threshold_chars", 1).unwrap();
        p.u64("head_chars", 1).unwrap();
        let err = p.finish().unwrap_err();
        assert_eq!(
            err.to_string(),
            "param \"treshold_chars\": unknown key; did you mean \"threshold_chars\"? \
             (known: threshold_chars, head_chars)"
        );
    }

    #[test]
    fn unknown_key_of_a_codec_without_params() {
        let err = params(r#"{"x": 1}"#).finish().unwrap_err();
        assert_eq!(
            err.to_string(),
            "param \"x\": unknown key (this codec takes no params)"
        );
    }

    #[test]
    fn typed_getters_name_the_key_and_what_was_given() {
        let p = || params(r#"{"s": 1, "l": "x", "i": 1.5, "t": {"n": "2"}}"#);
        let cases = [
            (
                p().string("s", "").unwrap_err(),
                "param \"s\": expected a string, got a number (1)",
            ),
            (
                p().list::<String>("l").unwrap_err(),
                "param \"l\": expected a list, got a string (\"x\")",
            ),
            (
                p().i64("i", 0).unwrap_err(),
                "param \"i\": expected an integer, got a number (1.5)",
            ),
            (
                p().get::<std::collections::BTreeMap<String, u8>>("t")
                    .unwrap_err(),
                "param \"t\": invalid type: string \"2\", expected u8",
            ),
        ];
        for (err, expected) in cases {
            assert_eq!(err.to_string(), expected);
        }
    }

    /// A number whose text is not the shortest form of its value (`1.50`, `1e2`) reaches a
    /// codec's own type as that value, not as serde_json's arbitrary-precision map.
    #[test]
    fn numbers_as_written_read_as_their_values() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        #[serde(untagged)]
        enum Limit {
            Count(u64),
            Ratio(f64),
        }
        let mut p = params(r#"{"f": 1.50, "e": 1e2, "v": [2.50, -3, 7], "n": -1}"#);
        assert_eq!(p.get::<Limit>("f").unwrap(), Some(Limit::Ratio(1.5)));
        assert_eq!(p.get::<Limit>("e").unwrap(), Some(Limit::Ratio(100.0)));
        assert_eq!(
            p.list::<Limit>("v").unwrap(),
            [Limit::Ratio(2.5), Limit::Ratio(-3.0), Limit::Count(7)]
        );
        assert_eq!(
            p.get::<u32>("n").unwrap_err().to_string(),
            "param \"n\": invalid value: integer `-1`, expected u32"
        );
        p.finish().unwrap();
    }

    #[test]
    fn params_must_be_a_table() {
        let err = Params::from_json("[1]").unwrap_err();
        assert_eq!(err.to_string(), "params must be a table, got an array");
    }
}
