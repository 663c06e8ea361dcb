//! Exact JSON for parrot-compress: the one reader of JSON text that the host, the built-in
//! codecs and the plugins share, and that a third-party codec may use too.
//!
//! A codec must give back a payload whose values are the input's, exactly. General-purpose
//! JSON libraries parse numbers into floats (`1.0` becomes `1`, a 30-digit id loses digits)
//! and decode every string; this crate does neither. It validates the text and hands out
//! slices of it, so what a codec copies into its output is the input's own text, and reading
//! costs about one pass over the bytes.
//!
//! # What it offers
//!
//! - [`Reader`]: a validating cursor (the JSON grammar, escapes, surrogate pairs, the depth
//!   limit, duplicate member names) that returns each number as written and each string as a
//!   [`RawStr`] — its text with quotes and escapes, decoded only on demand. Strings are scanned
//!   eight bytes at a time.
//! - [`Value`]: a tree borrowed from the text, for paths where a codec needs the whole value.
//! - [`check`] and [`top_level`]: what the host asks of every payload and every output.
//! - [`equivalent`], [`Value::equivalent`], [`scalar_eq`]: the contract's equality.
//! - [`write_compact`], [`write_unescaped`], [`write_string`], [`Value::write`],
//!   [`write_object`]: writers, into a `String` or a `Vec<u8>` ([`Output`]).
//! - [`value_span`], [`elements`], [`members`]: byte spans of values, for a codec that splices
//!   a few new values into the text and keeps every other byte.
//! - [`cmp_numbers`], [`is_number`]: numbers by value, exactly, and the number grammar.
//!
//! # Numbers and strings are kept as written
//!
//! A number is its text: `1`, `1.0`, `1E5` and `123456789012345678901234567890` are read,
//! held and written back as those bytes. A string is its text as written; [`RawStr::decoded`]
//! gives its value, borrowed when it has no escape.
//!
//! ```
//! use parrot_json::Value;
//!
//! let text = r#"[1.0, 1E5, 123456789012345678901234567890, "caf\u00e9"]"#;
//! let value = Value::parse(text).unwrap();
//! let mut out = String::new();
//! value.write(&mut out);
//! assert_eq!(out, r#"[1.0,1E5,123456789012345678901234567890,"caf\u00e9"]"#);
//! ```
//!
//! # The depth limit
//!
//! Arrays and objects may nest [`MAX_DEPTH`] (512) levels deep: a text of 512 nested
//! containers is read, one of 513 is refused with [`Error::TooDeep`]. It is the one limit of
//! the workspace: the host classifies payloads with [`check`] under it, so a codec reading with
//! this crate accepts every JSON payload the host hands it. Only a codec's inverse, reading its
//! own output, may allow a little more ([`Value::parse_with_limit`]).
//!
//! ```
//! use parrot_json::{JsonCheck, check};
//!
//! let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
//! assert_eq!(check(&nested(512)), JsonCheck::Json);
//! assert_eq!(check(&nested(513)), JsonCheck::TooDeep);
//! ```
//!
//! # Equality
//!
//! Two values are equal as the contract counts it (CONTRACT §2.1) when numbers have the same
//! text (`1`, `1.0` and `true` all differ), strings the same decoded value (`"\u00e9"` is
//! `"é"`), arrays the same elements in order and objects the same members in any order. With
//! `nulls_absent`, a member whose value is `null` counts as absent. An object with two members
//! of the same decoded name is not JSON any codec is given: readers refuse it
//! ([`Error::DuplicateName`]), so it equals nothing.
//!
//! ```
//! use parrot_json::equivalent;
//!
//! assert!(equivalent(r#"{"a": 1, "b": "\u00e9"}"#, r#"{"b":"é","a":1}"#, false));
//! assert!(!equivalent("[1]", "[1.0]", false));
//! assert!(equivalent(r#"{"a": null, "b": 2}"#, r#"{"b": 2}"#, true));
//! ```
//!
//! # A codec that writes while it reads
//!
//! The built-in codecs read with a [`Reader`] and write as they go. This one drops the members
//! whose value is `null`, keeping every other byte of each value as written:
//!
//! ```
//! use parrot_json::{Error, Reader, write_compact};
//!
//! fn drop_null_members(text: &str) -> Result<String, Error> {
//!     let mut reader = Reader::new(text);
//!     reader.expect(b'{')?;
//!     let mut out = String::from("{");
//!     if !reader.empty_container(b'}') {
//!         loop {
//!             let name = reader.string()?;
//!             reader.expect(b':')?;
//!             reader.skip_ws();
//!             let value = reader.skip_value(1)?;
//!             if value != "null" {
//!                 if out.len() > 1 {
//!                     out.push(',');
//!                 }
//!                 out.push_str(name.raw());
//!                 out.push(':');
//!                 write_compact(value, &mut out);
//!             }
//!             if !reader.next_or_close(b'}')? {
//!                 break;
//!             }
//!         }
//!     }
//!     reader.finish()?;
//!     out.push('}');
//!     Ok(out)
//! }
//!
//! assert_eq!(
//!     drop_null_members(r#"{"id": 1.50, "note": null, "tags": [ "a" ]}"#).unwrap(),
//!     r#"{"id":1.50,"tags":["a"]}"#
//! );
//! assert_eq!(drop_null_members("{\"a\": 1,}"), Err(Error::Syntax(8)));
//! ```
//!
//! # Not part of the plugin interface
//!
//! Nothing of this crate crosses the plugin boundary: payloads go to and from plugins as text
//! (`parrot-codec-api`). A plugin may depend on any version of this crate, or on none.
#![forbid(unsafe_code)]

mod check;
mod equal;
mod names;
mod number;
mod reader;
mod scan;
mod span;
mod string;
mod value;
mod write;

pub use check::{JsonCheck, TopLevel, check, top_level, top_level_unchecked};
pub use equal::{equivalent, same_bytes, scalar_eq};
pub use names::{DistinctNames, all_distinct};
pub use number::{Number, cmp_numbers, is_number};
pub use reader::{Error, MAX_DEPTH, Reader, decode_string};
pub use scan::string_stop;
pub use span::{Member, Span, elements, members, members_unchecked, value_span};
pub use string::{
    Decoded, RawStr, Str, WrittenChars, encode_string, write_string, write_unescaped,
};
pub use value::{Value, try_write_object, write_object};
pub use write::{Output, write_compact};
