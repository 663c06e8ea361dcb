//! The plugin boundary: the FFI-safe types and the root module a plugin library exports.
//!
//! Codec authors never touch this module: [`crate::export_codecs!`] writes everything in it
//! into their library. It is public (and hidden) because the macro expands in the author's
//! crate, and the host needs the same types to load the library.
#![allow(non_local_definitions, missing_docs)]

use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

pub use abi_stable;
pub use abi_stable::library::{
    __call_root_module_loader, CheckTypeLayout, LibHeader, RootModule, RootModuleResult,
};
pub use abi_stable::prefix_type::PrefixTypeTrait;
pub use abi_stable::sabi_trait::TD_Opaque;
pub use abi_stable::std_types::{RBox, ROption, RResult, RSlice, RStr, RString};

use abi_stable::sabi_types::VersionStrings;
use abi_stable::{StableAbi, declare_root_module_statics, package_version_strings, sabi_trait};

use crate::{
    Codec, CodecError, CodecMeta, CutAt, DynCodec, ErrorKind, Level, Outcome, Params, Payload,
    PayloadKind,
};

/// The symbol under which a plugin library exports its [`LibHeader`]: abi_stable's root-module
/// loader name, which the host looks up.
///
/// [`crate::export_codecs!`] exports under the same literal (both expand
/// `__root_module_symbol!`: an attribute cannot read a const), and the test
/// `root_module_symbol_is_abi_stables_loader_name` pins it to abi_stable's
/// `ROOT_MODULE_LOADER_NAME`.
pub const ROOT_MODULE_SYMBOL: &str = crate::__root_module_symbol!();

/// The literal of [`ROOT_MODULE_SYMBOL`], for `export_name` in [`crate::export_codecs!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __root_module_symbol {
    () => {
        "_1as_0lib_1header_0root_bmodule_bloader"
    };
}

/// The symbol under which a library exports the [`LibHeader`] of its second root module,
/// [`CapabilitiesMod`]. A library built before the capabilities module (interface 0.1.0 as
/// first released) has no such symbol: the host then reads it as offering no capability beyond
/// `compress` and `expand`.
pub const CAPABILITIES_SYMBOL: &str = crate::__capabilities_symbol!();

/// The literal of [`CAPABILITIES_SYMBOL`], for `export_name` in [`crate::export_codecs!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __capabilities_symbol {
    () => {
        "parrot_codec_capabilities_module"
    };
}

/// A [`CodecError`] as it crosses the boundary.
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct FfiError {
    pub code: u8,
    pub key: ROption<RString>,
    pub message: RString,
}

impl From<CodecError> for FfiError {
    fn from(err: CodecError) -> FfiError {
        FfiError {
            code: err.kind().code(),
            key: err.key().map(RString::from).into(),
            message: RString::from(err.message()),
        }
    }
}

impl From<FfiError> for CodecError {
    fn from(err: FfiError) -> CodecError {
        CodecError::from_parts(
            ErrorKind::from_code(err.code),
            err.key.into_option().map(RString::into_string),
            err.message.into_string(),
        )
    }
}

/// An [`Outcome`] as it crosses the boundary.
#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct FfiOutcome {
    pub changed: bool,
    pub lossy: bool,
    pub payload: RString,
}

impl From<Outcome> for FfiOutcome {
    fn from(outcome: Outcome) -> FfiOutcome {
        match outcome {
            Outcome::Unchanged => FfiOutcome {
                changed: false,
                lossy: false,
                payload: RString::new(),
            },
            Outcome::Changed { payload, lossy } => FfiOutcome {
                changed: true,
                lossy,
                payload: RString::from(payload),
            },
        }
    }
}

impl From<FfiOutcome> for Outcome {
    fn from(outcome: FfiOutcome) -> Outcome {
        if outcome.changed {
            Outcome::Changed {
                payload: outcome.payload.into_string(),
                lossy: outcome.lossy,
            }
        } else {
            Outcome::Unchanged
        }
    }
}

/// A codec instance behind the boundary.
#[sabi_trait]
pub trait FfiCodec: Send + Sync {
    fn compress(
        &self,
        text: RStr<'_>,
        kind: PayloadKind,
        level: Level,
    ) -> RResult<FfiOutcome, FfiError>;

    #[sabi(last_prefix_field)]
    fn expand(&self, text: RStr<'_>) -> RResult<RString, FfiError>;
}

/// The owned trait object a library hands the host for each constructed codec.
pub type FfiCodecBox = FfiCodec_TO<'static, RBox<()>>;

/// A [`CutAt`] as it crosses the boundary.
#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct FfiCutAt {
    pub kept: usize,
    pub marker: RString,
}

