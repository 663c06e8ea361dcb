//! `cargo xtask modules`: the graph of references between the modules of every workspace crate,
//! and the cycle in it if there is one.
//!
//! Each target (a package's `src/lib.rs`, `src/main.rs`) is read as Cargo compiles it (see
//! [`crate::source`]), and every module is a node: `log`, `log::fold`, `log::patterns`. An edge
//! joins two modules with the same parent (siblings) when code in one, or in a module below
//! it, names the other or an item in it: `use super::patterns::Pattern`,
//! `crate::log::patterns::TABLE`, `fold::fold` from their parent's child, and the same paths
//! inside macro calls. A module naming its own parent or child is not an edge (a parent holds
//! its children; `use super::*` is how a child reads its parent), and a name reached only
//! through a re-export (`crate::Host`, `super::Pattern` where the parent re-exports it) is not
//! either. Test code does not count (`#[cfg(test)]` modules and items, `#[test]` functions):
//! a test may use any module of its crate, as a user of the crate does.
//!
//! The graph is printed crate by crate, and a cycle fails the command, naming its crate and
//! modules in order, so each folder's files stay layered: one can be read without the other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Result, bail};
use syn::visit::Visit;

use crate::source::{self, Module};

/// Each module and the sibling modules it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Prints the graph of every workspace crate; on a cycle, names it on stderr and exits with
/// status 1.
pub fn run(root: &Path) -> Result<()> {
    let mut cycles = Vec::new();
    let mut count = 0;
    for package in source::packages(root)? {
        for target in &package.roots {
            let modules = source::modules(target)?;
            let graph = graph_of(&modules);
            let file = target.strip_prefix(root).unwrap_or(target).display();
            println!("{} ({file})", package.name);
            print!("{}", render(&graph));
            count += graph.len();
            if let Some(cycle) = find_cycle(&graph) {
                cycles.push(format!("{} ({file}): {}", package.name, cycle.join(" -> ")));
            }
        }
    }
    if count == 0 {
        bail!("{}: no modules found", root.display());
    }
    if cycles.is_empty() {
        println!("no cycle among {count} modules");
        return Ok(());
    }
    for cycle in &cycles {
        eprintln!("error: module cycle in {cycle}");
    }
    std::process::exit(1);
}

/// The sibling edges among `modules` (every module is a node, the root aside).
fn graph_of(modules: &[Module]) -> Graph {
    let known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
    let mut graph = Graph::new();
    for module in modules.iter().filter(|m| !m.path.is_empty() && !m.test) {
        graph.entry(module.name()).or_default();
    }
    for module in modules.iter().filter(|m| !m.test) {
        let mut paths = Paths::default();
        for item in module
            .items
            .iter()
            .filter(|item| !source::is_test(attrs(item)))
        {
            paths.visit_item(item);
        }
        for path in paths.0 {
            let Some(target) = resolve(&module.path, &path, &known) else {
                continue;
            };
            if let Some((from, to)) = sibling_edge(&module.path, &target) {
                graph
                    .entry(from.join("::"))
                    .or_default()
                    .insert(to.join("::"));
            }
        }
    }
    graph
}

/// The module `path` names when written in module `at`: the longest known module its
/// segments lead to, or `None` when it names nothing of this crate.
fn resolve(at: &[String], path: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let (mut full, rest): (Vec<String>, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (at.to_vec(), &path[1..]),
        "super" => {
            let mut base = at.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            (base, rest)
        }
        first => {
            let mut child = at.to_vec();
            child.push(first.to_owned());
            if !known.contains(&child) {
                return None;
            }
            (at.to_vec(), path)
        }
    };
    let mut found = full.clone();
    for segment in rest {
        full.push(segment.clone());
        if !known.contains(&full) {
            break;
        }
        found = full.clone();
    }
    Some(found)
}

/// The edge between the children of the closest module holding both `from` and `to`, or `None`
/// when one holds the other.
fn sibling_edge(from: &[String], to: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common == from.len() || common == to.len() {
        return None;
    }
    Some((from[..=common].to_vec(), to[..=common].to_vec()))
}

/// The attributes of `item` (none for the kinds that cannot be test code alone).
fn attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(item) => &item.attrs,
        syn::Item::Enum(item) => &item.attrs,
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        syn::Item::Macro(item) => &item.attrs,
        syn::Item::Mod(item) => &item.attrs,
        syn::Item::Static(item) => &item.attrs,
        syn::Item::Struct(item) => &item.attrs,
        syn::Item::Trait(item) => &item.attrs,
        syn::Item::Type(item) => &item.attrs,
        syn::Item::Use(item) => &item.attrs,
        _ => &[],
    }
}

/// Every path a module's code writes: in expressions, types and patterns, in `use` trees, and
/// in the tokens of macro calls (`a::b` runs). Child modules are not entered.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !source::is_test(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.0
            .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        use_paths(&item.tree, &mut Vec::new(), &mut self.0);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        macro_paths(mac.tokens.clone(), &mut self.0);
    }
}

