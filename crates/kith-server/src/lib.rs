//! kith over the network: an HTTP API (`kith serve`) and an MCP server over
//! stdio (`kith mcp`), both thin layers over the [`kith::Memory`] facade.
//!
//! - [`routes`]: the `/v1` router, one module per group of endpoints, each
//!   with its OpenAPI (`/openapi.json` is generated from the code).
//! - [`auth`]: API keys bound to owners (`KITH_API_KEYS`, a keys file); a
//!   key only ever touches its own owner, and another owner's ids answer
//!   404. Without keys the server binds loopback only.
//! - [`error`]: typed error bodies `{"error": {"code", "message"}}`.
//! - [`mcp`]: the MCP tools.
//!
//! `Memory` is synchronous (SQLite): handlers call it on tokio's blocking
//! pool through an `Arc<Memory>`.

pub mod auth;
pub mod dto;
pub mod error;
pub mod listen;
mod log;
pub mod mcp;
pub mod routes;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use kith::{Memory, OwnerId};

pub use auth::{ApiKeys, Auth, AuthError};
pub use listen::{Limits, LimitsError};
pub use routes::{openapi, route_table, router};

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The auth configuration or bind address is refused.
    #[error("{0}")]
    Auth(#[from] AuthError),
    /// A connection limit or timeout cannot work.
    #[error("{0}")]
    Limits(#[from] LimitsError),
    /// Binding or serving failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The MCP session failed.
    #[error("mcp: {0}")]
    Mcp(String),
}

/// Serves the API on `listener` within the default [`Limits`] until
/// `shutdown` resolves; requests in flight then finish before this returns
/// (and the caller's last `Arc<Memory>` closes the store).
pub async fn serve(
    listener: tokio::net::TcpListener,
    memory: Arc<Memory>,
    auth: Auth,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    serve_with(listener, memory, auth, Limits::default(), shutdown).await
}

/// [`serve`] with the given timeouts and connection limit.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    memory: Arc<Memory>,
    auth: Auth,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    limits.validate()?;
    let app = router(memory, auth);
    listen::serve_with_limits(listener, app, limits, shutdown)
        .await
        .map_err(|source| ServerError::Io {
            context: "serving HTTP".into(),
            source,
        })
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        // If the handler cannot be installed, only SIGTERM stops us.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}

/// `kith serve`: checks the bind address against the auth mode, binds,
/// calls `on_listening` with the bound address, and serves until SIGINT or
/// SIGTERM. Blocks; builds its own runtime.
pub fn run_http(
    memory: Memory,
    bind: SocketAddr,
    auth: Auth,
    limits: Limits,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    auth.check_bind(&bind)?;
    limits.validate()?;
    let runtime = runtime()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .map_err(|source| ServerError::Io {
                context: format!("cannot listen on {bind}"),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Io {
            context: "cannot read the bound address".into(),
            source,
        })?;
        on_listening(addr);
        serve_with(listener, Arc::new(memory), auth, limits, shutdown_signal()).await
    })
}

/// `kith mcp`: serves MCP over stdin/stdout for `owner` until the client
/// closes the stream. Blocks; builds its own runtime.
pub fn run_mcp(memory: Memory, owner: OwnerId) -> Result<(), ServerError> {
    runtime()?.block_on(mcp::serve_stdio(Arc::new(memory), owner))
}

fn runtime() -> Result<tokio::runtime::Runtime, ServerError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| ServerError::Io {
            context: "cannot start the async runtime".into(),
            source,
        })
}
