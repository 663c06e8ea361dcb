//! The streaming encoder: documents made of tables of flat rows (the shape of most query
//! results) written without a tree, in two passes over the input.
//!
//! It takes a root array of objects, or a root object whose members are primitives, empty
//! arrays or such arrays, where the objects of an array have the same members in the same
//! order as written, each a primitive, named without escapes. The first pass reads the JSON as
//! [`parrot_json::Value::parse`] would (refusing what it refuses) and notes, per column,
//! whether its value is the same in every row so far; the second reads the rows again and
//! writes them. Strings stay slices of the input unless they hold an escape.
//!
//! Anything else is left to the tree ([`super::encode`]). For these shapes both write the same
//! bytes, the tree's layout and its choice between the plain and the hoisted table; the unit
//! tests compare the two on generated tables.

use parrot_json::{RawStr, Reader};

use super::encode::{encode_key, push_string};
use super::hoist::{CONSTANTS, ROWS};

const INDENT: &str = "  ";

/// The TOON document for `input`, as [`super::encode::encode`] writes it for the tree of
/// `input`; `None` when `input` is not one of the shapes above, or not JSON.
pub(crate) fn encode(input: &str, hoist: bool) -> Option<String> {
    let mut reader = Reader::new(input);
    reader.skip_ws();
    let start = reader.pos();
    let root = if reader.eat(b'[') {
        Root::Table(table(&mut reader, start)?)
    } else if reader.eat(b'{') {
        Root::Object(object(&mut reader)?)
    } else {
        return None;
    };
    reader.finish().ok()?;
    // Only a document shorter than the input is used, so this never grows; pages not written
    // are never touched.
    let mut out = String::with_capacity(input.len());
    match root {
        Root::Table(table) => write_table(input, &table, None, hoist, &mut out),
        Root::Object(members) => {
            for (name, part) in &members {
                match part {
                    Part::Primitive(cell) => {
                        line(&mut out, 0);
                        out.push_str(&encode_key(name));
                        out.push_str(": ");
                        push_cell(cell, &mut out);
                    }
                    Part::Empty => {
                        line(&mut out, 0);
                        out.push_str(&encode_key(name));
                        out.push_str(": []");
                    }
                    Part::Table(table) => {
                        write_table(input, table, Some(name), hoist, &mut out)?;
                    }
                }
            }
            Some(())
        }
    }?;
    Some(out)
}

enum Root<'a> {
    Table(Table<'a>),
    /// The members, each name as written between its quotes (it has no escape).
    Object(Vec<(&'a str, Part<'a>)>),
}

/// What a root member holds.
enum Part<'a> {
    Primitive(Cell<'a>),
    /// `[]`.
    Empty,
    Table(Table<'a>),
}

/// A primitive as written.
#[derive(Clone, Copy)]
enum Cell<'a> {
    Null,
    True,
    False,
    /// A number's text.
    Number(&'a str),
    String(RawStr<'a>),
}

impl Cell<'_> {
    /// Equality as the contract counts it: numbers by their text, strings by their value.
    fn same(&self, other: &Cell<'_>) -> bool {
        match (self, other) {
            (Cell::Null, Cell::Null) | (Cell::True, Cell::True) | (Cell::False, Cell::False) => {
                true
            }
            (Cell::Number(a), Cell::Number(b)) => a == b,
            (Cell::String(a), Cell::String(b)) => a.same_value(b),
            _ => false,
        }
    }
}

/// An array of flat rows, after the first pass.
struct Table<'a> {
    /// Where the array starts in the input (its `[`).
    start: usize,
    /// The column names, without escapes.
    names: Vec<RawStr<'a>>,
    rows: usize,
    /// The first row's cells.
    first: Vec<Cell<'a>>,
    /// Per column: the same value in every row.
    constant: Vec<bool>,
}

/// A primitive, or `None` (an array, an object, or not JSON).
#[inline(always)]
fn cell<'a>(reader: &mut Reader<'a>) -> Option<Cell<'a>> {
    reader.skip_ws();
    match reader.peek()? {
        b'"' => reader.string().ok().map(Cell::String),
        b'{' | b'[' => None,
        b't' | b'f' | b'n' => match reader.literal().ok()? {
            "null" => Some(Cell::Null),
            "true" => Some(Cell::True),
            _ => Some(Cell::False),
        },
        // A number beyond a double is left to the tree, which passes the payload through.
        _ => reader
            .number()
            .ok()
            .filter(|text| !super::beyond_double(text))
            .map(Cell::Number),
    }
}

