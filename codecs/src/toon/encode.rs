//! The TOON writer: the layout of the reference encoder (TOON spec 4.4, as `toon-format`
//! writes it with its defaults: two-space indent, comma delimiter), with two differences.
//!
//! - Numbers are written exactly as the JSON input wrote them (`1000.0`, `1E5`, a 30-digit
//!   integer). Every JSON number is a number under TOON's decoder grammar, so readers still
//!   read it as one; the reference encoder would write its canonical form instead.
//! - Wherever the reference writes a table, constant columns may be hoisted out of it
//!   ([`super::hoist`]); the hoisted form is written only when it is strictly shorter.
//!
//! Strings and keys are quoted and escaped by `toon-format`'s own rules: its key check, and
//! its string check ([`needs_quoting`]) and its escaping ([`push_quoted`]) each redone in one
//! pass over the bytes (the unit tests hold each to the same answers as the original).
//!
//! This writer takes a tree of the whole input; tables of flat rows are written by
//! [`super::stream`] instead, without one, to the same bytes.

use std::borrow::Cow;

use toon_format::is_valid_unquoted_key;

use parrot_json::{MAX_DEPTH, Value};

use super::hoist;
use super::{Members, member};

const DELIMITER: char = ',';
const INDENT: &str = "  ";

/// A column of a table: a primitive leaf, or a group of nested columns (`user{name,id}`).
struct Field<'v> {
    name: Cow<'v, str>,
    children: Option<Vec<Field<'v>>>,
}

/// The TOON document for `value`, with hoisting when `hoist` is true.
pub(crate) fn encode(value: &Value<'_>, hoist: bool) -> String {
    let mut writer = Writer::new(hoist);
    match value {
        Value::Array(items) => writer.array(None, items, 0),
        Value::Object(members) => match keyed_fields(members) {
            Some(fields) => writer.keyed(None, members, &fields, 0),
            None => writer.object(members, 0),
        },
        // On the first line a leading U+FEFF would be read as a byte-order mark.
        Value::String(text) if text.decoded().starts_with('\u{feff}') => {
            writer.out.push_str(&quote(&text.decoded()));
        }
        primitive => writer.out.push_str(&primitive_text(primitive)),
    }
    writer.out
}

struct Writer {
    out: String,
    hoist: bool,
}

impl Writer {
    fn new(hoist: bool) -> Writer {
        Writer {
            out: String::new(),
            hoist,
        }
    }

    /// Starts a line at `depth` and returns the buffer to write its content into.
    fn line(&mut self, depth: usize) -> &mut String {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        for _ in 0..depth {
            self.out.push_str(INDENT);
        }
        &mut self.out
    }

    fn list_item(&mut self, depth: usize, content: &str) {
        let line = self.line(depth);
        line.push_str("- ");
        line.push_str(content);
    }

    /// Appends lines written by another writer.
    fn append(&mut self, lines: Writer) {
        if lines.out.is_empty() {
            return;
        }
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out.push_str(&lines.out);
    }

    fn object(&mut self, members: &Members<'_>, depth: usize) {
        for (key, value) in members {
            self.member(&key.decoded(), value, depth);
        }
    }

    fn member(&mut self, key: &str, value: &Value<'_>, depth: usize) {
        match value {
            Value::Array(items) => self.array(Some(key), items, depth),
            Value::Object(members) => {
                if let Some(fields) = keyed_fields(members) {
                    return self.keyed(Some(key), members, &fields, depth);
                }
                let line = self.line(depth);
                line.push_str(&encode_key(key));
                line.push(':');
                self.object(members, depth + 1);
            }
            primitive => {
                let line = self.line(depth);
                line.push_str(&encode_key(key));
                line.push_str(": ");
                line.push_str(&primitive_text(primitive));
            }
        }
    }

