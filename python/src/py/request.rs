//! Whole requests: `Host.compress_request`, the rewrite `serve` makes of a request body, and
//! the recovery tool offered in it (`recovery_tool`, `Host.answer_recovery`).

use std::borrow::Cow;

use parrot_serve::llm::{self, Api};
use parrot_serve::recovery;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use serde_json::{Value, json};

use std::sync::Arc;

use parrot_host::Host;

use super::convert::{namespace_of, to_python};

/// The API a name given from Python names ([`Api::short_name`]).
fn api_named(name: &str) -> PyResult<Api> {
    Api::from_short_name(name).ok_or_else(|| {
        let names: Vec<String> = Api::ALL
            .iter()
            .map(|api| format!("\"{}\"", api.short_name()))
            .collect();
        let known = match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        PyValueError::new_err(format!("api \"{name}\": unknown (expected {known})"))
    })
}

/// What `Host.compress_request` returns.
#[pyclass(frozen, module = "parrot_compress", name = "RequestRewrite")]
pub(crate) struct RequestRewrite {
    /// The body to send: the one given (the same object) when nothing changed.
    #[pyo3(get)]
    body: Py<PyAny>,
    /// Each result replaced, in the body's order: `tool`, `path` (where it is in the body),
    /// `codec`, `bytes_before`, `bytes_after`, `tee_key`.
    #[pyo3(get)]
    replaced: Py<PyList>,
    /// How many results were found (`seen`), `compressed`, marked as `errors`, and of
    /// `unknown` calls.
    #[pyo3(get)]
    counts: Py<PyDict>,
    /// Whether `wm_get_result` was added to the body's tools.
    #[pyo3(get)]
    recovery_tool: bool,
}

#[pymethods]
impl RequestRewrite {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "RequestRewrite(counts={}, recovery_tool={})",
            self.counts.bind(py).repr()?,
            if self.recovery_tool { "True" } else { "False" }
        ))
    }
}

/// The body's bytes, and whether it was a `str`.
fn body_bytes<'py>(body: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyBytes>, bool)> {
    if let Ok(text) = body.cast::<PyString>() {
        return Ok((text.encode_utf8()?, true));
    }
    if let Ok(bytes) = body.cast::<PyBytes>() {
        return Ok((bytes.clone(), false));
    }
    Err(PyTypeError::new_err(format!(
        "body: expected bytes or str (the request as it will be sent), got {}",
        body.get_type().name()?
    )))
}

/// What the rewrite made of a body: the new body (`None`: unchanged), the replaced results,
/// the counts, and whether the tool was added.
type Rewritten = (Option<Vec<u8>>, Vec<Value>, Value, bool);

/// `Host.compress_request` of `host` (`None`: the kill switch is on).
pub(crate) fn compress_request(
    host: Option<&Arc<Host>>,
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    api: &str,
    namespace: Option<&str>,
    offer_tool: bool,
) -> PyResult<RequestRewrite> {
    let api = api_named(api)?;
    let namespace = namespace_of(namespace)?;
    let (bytes, was_text) = body_bytes(body)?;
    let (new, replaced, counts, added): Rewritten = match host {
        None => (
            None,
            Vec::new(),
            counts_json(&llm::Counts::default()),
            false,
        ),
        Some(host) => {
            let data = bytes.as_bytes();
            py.detach(|| -> Result<Rewritten, String> {
                let rewrite = llm::rewrite_in(api, data, host, namespace.as_ref())
                    .map_err(|err| err.to_string())?;
                let pointed = rewrite.pointed();
                let replaced = rewrite.replaced.iter().map(replaced_json).collect();
                let counts = counts_json(&rewrite.counts);
                let body = rewrite.body;
                let offered = offer_tool
                    && host.tee_store().is_some()
                    && (pointed || recovery::has_tools(&body));
                let with_tool = if offered {
                    recovery::add_tool(api, &body)
                        .map_err(|err| format!("{} not added: {err}", recovery::RECOVERY_TOOL))?
                } else {
                    None
                };
                let added = with_tool.is_some();
                let new = match (with_tool, body) {
                    (Some(with_tool), _) => Some(with_tool),
                    (None, Cow::Owned(body)) => Some(body),
                    (None, Cow::Borrowed(_)) => None,
                };
                Ok((new, replaced, counts, added))
            })
            .map_err(PyValueError::new_err)?
        }
    };
    let body = match new {
        None => body.clone(),
        Some(new) if was_text => match String::from_utf8(new) {
            Ok(text) => PyString::new(py, &text).into_any(),
            Err(err) => PyBytes::new(py, err.as_bytes()).into_any(),
        },
        Some(new) => PyBytes::new(py, &new).into_any(),
    };
    let list = PyList::empty(py);
    for item in &replaced {
        list.append(to_python(py, item)?)?;
    }
    Ok(RequestRewrite {
        body: body.unbind(),
        replaced: list.unbind(),
        counts: to_python(py, &counts)?.cast_into::<PyDict>()?.unbind(),
        recovery_tool: added,
    })
}

fn replaced_json(replaced: &llm::Replaced) -> Value {
    json!({
        "tool": replaced.tool,
        "path": replaced.path,
        "codec": replaced.codec,
        "bytes_before": replaced.bytes_before,
        "bytes_after": replaced.bytes_after,
        "tee_key": replaced.tee_key,
    })
}

fn counts_json(counts: &llm::Counts) -> Value {
    json!({
        "seen": counts.seen,
        "compressed": counts.compressed,
        "errors": counts.errors,
        "unknown": counts.unknown,
    })
}

/// `Host.answer_recovery`, answered from `host`'s tee store.
pub(crate) fn answer_recovery(
    host: &Host,
    py: Python<'_>,
    arguments: &Bound<'_, PyAny>,
    namespace: Option<&str>,
) -> PyResult<(String, bool)> {
    let namespace = namespace_of(namespace)?;
    let text = if let Ok(text) = arguments.cast::<PyString>() {
        text.to_cow()?.into_owned()
    } else if arguments.cast::<PyDict>().is_ok() {
        super::convert::to_json(arguments)?
    } else {
        return Err(PyTypeError::new_err(format!(
            "arguments: expected a dict or its JSON text, got {}",
            arguments.get_type().name()?
        )));
    };
    let answer = py.detach(|| {
        let arguments = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        };
        let call = recovery::Call {
            id: String::new(),
            arguments,
        };
        recovery::answer(host, namespace.as_ref(), &call)
    });
    Ok((answer.text, answer.is_error))
}

/// The recovery tool `wm_get_result` in `api`'s format, as a dict: what `compress_request`
/// appends to a request's `tools`. `recovery_tool(api="anthropic")`.
#[pyfunction]
#[pyo3(signature = (api = "anthropic"))]
pub(crate) fn recovery_tool<'py>(py: Python<'py>, api: &str) -> PyResult<Bound<'py, PyAny>> {
    let definition: Value = serde_json::from_str(recovery::definition(api_named(api)?))
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    to_python(py, &definition)
}
