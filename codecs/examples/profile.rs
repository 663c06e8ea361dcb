//! temporary profiling driver
use parrot_codec_api::{Codec, Level, Params, Payload};
use parrot_codecs::{Columnar, JsonCompact};
use std::fmt::Write as _;
/// xorshift64*: a fixed sequence, so every run measures the same bytes.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A database-style result: an array of flat rows (ids, names, a decimal, timestamps, a
/// mostly-null column, a constant column), written as Python's `json.dumps` writes it.
fn rows_payload(target_bytes: usize) -> String {
    const REGIONS: [&str; 4] = ["north", "south", "east", "west"];
    let mut rng = Seeded(0x5EED_5EED);
    let mut out = String::with_capacity(target_bytes + 512);
    out.push('[');
    let mut id = 0;
    while out.len() < target_bytes {
        if id > 0 {
            out.push_str(", ");
        }
        let notes = if rng.below(10) == 0 {
            format!(
                "\"follow up on ticket #{} — customer asked for a callback\"",
                rng.below(100_000)
            )
        } else {
            "null".to_owned()
        };
        let _ = write!(
            out,
            "{{\"id\": {id}, \"name\": \"user-{:05}\", \"email\": \"user{}@example.com\", \
             \"region\": \"{}\", \"active\": {}, \"score\": {}.{:02}, \"visits\": {}, \
             \"created_at\": \"2024-{:02}-{:02}T{:02}:{:02}:00Z\", \"notes\": {notes}, \
             \"source\": \"crm\"}}",
            rng.below(100_000),
            rng.below(1_000_000),
            REGIONS[rng.below(4) as usize],
            rng.below(2) == 0,
            rng.below(1000),
            rng.below(100),
            rng.below(10_000),
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
        );
        id += 1;
    }
    out.push(']');
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = match args.get(4) {
        Some(path) => std::fs::read_to_string(path).unwrap(),
        None => rows_payload(1_000_000),
    };
    let level: Level = args[2].parse().unwrap();
    let n: usize = args[3].parse().unwrap();
    let start = std::time::Instant::now();
    match args[1].as_str() {
        "jc" => {
            let c: JsonCompact = parrot_codec_api::build(Params::empty()).unwrap();
            for _ in 0..n {
                std::hint::black_box(c.compress(Payload::json(&text), level).unwrap());
            }
        }
        "col" => {
            let c: Columnar = parrot_codec_api::build(Params::empty()).unwrap();
            for _ in 0..n {
                std::hint::black_box(c.compress(Payload::json(&text), level).unwrap());
            }
        }
        _ => {
            for _ in 0..n {
                std::hint::black_box(serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok());
            }
        }
    }
    println!("{:?} per iteration", start.elapsed() / n as u32);
}
