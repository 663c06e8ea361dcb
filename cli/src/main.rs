//! The `parrot-compress` command.
//!
//! Exit codes: 0 success; 1 a runtime failure (unreadable input, unknown tee key); 2 bad usage
//! or invalid configuration. Errors go to stderr, one line each.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::{Parser, Subcommand, ValueEnum};
use parrot_host::manifest::SourceKind;
use parrot_host::mcp::Proxy;
use parrot_host::{
    Call, Host, HostBuilder, Input, Level, MemoryTeeStore, Observer, Origin, Retention,
    SqliteTeeStore, TeeError, TeeStore, TokenEvent, Tokenizer,
};
use serde_json::{Value, json};

/// The sample session replayed when `replay` is given no file: realistic tool calls (query
/// results, API responses, build logs, errors).
const SAMPLE_SESSION: &str = include_str!("../../samples/session.jsonl");

/// Compresses the results of LLM tool calls before a model sees them.
#[derive(Debug, Parser)]
#[command(name = "parrot-compress", version, about)]
struct Cli {
    /// The project root: its manifest is DIR/.parrot/compressors.toml, its plugin source
    /// DIR/.parrot/plugins.
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,

    /// A plugin source directory (a package, or a folder of packages); repeatable, in
    /// precedence order, ahead of PARROT_PLUGIN_PATH and the project's own.
    #[arg(long = "plugins", global = true, value_name = "DIR")]
    plugins: Vec<PathBuf>,

    /// The persistent tee store (default: DIR/.parrot/tee.db, created on first use).
    #[arg(long, global = true, value_name = "PATH")]
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
    /// Print the exact original payload stored under KEY; exit 1 if there is none. Reads only
    /// the tee store: no manifest is read, no plugin loaded.
    Recover {
        /// The tee key (from a `_tee` pointer or `compression_tee_key`).
        key: String,
    },
    /// Print what the tee store holds: its file, entries, bytes of originals, the oldest entry,
    /// and its retention. Reads only the tee store.
    Store,
    /// List every codec: name, interface version, origin.
    Plugins,
    /// Start an MCP server and relay MCP over stdio between it and the client (the agent),
    /// compressing every tools/call result and adding the tool wm_get_result, which returns
    /// the originals. With PARROT_COMPRESSION_DISABLED=1: a pure relay.
    McpProxy {
        /// At exit, write the session's savings report to stderr.
        #[arg(long)]
        report: bool,
        /// The server's command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "SERVER_COMMAND")]
        server: Vec<OsString>,
    },
}

fn parse_level(text: &str) -> Result<Level, String> {
    text.parse::<Level>().map_err(|err| err.to_string())
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
                eprintln!("error: {line}");
            }
            ExitCode::from(failure.code)
        }
    }
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
    builder(cli, store, observer)?
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
    // A person who runs the command asked for the result: compress inline at any size.
    builder.inline_at_any_size(true);
    // With the kill switch on nothing runs, so the store is not even opened (or created).
    let killed = std::env::var_os(parrot_host::KILL_SWITCH_ENV).is_some_and(|v| v == "1");
    if !cli.no_tee {
        if store && !killed {
            builder.tee_store(Arc::new(open_store(cli)?));
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
        Command::Recover { key } => recover(cli, key),
        Command::Store => store(cli),
        Command::Plugins => {
            plugins(&host(cli, false, None)?);
            Ok(())
        }
        Command::McpProxy { report, server } => mcp_proxy(cli, server, *report),
    }
}

/// Relays between the client on stdin/stdout and `server`; see `parrot_host::mcp`.
fn mcp_proxy(cli: &Cli, server: &[OsString], report: bool) -> Result<(), Failure> {
    let Some((program, args)) = server.split_first() else {
        return Err(Failure::config(vec![
            "mcp-proxy: no server command given after --".to_owned(),
        ]));
    };
    let mut command = std::process::Command::new(program);
    command.args(args);
    let killed = std::env::var_os(parrot_host::KILL_SWITCH_ENV).is_some_and(|v| v == "1");
    // With the kill switch on, the proxy is a pure relay: no host is built, so not even a
    // broken manifest can stand between the client and its server.
    let (proxy, host) = if killed {
        (Proxy::relay(), None)
    } else {
        let mut builder = builder(cli, true, None)?;
        // The agent may need a changed block's exact text back (to quote a file it edits),
        // not only an equal value.
        builder.tee_lossless(true);
        let host = Arc::new(builder.build().map_err(|err| {
            Failure::config(err.errors.iter().map(ToString::to_string).collect())
        })?);
        (Proxy::new(Arc::clone(&host)), Some(host))
    };
    let ended = proxy.run(
        command,
        std::io::stdin(),
        std::io::stdout(),
        std::io::stderr(),
    );
    if let (true, Some(host)) = (report, host) {
        host.flush();
        eprint!("{}", host.report().snapshot().render_table());
    }
    ended.map_err(|err| Failure::runtime(err.to_string()))
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

/// Keeps the token counts of the calls it sees.
#[derive(Default)]
struct TokenCapture(std::sync::Mutex<Vec<TokenEvent>>);

impl Observer for TokenCapture {
    fn on_tokens(&self, event: &TokenEvent) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event.clone());
    }
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
    let capture = Arc::new(TokenCapture::default());
    let host = host(cli, true, Some(capture.clone()))?;
    let mut call = Call::new(tool, Input::Bytes(&input)).status(status);
    call.level = level;
    let processed = host.process(call);
    write_stdout(&processed.payload)?;
    if with_meta {
        host.flush();
        let mut meta = processed.meta.to_json();
        let captured = capture.0.lock().unwrap_or_else(|p| p.into_inner());
        if let (Value::Object(map), Some(tokens)) = (
            &mut meta,
            captured.iter().find(|e| e.call_id == processed.call_id),
        ) {
            map.insert("tokens_before".into(), json!(tokens.tokens_before));
            map.insert("tokens_after".into(), json!(tokens.tokens_after));
        }
        eprintln!("{meta}");
    }
    Ok(())
}

