//! Byte-pair merging of one piece: the tokens a piece becomes, counted.
//!
//! The merge is the tokenizers' own: start from single bytes and, while some adjacent pair of
//! parts is a token, merge the pair whose token has the lowest rank (the leftmost of equal
//! ranks). Short pieces use a vector of parts scanned at each step (quadratic, and the fastest
//! for the few bytes most pieces have); long ones a heap of pairs over a linked list of parts,
//! so that a pathological piece (a long run of letters) costs `n log n`, not `n²`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::vocabulary::Vocabulary;

/// Pieces up to this many bytes merge by scanning; longer ones through the heap.
const SCAN_MAX: usize = 64;

/// `prev` of a part that was absorbed into the one before it: its heap entries are stale.
const DEAD: usize = usize::MAX - 1;

/// Reusable buffers for [`count_piece`], so that counting a text allocates once.
#[derive(Default)]
pub(crate) struct Scratch {
    parts: Vec<(usize, u32)>,
    next: Vec<usize>,
    prev: Vec<usize>,
    heap: BinaryHeap<Reverse<(u32, usize, usize)>>,
}

/// The number of tokens `piece` becomes.
#[inline]
pub(crate) fn count_piece(vocabulary: &Vocabulary, piece: &[u8], scratch: &mut Scratch) -> usize {
    if piece.len() <= 1 || vocabulary.rank(piece).is_some() {
        return piece.len().min(1);
    }
    if piece.len() <= SCAN_MAX {
        count_by_scan(vocabulary, piece, &mut scratch.parts)
    } else {
        count_by_heap(vocabulary, piece, scratch)
    }
}

fn count_by_scan(vocabulary: &Vocabulary, piece: &[u8], parts: &mut Vec<(usize, u32)>) -> usize {
    // `parts[i]`: where part `i` starts, and the rank of the token merging it with part `i + 1`
    // (`u32::MAX`: none). The last two entries are sentinels.
    parts.clear();
    let rank_of = |bytes: &[u8]| vocabulary.rank(bytes).unwrap_or(u32::MAX);
    for i in 0..piece.len() - 1 {
        parts.push((i, rank_of(&piece[i..i + 2])));
    }
    parts.push((piece.len() - 1, u32::MAX));
    parts.push((piece.len(), u32::MAX));
    loop {
        let mut min = (u32::MAX, 0);
        for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
            if rank < min.0 {
                min = (rank, i);
            }
        }
        if min.0 == u32::MAX {
            return parts.len() - 1;
        }
        let i = min.1;
        // Part `i` absorbs part `i + 1`: its pair now reaches one part further, and so does the
        // pair of the part before it.
        let merged = |parts: &[(usize, u32)], i: usize| {
            if i + 3 < parts.len() {
                rank_of(&piece[parts[i].0..parts[i + 3].0])
            } else {
                u32::MAX
            }
        };
        if i > 0 {
            parts[i - 1].1 = merged(parts, i - 1);
        }
        parts[i].1 = merged(parts, i);
        parts.remove(i + 1);
    }
}

fn count_by_heap(vocabulary: &Vocabulary, piece: &[u8], scratch: &mut Scratch) -> usize {
    let n = piece.len();
    // Parts are named by the byte they start at; `next[s]` is where the following part starts
    // (`n`: the end), `prev[s]` where the preceding one does (`usize::MAX`: none). A merge keeps
    // the left part's start, so a pair is named by its start and its end, and a heap entry
    // whose end no longer matches is stale.
    let Scratch {
        next, prev, heap, ..
    } = scratch;
    next.clear();
    next.extend(1..=n);
    prev.clear();
    prev.push(usize::MAX);
    prev.extend(0..n - 1);
    heap.clear();
    let end_of_pair = |next: &[usize], s: usize| {
        let second = next[s];
        if second < n { next[second] } else { usize::MAX }
    };
    for s in 0..n - 1 {
        if let Some(rank) = vocabulary.rank(&piece[s..s + 2]) {
            heap.push(Reverse((rank, s, s + 2)));
        }
    }
    let mut parts = n;
    while let Some(Reverse((_, s, end))) = heap.pop() {
        if prev[s] == DEAD || end_of_pair(next, s) != end {
            continue;
        }
        let absorbed = next[s];
        next[s] = next[absorbed];
        if next[s] < n {
            prev[next[s]] = s;
        }
        prev[absorbed] = DEAD;
        parts -= 1;
        for start in [s, prev[s]] {
            if start >= n {
                continue;
            }
            let end = end_of_pair(next, start);
            if end == usize::MAX {
                continue;
            }
            if let Some(rank) = vocabulary.rank(&piece[start..end]) {
                heap.push(Reverse((rank, start, end)));
            }
        }
    }
    parts
}
