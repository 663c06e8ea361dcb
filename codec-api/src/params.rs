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

    /// Parameters from a JSON object's members.
    pub fn from_map(values: Map<String, Value>) -> Params {
        Params {
            values,
            known: Vec::new(),
        }
    }

    /// The raw value of `key`, if given, marking the key as known.
    pub fn value(&mut self, key: &'static str) -> Option<&Value> {
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
    fn params_must_be_a_table() {
        let err = Params::from_json("[1]").unwrap_err();
        assert_eq!(err.to_string(), "params must be a table, got an array");
    }
}
