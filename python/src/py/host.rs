//! `parrot_compress.Host`: the host in-process, set up as the command sets one up.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use parrot_host::{Call, Host, Input, Level, Namespace, Report, TokenCounter, Tokenizer};
use parrot_recover::{Recover, RetrieveError, Selector};
use parrot_setup::{Settings, SetupError};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString, PyTuple};

use super::BuildError;
use super::convert::{given, namespace_of, shown, to_json, to_python};

/// The host in-process: manifests, plugin packages, the tee store and the tokenizer, set up as
/// the `parrot-compress` command sets them up from the same settings.
///
/// `Host(project=".", plugins=(), tee_store=None, trust_project_plugins=False,
/// tokenizer="o200k", tee_lossless=False)`
///
/// - `project`: the project folder, whose `.parrot/compressors.toml` is read first.
/// - `plugins`: plugin package folders, in precedence order (the command's `--plugins`).
/// - `tee_store`: `None`, the project's `.parrot/tee.db` (created on first use); a path, a
///   SQLite file; a `redis://` URL; `False`, no store (lossy results go out uncompressed).
/// - `trust_project_plugins`: load the project's own packages, `.parrot/plugins`.
/// - `tokenizer`: `"o200k"` or `"cl100k"`, what tokens are counted with.
/// - `tee_lossless`: also keep the original of each lossless result that changed (what `serve`
///   does, so that an agent can quote a file's exact bytes).
///
/// Every problem found while setting up (a manifest entry, a missing plugin, a store URL that
/// cannot be used) raises one `BuildError`, whose `errors` are the lines the command prints.
/// With `PARROT_COMPRESSION_DISABLED=1` in the environment when the host is made, nothing is
/// read or loaded and every result passes through unchanged, as in the command.
///
/// The work of each method runs with the GIL released; one host is shared between threads. A
/// host made before a fork works in the forked processes (docs/CONTRACT.md §13.1).
#[pyclass(frozen, module = "parrot_compress", name = "Host")]
pub(crate) struct PyHost {
    /// `None` with the kill switch on.
    host: Option<Arc<Host>>,
    settings: Settings,
    /// With the kill switch on, the host that answers recoveries: the store alone, with the
    /// core configuration (the switch stops compression, not recovery; see `recovery_host`).
    recovery: OnceLock<Result<Arc<Host>, String>>,
    /// With the kill switch on, the host that expands: the settings' manifests and plugins,
    /// without a store (the switch stops compression, not expansion; see `expansion_host`).
    expansion: OnceLock<Result<Arc<Host>, Vec<String>>>,
}

/// The hosts of this process, flushed before a fork ([`before_fork`]).
///
/// Taken only with the GIL held and never across its release, so no thread holds it while
/// another forks (a fork happens on a thread that holds the GIL).
static HOSTS: Mutex<Vec<Weak<Host>>> = Mutex::new(Vec::new());

/// Adds `host` to [`HOSTS`], forgetting the hosts dropped since.
fn register(host: &Arc<Host>) {
    let mut hosts = HOSTS.lock().unwrap_or_else(|p| p.into_inner());
    hosts.retain(|host| host.strong_count() > 0);
    hosts.push(Arc::downgrade(host));
}

/// Run by `os.register_at_fork(before=…)`: waits until every host's token worker has counted
/// what it was given and told the savings report, so that its thread holds no lock when the
/// process forks (a lock held by a thread the child does not have would stay held there). The
/// child starts a worker of its own on its first call (`parrot_host`'s token worker). The GIL
/// stays held, so no Python thread starts a call meanwhile.
#[pyfunction]
pub(crate) fn before_fork() {
    let hosts: Vec<Arc<Host>> = HOSTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for host in hosts {
        host.flush();
    }
}

fn tokenizer_named(name: &str) -> Result<Tokenizer, String> {
    match name {
        "o200k" | "o200k_base" => Ok(Tokenizer::O200k),
        "cl100k" | "cl100k_base" => Ok(Tokenizer::Cl100k),
        other => Err(format!(
            "tokenizer \"{other}\": unknown (expected \"o200k\" or \"cl100k\")"
        )),
    }
}

