//! Correcting a fact (`POST /v1/claims/{id}/retract`,
//! `POST /v1/claims/{id}/correct`) and the facts view
//! (`GET /v1/claims?subject=NAME`). Each handler wraps a plain function the
//! MCP tools call too. Another owner's claim is 404, like an unknown id.

use axum::extract::State;
use axum::http::Method;
use axum::{Extension, Json};
use kith::{ClaimEditReport, ClaimFact, Memory};
use utoipa::OpenApi;
use uuid::Uuid;

use super::{AppState, Routes};
use crate::auth::Owner;
use crate::dto::{ClaimsQuery, CorrectClaimBody, RetractClaimBody};
use crate::error::{ApiError, ErrorBody, JsonBody, PathId, QueryParams};

/// Adds the group's routes.
pub fn register(routes: Routes) -> Routes {
    routes
        .add(Method::GET, "/v1/claims", list_handler)
        .add(Method::POST, "/v1/claims/{id}/retract", retract_handler)
        .add(Method::POST, "/v1/claims/{id}/correct", correct_handler)
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(
    paths(list_handler, retract_handler, correct_handler),
    components(schemas(RetractClaimBody, CorrectClaimBody))
)]
pub struct Api;

/// `owner`'s claims of the entities named `q.subject`.
pub fn list(m: &Memory, owner: &Owner, q: ClaimsQuery) -> Result<Vec<ClaimFact>, ApiError> {
    Ok(m.claims(&owner.0, &q.subject, q.history())?)
}

/// Retracts `owner`'s claim `id`.
pub fn retract(
    m: &Memory,
    owner: &Owner,
    id: Uuid,
    body: RetractClaimBody,
) -> Result<ClaimEditReport, ApiError> {
    Ok(m.retract_claim(&owner.0, id, &body.reason)?)
}

/// Replaces the object of `owner`'s claim `id`.
pub fn correct(
    m: &Memory,
    owner: &Owner,
    id: Uuid,
    body: CorrectClaimBody,
) -> Result<ClaimEditReport, ApiError> {
    Ok(m.correct_claim(&owner.0, id, &body.object, &body.reason)?)
}

const REPORT: &str = "`{op_id, kind, claim, replacement, replayed}`";

/// The facts view (like mem0's `get_all`): the claims of the owner's
/// entities named `subject` (case-insensitive), current first, each with
/// predicate, object, polarity, time and evidence quote; retracted and
/// superseded ones only with `all=true`.
#[utoipa::path(get, path = "/v1/claims", tag = "claims", params(ClaimsQuery),
    responses(
        (status = 200, description = "`[{id, subject_id, subject, predicate, object, polarity, epistemic_type, condition, reported, content, lifecycle, current, valid_from, valid_to, event_time, evidence_quote, evidence, superseded_by, edited}]`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn list_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    QueryParams(q): QueryParams<ClaimsQuery>,
) -> Result<Json<Vec<ClaimFact>>, ApiError> {
    Ok(Json(state.run(move |m| list(m, &owner, q)).await?))
}

/// Retracts a claim: it is no longer current (`archived`, `valid_to` set)
/// and retrieval never returns it. One sealed `CLAIM_RETRACTED` record
/// (undo it with `POST /v1/undo/{op}`); the same request again answers the
/// first record (`replayed: true`). A node that is not a claim, a claim no
/// longer current or an empty reason is 422 and writes nothing.
#[utoipa::path(post, path = "/v1/claims/{id}/retract", tag = "claims",
    params(("id" = uuid::Uuid, Path, description = "Claim id")),
    request_body = RetractClaimBody,
    responses(
        (status = 200, description = REPORT, body = serde_json::Value),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn retract_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(id): PathId,
    JsonBody(body): JsonBody<RetractClaimBody>,
) -> Result<Json<ClaimEditReport>, ApiError> {
    Ok(Json(
        state.run(move |m| retract(m, &owner, id, body)).await?,
    ))
}

/// Replaces a claim's value: a new claim with `object` (same subject,
/// evidence and time) supersedes it. One sealed `CLAIM_CORRECTED` record
/// (undo it with `POST /v1/undo/{op}`); the same request again answers the
/// first record. Bad requests are 422 and write nothing.
#[utoipa::path(post, path = "/v1/claims/{id}/correct", tag = "claims",
    params(("id" = uuid::Uuid, Path, description = "Claim id")),
    request_body = CorrectClaimBody,
    responses(
        (status = 200, description = REPORT, body = serde_json::Value),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn correct_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(id): PathId,
    JsonBody(body): JsonBody<CorrectClaimBody>,
) -> Result<Json<ClaimEditReport>, ApiError> {
    Ok(Json(
        state.run(move |m| correct(m, &owner, id, body)).await?,
    ))
}
