//! `package`: a plugin package laid out from any crate — its library and its
//! `compressors.toml` in one folder, the layout the host loads with `--plugins DIR` — and
//! loaded as the host loads it before it is put in place, so that what is wrong is said here
//! and not at the first `check` of a user.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use parrot_host::manifest::SourceKind;
use parrot_host::{Host, MemoryTeeStore, Origin, Package, library_file_name};
use serde_json::Value;

use crate::{Failure, printable};

/// What to package, as the command line gives it.
pub(crate) struct Request<'a> {
    /// The crate to build, when no library is given.
    pub(crate) crate_dir: Option<&'a Path>,
    /// The built library.
    pub(crate) library: Option<&'a Path>,
    /// The manifest; default: the crate's `compressors.toml`.
    pub(crate) manifest: Option<&'a Path>,
    /// The cargo profile the crate is built with.
    pub(crate) profile: &'a str,
    /// The package folder to write.
    pub(crate) out: &'a Path,
}

/// Lays out the package `request` describes, checks it loads, and puts it at `request.out`.
pub(crate) fn package(request: &Request<'_>) -> Result<(), Failure> {
    let manifest = match (request.manifest, request.crate_dir) {
        (Some(manifest), _) => manifest.to_path_buf(),
        (None, Some(dir)) => dir.join("compressors.toml"),
        (None, None) => {
            return Err(Failure::config(vec![
                "package: give --crate DIR, or --library FILE with --manifest FILE".to_owned(),
            ]));
        }
    };
    let declared = declared_library(&manifest)?;
    let library = match (request.library, request.crate_dir) {
        (Some(library), _) => library.to_path_buf(),
        (None, Some(dir)) => build(dir, request.profile)?,
        (None, None) => {
            return Err(Failure::config(vec![
                "package: give --crate DIR or --library FILE".to_owned(),
            ]));
        }
    };
    if !library.is_file() {
        return Err(Failure::config(vec![format!(
            "{}: no such library file",
            library.display()
        )]));
    }
    names_the_library(&manifest, &declared, &library)?;
    let staging = staging_dir(request.out)?;
    let staged = Package::at(&staging)
        .library(&library)
        .manifest_file(&manifest)
        .create()
        .map_err(|err| Failure::runtime(err.to_string()));
    let checked = staged.and_then(|dir| loads(&dir, &manifest, &library));
    let codecs = match checked {
        Ok(codecs) => codecs,
        Err(failure) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(failure);
        }
    };
    put_in_place(&staging, request.out)?;
    println!(
        "packaged {} ({}; {}) -> {}",
        printable(&library_name(&library)),
        if codecs.is_empty() {
            "no codec".to_owned()
        } else {
            format!("codecs {}", codecs.join(", "))
        },
        printable(&manifest.display().to_string()),
        request.out.display()
    );
    Ok(())
}

/// The `[plugin] library` of the manifest at `path`.
fn declared_library(path: &Path) -> Result<String, Failure> {
    let at = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|err| Failure::config(vec![format!("{at}: cannot read the manifest: {err}")]))?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|err| Failure::config(vec![format!("{at}: not a valid manifest: {err}")]))?;
    match table
        .get("plugin")
        .and_then(|plugin| plugin.get("library"))
        .and_then(toml::Value::as_str)
    {
        Some(library) => Ok(library.to_owned()),
        None => Err(Failure::config(vec![format!(
            "{at}: no [plugin] library: a package's manifest names its library, e.g. \
             [plugin] library = \"my_codec\" for the crate my-codec"
        )])),
    }
}

/// Fails unless the manifest's `[plugin] library` names the file `library` is packaged as:
/// the package holds the library under its own file name, at the package's top.
fn names_the_library(manifest: &Path, declared: &str, library: &Path) -> Result<(), Failure> {
    let file = library
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    let expected = library_file_name(declared);
    let suffix = std::env::consts::DLL_SUFFIX;
    let matches = if declared.contains('/') || declared.ends_with(suffix) {
        declared == file
    } else {
        [
            expected.clone(),
            format!("{declared}{suffix}"),
            declared.to_owned(),
        ]
        .contains(&file.to_string())
    };
    if matches {
        return Ok(());
    }
    Err(Failure::config(vec![format!(
        "{}: [plugin] library = \"{}\" is looked up as {} in the package, but the library \
         given is {}: set library = \"{}\"",
        manifest.display(),
        printable(declared),
        printable(&expected),
        printable(&file),
        printable(&library_name(library))
    )]))
}

/// The name a manifest gives the library at `path`: its file name without the platform's
/// prefix and suffix (`libmy_codec.so`: `my_codec`).
fn library_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    let file = file
        .strip_suffix(std::env::consts::DLL_SUFFIX)
        .unwrap_or(&file);
    file.strip_prefix(std::env::consts::DLL_PREFIX)
        .unwrap_or(file)
        .to_owned()
}

