//! The errors of the MCP proxy: its server could not be started, or ended while the client was
//! still connected.

/// The MCP proxy's server could not be started, or ended while the client was connected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The proxy cannot start its server.
    #[error("cannot start the MCP server {command}: {source}")]
    Spawn {
        /// The server's command line.
        command: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// The server ended while the client was still connected: it exited, was killed by a
    /// signal, or closed its output.
    #[error("MCP server {how}")]
    ServerEnded {
        /// How it ended: "exited with status 3", "was killed by signal 9", "closed its output".
        how: String,
        /// Its exit code, when it exited with one.
        code: Option<i32>,
    },
}
