//! Namespaces: who may read an original back. A call processed in a namespace stores its
//! original under `{namespace}/{key}`, and only a recovery in the same namespace finds it; the
//! model still sees the plain key. A namespace never holds `/`, so a scoped key names its
//! namespace and its key without ambiguity, and never equals an unscoped key (which holds no
//! `/` before its tool's name: `__tee__:tool:…`).

use std::fmt;

use sha2::{Digest as _, Sha256};

use crate::error::NamespaceError;

/// The longest namespace, in bytes.
pub const MAX_NAMESPACE_LEN: usize = 64;

/// The domain tag hashed in front of a credential by [`Namespace::of_secret`]: the digest is
/// of this use alone, not one any other system computes over the same key.
const SECRET_TAG: &[u8] = b"parrot-compress tee namespace v1\0";

/// The domain tag of [`Namespace::random`]'s digest.
const RANDOM_TAG: &[u8] = b"parrot-compress session namespace v1\0";

/// A validated namespace of the tee store: 1 to 64 of `A-Z a-z 0-9 . _ -`.
///
/// # Examples
///
/// ```
/// use parrot_tee::Namespace;
///
/// let team: Namespace = "team-a".parse().unwrap();
/// assert_eq!(team.scoped_key("__tee__:sql:0123456789ab"), "team-a/__tee__:sql:0123456789ab");
/// assert_eq!(
///     Namespace::new("a/b").unwrap_err().to_string(),
///     "namespace \"a/b\": character '/' at byte 1 is not allowed (only A-Z a-z 0-9 . _ -)"
/// );
/// // A credential gives the same namespace every time, and never shows in it.
/// let key = Namespace::of_secret(b"sk-ant-secret");
/// assert_eq!(key, Namespace::of_secret(b"sk-ant-secret"));
/// assert!(key.as_str().starts_with("key-") && !key.as_str().contains("secret"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Namespace(String);

impl Namespace {
    /// The namespace `name`.
    ///
    /// # Errors
    ///
    /// [`NamespaceError`] naming `name` and what is wrong: empty, over
    /// [`MAX_NAMESPACE_LEN`] bytes, or a character outside `A-Z a-z 0-9 . _ -` (and where).
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Namespace;
    ///
    /// assert_eq!(Namespace::new("session-1.b_c").unwrap().as_str(), "session-1.b_c");
    /// assert!(Namespace::new("").is_err());
    /// assert!(Namespace::new(&"x".repeat(65)).is_err());
    /// ```
    pub fn new(name: &str) -> Result<Namespace, NamespaceError> {
        let error = |problem: String| NamespaceError {
            name: name.to_owned(),
            problem,
        };
        if name.is_empty() {
            return Err(error(
                "empty (give 1 to 64 of A-Z a-z 0-9 . _ -)".to_owned(),
            ));
        }
        if name.len() > MAX_NAMESPACE_LEN {
            return Err(error(format!(
                "{} bytes, over the most allowed, {MAX_NAMESPACE_LEN}",
                name.len()
            )));
        }
        if let Some((at, c)) = name
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(error(format!(
                "character {c:?} at byte {at} is not allowed (only A-Z a-z 0-9 . _ -)"
            )));
        }
        Ok(Namespace(name.to_owned()))
    }

    /// The namespace of a credential (an API key, a bearer token): `key-` and 16 hex digits of
    /// the SHA-256 of a domain tag and `secret`. The same credential gives the same namespace
    /// in every process, so a proxy needs to store nothing to recognise it; the credential
    /// cannot be read back from it. Compute one with `parrot-compress namespace`.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Namespace;
    ///
    /// assert_eq!(Namespace::of_secret(b"sk-test").as_str().len(), 4 + 16);
    /// assert_ne!(Namespace::of_secret(b"sk-test"), Namespace::of_secret(b"sk-test2"));
    /// ```
    pub fn of_secret(secret: &[u8]) -> Namespace {
        let mut hasher = Sha256::new();
        hasher.update(SECRET_TAG);
        hasher.update(secret);
        Namespace(format!("key-{}", hex16(&hasher.finalize())))
    }

    /// A namespace no other process chose: `session-` and 16 hex digits of the SHA-256 of the
    /// process id, the time and the standard library's per-process random hash keys. What
    /// `parrot-compress mcp-proxy` gives a session unless told `--namespace`.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Namespace;
    ///
    /// let session = Namespace::random();
    /// assert!(session.as_str().starts_with("session-"));
    /// assert_ne!(session, Namespace::random());
    /// ```
    pub fn random() -> Namespace {
        use std::hash::{BuildHasher as _, Hasher as _};
        // Each RandomState has keys of its own, seeded by the OS once per thread and stepped
        // for every new one: two calls in one process differ, and so do two processes.
        let mut random = std::collections::hash_map::RandomState::new().build_hasher();
        random.write_u32(std::process::id());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let mut hasher = Sha256::new();
        hasher.update(RANDOM_TAG);
        hasher.update(random.finish().to_le_bytes());
        hasher.update(std::process::id().to_le_bytes());
        hasher.update(now.as_nanos().to_le_bytes());
        Namespace(format!("session-{}", hex16(&hasher.finalize())))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Where an original of `key` in this namespace is stored: `{namespace}/{key}`.
    pub fn scoped_key(&self, key: &str) -> String {
        format!("{}/{key}", self.0)
    }

    /// The namespace and the plain key of a key written `{namespace}/{key}`, as
    /// [`Namespace::scoped_key`] writes it; `None` for a key of no namespace. What is before
    /// the first `/` names the namespace when it is a namespace's name, which an unscoped key's
    /// `__tee__:` never is (a tool's name may hold a `/`: `__tee__:gh/search:…` is of no
    /// namespace). A recovery of no namespace answers such a key as one nobody holds
    /// (the host's `Host::recover_in`), so that a key that names a namespace
    /// reads nothing of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::Namespace;
    ///
    /// let (team, key) = Namespace::split_scoped("team-a/__tee__:sh:0123456789ab").unwrap();
    /// assert_eq!((team.as_str(), key), ("team-a", "__tee__:sh:0123456789ab"));
    /// assert_eq!(Namespace::split_scoped("__tee__:sh:0123456789ab"), None);
    /// assert_eq!(Namespace::split_scoped("__tee__:gh/search:0123456789ab"), None);
    /// ```
    pub fn split_scoped(stored: &str) -> Option<(Namespace, &str)> {
        let (name, key) = stored.split_once('/')?;
        Namespace::new(name).ok().map(|namespace| (namespace, key))
    }
}

