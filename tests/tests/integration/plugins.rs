//! Loading real codec plugin libraries built from this workspace.

use std::path::Path;
use std::sync::Arc;

use crate::support::{self, package, plugin_manifest, shipped_package};
use parrot_codec_api::{CodecListError, ErrorKind};
use parrot_host::{CompressError, Host, Level, LoadErrorKind, MatchKind, Origin, Outcome, Payload};
use sha2::{Digest, Sha256};

const LINE_DEDUP: &str = "parrot_plugin_line_dedup";
const ANSI_STRIP: &str = "parrot_plugin_ansi_strip";
const FAULTS: &str = "parrot_plugin_fault_codecs";

fn host_with(project: &Path, sources: &[&Path]) -> Result<Host, parrot_host::BuildError> {
    let mut builder = Host::builder();
    builder.project(project).plugin_path(None);
    for source in sources {
        builder.plugin_dir(*source);
    }
    builder.build()
}

/// Builds a host from one source folder and returns its errors as lines.
fn build_errors(source: &Path) -> Vec<String> {
    let project = tempfile::tempdir().unwrap();
    match host_with(project.path(), &[source]) {
        Ok(_) => Vec::new(),
        Err(err) => err.errors.iter().map(ToString::to_string).collect(),
    }
}

fn shipped_plugins() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    shipped_package(dir.path(), "line-dedup", LINE_DEDUP);
    shipped_package(dir.path(), "ansi-strip", ANSI_STRIP);
    let host = host_with(dir.path(), &[dir.path()]).expect("shipped plugins load");
    (dir, host)
}

#[test]
fn builtin_codecs_are_registered_without_any_plugin() {
    let project = tempfile::tempdir().unwrap();
    let host = host_with(project.path(), &[]).unwrap();
    let names: Vec<&str> = host.registry().codecs().map(|c| c.meta.name()).collect();
    assert_eq!(names, support::builtin_names());
    assert!(names.contains(&"json_compact"), "{names:?}");
}

#[test]
fn two_plugins_load_side_by_side_and_each_returns_its_own_results() {
    let (_dir, host) = shipped_plugins();

    let log = "compiling\nwarning: unused\nwarning: unused\nwarning: unused\ndone";
    let out = host
        .compress("shell_build", Payload::text_only(log), Level::Minimal)
        .unwrap();
    assert_eq!(
        out,
        Outcome::lossless(
            "compiling\nwarning: unused\n[... previous line repeated 2 more times ...]\ndone"
        )
    );

    let term = "\u{1b}[1;32mPASS\u{1b}[0m 3 tests\n";
    let out = host
        .compress("terminal_run", Payload::text_only(term), Level::Normal)
        .unwrap();
    assert_eq!(out, Outcome::lossy("PASS 3 tests\n"));

    // Each codec ignores what the other one handles.
    let out = host
        .compress("terminal_run", Payload::text_only(log), Level::Normal)
        .unwrap();
    assert_eq!(out, Outcome::Unchanged);
    let out = host
        .compress("shell_build", Payload::text_only(term), Level::Normal)
        .unwrap();
    assert_eq!(out, Outcome::Unchanged);

    let origins: Vec<(String, bool)> = host
        .registry()
        .codecs()
        .map(|c| {
            (
                c.meta.name().to_owned(),
                matches!(c.origin, Origin::Plugin { .. }),
            )
        })
        .collect();
    // The two plugins' codecs among every built-in, in name order.
    let mut expected: Vec<(String, bool)> = support::builtin_names()
        .into_iter()
        .map(|name| (name.to_owned(), false))
        .chain([
            ("ansi_strip".to_owned(), true),
            ("line_dedup".to_owned(), true),
        ])
        .collect();
    expected.sort();
    assert_eq!(origins, expected);
}

#[test]
fn plugin_codec_inverse_works_across_the_boundary() {
    let (_dir, host) = shipped_plugins();
    let entry = host.resolve("shell_x").entry.unwrap();
    let codec = entry.codec().expect("line_dedup is a codec");
    assert!(codec.expands());
    let original = "a\na\na\na\nb\n";
    let Outcome::Changed { payload, lossy } = codec
        .compress(Payload::text_only(original), Level::Minimal)
        .unwrap()
    else {
        panic!("line_dedup should change a run of four lines");
    };
    assert!(!lossy);
    assert_eq!(codec.expand(&payload).unwrap(), original);
}

