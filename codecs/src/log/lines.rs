//! The payload's lines as the codec reads them: cleaned of ANSI escapes and carriage-return
//! redraws, without copying the payload.

use super::template::clean_line;

/// No cleaned text: the line is as the payload has it.
const NONE: u32 = u32::MAX;

/// The payload's lines, each as cleaning leaves it (see [`clean_line`]): a line that holds
/// no ESC and no CR is a slice of the payload; the cleaned text of the others is kept apart,
/// so the payload is never copied whole.
pub(super) struct Lines<'t> {
    /// The payload.
    text: &'t str,
    /// Where each line lies in the payload, before cleaning.
    starts: Vec<u32>,
    ends: Vec<u32>,
    /// The cleaned text of the lines that cleaning changes, each followed by a `\n`.
    cleaned: String,
    /// For each line, the index of its cleaned text among the changed lines', or [`NONE`]
    /// when cleaning leaves it as it is.
    alt: Vec<u32>,
    /// Where each changed line's cleaned text starts and ends in `cleaned`, and which line it
    /// is.
    clean_starts: Vec<u32>,
    clean_ends: Vec<u32>,
    changed: Vec<u32>,
    /// The lines whose cleaned text keeps a failure that a redraw overwrote, in order.
    redrawn: Vec<u32>,
}

/// Where each line of `text` starts and ends (line `i` is `text[starts[i]..ends[i]]`, without
/// its `\n`); the empty part after a final line break is not a line.
pub(super) fn line_bounds(text: &str) -> (Vec<u32>, Vec<u32>) {
    let mut starts = vec![0u32];
    let mut ends = Vec::new();
    for at in memchr::memchr_iter(b'\n', text.as_bytes()) {
        ends.push(at as u32);
        starts.push(at as u32 + 1);
    }
    ends.push(text.len() as u32);
    if text.ends_with('\n') {
        starts.pop();
        ends.pop();
    }
    (starts, ends)
}

impl<'t> Lines<'t> {
    /// The lines of `text` (under 4 GiB), each cleaned; `failure` tells which overwritten
    /// redraw states are failures, to be kept.
    pub(super) fn new(text: &'t str, failure: impl Fn(&str) -> bool) -> Lines<'t> {
        let (starts, ends) = line_bounds(text);
        let mut alt = Vec::new();
        let (mut clean_starts, mut clean_ends, mut changed) = (Vec::new(), Vec::new(), Vec::new());
        let mut redrawn = Vec::new();
        let mut cleaned = String::new();
        let mut scratch = String::new();
        let bytes = text.as_bytes();
        // Only the lines holding an ESC or a CR change: from each such byte to the end of its
        // line, then the search goes on after it.
        let mut line = 0;
        let mut from = 0;
        while let Some(at) = memchr::memchr2(0x1b, b'\r', &bytes[from..]).map(|p| from + p) {
            while (ends[line] as usize) < at {
                line += 1;
            }
            if alt.is_empty() {
                alt = vec![NONE; starts.len()];
            }
            alt[line] = changed.len() as u32;
            changed.push(line as u32);
            clean_starts.push(cleaned.len() as u32);
            let kept = clean_line(
                &text[starts[line] as usize..ends[line] as usize],
                &mut scratch,
                &mut cleaned,
                &failure,
            );
            if kept {
                redrawn.push(line as u32);
            }
            clean_ends.push(cleaned.len() as u32);
            cleaned.push('\n');
            from = ends[line] as usize + 1;
            if from >= bytes.len() {
                break;
            }
        }
        Lines {
            text,
            starts,
            ends,
            cleaned,
            alt,
            clean_starts,
            clean_ends,
            changed,
            redrawn,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Line `i`, cleaned.
    #[inline]
    pub(super) fn get(&self, i: usize) -> &str {
        match self.alt.get(i) {
            Some(&at) if at != NONE => {
                let (start, end) = (self.clean_starts[at as usize], self.clean_ends[at as usize]);
                &self.cleaned[start as usize..end as usize]
            }
            _ => &self.text[self.starts[i] as usize..self.ends[i] as usize],
        }
    }

    /// The payload, before cleaning.
    pub(super) fn text(&self) -> &'t str {
        self.text
    }

    /// Where each line lies in the payload, before cleaning: starts and ends.
    pub(super) fn bounds(&self) -> (&[u32], &[u32]) {
        (&self.starts, &self.ends)
    }

    /// Whether cleaning changes line `i`.
    pub(super) fn changed(&self, i: usize) -> bool {
        self.alt.get(i).is_some_and(|&at| at != NONE)
    }

    /// The lines whose cleaned text keeps a failure a redraw overwrote (see [`clean_line`]),
    /// in order.
    pub(super) fn redrawn(&self) -> &[u32] {
        &self.redrawn
    }

    /// The cleaned text of the lines cleaning changes, each followed by a `\n`, with where
    /// each starts and ends in it and which line it is.
    pub(super) fn changed_lines(&self) -> (&str, &[u32], &[u32], &[u32]) {
        (
            &self.cleaned,
            &self.clean_starts,
            &self.clean_ends,
            &self.changed,
        )
    }
}
