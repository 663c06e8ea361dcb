//! An output of this codec cut to a size at a line boundary, ending with a marker that says
//! exactly what the cut removed: the host's last resort when a result is over its size limit
//! (`max_result_chars`), typically a log whose failure lines alone are over it.
//!
//! The output is walked by its grammar (see the module documentation of [`super`]): verbatim
//! lines and regions (fold lines closed by their marker) follow each other in the original's
//! order and account for every original line once, so the original line at every place in the
//! output is known. The cut keeps whole units only: a verbatim line, or a region with all its
//! fold lines and its marker. So it never cuts inside a line or between a fold line and the
//! marker that gives its range, and everything after it is one range of the original, from
//! the first line of the first unit removed to the original's last line.

use parrot_codec_api::{CutAt, Payload, RECOVERY_TOOL, json_string_chars};

use super::Log;
use super::fold::looks_like_own_line;
use super::lines::Lines;
use super::patterns::Class;
use crate::counted::counted;

/// Where an output of the `log` codec is cut, and the marker that ends the cut text: see
/// [`Log::cut`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// How many bytes of the output are kept: whole lines, each with its line break.
    pub kept: usize,
    /// The line that follows them, without a line break:
    /// `[… O lines omitted, lines A-B: cut at max_result_chars, R lines of this result not shown; F failure lines omitted; wm_get_result {"lines":"A-B"}]`.
    pub marker: String,
    /// `R`: the lines of the output not kept (verbatim lines, fold lines and markers).
    pub removed_lines: usize,
    /// `F`: the failure lines among them (every failure line of the original is a verbatim
    /// line of the output, so those kept and these are all of them).
    pub removed_failures: usize,
    /// The failure lines kept.
    pub kept_failures: usize,
    /// `A`: the first original line (1-based) the kept lines do not show; none after it is
    /// shown either.
    pub from: usize,
    /// `B`: the original's last line.
    pub to: usize,
}

/// A unit of the output the cut keeps or removes whole: a verbatim line, or a region's fold
/// lines with its marker.
struct Unit {
    /// Where it ends in the output, its last line break included.
    end: usize,
    /// What its lines cost, each with its line break.
    cost: usize,
    /// Its lines in the output.
    lines: usize,
    /// Its failure lines (0 or 1: only a verbatim line is one).
    failures: usize,
    /// The first original line it stands for.
    from: usize,
}

impl Log {
    /// The codec's cut as the host asks for it ([`parrot_codec_api::Codec::CUT`]): [`Log::cut`]
    /// of a text original, the room counted as the JSON string the result goes out in writes
    /// it. A JSON original is none of this codec's (it leaves JSON alone).
    pub(super) fn cut_to_room(
        &self,
        original: Payload<'_>,
        output: &str,
        room: usize,
    ) -> Option<CutAt> {
        if original.is_json() {
            return None;
        }
        let cut = self.cut(original.text(), output, room, &json_string_chars)?;
        Some(CutAt::new(cut.kept, cut.marker))
    }

