//! The TOON reader for what [`super::encode`] writes: two-space indent, comma delimiter, every
//! form of the reference layout. Numbers keep the text they were written with.
//!
//! It is strict: a line at an unexpected depth, a count that does not match its header, a
//! malformed header or token, or a line left over is an error naming the line.
//!
//! [`decode`] builds a tree; [`expand`] writes the JSON of the common forms (tables of flat
//! rows, hoisted or not, among primitives and objects) line by line, and leaves every other
//! form, and every error, to it.

use std::borrow::Cow;

use toon_format::unescape_string;

use parrot_json::{MAX_DEPTH, Str, Value, is_number};

type Members<'a> = Vec<(Str<'a>, Value<'a>)>;

const DELIMITER: u8 = b',';

/// Why a document could not be read: the line (1-based) and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TOON line {}: {}", self.line, self.message)
    }
}

/// Reads a TOON document.
pub(crate) fn decode(text: &str) -> Result<Value<'_>, DecodeError> {
    let mut lines = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        if !line_ok(raw) {
            return Err(DecodeError {
                line: i + 1,
                message: "a blank line, or an indent that is not a multiple of two spaces".into(),
            });
        }
        lines.push(to_line(raw));
    }
    let mut reader = Reader { lines, pos: 0 };
    let value = reader.document()?;
    if reader.pos < reader.lines.len() {
        return Err(reader.error_at(reader.pos, "unexpected line"));
    }
    Ok(value)
}

struct Line<'t> {
    depth: usize,
    content: &'t str,
}

struct Header<'t> {
    len: usize,
    keyed: bool,
    fields: Option<Vec<Field<'t>>>,
}

struct Field<'t> {
    name: Cow<'t, str>,
    children: Option<Vec<Field<'t>>>,
}

struct Reader<'t> {
    lines: Vec<Line<'t>>,
    pos: usize,
}

impl<'t> Reader<'t> {
    fn error_at(&self, index: usize, message: impl Into<String>) -> DecodeError {
        DecodeError {
            line: index + 1,
            message: message.into(),
        }
    }

    /// An error about the line just read.
    fn error(&self, message: impl Into<String>) -> DecodeError {
        self.error_at(self.pos.saturating_sub(1), message)
    }

