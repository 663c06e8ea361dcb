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
//! unchanged:
//! that is a table `columnar`, `toon` and `json_compact` write as well, in a fraction of the
//! time (this codec reads the payload into a tree).
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
use parrot_json::{MAX_DEPTH, Str, Value};

use crate::Transformed;

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
    /// The output for `text`, or `None` when it is not JSON or holds a reserved name.
    fn transform(&self, text: &str) -> Option<String> {
        let value = Value::parse(text).ok()?;
        if holds_reserved(&value) {
            return None;
        }
        // Long strings get places in document order too, when references are on: a readme
        // repeated in every version of a package is referred to like an object.
        let long = if self.refs {
            self.min_ref_bytes
        } else {
            usize::MAX
        };
        let mut digests = Vec::new();
        digest(&value, &mut digests, long);
        let refs = if self.refs {
            Refs::find(&value, &digests, self.min_ref_bytes)
        } else {
            HashMap::default()
        };
        let mut writer = Writer {
            out: String::with_capacity(text.len() / 2),
            digests: &digests,
            refs: &refs,
            tables: self.tables,
            min_rows: self.min_rows,
            long,
            depth: 0,
            nested: false,
        };
        let mut id = 0;
        writer.value(&value, &mut id);
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
        // A table nests its rows one level deeper than the array it stands for.
        let value = Value::parse_with_limit(payload, 2 * MAX_DEPTH + 2)
            .map_err(|err| invalid(format!("{err}")))?;
        let mut value = untable(value)?;
        let limit = payload
            .len()
            .saturating_mul(MAX_EXPANSION)
            .clamp(1 << 20, MAX_EXPANDED_BYTES);
        resolve(&mut value, limit)?;
        let mut out = String::with_capacity(payload.len() * 2);
        value.write(&mut out);
        Ok(out)
    }
}

fn invalid(message: String) -> CodecError {
    CodecError::invalid_input(format!("json_nested cannot expand: {message}"))
}

/// Whether `name` is one of [`RESERVED`] (each starts with `_` or `$`, or an escape).
fn is_reserved(name: &Str<'_>) -> bool {
    matches!(name.content().as_bytes().first(), Some(b'_' | b'$' | b'\\'))
        && RESERVED.iter().any(|r| name.is(r))
}

/// Whether any object of `value`, at any depth, has a member named as one of [`RESERVED`].
fn holds_reserved(value: &Value<'_>) -> bool {
    match value {
        Value::Array(items) => items.iter().any(holds_reserved),
        Value::Object(members) => members
            .iter()
            .any(|(name, value)| is_reserved(name) || holds_reserved(value)),
        _ => false,
    }
}

/// What the writer knows of one object or array: a hash of its compact text (null members
/// left out), that text's length in bytes, and how many objects and arrays its subtree holds,
/// itself included. Digests are indexed by the container's place in document order.
#[derive(Debug, Clone, Copy)]
struct Digest {
    hash: u64,
    size: usize,
    count: usize,
}

/// One step of an FNV-1a-like hash over 64-bit words.
fn mix(hash: u64, word: u64) -> u64 {
    (hash ^ word)
        .wrapping_mul(0x0000_0100_0000_01b3)
        .rotate_left(29)
}

fn hash_bytes(tag: u64, bytes: &[u8]) -> u64 {
    let mut hash = mix(0xcbf2_9ce4_8422_2325, tag);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    for &byte in chunks.remainder() {
        hash = mix(hash, u64::from(byte));
    }
    mix(hash, bytes.len() as u64)
}

/// The bytes a scalar takes in the output.
fn scalar_size(value: &Value<'_>) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(text) => text.len(),
        Value::String(string) => string.content().len() + 2,
        Value::Array(_) | Value::Object(_) => 0,
    }
}

/// The hash and output size of `value`; pushes the digest of every container of its subtree
/// (in document order) onto `digests`.
fn digest(value: &Value<'_>, digests: &mut Vec<Digest>, long: usize) -> (u64, usize) {
    let tag = match value {
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        // Strings and names by their text as written: two spellings of one value hash apart
        // and are not referred to each other, which only loses a reference.
        Value::String(string) => {
            let hash = hash_bytes(2, string.content().as_bytes());
            let size = scalar_size(value);
            if size >= long {
                digests.push(Digest {
                    hash,
                    size,
                    count: 1,
                });
            }
            return (hash, size);
        }
        Value::Number(text) => return (hash_bytes(1, text.as_bytes()), text.len()),
        Value::Bool(yes) => return (u64::from(*yes) + 10, scalar_size(value)),
        Value::Null => return (12, 4),
    };
    let at = digests.len();
    digests.push(Digest {
        hash: 0,
        size: 0,
        count: 0,
    });
    let mut hash = mix(0x9e37_79b9_7f4a_7c15, tag);
    // The brackets, and a comma after every entry (one too many: taken off below).
    let mut size = 2;
    let mut entries = 0;
    match value {
        Value::Array(items) => {
            for item in items {
                let (inner, bytes) = digest(item, digests, long);
                hash = mix(hash, inner);
                size += bytes + 1;
                entries += 1;
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                if matches!(member, Value::Null) {
                    continue;
                }
                hash = mix(hash, hash_bytes(5, name.content().as_bytes()));
                let (inner, bytes) = digest(member, digests, long);
                hash = mix(hash, inner);
                size += name.content().len() + 3 + bytes + 1;
                entries += 1;
            }
        }
        _ => {}
    }
    if entries > 0 {
        size -= 1;
    }
    digests[at] = Digest {
        hash,
        size,
        count: digests.len() - at,
    };
    (hash, size)
}