#[test]
fn package_entries_choose_the_plugin_codec_by_glob() {
    let (_dir, host) = shipped_plugins();
    let resolution = host.resolve("service_logs");
    assert_eq!(resolution.kind, MatchKind::Glob);
    assert_eq!(resolution.entry.unwrap().codec_name, "line_dedup");
    // The `*_logs` entry sets min_run = 2; `shell_*` keeps the default of 3.
    let two = "x\nx";
    assert!(matches!(
        host.compress("service_logs", Payload::text_only(two), Level::Minimal),
        Ok(Outcome::Changed { .. })
    ));
    assert_eq!(
        host.compress("shell_x", Payload::text_only(two), Level::Minimal)
            .unwrap(),
        Outcome::Unchanged
    );
}

#[test]
fn panicking_codec_survives_a_thousand_calls_each_an_error_naming_the_codec() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = plugin_manifest(FAULTS, "[compressor.\"flaky\"]\ncodec = \"fault_panic\"\n");
    package(dir.path(), "faults", Some(FAULTS), &manifest);
    let host = host_with(dir.path(), &[dir.path()]).unwrap();
    for i in 0..1000 {
        let payload = "x".repeat(i);
        let err = host
            .compress("flaky", Payload::text_only(&payload), Level::Normal)
            .unwrap_err();
        let CompressError { codec, source, .. } = &err;
        assert_eq!(codec, "fault_panic");
        assert_eq!(source.kind(), ErrorKind::Panicked);
        let message = err.to_string();
        assert!(
            message.starts_with("tool \"flaky\": codec \"fault_panic\": panicked at "),
            "{message}"
        );
        assert!(
            message.ends_with(&format!("fault_panic was given {i} bytes")),
            "{message}"
        );
    }
}

#[test]
fn codec_error_crosses_the_boundary_with_kind_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = plugin_manifest(FAULTS, "[compressor.\"t\"]\ncodec = \"fault_error\"\n");
    package(dir.path(), "faults", Some(FAULTS), &manifest);
    let host = host_with(dir.path(), &[dir.path()]).unwrap();
    let err = host
        .compress("t", Payload::json("[1,2]"), Level::Minimal)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool \"t\": codec \"fault_error\": refusing a payload of 5 bytes"
    );
}

#[test]
fn eight_threads_call_one_plugin_codec_concurrently() {
    let (_dir, host) = shipped_plugins();
    let host = Arc::new(host);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let host = Arc::clone(&host);
            std::thread::spawn(move || {
                for i in 0..250 {
                    let line = format!("thread {t} call {i}");
                    let input = format!("{line}\n{line}\n{line}\n{line}\nend");
                    let out = host
                        .compress("shell_x", Payload::text_only(&input), Level::Minimal)
                        .unwrap();
                    let expected =
                        format!("{line}\n[... previous line repeated 3 more times ...]\nend");
                    assert_eq!(out, Outcome::lossless(expected));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("no thread panicked");
    }
}

#[test]
fn same_package_given_twice_loads_once() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = shipped_package(dir.path(), "line-dedup", LINE_DEDUP);
    let host = host_with(dir.path(), &[&pkg, dir.path(), &pkg]).expect("no duplicate codec");
    assert_eq!(host.sources().len(), 2, "{:?}", host.sources());
    // A second host in the same process reuses the loaded library.
    let again = host_with(dir.path(), &[&pkg]).unwrap();
    assert!(again.registry().get("line_dedup").is_some());
}

#[test]
fn two_packages_providing_one_codec_name_is_an_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let a = support::shipped_package_as(dir.path(), "line-dedup", "a", LINE_DEDUP);
    let b = support::shipped_package_as(dir.path(), "line-dedup", "b", LINE_DEDUP);
    let errors = build_errors(dir.path());
    let lib = |pkg: &Path| pkg.join(format!("lib{LINE_DEDUP}.so"));
    assert!(
        errors.contains(&format!(
            "codec \"line_dedup\" is provided twice: by {} (package {}) and by {} (package {})",
            lib(&a).canonicalize().unwrap().display(),
            a.join("compressors.toml").display(),
            lib(&b).canonicalize().unwrap().display(),
            b.join("compressors.toml").display(),
        )),
        "{errors:#?}"
    );
}