/// A codec instance behind the boundary with every capability of the interface:
/// [`FfiCodec`]'s calls and the cut. Its own trait, not methods added to [`FfiCodec`]: the
/// layout check refuses a library whose vtable has fewer methods than the host's, so
/// [`FfiCodec`] keeps 0.1.0's. Later capabilities go after the last prefix method, which a
/// newer library may have and an older host ignores.
#[sabi_trait]
pub trait FfiCapableCodec: Send + Sync {
    fn compress(
        &self,
        text: RStr<'_>,
        kind: PayloadKind,
        level: Level,
    ) -> RResult<FfiOutcome, FfiError>;

    fn expand(&self, text: RStr<'_>) -> RResult<RString, FfiError>;

    /// Whether the codec declares a cut ([`Codec::CUT`]).
    fn cuts(&self) -> bool;

    /// The codec's cut: `ROk(RNone)` when it declares none or leaves this one to the host.
    #[sabi(last_prefix_field)]
    fn cut(
        &self,
        original: RStr<'_>,
        kind: PayloadKind,
        output: RStr<'_>,
        room: usize,
    ) -> RResult<ROption<FfiCutAt>, FfiError>;
}

/// The owned trait object of a codec built through [`CapabilitiesMod::new_codec`].
pub type FfiCapableCodecBox = FfiCapableCodec_TO<'static, RBox<()>>;

/// The second root module of a library, exported under [`CAPABILITIES_SYMBOL`] beside
/// [`PluginMod`] (which keeps the layout interface 0.1.0 was first released with, so older
/// hosts load the library as before, and ignore this module).
///
/// How the host negotiates: it loads [`PluginMod`] and checks it as ever; it then looks the
/// symbol up. Absent (a library built before it), the library's codecs are built through
/// [`PluginMod::new_codec`] and offer no capability beyond `compress` and `expand`. Present,
/// its layout is checked like the first one's, and the codecs are built through
/// [`CapabilitiesMod::new_codec`] instead, one instance each, as before.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = CapabilitiesModRef)))]
#[sabi(missing_field(panic))]
pub struct CapabilitiesMod {
    /// Builds the codec named by the first argument from params given as a JSON object, as
    /// [`PluginMod::new_codec`] does, into an object offering every capability.
    #[sabi(last_prefix_field)]
    pub new_codec: extern "C" fn(RStr<'_>, RStr<'_>) -> RResult<FfiCapableCodecBox, FfiError>,
}

impl RootModule for CapabilitiesModRef {
    declare_root_module_statics! {CapabilitiesModRef}
    const BASE_NAME: &'static str = "parrot_codec_plugin_capabilities";
    const NAME: &'static str = "parrot-compress codec plugin capabilities";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// The root module of a codec plugin library.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModRef)))]
#[sabi(missing_field(panic))]
pub struct PluginMod {
    /// `cfg!(panic = "unwind")` in the library: a library built with `panic = "abort"` cannot
    /// turn a panic into an error, so the host refuses it.
    pub unwinds: bool,
    /// The codecs the library provides, as their [`Codec`] impls declare them. Adding a field
    /// to [`CodecMeta`] changes this layout: the host then refuses libraries built with the
    /// other one, naming both interface versions.
    pub codecs: RSlice<'static, CodecMeta>,
    /// Builds the codec named by the first argument from params given as a JSON object.
    #[sabi(last_prefix_field)]
    pub new_codec: extern "C" fn(RStr<'_>, RStr<'_>) -> RResult<FfiCodecBox, FfiError>,
}

impl RootModule for PluginModRef {
    declare_root_module_statics! {PluginModRef}
    const BASE_NAME: &'static str = "parrot_codec_plugin";
    const NAME: &'static str = "parrot-compress codec plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

pub use crate::INTERFACE_VERSION;

struct Adapter<C>(C);

impl<C: Codec> FfiCodec for Adapter<C> {
    fn compress(
        &self,
        text: RStr<'_>,
        kind: PayloadKind,
        level: Level,
    ) -> RResult<FfiOutcome, FfiError> {
        guard(|| {
            self.0
                .compress(Payload::new(text.as_str(), kind), level)
                .map(FfiOutcome::from)
        })
    }

    fn expand(&self, text: RStr<'_>) -> RResult<RString, FfiError> {
        guard(|| DynCodec::expand(&self.0, text.as_str()).map(RString::from))
    }
}

impl<C: Codec> FfiCapableCodec for Adapter<C> {
    fn compress(
        &self,
        text: RStr<'_>,
        kind: PayloadKind,
        level: Level,
    ) -> RResult<FfiOutcome, FfiError> {
        FfiCodec::compress(self, text, kind, level)
    }

