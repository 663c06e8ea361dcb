//! The compressing pass: each line of grep output classified and written under its file's
//! heading, in one pass over the input (the rules are in the module documentation).

use memchr::{memchr, memchr_iter, memchr2_iter};

/// How many lines decide the numbering, and after how many the pass checks that the input is
/// worth going on with.
const SAMPLE_LINES: usize = 32;

/// How many lines a context line that opens a group looks ahead for its match: far more than
/// the context search tools are asked for, and a bound on what text that is not search
/// results costs.
const AHEAD_LINES: usize = 256;

/// How the hits of an input give their place in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Numbering {
    /// `path:N:text` matches, `path-N-text` context lines, `--` between groups.
    Numbered,
    /// `path:text`, as `grep -r` without `-n` writes them.
    Plain,
}

/// The lines of `text` (which holds no final `\n`), each with the offset of the next one.
pub(super) struct Lines<'a> {
    text: &'a str,
    at: usize,
    done: bool,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str, at: usize) -> Lines<'a> {
        Lines {
            text,
            at,
            done: false,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    /// A line, and the offset in `text` of the line after it.
    type Item = (&'a str, usize);

    fn next(&mut self) -> Option<(&'a str, usize)> {
        if self.done {
            return None;
        }
        let rest = &self.text.as_bytes()[self.at..];
        let (end, next) = match memchr(b'\n', rest) {
            Some(len) => (self.at + len, self.at + len + 1),
            None => {
                self.done = true;
                (self.text.len(), self.text.len())
            }
        };
        let line = &self.text[self.at..end];
        self.at = next;
        Some((line, next))
    }
}

/// Whether `line` is a `--` between groups of context (with the `\r` of a CRLF line).
pub(super) fn is_separator(line: &str) -> bool {
    matches!(line, "--" | "--\r")
}

/// Whether `line[at..]` is one or more ASCII digits followed by `sep`.
pub(super) fn digits_then(line: &[u8], at: usize, sep: u8) -> bool {
    let rest = line.get(at..).unwrap_or_default();
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && rest.get(digits) == Some(&sep)
}

/// The length of the path of a numbered match `path:N:text`: the first `:` after at least one
/// byte that is followed by digits and a `:`.
fn match_path(line: &[u8]) -> Option<usize> {
    memchr_iter(b':', line).find(|&at| at > 0 && digits_then(line, at + 1, b':'))
}

/// Where the first context mark `-N-` in `line[1..end]` starts.
fn context_mark(line: &[u8], end: usize) -> Option<usize> {
    memchr_iter(b'-', &line[..end]).find(|&at| at > 0 && digits_then(line, at + 1, b'-'))
}

/// The first mark after at least one byte of `line`, `:N:` or `-N-`: where it starts, and
/// its separator.
fn first_mark(line: &[u8]) -> Option<(usize, u8)> {
    memchr2_iter(b':', b'-', line).find_map(|at| {
        let sep = line[at];
        (at > 0 && digits_then(line, at + 1, sep)).then_some((at, sep))
    })
}

/// Whether `line` goes on with `path` followed by `sep`, digits and `sep`.
fn continues(line: &[u8], path: &str, sep: u8) -> bool {
    line.starts_with(path.as_bytes())
        && line.get(path.len()) == Some(&sep)
        && digits_then(line, path.len() + 1, sep)
}

/// The numbering of the input: numbered when that reading keeps at most a quarter of its
/// first lines verbatim (a message of grep's, a line without a number among numbered ones),
/// else plain. Plain hits read almost any line as a hit (`grep: x: Permission denied` is a
/// hit of `grep`), so they are the reading of last resort.
fn numbering(body: &str) -> Numbering {
    let (verbatim, lines) = verbatim_in_sample(body);
    if verbatim * 4 <= lines {
        Numbering::Numbered
    } else {
        Numbering::Plain
    }
}

/// How many of the first lines of `body` the numbered reading keeps verbatim, and how many
/// lines it read.
fn verbatim_in_sample(body: &str) -> (usize, usize) {
    let (mut block, mut ahead, mut verbatim, mut lines) = (None, Ahead::default(), 0, 0);
    for (line, next) in Lines::new(body, 0).take(SAMPLE_LINES) {
        lines += 1;
        match numbered_line(line, block, &mut ahead, body, next) {
            Line::Hit { path, .. } => block = Some(path),
            Line::Separator => {}
            Line::Verbatim => {
                verbatim += 1;
                block = None;
            }
        }
    }
    (verbatim, lines)
}

/// What one input line is.
enum Line<'a> {
    /// A hit in `path`: the line is `path`, one separator byte, then `body`. `same` when
    /// `path` is the path of the block above (a line found another path only when it does
    /// not go on with the block's path, so a path found is never the block's own).
    Hit {
        path: &'a str,
        body: &'a str,
        same: bool,
    },
    /// A `--` between two groups of context, after a hit.
    Separator,
    /// Anything else, kept as it is.
    Verbatim,
}

