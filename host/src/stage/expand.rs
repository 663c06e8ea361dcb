//! [`Host::expand`](crate::Host::expand): a codec's output given back as the original it was
//! made from, through the codec's inverse.
//!
//! A payload is either a codec's output as the codec wrote it, or the stage's output, which may
//! carry a tee pointer (CONTRACT §5). Two forms are read as a pointer:
//!
//! - a JSON object with a top-level `_tee` member whose value is an object with a string `key`
//!   and a string `reason`: the member the stage appends to an object output, or the
//!   `{"result": …, "_tee": …}` wrapper it puts around any other output;
//! - a text whose last line (a final line break aside) starts with `[wm_get_result {"key":`:
//!   the line the stage writes under a text output. Its reason is the `reason` of its
//!   arguments when they have one; else `lossless` when the line says `lossless`, and `lossy`
//!   when it does not (a line that does not say it was lossless is not trusted to be).
//!
//! A pointer whose reason is `lossless` is taken off and the codec's output under it expanded:
//! the object without its `_tee` member; the wrapper's `result` (a string: its text; any other
//! value: its JSON text); the text without the pointer line and the line break before it.
//!
//! `{"result": X, "_tee": …}` with no other member reads two ways: the wrapper around X, or the
//! object `{"result": X}` with the pointer appended. It is read as the wrapper unless X is an
//! object without a `_tee` member, which the stage appends to and never wraps. So a lossless
//! object output whose only member is a `result` holding anything else comes back as that
//! member's value: a limit of the pointer's form, which does not say which way it was placed.
//!
//! A pointer of any other reason (`lossy`, `cut`) marks an output that lacks part of its
//! original: no inverse can rebuild it, so it is refused whatever codec is named, with the
//! command that returns the original from the tee store.

use std::borrow::Cow;
use std::sync::Arc;

use parrot_codec_api::{DynCodec, RECOVERY_TOOL};
use parrot_json::{Member, Value};
use serde_json::Map;

use crate::error::ExpandError;
use crate::plugins::registry::{AUTO, Registry};
use crate::stage::entries::{Engine, ResolvedEntry};

/// What the stage added to a codec's output, as read from a payload.
#[derive(Debug, PartialEq)]
enum Read<'a> {
    /// No pointer: the payload is the codec's output.
    Bare,
    /// A pointer of reason `lossless`: the codec's output under it.
    Lossless(Cow<'a, str>),
    /// A pointer of another reason: the output lacks part of its original.
    Lossy { key: String, reason: String },
}

/// The original `payload`, an output of codec `name`, was made from (see the module docs), with
/// the codecs of `registry` and the winning `entries` of a host.
pub(crate) fn expand(
    registry: &Registry,
    entries: &[ResolvedEntry],
    name: &str,
    payload: &str,
) -> Result<String, ExpandError> {
    let output = match read(payload) {
        Read::Lossy { key, reason } => return Err(ExpandError::Lossy { key, reason }),
        Read::Lossless(output) => output,
        Read::Bare => Cow::Borrowed(payload),
    };
    let codec = codec_named(registry, entries, name)?;
    codec.expand(&output).map_err(|source| ExpandError::Codec {
        codec: name.to_owned(),
        source: Box::new(source),
    })
}

/// Codec `name` with its inverse: as the first winning entry that names it built it (with its
/// params), else built with none.
fn codec_named(
    registry: &Registry,
    entries: &[ResolvedEntry],
    name: &str,
) -> Result<Arc<dyn DynCodec>, ExpandError> {
    if name == AUTO {
        return Err(ExpandError::Router);
    }
    let Some(info) = registry.get(name) else {
        return Err(ExpandError::UnknownCodec {
            codec: name.to_owned(),
            known: registry.names(),
            suggestion: crate::config::manifest::closest(name, registry.codec_names()),
        });
    };
    if !info.meta.expands() {
        return Err(ExpandError::NoInverse {
            codec: name.to_owned(),
        });
    }
    let built = entries
        .iter()
        .filter(|entry| entry.codec_name == name)
        .find_map(|entry| match entry.engine() {
            Engine::Codec(resolved) => Some(resolved.codec.clone()),
            Engine::Router(_) => None,
        });
    match built {
        Some(codec) => Ok(codec),
        None => registry
            .instantiate(name, Map::new())
            .map_err(|source| ExpandError::Build {
                codec: name.to_owned(),
                source: Box::new(source),
            }),
    }
}

