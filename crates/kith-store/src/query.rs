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
}

/// One lexical hit with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LexicalHit {
    /// The node found.
    pub node_id: Uuid,
    /// BM25 score (higher is better).
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
