//! The byte scan every reader and writer of strings shares: where a run of plain string bytes
//! ends, eight bytes at a time.

/// The bytes of `word` (little-endian) that end a run of plain string bytes, `"`, `\` or a
/// control character, each marked by its high bit. Eight bytes at a time is what keeps strings
/// cheap to validate. Bytes above a marked byte may be marked spuriously (a borrow carries up),
/// never those below: the lowest mark is exact.
#[inline]
pub(crate) fn string_specials(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    (below_space
        | zero_bytes(word ^ (ONES * b'"' as u64))
        | zero_bytes(word ^ (ONES * b'\\' as u64)))
        & HIGHS
}

/// The index of the first byte from `pos` on that ends a run of plain string bytes (`"`, `\`
/// or a control character), or the length of `bytes`: where a writer must escape, or a reader
/// look closer. Eight bytes at a time while none of them does.
///
/// # Examples
///
/// ```
/// assert_eq!(parrot_json::string_stop(b"plain text, then \"", 0), 17);
/// assert_eq!(parrot_json::string_stop(b"a\nb", 0), 1);
/// assert_eq!(parrot_json::string_stop(b"nothing to escape", 3), 17);
/// ```
#[inline]
pub fn string_stop(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let specials = string_specials(u64::from_le_bytes(word));
        if specials != 0 {
            return pos + specials.trailing_zeros() as usize / 8;
        }
        pos += 8;
    }
    while let Some(&byte) = bytes.get(pos) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            break;
        }
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_stop_finds_the_first_quote_backslash_or_control() {
        let pieces: [&[u8]; 8] = [
            b"a",
            b"\"",
            b"\\",
            b"\n",
            b"\x1f",
            b" ",
            "\u{e9}".as_bytes(),
            b"~",
        ];
        let mut state = 7u64;
        for _ in 0..20_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (state >> 59) as usize;
            let mut bytes = Vec::new();
            for i in 0..len {
                let piece = (state >> (i % 16 * 3)) as usize % pieces.len();
                // Mostly plain bytes, so the eight-byte steps are taken.
                bytes.extend_from_slice(if i % 5 == 4 { pieces[piece] } else { b"x" });
            }
            for from in 0..=bytes.len() {
                let naive = bytes[from..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .map_or(bytes.len(), |at| from + at);
                assert_eq!(string_stop(&bytes, from), naive, "{bytes:?} from {from}");
            }
        }
    }
}
