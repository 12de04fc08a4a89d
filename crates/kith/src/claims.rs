//! Correcting a fact: the owner retracts a claim extraction got wrong, or
//! replaces its value, without deleting the conversation it came from
//! (issue 15 item 4). And the facts view: an entity's claims by name.
//!
//! - **Retract** closes a claim: it becomes `archived` with `valid_to` set
//!   and a `retraction` entry (`op_id`, `reason`, `by: "owner"`) in its
//!   metadata. Retrieval returns active claims only, so it is never
//!   returned or packed again; its links stay, as history.
//! - **Correct** replaces a claim's object: a new claim (same type,
//!   subject links, evidence and time; the object replaced in its metadata
//!   and text) supersedes the old one, which becomes `superseded` with
//!   `superseded_by`, as a derivation's replacement does; a `SUPERSEDES`
//!   edge runs from the new claim to the old; the new claim's metadata has
//!   `correction: {op_id, by: "owner", from_object, reason}`.
//!
//! Each is one transaction and one sealed record (`CLAIM_RETRACTED`,
//! `CLAIM_CORRECTED`) holding the request and every node before and after.
//! The same request again returns the first record and writes nothing;
//! after an undo it is a new request (the next generation of the record).
//! [`crate::Memory::undo`] reverses either exactly, and refuses while anything
//! the record wrote has changed since.

use kith_core::{
    ids, Edge, EdgeType, EpistemicType, Lifecycle, Node, NodeType, Operation, OperationKind,
    OwnerId, Timestamp,
};
use kith_store::{NodeQuery, Tx, TxMode};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::context::Ctx;
use crate::error::Error;
use crate::organize::undo_record::{restore, stored_as_written, Inverse, Undoing};
use crate::organize::{live_op, sealed, snapshot, unseal};
use kith_extract::grounding::Reported;
pub(crate) use kith_identity::claim_edits::is_owner_corrected;
use kith_identity::claim_edits::{object_of, predicate_of, replace_object};

/// The record format of `CLAIM_RETRACTED` and `CLAIM_CORRECTED`.
pub const CLAIM_EDIT_FORMAT: &str = "kith.claim_edit.v1";

/// What a retraction or a correction did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimEditReport {
    /// The record (undo it with `kith undo`).
    pub op_id: Uuid,
    /// `CLAIM_RETRACTED` or `CLAIM_CORRECTED`.
    pub kind: OperationKind,
    /// The claim retracted or replaced.
    pub claim: Uuid,
    /// The claim that replaces it (a correction only).
    pub replacement: Option<Uuid>,
    /// True when the same request was applied before and nothing was written.
    pub replayed: bool,
}

/// Which claims the facts view lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimHistory {
    /// Current claims only (tentative, stable, contested).
    #[default]
    Current,
    /// Retracted and superseded ones too.
    All,
}

/// One claim as the facts view shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimFact {
    /// The claim's node id.
    pub id: Uuid,
    /// The entity it is about.
    pub subject_id: Uuid,
    /// That entity's name.
    pub subject: String,
    /// What is said of it (`works_at`), when extraction gave one.
    pub predicate: Option<String>,
    /// Its value (`Northwind`).
    pub object: Option<String>,
    /// `positive` or `negative`.
    pub polarity: Option<String>,
    /// How it is known: `asserted`, or `conditional` / `hypothetical` for
    /// what was said under a condition ("If I get the job, I'll move to
    /// Dublin") or as a possibility.
    pub epistemic_type: EpistemicType,
    /// The condition it holds under, verbatim, when it is conditional.
    pub condition: Option<String>,
    /// Who it was reported by, when it stands in someone else's words
    /// ("Dev says Ana loves sushi": `{"by": "Dev"}`; `by` is null for "I
    /// heard …"). Such a claim is `unverified`.
    pub reported: Option<Reported>,
    /// The claim's text.
    pub content: String,
    /// Where it is in its life (`archived` when retracted).
    pub lifecycle: Lifecycle,
    /// Whether it is current.
    pub current: bool,
    /// When it became true.
    pub valid_from: Timestamp,
    /// When it stopped being true, if it did.
    pub valid_to: Option<Timestamp>,
    /// When the message that said it was said.
    pub event_time: Option<Timestamp>,
    /// The words of the message it was read from.
    pub evidence_quote: Option<String>,
    /// The events it rests on.
    pub evidence: Vec<Uuid>,
    /// The claim that replaced it.
    pub superseded_by: Option<Uuid>,
    /// What the owner changed, if anything.
    pub edited: Option<ClaimEdit>,
}

