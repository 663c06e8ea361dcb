//! The `parrot-compress` command.
//!
//! Exit codes: 0 success; 1 a runtime failure (unreadable input, unknown tee key); 2 bad usage
//! or invalid configuration; `mcp-proxy` ended by SIGTERM, SIGINT or SIGHUP: 128 + the signal's
//! number (143, 130, 129), as a shell reports a process the signal killed. Errors go to stderr,
//! one line each.

// The doc comments of the arguments are the command's `--help` text, written for a terminal:
// brackets there are usage syntax (`redis://[:PASSWORD@]HOST`), not links.
#![allow(rustdoc::broken_intra_doc_links)]

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::num::IntErrorKind;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use clap::{Parser, Subcommand, ValueEnum};
#[cfg(feature = "redis")]
use parrot_host::RedisTeeStore;
use parrot_host::manifest::SourceKind;
use parrot_host::{
    Call, DEFAULT_RECOVERY_MAX_CHARS, Host, HostBuilder, Input, Level, MemoryTeeStore, Meta,
    Namespace, Observer, Origin, Report, Retention, RetrieveError, Selector, Skip, SqliteTeeStore,
    TeeError, TeeStore, TokenCounter, Tokenizer, counted,
};
use parrot_mcp::Proxy;
use serde_json::json;
use serde_json::value::RawValue;

#[cfg(feature = "serve")]
mod serve;

/// The sample session replayed when `replay` is given no file: realistic tool calls (query
/// results, API responses, build logs, errors).
const SAMPLE_SESSION: &str = include_str!("../../samples/session.jsonl");

/// Compresses the results of LLM tool calls before a model sees them.
#[derive(Debug, Parser)]
#[command(name = "parrot-compress", version, about)]
struct Cli {
    /// The project root: its manifest is DIR/.parrot/compressors.toml, its plugin source
    /// DIR/.parrot/plugins (loaded only with --trust-project-plugins).
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,

    /// A plugin source directory (a package, or a folder of packages); repeatable, in
    /// precedence order, ahead of PARROT_PLUGIN_PATH and the project's own.
    #[arg(long = "plugins", global = true, value_name = "DIR")]
    plugins: Vec<PathBuf>,

    /// Load the project's own plugins, DIR/.parrot/plugins (also PARROT_TRUST_PROJECT_PLUGINS=1):
    /// loading a plugin runs its native code, so a project's are left out unless you trust it.
    #[arg(long, global = true)]
    trust_project_plugins: bool,

    /// The persistent tee store: a SQLite file (default: DIR/.parrot/tee.db, created on first
    /// use), or a Redis URL, redis://[:PASSWORD@]HOST[:PORT][/DB][?prefix=P&ttl=SECS] (rediss://
    /// for TLS; the password also from PARROT_TEE_REDIS_PASSWORD), shared by every machine
    /// that reaches it.
    #[arg(long, global = true, value_name = "PATH|URL")]
    tee_store: Option<PathBuf>,

    /// Run without a tee store: normal and aggressive are capped to minimal.
    #[arg(long, global = true, conflicts_with = "tee_store")]
    no_tee: bool,

    /// The tokenizer for token counts.
    #[arg(long, global = true, value_enum, default_value_t = TokenizerArg::O200k)]
    tokenizer: TokenizerArg,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TokenizerArg {
    O200k,
    Cl100k,
}

#[derive(Debug, Subcommand)]
enum Command {
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

fn parse_level(text: &str) -> Result<Level, String> {
    text.parse::<Level>().map_err(|err| err.to_string())
}

fn parse_namespace(text: &str) -> Result<Namespace, String> {
    Namespace::new(text).map_err(|err| err.to_string())
}

/// A failure with its exit code.
struct Failure {
    code: u8,
    lines: Vec<String>,
}

impl Failure {
    fn runtime(line: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            lines: vec![line.into()],
        }
    }

