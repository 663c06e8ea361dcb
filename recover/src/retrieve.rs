use std::borrow::Cow;
use std::cell::Cell;
use std::fmt::Write as _;

use parrot_host::{Namespace, TokenCounter, counted};
use regex::Regex;
use serde_json::{Map, Value, json};

use crate::{RECOVERY_TOOL, RetrieveError};

/// 2^64, the least integer a `u64` cannot hold.
const TWO_TO_THE_64: f64 = 18_446_744_073_709_551_616.0;

/// The definition of [`RECOVERY_TOOL`], as an MCP `tools/list` shows it: the key, and every
/// selector with examples (see [`Selector`]). The MCP proxy lists it as it is; `serve` gives
/// its description and schema in each LLM API's format.
///
/// # Examples
///
/// ```
/// let tool = parrot_recover::recovery_tool_definition();
/// assert_eq!(tool["name"], parrot_recover::RECOVERY_TOOL);
/// assert_eq!(tool["inputSchema"]["required"], serde_json::json!(["key"]));
/// ```
pub fn recovery_tool_definition() -> Value {
    json!({
        "name": RECOVERY_TOOL,
        "description": format!(
            "Returns the original of a tool result that was shortened for you, or the part of \
             it you need. Pass the key of the result's \"_tee\" pointer, and optionally \
             selectors: lines or grep (with context) for text, pointer and/or rows for JSON, \
             max_chars with any. The answer's first line names the key and the selectors; a \
             result cut to size ends with \"[more: {RECOVERY_TOOL} {{...}}]\", the exact \
             arguments that return the next part. Without selectors, an original over 25,000 \
             tokens returns its first part with an outline (lines, top-level members, array \
             lengths)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "key": {
                    "type": "string",
                    "description": "The \"key\" of a \"_tee\" pointer.",
                    "examples": ["__tee__:read_text_file:1a2b3c4d:1"]
                },
                "lines": {
                    "type": "string",
                    "description": "Lines of a text original, 1-based and inclusive, as \
                        the markers of a shortened log name them (\"lines 118-1330\"): \
                        \"A-B\", \"-N\" for the last N, \"A-\" from A to the end, \"A\" \
                        for one line. Returned exactly as written. Combines with grep.",
                    "examples": ["118-1330", "-50", "4000-", "17"]
                },
                "grep": {
                    "type": "string",
                    "description": "A regular expression (Rust regex syntax); returns each \
                        matching line as \"N:line\" with its 1-based number, context lines \
                        as \"N-line\", groups separated by \"--\". Within lines, if given.",
                    "examples": ["^error", "(?i)panicked|failed", "E0308"]
                },
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "With grep: lines to show before and after each match \
                        (default 0).",
                    "examples": [3]
                },
                "pointer": {
                    "type": "string",
                    "description": "An RFC 6901 JSON Pointer into a JSON original; returns \
                        the value there as written. Array indices are 0-based; \"~1\" \
                        stands for \"/\" and \"~0\" for \"~\" in a member name. With \
                        rows: the array whose rows to return.",
                    "examples": ["/rows/17", "/items/3/title", "/data/a~1b"]
                },
                "rows": {
                    "type": "string",
                    "description": "Elements of the array that was tabulated or cut \
                        (0-based, inclusive: \"40-59\", \"-10\" for the last 10, \"40-\"), \
                        returned as the same compressed table the shortened result used. \
                        The array is the one at pointer; without it, the original itself \
                        when it is an array, else its member \"rows\", else its longest \
                        array member.",
                    "examples": ["40-59", "-10", "100-"]
                },
                "max_chars": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "The most characters to return; a longer result is cut \
                        on a line or row boundary and ends with the arguments of the next \
                        part. 0: as much as one answer holds (200,000 characters unless \
                        the proxy is configured otherwise). Without it, results are held \
                        to 25,000 tokens.",
                    "examples": [4000]
                }
            },
            "required": ["key"],
            "additionalProperties": false
        }
    })
}

/// The names of a recovery call's arguments, in the order the header writes them.
pub const ARGUMENTS: [&str; 7] = [
    "key",
    "lines",
    "grep",
    "context",
    "pointer",
    "rows",
    "max_chars",
];

/// Which part of a stored original to return: every member optional (see the
/// [crate documentation](crate) for what each selects and which combine).
///
/// # Examples
///
/// ```
/// use parrot_recover::Selector;
///
/// let selector = Selector {
///     grep: Some("^error".into()),
///     context: Some(2),
///     ..Selector::default()
/// };
/// assert_eq!(selector.to_arguments("k"), r#"{"key":"k","grep":"^error","context":2}"#);
/// assert_eq!(selector.to_flags("k"), "recover k --grep '^error' --context 2");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    /// A line range: `"A-B"`, `"-N"` (the last N), `"A-"` (A to the end), `"A"`; 1-based.
    pub lines: Option<String>,
    /// A regular expression; the matching lines are returned with their numbers.
    pub grep: Option<String>,
    /// Lines of context around each `grep` match.
    pub context: Option<usize>,
    /// An RFC 6901 JSON Pointer into a JSON original.
    pub pointer: Option<String>,
    /// A range of the elements of the tabulated array, 0-based: `"40-59"`, `"-10"`, `"40-"`.
    pub rows: Option<String>,
    /// The most characters of the body; `0`: no limit, not even the default.
    pub max_chars: Option<usize>,
}

