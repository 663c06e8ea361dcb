//! Plugin packages laid out for tests, from the libraries cargo built. The layout is the
//! host's ([`Package`], [`library_file_name`]), re-exported here; what this module adds finds
//! and builds the libraries.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};

pub use parrot_host::{Package, library_file_name};

/// What can go wrong laying out a package or building and finding a plugin library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or folder could not be read, written or copied.
    #[error("{}: cannot {action}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What was being done (`create the package folder`, `copy the library`, …).
        action: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A cargo command failed or could not start.
    #[error("`{command}` failed: {reason}")]
    Cargo {
        /// The command line.
        command: String,
        /// Its exit status, or why it did not run.
        reason: String,
    },
    /// No built library of that crate where cargo puts them.
    #[error(
        "no library of crate \"{crate_name}\" was built (looked for {}); build it first, e.g. with build_plugins",
        searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
    )]
    NotBuilt {
        /// The crate's name, with underscores (`parrot_plugin_line_dedup`).
        crate_name: String,
        /// The paths looked at.
        searched: Vec<PathBuf>,
    },
    /// The host refused the configuration of a [`crate::Stage`].
    #[error("the host refused the stage's configuration: {0}")]
    Host(#[source] Box<parrot_host::BuildError>),
    /// The running executable is not where cargo puts tests and benchmarks.
    #[error(
        "{}: not a test or benchmark executable inside a cargo target folder (target/<profile>/deps)",
        exe.display()
    )]
    NoTargetFolder {
        /// The running executable.
        exe: PathBuf,
    },
}

/// A [`Package`] that could not be laid out, as this crate's [`Error::Io`], so that `?` takes
/// it in a function returning [`Error`].
impl From<parrot_host::PackageError> for Error {
    fn from(err: parrot_host::PackageError) -> Error {
        Error::Io {
            path: err.path,
            action: err.action,
            source: err.source,
        }
    }
}

/// The text of a package manifest whose `[plugin]` table declares the library `library` (its
/// crate name, `parrot_plugin_shout`), followed by `rest` (more `[plugin]` keys, entries).
///
/// # Examples
///
/// ```
/// let manifest = parrot_codec_test::plugin_manifest("parrot_plugin_shout", "codecs = [\"shout\"]\n");
/// assert_eq!(manifest, "[plugin]\nlibrary = \"parrot_plugin_shout\"\ncodecs = [\"shout\"]\n");
/// ```
pub fn plugin_manifest(library: &str, rest: &str) -> String {
    format!("[plugin]\nlibrary = \"{library}\"\n{rest}")
}

/// The folder of the running test's or benchmark's profile, `target/<profile>`: where
/// `cargo build` puts the libraries of a workspace (and `target/<profile>/deps` those built as
/// dependencies).
///
/// # Errors
///
/// [`Error::NoTargetFolder`] when the running executable is not in such a folder (a doctest).
pub fn profile_dir() -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        path: PathBuf::from("the running executable"),
        action: "find the path of",
        source,
    })?;
    let dir = exe.parent().and_then(|dir| match dir.file_name() {
        Some(name) if name == "deps" || name == "examples" => dir.parent(),
        _ => Some(dir),
    });
    dir.filter(|dir| dir.parent().is_some())
        .map(Path::to_path_buf)
        .ok_or(Error::NoTargetFolder { exe })
}

/// Every `.json` and `.txt` file directly in `dir`, as `(file name, text)` sorted by name:
/// real tool results to hold a codec to its contract on ([`crate::check_all`]).
///
/// # Examples
///
/// ```
/// let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
/// let inputs = parrot_codec_test::inputs(corpus).unwrap();
/// assert!(inputs.iter().any(|(name, _)| name == "build-log.txt"));
/// ```
///
/// # Errors
///
/// [`Error::Io`] naming the folder or the file that cannot be read (a file that is not UTF-8
/// included).
pub fn inputs(dir: impl AsRef<Path>) -> Result<Vec<(String, String)>, Error> {
    let dir = dir.as_ref();
    let io = |path: &Path, action| {
        let path = path.to_path_buf();
        move |source| Error::Io {
            path,
            action,
            source,
        }
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir, "list the inputs in"))? {
        let path = entry.map_err(io(dir, "list the inputs in"))?.path();
        if !path
            .extension()
            .is_some_and(|ext| ext == "json" || ext == "txt")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(io(&path, "read the input"))?;
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push((name, text));
    }
    files.sort();
    Ok(files)
}