    fn config(lines: Vec<String>) -> Failure {
        Failure { code: 2, lines }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
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
    match run(&cli) {
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
fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`): names read from files
/// (manifest keys, paths, codec names) print as one line and cannot drive the terminal.
fn printable(text: &str) -> std::borrow::Cow<'_, str> {
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

/// Whether the kill switch (`PARROT_COMPRESSION_DISABLED=1`) is on. Read before anything
/// else: with it on, no manifest, plugin or store is touched.
fn killed() -> bool {
    parrot_host::kill_switch_from_env()
}

fn project_dir(cli: &Cli) -> PathBuf {
    cli.project
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

fn tokenizer(cli: &Cli) -> Tokenizer {
    match cli.tokenizer {
        TokenizerArg::O200k => Tokenizer::O200k,
        TokenizerArg::Cl100k => Tokenizer::Cl100k,
    }
}

/// The host for `cli`. `store` says whether this command reads or writes the tee store: the
/// persistent store is opened (and created) only then; other commands only need to know
/// whether one is configured, which decides the effective levels they show.
fn host(cli: &Cli, store: bool, observer: Option<Arc<dyn Observer>>) -> Result<Host, Failure> {
    build(&mut builder(cli, store, observer)?)
}

/// Builds the host, a configuration error being one line per problem (exit 2).
fn build(builder: &mut HostBuilder) -> Result<Host, Failure> {
    builder
        .build()
        .map_err(|err| Failure::config(err.errors.iter().map(ToString::to_string).collect()))
}

/// The builder of [`host`], for a command that adds settings of its own.
fn builder(
    cli: &Cli,
    store: bool,
    observer: Option<Arc<dyn Observer>>,
) -> Result<HostBuilder, Failure> {
    let mut builder: HostBuilder = Host::builder();
    if let Some(observer) = observer {
        builder.observer(observer);
    }
    builder
        .project(project_dir(cli))
        .tokenizer(Arc::new(tokenizer(cli)));
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

fn run(cli: &Cli) -> Result<(), Failure> {
    match &cli.command {
        Command::Compress {
            tool,
            status,
            level,
            meta,
            file,
        } => compress(cli, tool, status, *level, *meta, file),
        Command::Check => {
            check(&host(cli, false, None)?);
            Ok(())
        }
        Command::Explain { tool } => {
            print!("{}", host(cli, false, None)?.explain(tool));
            Ok(())
        }
        Command::Replay { file, out, json } => replay(cli, file.as_deref(), out.as_deref(), *json),
        Command::Recover {
            key,
            namespace,
            lines,
            grep,
            context,
            pointer,
            rows,
            max_chars,
        } => {
            // A whole number too large for usize saturates, as the selector's sums do.
            let count = |name: &str, value: &Option<String>| -> Result<Option<usize>, Failure> {
                value
                    .as_deref()
                    .map(|text| match text.parse::<usize>() {
                        Ok(n) => Ok(n),
                        Err(err) if *err.kind() == IntErrorKind::PosOverflow => Ok(usize::MAX),
                        Err(_) => Err(Failure::config(vec![format!(
                            "selector \"{name}\": expected a non-negative integer, got \"{text}\""
                        )])),
                    })
                    .transpose()
            };
            let selector = Selector {
                lines: lines.clone(),
                grep: grep.clone(),
                context: count("context", context)?,
                pointer: pointer.clone(),
                rows: rows.clone(),
                max_chars: count("max_chars", max_chars)?,
            };
            recover(cli, namespace.as_ref(), key, &selector)
        }
        Command::Store => store(cli),
        Command::Namespace { env } => namespace(env.as_deref()),
        Command::Plugins => {
            plugins(&host(cli, false, None)?);
            Ok(())
        }
        Command::McpProxy {
            report,
            recovery_max_chars,
            namespace,
            server,
        } => mcp_proxy(cli, server, *report, *recovery_max_chars, namespace.clone()),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(cli, args),
    }
}

/// Relays between the client on stdin/stdout and `server`; see `parrot_mcp`.
fn mcp_proxy(
    cli: &Cli,
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
fn stop_on_signals(proxy: &Proxy) -> Result<Arc<OnceLock<i32>>, Failure> {
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
fn stop_on_signals(_proxy: &Proxy) -> Result<Arc<OnceLock<i32>>, Failure> {
    Ok(Arc::new(OnceLock::new()))
}

fn read_input(file: &str) -> Result<Vec<u8>, Failure> {
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

fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|err| Failure::runtime(format!("stdout: cannot write: {err}")))
}

fn compress(
    cli: &Cli,
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
        .filter(|_| parrot_host::Status::of(status) == parrot_host::Status::Failure)
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

/// The metadata of a call with the kill switch on: what the host gives it (the payload went out
/// as it came, uncounted).
fn killed_meta(size: usize) -> Meta {
    Meta::passed_through(size, Skip::KillSwitch)
}

/// Where the persistent tee store of `cli` is: a file, or a URL (a value with `://` in it).
enum StoreAt {
    File(PathBuf),
    Url(String),
}

fn store_at(cli: &Cli) -> StoreAt {
    match &cli.tee_store {
        Some(given) => match given.to_str() {
            Some(url) if url.contains("://") => StoreAt::Url(url.to_owned()),
            _ => StoreAt::File(given.clone()),
        },
        None => StoreAt::File(project_dir(cli).join(".parrot").join("tee.db")),
    }
}

/// The persistent tee store of `cli`, opened (a file is created on first use).
enum Persistent {
    Sqlite(SqliteTeeStore),
    #[cfg(feature = "redis")]
    Redis(RedisTeeStore),
}

impl Persistent {
    fn shared(self) -> Arc<dyn TeeStore> {
        match self {
            Persistent::Sqlite(store) => Arc::new(store),
            #[cfg(feature = "redis")]
            Persistent::Redis(store) => Arc::new(store),
        }
    }
}

/// Opens the store at `url`. A URL that cannot be used is bad usage (exit 2); a Redis that
/// refuses the credentials or a host that does not resolve is a runtime failure (exit 1).
#[cfg(feature = "redis")]
fn open_url(url: &str) -> Result<Persistent, Failure> {
    match RedisTeeStore::open(url) {
        Ok(store) => Ok(Persistent::Redis(store)),
        Err(err @ TeeError::Url { .. }) => Err(Failure::config(vec![err.to_string()])),
        Err(err) => Err(Failure::runtime(err.to_string())),
    }
}

#[cfg(not(feature = "redis"))]
fn open_url(url: &str) -> Result<Persistent, Failure> {
    Err(Failure::config(vec![
        TeeError::Url {
            url: url.to_owned(),
            reason: "this build has no Redis tee store (parrot-compress feature redis)".to_owned(),
        }
        .to_string(),
    ]))
}

/// The persistent tee store of `cli`, opened (and a file created on first use).
fn open_store(cli: &Cli) -> Result<Persistent, Failure> {
    match store_at(cli) {
        StoreAt::File(path) => SqliteTeeStore::open(path, Retention::default())
            .map(Persistent::Sqlite)
            .map_err(|err| Failure::runtime(err.to_string())),
        StoreAt::Url(url) => open_url(&url),
    }
}

/// The persistent store for the commands that compress. When a file cannot be opened at all
/// because of where it is (its directory cannot be created, no space, no permission): one
/// warning and a store that refuses every put, so lossless work goes on and a lossy result goes
/// out uncompressed (`tee_failed`) rather than the command stopping. A file that is not a tee
/// store is still refused, naming it. (A store that exists but cannot be written opens
/// read-only.) A Redis store opens even when Redis does not answer: its puts fail until it does.
fn persistent_or_unavailable(cli: &Cli) -> Result<Arc<dyn TeeStore>, Failure> {
    let path = match store_at(cli) {
        StoreAt::File(path) => path,
        StoreAt::Url(url) => return open_url(&url).map(Persistent::shared),
    };
    open_file_or_unavailable(path).map_err(Failure::runtime)
}

/// [`persistent_or_unavailable`]'s SQLite file: the store, or [`Unavailable`] (with its
/// warning), or the message of a file that is refused.
fn open_file_or_unavailable(path: PathBuf) -> Result<Arc<dyn TeeStore>, String> {
    match SqliteTeeStore::open(path, Retention::default()) {
        Ok(store) => Ok(Arc::new(store)),
        Err(err) if err.is_unavailable() => {
            let reason = err.to_string();
            tracing::warn!("{reason}; lossy results go out uncompressed");
            Ok(Arc::new(Unavailable { reason }))
        }
        Err(err) => Err(err.to_string()),
    }
}

/// `compress`'s SQLite store, opened by the first put or get, that is by a call that stores
/// its original (a lossy result, or a status other than `success`); a call that needs no store
/// never opens (nor creates) the file. Opening costs more than the rest of the command's
/// start-up (about 1.4 ms: SQLite's log and its index are created, and removed at close), and
/// most results are not stored. Once opened it is [`open_file_or_unavailable`]'s store: a file
/// that cannot be opened where it is warns and refuses every put (the result goes out
/// uncompressed, `tee_failed`); a file that is refused (not a tee store, a later schema) is
/// remembered, and [`compress`] fails with its message instead of writing the result (after
/// the pipeline's warning that the put failed; a call with a status other than `success`,
/// always stored, opens the store before it runs). A Redis store is not deferred: opening one
/// does not connect.
struct Deferred {
    path: PathBuf,
    opened: OnceLock<Arc<dyn TeeStore>>,
    refused: Mutex<Option<String>>,
}

impl Deferred {
    fn new(path: PathBuf) -> Deferred {
        Deferred {
            path,
            opened: OnceLock::new(),
            refused: Mutex::new(None),
        }
    }

    fn store(&self) -> &Arc<dyn TeeStore> {
        self.opened
            .get_or_init(|| match open_file_or_unavailable(self.path.clone()) {
                Ok(store) => store,
                Err(reason) => {
                    *self.refused.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.clone());
                    Arc::new(Unavailable { reason })
                }
            })
    }

    /// Why the file was refused, when a call opened it and it was.
    fn refused(&self) -> Option<String> {
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl TeeStore for Deferred {
    fn put(&self, key: &str, original: &[u8]) -> Result<(), TeeError> {
        self.store().put(key, original)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        self.store().get(key)
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// A tee store that could not be opened: every put fails with why, nothing is stored.
struct Unavailable {
    reason: String,
}

impl TeeStore for Unavailable {
    fn put(&self, _key: &str, _original: &[u8]) -> Result<(), TeeError> {
        Err(TeeError::Backend {
            store: self.name(),
            source: self.reason.clone().into(),
        })
    }

    fn get(&self, _key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        Ok(None)
    }

    fn name(&self) -> String {
        "unavailable".to_owned()
    }
}

/// The store for the commands that only read it (`recover`, `store`): no host is built, so a
/// broken manifest or a missing plugin cannot stand between a key and its original, and the
/// kill switch (which stops compression) does not stop recovery.
fn store_only(cli: &Cli) -> Result<Persistent, Failure> {
    if cli.no_tee {
        return Err(Failure::runtime(TeeError::NotConfigured.to_string()));
    }
    open_store(cli)
}

/// Without a selector: the exact original bytes (a person or a script asked for the file).
/// With one: the retrieval, as `wm_get_result` returns it but with the continuation written as
/// this command's arguments. The store is the one thing it needs: a selector's rows are written
/// as the key's tool entry writes a table when the project's configuration builds, and by the
/// core configuration alone (built-in codecs, no manifest, no plugin) when it does not.
fn recover(
    cli: &Cli,
    namespace: Option<&Namespace>,
    key: &str,
    selector: &Selector,
) -> Result<(), Failure> {
    let store = store_only(cli)?.shared();
    let not_found = || {
        Failure::runtime(match namespace {
            Some(namespace) => {
                format!("no original is stored under \"{key}\" in namespace \"{namespace}\"")
            }
            None => format!("no original is stored under \"{key}\""),
        })
    };
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

/// Prints the namespace `serve` gives a client with the API key on stdin (its first line) or
/// in the variable `env`: the same digest as the proxy's, of the key as a header carries it
/// (surrounding whitespace not part of it).
fn namespace(env: Option<&str>) -> Result<(), Failure> {
    let key = match env {
        Some(name) => std::env::var_os(name)
            .ok_or_else(|| Failure::runtime(format!("namespace: ${name} is not set")))?
            .into_encoded_bytes(),
        None => {
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map_err(|err| Failure::runtime(format!("namespace: cannot read stdin: {err}")))?;
            line.into_bytes()
        }
    };
    let key = key.trim_ascii();
    if key.is_empty() {
        return Err(Failure::runtime(
            "namespace: no API key given (on stdin, or --env VAR): a request without one is \
             unscoped, recover its originals without --namespace",
        ));
    }
    write_stdout(format!("{}\n", Namespace::of_secret(key)).as_bytes())
}

/// One parsed line of a session file.
struct SessionCall {
    tool: String,
    status: String,
    result: String,
}

/// The members of one session line in file order, each value as its raw text: a member named
/// twice is seen (a map would keep one of them silently), and the result is not parsed at all.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<Box<RawValue>>()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

fn parse_session(name: &str, text: &str) -> Result<Vec<SessionCall>, Failure> {
    // A byte order mark is not part of the first line's JSON.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{name}:{}", i + 1);
        match parse_call(line) {
            Ok(call) => calls.push(call),
            Err(message) => errors.push(format!("{at}: {message}")),
        }
    }
    if errors.is_empty() {
        Ok(calls)
    } else {
        Err(Failure {
            code: 1,
            lines: errors,
        })
    }
}

/// One session line, or what is wrong with it.
fn parse_call(line: &str) -> Result<SessionCall, String> {
    let Members(members) =
        serde_json::from_str(line).map_err(|err| format!("not a JSON object: {err}"))?;
    let mut seen: Vec<&str> = Vec::new();
    for (key, _) in &members {
        if !["tool", "status", "result"].contains(&key.as_str()) {
            return Err(format!(
                "unknown key \"{key}\" (expected: tool, status, result)"
            ));
        }
        if seen.contains(&key.as_str()) {
            return Err(format!("key \"{key}\" appears twice"));
        }
        seen.push(key);
    }
    let member = |key: &str| {
        members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.get())
    };
    let string = |raw: &str| serde_json::from_str::<String>(raw).ok();
    let tool = member("tool")
        .and_then(string)
        .ok_or("key \"tool\": missing or not a string")?;
    let status = match member("status") {
        None => "success".to_owned(),
        Some(raw) => string(raw).ok_or("key \"status\": not a string")?,
    };
    // A string result is the text of the call; any other value goes to the pipeline as the
    // bytes the file holds, as `compress` would read them from a file.
    let result = match member("result") {
        Some(raw) if raw.starts_with('"') => {
            string(raw).ok_or("key \"result\": not a valid JSON string")?
        }
        Some(raw) => raw.to_owned(),
        None => return Err("missing key \"result\"".to_owned()),
    };
    Ok(SessionCall {
        tool,
        status,
        result,
    })
}

fn replay(
    cli: &Cli,
    file: Option<&Path>,
    out: Option<&Path>,
    as_json: bool,
) -> Result<(), Failure> {
    let (name, text) = match file {
        Some(path) => (
            path.display().to_string(),
            std::fs::read_to_string(path).map_err(|err| {
                Failure::runtime(format!("{}: cannot read: {err}", path.display()))
            })?,
        ),
        None => ("<sample session>".to_owned(), SAMPLE_SESSION.to_owned()),
    };
    let calls = parse_session(&name, &text)?;
    // With the kill switch on no host is built (see `compress`): every call goes out as it came.
    let host = if killed() {
        None
    } else {
        Some(host(cli, true, None)?)
    };
    let mut writer = match out {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|err| {
                Failure::runtime(format!("{}: cannot create: {err}", path.display()))
            })?,
        )),
        None => None,
    };
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(calls.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} calls {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    for call in &calls {
        let (payload, meta) = match &host {
            Some(host) => {
                let processed = host
                    .process(Call::new(&call.tool, Input::Text(&call.result)).status(&call.status));
                (processed.payload.into_owned(), processed.meta)
            }
            None => (
                call.result.as_bytes().to_vec(),
                killed_meta(call.result.len()),
            ),
        };
        if let Some(writer) = writer.as_mut() {
            let line = json!({
                "tool": call.tool,
                "payload": String::from_utf8_lossy(&payload),
                "meta": meta.to_json(),
            });
            writeln!(writer, "{line}")
                .map_err(|err| Failure::runtime(format!("--out: cannot write: {err}")))?;
        }
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(mut writer) = writer {
        writer
            .flush()
            .map_err(|err| Failure::runtime(format!("--out: cannot write: {err}")))?;
    }
    let report = match &host {
        Some(host) => {
            host.flush();
            host.report().snapshot()
        }
        None => Report::new(tokenizer(cli).name()).snapshot(),
    };
    if as_json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.render_table());
    }
    Ok(())
}

fn store(cli: &Cli) -> Result<(), Failure> {
    let limit = |limit: Option<String>| limit.unwrap_or_else(|| "none".to_owned());
    let (name, stats, retention) = match store_only(cli)? {
        Persistent::Sqlite(store) => {
            let retention = store.retention();
            (
                store.path().display().to_string(),
                store.stats(),
                format!(
                    "max_entries {}, max_bytes {}, max_age {}",
                    limit(retention.max_entries.map(|n| n.to_string())),
                    limit(retention.max_bytes.map(bytes)),
                    limit(retention.max_age.map(duration)),
                ),
            )
        }
        #[cfg(feature = "redis")]
        Persistent::Redis(store) => {
            let settings = store.settings();
            (
                store.name(),
                store.stats(),
                format!(
                    "ttl {}, max_bytes Redis maxmemory, prefix \"{}\"",
                    limit(settings.ttl.map(duration)),
                    printable(&settings.prefix),
                ),
            )
        }
    };
    let stats = stats.map_err(|err| Failure::runtime(err.to_string()))?;
    let oldest = match stats.oldest {
        Some(at) => {
            let age = SystemTime::now().duration_since(at).unwrap_or_default();
            format!("{} ago", duration(age))
        }
        None => "none".to_owned(),
    };
    println!("store:     {name}");
    println!("entries:   {}", stats.entries);
    println!("bytes:     {}", bytes(stats.bytes));
    println!("oldest:    {oldest}");
    println!("retention: {retention}");
    Ok(())
}

/// A byte count, and in KiB, MiB or GiB past 1024: `1073741824 (1.0 GiB)`.
fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    match UNITS.iter().find(|(_, size)| n >= *size) {
        Some((unit, size)) => format!("{n} ({:.1} {unit})", n as f64 / *size as f64),
        None => n.to_string(),
    }
}

/// A duration in its largest whole unit: `7d`, `3h`, `12m`, `5s`.
fn duration(age: Duration) -> String {
    let secs = age.as_secs();
    match secs {
        86_400.. => format!("{}d", secs / 86_400),
        3_600.. => format!("{}h", secs / 3_600),
        60.. => format!("{}m", secs / 60),
        _ => format!("{secs}s"),
    }
}

fn check(host: &Host) {
    println!("sources, highest precedence first:");
    for (i, source) in host.sources().iter().enumerate() {
        let kind = match source.kind {
            SourceKind::Project => "project".to_owned(),
            SourceKind::Package => match &source.library {
                Some(library) => format!("package, library {}", library.display()),
                None => "package".to_owned(),
            },
            SourceKind::Core => "core".to_owned(),
        };
        println!(
            "  {}. {} ({})",
            i + 1,
            printable(&source.name),
            printable(&kind)
        );
    }
    println!("codecs:");
    for codec in host.registry().codecs() {
        println!(
            "  {:<20} {}",
            printable(codec.meta.name()),
            printable(&codec.origin.to_string())
        );
    }
    println!("entries:");
    let key_width = host
        .entries()
        .iter()
        .map(|e| printable(&e.key).len() + 2)
        .max()
        .unwrap_or(0);
    let codec_width = host
        .entries()
        .iter()
        .map(|e| printable(&e.codec_name).len() + 1 + e.level.as_str().len())
        .max()
        .unwrap_or(0);
    for entry in host.entries() {
        println!(
            "  {:<key_width$}  {:<codec_width$}  from {}",
            format!("\"{}\"", printable(&entry.key)),
            format!("{}/{}", printable(&entry.codec_name), entry.level),
            printable(&entry.source)
        );
    }
    println!(
        "ok: {}, {}, {} ({} shadowed)",
        counted(host.sources().len(), "source", "sources"),
        counted(host.registry().codecs().count(), "codec", "codecs"),
        counted(host.entries().len(), "entry", "entries"),
        host.shadowed().len()
    );
}

fn plugins(host: &Host) {
    let width = host
        .registry()
        .codecs()
        .map(|c| printable(c.meta.name()).len())
        .max()
        .unwrap_or(0)
        .max("codec".len());
    println!("{:<width$}  {:<9}  origin", "codec", "interface");
    for codec in host.registry().codecs() {
        let origin = match &codec.origin {
            Origin::Builtin => "built-in".to_owned(),
            Origin::Plugin { library, manifest } => {
                format!("{} (package {})", library.display(), manifest.display())
            }
            other => other.to_string(),
        };
        println!(
            "{:<width$}  {:<9}  {}",
            printable(codec.meta.name()),
            printable(&codec.interface_version),
            printable(&origin)
        );
    }
}
