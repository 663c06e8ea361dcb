//! The Python package of parrot-compress, `pip install ./python`: two modules built from this
//! crate with PyO3 (the stable ABI, CPython 3.9 and later) and maturin.
//!
//! - `parrot_compress`: the host in-process. A `Host` set up as the command sets one up
//!   (manifests, plugin packages, the tee store, the tokenizer), whose `compress` is the
//!   command's `compress --meta`, and `compress_request`, the rewrite `serve` makes of a request
//!   body, without a proxy. The work runs with the GIL released; a `Host` is shared between
//!   threads.
//! - `parrot_codec`: the optional extension ai-parrot's pure-Python `columnar` codec looks for,
//!   `columnarize(payload, min_rows=20)`, whose output is the pure-Python transform's, byte for
//!   byte ([`columnar`]).
//!
//! The bindings (module `py`) are built only with the feature `extension`, which maturin turns
//! on: without it this crate is its pure-Rust core, so the workspace's `cargo test` builds it
//! without PyO3 and without a Python interpreter. The Python tests are `python/tests/`, run by
//! `cargo xtask test` in a venv of their own (docs/GUIDE.md).

#![cfg_attr(not(feature = "extension"), forbid(unsafe_code))]

pub mod columnar;
#[cfg(feature = "extension")]
mod py;