/// One bad library per case: (folder name, library to copy, manifest, expected error kind).
#[test]
fn every_bad_library_gives_one_clear_error_naming_the_file_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let cases: Vec<(&str, Option<&str>, String, LoadErrorKind)> = vec![
        (
            "missing",
            None,
            plugin_manifest("parrot_plugin_nowhere", ""),
            LoadErrorKind::Missing,
        ),
        (
            "not-plugin",
            Some("parrot_plugin_fault_not_plugin"),
            plugin_manifest("parrot_plugin_fault_not_plugin", ""),
            LoadErrorKind::NotPlugin,
        ),
        (
            "old-interface",
            Some("parrot_plugin_fault_version"),
            plugin_manifest("parrot_plugin_fault_version", ""),
            LoadErrorKind::IncompatibleVersion {
                host: parrot_codec_api::INTERFACE_VERSION.to_owned(),
                plugin: "0.0.3".to_owned(),
            },
        ),
        (
            "aborts",
            Some("parrot_plugin_fault_abort"),
            plugin_manifest("parrot_plugin_fault_abort", ""),
            LoadErrorKind::AbortsOnPanic,
        ),
        (
            "twin-names",
            Some("parrot_plugin_fault_names"),
            plugin_manifest("parrot_plugin_fault_names", ""),
            LoadErrorKind::InvalidCodecList {
                reason: CodecListError::DuplicateName { name: "twin" },
            },
        ),
    ];
    for (name, library, manifest, expected) in cases {
        let source = root.join(name);
        let pkg = package(&source, name, library, &manifest);
        let library_path = pkg.join(format!(
            "lib{}.so",
            manifest
                .lines()
                .nth(1)
                .and_then(|l| l.split('"').nth(1))
                .unwrap()
        ));
        let errors = build_errors(&source);
        let line = format!(
            "{}: {expected} (declared by {})",
            library_path.display(),
            pkg.join("compressors.toml").display()
        );
        assert_eq!(errors, [line], "case {name}");
    }
}

#[test]
fn a_file_that_is_not_a_shared_library_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = package(dir.path(), "text", None, &plugin_manifest("fake", ""));
    std::fs::write(pkg.join("libfake.so"), "this is not ELF\n").unwrap();
    let errors = build_errors(dir.path());
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let prefix = format!(
        "{}: not a loadable shared library (",
        pkg.join("libfake.so").display()
    );
    assert!(errors[0].starts_with(&prefix), "{}", errors[0]);
    assert!(
        errors[0].ends_with(&format!(
            "(declared by {})",
            pkg.join("compressors.toml").display()
        )),
        "{}",
        errors[0]
    );
}

#[test]
fn failing_and_panicking_constructors_name_entry_codec_and_library() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = plugin_manifest(
        FAULTS,
        "[compressor.\"panics\"]\ncodec = \"fault_constructor\"\n\n\
         [compressor.\"fails\"]\ncodec = \"fault_constructor\"\nparams = { fail = true }\n\n\
         [compressor.\"typo\"]\ncodec = \"fault_error\"\nparams = { strict = true }\n",
    );
    let pkg = package(dir.path(), "faults", Some(FAULTS), &manifest);
    let file = pkg.join("compressors.toml");
    let lib = pkg.join(format!("lib{FAULTS}.so")).canonicalize().unwrap();
    let errors = build_errors(dir.path());
    assert_eq!(errors.len(), 3, "{errors:#?}");
    let panics = format!(
        "{}:3: entry \"panics\": codec \"fault_constructor\" (from {}): panicked at ",
        file.display(),
        lib.display()
    );
    assert!(errors[0].starts_with(&panics), "{}", errors[0]);
    assert!(errors[0].ends_with(": fault_constructor panics while being built"));
    assert_eq!(
        errors[1],
        format!(
            "{}:6: entry \"fails\": codec \"fault_constructor\" (from {}): fault_constructor always fails",
            file.display(),
            lib.display()
        )
    );
    assert_eq!(
        errors[2],
        format!(
            "{}:12: entry \"typo\": codec \"fault_error\" (from {}): param \"strict\": unknown key (this codec takes no params)",
            file.display(),
            lib.display()
        )
    );
}

