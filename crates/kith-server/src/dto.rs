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

/// Several messages ingested at once: all admitted in one transaction (all
/// or none), then extracted one by one, or by the server's worker with
/// `defer`.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IngestBatchBody {
    /// At most [`MAX_BATCH`] messages (the fields of `POST /v1/events`,
    /// without `node_type`).
    pub events: Vec<MessageBody>,
    /// Only admit the messages; the server's background worker extracts
    /// them (or `kith process`). Recommended for big batches: the answer
    /// comes once all are durable, not once all are extracted.
    #[serde(default)]
    pub defer: bool,
    /// A user turn's singular first person is the owner (for every message).
    #[serde(default)]
    pub first_person_owner: bool,
}

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
    /// When the question is asked (RFC 3339): its relative dates ("a month
    /// ago", "last Friday") are read against this time. Default: `as_of`,
    /// else the owner's newest turn. Unlike `as_of` it hides nothing.
    #[serde(default)]
    pub asked_at: Option<String>,
    /// Paths to turn off: `lexical`, `vector`, `graph`, `neighbours`,
    /// `recency`, `dated`, `speaker_boost`.
    #[serde(default)]
    pub without: Vec<String>,
    /// Path weights over the defaults, e.g. `{"vector": 0.7}`.
    #[serde(default)]
    pub weights: BTreeMap<String, f64>,
    /// Journal a receipt (`GET /v1/retrievals/{id}`); default true.
    #[serde(default = "yes")]
    #[schema(default = true)]
    pub record: bool,
    /// `compact` (the packed context, and per result its id, speaker, time
    /// and score) or `full` (also content, provenance, traces, packed
    /// lines, left-out ids, timings). Default: `full` over HTTP, `compact`
    /// over MCP.
    #[serde(default)]
    pub detail: Option<crate::compact::Detail>,
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
        req.asked_at = self
            .asked_at
            .as_deref()
            .map(|t| Timestamp::parse("asked_at", t))
            .transpose()?;
        req.token_budget = self.token_budget;
        req.limit = self.limit;
        req.record = self.record;
        for name in &self.without {
            req.paths.turn_off(name).map_err(|other| {
                ApiError::invalid(format!(
                    "without: unknown path {other:?} (expected {})",
                    kith::RetrievePaths::NAMES
                ))
            })?;
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

// ---------------------------------------------------------------------------
// Organizer
// ---------------------------------------------------------------------------

/// An organizer job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobName {
    /// Merge exact duplicates (same text, provenance and validity).
    Deduplicate,
    /// Merge known name variants of an entity (case, punctuation, known
    /// abbreviations); propose semantic ones for review.
    AliasResolve,
}

impl From<JobName> for kith::Job {
    fn from(j: JobName) -> Self {
        match j {
            JobName::Deduplicate => kith::Job::Deduplicate,
            JobName::AliasResolve => kith::Job::AliasResolve,
        }
    }
}

/// Which job considers a candidate pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CandidateKind {
    /// The deduplicate job.
    Duplicate,
    /// The alias_resolve job.
    Alias,
}

impl From<CandidateKind> for kith::organize::MergeKind {
    fn from(k: CandidateKind) -> Self {
        match k {
            CandidateKind::Duplicate => kith::organize::MergeKind::Duplicate,
            CandidateKind::Alias => kith::organize::MergeKind::Alias,
        }
    }
}

/// A pair the caller asks the organizer to consider. A candidate only:
/// every admission check still runs on the stored nodes, and `score`
/// counts as a semantic score, which at most creates an unverified alias
/// proposal (never a merge).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CandidateBody {
    /// One node id (the request owner's; another owner's is 404).
    pub a: String,
    /// The other node id.
    pub b: String,
    /// Which job considers the pair (default `alias`).
    #[serde(default = "default_candidate_kind")]
    #[schema(default = "alias")]
    pub kind: CandidateKind,
    /// A similarity score in [0, 1], if the caller has one (at least 0.85
    /// proposes an alias).
    #[serde(default)]
    pub score: Option<f64>,
}

fn default_candidate_kind() -> CandidateKind {
    CandidateKind::Alias
}

fn default_jobs() -> Vec<JobName> {
    vec![JobName::Deduplicate, JobName::AliasResolve]
}

/// Most candidate pairs one organize request may name.
pub const MAX_CANDIDATES: usize = 1000;

/// Most candidate pairs one job may examine.
pub const MAX_ORGANIZE_BUDGET: usize = 100_000;

