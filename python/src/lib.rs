//! `kith._kith`: the native half of the `kith` Python package.
//!
//! It exposes one class, `Engine`: a [`kith::Memory`] bound to an owner.
//! Requests come in and results go out as JSON text — the same shapes as
//! `kith serve`'s HTTP API (`docs/http.md`) — so the Python layer
//! (`kith/memory.py`, `kith/client.py`) turns both into the same typed
//! objects, and the same agent code runs embedded or against a server.
//! Every engine call releases the GIL; errors become the exceptions of
//! `kith.errors`, one class per [`kith::ErrorKind`].

mod bodies;
mod engine;
mod errors;

use pyo3::prelude::*;

/// The module `kith._kith`.
#[pymodule]
fn _kith(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<engine::Engine>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
