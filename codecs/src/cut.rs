//! The cut the lossless text codecs (`hits`, `paths`, `table`) offer of their own output
//! ([`parrot_codec_api::Codec::CUT`]): whole units of the codec's grammar kept from the start,
//! and one marker that says what the cut removed in the original's terms.
//!
//! Each of these codecs writes the original's lines in their order, so what a cut keeps from
//! the start of the output stands for the original's first lines, and what it removes is one
//! range of the original, from the first line the kept units do not show to its last line.
//! The marker is the same sentence for all three, its noun the codec's unit:
//!
//! `[… cut at max_result_chars: R of T NOUNS not shown[, in F files], original lines A-B; wm_get_result {"lines":"A-B"}]`
//!
//! `R` of the output's `T` units are not shown (hit lines, paths, rows), the hits among them in
//! `F` files (`hits` only), and `A-B` is the range of the original they are in: the selector
//! `"lines":"A-B"` returns exactly the lines removed. Numbers are plain digits, and a count
//! takes the singular for exactly one, as every marker of the codecs writes them.

use parrot_codec_api::{CutAt, RECOVERY_TOOL, json_string_chars};

use crate::counted::counted;

/// A part of an output that a cut keeps or removes whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Unit {
    /// Where it ends in the output, its last line break included.
    pub(crate) end: usize,
    /// What its lines cost ([`json_string_chars`]), each with its line break.
    pub(crate) cost: usize,
    /// The original lines it stands for: the first is `from`.
    pub(crate) lines: usize,
    /// The first original line (1-based) it stands for.
    pub(crate) from: usize,
    /// How many of the units the marker counts it holds (hit lines, paths, rows).
    pub(crate) counted: usize,
}

/// What a marker says, but the range: `removed` of `total` units named by `noun` (singular,
/// plural), and for `hits` the files they are in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Removed<'a> {
    pub(crate) removed: usize,
    pub(crate) total: usize,
    pub(crate) noun: (&'a str, &'a str),
    pub(crate) files: Option<usize>,
}

/// The marker of a cut that removed `what`, the original lines `from` to `to`.
pub(crate) fn marker(what: Removed<'_>, from: usize, to: usize) -> String {
    let files = match what.files {
        Some(files) => format!(", in {}", counted(files, "file", "files")),
        None => String::new(),
    };
    format!(
        "[\u{2026} cut at max_result_chars: {} of {} not shown{files}, original lines \
         {from}-{to}; {RECOVERY_TOOL} {{\"lines\":\"{from}-{to}\"}}]",
        what.removed,
        counted(what.total, what.noun.0, what.noun.1),
    )
}

/// Cuts an output made of `units` (in order, the last ending at the output's end) whose
/// original has `lines` lines, so that the units kept and the marker after them cost at most
/// `room` ([`json_string_chars`]). `removed` says what the units from the `k`-th on hold (the
/// marker's counts but the range); `largest` is the most it can say, with the largest numbers
/// of each count, for sizing the marker before the cut is chosen.
///
/// At least one unit is removed; when not even the marker fits, nothing is kept and the
/// marker is still given (the host takes it so). `None` when there are no units.
pub(crate) fn cut<'a>(
    units: &[Unit],
    lines: usize,
    room: usize,
    largest: Removed<'a>,
    removed: impl Fn(usize) -> Removed<'a>,
) -> Option<CutAt> {
    units.last()?;
    // Counts of at least 2 take the plural, the longer form, with as many digits as 1.
    let at_least_two = |n: usize| n.max(2);
    let widest = Removed {
        removed: at_least_two(largest.removed),
        total: at_least_two(largest.total),
        files: largest.files.map(at_least_two),
        ..largest
    };
    let most = at_least_two(lines);
    let reserve = json_string_chars(&marker(widest, most, most));
    let mut spent = 0;
    let mut kept = 0;
    while kept + 1 < units.len() && spent + units[kept].cost + reserve <= room {
        spent += units[kept].cost;
        kept += 1;
    }
    loop {
        let text = marker(removed(kept), units[kept].from, lines);
        // The reserve bounds every marker: this only guards against a count over `largest`.
        if kept > 0 && spent + json_string_chars(&text) > room {
            kept -= 1;
            spent -= units[kept].cost;
            continue;
        }
        let end = kept.checked_sub(1).map_or(0, |last| units[last].end);
        return Some(CutAt::new(end, text));
    }
}

/// How many lines `text` has, as the recovery tool numbers them: a last line without a line
/// break is a line too.
pub(crate) fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
        + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The lines of `text`, each with its line break (the last may have none), and where each
/// ends.
pub(crate) fn lines_with_ends(text: &str) -> impl Iterator<Item = (&str, usize)> {
    text.split_inclusive('\n').scan(0, |end, piece| {
        *end += piece.len();
        Some((piece, *end))
    })
}

#[cfg(test)]
mod tests {
    use super::{Removed, Unit, cut, marker};

    #[test]
    fn a_marker_names_the_counts_and_the_range_and_a_count_of_one_takes_the_singular() {
        let rows = [
            (
                Removed {
                    removed: 1234,
                    total: 1500,
                    noun: ("hit line", "hit lines"),
                    files: Some(40),
                },
                "[\u{2026} cut at max_result_chars: 1234 of 1500 hit lines not shown, in 40 \
                 files, original lines 267-1500; wm_get_result {\"lines\":\"267-1500\"}]",
            ),
            (
                Removed {
                    removed: 1,
                    total: 1,
                    noun: ("path", "paths"),
                    files: None,
                },
                "[\u{2026} cut at max_result_chars: 1 of 1 path not shown, original lines \
                 267-1500; wm_get_result {\"lines\":\"267-1500\"}]",
            ),
        ];
        for (what, expected) in rows {
            assert_eq!(marker(what, 267, 1500), expected);
        }
    }

    #[test]
    fn a_cut_keeps_the_units_that_fit_with_the_marker_and_removes_one_at_least() {
        let unit = |k: usize| Unit {
            end: 10 * (k + 1),
            cost: 10,
            lines: 1,
            from: k + 1,
            counted: 1,
        };
        let units: Vec<Unit> = (0..5).map(unit).collect();
        let what = |k: usize| Removed {
            removed: 5 - k,
            total: 5,
            noun: ("row", "rows"),
            files: None,
        };
        let marker_cost = parrot_codec_api::json_string_chars(&marker(what(0), 1, 5));
        for (room, kept) in [
            (0, 0),
            (marker_cost + 9, 0),
            (marker_cost + 10, 10),
            (marker_cost + 35, 30),
            (usize::MAX / 2, 40),
        ] {
            let cut = cut(&units, 5, room, what(0), what).unwrap();
            assert_eq!(cut.kept, kept, "room {room}");
            assert_eq!(cut.marker, marker(what(kept / 10), kept / 10 + 1, 5));
        }
        assert_eq!(cut(&[], 5, 100, what(0), what), None);
    }
}
