use abi_stable::StableAbi;

use crate::{CodecError, CodecMeta, Cut, CutAt, Level, Params};

/// Whether a payload is JSON text or plain text.
///
/// The host decides: a payload that parses as JSON is [`PayloadKind::Json`] and its text is the
/// exact text that entered the stage (member order and number text as written).
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    /// The text is one valid JSON value.
    Json = 0,
    /// Anything else: logs, shell output, prose.
    Text = 1,
}

/// One tool result as a codec sees it: its text and whether that text is JSON.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Payload, PayloadKind};
///
/// let payload = Payload::json(r#"{"a":1}"#);
/// assert_eq!(payload.kind(), PayloadKind::Json);
/// assert_eq!(payload.text(), r#"{"a":1}"#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payload<'a> {
    text: &'a str,
    kind: PayloadKind,
}

impl<'a> Payload<'a> {
    /// A payload of the given kind.
    pub const fn new(text: &'a str, kind: PayloadKind) -> Payload<'a> {
        Payload { text, kind }
    }

    /// A JSON payload (the caller vouches that `text` is valid JSON).
    pub const fn json(text: &'a str) -> Payload<'a> {
        Payload::new(text, PayloadKind::Json)
    }

    /// A plain-text payload.
    pub const fn text_only(text: &'a str) -> Payload<'a> {
        Payload::new(text, PayloadKind::Text)
    }

    /// The payload's text.
    pub const fn text(&self) -> &'a str {
        self.text
    }

    /// Whether the text is JSON.
    pub const fn kind(&self) -> PayloadKind {
        self.kind
    }

    /// Shorthand for `kind() == PayloadKind::Json`.
    pub const fn is_json(&self) -> bool {
        matches!(self.kind, PayloadKind::Json)
    }
}

/// What a codec made of a payload.
///
/// The host measures sizes, time and tokens itself; a codec only says what it produced and
/// whether information was dropped. `lossy` must be exact: true if and only if the original
/// cannot be rebuilt from the new payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The codec had nothing to do (wrong shape, below its thresholds, level too low).
    Unchanged,
    /// A new payload.
    Changed {
        /// The text the model will see.
        payload: String,
        /// Whether information was dropped.
        lossy: bool,
    },
}

impl Outcome {
    /// A new payload from which the input can be rebuilt exactly.
    pub fn lossless(payload: impl Into<String>) -> Outcome {
        Outcome::Changed {
            payload: payload.into(),
            lossy: false,
        }
    }

    /// A new payload that dropped information.
    pub fn lossy(payload: impl Into<String>) -> Outcome {
        Outcome::Changed {
            payload: payload.into(),
            lossy: true,
        }
    }

    /// Whether information was dropped.
    pub fn is_lossy(&self) -> bool {
        matches!(self, Outcome::Changed { lossy: true, .. })
    }

    /// The new payload, or `None` when unchanged.
    pub fn payload(&self) -> Option<&str> {
        match self {
            Outcome::Unchanged => None,
            Outcome::Changed { payload, .. } => Some(payload),
        }
    }
}

/// A compression codec: what a codec author implements.
///
/// A codec is built once per manifest entry from the entry's params ([`Codec::new`]), then
/// called many times, possibly from several threads at once. Calls are synchronous and
/// deterministic (the same payload and level give the same bytes) and never call a model.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
///
/// /// Drops trailing whitespace from every line (lossy: the spaces are gone).
/// struct TrimLines {
///     min_lines: usize,
/// }
///
/// impl Codec for TrimLines {
///     const NAME: &'static str = "trim_lines";
///
///     fn new(params: &mut Params) -> Result<Self, CodecError> {
///         Ok(TrimLines { min_lines: params.usize("min_lines", 1)? })
///     }
///
///     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
///         if !level.allows_loss() || payload.is_json() {
///             return Ok(Outcome::Unchanged);
///         }
///         let lines: Vec<&str> = payload.text().split('\n').collect();
///         if lines.len() < self.min_lines {
///             return Ok(Outcome::Unchanged);
///         }
///         let trimmed: Vec<&str> = lines.iter().map(|line| line.trim_end()).collect();
///         Ok(Outcome::lossy(trimmed.join("\n")))
///     }
/// }
///
/// let codec = TrimLines::new(&mut Params::empty()).unwrap();
/// let out = codec.compress(Payload::text_only("a  \nb\t"), Level::Normal).unwrap();
/// assert_eq!(out, Outcome::lossy("a\nb"));
/// assert_eq!(codec.compress(Payload::text_only("a  "), Level::Minimal).unwrap(), Outcome::Unchanged);
/// ```
pub trait Codec: Sized + Send + Sync + 'static {
    /// The name manifests use to pick this codec (`codec = "…"`).
    const NAME: &'static str;

