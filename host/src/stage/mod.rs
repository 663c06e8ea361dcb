//! The stage every tool result passes through: the entry table that says which entry applies
//! to a tool ([`entries`]) and why ([`explain`]), the pipeline of rules ([`pipeline`], public as
//! `parrot_host::pipeline`), and the way back from a codec's output to its original
//! ([`expand`]).

pub(crate) mod entries;
pub(crate) mod expand;
pub(crate) mod explain;
pub mod pipeline;
