//! Building a host: discovering manifests in precedence order, loading plugin libraries,
//! registering codecs and constructing every entry's codec.
//!
//! Sources, highest precedence first:
//! 1. the project manifest, `<project>/.parrot/compressors.toml`;
//! 2. plugin packages, in the order their source directories are given: the host's explicit
//!    directories ([`HostBuilder::plugin_dir`], `--plugins DIR`), then `PARROT_PLUGIN_PATH`
//!    (`:`-separated), then `<project>/.parrot/plugins`. A source directory is a package (it
//!    holds a `compressors.toml`) or a folder of packages, taken in name order;
//! 3. the core defaults compiled into the host.
//!
//! Every package's library is loaded before any entry is validated, so an entry may name a
//! codec any package provides. The first source to declare a key wins the whole entry (params
//! are not merged); a project or package entry with the key of a core entry logs a warning
//! that it "shadows" it.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parrot_codec_api::{DynCodec, Level, Outcome, Payload};
use serde_json::Map;
use sha2::{Digest, Sha256};

#[cfg(feature = "tokio")]
use crate::budget::Router;
use crate::budget::{BreakerConfig, Budgets, Clock, SystemClock};
use crate::call::{Call, Processed};
#[cfg(feature = "tokio")]
use crate::call::{OwnedCall, OwnedInput, Skip};
use crate::entries::{EntryTable, MatchKind, Resolution, ResolvedEntry};
use crate::error::{BuildError, Error};
use crate::loader;
use crate::manifest::{self, CORE_MANIFEST, CORE_MANIFEST_NAME, Manifest, SourceKind};
use crate::observe::Observer;
use crate::pipeline::{self, Run, Settings, Stage, Verification};
use crate::registry::Registry;
use crate::report::Report;
use crate::tee::TeeStore;
use crate::tokens::{TokenCounter, Tokenizer};

/// The environment variable listing plugin source directories, `:`-separated.
pub const PLUGIN_PATH_ENV: &str = "PARROT_PLUGIN_PATH";

/// Builds a [`Host`]. Everything is validated in [`HostBuilder::build`]: nothing is left to
/// fail at the first tool call.
///
/// # Examples
///
/// ```
/// use parrot_host::Host;
///
/// let dir = std::env::temp_dir().join("parrot-doc-builder");
/// std::fs::create_dir_all(&dir).unwrap();
/// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
/// assert!(host.registry().get("json_compact").is_some());
/// assert_eq!(host.resolve("anything").entry.unwrap().codec_name, "json_compact");
/// ```
#[derive(Clone, Default)]
pub struct HostBuilder {
    project: Option<PathBuf>,
    plugin_dirs: Vec<PathBuf>,
    plugin_path: Option<Option<OsString>>,
    tee: Option<Arc<dyn TeeStore>>,
    observers: Vec<Arc<dyn Observer>>,
    tokenizer: Option<Arc<dyn TokenCounter>>,
    budgets: Option<Budgets>,
    breaker: Option<BreakerConfig>,
    clock: Option<Arc<dyn Clock>>,
    kill_switch: Option<bool>,
    inline_at_any_size: bool,
    tee_lossless: bool,
    max_result_chars: Option<usize>,
    verification: Option<Verification>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("project", &self.project)
            .field("plugin_dirs", &self.plugin_dirs)
            .field("plugin_path", &self.plugin_path)
            .field("tee", &self.tee.is_some())
            .finish()
    }
}

impl HostBuilder {
    /// The project root (default: the current directory). Its manifest is
    /// `<project>/.parrot/compressors.toml`; its own plugin source `<project>/.parrot/plugins`.
    pub fn project(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.project = Some(dir.into());
        self
    }

    /// Adds a plugin source directory, after those already added and ahead of
    /// `PARROT_PLUGIN_PATH` and the project's own.
    pub fn plugin_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// Replaces the value of `PARROT_PLUGIN_PATH` (read from the environment by default);
    /// `None` ignores the variable.
    pub fn plugin_path(&mut self, value: Option<OsString>) -> &mut Self {
        self.plugin_path = Some(value);
        self
    }