    fn expand(&self, text: RStr<'_>) -> RResult<RString, FfiError> {
        FfiCodec::expand(self, text)
    }

    fn cuts(&self) -> bool {
        C::CUT.is_some()
    }

    fn cut(
        &self,
        original: RStr<'_>,
        kind: PayloadKind,
        output: RStr<'_>,
        room: usize,
    ) -> RResult<ROption<FfiCutAt>, FfiError> {
        guard(|| {
            let original = Payload::new(original.as_str(), kind);
            let cut = DynCodec::cut(&self.0, original, output.as_str(), room);
            Ok(cut.map(FfiCutAt::from).into())
        })
    }
}

impl From<CutAt> for FfiCutAt {
    fn from(cut: CutAt) -> FfiCutAt {
        FfiCutAt {
            kept: cut.kept,
            marker: RString::from(cut.marker),
        }
    }
}

impl From<FfiCutAt> for CutAt {
    fn from(cut: FfiCutAt) -> CutAt {
        CutAt::new(cut.kept, cut.marker.into_string())
    }
}

/// Builds codec `C` from JSON params into a boundary object.
pub fn new_codec<C: Codec>(params_json: RStr<'_>) -> Result<FfiCodecBox, CodecError> {
    let params = Params::from_json(params_json.as_str())?;
    let codec = crate::build::<C>(params)?;
    Ok(FfiCodec_TO::from_value(Adapter(codec), TD_Opaque))
}

/// Builds codec `C` from JSON params into a boundary object offering every capability.
pub fn new_capable_codec<C: Codec>(
    params_json: RStr<'_>,
) -> Result<FfiCapableCodecBox, CodecError> {
    let params = Params::from_json(params_json.as_str())?;
    let codec = crate::build::<C>(params)?;
    Ok(FfiCapableCodec_TO::from_value(Adapter(codec), TD_Opaque))
}

/// The error for a codec name the library does not provide.
pub fn unknown_codec(name: RStr<'_>, codecs: &[CodecMeta]) -> CodecError {
    let known: Vec<&str> = codecs.iter().map(CodecMeta::name).collect();
    CodecError::new(
        ErrorKind::UnknownCodec,
        format!(
            "this library provides no codec \"{name}\" (it provides: {})",
            known.join(", ")
        ),
    )
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs this library's panic hook: it records where a panic happened instead of printing
/// it, so that [`guard`] can report it to the host as an error. The library carries its own
/// std, so the hook is the library's alone.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(location));
        }));
    });
}

/// Stops the compilation of a library whose codec list [`CodecMeta::check_list`] refuses
/// (evaluated in a const by [`crate::export_codecs!`]).
pub const fn assert_exportable(codecs: &[CodecMeta]) {
    if let Err(err) = CodecMeta::check_list(codecs) {
        panic!("{}", err.summary());
    }
}

/// Runs `f`, turning an error into an [`FfiError`] and a panic into a
/// [`ErrorKind::Panicked`] error carrying the panic's message and location.
pub fn guard<T>(f: impl FnOnce() -> Result<T, CodecError>) -> RResult<T, FfiError> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => RResult::ROk(value),
        Ok(Err(err)) => RResult::RErr(err.into()),
        Err(payload) => {
            let location = LAST_PANIC.with(|last| last.borrow_mut().take());
            let message = format!(
                "panicked{}: {}",
                location.unwrap_or_default(),
                panic_message(payload.as_ref())
            );
            RResult::RErr(CodecError::new(ErrorKind::Panicked, message).into())
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(a panic payload that is not a string)"
    }
}