    fn document(&mut self) -> Result<Value<'t>, DecodeError> {
        let (depth, content) = match self.lines.first() {
            Some(line) => (line.depth, line.content),
            None => return Err(self.error_at(0, "an empty document")),
        };
        if depth != 0 {
            return Err(self.error_at(0, "the first line is indented"));
        }
        if content.starts_with('[') {
            self.pos = 1;
            let (header, rest) = header(content).map_err(|m| self.error(m))?;
            return self.array(header, rest, 1);
        }
        Ok(Value::Object(self.object(0)?))
    }

    /// The next line, which must be at `depth`.
    fn next_at(&mut self, depth: usize, what: &str) -> Result<&'t str, DecodeError> {
        let Some(line) = self.lines.get(self.pos) else {
            return Err(self.error_at(self.pos, format!("missing {what}")));
        };
        if line.depth != depth {
            return Err(self.error_at(self.pos, format!("expected {what} at depth {depth}")));
        }
        let content = line.content;
        self.pos += 1;
        Ok(content)
    }

    /// The members on the lines at `depth`, up to the first line above it.
    fn object(&mut self, depth: usize) -> Result<Members<'t>, DecodeError> {
        let mut members = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.depth < depth {
                break;
            }
            if line.depth > depth {
                return Err(self.error_at(self.pos, "unexpected indent"));
            }
            let content = line.content;
            self.pos += 1;
            members.push(self.member(content, depth + 1)?);
        }
        Ok(members)
    }

    /// One `key…` line; what it holds (rows, items, members) is at `nested`.
    fn member(
        &mut self,
        content: &'t str,
        nested: usize,
    ) -> Result<(Str<'t>, Value<'t>), DecodeError> {
        let (key, rest) = key(content)
            .map_err(|m| self.error(m))?
            .ok_or_else(|| self.error("expected a key"))?;
        let value = if rest.starts_with('[') {
            let (header, rest) = header(rest).map_err(|m| self.error(m))?;
            self.array(header, rest, nested)?
        } else if rest == ":" {
            Value::Object(self.object(nested)?)
        } else if let Some(token) = rest.strip_prefix(": ") {
            if token == "[]" {
                Value::Array(Vec::new())
            } else {
                primitive(token).map_err(|m| self.error(m))?
            }
        } else {
            return Err(self.error("expected ':' after the key"));
        };
        Ok((Str::new(key), value))
    }

    /// The array a header announces; `rest` is what follows the header's colon on its line,
    /// and rows or items are at `nested`.
    ///
    /// Arrays of arrays recurse through here and [`Reader::item`], so what the other forms
    /// need lives in functions of their own: a frame of this one stays small, and nesting as
    /// deep as the host allows fits in a thread's stack even unoptimized.
    fn array(
        &mut self,
        header: Header<'t>,
        rest: &'t str,
        nested: usize,
    ) -> Result<Value<'t>, DecodeError> {
        if !rest.is_empty() {
            return self.inline_array(header, rest);
        }
        match (header.fields, header.keyed) {
            (Some(fields), false) => self.table(header.len, &fields, nested),
            (Some(fields), true) => self.keyed_table(header.len, &fields, nested),
            (None, false) => {
                let mut items = Vec::with_capacity(header.len);
                for _ in 0..header.len {
                    items.push(self.item(nested)?);
                }
                Ok(Value::Array(items))
            }
            (None, true) => Err(self.error("a keyed header without fields")),
        }
    }

    /// `key[N]: a,b,c`: the values after the header.
    fn inline_array(&self, header: Header<'t>, rest: &'t str) -> Result<Value<'t>, DecodeError> {
        let values = rest
            .strip_prefix(' ')
            .filter(|_| header.fields.is_none() && !header.keyed)
            .ok_or_else(|| self.error("unexpected text after the header"))?;
        let cells = cells(values)
            .and_then(|cells| cells.into_iter().map(primitive).collect())
            .map_err(|m| self.error(m))?;
        self.counted(header.len, cells).map(Value::Array)
    }

    /// `len` table rows at `nested`.
    fn table(
        &mut self,
        len: usize,
        fields: &[Field<'t>],
        nested: usize,
    ) -> Result<Value<'t>, DecodeError> {
        let mut rows = Vec::with_capacity(len);
        for _ in 0..len {
            let line = self.next_at(nested, "a table row")?;
            rows.push(self.row(line, fields)?);
        }
        Ok(Value::Array(rows))
    }

    /// `len` keyed rows (`name: cells`) at `nested`.
    fn keyed_table(
        &mut self,
        len: usize,
        fields: &[Field<'t>],
        nested: usize,
    ) -> Result<Value<'t>, DecodeError> {
        let mut entries = Vec::with_capacity(len);
        for _ in 0..len {
            let line = self.next_at(nested, "a keyed row")?;
            let (name, rest) = key(line)
                .map_err(|m| self.error(m))?
                .ok_or_else(|| self.error("expected a key"))?;
            let cells = rest
                .strip_prefix(": ")
                .ok_or_else(|| self.error("expected ': ' after the key"))?;
            entries.push((Str::new(name), self.row(cells, fields)?));
        }
        Ok(Value::Object(entries))
    }

    fn counted(&self, len: usize, values: Vec<Value<'t>>) -> Result<Vec<Value<'t>>, DecodeError> {
        if values.len() != len {
            return Err(self.error(format!(
                "the header announces {len} values, the line has {}",
                values.len()
            )));
        }
        Ok(values)
    }

    /// One table row: its cells, in the order of `fields`, as an object.
    fn row(&self, line: &'t str, fields: &[Field<'t>]) -> Result<Value<'t>, DecodeError> {
        let cells = cells(line).map_err(|m| self.error(m))?;
        let expected = leaf_count(fields);
        if cells.len() != expected {
            return Err(self.error(format!(
                "expected {expected} cells, the row has {}",
                cells.len()
            )));
        }
        let mut cells = cells.into_iter();
        object_from_cells(fields, &mut cells).map_err(|m| self.error(m))
    }

    /// One list item at `depth`.
    fn item(&mut self, depth: usize) -> Result<Value<'t>, DecodeError> {
        let content = self.next_at(depth, "a list item")?;
        if content == "-" {
            return Ok(Value::Object(Vec::new()));
        }
        let rest = content
            .strip_prefix("- ")
            .ok_or_else(|| self.error("expected a list item"))?;
        if rest.starts_with('[') {
            let (header, after) = header(rest).map_err(|m| self.error(m))?;
            return self.array(header, after, depth + 1);
        }
        self.item_value(rest, depth)
    }

    /// A list item that is not an array: a primitive, or an object (kept out of
    /// [`Reader::item`] for the size of its frame, as in [`Reader::array`]).
    fn item_value(&mut self, rest: &'t str, depth: usize) -> Result<Value<'t>, DecodeError> {
        let is_member = key(rest)
            .map_err(|m| self.error(m))?
            .is_some_and(|(_, after)| after.starts_with([':', '[']));
        if !is_member {
            return primitive(rest).map_err(|m| self.error(m));
        }
        // An object: its first member on the hyphen line (what it holds two levels down),
        // the other members one level down.
        let mut members = vec![self.member(rest, depth + 2)?];
        members.extend(self.object(depth + 1)?);
        Ok(Value::Object(members))
    }
}

