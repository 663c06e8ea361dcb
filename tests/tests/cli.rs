//! The `parrot-compress` command: `check` and `plugins`, run as a user runs them.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{package, plugin_manifest, shipped_package};

fn run(project: &Path, args: &[&str]) -> Output {
    Command::new(support::binary())
        .arg("--project")
        .arg(project)
        .args(args)
        .env_remove("PARROT_PLUGIN_PATH")
        .output()
        .expect("parrot-compress runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

#[test]
fn check_passes_and_summarises_loaded_plugins() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    shipped_package(&plugins, "line-dedup", "parrot_plugin_line_dedup");
    shipped_package(&plugins, "ansi-strip", "parrot_plugin_ansi_strip");
    let out = run(
        dir.path(),
        &["--plugins", plugins.to_str().unwrap(), "check"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let ansi = plugins.join("ansi-strip/compressors.toml");
    let dedup = plugins.join("line-dedup/compressors.toml");
    // Folder of packages: taken in name order.
    assert!(
        stdout.contains(&format!("  1. {} (package, library ", ansi.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  2. {} (package, library ", dedup.display())),
        "{stdout}"
    );
    assert!(stdout.contains("  3. <core> (core)"), "{stdout}");
    assert!(
        stdout.ends_with("ok: 3 sources, 4 codecs, 5 entries (0 shadowed)\n"),
        "{stdout}"
    );
}

#[test]
fn plugins_lists_each_codec_with_origin_and_interface_version() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = shipped_package(dir.path(), "line-dedup", "parrot_plugin_line_dedup");
    let out = run(dir.path(), &["plugins", "--plugins", pkg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let library = pkg
        .join("libparrot_plugin_line_dedup.so")
        .canonicalize()
        .unwrap();
    let version = parrot_codec_api::INTERFACE_VERSION;
    let expected = format!(
        "codec         interface  origin\n\
         columnar      {version:<9}  built-in\n\
         json_compact  {version:<9}  built-in\n\
         line_dedup    {version:<9}  {} (package {})\n",
        library.display(),
        pkg.join("compressors.toml").display()
    );
    assert_eq!(text(&out.stdout), expected);
}

#[test]
fn check_exits_2_listing_every_bad_library() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("bad");
    package(
        &source,
        "a-missing",
        None,
        &plugin_manifest("parrot_plugin_nowhere", ""),
    );
    package(
        &source,
        "b-not-plugin",
        Some("parrot_plugin_fault_not_plugin"),
        &plugin_manifest("parrot_plugin_fault_not_plugin", ""),
    );
    package(
        &source,
        "c-old",
        Some("parrot_plugin_fault_version"),
        &plugin_manifest("parrot_plugin_fault_version", ""),
    );
    package(
        &source,
        "d-abort",
        Some("parrot_plugin_fault_abort"),
        &plugin_manifest("parrot_plugin_fault_abort", ""),
    );
    let out = run(
        dir.path(),
        &["--plugins", source.to_str().unwrap(), "check"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    let expectations = [
        (
            "a-missing",
            "libparrot_plugin_nowhere.so",
            "library file not found",
        ),
        (
            "b-not-plugin",
            "libparrot_plugin_fault_not_plugin.so",
            "not a parrot-compress codec plugin",
        ),
        (
            "c-old",
            "libparrot_plugin_fault_version.so",
            "plugin built against parrot-codec-api 0.0.3",
        ),
        (
            "d-abort",
            "libparrot_plugin_fault_abort.so",
            "built with panic = \"abort\"",
        ),
    ];
    for (line, (pkg, library, reason)) in lines.iter().zip(expectations) {
        let pkg = source.join(pkg);
        assert!(
            line.starts_with(&format!("error: {}: ", pkg.join(library).display())),
            "{line}"
        );
        assert!(line.contains(reason), "{line}");
        assert!(
            line.ends_with(&format!(
                "(declared by {})",
                pkg.join("compressors.toml").display()
            )),
            "{line}"
        );
    }
}

#[test]
fn check_exits_2_on_an_invalid_project_manifest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".parrot")).unwrap();
    let manifest = dir.path().join(".parrot/compressors.toml");
    std::fs::write(&manifest, "[compressor.\"t\"]\ncodec = \"zstd\"\n").unwrap();
    let out = run(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}:2: entry \"t\": unknown codec \"zstd\" (known: columnar, json_compact)\n",
            manifest.display()
        )
    );
}

#[test]
fn unknown_option_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["check", "--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}