    /// Cuts `output`, this codec's output for `original`, so that the lines kept and the marker
    /// after them cost at most `room`, as `cost` counts (the host counts each character as
    /// the JSON string it goes out in writes it). `cost` must add up over a concatenation, and
    /// cost every ASCII digit alike, as counting characters does; the marker is sized for the
    /// largest numbers it can hold, so what it costs is known before it is written.
    ///
    /// At least one unit is removed. When not even the marker fits in `room`, nothing is kept
    /// and the marker is still given: the caller decides. `None` when `output` does not walk
    /// as this codec's output of `original` (a line that is neither the next original line, a
    /// fold line nor a marker closing the next region, or lines left over at either end): a
    /// text that is not one is not cut by its lines.
    ///
    /// The failure lines are this codec's own (the table, its blocks and `failure_patterns`),
    /// found by classifying `original` again, so the counts are exact.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
    ///
    /// let log: parrot_codecs::Log = parrot_codec_api::build(Params::empty()).unwrap();
    /// let input: String = (1..=400)
    ///     .map(|i| match i % 40 {
    ///         0..=9 => format!("test t_{i} ... FAILED\n"),
    ///         _ => format!("   Compiling crate_{i} v0.1.{i}\n"),
    ///     })
    ///     .collect();
    /// let Outcome::Changed { payload, .. } =
    ///     log.compress(Payload::text_only(&input), Level::Normal).unwrap()
    /// else {
    ///     panic!("a 400-line build log is compressed");
    /// };
    /// let chars = |text: &str| text.chars().count();
    /// let cut = log.cut(&input, &payload, 2_000, &chars).unwrap();
    /// let kept = &payload[..cut.kept];
    /// assert!(chars(kept) + chars(&cut.marker) <= 2_000);
    /// assert!(cut.marker.ends_with(&format!(r#"{{"lines":"{}-400"}}]"#, cut.from)));
    /// assert_eq!(kept.matches("FAILED").count() + cut.removed_failures, 100);
    /// ```
    pub fn cut(
        &self,
        original: &str,
        output: &str,
        room: usize,
        cost: &dyn Fn(&str) -> usize,
    ) -> Option<Cut> {
        if original.len() >= u32::MAX as usize {
            return None;
        }
        let lines = Lines::new(original, |state| self.matcher.is_failure(state));
        let class = self.classify(&lines)?;
        let units = walk(&lines, &class, output, cost)?;
        let n = lines.len();
        let all_lines: usize = units.iter().map(|unit| unit.lines).sum();
        let all_failures: usize = units.iter().map(|unit| unit.failures).sum();
        // The largest numbers the marker can hold: its cost bounds every marker's. The failure
        // count alone can fall to zero, whose plural is longer than "1 failure line".
        let reserve = cost(&marker(n, n, n, all_lines, all_failures))
            .max(cost(&marker(n, n, n, all_lines, 0)));
        let mut spent = 0;
        let mut kept = 0;
        while kept + 1 < units.len() && spent + units[kept].cost + reserve <= room {
            spent += units[kept].cost;
            kept += 1;
        }
        loop {
            let removed = &units[kept..];
            let from = removed[0].from;
            let removed_lines = removed.iter().map(|unit| unit.lines).sum();
            let removed_failures = removed.iter().map(|unit| unit.failures).sum();
            let text = marker(n - from + 1, from, n, removed_lines, removed_failures);
            // Only a `cost` that tells digits apart can make the marker cost more than its
            // reserve: then one unit less is kept, until it fits or nothing is kept.
            if kept > 0 && spent + cost(&text) > room {
                kept -= 1;
                spent -= units[kept].cost;
                continue;
            }
            return Some(Cut {
                kept: kept.checked_sub(1).map_or(0, |last| units[last].end),
                marker: text,
                removed_lines,
                removed_failures,
                kept_failures: all_failures - removed_failures,
                from,
                to: n,
            });
        }
    }
}