/// A key at the start of `text` and what follows it; `None` when `text` does not start with
/// one.
fn key(text: &str) -> Result<Option<(Cow<'_, str>, &str)>, String> {
    if text.starts_with('"') {
        let end = closing_quote(text)?;
        let name = unquote(&text[..=end])?;
        return Ok(Some((name, &text[end + 1..])));
    }
    let bytes = text.as_bytes();
    if !bytes
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
    {
        return Ok(None);
    }
    let end = bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.'))
        .unwrap_or(bytes.len());
    Ok(Some((Cow::Borrowed(&text[..end]), &text[end..])))
}

/// `[N]`, `[N:]`, then optionally `{fields}`, then `:`; returns the header and what follows
/// the colon.
fn header(text: &str) -> Result<(Header<'_>, &str), String> {
    let inner = text.strip_prefix('[').ok_or("expected '['")?;
    let close = inner.find(']').ok_or("unclosed '['")?;
    let (len, keyed) = match inner[..close].strip_suffix(':') {
        Some(len) => (len, true),
        None => (&inner[..close], false),
    };
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad array length {len:?}"));
    }
    let len: usize = len
        .parse()
        .map_err(|_| format!("bad array length {len:?}"))?;
    let mut rest = &inner[close + 1..];
    let mut fields = None;
    if rest.starts_with('{') {
        let (list, after) = field_list(&rest[1..], 0)?;
        fields = Some(list);
        rest = after;
    }
    let rest = rest
        .strip_prefix(':')
        .ok_or("expected ':' after the header")?;
    Ok((Header { len, keyed, fields }, rest))
}

/// Fields up to the closing `}` (already past the opening one), and what follows it.
fn field_list(mut text: &str, depth: usize) -> Result<(Vec<Field<'_>>, &str), String> {
    if depth > MAX_DEPTH {
        return Err("field groups nested too deeply".into());
    }
    let mut fields = Vec::new();
    loop {
        let (name, rest) = key(text)?.ok_or("expected a field name")?;
        let mut field = Field {
            name,
            children: None,
        };
        text = rest;
        if let Some(rest) = text.strip_prefix('{') {
            let (children, rest) = field_list(rest, depth + 1)?;
            field.children = Some(children);
            text = rest;
        }
        fields.push(field);
        match text.as_bytes().first() {
            Some(b',') => text = &text[1..],
            Some(b'}') => return Ok((fields, &text[1..])),
            _ => return Err("expected ',' or '}' in the field list".into()),
        }
    }
}

fn leaf_count(fields: &[Field<'_>]) -> usize {
    fields
        .iter()
        .map(|field| field.children.as_deref().map_or(1, leaf_count))
        .sum()
}

fn object_from_cells<'t>(
    fields: &[Field<'t>],
    cells: &mut impl Iterator<Item = &'t str>,
) -> Result<Value<'t>, String> {
    let mut members = Vec::with_capacity(fields.len());
    for field in fields {
        let value = match &field.children {
            Some(children) => object_from_cells(children, cells)?,
            None => primitive(cells.next().ok_or("a missing cell")?)?,
        };
        members.push((Str::new(field.name.clone()), value));
    }
    Ok(Value::Object(members))
}

/// Splits a line at the delimiters outside quoted strings.
fn cells(line: &str) -> Result<Vec<&str>, String> {
    let mut cells = Vec::new();
    split_cells(line, &mut cells)?;
    Ok(cells)
}

/// [`cells`] into `cells`, cleared first.
fn split_cells<'l>(line: &'l str, cells: &mut Vec<&'l str>) -> Result<(), String> {
    cells.clear();
    let bytes = line.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i += closing_quote(&line[i..])? + 1,
            DELIMITER => {
                cells.push(&line[start..i]);
                start = i + 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    cells.push(&line[start..]);
    Ok(())
}