/// An owner's edit of a claim, as the facts view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ClaimEdit {
    /// The claim was retracted: it is no longer current.
    Retracted {
        /// The `CLAIM_RETRACTED` record.
        op_id: Uuid,
        /// Why.
        reason: String,
    },
    /// The claim is a corrected copy of another.
    Corrected {
        /// The `CLAIM_CORRECTED` record.
        op_id: Uuid,
        /// Why.
        reason: String,
        /// The value it replaced.
        from_object: String,
    },
}

/// `uuid5(KITH_NS, "op:claim:{action}:v1:{generation}:{len}:{owner}:{SHA-256 of the request}")`.
fn claim_op_id(action: &str, generation: u32, owner: &OwnerId, request: &Value) -> Uuid {
    let o = owner.as_str();
    ids::v5_name(&format!(
        "op:claim:{action}:v1:{generation}:{}:{o}:{}",
        o.len(),
        kith_core::canon::checksum(request)
    ))
}

/// `uuid5(KITH_NS, "claim:correction:v1:{op}")`: the claim a correction makes.
pub fn corrected_claim_id(op: Uuid) -> Uuid {
    ids::v5_name(&format!("claim:correction:v1:{op}"))
}

/// `uuid5(KITH_NS, "edge:claim_correction:v1:{op}:{edge}")`: a link of the
/// new claim, made after `edge` of the old one (`supersedes` for the
/// SUPERSEDES edge).
fn correction_edge_id(op: Uuid, of: &str) -> Uuid {
    ids::v5_name(&format!("edge:claim_correction:v1:{op}:{of}"))
}

/// The owner's current claim `id`, or a typed error: not found for a
/// missing or another owner's node, invalid input for a node that is not a
/// claim or a claim that is no longer current.
fn current_claim(tx: &mut dyn Tx, owner: &OwnerId, id: Uuid) -> Result<Node, Error> {
    let node = match tx.get_node(id)? {
        Some(n) if &n.owner_id == owner => n,
        _ => {
            return Err(Error::NotFound {
                what: format!("claim {id} of owner {owner}"),
            })
        }
    };
    let is_claim = !matches!(node.node_type, NodeType::Entity | NodeType::Note)
        && predicate_of(&node).is_some();
    if !is_claim {
        return Err(Error::request(format!(
            "node {id} is a {}, not a claim (claims have a subject, predicate and object; list them with `kith claims list --subject NAME`)",
            node.node_type
        )));
    }
    if !node.lifecycle.is_active() {
        return Err(Error::request(format!(
            "claim {id} is {} and no longer current; only a current claim can be retracted or corrected",
            node.lifecycle
        )));
    }
    Ok(node)
}

fn reason_of(reason: &str) -> Result<&str, Error> {
    let r = reason.trim();
    if r.is_empty() {
        return Err(Error::request(
            "a retraction or correction needs a reason (--reason): the record is for whoever reads it later",
        ));
    }
    Ok(r)
}

/// Retracts `owner`'s claim `claim` (see the module documentation),
/// journaled as `CLAIM_RETRACTED`. An unknown id or another owner's
/// claim is [`Error::NotFound`]; a node that is not a claim, a claim no
/// longer current or an empty reason is invalid input; none writes
/// anything.
pub(crate) fn retract_claim(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    claim: Uuid,
    reason: &str,
) -> Result<ClaimEditReport, Error> {
    crate::retry::on_busy("retract_claim", || {
        retract_claim_once(ctx, owner, claim, reason)
    })
}

