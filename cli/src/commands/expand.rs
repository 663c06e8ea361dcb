//! `expand`: a codec's output given back as the original it was made from.

use super::{read_input, write_stdout};
use crate::Failure;
use crate::args::Options;
use crate::host::host;

/// Expands the payload in `file` (`-`: stdin) with codec `codec` of the host the options
/// build (its manifests and plugins, so that a plugin's codec can be named) and writes the
/// original to stdout. No tee store is opened: expanding reads none. The kill switch does not
/// stop it: it compresses nothing.
pub(crate) fn expand(cli: &Options, codec: &str, file: &str) -> Result<(), Failure> {
    let input = read_input(file)?;
    let payload = std::str::from_utf8(&input).map_err(|err| {
        let name = if file == "-" { "stdin" } else { file };
        Failure::config(vec![format!(
            "{name}: not UTF-8 at byte {}: a codec's output is text, so no codec wrote this",
            err.valid_up_to()
        )])
    })?;
    let host = host(cli, false, None)?;
    let original = host
        .expand(codec, payload)
        .map_err(|err| Failure::config(vec![err.to_string()]))?;
    write_stdout(original.as_bytes())
}
