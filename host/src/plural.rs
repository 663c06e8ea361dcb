//! Counts in messages a person reads: "1 line", "4 lines".

/// `n` and the noun in the number `n` takes: `singular` for exactly one, `plural` otherwise
/// (zero included, as English has it). Both forms are given, since the plural of an entry is
/// not made by adding an `s`.
///
/// # Examples
///
/// ```
/// use parrot_host::counted;
///
/// assert_eq!(counted(1, "line", "lines"), "1 line");
/// assert_eq!(counted(4, "line", "lines"), "4 lines");
/// assert_eq!(counted(0, "entry", "entries"), "0 entries");
/// ```
pub fn counted(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}
