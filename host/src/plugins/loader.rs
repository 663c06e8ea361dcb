//! Loading codec plugin libraries. The only module of the host with `unsafe` code.
//!
//! A library is opened once per canonical path and never unloaded: every codec object and
//! string it hands out points into it, and its thread-local destructors make unloading unsafe.
//! The same path asked for twice is the same instance; a copy at another path is a separate
//! one. abi_stable's `RootModule::load_from_file` is not used: it caches one module per root
//! module *type*, so the second plugin would silently come back as the first.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use abi_stable::library::{
    AbiHeaderRef, LibHeader, LibraryError, RawLibrary, RootModule, RootModuleError,
    abi_header_from_raw_library,
};
use parrot_codec_api::__private::{
    CAPABILITIES_SYMBOL, CapabilitiesModRef, INTERFACE_VERSION, PluginModRef,
};
use parrot_codec_api::CodecMeta;

use crate::error::LoadErrorKind;

/// A loaded plugin library: its canonical path and its root modules.
#[derive(Clone, Copy)]
pub(crate) struct Library {
    pub(crate) path: &'static Path,
    pub(crate) module: PluginModRef,
    /// Its second root module, which builds codecs offering every capability of the
    /// interface; `None` for a library built before that module, which offers none.
    pub(crate) capabilities: Option<CapabilitiesModRef>,
    pub(crate) interface_version: &'static str,
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("path", &self.path)
            .field("interface_version", &self.interface_version)
            .finish_non_exhaustive()
    }
}

fn loaded() -> &'static Mutex<HashMap<PathBuf, Library>> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Library>>> = OnceLock::new();
    LOADED.get_or_init(Default::default)
}

/// Loads the plugin library at `path` (or returns the instance already loaded from it).
///
/// Loading runs the library's initializers: call this only for libraries a manifest declares.
pub(crate) fn load(path: &Path) -> Result<Library, LoadErrorKind> {
    let canonical = path.canonicalize().map_err(|_| LoadErrorKind::Missing)?;
    let mut loaded = loaded()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(library) = loaded.get(&canonical) {
        return Ok(*library);
    }
    let library = open(&canonical, &canonical)?;
    loaded.insert(canonical, library);
    Ok(library)
}

/// Loads `bytes`, the verified contents of the library at `path`, from a private copy of
/// them: what runs is exactly what was hashed, whatever happens to the file at `path` after it
/// was read. The library keeps `path` as its name.
pub(crate) fn load_verified(path: &Path, bytes: &[u8]) -> Result<Library, LoadErrorKind> {
    let canonical = path.canonicalize().map_err(|_| LoadErrorKind::Missing)?;
    let mut loaded = loaded()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(library) = loaded.get(&canonical) {
        return Ok(*library);
    }
    let copy = PrivateCopy::of(bytes).map_err(|err| LoadErrorKind::Unreadable {
        reason: format!("cannot make a private copy to load: {err}"),
    })?;
    let library = open(&copy.path(), &canonical)?;
    drop(copy);
    loaded.insert(canonical, library);
    Ok(library)
}

/// Bytes in a file only this process can reach, for the dynamic loader to open: an anonymous
/// in-memory file on Linux (it has no name in any folder), else a file in a fresh private
/// temporary folder. Dropped once the library is loaded (the loader keeps its own mapping).
struct PrivateCopy {
    #[cfg(target_os = "linux")]
    file: std::fs::File,
    #[cfg(not(target_os = "linux"))]
    file: tempfile::NamedTempFile,
}

