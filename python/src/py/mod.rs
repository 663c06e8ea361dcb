//! The Python modules: `parrot_compress._native` (re-exported by the `parrot_compress`
//! package) and the function `parrot_codec` re-exports.

use pyo3::prelude::*;

mod codec;
mod convert;
mod host;
mod request;

pyo3::create_exception!(
    parrot_compress,
    BuildError,
    pyo3::exceptions::PyValueError,
    "A host could not be set up: a manifest entry, a plugin, a store or a setting is wrong. \
     `errors` lists every problem found (the lines the command prints), each naming the file, \
     entry, key, codec, plugin or store; the message is those lines, one per line."
);

/// The native part of the `parrot_compress` package.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("BuildError", m.py().get_type::<BuildError>())?;
    m.add("RECOVERY_TOOL", parrot_recover::RECOVERY_TOOL)?;
    m.add_class::<host::PyHost>()?;
    m.add_class::<host::Compressed>()?;
    m.add_class::<request::RequestRewrite>()?;
    m.add_function(wrap_pyfunction!(request::recovery_tool, m)?)?;
    codec::register(m)?;
    // A process forked from this one (multiprocessing's `fork`, a pre-forking server) gets
    // no thread of ours in the middle of a lock. Windows has no fork, nor the function.
    if let Ok(register_at_fork) = m.py().import("os")?.getattr("register_at_fork") {
        let kwargs = pyo3::types::PyDict::new(m.py());
        kwargs.set_item("before", wrap_pyfunction!(host::before_fork, m)?)?;
        register_at_fork.call((), Some(&kwargs))?;
    }
    Ok(())
}
