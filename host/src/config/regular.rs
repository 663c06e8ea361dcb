//! Reading the files a host is configured by (manifests, pinned plugin libraries) without ever
//! blocking on them: anything that is not a regular file (a FIFO, a socket, a device, a
//! directory) is refused before it is read, and the check is made again on the open handle, so
//! a file swapped for a FIFO between the two cannot hang the host either.

use std::io::Read;
use std::path::Path;

/// Why a file could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// There is nothing at the path.
    Missing,
    /// Something other than a regular file is there (`"a FIFO"`, `"a directory"`, …).
    NotRegular(&'static str),
    /// The file is larger than the limit (its size, as far as it was read).
    TooLarge(u64),
    /// Reading failed.
    Io(std::io::Error),
}

impl ReadError {
    /// The error as an I/O error, for messages that say "cannot read: …".
    pub(crate) fn into_io(self) -> std::io::Error {
        match self {
            ReadError::Missing => std::io::Error::from(std::io::ErrorKind::NotFound),
            ReadError::NotRegular(what) => std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("not a regular file ({what})"),
            ),
            ReadError::TooLarge(size) => std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("too large ({size} bytes)"),
            ),
            ReadError::Io(err) => err,
        }
    }
}

/// The bytes of the regular file at `path` (symlinks followed), at most `limit` of them.
pub(crate) fn read(path: &Path, limit: Option<u64>) -> Result<Vec<u8>, ReadError> {
    let metadata = std::fs::metadata(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing,
        _ => ReadError::Io(err),
    })?;
    regular(&metadata)?;
    let file = open(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing,
        _ => ReadError::Io(err),
    })?;
    let metadata = file.metadata().map_err(ReadError::Io)?;
    regular(&metadata)?;
    if let Some(limit) = limit
        && metadata.len() > limit
    {
        return Err(ReadError::TooLarge(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    // A file that grows while it is read stops one byte past the limit.
    let cap = limit.map_or(u64::MAX, |limit| limit.saturating_add(1));
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    match limit {
        Some(limit) if bytes.len() as u64 > limit => Err(ReadError::TooLarge(bytes.len() as u64)),
        _ => Ok(bytes),
    }
}

/// Whether `path` is a regular file (symlinks followed); `Err` names what is there instead.
pub(crate) fn check(path: &Path) -> Result<(), ReadError> {
    let metadata = std::fs::metadata(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing,
        _ => ReadError::Io(err),
    })?;
    regular(&metadata)
}

fn regular(metadata: &std::fs::Metadata) -> Result<(), ReadError> {
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(());
    }
    Err(ReadError::NotRegular(describe(kind)))
}

#[cfg(unix)]
fn describe(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// Opens for reading without blocking: a FIFO swapped in after the check opens at once
/// (instead of waiting for a writer) and is then refused by the check on the handle.
#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_limit_is_refused_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.toml");
        std::fs::write(&path, "0123456789").unwrap();
        assert!(matches!(read(&path, Some(9)), Err(ReadError::TooLarge(10))));
        assert_eq!(read(&path, Some(10)).unwrap(), b"0123456789");
    }

    #[test]
    fn a_directory_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read(dir.path(), None),
            Err(ReadError::NotRegular("a directory"))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("compressors.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(matches!(
            read(&path, None),
            Err(ReadError::NotRegular("a FIFO"))
        ));
        assert!(matches!(check(&path), Err(ReadError::NotRegular("a FIFO"))));
    }
}