/// A `BuildError` whose message is `lines`, one per line, and whose `errors` is their list.
fn build_error(py: Python<'_>, lines: Vec<String>) -> PyErr {
    let err = BuildError::new_err(lines.join("\n"));
    if let Err(failed) = err.value(py).setattr("errors", lines) {
        return failed;
    }
    err
}

fn setup_error(py: Python<'_>, err: SetupError) -> PyErr {
    match err {
        SetupError::Config(lines) => build_error(py, lines),
        other => build_error(py, vec![other.to_string()]),
    }
}

/// The plugin folders: a sequence of paths (a single path is refused: it is a sequence of
/// characters, not of folders).
fn plugin_folders(value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<PathBuf>> {
    let Some(value) = given(value) else {
        return Ok(Vec::new());
    };
    let refused = || {
        PyTypeError::new_err(format!(
            "plugins: expected a list of plugin package folders, got {}",
            shown(value)
        ))
    };
    if value.cast::<PyString>().is_ok() || value.cast::<PyBytes>().is_ok() {
        return Err(refused());
    }
    let mut folders = Vec::new();
    for item in value.try_iter().map_err(|_| refused())? {
        folders.push(item?.extract::<PathBuf>().map_err(|_| refused())?);
    }
    Ok(folders)
}

/// The tee store setting: `None` (the project's), `False` (none), or a path or URL.
fn store_setting(value: Option<&Bound<'_, PyAny>>, settings: &mut Settings) -> PyResult<()> {
    let Some(value) = given(value) else {
        return Ok(());
    };
    if let Ok(flag) = value.cast::<PyBool>() {
        if flag.is_true() {
            return Err(PyTypeError::new_err(
                "tee_store: True is not a store (give None for the project's, False for none, \
                 or a path or a redis:// URL)",
            ));
        }
        settings.no_tee = true;
        return Ok(());
    }
    settings.tee_store = Some(value.extract::<PathBuf>().map_err(|_| {
        PyTypeError::new_err("tee_store: expected None, False, a path or a redis:// URL")
    })?);
    Ok(())
}

/// A tool result as given: its bytes, and how to give the payload back.
enum Given<'py> {
    /// A `str`, encoded once to UTF-8.
    Str(Bound<'py, PyAny>, Bound<'py, PyBytes>),
    /// `bytes`.
    Bytes(Bound<'py, PyAny>),
    /// A Python value, serialized here.
    Value(String),
}

impl<'py> Given<'py> {
    fn of(result: &Bound<'py, PyAny>) -> PyResult<Given<'py>> {
        if let Ok(text) = result.cast::<PyString>() {
            return Ok(Given::Str(result.clone(), text.encode_utf8()?));
        }
        if result.cast::<PyBytes>().is_ok() {
            return Ok(Given::Bytes(result.clone()));
        }
        Ok(Given::Value(to_json(result)?))
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Given::Str(_, bytes) => bytes.as_bytes(),
            Given::Bytes(object) => object.cast::<PyBytes>().map_or(&[], |b| b.as_bytes()),
            Given::Value(text) => text.as_bytes(),
        }
    }

    /// The payload as the caller gets it back: the object it gave when nothing changed, else
    /// of the type it gave (`str` for a Python value).
    fn answer(&self, py: Python<'py>, changed: Option<Vec<u8>>) -> Bound<'py, PyAny> {
        match (self, changed) {
            (Given::Str(object, _), None) | (Given::Bytes(object), None) => object.clone(),
            (Given::Bytes(_), Some(bytes)) => PyBytes::new(py, &bytes).into_any(),
            (Given::Value(text), None) => PyString::new(py, text).into_any(),
            (_, Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => PyString::new(py, &text).into_any(),
                Err(err) => PyBytes::new(py, err.as_bytes()).into_any(),
            },
        }
    }
}

/// What `Host.compress` returns: the payload the model would see, and the call's metadata (the
/// members the command's `--meta` prints). Unpacks as `payload, meta`.
#[pyclass(frozen, module = "parrot_compress", name = "Compressed")]
pub(crate) struct Compressed {
    /// The payload: the result itself when nothing changed; `str` for a `str` or a Python
    /// value, `bytes` for `bytes`.
    #[pyo3(get)]
    payload: Py<PyAny>,
    /// The call's metadata, as a dict.
    #[pyo3(get)]
    meta: Py<PyAny>,
}

#[pymethods]
impl Compressed {
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(
            PyTuple::new(py, [self.payload.clone_ref(py), self.meta.clone_ref(py)])?
                .try_iter()?
                .into_any(),
        )
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Compressed(payload={}, meta={})",
            self.payload.bind(py).repr()?,
            self.meta.bind(py).repr()?
        ))
    }
}

