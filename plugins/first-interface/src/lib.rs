//! Test fixture: a library exporting its codecs as `export_codecs!` did before the
//! capabilities module (interface 0.1.0 as first released): the first root module alone,
//! `PluginMod`, whose constructor builds `FfiCodec` objects. The host must load it, run its
//! codec, and cut the codec's output as text: the codec declares a cut ([`Codec::CUT`]), but a
//! library without the capabilities module has no way to offer it. Not shipped.

use abi_stable::export_root_module;
use abi_stable::prefix_type::PrefixTypeTrait;
use parrot_codec_api::__private::{
    guard, install_panic_hook, new_codec, unknown_codec, FfiCodecBox, FfiError, PluginMod,
    PluginModRef, RResult, RSlice, RStr,
};
use parrot_codec_api::{
    Codec, CodecError, CodecMeta, Cut, CutAt, Inverse, Level, Outcome, Params, Payload,
};

/// Writes each run of four spaces as a tab, in text that has no tab (lossless).
pub struct Tabs;

impl Tabs {
    fn expand(&self, payload: &str) -> Result<String, CodecError> {
        Ok(payload.replace('\t', "    "))
    }

    /// A cut the host cannot reach through this library: it would keep nothing and say so.
    fn cut(&self, _original: Payload<'_>, _output: &str, _room: usize) -> Option<CutAt> {
        Some(CutAt::new(0, "[first_tabs' own cut]"))
    }
}

impl Codec for Tabs {
    const NAME: &'static str = "first_tabs";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    const CUT: Option<Cut<Self>> = Some(Self::cut);

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(Tabs)
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        let text = payload.text();
        if payload.is_json() || !level.allows_change() || text.contains('\t') {
            return Ok(Outcome::Unchanged);
        }
        let out = text.replace("    ", "\t");
        Ok(if out.len() < text.len() {
            Outcome::lossless(out)
        } else {
            Outcome::Unchanged
        })
    }
}

const CODECS: &[CodecMeta] = &[CodecMeta::of::<Tabs>()];

extern "C" fn new_first_codec(name: RStr<'_>, params: RStr<'_>) -> RResult<FfiCodecBox, FfiError> {
    guard(|| {
        if name.as_str() == Tabs::NAME {
            return new_codec::<Tabs>(params);
        }
        Err(unknown_codec(name, CODECS))
    })
}

#[export_root_module]
fn root_module() -> PluginModRef {
    install_panic_hook();
    PluginMod {
        unwinds: cfg!(panic = "unwind"),
        codecs: RSlice::from_slice(CODECS),
        new_codec: new_first_codec,
    }
    .leak_into_prefix()
}