/// Whether `value` has a place in document order (a digest, a possible reference): an object,
/// an array, or a string of at least `long` bytes as written.
fn numbered(value: &Value<'_>, long: usize) -> bool {
    match value {
        Value::Array(_) | Value::Object(_) => true,
        Value::String(_) => scalar_size(value) >= long,
        _ => false,
    }
}

/// Whether two values are equal as this codec writes them: numbers by their text, strings by
/// their value, members in the same order, null members left out.
fn same(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let mut a = a.iter().filter(|(_, v)| !matches!(v, Value::Null));
            let mut b = b.iter().filter(|(_, v)| !matches!(v, Value::Null));
            loop {
                match (a.next(), b.next()) {
                    (None, None) => return true,
                    (Some((na, va)), Some((nb, vb))) if na.same_value(nb) && same(va, vb) => {}
                    _ => return false,
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::String(a), Value::String(b)) => a.same_value(b),
        (a, b) => a == b,
    }
}

/// One step of a JSON Pointer.
#[derive(Debug, Clone)]
enum Step<'v> {
    Name(Cow<'v, str>),
    Index(usize),
}

/// The JSON Pointer of `path`, as a reference's fragment: `#/a/0/b~1c`.
fn pointer(path: &[Step<'_>]) -> String {
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

/// The references of one document: for each container (by its place in document order) that
/// repeats an earlier one, the pointer of that earlier one.
struct Refs<'v, 'a> {
    digests: &'v [Digest],
    min_bytes: usize,
    /// The first occurrence of each value of at least `min_bytes`, by hash and size.
    first: HashMap<(u64, usize), Vec<(&'v Value<'a>, String)>>,
    found: HashMap<usize, String>,
    path: Vec<Step<'v>>,
}

impl<'v, 'a> Refs<'v, 'a> {
    fn find(
        value: &'v Value<'a>,
        digests: &'v [Digest],
        min_bytes: usize,
    ) -> HashMap<usize, String> {
        let mut refs = Refs {
            digests,
            min_bytes,
            first: HashMap::default(),
            found: HashMap::default(),
            path: Vec::new(),
        };
        let mut id = 0;
        refs.children(value, &mut id);
        refs.found
    }

    /// Visits `value`, the container at `*id` in document order; leaves `*id` after its subtree.
    fn visit(&mut self, value: &'v Value<'a>, id: &mut usize) {
        let digest = self.digests[*id];
        if digest.size < self.min_bytes {
            // Nothing inside is big enough either.
            *id += digest.count;
            return;
        }
        let key = (digest.hash, digest.size);
        let earlier = self
            .first
            .get(&key)
            .and_then(|seen| seen.iter().find(|(seen, _)| same(seen, value)))
            .map(|(_, at)| at.clone());
        match earlier {
            // `{"$ref":"…"}` is 11 bytes and the pointer; a pointer's digits, dots and slashes
            // cost about twice the tokens per byte of JSON text, so the value must be at least
            // twice as long.
            Some(at) if 2 * (at.len() + 11) < digest.size => {
                self.found.insert(*id, at);
                *id += digest.count;
            }
            Some(_) => self.children(value, id),
            None => {
                let alike = self.first.entry(key).or_default();
                if alike.len() < MAX_ALIKE {
                    alike.push((value, pointer(&self.path)));
                }
                self.children(value, id);
            }
        }
    }

    fn children(&mut self, value: &'v Value<'a>, id: &mut usize) {
        *id += 1;
        match value {
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    if numbered(item, self.min_bytes) {
                        self.path.push(Step::Index(index));
                        self.visit(item, id);
                        self.path.pop();
                    }
                }
            }
            Value::Object(members) => {
                for (name, member) in members {
                    if numbered(member, self.min_bytes) {
                        self.path.push(Step::Name(name.decoded()));
                        self.visit(member, id);
                        self.path.pop();
                    }
                }
            }
            _ => {}
        }
    }
}

/// Writes the output in one pass in document order.
struct Writer<'d> {
    out: String,
    digests: &'d [Digest],
    refs: &'d HashMap<usize, String>,
    tables: bool,
    min_rows: usize,
    /// The shortest string with a place in document order (see [`numbered`]).
    long: usize,
    /// How deep the value being written sits (the payload is at 0).
    depth: usize,
    /// Something only this codec writes was written: a reference, a table below the payload's
    /// own members, or a table with an object or array in a cell.
    nested: bool,
}

/// How one array of objects is written as a table.
struct Table<'v, 'a> {
    /// The column names, decoded, in the order first seen, with each one's name as written.
    columns: Vec<&'v Str<'a>>,
    /// The constant columns' values (by column), from the first row that is not a reference.
    constant: Vec<Option<&'v Value<'a>>>,
    /// Each column's place in `columns`, by decoded name.
    index: StdHashMap<Cow<'v, str>, usize>,
}