impl PrivateCopy {
    #[cfg(target_os = "linux")]
    fn of(bytes: &[u8]) -> std::io::Result<PrivateCopy> {
        use std::io::Write;
        use std::os::fd::FromRawFd;
        // SAFETY: the name is a NUL-terminated literal, valid for the call, which only reads it.
        let fd = unsafe { libc::memfd_create(c"parrot-plugin".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned open by memfd_create and nothing else owns it.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.write_all(bytes)?;
        Ok(PrivateCopy { file })
    }

    #[cfg(target_os = "linux")]
    fn path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
    }

    #[cfg(not(target_os = "linux"))]
    fn of(bytes: &[u8]) -> std::io::Result<PrivateCopy> {
        use std::io::Write;
        let mut file = tempfile::Builder::new()
            .prefix("parrot-plugin")
            .tempfile()?;
        file.write_all(bytes)?;
        file.flush()?;
        Ok(PrivateCopy { file })
    }

    #[cfg(not(target_os = "linux"))]
    fn path(&self) -> PathBuf {
        self.file.path().to_path_buf()
    }
}

/// Opens the library file at `file`, known as `name`.
fn open(file: &Path, name: &Path) -> Result<Library, LoadErrorKind> {
    let path = file;
    let raw = RawLibrary::load_at(path).map_err(|err| match err {
        LibraryError::OpenError { err, .. } => LoadErrorKind::NotSharedLibrary {
            reason: short_reason(&err.to_string(), path),
        },
        other => LoadErrorKind::NotSharedLibrary {
            reason: other.to_string().trim().to_owned(),
        },
    })?;
    // Never unloaded: codec objects and strings from the library point into it.
    let raw: &'static RawLibrary = Box::leak(Box::new(raw));

    // SAFETY: the symbol, when present, is the `LibHeader` static that abi_stable's export
    // (written by `export_codecs!`) places under this name, and `raw` is leaked, so the
    // `'static` reference the header carries stays valid for the life of the process.
    let header = unsafe { abi_header_from_raw_library(raw) }.map_err(|err| match err {
        LibraryError::GetSymbolError { .. } => LoadErrorKind::NotPlugin,
        other => LoadErrorKind::NotSharedLibrary {
            reason: other.to_string().trim().to_owned(),
        },
    })?;
    let header = header.upgrade().map_err(|err| match err {
        LibraryError::InvalidAbiHeader(_) => LoadErrorKind::IncompatibleAbiStable,
        other => LoadErrorKind::NotSharedLibrary {
            reason: other.to_string().trim().to_owned(),
        },
    })?;
    let plugin_version = header.version_strings().version.as_str();

    let module = init::<PluginModRef>(header, plugin_version)?;
    if !module.unwinds() {
        return Err(LoadErrorKind::AbortsOnPanic);
    }
    CodecMeta::check_list(module.codecs().as_slice())
        .map_err(|reason| LoadErrorKind::InvalidCodecList { reason })?;
    let capabilities = capabilities(raw, plugin_version)?;
    tracing::debug!(
        library = %name.display(),
        version = plugin_version,
        capabilities = capabilities.is_some(),
        "loaded codec plugin"
    );
    Ok(Library {
        path: Box::leak(name.to_path_buf().into_boxed_path()),
        module,
        capabilities,
        interface_version: plugin_version,
    })
}

/// The library's second root module, [`CapabilitiesModRef`], when it exports one: a library
/// built before the capabilities module has no such symbol, and is loaded without it.
fn capabilities(
    raw: &'static RawLibrary,
    plugin_version: &str,
) -> Result<Option<CapabilitiesModRef>, LoadErrorKind> {
    let symbol = format!("{CAPABILITIES_SYMBOL}\0");
    // SAFETY: a library that exports this symbol exports it from `export_codecs!`, as the
    // `LibHeader` static of its capabilities module, which abi_stable's header reader reads
    // as it reads the first root module's (`abi_header_from_raw_library`); `raw` is leaked, so
    // the header stays valid for the life of the process.
    let header = match unsafe { raw.get::<AbiHeaderRef>(symbol.as_bytes()) } {
        Ok(header) => *header,
        Err(LibraryError::GetSymbolError { .. }) => return Ok(None),
        Err(other) => {
            return Err(LoadErrorKind::NotSharedLibrary {
                reason: other.to_string().trim().to_owned(),
            });
        }
    };
    let header = header.upgrade().map_err(|err| match err {
        LibraryError::InvalidAbiHeader(_) => LoadErrorKind::IncompatibleAbiStable,
        other => LoadErrorKind::NotSharedLibrary {
            reason: other.to_string().trim().to_owned(),
        },
    })?;
    init::<CapabilitiesModRef>(header, plugin_version).map(Some)
}

/// Root module `M` from `header`, its version and layout checked.
fn init<M: RootModule>(header: &LibHeader, plugin_version: &str) -> Result<M, LoadErrorKind> {
    header.init_root_module::<M>().map_err(|err| match err {
        LibraryError::IncompatibleVersionNumber { .. } | LibraryError::ParseVersionError(_) => {
            LoadErrorKind::IncompatibleVersion {
                host: INTERFACE_VERSION.to_owned(),
                plugin: plugin_version.to_owned(),
            }
        }
        LibraryError::AbiInstability(report) => LoadErrorKind::LayoutMismatch {
            host: INTERFACE_VERSION.to_owned(),
            plugin: plugin_version.to_owned(),
            reason: layout_summary(&report.to_string()),
        },
        LibraryError::RootModule { err, .. } => LoadErrorKind::Constructor {
            reason: match err {
                RootModuleError::Unwound => "it panicked".to_owned(),
                other => other.to_string().trim().to_owned(),
            },
        },
        other => LoadErrorKind::NotSharedLibrary {
            reason: other.to_string().trim().to_owned(),
        },
    })
}

/// The loader's message without the path it repeats.
fn short_reason(message: &str, path: &Path) -> String {
    let path = path.display().to_string();
    let reason = message.replace(&format!("{path}: "), "");
    reason.trim().to_owned()
}

/// abi_stable's layout reports run to hundreds of lines; a person needs the `Error:` lines.
/// The whole report goes to the debug log.
fn layout_summary(report: &str) -> String {
    tracing::debug!(report, "plugin layout mismatch");
    let errors: Vec<&str> = report
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("Error:"))
        .take(3)
        .collect();
    if errors.is_empty() {
        "the root module's layout differs".to_owned()
    } else {
        errors.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use parrot_codec_api::CodecListError;

    use super::*;

    #[test]
    fn a_verified_library_is_loaded_from_the_bytes_hashed_not_from_its_path() {
        let built = parrot_codec_test::cdylib("parrot_plugin_line_dedup").unwrap();
        let bytes = std::fs::read(built).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libswapped.so");
        // The file at the path was swapped after its bytes were read and hashed.
        std::fs::write(&path, b"not the library that was hashed").unwrap();
        let library = load_verified(&path, &bytes).expect("the bytes given load");
        assert_eq!(library.path, path.canonicalize().unwrap());
        let names: Vec<&str> = library.module.codecs().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["line_dedup"]);
    }

    #[test]
    fn an_invalid_codec_list_says_what_is_wrong_and_how_it_is_prevented() {
        let cases = [
            (
                CodecListError::DuplicateName { name: "twin" },
                "invalid codec list: two codecs are named \"twin\"; every codec needs a name of \
                 its own (parrot_codec_api::export_codecs! checks this when the library is compiled)",
            ),
            (
                CodecListError::EmptyName { index: 0 },
                "invalid codec list: codec number 1 has an empty name; every codec needs a name of \
                 its own (parrot_codec_api::export_codecs! checks this when the library is compiled)",
            ),
        ];
        for (reason, message) in cases {
            assert_eq!(
                LoadErrorKind::InvalidCodecList { reason }.to_string(),
                message
            );
        }
    }
}
