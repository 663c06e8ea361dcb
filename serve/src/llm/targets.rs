//! Which strings of a body are tool results, per API, and which tool produced each.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use parrot_json::RawStr;

use super::RewriteError;
use super::tree::Node;

/// The members each API's rules read; every other member is checked and skipped.
pub(super) const ANTHROPIC_KEEP: &[&str] = &[
    "messages",
    "role",
    "content",
    "type",
    "id",
    "name",
    "tool_use_id",
    "is_error",
    "text",
];
pub(super) const CHAT_KEEP: &[&str] = &[
    "messages",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "id",
    "function",
    "custom",
    "name",
    "type",
    "text",
];
pub(super) const RESPONSES_KEEP: &[&str] = &["input", "type", "call_id", "name", "output", "text"];

/// One string of the body that holds a tool result's text.
#[derive(Debug)]
pub(super) struct Target<'a> {
    /// The string as written.
    pub(super) text: RawStr<'a>,
    /// Where its opening quote is.
    pub(super) at: usize,
    /// The tool that produced it; `None` when no call with its id precedes it.
    pub(super) tool: Option<Cow<'a, str>>,
    /// The result is marked as a tool error.
    pub(super) is_error: bool,
    /// Where it is, as [`super::Replaced::path`] writes it.
    pub(super) path: String,
}

/// A place in the body, rendered only when a message or a target needs it.
#[derive(Clone, Copy)]
enum Path<'p> {
    Body,
    Name(&'p Path<'p>, &'static str),
    Index(&'p Path<'p>, usize),
}

impl<'p> Path<'p> {
    fn name(&'p self, name: &'static str) -> Path<'p> {
        Path::Name(self, name)
    }

    fn index(&'p self, index: usize) -> Path<'p> {
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

fn shape(path: Path<'_>, expected: &'static str, found: &Node<'_>) -> RewriteError {
    RewriteError::Shape {
        path: path.to_string(),
        expected,
        found: found.kind(),
    }
}

/// Checks that a value is an object.
fn object(node: &Node<'_>, path: Path<'_>, expected: &'static str) -> Result<(), RewriteError> {
    match node {
        Node::Object(_) => Ok(()),
        other => Err(shape(path, expected, other)),
    }
}

/// Member `name` of an object; `null` counts as absent.
fn optional<'n, 'a>(node: &'n Node<'a>, name: &str) -> Option<&'n Node<'a>> {
    node.member(name)
        .filter(|value| !matches!(value, Node::Scalar("null")))
}

fn required<'n, 'a>(
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
fn string<'a>(
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
fn array<'n, 'a>(
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
struct Origin<'a> {
    tool: Option<Cow<'a, str>>,
    is_error: bool,
}

/// Adds the texts of a tool result's content at `path` to `targets`: the string itself, or the
/// `text` of each part of type `part` in an array (other parts are not text: images,
/// documents). `expected` says what the API allows there, for the error.
fn texts<'a>(
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

/// What a tool result's content may hold, per API: the type of its text parts, and what the
/// API allows there (for the error). Anthropic Messages:
const BLOCKS: (&str, &str) = ("text", "a string or an array of content blocks");
/// Chat Completions:
const PARTS: (&str, &str) = ("text", "a string or an array of content parts");
/// Responses:
const INPUT_PARTS: (&str, &str) = ("input_text", "a string or an array of content parts");

/// Tool names by call id, as the calls so far declared them.
type Calls<'a> = HashMap<Cow<'a, str>, Cow<'a, str>>;

/// Anthropic Messages: the `content` of each `tool_result` block of a `user` message, named by
/// the `tool_use` block of an earlier `assistant` message with the same id.
pub(super) fn anthropic<'a>(root: &Node<'a>) -> Result<Vec<Target<'a>>, RewriteError> {
    let body = Path::Body;
    object(root, body, "an object")?;
    let messages_path = body.name("messages");
    let messages = array(root, "messages", body, "an array of messages")?;
    let mut calls = Calls::new();
    let mut targets = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let path = messages_path.index(index);
        object(message, path, "a message (an object)")?;
        let role = string(message, "role", path)?;
        let blocks = match required(message, "content", path)? {
            Node::String(..) => continue,
            Node::Array(blocks) => blocks,
            other => {
                return Err(shape(path.name("content"), BLOCKS.1, other));
            }
        };
        let blocks_path = path.name("content");
        for (index, block) in blocks.iter().enumerate() {
            let path = blocks_path.index(index);
            object(block, path, "a content block (an object)")?;
            let kind = string(block, "type", path)?;
            match (role.as_ref(), kind.as_ref()) {
                ("assistant", "tool_use") => {
                    let id = string(block, "id", path)?;
                    calls.insert(id, string(block, "name", path)?);
                }
                ("user", "tool_result") => {
                    let id = string(block, "tool_use_id", path)?;
                    let is_error = match optional(block, "is_error") {
                        None | Some(Node::Scalar("false")) => false,
                        Some(Node::Scalar("true")) => true,
                        Some(other) => {
                            return Err(shape(path.name("is_error"), "true or false", other));
                        }
                    };
                    let Some(content) = optional(block, "content") else {
                        continue;
                    };
                    let tool = calls.get(&id).cloned();
                    texts(
                        content,
                        path.name("content"),
                        BLOCKS,
                        Origin { tool, is_error },
                        &mut targets,
                    )?;
                }
                _ => {}
            }
        }
    }
    Ok(targets)
}

