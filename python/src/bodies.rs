//! The request bodies the Python layer sends, read strictly: the fields of
//! `kith serve`'s bodies (`docs/http.md`) less `owner_id`, since an
//! `Engine` is bound to its owner. An unknown field is refused (a typo
//! must not silently drop a filter).

use kith::{EventInput, Lifecycle, NodeType, OwnerId, Role, ScopeId, SearchFilters};
use kith::{SessionId, Timestamp};
use serde::Deserialize;

use crate::errors::Failure;

fn default_role() -> String {
    "user".into()
}

/// One message (`store`, `ingest`, imports).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    content: String,
    #[serde(default = "default_role")]
    role: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    speaker: Option<String>,
    #[serde(default)]
    event_time: Option<String>,
    #[serde(default)]
    source_id: Option<String>,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    #[serde(default)]
    node_type: Option<String>,
}

impl MessageBody {
    /// The engine's input for `owner`.
    pub fn into_input(self, owner: &OwnerId) -> EventInput {
        EventInput {
            owner_id: Some(owner.as_str().to_string()),
            scope: self.scope,
            session_id: self.session_id,
            speaker: self.speaker,
            event_time: self.event_time,
            source_id: self.source_id,
            metadata: self.metadata,
            node_type: self.node_type,
            ..EventInput::new(&self.role, &self.content)
        }
    }
}

/// Filters of a retrieval; every one optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FiltersBody {
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    node_types: Vec<String>,
    #[serde(default)]
    lifecycles: Vec<String>,
    #[serde(default)]
    time_from: Option<String>,
    #[serde(default)]
    time_to: Option<String>,
}

impl FiltersBody {
    fn into_filters(self) -> Result<SearchFilters, Failure> {
        let time = |field, t: Option<String>| t.map(|t| Timestamp::parse(field, &t)).transpose();
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
            time_from: time("filters.time_from", self.time_from)?,
            time_to: time("filters.time_to", self.time_to)?,
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

/// Most results one retrieval returns (as over HTTP).
const MAX_RESULTS: usize = 100;

/// A retrieval.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrieveBody {
    query: String,
    #[serde(default = "default_budget")]
    token_budget: usize,
    #[serde(default = "default_limit")]
    limit: usize,
    #[serde(default)]
    filters: FiltersBody,
    #[serde(default)]
    as_of: Option<String>,
    #[serde(default)]
    asked_at: Option<String>,
    #[serde(default)]
    without: Vec<String>,
    #[serde(default = "yes")]
    record: bool,
}

impl RetrieveBody {
    /// The engine's request for `owner`.
    pub fn into_request(self, owner: &OwnerId) -> Result<kith::RetrieveRequest, Failure> {
        if self.limit == 0 || self.limit > MAX_RESULTS {
            return Err(Failure::Input(format!(
                "limit must be between 1 and {MAX_RESULTS}, not {}",
                self.limit
            )));
        }
        let mut req = kith::RetrieveRequest::new(owner.as_str(), &self.query)?;
        req.filters = self.filters.into_filters()?;
        req.filters.as_of = self
            .as_of
            .map(|t| Timestamp::parse("as_of", &t))
            .transpose()?;
        req.asked_at = self
            .asked_at
            .map(|t| Timestamp::parse("asked_at", &t))
            .transpose()?;
        req.token_budget = self.token_budget;
        req.limit = self.limit;
        req.record = self.record;
        for name in &self.without {
            req.paths.turn_off(name).map_err(|other| {
                Failure::Input(format!(
                    "without: unknown path {other:?} (expected {})",
                    kith::RetrievePaths::NAMES
                ))
            })?;
        }
        Ok(req)
    }
}
