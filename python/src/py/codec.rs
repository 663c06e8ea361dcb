//! `columnarize`, the function of ai-parrot's optional extension, which the package
//! `parrot_codec` re-exports.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyString};

use crate::columnar;

/// Columnarizes a JSON array of row objects (bytes or str): the UTF-8 JSON of
/// `{"columns": [...], "rows": [[...], ...], "constants": {...}}`, byte for byte what
/// ai-parrot's pure-Python columnar transform gives, encoded with orjson, for the same rows.
///
/// `min_rows` is checked (a non-negative int) but not applied: ai-parrot's codec counts the rows
/// before it calls this function. Raises `ValueError` when the payload is not a JSON array of
/// objects (the message says what is wrong and at which byte or row), and `TypeError` when it
/// is neither bytes nor str.
#[pyfunction]
#[pyo3(signature = (payload, min_rows = MinRows), text_signature = "(payload, min_rows=20)")]
fn columnarize<'py>(
    py: Python<'py>,
    payload: &Bound<'py, PyAny>,
    min_rows: MinRows,
) -> PyResult<Bound<'py, PyBytes>> {
    // Checked on the way in; the codec counted the rows before the call.
    let MinRows = min_rows;
    let text: Cow<'_, [u8]> = if let Ok(bytes) = payload.cast::<PyBytes>() {
        Cow::Borrowed(bytes.as_bytes())
    } else if let Ok(text) = payload.cast::<PyString>() {
        match text.to_cow() {
            Ok(Cow::Borrowed(text)) => Cow::Borrowed(text.as_bytes()),
            Ok(Cow::Owned(text)) => Cow::Owned(text.into_bytes()),
            Err(_) => {
                return Err(PyValueError::new_err(
                    "payload is a str that is not valid Unicode (a lone surrogate): it has no \
                     UTF-8 form",
                ));
            }
        }
    } else {
        return Err(PyTypeError::new_err(format!(
            "payload: expected bytes or str (JSON text of an array of rows), got {}",
            type_name(payload)
        )));
    };
    let out = py
        .detach(|| columnar::columnarize(&text))
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(PyBytes::new(py, &out))
}

/// A `min_rows` argument that was checked: a non-negative int (not a bool, which is an int only
/// to Python). Its value is not kept: the transform does not count rows.
struct MinRows;

impl<'a, 'py> FromPyObject<'a, 'py> for MinRows {
    type Error = PyErr;

    fn extract(min_rows: Borrowed<'a, 'py, PyAny>) -> PyResult<MinRows> {
        let is_int = min_rows.cast::<PyInt>().is_ok() && min_rows.cast::<PyBool>().is_err();
        if is_int && !min_rows.lt(0)? {
            return Ok(MinRows);
        }
        let shown = min_rows.repr().map(|repr| repr.to_string());
        Err(PyValueError::new_err(format!(
            "min_rows: expected a non-negative int, got {}",
            shown.unwrap_or_else(|_| type_name(&min_rows))
        )))
    }
}

/// The name of an object's type, for a message.
fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map_or_else(|_| "an unknown type".into(), |name| name.to_string())
}

/// Adds `columnarize` to the module `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(columnarize, m)?)
}
