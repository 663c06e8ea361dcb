//! Envelopes: the wrappers a protocol puts around a tool's result, which the router `auto`
//! opens so that the texts inside are routed each on its own (CONTRACT §2.8).
//!
//! The host knows no protocol. An adapter that does registers its envelope with
//! [`crate::HostBuilder::envelope`]: `parrot-mcp`'s `ContentBlocks` opens an MCP
//! `tools/call` result (`{"content": [{"type": "text", "text": …}], …}`), and the command
//! registers it for every host it builds. A host without envelopes routes such a result as
//! the JSON object it is.

use std::ops::Range;

pub use parrot_json::Member;

/// A wrapper around a tool's result, opened by the router before it looks for a shape.
///
/// The router hands it every JSON object payload, with the object's top-level members read
/// once (by the stage's JSON check, or by the router): an envelope that looks only at the
/// members it needs costs nothing on the payloads that are not its own.
///
/// # Examples
///
/// ```
/// use std::ops::Range;
/// use parrot_host::{Envelope, Member, Opened};
///
/// /// `{"output": "…"}`: the text of `output` is routed on its own.
/// struct Output;
///
/// impl Envelope for Output {
///     fn name(&self) -> &str {
///         "output"
///     }
///
///     fn describe(&self) -> &str {
///         "the text of `output` routed as above"
///     }
///
///     fn open(&self, text: &str, members: &[Member<'_>]) -> Option<Opened> {
///         let [member] = members else { return None };
///         let value: Range<usize> = member.value.clone();
///         (member.name.is("output") && text[value.clone()].starts_with('"'))
///             .then(|| Opened::Texts(vec![value]))
///     }
/// }
/// ```
pub trait Envelope: Send + Sync + 'static {
    /// Its name: the first word of the route line (`mcp: block 1: …`) and of its line in
    /// [`crate::Host::explain`].
    fn name(&self) -> &str;

    /// What it does, for its line in [`crate::Host::explain`] after the name.
    fn describe(&self) -> &str;

    /// Opens `text`, a JSON object whose top-level members are `members` (each with its
    /// value's span in `text`). `None`: `text` is not this envelope, and the router goes on
    /// to the next envelope, then to the shapes.
    fn open(&self, text: &str, members: &[Member<'_>]) -> Option<Opened>;
}

/// What an envelope found inside a payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// The spans in the payload of JSON string literals (quotes included), in order and not
    /// overlapping: each literal's decoded text is routed on its own, and the payload is
    /// rebuilt with every byte outside them as it was. A span that is not a string literal is
    /// kept as it is, and the route says so.
    Texts(Vec<Range<usize>>),
    /// The result reports a failure: the payload passes through untouched (a failure is never
    /// compressed). The words say which, in the route line: `mcp: isError, passed through`.
    Failure(&'static str),
}
