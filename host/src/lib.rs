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
#![deny(unsafe_code)]

// The built-in codecs register through inventory; referencing the crate keeps it linked.
extern crate parrot_codecs as _;

mod auto;
mod budget;
mod builder;
mod call;
mod claims;
mod discovery;
mod entries;
mod envelope;
mod error;
mod expand;
mod explain;
mod facts;
mod gauge;
mod histogram;
mod host;
mod loader;
pub mod manifest;
mod observe;
mod package;
mod pattern;
pub mod pipeline;
mod plugins;
mod plural;
mod registry;
mod regular;
mod report;
mod tee;
mod tokens;

pub use budget::{
    Admission, Breaker, BreakerConfig, Budgets, Clock, ManualClock, Place, Placement, SystemClock,
};
pub use builder::{DEFAULT_LIMIT_TOKENS, DEFAULT_RECOVERY_MAX_CHARS, HostBuilder};
pub use call::{
    Call, Input, Meta, NoGain, OwnedCall, OwnedInput, Processed, Skip, Status, TokenCounts,
};
pub use claims::UncheckedClaim;
pub use discovery::{MAX_MANIFEST_BYTES, PLUGIN_PATH_ENV, SourceInfo, TRUST_PROJECT_PLUGINS_ENV};
pub use entries::{MatchKind, Resolution, ResolvedEntry};
pub use envelope::{Envelope, Member, Opened};
pub use error::{
    BuildError, CompressError, Error, ExpandError, LoadError, ManifestError, NamespaceError,
    SettingsError, TeeError,
};
pub use explain::Explanation;
pub use host::Host;
pub use loader::LoadErrorKind;
pub use observe::{CallEvent, Observer, TokenEvent};
pub use package::{Package, PackageError, library_file_name};
pub use parrot_codec_api::{Level, Outcome, Payload, PayloadKind};
pub use pipeline::{
    KILL_SWITCH_ENV, TEE_HINT, Verification, kill_switch_from_env, split_text_pointer, text_pointer,
};
pub use plural::counted;
pub use registry::{CodecInfo, Origin, Registry};
pub use report::{Report, ReportSnapshot, Row};
pub use tee::{
    MAX_NAMESPACE_LEN, MemoryTeeStore, Namespace, RECORD_KEY_PREFIX, Retention, TeeStats, TeeStore,
    mask_password, nearest_key,
};
pub use tokens::{TokenCounter, Tokenizer};
