//! Typed error bodies: every failure answers
//! `{"error": {"code": "...", "message": "..."}}` with a status that says
//! what the client can do about it.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;
use utoipa::ToSchema;

/// The body of every error response.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What went wrong: a stable machine code and a sentence for people.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// One of `invalid_json`, `invalid_input`, `unauthorized`, `forbidden`,
    /// `not_found`, `method_not_allowed`, `payload_too_large`, `request_timeout`,
    /// `unsupported_media_type`, `conflict`, `busy`, `corrupted`,
    /// `unsupported`, `unavailable` (503: a service kith depends on, such as
    /// an embeddings endpoint, is down or rate limited), `upstream` (502: it
    /// answered wrongly), `internal`; the organizer's refusals have their own:
    /// `review_conflict`, `stale_proposal`, `undo_refused`, `copy_conflict`
    /// (409) and `reason_required` (422).
    pub code: String,
    /// A readable explanation (never a key, never another owner's data).
    pub message: String,
}

/// An HTTP error: a status, a code and a message.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The machine code (see [`ErrorDetail::code`]).
    pub code: &'static str,
    /// The sentence.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 422: the request was well-formed JSON but kith refuses it.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_input", message)
    }

    /// 404 with a generic message.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 500: something on the server's side.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// The response body.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message.clone(),
            },
        }
    }
}

impl From<kith::Error> for ApiError {
    fn from(e: kith::Error) -> Self {
        use kith::ErrorKind as K;
        if let Some(code) = organizer_code(&e) {
            let status = match code {
                "reason_required" | "invalid_assessment" => StatusCode::UNPROCESSABLE_ENTITY,
                _ => StatusCode::CONFLICT,
            };
            return ApiError::new(status, code, e.to_string());
        }
        let (status, code) = match e.kind() {
            K::InvalidInput => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_input"),
            K::NotFound => (StatusCode::NOT_FOUND, "not_found"),
            K::Conflict => (StatusCode::CONFLICT, "conflict"),
            K::Busy => (StatusCode::SERVICE_UNAVAILABLE, "busy"),
            K::Corrupted => (StatusCode::INTERNAL_SERVER_ERROR, "corrupted"),
            K::Unsupported => (StatusCode::INTERNAL_SERVER_ERROR, "unsupported"),
            // A service kith depends on is down or rate limited: retry.
            K::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            // A service kith depends on answered wrongly.
            K::Upstream => (StatusCode::BAD_GATEWAY, "upstream"),
            // Io and any kind added later: the server's problem, not the
            // client's.
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        if status.is_server_error() {
            tracing::error!(code, error = %e, "request failed");
        }
        ApiError::new(status, code, e.to_string())
    }
}

/// The organizer's refusals a client acts on, each with its own code (the
/// rest keep their kind's generic code).
fn organizer_code(e: &kith::Error) -> Option<&'static str> {
    use kith::OrganizerError as O;
    let kith::Error::Organizer(o) = e else {
        return None;
    };
    match o {
        O::ReviewConflict { .. } => Some("review_conflict"),
        O::StaleProposal { .. } => Some("stale_proposal"),
        O::ReasonRequired => Some("reason_required"),
        O::UndoRefused { .. } => Some("undo_refused"),
        O::CopyConflict { .. } => Some("copy_conflict"),
        O::NotAdmitted { .. } => Some("not_admitted"),
        O::InvalidAssessment { .. } => Some("invalid_assessment"),
        O::Forgotten { .. } => Some("forgotten"),
        _ => None,
    }
}

impl From<kith::ValidationError> for ApiError {
    fn from(e: kith::ValidationError) -> Self {
        ApiError::invalid(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        match self.status {
            StatusCode::SERVICE_UNAVAILABLE => {
                // The pack was busy: the write lock frees in well under a
                // second for every write kith does. A service kith depends
                // on gets longer to recover.
                let after = if self.code == "unavailable" { "5" } else { "1" };
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static(after));
            }
            StatusCode::UNAUTHORIZED => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            _ => {}
        }
        response
    }
}

/// A JSON body whose rejections are [`ApiError`]s: a syntax error is 400
/// `invalid_json`, an unknown or missing field or a wrong type is 422
/// `invalid_input`, a body over the size limit is 413, a missing
/// `Content-Type: application/json` is 415.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // A declared length over the limit is refused before any of the body
        // is read, so the client hears 413 at once instead of after uploading.
        let declared = req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > crate::routes::MAX_BODY_BYTES as u64) {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!(
                    "the request body declares {} bytes; the limit is {} bytes",
                    declared.unwrap_or_default(),
                    crate::routes::MAX_BODY_BYTES
                ),
            ));
        }
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(JsonBody(v)),
            Err(r) => Err(json_rejection(r)),
        }
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    if let Some(timeout) = body_timeout(&r) {
        return ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!("{timeout}; send the whole body at once, or retry"),
        );
    }
    let status = r.status();
    let code = match &r {
        JsonRejection::JsonDataError(_) => "invalid_input",
        JsonRejection::JsonSyntaxError(_) => "invalid_json",
        JsonRejection::MissingJsonContentType(_) => "unsupported_media_type",
        _ if status == StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        _ => "invalid_json",
    };
    ApiError::new(status, code, r.body_text())
}

