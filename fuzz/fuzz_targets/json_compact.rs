#![no_main]
//! `json_compact` on any text: the codec contract (`parrot-codec-test`), null members counting
//! as absent (its null elision), four param sets.

use libfuzzer_sys::fuzz_target;
use parrot_codec_test::Contract;
use parrot_codecs::JsonCompact;
use parrot_codecs_fuzz::{build, split};

const PARAMS: [&str; 4] = [
    "{}",
    r#"{"max_string_chars": 41, "max_array_items": 3}"#,
    r#"{"elide_nulls": false}"#,
    r#"{"dedup": false, "max_array_items": 1}"#,
];

fuzz_target!(|data: &[u8]| {
    let Some((choice, text)) = split(data) else {
        return;
    };
    let codec: JsonCompact = build(PARAMS[usize::from(choice) % PARAMS.len()]);
    Contract::new(&codec).assert(text);
});
