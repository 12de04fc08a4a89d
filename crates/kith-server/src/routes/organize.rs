//! The organizer: `POST /v1/organize`, the alias-proposal inbox
//! (`GET /v1/aliases`, `POST /v1/aliases/{op}/review`), `POST /v1/undo/{op}`
//! and `GET /v1/journal`.
//!
//! Each handler is a thin wrapper over a plain function taking the memory
//! and the owner ([`organize`], [`alias_page`], [`review`], [`undo`],
//! [`journal_page`]); the MCP tools call the same functions, so both
//! surfaces validate and answer identically. Every call is the key's
//! owner's: another owner's record or node id answers 404.

use axum::extract::State;
use axum::http::Method;
use axum::{Extension, Json};
use kith::{
    AliasProposal, CorrectionReport, JournalQuery, Memory, Operation, OperationKind,
    OrganizeReport, ProposeOutcome, ReviewOutcome, UndoReport,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi};
use uuid::Uuid;

use super::events::page_limit;
use super::{AppState, Routes};
use crate::auth::Owner;
use crate::dto::{
    AliasListQuery, AssessmentBody, AssessorKindName, CandidateBody, CandidateKind, CorrectionBody,
    DecisionName, JobName, OrganizeBody, ProposalStatusName, ProposeBody, ReviewBody, VerdictName,
};
use crate::error::{ApiError, ErrorBody, JsonBody, PathId, QueryParams};

/// Adds the group's routes.
pub fn register(routes: Routes) -> Routes {
    routes
        .add(Method::POST, "/v1/organize", organize_handler)
        .add(Method::GET, "/v1/aliases", aliases_handler)
        .add(Method::POST, "/v1/aliases", propose_handler)
        .add(Method::POST, "/v1/aliases/{op}/review", review_handler)
        .add(Method::POST, "/v1/undo/{op}", undo_handler)
        .add(Method::POST, "/v1/corrections", correct_handler)
        .add(Method::GET, "/v1/journal", journal_handler)
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(
    paths(
        organize_handler,
        aliases_handler,
        propose_handler,
        review_handler,
        undo_handler,
        correct_handler,
        journal_handler
    ),
    components(schemas(
        OrganizeBody,
        CandidateBody,
        CandidateKind,
        JobName,
        ReviewBody,
        CorrectionBody,
        DecisionName,
        ProposalStatusName,
        ProposeBody,
        AssessmentBody,
        AssessorKindName,
        VerdictName
    ))
)]
pub struct Api;

/// A page of the alias-proposal inbox.
#[derive(Debug, Serialize)]
pub struct AliasPage {
    /// Proposals, oldest first, each with its status.
    pub proposals: Vec<AliasProposal>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<Uuid>,
}

/// A page of journal records.
#[derive(Debug, Serialize)]
pub struct JournalPage {
    /// Records, oldest first.
    pub records: Vec<Operation>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<Uuid>,
}

/// Filters and paging for `GET /v1/journal`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct JournalListQuery {
    /// Only records of this kind (`ORGANIZER_MERGED`, `ALIAS_PROPOSED`,
    /// `ALIAS_PROPOSAL_ACCEPTED`, `ALIAS_PROPOSAL_REJECTED`, `UNDO`,
    /// `RETRIEVAL_RECORDED`, …; any case).
    pub kind: Option<String>,
    /// Only records about this node: its target, or any record whose
    /// payload names it (a merge names both nodes).
    pub node: Option<Uuid>,
    /// At most this many (default 50, at most 1000).
    pub limit: Option<usize>,
    /// Start after this record (the previous page's `next_after`).
    pub after: Option<Uuid>,
}

/// `items[after+1 ..][.. limit]`, and the id to continue from when more
/// remain. A cursor that is not in the listing (another owner's record
/// included) is 404.
fn page<T>(
    items: Vec<T>,
    id: impl Fn(&T) -> Uuid,
    after: Option<Uuid>,
    limit: usize,
) -> Result<(Vec<T>, Option<Uuid>), ApiError> {
    let start = match after {
        None => 0,
        Some(cursor) => {
            items.iter().position(|x| id(x) == cursor).ok_or_else(|| {
                ApiError::not_found(format!("after: record {cursor} is not in this listing"))
            })? + 1
        }
    };
    let more = items.len() > start + limit;
    let page: Vec<T> = items.into_iter().skip(start).take(limit).collect();
    let next = if more { page.last().map(&id) } else { None };
    Ok((page, next))
}

