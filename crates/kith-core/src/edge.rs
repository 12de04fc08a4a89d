//! Edges: typed, provenanced relationships between nodes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::ids::{OwnerId, ScopeId};
use crate::model::EdgeType;
use crate::timestamp::Timestamp;

/// A directed edge `source → target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Deterministic where the spec says so.
    pub id: Uuid,
    /// Whose memory this is (both endpoints belong to the same owner).
    pub owner_id: OwnerId,
    /// Namespace inside the owner.
    pub scope: ScopeId,
    /// The node the edge starts at.
    pub source_id: Uuid,
    /// The node the edge points to.
    pub target_id: Uuid,
    /// What the edge says.
    pub edge_type: EdgeType,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Start of validity (inclusive).
    pub valid_from: Timestamp,
    /// End of validity (exclusive).
    pub valid_to: Option<Timestamp>,
    /// The event that established it.
    pub provenance_event_id: Option<Uuid>,
    /// Structured details.
    pub metadata: Option<Value>,
    /// When it was written.
    pub created_at: Timestamp,
}

impl Edge {
    /// Whether the edge still links its endpoints: an edge with a
    /// `valid_to` was closed (a re-derivation bound its claim elsewhere) and
    /// is kept only as history, never traversed.
    pub fn is_open(&self) -> bool {
        self.valid_to.is_none()
    }
}
