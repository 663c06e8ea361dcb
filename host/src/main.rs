//! The `parrot-compress` command.

use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;

use clap::{Parser, Subcommand};
use parrot_compress::{Host, MemoryTeeStore, Origin, manifest::SourceKind};

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

    /// Run without a tee store: normal and aggressive are capped to minimal.
    #[arg(long, global = true)]
    no_tee: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Discover and validate every manifest, load every plugin, print a summary; exit 2 with
    /// each error on stderr when anything is invalid.
    Check,
    /// List every codec: name, interface version, origin.
    Plugins,
    /// Which entry applies to TOOL: source, key, match kind, codec, level, effective level,
    /// and the entries that lost to it.
    Explain {
        /// The tool name.
        tool: String,
    },
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

    let mut builder = Host::builder();
    if let Some(project) = &cli.project {
        builder.project(project);
    }
    for dir in &cli.plugins {
        builder.plugin_dir(dir);
    }
    if !cli.no_tee {
        builder.tee_store(Arc::new(MemoryTeeStore::default()));
    }
    let host = match builder.build() {
        Ok(host) => host,
        Err(err) => {
            for error in &err.errors {
                eprintln!("error: {error}");
            }
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Check => check(&host),
        Command::Plugins => plugins(&host),
        Command::Explain { tool } => print!("{}", host.explain(&tool)),
    }
    ExitCode::SUCCESS
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
        println!("  {:<20} {}", codec.name, codec.origin);
    }
    println!("entries:");
    let width = host
        .entries()
        .iter()
        .map(|e| e.key.len() + 2)
        .max()
        .unwrap_or(0);
    for entry in host.entries() {
        println!(
            "  {:<width$}  {}/{}  from {}",
            format!("\"{}\"", entry.key),
            entry.codec_name,
            entry.level,
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
        .map(|c| c.name.len())
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
            codec.name, codec.interface_version
        );
    }
}