/// A selector's count (`context`, `max_chars`): a non-negative int, one too large for the
/// machine's word reading as the largest (as the command's arguments do).
fn count(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(value) = given(value) else {
        return Ok(None);
    };
    let bad = || {
        PyValueError::new_err(format!(
            "selector \"{name}\": expected a non-negative integer, got {}",
            shown(value)
        ))
    };
    if value.cast::<PyBool>().is_ok() {
        return Err(bad());
    }
    let number: i128 = match value.extract::<i128>() {
        Ok(number) => number,
        Err(_) if value.extract::<u128>().is_ok() => i128::MAX,
        Err(_) if value.gt(0).unwrap_or(false) => i128::MAX,
        Err(_) => return Err(bad()),
    };
    if number < 0 {
        return Err(bad());
    }
    Ok(Some(usize::try_from(number).unwrap_or(usize::MAX)))
}

/// A selector's range (`lines`, `rows`): as the command takes it (`"40-59"`, `"-10"`), or an
/// int for one line or row.
fn range(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(value) = given(value) else {
        return Ok(None);
    };
    if let Ok(text) = value.extract::<String>() {
        return Ok(Some(text));
    }
    if value.cast::<PyBool>().is_err()
        && let Ok(number) = value.extract::<u64>()
    {
        return Ok(Some(number.to_string()));
    }
    Err(PyValueError::new_err(format!(
        "selector \"{name}\": expected a str such as \"40-59\" or a non-negative int"
    )))
}

impl PyHost {
    /// The host that answers recoveries: the host itself, or with the kill switch on, one of
    /// the core configuration over the settings' store (opened on first use).
    pub(crate) fn recovery_host(&self) -> PyResult<Arc<Host>> {
        if let Some(host) = &self.host {
            return Ok(host.clone());
        }
        let made = self.recovery.get_or_init(|| {
            let store = parrot_setup::store_only(&self.settings)
                .map_err(|err| err.to_string())?
                .shared();
            Host::builder()
                .core_only()
                .tokenizer(Arc::new(self.settings.tokenizer))
                .kill_switch(Some(false))
                .tee_store(store)
                .build()
                .map(Arc::new)
                .map_err(|err| err.to_string())
        });
        made.clone().map_err(PyRuntimeError::new_err)
    }

    pub(crate) fn host(&self) -> Option<&Arc<Host>> {
        self.host.as_ref()
    }

    /// The host that expands: the host itself, or with the kill switch on, one built from the
    /// settings on first use, as the command's `expand` builds one (no store opened).
    fn expansion_host(&self) -> Result<Arc<Host>, Vec<String>> {
        if let Some(host) = &self.host {
            return Ok(host.clone());
        }
        let made = self.expansion.get_or_init(|| {
            parrot_setup::builder(&self.settings, false, None)
                .and_then(|mut builder| parrot_setup::build(&mut builder))
                .map(Arc::new)
                .map_err(|err| match err {
                    SetupError::Config(lines) => lines,
                    other => vec![other.to_string()],
                })
        });
        made.clone()
    }
}

