//! The writer both encoders share: lines of entries, two spaces of indent per level, the
//! entries of one directory side by side up to [`WIDTH`] bytes.

/// The widest a line of side-by-side entries grows, in bytes with its indent: about what `ls`
/// fills on a wide terminal. A longer entry gets a line of its own.
pub(super) const WIDTH: usize = 160;

/// Indentation written in one piece, for the depths listings reach.
const SPACES: &str = "                                                                ";

/// The tree being written: directory lines and lines of side-by-side entries.
pub(super) struct Tree {
    out: String,
    /// Where the line that further entries may join starts, and its depth: `None` after a
    /// directory line, whose entries go on the next line.
    open: Option<(usize, usize)>,
    /// How many directory lines were written: none means nothing was grouped.
    pub(super) directories: usize,
}

impl Tree {
    /// An empty tree for the entries of `text`.
    pub(super) fn for_text(text: &str) -> Tree {
        Tree {
            out: String::with_capacity(text.len() / 2),
            open: None,
            directories: 0,
        }
    }

    /// A line at depth 0 written as it is, `text` then `suffix`: the root header of `ls -R`
    /// (`.:`), whose entries follow one level deeper.
    pub(super) fn header(&mut self, text: &str, suffix: &str) {
        self.open = None;
        self.new_line(0);
        self.out.push_str(text);
        self.out.push_str(suffix);
    }

    /// A directory line at `depth`: one entry on a line of its own, the lines after it one
    /// level deeper. `None` when the entry cannot be written exactly (see [`Tree::leaf`]);
    /// `spaced` is whether the line it comes from holds a space.
    pub(super) fn directory(&mut self, depth: usize, text: &str, spaced: bool) -> Option<()> {
        self.open = None;
        self.new_line(depth);
        self.directories += 1;
        self.entry(text, "", spaced && has_space(text))
    }

    /// An entry at `depth` (its `text` then `suffix`, `/` or nothing), on the open line when
    /// that line is at `depth` and has room, else on a new one; `spaced` is whether the line
    /// it comes from holds a space.
    ///
    /// `None` when the entry cannot be written exactly: it starts with a quote (a reader
    /// would take it as quoted), or holds both a space and a quote.
    #[inline]
    pub(super) fn leaf(
        &mut self,
        depth: usize,
        text: &str,
        suffix: &'static str,
        spaced: bool,
    ) -> Option<()> {
        let quoted = spaced && has_space(text);
        let len = text.len() + suffix.len() + if quoted { 2 } else { 0 };
        match self.open {
            Some((start, open_depth))
                if open_depth == depth && self.out.len() + 1 + len <= start + WIDTH =>
            {
                self.out.push(' ');
            }
            _ => {
                let start = self.new_line(depth);
                self.open = Some((start, depth));
            }
        }
        self.entry(text, suffix, quoted)
    }

    /// The text written.
    pub(super) fn finish(self) -> String {
        self.out
    }

    /// Starts a line at `depth`; returns where it starts.
    fn new_line(&mut self, depth: usize) -> usize {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        let start = self.out.len();
        let mut indent = 2 * depth;
        while indent > 0 {
            let piece = indent.min(SPACES.len());
            self.out.push_str(&SPACES[..piece]);
            indent -= piece;
        }
        start
    }

    /// Writes an entry, between quotes when it holds a space (`quoted`).
    #[inline]
    fn entry(&mut self, text: &str, suffix: &'static str, quoted: bool) -> Option<()> {
        if text.starts_with('\'') {
            return None;
        }
        if quoted {
            if text.contains('\'') {
                return None;
            }
            self.out.push('\'');
            self.out.push_str(text);
            self.out.push_str(suffix);
            self.out.push('\'');
        } else {
            self.out.push_str(text);
            self.out.push_str(suffix);
        }
        Some(())
    }
}

fn has_space(text: &str) -> bool {
    memchr::memchr(b' ', text.as_bytes()).is_some()
}
