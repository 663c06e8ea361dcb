//! Plugin packages as the host loads them: a folder holding the plugin library and its
//! `compressors.toml`, the manifest's `[plugin] library` naming the library by its crate name
//! ([`library_file_name`]). [`Package`] lays one out: what `parrot-compress package` puts in
//! place, what `cargo xtask package-plugins` and the tests make from the libraries cargo built.

use std::path::{Path, PathBuf};

/// A file or folder of a [`Package`] that could not be read, written or copied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[error("{}: cannot {action}: {source}", path.display())]
pub struct PackageError {
    /// The file or folder.
    pub path: PathBuf,
    /// What was being done (`create the package folder`, `copy the library`, …).
    pub action: &'static str,
    /// The underlying error.
    #[source]
    pub source: std::io::Error,
}

/// A plugin package laid out in a folder, as the host loads it: the plugin library and its
/// `compressors.toml` side by side.
///
/// # Examples
///
/// ```
/// use parrot_host::Package;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let project = tempfile::tempdir()?;
/// # let built = project.path().join("libparrot_plugin_shout.so");
/// # std::fs::write(&built, b"")?;
/// // `built` is the library cargo built.
/// let package = Package::new(project.path(), "shout")
///     .library(&built)
///     .manifest("[plugin]\nlibrary = \"parrot_plugin_shout\"\n")
///     .create()?;
/// assert!(package.join("compressors.toml").is_file());
/// assert!(package.join("libparrot_plugin_shout.so").is_file());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Package {
    dir: PathBuf,
    library: Option<PathBuf>,
    manifest: Option<ManifestSource>,
}

#[derive(Debug, Clone)]
/// Where a package's `compressors.toml` comes from.
enum ManifestSource {
    Text(String),
    File(PathBuf),
}

impl Package {
    /// A package in the folder `parent/name`, with no library and no manifest yet.
    pub fn new(parent: impl AsRef<Path>, name: &str) -> Package {
        Package::at(parent.as_ref().join(name))
    }

    /// A package in the folder `dir`, with no library and no manifest yet.
    pub fn at(dir: impl Into<PathBuf>) -> Package {
        Package {
            dir: dir.into(),
            library: None,
            manifest: None,
        }
    }

    /// Copies the library at `path` into the package, under its own file name.
    pub fn library(&mut self, path: impl Into<PathBuf>) -> &mut Package {
        self.library = Some(path.into());
        self
    }

    /// Writes `text` as the package's `compressors.toml`.
    pub fn manifest(&mut self, text: impl Into<String>) -> &mut Package {
        self.manifest = Some(ManifestSource::Text(text.into()));
        self
    }

    /// Copies the file at `path` (a shipped package's `compressors.toml`) as the package's
    /// `compressors.toml`.
    pub fn manifest_file(&mut self, path: impl Into<PathBuf>) -> &mut Package {
        self.manifest = Some(ManifestSource::File(path.into()));
        self
    }

    /// Lays the package out: creates its folder, copies the library and writes the manifest
    /// (without one, the folder has no `compressors.toml`). Returns the package folder.
    ///
    /// # Errors
    ///
    /// [`PackageError`] naming the file that could not be read or written.
    pub fn create(&self) -> Result<PathBuf, PackageError> {
        let io = |path: &Path, action| {
            let path = path.to_path_buf();
            move |source| PackageError {
                path,
                action,
                source,
            }
        };
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir, "create the package folder"))?;
        if let Some(library) = &self.library {
            let name = library.file_name().ok_or_else(|| PackageError {
                path: library.clone(),
                action: "take the library's file name",
                source: std::io::ErrorKind::InvalidInput.into(),
            })?;
            std::fs::copy(library, self.dir.join(name))
                .map_err(io(library, "copy the library into the package"))?;
        }
        let target = self.dir.join("compressors.toml");
        match &self.manifest {
            None => {}
            Some(ManifestSource::Text(text)) => {
                std::fs::write(&target, text).map_err(io(&target, "write the manifest"))?;
            }
            Some(ManifestSource::File(source)) => {
                std::fs::copy(source, &target)
                    .map_err(io(source, "copy the manifest into the package"))?;
            }
        }
        Ok(self.dir.clone())
    }
}

/// The file name of the library `name` on this platform, as cargo names a cdylib of the
/// crate `name` and as the host first looks for a package's bare `[plugin] library = "name"`:
/// `libname.so`, `libname.dylib`, `name.dll`.
///
/// # Examples
///
/// ```
/// let file = parrot_host::library_file_name("parrot_plugin_shout");
/// # #[cfg(target_os = "linux")]
/// assert_eq!(file, "libparrot_plugin_shout.so");
/// ```
pub fn library_file_name(name: &str) -> String {
    format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}
