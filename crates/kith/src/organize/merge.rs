//! Publishing one merge in one transaction.
//!
//! Inside a single write transaction: find the merge's live record (a retry
//! returns it and writes nothing), re-read and re-admit both nodes, union
//! the evidence into the kept node, copy every non-SUPERSEDES relationship
//! of the retired node to the kept one under deterministic ids, retire the
//! other node, add one SUPERSEDES edge, and journal `ORGANIZER_MERGED` with
//! complete before/after values. Everything is computed and checked before
//! the first write, and nothing is written unless all of it commits.

use kith_core::{Edge, EdgeType, Lifecycle, Node, Operation, OperationKind, OwnerId, Timestamp};
use kith_store::{Store, Tx, TxMode};
use serde_json::json;
use uuid::Uuid;

use super::admission::{self, MergeKind, Refusal};
use super::{
    ensure_edge_finite, ensure_node_finite, live_op, merge_op_id, merge_supersedes_edge_id,
    ordered, sealed, snapshot, transfer_edge_id, MergeApplied, OrganizerError,
};
use crate::error::Error;

/// What publishing a merge did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MergeOutcome {
    /// Committed now.
    Applied(MergeApplied),
    /// The pair was merged before (a retry): the committed record, nothing
    /// written.
    Exists {
        /// The record.
        op_id: Uuid,
    },
    /// Not admitted; nothing written.
    Refused(Refusal),
    /// The owner undid a merge of this pair, and neither an accept nor new
    /// name evidence came since; nothing written.
    Blocked {
        /// The `UNDO` record that decided "not the same".
        undo_op: Uuid,
    },
}

/// The record format of `ORGANIZER_MERGED`.
pub const MERGE_FORMAT: &str = "kith.organizer_merge.v1";

/// Merges the unordered pair `(x, y)` as `kind` in one transaction.
///
/// A busy transaction is run again whole (bounded): the record id is
/// stable for the pair, so an attempt after a committed one finds it and
/// writes nothing.
pub(crate) fn publish_merge(
    store: &dyn Store,
    owner: &OwnerId,
    x: Uuid,
    y: Uuid,
    kind: MergeKind,
    alias_threshold: f64,
) -> Result<MergeOutcome, Error> {
    crate::retry::on_busy("merge", || {
        publish_merge_once(store, owner, x, y, kind, alias_threshold)
    })
}

fn publish_merge_once(
    store: &dyn Store,
    owner: &OwnerId,
    x: Uuid,
    y: Uuid,
    kind: MergeKind,
    alias_threshold: f64,
) -> Result<MergeOutcome, Error> {
    let (a, b) = ordered(x, y);
    if a == b {
        let refusal = Refusal::new("same_node", "a node cannot merge with itself");
        return Ok(MergeOutcome::Refused(refusal));
    }
    let mut tx = store.begin(TxMode::Write)?;
    let Pair {
        op_id,
        generation,
        basis,
        keep,
        retired,
    } = match admit_pair(&mut *tx, owner, (a, b), kind, alias_threshold)? {
        Ok(pair) => pair,
        Err(outcome) => return Ok(outcome),
    };

    let now = Timestamp::now();
    let (keep_after, retired_after) = kith_identity::merge::merged(&keep, &retired, now);

    // Copies keep everything but the retired endpoint and the id; an edge
    // between the two nodes would become a self-loop and is dropped.
    let original: Vec<Edge> = tx
        .edges_of(retired.id)?
        .into_iter()
        .filter(|e| e.edge_type != EdgeType::Supersedes)
        .collect();
    let (copies, collapsed) =
        kith_identity::merge::copied_edges(&original, retired.id, keep.id, |e| {
            transfer_edge_id(e.id, retired.id, keep.id)
        });
    let supersedes = supersedes_edge(owner, &keep, &retired, kind, now);

    // Every number checked before anything is written.
    for n in [&keep, &retired, &keep_after, &retired_after] {
        ensure_node_finite(n)?;
    }
    for e in original.iter().chain(&copies).chain([&supersedes]) {
        ensure_edge_finite(e)?;
    }

    let (recognised, supersedes_exists) = earlier_copies(&mut *tx, op_id, &copies, &supersedes)?;

    let mut published: Vec<&Edge> = copies.iter().collect();
    published.push(&supersedes);
    let record = json!({
        "format": MERGE_FORMAT,
        "policy": match kind {
            MergeKind::Duplicate => admission::DUPLICATE_POLICY,
            MergeKind::Alias => admission::ALIAS_POLICY,
        },
        "kind": kind.as_str(),
        "pair": [a, b],
        "generation": generation,
        "basis": basis,
        "keep_id": keep.id,
        "retired_id": retired.id,
        "before": {"keep": snapshot(&keep)?, "retired": snapshot(&retired)?},
        "after": {"keep": snapshot(&keep_after)?, "retired": snapshot(&retired_after)?},
        "original_edges": original,
        "published_edges": published,
        "recognised_edges": recognised,
        "collapsed_edges": collapsed,
    });
    let op = Operation::new(
        op_id,
        OperationKind::OrganizerMerged,
        owner.clone(),
        keep.scope.clone(),
        Some(keep.id),
        sealed(record)?,
        now,
    );

    tx.update_node(&keep_after)?;
    tx.update_node(&retired_after)?;
    for c in &copies {
        if !recognised.contains(&c.id) {
            tx.insert_edge(c)?;
        }
    }
    if !supersedes_exists {
        tx.insert_edge(&supersedes)?;
    }
    tx.append_operation(&op)?;
    tx.commit()?;
    Ok(MergeOutcome::Applied(MergeApplied {
        op_id,
        kind,
        keep_id: keep.id,
        retired_id: retired.id,
        basis,
        copied_edges: copies.len(),
    }))
}

