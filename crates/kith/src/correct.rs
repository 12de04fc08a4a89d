//! The correction API: the caller says, by naming the evidence, that some
//! of an entity's claims are about someone else.
//!
//! - **Rebind**: these claims' subject (or object) is another entity.
//! - **Split**: the claims and mentions grounded in these events belong to a
//!   different person than the rest (an identity that was wrongly merged,
//!   or two people with one name); they move to an existing entity or to a
//!   new person entity.
//!
//! Which links move is `kith_identity::correction::moves` (pure). Applying
//! it is one transaction: each moved link is closed (kept as history) and
//! re-made with the other entity in its place; each moved claim's identity
//! metadata (`speaker_reference`, `owner_reference`) is replaced by a
//! `correction` entry naming the record; a new entity is created when asked;
//! and one checksummed `IDENTITY_CORRECTED` record holds the request, every
//! node before and after, and the edges closed and opened. The same request
//! again returns the first record. `Memory::undo` reverses it exactly, and
//! refuses while anything it wrote changed since, or while the entity the
//! claims were moved from is no longer active (an organizer merge retired
//! it: undo that first).

use kith_core::{
    ids, Edge, Lifecycle, Node, NodeType, Operation, OperationKind, OwnerId, Timestamp,
};
use kith_identity::correction::{self, Refusal, Selection};
use kith_store::{Tx, TxMode};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::context::Ctx;
use crate::error::Error;
use crate::organize::undo_record::{restore, stored_as_written, Inverse, Undoing};
use crate::organize::{sealed, snapshot, unseal};

/// The record format of `IDENTITY_CORRECTED`.
pub const CORRECTION_FORMAT: &str = "kith.correction.v1";

/// Where the moved links go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CorrectionTarget {
    /// An existing active entity of the owner, in the same scope.
    Entity {
        /// Its id.
        id: Uuid,
    },
    /// A new person entity (split); its id is derived from the record.
    NewPerson {
        /// Its name as it should be shown.
        name: String,
    },
}

/// A correction request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Correction {
    /// The entity the claims are wrongly attributed to.
    pub entity: Uuid,
    /// Claims to move (rebind). Either this or `events`, not both.
    #[serde(default)]
    pub claims: Vec<Uuid>,
    /// Events whose claims of `entity` move (split).
    #[serde(default)]
    pub events: Vec<Uuid>,
    /// Where they go.
    pub to: CorrectionTarget,
    /// Why (required: the record is for the humans who read it later).
    pub reason: String,
}

/// What a correction did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorrectionReport {
    /// The `IDENTITY_CORRECTED` record (undo it with `kith undo`).
    pub op_id: Uuid,
    /// The entity the claims now link to.
    pub target: Uuid,
    /// Whether this correction created it.
    pub created_target: bool,
    /// The claims moved.
    pub moved_claims: Vec<Uuid>,
    /// The links closed (kept as history).
    pub closed_edges: Vec<Uuid>,
    /// The links made in their place.
    pub opened_edges: Vec<Uuid>,
    /// True when the same request was applied before and nothing was written.
    pub replayed: bool,
}

/// `uuid5(KITH_NS, "op:correction:v1:{len}:{owner}:{SHA-256 of the request's canonical JSON}")`.
pub fn correction_op_id(owner: &OwnerId, request: &Correction) -> Uuid {
    let body = serde_json::to_value(request).unwrap_or(Value::Null);
    let o = owner.as_str();
    ids::v5_name(&format!(
        "op:correction:v1:{}:{o}:{}",
        o.len(),
        kith_core::canon::checksum(&body)
    ))
}

/// `uuid5(KITH_NS, "entity:correction:v1:{op}")`: the entity a split creates.
pub fn split_entity_id(op: Uuid) -> Uuid {
    ids::v5_name(&format!("entity:correction:v1:{op}"))
}

/// `uuid5(KITH_NS, "edge:correction:v1:{op}:{closed edge}")`: the link made in
/// place of a closed one.
pub fn corrected_edge_id(op: Uuid, closed: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:correction:v1:{op}:{closed}"))
}

/// Applies a correction for `owner` in one transaction (see the module
/// documentation). Bad requests (nothing named, a claim not linked to
/// the entity, another owner's or a retired node, no reason) are typed
/// errors and write nothing.
pub(crate) fn correct(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    request: &Correction,
) -> Result<CorrectionReport, Error> {
    crate::retry::on_busy("correct", || correct_once(ctx, owner, request))
}

