//! The host a command runs with, built from the command line's options (as `parrot_setup` sets
//! one up).

use std::sync::Arc;

use parrot_host::{Host, HostBuilder, Meta, Observer, Tokenizer};

use crate::Failure;
use crate::args::Options;

/// Whether the kill switch (`PARROT_COMPRESSION_DISABLED=1`) is on. Read before anything
/// else: with it on, no manifest, plugin or store is touched.
pub(crate) fn killed() -> bool {
    parrot_setup::killed()
}

pub(crate) fn tokenizer(cli: &Options) -> Tokenizer {
    cli.settings().tokenizer
}

/// The host for `cli`. `store` says whether this command reads or writes the tee store: the
/// persistent store is opened (and created) only then; other commands only need to know
/// whether one is configured, which decides the effective levels they show.
pub(crate) fn host(
    cli: &Options,
    store: bool,
    observer: Option<Arc<dyn Observer>>,
) -> Result<Host, Failure> {
    build(&mut builder(cli, store, observer)?)
}

/// Builds the host, a configuration error being one line per problem (exit 2).
pub(crate) fn build(builder: &mut HostBuilder) -> Result<Host, Failure> {
    parrot_setup::build(builder).map_err(Failure::from)
}

/// The builder of [`host`], for a command that adds settings of its own.
pub(crate) fn builder(
    cli: &Options,
    store: bool,
    observer: Option<Arc<dyn Observer>>,
) -> Result<HostBuilder, Failure> {
    parrot_setup::builder(&cli.settings(), store, observer).map_err(Failure::from)
}

/// The metadata of a call with the kill switch on: what the host gives it (the payload went out
/// as it came, uncounted).
pub(crate) fn killed_meta(size: usize) -> Meta {
    parrot_setup::killed_meta(size)
}
