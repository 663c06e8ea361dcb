//! Which values of a document repeat an earlier one, and the pointer each is referred to by.

use super::tape::{Kind, Tape};
use super::{HashMap, MAX_ALIKE};

/// One step of a JSON Pointer.
enum Step<'a> {
    Name(std::borrow::Cow<'a, str>),
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

/// Whether node `at` has a place for references: a container, or a string of at least `long`
/// bytes as written.
pub(super) fn numbered(tape: &Tape<'_>, at: usize, long: usize) -> bool {
    let node = &tape.nodes[at];
    node.is_container() || (node.kind == Kind::String && node.size as usize >= long)
}

/// The references of one document: for each value (by its place on the tape) that repeats an
/// earlier one, the pointer of that earlier one.
pub(super) struct Refs {
    found: HashMap<usize, String>,
}

impl Refs {
    /// No references.
    pub(super) fn none() -> Refs {
        Refs {
            found: HashMap::default(),
        }
    }

    /// The pointer node `at` is replaced by, when it repeats an earlier value.
    pub(super) fn get(&self, at: usize) -> Option<&str> {
        if self.found.is_empty() {
            return None;
        }
        self.found.get(&at).map(String::as_str)
    }

    /// Whether no value is referred to.
    pub(super) fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    pub(super) fn contains(&self, at: usize) -> bool {
        self.get(at).is_some()
    }

    /// The references of `tape` to values of at least `min_bytes` (compact text as written):
    /// each later occurrence of a value, in document order, refers to its first occurrence when
    /// the value is more than twice as long as the reference.
    pub(super) fn find(tape: &Tape<'_>, min_bytes: usize) -> Refs {
        let mut finder = Finder {
            tape,
            min_bytes,
            first: HashMap::default(),
            found: HashMap::default(),
        };
        finder.children(0);
        Refs {
            found: finder.found,
        }
    }
}

/// A first occurrence: its place on the tape and, once a later one referred to it, its
/// pointer.
type First = (usize, Option<String>);

struct Finder<'t, 'a> {
    tape: &'t Tape<'a>,
    min_bytes: usize,
    /// The first occurrences of each value of at least `min_bytes`, by hash and size (at most
    /// [`MAX_ALIKE`] of one digest).
    first: HashMap<(u64, u32), Vec<First>>,
    found: HashMap<usize, String>,
}

impl Finder<'_, '_> {
    fn visit(&mut self, at: usize) {
        let node = self.tape.nodes[at];
        if (node.size as usize) < self.min_bytes {
            // Nothing inside is big enough either.
            return;
        }
        let key = (node.hash, node.size);
        let tape = self.tape;
        let earlier = self.first.get_mut(&key).and_then(|seen| {
            let (first, pointer) = seen.iter_mut().find(|(seen, _)| tape.same(*seen, at))?;
            Some(
                pointer
                    .get_or_insert_with(|| pointer_of(tape, *first))
                    .clone(),
            )
        });
        match earlier {
            // `{"$ref":"…"}` is 11 bytes and the pointer; a pointer's digits, dots and slashes
            // cost about twice the tokens per byte of JSON text, so the value must be at least
            // twice as long.
            Some(at_first) if 2 * (at_first.len() + 11) < node.size as usize => {
                self.found.insert(at, at_first);
            }
            Some(_) => self.children(at),
            None => {
                let alike = self.first.entry(key).or_default();
                if alike.len() < MAX_ALIKE {
                    alike.push((at, None));
                }
                self.children(at);
            }
        }
    }

    fn children(&mut self, at: usize) {
        if !self.tape.nodes[at].is_container() {
            return;
        }
        for child in self.tape.children(at) {
            if numbered(self.tape, child, self.min_bytes) {
                self.visit(child);
            }
        }
    }
}

/// The JSON Pointer of node `target`, found by going down from the root.
fn pointer_of(tape: &Tape<'_>, target: usize) -> String {
    let mut path = Vec::new();
    let mut at = 0;
    while at != target {
        let object = tape.nodes[at].kind == Kind::Object;
        let Some((index, child)) = tape
            .children(at)
            .enumerate()
            .find(|&(_, child)| child + tape.nodes[child].skip as usize > target)
        else {
            break;
        };
        path.push(if object {
            Step::Name(tape.name(child).decoded())
        } else {
            Step::Index(index)
        });
        at = child;
    }
    pointer(&path)
}
