//! Messages in (`POST /v1/events`, `/v1/events/batch`, `/v1/ingest`) and
//! the event log out (`GET /v1/events`, `/v1/events/{id}`,
//! `/v1/events/{id}/status`).

use axum::extract::State;
use axum::http::{Method, StatusCode};
use axum::{Extension, Json};
use kith::{EventQuery, ScopeId, SessionId, StoreReceipt, StoredEvent};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::{AppState, Routes};
use crate::auth::Owner;
use crate::dto::{BatchBody, IngestBatchBody, IngestBody, MessageBody, MAX_BATCH};
use crate::error::{ApiError, ErrorBody, JsonBody, PathId, QueryParams};

/// Adds the group's routes.
pub fn register(routes: Routes) -> Routes {
    routes
        .add(Method::POST, "/v1/events", store)
        .add(Method::POST, "/v1/events/batch", store_batch)
        .add(Method::POST, "/v1/ingest", ingest)
        .add(Method::POST, "/v1/ingest/batch", ingest_batch)
        .add(Method::GET, "/v1/events", list)
        .add(Method::GET, "/v1/events/{id}", show)
        .add(Method::GET, "/v1/events/{id}/status", status)
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(
    paths(store, store_batch, ingest, ingest_batch, list, show, status),
    components(schemas(
        MessageBody,
        BatchBody,
        IngestBody,
        IngestBatchBody,
        Receipt,
        BatchReceipts
    ))
)]
pub struct Api;

/// What storing one message wrote.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Receipt {
    /// The event's id.
    pub event_id: uuid::Uuid,
    /// Its note node's id.
    pub node_id: uuid::Uuid,
    /// False when this `source_id` was stored before (nothing written).
    pub created: bool,
}

impl From<StoreReceipt> for Receipt {
    fn from(r: StoreReceipt) -> Self {
        Receipt {
            event_id: r.event_id,
            node_id: r.node_id,
            created: r.created,
        }
    }
}

/// What a batch wrote, in input order.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BatchReceipts {
    /// One receipt per message.
    pub receipts: Vec<Receipt>,
}

/// Stores one message (its event and note, in one transaction). 201 when
/// written, 200 when its `source_id` was stored before.
#[utoipa::path(post, path = "/v1/events", tag = "events", request_body = MessageBody,
    responses(
        (status = 201, body = Receipt), (status = 200, body = Receipt),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn store(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<MessageBody>,
) -> Result<(StatusCode, Json<Receipt>), ApiError> {
    let input = body.into_input(&owner)?;
    let receipt = state.run(move |m| Ok(m.store(input)?)).await?;
    let status = if receipt.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(receipt.into())))
}

