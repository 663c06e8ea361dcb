//! parrot-host: the host library of parrot-compress, which compresses the results of LLM tool
//! calls before any model sees them. The `parrot-compress` command is a separate package over it.
//!
//! A database query returns 500 rows with the same 12 keys repeated 500 times; a shell command
//! prints 40,000 lines. This library sits between the tool and the model: per-tool
//! `compressors.toml` manifests choose a codec and a level; codecs are built in (those of
//! `parrot-codecs`, and the router `auto`) or loaded from plugin libraries built against
//! [`parrot_codec_api`], without rebuilding the host.
//!
//! # Building a host
//!
//! ```
//! use parrot_host::{Host, Level, MatchKind};
//! use parrot_codec_api::Payload;
//!
//! let project = std::env::temp_dir().join("parrot-doc-lib");
//! std::fs::create_dir_all(project.join(".parrot")).unwrap();
//! std::fs::write(
//!     project.join(".parrot/compressors.toml"),
//!     "[compressor.\"sql_*\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n",
//! )
//! .unwrap();
//!
//! let host = Host::builder().project(&project).plugin_path(None).build().unwrap();
//! let resolution = host.resolve("sql_select");
//! assert_eq!(resolution.kind, MatchKind::Glob);
//! let entry = resolution.entry.unwrap();
//! assert_eq!((entry.codec_name.as_str(), entry.level), ("columnar", Level::Normal));
//! let codec = entry.codec().expect("columnar is a codec (only `auto` is not)");
//! let _outcome = codec.compress(Payload::json("[]"), entry.level).unwrap();
//! ```
//!
//! Building validates everything — manifests, plugin libraries, every entry's params — and
//! returns every error found, each naming the file, entry and key: nothing is left to fail at
//! the first tool call. See [`HostBuilder`] for the precedence of sources and [`Host::resolve`]
//! for how an entry is matched to a tool.
//!
//! # The crate's wings
//!
//! Each folder of `host/src` is one wing; its `mod.rs` says what the wing holds.
//!
//! - `config/`: the `compressors.toml` manifests — which are read, what they say (the public
//!   [`manifest`] module, and the core manifest `core.toml`), their entry keys, and how a
//!   plugin [`Package`] lays out its library and manifest.
//! - `plugins/`: the codec [`Registry`] and plugin loading — the libraries, the facts the stage
//!   needs of each codec, and the lossless claims it cannot check.
//! - `routing/`: the routing codec `auto` and the envelopes it opens, and the latency budgets
//!   ([`Placement`], [`Breaker`]) that place a codec call.
//! - `metering/`: token counting, observers of processed calls, and the savings [`Report`].
//! - `stage/`: what a tool result passes through — the entry table that says which entry
//!   applies to a tool, the public [`pipeline`] of rules, and expansion of a codec's output
//!   back to its original.
//!
//! At the top stay the built [`Host`] (`host.rs`), its [`HostBuilder`] (`builder.rs`), the call
//! types every wing shares ([`Call`], [`Processed`]: `call.rs`), the errors (`error.rs`), the
//! tee stores as the host uses them (`tee.rs`) and counted nouns in messages (`plural.rs`).
//! The wings are layered: `config` needs none of the others, `plugins` reads `config`,
//! `metering` the call types, `routing` the three before it, and `stage` all of them. A module
//! with submodules is a folder with a `mod.rs`, as in the rest of the workspace.
#![deny(unsafe_code)]

// The built-in codecs register through inventory; referencing the crate keeps it linked.
extern crate parrot_codecs as _;

mod builder;
mod call;
mod config;
mod error;
mod host;
mod metering;
mod plugins;
mod plural;
mod routing;
mod stage;
mod tee;

pub use config::manifest;
pub use stage::pipeline;

pub use builder::{DEFAULT_LIMIT_TOKENS, DEFAULT_RECOVERY_MAX_CHARS, HostBuilder};
pub use config::discovery::{
    MAX_MANIFEST_BYTES, PLUGIN_PATH_ENV, SourceInfo, TRUST_PROJECT_PLUGINS_ENV,
};
pub use error::{
    BuildError, CompressError, Error, ExpandError, LoadError, LoadErrorKind, ManifestError,
    NamespaceError, SettingsError, TeeError,
};
pub use host::Host;
pub use metering::observe::{CallEvent, Observer, TokenEvent};
pub use metering::report::{Report, ReportSnapshot, Row};
pub use metering::tokens::{TokenCounter, Tokenizer};
pub use parrot_codec_api::{Level, Outcome, Payload, PayloadKind};
pub use plugins::claims::UncheckedClaim;
pub use stage::entries::{MatchKind, Resolution, ResolvedEntry};
pub use stage::explain::Explanation;

pub use call::{
    Call, Input, Meta, NoGain, OwnedCall, OwnedInput, Processed, Skip, Status, TokenCounts,
};
pub use config::package::{Package, PackageError, library_file_name};
pub use plugins::registry::{CodecInfo, Origin, Registry};
pub use plural::counted;
pub use routing::budget::{
    Admission, Breaker, BreakerConfig, Budgets, Clock, ManualClock, Place, Placement, SystemClock,
};
pub use routing::envelope::{Envelope, Member, Opened};
pub use stage::pipeline::{
    KILL_SWITCH_ENV, TEE_HINT, Verification, kill_switch_from_env, split_text_pointer, text_pointer,
};
pub use tee::{
    MAX_NAMESPACE_LEN, MemoryTeeStore, Namespace, RECORD_KEY_PREFIX, Retention, TeeStats, TeeStore,
    mask_password, nearest_key,
};