    /// The store that keeps the original of every lossy outcome. Without one (the default),
    /// `normal` and `aggressive` are capped to `minimal`: nothing goes lossy without a way back.
    pub fn tee_store(&mut self, store: Arc<dyn TeeStore>) -> &mut Self {
        self.tee = Some(store);
        self
    }

    /// Adds an observer of processed calls (the savings report is always attached).
    pub fn observer(&mut self, observer: Arc<dyn Observer>) -> &mut Self {
        self.observers.push(observer);
        self
    }

    /// The tokenizer for token counts (default `o200k_base`).
    pub fn tokenizer(&mut self, tokenizer: Arc<dyn TokenCounter>) -> &mut Self {
        self.tokenizer = Some(tokenizer);
        self
    }

    /// The router's thresholds and latency budgets.
    pub fn budgets(&mut self, budgets: Budgets) -> &mut Self {
        self.budgets = Some(budgets);
        self
    }

    /// The circuit breaker's windows and cooldown.
    pub fn breaker(&mut self, config: BreakerConfig) -> &mut Self {
        self.breaker = Some(config);
        self
    }

    /// The clock of the breaker and the budgets (default: the system clock).
    pub fn clock(&mut self, clock: Arc<dyn Clock>) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// Forces the kill switch on or off; by default each call reads
    /// `PARROT_COMPRESSION_DISABLED` (`1` disables compression).
    pub fn kill_switch(&mut self, on: Option<bool>) -> &mut Self {
        self.kill_switch = on;
        self
    }

    /// Compresses inline at any size instead of passing large payloads through (what the
    /// command does: a person who runs it asked for the result).
    pub fn inline_at_any_size(&mut self, yes: bool) -> &mut Self {
        self.inline_at_any_size = yes;
        self
    }

    /// Also keeps the original of every lossless outcome that changed the payload, with a
    /// `_tee` pointer whose reason is `lossless` (default off: the contract tees lossy outcomes
    /// only). For callers whose consumer may need the exact text back, not only an equal
    /// value: an agent that read a JSON file through the MCP proxy and then edits it must
    /// quote its bytes. Needs a tee store; the pointer counts for the no-gain rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Call, Host, Input, MemoryTeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-tee-lossless");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .tee_store(Arc::new(MemoryTeeStore::default()))
    ///     .tee_lossless(true)
    ///     .build()
    ///     .unwrap();
    /// let rows: Vec<String> = (0..60).map(|i| format!("  {{ \"id\": {i} }}")).collect();
    /// let input = format!("[\n{}\n]", rows.join(",\n"));
    /// let out = host.process(Call::new("read_file", Input::Text(&input)));
    /// let key = out.meta.tee_key.clone().unwrap();
    /// assert!(out.text().unwrap().ends_with(&format!(
    ///     r#""_tee":{{"key":"{key}","reason":"lossless","hint":"use wm_get_result for the full payload"}}}}"#
    /// )));
    /// assert_eq!(host.recover(&key).unwrap().unwrap(), input.as_bytes());
    /// ```
    pub fn tee_lossless(&mut self, yes: bool) -> &mut Self {
        self.tee_lossless = yes;
        self
    }

    /// The last line of defense: final payloads over this many code points are cut (with a
    /// tee store). Default 200,000; 0 disables.
    pub fn max_result_chars(&mut self, max: usize) -> &mut Self {
        self.max_result_chars = Some(max);
        self
    }

    /// How outcomes claimed lossless are verified through the codec's inverse.
    pub fn verification(&mut self, verification: Verification) -> &mut Self {
        self.verification = Some(verification);
        self
    }

