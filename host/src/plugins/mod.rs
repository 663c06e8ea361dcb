//! Plugins: the codec registry ([`registry`]) and where its codecs come from — plugin libraries
//! loaded ([`loader`]) from the packages the manifests declare, what the stage needs to know of
//! each codec ([`facts`]), and the lossless claims it cannot check ([`claims`]).
//!
//! Loading the plugin libraries that package manifests declare, with the package's checks
//! around the loader: the library stays inside its package folder (symlinks resolved), its
//! SHA-256 digest matches the one the manifest pins, and it provides every codec the manifest
//! lists. Each library's codecs are registered; every package's library is loaded before any
//! entry is validated, so an entry may name a codec any package provides.

pub(crate) mod claims;
pub(crate) mod facts;
pub(crate) mod loader;
pub(crate) mod registry;

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::config::manifest::{Manifest, PluginDecl};
use crate::config::regular::{self, ReadError};
use crate::error::{Error, LoadError, ManifestError};
use registry::Registry;

/// Loads the library of every package manifest in `manifests` and registers its codecs.
pub(crate) fn load_all(manifests: &[Manifest], registry: &mut Registry, errors: &mut Vec<Error>) {
    for manifest in manifests {
        load_plugin(manifest, registry, errors);
    }
}

/// Loads one package's library; a manifest without `[plugin]` has none.
fn load_plugin(manifest: &Manifest, registry: &mut Registry, errors: &mut Vec<Error>) {
    let (Some(plugin), Some(manifest_path)) = (&manifest.plugin, &manifest.path) else {
        return;
    };
    if let Some(error) = outside_package(manifest, plugin, manifest_path) {
        errors.push(error);
        return;
    }
    let library = match open(plugin, manifest_path) {
        Ok(library) => library,
        Err(error) => {
            errors.push(*error);
            return;
        }
    };
    registry.add_library(library, manifest_path, errors);
    check_codecs(plugin, &library, manifest_path, errors);
}

/// The error when the library leads out of its package folder through a symlink (the
/// manifest's own check saw only the path as written).
fn outside_package(
    manifest: &Manifest,
    plugin: &PluginDecl,
    manifest_path: &Path,
) -> Option<Error> {
    let (Ok(library), Some(Ok(package))) = (
        plugin.library.canonicalize(),
        manifest_path.parent().map(Path::canonicalize),
    ) else {
        return None;
    };
    (!library.starts_with(&package)).then(|| {
        ManifestError::LibraryOutsidePackage {
            file: manifest.name.clone(),
            line: plugin.line,
            library: plugin.library.display().to_string(),
            package,
        }
        .into()
    })
}

/// Loads the library, after checking it is a regular file and, when the manifest pins one,
/// that its digest matches.
fn open(plugin: &PluginDecl, manifest_path: &Path) -> Result<loader::Library, Box<Error>> {
    let load_error = |kind| -> Box<Error> {
        Box::new(
            LoadError::Library {
                library: plugin.library.clone(),
                manifest: manifest_path.to_path_buf(),
                kind,
            }
            .into(),
        )
    };
    // A FIFO in place of the library would block the loader's open (or the read of a pinned
    // one) forever.
    regular::check(&plugin.library).map_err(|err| load_error(kind_of(err)))?;
    let loaded = match &plugin.sha256 {
        Some(expected) => {
            let bytes =
                regular::read(&plugin.library, None).map_err(|err| load_error(kind_of(err)))?;
            let actual = hex(&Sha256::digest(&bytes));
            if &actual != expected {
                return Err(Box::new(
                    LoadError::DigestMismatch {
                        library: plugin.library.clone(),
                        manifest: manifest_path.to_path_buf(),
                        expected: expected.clone(),
                        actual,
                    }
                    .into(),
                ));
            }
            // The bytes hashed are the bytes loaded: the file is not opened again by path.
            loader::load_verified(&plugin.library, &bytes)
        }
        None => loader::load(&plugin.library),
    };
    loaded.map_err(load_error)
}

/// Reports each codec the manifest lists that the library does not provide.
fn check_codecs(
    plugin: &PluginDecl,
    library: &loader::Library,
    manifest_path: &Path,
    errors: &mut Vec<Error>,
) {
    let provided: Vec<&str> = library.module.codecs().iter().map(|c| c.name()).collect();
    for codec in &plugin.codecs {
        if !provided.contains(&codec.as_str()) {
            errors.push(
                LoadError::CodecNotProvided {
                    library: library.path.to_path_buf(),
                    manifest: manifest_path.to_path_buf(),
                    codec: codec.clone(),
                    provided: provided.join(", "),
                }
                .into(),
            );
        }
    }
}

fn kind_of(err: ReadError) -> crate::error::LoadErrorKind {
    match err {
        ReadError::Missing => crate::error::LoadErrorKind::Missing,
        ReadError::NotRegular(what) => crate::error::LoadErrorKind::NotRegularFile { what },
        other => crate::error::LoadErrorKind::Unreadable {
            reason: other.into_io().to_string(),
        },
    }
}

/// Lower-case hex, as manifests pin digests.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
