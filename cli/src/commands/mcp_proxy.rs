//! `mcp-proxy`: an MCP server behind a relay that compresses its tool results.

use std::ffi::OsString;
use std::io::Write;
use std::sync::{Arc, OnceLock};

use parrot_host::Namespace;
use parrot_mcp::Proxy;

use crate::Failure;
use crate::args::Options;
use crate::host::{builder, killed};

/// Relays between the client on stdin/stdout and `server`; see `parrot_mcp`.
pub(crate) fn mcp_proxy(
    cli: &Options,
    server: &[OsString],
    report: bool,
    recovery_max_chars: usize,
    namespace: Option<Namespace>,
) -> Result<(), Failure> {
    let Some((program, args)) = server.split_first() else {
        return Err(Failure::config(vec![
            "mcp-proxy: no server command given after --".to_owned(),
        ]));
    };
    let mut command = std::process::Command::new(program);
    command.args(args);
    // With the kill switch on, the proxy is a pure relay: no host is built, so not even a
    // broken manifest can stand between the client and its server.
    let (proxy, host) = if killed() {
        (Proxy::relay(), None)
    } else {
        let mut builder = builder(cli, true, None)?;
        // The agent may need a changed block's exact text back (to quote a file it edits),
        // not only an equal value.
        builder
            .tee_lossless(true)
            .recovery_max_chars(recovery_max_chars);
        let host = Arc::new(builder.build().map_err(|err| {
            Failure::config(err.errors.iter().map(ToString::to_string).collect())
        })?);
        let namespace = namespace.unwrap_or_else(Namespace::random);
        // Once, so that a person can find the session's originals after it ended. A name, not
        // a secret: reading the store takes access to the store.
        let _ = writeln!(
            std::io::stderr(),
            "mcp-proxy: this session's originals are in namespace {namespace} \
             (parrot-compress recover --namespace {namespace} KEY)"
        );
        (
            Proxy::in_namespace(Arc::clone(&host), namespace),
            Some(host),
        )
    };
    // The process runs this one session: it can be the reaper of everything the server starts.
    let proxy = proxy.reaper();
    let signalled = stop_on_signals(&proxy)?;
    let ended = proxy.run(
        command,
        std::io::stdin(),
        std::io::stdout(),
        std::io::stderr(),
    );
    if let (true, Some(host)) = (report, host) {
        host.flush();
        // After a SIGHUP stderr may be a terminal that is gone: the report is lost, the exit
        // status still says why the proxy ended.
        let _ = write!(
            std::io::stderr(),
            "{}",
            host.report().snapshot().render_table()
        );
    }
    let mut failure = match ended {
        Ok(()) => None,
        Err(err) => Some(Failure::runtime(err.to_string())),
    };
    // Ended by a signal: the status a shell gives a process that signal killed, so that the
    // client (and its log) can tell a stop from a crash of the server.
    if let Some(signal) = signalled.get().and_then(|&n| u8::try_from(128 + n).ok()) {
        let lines = failure.take().map(|f| f.lines).unwrap_or_default();
        failure = Some(Failure {
            code: signal,
            lines,
        });
    }
    failure.map_or(Ok(()), Err)
}

/// The first of SIGTERM, SIGINT and SIGHUP the process receives from now on stops `proxy`'s
/// session; what it holds once the session has ended is that signal's number.
#[cfg(unix)]
pub(crate) fn stop_on_signals(proxy: &Proxy) -> Result<Arc<OnceLock<i32>>, Failure> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])
        .map_err(|err| Failure::runtime(format!("mcp-proxy: cannot handle signals: {err}")))?;
    let received = Arc::new(OnceLock::new());
    let seen = Arc::clone(&received);
    let stop = proxy.stop_handle();
    std::thread::spawn(move || {
        for signal in signals.forever() {
            // Set before the stop, so that the session's end finds it. A later signal finds
            // the ending under way, bounded by its own grace periods.
            if seen.set(signal).is_ok() {
                stop.stop();
            }
        }
    });
    Ok(received)
}

/// No signals to wire: the default actions stay.
#[cfg(not(unix))]
pub(crate) fn stop_on_signals(_proxy: &Proxy) -> Result<Arc<OnceLock<i32>>, Failure> {
    Ok(Arc::new(OnceLock::new()))
}
