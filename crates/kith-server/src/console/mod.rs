//! The web console at `/ui`: server-rendered pages over the same
//! [`kith::Memory`] and the same per-owner keys as the API, for the person
//! behind an agent to browse its memory, review the alias inbox, undo and
//! forget.
//!
//! - [`session`]: log in with a key, a session cookie (`HttpOnly`,
//!   `SameSite=Strict`), CSRF tokens on every form.
//! - [`html`]: escaping (memory text is hostile input) and the page layout.
//! - One module per page: [`login`], [`overview`], [`conversation`] (sessions
//!   as timelines, a turn, search), [`ask`], [`entities`] (people and things,
//!   with [`graph`] drawing a neighbourhood), [`inbox`], [`journal`],
//!   [`forget`] (forget turns and sessions, retract and correct claims).
//! - [`assets`]: the stylesheet and script, embedded in the binary.
//!
//! Every page reads and writes only the session's owner: ids of another
//! owner answer 404, exactly as over the API. Lists are paged, so a page
//! reads a bounded number of rows whatever the pack's size.

pub mod ask;
pub mod assets;
pub mod conversation;
pub mod entities;
pub mod forget;
pub mod graph;
pub mod html;
pub mod inbox;
pub mod journal;
pub mod login;
pub mod overview;
pub mod session;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::routes::AppState;
pub use session::{Sessions, Viewer};

/// Rows per page of every list.
pub const PAGE: usize = 50;

/// The console's routes (all under `/ui`), with their security headers
/// and the cross-origin check on forms.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/ui", get(overview::page))
        .route("/ui/login", get(login::form).post(login::submit))
        .route("/ui/logout", post(login::logout))
        .route("/ui/assets/{name}", get(assets::serve))
        .route("/ui/conversation", get(conversation::page))
        .route("/ui/turns/{id}", get(conversation::turn))
        .route("/ui/ask", get(ask::form).post(ask::submit))
        .route("/ui/entities", get(entities::list))
        .route("/ui/nodes/{id}", get(entities::node))
        .route("/ui/inbox", get(inbox::page))
        .route("/ui/inbox/{op}/review", post(inbox::review))
        .route("/ui/journal", get(journal::page))
        .route("/ui/journal/{op}/undo", post(journal::undo))
        .route("/ui/forget", post(forget::forget))
        .route("/ui/claims/{id}/retract", post(forget::retract))
        .route("/ui/claims/{id}/correct", post(forget::correct))
        .route("/ui/claims/{id}/rebind", post(forget::rebind))
        .route("/ui/{*rest}", get(no_such_page))
        .layer(axum::middleware::from_fn(guard))
}

/// Any other path under `/ui`: an HTML 404, not the API's JSON one.
async fn no_such_page() -> ConsoleError {
    ConsoleError::new(StatusCode::NOT_FOUND, "There is no such page.")
}

/// Middleware: refuses a form posted from another origin (a browser names
/// the page's origin in `Origin`; it must be this server's), then adds the
/// headers every console answer carries: a strict content security policy
/// (scripts and styles only from `/ui/assets`, no inline script, no
/// framing), no caching, no MIME sniffing.
async fn guard(req: Request, next: Next) -> Response {
    if req.method() == Method::POST && !same_origin(req.headers()) {
        return ConsoleError::new(
            StatusCode::FORBIDDEN,
            "This form was sent from another site, so it was refused.",
        )
        .into_response();
    }
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// Whether a request's `Origin` (when it has one) is the server's own:
/// its host and port equal the `Host` header's. A request without `Origin`
/// (not from a browser page) still needs the CSRF token.
fn same_origin(headers: &axum::http::HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin.to_str().ok().and_then(|o| {
        o.strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"))
    });
    matches!((origin_host, host), (Some(o), Some(h)) if o.eq_ignore_ascii_case(h))
}

/// Why a console request failed: not logged in (to the login page), or a
/// page saying what went wrong with the status the API would answer.
#[derive(Debug)]
pub enum ConsoleError {
    /// No open session: to the login page.
    Login,
    /// An error page.
    Page {
        /// The HTTP status.
        status: StatusCode,
        /// What went wrong, for people.
        message: String,
    },
}

impl ConsoleError {
    /// An error page with this status and sentence.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ConsoleError::Page {
            status,
            message: message.into(),
        }
    }

    /// To the login page.
    pub fn login() -> Self {
        ConsoleError::Login
    }

    /// A form without this session's CSRF token.
    pub fn csrf() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "This form's security token does not match your session (an old tab, or a form \
             from another site), so nothing was changed. Reload the page and try again.",
        )
    }
}

