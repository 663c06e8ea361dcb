//! What a codec declares about itself, held as one value.

use std::fmt;

use abi_stable::StableAbi;
use abi_stable::std_types::RStr;

use crate::{Codec, PayloadKind};

/// What a codec declares about itself: its name and the promises the host relies on.
///
/// A codec author writes these as the consts of its [`Codec`] impl ([`Codec::INVERSE`] for
/// `expands`); [`CodecMeta::of`] reads
/// them into this one value, and every other place reads the value: the root module of a plugin
/// library lists one per codec (so it is `#[repr(C)]` and [`StableAbi`]: it crosses the library
/// boundary), the built-in codecs register it, and the host's registry and codec objects carry
/// it. Its fields are private, so it can only come from a [`Codec`] impl.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{
///     Codec, CodecError, CodecMeta, Inverse, Level, Outcome, Params, Payload,
/// };
///
/// struct Reverse;
///
/// impl Reverse {
///     fn expand(&self, payload: &str) -> Result<String, CodecError> {
///         Ok(payload.chars().rev().collect())
///     }
/// }
///
/// impl Codec for Reverse {
///     const NAME: &'static str = "reverse";
///     const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
///
///     fn new(_params: &mut Params) -> Result<Self, CodecError> {
///         Ok(Reverse)
///     }
///
///     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
///         if !level.allows_change() {
///             return Ok(Outcome::Unchanged);
///         }
///         Ok(Outcome::lossless(payload.text().chars().rev().collect::<String>()))
///     }
/// }
///
/// const META: CodecMeta = CodecMeta::of::<Reverse>();
/// assert_eq!(META.name(), "reverse");
/// assert!(META.expands());
/// assert!(!META.text_output());
/// assert!(!META.null_members_absent());
/// ```
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodecMeta {
    name: RStr<'static>,
    expands: bool,
    text_output: bool,
    null_members_absent: bool,
}

impl CodecMeta {
    /// The metadata codec `C` declares through its [`Codec`] consts.
    pub const fn of<C: Codec>() -> CodecMeta {
        CodecMeta {
            name: RStr::from_str(C::NAME),
            expands: C::INVERSE.is_some(),
            text_output: C::TEXT_OUTPUT,
            null_members_absent: C::NULL_MEMBERS_ABSENT,
        }
    }

    /// Whether `expanded`, what this codec's inverse gave for an outcome of `input`, is `input`
    /// again as CONTRACT §2.1 counts it: the same text for a text payload; for a JSON payload
    /// an equal value (numbers by their exact text, strings by their decoded value, members in
    /// any order, and a member whose value is `null` counted as absent when the codec declares
    /// [`Codec::NULL_MEMBERS_ABSENT`]). The host verifies lossless outcomes with it, and
    /// `parrot-codec-test`'s contract check judges with it, so both judge alike.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{CodecMeta, PayloadKind};
    /// # use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
    /// # struct Compact;
    /// # impl Codec for Compact {
    /// #     const NAME: &'static str = "compact";
    /// #     fn new(_: &mut Params) -> Result<Self, CodecError> { Ok(Compact) }
    /// #     fn compress(&self, _: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
    /// #         Ok(Outcome::Unchanged)
    /// #     }
    /// # }
    ///
    /// let meta = CodecMeta::of::<Compact>();
    /// assert!(meta.gives_back(PayloadKind::Json, r#"{"a": 1, "b": [2]}"#, r#"{"b":[2],"a":1}"#));
    /// assert!(!meta.gives_back(PayloadKind::Json, r#"{"a": 1}"#, r#"{"a":1.0}"#));
    /// assert!(!meta.gives_back(PayloadKind::Json, r#"{"a": 1, "b": null}"#, r#"{"a":1}"#));
    /// assert!(!meta.gives_back(PayloadKind::Text, "a  b", "a b"));
    /// ```
    pub fn gives_back(&self, kind: PayloadKind, input: &str, expanded: &str) -> bool {
        match kind {
            PayloadKind::Text => input == expanded,
            PayloadKind::Json => parrot_json::equivalent(input, expanded, self.null_members_absent),
        }
    }

