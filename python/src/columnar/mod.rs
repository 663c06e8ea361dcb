//! ai-parrot's columnar transform, in Rust: what the Python module `parrot_codec` runs.
//!
//! ai-parrot's columnar codec turns a JSON array of row objects into
//! `{"columns": [...], "rows": [[...], ...], "constants": {...}}`. Its pure-Python transform is
//! the specification; when the module `parrot_codec` can be imported and the payload is JSON
//! text, the codec calls `parrot_codec.columnarize(rows_bytes, min_rows)` instead and decodes
//! what it returns. [`columnarize`] returns exactly the bytes the pure-Python path would
//! encode for the same rows (with orjson, as ai-parrot does), so the codec's outcome does not
//! depend on whether the extension is installed.
//!
//! # The transform
//!
//! The rules, in the order they apply, each on the values Python holds after `orjson.loads`:
//!
//! 1. **Columns** are the member names in first-seen order: each row's own order, a name a
//!    row repeats counted at its first place (its last value is the one kept).
//! 2. **Null columns** are dropped: a column is null when every row's value for it is `null`
//!    or absent (`row.get(column) is None`).
//! 3. **Constant columns** move to `constants`, when there is more than one row: a column whose
//!    every value `==` the first row's (Python's equality: `1 == 1.0 == true`) is written once,
//!    with the first row's value, and leaves `columns`.
//! 4. **Rows** are the values of the remaining columns in order, `null` where a row has no
//!    such member.
//!
//! ```
//! use parrot_compress_python::columnar::columnarize;
//!
//! let rows = br#"[{"id": 1, "db": "pg", "note": null}, {"id": 2, "db": "pg"}]"#;
//! assert_eq!(
//!     columnarize(rows).unwrap(),
//!     br#"{"columns":["id"],"rows":[[1],[2]],"constants":{"db":"pg"}}"#
//! );
//! ```
//!
//! # What is not checked here
//!
//! `min_rows`, the argument ai-parrot passes along, is not used: the codec checks the row count
//! itself before it calls the extension (and ai-parrot's own Rust extension ignores it too).
//! Payloads of other shapes (a query result with its `rows`, heterogeneous or nested rows) are
//! the codec's to tell apart; this transform is given the row array alone.
//!
//! # Depth
//!
//! The payload is read with the workspace's depth limit, [`parrot_json::MAX_DEPTH`] (512
//! nested arrays and objects), where `orjson.loads` reads 1024. The pure-Python path fails on
//! nearly every payload between the two anyway, in its encoder: orjson writes at most
//! [`ORJSON_WRITE_DEPTH`] (254) nested levels, and every value of a row is written in the
//! output. So that the two paths fail on the same payloads, [`columnarize`] refuses a column
//! whose values would nest past that limit in the output ([`ColumnarError::TooDeepToWrite`]).
//!
//! The exception is a value that a repeated name replaced, which is read but never written:
//! `[{"a": <600 nested lists>, "a": 1}, {"a": 2}]` is columnarized by the pure-Python path and
//! refused here ([`ColumnarError::TooDeep`]). Decoded, its rows hold no nested value, so
//! ai-parrot's codec does pass it on, and when the extension raises, the codec returns the
//! payload unchanged.

mod equal;
mod read;
mod value;
mod write;

use equal::python_eq;
use read::{Table, Value};
use write::{write_string, write_value};

/// How deeply `orjson.dumps` nests lists and dicts: it refuses a value with more levels.
pub const ORJSON_WRITE_DEPTH: usize = 254;

/// Why a payload cannot be columnarized.
///
/// The pure-Python path fails on each of these payloads too, but for two that it iterates as
/// no rows at all: an empty object and an empty string. The codec passes neither on: it calls
/// the transform only with an array of at least `min_rows` objects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ColumnarError {
    /// The payload is not UTF-8 text.
    #[error("payload is not UTF-8: invalid byte at offset {offset}")]
    NotUtf8 {
        /// The byte offset of the first byte that is not UTF-8.
        offset: usize,
    },
    /// The payload is not JSON (a lone surrogate escape, `NaN` and a trailing comma included).
    #[error("payload is not valid JSON (at byte {offset})")]
    NotJson {
        /// The byte offset where reading failed.
        offset: usize,
    },
    /// Arrays and objects nest deeper than the limit.
    #[error("payload nests more than {limit} arrays and objects (at byte {offset})")]
    TooDeep {
        /// The byte offset of the container past the limit.
        offset: usize,
        /// The limit, [`parrot_json::MAX_DEPTH`].
        limit: usize,
    },
    /// The payload is JSON, but not an array.
    #[error(
        "payload is {found}, not an array of rows (at byte {offset}); pass the row array \
         itself, e.g. a query result's \"rows\""
    )]
    NotAnArray {
        /// The byte offset of the value.
        offset: usize,
        /// What it is instead ("an object", "a string", …).
        found: &'static str,
    },
    /// An element of the array is not an object.
    #[error("row {row} is {found}, not an object (at byte {offset})")]
    RowNotObject {
        /// The index of the first such row.
        row: usize,
        /// The byte offset where it starts.
        offset: usize,
        /// What it is instead ("an array", "null", …).
        found: &'static str,
    },
    /// A number too large for a 64-bit float (orjson refuses it too).
    #[error("number at byte {offset} is out of the range of a 64-bit float")]
    NumberOutOfRange {
        /// The byte offset where the number starts.
        offset: usize,
    },
    /// A column's values would nest deeper in the output than orjson writes.
    #[error(
        "column \"{column}\" holds values that would nest {depth} levels deep in the output; \
         orjson writes at most {ORJSON_WRITE_DEPTH}"
    )]
    TooDeepToWrite {
        /// The column's name.
        column: String,
        /// How deeply its values would nest in the output.
        depth: usize,
    },
}

