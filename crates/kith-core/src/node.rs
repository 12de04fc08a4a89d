//! Nodes: entities, claims, notes and summaries derived from events.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::canon;
use crate::event::Event;
use crate::ids::{self, OwnerId, ScopeId, SessionId};
use crate::model::{
    base_confidence, epistemic_for_node_type, EpistemicType, Lifecycle, NodeType, SourceType,
};
use crate::timestamp::Timestamp;

/// A node of the memory graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Deterministic where the spec says so (see [`crate::ids`]).
    pub id: Uuid,
    /// Whose memory this is.
    pub owner_id: OwnerId,
    /// Namespace inside the owner.
    pub scope: ScopeId,
    /// The conversation it came from, when known.
    pub session_id: Option<SessionId>,
    /// What the node is.
    pub node_type: NodeType,
    /// Its text.
    pub content: String,
    /// Structured details (claim fields, entity type, identity status…).
    pub metadata: Option<Value>,
    /// Base confidence in [0, 1].
    pub confidence: f64,
    /// Where the node is in its life.
    pub lifecycle: Lifecycle,
    /// How it is known.
    pub epistemic_type: EpistemicType,
    /// Where it came from.
    pub source_type: SourceType,
    /// Start of validity (inclusive).
    pub valid_from: Timestamp,
    /// End of validity (exclusive), when known.
    pub valid_to: Option<Timestamp>,
    /// When what it describes was said or happened.
    pub event_time: Option<Timestamp>,
    /// The node that replaced it, once superseded.
    pub superseded_by: Option<Uuid>,
    /// The events that support it, first one first.
    pub evidence_refs: Vec<Uuid>,
    /// When it was written.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

impl Node {
    /// The note node that `store()` writes for `event`: the message text as
    /// is, typed `node_type`, tentative, with epistemic and source types and
    /// confidence inferred from node type and role.
    pub fn note_for(event: &Event, node_type: NodeType) -> Node {
        let epistemic_type = epistemic_for_node_type(node_type);
        let source_type = SourceType::for_role(event.role);
        Node {
            id: ids::note_node_id(event.id),
            owner_id: event.owner_id.clone(),
            scope: event.scope.clone(),
            session_id: event.session_id.clone(),
            node_type,
            content: event.content.clone(),
            metadata: None,
            confidence: base_confidence(epistemic_type, source_type),
            lifecycle: Lifecycle::Tentative,
            epistemic_type,
            source_type,
            valid_from: event.effective_time(),
            valid_to: None,
            event_time: event.event_time,
            superseded_by: None,
            evidence_refs: vec![event.id],
            created_at: event.ingested_at,
            updated_at: event.ingested_at,
        }
    }

    /// SHA-256 of the node's canonical JSON (used by journal records).
    pub fn checksum(&self) -> String {
        // Serialising plain data to a Value cannot fail: every field is a
        // string, number, bool, null, array or object.
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        canon::checksum(&value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventInput, InputDefaults};

    #[test]
    fn note_inherits_the_event() {
        let e = EventInput {
            content: "I prefer green tea.".into(),
            role: "assistant".into(),
            session_id: Some("s1".into()),
            event_time: Some("2024-01-02T03:04:05+01:00".into()),
            ..EventInput::default()
        }
        .validate(&InputDefaults {
            owner_id: Some(OwnerId::new("o").unwrap()),
            scope: ScopeId::personal(),
            now: Timestamp::now(),
        })
        .unwrap()
        .event;
        let n = Node::note_for(&e, NodeType::Note);
        assert_eq!(n.id, ids::note_node_id(e.id));
        assert_eq!(n.source_type, SourceType::SystemInferred);
        assert_eq!(n.epistemic_type, EpistemicType::Asserted);
        assert_eq!(n.confidence, 0.60);
        assert_eq!(n.valid_from, e.event_time.unwrap());
        assert_eq!(n.evidence_refs, vec![e.id]);
        assert_eq!(n.checksum(), n.clone().checksum());
    }
}
