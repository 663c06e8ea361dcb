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
use std::hash::{BuildHasher as _, Hasher as _};

use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};

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
        if !level.allows_change() {
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
        // The summary is small whatever the rows; the other outputs are about the input's size.
        let summary = level == Level::Aggressive && !heterogeneous && !table.nested;
        let mut out = Vec::with_capacity(if summary { 0 } else { text.len() });
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

impl Columnar {
    /// Rebuilds the rows of a lossless table: each row an object of its cells (in column
    /// order) and the constants. A query-result object gets its `rows` back in place. The text
    /// comes out compact.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput` when `payload` is not an outcome of this codec.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        expand(payload)
    }
}

impl Codec for Columnar {
    const NAME: &'static str = "columnar";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);

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
    /// The name as last written, to match the next row's.
    written: Written<'a>,
    /// Rows that have the key.
    present: usize,
    /// Rows where the value is not `null`.
    non_null: usize,
    /// The kinds of its other values ([`STRINGS`], [`NUMBERS`], [`OTHERS`], and [`ESCAPES`]
    /// when a string holds an escape).
    kinds: u8,
    /// The value in the first row that has the key.
    first: &'a str,
    /// Every row that has the key has `first` there.
    uniform: bool,
    /// The last row that had the key (a second member of the same name is a duplicate).
    last_row: usize,
}

/// A member name as written (quotes included), with the whitespace and the colon around it
/// as a row last wrote them, held so as to match them at a place in the text cheaply: the same
/// bytes there are the same name, and read the member up to its value.
struct Written<'a> {
    raw: &'a [u8],
    /// Its bytes as a little-endian integer, and the mask of those bytes, when it has at most
    /// 16 (one compare of a 16-byte load, no loop and no call).
    word: Option<(u128, u128)>,
}

impl<'a> Written<'a> {
    fn new(raw: &'a str) -> Self {
        let raw = raw.as_bytes();
        let word = (1..=16).contains(&raw.len()).then(|| {
            let mut bytes = [0u8; 16];
            let mut mask = [0u8; 16];
            for ((byte, mask), &b) in bytes.iter_mut().zip(&mut mask).zip(raw) {
                (*byte, *mask) = (b, 0xff);
            }
            (u128::from_le_bytes(bytes), u128::from_le_bytes(mask))
        });
        Written { raw, word }
    }

    fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether `text` goes on with this name at `at`.
    #[inline]
    fn is_next(&self, text: &[u8], at: usize) -> bool {
        let window = text
            .get(at..at + 16)
            .and_then(|window| <[u8; 16]>::try_from(window).ok());
        match (window, self.word) {
            (Some(window), Some((word, mask))) => (u128::from_le_bytes(window) ^ word) & mask == 0,
            _ => !self.raw.is_empty() && text.get(at..at + self.raw.len()) == Some(self.raw),
        }
    }
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
        Some(b'[') => {
            read_rows(&mut reader, text, 0, stop_on_nested)?.map(|table| (Shape::Rows, table))
        }
        Some(b'{') => read_query(&mut reader, text, stop_on_nested)?,
        _ => None,
    };
    if found.is_some() {
        reader.finish()?;
    }
    Ok(found)
}

fn read_query<'a>(
    reader: &mut Reader<'a>,
    text: &'a str,
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
                let Some(table) = read_rows(reader, text, 1, stop_on_nested)? else {
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
    text: &'a str,
    depth: usize,
    stop_on_nested: bool,
) -> Result<Option<Table<'a>>, parrot_json::Error> {
    reader.bump();
    let mut table = Table::default();
    if reader.empty_container(b']') {
        return Ok(Some(table));
    }
    let start = reader.pos();
    loop {
        if reader.peek() != Some(b'{') {
            return Ok(None);
        }
        if !table.read_row(reader, text, depth + 1, stop_on_nested)? {
            return Ok(None);
        }
        if table.row_ends.len() == 1 {
            table.reserve_like_first_row(reader.pos() - start, text.len() - reader.pos());
        }
        if !reader.next_or_close(b']')? {
            return Ok(Some(table));
        }
    }
}

