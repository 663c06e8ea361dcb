//! The entry table: every winning entry with its codec built, and which of them applies to a
//! tool.
//!
//! # Which source wins a key
//!
//! Manifests are read in precedence order (the project's, the packages', the core defaults;
//! see [`crate::HostBuilder`]). The first source to declare a key wins the whole entry: params
//! are not merged, and the entries it beat are kept apart as shadowed (a core entry shadowed
//! by a project or package entry also gives a warning naming both files).
//!
//! # Which entry applies to a tool
//!
//! A tool name is resolved once per call, by these rules in order (each pinned by the named
//! test):
//!
//! 1. the entry whose key is the tool name itself — an exact key beats any glob, however long
//!    (`exact_beats_longest_glob`). This is one lookup in a map of the plain keys;
//! 2. else the matching glob key with the longest pattern, in characters
//!    (`longer_glob_beats_shorter`); of equally long patterns, the one from the earlier source
//!    (`earlier_source_wins_a_tie`), then the earlier entry of that source
//!    (`earlier_entry_wins_a_tie_within_a_source`). Every glob key is compiled into one
//!    `GlobSet`, so a tool is matched against all of them in one pass;
//! 3. else the `"*"` entry (`glob_beats_wildcard`, `wildcard_when_nothing_else_matches`);
//! 4. else none (`no_entry_without_a_wildcard`): only in a table without `"*"`, which a host
//!    never has, since the core manifest it always reads declares one.
//!
//! Globs are case-sensitive (`globs_are_case_sensitive`); the key `"*"` is the wildcard, not a
//! glob.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;

use globset::{GlobSet, GlobSetBuilder};
use parrot_codec_api::{DynCodec, Level, PayloadKind};

use crate::config::manifest::{Entry, Manifest, SourceKind};
use crate::config::pattern;
use crate::error::{Error, ManifestError};
use crate::metering::tokens::TokenCounter;
use crate::plugins::facts::Resolved;
use crate::plugins::registry::{Origin, Registry};
use crate::routing::auto::{self, Auto};
use crate::routing::envelope::Envelope;

/// How an entry matched a tool name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The entry's key is the tool name.
    Exact,
    /// The entry's key is a glob pattern that matches the tool name.
    Glob,
    /// The `"*"` entry.
    Wildcard,
    /// No entry (a table without `"*"`; a host's always has the core manifest's).
    None,
}

impl MatchKind {
    /// The kind's name, as `explain` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Glob => "glob",
            MatchKind::Wildcard => "wildcard",
            MatchKind::None => "none",
        }
    }
}

/// An entry with its codec built.
#[derive(Clone)]
pub struct ResolvedEntry {
    /// The tool name or pattern.
    pub key: String,
    /// The manifest that declared it.
    pub source: String,
    /// The kind of that manifest.
    pub source_kind: SourceKind,
    /// The manifest's place in precedence order, for ties between globs.
    source_order: usize,
    /// The codec's name.
    pub codec_name: String,
    /// The configured level.
    pub level: Level,
    /// The informational `tee` flag.
    pub tee: bool,
    engine: Engine,
}

/// What runs an entry's payloads in the stage: a codec with its facts, or the router `auto`,
/// which the stage calls as a step of its own (it chooses a codec; it is not one).
#[derive(Clone)]
pub(crate) enum Engine {
    /// A codec, with what the stage reads of it resolved when the host was built.
    Codec(Resolved),
    /// The router `auto`.
    Router(Arc<Auto>),
}

/// What the stage asks of an engine, answered here so that the stage's rules read the same for
/// a codec and for the router (CONTRACT §4: the fused pass, rule 4's members, rule 5's level).
impl Engine {
    /// The name metadata and logs give the engine (`auto` for the router).
    pub(crate) fn name(&self) -> &str {
        match self {
            Engine::Codec(resolved) => &resolved.facts.name,
            Engine::Router(_) => crate::routing::auto::NAME,
        }
    }

    /// Whether a payload that starts like JSON goes to the engine without the check first: the
    /// router, or a built-in that validates JSON in its own pass (rule 4, fused).
    pub(crate) fn fuses_json(&self) -> bool {
        match self {
            Engine::Codec(resolved) => resolved.facts.validates_json,
            Engine::Router(_) => true,
        }
    }

