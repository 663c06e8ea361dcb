//! Values between Python and JSON: a tool result given as a Python value serialized once, in
//! Rust, and the host's JSON (metadata, the report, a tool definition) as Python values.

use parrot_host::Namespace;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// How deep a Python value may nest: the host's own limit on JSON ([`parrot_json::MAX_DEPTH`]),
/// which a value nested deeper could not pass anyway; it also ends a value that holds itself.
const MAX_DEPTH: usize = parrot_json::MAX_DEPTH;

/// `value` as compact JSON, the way `json.dumps(value, separators=(",", ":"),
/// ensure_ascii=False, allow_nan=False)` writes it: `dict` (and its subclasses) with `str` keys,
/// `list` and `tuple`, `str`, `int` of any size, `float` (its `repr`), `bool` and `None`.
///
/// # Errors
///
/// `TypeError` for any other type or a key that is not a `str`, `ValueError` for a float that
/// is not finite or a value nested deeper than the host reads; each names where, as a path from
/// the top (`result["rows"][3]["at"]`).
pub(crate) fn to_json(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut out = String::new();
    let mut path = Vec::new();
    write(value, &mut out, &mut path)?;
    Ok(out)
}

/// A step of the path to a value, for errors.
enum Step {
    Key(String),
    Index(usize),
}

fn at(path: &[Step]) -> String {
    let mut text = "result".to_owned();
    for step in path {
        match step {
            Step::Key(key) => text.push_str(&format!("[{key:?}]")),
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

fn write(value: &Bound<'_, PyAny>, out: &mut String, path: &mut Vec<Step>) -> PyResult<()> {
    if path.len() > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "{}: nested deeper than {MAX_DEPTH} levels (or holds itself)",
            at(path)
        )));
    }
    if value.is_none() {
        out.push_str("null");
    } else if let Ok(flag) = value.cast::<PyBool>() {
        out.push_str(if flag.is_true() { "true" } else { "false" });
    } else if let Ok(text) = value.cast::<PyString>() {
        parrot_json::write_string(&text.to_cow()?, out);
    } else if value.is_instance_of::<PyInt>() {
        match value.extract::<i64>() {
            Ok(small) => out.push_str(&small.to_string()),
            Err(_) => out.push_str(&value.str()?.to_cow()?),
        }
    } else if let Ok(float) = value.cast::<PyFloat>() {
        let number = float.value();
        if !number.is_finite() {
            return Err(PyValueError::new_err(format!(
                "{}: {number} is not a JSON number",
                at(path)
            )));
        }
        out.push_str(&float.repr()?.to_cow()?);
    } else if let Ok(dict) = value.cast::<PyDict>() {
        write_dict(dict, out, path)?;
    } else if let Ok(list) = value.cast::<PyList>() {
        write_items(list.iter(), out, path)?;
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        write_items(tuple.iter(), out, path)?;
    } else if path.is_empty() {
        return Err(PyTypeError::new_err(format!(
            "result: a {} is not a tool result (give str, bytes, or a JSON value: dict, list, \
             tuple, int, float, bool or None)",
            value.get_type().name()?
        )));
    } else {
        return Err(PyTypeError::new_err(format!(
            "{}: a {} is not JSON (give dict, list, tuple, str, int, float, bool or None; \
             convert other values first)",
            at(path),
            value.get_type().name()?
        )));
    }
    Ok(())
}

fn write_dict(dict: &Bound<'_, PyDict>, out: &mut String, path: &mut Vec<Step>) -> PyResult<()> {
    out.push('{');
    for (n, (key, item)) in dict.iter().enumerate() {
        let Ok(key) = key.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!(
                "{}: the key {} is a {}, not a str",
                at(path),
                key.repr()?,
                key.get_type().name()?
            )));
        };
        if n > 0 {
            out.push(',');
        }
        let key = key.to_cow()?;
        parrot_json::write_string(&key, out);
        out.push(':');
        path.push(Step::Key(key.into_owned()));
        write(&item, out, path)?;
        path.pop();
    }
    out.push('}');
    Ok(())
}

fn write_items<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    out: &mut String,
    path: &mut Vec<Step>,
) -> PyResult<()> {
    out.push('[');
    for (n, item) in items.enumerate() {
        if n > 0 {
            out.push(',');
        }
        path.push(Step::Index(n));
        write(&item, out, path)?;
        path.pop();
    }
    out.push(']');
    Ok(())
}

/// `value` as a Python value: objects as `dict` (members in order), arrays as `list`, numbers
/// as `int` when whole and `float` otherwise.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => {
            if let Some(n) = number.as_i64() {
                n.into_pyobject(py)?.into_any()
            } else if let Some(n) = number.as_u64() {
                n.into_pyobject(py)?.into_any()
            } else {
                number
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
            }
        }
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (name, item) in members {
                dict.set_item(name, to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A namespace given by name (`None`: none).
pub(crate) fn namespace_of(name: Option<&str>) -> PyResult<Option<Namespace>> {
    name.map(|name| {
        Namespace::new(name).map_err(|err| PyValueError::new_err(format!("namespace: {err}")))
    })
    .transpose()
}

/// An optional argument as given: `None` when it was left out or given as `None`.
pub(crate) fn given<'a, 'py>(
    value: Option<&'a Bound<'py, PyAny>>,
) -> Option<&'a Bound<'py, PyAny>> {
    value.filter(|value| !value.is_none())
}

/// `value` as a message shows it: its `repr`.
pub(crate) fn shown(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map_or_else(|_| "?".to_owned(), |repr| repr.to_string())
}
