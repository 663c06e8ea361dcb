//! Lossless claims the host cannot check: a codec that offers no inverse and still says
//! `lossless`. The stage treats such an outcome as lossy (CONTRACT §10.4); `check` and
//! `package` find these codecs before a user does, by running each one on a few payloads of the
//! usual shapes ([`Registry::unchecked_lossless_claims`]).

use std::panic::{AssertUnwindSafe, catch_unwind};

use parrot_codec_api::{DynCodec, Level, Outcome, Payload};
use serde_json::Map;

use crate::plugins::registry::{Origin, Registry};

/// A codec that answered some probe payloads with a lossless outcome and offers no inverse,
/// so the host cannot check the claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UncheckedClaim {
    /// The codec's name.
    pub codec: String,
    /// Where it comes from.
    pub origin: Origin,
    /// How many probes it answered with a lossless outcome.
    pub claimed: usize,
    /// How many probes it was given.
    pub probes: usize,
}

/// The levels each probe payload is given at: the two where a codec may change a payload
/// without loss being its point.
const LEVELS: [Level; 2] = [Level::Minimal, Level::Normal];

impl Registry {
    /// Every codec of a plugin library, or given in-process, that offers no inverse and
    /// answers one of the probe payloads (a log with repeated lines, coloured test output, a
    /// listing of paths, CSV, prose, JSON rows and a JSON object with nulls; each at `minimal`
    /// and `normal`) with a lossless outcome: the stage cannot check such a claim and treats
    /// the outcome as lossy. Each codec is built with no params; one that needs params to be
    /// built is not probed. Built-in codecs are not probed: property tests prove their claims.
    ///
    /// A probe runs the codec's own code: a codec that panics on a probe counts it as no
    /// claim.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_host::Host;
    ///
    /// let dir = std::env::temp_dir().join("parrot-doc-unchecked-claims");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let host = Host::builder().project(&dir).plugin_path(None).build().unwrap();
    /// // The built-in codecs are proven, not probed.
    /// assert!(host.registry().unchecked_lossless_claims().is_empty());
    /// ```
    pub fn unchecked_lossless_claims(&self) -> Vec<UncheckedClaim> {
        let payloads = probe_payloads();
        self.codecs()
            .filter(|info| !matches!(info.origin, Origin::Builtin) && !info.meta.expands())
            .filter_map(|info| {
                let codec = self.instantiate(info.meta.name(), Map::new()).ok()?;
                let claimed = payloads
                    .iter()
                    .flat_map(|payload| LEVELS.map(|level| (payload, level)))
                    .filter(|&(payload, level)| claims_lossless(&*codec, *payload, level))
                    .count();
                (claimed > 0).then(|| UncheckedClaim {
                    codec: info.meta.name().to_owned(),
                    origin: info.origin.clone(),
                    claimed,
                    probes: payloads.len() * LEVELS.len(),
                })
            })
            .collect()
    }
}

/// Whether `codec` answers `payload` at `level` with a lossless outcome that changed it.
fn claims_lossless(codec: &dyn DynCodec, payload: Payload<'_>, level: Level) -> bool {
    match catch_unwind(AssertUnwindSafe(|| codec.compress(payload, level))) {
        Ok(Ok(Outcome::Changed {
            payload: out,
            lossy,
        })) => !lossy && out != payload.text(),
        _ => false,
    }
}

/// The probe payloads, built the same way every time.
fn probe_payloads() -> Vec<Payload<'static>> {
    use std::sync::OnceLock;
    static TEXTS: OnceLock<Vec<(String, bool)>> = OnceLock::new();
    TEXTS
        .get_or_init(|| {
            let mut log = String::new();
            let mut colored = String::new();
            let mut listing = String::new();
            let mut csv = String::from("id,name,status\n");
            let mut rows = Vec::new();
            for i in 0..60 {
                for _ in 0..3 {
                    log.push_str(&format!("step {i}: waiting for lock on /var/lib/app\n"));
                }
                colored.push_str(&format!("\u{1b}[32mok\u{1b}[0m tests::case_{i}\n"));
                listing.push_str(&format!("./src/module_{}/file_{i}.rs\n", i % 7));
                csv.push_str(&format!("{i},user-{i},active\n"));
                rows.push(format!(
                    r#"{{"id": {i}, "name": "user-{i}", "active": true, "note": null}}"#
                ));
            }
            let prose = "The quick brown fox jumps over the lazy dog. ".repeat(40);
            let object = format!(
                r#"{{"status": "ok", "next": null, "items": [{}], "meta": {{"page": 1, "more": null}}}}"#,
                rows[..10].join(", ")
            );
            vec![
                (log, false),
                (colored, false),
                (listing, false),
                (csv, false),
                (prose, false),
                (format!("[{}]", rows.join(", ")), true),
                (object, true),
            ]
        })
        .iter()
        .map(|(text, json)| {
            if *json {
                Payload::json(text)
            } else {
                Payload::text_only(text)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every JSON probe is JSON, as the host would hand it over.
    #[test]
    fn the_json_probes_are_json() {
        for payload in probe_payloads().iter().filter(|p| p.is_json()) {
            serde_json::from_str::<serde_json::Value>(payload.text()).unwrap();
        }
    }
}