fn retract_claim_once(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    claim_id: Uuid,
    reason: &str,
) -> Result<ClaimEditReport, Error> {
    let reason = reason_of(reason)?;
    let request = json!({"claim": claim_id, "reason": reason});
    let mut tx = ctx.store.begin(TxMode::Write)?;
    let (op_id, _, done) = live_op(&mut *tx, |g| claim_op_id("retract", g, owner, &request))?;
    if let Some(done) = done {
        return report_of(&done, true);
    }
    let claim = current_claim(&mut *tx, owner, claim_id)?;
    let now = Timestamp::now();
    let mut after = claim.clone();
    after.lifecycle = Lifecycle::Archived;
    after.valid_to = Some(now);
    after.updated_at = now;
    if let Some(map) = after
        .metadata
        .get_or_insert_with(|| json!({}))
        .as_object_mut()
    {
        map.insert(
            "retraction".into(),
            json!({"op_id": op_id, "by": "owner", "reason": reason, "at": now}),
        );
    }
    let record = json!({
        "format": CLAIM_EDIT_FORMAT,
        "request": request,
        "claim_before": snapshot(&claim)?,
        "claim_after": snapshot(&after)?,
    });
    let op = Operation::new(
        op_id,
        OperationKind::ClaimRetracted,
        owner.clone(),
        claim.scope.clone(),
        Some(claim.id),
        sealed(record)?,
        now,
    );
    tx.update_node(&after)?;
    tx.append_operation(&op)?;
    tx.commit()?;
    Ok(ClaimEditReport {
        op_id,
        kind: OperationKind::ClaimRetracted,
        claim: claim.id,
        replacement: None,
        replayed: false,
    })
}

/// Replaces the object of `owner`'s claim `claim` with `new_object`
/// (see the module documentation), journaled as `CLAIM_CORRECTED`.
/// Errors as [`Memory::retract_claim`]'s, and an empty object or the
/// object the claim already has is invalid input.
pub(crate) fn correct_claim(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    claim: Uuid,
    new_object: &str,
    reason: &str,
) -> Result<ClaimEditReport, Error> {
    crate::retry::on_busy("correct_claim", || {
        correct_claim_once(ctx, owner, claim, new_object, reason)
    })
}

fn correct_claim_once(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    claim_id: Uuid,
    new_object: &str,
    reason: &str,
) -> Result<ClaimEditReport, Error> {
    let reason = reason_of(reason)?;
    let new_object = new_object.trim();
    if new_object.is_empty() {
        return Err(Error::request(
            "a correction needs the new value (--object)",
        ));
    }
    let request = json!({"claim": claim_id, "object": new_object, "reason": reason});
    let mut tx = ctx.store.begin(TxMode::Write)?;
    let (op_id, _, done) = live_op(&mut *tx, |g| claim_op_id("correct", g, owner, &request))?;
    if let Some(done) = done {
        return report_of(&done, true);
    }
    let old = current_claim(&mut *tx, owner, claim_id)?;
    let old_object = object_of(&old).unwrap_or_default().to_string();
    if old_object.trim().eq_ignore_ascii_case(new_object) {
        return Err(Error::request(format!(
            "claim {claim_id} already has the object {old_object:?}; nothing to correct"
        )));
    }
    let now = Timestamp::now();
    let new_id = corrected_claim_id(op_id);
    let correction = json!({
        "op_id": op_id,
        "by": "owner",
        "from_object": old_object,
        "corrects": old.id,
        "reason": reason,
    });
    let new = corrected_claim(&old, new_id, &old_object, new_object, correction, now);
    let mut retired = old.clone();
    retired.lifecycle = Lifecycle::Superseded;
    retired.superseded_by = Some(new_id);
    retired.valid_to = Some(now);
    retired.updated_at = now;
    let opened = correction_edges(&mut *tx, owner, &old, op_id, new_id, now)?;

    let record = json!({
        "format": CLAIM_EDIT_FORMAT,
        "request": request,
        "claim_before": snapshot(&old)?,
        "claim_after": snapshot(&retired)?,
        "replacement": snapshot(&new)?,
        "opened_edges": opened,
    });
    let op = Operation::new(
        op_id,
        OperationKind::ClaimCorrected,
        owner.clone(),
        old.scope.clone(),
        Some(old.id),
        sealed(record)?,
        now,
    );
    tx.insert_node(&new)?;
    tx.update_node(&retired)?;
    for e in &opened {
        tx.insert_edge(e)?;
    }
    tx.append_operation(&op)?;
    tx.commit()?;
    Ok(ClaimEditReport {
        op_id,
        kind: OperationKind::ClaimCorrected,
        claim: old.id,
        replacement: Some(new_id),
        replayed: false,
    })
}

