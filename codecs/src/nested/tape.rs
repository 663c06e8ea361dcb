//! The document as `json_nested` reads it: one flat list of nodes in document order (a tape),
//! each with its digest, instead of a tree of allocations.
//!
//! A node is a value (28 bytes); a member's node also holds its name. A container's subtree is the nodes
//! that follow it, [`Node::skip`] of them with itself, so its children are found by skipping
//! and two subtrees are compared node by node. Null members are not on the tape: the output
//! leaves them out (CONTRACT §2.1), so neither digests nor tables count them. Null elements of
//! arrays are values and stay.
//!
//! Reading validates as [`parrot_json::check`] does (the grammar, the depth limit, no
//! duplicate member names) and stops at the first member named as one of the codec's own
//! ([`RESERVED`]): such a document is left unchanged.

use std::borrow::Cow;

use parrot_json::{DistinctNames, Error, MAX_DEPTH, RawStr, Reader};

use super::{RESERVED, hash_bytes, mix};

/// What a node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    False,
    True,
    Number,
    String,
    Array,
    Object,
}

/// One value of the document. Offsets are bytes of the text (a payload of 4 GiB or more is
/// not read: [`Tape::read`] leaves it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    /// A hash of the value's compact text, null members left out (folded to 32 bits: the
    /// size goes with it, and equality is always confirmed): scalars by their text as
    /// written, containers by their entries in order.
    pub(super) hash: u32,
    /// Where a scalar's text starts (a string's at its opening quote); for a string that holds
    /// an escape, its place in [`Tape::escaped`] instead.
    pub(super) start: u32,
    /// The length of a scalar's text (a string's with its quotes).
    pub(super) len: u32,
    /// Where the member name starts (at its opening quote), or its place in [`Tape::escaped`]
    /// when it is kept there ([`NAME_ASIDE`]); for an element, 0.
    pub(super) name: u32,
    /// The nodes of the value's subtree, itself included: 1 for a scalar.
    pub(super) skip: u32,
    /// The bytes of the value's compact text as written (a string with its escapes), null
    /// members left out: what a reference, a table or a constant would save.
    pub(super) size: u32,
    /// The member name's length with its quotes (a name kept aside: 0).
    pub(super) name_len: u16,
    pub(super) kind: Kind,
    /// [`ESCAPED`], [`NAME_ASIDE`], [`MEMBER`].
    pub(super) flags: u8,
}

/// [`Node::flags`]: the string value holds an escape, and is kept in [`Tape::escaped`].
const ESCAPED: u8 = 1;
/// [`Node::flags`]: the member name is kept in [`Tape::escaped`] (it holds an escape, or is too
/// long for [`Node::name_len`]).
const NAME_ASIDE: u8 = 2;
/// [`Node::flags`]: the value is a member of an object (it has a name).
const MEMBER: u8 = 4;

impl Node {
    pub(super) fn is_container(&self) -> bool {
        matches!(self.kind, Kind::Array | Kind::Object)
    }

    /// Whether the value is a member of an object.
    pub(super) fn is_member(&self) -> bool {
        self.flags & MEMBER != 0
    }
}

/// A string of the document: its text between the quotes when it holds no escape (which is
/// then its value too), or the string as the reader checked it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Text<'a> {
    Plain(&'a str),
    Escaped(RawStr<'a>),
}

impl<'a> Text<'a> {
    /// The text between the quotes, escapes as written.
    pub(super) fn content(self) -> &'a str {
        match self {
            Text::Plain(content) => content,
            Text::Escaped(raw) => raw.content(),
        }
    }

    pub(super) fn decoded(self) -> Cow<'a, str> {
        match self {
            Text::Plain(content) => Cow::Borrowed(content),
            Text::Escaped(raw) => raw.decoded(),
        }
    }

    /// Whether the two have the same value.
    pub(super) fn same_value(self, other: Text<'_>) -> bool {
        match (self, other) {
            (Text::Plain(a), Text::Plain(b)) => a == b,
            (Text::Escaped(a), Text::Escaped(b)) => a.same_value(&b),
            (Text::Escaped(a), Text::Plain(b)) | (Text::Plain(b), Text::Escaped(a)) => a.is(b),
        }
    }

    /// Writes the string quoted, without the escapes JSON does not require (as
    /// `json_compact` writes strings).
    pub(super) fn write_unescaped(self, out: &mut String) {
        match self {
            Text::Plain(content) => {
                out.push('"');
                out.push_str(content);
                out.push('"');
            }
            Text::Escaped(raw) => parrot_json::write_unescaped(raw, out),
        }
    }
}

