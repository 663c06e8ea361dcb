//! `cargo xtask long-fns`: the functions of production code longer than [`LIMIT`] lines, across
//! the workspace.
//!
//! Production code is what each package's library and binary compile outside tests: the module
//! tree of `src/lib.rs` and `src/main.rs` (see [`crate::source`]) without `#[cfg(test)]`
//! modules and `#[test]` or `#[cfg(test)]` functions; benchmarks, `tests/` and build scripts
//! are not read. A function's length runs from its `fn` line to its closing brace, and a
//! function nested in another counts in both.
//!
//! A function may be longer when it says why: a comment `// long: REASON` on the lines just
//! above it (among its doc comment and attributes) or on the first line of its body. Those are
//! listed apart. The command fails while any other function is over the limit.

use std::path::Path;

use anyhow::{Result, bail};
use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::source;

/// The most lines a function has without a reason.
pub const LIMIT: usize = 80;

/// One function over the limit.
#[derive(Debug, PartialEq)]
struct Long {
    /// `codecs/src/log/fold.rs:42`.
    at: String,
    /// `fold`, or `Relay::rounds` for a method.
    name: String,
    lines: usize,
    /// The text after `// long:`, when there is one.
    reason: Option<String>,
}

/// Lists the functions over the limit, those with a reason apart; fails while any has none.
pub fn run(root: &Path) -> Result<()> {
    let mut found = Vec::new();
    for package in source::packages(root)? {
        for target in &package.roots {
            for module in source::modules(target)? {
                if module.test {
                    continue;
                }
                let text = std::fs::read_to_string(&module.file)?;
                let file = module.file.strip_prefix(root).unwrap_or(&module.file);
                found.extend(long_functions(
                    &file.display().to_string(),
                    &text,
                    &module.items,
                ));
            }
        }
    }
    found.sort_by(|a, b| (a.reason.is_some(), &a.at).cmp(&(b.reason.is_some(), &b.at)));
    found.dedup();
    let unexplained = found.iter().filter(|f| f.reason.is_none()).count();
    for long in &found {
        match &long.reason {
            None => println!("{}: {} is {} lines", long.at, long.name, long.lines),
            Some(reason) => println!(
                "{}: {} is {} lines (long: {reason})",
                long.at, long.name, long.lines
            ),
        }
    }
    if unexplained > 0 {
        bail!(
            "{unexplained} production function(s) over {LIMIT} lines without a `// long:` reason"
        );
    }
    println!("no production function over {LIMIT} lines without a reason");
    Ok(())
}

/// The functions of `items` (in the file `at`, whose text is `text`) over the limit.
fn long_functions(at: &str, text: &str, items: &[syn::Item]) -> Vec<Long> {
    let lines: Vec<&str> = text.lines().collect();
    let mut finder = Finder {
        at,
        lines: &lines,
        owner: None,
        found: Vec::new(),
    };
    for item in items {
        finder.visit_item(item);
    }
    finder.found
}

struct Finder<'a> {
    at: &'a str,
    lines: &'a [&'a str],
    /// The type of the `impl` or trait being read.
    owner: Option<String>,
    found: Vec<Long>,
}

