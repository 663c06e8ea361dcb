//! JSON numbers: the grammar, and an exact order by value.

use std::cmp::Ordering;

use crate::reader::Reader;

/// Whether `text` is exactly one JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`,
/// nothing around it).
///
/// # Examples
///
/// ```
/// assert!(parrot_json::is_number("-12.50e+3"));
/// assert!(!parrot_json::is_number("012"));
/// assert!(!parrot_json::is_number("1."));
/// assert!(!parrot_json::is_number(" 1"));
/// ```
pub fn is_number(text: &str) -> bool {
    let mut reader = Reader::new(text);
    reader.number().is_ok() && reader.pos() == text.len()
}

/// Compares two JSON numbers by value, exactly (no rounding through `f64`): `1` and `1.0` are
/// equal here, `10000000000000000000001` is greater than `10000000000000000000000`. Both must
/// be JSON numbers ([`is_number`]).
///
/// # Examples
///
/// ```
/// use std::cmp::Ordering;
/// use parrot_json::cmp_numbers;
///
/// assert_eq!(cmp_numbers("1", "1.0"), Ordering::Equal);
/// assert_eq!(cmp_numbers("1E400", "9e399"), Ordering::Greater);
/// assert_eq!(cmp_numbers("-2", "-1"), Ordering::Less);
/// ```
pub fn cmp_numbers(a: &str, b: &str) -> Ordering {
    // Integers (the common case) order by sign, then length (JSON integers have no leading
    // zeros), then digits.
    if let (Some((a_negative, a_digits)), Some((b_negative, b_digits))) = (integer(a), integer(b))
        && a_digits != "0"
        && b_digits != "0"
    {
        let magnitude = a_digits
            .len()
            .cmp(&b_digits.len())
            .then_with(|| a_digits.cmp(b_digits));
        return match (a_negative, b_negative) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        };
    }
    Number::parse(a).cmp(&Number::parse(b))
}

/// A JSON integer as its sign (negative) and digits.
fn integer(text: &str) -> Option<(bool, &str)> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then_some((text.starts_with('-'), digits))
}

/// A JSON number parsed once to be compared exactly by value many times (a running minimum,
/// say): `±0.DIGITS × 10^exponent`, where DIGITS (`int` then `frac`, borrowed from the text)
/// has no leading or trailing zeros. Its order is [`cmp_numbers`]'s.
///
/// ```
/// use std::cmp::Ordering;
/// use parrot_json::Number;
///
/// assert_eq!(Number::parse("1e1").cmp(&Number::parse("10.0")), Ordering::Equal);
/// assert_eq!(Number::parse("-0.5").cmp(&Number::parse("0")), Ordering::Less);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Number<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    exponent: i128,
}

impl Ord for Number<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) if other.negative => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, true) if self.negative => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => match (self.negative, other.negative) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => self.cmp_magnitude(other),
                (true, true) => other.cmp_magnitude(self),
            },
        }
    }
}

impl PartialOrd for Number<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Equal by value: `1`, `1.0` and `1e0` are one number.
impl PartialEq for Number<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Number<'_> {}

impl<'a> Number<'a> {
    /// Parses a number written as JSON writes it (checked by the caller: any other text gives
    /// some number, not an error).
    pub fn parse(text: &'a str) -> Number<'a> {
        let text = text.as_bytes();
        let (negative, text) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        let (mantissa, exp) = match text.iter().position(|&b| b == b'e' || b == b'E') {
            Some(at) => (&text[..at], &text[at + 1..]),
            None => (text, &b""[..]),
        };
        let (mut int, mut frac) = match mantissa.iter().position(|&b| b == b'.') {
            Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
            None => (mantissa, &b""[..]),
        };
        let (exp_negative, exp_digits) = match exp.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, exp),
        };
        // Exponents beyond any real payload saturate; they still order correctly.
        let mut exponent: i128 = 0;
        for d in exp_digits {
            exponent = (exponent * 10 + i128::from(d.wrapping_sub(b'0'))).min(1 << 100);
        }
        if exp_negative {
            exponent = -exponent;
        }
        exponent += int.len() as i128;
        while let Some((b'0', rest)) = int.split_first() {
            int = rest;
            exponent -= 1;
        }
        if int.is_empty() {
            while let Some((b'0', rest)) = frac.split_first() {
                frac = rest;
                exponent -= 1;
            }
        }
        while let Some((b'0', rest)) = frac.split_last() {
            frac = rest;
        }
        if frac.is_empty() {
            while let Some((b'0', rest)) = int.split_last() {
                int = rest;
            }
        }
        Number {
            negative,
            int,
            frac,
            exponent,
        }
    }

    fn is_zero(&self) -> bool {
        self.int.is_empty() && self.frac.is_empty()
    }

    fn cmp_magnitude(&self, other: &Number<'_>) -> Ordering {
        self.exponent.cmp(&other.exponent).then_with(|| {
            // The digits `int` then `frac` compare as one string; with integer parts of one
            // length (the usual case) that is the two parts compared in turn.
            if self.int.len() == other.int.len() {
                self.int
                    .cmp(other.int)
                    .then_with(|| self.frac.cmp(other.frac))
            } else {
                self.int
                    .iter()
                    .chain(self.frac)
                    .cmp(other.int.iter().chain(other.frac))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_exactly() {
        let cases = [
            ("1", "1.0", Ordering::Equal),
            ("0", "-0.0", Ordering::Equal),
            ("10", "1e1", Ordering::Equal),
            ("-1", "0", Ordering::Less),
            ("-2", "-1", Ordering::Less),
            ("0.5", "5e-1", Ordering::Equal),
            (
                "123456789012345678901",
                "123456789012345678900",
                Ordering::Greater,
            ),
            ("0.100000000000000000000000000001", "0.1", Ordering::Greater),
            ("1E400", "9e399", Ordering::Greater),
            ("0.001", "0.01", Ordering::Less),
        ];
        for (a, b, expected) in cases {
            assert_eq!(cmp_numbers(a, b), expected, "{a} vs {b}");
            assert_eq!(cmp_numbers(b, a), expected.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn the_number_grammar_is_json_s() {
        let cases = [
            ("0", true),
            ("-0", true),
            ("1000.0", true),
            ("1E5", true),
            ("1e-7", true),
            ("123456789012345678901234567890", true),
            ("", false),
            ("-", false),
            ("01", false),
            ("+1", false),
            (".5", false),
            ("1.", false),
            ("1e", false),
            ("1e+", false),
            ("0x1", false),
            ("1 ", false),
            ("NaN", false),
        ];
        for (text, number) in cases {
            assert_eq!(is_number(text), number, "{text:?}");
        }
    }
}
