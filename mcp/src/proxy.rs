//! Process supervision: the server as a child process, the two relaying threads, and how a
//! session ends.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::relay::{Recoveries, Relay, Routed};
use parrot_host::{Host, Namespace};

use crate::error::Error;
use descendants::Strays;

mod descendants;

/// How long the server has to exit on its own once the client closed the proxy's input (the
/// server's input is closed then too), before the proxy signals it. With [`TERM_GRACE`] and
/// [`DRAIN_GRACE`] this ends the session in at most 1.8 s: before the official MCP SDK's
/// `close()` sends its SIGTERM, 2 s after closing the input.
const INPUT_GRACE: Duration = Duration::from_secs(1);

/// How long the server's process group has between the proxy's SIGTERM and its SIGKILL. With
/// [`DRAIN_GRACE`], an ending on a stop takes at most 0.8 s: well within the 2 s the SDK's
/// `close()` leaves between its SIGTERM and its SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);

/// How long the proxy waits for the rest of the server's output once the server has exited.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// How long a server that closed its output while the client is connected has to exit, before
/// the proxy reports that it closed its output.
const CLOSED_OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// How often the proxy looks at the server while it waits for it.
const POLL: Duration = Duration::from_millis(10);

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
/// The server runs in a process group of its own (on Unix), so that everything it starts (`npx`
/// starts `node`, a shell starts `python`) ends with it: the proxy signals the whole group.
/// A session ends in one of three ways, and each leaves no process of the group behind:
///
/// - **The client closes the proxy's input.** The server's input is closed; the server has 1 s
///   to exit on its own (its remaining output is still relayed). Then, or at once if it exited
///   and left processes in its group, the group gets SIGTERM, 500 ms more, then SIGKILL.
///   [`Proxy::run`] returns `Ok`.
/// - **A stop** ([`StopHandle::stop`]; the `parrot-compress mcp-proxy` command stops on SIGTERM,
///   SIGINT and SIGHUP). The group gets SIGTERM at once (whichever signal the caller received:
///   SIGTERM is the one every server takes as "end now"), 500 ms, then SIGKILL; what the server
///   writes meanwhile is still relayed while the client is there. [`Proxy::run`] returns `Ok`.
///   A stop while the first way is under way cuts its 1 s short.
/// - **The server ends** while the client is connected: the rest of the group is ended as
///   above, and [`Proxy::run`] returns [`Error::ServerEnded`] within a second (1.3 s when a
///   server that closed its output without exiting left processes SIGTERM does not end).
///
/// The grace periods fit the official MCP SDK's `close()` (its stdio transport closes the
/// server's input, sends SIGTERM 2 s later and SIGKILL 2 s after that): the first way takes at
/// most 1.8 s, so it is over before the SIGTERM; a stop takes at most 0.8 s, well before the
/// SIGKILL.
///
/// A process the server starts that leaves its group (a daemon that calls `setsid()`) escapes
/// the group's signals. On Linux a proxy made the reaper of its process ([`Proxy::reaper`])
/// ends those with the group, at every one of the three endings, and reaps them. A proxy killed
/// with SIGKILL cannot end anything: on Linux the kernel sends the server SIGTERM
/// (`PR_SET_PDEATHSIG`), elsewhere the server sees its input close, as when the client closes
/// the proxy's; what the server does not end itself runs on.
///
/// No message waits behind a long one. Each recovery call the proxy answers is answered on one
/// of 4 threads of its own (64 more may wait for one) while the client's other messages go on
/// to the server; a line from the server at or over the router's size threshold
/// ([`parrot_host::Budgets::size_threshold_bytes`]) is relayed on one of 2 threads when one is free,
/// while the server's smaller messages go on. JSON-RPC lets responses come in any order, so an
/// answer goes out when it is ready; every message goes out as one whole line, and a side's end
/// waits for the answers and results under way.
///
/// # Examples
///
/// ```no_run
/// use std::process::Command;
/// use parrot_mcp::Proxy;
///
/// let mut server = Command::new("npx");
/// server.args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
/// // A pure relay, as with PARROT_COMPRESSION_DISABLED=1.
/// let proxy = Proxy::relay();
/// // Whoever owns the process's signals (the binary, not a library) stops the session.
/// let stop = proxy.stop_handle();
/// std::thread::spawn(move || {
///     std::thread::sleep(std::time::Duration::from_secs(60));
///     stop.stop();
/// });
/// let ended = proxy.run(server, std::io::stdin(), std::io::stdout(), std::io::stderr());
/// if let Err(err) = ended {
///     eprintln!("error: {err}");
/// }
/// ```
#[derive(Debug)]
pub struct Proxy {
    relay: Option<Relay>,
    events: Sender<Event>,
    ended: Receiver<Event>,
    reaper: bool,
}

