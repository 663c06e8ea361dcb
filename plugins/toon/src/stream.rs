//! The streaming encoder: documents made of tables of flat rows (the shape of most query
//! results) written without a tree, in two passes over the input.
//!
//! It takes a root array of objects, or a root object whose members are primitives, empty
//! arrays or such arrays, where the objects of an array have the same members in the same
//! order as written, each a primitive, named without escapes. The first pass reads the JSON as
//! [`json::parse`] would (refusing what it refuses) and notes, per column, whether its value is
//! the same in every row so far; the second reads the rows again and writes them. Strings stay
//! slices of the input unless they hold an escape.
//!
//! Anything else is left to the tree ([`crate::encode`]). For these shapes both write the same
//! bytes, the tree's layout and its choice between the plain and the hoisted table; the unit
//! tests compare the two on generated tables.

use crate::encode::{SPECIAL, encode_key, needs_quoting_by_shape, push_quoted, push_string};
use crate::hoist::{CONSTANTS, ROWS};
use crate::json::{self, Reader};

const INDENT: &str = "  ";

/// The TOON document for `input`, as [`crate::encode::encode`] writes it for the tree of
/// `input`; `None` when `input` is not one of the shapes above, or not JSON.
pub(crate) fn encode(input: &str, hoist: bool) -> Option<String> {
    let mut reader = Reader::new(input);
    reader.skip_ws();
    let start = reader.position();
    let root = if reader.eat(b'[') {
        Root::Table(table(&mut reader, start)?)
    } else if reader.eat(b'{') {
        Root::Object(object(&mut reader)?)
    } else {
        return None;
    };
    reader.skip_ws();
    if !reader.at_end() {
        return None;
    }
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
                        push_cell(cell, &mut out)?;
                    }
                    Part::Empty => {
                        line(&mut out, 0);
                        out.push_str(&encode_key(name));
                        out.push_str(": []");
                    }
                    Part::Table(table) => {
                        write_table(input, table, Some(*name), hoist, &mut out)?;
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
    Object(Vec<(&'a str, Part<'a>)>),
}

/// What a root member holds.
enum Part<'a> {
    Primitive(Cell<'a>),
    /// `[]`.
    Empty,
    Table(Table<'a>),
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Null,
    True,
    False,
    Number,
    String,
}

/// A primitive as written: a number's text, a string with its quotes.
#[derive(Clone, Copy)]
struct Cell<'a> {
    kind: Kind,
    raw: &'a str,
    escaped: bool,
}

impl Cell<'_> {
    /// Equality as [`json::Value::same`] counts it.
    fn same(&self, other: &Cell<'_>) -> bool {
        if self.kind != other.kind {
            return false;
        }
        match self.kind {
            Kind::Number => self.raw == other.raw,
            Kind::String if !self.escaped && !other.escaped => self.raw == other.raw,
            Kind::String => json::decode_raw(self.raw) == json::decode_raw(other.raw),
            Kind::Null | Kind::True | Kind::False => true,
        }
    }
}

/// An array of flat rows, after the first pass.
struct Table<'a> {
    /// Where the array starts in the input (its `[`).
    start: usize,
    /// The column names as written, with their quotes.
    names: Vec<&'a str>,
    rows: usize,
    /// The first row's cells.
    first: Vec<Cell<'a>>,
    /// Per column: the same value in every row.
    constant: Vec<bool>,
}

/// A primitive, or `None` (an array, an object, or not JSON).
fn cell<'a>(reader: &mut Reader<'a>) -> Option<Cell<'a>> {
    reader.skip_ws();
    let (kind, raw, escaped) = match reader.peek()? {
        b'"' => {
            let (raw, escaped) = reader.raw_string()?;
            (Kind::String, raw, escaped)
        }
        b'{' | b'[' => return None,
        b't' | b'f' | b'n' => {
            let word = reader.keyword()?;
            let kind = match word {
                "true" => Kind::True,
                "false" => Kind::False,
                _ => Kind::Null,
            };
            (kind, word, false)
        }
        _ => (Kind::Number, reader.number()?, false),
    };
    Some(Cell { kind, raw, escaped })
}

