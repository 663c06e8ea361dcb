//! Configuration: which `compressors.toml` manifests a host reads ([`discovery`]), what a
//! manifest says ([`manifest`], with the core manifest `core.toml`), its entry keys
//! ([`pattern`]), how a plugin package lays out its library and manifest ([`package`]), and
//! reading the files a host is configured by without blocking on them ([`regular`]).

pub(crate) mod discovery;
pub mod manifest;
pub(crate) mod package;
pub(crate) mod pattern;
pub(crate) mod regular;
