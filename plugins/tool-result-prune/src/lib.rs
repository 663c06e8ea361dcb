//! `tool_result_prune`: cuts an over-budget tool result down to a bounded head, a fixed marker
//! and a bounded tail, without a model.
//!
//! A result whose text is longer than `threshold_chars` keeps its first `head_chars` and last
//! `tail_chars` units, with `"\n\n[... tool result middle pruned ...]\n\n"` (39 code points)
//! where the cut starts. Only text counts, and the texts of one result count together:
//!
//! - a plain-text payload, or a JSON string;
//! - an array of content blocks, `{"type": "text", "text": …}` among blocks of other types;
//! - an object whose `content` member is such an array (the MCP tool-result shape).
//!
//! Blocks of other types stay in their places, a text block the cut empties is dropped, and
//! every other member keeps its exact text. The result then has at most `threshold_chars` units,
//! so pruning it again changes nothing. Lossy, so it acts at `normal` and `aggressive` and
//! passes through at `minimal`; any other JSON payload passes through.
#![forbid(unsafe_code)]

mod prune;
mod shape;

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload, PayloadKind};

use parrot_json::Span;

use crate::prune::{Budget, MARKER_UNITS, Unit};
use crate::shape::{Block, Shape};

/// The `tool_result_prune` codec.
///
/// Params, checked when the host is built:
///
/// | key               | default         | meaning                                         |
/// |-------------------|-----------------|-------------------------------------------------|
/// | `threshold_chars` | 8192            | prune when the text is longer than this (≥ 1)   |
/// | `head_chars`      | 4096            | units kept from the start                       |
/// | `tail_chars`      | 1024            | units kept from the end                         |
/// | `unit`            | `"code_points"` | what counts: `"code_points"` or `"graphemes"`   |
///
/// `head_chars + 39 + tail_chars` must not exceed `threshold_chars`, so the output always fits
/// under the threshold. With `unit = "graphemes"` the three counts are extended grapheme
/// clusters (the marker counts 39) and no cluster is ever split.
///
/// # Examples
///
/// With `threshold_chars = 50, head_chars = 4, tail_chars = 3`, at `normal`:
///
/// ```text
/// [{"type":"text","text":"AAAA…(400)"},      [{"type":"text","text":"AAAA\n\n[... tool result middle pruned ...]\n\n"},
///  {"type":"reasoning","text":"…"},      →    {"type":"reasoning","text":"…"},
///  {"type":"text","text":"BBBB…(300)"},       {"type":"tool_use","id":"t1"},
///  {"type":"tool_use","id":"t1"},             {"type":"text","text":"CCC"}]
///  {"type":"text","text":"CCCC…(300)"}]
/// ```
#[derive(Debug)]
pub struct ToolResultPrune {
    budget: Budget,
}

