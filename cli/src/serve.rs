//! `parrot-compress serve`: the HTTP proxy for LLM APIs (see `parrot_serve`).

use std::io::Write;
use std::sync::Arc;

use parrot_host::TokenCounter;
use parrot_serve::{Config, Upstream};

use crate::Failure;
use crate::args::{Options, ServeArgs};
use crate::host::{builder, killed, tokenizer};

/// Runs the proxy until SIGINT or SIGTERM.
pub fn serve(cli: &Options, args: &ServeArgs) -> Result<(), Failure> {
    let upstream = |url: &str, option: &str| {
        Upstream::parse(url).map_err(|err| Failure::config(vec![format!("{option}: {err}")]))
    };
    let config = Config {
        listen: args.listen,
        anthropic: upstream(&args.upstream_anthropic, "--upstream-anthropic")?,
        openai: upstream(&args.upstream_openai, "--upstream-openai")?,
        tokenizer: tokenizer(cli).name().to_owned(),
        max_body_bytes: args.max_body_bytes,
        max_connections: args.max_connections,
        header_read_timeout: std::time::Duration::from_secs(args.header_read_timeout as u64),
        shared_unscoped: args.shared_unscoped,
    };
    // With the kill switch on, a pure relay: no host, no store opened.
    let host = if killed() {
        None
    } else {
        let mut builder = builder(cli, true, None)?;
        // The agent may need a changed result's exact text back, as through the MCP proxy.
        builder.tee_lossless(true);
        // The rewrite runs on tokio's blocking pool, off the request's thread: a result over
        // the placement's thresholds is an executor call there (its budget the executor's),
        // compressed like any other (`Host::process_offloaded`), never passed through for its
        // size.
        builder
            .inline_at_any_size(false)
            .recovery_max_chars(args.recovery_max_chars);
        Some(Arc::new(builder.build().map_err(|err| {
            Failure::config(err.errors.iter().map(ToString::to_string).collect())
        })?))
    };
    let served = parrot_serve::run_until_signal(config, host.clone(), |addr| {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "listening on http://{addr}");
        let _ = stdout.flush();
    });
    if let (true, Some(host)) = (args.report, &host) {
        host.flush();
        eprint!("{}", host.report().snapshot().render_table());
    }
    served.map_err(|err| Failure::runtime(err.to_string()))
}
