//! The inverse: the tree read back into the lines it stands for.

use parrot_codec_api::CodecError;

/// The error for line `number` (1-based) of a payload.
fn invalid(number: usize, what: impl std::fmt::Display) -> CodecError {
    CodecError::invalid_input(format!("paths line {number}: {what}"))
}

/// One line of the tree: its 1-based number, its indent in spaces and what follows.
#[derive(Clone, Copy)]
struct Row<'p> {
    number: usize,
    indent: usize,
    text: &'p str,
}

/// The rows of a payload (without its final line break), each checked for what any row of
/// the tree holds: an even indent and something after it.
struct Rows<'p> {
    rest: Option<&'p str>,
    number: usize,
}

impl<'p> Rows<'p> {
    fn new(body: &'p str) -> Rows<'p> {
        Rows {
            rest: Some(body),
            number: 0,
        }
    }

    fn next(&mut self) -> Result<Option<Row<'p>>, CodecError> {
        let Some(rest) = self.rest else {
            return Ok(None);
        };
        let (line, after) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(at) => (&rest[..at], Some(&rest[at + 1..])),
            None => (rest, None),
        };
        self.rest = after;
        self.number += 1;
        let text = line.trim_start_matches(' ');
        let indent = line.len() - text.len();
        if text.is_empty() {
            return Err(invalid(self.number, "an empty line"));
        }
        if indent % 2 == 1 {
            return Err(invalid(
                self.number,
                format!("an odd indent of {indent} spaces"),
            ));
        }
        Ok(Some(Row {
            number: self.number,
            indent,
            text,
        }))
    }
}

/// The entries of a row: separated by one space, quoted (`'a b'`) when they hold a space.
struct Entries<'p> {
    rest: &'p str,
    number: usize,
}

impl<'p> Entries<'p> {
    fn of(row: Row<'p>) -> Entries<'p> {
        Entries {
            rest: row.text,
            number: row.number,
        }
    }

    fn split(&mut self) -> Result<&'p str, CodecError> {
        let rest = self.rest;
        let (entry, after) = if let Some(quoted) = rest.strip_prefix('\'') {
            let close = memchr::memchr(b'\'', quoted.as_bytes())
                .ok_or_else(|| invalid(self.number, "a quote that does not close"))?;
            let entry = &quoted[..close];
            if !entry.contains(' ') {
                return Err(invalid(
                    self.number,
                    format!("a quoted entry without a space ('{entry}')"),
                ));
            }
            let after = &quoted[close + 1..];
            if !after.is_empty() && !after.starts_with(' ') {
                return Err(invalid(self.number, "text right after a closing quote"));
            }
            (entry, after)
        } else {
            let end = memchr::memchr(b' ', rest.as_bytes()).unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        self.rest = match after.strip_prefix(' ') {
            Some("") => return Err(invalid(self.number, "a space at the end of the line")),
            Some(next) if next.starts_with(' ') => {
                return Err(invalid(self.number, "two spaces between entries"));
            }
            Some(next) => next,
            None => "",
        };
        Ok(entry)
    }
}

impl<'p> Iterator for Entries<'p> {
    type Item = Result<&'p str, CodecError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let entry = self.split();
        if entry.is_err() {
            // Nothing after a malformed entry is read: the row is refused.
            self.rest = "";
        }
        Some(entry)
    }
}

/// How many entries a line of the tree holds, after its indent (`text`); `None` when they do
/// not read as this codec writes them.
pub(super) fn entry_count(text: &str) -> Option<usize> {
    let entries = Entries {
        rest: text,
        number: 0,
    };
    let mut count = 0;
    for entry in entries {
        entry.ok()?;
        count += 1;
    }
    Some(count)
}

/// The one entry of a directory line (a line with lines indented under it).
fn sole_entry(row: Row<'_>) -> Result<&str, CodecError> {
    let mut entries = Entries::of(row);
    let entry = entries.split()?;
    let mut more = 0;
    for other in entries {
        other?;
        more += 1;
    }
    if more > 0 {
        return Err(invalid(
            row.number,
            format!(
                "{} entries on a line with lines indented under it (a directory line holds one)",
                more + 1
            ),
        ));
    }
    Ok(entry)
}

/// Checks that `row` may follow a row at `above` (its indent, `None` for the first row):
/// at most one level deeper.
fn check_indent(row: Row<'_>, above: Option<usize>) -> Result<(), CodecError> {
    match above {
        None if row.indent > 0 => Err(invalid(
            row.number,
            format!("an indent of {} spaces on the first line", row.indent),
        )),
        Some(above) if row.indent > above + 2 => Err(invalid(
            row.number,
            format!(
                "an indent of {} spaces under a parent at {above}",
                row.indent
            ),
        )),
        _ => Ok(()),
    }
}

/// The lines a payload stands for, with its final line break when it has one.
///
/// # Errors
///
/// `InvalidInput`, naming the line and what is wrong, when `payload` is not a tree this
/// codec writes.
pub(super) fn expand(payload: &str) -> Result<String, CodecError> {
    if payload.is_empty() {
        return Err(CodecError::invalid_input("paths: an empty payload"));
    }
    let (body, newline) = match payload.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (payload, false),
    };
    if let Some(at) = memchr::memchr2(b'\r', b'\t', body.as_bytes()) {
        let number = 1 + memchr::memchr_iter(b'\n', &body.as_bytes()[..at]).count();
        let what = if body.as_bytes()[at] == b'\r' {
            "a carriage return"
        } else {
            "a tab"
        };
        return Err(invalid(number, what));
    }
    let first = &body[..memchr::memchr(b'\n', body.as_bytes()).unwrap_or(body.len())];
    let mut out = String::with_capacity(body.len() * 3);
    if first.ends_with(':') && !first.starts_with(' ') {
        recursive(body, &mut out)?;
    } else {
        list(body, &mut out)?;
    }
    if !newline {
        out.pop();
    }
    Ok(out)
}

