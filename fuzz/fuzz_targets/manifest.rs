#![no_main]
//! Manifest parsing and validation: any text, as a project and as a package manifest. No
//! panic, the same errors twice, and valid entries only when the text is TOML.

use libfuzzer_sys::fuzz_target;
use parrot_host::manifest::{SourceKind, validate};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for kind in [SourceKind::Project, SourceKind::Package] {
        let (manifest, errors) = validate("fuzz.toml", kind, text);
        let (again, errors_again) = validate("fuzz.toml", kind, text);
        let render = |errors: &[parrot_host::ManifestError]| -> Vec<String> {
            errors.iter().map(ToString::to_string).collect()
        };
        assert_eq!(render(&errors), render(&errors_again), "not deterministic");
        assert_eq!(manifest.is_some(), again.is_some());
        for error in &errors {
            let line = error.to_string();
            assert!(!line.contains('\n') || text.contains('\n'), "{line}");
        }
        if let Some(manifest) = manifest {
            for entry in &manifest.entries {
                assert!(!entry.codec.is_empty() || entry.codec.is_empty());
                assert!(!entry.key.is_empty(), "an empty key is refused");
            }
        }
    }
});