    /// The codec's inverse, or `None` (the default) when it offers none.
    ///
    /// This one item is the declaration: [`CodecMeta::expands`] is whether it is `Some`, and
    /// [`DynCodec::expand`] calls it, so what the host is told and what the codec does cannot
    /// disagree. Offer one when outcomes are lossless: the host verifies them through it, and
    /// the contract check requires it. Without one, the host cannot check a lossless claim and
    /// treats the outcome as lossy (its original kept in the tee store; refused at `minimal`),
    /// and `check` and `package` warn about the codec. Write the inverse as a method of the codec and name it
    /// here:
    ///
    /// ```
    /// use parrot_codec_api::{Codec, CodecError, CodecMeta, DynCodec, Inverse, Level, Outcome};
    /// use parrot_codec_api::{Params, Payload};
    ///
    /// /// Writes each run of four spaces as a tab, in text that has no tab.
    /// struct Tabs;
    ///
    /// impl Tabs {
    ///     fn expand(&self, payload: &str) -> Result<String, CodecError> {
    ///         Ok(payload.replace('\t', "    "))
    ///     }
    /// }
    ///
    /// impl Codec for Tabs {
    ///     const NAME: &'static str = "tabs";
    ///     const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    ///
    ///     fn new(_: &mut Params) -> Result<Self, CodecError> {
    ///         Ok(Tabs)
    ///     }
    ///
    ///     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
    ///         let text = payload.text();
    ///         if payload.is_json() || !level.allows_change() || text.contains('\t') {
    ///             return Ok(Outcome::Unchanged);
    ///         }
    ///         let out = text.replace("    ", "\t");
    ///         Ok(if out.len() < text.len() { Outcome::lossless(out) } else { Outcome::Unchanged })
    ///     }
    /// }
    ///
    /// let out = Codec::compress(&Tabs, Payload::text_only("        x"), Level::Minimal).unwrap();
    /// assert_eq!(out, Outcome::lossless("\t\tx"));
    /// assert!(CodecMeta::of::<Tabs>().expands());
    /// assert_eq!(DynCodec::expand(&Tabs, "\t\tx").unwrap(), "        x");
    /// ```
    const INVERSE: Option<Inverse<Self>> = None;

