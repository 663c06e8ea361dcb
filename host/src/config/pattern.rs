//! Entry keys: a tool name, the wildcard `"*"`, or a glob pattern (`*`, `?`, `[…]`,
//! case-sensitive, `/` not special). Which entry applies to a tool is the entry table's
//! business (`stage/entries.rs`); this module only says what a key is and compiles its glob, the
//! same way for the manifest's check and for the table.

use globset::{Glob, GlobBuilder};

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

/// The glob of a key: case-sensitive, and `*` crosses `/` (tool names are not paths).
pub(crate) fn compile(key: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(key)
        .case_insensitive(false)
        .literal_separator(false)
        .build()
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
        let m = compile("Shell_*").unwrap().compile_matcher();
        assert!(m.is_match("Shell_run"));
        assert!(!m.is_match("shell_run"));
    }
}
