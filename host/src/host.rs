//! The built host: its sources, registry and entries, and the calls it serves —
//! [`Host::process`] (through the pipeline), [`Host::compress`], [`Host::expand`],
//! [`Host::recover`], [`Host::resolve`] and [`Host::explain`]. Retrieval of the part of an
//! original a selector chooses is the `parrot-recover` crate's, over the accessors here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parrot_codec_api::{Level, Outcome, Payload};

use crate::call::{Call, Processed, Skip, Status};
#[cfg(feature = "tokio")]
use crate::call::{OwnedCall, OwnedInput};
use crate::config::discovery::SourceInfo;
use crate::error::{CompressError, ExpandError, TeeError};
use crate::metering::report::Report;
use crate::metering::tokens::TokenCounter;
use crate::plugins::registry::Registry;
use crate::routing::auto::Auto;
#[cfg(feature = "tokio")]
use crate::routing::budget::Placement;
use crate::stage::entries::{Engine, EntryTable, Resolution, ResolvedEntry};
use crate::stage::explain::Explanation;
use crate::stage::pipeline::{self, Run, Stage};
use crate::tee::{Namespace, Scoped, TeeStore};

/// A built host: manifests validated, plugins loaded, every entry's codec constructed.
pub struct Host {
    project: PathBuf,
    sources: Vec<SourceInfo>,
    registry: Registry,
    table: EntryTable,
    tee: Option<Arc<dyn TeeStore>>,
    stage: Stage,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("project", &self.project)
            .field("sources", &self.sources)
            .field("entries", &self.table.entries())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host of the parts the builder built.
    pub(crate) fn new(
        project: PathBuf,
        sources: Vec<SourceInfo>,
        registry: Registry,
        table: EntryTable,
        tee: Option<Arc<dyn TeeStore>>,
        stage: Stage,
    ) -> Host {
        Host {
            project,
            sources,
            registry,
            table,
            tee,
            stage,
        }
    }

    /// The project root.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The manifests read, in precedence order.
    pub fn sources(&self) -> &[SourceInfo] {
        &self.sources
    }

    /// Every codec the host can use.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The winning entries, in precedence order.
    pub fn entries(&self) -> &[ResolvedEntry] {
        self.table.entries()
    }

    /// Entries that lost to an entry with the same key in a higher-precedence source.
    pub fn shadowed(&self) -> &[ResolvedEntry] {
        self.table.shadowed()
    }

    /// Warnings found while building (shadowed core entries).
    pub fn warnings(&self) -> &[String] {
        self.table.warnings()
    }

    /// Runs the codec of the entry that applies to `tool` (see [`Host::resolve`]) on
    /// `payload` at `level`, exactly as given: no level capping, no size rules, no tee. For an
    /// entry whose codec is `auto`, the router's choice: the payload the winning candidate
    /// made, or [`Outcome::Unchanged`] when none qualified.
    ///
    /// # Errors
    ///
    /// A [`CompressError`] naming the tool and the codec when the codec returns an error or
    /// panics (a plugin's panic is caught inside the plugin and arrives as an error).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{Host, Level, Outcome, Payload};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-compress");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// let outcome = host.compress("any_tool", Payload::text_only("plain text"), Level::Minimal);
    /// assert_eq!(outcome.unwrap(), Outcome::Unchanged);
    /// ```
    pub fn compress(
        &self,
        tool: &str,
        payload: Payload<'_>,
        level: Level,
    ) -> Result<Outcome, CompressError> {
        // Every tool has an entry: the core manifest's `"*"` catches the rest (see
        // `Host::process_on`).
        let Some(entry) = self.resolve(tool).entry else {
            return Ok(Outcome::Unchanged);
        };
        match entry.engine() {
            // The router's candidates that fail are out of the running: it does not fail.
            Engine::Router(auto) => Ok(auto.compress(payload, level)),
            Engine::Codec(resolved) => {
                let codec = &*resolved.codec;
                codec
                    .compress(payload, level)
                    .map_err(|source| CompressError {
                        tool: tool.to_owned(),
                        codec: codec.name().to_owned(),
                        source: Box::new(source),
                    })
            }
        }
    }