impl Codec for ToolResultPrune {
    const NAME: &'static str = "tool_result_prune";

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        let threshold = threshold(params)?;
        let head = params.usize("head_chars", 4096)?;
        let tail = params.usize("tail_chars", 1024)?;
        let unit = Unit::from_name(params.choice("unit", &Unit::NAMES, "code_points")?);
        // A misspelled key is the likelier cause of a broken rule below (a default stood in for
        // the value meant), so it is reported first.
        params.clone().finish()?;
        let fits = head as u128 + MARKER_UNITS as u128 + tail as u128;
        if fits > threshold as u128 {
            return Err(CodecError::invalid_params(format!(
                "head_chars + 39 + tail_chars = {head} + 39 + {tail} = {fits} exceeds \
                 threshold_chars = {threshold}: the head, the 39-character marker and the tail \
                 must fit within the threshold; lower head_chars or tail_chars, or raise \
                 threshold_chars to at least {fits}"
            )));
        }
        Ok(ToolResultPrune {
            budget: Budget {
                threshold,
                head,
                tail,
                unit,
            },
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if !level.allows_loss() {
            return Ok(Outcome::Unchanged);
        }
        let pruned = match payload.kind() {
            PayloadKind::Text => self.budget.prune_one(payload.text()),
            PayloadKind::Json => self.prune_json(payload.text()),
        };
        Ok(pruned.map_or(Outcome::Unchanged, Outcome::lossy))
    }
}

impl ToolResultPrune {
    /// The pruned payload, or `None` when it has no prunable text or is within the threshold.
    fn prune_json(&self, json: &str) -> Option<String> {
        match shape::shape(json)? {
            Shape::String(span) => {
                let text = parrot_json::decode_string(&json[span.clone()]).ok()?;
                let pruned = self.budget.prune_one(&text)?;
                Some(splice(json, span, &parrot_json::encode_string(&pruned)))
            }
            Shape::Blocks { blocks } => {
                let texts = blocks
                    .iter()
                    .filter_map(|block| block.text.clone())
                    .map(|span| parrot_json::decode_string(&json[span]).ok())
                    .collect::<Option<Vec<_>>>()?;
                let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
                let pruned = self.budget.prune(&texts)?;
                rebuild(json, &blocks, pruned)
            }
        }
    }
}

/// `json` with the blocks' texts replaced by their pruned texts (`None`: as it was), dropping
/// the text blocks the cut emptied. Every other byte is copied as it was, and a block keeps the
/// separator that preceded it.
fn rebuild(json: &str, blocks: &[Block], pruned: Vec<Option<String>>) -> Option<String> {
    let mut pruned = pruned.into_iter();
    let mut out = String::with_capacity(json.len());
    out.push_str(&json[..blocks.first()?.span.start]);
    let mut kept_any = false;
    for (i, block) in blocks.iter().enumerate() {
        let new_text = match block.text {
            Some(_) => pruned.next()?,
            None => None,
        };
        if new_text.as_deref() == Some("") {
            continue;
        }
        if kept_any {
            out.push_str(&json[blocks[i - 1].span.end..block.span.start]);
        }
        kept_any = true;
        match (new_text, &block.text) {
            (Some(new_text), Some(text)) => {
                out.push_str(&json[block.span.start..text.start]);
                parrot_json::write_string(&new_text, &mut out);
                out.push_str(&json[text.end..block.span.end]);
            }
            _ => out.push_str(&json[block.span.clone()]),
        }
    }
    out.push_str(&json[blocks.last()?.span.end..]);
    Some(out)
}

/// `json` with the bytes of `span` replaced by `with`.
fn splice(json: &str, span: Span, with: &str) -> String {
    [&json[..span.start], with, &json[span.end..]].concat()
}

/// `threshold_chars`, whose error shows the value as written (`got -5`, `got "big"`), where
/// `Params::positive` would name its type too.
fn threshold(params: &mut Params) -> Result<usize, CodecError> {
    const KEY: &str = "threshold_chars";
    match params.get::<Given>(KEY)? {
        None => Ok(8192),
        Some(Given::Count(n)) if n > 0 => usize::try_from(n).map_err(|_| {
            CodecError::invalid_param(KEY, format!("{n} is too large for this machine"))
        }),
        Some(other) => Err(CodecError::invalid_param(
            KEY,
            format!("expected a positive integer, got {other}"),
        )),
    }
}

/// A param's value of any type, shown as written.
enum Given {
    Count(u64),
    Other(String),
}

impl std::fmt::Display for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Given::Count(n) => write!(f, "{n}"),
            Given::Other(text) => f.write_str(text),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Given {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Given, D::Error> {
        deserializer.deserialize_any(GivenVisitor)
    }
}

struct GivenVisitor;

impl<'de> serde::de::Visitor<'de> for GivenVisitor {
    type Value = Given;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Given, E> {
        Ok(Given::Other(v.to_string()))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Given, E> {
        Ok(Given::Count(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Given, E> {
        Ok(Given::Other(v.to_string()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Given, E> {
        Ok(Given::Other(v.to_string()))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Given, E> {
        Ok(Given::Other(parrot_json::encode_string(v)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Given, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Given::Other("a list".to_owned()))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Given, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(Given::Other("a table".to_owned()))
    }
}

parrot_codec_api::export_codecs!(ToolResultPrune);

#[cfg(test)]
mod contract;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::MARKER;
    use parrot_codec_api::build;

    const M: &str = MARKER;

    fn codec(params: &str) -> ToolResultPrune {
        build::<ToolResultPrune>(Params::from_json(params).unwrap()).unwrap()
    }

    fn params_error(params: &str) -> String {
        build::<ToolResultPrune>(Params::from_json(params).unwrap())
            .unwrap_err()
            .to_string()
    }

    fn prune(codec: &ToolResultPrune, payload: Payload<'_>) -> Option<String> {
        match codec.compress(payload, Level::Normal).unwrap() {
            Outcome::Unchanged => None,
            Outcome::Changed { payload, lossy } => {
                assert!(lossy, "every change drops text");
                Some(payload)
            }
        }
    }

    fn block(kind: &str, text: &str) -> String {
        format!(r#"{{"type":"{kind}","text":"{text}"}}"#)
    }

    const SMALL: &str = r#"{"threshold_chars": 50, "head_chars": 4, "tail_chars": 3}"#;

    #[test]
    fn results_are_pruned_by_shape() {
        let (a, b, c) = ("A".repeat(400), "B".repeat(300), "C".repeat(300));
        let mut cases: Vec<(&str, Payload<'_>, Option<String>)> = Vec::new();
        let exactly_50 = "x".repeat(50);
        let over_50 = format!("abcd{}xyz", "-".repeat(44));
        let json_string = format!(r#""abcd{}\"yz""#, "\\n".repeat(44));
        let blocks = format!(
            "[{},{},{},{},{}]",
            block("text", &a),
            block("reasoning", "thinking"),
            block("text", &b),
            r#"{"type":"tool_use","id":"t1","input":{"n":1.50}}"#,
            block("text", &c),
        );
        let mcp = format!(
            "{{\n  \"content\": [\n    {},\n    {}\n  ],\n  \"isError\": false,\n  \"n\": 1.50\n}}",
            block("text", &a),
            block("text", &c),
        );
        // The cut starts exactly where the second block does: the first keeps its bytes.
        let boundary = format!(
            "[{}, {}, {}]",
            r#"{"text":"\u0041AAA","type":"text"}"#,
            block("text", &b),
            block("text", "CCC"),
        );
        let no_text = format!("[{}]", block("image", &a));
        let not_blocks = format!(r#"{{"log":"{a}"}}"#);
        cases.extend([
            (SMALL, Payload::text_only(&exactly_50), None),
            (
                SMALL,
                Payload::text_only(&over_50),
                Some(format!("abcd{M}xyz")),
            ),
            (
                SMALL,
                Payload::json(&json_string),
                Some(r#""abcd\n\n[... tool result middle pruned ...]\n\n\"yz""#.to_owned()),
            ),
            (
                SMALL,
                Payload::json(&blocks),
                Some(format!(
                    r#"[{},{},{},{}]"#,
                    r#"{"type":"text","text":"AAAA\n\n[... tool result middle pruned ...]\n\n"}"#,
                    block("reasoning", "thinking"),
                    r#"{"type":"tool_use","id":"t1","input":{"n":1.50}}"#,
                    block("text", "CCC"),
                )),
            ),
            (
                SMALL,
                Payload::json(&mcp),
                Some(format!(
                    "{{\n  \"content\": [\n    {},\n    {}\n  ],\n  \"isError\": false,\n  \"n\": 1.50\n}}",
                    r#"{"type":"text","text":"AAAA\n\n[... tool result middle pruned ...]\n\n"}"#,
                    block("text", "CCC"),
                )),
            ),
            (
                SMALL,
                Payload::json(&boundary),
                Some(format!(
                    r#"[{}, {}, {}]"#,
                    r#"{"text":"\u0041AAA","type":"text"}"#,
                    r#"{"type":"text","text":"\n\n[... tool result middle pruned ...]\n\n"}"#,
                    block("text", "CCC"),
                )),
            ),
            (
                r#"{"threshold_chars": 50, "head_chars": 0, "tail_chars": 11}"#,
                Payload::text_only(&over_50),
                Some(format!("{M}{}xyz", "-".repeat(8))),
            ),
            (
                r#"{"threshold_chars": 39, "head_chars": 0, "tail_chars": 0}"#,
                Payload::text_only(&over_50),
                Some(M.to_owned()),
            ),
            (SMALL, Payload::json(&no_text), None),
            (SMALL, Payload::json(&not_blocks), None),
            (SMALL, Payload::json("[]"), None),
            (SMALL, Payload::json("12345678901234567890123456789012345678901234567890123"), None),
        ]);
        for (params, payload, expected) in cases {
            let codec = codec(params);
            let out = prune(&codec, payload);
            assert_eq!(out, expected, "{params} on {}", payload.text());
            if let Some(out) = out {
                let again = Payload::new(&out, payload.kind());
                assert_eq!(prune(&codec, again), None, "a second pass on {out}");
            }
        }
    }

    #[test]
    fn defaults_keep_4096_then_the_marker_then_1024() {
        let text: String = (0..10_000)
            .map(|i| char::from_u32(0x4E00 + i % 500).unwrap())
            .collect();
        let codec = codec("{}");
        let out = prune(&codec, Payload::text_only(&text)).unwrap();
        assert_eq!(out.chars().count(), 5159);
        let chars: Vec<char> = text.chars().collect();
        let head: String = chars[..4096].iter().collect();
        let tail: String = chars[10_000 - 1024..].iter().collect();
        assert_eq!(out, format!("{head}{M}{tail}"));
        assert_eq!(prune(&codec, Payload::text_only(&out)), None);
    }

    #[test]
    fn units_never_split_what_they_count() {
        let family = "👩\u{200d}👩\u{200d}👧";
        let flag = "🇫🇷";
        let accented = "e\u{301}";
        let cases: &[(&str, String, String)] = &[
            (
                SMALL,
                "😀".repeat(60),
                format!("{}{M}{}", "😀".repeat(4), "😀".repeat(3)),
            ),
            (
                r#"{"threshold_chars": 50, "head_chars": 4, "tail_chars": 3, "unit": "graphemes"}"#,
                family.repeat(60),
                format!("{}{M}{}", family.repeat(4), family.repeat(3)),
            ),
            (
                r#"{"threshold_chars": 50, "head_chars": 4, "tail_chars": 3, "unit": "graphemes"}"#,
                flag.repeat(51),
                format!("{}{M}{}", flag.repeat(4), flag.repeat(3)),
            ),
            (
                r#"{"threshold_chars": 50, "head_chars": 3, "tail_chars": 2, "unit": "graphemes"}"#,
                accented.repeat(51),
                format!("{}{M}{}", accented.repeat(3), accented.repeat(2)),
            ),
            // Counting code points splits the same clusters, as the unit promises.
            (
                r#"{"threshold_chars": 50, "head_chars": 3, "tail_chars": 1}"#,
                accented.repeat(51),
                format!("e\u{301}e{M}\u{301}"),
            ),
        ];
        for (params, input, expected) in cases {
            let codec = codec(params);
            let out = prune(&codec, Payload::text_only(input)).unwrap();
            assert_eq!(&out, expected, "{params}");
            assert!(!out.contains('\u{fffd}'));
            assert_eq!(prune(&codec, Payload::text_only(&out)), None);
        }
    }

    #[test]
    fn graphemes_count_clusters_against_the_threshold() {
        let family = "👩\u{200d}👩\u{200d}👧";
        let graphemes = codec(
            r#"{"threshold_chars": 50, "head_chars": 4, "tail_chars": 3, "unit": "graphemes"}"#,
        );
        // 50 clusters (250 code points) are within a threshold of 50 clusters.
        assert_eq!(
            prune(&graphemes, Payload::text_only(&family.repeat(50))),
            None
        );
        let code_points = codec(SMALL);
        assert!(prune(&code_points, Payload::text_only(&family.repeat(50))).is_some());
    }

    #[test]
    fn minimal_passes_through() {
        let codec = codec(SMALL);
        let text = "x".repeat(100);
        for level in [Level::Minimal, Level::None] {
            let out = codec.compress(Payload::text_only(&text), level).unwrap();
            assert_eq!(out, Outcome::Unchanged, "at {level:?}");
        }
        let out = codec
            .compress(Payload::text_only(&text), Level::Aggressive)
            .unwrap();
        assert!(out.is_lossy());
    }

    #[test]
    fn bad_params_fail_naming_the_rule() {
        let cases = [
            (
                r#"{"head_chars": 20, "tail_chars": 20, "threshold_chars": 50}"#,
                "head_chars + 39 + tail_chars = 20 + 39 + 20 = 79 exceeds threshold_chars = 50: \
                 the head, the 39-character marker and the tail must fit within the threshold; \
                 lower head_chars or tail_chars, or raise threshold_chars to at least 79",
            ),
            (
                r#"{"threshold_chars": 0}"#,
                "param \"threshold_chars\": expected a positive integer, got 0",
            ),
            (
                r#"{"threshold_chars": -5}"#,
                "param \"threshold_chars\": expected a positive integer, got -5",
            ),
            (
                r#"{"threshold_chars": "big"}"#,
                "param \"threshold_chars\": expected a positive integer, got \"big\"",
            ),
            (
                r#"{"head_chars": -1}"#,
                "param \"head_chars\": expected a non-negative integer, got a number (-1)",
            ),
            (
                r#"{"tail_chars": 2.5}"#,
                "param \"tail_chars\": expected a non-negative integer, got a number (2.5)",
            ),
            (
                r#"{"unit": "bytes"}"#,
                "param \"unit\": expected one of \"code_points\", \"graphemes\", got a string (\"bytes\")",
            ),
            (
                r#"{"limit": 10}"#,
                "param \"limit\": unknown key \
                 (known: threshold_chars, head_chars, tail_chars, unit)",
            ),
            // The typo is the cause of the broken rule (8192 stood in for 10), so it comes first.
            (
                r#"{"treshold_chars": 10}"#,
                "param \"treshold_chars\": unknown key; did you mean \"threshold_chars\"? \
                 (known: threshold_chars, head_chars, tail_chars, unit)",
            ),
        ];
        for (params, expected) in cases {
            assert_eq!(params_error(params), expected, "for {params}");
        }
    }

    #[test]
    fn truncated_or_invalid_json_is_left_alone_without_panicking() {
        let codec = codec(SMALL);
        let text = "é😀\\\"[]{}".repeat(10);
        let json = format!(
            r#"{{"content":[{},{{"type":"image","data":"{text}"}},{}],"isError":false}}"#,
            block("text", &text),
            block("text", &text),
        );
        assert!(prune(&codec, Payload::json(&json)).is_some());
        for (end, _) in json.char_indices().skip(1) {
            let prefix = &json[..end];
            let out = codec.compress(Payload::json(prefix), Level::Normal);
            assert_eq!(out, Ok(Outcome::Unchanged), "for {prefix}");
        }
    }

    #[test]
    fn the_largest_valid_head_and_tail_fill_the_threshold() {
        let codec = codec(r#"{"threshold_chars": 79, "head_chars": 20, "tail_chars": 20}"#);
        let out = prune(&codec, Payload::text_only(&"x".repeat(80))).unwrap();
        assert_eq!(out.chars().count(), 79);
        assert_eq!(prune(&codec, Payload::text_only(&out)), None);
    }
}
