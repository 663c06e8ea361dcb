//! The `json_compact` codec (CONTRACT §2.2), a candidate of `auto` (CONTRACT §2.8): compact JSON, without null
//! members, with runs of equal array elements folded.
//!
//! # What it does, by level
//!
//! - `minimal` and above, lossless:
//!   1. compact separators (no insignificant whitespace); numbers and member order stay exactly
//!      as written, strings keep their value and lose the escapes JSON does not require
//!      (`"\u00e9"` becomes `"é"`, `"\/"` becomes `"/"`; `\"`, `\\` and control characters
//!      stay escaped);
//!   2. null-member elision at every depth (`elide_nulls`): an object left empty stays `{}`,
//!      `null` elements of arrays stay;
//!   3. exact sibling dedup, bottom-up (`dedup`): a run of two or more consecutive equal
//!      elements becomes `{"_repeat": N, "_value": X}`.
//! - `normal`: also clips string values longer than `max_string_chars` code points to their
//!   first and last code points around a marker stating the cut, the whole exactly
//!   `max_string_chars` long: `"abcd[… 1234 chars clipped; pointer /a/3 …]yz"`, the marker
//!   naming the string's JSON Pointer for the recovery call (see `clip`; two thirds of the kept
//!   budget before the marker, one third after; an escape counts as the one code point it
//!   stands for and is never split); lossy only when a string was clipped.
//! - `aggressive`: also keeps the first and last `max_array_items / 2` elements of a longer
//!   array, with `{"_omitted": N, "_get": {"pointer": P, "rows": "A-B"}}` between them: the
//!   selector of the recovery call that returns exactly the omitted elements (`rows` 0-based
//!   and inclusive, of the array at `pointer`, left out for the whole document); lossy only
//!   when something was omitted.
//!
//! Plain-text payloads, and JSON this codec refuses (a duplicate member name, nesting deeper
//! than 512), pass through. An output that would not be smaller than its input is reported as
//! [`Outcome::Unchanged`]: the host would discard it anyway (CONTRACT §2.1, no gain).
//!
//! # Decisions
//!
//! - Escapes JSON does not require are decoded (as CONTRACT §2.2, step 1 says): the string
//!   is the same value, and text escaped for ASCII-only transport — Python's `json.dumps`
//!   writes every non-ASCII character as `\uXXXX` by default — costs several tokens per
//!   character where the character itself costs about one. Long strings clipped at `normal`
//!   keep their escapes as written.
//! - Two elements are "equal" for dedup when their compacted text is byte-identical. That is
//!   stricter than CONTRACT §2.1's equality (which ignores member order and escape spelling), so a
//!   run is folded only when any reader would call it a run, and folding stays lossless.
//! - The inverse reads every array element that is an object with exactly the members `_repeat`
//!   and `_value` as a run. If the input, after null elision, has any object with exactly those
//!   two members, dedup is off for the whole payload (CONTRACT §2.2). If such an object is an array
//!   element, the inverse would misread even the un-deduplicated output, so the output is not
//!   lossless: at `minimal` the payload passes through; at `normal` and above the outcome is
//!   marked lossy (the host keeps the original).
//! - `_omitted` counts input elements: an omitted `_repeat` run of 7 counts 7. Which elements are
//!   kept is decided on the array after dedup (a run is one element).
//! - Member names are never clipped (a clipped name could collide with another).
//!
//! # Examples
//!
//! ```
//! use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
//! use parrot_codecs::JsonCompact;
//!
//! let codec = parrot_codec_api::build::<JsonCompact>(Params::empty()).unwrap();
//! let input = r#"{"id": 123456789012345678901, "x": 0.100000000000000000000000000001, "note": null,
//!                "tags": ["a", "a", "a"]}"#;
//! let out = codec.compress(Payload::json(input), Level::Minimal).unwrap();
//! let compact = r#"{"id":123456789012345678901,"x":0.100000000000000000000000000001,"tags":[{"_repeat":3,"_value":"a"}]}"#;
//! assert_eq!(out, Outcome::lossless(compact));
//! assert_eq!(
//!     codec.expand(compact).unwrap(),
//!     r#"{"id":123456789012345678901,"x":0.100000000000000000000000000001,"tags":["a","a","a"]}"#
//! );
//! ```

use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};

use crate::Transformed;
use crate::clip;
use parrot_json::{DistinctNames, MAX_DEPTH, RawStr, Reader, Value};

