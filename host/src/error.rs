use std::fmt;
use std::path::PathBuf;

use parrot_codec_api::CodecError;

use crate::loader::LoadErrorKind;

/// Everything that can go wrong while building a [`crate::Host`] or using it.
///
/// Each message is one line naming what was wrong and where: the manifest file (and line when
/// TOML gives one), the entry, the key, the codec, the library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A manifest exists but cannot be read.
    #[error("{file}: cannot read: {source}")]
    ReadManifest {
        /// The manifest.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A plugin source directory exists but cannot be listed.
    #[error("{dir}: cannot list plugin source directory: {source}")]
    ReadSource {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
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

    /// An entry names a codec no source provides.
    #[error("{}: entry \"{entry}\": unknown codec \"{codec}\" (known: {known})", at(.file, *.line))]
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

    /// `[plugin] library` points outside the package folder.
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

    /// A plugin library could not be loaded.
    #[error("{}: {kind} (declared by {})", .library.display(), .manifest.display())]
    Load {
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

    /// The glob keys of all manifests, each valid, are too many or too large to compile
    /// together.
    #[error("the glob keys of the manifests cannot be compiled together: {source}")]
    GlobSet {
        /// globset's error.
        source: globset::Error,
    },

    /// A tee store already holds the key.
    #[error("tee store: key \"{key}\" is already taken")]
    TeeKeyExists {
        /// The key.
        key: String,
    },

    /// A tee store failed.
    #[error("tee store {store}: {message}")]
    TeeStore {
        /// The store (its path, or "memory").
        store: String,
        /// What failed.
        message: String,
    },

    /// A tee store file cannot be opened: its directory cannot be created, it cannot be read, it
    /// is not a SQLite database or is truncated, or it belongs to another application.
    #[error("{}: cannot open as a tee store: {message}", .file.display())]
    TeeStoreOpen {
        /// The store file.
        file: PathBuf,
        /// What is wrong with it.
        message: String,
    },

    /// A codec call failed: it returned an error or panicked.
    #[error("tool \"{tool}\": codec \"{codec}\": {source}")]
    Codec {
        /// The tool whose result was being compressed.
        tool: String,
        /// The codec.
        codec: String,
        /// The codec's error; [`parrot_codec_api::ErrorKind::Panicked`] for a panic.
        source: Box<CodecError>,
    },

    /// The MCP proxy cannot start its server.
    #[error("cannot start the MCP server {command}: {source}")]
    McpSpawn {
        /// The server's command line.
        command: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// The MCP server ended while the client was still connected: it exited, was killed by a
    /// signal, or closed its output.
    #[error("MCP server {how}")]
    McpServerEnded {
        /// How it ended: "exited with status 3", "was killed by signal 9", "closed its output".
        how: String,
        /// Its exit code, when it exited with one.
        code: Option<i32>,
    },
}

/// All the errors found while building a [`crate::Host`]: building does not stop at the first,
/// so a person sees every mistake at once.
#[derive(Debug)]
pub struct BuildError {
    /// The errors, in the order the sources were read.
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

impl From<Error> for BuildError {
    fn from(err: Error) -> BuildError {
        BuildError { errors: vec![err] }
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