    /// Whether the engine takes a JSON object's members from the stage's read of it (the
    /// router, which then need not read the payload again to find its shape).
    pub(crate) fn reads_members(&self) -> bool {
        matches!(self, Engine::Router(_))
    }

    /// Whether a payload the fused pass gave as JSON, found to be text, is run again as text
    /// (the router routes it as text; a codec that validates JSON leaves text alone).
    pub(crate) fn runs_text_again(&self) -> bool {
        matches!(self, Engine::Router(_))
    }

    /// The level the engine really runs a payload of `kind` at, for a call at `level`: the
    /// router runs JSON candidates at `minimal` unless its entry says `lossy_json`
    /// (CONTRACT §2.8); a codec runs at the call's.
    pub(crate) fn runs_at(&self, kind: PayloadKind, level: Level) -> Level {
        match self {
            Engine::Router(auto) if kind == PayloadKind::Json => auto.json_level(level),
            _ => level,
        }
    }
}

impl ResolvedEntry {
    /// The entry's codec, built from its params; `None` when the entry's codec is `auto`.
    ///
    /// The router is not a codec: it chooses one per payload, has no inverse of its own, and
    /// the stage runs it as a step of its own (CONTRACT §2.8). [`crate::Host::compress`] runs
    /// either on a payload; [`crate::Host::process`] names the codec that won in
    /// [`crate::Meta::codec`].
    pub fn codec(&self) -> Option<&dyn DynCodec> {
        match &self.engine {
            Engine::Codec(resolved) => Some(&*resolved.codec),
            Engine::Router(_) => None,
        }
    }

    /// The router, when the entry's codec is `auto`.
    pub(crate) fn auto(&self) -> Option<&Auto> {
        match &self.engine {
            Engine::Router(auto) => Some(auto),
            Engine::Codec(_) => None,
        }
    }

    /// What runs the entry's payloads in the stage.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }
}

impl std::fmt::Debug for ResolvedEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedEntry")
            .field("key", &self.key)
            .field("source", &self.source)
            .field("codec", &self.codec_name)
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

/// Which entry applies to a tool, and how it matched.
#[derive(Debug, Clone)]
pub struct Resolution<'h> {
    /// The entry; `None` only without a `"*"` entry, which a built host always has.
    pub entry: Option<&'h ResolvedEntry>,
    /// How it matched.
    pub kind: MatchKind,
}

/// The winning entries and how a tool finds its own among them.
pub(crate) struct EntryTable {
    /// The winners, in precedence order (source, then entry within the source).
    entries: Vec<ResolvedEntry>,
    /// Entries that lost their key to a higher-precedence source.
    shadowed: Vec<ResolvedEntry>,
    /// Shadowed core entries, one line each.
    warnings: Vec<String>,
    /// Plain keys (the wildcard's included) → index in `entries`.
    exact: HashMap<String, usize>,
    /// Every glob key, compiled together.
    globs: GlobSet,
    /// Pattern number in `globs` → index in `entries`.
    glob_entries: Vec<usize>,
    /// The `"*"` entry's index.
    wildcard: Option<usize>,
}

