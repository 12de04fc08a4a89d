//! API keys bound to owners, and the middleware that turns a request into
//! an [`Owner`].
//!
//! With keys, `Authorization: Bearer KEY` names the owner and nothing else
//! can: a body's `owner_id` that differs is refused (403). Without keys the
//! server is for one machine's local agents: it binds loopback only and
//! takes the owner from `X-Kith-Owner`, else the default owner.

use std::net::SocketAddr;
use std::path::Path;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kith::OwnerId;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::routes::AppState;

/// The header that names the owner when the server runs without keys.
pub const OWNER_HEADER: &str = "x-kith-owner";
/// Shortest key accepted: guessable keys are refused at start-up.
pub const MIN_KEY_LEN: usize = 16;

/// The owner a request acts for, set by the auth middleware.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner(pub OwnerId);

/// A configuration problem found at start-up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AuthError(pub String);

/// API keys and the owners they are bound to. Keys are kept only as
/// SHA-256 digests, and compared in constant time.
#[derive(Clone, Default)]
pub struct ApiKeys {
    entries: Vec<([u8; 32], OwnerId)>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material, not even digests.
        write!(f, "ApiKeys({} keys)", self.entries.len())
    }
}

impl ApiKeys {
    /// Parses `key1:owner1,key2:owner2` (the `KITH_API_KEYS` format).
    pub fn parse_env(text: &str) -> Result<ApiKeys, AuthError> {
        let mut keys = ApiKeys::default();
        for (i, pair) in text.split(',').enumerate() {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let (key, owner) = pair.split_once(':').ok_or_else(|| {
                AuthError(format!("KITH_API_KEYS entry {}: expected KEY:OWNER", i + 1))
            })?;
            keys.add(
                key.trim(),
                owner.trim(),
                &format!("KITH_API_KEYS entry {}", i + 1),
            )?;
        }
        Ok(keys)
    }

    /// Parses a keys file: one `KEY OWNER` a line; blank lines and lines
    /// starting with `#` are skipped. A file without a single key is
    /// refused: an operator who passed a keys file meant the server to be
    /// keyed, and an empty one must not quietly open it to every client.
    pub fn parse_file_text(text: &str) -> Result<ApiKeys, AuthError> {
        let mut keys = ApiKeys::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(key), Some(owner), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(AuthError(format!(
                    "keys file line {}: expected `KEY OWNER`",
                    i + 1
                )));
            };
            keys.add(key, owner, &format!("keys file line {}", i + 1))?;
        }
        if keys.is_empty() {
            return Err(AuthError(
                "the keys file holds no key (only blank lines or `#` comments); add a \
                 `KEY OWNER` line, or leave out --keys-file to run without keys on loopback"
                    .into(),
            ));
        }
        Ok(keys)
    }

    /// Reads a keys file (see [`ApiKeys::parse_file_text`]).
    pub fn from_file(path: &Path) -> Result<ApiKeys, AuthError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AuthError(format!("cannot read keys file {}: {e}", path.display())))?;
        Self::parse_file_text(&text).map_err(|e| AuthError(format!("{}: {}", path.display(), e.0)))
    }

    /// The keys a server starts with, from `KITH_API_KEYS` (`env`, when the
    /// variable is set) and a keys file. A source that is given but holds
    /// no key is an error, never "no keys": `KITH_API_KEYS=` from a
    /// template whose secret was missing must not start an open server.
    /// Neither source given: no keys (the caller runs loopback-only).
    pub fn from_sources(env: Option<&str>, file: Option<&Path>) -> Result<ApiKeys, AuthError> {
        let mut keys = match env {
            Some(text) => {
                let keys = ApiKeys::parse_env(text)?;
                if keys.is_empty() {
                    return Err(AuthError(
                        "KITH_API_KEYS is set but holds no key; set it to KEY:OWNER,… or unset \
                         it to run without keys on loopback"
                            .into(),
                    ));
                }
                keys
            }
            None => ApiKeys::default(),
        };
        if let Some(path) = file {
            keys.extend(ApiKeys::from_file(path)?)?;
        }
        Ok(keys)
    }

    /// Adds one key (refused: short, duplicate, or an invalid owner id).
    pub fn add(&mut self, key: &str, owner: &str, at: &str) -> Result<(), AuthError> {
        if key.len() < MIN_KEY_LEN {
            return Err(AuthError(format!(
                "{at}: the key is shorter than {MIN_KEY_LEN} characters"
            )));
        }
        let owner = OwnerId::new(owner).map_err(|e| AuthError(format!("{at}: owner: {e}")))?;
        let digest = digest(key);
        if self.entries.iter().any(|(d, _)| d == &digest) {
            return Err(AuthError(format!("{at}: the same key is listed twice")));
        }
        self.entries.push((digest, owner));
        Ok(())
    }

    /// Adds every key of `other`.
    pub fn extend(&mut self, other: ApiKeys) -> Result<(), AuthError> {
        for (d, o) in other.entries {
            if self.entries.iter().any(|(e, _)| e == &d) {
                return Err(AuthError("the same key is listed twice".into()));
            }
            self.entries.push((d, o));
        }
        Ok(())
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No keys at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The owner `key` is bound to. Every entry is compared, each in
    /// constant time, so timing says nothing about which key is close.
    pub fn owner_of(&self, key: &str) -> Option<&OwnerId> {
        self.owner_of_digest(&digest(key))
    }

    /// The owner the key with SHA-256 `digest` is bound to (the console's
    /// sessions keep only the digest of the key that logged in, and check
    /// it again on every request, so a key removed on SIGHUP ends them).
    pub fn owner_of_digest(&self, digest: &[u8; 32]) -> Option<&OwnerId> {
        let mut found = None;
        for (entry, owner) in &self.entries {
            if bool::from(entry.ct_eq(digest)) {
                found = Some(owner);
            }
        }
        found
    }
}

