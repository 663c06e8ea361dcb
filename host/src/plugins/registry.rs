//! The codec registry: the built-in codecs (from `parrot-codecs`, through inventory) plus the
//! codecs of every loaded plugin library. A codec name is provided by exactly one source.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parrot_codec_api::__private::{FfiCapableCodecBox, FfiCodecBox, RStr};
use parrot_codec_api::{
    CodecError, CodecMeta, CutAt, DynCodec, ErrorKind, INTERFACE_VERSION, Level, Outcome, Params,
    Payload,
};
use parrot_codecs::Builtin;
use serde_json::{Map, Value};

use crate::error::{Error, LoadError};
use crate::plugins::loader::Library;

/// The name of the host's own routing codec, `auto` (`crate::routing::auto`): reserved, so no library
/// may register it.
pub(crate) const AUTO: &str = "auto";

/// Where a codec comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// Compiled into the host.
    Builtin,
    /// Given to the builder in-process ([`crate::HostBuilder::codec`]): treated as a plugin's
    /// codec by the stage (its lossless outcomes verified), without a library.
    InProcess,
    /// Provided by a plugin library.
    Plugin {
        /// The library's canonical path.
        library: PathBuf,
        /// The package manifest that declared the library.
        manifest: PathBuf,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin => f.write_str("built-in"),
            Origin::InProcess => f.write_str("in-process (HostBuilder::codec)"),
            Origin::Plugin { library, manifest } => {
                write!(f, "{} (package {})", library.display(), manifest.display())
            }
        }
    }
}

/// A registered codec: what it declares about itself, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecInfo {
    /// Its name and flags, as its [`Codec`](parrot_codec_api::Codec) impl declares them.
    pub meta: CodecMeta,
    /// Built in, or the library and package providing it.
    pub origin: Origin,
    /// The interface version the codec was compiled against.
    pub interface_version: String,
}

/// Builds a codec given in-process from a manifest entry's params.
pub(crate) type BuildCodec = fn(Params) -> Result<Box<dyn DynCodec>, CodecError>;

#[derive(Clone, Copy)]
enum Provider {
    Builtin(&'static Builtin),
    InProcess(BuildCodec),
    Plugin(Library),
}

/// Every codec the host can build, by name.
pub struct Registry {
    codecs: BTreeMap<&'static str, (CodecInfo, Provider)>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.codecs.values().map(|(info, _)| info))
            .finish()
    }
}

impl Registry {
    /// A registry holding the built-in codecs.
    pub(crate) fn with_builtins() -> Registry {
        let codecs = parrot_codecs::builtins()
            .into_iter()
            .map(|builtin| {
                let info = CodecInfo {
                    meta: builtin.meta,
                    origin: Origin::Builtin,
                    interface_version: INTERFACE_VERSION.to_owned(),
                };
                (builtin.meta.name(), (info, Provider::Builtin(builtin)))
            })
            .collect();
        Registry { codecs }
    }

    /// Adds a codec given in-process ([`crate::HostBuilder::codec`]). A name already
    /// registered is an error naming both providers.
    pub(crate) fn add_in_process(
        &mut self,
        meta: CodecMeta,
        build: BuildCodec,
        errors: &mut Vec<Error>,
    ) {
        let name = meta.name();
        let first = match self.codecs.get(name) {
            Some((existing, _)) => Some(existing.origin.to_string()),
            None if name == AUTO => Some(Origin::Builtin.to_string()),
            None => None,
        };
        if let Some(first) = first {
            errors.push(
                LoadError::DuplicateCodec {
                    codec: name.to_owned(),
                    first,
                    second: Origin::InProcess.to_string(),
                }
                .into(),
            );
            return;
        }
        let info = CodecInfo {
            meta,
            origin: Origin::InProcess,
            interface_version: INTERFACE_VERSION.to_owned(),
        };
        self.codecs.insert(name, (info, Provider::InProcess(build)));
    }

