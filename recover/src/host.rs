//! The retrieval entry points on [`Host`]: the [`Recover`] extension trait.

use parrot_host::{Host, Level, Namespace, Outcome, Payload};

use crate::retrieve::Retriever;
use crate::{Retrieval, RetrieveError, Selector};

/// Retrieval from a [`Host`]'s tee store: the part of a stored original that a [`Selector`]
/// chooses, as the `recover` command prints it ([`Recover::recover_selected`]) and as a
/// proxy answers a model's call of the recovery tool ([`Recover::recover_for_model`]).
/// The exact original bytes are the host's own [`Host::recover`].
///
/// Implemented for [`Host`] only (the trait is sealed); bring it into scope with
/// `use parrot_recover::Recover` and call its methods on a host.
pub trait Recover: sealed::Sealed {
    /// The part of the original stored under `key` that `selector` selects, held to the
    /// retrieval size ([`parrot_host::HostBuilder::retrieval_limit_tokens`]) unless the
    /// selector gives `max_chars`; what each selector does and which combine is listed in the
    /// [crate documentation](crate). Rows are written as the entry of the key's tool writes a
    /// table at `minimal` (losslessly), or as compact JSON.
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
    /// use parrot_host::{Host, MemoryTeeStore, TeeStore};
    /// use parrot_recover::{Recover, Selector};
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
    fn recover_selected(&self, key: &str, selector: &Selector) -> Result<Retrieval, RetrieveError>;

    /// [`Recover::recover_selected`] of the original stored under `key` in `namespace` (see
    /// [`Host::recover_in`]); the retrieval's continuation, written as the command's
    /// arguments, names the namespace.
    ///
    /// # Errors
    ///
    /// As [`Recover::recover_selected`]: [`RetrieveError::NotFound`] for a key the namespace
    /// does not hold, whoever else holds it.
    fn recover_selected_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError>;

    /// [`Recover::recover_selected`] as a proxy answers a model's recovery call: the body held
    /// to [`parrot_host::HostBuilder::recovery_max_chars`] characters (default 200,000)
    /// whatever the selector asks, `max_chars: 0` included. An answer the cap cut has a note
    /// saying so (the cap, the characters of the part and of the original, how to get the
    /// rest) and, when there is more, the selector of the next part, which the cap holds
    /// alike.
    ///
    /// # Errors
    ///
    /// As [`Recover::recover_selected`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Host, MemoryTeeStore, TeeStore};
    /// use parrot_recover::{Recover, Selector};
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
    fn recover_for_model(&self, key: &str, selector: &Selector)
    -> Result<Retrieval, RetrieveError>;

    /// [`Recover::recover_for_model`] in `namespace`: what a proxy answers a model whose calls
    /// were processed in that namespace (`serve`: the request's API key's; `mcp-proxy`: the
    /// session's). A key another namespace holds is [`RetrieveError::NotFound`], the same
    /// answer as a key nobody holds, so a model cannot tell whose originals exist.
    ///
    /// # Errors
    ///
    /// As [`Recover::recover_selected`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use parrot_host::{Host, MemoryTeeStore, Namespace, TeeStore};
    /// use parrot_recover::{Recover, RetrieveError, Selector};
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
    fn recover_for_model_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError>;
}

impl Recover for Host {
    fn recover_selected(&self, key: &str, selector: &Selector) -> Result<Retrieval, RetrieveError> {
        retrieve(self, None, key, selector, 0)
    }

    fn recover_selected_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        retrieve(self, namespace, key, selector, 0)
    }

    fn recover_for_model(
        &self,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        self.recover_for_model_in(None, key, selector)
    }

    fn recover_for_model_in(
        &self,
        namespace: Option<&Namespace>,
        key: &str,
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        retrieve(self, namespace, key, selector, self.recovery_max_chars())
    }
}

mod sealed {
    /// Keeps [`super::Recover`] to [`parrot_host::Host`], so methods can be added to it.
    pub trait Sealed {}

    impl Sealed for parrot_host::Host {}
}

/// A retrieval from `host`'s store in `namespace`, with its body held to `cap_chars` (0: none).
fn retrieve(
    host: &Host,
    namespace: Option<&Namespace>,
    key: &str,
    selector: &Selector,
    cap_chars: usize,
) -> Result<Retrieval, RetrieveError> {
    let original = host
        .recover_in(namespace, key)?
        .ok_or_else(|| RetrieveError::NotFound {
            key: key.to_owned(),
        })?;
    let tool = tool_of(key);
    let codec = host
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
            host.registry().instantiate("columnar", params).ok()
        })
        .flatten();
    let table = |rows: &str| {
        lossless(
            host.compress(tool, Payload::json(rows), Level::Minimal)
                .ok(),
        )
        .or_else(|| {
            few_rows
                .as_ref()
                .and_then(|c| lossless(c.compress(Payload::json(rows), Level::Minimal).ok()))
        })
    };
    Retriever {
        limit_tokens: host.retrieval_limit_tokens(),
        cap_chars,
        namespace,
        counter: host.tokenizer(),
        table: &table,
    }
    .retrieve(key, &original, selector)
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