/// The text of a payload given as `str` or `bytes` (UTF-8: a codec's output is text).
fn payload_text<'a>(payload: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    if let Ok(text) = payload.cast::<PyString>() {
        return text.to_cow();
    }
    if let Ok(bytes) = payload.cast::<PyBytes>() {
        return match std::str::from_utf8(bytes.as_bytes()) {
            Ok(text) => Ok(Cow::Borrowed(text)),
            Err(err) => Err(PyValueError::new_err(format!(
                "payload: not UTF-8 at byte {}: a codec's output is text, so no codec wrote this",
                err.valid_up_to()
            ))),
        };
    }
    Err(PyTypeError::new_err(format!(
        "payload: expected str or bytes, got {}",
        shown(payload)
    )))
}

fn retrieve_error(
    err: RetrieveError,
    host: &Host,
    namespace: Option<&Namespace>,
    key: &str,
) -> PyErr {
    match err {
        RetrieveError::NotFound { .. } => match host.tee_store() {
            Some(store) => PyKeyError::new_err(parrot_setup::not_found(store, namespace, key)),
            None => PyKeyError::new_err(err.to_string()),
        },
        err @ RetrieveError::Selector { .. } => PyValueError::new_err(err.to_string()),
        err => PyRuntimeError::new_err(err.to_string()),
    }
}

