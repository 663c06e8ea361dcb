//! The workspace's integration tests, as one test binary: one link of the host and its
//! dependencies instead of one per file, and every test scheduled in one pool.
//!
//! Each module is what was one test file; run one with its path, e.g.
//! `cargo test -p parrot-tests --test integration prune::`.

mod auto;
mod claude_code;
mod cli;
mod contract;
mod hostile;
mod logs;
mod manifests;
mod mcp_proxy;
mod pipeline;
mod pipeline_async;
mod plugins;
mod prune;
mod readme;
mod recover;
mod redis_server;
mod review;
mod roundtrip;
mod serve;
mod support;
mod tee_keys;
mod tee_redis;
mod tee_sqlite;
mod tee_stores;
mod tokens;
mod toon;
