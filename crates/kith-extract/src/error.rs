//! Extraction errors: one variant per way a provider call or reply can fail.

use thiserror::Error;

/// Why an extraction failed. The event is always kept; the work item records
/// [`ExtractError::reason_code`] and the message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// The endpoint answered with a non-success HTTP status.
    #[error("{endpoint} answered HTTP {status}: {body}")]
    Http {
        /// The URL called.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// No answer in time.
    #[error("{endpoint} did not answer within {seconds} s")]
    Timeout {
        /// The URL called.
        endpoint: String,
        /// The timeout that ran out.
        seconds: u64,
    },
    /// The connection failed.
    #[error("cannot reach {endpoint}: {reason}")]
    Connect {
        /// The URL called.
        endpoint: String,
        /// The transport's explanation.
        reason: String,
    },
    /// The reply had no message content to parse.
    #[error("{endpoint} returned no message content")]
    EmptyReply {
        /// The URL called.
        endpoint: String,
    },
    /// The reply text is not JSON.
    #[error("the extraction is not valid JSON: {reason}")]
    InvalidJson {
        /// The parser's explanation.
        reason: String,
    },
    /// The reply is JSON but does not follow the extraction schema.
    #[error("the extraction does not follow the schema at {path}: {reason}")]
    Malformed {
        /// Where (`facts[2].polarity`).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The provider is not configured well enough to call.
    #[error("the extraction provider is misconfigured: {reason}")]
    Config {
        /// What is missing or wrong, and how to fix it.
        reason: String,
    },
}

impl ExtractError {
    /// A short, stable code for status displays and metrics.
    pub fn reason_code(&self) -> &'static str {
        match self {
            ExtractError::Http { .. } => "http_status",
            ExtractError::Timeout { .. } => "timeout",
            ExtractError::Connect { .. } => "connect",
            ExtractError::EmptyReply { .. } => "empty_reply",
            ExtractError::InvalidJson { .. } => "invalid_json",
            ExtractError::Malformed { .. } => "schema",
            ExtractError::Config { .. } => "config",
        }
    }

    /// Whether calling again may succeed (transport failures, 429 and 5xx).
    pub fn is_retryable(&self) -> bool {
        match self {
            ExtractError::Http { status, .. } => *status == 429 || *status >= 500,
            ExtractError::Timeout { .. } | ExtractError::Connect { .. } => true,
            _ => false,
        }
    }
}
