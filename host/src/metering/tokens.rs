//! Token counting with a real tokenizer, off the caller's path.
//!
//! Counting is slow next to the codecs (tens of MB/s against hundreds), so
//! [`crate::Host::process`] returns as soon as the payload is ready and a background worker
//! counts `tokens_before` and `tokens_after`, then hands them to the observers (the savings
//! report among them). [`crate::Host::flush`] waits for the worker to catch up.
//!
//! The worker counts its own copies of the input and the output (the caller keeps both). It
//! hands its finished buffers back for the next calls' copies ([`Spares`]): a copy into a buffer
//! still mapped costs a `memcpy`, where a fresh one of a large payload also costs the page
//! faults of memory the allocator gave back to the system when the last copies were freed
//! (json_compact at 1 MB, each count finished before the next call: 2.5-2.9x the scan with
//! fresh copies, 1.9x with the allocator told never to give memory back).

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use crate::call::{TokenCounts, TokenSlot};
use crate::metering::observe::{Observer, TokenEvent};

/// Counts tokens the way one model family does.
///
/// Other models' tokenizers differ: token figures are exact for the named tokenizer only.
pub trait TokenCounter: Send + Sync {
    /// The tokenizer's name, as reports show it.
    fn name(&self) -> &str;

    /// The number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// The OpenAI BPE tokenizers, built into the binary ([`parrot_bpe`]): no download, and
/// nothing to load before the first count.
///
/// # Examples
///
/// ```
/// use parrot_host::{TokenCounter, Tokenizer};
///
/// assert_eq!(Tokenizer::O200k.name(), "o200k_base");
/// assert_eq!(Tokenizer::O200k.count("hello world"), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tokenizer {
    /// `o200k_base` (GPT-4o and later): the default.
    #[default]
    O200k,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100k,
}

impl TokenCounter for Tokenizer {
    fn name(&self) -> &str {
        match self {
            Tokenizer::O200k => "o200k_base",
            Tokenizer::Cl100k => "cl100k_base",
        }
    }

    fn count(&self, text: &str) -> usize {
        match self {
            Tokenizer::O200k => parrot_bpe::O200K_BASE.count(text),
            Tokenizer::Cl100k => parrot_bpe::CL100K_BASE.count(text),
        }
    }
}

/// A text to count, or its count when the stage has it exact already (the router's choice
/// or the no-gain rule counted it): nothing is counted twice.
pub(crate) enum Count {
    Text(String),
    Known(usize),
}

/// One call's texts to count.
pub(crate) struct Job {
    pub(crate) call_id: u64,
    pub(crate) tool: String,
    pub(crate) before: Count,
    /// `None` when the output is the input.
    pub(crate) after: Option<Count>,
    /// Where the counts go for the call's result ([`crate::Processed::tokens`]).
    pub(crate) slot: Arc<TokenSlot>,
}

/// At most this many of the worker's finished buffers are kept for the next copies (one
/// call's input and output)...
const SPARE_BUFFERS: usize = 2;

/// ...holding at most this many bytes together, so an idle host keeps at most this much.
const SPARE_BYTES: usize = 32 << 20;

/// The worker's finished buffers, kept for the next calls' copies.
#[derive(Default)]
struct Spares {
    buffers: Mutex<Vec<String>>,
}

impl Spares {
    /// `text` in a kept buffer (the smallest that holds it, else the largest, which grows),
    /// or in a new one when none is kept.
    fn copy(&self, text: &str) -> String {
        let kept = {
            let mut buffers = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
            let fits = buffers
                .iter()
                .enumerate()
                .filter(|(_, buffer)| buffer.capacity() >= text.len())
                .min_by_key(|(_, buffer)| buffer.capacity())
                .map(|(i, _)| i);
            let largest = || (0..buffers.len()).max_by_key(|&i| buffers[i].capacity());
            fits.or_else(largest).map(|i| buffers.swap_remove(i))
        };
        match kept {
            Some(mut buffer) => {
                buffer.clear();
                buffer.push_str(text);
                buffer
            }
            None => text.to_owned(),
        }
    }

