//! A codec run through the host's real stage, in-process.

use std::sync::Arc;

use parrot_codec_api::{Codec, Level};
use parrot_host::{BuildError, Call, Host, Input, MemoryTeeStore, Processed};

use crate::Error;

/// The tool name the stage's one entry is declared for.
const TOOL: &str = "codec_test";

/// A host whose one entry runs codec `C` in-process: the real stage (size rules, the no-gain
/// rule on bytes and tokens, the verification of lossless outcomes through the inverse, the
/// tee store and its pointer), without a library to build or load and with a memory tee store.
///
/// The codec is registered with `HostBuilder::codec`, so the stage treats it as a plugin's
/// codec. The host compresses at any size (as the `parrot-compress` command does), so a large
/// payload reaches the codec instead of passing through for want of an executor.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
/// use parrot_codec_test::Stage;
///
/// /// Keeps the first `keep` lines of a text (lossy).
/// struct Head {
///     keep: usize,
/// }
///
/// impl Codec for Head {
///     const NAME: &'static str = "head";
///
///     fn new(params: &mut Params) -> Result<Self, CodecError> {
///         Ok(Head { keep: params.positive("keep", 10)? })
///     }
///
///     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
///         let lines: Vec<&str> = payload.text().lines().collect();
///         if payload.is_json() || !level.allows_loss() || lines.len() <= self.keep {
///             return Ok(Outcome::Unchanged);
///         }
///         Ok(Outcome::lossy(lines[..self.keep].join("\n")))
///     }
/// }
///
/// let stage = Stage::new::<Head>("{ keep = 2 }", Level::Normal).unwrap();
/// let log = "line of output\n".repeat(50);
/// let out = stage.run(&log);
/// // Lossy: the original went to the tee store, and the output (the two lines, then a
/// // pointer line naming the key) points at it.
/// assert!(out.meta.compressed && out.meta.teed);
/// let key = out.meta.tee_key.as_deref().unwrap();
/// assert!(out.text().unwrap().starts_with("line of output\nline of output\n[wm_get_result "));
/// assert!(out.text().unwrap().contains(key));
/// assert_eq!(stage.host().recover(key).unwrap(), Some(log.into_bytes()));
/// ```
pub struct Stage {
    host: Host,
    _project: tempfile::TempDir,
}

impl std::fmt::Debug for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stage").field("host", &self.host).finish()
    }
}

impl Stage {
    /// A stage whose entry runs `C` with `params` (a TOML inline table, as a manifest would
    /// write it: `"{ min_run = 2 }"`, or `"{}"`) at `level`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the temporary project cannot be written; [`Error::Host`] when the
    /// host refuses the configuration (a bad param, a name another codec has), with every
    /// error it found.
    pub fn new<C: Codec>(params: &str, level: Level) -> Result<Stage, Error> {
        let project = tempfile::tempdir().map_err(|source| Error::Io {
            path: std::env::temp_dir(),
            action: "create a temporary project",
            source,
        })?;
        let folder = project.path().join(".parrot");
        let manifest = folder.join("compressors.toml");
        let text = format!(
            "[compressor.\"{TOOL}\"]\ncodec = \"{}\"\nlevel = \"{level}\"\nparams = {params}\n",
            C::NAME
        );
        std::fs::create_dir_all(&folder)
            .and_then(|()| std::fs::write(&manifest, text))
            .map_err(|source| Error::Io {
                path: manifest.clone(),
                action: "write the stage's manifest",
                source,
            })?;
        let host = Host::builder()
            .project(project.path())
            .plugin_path(None)
            .trust_project_plugins(false)
            .codec::<C>()
            .tee_store(Arc::new(MemoryTeeStore::default()))
            .inline_at_any_size(true)
            .build()
            .map_err(|err: BuildError| Error::Host(Box::new(err)))?;
        Ok(Stage {
            host,
            _project: project,
        })
    }

    /// Runs `payload` through the stage as the result of a successful tool call.
    pub fn run(&self, payload: &str) -> Processed<'static> {
        self.host
            .process(Call::new(TOOL, Input::Text(payload)))
            .into_owned()
    }

    /// The host, to recover an original by its tee key or to read the report.
    pub fn host(&self) -> &Host {
        &self.host
    }
}

/// Runs `payload` through the real stage with codec `C` (default params) at `level`: the
/// one-call form of [`Stage`].
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{Codec, CodecError, Level, Outcome, Params, Payload};
/// use parrot_host::Skip;
///
/// /// Appends a line to every payload: never smaller, so the stage's no-gain rule drops it.
/// struct Sign;
///
/// impl Codec for Sign {
///     const NAME: &'static str = "sign";
///
///     fn new(_: &mut Params) -> Result<Self, CodecError> {
///         Ok(Sign)
///     }
///
///     fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
///         if !level.allows_loss() {
///             return Ok(Outcome::Unchanged);
///         }
///         Ok(Outcome::lossy(format!("{}\n-- signed", payload.text())))
///     }
/// }
///
/// let out = parrot_codec_test::stage::<Sign>("plain text", Level::Normal).unwrap();
/// assert_eq!(out.text(), Some("plain text"));
/// assert_eq!(out.meta.skipped, Some(Skip::NoGain));
/// ```
///
/// # Errors
///
/// As [`Stage::new`].
pub fn stage<C: Codec>(payload: &str, level: Level) -> Result<Processed<'static>, Error> {
    Ok(Stage::new::<C>("{}", level)?.run(payload))
}

#[cfg(test)]
mod tests {
    use parrot_codec_api::{CodecError, Inverse, Outcome, Params, Payload};
    use parrot_host::Skip;

    use super::*;

    /// Claims a lossless outcome but keeps only the first half of the text, and its inverse
    /// gives back what it is given.
    struct Liar;

    impl Liar {
        fn expand(&self, payload: &str) -> Result<String, CodecError> {
            Ok(payload.to_owned())
        }
    }

    impl Codec for Liar {
        const NAME: &'static str = "liar";
        const INVERSE: Option<Inverse<Self>> = Some(Self::expand);

        fn new(_: &mut Params) -> Result<Self, CodecError> {
            Ok(Liar)
        }

        fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
            let text = payload.text();
            if !level.allows_change() {
                return Ok(Outcome::Unchanged);
            }
            Ok(Outcome::lossless(&text[..text.len() / 2]))
        }
    }

    /// The stage holds an in-process codec to a plugin's rules: its lossless claim is
    /// verified through its inverse, found false, and the loss refused at `minimal`.
    #[test]
    fn a_false_lossless_claim_is_caught_by_the_stage() {
        let input = "abcdefghijklmnopqrstuvwxyz".repeat(4);
        let out = stage::<Liar>(&input, Level::Minimal).unwrap();
        assert_eq!(out.text(), Some(input.as_str()));
        assert_eq!(out.meta.skipped, Some(Skip::CodecError));
    }

    #[test]
    fn a_bad_param_fails_the_stage_naming_the_key() {
        let err = Stage::new::<Liar>("{ kep = 2 }", Level::Normal).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("param \"kep\": unknown key"), "{message}");
    }
}
