//! Test support for parrot-compress codec authors: the codec contract, checked on any input,
//! a codec run through the host's stage in-process, and plugin packages laid out for tests that
//! load a plugin through the host.
//!
//! Add it as a dev-dependency beside `parrot-codec-api`:
//!
//! ```toml
//! [dev-dependencies]
//! parrot-codec-test = { git = "https://github.com/parrot-compress/parrot-compress" }
//! ```
//!
//! # Checking a codec
//!
//! The host relies on a few rules every codec keeps ([`Contract`] lists them): no panic, no
//! error, the same output twice, an output strictly smaller than its input, loss only at a
//! level that allows it, JSON out for JSON in (unless the codec declares text output), and an
//! inverse that gives every lossless outcome's input back — byte for byte for text, as an equal
//! JSON value for JSON. [`check`] holds a codec to them on one input at every level, as the
//! payload kinds the host would give it; a broken rule is a [`Violation`] that says which rule,
//! at which level, on which kind of payload and input.
//!
//! Run it over every input your tests have: real tool results, edge cases, fuzzer finds.
//!
//! ```
//! use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};
//! use parrot_codec_test::{Rule, check};
//!
//! /// Writes every run of four spaces as a tab (lossless: the text had no tab).
//! struct Tabs {
//!     /// Whether the inverse works: a codec that forgot to write it breaks the contract.
//!     inverse: bool,
//! }
//!
//! impl Tabs {
//!     fn expand(&self, payload: &str) -> Result<String, CodecError> {
//!         Ok(if self.inverse { payload.replace('\t', "    ") } else { payload.to_owned() })
//!     }
//! }
//!
//! impl Codec for Tabs {
//!     const NAME: &'static str = "tabs";
//!     const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
//!
//!     fn new(_: &mut Params) -> Result<Self, CodecError> {
//!         Ok(Tabs { inverse: true })
//!     }
//!
//!     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
//!         let text = payload.text();
//!         if payload.is_json() || !level.allows_change() || text.contains('\t') {
//!             return Ok(Outcome::Unchanged);
//!         }
//!         let out = text.replace("    ", "\t");
//!         Ok(if out.len() < text.len() { Outcome::lossless(out) } else { Outcome::Unchanged })
//!     }
//! }
//!
//! let input = "fn main() {\n        run();\n}";
//! check(&Tabs { inverse: true }, input).unwrap();
//! check(&Tabs { inverse: true }, r#"{"json": "passes    through"}"#).unwrap();
//!
//! let violation = check(&Tabs { inverse: false }, input).unwrap_err();
//! assert!(matches!(violation.rule, Rule::ExpandsElsewhere { .. }));
//! assert_eq!(violation.level, Level::Minimal);
//! assert!(violation.to_string().starts_with(
//!     "codec \"tabs\" at minimal on a text payload: a lossless outcome expands to something else"
//! ));
//! ```
//!
//! In a fuzz target, [`assert_contract`] panics with the violation's message, which the
//! fuzzer reports:
//!
//! ```
//! # use parrot_codec_api::{Params, build};
//! # fn codec() -> parrot_codecs::Columnar { build(Params::empty()).unwrap() }
//! // The body of `fuzz_target!(|data: &[u8]| { … })`:
//! fn fuzz_one(data: &[u8]) {
//!     if let Ok(text) = std::str::from_utf8(data) {
//!         parrot_codec_test::assert_contract(&codec(), text);
//!     }
//! }
//! # fuzz_one(br#"[{"a": 1}, {"a": 2}, {"a": 3}]"#);
//! ```
//!
//! A codec that drops `null` members of JSON objects on purpose declares it
//! (`Codec::NULL_MEMBERS_ABSENT`); the check, like the host, reads that from its metadata.
//!
//! A codec that offers a cut of its own output (`Codec::CUT`) has it checked on every output
//! it returns, at a spread of rooms from nothing to the whole output: the check passes only a
//! cut the host takes (whole lines, less than all of them, within the room with its marker, a
//! marker of one line) whose marker names the recovery tool and a selector, the same cut
//! twice, and never less kept at a larger room; a broken rule is [`Rule::Cut`], naming the
//! room and the [`CutRule`]. A cut may return `None` to leave an output to the host's text
//! cut; [`Contract::cuts_every_output`] holds a codec whose every output of several lines has
//! a boundary to cutting it.
//!
//! # Loading your plugin in a test
//!
//! The check runs the codec in-process. To test what the host makes of your plugin — the
//! manifest, the library loaded across its boundary — lay out a package folder from the
//! library cargo built and point the host at it:
//!
//! ```no_run
//! use parrot_codec_test::{Package, build_plugins, cdylib, plugin_manifest};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Once per test process: `cargo build --workspace --lib` with the cargo running the tests.
//! build_plugins(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))?;
//! let project = tempfile::tempdir()?;
//! let package = Package::new(project.path(), "shout")
//!     .library(cdylib("parrot_plugin_shout")?)
//!     .manifest(plugin_manifest("parrot_plugin_shout", "[compressor.\"t\"]\ncodec = \"shout\"\n"))
//!     .create()?;
//! // parrot_host::Host::builder().plugin_dir(&package)…
//! # let _ = package;
//! # Ok(())
//! # }
//! ```
//!
//! When the plugin crate is a dev-dependency of the test's package, cargo builds its `cdylib`
//! with the test and [`cdylib`] finds it without [`build_plugins`]; the plugin needs no `rlib`
//! for that, and should have none (each plugin exports the same root-module symbol, so a test
//! binary linking two plugin `rlib`s fails to link). To check the codecs of several plugins in
//! one binary, load their cdylibs through a host and check the codecs it hands out
//! (`DynCodec`s, like any other). A build run from a test should resolve the same features as
//! the test run, or it builds crates again: see [`Cargo`].
//!
//! # Running a codec through the stage
//!
//! Between the contract (the codec alone) and a loaded package (the library across the
//! boundary) sits [`Stage`]: the host's real stage run in-process on the codec, with a memory
//! tee store and no library to build. It shows what the stage makes of the codec's outcomes —
//! the no-gain rule on bytes and tokens, a lossless claim verified through the inverse, a lossy
//! outcome stored and pointed to — as [`stage`] in one call:
//! `parrot_codec_test::stage::<MyCodec>(payload, Level::Normal)?`.
#![forbid(unsafe_code)]

mod contract;
mod json;
mod package;
mod stage;

pub use contract::{
    Contract, CutRule, Rule, Violation, assert_contract, assert_contract_on, check, check_all,
};
pub use package::{
    Cargo, Error, Package, build_plugins, cdylib, inputs, library_file_name, plugin_manifest,
    profile_dir,
};
pub use stage::{Stage, stage};
