//! What the stage checks about JSON text: whether it is JSON the codecs may see, the shape of a
//! codec's output, and equality as the contract counts it (for verification) — all from the
//! codecs' own validating reader, which builds no owned value tree.

pub(crate) use parrot_codecs::inspect::{JsonCheck, TopLevel, check, equivalent, top_level};
