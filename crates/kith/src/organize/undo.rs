//! Undo: reversing a merge or an accepted alias from its journal record.
//!
//! One transaction: the record is verified (checksum and SHA-256), every
//! node and edge it published must still be exactly as it left them, then
//! the nodes get their `before` values back, the published edges are
//! removed, and an `UNDO` record is journaled. When anything changed since
//! (a later merge retired the kept node, a copied edge is gone), the undo
//! is refused with the reason and nothing is written: undoing on top of a
//! later change would silently discard it.

use kith_core::{Edge, Node, Operation, OperationKind, OwnerId, Timestamp};
use kith_store::{OperationQuery, Tx, TxMode};
use serde::Serialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::undo_record::{Inverse, Undoing};
use super::{sealed, snapshot, undo_op_id, unseal, OrganizerError};
use crate::context::Ctx;
use crate::error::Error;

/// The record format of `UNDO`.
pub const UNDO_FORMAT: &str = "kith.undo.v1";

/// What `undo` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UndoReport {
    /// The `UNDO` record.
    pub undo_op_id: Uuid,
    /// The record undone.
    pub undone_op_id: Uuid,
    /// Its kind.
    pub undone_kind: OperationKind,
    /// Nodes given their earlier values back.
    pub restored_nodes: Vec<Uuid>,
    /// Edges removed.
    pub removed_edges: Vec<Uuid>,
    /// True when the record was undone before and nothing was written.
    pub replayed: bool,
}

fn ids_of(v: Option<&Value>) -> Vec<Uuid> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

/// Undoes an `ORGANIZER_MERGED`, `ALIAS_PROPOSAL_ACCEPTED`,
/// `IDENTITY_CORRECTED`, `CLAIM_RETRACTED` or `CLAIM_CORRECTED` record of `owner` in one transaction, journaled
/// as `UNDO`. Refused (typed
/// [`OrganizerError::UndoRefused`], nothing written) when later changes
/// depend on it. Undoing twice returns the first undo.
pub(crate) fn undo(ctx: &Ctx<'_>, owner: &OwnerId, op_id: Uuid) -> Result<UndoReport, Error> {
    // Undoing twice returns the first undo, so retrying is safe.
    crate::retry::on_busy("undo", || undo_once(ctx, owner, op_id))
}

/// One undo: find the record, check it can be undone, have its kind write
/// the inverse, and seal the `UNDO` record (all in one transaction).
fn undo_once(ctx: &Ctx<'_>, owner: &OwnerId, op_id: Uuid) -> Result<UndoReport, Error> {
    let mut tx = ctx.store.begin(TxMode::Write)?;
    let op = match tx.get_operation(op_id)? {
        Some(op) if &op.owner_id == owner => op,
        _ => {
            return Err(Error::NotFound {
                what: format!("journal record {op_id} of owner {owner}"),
            })
        }
    };
    if !matches!(
        op.kind,
        OperationKind::OrganizerMerged
            | OperationKind::AliasProposalAccepted
            | OperationKind::IdentityCorrected
            | OperationKind::ClaimRetracted
            | OperationKind::ClaimCorrected
    ) {
        return Err(OrganizerError::UndoRefused {
            op: op_id,
            reason: format!(
                "it is a {} record; only ORGANIZER_MERGED, ALIAS_PROPOSAL_ACCEPTED, IDENTITY_CORRECTED, CLAIM_RETRACTED and CLAIM_CORRECTED records can be undone",
                op.kind
            ),
        }
        .into());
    }
    let undoing = Undoing::new(&op)?;
    if let Some(done) = tx.get_operation(undo_op_id(op_id))? {
        return replayed(&op, &done);
    }
    let inverse = match op.kind {
        OperationKind::IdentityCorrected => crate::correct::undo_correction(&mut *tx, &undoing)?,
        OperationKind::ClaimRetracted | OperationKind::ClaimCorrected => {
            crate::claims::undo_claim_edit(&mut *tx, &undoing)?
        }
        _ => undo_published(ctx, &mut *tx, owner, &undoing)?,
    };
    journal_undo(tx, &op, inverse)
}

/// The report of an undo made before (`done` is its `UNDO` record).
fn replayed(op: &Operation, done: &Operation) -> Result<UndoReport, Error> {
    let r = unseal(done)?;
    Ok(UndoReport {
        undo_op_id: done.id,
        undone_op_id: op.id,
        undone_kind: op.kind,
        restored_nodes: ids_of(r.get("restored_node_ids")),
        removed_edges: ids_of(r.get("removed_edge_ids")),
        replayed: true,
    })
}

