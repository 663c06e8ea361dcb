//! `compress`: one tool result through the pipeline, the payload to stdout.

use std::sync::Arc;

use parrot_host::{Call, Input, Level, Status};

use super::{read_input, write_stdout};
use crate::Failure;
use crate::args::Options;
use crate::host::{build, builder, killed, killed_meta};
use crate::store::{Deferred, StoreAt, store_at};

pub(crate) fn compress(
    cli: &Options,
    tool: &str,
    status: &str,
    level: Option<Level>,
    with_meta: bool,
    file: &str,
) -> Result<(), Failure> {
    let input = read_input(file)?;
    // The kill switch comes before any manifest, plugin or store: not even a broken
    // configuration stands between the caller and its payload.
    if killed() {
        write_stdout(&input)?;
        if with_meta {
            eprintln!("{}", killed_meta(input.len()).to_json());
        }
        return Ok(());
    }
    // The store is opened by the call that needs it (see `Deferred`).
    let deferred = match store_at(cli) {
        StoreAt::File(path) if !cli.no_tee => Some(Arc::new(Deferred::new(path))),
        _ => None,
    };
    let store = deferred.is_none();
    let mut builder = builder(cli, store, None)?;
    if let Some(deferred) = &deferred {
        builder.tee_store(deferred.clone());
    }
    // Token counts are shown only with --meta: without it nothing counts them for the report,
    // so the tokenizer is loaded only if the no-gain rule needs it.
    let host = build(builder.report_tokens(with_meta))?;
    // A result with another status is always stored: its store is refused before the call.
    if let Some(deferred) = deferred
        .as_ref()
        .filter(|_| Status::of(status) == Status::Failure)
    {
        deferred.store();
        if let Some(reason) = deferred.refused() {
            return Err(Failure::runtime(reason));
        }
    }
    let mut call = Call::new(tool, Input::Bytes(&input)).status(status);
    call.level = level;
    let processed = host.process(call);
    if let Some(reason) = deferred.as_ref().and_then(|deferred| deferred.refused()) {
        return Err(Failure::runtime(reason));
    }
    write_stdout(&processed.payload)?;
    if with_meta {
        // The call's own token counts, as the host's worker counted them.
        eprintln!("{}", processed.meta_json());
    }
    Ok(())
}