/// The `json_compact` codec: compaction, null-member elision and run folding (lossless), plus
/// long-string clipping at `normal` and long-array trimming at `aggressive`.
///
/// Params (unknown keys are refused when the codec is built):
///
/// | key | default | meaning |
/// |---|---|---|
/// | `elide_nulls` | `true` | drop object members whose value is `null` |
/// | `dedup` | `true` | fold runs of equal array elements into `{"_repeat": N, "_value": X}` |
/// | `max_string_chars` | `2000` | at `normal`+, clip longer string values (0: never; else ≥ 41) |
/// | `max_array_items` | `50` | at `aggressive`, trim longer arrays (0: never) |
///
/// See the [module documentation](self) for the exact rules.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
/// use parrot_codecs::JsonCompact;
///
/// let params = Params::from_json(r#"{"max_array_items": 4}"#).unwrap();
/// let codec = parrot_codec_api::build::<JsonCompact>(params).unwrap();
/// let input = "[10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160]";
/// let out = codec.compress(Payload::json(input), Level::Aggressive).unwrap();
/// assert_eq!(out, Outcome::lossy(r#"[10,20,{"_omitted":12,"_get":{"rows":"2-13"}},150,160]"#));
///
/// let err = parrot_codec_api::build::<JsonCompact>(Params::from_json(r#"{"dedupe": false}"#).unwrap())
///     .unwrap_err();
/// assert_eq!(err.key(), Some("dedupe"));
/// ```
#[derive(Debug, Clone)]
pub struct JsonCompact {
    elide_nulls: bool,
    dedup: bool,
    max_string_chars: usize,
    max_array_items: usize,
}

impl JsonCompact {
    /// The transform of CONTRACT §2.2, before the no-gain rule: `None` when the payload passes
    /// through (refused, not invertible at `minimal`, or already in its compact form).
    fn transform(&self, text: &str, level: Level) -> Option<Transformed> {
        if !level.allows_change() {
            return None;
        }
        let (clip, omit) = match level {
            Level::Aggressive => (self.max_string_chars, self.max_array_items),
            Level::Normal => (self.max_string_chars, 0),
            Level::Minimal | Level::None => (0, 0),
        };
        let settings = Settings {
            elide_nulls: self.elide_nulls,
            dedup: self.dedup,
            clip,
            omit,
        };
        let mut pass = Pass::run(text, settings).ok()?;
        if settings.dedup && pass.marker_object {
            pass = Pass::run(
                text,
                Settings {
                    dedup: false,
                    ..settings
                },
            )
            .ok()?;
        }
        let ambiguous = pass.marker_element;
        if ambiguous && !level.allows_loss() {
            return None;
        }
        let lossy = pass.clipped || pass.omitted || ambiguous;
        let out = pass.out;
        (out != text).then_some(Transformed { text: out, lossy })
    }
}

impl JsonCompact {
    /// Rebuilds the input of a lossless outcome: every array element that is an object with
    /// exactly the members `_repeat` (a positive integer N) and `_value` becomes N copies of
    /// the (expanded) value. The text comes out compact.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput` when `payload` is not an outcome of this codec.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        expand(payload)
    }
}

impl Codec for JsonCompact {
    const NAME: &'static str = "json_compact";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    // Null-member elision is lossless by the contract (CONTRACT §2.1).
    const NULL_MEMBERS_ABSENT: bool = true;

    fn new(params: &mut Params) -> Result<Self, CodecError> {
        Ok(JsonCompact {
            elide_nulls: params.bool("elide_nulls", true)?,
            dedup: params.bool("dedup", true)?,
            max_string_chars: clip::limit_param(params, "max_string_chars", 2000)?,
            max_array_items: params.usize("max_array_items", 50)?,
        })
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if !payload.is_json() {
            return Ok(Outcome::Unchanged);
        }
        let text = payload.text();
        Ok(Transformed::outcome(self.transform(text, level), text))
    }
}

inventory::submit! { crate::Builtin::validating::<JsonCompact>() }

/// What one pass over the input does.
#[derive(Debug, Clone, Copy)]
struct Settings {
    elide_nulls: bool,
    dedup: bool,
    /// Clip string values longer than this (0: never).
    clip: usize,
    /// Trim arrays longer than this (0: never).
    omit: usize,
}

/// One pass: reads the input and writes the output as it goes.
struct Pass<'a> {
    reader: Reader<'a>,
    /// The output, written as text: every piece is a `&str` of the input or ASCII, so it is
    /// never validated as UTF-8 afterwards.
    out: String,
    settings: Settings,
    /// The member names of the objects being read, innermost last (for the duplicate check).
    keys: Vec<RawStr<'a>>,
    /// The duplicate-name check, remembering the last distinct list of names per depth.
    distinct: DistinctNames<'a>,
    /// For trimming: `(start in out, input elements it stands for)` of each finished element of
    /// the arrays being read.
    elements: Vec<(usize, usize)>,
    /// An object with exactly the members `_repeat` and `_value` was written.
    marker_object: bool,
    /// Such an object was written as an array element.
    marker_element: bool,
    clipped: bool,
    omitted: bool,
    /// Where the value being read is, one step per container, kept only when something may be
    /// cut (`clip` or `omit`): a marker names the selector of what it removed.
    path: Vec<Step>,
}

