//! The codec contract, checked on one input at every level and payload kind.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use parrot_codec_api::{
    Codec, CutAt, CutBreak, DynCodec, Level, Outcome, Params, Payload, PayloadKind, RECOVERY_TOOL,
    build, json_string_chars,
};

/// The longest input or output a [`Violation`]'s message shows, in characters; the fields hold
/// the whole text.
const SHOWN_CHARS: usize = 300;

/// The contract check of one codec: what [`Contract::check`] holds it to, on any input.
///
/// For each level in [`Level::ALL`] and each payload kind the host could hand it the input as
/// (text always; JSON when the input is JSON the host accepts: valid, no object with two
/// members of one name, at most 512 levels deep), the codec:
///
/// 1. does not panic, in [`DynCodec::compress`] or [`DynCodec::expand`];
/// 2. does not fail: a payload it cannot use is [`Outcome::Unchanged`];
/// 3. is deterministic: the same outcome twice;
/// 4. passes the payload through at [`Level::None`];
/// 5. returns an output strictly smaller (in bytes) than its input;
/// 6. is lossy only at a level that allows loss ([`Level::allows_loss`]);
/// 7. returns JSON for a JSON payload, unless it declares text output
///    ([`DynCodec::text_output`]: TOON, CSV, a table);
/// 8. offers an inverse for a lossless outcome ([`DynCodec::expands`]), which gives the input
///    back: a text payload exactly, byte for byte; a JSON payload as an equal JSON value
///    (numbers by their exact text, so `1`, `1.0` and `1e0` differ; strings by their decoded
///    value; members in any order; a member whose value is `null` counts as absent when the
///    codec declares it ([`CodecMeta::null_members_absent`](parrot_codec_api::CodecMeta::null_members_absent)); the host's verification judges
///    with the same [`CodecMeta::gives_back`](parrot_codec_api::CodecMeta::gives_back));
/// 9. says `lossy` exactly: a lossy outcome that its inverse expands back to the input is a
///    lossless outcome mislabelled;
/// 10. when it declares a cut of its own output ([`DynCodec::cuts`], [`Codec::CUT`]), cuts each
///     output it returned so that the host takes the cut ([`Rule::Cut`], by [`CutRule`]).
///
/// # The cut
///
/// The host asks a codec's cut for its output of the whole input when the result is over
/// `max_result_chars`, with the room left for the cut text and its marker (CONTRACT §4, rule
/// 11), and takes the cut only when it keeps the rules of
/// [`Cut`](parrot_codec_api::Cut). The contract asks the cut of every output the codec
/// returned, for that input as that payload kind, at a spread of rooms in
/// [`json_string_chars`], the output costing `C`:
///
/// - `0`, `1` and `16`: rooms a marker does not fit in, where only a cut that keeps nothing is
///   taken;
/// - `100`: about a marker's size, where a cut keeps nothing or a first line;
/// - `C / 10`, `C / 3`, `C / 2` and `9 * C / 10`: cuts that keep part of the output;
/// - `C - 1`: the largest room the whole output does not fit;
/// - `C`: the whole output fits, yet the cut still removes something (the host's room is what
///   is left beside the pointer, so it may hold the whole output).
///
/// At each room it asks twice. A cut that returns `None` leaves the cut to the host, which
/// cuts the output as text: the contract allows that. The cut breaks the contract when it
/// panics ([`CutRule::Panicked`]), answers differently the second time
/// ([`CutRule::NotDeterministic`]), or returns one the host would not take: its kept part is the
/// whole output ([`CutRule::KeepsAll`]) or does not end at a line break
/// ([`CutRule::NotWholeLines`]); the kept part and the marker cost more than the room while
/// the cut keeps something ([`CutRule::OverRoom`]); the marker is empty
/// ([`CutRule::EmptyMarker`]) or more than one line ([`CutRule::MarkerLines`]). Beyond what
/// the host checks, the marker names the recovery tool and a selector (`wm_get_result {…}`:
/// [`CutRule::NoRecovery`]), and a larger room never keeps less ([`CutRule::NotMonotone`]).
///
/// A codec may decline some outputs and not others; one that declines every room on an
/// output of several lines offers a cut that never applies to it, which is allowed (the text
/// cut is always there) but worth knowing. [`Contract::cuts_every_output`] holds a codec whose
/// grammar always has a boundary to that: then declining is [`Rule::CutDeclined`].
///
/// # Examples
///
/// ```
/// use parrot_codec_test::Contract;
///
/// use parrot_codec_api::{Params, build};
/// use parrot_codecs::JsonCompact;
///
/// let codec: JsonCompact = build(Params::empty()).unwrap();
/// // json_compact drops null members, and declares that it does.
/// let contract = Contract::new(&codec);
/// assert_eq!(contract.check(r#"{"a": 1, "b": null}"#), Ok(()));
/// ```
#[derive(Clone, Copy)]
pub struct Contract<'c> {
    codec: &'c dyn DynCodec,
    /// Whether declining to cut an output of several lines is a violation
    /// ([`Contract::cuts_every_output`]).
    every_output_cut: bool,
}

impl fmt::Debug for Contract<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contract")
            .field("codec", &self.codec.name())
            .field("every_output_cut", &self.every_output_cut)
            .finish()
    }
}