    /// Keeps `buffer` for a later copy when there is room ([`SPARE_BUFFERS`],
    /// [`SPARE_BYTES`]); drops it otherwise.
    fn keep(&self, buffer: String) {
        let mut buffers = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
        let held: usize = buffers.iter().map(String::capacity).sum();
        if buffers.len() < SPARE_BUFFERS && held + buffer.capacity() <= SPARE_BYTES {
            buffers.push(buffer);
        }
    }
}

/// The background counter.
///
/// Its thread starts with the first job, and belongs to the process that started it. A process
/// forked from this one (Python's `multiprocessing` with the `fork` start method, a pre-forking
/// server) holds a copy of the worker but not its thread, which `fork` does not copy: a job sent
/// to it would wait forever. So the worker keeps one [`Live`] per process id, and a process that
/// finds none of its own starts one, with a new thread, channel, count and buffers, without
/// taking any lock of the copied one (a thread of the parent may have held it at the fork, and
/// no thread of the child will ever release it). Process ids are reused: a process forked, at
/// some remove, from one that started a worker and has since exited may be given that
/// process's id, and would then take the dead thread's state for its own (not handled: it
/// takes the parent to exit before its descendant is made, and the ids to wrap around).
pub(crate) struct TokenWorker {
    /// What counts and whom it tells; `None` for a worker that is [`TokenWorker::off`].
    counting: Option<Counting>,
    /// The first process's thread and state, started by its first job; the processes forked
    /// later hang theirs after it ([`Live::next`]).
    first: OnceLock<Live>,
}

/// The tokenizer and the observers a worker's thread is started with.
struct Counting {
    counter: Arc<dyn TokenCounter>,
    observers: Arc<Vec<Arc<dyn Observer>>>,
}

/// One process's worker thread and the state it shares with the callers.
struct Live {
    /// The process that started the thread.
    pid: u32,
    /// `None` once dropped (see the `Drop` implementation).
    sender: Option<Sender<Job>>,
    pending: Arc<(Mutex<u64>, Condvar)>,
    spares: Arc<Spares>,
    /// The state of a process forked from this one (or from a later one in the list), made by
    /// its first job there. A chain of [`OnceLock`]s rather than a lock around one state: a
    /// copied lock may be held forever, a set `OnceLock` is read without one.
    next: OnceLock<Box<Live>>,
}

impl Live {
    /// Starts the worker thread of process `pid`.
    fn start(pid: u32, counting: &Counting) -> Live {
        let (sender, receiver) = channel::<Job>();
        let pending = Arc::new((Mutex::new(0u64), Condvar::new()));
        let done = Arc::clone(&pending);
        let spares = Arc::new(Spares::default());
        let given_back = Arc::clone(&spares);
        let counter = Arc::clone(&counting.counter);
        let observers = Arc::clone(&counting.observers);
        // A thread that cannot start drops the receiver: every job is then dropped uncounted
        // rather than waited for.
        std::thread::Builder::new()
            .name("parrot-tokens".to_owned())
            .spawn(move || run(&receiver, &*counter, &observers, &done, &given_back))
            .ok();
        Live {
            pid,
            sender: Some(sender),
            pending,
            spares,
            next: OnceLock::new(),
        }
    }

    fn finish_one(&self) {
        let (lock, signal) = &*self.pending;
        let mut pending = lock.lock().unwrap_or_else(|p| p.into_inner());
        *pending = pending.saturating_sub(1);
        signal.notify_all();
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let Some(sender) = self.sender.take() else {
            return;
        };
        if self.pid == std::process::id() {
            // Closing the channel ends the worker thread once the queue is drained.
            drop(sender);
        } else {
            // A copy made by `fork`: closing the channel would take its locks, which the
            // parent's thread may have held at the fork. The copy is left as it is.
            std::mem::forget(sender);
        }
    }
}

