//! The question `json_nested` asks first: is the payload an array of flat rows with nothing
//! repeated? Then it writes nothing the other codecs do not (see "Only what the others cannot
//! do" in the module docs), and that is known from one pass that builds no tape.

use parrot_json::Reader;

use super::HashMap;
use super::tape::{Digest, FALSE_HASH, NULL_HASH, TRUE_HASH, number_hash, string_hash};

/// Whether `text` is an array whose elements are scalars or objects of scalars, in which no
/// two values of at least `min_bytes` (rows, and strings as written) have the same digest.
///
/// When it is, the whole reading would find no reference (equal values have equal digests)
/// and no table the others do not write, and leave the payload unchanged: so the answer is
/// that, without the tape. Anything else (a nested value, two digests alike, text that is not
/// JSON) is `false`, and the payload is read whole. A text that is not JSON, or holds a
/// duplicate or reserved name, may be `true`: it is left unchanged either way.
pub(super) fn unrepeated_flat_rows(text: &str, min_bytes: usize) -> bool {
    let mut reader = Reader::new(text);
    reader.skip_ws();
    if reader.peek() != Some(b'[') {
        return false;
    }
    reader.bump();
    if reader.empty_container(b']') {
        return true;
    }
    let mut seen: HashMap<u64, ()> = HashMap::default();
    let mut first = |(hash, size): (u32, usize)| {
        size < min_bytes
            || seen
                .insert(u64::from(hash) << 32 | size as u64, ())
                .is_none()
    };
    loop {
        let digest = if reader.peek() == Some(b'{') {
            reader.bump();
            row(&mut reader, &mut first)
        } else {
            scalar(&mut reader)
        };
        match digest {
            Some(digest) if first(digest) => {}
            _ => return false,
        }
        match reader.next_or_close(b']') {
            Ok(true) => {}
            Ok(false) => return reader.finish().is_ok(),
            Err(_) => return false,
        }
    }
}

/// The digest of the scalar at the cursor; `None` for a container or bad text.
fn scalar(reader: &mut Reader<'_>) -> Option<(u32, usize)> {
    match reader.peek()? {
        b'"' => {
            let string = reader.string().ok()?;
            Some((string_hash(string.content()), string.raw().len()))
        }
        b'n' => reader.literal().ok().map(|_| (NULL_HASH, 4)),
        b't' => reader.literal().ok().map(|_| (TRUE_HASH, 4)),
        b'f' => reader.literal().ok().map(|_| (FALSE_HASH, 5)),
        b'[' | b'{' => None,
        _ => {
            let number = reader.number().ok()?;
            Some((number_hash(number), number.len()))
        }
    }
}

/// The digest of the object of scalars whose `{` the cursor is past, each string member
/// offered to `first` (`false` from it, a nested value or bad text: `None`).
fn row(
    reader: &mut Reader<'_>,
    first: &mut impl FnMut((u32, usize)) -> bool,
) -> Option<(u32, usize)> {
    let mut digest = Digest::object();
    if reader.empty_container(b'}') {
        return Some(digest.finish());
    }
    loop {
        let name = reader.string().ok()?;
        reader.expect(b':').ok()?;
        reader.skip_ws();
        match reader.peek() {
            // A null member is left out of the output, and so of the digest.
            Some(b'n') => {
                reader.literal().ok()?;
            }
            Some(b'"') => {
                let (hash, size) = scalar(reader)?;
                if !first((hash, size)) {
                    return None;
                }
                digest.member(name.content(), hash, size);
            }
            _ => {
                let (hash, size) = scalar(reader)?;
                digest.member(name.content(), hash, size);
            }
        }
        if !reader.next_or_close(b'}').ok()? {
            return Some(digest.finish());
        }
    }
}
