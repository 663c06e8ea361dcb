//! The compressing direction: the rows of each section found under one layout, then written
//! one space apart under the note.

use super::detect::{Column, Columns, Tally, detect};
use super::note::{Layout, MAX_WIDTH, quotable};
use super::scan::{Field, is_row, is_separator, line_bounds, words};

/// A line that is not a row.
const NOT_ROW: u32 = u32::MAX;

/// Fewer rows than this: not worth a note.
const MIN_ROWS: usize = 3;

/// The most runs of lines the note lists as not rows.
const MAX_NOT_ROWS: usize = 8;

/// Lines at the top looked at before anything else.
const FIRST_LINES: usize = 16;

/// The rows found: which lines they are, and what the constant columns could be.
struct Found {
    /// For each line, where its free text starts (its end when the table has no free text),
    /// or [`NOT_ROW`].
    free: Vec<u32>,
    rows: usize,
    /// Runs of two or more spaces the rows lose: about one token each.
    collapsed: usize,
    /// The cells of the first and the second row.
    first: Vec<(u32, u32)>,
    second: Vec<(u32, u32)>,
    /// Whether each column holds the first row's value in every row, and the second row's
    /// value in every row after the first.
    same_all: Vec<bool>,
    same_below: Vec<bool>,
}

/// Buffers reused from one section to the next.
struct Scratch {
    fields: Vec<Field>,
    alive: Vec<bool>,
    widths: Vec<usize>,
    starts: Vec<usize>,
    anchors: Vec<usize>,
    tally: Tally,
}

/// The text with its tables' padding collapsed under a note, or `None` when `text` holds no
/// table this codec restores exactly, or too small a one.
pub(super) fn compress(text: &str) -> Option<String> {
    if text.len() >= u32::MAX as usize || !looks_tabular(text) {
        return None;
    }
    let lines = line_bounds(text);
    let sections = sections(text, &lines);
    let largest = sections
        .iter()
        .fold(0..0, |best, s| if s.len() > best.len() { s.clone() } else { best });
    let mut scratch = Scratch {
        fields: Vec::new(),
        alive: Vec::new(),
        widths: Vec::new(),
        starts: Vec::new(),
        anchors: Vec::new(),
        tally: Tally::new(),
    };
    let columns = detect(text, &lines[largest], &mut scratch.tally)?;
    let right = alignment(text, &lines, &sections, &columns, &mut scratch);
    let mut layout = columns.layout(&right)?;
    if sections.len() > 1 {
        pool_min_widths(text, &lines, &sections, &mut layout, &mut scratch);
    }
    if std::env::var_os("TABLE_DEBUG").is_some() {
        eprintln!("{layout:?}");
    }
    let fixed = layout.fixed();
    let mut found = Found {
        free: vec![NOT_ROW; lines.len()],
        rows: 0,
        collapsed: 0,
        first: Vec::with_capacity(fixed),
        second: Vec::with_capacity(fixed),
        same_all: vec![true; fixed],
        same_below: vec![true; fixed],
    };
    for section in sections {
        find_rows(text, &lines, section, &layout, &mut scratch, &mut found);
    }
    if found.rows < MIN_ROWS {
        return None;
    }
    let mut saved_by_constants = choose_constants(text, &found, &mut layout);
    if list_not_rows(text, &lines, &mut layout, &found).is_none() {
        // Constant columns leave rows fewer words, so more other lines read as rows.
        if saved_by_constants == 0 {
            return None;
        }
        layout.constant.iter_mut().for_each(|value| *value = None);
        layout.below_header = false;
        saved_by_constants = 0;
        list_not_rows(text, &lines, &mut layout, &found)?;
    }
    let out = write(text, &lines, &layout, &found, &mut scratch);
    // The note costs about a token per 3 of its bytes; each collapsed run saves one, and a
    // constant column one per 4 bytes of its value and the space before it.
    let note = out.find('\n').unwrap_or(out.len());
    let saved = found.collapsed + saved_by_constants / 4;
    if std::env::var_os("TABLE_DEBUG").is_some() {
        eprintln!("rows {} collapsed {} constants {saved_by_constants} note {note} out {} in {}", found.rows, found.collapsed, out.len(), text.len());
    }
    let expands = text.len() <= super::MAX_EXPANSION * out.len();
    (saved > note / 3 && out.len() < text.len() && expands).then_some(out)
}

/// Whether two of the first lines hold a run of two or more spaces after a word: the cheap
/// test that turns prose, code and logs away before any table is looked for.
fn looks_tabular(text: &str) -> bool {
    let mut padded = 0;
    for line in text.split('\n').take(FIRST_LINES) {
        let bytes = line.as_bytes();
        let words_start = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
        if memchr::memmem::find(&bytes[words_start..], b"  ").is_some() {
            padded += 1;
            if padded == 2 {
                return true;
            }
        }
    }
    false
}

