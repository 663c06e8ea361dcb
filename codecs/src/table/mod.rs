//! `table`: whitespace-aligned tables (draft docs).

mod decode;
mod detect;
mod encode;
mod note;
mod scan;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};

/// The most a payload of this codec expands to, as a multiple of its size: the inverse
/// refuses more, and the codec leaves a table that would need more unchanged.
const MAX_EXPANSION: usize = 64;

/// The `table` codec: see the [module documentation](self).
#[derive(Debug)]
pub struct Table;

impl Table {
    /// Rebuilds the text of a lossless outcome: the padding of every row put back.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput`, naming the line, when `payload` is not text
    /// this codec wrote.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        decode::expand(payload)
    }
}

impl Codec for Table {
    const NAME: &'static str = "table";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);

    fn new(_: &mut Params) -> Result<Self, CodecError> {
        Ok(Table)
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if payload.is_json() || !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        let done = encode::compress(input).map(|text| crate::Transformed { text, lossy: false });
        Ok(crate::Transformed::outcome(done, input))
    }
}

inventory::submit! { crate::Builtin::of::<Table>() }