/// A listing's tree: every entry a line, after the directories above it.
fn list(body: &str, out: &mut String) -> Result<(), CodecError> {
    let mut rows = Rows::new(body);
    let mut prefix = String::new();
    // The length of `prefix` inside each directory line above the current row.
    let mut levels: Vec<usize> = Vec::new();
    let mut above = None;
    let mut current = rows.next()?;
    while let Some(row) = current {
        let next = rows.next()?;
        check_indent(row, above)?;
        levels.truncate(row.indent / 2);
        prefix.truncate(levels.last().copied().unwrap_or(0));
        if next.is_some_and(|next| next.indent > row.indent) {
            let entry = sole_entry(row)?;
            if !entry.ends_with('/') {
                push_line(out, &prefix, entry);
            }
            prefix.push_str(entry);
            if !entry.ends_with('/') {
                prefix.push('/');
            }
            levels.push(prefix.len());
        } else {
            for entry in Entries::of(row) {
                push_line(out, &prefix, entry?);
            }
        }
        above = Some(row.indent);
        current = next;
    }
    Ok(())
}

fn push_line(out: &mut String, prefix: &str, entry: &str) {
    out.push_str(prefix);
    out.push_str(entry);
    out.push('\n');
}

/// An entry of an `ls -R` tree.
struct Node<'p> {
    depth: usize,
    name: &'p str,
    /// A directory: its entries are the nodes after it, one level deeper (none for an empty
    /// one).
    directory: bool,
}

/// An `ls -R` tree, printed back as `ls -R` prints it: the root's section, then each
/// directory's, depth first, in the order of their entries.
fn recursive(body: &str, out: &mut String) -> Result<(), CodecError> {
    let mut rows = Rows::new(body);
    let root = rows.next()?.ok_or_else(|| invalid(1, "an empty line"))?;
    let directory = &root.text[..root.text.len() - 1];
    if directory.is_empty() || directory.contains([' ', '\'']) {
        return Err(invalid(
            1,
            format!("an ls -R root that is empty or holds a space or a quote (\"{directory}\")"),
        ));
    }
    let nodes = nodes(&mut rows, root)?;
    // Where each node's entries end: the next node at its depth or above.
    let mut ends = vec![nodes.len(); nodes.len()];
    let mut open: Vec<usize> = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        while open.last().is_some_and(|&o| nodes[o].depth >= node.depth) {
            ends[open.pop().unwrap_or_default()] = k;
        }
        open.push(k);
    }
    let entries = |from: usize, to: usize, out: &mut String| {
        let mut k = from;
        while k < to {
            out.push_str(nodes[k].name);
            out.push('\n');
            k = ends[k];
        }
    };
    let mut path = String::from(directory);
    push_line(out, &path, ":");
    entries(0, nodes.len(), out);
    // The directories whose subdirectories are being printed: the next entry to look at,
    // where their entries end, and the length of their path.
    let mut stack = vec![(0, nodes.len(), path.len())];
    while let Some((at, end, len)) = stack.last_mut() {
        let mut k = *at;
        while k < *end && !nodes[k].directory {
            k = ends[k];
        }
        if k >= *end {
            stack.pop();
            continue;
        }
        *at = ends[k];
        path.truncate(*len);
        path.push('/');
        path.push_str(nodes[k].name);
        out.push('\n');
        push_line(out, &path, ":");
        entries(k + 1, ends[k], out);
        stack.push((k + 1, ends[k], path.len()));
    }
    Ok(())
}

/// The entries of an `ls -R` tree under its `root` line, in order.
fn nodes<'p>(rows: &mut Rows<'p>, root: Row<'p>) -> Result<Vec<Node<'p>>, CodecError> {
    let mut nodes = Vec::new();
    let mut above = root.indent;
    let mut current = rows.next()?;
    while let Some(row) = current {
        let next = rows.next()?;
        check_indent(row, Some(above))?;
        if row.indent == 0 {
            return Err(invalid(
                row.number,
                "a second root (an ls -R tree has one line at indent 0)",
            ));
        }
        let depth = row.indent / 2;
        if next.is_some_and(|next| next.indent > row.indent) {
            let name = sole_entry(row)?;
            if name.contains('/') {
                return Err(invalid(row.number, format!("a '/' in the name \"{name}\"")));
            }
            nodes.push(Node {
                depth,
                name,
                directory: true,
            });
        } else {
            for entry in Entries::of(row) {
                let entry = entry?;
                let (name, directory) = match entry.strip_suffix('/') {
                    Some(name) => (name, true),
                    None => (entry, false),
                };
                if name.is_empty() || name.contains('/') {
                    return Err(invalid(
                        row.number,
                        format!("a '/' in the name \"{entry}\""),
                    ));
                }
                nodes.push(Node {
                    depth,
                    name,
                    directory,
                });
            }
        }
        above = row.indent;
        current = next;
    }
    Ok(nodes)
}
