#![no_main]
//! `toon` on any text, hoisting on and off: the codec contract (`parrot-codec-test`), which
//! takes its TOON output for a JSON payload as text (it declares `TEXT_OUTPUT`) and expands
//! every lossless outcome back to the input (numbers by their text, member order free); and,
//! beyond the contract, never lossy at any level.

use libfuzzer_sys::fuzz_target;
use parrot_codec_api::{Codec, Level, Payload};
use parrot_codecs::Toon;
use parrot_codecs_fuzz::{build, is_json, split};

fuzz_target!(|data: &[u8]| {
    let Some((choice, text)) = split(data) else {
        return;
    };
    let codec: Toon = build(if choice & 1 == 0 {
        r#"{"hoist": true}"#
    } else {
        r#"{"hoist": false}"#
    });
    parrot_codec_test::assert_contract(&codec, text);
    if is_json(text) {
        for level in Level::ALL {
            let out = codec.compress(Payload::json(text), level).unwrap();
            assert!(!out.is_lossy(), "lossy at {level}");
        }
    }
});
