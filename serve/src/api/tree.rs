//! The parts of a request body the rewrite looks at, read in one validating pass: objects keep
//! only the members the API's rules name, every string its exact span, everything else is
//! checked (syntax, depth, member names) and skipped.

use parrot_json::{Error, MAX_DEPTH, RawStr, Reader, all_distinct};

/// A value of the body, as far as the rewrite needs it.
#[derive(Debug)]
pub(crate) enum Node<'a> {
    /// An object: its members whose names the pass was told to keep, in order (every member
    /// was checked).
    Object(Vec<(RawStr<'a>, Node<'a>)>),
    /// An array: every element.
    Array(Vec<Node<'a>>),
    /// A string as written, and where its opening quote is.
    String(RawStr<'a>, usize),
    /// A number, `true`, `false` or `null`, as written.
    Scalar(&'a str),
}

impl<'a> Node<'a> {
    /// The member `name` (compared decoded) of an object.
    pub(crate) fn member(&self, name: &str) -> Option<&Node<'a>> {
        match self {
            Node::Object(members) => members
                .iter()
                .find(|(key, _)| key.is(name))
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// The decoded text of a string.
    pub(crate) fn as_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        match self {
            Node::String(raw, _) => Some(raw.decoded()),
            _ => None,
        }
    }

    /// What the value is, for a message: "a string", "an array", "null"…
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Object(_) => "an object",
            Node::Array(_) => "an array",
            Node::String(..) => "a string",
            Node::Scalar("null") => "null",
            Node::Scalar("true") => "true",
            Node::Scalar("false") => "false",
            Node::Scalar(_) => "a number",
        }
    }
}

/// Reads `text` whole, keeping in each object only the members named in `keep` (at any depth);
/// the others are checked and skipped. On failure, the error and the path of the value where
/// reading failed (`messages[3].content`; empty for the body itself).
pub(crate) fn read<'a>(text: &'a str, keep: &[&str]) -> Result<Node<'a>, (Error, String)> {
    let mut pass = Pass {
        reader: Reader::new(text),
        keep,
        path: Vec::new(),
    };
    pass.reader.skip_ws();
    let root = pass
        .value(0)
        .and_then(|root| pass.reader.finish().map(|()| root));
    root.map_err(|error| (error, path(&pass.path)))
}

/// One step of a path: a member's name or an element's index.
#[derive(Debug, Clone)]
enum Step<'a> {
    Name(RawStr<'a>),
    Index(usize),
}

/// A path as the error messages write it: `messages[3].content[1].content`.
fn path(steps: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Name(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&name.decoded());
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

struct Pass<'a, 'k> {
    reader: Reader<'a>,
    keep: &'k [&'k str],
    /// Where the cursor is: left as it was when reading fails, so that it names the place.
    path: Vec<Step<'a>>,
}

impl<'a> Pass<'a, '_> {
    /// The value at the cursor; `depth` is the nesting of its container (0 for the body), as
    /// [`Reader::skip_value`] counts it.
    fn value(&mut self, depth: usize) -> Result<Node<'a>, Error> {
        let at = self.reader.pos();
        let open = match self.reader.peek() {
            Some(b'"') => return Ok(Node::String(self.reader.string()?, at)),
            Some(open @ (b'[' | b'{')) => open,
            _ => return Ok(Node::Scalar(self.reader.scalar()?.unwrap_or_default())),
        };
        if depth >= MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        self.reader.bump();
        if open == b'[' {
            let mut elements = Vec::new();
            if self.reader.empty_container(b']') {
                return Ok(Node::Array(elements));
            }
            loop {
                self.path.push(Step::Index(elements.len()));
                elements.push(self.value(depth + 1)?);
                self.path.pop();
                if !self.reader.next_or_close(b']')? {
                    return Ok(Node::Array(elements));
                }
            }
        }
        let mut members = Vec::new();
        let mut names = Vec::new();
        if !self.reader.empty_container(b'}') {
            loop {
                let name = self.reader.string()?;
                self.reader.expect(b':')?;
                self.reader.skip_ws();
                self.path.push(Step::Name(name));
                if self.keep.iter().any(|kept| name.is(kept)) {
                    members.push((name, self.value(depth + 1)?));
                } else {
                    self.reader.skip_value(depth + 1)?;
                }
                self.path.pop();
                names.push(name);
                if !self.reader.next_or_close(b'}')? {
                    break;
                }
            }
        }
        if !all_distinct(&names) {
            return Err(Error::DuplicateName);
        }
        Ok(Node::Object(members))
    }
}
