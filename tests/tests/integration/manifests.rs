//! Manifests: the catalogue of bad configurations, and one named test per precedence and
//! matching rule.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use crate::support::{self, package, plugin_manifest, shipped_package, shipped_package_as};
use parrot_host::{Host, Level, MatchKind, MemoryTeeStore};

const LINE_DEDUP: &str = "parrot_plugin_line_dedup";

/// A project folder with an optional project manifest.
fn project(manifest: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if let Some(text) = manifest {
        std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
        std::fs::write(dir.path().join(".parrot/compressors.toml"), text).unwrap();
    }
    dir
}

fn project_manifest(dir: &Path) -> PathBuf {
    dir.join(".parrot/compressors.toml")
}

fn build(project: &Path, sources: &[&Path]) -> Result<Host, Vec<String>> {
    let mut builder = Host::builder();
    builder.project(project).plugin_path(None);
    for source in sources {
        builder.plugin_dir(*source);
    }
    builder
        .build()
        .map_err(|err| err.errors.iter().map(ToString::to_string).collect())
}

fn build_with_tee(project: &Path, sources: &[&Path]) -> Host {
    let mut builder = Host::builder();
    builder
        .project(project)
        .plugin_path(None)
        .tee_store(Arc::new(MemoryTeeStore::default()));
    for source in sources {
        builder.plugin_dir(*source);
    }
    builder.build().expect("valid configuration")
}

