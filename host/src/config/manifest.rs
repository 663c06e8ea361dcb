//! `compressors.toml` manifests: the raw TOML checked key by key, and the validated form.
//!
//! ```toml
//! [plugin]                          # only in a plugin package's manifest
//! library = "parrot_plugin_prune"   # the library beside this file, with or without lib/.so
//! sha256 = "…"                      # optional: refuse a library with another digest
//! codecs = ["tool_result_prune"]    # optional: codecs the library must provide
//!
//! [compressor."dq_execute_database_query"]
//! codec = "columnar"                # required: a registered codec
//! level = "normal"                  # none | minimal | normal | aggressive; default minimal
//! tee = true                        # informational: every lossy outcome is teed anyway
//!   [compressor."dq_execute_database_query".params]
//!   min_rows = 20                   # the codec's own params, checked by the codec
//! ```
//!
//! Every key is checked: an unknown one is an error naming the file, line, entry and key, with
//! the nearest valid key when it looks like a misspelling.

use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use parrot_codec_api::Level;
use serde_json::{Map, Value as Json};
use toml::de::DeTable;
use toml::{Table, Value};

use crate::error::ManifestError;

/// The name under which the manifest compiled into the host appears in messages.
pub const CORE_MANIFEST_NAME: &str = "<core>";

/// The core defaults, compiled into the host (`core.toml`): one entry, `"*"` → `auto` at
/// `normal`, which routes each payload by its shape (CONTRACT §2.8).
///
/// It is the one place the routing defaults are written: `auto` reads the candidate lists an
/// entry's params leave out from here (`manifest::core_params`), and the tests and documents
/// that show them read them from here or from the command's output.
pub const CORE_MANIFEST: &str = include_str!("core.toml");

/// The tool pattern of the core manifest's one entry.
pub(crate) const CORE_ENTRY: &str = "*";

/// The params of the core manifest's `"*"` entry, parsed once from [`CORE_MANIFEST`].
///
/// `auto` takes from here each candidate list (`rows`, `object`, `text`, `log`, `file`) that an
/// `auto` entry's params leave out, so that `core.toml` is the single source of the routing
/// defaults. Only the lists: a candidate's own params table there (`columnar = { min_rows = 2 }`)
/// belongs to the core entry alone, as any entry's params belong to it.
///
/// # Panics
///
/// Never on anything a user gives: the text is compiled in, and the unit test
/// `core_manifest_is_valid` holds it valid.
pub(crate) fn core_params() -> &'static Map<String, Json> {
    static PARAMS: std::sync::OnceLock<Map<String, Json>> = std::sync::OnceLock::new();
    PARAMS.get_or_init(|| {
        let mut errors = Vec::new();
        let core = parse(
            CORE_MANIFEST_NAME,
            None,
            SourceKind::Core,
            CORE_MANIFEST,
            &mut errors,
        );
        assert!(
            errors.is_empty(),
            "the core manifest is invalid: {errors:?}"
        );
        core.and_then(|core| core.entries.into_iter().find(|e| e.key == CORE_ENTRY))
            .expect("the core manifest has its \"*\" entry")
            .params
    })
}

const TOP_KEYS: &[&str] = &["plugin", "compressor"];
const PLUGIN_KEYS: &[&str] = &["library", "sha256", "codecs"];
const PLUGIN_KEYS_TEXT: &str = "library, sha256, codecs";
const ENTRY_KEYS: &[&str] = &["codec", "level", "tee", "params"];
const ENTRY_KEYS_TEXT: &str = "codec, level, tee, params";

/// What kind of source a manifest is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// `<project>/.parrot/compressors.toml`.
    Project,
    /// A plugin package's `compressors.toml`.
    Package,
    /// The defaults compiled into the host.
    Core,
}

/// A validated manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file as messages name it (`<core>` for the compiled-in defaults).
    pub name: String,
    /// The file's path, `None` for the core manifest.
    pub path: Option<PathBuf>,
    /// What kind of source it is.
    pub kind: SourceKind,
    /// The `[plugin]` table of a package manifest.
    pub plugin: Option<PluginDecl>,
    /// The `[compressor."…"]` entries, in file order.
    pub entries: Vec<Entry>,
    /// Entries with errors of their own that still name a codec: never used, but their codec
    /// and params are checked too, so that every error of an entry is reported at once.
    pub rejected: Vec<Entry>,
}

