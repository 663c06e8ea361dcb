//! The `json_nested` codec (CONTRACT §2.9), a candidate of `auto` (CONTRACT §2.8): compact
//! JSON for nested documents — tables at any depth, repeated subtrees said once. Lossless at
//! every level.
//!
//! A nested API response (a pull request, a workflow run, a package's versions) is big for two
//! reasons that compact JSON leaves alone: arrays of objects at any depth repeat every member
//! name in every element, and the same sub-object appears under several names (a user as
//! `user`, `sender` and `owner`; a repository as `head.repo` and `base.repo`).
//!
//! # What it writes
//!
//! Compact JSON (strings lose the escapes JSON does not require, as `json_compact` writes
//! them), null members left out at every depth (CONTRACT §2.1), and two forms:
//!
//! - **A table**: an array of at least `min_rows` elements that are all objects, when writing
//!   its member names once costs fewer bytes than writing them in every element, becomes
//!   `{"_columns":["id","title"],"_constant":{"state":"open"},"_rows":[[1,"a"],[2,"b"]]}`.
//!   `_constant` (only when there is one) holds the members every element has with the same
//!   value, said once; `_columns` are the other member names, in the order first seen; a row
//!   holds one cell per column, `null` where the element has no such member (or a `null`
//!   one). A cell holding an object or an array is written in these forms too, so tables nest.
//!   An object of records (at least `min_rows` members, each an object: a package's
//!   `versions` keyed by version) is a table too, its member names first:
//!   `{"_keys":["1.0.0","1.0.1"],"_columns":[…],"_rows":[…]}`.
//! - **A reference**: an object, an array or a string that occurs again, equal as written,
//!   anywhere in the document, and whose compact text is at least `min_ref_bytes` long and
//!   more than twice as long as the reference (a pointer's digits, dots and slashes cost about
//!   twice the tokens per byte of JSON text), is written where it first occurs (in document order) and replaced by
//!   `{"$ref":"#/pull_request/user"}` at every later occurrence: a JSON Reference whose
//!   fragment is the JSON Pointer (RFC 6901, `~0` and `~1` escapes, no percent-encoding) of the
//!   first occurrence in the input document. A table's rows are that array's elements, so a
//!   pointer into a table says `/items/3/user` for the cell of row 3 (0-based), column `user`.
//!
//! # Only what the others cannot do
//!
//! A payload this codec would write with no reference, no object of records, and tables only
//! of flat rows (no object or array in a cell) at the payload or one of its members, is left
//! unchanged: that is a table `columnar`, `toon` and `json_compact` write as well, in less
//! time (this codec reads the whole payload before it writes, to find what repeats). An array
//! of flat rows with nothing repeated is known as such from one pass that builds nothing
//! (`flat.rs`).
//!
//! # How it reads
//!
//! The payload is read once into a flat list of nodes in document order (`tape.rs`), each
//! with a digest of its compact text (a hash and a size) and the count of nodes below it:
//! references are found by digest and confirmed node by node (`refs.rs`), and the output is
//! written in one more pass over the list (`write.rs`). No tree is built: the list costs about
//! 28 bytes per value, one allocation, where a tree of `parrot_json::Value` costs an
//! allocation per container and a copy of every member name's place.
//!
//! # Unambiguous
//!
//! The inverse reads every object with a member `_columns` as a table and every object with a
//! member `$ref` as a reference. So a document in which any object already has a member named
//! `$ref`, `_columns`, `_constant`, `_keys` or `_rows` is left unchanged ([`Outcome::Unchanged`]; the
//! router then keeps another candidate): it is never misread. An output that is not smaller
//! than its input is left unchanged as well (no gain).
//!
//! # Examples
//!
//! ```
//! use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
//! use parrot_codecs::JsonNested;
//!
//! let codec = parrot_codec_api::build::<JsonNested>(Params::empty()).unwrap();
//! let user = r#"{"login": "octocat", "id": 1, "url": "https://api.github.com/users/octocat", "site_admin": false}"#;
//! let input = format!(
//!     r#"{{"user": {user}, "labels": [{{"name": "bug", "color": "f00", "default": true}},
//!        {{"name": "docs", "color": "0f0", "default": true}}, {{"name": "ci", "color": "00f", "default": true}}],
//!      "sender": {user}, "body": null}}"#
//! );
//! let out = codec.compress(Payload::json(&input), Level::Minimal).unwrap();
//! let nested = r##"{"user":{"login":"octocat","id":1,"url":"https://api.github.com/users/octocat","site_admin":false},"labels":{"_columns":["name","color"],"_constant":{"default":true},"_rows":[["bug","f00"],["docs","0f0"],["ci","00f"]]},"sender":{"$ref":"#/user"}}"##;
//! assert_eq!(out, Outcome::lossless(nested));
//! let expanded = codec.expand(nested).unwrap();
//! assert!(parrot_json::equivalent(&input, &expanded, true));
//! ```

use std::borrow::Cow;
use std::collections::HashMap as StdHashMap;
use std::hash::{BuildHasherDefault, Hasher};

use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};

use crate::Transformed;

mod expand;
mod flat;
mod refs;
mod tape;
#[cfg(test)]
mod tests;
mod write;

use refs::Refs;
use tape::Tape;
use write::Writer;

/// A multiply-rotate hasher for the maps keyed by the codec's own digests and ids. A payload
/// made to collide them gains little: at most [`MAX_ALIKE`] values are kept per digest, so a
/// collision costs a bounded number of comparisons. Member names, which a payload chooses
/// freely, are kept in std's keyed hasher.
#[derive(Default)]
struct Quick(u64);

