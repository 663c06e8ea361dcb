//! What the server starts outside its process group, and what happens to the server when the
//! proxy dies without ending the session (Linux).
//!
//! A process that calls `setsid()` (a daemon, a language server started "detached") leaves the
//! server's process group, so the group's signals miss it; once its parent exits, the kernel
//! gives it to the nearest ancestor that is a child subreaper, or to init. A proxy that is the
//! subreaper ([`Strays::become_reaper`]) gets every such orphan of its server as a child of its
//! own: it finds them again in /proc at the session's end (every descendant of the proxy's
//! process that is neither the server nor in its group), ends them with the group, and reaps
//! them, during the session as at its end, so that no zombie of theirs is left.
//!
//! A proxy killed with SIGKILL ends nothing. [`tell_on_parent_death`] has the kernel send the
//! server SIGTERM then: the direct child only, which may end what it started; a process it
//! detached from itself, whose parent is gone with the proxy, stays. Ending those too would
//! take a cgroup, which the proxy does not have.

use std::process::Command;

#[cfg(target_os = "linux")]
use std::collections::HashMap;
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
use rustix::process::{Pid, Signal};

use super::group::Ending;

/// How long the proxy keeps killing what its SIGKILL left: the orphans of the killed processes
/// come to the proxy one by one, each to be killed in turn.
#[cfg(target_os = "linux")]
const KILL_GRACE: Duration = Duration::from_secs(1);

/// How often the proxy reaps the orphans that came to it while the session runs; at the
/// session's end, at every look.
#[cfg(target_os = "linux")]
const REAP_EVERY: Duration = Duration::from_secs(1);

/// The session's processes outside the server's process group: every descendant of the
/// proxy's process but the server and its group, when the proxy is their reaper; none
/// otherwise (elsewhere than on Linux, or for a proxy that shares its process with others).
pub(super) struct Strays {
    #[cfg(target_os = "linux")]
    reaper: Option<Reaper>,
}

/// What a reaping proxy knows: itself and its server.
#[cfg(target_os = "linux")]
struct Reaper {
    proxy: Pid,
    server: Pid,
    next_reap: Instant,
}

/// One process as its /proc/PID/stat shows it.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy)]
struct Process {
    pid: i32,
    parent: i32,
    group: i32,
    zombie: bool,
}

