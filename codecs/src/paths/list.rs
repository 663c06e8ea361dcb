//! A listing of paths, one a line (`find`, `git ls-files`, globs), as a tree.

use super::tree::Tree;

/// The longest a line may be: no path is longer (Linux's `PATH_MAX`).
pub(super) const MAX_LINE: usize = 4096;

/// The shortest entry that is a directory line over a single line inside it: a shorter one
/// costs fewer tokens written twice side by side (`benches benches/parse.rs`) than as a line
/// of its own with its one entry under it.
const SINGLE_PARENT: usize = 12;

/// A line of the listing: where it lies in the text, how many bytes it shares with the line
/// before it, and whether it holds a space. Twelve bytes: a listing has many lines.
struct Line {
    start: u32,
    end: u32,
    shared: u16,
    spaced: bool,
}

impl Line {
    fn start(&self) -> usize {
        self.start as usize
    }

    fn end(&self) -> usize {
        self.end as usize
    }

    fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    fn shared(&self) -> usize {
        usize::from(self.shared)
    }
}

/// A directory whose lines are being written: the length of the prefix its entries are
/// relative to, and its first line.
///
/// Its lines are the run of lines from `first` that start with the prefix and go on after it;
/// since each line after the first shares the prefix with the line before it, whether a line
/// is still inside is one comparison of [`Line::shared`], and no run is measured twice.
struct Group {
    prefix: usize,
    first: usize,
}

impl Group {
    /// Whether line `i` is inside the group, the line before it being inside too (or being
    /// the group's directory line, when `i` is its first).
    fn holds(&self, line: &Line, i: usize) -> bool {
        i == self.first || (line.shared() >= self.prefix && line.len() > self.prefix)
    }
}

/// What one line starts.
enum Step {
    /// A directory line that only names the directory: the line's first `upto` bytes.
    Header { upto: usize },
    /// The line itself, with the lines after it inside it.
    Directory,
    /// The line alone.
    Leaf,
}

/// The tree of `text` (without its final line break), or `None` when it cannot be written
/// exactly or nothing in it shares a directory.
pub(super) fn encode(text: &str) -> Option<String> {
    let lines = read(text)?;
    let bytes = text.as_bytes();
    let mut tree = Tree::for_text(text);
    let mut groups: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        while groups.last().is_some_and(|group| !group.holds(line, i)) {
            groups.pop();
        }
        let prefix = groups.last().map_or(0, |group| group.prefix);
        let depth = groups.len();
        let rel = &text[line.start() + prefix..line.end()];
        match step(bytes, &lines, i, prefix) {
            Step::Header { upto } => {
                tree.directory(depth, &rel[..upto - prefix], line.spaced)?;
                groups.push(Group {
                    prefix: upto,
                    first: i,
                });
            }
            Step::Directory => {
                tree.directory(depth, rel, line.spaced)?;
                groups.push(Group {
                    prefix: line.len() + 1,
                    first: i + 1,
                });
                i += 1;
            }
            Step::Leaf => {
                tree.leaf(depth, rel, "", line.spaced)?;
                i += 1;
            }
        }
    }
    if tree.directories == 0 {
        return None;
    }
    let out = tree.finish();
    // A first line ending in `:` is how the inverse tells an `ls -R` tree.
    let first = &out[..memchr::memchr(b'\n', out.as_bytes()).unwrap_or(out.len())];
    (!first.ends_with(':')).then_some(out)
}

/// The lines of `text`, or `None` when one is empty or longer than any path, the text holds a
/// tab or a carriage return, or it is 4 GiB or more.
fn read(text: &str) -> Option<Vec<Line>> {
    let bytes = text.as_bytes();
    u32::try_from(bytes.len()).ok()?;
    let mut lines = Vec::with_capacity(bytes.len() / 40 + 1);
    let mut start = 0;
    let mut previous: &[u8] = &[];
    // Spaces, tabs and carriage returns are rare in listings: found in one pass over the whole
    // text, not looked for line by line.
    let mut rare = memchr::memchr3_iter(b' ', b'\t', b'\r', bytes).peekable();
    for end in memchr::memchr_iter(b'\n', bytes).chain([bytes.len()]) {
        let line = &bytes[start..end];
        if line.is_empty() || line.len() > MAX_LINE {
            return None;
        }
        let shared = common_prefix(previous, line);
        let mut spaced = false;
        while let Some(at) = rare.next_if(|&at| at < end) {
            if bytes[at] != b' ' {
                return None;
            }
            spaced = true;
        }
        // In range: the text is under 4 GiB, a line at most `MAX_LINE` bytes.
        lines.push(Line {
            start: start as u32,
            end: end as u32,
            shared: shared as u16,
            spaced,
        });
        previous = line;
        start = end + 1;
    }
    Some(lines)
}

