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
//!
//! [`cut`] itself chooses where to cut any output made of units, with any marker: the `toon`
//! codec's cut, whose marker names rows of a JSON array, uses it too.

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
/// of each count: the marker is sized for them before the cut is chosen, as the `log` codec's
/// is (see [`cut`]).
pub(crate) fn cut_lines<'a>(
    units: &[Unit],
    lines: usize,
    room: usize,
    largest: Removed<'a>,
    removed: impl Fn(usize) -> Removed<'a>,
) -> Option<CutAt> {
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
    let marker_after = |kept: usize| marker(removed(kept), units[kept].from, lines);
    cut(units, room, reserve, marker_after)
}

/// Cuts an output made of `units` (in order, the last ending at the output's end) so that
/// the units kept and the marker after them cost at most `room` ([`json_string_chars`]);
/// `marker_after(k)` is the marker when the first `k` units are kept, and `reserve` what the
/// costliest of them costs: the cut is chosen with the reserve, as the `log` codec's is, and
/// then the units the marker's exact text leaves room for are kept too.
///
/// At least one unit is removed; when not even the marker fits, nothing is kept and the
/// marker is still given (the host takes it so). `None` when there are no units.
pub(crate) fn cut(
    units: &[Unit],
    room: usize,
    reserve: usize,
    marker_after: impl Fn(usize) -> String,
) -> Option<CutAt> {
    units.last()?;
    let mut spent = 0;
    let mut kept = 0;
    while kept + 1 < units.len() && spent + units[kept].cost + reserve <= room {
        spent += units[kept].cost;
        kept += 1;
    }
    // The reserve is a few digits over the marker written: one more unit may fit with it.
    while kept + 1 < units.len()
        && spent + units[kept].cost + json_string_chars(&marker_after(kept + 1)) <= room
    {
        spent += units[kept].cost;
        kept += 1;
    }
    loop {
        let text = marker_after(kept);
        // The reserve bounds every marker: this only guards against a count over it.
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

/// What the tests of the three codecs' cuts share: the captures they cut, the rooms they cut
/// them to, the rules every cut keeps, and the marker read back.
#[cfg(test)]
pub(crate) mod check {
    use parrot_codec_api::{CutAt, json_string_chars};

    /// The captures of `corpus/text` whose names start with `kind` (`hits-`), in name order.
    pub(crate) fn captures(kind: &str) -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/text");
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
            .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(kind))
            .map(|name| {
                let text = std::fs::read_to_string(dir.join(&name)).unwrap();
                (name, text)
            })
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no {kind}* capture in {}", dir.display());
        files
    }

    /// Rooms to cut `output` to: none, less than a marker, a few sizes, and one less than it
    /// all.
    pub(crate) fn rooms(output: &str) -> Vec<usize> {
        let all = json_string_chars(output);
        let mut rooms = vec![0, 100, 250, 400, 700, 1_000, 2_000, 4_000, 9_000, 20_000];
        rooms.retain(|&room| room < all);
        rooms.extend([all / 3, all / 2, all - 1]);
        rooms
    }

    /// The numbers of a marker of these codecs: `R of T … not shown[, in F files], original
    /// lines A-B; … {"lines":"A-B"}]`.
    #[derive(Debug, PartialEq, Eq)]
    pub(crate) struct Marker {
        pub(crate) removed: usize,
        pub(crate) total: usize,
        pub(crate) files: Option<usize>,
        pub(crate) from: usize,
        pub(crate) to: usize,
    }

    /// Reads a marker back, asserting its form: its noun is `noun` (singular, plural).
    pub(crate) fn read(marker: &str, noun: (&str, &str)) -> Marker {
        let number = |text: &str| -> usize {
            text.parse()
                .unwrap_or_else(|_| panic!("{text:?} in {marker}"))
        };
        let rest = marker
            .strip_prefix("[\u{2026} cut at max_result_chars: ")
            .expect(marker);
        let (removed, rest) = rest.split_once(" of ").expect(marker);
        let (total, rest) = rest.split_once(' ').expect(marker);
        let (total, removed) = (number(total), number(removed));
        let name = if total == 1 { noun.0 } else { noun.1 };
        let rest = rest
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(" not shown"))
            .expect(marker);
        let (files, rest) = match rest.strip_prefix(", in ") {
            Some(rest) => {
                let (files, rest) = rest.split_once(' ').expect(marker);
                let files = number(files);
                let name = if files == 1 { "file" } else { "files" };
                (Some(files), rest.strip_prefix(name).expect(marker))
            }
            None => (None, rest),
        };
        let rest = rest.strip_prefix(", original lines ").expect(marker);
        let (range, selector) = rest.split_once("; ").expect(marker);
        assert_eq!(
            selector,
            format!("wm_get_result {{\"lines\":\"{range}\"}}]"),
            "{marker}"
        );
        let (from, to) = range.split_once('-').expect(marker);
        Marker {
            removed,
            total,
            files,
            from: number(from),
            to: number(to),
        }
    }

    /// Asserts the rules of a cut (`parrot_codec_api::Cut`): whole lines of `output` and less
    /// than all of it, within `room` with the marker (or nothing kept), a marker of one line.
    pub(crate) fn assert_rules(output: &str, cut: &CutAt, room: usize, name: &str) {
        assert_eq!(
            cut.check(output, room),
            Ok(()),
            "{name}, room {room}: {:?}",
            cut.marker
        );
    }

    /// Asserts what a cut of any codec of these holds on `original` and `output` (its output
    /// of `original`, or a text that is not, for which the cut may be `None`), at rooms from
    /// nothing to all but one: the rules of a cut, a marker that reads back with `noun`, and
    /// a range that ends at the original's last line and starts right after the lines kept.
    /// Then the same on `output` cut short at a line break and at every 7th character, which
    /// the codec's cut must refuse or cut by the rules, never panic on.
    pub(crate) fn assert_cuts_hold(
        original: &str,
        output: &str,
        noun: (&str, &str),
        cut: impl Fn(&str, usize) -> Option<CutAt>,
    ) {
        let all = json_string_chars(output);
        for room in [0, 50, 150, 400, all / 2, all.saturating_sub(1)] {
            let Some(cut) = cut(output, room) else {
                continue;
            };
            assert_rules(output, &cut, room, original);
            let marker = read(&cut.marker, noun);
            assert_eq!(marker.to, super::line_count(original), "{}", cut.marker);
            assert!(
                marker.from >= 1 && marker.from <= marker.to,
                "{}",
                cut.marker
            );
        }
        let shorter = output
            .char_indices()
            .step_by(7)
            .map(|(at, _)| at)
            .chain(output.rfind('\n'));
        for end in shorter {
            let text = &output[..end];
            if let Some(cut) = cut(text, 200) {
                assert_rules(text, &cut, 200, original);
            }
        }
    }

    /// The first `n` lines of `text`, each with its line break.
    pub(crate) fn first_lines(text: &str, n: usize) -> String {
        text.split_inclusive('\n').take(n).collect()
    }

    /// Lines `from` to `to` of `text` (1-based, inclusive), as the selector `"lines":"A-B"`
    /// returns them, each with its line break.
    pub(crate) fn lines(text: &str, from: usize, to: usize) -> String {
        text.split_inclusive('\n')
            .skip(from - 1)
            .take(to + 1 - from)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Removed, Unit, cut_lines, marker};

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
            let cut = cut_lines(&units, 5, room, what(0), what).unwrap();
            assert_eq!(cut.kept, kept, "room {room}");
            assert_eq!(cut.marker, marker(what(kept / 10), kept / 10 + 1, 5));
        }
        assert_eq!(cut_lines(&[], 5, 100, what(0), what), None);
    }
}
