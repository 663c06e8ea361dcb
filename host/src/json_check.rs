//! What the stage checks about JSON text: whether it is JSON the codecs may see, the shape of a
//! codec's output, and equality as the contract counts it (for verification) — all from
//! `parrot_json`, the reader the codecs use, which builds no owned value tree.

pub(crate) use parrot_json::{JsonCheck, TopLevel, check, equivalent, top_level};
