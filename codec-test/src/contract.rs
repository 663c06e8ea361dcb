//! The codec contract, checked on one input at every level and payload kind.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use parrot_codec_api::{Codec, DynCodec, Level, Outcome, Params, Payload, PayloadKind, build};

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
///    lossless outcome mislabelled.
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
}

impl fmt::Debug for Contract<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contract")
            .field("codec", &self.codec.name())
            .finish()
    }
}

impl<'c> Contract<'c> {
    /// The contract of `codec`, judged by what its metadata declares.
    pub fn new(codec: &'c dyn DynCodec) -> Contract<'c> {
        Contract { codec }
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
        let fail = |rule: Rule| Err(violation(rule, Some(&out)));
        if level == Level::None {
            return fail(Rule::ChangedAtNone);
        }
        if out.len() >= input.len() {
            return fail(Rule::NotSmaller {
                input: input.len(),
                output: out.len(),
            });
        }
        if lossy && !level.allows_loss() {
            return fail(Rule::LossyAtLevel);
        }
        if kind == PayloadKind::Json && !self.codec.text_output() && !crate::json::is_json(&out) {
            return fail(Rule::NotJson);
        }
        if lossy && !self.codec.expands() {
            return Ok(());
        }
        if !lossy && !self.codec.expands() {
            return fail(Rule::NoInverse {
                error: "the codec offers no inverse (DynCodec::expands is false)".to_owned(),
            });
        }
        let expanded = match catch_unwind(AssertUnwindSafe(|| self.codec.expand(&out))) {
            Ok(expanded) => expanded,
            Err(panic) => {
                return fail(Rule::Panicked {
                    call: "expand",
                    message: panic_message(panic.as_ref()),
                });
            }
        };
        match (lossy, expanded) {
            (false, Err(error)) => fail(Rule::NoInverse {
                error: error.to_string(),
            }),
            (false, Ok(expanded)) if !self.same(input, &expanded, kind) => {
                fail(Rule::ExpandsElsewhere { expanded })
            }
            (true, Ok(expanded)) if self.same(input, &expanded, kind) => {
                fail(Rule::LossyButExpands)
            }
            _ => Ok(()),
        }
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
}
