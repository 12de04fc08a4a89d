//! `POST /v1/retrieve`, `GET /v1/retrievals/{id}` and `POST /v1/search`.

use axum::extract::State;
use axum::http::Method;
use axum::{Extension, Json};
use utoipa::OpenApi;

use super::{AppState, Routes};
use crate::auth::Owner;
use crate::compact::{CompactRetrieval, Detail};
use crate::dto::{FiltersBody, RetrieveBody, SearchBody};
use crate::error::{ApiError, ErrorBody, JsonBody, PathId};

/// Adds the group's routes.
pub fn register(routes: Routes) -> Routes {
    routes
        .add(Method::POST, "/v1/retrieve", retrieve)
        .add(Method::GET, "/v1/retrievals/{id}", receipt)
        .add(Method::POST, "/v1/search", search)
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(
    paths(retrieve, receipt, search),
    components(schemas(
        RetrieveBody,
        SearchBody,
        FiltersBody,
        Detail,
        CompactRetrieval,
        crate::compact::CompactResult
    ))
)]
pub struct Api;

/// Hybrid retrieval (lexical, vector when the pack has embeddings, graph,
/// session neighbours, recency) fused with RRF, packed into the token
/// budget. Journals a receipt unless `record` is false. `detail: compact`
/// answers only the context and each result's id, speaker, time and score.
#[utoipa::path(post, path = "/v1/retrieve", tag = "retrieve", request_body = RetrieveBody,
    responses(
        (status = 200, description = "`{request_id, recorded, query, results: [{rank, node_id, content, provenance, trace, …}], context, tokens, token_budget, packed, left_out, timings}`; with `detail: compact`, `{request_id, context, tokens, token_budget, results: [{rank, node_id, event_id, node_type, speaker, role, time, score}]}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn retrieve(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<RetrieveBody>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let detail = body.detail.unwrap_or(Detail::Full);
    let req = body.into_request(&owner)?;
    let r = state.run(move |m| Ok(m.retrieve(&req)?)).await?;
    let value = match detail {
        Detail::Full => serde_json::to_value(&r),
        Detail::Compact => serde_json::to_value(CompactRetrieval::from(&r)),
    }
    .map_err(|e| ApiError::internal(format!("cannot encode the retrieval: {e}")))?;
    Ok(Json(value))
}

/// A retrieval's receipt: its query, filters, each result's trace, what was
/// packed and left out. Another owner's receipt is 404.
#[utoipa::path(get, path = "/v1/retrievals/{id}", tag = "retrieve",
    params(("id" = uuid::Uuid, Path, description = "The retrieval's request_id")),
    responses(
        (status = 200, description = "The `RETRIEVAL_RECORDED` journal record", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn receipt(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(id): PathId,
) -> Result<Json<kith::Operation>, ApiError> {
    let op = state
        .run(move |m| Ok(m.retrieval_receipt(&owner.0, id)?))
        .await?;
    Ok(Json(op))
}

/// BM25 search over the owner's node text, with provenance.
#[utoipa::path(post, path = "/v1/search", tag = "retrieve", request_body = SearchBody,
    responses(
        (status = 200, description = "`[{rank, score, node_id, node_type, scope, content, provenance}]`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn search(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<SearchBody>,
) -> Result<Json<Vec<kith::SearchHit>>, ApiError> {
    let req = body.into_request(&owner)?;
    let hits = state.run(move |m| Ok(m.search(&req)?)).await?;
    Ok(Json(hits))
}
