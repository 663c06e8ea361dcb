//! What can go wrong, by concern: a manifest ([`ManifestError`]), loading a plugin
//! ([`LoadError`]), a builder setting ([`SettingsError`]), a tee store ([`TeeError`]), a codec
//! called through [`crate::Host::compress`] ([`CompressError`]), a payload given to
//! [`crate::Host::expand`] ([`ExpandError`]).
//! [`Error`] is any of them; [`BuildError`] is every error one build found.
//!
//! Each message is one line naming what was wrong and where: the manifest file (and line when
//! TOML gives one), the entry, the key, the codec, the library, the setting.

use std::fmt;
use std::path::PathBuf;

use parrot_codec_api::{CodecError, CodecListError};

// A tee store's errors are the tee interface's, in `parrot-tee`, so that a store built on it
// needs nothing of the host; `crate::error::TeeError` stays their path here.
pub use parrot_tee::{NamespaceError, TeeError};

/// Any error of the host, by concern.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A manifest is unreadable or wrong.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A plugin source or library could not be used.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A builder setting is out of its range.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A tee store failed.
    #[error(transparent)]
    Tee(#[from] TeeError),
    /// A codec call failed.
    #[error(transparent)]
    Compress(#[from] CompressError),
    /// A payload could not be expanded.
    #[error(transparent)]
    Expand(#[from] ExpandError),
}

/// A manifest that cannot be read, or a key in it that is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// A manifest exists but cannot be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The manifest.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A manifest is larger than [`crate::MAX_MANIFEST_BYTES`].
    #[error(
        "{}: {size} bytes, over the limit of {limit} bytes for a manifest (a manifest this large \
         would cost seconds and gigabytes at every start; split it, or use glob keys)",
        .file.display()
    )]
    TooLarge {
        /// The manifest.
        file: PathBuf,
        /// Its size in bytes (as far as it was read).
        size: u64,
        /// The limit, [`crate::MAX_MANIFEST_BYTES`].
        limit: u64,
    },

    /// A manifest is not valid TOML.
    #[error("{}: {message}", at(.file, *.line))]
    Syntax {
        /// The manifest.
        file: String,
        /// The line of the error, when TOML gives one.
        line: Option<usize>,
        /// The parser's message.
        message: String,
    },

    /// A key the manifest format does not have.
    #[error("{}: {}unknown key \"{key}\"{} (expected: {expected})", at(.file, *.line), entry_prefix(.entry), did_you_mean(.suggestion))]
    UnknownKey {
        /// The manifest.
        file: String,
        /// The line of the key.
        line: Option<usize>,
        /// The entry (tool pattern) the key is in, if any.
        entry: Option<String>,
        /// The unknown key.
        key: String,
        /// The nearest valid key, for a likely misspelling.
        suggestion: Option<&'static str>,
        /// The valid keys at that place.
        expected: &'static str,
    },

    /// A required key is absent.
    #[error("{}: {}missing key \"{key}\"", at(.file, *.line), entry_prefix(.entry))]
    MissingKey {
        /// The manifest.
        file: String,
        /// The line of the table that lacks the key.
        line: Option<usize>,
        /// The entry, if any.
        entry: Option<String>,
        /// The missing key.
        key: &'static str,
    },

    /// A key holds a value of the wrong type or out of range.
    #[error("{}: {}key \"{key}\": {message}", at(.file, *.line), entry_prefix(.entry))]
    InvalidValue {
        /// The manifest.
        file: String,
        /// The line of the value.
        line: Option<usize>,
        /// The entry, if any.
        entry: Option<String>,
        /// The key.
        key: String,
        /// What is wrong and what is expected.
        message: String,
    },

    /// An entry's tool pattern is empty or not a valid glob.
    #[error("{}: entry \"{entry}\": {message}", at(.file, *.line))]
    InvalidPattern {
        /// The manifest.
        file: String,
        /// The line of the entry.
        line: Option<usize>,
        /// The pattern.
        entry: String,
        /// What is wrong.
        message: String,
    },

    /// The glob keys of all manifests, each valid on its own, are too many or too large to
    /// compile together.
    #[error("the glob keys of the manifests cannot be compiled together: {source}")]
    GlobSet {
        /// globset's error.
        source: globset::Error,
    },

    /// An entry names a codec no source provides.
    #[error("{}: entry \"{entry}\": unknown codec \"{codec}\" (known: {known}){}", at(.file, *.line), did_you_mean(.suggestion))]
    UnknownCodec {
        /// The manifest.
        file: String,
        /// The line of the `codec` key.
        line: Option<usize>,
        /// The entry.
        entry: String,
        /// The codec named.
        codec: String,
        /// The codecs that are registered.
        known: String,
        /// The known codec nearest the one named, when one is near.
        suggestion: Option<&'static str>,
    },

    /// A codec refused an entry's params (or its constructor failed or panicked).
    #[error("{}: entry \"{entry}\": codec \"{codec}\"{}: {source}", at(.file, *.line), from_library(.library))]
    CodecParams {
        /// The manifest.
        file: String,
        /// The line of the entry.
        line: Option<usize>,
        /// The entry.
        entry: String,
        /// The codec.
        codec: String,
        /// The plugin library providing the codec, for plugin codecs.
        library: Option<PathBuf>,
        /// The codec's error (it names the param).
        source: Box<CodecError>,
    },

    /// The project manifest has a `[plugin]` table.
    #[error("{}: [plugin] is only allowed in a plugin package's manifest, not in the project manifest", at(.file, *.line))]
    PluginInProject {
        /// The manifest.
        file: String,
        /// The line of the table.
        line: Option<usize>,
    },

    /// `[plugin] library` points outside the package folder (as written, or through a
    /// symlink).
    #[error("{}: key \"library\": \"{library}\" leaves the package folder {}; the library must sit inside it", at(.file, *.line), .package.display())]
    LibraryOutsidePackage {
        /// The manifest.
        file: String,
        /// The line of the key.
        line: Option<usize>,
        /// The value given.
        library: String,
        /// The package folder.
        package: PathBuf,
    },
}

