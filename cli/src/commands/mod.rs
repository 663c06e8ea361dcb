//! The commands, one module each; [`run`] dispatches to them.

use std::io::{Read, Write};

use parrot_recover::Selector;

use crate::Failure;
use crate::args::{Command, Options};
use crate::host::host;
use crate::replay::replay;
#[cfg(feature = "serve")]
use crate::serve;

mod check;
mod compress;
mod expand;
mod mcp_proxy;
mod namespace;
mod package;
mod plugins;
mod recover;
mod router;
mod store;

use check::check;
use compress::compress;
use expand::expand;
use mcp_proxy::mcp_proxy;
use namespace::namespace;
use plugins::plugins;
use recover::{count, recover};
use store::store;

/// Runs `command` with its configuration `cli`.
pub(crate) fn run(command: &Command, cli: &Options) -> Result<(), Failure> {
    match command {
        Command::Compress {
            tool,
            status,
            level,
            meta,
            file,
            ..
        } => compress(cli, tool, status, *level, *meta, file),
        Command::Check { .. } => {
            check(&host(cli, false, None)?);
            Ok(())
        }
        Command::Expand { codec, file, .. } => expand(cli, codec, file),
        Command::Explain { tool, .. } => {
            print!("{}", host(cli, false, None)?.explain(tool));
            Ok(())
        }
        Command::Replay {
            file, out, json, ..
        } => replay(cli, file.as_deref(), out.as_deref(), *json),
        Command::Recover {
            key,
            namespace,
            lines,
            grep,
            context,
            pointer,
            rows,
            max_chars,
            ..
        } => {
            let selector = Selector {
                lines: lines.clone(),
                grep: grep.clone(),
                context: count("context", context.as_deref())?,
                pointer: pointer.clone(),
                rows: rows.clone(),
                max_chars: count("max_chars", max_chars.as_deref())?,
            };
            recover(cli, namespace.as_ref(), key, &selector)
        }
        Command::Store { .. } => store(cli),
        Command::Namespace { env } => namespace(env.as_deref()),
        Command::Package {
            crate_dir,
            library,
            manifest,
            profile,
            out,
        } => package::package(&package::Request {
            crate_dir: crate_dir.as_deref(),
            library: library.as_deref(),
            manifest: manifest.as_deref(),
            profile,
            out,
        }),
        Command::Plugins { .. } => {
            plugins(&host(cli, false, None)?);
            Ok(())
        }
        Command::McpProxy {
            report,
            recovery_max_chars,
            namespace,
            server,
            ..
        } => mcp_proxy(cli, server, *report, *recovery_max_chars, namespace.clone()),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(cli, args),
    }
}

pub(crate) fn read_input(file: &str) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|err| Failure::runtime(format!("stdin: cannot read: {err}")))?;
    } else {
        bytes = std::fs::read(file)
            .map_err(|err| Failure::runtime(format!("{file}: cannot read: {err}")))?;
    }
    Ok(bytes)
}

pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|err| Failure::runtime(format!("stdout: cannot write: {err}")))
}
