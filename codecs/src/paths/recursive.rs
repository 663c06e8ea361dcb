//! `ls -R` output as a tree: each directory's entries under its entry in the directory above.

use std::ops::Range;

use super::tree::Tree;

/// One section of `ls -R`: a directory's header (`./src:`, without the colon) and its
/// entries.
struct Section<'t> {
    directory: &'t str,
    entries: Range<usize>,
}

/// The tree of `ls -R` output `text` (without its final line break), or `None` when it is not
/// exactly that: one section per directory, the first one's header on the first line, the
/// sections apart by one blank line, each subdirectory's section where `ls` prints it (after
/// the sections of the subdirectories listed before it), no entry holding a `/`, and at least
/// one subdirectory.
pub(super) fn encode(text: &str) -> Option<String> {
    if memchr::memchr2(b'\t', b'\r', text.as_bytes()).is_some() {
        return None;
    }
    let (sections, entries) = read(text)?;
    let root = sections[0].directory;
    if root.is_empty() || root.contains([' ', '\'']) || sections.len() < 2 {
        return None;
    }
    let mut tree = Tree::for_text(text);
    tree.header(root, ":");
    let mut next = 1;
    // The sections being listed, each with the index of its next entry.
    let mut open = vec![(0, sections[0].entries.start)];
    while let Some(&mut (section, ref mut at)) = open.last_mut() {
        if *at == sections[section].entries.end {
            open.pop();
            continue;
        }
        let name = entries[*at];
        *at += 1;
        let depth = open.len();
        if name.contains('/') {
            return None;
        }
        let subdirectory = sections
            .get(next)
            .filter(|sub| is_inside(sub.directory, sections[section].directory, name));
        match subdirectory {
            Some(sub) if sub.entries.is_empty() => {
                next += 1;
                tree.leaf(depth, name, "/", true)?;
            }
            Some(sub) => {
                let entries_start = sub.entries.start;
                tree.directory(depth, name, true)?;
                open.push((next, entries_start));
                next += 1;
            }
            None => tree.leaf(depth, name, "", true)?,
        }
    }
    if next < sections.len() {
        return None;
    }
    Some(tree.finish())
}

/// Whether `directory` is `parent/name`.
fn is_inside(directory: &str, parent: &str, name: &str) -> bool {
    directory.len() == parent.len() + 1 + name.len()
        && directory.starts_with(parent)
        && directory.as_bytes()[parent.len()] == b'/'
        && directory.ends_with(name)
}

/// The sections of `text` and all their entries, or `None` when it is not sections of
/// `ls -R`: a header line ending in `:` first and after each blank line, no other blank line.
fn read(text: &str) -> Option<(Vec<Section<'_>>, Vec<&str>)> {
    let mut sections: Vec<Section<'_>> = Vec::new();
    let mut entries = Vec::with_capacity(text.len() / 16 + 1);
    let mut header_next = true;
    for line in text.split('\n') {
        if header_next {
            let directory = line.strip_suffix(':')?;
            let at = entries.len();
            sections.push(Section {
                directory,
                entries: at..at,
            });
            header_next = false;
        } else if line.is_empty() {
            header_next = true;
        } else {
            entries.push(line);
            sections.last_mut()?.entries.end = entries.len();
        }
    }
    (!header_next).then_some((sections, entries))
}
