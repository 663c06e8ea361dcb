//! What every API's rules use to find the tool results in a body ([`crate::api::LlmApi::targets`]):
//! the strings found, paths into the body, and the readers of members that name what was wrong
//! and where.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use parrot_json::RawStr;

use super::tree::Node;

/// Why a body is not rewritten: the caller sends it on as the client sent it. Each message
/// starts with where the problem is: a path into the body (`messages[3].content[1].content`),
/// or `body` for the body as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// The body is not UTF-8, so not JSON: `at` is the first byte that is not.
    #[error("body: not UTF-8 (at byte {at})")]
    NotUtf8 {
        /// The offset of the first invalid byte.
        at: usize,
    },
    /// The body is not JSON, or holds an object with a member named twice, or nests deeper
    /// than [`parrot_json::MAX_DEPTH`]: `path` is the value where reading stopped.
    #[error("{path}: {error}")]
    Json {
        /// Where reading stopped.
        path: String,
        /// What was wrong there (a syntax error names its byte offset in the body).
        error: parrot_json::Error,
    },
    /// A value the API's rules read is not of the type the API gives it.
    #[error("{path}: expected {expected}, found {found}")]
    Shape {
        /// The value.
        path: String,
        /// What the API has there.
        expected: &'static str,
        /// What the body has (`a number`, `null`, `an object`…).
        found: &'static str,
    },
    /// A member the API's rules read is missing.
    #[error("{path}: no \"{member}\" member")]
    Missing {
        /// The object without it.
        path: String,
        /// The member.
        member: &'static str,
    },
}

/// One string of the body that holds a tool result's text.
#[derive(Debug)]
pub(crate) struct Target<'a> {
    /// The string as written.
    pub(crate) text: RawStr<'a>,
    /// Where its opening quote is.
    pub(crate) at: usize,
    /// The tool that produced it; `None` when no call with its id precedes it.
    pub(crate) tool: Option<Cow<'a, str>>,
    /// The result is marked as a tool error.
    pub(crate) is_error: bool,
    /// Where it is, as [`crate::llm::Replaced::path`] writes it.
    pub(crate) path: String,
}

/// A place in the body, rendered only when a message or a target needs it.
#[derive(Clone, Copy)]
pub(crate) enum Path<'p> {
    Body,
    Name(&'p Path<'p>, &'static str),
    Index(&'p Path<'p>, usize),
}

impl<'p> Path<'p> {
    pub(crate) fn name(&'p self, name: &'static str) -> Path<'p> {
        Path::Name(self, name)
    }

    pub(crate) fn index(&'p self, index: usize) -> Path<'p> {
        Path::Index(self, index)
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Body => f.write_str("body"),
            Path::Name(Path::Body, name) => f.write_str(name),
            Path::Name(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

pub(crate) fn shape(path: Path<'_>, expected: &'static str, found: &Node<'_>) -> RewriteError {
    RewriteError::Shape {
        path: path.to_string(),
        expected,
        found: found.kind(),
    }
}

/// Checks that a value is an object.
pub(crate) fn object(
    node: &Node<'_>,
    path: Path<'_>,
    expected: &'static str,
) -> Result<(), RewriteError> {
    match node {
        Node::Object(_) => Ok(()),
        other => Err(shape(path, expected, other)),
    }
}

/// Member `name` of an object; `null` counts as absent.
pub(crate) fn optional<'n, 'a>(node: &'n Node<'a>, name: &str) -> Option<&'n Node<'a>> {
    node.member(name)
        .filter(|value| !matches!(value, Node::Scalar("null")))
}

pub(crate) fn required<'n, 'a>(
    node: &'n Node<'a>,
    name: &'static str,
    path: Path<'_>,
) -> Result<&'n Node<'a>, RewriteError> {
    node.member(name).ok_or_else(|| RewriteError::Missing {
        path: path.to_string(),
        member: name,
    })
}

/// The decoded string member `name` of an object.
pub(crate) fn string<'a>(
    node: &Node<'a>,
    name: &'static str,
    path: Path<'_>,
) -> Result<Cow<'a, str>, RewriteError> {
    let value = required(node, name, path)?;
    value
        .as_str()
        .ok_or_else(|| shape(path.name(name), "a string", value))
}

/// The elements of an array member `name`.
pub(crate) fn array<'n, 'a>(
    node: &'n Node<'a>,
    name: &'static str,
    path: Path<'_>,
    expected: &'static str,
) -> Result<&'n [Node<'a>], RewriteError> {
    match required(node, name, path)? {
        Node::Array(elements) => Ok(elements),
        other => Err(shape(path.name(name), expected, other)),
    }
}

/// What every text of one tool result shares.
pub(crate) struct Origin<'a> {
    pub(crate) tool: Option<Cow<'a, str>>,
    pub(crate) is_error: bool,
}

/// Adds the texts of a tool result's content at `path` to `targets`: the string itself, or the
/// `text` of each part of type `part` in an array (other parts are not text: images,
/// documents). `expected` says what the API allows there, for the error.
pub(crate) fn texts<'a>(
    content: &Node<'a>,
    path: Path<'_>,
    (part, expected): (&str, &'static str),
    origin: Origin<'a>,
    targets: &mut Vec<Target<'a>>,
) -> Result<(), RewriteError> {
    let mut found = |text: &RawStr<'a>, at: &usize, path: Path<'_>| {
        targets.push(Target {
            text: *text,
            at: *at,
            tool: origin.tool.clone(),
            is_error: origin.is_error,
            path: path.to_string(),
        });
    };
    match content {
        Node::String(text, at) => found(text, at, path),
        Node::Array(parts) => {
            for (index, element) in parts.iter().enumerate() {
                let path = path.index(index);
                object(element, path, "a content part (an object)")?;
                if string(element, "type", path)? != part {
                    continue;
                }
                match required(element, "text", path)? {
                    Node::String(text, at) => found(text, at, path.name("text")),
                    other => return Err(shape(path.name("text"), "a string", other)),
                }
            }
        }
        other => return Err(shape(path, expected, other)),
    }
    Ok(())
}

/// Tool names by call id, as the calls so far declared them.
pub(crate) type CallNames<'a> = HashMap<Cow<'a, str>, Cow<'a, str>>;
