//! The `columnar` codec (CONTRACT §2.3): row-oriented data as one table, columns named once.
//!
//! # Inputs
//!
//! An array whose elements are all objects (the rows), or an object with a member `rows`
//! holding such an array (the query-result shape: the other members are kept, `rows` is
//! replaced in place), given as JSON text: the host labels any text that parses as JSON (a file,
//! stdin, a tool's string result) as JSON. Anything else passes through, and so does a payload
//! labelled text (JSON nested deeper than the host's parser allows is labelled text, and the
//! host checks the inverse of a text outcome byte for byte, which a table cannot meet).
//!
//! # Guards, in order
//!
//! 1. fewer than `min_rows` rows: passthrough (exactly `min_rows` rows is columnarized);
//! 2. heterogeneous rows: no key in every row, or `|∪| / |∩| > heterogeneity_ratio` over the
//!    rows' key sets (a ratio equal to the param is not heterogeneous);
//! 3. nested values: a row member whose value is an object or an array.
//!
//! If guard 2 or 3 fires: passthrough at `minimal`; at `normal` and above the rows only lose
//! their `null` members (lossy; passthrough when no row has one).
//!
//! 4. at `minimal`, rows whose key sets differ pass through (absent and null would be
//!    conflated).
//!
//! # The table
//!
//! `{"columns": [names], "rows": [[values]], "constants": {name: value}}`, columns in
//! first-seen order. With more than one row, a column whose value is equal (CONTRACT §2.1: numbers
//! by their text, strings by their decoded value) in every row moves to `constants`. At `normal`
//! and above a column that is null or absent in every row is dropped (lossy), a missing key
//! becomes `null` (lossy), and cell strings longer than `max_field_chars` code points are
//! clipped as [`json_compact`](crate::json_compact) clips strings (lossy). The lossy flag is
//! set only when one of these happened. Column names and cell strings are written with only the
//! escapes JSON requires, as `json_compact` writes them (the same values; `"\u00e9"` becomes
//! `"é"`); the other members of a query result are copied as written.
//!
//! At `aggressive` the table becomes a summary (always lossy):
//! `{"columns", "row_count", "constants", "stats": {column: {"nulls", "distinct", "min", "max"}},
//! "head", "tail"}`: `nulls` counts rows where the column is null or absent, `distinct` the
//! distinct other values, `min`/`max` appear for a column whose other values are all numbers
//! (compared exactly by value) or all strings (compared by code point); `head` and `tail` are the
//! first and last `sample_rows` rows, as in `rows`.
//!
//! An output that would not be smaller than its input is reported as
//! [`Outcome::Unchanged`] (CONTRACT §2.1, no gain).
//!
//! # Examples
//!
//! ```
//! use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
//! use parrot_codecs::Columnar;
//!
//! let codec = parrot_codec_api::build::<Columnar>(Params::from_json(r#"{"min_rows": 3}"#).unwrap())
//!     .unwrap();
//! let input = r#"{"driver": "pg", "rows": [
//!     {"id": 1, "region": "south", "revenue": 1000.0},
//!     {"id": 2, "region": "south", "revenue": 1001.37},
//!     {"id": 3, "region": "south", "revenue": 1002.74}
//! ]}"#;
//! let table = r#"{"driver":"pg","rows":{"columns":["id","revenue"],"rows":[[1,1000.0],[2,1001.37],[3,1002.74]],"constants":{"region":"south"}}}"#;
//! assert_eq!(codec.compress(Payload::json(input), Level::Minimal).unwrap(), Outcome::lossless(table));
//! assert_eq!(
//!     codec.expand(table).unwrap(),
//!     r#"{"driver":"pg","rows":[{"id":1,"revenue":1000.0,"region":"south"},{"id":2,"revenue":1001.37,"region":"south"},{"id":3,"revenue":1002.74,"region":"south"}]}"#
//! );
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher as _;

use hashbrown::HashTable;

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};

use crate::Transformed;
use crate::clip;
use parrot_json::{MAX_DEPTH, RawStr, Reader, Str, Value};

/// The `columnar` codec: arrays of row objects become one table with the column names once.
///
/// Params (unknown keys are refused when the codec is built):
///
/// | key | default | meaning |
/// |---|---|---|
/// | `min_rows` | `20` | fewer rows pass through (at least 1) |
/// | `heterogeneity_ratio` | `1.5` | rows with `\|∪\|/\|∩\|` of their key sets above this are not a table (at least 1) |
/// | `max_field_chars` | `2000` | at `normal`+, clip longer cell strings (0: never; else ≥ 41) |
/// | `sample_rows` | `5` | at `aggressive`, the rows kept at each end of the summary |
///
/// See the [module documentation](self) for the exact rules.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
/// use parrot_codecs::Columnar;
///
/// let params = Params::from_json(r#"{"min_rows": 2}"#).unwrap();
/// let codec = parrot_codec_api::build::<Columnar>(params).unwrap();
/// let rows = r#"[{"id":0,"k":"v","n":null},{"id":1,"k":"v","n":null},{"id":2,"k":"v","n":null}]"#;
/// assert_eq!(
///     codec.compress(Payload::json(rows), Level::Normal).unwrap(),
///     Outcome::lossy(r#"{"columns":["id"],"rows":[[0],[1],[2]],"constants":{"k":"v"}}"#)
/// );
///
/// let err = parrot_codec_api::build::<Columnar>(Params::from_json(r#"{"min_rows": 0}"#).unwrap())
///     .unwrap_err();
/// assert_eq!(err.to_string(), "param \"min_rows\": expected a positive integer, got a number (0)");
/// ```
#[derive(Debug, Clone)]
pub struct Columnar {
    min_rows: usize,
    heterogeneity_ratio: f64,
    max_field_chars: usize,
    sample_rows: usize,
}

impl Columnar {
    /// The transform of CONTRACT §2.3, before the no-gain rule: `None` when the payload passes
    /// through.
    fn transform(&self, text: &str, level: Level) -> Option<Transformed> {
        if level == Level::None {
            return None;
        }
        // At minimal a nested value means passthrough: stop reading there.
        let (shape, table) = read(text, !level.allows_loss()).ok()??;
        let rows = table.row_count();
        if rows < self.min_rows {
            return None;
        }
        let union = table.columns.len();
        let intersection = table
            .columns
            .iter()
            .filter(|column| column.present == rows)
            .count();
        let heterogeneous =
            intersection == 0 || union as f64 / intersection as f64 > self.heterogeneity_ratio;
        let mut out = Vec::with_capacity(text.len());
        let lossy = if heterogeneous || table.nested {
            if !level.allows_loss() {
                return None;
            }
            let dropped = shape.write(&mut out, |out| table.write_without_nulls(out));
            if !dropped {
                return None;
            }
            true
        } else if intersection != union && !level.allows_loss() {
            return None;
        } else if level == Level::Aggressive {
            let base = shape.rows_pointer();
            shape.write(&mut out, |out| {
                table.write_summary(base, self.max_field_chars, self.sample_rows, out);
            });
            true
        } else {
            let clip = if level.allows_loss() {
                self.max_field_chars
            } else {
                0
            };
            let base = shape.rows_pointer();
            shape.write(&mut out, |out| {
                table.write_table(base, level.allows_loss(), clip, out)
            })
        };
        let text = crate::into_text(out)?;
        Some(Transformed { text, lossy })
    }
}

