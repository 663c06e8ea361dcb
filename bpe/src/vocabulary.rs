//! A vocabulary laid out by the build script: ranks looked up where they lie in the binary.

use crate::hash::{RANK_BITS, hash};

const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

/// One tokenizer's tokens, by rank, with a hash table from bytes to rank.
pub(crate) struct Vocabulary {
    bits: u32,
    /// `n + 1` little-endian `u32`s.
    offsets: &'static [u8],
    /// `2^bits` little-endian `u32`s: a rank plus one in the low [`RANK_BITS`], the rest the
    /// hash's low bits.
    slots: &'static [u8],
    bytes: &'static [u8],
}

impl Vocabulary {
    /// Reads the header of a table written by the build script (see `build.rs` for its layout).
    ///
    /// The table is the build's own output, embedded in this crate, so a table that does not
    /// match its header is a broken build, not bad input.
    pub(crate) const fn new(table: &'static [u8]) -> Vocabulary {
        let n = u32::from_le_bytes([table[0], table[1], table[2], table[3]]) as usize;
        let bits = u32::from_le_bytes([table[4], table[5], table[6], table[7]]);
        let (_, rest) = table.split_at(8);
        let (offsets, rest) = rest.split_at((n + 1) * 4);
        let (slots, bytes) = rest.split_at((1usize << bits) * 4);
        Vocabulary {
            bits,
            offsets,
            slots,
            bytes,
        }
    }

    /// The rank of the token whose bytes are `piece`, if there is one.
    #[inline]
    pub(crate) fn rank(&self, piece: &[u8]) -> Option<u32> {
        let h = hash(piece);
        let mask = (1usize << self.bits) - 1;
        let mut at = (h >> (64 - self.bits)) as usize;
        loop {
            let slot = read_u32(self.slots, at);
            if slot == 0 {
                return None;
            }
            if slot >> RANK_BITS == (h as u32) & (u32::MAX >> RANK_BITS) {
                let rank = (slot & RANK_MASK) - 1;
                if same(self.token(rank), piece) {
                    return Some(rank);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// The bytes of the token of `rank`.
    #[inline]
    fn token(&self, rank: u32) -> &'static [u8] {
        let start = read_u32(self.offsets, rank as usize) as usize;
        let end = read_u32(self.offsets, rank as usize + 1) as usize;
        &self.bytes[start..end]
    }
}

#[inline]
fn read_u32(table: &[u8], index: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&table[index * 4..index * 4 + 4]);
    u32::from_le_bytes(word)
}

/// Whether two short byte strings are equal, without a call for the common lengths.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let n = a.len();
    if (4..=8).contains(&n) {
        return prefix_u32(a, 0) == prefix_u32(b, 0)
            && prefix_u32(a, n - 4) == prefix_u32(b, n - 4);
    }
    if n < 4 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    a == b
}

#[inline]
fn prefix_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_ne_bytes(word)
}
