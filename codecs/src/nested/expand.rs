//! The inverse of `json_nested`: tables back to arrays of objects (and objects of records),
//! references back to copies of the values they name. It reads the whole output into a tree:
//! an expansion is asked for once per retrieval, not on every call.

use std::borrow::Cow;

use parrot_codec_api::CodecError;
use parrot_json::{MAX_DEPTH, Str, Value};

use super::{MAX_EXPANDED_BYTES, MAX_EXPANSION, Step, pointer};

/// The expansion of `payload` (see [`super::JsonNested::expand`]).
pub(super) fn expand(payload: &str) -> Result<String, CodecError> {
    // A table nests its rows one level deeper than the array it stands for.
    let value = Value::parse_with_limit(payload, 2 * MAX_DEPTH + 2)
        .map_err(|err| invalid(format!("{err}")))?;
    let mut value = untable(value)?;
    let limit = payload
        .len()
        .saturating_mul(MAX_EXPANSION)
        .clamp(1 << 20, MAX_EXPANDED_BYTES);
    resolve(&mut value, limit)?;
    let mut out = String::with_capacity(payload.len() * 2);
    value.write(&mut out);
    Ok(out)
}

fn invalid(message: String) -> CodecError {
    CodecError::invalid_input(format!("json_nested cannot expand: {message}"))
}

/// The bytes a scalar takes in the output.
fn scalar_size(value: &Value<'_>) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(text) => text.len(),
        Value::String(string) => string.content().len() + 2,
        Value::Array(_) | Value::Object(_) => 0,
    }
}

/// Tables back to arrays of objects; references are left as they are, for [`resolve`].
fn untable<'a>(value: Value<'a>) -> Result<Value<'a>, CodecError> {
    match value {
        Value::Array(items) => Ok(Value::Array(
            items.into_iter().map(untable).collect::<Result<_, _>>()?,
        )),
        Value::Object(members) if members.iter().any(|(name, _)| name.is("_columns")) => {
            rows_of(members)
        }
        Value::Object(members) => Ok(Value::Object(
            members
                .into_iter()
                .map(|(name, value)| Ok((name, untable(value)?)))
                .collect::<Result<_, CodecError>>()?,
        )),
        scalar => Ok(scalar),
    }
}

/// The strings of a table's `_keys` or `_columns`.
fn strings<'a>(names: Vec<Value<'a>>, member: &str) -> Result<Vec<Str<'a>>, CodecError> {
    names
        .into_iter()
        .map(|name| match name {
            Value::String(name) => Ok(name),
            _ => Err(invalid(format!(
                "a table's {member} hold a value that is not a string"
            ))),
        })
        .collect()
}

/// The array a table stands for.
fn rows_of<'a>(members: Vec<(Str<'a>, Value<'a>)>) -> Result<Value<'a>, CodecError> {
    let mut columns = None;
    let mut constant = Vec::new();
    let mut rows = None;
    let mut keys = None;
    for (name, value) in members {
        match (name.decoded().as_ref(), value) {
            ("_keys", Value::Array(names)) => keys = Some(strings(names, "_keys")?),
            ("_columns", Value::Array(names)) => columns = Some(strings(names, "_columns")?),
            ("_constant", Value::Object(members)) => {
                constant = members
                    .into_iter()
                    .map(|(name, value)| Ok((name, untable(value)?)))
                    .collect::<Result<_, CodecError>>()?;
            }
            ("_rows", Value::Array(items)) => rows = Some(items),
            (other, _) => {
                return Err(invalid(format!(
                    "a table has a member {other:?} that is not _keys or _columns (arrays of strings), _constant (an object) or _rows (an array)"
                )));
            }
        }
    }
    let (Some(columns), Some(rows)) = (columns, rows) else {
        return Err(invalid("a table without _columns or _rows".to_owned()));
    };
    if let Some((name, _)) = constant
        .iter()
        .find(|(name, _)| columns.iter().any(|c| c.same_value(name)))
    {
        return Err(invalid(format!(
            "a table's _constant has {:?}, which is one of its _columns too",
            name.decoded()
        )));
    }
    let mut out = Vec::with_capacity(rows.len());
    for (r, row) in rows.into_iter().enumerate() {
        match row {
            Value::Array(cells) if cells.len() == columns.len() => {
                let mut members: Vec<(Str<'_>, Value<'_>)> =
                    Vec::with_capacity(columns.len() + constant.len());
                for (name, cell) in columns.iter().zip(cells) {
                    if !matches!(cell, Value::Null) {
                        members.push((name.clone(), untable(cell)?));
                    }
                }
                members.extend(constant.iter().cloned());
                out.push(Value::Object(members));
            }
            Value::Object(members) if members.iter().any(|(name, _)| name.is("$ref")) => {
                out.push(Value::Object(members));
            }
            _ => {
                return Err(invalid(format!(
                    "row {r} of a table is not an array of {} cells nor a reference",
                    columns.len()
                )));
            }
        }
    }
    match keys {
        None => Ok(Value::Array(out)),
        Some(keys) if keys.len() == out.len() => {
            Ok(Value::Object(keys.into_iter().zip(out).collect()))
        }
        Some(keys) => Err(invalid(format!(
            "a table has {} _keys for {} rows",
            keys.len(),
            out.len()
        ))),
    }
}

