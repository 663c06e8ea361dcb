//! The workspace's Rust sources as the checks read them: each package's targets and, in each, the
//! tree of modules Cargo would compile, parsed with `syn`.
//!
//! The tree is followed from each target's root (`src/lib.rs`, `src/main.rs`) through its `mod`
//! items — inline ones, `mod x;` as `x.rs` or `x/mod.rs`, and `#[path]` — so a file that no
//! `mod` names is not read, and each module knows whether it is test code (`#[cfg(test)]` on it
//! or on a module around it).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// One workspace package and the roots of its library and binary targets.
pub struct Package {
    /// The package name (`parrot-codecs`).
    pub name: String,
    /// `src/lib.rs` and `src/main.rs`, those that exist.
    pub roots: Vec<PathBuf>,
}

/// One module of a target.
pub struct Module {
    /// Its path below the crate root (`["log", "fold"]`); empty for the root.
    pub path: Vec<String>,
    /// The file its items are in.
    pub file: PathBuf,
    /// Its items (the `mod` items among them are modules of their own, listed apart).
    pub items: Vec<syn::Item>,
    /// Whether it is compiled only for tests.
    pub test: bool,
}

impl Module {
    /// `log::fold`, or `crate` for the root.
    pub fn name(&self) -> String {
        if self.path.is_empty() {
            "crate".to_owned()
        } else {
            self.path.join("::")
        }
    }
}

/// The workspace members of `root/Cargo.toml` (a trailing `/*` expanded), in name order.
pub fn packages(root: &Path) -> Result<Vec<Package>> {
    let manifest: toml::Table = toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml"))?)
        .context("the workspace Cargo.toml")?;
    let members = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        .context("the workspace Cargo.toml: no [workspace] members")?;
    let mut dirs = Vec::new();
    for member in members.iter().filter_map(toml::Value::as_str) {
        if let Some(parent) = member.strip_suffix("/*") {
            let listing = std::fs::read_dir(root.join(parent))
                .with_context(|| format!("listing {parent}/"))?;
            for entry in listing {
                let path = entry?.path();
                if path.join("Cargo.toml").is_file() {
                    let name = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or_default();
                    dirs.push(format!("{parent}/{name}"));
                }
            }
        } else {
            dirs.push(member.to_owned());
        }
    }
    let mut packages = Vec::new();
    for dir in dirs {
        let cargo: toml::Table = toml::from_str(&std::fs::read_to_string(
            root.join(&dir).join("Cargo.toml"),
        )?)
        .with_context(|| format!("{dir}/Cargo.toml"))?;
        let name = cargo
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(toml::Value::as_str)
            .with_context(|| format!("{dir}/Cargo.toml: no package name"))?
            .to_owned();
        let roots = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|file| root.join(&dir).join(file))
            .filter(|path| path.is_file())
            .collect();
        packages.push(Package { name, roots });
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(packages)
}

/// Every module of the target whose root file is `root`, parents before children.
pub fn modules(root: &Path) -> Result<Vec<Module>> {
    let mut out = Vec::new();
    let dir = root.parent().context("a root file in a folder")?;
    read_file(root, Vec::new(), dir, false, &mut out)?;
    Ok(out)
}

fn read_file(
    file: &Path,
    path: Vec<String>,
    dir: &Path,
    test: bool,
    out: &mut Vec<Module>,
) -> Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| file.display().to_string())?;
    let parsed = syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))?;
    add(file, path, dir, parsed.items, test, out)
}

/// Adds the module `path` with `items`, then its child modules; `dir` is where the files of
/// its `mod x;` items are.
fn add(
    file: &Path,
    path: Vec<String>,
    dir: &Path,
    items: Vec<syn::Item>,
    test: bool,
    out: &mut Vec<Module>,
) -> Result<()> {
    let children: Vec<syn::ItemMod> = items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(module) => Some(module.clone()),
            _ => None,
        })
        .collect();
    out.push(Module {
        path: path.clone(),
        file: file.to_path_buf(),
        items,
        test,
    });
    for child in children {
        let name = child.ident.to_string();
        let mut child_path = path.clone();
        child_path.push(name.clone());
        let child_test = test || is_test(&child.attrs);
        match child.content {
            Some((_, items)) => add(file, child_path, &dir.join(&name), items, child_test, out)?,
            None => {
                let (child_file, child_dir) = match path_attribute(&child.attrs) {
                    Some(relative) => {
                        let at = file.parent().unwrap_or(dir).join(relative);
                        let child_dir = at.parent().unwrap_or(dir).to_path_buf();
                        (at, child_dir)
                    }
                    None => {
                        let flat = dir.join(format!("{name}.rs"));
                        let nested = dir.join(&name).join("mod.rs");
                        if flat.is_file() {
                            (flat, dir.join(&name))
                        } else if nested.is_file() {
                            (nested, dir.join(&name))
                        } else {
                            bail!(
                                "{}: `mod {name};` but neither {} nor {} exists",
                                file.display(),
                                flat.display(),
                                nested.display()
                            );
                        }
                    }
                };
                read_file(&child_file, child_path, &child_dir, child_test, out)?;
            }
        }
    }
    Ok(())
}

/// Whether `attrs` hold `#[cfg(test)]` or `#[test]`.
pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("test")
            || (attr.path().is_ident("cfg")
                && attr
                    .meta
                    .require_list()
                    .is_ok_and(|list| list.tokens.to_string() == "test"))
    })
}

fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| {
        let syn::Meta::NameValue(pair) = &attr.meta else {
            return None;
        };
        if !pair.path.is_ident("path") {
            return None;
        }
        match &pair.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Some(text.value()),
            _ => None,
        }
    })
}
