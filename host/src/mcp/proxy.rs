//! Process supervision: the server as a child process, the two relaying threads, and how a
//! session ends.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::relay::{Relay, Routed};
use crate::error::McpError;
use crate::host::Host;

/// How long the server has to exit after the client closed the proxy's input, before the proxy
/// stops it.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long the proxy waits for the rest of the server's output once the server has exited.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// Which side of the proxy a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The MCP client (the agent), on the proxy's stdin.
    Client,
    /// The MCP server, on its child's stdout.
    Server,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Server => "server",
        })
    }
}

/// The running proxy: a server child process and the two relaying threads.
///
/// # Examples
///
/// ```no_run
/// use std::process::Command;
/// use parrot_host::mcp::Proxy;
///
/// let mut server = Command::new("npx");
/// server.args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
/// // A pure relay, as with PARROT_COMPRESSION_DISABLED=1.
/// let ended = Proxy::relay().run(server, std::io::stdin(), std::io::stdout(), std::io::stderr());
/// if let Err(err) = ended {
///     eprintln!("error: {err}");
/// }
/// ```
#[derive(Debug)]
pub struct Proxy {
    relay: Option<Relay>,
}

/// What the relaying threads tell the main one.
enum Event {
    /// The client closed the proxy's input, or its output is gone.
    ClientGone,
    /// The server's output closed.
    ServerEof,
}

type SharedWriter = Arc<Mutex<Box<dyn Write + Send>>>;

impl Proxy {
    /// A proxy that compresses through `host`. Build the host with a tee store (without one,
    /// nothing lossy happens and nothing can be recovered) and, for the exact text of every
    /// changed block, [`crate::HostBuilder::tee_lossless`].
    pub fn new(host: Arc<Host>) -> Proxy {
        Proxy {
            relay: Some(Relay::new(host)),
        }
    }

    /// A pure relay: every line goes through as it is (the kill switch).
    pub fn relay() -> Proxy {
        Proxy { relay: None }
    }

    /// Starts `server` and relays between it and the client (`input`, `output`) until one side
    /// ends. Warnings about malformed lines go to `log`, one line each.
    ///
    /// When the client closes `input`, the server's input is closed; the server has two
    /// seconds to exit (its remaining output is still relayed) before it is killed, and the
    /// proxy returns `Ok`.
    ///
    /// # Errors
    ///
    /// - [`McpError::Spawn`] when the server cannot be started;
    /// - [`McpError::ServerEnded`] when the server exits, is killed or closes its output while
    ///   the client is still connected (the proxy returns within a second of it).
    pub fn run(
        self,
        mut server: Command,
        input: impl Read + Send + 'static,
        output: impl Write + Send + 'static,
        log: impl Write + Send + 'static,
    ) -> Result<(), McpError> {
        let command = command_line(&server);
        let mut child = server
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| McpError::Spawn {
                command: command.clone(),
                source,
            })?;
        let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(McpError::Spawn {
                command,
                source: std::io::Error::other("no pipe to the server's stdin or stdout"),
            });
        };
        let relay = self.relay.map(Arc::new);
        let output: SharedWriter = Arc::new(Mutex::new(Box::new(output)));
        let log: SharedWriter = Arc::new(Mutex::new(Box::new(log)));
        let (events, ended) = mpsc::channel();

        {
            let relay = relay.clone();
            let output = Arc::clone(&output);
            let log = Arc::clone(&log);
            let events = events.clone();
            std::thread::spawn(move || {
                let server_in = client_to_server(relay.as_deref(), input, server_in, &output, &log);
                // Told before the server's input closes, so that the server's exit in answer
                // cannot be taken for a crash.
                let _ = events.send(Event::ClientGone);
                drop(server_in);
            });
        }
        std::thread::spawn(move || {
            let client_open = server_to_client(relay.as_deref(), server_out, &output, &log);
            let _ = events.send(if client_open {
                Event::ServerEof
            } else {
                Event::ClientGone
            });
        });
        supervise(&mut child, &ended)
    }
}