    /// The codec's cut of its own output to a size, or `None` (the default) when it offers
    /// none: the host's last rule (CONTRACT §4, rule 11) then cuts a result over
    /// `max_result_chars` as text, at a line break or a character.
    ///
    /// A codec whose output has a grammar offers one to cut at the grammar's boundaries (the
    /// `log` codec between its units, a CSV codec between its records) and to end the cut with
    /// a marker that says exactly what it removed, in its own terms, with the selector that
    /// returns it. [`DynCodec::cuts`] is whether it is `Some`, and [`DynCodec::cut`] calls it;
    /// the rules a cut keeps are [`Cut`]'s.
    ///
    /// ```
    /// use parrot_codec_api::{Codec, CodecError, Cut, CutAt, DynCodec, Level, Outcome, Params};
    /// use parrot_codec_api::{Payload, RECOVERY_TOOL, json_string_chars};
    ///
    /// /// Keeps every line once, in order (lossy: repeats are dropped).
    /// struct Unique;
    ///
    /// impl Unique {
    ///     /// Whole lines while they fit with the marker, which counts the lines left out.
    ///     fn cut(&self, _: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
    ///         let lines: Vec<&str> = output.split_inclusive('\n').collect();
    ///         let marker = |kept: usize| {
    ///             format!("[{} lines not shown; {RECOVERY_TOOL} {{}}]", lines.len() - kept)
    ///         };
    ///         let (mut kept, mut end, mut spent) = (0, 0, 0);
    ///         for line in &lines[..lines.len() - 1] {
    ///             let cost = json_string_chars(line);
    ///             if spent + cost + json_string_chars(&marker(kept + 1)) > room {
    ///                 break;
    ///             }
    ///             (kept, end, spent) = (kept + 1, end + line.len(), spent + cost);
    ///         }
    ///         Some(CutAt::new(end, marker(kept)))
    ///     }
    /// }
    ///
    /// impl Codec for Unique {
    ///     const NAME: &'static str = "unique";
    ///     const CUT: Option<Cut<Self>> = Some(Self::cut);
    ///
    ///     fn new(_: &mut Params) -> Result<Self, CodecError> {
    ///         Ok(Unique)
    ///     }
    ///
    ///     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
    ///         let mut seen = std::collections::HashSet::new();
    ///         let out: String =
    ///             payload.text().split_inclusive('\n').filter(|l| seen.insert(*l)).collect();
    ///         let smaller = level.allows_loss() && out.len() < payload.text().len();
    ///         Ok(if smaller { Outcome::lossy(out) } else { Outcome::Unchanged })
    ///     }
    /// }
    ///
    /// let cut = DynCodec::cut(&Unique, Payload::text_only("a\nb\nc\n"), "a\nb\nc\n", 40);
    /// assert_eq!(cut, Some(CutAt::new(2, "[2 lines not shown; wm_get_result {}]")));
    /// assert!(DynCodec::cuts(&Unique));
    /// // The contract check asks the cut of each output at rooms from 0 to all of it.
    /// let input: String = (0..30).map(|i| format!("line {}\n", i % 12)).collect();
    /// parrot_codec_test::Contract::new(&Unique).cuts_every_output().check(&input).unwrap();
    /// ```
    const CUT: Option<Cut<Self>> = None;

    /// Whether the codec turns JSON payloads into another text format (TOON, CSV, a table):
    /// its output for a JSON payload is text, not JSON. By default a codec's output for a JSON
    /// payload must be JSON, and the host refuses output that is not; with this set, the host
    /// takes the text as it is, and wraps it as a JSON string when it needs to add a pointer.
    const TEXT_OUTPUT: bool = false;

    /// Whether an object member whose value is `null` counts as absent when the host compares
    /// an expanded outcome with its input (CONTRACT §2.1): set by a codec whose lossless
    /// outcomes drop such members, as `json_compact`'s null elision does. By default every
    /// member counts.
    const NULL_MEMBERS_ABSENT: bool = false;

    /// Builds the codec from its manifest entry's params.
    ///
    /// Read every param through `params`' getters: a key no getter asks for is rejected after
    /// this returns, naming the key.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParams`] for a bad value or a rule between params broken.
    fn new(params: &mut Params) -> Result<Self, CodecError>;

    /// Compresses one payload at one level.
    ///
    /// Ask the level before each kind of change, the same way in every codec (see
    /// [`Level`]): [`Level::allows_change`] before a lossless one, [`Level::allows_loss`]
    /// before a lossy one. The host never calls a codec at [`Level::None`], but the contract
    /// check does, and expects [`Outcome::Unchanged`]; both questions answer it.
    ///
    /// # Errors
    ///
    /// Any [`CodecError`]: the host logs it naming the codec and the tool, and passes the
    /// payload through unchanged.
    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError>;
}

/// A codec's inverse ([`Codec::INVERSE`]): rebuilds the input of a lossless outcome from
/// the outcome's payload.
///
/// # Errors
///
/// Any [`CodecError`] when the payload cannot be expanded.
pub type Inverse<C> = fn(&C, &str) -> Result<String, CodecError>;