/// Tells a [`Proxy`] to end its session: the server's process group gets SIGTERM, 500 ms to
/// exit (what the server still writes is relayed), then SIGKILL, and [`Proxy::run`] returns
/// `Ok`.
///
/// The proxy does not install signal handlers itself: a process's signals belong to its
/// binary, which may have other uses for them. The binary wires the signals it wants to
/// [`StopHandle::stop`] (`parrot-compress mcp-proxy` does for SIGTERM, SIGINT and SIGHUP), and
/// a test or an embedding program calls it directly. The handle can be cloned and sent to
/// any thread.
///
/// # Examples
///
/// ```
/// use std::process::Command;
/// use parrot_mcp::Proxy;
///
/// let proxy = Proxy::relay();
/// let stop = proxy.stop_handle();
/// // Stopped before it runs: the server is never started.
/// stop.stop();
/// let server = Command::new("no-such-server");
/// let (input, output, log) = (std::io::empty(), std::io::sink(), std::io::sink());
/// assert!(proxy.run(server, input, output, log).is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct StopHandle(Sender<Event>);

impl StopHandle {
    /// Ends the proxy's session as described on [`StopHandle`]; returns at once. A stop before
    /// [`Proxy::run`] is called ends the session before the server starts; a stop after the
    /// session ended does nothing; a second stop changes nothing.
    pub fn stop(&self) {
        // The proxy is gone when no one receives: nothing left to stop.
        let _ = self.0.send(Event::Stop);
    }
}

/// What the relaying threads and the stop handles tell the main one.
#[derive(Debug)]
enum Event {
    /// The client closed the proxy's input, or its output is gone.
    ClientGone,
    /// The server's output closed.
    ServerEof,
    /// A stop handle asked for the end.
    Stop,
}

type SharedWriter = Arc<Mutex<Box<dyn Write + Send>>>;

/// The server's input: written by the thread that reads the client and by the workers that
/// forward recovery calls to a server with a recovery tool of its own; `None` once closed.
type ServerInput = Arc<Mutex<Option<ChildStdin>>>;

impl Proxy {
    /// A proxy that compresses through `host`. Build the host with a tee store (without one,
    /// nothing lossy happens and nothing can be recovered) and, for the exact text of every
    /// changed block, [`parrot_host::HostBuilder::tee_lossless`].
    pub fn new(host: Arc<Host>) -> Proxy {
        Proxy::with(Some(Relay::new(host)))
    }

    /// A proxy whose session stores its originals in `namespace` and recovers only those
    /// ([`Relay::in_namespace`]).
    pub fn in_namespace(host: Arc<Host>, namespace: Namespace) -> Proxy {
        Proxy::with(Some(Relay::in_namespace(host, namespace)))
    }

    /// A pure relay: every line goes through as it is (the kill switch).
    pub fn relay() -> Proxy {
        Proxy::with(None)
    }

    fn with(relay: Option<Relay>) -> Proxy {
        let (events, ended) = mpsc::channel();
        Proxy {
            relay,
            events,
            ended,
            reaper: false,
        }
    }

    /// Makes the proxy the reaper of every process its server starts (Linux): one that leaves
    /// the server's process group (a daemon that calls `setsid()`) is ended with the group at
    /// every ending of the session, SIGTERM then SIGKILL, and every orphan that comes to the
    /// proxy is reaped, during the session as at its end.
    ///
    /// It makes the whole process a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`) and ends
    /// every descendant of the process that outlives the server: for a process that runs this
    /// one session and starts no other process, as `parrot-compress mcp-proxy` does. Elsewhere
    /// than on Linux it changes nothing.
    pub fn reaper(mut self) -> Proxy {
        self.reaper = true;
        self
    }

