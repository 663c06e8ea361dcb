//! The built-in codecs of parrot-compress, compiled into the host.
//!
//! - [`JsonCompact`] (`json_compact`): compact JSON without null members,
//!   runs of equal array elements folded into `{"_repeat": N, "_value": X}` (lossless); long
//!   strings clipped at `normal`, long arrays trimmed at `aggressive`.
//! - [`Columnar`] (`columnar`): arrays of row objects, or the `rows` of a query result, as one
//!   table `{"columns", "rows", "constants"}` (lossless when the rows share their keys); a
//!   structural summary at `aggressive`.
//! - [`Toon`] (`toon`): JSON as lossless TOON (Token-Oriented Object Notation), tables with their
//!   constant columns hoisted above the rows; its output is the TOON document itself (text
//!   output), and it acts from `minimal` up.
//! - [`Log`] (`log`): build, test and command output (text); noise folded into templates with
//!   counts, every failure line kept verbatim, every cut marked with exact counts (lossy, at
//!   `normal` and above).
//! - The lossless text codecs, for the output an agent asked to see, each with its inverse and
//!   acting from `minimal` up: [`Hits`] (`hits`: grep and ripgrep hits under each file named
//!   once, as ripgrep's `--heading` writes them), [`Paths`] (`paths`: a listing of paths as a
//!   tree, each directory named once), [`Table`] (`table`: whitespace-aligned tables with their
//!   padding collapsed and their constant columns said once).
//!
//! The JSON codecs read JSON with `parrot_json`'s validating reader, without building a value
//! tree: numbers and strings are copied exactly as written (so `1`, `1.0` and a 30-digit
//! decimal stay what they are), member order is kept, and a codec costs about one validating
//! scan of its input (`toon` builds a `parrot_json::Value` tree for what is not a table of flat
//! rows). They offer their inverse ([`parrot_codec_api::Codec::INVERSE`]) for every lossless
//! outcome. No codec returns an output that is not smaller than its input. The exact rules,
//! level by level, are in each codec's module documentation ([`json_compact`], [`columnar`],
//! [`toon`], [`log`]) and in CONTRACT §2.
//!
//! Each codec lives in its own module and registers itself with [`inventory`]
//! (`inventory::submit! { Builtin::of::<TheCodec>() }`); the host lists them with [`builtins`].
//! Plugins never use this mechanism: across a library boundary the host loads codecs through
//! `parrot-codec-api`'s root module.
//!
//! # Examples
//!
//! ```
//! use parrot_codec_api::{Level, Outcome, Params, Payload};
//!
//! let names: Vec<&str> = parrot_codecs::builtins().iter().map(|b| b.meta.name()).collect();
//! assert!(names.is_sorted() && names.contains(&"json_compact"), "{names:?}");
//!
//! let json_compact = parrot_codecs::builtins()
//!     .into_iter()
//!     .find(|b| b.meta.name() == "json_compact")
//!     .unwrap();
//! let codec = (json_compact.build)(Params::empty()).unwrap();
//! let input = r#"{"a": 1, "b": null, "c": [{"x": 1}, {"x": 1}], "d": {"e": null}}"#;
//! let out = codec.compress(Payload::json(input), Level::Minimal).unwrap();
//! let compact = r#"{"a":1,"c":[{"_repeat":2,"_value":{"x":1}}],"d":{}}"#;
//! assert_eq!(out, Outcome::lossless(compact));
//! assert_eq!(codec.expand(compact).unwrap(), r#"{"a":1,"c":[{"x":1},{"x":1}],"d":{}}"#);
//! ```
#![forbid(unsafe_code)]

use parrot_codec_api::{Codec, CodecError, CodecMeta, DynCodec, Outcome, Params};

mod clip;
pub mod columnar;
mod counted;
mod cut;
pub mod hits;
pub mod json_compact;
pub mod log;
pub mod nested;
pub mod paths;
pub mod table;
pub mod toon;
#[cfg(test)]
mod validating;

pub use columnar::Columnar;
pub use hits::Hits;
pub use json_compact::JsonCompact;
pub use log::Log;
pub use nested::JsonNested;
pub use paths::Paths;
pub use table::Table;
pub use toon::Toon;

/// The text of what a codec wrote: always UTF-8, since every byte came from `&str` slices
/// cut at character boundaries or from ASCII.
pub(crate) fn into_text(out: Vec<u8>) -> Option<String> {
    String::from_utf8(out).ok()
}

/// What a built-in codec's transform made of a payload, before the no-gain rule.
pub(crate) struct Transformed {
    pub(crate) text: String,
    pub(crate) lossy: bool,
}

impl Transformed {
    /// The outcome under the no-gain rule: a transform whose text is not strictly smaller than
    /// the input leaves it unchanged.
    pub(crate) fn outcome(done: Option<Transformed>, input: &str) -> Outcome {
        match done {
            Some(done) if done.text.len() < input.len() => Outcome::Changed {
                payload: done.text,
                lossy: done.lossy,
            },
            _ => Outcome::Unchanged,
        }
    }
}

/// A built-in codec: what it declares about itself and how to build it from params.
#[derive(Debug)]
pub struct Builtin {
    /// The codec's metadata, as its [`Codec`] impl declares it.
    pub meta: CodecMeta,
    /// Builds the codec from a manifest entry's params, rejecting unknown keys.
    pub build: fn(Params) -> Result<Box<dyn DynCodec>, CodecError>,
    /// The codec validates a JSON payload in its own pass, as `parrot_json::check` would: at
    /// every level and with any params, it returns [`Outcome::Changed`] for a payload given as
    /// JSON only when the whole text is JSON that `check` accepts (no duplicate member name at
    /// any depth, nested no deeper than `parrot_json::MAX_DEPTH`, nothing after the value),
    /// and it leaves every text payload unchanged. So the host may give it a payload that
    /// starts like a JSON container before checking it, and check it only when the codec
    /// leaves it unchanged or fails (docs/CONTRACT.md §4, the fused pass). Property-tested in
    /// `validating.rs` on the corpus and on invalid variants of it.
    pub validates_json: bool,
}

impl Builtin {
    /// The registration of codec `C`.
    pub const fn of<C: Codec>() -> Builtin {
        Builtin {
            meta: CodecMeta::of::<C>(),
            build: build_boxed::<C>,
            validates_json: false,
        }
    }

    /// The registration of codec `C`, which validates its JSON payloads in its own pass (see
    /// [`Builtin::validates_json`]).
    pub const fn validating<C: Codec>() -> Builtin {
        Builtin {
            validates_json: true,
            ..Builtin::of::<C>()
        }
    }
}

fn build_boxed<C: Codec>(params: Params) -> Result<Box<dyn DynCodec>, CodecError> {
    Ok(Box::new(parrot_codec_api::build::<C>(params)?))
}

inventory::collect!(Builtin);

/// Every registered built-in codec, sorted by name (inventory itself gives no order).
pub fn builtins() -> Vec<&'static Builtin> {
    let mut all: Vec<&'static Builtin> = inventory::iter::<Builtin>.into_iter().collect();
    all.sort_by_key(|builtin| builtin.meta.name());
    all
}
