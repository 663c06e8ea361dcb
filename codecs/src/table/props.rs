//! Property tests: generated tables of every shape the codec reads, and hostile variants of
//! them, each left unchanged or restored byte for byte.

use parrot_codec_api::{Codec, Level, Outcome, Payload};

use super::Table;

/// A seeded xorshift generator: the same inputs on every run.
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

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Words a cell may hold: plain, numeric, unicode, quotes, tabs, lookalikes of the note.
const WORDS: &[&str] = &[
    "root",
    "amd64",
    "1.2.3",
    "x",
    "-rw-r--r--",
    "Jul",
    "17:58",
    "café",
    "日本語",
    "naïve",
    "a\"b",
    "[table:",
    "x;y]",
    "1,",
    "0",
    "12345678",
    "a\tb",
    "é",
    "--",
    "::",
    "\u{200b}",
    "\\",
    "columns,",
    "🦀",
    "?",
    "S<Ll",
    "\"",
    "]",
    "2=9,",
];

/// Free text a row may end with: words with spaces, indentation, nothing, lookalikes.
const FREE: &[&str] = &[
    "blocking.rs",
    "add and remove users and groups",
    "  indented code",
    "",
    "name -> target",
    "a  b   c",
    "trailing  ",
    "[table: 3 columns, padding collapsed to one space]",
    "with\ttab",
    "ünïcödé text",
    "x",
    "C:\\Program Files\\x y",
    " ",
    "line 3 below is not a row",
];

/// Lines that are not rows: titles, totals, notices, lines that look like rows or notes.
const OTHER: &[&str] = &[
    "total 48",
    "/src/path with spaces:",
    "[notice] A new release of pip is available",
    "a b c d e f g h",
    "[table: 2 columns, padding collapsed to one space]",
    "   indented title",
    "\t",
    "x",
    "Desired=Unknown/Install/Remove/Purge/Hold",
    "+++-=====-=====",
];

fn word(rng: &mut Rng) -> String {
    if rng.chance(50) {
        return rng.pick(WORDS).to_owned();
    }
    let len = 1 + rng.below(10);
    let digits = rng.chance(50);
    (0..len)
        .map(|_| {
            let base = if digits { b'0' } else { b'a' };
            char::from(base + rng.below(10) as u8)
        })
        .collect()
}

/// The shape of a generated table.
struct Shape {
    right: Vec<bool>,
    free: bool,
    gap: usize,
    extra: Vec<usize>,
    constant: Vec<Option<String>>,
}

impl Shape {
    fn new(rng: &mut Rng) -> Shape {
        let free = rng.chance(75);
        let fixed = 1 + rng.below(6) + usize::from(!free);
        Shape {
            right: (0..fixed).map(|_| rng.chance(35)).collect(),
            free,
            gap: [1, 1, 1, 2, 3][rng.below(5)],
            extra: (0..fixed)
                .map(|_| if rng.chance(15) { 1 + rng.below(4) } else { 0 })
                .collect(),
            constant: (0..fixed)
                .map(|_| rng.chance(25).then(|| word(rng)))
                .collect(),
        }
    }

    fn row(&self, rng: &mut Rng) -> (Vec<String>, String) {
        let cells = (0..self.right.len())
            .map(|i| self.constant[i].clone().unwrap_or_else(|| word(rng)))
            .collect();
        let free = if self.free {
            rng.pick(FREE).to_owned()
        } else {
            String::new()
        };
        (cells, free)
    }

    /// The rows written as a padding tool writes them: each column as wide as its widest
    /// cell (plus its extra), `gap` spaces apart.
    fn render(&self, rows: &[(Vec<String>, String)]) -> Vec<String> {
        let width = |i: usize| {
            let widest = rows
                .iter()
                .map(|r| r.0[i].chars().count())
                .max()
                .unwrap_or(0);
            widest + self.extra[i]
        };
        let widths: Vec<usize> = (0..self.right.len()).map(width).collect();
        rows.iter()
            .map(|(cells, free)| {
                let mut line = String::new();
                for (i, cell) in cells.iter().enumerate() {
                    if i > 0 {
                        line.push_str(&" ".repeat(self.gap));
                    }
                    let pad = " ".repeat(widths[i] - cell.chars().count());
                    let last = i + 1 == cells.len() && !self.free;
                    match (self.right[i], last) {
                        (true, _) => line.push_str(&format!("{pad}{cell}")),
                        (false, true) => line.push_str(cell),
                        (false, false) => line.push_str(&format!("{cell}{pad}")),
                    }
                }
                if self.free {
                    line.push_str(&" ".repeat(self.gap));
                    line.push_str(free);
                }
                line
            })
            .collect()
    }
}

