//! Reading kith's model types back out of PostgreSQL rows.
//!
//! Like the SQLite decoders, every decode re-validates through the model's
//! constructors, so a damaged row surfaces as
//! [`StoreErrorKind::Corrupted`](crate::StoreErrorKind) naming the row, never
//! as a panic. JSON columns are selected as text (`metadata::text`) and
//! parsed here, so the driver needs no JSON feature.

use kith_core::{
    Edge, EdgeType, EpistemicType, Event, Lifecycle, Node, NodeType, Operation, OperationKind,
    OwnerId, Role, ScopeId, SessionId, SourceId, SourceType, Speaker, Timestamp,
};
use postgres::types::FromSql;
use postgres::Row;
use serde_json::Value;
use uuid::Uuid;

use crate::{LexicalHit, StoreError, StoredEvent, WorkItem, WorkStatus};

/// Columns of `events`, in the names [`event`] reads.
pub const EVENT_COLUMNS: &str = "seq, id, owner_id, scope, session_id, role, speaker, content, \
     content_sha256, event_time, ingested_at, metadata::text AS metadata, source_id, checksum, \
     forgotten_at, forgotten_reason, forgotten_by, tombstone_checksum";

/// Columns of `nodes` (as `n`), in the names [`node`] reads.
pub const NODE_COLUMNS: &str = "n.seq, n.id, n.owner_id, n.scope, n.session_id, n.node_type, \
     n.content, n.metadata::text AS metadata, n.confidence, n.lifecycle, n.epistemic_type, \
     n.source_type, n.valid_from, n.valid_to, n.event_time, n.superseded_by, n.evidence_refs, \
     n.created_at, n.updated_at";

/// Columns of `edges`, in the names [`edge`] reads: the source as
/// `edge_source`, since an event's `source_id` (text) is another column
/// where rows of both kinds travel in one statement (`together.rs`).
pub const EDGE_COLUMNS: &str = "id, owner_id, scope, source_id AS edge_source, target_id, \
     edge_type, confidence, valid_from, valid_to, provenance_event_id, \
     metadata::text AS metadata, created_at";

/// Columns of `operations`, in the names [`operation`] reads.
pub const OPERATION_COLUMNS: &str =
    "seq, id, kind, owner_id, scope, target_id, payload::text AS payload, created_at, checksum";

/// Columns of `work_items`, in the names [`work_item`] reads.
pub const WORK_COLUMNS: &str = "event_id, owner_id, scope, status, attempts, reason_code, \
     last_error, lease_until_ms, options::text AS options, created_at, updated_at";

/// Columns of a search hit over `nodes n` joined to its source event `e`,
/// after a `score` column, in the names [`hit`] reads.
pub const HIT_COLUMNS: &str = "n.id, n.node_type, n.content, n.scope, e.id AS event_id, \
     e.session_id AS event_session, e.role AS event_role, e.speaker AS event_speaker, \
     e.event_time AS event_event_time, e.ingested_at AS event_ingested_at";

/// Decode context: which table and row, for error messages.
struct Ctx<'a> {
    table: &'static str,
    row: &'a Row,
}

impl Ctx<'_> {
    fn damaged(&self, what: impl std::fmt::Display) -> StoreError {
        let id = self
            .row
            .try_get::<_, Uuid>("id")
            .map(|u| u.to_string())
            .unwrap_or_else(|_| "?".into());
        StoreError::corrupted(format!("{} row {id} is damaged: {what}", self.table))
    }

    fn get<'r, T: FromSql<'r>>(&'r self, col: &str) -> Result<T, StoreError> {
        self.row
            .try_get::<_, T>(col)
            .map_err(|e| self.damaged(format!("{col}: {e}")))
    }

    fn text(&self, col: &str) -> Result<String, StoreError> {
        self.get::<String>(col)
    }

    fn opt_text(&self, col: &str) -> Result<Option<String>, StoreError> {
        self.get::<Option<String>>(col)
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

    /// Wraps a validation result in this row's context.
    fn valid<T>(&self, r: Result<T, kith_core::ValidationError>) -> Result<T, StoreError> {
        r.map_err(|e| self.damaged(e))
    }
}

/// Reads an [`EVENT_COLUMNS`] row.
pub fn event(row: &Row) -> Result<StoredEvent, StoreError> {
    let c = Ctx {
        table: "events",
        row,
    };
    Ok(StoredEvent {
        seq: c.get("seq")?,
        event: Event {
            id: c.get("id")?,
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
                operation_id: c.get("forgotten_by")?,
                checksum: c.text("tombstone_checksum")?,
            }),
        },
    })
}