    /// A handle that ends this proxy's session from another thread (a signal handler's).
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(self.events.clone())
    }

    /// Starts `server` and relays between it and the client (`input`, `output`) until one side
    /// ends or a [`StopHandle`] stops it; then ends the server and everything it started, as
    /// described on [`Proxy`]. Warnings about malformed lines go to `log`, one line each.
    ///
    /// On Unix the server is started in a new process group (replacing any process group set
    /// on `server`); on Linux with SIGTERM as its parent-death signal, sent when the thread that
    /// called `run` ends (it ends the session first, unless the process is killed).
    ///
    /// # Errors
    ///
    /// - [`Error::Spawn`] when the server cannot be started;
    /// - [`Error::ServerEnded`] when the server exits, is killed or closes its output while
    ///   the client is still connected and no stop was asked for (the proxy returns within a
    ///   second of it).
    pub fn run(
        self,
        server: Command,
        input: impl Read + Send + 'static,
        output: impl Write + Send + 'static,
        log: impl Write + Send + 'static,
    ) -> Result<(), Error> {
        let Proxy {
            relay,
            events,
            ended,
            reaper,
        } = self;
        // Nothing but a stop can be waiting before the threads start.
        if ended.try_recv().is_ok() {
            return Ok(());
        }
        let mut log = log;
        let Server {
            mut child,
            input: server_in,
            output: server_out,
            group,
            strays,
        } = Server::start(server, reaper, &mut log)?;
        let relay = relay.map(|relay| Workers::start(Arc::new(relay)));
        let output: SharedWriter = Arc::new(Mutex::new(Box::new(output)));
        let log: SharedWriter = Arc::new(Mutex::new(Box::new(log)));
        let server_in: ServerInput = Arc::new(Mutex::new(Some(server_in)));

        {
            let relay = relay.clone();
            let output = Arc::clone(&output);
            let log = Arc::clone(&log);
            let events = events.clone();
            std::thread::spawn(move || {
                client_to_server(relay.as_deref(), input, &server_in, &output, &log);
                // Told before the server's input closes, so that the server's exit in answer
                // cannot be taken for a crash.
                let _ = events.send(Event::ClientGone);
                drop(server_in.lock().unwrap_or_else(|p| p.into_inner()).take());
            });
        }
        {
            let events = events.clone();
            std::thread::spawn(move || {
                let client_open = server_to_client(relay.as_deref(), server_out, &output, &log);
                let _ = events.send(if client_open {
                    Event::ServerEof
                } else {
                    Event::ClientGone
                });
            });
        }
        let session = Session {
            child: &mut child,
            group,
            strays,
            ending: false,
            events: &ended,
            status: None,
            output_closed: false,
            client_gone: false,
            stopped: false,
        };
        // `events` lives until here, so the channel never disconnects while the session runs.
        let ended = supervise(session);
        drop(events);
        ended
    }
}

/// The server just started: the child, its pipes, and what the proxy ends with it.
struct Server {
    child: Child,
    input: ChildStdin,
    output: ChildStdout,
    group: group::Group,
    strays: Strays,
}

impl Server {
    /// Starts `server` in a process group of its own, with its parent-death signal, the proxy
    /// its reaper if `reaper` asks and the process can be (else a warning on `log`).
    fn start(mut server: Command, reaper: bool, log: &mut impl Write) -> Result<Server, Error> {
        let command = command_line(&server);
        group::isolate(&mut server);
        descendants::tell_on_parent_death(&mut server);
        let reaper = reaper && cfg!(target_os = "linux") && become_reaper(log);
        let mut child = server
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| Error::Spawn {
                command: command.clone(),
                source,
            })?;
        let group = group::Group::of(&child);
        let strays = Strays::of(&child, reaper);
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            group.signal(&mut child, group::Ending::Kill);
            let _ = child.wait();
            return Err(Error::Spawn {
                command,
                source: std::io::Error::other("no pipe to the server's stdin or stdout"),
            });
        };
        Ok(Server {
            child,
            input,
            output,
            group,
            strays,
        })
    }
}