impl<'c> Contract<'c> {
    /// The contract of `codec`, judged by what its metadata declares.
    pub fn new(codec: &'c dyn DynCodec) -> Contract<'c> {
        Contract {
            codec,
            every_output_cut: false,
        }
    }

    /// This contract, and a codec that declares a cut cuts every output of more than one line
    /// at some room of those the contract asks at (see [`Contract`]'s *The cut*): declining at
    /// every room is [`Rule::CutDeclined`]. For a codec whose output always has a boundary its
    /// cut can keep up to, such as the `log` codec's units or a CSV's records.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Params, build};
    /// use parrot_codec_test::Contract;
    ///
    /// let log: parrot_codecs::Log = build(Params::empty()).unwrap();
    /// let input: String = (0..60).map(|i| format!("   Compiling crate_{i} v0.1.{i}\n")).collect();
    /// Contract::new(&log).cuts_every_output().check(&input).unwrap();
    /// ```
    #[must_use]
    pub fn cuts_every_output(self) -> Contract<'c> {
        Contract {
            every_output_cut: true,
            ..self
        }
    }

    /// Checks the contract on `input` at every level, as a text payload and, when `input` is
    /// JSON the host accepts, as a JSON payload.
    ///
    /// # Errors
    ///
    /// The first [`Violation`] found, naming the [`Rule`] broken, the level, the payload kind
    /// and the input.
    pub fn check(&self, input: &str) -> Result<(), Violation> {
        let kinds: &[PayloadKind] = if crate::json::is_json(input) {
            &[PayloadKind::Json, PayloadKind::Text]
        } else {
            &[PayloadKind::Text]
        };
        for &kind in kinds {
            for level in Level::ALL {
                self.check_one(input, kind, level)?;
            }
        }
        Ok(())
    }

    /// [`Contract::check`], panicking with the violation's message: for tests and fuzz
    /// targets.
    ///
    /// # Panics
    ///
    /// When the codec breaks the contract on `input`.
    #[track_caller]
    pub fn assert(&self, input: &str) {
        if let Err(violation) = self.check(input) {
            panic!("{violation}");
        }
    }

    fn check_one(&self, input: &str, kind: PayloadKind, level: Level) -> Result<(), Violation> {
        let payload = Payload::new(input, kind);
        let violation = |rule: Rule, output: Option<&str>| Violation {
            codec: self.codec.name().to_owned(),
            rule,
            level,
            kind,
            input: input.to_owned(),
            output: output.map(str::to_owned),
        };
        let outcome = self
            .compress(payload, level)
            .map_err(|rule| violation(rule, None))?;
        let again = self
            .compress(payload, level)
            .map_err(|rule| violation(rule, None))?;
        if outcome != again {
            return Err(violation(Rule::NotDeterministic, outcome.payload()));
        }
        let Outcome::Changed {
            payload: out,
            lossy,
        } = outcome
        else {
            return Ok(());
        };
        self.check_output(input, kind, level, &out, lossy)
            .and_then(|()| self.check_cut(payload, &out))
            .map_err(|rule| violation(rule, Some(&out)))
    }

    /// Rules 4 to 9 on the output `out` the codec returned for `input`.
    fn check_output(
        &self,
        input: &str,
        kind: PayloadKind,
        level: Level,
        out: &str,
        lossy: bool,
    ) -> Result<(), Rule> {
        if level == Level::None {
            return Err(Rule::ChangedAtNone);
        }
        if out.len() >= input.len() {
            return Err(Rule::NotSmaller {
                input: input.len(),
                output: out.len(),
            });
        }
        if lossy && !level.allows_loss() {
            return Err(Rule::LossyAtLevel);
        }
        if kind == PayloadKind::Json && !self.codec.text_output() && !crate::json::is_json(out) {
            return Err(Rule::NotJson);
        }
        if lossy && !self.codec.expands() {
            return Ok(());
        }
        if !lossy && !self.codec.expands() {
            return Err(Rule::NoInverse {
                error: "the codec offers no inverse (DynCodec::expands is false)".to_owned(),
            });
        }
        let expanded = match catch_unwind(AssertUnwindSafe(|| self.codec.expand(out))) {
            Ok(expanded) => expanded,
            Err(panic) => {
                return Err(Rule::Panicked {
                    call: "expand",
                    message: panic_message(panic.as_ref()),
                });
            }
        };
        match (lossy, expanded) {
            (false, Err(error)) => Err(Rule::NoInverse {
                error: error.to_string(),
            }),
            (false, Ok(expanded)) if !self.same(input, &expanded, kind) => {
                Err(Rule::ExpandsElsewhere { expanded })
            }
            (true, Ok(expanded)) if self.same(input, &expanded, kind) => Err(Rule::LossyButExpands),
            _ => Ok(()),
        }
    }

    /// Rule 10: the codec's cut of `output`, its output for `original`, asked at each of
    /// [`rooms`] twice, is one the host takes (see [`Contract`]'s *The cut*).
    fn check_cut(&self, original: Payload<'_>, output: &str) -> Result<(), Rule> {
        if !self.codec.cuts() {
            return Ok(());
        }
        // The room and what was kept there, of the cut that kept the most so far.
        let mut most: Option<(usize, usize)> = None;
        for room in rooms(json_string_chars(output)) {
            let broken = |broken: CutRule| Rule::Cut {
                room,
                broken: Box::new(broken),
            };
            let cut = self.cut(original, output, room).map_err(broken)?;
            if self.cut(original, output, room).map_err(broken)? != cut {
                return Err(broken(CutRule::NotDeterministic));
            }
            let Some(cut) = cut else { continue };
            if let Some(rule) = broken_rule(output, &cut, room) {
                return Err(broken(rule));
            }
            match most {
                Some((smaller_room, kept_there)) if kept_there > cut.kept => {
                    return Err(broken(CutRule::NotMonotone {
                        kept: cut.kept,
                        smaller_room,
                        kept_there,
                    }));
                }
                _ => most = Some((room, cut.kept)),
            }
        }
        let lines = output.lines().count();
        if most.is_none() && self.every_output_cut && lines > 1 {
            return Err(Rule::CutDeclined { lines });
        }
        Ok(())
    }

