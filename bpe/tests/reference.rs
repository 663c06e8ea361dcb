//! The counts and pieces against the reference implementation (bpe-openai), on the corpus, the
//! sample session, and generated texts made of the fragments where the patterns' alternatives
//! part ways.

use std::fs;
use std::path::{Path, PathBuf};

use parrot_bpe::{CL100K_BASE, Encoding, O200K_BASE};

fn reference(encoding: &Encoding) -> &'static bpe_openai::Tokenizer {
    match encoding.name() {
        "o200k_base" => bpe_openai::o200k_base(),
        _ => bpe_openai::cl100k_base(),
    }
}

/// Every text file of the corpus and the sample session.
fn real_texts() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut texts = Vec::new();
    let mut folders = vec![root.join("corpus"), root.join("samples")];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).expect("the corpus is in the repository") {
            let path = entry.expect("a readable folder").path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(text) = fs::read_to_string(&path) {
                texts.push((path, text));
            }
        }
    }
    assert!(texts.len() > 40, "found {} texts", texts.len());
    texts
}

/// Fragments whose neighbours change how a piece ends: letters of each case class (ASCII and
/// not), contractions (and `ſ`, which folds to `s`), digits of two scripts, every kind of
/// white space, symbols, control characters and marks.
const FRAGMENTS: &[&str] = &[
    "a",
    "Z",
    "abc",
    "ABC",
    "Hello",
    "é",
    "É",
    "ſ",
    "ǅ",
    "ʰ",
    "中文",
    "\u{301}",
    "'",
    "'s",
    "'S",
    "'re",
    "'RE",
    "'r",
    "'ll",
    "'l",
    "'ve",
    "'v",
    "'d",
    "'m",
    "'t",
    "'ſ",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\u{b}",
    "\u{c}",
    "\u{a0}",
    "\u{85}",
    "\u{3000}",
    "1",
    "12",
    "1234",
    "٣",
    "½",
    "{",
    "\"",
    ":",
    "/",
    "}",
    ",",
    "\u{0}",
    "\u{1f}",
    "\u{7f}",
    "—",
    "🙂",
    "<|endoftext|>",
    "_",
    "-",
    ".",
    "\\",
];

/// A seeded xorshift: the same texts on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn generated_texts(count: usize) -> Vec<String> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    (0..count)
        .map(|_| {
            let parts = 1 + rng.below(24);
            (0..parts)
                .map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())])
                .collect()
        })
        .collect()
}

fn assert_same_pieces(encoding: &Encoding, text: &str, what: &str) {
    let ours: Vec<&str> = encoding.pieces(text).collect();
    let theirs: Vec<&str> = reference(encoding).split(text).collect();
    assert_eq!(ours, theirs, "{}: pieces of {what}", encoding.name());
}

fn assert_same_count(encoding: &Encoding, text: &str, what: &str) {
    assert_eq!(
        encoding.count(text),
        reference(encoding).count(text),
        "{}: count of {what}",
        encoding.name()
    );
}

#[test]
fn pieces_and_counts_match_the_reference_on_the_corpus_and_the_session() {
    for (path, text) in real_texts() {
        let what = path.display().to_string();
        for encoding in [&O200K_BASE, &CL100K_BASE] {
            assert_same_pieces(encoding, &text, &what);
            assert_same_count(encoding, &text, &what);
        }
    }
}

#[test]
fn pieces_and_counts_match_the_reference_on_generated_texts() {
    for text in generated_texts(20_000) {
        let what = format!("{text:?}");
        for encoding in [&O200K_BASE, &CL100K_BASE] {
            assert_same_pieces(encoding, &text, &what);
            assert_same_count(encoding, &text, &what);
        }
    }
}

#[test]
fn every_token_of_the_vocabulary_counts_as_one() {
    for encoding in [&O200K_BASE, &CL100K_BASE] {
        let bpe = &reference(encoding).bpe;
        for id in 0..bpe.num_tokens() {
            let bytes = bpe.token_bytes(u32::try_from(id).expect("few tokens"));
            if let Ok(text) = std::str::from_utf8(bytes) {
                // A token is one piece of its own only where the pattern does not split it.
                if encoding.pieces(text).count() == 1 {
                    assert_eq!(
                        encoding.count(text),
                        1,
                        "{}: token {id} {text:?}",
                        encoding.name()
                    );
                }
            }
        }
    }
}

#[test]
fn long_pieces_count_as_the_reference_does() {
    // Runs of letters long enough for the heap merge, made of common syllables and rare
    // letters so that many pairs merge and some never do.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let syllables = [
        "ing", "tion", "qu", "x", "zz", "al", "er", "th", "e", "k", "ou", "y",
    ];
    for length in [65, 80, 200, 1000, 5000] {
        for _ in 0..8 {
            let mut word = String::new();
            while word.len() < length {
                word.push_str(syllables[rng.below(syllables.len())]);
            }
            for encoding in [&O200K_BASE, &CL100K_BASE] {
                assert_same_count(encoding, &word, &format!("a word of {} bytes", word.len()));
            }
        }
    }
}

/// A piece of up to twice `EXACT_PIECE_BYTES` is counted exactly; a longer run of letters (hex
/// letters, random lower-case letters: one piece each) is estimated within 1% of the exact
/// count, and a run of one token repeated exactly.
#[test]
fn long_pieces_are_exact_up_to_the_limit_and_estimated_closely_above_it() {
    use parrot_bpe::EXACT_PIECE_BYTES;
    let mut rng = Rng(0x5eed);
    let letters = |len: usize, alphabet: &[u8], rng: &mut Rng| -> String {
        (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())] as char)
            .collect()
    };
    let hex_letters = b"abcdef";
    let lower_letters = b"abcdefghijklmnopqrstuvwxyz";
    for encoding in [&O200K_BASE, &CL100K_BASE] {
        let at_limit = letters(2 * EXACT_PIECE_BYTES, lower_letters, &mut rng);
        assert_eq!(encoding.pieces(&at_limit).count(), 1);
        assert_same_count(encoding, &at_limit, "a run at the limit");
        for (what, alphabet) in [
            ("hex letters", &hex_letters[..]),
            ("lower-case letters", lower_letters),
        ] {
            let run = letters(20 * EXACT_PIECE_BYTES, alphabet, &mut rng);
            assert_eq!(encoding.pieces(&run).count(), 1, "{what}: one piece");
            let exact = reference(encoding).count(&run) as f64;
            let estimate = encoding.count(&run) as f64;
            assert!(
                (estimate - exact).abs() / exact < 0.01,
                "{}: {what}: estimate {estimate} against {exact}",
                encoding.name()
            );
        }
        let repeated = "a".repeat(50 * EXACT_PIECE_BYTES);
        assert_same_count(encoding, &repeated, "a repeated letter");
    }
}