impl Writer<'_> {
    fn scalar(&mut self, value: &Value<'_>) {
        match value {
            Value::String(string) => string.write_unescaped(&mut self.out),
            scalar => scalar.write(&mut self.out),
        }
    }

    /// Writes `value`; when it is a container, `*id` is its place in document order, and is
    /// left after its subtree.
    fn value(&mut self, value: &Value<'_>, id: &mut usize) {
        if !numbered(value, self.long) {
            self.scalar(value);
            return;
        }
        let at = *id;
        if let Some(target) = self.refs.get(&at) {
            self.out.push_str("{\"$ref\":");
            parrot_json::write_string(target, &mut self.out);
            self.out.push('}');
            *id += self.digests[at].count;
            self.nested = true;
            return;
        }
        *id += 1;
        if value.is_scalar() {
            self.scalar(value);
            return;
        }
        self.depth += 1;
        self.container(value, at, id);
        self.depth -= 1;
    }

    /// Writes the object or array `value`, at `at` in document order, its children from `*id`.
    fn container(&mut self, value: &Value<'_>, at: usize, id: &mut usize) {
        match value {
            Value::Array(items) => match self
                .rows(items)
                .and_then(|rows| Some((self.table(&rows, at)?, rows)))
            {
                Some((table, rows)) => {
                    self.nested |= self.depth > 2;
                    self.write_table(&rows, None, &table, id);
                }
                None => {
                    self.out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            self.out.push(',');
                        }
                        self.value(item, id);
                    }
                    self.out.push(']');
                }
            },
            Value::Object(members) => {
                if let Some((keys, rows)) = self.keyed_rows(members)
                    && let Some(table) = self.table(&rows, at)
                {
                    // Only this codec writes an object of records as a table.
                    self.nested = true;
                    self.write_table(&rows, Some(&keys), &table, id);
                    return;
                }
                self.out.push('{');
                let mut first = true;
                for (name, member) in members {
                    if matches!(member, Value::Null) {
                        continue;
                    }
                    if !first {
                        self.out.push(',');
                    }
                    first = false;
                    name.write_unescaped(&mut self.out);
                    self.out.push(':');
                    self.value(member, id);
                }
                self.out.push('}');
            }
            _ => {}
        }
    }

    /// The ids of the containers among `members` (by member index), the first at `*id`.
    fn member_ids(&self, members: &[(Str<'_>, Value<'_>)], mut id: usize) -> Vec<Option<usize>> {
        members
            .iter()
            .map(|(_, value)| {
                numbered(value, self.long).then(|| {
                    let at = id;
                    id += self.digests[at].count;
                    at
                })
            })
            .collect()
    }

    /// The elements of an array that may be a table: at least `min_rows`, the first an object.
    fn rows<'v, 'a>(&self, items: &'v [Value<'a>]) -> Option<Vec<&'v Value<'a>>> {
        (self.tables && items.len() >= self.min_rows && matches!(items[0], Value::Object(_)))
            .then(|| items.iter().collect())
    }

    /// The names and values of an object of records (`{"1.0.0": {…}, "1.0.1": {…}}`): at least
    /// `min_rows` members that are not `null`, each an object.
    #[allow(clippy::type_complexity)]
    fn keyed_rows<'v, 'a>(
        &self,
        members: &'v [(Str<'a>, Value<'a>)],
    ) -> Option<(Vec<&'v Str<'a>>, Vec<&'v Value<'a>>)> {
        if !self.tables
            || members.len() < self.min_rows
            || !members
                .iter()
                .all(|(_, value)| matches!(value, Value::Null | Value::Object(_)))
        {
            return None;
        }
        let mut keys = Vec::with_capacity(members.len());
        let mut rows = Vec::with_capacity(members.len());
        for (name, value) in members {
            match value {
                Value::Null => {}
                Value::Object(_) => {
                    keys.push(name);
                    rows.push(value);
                }
                _ => return None,
            }
        }
        (rows.len() >= self.min_rows).then_some((keys, rows))
    }

    /// The table form of `items` (the elements of the container at `at`, in order), when they
    /// are all objects and the table costs fewer bytes.
    fn table<'v, 'a>(&self, items: &[&'v Value<'a>], at: usize) -> Option<Table<'v, 'a>> {
        if !self.tables || items.len() < self.min_rows {
            return None;
        }
        let mut columns: Vec<&'v Str<'a>> = Vec::new();
        let mut index: StdHashMap<Cow<'v, str>, usize> = StdHashMap::new();
        // Per column: the rows that have it, and the value all of them share so far.
        let mut present: Vec<usize> = Vec::new();
        let mut shared: Vec<Option<&'v Value<'a>>> = Vec::new();
        let mut rows = 0;
        let mut names_bytes = 0;
        // The output size of each column's shared value.
        let mut shared_size: Vec<usize> = Vec::new();
        let mut guess = Vec::new();
        let mut id = at + 1;
        for &item in items {
            let Value::Object(members) = item else {
                return None;
            };
            let row = id;
            id += self.digests[row].count;
            if self.refs.contains_key(&row) {
                continue;
            }
            rows += 1;
            let ids = self.member_ids(members, row + 1);
            for (m, ((name, value), cell)) in members.iter().zip(ids).enumerate() {
                if matches!(value, Value::Null) {
                    continue;
                }
                names_bytes += name.content().len() + 3;
                let size = cell.map_or_else(|| scalar_size(value), |cell| self.digests[cell].size);
                let column = match guessed(&columns, &guess, m, name) {
                    Some(column) => column,
                    None => *index.entry(name.decoded()).or_insert_with(|| {
                        columns.push(name);
                        present.push(0);
                        shared.push(Some(value));
                        shared_size.push(size);
                        columns.len() - 1
                    }),
                };
                remember(&mut guess, m, column);
                present[column] += 1;
                if shared[column]
                    .is_some_and(|was| size != shared_size[column] || !same(was, value))
                {
                    shared[column] = None;
                }
            }
        }
        let constant: Vec<Option<&'v Value<'a>>> = (0..columns.len())
            .map(|c| shared[c].filter(|_| present[c] == rows && rows > 1))
            .collect();
        // What the table saves: every row's member names and the copies of the constants,
        // less the names said once, a `null` for each cell of a row without that member, and
        // the table's own names (`{"_columns":[],"_rows":[]}`, `,"_constant":{}`).
        let header: usize = columns.iter().map(|name| name.content().len() + 3).sum();
        let missing: usize = (0..columns.len())
            .filter(|&c| constant[c].is_none())
            .map(|c| (rows - present[c]) * 5)
            .sum();
        let hoisted: usize = (0..columns.len())
            .filter(|&c| constant[c].is_some())
            .map(|c| (rows - 1) * (shared_size[c] + 1))
            .sum();
        let own = if constant.iter().any(Option::is_some) {
            25 + 15
        } else {
            25
        };
        let saved = (names_bytes + hoisted).checked_sub(header + missing + own)?;
        (saved > 0 && rows > 0).then_some(Table {
            columns,
            constant,
            index,
        })
    }

    /// Writes `items` as `table`; `*id` is the first row's place in document order, and is
    /// left after the last row's subtree.
    fn write_table(
        &mut self,
        items: &[&Value<'_>],
        keys: Option<&[&Str<'_>]>,
        table: &Table<'_, '_>,
        id: &mut usize,
    ) {
        let varying: Vec<usize> = (0..table.columns.len())
            .filter(|&c| table.constant[c].is_none())
            .collect();
        self.out.push('{');
        if let Some(keys) = keys {
            self.out.push_str("\"_keys\":");
            self.names(keys.iter().copied());
            self.out.push(',');
        }
        self.out.push_str("\"_columns\":");
        self.names(varying.iter().map(|&c| table.columns[c]));
        let mut rows_at = Vec::with_capacity(items.len());
        let mut next = *id;
        for _ in items {
            rows_at.push(next);
            next += self.digests[next].count;
        }
        if table.constant.iter().any(Option::is_some) {
            // The constants' containers are written from the first row that is no reference.
            let source = items
                .iter()
                .zip(&rows_at)
                .find(|(_, row)| !self.refs.contains_key(row));
            if let Some((Value::Object(members), &row)) = source.map(|(item, row)| (*item, row)) {
                self.write_constant(members, row, table);
            }
        }
        self.out.push_str(",\"_rows\":[");
        let mut guess = Vec::new();
        for (r, (item, &row)) in items.iter().zip(&rows_at).enumerate() {
            if r > 0 {
                self.out.push(',');
            }
            match item {
                Value::Object(members) if !self.refs.contains_key(&row) => {
                    self.write_row(members, row, table, &varying, &mut guess);
                }
                // A row that repeats an earlier value is its reference.
                _ => self.value(item, &mut row.clone()),
            }
        }
        self.out.push_str("]}");
        *id = next;
    }

    /// `[name,…]`: an array of member names, each written as a string.
    fn names<'n, 'a: 'n>(&mut self, names: impl Iterator<Item = &'n Str<'a>>) {
        self.out.push('[');
        for (i, name) in names.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            name.write_unescaped(&mut self.out);
        }
        self.out.push(']');
    }

    /// `,"_constant":{…}`: the constant members of `table`, from the row at `row`.
    fn write_constant(
        &mut self,
        members: &[(Str<'_>, Value<'_>)],
        row: usize,
        table: &Table<'_, '_>,
    ) {
        self.out.push_str(",\"_constant\":{");
        let ids = self.member_ids(members, row + 1);
        let mut first = true;
        for (m, (name, value)) in members.iter().enumerate() {
            let column = table.index.get(&name.decoded()).copied();
            if matches!(value, Value::Null) || column.is_none_or(|c| table.constant[c].is_none()) {
                continue;
            }
            if !first {
                self.out.push(',');
            }
            first = false;
            name.write_unescaped(&mut self.out);
            self.out.push(':');
            self.nested |= !value.is_scalar();
            self.value(value, &mut ids[m].unwrap_or(0));
        }
        self.out.push('}');
    }

    /// `[cell,…]`: the row at `row`, one cell per varying column of `table`.
    fn write_row(
        &mut self,
        members: &[(Str<'_>, Value<'_>)],
        row: usize,
        table: &Table<'_, '_>,
        varying: &[usize],
        guess: &mut Vec<usize>,
    ) {
        let ids = self.member_ids(members, row + 1);
        let mut cells: Vec<Option<usize>> = vec![None; table.columns.len()];
        for (m, (name, value)) in members.iter().enumerate() {
            if matches!(value, Value::Null) {
                continue;
            }
            let column = guessed(&table.columns, guess, m, name)
                .or_else(|| table.index.get(&name.decoded()).copied());
            if let Some(c) = column {
                cells[c] = Some(m);
                remember(guess, m, c);
            }
        }
        self.out.push('[');
        for (i, &c) in varying.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            match cells[c] {
                Some(m) => {
                    self.nested |= !members[m].1.is_scalar();
                    self.value(&members[m].1, &mut ids[m].unwrap_or(0));
                }
                None => self.out.push_str("null"),
            }
        }
        self.out.push(']');
    }
}

