//! Writing values as `orjson.dumps` writes them, byte for byte.
//!
//! orjson writes compact JSON: no space anywhere. A string escapes `"`, `\` and the control
//! characters below U+0020 (`\b \t \n \f \r` by name, the others as `\u00XX` in lowercase
//! hex) and nothing else: `/`, DEL, U+2028 and every non-ASCII character are raw UTF-8. An int
//! is its decimal digits. A float is written with the fewest digits that read back as it
//! ([`write_float`]).

use std::fmt::Write as _;

use parrot_json::RawStr;

use super::value::Value;

/// Writes `value` as orjson would.
pub(crate) fn write_value(out: &mut Vec<u8>, value: &Value<'_>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(int) => write_int(out, int.unsigned_abs(), *int < 0),
        Value::UInt(int) => write_int(out, *int, false),
        Value::Float(_, Some(text)) => out.extend_from_slice(text.as_bytes()),
        Value::Float(float, None) => write_float(out, *float),
        Value::Str(string) => write_string(out, string),
        Value::List(elements) => {
            out.push(b'[');
            for (at, element) in elements.iter().enumerate() {
                if at > 0 {
                    out.push(b',');
                }
                write_value(out, element);
            }
            out.push(b']');
        }
        Value::Dict(members) => {
            out.push(b'{');
            for (at, (name, value)) in members.iter().enumerate() {
                if at > 0 {
                    out.push(b',');
                }
                write_string(out, name);
                out.push(b':');
                write_value(out, value);
            }
            out.push(b'}');
        }
    }
}

/// Writes a string the reader checked. One without escapes is copied as written: the reader
/// refused raw control characters, so its text is already what orjson writes.
pub(crate) fn write_string(out: &mut Vec<u8>, string: &RawStr<'_>) {
    if !string.is_escaped() {
        out.extend_from_slice(string.raw().as_bytes());
        return;
    }
    parrot_json::write_string(&string.decoded(), out);
}

/// Writes an int: its magnitude in decimal, after a `-` when negative.
fn write_int(out: &mut Vec<u8>, magnitude: u64, negative: bool) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = magnitude;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        out.push(b'-');
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

/// Writes a finite float as orjson does.
///
/// The digits are the shortest that read back as the same float, the closest of them to its
/// value, the even one of two as close (the digits Python's `repr` shows too). With `e` the exponent of the first digit (`d.ddd × 10^e`), the form is fixed
/// for `-5 <= e < 16`, with `.0` after an integral value (`100000.0`, `0.00001`,
/// `9999999999999998.0`), and scientific otherwise: the mantissa without `.0` when it is one
/// digit, the exponent always signed and never padded (`1e+16`, `1.2345e+16`, `1e-6`,
/// `5e-324`). Zero is `0.0` or `-0.0`.
pub(crate) fn write_float(out: &mut Vec<u8>, float: f64) {
    if float.is_sign_negative() {
        out.push(b'-');
    }
    if float == 0.0 {
        out.extend_from_slice(b"0.0");
        return;
    }
    let float = float.abs();
    let mut shortest = Shortest::default();
    // Rust's `{:e}` writes the shortest round-trip digits: `1.2345e16`, `5e-324`.
    if write!(shortest, "{:e}", float).is_err() {
        return;
    }
    let (mut digits, mut exponent) = shortest.split();
    // Where two candidates of that length are equally close (`131237838911150.125` has
    // `…150.12` and `…150.13`), orjson takes the even one and `{:e}` may not. Both can read
    // back only with 16 or 17 digits; then the digits rounded half to even (as `{:.N$e}`
    // rounds) are the ones, when they read back (17 always do).
    if digits.len >= 16 {
        let mut rounded = Shortest::default();
        let written = write!(rounded, "{:.*e}", digits.len - 1, float).is_ok();
        if written && (digits.len == 17 || rounded.as_str().parse::<f64>() == Ok(float)) {
            (digits, exponent) = rounded.split();
        }
    }
    let digits = digits.as_slice();
    let count = digits.len() as i32;
    if (-5..16).contains(&exponent) {
        if exponent < 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-exponent - 1) as usize));
            out.extend_from_slice(digits);
        } else if count > exponent + 1 {
            let (whole, fraction) = digits.split_at((exponent + 1) as usize);
            out.extend_from_slice(whole);
            out.push(b'.');
            out.extend_from_slice(fraction);
        } else {
            out.extend_from_slice(digits);
            out.extend(std::iter::repeat_n(b'0', (exponent + 1 - count) as usize));
            out.extend_from_slice(b".0");
        }
    } else {
        let (first, rest) = digits.split_at(1);
        out.extend_from_slice(first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        out.push(b'e');
        out.push(if exponent < 0 { b'-' } else { b'+' });
        write_int(out, u64::from(exponent.unsigned_abs()), false);
    }
}

/// Whether the text of a float, as the reader read it, is what [`write_float`] writes for that
/// float, so that it can be copied: plain decimal notation with at most 15 significant digits,
/// none of them a trailing zero of the fraction but a lone `.0`, and at most four zeros between
/// the point and the first significant digit (`1234.56`, `-0.00012`, `100.0`, `0.0`).
///
/// Two decimals of at most 15 significant digits never read as the same float, so such a
/// text's digits are the shortest that read back as its float, and the only ones.
pub(crate) fn written_as_orjson(text: &str) -> bool {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let Some((whole, fraction)) = unsigned.split_once('.') else {
        return false;
    };
    if !fraction.bytes().all(|b| b.is_ascii_digit())
        || (fraction.len() > 1 && fraction.ends_with('0'))
    {
        return false;
    }
    let significant = if whole == "0" {
        let leading = fraction.len() - fraction.trim_start_matches('0').len();
        if leading == fraction.len() {
            // `0.0`: zero.
            return true;
        }
        if leading > 4 {
            return false;
        }
        fraction.len() - leading
    } else {
        whole.len() + fraction.len()
    };
    significant <= 15
}

/// The text of `{:e}` for a positive float, on the stack: at most 17 digits, a point, `e`,
/// a sign and three exponent digits.
#[derive(Default)]
struct Shortest {
    text: [u8; 32],
    len: usize,
}

impl std::fmt::Write for Shortest {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.text.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A float's significant digits (at most 17).
struct Digits {
    digits: [u8; 17],
    len: usize,
}

impl Digits {
    fn as_slice(&self) -> &[u8] {
        self.digits.get(..self.len).unwrap_or_default()
    }
}

impl Shortest {
    fn as_str(&self) -> &str {
        std::str::from_utf8(self.text.get(..self.len).unwrap_or_default()).unwrap_or_default()
    }

    /// The digits without the point, and the exponent.
    fn split(&self) -> (Digits, i32) {
        let text = self.text.get(..self.len).unwrap_or_default();
        let e = text.iter().position(|&b| b == b'e').unwrap_or(text.len());
        let (mantissa, exponent) = text.split_at(e);
        let mut digits = Digits {
            digits: [0; 17],
            len: 0,
        };
        for &b in mantissa.iter().filter(|b| b.is_ascii_digit()) {
            if let Some(slot) = digits.digits.get_mut(digits.len) {
                *slot = b;
                digits.len += 1;
            }
        }
        let exponent = std::str::from_utf8(exponent.get(1..).unwrap_or_default())
            .ok()
            .and_then(|e| e.parse().ok())
            .unwrap_or(0);
        (digits, exponent)
    }
}
