//! Finding a table's columns, their alignment and their widths in a sample of its lines.

use super::note::{Layout, MAX_COLUMNS, MAX_WIDTH};
use super::scan::{Field, words};

/// Lines of the largest section the columns are found in.
const SAMPLE: usize = 1000;

/// Counts of positions, to find the most common one; all zero between two uses.
pub(super) struct Tally {
    counts: Vec<u32>,
}

impl Tally {
    pub(super) fn new() -> Tally {
        Tally {
            counts: vec![0; MAX_WIDTH + 1],
        }
    }

    /// The most common of `positions` and how many times it occurs (on a tie, the first to
    /// reach that count); positions beyond [`MAX_WIDTH`] are not counted, and `(0, 0)` means
    /// none was.
    pub(super) fn mode(&mut self, positions: impl Iterator<Item = u32> + Clone) -> (u32, u32) {
        let mut best = (0, 0);
        for at in positions.clone().filter(|&at| at as usize <= MAX_WIDTH) {
            let count = &mut self.counts[at as usize];
            *count += 1;
            if *count > best.1 {
                best = (at, *count);
            }
        }
        for at in positions.filter(|&at| at as usize <= MAX_WIDTH) {
            self.counts[at as usize] = 0;
        }
        best
    }
}

/// The words of the sample's lines, `stride` slots a line.
struct Sample {
    fields: Vec<Field>,
    found: Vec<usize>,
    alive: Vec<bool>,
    stride: usize,
}

impl Sample {
    fn field(&self, line: usize, column: usize) -> &Field {
        &self.fields[line * self.stride + column]
    }

    /// The lines still taken for rows that have a word in `column`.
    fn with(&self, column: usize) -> impl Iterator<Item = usize> + Clone + '_ {
        (0..self.found.len()).filter(move |&k| self.alive[k] && self.found[k] > column)
    }
}

/// A column found in the sample: where most of its words start and end, and how many do.
#[derive(Clone, Copy, Debug)]
pub(super) struct Column {
    start: u32,
    end: u32,
    by_start: u32,
    by_end: u32,
}

impl Column {
    /// Whether the sample alone says the column is right-aligned (more of its words end at
    /// one place than start at one).
    pub(super) fn right(&self) -> bool {
        self.by_end > self.by_start
    }

    /// Whether the sample cannot tell: its words all have one width.
    pub(super) fn ambiguous(&self) -> bool {
        self.by_end == self.by_start
    }
}

/// The columns of a table as a sample of its lines shows them.
#[derive(Debug)]
pub(super) struct Columns {
    /// The columns of one word each.
    pub(super) fixed: Vec<Column>,
    /// Where the free text starts when the sample shows it (its first word aligns).
    free_anchor: Option<u32>,
    has_free: bool,
    /// The widest cell of each fixed column, in characters.
    widest: Vec<u32>,
}

/// The columns of the table in `lines` (a section of `text`), from its first [`SAMPLE`]
/// lines: the columns whose words most lines align (to the left or to the right), the last
/// of them free text when it is left-aligned. `None` when fewer than two columns align.
pub(super) fn detect(text: &str, lines: &[(u32, u32)], tally: &mut Tally) -> Option<Columns> {
    let sample_lines = &lines[..lines.len().min(SAMPLE)];
    let mut sample = Sample {
        fields: Vec::with_capacity(sample_lines.len() * MAX_COLUMNS),
        found: Vec::with_capacity(sample_lines.len()),
        alive: Vec::with_capacity(sample_lines.len()),
        stride: MAX_COLUMNS,
    };
    for &(start, end) in sample_lines {
        let line = &text.as_bytes()[start as usize..end as usize];
        let found = words(line, start, MAX_COLUMNS, &mut sample.fields);
        sample.fields.resize(
            sample.found.len() * MAX_COLUMNS + MAX_COLUMNS,
            Field::default(),
        );
        sample.found.push(found);
        sample.alive.push(found > 0);
    }
    let mut columns: Vec<Column> = Vec::new();
    while columns.len() < MAX_COLUMNS {
        match vote(&mut sample, columns.len(), tally) {
            Some(column) => columns.push(column),
            None => break,
        }
    }
    let (last, _) = columns.split_last()?;
    // A left-aligned last column is the start of free text: its first word aligns, the words
    // after it do not.
    let free_anchor = (!last.right()).then_some(last.start);
    if free_anchor.is_some() {
        columns.pop();
    }
    let fixed = columns.len();
    if fixed == 0 || fixed + usize::from(free_anchor.is_some()) > MAX_COLUMNS {
        return None;
    }
    let has_free = free_anchor.is_some()
        || sample
            .with(0)
            .any(|k| sample.field(k, fixed - 1).end < sample_lines[k].1);
    let widest: Vec<u32> = (0..fixed)
        .map(|i| sample.with(0).map(|k| sample.field(k, i).chars()).max())
        .collect::<Option<_>>()?;
    Some(Columns {
        fixed: columns,
        free_anchor,
        has_free,
        widest,
    })
}