/// The column of `name`, the member at `position` of a row, when the previous row had a member
/// of that name, as written, at that position (rows mostly list their members in one order):
/// no lookup by decoded name then.
fn guessed(
    columns: &[&Str<'_>],
    guess: &[usize],
    position: usize,
    name: &Str<'_>,
) -> Option<usize> {
    let column = *guess.get(position)?;
    (columns.get(column)?.content() == name.content()).then_some(column)
}

/// Records that the member at `position` was in `column`, for [`guessed`] on the next row.
fn remember(guess: &mut Vec<usize>, position: usize, column: usize) {
    if guess.len() <= position {
        guess.resize(position + 1, usize::MAX);
    }
    guess[position] = column;
}

/// Tables back to arrays of objects; references are left as they are, for [`resolve`].
fn untable<'a>(value: Value<'a>) -> Result<Value<'a>, CodecError> {
    match value {
        Value::Array(items) => Ok(Value::Array(
            items.into_iter().map(untable).collect::<Result<_, _>>()?,
        )),
        Value::Object(members) if members.iter().any(|(name, _)| name.is("_columns")) => {
            rows_of(members)
        }
        Value::Object(members) => Ok(Value::Object(
            members
                .into_iter()
                .map(|(name, value)| Ok((name, untable(value)?)))
                .collect::<Result<_, CodecError>>()?,
        )),
        scalar => Ok(scalar),
    }
}