/// Stores up to 1000 messages in one transaction: every one is validated
/// first, and either all new ones are written or none is.
#[utoipa::path(post, path = "/v1/events/batch", tag = "events", request_body = BatchBody,
    responses(
        (status = 200, body = BatchReceipts),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn store_batch(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<BatchBody>,
) -> Result<Json<BatchReceipts>, ApiError> {
    if body.events.is_empty() || body.events.len() > MAX_BATCH {
        return Err(ApiError::invalid(format!(
            "events: give between 1 and {MAX_BATCH} messages"
        )));
    }
    let inputs = body
        .events
        .into_iter()
        .map(|e| e.into_input(&owner))
        .collect::<Result<Vec<_>, _>>()?;
    let receipts = state.run(move |m| Ok(m.store_batch(inputs)?)).await?;
    Ok(Json(BatchReceipts {
        receipts: receipts.into_iter().map(Receipt::from).collect(),
    }))
}

/// Ingests one message: stores it (durable before extraction starts), then
/// extracts entities and claims with the server's provider unless `defer`.
#[utoipa::path(post, path = "/v1/ingest", tag = "events", request_body = IngestBody,
    responses(
        (status = 200, description = "`{event_id, node_id, created, status, derivation, error}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn ingest(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<IngestBody>,
) -> Result<Json<kith::IngestReceipt>, ApiError> {
    let (input, options) = body.into_parts(&owner)?;
    let receipt = state.run(move |m| Ok(m.ingest(input, options)?)).await?;
    if receipt.status == kith::WorkStatus::Failed {
        state.metrics.extraction_failed();
    }
    Ok(Json(receipt))
}

/// Ingests up to 1000 messages: every one is validated first and all are
/// admitted in one transaction (or none is); then each is extracted, or,
/// with `defer`, left to the server's background worker.
#[utoipa::path(post, path = "/v1/ingest/batch", tag = "events", request_body = IngestBatchBody,
    responses(
        (status = 200, description = "`{receipts: [{event_id, node_id, created, status, derivation, error}]}` in input order", body = serde_json::Value),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn ingest_batch(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<IngestBatchBody>,
) -> Result<Json<IngestBatchReceipts>, ApiError> {
    if body.events.is_empty() || body.events.len() > MAX_BATCH {
        return Err(ApiError::invalid(format!(
            "events: give between 1 and {MAX_BATCH} messages"
        )));
    }
    let options = kith::IngestOptions {
        defer: body.defer,
        first_person_owner: body.first_person_owner,
    };
    let inputs = body
        .events
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            if e.node_type.is_some() {
                return Err(ApiError::invalid(format!(
                    "events[{i}].node_type: ingest makes notes; store other types with POST /v1/events"
                )));
            }
            e.into_input(&owner)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let receipts = state
        .run(move |m| Ok(m.ingest_batch(inputs, options)?))
        .await?;
    for r in &receipts {
        if r.status == kith::WorkStatus::Failed {
            state.metrics.extraction_failed();
        }
    }
    Ok(Json(IngestBatchReceipts { receipts }))
}

/// What an ingest batch admitted (and extracted), in input order.
#[derive(Debug, Serialize)]
pub struct IngestBatchReceipts {
    /// One receipt per message.
    pub receipts: Vec<kith::IngestReceipt>,
}

/// Paging and filters for `GET /v1/events`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventListQuery {
    /// Only this session.
    pub session_id: Option<String>,
    /// Only this scope.
    pub scope: Option<String>,
    /// At most this many (default 50, at most 1000).
    pub limit: Option<usize>,
    /// Start after this position (the previous page's `next_after`).
    pub after: Option<i64>,
}

/// A page of events.
#[derive(Debug, Serialize)]
pub struct EventPage {
    /// Events in ingestion order, each with its `seq`.
    pub events: Vec<StoredEvent>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<i64>,
}

/// Most items one page returns.
pub const MAX_PAGE: usize = 1000;

/// A page size: default 50, 1 to [`MAX_PAGE`].
pub fn page_limit(limit: Option<usize>) -> Result<usize, ApiError> {
    match limit {
        None => Ok(50),
        Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
        Some(_) => Err(ApiError::invalid(format!(
            "limit must be between 1 and {MAX_PAGE}"
        ))),
    }
}

/// The owner's events in ingestion order.
#[utoipa::path(get, path = "/v1/events", tag = "events", params(EventListQuery),
    responses(
        (status = 200, description = "`{events: [event + seq], next_after}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    QueryParams(q): QueryParams<EventListQuery>,
) -> Result<Json<EventPage>, ApiError> {
    let limit = page_limit(q.limit)?;
    let query = EventQuery {
        owner: Some(owner.0),
        scope: q.scope.map(ScopeId::new).transpose()?,
        session: q.session_id.map(SessionId::new).transpose()?,
        after_seq: q.after.unwrap_or(0),
        limit,
        ..EventQuery::default()
    };
    let events = state.run(move |m| Ok(m.events(&query)?)).await?;
    let next_after = (events.len() == limit)
        .then(|| events.last().map(|e| e.seq))
        .flatten();
    Ok(Json(EventPage { events, next_after }))
}

/// One event. Another owner's event is 404.
#[utoipa::path(get, path = "/v1/events/{id}", tag = "events",
    params(("id" = uuid::Uuid, Path, description = "Event id")),
    responses(
        (status = 200, description = "The event with its `seq`, checksum and content hash", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(id): PathId,
) -> Result<Json<StoredEvent>, ApiError> {
    let event = state.run(move |m| Ok(m.event(&owner.0, id)?)).await?;
    Ok(Json(event))
}

/// An ingested event's extraction work: status, attempts, last error, and
/// what its derivation wrote. Another owner's event is 404.
#[utoipa::path(get, path = "/v1/events/{id}/status", tag = "events",
    params(("id" = uuid::Uuid, Path, description = "Event id")),
    responses(
        (status = 200, description = "`{item, derivation, dropped, journal}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn status(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(id): PathId,
) -> Result<Json<kith::WorkReport>, ApiError> {
    let report = state
        .run(move |m| {
            // Check ownership through the event first: work_status's own
            // message must not be the only guard.
            m.event(&owner.0, id)?;
            Ok(m.work_status(&owner.0, id)?)
        })
        .await?;
    Ok(Json(report))
}
