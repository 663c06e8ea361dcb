//! Lays each vocabulary out as one flat table, written to `OUT_DIR` and embedded with
//! `include_bytes!`, so that counting needs no start-up: the tokenizer's tables are read where
//! they lie in the binary instead of being deserialized (tens of milliseconds) when a process
//! first counts.
//!
//! The layout (every integer little-endian), read by `src/vocabulary.rs`:
//!
//! - `u32` the number of tokens `n`, `u32` the table's bits `b`;
//! - `n + 1` `u32` offsets: token `i` (its rank) is `bytes[offsets[i]..offsets[i + 1]]`;
//! - `2^b` `u32` slots, open addressing from `hash >> (64 - b)`: `0` is empty, otherwise the
//!   low [`RANK_BITS`] bits are the token's rank plus one and the rest the hash's low bits
//!   (a lookup compares bytes only when those agree);
//! - the tokens' bytes.

use std::env;
use std::fs;
use std::path::PathBuf;

#[path = "src/hash.rs"]
mod hash;

use hash::RANK_BITS;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, tokenizer) in [
        ("o200k_base", bpe_openai::o200k_base()),
        ("cl100k_base", bpe_openai::cl100k_base()),
    ] {
        let table = lay_out(&tokenizer.bpe);
        fs::write(out.join(format!("{name}.table")), table).expect("OUT_DIR is writable");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/hash.rs");
}

fn lay_out(bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding) -> Vec<u8> {
    let n = bpe.num_tokens();
    let tokens: Vec<&[u8]> = (0..n)
        .map(|id| bpe.token_bytes(u32::try_from(id).expect("fewer than 2^32 tokens")))
        .collect();
    assert!(
        n < (1 << RANK_BITS),
        "{n} tokens do not fit {RANK_BITS} bits"
    );
    // At most half full: most lookups end at their first slot, and the table (2 MB for
    // o200k_base) stays small enough to be cached.
    let mut bits = 1u32;
    while (1usize << bits) < n * 2 {
        bits += 1;
    }
    let mask = (1usize << bits) - 1;
    let mut slots = vec![0u32; 1 << bits];
    for (rank, token) in tokens.iter().enumerate() {
        let h = hash::hash(token);
        let mut at = (h >> (64 - bits)) as usize;
        while slots[at] != 0 {
            at = (at + 1) & mask;
        }
        slots[at] = (rank as u32 + 1) | ((h as u32) << RANK_BITS);
    }
    let mut table = Vec::new();
    table.extend_from_slice(
        &u32::try_from(n)
            .expect("fewer than 2^32 tokens")
            .to_le_bytes(),
    );
    table.extend_from_slice(&bits.to_le_bytes());
    let mut offset = 0u32;
    table.extend_from_slice(&offset.to_le_bytes());
    for token in &tokens {
        offset += u32::try_from(token.len()).expect("a token is short");
        table.extend_from_slice(&offset.to_le_bytes());
    }
    for slot in &slots {
        table.extend_from_slice(&slot.to_le_bytes());
    }
    for token in &tokens {
        table.extend_from_slice(token);
    }
    table
}