impl Selector {
    /// No selector: the whole original (held to the default size).
    pub fn is_empty(&self) -> bool {
        *self == Selector::default()
    }

    /// The key and the selector of a recovery call's arguments (`wm_get_result`'s `arguments`
    /// object): `key` a string; `lines`, `grep`, `pointer`, `rows` strings (a number is taken
    /// as its text for `lines` and `rows`); `context` and `max_chars` non-negative integers.
    ///
    /// # Errors
    ///
    /// [`RetrieveError::Selector`] naming the argument: an unknown member, a missing key, a
    /// value of the wrong type.
    ///
    /// # Examples
    ///
    /// ```
    /// use parrot_recover::Selector;
    ///
    /// let args = serde_json::json!({"key": "k", "lines": "-50"});
    /// let (key, selector) = Selector::from_arguments(args.as_object().unwrap()).unwrap();
    /// assert_eq!((key.as_str(), selector.lines.as_deref()), ("k", Some("-50")));
    ///
    /// let bad = serde_json::json!({"key": "k", "line": "1-2"});
    /// let err = Selector::from_arguments(bad.as_object().unwrap()).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "selector \"line\": unknown (known: key, lines, grep, context, pointer, rows, max_chars)"
    /// );
    /// ```
    pub fn from_arguments(
        arguments: &Map<String, Value>,
    ) -> Result<(String, Selector), RetrieveError> {
        if let Some(unknown) = arguments.keys().find(|k| !ARGUMENTS.contains(&k.as_str())) {
            return Err(bad(
                unknown,
                format!("unknown (known: {})", ARGUMENTS.join(", ")),
            ));
        }
        let key = match arguments.get("key") {
            Some(Value::String(key)) => key.clone(),
            Some(other) => return Err(bad("key", format!("expected a string, got {other}"))),
            None => return Err(bad("key", "missing: the key of a \"_tee\" pointer")),
        };
        let text = |name: &str, numbers: bool| -> Result<Option<String>, RetrieveError> {
            match arguments.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(Value::Number(n)) if numbers => Ok(Some(n.to_string())),
                Some(other) => Err(bad(name, format!("expected a string, got {other}"))),
            }
        };
        let count = |name: &str| -> Result<Option<usize>, RetrieveError> {
            match arguments.get(name) {
                None | Some(Value::Null) => Ok(None),
                // An integer of 2^64 or more (serde_json reads it as a float) saturates, as
                // every sum of a selector's numbers does.
                Some(Value::Number(n)) => match n
                    .as_u64()
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                    .or_else(|| {
                        n.as_f64()
                            .filter(|f| *f >= TWO_TO_THE_64)
                            .map(|_| usize::MAX)
                    }) {
                    Some(n) => Ok(Some(n)),
                    None => Err(bad(
                        name,
                        format!("expected a non-negative integer, got {n}"),
                    )),
                },
                Some(other) => Err(bad(
                    name,
                    format!("expected a non-negative integer, got {other}"),
                )),
            }
        };
        let selector = Selector {
            lines: text("lines", true)?,
            grep: text("grep", false)?,
            context: count("context")?,
            pointer: text("pointer", false)?,
            rows: text("rows", true)?,
            max_chars: count("max_chars")?,
        };
        Ok((key, selector))
    }

    /// The recovery call's arguments for `key` and this selector, as one line of JSON in the
    /// order of [`ARGUMENTS`].
    pub fn to_arguments(&self, key: &str) -> String {
        let mut arguments = Map::new();
        arguments.insert("key".into(), Value::from(key));
        let mut put = |name: &str, value: Option<Value>| {
            if let Some(value) = value {
                arguments.insert(name.into(), value);
            }
        };
        put("lines", self.lines.clone().map(Value::from));
        put("grep", self.grep.clone().map(Value::from));
        put("context", self.context.map(Value::from));
        put("pointer", self.pointer.clone().map(Value::from));
        put("rows", self.rows.clone().map(Value::from));
        put("max_chars", self.max_chars.map(Value::from));
        Value::Object(arguments).to_string()
    }

    /// The `recover` command's arguments for `key` and this selector, quoted for a POSIX shell
    /// where needed.
    pub fn to_flags(&self, key: &str) -> String {
        self.flags_in(None, key)
    }

    /// [`Selector::to_flags`] for an original in `namespace`: `recover --namespace NS KEY …`.
    fn flags_in(&self, namespace: Option<&Namespace>, key: &str) -> String {
        let mut flags = recover_command(namespace, key);
        let mut put = |flag: &str, value: Option<String>| {
            if let Some(value) = value {
                let _ = write!(flags, " --{flag} {}", quote(&value));
            }
        };
        put("lines", self.lines.clone());
        put("grep", self.grep.clone());
        put("context", self.context.map(|n| n.to_string()));
        put("pointer", self.pointer.clone());
        put("rows", self.rows.clone());
        put("max-chars", self.max_chars.map(|n| n.to_string()));
        flags
    }
}

