//! `cargo xtask modules`: the graph of references between the host library's top-level modules,
//! and the cycle in it if there is one.
//!
//! A top-level module is a file `host/src/<name>.rs` or a folder `host/src/<name>/` (all its
//! files count as that module); `lib.rs` is the crate root, not a module. A module depends on
//! another when its code names it through a `crate::` path: `use crate::other::…`,
//! `use crate::{other, …}`, or an inline path such as `crate::other::Item`. That is all it
//! reads — it is a text scan, not a Rust parser: comments (doc comments included, so intra-doc
//! links do not count) are skipped, string literals are not, `super::` paths stay inside their
//! module, and a name reached only through a re-export at the crate root (`crate::Host`) is not
//! an edge. It is meant to keep the host's modules layered, and says so when they are not:
//! the graph is printed, and a cycle fails the command, naming its modules in order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Each top-level module and the modules it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Prints the graph of `host/src`; on a cycle, names it on stderr and exits with status 1.
pub fn run(root: &Path) -> Result<()> {
    let src = root.join("host").join("src");
    let graph = graph_of(&src)?;
    if graph.is_empty() {
        bail!("{}: no modules found", src.display());
    }
    print!("{}", render(&graph));
    match find_cycle(&graph) {
        Some(cycle) => {
            eprintln!("error: module cycle: {}", cycle.join(" -> "));
            std::process::exit(1);
        }
        None => {
            println!("no cycle among {} modules", graph.len());
            Ok(())
        }
    }
}

/// Reads every top-level module under `src` and the `crate::` paths in its code.
fn graph_of(src: &Path) -> Result<Graph> {
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(src).with_context(|| format!("listing {}", src.display()))? {
        let path = entry?.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            let text = sources.entry(stem).or_default();
            for file in rust_files(&path)? {
                text.push_str(
                    &std::fs::read_to_string(&file).with_context(|| file.display().to_string())?,
                );
                text.push('\n');
            }
        } else if path.extension().is_some_and(|e| e == "rs") && stem != "lib" && stem != "main" {
            let text =
                std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
            sources.entry(stem).or_default().push_str(&text);
        }
    }
    let names: BTreeSet<String> = sources.keys().cloned().collect();
    Ok(sources
        .iter()
        .map(|(module, text)| {
            let uses = references(text)
                .into_iter()
                .filter(|name| names.contains(name) && name != module)
                .collect();
            (module.clone(), uses)
        })
        .collect())
}

/// Every `.rs` file under `dir`, in name order.
fn rust_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    let mut listing: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    listing.sort_by_key(|entry| entry.path());
    for entry in listing {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(files)
}

/// The first segment of every `crate::` path in `text`, comments skipped.
fn references(text: &str) -> BTreeSet<String> {
    let code = without_comments(text);
    let mut names = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        // `crate::` must start a path, not end an identifier (`my_crate::`).
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = rest.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            names.extend(group_heads(group));
        } else if let Some(name) = identifier(after) {
            names.insert(name.to_owned());
        }
    }
    names
}

/// The first identifier of each item of a `{a, b::c, d::{e, f}}` group (the text after `{`).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && !c.is_whitespace() => {
                item_start = false;
                if let Some(name) = identifier(&group[i..]) {
                    heads.push(name.to_owned());
                }
            }
            _ => {}
        }
    }
    heads
}

fn identifier(text: &str) -> Option<&str> {
    let end = text
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
        .map_or(text.len(), |(i, _)| i);
    (end > 0).then(|| &text[..end])
}

/// The text with `//` line comments and `/* */` block comments blanked out. String literals are
/// not recognized: a `//` inside one cuts the rest of its line, which only hides paths.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut block = 0usize;
    while let Some(c) = chars.next() {
        if block > 0 {
            match (c, chars.peek()) {
                ('*', Some('/')) => {
                    chars.next();
                    block -= 1;
                }
                ('/', Some('*')) => {
                    chars.next();
                    block += 1;
                }
                ('\n', _) => out.push('\n'),
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                block = 1;
            }
            _ => out.push(c),
        }
    }
    out
}

/// One line per module: `name -> a, b, c`.
fn render(graph: &Graph) -> String {
    let width = graph.keys().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for (module, uses) in graph {
        let uses: Vec<&str> = uses.iter().map(String::as_str).collect();
        let uses = if uses.is_empty() {
            "-".to_owned()
        } else {
            uses.join(", ")
        };
        out.push_str(&format!("{module:<width$} -> {uses}\n"));
    }
    out
}

/// A cycle of the graph, as the modules along it with the first repeated at the end, or `None`.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit<'g>(
        graph: &'g Graph,
        node: &'g str,
        marks: &mut BTreeMap<&'g str, Mark>,
        path: &mut Vec<&'g str>,
    ) -> Option<Vec<String>> {
        marks.insert(node, Mark::Open);
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next.as_str()) {
                Some(Mark::Open) => {
                    let from = path.iter().position(|n| *n == next)?;
                    let mut cycle: Vec<String> =
                        path[from..].iter().map(|n| (*n).to_owned()).collect();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(graph, next, marks, path) {
                        return Some(cycle);
                    }
                }
            }
        }
        path.pop();
        marks.insert(node, Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if !marks.contains_key(node.as_str()) {
            let mut path = Vec::new();
            if let Some(cycle) = visit(graph, node, &mut marks, &mut path) {
                return Some(cycle);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> Graph {
        edges
            .iter()
            .map(|(from, to)| {
                (
                    (*from).to_owned(),
                    to.iter().map(|t| (*t).to_owned()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn use_lines_groups_and_inline_paths_are_read() {
        let text = "use crate::error::Error;\n\
                    use crate::{budget::Router, call::{Call, Meta}, tee};\n\
                    fn f() { crate::json_check::check(x); my_crate::not_this(); }\n";
        let names: Vec<String> = references(text).into_iter().collect();
        assert_eq!(names, ["budget", "call", "error", "json_check", "tee"]);
    }

    #[test]
    fn comments_are_not_references() {
        let text = "/// See [`crate::host::Host`].\n// crate::old::thing\n/* crate::a::b */ use crate::x::Y;\n";
        let names: Vec<String> = references(text).into_iter().collect();
        assert_eq!(names, ["x"]);
    }

    #[test]
    fn a_cycle_is_named_in_order() {
        let g = graph(&[
            ("observe", &["pipeline"]),
            ("pipeline", &["report"]),
            ("report", &["observe"]),
            ("tee", &[]),
        ]);
        assert_eq!(
            find_cycle(&g).unwrap(),
            ["observe", "pipeline", "report", "observe"]
        );
    }

    #[test]
    fn a_layered_graph_has_no_cycle() {
        let g = graph(&[
            ("call", &[]),
            ("observe", &["call"]),
            ("pipeline", &["call", "observe"]),
            ("report", &["observe"]),
        ]);
        assert_eq!(find_cycle(&g), None);
        assert_eq!(
            render(&g),
            "call     -> -\nobserve  -> call\npipeline -> call, observe\nreport   -> observe\n"
        );
    }
}
