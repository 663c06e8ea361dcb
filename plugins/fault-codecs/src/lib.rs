//! Test fixture: codecs that fail in every way a codec can. Not shipped.
#![forbid(unsafe_code)]

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};

/// Returns an error from every call.
pub struct FaultError;

impl Codec for FaultError {
    const NAME: &'static str = "fault_error";

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(FaultError)
    }

    fn compress(&self, payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        Err(CodecError::failed(format!(
            "refusing a payload of {} bytes",
            payload.text().len()
        )))
    }
}

/// Panics on every call.
pub struct FaultPanic;

impl Codec for FaultPanic {
    const NAME: &'static str = "fault_panic";

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(FaultPanic)
    }

    fn compress(&self, payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        panic!("fault_panic was given {} bytes", payload.text().len());
    }
}

/// Panics in its constructor, or fails there when `fail = true`.
pub struct FaultConstructor;

impl Codec for FaultConstructor {
    const NAME: &'static str = "fault_constructor";

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        if params.bool("fail", false)? {
            return Err(CodecError::invalid_params("fault_constructor always fails"));
        }
        panic!("fault_constructor panics while being built");
    }

    fn compress(&self, _payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        Ok(Outcome::Unchanged)
    }
}

parrot_codec_api::export_codecs!(FaultError, FaultPanic, FaultConstructor);
