//! Which entry applies to a tool name: the exact key; else glob keys (`*`, `?`, `[…]`,
//! case-sensitive), longest pattern first, ties in source order; else `"*"`; else none.

use globset::{Glob, GlobBuilder, GlobMatcher};

/// How an entry matched a tool name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The entry's key is the tool name.
    Exact,
    /// The entry's key is a glob pattern that matches the tool name.
    Glob,
    /// The `"*"` entry.
    Wildcard,
    /// No entry: `json_compact` at `minimal`.
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

/// Whether a key is a glob pattern rather than a tool name.
pub(crate) fn is_glob(key: &str) -> bool {
    key != "*" && key.contains(['*', '?', '['])
}

/// Checks an entry key: not empty, and a valid glob when it has glob characters.
pub(crate) fn check_pattern(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("the tool pattern is empty".to_owned());
    }
    if is_glob(key) {
        compile(key).map_err(|err| format!("invalid glob pattern: {err}"))?;
    }
    Ok(())
}

pub(crate) fn compile(key: &str) -> Result<GlobMatcher, globset::Error> {
    let glob: Glob = GlobBuilder::new(key)
        .case_insensitive(false)
        .literal_separator(false)
        .build()?;
    Ok(glob.compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_plain_names_are_told_apart() {
        assert!(is_glob("shell_*"));
        assert!(is_glob("tool_?"));
        assert!(is_glob("[ab]_run"));
        assert!(!is_glob("*"));
        assert!(!is_glob("dq_execute_database_query"));
    }

    #[test]
    fn bad_patterns_say_why() {
        assert_eq!(
            check_pattern(""),
            Err("the tool pattern is empty".to_owned())
        );
        let err = check_pattern("a[b").unwrap_err();
        assert!(err.starts_with("invalid glob pattern: "), "{err}");
    }

    #[test]
    fn globs_are_case_sensitive() {
        let m = compile("Shell_*").unwrap();
        assert!(m.is_match("Shell_run"));
        assert!(!m.is_match("shell_run"));
    }
}