impl TokenWorker {
    /// A worker counting with `counter` and telling `observers`; its thread starts with the
    /// first job.
    pub(crate) fn start(
        counter: Arc<dyn TokenCounter>,
        observers: Arc<Vec<Arc<dyn Observer>>>,
    ) -> TokenWorker {
        TokenWorker {
            counting: Some(Counting { counter, observers }),
            first: OnceLock::new(),
        }
    }

    /// A worker that counts nothing: every job is dropped as it is submitted.
    pub(crate) fn off() -> TokenWorker {
        TokenWorker {
            counting: None,
            first: OnceLock::new(),
        }
    }

    /// The state of process `pid`; started when it has none and `start` is set.
    fn live(&self, pid: u32, start: bool) -> Option<&Live> {
        let counting = self.counting.as_ref()?;
        let mut live = if start {
            self.first.get_or_init(|| Live::start(pid, counting))
        } else {
            self.first.get()?
        };
        while live.pid != pid {
            live = if start {
                live.next
                    .get_or_init(|| Box::new(Live::start(pid, counting)))
            } else {
                live.next.get()?
            };
        }
        Some(live)
    }

    /// A copy of `text` for a job, in a buffer the worker gave back when there is one.
    pub(crate) fn copy(&self, text: &str) -> String {
        match self.live(std::process::id(), true) {
            Some(live) => live.spares.copy(text),
            None => text.to_owned(),
        }
    }

    /// Whether jobs are counted: a worker that is [`TokenWorker::off`] drops them, so the
    /// caller need not build one.
    pub(crate) fn is_on(&self) -> bool {
        self.counting.is_some()
    }

    pub(crate) fn submit(&self, job: Job) {
        self.submit_in(std::process::id(), job);
    }

    /// [`TokenWorker::submit`] as process `pid`.
    fn submit_in(&self, pid: u32, job: Job) {
        let Some(live) = self.live(pid, true) else {
            job.slot.fill(None);
            return;
        };
        let (lock, _) = &*live.pending;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let slot = Arc::clone(&job.slot);
        let sent = live
            .sender
            .as_ref()
            .is_some_and(|sender| sender.send(job).is_ok());
        if !sent {
            slot.fill(None);
            live.finish_one();
        }
    }

    /// Blocks until every call this process submitted has been counted.
    pub(crate) fn flush(&self) {
        self.flush_in(std::process::id());
    }

    /// [`TokenWorker::flush`] as process `pid`: the jobs another process (the parent, before a
    /// fork) left in its copy of the count are not waited for.
    fn flush_in(&self, pid: u32) {
        let Some(live) = self.live(pid, false) else {
            return;
        };
        let (lock, signal) = &*live.pending;
        let mut pending = lock.lock().unwrap_or_else(|p| p.into_inner());
        while *pending > 0 {
            pending = signal.wait(pending).unwrap_or_else(|p| p.into_inner());
        }
    }
}