/// A package's `[plugin]` table, with the library path resolved inside the package folder.
#[derive(Debug, Clone)]
pub struct PluginDecl {
    /// The library's path (inside the package folder).
    pub library: PathBuf,
    /// The line of the `library` key.
    pub line: Option<usize>,
    /// The pinned SHA-256 digest, lower-case hex.
    pub sha256: Option<String>,
    /// Codecs the library must provide.
    pub codecs: Vec<String>,
}

/// One `[compressor."<tool pattern>"]` entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The tool name or glob pattern.
    pub key: String,
    /// The line of the entry's table.
    pub line: Option<usize>,
    /// The codec's name.
    pub codec: String,
    /// The line of the `codec` key.
    pub codec_line: Option<usize>,
    /// The configured level.
    pub level: Level,
    /// The informational `tee` flag.
    pub tee: bool,
    /// The codec's params, as JSON.
    pub params: Map<String, Json>,
    /// The line of each param key, for messages about one param.
    pub param_lines: Vec<(String, usize)>,
}

impl Entry {
    /// The line to name in a message about param `key` (the entry's line if unknown).
    pub fn line_of_param(&self, key: Option<&str>) -> Option<usize> {
        key.and_then(|key| {
            self.param_lines
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, line)| *line)
        })
        .or(self.line)
    }
}

/// Parses and validates the text of one manifest on its own: every key and value checked, no
/// library loaded, no codec built. Returns the manifest (its valid entries) unless the text is
/// not TOML, and every error found.
///
/// # Examples
///
/// ```
/// use parrot_host::manifest::{SourceKind, validate};
///
/// let (manifest, errors) = validate("m.toml", SourceKind::Project, "[compressor.t]\ncodec = 1\n");
/// assert_eq!(manifest.unwrap().entries.len(), 0);
/// assert_eq!(
///     errors[0].to_string(),
///     "m.toml:2: entry \"t\": key \"codec\": expected a codec name as a string, got the integer 1"
/// );
/// ```
pub fn validate(
    name: &str,
    kind: SourceKind,
    text: &str,
) -> (Option<Manifest>, Vec<ManifestError>) {
    let mut errors = Vec::new();
    let manifest = parse(name, None, kind, text, &mut errors);
    (manifest, errors)
}

/// Parses and validates one manifest. Errors are pushed to `errors` (all of them, not only the
/// first). Unless the file is not TOML at all, the manifest is returned with its valid entries
/// only, so that the host can go on to report what is wrong with those too (their codecs and
/// params) — building fails anyway when `errors` is not empty.
pub(crate) fn parse(
    name: &str,
    path: Option<&Path>,
    kind: SourceKind,
    text: &str,
    errors: &mut Vec<ManifestError>,
) -> Option<Manifest> {
    let lines = Lines::new(text);
    let table: Table = match toml::from_str(text) {
        Ok(table) => table,
        Err(err) => {
            errors.push(ManifestError::Syntax {
                file: name.to_owned(),
                line: err.span().map(|span| lines.line(span.start)),
                message: err.message().trim().to_owned(),
            });
            return None;
        }
    };
    let spans = DeTable::parse(text).ok();
    let ctx = Ctx {
        name,
        lines: &lines,
        spans: spans.as_ref().map(|s| s.get_ref()),
    };
    let mut plugin = None;
    let mut entries = Vec::new();
    let mut rejected = Vec::new();
    for (key, value) in &table {
        match key.as_str() {
            "plugin" if kind == SourceKind::Project => {
                errors.push(ManifestError::PluginInProject {
                    file: name.to_owned(),
                    line: ctx.line(&[key]),
                })
            }
            "plugin" => plugin = ctx.plugin(value, path, errors),
            "compressor" => (entries, rejected) = ctx.entries(value, errors),
            other => errors.push(ManifestError::UnknownKey {
                file: name.to_owned(),
                line: ctx.line(&[other]),
                entry: None,
                key: other.to_owned(),
                suggestion: closest(other, TOP_KEYS.iter().copied()),
                expected: "[plugin], [compressor.\"<tool>\"]",
            }),
        }
    }
    Some(Manifest {
        name: name.to_owned(),
        path: path.map(Path::to_path_buf),
        kind,
        plugin,
        entries,
        rejected,
    })
}