/// A member name without escapes, and the `:` after it.
fn name<'a>(reader: &mut Reader<'a>) -> Option<RawStr<'a>> {
    reader.skip_ws();
    let name = reader.string().ok()?;
    (!name.is_escaped() && reader.eat(b':')).then_some(name)
}

/// The first pass over a root object (after its `{`): its members, when each is a primitive,
/// `[]` or a table.
fn object<'a>(reader: &mut Reader<'a>) -> Option<Vec<(&'a str, Part<'a>)>> {
    let mut members = Vec::new();
    if reader.eat(b'}') {
        return None;
    }
    loop {
        let name = name(reader)?;
        reader.skip_ws();
        let start = reader.pos();
        let part = if !reader.eat(b'[') {
            Part::Primitive(cell(reader)?)
        } else if reader.eat(b']') {
            Part::Empty
        } else {
            Part::Table(table(reader, start)?)
        };
        members.push((name, part));
        if reader.eat(b'}') {
            break;
        }
        if !reader.eat(b',') {
            return None;
        }
    }
    let names: Vec<RawStr<'a>> = members.iter().map(|(name, _)| *name).collect();
    if !parrot_json::all_distinct(&names) {
        return None;
    }
    Some(
        members
            .into_iter()
            .map(|(name, part)| (name.content(), part))
            .collect(),
    )
}

/// The first pass over an array of flat rows (after its `[`, which is at `start`).
fn table<'a>(reader: &mut Reader<'a>, start: usize) -> Option<Table<'a>> {
    if !reader.eat(b'{') {
        return None;
    }
    let mut names = Vec::new();
    let mut first = Vec::new();
    if reader.eat(b'}') {
        return None;
    }
    loop {
        names.push(name(reader)?);
        first.push(cell(reader)?);
        if reader.eat(b'}') {
            break;
        }
        if !reader.eat(b',') {
            return None;
        }
    }
    if !parrot_json::all_distinct(&names) {
        return None;
    }
    let mut constant = vec![true; names.len()];
    let mut rows = 1;
    while !reader.eat(b']') {
        if !reader.eat(b',') || !reader.eat(b'{') {
            return None;
        }
        for (i, expected) in names.iter().enumerate() {
            if i > 0 && !reader.eat(b',') {
                return None;
            }
            // The name as the first row wrote it: a whole string without escapes, so
            // matching its bytes reads it.
            reader.skip_ws();
            if !reader.eat_str(expected.raw()) || !reader.eat(b':') {
                return None;
            }
            let cell = cell(reader)?;
            if constant[i] && !cell.same(&first[i]) {
                constant[i] = false;
            }
        }
        if !reader.eat(b'}') {
            return None;
        }
        rows += 1;
    }
    Some(Table {
        start,
        names,
        rows,
        first,
        constant,
    })
}

/// Starts a line at `depth`.
fn line(out: &mut String, depth: usize) {
    if !out.is_empty() {
        out.push('\n');
    }
    for _ in 0..depth {
        out.push_str(INDENT);
    }
}

/// Appends a cell as TOON writes the primitive.
fn push_cell(cell: &Cell<'_>, out: &mut String) {
    match cell {
        Cell::String(string) if !string.is_escaped() => push_string(string.content(), out),
        Cell::String(string) => push_string(&string.decoded(), out),
        Cell::Null => out.push_str("null"),
        Cell::True => out.push_str("true"),
        Cell::False => out.push_str("false"),
        Cell::Number(text) => out.push_str(text),
    }
}

fn cell_text(cell: &Cell<'_>) -> String {
    let mut text = String::new();
    push_cell(cell, &mut text);
    text
}

/// `[N]{names}:` after the key, for the columns `keep` selects; `[N]:` when it selects none.
fn header(key: Option<&str>, table: &Table<'_>, keep: impl Fn(usize) -> bool) -> String {
    let mut header = String::new();
    if let Some(key) = key {
        header.push_str(&encode_key(key));
    }
    header.push('[');
    header.push_str(&table.rows.to_string());
    header.push(']');
    let mut fields = (0..table.names.len()).filter(|&i| keep(i)).peekable();
    if fields.peek().is_some() {
        header.push('{');
        for (n, i) in fields.enumerate() {
            if n > 0 {
                header.push(',');
            }
            header.push_str(&encode_key(table.names[i].content()));
        }
        header.push('}');
    }
    header.push(':');
    header
}

