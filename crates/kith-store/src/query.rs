//! Query and result types shared by every backend.

use kith_core::{Event, Lifecycle, Node, NodeType, OwnerId, Role, ScopeId, SessionId, Timestamp};
use serde::Serialize;
use uuid::Uuid;

/// An event with its place in the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredEvent {
    /// Ingestion order across the whole store (gaps are possible).
    pub seq: i64,
    /// The event.
    #[serde(flatten)]
    pub event: Event,
    /// Set when the event was forgotten: `event` then holds no content,
    /// speaker or metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tombstone: Option<kith_core::Tombstone>,
}

/// A node with its place in creation order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredNode {
    /// Creation order across the whole store (gaps are possible); pass the
    /// last one seen as [`NodeQuery::after_seq`] to get the next page.
    pub seq: i64,
    /// The node.
    #[serde(flatten)]
    pub node: Node,
}

/// Which events to list, in ingestion order.
#[derive(Debug, Clone, Default)]
pub struct EventQuery {
    /// Only this owner's events (`None`: every owner; for maintenance only).
    pub owner: Option<OwnerId>,
    /// Only this scope.
    pub scope: Option<ScopeId>,
    /// Only this session.
    pub session: Option<SessionId>,
    /// Only events with `seq` greater than this (paging).
    pub after_seq: i64,
    /// Only events with `seq` at most this (an event and what came before).
    pub through_seq: Option<i64>,
    /// Newest first (by `seq`) instead of oldest first: with `limit`, the
    /// newest events only.
    pub newest_first: bool,
    /// At most this many.
    pub limit: usize,
}

/// Which nodes to list, in creation order.
#[derive(Debug, Clone, Default)]
pub struct NodeQuery {
    /// Only this owner's nodes (`None`: every owner; for maintenance only).
    pub owner: Option<OwnerId>,
    /// Only this scope.
    pub scope: Option<ScopeId>,
    /// Only these types (empty: all).
    pub node_types: Vec<NodeType>,
    /// Only nodes derived from this event (their first evidence reference).
    pub event_id: Option<Uuid>,
    /// Only nodes with `seq` greater than this (paging).
    pub after_seq: i64,
    /// Only nodes whose metadata has this top-level key (letters, digits
    /// and `_`).
    pub metadata_key: Option<String>,
    /// Newest first instead of creation order.
    pub newest_first: bool,
    /// At most this many.
    pub limit: usize,
}

/// Filters every search takes besides its owner. Empty or `None` means
/// "no filter", except `lifecycles`, where empty means the active states.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchFilters {
    /// Only this scope.
    pub scope: Option<ScopeId>,
    /// Only this session.
    pub session: Option<SessionId>,
    /// Only turns by these roles (empty: all).
    pub roles: Vec<Role>,
    /// Only these node types (empty: all).
    pub node_types: Vec<NodeType>,
    /// Only these lifecycle states (empty: the active ones).
    pub lifecycles: Vec<Lifecycle>,
    /// Only what was said at or after this time (the source event's time,
    /// else its ingestion time).
    pub time_from: Option<Timestamp>,
    /// Only what was said before this time.
    pub time_to: Option<Timestamp>,
    /// Memory as it stood at this time: only nodes created at or before it,
    /// and a node retired or superseded after it counts as it was then
    /// (active). `None`: now.
    pub as_of: Option<Timestamp>,
}

/// A BM25 query over node text.
#[derive(Debug, Clone)]
pub struct LexicalQuery {
    /// Always required: nothing crosses owners.
    pub owner: OwnerId,
    /// The words to look for (free text; each backend tokenises it).
    pub text: String,
    /// Everything else to filter on.
    pub filters: SearchFilters,
    /// At most this many hits (0: no limit).
    pub limit: usize,
    /// In a big store, words found in at least this share of the rows are
    /// left out when a rarer word is left (`None`: the default,
    /// [`crate::words::COMMON_SHARE`]). A query of many alternatives (the
    /// members of a category) asks for a smaller share: each of its words
    /// is one way to match, and the common ones cost the most postings.
    pub common_share: Option<f64>,
}

impl LexicalQuery {
    /// The share of a big store's rows from which a word counts as common
    /// ([`LexicalQuery::common_share`] or the default).
    pub fn pruning_share(&self) -> f64 {
        self.common_share
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(crate::words::COMMON_SHARE)
    }
}

