//! Which values of a document repeat an earlier one, and the pointer each is referred to by.

use super::tape::{Kind, Tape};
use super::{HashMap, MAX_ALIKE, Step, pointer};

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
            alike: Vec::new(),
            pointers: HashMap::default(),
            found: HashMap::default(),
        };
        finder.children(0);
        Refs {
            found: finder.found,
        }
    }
}

/// No earlier first occurrence of the same digest ([`Alike::earlier`]).
const NONE: u32 = u32::MAX;

/// A first occurrence of a value: its node, and the first occurrence of another value with
/// the same digest found before it.
#[derive(Clone, Copy)]
struct Alike {
    node: u32,
    earlier: u32,
}

struct Finder<'t, 'a> {
    tape: &'t Tape<'a>,
    min_bytes: usize,
    /// For each digest (hash and size) of a value of at least `min_bytes`: the last first
    /// occurrence of that digest (in [`Finder::alike`]) and how many there are (at most
    /// [`MAX_ALIKE`]).
    first: HashMap<u64, (u32, u32)>,
    /// The first occurrences, each linked to the one of the same digest before it: one list
    /// for the document, not one per digest.
    alike: Vec<Alike>,
    /// The pointers of the first occurrences referred to, by node.
    pointers: HashMap<usize, String>,
    found: HashMap<usize, String>,
}

impl Finder<'_, '_> {
    /// The first occurrence of the value at `at`, when an earlier value is equal to it.
    fn earlier(&self, at: usize, key: u64) -> Option<usize> {
        let &(mut link, _) = self.first.get(&key)?;
        while let Some(seen) = self.alike.get(link as usize) {
            if self.tape.same(seen.node as usize, at) {
                return Some(seen.node as usize);
            }
            link = seen.earlier;
        }
        None
    }

    fn visit(&mut self, at: usize) {
        let node = self.tape.nodes[at];
        if (node.size as usize) < self.min_bytes {
            // Nothing inside is big enough either.
            return;
        }
        let key = u64::from(node.hash) << 32 | u64::from(node.size);
        let tape = self.tape;
        let earlier = self.earlier(at, key).map(|first| {
            self.pointers
                .entry(first)
                .or_insert_with(|| pointer_of(tape, first))
                .clone()
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
                let next = self.alike.len() as u32;
                let head = self.first.entry(key).or_insert((NONE, 0));
                if (head.1 as usize) < MAX_ALIKE {
                    self.alike.push(Alike {
                        node: at as u32,
                        earlier: head.0,
                    });
                    *head = (next, head.1 + 1);
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