/// The target of a reference object: its pointer's steps.
fn reference(value: &Value<'_>) -> Option<Result<Vec<String>, CodecError>> {
    let Value::Object(members) = value else {
        return None;
    };
    let (_, target) = members.iter().find(|(name, _)| name.is("$ref"))?;
    let steps = match (members.len(), target) {
        (1, Value::String(target)) => match target.decoded().strip_prefix('#') {
            Some("") => Ok(Vec::new()),
            Some(pointer) if pointer.starts_with('/') => Ok(pointer[1..]
                .split('/')
                .map(|step| step.replace("~1", "/").replace("~0", "~"))
                .collect()),
            _ => Err(invalid(format!(
                "a reference to {:?}, not a JSON Pointer fragment",
                target.decoded()
            ))),
        },
        _ => Err(invalid(
            "a $ref member in an object that is not a reference".to_owned(),
        )),
    };
    Some(steps)
}

/// The value at `steps` in `root`.
fn lookup<'v, 'a>(root: &'v Value<'a>, steps: &[String]) -> Option<&'v Value<'a>> {
    let mut at = root;
    for step in steps {
        at = match at {
            Value::Object(members) => &members.iter().find(|(name, _)| name.is(step))?.1,
            Value::Array(items) => items.get(step.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

fn lookup_mut<'v, 'a>(root: &'v mut Value<'a>, path: &[Step<'_>]) -> Option<&'v mut Value<'a>> {
    let mut at = root;
    for step in path {
        at = match (at, step) {
            (Value::Object(members), Step::Name(name)) => {
                &mut members.iter_mut().find(|(n, _)| n.is(name))?.1
            }
            (Value::Array(items), Step::Index(index)) => items.get_mut(*index)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Every reference of `value`, in document order, with its path.
fn references<'a>(
    value: &Value<'a>,
    path: &mut Vec<Step<'static>>,
    out: &mut Vec<(Vec<Step<'static>>, Vec<String>)>,
) -> Result<(), CodecError> {
    if let Some(steps) = reference(value) {
        out.push((path.clone(), steps?));
        return Ok(());
    }
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(Step::Index(index));
                references(item, path, out)?;
                path.pop();
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                path.push(Step::Name(Cow::Owned(name.decoded().into_owned())));
                references(member, path, out)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether `value` holds a reference anywhere.
fn holds_reference(value: &Value<'_>) -> bool {
    reference(value).is_some()
        || match value {
            Value::Array(items) => items.iter().any(holds_reference),
            Value::Object(members) => members.iter().any(|(_, v)| holds_reference(v)),
            _ => false,
        }
}

/// The bytes `value` takes written compactly.
fn written_size(value: &Value<'_>) -> usize {
    match value {
        Value::Array(items) => {
            1 + items
                .iter()
                .map(|item| written_size(item) + 1)
                .sum::<usize>()
        }
        Value::Object(members) => {
            1 + members
                .iter()
                .map(|(name, value)| name.content().len() + 4 + written_size(value))
                .sum::<usize>()
        }
        scalar => scalar_size(scalar),
    }
}

/// Replaces every reference, in document order, by a copy of the value it names: that value
/// comes earlier in the document and its own references are replaced by then.
fn resolve(root: &mut Value<'_>, limit: usize) -> Result<(), CodecError> {
    let mut found = Vec::new();
    references(root, &mut Vec::new(), &mut found)?;
    let mut grown = 0usize;
    for (path, steps) in found {
        let target = lookup(root, &steps).ok_or_else(|| {
            invalid(format!(
                "a reference to #/{} names no value",
                steps.join("/")
            ))
        })?;
        if holds_reference(target) {
            return Err(invalid(format!(
                "the reference at #{} names #/{}, which is not an earlier value",
                pointer(&path).trim_start_matches('#'),
                steps.join("/")
            )));
        }
        grown = grown.saturating_add(written_size(target));
        if grown > limit {
            return Err(invalid(format!(
                "references would exceed {limit} bytes ({MAX_EXPANSION} times the payload, at most {MAX_EXPANDED_BYTES})"
            )));
        }
        let copy = target.clone();
        let slot =
            lookup_mut(root, &path).ok_or_else(|| invalid("a reference moved".to_owned()))?;
        *slot = copy;
    }
    Ok(())
}