    /// Discovers and validates every manifest, loads every plugin library, and builds every
    /// entry's codec.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] listing every error found, each naming the file, entry and key (or the
    /// library and the manifest that declared it).
    pub fn build(&self) -> Result<Host, BuildError> {
        let project = match &self.project {
            Some(dir) => absolute(dir),
            None => std::env::current_dir().map_err(|source| Error::ReadSource {
                dir: PathBuf::from("."),
                source,
            })?,
        };
        let mut errors = Vec::new();
        let mut manifests = Vec::new();

        let project_manifest = project.join(".parrot").join("compressors.toml");
        if let Some(text) = read_manifest(&project_manifest, &mut errors) {
            let name = project_manifest.display().to_string();
            manifests.extend(manifest::parse(
                &name,
                Some(&project_manifest),
                SourceKind::Project,
                &text,
                &mut errors,
            ));
        }
        for package in self.packages(&project, &mut errors) {
            let path = package.join("compressors.toml");
            if let Some(text) = read_manifest(&path, &mut errors) {
                let name = path.display().to_string();
                manifests.extend(manifest::parse(
                    &name,
                    Some(&path),
                    SourceKind::Package,
                    &text,
                    &mut errors,
                ));
            }
        }
        manifests.extend(manifest::parse(
            CORE_MANIFEST_NAME,
            None,
            SourceKind::Core,
            CORE_MANIFEST,
            &mut errors,
        ));

        let mut registry = Registry::with_builtins();
        for manifest in &manifests {
            load_plugin(manifest, &mut registry, &mut errors);
        }
        let table = EntryTable::build(&manifests, &registry, &mut errors);
        if !errors.is_empty() {
            return Err(BuildError { errors });
        }
        let fallback = registry
            .instantiate("json_compact", Map::new())
            .map_err(|source| Error::CodecParams {
                file: CORE_MANIFEST_NAME.to_owned(),
                line: None,
                entry: "<no entry>".to_owned(),
                codec: "json_compact".to_owned(),
                library: None,
                source: Box::new(source),
            })?;
        Ok(Host {
            project,
            manifests: manifests
                .into_iter()
                .map(|m| SourceInfo {
                    name: m.name,
                    kind: m.kind,
                    library: m.plugin.map(|p| p.library),
                })
                .collect(),
            registry,
            table,
            fallback,
            tee: self.tee.clone(),
            stage: self.stage(),
        })
    }

    fn stage(&self) -> Stage {
        let tokenizer: Arc<dyn TokenCounter> = self
            .tokenizer
            .clone()
            .unwrap_or_else(|| Arc::new(Tokenizer::default()));
        let settings = Settings {
            budgets: self.budgets.unwrap_or_default(),
            breaker: self.breaker.unwrap_or_default(),
            clock: self.clock.clone().unwrap_or_else(|| Arc::new(SystemClock)),
            kill_switch: self.kill_switch,
            inline_at_any_size: self.inline_at_any_size,
            tee_lossless: self.tee_lossless,
            max_result_chars: self.max_result_chars.unwrap_or(200_000),
            verification: self.verification.unwrap_or_default(),
        };
        Stage::new(settings, tokenizer, &self.observers)
    }

    /// The package folders, in precedence order, each once.
    fn packages(&self, project: &Path, errors: &mut Vec<Error>) -> Vec<PathBuf> {
        let env = match &self.plugin_path {
            Some(value) => value.clone(),
            None => std::env::var_os(PLUGIN_PATH_ENV),
        };
        let mut sources: Vec<(PathBuf, bool)> = self
            .plugin_dirs
            .iter()
            .map(|d| (absolute(d), true))
            .collect();
        if let Some(env) = env {
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
                    errors.push(Error::ReadSource {
                        source: std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            "no such directory",
                        ),
                        dir,
                    });
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
}

/// Messages name files by absolute path, whatever the caller gave.
fn absolute(path: &Path) -> PathBuf {
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
            errors.push(Error::ReadSource {
                dir: dir.to_path_buf(),
                source,
            });
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
            errors.push(Error::ReadManifest {
                file: path.to_path_buf(),
                source,
            });
            None
        }
    }
}

