//! The note line: a table's layout in words, written above its rows and read back by the
//! inverse.

use parrot_codec_api::CodecError;

/// The most columns a table may have.
pub(super) const MAX_COLUMNS: usize = 32;

/// The widest column or gap the note may state, in characters.
pub(super) const MAX_WIDTH: usize = 4096;

/// The most rows at the top that may keep the constant columns.
pub(super) const MAX_HEADER_ROWS: usize = 3;

/// What every note starts with.
const OPENING: &str = "[table: ";

/// What follows the number of columns.
const COLLAPSED: &str = " columns, padding collapsed to one space";

/// Everything the inverse needs to restore a table's padding, besides its rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Layout {
    /// Whether each column is right-aligned, one entry per column. A right-aligned last column
    /// is a fixed one; a left-aligned last column is free text (the rest of the line).
    pub(super) right: Vec<bool>,
    /// Spaces between two columns (at least 1).
    pub(super) gap: usize,
    /// The least width of each fixed column; 0 where the widest cell of a section sets it.
    pub(super) min: Vec<usize>,
    /// The value of each fixed column left out of the rows as the same in every one.
    pub(super) constant: Vec<Option<String>>,
    /// How many rows at the top (a header, and the rule under it) keep the constant columns:
    /// 0 to [`MAX_HEADER_ROWS`].
    pub(super) header_rows: usize,
    /// The lines below the note kept as they were although they read as rows: ranges of
    /// line numbers (1 is the line after the note), increasing, neither overlapping nor
    /// touching.
    pub(super) not_rows: Vec<(usize, usize)>,
}

impl Layout {
    /// Columns in all, the free-text one included.
    pub(super) fn columns(&self) -> usize {
        self.right.len()
    }

    /// Columns of one word each, padded to a width: all but a free-text last column.
    pub(super) fn fixed(&self) -> usize {
        if self.has_free() {
            self.columns() - 1
        } else {
            self.columns()
        }
    }

    /// Whether the last column is free text.
    pub(super) fn has_free(&self) -> bool {
        self.right.last() == Some(&false)
    }

    /// Words a row is written with (but the header rows, which keep the constant columns):
    /// the fixed columns not left out.
    pub(super) fn row_words(&self) -> usize {
        self.fixed() - self.constant.iter().flatten().count()
    }

    /// Where each fixed column starts, and where the free text starts, for these widths.
    pub(super) fn starts(&self, widths: &[usize], starts: &mut Vec<usize>) -> usize {
        starts.clear();
        let mut at = 0;
        for &width in widths {
            starts.push(at);
            at += width + self.gap;
        }
        at
    }

    /// Writes the note (without a line break).
    pub(super) fn write(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{OPENING}{}{COLLAPSED}", self.columns());
        let right: Vec<usize> = (1..=self.columns())
            .filter(|&column| self.right[column - 1])
            .collect();
        if !right.is_empty() {
            out.push_str("; right-aligned: ");
            join(out, right.iter().map(|column| column.to_string()));
        }
        if self.gap != 1 {
            let _ = write!(out, "; {} spaces between columns", self.gap);
        }
        if self.min.iter().any(|&width| width > 0) {
            out.push_str("; min widths: ");
            let min = self.min.iter().enumerate().filter(|(_, width)| **width > 0);
            join(out, min.map(|(i, width)| format!("{}={width}", i + 1)));
        }
        let constants: Vec<String> = (self.constant.iter().enumerate())
            .filter_map(|(i, value)| Some(format!("column {} is \"{}\"", i + 1, value.as_ref()?)))
            .collect();
        if !constants.is_empty() {
            let _ = write!(out, "; {} in every row", constants.join(" and "));
            match self.header_rows {
                0 => {}
                1 => out.push_str(" after the first"),
                rows => {
                    let _ = write!(out, " after the first {rows}");
                }
            }
        }
        match self.not_rows[..] {
            [] => {}
            [(line, last)] if line == last => {
                let _ = write!(out, "; line {line} below is not a row");
            }
            _ => {
                out.push_str("; lines ");
                join(
                    out,
                    self.not_rows.iter().map(|&(line, last)| range(line, last)),
                );
                out.push_str(" below are not rows");
            }
        }
        out.push(']');
    }
}

fn range(line: usize, last: usize) -> String {
    if line == last {
        line.to_string()
    } else {
        format!("{line}-{last}")
    }
}

fn join(out: &mut String, items: impl Iterator<Item = String>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&item);
    }
}

/// Whether `value` can be said once in the note: a word the note can quote and read back.
pub(super) fn quotable(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 200
        && !value
            .bytes()
            .any(|b| b == b'"' || b == b' ' || b < 0x20 || b == 0x7f)
}