/// The built plugin library (`cdylib`) of the crate `crate_name` (with underscores,
/// `parrot_plugin_line_dedup`): the one in the profile's `deps` folder, where cargo builds it (as a
/// dependency of the running test, or by [`build_plugins`]), else the copy `cargo build` puts in
/// the profile folder.
///
/// # Errors
///
/// [`Error::NotBuilt`] naming the paths looked at, [`Error::NoTargetFolder`] outside a cargo
/// target folder.
pub fn cdylib(crate_name: &str) -> Result<PathBuf, Error> {
    let file = library_file_name(crate_name);
    let profile = profile_dir()?;
    let searched = vec![profile.join("deps").join(&file), profile.join(&file)];
    match searched.iter().find(|path| path.is_file()) {
        Some(path) => Ok(path.clone()),
        None => Err(Error::NotBuilt {
            crate_name: crate_name.to_owned(),
            searched,
        }),
    }
}

/// Builds every library of the workspace at `dir` (`cargo build --workspace --lib`), once per
/// process: the plugin libraries [`cdylib`] then finds.
///
/// # Errors
///
/// See [`Cargo::run_once`].
pub fn build_plugins(dir: impl Into<PathBuf>) -> Result<(), Error> {
    Cargo::build(dir).args(["--workspace", "--lib"]).run_once()
}

/// A cargo command run in a workspace by the cargo that runs the tests (`$CARGO`), into the
/// running executable's target folder and profile, at most once per process.
///
/// Cargo builds a crate again when its features differ from the last build, and the features
/// of a build that includes tests (dev-dependencies) can differ from one without them: a
/// `cargo build` run from `cargo test` that selects no test target can rebuild half the
/// dependency tree. Select the running test target too (`--test NAME`) so that both resolve the
/// same features and the nested build only adds what is missing.
///
/// # Examples
///
/// ```no_run
/// // In an integration test `tests/integration/main.rs` of a workspace's member `tests`:
/// parrot_codec_test::Cargo::build(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
///     .args(["--workspace", "--lib", "--bins", "--test", "integration"])
///     .run_once()
///     .expect("the workspace builds");
/// ```
#[derive(Debug, Clone)]
pub struct Cargo {
    dir: PathBuf,
    subcommand: String,
    args: Vec<String>,
}

/// A command run in this process: its folder, its command line and its result.
struct Run {
    dir: PathBuf,
    line: Vec<String>,
    result: Result<(), String>,
}

/// The commands run in this process.
static RUNS: Mutex<Vec<Run>> = Mutex::new(Vec::new());

impl Cargo {
    /// `cargo <subcommand>` run in `dir`.
    pub fn new(dir: impl Into<PathBuf>, subcommand: &str) -> Cargo {
        Cargo {
            dir: dir.into(),
            subcommand: subcommand.to_owned(),
            args: Vec::new(),
        }
    }

    /// `cargo build` run in `dir`.
    pub fn build(dir: impl Into<PathBuf>) -> Cargo {
        Cargo::new(dir, "build")
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Cargo
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Runs the command, unless this process already ran the same command (then returns its
    /// result). Calls from several threads at once run it once; the others wait for it.
    ///
    /// # Errors
    ///
    /// [`Error::Cargo`] when cargo fails (its messages went to the standard error) or cannot
    /// start, [`Error::NoTargetFolder`] outside a cargo target folder.
    pub fn run_once(&self) -> Result<(), Error> {
        let mut runs = RUNS.lock().unwrap_or_else(PoisonError::into_inner);
        let line = self.line();
        let result = match runs
            .iter()
            .find(|run| run.dir == self.dir && run.line == line)
        {
            Some(run) => run.result.clone(),
            None => {
                let result = self.run();
                runs.push(Run {
                    dir: self.dir.clone(),
                    line: line.clone(),
                    result: result.clone(),
                });
                result
            }
        };
        result.map_err(|reason| Error::Cargo {
            command: format!("cargo {}", line.join(" ")),
            reason,
        })
    }

    /// The subcommand and its arguments.
    fn line(&self) -> Vec<String> {
        std::iter::once(self.subcommand.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// The command [`Cargo::run_once`] runs, to run yourself: to read its output, or to run
    /// it again.
    ///
    /// # Errors
    ///
    /// [`Error::NoTargetFolder`] outside a cargo target folder.
    pub fn command(&self) -> Result<Command, Error> {
        let profile = profile_dir()?;
        let target = profile.parent().unwrap_or(&profile);
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        command
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", target)
            .arg(&self.subcommand);
        // The profile flag goes before the arguments: they may end with `-- <rustc flags>`.
        match profile.file_name().and_then(|name| name.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                command.arg("--release");
            }
            Some(other) => {
                command.args([OsString::from("--profile"), other.into()]);
            }
        }
        command.args(&self.args);
        Ok(command)
    }

    fn run(&self) -> Result<(), String> {
        let mut command = self.command().map_err(|err| err.to_string())?;
        let status = command
            .status()
            .map_err(|err| format!("cannot start cargo: {err}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(status.to_string())
        }
    }
}