/// The paths of a `use` tree, each with the prefix above it.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_paths(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) => {
            let mut path = prefix.clone();
            path.push(name.ident.to_string());
            out.push(path);
        }
        syn::UseTree::Rename(rename) => {
            let mut path = prefix.clone();
            path.push(rename.ident.to_string());
            out.push(path);
        }
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_paths(tree, prefix, out);
            }
        }
    }
}

/// The `a::b::c` runs among macro tokens (groups entered), each as a path.
fn macro_paths(tokens: proc_macro2::TokenStream, out: &mut Vec<Vec<String>>) {
    use proc_macro2::{Spacing, TokenTree};
    let mut run: Vec<String> = Vec::new();
    // After an identifier, how many `:` of a `::` have been seen.
    let mut colons = 0;
    let flush = |run: &mut Vec<String>, out: &mut Vec<Vec<String>>| {
        if run.len() > 1 {
            out.push(std::mem::take(run));
        }
        run.clear();
    };
    for token in tokens {
        match token {
            TokenTree::Ident(ident) if run.is_empty() || colons == 2 => {
                run.push(ident.to_string());
                colons = 0;
            }
            TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() => {
                let joint_first = colons == 0 && p.spacing() == Spacing::Joint;
                if joint_first || colons == 1 {
                    colons += 1;
                } else {
                    flush(&mut run, out);
                    colons = 0;
                }
            }
            TokenTree::Group(group) => {
                flush(&mut run, out);
                colons = 0;
                macro_paths(group.stream(), out);
            }
            TokenTree::Ident(ident) => {
                flush(&mut run, out);
                run.push(ident.to_string());
                colons = 0;
            }
            _ => {
                flush(&mut run, out);
                colons = 0;
            }
        }
    }
    flush(&mut run, out);
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
        out.push_str(&format!("  {module:<width$} -> {uses}\n"));
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

    fn path(text: &str) -> Vec<String> {
        if text.is_empty() {
            return Vec::new();
        }
        text.split("::").map(str::to_owned).collect()
    }

    /// The sibling edges of one module's source, in a crate of the modules `known`.
    fn edges(at: &str, source: &str, known: &[&str]) -> Vec<(String, String)> {
        let known: BTreeSet<Vec<String>> = known.iter().map(|k| path(k)).collect();
        let file = syn::parse_file(source).unwrap();
        let mut paths = Paths::default();
        for item in file
            .items
            .iter()
            .filter(|item| !source::is_test(attrs(item)))
        {
            paths.visit_item(item);
        }
        let mut out = BTreeSet::new();
        for p in paths.0 {
            if let Some(target) = resolve(&path(at), &p, &known)
                && let Some((from, to)) = sibling_edge(&path(at), &target)
            {
                out.insert((from.join("::"), to.join("::")));
            }
        }
        out.into_iter().collect()
    }

    const KNOWN: &[&str] = &["", "error", "log", "log::fold", "log::patterns", "toon"];

    #[test]
    fn use_lines_groups_inline_paths_and_macros_are_read() {
        let source = "use crate::error::Error;\n\
                      use crate::{toon::Toon, log::{Log, Stage}};\n\
                      fn f() { crate::error::check(x); my_crate::log::not_this(); \
                      assert!(super::patterns::TABLE.is_empty()); }\n\
                      mod tests { use crate::toon::Other; }\n";
        assert_eq!(
            edges("log::fold", source, KNOWN),
            [
                ("log".to_owned(), "error".to_owned()),
                ("log".to_owned(), "toon".to_owned()),
                ("log::fold".to_owned(), "log::patterns".to_owned()),
            ]
        );
    }

    #[test]
    fn test_code_is_not_an_edge() {
        let source = "#[cfg(test)]\nuse crate::toon::Toon;\n\
                      #[test]\nfn t() { crate::error::check(); }\n\
                      fn f() { super::patterns::TABLE; }\n";
        assert_eq!(
            edges("log::fold", source, KNOWN),
            [("log::fold".to_owned(), "log::patterns".to_owned())]
        );
    }

    #[test]
    fn parents_children_comments_and_reexports_are_not_edges() {
        let source = "//! See [`crate::toon::Toon`].\n\
                      // crate::error::old\n\
                      use super::*;\n\
                      use super::Stage;\n\
                      use crate::log::Log;\n\
                      fn g() { let _ = crate::Host; }\n";
        assert_eq!(edges("log::fold", source, KNOWN), []);
        let parent = "mod fold;\nmod patterns;\npub use fold::fold;\npub use patterns::TABLE;\n";
        assert_eq!(edges("log", parent, KNOWN), []);
    }

    #[test]
    fn a_child_named_from_its_parent_ties_its_siblings() {
        let source = "fn h() { fold::fold(); patterns::TABLE; }\n";
        assert_eq!(edges("log", source, KNOWN), []);
        assert_eq!(
            edges("log::patterns", "use super::fold;\n", KNOWN),
            [("log::patterns".to_owned(), "log::fold".to_owned())]
        );
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
            "  call     -> -\n  observe  -> call\n  pipeline -> call, observe\n  report   -> observe\n"
        );
    }
}