/// The strings of a table's `_keys` or `_columns`.
fn strings<'a>(names: Vec<Value<'a>>, member: &str) -> Result<Vec<Str<'a>>, CodecError> {
    names
        .into_iter()
        .map(|name| match name {
            Value::String(name) => Ok(name),
            _ => Err(invalid(format!(
                "a table's {member} hold a value that is not a string"
            ))),
        })
        .collect()
}

/// The array a table stands for.
fn rows_of<'a>(members: Vec<(Str<'a>, Value<'a>)>) -> Result<Value<'a>, CodecError> {
    let mut columns = None;
    let mut constant = Vec::new();
    let mut rows = None;
    let mut keys = None;
    for (name, value) in members {
        match (name.decoded().as_ref(), value) {
            ("_keys", Value::Array(names)) => keys = Some(strings(names, "_keys")?),
            ("_columns", Value::Array(names)) => columns = Some(strings(names, "_columns")?),
            ("_constant", Value::Object(members)) => {
                constant = members
                    .into_iter()
                    .map(|(name, value)| Ok((name, untable(value)?)))
                    .collect::<Result<_, CodecError>>()?;
            }
            ("_rows", Value::Array(items)) => rows = Some(items),
            (other, _) => {
                return Err(invalid(format!(
                    "a table has a member {other:?} that is not _keys or _columns (arrays of strings), _constant (an object) or _rows (an array)"
                )));
            }
        }
    }
    let (Some(columns), Some(rows)) = (columns, rows) else {
        return Err(invalid("a table without _columns or _rows".to_owned()));
    };
    if let Some((name, _)) = constant
        .iter()
        .find(|(name, _)| columns.iter().any(|c| c.same_value(name)))
    {
        return Err(invalid(format!(
            "a table's _constant has {:?}, which is one of its _columns too",
            name.decoded()
        )));
    }
    let mut out = Vec::with_capacity(rows.len());
    for (r, row) in rows.into_iter().enumerate() {
        match row {
            Value::Array(cells) if cells.len() == columns.len() => {
                let mut members: Vec<(Str<'_>, Value<'_>)> =
                    Vec::with_capacity(columns.len() + constant.len());
                for (name, cell) in columns.iter().zip(cells) {
                    if !matches!(cell, Value::Null) {
                        members.push((name.clone(), untable(cell)?));
                    }
                }
                members.extend(constant.iter().cloned());
                out.push(Value::Object(members));
            }
            Value::Object(members) if members.iter().any(|(name, _)| name.is("$ref")) => {
                out.push(Value::Object(members));
            }
            _ => {
                return Err(invalid(format!(
                    "row {r} of a table is not an array of {} cells nor a reference",
                    columns.len()
                )));
            }
        }
    }
    match keys {
        None => Ok(Value::Array(out)),
        Some(keys) if keys.len() == out.len() => {
            Ok(Value::Object(keys.into_iter().zip(out).collect()))
        }
        Some(keys) => Err(invalid(format!(
            "a table has {} _keys for {} rows",
            keys.len(),
            out.len()
        ))),
    }
}

