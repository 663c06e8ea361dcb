#![no_main]
//! `json_nested` on any text, with its default params and with tables and references made
//! eager (`min_rows = 1`, `min_ref_bytes = 1`): the codec contract (`parrot-codec-test`), which
//! expands every lossless outcome back to the input (numbers by their text, member order free,
//! null members absent); and, beyond the contract, never lossy at any level, and its inverse
//! never panics on any text.

use libfuzzer_sys::fuzz_target;
use parrot_codec_api::{Codec, Level, Payload};
use parrot_codecs::JsonNested;
use parrot_codecs_fuzz::{build, is_json, split};

fuzz_target!(|data: &[u8]| {
    let Some((choice, text)) = split(data) else {
        return;
    };
    let codec: JsonNested = build(if choice & 1 == 0 {
        "{}"
    } else {
        r#"{"min_rows": 1, "min_ref_bytes": 1}"#
    });
    parrot_codec_test::assert_contract(&codec, text);
    if is_json(text) {
        for level in Level::ALL {
            let out = codec.compress(Payload::json(text), level).unwrap();
            assert!(!out.is_lossy(), "lossy at {level}");
        }
    }
    // Any text given to the inverse: an error or a text, never a panic.
    let _ = codec.expand(text);
});
