//! The `parrot-compress` command.
//!
//! Exit codes: 0 success; 1 a runtime failure (unreadable input, unknown tee key); 2 bad usage
//! or invalid configuration; `mcp-proxy` ended by SIGTERM, SIGINT or SIGHUP: 128 + the signal's
//! number (143, 130, 129), as a shell reports a process the signal killed. Errors go to stderr,
//! one line each.

// The doc comments of the arguments are the command's `--help` text, written for a terminal:
// brackets there are usage syntax (`redis://[:PASSWORD@]HOST`), not links.
#![allow(rustdoc::broken_intra_doc_links)]

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

use crate::args::Cli;
use crate::commands::run;

mod args;
mod commands;
mod host;
mod replay;
#[cfg(feature = "serve")]
mod serve;
mod store;

/// A failure with its exit code.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) lines: Vec<String>,
}

impl Failure {
    pub(crate) fn runtime(line: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            lines: vec![line.into()],
        }
    }

    pub(crate) fn config(lines: Vec<String>) -> Failure {
        Failure { code: 2, lines }
    }
}

impl From<parrot_setup::SetupError> for Failure {
    fn from(err: parrot_setup::SetupError) -> Failure {
        match err {
            parrot_setup::SetupError::Config(lines) => Failure::config(lines),
            parrot_setup::SetupError::Runtime(line) => Failure::runtime(line),
            other => Failure::runtime(other.to_string()),
        }
    }
}

fn main() -> ExitCode {
    let parsed = Cli::try_parse().and_then(|cli| {
        let options = cli.options()?;
        Ok((cli.command, options))
    });
    let (command, options) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            let usage = err.use_stderr();
            let _ = err.print();
            return if usage {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    tracing_subscriber::fmt()
        .with_ansi(colour())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PARROT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
        .init();
    match run(&command, &options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            for line in failure.lines {
                eprintln!("error: {}", printable(&line));
            }
            ExitCode::from(failure.code)
        }
    }
}

/// Colour escapes only for a person at a terminal, and never when `NO_COLOR` is set (to
/// anything but the empty string, <https://no-color.org>): in a pipe or a log file they are noise.
pub(crate) fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`): names read from files
/// (manifest keys, paths, codec names) print as one line and cannot drive the terminal.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    std::borrow::Cow::Owned(escaped)
}
