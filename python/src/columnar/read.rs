//! Reading the payload into the values Python would hold after `orjson.loads`: the one pass
//! over the text.
//!
//! The model is Python's, not the text's: `1E5` is the float `100000.0`, `-0` is the int `0`,
//! an integer past the 64-bit range is a float, and an object with a name twice holds it once,
//! at its first position, with its last value (what assigning into a `dict` does).

use std::borrow::Cow;
use std::collections::HashMap;

use parrot_json::{MAX_DEPTH, RawStr, Reader};

use super::ColumnarError;
pub(crate) use super::value::Value;
use super::write::written_as_orjson;

/// The rows of a payload: the names of its columns in first-seen order, and each row's values
/// by column.
///
/// The cells of all rows live in one vector. A row holds one cell for each column known when it
/// ended (the columns it names, and every column an earlier row named); a column first named
/// by a later row is absent from it, which reads as `None`, as `row.get(column)` does.
#[derive(Debug, Default)]
pub(crate) struct Table<'a> {
    /// The column names, as first written.
    pub(crate) columns: Vec<RawStr<'a>>,
    /// For each column, how deeply its most nested value nests (0 for a scalar), or more: a
    /// value that a repeated name replaced counts too ([`height`] tells exactly).
    pub(crate) heights: Vec<usize>,
    cells: Vec<Value<'a>>,
    /// Where each row's cells start in `cells`.
    starts: Vec<usize>,
    /// The columns by decoded name, for a name the previous row did not have at that place.
    by_name: HashMap<Cow<'a, str>, usize>,
}

impl<'a> Table<'a> {
    /// The number of rows.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The value of `column` in `row`: `None` where the row has no such member.
    pub(crate) fn cell(&self, row: usize, column: usize) -> &Value<'a> {
        let start = self.starts.get(row).copied().unwrap_or(self.cells.len());
        let end = self
            .starts
            .get(row + 1)
            .copied()
            .unwrap_or(self.cells.len());
        self.cells
            .get(start..end)
            .and_then(|cells| cells.get(column))
            .unwrap_or(&Value::Null)
    }

    /// Reads `text`, which must be a JSON array of objects.
    ///
    /// A member name is matched first against the column the previous row had at the same
    /// place, as written: rows of one query name their columns in one order, so a table is read
    /// with about one comparison of a few bytes per member and no hashing.
    pub(crate) fn read(text: &'a str) -> Result<Table<'a>, ColumnarError> {
        let mut reader = Reader::new(text);
        reader.skip_ws();
        if reader.peek() != Some(b'[') {
            return Err(not_an_array(&mut reader));
        }
        reader.bump();
        let mut table = Table::default();
        let mut previous: Vec<usize> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        let mut not_object = None;
        if !reader.empty_container(b']') {
            loop {
                if reader.peek() == Some(b'{') {
                    let start = reader.pos();
                    current.clear();
                    table.read_row(&mut reader, &previous, &mut current)?;
                    std::mem::swap(&mut previous, &mut current);
                    if table.len() == 1 {
                        table.reserve(text.len() / (reader.pos() - start).max(1));
                    }
                } else {
                    // Read on: a text that is not JSON further on is reported as such.
                    let (offset, row) = (reader.pos(), table.len());
                    let (value, _) = read_value(&mut reader, 1)?;
                    not_object.get_or_insert(ColumnarError::RowNotObject {
                        row,
                        offset,
                        found: kind(&value),
                    });
                    table.starts.push(table.cells.len());
                }
                if !reader.next_or_close(b']').map_err(syntax)? {
                    break;
                }
            }
        }
        reader.finish().map_err(syntax)?;
        match not_object {
            Some(error) => Err(error),
            None => Ok(table),
        }
    }

    /// Makes room for `rows` more rows as wide as the table is, so that the cells of a large
    /// payload are not copied again and again as they grow.
    fn reserve(&mut self, rows: usize) {
        self.starts.reserve(rows);
        self.cells.reserve(rows.saturating_mul(self.columns.len()));
    }

    /// Reads the object at the cursor as the next row; `previous` are the columns of the last
    /// row's members in order, `current` receives this row's.
    fn read_row(
        &mut self,
        reader: &mut Reader<'a>,
        previous: &[usize],
        current: &mut Vec<usize>,
    ) -> Result<(), ColumnarError> {
        let start = self.cells.len();
        self.starts.push(start);
        self.cells.resize(start + self.columns.len(), Value::Null);
        reader.bump();
        if reader.empty_container(b'}') {
            return Ok(());
        }
        loop {
            let name = reader.string().map_err(syntax)?;
            reader.expect(b':').map_err(syntax)?;
            reader.skip_ws();
            let (value, height) = read_value(reader, 2)?;
            let column = self.column(name, previous.get(current.len()).copied());
            current.push(column);
            if let Some(max) = self.heights.get_mut(column) {
                *max = (*max).max(height);
            }
            let at = start + column;
            if at >= self.cells.len() {
                self.cells.resize(at + 1, Value::Null);
            }
            // A name the row already had keeps its place and takes this value.
            if let Some(cell) = self.cells.get_mut(at) {
                *cell = value;
            }
            if !reader.next_or_close(b'}').map_err(syntax)? {
                return Ok(());
            }
        }
    }

    /// The column named `name`, added if new; `hint` is the column the previous row had here.
    fn column(&mut self, name: RawStr<'a>, hint: Option<usize>) -> usize {
        if let Some(hint) = hint
            && self.columns.get(hint) == Some(&name)
        {
            return hint;
        }
        let next = self.columns.len();
        let column = *self.by_name.entry(name.decoded()).or_insert(next);
        if column == next {
            self.columns.push(name);
            self.heights.push(0);
        }
        column
    }
}

