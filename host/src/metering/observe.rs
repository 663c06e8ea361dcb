//! Observers of processed calls.
//!
//! Every hook has an empty default, so an observer implements only what it needs. The savings
//! report ([`crate::Report`]) is an observer attached to every host.

use crate::call::Meta;

/// A processed call, as observers see it (after compression ran, with the final figures).
#[derive(Debug, Clone)]
pub struct CallEvent {
    /// The call's number within this host, from 1.
    pub call_id: u64,
    /// The tool.
    pub tool: String,
    /// The call's metadata.
    pub meta: Meta,
}

/// The token counts of a call, delivered after the call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenEvent {
    /// The call's number, as in its [`CallEvent`].
    pub call_id: u64,
    /// The tool.
    pub tool: String,
    /// Tokens of the input as given.
    pub tokens_before: usize,
    /// Tokens of the payload the model sees.
    pub tokens_after: usize,
}

/// Watches the calls a host processes.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use parrot_host::{CallEvent, Observer};
///
/// #[derive(Default)]
/// struct CountTeed(AtomicU64);
///
/// impl Observer for CountTeed {
///     fn on_processed(&self, event: &CallEvent) {
///         if event.meta.teed {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
/// ```
pub trait Observer: Send + Sync {
    /// After a call was processed (the kill switch skips this).
    fn on_processed(&self, event: &CallEvent) {
        let _ = event;
    }

    /// When a call's tokens have been counted.
    fn on_tokens(&self, event: &TokenEvent) {
        let _ = event;
    }
}
