//! The interface crate for parrot-compress codecs: everything a codec author needs, nothing of
//! the host.
//!
//! parrot-compress compresses the results of LLM tool calls before a model sees them. A codec
//! turns one tool result (JSON text or plain text) into a smaller one at a [`Level`], and says
//! whether it dropped information. The host picks a codec per tool from `compressors.toml`
//! manifests, measures sizes and tokens, and keeps the original of every lossy outcome.
//!
//! # Writing a codec plugin
//!
//! A plugin is a `cdylib` crate that depends on this crate only. It implements [`Codec`] for
//! each codec it provides and exports them with [`export_codecs!`]: the macro writes every
//! `extern "C"` entry point and wraps each in a panic guard, so the author writes neither
//! `unsafe` nor `extern "C"`, and a panicking codec becomes an error the host reports.
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [package]
//! name = "parrot-plugin-shout"
//! version = "0.1.0"
//! edition = "2024"
//!
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! parrot-codec-api = "0.1"
//! ```
//!
//! `src/lib.rs`:
//!
//! ```
//! #![forbid(unsafe_code)]
//! use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
//!
//! /// Collapses runs of blank lines in text output into one blank line.
//! pub struct SqueezeBlank {
//!     max_blank: usize,
//! }
//!
//! impl Codec for SqueezeBlank {
//!     const NAME: &'static str = "squeeze_blank";
//!
//!     fn new(params: &mut Params) -> Result<Self, CodecError> {
//!         // Every param is read through a getter; unknown keys are rejected for you.
//!         Ok(SqueezeBlank { max_blank: params.positive("max_blank", 1)? })
//!     }
//!
//!     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
//!         // Dropping blank lines loses information: act only where loss is allowed.
//!         if payload.is_json() || !level.allows_loss() {
//!             return Ok(Outcome::Unchanged);
//!         }
//!         let mut out = Vec::new();
//!         let mut blank_run = 0;
//!         for line in payload.text().split('\n') {
//!             blank_run = if line.trim().is_empty() { blank_run + 1 } else { 0 };
//!             if blank_run <= self.max_blank {
//!                 out.push(line);
//!             }
//!         }
//!         let out = out.join("\n");
//!         Ok(if out.len() == payload.text().len() {
//!             Outcome::Unchanged
//!         } else {
//!             Outcome::lossy(out)
//!         })
//!     }
//! }
//!
//! parrot_codec_api::export_codecs!(SqueezeBlank);
//!
//! # fn main() {
//! let codec = parrot_codec_api::build::<SqueezeBlank>(Params::empty()).unwrap();
//! let out = codec.compress(Payload::text_only("a\n\n\n\nb"), Level::Normal).unwrap();
//! assert_eq!(out, Outcome::lossy("a\n\nb"));
//! # }
//! ```
//!
//! Ship the library in a folder beside a `compressors.toml` that declares it and chooses the
//! tools it applies to:
//!
//! ```toml
//! [plugin]
//! library = "parrot_plugin_shout"      # libparrot_plugin_shout.so beside this file
//!
//! [compressor."shell_*"]
//! codec = "squeeze_blank"
//! level = "normal"
//!   [compressor."shell_*".params]
//!   max_blank = 1
//! ```
//!
//! The host loads the folder with `parrot-compress --plugins DIR …` (or the library API),
//! checks the interface version, refuses a library built with `panic = "abort"`, and builds
//! each entry's codec at start-up, so a bad param fails then, naming the file, entry and key.
//!
//! # Rules a codec follows
//!
//! - Deterministic and synchronous; no model calls, no I/O.
//! - [`Level::Minimal`] allows only lossless outcomes; `lossy` is exact.
//! - A payload the codec cannot use is [`Outcome::Unchanged`], not an error.
//! - Output for a JSON payload is JSON, unless the codec turns JSON into another text format
//!   (TOON, CSV) and says so with [`Codec::TEXT_OUTPUT`].
//! - Dropping object members whose value is `null` is lossless only for a codec that says so
//!   with [`Codec::NULL_MEMBERS_ABSENT`].
//! - Offer an inverse ([`Codec::EXPANDS`], [`Codec::expand`]) when outcomes are lossless: the
//!   host uses it to verify them.
//!
//! Test your codec with `parrot-codec-test`, which checks these rules on any input and lays out
//! plugin packages for tests that load your library through the host.
//!
//! # Reading JSON exactly
//!
//! A codec of JSON payloads may depend on `parrot-json`, the reader the host and the built-in
//! codecs use: it keeps every number and string as written (`1.0` stays `1.0`, a 30-digit id
//! keeps its digits), accepts exactly the JSON the host hands a codec (nesting up to 512
//! levels, no duplicate member names), and offers the contract's equality (CONTRACT §2.1) for
//! testing an inverse. It is not part of the plugin interface: nothing of it crosses the
//! boundary, and a plugin may use any version of it, or none.
//!
//! # Versions
//!
//! The interface version is this crate's version. A host accepts a plugin built against the
//! same major version (for `0.x`, the same minor); anything else is refused at load with both
//! versions named.
// `deny`, not `forbid`: the boundary module is generated by abi_stable's derives, which expand
// to `unsafe` impls; it opts out below, and nothing else in the crate may.
#![deny(unsafe_code)]

mod codec;
mod error;
mod level;
mod meta;
mod params;

pub use codec::{Codec, DynCodec, Inverse, Outcome, Payload, PayloadKind, build};
pub use error::{CodecError, ErrorKind};
pub use level::{Level, ParseLevelError};
pub use meta::{CodecListError, CodecMeta};
pub use params::Params;

/// The interface version this crate was compiled as: the `parrot-codec-api` package version.
///
/// A host accepts plugins built against the same major version (for `0.x`, the same minor).
pub const INTERFACE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The plugin boundary, used by [`export_codecs!`] and the host. Not part of the author API.
#[doc(hidden)]
#[allow(unsafe_code)]
#[path = "ffi.rs"]
pub mod __private;
