//! MCP's Streamable HTTP transport at `/mcp` of `kith serve`: the same
//! tools as `kith mcp`, for hosted and multi-user agents. The server's auth
//! middleware runs first, so a call acts for the owner of its request's key
//! (or `X-Kith-Owner` on a keyless loopback server), exactly as a REST
//! request does; no call can name another owner.
//!
//! Stateless, with plain JSON answers: every request is complete in itself
//! (the owner comes from every request's key, not from a session), so any
//! number of servers can stand behind a load balancer.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use kith::Memory;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

use super::KithMcp;

/// The `/mcp` service. `loopback_only`: a keyless server, whose `Host`
/// header must name this machine (DNS-rebinding protection); with keys,
/// any host may be used, since every request must carry a key.
pub fn service(
    memory: Arc<Memory>,
    loopback_only: bool,
) -> StreamableHttpService<KithMcp, NeverSessionManager> {
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    config.json_response = true;
    config.sse_keep_alive = None;
    if !loopback_only {
        config.allowed_hosts = Vec::new();
    }
    config.max_request_body_bytes = crate::routes::MAX_BODY_BYTES;
    StreamableHttpService::new(
        move || Ok(KithMcp::per_request(Arc::clone(&memory))),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

/// Middleware before the MCP service: a POST body that is not JSON is
/// answered `400` with JSON-RPC's `-32700 Parse error` (null id), as over
/// stdio; rmcp itself would answer it with a plain-text 415.
pub async fn parse_errors(req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, crate::routes::MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return crate::error::ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the body is over 1 MiB",
            )
            .into_response()
        }
    };
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        let answer = json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32700, "message": format!("Parse error: {e}")},
        });
        return (StatusCode::BAD_REQUEST, Json(answer)).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
