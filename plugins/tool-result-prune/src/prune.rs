//! The cut: which units of a result's text survive, and where the marker goes.

use unicode_segmentation::UnicodeSegmentation;

/// What replaces the pruned middle of a result's text.
pub(crate) const MARKER: &str = "\n\n[... tool result middle pruned ...]\n\n";

/// The length of [`MARKER`], in code points and in grapheme clusters alike.
pub(crate) const MARKER_UNITS: usize = 39;

/// What the threshold, the head and the tail count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Unicode scalar values (Rust `char`s).
    CodePoints,
    /// Extended grapheme clusters (Unicode Standard Annex #29).
    Graphemes,
}

impl Unit {
    pub(crate) const NAMES: [&'static str; 2] = ["code_points", "graphemes"];

    pub(crate) fn from_name(name: &str) -> Unit {
        if name == "graphemes" {
            Unit::Graphemes
        } else {
            Unit::CodePoints
        }
    }

    fn count(self, text: &str) -> usize {
        match self {
            Unit::CodePoints => text.chars().count(),
            Unit::Graphemes => text.graphemes(true).count(),
        }
    }

    /// The byte offset at which unit `n` of `text` starts (`text.len()` when `n` is past the
    /// last unit), so slicing there never splits a unit.
    fn offset(self, text: &str, n: usize) -> usize {
        let start = match self {
            Unit::CodePoints => text.char_indices().nth(n).map(|(at, _)| at),
            Unit::Graphemes => text.grapheme_indices(true).nth(n).map(|(at, _)| at),
        };
        start.unwrap_or(text.len())
    }
}

/// A validated configuration: `head + MARKER_UNITS + tail <= threshold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) threshold: usize,
    pub(crate) head: usize,
    pub(crate) tail: usize,
    pub(crate) unit: Unit,
}

impl Budget {
    /// Prunes the texts of one result as if they were one text, concatenated in order.
    ///
    /// `None` when the total is within the threshold. Otherwise one entry per text: `None` for
    /// a text the cut does not reach (left as it was), else its new text — its share of the
    /// head, the marker if the cut starts in it, its share of the tail — which may be empty.
    pub(crate) fn prune(&self, texts: &[&str]) -> Option<Vec<Option<String>>> {
        let counts: Vec<usize> = texts.iter().map(|text| self.unit.count(text)).collect();
        let total: usize = counts.iter().sum();
        if total <= self.threshold {
            return None;
        }
        // total > threshold >= head + 39 + tail, so the cut [head, cut_end) is never empty.
        let cut_end = total - self.tail;
        let mut start = 0;
        let pruned = texts
            .iter()
            .zip(counts)
            .map(|(text, count)| {
                let (first, end) = (start, start + count);
                start = end;
                if end <= self.head || first >= cut_end {
                    return None;
                }
                let head = self.unit.offset(text, self.head.saturating_sub(first));
                let tail = self.unit.offset(text, cut_end.saturating_sub(first));
                let mut out = String::with_capacity(head + MARKER.len() + text.len() - tail);
                out.push_str(&text[..head]);
                if (first..end).contains(&self.head) {
                    out.push_str(MARKER);
                }
                out.push_str(&text[tail..]);
                Some(out)
            })
            .collect();
        Some(pruned)
    }

    /// [`Budget::prune`] for a result that is a single text.
    pub(crate) fn prune_one(&self, text: &str) -> Option<String> {
        self.prune(&[text])?.pop().flatten()
    }
}
