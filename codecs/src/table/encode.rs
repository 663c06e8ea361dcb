//! The compressing direction: the rows of each section found under one layout, then written
//! one space apart under the note.

use std::ops::Range;

use super::detect::{Column, Columns, Tally, detect};
use super::note::{Layout, MAX_HEADER_ROWS, MAX_WIDTH, quotable};
use super::scan::{Field, is_row, is_separator, line_bounds, words};

/// A line that is not a row.
const NOT_ROW: u32 = u32::MAX;

/// Fewer rows than this: not worth a note.
const MIN_ROWS: usize = 3;

/// Lines of a section whose words set its columns' anchors.
const VOTE_SAMPLE: usize = 256;

/// The most runs of lines the note lists as not rows.
const MAX_NOT_ROWS: usize = 8;

/// Lines at the top looked at before anything else.
const FIRST_LINES: usize = 16;

/// The payload cut into lines, and the words each line has in the table's columns.
struct Lines<'t> {
    text: &'t str,
    /// Where each line starts and ends, in bytes.
    bounds: Vec<(u32, u32)>,
    /// The first `fixed` words of each line, `fixed` slots a line.
    fields: Vec<Field>,
    /// Whether each line has `fixed` words.
    full: Vec<bool>,
    fixed: usize,
}

impl<'t> Lines<'t> {
    /// Reads the first `fixed` words of every line, once for every use.
    fn read_words(&mut self, fixed: usize) {
        self.fixed = fixed;
        self.fields = Vec::with_capacity(self.bounds.len() * fixed);
        self.full = Vec::with_capacity(self.bounds.len());
        for &(start, end) in &self.bounds {
            let line = &self.text.as_bytes()[start as usize..end as usize];
            let found = words(line, start, fixed, &mut self.fields);
            self.fields
                .resize(self.full.len() * fixed + fixed, Field::default());
            self.full.push(found == fixed);
        }
    }

    /// The words of line `k`, `fixed` of them (those it lacks are empty).
    fn cells(&self, k: usize) -> &[Field] {
        &self.fields[k * self.fixed..][..self.fixed]
    }

    fn bytes(&self, k: usize) -> &'t [u8] {
        let (start, end) = self.bounds[k];
        &self.text.as_bytes()[start as usize..end as usize]
    }

    fn value(&self, range: (u32, u32)) -> &'t str {
        &self.text[range.0 as usize..range.1 as usize]
    }
}

/// The rows found: which lines they are, and what the constant columns could be.
struct Found {
    /// For each line, where its free text starts (its end when the table has no free text),
    /// or [`NOT_ROW`].
    free: Vec<u32>,
    rows: usize,
    /// Runs of two or more spaces the rows lose: about one token each.
    collapsed: usize,
    /// The cells of the first rows, `fixed` a row: row `h` for the constant columns of the
    /// rows after the first `h`.
    top: Vec<(u32, u32)>,
    /// Whether each column holds row `h`'s value in every row after the first `h`, `fixed`
    /// entries for each `h` from 0 to [`MAX_HEADER_ROWS`].
    same: Vec<bool>,
}