/// The target of a reference object: its pointer's steps.
fn reference(value: &Value<'_>) -> Option<Result<Vec<String>, CodecError>> {
    let Value::Object(members) = value else {
        return None;
    };
    let (_, target) = members.iter().find(|(name, _)| name.is("$ref"))?;
    let steps = match (members.len(), target) {
        (1, Value::String(target)) => match target.decoded().strip_prefix('#') {
            Some("") => Ok(Vec::new()),
            Some(pointer) if pointer.starts_with('/') => Ok(pointer[1..]
                .split('/')
                .map(|step| step.replace("~1", "/").replace("~0", "~"))
                .collect()),
            _ => Err(invalid(format!(
                "a reference to {:?}, not a JSON Pointer fragment",
                target.decoded()
            ))),
        },
        _ => Err(invalid(
            "a $ref member in an object that is not a reference".to_owned(),
        )),
    };
    Some(steps)
}

/// The value at `steps` in `root`.
fn lookup<'v, 'a>(root: &'v Value<'a>, steps: &[String]) -> Option<&'v Value<'a>> {
    let mut at = root;
    for step in steps {
        at = match at {
            Value::Object(members) => &members.iter().find(|(name, _)| name.is(step))?.1,
            Value::Array(items) => items.get(step.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

fn lookup_mut<'v, 'a>(root: &'v mut Value<'a>, path: &[Step<'_>]) -> Option<&'v mut Value<'a>> {
    let mut at = root;
    for step in path {
        at = match (at, step) {
            (Value::Object(members), Step::Name(name)) => {
                &mut members.iter_mut().find(|(n, _)| n.is(name))?.1
            }
            (Value::Array(items), Step::Index(index)) => items.get_mut(*index)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Every reference of `value`, in document order, with its path.
fn references<'a>(
    value: &Value<'a>,
    path: &mut Vec<Step<'static>>,
    out: &mut Vec<(Vec<Step<'static>>, Vec<String>)>,
) -> Result<(), CodecError> {
    if let Some(steps) = reference(value) {
        out.push((path.clone(), steps?));
        return Ok(());
    }
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(Step::Index(index));
                references(item, path, out)?;
                path.pop();
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                path.push(Step::Name(Cow::Owned(name.decoded().into_owned())));
                references(member, path, out)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether `value` holds a reference anywhere.
fn holds_reference(value: &Value<'_>) -> bool {
    reference(value).is_some()
        || match value {
            Value::Array(items) => items.iter().any(holds_reference),
            Value::Object(members) => members.iter().any(|(_, v)| holds_reference(v)),
            _ => false,
        }
}

/// The bytes `value` takes written compactly.
fn written_size(value: &Value<'_>) -> usize {
    match value {
        Value::Array(items) => {
            1 + items
                .iter()
                .map(|item| written_size(item) + 1)
                .sum::<usize>()
        }
        Value::Object(members) => {
            1 + members
                .iter()
                .map(|(name, value)| name.content().len() + 4 + written_size(value))
                .sum::<usize>()
        }
        scalar => scalar_size(scalar),
    }
}

/// Replaces every reference, in document order, by a copy of the value it names: that value
/// comes earlier in the document and its own references are replaced by then.
fn resolve(root: &mut Value<'_>, limit: usize) -> Result<(), CodecError> {
    let mut found = Vec::new();
    references(root, &mut Vec::new(), &mut found)?;
    let mut grown = 0usize;
    for (path, steps) in found {
        let target = lookup(root, &steps).ok_or_else(|| {
            invalid(format!(
                "a reference to #/{} names no value",
                steps.join("/")
            ))
        })?;
        if holds_reference(target) {
            return Err(invalid(format!(
                "the reference at #{} names #/{}, which is not an earlier value",
                pointer(&path).trim_start_matches('#'),
                steps.join("/")
            )));
        }
        grown = grown.saturating_add(written_size(target));
        if grown > limit {
            return Err(invalid(format!(
                "references would exceed {limit} bytes ({MAX_EXPANSION} times the payload, at most {MAX_EXPANDED_BYTES})"
            )));
        }
        let copy = target.clone();
        let slot =
            lookup_mut(root, &path).ok_or_else(|| invalid("a reference moved".to_owned()))?;
        *slot = copy;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(params: &str) -> JsonNested {
        parrot_codec_api::build(Params::from_json(params).unwrap()).unwrap()
    }

    /// The output for `input` (unchanged: `None`), after checking that it expands back.
    fn nested(params: &str, input: &str) -> Option<String> {
        let codec = codec(params);
        match Codec::compress(&codec, Payload::json(input), Level::Minimal).unwrap() {
            Outcome::Changed { payload, lossy } => {
                assert!(!lossy);
                let expanded = codec.expand(&payload).unwrap();
                assert!(
                    parrot_json::equivalent(input, &expanded, true),
                    "{input}\n{payload}\n{expanded}"
                );
                Some(payload)
            }
            Outcome::Unchanged => None,
        }
    }

    #[test]
    fn an_array_of_objects_is_a_table_with_constants_and_missing_cells() {
        let input = r#"[{"id": 1, "state": "open", "title": "a", "draft": false},
                        {"id": 2, "state": "open", "draft": false},
                        {"state": "open", "id": 3, "title": null, "draft": false, "extra": [1]}]"#;
        assert_eq!(
            nested("{}", input).unwrap(),
            r#"{"_columns":["id","title","extra"],"_constant":{"state":"open","draft":false},"_rows":[[1,"a",null],[2,null,null],[3,null,[1]]]}"#
        );
    }

    #[test]
    fn tables_nest_inside_cells_and_objects() {
        let labels = r#"[{"name": "bug", "color": "f00"}, {"name": "docs", "color": "0f0"},
                         {"name": "ci", "color": "00f"}]"#;
        let input = format!(
            r#"{{"total": 3, "items": [{{"number": 1, "labels": {labels}}}, {{"number": 2, "labels": []}},
                                      {{"number": 3}}]}}"#
        );
        // Three items with one or two short names do not pay for a table; their labels do.
        assert_eq!(
            nested(r#"{"refs": false}"#, &input).unwrap(),
            r#"{"total":3,"items":[{"number":1,"labels":{"_columns":["name","color"],"_rows":[["bug","f00"],["docs","0f0"],["ci","00f"]]}},{"number":2,"labels":[]},{"number":3}]}"#
        );
    }

    #[test]
    fn a_table_s_cells_hold_tables() {
        let steps = |job: usize| {
            (0..3)
                .map(|n| {
                    format!(r#"{{"name": "step {job}.{n}", "status": "completed", "number": {n}}}"#)
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let jobs: Vec<String> = (0..3)
            .map(|job| {
                format!(
                    r#"{{"id": {job}, "conclusion": "success", "steps": [{}]}}"#,
                    steps(job)
                )
            })
            .collect();
        let input = format!(r#"{{"jobs": [{}]}}"#, jobs.join(","));
        assert_eq!(
            nested("{}", &input).unwrap(),
            r#"{"jobs":{"_columns":["id","steps"],"_constant":{"conclusion":"success"},"_rows":[[0,{"_columns":["name","number"],"_constant":{"status":"completed"},"_rows":[["step 0.0",0],["step 0.1",1],["step 0.2",2]]}],[1,{"_columns":["name","number"],"_constant":{"status":"completed"},"_rows":[["step 1.0",0],["step 1.1",1],["step 1.2",2]]}],[2,{"_columns":["name","number"],"_constant":{"status":"completed"},"_rows":[["step 2.0",0],["step 2.1",1],["step 2.2",2]]}]]}}"#
        );
    }

    #[test]
    fn a_repeated_subtree_is_said_once_and_referred_to_by_its_first_path() {
        let user =
            r#"{"login": "octocat", "id": 583231, "url": "https://api.github.com/users/octocat"}"#;
        // Names with `/` and `~` are escaped in the pointer; the second copy sits in a table
        // row, the third under another name.
        let input = format!(
            r#"{{"a/b~c": {{"user": {user}}}, "items": [{{"n": 1, "by": {user}}}, {{"n": 2, "by": {{"login": "x"}}}}], "sender": {user}}}"#
        );
        let out = nested(r#"{"min_rows": 2}"#, &input).unwrap();
        assert_eq!(
            out,
            r##"{"a/b~c":{"user":{"login":"octocat","id":583231,"url":"https://api.github.com/users/octocat"}},"items":[{"n":1,"by":{"$ref":"#/a~1b~0c/user"}},{"n":2,"by":{"login":"x"}}],"sender":{"$ref":"#/a~1b~0c/user"}}"##
        );
    }

    #[test]
    fn a_reference_may_name_a_cell_of_a_table_and_stand_for_a_whole_row() {
        let repo = r#"{"id": 1296269, "full_name": "octocat/Hello-World", "private": false, "fork": false}"#;
        let input = format!(
            r#"{{"runs": [{{"id": 1, "repository": {repo}}}, {{"id": 2, "repository": {repo}}}, {{"id": 1, "repository": {repo}}}],
                "head": {{"repo": {repo}}}}}"#
        );
        let out = nested("{}", &input).unwrap();
        // The constant column holds the repository once; the third run repeats the first
        // whole and is a reference; `head.repo` names the first run's cell.
        assert!(
            out.contains(r##""_rows":[[1],[2],{"$ref":"#/runs/0"}]"##),
            "{out}"
        );
        assert!(
            out.ends_with(r##""head":{"repo":{"$ref":"#/runs/0/repository"}}}"##),
            "{out}"
        );
    }

    #[test]
    fn an_object_of_records_is_a_keyed_table_and_a_long_string_repeated_is_referred_to() {
        let readme = "# left-pad\\n\\nPads a string on the left, with any character you give it, to any length.";
        let version = |v: &str, dep: &str| {
            format!(
                r#"{{"name": "left-pad", "version": "{v}", "readme": "{readme}", "dependencies": {{"{dep}": "^1.0.0"}}}}"#
            )
        };
        let input = format!(
            r#"{{"versions": {{"1.0.0": {}, "1.0.1": {}, "1.1.0": {}}}, "readme": "{readme}"}}"#,
            version("1.0.0", "a"),
            version("1.0.1", "b"),
            version("1.1.0", "c")
        );
        let out = nested("{}", &input).unwrap();
        assert_eq!(
            out,
            format!(
                r##"{{"versions":{{"_keys":["1.0.0","1.0.1","1.1.0"],"_columns":["version","dependencies"],"_constant":{{"name":"left-pad","readme":"{readme}"}},"_rows":[["1.0.0",{{"a":"^1.0.0"}}],["1.0.1",{{"b":"^1.0.0"}}],["1.1.0",{{"c":"^1.0.0"}}]]}},"readme":{{"$ref":"#/versions/1.0.0/readme"}}}}"##
            )
        );
    }

    #[test]
    fn a_reference_is_written_only_where_it_is_shorter() {
        let small = r#"{"a": 1, "b": 2}"#;
        let input = format!(r#"{{"x": {small}, "y": {small}, "z": [{small}]}}"#);
        // Not shorter: no reference, and nothing else only this codec writes, so it is left
        // to the others.
        assert_eq!(nested(r#"{"min_ref_bytes": 1}"#, &input), None);
    }

    #[test]
    fn flat_rows_with_nothing_repeated_are_left_to_the_other_codecs() {
        let rows: Vec<String> = (0..20)
            .map(|i| format!(r#"{{"id": {i}, "region": "south", "score": {}.5}}"#, i % 7))
            .collect();
        let rows = format!("[{}]", rows.join(","));
        assert_eq!(nested("{}", &rows), None);
        assert_eq!(
            nested("{}", &format!(r#"{{"driver": "pg", "rows": {rows}}}"#)),
            None
        );
        // One level deeper, the same rows are a table only this codec writes.
        let deeper = format!(r#"{{"result": {{"rows": {rows}}}}}"#);
        assert!(nested("{}", &deeper).unwrap().starts_with(
            r#"{"result":{"rows":{"_columns":["id","score"],"_constant":{"region":"south"}"#
        ));
    }

    #[test]
    fn a_document_holding_a_reserved_name_is_left_unchanged() {
        for name in RESERVED {
            let input = format!(
                r#"{{"items": [{{"a": 1, "b": 2}}, {{"a": 3, "b": 4}}, {{"a": 5, "b": 6}}], "deep": [{{"{name}": 1}}]}}"#
            );
            assert_eq!(nested("{}", &input), None, "{name}");
        }
    }

    #[test]
    fn text_and_invalid_json_are_left_unchanged() {
        let codec = codec("{}");
        for (payload, kind) in [
            (
                "[{\"a\": 1}, {\"a\": 2}]",
                parrot_codec_api::PayloadKind::Text,
            ),
            ("{\"a\": 1, \"a\": 2}", parrot_codec_api::PayloadKind::Json),
            ("[1, 2", parrot_codec_api::PayloadKind::Json),
        ] {
            assert_eq!(
                Codec::compress(&codec, Payload::new(payload, kind), Level::Normal).unwrap(),
                Outcome::Unchanged,
                "{payload}"
            );
        }
    }

    #[test]
    fn expand_refuses_what_it_did_not_write_naming_the_problem() {
        let codec = codec("{}");
        let cases = [
            (
                r#"{"_columns":["a"],"_rows":[[1,2]]}"#,
                "row 0 of a table is not an array of 1 cells",
            ),
            (
                r#"{"_columns":["a"],"_rows":[[1]],"x":1}"#,
                "a table has a member \"x\"",
            ),
            (r#"{"_columns":["a"]}"#, "a table without _columns or _rows"),
            (
                r#"{"_keys":["x"],"_columns":["a"],"_rows":[[1],[2]]}"#,
                "a table has 1 _keys for 2 rows",
            ),
            (
                r#"{"_columns":["a"],"_constant":{"a":1},"_rows":[]}"#,
                "is one of its _columns too",
            ),
            (
                r##"{"a":{"$ref":"#/b"}}"##,
                "a reference to #/b names no value",
            ),
            (
                r##"{"a":{"$ref":"#/b"},"b":{"$ref":"#/a"}}"##,
                "not an earlier value",
            ),
            (r##"{"a":{"$ref":"x"}}"##, "not a JSON Pointer fragment"),
            (
                r##"{"a":{"$ref":"#/b","c":1},"b":1}"##,
                "a $ref member in an object that is not a reference",
            ),
        ];
        for (payload, expected) in cases {
            let err = codec.expand(payload).unwrap_err();
            assert!(
                err.message().contains(expected),
                "{payload}: {}",
                err.message()
            );
            assert!(
                err.message().starts_with("json_nested cannot expand: "),
                "{}",
                err.message()
            );
        }
    }

    #[test]
    fn expand_stops_a_document_that_references_would_blow_up() {
        // Each level refers twice to the one before: 2^40 copies.
        let mut text = String::from(r#"{"l0":[1,2,3,4,5,6,7,8]"#);
        for level in 1..=40 {
            let before = level - 1;
            text.push_str(&format!(
                r##","l{level}":[{{"$ref":"#/l{before}"}},{{"$ref":"#/l{before}"}}]"##
            ));
        }
        text.push('}');
        let err = codec("{}").expand(&text).unwrap_err();
        assert!(err.message().contains("would exceed"), "{}", err.message());
    }
}