impl EntryTable {
    /// Builds every entry's codec from `manifests` (in precedence order); the first source to
    /// declare a key wins it. Entries whose codec is unknown or refuses its params are left
    /// out, with an error each in `errors`.
    pub(crate) fn build(
        manifests: &[Manifest],
        registry: &Registry,
        counter: &Arc<dyn TokenCounter>,
        envelopes: &[Arc<dyn Envelope>],
        errors: &mut Vec<Error>,
    ) -> EntryTable {
        let mut entries: Vec<ResolvedEntry> = Vec::new();
        let mut shadowed = Vec::new();
        let mut warnings = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        let mut add = |resolved: ResolvedEntry, manifest: &Manifest| match by_key.get(&resolved.key)
        {
            Some(&winner) => {
                let winner = &entries[winner];
                if manifest.kind == SourceKind::Core {
                    let warning = format!(
                        "{}: entry \"{}\" shadows the entry \"{}\" of {}",
                        winner.source, winner.key, resolved.key, manifest.name
                    );
                    tracing::warn!("{warning}");
                    warnings.push(warning);
                }
                shadowed.push(resolved);
            }
            None => {
                by_key.insert(resolved.key.clone(), entries.len());
                entries.push(resolved);
            }
        };
        // An entry of `manifest` (the `order`-th source) with its codec built.
        let resolve =
            |manifest: &Manifest, order: usize, entry: &Entry, engine: Engine| ResolvedEntry {
                key: entry.key.clone(),
                source: manifest.name.clone(),
                source_kind: manifest.kind,
                source_order: order,
                codec_name: entry.codec.clone(),
                level: entry.level,
                tee: entry.tee,
                engine,
            };
        for (order, manifest) in manifests.iter().enumerate() {
            for entry in &manifest.entries {
                if let Some(engine) =
                    codec_of(manifest, entry, registry, counter, envelopes, errors)
                {
                    add(resolve(manifest, order, entry, engine), manifest);
                }
            }
            // Never used, but what else is wrong with them is reported with the rest. Params
            // that failed (or were not given) are left out: the codec would only repeat that.
            for entry in &manifest.rejected {
                if entry.params.is_empty() {
                    if entry.codec != auto::NAME && registry.get(&entry.codec).is_none() {
                        errors.push(unknown_codec(manifest, entry, registry).into());
                    }
                } else {
                    codec_of(manifest, entry, registry, counter, envelopes, errors);
                }
            }
        }
        EntryTable::index(entries, shadowed, warnings, errors)
    }

    /// Sorts the winners' keys into the exact map, the glob set and the wildcard.
    fn index(
        entries: Vec<ResolvedEntry>,
        shadowed: Vec<ResolvedEntry>,
        warnings: Vec<String>,
        errors: &mut Vec<Error>,
    ) -> EntryTable {
        let mut exact = HashMap::new();
        let mut builder = GlobSetBuilder::new();
        let mut glob_entries = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            // A glob that does not compile was refused with its manifest; were one to get
            // here, it would be matched as a plain name.
            match pattern::is_glob(&entry.key)
                .then(|| pattern::compile(&entry.key).ok())
                .flatten()
            {
                Some(glob) => {
                    builder.add(glob);
                    glob_entries.push(i);
                }
                None => {
                    exact.insert(entry.key.clone(), i);
                }
            }
        }
        let globs = builder.build().unwrap_or_else(|source| {
            errors.push(ManifestError::GlobSet { source }.into());
            GlobSet::empty()
        });
        EntryTable {
            wildcard: exact.get("*").copied(),
            entries,
            shadowed,
            warnings,
            exact,
            globs,
            glob_entries,
        }
    }

    /// The winning entries, in precedence order.
    pub(crate) fn entries(&self) -> &[ResolvedEntry] {
        &self.entries
    }

    /// Entries that lost to an entry with the same key in a higher-precedence source.
    pub(crate) fn shadowed(&self) -> &[ResolvedEntry] {
        &self.shadowed
    }

    /// Warnings found while building (shadowed core entries).
    pub(crate) fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The entry that applies to `tool`, by the rules in the module docs.
    pub(crate) fn resolve(&self, tool: &str) -> Resolution<'_> {
        if let Some(&i) = self.exact.get(tool) {
            let entry = &self.entries[i];
            let kind = if entry.key == "*" {
                MatchKind::Wildcard
            } else {
                MatchKind::Exact
            };
            return Resolution {
                entry: Some(entry),
                kind,
            };
        }
        let longest = self
            .globs
            .matches(tool)
            .into_iter()
            .map(|pattern| self.glob_entries[pattern])
            .min_by_key(|&i| {
                let entry = &self.entries[i];
                (Reverse(entry.key.chars().count()), entry.source_order, i)
            });
        if let Some(i) = longest {
            return Resolution {
                entry: Some(&self.entries[i]),
                kind: MatchKind::Glob,
            };
        }
        match self.wildcard {
            Some(i) => Resolution {
                entry: Some(&self.entries[i]),
                kind: MatchKind::Wildcard,
            },
            None => Resolution {
                entry: None,
                kind: MatchKind::None,
            },
        }
    }

    /// What lost to the entry `winner` resolved for `tool`: the entries of the same key in
    /// lower-precedence sources, and the other entries that match the tool (the wildcard and
    /// matching globs), each in precedence order.
    pub(crate) fn lost_to(
        &self,
        tool: &str,
        winner: &Resolution<'_>,
    ) -> (Vec<&ResolvedEntry>, Vec<(&ResolvedEntry, MatchKind)>) {
        let winner_key = winner.entry.map(|e| e.key.as_str());
        let shadowed = self
            .shadowed
            .iter()
            .filter(|e| Some(e.key.as_str()) == winner_key)
            .collect();
        let mut matched = vec![false; self.entries.len()];
        for pattern in self.globs.matches(tool) {
            matched[self.glob_entries[pattern]] = true;
        }
        let outranked = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| Some(e.key.as_str()) != winner_key)
            .filter_map(|(i, e)| {
                if Some(i) == self.wildcard {
                    Some((e, MatchKind::Wildcard))
                } else if matched[i] {
                    Some((e, MatchKind::Glob))
                } else {
                    None
                }
            })
            .collect();
        (shadowed, outranked)
    }
}

