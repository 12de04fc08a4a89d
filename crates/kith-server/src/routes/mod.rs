//! The `/v1` router: one module per group of endpoints, each with a
//! `register` function (its routes) and an `Api` (its OpenAPI paths).
//!
//! Adding a group is one file with `register` and `Api`, listed in
//! [`GROUPS`] (`routes/organize.rs`, the organizer's endpoints, was added
//! that way).

pub mod claims;
pub mod events;
pub mod forget;
pub mod meta;
pub mod nodes;
pub mod organize;
pub mod retrieve;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::http::{Method, StatusCode};
use axum::routing::{on, MethodFilter};
use axum::Router;
use kith::Memory;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::OpenApi;

use crate::auth::Auth;
use crate::error::ApiError;

/// Largest request body accepted (413 beyond).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The engine (synchronous; called on the blocking pool).
    pub memory: Arc<Memory>,
    /// How requests are authenticated (replaced on SIGHUP).
    pub auth: Arc<crate::reload::SharedAuth>,
    /// The background worker's counters, when one runs.
    pub worker: Option<Arc<crate::worker::WorkerStats>>,
    /// Request counters for `/metrics`.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The web console's logged-in sessions.
    pub console: Arc<crate::console::Sessions>,
}

impl AppState {
    /// Runs `f` on tokio's blocking pool: `Memory` is synchronous SQLite,
    /// and a write may wait for the lock, which must not stall the reactor.
    pub async fn run<T, F>(&self, f: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Memory) -> Result<T, ApiError> + Send + 'static,
    {
        let memory = Arc::clone(&self.memory);
        tokio::task::spawn_blocking(move || f(&memory))
            .await
            .map_err(|e| ApiError::internal(format!("the request's task failed: {e}")))?
    }
}

/// A router under construction that remembers every `(method, path)` it
/// serves, so a test can check each one is documented.
pub struct Routes {
    router: Router<AppState>,
    table: Vec<(Method, &'static str)>,
}

impl Routes {
    fn new() -> Self {
        Routes {
            router: Router::new(),
            table: Vec::new(),
        }
    }

    /// Serves `handler` for `method` at `path` (axum path syntax, which is
    /// also OpenAPI's: `/v1/events/{id}`).
    pub fn add<H, T>(mut self, method: Method, path: &'static str, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(method.clone())
            .expect("routes use only standard methods, which MethodFilter knows");
        self.router = self.router.route(path, on(filter, handler));
        self.table.push((method, path));
        self
    }
}

/// One group of endpoints: how it registers its routes, and its OpenAPI.
pub struct Group {
    /// Adds the group's routes.
    pub register: fn(Routes) -> Routes,
    /// The group's OpenAPI paths and schemas.
    pub openapi: fn() -> utoipa::openapi::OpenApi,
}

/// Every group the server has.
pub const GROUPS: &[Group] = &[
    Group {
        register: meta::register,
        openapi: <meta::Api as OpenApi>::openapi,
    },
    Group {
        register: events::register,
        openapi: <events::Api as OpenApi>::openapi,
    },
    Group {
        register: retrieve::register,
        openapi: <retrieve::Api as OpenApi>::openapi,
    },
    Group {
        register: nodes::register,
        openapi: <nodes::Api as OpenApi>::openapi,
    },
    Group {
        register: organize::register,
        openapi: <organize::Api as OpenApi>::openapi,
    },
    Group {
        register: forget::register,
        openapi: <forget::Api as OpenApi>::openapi,
    },
    Group {
        register: claims::register,
        openapi: <claims::Api as OpenApi>::openapi,
    },
];

fn all_routes() -> Routes {
    GROUPS
        .iter()
        .fold(Routes::new(), |routes, g| (g.register)(routes))
}

/// Every `(method, path)` the router serves.
pub fn route_table() -> Vec<(Method, &'static str)> {
    all_routes().table
}

/// The application: routes, auth, body limit, typed 404/405, access log.
pub fn router(memory: Arc<Memory>, auth: Auth) -> Router {
    router_with(memory, Arc::new(crate::reload::SharedAuth::new(auth)), None)
}

/// [`router`] with auth that may be replaced while it serves, showing a
/// background worker's counters in `/v1/health` and `/metrics`.
pub fn router_with(
    memory: Arc<Memory>,
    auth: Arc<crate::reload::SharedAuth>,
    worker: Option<Arc<crate::worker::WorkerStats>>,
) -> Router {
    let loopback_only = matches!(*auth.current(), Auth::Open { .. });
    let mcp = crate::mcp::http::service(Arc::clone(&memory), loopback_only);
    let state = AppState {
        memory,
        auth,
        worker,
        metrics: Arc::default(),
        console: Arc::default(),
    };
    all_routes()
        .router
        // The web console: HTML pages with their own session login.
        .merge(crate::console::router())
        // MCP's Streamable HTTP transport, behind the same auth.
        .route(
            "/mcp",
            axum::routing::any_service(mcp)
                .layer(axum::middleware::from_fn(crate::mcp::http::parse_errors)),
        )
        .fallback(|| async { ApiError::not_found("no such route; see /openapi.json") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this route does not take that method; see /openapi.json",
            )
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::metrics::record,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(crate::log::access_log))
        .with_state(state)
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "kith",
        description = "Long-term memory for LLM agents. Every request acts for one owner: the \
                       owner bound to its API key (`Authorization: Bearer KEY`), or, on a server \
                       without keys, `X-Kith-Owner` or the default owner. Errors are \
                       `{\"error\": {\"code\", \"message\"}}`."
    ),
    components(schemas(crate::error::ErrorBody, crate::error::ErrorDetail)),
    security(("bearer" = []))
)]
struct Root;

/// The OpenAPI document `/openapi.json` serves: utoipa's, completed by
/// [`crate::apidoc`] (answer schemas, operation ids, descriptions).
pub fn openapi() -> serde_json::Value {
    crate::apidoc::finish(&generated_openapi())
}

/// What utoipa generates from the code of every group.
fn generated_openapi() -> utoipa::openapi::OpenApi {
    let mut doc = Root::openapi();
    for g in GROUPS {
        doc.merge((g.openapi)());
    }
    if let Some(components) = doc.components.as_mut() {
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}
