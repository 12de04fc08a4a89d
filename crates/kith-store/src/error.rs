//! Store errors, sorted into kinds the engine can act on.

use std::fmt;

/// What went wrong, in terms the engine can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// Something with that identity exists already.
    Conflict,
    /// Another writer held the lock too long; retrying later may work.
    Busy,
    /// The thing asked for does not exist.
    NotFound,
    /// Stored data is damaged or unreadable.
    Corrupted,
    /// The file system or network failed.
    Io,
    /// The store was written by a newer kith.
    TooNew,
    /// Anything else the backend reported.
    Other,
}

/// A store failure: a kind, and a sentence saying what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
}

impl StoreError {
    /// Builds an error of `kind`.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// Shorthand for a [`StoreErrorKind::Corrupted`] error.
    pub fn corrupted(message: impl Into<String>) -> Self {
        Self::new(StoreErrorKind::Corrupted, message)
    }

    /// The kind of failure.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// The sentence describing it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}
