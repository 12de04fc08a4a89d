//! The organizer's journal: sealed records (`{"record", "sha256"}`), the
//! live generation of a record, a pair's history, and the checks that keep
//! non-finite numbers out of what is sealed.

use kith_core::{canon, Node, Operation, OperationKind, Timestamp};
use kith_identity::aliases::{LiveReview, UndoneMerge};
use kith_store::Tx;
use serde_json::{json, Value};
use uuid::Uuid;

use super::{
    merge, merge_op_id, proposal_op_id, review_op_id, undo_op_id, MergeKind, OrganizerError,
};
use crate::error::Error;

/// The live generation of a generational record: the first id `id(n)` that
/// is unused, or used and not undone. Returns the id, its generation and
/// the record when it exists.
pub(crate) fn live_op(
    tx: &mut dyn Tx,
    id: impl Fn(u32) -> Uuid,
) -> Result<(Uuid, u32, Option<Operation>), Error> {
    // Each generation needs an undo of the one before; a bound keeps a
    // damaged journal from looping for ever.
    for generation in 0..10_000 {
        let op_id = id(generation);
        match tx.get_operation(op_id)? {
            None => return Ok((op_id, generation, None)),
            Some(op) => {
                if tx.get_operation(undo_op_id(op_id))?.is_none() {
                    return Ok((op_id, generation, Some(op)));
                }
            }
        }
    }
    Err(Error::Damaged(
        "more than 10000 undone generations of one record".into(),
    ))
}

/// What the journal says about the unordered pair `(a, b)`, `a < b`: its
/// latest undone merge (of either kind) and its live alias review. The
/// decision is [`kith_identity::aliases::merge_gate`]'s.
pub(crate) fn pair_history(
    tx: &mut dyn Tx,
    a: Uuid,
    b: Uuid,
) -> Result<(Option<UndoneMerge>, Option<LiveReview>), Error> {
    let mut latest: Option<(Timestamp, UndoneMerge)> = None;
    for kind in [MergeKind::Duplicate, MergeKind::Alias] {
        for generation in 0..10_000 {
            let op_id = merge_op_id(a, b, kind, generation);
            let Some(op) = tx.get_operation(op_id)? else {
                break;
            };
            let Some(undo) = tx.get_operation(undo_op_id(op_id))? else {
                break;
            };
            // A forget scrubbed this history with what it named: there is
            // no decision left to honour for it.
            if kith_core::tombstone::is_scrubbed(&op.payload)
                || kith_core::tombstone::is_scrubbed(&undo.payload)
            {
                continue;
            }
            let record = unseal(&op)?;
            let undo_record = unseal(&undo)?;
            let name = |id: Uuid| -> String {
                ["keep", "retired"]
                    .iter()
                    .filter_map(|w| merge::record_node(record, "before", w))
                    .find(|n| n.id == id)
                    .map(|n| n.content)
                    .unwrap_or_default()
            };
            let undone = UndoneMerge {
                undo_op: undo.id,
                names: (name(a), name(b)),
                review_at_undo: undo_record
                    .get("pair_review")
                    .and_then(Value::as_str)
                    .and_then(|s| s.parse().ok()),
            };
            if latest.as_ref().is_none_or(|(t, _)| undo.created_at >= *t) {
                latest = Some((undo.created_at, undone));
            }
        }
    }
    let (review_id, _, review) = live_op(tx, |g| review_op_id(proposal_op_id(a, b), g))?;
    let review = review.map(|op| LiveReview {
        op: review_id,
        accepted: op.kind == OperationKind::AliasProposalAccepted,
    });
    Ok((latest.map(|(_, u)| u), review))
}

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

/// A value as it will read back from the journal. serde_json's float
/// parsing is not an exact inverse of its printing for every f64, so
/// checksums and comparisons are taken over the value after one trip.
pub(crate) fn as_read_back(value: Value) -> Result<Value, Error> {
    serde_json::from_str(&value.to_string())
        .map_err(|e| Error::Damaged(format!("journal record: {e}")))
}

/// A node as its journal snapshot.
pub(crate) fn snapshot(node: &Node) -> Result<Value, Error> {
    let value =
        serde_json::to_value(node).map_err(|e| Error::Damaged(format!("node {}: {e}", node.id)))?;
    as_read_back(value)
}

/// SHA-256 of a node's journal snapshot: equal exactly when the node is
/// unchanged.
pub(crate) fn snapshot_checksum(node: &Node) -> Result<String, Error> {
    Ok(canon::checksum(&snapshot(node)?))
}

/// `{"record": record, "sha256": SHA-256 of its canonical JSON}`.
pub(crate) fn sealed(record: Value) -> Result<Value, Error> {
    let record = as_read_back(record)?;
    let sha = canon::checksum(&record);
    Ok(json!({"record": record, "sha256": sha}))
}

/// The record of a sealed payload, if its SHA-256 matches.
pub(crate) fn unseal(op: &Operation) -> Result<&Value, Error> {
    let damaged = |reason: &str| {
        Error::from(OrganizerError::DamagedRecord {
            op: op.id,
            reason: reason.to_string(),
        })
    };
    if op.compute_checksum() != op.checksum {
        return Err(damaged("its checksum does not match its fields"));
    }
    if kith_core::tombstone::is_scrubbed(&op.payload) {
        return Err(OrganizerError::Forgotten {
            op: op.id,
            by: op.payload["forgotten"]["operation_id"]
                .as_str()
                .unwrap_or("?")
                .to_string(),
        }
        .into());
    }
    let record = op
        .payload
        .get("record")
        .ok_or_else(|| damaged("no record"))?;
    if op.payload.get("sha256").and_then(Value::as_str) != Some(&canon::checksum(record)) {
        return Err(damaged("the record does not match its SHA-256"));
    }
    Ok(record)
}

/// Rejects a non-finite number before anything is written (serde_json
/// would silently print it as `null`).
pub(crate) fn ensure_finite(path: &str, value: f64) -> Result<(), Error> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(OrganizerError::NonFinite {
            path: path.to_string(),
        }
        .into())
    }
}

/// Checks a node's numbers and metadata are finite.
pub(crate) fn ensure_node_finite(node: &Node) -> Result<(), Error> {
    ensure_finite(&format!("node {} confidence", node.id), node.confidence)?;
    if let Some(m) = &node.metadata {
        kith_core::canon::ensure_finite(&format!("node {} metadata", node.id), m)?;
    }
    Ok(())
}

/// Checks an edge's numbers and metadata are finite.
pub(crate) fn ensure_edge_finite(edge: &kith_core::Edge) -> Result<(), Error> {
    ensure_finite(&format!("edge {} confidence", edge.id), edge.confidence)?;
    if let Some(m) = &edge.metadata {
        kith_core::canon::ensure_finite(&format!("edge {} metadata", edge.id), m)?;
    }
    Ok(())
}
