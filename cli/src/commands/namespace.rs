//! `namespace`: the namespace `serve` gives a client with an API key.

use parrot_host::Namespace;

use super::write_stdout;
use crate::Failure;

/// Prints the namespace `serve` gives a client with the API key on stdin (its first line) or
/// in the variable `env`: the same digest as the proxy's, of the key as a header carries it
/// (surrounding whitespace not part of it).
pub(crate) fn namespace(env: Option<&str>) -> Result<(), Failure> {
    let key = match env {
        Some(name) => std::env::var_os(name)
            .ok_or_else(|| Failure::runtime(format!("namespace: ${name} is not set")))?
            .into_encoded_bytes(),
        None => {
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map_err(|err| Failure::runtime(format!("namespace: cannot read stdin: {err}")))?;
            line.into_bytes()
        }
    };
    let key = key.trim_ascii();
    if key.is_empty() {
        return Err(Failure::runtime(
            "namespace: no API key given (on stdin, or --env VAR): a request without one is \
             unscoped, recover its originals without --namespace",
        ));
    }
    write_stdout(format!("{}\n", Namespace::of_secret(key)).as_bytes())
}