/// The note's text as a message shows it: in backquotes, cut at 80 characters.
fn shown(text: &str) -> String {
    if text.is_empty() {
        return "nothing".to_owned();
    }
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("`{}…`", &text[..at]),
        None => format!("`{text}`"),
    }
}

fn invalid(what: impl std::fmt::Display) -> CodecError {
    CodecError::invalid_input(format!("line 1: {what}"))
}

/// The note being read: what is left of it.
struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    fn eat(&mut self, text: &str) -> bool {
        match self.rest.strip_prefix(text) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    /// A decimal number of at most 5 digits, without a leading zero.
    fn number(&mut self, what: &str) -> Result<usize, CodecError> {
        let digits = self.rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 5 || (digits > 1 && self.rest.starts_with('0')) {
            return Err(invalid(format!(
                "expected {what} (a number), found {}",
                shown(self.rest)
            )));
        }
        let (number, rest) = self.rest.split_at(digits);
        self.rest = rest;
        Ok(number.parse().unwrap_or(usize::MAX))
    }

    /// A column number, 1 to `columns` (the fixed ones only, with `fixed`), above `after`.
    fn column(&mut self, layout: &Layout, fixed: bool, after: usize) -> Result<usize, CodecError> {
        let column = self.number("a column number")?;
        let columns = layout.columns();
        if column == 0 || column > columns {
            return Err(invalid(format!(
                "column {column} of a table of {columns} columns"
            )));
        }
        if fixed && column > layout.fixed() {
            return Err(invalid(format!(
                "column {column} is the free text, which has no width and no constant value"
            )));
        }
        if column <= after {
            return Err(invalid(format!(
                "column {column} after column {after}: columns are listed in increasing order"
            )));
        }
        Ok(column)
    }
}

/// Reads a note back.
///
/// # Errors
///
/// `InvalidInput` naming line 1 and what is wrong, when `note` is not a note this codec
/// writes.
pub(super) fn parse(note: &str) -> Result<Layout, CodecError> {
    let mut cursor = Cursor { rest: note };
    if !cursor.eat(OPENING) {
        return Err(invalid(format!(
            "expected the note `{OPENING}N{COLLAPSED}…]`, found {}",
            shown(note)
        )));
    }
    let columns = cursor.number("the number of columns")?;
    if !(2..=MAX_COLUMNS).contains(&columns) {
        return Err(invalid(format!(
            "a table of {columns} columns: expected 2 to {MAX_COLUMNS}"
        )));
    }
    if !cursor.eat(COLLAPSED) {
        return Err(invalid(format!(
            "expected `{COLLAPSED}` after the number of columns, found {}",
            shown(cursor.rest)
        )));
    }
    let mut layout = Layout {
        right: vec![false; columns],
        gap: 1,
        ..Layout::default()
    };
    read_clauses(&mut cursor, &mut layout)?;
    read_not_rows(&mut cursor, &mut layout)?;
    if cursor.rest != "]" {
        return Err(invalid(format!(
            "expected `; right-aligned: `, `; N spaces between columns`, `; min widths: `, \
             `; column `, `; line `, `; lines ` or the closing `]`, found {}",
            shown(cursor.rest)
        )));
    }
    check(&layout)?;
    let mut canonical = String::new();
    layout.write(&mut canonical);
    if canonical != note {
        return Err(invalid(format!(
            "the note is not written as this codec writes it: expected {}",
            shown(&canonical)
        )));
    }
    Ok(layout)
}

/// Reads the clauses after the number of columns, each optional, in their order.
fn read_clauses(cursor: &mut Cursor<'_>, layout: &mut Layout) -> Result<(), CodecError> {
    if cursor.eat("; right-aligned: ") {
        let mut last = 0;
        loop {
            last = cursor.column(layout, false, last)?;
            layout.right[last - 1] = true;
            if !cursor.eat(", ") {
                break;
            }
        }
    }
    let fixed = layout.fixed();
    if cursor.rest.starts_with("; ") && cursor.rest[2..].starts_with(|c: char| c.is_ascii_digit()) {
        cursor.eat("; ");
        layout.gap = cursor.number("the spaces between columns")?;
        if !cursor.eat(" spaces between columns") {
            return Err(invalid(format!(
                "expected ` spaces between columns`, found {}",
                shown(cursor.rest)
            )));
        }
    }
    layout.min = vec![0; fixed];
    if cursor.eat("; min widths: ") {
        let mut last = 0;
        loop {
            last = cursor.column(layout, true, last)?;
            if !cursor.eat("=") {
                return Err(invalid(format!(
                    "expected `=` and a width after column {last}, found {}",
                    shown(cursor.rest)
                )));
            }
            let width = cursor.number("a width")?;
            if width == 0 {
                return Err(invalid(format!(
                    "a min width of 0 for column {last}: a min width is at least 1"
                )));
            }
            layout.min[last - 1] = width;
            if !cursor.eat(", ") {
                break;
            }
        }
    }
    read_constants(cursor, layout)
}