impl Codec for Columnar {
    const NAME: &'static str = "columnar";
    const EXPANDS: bool = true;

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        let min_rows = params.positive("min_rows", 20)?;
        let heterogeneity_ratio = params.f64("heterogeneity_ratio", 1.5)?;
        if heterogeneity_ratio < 1.0 {
            return Err(CodecError::invalid_param(
                "heterogeneity_ratio",
                format!(
                    "expected a number of at least 1 (|∪|/|∩| is never below 1), got {heterogeneity_ratio}"
                ),
            ));
        }
        Ok(Columnar {
            min_rows,
            heterogeneity_ratio,
            max_field_chars: clip::limit_param(params, "max_field_chars", 2000)?,
            sample_rows: params.usize("sample_rows", 5)?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if !payload.is_json() {
            return Ok(Outcome::Unchanged);
        }
        let text = payload.text();
        Ok(Transformed::outcome(self.transform(text, level), text))
    }

    /// Rebuilds the rows of a lossless table: each row an object of its cells (in column
    /// order) and the constants. A query-result object gets its `rows` back in place. The text
    /// comes out compact.
    fn expand(&self, payload: &str) -> Result<String, CodecError> {
        expand(payload)
    }
}

inventory::submit! { crate::Builtin::validating::<Columnar>() }

/// Where the rows sit in the payload.
enum Shape<'a> {
    /// The payload is the array of rows.
    Rows,
    /// The payload is an object: its members as written, and which one is `rows`.
    Query {
        members: Vec<(RawStr<'a>, &'a str)>,
        rows_at: usize,
    },
}

impl Shape<'_> {
    /// The JSON Pointer of the array of rows in the payload.
    fn rows_pointer(&self) -> &'static str {
        match self {
            Shape::Rows => "",
            Shape::Query { .. } => "/rows",
        }
    }

    /// Writes the payload with `rows` replaced by what `body` writes; returns what `body`
    /// returns.
    fn write<T>(&self, out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>) -> T) -> T {
        let Shape::Query { members, rows_at } = self else {
            return body(out);
        };
        let write_member = |(key, value): &(RawStr<'_>, &str), out: &mut Vec<u8>| {
            out.extend_from_slice(key.raw().as_bytes());
            out.push(b':');
            parrot_json::write_compact(value, out);
        };
        let (before, after) = members.split_at((*rows_at).min(members.len()));
        out.push(b'{');
        for member in before {
            write_member(member, out);
            out.push(b',');
        }
        let mut after = after.iter();
        let rows_key = after.next().map_or("\"rows\"", |(key, _)| key.raw());
        out.extend_from_slice(rows_key.as_bytes());
        out.push(b':');
        let result = body(out);
        for member in after {
            out.push(b',');
            write_member(member, out);
        }
        out.push(b'}');
        result
    }
}

/// One column: its name as first written and what the rows hold in it.
struct Column<'a> {
    name: RawStr<'a>,
    /// Rows that have the key.
    present: usize,
    /// Rows where the value is not `null`.
    non_null: usize,
    /// The value in the first row that has the key.
    first: &'a str,
    /// Every row that has the key has `first` there.
    uniform: bool,
    /// The last row that had the key (a second member of the same name is a duplicate).
    last_row: usize,
}

/// The rows as read: cells borrowed from the input.
#[derive(Default)]
struct Table<'a> {
    columns: Vec<Column<'a>>,
    /// Column by decoded name.
    index: HashMap<Cow<'a, str>, usize, foldhash::fast::RandomState>,
    /// `(column, value as written)`, row after row, members in their order.
    cells: Vec<(usize, &'a str)>,
    /// Where each row's cells end in `cells`.
    row_ends: Vec<usize>,
    /// A cell holds an object or an array.
    nested: bool,
}

/// How a column appears in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Null or absent in every row, at a level that allows loss.
    Dropped,
    /// The same value in every row.
    Constant,
    /// A column of `rows`.
    Cell,
}

/// Reads a payload of an accepted shape: `Ok(None)` for any other shape, or (when
/// `stop_on_nested`) at the first nested cell.
fn read(
    text: &str,
    stop_on_nested: bool,
) -> Result<Option<(Shape<'_>, Table<'_>)>, parrot_json::Error> {
    let mut reader = Reader::new(text);
    reader.skip_ws();
    let found = match reader.peek() {
        Some(b'[') => read_rows(&mut reader, 0, stop_on_nested)?.map(|table| (Shape::Rows, table)),
        Some(b'{') => read_query(&mut reader, stop_on_nested)?,
        _ => None,
    };
    if found.is_some() {
        reader.finish()?;
    }
    Ok(found)
}

fn read_query<'a>(
    reader: &mut Reader<'a>,
    stop_on_nested: bool,
) -> Result<Option<(Shape<'a>, Table<'a>)>, parrot_json::Error> {
    reader.bump();
    let mut members = Vec::new();
    let mut rows = None;
    if !reader.empty_container(b'}') {
        loop {
            let key = reader.string()?;
            reader.expect(b':')?;
            reader.skip_ws();
            let start = reader.pos();
            if rows.is_none() && reader.peek() == Some(b'[') && key.is("rows") {
                let Some(table) = read_rows(reader, 1, stop_on_nested)? else {
                    return Ok(None);
                };
                rows = Some((members.len(), table));
            } else {
                reader.skip_value(1)?;
            }
            members.push((key, reader.slice(start, reader.pos())));
            if !reader.next_or_close(b'}')? {
                break;
            }
        }
    }
    let keys: Vec<RawStr<'a>> = members.iter().map(|(key, _)| *key).collect();
    if !parrot_json::all_distinct(&keys) {
        return Err(parrot_json::Error::DuplicateName);
    }
    Ok(rows.map(|(rows_at, table)| (Shape::Query { members, rows_at }, table)))
}

/// Reads an array of row objects (the reader at `[`); `Ok(None)` when an element is not an
/// object, or at the first nested cell when `stop_on_nested`.
fn read_rows<'a>(
    reader: &mut Reader<'a>,
    depth: usize,
    stop_on_nested: bool,
) -> Result<Option<Table<'a>>, parrot_json::Error> {
    reader.bump();
    let mut table = Table::default();
    if reader.empty_container(b']') {
        return Ok(Some(table));
    }
    loop {
        if reader.peek() != Some(b'{') {
            return Ok(None);
        }
        if !table.read_row(reader, depth + 1, stop_on_nested)? {
            return Ok(None);
        }
        if !reader.next_or_close(b']')? {
            return Ok(Some(table));
        }
    }
}