/// The codec of `entry`, built from its params; `None` with an error in `errors` when the codec
/// is unknown or refuses them.
fn codec_of(
    manifest: &Manifest,
    entry: &Entry,
    registry: &Registry,
    counter: &Arc<dyn TokenCounter>,
    envelopes: &[Arc<dyn Envelope>],
    errors: &mut Vec<Error>,
) -> Option<Engine> {
    if entry.codec == auto::NAME {
        match Auto::build(registry, &entry.params, Arc::clone(counter), envelopes) {
            Ok(built) => return Some(Engine::Router(Arc::new(built))),
            Err(err) => {
                // The key's first segment: `columnar.min_rows` is in `columnar`.
                let key = err.key().unwrap_or("params");
                let line = entry.line_of_param(key.split('.').next());
                errors.push(
                    ManifestError::InvalidValue {
                        file: manifest.name.clone(),
                        line,
                        entry: Some(entry.key.clone()),
                        key: key.to_owned(),
                        message: err.message().to_owned(),
                    }
                    .into(),
                );
            }
        }
        return None;
    }
    let Some(info) = registry.get(&entry.codec) else {
        errors.push(unknown_codec(manifest, entry, registry).into());
        return None;
    };
    let codec = match registry.instantiate(&entry.codec, entry.params.clone()) {
        Ok(codec) => codec,
        Err(source) => {
            errors.push(
                ManifestError::CodecParams {
                    file: manifest.name.clone(),
                    line: entry.line_of_param(source.key()),
                    entry: entry.key.clone(),
                    codec: entry.codec.clone(),
                    library: match &info.origin {
                        Origin::Plugin { library, .. } => Some(library.clone()),
                        _ => None,
                    },
                    source: Box::new(source),
                }
                .into(),
            );
            return None;
        }
    };
    Some(Engine::Codec(Resolved::new(registry, &entry.codec, codec)))
}