fn correct_once(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    req: &Correction,
) -> Result<CorrectionReport, Error> {
    if req.reason.trim().is_empty() {
        return Err(Error::request("a correction needs a reason"));
    }
    let selection = selection_of(req)?;
    let op_id = correction_op_id(owner, req);
    let mut tx = ctx.store.begin(TxMode::Write)?;
    if let Some(done) = tx.get_operation(op_id)? {
        return report_of(&done, true);
    }
    let entity = active_entity(&mut *tx, owner, req.entity, "entity")?;
    let moves = moves_of(&mut *tx, &entity, &selection)?;

    let now = Timestamp::now();
    let (target, created) = target_of(&mut *tx, owner, req, &entity, op_id, now)?;

    // Claims: identity metadata replaced by the correction.
    let mut claims_before = Vec::new();
    let mut claims_after = Vec::new();
    let mut evidence: Vec<Uuid> = Vec::new();
    for id in &moves.claims {
        let Some(claim) = tx.get_node(*id)? else {
            continue;
        };
        let after = correction::rebound_claim(&claim, op_id, entity.id, target.id, now);
        for e in &claim.evidence_refs {
            if !evidence.contains(e) {
                evidence.push(*e);
            }
        }
        claims_before.push(snapshot(&claim)?);
        claims_after.push(after);
    }
    let mut target_after = target.clone();
    for e in &evidence {
        if !target_after.evidence_refs.contains(e) {
            target_after.evidence_refs.push(*e);
        }
    }
    target_after.updated_at = now;

    // Links: closed, and made again with the target in the entity's place.
    let opened: Vec<Edge> = moves
        .edges
        .iter()
        .map(|old| {
            let id = corrected_edge_id(op_id, old.id);
            correction::reopened_edge(old, id, entity.id, target.id, op_id, now)
        })
        .collect();

    let record = json!({
        "format": CORRECTION_FORMAT,
        "request": req,
        "entity": snapshot(&entity)?,
        "target_before": if created.is_some() { Value::Null } else { snapshot(&target)? },
        "target_after": snapshot(&target_after)?,
        "created_target": created.is_some(),
        "claims_before": claims_before,
        "claims_after": claims_after.iter().map(snapshot).collect::<Result<Vec<_>, _>>()?,
        "closed_edges": moves.edges,
        "closed_at": now,
        "opened_edges": opened,
    });
    let op = Operation::new(
        op_id,
        OperationKind::IdentityCorrected,
        owner.clone(),
        entity.scope.clone(),
        Some(entity.id),
        sealed(record)?,
        now,
    );
    if created.is_some() {
        tx.insert_node(&target_after)?;
    } else {
        tx.update_node(&target_after)?;
    }
    for c in &claims_after {
        tx.update_node(c)?;
    }
    for e in &moves.edges {
        tx.close_edge(e.id, now)?;
    }
    for e in &opened {
        tx.insert_edge(e)?;
    }
    tx.append_operation(&op)?;
    tx.commit()?;
    Ok(CorrectionReport {
        op_id,
        target: target.id,
        created_target: created.is_some(),
        moved_claims: moves.claims,
        closed_edges: moves.edges.iter().map(|e| e.id).collect(),
        opened_edges: opened.iter().map(|e| e.id).collect(),
        replayed: false,
    })
}

/// The claims and links of `entity` that `selection` moves (refused, as
/// the caller's error, when it names nothing that can move).
fn moves_of(
    tx: &mut dyn Tx,
    entity: &Node,
    selection: &Selection,
) -> Result<correction::Moves, Error> {
    let edges = tx.edges_of(entity.id)?;
    let mut others = Vec::new();
    for e in &edges {
        let other = if e.source_id == entity.id {
            e.target_id
        } else {
            e.source_id
        };
        if let Some(n) = tx.get_node(other)? {
            others.push(n);
        }
    }
    correction::moves(entity.id, &edges, &others, selection).map_err(|r| {
        Error::request(match r {
            Refusal::NothingNamed => "nothing named to move".to_string(),
            Refusal::NotLinked(c) => format!(
                "claim {c} is not an active claim linked to entity {} (no open subject or object link)",
                entity.id
            ),
            Refusal::NoClaimInEvents => format!(
                "none of the named events has an active claim linked to entity {}",
                entity.id
            ),
        })
    })
}

/// What the correction names: claims or events, exactly one of them.
fn selection_of(req: &Correction) -> Result<Selection, Error> {
    Ok(match (req.claims.is_empty(), req.events.is_empty()) {
        (false, true) => Selection::Claims(req.claims.clone()),
        (true, false) => Selection::Events(req.events.clone()),
        (true, true) => {
            return Err(Error::request(
                "name the evidence: the claims to move, or the events whose claims move",
            ))
        }
        (false, false) => return Err(Error::request("name claims or events, not both")),
    })
}

/// The entity the claims move to, and the new person when the correction
/// splits one off: an existing active entity of the same scope, or a
/// person named in the request.
fn target_of(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    req: &Correction,
    entity: &Node,
    op_id: Uuid,
    now: Timestamp,
) -> Result<(Node, Option<Node>), Error> {
    Ok(match &req.to {
        CorrectionTarget::Entity { id } => {
            let t = active_entity(tx, owner, *id, "to")?;
            if t.id == entity.id {
                return Err(Error::request("the claims already link to that entity"));
            }
            if t.scope != entity.scope {
                return Err(Error::request(format!(
                    "entity {} is in scope {}, entity {} in {}: a correction stays in one scope",
                    t.id, t.scope, entity.id, entity.scope
                )));
            }
            (t, None)
        }
        CorrectionTarget::NewPerson { name } => {
            let name = name.trim();
            if name.is_empty() {
                return Err(Error::request("the new person needs a name"));
            }
            let n = correction::split_person(entity, split_entity_id(op_id), name, op_id, now);
            (n.clone(), Some(n))
        }
    })
}

