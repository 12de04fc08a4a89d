//! The facade's error: one type, a `kind()` to act on, and a sentence to show.

mod organizer;

pub use organizer::OrganizerError;

use std::path::PathBuf;

use kith_core::ValidationError;
use kith_store::{StoreError, StoreErrorKind};
use thiserror::Error as ThisError;

/// What kind of failure an [`Error`] is, for callers that branch on it
/// (an HTTP server maps these to status codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The caller's input was refused; nothing was written.
    InvalidInput,
    /// The thing asked for does not exist.
    NotFound,
    /// It exists already, or contradicts what exists.
    Conflict,
    /// The pack was busy for too long; retry.
    Busy,
    /// Stored data is damaged.
    Corrupted,
    /// The file system failed.
    Io,
    /// The pack was written by a format this kith cannot read, or kith is
    /// not set up for what was asked (no embedding model installed).
    Unsupported,
    /// A service kith depends on (an embeddings endpoint, a registry) could
    /// not be reached, timed out or asked to slow down; retry later.
    Unavailable,
    /// A service kith depends on answered, but not usefully (an HTTP error
    /// other than a rate limit, a malformed answer, a wrong vector).
    Upstream,
}

/// Problems with a memory pack directory.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum PackError {
    /// `init` on a directory that already holds something.
    #[error("{path} already exists and is not empty; choose a new directory for the pack")]
    AlreadyExists {
        /// The directory.
        path: PathBuf,
    },
    /// No manifest.
    #[error("{path} is not a kith pack (no manifest.json); create one with `kith init {path}`")]
    NotAPack {
        /// The directory.
        path: PathBuf,
    },
    /// A manifest kith cannot read at all.
    #[error("{path} has a manifest kith cannot read: {reason}")]
    UnknownFormat {
        /// The manifest file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `init --database-url` on a database that already holds a memory.
    #[error(
        "the database {url} already holds a kith memory (or events); choose an empty database"
    )]
    DatabaseInUse {
        /// The database URL, password hidden.
        url: String,
    },
    /// A database `init_database` did not make.
    #[error(
        "the database {url} holds no kith memory; create one with `kith init --database-url URL`"
    )]
    NotADatabase {
        /// The database URL, password hidden.
        url: String,
    },
    /// A newer pack format.
    #[error("pack format {found} is newer than this kith (reads 1–{supported}); upgrade kith to open {path}")]
    TooNew {
        /// The directory.
        path: PathBuf,
        /// The format it has.
        found: u64,
        /// The newest this build reads.
        supported: u64,
    },
}

/// Every way a [`crate::Memory`] call can fail.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum Error {
    /// Input refused.
    #[error("{0}")]
    Invalid(#[from] ValidationError),
    /// One line of an import refused.
    #[error("line {line}: {error}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        error: ValidationError,
    },
    /// The store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The pack directory is wrong.
    #[error("{0}")]
    Pack(#[from] PackError),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The embedding model failed or is missing, or vectors of another
    /// model are in the way. `source`, when there is one, is the embedder's
    /// own error, and decides the [`ErrorKind`].
    #[error("{message}")]
    Embedding {
        /// What happened, with the model's name.
        message: String,
        /// The embedder's error, when it reported one.
        #[source]
        source: Option<kith_embed::EmbedError>,
    },
    /// Data kith wrote earlier cannot be read back as written (a damaged
    /// journal record or saved state): the pack's problem, not the caller's.
    #[error("{0}")]
    Damaged(String),
    /// A request kith refuses as asked (a zero budget, an unknown option).
    #[error("{0}")]
    Request(String),
    /// The organizer refused or found a conflict (see [`OrganizerError`]).
    #[error("{0}")]
    Organizer(#[from] OrganizerError),
    /// A saved record names a materialisation policy this build does not
    /// have (it was saved by a newer kith).
    #[error("{0}")]
    Policy(#[from] kith_identity::UnknownPolicy),
    /// Something asked for by id does not exist.
    #[error("{what} not found")]
    NotFound {
        /// What was asked for ("event 1f0…").
        what: String,
    },
    /// A retrieval receipt that expired under the receipt retention
    /// (kind: not found).
    #[error(
        "retrieval {id} of owner {owner} has expired: receipts are kept for a limited time and \
         number, and this owner's receipts up to {expired_through} were removed \
         (`kith config show` shows the retention)"
    )]
    ReceiptExpired {
        /// The request id asked for.
        id: uuid::Uuid,
        /// Whose receipt it was.
        owner: kith_core::OwnerId,
        /// The newest creation time among the owner's expired receipts.
        expired_through: kith_core::Timestamp,
    },
}