impl<'a> Table<'a> {
    fn row_count(&self) -> usize {
        self.row_ends.len()
    }

    /// The cells of each row.
    fn rows(&self) -> impl Iterator<Item = &[(usize, &'a str)]> {
        let starts = std::iter::once(0).chain(self.row_ends.iter().copied());
        starts
            .zip(self.row_ends.iter().copied())
            .map(|(start, end)| self.cells.get(start..end).unwrap_or_default())
    }

    /// Reads one row object (the reader at `{`); false when `stop_on_nested` and a cell is
    /// nested.
    fn read_row(
        &mut self,
        reader: &mut Reader<'a>,
        depth: usize,
        stop_on_nested: bool,
    ) -> Result<bool, parrot_json::Error> {
        reader.bump();
        let row = self.row_ends.len();
        let row_start = self.cells.len();
        let previous_start = row
            .checked_sub(2)
            .and_then(|before| self.row_ends.get(before))
            .copied()
            .unwrap_or(0);
        if !reader.empty_container(b'}') {
            let mut member = 0;
            loop {
                let key = reader.string()?;
                reader.expect(b':')?;
                reader.skip_ws();
                let value = match reader.scalar()? {
                    Some(value) => value,
                    None if stop_on_nested => return Ok(false),
                    None => {
                        self.nested = true;
                        reader.skip_value(depth)?
                    }
                };
                // Rows usually repeat the previous row's keys in the same order: try that first.
                let guess = previous_start + member;
                let column = match self.cells.get(guess) {
                    Some(&(column, _))
                        if guess < row_start
                            && self
                                .columns
                                .get(column)
                                .is_some_and(|c| c.name.raw() == key.raw()) =>
                    {
                        column
                    }
                    _ => self.column_named(key),
                };
                let Some(stats) = self.columns.get_mut(column) else {
                    return Err(reader.error());
                };
                if stats.last_row == row {
                    return Err(parrot_json::Error::DuplicateName);
                }
                stats.last_row = row;
                stats.present += 1;
                if value != "null" {
                    stats.non_null += 1;
                }
                if stats.present == 1 {
                    stats.first = value;
                } else if stats.uniform && !parrot_json::scalar_eq(stats.first, value) {
                    stats.uniform = false;
                }
                self.cells.push((column, value));
                member += 1;
                if !reader.next_or_close(b'}')? {
                    break;
                }
            }
        }
        self.row_ends.push(self.cells.len());
        Ok(true)
    }

    /// The column of a member name, added if new.
    fn column_named(&mut self, key: RawStr<'a>) -> usize {
        let name = key.decoded();
        if let Some(&column) = self.index.get(name.as_ref()) {
            return column;
        }
        let column = self.columns.len();
        self.columns.push(Column {
            name: key,
            present: 0,
            non_null: 0,
            first: "",
            uniform: true,
            last_row: usize::MAX,
        });
        self.index.insert(name, column);
        column
    }

    /// Each column's role, and whether the roles drop information.
    fn roles(&self, allow_loss: bool) -> (Vec<Role>, bool) {
        let rows = self.row_count();
        let mut lossy = false;
        let roles = self
            .columns
            .iter()
            .map(|column| {
                if allow_loss && column.non_null == 0 {
                    lossy = true;
                    Role::Dropped
                } else if rows > 1 && column.present == rows && column.uniform {
                    Role::Constant
                } else {
                    // A missing key reads back as null: the table conflates the two.
                    lossy |= column.present < rows;
                    Role::Cell
                }
            })
            .collect();
        (roles, lossy)
    }

    /// Writes `{"columns", "rows", "constants"}`; returns whether information was dropped.
    /// The JSON Pointer, in the original, of row `row`'s cell of `column`, the rows being the
    /// array at `base`.
    fn cell_pointer(&self, base: &str, row: usize, column: usize) -> Option<String> {
        let name = self.columns.get(column)?.name.decoded();
        Some(format!(
            "{base}/{row}/{}",
            name.replace('~', "~0").replace('/', "~1")
        ))
    }

    /// Writes the table (`base`: the JSON Pointer of the rows in the original, named by the
    /// markers of clipped cells); returns whether it lost anything.
    fn write_table(&self, base: &str, allow_loss: bool, clip: usize, out: &mut Vec<u8>) -> bool {
        let (roles, mut lossy) = self.roles(allow_loss);
        self.write_columns(&roles, out);
        out.extend_from_slice(b",\"rows\":[");
        let mut slots = Vec::new();
        for (i, row) in self.rows().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            lossy |= self.write_row((base, i), row, &roles, clip, &mut slots, out);
        }
        out.push(b']');
        lossy |= self.write_constants(base, &roles, clip, out);
        out.push(b'}');
        lossy
    }