/// Builds the library of the crate at `dir` with cargo (`cargo build --lib`) and returns the
/// cdylib it made, as cargo reports it (wherever its target folder is).
fn build(dir: &Path, profile: &str) -> Result<PathBuf, Failure> {
    let cargo_toml = dir.join("Cargo.toml");
    if !cargo_toml.is_file() {
        return Err(Failure::config(vec![format!(
            "{}: not a crate (no Cargo.toml in it)",
            dir.display()
        )]));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--lib", "--message-format=json-render-diagnostics"])
        .args(["--profile", profile])
        .arg("--manifest-path")
        .arg(&cargo_toml);
    // cargo's diagnostics go to stderr as they come; its messages to stdout are read here.
    let out = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|err| Failure::runtime(format!("package: cannot run cargo: {err}")))?;
    if !out.status.success() {
        return Err(Failure::runtime(format!(
            "{}: cargo build failed ({})",
            dir.display(),
            out.status
        )));
    }
    let wanted = cargo_toml.canonicalize().unwrap_or(cargo_toml);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact"
                && message["manifest_path"]
                    .as_str()
                    .map(PathBuf::from)
                    .as_ref()
                    == Some(&wanted)
                && message["target"]["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|kind| kind == "cdylib"))
        })
        .flat_map(|message| message["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|file| file.as_str().map(PathBuf::from))
        .find(|file| {
            file.to_string_lossy()
                .ends_with(std::env::consts::DLL_SUFFIX)
        })
        .ok_or_else(|| {
            Failure::config(vec![format!(
                "{}: cargo built no cdylib: a plugin crate has crate-type = [\"cdylib\"] in its \
                 [lib] table",
                dir.display()
            )])
        })
}

/// A fresh folder beside `out` to lay the package out in before it is checked.
fn staging_dir(out: &Path) -> Result<PathBuf, Failure> {
    let name = out
        .file_name()
        .ok_or_else(|| {
            Failure::config(vec![format!(
                "--out {}: not a folder name to create",
                out.display()
            )])
        })?
        .to_string_lossy();
    let staging = std::path::absolute(out)
        .map_err(|err| Failure::runtime(format!("--out {}: {err}", out.display())))?
        .with_file_name(format!(".{name}.packaging"));
    if staging.exists() {
        // Left by a run that was stopped: this command's own.
        std::fs::remove_dir_all(&staging).map_err(|err| {
            Failure::runtime(format!("{}: cannot remove: {err}", staging.display()))
        })?;
    }
    Ok(staging)
}

/// Loads the package at `dir` as the host does (its manifest validated, its library loaded,
/// the codecs it declares and its entries name found among those the library exports) and
/// returns the names of the codecs the library provides. Each problem is one line of the
/// failure, naming the packaged manifest by the path it was given.
fn loads(dir: &Path, manifest: &Path, library: &Path) -> Result<Vec<String>, Failure> {
    let host = Host::builder()
        .project(dir)
        .plugin_path(None)
        .plugin_dir(dir)
        .kill_switch(Some(false))
        .tee_store(Arc::new(MemoryTeeStore::new(1)))
        .build();
    // The messages name the files given, not their copies in the staging folder.
    let copies = [
        (dir.join("compressors.toml"), manifest),
        (dir.join(library.file_name().unwrap_or_default()), library),
    ];
    let named = |line: String| {
        copies.iter().fold(line, |line, (copy, given)| {
            line.replace(&copy.display().to_string(), &given.display().to_string())
        })
    };
    let host = host.map_err(|err| {
        Failure::config(err.errors.iter().map(|e| named(e.to_string())).collect())
    })?;
    if !host
        .sources()
        .iter()
        .any(|source| source.kind == SourceKind::Package)
    {
        return Err(Failure::config(vec![format!(
            "{}: the host loaded no package from it",
            manifest.display()
        )]));
    }
    for line in super::check::unchecked_claims(host.registry()) {
        eprintln!("{line}");
    }
    Ok(host
        .registry()
        .codecs()
        .filter(|codec| matches!(codec.origin, Origin::Plugin { .. }))
        .map(|codec| printable(codec.meta.name()).into_owned())
        .collect())
}

/// Moves the checked package from `staging` to `out`. A folder already at `out` is replaced
/// only when it holds nothing but a package's files (a manifest and libraries): anything else
/// there is not this command's to remove.
fn put_in_place(staging: &Path, out: &Path) -> Result<(), Failure> {
    let fail = |what: &str, path: &Path, err: std::io::Error| {
        let _ = std::fs::remove_dir_all(staging);
        Failure::runtime(format!("{}: cannot {what}: {err}", path.display()))
    };
    if out.exists() {
        let entries = std::fs::read_dir(out).map_err(|err| fail("read", out, err))?;
        for entry in entries {
            let path = entry.map_err(|err| fail("read", out, err))?.path();
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            let a_package_file = path.is_file()
                && (file == "compressors.toml" || file.ends_with(std::env::consts::DLL_SUFFIX));
            if !a_package_file {
                let _ = std::fs::remove_dir_all(staging);
                return Err(Failure::config(vec![format!(
                    "--out {}: the folder exists and holds {} besides a package's files: give \
                     a new folder, or empty it",
                    out.display(),
                    printable(&file)
                )]));
            }
        }
        std::fs::remove_dir_all(out).map_err(|err| fail("replace", out, err))?;
    }
    std::fs::rename(staging, out).map_err(|err| fail("create", out, err))
}