impl From<ApiError> for ConsoleError {
    fn from(e: ApiError) -> Self {
        Self::new(e.status, e.message)
    }
}

impl From<kith::Error> for ConsoleError {
    fn from(e: kith::Error) -> Self {
        ApiError::from(e).into()
    }
}

impl From<kith::ValidationError> for ConsoleError {
    fn from(e: kith::ValidationError) -> Self {
        ApiError::from(e).into()
    }
}

impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        match self {
            ConsoleError::Login => Redirect::to("/ui/login").into_response(),
            ConsoleError::Page { status, message } => {
                let title = status.canonical_reason().unwrap_or("Error");
                let body = format!(
                    r#"<p class="error" id="error">{}</p><p><a href="/ui">Back to the overview</a></p>"#,
                    html::esc(&message)
                );
                let page = html::layout(title, html::Nav::None, None, &body);
                (status, axum::response::Html(page)).into_response()
            }
        }
    }
}

/// A page's HTML answer.
pub type PageResult = Result<axum::response::Html<String>, ConsoleError>;

/// Runs `f` on the blocking pool (the engine is synchronous), mapping its
/// errors to an error page.
pub async fn run<T, F>(state: &AppState, f: F) -> Result<T, ConsoleError>
where
    T: Send + 'static,
    F: FnOnce(&kith::Memory) -> Result<T, ConsoleError> + Send + 'static,
{
    let memory = std::sync::Arc::clone(&state.memory);
    tokio::task::spawn_blocking(move || f(&memory))
        .await
        .map_err(|e| ConsoleError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// Query parameters whose rejection is an error page (422).
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Params(q.0))
            .map_err(|r| ConsoleError::new(StatusCode::UNPROCESSABLE_ENTITY, r.body_text()))
    }
}

/// A posted form whose rejection is an error page (422).
pub struct FormBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for FormBody<T> {
    type Rejection = ConsoleError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        axum::Form::<T>::from_request(req, state)
            .await
            .map(|f| FormBody(f.0))
            .map_err(|r| ConsoleError::new(r.status(), r.body_text()))
    }
}

/// An id in a console path; a malformed one is 404.
pub struct IdPath(pub uuid::Uuid);

impl<S: Send + Sync> FromRequestParts<S> for IdPath {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        crate::error::PathId::from_request_parts(parts, state)
            .await
            .map(|p| IdPath(p.0))
            .map_err(ConsoleError::from)
    }
}

/// A 303 to `location` (after a form: the browser then GETs it).
pub fn see_other(location: &str) -> Response {
    Redirect::to(location).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    #[test]
    fn origin_must_be_this_host() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "127.0.0.1:7878".parse().expect("header"));
        assert!(same_origin(&h), "no Origin: left to the CSRF token");
        h.insert(
            header::ORIGIN,
            "http://127.0.0.1:7878".parse().expect("header"),
        );
        assert!(same_origin(&h));
        h.insert(
            header::ORIGIN,
            "http://evil.example".parse().expect("header"),
        );
        assert!(!same_origin(&h));
        h.insert(header::ORIGIN, "null".parse().expect("header"));
        assert!(!same_origin(&h));
    }
}
