//! Store errors, sorted into kinds the engine can act on.

use std::fmt;
use std::sync::Arc;

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

/// A store failure: a kind, a sentence saying what happened, and the
/// backend's own error when there is one (kept as the [`std::error::Error`]
/// source, so a caller can still reach SQLite's or PostgreSQL's error).
#[derive(Debug, Clone)]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl StoreError {
    /// Builds an error of `kind`.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Shorthand for a [`StoreErrorKind::Corrupted`] error.
    pub fn corrupted(message: impl Into<String>) -> Self {
        Self::new(StoreErrorKind::Corrupted, message)
    }

    /// The same error caused by `source` (the backend's error).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The same kind and source, said with `message` (e.g. prefixed with
    /// what was being done).
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
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

/// Equal when kind and sentence are: the source is detail, not identity.
impl PartialEq for StoreError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for StoreError {}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