    /// The name manifests use to pick the codec ([`Codec::NAME`]).
    pub const fn name(&self) -> &'static str {
        self.name.as_str()
    }

    /// Whether the codec offers its inverse: whether its [`Codec::INVERSE`] is `Some`.
    pub const fn expands(&self) -> bool {
        self.expands
    }

    /// Whether its output for a JSON payload is text rather than JSON ([`Codec::TEXT_OUTPUT`]).
    pub const fn text_output(&self) -> bool {
        self.text_output
    }

    /// Whether a member whose value is `null` counts as absent when the host compares an
    /// expanded outcome with its input ([`Codec::NULL_MEMBERS_ABSENT`]).
    pub const fn null_members_absent(&self) -> bool {
        self.null_members_absent
    }

    /// Checks the list of codecs one library provides: every name non-empty, no name twice.
    ///
    /// [`crate::export_codecs!`] runs it when the library is compiled, and the host again when
    /// it loads a library, which may have been built some other way.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::{Codec, CodecError, CodecListError, CodecMeta, Level, Outcome,
    ///     Params, Payload};
    ///
    /// struct Keep;
    ///
    /// impl Codec for Keep {
    ///     const NAME: &'static str = "keep";
    ///
    ///     fn new(_params: &mut Params) -> Result<Self, CodecError> {
    ///         Ok(Keep)
    ///     }
    ///
    ///     fn compress(&self, _payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
    ///         Ok(Outcome::Unchanged)
    ///     }
    /// }
    ///
    /// let keep = CodecMeta::of::<Keep>();
    /// assert_eq!(CodecMeta::check_list(&[keep]), Ok(()));
    /// assert_eq!(
    ///     CodecMeta::check_list(&[keep, keep]),
    ///     Err(CodecListError::DuplicateName { name: "keep" })
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`CodecListError::EmptyName`] for the first codec without a name, else
    /// [`CodecListError::DuplicateName`] for the first name given twice.
    pub const fn check_list(codecs: &[CodecMeta]) -> Result<(), CodecListError> {
        let mut i = 0;
        while i < codecs.len() {
            let name = codecs[i].name();
            if name.is_empty() {
                return Err(CodecListError::EmptyName { index: i });
            }
            let mut j = 0;
            while j < i {
                if same_bytes(name.as_bytes(), codecs[j].name().as_bytes()) {
                    return Err(CodecListError::DuplicateName { name });
                }
                j += 1;
            }
            i += 1;
        }
        Ok(())
    }
}

/// Byte equality, written out because `==` on slices is not available in a const fn.
const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Why a library's list of codecs cannot be exported or loaded (see
/// [`CodecMeta::check_list`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecListError {
    /// A codec has an empty name, which no manifest can choose.
    EmptyName {
        /// Its position in the list, counting from 0.
        index: usize,
    },
    /// Two codecs share a name, so a manifest naming it would be ambiguous.
    DuplicateName {
        /// The shared name.
        name: &'static str,
    },
}

impl CodecListError {
    /// The error as a fixed message: a const panic (the compile-time check in
    /// [`crate::export_codecs!`]) cannot format the name or the position.
    pub const fn summary(&self) -> &'static str {
        match self {
            CodecListError::EmptyName { .. } => {
                "export_codecs!: a codec's NAME is empty; every codec needs a non-empty name"
            }
            CodecListError::DuplicateName { .. } => {
                "export_codecs!: two codecs have the same NAME; every codec needs its own name"
            }
        }
    }
}

impl fmt::Display for CodecListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecListError::EmptyName { index } => {
                write!(f, "codec number {} has an empty name", index + 1)
            }
            CodecListError::DuplicateName { name } => {
                write!(f, "two codecs are named \"{name}\"")
            }
        }
    }
}

impl std::error::Error for CodecListError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CodecError, Level, Outcome, Params, Payload};

    macro_rules! codec {
        ($ty:ident, $name:expr) => {
            struct $ty;

            impl Codec for $ty {
                const NAME: &'static str = $name;

                fn new(_params: &mut Params) -> Result<Self, CodecError> {
                    Ok($ty)
                }

                fn compress(
                    &self,
                    _payload: Payload<'_>,
                    _level: Level,
                ) -> Result<Outcome, CodecError> {
                    Ok(Outcome::Unchanged)
                }
            }
        };
    }

    codec!(Alpha, "alpha");
    codec!(Beta, "beta");
    codec!(Alphabet, "alphabet");
    codec!(Nameless, "");
    codec!(OtherAlpha, "alpha");

    /// One row per list: the codecs, and what the check says.
    #[test]
    fn check_list_rejects_empty_and_repeated_names() {
        let alpha = CodecMeta::of::<Alpha>();
        let beta = CodecMeta::of::<Beta>();
        let alphabet = CodecMeta::of::<Alphabet>();
        let nameless = CodecMeta::of::<Nameless>();
        let other_alpha = CodecMeta::of::<OtherAlpha>();
        let cases: [(&[CodecMeta], Result<(), CodecListError>); 6] = [
            (&[], Ok(())),
            (&[alpha, beta, alphabet], Ok(())),
            (
                &[alpha, nameless],
                Err(CodecListError::EmptyName { index: 1 }),
            ),
            (
                &[alpha, beta, other_alpha],
                Err(CodecListError::DuplicateName { name: "alpha" }),
            ),
            (
                &[beta, beta],
                Err(CodecListError::DuplicateName { name: "beta" }),
            ),
            // The first problem in list order is the one reported.
            (
                &[alpha, alpha, nameless],
                Err(CodecListError::DuplicateName { name: "alpha" }),
            ),
        ];
        for (list, expected) in cases {
            assert_eq!(CodecMeta::check_list(list), expected, "{list:?}");
        }
    }

    #[test]
    fn list_errors_say_which_codec() {
        assert_eq!(
            CodecListError::EmptyName { index: 2 }.to_string(),
            "codec number 3 has an empty name"
        );
        assert_eq!(
            CodecListError::DuplicateName { name: "x" }.to_string(),
            "two codecs are named \"x\""
        );
    }
}