impl Finder<'_> {
    fn check(
        &mut self,
        attrs: &[syn::Attribute],
        sig: &syn::Signature,
        start: proc_macro2::Span,
        block: &syn::Block,
    ) {
        if source::is_test(attrs) {
            return;
        }
        let first = start.start().line;
        let last = block.brace_token.span.close().end().line;
        let length = last + 1 - first;
        if length <= LIMIT {
            return;
        }
        let name = match &self.owner {
            Some(owner) => format!("{owner}::{}", sig.ident),
            None => sig.ident.to_string(),
        };
        self.found.push(Long {
            at: format!("{}:{first}", self.at),
            name,
            lines: length,
            reason: reason(
                self.lines,
                first,
                block.brace_token.span.open().start().line,
            ),
        });
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    // Modules are read one by one; a test module is skipped whole by the caller.
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.check(
            &item.attrs,
            &item.sig,
            start_of(&item.vis, &item.sig),
            &item.block,
        );
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if source::is_test(&item.attrs) {
            return;
        }
        let ty = &item.self_ty;
        let owner = quote_type(ty);
        let before = self.owner.replace(owner);
        syn::visit::visit_item_impl(self, item);
        self.owner = before;
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        let before = self.owner.replace(item.ident.to_string());
        syn::visit::visit_item_trait(self, item);
        self.owner = before;
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.check(
            &item.attrs,
            &item.sig,
            start_of(&item.vis, &item.sig),
            &item.block,
        );
        syn::visit::visit_impl_item_fn(self, item);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.check(&item.attrs, &item.sig, item.sig.span(), block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}

/// Where a function's first line is: its `pub` if it has one, else its signature.
fn start_of(vis: &syn::Visibility, sig: &syn::Signature) -> proc_macro2::Span {
    match vis {
        syn::Visibility::Inherited => sig.span(),
        _ => vis.span(),
    }
}

/// The last segment of a type's path (`Relay` for `Relay<'a>`), or its tokens.
fn quote_type(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => "_".to_owned(),
    }
}

/// The reason of a `// long:` comment among the comment and attribute lines just above line
/// `first` (1-based), or on the lines from `first` to the body's first line (`open`, + 1).
fn reason(lines: &[&str], first: usize, open: usize) -> Option<String> {
    let find = |line: &str| {
        line.find("// long:")
            .map(|at| line[at + "// long:".len()..].trim().to_owned())
    };
    let mut above = first - 1;
    while above > 0 {
        let line = lines.get(above - 1)?.trim_start();
        if !(line.starts_with("//") || line.starts_with("#[")) {
            break;
        }
        if let Some(reason) = find(line) {
            return Some(reason);
        }
        above -= 1;
    }
    (first..=open + 1)
        .filter_map(|n| lines.get(n - 1))
        .find_map(|line| find(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of `body` lines between its braces.
    fn function(name: &str, body: usize) -> String {
        let mut out = format!("fn {name}() {{\n");
        for i in 0..body {
            out.push_str(&format!("    let _x{i} = {i};\n"));
        }
        out.push_str("}\n");
        out
    }

    fn found(text: &str) -> Vec<Long> {
        let file = syn::parse_file(text).unwrap();
        long_functions("a.rs", text, &file.items)
    }

    #[test]
    fn a_function_over_the_limit_is_found_with_its_length_and_line() {
        let text = format!("{}\n{}", function("short", 78), function("long", 79));
        assert_eq!(
            found(&text),
            [Long {
                at: "a.rs:82".to_owned(),
                name: "long".to_owned(),
                lines: 81,
                reason: None,
            }]
        );
    }

    #[test]
    fn a_method_is_named_by_its_type_and_tests_are_skipped() {
        let text = format!(
            "struct S;\nimpl S {{\n    pub {}}}\n#[test]\n{}",
            function("rounds", 90),
            function("a_test", 90)
        );
        let names: Vec<String> = found(&text).into_iter().map(|l| l.name).collect();
        assert_eq!(names, ["S::rounds"]);
    }

    #[test]
    fn a_long_comment_above_or_first_in_the_body_gives_the_reason() {
        let above = format!(
            "/// Docs.\n// long: one table, row by row\n#[inline]\n{}",
            function("table", 90)
        );
        assert_eq!(
            found(&above)[0].reason.as_deref(),
            Some("one table, row by row")
        );
        let inside =
            function("table", 90).replacen("{\n", "{\n    // long: the states of one machine\n", 1);
        assert_eq!(
            found(&inside)[0].reason.as_deref(),
            Some("the states of one machine")
        );
        let unrelated = format!("// just a note\n\n{}", function("table", 90));
        assert_eq!(found(&unrelated)[0].reason, None);
    }
}
