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

use kith::Memory;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

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
