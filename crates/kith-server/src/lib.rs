//! kith over the network: an HTTP API (`kith serve`) and MCP, over stdio
//! (`kith mcp`) and Streamable HTTP (`/mcp` of `kith serve`), all thin
//! layers over the [`kith::Memory`] facade.
//!
//! - [`routes`]: the `/v1` router, one module per group of endpoints, each
//!   with its OpenAPI; [`apidoc`] completes the document `/openapi.json`
//!   serves (answer schemas, operation ids, descriptions).
//! - [`auth`]: API keys bound to owners (`KITH_API_KEYS`, a keys file); a
//!   key only ever touches its own owner, and another owner's ids answer
//!   404. Without keys the server binds loopback only. [`reload`]: the keys
//!   read again on SIGHUP.
//! - [`error`]: typed error bodies `{"error": {"code", "message"}}`.
//! - [`mcp`]: the MCP tools and both transports.
//! - [`worker`]: the background extraction worker; [`metrics`]: `/metrics`;
//!   [`compact`]: the compact retrieval.
//! - [`console`]: the web console at `/ui` (server-rendered pages, a
//!   session cookie opened with an API key, CSRF-protected forms).
//!
//! `Memory` is synchronous (SQLite): handlers call it on tokio's blocking
//! pool through an `Arc<Memory>`.

pub mod apidoc;
pub mod auth;
pub mod compact;
pub mod console;
pub mod dto;
pub mod error;
pub mod listen;
mod log;
pub mod mcp;
pub mod metrics;
pub mod reload;
pub mod routes;
pub mod worker;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use kith::{Memory, OwnerId};

pub use auth::{ApiKeys, Auth, AuthError};
pub use listen::{Limits, LimitsError};
pub use routes::{openapi, route_table, router, router_with};

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
/// (and the caller's last `Arc<Memory>` closes the store). No background
/// worker.
pub async fn serve(
    listener: tokio::net::TcpListener,
    memory: Arc<Memory>,
    auth: Auth,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    serve_with(listener, memory, auth, ServeOptions::default(), shutdown).await
}

/// What a server runs beside its routes, and its connection limits.
#[derive(Clone, Default)]
pub struct ServeOptions {
    /// The background extraction worker ([`worker`]); `None`: no worker.
    pub worker: Option<worker::WorkerConfig>,
    /// Reads the API keys again on SIGHUP ([`reload`]); `None`: keys
    /// change only by a restart.
    pub reload_keys: Option<reload::KeyLoader>,
    /// Timeouts, the connection limit and request-size bounds.
    pub limits: Limits,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("worker", &self.worker)
            .field("reload_keys", &self.reload_keys.is_some())
            .field("limits", &self.limits)
            .finish()
    }
}

/// [`serve`] with options. On shutdown, the server stops accepting,
/// finishes the requests in flight, then the worker finishes the items it
/// runs (it takes nothing new).
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    memory: Arc<Memory>,
    auth: Auth,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    serve_announced(listener, memory, auth, options, shutdown, || {}).await
}

/// [`serve_with`] that calls `ready` once every signal handler is installed
/// and just before the first connection is accepted: whoever learns the
/// address from `ready` may signal the process at once.
async fn serve_announced(
    listener: tokio::net::TcpListener,
    memory: Arc<Memory>,
    auth: Auth,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(),
) -> Result<(), ServerError> {
    options.limits.validate()?;
    let worker = options
        .worker
        .map(|config| worker::Worker::start(Arc::clone(&memory), config));
    let auth = Arc::new(reload::SharedAuth::new(auth));
    let reloader = options
        .reload_keys
        .map(|loader| tokio::spawn(reload::on_sighup(Arc::clone(&auth), loader)));
    let app = routes::router_with(memory, auth, worker.as_ref().map(|w| w.stats()));
    ready();
    let served = listen::serve_with_limits(listener, app, options.limits, shutdown)
        .await
        .map_err(|source| ServerError::Io {
            context: "serving HTTP".into(),
            source,
        });
    if let Some(reloader) = reloader {
        reloader.abort();
    }
    if let Some(worker) = worker {
        worker.shutdown().await;
    }
    served
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM. The handlers are installed by
/// this call, not when the future is first polled, so a signal sent as soon
/// as the caller goes on is not lost (nor does it kill the process with
/// SIGTERM's default action). Call it inside the runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let stops = {
        use tokio::signal::unix::{signal, SignalKind};
        (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        )
    };
    async move {
        #[cfg(unix)]
        {
            // A handler that cannot be installed leaves the other one.
            let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
                match s {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending::<()>().await,
                }
            };
            let (int, term) = stops;
            tokio::select! {
                () = wait(int) => {},
                () = wait(term) => {},
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        tracing::info!("shutting down: finishing requests in flight");
    }
}

/// `kith serve`: checks the bind address against the auth mode, binds,
/// installs the signal handlers, calls `on_listening` with the bound
/// address, and serves until SIGINT or SIGTERM. Blocks; builds its own
/// runtime.
pub fn run_http(
    memory: Memory,
    bind: SocketAddr,
    auth: Auth,
    options: ServeOptions,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    auth.check_bind(&bind)?;
    options.limits.validate()?;
    let runtime = runtime()?;
    // This function keeps the last reference to the memory, dropped after
    // the runtime: closing a PostgreSQL store blocks on the driver's own
    // runtime, which panics (and aborts the process at SIGTERM) on a thread
    // that is driving this one.
    let memory = Arc::new(memory);
    let served = Arc::clone(&memory);
    let result = runtime.block_on(async move {
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
        let shutdown = shutdown_signal();
        serve_announced(listener, served, auth, options, shutdown, || {
            on_listening(addr)
        })
        .await
    });
    drop(runtime);
    drop(memory);
    result
}

/// `kith mcp`: serves MCP over stdin/stdout for `owner` until the client
/// closes the stream. The memory comes from `source`: a memory that cannot
/// be opened makes every tool call answer `unavailable: …` instead of
/// ending the process. Blocks; builds its own runtime.
pub fn run_mcp(source: mcp::source::MemorySource, owner: OwnerId) -> Result<(), ServerError> {
    runtime()?.block_on(mcp::serve_stdio(source, owner))
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
