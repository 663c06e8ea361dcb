//! The `json_compact` codec (see SPEC §2). Its transformations land with their own issue; until then
//! it passes every payload through unchanged.

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};

/// The `json_compact` codec.
#[derive(Debug)]
pub struct JsonCompact;

impl Codec for JsonCompact {
    const NAME: &'static str = "json_compact";

    fn new(_params: &mut Params) -> Result<Self, CodecError> {
        Ok(JsonCompact)
    }

    fn compress(&self, _payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        Ok(Outcome::Unchanged)
    }
}

inventory::submit! { crate::Builtin::of::<JsonCompact>() }