    /// Adds every codec of a loaded library. A name already registered is an error naming
    /// both providers; the library's other codecs are still added.
    pub(crate) fn add_library(
        &mut self,
        library: Library,
        manifest: &Path,
        errors: &mut Vec<Error>,
    ) {
        for &meta in library.module.codecs().iter() {
            let name = meta.name();
            let info = CodecInfo {
                meta,
                origin: Origin::Plugin {
                    library: library.path.to_path_buf(),
                    manifest: manifest.to_path_buf(),
                },
                interface_version: library.interface_version.to_owned(),
            };
            // `auto` is the host's own routing codec: no library may take its name.
            let first = match self.codecs.get(name) {
                Some((existing, _)) => Some(existing.origin.to_string()),
                None if name == AUTO => Some(Origin::Builtin.to_string()),
                None => None,
            };
            if let Some(first) = first {
                errors.push(
                    LoadError::DuplicateCodec {
                        codec: name.to_owned(),
                        first,
                        second: info.origin.to_string(),
                    }
                    .into(),
                );
                continue;
            }
            self.codecs.insert(name, (info, Provider::Plugin(library)));
        }
    }

    /// Every registered codec, sorted by name.
    pub fn codecs(&self) -> impl Iterator<Item = &CodecInfo> {
        self.codecs.values().map(|(info, _)| info)
    }

    /// The codec registered under `name`.
    pub fn get(&self, name: &str) -> Option<&CodecInfo> {
        self.codecs.get(name).map(|(info, _)| info)
    }

    /// Whether codec `name` is a built-in that validates its JSON payloads in its own pass
    /// ([`Builtin::validates_json`]), so the pipeline may leave the check to it.
    pub(crate) fn validates_json(&self, name: &str) -> bool {
        matches!(self.codecs.get(name), Some((_, Provider::Builtin(builtin))) if builtin.validates_json)
    }

    /// The registered names, comma-separated, for messages.
    /// The registered codecs' names, in name order.
    pub(crate) fn codec_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.codecs.keys().copied()
    }

    pub(crate) fn names(&self) -> String {
        self.codecs.keys().copied().collect::<Vec<_>>().join(", ")
    }

    /// Builds codec `name` from params.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownCodec`] when no source provides `name`; otherwise the codec's own
    /// error ([`ErrorKind::InvalidParams`] naming the key, or [`ErrorKind::Panicked`] when its
    /// constructor panicked).
    pub fn instantiate(
        &self,
        name: &str,
        params: Map<String, Value>,
    ) -> Result<Arc<dyn DynCodec>, CodecError> {
        let Some((info, provider)) = self.codecs.get(name) else {
            return Err(CodecError::new(
                ErrorKind::UnknownCodec,
                format!("unknown codec \"{name}\" (known: {})", self.names()),
            ));
        };
        match provider {
            Provider::Builtin(Builtin { build, .. }) | Provider::InProcess(build) => {
                build(Params::from_json(&Value::Object(params).to_string())?).map(Arc::from)
            }
            Provider::Plugin(library) => {
                let json = Value::Object(params).to_string();
                let (name, json) = (RStr::from(name), RStr::from(&*json));
                // The newest constructor the library offers (see `CapabilitiesMod`).
                let inner = match library.capabilities {
                    Some(capabilities) => (capabilities.new_codec())(name, json)
                        .into_result()
                        .map(Boundary::Capable),
                    None => (library.module.new_codec())(name, json)
                        .into_result()
                        .map(Boundary::First),
                }
                .map_err(CodecError::from)?;
                let cuts = match &inner {
                    Boundary::Capable(codec) => codec.cuts(),
                    Boundary::First(_) => false,
                };
                Ok(Arc::new(PluginCodec {
                    meta: info.meta,
                    cuts,
                    inner,
                }))
            }
        }
    }
}

/// A codec behind the plugin boundary, with the metadata its library declared for it.
struct PluginCodec {
    meta: CodecMeta,
    /// Whether it offers a cut, asked once.
    cuts: bool,
    inner: Boundary,
}

/// A plugin codec's object, as the library built it: through the first root module (a library
/// built before the capabilities module), or through the capabilities module.
enum Boundary {
    First(FfiCodecBox),
    Capable(FfiCapableCodecBox),
}

