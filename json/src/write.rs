//! Where the writers put their text, and the compact copy of a checked value.

use crate::scan::string_stop;

/// Where the writers put JSON text: a `String` or a `Vec<u8>` (UTF-8 either way).
///
/// Every writer of the crate takes `&mut impl Output`, so a codec that builds its output as
/// bytes and one that builds a `String` call the same functions.
pub trait Output {
    /// Appends `text`.
    fn push_str(&mut self, text: &str);

    /// Appends one ASCII byte (a bracket, a quote, a digit).
    fn push_ascii(&mut self, byte: u8);
}

impl Output for String {
    #[inline]
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }

    #[inline]
    fn push_ascii(&mut self, byte: u8) {
        debug_assert!(byte.is_ascii());
        self.push(char::from(byte));
    }
}

impl Output for Vec<u8> {
    #[inline]
    fn push_str(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }

    #[inline]
    fn push_ascii(&mut self, byte: u8) {
        debug_assert!(byte.is_ascii());
        self.push(byte);
    }
}

/// Copies a checked JSON value (one the [`crate::Reader`] accepted, such as a slice
/// [`crate::Reader::skip_value`] returned) into `out` without insignificant whitespace; every
/// other byte is kept as written.
///
/// # Examples
///
/// ```
/// let mut out = String::new();
/// parrot_json::write_compact("{ \"a b\" : [ 1.50 , \"\\u00e9\" ] }", &mut out);
/// assert_eq!(out, r#"{"a b":[1.50,"\u00e9"]}"#);
/// ```
pub fn write_compact<O: Output + ?Sized>(value: &str, out: &mut O) {
    let bytes = value.as_bytes();
    let mut i = 0;
    let mut run_start = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => {
                // Whitespace is ASCII: both ends of the run are character boundaries.
                out.push_str(value.get(run_start..i).unwrap_or_default());
                i += 1;
                run_start = i;
            }
            b'"' => {
                i += 1;
                loop {
                    i = string_stop(bytes, i);
                    match bytes.get(i) {
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') => i += 2,
                        // A control character: not in a checked string.
                        Some(_) => i += 1,
                        None => break,
                    }
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(value.get(run_start..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_compact_drops_whitespace_outside_strings_only() {
        let cases = [
            (
                "{ \"a b\" : [ 1 , \"\\\" x \" ] }",
                r#"{"a b":[1,"\" x "]}"#,
            ),
            ("\n[\t1,\r\n2 ]\n", "[1,2]"),
            ("\"é 😀\\\\\"", "\"é 😀\\\\\""),
            ("12.50", "12.50"),
        ];
        for (value, expected) in cases {
            let mut out = Vec::new();
            write_compact(value, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }
}