/// Runs an organizer request for `owner`. Every candidate node must be the
/// owner's (another owner's, or a missing one, is 404 before anything
/// runs), so a report never says anything about another owner's nodes.
pub fn organize(m: &Memory, owner: &Owner, body: OrganizeBody) -> Result<OrganizeReport, ApiError> {
    let req = body.into_request(owner)?;
    let mut seen = std::collections::HashSet::new();
    for h in &req.hints {
        for id in [h.a, h.b] {
            if seen.insert(id) {
                m.node(&owner.0, id)?;
            }
        }
    }
    Ok(m.organize_with(&req)?)
}

/// A page of `owner`'s alias proposals, oldest first.
pub fn alias_page(m: &Memory, owner: &Owner, q: AliasListQuery) -> Result<AliasPage, ApiError> {
    let limit = page_limit(q.limit)?;
    let after = q
        .after
        .as_deref()
        .map(|raw| {
            Uuid::parse_str(raw.trim())
                .map_err(|_| ApiError::invalid(format!("after: {raw:?} is not a UUID")))
        })
        .transpose()?;
    let mut all = m.alias_proposals(&owner.0)?;
    if let Some(status) = q.status {
        all.retain(|p| status.matches(p.status));
    }
    let (proposals, next_after) = page(all, |p| p.op_id, after, limit)?;
    Ok(AliasPage {
        proposals,
        next_after,
    })
}

/// Proposes two of `owner`'s entities as an unverified alias.
pub fn propose(m: &Memory, owner: &Owner, body: ProposeBody) -> Result<ProposeOutcome, ApiError> {
    let req = body.into_request()?;
    Ok(m.propose_alias(&owner.0, &req)?)
}

/// Records `owner`'s decision on alias proposal `proposal`.
pub fn review(
    m: &Memory,
    owner: &Owner,
    proposal: Uuid,
    body: ReviewBody,
) -> Result<ReviewOutcome, ApiError> {
    Ok(m.review_alias(
        &owner.0,
        proposal,
        body.decision.into(),
        body.reason.as_deref(),
        body.reviewer.as_deref(),
    )?)
}

/// Applies `owner`'s correction (rebind claims or split an identity).
pub fn correct(
    m: &Memory,
    owner: &Owner,
    body: CorrectionBody,
) -> Result<CorrectionReport, ApiError> {
    let req = body.into_request()?;
    Ok(m.correct(&owner.0, &req)?)
}

/// Corrects who claims are about, by naming the evidence: the `claims` to
/// move, or the `events` whose claims of `entity` move, to an existing
/// entity (`to`) or a new person (`new_person`). One transaction; a sealed
/// `IDENTITY_CORRECTED` record (undo it with `POST /v1/undo/{op}`); the
/// same request again answers the first record (`replayed: true`). Bad
/// requests are 422 and write nothing; another owner's node is 404.
#[utoipa::path(post, path = "/v1/corrections", tag = "organizer", request_body = CorrectionBody,
    responses(
        (status = 200, description = "`{op_id, target, created_target, moved_claims, closed_edges, opened_edges, replayed}`", body = serde_json::Value),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn correct_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<CorrectionBody>,
) -> Result<Json<CorrectionReport>, ApiError> {
    let report = state.run(move |m| correct(m, &owner, body)).await?;
    Ok(Json(report))
}

/// Undoes `owner`'s merge or accepted alias `op`.
pub fn undo(m: &Memory, owner: &Owner, op: Uuid) -> Result<UndoReport, ApiError> {
    Ok(m.undo(&owner.0, op)?)
}

/// A page of `owner`'s journal, oldest first.
pub fn journal_page(
    m: &Memory,
    owner: &Owner,
    q: JournalListQuery,
) -> Result<JournalPage, ApiError> {
    let limit = page_limit(q.limit)?;
    let kind = q
        .kind
        .as_deref()
        .map(|k| {
            k.trim()
                .to_uppercase()
                .parse::<OperationKind>()
                .map_err(|e| ApiError::invalid(format!("kind: {e}")))
        })
        .transpose()?;
    let query = JournalQuery {
        kind,
        node: q.node,
        // Without a cursor one more than a page says whether more remain;
        // with one, the cursor's position must be found first.
        limit: if q.after.is_some() { 0 } else { limit + 1 },
    };
    let all = m.journal(&owner.0, &query)?;
    let (records, next_after) = page(all, |op| op.id, q.after, limit)?;
    Ok(JournalPage {
        records,
        next_after,
    })
}

/// Runs the organizer over the owner's memory, synchronously, and answers
/// its report: per job the candidates examined, the merges applied (each
/// with its `ORGANIZER_MERGED` record id, for undo), the alias proposals
/// published, and the pairs left alone with their reason.
#[utoipa::path(post, path = "/v1/organize", tag = "organizer", request_body = OrganizeBody,
    responses(
        (status = 200, description = "`{owner, jobs: [{job, merge_policy, candidates, merges, proposals, not_applied, not_applied_total, budget_exhausted, unchanged}], duration_ms}`", body = serde_json::Value),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "A candidate node is not the owner's", body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn organize_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<OrganizeBody>,
) -> Result<Json<OrganizeReport>, ApiError> {
    let report = state.run(move |m| organize(m, &owner, body)).await?;
    Ok(Json(report))
}