impl Error {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Invalid(_) | Error::Line { .. } => ErrorKind::InvalidInput,
            Error::Store(e) => match e.kind() {
                StoreErrorKind::Conflict => ErrorKind::Conflict,
                StoreErrorKind::Busy => ErrorKind::Busy,
                StoreErrorKind::NotFound => ErrorKind::NotFound,
                StoreErrorKind::Corrupted => ErrorKind::Corrupted,
                StoreErrorKind::Io => ErrorKind::Io,
                StoreErrorKind::TooNew => ErrorKind::Unsupported,
                _ => ErrorKind::Io,
            },
            Error::Pack(PackError::AlreadyExists { .. }) => ErrorKind::Conflict,
            Error::Pack(PackError::NotAPack { .. }) => ErrorKind::NotFound,
            Error::Pack(PackError::DatabaseInUse { .. }) => ErrorKind::Conflict,
            Error::Pack(PackError::NotADatabase { .. }) => ErrorKind::NotFound,
            Error::Pack(_) => ErrorKind::Unsupported,
            Error::Io { .. } => ErrorKind::Io,
            Error::NotFound { .. } | Error::ReceiptExpired { .. } => ErrorKind::NotFound,
            Error::Embedding { source, .. } => embedding_kind(source.as_ref()),
            Error::Damaged(_) => ErrorKind::Corrupted,
            Error::Policy(_) => ErrorKind::Unsupported,
            Error::Request(_) => ErrorKind::InvalidInput,
            Error::Organizer(e) => match e {
                OrganizerError::ReasonRequired
                | OrganizerError::NonFinite { .. }
                | OrganizerError::InvalidAssessment { .. } => ErrorKind::InvalidInput,
                OrganizerError::DamagedRecord { .. } => ErrorKind::Corrupted,
                _ => ErrorKind::Conflict,
            },
        }
    }

    /// An [`Error::Request`]: the caller asked for something that cannot be
    /// done as asked (kind `InvalidInput`).
    pub(crate) fn request(message: impl Into<String>) -> Self {
        Error::Request(message.into())
    }

    /// An [`Error::Embedding`] that no embedder error caused.
    pub(crate) fn embedding(message: impl Into<String>) -> Self {
        Error::Embedding {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The kind of an embedding failure, from the embedder's own error: a
/// service that is down or rate limited is [`ErrorKind::Unavailable`] (retry),
/// one that answers wrongly is [`ErrorKind::Upstream`], and a model that is
/// missing or misconfigured here is [`ErrorKind::Unsupported`].
fn embedding_kind(source: Option<&kith_embed::EmbedError>) -> ErrorKind {
    use kith_embed::EmbedError as E;
    match source {
        Some(E::Transport { .. } | E::Fetch(_)) => ErrorKind::Unavailable,
        Some(E::Http { status, .. }) if *status == 429 || *status >= 500 => ErrorKind::Unavailable,
        Some(E::Http { .. } | E::BadResponse { .. }) => ErrorKind::Upstream,
        Some(E::Io { .. }) => ErrorKind::Io,
        // A model missing or misconfigured here, or an embedder that broke
        // its promises (wrong count, dimension or a non-finite value).
        _ => ErrorKind::Unsupported,
    }
}