/// A plugin source directory or a plugin library the host could not use.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A plugin source directory cannot be listed (or, given explicitly, does not exist); or
    /// the current directory, the default project, cannot be read.
    #[error("{dir}: cannot list plugin source directory: {source}")]
    ReadSource {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A plugin library could not be loaded.
    #[error("{}: {kind} (declared by {})", .library.display(), .manifest.display())]
    Library {
        /// The library path.
        library: PathBuf,
        /// The manifest that declared it.
        manifest: PathBuf,
        /// Why it failed.
        kind: LoadErrorKind,
    },

    /// A plugin library's digest differs from the one its manifest pins.
    #[error("{}: sha256 is {actual}, but {} pins {expected}; refusing to load it", .library.display(), .manifest.display())]
    DigestMismatch {
        /// The library path.
        library: PathBuf,
        /// The manifest with the `sha256` key.
        manifest: PathBuf,
        /// The pinned digest.
        expected: String,
        /// The library's digest.
        actual: String,
    },

    /// Two sources provide a codec of the same name.
    #[error("codec \"{codec}\" is provided twice: by {first} and by {second}")]
    DuplicateCodec {
        /// The codec name.
        codec: String,
        /// The first provider.
        first: String,
        /// The second provider.
        second: String,
    },

    /// A package manifest declares a codec its library does not provide.
    #[error("{}: {} declares codec \"{codec}\" but the library does not provide it (it provides: {provided})", .library.display(), .manifest.display())]
    CodecNotProvided {
        /// The library path.
        library: PathBuf,
        /// The manifest.
        manifest: PathBuf,
        /// The codec declared.
        codec: String,
        /// What the library provides.
        provided: String,
    },
}