/// Waits for either side to end, and ends the session accordingly.
fn supervise(child: &mut Child, ended: &mpsc::Receiver<Event>) -> Result<(), McpError> {
    loop {
        match ended.recv_timeout(Duration::from_millis(100)) {
            Ok(Event::ClientGone) => {
                // The server's input is closed (its writer is dropped): let it finish.
                let deadline = Instant::now() + SHUTDOWN_GRACE;
                while Instant::now() < deadline {
                    if matches!(child.try_wait(), Ok(Some(_))) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                if !matches!(child.try_wait(), Ok(Some(_))) {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                // Relay what the server still wrote before it went.
                let _ = wait_for(ended, DRAIN_GRACE, |e| matches!(e, Event::ServerEof));
                return Ok(());
            }
            Ok(Event::ServerEof) => {
                let deadline = Instant::now() + Duration::from_millis(500);
                loop {
                    if let Ok(Some(status)) = child.try_wait() {
                        return Err(ended_with(status));
                    }
                    if Instant::now() >= deadline {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(McpError::ServerEnded {
                            how: "closed its output".to_owned(),
                            code: None,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                // The server may be gone while something it started still holds its output.
                if let Ok(Some(status)) = child.try_wait() {
                    let _ = wait_for(ended, DRAIN_GRACE, |_| true);
                    return Err(ended_with(status));
                }
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        }
    }
}

/// Waits up to `grace` for an event that `wanted` accepts.
fn wait_for(
    ended: &mpsc::Receiver<Event>,
    grace: Duration,
    wanted: impl Fn(&Event) -> bool,
) -> bool {
    let deadline = Instant::now() + grace;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match ended.recv_timeout(left) {
            Ok(event) if wanted(&event) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

fn ended_with(status: ExitStatus) -> McpError {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return McpError::ServerEnded {
                how: format!("was killed by signal {signal}"),
                code: None,
            };
        }
    }
    match status.code() {
        Some(code) => McpError::ServerEnded {
            how: format!("exited with status {code}"),
            code: Some(code),
        },
        None => McpError::ServerEnded {
            how: format!("ended ({status})"),
            code: None,
        },
    }
}

fn command_line(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn write_line(writer: &SharedWriter, bytes: &[u8]) -> bool {
    let mut writer = writer.lock().unwrap_or_else(|p| p.into_inner());
    writer
        .write_all(bytes)
        .and_then(|()| writer.flush())
        .is_ok()
}

fn warn(log: &SharedWriter, side: Side, number: u64, warning: &str) {
    let line = format!("warning: mcp-proxy: {side} line {number}: {warning}; relayed as is\n",);
    write_line(log, line.as_bytes());
}

/// Relays the client's lines to the server until the client closes its output (or the
/// client's input is gone); returns the server's input, for the caller to close.
fn client_to_server(
    relay: Option<&Relay>,
    input: impl Read,
    mut server_in: ChildStdin,
    output: &SharedWriter,
    log: &SharedWriter,
) -> ChildStdin {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    let mut number = 0;
    let mut server_open = true;
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return server_in,
            Ok(_) => number += 1,
        }
        let routed = match relay {
            Some(relay) => relay.from_client(&line),
            None => Routed::unchanged(&line),
        };
        if let Some(warning) = &routed.warning {
            warn(log, Side::Client, number, warning);
        }
        if let (Some(forward), true) = (&routed.forward, server_open) {
            // A server that stopped reading has ended or is about to: the supervisor reports
            // it. Keep reading the client meanwhile, so recovery calls are still answered.
            server_open = server_in
                .write_all(forward)
                .and_then(|()| server_in.flush())
                .is_ok();
        }
        if let Some(answer) = &routed.answer
            && !write_line(output, answer)
        {
            return server_in;
        }
    }
}

/// Relays the server's lines to the client until the server's output closes (true) or the
/// client's is gone (false).
fn server_to_client(
    relay: Option<&Relay>,
    server_out: impl Read,
    output: &SharedWriter,
    log: &SharedWriter,
) -> bool {
    let mut server_out = BufReader::with_capacity(64 * 1024, server_out);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        match server_out.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return true,
            Ok(_) => number += 1,
        }
        let routed = match relay {
            Some(relay) => relay.from_server(&line),
            None => Routed::unchanged(&line),
        };
        if let Some(warning) = &routed.warning {
            warn(log, Side::Server, number, warning);
        }
        if let Some(forward) = &routed.forward
            && !write_line(output, forward)
        {
            return false;
        }
    }
}
