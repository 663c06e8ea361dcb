//! `plugins`: every codec, its interface version and where it comes from.

use parrot_host::{Host, Origin};

use super::router::router_lines;
use crate::printable;

pub(crate) fn plugins(host: &Host) {
    let width = host
        .registry()
        .codecs()
        .map(|c| printable(c.meta.name()).len())
        .max()
        .unwrap_or(0)
        .max("codec".len());
    println!("{:<width$}  {:<9}  origin", "codec", "interface");
    for codec in host.registry().codecs() {
        let origin = match &codec.origin {
            Origin::Builtin => "built-in".to_owned(),
            Origin::Plugin { library, manifest } => {
                format!("{} (package {})", library.display(), manifest.display())
            }
            other => other.to_string(),
        };
        println!(
            "{:<width$}  {:<9}  {}",
            printable(codec.meta.name()),
            printable(&codec.interface_version),
            printable(&origin)
        );
    }
    for line in router_lines(host) {
        println!("{line}");
    }
}