/// Reads `; column C is "V" and column C is "V" in every row[ after the first[ N]]`.
fn read_constants(cursor: &mut Cursor<'_>, layout: &mut Layout) -> Result<(), CodecError> {
    let fixed = layout.fixed();
    layout.constant = vec![None; fixed];
    if !cursor.eat("; column ") {
        return Ok(());
    }
    let mut last = 0;
    loop {
        last = cursor.column(layout, true, last)?;
        if !cursor.eat(" is \"") {
            return Err(invalid(format!(
                "expected ` is \"` and the value of column {last}, found {}",
                shown(cursor.rest)
            )));
        }
        let Some(end) = cursor.rest.find('"') else {
            return Err(invalid(format!(
                "the value of column {last} has no closing quote"
            )));
        };
        let value = &cursor.rest[..end];
        if !quotable(value) {
            return Err(invalid(format!(
                "the value of column {last}, {}, is not one word",
                shown(value)
            )));
        }
        layout.constant[last - 1] = Some(value.to_owned());
        cursor.rest = &cursor.rest[end + 1..];
        if !cursor.eat(" and column ") {
            break;
        }
    }
    if !cursor.eat(" in every row") {
        return Err(invalid(format!(
            "expected ` in every row` after the constant columns, found {}",
            shown(cursor.rest)
        )));
    }
    if cursor.eat(" after the first") {
        layout.header_rows = 1;
        if cursor.eat(" ") {
            layout.header_rows = cursor.number("a number of rows")?;
            if !(2..=MAX_HEADER_ROWS).contains(&layout.header_rows) {
                return Err(invalid(format!(
                    "the first {} rows keep the constant columns: expected 2 to \
                     {MAX_HEADER_ROWS} (1 is written `after the first`)",
                    layout.header_rows
                )));
            }
        }
    }
    Ok(())
}

/// Reads `; line N below is not a row` or `; lines A-B, N below are not rows`.
fn read_not_rows(cursor: &mut Cursor<'_>, layout: &mut Layout) -> Result<(), CodecError> {
    // A line number above `after`; `touching` when it may follow it directly (the end of a
    // range after its start), not when it starts a range after another.
    let line = |cursor: &mut Cursor<'_>, after: usize, touching: bool| {
        let line = cursor.number("a line number")?;
        if line == 0 {
            return Err(invalid(
                "line 0: the lines below the note are numbered from 1",
            ));
        }
        if line <= after || (!touching && line == after + 1) {
            return Err(invalid(format!(
                "line {line} listed after line {after}: lines are listed in increasing order, \
                 a run of lines as one range `A-B`"
            )));
        }
        Ok(line)
    };
    if cursor.eat("; line ") {
        let at = line(cursor, 0, true)?;
        layout.not_rows.push((at, at));
        if !cursor.eat(" below is not a row") {
            return Err(invalid(format!(
                "expected ` below is not a row` after line {at}, found {}",
                shown(cursor.rest)
            )));
        }
    } else if cursor.eat("; lines ") {
        let mut last = 0;
        loop {
            let first = line(cursor, last, last == 0)?;
            last = if cursor.eat("-") {
                line(cursor, first, true)?
            } else {
                first
            };
            layout.not_rows.push((first, last));
            if !cursor.eat(", ") {
                break;
            }
        }
        if !cursor.eat(" below are not rows") {
            return Err(invalid(format!(
                "expected ` below are not rows` after the lines listed, found {}",
                shown(cursor.rest)
            )));
        }
    }
    Ok(())
}

/// The rules between clauses that reading them one by one does not hold.
fn check(layout: &Layout) -> Result<(), CodecError> {
    if layout.gap == 0 || layout.gap > MAX_WIDTH {
        return Err(invalid(format!(
            "{} spaces between columns: expected 1 to {MAX_WIDTH}",
            layout.gap
        )));
    }
    if let Some(width) = layout.min.iter().find(|&&w| w > MAX_WIDTH) {
        return Err(invalid(format!(
            "a min width of {width}: expected at most {MAX_WIDTH}"
        )));
    }
    if layout.row_words() == 0 {
        return Err(invalid(
            "every column of words is constant: a row would have no word left",
        ));
    }
    Ok(())
}
