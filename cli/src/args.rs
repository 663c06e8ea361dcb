//! The command line: its subcommands and their options, as clap reads them.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use parrot_host::{DEFAULT_RECOVERY_MAX_CHARS, Level, Namespace};

#[cfg(feature = "serve")]
use crate::serve;

/// Compresses the results of LLM tool calls before a model sees them.
#[derive(Debug, Parser)]
#[command(name = "parrot-compress", version, about)]
pub(crate) struct Cli {
    /// The project root: its manifest is DIR/.parrot/compressors.toml, its plugin source
    /// DIR/.parrot/plugins (loaded only with --trust-project-plugins).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,

    /// A plugin source directory (a package, or a folder of packages); repeatable, in
    /// precedence order, ahead of PARROT_PLUGIN_PATH and the project's own.
    #[arg(long = "plugins", global = true, value_name = "DIR")]
    pub(crate) plugins: Vec<PathBuf>,

    /// Load the project's own plugins, DIR/.parrot/plugins (also PARROT_TRUST_PROJECT_PLUGINS=1):
    /// loading a plugin runs its native code, so a project's are left out unless you trust it.
    #[arg(long, global = true)]
    pub(crate) trust_project_plugins: bool,

    /// The persistent tee store: a SQLite file (default: DIR/.parrot/tee.db, created on first
    /// use), or a Redis URL, redis://[:PASSWORD@]HOST[:PORT][/DB][?prefix=P&ttl=SECS] (rediss://
    /// for TLS; the password also from PARROT_TEE_REDIS_PASSWORD), shared by every machine
    /// that reaches it.
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub(crate) tee_store: Option<PathBuf>,

    /// Run without a tee store: normal and aggressive are capped to minimal.
    #[arg(long, global = true, conflicts_with = "tee_store")]
    pub(crate) no_tee: bool,

