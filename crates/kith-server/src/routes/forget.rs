//! Forgetting (`DELETE /v1/events/{id}`, `/v1/sessions/{id}`, `/v1/owner`):
//! the request's own owner only, a `reason` in the query, `dry_run=true`
//! to list what would go. The report says what was erased, compacted and
//! verified (docs/forget.md).

use axum::extract::State;
use axum::http::Method;
use axum::{Extension, Json};
use kith::{ForgetReport, ForgetRequest, ForgetSelector, Memory, SessionId};
use serde::Deserialize;
use utoipa::{IntoParams, OpenApi};

use super::{AppState, Routes};
use crate::auth::Owner;
use crate::dto::ForgetBody;
use crate::error::{ApiError, ErrorBody, PathId, QueryParams};

/// Adds the group's routes.
pub fn register(routes: Routes) -> Routes {
    routes
        .add(Method::DELETE, "/v1/events/{id}", forget_event)
        .add(Method::DELETE, "/v1/sessions/{id}", forget_session)
        .add(Method::DELETE, "/v1/owner", forget_owner)
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(
    paths(forget_event, forget_session, forget_owner),
    components(schemas(ForgetBody))
)]
pub struct Api;

/// Why, and whether only to look.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ForgetParams {
    /// Why (required; kept in every tombstone and the FORGOTTEN record).
    pub reason: String,
    /// List what would go; write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Runs one request for `owner` (shared with MCP's `memory_forget`).
pub fn forget(m: &Memory, owner: &Owner, req: ForgetRequest) -> Result<ForgetReport, ApiError> {
    Ok(m.forget(&owner.0, &req)?)
}

/// Runs a `ForgetBody` (MCP).
pub fn forget_body(m: &Memory, owner: &Owner, body: ForgetBody) -> Result<ForgetReport, ApiError> {
    forget(m, owner, body.into_request()?)
}

const REPORT: &str = "`{dry_run, operation_id, events, already_forgotten, nodes_deleted, \
    nodes_updated, edges_deleted, vectors_deleted, notes_reembedded, work_items_deleted, \
    journal_records_scrubbed, compaction, verification}`";

fn request(selector: ForgetSelector, p: ForgetParams) -> ForgetRequest {
    ForgetRequest {
        selector,
        reason: p.reason,
        dry_run: p.dry_run,
    }
}

/// Forgets one event: it stays in the log as a tombstone (content, speaker
/// and metadata erased); what was derived only from it goes; journal
/// records quoting it are scrubbed. Another owner's event is 404.
#[utoipa::path(delete, path = "/v1/events/{id}", tag = "forget",
    params(("id" = uuid::Uuid, Path, description = "Event id"), ForgetParams),
    responses(
        (status = 200, description = REPORT, body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn forget_event(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(id): PathId,
    QueryParams(p): QueryParams<ForgetParams>,
) -> Result<Json<ForgetReport>, ApiError> {
    let req = request(ForgetSelector::Event(id), p);
    Ok(Json(state.run(move |m| forget(m, &owner, req)).await?))
}

/// Forgets every event of one session of the request's owner (a session
/// with no events is 404).
#[utoipa::path(delete, path = "/v1/sessions/{id}", tag = "forget",
    params(("id" = String, Path, description = "Session id"), ForgetParams),
    responses(
        (status = 200, description = REPORT, body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn forget_session(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    axum::extract::Path(id): axum::extract::Path<String>,
    QueryParams(p): QueryParams<ForgetParams>,
) -> Result<Json<ForgetReport>, ApiError> {
    let req = request(ForgetSelector::Session(SessionId::new(id)?), p);
    Ok(Json(state.run(move |m| forget(m, &owner, req)).await?))
}

/// Forgets everything of the request's own owner (the key's owner; there is
/// no way to name another).
#[utoipa::path(delete, path = "/v1/owner", tag = "forget", params(ForgetParams),
    responses(
        (status = 200, description = REPORT, body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn forget_owner(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    QueryParams(p): QueryParams<ForgetParams>,
) -> Result<Json<ForgetReport>, ApiError> {
    let req = request(ForgetSelector::Owner, p);
    Ok(Json(state.run(move |m| forget(m, &owner, req)).await?))
}
