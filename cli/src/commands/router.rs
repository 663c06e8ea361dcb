//! The router `auto` as `check` and `plugins` show it: not a codec of the registry but the
//! host's own, so it is listed apart, with the candidates each of its entries routes to.

use parrot_host::Host;

use crate::printable;

/// The codec name of the router (`parrot_host`'s core manifest gives it to every tool).
const ROUTER: &str = "auto";

/// The lines that describe the router: a heading, then each entry that uses it with its
/// shapes and their candidates, as `explain` writes them for one tool.
pub(crate) fn router_lines(host: &Host) -> Vec<String> {
    let mut lines = vec!["router: auto (built-in), routes each payload by its shape:".to_owned()];
    let mut used = false;
    for entry in host.entries().iter().filter(|e| e.codec_name == ROUTER) {
        // An entry's own key resolves to it exactly: its explanation carries its routes.
        let explanation = host.explain(&entry.key);
        let routes_this = explanation
            .resolution
            .entry
            .is_some_and(|e| e.key == entry.key && e.source == entry.source);
        if !routes_this {
            continue;
        }
        used = true;
        lines.push(format!(
            "  \"{}\" from {}:",
            printable(&entry.key),
            printable(&entry.source)
        ));
        lines.extend(
            explanation
                .routing
                .iter()
                .map(|route| format!("    {}", printable(route))),
        );
    }
    if !used {
        lines.push("  used by no entry".to_owned());
    }
    lines
}