/// `recover KEY`, or `recover --namespace NS KEY` for an original in a namespace.
fn recover_command(namespace: Option<&Namespace>, key: &str) -> String {
    match namespace {
        Some(namespace) => format!("recover --namespace {namespace} {}", quote(key)),
        None => format!("recover {}", quote(key)),
    }
}

/// `text` as one word of a POSIX shell.
fn quote(text: &str) -> Cow<'_, str> {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-:./,=+@%".contains(&b));
    if plain {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("'{}'", text.replace('\'', r"'\''")))
    }
}

fn bad(selector: &str, message: impl Into<String>) -> RetrieveError {
    RetrieveError::Selector {
        selector: selector.to_owned(),
        message: message.into(),
    }
}

/// What a recovery call returns: the header, the lines that describe the body, the body, and
/// the selector of the next part when the result was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retrieval {
    /// The key the original is stored under.
    pub key: String,
    /// The namespace the key is in (`None`: unscoped), which the `recover` command's
    /// continuation and the cap's note name.
    pub namespace: Option<Namespace>,
    /// The selector asked.
    pub selector: Selector,
    /// The `[outline …]` and `[rows …]` lines, without their brackets.
    pub notes: Vec<String>,
    /// The selected part.
    pub body: String,
    /// The selector that returns the next part, when the body was cut.
    pub next: Option<Selector>,
}

impl Retrieval {
    /// The header line, without its newline.
    pub fn header(&self) -> String {
        format!(
            "[{RECOVERY_TOOL} {}]",
            self.selector.to_arguments(&self.key)
        )
    }

    /// The whole result as `wm_get_result` returns it, the continuation written as the tool's
    /// arguments.
    pub fn text(&self) -> String {
        self.render(
            self.next
                .as_ref()
                .map(|next| format!("{RECOVERY_TOOL} {}", next.to_arguments(&self.key))),
        )
    }

    /// The whole result as the `recover` command prints it, the continuation written as the
    /// command's arguments.
    pub fn command_text(&self) -> String {
        self.render(self.next.as_ref().map(|next| {
            format!(
                "parrot-compress {}",
                next.flags_in(self.namespace.as_ref(), &self.key)
            )
        }))
    }

    fn render(&self, more: Option<String>) -> String {
        let mut out = String::with_capacity(self.body.len() + 256);
        out.push_str(&self.header());
        out.push('\n');
        for note in &self.notes {
            let _ = writeln!(out, "[{note}]");
        }
        out.push_str(&self.body);
        if let Some(more) = more {
            if !self.body.is_empty() && !self.body.ends_with('\n') {
                out.push('\n');
            }
            let _ = writeln!(out, "[more: {more}]");
        }
        out
    }
}

/// How big a part may be: at most `chars` characters and at most `tokens` tokens, each when
/// given (a proxy's cap on an answer sets `chars` beside the default's `tokens`).
#[derive(Clone, Copy)]
struct Limit<'c> {
    chars: Option<usize>,
    tokens: Option<(usize, &'c dyn TokenCounter)>,
    /// Set when `chars` is a proxy's cap, tighter than the selector asked, and refused a part:
    /// the answer then says it was capped.
    capped: Option<&'c Cell<bool>>,
}

/// The size of a part so far, in each measure its limit counts.
#[derive(Clone, Copy, Default)]
struct Size {
    chars: usize,
    tokens: usize,
}

impl Size {
    fn plus(self, other: Size) -> Size {
        Size {
            chars: self.chars.saturating_add(other.chars),
            tokens: self.tokens.saturating_add(other.tokens),
        }
    }
}

