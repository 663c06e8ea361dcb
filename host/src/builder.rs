//! Building a host: the builder's settings, then discovery of the manifests, loading of the
//! plugin libraries, and construction of every entry's codec, each error collected.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use parrot_codec_api::{Codec, CodecMeta, DynCodec};

use crate::config::discovery::{
    self, PLUGIN_PATH_ENV, SourceInfo, TRUST_PROJECT_PLUGINS_ENV, absolute,
};
use crate::error::{BuildError, Error, LoadError};
use crate::host::Host;
use crate::metering::observe::Observer;
use crate::metering::tokens::{TokenCounter, Tokenizer};
use crate::plugins;
use crate::plugins::registry::{BuildCodec, Registry};
use crate::routing::budget::{BreakerConfig, Budgets, Clock, SystemClock};
use crate::routing::envelope::Envelope;
use crate::stage::entries::EntryTable;
use crate::stage::pipeline::{Settings, Stage, Verification};
use crate::tee::TeeStore;

/// The default of [`HostBuilder::retrieval_limit_tokens`], the size of one retrieval in tokens
/// of the host's tokenizer: 25,000, the size of one MCP result that Claude Code refuses.
pub const DEFAULT_LIMIT_TOKENS: usize = 25_000;

/// The default of [`HostBuilder::recovery_max_chars`], the most characters of one recovery
/// call's answer in a proxy, whatever its selector asks (`max_chars: 0` included): 200,000, the
/// pipeline's own last resort (`max_result_chars`), so no answer is larger than the largest
/// result the pipeline lets through.
pub const DEFAULT_RECOVERY_MAX_CHARS: usize = 200_000;

/// Builds a [`Host`]. Everything is validated in [`HostBuilder::build`]: nothing is left to
/// fail at the first tool call.
///
/// # Sources
///
/// Manifests are read highest precedence first: the project's,
/// `<project>/.parrot/compressors.toml`; the plugin packages, from the directories given to
/// [`HostBuilder::plugin_dir`] in order, then `PARROT_PLUGIN_PATH`, then
/// `<project>/.parrot/plugins` when the project's plugins are trusted
/// ([`HostBuilder::trust_project_plugins`]; a folder of packages is taken in name order); the core
/// defaults compiled into the host. The first source to declare a key wins the whole entry
/// (params are not merged); a project or package entry with the key of a core entry logs a
/// warning that it shadows it.
///
/// # Examples
///
/// ```
/// use parrot_host::Host;
///
/// let dir = std::env::temp_dir().join("parrot-doc-builder");
/// std::fs::create_dir_all(&dir).unwrap();
/// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
/// assert!(host.registry().get("json_compact").is_some());
/// assert_eq!(host.resolve("anything").entry.unwrap().codec_name, "auto");
/// ```
#[derive(Clone, Default)]
pub struct HostBuilder {
    project: Option<PathBuf>,
    core_only: bool,
    plugin_dirs: Vec<PathBuf>,
    plugin_path: Option<Option<OsString>>,
    trust_project_plugins: Option<bool>,
    tee: Option<Arc<dyn TeeStore>>,
    observers: Vec<Arc<dyn Observer>>,
    tokenizer: Option<Arc<dyn TokenCounter>>,
    envelopes: Vec<Arc<dyn Envelope>>,
    budgets: Option<Budgets>,
    breaker: Option<BreakerConfig>,
    clock: Option<Arc<dyn Clock>>,
    kill_switch: Option<bool>,
    inline_at_any_size: bool,
    report_tokens: Option<bool>,
    tee_lossless: bool,
    max_result_chars: Option<usize>,
    verification: Option<Verification>,
    retrieval_limit_tokens: Option<usize>,
    recovery_max_chars: Option<usize>,
    codecs: Vec<(CodecMeta, BuildCodec)>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("project", &self.project)
            .field("plugin_dirs", &self.plugin_dirs)
            .field("plugin_path", &self.plugin_path)
            .field("tee", &self.tee.is_some())
            .finish()
    }
}

impl Host {
    /// A builder with the defaults: the current directory as project, `PARROT_PLUGIN_PATH`
    /// from the environment.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }
}