/// The claim that replaces `old` with `new_object`: a new stable claim
/// whose metadata records the `correction` (the old claim's merges and
/// replacements are its history, not this one's).
fn corrected_claim(
    old: &Node,
    new_id: Uuid,
    old_object: &str,
    new_object: &str,
    correction: Value,
    now: Timestamp,
) -> Node {
    let mut new = old.clone();
    new.id = new_id;
    new.content = replace_object(&old.content, old_object, new_object);
    new.lifecycle = Lifecycle::Stable;
    new.superseded_by = None;
    new.valid_to = None;
    new.created_at = now;
    new.updated_at = now;
    let md = new.metadata.get_or_insert_with(|| json!({}));
    if let Some(map) = md.as_object_mut() {
        map.insert("object".into(), json!(new_object));
        map.insert("supersedes".into(), json!([old.id]));
        map.remove("merged_claim_ids");
        map.insert("correction".into(), correction);
        // The owner states the value now: what someone else was reported
        // to say (`kith_ingest_v8`) is no longer where it comes from.
        if map.remove("reported").is_some() && new.epistemic_type == EpistemicType::Unverified {
            new.epistemic_type = EpistemicType::Asserted;
        }
    }
    new
}

/// The edges a claim correction opens: each open HAS_FACT edge to the old
/// claim, made again to the new one (its object link is not copied: the
/// object is what changed), and the new claim's SUPERSEDES edge.
fn correction_edges(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    old: &Node,
    op_id: Uuid,
    new_id: Uuid,
    now: Timestamp,
) -> Result<Vec<Edge>, Error> {
    let mut opened = Vec::new();
    for e in tx.edges_of(old.id)? {
        if e.is_open() && e.edge_type == EdgeType::HasFact && e.target_id == old.id {
            let mut copy = e.clone();
            copy.id = correction_edge_id(op_id, &e.id.to_string());
            copy.target_id = new_id;
            copy.valid_from = now;
            copy.created_at = now;
            let mut m = e.metadata.clone().unwrap_or_else(|| json!({}));
            if let Some(map) = m.as_object_mut() {
                map.insert("basis".into(), json!("claim_correction"));
                map.insert("claim_correction_op_id".into(), json!(op_id));
                map.insert("copied_from_edge".into(), json!(e.id));
            }
            copy.metadata = Some(m);
            opened.push(copy);
        }
    }
    opened.push(Edge {
        id: correction_edge_id(op_id, "supersedes"),
        owner_id: owner.clone(),
        scope: old.scope.clone(),
        source_id: new_id,
        target_id: old.id,
        edge_type: EdgeType::Supersedes,
        confidence: 1.0,
        valid_from: now,
        valid_to: None,
        provenance_event_id: old.evidence_refs.last().copied(),
        metadata: Some(json!({"basis": "claim_correction", "claim_correction_op_id": op_id})),
        created_at: now,
    });
    Ok(opened)
}

/// The facts view (like mem0's `get_all`): the claims of `owner`'s
/// entities named `subject` (case-insensitive, surrounding spaces
/// ignored), through their open HAS_FACT links; current claims only
/// unless `history` is [`ClaimHistory::All`]. Current first, then by
/// time. A name no entity has gives an empty list.
pub(crate) fn claims(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    subject: &str,
    history: ClaimHistory,
) -> Result<Vec<ClaimFact>, Error> {
    let name = subject.trim().to_lowercase();
    if name.is_empty() {
        return Err(Error::request("name the subject whose claims to list"));
    }
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let mut entities = Vec::new();
    let mut after_seq = 0;
    loop {
        let page = tx.list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            node_types: vec![NodeType::Entity],
            after_seq,
            limit: 1000,
            ..NodeQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after_seq = last.seq;
        entities.extend(
            page.into_iter()
                .map(|s| s.node)
                .filter(|n| n.content.trim().to_lowercase() == name),
        );
    }
    let mut out = Vec::new();
    for entity in entities {
        for edge in tx.edges_of(entity.id)? {
            if !edge.is_open() || edge.edge_type != EdgeType::HasFact || edge.source_id != entity.id
            {
                continue;
            }
            let Some(claim) = tx.get_node(edge.target_id)? else {
                continue;
            };
            if history == ClaimHistory::Current && !claim.lifecycle.is_active() {
                continue;
            }
            if out.iter().any(|f: &ClaimFact| f.id == claim.id) {
                continue;
            }
            out.push(fact_of(&entity, claim));
        }
    }
    out.sort_by_key(|f| (!f.current, f.valid_from, f.id));
    Ok(out)
}

