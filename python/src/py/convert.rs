//! Values between Python and JSON: a tool result given as a Python value serialized once, in
//! Rust, and the host's JSON (metadata, the report, a tool definition) as Python values.

use parrot_host::Namespace;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
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
/// A subclass is written as `json.dumps` writes it: an `int` or a `float` as the base type's
/// `repr` (its own `__str__` and `__repr__` are never called, so its text cannot reach the
/// JSON), a `str` as its characters, a `dict` through its `items()`, a `list` or a `tuple`
/// through its iteration.
///
/// # Errors
///
/// `TypeError` for any other type or a key that is not a `str`, `ValueError` for a float that
/// is not finite, a value nested deeper than the host reads or a `dict` subclass whose `items()`
/// gives other than pairs, `RuntimeError` for a `dict` changed while it is written; each names
/// where, as a path from the top (`result["rows"][3]["at"]`). An exception raised by a
/// subclass's own `items()` or iteration comes through as it was raised.
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
        write_int(value, out)?;
    } else if let Ok(float) = value.cast::<PyFloat>() {
        write_float(float, out, path)?;
    } else if let Ok(dict) = value.cast::<PyDict>() {
        if dict.is_exact_instance_of::<PyDict>() {
            write_dict(dict, out, path)?;
        } else {
            write_subclass_dict(dict, out, path)?;
        }
    } else if let Ok(list) = value.cast_exact::<PyList>() {
        write_list(list, out, path)?;
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        write_items(tuple.iter(), out, path)?;
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        // As `json.dumps` reads a subclass: through its own iteration, into a list first.
        let items = value.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        write_items(items.into_iter(), out, path)?;
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

/// An `int`, in decimal: an `int` subclass as `int.__repr__` writes it (as `json.dumps`
/// does), whatever text its own `__str__` or `__repr__` gives.
fn write_int(value: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    // Reading the value of an `int` (or of a subclass) runs none of its methods.
    if let Ok(small) = value.extract::<i64>() {
        out.push_str(&small.to_string());
    } else if value.is_exact_instance_of::<PyInt>() {
        out.push_str(&value.str()?.to_cow()?);
    } else {
        let text = value
            .py()
            .get_type::<PyInt>()
            .getattr(intern!(value.py(), "__repr__"))?
            .call1((value,))?;
        out.push_str(&text.cast_into::<PyString>()?.to_cow()?);
    }
    Ok(())
}

/// A finite `float` as its `repr`: a `float` subclass as `float.__repr__` writes it (as
/// `json.dumps` does), whatever text its own `__repr__` gives.
fn write_float(float: &Bound<'_, PyFloat>, out: &mut String, path: &[Step]) -> PyResult<()> {
    // The value of a subclass is read as a `float`'s, without its `__float__`.
    let number = float.value();
    if !number.is_finite() {
        return Err(PyValueError::new_err(format!(
            "{}: {number} is not a JSON number",
            at(path)
        )));
    }
    if float.is_exact_instance_of::<PyFloat>() {
        out.push_str(&float.repr()?.to_cow()?);
    } else {
        out.push_str(&PyFloat::new(float.py(), number).repr()?.to_cow()?);
    }
    Ok(())
}

/// A `dict`, its members in order. A `dict` changed while it is written (by code that ran
/// meanwhile: another thread, a collector's callback, a subclass's `items`) raises
/// `RuntimeError`, as Python's own iteration does, rather than reaching the iterator's panic.
fn write_dict(dict: &Bound<'_, PyDict>, out: &mut String, path: &mut Vec<Step>) -> PyResult<()> {
    let size = dict.len();
    let mut members = dict.iter();
    out.push('{');
    let mut n = 0;
    loop {
        // The iterator panics at the next step after a change: each is looked for first.
        if dict.len() != size {
            return Err(changed(path, "changed size"));
        }
        let Some((key, item)) = members.next() else {
            break;
        };
        if n == size {
            // One member more than it held, at the same size: keys went and others came.
            return Err(changed(path, "keys changed"));
        }
        write_member(n, &key, &item, out, path)?;
        n += 1;
    }
    out.push('}');
    Ok(())
}

/// The `RuntimeError` of a `dict` at `path` changed while it was written, in Python's words.
fn changed(path: &[Step], how: &str) -> PyErr {
    PyRuntimeError::new_err(format!("{}: dictionary {how} during iteration", at(path)))
}

/// A `dict` subclass, as `json.dumps` reads one: through its own `items()`, into a list first.
fn write_subclass_dict(
    dict: &Bound<'_, PyDict>,
    out: &mut String,
    path: &mut Vec<Step>,
) -> PyResult<()> {
    let items = dict.call_method0(intern!(dict.py(), "items"))?;
    let Ok(items) = items.try_iter() else {
        return Err(PyTypeError::new_err(format!(
            "{}: {}.items() returned a non-iterable ({})",
            at(path),
            dict.get_type().name()?,
            items.get_type().name()?
        )));
    };
    let items = items.collect::<PyResult<Vec<_>>>()?;
    out.push('{');
    for (n, pair) in items.iter().enumerate() {
        let member = pair.cast::<PyTuple>().ok().filter(|pair| pair.len() == 2);
        let Some(member) = member else {
            return Err(PyValueError::new_err(format!(
                "{}: items() must return 2-tuples, got {}",
                at(path),
                shown(pair)
            )));
        };
        write_member(n, &member.get_item(0)?, &member.get_item(1)?, out, path)?;
    }
    out.push('}');
    Ok(())
}

/// The `n`th member of an object: `key` (a `str`) and its value.
fn write_member(
    n: usize,
    key: &Bound<'_, PyAny>,
    item: &Bound<'_, PyAny>,
    out: &mut String,
    path: &mut Vec<Step>,
) -> PyResult<()> {
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
    write(item, out, path)?;
    path.pop();
    Ok(())
}

/// A `list`, up to its length at each step (a list that grows while it is written is written
/// whole, one that shrinks up to its new end, as `json.dumps` writes it).
fn write_list(list: &Bound<'_, PyList>, out: &mut String, path: &mut Vec<Step>) -> PyResult<()> {
    out.push('[');
    let mut n = 0;
    while n < list.len() {
        if n > 0 {
            out.push(',');
        }
        path.push(Step::Index(n));
        write(&list.get_item(n)?, out, path)?;
        path.pop();
        n += 1;
    }
    out.push(']');
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