/// Reverses a merge or an accepted alias: removes the edges it published
/// and, for a merge, gives both nodes their earlier values back and
/// records the owner's "not the same" for the pair.
fn undo_published(
    ctx: &Ctx<'_>,
    tx: &mut dyn Tx,
    owner: &OwnerId,
    undoing: &Undoing<'_>,
) -> Result<Inverse, Error> {
    let (op, record) = (undoing.op, &undoing.record);
    let merged = op.kind == OperationKind::OrganizerMerged;
    let published = published_edges(tx, undoing)?;
    let mut inverse = Inverse {
        removed: published.iter().map(|e| e.id).collect(),
        ..Inverse::default()
    };
    let mut replaced = Vec::new();
    if merged {
        check_copies(tx, undoing, &published)?;
        (inverse.restored, replaced) = merged_nodes(ctx, tx, owner, undoing)?;
        // Undoing a merge is the owner's "not the same" for the pair: the
        // review live now is recorded, so only a later accept reopens it.
        let pair_review = match ids_of(record.get("pair")).as_slice() {
            [a, b] => {
                let (id, _, review) = super::live_op(tx, |g| {
                    super::review_op_id(super::proposal_op_id(*a, *b), g)
                })?;
                review.map(|_| id)
            }
            _ => None,
        };
        inverse
            .detail
            .insert("pair_decision".into(), json!("not_same"));
        inverse
            .detail
            .insert("pair_review".into(), json!(pair_review));
    }
    inverse
        .detail
        .insert("replaced_nodes".into(), json!(replaced));
    inverse
        .detail
        .insert("removed_edges".into(), json!(published));
    for n in &inverse.restored {
        tx.update_node(n)?;
    }
    for e in &published {
        tx.delete_edge(e.id)?;
    }
    Ok(inverse)
}

/// The edges the record published, each checked to be still there as
/// written.
fn published_edges(tx: &mut dyn Tx, undoing: &Undoing<'_>) -> Result<Vec<Edge>, Error> {
    let record = &undoing.record;
    let published: Vec<Edge> = match undoing.op.kind {
        OperationKind::OrganizerMerged => serde_json::from_value(record["published_edges"].clone()),
        _ => serde_json::from_value(record["edge"].clone()).map(|e: Edge| vec![e]),
    }
    .map_err(|e| undoing.damaged(format!("published edges: {e}")))?;
    for e in &published {
        match tx.get_edge(e.id)? {
            Some(now)
                if now.source_id == e.source_id
                    && now.target_id == e.target_id
                    && now.edge_type == e.edge_type => {}
            _ => {
                return Err(undoing.refused(format!(
                    "edge {} it published no longer exists as published",
                    e.id
                )))
            }
        }
    }
    Ok(published)
}

/// Refuses to undo a merge one of whose copied edges was closed since (a
/// correction moved the claim, a reingest rebound it) while the edge it
/// copied is still open: removing the copy and
/// bringing the retired node back would make the original the live
/// link again beside whatever replaced the copy. The later record
/// must be undone first. (When the original was closed with it,
/// nothing comes back and the undo may go on.)
fn check_copies(tx: &mut dyn Tx, undoing: &Undoing<'_>, published: &[Edge]) -> Result<(), Error> {
    let record = &undoing.record;
    let originals: Vec<Edge> =
        serde_json::from_value(record["original_edges"].clone()).unwrap_or_default();
    let ids = (
        record["retired_id"].as_str().and_then(|s| s.parse().ok()),
        record["keep_id"].as_str().and_then(|s| s.parse().ok()),
    );
    if let (Some(retired), Some(keep)) = ids {
        for original in &originals {
            let copy = super::transfer_edge_id(original.id, retired, keep);
            let Some(published) = published.iter().find(|e| e.id == copy) else {
                continue;
            };
            let copy_closed_since = tx
                .get_edge(copy)?
                .is_some_and(|now| now.valid_to.is_some() && published.valid_to.is_none());
            let original_open = tx.get_edge(original.id)?.is_some_and(|e| e.is_open());
            if copy_closed_since && original_open {
                return Err(undoing.refused(format!(
                    "edge {copy} it published was closed since (by a correction or a \
                     reingest) while the edge it copied is open; undo that first"
                )));
            }
        }
    }
    Ok(())
}

