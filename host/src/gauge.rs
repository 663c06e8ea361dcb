//! Token counts where the host decides by them: the routing codec's choice among candidates,
//! and the no-gain rule.
//!
//! This is the minimal form of the gauge: every count is exact, through the configured
//! tokenizer. The no-gain rule's cheaper paths (counting only when byte sizes are close) are
//! the business of that rule.

use std::sync::Arc;

use crate::tokens::TokenCounter;

/// A token count, and whether it is the tokenizer's exact count or an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tokens {
    /// The number of tokens.
    pub(crate) count: usize,
    /// Counted by the tokenizer itself (not estimated).
    pub(crate) exact: bool,
}

/// Counts tokens with the host's tokenizer.
#[derive(Clone)]
pub(crate) struct Gauge {
    counter: Arc<dyn TokenCounter>,
}

impl Gauge {
    /// A gauge counting with `counter`.
    pub(crate) fn new(counter: Arc<dyn TokenCounter>) -> Gauge {
        Gauge { counter }
    }

    /// The tokens of `text`.
    pub(crate) fn tokens(&self, text: &str) -> Tokens {
        Tokens {
            count: self.counter.count(text),
            exact: true,
        }
    }

    /// Whether `output` has no more tokens than `input`.
    #[allow(dead_code)] // the token-based no-gain rule (rule 9) is its caller
    pub(crate) fn no_more_tokens(&self, input: &str, output: &str) -> bool {
        self.tokens(output).count <= self.tokens(input).count
    }
}

impl std::fmt::Debug for Gauge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gauge")
            .field("tokenizer", &self.counter.name())
            .finish()
    }
}