    /// One call of the codec's cut, a panic caught and returned as the rule it breaks.
    fn cut(
        &self,
        original: Payload<'_>,
        output: &str,
        room: usize,
    ) -> Result<Option<CutAt>, CutRule> {
        catch_unwind(AssertUnwindSafe(|| self.codec.cut(original, output, room))).map_err(|panic| {
            CutRule::Panicked {
                message: panic_message(panic.as_ref()),
            }
        })
    }

    /// One compression, a panic caught and a failure returned as the rule it breaks.
    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, Rule> {
        match catch_unwind(AssertUnwindSafe(|| self.codec.compress(payload, level))) {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(error)) => Err(Rule::Failed {
                error: error.to_string(),
            }),
            Err(panic) => Err(Rule::Panicked {
                call: "compress",
                message: panic_message(panic.as_ref()),
            }),
        }
    }

    /// Whether `expanded` gives `input` back, as the payload kind counts it.
    fn same(&self, input: &str, expanded: &str, kind: PayloadKind) -> bool {
        self.codec.meta().gives_back(kind, input, expanded)
    }
}

/// The rooms a cut is asked at, smallest first, for an output that costs `cost`
/// ([`json_string_chars`]): see [`Contract`]'s *The cut*.
fn rooms(cost: usize) -> Vec<usize> {
    let mut rooms = vec![
        0,
        1,
        16,
        100,
        cost / 10,
        cost / 3,
        cost / 2,
        cost * 9 / 10,
        cost.saturating_sub(1),
        cost,
    ];
    rooms.sort_unstable();
    rooms.dedup();
    rooms
}

/// The rule `cut` of `output` at `room` breaks, of those the host checks before it takes a
/// codec's cut (the interface's [`CutAt::check`], which the host's stage calls) and those a
/// marker keeps; `None` when it keeps them all.
fn broken_rule(output: &str, cut: &CutAt, room: usize) -> Option<CutRule> {
    if let Err(broken) = cut.check(output, room) {
        let marker = cut.marker.clone();
        return Some(match broken {
            CutBreak::KeepsAll { kept, len } => CutRule::KeepsAll { kept, len },
            CutBreak::NotWholeLines { kept } => CutRule::NotWholeLines { kept },
            CutBreak::EmptyMarker => CutRule::EmptyMarker,
            CutBreak::MarkerLines => CutRule::MarkerLines { marker },
            CutBreak::OverRoom { cost } => CutRule::OverRoom { cost },
            // A rule added to the interface's check, not yet named here.
            other => CutRule::Other {
                rule: other.to_string(),
            },
        });
    }
    let marker = &cut.marker;
    if !marker.contains(&format!("{RECOVERY_TOOL} {{")) {
        return Some(CutRule::NoRecovery {
            marker: marker.clone(),
        });
    }
    None
}

/// Checks `codec`'s contract on `input` (see [`Contract`]), JSON outcomes compared exactly.
///
/// # Errors
///
/// The first [`Violation`] found.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Params, build};
///
/// let codec: parrot_codecs::Columnar = build(Params::empty()).unwrap();
/// let rows = r#"[{"id": 1, "ok": true}, {"id": 2, "ok": true}, {"id": 3, "ok": false}]"#;
/// parrot_codec_test::check(&codec, rows).unwrap();
/// ```
pub fn check(codec: &dyn DynCodec, input: &str) -> Result<(), Violation> {
    Contract::new(codec).check(input)
}

/// Checks `codec`'s contract on every input (see [`Contract`]), collecting every violation
/// rather than stopping at the first: a test's one assertion over a whole folder of inputs.
///
/// # Errors
///
/// Every [`Violation`] found, each with the name of its input, in the inputs' order.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Params, build};
///
/// let codec: parrot_codecs::Toon = build(Params::empty()).unwrap();
/// let inputs = [("rows", r#"[{"a": 1}, {"a": 2}]"#), ("text", "not JSON")];
/// parrot_codec_test::check_all(&codec, inputs).unwrap();
/// ```
pub fn check_all<'i, N: fmt::Display>(
    codec: &dyn DynCodec,
    inputs: impl IntoIterator<Item = (N, &'i str)>,
) -> Result<(), Vec<(String, Violation)>> {
    let contract = Contract::new(codec);
    let violations: Vec<(String, Violation)> = inputs
        .into_iter()
        .filter_map(|(name, input)| {
            contract
                .check(input)
                .err()
                .map(|violation| (name.to_string(), violation))
        })
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations)
    }
}

/// Holds the contract of codec `C`, built with each params table of `params` (JSON text), on
/// every file of the folder `corpus` (see [`crate::inputs`]) and on `made`: inputs written to
/// make the codec act, so that the contract is held on its outcomes and not only on its
/// passthroughs. A plugin's contract test beside its code is this one call.
///
/// # Panics
///
/// When a params table is not JSON or `C` refuses it, when `corpus` cannot be read or holds no
/// input; else with every violation, each naming its params and its input.
///
/// # Examples
///
/// ```
/// let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
/// let made = vec![("a run of rows".to_owned(), r#"[{"a": 1}, {"a": 1}, {"a": 2}]"#.to_owned())];
/// parrot_codec_test::assert_contract_on::<parrot_codecs::Columnar>(&["{}", r#"{"min_rows": 2}"#], corpus, made);
/// ```
#[track_caller]
pub fn assert_contract_on<C: Codec>(
    params: &[&str],
    corpus: impl AsRef<std::path::Path>,
    made: Vec<(String, String)>,
) {
    let corpus = corpus.as_ref();
    let mut inputs = crate::inputs(corpus).unwrap_or_else(|err| panic!("{err}"));
    assert!(!inputs.is_empty(), "no input in {}", corpus.display());
    inputs.extend(made);
    let mut lines = Vec::new();
    for params in params {
        let parsed = Params::from_json(params)
            .unwrap_or_else(|err| panic!("params {params}: {}", err.message()));
        let codec: C = build(parsed)
            .unwrap_or_else(|err| panic!("{} refuses params {params}: {err}", C::NAME));
        let checked = inputs.iter().map(|(name, text)| (name, text.as_str()));
        if let Err(violations) = check_all(&codec, checked) {
            lines.extend(
                violations
                    .iter()
                    .map(|(input, violation)| format!("{params} on {input}: {violation}")),
            );
        }
    }
    assert!(lines.is_empty(), "{}", lines.join("\n\n"));
}