/// A member name without escapes, with its quotes, and the `:` after it.
fn name<'a>(reader: &mut Reader<'a>) -> Option<&'a str> {
    reader.skip_ws();
    let (raw, escaped) = reader.raw_string()?;
    (!escaped && reader.eat(b':')).then_some(raw)
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
        let start = reader.position();
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
    if !json::distinct(members.iter().map(|(name, _)| *name)) {
        return None;
    }
    Some(
        members
            .into_iter()
            .map(|(name, part)| (&name[1..name.len() - 1], part))
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
    if !json::distinct(names.iter().copied()) {
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
            if !reader.eat_str(expected) || !reader.eat(b':') {
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
fn push_cell(cell: &Cell<'_>, out: &mut String) -> Option<()> {
    match cell.kind {
        Kind::String if cell.escaped => push_string(&json::decode_raw(cell.raw)?, out),
        Kind::String => push_string(&cell.raw[1..cell.raw.len() - 1], out),
        _ => out.push_str(cell.raw),
    }
    Some(())
}

fn cell_text(cell: &Cell<'_>) -> Option<String> {
    let mut text = String::new();
    push_cell(cell, &mut text)?;
    Some(text)
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
            let name = table.names[i];
            header.push_str(&encode_key(&name[1..name.len() - 1]));
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
        let name = table.names[i];
        line(out, base + 1);
        out.push_str(&encode_key(&name[1..name.len() - 1]));
        out.push_str(": ");
        push_cell(&table.first[i], out)?;
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
        let text = cell_text(&table.first[i])?.len();
        let name = table.names[i];
        constant_cells += text + 1;
        constant_lines += encode_key(&name[1..name.len() - 1]).len() + text + 2;
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
    let bytes = input.as_bytes();
    let mut reader = Reader::at(input, table.start);
    reader.skip(1);
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
            reader.skip_ws();
            reader.skip(name.len());
            if !reader.eat(b':') {
                return None;
            }
            reader.skip_ws();
            if reader.peek() != Some(b'"') {
                // A number or a keyword, which the first pass read: it runs to the next
                // delimiter or space, and is written as it is.
                let start = reader.position();
                let len = bytes[start..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(bytes.len() - start);
                reader.skip(len);
                if !skip[i] {
                    if written > 0 {
                        out.push(',');
                    }
                    out.push_str(input.get(start..start + len)?);
                    written += 1;
                }
                continue;
            }
            // A string: read once, for its end and for what quoting needs to know.
            let start = reader.position() + 1;
            let (end, escaped, special) = string_end(bytes, start)?;
            reader.skip(end + 1 - reader.position());
            if skip[i] {
                continue;
            }
            if written > 0 {
                out.push(',');
            }
            written += 1;
            let text = &input[start..end];
            if escaped {
                push_string(&json::decode_raw(&input[start - 1..=end])?, out);
            } else if special || needs_quoting_by_shape(text) {
                push_quoted(text, out);
            } else {
                out.push_str(text);
            }
        }
        if !reader.eat(b'}') {
            return None;
        }
    }
    Some(())
}

/// The end of a string the first pass read, from `pos` just after its opening quote: the
/// index of its closing quote, whether it holds an escape, and whether it holds a byte that
/// TOON quotes a string for ([`SPECIAL`]).
fn string_end(bytes: &[u8], mut pos: usize) -> Option<(usize, bool, bool)> {
    let (mut escaped, mut special) = (false, false);
    loop {
        match *bytes.get(pos)? {
            b'"' => return Some((pos, escaped, special)),
            b'\\' => {
                escaped = true;
                pos += 2;
            }
            b => {
                special |= SPECIAL[usize::from(b)];
                pos += 1;
            }
        }
    }
}
