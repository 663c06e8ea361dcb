//! A stdio proxy between an MCP client (an agent) and any MCP server: every `tools/call` result
//! the server sends goes through the pipeline before the client sees it, and the originals are
//! offered back through a tool of the proxy's own, [`RECOVERY_TOOL`](parrot_recover::RECOVERY_TOOL).
//!
//! The client starts the proxy instead of the server; the proxy starts the server as a child
//! process (its stderr inherited) and relays MCP JSON-RPC, one message per line, both ways. A
//! line the proxy does not change is relayed byte for byte, never re-serialized. It changes
//! only:
//!
//! - a server's response to `tools/call`: each `text` content block that holds JSON is run
//!   through [`parrot_host::Host::process`] with the called tool's name, and the payload the model
//!   should see replaces the block's text (a `_tee` pointer, when there is one, is inside that
//!   text).
//!   `structuredContent` stays valid against the tool's `outputSchema`: a top-level string
//!   member equal to a compressed block's original text (the filesystem server's
//!   `{"content": text}`) carries the compressed text; nothing else in it changes. Blocks that
//!   are not text or do not hold JSON pass through. A result with `isError: true` is not
//!   compressed: its text blocks are stored in the tee store (status `error`) and the message
//!   goes out unchanged. Results of [`RECOVERY_TOOL`](parrot_recover::RECOVERY_TOOL) are never compressed, nor is a text
//!   block that starts with a retrieval's header ([`parrot_recover::is_retrieval`]: a proxy behind
//!   this one answered it);
//! - a server's response to `tools/list` (the first page, asked without a cursor): the
//!   recovery tool is appended to `tools`;
//! - a client's `tools/call` of [`RECOVERY_TOOL`](parrot_recover::RECOVERY_TOOL): answered by the proxy from the tee store
//!   with one text block: a header line naming the key and the selectors, then the original
//!   or the part the selectors (`lines`, `grep`, `context`, `pointer`, `rows`, `max_chars`,
//!   see [`parrot_recover::Selector`]) choose, held to 25,000 tokens unless `max_chars` says otherwise
//!   and never over the cap on one answer whatever it says ([`parrot_recover::Recover::recover_for_model`],
//!   200,000 characters by default); or a tool error (`isError: true`) naming the unknown key or the bad selector. The call
//!   never reaches the server, except as below.
//!
//! Decisions:
//!
//! - **Whose originals.** [`Proxy::new`] stores under the plain keys, which every relay and
//!   `recover` of the same store reads; [`Proxy::in_namespace`] keeps a session's originals in a
//!   [`parrot_host::Namespace`] and answers its recovery calls from that namespace alone, so another
//!   session over the same store gets "no original is stored" for this one's keys.
//!   `parrot-compress mcp-proxy` gives every session a namespace of its own
//!   ([`parrot_host::Namespace::random`]) unless told `--namespace NAME`.
//! - **A server with its own `wm_get_result`.** The proxy's tool takes its place in
//!   `tools/list` (the pointers the proxy writes name it); a call whose key the proxy does not
//!   hold is forwarded to the server, so the server's own pointers still resolve.
//! - **Batches.** A JSON array from either side is handled element by element; a client batch
//!   holding recovery calls is forwarded at once without them, and the proxy answers them in an
//!   array of its own when they are answered.
//! - **No message waits for a long one.** Recovery calls are answered, and lines from the
//!   server at or over the router's size threshold compressed, on threads of the proxy's own
//!   while the reading threads go on relaying; a response may overtake one asked for before it,
//!   as JSON-RPC allows. Each message still goes out as one whole line. See [`Proxy`].
//! - **Malformed lines** (not JSON, or JSON that is neither an object nor a batch array) are
//!   relayed as they are, with a warning on the proxy's log naming the side, the line number
//!   and the problem; the proxy never stops for them.
//! - **No line-length limit**: a message is read whole, however long (a 50 MB file read is one
//!   line); memory is the limit.
//! - **Pending requests** are matched by id (numbers and strings are distinct ids); a
//!   `notifications/cancelled` forgets the request, so a late answer to it is relayed as is.
//!
//! - **Ending.** The server runs in a process group of its own, and however the session ends
//!   (the client closes the proxy's input, a [`StopHandle`] stops it, the server exits) the
//!   proxy ends the whole group: SIGTERM, 500 ms, SIGKILL, after 1 s for the server to exit on
//!   its own when its input closed. On Linux a proxy made the reaper of its process
//!   ([`Proxy::reaper`], as the command's is) ends a daemon the server detached with
//!   `setsid()` in the same way, and the server gets SIGTERM from the kernel if the proxy is
//!   killed with SIGKILL. The library installs no signal handler; the binary wires its signals
//!   to a [`StopHandle`]. See [`Proxy`] for the grace periods and why they fit the official
//!   MCP SDK's `close()`.
//!
//! For hosts handed whole `tools/call` results rather than a relay's blocks (the command's
//! `compress` and `replay`), [`ContentBlocks`] is the envelope that lets the router `auto` open
//! them: `HostBuilder::envelope(Arc::new(ContentBlocks))`.
//!
//! With the kill switch on ([`parrot_host::KILL_SWITCH_ENV`]) use [`Proxy::relay`]: a pure relay,
//! every line forwarded as is in both directions and no recovery tool listed, so the client
//! receives exactly what the server sends.

// Denied, not forbidden: one function allows it, to set the server's parent-death signal
// between fork and exec (`CommandExt::pre_exec` is unsafe); see `proxy::descendants`.
#![deny(unsafe_code)]

mod envelope;
mod error;
mod proxy;
mod relay;

pub use envelope::ContentBlocks;
pub use error::Error;
pub use proxy::{Proxy, Side, StopHandle};
pub use relay::{Relay, Routed};