/// The SHA-256 digest keys are kept as.
pub(crate) fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// How requests are authenticated.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Every request needs a key; the key names the owner.
    Keys(ApiKeys),
    /// No keys: loopback only; the owner comes from [`OWNER_HEADER`] or
    /// this default.
    Open {
        /// The owner when the header is absent.
        default_owner: OwnerId,
    },
}

impl Auth {
    /// Refuses to expose an open (keyless) server beyond this machine.
    pub fn check_bind(&self, addr: &SocketAddr) -> Result<(), AuthError> {
        match self {
            Auth::Open { .. } if !addr.ip().is_loopback() => Err(AuthError(format!(
                "refusing to listen on {addr} without API keys: anyone who can reach it could read \
                 and write every owner's memory. Bind a loopback address (127.0.0.1 or [::1]), or \
                 set KITH_API_KEYS=KEY:OWNER,… or pass --keys-file FILE"
            ))),
            _ => Ok(()),
        }
    }
}

/// Routes anyone may call: they hold no memory. The console (`/ui`)
/// authenticates by its own session cookie ([`crate::console`]).
fn is_public(path: &str) -> bool {
    matches!(path, "/v1/health" | "/openapi.json" | "/metrics")
        || path == "/ui"
        || path.starts_with("/ui/")
}

/// Middleware: resolves the request's owner (or answers 401) and records
/// it on the response for the access log.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if is_public(req.uri().path()) {
        return next.run(req).await;
    }
    let owner = match resolve(&state.auth.current(), &req) {
        Ok(o) => o,
        Err(e) => return e.into_response(),
    };
    req.extensions_mut().insert(Owner(owner.clone()));
    let mut response = next.run(req).await;
    response.extensions_mut().insert(Owner(owner));
    response
}

fn resolve(auth: &Auth, req: &Request) -> Result<OwnerId, ApiError> {
    match auth {
        Auth::Keys(keys) => {
            let value = req
                .headers()
                .get(header::AUTHORIZATION)
                .ok_or_else(|| unauthorized("missing `Authorization: Bearer KEY`"))?;
            let key = value
                .to_str()
                .ok()
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim)
                .ok_or_else(|| unauthorized("expected `Authorization: Bearer KEY`"))?;
            keys.owner_of(key)
                .cloned()
                .ok_or_else(|| unauthorized("unknown API key"))
        }
        // A client that sends a key expects it to be checked. An open server
        // cannot check it, so it refuses the request rather than serve it
        // as if the key had been accepted (a wrong key is never ignored).
        Auth::Open { .. } if req.headers().contains_key(header::AUTHORIZATION) => {
            Err(unauthorized(
                "this server runs without API keys and cannot check the key sent; \
                 leave out the Authorization header, or start kith serve with \
                 KITH_API_KEYS or --keys-file",
            ))
        }
        Auth::Open { default_owner } => match req.headers().get(OWNER_HEADER) {
            None => Ok(default_owner.clone()),
            Some(v) => {
                let text = v
                    .to_str()
                    .map_err(|_| ApiError::invalid("X-Kith-Owner must be text"))?;
                OwnerId::new(text).map_err(|e| ApiError::invalid(format!("X-Kith-Owner: {e}")))
            }
        },
    }
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
}

