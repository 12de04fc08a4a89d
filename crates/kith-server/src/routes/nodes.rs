//! `GET /v1/nodes`, `GET /v1/nodes/{id}` and `GET /v1/path`.

use axum::extract::State;
use axum::http::Method;
use axum::{Extension, Json};
use kith::{NodeQuery, NodeType, ScopeId, StoredNode};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi};

use super::{AppState, Routes};
use crate::auth::Owner;
use crate::dto::PathQuery;
use crate::error::{ApiError, ErrorBody, PathId, QueryParams};

/// Adds the group's routes.
pub fn register(routes: Routes) -> Routes {
    routes
        .add(Method::GET, "/v1/nodes", list)
        .add(Method::GET, "/v1/nodes/{id}", show)
        .add(Method::GET, "/v1/path", path_handler)
}

/// The group's OpenAPI.
#[derive(OpenApi)]
#[openapi(paths(list, show, path_handler))]
pub struct Api;

/// Paging and filters for `GET /v1/nodes`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NodeListQuery {
    /// Only this scope.
    pub scope: Option<String>,
    /// Only this node type (`note`, `entity`, `claim`, …).
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub node_type: Option<String>,
    /// At most this many (default 50, at most 1000).
    pub limit: Option<usize>,
    /// Start after this position (the previous page's `next_after`).
    pub after: Option<i64>,
}

/// Options of `GET /v1/nodes/{id}`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NodeShowQuery {
    /// Also follow unverified alias proposals (`RELATES_TO` with
    /// `identity_verified: false`) to the entity at their other end; by
    /// default a proposal is listed among the edges but not traversed.
    pub include_unverified_aliases: Option<bool>,
}

/// A page of nodes.
#[derive(Debug, Serialize)]
pub struct NodePage {
    /// Nodes in creation order, each with its `seq`.
    pub nodes: Vec<StoredNode>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<i64>,
}

/// The owner's nodes in creation order.
#[utoipa::path(get, path = "/v1/nodes", tag = "nodes", params(NodeListQuery),
    responses(
        (status = 200, description = "`{nodes: [node + seq], next_after}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    QueryParams(q): QueryParams<NodeListQuery>,
) -> Result<Json<NodePage>, ApiError> {
    let limit = super::events::page_limit(q.limit)?;
    let query = NodeQuery {
        owner: Some(owner.0),
        scope: q.scope.map(ScopeId::new).transpose()?,
        node_types: q
            .node_type
            .map(|t| NodeType::parse("type", &t))
            .transpose()?
            .into_iter()
            .collect(),
        after_seq: q.after.unwrap_or(0),
        limit,
        ..NodeQuery::default()
    };
    let nodes = state.run(move |m| Ok(m.nodes(&query)?)).await?;
    let next_after = (nodes.len() == limit)
        .then(|| nodes.last().map(|n| n.seq))
        .flatten();
    Ok(Json(NodePage { nodes, next_after }))
}

/// One node with its provenance (the events it came from) and its
/// neighbourhood (its edges and the nodes at their other ends: an entity's
/// claims, a claim's subject, …). Another owner's node is 404.
#[utoipa::path(get, path = "/v1/nodes/{id}", tag = "nodes",
    params(("id" = uuid::Uuid, Path, description = "Node id"), NodeShowQuery),
    responses(
        (status = 200, description = "`{node, provenance: [event], edges: [edge], neighbours: [node], truncated}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    PathId(id): PathId,
    QueryParams(q): QueryParams<NodeShowQuery>,
) -> Result<Json<kith::NodeView>, ApiError> {
    let unverified = q.include_unverified_aliases.unwrap_or(false);
    let view = state
        .run(move |m| Ok(m.node_view_with(&owner.0, id, unverified)?))
        .await?;
    Ok(Json(view))
}

/// One shortest path (fewest edges, either direction) between two of the
/// owner's nodes, within `max_hops`. Like a node's neighbourhood, an
/// unverified alias proposal is not followed unless
/// `include_unverified_aliases=true`; a verified alias is. Another owner's
/// node is 404.
#[utoipa::path(get, path = "/v1/path", tag = "nodes", params(PathQuery),
    responses(
        (status = 200, description = "`{from: node, to, steps: [{edge, node}], found, include_unverified_aliases, skipped_proposals, truncated}`", body = serde_json::Value),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn path_handler(
    State(state): State<AppState>,
    Extension(owner): Extension<Owner>,
    QueryParams(q): QueryParams<PathQuery>,
) -> Result<Json<kith::PathReport>, ApiError> {
    let req = q.into_request()?;
    let report = state.run(move |m| Ok(m.path(&owner.0, &req)?)).await?;
    Ok(Json(report))
}