/// Reads the value at the cursor, inside `depth` containers, and how deeply it nests (0 for a
/// scalar, 1 for a container of scalars or an empty one, …).
pub(crate) fn read_value<'a>(
    reader: &mut Reader<'a>,
    depth: usize,
) -> Result<(Value<'a>, usize), ColumnarError> {
    let value = match reader.peek() {
        Some(b'"') => Value::Str(reader.string().map_err(syntax)?),
        Some(b'-' | b'0'..=b'9') => number(reader)?,
        Some(b'n' | b't' | b'f') => match reader.literal().map_err(syntax)? {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Null,
        },
        Some(open @ (b'[' | b'{')) => {
            if depth >= MAX_DEPTH {
                return Err(ColumnarError::TooDeep {
                    offset: reader.pos(),
                    limit: MAX_DEPTH,
                });
            }
            reader.bump();
            return if open == b'[' {
                read_list(reader, depth + 1)
            } else {
                read_dict(reader, depth + 1)
            };
        }
        _ => return Err(syntax(reader.error())),
    };
    Ok((value, 0))
}

/// How deeply `value` nests: 0 for a scalar, 1 for a container of scalars or an empty one, …
pub(crate) fn height(value: &Value<'_>) -> usize {
    match value {
        Value::List(elements) => 1 + elements.iter().map(height).max().unwrap_or(0),
        Value::Dict(members) => 1 + members.iter().map(|(_, v)| height(v)).max().unwrap_or(0),
        _ => 0,
    }
}

/// Reads the elements of the list whose `[` the cursor is past (the list is container number
/// `depth`).
fn read_list<'a>(
    reader: &mut Reader<'a>,
    depth: usize,
) -> Result<(Value<'a>, usize), ColumnarError> {
    let mut elements = Vec::new();
    let mut height = 0;
    if !reader.empty_container(b']') {
        loop {
            let (element, inner) = read_value(reader, depth)?;
            elements.push(element);
            height = height.max(inner);
            if !reader.next_or_close(b']').map_err(syntax)? {
                break;
            }
        }
    }
    Ok((Value::List(elements), height + 1))
}

/// Objects up to this many members find a repeated name by comparing it with every earlier
/// one; wider ones keep an index of their names.
const LINEAR_MEMBERS: usize = 16;

/// Reads the members of the dict whose `{` the cursor is past (the dict is container number
/// `depth`), a repeated name keeping its first place and taking its last value.
fn read_dict<'a>(
    reader: &mut Reader<'a>,
    depth: usize,
) -> Result<(Value<'a>, usize), ColumnarError> {
    let mut members: Vec<(RawStr<'a>, Value<'a>)> = Vec::new();
    let mut index: HashMap<Cow<'a, str>, usize> = HashMap::new();
    let mut height = 0;
    if !reader.empty_container(b'}') {
        loop {
            let name = reader.string().map_err(syntax)?;
            reader.expect(b':').map_err(syntax)?;
            reader.skip_ws();
            let (value, inner) = read_value(reader, depth)?;
            height = height.max(inner);
            let earlier = if members.len() < LINEAR_MEMBERS {
                members.iter().position(|(seen, _)| seen.same_value(&name))
            } else {
                if index.is_empty() {
                    let names = members.iter().enumerate();
                    index.extend(names.map(|(at, (seen, _))| (seen.decoded(), at)));
                }
                let next = members.len();
                Some(*index.entry(name.decoded()).or_insert(next)).filter(|&at| at != next)
            };
            match earlier.and_then(|at| members.get_mut(at)) {
                Some((_, slot)) => *slot = value,
                None => members.push((name, value)),
            }
            if !reader.next_or_close(b'}').map_err(syntax)? {
                break;
            }
        }
    }
    Ok((Value::Dict(members), height + 1))
}

/// Reads a number as orjson does: an int when it has neither fraction nor exponent and fits
/// `i64::MIN..=u64::MAX`, a float otherwise.
fn number<'a>(reader: &mut Reader<'a>) -> Result<Value<'a>, ColumnarError> {
    let offset = reader.pos();
    let text = reader.number().map_err(syntax)?;
    if !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        if let Ok(int) = text.parse::<i64>() {
            return Ok(Value::Int(int));
        }
        if let Ok(int) = text.parse::<u64>() {
            return Ok(Value::UInt(int));
        }
    }
    // The grammar is JSON's, which Rust's float syntax includes; rounding is correct.
    match text.parse::<f64>() {
        Ok(float) if float.is_finite() => {
            Ok(Value::Float(float, written_as_orjson(text).then_some(text)))
        }
        _ => Err(ColumnarError::NumberOutOfRange { offset }),
    }
}

/// The error for a payload that is not an array: not JSON at all, or JSON of another kind.
fn not_an_array(reader: &mut Reader<'_>) -> ColumnarError {
    let offset = reader.pos();
    let read = read_value(reader, 0).and_then(|(value, _)| {
        reader.finish().map_err(syntax)?;
        Ok(value)
    });
    match read {
        Ok(value) => ColumnarError::NotAnArray {
            offset,
            found: kind(&value),
        },
        Err(error) => error,
    }
}

/// What a value is, in JSON's words, for an error message.
fn kind(value: &Value<'_>) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Int(_) | Value::UInt(_) | Value::Float(..) => "a number",
        Value::Str(_) => "a string",
        Value::List(_) => "an array",
        Value::Dict(_) => "an object",
    }
}

/// The reader's refusal, as this module's error.
fn syntax(error: parrot_json::Error) -> ColumnarError {
    match error {
        parrot_json::Error::Syntax(offset) => ColumnarError::NotJson { offset },
        // The reader's own depth limit and duplicate-name check are not used here.
        _ => ColumnarError::NotJson { offset: 0 },
    }
}
