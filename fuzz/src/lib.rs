//! What the fuzz targets share: the fuzzer's bytes split into a choice and a text, codecs built
//! from params, and JSON judged as the host judges it. The codec contract itself is
//! `parrot-codec-test`'s.

use parrot_codec_api::{Codec, Params};

/// Splits the fuzzer's bytes into a choice (the first byte) and a text; `None` if the text is
/// not UTF-8 (the host never hands such payloads to a codec).
pub fn split(data: &[u8]) -> Option<(u8, &str)> {
    let (&choice, rest) = data.split_first()?;
    Some((choice, std::str::from_utf8(rest).ok()?))
}

/// Builds a codec from a JSON params table.
pub fn build<C: Codec>(params: &str) -> C {
    parrot_codec_api::build(Params::from_json(params).expect("valid params"))
        .expect("params the codec accepts")
}

/// Whether `text` is JSON the host hands a codec as a JSON payload (valid, no object with two
/// members of one name, at most 512 levels deep).
pub fn is_json(text: &str) -> bool {
    parrot_json::check(text) == parrot_json::JsonCheck::Json
}