fn run(
    receiver: &Receiver<Job>,
    counter: &dyn TokenCounter,
    observers: &[Arc<dyn Observer>],
    pending: &(Mutex<u64>, Condvar),
    spares: &Spares,
) {
    while let Ok(job) = receiver.recv() {
        let Job {
            call_id,
            tool,
            before,
            after,
            slot,
        } = job;
        // Each buffer is given back before the call counts as done, so a caller that flushed
        // finds them.
        let count = |text: Count| match text {
            Count::Text(text) => {
                let n = counter.count(&text);
                spares.keep(text);
                n
            }
            Count::Known(n) => n,
        };
        let tokens_before = count(before);
        let tokens_after = after.map_or(tokens_before, count);
        slot.fill(Some(TokenCounts {
            before: tokens_before,
            after: tokens_after,
        }));
        let event = TokenEvent {
            call_id,
            tool,
            tokens_before,
            tokens_after,
        };
        for observer in observers {
            // A panicking observer must not stop the counting of later calls.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                observer.on_tokens(&event);
            }));
        }
        let (lock, signal) = pending;
        let mut count = lock.lock().unwrap_or_else(|p| p.into_inner());
        *count = count.saturating_sub(1);
        signal.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_goes_into_a_kept_buffer_that_holds_it() {
        let spares = Spares::default();
        let small = String::with_capacity(10);
        let large = String::with_capacity(1000);
        let small_at = small.as_ptr();
        spares.keep(small);
        spares.keep(large);
        // The smallest that holds the text, not a larger one.
        let copy = spares.copy("0123456789");
        assert_eq!(copy, "0123456789");
        assert_eq!(copy.as_ptr(), small_at);
        // Too long for every kept buffer: the largest grows to hold it.
        let long = "x".repeat(2000);
        let copy = spares.copy(&long);
        assert_eq!(copy, long);
        assert!(copy.capacity() >= 2000);
        // None kept: a new buffer.
        let copy = spares.copy("text");
        assert_eq!(copy, "text");
    }

    #[test]
    fn the_kept_buffers_are_bounded_in_number_and_bytes() {
        let spares = Spares::default();
        for _ in 0..SPARE_BUFFERS + 2 {
            spares.keep(String::with_capacity(16));
        }
        assert_eq!(spares.buffers.lock().unwrap().len(), SPARE_BUFFERS);
        let spares = Spares::default();
        spares.keep(String::with_capacity(SPARE_BYTES / 2 + 1));
        spares.keep(String::with_capacity(SPARE_BYTES / 2 + 1));
        assert_eq!(spares.buffers.lock().unwrap().len(), 1);
        spares.keep(String::with_capacity(SPARE_BYTES + 1));
        assert_eq!(spares.buffers.lock().unwrap().len(), 1);
    }

    /// A process forked from the one that started the worker holds a copy of its state (an
    /// open channel nobody reads, a count of jobs the parent had not finished) but not its
    /// thread: its jobs are counted on a thread of its own, and its flush waits for those
    /// alone. The fork is played by a state of another process id put first.
    #[test]
    fn a_forked_process_counts_on_a_thread_of_its_own() {
        let worker = TokenWorker::start(Arc::new(Tokenizer::O200k), Arc::new(Vec::new()));
        let (sender, unread) = channel::<Job>();
        let parent = Live {
            pid: std::process::id().wrapping_add(1),
            sender: Some(sender),
            pending: Arc::new((Mutex::new(3), Condvar::new())),
            spares: Arc::default(),
            next: OnceLock::new(),
        };
        assert!(worker.first.set(parent).is_ok());
        let slot = Arc::new(TokenSlot::default());
        worker.submit(Job {
            call_id: 1,
            tool: "t".to_owned(),
            before: Count::Text(worker.copy("hello world")),
            after: None,
            slot: Arc::clone(&slot),
        });
        assert_eq!(
            slot.wait(),
            Some(TokenCounts {
                before: 2,
                after: 2
            })
        );
        worker.flush();
        assert!(unread.try_recv().is_err(), "nothing was sent to the copy");
    }

    /// After a flush, the next call's copies go into the buffers of the call before.
    #[test]
    fn the_worker_gives_its_buffers_back_before_a_flush_returns() {
        let worker = TokenWorker::start(Arc::new(Tokenizer::O200k), Arc::new(Vec::new()));
        let before = worker.copy(&"a".repeat(4096));
        let after = worker.copy(&"b".repeat(2048));
        let (before_at, after_at) = (before.as_ptr(), after.as_ptr());
        worker.submit(Job {
            call_id: 1,
            tool: "t".to_owned(),
            before: Count::Text(before),
            after: Some(Count::Text(after)),
            slot: Arc::default(),
        });
        worker.flush();
        let again = [
            worker.copy(&"c".repeat(4000)),
            worker.copy(&"d".repeat(2000)),
        ];
        let mut reused: Vec<*const u8> = again.iter().map(|copy| copy.as_ptr()).collect();
        reused.sort();
        let mut given: Vec<*const u8> = vec![before_at, after_at];
        given.sort();
        assert_eq!(reused, given);
    }
}
