//! Token counting with a real tokenizer, off the caller's path.
//!
//! Counting is slow next to the codecs (tens of MB/s against hundreds), so
//! [`crate::Host::process`] returns as soon as the payload is ready and a background worker
//! counts `tokens_before` and `tokens_after`, then hands them to the observers (the savings
//! report among them). [`crate::Host::flush`] waits for the worker to catch up.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};

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

/// One call's texts to count.
pub(crate) struct Job {
    pub(crate) call_id: u64,
    pub(crate) tool: String,
    pub(crate) before: String,
    /// `None` when the output is the input.
    pub(crate) after: Option<String>,
}

/// The background counter.
pub(crate) struct TokenWorker {
    sender: Mutex<Option<Sender<Job>>>,
    pending: Arc<(Mutex<u64>, Condvar)>,
}

impl TokenWorker {
    pub(crate) fn start(
        counter: Arc<dyn TokenCounter>,
        observers: Arc<Vec<Arc<dyn Observer>>>,
    ) -> TokenWorker {
        let (sender, receiver) = channel::<Job>();
        let pending = Arc::new((Mutex::new(0u64), Condvar::new()));
        let done = Arc::clone(&pending);
        std::thread::Builder::new()
            .name("parrot-tokens".to_owned())
            .spawn(move || run(&receiver, &*counter, &observers, &done))
            .ok();
        TokenWorker {
            sender: Mutex::new(Some(sender)),
            pending,
        }
    }

    /// A worker that counts nothing: every job is dropped as it is submitted.
    pub(crate) fn off() -> TokenWorker {
        TokenWorker {
            sender: Mutex::new(None),
            pending: Arc::new((Mutex::new(0u64), Condvar::new())),
        }
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
        let sent = self
            .sender
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|sender| sender.send(job).is_ok());
        if !sent {
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
) {
    while let Ok(job) = receiver.recv() {
        let tokens_before = counter.count(&job.before);
        let tokens_after = job
            .after
            .as_deref()
            .map_or(tokens_before, |after| counter.count(after));
        let event = TokenEvent {
            call_id: job.call_id,
            tool: job.tool,
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
