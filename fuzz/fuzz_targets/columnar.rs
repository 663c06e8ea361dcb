#![no_main]
//! `columnar` on any text: the codec contract (`parrot-codec-test`), three param sets.

use libfuzzer_sys::fuzz_target;
use parrot_codecs::Columnar;
use parrot_codecs_fuzz::{build, split};

const PARAMS: [&str; 3] = [
    r#"{"min_rows": 1}"#,
    r#"{"min_rows": 2, "max_field_chars": 41, "sample_rows": 1}"#,
    r#"{"min_rows": 3, "heterogeneity_ratio": 1}"#,
];

fuzz_target!(|data: &[u8]| {
    let Some((choice, text)) = split(data) else {
        return;
    };
    let codec: Columnar = build(PARAMS[usize::from(choice) % PARAMS.len()]);
    parrot_codec_test::assert_contract(&codec, text);
});
