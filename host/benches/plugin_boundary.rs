//! The cost of the plugin boundary: the `line_dedup` codec called in-process (linked as an
//! rlib) against the same codec loaded from its cdylib through the host, on a 10 KB log.
//!
//! `cargo bench -p parrot-compress --bench plugin_boundary`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use parrot_codec_api::{DynCodec, Level, Params, Payload};
use parrot_compress::Host;
use parrot_plugin_line_dedup::LineDedup;

/// A deterministic 10 KB build log with runs of repeated lines.
fn log_10kb() -> String {
    let mut text = String::new();
    let mut i = 0u32;
    while text.len() < 10 * 1024 {
        let line = format!(
            "2026-11-30T03:{:02}:{:02} INFO worker {} heartbeat ok",
            i / 60 % 60,
            i % 60,
            i % 7
        );
        let repeats = 1 + (i * 7919) % 5;
        for _ in 0..repeats {
            text.push_str(&line);
            text.push('\n');
        }
        i += 1;
    }
    text
}

/// The cdylib cargo built next to this bench binary (the plugin is a dev-dependency).
fn plugin_library() -> PathBuf {
    let deps = std::env::current_exe()
        .expect("bench executable")
        .parent()
        .expect("deps folder")
        .to_path_buf();
    let file = format!(
        "{}parrot_plugin_line_dedup{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    [
        deps.join(&file),
        deps.parent().expect("profile folder").join(&file),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .expect("the line_dedup cdylib is built with the bench")
}

fn boundary(c: &mut Criterion) {
    let text = log_10kb();
    let in_process: Box<dyn DynCodec> =
        Box::new(parrot_codec_api::build::<LineDedup>(Params::empty()).expect("codec"));

    let project = tempfile::tempdir().expect("temp dir");
    let package = project.path().join("line-dedup");
    std::fs::create_dir_all(&package).expect("package dir");
    let library = plugin_library();
    std::fs::copy(
        &library,
        package.join(library.file_name().expect("file name")),
    )
    .expect("copy library");
    std::fs::write(
        package.join("compressors.toml"),
        "[plugin]\nlibrary = \"parrot_plugin_line_dedup\"\n\
         [compressor.\"bench\"]\ncodec = \"line_dedup\"\n",
    )
    .expect("manifest");
    let host = Host::builder()
        .project(project.path())
        .plugin_path(None)
        .plugin_dir(&package)
        .build()
        .expect("host loads the plugin");
    let through_plugin = host.resolve("bench").entry.expect("entry").codec();

    let expected = in_process
        .compress(Payload::text_only(&text), Level::Minimal)
        .expect("in-process");
    assert_eq!(
        through_plugin
            .compress(Payload::text_only(&text), Level::Minimal)
            .expect("plugin"),
        expected,
        "both paths give the same bytes"
    );

    let mut group = c.benchmark_group("line_dedup_10kb");
    group.throughput(criterion::Throughput::Bytes(text.len() as u64));
    group.bench_function("in_process", |b| {
        b.iter(|| in_process.compress(black_box(Payload::text_only(&text)), Level::Minimal))
    });
    group.bench_function("through_cdylib", |b| {
        b.iter(|| through_plugin.compress(black_box(Payload::text_only(&text)), Level::Minimal))
    });
    group.finish();
}

criterion_group!(benches, boundary);
criterion_main!(benches);