struct Ctx<'a> {
    name: &'a str,
    lines: &'a Lines,
    spans: Option<&'a DeTable<'a>>,
}

impl Ctx<'_> {
    /// The line of the key at `path` (table names, then the key).
    fn line(&self, path: &[&str]) -> Option<usize> {
        let mut table = self.spans?;
        let mut span: Option<Range<usize>> = None;
        for (i, key) in path.iter().enumerate() {
            let (k, v) = table.get_key_value(*key)?;
            span = Some(k.span());
            if i + 1 < path.len() {
                match v.get_ref() {
                    toml::de::DeValue::Table(inner) => table = inner,
                    _ => return span.map(|s| self.lines.line(s.start)),
                }
            }
        }
        span.map(|s| self.lines.line(s.start))
    }

    fn invalid(
        &self,
        path: &[&str],
        entry: Option<&str>,
        key: &str,
        message: String,
    ) -> ManifestError {
        ManifestError::InvalidValue {
            file: self.name.to_owned(),
            line: self.line(path),
            entry: entry.map(str::to_owned),
            key: key.to_owned(),
            message,
        }
    }

    fn plugin(
        &self,
        value: &Value,
        manifest: Option<&Path>,
        errors: &mut Vec<ManifestError>,
    ) -> Option<PluginDecl> {
        let Some(table) = value.as_table() else {
            errors.push(self.invalid(&["plugin"], None, "plugin", "must be a table".to_owned()));
            return None;
        };
        let before = errors.len();
        let mut keys = PluginKeys::default();
        for (key, value) in table {
            self.plugin_key(key, value, &mut keys, errors);
        }
        let Some(library) = keys.library else {
            if table.contains_key("library") {
                return None; // present but invalid: already reported
            }
            errors.push(ManifestError::MissingKey {
                file: self.name.to_owned(),
                line: self.line(&["plugin"]),
                entry: None,
                key: "plugin.library",
            });
            return None;
        };
        let resolved = self.plugin_library(manifest, library, errors)?;
        (errors.len() == before).then(|| PluginDecl {
            library: resolved,
            line: self.line(&["plugin", "library"]),
            sha256: keys.sha256,
            codecs: keys.codecs,
        })
    }

    /// Reads one key of `[plugin]` into `keys`, or reports why it cannot.
    fn plugin_key(
        &self,
        key: &str,
        value: &Value,
        keys: &mut PluginKeys,
        errors: &mut Vec<ManifestError>,
    ) {
        let path = ["plugin", key];
        match key {
            "library" => match value.as_str() {
                Some(name) => keys.library = Some(name.to_owned()),
                None => errors.push(self.invalid(
                    &path,
                    None,
                    "library",
                    format!(
                        "expected the library's file name as a string, got {}",
                        kind(value)
                    ),
                )),
            },
            "sha256" => match value.as_str() {
                Some(hex) if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    keys.sha256 = Some(hex.to_ascii_lowercase());
                }
                _ => errors.push(self.invalid(
                    &path,
                    None,
                    "sha256",
                    format!("expected 64 hex digits, got {}", kind(value)),
                )),
            },
            "codecs" => match value.as_array().and_then(|items| {
                items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            }) {
                Some(names) => keys.codecs = names,
                None => errors.push(self.invalid(
                    &path,
                    None,
                    "codecs",
                    "expected an array of codec names".to_owned(),
                )),
            },
            other => errors.push(ManifestError::UnknownKey {
                file: self.name.to_owned(),
                line: self.line(&path),
                entry: None,
                key: format!("plugin.{other}"),
                suggestion: closest(other, PLUGIN_KEYS.iter().copied()),
                expected: PLUGIN_KEYS_TEXT,
            }),
        }
    }

    /// The plugin's library inside the package folder (the manifest's), or an error when
    /// `library` leads out of it.
    fn plugin_library(
        &self,
        manifest: Option<&Path>,
        library: String,
        errors: &mut Vec<ManifestError>,
    ) -> Option<PathBuf> {
        let package = manifest.and_then(Path::parent).unwrap_or(Path::new("."));
        let resolved = resolve_library(package, &library);
        if resolved.is_none() {
            errors.push(ManifestError::LibraryOutsidePackage {
                file: self.name.to_owned(),
                line: self.line(&["plugin", "library"]),
                library,
                package: package.to_path_buf(),
            });
        }
        resolved
    }

    /// The valid entries, and those with errors that still name a codec (see
    /// [`Manifest::rejected`]).
    fn entries(&self, value: &Value, errors: &mut Vec<ManifestError>) -> (Vec<Entry>, Vec<Entry>) {
        let Some(table) = value.as_table() else {
            errors.push(self.invalid(
                &["compressor"],
                None,
                "compressor",
                "must be a table of entries, [compressor.\"<tool>\"]".to_owned(),
            ));
            return (Vec::new(), Vec::new());
        };
        let mut entries = Vec::new();
        let mut rejected = Vec::new();
        for (key, value) in table {
            let before = errors.len();
            if let Some(entry) = self.entry(key, value, errors) {
                if errors.len() == before {
                    entries.push(entry);
                } else {
                    rejected.push(entry);
                }
            }
        }
        (entries, rejected)
    }

    /// The entry, unless it has no codec name; `errors` gets everything else wrong with it.
    fn entry(&self, key: &str, value: &Value, errors: &mut Vec<ManifestError>) -> Option<Entry> {
        let entry_line = self.line(&["compressor", key]);
        let Some(table) = value.as_table() else {
            errors.push(ManifestError::InvalidPattern {
                file: self.name.to_owned(),
                line: entry_line,
                entry: key.to_owned(),
                message: format!(
                    "must be a table (codec = \"…\", level = \"…\"), got {}",
                    kind(value)
                ),
            });
            return None;
        };
        if let Err(message) = crate::config::pattern::check_pattern(key) {
            errors.push(ManifestError::InvalidPattern {
                file: self.name.to_owned(),
                line: entry_line,
                entry: key.to_owned(),
                message,
            });
        }
        let mut fields = Fields {
            codec: None,
            level: Level::Minimal,
            tee: false,
            params: Map::new(),
        };
        for (field, value) in table {
            self.field(key, field, value, &mut fields, errors);
        }
        let Fields {
            codec,
            level,
            tee,
            params,
        } = fields;
        let Some(codec) = codec else {
            if table.contains_key("codec") {
                return None; // present but invalid: already reported
            }
            errors.push(ManifestError::MissingKey {
                file: self.name.to_owned(),
                line: entry_line,
                entry: Some(key.to_owned()),
                key: "codec",
            });
            return None;
        };
        let param_lines = params
            .keys()
            .filter_map(|param| {
                let line = self.line(&["compressor", key, "params", param])?;
                Some((param.clone(), line))
            })
            .collect();
        Some(Entry {
            key: key.to_owned(),
            line: entry_line,
            codec,
            codec_line: self.line(&["compressor", key, "codec"]),
            level,
            tee,
            params,
            param_lines,
        })
    }

    /// One field of the entry `key` into `fields`; `errors` gets what is wrong with it.
    fn field(
        &self,
        key: &str,
        field: &str,
        value: &Value,
        fields: &mut Fields,
        errors: &mut Vec<ManifestError>,
    ) {
        let path = ["compressor", key, field];
        match field {
            "codec" => match value.as_str() {
                Some(name) => fields.codec = Some(name.to_owned()),
                None => errors.push(self.invalid(
                    &path,
                    Some(key),
                    "codec",
                    format!("expected a codec name as a string, got {}", kind(value)),
                )),
            },
            "level" => match value.as_str().map(str::parse::<Level>) {
                Some(Ok(parsed)) => fields.level = parsed,
                Some(Err(err)) => {
                    errors.push(self.invalid(&path, Some(key), "level", err.to_string()));
                }
                None => errors.push(self.invalid(
                    &path,
                    Some(key),
                    "level",
                    format!(
                        "expected one of \"none\", \"minimal\", \"normal\", \"aggressive\", got {}",
                        kind(value)
                    ),
                )),
            },
            "tee" => match value.as_bool() {
                Some(flag) => fields.tee = flag,
                None => errors.push(self.invalid(
                    &path,
                    Some(key),
                    "tee",
                    format!("expected true or false, got {}", kind(value)),
                )),
            },
            "params" => match value.as_table().map(table_to_json) {
                Some(Ok(map)) => fields.params = map,
                Some(Err(message)) => {
                    errors.push(self.invalid(&path, Some(key), "params", message));
                }
                None => errors.push(self.invalid(
                    &path,
                    Some(key),
                    "params",
                    format!(
                        "expected a table of the codec's params, got {}",
                        kind(value)
                    ),
                )),
            },
            other => errors.push(ManifestError::UnknownKey {
                file: self.name.to_owned(),
                line: self.line(&path),
                entry: Some(key.to_owned()),
                key: other.to_owned(),
                suggestion: closest(other, ENTRY_KEYS.iter().copied()),
                expected: ENTRY_KEYS_TEXT,
            }),
        }
    }
}