    /// Writes `{"columns":[…]`.
    fn write_columns(&self, roles: &[Role], out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"columns\":[");
        let cells = self
            .columns
            .iter()
            .zip(roles)
            .filter(|(_, role)| **role == Role::Cell);
        for (i, (column, _)) in cells.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            parrot_json::write_unescaped(column.name, out);
        }
        out.push(b']');
    }

    /// Writes `,"constants":{…}`; returns whether a value was clipped.
    fn write_constants(&self, base: &str, roles: &[Role], clip: usize, out: &mut Vec<u8>) -> bool {
        out.extend_from_slice(b",\"constants\":{");
        let mut clipped = false;
        let constants = self
            .columns
            .iter()
            .enumerate()
            .zip(roles)
            .filter(|(_, role)| **role == Role::Constant);
        for (i, ((index, column), _)) in constants.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            parrot_json::write_unescaped(column.name, out);
            out.push(b':');
            // A clipped constant names its cell in the first row that has it.
            let pointer = || {
                let row = self
                    .rows()
                    .position(|row| row.iter().any(|&(c, _)| c == index))?;
                self.cell_pointer(base, row, index)
            };
            clipped |= write_cell(column.first, clip, pointer, out);
        }
        out.push(b'}');
        clipped
    }

    /// Writes one row as an array of its `Cell` columns' values (`null` where the key is
    /// missing); returns whether a value was clipped.
    fn write_row(
        &self,
        (base, row_index): (&str, usize),
        row: &[(usize, &'a str)],
        roles: &[Role],
        clip: usize,
        slots: &mut Vec<Option<&'a str>>,
        out: &mut Vec<u8>,
    ) -> bool {
        let mut clipped = false;
        let mut first = true;
        let mut cell = |column: usize, value: &str, out: &mut Vec<u8>| {
            if !first {
                out.push(b',');
            }
            first = false;
            let pointer = || self.cell_pointer(base, row_index, column);
            clipped |= write_cell(value, clip, pointer, out);
        };
        out.push(b'[');
        let in_column_order = row.len() == self.columns.len()
            && row.iter().enumerate().all(|(i, &(column, _))| i == column);
        if in_column_order {
            for (&(column, value), role) in row.iter().zip(roles) {
                if *role == Role::Cell {
                    cell(column, value, out);
                }
            }
        } else {
            slots.clear();
            slots.resize(self.columns.len(), None);
            for &(column, value) in row {
                if let Some(slot) = slots.get_mut(column) {
                    *slot = Some(value);
                }
            }
            for (column, (slot, role)) in slots.iter().zip(roles).enumerate() {
                if *role == Role::Cell {
                    cell(column, slot.unwrap_or("null"), out);
                }
            }
        }
        out.push(b']');
        clipped
    }

    /// Writes the rows as objects without their `null` members; returns whether any member was
    /// dropped.
    fn write_without_nulls(&self, out: &mut Vec<u8>) -> bool {
        let mut dropped = false;
        out.push(b'[');
        for (i, row) in self.rows().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'{');
            let mut first = true;
            for &(column, value) in row {
                if value == "null" {
                    dropped = true;
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                let name = self.columns.get(column).map_or("\"\"", |c| c.name.raw());
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
                parrot_json::write_compact(value, out);
            }
            out.push(b'}');
        }
        out.push(b']');
        dropped
    }

    /// Writes the aggressive summary.
    fn write_summary(&self, base: &str, clip: usize, sample_rows: usize, out: &mut Vec<u8>) {
        let (roles, _) = self.roles(true);
        let rows = self.row_count();
        self.write_columns(&roles, out);
        out.extend_from_slice(format!(",\"row_count\":{rows}").as_bytes());
        self.write_constants(base, &roles, clip, out);

        let mut stats: Vec<Option<ColumnStats<'a>>> = roles
            .iter()
            .map(|role| {
                (*role == Role::Cell).then(|| ColumnStats {
                    rows,
                    ..ColumnStats::default()
                })
            })
            .collect();
        for (index, &(column, value)) in self.cells.iter().enumerate() {
            if let Some(Some(stats)) = stats.get_mut(column) {
                stats.add(value, index, &self.cells);
            }
        }
        out.extend_from_slice(b",\"stats\":{");
        let described = self
            .columns
            .iter()
            .zip(&stats)
            .filter_map(|(column, stats)| stats.as_ref().map(|stats| (column, stats)));
        for (i, (column, stats)) in described.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            parrot_json::write_unescaped(column.name, out);
            let nulls = rows - column.non_null;
            let distinct = stats.distinct.len();
            out.extend_from_slice(
                format!(":{{\"nulls\":{nulls},\"distinct\":{distinct}").as_bytes(),
            );
            if let (Some(min), Some(max)) = (&stats.min, &stats.max) {
                out.extend_from_slice(b",\"min\":");
                write_cell(min.text, clip, || None, out);
                out.extend_from_slice(b",\"max\":");
                write_cell(max.text, clip, || None, out);
            }
            out.push(b'}');
        }
        out.push(b'}');

        let sample = sample_rows.min(rows);
        let mut slots = Vec::new();
        for (name, skip) in [("head", 0), ("tail", rows - sample)] {
            out.extend_from_slice(format!(",\"{name}\":[").as_bytes());
            for (i, row) in self.rows().skip(skip).take(sample).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                self.write_row((base, skip + i), row, &roles, clip, &mut slots, out);
            }
            out.push(b']');
        }
        // The rows between the head and the tail: how many, and the selector of the recovery
        // call that returns exactly them.
        if rows > 2 * sample {
            let (first, last) = (sample, rows - sample - 1);
            out.extend_from_slice(
                format!(",\"_omitted\":{},\"_get\":{{", last + 1 - first).as_bytes(),
            );
            if !base.is_empty() {
                out.extend_from_slice(format!("\"pointer\":\"{base}\",").as_bytes());
            }
            out.extend_from_slice(format!("\"rows\":\"{first}-{last}\"}}").as_bytes());
        }
        out.push(b'}');
    }
}

/// Writes a cell value, clipping a long string, a string with only the escapes JSON requires
/// (as `json_compact` writes it); returns whether it clipped.
fn write_cell(
    value: &str,
    clip: usize,
    pointer: impl FnOnce() -> Option<String>,
    out: &mut Vec<u8>,
) -> bool {
    // A string has at least as many bytes as code points: only a longer one may need clipping.
    if clip > 0 && value.len() > clip + 2 && value.starts_with('"') {
        let string = Reader::new(value).string();
        if let Ok(string) = string {
            return clip::write_clipped(string, clip, pointer, out);
        }
    }
    if value.starts_with('"')
        && value.contains('\\')
        && let Ok(string) = Reader::new(value).string()
    {
        parrot_json::write_unescaped(string, out);
        return false;
    }
    out.extend_from_slice(value.as_bytes());
    false
}

/// The value statistics of one column of the summary.
#[derive(Default)]
struct ColumnStats<'a> {
    /// The distinct non-null values, each as one text: numbers and booleans as written, strings
    /// as `"decoded value"` (so `"A"` and `"\u0041"` are one value, and `"1"` is not `1`).
    /// Each is held as the index of its first cell in the table's cells, with [`ESCAPED`] set
    /// when that cell is a string holding an escape: 4 bytes a value, so the set of a column of
    /// distinct ids stays small enough to be reused from one call to the next.
    distinct: HashTable<u32>,
    /// The table's row count: a column that shows many distinct values early is sized for
    /// all its rows at once.
    rows: usize,
    /// The kind all non-null values share so far.
    kind: Option<Kind>,
    /// The least and the greatest value so far (while the kind allows them).
    min: Option<Extreme<'a>>,
    max: Option<Extreme<'a>>,
}

/// A value as written and as it orders: each value is decoded once, and a running minimum or
/// maximum is compared in its decoded form.
#[derive(Clone)]
struct Extreme<'a> {
    text: &'a str,
    order: Order<'a>,
}

/// What a value orders by: a number by value, a string by the code points of its contents.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Order<'a> {
    Number(parrot_json::Number<'a>),
    String(Cow<'a, str>),
}

/// What kind of values a column holds, for `min` and `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    String,
    /// Booleans, or values of more than one kind: no `min`/`max`.
    Other,
}

/// The bit of a [`ColumnStats::distinct`] entry set when its cell is a string with an escape.
const ESCAPED: u32 = 1 << 31;

/// After this many distinct values a column's set is sized for every row.
const MANY_DISTINCT: usize = 64;

/// The text a value counts as distinct by: numbers and booleans as written, a string with an
/// escape as `"decoded value"`.
fn distinct_form(value: &str, escaped: bool) -> Cow<'_, str> {
    if escaped {
        quoted(&decoded_string(value))
    } else {
        Cow::Borrowed(value)
    }
}