impl Columns {
    /// The layout of these columns with the alignment `right` (one entry per fixed column):
    /// the gap between columns and the widths the widest cells do not give. `None` when no
    /// such layout holds the sample's anchors.
    pub(super) fn layout(&self, right: &[bool]) -> Option<Layout> {
        let anchors: Vec<(bool, u32)> = (self.fixed.iter().zip(right))
            .map(|(column, &right)| (right, if right { column.end } else { column.start }))
            .collect();
        let (gap, min) = nominal(&anchors, self.free_anchor, &self.widest)?;
        let mut right = right.to_vec();
        if self.has_free {
            right.push(false);
        }
        Some(Layout {
            right,
            gap,
            min,
            constant: vec![None; self.fixed.len()],
            header_rows: 0,
            not_rows: Vec::new(),
        })
    }
}

/// The alignment and anchor of `column` that most of the lines still taken for rows share
/// (the start of its words if left-aligned, their end if right-aligned); the lines that do
/// not share it are no longer taken. `None` when fewer than half of them have a word there,
/// or fewer than three quarters of those share an anchor.
fn vote(sample: &mut Sample, column: usize, tally: &mut Tally) -> Option<Column> {
    let alive = sample.alive.iter().filter(|&&alive| alive).count();
    let have = sample.with(column).count();
    if have < 2 || have * 2 < alive {
        return None;
    }
    let starts = sample
        .with(column)
        .map(|k| sample.field(k, column).char_start);
    let (start, by_start) = tally.mode(starts);
    let ends = sample
        .with(column)
        .map(|k| sample.field(k, column).char_end);
    let (end, by_end) = tally.mode(ends);
    let right = by_end > by_start;
    let (anchor, agree) = if right {
        (end, by_end)
    } else {
        (start, by_start)
    };
    // The words of a column align in all its rows but a few (a row that overflows a fixed
    // width); the second words of free text align in a few rows only.
    if agree < 2 || (agree as usize) * 4 < have * 3 {
        return None;
    }
    for k in 0..sample.found.len() {
        let field = sample.field(k, column);
        let at = if right {
            field.char_end
        } else {
            field.char_start
        };
        sample.alive[k] = sample.alive[k] && sample.found[k] > column && at == anchor;
    }
    Some(Column {
        start,
        end,
        by_start,
        by_end,
    })
}

/// The gap between columns and the least widths that the anchors of `columns` (and of the
/// free text) imply beyond their widest cells, or `None` when no such layout holds them.
///
/// The gap is the narrowest space seen between a column's widest cell and the next
/// left-aligned column; a column is as wide as the space to the next left-aligned column
/// leaves (minus the gap), or, before a right-aligned one, as its widest cell.
fn nominal(
    columns: &[(bool, u32)],
    free_anchor: Option<u32>,
    widest: &[u32],
) -> Option<(usize, Vec<usize>)> {
    let next_left = |i: usize| match columns.get(i + 1) {
        Some(&(false, anchor)) => Some(anchor),
        Some(_) => None,
        None => free_anchor,
    };
    let mut gap = u32::MAX;
    for (i, &(right, anchor)) in columns.iter().enumerate() {
        let end = if right { anchor } else { anchor + widest[i] };
        if let Some(next) = next_left(i) {
            gap = gap.min(next.checked_sub(end).filter(|&g| g > 0)?);
        }
    }
    let gap = if gap == u32::MAX { 1 } else { gap };
    let mut min = vec![0; columns.len()];
    let mut at = 0u32;
    for (i, &(right, anchor)) in columns.iter().enumerate() {
        let width = if right {
            anchor.checked_sub(at)?
        } else if anchor != at {
            return None;
        } else {
            next_left(i).map_or(widest[i], |next| next - gap - at)
        };
        if width < widest[i] || width as usize > MAX_WIDTH {
            return None;
        }
        if width > widest[i] {
            min[i] = width as usize;
        }
        at += width + gap;
    }
    Some((gap as usize, min))
}