/// An organizer run over the owner's memory (synchronous: the answer is
/// the report of what was merged, proposed and left alone).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrganizeBody {
    /// Jobs, run in this order (default both: `deduplicate`,
    /// `alias_resolve`).
    #[serde(default = "default_jobs")]
    pub jobs: Vec<JobName>,
    /// Candidate pairs examined per job at most (default 1000, at most
    /// 100000); a report with `budget_exhausted` wants another run.
    #[serde(default)]
    pub budget: Option<usize>,
    /// Score a name match needs to merge two entities, in [0, 1]
    /// (default 0.90).
    #[serde(default)]
    pub alias_threshold: Option<f64>,
    /// Extra candidate pairs (at most 1000).
    #[serde(default)]
    pub candidates: Vec<CandidateBody>,
}

impl OrganizeBody {
    /// The facade request for `owner` (shape checks only; the caller still
    /// checks that every candidate node is the owner's).
    pub fn into_request(self, owner: &Owner) -> Result<kith::OrganizeRequest, ApiError> {
        if self.jobs.is_empty() {
            return Err(ApiError::invalid(
                "jobs: give at least one of deduplicate, alias_resolve",
            ));
        }
        if self.candidates.len() > MAX_CANDIDATES {
            return Err(ApiError::invalid(format!(
                "candidates: at most {MAX_CANDIDATES} pairs"
            )));
        }
        let mut req = kith::OrganizeRequest::new(
            owner.0.clone(),
            self.jobs.into_iter().map(kith::Job::from).collect(),
        );
        if let Some(budget) = self.budget {
            if !(1..=MAX_ORGANIZE_BUDGET).contains(&budget) {
                return Err(ApiError::invalid(format!(
                    "budget must be between 1 and {MAX_ORGANIZE_BUDGET}"
                )));
            }
            req.budget = budget;
        }
        if let Some(t) = self.alias_threshold {
            req.alias_threshold = t;
        }
        for (i, c) in self.candidates.into_iter().enumerate() {
            let id = |field: &str, raw: &str| {
                uuid::Uuid::parse_str(raw.trim()).map_err(|_| {
                    ApiError::invalid(format!("candidates[{i}].{field}: {raw:?} is not a UUID"))
                })
            };
            req.hints.push(kith::organize::CandidateHint {
                a: id("a", &c.a)?,
                b: id("b", &c.b)?,
                kind: c.kind.into(),
                score: c.score,
            });
        }
        Ok(req)
    }
}

/// An owner's decision on an alias proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionName {
    /// The two entities are the same: publish a verified alias edge (both
    /// stay; nothing merges).
    Accept,
    /// They are not: publish nothing and never propose the pair again
    /// (needs a `reason`).
    Reject,
}

impl From<DecisionName> for kith::Decision {
    fn from(d: DecisionName) -> Self {
        match d {
            DecisionName::Accept => kith::Decision::Accept,
            DecisionName::Reject => kith::Decision::Reject,
        }
    }
}

/// The one decision on an alias proposal. The same decision with the same
/// reason and reviewer again returns the first record; any other is 409.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewBody {
    /// `accept` or `reject`.
    pub decision: DecisionName,
    /// Why (required to reject).
    #[serde(default)]
    pub reason: Option<String>,
    /// Who decided (kept in the decision record).
    #[serde(default)]
    pub reviewer: Option<String>,
}

/// Where an alias proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatusName {
    /// Waiting for a decision.
    Pending,
    /// Accepted: a verified alias edge exists.
    Accepted,
    /// Rejected.
    Rejected,
}

impl ProposalStatusName {
    /// Whether `status` is this one.
    pub fn matches(self, status: kith::ProposalStatus) -> bool {
        matches!(
            (self, status),
            (ProposalStatusName::Pending, kith::ProposalStatus::Pending)
                | (ProposalStatusName::Accepted, kith::ProposalStatus::Accepted)
                | (ProposalStatusName::Rejected, kith::ProposalStatus::Rejected)
        )
    }
}

/// Filter and paging for the alias-proposal inbox (query parameters over
/// HTTP, arguments over MCP).
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams, JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AliasListQuery {
    /// Only proposals with this status (`pending`, `accepted`, `rejected`).
    #[serde(default)]
    pub status: Option<ProposalStatusName>,
    /// At most this many (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Start after this proposal (the previous page's `next_after`).
    #[serde(default)]
    pub after: Option<String>,
}

