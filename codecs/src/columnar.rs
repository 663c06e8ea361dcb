//! The `columnar` codec (see SPEC §2). Its transformations land with their own issue; until then
//! it passes every payload through unchanged.

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};

/// The `columnar` codec.
#[derive(Debug)]
pub struct Columnar;

impl Codec for Columnar {
    const NAME: &'static str = "columnar";

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        params.positive("min_rows", 20)?;
        params.f64("heterogeneity_ratio", 1.5)?;
        params.usize("max_field_chars", 2000)?;
        params.usize("sample_rows", 5)?;
        Ok(Columnar)
    }

    fn compress(&self, _payload: Payload<'_>, _level: Level) -> Result<Outcome, CodecError> {
        Ok(Outcome::Unchanged)
    }
}

inventory::submit! { crate::Builtin::of::<Columnar>() }
