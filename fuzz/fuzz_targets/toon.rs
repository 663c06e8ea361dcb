#![no_main]
//! `toon` on any JSON: no panic, the same bytes twice, lossless only, and the inverse gives
//! the input back (numbers by their text, member order free).

use libfuzzer_sys::fuzz_target;
use parrot_codec_api::{Codec, Level, Outcome, Payload};
use parrot_codecs_fuzz::{build, parse, split};
use parrot_plugin_toon::Toon;

fuzz_target!(|data: &[u8]| {
    let Some((choice, text)) = split(data) else {
        return;
    };
    let Some(input) = parse(text) else {
        return;
    };
    let codec: Toon = build(if choice & 1 == 0 {
        r#"{"hoist": true}"#
    } else {
        r#"{"hoist": false}"#
    });
    let out = codec.compress(Payload::json(text), Level::Minimal).unwrap();
    assert_eq!(
        out,
        codec.compress(Payload::json(text), Level::Minimal).unwrap()
    );
    let Outcome::Changed { payload, lossy } = out else {
        return;
    };
    assert!(!lossy);
    assert!(payload.len() < text.len());
    let expanded = codec.expand(&payload).expect("its own output expands");
    assert_eq!(
        parse(&expanded),
        Some(input),
        "expands to another value: {payload:?}"
    );
});