/// The persistent tee store of `cli`, opened (and created on first use).
fn open_store(cli: &Cli) -> Result<SqliteTeeStore, Failure> {
    let path = cli
        .tee_store
        .clone()
        .unwrap_or_else(|| project_dir(cli).join(".parrot").join("tee.db"));
    SqliteTeeStore::open(&path, Retention::default())
        .map_err(|err| Failure::runtime(err.to_string()))
}

/// The store for the commands that only read it (`recover`, `store`): no host is built, so a
/// broken manifest or a missing plugin cannot stand between a key and its original, and the
/// kill switch (which stops compression) does not stop recovery.
fn store_only(cli: &Cli) -> Result<SqliteTeeStore, Failure> {
    if cli.no_tee {
        return Err(Failure::runtime(TeeError::NotConfigured.to_string()));
    }
    open_store(cli)
}

fn recover(cli: &Cli, key: &str) -> Result<(), Failure> {
    let store = store_only(cli)?;
    match store.get(key) {
        Ok(Some(original)) => write_stdout(&original),
        Ok(None) => Err(Failure::runtime(format!(
            "no original is stored under \"{key}\""
        ))),
        Err(err) => Err(Failure::runtime(err.to_string())),
    }
}

/// One parsed line of a session file.
struct SessionCall {
    tool: String,
    status: String,
    result: String,
}

fn parse_session(name: &str, text: &str) -> Result<Vec<SessionCall>, Failure> {
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{name}:{}", i + 1);
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(err) => {
                errors.push(format!("{at}: not a JSON object: {err}"));
                continue;
            }
        };
        let Some(object) = value.as_object() else {
            errors.push(format!("{at}: not a JSON object"));
            continue;
        };
        if let Some(unknown) = object
            .keys()
            .find(|k| !["tool", "status", "result"].contains(&k.as_str()))
        {
            errors.push(format!(
                "{at}: unknown key \"{unknown}\" (expected: tool, status, result)"
            ));
            continue;
        }
        let Some(tool) = object.get("tool").and_then(Value::as_str) else {
            errors.push(format!("{at}: key \"tool\": missing or not a string"));
            continue;
        };
        let status = match object.get("status") {
            None => "success",
            Some(Value::String(status)) => status,
            Some(_) => {
                errors.push(format!("{at}: key \"status\": not a string"));
                continue;
            }
        };
        let result = match object.get("result") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => {
                errors.push(format!("{at}: missing key \"result\""));
                continue;
            }
        };
        calls.push(SessionCall {
            tool: tool.to_owned(),
            status: status.to_owned(),
            result,
        });
    }
    if errors.is_empty() {
        Ok(calls)
    } else {
        Err(Failure::runtime(errors.join("\nerror: ")))
    }
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
    let host = host(cli, true, None)?;
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
        let processed =
            host.process(Call::new(&call.tool, Input::Text(&call.result)).status(&call.status));
        if let Some(writer) = writer.as_mut() {
            let line = json!({
                "tool": call.tool,
                "payload": String::from_utf8_lossy(&processed.payload),
                "meta": processed.meta.to_json(),
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
    host.flush();
    let report = host.report().snapshot();
    if as_json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.render_table());
    }
    Ok(())
}

fn store(cli: &Cli) -> Result<(), Failure> {
    let store = store_only(cli)?;
    let stats = store
        .stats()
        .map_err(|err| Failure::runtime(err.to_string()))?;
    let oldest = match stats.oldest {
        Some(at) => {
            let age = SystemTime::now().duration_since(at).unwrap_or_default();
            format!("{} ago", duration(age))
        }
        None => "none".to_owned(),
    };
    let retention = store.retention();
    let limit = |limit: Option<String>| limit.unwrap_or_else(|| "none".to_owned());
    println!("store:     {}", store.path().display());
    println!("entries:   {}", stats.entries);
    println!("bytes:     {}", bytes(stats.bytes));
    println!("oldest:    {oldest}");
    println!(
        "retention: max_entries {}, max_bytes {}, max_age {}",
        limit(retention.max_entries.map(|n| n.to_string())),
        limit(retention.max_bytes.map(bytes)),
        limit(retention.max_age.map(duration)),
    );
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
        println!("  {}. {} ({kind})", i + 1, source.name);
    }
    println!("codecs:");
    for codec in host.registry().codecs() {
        println!("  {:<20} {}", codec.meta.name(), codec.origin);
    }
    println!("entries:");
    let key_width = host
        .entries()
        .iter()
        .map(|e| e.key.len() + 2)
        .max()
        .unwrap_or(0);
    let codec_width = host
        .entries()
        .iter()
        .map(|e| e.codec_name.len() + 1 + e.level.as_str().len())
        .max()
        .unwrap_or(0);
    for entry in host.entries() {
        println!(
            "  {:<key_width$}  {:<codec_width$}  from {}",
            format!("\"{}\"", entry.key),
            format!("{}/{}", entry.codec_name, entry.level),
            entry.source
        );
    }
    println!(
        "ok: {} sources, {} codecs, {} entries ({} shadowed)",
        host.sources().len(),
        host.registry().codecs().count(),
        host.entries().len(),
        host.shadowed().len()
    );
}

fn plugins(host: &Host) {
    let width = host
        .registry()
        .codecs()
        .map(|c| c.meta.name().len())
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
            "{:<width$}  {:<9}  {origin}",
            codec.meta.name(),
            codec.interface_version
        );
    }
}