/// The document read (see the module docs).
pub(super) struct Tape<'a> {
    text: &'a str,
    pub(super) nodes: Vec<Node>,
    /// How deep its containers nest: 0 for a scalar, 1 for a container of scalars.
    pub(super) depth: usize,
    /// The strings (values and names) that hold an escape, as the reader checked them: for
    /// decoding them without reading them again.
    escaped: Vec<RawStr<'a>>,
}

/// Why reading stopped.
enum Stop {
    /// Not JSON as `check` takes it.
    Invalid,
    /// A member is named as one of the codec's own.
    Reserved,
}

impl From<Error> for Stop {
    fn from(_: Error) -> Stop {
        Stop::Invalid
    }
}

/// The reading of one document.
struct Read<'a> {
    reader: Reader<'a>,
    tape: Tape<'a>,
    /// The member names of the objects being read, innermost last (for the duplicate check).
    names: Vec<RawStr<'a>>,
    distinct: DistinctNames<'a>,
}

impl<'a> Tape<'a> {
    /// The tape of `text`, or `None` when it is not JSON as [`parrot_json::check`] takes it,
    /// holds a member named as one of [`RESERVED`], or has 4 GiB or more.
    pub(super) fn read(text: &'a str) -> Option<Tape<'a>> {
        if u32::try_from(text.len()).is_err() {
            return None;
        }
        let mut read = Read {
            reader: Reader::new(text),
            tape: Tape {
                text,
                // About one value per 24 bytes of a typical API response.
                nodes: Vec::with_capacity(text.len() / 24 + 1),
                depth: 0,
                escaped: Vec::new(),
            },
            names: Vec::new(),
            distinct: DistinctNames::default(),
        };
        read.reader.skip_ws();
        read.value(0, None).ok()?;
        read.reader.finish().ok()?;
        Some(read.tape)
    }

    /// The text of node `at` (a number's or a literal's as written).
    pub(super) fn scalar_text(&self, at: usize) -> &'a str {
        let node = &self.nodes[at];
        let start = node.start as usize;
        self.text
            .get(start..start + node.len as usize)
            .unwrap_or_default()
    }

    /// The string value of node `at`.
    pub(super) fn string(&self, at: usize) -> Text<'a> {
        let node = &self.nodes[at];
        self.text_at(node.start, node.len, node.flags & ESCAPED != 0)
    }

    /// The member name of node `at` (empty for an element).
    pub(super) fn name(&self, at: usize) -> Text<'a> {
        let node = &self.nodes[at];
        self.text_at(
            node.name,
            u32::from(node.name_len),
            node.flags & NAME_ASIDE != 0,
        )
    }

    fn text_at(&self, start: u32, len: u32, aside: bool) -> Text<'a> {
        if aside && let Some(&raw) = self.escaped.get(start as usize) {
            return Text::Escaped(raw);
        }
        let (start, len) = (start as usize, len as usize);
        Text::Plain(
            self.text
                .get(start + 1..(start + len).saturating_sub(1))
                .unwrap_or_default(),
        )
    }

    /// The children of the container at `at`, in order.
    pub(super) fn children(&self, at: usize) -> Children<'_> {
        Children {
            nodes: &self.nodes,
            next: at + 1,
            end: at + self.nodes[at].skip as usize,
        }
    }

    /// Whether the values at `a` and `b` are equal as the codec writes them: numbers by their
    /// text, strings by their value, members in the same order, null members left out. Their
    /// subtrees are compared node by node (equal values have the same shape on the tape).
    pub(super) fn same(&self, a: usize, b: usize) -> bool {
        let (first, second) = (&self.nodes[a], &self.nodes[b]);
        if first.skip != second.skip || first.size != second.size {
            return false;
        }
        (0..first.skip as usize).all(|k| {
            let (x, y) = (&self.nodes[a + k], &self.nodes[b + k]);
            x.kind == y.kind
                && x.skip == y.skip
                && (k == 0 || !x.is_member() || self.name(a + k).same_value(self.name(b + k)))
                && match x.kind {
                    Kind::Number => self.scalar_text(a + k) == self.scalar_text(b + k),
                    Kind::String => self.string(a + k).same_value(self.string(b + k)),
                    _ => true,
                }
        })
    }
}

