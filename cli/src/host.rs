//! The host a command runs with, built from the command line's options.

use std::sync::Arc;

use parrot_host::{Host, HostBuilder, MemoryTeeStore, Meta, Observer, Skip, Tokenizer};

use crate::Failure;
use crate::args::{Options, TokenizerArg};
use crate::store::persistent_or_unavailable;

/// Whether the kill switch (`PARROT_COMPRESSION_DISABLED=1`) is on. Read before anything
/// else: with it on, no manifest, plugin or store is touched.
pub(crate) fn killed() -> bool {
    parrot_host::kill_switch_from_env()
}

pub(crate) fn tokenizer(cli: &Options) -> Tokenizer {
    match cli.tokenizer {
        TokenizerArg::O200k => Tokenizer::O200k,
        TokenizerArg::Cl100k => Tokenizer::Cl100k,
    }
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
    builder
        .build()
        .map_err(|err| Failure::config(err.errors.iter().map(ToString::to_string).collect()))
}

/// The builder of [`host`], for a command that adds settings of its own.
pub(crate) fn builder(
    cli: &Options,
    store: bool,
    observer: Option<Arc<dyn Observer>>,
) -> Result<HostBuilder, Failure> {
    let mut builder: HostBuilder = Host::builder();
    if let Some(observer) = observer {
        builder.observer(observer);
    }
    builder
        .project(cli.project_dir())
        .tokenizer(Arc::new(tokenizer(cli)))
        // A whole MCP result given to `compress` or `replay` has its text blocks routed one by
        // one, an `isError` result passed through (the host itself knows no protocol).
        .envelope(Arc::new(parrot_mcp::ContentBlocks));
    for dir in &cli.plugins {
        builder.plugin_dir(dir);
    }
    if cli.trust_project_plugins {
        builder.trust_project_plugins(true);
    }
    // A person who runs the command asked for the result: compress inline at any size.
    builder.inline_at_any_size(true);
    // Every command that processes calls decided the kill switch before building (`killed`):
    // with it on, none builds a host, so the store is not even opened (or created).
    builder.kill_switch(Some(false));
    if !cli.no_tee {
        if store {
            builder.tee_store(persistent_or_unavailable(cli)?);
        } else {
            builder.tee_store(Arc::new(MemoryTeeStore::new(1)));
        }
    }
    Ok(builder)
}

/// The metadata of a call with the kill switch on: what the host gives it (the payload went out
/// as it came, uncounted).
pub(crate) fn killed_meta(size: usize) -> Meta {
    Meta::passed_through(size, Skip::KillSwitch)
}
