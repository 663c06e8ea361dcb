//! The inverse: each section's widths found from its rows, and the padding put back.

use parrot_codec_api::CodecError;

use super::note::{self, Layout};
use super::scan::{is_separator, pad, read_row, width};

/// What a line below the note is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Kept as it was.
    Verbatim,
    /// A row whose free text starts at this byte; `header` when it is one of the rows at the
    /// top that keep the constant columns.
    Row { free: usize, header: bool },
}

/// A word of a row: where it lies in its line, and its width in characters.
#[derive(Clone, Copy)]
struct Word {
    start: u32,
    end: u32,
    width: u32,
}

/// The inverse's state across sections.
struct Restorer<'l> {
    layout: &'l Layout,
    /// The width of each constant column's value.
    constant_widths: Vec<usize>,
    /// The longest text the payload may expand to, in bytes.
    limit: usize,
    /// The payload's line number of the first line of the section being written.
    line: usize,
    /// The rows read so far.
    rows: usize,
    kinds: Vec<Kind>,
    /// The words of the section's rows, in order.
    words: Vec<Word>,
    widths: Vec<usize>,
    starts: Vec<usize>,
}

/// Rebuilds the text a note and its lines stand for.
///
/// # Errors
///
/// `InvalidInput` naming the line: a first line that is not a note this codec writes, no line
/// after it, no row below it, a line the note lists that is not there, rows that would expand
/// to more than [`super::MAX_EXPANSION`] times the payload's size.
pub(super) fn expand(payload: &str) -> Result<String, CodecError> {
    // Words are located with 32-bit offsets, as the codec writes no payload this large.
    if payload.len() >= u32::MAX as usize {
        return Err(CodecError::invalid_input(
            "the payload is 4 GiB or more: this codec writes none so large",
        ));
    }
    let Some((note, body)) = payload.split_once('\n') else {
        note::parse(payload)?;
        return Err(CodecError::invalid_input(
            "line 1: the note has no table below it (line 2 is missing)",
        ));
    };
    let layout = note::parse(note)?;
    let mut restorer = Restorer::new(&layout, payload.len());
    let mut out = String::with_capacity(body.len() + body.len() / 2 + 64);
    let mut section: Vec<&str> = Vec::new();
    for (i, line) in body.split('\n').enumerate() {
        if is_separator(line.as_bytes()) {
            restorer.section(&section, &mut out)?;
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

/// Which lines below the note of `payload` (a whole output of this codec) are rows, as the
/// inverse reads them, and how many rows at the top keep the constant columns; `None` when it
/// has no note.
pub(super) fn rows(payload: &str) -> Option<(Vec<bool>, usize)> {
    let (note, body) = payload.split_once('\n')?;
    let layout = note::parse(note).ok()?;
    let mut restorer = Restorer::new(&layout, payload.len());
    let mut rows = Vec::new();
    let mut section: Vec<&str> = Vec::new();
    let read = |section: &mut Vec<&str>, restorer: &mut Restorer<'_>, rows: &mut Vec<bool>| {
        restorer.read(section);
        rows.extend(restorer.kinds.iter().map(|kind| *kind != Kind::Verbatim));
        section.clear();
    };
    for (i, line) in body.split('\n').enumerate() {
        if is_separator(line.as_bytes()) {
            read(&mut section, &mut restorer, &mut rows);
            rows.push(false);
        } else {
            if section.is_empty() {
                restorer.line = i + 2;
            }
            section.push(line);
        }
    }
    read(&mut section, &mut restorer, &mut rows);
    Some((rows, layout.header_rows))
}

impl<'l> Restorer<'l> {
    /// The state for restoring a payload of `len` bytes whose note says `layout`.
    fn new(layout: &'l Layout, len: usize) -> Restorer<'l> {
        Restorer {
            layout,
            constant_widths: (layout.constant.iter())
                .map(|value| value.as_deref().map_or(0, width))
                .collect(),
            limit: len.saturating_mul(super::MAX_EXPANSION),
            line: 2,
            rows: 0,
            kinds: Vec::new(),
            words: Vec::new(),
            widths: Vec::new(),
            starts: Vec::new(),
        }
    }
}

impl Restorer<'_> {
    /// Writes one section (lines without a separator among them), joined by line breaks.
    fn section(&mut self, lines: &[&str], out: &mut String) -> Result<(), CodecError> {
        if lines.is_empty() {
            return Ok(());
        }
        self.read(lines);
        let layout = self.layout;
        let free_at = layout.starts(&self.widths, &mut self.starts);
        let mut words = self.words.iter();
        for (i, (line, kind)) in lines.iter().zip(&self.kinds).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let Kind::Row { free, header } = *kind else {
                out.push_str(line);
                continue;
            };
            if out.len() + free_at + line.len() > self.limit {
                return Err(CodecError::invalid_input(format!(
                    "line {}: the table would expand to more than {} times its size",
                    self.line + i,
                    super::MAX_EXPANSION
                )));
            }
            let mut at = 0;
            for (column, constant) in layout.constant.iter().enumerate() {
                let (cell, len) = match constant {
                    Some(value) if !header => (value.as_str(), self.constant_widths[column]),
                    _ => match words.next() {
                        Some(word) => (
                            &line[word.start as usize..word.end as usize],
                            word.width as usize,
                        ),
                        None => break,
                    },
                };
                let start = self.starts[column];
                let target = if layout.right[column] {
                    (start + self.widths[column]).saturating_sub(len)
                } else {
                    start
                };
                pad(out, target.saturating_sub(at));
                out.push_str(cell);
                at = target + len;
            }
            if layout.has_free() {
                pad(out, free_at.saturating_sub(at));
                out.push_str(&line[free..]);
            }
        }
        Ok(())
    }

    /// Reads a section: which lines are rows, their words, and each column's width.
    fn read(&mut self, lines: &[&str]) {
        let layout = self.layout;
        let (fixed, has_free) = (layout.fixed(), layout.has_free());
        self.kinds.clear();
        self.words.clear();
        self.widths.clear();
        self.widths.extend_from_slice(&layout.min);
        for (i, line) in lines.iter().enumerate() {
            let header = self.rows < layout.header_rows;
            let count = if header { fixed } else { layout.row_words() };
            let mark = self.words.len();
            let listed = self.listed(self.line - 1 + i);
            let words = &mut self.words;
            let free = (!listed)
                .then(|| {
                    read_row(line.as_bytes(), count, has_free, |start, end| {
                        let width = width(&line[start..end]) as u32;
                        let (start, end) = (start as u32, end as u32);
                        words.push(Word { start, end, width });
                    })
                })
                .flatten();
            let Some(free) = free else {
                self.words.truncate(mark);
                self.kinds.push(Kind::Verbatim);
                continue;
            };
            self.rows += 1;
            self.kinds.push(Kind::Row { free, header });
            let mut words = self.words[mark..].iter();
            for (column, constant) in layout.constant.iter().enumerate() {
                let len = match constant {
                    Some(_) if !header => self.constant_widths[column],
                    _ => words.next().map_or(0, |word| word.width as usize),
                };
                self.widths[column] = self.widths[column].max(len);
            }
        }
    }

    /// Whether the note lists line `number` below it as not a row.
    fn listed(&self, number: usize) -> bool {
        let runs = &self.layout.not_rows;
        let at = runs.partition_point(|&(_, last)| last < number);
        runs.get(at).is_some_and(|&(first, _)| first <= number)
    }
}
