//! The duplicate-name check: no object may have two members of the same decoded name.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::string::RawStr;

/// The duplicate-name check for a reader that meets many objects: per depth, the last list of
/// member names found distinct, so that rows of one shape are checked with one comparison each
/// instead of one per pair of names.
///
/// # Examples
///
/// ```
/// use parrot_json::{DistinctNames, Reader};
///
/// let id = Reader::new(r#""id""#).string().unwrap();
/// let name = Reader::new(r#""name""#).string().unwrap();
/// let escaped_id = Reader::new(r#""\u0069d""#).string().unwrap();
/// let mut distinct = DistinctNames::default();
/// assert!(distinct.check(1, &[id, name]));
/// // The same names again at that depth: one comparison.
/// assert!(distinct.check(1, &[id, name]));
/// assert!(!distinct.check(1, &[id, escaped_id]));
/// ```
#[derive(Debug, Clone, Default)]
pub struct DistinctNames<'a> {
    known: Vec<Vec<RawStr<'a>>>,
}

impl<'a> DistinctNames<'a> {
    /// Whether no two of `names` (the members of one object at `depth`) have the same decoded
    /// value.
    #[inline]
    pub fn check(&mut self, depth: usize, names: &[RawStr<'a>]) -> bool {
        if self.known.get(depth).is_some_and(|known| {
            known.len() == names.len() && known.iter().zip(names).all(|(a, b)| a == b)
        }) {
            return true;
        }
        self.check_new(depth, names)
    }

    fn check_new(&mut self, depth: usize, names: &[RawStr<'a>]) -> bool {
        if !all_distinct(names) {
            return false;
        }
        if self.known.len() <= depth {
            self.known.resize_with(depth + 1, Vec::new);
        }
        if let Some(slot) = self.known.get_mut(depth) {
            slot.clear();
            slot.extend_from_slice(names);
        }
        true
    }
}

/// Whether no two member names have the same decoded value: pairwise for a few, sorted on
/// the stack for a score or so (none escaped), hashed decoded beyond that. Each is the fastest
/// of the three at those sizes on the objects of the benchmark corpus.
///
/// # Examples
///
/// ```
/// use parrot_json::{Reader, all_distinct};
///
/// let a = Reader::new(r#""a""#).string().unwrap();
/// let escaped_a = Reader::new(r#""\u0061""#).string().unwrap();
/// let b = Reader::new(r#""b""#).string().unwrap();
/// assert!(all_distinct(&[a, b]));
/// assert!(!all_distinct(&[a, b, escaped_a]));
/// ```
pub fn all_distinct(names: &[RawStr<'_>]) -> bool {
    const SORTED: usize = 20;
    if names.len() <= 8 {
        names
            .iter()
            .enumerate()
            .all(|(i, a)| names[i + 1..].iter().all(|b| !a.same_value(b)))
    } else if names.len() <= SORTED && names.iter().all(|name| !name.is_escaped()) {
        let mut sorted = [""; SORTED];
        for (slot, name) in sorted.iter_mut().zip(names) {
            *slot = name.content();
        }
        let sorted = sorted.get_mut(..names.len()).unwrap_or_default();
        sorted.sort_unstable();
        sorted.windows(2).all(|pair| pair[0] != pair[1])
    } else {
        let mut seen: HashSet<Cow<'_, str>, foldhash::fast::RandomState> =
            HashSet::with_capacity_and_hasher(names.len(), Default::default());
        names.iter().all(|name| seen.insert(name.decoded()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reader;

    #[test]
    fn duplicates_are_found_at_every_size() {
        for n in [2, 8, 9, 20, 21, 40] {
            let texts: Vec<String> = (0..n).map(|i| format!("\"k{i}\"")).collect();
            let names: Vec<RawStr<'_>> = texts
                .iter()
                .map(|text| Reader::new(text).string().unwrap())
                .collect();
            assert!(all_distinct(&names), "{n} names");
            // The last name again, as written and escaped (`\u006b` is `k`).
            let last = n - 1;
            for duplicate in [format!("\"k{last}\""), format!("\"\\u006b{last}\"")] {
                let mut with = names.clone();
                with.insert(n / 2, Reader::new(&duplicate).string().unwrap());
                assert!(!all_distinct(&with), "{n} names and {duplicate}");
                let mut distinct = DistinctNames::default();
                assert!(distinct.check(1, &names));
                assert!(!distinct.check(1, &with), "{n} names and {duplicate}");
            }
        }
    }
}