    /// The original that `payload`, an output of codec `codec`, was made from: the codec's
    /// inverse run on it. `codec` is any codec of the registry, built in or a plugin's, as the
    /// first winning entry that names it built it (with its params), else built with none.
    ///
    /// The payload may be the codec's output as it came out of the codec, or as the stage gave
    /// it to the model: a tee pointer of reason `lossless` is taken off first (the object's
    /// `_tee` member, the `{"result": …, "_tee": …}` wrapper, or the pointer line that ends a
    /// text). For a JSON codec the original comes back as the codec's JSON text: the same JSON
    /// value as the original (CONTRACT §2.1), not its bytes; for a text codec, byte for byte.
    /// What is read as a pointer, and how it is taken off, is CONTRACT §8.1's.
    ///
    /// # Errors
    ///
    /// Checked in this order:
    ///
    /// - [`ExpandError::Lossy`] when the payload carries a pointer of another reason (`lossy`,
    ///   `cut`), whatever the codec: the message gives the `parrot-compress recover KEY`
    ///   command that returns the original from the tee store;
    /// - [`ExpandError::Router`] for `auto`, which is not a codec;
    /// - [`ExpandError::UnknownCodec`] for a name no source provides, with the known names and
    ///   the nearest one when it is near;
    /// - [`ExpandError::NoInverse`] for a codec that declares no inverse;
    /// - [`ExpandError::Build`] for a codec no entry built that cannot be built without params;
    /// - [`ExpandError::Codec`] when the inverse refuses the payload (its message says why).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{ExpandError, Host};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-expand");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// // `json_compact`'s output for {"id": 7, "tags": null, "items": [{"x": 1}, {"x": 1}, {"x": 1}]}
    /// let output = r#"{"id":7,"items":[{"_repeat":3,"_value":{"x":1}}]}"#;
    /// assert_eq!(
    ///     host.expand("json_compact", output).unwrap(),
    ///     r#"{"id":7,"items":[{"x":1},{"x":1},{"x":1}]}"#
    /// );
    /// assert!(matches!(host.expand("auto", output), Err(ExpandError::Router)));
    /// let unknown = host.expand("jsn_compact", output).unwrap_err().to_string();
    /// assert!(unknown.starts_with("unknown codec \"jsn_compact\" (known: columnar, hits, json_compact, "));
    /// assert!(unknown.ends_with("; did you mean \"json_compact\"?"));
    /// ```
    pub fn expand(&self, codec: &str, payload: &str) -> Result<String, ExpandError> {
        crate::stage::expand::expand(&self.registry, self.table.entries(), codec, payload)
    }