/// [`check`], panicking with the violation's message: for tests and fuzz targets.
///
/// # Panics
///
/// When `codec` breaks the contract on `input`.
#[track_caller]
pub fn assert_contract(codec: &dyn DynCodec, input: &str) {
    Contract::new(codec).assert(input);
}

/// A broken rule of the codec contract: which rule, where, and on what.
///
/// Its message names the codec, the level, the payload kind and the rule, then shows the
/// input and the output (each cut at 300 characters; the fields hold them whole).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violation {
    /// The codec's name.
    pub codec: String,
    /// The rule broken.
    pub rule: Rule,
    /// The level of the call that broke it.
    pub level: Level,
    /// The kind of payload the input was given as.
    pub kind: PayloadKind,
    /// The input, whole.
    pub input: String,
    /// The codec's output, when it returned one.
    pub output: Option<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            PayloadKind::Json => "JSON",
            PayloadKind::Text => "text",
        };
        write!(
            f,
            "codec \"{}\" at {} on a {kind} payload: {}\n  input ({} bytes): {}",
            self.codec,
            self.level,
            self.rule,
            self.input.len(),
            Shown(&self.input)
        )?;
        if let Some(output) = &self.output {
            write!(f, "\n  output ({} bytes): {}", output.len(), Shown(output))?;
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

/// The rules of the codec contract (see [`Contract`]), each as a [`Violation`] names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rule {
    /// The codec panicked.
    #[error("{call} panicked: {message}")]
    Panicked {
        /// `compress` or `expand`.
        call: &'static str,
        /// The panic's message.
        message: String,
    },
    /// `compress` returned an error; a payload a codec cannot use is `Unchanged`.
    #[error("compress failed (a payload the codec cannot use is Outcome::Unchanged): {error}")]
    Failed {
        /// The error's message.
        error: String,
    },
    /// Two calls with the same payload and level gave different outcomes.
    #[error("not deterministic: a second call gave another outcome")]
    NotDeterministic,
    /// The payload changed at `none`, which is a passthrough.
    #[error("changed at none, which passes the payload through")]
    ChangedAtNone,
    /// The output is not strictly smaller than the input.
    #[error("output of {output} bytes is not smaller than the input of {input}")]
    NotSmaller {
        /// The input's length in bytes.
        input: usize,
        /// The output's length in bytes.
        output: usize,
    },
    /// A lossy outcome at a level that allows no loss.
    #[error("lossy at a level that allows only lossless outcomes")]
    LossyAtLevel,
    /// The output for a JSON payload is not JSON, and the codec does not declare text output.
    #[error(
        "output for a JSON payload is not JSON (a codec that writes another format says so with Codec::TEXT_OUTPUT)"
    )]
    NotJson,
    /// A lossless outcome the codec cannot expand.
    #[error("a lossless outcome has no inverse (declare one with Codec::INVERSE): {error}")]
    NoInverse {
        /// Why expanding failed.
        error: String,
    },
    /// A lossless outcome expands to something other than the input.
    #[error("a lossless outcome expands to something else: {}", Shown(expanded))]
    ExpandsElsewhere {
        /// What the codec's inverse gave.
        expanded: String,
    },
    /// A lossy outcome expands back to the input: it was lossless.
    #[error("claims loss, but its inverse gives the input back (lossy must be exact)")]
    LossyButExpands,
    /// The codec's cut of its output ([`DynCodec::cut`]), asked at `room`, is one the host does
    /// not take, or breaks another rule of a cut.
    #[error("its cut to a room of {room} {broken}")]
    Cut {
        /// The room the cut was asked for, in [`json_string_chars`].
        room: usize,
        /// The rule of a cut it breaks (boxed, so that a [`Violation`] stays small to return).
        broken: Box<CutRule>,
    },
    /// The codec declares a cut, but leaves every cut of an output of several lines to the
    /// host: reported only by a contract made with [`Contract::cuts_every_output`].
    #[error(
        "declares a cut, but cuts this output of {lines} lines at no room (each cut was None, left to the host)"
    )]
    CutDeclined {
        /// The output's lines.
        lines: usize,
    },
}

