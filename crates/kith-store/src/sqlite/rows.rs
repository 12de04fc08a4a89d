//! Reading kith's model types back out of SQLite rows.
//!
//! Every decode re-validates through the model's constructors, so a damaged
//! row surfaces as [`StoreErrorKind::Corrupted`](crate::StoreErrorKind) naming
//! the row, never as a panic.

use kith_core::{
    Edge, EdgeType, EpistemicType, Event, Lifecycle, Node, NodeType, Operation, OperationKind,
    OwnerId, Role, ScopeId, SessionId, SourceId, SourceType, Speaker, Timestamp,
};
use rusqlite::Row;
use serde_json::Value;
use uuid::Uuid;

use crate::{StoreError, StoredEvent, WorkItem, WorkStatus};

/// Columns of `events`, in the order [`event`] reads them.
pub const EVENT_COLUMNS: &str = "seq, id, owner_id, scope, session_id, role, speaker, content, \
     content_sha256, event_time, ingested_at, metadata, source_id, checksum, forgotten_at, \
     forgotten_reason, forgotten_by, tombstone_checksum";

/// Columns of `nodes`, in the order [`node`] reads them.
pub const NODE_COLUMNS: &str = "id, owner_id, scope, session_id, node_type, content, metadata, \
     confidence, lifecycle, epistemic_type, source_type, valid_from, valid_to, event_time, \
     superseded_by, evidence_refs, created_at, updated_at";

/// Columns of `edges`, in the order [`edge`] reads them.
pub const EDGE_COLUMNS: &str = "id, owner_id, scope, source_id, target_id, edge_type, confidence, \
     valid_from, valid_to, provenance_event_id, metadata, created_at";

/// Columns of `operations`, in the order [`operation`] reads them.
pub const OPERATION_COLUMNS: &str =
    "id, kind, owner_id, scope, target_id, payload, created_at, checksum";

/// Decode context: which table and row, for error messages.
struct Ctx<'a> {
    table: &'static str,
    row: &'a Row<'a>,
}

impl Ctx<'_> {
    fn damaged(&self, what: impl std::fmt::Display) -> StoreError {
        let id: String = self.row.get("id").unwrap_or_else(|_| "?".into());
        StoreError::corrupted(format!("{} row {id} is damaged: {what}", self.table))
    }

    fn text(&self, col: &str) -> Result<String, StoreError> {
        self.row.get::<_, String>(col).map_err(|e| self.damaged(e))
    }

    fn opt_text(&self, col: &str) -> Result<Option<String>, StoreError> {
        self.row
            .get::<_, Option<String>>(col)
            .map_err(|e| self.damaged(e))
    }

    fn uuid(&self, col: &str) -> Result<Uuid, StoreError> {
        Uuid::parse_str(&self.text(col)?).map_err(|e| self.damaged(format!("{col}: {e}")))
    }

    fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>, StoreError> {
        self.opt_text(col)?
            .map(|t| Uuid::parse_str(&t).map_err(|e| self.damaged(format!("{col}: {e}"))))
            .transpose()
    }

    fn time(&self, col: &str) -> Result<Timestamp, StoreError> {
        Timestamp::parse(col, &self.text(col)?).map_err(|e| self.damaged(e))
    }

    fn opt_time(&self, col: &str) -> Result<Option<Timestamp>, StoreError> {
        self.opt_text(col)?
            .map(|t| Timestamp::parse(col, &t).map_err(|e| self.damaged(e)))
            .transpose()
    }

    fn json(&self, col: &str) -> Result<Option<Value>, StoreError> {
        self.opt_text(col)?
            .map(|t| serde_json::from_str(&t).map_err(|e| self.damaged(format!("{col}: {e}"))))
            .transpose()
    }

    fn real(&self, col: &str) -> Result<f64, StoreError> {
        self.row.get::<_, f64>(col).map_err(|e| self.damaged(e))
    }

    /// Wraps a validation result in this row's context.
    fn valid<T>(&self, r: Result<T, kith_core::ValidationError>) -> Result<T, StoreError> {
        r.map_err(|e| self.damaged(e))
    }
}

/// Reads an [`EVENT_COLUMNS`] row.
pub fn event(row: &Row<'_>) -> Result<StoredEvent, StoreError> {
    let c = Ctx {
        table: "events",
        row,
    };
    let seq: i64 = row.get("seq").map_err(|e| c.damaged(e))?;
    Ok(StoredEvent {
        seq,
        event: Event {
            id: c.uuid("id")?,
            owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
            scope: c.valid(ScopeId::new(c.text("scope")?))?,
            session_id: c.valid(c.opt_text("session_id")?.map(SessionId::new).transpose())?,
            role: c.valid(Role::parse("role", &c.text("role")?))?,
            speaker: c.valid(c.opt_text("speaker")?.map(Speaker::new).transpose())?,
            content: c.text("content")?,
            content_sha256: c.text("content_sha256")?,
            event_time: c.opt_time("event_time")?,
            ingested_at: c.time("ingested_at")?,
            metadata: c.json("metadata")?,
            source_id: c.valid(SourceId::new(c.text("source_id")?))?,
            checksum: c.text("checksum")?,
        },
        tombstone: match c.opt_time("forgotten_at")? {
            None => None,
            Some(forgotten_at) => Some(kith_core::Tombstone {
                forgotten_at,
                reason: c.text("forgotten_reason")?,
                operation_id: c.uuid("forgotten_by")?,
                checksum: c.text("tombstone_checksum")?,
            }),
        },
    })
}

