//! What every fuzz target checks of a codec, on any input.

use parrot_codec_api::{Codec, Level, Outcome, Params, Payload, PayloadKind};
use serde::Deserialize;
use serde_json::Value;

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

/// Parses JSON exactly (number text kept), as deep as it goes; `None` if it is not JSON.
pub fn parse(text: &str) -> Option<Value> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = Value::deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// `value` with every object member whose value is `null` removed, at every depth.
pub fn without_null_members(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(members) => {
                members.retain(|_, member| !member.is_null());
                members.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// Runs `codec` on `text` (as JSON and as plain text) at every level and checks: no panic
/// (the fuzzer sees it), the same bytes twice, an output smaller than the input and itself
/// JSON, a lossless outcome only from JSON input and expanding back to an equal value
/// (`equal`), a lossy one only where loss is allowed and not expanding back.
pub fn check<C: Codec>(codec: &C, text: &str, equal: impl Fn(&Value, &Value) -> bool) {
    for kind in [PayloadKind::Json, PayloadKind::Text] {
        for level in Level::ALL {
            let payload = Payload::new(text, kind);
            let outcome = codec.compress(payload, level).expect("codecs do not fail");
            let again = codec.compress(payload, level).expect("codecs do not fail");
            assert_eq!(outcome, again, "not deterministic at {level}");
            let Outcome::Changed { payload, lossy } = outcome else {
                continue;
            };
            assert_ne!(level, Level::None, "changed at none");
            assert!(payload.len() < text.len(), "grew at {level}: {payload:?}");
            let input = parse(text).unwrap_or_else(|| panic!("transformed non-JSON: {text:?}"));
            assert!(parse(&payload).is_some(), "output is not JSON: {payload:?}");
            let expanded = codec.expand(&payload).ok().and_then(|text| parse(&text));
            if lossy {
                assert!(level.allows_loss(), "lossy at {level}");
                if let Some(expanded) = expanded {
                    assert!(
                        !equal(&expanded, &input),
                        "claims loss but expands back: {payload:?}"
                    );
                }
            } else {
                let expanded = expanded.unwrap_or_else(|| panic!("no inverse for {payload:?}"));
                assert!(
                    equal(&expanded, &input),
                    "expands to another value: {payload:?}"
                );
            }
        }
    }
}