/// What the supervisor knows of the session.
struct Session<'a> {
    child: &'a mut Child,
    group: group::Group,
    /// What the server started outside its group, when the proxy is its reaper.
    strays: Strays,
    /// Whether the session is being ended: the strays' orphans are reaped at every look.
    ending: bool,
    events: &'a Receiver<Event>,
    /// The server's exit status, once it has exited (and been reaped).
    status: Option<ExitStatus>,
    output_closed: bool,
    client_gone: bool,
    stopped: bool,
}

impl Session<'_> {
    /// Takes the events that arrive within `wait` (returning at the first), then looks whether
    /// the server has exited.
    fn poll(&mut self, wait: Duration) {
        if let Ok(event) = self.events.recv_timeout(wait) {
            self.note(event);
        }
        while let Ok(event) = self.events.try_recv() {
            self.note(event);
        }
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.strays.reap(self.ending);
    }

    fn note(&mut self, event: Event) {
        match event {
            Event::ClientGone => self.client_gone = true,
            Event::ServerEof => self.output_closed = true,
            Event::Stop => self.stopped = true,
        }
    }

    /// Polls until `done` holds or `grace` has passed; whether `done` holds.
    fn wait(&mut self, grace: Duration, done: impl Fn(&Self) -> bool) -> bool {
        let deadline = Instant::now() + grace;
        loop {
            if done(self) {
                return true;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            self.poll(left.min(POLL));
        }
    }

    /// Ends what is left of the server: its process group and its strays (what left the group,
    /// when the proxy is their reaper) get SIGTERM, [`TERM_GRACE`] for the server to exit, its
    /// output to close and the rest to end, then SIGKILL. Then the rest of the server's output
    /// is relayed, for up to [`DRAIN_GRACE`], and the strays' zombies are reaped.
    fn end(&mut self) {
        self.ending = true;
        // The orphans of the group that have exited would keep it alive.
        self.strays.reap(true);
        if self.status.is_some() && !self.group.alive() && !self.strays.running() {
            // The server exited and took everything it started with it.
            self.wait(DRAIN_GRACE, |s| s.output_closed);
            self.strays.reap(true);
            return;
        }
        self.group.signal(self.child, group::Ending::Term);
        self.strays.signal(group::Ending::Term);
        let ended = self.wait(TERM_GRACE, |s| {
            s.status.is_some() && s.output_closed && !s.group.alive() && !s.strays.running()
        });
        if !ended {
            self.group.signal(self.child, group::Ending::Kill);
            self.strays.signal(group::Ending::Kill);
        }
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
        self.strays.kill_the_rest();
        self.wait(DRAIN_GRACE, |s| s.output_closed);
        self.strays.reap(true);
    }
}

/// Waits for either side to end, or for a stop, and ends the session accordingly.
fn supervise(mut session: Session<'_>) -> Result<(), Error> {
    let s = &mut session;
    while !(s.stopped || s.client_gone || s.output_closed || s.status.is_some()) {
        s.poll(Duration::from_millis(100));
    }
    if s.client_gone && !s.stopped {
        // The server's input is closed (its writer is dropped): let it finish, unless a stop
        // comes first.
        s.wait(INPUT_GRACE, |s| s.status.is_some() || s.stopped);
    }
    if s.client_gone || s.stopped {
        s.end();
        return Ok(());
    }
    // The server ended while the client is connected.
    if s.status.is_none() {
        s.wait(CLOSED_OUTPUT_GRACE, |s| s.status.is_some());
    }
    let status = s.status;
    s.end();
    Err(match status {
        Some(status) => ended_with(status),
        None => Error::ServerEnded {
            how: "closed its output".to_owned(),
            code: None,
        },
    })
}