impl Limit<'_> {
    fn size(&self, text: &str) -> Size {
        Size {
            chars: self.chars.map_or(0, |_| text.chars().count()),
            tokens: self.tokens.map_or(0, |(_, counter)| counter.count(text)),
        }
    }

    /// Whether a part of `size` fits.
    fn fits(&self, size: Size) -> bool {
        let chars = self.chars.is_none_or(|max| size.chars <= max);
        if !chars {
            self.cap_refused();
        }
        chars && self.tokens.is_none_or(|(max, _)| size.tokens <= max)
    }

    fn cap_refused(&self) {
        if let Some(capped) = self.capped {
            capped.set(true);
        }
    }

    /// Whether `text` is over the limit, reading no more of it than the decision needs: a
    /// token is at least one byte and a character at least one byte, so a text of at most
    /// `max` bytes fits; for tokens, a prefix of `8 × max` bytes already over the limit
    /// decides without counting the rest (a token is rarely longer than 8 bytes).
    fn over(&self, text: &str) -> bool {
        if let Some(max) = self.chars
            && text.len() > max
            && text.chars().nth(max).is_some()
        {
            self.cap_refused();
            return true;
        }
        match self.tokens {
            Some((max, _)) if text.len() <= max => false,
            Some((max, counter)) => {
                let mut end = max.saturating_mul(8).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                counter.count(&text[..end]) > max || (end < text.len() && counter.count(text) > max)
            }
            None => false,
        }
    }

    /// `text` cut to fit, on a character boundary (by characters for a token limit too, at
    /// four per token: only one oversized line or row is ever cut this way).
    fn cut<'t>(&self, text: &'t str) -> &'t str {
        let by_tokens = self.tokens.map(|(max, _)| max.saturating_mul(4));
        let chars = match (self.chars, by_tokens) {
            (None, None) => return text,
            (Some(chars), None) | (None, Some(chars)) => chars,
            (Some(a), Some(b)) => a.min(b),
        };
        match text.char_indices().nth(chars) {
            Some((at, _)) => &text[..at],
            None => text,
        }
    }
}

/// What a retrieval needs besides the original: the default size, the tokenizer, and how the
/// tool's codec writes a table.
pub(crate) struct Retriever<'a> {
    /// The default size in tokens (0: none).
    pub(crate) limit_tokens: usize,
    /// The most characters of any body, whatever the selector asks (0: none): a proxy's cap
    /// on what a model, or a tool result that speaks to it, can ask for.
    pub(crate) cap_chars: usize,
    /// The namespace the original is stored in, for the retrieval to name.
    pub(crate) namespace: Option<&'a Namespace>,
    pub(crate) counter: &'a dyn TokenCounter,
    /// A JSON array of rows written as the tool's codec writes it losslessly, or `None` when
    /// no table is shorter than the array.
    pub(crate) table: &'a dyn Fn(&str) -> Option<String>,
}

