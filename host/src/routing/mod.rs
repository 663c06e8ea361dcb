//! Routing: the routing codec `auto` ([`auto`]) and the envelopes it opens ([`envelope`]),
//! and the latency budgets that place a codec call and break a codec that keeps busting its
//! budget ([`budget`]).

pub(crate) mod auto;
pub(crate) mod budget;
pub(crate) mod envelope;