/// The first match after a line, found by looking ahead and kept for the lines that come
/// before it, so that looking ahead stays linear.
#[derive(Default)]
struct Ahead<'a> {
    /// The offset of the line the answer was found on (a line holding `:N:`, a `--`, or the
    /// end), and that line with the length of its match path.
    found: Option<(usize, Option<(&'a str, usize)>)>,
}

impl<'a> Ahead<'a> {
    /// The first line of `body` from offset `from` on, before any `--` and within
    /// [`AHEAD_LINES`] lines, that holds `:N:` after at least one byte, with the length of the
    /// path before it.
    fn line(&mut self, body: &'a str, from: usize) -> Option<(&'a str, usize)> {
        if let Some((at, line)) = self.found
            && from <= at
        {
            return line;
        }
        let mut found = (body.len(), None);
        let mut at = from;
        for (seen, (line, next)) in Lines::new(body, from.min(body.len())).enumerate() {
            if is_separator(line) || line.is_empty() || seen == AHEAD_LINES {
                found = (at, None);
                break;
            }
            if let Some(end) = match_path(line.as_bytes()) {
                found = (at, Some((line, end)));
                break;
            }
            at = next;
        }
        self.found = Some(found);
        found.1
    }

    /// The path of the file a context line that opens a group belongs to: the path of the
    /// next line holding `:N:`, when `line` goes on with it and `-N-`. That line is the
    /// group's match, unless it is a context line whose text holds `:N:`: then the path is
    /// the one before its first context mark.
    fn context_path(&mut self, line: &[u8], body: &'a str, from: usize) -> Option<&'a str> {
        let (next, end) = self.line(body, from)?;
        let matched = &next[..end];
        if continues(line, matched, b'-') {
            return Some(matched);
        }
        let context = &next[..context_mark(next.as_bytes(), end)?];
        continues(line, context, b'-').then_some(context)
    }
}

/// Classifies a line of numbered hits. `block` is the path of the hits just written;
/// `body` and `next` are the whole input and the offset of the line after this one, for
/// looking ahead.
fn numbered_line<'a>(
    line: &'a str,
    block: Option<&'a str>,
    ahead: &mut Ahead<'a>,
    body: &'a str,
    next: usize,
) -> Line<'a> {
    if is_separator(line) {
        return if block.is_some() {
            Line::Separator
        } else {
            Line::Verbatim
        };
    }
    let bytes = line.as_bytes();
    let hit = |path: &'a str, same: bool| Line::Hit {
        path,
        body: &line[path.len() + 1..],
        same,
    };
    if let Some(path) = block
        && bytes.starts_with(path.as_bytes())
        && let Some(&sep @ (b':' | b'-')) = bytes.get(path.len())
        && digits_then(bytes, path.len() + 1, sep)
    {
        return hit(path, true);
    }
    match first_mark(bytes) {
        None => Line::Verbatim,
        Some((end, b':')) => hit(&line[..end], false),
        // A context line of a file not seen yet (before its match, with -B or -C): its path
        // is the path of the match that follows, since a group of context holds one file.
        Some(_) => match ahead.context_path(bytes, body, next) {
            Some(path) => hit(path, false),
            None => match_path(bytes).map_or(Line::Verbatim, |end| hit(&line[..end], false)),
        },
    }
}

