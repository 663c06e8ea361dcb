//! The host of parrot-compress set up as the `parrot-compress` command sets it up, for every
//! program that takes the command's settings: the command itself and the Python package.
//!
//! [`Settings`] are the command's global options (`--project`, `--plugins`,
//! `--trust-project-plugins`, `--tee-store`, `--no-tee`, `--tokenizer`); [`builder`] makes the
//! [`HostBuilder`] they describe and [`build`] builds it, every error as the command reports it
//! (one line per problem, each naming the file, entry, key, codec or store).
//!
//! # The tee store
//!
//! - none given: the project's `.parrot/tee.db`, a SQLite file created on first use;
//! - a value with `://` in it: a URL, `redis://…` (`rediss://…` with feature `redis-tls`);
//! - any other value: the path of a SQLite file;
//! - `no_tee`: no store at all, so lossy results go out uncompressed.
//!
//! A file that cannot be opened where it is (its folder cannot be created, no space, no
//! permission) is not an error: one warning, then a store that refuses every put, so lossless
//! work goes on and a lossy result goes out uncompressed (`tee_failed`). A file that is not a
//! tee store is refused, naming it. A Redis store opens even when Redis does not answer; its
//! puts fail until it does.
//!
//! # The kill switch
//!
//! [`killed`] reads `PARROT_COMPRESSION_DISABLED`: with it on, a program builds no host at all
//! (no manifest, plugin or store is touched) and every result goes out as it came, with
//! [`killed_meta`] as its metadata.
//!
//! # Examples
//!
//! ```
//! use parrot_setup::{Settings, build, builder};
//!
//! let dir = std::env::temp_dir().join("parrot-doc-setup");
//! std::fs::create_dir_all(&dir).unwrap();
//! let settings = Settings { project: Some(dir), no_tee: true, ..Settings::default() };
//! let host = build(&mut builder(&settings, false, None).unwrap()).unwrap();
//! assert_eq!(host.resolve("anything").entry.unwrap().codec_name, "auto");
//! ```

#![forbid(unsafe_code)]

mod store;

use std::path::PathBuf;
use std::sync::Arc;

use parrot_host::{Host, HostBuilder, MemoryTeeStore, Meta, Observer, Skip, Tokenizer};

pub use store::{
    Deferred, Persistent, StoreAt, Unavailable, open_file_or_unavailable, open_store, open_url,
    persistent_or_unavailable, store_only,
};

/// The command's global options: what a host is set up from.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The project folder (`--project`); `None`: the current folder.
    pub project: Option<PathBuf>,
    /// Plugin package folders (`--plugins`), in precedence order.
    pub plugins: Vec<PathBuf>,
    /// Whether the project's own plugin packages, `.parrot/plugins`, are loaded.
    pub trust_project_plugins: bool,
    /// The tee store (`--tee-store`): a path, or a URL (a value with `://` in it); `None`: the
    /// project's `.parrot/tee.db`.
    pub tee_store: Option<PathBuf>,
    /// No tee store at all (`--no-tee`).
    pub no_tee: bool,
    /// The tokenizer that counts tokens (`--tokenizer`).
    pub tokenizer: Tokenizer,
}

impl Settings {
    /// The project root: [`Settings::project`], else the current folder.
    pub fn project_dir(&self) -> PathBuf {
        self.project
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

/// Why a host, or its store, could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The configuration is invalid: one line per problem, each naming the file, entry, key,
    /// codec, plugin or store URL (the command exits 2).
    #[error("{}", .0.join("\n"))]
    Config(Vec<String>),
    /// Something the configuration names could not be used at run time: a store that cannot
    /// be opened, a Redis that refuses the credentials (the command exits 1).
    #[error("{0}")]
    Runtime(String),
}

/// Whether the kill switch (`PARROT_COMPRESSION_DISABLED=1`) is on. Read before anything
/// else: with it on, no manifest, plugin or store is touched.
pub fn killed() -> bool {
    parrot_host::kill_switch_from_env()
}

/// The metadata of a call with the kill switch on: the payload went out as it came, uncounted.
pub fn killed_meta(size: usize) -> Meta {
    Meta::passed_through(size, Skip::KillSwitch)
}

/// The builder of the host `settings` describe. `store` says whether the caller reads or writes
/// the tee store: the persistent store is opened (and created) only then; a caller that only
/// needs to know whether one is configured (which decides the effective levels it shows) gets
/// an empty store in memory.
///
/// The builder compresses inline at any size (a person, or a program, asked for the result)
/// and has the kill switch off: the caller decided it with [`killed`] before building.
///
/// # Errors
///
/// The store's: [`SetupError::Config`] for a store URL that cannot be used,
/// [`SetupError::Runtime`] for a store file that is refused (not a tee store, a later schema).
pub fn builder(
    settings: &Settings,
    store: bool,
    observer: Option<Arc<dyn Observer>>,
) -> Result<HostBuilder, SetupError> {
    let mut builder: HostBuilder = Host::builder();
    if let Some(observer) = observer {
        builder.observer(observer);
    }
    builder
        .project(settings.project_dir())
        .tokenizer(Arc::new(settings.tokenizer))
        .envelope(Arc::new(parrot_mcp::ContentBlocks));
    for dir in &settings.plugins {
        builder.plugin_dir(dir);
    }
    if settings.trust_project_plugins {
        builder.trust_project_plugins(true);
    }
    builder.inline_at_any_size(true);
    builder.kill_switch(Some(false));
    if !settings.no_tee {
        if store {
            builder.tee_store(persistent_or_unavailable(settings)?);
        } else {
            builder.tee_store(Arc::new(MemoryTeeStore::new(1)));
        }
    }
    Ok(builder)
}

/// Builds the host, a configuration error being one line per problem.
///
/// # Errors
///
/// [`SetupError::Config`] with every error the host's build found (each naming the manifest
/// file, entry and key, or the plugin library).
pub fn build(builder: &mut HostBuilder) -> Result<Host, SetupError> {
    builder
        .build()
        .map_err(|err| SetupError::Config(err.errors.iter().map(ToString::to_string).collect()))
}

/// What a program says when `store` holds nothing under `key` (in `namespace`): the key, the
/// namespace, and the nearest key the store does hold, when one is a few edits away (a key
/// copied with a character lost).
///
/// # Examples
///
/// ```
/// use parrot_host::{MemoryTeeStore, TeeStore};
///
/// let store = MemoryTeeStore::default();
/// store.put("__tee__:grep:0123456789ab", b"x").unwrap();
/// assert_eq!(
///     parrot_setup::not_found(&store, None, "__tee__:grep:0123456789a"),
///     "no original is stored under \"__tee__:grep:0123456789a\"; did you mean \"__tee__:grep:0123456789ab\"?"
/// );
/// ```
pub fn not_found(
    store: &dyn parrot_host::TeeStore,
    namespace: Option<&parrot_host::Namespace>,
    key: &str,
) -> String {
    let near = parrot_host::nearest_key(store, namespace, key)
        .map_or_else(String::new, |near| format!("; did you mean \"{near}\"?"));
    match namespace {
        Some(namespace) => {
            format!("no original is stored under \"{key}\" in namespace \"{namespace}\"{near}")
        }
        None => format!("no original is stored under \"{key}\"{near}"),
    }
}