/// The body-read timeout behind a rejection, if that is what it was
/// (it reaches the extractor as a failure to buffer the body).
fn body_timeout(r: &JsonRejection) -> Option<&crate::listen::BodyTimeout> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(r);
    while let Some(e) = source {
        if let Some(t) = e.downcast_ref::<crate::listen::BodyTimeout>() {
            return Some(t);
        }
        source = e.source();
    }
    None
}

/// Query parameters whose rejections are [`ApiError`]s (422
/// `invalid_input`, unknown parameters included).
#[derive(Debug, Clone)]
pub struct QueryParams<T>(pub T);

impl<S, T> FromRequestParts<S> for QueryParams<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(QueryParams(v)),
            Err(r) => Err(query_rejection(r)),
        }
    }
}

fn query_rejection(r: QueryRejection) -> ApiError {
    ApiError::invalid(r.body_text())
}

/// An id in the path; a malformed one is 404, as an id that names nothing.
#[derive(Debug, Clone, Copy)]
pub struct PathId(pub uuid::Uuid);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(raw): axum::extract::Path<String> =
            axum::extract::Path::from_request_parts(parts, state)
                .await
                .map_err(|_| ApiError::not_found("no such id"))?;
        uuid::Uuid::parse_str(&raw)
            .map(PathId)
            .map_err(|_| ApiError::not_found(format!("{raw:?} is not an id kith issued")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith::embed::EmbedError;
    use kith::{StoreError, StoreErrorKind};

    fn embedding(source: EmbedError) -> kith::Error {
        kith::Error::Embedding {
            message: format!("embedding with test-model: {source}"),
            source: Some(source),
        }
    }

    fn http(status: u16) -> EmbedError {
        EmbedError::Http {
            url: "http://127.0.0.1:1/v1/embeddings".into(),
            status,
            body: "slow down".into(),
        }
    }

    /// Every kind of engine error answers the status that says what the
    /// client can do: its own fault (4xx), retry (503 with Retry-After), or
    /// the server's or an upstream's fault (5xx).
    #[test]
    fn each_error_kind_has_its_status() {
        let store = |kind| kith::Error::Store(StoreError::new(kind, "store said no"));
        let cases: Vec<(kith::Error, StatusCode, &str, Option<&str>)> = vec![
            (
                kith::Error::Request("a zero budget".into()),
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_input",
                None,
            ),
            (
                kith::Error::NotFound {
                    what: "event 1".into(),
                },
                StatusCode::NOT_FOUND,
                "not_found",
                None,
            ),
            (
                store(StoreErrorKind::Conflict),
                StatusCode::CONFLICT,
                "conflict",
                None,
            ),
            (
                store(StoreErrorKind::Busy),
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                Some("1"),
            ),
            (
                store(StoreErrorKind::Corrupted),
                StatusCode::INTERNAL_SERVER_ERROR,
                "corrupted",
                None,
            ),
            (
                store(StoreErrorKind::Io),
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                None,
            ),
            (
                store(StoreErrorKind::TooNew),
                StatusCode::INTERNAL_SERVER_ERROR,
                "unsupported",
                None,
            ),
            // A damaged journal is the pack's problem, never the caller's.
            (
                kith::Error::Damaged("journal record: EOF".into()),
                StatusCode::INTERNAL_SERVER_ERROR,
                "corrupted",
                None,
            ),
            (
                embedding(EmbedError::ModelMissing { searched: vec![] }),
                StatusCode::INTERNAL_SERVER_ERROR,
                "unsupported",
                None,
            ),
            // An embeddings endpoint that rate limits, fails or cannot be
            // reached: retry later (it used to be a 500 "unsupported").
            (
                embedding(http(429)),
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                Some("5"),
            ),
            (
                embedding(http(502)),
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                Some("5"),
            ),
            (
                embedding(EmbedError::Transport {
                    url: "http://127.0.0.1:1".into(),
                    reason: "connection refused".into(),
                }),
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                Some("5"),
            ),
            // It answered, wrongly: a bad gateway.
            (
                embedding(http(401)),
                StatusCode::BAD_GATEWAY,
                "upstream",
                None,
            ),
            (
                embedding(EmbedError::BadResponse {
                    url: "test-model".into(),
                    reason: "2 vectors for 1 text".into(),
                }),
                StatusCode::BAD_GATEWAY,
                "upstream",
                None,
            ),
        ];
        for (error, status, code, retry_after) in cases {
            let shown = error.to_string();
            let api = ApiError::from(error);
            assert_eq!((api.status, api.code), (status, code), "{shown}");
            assert_eq!(api.message, shown, "the sentence is the engine's");
            let response = api.into_response();
            let header = response
                .headers()
                .get(header::RETRY_AFTER)
                .map(|v| v.to_str().unwrap().to_string());
            assert_eq!(header.as_deref(), retry_after, "{shown}");
        }
    }
}