impl DynCodec for PluginCodec {
    fn meta(&self) -> CodecMeta {
        self.meta
    }

    fn cuts(&self) -> bool {
        self.cuts
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        let (text, kind) = (RStr::from(payload.text()), payload.kind());
        match &self.inner {
            Boundary::First(codec) => codec.compress(text, kind, level),
            Boundary::Capable(codec) => codec.compress(text, kind, level),
        }
        .into_result()
        .map(Outcome::from)
        .map_err(CodecError::from)
    }

    fn expand(&self, payload: &str) -> Result<String, CodecError> {
        let text = RStr::from(payload);
        match &self.inner {
            Boundary::First(codec) => codec.expand(text),
            Boundary::Capable(codec) => codec.expand(text),
        }
        .into_result()
        .map(|text| text.into_string())
        .map_err(CodecError::from)
    }

    /// The library's cut; an error (a panic in it included) is logged, and the host cuts as
    /// text.
    fn cut(&self, original: Payload<'_>, output: &str, room: usize) -> Option<CutAt> {
        let Boundary::Capable(codec) = &self.inner else {
            return None;
        };
        if !self.cuts {
            return None;
        }
        let text = RStr::from(original.text());
        match codec
            .cut(text, original.kind(), RStr::from(output), room)
            .into_result()
        {
            Ok(cut) => cut.into_option().map(CutAt::from),
            Err(err) => {
                let err = CodecError::from(err);
                tracing::warn!(codec = self.meta.name(), "codec's cut failed: {err}");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every codec the core manifest routes to is a built-in the registry holds, in name order
    /// and as built-ins: the built-ins were linked (inventory gathers only what the linker
    /// kept) and none is listed by hand.
    #[test]
    fn builtin_codecs_are_linked_and_registered() {
        let registry = Registry::with_builtins();
        let names: Vec<&str> = registry.codecs().map(|c| c.meta.name()).collect();
        let builtins: Vec<&str> = parrot_codecs::builtins()
            .iter()
            .map(|b| b.meta.name())
            .collect();
        assert_eq!(names, builtins);
        assert!(names.is_sorted(), "{names:?}");
        let core = crate::config::manifest::core_params();
        let routed = ["rows", "object", "text", "log", "file"]
            .into_iter()
            .flat_map(|list| core[list].as_array().expect("a list"));
        for name in routed {
            let name = name.as_str().expect("a codec name");
            assert!(
                names.contains(&name),
                "core.toml routes to {name}: {names:?}"
            );
        }
        assert!(registry.codecs().all(|c| c.origin == Origin::Builtin));
    }

    /// The registry carries each built-in's own metadata, flags included (it once hard-coded
    /// `text_output`).
    #[test]
    fn builtin_metadata_is_what_each_codec_declares() {
        let registry = Registry::with_builtins();
        let meta = |name| registry.get(name).expect("registered").meta;
        assert_eq!(
            meta("json_compact"),
            CodecMeta::of::<parrot_codecs::JsonCompact>()
        );
        assert_eq!(meta("columnar"), CodecMeta::of::<parrot_codecs::Columnar>());
        assert_eq!(meta("toon"), CodecMeta::of::<parrot_codecs::Toon>());
        assert!(meta("toon").text_output() && meta("toon").expands());
        assert!(!meta("columnar").text_output());
        assert!(meta("json_compact").null_members_absent());
        assert!(!meta("columnar").null_members_absent());
        let codec = registry.instantiate("json_compact", Map::new()).unwrap();
        assert_eq!(codec.meta(), meta("json_compact"));
    }

    #[test]
    fn unknown_codec_lists_the_known_ones() {
        let err = Registry::with_builtins()
            .instantiate("zstd", Map::new())
            .err()
            .expect("unknown codec");
        assert_eq!(err.kind(), ErrorKind::UnknownCodec);
        let known: Vec<&str> = parrot_codecs::builtins()
            .iter()
            .map(|b| b.meta.name())
            .collect();
        assert_eq!(
            err.to_string(),
            format!("unknown codec \"zstd\" (known: {})", known.join(", "))
        );
    }
}
