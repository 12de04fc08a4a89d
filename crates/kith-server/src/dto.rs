//! Request bodies shared by the HTTP routes and the MCP tools. Each refuses
//! unknown fields (a typo must not silently drop a filter) and derives both
//! an OpenAPI schema and a JSON Schema (for MCP tool inputs).

use std::collections::BTreeMap;

use kith::{EventInput, Lifecycle, NodeType, Role, ScopeId, SearchFilters, SessionId, Timestamp};
use schemars::JsonSchema;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::auth::{check_body_owner, Owner};
use crate::error::ApiError;

fn default_role() -> String {
    "user".into()
}

/// One message to remember.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    /// The message text.
    pub content: String,
    /// `user` (default), `participant`, `assistant`, `tool` or `system`.
    #[serde(default = "default_role")]
    #[schema(default = "user")]
    pub role: String,
    /// Optional; when present it must equal the request's owner (else 403).
    #[serde(default)]
    pub owner_id: Option<String>,
    /// Namespace inside the owner (default `personal`).
    #[serde(default)]
    pub scope: Option<String>,
    /// The conversation id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The named person behind the turn.
    #[serde(default)]
    pub speaker: Option<String>,
    /// When it was said: RFC 3339 with an offset.
    #[serde(default)]
    pub event_time: Option<String>,
    /// Your id for the message: storing the same `source_id` again returns
    /// the first ids and writes nothing.
    #[serde(default)]
    pub source_id: Option<String>,
    /// A JSON object of your metadata.
    #[serde(default)]
    pub metadata: Option<serde_json::Value>,
    /// The note node's type (default `note`).
    #[serde(default)]
    pub node_type: Option<String>,
}

impl MessageBody {
    /// The facade input for `owner` (a differing body owner is 403).
    pub fn into_input(self, owner: &Owner) -> Result<EventInput, ApiError> {
        check_body_owner(owner, self.owner_id.as_deref())?;
        Ok(EventInput {
            owner_id: Some(owner.0.as_str().to_string()),
            scope: self.scope,
            session_id: self.session_id,
            speaker: self.speaker,
            event_time: self.event_time,
            source_id: self.source_id,
            metadata: self.metadata,
            node_type: self.node_type,
            ..EventInput::new(&self.role, &self.content)
        })
    }
}

/// Several messages stored in one transaction: all or none.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchBody {
    /// At most [`MAX_BATCH`] messages.
    pub events: Vec<MessageBody>,
}

/// Most messages in one batch.
pub const MAX_BATCH: usize = 1000;

/// One message to ingest: stored, then entities and claims extracted.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IngestBody {
    /// The message text.
    pub content: String,
    /// `user` (default), `participant`, `assistant`, `tool` or `system`.
    #[serde(default = "default_role")]
    #[schema(default = "user")]
    pub role: String,
    /// Optional; when present it must equal the request's owner (else 403).
    #[serde(default)]
    pub owner_id: Option<String>,
    /// Namespace inside the owner (default `personal`).
    #[serde(default)]
    pub scope: Option<String>,
    /// The conversation id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The named person behind the turn.
    #[serde(default)]
    pub speaker: Option<String>,
    /// When it was said: RFC 3339 with an offset.
    #[serde(default)]
    pub event_time: Option<String>,
    /// Your id for the message (idempotency).
    #[serde(default)]
    pub source_id: Option<String>,
    /// A JSON object of your metadata.
    #[serde(default)]
    pub metadata: Option<serde_json::Value>,
    /// Only admit the message; extraction runs later (`kith process`).
    #[serde(default)]
    pub defer: bool,
    /// A user turn's singular first person is the owner.
    #[serde(default)]
    pub first_person_owner: bool,
}

impl IngestBody {
    /// The facade input and options for `owner`.
    pub fn into_parts(self, owner: &Owner) -> Result<(EventInput, kith::IngestOptions), ApiError> {
        let options = kith::IngestOptions {
            defer: self.defer,
            first_person_owner: self.first_person_owner,
        };
        let message = MessageBody {
            content: self.content,
            role: self.role,
            owner_id: self.owner_id,
            scope: self.scope,
            session_id: self.session_id,
            speaker: self.speaker,
            event_time: self.event_time,
            source_id: self.source_id,
            metadata: self.metadata,
            node_type: None,
        };
        Ok((message.into_input(owner)?, options))
    }
}

/// Filters for search and retrieval; every one optional.
#[derive(Debug, Clone, Default, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FiltersBody {
    /// Only this scope.
    #[serde(default)]
    pub scope: Option<String>,
    /// Only this session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only turns by these roles.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Only these node types (`note`, `entity`, `claim`, …).
    #[serde(default)]
    pub node_types: Vec<String>,
    /// Only these lifecycle states (default: the active ones).
    #[serde(default)]
    pub lifecycles: Vec<String>,
    /// Only what was said at or after this time (RFC 3339).
    #[serde(default)]
    pub time_from: Option<String>,
    /// Only what was said before this time (RFC 3339).
    #[serde(default)]
    pub time_to: Option<String>,
}