/// A string's decoded contents in quotes: the distinct form of a string with an escape.
fn quoted<'v>(decoded: &str) -> Cow<'v, str> {
    Cow::Owned(format!("\"{decoded}\""))
}

impl<'a> ColumnStats<'a> {
    /// Counts `value`, the cell at `index` in `cells`.
    fn add(&mut self, value: &'a str, index: usize, cells: &[(usize, &'a str)]) {
        let kind = match value.as_bytes().first() {
            Some(b'n') => return,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Other,
            _ => Kind::Number,
        };
        // A string's contents, decoded once (for the distinct set and for its order).
        let contents = (kind == Kind::String).then(|| {
            // Cells are short: a loop without an early exit (which the compiler vectorizes)
            // beats a call to a search routine.
            if value.bytes().fold(false, |seen, b| seen | (b == b'\\')) {
                decoded_string(value)
            } else {
                Cow::Borrowed(between_quotes(value))
            }
        });
        // A string with an escape was decoded above: its distinct form is made from that.
        let (form, escaped) = match &contents {
            Some(Cow::Owned(decoded)) => (quoted(decoded), true),
            _ => (Cow::Borrowed(value), false),
        };
        self.count_distinct(value, form, index, escaped, cells);
        match self.kind {
            Some(shared) if shared != kind || kind == Kind::Other => {
                self.kind = Some(Kind::Other);
                self.min = None;
                self.max = None;
                return;
            }
            None if kind == Kind::Other => {
                self.kind = Some(Kind::Other);
                return;
            }
            Some(Kind::Other) => return,
            _ => {}
        }
        self.kind = Some(kind);
        let order = match contents {
            Some(contents) => Order::String(contents),
            None => Order::Number(parrot_json::Number::parse(value)),
        };
        let less = self.min.as_ref().is_none_or(|min| order < min.order);
        let greater = self.max.as_ref().is_none_or(|max| order > max.order);
        match (less, greater) {
            (true, true) => {
                self.max = Some(Extreme {
                    text: value,
                    order: order.clone(),
                });
                self.min = Some(Extreme { text: value, order });
            }
            (true, false) => self.min = Some(Extreme { text: value, order }),
            (false, true) => self.max = Some(Extreme { text: value, order }),
            (false, false) => {}
        }
    }
}

impl ColumnStats<'_> {
    /// Adds `value` (the cell at `index`, its distinct form `form`) to the distinct set
    /// unless an equal one is there.
    fn count_distinct(
        &mut self,
        value: &str,
        form: Cow<'_, str>,
        index: usize,
        escaped: bool,
        cells: &[(usize, &str)],
    ) {
        let hasher = foldhash::fast::FixedState::default();
        // The entry's cell and its escape bit.
        let stored = |entry: u32| {
            let cell = cells.get((entry & !ESCAPED) as usize).map_or("", |c| c.1);
            (cell, entry & ESCAPED != 0)
        };
        // An entry's hash, when the table grows.
        let rehash = |&entry: &u32| {
            let (cell, cell_escaped) = stored(entry);
            hasher.hash_one(distinct_form(cell, cell_escaped))
        };
        let hash = hasher.hash_one(&form);
        let equal = |&entry: &u32| {
            let (cell, cell_escaped) = stored(entry);
            cell == value
                || ((escaped || cell_escaped) && distinct_form(cell, cell_escaped) == form)
        };
        if self.distinct.find(hash, equal).is_some() {
            return;
        }
        if self.distinct.len() == MANY_DISTINCT {
            self.distinct.reserve(self.rows, rehash);
        }
        let entry = index as u32 | if escaped { ESCAPED } else { 0 };
        self.distinct.insert_unique(hash, entry, rehash);
    }
}

/// The decoded value of a string written as JSON (checked by the reader), without its quotes.
fn decoded_string(text: &str) -> Cow<'_, str> {
    parrot_json::decode_string(text).unwrap_or(Cow::Borrowed(text))
}

fn between_quotes(text: &str) -> &str {
    text.get(1..text.len().saturating_sub(1)).unwrap_or("")
}

fn refuse(why: &str) -> CodecError {
    CodecError::invalid_input(format!("columnar cannot expand: {why}"))
}

fn expand(payload: &str) -> Result<String, CodecError> {
    let value =
        Value::parse_with_limit(payload, MAX_DEPTH + 4).map_err(|err| refuse(&err.to_string()))?;
    let mut out = Vec::with_capacity(payload.len().saturating_mul(3));
    match (&value, value.member("rows")) {
        (_, Some(Value::Array(_))) => expand_table(&value, &mut out).map_err(refuse)?,
        (Value::Object(members), Some(Value::Object(_))) => parrot_json::try_write_object(
            members.iter().map(|(name, member)| (name, member)),
            &mut out,
            |name, member, out| {
                if name.is("rows") {
                    expand_table(member, out).map_err(refuse)
                } else {
                    member.write(out);
                    Ok(())
                }
            },
        )?,
        _ => return Err(refuse("not a table (no `rows` array or object)")),
    }
    crate::into_text(out).ok_or_else(|| refuse("invalid UTF-8"))
}

