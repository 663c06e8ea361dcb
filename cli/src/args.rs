//! The command line: its subcommands and their options, as clap reads them.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use parrot_host::{DEFAULT_RECOVERY_MAX_CHARS, Level, Namespace};

#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "serve")]
pub(crate) use serve::ServeArgs;

/// Compresses the results of LLM tool calls before a model sees them.
#[derive(Debug, Parser)]
#[command(
    name = "parrot-compress",
    version,
    about,
    after_help = "Each command lists the options it takes: parrot-compress COMMAND --help. \
                  --project, --plugins, --trust-project-plugins, --tee-store, --no-tee and \
                  --tokenizer may also be given before the command's name (parrot-compress \
                  --project DIR check), where a command that does not take one ignores it."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    leading: Leading,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The configuration options given before the command's name, where every command accepted
/// them when they were global: they stay accepted there (scripts and MCP client configurations
/// spell them so), hidden from the help, which lists each command's own after its name.
#[derive(Debug, Clone, Default, Args)]
struct Leading {
    #[arg(long, hide = true, value_name = "DIR")]
    project: Option<PathBuf>,
    #[arg(long = "plugins", hide = true, value_name = "DIR")]
    plugins: Vec<PathBuf>,
    #[arg(long, hide = true)]
    trust_project_plugins: bool,
    #[arg(long, hide = true, value_name = "PATH|URL")]
    tee_store: Option<PathBuf>,
    #[arg(long, hide = true, conflicts_with = "tee_store")]
    no_tee: bool,
    #[arg(long, hide = true, value_enum)]
    tokenizer: Option<TokenizerArg>,
}

/// The configuration a command runs with: its options, and those given before its name.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) project: Option<PathBuf>,
    pub(crate) plugins: Vec<PathBuf>,
    pub(crate) trust_project_plugins: bool,
    pub(crate) tee_store: Option<PathBuf>,
    pub(crate) no_tee: bool,
    pub(crate) tokenizer: TokenizerArg,
}

impl Options {
    /// The host's settings these options give.
    pub(crate) fn settings(&self) -> parrot_setup::Settings {
        parrot_setup::Settings {
            project: self.project.clone(),
            plugins: self.plugins.clone(),
            trust_project_plugins: self.trust_project_plugins,
            tee_store: self.tee_store.clone(),
            no_tee: self.no_tee,
            tokenizer: match self.tokenizer {
                TokenizerArg::O200k => parrot_host::Tokenizer::O200k,
                TokenizerArg::Cl100k => parrot_host::Tokenizer::Cl100k,
            },
        }
    }
}

impl Cli {
    /// The command's configuration: an option after the command's name over the same before
    /// it, plugin sources in the order given (those before the name first).
    ///
    /// # Errors
    ///
    /// A usage error for `--no-tee` with `--tee-store`, one on each side of the name.
    pub(crate) fn options(&self) -> Result<Options, clap::Error> {
        let mut given = self.leading.clone();
        for group in self.command.groups() {
            group.give(&mut given);
        }
        if given.no_tee && given.tee_store.is_some() {
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "the argument '--no-tee' cannot be used with '--tee-store <PATH|URL>'",
            ));
        }
        Ok(Options {
            project: given.project,
            plugins: given.plugins,
            trust_project_plugins: given.trust_project_plugins,
            tee_store: given.tee_store,
            no_tee: given.no_tee,
            tokenizer: given.tokenizer.unwrap_or(TokenizerArg::O200k),
        })
    }
}

/// A group of configuration options a command takes: what it adds to those given before the
/// command's name.
trait Group {
    fn give(&self, given: &mut Leading);
}

/// `--project`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Configuration")]
pub(crate) struct ProjectOption {
    /// The project root (default: the current folder): its manifest is
    /// DIR/.parrot/compressors.toml, its plugin source DIR/.parrot/plugins (loaded only with
    /// --trust-project-plugins), its tee store DIR/.parrot/tee.db.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

impl Group for ProjectOption {
    fn give(&self, given: &mut Leading) {
        if self.project.is_some() {
            given.project.clone_from(&self.project);
        }
    }
}

/// `--plugins` and `--trust-project-plugins`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Configuration")]
pub(crate) struct PluginOptions {
    /// A plugin source directory (a package, or a folder of packages); repeatable, in
    /// precedence order, ahead of PARROT_PLUGIN_PATH and the project's own.
    #[arg(long = "plugins", value_name = "DIR")]
    plugins: Vec<PathBuf>,

