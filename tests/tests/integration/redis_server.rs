//! A real `redis-server` (the Debian package `redis-server`; `.ci/run` installs it), started by
//! a test on a free loopback port in a temporary directory, and stopped when it drops.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;

/// How long a server may take to accept commands after it starts.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// The deadlines test stores get, as URL parameters: seconds, not milliseconds, so that a put
/// on a machine busy with other tests is not taken for a stuck Redis.
pub const GENEROUS: &str = "timeout_ms=2000&connect_timeout_ms=2000";

/// One `redis-server` process: its port and directory outlive a restart.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    extra: Vec<String>,
}

impl RedisServer {
    /// A server that keeps nothing on disk, with `extra` options (`--requirepass`, …).
    pub fn start(extra: &[&str]) -> RedisServer {
        support::require(&support::REDIS_SERVER);
        let mut server = RedisServer {
            child: None,
            port: free_port(),
            dir: tempfile::tempdir().expect("temp dir"),
            extra: extra.iter().map(|&s| s.to_owned()).collect(),
        };
        server.spawn();
        server
    }

    /// A server that writes every acknowledged write to its append-only file before answering,
    /// so a restart after `kill` finds all of them.
    pub fn durable() -> RedisServer {
        RedisServer::start(&["--appendonly", "yes", "--appendfsync", "always"])
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("redis.log"))
            .expect("redis log");
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().expect("redis log")))
            .stderr(Stdio::from(log));
        let child = command.spawn().unwrap_or_else(|err| {
            panic!(
                "cannot start redis-server ({err}): the Redis tests need it on PATH \
                 (Debian: apt-get install redis-server)"
            )
        });
        self.child = Some(child);
        self.wait_ready();
    }

    /// Waits until the server answers a PING (or asks for a password).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("redis-server exited at start ({status}):\n{}", self.log());
            }
            if let Some(answer) = self.ping()
                && (answer.starts_with("+PONG") || answer.starts_with("-NOAUTH"))
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} not ready within {READY_TIMEOUT:?}:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn ping(&self) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
        stream.write_all(b"PING\r\n").ok()?;
        let mut answer = [0u8; 64];
        let n = stream.read(&mut answer).ok()?;
        Some(String::from_utf8_lossy(&answer[..n]).into_owned())
    }

    /// `redis://127.0.0.1:PORT/0`, then `query` (`?prefix=…`) if not empty, with [`GENEROUS`]
    /// deadlines unless it sets its own.
    pub fn url(&self, query: &str) -> String {
        // Deadlines for a loaded test machine (the defaults, 50 and 25 ms, are for a quiet
        // one); a query that sets its own keeps them.
        let query = if query.contains("timeout_ms") {
            query.to_owned()
        } else if query.is_empty() {
            format!("?{GENEROUS}")
        } else {
            format!("{query}&{GENEROUS}")
        };
        format!("redis://127.0.0.1:{}/0{query}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server with SIGKILL: no shutdown, nothing saved that was not already.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, in the same directory, with the same options.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Stops the process (SIGSTOP): it keeps its port, and the kernel still accepts
    /// connections, but nothing answers.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused process go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("a running server").id();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}: {status}");
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if self.child.is_some() {
            // A paused server would not die of SIGKILL any later, but let it go first anyway.
            let _ = Command::new("kill")
                .args([
                    "-CONT",
                    &self.child.as_ref().map_or(0, Child::id).to_string(),
                ])
                .status();
        }
        self.kill();
    }
}

/// A loopback port no one listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}
