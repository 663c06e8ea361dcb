use std::fmt;
use std::str::FromStr;

use abi_stable::StableAbi;

/// How hard a codec may compress: `none < minimal < normal < aggressive`.
///
/// The names are spelled exactly so, lower case, in manifests and APIs.
///
/// # Checking the level in a codec
///
/// A codec asks the level one of two questions before each change it makes, by what the change
/// costs: [`Level::allows_change`] before a lossless change, [`Level::allows_loss`] before a
/// lossy one, and returns [`Outcome::Unchanged`](crate::Outcome::Unchanged) when the answer is
/// no. Both answer no at `none`: the host never sends it (its entries at `none` pass through
/// before any codec runs), but the contract check calls every codec at it, and a codec asking
/// these questions needs no case of its own for it. Comparing with [`Level::None`] or
/// matching on levels is left for choosing how strong a change is (how long a string may stay,
/// whether to summarise), never for whether one is allowed.
///
/// - `none`: passthrough, the output is byte-identical to the input;
/// - `minimal`: lossless transformations only;
/// - `normal`: bounded lossy transformations (the host keeps the original);
/// - `aggressive`: the strongest reduction a codec offers, lossy.
///
/// # Examples
///
/// ```
/// use parrot_codec_api::Level;
///
/// let level: Level = "normal".parse().unwrap();
/// assert!(level > Level::Minimal);
/// assert_eq!(level.to_string(), "normal");
/// assert!("NORMAL".parse::<Level>().is_err());
/// ```
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Passthrough: the output is the input, byte for byte.
    None = 0,
    /// Lossless transformations only.
    Minimal = 1,
    /// Bounded lossy transformations.
    Normal = 2,
    /// The strongest reduction a codec offers.
    Aggressive = 3,
}

impl Level {
    /// The four levels, weakest first.
    pub const ALL: [Level; 4] = [
        Level::None,
        Level::Minimal,
        Level::Normal,
        Level::Aggressive,
    ];

    /// The level's name as manifests spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Minimal => "minimal",
            Level::Normal => "normal",
            Level::Aggressive => "aggressive",
        }
    }

    /// Whether a codec may change the payload at all at this level: at every level but
    /// `none`. Ask it before a lossless change.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::Level;
    ///
    /// assert!(!Level::None.allows_change());
    /// assert!(Level::Minimal.allows_change());
    /// ```
    pub const fn allows_change(self) -> bool {
        !matches!(self, Level::None)
    }

    /// Whether a codec may drop information at this level (`normal` and `aggressive`). Ask it
    /// before a lossy change.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_codec_api::Level;
    ///
    /// assert!(!Level::Minimal.allows_loss());
    /// assert!(Level::Normal.allows_loss());
    /// ```
    pub const fn allows_loss(self) -> bool {
        matches!(self, Level::Normal | Level::Aggressive)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`Level`] from a string that is not one of the four names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseLevelError {
    /// The text that was given.
    pub given: String,
}

impl fmt::Display for ParseLevelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown level \"{}\" (expected one of: none, minimal, normal, aggressive)",
            self.given
        )
    }
}

impl std::error::Error for ParseLevelError {}

impl FromStr for Level {
    type Err = ParseLevelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Level::ALL
            .into_iter()
            .find(|level| level.as_str() == s)
            .ok_or_else(|| ParseLevelError {
                given: s.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip_through_their_names() {
        for level in Level::ALL {
            assert_eq!(level.as_str().parse::<Level>(), Ok(level));
        }
    }

    #[test]
    fn misspelled_level_lists_the_four_names() {
        let err = "Normal".parse::<Level>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown level \"Normal\" (expected one of: none, minimal, normal, aggressive)"
        );
    }

    #[test]
    fn levels_are_ordered_weakest_first() {
        assert!(Level::None < Level::Minimal);
        assert!(Level::Minimal < Level::Normal);
        assert!(Level::Normal < Level::Aggressive);
    }
}