impl<'a> Table<'a> {
    /// Sizes the table for the rest of the text, were the rows all like the first one (of
    /// `row_bytes`): grown by doubling, the cells would take up to twice the room they need
    /// (and a large table's memory would come and go from one payload to the next). Only
    /// room is reserved, which a wrong guess leaves untouched; a reservation refused is left
    /// to growth.
    #[cold]
    #[inline(never)]
    fn reserve_like_first_row(&mut self, row_bytes: usize, rest: usize) {
        let rows = rest / row_bytes.max(1);
        // A member takes at least 5 bytes (`"":0,`).
        let cells = rows.saturating_mul(self.cells.len()).min(rest / 5);
        let _ = self.cells.try_reserve(cells + cells / 16);
        let _ = self.row_ends.try_reserve(rows + rows / 16);
    }

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

    /// Reads a member's name up to its value (the reader at the name, or the whitespace
    /// before it) and returns its column; `guess` is the cell of the previous row where the
    /// same member would be (below `row_start`, this row's first cell).
    fn read_name(
        &mut self,
        reader: &mut Reader<'a>,
        text: &'a str,
        guess: usize,
        row_start: usize,
    ) -> Result<usize, parrot_json::Error> {
        // Rows usually repeat the previous row's keys in the same order and layout:
        // the name and the separators around it as written there, matched byte for
        // byte, read this member up to its value.
        let at = reader.pos();
        let guessed = self
            .cells
            .get(guess)
            .filter(|_| guess < row_start)
            .and_then(|&(column, _)| Some((column, &self.columns.get(column)?.written)));
        let column = match guessed {
            Some((column, written)) if written.is_next(text.as_bytes(), at) => {
                reader.skip(written.len());
                column
            }
            _ => {
                reader.skip_ws();
                let key = reader.string()?;
                reader.expect(b':')?;
                reader.skip_ws();
                let column = self.column_named(key);
                if let Some(stats) = self.columns.get_mut(column) {
                    stats.written = Written::new(reader.slice(at, reader.pos()));
                }
                column
            }
        };
        Ok(column)
    }

    /// Adds the cell `value` (of `kind`) of `column` in `row` to the table and the column's
    /// figures; an error (at the reader) for a column not in the table or met twice in a row.
    fn record(
        &mut self,
        reader: &Reader<'a>,
        row: usize,
        column: usize,
        value: &'a str,
        kind: u8,
    ) -> Result<(), parrot_json::Error> {
        let Some(stats) = self.columns.get_mut(column) else {
            return Err(reader.error());
        };
        if stats.last_row == row {
            return Err(parrot_json::Error::DuplicateName);
        }
        stats.last_row = row;
        stats.present += 1;
        stats.non_null += usize::from(kind != 0);
        stats.kinds |= kind;
        if stats.present == 1 {
            stats.first = value;
        } else if stats.uniform && !parrot_json::scalar_eq(stats.first, value) {
            stats.uniform = false;
        }
        self.cells.push((column, value));
        Ok(())
    }