impl Strays {
    /// Makes the proxy's process the child subreaper of everything it starts from now on.
    ///
    /// # Errors
    ///
    /// The error of `prctl(PR_SET_CHILD_SUBREAPER)`; on systems other than Linux,
    /// [`std::io::ErrorKind::Unsupported`].
    pub(super) fn become_reaper() -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
        }
    }

    /// The strays of the session whose server is `server`: those of a proxy that is their
    /// reaper (`reaper`), none otherwise.
    pub(super) fn of(server: &std::process::Child, reaper: bool) -> Strays {
        #[cfg(target_os = "linux")]
        {
            let reaper = reaper.then(|| Reaper {
                proxy: rustix::process::getpid(),
                server: Pid::from_child(server),
                next_reap: Instant::now() + REAP_EVERY,
            });
            Strays { reaper }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (server, reaper);
            Strays {}
        }
    }

    /// Whether any stray still runs (a zombie runs nothing).
    pub(super) fn running(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(reaper) = &self.reaper {
            return reaper.strays().iter().any(|process| !process.zombie);
        }
        false
    }

    /// Sends `ending` to every stray that runs.
    pub(super) fn signal(&self, ending: Ending) {
        #[cfg(target_os = "linux")]
        if let Some(reaper) = &self.reaper {
            reaper.signal(&reaper.strays(), ending);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = ending;
    }

    /// Reaps the orphans that came to the proxy and have exited: now when `now`, else once
    /// a second at most. Never the server, whose status is [`std::process::Child`]'s to take.
    pub(super) fn reap(&mut self, now: bool) {
        #[cfg(target_os = "linux")]
        if let Some(reaper) = &mut self.reaper
            && (now || Instant::now() >= reaper.next_reap)
        {
            reaper.reap(&processes());
            reaper.next_reap = Instant::now() + REAP_EVERY;
        }
        #[cfg(not(target_os = "linux"))]
        let _ = now;
    }

    /// Kills what is left after the server's group got SIGKILL, for up to [`KILL_GRACE`]: each
    /// stray that runs, then the orphans that killing it handed to the proxy; then reaps them.
    pub(super) fn kill_the_rest(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(reaper) = &self.reaper {
            let deadline = Instant::now() + KILL_GRACE;
            loop {
                let all = processes();
                reaper.reap(&all);
                let left: Vec<&Process> = reaper
                    .strays_in(&all)
                    .into_iter()
                    .filter(|process| !process.zombie)
                    .collect();
                if left.is_empty() || Instant::now() >= deadline {
                    return;
                }
                reaper.signal(left, Ending::Kill);
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

#[cfg(target_os = "linux")]
impl Reaper {
    fn strays(&self) -> Vec<Process> {
        self.strays_in(&processes()).into_iter().copied().collect()
    }

    /// The descendants of the proxy's process in `all`, but the server and its group.
    fn strays_in<'a>(&self, all: &'a HashMap<i32, Process>) -> Vec<&'a Process> {
        let (proxy, server) = (
            self.proxy.as_raw_nonzero().get(),
            self.server.as_raw_nonzero().get(),
        );
        let mut children: HashMap<i32, Vec<&Process>> = HashMap::new();
        for process in all.values() {
            children.entry(process.parent).or_default().push(process);
        }
        let mut found = Vec::new();
        let mut below = vec![proxy];
        while let Some(parent) = below.pop() {
            for &child in children.get(&parent).into_iter().flatten() {
                below.push(child.pid);
                if child.pid != server && child.group != server {
                    found.push(child);
                }
            }
        }
        found
    }

    fn signal<'a>(&self, processes: impl IntoIterator<Item = &'a Process>, ending: Ending) {
        let signal = match ending {
            Ending::Term => Signal::TERM,
            Ending::Kill => Signal::KILL,
        };
        for process in processes {
            if !process.zombie
                && let Some(pid) = Pid::from_raw(process.pid)
            {
                // Gone meanwhile: nothing to end.
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
    }

    /// Reaps the proxy's children in `all` that have exited, but the server; each by its pid,
    /// so that no other child's status is taken.
    fn reap(&self, all: &HashMap<i32, Process>) {
        let (proxy, server) = (
            self.proxy.as_raw_nonzero().get(),
            self.server.as_raw_nonzero().get(),
        );
        for process in all.values() {
            if process.parent == proxy
                && process.zombie
                && process.pid != server
                && let Some(pid) = Pid::from_raw(process.pid)
            {
                let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
            }
        }
    }
}

/// Every process /proc lists, by pid; one that ends while /proc is read is left out.
#[cfg(target_os = "linux")]
fn processes() -> HashMap<i32, Process> {
    let mut found = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some(process) = parse_stat(pid, &stat) {
            found.insert(pid, process);
        }
    }
    found
}

/// The state, parent and process group in a /proc/PID/stat line. The command's name before them
/// is in parentheses and may hold both spaces and parentheses: the fields are read after the
/// last `)`.
#[cfg(target_os = "linux")]
fn parse_stat(pid: i32, stat: &str) -> Option<Process> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(Process {
        pid,
        parent,
        group,
        zombie: matches!(state, "Z" | "X"),
    })
}

/// Has the kernel send the server SIGTERM when the proxy dies, whatever kills it (Linux):
/// `prctl(PR_SET_PDEATHSIG)` in the child before it runs the server, which keeps it through
/// `exec` (but for a set-user-ID program). A proxy that died between the fork and the `prctl`
/// is seen there (the child's parent is no longer the proxy), and the server is not run.
///
/// The kernel sends the signal when the thread that started the server ends: the thread that
/// called [`super::Proxy::run`], which returns only once the session is over.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(super) fn tell_on_parent_death(server: &mut Command) {
    use std::os::unix::process::CommandExt;
    let proxy = rustix::process::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe work is sound. It makes two system calls (prctl, getppid) through
    // rustix, takes no lock and allocates nothing: an `io::Error` made from an OS error code
    // holds the code alone.
    unsafe {
        server.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(Signal::TERM))?;
            if rustix::process::getppid() != Some(proxy) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            Ok(())
        });
    }
}

/// Elsewhere there is no such signal: a proxy killed with SIGKILL leaves the server its input
/// closing.
#[cfg(not(target_os = "linux"))]
pub(super) fn tell_on_parent_death(_server: &mut Command) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis_of_the_command() {
        let rows = [
            ("1234 (sleep) S 1 1234 1234 0 -1", Some((1, 1234, false))),
            ("77 (a) b (c) Z 12 40 40 0 -1", Some((12, 40, true))),
            ("5 (x y)) R 3 5 5", Some((3, 5, false))),
            ("5 (no fields)", None),
            ("5 (bad) S one 2 3", None),
        ];
        for (line, expected) in rows {
            let read = parse_stat(5, line).map(|p| (p.parent, p.group, p.zombie));
            assert_eq!(read, expected, "{line}");
        }
    }
}