/// OpenAI Chat Completions: the `content` of each `tool` message, named by the tool call of an
/// earlier `assistant` message with its `tool_call_id`.
pub(super) fn chat<'a>(root: &Node<'a>) -> Result<Vec<Target<'a>>, RewriteError> {
    let body = Path::Body;
    object(root, body, "an object")?;
    let messages_path = body.name("messages");
    let messages = array(root, "messages", body, "an array of messages")?;
    let mut calls = Calls::new();
    let mut targets = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let path = messages_path.index(index);
        object(message, path, "a message (an object)")?;
        match string(message, "role", path)?.as_ref() {
            "assistant" => {
                let Some(list) = optional(message, "tool_calls") else {
                    continue;
                };
                let Node::Array(list) = list else {
                    return Err(shape(
                        path.name("tool_calls"),
                        "an array of tool calls",
                        list,
                    ));
                };
                let list_path = path.name("tool_calls");
                for (index, call) in list.iter().enumerate() {
                    let path = list_path.index(index);
                    object(call, path, "a tool call (an object)")?;
                    let id = string(call, "id", path)?;
                    let (kind, function) =
                        match (optional(call, "function"), optional(call, "custom")) {
                            (Some(function), _) => ("function", function),
                            (None, Some(custom)) => ("custom", custom),
                            (None, None) => {
                                return Err(RewriteError::Missing {
                                    path: path.to_string(),
                                    member: "function",
                                });
                            }
                        };
                    let function_path = path.name(kind);
                    object(function, function_path, "an object")?;
                    calls.insert(id, string(function, "name", function_path)?);
                }
            }
            "tool" => {
                let id = string(message, "tool_call_id", path)?;
                let tool = calls.get(&id).cloned();
                texts(
                    required(message, "content", path)?,
                    path.name("content"),
                    PARTS,
                    Origin {
                        tool,
                        is_error: false,
                    },
                    &mut targets,
                )?;
            }
            _ => {}
        }
    }
    Ok(targets)
}

/// OpenAI Responses: the `output` of each `function_call_output` (and
/// `custom_tool_call_output`) item of `input`, named by the earlier `function_call` (or
/// `custom_tool_call`) item with its `call_id`.
pub(super) fn responses<'a>(root: &Node<'a>) -> Result<Vec<Target<'a>>, RewriteError> {
    let body = Path::Body;
    object(root, body, "an object")?;
    let items_path = body.name("input");
    let items = match optional(root, "input") {
        None | Some(Node::String(..)) => return Ok(Vec::new()),
        Some(Node::Array(items)) => items,
        Some(other) => {
            return Err(shape(
                items_path,
                "a string or an array of input items",
                other,
            ));
        }
    };
    let mut calls = Calls::new();
    let mut targets = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let path = items_path.index(index);
        object(item, path, "an input item (an object)")?;
        // A message may be given without its type.
        if optional(item, "type").is_none() {
            continue;
        }
        match string(item, "type", path)?.as_ref() {
            "function_call" | "custom_tool_call" => {
                let id = string(item, "call_id", path)?;
                calls.insert(id, string(item, "name", path)?);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let id = string(item, "call_id", path)?;
                let tool = calls.get(&id).cloned();
                texts(
                    required(item, "output", path)?,
                    path.name("output"),
                    INPUT_PARTS,
                    Origin {
                        tool,
                        is_error: false,
                    },
                    &mut targets,
                )?;
            }
            _ => {}
        }
    }
    Ok(targets)
}