/// Why a plugin library could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// No file at the path.
    Missing,
    /// The file exists but the dynamic loader refused it.
    NotSharedLibrary {
        /// The loader's reason.
        reason: String,
    },
    /// A shared library without a codec plugin root module.
    NotPlugin,
    /// Built with an abi_stable whose ABI differs from the host's.
    IncompatibleAbiStable,
    /// Built against an interface version the host cannot accept.
    IncompatibleVersion {
        /// The host's interface version.
        host: String,
        /// The plugin's interface version.
        plugin: String,
    },
    /// Same version numbers, but the root module's layout differs.
    LayoutMismatch {
        /// The host's interface version.
        host: String,
        /// The plugin's interface version.
        plugin: String,
        /// The first lines of abi_stable's report.
        reason: String,
    },
    /// Built with `panic = "abort"`: a panicking codec would take the host down.
    AbortsOnPanic,
    /// The library's list of codecs has a codec without a name, or one name twice.
    InvalidCodecList {
        /// The first problem in the list.
        reason: CodecListError,
    },
    /// Something other than a regular file is at the path (a FIFO, a device, a directory):
    /// the dynamic loader would block on it or fail obscurely.
    NotRegularFile {
        /// What is there instead (`"a FIFO"`).
        what: &'static str,
    },
    /// The file exists but could not be read.
    Unreadable {
        /// The I/O error.
        reason: String,
    },
    /// The library's root module constructor failed or panicked.
    Constructor {
        /// What went wrong.
        reason: String,
    },
}

impl fmt::Display for LoadErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadErrorKind::Missing => f.write_str("library file not found"),
            LoadErrorKind::NotSharedLibrary { reason } => {
                write!(f, "not a loadable shared library ({reason})")
            }
            LoadErrorKind::NotPlugin => f.write_str(
                "a shared library, but not a parrot-compress codec plugin \
                 (it exports no root module; build it with parrot_codec_api::export_codecs!)",
            ),
            LoadErrorKind::IncompatibleAbiStable => f.write_str(
                "built with an abi_stable version incompatible with this host's; \
                 rebuild it against parrot-codec-api",
            ),
            LoadErrorKind::IncompatibleVersion { host, plugin } => write!(
                f,
                "incompatible interface version: plugin built against parrot-codec-api {plugin}, \
                 this host speaks {host} (the major version must match, and for 0.x the minor too); \
                 rebuild the plugin against parrot-codec-api {host}"
            ),
            LoadErrorKind::LayoutMismatch {
                host,
                plugin,
                reason,
            } => write!(
                f,
                "incompatible interface layout: plugin built against parrot-codec-api {plugin}, \
                 this host speaks {host}: {reason}"
            ),
            LoadErrorKind::AbortsOnPanic => f.write_str(
                "built with panic = \"abort\": a panicking codec would abort the host; \
                 rebuild it with panic = \"unwind\"",
            ),
            LoadErrorKind::InvalidCodecList { reason } => write!(
                f,
                "invalid codec list: {reason}; every codec needs a name of its own \
                 (parrot_codec_api::export_codecs! checks this when the library is compiled)"
            ),
            LoadErrorKind::NotRegularFile { what } => {
                write!(
                    f,
                    "not a regular file ({what}); a plugin library must be a file"
                )
            }
            LoadErrorKind::Unreadable { reason } => write!(f, "cannot read: {reason}"),
            LoadErrorKind::Constructor { reason } => {
                write!(
                    f,
                    "the library's root module failed to initialize: {reason}"
                )
            }
        }
    }
}

/// A builder setting whose value is meaningless; [`crate::Budgets`] and
/// [`crate::BreakerConfig`] say which values are allowed and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A setting is out of its allowed range.
    #[error("{settings}: key \"{key}\": {value} {problem} (expected {expected})")]
    OutOfRange {
        /// The settings type: `Budgets` or `BreakerConfig`.
        settings: &'static str,
        /// The field.
        key: &'static str,
        /// The value given, as it reads in Rust (`0`, `0ns`).
        value: String,
        /// What the value would do.
        problem: &'static str,
        /// The values allowed.
        expected: &'static str,
    },
}

