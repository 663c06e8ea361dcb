//! Long-string clipping (CONTRACT §2.2, used by both codecs at `normal` and above).
//!
//! A string longer than the limit (in code points of its decoded value) keeps its first and
//! last code points around a marker that says how many were cut:
//! `"abcd[… 1234 chars clipped; pointer /items/3/body …]yz"`, the whole exactly the limit long.
//! The pointer is the RFC 6901 JSON Pointer of the string in the original, the selector of the
//! recovery call (`wm_get_result`, `recover --pointer`) that returns the whole string; it is
//! left out (`[… 1234 chars clipped …]`) when it is not known or when the marker would take
//! more than half the limit. The kept budget (the limit less the marker) goes two thirds
//! before the marker and one third after. Escapes are kept as written and never split: the
//! clip works on the string's text as written, one escape sequence (or surrogate pair)
//! counting as the one code point it stands for (so does an escape in the pointer).

use parrot_codec_api::{CodecError, Params};

use parrot_json::{Output, RawStr};

/// The smallest limit that leaves room for the marker (20 code points plus the digits of the
/// count, at most 20) and something of the string.
pub(crate) const MIN_LIMIT: usize = 41;

/// Reads a clipping limit param: 0 (no clipping) or at least [`MIN_LIMIT`].
pub(crate) fn limit_param(
    params: &mut Params,
    key: &'static str,
    default: usize,
) -> Result<usize, CodecError> {
    let limit = params.usize(key, default)?;
    if limit != 0 && limit < MIN_LIMIT {
        return Err(CodecError::invalid_param(
            key,
            format!(
                "expected 0 (no clipping) or at least {MIN_LIMIT} (room for the clip marker), got {limit}"
            ),
        ));
    }
    Ok(limit)
}

/// Writes `string` into `out`, clipped to `limit` code points when it is longer (`limit` 0:
/// never), the marker naming the string's JSON Pointer in the original when `pointer` gives it
/// (called only when the string is clipped). Returns whether it clipped.
pub(crate) fn write_clipped<O: Output + ?Sized>(
    string: RawStr<'_>,
    limit: usize,
    pointer: impl FnOnce() -> Option<String>,
    out: &mut O,
) -> bool {
    let content = string.content();
    // A string has at least as many bytes as code points: most strings end here.
    if limit == 0 || content.len() <= limit {
        out.push_str(string.raw());
        return false;
    }
    let total = if string.is_escaped() {
        string.written_chars().count()
    } else {
        content.chars().count()
    };
    if total <= limit {
        out.push_str(string.raw());
        return false;
    }
    // `; pointer P`, as written in the JSON string, and its length in code points.
    let label = pointer().and_then(|pointer| {
        let written = parrot_json::encode_string(&pointer);
        let written = written.get(1..written.len() - 1)?.to_owned();
        let length = "; pointer ".len() + pointer.chars().count();
        (MIN_LIMIT + length <= limit / 2).then(|| (format!("; pointer {written}"), length))
    });
    let (cut, kept) = split_budget(total, limit, label.as_ref().map_or(0, |(_, n)| *n));
    let tail = kept / 3;
    let head = kept - tail;
    let mut head_end = 0;
    let mut tail_start = content.len();
    for (index, (range, _)) in string.written_chars().enumerate() {
        if index + 1 == head {
            head_end = range.end;
        }
        if index == total - tail {
            tail_start = range.start;
            break;
        }
    }
    out.push_ascii(b'"');
    out.push_str(content.get(..head_end).unwrap_or_default());
    let label = label.as_ref().map_or("", |(text, _)| text);
    out.push_str(&format!("[… {cut} chars clipped{label} …]"));
    out.push_str(content.get(tail_start..).unwrap_or_default());
    out.push_ascii(b'"');
    true
}

/// How many code points a string of `total` must lose, and how many it keeps, so that the kept
/// ones and the marker (with a label of `label` code points) make exactly `limit` (the marker's
/// length depends on the count it states: the smallest digit count that fits is the exact one).
fn split_budget(total: usize, limit: usize, label: usize) -> (usize, usize) {
    for digits in 1..=20 {
        let kept = limit.saturating_sub(20 + digits + label);
        let cut = total - kept;
        if decimal_digits(cut) <= digits {
            return (cut, kept);
        }
    }
    (total, 0)
}

fn decimal_digits(mut n: usize) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

#[cfg(test)]
mod tests {
    use super::*;
    use parrot_json::Reader;