/// A generated table: sections of rows under titles, other lines around, line breaks of
/// either kind, a final one or not.
fn table(rng: &mut Rng) -> String {
    let shape = Shape::new(rng);
    let mut lines: Vec<String> = Vec::new();
    if rng.chance(20) {
        lines.push(rng.pick(OTHER).to_owned());
    }
    let sections = if rng.chance(30) { 2 + rng.below(3) } else { 1 };
    for section in 0..sections {
        if section > 0 {
            lines.push(String::new());
        }
        if sections > 1 || rng.chance(20) {
            lines.push(format!("/src/dir{section}:"));
            lines.push(format!("total {}", rng.below(500)));
        }
        let mut rows: Vec<_> = (0..1 + rng.below(30)).map(|_| shape.row(rng)).collect();
        if rng.chance(30) {
            let header = rows[0].0.iter().map(|c| c.to_uppercase()).collect();
            if rng.chance(50) {
                // A rule under the header, as wide as each column's header.
                let rule = rows[0]
                    .0
                    .iter()
                    .map(|c| "-".repeat(c.chars().count()))
                    .collect();
                rows.insert(0, (rule, "----".to_owned()));
            }
            rows.insert(0, (header, "NAME".to_owned()));
        }
        lines.extend(shape.render(&rows));
    }
    if rng.chance(20) {
        lines.push(rng.pick(OTHER).to_owned());
    }
    let crlf = rng.below(4);
    let mut text = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            // Mostly LF; sometimes all CRLF, sometimes mixed.
            let cr = crlf == 1 || (crlf == 2 && rng.chance(50));
            text.push_str(if cr { "\r\n" } else { "\n" });
        }
        text.push_str(line);
    }
    if rng.chance(70) {
        text.push('\n');
    }
    text
}

/// `text` with one hostile change: padding added or removed, a space made a tab, a
/// character dropped, trailing spaces, a line that looks like a row or a note.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return text.to_owned();
    }
    let at = rng.below(chars.len());
    let (head, tail): (String, String) =
        (chars[..at].iter().collect(), chars[at..].iter().collect());
    match rng.below(7) {
        0 => format!("{head}  {tail}"),
        1 => format!("{head}{}", tail.replacen(' ', "\t", 1)),
        2 => format!("{head}{}", tail.chars().skip(1).collect::<String>()),
        3 => format!("{head}{}", tail.replacen('\n', "   \n", 1)),
        4 => format!(
            "{head}{}",
            tail.replacen('\n', &format!("\n{}\n", rng.pick(OTHER)), 1)
        ),
        5 => format!("{head}{}", tail.replacen("  ", " ", 1)),
        _ => format!("{head}{}", tail.replacen('\n', "\r\n", 1)),
    }
}

/// Unchanged, or lossless, strictly smaller and expanding back to `input`; and the output
/// compressed again is unchanged or expands back to it. Returns whether it changed.
#[track_caller]
fn holds(input: &str) -> bool {
    let outcome = Table
        .compress(Payload::text_only(input), Level::Minimal)
        .unwrap();
    let Outcome::Changed { payload, lossy } = outcome else {
        return false;
    };
    assert!(!lossy, "lossy on {input:?}");
    assert!(payload.len() < input.len(), "not smaller on {input:?}");
    assert_eq!(
        Table.expand(&payload).as_deref(),
        Ok(input),
        "output:\n{payload}"
    );
    let again = Table
        .compress(Payload::text_only(&payload), Level::Minimal)
        .unwrap();
    if let Outcome::Changed { payload: twice, .. } = again {
        assert_eq!(Table.expand(&twice).as_deref(), Ok(payload.as_str()));
    }
    true
}

#[test]
fn generated_tables_round_trip_or_pass_through() {
    let mut rng = Rng(0x5eed_7ab1e);
    let mut changed = 0;
    const TABLES: usize = 3000;
    for _ in 0..TABLES {
        changed += usize::from(holds(&table(&mut rng)));
    }
    // The generator must make the codec act, or the property says little.
    assert!(
        changed * 3 > TABLES,
        "only {changed} of {TABLES} tables changed"
    );
}

#[test]
fn hostile_variants_round_trip_or_pass_through() {
    let mut rng = Rng(0x0dd_ba11);
    let mut changed = 0;
    const TABLES: usize = 2000;
    for _ in 0..TABLES {
        let mut text = table(&mut rng);
        for _ in 0..1 + rng.below(3) {
            text = mutate(&mut rng, &text);
        }
        changed += usize::from(holds(&text));
    }
    assert!(
        changed * 5 > TABLES,
        "only {changed} of {TABLES} variants changed"
    );
}

#[test]
fn very_long_lines_and_wide_tables_round_trip_or_pass_through() {
    let mut rng = Rng(0xb16_7ab1e);
    for _ in 0..50 {
        let shape = Shape {
            right: (0..30).map(|_| rng.chance(40)).collect(),
            free: true,
            gap: 1,
            extra: vec![0; 30],
            constant: vec![None; 30],
        };
        let mut rows: Vec<_> = (0..20).map(|_| shape.row(&mut rng)).collect();
        rows[3].1 = "y".repeat(100_000);
        rows[5].0[2] = "z".repeat(5000);
        holds(&shape.render(&rows).join("\n"));
    }
}

#[test]
fn a_cut_of_generated_tables_keeps_the_rules_and_never_panics() {
    let mut rng = Rng(0x5EED_0048);
    let mut cut_outputs = 0;
    for _ in 0..300 {
        let input = table(&mut rng);
        let Outcome::Changed {
            payload: output, ..
        } = Table
            .compress(Payload::text_only(&input), Level::Minimal)
            .unwrap()
        else {
            continue;
        };
        cut_outputs += 1;
        let original = Payload::text_only(&input);
        crate::cut::check::assert_cuts_hold(&input, &output, ("row", "rows"), |text, room| {
            Table.cut(original, text, room)
        });
    }
    assert!(cut_outputs >= 100, "{cut_outputs} outputs");
}
