//! The built-in codecs of parrot-compress, compiled into the host.
//!
//! Each codec lives in its own module and registers itself with [`inventory`]
//! (`inventory::submit! { Builtin::of::<TheCodec>() }`); the host lists them with [`builtins`]. Plugins never use this mechanism:
//! across a library boundary the host loads codecs through `parrot-codec-api`'s root module.
//!
//! # Examples
//!
//! ```
//! let names: Vec<&str> = parrot_codecs::builtins().iter().map(|b| b.name).collect();
//! assert_eq!(names, ["columnar", "json_compact"]);
//! ```
#![forbid(unsafe_code)]

use parrot_codec_api::{Codec, CodecError, DynCodec, Params};

pub mod columnar;
pub mod json_compact;

pub use columnar::Columnar;
pub use json_compact::JsonCompact;

/// A built-in codec: its name and how to build it from params.
#[derive(Debug)]
pub struct Builtin {
    /// The name manifests use.
    pub name: &'static str,
    /// Whether the codec offers its inverse.
    pub expands: bool,
    /// Builds the codec from a manifest entry's params, rejecting unknown keys.
    pub build: fn(Params) -> Result<Box<dyn DynCodec>, CodecError>,
}

impl Builtin {
    /// The registration of codec `C`.
    pub const fn of<C: Codec>() -> Builtin {
        Builtin {
            name: C::NAME,
            expands: C::EXPANDS,
            build: build_boxed::<C>,
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
    all.sort_by_key(|builtin| builtin.name);
    all
}