/// Writes the rows of a `{"columns", "rows", "constants"}` table as an array of objects.
fn expand_table(table: &Value<'_>, out: &mut Vec<u8>) -> Result<(), &'static str> {
    let (
        Value::Object(members),
        Some(Value::Array(names)),
        Some(Value::Array(rows)),
        Some(Value::Object(constants)),
    ) = (
        table,
        table.member("columns"),
        table.member("rows"),
        table.member("constants"),
    )
    else {
        return Err("a table needs `columns` and `rows` arrays and a `constants` object");
    };
    if members.len() != 3 {
        return Err("a table has exactly the members `columns`, `rows` and `constants`");
    }
    let names = names
        .iter()
        .map(|name| match name {
            Value::String(name) => Ok(name),
            _ => Err("a column name is not a string"),
        })
        .collect::<Result<Vec<&Str<'_>>, _>>()?;
    out.push(b'[');
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let Value::Array(cells) = row else {
            return Err("a row is not an array");
        };
        if cells.len() != names.len() {
            return Err("a row does not have one value per column");
        }
        let members = names
            .iter()
            .copied()
            .zip(cells)
            .chain(constants.iter().map(|(name, value)| (name, value)));
        parrot_json::write_object(members, out);
    }
    out.push(b']');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(params: &str) -> Columnar {
        parrot_codec_api::build::<Columnar>(Params::from_json(params).unwrap()).unwrap()
    }

    /// `None`: passes through; else the output and whether it is lossy.
    fn transform(codec: &Columnar, input: &str, level: Level) -> Option<(String, bool)> {
        codec
            .transform(input, level)
            .map(|done| (done.text, done.lossy))
    }

    fn rows(objects: &[&str]) -> String {
        format!("[{}]", objects.join(","))
    }

    #[test]
    fn spec_example() {
        let input =
            r#"[{"id":0,"k":"v","n":null},{"id":1,"k":"v","n":null},{"id":2,"k":"v","n":null}]"#;
        let cases = [
            (
                Level::Normal,
                Some((
                    r#"{"columns":["id"],"rows":[[0],[1],[2]],"constants":{"k":"v"}}"#,
                    true,
                )),
            ),
            (
                Level::Minimal,
                Some((
                    r#"{"columns":["id"],"rows":[[0],[1],[2]],"constants":{"k":"v","n":null}}"#,
                    false,
                )),
            ),
            (Level::None, None),
        ];
        let codec = built(r#"{"min_rows": 2}"#);
        for (level, expected) in cases {
            let expected = expected.map(|(text, lossy)| (text.to_owned(), lossy));
            assert_eq!(transform(&codec, input, level), expected, "{level}");
        }
    }

    #[test]
    fn guards() {
        let same = |n: usize| -> String {
            let objects: Vec<String> = (0..n).map(|i| format!(r#"{{"id":{i},"k":"v"}}"#)).collect();
            format!("[{}]", objects.join(","))
        };
        let three = rows(&[
            r#"{"id":0,"k":"v"}"#,
            r#"{"id":1,"k":"v"}"#,
            r#"{"id":2,"k":"v"}"#,
        ]);
        let table3 = r#"{"columns":["id"],"rows":[[0],[1],[2]],"constants":{"k":"v"}}"#;
        // |∪| = 3, |∩| = 2: a ratio of exactly 1.5.
        let ratio_1_5 = rows(&[
            r#"{"a":1,"b":2,"c":3}"#,
            r#"{"a":4,"b":5}"#,
            r#"{"a":6,"b":7}"#,
        ]);
        // |∪| = 4, |∩| = 2: 2 > 1.5.
        let ratio_2 = rows(&[
            r#"{"a":1,"b":2,"c":3}"#,
            r#"{"a":4,"b":5,"d":null}"#,
            r#"{"a":6,"b":7}"#,
        ]);
        let no_shared_key = rows(&[r#"{"a":1,"x":null}"#, r#"{"b":2}"#, r#"{"c":3}"#]);
        let nested = rows(&[
            r#"{"a":1,"n":{"x":null}}"#,
            r#"{"a":2,"n":[1, 2]}"#,
            r#"{"a":3,"n":null}"#,
        ]);
        // |∪| = 4, |∩| = 2: a table at ratio 2, but the key sets differ.
        let mismatch = rows(&[
            r#"{"a":1,"b":2,"c":3}"#,
            r#"{"a":4,"b":5,"c":6}"#,
            r#"{"a":7,"b":8,"d":9}"#,
        ]);
        let reordered = rows(&[r#"{"a":1,"b":2}"#, r#"{"b":4,"a":3}"#, r#"{"a":5,"b":6}"#]);
        // (what, input, params, level, expected output and lossy flag; `None`: passthrough)
        type Expected<'a> = Option<(&'a str, bool)>;
        let cases: Vec<(&str, String, &str, Level, Expected<'_>)> = vec![
            // Guard 1: min_rows, and exactly min_rows.
            (
                "fewer rows than min_rows",
                same(2),
                r#"{"min_rows": 3}"#,
                Level::Minimal,
                None,
            ),
            (
                "exactly min_rows",
                three.clone(),
                r#"{"min_rows": 3}"#,
                Level::Minimal,
                Some((table3, false)),
            ),
            (
                "a single row: no constants",
                same(1),
                r#"{"min_rows": 1}"#,
                Level::Minimal,
                Some((
                    r#"{"columns":["id","k"],"rows":[[0,"v"]],"constants":{}}"#,
                    false,
                )),
            ),
            (
                "an empty array",
                "[]".into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            // Guard 2: a ratio of exactly 1.5 is a table; at minimal the key sets still differ.
            (
                "ratio 1.5 at minimal",
                ratio_1_5.clone(),
                r#"{"min_rows": 3}"#,
                Level::Minimal,
                None,
            ),
            (
                "ratio 1.5 at normal",
                ratio_1_5.clone(),
                r#"{"min_rows": 3}"#,
                Level::Normal,
                Some((
                    r#"{"columns":["a","b","c"],"rows":[[1,2,3],[4,5,null],[6,7,null]],"constants":{}}"#,
                    true,
                )),
            ),
            (
                "ratio 1.5 with a lower bound",
                ratio_1_5.clone(),
                r#"{"min_rows": 3, "heterogeneity_ratio": 1.4}"#,
                Level::Normal,
                None,
            ),
            (
                "ratio 2: null elision only",
                ratio_2,
                r#"{"min_rows": 3}"#,
                Level::Normal,
                Some((r#"[{"a":1,"b":2,"c":3},{"a":4,"b":5},{"a":6,"b":7}]"#, true)),
            ),
            (
                "no shared key at minimal",
                no_shared_key.clone(),
                r#"{"min_rows": 3}"#,
                Level::Minimal,
                None,
            ),
            (
                "no shared key at aggressive",
                no_shared_key,
                r#"{"min_rows": 3}"#,
                Level::Aggressive,
                Some((r#"[{"a":1},{"b":2},{"c":3}]"#, true)),
            ),
            // Guard 3: nested values; elision touches row members only.
            (
                "nested at minimal",
                nested.clone(),
                r#"{"min_rows": 3}"#,
                Level::Minimal,
                None,
            ),
            (
                "nested at normal",
                nested,
                r#"{"min_rows": 3}"#,
                Level::Normal,
                Some((
                    r#"[{"a":1,"n":{"x":null}},{"a":2,"n":[1,2]},{"a":3}]"#,
                    true,
                )),
            ),
            (
                "nested without nulls passes through",
                rows(&[r#"{"a":1,"n":[]}"#, r#"{"a":2,"n":[]}"#]),
                r#"{"min_rows": 2}"#,
                Level::Normal,
                None,
            ),
            // Guard 4: key sets must be identical at minimal; member order does not count.
            (
                "key-set mismatch at minimal",
                mismatch.clone(),
                r#"{"min_rows": 3, "heterogeneity_ratio": 2}"#,
                Level::Minimal,
                None,
            ),
            (
                "key-set mismatch at normal",
                mismatch,
                r#"{"min_rows": 3, "heterogeneity_ratio": 2}"#,
                Level::Normal,
                Some((
                    r#"{"columns":["a","b","c","d"],"rows":[[1,2,3,null],[4,5,6,null],[7,8,null,9]],"constants":{}}"#,
                    true,
                )),
            ),
            (
                "member order differs",
                reordered,
                r#"{"min_rows": 3}"#,
                Level::Minimal,
                Some((
                    r#"{"columns":["a","b"],"rows":[[1,2],[3,4],[5,6]],"constants":{}}"#,
                    false,
                )),
            ),
            // Not rows: passthrough at every level.
            (
                "an array of scalars",
                "[1,2,3]".into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            (
                "mixed elements",
                r#"[{"a":1},2]"#.into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            (
                "an object without rows",
                r#"{"a":[{"b":1}]}"#.into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            (
                "rows that are not an array",
                r#"{"rows":{"b":1}}"#.into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            (
                "a duplicate key in a row",
                r#"[{"a":1,"a":2},{"a":1}]"#.into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            (
                "a duplicate escaped key",
                r#"[{"a":1,"\u0061":2},{"a":1}]"#.into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            (
                "a duplicate rows member",
                r#"{"rows":[{"a":1}],"rows":[]}"#.into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
            (
                "not JSON",
                r#"[{"a":1},"#.into(),
                r#"{"min_rows": 1}"#,
                Level::Normal,
                None,
            ),
        ];
        for (name, input, params, level, expected) in cases {
            let expected = expected.map(|(text, lossy)| (text.to_owned(), lossy));
            assert_eq!(transform(&built(params), &input, level), expected, "{name}");
        }
    }

    #[test]
    fn query_result_shape_keeps_the_other_members() {
        let input = r#"{ "driver": "pg", "rows": [ {"id": 1, "ok": true}, {"id": 2, "ok": true} ],
                         "columns": ["x"], "meta": {"rows": 2, "n": null} }"#;
        let output = r#"{"driver":"pg","rows":{"columns":["id"],"rows":[[1],[2]],"constants":{"ok":true}},"columns":["x"],"meta":{"rows":2,"n":null}}"#;
        let codec = built(r#"{"min_rows": 2}"#);
        assert_eq!(
            transform(&codec, input, Level::Minimal),
            Some((output.to_owned(), false))
        );
        assert_eq!(
            codec.expand(output).unwrap(),
            r#"{"driver":"pg","rows":[{"id":1,"ok":true},{"id":2,"ok":true}],"columns":["x"],"meta":{"rows":2,"n":null}}"#
        );
        // Too few rows in the query shape: passthrough.
        assert_eq!(transform(&built("{}"), input, Level::Normal), None);
    }

    #[test]
    fn json_text_input() {
        // Pretty-printed JSON text, as a file or a tool's string result gives it.
        let input = "[\n  {\"id\": 1, \"k\": \"v\"},\n  {\"id\": 2, \"k\": \"v\"},\n  {\"id\": 3, \"k\": \"v\"}\n]\n";
        let table = r#"{"columns":["id"],"rows":[[1],[2],[3]],"constants":{"k":"v"}}"#;
        let codec = built(r#"{"min_rows": 2}"#);
        let cases = [
            (Payload::json(input), Outcome::lossless(table)),
            // Labelled text by the host (not JSON, or nested too deeply for its parser).
            (Payload::text_only(input), Outcome::Unchanged),
            (
                Payload::text_only("id,k\n1,v\n2,v\n3,v"),
                Outcome::Unchanged,
            ),
        ];
        for (payload, expected) in cases {
            for level in [Level::Minimal, Level::Normal] {
                assert_eq!(
                    codec.compress(payload, level).unwrap(),
                    expected,
                    "{payload:?} at {level}"
                );
            }
        }
    }

    #[test]
    fn constants_use_exact_equality() {
        let input = rows(&[
            r#"{"n":1,"s":"A","b":true,"m":1}"#,
            r#"{"n":1.0,"s":"\u0041","b":true,"m":1}"#,
            r#"{"n":true,"s":"A","b":true,"m":1}"#,
        ]);
        let codec = built(r#"{"min_rows": 2}"#);
        assert_eq!(
            transform(&codec, &input, Level::Minimal),
            Some((
                r#"{"columns":["n"],"rows":[[1],[1.0],[true]],"constants":{"s":"A","b":true,"m":1}}"#.to_owned(),
                false
            ))
        );
    }

    #[test]
    fn names_and_cells_lose_the_escapes_json_does_not_require() {
        let input = rows(&[
            r#"{"\u0063ity":"K\u00f6ln","note":"a\"b\\c\u0001","n":1}"#,
            r#"{"\u0063ity":"\u6771\u4eac \ud83d\ude00","note":"\/","n":2}"#,
        ]);
        let codec = built(r#"{"min_rows": 2}"#);
        let expected = "{\"columns\":[\"city\",\"note\",\"n\"],\"rows\":[[\"Köln\",\"a\\\"b\\\\c\\u0001\",1],\
                        [\"東京 😀\",\"/\",2]],\"constants\":{}}";
        let (out, lossy) = transform(&codec, &input, Level::Minimal).expect("a table");
        assert_eq!((out.as_str(), lossy), (expected, false));
        assert!(parrot_json::equivalent(
            &codec.expand(&out).unwrap(),
            &input,
            false
        ));
    }

    #[test]
    fn normal_clips_long_cells() {
        let long = "x".repeat(60);
        let clipped = format!("{}[… 41 chars clipped …]{}", "x".repeat(13), "x".repeat(6));
        let input = rows(&[
            &format!(r#"{{"id":1,"s":"{long}","c":"{long}"}}"#),
            &format!(r#"{{"id":2,"s":"short","c":"{long}"}}"#),
        ]);
        let codec = built(r#"{"min_rows": 2, "max_field_chars": 41}"#);
        let expected = format!(
            r#"{{"columns":["id","s"],"rows":[[1,"{clipped}"],[2,"short"]],"constants":{{"c":"{clipped}"}}}}"#
        );
        assert_eq!(
            transform(&codec, &input, Level::Normal),
            Some((expected, true))
        );
        let minimal = format!(
            r#"{{"columns":["id","s"],"rows":[[1,"{long}"],[2,"short"]],"constants":{{"c":"{long}"}}}}"#
        );
        assert_eq!(
            transform(&codec, &input, Level::Minimal),
            Some((minimal.clone(), false))
        );
        // Nothing to drop, nothing long: lossless at normal too.
        assert_eq!(
            transform(&built(r#"{"min_rows": 2}"#), &input, Level::Normal),
            Some((minimal, false))
        );
    }

    #[test]
    fn a_clipped_cell_names_its_pointer() {
        let long = "z".repeat(3000);
        let input = format!(
            r#"{{"rows": [{{"id": 1, "a/b": "x"}}, {{"id": 2, "a/b": "{long}"}}], "n": 2}}"#
        );
        let (out, lossy) = transform(&built(r#"{"min_rows": 2}"#), &input, Level::Normal).unwrap();
        assert!(lossy);
        assert!(
            out.contains("[… 1046 chars clipped; pointer /rows/1/a~1b …]"),
            "{out}"
        );
    }

    #[test]
    fn aggressive_counts_distinct_values_exactly() {
        // 100 distinct ids (past the point where a column's set is sized for every row), and
        // strings equal once decoded: `"A"` and `"\u0041"` are one value, `"y\n"` and
        // `"y\u000a"` one, `"\\"` another; numbers count as written (`1` and `1.0` are two).
        let cells = [
            r#""A""#,
            r#""\u0041""#,
            r#""y\n""#,
            r#""y\u000a""#,
            r#""\\""#,
        ];
        let lines: Vec<String> = (0..100)
            .map(|i| {
                let n = if i % 2 == 0 { "1" } else { "1.0" };
                format!(r#"{{"id":{i},"s":{},"n":{n}}}"#, cells[i % 5])
            })
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let codec = built(r#"{"min_rows": 2, "sample_rows": 1}"#);
        let (out, lossy) = transform(&codec, &rows(&refs), Level::Aggressive).unwrap();
        assert!(lossy);
        assert!(
            out.contains(r#""id":{"nulls":0,"distinct":100,"min":0,"max":99}"#),
            "{out}"
        );
        assert!(
            out.contains(r#""s":{"nulls":0,"distinct":3,"min":"A","max":"y\n"}"#),
            "{out}"
        );
        assert!(
            out.contains(r#""n":{"nulls":0,"distinct":2,"min":1,"max":1}"#),
            "{out}"
        );
    }

    #[test]
    fn aggressive_summarizes() {
        let input = rows(&[
            r#"{"id":3,"name":"b","k":"v","flag":true,"n":null,"mixed":1,"big":123456789012345678901}"#,
            r#"{"id":1,"name":"c","k":"v","flag":false,"n":null,"mixed":"1","big":123456789012345678902}"#,
            r#"{"id":2,"name":"a","k":"v","flag":true,"n":null,"big":1E400}"#,
            r#"{"id":1.0,"name":null,"k":"v","flag":true,"mixed":null,"big":-1}"#,
        ]);
        let codec = built(r#"{"min_rows": 2, "sample_rows": 1}"#);
        let expected = concat!(
            r#"{"columns":["id","name","flag","mixed","big"],"row_count":4,"constants":{"k":"v"},"#,
            r#""stats":{"id":{"nulls":0,"distinct":4,"min":1,"max":3},"#,
            r#""name":{"nulls":1,"distinct":3,"min":"a","max":"c"},"#,
            r#""flag":{"nulls":0,"distinct":2},"#,
            r#""mixed":{"nulls":2,"distinct":2},"#,
            r#""big":{"nulls":0,"distinct":4,"min":-1,"max":1E400}},"#,
            r#""head":[[3,"b",true,1,123456789012345678901]],"#,
            r#""tail":[[1.0,null,true,null,-1]],"_omitted":2,"_get":{"rows":"1-2"}}"#,
        );
        assert_eq!(
            transform(&codec, &input, Level::Aggressive),
            Some((expected.to_owned(), true))
        );
    }

    #[test]
    fn the_issue_numbers_survive_every_level() {
        let row = r#"{"id": 123456789012345678901, "x": 0.100000000000000000000000000001}"#;
        let input = rows(&[row, row]);
        let codec = built(r#"{"min_rows": 2}"#);
        let cases = [
            (
                Level::Minimal,
                r#"{"columns":[],"rows":[[],[]],"constants":{"id":123456789012345678901,"x":0.100000000000000000000000000001}}"#,
            ),
            (
                Level::Normal,
                r#"{"columns":[],"rows":[[],[]],"constants":{"id":123456789012345678901,"x":0.100000000000000000000000000001}}"#,
            ),
            (
                Level::Aggressive,
                r#"{"columns":[],"row_count":2,"constants":{"id":123456789012345678901,"x":0.100000000000000000000000000001},"stats":{},"head":[[],[]],"tail":[[],[]]}"#,
            ),
        ];
        for (level, output) in cases {
            let got = transform(&codec, &input, level).map(|(text, _)| text);
            assert_eq!(got.as_deref(), Some(output), "{level}");
        }
    }

    #[test]
    fn params_are_checked_at_construction() {
        let cases = [
            (
                r#"{"min_rows": 0}"#,
                "param \"min_rows\": expected a positive integer, got a number (0)",
            ),
            (
                r#"{"heterogeneity_ratio": 0.5}"#,
                "param \"heterogeneity_ratio\": expected a number of at least 1 (|∪|/|∩| is never below 1), got 0.5",
            ),
            (
                r#"{"heterogeneity_ratio": "1.5"}"#,
                "param \"heterogeneity_ratio\": expected a number, got a string (\"1.5\")",
            ),
            (
                r#"{"max_field_chars": 40}"#,
                "param \"max_field_chars\": expected 0 (no clipping) or at least 41 (room for the clip marker), got 40",
            ),
            (
                r#"{"sample_rows": true}"#,
                "param \"sample_rows\": expected a non-negative integer, got a boolean (true)",
            ),
            (
                r#"{"min_row": 5}"#,
                "param \"min_row\": unknown key; did you mean \"min_rows\"? \
                 (known: min_rows, heterogeneity_ratio, max_field_chars, sample_rows)",
            ),
        ];
        for (params, message) in cases {
            let err = parrot_codec_api::build::<Columnar>(Params::from_json(params).unwrap())
                .unwrap_err();
            assert_eq!(err.to_string(), message, "{params}");
        }
    }

    #[test]
    fn corpus_query_result_round_trips() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/query-500x12.json");
        let text = &std::fs::read_to_string(path).expect("the repository's corpus");
        let codec = built("{}");
        let out = codec.compress(Payload::json(text), Level::Minimal).unwrap();
        let Outcome::Changed {
            payload,
            lossy: false,
        } = out
        else {
            panic!("expected a lossless table, got {out:?}");
        };
        assert!(
            payload.len() * 2 < text.len(),
            "{} of {}",
            payload.len(),
            text.len()
        );
        let expanded: serde_json::Value =
            serde_json::from_str(&codec.expand(&payload).unwrap()).unwrap();
        let original: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(expanded, original);
        // At normal the all-null column goes: lossy.
        assert!(
            codec
                .compress(Payload::json(text), Level::Normal)
                .unwrap()
                .is_lossy()
        );
    }

    #[test]
    fn expand_refuses_what_it_cannot_read() {
        let codec = built("{}");
        let cases = [
            "[1]",
            r#"{"columns":["a"],"rows":[[1,2]],"constants":{}}"#,
            r#"{"columns":[1],"rows":[[1]],"constants":{}}"#,
            r#"{"columns":["a"],"rows":[1],"constants":{}}"#,
            r#"{"columns":["a"],"rows":[[1]]}"#,
            r#"{"columns":["a"],"rows":[[1]],"constants":{},"x":1}"#,
            r#"{"driver":"pg","rows":{"columns":["a"]}}"#,
            "{",
        ];
        for payload in cases {
            assert!(codec.expand(payload).is_err(), "{payload}");
        }
    }
}