impl HostBuilder {
    /// Registers codec `C` in-process, beside the built-ins: a manifest entry chooses it by its
    /// [`Codec::NAME`] like any other. The stage treats it as a plugin's codec (its lossless
    /// outcomes are verified through its inverse, and its output for a JSON payload must be
    /// JSON unless it declares text output), so a codec author can run it through the real
    /// stage without building a library; `parrot-codec-test`'s `Stage` does.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
    /// use parrot_host::{Host, Origin};
    ///
    /// struct Upper;
    ///
    /// impl Codec for Upper {
    ///     const NAME: &'static str = "upper";
    ///     fn new(_: &mut Params) -> Result<Self, CodecError> {
    ///         Ok(Upper)
    ///     }
    ///     fn compress(&self, _: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
    ///         Ok(Outcome::Unchanged)
    ///     }
    /// }
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-codec");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).codec::<Upper>().build().unwrap();
    /// assert_eq!(host.registry().get("upper").unwrap().origin, Origin::InProcess);
    /// ```
    ///
    /// # Errors
    ///
    /// [`HostBuilder::build`] fails with [`LoadError::DuplicateCodec`] when another source
    /// provides a codec of the same name.
    pub fn codec<C: Codec>(&mut self) -> &mut Self {
        self.codecs
            .push((CodecMeta::of::<C>(), build_in_process::<C>));
        self
    }

    /// The project root (default: the current directory). Its manifest is
    /// `<project>/.parrot/compressors.toml`; its own plugin source `<project>/.parrot/plugins`
    /// (read only when trusted: [`HostBuilder::trust_project_plugins`]).
    pub fn project(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.project = Some(dir.into());
        self
    }

    /// Builds the core configuration alone: no manifest is read but the core one, no plugin is
    /// loaded (the project, [`HostBuilder::plugin_dir`] and `PARROT_PLUGIN_PATH` are ignored).
    /// For what needs only the built-in codecs and the tee store, such as recovery: a broken
    /// manifest or a missing plugin cannot stand between a key and its original.
    pub fn core_only(&mut self) -> &mut Self {
        self.core_only = true;
        self
    }

    /// Adds a plugin source directory, after those already added and ahead of
    /// `PARROT_PLUGIN_PATH` and the project's own.
    pub fn plugin_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// Replaces the value of `PARROT_PLUGIN_PATH` (read from the environment by default);
    /// `None` ignores the variable.
    pub fn plugin_path(&mut self, value: Option<OsString>) -> &mut Self {
        self.plugin_path = Some(value);
        self
    }

    /// Whether to load the project's own plugins, `<project>/.parrot/plugins` (default: only
    /// when `PARROT_TRUST_PROJECT_PLUGINS` is `1`). Loading a library runs its code, and a
    /// project's folder came with the project: a repository just cloned must not run code by
    /// being checked. Untrusted, its packages are left out with one warning naming the folder.
    /// Plugins from [`HostBuilder::plugin_dir`] and `PARROT_PLUGIN_PATH` are always loaded.
    pub fn trust_project_plugins(&mut self, yes: bool) -> &mut Self {
        self.trust_project_plugins = Some(yes);
        self
    }

    /// The store that keeps the original of every lossy outcome. Without one (the default),
    /// `normal` and `aggressive` are capped to `minimal`: nothing goes lossy without a way back.
    pub fn tee_store(&mut self, store: Arc<dyn TeeStore>) -> &mut Self {
        self.tee = Some(store);
        self
    }

    /// Adds an observer of processed calls (the savings report is always attached).
    pub fn observer(&mut self, observer: Arc<dyn Observer>) -> &mut Self {
        self.observers.push(observer);
        self
    }

    /// The tokenizer for token counts (default `o200k_base`).
    pub fn tokenizer(&mut self, tokenizer: Arc<dyn TokenCounter>) -> &mut Self {
        self.tokenizer = Some(tokenizer);
        self
    }

    /// Adds an envelope that the router `auto` opens before it looks for a shape (see
    /// [`Envelope`]); envelopes are tried in the order added. None by default: the host knows
    /// no protocol. `parrot_mcp::ContentBlocks` opens MCP results, and the command adds it.
    pub fn envelope(&mut self, envelope: Arc<dyn Envelope>) -> &mut Self {
        self.envelopes.push(envelope);
        self
    }

    /// The placement's thresholds and latency budgets.
    pub fn budgets(&mut self, budgets: Budgets) -> &mut Self {
        self.budgets = Some(budgets);
        self
    }

    /// The circuit breaker's windows and cooldown.
    pub fn breaker(&mut self, config: BreakerConfig) -> &mut Self {
        self.breaker = Some(config);
        self
    }

    /// The clock of the breaker and the budgets (default: the system clock).
    pub fn clock(&mut self, clock: Arc<dyn Clock>) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// Forces the kill switch on or off; by default [`HostBuilder::build`] reads
    /// `PARROT_COMPRESSION_DISABLED` once (`1` disables compression), and the host keeps
    /// that answer for its life.
    pub fn kill_switch(&mut self, on: Option<bool>) -> &mut Self {
        self.kill_switch = on;
        self
    }