fn load_plugin(manifest: &Manifest, registry: &mut Registry, errors: &mut Vec<Error>) {
    let (Some(plugin), Some(manifest_path)) = (&manifest.plugin, &manifest.path) else {
        return;
    };
    let load_error = |kind| Error::Load {
        library: plugin.library.clone(),
        manifest: manifest_path.clone(),
        kind,
    };
    // The library must stay inside its package even through symlinks.
    if let (Ok(library), Some(Ok(package))) = (
        plugin.library.canonicalize(),
        manifest_path.parent().map(Path::canonicalize),
    ) && !library.starts_with(&package)
    {
        errors.push(Error::LibraryOutsidePackage {
            file: manifest.name.clone(),
            line: plugin.line,
            library: plugin.library.display().to_string(),
            package,
        });
        return;
    }
    if let Some(expected) = &plugin.sha256 {
        let actual = match std::fs::read(&plugin.library) {
            Ok(bytes) => hex(&Sha256::digest(&bytes)),
            Err(_) => {
                errors.push(load_error(loader::LoadErrorKind::Missing));
                return;
            }
        };
        if &actual != expected {
            errors.push(Error::DigestMismatch {
                library: plugin.library.clone(),
                manifest: manifest_path.clone(),
                expected: expected.clone(),
                actual,
            });
            return;
        }
    }
    let library = match loader::load(&plugin.library) {
        Ok(library) => library,
        Err(kind) => {
            errors.push(load_error(kind));
            return;
        }
    };
    registry.add_library(library, manifest_path, errors);
    let provided: Vec<&str> = library
        .module
        .codecs()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    for codec in &plugin.codecs {
        if !provided.contains(&codec.as_str()) {
            errors.push(Error::CodecNotProvided {
                library: library.path.to_path_buf(),
                manifest: manifest_path.clone(),
                codec: codec.clone(),
                provided: provided.join(", "),
            });
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

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

/// A built host: manifests validated, plugins loaded, every entry's codec constructed.
pub struct Host {
    project: PathBuf,
    manifests: Vec<SourceInfo>,
    registry: Registry,
    table: EntryTable,
    fallback: Arc<dyn DynCodec>,
    tee: Option<Arc<dyn TeeStore>>,
    stage: Stage,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("project", &self.project)
            .field("sources", &self.manifests)
            .field("entries", &self.table.entries())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A builder with the defaults: the current directory as project, `PARROT_PLUGIN_PATH`
    /// from the environment.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The project root.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The manifests read, in precedence order.
    pub fn sources(&self) -> &[SourceInfo] {
        &self.manifests
    }

    /// Every codec the host can use.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The winning entries, in precedence order.
    pub fn entries(&self) -> &[ResolvedEntry] {
        self.table.entries()
    }

    /// Entries that lost to an entry with the same key in a higher-precedence source.
    pub fn shadowed(&self) -> &[ResolvedEntry] {
        self.table.shadowed()
    }

    /// Warnings found while building (shadowed core entries).
    pub fn warnings(&self) -> &[String] {
        self.table.warnings()
    }

    /// The codec used when no entry matches: `json_compact` with default params.
    pub fn fallback_codec(&self) -> &dyn DynCodec {
        &*self.fallback
    }

    /// Runs the codec of the entry that applies to `tool` (see [`Host::resolve`]) on
    /// `payload` at `level`, exactly as given: no level capping, no size rules, no tee.
    ///
    /// # Errors
    ///
    /// [`Error::Codec`] naming the tool and the codec when the codec returns an error or
    /// panics (a plugin's panic is caught inside the plugin and arrives as an error).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{Host, Level, Outcome, Payload};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-compress");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// let outcome = host.compress("any_tool", Payload::text_only("plain text"), Level::Minimal);
    /// assert_eq!(outcome.unwrap(), Outcome::Unchanged);
    /// ```
    pub fn compress(
        &self,
        tool: &str,
        payload: Payload<'_>,
        level: Level,
    ) -> Result<Outcome, Error> {
        let codec = match self.resolve(tool).entry {
            Some(entry) => entry.codec(),
            None => self.fallback_codec(),
        };
        codec
            .compress(payload, level)
            .map_err(|source| Error::Codec {
                tool: tool.to_owned(),
                codec: codec.name().to_owned(),
                source: Box::new(source),
            })
    }

    /// Runs one tool call through the stage: returns the payload the model will see and the
    /// call's metadata. The input is never modified; token counts follow on the observers
    /// (see [`Host::flush`]). The rules, in order, are listed in the `pipeline` module docs.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Call, Host, Input, MemoryTeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-process");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .tee_store(Arc::new(MemoryTeeStore::default()))
    ///     .build()
    ///     .unwrap();
    /// let out = host.process(Call::new("ls", Input::Text("plain text")));
    /// assert_eq!(out.text(), Some("plain text"));
    /// assert!(!out.meta.compressed);
    /// host.flush();
    /// assert_eq!(host.report().snapshot().total.calls, 1);
    /// ```
    pub fn process<'a>(&self, call: Call<'a>) -> Processed<'a> {
        self.process_on(call, false)
    }

    /// The async entry point: a payload at or over the router's thresholds runs on tokio's
    /// blocking pool (at any level: on an async caller, even a lossless pass over megabytes
    /// must not stall the runtime); a smaller one runs in place. Needs a tokio runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(feature = "tokio")] {
    /// use std::sync::Arc;
    /// use parrot_host::{Host, OwnedCall, OwnedInput};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-async");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Arc::new(Host::builder().project(&dir).plugin_path(None).build().unwrap());
    /// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let out = runtime.block_on(host.process_async(OwnedCall::new(
    ///     "t",
    ///     OwnedInput::Text("[1, 2]".into()),
    /// )));
    /// assert_eq!(out.text(), Some("[1,2]"));
    /// # }
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn process_async(self: &Arc<Self>, call: OwnedCall) -> Processed<'static> {
        let budgets = self.stage.budgets();
        let size = call.payload.len();
        // Only a payload under the size threshold is scanned for rows, on this thread.
        let big = size >= budgets.size_threshold_bytes
            || match &call.payload {
                OwnedInput::Text(text) => Router::estimate_rows(text) >= budgets.row_threshold,
                _ => false,
            };
        if !big {
            return self.process(call.as_call()).into_owned();
        }
        let host = Arc::clone(self);
        let call = Arc::new(call);
        let moved = Arc::clone(&call);
        let blocking = tokio::task::spawn_blocking(move || {
            host.process_on(moved.as_call(), true).into_owned()
        });
        match blocking.await {
            Ok(processed) => processed,
            Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            Err(_) => {
                // The runtime shut down before the blocking pool ran the call: nothing was
                // compressed, so the input goes out.
                let payload = call.as_call().payload.bytes().into_owned();
                Processed::passed_through(std::borrow::Cow::Owned(payload), Skip::BudgetPassthrough)
            }
        }
    }

    fn process_on<'a>(&self, call: Call<'a>, offloaded: bool) -> Processed<'a> {
        let resolution = self.resolve(call.tool);
        let (codec, builtin) = match resolution.entry {
            Some(entry) => (
                entry.codec(),
                self.registry
                    .get(&entry.codec_name)
                    .is_some_and(|info| info.origin == crate::registry::Origin::Builtin),
            ),
            None => (self.fallback_codec(), true),
        };
        let level = self.level_of(&resolution, call.status, call.level);
        pipeline::process(Run {
            stage: &self.stage,
            tee: self.tee.as_deref(),
            codec,
            builtin,
            level,
            call,
            offloaded,
        })
    }

    /// Waits until every processed call's tokens are counted and delivered to the observers.
    pub fn flush(&self) {
        self.stage.flush();
    }

    /// The live savings report (attached to every host).
    pub fn report(&self) -> &Report {
        self.stage.report()
    }

    /// The exact original bytes stored under a tee key.
    ///
    /// # Errors
    ///
    /// [`Error::TeeStore`] when no store is configured or the store fails.
    pub fn recover(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        match &self.tee {
            Some(tee) => tee.get(key),
            None => Err(Error::TeeStore {
                store: "none".to_owned(),
                message: "no tee store is configured".to_owned(),
            }),
        }
    }

    /// The tee store, when one is configured.
    pub fn tee_store(&self) -> Option<&dyn TeeStore> {
        self.tee.as_deref()
    }

    /// The level a call runs at, highest rule first: the per-call `override_level`; a `status`
    /// other than `"success"` → `none` (errors are never compressed); the matched entry's
    /// level; `minimal`. Then `normal` and `aggressive` are capped to `minimal` when no tee
    /// store is configured.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{Host, Level};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-level");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// // The core entry says `normal`, but there is no tee store.
    /// assert_eq!(host.effective_level("dq_execute_database_query", "success", None), Level::Minimal);
    /// assert_eq!(host.effective_level("dq_execute_database_query", "error", None), Level::None);
    /// ```
    pub fn effective_level(
        &self,
        tool: &str,
        status: &str,
        override_level: Option<Level>,
    ) -> Level {
        self.level_of(&self.resolve(tool), status, override_level)
    }

    /// [`Host::effective_level`] for a tool already resolved.
    fn level_of(
        &self,
        resolution: &Resolution<'_>,
        status: &str,
        override_level: Option<Level>,
    ) -> Level {
        let level = match override_level {
            Some(level) => level,
            None if status != "success" => Level::None,
            None => resolution.entry.map_or(Level::Minimal, |entry| entry.level),
        };
        self.cap(level)
    }

    fn cap(&self, level: Level) -> Level {
        if level.allows_loss() && self.tee.is_none() {
            Level::Minimal
        } else {
            level
        }
    }

    /// Which entry applies to `tool` and why: its source and key, the match kind, codec, level
    /// and effective level (for a successful call without override), and every entry that lost
    /// to it — same key in a lower-precedence source, or a weaker match.
    pub fn explain(&self, tool: &str) -> Explanation<'_> {
        let resolution = self.resolve(tool);
        let (shadowed, outranked) = self.table.lost_to(tool, &resolution);
        let (codec, level) = match resolution.entry {
            Some(entry) => (entry.codec_name.clone(), entry.level),
            None => (self.fallback.name().to_owned(), Level::Minimal),
        };
        Explanation {
            tool: tool.to_owned(),
            effective_level: self.cap(level),
            capped: self.cap(level) != level,
            resolution,
            codec,
            level,
            shadowed,
            outranked,
        }
    }

    /// The entry that applies to `tool`: the exact key; else the matching glob with the
    /// longest pattern (ties: the earlier source, then the earlier entry); else `"*"`; else none.
    pub fn resolve(&self, tool: &str) -> Resolution<'_> {
        self.table.resolve(tool)
    }
}

