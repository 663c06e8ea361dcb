//! Metering: token counts for the stage's decisions on the caller's path ([`gauge`]) and with
//! a real tokenizer off it ([`tokens`]), observers of processed calls ([`observe`]), and the
//! savings report ([`report`]) with its histogram of call durations ([`histogram`]).

pub(crate) mod gauge;
pub(crate) mod histogram;
pub(crate) mod observe;
pub(crate) mod report;
pub(crate) mod tokens;
