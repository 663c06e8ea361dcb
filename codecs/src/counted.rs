//! Counts in the markers a model reads: "1 line", "4 lines".

use std::fmt;

/// `n` and the noun in the number `n` takes, written where it is formatted (a fold line is
/// written for every group of a log, so nothing is allocated): `singular` for exactly one,
/// `plural` otherwise (zero included). The host's `counted` says the same for its own
/// messages; this crate cannot depend on the host.
pub(crate) fn counted<'a>(n: usize, singular: &'a str, plural: &'a str) -> Counted<'a> {
    Counted {
        n,
        noun: if n == 1 { singular } else { plural },
    }
}

/// See [`counted`].
pub(crate) struct Counted<'a> {
    n: usize,
    noun: &'a str,
}

impl fmt::Display for Counted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.n, self.noun)
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn one_takes_the_singular_and_every_other_count_the_plural() {
        let rows = [
            (0, "0 lines"),
            (1, "1 line"),
            (2, "2 lines"),
            (40, "40 lines"),
        ];
        for (n, expected) in rows {
            assert_eq!(counted(n, "line", "lines").to_string(), expected);
        }
    }
}