    fn clip(json_string: &str, limit: usize) -> (String, bool) {
        let raw = Reader::new(json_string).string().unwrap();
        let mut out = Vec::new();
        let clipped = write_clipped(raw, limit, || None, &mut out);
        (String::from_utf8(out).unwrap(), clipped)
    }

    fn decoded_len(json_string: &str) -> usize {
        let raw = Reader::new(json_string).string().unwrap();
        raw.decoded().chars().count()
    }

    #[test]
    fn clipping_keeps_two_thirds_before_and_one_third_after() {
        let long = format!("\"{}{}\"", "a".repeat(100), "z".repeat(100));
        // limit 50: the marker "[… 173 chars clipped …]" is 23 code points, 27 kept: 18 + 9.
        let expected = format!(
            "\"{}[… 173 chars clipped …]{}\"",
            "a".repeat(18),
            "z".repeat(9)
        );
        let cases = [
            (long.as_str(), 50, expected.as_str(), true),
            ("\"short\"", 50, "\"short\"", false),
            ("\"short\"", 0, "\"short\"", false),
        ];
        for (input, limit, output, clipped) in cases {
            let got = clip(input, limit);
            assert_eq!(got, (output.to_owned(), clipped), "{input} at {limit}");
            assert!(decoded_len(&got.0) <= limit.max(decoded_len(input)));
        }
    }

    #[test]
    fn clipped_string_is_exactly_the_limit_long() {
        for total in [42, 99, 100, 101, 1000, 10_005, 123_456] {
            for limit in [MIN_LIMIT, 50, 130, 2000] {
                let input = format!("\"{}\"", "é".repeat(total));
                let (out, clipped) = clip(&input, limit);
                assert_eq!(clipped, total > limit);
                if clipped {
                    assert_eq!(decoded_len(&out), limit, "{total} at {limit}");
                    let cut: usize = out
                        .split("[… ")
                        .nth(1)
                        .and_then(|rest| rest.split(' ').next())
                        .and_then(|n| n.parse().ok())
                        .unwrap();
                    assert_eq!(out.matches('é').count() + cut, total);
                }
            }
        }
    }

    #[test]
    fn escapes_count_as_one_code_point_and_are_never_split() {
        let input = format!("\"{}\"", r"\ud83d\ude00\n".repeat(40));
        let (out, clipped) = clip(&input, 50);
        assert!(clipped);
        assert_eq!(decoded_len(&out), 50);
        // Head 18 units, tail 9: whole escapes only, so the result still parses.
        assert!(Reader::new(&out).string().is_ok());
        assert!(out.starts_with(&format!("\"{}", r"\ud83d\ude00\n".repeat(9))));
    }

    #[test]
    fn limit_param_refuses_limits_too_small_for_the_marker() {
        let mut params = Params::from_json(r#"{"max_string_chars": 10}"#).unwrap();
        let err = limit_param(&mut params, "max_string_chars", 2000).unwrap_err();
        assert_eq!(
            err.to_string(),
            "param \"max_string_chars\": expected 0 (no clipping) or at least 41 \
             (room for the clip marker), got 10"
        );
        for ok in ["0", "41", "2000"] {
            let mut params =
                Params::from_json(&format!(r#"{{"max_string_chars": {ok}}}"#)).unwrap();
            assert!(limit_param(&mut params, "max_string_chars", 2000).is_ok());
        }
    }

    #[test]
    fn the_marker_names_the_pointer_when_it_fits() {
        let string = format!("\"{}\"", "x".repeat(300));
        let raw = parrot_json::Reader::new(&string).string().unwrap();
        let mut out = Vec::new();
        assert!(write_clipped(
            raw,
            120,
            || Some("/a\"b/0".to_owned()),
            &mut out
        ));
        let out = String::from_utf8(out).unwrap();
        // `; pointer /a\"b/0` is 16 code points (the escape counts one): 20 + 3 + 16 = 39 for
        // the marker, 81 kept: 54 before it, 27 after.
        let expected = format!(
            "\"{}[… 219 chars clipped; pointer /a\\\"b/0 …]{}\"",
            "x".repeat(54),
            "x".repeat(27)
        );
        assert_eq!(out, expected);
        // Too long a pointer for half the limit: the marker without it.
        let mut out = Vec::new();
        assert!(write_clipped(raw, 120, || Some("/".repeat(30)), &mut out));
        assert!(String::from_utf8(out).unwrap().contains("chars clipped …]"));
    }
}