/// The byte index of the quote closing the string that `text` starts with.
fn closing_quote(text: &str) -> Result<usize, String> {
    let bytes = text.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Ok(i),
            _ => i += 1,
        }
    }
    Err("an unterminated string".into())
}

fn unquote(quoted: &str) -> Result<Cow<'_, str>, String> {
    let inner = &quoted[1..quoted.len() - 1];
    if inner.contains('\\') {
        unescape_string(inner).map(Cow::Owned)
    } else {
        Ok(Cow::Borrowed(inner))
    }
}

/// One primitive token: a quoted string, `true`, `false`, `null`, a number (TOON's decoder
/// reads numbers by JSON's grammar; the text is kept), or else an unquoted string.
fn primitive(token: &str) -> Result<Value<'_>, String> {
    if token.starts_with('"') {
        let end = closing_quote(token)?;
        if end != token.len() - 1 {
            return Err(format!("text after a closing quote in {token:?}"));
        }
        return unquote(token).map(|value| Value::String(Str::new(value)));
    }
    Ok(match token {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ if is_number(token) => Value::Number(Cow::Borrowed(token)),
        _ => Value::String(Str::new(token)),
    })
}

/// How many levels a line may be indented.
pub(crate) const MAX_INDENT: usize = 2 * MAX_DEPTH;

/// Whether `raw` is a line [`decode`] accepts (not blank, an indent of whole levels, at most
/// [`MAX_INDENT`] of them).
fn line_ok(raw: &str) -> bool {
    let content = raw.trim_start_matches(' ');
    let spaces = raw.len() - content.len();
    // The writer indents a line at most one level per level of nesting of its input (the unit
    // tests check it on generated documents), so the TOON of any payload the host hands over
    // (at most MAX_DEPTH levels) is read; the bound keeps this reader's recursion within a
    // 2 MiB thread stack on documents it did not write.
    !content.is_empty() && spaces.is_multiple_of(2) && spaces / 2 <= MAX_INDENT
}

/// The compact JSON of a document made of primitives, inline arrays, nested objects and tables
/// of flat rows (hoisted or not): the JSON [`decode`] then [`super::hoist::unhoist`] (with
/// `hoist`) then [`Value::write`] give, written line by line without a tree. `None` for
/// any other form and for anything malformed: the tree reader takes those, and names the error.
pub(crate) fn expand(text: &str, hoist: bool) -> Option<String> {
    if !text.split('\n').all(line_ok) {
        return None;
    }
    let mut stream = Stream {
        lines: text.split('\n').map(to_line).peekable(),
        out: String::with_capacity(text.len() * 2),
        cells: Vec::new(),
        hoist,
    };
    let first = stream.lines.peek()?;
    if first.depth != 0 {
        return None;
    }
    if first.content.starts_with('[') {
        let content = first.content;
        stream.lines.next();
        let (header, rest) = header(content).ok()?;
        stream.array(header, rest, 1)?;
    } else {
        stream.object(0)?;
    }
    if stream.lines.peek().is_some() {
        return None;
    }
    Some(stream.out)
}

fn to_line(raw: &str) -> Line<'_> {
    let content = raw.trim_start_matches(' ');
    Line {
        depth: (raw.len() - content.len()) / 2,
        content,
    }
}

/// The line-by-line JSON writer behind [`expand`].
struct Stream<'t, I: Iterator<Item = Line<'t>>> {
    lines: std::iter::Peekable<I>,
    out: String,
    /// The cells of the row being written (kept to reuse its allocation).
    cells: Vec<&'t str>,
    hoist: bool,
}