fn unknown_codec(manifest: &Manifest, entry: &Entry, registry: &Registry) -> ManifestError {
    ManifestError::UnknownCodec {
        file: manifest.name.clone(),
        line: entry.codec_line,
        entry: entry.key.clone(),
        codec: entry.codec.clone(),
        known: format!("{}, {}", auto::NAME, registry.names()),
        suggestion: crate::config::manifest::closest(
            &entry.codec,
            std::iter::once(auto::NAME).chain(registry.codec_names()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table from manifests given as (name, TOML), highest precedence first; every entry's
    /// codec is `json_compact`.
    fn table(sources: &[(&str, &str)]) -> EntryTable {
        let mut errors = Vec::new();
        let manifests: Vec<Manifest> = sources
            .iter()
            .filter_map(|(name, keys)| {
                let text: String = keys
                    .split_whitespace()
                    .map(|key| format!("[compressor.\"{key}\"]\ncodec = \"json_compact\"\n"))
                    .collect();
                let mut found = Vec::new();
                let manifest = crate::config::manifest::parse(
                    name,
                    None,
                    SourceKind::Project,
                    &text,
                    &mut found,
                );
                assert!(found.is_empty(), "{found:?}");
                manifest
            })
            .collect();
        let counter: Arc<dyn TokenCounter> = Arc::new(crate::Tokenizer::O200k);
        let table = EntryTable::build(
            &manifests,
            &Registry::with_builtins(),
            &counter,
            &[],
            &mut errors,
        );
        assert!(errors.is_empty(), "{errors:?}");
        table
    }

    /// The winner for `tool`: its key, source and how it matched.
    fn winner(table: &EntryTable, tool: &str) -> Option<(String, String, MatchKind)> {
        let resolution = table.resolve(tool);
        resolution
            .entry
            .map(|e| (e.key.clone(), e.source.clone(), resolution.kind))
    }

    fn won(key: &str, source: &str, kind: MatchKind) -> Option<(String, String, MatchKind)> {
        Some((key.to_owned(), source.to_owned(), kind))
    }

    #[test]
    fn exact_beats_longest_glob() {
        let t = table(&[("a", "sql_select* *"), ("b", "sql_select")]);
        assert_eq!(
            winner(&t, "sql_select"),
            won("sql_select", "b", MatchKind::Exact)
        );
    }

    #[test]
    fn longer_glob_beats_shorter() {
        let t = table(&[("a", "sql_* *"), ("b", "sql_sel*")]);
        assert_eq!(
            winner(&t, "sql_select"),
            won("sql_sel*", "b", MatchKind::Glob)
        );
        assert_eq!(winner(&t, "sql_drop"), won("sql_*", "a", MatchKind::Glob));
    }

    #[test]
    fn earlier_source_wins_a_tie() {
        let t = table(&[("a", "x_*_z"), ("b", "*_y_z")]);
        assert_eq!(winner(&t, "x_y_z"), won("x_*_z", "a", MatchKind::Glob));
        let t = table(&[("a", "*_y_z"), ("b", "x_*_z")]);
        assert_eq!(winner(&t, "x_y_z"), won("*_y_z", "a", MatchKind::Glob));
    }

    #[test]
    fn earlier_entry_wins_a_tie_within_a_source() {
        let t = table(&[("a", "x_*_z *_y_z")]);
        assert_eq!(winner(&t, "x_y_z"), won("x_*_z", "a", MatchKind::Glob));
        let t = table(&[("a", "*_y_z x_*_z")]);
        assert_eq!(winner(&t, "x_y_z"), won("*_y_z", "a", MatchKind::Glob));
    }

    #[test]
    fn glob_beats_wildcard() {
        let t = table(&[("a", "*"), ("b", "s?")]);
        assert_eq!(winner(&t, "sh"), won("s?", "b", MatchKind::Glob));
    }

    #[test]
    fn wildcard_when_nothing_else_matches() {
        let t = table(&[("a", "sql_* exact"), ("b", "*")]);
        assert_eq!(winner(&t, "ls"), won("*", "b", MatchKind::Wildcard));
        assert_eq!(winner(&t, "*"), won("*", "b", MatchKind::Wildcard));
    }

    #[test]
    fn no_entry_without_a_wildcard() {
        let t = table(&[("a", "sql_* exact")]);
        assert_eq!(winner(&t, "ls"), None);
        assert_eq!(t.resolve("ls").kind, MatchKind::None);
    }

    #[test]
    fn globs_are_case_sensitive() {
        let t = table(&[("a", "Shell_*")]);
        assert_eq!(
            winner(&t, "Shell_run"),
            won("Shell_*", "a", MatchKind::Glob)
        );
        assert_eq!(winner(&t, "shell_run"), None);
    }

    #[test]
    fn the_first_source_wins_a_key_and_the_rest_are_shadowed() {
        let t = table(&[("a", "t"), ("b", "t u")]);
        assert_eq!(winner(&t, "t"), won("t", "a", MatchKind::Exact));
        let shadowed: Vec<&str> = t.shadowed().iter().map(|e| e.source.as_str()).collect();
        assert_eq!(shadowed, ["b"]);
    }

    #[test]
    fn what_lost_comes_in_precedence_order() {
        let t = table(&[("a", "sql_* s*"), ("b", "* sql_select sql_s*")]);
        let resolution = t.resolve("sql_select");
        let (_, outranked) = t.lost_to("sql_select", &resolution);
        let lost: Vec<(&str, MatchKind)> = outranked
            .iter()
            .map(|(e, kind)| (e.key.as_str(), *kind))
            .collect();
        assert_eq!(
            lost,
            [
                ("sql_*", MatchKind::Glob),
                ("s*", MatchKind::Glob),
                ("*", MatchKind::Wildcard),
                ("sql_s*", MatchKind::Glob),
            ]
        );
    }
}
