//! Loading the plugin libraries that package manifests declare, with the package's checks
//! around the loader: the library stays inside its package folder (symlinks resolved), its
//! SHA-256 digest matches the one the manifest pins, and it provides every codec the manifest
//! lists. Each library's codecs are registered; every package's library is loaded before any
//! entry is validated, so an entry may name a codec any package provides.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{Error, LoadError, ManifestError};
use crate::loader;
use crate::manifest::Manifest;
use crate::registry::Registry;
use crate::regular::{self, ReadError};

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
    let load_error = |kind| -> Error {
        LoadError::Library {
            library: plugin.library.clone(),
            manifest: manifest_path.clone(),
            kind,
        }
        .into()
    };
    // The library must stay inside its package even through symlinks.
    if let (Ok(library), Some(Ok(package))) = (
        plugin.library.canonicalize(),
        manifest_path.parent().map(Path::canonicalize),
    ) && !library.starts_with(&package)
    {
        errors.push(
            ManifestError::LibraryOutsidePackage {
                file: manifest.name.clone(),
                line: plugin.line,
                library: plugin.library.display().to_string(),
                package,
            }
            .into(),
        );
        return;
    }
    // A FIFO in place of the library would block the loader's open (or the read of a pinned
    // one) forever.
    if let Err(err) = regular::check(&plugin.library) {
        errors.push(load_error(kind_of(err)));
        return;
    }
    let loaded = match &plugin.sha256 {
        Some(expected) => {
            let bytes = match regular::read(&plugin.library, None) {
                Ok(bytes) => bytes,
                Err(err) => {
                    errors.push(load_error(kind_of(err)));
                    return;
                }
            };
            let actual = hex(&Sha256::digest(&bytes));
            if &actual != expected {
                errors.push(
                    LoadError::DigestMismatch {
                        library: plugin.library.clone(),
                        manifest: manifest_path.clone(),
                        expected: expected.clone(),
                        actual,
                    }
                    .into(),
                );
                return;
            }
            // The bytes hashed are the bytes loaded: the file is not opened again by path.
            loader::load_verified(&plugin.library, &bytes)
        }
        None => loader::load(&plugin.library),
    };
    let library = match loaded {
        Ok(library) => library,
        Err(kind) => {
            errors.push(load_error(kind));
            return;
        }
    };
    registry.add_library(library, manifest_path, errors);
    let provided: Vec<&str> = library.module.codecs().iter().map(|c| c.name()).collect();
    for codec in &plugin.codecs {
        if !provided.contains(&codec.as_str()) {
            errors.push(
                LoadError::CodecNotProvided {
                    library: library.path.to_path_buf(),
                    manifest: manifest_path.clone(),
                    codec: codec.clone(),
                    provided: provided.join(", "),
                }
                .into(),
            );
        }
    }
}

fn kind_of(err: ReadError) -> loader::LoadErrorKind {
    match err {
        ReadError::Missing => loader::LoadErrorKind::Missing,
        ReadError::NotRegular(what) => loader::LoadErrorKind::NotRegularFile { what },
        other => loader::LoadErrorKind::Unreadable {
            reason: other.into_io().to_string(),
        },
    }
}

/// Lower-case hex, as manifests pin digests.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