impl FiltersBody {
    /// The store's filters (a bad value is 422 naming its field).
    pub fn into_filters(self) -> Result<SearchFilters, ApiError> {
        Ok(SearchFilters {
            scope: self.scope.map(ScopeId::new).transpose()?,
            session: self.session_id.map(SessionId::new).transpose()?,
            roles: self
                .roles
                .iter()
                .map(|r| Role::parse("filters.roles", r))
                .collect::<Result<_, _>>()?,
            node_types: self
                .node_types
                .iter()
                .map(|t| NodeType::parse("filters.node_types", t))
                .collect::<Result<_, _>>()?,
            lifecycles: self
                .lifecycles
                .iter()
                .map(|l| Lifecycle::parse("filters.lifecycles", l))
                .collect::<Result<_, _>>()?,
            time_from: self
                .time_from
                .as_deref()
                .map(|t| Timestamp::parse("filters.time_from", t))
                .transpose()?,
            time_to: self
                .time_to
                .as_deref()
                .map(|t| Timestamp::parse("filters.time_to", t))
                .transpose()?,
            as_of: None,
        })
    }
}

fn default_budget() -> usize {
    kith::retrieve::DEFAULT_TOKEN_BUDGET
}

fn default_limit() -> usize {
    10
}

fn yes() -> bool {
    true
}

/// A retrieval: the evidence for a question, packed into a token budget.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveBody {
    /// The question or the agent's current turn.
    pub query: String,
    /// The packed context's maximum size in cl100k_base tokens (default 1024).
    #[serde(default = "default_budget")]
    #[schema(default = 1024)]
    pub token_budget: usize,
    /// Structured results to return (default 10, at most 100).
    #[serde(default = "default_limit")]
    #[schema(default = 10)]
    pub limit: usize,
    /// Filters.
    #[serde(default)]
    pub filters: FiltersBody,
    /// Memory as it stood at this time (RFC 3339).
    #[serde(default)]
    pub as_of: Option<String>,
    /// Paths to turn off: `lexical`, `vector`, `graph`, `neighbours`,
    /// `recency`, `speaker_boost`.
    #[serde(default)]
    pub without: Vec<String>,
    /// Path weights over the defaults, e.g. `{"vector": 0.7}`.
    #[serde(default)]
    pub weights: BTreeMap<String, f64>,
    /// Journal a receipt (`GET /v1/retrievals/{id}`); default true.
    #[serde(default = "yes")]
    #[schema(default = true)]
    pub record: bool,
}

/// Most structured results one retrieval or search returns.
pub const MAX_RESULTS: usize = 100;

impl RetrieveBody {
    /// The facade request for `owner`.
    pub fn into_request(self, owner: &Owner) -> Result<kith::RetrieveRequest, ApiError> {
        if self.limit == 0 || self.limit > MAX_RESULTS {
            return Err(ApiError::invalid(format!(
                "limit must be between 1 and {MAX_RESULTS}"
            )));
        }
        let mut req = kith::RetrieveRequest::new(owner.0.as_str(), &self.query)?;
        req.filters = self.filters.into_filters()?;
        req.filters.as_of = self
            .as_of
            .as_deref()
            .map(|t| Timestamp::parse("as_of", t))
            .transpose()?;
        req.token_budget = self.token_budget;
        req.limit = self.limit;
        req.record = self.record;
        for name in &self.without {
            let p = &mut req.paths;
            match name.as_str() {
                "lexical" => p.lexical = false,
                "vector" => p.vector = false,
                "graph" => p.graph = false,
                "neighbours" | "neighbors" => p.neighbours = false,
                "recency" => p.recency = false,
                "speaker_boost" => p.speaker_boost = false,
                other => {
                    return Err(ApiError::invalid(format!(
                        "without: unknown path {other:?} (lexical, vector, graph, neighbours, \
                         recency, speaker_boost)"
                    )))
                }
            }
        }
        let pairs: Vec<String> = self
            .weights
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        req.weights = kith::retrieve::fusion::PathWeights::parse(&pairs)
            .map_err(|e| ApiError::invalid(format!("weights: {e}")))?;
        Ok(req)
    }
}

/// A BM25 search over node text.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchBody {
    /// Free text.
    pub query: String,
    /// At most this many hits (default 10, at most 100).
    #[serde(default = "default_limit")]
    #[schema(default = 10)]
    pub limit: usize,
    /// Filters.
    #[serde(default)]
    pub filters: FiltersBody,
}

impl SearchBody {
    /// The facade request for `owner`.
    pub fn into_request(self, owner: &Owner) -> Result<kith::SearchRequest, ApiError> {
        if self.limit == 0 || self.limit > MAX_RESULTS {
            return Err(ApiError::invalid(format!(
                "limit must be between 1 and {MAX_RESULTS}"
            )));
        }
        let mut req = kith::SearchRequest::new(owner.0.as_str(), &self.query)?;
        req.filters = self.filters.into_filters()?;
        req.limit = self.limit;
        Ok(req)
    }
}