/// Who made an external assessment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssessorKindName {
    /// A person.
    Reviewer,
    /// A model.
    Model,
}

/// An assessor's verdict on whether two entities are one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerdictName {
    /// The same entity.
    Same,
    /// Two entities.
    Different,
    /// Cannot tell.
    Unsure,
}

/// A complete external assessment: who judged, the verdict, the reasons.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssessmentBody {
    /// `reviewer` or `model`.
    pub assessor_kind: AssessorKindName,
    /// Who: a reviewer's name or a model's id.
    pub assessor_id: String,
    /// `same`, `different` or `unsure`.
    pub verdict: VerdictName,
    /// Why: one to 16 non-empty reasons.
    pub reasons: Vec<String>,
}

impl From<AssessmentBody> for kith::Assessment {
    fn from(b: AssessmentBody) -> Self {
        kith::Assessment {
            assessor: kith::Assessor {
                kind: match b.assessor_kind {
                    AssessorKindName::Reviewer => kith::organize::AssessorKind::Reviewer,
                    AssessorKindName::Model => kith::organize::AssessorKind::Model,
                },
                id: b.assessor_id,
            },
            verdict: match b.verdict {
                VerdictName::Same => kith::Verdict::Same,
                VerdictName::Different => kith::Verdict::Different,
                VerdictName::Unsure => kith::Verdict::Unsure,
            },
            reasons: b.reasons,
        }
    }
}

/// An explicit alias proposal between two of the owner's entities, with an
/// optional external assessment (a version-2 record). Nothing merges; the
/// owner reviews it like any proposal. A repeated request for the same
/// pair answers the first committed record unchanged.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeBody {
    /// One entity id.
    pub a: String,
    /// The other.
    pub b: String,
    /// How alike they are, in [0, 1].
    pub score: f64,
    /// Who judged the pair, the verdict and the reasons.
    #[serde(default)]
    pub assessment: Option<AssessmentBody>,
}

impl ProposeBody {
    /// The facade request (ids parsed; the rest is checked by the engine).
    pub fn into_request(self) -> Result<kith::ProposeAliasRequest, ApiError> {
        let id = |field: &str, raw: &str| {
            uuid::Uuid::parse_str(raw.trim())
                .map_err(|_| ApiError::invalid(format!("{field}: {raw:?} is not a UUID")))
        };
        Ok(kith::ProposeAliasRequest {
            a: id("a", &self.a)?,
            b: id("b", &self.b)?,
            score: self.score,
            assessment: self.assessment.map(Into::into),
        })
    }
}

/// A shortest-path query between two of the owner's nodes (query
/// parameters over HTTP, arguments over MCP).
#[derive(Debug, Clone, Deserialize, utoipa::IntoParams, JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PathQuery {
    /// The start node's id.
    pub from: String,
    /// The end node's id.
    pub to: String,
    /// Also follow unverified alias proposals (default false: like the
    /// neighbourhood, a proposal is not an identity link).
    #[serde(default)]
    pub include_unverified_aliases: Option<bool>,
    /// Hops at most, 1 to 12 (default 6).
    #[serde(default)]
    pub max_hops: Option<usize>,
}

impl PathQuery {
    /// The facade request.
    pub fn into_request(self) -> Result<kith::PathRequest, ApiError> {
        let id = |field: &str, raw: &str| {
            uuid::Uuid::parse_str(raw.trim())
                .map_err(|_| ApiError::invalid(format!("{field}: {raw:?} is not a UUID")))
        };
        let mut req = kith::PathRequest::new(id("from", &self.from)?, id("to", &self.to)?);
        req.include_unverified_aliases = self.include_unverified_aliases.unwrap_or(false);
        if let Some(h) = self.max_hops {
            req.max_hops = h;
        }
        Ok(req)
    }
}

/// A correction: which of an entity's claims are about someone else,
/// named by their evidence (`claims`, or the `events` whose claims move),
/// and where they go (`to`: an existing entity id, or `new_person`: a name).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectionBody {
    /// The entity the claims are wrongly attributed to.
    pub entity: String,
    /// Claim ids to move (rebind). Either this or `events`.
    #[serde(default)]
    pub claims: Vec<String>,
    /// Event ids whose claims of `entity` move (split). Either this or
    /// `claims`.
    #[serde(default)]
    pub events: Vec<String>,
    /// An existing entity of the owner to move them to. Either this or
    /// `new_person`.
    #[serde(default)]
    pub to: Option<String>,
    /// The name of a new person entity to move them to.
    #[serde(default)]
    pub new_person: Option<String>,
    /// Why (required; kept in the journal record).
    pub reason: String,
}