    /// Reads one row object (the reader at `{`); false when `stop_on_nested` and a cell is
    /// nested.
    fn read_row(
        &mut self,
        reader: &mut Reader<'a>,
        text: &'a str,
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
                let guess = previous_start + member;
                let column = self.read_name(reader, text, guess, row_start)?;
                // More whitespace before the value than last time.
                reader.skip_ws();
                let (value, kind) = match reader.peek() {
                    Some(b'"') => {
                        let string = reader.string()?;
                        let kind = if string.is_escaped() {
                            STRINGS | ESCAPES
                        } else {
                            STRINGS
                        };
                        (string.raw(), kind)
                    }
                    Some(b'n') => (reader.literal()?, 0),
                    Some(b't' | b'f') => (reader.literal()?, OTHERS),
                    Some(b'-' | b'0'..=b'9') => (reader.number()?, NUMBERS),
                    Some(b'[' | b'{') if stop_on_nested => return Ok(false),
                    Some(b'[' | b'{') => {
                        self.nested = true;
                        (reader.skip_value(depth)?, OTHERS)
                    }
                    _ => return Err(reader.error()),
                };
                self.record(reader, row, column, value, kind)?;
                member += 1;
                // The whitespace after a comma is read with the next member's name.
                reader.skip_ws();
                match reader.peek() {
                    Some(b',') => reader.bump(),
                    Some(b'}') => {
                        reader.bump();
                        break;
                    }
                    _ => return Err(reader.error()),
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
            written: Written::new(key.raw()),
            present: 0,
            non_null: 0,
            kinds: 0,
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

    /// The non-null values of each `Cell` column, in row order: one vector, column after
    /// column, and the range of each column's values in it (empty for the other columns).
    fn values_by_column(&self, roles: &[Role]) -> (Vec<&'a str>, Vec<std::ops::Range<usize>>) {
        let mut ranges = Vec::with_capacity(self.columns.len());
        let mut total = 0;
        for (column, role) in self.columns.iter().zip(roles) {
            let count = if *role == Role::Cell {
                column.non_null
            } else {
                0
            };
            ranges.push(total..total + count);
            total += count;
        }
        let mut next: Vec<usize> = ranges.iter().map(|range| range.start).collect();
        let mut values = vec![""; total];
        for &(column, value) in &self.cells {
            if roles.get(column) == Some(&Role::Cell)
                && value != "null"
                && let Some(at) = next.get_mut(column)
            {
                if let Some(slot) = values.get_mut(*at) {
                    *slot = value;
                }
                *at += 1;
            }
        }
        (values, ranges)
    }

    /// Writes the aggressive summary.
    fn write_summary(&self, base: &str, clip: usize, sample_rows: usize, out: &mut Vec<u8>) {
        let (roles, _) = self.roles(true);
        let rows = self.row_count();
        self.write_columns(&roles, out);
        out.extend_from_slice(format!(",\"row_count\":{rows}").as_bytes());
        self.write_constants(base, &roles, clip, out);

        let mut set = Set::default();
        // Every row with every column, in column order (the usual table): a column's values
        // are every `width`-th cell, gathered column by column into one buffer. Otherwise all
        // columns' values are gathered in one pass over the cells.
        let width = self.columns.len();
        let regular = self.cells.len() == rows * width
            && self.cells.chunks_exact(width).all(|row| {
                row.iter()
                    .enumerate()
                    .all(|(place, &(column, _))| column == place)
            });
        let (all_values, ranges) = if regular {
            (Vec::new(), Vec::new())
        } else {
            self.values_by_column(&roles)
        };
        let mut column_values = Vec::new();
        out.extend_from_slice(b",\"stats\":{");
        let described = self
            .columns
            .iter()
            .enumerate()
            .zip(&roles)
            .filter(|(_, role)| **role == Role::Cell)
            .map(|(column, _)| column);
        for (i, (index, column)) in described.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let values = if regular {
                column_values.clear();
                for row in self.cells.chunks_exact(width) {
                    if let Some(&(_, value)) = row.get(index)
                        && value != "null"
                    {
                        column_values.push(value);
                    }
                }
                &column_values
            } else {
                let range = ranges.get(index).cloned().unwrap_or_default();
                all_values.get(range).unwrap_or_default()
            };
            let summary = summarize(values, column.kinds, &mut set);
            parrot_json::write_unescaped(column.name, out);
            let nulls = rows - column.non_null;
            out.extend_from_slice(
                format!(":{{\"nulls\":{nulls},\"distinct\":{}", summary.distinct).as_bytes(),
            );
            if let Some((min, max)) = summary.range {
                out.extend_from_slice(b",\"min\":");
                write_cell(min, clip, || None, out);
                out.extend_from_slice(b",\"max\":");
                write_cell(max, clip, || None, out);
            }
            out.push(b'}');
        }
        out.push(b'}');

        self.write_sample(base, &roles, clip, sample_rows, out);
        out.push(b'}');
    }

    /// Writes the head and tail rows (`sample_rows` each, at most) and, when rows lie between
    /// them, how many and the selector that returns them.
    fn write_sample(
        &self,
        base: &str,
        roles: &[Role],
        clip: usize,
        sample_rows: usize,
        out: &mut Vec<u8>,
    ) {
        let rows = self.row_count();
        let sample = sample_rows.min(rows);
        let mut slots = Vec::new();
        for (name, skip) in [("head", 0), ("tail", rows - sample)] {
            out.extend_from_slice(format!(",\"{name}\":[").as_bytes());
            for (i, row) in self.rows().skip(skip).take(sample).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                self.write_row((base, skip + i), row, roles, clip, &mut slots, out);
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

/// What the summary says of one column's non-null values.
struct Summary<'a> {
    /// How many distinct values: numbers and booleans as written, strings by their decoded
    /// value (so `"A"` and `"\u0041"` are one value, and `"1"` is not `1`).
    distinct: usize,
    /// The least and the greatest value as written, when the values are all numbers (compared
    /// exactly by value) or all strings (compared by code point); the first written of equal
    /// ones.
    range: Option<(&'a str, &'a str)>,
}

/// The kinds of value a column holds, as bits of a mask (`null` is none of them).
const STRINGS: u8 = 1;
const NUMBERS: u8 = 2;
/// Booleans (and nested values): counted, never ordered.
const OTHERS: u8 = 4;
/// Set with [`STRINGS`] when a string holds an escape.
const ESCAPES: u8 = 8;

/// The bit of a distinct set's entry set when its value is a string with an escape.
const ESCAPED: u32 = 1 << 31;

/// After this many distinct values a column's set is sized for all its values.
const MANY_DISTINCT: usize = 64;

/// Summarizes one column's non-null values (in row order, of the kinds `kinds`), reusing
/// `set` for its distinct values. Each column is read in one pass of its own: its values share
/// a kind, which keeps the per-value branches predictable.
fn summarize<'a>(values: &[&'a str], kinds: u8, set: &mut Set) -> Summary<'a> {
    let escapes = kinds & ESCAPES != 0;
    let mut distinct = Distinct::new(values, escapes, set);
    let range = match kinds & !ESCAPES {
        NUMBERS => {
            let mut range = Range::<NumberOrder<'a>>::default();
            for (index, &value) in values.iter().enumerate() {
                if range.widen(value, NumberOrder::of(value)) {
                    distinct.add_new(index, value, false);
                } else {
                    distinct.add(index, value, false);
                }
            }
            range.ends()
        }
        STRINGS => {
            let mut range = Range::<StringOrder<'a>>::default();
            for (index, &value) in values.iter().enumerate() {
                let escaped = escapes && has_escape(value);
                if range.widen(value, StringOrder::of(value, escaped)) {
                    distinct.add_new(index, value, escaped);
                } else {
                    distinct.add(index, value, escaped);
                }
            }
            range.ends()
        }
        _ => {
            for (index, &value) in values.iter().enumerate() {
                let escaped = escapes && value.starts_with('"') && has_escape(value);
                distinct.add(index, value, escaped);
            }
            None
        }
    };
    Summary {
        distinct: distinct.count(),
        range,
    }
}