/// The server's process group: where the proxy's signals go.
#[cfg(unix)]
mod group {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};

    use rustix::io::Errno;
    use rustix::process::{Pid, Signal};

    /// How the proxy asks.
    #[derive(Debug, Clone, Copy)]
    pub(super) enum Ending {
        /// SIGTERM: end now, cleaning up.
        Term,
        /// SIGKILL.
        Kill,
    }

    /// The server's process group, whose id is the server's pid.
    pub(super) struct Group(Pid);

    /// Makes `server` the leader of a new process group when it starts.
    pub(super) fn isolate(server: &mut Command) {
        server.process_group(0);
    }

    impl Group {
        pub(super) fn of(child: &Child) -> Group {
            Group(Pid::from_child(child))
        }

        /// Whether any process is left in the group (a zombie no one reaps counts).
        pub(super) fn alive(&self) -> bool {
            rustix::process::test_kill_process_group(self.0) != Err(Errno::SRCH)
        }

        /// Sends `ending` to the group, and to the server itself if it left the group and has
        /// not exited.
        pub(super) fn signal(&self, child: &mut Child, ending: Ending) {
            let signal = match ending {
                Ending::Term => Signal::TERM,
                Ending::Kill => Signal::KILL,
            };
            let sent = rustix::process::kill_process_group(self.0, signal);
            if sent == Err(Errno::SRCH) && matches!(child.try_wait(), Ok(None)) {
                let _ = rustix::process::kill_process(self.0, signal);
            }
        }
    }
}

/// Where there are no process groups, the server alone.
#[cfg(not(unix))]
mod group {
    use std::process::{Child, Command};

    #[derive(Debug, Clone, Copy)]
    pub(super) enum Ending {
        Term,
        Kill,
    }

    pub(super) struct Group;

    pub(super) fn isolate(_server: &mut Command) {}

    impl Group {
        pub(super) fn of(_child: &Child) -> Group {
            Group
        }

        pub(super) fn alive(&self) -> bool {
            false
        }

        /// There is no SIGTERM to send: the first ending waits for the server, the second kills it.
        pub(super) fn signal(&self, child: &mut Child, ending: Ending) {
            if matches!(ending, Ending::Kill) {
                let _ = child.kill();
            }
        }
    }
}

/// Makes the proxy's process the reaper of what the server starts ([`Proxy::reaper`]); whether
/// it is. A failure is logged: the session runs on without it.
fn become_reaper(log: &mut impl Write) -> bool {
    match Strays::become_reaper() {
        Ok(()) => true,
        Err(err) => {
            let _ = writeln!(
                log,
                "warning: mcp-proxy: cannot become the reaper of the server's processes \
                 ({err}): a process the server detaches may outlive the session"
            );
            false
        }
    }
}

