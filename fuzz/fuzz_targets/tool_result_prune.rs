#![no_main]
//! `tool_result_prune` on any text, as text and as JSON: the codec contract
//! (`parrot-codec-test`), and beyond it nothing at `minimal`, lossy output never over the
//! threshold, and a second pass a no-op.

use libfuzzer_sys::fuzz_target;
use parrot_codec_api::{Codec, Level, Outcome, Payload, PayloadKind};
use parrot_codecs_fuzz::{build, is_json, split};
use parrot_plugin_tool_result_prune::ToolResultPrune;
use unicode_segmentation::UnicodeSegmentation;

const PARAMS: [&str; 3] = [
    r#"{"threshold_chars": 50, "head_chars": 4, "tail_chars": 3}"#,
    r#"{"threshold_chars": 60, "head_chars": 10, "tail_chars": 10, "unit": "graphemes"}"#,
    r#"{"threshold_chars": 40, "head_chars": 0, "tail_chars": 1}"#,
];

fuzz_target!(|data: &[u8]| {
    let Some((choice, text)) = split(data) else {
        return;
    };
    let codec: ToolResultPrune = build(PARAMS[usize::from(choice) % PARAMS.len()]);
    parrot_codec_test::assert_contract(&codec, text);
    for kind in [PayloadKind::Text, PayloadKind::Json] {
        if kind == PayloadKind::Json && !is_json(text) {
            continue;
        }
        assert_eq!(
            codec
                .compress(Payload::new(text, kind), Level::Minimal)
                .unwrap(),
            Outcome::Unchanged
        );
        let out = codec
            .compress(Payload::new(text, kind), Level::Normal)
            .unwrap();
        assert_eq!(
            out,
            codec
                .compress(Payload::new(text, kind), Level::Normal)
                .unwrap()
        );
        let Outcome::Changed { payload, lossy } = out else {
            continue;
        };
        assert!(lossy, "pruning is lossy");
        if kind == PayloadKind::Text {
            let index = usize::from(choice) % PARAMS.len();
            let threshold = [50, 60, 40][index];
            // The second params count grapheme clusters (a "\r\n" is one).
            let units = if index == 1 {
                payload.graphemes(true).count()
            } else {
                payload.chars().count()
            };
            assert!(units <= threshold, "{payload:?}");
        } else {
            assert!(is_json(&payload), "not JSON: {payload:?}");
        }
        assert_eq!(
            codec
                .compress(Payload::new(&payload, kind), Level::Normal)
                .unwrap(),
            Outcome::Unchanged,
            "a second pass changed {payload:?}"
        );
    }
});
