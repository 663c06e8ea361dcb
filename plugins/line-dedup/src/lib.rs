//! `line_dedup`: collapses each run of identical consecutive lines in a text payload into the
//! line once and a marker line, `[... previous line repeated N more times ...]`.
//!
//! Lossless: [`LineDedup`]'s inverse expands every marker back into the lines it replaced. A
//! payload that already contains a line shaped like the marker is left unchanged, so expansion
//! is never ambiguous. JSON payloads pass through.
#![forbid(unsafe_code)]

use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};

const MARKER_HEAD: &str = "[... previous line repeated ";
const MARKER_TAIL: &str = " more times ...]";

/// The `line_dedup` codec.
///
/// Param `min_run` (default 3, at least 2): the shortest run of identical lines to collapse.
///
/// # Examples
///
/// With the default `min_run = 3`, at `minimal`:
///
/// ```text
/// start                 start
/// retry                 retry
/// retry           →     [... previous line repeated 3 more times ...]
/// retry                 done
/// retry
/// done
/// ```
#[derive(Debug)]
pub struct LineDedup {
    min_run: usize,
}

impl LineDedup {
    /// The inverse: every marker line becomes the line before it, repeated.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput` for a marker with no line before it.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        let mut out: Vec<&str> = Vec::new();
        for line in payload.split('\n') {
            match marker_count(line) {
                Some(count) => {
                    let previous = *out.last().ok_or_else(|| {
                        CodecError::invalid_input("a repeat marker with no line before it")
                    })?;
                    out.extend(std::iter::repeat_n(previous, count));
                }
                None => out.push(line),
            }
        }
        Ok(out.join("\n"))
    }
}

impl Codec for LineDedup {
    const NAME: &'static str = "line_dedup";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        let min_run = params.usize("min_run", 3)?;
        if min_run < 2 {
            return Err(CodecError::invalid_param(
                "min_run",
                format!("expected an integer of at least 2, got {min_run}"),
            ));
        }
        Ok(LineDedup { min_run })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        let text = payload.text();
        if payload.is_json() || !level.allows_change() || text.lines().any(is_marker) {
            return Ok(Outcome::Unchanged);
        }
        let mut out = String::with_capacity(text.len());
        let mut lines = text.split('\n').peekable();
        let mut changed = false;
        let mut first = true;
        while let Some(line) = lines.next() {
            let mut run = 1;
            while lines.peek() == Some(&line) {
                lines.next();
                run += 1;
            }
            if !first {
                out.push('\n');
            }
            first = false;
            if run >= self.min_run {
                out.push_str(line);
                out.push('\n');
                out.push_str(MARKER_HEAD);
                out.push_str(&(run - 1).to_string());
                out.push_str(MARKER_TAIL);
                changed = true;
            } else {
                for i in 0..run {
                    if i > 0 {
                        out.push('\n');
                    }
                    out.push_str(line);
                }
            }
        }
        Ok(if changed {
            Outcome::lossless(out)
        } else {
            Outcome::Unchanged
        })
    }
}

fn is_marker(line: &str) -> bool {
    line.starts_with(MARKER_HEAD) && line.ends_with(MARKER_TAIL)
}

fn marker_count(line: &str) -> Option<usize> {
    line.strip_prefix(MARKER_HEAD)?
        .strip_suffix(MARKER_TAIL)?
        .parse()
        .ok()
}

parrot_codec_api::export_codecs!(LineDedup);

#[cfg(test)]
mod contract;

#[cfg(test)]
mod tests {
    use super::*;
    use parrot_codec_api::build;

    fn codec(min_run: usize) -> LineDedup {
        let params = Params::from_json(&format!(r#"{{"min_run": {min_run}}}"#)).unwrap();
        build::<LineDedup>(params).unwrap()
    }

    #[test]
    fn runs_collapse_and_expand_back() {
        let cases: &[(usize, &str, Option<&str>)] = &[
            (
                3,
                "a\na\na\nb",
                Some("a\n[... previous line repeated 2 more times ...]\nb"),
            ),
            (3, "a\na\nb", None),
            (
                2,
                "a\na\nb",
                Some("a\n[... previous line repeated 1 more times ...]\nb"),
            ),
            (
                2,
                "\n\n\n",
                Some("\n[... previous line repeated 3 more times ...]"),
            ),
            (
                2,
                "x\ny\ny",
                Some("x\ny\n[... previous line repeated 1 more times ...]"),
            ),
            (2, "", None),
            (2, "no repeats\nhere\n", None),
        ];
        for (min_run, input, expected) in cases {
            let codec = codec(*min_run);
            let out = codec
                .compress(Payload::text_only(input), Level::Minimal)
                .unwrap();
            match expected {
                Some(expected) => {
                    assert_eq!(out, Outcome::lossless(*expected), "for {input:?}");
                    assert_eq!(
                        codec.expand(expected).unwrap(),
                        *input,
                        "expanding {input:?}"
                    );
                }
                None => assert_eq!(out, Outcome::Unchanged, "for {input:?}"),
            }
        }
    }

    #[test]
    fn input_that_already_holds_a_marker_is_left_alone() {
        let input = "a\na\na\n[... previous line repeated 9 more times ...]";
        let out = codec(2)
            .compress(Payload::text_only(input), Level::Minimal)
            .unwrap();
        assert_eq!(out, Outcome::Unchanged);
    }

    #[test]
    fn json_passes_through() {
        let out = codec(2)
            .compress(Payload::json("[1,\n1,\n1]"), Level::Aggressive)
            .unwrap();
        assert_eq!(out, Outcome::Unchanged);
    }

    #[test]
    fn min_run_below_two_is_refused() {
        let err = build::<LineDedup>(Params::from_json(r#"{"min_run": 1}"#).unwrap()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "param \"min_run\": expected an integer of at least 2, got 1"
        );
    }
}