/// A codec call through [`crate::Host::compress`] failed: the codec returned an error or
/// panicked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[error("tool \"{tool}\": codec \"{codec}\": {source}")]
pub struct CompressError {
    /// The tool whose result was being compressed.
    pub tool: String,
    /// The codec.
    pub codec: String,
    /// The codec's error; [`parrot_codec_api::ErrorKind::Panicked`] for a panic.
    pub source: Box<CodecError>,
}

/// A payload that [`crate::Host::expand`] cannot give back as the original it was made from.
/// Each message says what to do instead: the codec to name, or the command that returns the
/// original from the tee store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExpandError {
    /// The payload is a lossy output: it carries a tee pointer whose reason is not `lossless`
    /// (`lossy`, or `cut` for a result cut to size). No codec can rebuild what was left out;
    /// the tee store holds the original under the pointer's key.
    #[error(
        "the payload is a lossy output (its tee pointer's reason is \"{reason}\"): no codec can \
         rebuild its original from it; the tee store holds the original: parrot-compress recover {key}"
    )]
    Lossy {
        /// The key the pointer names.
        key: String,
        /// The pointer's reason (`lossy`, `cut`).
        reason: String,
    },

    /// No source provides a codec of that name.
    #[error("unknown codec \"{codec}\" (known: {known}){}", did_you_mean(.suggestion))]
    UnknownCodec {
        /// The name given.
        codec: String,
        /// The codecs that are registered, comma-separated.
        known: String,
        /// The known codec nearest the one named, when one is near.
        suggestion: Option<&'static str>,
    },

    /// The name is the router's, `auto`: it chooses a codec for each payload and has no
    /// inverse of its own.
    #[error(
        "codec \"auto\" is the router, not a codec: it chooses a codec for each payload and has \
         no inverse; name the codec that produced the payload, the \"compression_codec\" of its \
         metadata (compress --meta)"
    )]
    Router,

    /// The codec declares no inverse ([`parrot_codec_api::Codec::INVERSE`]).
    #[error(
        "codec \"{codec}\" offers no inverse: its outputs cannot be expanded (the original of a \
         lossy output is in the tee store: parrot-compress recover KEY, KEY from its \"_tee\" pointer)"
    )]
    NoInverse {
        /// The codec.
        codec: String,
    },

    /// The codec could not be built (a plugin codec that needs params no entry gives it).
    #[error("codec \"{codec}\": cannot be built: {source}")]
    Build {
        /// The codec.
        codec: String,
        /// Its constructor's error (it names the param).
        source: Box<CodecError>,
    },

    /// The codec's inverse refused the payload: it is not that codec's output.
    #[error("codec \"{codec}\" cannot expand this payload: {source}")]
    Codec {
        /// The codec.
        codec: String,
        /// The inverse's error; [`parrot_codec_api::ErrorKind::Panicked`] for a plugin's panic.
        source: Box<CodecError>,
    },
}

/// All the errors found while building a [`crate::Host`]: building does not stop at the first,
/// so a person sees every mistake at once.
#[derive(Debug)]
pub struct BuildError {
    /// The errors: the manifests' and the plugins', in the order the sources were read, then
    /// the entries', then the builder's settings.
    pub errors: Vec<Error>,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, err) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{err}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

impl<E: Into<Error>> From<E> for BuildError {
    fn from(err: E) -> BuildError {
        BuildError {
            errors: vec![err.into()],
        }
    }
}

fn at(file: &str, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_owned(),
    }
}

fn entry_prefix(entry: &Option<String>) -> String {
    match entry {
        Some(entry) => format!("entry \"{entry}\": "),
        None => String::new(),
    }
}

fn did_you_mean(suggestion: &Option<&'static str>) -> String {
    match suggestion {
        Some(near) => format!("; did you mean \"{near}\"?"),
        None => String::new(),
    }
}

fn from_library(library: &Option<PathBuf>) -> String {
    match library {
        Some(library) => format!(" (from {})", library.display()),
        None => String::new(),
    }
}