/// Exports a library's codecs to the host.
///
/// Writes the library's root module: the list of codecs (each one's [`CodecMeta`]), a
/// constructor for each (behind a panic guard), and the flag saying whether panics unwind;
/// and its second root module, [`CapabilitiesMod`], whose constructor builds codecs that offer
/// every capability of the interface (their [`Codec::CUT`]).
/// Invoke it once, at the crate root of a `cdylib` crate, with every codec type the library
/// provides.
///
/// ```ignore
/// parrot_codec_api::export_codecs!(LineDedup, AnsiStrip);
/// ```
///
/// A codec list the host would refuse does not compile: an empty [`Codec::NAME`], or two
/// codecs of the same name ([`CodecMeta::check_list`]).
///
/// ```compile_fail,E0080
/// use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
///
/// macro_rules! passthrough {
///     ($ty:ident) => {
///         struct $ty;
///
///         impl Codec for $ty {
///             const NAME: &'static str = "twin";
///
///             fn new(_params: &mut Params) -> Result<Self, CodecError> {
///                 Ok($ty)
///             }
///
///             fn compress(&self, _: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
///                 Ok(Outcome::Unchanged)
///             }
///         }
///     };
/// }
/// passthrough!(Left);
/// passthrough!(Right);
///
/// parrot_codec_api::export_codecs!(Left, Right); // two codecs named "twin"
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_codecs {
    ($($codec:ty),+ $(,)?) => {
        const _: () = {
            use $crate::__private as __p;

            const CODECS: &[$crate::CodecMeta] = &[$($crate::CodecMeta::of::<$codec>()),+];
            const _: () = __p::assert_exportable(CODECS);

            extern "C" fn new_codec(
                name: __p::RStr<'_>,
                params: __p::RStr<'_>,
            ) -> __p::RResult<__p::FfiCodecBox, __p::FfiError> {
                __p::guard(|| {
                    $(
                        if name.as_str() == <$codec as $crate::Codec>::NAME {
                            return __p::new_codec::<$codec>(params);
                        }
                    )+
                    Err(__p::unknown_codec(name, CODECS))
                })
            }

            extern "C" fn new_capable_codec(
                name: __p::RStr<'_>,
                params: __p::RStr<'_>,
            ) -> __p::RResult<__p::FfiCapableCodecBox, __p::FfiError> {
                __p::guard(|| {
                    $(
                        if name.as_str() == <$codec as $crate::Codec>::NAME {
                            return __p::new_capable_codec::<$codec>(params);
                        }
                    )+
                    Err(__p::unknown_codec(name, CODECS))
                })
            }

            fn root_module() -> __p::PluginModRef {
                __p::install_panic_hook();
                __p::PrefixTypeTrait::leak_into_prefix(__p::PluginMod {
                    unwinds: cfg!(panic = "unwind"),
                    codecs: __p::RSlice::from_slice(CODECS),
                    new_codec,
                })
            }

            fn capabilities_module() -> __p::CapabilitiesModRef {
                __p::install_panic_hook();
                __p::PrefixTypeTrait::leak_into_prefix(__p::CapabilitiesMod {
                    new_codec: new_capable_codec,
                })
            }

            extern "C" fn construct_capabilities() -> __p::RootModuleResult {
                __p::__call_root_module_loader(capabilities_module)
            }

            #[unsafe(export_name = $crate::__capabilities_symbol!())]
            static CAPABILITIES_HEADER: __p::LibHeader = unsafe {
                // SAFETY: `construct_capabilities` returns the root module of type
                // `CapabilitiesModRef` that `from_constructor` is instantiated with, as
                // abi_stable requires.
                __p::LibHeader::from_constructor::<__p::CapabilitiesModRef>(
                    construct_capabilities,
                    __p::CheckTypeLayout::Yes,
                )
            };

            extern "C" fn construct() -> __p::RootModuleResult {
                __p::__call_root_module_loader(root_module)
            }

            #[unsafe(export_name = $crate::__root_module_symbol!())]
            static ROOT_MODULE_HEADER: __p::LibHeader = unsafe {
                // SAFETY: `construct` returns the root module of type `PluginModRef` that
                // `from_constructor` is instantiated with, as abi_stable requires.
                __p::LibHeader::from_constructor::<__p::PluginModRef>(
                    construct,
                    __p::CheckTypeLayout::Yes,
                )
            };
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_module_symbol_is_abi_stables_loader_name() {
        assert_eq!(
            ROOT_MODULE_SYMBOL,
            abi_stable::library::ROOT_MODULE_LOADER_NAME
        );
    }

    #[test]
    fn guard_turns_a_panic_into_an_error_with_its_message() {
        install_panic_hook();
        let result: RResult<(), FfiError> = guard(|| panic!("boom {}", 7));
        let err = CodecError::from(result.unwrap_err());
        assert_eq!(err.kind(), ErrorKind::Panicked);
        assert!(
            err.message().starts_with("panicked at "),
            "{}",
            err.message()
        );
        assert!(err.message().ends_with(": boom 7"), "{}", err.message());
    }

    #[test]
    fn errors_keep_kind_key_and_message_across_the_boundary() {
        let err = CodecError::invalid_param("head_chars", "too big");
        let back = CodecError::from(FfiError::from(err.clone()));
        assert_eq!(back, err);
    }
}
