//! The error of a retrieval.

use parrot_host::TeeError;

/// A retrieval ([`crate::Recover::recover_selected`]) that cannot be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetrieveError {
    /// A selector that is malformed, unknown, does not fit the original (a pointer into a text
    /// original, a range past the end) or does not combine with another given.
    #[error("selector \"{selector}\": {message}")]
    Selector {
        /// The selector's name as the recovery tool spells it (`lines`, `grep`, `context`,
        /// `pointer`, `rows`, `max_chars`, or the unknown name given).
        selector: String,
        /// What is wrong, in one line.
        message: String,
    },

    /// Nothing is stored under the key (never stored, or removed by the store's retention).
    #[error("no original is stored under \"{key}\"")]
    NotFound {
        /// The key.
        key: String,
    },

    /// The tee store is not configured or failed.
    #[error(transparent)]
    Tee(#[from] TeeError),
}