/// Refuses a body that names another owner than the request's: with keys
/// the key decides, and a body cannot widen it.
pub fn check_body_owner(owner: &Owner, body_owner: Option<&str>) -> Result<(), ApiError> {
    match body_owner {
        Some(o) if o != owner.0.as_str() => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "owner_id in the body differs from the owner this request acts for; \
             leave it out (the key or X-Kith-Owner decides)",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_resolve() {
        let keys = ApiKeys::parse_env("aaaaaaaaaaaaaaaa:alice, bbbbbbbbbbbbbbbb:bob").unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys.owner_of("aaaaaaaaaaaaaaaa").unwrap().as_str(), "alice");
        assert_eq!(keys.owner_of("bbbbbbbbbbbbbbbb").unwrap().as_str(), "bob");
        assert!(keys.owner_of("cccccccccccccccc").is_none());
        assert!(keys.owner_of("").is_none());
    }

    #[test]
    fn keys_file_skips_comments_and_refuses_bad_lines() {
        let keys =
            ApiKeys::parse_file_text("# keys\n\naaaaaaaaaaaaaaaa alice\nbbbbbbbbbbbbbbbb bob\n")
                .unwrap();
        assert_eq!(keys.len(), 2);
        assert!(ApiKeys::parse_file_text("aaaaaaaaaaaaaaaa\n").is_err());
        assert!(ApiKeys::parse_file_text("short alice\n").is_err());
        assert!(ApiKeys::parse_file_text("aaaaaaaaaaaaaaaa a\naaaaaaaaaaaaaaaa b\n").is_err());
        assert!(ApiKeys::parse_env("aaaaaaaaaaaaaaaa").is_err());
    }

    #[test]
    fn keys_file_without_a_key_is_refused() {
        for text in ["", "\n\n", "# only a comment\n", "  # indented\n\n#x\n"] {
            let err = ApiKeys::parse_file_text(text).unwrap_err();
            assert!(err.0.contains("holds no key"), "{text:?}: {err}");
        }
    }

    #[test]
    fn key_sources_given_but_empty_are_refused() {
        let dir = std::env::temp_dir().join(format!("kith-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty");
        std::fs::write(&empty, "# nothing yet\n").unwrap();
        let err = ApiKeys::from_sources(None, Some(&empty)).unwrap_err();
        assert!(
            err.0.contains("holds no key") && err.0.contains("empty"),
            "{err}"
        );
        for env in ["", " ", ",", " , ,"] {
            let err = ApiKeys::from_sources(Some(env), None).unwrap_err();
            assert!(err.0.contains("KITH_API_KEYS is set"), "{env:?}: {err}");
        }
        assert!(ApiKeys::from_sources(None, None).unwrap().is_empty());
        let good = dir.join("good");
        std::fs::write(&good, "aaaaaaaaaaaaaaaa alice\n").unwrap();
        let keys = ApiKeys::from_sources(Some("bbbbbbbbbbbbbbbb:bob"), Some(&good)).unwrap();
        assert_eq!(keys.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn open_server_refuses_public_bind() {
        let auth = Auth::Open {
            default_owner: OwnerId::new("default").unwrap(),
        };
        assert!(auth.check_bind(&"127.0.0.1:7878".parse().unwrap()).is_ok());
        assert!(auth.check_bind(&"[::1]:7878".parse().unwrap()).is_ok());
        let err = auth
            .check_bind(&"0.0.0.0:7878".parse().unwrap())
            .unwrap_err();
        assert!(err.0.contains("without API keys"), "{err}");
        let keyed = Auth::Keys(ApiKeys::parse_env("aaaaaaaaaaaaaaaa:alice").unwrap());
        assert!(keyed.check_bind(&"0.0.0.0:7878".parse().unwrap()).is_ok());
    }
}
