//! What a codec declares about itself, held as one value.

use abi_stable::StableAbi;
use abi_stable::std_types::RStr;

use crate::Codec;

/// What a codec declares about itself: its name and the promises the host relies on.
///
/// A codec author writes these as the consts of its [`Codec`] impl; [`CodecMeta::of`] reads
/// them into this one value, and every other place reads the value: the root module of a plugin
/// library lists one per codec (so it is `#[repr(C)]` and [`StableAbi`]: it crosses the library
/// boundary), the built-in codecs register it, and the host's registry and codec objects carry
/// it. Its fields are private, so it can only come from a [`Codec`] impl.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, CodecError, CodecMeta, Level, Outcome, Params, Payload};
///
/// struct Reverse;
///
/// impl Codec for Reverse {
///     const NAME: &'static str = "reverse";
///     const EXPANDS: bool = true;
///
///     fn new(_params: &mut Params) -> Result<Self, CodecError> {
///         Ok(Reverse)
///     }
///
///     fn compress(&self, payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
///         Ok(Outcome::lossless(payload.text().chars().rev().collect::<String>()))
///     }
///
///     fn expand(&self, payload: &str) -> Result<String, CodecError> {
///         Ok(payload.chars().rev().collect())
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
            expands: C::EXPANDS,
            text_output: C::TEXT_OUTPUT,
            null_members_absent: C::NULL_MEMBERS_ABSENT,
        }
    }

    /// The name manifests use to pick the codec ([`Codec::NAME`]).
    pub fn name(&self) -> &'static str {
        self.name.as_str()
    }

    /// Whether the codec offers its inverse ([`Codec::EXPANDS`]).
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
}
