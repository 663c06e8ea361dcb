//! How long a persistent store keeps originals, and what it holds: the words the stores of
//! other crates share, so that the command reports each the same way.

use std::time::{Duration, SystemTime};

/// How long a persistent tee store keeps originals: at most `max_entries` and `max_bytes` of
/// originals (the oldest go first), and none older than `max_age`; `None` means no limit of that
/// kind. The SQLite store (`parrot-tee-sqlite`) applies all three; the Redis store
/// (`parrot-tee-redis`) takes the default `max_age` as the time to live of its keys.
///
/// The default keeps 10,000 entries, 1 GiB of originals, for 7 days. The newest entry is always
/// kept: `max_entries` of 0 keeps one, and an original larger than `max_bytes` stays as the only
/// entry until the next put.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use parrot_tee::Retention;
///
/// let default = Retention::default();
/// assert_eq!(default.max_entries, Some(10_000));
/// assert_eq!(default.max_bytes, Some(1 << 30));
/// assert_eq!(default.max_age, Some(Duration::from_secs(7 * 24 * 60 * 60)));
///
/// let by_count_only = Retention { max_age: None, ..Retention::default() };
/// assert_eq!(by_count_only.max_entries, Some(10_000));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// The most entries kept; the oldest (first inserted) are deleted first.
    pub max_entries: Option<usize>,
    /// The most bytes of originals kept (their lengths summed, not the file's size); the oldest
    /// are deleted first.
    pub max_bytes: Option<u64>,
    /// The oldest an entry may be, by the store's clock at the time of a put.
    pub max_age: Option<Duration>,
}

impl Retention {
    /// The default `max_entries`.
    pub const DEFAULT_MAX_ENTRIES: usize = 10_000;

    /// The default `max_bytes`: 1 GiB.
    pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

    /// The default `max_age`: 7 days.
    pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
}

impl Default for Retention {
    fn default() -> Retention {
        Retention {
            max_entries: Some(Retention::DEFAULT_MAX_ENTRIES),
            max_bytes: Some(Retention::DEFAULT_MAX_BYTES),
            max_age: Some(Retention::DEFAULT_MAX_AGE),
        }
    }
}

/// What a persistent tee store holds, from its `stats` (`SqliteTeeStore::stats` of
/// `parrot-tee-sqlite`, `RedisTeeStore::stats` of `parrot-tee-redis`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TeeStats {
    /// The number of originals.
    pub entries: u64,
    /// Their bytes, summed (the file is larger: SQLite's pages, the index, the free pages).
    pub bytes: u64,
    /// When the oldest entry was stored or last renewed, by the store's clock; `None` when the
    /// store is empty.
    pub oldest: Option<SystemTime>,
}

impl TeeStats {
    /// What a store holds: `entries` originals of `bytes` in all, the oldest stored (or last
    /// renewed) at `oldest`. For a store of another crate to report its contents.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_tee::TeeStats;
    ///
    /// let empty = TeeStats::new(0, 0, None);
    /// assert_eq!((empty.entries, empty.bytes, empty.oldest), (0, 0, None));
    /// ```
    pub fn new(entries: u64, bytes: u64, oldest: Option<SystemTime>) -> TeeStats {
        TeeStats {
            entries,
            bytes,
            oldest,
        }
    }
}
