//! Test fixture: a library whose root module lists two codecs under one name, as a library
//! built without `export_codecs!` (which refuses such a list at compile time) can. The host
//! must refuse it at load, naming the library. Not shipped.

use abi_stable::export_root_module;
use abi_stable::prefix_type::PrefixTypeTrait;
use parrot_codec_api::__private::{
    unknown_codec, FfiCodecBox, FfiError, PluginMod, PluginModRef, RResult, RSlice, RStr,
};
use parrot_codec_api::{Codec, CodecError, CodecMeta, Level, Outcome, Params, Payload};

macro_rules! twin {
    ($ty:ident) => {
        /// Passes everything through, under the name `twin`.
        pub struct $ty;

        impl Codec for $ty {
            const NAME: &'static str = "twin";

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

twin!(Left);
twin!(Right);

const CODECS: &[CodecMeta] = &[CodecMeta::of::<Left>(), CodecMeta::of::<Right>()];

extern "C" fn new_codec(name: RStr<'_>, _params: RStr<'_>) -> RResult<FfiCodecBox, FfiError> {
    RResult::RErr(unknown_codec(name, CODECS).into())
}

#[export_root_module]
fn root_module() -> PluginModRef {
    PluginMod {
        unwinds: true,
        codecs: RSlice::from_slice(CODECS),
        new_codec,
    }
    .leak_into_prefix()
}