/// An entry's fields as read, before its codec is known to be named.
struct Fields {
    codec: Option<String>,
    level: Level,
    tee: bool,
    params: Map<String, Json>,
}

/// The keys of a `[plugin]` table read so far, each valid on its own.
#[derive(Default)]
struct PluginKeys {
    library: Option<String>,
    sha256: Option<String>,
    codecs: Vec<String>,
}

/// Resolves `[plugin] library` inside `package`: a bare name is looked up as
/// `lib<name>.so`, `<name>.so`, then `<name>` (with the platform's prefix and suffix), the
/// first that exists, else the first form. `None` when the value is absolute or climbs out with `..`.
fn resolve_library(package: &Path, library: &str) -> Option<PathBuf> {
    let relative = Path::new(library);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return None;
    }
    let exact = package.join(relative);
    if library.contains('/') || library.ends_with(std::env::consts::DLL_SUFFIX) {
        return Some(exact);
    }
    let candidates = [
        package.join(crate::config::package::library_file_name(library)),
        package.join(format!("{library}{}", std::env::consts::DLL_SUFFIX)),
        exact,
    ];
    let first = candidates[0].clone();
    Some(
        candidates
            .into_iter()
            .find(|c| c.is_file())
            .unwrap_or(first),
    )
}

fn table_to_json(table: &Table) -> Result<Map<String, Json>, String> {
    table
        .iter()
        .map(|(key, value)| Ok((key.clone(), value_to_json(key, value)?)))
        .collect()
}