/// Whether a string as written holds an escape.
fn has_escape(value: &str) -> bool {
    // Cells are short: a loop without an early exit (which the compiler vectorizes) beats a
    // call to a search routine.
    value.bytes().fold(false, |seen, b| seen | (b == b'\\'))
}

/// The text a value counts as distinct by: numbers and booleans as written, a string with an
/// escape as `"decoded value"` (one without is its own such text).
#[inline]
fn distinct_form(value: &str, escaped: bool) -> Cow<'_, str> {
    if escaped {
        Cow::Owned(format!("\"{}\"", decoded_string(value)))
    } else {
        Cow::Borrowed(value)
    }
}

/// Whether the value `seen` (`escaped`: a string with an escape) has the distinct form
/// `form`: the rare comparison of a string with an escape.
#[cold]
#[inline(never)]
fn same_form(seen: &str, escaped: bool, form: &str) -> bool {
    distinct_form(seen, escaped) == form
}

#[inline]
fn hash(form: &str) -> u64 {
    let mut hasher = foldhash::fast::FixedState::default().build_hasher();
    hasher.write(form.as_bytes());
    hasher.finish()
}

/// The distinct values of one column: each held as the index of its first value, with
/// [`ESCAPED`] set when that is a string with an escape. A value known to be new (a new least
/// or greatest value) goes in without a lookup, and while every value so far was, none goes
/// in at all.
struct Distinct<'v, 's> {
    values: &'v [&'v str],
    /// Whether any string of the column holds an escape.
    escapes: bool,
    set: &'s mut Set,
    /// How many values, all distinct, are counted but not yet in the set.
    pending: usize,
}

