//! Cheap facts about a JSON text, read once: whether it is JSON a codec may be given, and the
//! shape of its top level. The host asks them on every call, so they allocate nothing on the
//! common path.

use crate::reader::{Error, Reader};

/// What a text is, read once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonCheck {
    /// One valid JSON value, no object with two members of the same decoded name.
    Json,
    /// Valid JSON, but an object has two members of the same decoded name: keeping either
    /// would lose the other.
    DuplicateMember,
    /// Nested deeper than [`crate::MAX_DEPTH`] (512 levels).
    TooDeep,
    /// Not JSON (including lone surrogate escapes, `NaN`, trailing text).
    NotJson,
}

/// Reads `text` once and says what it is.
///
/// # Examples
///
/// ```
/// use parrot_json::{JsonCheck, check};
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
        Err(Error::DuplicateName) => JsonCheck::DuplicateMember,
        Err(Error::TooDeep) => JsonCheck::TooDeep,
        Err(Error::Syntax(_)) => JsonCheck::NotJson,
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
/// use parrot_json::{TopLevel, top_level};
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
    let (mut empty, mut has_tee) = (true, false);
    reader
        .each_member(0, |reader, name| {
            empty = false;
            has_tee |= name.is("_tee");
            reader.skip_value(1).map(|_| ())
        })
        .ok()?;
    reader.finish().ok()?;
    Some(TopLevel::Object { has_tee, empty })
}

/// The top-level shape of `text` read by its structure alone (an object's member names and
/// where its values end, not what they hold), for text that is JSON by construction: a
/// built-in codec's output. On JSON that [`check`] accepts it is [`top_level`]'s; on other text
/// it is `None` or a shape that means nothing.
///
/// # Examples
///
/// ```
/// use parrot_json::{TopLevel, top_level_unchecked};
///
/// assert_eq!(
///     top_level_unchecked(r#" {"rows": [{"_tee": 1}], "_tee": {}}"#),
///     Some(TopLevel::Object { has_tee: true, empty: false })
/// );
/// assert_eq!(top_level_unchecked("{}"), Some(TopLevel::Object { has_tee: false, empty: true }));
/// assert_eq!(top_level_unchecked("[1]"), Some(TopLevel::Other));
/// ```
pub fn top_level_unchecked(text: &str) -> Option<TopLevel> {
    let mut reader = Reader::new(text);
    reader.skip_ws();
    let start = reader.pos();
    if reader.peek() != Some(b'{') {
        return Some(TopLevel::Other);
    }
    let members = crate::members_unchecked(text, start)?;
    Some(TopLevel::Object {
        has_tee: members.iter().any(|member| member.name.is("_tee")),
        empty: members.is_empty(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On JSON, the structural read gives the validating one's shape.
    #[test]
    fn the_unchecked_shape_of_json_is_its_shape() {
        for text in [
            r#"{"a":1,"_tee":{"key":"k"}}"#,
            r#" { "rows" : [ {"_tee": 1} , "}" ] } "#,
            "{}",
            " { } ",
            r#"{"\u005ftee": 2}"#,
            "[1, {\"_tee\": 1}]",
            "\"text\"",
            "12",
        ] {
            assert_eq!(top_level_unchecked(text), top_level(text), "{text}");
        }
    }

    #[test]
    fn texts_are_classified() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let (deep, limit, fine) = (nested(513), nested(512), nested(200));
        let cases = [
            (r#"{"a":1,"b":[1,2,{"c":null}]}"#, JsonCheck::Json),
            ("  [1, 2]  ", JsonCheck::Json),
            ("\"just a string\"", JsonCheck::Json),
            ("12.50", JsonCheck::Json),
            (fine.as_str(), JsonCheck::Json),
            (limit.as_str(), JsonCheck::Json),
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
