//! kith's errors as Python exceptions: the classes live in `kith.errors`
//! (pure Python, so `kith.Client` raises the very same ones for an HTTP
//! error), one per [`kith::ErrorKind`].

use pyo3::prelude::*;

/// Why a call failed before or inside the engine.
pub enum Failure {
    /// The engine refused or failed.
    Engine(kith::Error),
    /// The request could not be read (a wrong type, an unknown field).
    Input(String),
}

impl From<kith::Error> for Failure {
    fn from(e: kith::Error) -> Self {
        Failure::Engine(e)
    }
}

impl From<kith::ValidationError> for Failure {
    fn from(e: kith::ValidationError) -> Self {
        Failure::Engine(e.into())
    }
}

/// The `kith.errors` class and the kind name for an engine error kind.
fn class_of(kind: kith::ErrorKind) -> (&'static str, &'static str) {
    use kith::ErrorKind as K;
    match kind {
        K::InvalidInput => ("InvalidInput", "invalid_input"),
        K::NotFound => ("NotFound", "not_found"),
        K::Conflict => ("Conflict", "conflict"),
        K::Busy => ("Busy", "busy"),
        K::Corrupted => ("Corrupted", "corrupted"),
        K::Io => ("StorageError", "io"),
        K::Unsupported => ("Unsupported", "unsupported"),
        K::Unavailable => ("Unavailable", "unavailable"),
        K::Upstream => ("Upstream", "upstream"),
        // `ErrorKind` is non-exhaustive: a kind added later is still a
        // kith error, with the base class.
        _ => ("KithError", "other"),
    }
}

impl Failure {
    /// The Python exception: an instance of the `kith.errors` class with
    /// the error's sentence and kind.
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        let (class, kind, message) = match self {
            Failure::Engine(e) => {
                let (class, kind) = class_of(e.kind());
                (class, kind, e.to_string())
            }
            Failure::Input(message) => ("InvalidInput", "invalid_input", message),
        };
        let made = py
            .import("kith.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|cls| cls.call1((message, kind)));
        match made {
            Ok(instance) => PyErr::from_value(instance),
            // The package is broken (kith.errors missing): say so rather
            // than lose the original error.
            Err(e) => e,
        }
    }
}

/// A request body that could not be read, as a sentence naming the call.
pub fn bad_body(call: &str, e: serde_json::Error) -> Failure {
    Failure::Input(format!("{call}: {e}"))
}