    /// Runs one tool call through the stage: returns the payload the model will see and the
    /// call's metadata. The input is never modified; token counts follow on the observers
    /// (see [`Host::flush`], or [`Processed::tokens`] for this call's). The rules, in order,
    /// are CONTRACT §4's; the `pipeline` module docs walk a payload through them.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Call, Host, Input, MemoryTeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-process");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .tee_store(Arc::new(MemoryTeeStore::default()))
    ///     .build()
    ///     .unwrap();
    /// let out = host.process(Call::new("ls", Input::Text("plain text")));
    /// assert_eq!(out.text(), Some("plain text"));
    /// assert!(!out.meta.compressed);
    /// host.flush();
    /// assert_eq!(host.report().snapshot().total.calls, 1);
    /// ```
    pub fn process<'a>(&self, call: Call<'a>) -> Processed<'a> {
        self.process_on(call, false)
    }

    /// [`Host::process`] for a caller that already runs off its request's thread (a blocking
    /// pool, a worker of its own): a call at or over the placement's thresholds is compressed
    /// as an executor call, under the executor's budget (CONTRACT §6), where
    /// [`Host::process`] passes it through (`budget_passthrough`) unless the host compresses
    /// inline at any size. `serve` rewrites a request's tool results so, on tokio's blocking
    /// pool: every result is compressed, whatever its size.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Call, Host, Input, MemoryTeeStore, Skip};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-offloaded");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .tee_store(Arc::new(MemoryTeeStore::default()))
    ///     .build()
    ///     .unwrap();
    /// let log: String = (0..20_000)
    ///     .map(|i| format!("2026-12-08T01:00:{:02}Z INFO step {i} done\n", i % 60))
    ///     .collect();
    /// assert!(log.len() > host.size_threshold_bytes());
    /// let inline = host.process(Call::new("build", Input::Text(&log)));
    /// assert_eq!(inline.meta.skipped, Some(Skip::BudgetPassthrough));
    /// let offloaded = host.process_offloaded(Call::new("build", Input::Text(&log)));
    /// assert!(offloaded.meta.compressed);
    /// ```
    pub fn process_offloaded<'a>(&self, call: Call<'a>) -> Processed<'a> {
        self.process_on(call, true)
    }

    /// The async entry point: a payload at or over the placement's thresholds runs on tokio's
    /// blocking pool (at any level: on an async caller, even a lossless pass over megabytes
    /// must not stall the runtime); a smaller one runs in place. Needs a tokio runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(feature = "tokio")] {
    /// use std::sync::Arc;
    /// use parrot_host::{Host, OwnedCall, OwnedInput};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-async");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Arc::new(Host::builder().project(&dir).plugin_path(None).build().unwrap());
    /// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let out = runtime.block_on(host.process_async(OwnedCall::new(
    ///     "t",
    ///     OwnedInput::Text("[1, 2]".into()),
    /// )));
    /// assert_eq!(out.text(), Some("[1,2]"));
    /// # }
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn process_async(self: &Arc<Self>, call: OwnedCall) -> Processed<'static> {
        let budgets = self.stage.budgets();
        let size = call.payload.len();
        // Only a payload under the size threshold is scanned for rows, on this thread.
        let big = size >= budgets.size_threshold_bytes
            || match &call.payload {
                OwnedInput::Text(text) => Placement::rows_reach(text, budgets.row_threshold),
                _ => false,
            };
        if !big {
            return self.process(call.as_call()).into_owned();
        }
        let host = Arc::clone(self);
        let call = Arc::new(call);
        let moved = Arc::clone(&call);
        let blocking = tokio::task::spawn_blocking(move || {
            host.process_on(moved.as_call(), true).into_owned()
        });
        match blocking.await {
            Ok(processed) => processed,
            Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            Err(_) => {
                // The runtime shut down before the blocking pool ran the call: nothing was
                // compressed, so the input goes out.
                let payload = call.as_call().payload.bytes().into_owned();
                Processed::passed_through(std::borrow::Cow::Owned(payload), Skip::BudgetPassthrough)
            }
        }
    }

    fn process_on<'a>(&self, call: Call<'a>, offloaded: bool) -> Processed<'a> {
        let resolution = self.resolve(call.tool);
        // Every tool resolves to an entry: the core manifest, always read, declares `"*"`,
        // and an entry that fails to build fails the host. (A host once kept a `json_compact`
        // for no entry; nothing could reach it.) Were a table without `"*"` ever built, its
        // unmatched calls would go out as they came.
        let Some(entry) = resolution.entry else {
            return Processed::passed_through(call.payload.bytes(), Skip::LevelNone);
        };
        let level = self.level_of(&resolution, call.status, call.level);
        // A call in a namespace stores through a view of the store that puts every key under
        // it: the rules, the collision fallback and the pointer's plain key stay as they are.
        let scoped = match (self.tee.as_deref(), call.namespace) {
            (Some(store), Some(namespace)) => Some(Scoped { store, namespace }),
            _ => None,
        };
        let tee = match &scoped {
            Some(scoped) => Some(scoped as &dyn TeeStore),
            None => self.tee.as_deref(),
        };
        pipeline::process(Run {
            stage: &self.stage,
            tee,
            engine: entry.engine(),
            level,
            call,
            offloaded,
        })
    }

    /// Waits until every processed call's tokens are counted and delivered to the observers.
    pub fn flush(&self) {
        self.stage.flush();
    }

    /// The live savings report (attached to every host).
    pub fn report(&self) -> &Report {
        self.stage.report()
    }

    /// The exact original bytes stored under a tee key.
    ///
    /// # Errors
    ///
    /// [`TeeError::NotConfigured`] when no store is configured; the store's error when it
    /// fails.
    pub fn recover(&self, key: &str) -> Result<Option<Vec<u8>>, TeeError> {
        self.recover_in(None, key)
    }

    /// The exact original bytes stored under a tee key in `namespace` (a call's namespace:
    /// [`Call::namespace`](crate::Call#structfield.namespace)); `None` is [`Host::recover`].
    /// A namespace finds only its own originals, never an unscoped one or another
    /// namespace's. Without a namespace, a key written `{namespace}/{key}`
    /// ([`Namespace::split_scoped`]) is `Ok(None)`, a key nobody holds, whatever is stored
    /// under it: what a namespace holds is read in that namespace only, so knowing a
    /// namespace's name (a log line, `parrot-compress namespace`) reads none of it. In a
    /// namespace, a key holding a `/` stays in it: the namespace is what is before the
    /// stored key's first `/`, and no namespace's name holds one. A key that starts with
    /// [`RECORD_KEY_PREFIX`](crate::RECORD_KEY_PREFIX) is no original's (the store keeps a
    /// program's records under it) and finds nothing.
    ///
    /// # Errors
    ///
    /// As [`Host::recover`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Host, MemoryTeeStore, Namespace, TeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-recover-in");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let store = Arc::new(MemoryTeeStore::default());
    /// store.put("team/k", b"theirs").unwrap();
    /// // The proxy's records are kept beside the originals, and are none of them.
    /// store.put("team/__record__:merge:1", b"{}").unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).tee_store(store).build().unwrap();
    /// let team = Namespace::new("team").unwrap();
    /// assert_eq!(host.recover_in(Some(&team), "k").unwrap().as_deref(), Some(&b"theirs"[..]));
    /// assert_eq!(host.recover("k").unwrap(), None);
    /// assert_eq!(host.recover_in(Some(&team), "__record__:merge:1").unwrap(), None);
    /// // Naming the namespace in the key reads nothing of it.
    /// assert_eq!(host.recover("team/k").unwrap(), None);
    /// assert_eq!(host.recover_in(None, "team/k").unwrap(), None);
    /// ```
    pub fn recover_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
    ) -> Result<Option<Vec<u8>>, TeeError> {
        if key.starts_with(crate::RECORD_KEY_PREFIX) && self.tee.is_some() {
            return Ok(None);
        }
        match (&self.tee, namespace) {
            (Some(tee), Some(namespace)) => tee.get(&namespace.scoped_key(key)),
            (Some(_), None) if Namespace::split_scoped(key).is_some() => Ok(None),
            (Some(tee), None) => tee.get(key),
            (None, _) => Err(TeeError::NotConfigured),
        }
    }

    /// The router's size threshold ([`crate::Budgets::size_threshold_bytes`]): a payload of
    /// this many bytes or more leaves the inline path where the caller can offload it, as
    /// `Host::process_async` (feature `tokio`) and the MCP proxy do.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{Budgets, Host};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-size-threshold");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// assert_eq!(host.size_threshold_bytes(), Budgets::default().size_threshold_bytes);
    /// ```
    pub fn size_threshold_bytes(&self) -> usize {
        self.stage.budgets().size_threshold_bytes
    }

    /// The tee store, when one is configured.
    pub fn tee_store(&self) -> Option<&dyn TeeStore> {
        self.tee.as_deref()
    }

    /// The tokenizer the host counts tokens with ([`crate::HostBuilder::tokenizer`]; default
    /// o200k).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{Host, TokenCounter, Tokenizer};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-tokenizer");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// let text = "error[E0308]: mismatched types";
    /// assert_eq!(host.tokenizer().count(text), Tokenizer::O200k.count(text));
    /// ```
    pub fn tokenizer(&self) -> &dyn TokenCounter {
        self.stage.gauge().counter()
    }

    /// The size a retrieval is held to when its selector gives no `max_chars`, in tokens
    /// ([`crate::HostBuilder::retrieval_limit_tokens`]; 0: no limit).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{DEFAULT_LIMIT_TOKENS, Host};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-retrieval-limit");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// assert_eq!(host.retrieval_limit_tokens(), DEFAULT_LIMIT_TOKENS);
    /// let small = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .retrieval_limit_tokens(100)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(small.retrieval_limit_tokens(), 100);
    /// ```
    pub fn retrieval_limit_tokens(&self) -> usize {
        self.stage.retrieval_limit_tokens()
    }

    /// The most characters of one recovery call's answer in a proxy
    /// ([`crate::HostBuilder::recovery_max_chars`]; 0: no cap).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{DEFAULT_RECOVERY_MAX_CHARS, Host};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-recovery-max-chars");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// assert_eq!(host.recovery_max_chars(), DEFAULT_RECOVERY_MAX_CHARS);
    /// let capped = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .recovery_max_chars(8)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(capped.recovery_max_chars(), 8);
    /// ```
    pub fn recovery_max_chars(&self) -> usize {
        self.stage.recovery_max_chars()
    }

    /// The level a call runs at, highest rule first: the per-call `override_level`; a `status`
    /// other than `"success"` → `none` (errors are never compressed); the matched entry's
    /// level; `minimal`. Then `normal` and `aggressive` are capped to `minimal` when no tee
    /// store is configured.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::{Host, Level};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-level");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// // The core entry says `normal`, but there is no tee store.
    /// assert_eq!(host.effective_level("sql_query", "success", None), Level::Minimal);
    /// assert_eq!(host.effective_level("sql_query", "error", None), Level::None);
    /// ```
    pub fn effective_level(
        &self,
        tool: &str,
        status: impl Into<Status>,
        override_level: Option<Level>,
    ) -> Level {
        self.level_of(&self.resolve(tool), status.into(), override_level)
    }

    /// [`Host::effective_level`] for a tool already resolved.
    fn level_of(
        &self,
        resolution: &Resolution<'_>,
        status: Status,
        override_level: Option<Level>,
    ) -> Level {
        let level = match override_level {
            Some(level) => level,
            None if status == Status::Failure => Level::None,
            None => resolution.entry.map_or(Level::Minimal, |entry| entry.level),
        };
        self.cap(level)
    }

    fn cap(&self, level: Level) -> Level {
        if level.allows_loss() && self.tee.is_none() {
            Level::Minimal
        } else {
            level
        }
    }

    /// Which entry applies to `tool` and why: its source and key, the match kind, codec, level
    /// and effective level (for a successful call without override), and every entry that lost
    /// to it — same key in a lower-precedence source, or a weaker match.
    pub fn explain(&self, tool: &str) -> Explanation<'_> {
        let resolution = self.resolve(tool);
        let (shadowed, outranked) = self.table.lost_to(tool, &resolution);
        let routing = resolution
            .entry
            .and_then(ResolvedEntry::auto)
            .map(Auto::describe)
            .unwrap_or_default();
        let (codec, level) = match resolution.entry {
            Some(entry) => (entry.codec_name.clone(), entry.level),
            None => (String::new(), Level::Minimal),
        };
        Explanation {
            tool: tool.to_owned(),
            effective_level: self.cap(level),
            capped: self.cap(level) != level,
            resolution,
            codec,
            level,
            shadowed,
            outranked,
            routing,
        }
    }

    /// The entry that applies to `tool`: the exact key; else the matching glob with the
    /// longest pattern (ties: the earlier source, then the earlier entry); else `"*"`; else none.
    pub fn resolve(&self, tool: &str) -> Resolution<'_> {
        self.table.resolve(tool)
    }
}