    /// Compresses inline at any size instead of passing large payloads through (what the
    /// command does: a person who runs it asked for the result).
    pub fn inline_at_any_size(&mut self, yes: bool) -> &mut Self {
        self.inline_at_any_size = yes;
        self
    }

    /// Counts the savings report's tokens on the background worker (default on). Off, the
    /// report's token figures stay 0 and observers get no token events, while the stage's
    /// decisions (the no-gain rule, CONTRACT §2.1) still count with the tokenizer: for
    /// benchmarks that measure the caller's cost alone.
    pub fn report_tokens(&mut self, yes: bool) -> &mut Self {
        self.report_tokens = Some(yes);
        self
    }

    /// Also keeps the original of every lossless outcome that changed the payload, with a
    /// `_tee` pointer whose reason is `lossless` (default off: the contract tees lossy outcomes
    /// only). For callers whose consumer may need the exact text back, not only an equal
    /// value: an agent that read a JSON file through the MCP proxy and then edits it must
    /// quote its bytes. Needs a tee store; the pointer counts for the no-gain rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Call, Host, Input, MemoryTeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-tee-lossless");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .tee_store(Arc::new(MemoryTeeStore::default()))
    ///     .tee_lossless(true)
    ///     .build()
    ///     .unwrap();
    /// let rows: Vec<String> = (0..60).map(|i| format!("  {{ \"id\": {i} }}")).collect();
    /// let input = format!("[\n{}\n]", rows.join(",\n"));
    /// let out = host.process(Call::new("read_file", Input::Text(&input)));
    /// let key = out.meta.tee_key.clone().unwrap();
    /// assert!(out.text().unwrap().ends_with(&format!(
    ///     r#""_tee":{{"key":"{key}","reason":"lossless","hint":{}}}}}"#,
    ///     serde_json::Value::from(parrot_host::TEE_HINT)
    /// )));
    /// assert_eq!(host.recover(&key).unwrap().unwrap(), input.as_bytes());
    /// ```
    pub fn tee_lossless(&mut self, yes: bool) -> &mut Self {
        self.tee_lossless = yes;
        self
    }

    /// The last line of defense: final payloads over this many code points are cut (with a
    /// tee store). Default 200,000; 0 disables.
    pub fn max_result_chars(&mut self, max: usize) -> &mut Self {
        self.max_result_chars = Some(max);
        self
    }

    /// The size a retrieval (`parrot_recover`'s `recover_selected`) is held to when its
    /// selector gives no `max_chars`, in tokens of the host's tokenizer. Default
    /// [`DEFAULT_LIMIT_TOKENS`] (25,000); 0: no limit. Read with
    /// [`Host::retrieval_limit_tokens`].
    pub fn retrieval_limit_tokens(&mut self, tokens: usize) -> &mut Self {
        self.retrieval_limit_tokens = Some(tokens);
        self
    }

    /// The most characters of one recovery call's answer in a proxy (`parrot_recover`'s
    /// `recover_for_model`: the MCP proxy's `wm_get_result`, `serve`'s), whatever its selector
    /// asks, `max_chars: 0` included: a model, or a tool result that speaks to it, cannot have
    /// a proxy read a whole 100 MB original into one answer. A capped answer says so, with the
    /// exact counts and the selector of the next part. Default [`DEFAULT_RECOVERY_MAX_CHARS`]
    /// (200,000); 0: no cap. `recover_selected` (the `recover` command) is never capped. Read
    /// with [`Host::recovery_max_chars`].
    pub fn recovery_max_chars(&mut self, chars: usize) -> &mut Self {
        self.recovery_max_chars = Some(chars);
        self
    }

    /// How outcomes claimed lossless are verified through the codec's inverse.
    pub fn verification(&mut self, verification: Verification) -> &mut Self {
        self.verification = Some(verification);
        self
    }