impl Retriever<'_> {
    /// The part of `original` (stored under `key`) that `selector` selects.
    pub(crate) fn retrieve(
        &self,
        key: &str,
        original: &[u8],
        selector: &Selector,
    ) -> Result<Retrieval, RetrieveError> {
        check_combination(selector)?;
        let (chars, tokens) = match selector.max_chars {
            Some(0) => (None, None),
            Some(max) => (Some(max), None),
            None if self.limit_tokens == 0 => (None, None),
            None => (None, Some((self.limit_tokens, self.counter))),
        };
        // The cap applies where it is tighter than what was asked; it is not a second default:
        // a `max_chars` under it is the limit, as without a cap.
        let cap = (self.cap_chars > 0)
            .then_some(self.cap_chars)
            .filter(|&cap| chars.is_none_or(|asked| cap < asked));
        let capped = Cell::new(false);
        let limit = Limit {
            chars: cap.or(chars),
            tokens,
            capped: cap.map(|_| &capped),
        };
        let text = String::from_utf8_lossy(original);
        let mut retrieval = Retrieval {
            key: key.to_owned(),
            namespace: self.namespace.cloned(),
            selector: selector.clone(),
            notes: Vec::new(),
            body: String::new(),
            next: None,
        };
        if selector.pointer.is_some() || selector.rows.is_some() {
            self.json(&text, selector, limit, &mut retrieval)?;
        } else if selector.lines.is_some() || selector.grep.is_some() {
            lines(&text, selector, limit, &mut retrieval)?;
        } else {
            self.whole(&text, limit, &mut retrieval)?;
        }
        if capped.get() {
            let note = cap_note(self.cap_chars, &text, &retrieval);
            retrieval.notes.push(note);
        }
        Ok(retrieval)
    }

    /// No selector: the whole original, or its first part with an outline.
    fn whole(
        &self,
        text: &str,
        limit: Limit<'_>,
        out: &mut Retrieval,
    ) -> Result<(), RetrieveError> {
        if !limit.over(text) {
            out.body = text.to_owned();
            return Ok(());
        }
        if let Ok(root) = parrot_json::value_span(text)
            && let Some((pointer, array)) = main_array(text, root.start)
        {
            out.notes.push(json_outline(text, root.start));
            let rows = Selector {
                pointer: Some(pointer),
                rows: Some("0-".into()),
                ..out.selector.clone()
            };
            self.rows(text, &array, "0-", &rows, limit, out)?;
            return Ok(());
        }
        let all = split_lines(text);
        let selector = Selector {
            lines: Some("1-".into()),
            ..out.selector.clone()
        };
        let shown = take_lines(&all, 0, all.len(), limit, &selector, out);
        // Counted up to a megabyte (tens of milliseconds); past that, scaled from the part
        // shown.
        let tokens = if text.len() <= 1 << 20 {
            self.counter.count(text).to_string()
        } else {
            let part = self.counter.count(&out.body).max(1);
            format!(
                "about {}",
                text.len().saturating_mul(part) / out.body.len().max(1)
            )
        };
        out.notes.push(format!(
            "outline: {}, {} bytes, {tokens} tokens; lines 1-{shown} below",
            counted(all.len(), "line", "lines"),
            text.len(),
        ));
        Ok(())
    }

    /// `pointer` and `rows`.
    fn json(
        &self,
        text: &str,
        selector: &Selector,
        limit: Limit<'_>,
        out: &mut Retrieval,
    ) -> Result<(), RetrieveError> {
        let name = if selector.pointer.is_some() {
            "pointer"
        } else {
            "rows"
        };
        let root = parrot_json::value_span(text).map_err(|_| {
            bad(
                name,
                format!(
                    "the original is text, not JSON ({}): use lines or grep",
                    counted(split_lines(text).len(), "line", "lines")
                ),
            )
        })?;
        let (pointer, span) = match &selector.pointer {
            Some(pointer) => (pointer.clone(), resolve(text, root, pointer)?),
            None => {
                let (pointer, span) = main_array(text, root.start).ok_or_else(|| {
                    bad(
                        "rows",
                        "the original holds no array at its top level: give the pointer of one",
                    )
                })?;
                (pointer, span)
            }
        };
        let value = &text[span.clone()];
        if let Some(range) = &selector.rows {
            if !value.starts_with('[') {
                return Err(bad(
                    "rows",
                    format!("{} is {}, not an array", shown(&pointer), kind_of(value)),
                ));
            }
            let mut next = selector.clone();
            next.pointer = Some(pointer);
            return self.rows(text, &span, range, &next, limit, out);
        }
        if !limit.over(value) {
            out.body = value.to_owned();
            return Ok(());
        }
        if value.starts_with('[') {
            let mut next = selector.clone();
            next.rows = Some("0-".into());
            return self.rows(text, &span, "0-", &next, limit, out);
        }
        out.notes.push(format!(
            "{} is {} of {} bytes, over the size: {}",
            shown(&pointer),
            kind_of(value),
            value.len(),
            if value.starts_with('{') {
                format!(
                    "point at one of its members: {}",
                    member_list(text, span.start, &pointer)
                )
            } else {
                "cut below".to_owned()
            }
        ));
        out.body = limit.cut(value).to_owned();
        Ok(())
    }

    /// The rows `range` of the array at `array`, as a table; `asked` is the selector whose
    /// `rows` the continuation advances.
    fn rows(
        &self,
        text: &str,
        array: &parrot_json::Span,
        range: &str,
        asked: &Selector,
        limit: Limit<'_>,
        out: &mut Retrieval,
    ) -> Result<(), RetrieveError> {
        let elements = parrot_json::elements(text, array.start)
            .map_err(|err| bad("rows", format!("the array is not valid JSON: {err}")))?;
        let (first, end) = parse_range("rows", range, elements.len(), 0, ["element", "elements"])?;
        let render = |count: usize| -> String {
            let mut rows = String::from("[");
            for (i, span) in elements[first..first + count].iter().enumerate() {
                if i > 0 {
                    rows.push(',');
                }
                rows.push_str(&text[span.clone()]);
            }
            rows.push(']');
            match (self.table)(&rows) {
                Some(table) => table,
                None => {
                    let mut compact = String::with_capacity(rows.len());
                    parrot_json::write_compact(&rows, &mut compact);
                    compact
                }
            }
        };
        let wanted = end - first;
        let mut count = wanted;
        let mut body = render(count);
        if limit.over(&body) {
            // The most rows that fit, found by halving: a table's size grows with its rows.
            let (mut fits, mut over) = (0, count);
            while over - fits > 1 {
                let mid = fits + (over - fits) / 2;
                if !limit.over(&render(mid)) {
                    fits = mid;
                } else {
                    over = mid;
                }
            }
            count = fits.max(1);
            body = render(count);
            if fits == 0 {
                let pointer = asked.pointer.as_deref().unwrap_or_default();
                out.notes.push(format!(
                    "row {first} alone is over the size, cut below: its members are at {pointer}/{first}/…"
                ));
                body = limit.cut(&body).to_owned();
            }
        }
        let last = first + count - 1;
        let which = if first == last {
            format!("row {first}")
        } else {
            format!("rows {first}-{last}")
        };
        out.notes.push(format!(
            "{which} of {} at {}",
            elements.len(),
            shown(asked.pointer.as_deref().unwrap_or_default())
        ));
        if count < wanted {
            let mut next = asked.clone();
            next.rows = Some(if end == elements.len() {
                format!("{}-", last + 1)
            } else {
                format!("{}-{}", last + 1, end - 1)
            });
            out.next = Some(next);
        }
        if !body.ends_with('\n') {
            body.push('\n');
        }
        out.body = body;
        Ok(())
    }
}