fn value_to_json(key: &str, value: &Value) -> Result<Json, String> {
    Ok(match value {
        Value::String(s) => Json::String(s.clone()),
        Value::Integer(i) => Json::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .ok_or_else(|| format!("param \"{key}\": {f} is not a finite number"))?,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Datetime(d) => Json::String(d.to_string()),
        Value::Array(items) => Json::Array(
            items
                .iter()
                .map(|item| value_to_json(key, item))
                .collect::<Result<_, _>>()?,
        ),
        Value::Table(table) => Json::Object(table_to_json(table)?),
    })
}

fn kind(value: &Value) -> String {
    match value {
        Value::String(s) => format!("the string \"{s}\""),
        Value::Integer(i) => format!("the integer {i}"),
        Value::Float(f) => format!("the float {f}"),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Datetime(_) => "a datetime".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Table(_) => "a table".to_owned(),
    }
}

/// The candidate nearest `word` by edit distance, when it is near enough to be a slip (a third
/// of its length): a suggestion further off would mislead more than help.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::damerau_levenshtein(word, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Byte offset → 1-based line number.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { starts }
    }

    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|start| *start <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(kind: SourceKind, text: &str) -> Vec<String> {
        let mut errors = Vec::new();
        parse(
            "m.toml",
            Some(Path::new("/pkg/compressors.toml")),
            kind,
            text,
            &mut errors,
        );
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn core_manifest_is_valid() {
        let mut errors = Vec::new();
        let core = parse(
            CORE_MANIFEST_NAME,
            None,
            SourceKind::Core,
            CORE_MANIFEST,
            &mut errors,
        )
        .expect("core manifest parses");
        let keys: Vec<&str> = core.entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["*"]);
        assert_eq!(core.entries[0].codec, "auto");
        assert_eq!(core.entries[0].level, Level::Normal);
        assert_eq!(
            core.entries[0].params["columnar"]["min_rows"],
            Json::from(2)
        );
        assert_eq!(&core.entries[0].params, core_params());
        for list in ["rows", "object", "text", "log", "file"] {
            assert!(
                core_params()[list].is_array(),
                "core.toml: no list \"{list}\""
            );
        }
    }

    #[test]
    fn bad_manifests_name_file_line_entry_and_key() {
        let cases: &[(SourceKind, &str, &str)] = &[
            (
                SourceKind::Project,
                "[compressor.\"t\"]\ncodec = \"columnar\"\nlevle = \"normal\"\n",
                "m.toml:3: entry \"t\": unknown key \"levle\"; did you mean \"level\"? \
                 (expected: codec, level, tee, params)",
            ),
            (
                SourceKind::Project,
                "[compressor.\"t\"]\ncodec = \"columnar\"\nlevel = \"NORMAL\"\n",
                "m.toml:3: entry \"t\": key \"level\": unknown level \"NORMAL\" \
                 (expected one of: none, minimal, normal, aggressive)",
            ),
            (
                SourceKind::Project,
                "[compressor.\"t\"]\nlevel = \"normal\"\n",
                "m.toml:1: entry \"t\": missing key \"codec\"",
            ),
            (
                SourceKind::Project,
                "[compresor.\"t\"]\ncodec = \"x\"\n",
                "m.toml:1: unknown key \"compresor\"; did you mean \"compressor\"? \
                 (expected: [plugin], [compressor.\"<tool>\"])",
            ),
            (
                SourceKind::Project,
                "[plugin]\nlibrary = \"x\"\n",
                "m.toml:1: [plugin] is only allowed in a plugin package's manifest, \
                 not in the project manifest",
            ),
            (
                SourceKind::Package,
                "[plugin]\nlibrary = \"../elsewhere/libx.so\"\n",
                "m.toml:2: key \"library\": \"../elsewhere/libx.so\" leaves the package folder \
                 /pkg; the library must sit inside it",
            ),
            (
                SourceKind::Package,
                "[plugin]\nlibrary = \"/usr/lib/libx.so\"\n",
                "m.toml:2: key \"library\": \"/usr/lib/libx.so\" leaves the package folder \
                 /pkg; the library must sit inside it",
            ),
            (
                SourceKind::Project,
                "[compressor]\nt = \"columnar\"\n",
                "m.toml:2: entry \"t\": must be a table (codec = \"…\", level = \"…\"), \
                 got the string \"columnar\"",
            ),
            (
                SourceKind::Project,
                "[compressor.\"\"]\ncodec = \"columnar\"\n",
                "m.toml:1: entry \"\": the tool pattern is empty",
            ),
            (
                SourceKind::Project,
                "[compressor.\"t\"]\ncodec = \"columnar\"\nparams = 3\n",
                "m.toml:3: entry \"t\": key \"params\": expected a table of the codec's params, \
                 got the integer 3",
            ),
            (
                SourceKind::Package,
                "[plugin]\nlibrary = \"x\"\nsha256 = \"abc\"\n",
                "m.toml:3: key \"sha256\": expected 64 hex digits, got the string \"abc\"",
            ),
        ];
        for (kind, text, expected) in cases {
            assert_eq!(errors_of(*kind, text), [*expected], "for {text:?}");
        }
    }

    #[test]
    fn key_lists_in_messages_match_the_key_tables() {
        assert_eq!(PLUGIN_KEYS.join(", "), PLUGIN_KEYS_TEXT);
        assert_eq!(ENTRY_KEYS.join(", "), ENTRY_KEYS_TEXT);
    }

    #[test]
    fn malformed_toml_names_the_line() {
        let errors = errors_of(SourceKind::Project, "[compressor.\"t\"]\ncodec = \n");
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("m.toml:2: "), "{}", errors[0]);
    }

    #[test]
    fn every_error_in_a_file_is_reported() {
        let errors = errors_of(
            SourceKind::Project,
            "[compressor.a]\ncodec = 1\n[compressor.b]\ncodec = \"x\"\ntea = true\n",
        );
        assert_eq!(errors.len(), 2, "{errors:#?}");
    }

    #[test]
    fn library_names_get_the_platform_prefix_and_suffix() {
        let dir = Path::new("/pkg");
        let so = std::env::consts::DLL_SUFFIX;
        let pre = std::env::consts::DLL_PREFIX;
        assert_eq!(
            resolve_library(dir, "parrot_x"),
            Some(dir.join(format!("{pre}parrot_x{so}")))
        );
        assert_eq!(
            resolve_library(dir, &format!("{pre}parrot_x{so}")),
            Some(dir.join(format!("{pre}parrot_x{so}")))
        );
        assert_eq!(
            resolve_library(dir, "sub/custom.bin"),
            Some(dir.join("sub/custom.bin"))
        );
        assert_eq!(resolve_library(dir, "../x"), None);
    }
}