/// Reverses an `IDENTITY_CORRECTED` record in `tx`: refused (nothing
/// written) unless every node and link it wrote is still as it left
/// them. Returns the inverse for the `UNDO` record.
pub(crate) fn undo_correction(tx: &mut dyn Tx, undoing: &Undoing<'_>) -> Result<Inverse, Error> {
    let claims_before: Vec<Node> = undoing.field("claims_before")?;
    let claims_after: Vec<Node> = undoing.field("claims_after")?;
    let closed: Vec<Edge> = undoing.field("closed_edges")?;
    let opened: Vec<Edge> = undoing.field("opened_edges")?;
    let target_after: Node = undoing.field_named("target_after", "target")?;
    let created = undoing.record["created_target"] == json!(true);

    check_correction_undoable(tx, undoing, &claims_after, &target_after)?;
    undoing.check_still_open(tx, &opened)?;
    undoing.check_still_closed(tx, &closed)?;

    let mut restored = Vec::new();
    for (before, after) in claims_before.into_iter().zip(&claims_after) {
        restored.push(restore(tx, before, after)?);
    }
    if created {
        let mut retired = target_after.clone();
        retired.lifecycle = Lifecycle::Archived;
        retired.updated_at = Timestamp::now();
        tx.update_node(&retired)?;
        restored.push(retired);
    } else {
        let before: Node = undoing.field("target_before")?;
        restored.push(restore(tx, before, &target_after)?);
    }
    for e in &opened {
        tx.delete_edge(e.id)?;
    }
    for e in &closed {
        tx.reopen_edge(e.id)?;
    }
    let mut detail = serde_json::Map::new();
    detail.insert(
        "correction".into(),
        json!({
            "reopened_edge_ids": closed.iter().map(|e| e.id).collect::<Vec<_>>(),
            "archived_entity": if created { json!(target_after.id) } else { Value::Null },
        }),
    );
    Ok(Inverse {
        restored,
        removed: opened.iter().map(|e| e.id).collect(),
        detail,
    })
}

/// Refuses to undo a correction when a node it wrote changed since, or
/// the entity the claims were moved from is no longer active.
fn check_correction_undoable(
    tx: &mut dyn Tx,
    undoing: &Undoing<'_>,
    claims_after: &[Node],
    target_after: &Node,
) -> Result<(), Error> {
    for after in claims_after.iter().chain(std::iter::once(target_after)) {
        if !stored_as_written(tx, after)? {
            return Err(undoing.refused(format!(
                "node {} has changed since the correction",
                after.id
            )));
        }
    }
    // The links go back to the entity they were moved from: it must
    // still be live, or they would link a node a merge retired since
    // (and the claim would have no live subject).
    let from: Node = undoing.field("entity")?;
    if !tx
        .get_node(from.id)?
        .is_some_and(|n| n.lifecycle.is_active())
    {
        return Err(undoing.refused(format!(
            "entity {} the claims were moved from is no longer active (merged or retired since); undo that first",
            from.id
        )));
    }
    Ok(())
}

/// The report of a committed correction record.
fn report_of(op: &Operation, replayed: bool) -> Result<CorrectionReport, Error> {
    let r = unseal(op)?;
    let ids = |key: &str| -> Vec<Uuid> {
        r[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.get("id").and_then(Value::as_str)?.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(CorrectionReport {
        op_id: op.id,
        target: r["target_after"]["id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_default(),
        created_target: r["created_target"] == json!(true),
        moved_claims: ids("claims_after"),
        closed_edges: ids("closed_edges"),
        opened_edges: ids("opened_edges"),
        replayed,
    })
}

/// The owner's active entity `id`, or a typed error naming `field`.
fn active_entity(tx: &mut dyn Tx, owner: &OwnerId, id: Uuid, field: &str) -> Result<Node, Error> {
    match tx.get_node(id)? {
        Some(n) if &n.owner_id == owner && n.node_type == NodeType::Entity => {
            if n.lifecycle.is_active() {
                Ok(n)
            } else {
                Err(Error::request(format!(
                    "{field}: entity {id} is {} and cannot take part in a correction",
                    n.lifecycle
                )))
            }
        }
        Some(n) if &n.owner_id == owner => Err(Error::request(format!(
            "{field}: node {id} is a {}, not an entity",
            n.node_type
        ))),
        _ => Err(Error::NotFound {
            what: format!("entity {id} of owner {owner}"),
        }),
    }
}