/// The keep and retired nodes of a merge as they were before it (with the
/// live confidence), and their current values, after checking that
/// neither changed since the merge (naming the later record that changed
/// one, if any).
fn merged_nodes(
    ctx: &Ctx<'_>,
    tx: &mut dyn Tx,
    owner: &OwnerId,
    undoing: &Undoing<'_>,
) -> Result<(Vec<Node>, Vec<Value>), Error> {
    let (op_id, record) = (undoing.op.id, &undoing.record);
    let mut restore: Vec<Node> = Vec::new();
    let mut replaced: Vec<Value> = Vec::new();
    for which in ["keep", "retired"] {
        let before = super::merge::record_node(record, "before", which);
        let after = record.get("after").and_then(|a| a.get(which));
        let (Some(mut before), Some(after)) = (before, after) else {
            return Err(undoing.damaged(format!("no {which} node values")));
        };
        let current = tx.get_node(before.id)?;
        let unchanged = match &current {
            Some(n) => &snapshot(n)? == after,
            None => false,
        };
        if !unchanged {
            let reason = match later_dependent(ctx, owner, op_id, before.id)? {
                Some(later) => format!(
                    "node {} was changed by the later record {} ({}); undo that first",
                    before.id, later.id, later.kind
                ),
                None => format!(
                    "node {} has changed since the merge (it no longer matches the record's after value)",
                    before.id
                ),
            };
            return Err(undoing.refused(reason));
        }
        // A merge never changes confidence, and JSON cannot carry
        // every f64 exactly: the live value is the exact old one.
        if let Some(n) = &current {
            before.confidence = n.confidence;
            replaced.push(snapshot(n)?);
        }
        restore.push(before);
    }
    Ok((restore, replaced))
}

/// The fields every `UNDO` record has: what was undone, the nodes given
/// their earlier values back and the edges removed.
fn undo_record_of(op: &Operation, restored: &[Node], removed: &[Uuid]) -> Result<Value, Error> {
    Ok(json!({
        "format": UNDO_FORMAT,
        "undone_operation_id": op.id,
        "undone_kind": op.kind,
        "undone_checksum": op.checksum,
        "restored_node_ids": restored.iter().map(|n| n.id).collect::<Vec<_>>(),
        "restored_nodes": restored.iter().map(snapshot).collect::<Result<Vec<_>, _>>()?,
        "removed_edge_ids": removed,
    }))
}

/// Seals and appends the `UNDO` record of `op` in `tx`, after the undo's
/// own writes (`inverse`), commits, and reports it.
fn journal_undo(
    mut tx: Box<dyn kith_store::Tx + '_>,
    op: &Operation,
    inverse: Inverse,
) -> Result<UndoReport, Error> {
    let mut record = undo_record_of(op, &inverse.restored, &inverse.removed)?;
    for (key, value) in inverse.detail {
        record[key] = value;
    }
    let undo = Operation::new(
        undo_op_id(op.id),
        OperationKind::Undo,
        op.owner_id.clone(),
        op.scope.clone(),
        op.target_id,
        sealed(record)?,
        Timestamp::now(),
    );
    tx.append_operation(&undo)?;
    tx.commit()?;
    Ok(UndoReport {
        undo_op_id: undo.id,
        undone_op_id: op.id,
        undone_kind: op.kind,
        restored_nodes: inverse.restored.iter().map(|n| n.id).collect(),
        removed_edges: inverse.removed,
        replayed: false,
    })
}

/// The first live organizer record after `op_id` in the journal that
/// names `node`: what an undo of `op_id` would trample.
fn later_dependent(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    op_id: Uuid,
    node: Uuid,
) -> Result<Option<Operation>, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let ops = tx.list_operations(&OperationQuery {
        owner: owner.clone(),
        kind: None,
        target_id: None,
        limit: 0,
    })?;
    let needle = node.to_string();
    let mut after = false;
    for op in ops {
        if op.id == op_id {
            after = true;
            continue;
        }
        if !after
            || !matches!(
                op.kind,
                OperationKind::OrganizerMerged
                    | OperationKind::AliasProposalAccepted
                    | OperationKind::DerivationCommitted
                    | OperationKind::SupersedenceApplied
                    | OperationKind::LifecycleChanged
            )
        {
            continue;
        }
        if tx.get_operation(undo_op_id(op.id))?.is_some() {
            continue;
        }
        if op.target_id == Some(node)
            || kith_core::canon::to_canonical_string(&op.payload).contains(&needle)
        {
            return Ok(Some(op));
        }
    }
    Ok(None)
}