/// Classifies a line of plain hits, `path:text` (a text that is a `--` is kept verbatim, as
/// the inverse reads a `--` as a separator); `None` for a `--` line, which plain hits do not
/// hold (context without line numbers cannot be told from matches).
fn plain_line<'a>(line: &'a str, block: Option<&'a str>) -> Option<Line<'a>> {
    if is_separator(line) {
        return None;
    }
    let bytes = line.as_bytes();
    // A path holds no `:`, so a line that goes on with the block's path has its first `:`
    // right after it.
    let (colon, same) = match block {
        Some(path)
            if bytes.starts_with(path.as_bytes()) && bytes.get(path.len()) == Some(&b':') =>
        {
            (Some(path.len()), true)
        }
        _ => (memchr(b':', bytes), false),
    };
    Some(match colon {
        Some(at) if at > 0 && at + 1 < line.len() && !is_separator(&line[at + 1..]) => Line::Hit {
            path: &line[..at],
            body: &line[at + 1..],
            same,
        },
        _ => Line::Verbatim,
    })
}

/// Whether a hit's body reads as numbered: digits then `:` or `-`, or a `--`. The inverse takes
/// an output as numbered when every body in it does.
pub(super) fn looks_numbered(body: &str) -> bool {
    let bytes = body.as_bytes();
    is_separator(body) || digits_then(bytes, 0, b':') || digits_then(bytes, 0, b'-')
}

/// The output being written, and what the pass has seen so far.
struct Writer<'a> {
    out: String,
    /// The path of the block being written, when the last line was a hit or a `--`.
    block: Option<&'a str>,
    lines: usize,
    verbatim: usize,
    /// Lines that went into the block before them (a hit of the same file, a `--`).
    continued: usize,
    /// Whether every body written so far reads as numbered.
    all_look_numbered: bool,
}

impl<'a> Writer<'a> {
    fn new(capacity: usize) -> Writer<'a> {
        Writer {
            out: String::with_capacity(capacity),
            block: None,
            lines: 0,
            verbatim: 0,
            continued: 0,
            all_look_numbered: true,
        }
    }

    /// Writes a line that starts a block (a heading, or a verbatim line), after a blank line
    /// unless it is the first. Every line written before it ends with its `\n`: only the last
    /// line of an input may lack one.
    fn open(&mut self, first: &str) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out.push_str(first);
    }

    /// Writes an input line read as `line`; `whole` is its text with the `\n` after it in the
    /// input (none for a last line without one). Each part is copied with that `\n`, in one
    /// copy, so that the output ends with one when the input did.
    fn write(&mut self, line: Line<'a>, whole: &'a str, plain: bool) {
        self.lines += 1;
        match line {
            Line::Hit { path, body, same } => {
                if same {
                    self.continued += 1;
                } else {
                    self.open(path);
                    self.out.push('\n');
                    self.block = Some(path);
                }
                self.out.push_str(&whole[path.len() + 1..]);
                if plain && self.all_look_numbered && !looks_numbered(body) {
                    self.all_look_numbered = false;
                }
            }
            Line::Separator => {
                self.continued += 1;
                self.out.push_str(whole);
            }
            Line::Verbatim => {
                self.open(whole);
                self.block = None;
                self.verbatim += 1;
            }
        }
    }

    /// Whether the lines so far are search results worth regrouping: at most half kept
    /// verbatim, and at least a quarter in the block of the line before them.
    fn promising(&self) -> bool {
        self.verbatim * 2 <= self.lines && self.continued * 4 >= self.lines
    }
}

/// The `hits` form of `text`, or `None` when the codec declines it (the rules are in the
/// module documentation). The caller applies the no-gain rule.
pub(super) fn encode(text: &str) -> Option<String> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() {
        return None;
    }
    let numbering = numbering(body);
    let plain = numbering == Numbering::Plain;
    let mut writer = Writer::new(text.len());
    let mut ahead = Ahead::default();
    let mut start = 0;
    for (line, next) in Lines::new(body, 0) {
        if line.is_empty() {
            return None;
        }
        // The last line takes the input's final `\n`, which `body` left out.
        let end = if next == body.len() { text.len() } else { next };
        let classified = match numbering {
            Numbering::Numbered => numbered_line(line, writer.block, &mut ahead, body, next),
            Numbering::Plain => plain_line(line, writer.block)?,
        };
        writer.write(classified, &text[start..end], plain);
        start = next;
        if writer.lines == SAMPLE_LINES && !writer.promising() {
            return None;
        }
    }
    if !writer.promising() || writer.verbatim * 4 > writer.lines {
        return None;
    }
    if plain && writer.all_look_numbered {
        return None;
    }
    Some(writer.out)
}