    /// Discovers and validates every manifest, loads every plugin library, and builds every
    /// entry's codec.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] listing every error found, each naming the file, entry and key (or the
    /// library and the manifest that declared it, or the setting of [`HostBuilder::budgets`]
    /// or [`HostBuilder::breaker`] that is out of its range).
    pub fn build(&self) -> Result<Host, BuildError> {
        let project = match &self.project {
            Some(dir) => absolute(dir),
            None => std::env::current_dir().map_err(|source| LoadError::ReadSource {
                dir: PathBuf::from("."),
                source,
            })?,
        };
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let plugin_path = match &self.plugin_path {
            Some(value) => value.clone(),
            None => std::env::var_os(PLUGIN_PATH_ENV),
        };
        let trusted = self.trust_project_plugins.unwrap_or_else(|| {
            std::env::var_os(TRUST_PROJECT_PLUGINS_ENV).is_some_and(|v| v == "1")
        });
        let manifests = if self.core_only {
            discovery::core_manifests(&mut errors)
        } else {
            discovery::manifests(
                &project,
                &self.plugin_dirs,
                plugin_path,
                trusted,
                &mut errors,
                &mut warnings,
            )
        };

        let mut registry = Registry::with_builtins();
        for &(meta, build) in &self.codecs {
            registry.add_in_process(meta, build, &mut errors);
        }
        plugins::load_all(&manifests, &mut registry, &mut errors);
        let tokenizer: Arc<dyn TokenCounter> = self
            .tokenizer
            .clone()
            .unwrap_or_else(|| Arc::new(Tokenizer::default()));
        let table = EntryTable::build(
            &manifests,
            &registry,
            &tokenizer,
            &self.envelopes,
            &mut errors,
        );
        let budgets = self.budgets.unwrap_or_default().check();
        let breaker = self.breaker.unwrap_or_default().check();
        errors.extend(budgets.into_iter().chain(breaker).map(Error::from));
        if !errors.is_empty() {
            return Err(BuildError { errors });
        }
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        Ok(Host::new(
            project,
            manifests.into_iter().map(SourceInfo::of).collect(),
            registry,
            table,
            self.tee.clone(),
            self.stage(tokenizer),
        ))
    }

    fn stage(&self, tokenizer: Arc<dyn TokenCounter>) -> Stage {
        let settings = Settings {
            budgets: self.budgets.unwrap_or_default(),
            breaker: self.breaker.unwrap_or_default(),
            clock: self.clock.clone().unwrap_or_else(|| Arc::new(SystemClock)),
            kill_switch: self
                .kill_switch
                .unwrap_or_else(crate::stage::pipeline::kill_switch_from_env),
            inline_at_any_size: self.inline_at_any_size,
            tee_lossless: self.tee_lossless,
            max_result_chars: self.max_result_chars.unwrap_or(200_000),
            verification: self.verification.unwrap_or_default(),
            report_tokens: self.report_tokens.unwrap_or(true),
            retrieval_limit_tokens: self.retrieval_limit_tokens.unwrap_or(DEFAULT_LIMIT_TOKENS),
            recovery_max_chars: self
                .recovery_max_chars
                .unwrap_or(DEFAULT_RECOVERY_MAX_CHARS),
        };
        Stage::new(settings, tokenizer, &self.observers)
    }
}

fn build_in_process<C: Codec>(
    params: parrot_codec_api::Params,
) -> Result<Box<dyn DynCodec>, parrot_codec_api::CodecError> {
    Ok(Box::new(parrot_codec_api::build::<C>(params)?))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The names an unknown codec's message lists: `auto`, then every built-in in name order.
    fn known() -> String {
        let builtins = parrot_codecs::builtins().into_iter().map(|b| b.meta.name());
        std::iter::once("auto")
            .chain(builtins)
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn bad_settings_are_collected_with_the_manifests_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
        std::fs::write(
            dir.path().join(".parrot/compressors.toml"),
            "[compressor.t]\ncodec = \"zstd\"\n",
        )
        .unwrap();
        let err = Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .budgets(Budgets {
                size_threshold_bytes: 0,
                ..Budgets::default()
            })
            .breaker(BreakerConfig {
                window_duration: Duration::ZERO,
                ..BreakerConfig::default()
            })
            .build()
            .unwrap_err();
        let lines: Vec<String> = err.errors.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(lines[0].ends_with(&format!(
            "entry \"t\": unknown codec \"zstd\" (known: {})",
            known()
        )));
        assert!(lines[1].starts_with("Budgets: key \"size_threshold_bytes\": 0 "));
        assert!(lines[2].starts_with("BreakerConfig: key \"window_duration\": 0ns "));
        assert!(matches!(err.errors[1], Error::Settings(_)));
    }

    /// A codec name one slip from a known one was refused with only the list of names.
    #[test]
    fn unknown_codec_suggests_the_nearest_known_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
        std::fs::write(
            dir.path().join(".parrot/compressors.toml"),
            "[compressor.t]\ncodec = \"jsn_compact\"\n[compressor.u]\ncodec = \"atuo\"\n",
        )
        .unwrap();
        let err = Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .build()
            .unwrap_err();
        let lines: Vec<String> = err.errors.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].ends_with(&format!(
                "(known: {}); did you mean \"json_compact\"?",
                known()
            )),
            "{lines:#?}"
        );
        assert!(lines[1].ends_with("; did you mean \"auto\"?"), "{lines:#?}");
    }
}
