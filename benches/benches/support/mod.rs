//! What the benchmarks of this crate share: a `redis-server` for the Redis store's rows.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` on a free loopback port, killed when dropped.
pub struct RedisServer {
    child: Child,
    pub port: u16,
}

impl RedisServer {
    /// Starts one in `dir`; `None`, with a line saying why (naming the benchmark `bench`), when
    /// there is no `redis-server`.
    pub fn start(dir: &Path, bench: &str) -> Option<RedisServer> {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
            .arg(dir)
            .args(["--save", "", "--appendonly", "no"])
            .args(["--maxmemory", "256mb", "--maxmemory-policy", "volatile-ttl"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(err) => {
                eprintln!(
                    "{bench}: the Redis store is left out: cannot start redis-server ({err}); \
                     install it (Debian: apt-get install redis-server)"
                );
                return None;
            }
        };
        let mut server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline || server.child.try_wait().ok().flatten().is_some() {
                eprintln!("{bench}: the Redis store is left out: redis-server did not start");
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Listening means ready: a server with no data to load takes commands at once.
        Some(server)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
