//! Test fixture: codecs that fail or misbehave in every way a codec can, and one that behaves,
//! [`CsvRows`], the plugin codec with text output. Not shipped.
#![forbid(unsafe_code)]

mod csv_rows;

pub use csv_rows::CsvRows;

use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};

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

/// Claims a lossless outcome but keeps only the first half of the text; its inverse cannot
/// restore the rest.
pub struct FaultLiar;

impl Codec for FaultLiar {
    const NAME: &'static str = "fault_liar";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(FaultLiar)
    }

    fn compress(&self, payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        let text = payload.text();
        let half = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        Ok(Outcome::lossless(&text[..half]))
    }
}

impl FaultLiar {
    /// An inverse that gives back what it is given, so the lost half stays lost.
    fn expand(&self, payload: &str) -> Result<String, CodecError> {
        Ok(payload.to_owned())
    }
}

/// Claims a lossless outcome but keeps only the first half of the text, and offers no
/// inverse: a claim the host cannot check (what an outside author who forgot the inverse, or
/// who is wrong, ships).
pub struct FaultUnchecked;

impl Codec for FaultUnchecked {
    const NAME: &'static str = "fault_unchecked";

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(FaultUnchecked)
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let text = payload.text();
        let half = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        Ok(Outcome::lossless(&text[..half]))
    }
}

/// Returns text that is not JSON, whatever it is given.
pub struct FaultGarbage;

impl Codec for FaultGarbage {
    const NAME: &'static str = "fault_garbage";

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(FaultGarbage)
    }

    fn compress(&self, _payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        Ok(Outcome::lossless("{not json"))
    }
}

/// Returns a payload twice as large as its input, claimed lossless.
pub struct FaultBloat;

impl Codec for FaultBloat {
    const NAME: &'static str = "fault_bloat";

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(FaultBloat)
    }

    fn compress(&self, payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        Ok(Outcome::lossless(payload.text().repeat(2)))
    }
}

/// Sleeps `sleep_ms` (default 5) on every call, then passes the payload through.
pub struct FaultSlow {
    sleep: std::time::Duration,
}

impl Codec for FaultSlow {
    const NAME: &'static str = "fault_slow";

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        Ok(FaultSlow {
            sleep: std::time::Duration::from_millis(params.u64("sleep_ms", 5)?),
        })
    }

    fn compress(&self, _payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        std::thread::sleep(self.sleep);
        Ok(Outcome::Unchanged)
    }
}

parrot_codec_api::export_codecs!(
    FaultError,
    FaultPanic,
    FaultConstructor,
    FaultLiar,
    FaultUnchecked,
    FaultGarbage,
    FaultBloat,
    FaultSlow,
    CsvRows
);