fn check(project: &Path, sources: &[&Path]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(support::binary());
    cmd.arg("--project")
        .arg(project)
        .env_remove("PARROT_PLUGIN_PATH");
    for source in sources {
        cmd.arg("--plugins").arg(source);
    }
    let out = cmd.arg("check").output().expect("parrot-compress runs");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A bad configuration: what to lay out, and the one error line it must produce.
struct Bad {
    name: &'static str,
    project: Option<&'static str>,
    /// Package folders under `<root>/plugins`: (folder, library to copy, manifest).
    packages: Vec<(&'static str, Option<&'static str>, String)>,
    expected: fn(&Path) -> String,
}

fn catalogue() -> Vec<Bad> {
    vec![
        Bad {
            name: "malformed TOML",
            project: Some("[compressor.\"t\"]\ncodec = \"columnar\nlevel = \"normal\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:2: invalid basic string, expected `\"`",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "unknown top-level table",
            project: Some("[compressors.\"t\"]\ncodec = \"columnar\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:1: unknown key \"compressors\"; did you mean \"compressor\"? \
                     (expected: [plugin], [compressor.\"<tool>\"])",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "unknown entry key",
            project: Some("[compressor.\"t\"]\ncodec = \"columnar\"\nlevle = \"normal\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:3: entry \"t\": unknown key \"levle\"; did you mean \"level\"? \
                     (expected: codec, level, tee, params)",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "missing codec",
            project: Some("[compressor.\"t\"]\nlevel = \"normal\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:1: entry \"t\": missing key \"codec\"",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "unknown codec",
            project: Some("[compressor.\"t\"]\ncodec = \"zstd\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:2: entry \"t\": unknown codec \"zstd\" (known: {})",
                    project_manifest(root).display(),
                    support::known_codecs()
                )
            },
        },
        Bad {
            name: "level in capitals",
            project: Some("[compressor.\"t\"]\ncodec = \"columnar\"\nlevel = \"NORMAL\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:3: entry \"t\": key \"level\": unknown level \"NORMAL\" \
                     (expected one of: none, minimal, normal, aggressive)",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "param of the wrong type",
            project: Some(
                "[compressor.\"t\"]\ncodec = \"columnar\"\n[compressor.\"t\".params]\nmin_rows = \"20\"\n",
            ),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:4: entry \"t\": codec \"columnar\": param \"min_rows\": \
                     expected a positive integer, got a string (\"20\")",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "unknown param",
            project: Some("[compressor.\"t\"]\ncodec = \"columnar\"\nparams = { min_row = 5 }\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:3: entry \"t\": codec \"columnar\": param \"min_row\": unknown key; \
                     did you mean \"min_rows\"? (known: min_rows, heterogeneity_ratio, \
                     max_field_chars, sample_rows)",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "library path escaping its package",
            project: None,
            packages: vec![("esc", None, plugin_manifest("../../libx.so", ""))],
            expected: |root| {
                let pkg = root.join("plugins/esc");
                format!(
                    "{}:2: key \"library\": \"../../libx.so\" leaves the package folder {}; \
                     the library must sit inside it",
                    pkg.join("compressors.toml").display(),
                    pkg.display()
                )
            },
        },
        Bad {
            name: "library missing",
            project: None,
            packages: vec![("gone", None, plugin_manifest("parrot_plugin_gone", ""))],
            expected: |root| {
                let pkg = root.join("plugins/gone");
                format!(
                    "{}: library file not found (declared by {})",
                    pkg.join("libparrot_plugin_gone.so").display(),
                    pkg.join("compressors.toml").display()
                )
            },
        },
        Bad {
            name: "sha256 mismatch",
            project: None,
            packages: vec![(
                "pinned",
                Some(LINE_DEDUP),
                plugin_manifest(LINE_DEDUP, &format!("sha256 = \"{}\"\n", "ab".repeat(32))),
            )],
            expected: |root| {
                let pkg = root.join("plugins/pinned");
                let lib = pkg.join(format!("lib{LINE_DEDUP}.so"));
                use sha2::Digest;
                let actual: String = sha2::Sha256::digest(std::fs::read(&lib).unwrap())
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                format!(
                    "{}: sha256 is {actual}, but {} pins {}; refusing to load it",
                    lib.display(),
                    pkg.join("compressors.toml").display(),
                    "ab".repeat(32)
                )
            },
        },
        Bad {
            name: "two packages providing one codec name",
            project: None,
            packages: vec![
                ("one", Some(LINE_DEDUP), plugin_manifest(LINE_DEDUP, "")),
                ("two", Some(LINE_DEDUP), plugin_manifest(LINE_DEDUP, "")),
            ],
            expected: |root| {
                let lib = |name: &str| {
                    root.join("plugins")
                        .join(name)
                        .join(format!("lib{LINE_DEDUP}.so"))
                        .canonicalize()
                        .unwrap()
                };
                let manifest =
                    |name: &str| root.join("plugins").join(name).join("compressors.toml");
                format!(
                    "codec \"line_dedup\" is provided twice: by {} (package {}) and by {} (package {})",
                    lib("one").display(),
                    manifest("one").display(),
                    lib("two").display(),
                    manifest("two").display()
                )
            },
        },
        Bad {
            name: "[plugin] in the project manifest",
            project: Some("[plugin]\nlibrary = \"x\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:1: [plugin] is only allowed in a plugin package's manifest, not in the \
                     project manifest",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "empty glob",
            project: Some("[compressor.\"\"]\ncodec = \"columnar\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:1: entry \"\": the tool pattern is empty",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "non-table entry",
            project: Some("[compressor]\nsql = \"columnar\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:2: entry \"sql\": must be a table (codec = \"…\", level = \"…\"), got the \
                     string \"columnar\"",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "invalid glob",
            project: Some("[compressor.\"sql_[ab\"]\ncodec = \"columnar\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:1: entry \"sql_[ab\": invalid glob pattern: error parsing glob \
                     'sql_[ab': unclosed character class; missing ']'",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "tee is not a boolean",
            project: Some("[compressor.\"t\"]\ncodec = \"columnar\"\ntee = \"yes\"\n"),
            packages: vec![],
            expected: |root| {
                format!(
                    "{}:3: entry \"t\": key \"tee\": expected true or false, got the string \"yes\"",
                    project_manifest(root).display()
                )
            },
        },
        Bad {
            name: "unknown key in [plugin]",
            project: None,
            packages: vec![(
                "typo",
                Some(LINE_DEDUP),
                plugin_manifest(LINE_DEDUP, "sha265 = \"x\"\n"),
            )],
            expected: |root| {
                format!(
                    "{}:3: unknown key \"plugin.sha265\"; did you mean \"sha256\"? \
                     (expected: library, sha256, codecs)",
                    root.join("plugins/typo/compressors.toml").display()
                )
            },
        },
    ]
}

#[test]
fn every_bad_configuration_fails_at_construction_with_one_clear_message() {
    let cases = catalogue();
    assert!(cases.len() >= 15);
    for case in cases {
        let root = project(case.project);
        let plugins = root.path().join("plugins");
        std::fs::create_dir_all(&plugins).unwrap();
        for (folder, library, manifest) in &case.packages {
            package(&plugins, folder, *library, manifest);
        }
        let expected = (case.expected)(root.path());

        let errors = build(root.path(), &[&plugins]).err().unwrap_or_default();
        assert_eq!(
            errors,
            std::slice::from_ref(&expected),
            "case: {}",
            case.name
        );

        let (code, stdout, stderr) = check(root.path(), &[&plugins]);
        assert_eq!(code, Some(2), "case: {}", case.name);
        assert_eq!(stdout, "", "case: {}", case.name);
        assert_eq!(
            stderr,
            format!("error: {expected}\n"),
            "case: {}",
            case.name
        );
    }
}

#[test]
fn a_missing_project_manifest_is_skipped() {
    let root = project(None);
    let host = build(root.path(), &[]).unwrap();
    let names: Vec<&str> = host.sources().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["<core>"]);
}

#[test]
fn project_entry_shadows_core_entry() {
    let root = project(Some("[compressor.\"*\"]\ncodec = \"columnar\"\n"));
    let host = build(root.path(), &[]).unwrap();
    let entry = host.resolve("anything").entry.unwrap();
    assert_eq!(entry.codec_name, "columnar");
    let warning = format!(
        "{}: entry \"*\" shadows the entry \"*\" of <core>",
        project_manifest(root.path()).display()
    );
    assert_eq!(host.warnings(), std::slice::from_ref(&warning));

    // `check` prints the warning on stderr and still succeeds.
    let (code, _, stderr) = check(root.path(), &[]);
    assert_eq!(code, Some(0));
    assert!(stderr.contains(&warning), "{stderr}");
    assert!(stderr.contains("shadows"), "{stderr}");
}

#[test]
fn package_entry_shadows_core_entry() {
    let root = project(None);
    let pkg = package(
        root.path(),
        "pkg",
        Some(LINE_DEDUP),
        &plugin_manifest(LINE_DEDUP, "[compressor.\"*\"]\ncodec = \"json_compact\"\n"),
    );
    let host = build(root.path(), &[&pkg]).unwrap();
    assert_eq!(
        host.resolve("dq_execute_database_query")
            .entry
            .unwrap()
            .source,
        pkg.join("compressors.toml").display().to_string()
    );
    assert_eq!(host.warnings().len(), 1);
    assert!(host.warnings()[0].contains("<core>"));
}

#[test]
fn project_entry_beats_package_entry() {
    let root = project(Some("[compressor.\"shell_*\"]\ncodec = \"json_compact\"\n"));
    let pkg = shipped_package(root.path(), "line-dedup", LINE_DEDUP);
    let host = build(root.path(), &[&pkg]).unwrap();
    let entry = host.resolve("shell_run").entry.unwrap();
    assert_eq!(entry.codec_name, "json_compact");
    assert_eq!(host.shadowed().len(), 1);
    assert_eq!(host.shadowed()[0].codec_name, "line_dedup");
    // No shadow warning: only shadowing a core entry warns.
    assert!(host.warnings().is_empty());
}

#[test]
fn first_source_wins_the_whole_entry_without_merging_params() {
    let root = project(Some(
        "[compressor.\"*_logs\"]\ncodec = \"line_dedup\"\nlevel = \"normal\"\n",
    ));
    let pkg = shipped_package(root.path(), "line-dedup", LINE_DEDUP);
    let host = build(root.path(), &[&pkg]).unwrap();
    let entry = host.resolve("app_logs").entry.unwrap();
    assert_eq!(entry.level, Level::Normal);
    // The package's entry sets min_run = 2; the project's entry has no params, so the default
    // min_run = 3 applies: a run of two lines stays.
    let out = host
        .compress(
            "app_logs",
            parrot_host::Payload::text_only("a\na"),
            Level::Minimal,
        )
        .unwrap();
    assert_eq!(out, parrot_host::Outcome::Unchanged);
}

#[test]
fn project_entry_may_name_a_codec_a_package_provides() {
    let root = project(Some("[compressor.\"ci_output\"]\ncodec = \"line_dedup\"\n"));
    let pkg = shipped_package(root.path(), "line-dedup", LINE_DEDUP);
    let host = build(root.path(), &[&pkg]).unwrap();
    assert_eq!(
        host.resolve("ci_output").entry.unwrap().codec_name,
        "line_dedup"
    );
}

#[test]
fn explicit_plugin_dir_beats_plugin_path_env_which_beats_project_plugins() {
    let root = project(None);
    let explicit = package(
        &root.path().join("explicit"),
        "p",
        None,
        "[compressor.\"t\"]\ncodec = \"json_compact\"\n",
    );
    let env = package(
        &root.path().join("env"),
        "p",
        None,
        "[compressor.\"t\"]\ncodec = \"columnar\"\n[compressor.\"u\"]\ncodec = \"columnar\"\n",
    );
    package(
        &root.path().join(".parrot/plugins"),
        "p",
        None,
        "[compressor.\"t\"]\ncodec = \"columnar\"\n[compressor.\"u\"]\ncodec = \"json_compact\"\n\
         [compressor.\"v\"]\ncodec = \"columnar\"\n",
    );
    let host = Host::builder()
        .project(root.path())
        .plugin_dir(&explicit)
        .plugin_path(Some(env.clone().into_os_string()))
        .trust_project_plugins(true)
        .build()
        .unwrap();
    let source = |tool: &str| host.resolve(tool).entry.unwrap().source.clone();
    assert_eq!(
        source("t"),
        explicit.join("compressors.toml").display().to_string()
    );
    assert_eq!(
        source("u"),
        env.join("compressors.toml").display().to_string()
    );
    assert!(source("v").contains(".parrot/plugins/p/compressors.toml"));
}

#[test]
fn packages_in_a_folder_are_taken_in_name_order() {
    let root = project(None);
    let folder = root.path().join("plugins");
    package(
        &folder,
        "b",
        None,
        "[compressor.\"t\"]\ncodec = \"columnar\"\n",
    );
    package(
        &folder,
        "a",
        None,
        "[compressor.\"t\"]\ncodec = \"json_compact\"\n",
    );
    let host = build(root.path(), &[&folder]).unwrap();
    assert_eq!(host.resolve("t").entry.unwrap().codec_name, "json_compact");
}

#[test]
fn exact_beats_longest_glob() {
    let root = project(Some(
        "[compressor.\"sql_select_all_*\"]\ncodec = \"columnar\"\n\
         [compressor.\"sql_select_all_rows\"]\ncodec = \"json_compact\"\n",
    ));
    let host = build(root.path(), &[]).unwrap();
    let resolution = host.resolve("sql_select_all_rows");
    assert_eq!(resolution.kind, MatchKind::Exact);
    assert_eq!(resolution.entry.unwrap().codec_name, "json_compact");
}

#[test]
fn longest_glob_wins() {
    let root = project(Some(
        "[compressor.\"sql_*\"]\ncodec = \"json_compact\"\n\
         [compressor.\"sql_select_*\"]\ncodec = \"columnar\"\n",
    ));
    let host = build(root.path(), &[]).unwrap();
    let resolution = host.resolve("sql_select_users");
    assert_eq!(resolution.kind, MatchKind::Glob);
    assert_eq!(resolution.entry.unwrap().key, "sql_select_*");
    assert_eq!(host.resolve("sql_insert").entry.unwrap().key, "sql_*");
}

#[test]
fn glob_tie_goes_to_earlier_source() {
    let root = project(Some("[compressor.\"a_*\"]\ncodec = \"json_compact\"\n"));
    let pkg = package(
        root.path(),
        "p",
        None,
        "[compressor.\"*_b\"]\ncodec = \"columnar\"\n",
    );
    let host = build(root.path(), &[&pkg]).unwrap();
    assert_eq!(host.resolve("a_b").entry.unwrap().key, "a_*");
}

#[test]
fn glob_tie_within_one_file_goes_to_the_earlier_entry() {
    let root = project(Some(
        "[compressor.\"*_b\"]\ncodec = \"columnar\"\n[compressor.\"a_*\"]\ncodec = \"json_compact\"\n",
    ));
    let host = build(root.path(), &[]).unwrap();
    assert_eq!(host.resolve("a_b").entry.unwrap().key, "*_b");
}

#[test]
fn wildcard_applies_when_nothing_else_matches() {
    let root = project(Some("[compressor.\"sql_*\"]\ncodec = \"columnar\"\n"));
    let host = build(root.path(), &[]).unwrap();
    let resolution = host.resolve("http_get");
    assert_eq!(resolution.kind, MatchKind::Wildcard);
    assert_eq!(resolution.entry.unwrap().source, "<core>");
}

#[test]
fn globs_are_case_sensitive() {
    let root = project(Some("[compressor.\"SQL_*\"]\ncodec = \"columnar\"\n"));
    let host = build(root.path(), &[]).unwrap();
    assert_eq!(host.resolve("SQL_x").kind, MatchKind::Glob);
    assert_eq!(host.resolve("sql_x").kind, MatchKind::Wildcard);
}

#[test]
fn per_call_override_beats_status_and_entry() {
    let root = project(None);
    let host = build_with_tee(root.path(), &[]);
    assert_eq!(
        host.effective_level(
            "dq_execute_database_query",
            "error",
            Some(Level::Aggressive)
        ),
        Level::Aggressive
    );
}

#[test]
fn error_status_means_level_none() {
    let root = project(None);
    let host = build_with_tee(root.path(), &[]);
    for status in ["error", "timeout", "Success"] {
        assert_eq!(
            host.effective_level("dq_execute_database_query", status, None),
            Level::None,
            "status {status}"
        );
    }
}

#[test]
fn entry_level_applies_to_a_successful_call() {
    let root = project(Some("[compressor.t]\ncodec = \"json_compact\"\n"));
    let host = build_with_tee(root.path(), &[]);
    // The core `"*"` entry says `normal`; an entry without a level is `minimal`.
    assert_eq!(
        host.effective_level("other", "success", None),
        Level::Normal
    );
    assert_eq!(host.effective_level("t", "success", None), Level::Minimal);
}

#[test]
fn lossy_levels_are_capped_to_minimal_without_a_tee_store() {
    let root = project(None);
    let host = build(root.path(), &[]).unwrap();
    assert_eq!(
        host.effective_level("dq_execute_database_query", "success", None),
        Level::Minimal
    );
    assert_eq!(
        host.effective_level("t", "success", Some(Level::Aggressive)),
        Level::Minimal
    );
    assert_eq!(
        host.effective_level("t", "success", Some(Level::None)),
        Level::None
    );
}

#[test]
fn explain_names_the_longer_glob_and_lists_the_other_as_shadowed() {
    let root = project(Some(
        "[compressor.\"sql_*\"]\ncodec = \"json_compact\"\n\
         [compressor.\"sql_select_*\"]\ncodec = \"columnar\"\nlevel = \"normal\"\n",
    ));
    let host = build_with_tee(root.path(), &[]);
    let explanation = host.explain("sql_select_users");
    assert_eq!(explanation.resolution.entry.unwrap().key, "sql_select_*");
    assert_eq!(explanation.effective_level, Level::Normal);
    let losers: Vec<(&str, MatchKind)> = explanation
        .outranked
        .iter()
        .map(|(e, kind)| (e.key.as_str(), *kind))
        .collect();
    assert_eq!(
        losers,
        [("sql_*", MatchKind::Glob), ("*", MatchKind::Wildcard)]
    );

    let manifest = project_manifest(root.path()).display().to_string();
    let out = Command::new(support::binary())
        .arg("--project")
        .arg(root.path())
        .args(["explain", "sql_select_users"])
        .env_remove("PARROT_PLUGIN_PATH")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "tool:            sql_select_users\n\
             entry:           \"sql_select_*\" in {manifest} (glob match)\n\
             codec:           columnar\n\
             level:           normal\n\
             effective level: normal\n\
             lost to it:\n  \
             \"sql_*\" in {manifest} (shadowed: weaker glob match; json_compact/minimal)\n  \
             \"*\" in <core> (shadowed: weaker wildcard match; auto/normal)\n"
        )
    );
}

#[test]
fn explain_lists_same_key_entries_of_lower_sources() {
    let root = project(Some("[compressor.\"shell_*\"]\ncodec = \"json_compact\"\n"));
    let _pkg = shipped_package_as(root.path(), "line-dedup", "pkg", LINE_DEDUP);
    let host = build(root.path(), &[&root.path().join("pkg")]).unwrap();
    let explanation = host.explain("shell_ls");
    let shadowed: Vec<&str> = explanation
        .shadowed
        .iter()
        .map(|e| e.codec_name.as_str())
        .collect();
    assert_eq!(shadowed, ["line_dedup"]);
}