/// The rules a codec's cut of its own output keeps ([`parrot_codec_api::Cut`], CONTRACT §4,
/// rule 11), each as a [`Rule::Cut`] names it. The host takes a cut only when it keeps
/// [`CutRule::KeepsAll`] to [`CutRule::MarkerLines`] (a panic it catches, and cuts as text);
/// the contract holds a cut to all of them, so that a cut it passes is one the host takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CutRule {
    /// The cut panicked.
    #[error("panicked: {message}")]
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// Two calls at the same room gave different cuts.
    #[error("is not deterministic: a second call gave another cut")]
    NotDeterministic,
    /// The cut keeps the whole output, or more bytes than it has.
    #[error("keeps {kept} bytes of an output of {len}: a cut removes something")]
    KeepsAll {
        /// The bytes it keeps.
        kept: usize,
        /// The output's length in bytes.
        len: usize,
    },
    /// The bytes kept do not end at a line break.
    #[error(
        "keeps {kept} bytes, which end inside a line (a cut keeps whole lines: 0 bytes, or up to a line break)"
    )]
    NotWholeLines {
        /// The bytes it keeps.
        kept: usize,
    },
    /// The part kept and the marker cost more than the room, and the cut keeps something.
    #[error(
        "keeps text that costs {cost} with its marker, over the room (json_string_chars; only a cut that keeps nothing may give a marker over it)"
    )]
    OverRoom {
        /// What the part kept and the marker cost, in [`json_string_chars`].
        cost: usize,
    },
    /// The marker is empty.
    #[error("has an empty marker (the marker says what the cut removed and how to get it back)")]
    EmptyMarker,
    /// The marker holds a line break.
    #[error("has a marker of more than one line: {}", Shown(marker))]
    MarkerLines {
        /// The marker.
        marker: String,
    },
    /// A rule of the interface's check ([`parrot_codec_api::CutAt::check`]) that this crate
    /// does not name yet.
    #[error("{rule}")]
    Other {
        /// The rule broken, as the interface says it.
        rule: String,
    },
    /// The marker does not name the recovery tool with a selector.
    #[error(
        "has a marker that does not say how to get the part removed back (`{} {{…}}`, the recovery tool and a selector): {}",
        RECOVERY_TOOL,
        Shown(marker)
    )]
    NoRecovery {
        /// The marker.
        marker: String,
    },
    /// The cut keeps less than it keeps at a smaller room.
    #[error(
        "keeps {kept} bytes, fewer than the {kept_there} it keeps at the smaller room {smaller_room} (a larger room keeps at least as much)"
    )]
    NotMonotone {
        /// The bytes it keeps at this room.
        kept: usize,
        /// The smaller room.
        smaller_room: usize,
        /// The bytes it keeps there.
        kept_there: usize,
    },
}