/// The children of one container ([`Tape::children`]): their places on the tape.
pub(super) struct Children<'t> {
    nodes: &'t [Node],
    next: usize,
    end: usize,
}

impl Iterator for Children<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let at = self.next;
        (at < self.end).then(|| {
            self.next += self.nodes[at].skip as usize;
            at
        })
    }
}

/// Whether `name` is one of [`RESERVED`] (each starts with `_` or `$`, or an escape).
fn is_reserved(name: &RawStr<'_>) -> bool {
    matches!(name.content().as_bytes().first(), Some(b'_' | b'$' | b'\\'))
        && RESERVED.iter().any(|r| name.is(r))
}

impl<'a> Read<'a> {
    /// Where node's member name is found (`name`: where it starts in the text, and the name):
    /// its place, its length and its flags. A name that holds an escape or is too long for
    /// [`Node::name_len`] is kept in [`Tape::escaped`].
    fn place_name(&mut self, name: Option<(u32, RawStr<'a>)>) -> (u32, u16, u8) {
        let Some((start, name)) = name else {
            return (0, 0, 0);
        };
        match u16::try_from(name.raw().len()) {
            Ok(len) if !name.is_escaped() => (start, len, MEMBER),
            _ => {
                let at = self.tape.escaped.len() as u32;
                self.tape.escaped.push(name);
                (at, 0, MEMBER | NAME_ASIDE)
            }
        }
    }

    /// Makes room for more nodes a quarter at a time past the first guess, not by doubling: the
    /// list is most of the codec's memory.
    fn grow(&mut self) {
        let nodes = &mut self.tape.nodes;
        if nodes.len() == nodes.capacity() {
            nodes.reserve_exact(nodes.capacity() / 4 + 16);
        }
    }

    /// Reads the value at the cursor onto the tape (`depth`: the nesting of its container;
    /// `name`: its member name and where that starts).
    fn value(&mut self, depth: usize, name: Option<(u32, RawStr<'a>)>) -> Result<(), Stop> {
        let mut start = self.reader.pos() as u32;
        let (kind, hash, len, escaped) = match self.reader.peek() {
            Some(b'"') => {
                let string = self.reader.string()?;
                let hash = string_hash(string.content());
                if string.is_escaped() {
                    start = self.tape.escaped.len() as u32;
                    self.tape.escaped.push(string);
                }
                (Kind::String, hash, string.raw().len(), string.is_escaped())
            }
            Some(b'n') => {
                self.reader.literal()?;
                (Kind::Null, NULL_HASH, 4, false)
            }
            Some(b't') => {
                self.reader.literal()?;
                (Kind::True, TRUE_HASH, 4, false)
            }
            Some(b'f') => {
                self.reader.literal()?;
                (Kind::False, FALSE_HASH, 5, false)
            }
            Some(b'[' | b'{') => {
                if depth >= MAX_DEPTH {
                    return Err(Stop::Invalid);
                }
                return self.container(depth, name);
            }
            _ => {
                let number = self.reader.number()?;
                (Kind::Number, number_hash(number), number.len(), false)
            }
        };
        let (name, name_len, name_flags) = self.place_name(name);
        self.grow();
        self.tape.nodes.push(Node {
            hash,
            start,
            len: len as u32,
            name,
            skip: 1,
            // A string's size is its text as written, quotes included: its length.
            size: len as u32,
            name_len,
            kind,
            flags: name_flags | if escaped { ESCAPED } else { 0 },
        });
        Ok(())
    }

    /// Reads the array or object at the cursor, then fills in its node's digest.
    fn container(&mut self, depth: usize, name: Option<(u32, RawStr<'a>)>) -> Result<(), Stop> {
        let array = self.reader.peek() == Some(b'[');
        self.reader.bump();
        self.tape.depth = self.tape.depth.max(depth + 1);
        let at = self.tape.nodes.len();
        let (name, name_len, flags) = self.place_name(name);
        self.grow();
        self.tape.nodes.push(Node {
            hash: 0,
            start: 0,
            len: 0,
            name,
            skip: 0,
            size: 0,
            name_len,
            kind: if array { Kind::Array } else { Kind::Object },
            flags,
        });
        let (hash, size) = if array {
            self.elements(depth)?
        } else {
            self.members(depth)?
        };
        let skip = (self.tape.nodes.len() - at) as u32;
        let node = &mut self.tape.nodes[at];
        node.hash = hash;
        node.size = size as u32;
        node.skip = skip;
        Ok(())
    }

    /// Reads the elements of the array whose `[` the cursor is past; its hash and size.
    fn elements(&mut self, depth: usize) -> Result<(u32, usize), Stop> {
        let mut digest = Digest::array();
        if self.reader.empty_container(b']') {
            return Ok(digest.finish());
        }
        loop {
            let at = self.tape.nodes.len();
            self.value(depth + 1, None)?;
            let node = &self.tape.nodes[at];
            digest.element(node.hash, node.size as usize);
            if !self.reader.next_or_close(b']')? {
                break;
            }
        }
        Ok(digest.finish())
    }

    /// Reads the members of the object whose `{` the cursor is past; its hash and size.
    fn members(&mut self, depth: usize) -> Result<(u32, usize), Stop> {
        let mut digest = Digest::object();
        if self.reader.empty_container(b'}') {
            return Ok(digest.finish());
        }
        let base = self.names.len();
        loop {
            let start = self.reader.pos() as u32;
            let name = self.reader.string()?;
            if is_reserved(&name) {
                return Err(Stop::Reserved);
            }
            self.names.push(name);
            self.reader.expect(b':')?;
            self.reader.skip_ws();
            if self.reader.peek() == Some(b'n') {
                // A null member is left out of the output, and so of the tape.
                self.reader.literal()?;
            } else {
                let at = self.tape.nodes.len();
                self.value(depth + 1, Some((start, name)))?;
                let node = &self.tape.nodes[at];
                digest.member(name.content(), node.hash, node.size as usize);
            }
            if !self.reader.next_or_close(b'}')? {
                break;
            }
        }
        if !self
            .distinct
            .check(depth, self.names.get(base..).unwrap_or_default())
        {
            return Err(Stop::Invalid);
        }
        self.names.truncate(base);
        Ok(digest.finish())
    }
}

/// A hash of 64 bits folded to the 32 a node keeps.
fn fold(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// The hashes of the literals.
pub(super) const NULL_HASH: u32 = 12;
pub(super) const TRUE_HASH: u32 = 11;
pub(super) const FALSE_HASH: u32 = 10;

/// The hash of a string, by its text between the quotes as written.
pub(super) fn string_hash(content: &str) -> u32 {
    fold(hash_bytes(2, content.as_bytes()))
}

/// The hash of a number, by its text.
pub(super) fn number_hash(text: &str) -> u32 {
    fold(hash_bytes(1, text.as_bytes()))
}

/// The digest (hash and size) of an array or an object, built entry by entry as it is read.
pub(super) struct Digest {
    hash: u64,
    /// The brackets, and a comma after every entry (one too many, taken off at the end).
    size: usize,
    entries: usize,
}

impl Digest {
    pub(super) fn array() -> Digest {
        Digest {
            hash: mix(0x9e37_79b9_7f4a_7c15, 3),
            size: 2,
            entries: 0,
        }
    }

    pub(super) fn object() -> Digest {
        Digest {
            hash: mix(0x9e37_79b9_7f4a_7c15, 4),
            size: 2,
            entries: 0,
        }
    }

    /// An element of the hash and size given.
    pub(super) fn element(&mut self, hash: u32, size: usize) {
        self.hash = mix(self.hash, u64::from(hash));
        self.size += size + 1;
        self.entries += 1;
    }

    /// A member (not `null`) named `name` (its text between the quotes as written), whose
    /// value has the hash and size given.
    pub(super) fn member(&mut self, name: &str, hash: u32, size: usize) {
        // One step per member: the name's hash and the value's, told apart by a turn.
        self.hash = mix(
            self.hash,
            hash_bytes(5, name.as_bytes()) ^ u64::from(hash).rotate_left(23),
        );
        self.size += name.len() + 3 + size + 1;
        self.entries += 1;
    }

    /// The container's hash (folded) and size.
    pub(super) fn finish(self) -> (u32, usize) {
        let size = if self.entries > 0 {
            self.size - 1
        } else {
            self.size
        };
        (fold(self.hash), size)
    }
}

// The list is most of the codec's memory: a node stays at 28 bytes.
const _: () = assert!(std::mem::size_of::<Node>() == 28);
