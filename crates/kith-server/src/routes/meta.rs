//! `GET /v1/health`, `GET /v1/stats` and `GET /openapi.json`.

use axum::extract::State;
use axum::http::Method;
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
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(
    paths(health, stats, openapi_json),
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

/// Counts of the owner's events, nodes by type, edges, journal records and
/// sessions.
#[utoipa::path(get, path = "/v1/stats", tag = "meta",
    responses(
        (status = 200, description = "`{events, nodes_by_type: [[type, n]], edges, operations, owners, sessions}`", body = serde_json::Value),
        (status = 401, body = ErrorBody)))]
pub async fn stats(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
) -> Result<Json<kith::Stats>, ApiError> {
    let stats = state.run(move |m| Ok(m.stats(Some(&owner.0))?)).await?;
    Ok(Json(stats))
}

/// This document: the OpenAPI 3 description of every route.
#[utoipa::path(get, path = "/openapi.json", tag = "meta", security(()),
    responses((status = 200, description = "OpenAPI document", body = serde_json::Value)))]
pub async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(super::openapi())
}
