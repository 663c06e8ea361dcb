//! Why an entry applies to a tool: [`crate::Host::explain`]'s answer, and the text
//! `parrot-compress explain` prints.

use parrot_codec_api::Level;

use crate::stage::entries::{MatchKind, Resolution, ResolvedEntry};

/// Why an entry applies to a tool: the answer of [`crate::Host::explain`].
#[derive(Debug)]
pub struct Explanation<'h> {
    /// The tool asked about.
    pub tool: String,
    /// The entry that applies and how it matched.
    pub resolution: Resolution<'h>,
    /// The codec that runs.
    pub codec: String,
    /// The configured level (`minimal` when no entry applies).
    pub level: Level,
    /// The level a successful call without override runs at.
    pub effective_level: Level,
    /// Whether the effective level was capped for want of a tee store.
    pub capped: bool,
    /// Entries with the same key in lower-precedence sources.
    pub shadowed: Vec<&'h ResolvedEntry>,
    /// Other entries that match the tool but lost to a stronger match.
    pub outranked: Vec<(&'h ResolvedEntry, MatchKind)>,
    /// For the routing codec `auto`: its shapes and their candidates, one line each (empty
    /// for other codecs).
    pub routing: Vec<String>,
}

impl std::fmt::Display for Explanation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "tool:            {}", Escaped(&self.tool))?;
        match self.resolution.entry {
            Some(entry) => writeln!(
                f,
                "entry:           \"{}\" in {} ({} match)",
                Escaped(&entry.key),
                Escaped(&entry.source),
                self.resolution.kind.as_str()
            )?,
            None => writeln!(f, "entry:           none (no entry matches)")?,
        }
        writeln!(f, "codec:           {}", Escaped(&self.codec))?;
        writeln!(f, "level:           {}", self.level)?;
        let note = if self.capped {
            " (capped: no tee store)"
        } else {
            ""
        };
        writeln!(f, "effective level: {}{note}", self.effective_level)?;
        if !self.routing.is_empty() {
            writeln!(f, "routes by shape, fewest tokens wins:")?;
            for line in &self.routing {
                writeln!(f, "  {line}")?;
            }
        }
        if self.shadowed.is_empty() && self.outranked.is_empty() {
            return writeln!(f, "lost to it:      nothing");
        }
        writeln!(f, "lost to it:")?;
        for entry in &self.shadowed {
            writeln!(
                f,
                "  \"{}\" in {} (shadowed: same key, lower precedence; {}/{})",
                Escaped(&entry.key),
                Escaped(&entry.source),
                Escaped(&entry.codec_name),
                entry.level
            )?;
        }
        for (entry, kind) in &self.outranked {
            writeln!(
                f,
                "  \"{}\" in {} (shadowed: weaker {} match; {}/{})",
                Escaped(&entry.key),
                Escaped(&entry.source),
                kind.as_str(),
                Escaped(&entry.codec_name),
                entry.level
            )?;
        }
        Ok(())
    }
}

/// A name read from a file (a key, a path, a codec's name) with its control characters escaped
/// (`\n`, `\u{1b}`): one line per line of the answer, nothing that drives a terminal.
struct Escaped<'a>(&'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}