/// Reverses a `CLAIM_RETRACTED` or `CLAIM_CORRECTED` record in `tx`:
/// refused (nothing written) unless every node and link it wrote is as
/// it left them. Returns the restored nodes, the removed edge ids and
/// what else the undo did.
pub(crate) fn undo_claim_edit(tx: &mut dyn Tx, undoing: &Undoing<'_>) -> Result<Inverse, Error> {
    let before: Node = undoing.field("claim_before")?;
    let after: Node = undoing.field("claim_after")?;
    let replacement: Option<Node> = match undoing.op.kind {
        OperationKind::ClaimCorrected => Some(undoing.field("replacement")?),
        _ => None,
    };
    let opened: Vec<Edge> = undoing.optional_field("opened_edges")?;

    for n in std::iter::once(&after).chain(replacement.as_ref()) {
        if !stored_as_written(tx, n)? {
            return Err(undoing.refused(format!(
                "claim {} has changed since (corrected, retracted, merged or forgotten); undo that first",
                n.id
            )));
        }
    }
    undoing.check_still_open(tx, &opened)?;

    let restored = restore(tx, before, &after)?;
    // The replacement goes with its lexical row, vector and links.
    let removed_node = match &replacement {
        Some(r) => {
            tx.delete_nodes(&[r.id])?;
            json!(r.id)
        }
        None => Value::Null,
    };
    let mut detail = serde_json::Map::new();
    detail.insert("correction".into(), json!({"removed_node": removed_node}));
    Ok(Inverse {
        restored: vec![restored],
        removed: opened.iter().map(|e| e.id).collect(),
        detail,
    })
}

fn fact_of(entity: &Node, claim: Node) -> ClaimFact {
    let md = claim.metadata.as_ref();
    let text = |key: &str| md.and_then(|m| m.get(key)?.as_str()).map(String::from);
    let edited = md.and_then(|m| {
        let field = |v: &Value, key: &str| v.get(key)?.as_str().map(String::from);
        let op_id = |v: &Value| field(v, "op_id")?.parse().ok();
        if let Some(r) = m.get("retraction") {
            Some(ClaimEdit::Retracted {
                op_id: op_id(r)?,
                reason: field(r, "reason")?,
            })
        } else {
            let c = m.get("correction")?;
            Some(ClaimEdit::Corrected {
                op_id: op_id(c)?,
                reason: field(c, "reason")?,
                from_object: field(c, "from_object")?,
            })
        }
    });
    ClaimFact {
        id: claim.id,
        subject_id: entity.id,
        subject: entity.content.clone(),
        predicate: text("predicate"),
        object: text("object"),
        polarity: text("polarity"),
        epistemic_type: claim.epistemic_type,
        condition: text("condition"),
        reported: md
            .and_then(|m| m.get("reported"))
            .and_then(|r| serde_json::from_value(r.clone()).ok()),
        current: claim.lifecycle.is_active(),
        lifecycle: claim.lifecycle,
        valid_from: claim.valid_from,
        valid_to: claim.valid_to,
        event_time: claim.event_time,
        evidence_quote: text("evidence_quote"),
        evidence: claim.evidence_refs.clone(),
        superseded_by: claim.superseded_by,
        edited,
        content: claim.content,
    }
}

/// The report of a committed record.
fn report_of(op: &Operation, replayed: bool) -> Result<ClaimEditReport, Error> {
    let r = unseal(op)?;
    let id = |v: &Value| v.as_str().and_then(|s| s.parse().ok());
    Ok(ClaimEditReport {
        op_id: op.id,
        kind: op.kind,
        claim: id(&r["claim_before"]["id"]).unwrap_or_default(),
        replacement: id(&r["replacement"]["id"]),
        replayed,
    })
}
