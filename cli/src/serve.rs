//! `parrot-compress serve`: the HTTP proxy for LLM APIs (see `parrot_serve`).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use clap::Args;
use parrot_host::{DEFAULT_RECOVERY_MAX_CHARS, TokenCounter};
use parrot_serve::{
    Config, DEFAULT_ANTHROPIC, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_LISTEN, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_OPENAI, Upstream,
};

use crate::Failure;
use crate::args::{Configuration, Options};
use crate::host::{builder, killed, tokenizer};

/// The options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub(crate) configuration: Configuration,
    /// The address to listen on (port 0: any free port); printed on stdout once listening.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Where Anthropic requests go (/v1/messages…, or any request with an anthropic-version
    /// header).
    #[arg(long, value_name = "URL", default_value = DEFAULT_ANTHROPIC)]
    upstream_anthropic: String,
    /// Where every other request goes (OpenAI Chat Completions, Responses, …).
    #[arg(long, value_name = "URL", default_value = DEFAULT_OPENAI)]
    upstream_openai: String,
    /// When stopped (SIGINT, SIGTERM), write the savings report to stderr.
    #[arg(long)]
    report: bool,
    /// The largest request body the proxy reads to rewrite (default 32 MiB, the Anthropic API's
    /// own limit); a longer one is answered 413. Other requests are streamed, whatever their size.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES,
          value_parser = positive_bytes)]
    max_body_bytes: usize,
    /// How many client connections may be open at once; one more is closed at once, with a
    /// warning.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = positive)]
    max_connections: usize,
    /// How many seconds a client has to send a request's headers (on a new connection, or one
    /// kept alive after an answer) before the connection is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_HEADER_READ_TIMEOUT.as_secs() as usize,
          value_parser = positive)]
    header_read_timeout: usize,
    /// The most characters of one wm_get_result answer, whatever the model's selector asks
    /// (max_chars 0 included), so no follow-up carries a whole original upstream; a capped
    /// answer says so and ends with the arguments of the next part. 0: no cap.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RECOVERY_MAX_CHARS)]
    recovery_max_chars: usize,
}

/// A positive number of bytes.
fn positive_bytes(text: &str) -> Result<usize, String> {
    positive(text).map_err(|err| err.replace("a number", "a number of bytes"))
}

/// A positive whole number.
fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(err) => Err(format!("not a number: {err}")),
    }
}

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
    };
    // With the kill switch on, a pure relay: no host, no store opened.
    let host = if killed() {
        None
    } else {
        let mut builder = builder(cli, true, None)?;
        // The agent may need a changed result's exact text back, as through the MCP proxy.
        builder.tee_lossless(true);
        // A request never waits on a large result: what the router would not compress inline
        // passes through, the same way on every request (the cached prefix holds).
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