/// Reads a [`NODE_COLUMNS`] row.
pub fn node(row: &Row<'_>) -> Result<Node, StoreError> {
    let c = Ctx {
        table: "nodes",
        row,
    };
    let refs: Vec<Uuid> = serde_json::from_str(&c.text("evidence_refs")?)
        .map_err(|e| c.damaged(format!("evidence_refs: {e}")))?;
    Ok(Node {
        id: c.uuid("id")?,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        session_id: c.valid(c.opt_text("session_id")?.map(SessionId::new).transpose())?,
        node_type: c.valid(NodeType::parse("node_type", &c.text("node_type")?))?,
        content: c.text("content")?,
        metadata: c.json("metadata")?,
        confidence: c.real("confidence")?,
        lifecycle: c.valid(Lifecycle::parse("lifecycle", &c.text("lifecycle")?))?,
        epistemic_type: c.valid(EpistemicType::parse(
            "epistemic_type",
            &c.text("epistemic_type")?,
        ))?,
        source_type: c.valid(SourceType::parse("source_type", &c.text("source_type")?))?,
        valid_from: c.time("valid_from")?,
        valid_to: c.opt_time("valid_to")?,
        event_time: c.opt_time("event_time")?,
        superseded_by: c.opt_uuid("superseded_by")?,
        evidence_refs: refs,
        created_at: c.time("created_at")?,
        updated_at: c.time("updated_at")?,
    })
}

/// Reads an [`EDGE_COLUMNS`] row.
pub fn edge(row: &Row<'_>) -> Result<Edge, StoreError> {
    let c = Ctx {
        table: "edges",
        row,
    };
    Ok(Edge {
        id: c.uuid("id")?,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        source_id: c.uuid("source_id")?,
        target_id: c.uuid("target_id")?,
        edge_type: c.valid(EdgeType::parse("edge_type", &c.text("edge_type")?))?,
        confidence: c.real("confidence")?,
        valid_from: c.time("valid_from")?,
        valid_to: c.opt_time("valid_to")?,
        provenance_event_id: c.opt_uuid("provenance_event_id")?,
        metadata: c.json("metadata")?,
        created_at: c.time("created_at")?,
    })
}

/// Reads an [`OPERATION_COLUMNS`] row.
pub fn operation(row: &Row<'_>) -> Result<Operation, StoreError> {
    let c = Ctx {
        table: "operations",
        row,
    };
    Ok(Operation {
        id: c.uuid("id")?,
        kind: c.valid(OperationKind::parse("kind", &c.text("kind")?))?,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        target_id: c.opt_uuid("target_id")?,
        payload: c.json("payload")?.unwrap_or(Value::Null),
        created_at: c.time("created_at")?,
        checksum: c.text("checksum")?,
    })
}

/// Reads a `seq, id, created_at` row of `operations`.
pub fn operation_stamp(row: &Row<'_>) -> Result<crate::OperationStamp, StoreError> {
    let c = Ctx {
        table: "operations",
        row,
    };
    Ok(crate::OperationStamp {
        seq: row.get("seq").map_err(|e| c.damaged(e))?,
        id: c.uuid("id")?,
        created_at: c.time("created_at")?,
    })
}

/// Columns of `work_items`, in the order [`work_item`] reads them.
pub const WORK_COLUMNS: &str = "event_id, owner_id, scope, status, attempts, reason_code, \
     last_error, lease_until_ms, options, created_at, updated_at";

/// Reads a [`WORK_COLUMNS`] row.
pub fn work_item(row: &Row<'_>) -> Result<WorkItem, StoreError> {
    let c = Ctx {
        table: "work_items",
        row,
    };
    let status = c.text("status")?;
    let attempts: i64 = row.get("attempts").map_err(|e| c.damaged(e))?;
    Ok(WorkItem {
        event_id: c.uuid("event_id")?,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        status: WorkStatus::parse(&status)
            .ok_or_else(|| c.damaged(format!("unknown status {status:?}")))?,
        attempts: u32::try_from(attempts).map_err(|e| c.damaged(e))?,
        reason_code: c.opt_text("reason_code")?,
        last_error: c.opt_text("last_error")?,
        lease_until_ms: row.get("lease_until_ms").map_err(|e| c.damaged(e))?,
        options: c.json("options")?.unwrap_or(Value::Null),
        created_at: c.time("created_at")?,
        updated_at: c.time("updated_at")?,
    })
}

/// Serialises optional JSON for a TEXT column (canonical form, so equal
/// values are stored byte-equal).
pub fn json_text(value: &Option<Value>) -> Option<String> {
    value.as_ref().map(kith_core::canon::to_canonical_string)
}