impl<'t, I: Iterator<Item = Line<'t>>> Stream<'t, I> {
    /// The next line's content when it is at `depth`.
    fn next_at(&mut self, depth: usize) -> Option<&'t str> {
        let line = self.lines.next_if(|line| line.depth == depth)?;
        Some(line.content)
    }

    fn primitive(&mut self, token: &str) -> Option<()> {
        primitive(token).ok()?.write(&mut self.out);
        Some(())
    }

    /// The members on the lines at `depth`, up to the first line above it.
    fn object(&mut self, depth: usize) -> Option<()> {
        if self.hoist
            && let Some(line) = self.lines.peek()
            && line.depth == depth
            && key(line.content)
                .ok()?
                .is_some_and(|(name, _)| name == super::hoist::CONSTANTS)
        {
            return self.hoisted(depth);
        }
        self.out.push('{');
        let mut first = true;
        while let Some(line) = self.lines.peek() {
            if line.depth < depth {
                break;
            }
            if line.depth > depth {
                return None;
            }
            let content = line.content;
            self.lines.next();
            if !first {
                self.out.push(',');
            }
            first = false;
            self.member(content, depth + 1)?;
        }
        self.out.push('}');
        Some(())
    }

    fn member(&mut self, content: &'t str, nested: usize) -> Option<()> {
        let (key, rest) = key(content).ok()??;
        parrot_json::write_string(&key, &mut self.out);
        self.out.push(':');
        if rest.starts_with('[') {
            let (header, rest) = header(rest).ok()?;
            self.array(header, rest, nested)
        } else if rest == ":" {
            self.object(nested)
        } else {
            match rest.strip_prefix(": ")? {
                "[]" => {
                    self.out.push_str("[]");
                    Some(())
                }
                token => self.primitive(token),
            }
        }
    }

    /// An inline array or a table of flat rows; `rest` follows the header's colon.
    fn array(&mut self, header: Header<'t>, rest: &'t str, nested: usize) -> Option<()> {
        if header.keyed {
            return None;
        }
        self.out.push('[');
        if !rest.is_empty() {
            let values = rest.strip_prefix(' ').filter(|_| header.fields.is_none())?;
            let mut cells = std::mem::take(&mut self.cells);
            split_cells(values, &mut cells).ok()?;
            if cells.len() != header.len {
                return None;
            }
            for (i, cell) in cells.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.primitive(cell)?;
            }
            self.cells = cells;
        } else {
            let fields = header.fields?;
            self.rows(header.len, &fields, nested, "")?;
        }
        self.out.push(']');
        Some(())
    }

    /// `len` table rows at `depth`, each an object of `fields` (all leaves) followed by
    /// `extra`, members already written as JSON with a leading comma each.
    fn rows(&mut self, len: usize, fields: &[Field<'t>], depth: usize, extra: &str) -> Option<()> {
        if fields.iter().any(|field| field.children.is_some()) {
            return None;
        }
        let mut cells = std::mem::take(&mut self.cells);
        for row in 0..len {
            let line = self.next_at(depth)?;
            split_cells(line, &mut cells).ok()?;
            if cells.len() != fields.len() {
                return None;
            }
            if row > 0 {
                self.out.push(',');
            }
            self.out.push('{');
            for (i, (field, cell)) in fields.iter().zip(&cells).enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                parrot_json::write_string(&field.name, &mut self.out);
                self.out.push(':');
                self.primitive(cell)?;
            }
            self.out.push_str(extra);
            self.out.push('}');
        }
        self.cells = cells;
        Some(())
    }

    /// An object at `depth` that starts with `_constants`: written as the rows with the
    /// constants put back when it is a hoisted table of flat rows with primitive constants,
    /// `None` otherwise.
    fn hoisted(&mut self, depth: usize) -> Option<()> {
        let content = self.next_at(depth)?;
        if key(content).ok()??.1 != ":" {
            return None;
        }
        let mut constants = String::new();
        while let Some(content) = self.next_at(depth + 1) {
            let (name, rest) = key(content).ok()??;
            let token = rest.strip_prefix(": ").filter(|token| *token != "[]")?;
            constants.push(',');
            parrot_json::write_string(&name, &mut constants);
            constants.push(':');
            primitive(token).ok()?.write(&mut constants);
        }
        let content = self.next_at(depth)?;
        let (name, rest) = key(content).ok()??;
        if name != super::hoist::ROWS {
            return None;
        }
        let (header, rest) = header(rest).ok()?;
        if !rest.is_empty() || header.keyed {
            return None;
        }
        self.out.push('[');
        match header.fields {
            Some(fields) => self.rows(header.len, &fields, depth + 1, &constants)?,
            None => {
                for row in 0..header.len {
                    if self.next_at(depth + 1)? != "-" {
                        return None;
                    }
                    if row > 0 {
                        self.out.push(',');
                    }
                    self.out.push('{');
                    self.out
                        .push_str(constants.strip_prefix(',').unwrap_or_default());
                    self.out.push('}');
                }
            }
        }
        self.out.push(']');
        // A third member: not the hoisted shape.
        match self.lines.peek() {
            Some(line) if line.depth >= depth => None,
            _ => Some(()),
        }
    }
}
