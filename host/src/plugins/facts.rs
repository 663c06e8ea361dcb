//! What the stage needs to know of a codec, resolved once when the host is built.
//!
//! A plugin codec's declarations cross the library boundary each time they are asked for
//! (`DynCodec::meta` builds a `CodecMeta`), and whether a codec is built in or validates JSON
//! in its own pass is the registry's to say. None of it changes while a host lives, so the
//! entry table (an entry's codec) and `auto` (each candidate) ask once and keep the answers.

use std::sync::Arc;

use parrot_codec_api::{CodecMeta, DynCodec};

use crate::plugins::registry::{Origin, Registry};

/// A built codec with the facts the stage reads on every call.
#[derive(Clone)]
pub(crate) struct Resolved {
    /// The codec.
    pub(crate) codec: Arc<dyn DynCodec>,
    /// Its declarations, read once.
    pub(crate) facts: Facts,
}

/// A codec's facts, as the stage's rules use them.
#[derive(Clone)]
pub(crate) struct Facts {
    /// The codec's name, as metadata and logs give it.
    pub(crate) name: String,
    /// What the codec declares (its inverse's policy: `gives_back`).
    pub(crate) meta: CodecMeta,
    /// The codec is built in (verification policy, JSON by construction).
    pub(crate) builtin: bool,
    /// A built-in that validates JSON in its own pass (the fused pass, CONTRACT §4).
    pub(crate) validates_json: bool,
    /// The codec implements its inverse.
    pub(crate) expands: bool,
    /// Its output for a JSON payload is text, not JSON.
    pub(crate) text_output: bool,
    /// The codec offers a cut of its own output to a size (rule 11).
    pub(crate) cuts: bool,
}

impl Resolved {
    /// `codec`, registered in `registry` under `name`, with its facts.
    pub(crate) fn new(registry: &Registry, name: &str, codec: Arc<dyn DynCodec>) -> Resolved {
        let meta = codec.meta();
        let facts = Facts {
            name: codec.name().to_owned(),
            builtin: registry
                .get(name)
                .is_some_and(|info| info.origin == Origin::Builtin),
            validates_json: registry.validates_json(name),
            expands: meta.expands(),
            text_output: meta.text_output(),
            cuts: codec.cuts(),
            meta,
        };
        Resolved { codec, facts }
    }
}
