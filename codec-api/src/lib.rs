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
//! A plugin is a `cdylib` crate that depends on this crate and nothing of the host. It
//! implements [`Codec`] for each codec it provides and exports them with [`export_codecs!`]:
//! the macro writes every `extern "C"` entry point and wraps each in a panic guard, so the
//! author writes neither `unsafe` nor `extern "C"`, and a panicking codec becomes an error the
//! host reports naming the codec. The shipped plugins are complete examples:
//! `plugins/line-dedup/` (lossless, with an inverse), `plugins/ansi-strip/` (lossy) and
//! `plugins/tool-result-prune/` (lossy, JSON read exactly with `parrot-json`).
//!
//! ## 1. The crate
//!
//! No package registry has this crate: depend on it from the repository, or by path from a
//! checkout. `parrot-codec-test` is the test support (below).
//!
//! ```toml
//! [package]
//! name = "parrot-plugin-shout"
//! version = "0.1.0"
//! edition = "2024"
//!
//! [lib]
//! crate-type = ["cdylib"]     # the library the host loads; nothing else is needed
//!
//! [dependencies]
//! parrot-codec-api = { git = "https://github.com/parrot-compress/parrot-compress" }
//! # or, from a checkout: parrot-codec-api = { path = "../parrot-compress/codec-api" }
//!
//! [dev-dependencies]
//! parrot-codec-test = { git = "https://github.com/parrot-compress/parrot-compress" }
//! ```
//!
//! Inside this workspace, `cargo new --lib plugins/NAME` is picked up by the `plugins/*`
//! member glob and the dependencies are `parrot-codec-api.workspace = true`.
//!
//! ## 2. The codec
//!
//! One type per codec, built once per manifest entry from the entry's params
//! ([`Codec::new`]), then called from many threads. `src/lib.rs`:
//!
//! ```
//! #![forbid(unsafe_code)]
//! use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
//!
//! /// Collapses runs of blank lines in text output to at most `max_blank` blank lines.
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
//!         // Dropping blank lines loses information: ask the level before a lossy change.
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
//!         Ok(if out.len() < payload.text().len() {
//!             Outcome::lossy(out)
//!         } else {
//!             Outcome::Unchanged
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
//! Three idioms, each the one way to do its thing:
//!
//! - **The level.** Ask [`Level::allows_change`] before a lossless change and
//!   [`Level::allows_loss`] before a lossy one (see [`Level`]). Do not compare with
//!   [`Level::None`]: the host never sends it, the contract check does, and both questions
//!   already answer it.
//! - **The inverse.** A codec with lossless outcomes names its inverse in one item,
//!   [`Codec::INVERSE`]; what the host is told ([`CodecMeta::expands`]) is derived from it, so
//!   the two cannot disagree:
//!
//!   ```
//!   use parrot_codec_api::{Codec, CodecError, CodecMeta, Inverse, Level, Outcome, Params, Payload};
//!
//!   /// Writes `x*N` for a line of N `x`s (lossless: the text held no `*`).
//!   pub struct Runs;
//!
//!   impl Runs {
//!       fn expand(&self, payload: &str) -> Result<String, CodecError> {
//!           let lines = payload.split('\n').map(|line| match line.strip_prefix("x*") {
//!               Some(n) => n.parse().map(|n| "x".repeat(n)).map_err(|_| {
//!                   CodecError::invalid_input(format!("{line:?} is not a run"))
//!               }),
//!               None => Ok(line.to_owned()),
//!           });
//!           Ok(lines.collect::<Result<Vec<_>, _>>()?.join("\n"))
//!       }
//!   }
//!
//!   impl Codec for Runs {
//!       const NAME: &'static str = "runs";
//!       const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
//!
//!       fn new(_: &mut Params) -> Result<Self, CodecError> {
//!           Ok(Runs)
//!       }
//!
//!       fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
//!           let text = payload.text();
//!           if payload.is_json() || !level.allows_change() || text.contains('*') {
//!               return Ok(Outcome::Unchanged);
//!           }
//!           let run = |line: &str| !line.is_empty() && line.bytes().all(|b| b == b'x');
//!           let out: Vec<String> = text
//!               .split('\n')
//!               .map(|line| if run(line) && line.len() > 3 { format!("x*{}", line.len()) } else { line.to_owned() })
//!               .collect();
//!           let out = out.join("\n");
//!           Ok(if out.len() < text.len() { Outcome::lossless(out) } else { Outcome::Unchanged })
//!       }
//!   }
//!
//!   assert!(CodecMeta::of::<Runs>().expands());
//!   let out = Codec::compress(&Runs, Payload::text_only("a\nxxxxxxxx"), Level::Minimal).unwrap();
//!   assert_eq!(out, Outcome::lossless("a\nx*8"));
//!   assert_eq!(Runs.expand("a\nx*8").unwrap(), "a\nxxxxxxxx");
//!   ```
//!
//! - **Params.** Read each key through a typed getter of [`Params`] (`bool`, `u64`, `usize`,
//!   `positive`, `i64`, `f64`, `string`, `choice`, `list`), or into a type of your own with
//!   [`Params::get`]; every error names the key, and a key no getter read is refused after
//!   [`Codec::new`] returns, with the nearest known key suggested. A rule between params is
//!   checked in `new` too, so a bad entry fails when the host is built, not at the first call:
//!
//!   ```
//!   use parrot_codec_api::{CodecError, Params};
//!   use serde::Deserialize;
//!
//!   #[derive(Deserialize)]
//!   #[serde(deny_unknown_fields)]
//!   struct Window {
//!       head: usize,
//!       tail: usize,
//!   }
//!
//!   fn window(params: &mut Params) -> Result<Window, CodecError> {
//!       let window = params.get::<Window>("window")?.unwrap_or(Window { head: 10, tail: 10 });
//!       let total = params.positive("max_lines", 100)?;
//!       if window.head + window.tail > total {
//!           return Err(CodecError::invalid_params(format!(
//!               "window.head + window.tail = {} exceeds max_lines = {total}",
//!               window.head + window.tail
//!           )));
//!       }
//!       Ok(window)
//!   }
//!
//!   let mut params = Params::from_json(r#"{"window": {"head": 5, "tial": 2}}"#).unwrap();
//!   let err = window(&mut params).err().unwrap();
//!   assert_eq!(err.key(), Some("window"));
//!   assert!(err.to_string().starts_with("param \"window\": unknown field `tial`"));
//!   ```
//!
//! ## 3. The manifest
//!
//! Ship the library in a folder beside a `compressors.toml` that declares it and chooses the
//! tools it applies to (globs; the first source to declare a key wins the whole entry):
//!
//! ```toml
//! [plugin]
//! library = "parrot_plugin_shout"      # libparrot_plugin_shout.so beside this file
//! codecs = ["squeeze_blank"]
//!
//! [compressor."shell_*"]
//! codec = "squeeze_blank"
//! level = "normal"
//!   [compressor."shell_*".params]
//!   max_blank = 1
//! ```
//!
//! ## 4. Tests
//!
//! Table-driven unit tests beside the code, and the codec contract held on real inputs with
//! `parrot-codec-test`: `check(&codec, input)` on one
//! input, `check_all` on many (every violation listed), `inputs(dir)` to read a folder of
//! tool results. Each shipped plugin does it in its `src/contract.rs`. A `cdylib` crate has no
//! library its `tests/` folder could link, so the contract test is a `#[cfg(test)]` module:
//!
//! ```
//! # use parrot_codec_api::{Codec, CodecError, Level, Outcome, Payload};
//! # pub struct SqueezeBlank;
//! # impl Codec for SqueezeBlank {
//! #     const NAME: &'static str = "squeeze_blank";
//! #     fn new(_: &mut Params) -> Result<Self, CodecError> { Ok(SqueezeBlank) }
//! #     fn compress(&self, p: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
//! #         if p.is_json() || !level.allows_loss() { return Ok(Outcome::Unchanged); }
//! #         let out = p.text().replace("\n\n\n", "\n\n");
//! #         Ok(if out.len() < p.text().len() { Outcome::lossy(out) } else { Outcome::Unchanged })
//! #     }
//! # }
//! // src/contract.rs, declared in src/lib.rs as `#[cfg(test)] mod contract;`
//! use parrot_codec_api::{Params, build};
//!
//! # fn main() {
//! // #[test]
//! // fn squeeze_blank_keeps_the_contract() {
//! let codec: SqueezeBlank = build(Params::empty()).unwrap();
//! let inputs = [("blank lines", "a\n\n\n\n\nb"), ("json", r#"{"a": "\n\n\n"}"#)];
//! if let Err(violations) = parrot_codec_test::check_all(&codec, inputs) {
//!     panic!("{violations:#?}");
//! }
//! // }
//! # }
//! ```
//!
//! To see what the host's stage makes of the codec's outcomes (the no-gain rule on bytes and
//! tokens, the verification of lossless outcomes through the inverse, the tee store and its
//! pointer), run it through the real stage in-process, without building a library:
//! `parrot_codec_test::stage::<SqueezeBlank>(payload, Level::Normal)`, or
//! `parrot_codec_test::Stage` for params and recovery. To test the library itself across the
//! boundary, `parrot_codec_test::Package` lays out a package folder from the `cdylib` cargo
//! built, for a host to load.
//!
//! ## 5. Package and load
//!
//! `parrot-compress package` lays out a package — the release library and its
//! `compressors.toml` — from any crate (see `parrot-compress package --help`); inside this
//! workspace `cargo xtask package-plugins` does it for every crate in `plugins/`. Load the
//! folder with `parrot-compress --plugins DIR …` (or `HostBuilder::plugin_dir` of the library
//! API); `parrot-compress --plugins DIR plugins` lists the codecs it provides.
//!
//! The host checks, each with a one-line error naming the library and its manifest: the file
//! stays inside its package folder (no `..`, no absolute path, no symlink out); it is a shared
//! library exporting a codec plugin root module; its interface version has the host's major
//! version (for `0.x`, the host's minor too); it was built with `panic = "unwind"` (nothing
//! could stop a `panic = "abort"` plugin's panic from killing the host); an optional `sha256`
//! matches; no two sources provide one codec name. It then builds each entry's codec at
//! start-up, so a bad param fails then, naming the file, entry and key. A library is loaded once
//! per canonical path and never unloaded.
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
//! - Offer an inverse ([`Codec::INVERSE`]) when outcomes are lossless: the host verifies them
//!   through it. A lossless claim without one cannot be checked, and the host treats it as
//!   lossy (teed; refused at `minimal`).
//! - Offer a cut of your output ([`Codec::CUT`]) when it has a grammar a cut should keep: the
//!   host cuts a result over its size limit as plain text otherwise.
//!
//! `parrot-codec-test` checks these rules on any input ([step 4](#4-tests)).
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
//!
//! What a codec offers beyond `compress` and its inverse (its cut, [`Codec::CUT`]) reaches the
//! host through a second root module that [`export_codecs!`] writes beside the first, whose
//! layout is the one interface 0.1.0 was first released with. A library built before the
//! second module existed loads as it did, its codecs offering no more than before; a host
//! built before it ignores the module. CONTRACT §10.2 (*Capabilities*) has the negotiation.
// `deny`, not `forbid`: the boundary module is generated by abi_stable's derives, which expand
// to `unsafe` impls; it opts out below, and nothing else in the crate may.
#![deny(unsafe_code)]

mod codec;
mod cut;
mod error;
mod level;
mod meta;
mod params;

pub use codec::{Codec, DynCodec, Inverse, Outcome, Payload, PayloadKind, build};
pub use cut::{Cut, CutAt, CutBreak, json_string_chars};
pub use error::{CodecError, ErrorKind};
pub use level::{Level, ParseLevelError};
pub use meta::{CodecListError, CodecMeta};
pub use params::Params;

// The recovery tool's name: codecs write it in their markers (see the module).
mod recovery;
pub use recovery::{RECOVERY_TOOL, is_retrieval};

/// The interface version this crate was compiled as: the `parrot-codec-api` package version.
///
/// A host accepts plugins built against the same major version (for `0.x`, the same minor).
pub const INTERFACE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The plugin boundary, used by [`export_codecs!`] and the host. Not part of the author API.
#[doc(hidden)]
#[allow(unsafe_code)]
#[path = "ffi.rs"]
pub mod __private;
