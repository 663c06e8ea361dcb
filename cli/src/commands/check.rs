//! `check`: every source, codec and entry of the configuration.

use parrot_host::manifest::SourceKind;
use parrot_host::{Host, Registry, counted};

use super::router::router_lines;
use crate::printable;

pub(crate) fn check(host: &Host) {
    println!("sources, highest precedence first:");
    for (i, source) in host.sources().iter().enumerate() {
        let kind = match source.kind {
            SourceKind::Project => "project".to_owned(),
            SourceKind::Package => match &source.library {
                Some(library) => format!("package, library {}", library.display()),
                None => "package".to_owned(),
            },
            SourceKind::Core => "core".to_owned(),
        };
        println!(
            "  {}. {} ({})",
            i + 1,
            printable(&source.name),
            printable(&kind)
        );
    }
    println!("codecs:");
    for codec in host.registry().codecs() {
        println!(
            "  {:<20} {}",
            printable(codec.meta.name()),
            printable(&codec.origin.to_string())
        );
    }
    for line in unchecked_claims(host.registry()) {
        eprintln!("{line}");
    }
    for line in router_lines(host) {
        println!("{line}");
    }
    println!("entries:");
    let key_width = host
        .entries()
        .iter()
        .map(|e| printable(&e.key).len() + 2)
        .max()
        .unwrap_or(0);
    let codec_width = host
        .entries()
        .iter()
        .map(|e| printable(&e.codec_name).len() + 1 + e.level.as_str().len())
        .max()
        .unwrap_or(0);
    for entry in host.entries() {
        println!(
            "  {:<key_width$}  {:<codec_width$}  from {}",
            format!("\"{}\"", printable(&entry.key)),
            format!("{}/{}", printable(&entry.codec_name), entry.level),
            printable(&entry.source)
        );
    }
    println!(
        "ok: {}, {}, {} ({} shadowed)",
        counted(host.sources().len(), "source", "sources"),
        counted(host.registry().codecs().count(), "codec", "codecs"),
        counted(host.entries().len(), "entry", "entries"),
        host.shadowed().len()
    );
}

/// One warning line for each codec that claims lossless outcomes the host cannot check (no
/// inverse, CONTRACT §10.4), found by running it on the registry's probe payloads: `check`
/// and `package` print them on stderr.
pub(crate) fn unchecked_claims(registry: &Registry) -> Vec<String> {
    registry
        .unchecked_lossless_claims()
        .into_iter()
        .map(|claim| {
            format!(
                "warning: codec {} ({}) claimed a lossless outcome for {} of {} probe payloads \
                 but offers no inverse: the host cannot check the claim, so it treats each such \
                 outcome as lossy (its original kept in the tee store at normal and aggressive; \
                 refused at minimal, where the result goes out unchanged); give the codec an \
                 inverse (Codec::INVERSE) that rebuilds its input",
                printable(&claim.codec),
                printable(&claim.origin.to_string()),
                claim.claimed,
                claim.probes
            )
        })
        .collect()
}
