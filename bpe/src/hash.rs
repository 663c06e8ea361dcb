//! The hash of a token's bytes, shared by the build script that lays the tables out and the
//! lookups that read them: both sides must agree bit for bit.

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// The bits of a table slot that hold a token's rank plus one; the rest hold the hash's low
/// bits, so that a lookup compares bytes only when those agree.
pub(crate) const RANK_BITS: u32 = 18;

/// A 64-bit hash of `bytes`: eight bytes at a time, multiplied and folded. Short inputs are
/// read with overlapping loads (no copy into a buffer): most pieces of text are a few bytes.
#[inline]
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let mut h = (n as u64).wrapping_mul(K);
    if n <= 8 {
        let word = if n >= 4 {
            u64::from(le32(bytes, 0)) | (u64::from(le32(bytes, n - 4)) << 32)
        } else if n > 0 {
            u64::from(bytes[0]) | (u64::from(bytes[n / 2]) << 8) | (u64::from(bytes[n - 1]) << 16)
        } else {
            0
        };
        h = (h ^ word).wrapping_mul(K);
    } else {
        let mut at = 0;
        while at + 8 < n {
            h = (h ^ le64(bytes, at)).wrapping_mul(K);
            h ^= h >> 32;
            at += 8;
        }
        // The last eight bytes, overlapping the previous word when `n` is not a multiple.
        h = (h ^ le64(bytes, n - 8)).wrapping_mul(K);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

#[inline]
fn le32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

#[inline]
fn le64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}