/// The note of an answer the cap cut: the cap, the exact size of the part and of the original,
/// and where the rest is.
fn cap_note(cap: usize, text: &str, retrieval: &Retrieval) -> String {
    let asked = match retrieval.selector.max_chars {
        Some(0) => ", max_chars 0 included",
        Some(_) => ", a larger max_chars included",
        None => "",
    };
    let rest = if retrieval.next.is_some() {
        "the next part: the [more: …] line below"
    } else {
        "the rest of this part is not returned here"
    };
    format!(
        "capped: one answer here holds at most {cap} characters, whatever its selector asks{asked}; \
         the part below is {} characters of the original's {}; {rest}; the exact original, \
         uncapped: parrot-compress {}",
        retrieval.body.chars().count(),
        text.chars().count(),
        recover_command(retrieval.namespace.as_ref(), &retrieval.key),
    )
}

/// The pairs of selectors that do not combine.
fn check_combination(selector: &Selector) -> Result<(), RetrieveError> {
    let given = |value: bool, name: &'static str| value.then_some(name);
    let text = [
        given(selector.lines.is_some(), "lines"),
        given(selector.grep.is_some(), "grep"),
    ];
    let json = [
        given(selector.pointer.is_some(), "pointer"),
        given(selector.rows.is_some(), "rows"),
    ];
    if let (Some(Some(a)), Some(Some(b))) = (
        text.iter().find(|n| n.is_some()),
        json.iter().find(|n| n.is_some()),
    ) {
        return Err(bad(
            a,
            format!(
                "does not combine with {b} (these combine: lines+grep, grep+context, pointer+rows, max_chars with any)"
            ),
        ));
    }
    if selector.context.is_some() && selector.grep.is_none() {
        return Err(bad("context", "needs grep: the lines around each match"));
    }
    Ok(())
}

/// "there is 1 line", "there are 4 lines".
fn there_are(len: usize, item: &str, items: &str) -> String {
    let verb = if len == 1 { "is" } else { "are" };
    format!("there {verb} {}", counted(len, item, items))
}

/// A range `A-B`, `-N`, `A-` or `A` over `len` items numbered from `base`, as the half-open
/// range of indices `(first, end)`.
fn parse_range(
    name: &str,
    range: &str,
    len: usize,
    base: usize,
    [item, items]: [&str; 2],
) -> Result<(usize, usize), RetrieveError> {
    let malformed = || {
        bad(
            name,
            format!(
                "\"{range}\" is not a range: expected A-B, -N (the last N), A- (A to the end) or A, with whole numbers{}",
                if base == 1 { " from 1" } else { " from 0" }
            ),
        )
    };
    // A whole number too large for usize is past any end: saturated, it gets the message of
    // a bound past the end (or, for the last N, all there is).
    let number = |text: &str| -> Result<usize, RetrieveError> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed());
        }
        Ok(text.parse::<usize>().unwrap_or(usize::MAX))
    };
    let range = range.trim();
    let (first, last) = match range.split_once('-') {
        None => {
            let n = number(range)?;
            (n, Some(n))
        }
        Some(("", count)) => {
            let count = number(count)?;
            if count == 0 {
                return Err(malformed());
            }
            let first = len.saturating_sub(count) + base;
            (first, len.checked_sub(1).map(|last| last + base))
        }
        Some((first, "")) => (number(first)?, None),
        Some((first, last)) => (number(first)?, Some(number(last)?)),
    };
    if first < base {
        return Err(malformed());
    }
    if len == 0 {
        return Err(bad(
            name,
            format!("\"{range}\": the original has no {items}"),
        ));
    }
    let highest = len - 1 + base;
    if first > highest {
        return Err(bad(
            name,
            format!(
                "\"{range}\" starts past the end: {} ({base}-{highest})",
                there_are(len, item, items)
            ),
        ));
    }
    let last = match last {
        Some(last) if last < first => {
            return Err(bad(name, format!("\"{range}\" ends before it starts")));
        }
        Some(last) if last > highest => {
            return Err(bad(
                name,
                format!(
                    "\"{range}\" ends past the end: {} ({base}-{highest})",
                    there_are(len, item, items)
                ),
            ));
        }
        Some(last) => last,
        None => highest,
    };
    Ok((first - base, last - base + 1))
}