/// Buffers reused from one section to the next.
struct Scratch {
    /// Whether each line is taken for a row.
    alive: Vec<bool>,
    sample: Vec<usize>,
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
    let mut lines = Lines {
        text,
        bounds: line_bounds(text),
        fields: Vec::new(),
        full: Vec::new(),
        fixed: 0,
    };
    let sections = sections(&lines);
    let largest = (sections.iter().cloned()).reduce(|best, section| {
        if section.len() > best.len() {
            section
        } else {
            best
        }
    })?;
    let mut scratch = Scratch {
        alive: Vec::new(),
        sample: Vec::new(),
        widths: Vec::new(),
        starts: Vec::new(),
        anchors: Vec::new(),
        tally: Tally::new(),
    };
    let columns = detect(text, &lines.bounds[largest], &mut scratch.tally)?;
    lines.read_words(columns.fixed.len());
    let right = alignment(&lines, &sections, &columns, &mut scratch.tally);
    let mut layout = columns.layout(&right)?;
    scratch.alive = vec![false; lines.bounds.len()];
    for section in &sections {
        vote(&lines, section.clone(), &layout, &mut scratch);
    }
    if sections.len() > 1 {
        pool_min_widths(&lines, &sections, &mut layout, &mut scratch);
    }
    let found = find_all_rows(&lines, &sections, &layout, &mut scratch);
    if found.rows < MIN_ROWS {
        return None;
    }
    let saved_by_constants = constants_and_not_rows(&lines, &found, &mut layout)?;
    let out = write(&lines, &layout, &found);
    // The note costs about a token for each 3 of its bytes; each collapsed run saves one, and
    // a constant column one for each 4 bytes of its value and the space before it.
    let note = out.find('\n').unwrap_or(out.len());
    let saved = found.collapsed + saved_by_constants / 4;
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
fn sections(lines: &Lines<'_>) -> Vec<Range<usize>> {
    let mut sections = Vec::new();
    let mut start = None;
    for k in 0..lines.bounds.len() {
        match (is_separator(lines.bytes(k)), start) {
            (true, Some(s)) => {
                sections.push(s..k);
                start = None;
            }
            (false, None) => start = Some(k),
            _ => {}
        }
    }
    if let Some(s) = start {
        sections.push(s..lines.bounds.len());
    }
    sections
}

/// Whether each fixed column is right-aligned: as the sample says where its words tell, else
/// as the words of every section lean (more of them sharing an end than a start), since the
/// largest section of `ls -lR` may have one link count or one size width throughout.
fn alignment(
    lines: &Lines<'_>,
    sections: &[Range<usize>],
    columns: &Columns,
    tally: &mut Tally,
) -> Vec<bool> {
    let mut right: Vec<bool> = columns.fixed.iter().map(Column::right).collect();
    if sections.len() < 2 {
        return right;
    }
    let mut lean: Vec<Option<i64>> = (columns.fixed.iter())
        .map(|column| column.ambiguous().then_some(0))
        .collect();
    // Section by section, so that a section's words are read while in cache; sections lean
    // the same way, so a few dozen lines that do are enough.
    for section in sections {
        let mut undecided = false;
        for (i, lean) in lean.iter_mut().enumerate() {
            let Some(lean) = lean.as_mut().filter(|lean| lean.abs() < 64) else {
                continue;
            };
            undecided = true;
            let cells = section
                .clone()
                .filter(|&k| lines.full[k])
                .map(|k| &lines.cells(k)[i]);
            let (_, by_start) = tally.mode(cells.clone().map(|f| f.char_start));
            let (_, by_end) = tally.mode(cells.map(|f| f.char_end));
            *lean += i64::from(by_end) - i64::from(by_start);
        }
        if !undecided {
            break;
        }
    }
    for (right, lean) in right.iter_mut().zip(lean) {
        if let Some(lean) = lean {
            *right = lean > 0;
        }
    }
    right
}

/// Keeps taken for rows (`scratch.alive`) the lines of `section` that share each column's
/// most common anchor, which `scratch.anchors` gets, `fixed` a section: a line of another
/// kind among the rows (a title, `total 48`) must not set a width.
fn vote(lines: &Lines<'_>, section: Range<usize>, layout: &Layout, scratch: &mut Scratch) {
    let first = scratch.anchors.len();
    // The anchors are the most common among the first lines that agree on the columns
    // before; then each line is kept if it agrees on all of them, in one pass.
    scratch.sample.clear();
    let sample = section.clone().filter(|&k| lines.full[k]).take(VOTE_SAMPLE);
    scratch.sample.extend(sample);
    for (column, &right) in layout.right[..lines.fixed].iter().enumerate() {
        let at = |k: usize| {
            let field = &lines.cells(k)[column];
            if right {
                field.char_end
            } else {
                field.char_start
            }
        };
        let (anchor, _) = scratch.tally.mode(scratch.sample.iter().map(|&k| at(k)));
        scratch.sample.retain(|&k| at(k) == anchor);
        scratch.anchors.push(anchor as usize);
    }
    let anchors = &scratch.anchors[first..];
    for k in section {
        let cells = lines.cells(k).iter().zip(&layout.right);
        scratch.alive[k] = lines.full[k]
            && cells.zip(anchors).all(|((cell, &right), &anchor)| {
                let at = if right {
                    cell.char_end
                } else {
                    cell.char_start
                };
                at as usize == anchor
            });
    }
}

/// Raises the layout's min widths to what every section's anchors show: a column whose
/// words sit wider apart than its widest cell in some section (`ls -l`'s time column, five
/// wide even where every file shows a year) is padded to that width everywhere.
fn pool_min_widths(
    lines: &Lines<'_>,
    sections: &[Range<usize>],
    layout: &mut Layout,
    scratch: &mut Scratch,
) {
    let fixed = lines.fixed;
    for (n, section) in sections.iter().enumerate() {
        widest(lines, section.clone(), scratch, &[]);
        let anchors = &scratch.anchors[n * fixed..][..fixed];
        let mut at = 0;
        for i in 0..fixed {
            let (anchor, widest) = (anchors[i], scratch.widths[i]);
            let next_left = (i + 1 < fixed && !layout.right[i + 1]).then(|| anchors[i + 1]);
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

/// Sets `scratch.widths` to the widest cell of each column among the lines of `section`
/// taken for rows, or `min` where that is wider.
fn widest(lines: &Lines<'_>, section: Range<usize>, scratch: &mut Scratch, min: &[usize]) {
    scratch.widths.clear();
    scratch.widths.resize(lines.fixed, 0);
    for (width, &min) in scratch.widths.iter_mut().zip(min) {
        *width = min;
    }
    for k in section.filter(|&k| scratch.alive[k]) {
        for (width, field) in scratch.widths.iter_mut().zip(lines.cells(k)) {
            *width = (*width).max(field.chars() as usize);
        }
    }
}

/// Finds the rows of every section: the lines whose words sit where `layout` puts them,
/// once each column is as wide as its widest cell among the section's rows (or its min
/// width).
fn find_all_rows(
    lines: &Lines<'_>,
    sections: &[Range<usize>],
    layout: &Layout,
    scratch: &mut Scratch,
) -> Found {
    let fixed = lines.fixed;
    let mut found = Found {
        free: vec![NOT_ROW; lines.bounds.len()],
        rows: 0,
        collapsed: 0,
        top: Vec::with_capacity(fixed * (MAX_HEADER_ROWS + 1)),
        same: vec![true; fixed * (MAX_HEADER_ROWS + 1)],
    };
    for section in sections {
        let Some(free_at) = fit(lines, section.clone(), layout, scratch) else {
            continue;
        };
        for k in section.clone().filter(|&k| scratch.alive[k]) {
            let cells = lines.cells(k);
            let last = cells[fixed - 1];
            let (free, free_at) = if layout.has_free() {
                (
                    last.end + (free_at - last.char_end as usize) as u32,
                    free_at,
                )
            } else {
                // Without free text, nothing follows the last column to lose its padding.
                (lines.bounds[k].1, 0)
            };
            found.add(lines, k, free, free_at);
        }
    }
    found
}

/// Drops the lines that do not fit the widths their fellow rows give, until the rows left
/// all fit theirs; returns where the free text starts (in characters), or `None` when they
/// never settle.
fn fit(
    lines: &Lines<'_>,
    section: Range<usize>,
    layout: &Layout,
    scratch: &mut Scratch,
) -> Option<usize> {
    for _ in 0..4 {
        widest(lines, section.clone(), scratch, &layout.min);
        let free_at = layout.starts(&scratch.widths, &mut scratch.starts);
        let mut settled = true;
        for k in section.clone() {
            if scratch.alive[k] && !fits(lines, k, layout, scratch, free_at) {
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

/// Whether line `k`'s words sit exactly where the widths put them, and its free text (or
/// its end) right after.
fn fits(lines: &Lines<'_>, k: usize, layout: &Layout, scratch: &Scratch, free_at: usize) -> bool {
    let cells = lines.cells(k);
    for (i, cell) in cells.iter().enumerate() {
        let (width, start, len) = (scratch.widths[i], scratch.starts[i], cell.chars() as usize);
        let expected = if layout.right[i] {
            (start + width).checked_sub(len)
        } else {
            Some(start)
        };
        let bytes = &lines.text.as_bytes()[cell.start as usize..cell.end as usize];
        // A cell of tabs or carriage returns alone would make a row the inverse takes for a
        // blank line.
        if expected != Some(cell.char_start as usize) || len > width || is_separator(bytes) {
            return false;
        }
    }
    let last = cells[cells.len() - 1];
    let end = lines.bounds[k].1;
    if !layout.has_free() {
        return last.end == end;
    }
    let Some(need) = free_at.checked_sub(last.char_end as usize) else {
        return false;
    };
    let after = &lines.text.as_bytes()[last.end as usize..end as usize];
    after.len() >= need && after[..need].iter().all(|&b| b == b' ')
}

impl Found {
    /// Takes line `k` as a row: where its free text starts (in bytes), its runs of padding,
    /// its cells' values.
    fn add(&mut self, lines: &Lines<'_>, k: usize, free: u32, free_at: usize) {
        self.free[k] = free;
        let cells = lines.cells(k);
        let mut before = 0;
        for cell in cells {
            self.collapsed += usize::from(cell.char_start - before > 1);
            before = cell.char_end;
        }
        self.collapsed += usize::from(free_at.saturating_sub(before as usize) > 1);
        let fixed = cells.len();
        if self.rows <= MAX_HEADER_ROWS {
            self.top
                .extend(cells.iter().map(|cell| (cell.start, cell.end)));
        }
        for header_rows in 0..=MAX_HEADER_ROWS.min(self.rows.saturating_sub(1)) {
            let same = &mut self.same[header_rows * fixed..][..fixed];
            let top = &self.top[header_rows * fixed..][..fixed];
            for ((same, cell), &value) in same.iter_mut().zip(cells).zip(top) {
                // Most columns stop being constant within a few rows: no more comparing.
                *same = *same && lines.value((cell.start, cell.end)) == lines.value(value);
            }
        }
        self.rows += 1;
    }
}

/// Chooses the constant columns and lists the lines that are not rows; returns the bytes
/// the constant columns save, or `None` when too many lines would read as rows.
fn constants_and_not_rows(lines: &Lines<'_>, found: &Found, layout: &mut Layout) -> Option<usize> {
    let saved = choose_constants(lines, found, layout);
    if list_not_rows(lines, layout, found).is_some() {
        return Some(saved);
    }
    // Constant columns leave rows fewer words, so more other lines read as rows.
    if saved == 0 {
        return None;
    }
    layout.constant.iter_mut().for_each(|value| *value = None);
    layout.header_rows = 0;
    list_not_rows(lines, layout, found).map(|()| 0)
}

/// Sets the columns said once in the note: those with one value in every row, or in every
/// row after the first few (a header, a rule under it), whichever saves the most; returns
/// the bytes saved.
fn choose_constants(lines: &Lines<'_>, found: &Found, layout: &mut Layout) -> usize {
    let fixed = layout.fixed();
    // A constant column costs about 20 bytes of note and saves its value and a space in
    // every row that leaves it out.
    let saving =
        |value: &str, rows: usize| (rows * (value.len() + 1)).checked_sub(value.len() + 20);
    let pick = |header_rows: usize| -> Vec<(usize, usize)> {
        let rows = found.rows - header_rows;
        let same = &found.same[header_rows * fixed..][..fixed];
        let top = &found.top[header_rows * fixed..][..fixed];
        (0..fixed)
            .filter(|&i| same[i] && quotable(lines.value(top[i])))
            .filter_map(|i| Some((i, saving(lines.value(top[i]), rows).filter(|&s| s > 0)?)))
            .collect()
    };
    let total = |picked: &[(usize, usize)]| picked.iter().map(|p| p.1).sum::<usize>();
    // Two rows at least share a value; the fewest header rows on a tie.
    let (header_rows, mut picked) = (0..=MAX_HEADER_ROWS.min(found.rows.saturating_sub(2)))
        .map(|header_rows| (header_rows, pick(header_rows)))
        .fold((0, Vec::new()), |best, next| {
            if total(&next.1) > total(&best.1) {
                next
            } else {
                best
            }
        });
    // A row keeps at least one word, or every line would read as a row.
    if picked.len() == fixed {
        let smallest = (0..picked.len()).min_by_key(|&i| picked[i].1).unwrap_or(0);
        picked.remove(smallest);
    }
    let top = &found.top[header_rows * fixed..];
    for &(i, _) in &picked {
        layout.constant[i] = Some(lines.value(top[i]).to_owned());
    }
    layout.header_rows = if picked.is_empty() { 0 } else { header_rows };
    total(&picked)
}

/// Lists in the note the lines kept as they are that would read back as rows (a notice
/// under a two-column table, a sentence of as many words as a row); `None` when they make
/// more than [`MAX_NOT_ROWS`] runs.
fn list_not_rows(lines: &Lines<'_>, layout: &mut Layout, found: &Found) -> Option<()> {
    let (fixed, has_free, row_words) = (layout.fixed(), layout.has_free(), layout.row_words());
    layout.not_rows.clear();
    let mut rows = 0;
    for (k, &free) in found.free.iter().enumerate() {
        if free != NOT_ROW {
            rows += 1;
            continue;
        }
        let line = lines.bytes(k);
        let words = if rows < layout.header_rows {
            fixed
        } else {
            row_words
        };
        if is_separator(line) || !is_row(line, words, has_free) {
            continue;
        }
        let number = k + 1;
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
fn write(lines: &Lines<'_>, layout: &Layout, found: &Found) -> String {
    let text = lines.text;
    let mut out = String::with_capacity(text.len());
    layout.write(&mut out);
    let mut rows = 0;
    for (k, &(start, end)) in lines.bounds.iter().enumerate() {
        out.push('\n');
        let free = found.free[k];
        if free == NOT_ROW {
            out.push_str(&text[start as usize..end as usize]);
            continue;
        }
        let header = rows < layout.header_rows;
        rows += 1;
        let mut first = true;
        for (cell, constant) in lines.cells(k).iter().zip(&layout.constant) {
            if constant.is_none() || header {
                if !first {
                    out.push(' ');
                }
                out.push_str(lines.value((cell.start, cell.end)));
                first = false;
            }
        }
        if layout.has_free() {
            out.push(' ');
            out.push_str(&text[free as usize..end as usize]);
        }
    }
    out
}
