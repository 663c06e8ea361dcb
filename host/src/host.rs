//! The built host: its sources, registry and entries, and the calls it serves —
//! [`Host::process`] (through the pipeline), [`Host::compress`], [`Host::recover`],
//! [`Host::resolve`] and [`Host::explain`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parrot_codec_api::{Level, Outcome, Payload};

use crate::auto::Auto;
#[cfg(feature = "tokio")]
use crate::budget::Router;
use crate::call::{Call, Processed, Skip, Status};
#[cfg(feature = "tokio")]
use crate::call::{OwnedCall, OwnedInput};
use crate::discovery::SourceInfo;
use crate::entries::{EntryTable, Resolution, ResolvedEntry};
use crate::error::{CompressError, RetrieveError, TeeError};
use crate::explain::Explanation;
use crate::pipeline::{self, Run, Stage};
use crate::registry::Registry;
use crate::report::Report;
use crate::retrieve::{Retrieval, Retriever, Selector};
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
    /// `payload` at `level`, exactly as given: no level capping, no size rules, no tee.
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
        let codec = entry.codec();
        codec
            .compress(payload, level)
            .map_err(|source| CompressError {
                tool: tool.to_owned(),
                codec: codec.name().to_owned(),
                source: Box::new(source),
            })
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

    /// The async entry point: a payload at or over the router's thresholds runs on tokio's
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
                OwnedInput::Text(text) => Router::rows_reach(text, budgets.row_threshold),
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
    /// namespace's.
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
    /// let host = Host::builder().project(&dir).plugin_path(None).tee_store(store).build().unwrap();
    /// let team = Namespace::new("team").unwrap();
    /// assert_eq!(host.recover_in(Some(&team), "k").unwrap().as_deref(), Some(&b"theirs"[..]));
    /// assert_eq!(host.recover("k").unwrap(), None);
    /// ```
    pub fn recover_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
    ) -> Result<Option<Vec<u8>>, TeeError> {
        match (&self.tee, namespace) {
            (Some(tee), Some(namespace)) => tee.get(&namespace.scoped_key(key)),
            (Some(tee), None) => tee.get(key),
            (None, _) => Err(TeeError::NotConfigured),
        }
    }

    /// The part of the original stored under `key` that `selector` selects, held to the
    /// retrieval size ([`crate::HostBuilder::retrieval_limit_tokens`]) unless the selector
    /// gives `max_chars`; what each selector does and which combine is listed in
    /// [`crate::retrieve`]. Rows are written as the entry of the key's tool
    /// writes a table at `minimal` (losslessly), or as compact JSON.
    ///
    /// [`Retrieval::text`] is the text `wm_get_result` returns: a header naming the key and
    /// the selector, the part, and the selector of the next part when it was cut.
    ///
    /// # Errors
    ///
    /// [`RetrieveError::Selector`] naming the selector that is bad;
    /// [`RetrieveError::NotFound`]; [`RetrieveError::Tee`] when no store is configured or it
    /// fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Host, MemoryTeeStore, Selector, TeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-recover-selected");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let store = Arc::new(MemoryTeeStore::default());
    /// store.put("k", b"one\ntwo\nthree\nfour\n").unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).tee_store(store).build().unwrap();
    ///
    /// let selector = Selector { lines: Some("2-3".into()), ..Selector::default() };
    /// let part = host.recover_selected("k", &selector).unwrap();
    /// assert_eq!(part.body, "two\nthree\n");
    /// assert_eq!(part.text(), "[wm_get_result {\"key\":\"k\",\"lines\":\"2-3\"}]\ntwo\nthree\n");
    ///
    /// let selector = Selector { lines: Some("2-".into()), max_chars: Some(4), ..Selector::default() };
    /// let part = host.recover_selected("k", &selector).unwrap();
    /// assert_eq!(part.body, "two\n");
    /// assert_eq!(part.next.unwrap().lines.as_deref(), Some("3-"));
    ///
    /// let selector = Selector { pointer: Some("/a".into()), ..Selector::default() };
    /// let err = host.recover_selected("k", &selector).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "selector \"pointer\": the original is text, not JSON (4 lines): use lines or grep"
    /// );
    /// ```
    pub fn recover_selected(
        &self,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        self.retrieve(None, key, selector, 0)
    }

    /// [`Host::recover_selected`] of the original stored under `key` in `namespace` (see
    /// [`Host::recover_in`]); the retrieval's continuation, written as the command's
    /// arguments, names the namespace.
    ///
    /// # Errors
    ///
    /// As [`Host::recover_selected`]: [`RetrieveError::NotFound`] for a key the namespace
    /// does not hold, whoever else holds it.
    pub fn recover_selected_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        self.retrieve(namespace, key, selector, 0)
    }

    /// [`Host::recover_selected`] as a proxy answers a model's recovery call: the body held to
    /// [`crate::HostBuilder::recovery_max_chars`] characters (default 200,000) whatever the
    /// selector asks, `max_chars: 0` included. An answer the cap cut has a note saying so
    /// (the cap, the characters of the part and of the original, how to get the rest) and,
    /// when there is more, the selector of the next part, which the cap holds alike.
    ///
    /// # Errors
    ///
    /// As [`Host::recover_selected`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Host, MemoryTeeStore, Selector, TeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-recover-for-model");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let store = Arc::new(MemoryTeeStore::default());
    /// store.put("k", b"one\ntwo\nthree\nfour\n").unwrap();
    /// let host = Host::builder()
    ///     .project(&dir)
    ///     .plugin_path(None)
    ///     .tee_store(store)
    ///     .recovery_max_chars(8)
    ///     .build()
    ///     .unwrap();
    ///
    /// let everything = Selector { lines: Some("1-".into()), max_chars: Some(0), ..Selector::default() };
    /// let part = host.recover_for_model("k", &everything).unwrap();
    /// assert_eq!(part.body, "one\ntwo\n");
    /// assert!(part.notes[0].starts_with("capped: one answer here holds at most 8 characters"));
    /// assert_eq!(part.next.unwrap().lines.as_deref(), Some("3-"));
    /// // The command's retrieval is not capped.
    /// assert_eq!(host.recover_selected("k", &everything).unwrap().body, "one\ntwo\nthree\nfour\n");
    /// ```
    pub fn recover_for_model(
        &self,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        self.recover_for_model_in(None, key, selector)
    }

    /// [`Host::recover_for_model`] in `namespace`: what a proxy answers a model whose calls
    /// were processed in that namespace (`serve`: the request's API key's; `mcp-proxy`: the
    /// session's). A key another namespace holds is [`RetrieveError::NotFound`], the same
    /// answer as a key nobody holds, so a model cannot tell whose originals exist.
    ///
    /// # Errors
    ///
    /// As [`Host::recover_selected`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Host, MemoryTeeStore, Namespace, RetrieveError, Selector, TeeStore};
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-recover-for-model-in");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let store = Arc::new(MemoryTeeStore::default());
    /// let alice = Namespace::of_secret(b"alice's API key");
    /// store.put(&alice.scoped_key("k"), b"alice's original\n").unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).tee_store(store).build().unwrap();
    ///
    /// let whole = Selector::default();
    /// let part = host.recover_for_model_in(Some(&alice), "k", &whole).unwrap();
    /// assert_eq!(part.text(), "[wm_get_result {\"key\":\"k\"}]\nalice's original\n");
    /// let bob = Namespace::of_secret(b"bob's API key");
    /// let err = host.recover_for_model_in(Some(&bob), "k", &whole).unwrap_err();
    /// assert_eq!(err.to_string(), "no original is stored under \"k\"");
    /// assert!(matches!(host.recover_for_model("k", &whole), Err(RetrieveError::NotFound { .. })));
    /// ```
    pub fn recover_for_model_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        self.retrieve(namespace, key, selector, self.stage.recovery_max_chars())
    }

    /// A retrieval in `namespace` with its body held to `cap_chars` (0: none).
    fn retrieve(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
        selector: &Selector,
        cap_chars: usize,
    ) -> Result<Retrieval, RetrieveError> {
        let original = self
            .recover_in(namespace, key)?
            .ok_or_else(|| RetrieveError::NotFound {
                key: key.to_owned(),
            })?;
        let tool = tool_of(key);
        let codec = self
            .resolve(tool)
            .entry
            .map_or_else(String::new, |e| e.codec_name.clone());
        // `columnar` keeps a few rows as they are (its `min_rows`); a slice of a table it
        // wrote is still written as one.
        let few_rows = (codec == "columnar")
            .then(|| {
                let params = serde_json::json!({"min_rows": 1});
                let serde_json::Value::Object(params) = params else {
                    return None;
                };
                self.registry.instantiate("columnar", params).ok()
            })
            .flatten();
        let table = |rows: &str| {
            lossless(
                self.compress(tool, Payload::json(rows), Level::Minimal)
                    .ok(),
            )
            .or_else(|| {
                few_rows
                    .as_ref()
                    .and_then(|c| lossless(c.compress(Payload::json(rows), Level::Minimal).ok()))
            })
        };
        Retriever {
            limit_tokens: self.stage.retrieval_limit_tokens(),
            cap_chars,
            namespace,
            counter: self.stage.gauge().counter(),
            table: &table,
        }
        .retrieve(key, &original, selector)
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

/// The tool a tee key names (`__tee__:<tool>:…`), or the whole key when it names none: the
/// entry that applies to it writes the rows of a retrieval.
fn tool_of(key: &str) -> &str {
    key.strip_prefix("__tee__:")
        .and_then(|rest| rest.split(':').next())
        .unwrap_or(key)
}

/// The payload of a lossless outcome.
fn lossless(outcome: Option<Outcome>) -> Option<String> {
    match outcome {
        Some(Outcome::Changed {
            payload,
            lossy: false,
        }) => Some(payload),
        _ => None,
    }
}
