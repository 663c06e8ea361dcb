use std::fmt;

/// What kind of failure a [`CodecError`] reports.
///
/// The kind crosses the plugin boundary as a numeric code ([`ErrorKind::code`]); a code this
/// version does not know is read back as [`ErrorKind::Failed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A parameter of the manifest entry is unknown, of the wrong type or out of range.
    /// [`CodecError::key`] names it.
    InvalidParams,
    /// The payload is not something this codec can work on, in a way the codec treats as an
    /// error rather than a passthrough.
    InvalidInput,
    /// The codec failed for a reason of its own.
    Failed,
    /// The codec panicked; the message holds the panic's message and location.
    Panicked,
    /// The operation is not offered by this codec (for example [`crate::DynCodec::expand`] of
    /// a codec without an inverse).
    Unsupported,
    /// The library was asked for a codec it does not provide.
    UnknownCodec,
}

impl ErrorKind {
    /// The numeric code of this kind on the plugin boundary.
    pub const fn code(self) -> u8 {
        match self {
            ErrorKind::InvalidParams => 1,
            ErrorKind::InvalidInput => 2,
            ErrorKind::Failed => 3,
            ErrorKind::Panicked => 4,
            ErrorKind::Unsupported => 5,
            ErrorKind::UnknownCodec => 6,
        }
    }

    /// The kind for a numeric code; unknown codes (from a newer interface) are `Failed`.
    pub const fn from_code(code: u8) -> ErrorKind {
        match code {
            1 => ErrorKind::InvalidParams,
            2 => ErrorKind::InvalidInput,
            4 => ErrorKind::Panicked,
            5 => ErrorKind::Unsupported,
            6 => ErrorKind::UnknownCodec,
            _ => ErrorKind::Failed,
        }
    }
}

/// The error a codec returns: a kind, the parameter it concerns (if any) and a message.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::{CodecError, ErrorKind};
///
/// let err = CodecError::invalid_param("threshold_chars", "expected a positive integer, got 0");
/// assert_eq!(err.kind(), ErrorKind::InvalidParams);
/// assert_eq!(err.key(), Some("threshold_chars"));
/// assert_eq!(
///     err.to_string(),
///     "param \"threshold_chars\": expected a positive integer, got 0"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    kind: ErrorKind,
    key: Option<String>,
    message: String,
}

impl CodecError {
    /// An error of any kind, with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> CodecError {
        CodecError {
            kind,
            key: None,
            message: message.into(),
        }
    }

    /// A bad parameter: `key` names it, `message` says what is wrong and what is expected.
    pub fn invalid_param(key: impl Into<String>, message: impl Into<String>) -> CodecError {
        CodecError {
            kind: ErrorKind::InvalidParams,
            key: Some(key.into()),
            message: message.into(),
        }
    }

    /// Parameters that break a rule between several keys (no single key to name).
    pub fn invalid_params(message: impl Into<String>) -> CodecError {
        CodecError::new(ErrorKind::InvalidParams, message)
    }

    /// A payload the codec refuses.
    pub fn invalid_input(message: impl Into<String>) -> CodecError {
        CodecError::new(ErrorKind::InvalidInput, message)
    }

    /// A failure of the codec's own.
    pub fn failed(message: impl Into<String>) -> CodecError {
        CodecError::new(ErrorKind::Failed, message)
    }

    /// An operation this codec does not offer.
    pub fn unsupported(message: impl Into<String>) -> CodecError {
        CodecError::new(ErrorKind::Unsupported, message)
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The parameter the error concerns, when there is one.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The message, without the key.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn from_parts(kind: ErrorKind, key: Option<String>, message: String) -> CodecError {
        CodecError { kind, key, message }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(f, "param \"{key}\": {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CodecError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_survives_its_code() {
        for kind in [
            ErrorKind::InvalidParams,
            ErrorKind::InvalidInput,
            ErrorKind::Failed,
            ErrorKind::Panicked,
            ErrorKind::Unsupported,
            ErrorKind::UnknownCodec,
        ] {
            assert_eq!(ErrorKind::from_code(kind.code()), kind);
        }
    }

    #[test]
    fn unknown_code_reads_as_failed() {
        assert_eq!(ErrorKind::from_code(200), ErrorKind::Failed);
    }
}