/// An object-safe view of a [`Codec`], so that codecs of different types (built in, or behind
/// a plugin boundary) can sit in one registry.
///
/// Every [`Codec`] implements it, with [`CodecMeta::of`] as its metadata.
pub trait DynCodec: Send + Sync {
    /// What the codec declares about itself.
    fn meta(&self) -> CodecMeta;

    /// The codec's name (`self.meta().name()`).
    fn name(&self) -> &str {
        self.meta().name()
    }

    /// Whether the codec offers an inverse (`self.meta().expands()`, [`Codec::INVERSE`]).
    fn expands(&self) -> bool {
        self.meta().expands()
    }

    /// Whether the codec's output for a JSON payload is text rather than JSON
    /// (`self.meta().text_output()`, see [`Codec::TEXT_OUTPUT`]).
    fn text_output(&self) -> bool {
        self.meta().text_output()
    }

    /// Whether the codec offers a cut of its own output ([`Codec::CUT`]). Not a field of
    /// [`CodecMeta`]: that value crosses the plugin boundary in interface 0.1.0's layout, which
    /// a library built against 0.1.0 must keep matching (see the crate's *Versions*).
    fn cuts(&self) -> bool {
        false
    }

    /// See [`Codec::compress`].
    ///
    /// # Errors
    ///
    /// See [`Codec::compress`].
    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError>;

    /// The codec's cut of `output`, its output for `original`, to `room` (see [`Cut`] for
    /// the rules it keeps): [`Codec::CUT`]. `None` when the codec offers none or leaves this
    /// cut to the host.
    fn cut(&self, original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        let _ = (original, output, room);
        None
    }

    /// Rebuilds the input of a lossless outcome from its payload: the codec's
    /// [`Codec::INVERSE`].
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::Unsupported`] when the codec offers no inverse; the inverse's
    /// error when `payload` cannot be expanded.
    fn expand(&self, payload: &str) -> Result<String, CodecError>;

    /// The codec as [`Any`](std::any::Any), so that a caller that knows a codec's type can
    /// reach its own methods. The host never does: what it asks of a codec beyond `compress`
    /// is a capability of this trait ([`DynCodec::expand`], [`DynCodec::cut`]). Every
    /// [`Codec`] gives itself; a hand-written implementation gives `None` unless it overrides
    /// this.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, CodecError, DynCodec, Level, Outcome, Params, Payload};
    ///
    /// struct Same;
    ///
    /// impl Codec for Same {
    ///     const NAME: &'static str = "same";
    ///     fn new(_: &mut Params) -> Result<Self, CodecError> {
    ///         Ok(Same)
    ///     }
    ///     fn compress(&self, _: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
    ///         Ok(Outcome::Unchanged)
    ///     }
    /// }
    ///
    /// let codec: Box<dyn DynCodec> = Box::new(Same);
    /// assert!(codec.as_any().is_some_and(|any| any.is::<Same>()));
    /// ```
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

impl<C: Codec> DynCodec for C {
    fn meta(&self) -> CodecMeta {
        CodecMeta::of::<C>()
    }

    fn cuts(&self) -> bool {
        C::CUT.is_some()
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        Codec::compress(self, payload, level)
    }

    fn cut(&self, original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        crate::cut::run(self, original, output, room)
    }

    fn expand(&self, payload: &str) -> Result<String, CodecError> {
        match C::INVERSE {
            Some(inverse) => inverse(self, payload),
            None => Err(CodecError::unsupported(format!(
                "codec \"{}\" offers no inverse",
                C::NAME
            ))),
        }
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// Builds a codec from params and checks that no unknown param was given.
///
/// This is what the host and the export machinery call; codec authors implement
/// [`Codec::new`].
///
/// # Errors
///
/// The constructor's error, or [`crate::ErrorKind::InvalidParams`] naming an unknown key.
pub fn build<C: Codec>(mut params: Params) -> Result<C, CodecError> {
    let codec = C::new(&mut params)?;
    params.finish()?;
    Ok(codec)
}
