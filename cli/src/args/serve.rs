//! The options of `serve`: a module of the command line's, so that `serve` reads them and
//! nothing here reads `serve`.

use std::net::SocketAddr;

use clap::Args;
use parrot_host::DEFAULT_RECOVERY_MAX_CHARS;
use parrot_serve::{
    DEFAULT_ANTHROPIC, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_LISTEN, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_OPENAI,
};

use super::Configuration;

/// The options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub(crate) configuration: Configuration,
    /// The address to listen on (port 0: any free port); printed on stdout once listening.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    pub(crate) listen: SocketAddr,
    /// Where Anthropic requests go (/v1/messages…, or any request with an anthropic-version
    /// header).
    #[arg(long, value_name = "URL", default_value = DEFAULT_ANTHROPIC)]
    pub(crate) upstream_anthropic: String,
    /// Where every other request goes (OpenAI Chat Completions, Responses, …).
    #[arg(long, value_name = "URL", default_value = DEFAULT_OPENAI)]
    pub(crate) upstream_openai: String,
    /// When stopped (SIGINT, SIGTERM), write the savings report to stderr.
    #[arg(long)]
    pub(crate) report: bool,
    /// The largest request body the proxy reads to rewrite (default 32 MiB, the Anthropic API's
    /// own limit); a longer one is answered 413. Other requests are streamed, whatever their size.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES,
          value_parser = positive_bytes)]
    pub(crate) max_body_bytes: usize,
    /// How many client connections may be open at once; one more is closed at once, with a
    /// warning.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = positive)]
    pub(crate) max_connections: usize,
    /// How many seconds a client has to send a request's headers (on a new connection, or one
    /// kept alive after an answer) before the connection is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_HEADER_READ_TIMEOUT.as_secs() as usize,
          value_parser = positive)]
    pub(crate) header_read_timeout: usize,
    /// The most characters of one wm_get_result answer, whatever the model's selector asks
    /// (max_chars 0 included), so no follow-up carries a whole original upstream; a capped
    /// answer says so and ends with the arguments of the next part. 0: no cap.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RECOVERY_MAX_CHARS)]
    pub(crate) recovery_max_chars: usize,
    /// Let requests without a credential (no x-api-key, api-key, x-goog-api-key,
    /// authorization, nor ?key=) share one scope: each reads the originals the others stored,
    /// and gets the recoveries answered for them put back. Without it, such a request is
    /// alone: its originals are recovered only within its own request, and nothing is put
    /// back in a later one. For clients without a key that are all one user's (a local model).
    #[arg(long)]
    pub(crate) shared_unscoped: bool,
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