/// The units of `output`, as this codec's output of the original whose cleaned lines are
/// `lines` (with their classes `class`); `None` when it does not walk as one.
fn walk(
    lines: &Lines<'_>,
    class: &[Class],
    output: &str,
    cost: &dyn Fn(&str) -> usize,
) -> Option<Vec<Unit>> {
    let n = lines.len();
    let newline = cost("\n");
    let mut units = Vec::new();
    // The original line the next unit starts at, 1-based.
    let mut next = 1;
    // The fold lines of the region being read: how many, and what they cost.
    let mut folds: Option<(usize, usize)> = None;
    // Whether the last unit is a verbatim line.
    let mut after_verbatim = false;
    let mut end = 0;
    for piece in output.split_inclusive('\n') {
        end += piece.len();
        let line = piece.strip_suffix('\n').unwrap_or(piece);
        let line_cost = cost(line) + newline;
        if let Some((from, to)) = region(line) {
            if from != next || to < from || to > n {
                return None;
            }
            let (count, spent) = folds.take().unwrap_or_default();
            after_verbatim = false;
            units.push(Unit {
                end,
                cost: spent + line_cost,
                lines: count + 1,
                failures: 0,
                from,
            });
            next = to + 1;
        } else if is_warnings_marker(line) {
            // The count of a warning's repeats goes with the warning's first line above it.
            let unit = units
                .last_mut()
                .filter(|_| after_verbatim && folds.is_none())?;
            after_verbatim = false;
            unit.end = end;
            unit.cost += line_cost;
            unit.lines += 1;
        } else if line.starts_with("[\u{d7}") && looks_like_own_line(line) {
            let (count, spent) = folds.get_or_insert_default();
            after_verbatim = false;
            *count += 1;
            *spent += line_cost;
        } else {
            if folds.is_some() || next > n || lines.get(next - 1) != line {
                return None;
            }
            units.push(Unit {
                end,
                cost: line_cost,
                lines: 1,
                failures: usize::from(class[next - 1] == Class::Failure),
                from: next,
            });
            after_verbatim = true;
            next += 1;
        }
    }
    (folds.is_none() && next == n + 1 && !units.is_empty()).then_some(units)
}

/// Whether `line` is the count of a warning's repeats this codec writes after the warning's
/// first line: `[×N warnings like this, lines A-B; …]`.
fn is_warnings_marker(line: &str) -> bool {
    line.strip_prefix("[\u{d7}").is_some_and(|rest| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(" warnings like this, lines ")
    })
}

/// The region `A-B` that a marker of this codec closes, `[… O lines omitted, lines A-B: …`.
fn region(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("[\u{2026} ")?;
    let (omitted, rest) = rest
        .split_once(" lines omitted, lines ")
        .or_else(|| rest.split_once(" line omitted, lines "))?;
    let (range, _) = rest.split_once(':')?;
    let (from, to) = range.split_once('-')?;
    let number = |text: &str| {
        text.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| text.parse::<usize>().ok())
            .flatten()
    };
    number(omitted)?;
    Some((number(from)?, number(to)?))
}

/// The cut's marker: `omitted` original lines, `from`-`to`, not shown; `lines` lines of the
/// output removed, `failures` of them failure lines. It is a marker of this codec (a line
/// that [`looks_like_own_line`]), so compressing a text that holds it changes nothing.
fn marker(omitted: usize, from: usize, to: usize, lines: usize, failures: usize) -> String {
    format!(
        "[\u{2026} {} omitted, lines {from}-{to}: cut at max_result_chars, \
         {} of this result not shown; {} omitted; \
         {RECOVERY_TOOL} {{\"lines\":\"{from}-{to}\"}}]",
        counted(omitted, "line", "lines"),
        counted(lines, "line", "lines"),
        counted(failures, "failure line", "failure lines"),
    )
}

#[cfg(test)]
mod tests {
    use super::{marker, region};

    /// "1 lines" was printed for a count of one; the codec still reads its region back.
    #[test]
    fn a_count_of_one_takes_the_singular_and_the_marker_still_reads_back() {
        let one = marker(1, 5, 5, 1, 1);
        assert_eq!(
            one,
            "[\u{2026} 1 line omitted, lines 5-5: cut at max_result_chars, 1 line of this result \
             not shown; 1 failure line omitted; wm_get_result {\"lines\":\"5-5\"}]"
        );
        assert_eq!(region(&one), Some((5, 5)));
        let many = marker(2, 4, 5, 0, 2);
        assert!(
            many.starts_with("[\u{2026} 2 lines omitted, lines 4-5: cut at max_result_chars, 0 lines of this result not shown; 2 failure lines omitted;"),
            "{many}"
        );
        assert_eq!(region(&many), Some((4, 5)));
    }
}
