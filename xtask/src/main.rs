//! Developer commands: `cargo xtask <command>`.
//!
//! - `package-plugins`: builds every shippable plugin (each `plugins/<name>/` folder with a
//!   `compressors.toml`) in release mode and lays out each package as a ready-to-load folder
//!   `target/plugins/<name>/` holding its `compressors.toml` and its library. Then
//!   `parrot-compress --plugins target/plugins check` loads them all.
//! - `bench-corpus`: fetches the registry payloads of `corpus/registry.toml` (pinned versions,
//!   tarballs checked against their recorded sha256) into `target/bench-corpus/`.
//! - `bench`: fetches the corpus, runs every benchmark and rewrites `docs/BENCHMARKS.md`
//!   (see [`mod@bench`]).
//! - `modules`: prints the graph of references between the modules of every workspace crate
//!   and fails, naming it, on a cycle (see [`modules`]).
//! - `long-fns`: lists the production functions over 80 lines and fails while one of them has
//!   no `// long:` reason (see [`long_fns`]).
//! - `test`: makes the real components the integration tests drive ready (a `redis-server`,
//!   the npm packages, the Python SDKs' venv), then runs `cargo test --workspace` with any
//!   further arguments (see [`mod@test`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

mod bench;
mod long_fns;
mod modules;
mod source;
mod test;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("package-plugins") => package_plugins(),
        Some("bench-corpus") => bench::corpus(&workspace_root()).map(|_| ()),
        Some("bench") => bench::run(&workspace_root(), &args[1..]),
        Some("modules") => modules::run(&workspace_root()),
        Some("long-fns") => long_fns::run(&workspace_root()),
        Some("test") => test::run(&workspace_root(), &args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask package-plugins | bench-corpus | bench [--quick] | modules \
                 | long-fns | test [CARGO TEST ARGS]"
            );
            std::process::exit(2);
        }
    }
}

struct Plugin {
    dir: PathBuf,
    name: String,
    package: String,
    library: String,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

fn shippable_plugins(root: &Path) -> Result<Vec<Plugin>> {
    let mut plugins = Vec::new();
    for entry in std::fs::read_dir(root.join("plugins")).context("listing plugins/")? {
        let dir = entry?.path();
        let manifest = dir.join("compressors.toml");
        if !manifest.is_file() {
            continue;
        }
        let cargo: toml::Table = toml::from_str(&std::fs::read_to_string(dir.join("Cargo.toml"))?)
            .with_context(|| format!("{}/Cargo.toml", dir.display()))?;
        let package = cargo
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(toml::Value::as_str)
            .with_context(|| format!("{}/Cargo.toml: no package name", dir.display()))?
            .to_owned();
        let pkg: toml::Table = toml::from_str(&std::fs::read_to_string(&manifest)?)
            .with_context(|| manifest.display().to_string())?;
        let library = pkg
            .get("plugin")
            .and_then(|p| p.get("library"))
            .and_then(toml::Value::as_str)
            .with_context(|| format!("{}: no [plugin] library", manifest.display()))?
            .to_owned();
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .context("plugin folder name")?
            .to_owned();
        plugins.push(Plugin {
            dir,
            name,
            package,
            library,
        });
    }
    plugins.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(plugins)
}

fn package_plugins() -> Result<()> {
    let root = workspace_root();
    let plugins = shippable_plugins(&root)?;
    if plugins.is_empty() {
        bail!("no shippable plugin under plugins/ (a folder with a compressors.toml)");
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&root)
        .args(["build", "--release", "--lib"]);
    for plugin in &plugins {
        build.args(["-p", &plugin.package]);
    }
    let status = build.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build failed: {status}");
    }
    let target = bench::target_dir(&root);
    // A package left from an earlier run (a plugin since removed or renamed) would still be
    // loaded from this folder, so the folder holds exactly this run's packages.
    let packages = target.join("plugins");
    if packages.exists() {
        std::fs::remove_dir_all(&packages)
            .with_context(|| format!("clearing {}", packages.display()))?;
    }
    // Laid out as `parrot-compress package` lays out one (and the tests theirs).
    for plugin in &plugins {
        let built = target
            .join("release")
            .join(parrot_codec_test::library_file_name(&plugin.library));
        let out = parrot_codec_test::Package::new(target.join("plugins"), &plugin.name)
            .library(built)
            .manifest_file(plugin.dir.join("compressors.toml"))
            .create()?;
        println!("packaged {} -> {}", plugin.name, out.display());
    }
    Ok(())
}