#[test]
fn codec_declared_but_not_provided_names_what_the_library_has() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = plugin_manifest(LINE_DEDUP, "codecs = [\"line_dedup\", \"line_sort\"]\n");
    let pkg = package(dir.path(), "pkg", Some(LINE_DEDUP), &manifest);
    let errors = build_errors(dir.path());
    assert_eq!(
        errors,
        [format!(
            "{}: {} declares codec \"line_sort\" but the library does not provide it (it provides: line_dedup)",
            pkg.join(format!("lib{LINE_DEDUP}.so"))
                .canonicalize()
                .unwrap()
                .display(),
            pkg.join("compressors.toml").display()
        )]
    );
}

#[test]
fn pinned_digest_must_match_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let library = support::library(LINE_DEDUP);
    let digest: String = Sha256::digest(std::fs::read(&library).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();

    let good = dir.path().join("good");
    package(
        &good,
        "pkg",
        Some(LINE_DEDUP),
        &plugin_manifest(LINE_DEDUP, &format!("sha256 = \"{digest}\"\n")),
    );
    assert_eq!(build_errors(&good), Vec::<String>::new());

    let bad = dir.path().join("bad");
    let wrong = "0".repeat(64);
    let pkg = package(
        &bad,
        "pkg",
        Some(LINE_DEDUP),
        &plugin_manifest(LINE_DEDUP, &format!("sha256 = \"{wrong}\"\n")),
    );
    assert_eq!(
        build_errors(&bad),
        [format!(
            "{}: sha256 is {digest}, but {} pins {wrong}; refusing to load it",
            pkg.join(format!("lib{LINE_DEDUP}.so")).display(),
            pkg.join("compressors.toml").display()
        )]
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_package_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = package(dir.path(), "pkg", None, &plugin_manifest("linked", ""));
    std::os::unix::fs::symlink(support::library(LINE_DEDUP), pkg.join("liblinked.so")).unwrap();
    let errors = build_errors(dir.path());
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].contains("leaves the package folder"),
        "{}",
        errors[0]
    );
}

/// Issue 48: a library exporting its codecs as `export_codecs!` did before the capabilities
/// module (the first root module alone) keeps loading: its codec compresses, its lossless
/// outcome is verified through its inverse, and its output over `max_result_chars` is cut as
/// text by the host, the cut it declares being out of reach without the capabilities module.
#[test]
fn a_library_without_the_capabilities_module_loads_and_its_output_is_cut_as_text() {
    const FIRST: &str = "parrot_plugin_first_interface";
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    let entry = "[compressor.\"t\"]\ncodec = \"first_tabs\"\nlevel = \"minimal\"\n";
    package(
        &plugins,
        "first",
        Some(FIRST),
        &plugin_manifest(FIRST, entry),
    );
    let host = |max: usize| {
        Host::builder()
            .project(dir.path())
            .plugin_path(None)
            .plugin_dir(&plugins)
            .tee_store(Arc::new(parrot_host::MemoryTeeStore::default()))
            .max_result_chars(max)
            .build()
            .expect("a library built before the capabilities module loads")
    };
    let input: String = (0..100).map(|i| format!("        line {i}\n")).collect();
    let call = parrot_host::Call::new("t", parrot_host::Input::Text(&input));

    let whole = host(0).process(call);
    assert_eq!(whole.meta.codec.as_deref(), Some("first_tabs"));
    assert_eq!(whole.text(), Some(input.replace("    ", "\t").as_str()));

    let cut = host(400).process(call);
    let text = cut.text().unwrap();
    assert!(text.chars().count() <= 400, "{text}");
    let pointed = support::pointed(text).expect("a pointer line");
    assert_eq!(pointed.reason, "cut");
    let marker = pointed.text.lines().last().unwrap();
    assert!(
        marker.starts_with("[\u{2026} cut at max_result_chars: "),
        "the host's text cut: {marker}"
    );
}