    fn array(&mut self, key: Option<&str>, items: &[Value<'_>], depth: usize) {
        if items.is_empty() {
            let line = self.line(depth);
            match key {
                Some(key) => {
                    line.push_str(&encode_key(key));
                    line.push_str(": []");
                }
                None => line.push_str("[]"),
            }
            return;
        }
        if items.iter().all(Value::is_scalar) {
            let content = inline(key, items);
            self.line(depth).push_str(&content);
            return;
        }
        if let Some(inner) = primitive_arrays(items) {
            let header = header(items.len(), key, None, false);
            self.line(depth).push_str(&header);
            for inner in inner {
                self.list_item(depth + 1, &inline(None, inner));
            }
            return;
        }
        if let Some((rows, fields)) = table(items) {
            return self.table(key, &rows, &fields, depth);
        }
        let header = header(items.len(), key, None, false);
        self.line(depth).push_str(&header);
        for item in items {
            self.item(item, depth + 1);
        }
    }

    /// A table where the reference writes one: its hoisted form instead when that is shorter.
    fn table(
        &mut self,
        key: Option<&str>,
        rows: &[&Members<'_>],
        fields: &[Field<'_>],
        depth: usize,
    ) {
        let mut plain = Writer::new(self.hoist);
        plain.rows(key, rows, fields, depth);
        if let Some(hoisted) = self.hoisted(rows, fields) {
            let mut alternative = Writer::new(self.hoist);
            match (key, &hoisted) {
                (Some(key), hoisted) => alternative.member(key, hoisted, depth),
                (None, Value::Object(members)) => alternative.object(members, depth),
                (None, _) => {}
            }
            if !alternative.out.is_empty() && alternative.out.len() < plain.out.len() {
                return self.append(alternative);
            }
        }
        self.append(plain);
    }

    fn hoisted<'a>(&self, rows: &[&Members<'a>], fields: &[Field<'_>]) -> Option<Value<'a>> {
        if !self.hoist {
            return None;
        }
        let columns: Vec<&str> = fields.iter().map(|field| field.name.as_ref()).collect();
        hoist::split(rows, &columns)
    }

    /// A table's header at `depth`, its rows one level below.
    fn rows(
        &mut self,
        key: Option<&str>,
        rows: &[&Members<'_>],
        fields: &[Field<'_>],
        depth: usize,
    ) {
        let header = header(rows.len(), key, Some(fields), false);
        self.line(depth).push_str(&header);
        self.table_rows(rows, fields, depth + 1);
    }

    fn table_rows(&mut self, rows: &[&Members<'_>], fields: &[Field<'_>], depth: usize) {
        let mut leaves = Vec::with_capacity(fields.len());
        for row in rows {
            leaves.clear();
            collect_leaves(row, fields, &mut leaves);
            let line = self.line(depth);
            join(&leaves, line);
        }
    }

    /// An object whose members are objects with the same columns: `key[N:]{fields}:`, then
    /// one `name: cells` line per member.
    fn keyed(
        &mut self,
        key: Option<&str>,
        members: &Members<'_>,
        fields: &[Field<'_>],
        depth: usize,
    ) {
        let header = header(members.len(), key, Some(fields), true);
        self.line(depth).push_str(&header);
        self.keyed_rows(members, fields, depth + 1);
    }

    fn keyed_rows(&mut self, members: &Members<'_>, fields: &[Field<'_>], depth: usize) {
        let mut leaves = Vec::with_capacity(fields.len());
        for (name, value) in members {
            let Value::Object(entry) = value else {
                continue;
            };
            leaves.clear();
            collect_leaves(entry, fields, &mut leaves);
            let line = self.line(depth);
            line.push_str(&encode_key(&name.decoded()));
            line.push_str(": ");
            join(&leaves, line);
        }
    }

    /// One element of an array in list form.
    fn item(&mut self, value: &Value<'_>, depth: usize) {
        match value {
            Value::Array(items) if items.iter().all(Value::is_scalar) => {
                self.list_item(depth, &inline(None, items));
            }
            Value::Array(items) => {
                // A keyless table header is valid only at the root: list form here.
                self.list_item(depth, &header(items.len(), None, None, false));
                for item in items {
                    self.item(item, depth + 1);
                }
            }
            Value::Object(members) => self.object_item(members, depth),
            primitive => self.list_item(depth, &primitive_text(primitive)),
        }
    }

    /// An object as a list item: its first member on the hyphen line, the others one level
    /// below it.
    fn object_item(&mut self, members: &Members<'_>, depth: usize) {
        let Some(((first_key, first), rest)) = members.split_first() else {
            self.line(depth).push('-');
            return;
        };
        let first_key = first_key.decoded();
        if let Value::Array(items) = first
            && let Some((rows, fields)) = table(items)
        {
            self.first_table(&first_key, &rows, &fields, depth);
        } else if let Value::Object(entries) = first
            && let Some(fields) = keyed_fields(entries)
        {
            let header = header(entries.len(), Some(&first_key), Some(&fields), true);
            self.list_item(depth, &header);
            self.keyed_rows(entries, &fields, depth + 2);
        } else {
            self.first_member(&first_key, first, depth);
        }
        for (key, value) in rest {
            self.member(&key.decoded(), value, depth + 1);
        }
    }

    /// A list item's first member that is not a table: on the hyphen line, what it holds two
    /// levels below it.
    fn first_member(&mut self, first_key: &str, first: &Value<'_>, depth: usize) {
        match first {
            Value::Array(items) if items.is_empty() => {
                self.list_item(depth, &format!("{}: []", encode_key(first_key)));
            }
            Value::Array(items) if items.iter().all(Value::is_scalar) => {
                let content = format!("{}{}", encode_key(first_key), inline(None, items));
                self.list_item(depth, &content);
            }
            Value::Array(items) => {
                let content = format!(
                    "{}{}",
                    encode_key(first_key),
                    header(items.len(), None, None, false)
                );
                self.list_item(depth, &content);
                for item in items {
                    self.item(item, depth + 2);
                }
            }
            Value::Object(entries) => {
                self.list_item(depth, &format!("{}:", encode_key(first_key)));
                self.object(entries, depth + 2);
            }
            primitive => {
                let content = format!("{}: {}", encode_key(first_key), primitive_text(primitive));
                self.list_item(depth, &content);
            }
        }
    }

    /// A table as a list item's first member: header on the hyphen line, rows two levels
    /// below it; or its hoisted form (`- key:`, then the object two levels below) when shorter.
    fn first_table(
        &mut self,
        key: &str,
        rows: &[&Members<'_>],
        fields: &[Field<'_>],
        depth: usize,
    ) {
        let mut plain = Writer::new(self.hoist);
        plain.list_item(depth, &header(rows.len(), Some(key), Some(fields), false));
        plain.table_rows(rows, fields, depth + 2);
        if let Some(Value::Object(hoisted)) = self.hoisted(rows, fields) {
            let mut alternative = Writer::new(self.hoist);
            alternative.list_item(depth, &format!("{}:", encode_key(key)));
            alternative.object(&hoisted, depth + 2);
            if alternative.out.len() < plain.out.len() {
                return self.append(alternative);
            }
        }
        self.append(plain);
    }
}

/// `key[N]: a,b,c` (or `[N]:` for none).
fn inline(key: Option<&str>, items: &[Value<'_>]) -> String {
    let mut content = header(items.len(), key, None, false);
    if !items.is_empty() {
        content.push(' ');
        let leaves: Vec<&Value<'_>> = items.iter().collect();
        join(&leaves, &mut content);
    }
    content
}

fn join(leaves: &[&Value<'_>], out: &mut String) {
    for (i, leaf) in leaves.iter().enumerate() {
        if i > 0 {
            out.push(DELIMITER);
        }
        push_primitive(leaf, out);
    }
}

/// `key[N]{fields}:`, `key[N:]{fields}:` (keyed), `key[N]:`.
fn header(len: usize, key: Option<&str>, fields: Option<&[Field<'_>]>, keyed: bool) -> String {
    let mut header = String::new();
    if let Some(key) = key {
        header.push_str(&encode_key(key));
    }
    header.push('[');
    header.push_str(&len.to_string());
    if keyed {
        header.push(':');
    }
    header.push(']');
    if let Some(fields) = fields {
        header.push('{');
        field_list(fields, &mut header);
        header.push('}');
    }
    header.push(':');
    header
}

fn field_list(fields: &[Field<'_>], out: &mut String) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(DELIMITER);
        }
        out.push_str(&encode_key(&field.name));
        if let Some(children) = &field.children {
            out.push('{');
            field_list(children, out);
            out.push('}');
        }
    }
}

fn primitive_text<'v>(value: &'v Value<'_>) -> Cow<'v, str> {
    match value {
        Value::String(text) => {
            let text = text.decoded();
            if needs_quoting(&text) {
                Cow::Owned(quote(&text))
            } else {
                text
            }
        }
        Value::Null => Cow::Borrowed("null"),
        Value::Bool(true) => Cow::Borrowed("true"),
        Value::Bool(false) => Cow::Borrowed("false"),
        Value::Number(text) => Cow::Borrowed(text),
        Value::Array(_) | Value::Object(_) => Cow::Borrowed(""),
    }
}

/// Appends [`primitive_text`] of `value` to `out`.
fn push_primitive(value: &Value<'_>, out: &mut String) {
    match value {
        Value::String(text) => push_string(&text.decoded(), out),
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(text) => out.push_str(text),
        Value::Array(_) | Value::Object(_) => {}
    }
}

/// Appends the string `text` as a cell or a member's value: quoted and escaped where
/// `toon_format::needs_quoting` (comma delimiter) says it must be, as it is otherwise.
pub(crate) fn push_string(text: &str, out: &mut String) {
    if needs_quoting(text) {
        push_quoted(text, out);
    } else {
        out.push_str(text);
    }
}

fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    push_quoted(text, &mut quoted);
    quoted
}

/// Appends `"text"`, escaped as `toon_format::escape_string` escapes it (TOON §7.1): `\\`,
/// `\"`, `\n`, `\r`, `\t`, and every other C0 control as `\u00xx` in lower-case hex. Those are
/// the bytes [`parrot_json::string_stop`] stops at, all ASCII, so the runs between them are
/// copied whole rather than character by character (the unit tests hold the two to the same
/// answers).
pub(crate) fn push_quoted(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = text.as_bytes();
    let mut from = 0;
    loop {
        let at = parrot_json::string_stop(bytes, from);
        out.push_str(text.get(from..at).unwrap_or_default());
        let Some(&byte) = bytes.get(at) else {
            break;
        };
        match byte {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            control => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(control >> 4)]));
                out.push(char::from(HEX[usize::from(control & 0xf)]));
            }
        }
        from = at + 1;
    }
    out.push('"');
}

/// Bytes that make a string need quotes wherever they stand (TOON §7.2): the C0 controls,
/// `:`, `"`, `\`, brackets, braces, and the delimiter.
const SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    let others = b":\"\\[]{},";
    let mut i = 0;
    while i < others.len() {
        table[others[i] as usize] = true;
        i += 1;
    }
    table
};

/// `toon_format::needs_quoting(text, ',')`, in one pass over the bytes (the unit tests check
/// the two agree on generated strings). Every character it looks for is ASCII, and no byte of
/// a multi-byte UTF-8 sequence is, so reading bytes is reading characters here.
pub(crate) fn needs_quoting(text: &str) -> bool {
    text.bytes().any(|b| SPECIAL[usize::from(b)]) || needs_quoting_by_shape(text)
}

/// What [`needs_quoting`] looks at besides the [`SPECIAL`] bytes: empty, padded, starting like
/// a list item or a comment, or reading as a number or a keyword.
fn needs_quoting_by_shape(text: &str) -> bool {
    let bytes = text.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return true;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return true;
    }
    match first {
        b'0'..=b'9' | b'+' => numeric_like(bytes),
        b't' | b'f' | b'n' => matches!(text, "true" | "false" | "null"),
        _ => false,
    }
}

/// The §7.2 numeric-like trigger, `^[+-]?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$` (case-blind).
fn numeric_like(bytes: &[u8]) -> bool {
    let digits = |i: &mut usize| {
        let from = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    if !digits(&mut i) {
        return false;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == bytes.len()
}

pub(crate) fn encode_key(key: &str) -> Cow<'_, str> {
    if is_valid_unquoted_key(key) {
        Cow::Borrowed(key)
    } else {
        Cow::Owned(quote(key))
    }
}

/// Every element an array of primitives, or `None`.
fn primitive_arrays<'v, 'a>(items: &'v [Value<'a>]) -> Option<Vec<&'v [Value<'a>]>> {
    items
        .iter()
        .map(|item| match item {
            Value::Array(inner) if inner.iter().all(Value::is_scalar) => Some(inner.as_slice()),
            _ => None,
        })
        .collect()
}

/// The rows and columns of `items` when the reference writes them as a table: every element
/// an object with the same keys, each column all primitives or all objects that are
/// themselves such rows.
fn table<'v, 'a>(items: &'v [Value<'a>]) -> Option<(Vec<&'v Members<'a>>, Vec<Field<'v>>)> {
    let rows: Vec<&Members<'a>> = items
        .iter()
        .map(|item| match item {
            Value::Object(members) => Some(members),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let fields = fields_of(&rows, 0)?;
    Some((rows, fields))
}

/// The columns of an object whose members are all non-empty objects with the same columns,
/// when there are at least two members (the keyed table, `key[N:]{fields}:`).
fn keyed_fields<'v>(members: &'v Members<'_>) -> Option<Vec<Field<'v>>> {
    if members.len() < 2 {
        return None;
    }
    let entries: Vec<&Members<'_>> = members
        .iter()
        .map(|(_, value)| match value {
            Value::Object(entry) if !entry.is_empty() => Some(entry),
            _ => None,
        })
        .collect::<Option<_>>()?;
    fields_of(&entries, 0)
}

fn fields_of<'v>(objects: &[&'v Members<'_>], depth: usize) -> Option<Vec<Field<'v>>> {
    let first = objects.first()?;
    if first.is_empty() {
        return None;
    }
    for object in &objects[1..] {
        if object.len() != first.len()
            || !first
                .iter()
                .enumerate()
                .all(|(i, (key, _))| member(object, i, &key.decoded()).is_some())
        {
            return None;
        }
    }
    let mut fields = Vec::with_capacity(first.len());
    for (i, (name, _)) in first.iter().enumerate() {
        let name = name.decoded();
        let column = objects.iter().map(|object| member(object, i, &name));
        if column
            .clone()
            .all(|value| value.is_some_and(Value::is_scalar))
        {
            fields.push(Field {
                name,
                children: None,
            });
            continue;
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        let nested: Vec<&Members<'_>> = column
            .map(|value| match value {
                Some(Value::Object(members)) if !members.is_empty() => Some(members),
                _ => None,
            })
            .collect::<Option<_>>()?;
        fields.push(Field {
            name,
            children: Some(fields_of(&nested, depth + 1)?),
        });
    }
    Some(fields)
}

/// A row's cells in the order of `fields`, depth first through groups.
fn collect_leaves<'v, 'a>(
    row: &'v Members<'a>,
    fields: &[Field<'_>],
    out: &mut Vec<&'v Value<'a>>,
) {
    for (i, field) in fields.iter().enumerate() {
        let Some(value) = member(row, i, &field.name) else {
            continue;
        };
        match (&field.children, value) {
            (Some(children), Value::Object(nested)) => collect_leaves(nested, children, out),
            _ => out.push(value),
        }
    }
}