#[pymethods]
impl PyHost {
    #[new]
    #[pyo3(signature = (
        project = None,
        plugins = None,
        tee_store = None,
        trust_project_plugins = false,
        tokenizer = "o200k",
        tee_lossless = false,
    ))]
    fn new(
        py: Python<'_>,
        project: Option<PathBuf>,
        plugins: Option<&Bound<'_, PyAny>>,
        tee_store: Option<&Bound<'_, PyAny>>,
        trust_project_plugins: bool,
        tokenizer: &str,
        tee_lossless: bool,
    ) -> PyResult<PyHost> {
        let mut settings = Settings {
            project,
            plugins: plugin_folders(plugins)?,
            trust_project_plugins,
            tokenizer: tokenizer_named(tokenizer).map_err(|err| build_error(py, vec![err]))?,
            ..Settings::default()
        };
        store_setting(tee_store, &mut settings)?;
        if parrot_setup::killed() {
            return Ok(PyHost {
                host: None,
                settings,
                recovery: OnceLock::new(),
                expansion: OnceLock::new(),
            });
        }
        let host = py.detach(|| {
            let mut builder = parrot_setup::builder(&settings, true, None)?;
            builder.tee_lossless(tee_lossless && !settings.no_tee);
            parrot_setup::build(&mut builder)
        });
        let host = Arc::new(host.map_err(|err| setup_error(py, err))?);
        register(&host);
        Ok(PyHost {
            host: Some(host),
            settings,
            recovery: OnceLock::new(),
            expansion: OnceLock::new(),
        })
    }

    /// Whether the kill switch was on when this host was made: every result passes through.
    #[getter]
    fn killed(&self) -> bool {
        self.host.is_none()
    }

    /// The project folder.
    #[getter]
    fn project(&self) -> PathBuf {
        match &self.host {
            Some(host) => host.project().to_path_buf(),
            None => self.settings.project_dir(),
        }
    }

    /// One tool result through the pipeline: `compress(tool, result, status="success",
    /// level=None, namespace=None)`.
    ///
    /// `result` is a `str`, `bytes`, or a Python value (`dict`, `list`, …) serialized once, as
    /// compact JSON. `status` other than `"success"` passes the result through (and stores
    /// it). `level` (`"none"`, `"minimal"`, `"normal"`, `"aggressive"`) overrides the entry's.
    /// `namespace` stores the original under that namespace (only recoveries in it find it).
    ///
    /// Returns a `Compressed`: `payload` (the result itself when nothing changed) and `meta`
    /// (the command's `--meta` members, as a dict).
    #[pyo3(signature = (tool, result, status = "success", level = None, namespace = None))]
    fn compress(
        &self,
        py: Python<'_>,
        tool: &str,
        result: &Bound<'_, PyAny>,
        status: &str,
        level: Option<&str>,
        namespace: Option<&str>,
    ) -> PyResult<Compressed> {
        let level = level
            .map(|level| level.parse::<Level>())
            .transpose()
            .map_err(|err| PyValueError::new_err(format!("level: {err}")))?;
        let namespace = namespace_of(namespace)?;
        let given = Given::of(result)?;
        let bytes = given.bytes();
        let Some(host) = &self.host else {
            let meta = parrot_setup::killed_meta(bytes.len()).to_json();
            return Ok(Compressed {
                payload: given.answer(py, None).unbind(),
                meta: to_python(py, &meta)?.unbind(),
            });
        };
        let (changed, meta) = py.detach(|| {
            let input = match std::str::from_utf8(bytes) {
                Ok(text) => Input::Text(text),
                Err(_) => Input::Bytes(bytes),
            };
            let mut call = Call::new(tool, input)
                .status(status)
                .namespace(namespace.as_ref());
            call.level = level;
            let processed = host.process(call);
            let meta = processed.meta_json();
            let changed = match processed.payload {
                Cow::Borrowed(_) => None,
                Cow::Owned(bytes) => Some(bytes),
            };
            (changed, meta)
        });
        Ok(Compressed {
            payload: given.answer(py, changed).unbind(),
            meta: to_python(py, &meta)?.unbind(),
        })
    }

    /// An original from the tee store: `recover(key, *, lines=None, grep=None, context=None,
    /// pointer=None, rows=None, max_chars=None, namespace=None)`.
    ///
    /// Without a selector, the exact original bytes (`bytes`). With one, the part it selects,
    /// as the recovery tool answers it (`str`: a header line, the part, and a `[more: …]` line
    /// naming the selector of the next part when it was cut). The selectors are the recovery
    /// tool's (`lines="118-1330"`, `grep="^error"` with `context=2`, `pointer="/rows/17"`,
    /// `rows="40-59"`, `max_chars=…`). Raises `KeyError` for a key the store does not hold
    /// (naming the nearest one it holds), and for a key written `"alice/KEY"` without
    /// `namespace=` (a namespace's originals are read with `namespace="alice"`), `ValueError`
    /// for a bad selector.
    #[pyo3(signature = (
        key, *, lines = None, grep = None, context = None, pointer = None, rows = None,
        max_chars = None, namespace = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn recover<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        lines: Option<&Bound<'py, PyAny>>,
        grep: Option<String>,
        context: Option<&Bound<'py, PyAny>>,
        pointer: Option<String>,
        rows: Option<&Bound<'py, PyAny>>,
        max_chars: Option<&Bound<'py, PyAny>>,
        namespace: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let selector = Selector {
            lines: range("lines", lines)?,
            grep,
            context: count("context", context)?,
            pointer,
            rows: range("rows", rows)?,
            max_chars: count("max_chars", max_chars)?,
        };
        let namespace = namespace_of(namespace)?;
        let host = py.detach(|| self.recovery_host())?;
        if selector.is_empty() {
            let original = py
                .detach(|| host.recover_in(namespace.as_ref(), key))
                .map_err(|err| PyRuntimeError::new_err(err.to_string()))?;
            return match original {
                Some(bytes) => Ok(PyBytes::new(py, &bytes).into_any()),
                None => Err(retrieve_error(
                    RetrieveError::NotFound {
                        key: key.to_owned(),
                    },
                    &host,
                    namespace.as_ref(),
                    key,
                )),
            };
        }
        let retrieval = py
            .detach(|| host.recover_selected_in(namespace.as_ref(), key, &selector))
            .map_err(|err| retrieve_error(err, &host, namespace.as_ref(), key))?;
        Ok(PyString::new(py, &retrieval.text()).into_any())
    }

    /// The original a codec's output was made from, through the codec's inverse (the
    /// command's `expand --codec CODEC`): `expand(codec, payload) -> str`.
    ///
    /// `payload` (`str` or `bytes`) is codec `codec`'s output as the codec wrote it or as
    /// `compress` returned it: a tee pointer of reason `"lossless"` is taken off. The original
    /// comes back as a `str`: the same JSON value for a JSON codec, the same text for a text
    /// codec. Raises `ValueError` with the command's message for an unknown codec, `"auto"`
    /// (name the payload's `compression_codec`), a codec without an inverse, a lossy output
    /// (the message gives the key, which `recover` takes) and a payload the codec did not
    /// write; `BuildError` when, with the kill switch on, the settings do not build.
    fn expand(&self, py: Python<'_>, codec: &str, payload: &Bound<'_, PyAny>) -> PyResult<String> {
        let text = payload_text(payload)?;
        let host = py
            .detach(|| self.expansion_host())
            .map_err(|lines| build_error(py, lines))?;
        py.detach(|| host.expand(codec, &text))
            .map_err(|err| PyValueError::new_err(err.to_string()))
    }

    /// The savings report so far, as a dict (the command's `replay --json`): one row per tool,
    /// the total, the tokenizer.
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let snapshot = py.detach(|| self.snapshot());
        to_python(py, &snapshot.to_json())
    }

    /// The savings report so far, as the command's text table.
    fn report_table(&self, py: Python<'_>) -> String {
        py.detach(|| self.snapshot().render_table())
    }

    /// Which manifest entry applies to `tool`, its codec and level, and why (the command's
    /// `explain TOOL`).
    fn explain(&self, tool: &str) -> String {
        match &self.host {
            Some(host) => host.explain(tool).to_string(),
            None => format!(
                "{tool}: the kill switch is on (PARROT_COMPRESSION_DISABLED=1): no manifest is \
                 read and every result passes through unchanged\n"
            ),
        }
    }

    /// A whole request body's tool results through the pipeline, as `serve` rewrites them:
    /// `compress_request(body, api="anthropic", *, namespace=None, recovery_tool=True)`.
    ///
    /// `body` is the request as it will be sent (`bytes` or `str`; the rewrite comes back as
    /// the same type), `api` one of `"anthropic"` (Messages), `"openai-chat"` (Chat
    /// Completions), `"openai-responses"` (Responses). Each tool result's text is replaced by
    /// what the pipeline makes of it, in place; every other byte is the body's. Results marked
    /// as errors, and results of calls the body does not hold, are not compressed. With
    /// `recovery_tool` (and a tee store), the recovery tool `wm_get_result` is appended to
    /// `tools` when the body defines tools or a result now carries a `_tee` pointer, as `serve`
    /// offers it; answer its calls with `answer_recovery`. Raises `ValueError` naming the place
    /// in the body that is not the API's request.
    #[pyo3(signature = (body, api = "anthropic", *, namespace = None, recovery_tool = true))]
    fn compress_request(
        &self,
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
        api: &str,
        namespace: Option<&str>,
        recovery_tool: bool,
    ) -> PyResult<super::request::RequestRewrite> {
        super::request::compress_request(self.host(), py, body, api, namespace, recovery_tool)
    }

    /// Answers one call of the recovery tool `wm_get_result`:
    /// `answer_recovery(arguments, *, namespace=None) -> (text, is_error)`.
    ///
    /// `arguments` are the call's, as a dict or as the JSON text the model wrote. The text is
    /// the tool result to send back (the retrieval, held to the host's cap on one answer), or,
    /// with `is_error` true, what was wrong (an unknown key, a key of another namespace, a
    /// bad selector).
    #[pyo3(signature = (arguments, *, namespace = None))]
    fn answer_recovery(
        &self,
        py: Python<'_>,
        arguments: &Bound<'_, PyAny>,
        namespace: Option<&str>,
    ) -> PyResult<(String, bool)> {
        let host = self.recovery_host()?;
        super::request::answer_recovery(&host, py, arguments, namespace)
    }

    fn __repr__(&self) -> String {
        format!(
            "Host(project={:?}, killed={})",
            self.project().display().to_string(),
            if self.host.is_none() { "True" } else { "False" }
        )
    }
}

impl PyHost {
    fn snapshot(&self) -> parrot_host::ReportSnapshot {
        match &self.host {
            Some(host) => {
                host.flush();
                host.report().snapshot()
            }
            None => Report::new(self.settings.tokenizer.name()).snapshot(),
        }
    }
}
