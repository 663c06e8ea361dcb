//! What the host's benchmarks share: the plugin cdylibs cargo builds beside them (the plugins
//! are dev-dependencies) and plugin packages made from them.

#![allow(dead_code)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::Criterion;
use parrot_codec_api::{DynCodec, Level, Payload};
use parrot_compress::Host;

/// The cdylib of `library` (e.g. `parrot_plugin_toon`) that cargo built next to this bench
/// binary.
pub fn cdylib(library: &str) -> PathBuf {
    let deps = std::env::current_exe()
        .expect("bench executable")
        .parent()
        .expect("deps folder")
        .to_path_buf();
    let file = format!(
        "{}{library}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    [
        deps.join(&file),
        deps.parent().expect("profile folder").join(&file),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .unwrap_or_else(|| panic!("the {library} cdylib is built with the benches"))
}

/// A plugin package in `dir/name/`: the library and a `compressors.toml` declaring `codec`,
/// plus `entries` (manifest text). Returns the package folder.
pub fn package(dir: &Path, name: &str, library: &str, codec: &str, entries: &str) -> PathBuf {
    let package = dir.join(name);
    std::fs::create_dir_all(&package).expect("package folder");
    let built = cdylib(library);
    std::fs::copy(&built, package.join(built.file_name().expect("file name")))
        .expect("copy library");
    std::fs::write(
        package.join("compressors.toml"),
        format!("[plugin]\nlibrary = \"{library}\"\ncodecs = [\"{codec}\"]\n{entries}"),
    )
    .expect("manifest");
    package
}

/// The three shippable JSON-and-text packages the construction and token benchmarks load.
pub const PACKAGES: [(&str, &str, &str); 3] = [
    ("line-dedup", "parrot_plugin_line_dedup", "line_dedup"),
    ("toon", "parrot_plugin_toon", "toon"),
    (
        "tool-result-prune",
        "parrot_plugin_tool_result_prune",
        "tool_result_prune",
    ),
];

/// Measures `in_process` against the codec of the same name loaded from its package.
pub fn compare(
    c: &mut Criterion,
    name: &str,
    in_process: Box<dyn DynCodec>,
    (package, library, codec): (&str, &str, &str),
    payload: Payload<'_>,
) {
    let project = tempfile::tempdir().expect("temp dir");
    let package = self::package(
        project.path(),
        package,
        library,
        codec,
        &format!("[compressor.\"bench\"]\ncodec = \"{codec}\"\n"),
    );
    let host = Host::builder()
        .project(project.path())
        .plugin_path(None)
        .plugin_dir(&package)
        .build()
        .expect("host loads the plugin");
    let through_plugin = host.resolve("bench").entry.expect("entry").codec();
    assert_eq!(
        through_plugin
            .compress(payload, Level::Minimal)
            .expect("plugin"),
        in_process
            .compress(payload, Level::Minimal)
            .expect("in-process"),
        "both paths give the same bytes"
    );
    let mut group = c.benchmark_group(format!("boundary.{name}"));
    group.throughput(criterion::Throughput::Bytes(payload.text().len() as u64));
    if std::env::var_os("PARROT_BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_millis(500))
            .sample_size(10);
    }
    group.bench_function("in_process", |b| {
        b.iter(|| in_process.compress(black_box(payload), Level::Minimal))
    });
    group.bench_function("through_cdylib", |b| {
        b.iter(|| through_plugin.compress(black_box(payload), Level::Minimal))
    });
    group.finish();
}
