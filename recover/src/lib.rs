//! parrot-recover: retrieval from the tee store of a [`parrot_host::Host`], so that an agent that
//! needs one failing section of a 200,000-token build log gets that section and not the whole
//! log. It owns the recovery tool `wm_get_result` that the MCP proxy and `serve` offer: its
//! [definition](recovery_tool_definition), its arguments ([`Selector`]), and what it returns
//! ([`Retrieval`]); the `recover` command prints the same retrievals.
//!
//! # Using it
//!
//! The entry points are methods on the host, from the extension trait [`Recover`]: a host
//! built as usual answers `recover_selected` (the command's retrieval) and `recover_for_model`
//! (a proxy's, held to a cap on one answer) once the trait is in scope. An extension trait,
//! not free functions, so that a call reads as it did when the methods were the host's own.
//! The host keeps what retrieval reads, each settable on its builder and readable on it: the
//! tee store, the exact original bytes ([`Host::recover`](parrot_host::Host::recover)), the
//! tokenizer, and the two sizes ([`parrot_host::HostBuilder::retrieval_limit_tokens`],
//! [`parrot_host::HostBuilder::recovery_max_chars`]).
//!
//! ```
//! use std::sync::Arc;
//! use parrot_host::{Host, MemoryTeeStore, TeeStore};
//! use parrot_recover::{Recover, Selector};
//!
//! let dir = std::env::temp_dir().join("parrot-doc-recover-crate");
//! std::fs::create_dir_all(&dir).unwrap();
//! let store = Arc::new(MemoryTeeStore::default());
//! store.put("k", b"compiling\nerror: boom\ndone\n").unwrap();
//! let host = Host::builder().project(&dir).plugin_path(None).tee_store(store).build().unwrap();
//!
//! let selector = Selector { grep: Some("^error".into()), ..Selector::default() };
//! let part = host.recover_selected("k", &selector).unwrap();
//! assert_eq!(part.body, "2:error: boom\n");
//! assert!(parrot_recover::is_retrieval(part.text().as_bytes()));
//! ```
//!
//! The tool's name, [`RECOVERY_TOOL`], and the check that a payload is a retrieval,
//! [`is_retrieval`], are re-exported from [`parrot_codec_api`], where they are spelled once:
//! codecs write the name in their markers, and the host must recognise a retrieval without
//! depending on this crate (it passes one through uncompressed).
//!
//! # Selectors
//!
//! Each is optional; a [`Selector`] with none asks for the whole original.
//!
//! | selector | value | returns |
//! |---|---|---|
//! | `lines` | `"118-1330"`, `"-50"` (the last 50), `"10-"` (10 to the end), `"7"` | those lines of a text original, exactly as written; 1-based and inclusive, as the log codec's markers (`lines A-B`) count them |
//! | `grep` | a regular expression (the `regex` crate's syntax) | every matching line as `N:line`, with `context` lines around it as `N-line`; overlapping or adjacent groups merge, and groups are separated by a line `--` |
//! | `context` | a number of lines (default 0) | with `grep` only |
//! | `pointer` | an RFC 6901 JSON Pointer: `/rows/17`, `/items/3/title`, `/a~1b` for the member `a/b`, `/a~0b` for `a~b` | the value it points at in a JSON original, exactly as written |
//! | `rows` | `"40-59"`, `"-10"`, `"40-"`, `"7"` | those elements of the array the codec tabulated (the one at `pointer`; without it the original itself when it is an array, else its member `rows`, else its longest array member), 0-based like the pointer's indices, written as the tool's codec writes a table losslessly (a TOON or `columnar` table), or as compact JSON where no table is shorter |
//! | `max_chars` | a number of characters (code points) | the body cut at that size on a line or row boundary; `0`: no limit at all |
//!
//! Combinations: `lines` + `grep` (grep within those lines), `grep` + `context`,
//! `pointer` + `rows` (rows of the array at the pointer), and `max_chars` with any. Any other
//! pair (`lines` with `pointer` or `rows`, `grep` with `pointer` or `rows`, `context` without
//! `grep`) is a one-line error naming both.
//!
//! Numbers are whole and unbounded in the arguments: one too large for a `usize` reads as the
//! largest (so a bound past the end is the error "past the end", the last N of them all there
//! is), and every sum of them saturates (a `context` of 2^64 − 1 shows the lines around a
//! match up to both ends).
//!
//! # Size
//!
//! Without `max_chars`, a result is held to a default size:
//! [`parrot_host::DEFAULT_LIMIT_TOKENS`] tokens (25,000 o200k tokens, the size Claude Code
//! refuses for one MCP result), configurable with
//! [`parrot_host::HostBuilder::retrieval_limit_tokens`]. Tokens are counted with the host's
//! tokenizer: line by line for lines (within a few tokens of counting the whole), a table
//! whole (the most rows that fit are found by halving), and whether a whole original fits from
//! a prefix of eight bytes a token, so a 100 MB original is not counted to learn that it does
//! not. Asked without any selector (or with `max_chars` alone), an original over the size
//! returns its first part after an outline line (line count, bytes, tokens; for JSON the
//! top-level members with each array's length), a JSON original's first part being the first
//! rows of its main array (as `rows` chooses it). A result cut at either limit ends with the
//! exact selector that returns the next part, and a part always holds at least one line or
//! row: a single line or row longer than the limit is itself cut, with a line saying so. A
//! value at `pointer` over the size comes back as rows when it is an array, else cut, with a
//! line listing its members' pointers.
//!
//! The `recover` command applies none of this when given no selector: it prints the exact
//! original bytes, as a file a person or a script asked for.
//!
//! # The result
//!
//! ```text
//! [wm_get_result {"key":"__tee__:ci:1a2b3c4d:1","lines":"4095-4105"}]
//! …the lines 4095 to 4105 of the original, exactly…
//! [more: wm_get_result {"key":"__tee__:ci:1a2b3c4d:1","lines":"4106-"}]
//! ```
//!
//! The first line is the header: the tool's name and the selector asked, as the tool's
//! arguments. Lines in brackets after it (`[outline …]`, `[rows …]`) describe the body; the
//! body follows; the last line, `[more: …]`, is there only when the result was cut. The
//! header is how a retrieval is recognised ([`is_retrieval`]): the pipeline passes such a
//! payload through untouched (reason `already_compressed`), so a retrieval sent back through
//! a pipeline or a second proxy is never compressed again.

#![forbid(unsafe_code)]

mod error;
mod host;
mod retrieve;

pub use error::RetrieveError;
pub use host::Recover;
pub use parrot_codec_api::{RECOVERY_TOOL, is_retrieval};
pub use retrieve::{ARGUMENTS, Retrieval, Selector, recovery_tool_definition};
