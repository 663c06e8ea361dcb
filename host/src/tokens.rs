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
use std::sync::{Arc, Condvar, Mutex};

use crate::call::{TokenCounts, TokenSlot};
use crate::observe::{Observer, TokenEvent};

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

/// The background counter.
pub(crate) struct TokenWorker {
    sender: Mutex<Option<Sender<Job>>>,
    pending: Arc<(Mutex<u64>, Condvar)>,
    spares: Arc<Spares>,
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

impl TokenWorker {
    pub(crate) fn start(
        counter: Arc<dyn TokenCounter>,
        observers: Arc<Vec<Arc<dyn Observer>>>,
    ) -> TokenWorker {
        let (sender, receiver) = channel::<Job>();
        let pending = Arc::new((Mutex::new(0u64), Condvar::new()));
        let done = Arc::clone(&pending);
        let spares = Arc::new(Spares::default());
        let given_back = Arc::clone(&spares);
        std::thread::Builder::new()
            .name("parrot-tokens".to_owned())
            .spawn(move || run(&receiver, &*counter, &observers, &done, &given_back))
            .ok();
        TokenWorker {
            sender: Mutex::new(Some(sender)),
            pending,
            spares,
        }
    }

    /// A worker that counts nothing: every job is dropped as it is submitted.
    pub(crate) fn off() -> TokenWorker {
        TokenWorker {
            sender: Mutex::new(None),
            pending: Arc::new((Mutex::new(0u64), Condvar::new())),
            spares: Arc::new(Spares::default()),
        }
    }

    /// A copy of `text` for a job, in a buffer the worker gave back when there is one.
    pub(crate) fn copy(&self, text: &str) -> String {
        self.spares.copy(text)
    }

    /// Whether jobs are counted: a worker that is [`TokenWorker::off`] drops them, so the
    /// caller need not build one.
    pub(crate) fn is_on(&self) -> bool {
        self.sender
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    pub(crate) fn submit(&self, job: Job) {
        let (lock, _) = &*self.pending;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let slot = Arc::clone(&job.slot);
        let sent = self
            .sender
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|sender| sender.send(job).is_ok());
        if !sent {
            slot.fill(None);
            self.finish_one();
        }
    }

    fn finish_one(&self) {
        let (lock, signal) = &*self.pending;
        let mut pending = lock.lock().unwrap_or_else(|p| p.into_inner());
        *pending = pending.saturating_sub(1);
        signal.notify_all();
    }

    /// Blocks until every submitted call has been counted.
    pub(crate) fn flush(&self) {
        let (lock, signal) = &*self.pending;
        let mut pending = lock.lock().unwrap_or_else(|p| p.into_inner());
        while *pending > 0 {
            pending = signal.wait(pending).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for TokenWorker {
    fn drop(&mut self) {
        // Closing the channel ends the worker thread once the queue is drained.
        self.sender.lock().unwrap_or_else(|p| p.into_inner()).take();
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