impl std::str::FromStr for Namespace {
    type Err = NamespaceError;

    fn from_str(name: &str) -> Result<Namespace, NamespaceError> {
        Namespace::new(name)
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The first 16 hex digits of a digest (64 bits).
fn hex16(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    digest[..8]
        .iter()
        .fold(String::with_capacity(16), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_is_1_to_64_of_the_allowed_characters() {
        let cases: [(&str, Option<&str>); 9] = [
            ("a", None),
            ("key-0123456789abcdef", None),
            ("Team_A.prod-2", None),
            (&"x".repeat(64), None),
            (
                "",
                Some("namespace \"\": empty (give 1 to 64 of A-Z a-z 0-9 . _ -)"),
            ),
            (&"x".repeat(65), Some("bytes, over the most allowed, 64")),
            (
                "a/b",
                Some(
                    "namespace \"a/b\": character '/' at byte 1 is not allowed (only A-Z a-z 0-9 . _ -)",
                ),
            ),
            ("a b", Some("character ' ' at byte 1 is not allowed")),
            ("é", Some("character 'é' at byte 0 is not allowed")),
        ];
        for (name, error) in cases {
            match (Namespace::new(name), error) {
                (Ok(namespace), None) => assert_eq!(namespace.as_str(), name),
                (Err(err), Some(expected)) => {
                    assert!(err.to_string().contains(expected), "{name:?}: {err}");
                    assert_eq!(err.name, name);
                }
                (found, _) => panic!("{name:?}: {found:?}"),
            }
        }
    }

    #[test]
    fn a_secrets_namespace_is_a_tagged_digest_not_the_secret() {
        // SHA-256 of the tag and "sk-test", first 8 bytes: pinned, so that a namespace
        // computed by `parrot-compress namespace` today finds the originals stored tomorrow.
        let namespace = Namespace::of_secret(b"sk-test");
        let mut hasher = Sha256::new();
        hasher.update(b"parrot-compress tee namespace v1\0sk-test");
        assert_eq!(
            namespace.as_str(),
            format!("key-{}", hex16(&hasher.finalize()))
        );
        assert_ne!(
            namespace.as_str()[4..],
            hex16(&Sha256::digest(b"sk-test"))[..],
            "not the untagged digest of the key"
        );
        assert!(Namespace::new(namespace.as_str()).is_ok());
        assert!(Namespace::new(Namespace::random().as_str()).is_ok());
    }
}