/// The lines of `text`, each with its line end.
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// A line without its line end.
fn content(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// `lines`, `grep` and `context`.
fn lines(
    text: &str,
    selector: &Selector,
    limit: Limit<'_>,
    out: &mut Retrieval,
) -> Result<(), RetrieveError> {
    let all = split_lines(text);
    let (first, end) = match &selector.lines {
        Some(range) => parse_range("lines", range, all.len(), 1, ["line", "lines"])?,
        None => (0, all.len()),
    };
    let Some(pattern) = &selector.grep else {
        take_lines(&all, first, end, limit, selector, out);
        return Ok(());
    };
    let regex = grep_regex(pattern)?;
    let context = selector.context.unwrap_or(0);
    let (groups, matched) = groups_of(&all[first..end], first, &regex, context);
    let count = matched.iter().filter(|&&m| m).count();
    out.notes.push(format!(
        "{} in lines {}-{}",
        counted(count, "matching line", "matching lines"),
        first + 1,
        end
    ));
    let mut used = Size::default();
    let mut taken = 0;
    for (g, &(from, to)) in groups.iter().enumerate() {
        for index in from..to {
            let mark = if matched[index - first] { ':' } else { '-' };
            let mut line = String::new();
            if g > 0 && index == from {
                line.push_str("--\n");
            }
            let _ = writeln!(line, "{}{mark}{}", index + 1, content(all[index]));
            let with = used.plus(limit.size(&line));
            if !limit.fits(with) {
                if taken == 0 {
                    out.body.push_str(limit.cut(&line));
                    let _ = writeln!(out.body, "\n[line {} cut: over the size]", index + 1);
                    continue_at(selector, index + 1, end, all.len(), out);
                } else {
                    continue_at(selector, index, end, all.len(), out);
                }
                return Ok(());
            }
            used = with;
            taken += 1;
            out.body.push_str(&line);
        }
    }
    Ok(())
}

/// The pattern of `grep` as a regular expression, or why it is not one.
fn grep_regex(pattern: &str) -> Result<Regex, RetrieveError> {
    Regex::new(pattern).map_err(|err| {
        // The regex crate's message spans lines (the pattern, a caret, the reason): its last
        // line is the reason.
        let message = err.to_string();
        let reason = message.lines().map(str::trim).rfind(|l| !l.is_empty());
        bad(
            "grep",
            format!(
                "\"{pattern}\" is not a valid regular expression: {}",
                reason.unwrap_or("invalid")
            ),
        )
    })
}

/// The groups of lines to show of `lines` (the text's lines from index `first`): half-open
/// ranges of indices into the text, each match with `context` lines either side, merged where
/// they overlap or touch; and which of `lines` matched.
fn groups_of(
    lines: &[&str],
    first: usize,
    regex: &Regex,
    context: usize,
) -> (Vec<(usize, usize)>, Vec<bool>) {
    let end = first + lines.len();
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut matched = vec![false; lines.len()];
    for (offset, line) in lines.iter().enumerate() {
        if !regex.is_match(content(line)) {
            continue;
        }
        matched[offset] = true;
        let index = first + offset;
        let from = index.saturating_sub(context).max(first);
        // Saturating: `context` is the caller's number, up to 2^64 − 1, and a sum that wraps
        // would end the group before its match.
        let to = index.saturating_add(context).saturating_add(1).min(end);
        match groups.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => groups.push((from, to)),
        }
    }
    (groups, matched)
}

/// Sets the continuation to the lines from index `next` to `end` (of `len`), with the rest of
/// `selector`; none when nothing is left.
fn continue_at(selector: &Selector, next: usize, end: usize, len: usize, out: &mut Retrieval) {
    if next >= end {
        return;
    }
    let mut following = selector.clone();
    following.lines = Some(if end == len {
        format!("{}-", next + 1)
    } else {
        format!("{}-{end}", next + 1)
    });
    out.next = Some(following);
}

/// The lines `first..end` of `all`, as many as fit; returns the number of the last line shown.
fn take_lines(
    all: &[&str],
    first: usize,
    end: usize,
    limit: Limit<'_>,
    selector: &Selector,
    out: &mut Retrieval,
) -> usize {
    let mut used = Size::default();
    for (index, line) in all.iter().enumerate().take(end).skip(first) {
        let with = used.plus(limit.size(line));
        if !limit.fits(with) {
            if index == first {
                out.body.push_str(limit.cut(line));
                out.body
                    .push_str(&format!("\n[line {} cut: over the size]\n", index + 1));
                continue_at(selector, index + 1, end, all.len(), out);
                return index + 1;
            }
            continue_at(selector, index, end, all.len(), out);
            return index;
        }
        used = with;
        out.body.push_str(line);
    }
    end
}

/// A pointer for messages: `/` for the root.
fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}

/// What kind of JSON value `value` (as written) is, with an article.
fn kind_of(value: &str) -> &'static str {
    match value.as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A member name as one reference token of a pointer (RFC 6901 §3).
fn escape_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The value `pointer` points at (RFC 6901) in the JSON value at `root`.
fn resolve(
    text: &str,
    root: parrot_json::Span,
    pointer: &str,
) -> Result<parrot_json::Span, RetrieveError> {
    if pointer.is_empty() {
        return Ok(root);
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(bad(
            "pointer",
            format!("\"{pointer}\" must be empty or start with \"/\" (RFC 6901), e.g. /rows/17"),
        ));
    };
    let mut span = root;
    let mut at = String::new();
    for raw in rest.split('/') {
        let token = unescape_token(raw).ok_or_else(|| {
            bad(
                "pointer",
                format!(
                    "\"{pointer}\": \"~\" must be followed by 0 or 1 (\"~0\" is ~, \"~1\" is /)"
                ),
            )
        })?;
        let value = &text[span.clone()];
        let here = if at.is_empty() {
            "the root"
        } else {
            at.as_str()
        };
        span = match value.as_bytes().first() {
            Some(b'{') => member(text, span.start, pointer, here, &token)?,
            Some(b'[') => element(text, span.start, pointer, here, &token)?,
            _ => {
                return Err(bad(
                    "pointer",
                    format!(
                        "\"{pointer}\": {here} is {}, not an object or array",
                        kind_of(value)
                    ),
                ));
            }
        };
        at.push('/');
        at.push_str(raw);
    }
    Ok(span)
}