/// Columnarizes a JSON array of row objects: the bytes ai-parrot's pure-Python transform gives,
/// encoded by orjson, for the same rows.
///
/// An empty array gives `{"columns":[],"rows":[],"constants":{}}`.
///
/// # Examples
///
/// ```
/// use parrot_compress_python::columnar::columnarize;
///
/// let rows = br#"[{"a": 1, "b": 1E2}, {"b": 100, "a": 2.50}]"#;
/// assert_eq!(
///     columnarize(rows).unwrap(),
///     br#"{"columns":["a"],"rows":[[1],[2.5]],"constants":{"b":100.0}}"#
/// );
/// ```
///
/// # Errors
///
/// - [`ColumnarError::NotUtf8`], [`ColumnarError::NotJson`]: the payload is not JSON text.
/// - [`ColumnarError::TooDeep`]: it nests more than [`parrot_json::MAX_DEPTH`] levels.
/// - [`ColumnarError::NotAnArray`], [`ColumnarError::RowNotObject`]: it is not an array of
///   objects.
/// - [`ColumnarError::NumberOutOfRange`]: a number overflows a float (`1e400`).
/// - [`ColumnarError::TooDeepToWrite`]: the output would nest past [`ORJSON_WRITE_DEPTH`].
pub fn columnarize(payload: &[u8]) -> Result<Vec<u8>, ColumnarError> {
    let text = std::str::from_utf8(payload).map_err(|error| ColumnarError::NotUtf8 {
        offset: error.valid_up_to(),
    })?;
    let table = Table::read(text)?;
    let plan = Plan::new(&table)?;
    // Names written once and nulls dropped: the output is rarely longer than the payload.
    let mut out = Vec::with_capacity(payload.len() + 64);
    plan.write(&table, &mut out);
    Ok(out)
}

/// Refuses a column whose values, `outer` levels down in the output (the result's dict, and
/// for a kept column the rows' list and a row's), would nest deeper than orjson writes.
fn check_depth(table: &Table<'_>, column: usize, outer: usize) -> Result<(), ColumnarError> {
    let bound = outer + table.heights.get(column).copied().unwrap_or(0);
    if bound <= ORJSON_WRITE_DEPTH {
        return Ok(());
    }
    let deepest = (0..table.len()).map(|row| read::height(table.cell(row, column)));
    let depth = outer + deepest.max().unwrap_or(0);
    if depth <= ORJSON_WRITE_DEPTH {
        return Ok(());
    }
    let name = table.columns.get(column).map(|name| name.decoded());
    Err(ColumnarError::TooDeepToWrite {
        column: name.unwrap_or_default().into_owned(),
        depth,
    })
}

/// Where each column goes: the columns kept, in order, and the constant ones, in order.
struct Plan {
    kept: Vec<usize>,
    constants: Vec<usize>,
}

impl Plan {
    /// Sorts the columns of `table`, and checks that orjson could write the result.
    fn new(table: &Table<'_>) -> Result<Plan, ColumnarError> {
        let mut plan = Plan {
            kept: Vec::new(),
            constants: Vec::new(),
        };
        for column in 0..table.columns.len() {
            let first = table.cell(0, column);
            let same = (1..table.len()).all(|row| python_eq(table.cell(row, column), first));
            // A first value of None equals only None: the column is null.
            let (list, outer) = match (same, first) {
                (true, Value::Null) => continue,
                (true, _) if table.len() > 1 => (&mut plan.constants, 2),
                _ => (&mut plan.kept, 3),
            };
            list.push(column);
            check_depth(table, column, outer)?;
        }
        Ok(plan)
    }

    /// Writes the result, as orjson writes the pure-Python path's dict.
    fn write(&self, table: &Table<'_>, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"columns\":[");
        for (at, &column) in self.kept.iter().enumerate() {
            if at > 0 {
                out.push(b',');
            }
            if let Some(name) = table.columns.get(column) {
                write_string(out, name);
            }
        }
        out.extend_from_slice(b"],\"rows\":[");
        for row in 0..table.len() {
            if row > 0 {
                out.push(b',');
            }
            out.push(b'[');
            for (at, &column) in self.kept.iter().enumerate() {
                if at > 0 {
                    out.push(b',');
                }
                write_value(out, table.cell(row, column));
            }
            out.push(b']');
        }
        out.extend_from_slice(b"],\"constants\":{");
        for (at, &column) in self.constants.iter().enumerate() {
            if at > 0 {
                out.push(b',');
            }
            if let Some(name) = table.columns.get(column) {
                write_string(out, name);
            }
            out.push(b':');
            write_value(out, table.cell(0, column));
        }
        out.extend_from_slice(b"}}");
    }
}

#[cfg(test)]
mod tests;
