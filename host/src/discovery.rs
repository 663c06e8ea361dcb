//! Which manifests a host reads, in precedence order.
//!
//! Sources, highest precedence first:
//! 1. the project manifest, `<project>/.parrot/compressors.toml`;
//! 2. plugin packages, in the order their source directories are given: the host's explicit
//!    directories ([`crate::HostBuilder::plugin_dir`], `--plugins DIR`), then
//!    `PARROT_PLUGIN_PATH` (`:`-separated), then `<project>/.parrot/plugins`. A source
//!    directory is a package (it holds a `compressors.toml`) or a folder of packages, taken in
//!    name order; a package reached twice counts once, at its first place;
//! 3. the core defaults compiled into the host.
//!
//! A missing manifest or plugin source is skipped, except a directory the caller named
//! explicitly; one that cannot be read is an error.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, LoadError, ManifestError};
use crate::manifest::{self, CORE_MANIFEST, CORE_MANIFEST_NAME, Manifest, SourceKind};

/// The environment variable listing plugin source directories, `:`-separated.
pub const PLUGIN_PATH_ENV: &str = "PARROT_PLUGIN_PATH";

/// A manifest the host read, in precedence order.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// The file (or `<core>`).
    pub name: String,
    /// Project, package or core.
    pub kind: SourceKind,
    /// A package's library.
    pub library: Option<PathBuf>,
}

impl SourceInfo {
    /// What the host keeps of a manifest once its entries are built.
    pub(crate) fn of(manifest: Manifest) -> SourceInfo {
        SourceInfo {
            name: manifest.name,
            kind: manifest.kind,
            library: manifest.plugin.map(|p| p.library),
        }
    }
}

/// Reads and validates every manifest, in precedence order: the project's, each package's
/// (plugin sources: `plugin_dirs`, then the directories of `plugin_path`, then the project's
/// own), the core defaults. Errors go to `errors`; a manifest that is not TOML is left out.
pub(crate) fn manifests(
    project: &Path,
    plugin_dirs: &[PathBuf],
    plugin_path: Option<OsString>,
    errors: &mut Vec<Error>,
) -> Vec<Manifest> {
    let mut manifests = Vec::new();
    let project_manifest = project.join(".parrot").join("compressors.toml");
    if let Some(text) = read_manifest(&project_manifest, errors) {
        let name = project_manifest.display().to_string();
        manifests.extend(parse(
            &name,
            Some(&project_manifest),
            SourceKind::Project,
            &text,
            errors,
        ));
    }
    for package in packages(project, plugin_dirs, plugin_path, errors) {
        let path = package.join("compressors.toml");
        if let Some(text) = read_manifest(&path, errors) {
            let name = path.display().to_string();
            manifests.extend(parse(
                &name,
                Some(&path),
                SourceKind::Package,
                &text,
                errors,
            ));
        }
    }
    manifests.extend(parse(
        CORE_MANIFEST_NAME,
        None,
        SourceKind::Core,
        CORE_MANIFEST,
        errors,
    ));
    manifests
}

/// The package folders, in precedence order, each once.
fn packages(
    project: &Path,
    plugin_dirs: &[PathBuf],
    plugin_path: Option<OsString>,
    errors: &mut Vec<Error>,
) -> Vec<PathBuf> {
    let mut sources: Vec<(PathBuf, bool)> =
        plugin_dirs.iter().map(|d| (absolute(d), true)).collect();
    if let Some(env) = plugin_path {
        sources.extend(
            std::env::split_paths(&env)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| (absolute(&p), false)),
        );
    }
    sources.push((absolute(&project.join(".parrot").join("plugins")), false));

    let mut seen = HashSet::new();
    let mut packages = Vec::new();
    for (dir, explicit) in sources {
        if !dir.is_dir() {
            if explicit {
                errors.push(
                    LoadError::ReadSource {
                        source: std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            "no such directory",
                        ),
                        dir,
                    }
                    .into(),
                );
            }
            continue;
        }
        for package in packages_in(&dir, errors) {
            let key = package.canonicalize().unwrap_or_else(|_| package.clone());
            if seen.insert(key) {
                packages.push(package);
            }
        }
    }
    packages
}

/// Messages name files by absolute path, whatever the caller gave.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A source directory is a package, or a folder of packages taken in name order.
fn packages_in(dir: &Path, errors: &mut Vec<Error>) -> Vec<PathBuf> {
    if dir.join("compressors.toml").is_file() {
        return vec![dir.to_path_buf()];
    }
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(source) => {
            errors.push(
                LoadError::ReadSource {
                    dir: dir.to_path_buf(),
                    source,
                }
                .into(),
            );
            return Vec::new();
        }
    };
    let mut packages: Vec<PathBuf> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("compressors.toml").is_file())
        .collect();
    packages.sort();
    packages
}

/// A missing manifest is skipped; an unreadable one is an error.
fn read_manifest(path: &Path, errors: &mut Vec<Error>) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            errors.push(
                ManifestError::Read {
                    file: path.to_path_buf(),
                    source,
                }
                .into(),
            );
            None
        }
    }
}

/// [`manifest::parse`], its errors among the build's.
fn parse(
    name: &str,
    path: Option<&Path>,
    kind: SourceKind,
    text: &str,
    errors: &mut Vec<Error>,
) -> Option<Manifest> {
    let mut found = Vec::new();
    let manifest = manifest::parse(name, path, kind, text, &mut found);
    errors.extend(found.into_iter().map(Error::from));
    manifest
}