/// Writes a table whose header is at depth 0: plain, or hoisted where the tree writer would
/// choose that (strictly shorter).
fn write_table(
    input: &str,
    table: &Table<'_>,
    key: Option<&str>,
    hoist: bool,
    out: &mut String,
) -> Option<()> {
    let columns = table.names.len();
    let hoisted = hoist && table.rows >= 2 && table.constant.contains(&true);
    if !hoisted || !shorter_hoisted(table, key)? {
        line(out, 0);
        out.push_str(&header(key, table, |_| true));
        return write_rows(input, table, 1, &vec![false; columns], out);
    }
    // `key:` then the object one level down; at the root, the object's members.
    let base = usize::from(key.is_some());
    if let Some(key) = key {
        line(out, 0);
        out.push_str(&encode_key(key));
        out.push(':');
    }
    line(out, base);
    out.push_str(CONSTANTS);
    out.push(':');
    for i in (0..columns).filter(|&i| table.constant[i]) {
        line(out, base + 1);
        out.push_str(&encode_key(table.names[i].content()));
        out.push_str(": ");
        push_cell(&table.first[i], out);
    }
    line(out, base);
    out.push_str(&header(Some(ROWS), table, |i| !table.constant[i]));
    write_rows(input, table, base + 1, &table.constant, out)
}

/// Whether the hoisted form of `table` is strictly shorter than the plain one. The cells of
/// columns that are not constant are in both: only what differs is counted.
fn shorter_hoisted(table: &Table<'_>, key: Option<&str>) -> Option<bool> {
    let rows = table.rows;
    let columns = table.names.len();
    let hoisted = table.constant.iter().filter(|&&c| c).count();
    // Text of the constant cells in one row, with a delimiter each.
    let mut constant_cells = 0;
    let mut constant_lines = 0;
    for i in (0..columns).filter(|&i| table.constant[i]) {
        let text = cell_text(&table.first[i]).len();
        constant_cells += text + 1;
        constant_lines += encode_key(table.names[i].content()).len() + text + 2;
    }
    let base = usize::from(key.is_some());
    // Plain: header, then per row a newline, the indent and the cells.
    let plain = header(key, table, |_| true).len() + rows * (1 + INDENT.len());
    let mut alternative = key.map_or(0, |key| encode_key(key).len() + 2)
        + base * INDENT.len()
        + CONSTANTS.len()
        + 1
        + hoisted * (1 + (base + 1) * INDENT.len())
        + constant_lines
        + 1
        + base * INDENT.len()
        + header(Some(ROWS), table, |i| !table.constant[i]).len()
        + rows * (1 + (base + 1) * INDENT.len());
    if hoisted == columns {
        // Each row is `-`, where the plain row is all the constant cells (one delimiter
        // fewer than counted).
        alternative += rows;
        return Some(alternative < plain + rows * (constant_cells - 1));
    }
    Some(alternative < plain + rows * constant_cells)
}

/// The second pass: the rows, one line each at `depth`, without the columns `skip` marks
/// (a row of none is `-`).
fn write_rows(
    input: &str,
    table: &Table<'_>,
    depth: usize,
    skip: &[bool],
    out: &mut String,
) -> Option<()> {
    let mut reader = Reader::at(input, table.start);
    reader.bump();
    let empty = skip.iter().all(|&s| s);
    for row in 0..table.rows {
        if row > 0 && !reader.eat(b',') {
            return None;
        }
        if !reader.eat(b'{') {
            return None;
        }
        line(out, depth);
        if empty {
            out.push('-');
        }
        let mut written = 0;
        for (i, name) in table.names.iter().enumerate() {
            if i > 0 && !reader.eat(b',') {
                return None;
            }
            // The first pass matched the name's bytes in every row.
            reader.skip_ws();
            reader.skip(name.raw().len());
            if !reader.eat(b':') {
                return None;
            }
            let cell = cell(&mut reader)?;
            if skip[i] {
                continue;
            }
            if written > 0 {
                out.push(',');
            }
            written += 1;
            push_cell(&cell, out);
        }
        if !reader.eat(b'}') {
            return None;
        }
    }
    Some(())
}
