//! `recover`: an original from the tee store, whole or the part a selector chooses.

use std::num::IntErrorKind;
use std::sync::Arc;

use parrot_host::{Host, HostBuilder, Namespace};
use parrot_recover::{Recover, RetrieveError, Selector};

use super::write_stdout;
use crate::Failure;
use crate::args::Options;
use crate::host::{builder, tokenizer};
use crate::store::store_only;

/// Without a selector: the exact original bytes (a person or a script asked for the file).
/// With one: the retrieval, as `wm_get_result` returns it but with the continuation written as
/// this command's arguments. The store is the one thing it needs: a selector's rows are written
/// as the key's tool entry writes a table when the project's configuration builds, and by the
/// core configuration alone (built-in codecs, no manifest, no plugin) when it does not.
/// Without `namespace`, a key written `{namespace}/{key}` is refused with the `--namespace`
/// that reads it: every other way in answers it as a key nobody holds
/// ([`Host::recover_in`]), and the person at the command is told how to ask instead.
pub(crate) fn recover(
    cli: &Options,
    namespace: Option<&Namespace>,
    key: &str,
    selector: &Selector,
) -> Result<(), Failure> {
    if let (None, Some((named, plain))) = (namespace, Namespace::split_scoped(key)) {
        return Err(Failure::config(vec![format!(
            "key \"{key}\" names namespace \"{named}\": without --namespace, recover reads \
             only originals of no namespace; run `parrot-compress recover --namespace {named} \
             {plain}`"
        )]));
    }
    let store = store_only(cli)?.shared();
    let not_found = || Failure::runtime(parrot_setup::not_found(store.as_ref(), namespace, key));
    if selector.is_empty() {
        let stored = match namespace {
            Some(namespace) => store.get(&namespace.scoped_key(key)),
            None => store.get(key),
        };
        return match stored {
            Ok(Some(original)) => write_stdout(&original),
            Ok(None) => Err(not_found()),
            Err(err) => Err(Failure::runtime(err.to_string())),
        };
    }
    let build = |builder: &mut HostBuilder| {
        builder
            .tokenizer(Arc::new(tokenizer(cli)))
            .kill_switch(Some(false))
            .tee_store(store.clone())
            .build()
    };
    let project = builder(cli, false, None)
        .ok()
        .and_then(|mut project| build(&mut project).ok());
    let host = match project {
        Some(host) => host,
        None => build(Host::builder().core_only())
            .map_err(|err| Failure::config(err.errors.iter().map(ToString::to_string).collect()))?,
    };
    match host.recover_selected_in(namespace, key, selector) {
        Ok(retrieval) => {
            let mut text = retrieval.command_text();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            write_stdout(text.as_bytes())
        }
        Err(err @ RetrieveError::Selector { .. }) => Err(Failure::config(vec![err.to_string()])),
        Err(RetrieveError::NotFound { .. }) => Err(not_found()),
        Err(err) => Err(Failure::runtime(err.to_string())),
    }
}

/// A selector's count (`--context`, `--max-chars`): a whole number too large for usize
/// saturates, as the selector's sums do.
pub(crate) fn count(name: &str, value: Option<&str>) -> Result<Option<usize>, Failure> {
    value
        .map(|text| match text.parse::<usize>() {
            Ok(n) => Ok(n),
            Err(err) if *err.kind() == IntErrorKind::PosOverflow => Ok(usize::MAX),
            Err(_) => Err(Failure::config(vec![format!(
                "selector \"{name}\": expected a non-negative integer, got \"{text}\""
            )])),
        })
        .transpose()
}