fn ended_with(status: ExitStatus) -> Error {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Error::ServerEnded {
                how: format!("was killed by signal {signal}"),
                code: None,
            };
        }
    }
    match status.code() {
        Some(code) => Error::ServerEnded {
            how: format!("exited with status {code}"),
            code: Some(code),
        },
        None => Error::ServerEnded {
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

/// Writes `bytes` (whole lines) to the server; a server that stopped reading has ended or is
/// about to (the supervisor reports it), so its input is closed and nothing more is written.
fn write_server(server_in: &ServerInput, bytes: &[u8]) {
    let mut pipe = server_in.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(writer) = pipe.as_mut()
        && writer
            .write_all(bytes)
            .and_then(|()| writer.flush())
            .is_err()
    {
        *pipe = None;
    }
}

/// The threads that do the relay's long work off the two reading threads, so that neither
/// side waits behind one long message.
///
/// JSON-RPC lets a peer answer requests in any order (a response carries its request's id),
/// and a batch's responses need not come in one array; so an answer or a result that takes
/// long goes out when it is ready, and the messages read after it may overtake it. Each goes
/// out as one whole line through the shared writer: lines never interleave.
///
/// - **Recovery calls**: every `wm_get_result` the proxy answers is answered on one of
///   [`Workers::RECOVERY_THREADS`] (4) threads, while the client's thread goes on forwarding
///   the client's other messages; a batch's other messages go to the server at once, its
///   answers when they are ready. Four, so that a short call finds a thread free while up to
///   three long ones run (a retrieval reads its original whole: 100 MB of log takes seconds
///   in a debug build), and no more, because each running retrieval holds its original in
///   memory. Up to [`Workers::RECOVERY_QUEUE`] (64) calls wait for a thread; beyond that the
///   client's thread waits too, which the client sees as a pipe that is slow to take its
///   lines.
/// - **Big results**: a line from the server at or over the router's size threshold
///   ([`parrot_host::Budgets::size_threshold_bytes`], 256 KiB by default, where
///   [`parrot_host::Host::process_async`] leaves the caller's thread too) is relayed on one of
///   [`Workers::RESULT_THREADS`] (2) threads when one is free, while the server's smaller
///   messages (notifications, a `tools/list` response, short results) go on; with both busy
///   the server's thread relays it itself, so that no more than three such lines are held at
///   once, and the server, whose pipe then fills, waits. A line relayed on a worker is relayed
///   exactly as on the server's thread: whole, and changed only as [`Relay::from_server`]
///   changes it.
///
/// When a side's input ends, its thread waits for its answers and results in progress to be
/// written before it reports the end, as it did when it wrote them itself.
struct Workers {
    relay: Arc<Relay>,
    recoveries: Pool,
    results: Pool,
}

impl Workers {
    const RECOVERY_THREADS: usize = 4;
    const RECOVERY_QUEUE: usize = 64;
    const RESULT_THREADS: usize = 2;

    fn start(relay: Arc<Relay>) -> Arc<Workers> {
        Arc::new(Workers {
            relay,
            recoveries: Pool::start(
                "mcp-recovery",
                Workers::RECOVERY_THREADS,
                Workers::RECOVERY_QUEUE,
            ),
            // No queue: a big line goes to a thread only when one is waiting for it.
            results: Pool::start("mcp-result", Workers::RESULT_THREADS, 0),
        })
    }
}

/// A job for a [`Pool`].
type Job = Box<dyn FnOnce() + Send>;

/// A fixed number of threads that take jobs from one queue; they end when the pool is dropped
/// and the queue is empty.
struct Pool {
    jobs: SyncSender<Job>,
}

impl Pool {
    fn start(name: &str, threads: usize, queue: usize) -> Pool {
        let (jobs, queued) = mpsc::sync_channel::<Job>(queue);
        let queued = Arc::new(Mutex::new(queued));
        for number in 0..threads {
            let queued = Arc::clone(&queued);
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{number}"))
                .spawn(move || {
                    loop {
                        // The lock is held only while waiting, never while a job runs.
                        let job = queued.lock().unwrap_or_else(|p| p.into_inner()).recv();
                        let Ok(job) = job else { return };
                        // A job that panics loses its own message, not the thread.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                });
            // Without the thread, the pool has one fewer; with none, `run` runs jobs in place.
            drop(spawned);
        }
        Pool { jobs }
    }

    /// Runs `job` on a thread of the pool, waiting while the queue is full; in place when the
    /// pool has no thread left.
    fn run(&self, job: Job) {
        if let Err(mpsc::SendError(job)) = self.jobs.send(job) {
            job();
        }
    }

    /// Runs `job` on a thread of the pool if one is free at once; else hands it back.
    fn try_run(&self, job: Job) -> Result<(), Job> {
        match self.jobs.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => Err(job),
        }
    }
}

/// The jobs a reading thread started that have not finished.
#[derive(Debug, Default)]
struct InFlight {
    count: Mutex<usize>,
    finished: Condvar,
}

/// One job of an [`InFlight`], counted until it is dropped (when the job ends, or unwinds).
struct Started(Arc<InFlight>);

impl InFlight {
    fn start(self: &Arc<Self>) -> Started {
        *self.count.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        Started(Arc::clone(self))
    }

    /// Waits until every job started has finished.
    fn wait(&self) {
        let mut count = self.count.lock().unwrap_or_else(|p| p.into_inner());
        while *count > 0 {
            count = self.finished.wait(count).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let mut count = self.0.count.lock().unwrap_or_else(|p| p.into_inner());
        *count -= 1;
        self.0.finished.notify_all();
    }
}

/// Relays the client's lines to the server until the client closes its output (or the
/// client's input is gone), the proxy's answers to recovery calls computed on the
/// [`Workers`]; returns once every answer started is written.
fn client_to_server(
    workers: Option<&Workers>,
    input: impl Read,
    server_in: &ServerInput,
    output: &SharedWriter,
    log: &SharedWriter,
) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    let mut number = 0;
    let answering = Arc::new(InFlight::default());
    let client_gone = Arc::new(AtomicBool::new(false));
    while !client_gone.load(Ordering::Relaxed) {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => number += 1,
        }
        let (routed, recoveries) = match workers {
            Some(workers) => workers.relay.route_client(&line),
            None => (Routed::unchanged(&line), None),
        };
        if let Some(warning) = &routed.warning {
            warn(log, Side::Client, number, warning);
        }
        if let Some(forward) = &routed.forward {
            // Keep reading the client after a failed write, so recovery calls are still
            // answered.
            write_server(server_in, forward);
        }
        if let (Some(workers), Some(recoveries)) = (workers, recoveries) {
            let answer = answer_job(
                &workers.relay,
                recoveries,
                answering.start(),
                server_in,
                output,
                &client_gone,
            );
            workers.recoveries.run(answer);
        }
    }
    answering.wait();
}

/// The job that answers the recovery calls of one client line.
fn answer_job(
    relay: &Arc<Relay>,
    recoveries: Recoveries,
    started: Started,
    server_in: &ServerInput,
    output: &SharedWriter,
    client_gone: &Arc<AtomicBool>,
) -> Job {
    let (relay, server_in, output, client_gone) = (
        Arc::clone(relay),
        Arc::clone(server_in),
        Arc::clone(output),
        Arc::clone(client_gone),
    );
    Box::new(move || {
        let _started = started;
        let answered = relay.answer(recoveries);
        if let Some(forward) = &answered.forward {
            write_server(&server_in, forward);
        }
        if let Some(answer) = &answered.answer
            && !write_line(&output, answer)
        {
            client_gone.store(true, Ordering::Relaxed);
        }
    })
}

/// Relays the server's lines to the client until the server's output closes (true) or the
/// client's is gone (false); a big line on the [`Workers`] when one is free. Returns once
/// every line read is written.
fn server_to_client(
    workers: Option<&Workers>,
    server_out: impl Read,
    output: &SharedWriter,
    log: &SharedWriter,
) -> bool {
    let mut server_out = BufReader::with_capacity(64 * 1024, server_out);
    let mut number = 0;
    let relaying = Arc::new(InFlight::default());
    let client_gone = Arc::new(AtomicBool::new(false));
    let ended = loop {
        if client_gone.load(Ordering::Relaxed) {
            break false;
        }
        let mut line = Vec::new();
        match server_out.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break true,
            Ok(_) => number += 1,
        }
        let big = workers.is_some_and(|workers| workers.relay.is_big(&line));
        let relay_line = {
            let relay = workers.map(|workers| Arc::clone(&workers.relay));
            let (output, log, client_gone) = (
                Arc::clone(output),
                Arc::clone(log),
                Arc::clone(&client_gone),
            );
            let started = relaying.start();
            move || {
                let _started = started;
                let routed = match &relay {
                    Some(relay) => relay.from_server(&line),
                    None => Routed::unchanged(&line),
                };
                if let Some(warning) = &routed.warning {
                    warn(&log, Side::Server, number, warning);
                }
                if let Some(forward) = &routed.forward
                    && !write_line(&output, forward)
                {
                    client_gone.store(true, Ordering::Relaxed);
                }
            }
        };
        match workers {
            Some(workers) if big => {
                if let Err(relay_line) = workers.results.try_run(Box::new(relay_line)) {
                    relay_line();
                }
            }
            _ => relay_line(),
        }
    };
    relaying.wait();
    ended && !client_gone.load(Ordering::Relaxed)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Whether `pid` runs (a zombie runs nothing).
    fn runs(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
    }

    /// Whether `pid` has stopped running within a second: a process killed with SIGKILL has
    /// closed its files (so the proxy's session is over) a moment before it shows as a zombie.
    fn ends(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(1);
        while runs(pid) {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// A relay in front of `script` (sh), which prints the pid of a `sleep` it started; the
    /// proxy's thread, the stop handle, that pid, and the client's end of the input (kept open).
    fn started(
        script: &str,
    ) -> (
        std::thread::JoinHandle<Result<(), Error>>,
        StopHandle,
        u32,
        std::io::PipeWriter,
    ) {
        let proxy = Proxy::relay();
        let stop = proxy.stop_handle();
        let (input, client_in) = std::io::pipe().unwrap();
        let (mut client_out, output) = std::io::pipe().unwrap();
        let mut server = Command::new("sh");
        server.args(["-c", script]);
        let running = std::thread::spawn(move || proxy.run(server, input, output, std::io::sink()));
        let mut line = String::new();
        let mut byte = [0u8];
        while client_out.read_exact(&mut byte).is_ok() && byte[0] != b'\n' {
            line.push(char::from(byte[0]));
        }
        let pid = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no pid: {line:?}"));
        // Output the test no longer reads goes nowhere.
        std::thread::spawn(move || std::io::copy(&mut client_out, &mut std::io::sink()));
        (running, stop, pid, client_in)
    }

    #[test]
    fn a_pool_with_every_thread_busy_hands_a_job_back_and_runs_it_once_one_is_free() {
        let pool = Pool::start("test", 1, 0);
        let (release, held) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel::<&str>();
        let first = done.clone();
        let busy: Job = Box::new(move || {
            let _ = held.recv();
            let _ = first.send("first");
        });
        // The thread may not be waiting yet.
        let mut busy = Some(busy);
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Some(job) = busy.take() {
            if let Err(job) = pool.try_run(job) {
                assert!(Instant::now() < deadline, "the pool's thread never waited");
                std::thread::sleep(Duration::from_millis(1));
                busy = Some(job);
            }
        }
        let second = done.clone();
        let handed_back = pool.try_run(Box::new(move || {
            let _ = second.send("second");
        }));
        let Err(job) = handed_back else {
            panic!("a busy pool took a job")
        };
        release.send(()).unwrap();
        assert_eq!(finished.recv_timeout(Duration::from_secs(5)), Ok("first"));
        pool.run(job);
        assert_eq!(finished.recv_timeout(Duration::from_secs(5)), Ok("second"));
    }

    #[test]
    fn a_job_that_panics_leaves_the_pools_thread_and_its_count() {
        let pool = Pool::start("test", 1, 4);
        let in_flight = Arc::new(InFlight::default());
        let started = in_flight.start();
        pool.run(Box::new(move || {
            let _started = started;
            panic!("a job that panics");
        }));
        in_flight.wait();
        let (done, finished) = mpsc::channel();
        pool.run(Box::new(move || {
            let _ = done.send(());
        }));
        assert!(finished.recv_timeout(Duration::from_secs(5)).is_ok());
    }

    #[test]
    fn a_stop_before_the_run_starts_no_server() {
        let dir = std::env::temp_dir().join(format!("parrot-stop-{}", std::process::id()));
        let proxy = Proxy::relay();
        proxy.stop_handle().stop();
        let mut server = Command::new("mkdir");
        server.arg(&dir);
        let ended = proxy.run(server, std::io::empty(), std::io::sink(), std::io::sink());
        assert!(ended.is_ok(), "{ended:?}");
        assert!(!dir.exists(), "the server ran");
    }

    #[test]
    fn a_stop_ends_the_server_and_what_it_started() {
        let (running, stop, sleeper, _input) = started("sleep 600 & echo $!; wait");
        assert!(runs(sleeper));
        let at = Instant::now();
        stop.stop();
        let ended = running.join().unwrap();
        let took = at.elapsed();
        assert!(ended.is_ok(), "{ended:?}");
        assert!(ends(sleeper), "the server's child still runs");
        // SIGTERM was enough (the 500 ms are waited out only where nothing reaps the
        // orphaned sleep's zombie).
        assert!(took < TERM_GRACE + DRAIN_GRACE, "{took:?}");
    }

    #[test]
    fn a_stop_kills_a_server_that_ignores_sigterm_after_the_grace() {
        let (running, stop, sleeper, _input) = started("trap '' TERM; sleep 600 & echo $!; wait");
        let at = Instant::now();
        stop.stop();
        let ended = running.join().unwrap();
        let took = at.elapsed();
        assert!(ended.is_ok(), "{ended:?}");
        assert!(ends(sleeper), "the server's child still runs");
        assert!(took >= TERM_GRACE, "{took:?}");
    }

    #[test]
    fn a_second_stop_changes_nothing_and_a_stop_after_the_end_is_harmless() {
        let (running, stop, sleeper, _input) = started("sleep 600 & echo $!; wait");
        stop.stop();
        stop.clone().stop();
        assert!(running.join().unwrap().is_ok());
        assert!(ends(sleeper));
        stop.stop();
    }
}
