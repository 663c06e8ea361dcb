//! `log`: build, test and command output, with the noise folded and every failure kept.
//!
//! DOC PLACEHOLDER

use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
use serde_json::Value;

mod fold;
mod patterns;
mod template;
#[cfg(test)]
mod tests;

use patterns::Matcher;

/// The `log` codec: see the [module documentation](self).
#[derive(Debug)]
pub struct Log {
    matcher: Matcher,
    min_lines: usize,
    head_lines: usize,
    tail_lines: usize,
    context_before: usize,
    context_after: usize,
    budget_tokens: usize,
    budget_ratio: f64,
    max_line_bytes: usize,
}

impl Codec for Log {
    const NAME: &'static str = "log";

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        let budget_ratio = params.f64("budget_ratio", 0.12)?;
        if !(budget_ratio > 0.0 && budget_ratio <= 1.0) {
            return Err(CodecError::invalid_param(
                "budget_ratio",
                format!("expected a number above 0 and at most 1, got {budget_ratio}"),
            ));
        }
        let extra = failure_patterns(params)?;
        let matcher = Matcher::new(&extra)
            .map_err(|err| CodecError::invalid_param("failure_patterns", err))?;
        Ok(Log {
            matcher,
            min_lines: params.positive("min_lines", 20)?,
            head_lines: params.usize("head_lines", 10)?,
            tail_lines: params.usize("tail_lines", 10)?,
            context_before: params.usize("context_before", 3)?,
            context_after: params.usize("context_after", 3)?,
            budget_tokens: params.positive("budget_tokens", 600)?,
            budget_ratio,
            max_line_bytes: params.positive("max_line_bytes", 1000)?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if payload.is_json() || !level.allows_loss() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        let folded = self
            .fold(input, level == Level::Aggressive)
            .map(|text| crate::Transformed { text, lossy: true });
        Ok(crate::Transformed::outcome(folded, input))
    }
}

/// The `failure_patterns` param: a list of non-empty single-line strings.
fn failure_patterns(params: &mut Params) -> Result<Vec<String>, CodecError> {
    const KEY: &str = "failure_patterns";
    let Some(value) = params.value(KEY) else {
        return Ok(Vec::new());
    };
    let bad = |message: String| CodecError::invalid_param(KEY, message);
    let Value::Array(items) = value else {
        return Err(bad(format!("expected a list of strings, got {value}")));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(text) if text.is_empty() => Err(bad(format!(
                "item {i} is an empty string, which would match every line"
            ))),
            Value::String(text) if text.contains(['\n', '\r']) => Err(bad(format!(
                "item {i} ({item}) holds a line break; patterns match within one line"
            ))),
            Value::String(text) => Ok(text.clone()),
            other => Err(bad(format!("item {i} is not a string: {other}"))),
        })
        .collect()
}

inventory::submit! { crate::Builtin::of::<Log>() }
