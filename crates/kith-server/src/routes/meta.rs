//! `GET /v1/health`, `GET /v1/stats`, `GET /metrics` and `GET /openapi.json`.

use axum::extract::State;
use axum::http::{header, Method};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use super::{AppState, Routes};
use crate::auth::Owner;
use crate::error::{ApiError, ErrorBody};
use crate::worker::{QueueCounts, WorkerHealth};

/// Adds the group's routes.
pub fn register(routes: Routes) -> Routes {
    routes
        .add(Method::GET, "/v1/health", health)
        .add(Method::GET, "/v1/stats", stats)
        .add(Method::GET, "/openapi.json", openapi_json)
        .add(Method::GET, "/metrics", metrics)
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(
    paths(health, stats, openapi_json, metrics),
    components(schemas(Health, WorkerHealth, QueueCounts))
)]
pub struct Api;

/// The server is up.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok`.
    pub status: &'static str,
    /// kith's version.
    pub version: &'static str,
    /// The background extraction worker (counts over every owner), or
    /// null when the server runs without one.
    pub worker: Option<WorkerHealth>,
}

/// Liveness, and the extraction worker's queue; needs no key and says
/// nothing about any one owner.
#[utoipa::path(get, path = "/v1/health", tag = "meta", security(()),
    responses((status = 200, description = "The server is up", body = Health)))]
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
        worker: state.worker.as_ref().map(|w| w.health()),
    })
}

/// `GET /v1/stats`'s body: the store's counts for the owner and the
/// embedding backlog, as `kith stats --json` prints them.
#[derive(Debug, Serialize)]
pub struct OwnerStats {
    /// Events, nodes by type, edges, journal records, owners, sessions.
    #[serde(flatten)]
    pub stats: kith::Stats,
    /// The owner's notes without a vector of the memory's model yet
    /// (background embedding's backlog; 0 without an embedder).
    pub embedding_backlog: u64,
}

/// Counts of the owner's events, nodes by type, edges, journal records and
/// sessions, and how many of its notes wait for a vector.
#[utoipa::path(get, path = "/v1/stats", tag = "meta",
    responses(
        (status = 200, description = "`{events, nodes_by_type: [[type, n]], edges, operations, owners, sessions, embedding_backlog}`", body = serde_json::Value),
        (status = 401, body = ErrorBody)))]
pub async fn stats(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
) -> Result<Json<OwnerStats>, ApiError> {
    let stats = state
        .run(move |m| {
            Ok(OwnerStats {
                stats: m.stats(Some(&owner.0))?,
                embedding_backlog: m.embedding_backlog(Some(&owner.0))?,
            })
        })
        .await?;
    Ok(Json(stats))
}

/// The server's numbers in Prometheus' text format: requests and latency
/// per route, store size, embedding backlog, extraction queue, worker,
/// extraction failures. Needs no key; every number is over all owners.
#[utoipa::path(get, path = "/metrics", tag = "meta", security(()),
    responses(
        (status = 200, description = "Prometheus text format 0.0.4", body = String,
         content_type = "text/plain; version=0.0.4"),
        (status = 503, description = "The store was busy", body = ErrorBody)))]
pub async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let (stats, backlog) = state
        .run(|m| Ok((m.stats(None)?, m.embedding_backlog(None)?)))
        .await?;
    let body = crate::metrics::render(&state, Some((&stats, backlog)));
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response())
}

/// This document: the OpenAPI 3 description of every route.
#[utoipa::path(get, path = "/openapi.json", tag = "meta", security(()),
    responses((status = 200, description = "OpenAPI document", body = serde_json::Value)))]
pub async fn openapi_json() -> Json<serde_json::Value> {
    Json(super::openapi())
}