/// Reads a [`NODE_COLUMNS`] row (without its seq).
pub fn node(row: &Row) -> Result<Node, StoreError> {
    let c = Ctx {
        table: "nodes",
        row,
    };
    Ok(Node {
        id: c.get("id")?,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        session_id: c.valid(c.opt_text("session_id")?.map(SessionId::new).transpose())?,
        node_type: c.valid(NodeType::parse("node_type", &c.text("node_type")?))?,
        content: c.text("content")?,
        metadata: c.json("metadata")?,
        confidence: c.get("confidence")?,
        lifecycle: c.valid(Lifecycle::parse("lifecycle", &c.text("lifecycle")?))?,
        epistemic_type: c.valid(EpistemicType::parse(
            "epistemic_type",
            &c.text("epistemic_type")?,
        ))?,
        source_type: c.valid(SourceType::parse("source_type", &c.text("source_type")?))?,
        valid_from: c.time("valid_from")?,
        valid_to: c.opt_time("valid_to")?,
        event_time: c.opt_time("event_time")?,
        superseded_by: c.get("superseded_by")?,
        evidence_refs: c.get("evidence_refs")?,
        created_at: c.time("created_at")?,
        updated_at: c.time("updated_at")?,
    })
}

/// Reads a [`NODE_COLUMNS`] row with its seq.
pub fn stored_node(row: &Row) -> Result<crate::StoredNode, StoreError> {
    let node = node(row)?;
    let seq = row
        .try_get("seq")
        .map_err(|e| StoreError::corrupted(format!("nodes row {}: seq: {e}", node.id)))?;
    Ok(crate::StoredNode { seq, node })
}

/// Reads an [`EDGE_COLUMNS`] row.
pub fn edge(row: &Row) -> Result<Edge, StoreError> {
    let c = Ctx {
        table: "edges",
        row,
    };
    Ok(Edge {
        id: c.get("id")?,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        source_id: c.get("edge_source")?,
        target_id: c.get("target_id")?,
        edge_type: c.valid(EdgeType::parse("edge_type", &c.text("edge_type")?))?,
        confidence: c.get("confidence")?,
        valid_from: c.time("valid_from")?,
        valid_to: c.opt_time("valid_to")?,
        provenance_event_id: c.get("provenance_event_id")?,
        metadata: c.json("metadata")?,
        created_at: c.time("created_at")?,
    })
}

/// Reads an [`OPERATION_COLUMNS`] row.
pub fn operation(row: &Row) -> Result<Operation, StoreError> {
    let c = Ctx {
        table: "operations",
        row,
    };
    Ok(Operation {
        id: c.get("id")?,
        kind: c.valid(OperationKind::parse("kind", &c.text("kind")?))?,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        target_id: c.get("target_id")?,
        payload: c.json("payload")?.unwrap_or(Value::Null),
        created_at: c.time("created_at")?,
        checksum: c.text("checksum")?,
    })
}

/// Reads a `seq, id, created_at` row of `operations`.
pub fn operation_stamp(row: &Row) -> Result<crate::OperationStamp, StoreError> {
    let c = Ctx {
        table: "operations",
        row,
    };
    Ok(crate::OperationStamp {
        seq: c.get("seq")?,
        id: c.get("id")?,
        created_at: c.time("created_at")?,
    })
}

/// Reads a [`WORK_COLUMNS`] row.
pub fn work_item(row: &Row) -> Result<WorkItem, StoreError> {
    let c = Ctx {
        table: "work_items",
        row,
    };
    let status = c.text("status")?;
    let attempts: i64 = c.get("attempts")?;
    let event_id: Uuid = c.get("event_id")?;
    Ok(WorkItem {
        event_id,
        owner_id: c.valid(OwnerId::new(c.text("owner_id")?))?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        status: WorkStatus::parse(&status)
            .ok_or_else(|| c.damaged(format!("unknown status {status:?}")))?,
        attempts: u32::try_from(attempts).map_err(|e| c.damaged(e))?,
        reason_code: c.opt_text("reason_code")?,
        last_error: c.opt_text("last_error")?,
        lease_until_ms: c.get("lease_until_ms")?,
        options: c.json("options")?.unwrap_or(Value::Null),
        created_at: c.time("created_at")?,
        updated_at: c.time("updated_at")?,
    })
}

/// Reads a `score, {HIT_COLUMNS}` row.
pub fn hit(row: &Row) -> Result<LexicalHit, StoreError> {
    let c = Ctx {
        table: "search hit",
        row,
    };
    Ok(LexicalHit {
        node_id: c.get("id")?,
        score: c.get("score")?,
        node_type: c.valid(NodeType::parse("node_type", &c.text("node_type")?))?,
        content: c.text("content")?,
        scope: c.valid(ScopeId::new(c.text("scope")?))?,
        event_id: c.get("event_id")?,
        session_id: c.valid(c.opt_text("event_session")?.map(SessionId::new).transpose())?,
        role: c.valid(
            c.opt_text("event_role")?
                .map(|r| Role::parse("role", &r))
                .transpose(),
        )?,
        speaker: c.opt_text("event_speaker")?,
        event_time: c.opt_time("event_event_time")?,
        ingested_at: c.opt_time("event_ingested_at")?,
    })
}

/// Serialises optional JSON as canonical text (bound as `$n::text::json`),
/// so equal values are stored byte-equal, as in SQLite.
pub fn json_text(value: &Option<Value>) -> Option<String> {
    value.as_ref().map(kith_core::canon::to_canonical_string)
}