/// An exact nearest-neighbour query over stored embeddings.
#[derive(Debug, Clone)]
pub struct VectorQuery {
    /// Always required: nothing crosses owners.
    pub owner: OwnerId,
    /// Only vectors made by this model (vectors of two models never mix).
    pub model: String,
    /// The query vector, L2-normalised, of the model's dimension.
    pub vector: Vec<f32>,
    /// Everything else to filter on.
    pub filters: SearchFilters,
    /// At most this many hits (0: 10).
    pub limit: usize,
}

/// How many vectors a store holds for one embedding model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmbeddingModelCount {
    /// The model id.
    pub model: String,
    /// Its dimension.
    pub dimension: usize,
    /// Vectors stored.
    pub vectors: u64,
}

/// One search hit (lexical or vector) with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LexicalHit {
    /// The node found.
    pub node_id: Uuid,
    /// The path's score, higher is better: BM25 for lexical hits, cosine
    /// similarity for vector hits.
    pub score: f64,
    /// Its type.
    pub node_type: NodeType,
    /// Its text.
    pub content: String,
    /// Its scope.
    pub scope: ScopeId,
    /// The source event.
    pub event_id: Option<Uuid>,
    /// The source event's session.
    pub session_id: Option<SessionId>,
    /// The source event's role.
    pub role: Option<Role>,
    /// The source event's speaker.
    pub speaker: Option<String>,
    /// The source event's time.
    pub event_time: Option<Timestamp>,
    /// When the source event was ingested.
    pub ingested_at: Option<Timestamp>,
}

/// Counts of what a store holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Events.
    pub events: u64,
    /// Nodes, by type.
    pub nodes_by_type: Vec<(NodeType, u64)>,
    /// Edges.
    pub edges: u64,
    /// Journal records.
    pub operations: u64,
    /// Distinct owners.
    pub owners: u64,
    /// Distinct sessions.
    pub sessions: u64,
}

impl Stats {
    /// Total nodes of every type.
    pub fn nodes(&self) -> u64 {
        self.nodes_by_type.iter().map(|(_, n)| n).sum()
    }
}

/// Where an event's extraction work stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkStatus {
    /// Waiting to run.
    Pending,
    /// Taken by a process until its lease ends.
    Running,
    /// The last attempt failed; `last_error` says why.
    Failed,
    /// Derived and committed.
    Complete,
}

impl WorkStatus {
    /// The stable text form.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkStatus::Pending => "pending",
            WorkStatus::Running => "running",
            WorkStatus::Failed => "failed",
            WorkStatus::Complete => "complete",
        }
    }

    /// Parses the text form.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(WorkStatus::Pending),
            "running" => Some(WorkStatus::Running),
            "failed" => Some(WorkStatus::Failed),
            "complete" => Some(WorkStatus::Complete),
            _ => None,
        }
    }
}

/// The durable record of one event's extraction and derivation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkItem {
    /// The event to derive from.
    pub event_id: Uuid,
    /// Its owner.
    pub owner_id: OwnerId,
    /// Its scope.
    pub scope: ScopeId,
    /// Where it stands.
    pub status: WorkStatus,
    /// Attempts started so far.
    pub attempts: u32,
    /// Short code of the last failure (`timeout`, `http_status`, …).
    pub reason_code: Option<String>,
    /// The last failure, as a sentence.
    pub last_error: Option<String>,
    /// While running: when the lease ends (ms since the epoch).
    pub lease_until_ms: Option<i64>,
    /// Ingest options recorded at admission (JSON object).
    pub options: serde_json::Value,
    /// When it was admitted.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// Which work items to list, in admission order.
#[derive(Debug, Clone, Default)]
pub struct WorkQuery {
    /// Only this owner's (`None`: every owner).
    pub owner: Option<OwnerId>,
    /// Only these statuses (empty: all).
    pub statuses: Vec<WorkStatus>,
    /// Only running items whose lease ended before this time (ms); other
    /// statuses are not affected by it.
    pub lease_expired_before_ms: Option<i64>,
    /// At most this many (0: no limit).
    pub limit: usize,
}

/// A journal query: records of one owner, optionally of one kind and about
/// one target, in journal order.
#[derive(Debug, Clone)]
pub struct OperationQuery {
    /// Whose records.
    pub owner: OwnerId,
    /// Only this kind.
    pub kind: Option<kith_core::OperationKind>,
    /// Only records about this node or event.
    pub target_id: Option<Uuid>,
    /// At most this many (0: no limit).
    pub limit: usize,
}

/// Where one journal record sits and when it was written, without its
/// payload (retention reads only these to decide what expires).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationStamp {
    /// Journal position.
    pub seq: i64,
    /// The record's id.
    pub id: Uuid,
    /// When it was journaled.
    pub created_at: Timestamp,
}