impl<'v, 's> Distinct<'v, 's> {
    fn new(values: &'v [&'v str], escapes: bool, set: &'s mut Set) -> Self {
        set.clear();
        Distinct {
            values,
            escapes,
            set,
            pending: 0,
        }
    }

    fn count(&self) -> usize {
        self.pending + self.set.len
    }

    fn entry(index: usize, escaped: bool) -> u32 {
        index as u32 | if escaped { ESCAPED } else { 0 }
    }

    /// Counts `value`, the value at `index`, known to differ from every value before it.
    #[inline]
    fn add_new(&mut self, index: usize, value: &str, escaped: bool) {
        if self.set.len == 0 {
            self.pending += 1;
            return;
        }
        self.grow();
        let hash = hash(&distinct_form(value, escaped));
        self.set
            .insert(hash, Self::entry(index, escaped), |_| false);
    }

    /// Counts `value`, the value at `index`, unless an equal one came before.
    #[inline(always)]
    fn add(&mut self, index: usize, value: &str, escaped: bool) {
        if self.pending > 0 {
            self.flush();
        }
        self.grow();
        let values = self.values;
        let form = distinct_form(value, escaped);
        let equal = |entry: u32| {
            let seen = values
                .get((entry & !ESCAPED) as usize)
                .copied()
                .unwrap_or("");
            let seen_escaped = entry & ESCAPED != 0;
            parrot_json::same_bytes(seen.as_bytes(), value.as_bytes())
                || ((escaped || seen_escaped) && same_form(seen, seen_escaped, &form))
        };
        self.set
            .insert(hash(&form), Self::entry(index, escaped), equal);
    }

    /// Puts the pending values in the set: a value now needs a lookup.
    #[cold]
    fn flush(&mut self) {
        if self.pending >= MANY_DISTINCT {
            self.set.resize(self.values.len());
        }
        let values = self.values;
        for (index, &value) in values.iter().enumerate().take(self.pending) {
            let escaped = self.escapes && value.starts_with('"') && has_escape(value);
            let hash = hash(&distinct_form(value, escaped));
            self.set
                .insert(hash, Self::entry(index, escaped), |_| false);
        }
        self.pending = 0;
    }

    /// Sizes the set for every value of the column once it shows many distinct ones.
    #[inline]
    fn grow(&mut self) {
        if self.set.len == MANY_DISTINCT {
            self.set.resize(self.values.len());
        }
    }
}

/// A set of values, each named by a 32-bit entry (a column's value index), found by a hash:
/// open addressing with linear probing, the table at most half full. A slot holds 31 bits of
/// the hash with the top bit set (0 is an empty slot) and the entry, so a probe reads no value
/// unless the hashes match, and the table grows without hashing anything again.
#[derive(Default)]
struct Set {
    slots: Vec<u64>,
    len: usize,
}

impl Set {
    /// The slots of a new set: enough for [`MANY_DISTINCT`] values.
    const FIRST: usize = 2 * MANY_DISTINCT;

    fn clear(&mut self) {
        self.slots.clear();
        self.slots.resize(Self::FIRST, 0);
        self.len = 0;
    }

    /// Makes room for `values` values in all.
    fn resize(&mut self, values: usize) {
        let slots = (2 * values).next_power_of_two().max(Self::FIRST);
        if slots <= self.slots.len() {
            return;
        }
        // The table keeps its allocation from column to column.
        let entries: Vec<u64> = self
            .slots
            .iter()
            .copied()
            .filter(|&slot| slot != 0)
            .collect();
        self.slots.clear();
        self.slots.resize(slots, 0);
        for slot in entries {
            self.place(slot);
        }
    }

    /// Puts a slot's contents in the first empty slot of its probe sequence.
    fn place(&mut self, contents: u64) {
        let mask = self.slots.len() - 1;
        let mut at = (contents >> 32) as usize & mask;
        while let Some(slot) = self.slots.get_mut(at) {
            if *slot == 0 {
                *slot = contents;
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds `entry` (of hash `hash`) unless an entry of the same hash is `equal` to it.
    #[inline(always)]
    fn insert(&mut self, hash: u64, entry: u32, equal: impl Fn(u32) -> bool) {
        if 2 * (self.len + 1) > self.slots.len() {
            self.resize(self.len + 1);
        }
        let hash = (hash >> 32) as u32 | 1 << 31;
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        while let Some(slot) = self.slots.get_mut(at) {
            if *slot == 0 {
                *slot = u64::from(hash) << 32 | u64::from(entry);
                self.len += 1;
                return;
            }
            if (*slot >> 32) as u32 == hash && equal(*slot as u32) {
                return;
            }
            at = (at + 1) & mask;
        }
    }
}

/// A running least and greatest value: the first written of equal ones.
struct Range<'a, O> {
    ends: Option<(Extreme<'a, O>, Extreme<'a, O>)>,
}

/// A least or greatest value: as written, and as it orders.
struct Extreme<'a, O> {
    text: &'a str,
    order: O,
}

impl<O> Default for Range<'_, O> {
    fn default() -> Self {
        Range { ends: None }
    }
}

