//! `GET|POST /ui/login` and `POST /ui/logout`.
//!
//! With keys, the login form takes an API key: the session is for the
//! key's owner, exactly as a request with `Authorization: Bearer KEY`
//! would be. Without keys (loopback only), it takes an owner name, as
//! `X-Kith-Owner` does.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use kith::OwnerId;
use serde::Deserialize;

use super::html::{esc, layout, Nav};
use super::session::{clear_cookie, set_cookie};
use super::{see_other, ConsoleError, FormBody, Viewer};
use crate::auth::Auth;
use crate::routes::AppState;

/// The login form's fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginForm {
    /// The API key (a keyed server).
    #[serde(default)]
    pub key: String,
    /// The owner (a keyless server).
    #[serde(default)]
    pub owner: String,
}

/// The logout form's fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogoutForm {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: String,
}

fn login_page(auth: &Auth, message: Option<&str>) -> String {
    let error = message
        .map(|m| format!(r#"<p class="error" id="error">{}</p>"#, esc(m)))
        .unwrap_or_default();
    let field = match auth {
        Auth::Keys(_) => r#"<label>API key <input type="password" name="key" id="key" autocomplete="current-password" required autofocus></label>
<p class="muted">The key your agents use (<code>KITH_API_KEYS</code> or the keys file): you see and change only its owner's memory.</p>"#
            .to_string(),
        Auth::Open { default_owner } => format!(
            r#"<label>Owner <input type="text" name="owner" id="owner-name" value="{}" required autofocus></label>
<p class="muted">This server runs without keys (loopback only): name the owner whose memory to open.</p>"#,
            esc(default_owner.as_str())
        ),
    };
    let body = format!(
        r#"{error}<form method="post" action="/ui/login" class="login">{field}
<p><button type="submit" id="login">Log in</button></p></form>"#
    );
    layout("Log in", Nav::None, None, &body)
}

/// `GET /ui/login`.
pub async fn form(State(state): State<AppState>) -> Html<String> {
    Html(login_page(&state.auth.current(), None))
}

/// `POST /ui/login`: opens a session and sets its cookie, or answers the
/// form again with why (401), opening nothing.
pub async fn submit(
    State(state): State<AppState>,
    headers: HeaderMap,
    FormBody(form): FormBody<LoginForm>,
) -> Response {
    let auth = state.auth.current();
    let opened = match &*auth {
        Auth::Keys(keys) => {
            let key = form.key.trim();
            keys.owner_of(key)
                .cloned()
                .map(|owner| (owner, Some(crate::auth::digest(key))))
                .ok_or("That key is not one of this server's keys.".to_string())
        }
        Auth::Open { .. } => OwnerId::new(form.owner.trim())
            .map(|owner| (owner, None))
            .map_err(|e| format!("Owner: {e}")),
    };
    match opened {
        Ok((owner, digest)) => {
            tracing::info!(owner = %owner, "console: logged in");
            let token = state.console.open(owner, digest);
            let mut response = see_other("/ui");
            if let Ok(value) = set_cookie(&token, &headers).parse() {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            response
        }
        Err(why) => (
            StatusCode::UNAUTHORIZED,
            Html(login_page(&auth, Some(&why))),
        )
            .into_response(),
    }
}

/// `POST /ui/logout`: ends the session (CSRF-checked, so another site
/// cannot log the viewer out) and removes the cookie.
pub async fn logout(
    State(state): State<AppState>,
    viewer: Viewer,
    FormBody(form): FormBody<LogoutForm>,
) -> Result<Response, ConsoleError> {
    viewer.check_csrf(&form.csrf)?;
    state.console.close(&viewer.token);
    let mut response = see_other("/ui/login");
    if let Ok(value) = clear_cookie().parse() {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}