/// The runs of lines between separator lines, as ranges of line indices.
fn sections(text: &str, lines: &[(u32, u32)]) -> Vec<std::ops::Range<usize>> {
    let mut sections = Vec::new();
    let mut start = None;
    for (i, &(from, to)) in lines.iter().enumerate() {
        let separator = is_separator(&text.as_bytes()[from as usize..to as usize]);
        match (separator, start) {
            (true, Some(s)) => {
                sections.push(s..i);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        sections.push(s..lines.len());
    }
    sections
}

/// Whether each fixed column is right-aligned: as the sample says where its words tell, else
/// as the words of every section lean (more of them sharing an end than a start), since the
/// largest section of `ls -lR` may have one link count or one size width throughout.
fn alignment(
    text: &str,
    lines: &[(u32, u32)],
    sections: &[std::ops::Range<usize>],
    columns: &Columns,
    scratch: &mut Scratch,
) -> Vec<bool> {
    let fixed = columns.fixed.len();
    let mut right: Vec<bool> = columns.fixed.iter().map(Column::right).collect();
    let ambiguous: Vec<usize> = (0..fixed)
        .filter(|&i| columns.fixed[i].ambiguous())
        .collect();
    if ambiguous.is_empty() || sections.len() < 2 {
        return right;
    }
    let mut lean = vec![0i64; fixed];
    for section in sections {
        scratch.fields.clear();
        for &(start, end) in &lines[section.clone()] {
            let before = scratch.fields.len();
            let line = &text.as_bytes()[start as usize..end as usize];
            if words(line, start, fixed, &mut scratch.fields) < fixed {
                scratch.fields.truncate(before);
            }
        }
        let rows = scratch.fields.len() / fixed;
        for &i in &ambiguous {
            let cells = (0..rows).map(|k| &scratch.fields[k * fixed + i]);
            let (_, by_start) = scratch.tally.mode(cells.clone().map(|f| f.char_start));
            let (_, by_end) = scratch.tally.mode(cells.map(|f| f.char_end));
            lean[i] += i64::from(by_end) - i64::from(by_start);
        }
    }
    for i in ambiguous {
        right[i] = lean[i] > 0;
    }
    right
}

/// Finds the rows of one section: the lines whose words sit where `layout` puts them, once
/// each column is as wide as its widest cell among those rows (or its min width).
fn find_rows(
    text: &str,
    lines: &[(u32, u32)],
    section: std::ops::Range<usize>,
    layout: &Layout,
    scratch: &mut Scratch,
    found: &mut Found,
) {
    let fixed = layout.fixed();
    let section_lines = &lines[section.clone()];
    vote(text, section_lines, layout, scratch);
    let Some(free_at) = fit(text, section_lines, layout, scratch) else {
        return;
    };
    for (k, &(_, end)) in section.clone().zip(section_lines) {
        if scratch.alive[k - section.start] {
            let cells = &scratch.fields[(k - section.start) * fixed..][..fixed];
            let last = cells[fixed - 1];
            let free = if layout.has_free() {
                last.end + (free_at - last.char_end as usize) as u32
            } else {
                end
            };
            // Without free text, nothing follows the last column to lose its padding.
            let free_at = if layout.has_free() { free_at } else { 0 };
            found.add(text, k, cells, free, free_at);
        }
    }
}

/// Reads the words of a section's lines into `scratch.fields` (`layout.fixed()` slots a
/// line), and keeps taken for rows (`scratch.alive`) the lines that share each column's most
/// common anchor, which `scratch.anchors` gets: a line of another kind among the rows (a
/// title, `total 48`) must not set a width.
fn vote(text: &str, lines: &[(u32, u32)], layout: &Layout, scratch: &mut Scratch) {
    let fixed = layout.fixed();
    scratch.fields.clear();
    scratch.alive.clear();
    scratch.anchors.clear();
    for &(start, end) in lines {
        let line = &text.as_bytes()[start as usize..end as usize];
        let count = words(line, start, fixed, &mut scratch.fields);
        scratch.fields.resize(scratch.alive.len() * fixed + fixed, Field::default());
        scratch.alive.push(count == fixed);
    }
    for column in 0..fixed {
        let right = layout.right[column];
        let at = |field: &Field| if right { field.char_end } else { field.char_start };
        let fields = &scratch.fields;
        let alive = &scratch.alive;
        let anchors = (0..alive.len())
            .filter(|&k| alive[k])
            .map(|k| at(&fields[k * fixed + column]));
        let (anchor, _) = scratch.tally.mode(anchors);
        for k in 0..scratch.alive.len() {
            scratch.alive[k] &= at(&scratch.fields[k * fixed + column]) == anchor;
        }
        scratch.anchors.push(anchor as usize);
    }
}

/// Raises the layout's min widths to what every section's anchors show: a column whose
/// words sit wider apart than its widest cell in some section (`ls -l`'s time column, five
/// wide even where every file shows a year) is padded to that width everywhere.
fn pool_min_widths(
    text: &str,
    lines: &[(u32, u32)],
    sections: &[std::ops::Range<usize>],
    layout: &mut Layout,
    scratch: &mut Scratch,
) {
    let fixed = layout.fixed();
    for section in sections {
        vote(text, &lines[section.clone()], layout, scratch);
        widest(scratch, fixed, &[]);
        let mut at = 0;
        for i in 0..fixed {
            let (anchor, widest) = (scratch.anchors[i], scratch.widths[i]);
            let next_left = (i + 1 < fixed && !layout.right[i + 1]).then(|| scratch.anchors[i + 1]);
            let width = match (layout.right[i], next_left) {
                (true, _) => anchor.checked_sub(at),
                (false, _) if anchor != at => None,
                (false, Some(next)) => next.checked_sub(at + layout.gap),
                (false, None) => Some(widest),
            };
            let Some(width) = width.filter(|&w| w >= widest && w <= MAX_WIDTH) else {
                break;
            };
            if width > widest {
                layout.min[i] = layout.min[i].max(width);
            }
            at += width + layout.gap;
        }
    }
}

/// Sets `scratch.widths` to the widest cell of each column among the lines taken for rows,
/// or `min` where that is wider.
fn widest(scratch: &mut Scratch, fixed: usize, min: &[usize]) {
    scratch.widths.clear();
    scratch.widths.resize(fixed, 0);
    for (width, &min) in scratch.widths.iter_mut().zip(min) {
        *width = min;
    }
    for k in (0..scratch.alive.len()).filter(|&k| scratch.alive[k]) {
        for (width, field) in scratch.widths.iter_mut().zip(&scratch.fields[k * fixed..]) {
            *width = (*width).max(field.chars() as usize);
        }
    }
}

/// Drops the lines that do not fit the widths their fellow rows give, until the rows left
/// all fit theirs; returns where the free text starts (in characters), or `None` when they
/// never settle.
fn fit(text: &str, lines: &[(u32, u32)], layout: &Layout, scratch: &mut Scratch) -> Option<usize> {
    let fixed = layout.fixed();
    for _ in 0..4 {
        widest(scratch, fixed, &layout.min);
        let free_at = layout.starts(&scratch.widths, &mut scratch.starts);
        let mut settled = true;
        for (k, &(_, end)) in lines.iter().enumerate() {
            let cells = &scratch.fields[k * fixed..][..fixed];
            if scratch.alive[k] && !fits(text, cells, end, layout, scratch, free_at) {
                scratch.alive[k] = false;
                settled = false;
            }
        }
        if settled {
            return Some(free_at);
        }
    }
    None
}

/// Whether a line's words sit exactly where the widths put them, and its free text (or its
/// end) right after.
fn fits(
    text: &str,
    cells: &[Field],
    end: u32,
    layout: &Layout,
    scratch: &Scratch,
    free_at: usize,
) -> bool {
    for (i, cell) in cells.iter().enumerate() {
        let (width, start, len) = (scratch.widths[i], scratch.starts[i], cell.chars() as usize);
        let expected = if layout.right[i] {
            (start + width).checked_sub(len)
        } else {
            Some(start)
        };
        let bytes = &text.as_bytes()[cell.start as usize..cell.end as usize];
        // A cell of tabs or carriage returns alone would make a row the inverse takes for a
        // blank line.
        if expected != Some(cell.char_start as usize) || len > width || is_separator(bytes) {
            return false;
        }
    }
    let last = cells[cells.len() - 1];
    if !layout.has_free() {
        return last.end == end;
    }
    let Some(need) = free_at.checked_sub(last.char_end as usize) else {
        return false;
    };
    let after = &text.as_bytes()[last.end as usize..end as usize];
    after.len() >= need && after[..need].iter().all(|&b| b == b' ')
}

impl Found {
    /// Takes line `index` as a row: where its free text starts (in bytes), its runs of
    /// padding, its cells' values.
    fn add(&mut self, text: &str, index: usize, cells: &[Field], free: u32, free_at: usize) {
        self.free[index] = free;
        let mut before = 0;
        for cell in cells {
            self.collapsed += usize::from(cell.char_start - before > 1);
            before = cell.char_end;
        }
        self.collapsed += usize::from(free_at.saturating_sub(before as usize) > 1);
        let value = |range: (u32, u32)| &text[range.0 as usize..range.1 as usize];
        for (i, cell) in cells.iter().enumerate() {
            let range = (cell.start, cell.end);
            match self.rows {
                0 => self.first.push(range),
                1 => {
                    self.second.push(range);
                    self.same_all[i] = value(range) == value(self.first[i]);
                }
                _ => {
                    self.same_all[i] &= value(range) == value(self.first[i]);
                    self.same_below[i] &= value(range) == value(self.second[i]);
                }
            }
        }
        self.rows += 1;
    }
}

/// Sets the columns said once in the note: those with one value in every row, or in every
/// row below the header (the first row), whichever saves more; returns the bytes saved.
fn choose_constants(text: &str, found: &Found, layout: &mut Layout) -> usize {
    let value = |range: (u32, u32)| &text[range.0 as usize..range.1 as usize];
    // A constant column costs about 20 bytes of note and saves its value and a space in
    // every row that leaves it out.
    let saving = |value: &str, rows: usize| (rows * (value.len() + 1)).checked_sub(value.len() + 20);
    let pick = |same: &[bool], values: &[(u32, u32)], rows: usize| -> Vec<(usize, usize)> {
        (0..same.len())
            .filter(|&i| same[i] && quotable(value(values[i])))
            .filter_map(|i| Some((i, saving(value(values[i]), rows).filter(|&s| s > 0)?)))
            .collect()
    };
    let everywhere = if found.rows >= 2 {
        pick(&found.same_all, &found.first, found.rows)
    } else {
        Vec::new()
    };
    let below = if found.rows >= 3 {
        pick(&found.same_below, &found.second, found.rows - 1)
    } else {
        Vec::new()
    };
    let total = |picked: &[(usize, usize)]| picked.iter().map(|p| p.1).sum::<usize>();
    let (mut picked, values, below_header) = if total(&below) > total(&everywhere) {
        (below, &found.second, true)
    } else {
        (everywhere, &found.first, false)
    };
    // A row keeps at least one word, or every line would read as a row.
    if picked.len() == layout.fixed() {
        let smallest = (0..picked.len()).min_by_key(|&i| picked[i].1).unwrap_or(0);
        picked.remove(smallest);
    }
    for &(i, _) in &picked {
        layout.constant[i] = Some(value(values[i]).to_owned());
    }
    layout.below_header = below_header && !picked.is_empty();
    total(&picked)
}

/// Lists in the note the lines kept as they are that would read back as rows (a notice
/// under a two-column table, a sentence of as many words as a row); `None` when they make
/// more than [`MAX_NOT_ROWS`] runs.
fn list_not_rows(
    text: &str,
    lines: &[(u32, u32)],
    layout: &mut Layout,
    found: &Found,
) -> Option<()> {
    let (fixed, has_free, row_words) = (layout.fixed(), layout.has_free(), layout.row_words());
    layout.not_rows.clear();
    let mut header = layout.below_header;
    for (index, &(start, end)) in lines.iter().enumerate() {
        if found.free[index] != NOT_ROW {
            header = false;
            continue;
        }
        let line = &text.as_bytes()[start as usize..end as usize];
        let words = if header { fixed } else { row_words };
        if is_separator(line) || !is_row(line, words, has_free) {
            continue;
        }
        let number = index + 1;
        match layout.not_rows.last_mut() {
            Some(run) if run.1 + 1 == number => run.1 = number,
            _ => layout.not_rows.push((number, number)),
        }
        if layout.not_rows.len() > MAX_NOT_ROWS {
            return None;
        }
    }
    Some(())
}

/// Writes the note and the lines: rows one space apart without their constant columns,
/// other lines as they are.
fn write(
    text: &str,
    lines: &[(u32, u32)],
    layout: &Layout,
    found: &Found,
    scratch: &mut Scratch,
) -> String {
    let mut out = String::with_capacity(text.len());
    layout.write(&mut out);
    let (fixed, has_free) = (layout.fixed(), layout.has_free());
    let mut header = layout.below_header;
    for (index, &(start, end)) in lines.iter().enumerate() {
        out.push('\n');
        let line = &text[start as usize..end as usize];
        let free = found.free[index];
        if free == NOT_ROW {
            out.push_str(line);
            continue;
        }
        scratch.fields.clear();
        words(line.as_bytes(), start, fixed, &mut scratch.fields);
        let mut first = true;
        for (cell, constant) in scratch.fields.iter().zip(&layout.constant) {
            if constant.is_none() || header {
                if !first {
                    out.push(' ');
                }
                out.push_str(&text[cell.start as usize..cell.end as usize]);
                first = false;
            }
        }
        if has_free {
            out.push(' ');
            out.push_str(&text[free as usize..end as usize]);
        }
        header = false;
    }
    out
}
