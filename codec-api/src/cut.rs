//! A codec's cut of its own output to a size: the capability the host's last rule (CONTRACT §4,
//! rule 11) asks for when a result is over `max_result_chars`, declared with [`Codec::CUT`].

use crate::{Codec, Payload};

/// A codec's cut of its own output ([`Codec::CUT`]): given the `original` it compressed, its
/// `output` for it and a `room` in [`json_string_chars`], where to cut the output and the
/// marker that ends the cut text, or `None` to leave the cut to the host (a text cut at a line
/// break or a character).
///
/// The host takes the cut only when it keeps the rules (CONTRACT §4, rule 11), and otherwise
/// cuts as it cuts any text:
///
/// - `kept` is whole lines of `output`: `0`, or the end of a line break, at most
///   `output.len()`, and less than it (something is removed);
/// - the kept text and the marker together cost at most `room` ([`json_string_chars`]); when
///   not even the marker fits, a cut that keeps nothing and gives the marker alone is taken;
/// - the marker is one line, not empty, and says what the cut removed, with exact counts, and
///   how to get it back (the recovery tool and the selector of the part removed).
///
/// `parrot-codec-test`'s contract check asks a codec's cut of each output at a spread of rooms
/// and fails a cut that breaks these rules, names no `RECOVERY_TOOL {selector}`, panics,
/// answers differently twice, or keeps less at a larger room.
pub type Cut<C> = fn(&C, Payload<'_>, &str, usize) -> Option<CutAt>;

/// Where a codec cuts its output, and the marker that follows the part kept: what a
/// [`Cut`] returns.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::CutAt;
///
/// let output = "a\nb\nc\n";
/// let cut = CutAt::new(2, "[… cut: lines 2-3 not shown]");
/// assert_eq!(&output[..cut.kept], "a\n");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutAt {
    /// How many bytes of the output are kept: whole lines, each with its line break.
    pub kept: usize,
    /// The line that follows them, without a line break: what the cut removed and how to get
    /// it back.
    pub marker: String,
}

impl CutAt {
    /// A cut keeping the first `kept` bytes of the output, then `marker`.
    pub fn new(kept: usize, marker: impl Into<String>) -> CutAt {
        CutAt {
            kept,
            marker: marker.into(),
        }
    }
}

impl CutAt {
    /// The first rule of [`Cut`] this cut of `output` at `room` breaks, or `Ok` when it keeps
    /// them all: the host takes a codec's cut only then (else it cuts the output as text), and
    /// the contract test (`parrot-codec-test`) holds every cut a codec gives to it. The rules,
    /// in the order they are checked: something is removed ([`CutBreak::KeepsAll`]), whole
    /// lines are kept ([`CutBreak::NotWholeLines`]), the marker is not empty
    /// ([`CutBreak::EmptyMarker`]) and is one line ([`CutBreak::MarkerLines`]), and the kept
    /// part and the marker cost at most `room` in [`json_string_chars`] unless nothing is kept
    /// ([`CutBreak::OverRoom`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{CutAt, CutBreak};
    ///
    /// let output = "a\nb\nc\n";
    /// assert_eq!(CutAt::new(2, "[… 2 lines cut]").check(output, 100), Ok(()));
    /// assert_eq!(
    ///     CutAt::new(1, "[… cut]").check(output, 100),
    ///     Err(CutBreak::NotWholeLines { kept: 1 })
    /// );
    /// // Not even the marker fits: a cut that keeps nothing is still taken.
    /// assert_eq!(CutAt::new(0, "[… 3 lines cut]").check(output, 5), Ok(()));
    /// ```
    pub fn check(&self, output: &str, room: usize) -> Result<(), CutBreak> {
        let kept = self.kept;
        if kept >= output.len() {
            return Err(CutBreak::KeepsAll {
                kept,
                len: output.len(),
            });
        }
        if kept > 0 && output.as_bytes()[kept - 1] != b'\n' {
            return Err(CutBreak::NotWholeLines { kept });
        }
        if self.marker.is_empty() {
            return Err(CutBreak::EmptyMarker);
        }
        if self.marker.contains(['\n', '\r']) {
            return Err(CutBreak::MarkerLines);
        }
        // The kept part ends right after a line break inside the output: a character boundary.
        let cost = json_string_chars(&output[..kept]) + json_string_chars(&self.marker);
        if kept > 0 && cost > room {
            return Err(CutBreak::OverRoom { cost });
        }
        Ok(())
    }
}

/// A rule of [`Cut`] that a [`CutAt`] breaks for the output it cuts and the room it was given
/// ([`CutAt::check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CutBreak {
    /// The cut keeps the whole output, or more bytes than it has: a cut removes something.
    KeepsAll {
        /// The bytes it keeps.
        kept: usize,
        /// The output's length in bytes.
        len: usize,
    },
    /// The bytes kept do not end at a line break.
    NotWholeLines {
        /// The bytes it keeps.
        kept: usize,
    },
    /// The marker is empty.
    EmptyMarker,
    /// The marker holds a line break.
    MarkerLines,
    /// The part kept and the marker cost more than the room, and the cut keeps something.
    OverRoom {
        /// What the part kept and the marker cost, in [`json_string_chars`].
        cost: usize,
    },
}

impl std::fmt::Display for CutBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CutBreak::KeepsAll { kept, len } => {
                write!(
                    f,
                    "keeps {kept} bytes of an output of {len}: a cut removes something"
                )
            }
            CutBreak::NotWholeLines { kept } => write!(
                f,
                "keeps {kept} bytes, which end inside a line (a cut keeps whole lines: 0 bytes, or up to a line break)"
            ),
            CutBreak::EmptyMarker => f.write_str(
                "has an empty marker (the marker says what the cut removed and how to get it back)",
            ),
            CutBreak::MarkerLines => f.write_str("has a marker of more than one line"),
            CutBreak::OverRoom { cost } => write!(
                f,
                "keeps text that costs {cost} with its marker, over the room (json_string_chars; only a cut that keeps nothing may give a marker over it)"
            ),
        }
    }
}

impl std::error::Error for CutBreak {}

/// How many code points `text` takes inside a JSON string, as `serde_json` writes it: one per
/// character, two for `"`, `\` and the controls with a short escape (`\b`, `\f`, `\n`, `\r`,
/// `\t`), six for the other controls (`\u00XX`). The unit of a [`Cut`]'s room: the host writes
/// a cut result inside a JSON string, and counts `max_result_chars` so.
///
/// # Examples
///
/// ```
/// assert_eq!(parrot_codec_api::json_string_chars("é\"\n\u{1}"), 1 + 2 + 2 + 6);
/// ```
pub fn json_string_chars(text: &str) -> usize {
    text.bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            // A byte that continues a character: the character counted at its first byte.
            0x80..0xc0 => 0,
            _ => 1,
        })
        .sum()
}

/// The cut codec `C` declares, run: `None` when it declares none.
pub(crate) fn run<C: Codec>(
    codec: &C,
    original: Payload<'_>,
    output: &str,
    room: usize,
) -> Option<CutAt> {
    C::CUT.and_then(|cut| cut(codec, original, output, room))
}