/// How many leading bytes `a` and `b` share, compared sixteen at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut at = 0;
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        let (Ok(x), Ok(y)) = (<[u8; 16]>::try_from(x), <[u8; 16]>::try_from(y)) else {
            break;
        };
        let diff = u128::from_le_bytes(x) ^ u128::from_le_bytes(y);
        if diff != 0 {
            return at + diff.trailing_zeros() as usize / 8;
        }
        at += 16;
    }
    at + a[at..]
        .iter()
        .zip(&b[at..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// What line `i` starts, inside a group whose entries are relative to the lines' first
/// `prefix` bytes.
///
/// A run of two or more lines that share a directory beyond the prefix gets a header naming
/// the longest directory they all share; a line that lines after it are inside (`./src`, then
/// `./src/a.rs`) becomes their directory line instead, when those lines are the whole run.
/// Without such a run, a line with lines inside it is their directory line when they are two
/// or more, or its entry is [`SINGLE_PARENT`] bytes or longer.
fn step(bytes: &[u8], lines: &[Line], i: usize, prefix: usize) -> Step {
    let line = &bytes[lines[i].start()..lines[i].end()];
    // A run needs the next line to share a directory beyond the prefix: only the bytes the two
    // lines share can hold its `/`, and the scan for it stops there.
    let next_shares = lines.get(i + 1).map_or(0, Line::shared);
    let header = line[prefix..next_shares.max(prefix)]
        .iter()
        .position(|&b| b == b'/')
        .map(|slash| prefix + slash + 1)
        .filter(|&shared| shared < line.len())
        .and_then(|shared| header(bytes, lines, i, shared));
    let has_inside = lines.get(i + 1).is_some_and(|next| {
        next.shared() == line.len()
            && next.len() > line.len() + 1
            && bytes[next.start() + line.len()] == b'/'
            && line.last() != Some(&b'/')
    });
    match header {
        Some((_, run_end)) if has_inside && inside_end(lines, i, run_end) == run_end => {
            Step::Directory
        }
        Some((upto, _)) => Step::Header { upto },
        None if has_inside => {
            let second = lines
                .get(i + 2)
                .is_some_and(|after| after.shared() > line.len() && after.len() > line.len() + 1);
            if second || line.len() - prefix >= SINGLE_PARENT {
                Step::Directory
            } else {
                Step::Leaf
            }
        }
        None => Step::Leaf,
    }
}

/// The header over the lines from `i` that share its first `shared` bytes (which end with a
/// `/`) and go on after them: the longest prefix ending in `/` that they all share and all go
/// on after, and the end of the run. `None` for a run of one line.
fn header(bytes: &[u8], lines: &[Line], i: usize, shared: usize) -> Option<(usize, usize)> {
    let mut common = usize::MAX;
    let mut shortest = lines[i].len();
    let mut j = i + 1;
    while j < lines.len() && lines[j].shared() >= shared && lines[j].len() > shared {
        common = common.min(lines[j].shared());
        shortest = shortest.min(lines[j].len());
        j += 1;
    }
    if j - i < 2 {
        return None;
    }
    let line = &bytes[lines[i].start()..lines[i].end()];
    let limit = common.min(shortest - 1);
    // `shared - 1` is a `/` below the limit, so the search finds one.
    let slash = memchr::memrchr(b'/', &line[shared - 1..limit])? + shared - 1;
    Some((slash + 1, j))
}

/// The end of the lines after line `i` (the first of them inside it) that are inside it,
/// looked for up to `end`.
fn inside_end(lines: &[Line], i: usize, end: usize) -> usize {
    let len = lines[i].len();
    let mut j = i + 2;
    while j < end && lines[j].shared() > len && lines[j].len() > len + 1 {
        j += 1;
    }
    j
}