impl<'a, O: Ord + Clone> Range<'a, O> {
    /// Takes in `text` (ordered as `order`); true when it is a new least or greatest value,
    /// so unequal to every value before it.
    fn widen(&mut self, text: &'a str, order: O) -> bool {
        match &mut self.ends {
            None => {
                let min = Extreme {
                    text,
                    order: order.clone(),
                };
                self.ends = Some((min, Extreme { text, order }));
                true
            }
            Some((min, _)) if order < min.order => {
                *min = Extreme { text, order };
                true
            }
            Some((_, max)) if order > max.order => {
                *max = Extreme { text, order };
                true
            }
            Some(_) => false,
        }
    }

    fn ends(self) -> Option<(&'a str, &'a str)> {
        self.ends.map(|(min, max)| (min.text, max.text))
    }
}

/// How a number orders: exactly by value. Most numbers (no exponent, at most 19 digits before
/// the point and 18 after) are compared as integers; others are parsed when compared.
#[derive(Clone)]
struct NumberOrder<'a> {
    text: &'a str,
    fixed: Option<i128>,
}

impl<'a> NumberOrder<'a> {
    fn of(text: &'a str) -> Self {
        NumberOrder {
            text,
            fixed: fixed_point(text),
        }
    }
}

impl Ord for NumberOrder<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self.fixed, other.fixed) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => parrot_json::Number::parse(self.text).cmp(&parrot_json::Number::parse(other.text)),
        }
    }
}

impl PartialOrd for NumberOrder<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for NumberOrder<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for NumberOrder<'_> {}

/// A JSON number without an exponent, with at most 19 digits before the point and 18 after,
/// as a whole count of 10^-18: such counts order as the numbers do (`1` and `1.0` are equal,
/// `-0` is `0`).
fn fixed_point(text: &str) -> Option<i128> {
    const ONE: i128 = 1_000_000_000_000_000_000;
    let bytes = text.as_bytes();
    let (negative, mut rest) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let digits = |rest: &mut &[u8]| {
        let (mut value, mut count) = (0u64, 0usize);
        while let Some((&d, tail)) = rest.split_first()
            && d.is_ascii_digit()
        {
            value = value.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            count += 1;
            *rest = tail;
        }
        (value, count)
    };
    let (int, int_digits) = digits(&mut rest);
    let (frac, frac_digits) = match rest.split_first() {
        Some((b'.', tail)) => {
            rest = tail;
            digits(&mut rest)
        }
        _ => (0, 0),
    };
    if !rest.is_empty() || int_digits > 19 || frac_digits > 18 {
        return None;
    }
    // 10^(18 - digits): the fraction's digits as a count of 10^-18.
    const SCALE: [u64; 19] = {
        let mut scale = [1u64; 19];
        let mut digits = 18;
        while digits > 0 {
            digits -= 1;
            scale[digits] = scale[digits + 1] * 10;
        }
        scale
    };
    let frac = frac * SCALE.get(frac_digits).copied().unwrap_or(1);
    let magnitude = i128::from(int) * ONE + i128::from(frac);
    Some(if negative { -magnitude } else { magnitude })
}

/// The first 16 bytes of `bytes` as a big-endian integer, zero-padded: of two strings whose
/// heads differ, the one with the lesser head is the lesser string.
fn head(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    let word = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map_or(0, u64::from_be_bytes)
    };
    let (high, low) = if n >= 16 {
        (word(0), word(8))
    } else if n >= 8 {
        // The last eight bytes, less those the first word holds, then zeros.
        let tail = word(n - 8).checked_shl(8 * (16 - n) as u32).unwrap_or(0);
        (word(0), tail)
    } else {
        let high = bytes
            .iter()
            .enumerate()
            .fold(0, |high, (i, &b)| high | u64::from(b) << (56 - 8 * i));
        (high, 0)
    };
    u128::from(high) << 64 | u128::from(low)
}