impl Hasher for Quick {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_bytes(self.0, bytes);
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = mix(self.0, word);
    }

    fn write_usize(&mut self, word: usize) {
        self.0 = mix(self.0, word as u64);
    }
}

type HashMap<K, V> = StdHashMap<K, V, BuildHasherDefault<Quick>>;

/// The most values of one digest (hash and size) kept as first occurrences; past that, a
/// value of that digest is not referred to (only a reference is lost).
const MAX_ALIKE: usize = 8;

/// The member names this codec's forms use; a document holding any is left unchanged.
const RESERVED: [&str; 5] = ["$ref", "_columns", "_constant", "_keys", "_rows"];

/// An expansion may not make a text larger than this, nor more than [`MAX_EXPANSION`] times
/// its payload (references can multiply a value; a text built of references to references
/// could otherwise grow without bound).
const MAX_EXPANDED_BYTES: usize = 1 << 30;

/// How many times its payload an expansion may grow at most (see [`MAX_EXPANDED_BYTES`]).
const MAX_EXPANSION: usize = 1024;

/// The `json_nested` codec (see the module docs).
///
/// Params (unknown keys are refused when the codec is built):
///
/// | key | default | meaning |
/// |---|---|---|
/// | `tables` | `true` | write arrays of objects as tables |
/// | `refs` | `true` | replace repeated objects and arrays by references |
/// | `min_rows` | `2` | the fewest elements an array needs to become a table |
/// | `min_ref_bytes` | `64` | the shortest compact text a repeated value needs to be referred to |
#[derive(Debug, Clone)]
pub struct JsonNested {
    tables: bool,
    refs: bool,
    min_rows: usize,
    min_ref_bytes: usize,
}

impl Codec for JsonNested {
    const NAME: &'static str = "json_nested";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    // Null-member elision is lossless by the contract (CONTRACT §2.1).
    const NULL_MEMBERS_ABSENT: bool = true;

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        Ok(JsonNested {
            tables: params.bool("tables", true)?,
            refs: params.bool("refs", true)?,
            min_rows: params.positive("min_rows", 2)?,
            min_ref_bytes: params.positive("min_ref_bytes", 64)?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if !payload.is_json() || !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let text = payload.text();
        let done = self
            .transform(text)
            .map(|text| Transformed { text, lossy: false });
        Ok(Transformed::outcome(done, text))
    }
}

inventory::submit! { crate::Builtin::validating::<JsonNested>() }

impl JsonNested {
    /// The output for `text`, or `None` when it is not JSON, holds a reserved name, or is
    /// what the other candidates write as well (see "Only what the others cannot do").
    fn transform(&self, text: &str) -> Option<String> {
        // Long strings get places in document order too, when references are on: a readme
        // repeated in every version of a package is referred to like an object.
        let long = if self.refs {
            self.min_ref_bytes
        } else {
            usize::MAX
        };
        if flat::unrepeated_flat_rows(text, long) {
            return None;
        }
        let tape = Tape::read(text)?;
        let refs = if self.refs {
            Refs::find(&tape, self.min_ref_bytes)
        } else {
            Refs::none()
        };
        // An array of flat rows (or of scalars) with nothing repeated: at most a table of
        // scalar cells at the payload itself, which the others write (see below). Known
        // before writing it.
        let root_array = tape.nodes.first()?.kind == tape::Kind::Array;
        if root_array && tape.depth <= 2 && refs.is_empty() {
            return None;
        }
        let mut writer = Writer::new(
            &tape,
            &refs,
            (self.tables, self.min_rows, long),
            text.len() / 2,
        );
        writer.value(0);
        // Flat rows with nothing repeated are what `columnar`, `toon` and `json_compact` are
        // for, at a fraction of this codec's cost: left to them.
        writer.nested.then_some(writer.out)
    }

    /// The inverse (the codec's [`Codec::INVERSE`]): tables back to arrays of objects,
    /// references back to copies of the values they name.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput` when `payload` is not JSON, holds a table that is
    /// not one (a member other than its three, a row of the wrong length) or a reference that
    /// names no earlier value, or would expand past 1 GiB.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        expand::expand(payload)
    }
}

/// One step of a JSON Pointer: a reference's path, where it is written and where it is read.
#[derive(Debug, Clone)]
pub(super) enum Step<'v> {
    Name(Cow<'v, str>),
    Index(usize),
}

/// The JSON Pointer of `path`, as a reference's fragment: `#/a/0/b~1c`.
pub(super) fn pointer(path: &[Step<'_>]) -> String {
    let mut out = String::from("#");
    for step in path {
        out.push('/');
        match step {
            Step::Name(name) => out.push_str(&name.replace('~', "~0").replace('/', "~1")),
            Step::Index(index) => out.push_str(&index.to_string()),
        }
    }
    out
}

/// One step of an FNV-1a-like hash over 64-bit words.
fn mix(hash: u64, word: u64) -> u64 {
    (hash ^ word)
        .wrapping_mul(0x0000_0100_0000_01b3)
        .rotate_left(29)
}

/// The hash of `bytes` (a string's text as written, a number's, a member name's), `tag` telling
/// the kinds apart.
fn hash_bytes(tag: u64, bytes: &[u8]) -> u64 {
    // The length goes in first, so the zeros that pad the last word are not ambiguous.
    let mut hash = 0xcbf2_9ce4_8422_2325 ^ tag ^ ((bytes.len() as u64) << 8);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0; 8];
        word[..rest.len()].copy_from_slice(rest);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    hash
}
