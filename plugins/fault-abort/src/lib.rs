//! Test fixture: an ordinary codec, built by the tests with `panic = "abort"`. Not shipped.
#![forbid(unsafe_code)]

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};

/// Passes everything through.
pub struct AbortPassthrough;

impl Codec for AbortPassthrough {
    const NAME: &'static str = "abort_passthrough";

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(AbortPassthrough)
    }

    fn compress(&self, _payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        Ok(Outcome::Unchanged)
    }
}

parrot_codec_api::export_codecs!(AbortPassthrough);