    /// Load the project's own plugins, DIR/.parrot/plugins (also PARROT_TRUST_PROJECT_PLUGINS=1):
    /// loading a plugin runs its native code, so a project's are left out unless you trust it.
    #[arg(long)]
    trust_project_plugins: bool,
}

impl Group for PluginOptions {
    fn give(&self, given: &mut Leading) {
        given.plugins.extend(self.plugins.iter().cloned());
        given.trust_project_plugins |= self.trust_project_plugins;
    }
}

/// `--tee-store`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Configuration")]
pub(crate) struct TeeStoreOption {
    /// The persistent tee store: a SQLite file (default: DIR/.parrot/tee.db, created on first
    /// use), or a Redis URL, redis://[:PASSWORD@]HOST[:PORT][/DB][?prefix=P&ttl=SECS] (rediss://
    /// for TLS; the password also from PARROT_TEE_REDIS_PASSWORD), shared by every machine
    /// that reaches it.
    #[arg(long, value_name = "PATH|URL")]
    tee_store: Option<PathBuf>,
}

impl Group for TeeStoreOption {
    fn give(&self, given: &mut Leading) {
        if self.tee_store.is_some() {
            given.tee_store.clone_from(&self.tee_store);
        }
    }
}

/// `--no-tee`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Configuration")]
pub(crate) struct NoTeeOption {
    /// Run without a tee store: normal and aggressive are capped to minimal.
    #[arg(long)]
    no_tee: bool,
}

impl Group for NoTeeOption {
    fn give(&self, given: &mut Leading) {
        given.no_tee |= self.no_tee;
    }
}

/// `--tokenizer`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Configuration")]
pub(crate) struct TokenizerOption {
    /// The tokenizer for token counts (default: o200k).
    #[arg(long, value_enum)]
    tokenizer: Option<TokenizerArg>,
}

impl Group for TokenizerOption {
    fn give(&self, given: &mut Leading) {
        if self.tokenizer.is_some() {
            given.tokenizer = self.tokenizer;
        }
    }
}

/// Every configuration option: those of the commands that compress.
#[derive(Debug, Args)]
pub(crate) struct Configuration {
    #[command(flatten)]
    project: ProjectOption,
    #[command(flatten)]
    plugins: PluginOptions,
    #[command(flatten)]
    tee_store: TeeStoreOption,
    #[command(flatten)]
    no_tee: NoTeeOption,
    #[command(flatten)]
    tokenizer: TokenizerOption,
}

impl Group for Configuration {
    fn give(&self, given: &mut Leading) {
        self.project.give(given);
        self.plugins.give(given);
        self.tee_store.give(given);
        self.no_tee.give(given);
        self.tokenizer.give(given);
    }
}

/// The tokenizers `--tokenizer` names.
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
        #[command(flatten)]
        configuration: Configuration,
    },
    /// Discover and validate every manifest, load every plugin, print a summary; exit 2 with
    /// each error on stderr when anything is invalid.
    Check {
        #[command(flatten)]
        project: ProjectOption,
        #[command(flatten)]
        plugins: PluginOptions,
    },
    /// Which entry applies to TOOL: source, key, match kind, codec, level, effective level,
    /// and the entries that lost to it.
    Explain {
        /// The tool name.
        tool: String,
        #[command(flatten)]
        project: ProjectOption,
        #[command(flatten)]
        plugins: PluginOptions,
        #[command(flatten)]
        no_tee: NoTeeOption,
    },
    /// Print the original a codec's output was made from, through the codec's inverse: the
    /// same JSON value for a JSON codec, the same bytes for a text codec. The payload (FILE or
    /// stdin) is the codec's output as the codec wrote it or as the model saw it: a tee
    /// pointer of reason lossless is taken off. Exit 2 naming what is wrong: an unknown codec,
    /// auto (name the codec that produced the payload), a codec without an inverse, a lossy
    /// output (its original is in the tee store: parrot-compress recover KEY), a payload the
    /// codec did not write. Reads no tee store.
    Expand {
        /// The codec that produced the payload: the compression_codec of its metadata
        /// (compress --meta).
        #[arg(long, value_name = "NAME")]
        codec: String,
        /// The payload file, or - for stdin.
        #[arg(default_value = "-")]
        file: String,
        #[command(flatten)]
        project: ProjectOption,
        #[command(flatten)]
        plugins: PluginOptions,
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
        #[command(flatten)]
        configuration: Configuration,
    },
    /// Print the exact original payload stored under KEY, or the part of it the selectors
    /// choose (after a header line naming the key and the selectors; a part cut to size ends
    /// with "[more: …]", the arguments of the next part). Exit 1 if nothing is stored under
    /// KEY, 2 for a bad selector. Without a selector it reads only the tee store; with one,
    /// the rows of a table are written as the project's configuration writes the key's tool
    /// (its plugins, its tokenizer), or as the built-in codecs do when it does not build.
    // What only a selector reads says so: recovering a whole original reads the store alone.
    #[command(
        mut_arg("plugins", |arg| arg.help(
            "With a selector: a plugin source directory for the key's tool entry (a package, or a \
             folder of packages); repeatable, in precedence order, ahead of PARROT_PLUGIN_PATH \
             and the project's own"
        )),
        mut_arg("trust_project_plugins", |arg| arg.help(
            "With a selector: load the project's own plugins, DIR/.parrot/plugins (also \
             PARROT_TRUST_PROJECT_PLUGINS=1)"
        )),
        mut_arg("tokenizer", |arg| arg.help(
            "With a selector: the tokenizer a part's size is counted with (default: o200k)"
        )),
    )]
    Recover {
        /// The tee key (from a `_tee` pointer or `compression_tee_key`).
        key: String,
        /// The namespace the original was stored in: an mcp-proxy session's (logged when it
        /// starts, or the --namespace it was given), or a serve client's (`parrot-compress
        /// namespace` computes it from the API key). Without it: an original stored unscoped
        /// (a KEY written NAME/KEY is refused, naming --namespace NAME).
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
        #[command(flatten)]
        project: ProjectOption,
        #[command(flatten)]
        tee_store: TeeStoreOption,
        #[command(flatten)]
        plugins: PluginOptions,
        #[command(flatten)]
        tokenizer: TokenizerOption,
    },
    /// Print what the tee store holds: its file, entries, bytes of originals, the oldest entry,
    /// and its retention. Reads only the tee store.
    #[command(mut_arg("project", |arg| arg.help(
        "The project root (default: the current folder): its tee store is DIR/.parrot/tee.db \
         unless --tee-store names another"
    )))]
    Store {
        #[command(flatten)]
        project: ProjectOption,
        #[command(flatten)]
        tee_store: TeeStoreOption,
    },
    /// Print the namespace `serve` stores the originals of a client with this API key in (for
    /// `recover --namespace`): the key is read from stdin (one line), or from the environment
    /// variable --env names. The key itself is never printed or stored.
    Namespace {
        /// Read the key from this environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY).
        #[arg(long, value_name = "VAR")]
        env: Option<String>,
    },
    /// Lay out a plugin package, the folder --plugins DIR loads: a built cdylib (--library) or
    /// the one cargo builds from a crate (--crate), beside its compressors.toml. The package is
    /// loaded as the host loads it before it is put at --out: exit 2 naming what is wrong (a
    /// manifest that does not name the library, a library that does not load, a codec the
    /// manifest names that the library does not export).
    Package {
        /// The plugin's crate: cargo builds its library, and its compressors.toml is the
        /// manifest unless --manifest names another.
        #[arg(
            long = "crate",
            value_name = "DIR",
            conflicts_with = "library",
            required_unless_present = "library"
        )]
        crate_dir: Option<PathBuf>,
        /// The built plugin library, a cdylib (libNAME.so, libNAME.dylib, NAME.dll).
        #[arg(long, value_name = "FILE", requires = "manifest")]
        library: Option<PathBuf>,
        /// The package's manifest: its [plugin] table names the library, its entries the
        /// tools the codecs serve.
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
        /// With --crate: the cargo profile it is built with.
        #[arg(long, value_name = "NAME", default_value = "release")]
        profile: String,
        /// The package folder to write; a package already there is replaced.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// List every codec: name, interface version, origin.
    Plugins {
        #[command(flatten)]
        project: ProjectOption,
        #[command(flatten)]
        plugins: PluginOptions,
    },
    /// Start an MCP server and relay MCP over stdio between it and the client (the agent),
    /// compressing every tools/call result and adding the tool wm_get_result, which returns
    /// the originals. With PARROT_COMPRESSION_DISABLED=1: a pure relay. On SIGTERM, SIGINT or
    /// SIGHUP it ends the server and everything it started (SIGTERM, 500 ms, SIGKILL), writes
    /// the report and exits with 128 + the signal's number; on Linux that takes in processes
    /// the server detached with setsid(), elsewhere only the server's process group. Killed
    /// with SIGKILL, it ends nothing: on Linux the server gets SIGTERM, and what the server
    /// detached or does not end itself runs on.
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
        #[command(flatten)]
        configuration: Configuration,
    },
    /// An HTTP proxy in front of LLM APIs (Anthropic Messages, OpenAI Chat Completions and
    /// Responses): every tool result a request carries is compressed, wm_get_result is offered
    /// and answered in the proxy, everything else relayed as it is; GET /parrot/report returns
    /// the savings so far. With PARROT_COMPRESSION_DISABLED=1: a pure relay.
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
}

impl Command {
    /// The configuration options this command takes.
    fn groups(&self) -> Vec<&dyn Group> {
        match self {
            Command::Compress { configuration, .. }
            | Command::Replay { configuration, .. }
            | Command::McpProxy { configuration, .. } => vec![configuration],
            #[cfg(feature = "serve")]
            Command::Serve(args) => vec![&args.configuration],
            Command::Check { project, plugins }
            | Command::Plugins { project, plugins }
            | Command::Expand {
                project, plugins, ..
            } => vec![project, plugins],
            Command::Explain {
                project,
                plugins,
                no_tee,
                ..
            } => vec![project, plugins, no_tee],
            Command::Recover {
                project,
                tee_store,
                plugins,
                tokenizer,
                ..
            } => vec![project, tee_store, plugins, tokenizer],
            Command::Store { project, tee_store } => vec![project, tee_store],
            Command::Namespace { .. } | Command::Package { .. } => Vec::new(),
        }
    }
}

pub(crate) fn parse_level(text: &str) -> Result<Level, String> {
    text.parse::<Level>().map_err(|err| err.to_string())
}

pub(crate) fn parse_namespace(text: &str) -> Result<Namespace, String> {
    Namespace::new(text).map_err(|err| err.to_string())
}
