//! Operations: checksummed journal records of state changes.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::canon;
use crate::ids::{OwnerId, ScopeId};
use crate::model::OperationKind;
use crate::timestamp::Timestamp;

/// One journal record. `checksum` is SHA-256 of the canonical JSON of
/// `{id, kind, owner_id, scope, target_id, payload, created_at}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    /// Deterministic where the spec says so (merges, proposals, receipts).
    pub id: Uuid,
    /// What changed.
    pub kind: OperationKind,
    /// Whose memory changed.
    pub owner_id: OwnerId,
    /// In which scope.
    pub scope: ScopeId,
    /// The main node or event the change is about.
    pub target_id: Option<Uuid>,
    /// The full record of the change.
    pub payload: Value,
    /// When it was journaled.
    pub created_at: Timestamp,
    /// See the type's documentation.
    pub checksum: String,
}

impl Operation {
    /// Builds a record and computes its checksum.
    pub fn new(
        id: Uuid,
        kind: OperationKind,
        owner_id: OwnerId,
        scope: ScopeId,
        target_id: Option<Uuid>,
        payload: Value,
        created_at: Timestamp,
    ) -> Self {
        let mut op = Operation {
            id,
            kind,
            owner_id,
            scope,
            target_id,
            payload,
            created_at,
            checksum: String::new(),
        };
        op.checksum = op.compute_checksum();
        op
    }

    /// Recomputes the checksum from the other fields.
    pub fn compute_checksum(&self) -> String {
        canon::checksum(&json!({
            "id": self.id.to_string(),
            "kind": self.kind,
            "owner_id": self.owner_id,
            "scope": self.scope,
            "target_id": self.target_id.map(|t| t.to_string()),
            "payload": self.payload,
            "created_at": self.created_at,
        }))
    }
}
