//! The inverse: each section's widths found from its rows, and the padding put back.

use parrot_codec_api::CodecError;

use super::note::{self, Layout};
use super::scan::{is_row, is_separator, pad, width};

/// What a line below the note is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Kept as it was.
    Verbatim,
    /// The first row, which keeps the constant columns of a table whose note says
    /// "below the header".
    Header,
    Row,
}

/// The inverse's state across sections.
struct Restorer<'l> {
    layout: &'l Layout,
    /// The longest text the payload may expand to, in bytes.
    limit: usize,
    /// The payload's line number of the first line of the section being written.
    line: usize,
    /// Whether the header has been seen (or the table has none).
    past_header: bool,
    rows: usize,
    kinds: Vec<Kind>,
    widths: Vec<usize>,
    starts: Vec<usize>,
}

/// Rebuilds the text a note and its lines stand for.
///
/// # Errors
///
/// `InvalidInput` naming the line: a first line that is not a note this codec writes, no line
/// after it, or no row below it.
pub(super) fn expand(payload: &str) -> Result<String, CodecError> {
    let Some((note, body)) = payload.split_once('\n') else {
        note::parse(payload)?;
        return Err(CodecError::invalid_input(
            "line 1: the note has no table below it (line 2 is missing)",
        ));
    };
    let layout = note::parse(note)?;
    let mut restorer = Restorer {
        layout: &layout,
        limit: payload.len().saturating_mul(super::MAX_EXPANSION),
        line: 2,
        past_header: !layout.below_header,
        rows: 0,
        kinds: Vec::new(),
        widths: Vec::new(),
        starts: Vec::new(),
    };
    let mut out = String::with_capacity(body.len() + body.len() / 2 + 64);
    let mut section: Vec<&str> = Vec::new();
    for (i, line) in body.split('\n').enumerate() {
        if is_separator(line.as_bytes()) {
            restorer.section(&section, &mut out)?;
    let lines = body.split('\n').count();
    if let Some(&(_, last)) = layout.not_rows.last().filter(|run| run.1 > lines) {
        return Err(CodecError::invalid_input(format!(
            "line 1: the note lists line {last} below it as not a row, but {} below it",
            if lines == 1 {
                "there is one line".to_owned()
            } else {
                format!("there are {lines} lines")
            }
        )));
    }
            section.clear();
            if i > 0 {
                out.push('\n');
            }
            out.push_str(line);
        } else {
            if section.is_empty() {
                // Body line i is line i + 2 of the payload.
                restorer.line = i + 2;
                if i > 0 {
                    out.push('\n');
                }
            }
            section.push(line);
        }
    }
    restorer.section(&section, &mut out)?;
    let lines = body.split('\n').count();
    if let Some(&(_, last)) = layout.not_rows.last().filter(|run| run.1 > lines) {
        return Err(CodecError::invalid_input(format!(
            "line 1: the note lists line {last} below it as not a row, but {} below it",
            if lines == 1 {
                "there is one line".to_owned()
            } else {
                format!("there are {lines} lines")
            }
        )));
    }
    if restorer.rows == 0 {
        return Err(CodecError::invalid_input(format!(
            "lines 2-{}: no row below the note: no line holds {} words one space apart{}",
            body.split('\n').count() + 1,
            layout.row_words(),
            if layout.has_free() {
                " followed by a space and free text"
            } else {
                " and nothing else"
            }
        )));
    }
    Ok(out)
}

impl Restorer<'_> {
    /// Writes one section (lines without a separator among them), joined by line breaks.
    fn section(&mut self, lines: &[&str], out: &mut String) -> Result<(), CodecError> {
        if lines.is_empty() {
            return Ok(());
        }
        let layout = self.layout;
        let (fixed, has_free) = (layout.fixed(), layout.has_free());
        self.kinds.clear();
        self.widths.clear();
        self.widths.extend_from_slice(&layout.min);
        for (i, line) in lines.iter().enumerate() {
            let header = !self.past_header;
            let words = if header { fixed } else { layout.row_words() };
            if self.listed(self.line - 1 + i) || !is_row(line.as_bytes(), words, has_free) {
                self.kinds.push(Kind::Verbatim);
                continue;
            }
            self.past_header = true;
            self.rows += 1;
            self.kinds.push(if header { Kind::Header } else { Kind::Row });
            for (column, cell) in Cells::new(line, layout, header).enumerate() {
                self.widths[column] = self.widths[column].max(width(cell));
            }
        }
        let free_at = layout.starts(&self.widths, &mut self.starts);
        for (i, (line, kind)) in lines.iter().zip(&self.kinds).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if *kind == Kind::Verbatim {
                out.push_str(line);
                continue;
            }
            if out.len() + free_at + line.len() > self.limit {
                return Err(CodecError::invalid_input(format!(
                    "line {}: the table would expand to more than {} times its size",
                    self.line + i,
                    super::MAX_EXPANSION
                )));
            }
            let mut cells = Cells::new(line, layout, *kind == Kind::Header);
            let mut at = 0;
            for (column, cell) in cells.by_ref().enumerate() {
                let (start, len) = (self.starts[column], width(cell));
                let target = if layout.right[column] {
                    (start + self.widths[column]).saturating_sub(len)
                } else {
                    start
                };
                pad(out, target.saturating_sub(at));
                out.push_str(cell);
                at = target + len;
            }
            if let Some(free) = cells.free() {
                pad(out, free_at.saturating_sub(at));
                out.push_str(free);
            }
        }
        Ok(())
    }
}

impl Restorer<'_> {
    /// Whether the note lists line `number` below it as not a row.
    fn listed(&self, number: usize) -> bool {
        let runs = &self.layout.not_rows;
        let at = runs.partition_point(|&(_, last)| last < number);
        runs.get(at).is_some_and(|&(first, _)| first <= number)
    }
}

/// The cells of a row, one for each fixed column: its words, with the constant columns'
/// values where it leaves them out; then its free text.
struct Cells<'a> {
    parts: std::str::SplitN<'a, char>,
    layout: &'a Layout,
    header: bool,
    column: usize,
}

impl<'a> Cells<'a> {
    fn new(line: &'a str, layout: &'a Layout, header: bool) -> Cells<'a> {
        let words = if header {
            layout.fixed()
        } else {
            layout.row_words()
        };
        Cells {
            parts: line.splitn(words + 1, ' '),
            layout,
            header,
            column: 0,
        }
    }

    /// The free text, once every cell has been read.
    fn free(mut self) -> Option<&'a str> {
        if self.layout.has_free() {
            self.parts.next()
        } else {
            None
        }
    }
}

impl<'a> Iterator for Cells<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let column = self.column;
        if column == self.layout.fixed() {
            return None;
        }
        self.column += 1;
        match &self.layout.constant[column] {
            Some(value) if !self.header => Some(value),
            _ => self.parts.next(),
        }
    }
}
