//! Console sessions: logging in with an API key (or, on a keyless
//! loopback server, an owner name) opens a session kept in the server's
//! memory; the browser holds only a random token in a cookie that is
//! `HttpOnly` (no script reads it) and `SameSite=Strict` (no other site's
//! page sends it). Every form that changes something carries the
//! session's CSRF token, checked in constant time.
//!
//! A session remembers the SHA-256 digest of the key that opened it, never
//! the key, and checks it against the server's keys on every request: a key
//! removed on SIGHUP ends its sessions at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use kith::OwnerId;
use subtle::ConstantTimeEq;
use uuid::Uuid;

use super::ConsoleError;
use crate::auth::{Auth, Owner};
use crate::routes::AppState;

/// The cookie's name.
pub const COOKIE: &str = "kith_console";
/// A session unused this long ends.
pub const IDLE: Duration = Duration::from_secs(8 * 3600);
/// Sessions kept at most; beyond, the least recently used one ends.
pub const MAX_SESSIONS: usize = 10_000;

/// One logged-in browser.
#[derive(Debug, Clone)]
struct Session {
    owner: OwnerId,
    /// The digest of the key that logged in (`None` on a keyless server).
    key: Option<[u8; 32]>,
    csrf: String,
    last_used: Instant,
}

/// The open sessions, by token.
#[derive(Debug, Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Session>>,
}

/// A fresh unguessable token: two random (v4) UUIDs, 244 random bits.
fn token() -> String {
    format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple())
}

impl Sessions {
    /// Opens a session for `owner` (logged in with the key of digest `key`);
    /// returns its token.
    pub fn open(&self, owner: OwnerId, key: Option<[u8; 32]>) -> String {
        let token = token();
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        map.retain(|_, s| now.duration_since(s.last_used) < IDLE);
        if map.len() >= MAX_SESSIONS {
            if let Some(oldest) = map
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(t, _)| t.clone())
            {
                map.remove(&oldest);
            }
        }
        map.insert(
            token.clone(),
            Session {
                owner,
                key,
                csrf: self::token(),
                last_used: now,
            },
        );
        token
    }

    /// Ends the session of `token`, if there is one.
    pub fn close(&self, token: &str) {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
    }

    /// The viewer of `token` when its session is open and its key still
    /// names the same owner under `auth`; otherwise the session ends.
    fn viewer(&self, token: &str, auth: &Auth) -> Option<Viewer> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let session = map.get_mut(token)?;
        let still_valid = Instant::now().duration_since(session.last_used) < IDLE
            && match (auth, &session.key) {
                (Auth::Keys(keys), Some(digest)) => {
                    keys.owner_of_digest(digest) == Some(&session.owner)
                }
                (Auth::Open { .. }, None) => true,
                _ => false,
            };
        if !still_valid {
            map.remove(token);
            return None;
        }
        session.last_used = Instant::now();
        Some(Viewer {
            owner: Owner(session.owner.clone()),
            csrf: session.csrf.clone(),
            token: token.to_string(),
        })
    }
}

/// The session token in a request's `Cookie` header, if any.
pub fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}

/// The `Set-Cookie` value that hands the browser `token`. `Secure` when the
/// request came over HTTPS through a proxy (`X-Forwarded-Proto: https`):
/// on plain-HTTP loopback a secure cookie would not be sent back.
pub fn set_cookie(token: &str, headers: &HeaderMap) -> String {
    let secure = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    format!(
        "{COOKIE}={token}; Path=/ui; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that removes the cookie.
pub fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// Who is looking at a console page: the owner of an open session.
/// Extracting it from a request without one redirects to the login page.
#[derive(Debug, Clone)]
pub struct Viewer {
    /// The owner every read and write of the page is for.
    pub owner: Owner,
    /// The session's CSRF token (for forms).
    pub csrf: String,
    /// The session's token (for logout).
    pub token: String,
}

impl Viewer {
    /// Refuses a form whose CSRF token is not this session's.
    pub fn check_csrf(&self, sent: &str) -> Result<(), ConsoleError> {
        if bool::from(sent.as_bytes().ct_eq(self.csrf.as_bytes())) {
            Ok(())
        } else {
            Err(ConsoleError::csrf())
        }
    }

    /// The page chrome for this viewer.
    pub fn chrome(&self) -> super::html::Chrome<'_> {
        super::html::Chrome {
            owner: self.owner.0.as_str(),
            csrf: &self.csrf,
        }
    }
}

impl FromRequestParts<AppState> for Viewer {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let auth = state.auth.current();
        cookie_token(&parts.headers)
            .and_then(|t| state.console.viewer(&t, &auth))
            .ok_or_else(ConsoleError::login)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::ApiKeys;

    fn owner(name: &str) -> OwnerId {
        OwnerId::new(name).expect("valid owner")
    }

    #[test]
    fn a_session_ends_when_its_key_is_gone() {
        let keys = ApiKeys::parse_env("alice-key-0123456789:alice").expect("keys");
        let sessions = Sessions::default();
        let token = sessions.open(
            owner("alice"),
            Some(crate::auth::digest("alice-key-0123456789")),
        );
        let viewer = sessions
            .viewer(&token, &Auth::Keys(keys))
            .expect("the key is known");
        assert_eq!(viewer.owner.0.as_str(), "alice");
        let other = ApiKeys::parse_env("other-key-0123456789:alice").expect("keys");
        assert!(sessions
            .viewer(&token, &Auth::Keys(other.clone()))
            .is_none());
        // Ended for good: the old key coming back does not revive it.
        let keys = ApiKeys::parse_env("alice-key-0123456789:alice").expect("keys");
        assert!(sessions.viewer(&token, &Auth::Keys(keys)).is_none());
    }

    #[test]
    fn tokens_are_unique_and_csrf_is_checked() {
        let sessions = Sessions::default();
        let open = Auth::Open {
            default_owner: owner("alice"),
        };
        let a = sessions.open(owner("alice"), None);
        let b = sessions.open(owner("bob"), None);
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        let va = sessions.viewer(&a, &open).expect("open");
        let vb = sessions.viewer(&b, &open).expect("open");
        assert_eq!(vb.owner.0.as_str(), "bob");
        assert!(va.check_csrf(&va.csrf).is_ok());
        assert!(va.check_csrf(&vb.csrf).is_err());
        assert!(va.check_csrf("").is_err());
        sessions.close(&a);
        assert!(sessions.viewer(&a, &open).is_none());
        assert!(sessions.viewer("not-a-token", &open).is_none());
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            "a=1; kith_console=abc; b=2".parse().expect("header"),
        );
        assert_eq!(cookie_token(&headers).as_deref(), Some("abc"));
        let cookie = set_cookie("abc", &headers);
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
        assert!(!cookie.contains("Secure"));
        headers.insert("x-forwarded-proto", "https".parse().expect("header"));
        assert!(set_cookie("abc", &headers).ends_with("; Secure"));
    }
}