/// The value of the member `token` of the object at `start` (`here` in `pointer`).
fn member(
    text: &str,
    start: usize,
    pointer: &str,
    here: &str,
    token: &str,
) -> Result<parrot_json::Span, RetrieveError> {
    let members = parrot_json::members(text, start)
        .map_err(|err| bad("pointer", format!("{here} is not valid JSON: {err}")))?;
    match members.iter().find(|m| m.name.is(token)) {
        Some(member) => Ok(member.value.clone()),
        None => Err(bad(
            "pointer",
            format!("\"{pointer}\": {here} has no member \"{token}\""),
        )),
    }
}

/// The element at index `token` of the array at `start` (`here` in `pointer`).
fn element(
    text: &str,
    start: usize,
    pointer: &str,
    here: &str,
    token: &str,
) -> Result<parrot_json::Span, RetrieveError> {
    let elements = parrot_json::elements(text, start)
        .map_err(|err| bad("pointer", format!("{here} is not valid JSON: {err}")))?;
    // An index too large for usize is past the end, as any index is that no array this size
    // could reach.
    let index = (!token.is_empty()
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0')))
    .then(|| token.parse::<usize>().unwrap_or(usize::MAX))
    .ok_or_else(|| {
        bad(
            "pointer",
            format!("\"{pointer}\": {here} is an array; \"{token}\" is not an index"),
        )
    })?;
    match elements.get(index) {
        Some(element) => Ok(element.clone()),
        None => Err(bad(
            "pointer",
            format!(
                "\"{pointer}\": index {token} is past the end of {here} ({})",
                counted(elements.len(), "element", "elements")
            ),
        )),
    }
}

/// A reference token's value: `~1` is `/`, `~0` is `~`; `None` for any other `~`.
fn unescape_token(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.contains('~') {
        return Some(Cow::Borrowed(raw));
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(Cow::Owned(out))
}

/// The array a table was made of, with its pointer: the value at `root` when it is an array;
/// else its member `rows` when that is an array; else its array member with the most elements.
fn main_array(text: &str, root: usize) -> Option<(String, parrot_json::Span)> {
    match text.as_bytes().get(root) {
        Some(b'[') => Some((String::new(), root..text.len())),
        Some(b'{') => {
            let members = parrot_json::members(text, root).ok()?;
            let arrays = members
                .iter()
                .filter(|m| text.as_bytes().get(m.value.start) == Some(&b'['));
            if let Some(rows) = arrays.clone().find(|m| m.name.is("rows")) {
                return Some(("/rows".into(), rows.value.clone()));
            }
            arrays
                .max_by_key(|m| parrot_json::elements(text, m.value.start).map_or(0, |e| e.len()))
                .map(|m| {
                    (
                        format!("/{}", escape_token(&m.name.decoded())),
                        m.value.clone(),
                    )
                })
        }
        _ => None,
    }
}

/// `outline: …` of the JSON value at `root`: its kind and size, and for an object its
/// members with each one's kind (and an array's length).
fn json_outline(text: &str, root: usize) -> String {
    let value = &text[root..];
    let lines = split_lines(text).len();
    let mut outline = format!(
        "outline: JSON, {} bytes, {}; ",
        text.len(),
        counted(lines, "line", "lines")
    );
    match value.as_bytes().first() {
        Some(b'[') => {
            let len = parrot_json::elements(text, root).map_or(0, |e| e.len());
            let _ = write!(outline, "an array of {len} elements");
        }
        Some(b'{') => {
            let _ = write!(outline, "an object: {}", member_list(text, root, ""));
        }
        _ => outline.push_str(kind_of(value)),
    }
    outline
}

/// The members of the object at `start` as pointers with their kinds (an array with its
/// length), at most 40 of them.
fn member_list(text: &str, start: usize, pointer: &str) -> String {
    const SHOWN: usize = 40;
    let Ok(members) = parrot_json::members(text, start) else {
        return String::new();
    };
    let mut list: Vec<String> = members
        .iter()
        .take(SHOWN)
        .map(|m| {
            let value = &text[m.value.clone()];
            let kind = if value.starts_with('[') {
                let len = parrot_json::elements(text, m.value.start).map_or(0, |e| e.len());
                format!("an array of {len}")
            } else {
                kind_of(value).to_owned()
            };
            format!("{pointer}/{} ({kind})", escape_token(&m.name.decoded()))
        })
        .collect();
    if members.len() > SHOWN {
        list.push(format!("… {} more", members.len() - SHOWN));
    }
    list.join(", ")
}

#[cfg(test)]
mod tests;