/// Why an entry applies to a tool: the answer of [`Host::explain`].
#[derive(Debug)]
pub struct Explanation<'h> {
    /// The tool asked about.
    pub tool: String,
    /// The entry that applies and how it matched.
    pub resolution: Resolution<'h>,
    /// The codec that runs.
    pub codec: String,
    /// The configured level (`minimal` when no entry applies).
    pub level: Level,
    /// The level a successful call without override runs at.
    pub effective_level: Level,
    /// Whether the effective level was capped for want of a tee store.
    pub capped: bool,
    /// Entries with the same key in lower-precedence sources.
    pub shadowed: Vec<&'h ResolvedEntry>,
    /// Other entries that match the tool but lost to a stronger match.
    pub outranked: Vec<(&'h ResolvedEntry, MatchKind)>,
}

impl std::fmt::Display for Explanation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "tool:            {}", self.tool)?;
        match self.resolution.entry {
            Some(entry) => writeln!(
                f,
                "entry:           \"{}\" in {} ({} match)",
                entry.key,
                entry.source,
                self.resolution.kind.as_str()
            )?,
            None => writeln!(f, "entry:           none (no entry matches)")?,
        }
        writeln!(f, "codec:           {}", self.codec)?;
        writeln!(f, "level:           {}", self.level)?;
        let note = if self.capped {
            " (capped: no tee store)"
        } else {
            ""
        };
        writeln!(f, "effective level: {}{note}", self.effective_level)?;
        if self.shadowed.is_empty() && self.outranked.is_empty() {
            return writeln!(f, "lost to it:      nothing");
        }
        writeln!(f, "lost to it:")?;
        for entry in &self.shadowed {
            writeln!(
                f,
                "  \"{}\" in {} (shadowed: same key, lower precedence; {}/{})",
                entry.key, entry.source, entry.codec_name, entry.level
            )?;
        }
        for (entry, kind) in &self.outranked {
            writeln!(
                f,
                "  \"{}\" in {} (shadowed: weaker {} match; {}/{})",
                entry.key,
                entry.source,
                kind.as_str(),
                entry.codec_name,
                entry.level
            )?;
        }
        Ok(())
    }
}