/// A pair admitted for merging, as read in the merge's transaction.
struct Pair {
    /// The merge record's id, of the pair's live generation.
    op_id: Uuid,
    generation: u32,
    /// Why it may merge.
    basis: String,
    /// The node that stays.
    keep: Node,
    /// The node superseded by it.
    retired: Node,
}

/// Re-reads and re-admits the ordered pair `(a, b)` in `tx`, whatever the
/// caller saw or labelled; `Err` holds the answer when it does not merge
/// now (merged before, refused, blocked by the owner's undo). Another
/// owner's node or record answers like a missing one.
fn admit_pair(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    (a, b): (Uuid, Uuid),
    kind: MergeKind,
    alias_threshold: f64,
) -> Result<Result<Pair, MergeOutcome>, Error> {
    let refused = |code, detail: String| Ok(Err(MergeOutcome::Refused(Refusal::new(code, detail))));
    let (op_id, generation, existing) = live_op(tx, |g| merge_op_id(a, b, kind, g))?;
    if let Some(op) = existing {
        if &op.owner_id != owner {
            // Another owner's record is not this caller's to see.
            return refused("not_found", "a node does not exist".into());
        }
        return Ok(Err(MergeOutcome::Exists { op_id }));
    }
    let (Some(na), Some(nb)) = (tx.get_node(a)?, tx.get_node(b)?) else {
        return refused("not_found", "a node does not exist".into());
    };
    if &na.owner_id != owner || &nb.owner_id != owner {
        return refused("not_found", "a node does not exist".into());
    }
    let (basis, keep, retired) = match kith_identity::merge::admit(kind, &na, &nb, alias_threshold)
    {
        Ok(m) => (m.basis, m.keep.clone(), m.retired.clone()),
        Err(r) => return Ok(Err(MergeOutcome::Refused(r))),
    };
    // An undone merge of the pair is the owner's "not the same".
    let (undone, review) = super::pair_history(tx, a, b)?;
    if let kith_identity::aliases::MergeGate::Blocked { undo_op } =
        kith_identity::aliases::merge_gate(undone.as_ref(), review, (&na.content, &nb.content))
    {
        return Ok(Err(MergeOutcome::Blocked { undo_op }));
    }
    if !retired.lifecycle.can_become(Lifecycle::Superseded) {
        return refused(
            "inactive",
            format!(
                "node {} is {} and cannot be superseded",
                retired.id, retired.lifecycle
            ),
        );
    }
    Ok(Ok(Pair {
        op_id,
        generation,
        basis,
        keep,
        retired,
    }))
}

/// A copy an earlier attempt left behind is recognised when it is
/// exactly the copy this merge would write; any other value under that
/// id means someone else's data, and the merge aborts.
/// Returns the copies recognised, and whether the SUPERSEDES edge is there.
fn earlier_copies(
    tx: &mut dyn Tx,
    op_id: Uuid,
    copies: &[Edge],
    supersedes: &Edge,
) -> Result<(Vec<Uuid>, bool), Error> {
    let mut recognised = Vec::new();
    for c in copies {
        match tx.get_edge(c.id)? {
            None => {}
            Some(existing) if &existing == c => recognised.push(c.id),
            Some(_) => {
                return Err(OrganizerError::CopyConflict {
                    op: op_id,
                    edge: c.id,
                }
                .into())
            }
        }
    }
    let supersedes_exists = match tx.get_edge(supersedes.id)? {
        None => false,
        Some(e)
            if e.source_id == supersedes.source_id
                && e.target_id == supersedes.target_id
                && e.edge_type == EdgeType::Supersedes =>
        {
            true
        }
        Some(_) => {
            return Err(OrganizerError::CopyConflict {
                op: op_id,
                edge: supersedes.id,
            }
            .into())
        }
    };
    Ok((recognised, supersedes_exists))
}

/// The one SUPERSEDES edge a merge adds, from the kept node to the
/// retired one.
fn supersedes_edge(
    owner: &OwnerId,
    keep: &Node,
    retired: &Node,
    kind: MergeKind,
    now: Timestamp,
) -> Edge {
    Edge {
        id: merge_supersedes_edge_id(keep.id, retired.id),
        owner_id: owner.clone(),
        scope: keep.scope.clone(),
        source_id: keep.id,
        target_id: retired.id,
        edge_type: EdgeType::Supersedes,
        confidence: 1.0,
        valid_from: now,
        valid_to: None,
        provenance_event_id: None,
        metadata: Some(json!({"merge_kind": kind.as_str()})),
        created_at: now,
    }
}

/// The node values a merge record holds, read back.
pub(crate) fn record_node(record: &serde_json::Value, when: &str, which: &str) -> Option<Node> {
    serde_json::from_value(record.get(when)?.get(which)?.clone()).ok()
}