/// How a string orders: by the code points of its decoded contents, which is the order of
/// their UTF-8 bytes. The first 16 bytes (zero-padded) decide most comparisons as one integer.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct StringOrder<'a> {
    prefix: u128,
    contents: Cow<'a, str>,
}

impl<'a> StringOrder<'a> {
    /// The order of a string as written (`escaped`: it holds an escape).
    fn of(value: &'a str, escaped: bool) -> Self {
        let contents = if escaped {
            decoded_string(value)
        } else {
            Cow::Borrowed(between_quotes(value))
        };
        StringOrder {
            prefix: head(contents.as_bytes()),
            contents,
        }
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

    #[test]
    fn numbers_order_exactly_by_value() {
        // Within the fixed-point form, past it (more digits, an exponent), and across the two.
        let cases = [
            ("1", "1.0"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("0.5", "0.50"),
            ("-1.5", "-1.25"),
            ("100", "1E2"),
            ("999.99", "1000"),
            ("123456789012345678", "123456789012345679"),
            ("9999999999999999999", "1e19"),
            ("9999999999999999999", "10000000000000000000"),
            ("1.000000000000000001", "1"),
            ("1.0000000000000000001", "1"),
            ("1.0000000000000000001", "1.000000000000000001"),
            ("-9999999999999999999.999999999999999999", "-1E19"),
            ("0.000000000000000001", "1e-18"),
            ("0.000000000000000001", "1e-19"),
        ];
        for (a, b) in cases {
            let expected = parrot_json::cmp_numbers(a, b);
            assert_eq!(
                NumberOrder::of(a).cmp(&NumberOrder::of(b)),
                expected,
                "{a} vs {b}"
            );
            assert_eq!(
                NumberOrder::of(b).cmp(&NumberOrder::of(a)),
                expected.reverse(),
                "{b} vs {a}"
            );
        }
    }

    #[test]
    fn strings_order_by_code_point_at_every_length() {
        let mut strings: Vec<String> = ["", "a", "b", "é", "\u{10000}", "\0", "a\0", "ab"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // Shared prefixes around the 8 and 16 bytes the heads hold.
        for n in [7, 8, 9, 15, 16, 17, 24] {
            let prefix = "x".repeat(n);
            for tail in ["", "\0", "a", "b", "é"] {
                strings.push(format!("{prefix}{tail}"));
            }
        }
        let written: Vec<String> = strings
            .iter()
            .map(|s| serde_json::to_string(s).unwrap())
            .collect();
        for (a, a_written) in strings.iter().zip(&written) {
            for (b, b_written) in strings.iter().zip(&written) {
                let a_order = StringOrder::of(a_written, has_escape(a_written));
                let b_order = StringOrder::of(b_written, has_escape(b_written));
                assert_eq!(
                    a_order.cmp(&b_order),
                    a.cmp(b),
                    "{a_written} vs {b_written}"
                );
            }
        }
    }

    #[test]
    fn a_name_as_written_matches_only_itself() {
        let long = r#""a_name_longer_than_sixteen_bytes""#;
        let cases = [
            (r#""id""#, r#""id": 1"#, 0, true),
            (r#""id""#, r#""idx": 1"#, 0, false),
            (r#""id""#, r#""i""#, 0, false),
            (r#""id""#, r#"{"id""#, 1, true),
            (r#""id""#, r#"{"id"#, 1, false),
            (r#""id""#, r#""Id": 1, "more text after it""#, 0, false),
            (long, &format!("{long}: 1, \"x\": 2"), 0, true),
            (long, long, 0, true),
            (long, r#""a_name_longer_than_sixteen_byte": 1"#, 0, false),
        ];
        for (name, text, at, expected) in cases {
            let written = Written::new(name);
            assert_eq!(
                written.is_next(text.as_bytes(), at),
                expected,
                "{name} in {text} at {at}"
            );
        }
    }

    #[test]
    fn distinct_counts_after_runs_of_new_extremes() {
        // A run of new least or greatest values is counted without a lookup; the first value
        // that is neither puts the run in the set.
        let many: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let many_then_repeats: Vec<&str> = many
            .iter()
            .map(String::as_str)
            .chain(["0", "50", "99", "100"])
            .collect();
        // (values, distinct count, least and greatest)
        type Case<'a> = (&'a [&'a str], usize, Option<(&'a str, &'a str)>);
        let cases: [Case<'_>; 8] = [
            (&["1", "2", "3", "2"], 3, Some(("1", "3"))),
            (&["3", "2", "1", "1"], 3, Some(("1", "3"))),
            (&["1", "1.0", "1e0", "2"], 4, Some(("1", "2"))),
            (&["2", "1", "3", "1.0"], 4, Some(("1", "3"))),
            (&many_then_repeats, 101, Some(("0", "100"))),
            (
                &[r#""a""#, r#""b""#, r#""\u0061""#, r#""c""#],
                3,
                Some((r#""a""#, r#""c""#)),
            ),
            (
                &[r#""\u0062""#, r#""a""#, r#""b""#],
                2,
                Some((r#""a""#, r#""\u0062""#)),
            ),
            (&["true", "false", "true", "1", r#""1""#], 4, None),
        ];
        let mut set = Set::default();
        for (values, distinct, range) in cases {
            let kinds = values.iter().fold(0, |kinds, value| {
                kinds
                    | match value.as_bytes()[0] {
                        b'"' if value.contains('\\') => STRINGS | ESCAPES,
                        b'"' => STRINGS,
                        b't' | b'f' => OTHERS,
                        _ => NUMBERS,
                    }
            });
            let summary = summarize(values, kinds, &mut set);
            assert_eq!(
                (summary.distinct, summary.range),
                (distinct, range),
                "{values:?}"
            );
        }
    }

    #[test]
    fn the_summary_does_not_depend_on_member_order() {
        // Rows in column order are summarized column by column from every row's place; a row
        // in another order sends the summary through the general gathering of values.
        let in_order: Vec<String> = (0..30)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"s":"v{}","n":{},"b":{}}}"#,
                    i % 7,
                    i % 4,
                    i % 2 == 0
                )
            })
            .collect();
        let mut reordered = in_order.clone();
        reordered[10] = r#"{"b":true,"n":2,"s":"v3","id":10}"#.to_owned();
        let codec = built(r#"{"min_rows": 2}"#);
        let summary = |rows: &[String]| {
            let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
            transform(&codec, &format!("[{}]", refs.join(",")), Level::Aggressive).unwrap()
        };
        let (out, _) = summary(&in_order);
        assert!(
            out.contains(r#""stats":{"id":{"nulls":0,"distinct":30,"min":0,"max":29},"s":{"nulls":0,"distinct":7,"min":"v0","max":"v6"},"n":{"nulls":0,"distinct":4,"min":0,"max":3},"b":{"nulls":0,"distinct":2}}"#),
            "{out}"
        );
        assert_eq!(summary(&reordered), summary(&in_order));
    }

    #[test]
    fn rows_in_different_layouts_read_alike() {
        // Each row's names are matched with the separators the row before wrote: any change of
        // layout, name or order falls back to reading the member.
        let compact = rows(&[
            r#"{"a":1,"bb":"x","c":null}"#,
            r#"{"a":2,"bb":"y","c":true}"#,
            r#"{"a":3,"bb":"x","c":false}"#,
            r#"{"a":4,"bb":"z","c":null}"#,
            r#"{"a":5,"bb":"x","c":true}"#,
        ]);
        let spaced = rows(&[
            r#"{"a": 1, "bb": "x", "c": null}"#,
            r#"{"a":2,"bb":"y","c":true}"#,
            "{ \"a\" :\t3 ,\n\"bb\":  \"x\" , \"c\" : false }",
            r#"{"a": 4, "bb": "z", "c": null}"#,
            r#"{"a": 5,  "bb" : "x", "c":true}"#,
        ]);
        let renamed = rows(&[
            r#"{"a": 1, "bb": "x", "c": null}"#,
            r#"{"a": 2, "b": "y", "c": true}"#,
        ]);
        let codec = built(r#"{"min_rows": 2}"#);
        for level in [Level::Minimal, Level::Aggressive] {
            assert_eq!(
                transform(&codec, &spaced, level),
                transform(&codec, &compact, level),
                "{level}"
            );
        }
        let codec = built(r#"{"min_rows": 2, "heterogeneity_ratio": 2}"#);
        let (out, _) = transform(&codec, &renamed, Level::Normal).unwrap();
        assert_eq!(
            out,
            r#"{"columns":["a","bb","c","b"],"rows":[[1,"x",null,null],[2,null,true,"y"]],"constants":{}}"#
        );
    }
}