/// A text as a message shows it: quoted, at most [`SHOWN_CHARS`] characters.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(SHOWN_CHARS) {
            Some((end, _)) => write!(f, "{:?}… (cut)", &self.0[..end]),
            None => write!(f, "{:?}", self.0),
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use parrot_codec_api::{CodecError, CodecMeta};

    use super::*;

    type Compress = fn(Payload<'_>, Level) -> Result<Outcome, CodecError>;
    type Expand = fn(&str) -> Result<String, CodecError>;

    /// A codec made of two functions, to break one rule at a time.
    struct Fake {
        compress: Compress,
        expand: Option<Expand>,
        text_output: bool,
        /// Declares that null members count as absent.
        nulls_absent: bool,
        /// Every other call answers `Unchanged`.
        flaky: bool,
        calls: AtomicU64,
    }

    /// Metadata is declared only through a [`Codec`] impl: one marker type per flag pair.
    struct Marker<const EXPANDS: bool, const TEXT_OUTPUT: bool, const NULLS: bool>;

    impl<const EXPANDS: bool, const TEXT_OUTPUT: bool, const NULLS: bool> parrot_codec_api::Codec
        for Marker<EXPANDS, TEXT_OUTPUT, NULLS>
    {
        const NAME: &'static str = "fake";
        const INVERSE: Option<parrot_codec_api::Inverse<Self>> = if EXPANDS {
            Some(|_, payload| Ok(payload.to_owned()))
        } else {
            None
        };
        const TEXT_OUTPUT: bool = TEXT_OUTPUT;
        const NULL_MEMBERS_ABSENT: bool = NULLS;

        fn new(_: &mut parrot_codec_api::Params) -> Result<Self, CodecError> {
            Ok(Marker)
        }

        fn compress(&self, _: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
            Ok(Outcome::Unchanged)
        }
    }

    impl DynCodec for Fake {
        fn meta(&self) -> CodecMeta {
            match (self.expand.is_some(), self.text_output, self.nulls_absent) {
                (false, false, _) => CodecMeta::of::<Marker<false, false, false>>(),
                (false, true, _) => CodecMeta::of::<Marker<false, true, false>>(),
                (true, false, false) => CodecMeta::of::<Marker<true, false, false>>(),
                (true, false, true) => CodecMeta::of::<Marker<true, false, true>>(),
                (true, true, _) => CodecMeta::of::<Marker<true, true, false>>(),
            }
        }

        fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
            if self.flaky && self.calls.fetch_add(1, Ordering::Relaxed) % 2 == 1 {
                return Ok(Outcome::Unchanged);
            }
            (self.compress)(payload, level)
        }

        fn expand(&self, payload: &str) -> Result<String, CodecError> {
            (self.expand.expect("called only when expands"))(payload)
        }
    }

    fn fake(compress: Compress, expand: Option<Expand>, text_output: bool) -> Fake {
        Fake {
            compress,
            expand,
            text_output,
            nulls_absent: false,
            flaky: false,
            calls: AtomicU64::new(0),
        }
    }

    /// `{"a": 1, "b": 2}` written compactly, losslessly, from minimal up.
    fn compact(payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        Ok(match (payload.text(), level) {
            (_, Level::None) => Outcome::Unchanged,
            (r#"{"a": 1, "b": 2}"#, _) if payload.is_json() => {
                Outcome::lossless(r#"{"a":1,"b":2}"#)
            }
            _ => Outcome::Unchanged,
        })
    }

    fn inverse(_: &str) -> Result<String, CodecError> {
        Ok(r#"{"b":2,"a":1}"#.to_owned())
    }

    fn wrong_inverse(_: &str) -> Result<String, CodecError> {
        Ok(r#"{"a":1,"b":2.0}"#.to_owned())
    }

    fn failing_inverse(_: &str) -> Result<String, CodecError> {
        Err(CodecError::invalid_input("garbled"))
    }

    fn panicking_inverse(_: &str) -> Result<String, CodecError> {
        panic!("inverse exploded")
    }

    fn panics(_: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
        panic!("compress exploded")
    }

    fn fails(_: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
        Err(CodecError::invalid_input("no"))
    }

    fn at_none(_: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
        Ok(Outcome::lossy("{}"))
    }

    fn grows(payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        Ok(match level {
            Level::None => Outcome::Unchanged,
            _ => Outcome::lossless(format!("{} ", payload.text())),
        })
    }

    fn lossy_everywhere(_: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        Ok(match level {
            Level::None => Outcome::Unchanged,
            _ => Outcome::lossy("{}"),
        })
    }

    fn lossy_but_exact(payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        Ok(match compact(payload, level)? {
            Outcome::Changed { payload, .. } if level.allows_loss() => Outcome::lossy(payload),
            _ => Outcome::Unchanged,
        })
    }

    fn toon_like(payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        Ok(match (payload.is_json(), level) {
            (true, Level::Minimal) => Outcome::lossless("a: 1\nb: 2"),
            _ => Outcome::Unchanged,
        })
    }

    fn toon_inverse(_: &str) -> Result<String, CodecError> {
        Ok(r#"{"a": 1, "b": 2}"#.to_owned())
    }

    /// Text lines deduplicated: `x\nx\nx` as `x*3`, given as text only.
    fn dedup(payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        Ok(match (payload.kind(), level, payload.text()) {
            (PayloadKind::Text, Level::Minimal, "x\nx\nx") => Outcome::lossless("x*3"),
            _ => Outcome::Unchanged,
        })
    }

    fn dedup_inverse(_: &str) -> Result<String, CodecError> {
        Ok("x\nx\nx".to_owned())
    }

    fn dedup_almost(_: &str) -> Result<String, CodecError> {
        Ok("x\nx\nx\n".to_owned())
    }

    const JSON: &str = r#"{"a": 1, "b": 2}"#;

    #[test]
    fn each_rule_is_found_on_the_call_that_breaks_it() {
        /// The rule broken, where: `None` when the codec keeps the contract.
        type Found = Option<(Rule, Level, PayloadKind)>;
        let rows: Vec<(&str, Fake, &str, Found)> = vec![
            (
                "keeps the contract",
                fake(compact, Some(inverse), false),
                JSON,
                None,
            ),
            (
                "panics",
                fake(panics, None, false),
                JSON,
                Some((
                    Rule::Panicked {
                        call: "compress",
                        message: "compress exploded".into(),
                    },
                    Level::None,
                    PayloadKind::Json,
                )),
            ),
            (
                "fails",
                fake(fails, None, false),
                "x",
                Some((
                    Rule::Failed {
                        error: CodecError::invalid_input("no").to_string(),
                    },
                    Level::None,
                    PayloadKind::Text,
                )),
            ),
            (
                "not deterministic",
                Fake {
                    flaky: true,
                    ..fake(compact, Some(inverse), false)
                },
                JSON,
                Some((Rule::NotDeterministic, Level::Minimal, PayloadKind::Json)),
            ),
            (
                "changes at none",
                fake(at_none, None, false),
                JSON,
                Some((Rule::ChangedAtNone, Level::None, PayloadKind::Json)),
            ),
            (
                "grows",
                fake(grows, Some(inverse), false),
                JSON,
                Some((
                    Rule::NotSmaller {
                        input: 16,
                        output: 17,
                    },
                    Level::Minimal,
                    PayloadKind::Json,
                )),
            ),
            (
                "lossy at minimal",
                fake(lossy_everywhere, None, false),
                JSON,
                Some((Rule::LossyAtLevel, Level::Minimal, PayloadKind::Json)),
            ),
            (
                "text for JSON without saying so",
                fake(toon_like, Some(toon_inverse), false),
                JSON,
                Some((Rule::NotJson, Level::Minimal, PayloadKind::Json)),
            ),
            (
                "text for JSON, declared",
                fake(toon_like, Some(toon_inverse), true),
                JSON,
                None,
            ),
            (
                "lossless without an inverse",
                fake(compact, None, false),
                JSON,
                Some((
                    Rule::NoInverse {
                        error: "the codec offers no inverse (DynCodec::expands is false)".into(),
                    },
                    Level::Minimal,
                    PayloadKind::Json,
                )),
            ),
            (
                "an inverse that fails",
                fake(compact, Some(failing_inverse), false),
                JSON,
                Some((
                    Rule::NoInverse {
                        error: CodecError::invalid_input("garbled").to_string(),
                    },
                    Level::Minimal,
                    PayloadKind::Json,
                )),
            ),
            (
                "an inverse that panics",
                fake(compact, Some(panicking_inverse), false),
                JSON,
                Some((
                    Rule::Panicked {
                        call: "expand",
                        message: "inverse exploded".into(),
                    },
                    Level::Minimal,
                    PayloadKind::Json,
                )),
            ),
            (
                "a number's text changed",
                fake(compact, Some(wrong_inverse), false),
                JSON,
                Some((
                    Rule::ExpandsElsewhere {
                        expanded: r#"{"a":1,"b":2.0}"#.into(),
                    },
                    Level::Minimal,
                    PayloadKind::Json,
                )),
            ),
            (
                "lossy, but exact",
                fake(lossy_but_exact, Some(inverse), false),
                JSON,
                Some((Rule::LossyButExpands, Level::Normal, PayloadKind::Json)),
            ),
            (
                "text back exactly",
                fake(dedup, Some(dedup_inverse), false),
                "x\nx\nx",
                None,
            ),
            (
                "text back but for a newline",
                fake(dedup, Some(dedup_almost), false),
                "x\nx\nx",
                Some((
                    Rule::ExpandsElsewhere {
                        expanded: "x\nx\nx\n".into(),
                    },
                    Level::Minimal,
                    PayloadKind::Text,
                )),
            ),
        ];
        for (name, codec, input, expected) in rows {
            let found = check(&codec, input)
                .err()
                .map(|violation| (violation.rule, violation.level, violation.kind));
            assert_eq!(found, expected, "{name}");
        }
    }

    #[test]
    fn nulls_count_as_absent_only_when_the_codec_says_so() {
        fn drops_nulls(payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
            Ok(match (payload.kind(), level) {
                (PayloadKind::Json, Level::Minimal) => Outcome::lossless(r#"{"a":1}"#),
                _ => Outcome::Unchanged,
            })
        }
        fn back(_: &str) -> Result<String, CodecError> {
            Ok(r#"{"a":1}"#.to_owned())
        }
        let codec = fake(drops_nulls, Some(back), false);
        let input = r#"{"a": 1, "b": null}"#;
        assert!(matches!(
            check(&codec, input).map_err(|v| v.rule),
            Err(Rule::ExpandsElsewhere { .. })
        ));
        let declared = Fake {
            nulls_absent: true,
            ..fake(drops_nulls, Some(back), false)
        };
        assert_eq!(Contract::new(&declared).check(input), Ok(()));
    }

    #[test]
    fn only_json_the_host_accepts_is_given_as_json() {
        fn json_only(payload: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
            assert!(!payload.is_json(), "given as JSON: {:?}", payload.text());
            Ok(Outcome::Unchanged)
        }
        let codec = fake(json_only, None, false);
        let deep = format!("{}{}", "[".repeat(600), "]".repeat(600));
        for text in [r#"{"a": 1, "a": 2}"#, "[1,", "NaN", deep.as_str()] {
            assert_eq!(check(&codec, text), Ok(()), "{text}");
        }
    }

    #[test]
    fn a_violation_names_codec_level_kind_rule_and_input() {
        let codec = fake(lossy_everywhere, None, false);
        let violation = check(&codec, &format!("[{}]", "1,".repeat(400) + "1")).unwrap_err();
        let message = violation.to_string();
        assert!(
            message.starts_with(
                "codec \"fake\" at minimal on a JSON payload: lossy at a level that allows only \
                 lossless outcomes\n  input (803 bytes): \"[1,1,"
            ),
            "{message}"
        );
        assert!(
            message.contains("… (cut)\n  output (2 bytes): \"{}\""),
            "{message}"
        );
    }

    /// A codec that drops the first line of a text at `normal` and up (lossy), and declares a
    /// cut of its output: `cut`, called with the output and the room.
    struct Cutting {
        cut: fn(&str, usize) -> Option<CutAt>,
    }

    impl DynCodec for Cutting {
        fn meta(&self) -> CodecMeta {
            CodecMeta::of::<Marker<false, false, false>>()
        }

        fn cuts(&self) -> bool {
            true
        }

        fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
            Ok(match payload.text().split_once('\n') {
                Some((_, rest)) if level.allows_loss() && !payload.is_json() => {
                    Outcome::lossy(rest)
                }
                _ => Outcome::Unchanged,
            })
        }

        fn cut(&self, _: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
            (self.cut)(output, room)
        }

        fn expand(&self, _: &str) -> Result<String, CodecError> {
            unreachable!("the codec offers no inverse")
        }
    }

    /// 21 lines of 8 bytes: the output is the last 20, 160 bytes costing 180.
    fn lines() -> String {
        (0..=20).map(|i| format!("line {i:02}\n")).collect()
    }

    /// A marker of 37 code points that keeps the rules.
    const MARKER: &str = "[\u{2026} lines not shown; wm_get_result {}]";

    /// A cut that keeps the rules: the most whole lines that fit with [`MARKER`], at least
    /// one line removed; nothing kept when not even the marker fits.
    fn good(output: &str, room: usize) -> Option<CutAt> {
        let budget = room.saturating_sub(json_string_chars(MARKER));
        let (mut kept, mut spent) = (0, 0);
        for line in output.split_inclusive('\n') {
            let cost = json_string_chars(line);
            if spent + cost > budget || kept + line.len() >= output.len() {
                break;
            }
            (kept, spent) = (kept + line.len(), spent + cost);
        }
        Some(CutAt::new(kept, MARKER))
    }

    /// The rule that `cut` breaks on [`lines`], and at which room: `None` when it keeps them.
    fn broken(cut: fn(&str, usize) -> Option<CutAt>) -> Option<(usize, CutRule)> {
        match check(&Cutting { cut }, &lines()).map_err(|violation| violation.rule) {
            Ok(()) => None,
            Err(Rule::Cut { room, broken }) => Some((room, *broken)),
            Err(other) => panic!("another rule: {other}"),
        }
    }

    #[test]
    fn a_cut_that_keeps_the_rules_passes_and_so_does_none() {
        assert_eq!(broken(good), None);
        assert_eq!(broken(|_, _| None), None);
        let output = &lines()[8..];
        assert_eq!(json_string_chars(output), 180);
        // 15 lines of 9 code points, and the marker.
        assert_eq!(good(output, 179), Some(CutAt::new(120, MARKER)));
        assert_eq!(good(output, 45), Some(CutAt::new(0, MARKER)));
    }

    #[test]
    fn a_cut_that_panics_breaks_the_contract() {
        assert_eq!(
            broken(|_, _| panic!("cut exploded")),
            Some((
                0,
                CutRule::Panicked {
                    message: "cut exploded".into()
                }
            ))
        );
    }

    #[test]
    fn a_cut_inside_a_line_breaks_the_contract() {
        assert_eq!(
            broken(|_, _| Some(CutAt::new(3, MARKER))),
            Some((0, CutRule::NotWholeLines { kept: 3 }))
        );
    }

    #[test]
    fn a_cut_that_keeps_everything_breaks_the_contract() {
        let all = |output: &str, _| Some(CutAt::new(output.len(), MARKER));
        assert_eq!(
            broken(all),
            Some((
                0,
                CutRule::KeepsAll {
                    kept: 160,
                    len: 160
                }
            ))
        );
        let past = |output: &str, _| Some(CutAt::new(output.len() + 1, MARKER));
        assert_eq!(
            broken(past),
            Some((
                0,
                CutRule::KeepsAll {
                    kept: 161,
                    len: 160
                }
            ))
        );
    }

    #[test]
    fn a_cut_over_the_room_breaks_the_contract_unless_it_keeps_nothing() {
        // The first line and the marker: 9 + 37 code points.
        assert_eq!(
            broken(|_, _| Some(CutAt::new(8, MARKER))),
            Some((0, CutRule::OverRoom { cost: 46 }))
        );
        // The marker alone, over the rooms below 37, is what the host takes.
        assert_eq!(broken(|_, _| Some(CutAt::new(0, MARKER))), None);
    }

    #[test]
    fn a_cut_with_an_empty_marker_breaks_the_contract() {
        assert_eq!(
            broken(|_, _| Some(CutAt::new(0, ""))),
            Some((0, CutRule::EmptyMarker))
        );
    }

    #[test]
    fn a_cut_with_a_marker_of_two_lines_breaks_the_contract() {
        let marker = "[\u{2026} lines not shown]\nwm_get_result {}";
        assert_eq!(
            broken(|_, _| Some(CutAt::new(
                0,
                "[\u{2026} lines not shown]\nwm_get_result {}"
            ))),
            Some((
                0,
                CutRule::MarkerLines {
                    marker: marker.into()
                }
            ))
        );
        let carriage = |_: &str, _| Some(CutAt::new(0, "[a]\r wm_get_result {}"));
        assert!(matches!(
            broken(carriage),
            Some((0, CutRule::MarkerLines { .. }))
        ));
    }

    #[test]
    fn a_cut_whose_marker_names_no_recovery_breaks_the_contract() {
        assert_eq!(
            broken(|_, _| Some(CutAt::new(0, "[\u{2026} 20 lines not shown]"))),
            Some((
                0,
                CutRule::NoRecovery {
                    marker: "[\u{2026} 20 lines not shown]".into()
                }
            ))
        );
        // The tool named without a selector does not say what to ask for.
        let bare = |_: &str, _| Some(CutAt::new(0, "[\u{2026} see wm_get_result]"));
        assert!(matches!(
            broken(bare),
            Some((0, CutRule::NoRecovery { .. }))
        ));
    }

    #[test]
    fn a_cut_that_answers_differently_twice_breaks_the_contract() {
        fn flaky(output: &str, room: usize) -> Option<CutAt> {
            static CALLS: AtomicU64 = AtomicU64::new(0);
            let call = CALLS.fetch_add(1, Ordering::Relaxed);
            good(output, room).filter(|_| call.is_multiple_of(2))
        }
        assert_eq!(broken(flaky), Some((0, CutRule::NotDeterministic)));
    }

    #[test]
    fn a_cut_that_keeps_less_at_a_larger_room_breaks_the_contract() {
        // The whole output fits in a room of 180: this cut then keeps nothing.
        let shrinks = |output: &str, room| {
            if room < 180 {
                good(output, room)
            } else {
                Some(CutAt::new(0, MARKER))
            }
        };
        assert_eq!(
            broken(shrinks),
            Some((
                180,
                CutRule::NotMonotone {
                    kept: 0,
                    smaller_room: 179,
                    kept_there: 120
                }
            ))
        );
    }

    #[test]
    fn declining_every_cut_of_several_lines_is_a_violation_only_when_asked() {
        let declines = Cutting { cut: |_, _| None };
        assert_eq!(check(&declines, &lines()), Ok(()));
        let strict = Contract::new(&declines).cuts_every_output();
        assert_eq!(
            strict.check(&lines()).map_err(|violation| violation.rule),
            Err(Rule::CutDeclined { lines: 20 })
        );
        // An output of one line: no boundary to cut at but its start.
        assert_eq!(strict.check("first\nsecond"), Ok(()));
        let cuts = Cutting { cut: good };
        assert_eq!(
            Contract::new(&cuts).cuts_every_output().check(&lines()),
            Ok(())
        );
    }

    #[test]
    fn a_cut_violation_names_codec_level_room_and_rule() {
        let codec = Cutting {
            cut: |_, _| Some(CutAt::new(3, MARKER)),
        };
        let violations = check_all(&codec, [("twenty lines", lines().as_str())]).unwrap_err();
        let [(name, violation)] = &violations[..] else {
            panic!("{violations:?}");
        };
        assert_eq!(name, "twenty lines");
        let message = violation.to_string();
        assert!(
            message.starts_with(
                "codec \"fake\" at normal on a text payload: its cut to a room of 0 keeps 3 \
                 bytes, which end inside a line (a cut keeps whole lines: 0 bytes, or up to a \
                 line break)\n  input (168 bytes): \"line 00\\n"
            ),
            "{message}"
        );
    }
}