impl CorrectionBody {
    /// The facade request (ids parsed; the rest is checked by the engine).
    pub fn into_request(self) -> Result<kith::Correction, ApiError> {
        let id = |field: &str, raw: &str| {
            uuid::Uuid::parse_str(raw.trim())
                .map_err(|_| ApiError::invalid(format!("{field}: {raw:?} is not a UUID")))
        };
        let ids = |field: &str, raw: &[String]| -> Result<Vec<uuid::Uuid>, ApiError> {
            raw.iter().map(|r| id(field, r)).collect()
        };
        let to = match (self.to, self.new_person) {
            (Some(to), None) => kith::CorrectionTarget::Entity { id: id("to", &to)? },
            (None, Some(name)) => kith::CorrectionTarget::NewPerson { name },
            _ => {
                return Err(ApiError::invalid(
                    "give exactly one of `to` (an entity id) and `new_person` (a name)",
                ))
            }
        };
        Ok(kith::Correction {
            entity: id("entity", &self.entity)?,
            claims: ids("claims", &self.claims)?,
            events: ids("events", &self.events)?,
            to,
            reason: self.reason,
        })
    }
}

/// A forget request (MCP `memory_forget`): exactly one selector, a reason,
/// optionally a dry run. The HTTP API takes the same through
/// `DELETE /v1/events/{id}`, `/v1/sessions/{id}` and `/v1/owner`.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetBody {
    /// One event, by id.
    #[serde(default)]
    pub event_id: Option<String>,
    /// The event stored under this message id.
    #[serde(default)]
    pub source_id: Option<String>,
    /// Every event of one session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Every event said (or, without an event time, stored) before this
    /// RFC 3339 time.
    #[serde(default)]
    pub before: Option<String>,
    /// Every event of the owner.
    #[serde(default)]
    pub whole_owner: bool,
    /// Why (required; kept in every tombstone and the FORGOTTEN record).
    pub reason: String,
    /// List what would go; write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

impl ForgetBody {
    /// The facade request; anything but exactly one selector is 422.
    pub fn into_request(self) -> Result<kith::ForgetRequest, ApiError> {
        use kith::ForgetSelector as S;
        let mut selectors = Vec::new();
        if let Some(id) = &self.event_id {
            let id = uuid::Uuid::parse_str(id.trim())
                .map_err(|_| ApiError::invalid(format!("event_id: {id:?} is not a UUID")))?;
            selectors.push(S::Event(id));
        }
        if let Some(s) = self.source_id {
            selectors.push(S::SourceId(kith::SourceId::new(s)?));
        }
        if let Some(s) = self.session_id {
            selectors.push(S::Session(SessionId::new(s)?));
        }
        if let Some(t) = &self.before {
            selectors.push(S::Before(Timestamp::parse("before", t)?));
        }
        if self.whole_owner {
            selectors.push(S::Owner);
        }
        if selectors.len() != 1 {
            return Err(ApiError::invalid(
                "give exactly one of event_id, source_id, session_id, before and whole_owner",
            ));
        }
        Ok(kith::ForgetRequest {
            selector: selectors.remove(0),
            reason: self.reason,
            dry_run: self.dry_run,
        })
    }
}

/// Retracting a claim (`POST /v1/claims/{id}/retract`).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetractClaimBody {
    /// Why (required; kept in the journal record).
    pub reason: String,
}

/// Correcting a claim's value (`POST /v1/claims/{id}/correct`).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectClaimBody {
    /// The right value: a new claim with it supersedes the old one.
    pub object: String,
    /// Why (required; kept in the journal record).
    pub reason: String,
}

/// The facts view's question (query parameters over HTTP, arguments over
/// MCP).
#[derive(Debug, Clone, Deserialize, utoipa::IntoParams, JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ClaimsQuery {
    /// The subject's name (case-insensitive).
    pub subject: String,
    /// Also list retracted and superseded claims (default false).
    #[serde(default)]
    pub all: Option<bool>,
}

impl ClaimsQuery {
    /// Which claims to list.
    pub fn history(&self) -> kith::ClaimHistory {
        if self.all.unwrap_or(false) {
            kith::ClaimHistory::All
        } else {
            kith::ClaimHistory::Current
        }
    }
}
