//! Which manifests a host reads, in precedence order.
//!
//! Sources, highest precedence first:
//! 1. the project manifest, `<project>/.parrot/compressors.toml`;
//! 2. plugin packages, in the order their source directories are given: the host's explicit
//!    directories ([`crate::HostBuilder::plugin_dir`], `--plugins DIR`), then
//!    `PARROT_PLUGIN_PATH` (`:`-separated), then `<project>/.parrot/plugins` when the project's
//!    plugins are trusted (see below). A source
//!    directory is a package (it holds a `compressors.toml`) or a folder of packages, taken in
//!    name order; a package reached twice counts once, at its first place;
//! 3. the core defaults compiled into the host.
//!
//! A missing manifest or plugin source is skipped, except a directory the caller named
//! explicitly; one that cannot be read is an error. A directory the caller named that holds no
//! package is a warning naming what it holds.
//!
//! # Trust
//!
//! Loading a plugin runs its native code. Libraries named by the caller (`--plugins`,
//! `PARROT_PLUGIN_PATH`) are the user's own choice. A project's own `.parrot/plugins` came with
//! the project — a repository just cloned, say — so it is read only when the user trusts it:
//! [`crate::HostBuilder::trust_project_plugins`] (`--trust-project-plugins`), or
//! `PARROT_TRUST_PROJECT_PLUGINS=1`. Otherwise its packages are left out, with one warning
//! naming the folder. The project's manifest is data, not code, and is always read.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::manifest::{self, CORE_MANIFEST, CORE_MANIFEST_NAME, Manifest, SourceKind};
use crate::config::regular::{self, ReadError};
use crate::error::{Error, LoadError, ManifestError};

/// The environment variable listing plugin source directories, `:`-separated.
pub const PLUGIN_PATH_ENV: &str = "PARROT_PLUGIN_PATH";

/// The environment variable that trusts the project's own plugins, `<project>/.parrot/plugins`,
/// when set to `1`.
pub const TRUST_PROJECT_PLUGINS_ENV: &str = "PARROT_TRUST_PROJECT_PLUGINS";

/// The largest manifest a host reads, in bytes (256 KiB): thousands of entries, far beyond
/// any hand-written manifest, while a file many times larger would cost seconds and
/// gigabytes at every start. A larger one is an error naming it.
pub const MAX_MANIFEST_BYTES: u64 = 256 * 1024;

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
/// own, when `trusted`), the core defaults. Errors go to `errors`; a manifest that is not TOML
/// is left out. Warnings go to `warnings`, for the builder to log only when the host builds:
/// a configuration that fails shows its errors alone.
pub(crate) fn manifests(
    project: &Path,
    plugin_dirs: &[PathBuf],
    plugin_path: Option<OsString>,
    trusted: bool,
    errors: &mut Vec<Error>,
    warnings: &mut Vec<String>,
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
    for package in packages(project, plugin_dirs, plugin_path, trusted, errors, warnings) {
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
    manifests.extend(core_manifests(errors));
    manifests
}

/// The core defaults' manifest alone.
pub(crate) fn core_manifests(errors: &mut Vec<Error>) -> Vec<Manifest> {
    parse(
        CORE_MANIFEST_NAME,
        None,
        SourceKind::Core,
        CORE_MANIFEST,
        errors,
    )
    .into_iter()
    .collect()
}

/// The package folders, in precedence order, each once.
fn packages(
    project: &Path,
    plugin_dirs: &[PathBuf],
    plugin_path: Option<OsString>,
    trusted: bool,
    errors: &mut Vec<Error>,
    warnings: &mut Vec<String>,
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
    let own = absolute(&project.join(".parrot").join("plugins"));
    if trusted {
        sources.push((own, false));
    } else if own.is_dir() && !packages_in(&own, &mut Vec::new()).is_empty() {
        tracing::warn!(
            "{}: the project's plugins are not loaded: they would run its native code; \
             if you trust this project, pass --trust-project-plugins or set {TRUST_PROJECT_PLUGINS_ENV}=1",
            own.display()
        );
    }

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
        let found = packages_in(&dir, errors);
        if explicit && found.is_empty() {
            warnings.push(nothing_loadable(&dir));
        }
        for package in found {
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

/// The warning for a directory the caller named that holds no package: accepted in silence,
/// it would leave a person wondering why their codec is unknown. It names what the directory
/// holds, since the usual mistake is a build folder (libraries without a manifest) or a source
/// tree one level too high or too low.
fn nothing_loadable(dir: &Path) -> String {
    /// Enough names to recognise the folder, not a listing of a whole build tree.
    const SHOWN: usize = 5;
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|listing| {
            listing
                .filter_map(Result::ok)
                .map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if entry.path().is_dir() {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let holds = match names.len() {
        0 => "it is empty".to_owned(),
        n if n > SHOWN => format!("it holds {}, … ({n} entries)", names[..SHOWN].join(", ")),
        _ => format!("it holds {}", names.join(", ")),
    };
    let libraries = names.iter().any(|name| {
        [".so", ".dylib", ".dll"]
            .iter()
            .any(|ext| name.ends_with(ext))
    });
    let hint = if libraries {
        "; a library loads only from a package, a folder with the compressors.toml that \
         declares it (`cargo xtask package-plugins` lays them out)"
    } else {
        ""
    };
    format!(
        "{}: no plugin package loaded from it: no compressors.toml in it or in any folder \
         directly in it ({holds}){hint}",
        dir.display()
    )
}

/// A missing manifest is skipped; an unreadable one, one that is not a regular file (a FIFO
/// would block the read forever) or one over [`MAX_MANIFEST_BYTES`] is an error.
fn read_manifest(path: &Path, errors: &mut Vec<Error>) -> Option<String> {
    let failed = |source: std::io::Error| -> Error {
        ManifestError::Read {
            file: path.to_path_buf(),
            source,
        }
        .into()
    };
    match regular::read(path, Some(MAX_MANIFEST_BYTES)) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(err) => {
                errors.push(failed(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    err.utf8_error(),
                )));
                None
            }
        },
        Err(ReadError::Missing) => None,
        Err(ReadError::TooLarge(size)) => {
            errors.push(
                ManifestError::TooLarge {
                    file: path.to_path_buf(),
                    size,
                    limit: MAX_MANIFEST_BYTES,
                }
                .into(),
            );
            None
        }
        Err(err) => {
            errors.push(failed(err.into_io()));
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