    /// The tokenizer for token counts.
    #[arg(long, global = true, value_enum, default_value_t = TokenizerArg::O200k)]
    pub(crate) tokenizer: TokenizerArg,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum TokenizerArg {
    O200k,
    Cl100k,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Compress one tool result (JSON if it parses as JSON, else text) from FILE or stdin and
    /// write exactly the payload the model would see to stdout.
    Compress {
        /// The tool that produced the result.
        #[arg(long)]
        tool: String,
        /// The call's status; anything but success is never compressed.
        #[arg(long, default_value = "success")]
        status: String,
        /// Per-call level override: none, minimal, normal or aggressive.
        #[arg(long, value_parser = parse_level)]
        level: Option<Level>,
        /// Write the call's metadata (with token counts) as one JSON line to stderr.
        #[arg(long)]
        meta: bool,
        /// The result file, or - for stdin.
        #[arg(default_value = "-")]
        file: String,
    },
    /// Discover and validate every manifest, load every plugin, print a summary; exit 2 with
    /// each error on stderr when anything is invalid.
    Check,
    /// Which entry applies to TOOL: source, key, match kind, codec, level, effective level,
    /// and the entries that lost to it.
    Explain {
        /// The tool name.
        tool: String,
    },
    /// Run a session of tool calls (JSON lines {"tool", "status", "result"}) through one
    /// pipeline and print the savings report. Without FILE: the built-in sample session.
    Replay {
        /// The session file (JSON lines); default: the built-in sample session.
        file: Option<PathBuf>,
        /// Also write one line per call {"tool", "payload", "meta"} to this file.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Print the report as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print the exact original payload stored under KEY, or the part of it the selectors
    /// choose (after a header line naming the key and the selectors; a part cut to size ends
    /// with "[more: …]", the arguments of the next part). Exit 1 if nothing is stored under
    /// KEY, 2 for a bad selector. Reads only the tee store: no manifest is read, no plugin
    /// loaded.
    Recover {
        /// The tee key (from a `_tee` pointer or `compression_tee_key`).
        key: String,
        /// The namespace the original was stored in: an mcp-proxy session's (logged when it
        /// starts, or the --namespace it was given), or a serve client's (`parrot-compress
        /// namespace` computes it from the API key). Without it: an original stored unscoped.
        #[arg(long, value_name = "NAME", value_parser = parse_namespace)]
        namespace: Option<Namespace>,
        /// Lines of a text original, 1-based and inclusive: A-B, -N (the last N), A- (A to the
        /// end), or A.
        #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
        lines: Option<String>,
        /// The lines that match a regular expression, as N:line with context lines as N-line.
        #[arg(long, value_name = "RE", allow_hyphen_values = true)]
        grep: Option<String>,
        /// With --grep: lines of context before and after each match.
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        context: Option<String>,
        /// An RFC 6901 JSON Pointer into a JSON original (/rows/17, /items/3/title).
        #[arg(long, value_name = "POINTER", allow_hyphen_values = true)]
        pointer: Option<String>,
        /// Elements of the tabulated array, 0-based and inclusive (40-59, -10, 40-), written
        /// as the tool's table.
        #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
        rows: Option<String>,
        /// The most characters of the part (0: no limit); without it a part is held to 25,000
        /// tokens. Alone, it asks for the first part with an outline.
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        max_chars: Option<String>,
    },
    /// Print what the tee store holds: its file, entries, bytes of originals, the oldest entry,
    /// and its retention. Reads only the tee store.
    Store,
    /// Print the namespace `serve` stores the originals of a client with this API key in (for
    /// `recover --namespace`): the key is read from stdin (one line), or from the environment
    /// variable --env names. The key itself is never printed or stored.
    Namespace {
        /// Read the key from this environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY).
        #[arg(long, value_name = "VAR")]
        env: Option<String>,
    },
    /// List every codec: name, interface version, origin.
    Plugins,
    /// Start an MCP server and relay MCP over stdio between it and the client (the agent),
    /// compressing every tools/call result and adding the tool wm_get_result, which returns
    /// the originals. With PARROT_COMPRESSION_DISABLED=1: a pure relay. On SIGTERM, SIGINT or
    /// SIGHUP it ends the server and everything it started (SIGTERM, 500 ms, SIGKILL), writes
    /// the report and exits with 128 + the signal's number.
    McpProxy {
        /// At exit (also on a signal), write the session's savings report to stderr.
        #[arg(long)]
        report: bool,
        /// The most characters of one wm_get_result answer, whatever its selector asks
        /// (max_chars 0 included); a capped answer says so and ends with the arguments of the
        /// next part. 0: no cap.
        #[arg(long, value_name = "N", default_value_t = DEFAULT_RECOVERY_MAX_CHARS)]
        recovery_max_chars: usize,
        /// The namespace of the session's originals: wm_get_result finds only those stored in
        /// it. Default: one of the session's own (session-…, logged on stderr at start), so
        /// another session over the same store cannot read this one's. Give the same NAME to
        /// sessions that should share originals, or to resume one over a persistent store.
        #[arg(long, value_name = "NAME", value_parser = parse_namespace)]
        namespace: Option<Namespace>,
        /// The server's command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "SERVER_COMMAND")]
        server: Vec<OsString>,
    },
    /// An HTTP proxy in front of LLM APIs (Anthropic Messages, OpenAI Chat Completions and
    /// Responses): every tool result a request carries is compressed, wm_get_result is offered
    /// and answered in the proxy, everything else relayed as it is; GET /parrot/report returns
    /// the savings so far. With PARROT_COMPRESSION_DISABLED=1: a pure relay.
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
}

pub(crate) fn parse_level(text: &str) -> Result<Level, String> {
    text.parse::<Level>().map_err(|err| err.to_string())
}

pub(crate) fn parse_namespace(text: &str) -> Result<Namespace, String> {
    Namespace::new(text).map_err(|err| err.to_string())
}
