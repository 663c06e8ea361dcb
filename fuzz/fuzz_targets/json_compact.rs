#![no_main]

use libfuzzer_sys::fuzz_target;
use parrot_codecs::JsonCompact;
use parrot_codecs_fuzz::{build, check, split, without_null_members};

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
    check(&codec, text, |a, b| {
        without_null_members(a.clone()) == without_null_members(b.clone())
    });
});
