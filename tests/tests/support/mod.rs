//! Test support: builds the workspace's plugin libraries and the command once per test
//! binary, and lays out plugin packages in temporary folders.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The target directory of this profile (`target/debug`), derived from the test executable.
pub fn profile_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test binary>
        exe.parent()
            .and_then(Path::parent)
            .expect("target/<profile> above the test binary")
            .to_path_buf()
    })
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    let target = profile_dir().parent().expect("target dir");
    cmd.env("CARGO_TARGET_DIR", target);
    if profile_dir().file_name().is_some_and(|p| p == "release") {
        cmd.arg("--release");
    }
    cmd
}

fn run(mut cmd: Command) {
    let status = cmd.status().expect("cargo runs");
    assert!(status.success(), "{cmd:?} failed: {status}");
}

/// Builds every library and binary of the workspace, and the `panic = "abort"` fixture, once.
pub fn build_artifacts() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let mut build = cargo();
        build.args(["build", "--workspace", "--lib", "--bins", "--quiet"]);
        run(build);
        // A profile cannot set `panic` per package: build this one fixture's cdylib with
        // panic=abort through rustc flags that apply to it alone.
        let mut abort = cargo();
        abort.args([
            "rustc",
            "--quiet",
            "-p",
            "parrot-plugin-fault-abort",
            "--lib",
            "--crate-type",
            "cdylib",
            "--",
            "-C",
            "panic=abort",
        ]);
        run(abort);
    });
}

/// The path of a built plugin library, by crate name (`parrot_plugin_line_dedup`).
pub fn library(crate_name: &str) -> PathBuf {
    build_artifacts();
    let file = format!(
        "{}{crate_name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = profile_dir().join(file);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// The `parrot-compress` binary.
pub fn binary() -> PathBuf {
    build_artifacts();
    let path = profile_dir().join(format!("parrot-compress{}", std::env::consts::EXE_SUFFIX));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// The source folder of a shipped plugin (`plugins/line-dedup`).
pub fn plugin_source(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../plugins")
        .join(dir)
}

/// Lays out a package folder `parent/name` holding `manifest` as `compressors.toml` and, when
/// given, a copy of the library `crate_name` under its usual file name.
pub fn package(parent: &Path, name: &str, crate_name: Option<&str>, manifest: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).expect("package folder");
    if let Some(crate_name) = crate_name {
        let source = library(crate_name);
        let target = dir.join(source.file_name().expect("library file name"));
        std::fs::copy(&source, &target).expect("copy library");
    }
    std::fs::write(dir.join("compressors.toml"), manifest).expect("write manifest");
    dir
}

/// A shipped plugin's package (`plugins/<dir>`): its real `compressors.toml` and its library,
/// laid out as `parent/<dir>`.
pub fn shipped_package(parent: &Path, dir: &str, crate_name: &str) -> PathBuf {
    shipped_package_as(parent, dir, dir, crate_name)
}

/// [`shipped_package`], laid out under another folder name.
pub fn shipped_package_as(parent: &Path, dir: &str, name: &str, crate_name: &str) -> PathBuf {
    let manifest = std::fs::read_to_string(plugin_source(dir).join("compressors.toml"))
        .expect("shipped manifest");
    package(parent, name, Some(crate_name), &manifest)
}

/// A manifest declaring `crate_name`'s library, plus `rest`.
pub fn plugin_manifest(crate_name: &str, rest: &str) -> String {
    format!("[plugin]\nlibrary = \"{crate_name}\"\n{rest}")
}

/// A host with a memory tee store whose only plugin source is one package `plugins/<name>` in a
/// fresh project: the library `crate_name`, declared with `entries` (manifest text).
pub fn one_package_host(
    crate_name: &str,
    name: &str,
    entries: &str,
) -> Result<(tempfile::TempDir, parrot_host::Host), parrot_host::BuildError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let plugins = dir.path().join("plugins");
    package(
        &plugins,
        name,
        Some(crate_name),
        &plugin_manifest(crate_name, entries),
    );
    let host = parrot_host::Host::builder()
        .project(dir.path())
        .plugin_path(None)
        .plugin_dir(&plugins)
        .tee_store(std::sync::Arc::new(parrot_host::MemoryTeeStore::default()))
        .build()?;
    Ok((dir, host))
}