/// The owner's alias proposals (the review inbox), oldest first, with
/// their status and, once decided, the decision record.
#[utoipa::path(get, path = "/v1/aliases", tag = "organizer", params(AliasListQuery),
    responses(
        (status = 200, description = "`{proposals: [{op_id, a, b, a_name, b_name, score, edge_id, status, review_op_id, created_at, format, assessment}], next_after}`", body = serde_json::Value),
        (status = 401, body = ErrorBody),
        (status = 404, description = "`after` is not one of the owner's proposals", body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn aliases_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    QueryParams(q): QueryParams<AliasListQuery>,
) -> Result<Json<AliasPage>, ApiError> {
    let page = state.run(move |m| alias_page(m, &owner, q)).await?;
    Ok(Json(page))
}

/// Proposes two entities as an unverified alias, optionally with a
/// complete external assessment (a reviewer's or a model's verdict and
/// reasons), stored as a version-2 record bound to the exact node
/// checksums. Nothing merges. A repeated request for the same pair answers
/// the first committed record (`created: false`) unchanged, assessment
/// included: an older proposal is never relabelled. A pair admission
/// refuses is 409 `not_admitted`; an incomplete assessment is 422
/// `invalid_assessment`; another owner's node is 404.
#[utoipa::path(post, path = "/v1/aliases", tag = "organizer", request_body = ProposeBody,
    responses(
        (status = 200, description = "`{op_id, edge_id, created, format, assessment, status}`", body = serde_json::Value),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn propose_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    JsonBody(body): JsonBody<ProposeBody>,
) -> Result<Json<ProposeOutcome>, ApiError> {
    let outcome = state.run(move |m| propose(m, &owner, body)).await?;
    Ok(Json(outcome))
}

/// Accepts or rejects an alias proposal. Accept rechecks that both nodes
/// are exactly as proposed (else 409 `stale_proposal`) and publishes a
/// verified alias edge; reject needs a `reason` (else 422
/// `reason_required`). The same decision again answers the first record
/// (`replayed: true`); a different one is 409 `review_conflict`. Another
/// owner's proposal is 404.
#[utoipa::path(post, path = "/v1/aliases/{op}/review", tag = "organizer", request_body = ReviewBody,
    params(("op" = uuid::Uuid, Path, description = "The proposal's `op_id`")),
    responses(
        (status = 200, description = "`{review_op_id, decision, edge_id, replayed}`", body = serde_json::Value),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn review_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(op): PathId,
    JsonBody(body): JsonBody<ReviewBody>,
) -> Result<Json<ReviewOutcome>, ApiError> {
    let outcome = state.run(move |m| review(m, &owner, op, body)).await?;
    Ok(Json(outcome))
}

/// Undoes a merge (`ORGANIZER_MERGED`) or an accepted alias
/// (`ALIAS_PROPOSAL_ACCEPTED`) from its record, journaled as `UNDO`.
/// Refused with 409 `undo_refused` (nothing written) when later changes
/// depend on it or the record is of another kind; undoing twice answers
/// the first undo (`replayed: true`). Another owner's record is 404.
#[utoipa::path(post, path = "/v1/undo/{op}", tag = "organizer",
    params(("op" = uuid::Uuid, Path, description = "The record to undo")),
    responses(
        (status = 200, description = "`{undo_op_id, undone_op_id, undone_kind, restored_nodes, removed_edges, replayed}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn undo_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(op): PathId,
) -> Result<Json<UndoReport>, ApiError> {
    let report = state.run(move |m| undo(m, &owner, op)).await?;
    Ok(Json(report))
}

/// The owner's journal (organizer records, retrieval receipts, derivation
/// records, …), oldest first, filtered by kind and node.
#[utoipa::path(get, path = "/v1/journal", tag = "organizer", params(JournalListQuery),
    responses(
        (status = 200, description = "`{records: [{id, kind, owner_id, scope, target_id, payload, created_at, checksum}], next_after}`", body = serde_json::Value),
        (status = 401, body = ErrorBody),
        (status = 404, description = "`after` is not in this listing", body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn journal_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    QueryParams(q): QueryParams<JournalListQuery>,
) -> Result<Json<JournalPage>, ApiError> {
    let page = state.run(move |m| journal_page(m, &owner, q)).await?;
    Ok(Json(page))
}