/// The pointer `payload` carries, if any.
fn read(payload: &str) -> Read<'_> {
    let start = payload.len() - payload.trim_start().len();
    if payload[start..].starts_with('{') {
        // JSON never ends with a pointer line: a JSON text is read as JSON or not at all.
        if let Ok(span) = parrot_json::value_span(payload) {
            return json_pointer(payload, span.start).unwrap_or(Read::Bare);
        }
    }
    text_pointer(payload).unwrap_or(Read::Bare)
}

/// The pointer of the JSON object at `start` of `payload`: its `_tee` member, when that is an
/// object with a string `key` and a string `reason`.
fn json_pointer(payload: &str, start: usize) -> Option<Read<'_>> {
    let members = parrot_json::members(payload, start).ok()?;
    let tee = members.iter().position(|member| member.name.is("_tee"))?;
    let pointer = Value::parse(&payload[members[tee].value.clone()]).ok()?;
    let (key, reason) = (string(&pointer, "key")?, string(&pointer, "reason")?);
    if reason != "lossless" {
        return Some(Read::Lossy { key, reason });
    }
    Some(Read::Lossless(unpointed(payload, &members, tee)))
}

/// Member `name` of `value`, when it is a string.
fn string(value: &Value<'_>, name: &str) -> Option<String> {
    match value.member(name)? {
        Value::String(text) => Some(text.decoded().into_owned()),
        _ => None,
    }
}

/// The codec's output under a lossless pointer, member `tee` of the object of `members`.
fn unpointed<'a>(payload: &'a str, members: &[Member<'a>], tee: usize) -> Cow<'a, str> {
    if let [result, _] = members
        && tee == 1
        && result.name.is("result")
    {
        let value = &payload[result.value.clone()];
        match parrot_json::top_level(value) {
            // An object without `_tee` is never wrapped: the pointer was appended to it.
            Some(parrot_json::TopLevel::Object { has_tee: false, .. }) => {}
            _ if value.starts_with('"') => {
                // The value was read as a JSON string already, so it decodes.
                return parrot_json::decode_string(value).unwrap_or(Cow::Borrowed(value));
            }
            _ => return Cow::Borrowed(value),
        }
    }
    let mut object = String::with_capacity(payload.len());
    object.push('{');
    let kept = members
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != tee)
        .map(|(_, member)| member);
    for member in kept {
        if object.len() > 1 {
            object.push(',');
        }
        object.push_str(member.name.raw());
        object.push(':');
        object.push_str(&payload[member.value.clone()]);
    }
    object.push('}');
    Cow::Owned(object)
}

/// The pointer line that ends `payload`, when it has one (see the module docs).
fn text_pointer(payload: &str) -> Option<Read<'_>> {
    let text = payload.strip_suffix('\n').unwrap_or(payload);
    let start = text.rfind('\n').map_or(0, |at| at + 1);
    let arguments = text[start..]
        .strip_prefix('[')?
        .strip_prefix(RECOVERY_TOOL)?
        .strip_prefix(' ')?;
    if !arguments.starts_with("{\"key\":") {
        return None;
    }
    let (parsed, after) = match parrot_json::Reader::new(arguments).skip_value(0) {
        Ok(object) => (Value::parse(object).ok(), &arguments[object.len()..]),
        Err(_) => (None, arguments),
    };
    let key = parsed
        .as_ref()
        .and_then(|object| string(object, "key"))
        .unwrap_or_else(|| written_key(arguments));
    let reason = match parsed.as_ref().and_then(|object| string(object, "reason")) {
        Some(reason) => reason,
        None if after.contains("lossless") => "lossless".to_owned(),
        None => "lossy".to_owned(),
    };
    if reason != "lossless" {
        return Some(Read::Lossy { key, reason });
    }
    Some(Read::Lossless(Cow::Borrowed(
        &payload[..start.saturating_sub(1)],
    )))
}