/// One step of [`Pass::path`].
#[derive(Debug, Clone, Copy)]
enum Step {
    /// The member whose name is `keys[i]`.
    Member(usize),
    /// The input element of this index (counted before dedup: the original's index).
    Element(usize),
}

impl<'a> Pass<'a> {
    fn run(text: &'a str, settings: Settings) -> Result<Pass<'a>, parrot_json::Error> {
        let mut pass = Pass {
            reader: Reader::new(text),
            out: String::with_capacity(text.len()),
            settings,
            keys: Vec::new(),
            distinct: DistinctNames::default(),
            elements: Vec::new(),
            marker_object: false,
            marker_element: false,
            clipped: false,
            omitted: false,
            path: Vec::new(),
        };
        pass.reader.skip_ws();
        pass.value(0)?;
        pass.reader.finish()?;
        Ok(pass)
    }

    /// Reads and writes one value; returns whether it is an object with exactly the members
    /// `_repeat` and `_value`.
    fn value(&mut self, depth: usize) -> Result<bool, parrot_json::Error> {
        match self.reader.peek() {
            Some(b'{') => {
                if depth >= MAX_DEPTH {
                    return Err(parrot_json::Error::TooDeep);
                }
                self.object(depth + 1)
            }
            Some(b'[') => {
                if depth >= MAX_DEPTH {
                    return Err(parrot_json::Error::TooDeep);
                }
                self.array(depth + 1)?;
                Ok(false)
            }
            Some(b'"') => {
                let string = self.reader.string()?;
                // A string has at least as many bytes as code points: only a longer one may
                // need clipping.
                if self.settings.clip == 0 || string.content().len() <= self.settings.clip {
                    parrot_json::write_unescaped(string, &mut self.out);
                } else {
                    let (path, keys) = (&self.path, &self.keys);
                    self.clipped |= clip::write_clipped(
                        string,
                        self.settings.clip,
                        || Some(pointer(path, keys)),
                        &mut self.out,
                    );
                }
                Ok(false)
            }
            Some(b'n' | b't' | b'f') => {
                let literal = self.reader.literal()?;
                self.out.push_str(literal);
                Ok(false)
            }
            _ => {
                let number = self.reader.number()?;
                self.out.push_str(number);
                Ok(false)
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<bool, parrot_json::Error> {
        self.reader.bump();
        self.out.push('{');
        if self.reader.empty_container(b'}') {
            self.out.push('}');
            return Ok(false);
        }
        let keys_base = self.keys.len();
        let mut written = 0;
        let mut first_two = [None, None];
        loop {
            let key = self.reader.string()?;
            self.keys.push(key);
            self.reader.expect(b':')?;
            self.reader.skip_ws();
            if self.settings.elide_nulls && self.reader.peek() == Some(b'n') {
                self.reader.literal()?;
            } else {
                if written > 0 {
                    self.out.push(',');
                }
                parrot_json::write_unescaped(key, &mut self.out);
                self.out.push(':');
                let track = self.tracks();
                if track {
                    self.path.push(Step::Member(self.keys.len() - 1));
                }
                self.value(depth)?;
                if track {
                    self.path.pop();
                }
                if let Some(slot) = first_two.get_mut(written) {
                    *slot = Some(key);
                }
                written += 1;
            }
            if !self.reader.next_or_close(b'}')? {
                break;
            }
        }
        self.out.push('}');
        self.check_distinct(keys_base, depth)?;
        let marker =
            written == 2 && matches!(first_two, [Some(a), Some(b)] if is_marker_pair(&a, &b));
        self.marker_object |= marker;
        Ok(marker)
    }

    /// Checks the member names read since `base` for duplicates, then forgets them.
    fn check_distinct(&mut self, base: usize, depth: usize) -> Result<(), parrot_json::Error> {
        if !self
            .distinct
            .check(depth, self.keys.get(base..).unwrap_or_default())
        {
            return Err(parrot_json::Error::DuplicateName);
        }
        self.keys.truncate(base);
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<(), parrot_json::Error> {
        self.reader.bump();
        self.out.push('[');
        if self.reader.empty_container(b']') {
            self.out.push(']');
            return Ok(());
        }
        let elements_base = self.elements.len();
        // The element written last, not yet finished: its span in `out` and its run length.
        let mut pending: Option<(usize, usize, usize)> = None;
        let mut first = true;
        let track = self.tracks();
        let mut index = 0;
        loop {
            if !first {
                self.out.push(',');
            }
            first = false;
            let start = self.out.len();
            if track {
                self.path.push(Step::Element(index));
            }
            self.marker_element |= self.value(depth)?;
            if track {
                self.path.pop();
            }
            index += 1;
            let end = self.out.len();
            if self.settings.dedup {
                pending = match pending {
                    Some((p_start, p_end, run))
                        if self.out.get(p_start..p_end) == self.out.get(start..end) =>
                    {
                        self.out.truncate(start.saturating_sub(1));
                        Some((p_start, p_end, run + 1))
                    }
                    Some((p_start, p_end, run)) => {
                        let shift = self.finish_element(p_start, p_end, run);
                        Some((start + shift, end + shift, 1))
                    }
                    None => Some((start, end, 1)),
                };
            } else if self.settings.omit > 0 {
                self.elements.push((start, 1));
            }
            if !self.reader.next_or_close(b']')? {
                break;
            }
        }
        if let Some((p_start, p_end, run)) = pending {
            self.finish_element(p_start, p_end, run);
        }
        if self.settings.omit > 0 {
            self.trim(elements_base);
        }
        self.out.push(']');
        Ok(())
    }

    /// Finishes an element: a run of two or more becomes a `_repeat` object. Returns how far
    /// the bytes after the element moved.
    fn finish_element(&mut self, start: usize, end: usize, run: usize) -> usize {
        let mut shift = 0;
        if run >= 2 {
            let prefix = format!("{{\"_repeat\":{run},\"_value\":");
            self.out.insert_str(start, &prefix);
            let close = (end + prefix.len()).min(self.out.len());
            self.out.insert(close, '}');
            shift = prefix.len() + 1;
        }
        if self.settings.omit > 0 {
            self.elements.push((start, run));
        }
        shift
    }

    /// Whether [`Pass::path`] is kept: only when a string may be clipped or an array trimmed.
    fn tracks(&self) -> bool {
        self.settings.clip > 0 || self.settings.omit > 0
    }

    /// Keeps the first and last `omit / 2` elements of the array whose elements start at
    /// `base` in `self.elements`, with `{"_omitted": N, "_get": SELECTOR}` between them: the
    /// selector returns exactly the omitted input elements (`rows`, 0-based and inclusive, of
    /// the array at `pointer`; the pointer is left out for the whole document).
    fn trim(&mut self, base: usize) {
        let elements = self.elements.get(base..).unwrap_or_default();
        let count = elements.len();
        if count > self.settings.omit {
            let keep = self.settings.omit / 2;
            let before: usize = elements[..keep].iter().map(|&(_, inputs)| inputs).sum();
            let dropped = elements.get(keep..count - keep).unwrap_or_default();
            let omitted: usize = dropped.iter().map(|&(_, inputs)| inputs).sum();
            let cut_start = dropped.first().map_or(self.out.len(), |&(start, _)| start);
            let cut_end = match elements.get(count - keep) {
                Some(&(start, _)) if keep > 0 => start,
                _ => self.out.len(),
            };
            let pointer = pointer(&self.path, &self.keys);
            let mut marker = format!("{{\"_omitted\":{omitted},\"_get\":{{");
            if !pointer.is_empty() {
                marker.push_str("\"pointer\":");
                marker.push_str(&parrot_json::encode_string(&pointer));
                marker.push(',');
            }
            let last = before + omitted - 1;
            marker.push_str(&format!("\"rows\":\"{before}-{last}\"}}}}"));
            if keep > 0 {
                marker.push(',');
            }
            self.out.replace_range(cut_start..cut_end, &marker);
            self.omitted = true;
        }
        self.elements.truncate(base);
    }
}

/// The RFC 6901 JSON Pointer of the value at `path` (`""` for the whole document); `keys` holds
/// the member names the path's [`Step::Member`]s index.
fn pointer(path: &[Step], keys: &[RawStr<'_>]) -> String {
    let mut pointer = String::new();
    for step in path {
        pointer.push('/');
        match *step {
            Step::Member(i) => {
                let name = keys.get(i).map(RawStr::decoded).unwrap_or_default();
                pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
            }
            Step::Element(i) => pointer.push_str(&i.to_string()),
        }
    }
    pointer
}

/// Whether two member names are `_repeat` and `_value`, in either order.
fn is_marker_pair(a: &RawStr<'_>, b: &RawStr<'_>) -> bool {
    (a.is("_repeat") && b.is("_value")) || (a.is("_value") && b.is("_repeat"))
}

/// Runs rebuilt by [`expand`] may not make a text larger than this.
const MAX_EXPANDED_BYTES: usize = 1 << 30;

fn expand(payload: &str) -> Result<String, CodecError> {
    // A run object nests one level below its array, so outputs nest up to twice as deep.
    let value = Value::parse_with_limit(payload, 2 * MAX_DEPTH + 2)
        .map_err(|err| CodecError::invalid_input(format!("json_compact cannot expand: {err}")))?;
    let mut out = Vec::with_capacity(payload.len().saturating_mul(2));
    expand_value(&value, &mut out)?;
    crate::into_text(out)
        .ok_or_else(|| CodecError::failed("json_compact expanded to invalid UTF-8"))
}

fn expand_value(value: &Value<'_>, out: &mut Vec<u8>) -> Result<(), CodecError> {
    match value {
        Value::Object(members) => parrot_json::try_write_object(
            members.iter().map(|(name, member)| (name, member)),
            out,
            |_, member, out| expand_value(member, out),
        )?,
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let Some((count, repeated)) = run_of(item)? else {
                    expand_value(item, out)?;
                    continue;
                };
                let start = out.len();
                expand_value(repeated, out)?;
                let end = out.len();
                let grown = (end - start + 1)
                    .checked_mul(count - 1)
                    .and_then(|more| more.checked_add(end))
                    .filter(|&total| total <= MAX_EXPANDED_BYTES);
                if grown.is_none() {
                    return Err(CodecError::invalid_input(format!(
                        "json_compact cannot expand: a run of {count} would exceed {MAX_EXPANDED_BYTES} bytes"
                    )));
                }
                for _ in 1..count {
                    out.push(b',');
                    out.extend_from_within(start..end);
                }
            }
            out.push(b']');
        }
        scalar => scalar.write(out),
    }
    Ok(())
}

/// The count and value of a run object (an object with exactly `_repeat` and `_value`).
fn run_of<'v, 'a>(item: &'v Value<'a>) -> Result<Option<(usize, &'v Value<'a>)>, CodecError> {
    let Value::Object(members) = item else {
        return Ok(None);
    };
    let [(first, first_value), (second, second_value)] = members.as_slice() else {
        return Ok(None);
    };
    let (count, repeated) = if first.is("_repeat") && second.is("_value") {
        (first_value, second_value)
    } else if first.is("_value") && second.is("_repeat") {
        (second_value, first_value)
    } else {
        return Ok(None);
    };
    let count = match count {
        Value::Number(text) => text.parse::<usize>().ok().filter(|&n| n >= 1),
        _ => None,
    };
    match count {
        Some(count) => Ok(Some((count, repeated))),
        None => Err(CodecError::invalid_input(
            "json_compact cannot expand: a `_repeat` count is not a positive integer",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(params: &str) -> JsonCompact {
        parrot_codec_api::build::<JsonCompact>(Params::from_json(params).unwrap()).unwrap()
    }

    /// `None`: passes through; else the output and whether it is lossy.
    fn transform(codec: &JsonCompact, input: &str, level: Level) -> Option<(String, bool)> {
        codec
            .transform(input, level)
            .map(|done| (done.text, done.lossy))
    }

    #[test]
    fn spec_examples_at_minimal() {
        let cases = [
            (
                r#"{"a":1,"b":null,"c":[{"x":1},{"x":1}],"d":{"e":null}}"#,
                Some(r#"{"a":1,"c":[{"_repeat":2,"_value":{"x":1}}],"d":{}}"#),
            ),
            (
                r#"[{"id":7,"t":["a","b"]},{"id":7,"t":["a","b"]},{"id":7,"t":["a","b"]}]"#,
                Some(r#"[{"_repeat":3,"_value":{"id":7,"t":["a","b"]}}]"#),
            ),
            (
                "[[0,0],[0,0]]",
                Some(r#"[{"_repeat":2,"_value":[{"_repeat":2,"_value":0}]}]"#),
            ),
            ("[1,2,1]", None),
            ("[1,1.0,true]", None),
        ];
        let codec = built("{}");
        for (input, expected) in cases {
            let expected = expected.map(|text| (text.to_owned(), false));
            assert_eq!(
                transform(&codec, input, Level::Minimal),
                expected,
                "{input}"
            );
        }
    }

    #[test]
    fn minimal_is_lossless_and_exact() {
        let cases = [
            // Compact separators; numbers exactly as written.
            (
                "{ \"id\" : 123456789012345678901 ,\n \"x\" : 0.100000000000000000000000000001 }",
                Some(r#"{"id":123456789012345678901,"x":0.100000000000000000000000000001}"#),
            ),
            ("[1E400, -0.0, 1e-7]", Some("[1E400,-0.0,1e-7]")),
            // Strings keep their value; only the escapes JSON requires stay.
            (
                r#"[ "\u00e9\n", "é\"", "😀" ]"#,
                Some(r#"["é\n","é\"","😀"]"#),
            ),
            (
                r#"{"\u0061": "\ud83d\ude00 \u4e2d\/\u0022\u005c\u0001\u001F\t\b\f\r\\ \u007f"}"#,
                Some("{\"a\":\"😀 中/\\\"\\\\\\u0001\\u001F\\t\\b\\f\\r\\\\ \u{7f}\"}"),
            ),
            // Escapes decoded make equal elements equal in text: folded.
            (
                r#"["\u00e9", "é"]"#,
                Some(r#"[{"_repeat":2,"_value":"é"}]"#),
            ),
            // An object left empty stays; nulls in arrays stay; nulls at every depth go.
            (r#"{"a":null}"#, Some("{}")),
            (
                r#"[null, {"a": [null, {"b": null}]}]"#,
                Some(r#"[null,{"a":[null,{}]}]"#),
            ),
            // Elision happens before dedup: these two elements are equal after it.
            (
                r#"[{"a":1,"b":null},{"a":1}]"#,
                Some(r#"[{"_repeat":2,"_value":{"a":1}}]"#),
            ),
            // Runs in the middle and at both ends; a run of nulls.
            (
                "[1, 1, 2, 3, 3, 3, null, null]",
                Some(
                    r#"[{"_repeat":2,"_value":1},2,{"_repeat":3,"_value":3},{"_repeat":2,"_value":null}]"#,
                ),
            ),
            // Equal by CONTRACT §2.1 but written differently: not folded (byte-exact dedup).
            (
                r#"[{"a":1,"b":2}, {"b":2,"a":1}]"#,
                Some(r#"[{"a":1,"b":2},{"b":2,"a":1}]"#),
            ),
            (
                "[[],[],{},{}]",
                Some(r#"[{"_repeat":2,"_value":[]},{"_repeat":2,"_value":{}}]"#),
            ),
            ("[]", None),
            ("null", None),
            (" 1 ", Some("1")),
            // Long strings are not clipped at minimal.
        ];
        let codec = built("{}");
        for (input, expected) in cases {
            let expected = expected.map(|text| (text.to_owned(), false));
            let got = transform(&codec, input, Level::Minimal);
            assert_eq!(got, expected, "{input}");
            if let Some((output, _)) = got {
                assert_equal_json(&codec.expand(&output).unwrap(), input);
            }
        }
    }

    #[test]
    fn marker_shaped_input_turns_dedup_off() {
        let cases = [
            // A marker-shaped object that is not an array element: dedup off, still lossless.
            (
                r#"{"m": {"_repeat":2,"_value":1}, "a":[5,5]}"#,
                Level::Minimal,
                Some((r#"{"m":{"_repeat":2,"_value":1},"a":[5,5]}"#, false)),
            ),
            (
                r#"{"m": {"_value":1,"_repeat":2}, "a":[5,5]}"#,
                Level::Minimal,
                Some((r#"{"m":{"_value":1,"_repeat":2},"a":[5,5]}"#, false)),
            ),
            // Shaped so only after null elision.
            (
                r#"{"m": {"_repeat":2,"_value":1,"x":null}, "a":[5,5]}"#,
                Level::Minimal,
                Some((r#"{"m":{"_repeat":2,"_value":1},"a":[5,5]}"#, false)),
            ),
            // Escaped names are the same names (and are written decoded).
            (
                r#"{"m": {"\u005frepeat":2,"_value":1}, "a":[5,5]}"#,
                Level::Minimal,
                Some((r#"{"m":{"_repeat":2,"_value":1},"a":[5,5]}"#, false)),
            ),
            // As an array element, the inverse would misread it: pass through at minimal …
            (r#"[ {"_repeat":2,"_value":5} ]"#, Level::Minimal, None),
            // … and lossy above.
            (
                r#"[ {"_repeat":2,"_value":5} ]"#,
                Level::Normal,
                Some((r#"[{"_repeat":2,"_value":5}]"#, true)),
            ),
            // Not marker-shaped: a third member, or only one of the two.
            (
                r#"[{"_repeat":2,"_value":5,"x":1},{"_repeat":2,"_value":5,"x":1}]"#,
                Level::Minimal,
                Some((
                    r#"[{"_repeat":2,"_value":{"_repeat":2,"_value":5,"x":1}}]"#,
                    false,
                )),
            ),
            (
                r#"[{"_value":5},{"_value":5}]"#,
                Level::Minimal,
                Some((r#"[{"_repeat":2,"_value":{"_value":5}}]"#, false)),
            ),
        ];
        let codec = built("{}");
        for (input, level, expected) in cases {
            let expected = expected.map(|(text, lossy)| (text.to_owned(), lossy));
            let got = transform(&codec, input, level);
            assert_eq!(got, expected, "{input} at {level}");
            if let Some((output, false)) = got {
                assert_equal_json(&codec.expand(&output).unwrap(), input);
            }
        }
    }

    #[test]
    fn params_turn_steps_off() {
        let cases = [
            (
                r#"{"elide_nulls": false}"#,
                r#"{"a": null, "b": [1, 1]}"#,
                r#"{"a":null,"b":[{"_repeat":2,"_value":1}]}"#,
            ),
            (
                r#"{"dedup": false}"#,
                r#"{"a": null, "b": [1, 1]}"#,
                r#"{"b":[1,1]}"#,
            ),
            (
                r#"{"elide_nulls": false, "dedup": false}"#,
                r#"{"a": null, "b": [1, 1]}"#,
                r#"{"a":null,"b":[1,1]}"#,
            ),
        ];
        for (params, input, output) in cases {
            let got = transform(&built(params), input, Level::Minimal);
            assert_eq!(got, Some((output.to_owned(), false)), "{params}");
        }
    }

    #[test]
    fn normal_clips_long_strings_only() {
        let long = "x".repeat(60);
        let clipped = format!("{}[… 41 chars clipped …]{}", "x".repeat(13), "x".repeat(6));
        // (input, at normal, at minimal)
        let cases = [
            (
                format!(r#"{{"s": "{long}"}}"#),
                Some((format!(r#"{{"s":"{clipped}"}}"#), true)),
                Some((format!(r#"{{"s":"{long}"}}"#), false)),
            ),
            // A long member name is not clipped.
            (
                format!(r#"{{"{long}": 1, "n": null}}"#),
                Some((format!(r#"{{"{long}":1}}"#), false)),
                Some((format!(r#"{{"{long}":1}}"#), false)),
            ),
            // Nothing long: lossless even at normal.
            (
                r#"{"s": "short", "n": null}"#.to_owned(),
                Some((r#"{"s":"short"}"#.to_owned(), false)),
                Some((r#"{"s":"short"}"#.to_owned(), false)),
            ),
            // Exactly the limit: kept.
            (format!(r#"["{}"]"#, "y".repeat(41)), None, None),
            // Numbers are never touched.
            (format!("[{}]", "9".repeat(100)), None, None),
        ];
        let codec = built(r#"{"max_string_chars": 41}"#);
        for (input, normal, minimal) in cases {
            assert_eq!(transform(&codec, &input, Level::Normal), normal, "{input}");
            assert_eq!(
                transform(&codec, &input, Level::Minimal),
                minimal,
                "{input}"
            );
        }
        let off = built(r#"{"max_string_chars": 0}"#);
        assert_eq!(
            transform(&off, &format!(r#"["{long}"]"#), Level::Normal),
            None
        );
    }

    #[test]
    fn a_clipped_string_names_its_pointer() {
        let long = "y".repeat(3000);
        let input = format!(r#"{{"a": [{{"id": 1}}, {{"body": "{long}"}}]}}"#);
        let (out, lossy) = transform(&built("{}"), &input, Level::Normal).unwrap();
        assert!(lossy);
        assert!(
            out.contains("[… 1043 chars clipped; pointer /a/1/body …]"),
            "{out}"
        );
    }

    #[test]
    fn aggressive_keeps_both_ends_of_long_arrays() {
        let cases = [
            (
                "[1,2,3,4,5,6,7,8]",
                Some(r#"[1,2,{"_omitted":4,"_get":{"rows":"2-5"}},7,8]"#),
            ),
            (
                "[1,2,3,4,5]",
                Some(r#"[1,2,{"_omitted":1,"_get":{"rows":"2-2"}},4,5]"#),
            ),
            ("[1,2,3,4]", None),
            // A run is one element, and counts its inputs when omitted.
            (
                "[0,1,1,1,1,2,3,4,5]",
                Some(r#"[0,{"_repeat":4,"_value":1},{"_omitted":2,"_get":{"rows":"5-6"}},4,5]"#),
            ),
            (
                "[0,1,2,2,2,2,2,5,6]",
                Some(r#"[0,1,{"_omitted":5,"_get":{"rows":"2-6"}},5,6]"#),
            ),
            // Nested arrays are trimmed too.
            (
                r#"{"a":[[1,2,3,4,5,6]]}"#,
                Some(r#"{"a":[[1,2,{"_omitted":2,"_get":{"pointer":"/a/0","rows":"2-3"}},5,6]]}"#),
            ),
            // The pointer escapes `~` and `/` (RFC 6901) and is written as a JSON string.
            (
                r#"{"x\"/~y":[1,2,3,4,5,6]}"#,
                Some(
                    r#"{"x\"/~y":[1,2,{"_omitted":2,"_get":{"pointer":"/x\"~1~0y","rows":"2-3"}},5,6]}"#,
                ),
            ),
        ];
        let codec = built(r#"{"max_array_items": 4}"#);
        for (input, expected) in cases {
            let expected = expected.map(|text| (text.to_owned(), true));
            assert_eq!(
                transform(&codec, input, Level::Aggressive),
                expected,
                "{input}"
            );
        }
        let odd = built(r#"{"max_array_items": 1}"#);
        assert_eq!(
            transform(&odd, "[1,2]", Level::Aggressive),
            Some((r#"[{"_omitted":2,"_get":{"rows":"0-1"}}]"#.to_owned(), true))
        );
        let off = built(r#"{"max_array_items": 0}"#);
        let distinct: Vec<String> = (0..100).map(|n| n.to_string()).collect();
        let input = format!("[{}]", distinct.join(","));
        assert_eq!(transform(&off, &input, Level::Aggressive), None);
        // At aggressive with nothing long, the outcome is the lossless minimal one.
        assert_eq!(
            transform(&codec, r#"{"a":null,"b":[1,1]}"#, Level::Aggressive),
            Some((r#"{"b":[{"_repeat":2,"_value":1}]}"#.to_owned(), false))
        );
    }

    #[test]
    fn the_issue_numbers_survive_every_level() {
        let input = r#"{"id": 123456789012345678901, "x": 0.100000000000000000000000000001}"#;
        let output = r#"{"id":123456789012345678901,"x":0.100000000000000000000000000001}"#;
        let codec = built("{}");
        for level in [Level::Minimal, Level::Normal, Level::Aggressive] {
            assert_eq!(
                codec.compress(Payload::json(input), level).unwrap(),
                Outcome::lossless(output),
                "{level}"
            );
        }
    }

    #[test]
    fn refused_and_unprofitable_payloads_pass_through() {
        let codec = built("{}");
        let cases = [
            Payload::text_only("plain text, not JSON"),
            Payload::text_only(r#"{"a": null}"#),
            // Mislabelled, broken or duplicate-keyed JSON is refused, never an error or a panic.
            Payload::json("{\"a\": "),
            Payload::json(r#"{"a": 1, "a": null}"#),
            Payload::json(r#"[{"a": 1, "b": 2, "\u0061": 3}]"#),
            // Folding would make it larger: the no-gain rule, applied here already.
            Payload::json("[[0,0],[0,0]]"),
            Payload::json("[1,1]"),
            Payload::json(""),
        ];
        for payload in cases {
            for level in Level::ALL {
                assert_eq!(
                    codec.compress(payload, level).unwrap(),
                    Outcome::Unchanged,
                    "{payload:?}"
                );
            }
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(
            codec
                .compress(Payload::json(&deep), Level::Minimal)
                .unwrap(),
            Outcome::Unchanged
        );
        let deep_ok = format!(" {}{} ", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(
            codec
                .compress(Payload::json(&deep_ok), Level::Minimal)
                .unwrap()
                .payload()
                .is_some()
        );
    }

    #[test]
    fn params_are_checked_at_construction() {
        let cases = [
            (
                r#"{"elide_nulls": "yes"}"#,
                "param \"elide_nulls\": expected true or false, got a string (\"yes\")",
            ),
            (
                r#"{"max_array_items": -1}"#,
                "param \"max_array_items\": expected a non-negative integer, got a number (-1)",
            ),
            (
                r#"{"max_string_chars": 5}"#,
                "param \"max_string_chars\": expected 0 (no clipping) or at least 41 (room for the clip marker), got 5",
            ),
            (
                r#"{"max_string_char": 5}"#,
                "param \"max_string_char\": unknown key; did you mean \"max_string_chars\"? \
                 (known: elide_nulls, dedup, max_string_chars, max_array_items)",
            ),
        ];
        for (params, message) in cases {
            let err = parrot_codec_api::build::<JsonCompact>(Params::from_json(params).unwrap())
                .unwrap_err();
            assert_eq!(err.to_string(), message, "{params}");
        }
    }

    #[test]
    fn expand_refuses_what_it_cannot_read() {
        let codec = built("{}");
        let cases = [
            "not json",
            r#"[{"_repeat":0,"_value":1}]"#,
            r#"[{"_repeat":"2","_value":1}]"#,
            r#"[{"_repeat":1.5,"_value":1}]"#,
            r#"[{"_repeat":99999999999999,"_value":[1,2,3]}]"#,
        ];
        for payload in cases {
            assert!(codec.expand(payload).is_err(), "{payload}");
        }
        assert_eq!(
            codec.expand(r#"[{"_value":"a","_repeat":3}]"#).unwrap(),
            r#"["a","a","a"]"#
        );
    }

    /// Equality as CONTRACT §2.1 counts it for this codec (null members are absent).
    fn assert_equal_json(expanded: &str, input: &str) {
        let parse = |text: &str| {
            let mut value: serde_json::Value = serde_json::from_str(text).unwrap();
            drop_null_members(&mut value);
            value
        };
        assert_eq!(
            parse(expanded),
            parse(input),
            "expanded {expanded} from {input}"
        );
    }

    fn drop_null_members(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(members) => {
                members.retain(|_, member| !member.is_null());
                members.values_mut().for_each(drop_null_members);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null_members),
            _ => {}
        }
    }
}