/// The key of pointer arguments that do not parse: the text of the `"key"` string as written,
/// up to its closing quote.
fn written_key(arguments: &str) -> String {
    let written = &arguments["{\"key\":\"".len().min(arguments.len())..];
    written.split('"').next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use parrot_codec_api::{Codec, CodecError, Inverse, Level, Outcome, Params, Payload};

    use super::*;
    use crate::{Call, Host, Input, MemoryTeeStore};

    const HINT: &str =
        "wm_get_result with this key returns it all; add a marker's selector for that part";

    fn pointer(reason: &str) -> String {
        format!(r#"{{"key":"__tee__:t:0123456789ab","reason":"{reason}","hint":"{HINT}"}}"#)
    }

    fn lossy(reason: &str) -> Read<'static> {
        Read::Lossy {
            key: "__tee__:t:0123456789ab".to_owned(),
            reason: reason.to_owned(),
        }
    }

    /// One row per form of payload: what `read` finds in it.
    #[test]
    fn read_finds_each_pointer_form() {
        let lossless = pointer("lossless");
        let line = |reason: &str| {
            format!(
                "[wm_get_result {{\"key\":\"__tee__:t:0123456789ab\"}} returns the original of \
                 this {reason} result; add a marker's selector for that part]"
            )
        };
        let rows: Vec<(String, Read<'_>)> = vec![
            // No pointer.
            (r#"{"a":1}"#.to_owned(), Read::Bare),
            ("plain text\n".to_owned(), Read::Bare),
            (r#"{"a":1,"_tee":1}"#.to_owned(), Read::Bare),
            (r#"{"a":1,"_tee":{"key":"k"}}"#.to_owned(), Read::Bare),
            ("{not json\n".to_owned(), Read::Bare),
            ("[wm_get_result {\"lines\":\"1-4\"}]".to_owned(), Read::Bare),
            // Lossy and cut, as JSON and as a line.
            (
                format!(r#"{{"a":1,"_tee":{}}}"#, pointer("lossy")),
                lossy("lossy"),
            ),
            (
                format!(r#"{{"result":"x\n[… cut]","_tee":{}}}"#, pointer("cut")),
                lossy("cut"),
            ),
            (format!("folded\n{}", line("lossy")), lossy("lossy")),
            (format!("folded\n{}\n", line("lossy")), lossy("lossy")),
            (line("lossy"), lossy("lossy")),
            // A line that does not say it is lossless is taken as lossy.
            (
                format!(
                    "a\n{}",
                    "[wm_get_result {\"key\":\"__tee__:t:0123456789ab\"}]"
                ),
                lossy("lossy"),
            ),
            (
                "a\n[wm_get_result {\"key\":\"__tee__:t:0123456789ab\" broken]".to_owned(),
                lossy("lossy"),
            ),
            // Lossless: the codec's output under the pointer.
            (
                format!(r#"{{"a": 1, "b" : [2],"_tee":{lossless}}}"#),
                Read::Lossless(r#"{"a":1,"b":[2]}"#.into()),
            ),
            (
                format!(r#"{{"_tee":{lossless}}}"#),
                Read::Lossless("{}".into()),
            ),
            (
                format!(r#"{{"result":[1, 2],"_tee":{lossless}}}"#),
                Read::Lossless("[1, 2]".into()),
            ),
            (
                format!(r#"{{"result":{{"_tee":1}},"_tee":{lossless}}}"#),
                Read::Lossless(r#"{"_tee":1}"#.into()),
            ),
            (
                format!(r#"{{"result":{{"x":1}},"_tee":{lossless}}}"#),
                Read::Lossless(r#"{"result":{"x":1}}"#.into()),
            ),
            (
                format!(r#"{{"result":"a\n\"b\"\n","_tee":{lossless}}}"#),
                Read::Lossless("a\n\"b\"\n".into()),
            ),
            (
                format!("a\nb\n{}", line("lossless")),
                Read::Lossless("a\nb".into()),
            ),
            (
                "a\n\n[wm_get_result {\"key\":\"k\",\"reason\":\"lossless\"} returns it]\n"
                    .to_owned(),
                Read::Lossless("a\n".into()),
            ),
        ];
        for (payload, expected) in &rows {
            assert_eq!(&read(payload), expected, "{payload}");
        }
    }

    #[test]
    fn a_key_that_does_not_parse_is_taken_as_written() {
        assert_eq!(
            written_key(r#"{"key":"__tee__:t:1 broken"#),
            "__tee__:t:1 broken"
        );
        assert_eq!(written_key(r#"{"key":"#), "");
    }

    fn host_in(dir: &Path) -> Host {
        Host::builder()
            .project(dir)
            .plugin_path(None)
            .build()
            .unwrap()
    }

    /// A build log of 300 lines with one failure: `log` folds it, lossy.
    fn build_log() -> String {
        let mut lines: Vec<String> = (0..300)
            .map(|n| {
                format!(
                    "2026-12-07T10:00:{:02}Z INFO compiling crate_{n} v0.{n}.0",
                    n % 60
                )
            })
            .collect();
        lines[150] = "error[E0308]: mismatched types".to_owned();
        lines.join("\n") + "\n"
    }

    /// A nested document whose user and repository occur twice: `json_nested` refers to them.
    fn nested_document() -> String {
        let user = r#"{"login":"octocat","id":583231,"avatar_url":"https://avatars.githubusercontent.com/u/583231?v=4","type":"User","site_admin":false}"#;
        let repo = format!(
            r#"{{"id":1296269,"name":"Hello-World","full_name":"octocat/Hello-World","owner":{user},"private":false,"description":"This your first repo!","fork":false}}"#
        );
        format!(
            r#"{{"number":1347,"state":"open","user":{user},"head":{{"ref":"new-topic","repo":{repo},"user":{user}}},"base":{{"ref":"main","repo":{repo},"user":{user}}},"merged_by":null}}"#
        )
    }

    /// Each JSON codec of `auto`: its lossless output expands to the same JSON value as its
    /// input.
    #[test]
    fn each_json_codec_round_trips_to_the_same_value() {
        let dir = tempfile::tempdir().unwrap();
        let host = host_in(dir.path());
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        let rows = std::fs::read_to_string(corpus.join("query-500x12.json")).unwrap();
        let labels = std::fs::read_to_string(corpus.join("github-labels.json")).unwrap();
        let object = r#"{"id": 7, "tags": null, "items": [{"x": 1}, {"x": 1}, {"x": 1}]}"#;
        let rows_of: [(&str, &str); 5] = [
            ("json_compact", object),
            ("json_compact", &rows),
            ("columnar", &rows),
            ("toon", &labels),
            ("json_nested", &nested_document()),
        ];
        for (name, input) in rows_of {
            let codec = host.registry().instantiate(name, Map::new()).unwrap();
            let outcome = codec
                .compress(Payload::json(input), Level::Minimal)
                .unwrap();
            let Outcome::Changed {
                payload,
                lossy: false,
            } = outcome
            else {
                panic!("{name}: not a lossless change: {outcome:?}");
            };
            let expanded = host.expand(name, &payload).unwrap();
            let nulls_absent = codec.meta().null_members_absent();
            assert!(
                parrot_json::equivalent(input, &expanded, nulls_absent),
                "{name}: {expanded}"
            );
        }
    }

    /// What the stage gives the model, pointer included, expands as the codec's output does.
    #[test]
    fn a_lossless_pointer_is_taken_off() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .tee_store(Arc::new(MemoryTeeStore::default()))
            .tee_lossless(true)
            .build()
            .unwrap();
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        for file in ["query-500x12.json", "github-repos.json"] {
            let input = std::fs::read_to_string(corpus.join(file)).unwrap();
            let out = host.process(Call::new("t", Input::Text(&input)));
            let payload = out.text().unwrap();
            // A pointer the stage wrote, in whichever form it writes one for this output.
            assert!(
                matches!(read(payload), Read::Lossless(_)),
                "{file}: {payload:.300}"
            );
            let codec = out.meta.codec.as_deref().unwrap();
            let nulls_absent = host
                .registry()
                .get(codec)
                .unwrap()
                .meta
                .null_members_absent();
            let expanded = host.expand(codec, payload).unwrap();
            assert!(
                parrot_json::equivalent(&input, &expanded, nulls_absent),
                "{file}, {codec}: {expanded:.300}"
            );
        }
    }

    #[test]
    fn a_lossy_output_is_refused_with_the_recover_command_and_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .tee_store(Arc::new(MemoryTeeStore::default()))
            .build()
            .unwrap();
        let log = build_log();
        let out = host.process(Call::new("shell_build", Input::Text(&log)));
        assert_eq!(out.meta.codec.as_deref(), Some("log"));
        let key = out.meta.tee_key.clone().unwrap();
        // Whatever the codec named: no inverse can rebuild what was left out.
        for codec in ["log", "json_compact", "auto", "zstd"] {
            let err = host.expand(codec, out.text().unwrap()).unwrap_err();
            assert!(
                matches!(&err, ExpandError::Lossy { key: k, reason } if *k == key && reason == "lossy"),
                "{codec}: {err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "the payload is a lossy output (its tee pointer's reason is \"lossy\"): no \
                     codec can rebuild its original from it; the tee store holds the original: \
                     parrot-compress recover {key}"
                )
            );
        }
    }

    #[test]
    fn auto_is_refused_as_the_router_naming_compression_codec() {
        let dir = tempfile::tempdir().unwrap();
        let err = host_in(dir.path()).expand("auto", "[1]").unwrap_err();
        assert!(matches!(err, ExpandError::Router));
        assert_eq!(
            err.to_string(),
            "codec \"auto\" is the router, not a codec: it chooses a codec for each payload and \
             has no inverse; name the codec that produced the payload, the \"compression_codec\" \
             of its metadata (compress --meta)"
        );
    }

    #[test]
    fn an_unknown_codec_lists_the_known_ones_and_the_nearest() {
        let dir = tempfile::tempdir().unwrap();
        let host = host_in(dir.path());
        let known = host.registry().names();
        let err = host.expand("jsn_compact", "[1]").unwrap_err();
        assert!(matches!(
            &err,
            ExpandError::UnknownCodec {
                suggestion: Some("json_compact"),
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            format!(
                "unknown codec \"jsn_compact\" (known: {known}); did you mean \"json_compact\"?"
            )
        );
        let err = host.expand("zstd", "[1]").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("unknown codec \"zstd\" (known: {known})")
        );
    }

    #[test]
    fn a_codec_without_an_inverse_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let err = host_in(dir.path()).expand("log", "folded").unwrap_err();
        assert!(matches!(&err, ExpandError::NoInverse { codec } if codec == "log"));
        assert_eq!(
            err.to_string(),
            "codec \"log\" offers no inverse: its outputs cannot be expanded (the original of a \
             lossy output is in the tee store: parrot-compress recover KEY, KEY from its \"_tee\" \
             pointer)"
        );
    }

    #[test]
    fn what_the_inverse_refuses_is_the_codecs_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = host_in(dir.path())
            .expand("json_compact", "not json")
            .unwrap_err();
        assert!(matches!(&err, ExpandError::Codec { codec, .. } if codec == "json_compact"));
        assert!(
            err.to_string().starts_with(
                "codec \"json_compact\" cannot expand this payload: json_compact cannot expand: "
            ),
            "{err}"
        );
    }

    /// Writes each payload after its `mark`, a param it must be given.
    struct Marked {
        mark: String,
    }

    impl Marked {
        fn expand(&self, payload: &str) -> Result<String, CodecError> {
            payload
                .strip_prefix(self.mark.as_str())
                .map(str::to_owned)
                .ok_or_else(|| CodecError::invalid_input(format!("no \"{}\" first", self.mark)))
        }
    }

    impl Codec for Marked {
        const NAME: &'static str = "marked";
        const INVERSE: Option<Inverse<Self>> = Some(Self::expand);

        fn new(params: &mut Params) -> Result<Self, CodecError> {
            let mark = params
                .get::<String>("mark")?
                .ok_or_else(|| CodecError::invalid_param("mark", "required"))?;
            Ok(Marked { mark })
        }

        fn compress(&self, payload: Payload<'_>, _: Level) -> Result<Outcome, CodecError> {
            Ok(Outcome::lossless(format!(
                "{}{}",
                self.mark,
                payload.text()
            )))
        }
    }

    /// The codec an entry built, with the entry's params, is the one that expands; with no such
    /// entry the codec is built without params, which may fail.
    #[test]
    fn the_entrys_codec_expands_and_one_without_params_cannot_be_built() {
        let dir = tempfile::tempdir().unwrap();
        let marked = |dir: &Path| {
            Host::builder()
                .project(dir)
                .plugin_path(None)
                .codec::<Marked>()
                .build()
                .unwrap()
        };
        let err = marked(dir.path()).expand("marked", ">>x").unwrap_err();
        assert!(matches!(&err, ExpandError::Build { codec, .. } if codec == "marked"));
        assert_eq!(
            err.to_string(),
            "codec \"marked\": cannot be built: param \"mark\": required"
        );
        std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
        std::fs::write(
            dir.path().join(".parrot/compressors.toml"),
            "[compressor.t]\ncodec = \"marked\"\n[compressor.t.params]\nmark = \">>\"\n",
        )
        .unwrap();
        assert_eq!(marked(dir.path()).expand("marked", ">>x").unwrap(), "x");
    }
}
