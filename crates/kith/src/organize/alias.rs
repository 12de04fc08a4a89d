//! Alias proposals and the review inbox.
//!
//! A semantic score alone never merges: it publishes an unverified
//! RELATES_TO edge (`identity_verified = false`) and an `ALIAS_PROPOSED`
//! record together, both with ids stable for the unordered pair. The owner
//! then accepts (a separate verified edge; both nodes stay active) or
//! rejects (no traversable edge; the pair is never proposed again, since
//! its proposal id is taken for good).

use kith_core::{Edge, EdgeType, Node, Operation, OperationKind, OwnerId, ScopeId, Timestamp};
use kith_store::{OperationQuery, Store, TxMode};
use serde::Serialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::admission::{self, Refusal};
use super::{
    ensure_edge_finite, ensure_finite, live_op, ordered, proposal_edge_id, proposal_op_id,
    review_op_id, sealed, snapshot, snapshot_checksum, unseal, verified_edge_id, OrganizerError,
    ProposalApplied,
};
use crate::context::Ctx;
use crate::error::Error;

/// The record format of `ALIAS_PROPOSED` without an assessment.
pub const PROPOSAL_FORMAT: &str = "kith.alias_proposal.v1";
/// The record format of `ALIAS_PROPOSED` carrying an external assessment
/// bound to the exact node checksums (spec ¶21's version 2).
pub const PROPOSAL_FORMAT_V2: &str = "kith.alias_proposal.v2";

pub use kith_identity::aliases::{Assessment, Assessor, AssessorKind, Verdict};

/// An explicit alias proposal: a pair, a score, and optionally a complete
/// external assessment (a version-2 record).
#[derive(Debug, Clone, PartialEq)]
pub struct ProposeAliasRequest {
    /// One entity.
    pub a: Uuid,
    /// The other.
    pub b: Uuid,
    /// How alike they are, in [0, 1] (the unverified edge's confidence).
    pub score: f64,
    /// Who judged the pair, their verdict and reasons.
    pub assessment: Option<Assessment>,
}

/// What [`crate::Memory::propose_alias`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposeOutcome {
    /// The `ALIAS_PROPOSED` record (absent when an unrecorded older edge
    /// stands for the pair).
    pub op_id: Option<Uuid>,
    /// The unverified edge.
    pub edge_id: Uuid,
    /// True when this call wrote the proposal; false when the pair was
    /// proposed before and the first record is returned unchanged.
    pub created: bool,
    /// The committed record's format (`kith.alias_proposal.v1` or `.v2`).
    pub format: Option<String>,
    /// The committed record's assessment with the node checksums it is
    /// bound to (`null` for a version-1 record: older proposals are never
    /// relabelled with evidence they did not contain).
    pub assessment: Option<Value>,
    /// Where the proposal stands.
    pub status: ProposalStatus,
}
/// The record format of `ALIAS_PROPOSAL_ACCEPTED` / `_REJECTED`.
pub const REVIEW_FORMAT: &str = "kith.alias_review.v1";

pub use kith_identity::aliases::Decision;

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    /// Waiting for a decision.
    Pending,
    /// Accepted: a verified alias edge exists.
    Accepted,
    /// Rejected.
    Rejected,
}

impl ProposalStatus {
    /// The stable text form.
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::Pending => "pending",
            ProposalStatus::Accepted => "accepted",
            ProposalStatus::Rejected => "rejected",
        }
    }
}

/// One entry of the alias-proposal inbox.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AliasProposal {
    /// The `ALIAS_PROPOSED` record (what `review_alias` takes).
    pub op_id: Uuid,
    /// The smaller node id.
    pub a: Uuid,
    /// The larger node id.
    pub b: Uuid,
    /// `a`'s name when proposed.
    pub a_name: String,
    /// `b`'s name when proposed.
    pub b_name: String,
    /// The semantic score.
    pub score: f64,
    /// The unverified edge.
    pub edge_id: Uuid,
    /// Where it stands.
    pub status: ProposalStatus,
    /// The decision record, once decided.
    pub review_op_id: Option<Uuid>,
    /// When it was proposed.
    pub created_at: Timestamp,
    /// The record's format (`kith.alias_proposal.v1` or `.v2`).
    pub format: String,
    /// A version-2 record's external assessment, with the node checksums
    /// it is bound to.
    pub assessment: Option<Value>,
}

/// What `review_alias` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewOutcome {
    /// The decision record.
    pub review_op_id: Uuid,
    /// The decision.
    pub decision: Decision,
    /// The verified alias edge (accept only).
    pub edge_id: Option<Uuid>,
    /// True when this call found the same decision already recorded and
    /// wrote nothing.
    pub replayed: bool,
}

/// What publishing a proposal did.
pub(crate) enum ProposalOutcome {
    /// Committed now.
    Published(ProposalApplied),
    /// The pair was proposed before; nothing written.
    Exists {
        /// The proposal.
        op_id: Uuid,
        /// Its status.
        status: ProposalStatus,
    },
    /// An unverified alias edge without a record (written under another
    /// id by an earlier version or an import) already links the pair; it
    /// is reused and nothing is written.
    Unrecorded {
        /// The existing edge.
        edge_id: Uuid,
    },
    /// Not admitted; nothing written.
    Refused(Refusal),
}

/// Proposes `(x, y)` as an unverified alias in one transaction.
///
/// Retried whole when busy (bounded); the proposal id is stable for the
/// pair, so a later attempt finds a committed one and writes nothing.
pub(crate) fn publish_proposal(
    store: &dyn Store,
    owner: &OwnerId,
    x: Uuid,
    y: Uuid,
    score: f64,
    assessment: Option<&Assessment>,
) -> Result<ProposalOutcome, Error> {
    crate::retry::on_busy("alias proposal", || {
        publish_proposal_once(store, owner, x, y, score, assessment)
    })
}

fn publish_proposal_once(
    store: &dyn Store,
    owner: &OwnerId,
    x: Uuid,
    y: Uuid,
    score: f64,
    assessment: Option<&Assessment>,
) -> Result<ProposalOutcome, Error> {
    let (a, b) = ordered(x, y);
    let refused = |code, detail: &str| Ok(ProposalOutcome::Refused(Refusal::new(code, detail)));
    ensure_finite("alias proposal score", score)?;
    let mut tx = store.begin(TxMode::Write)?;
    let op_id = proposal_op_id(a, b);
    if let Some(op) = tx.get_operation(op_id)? {
        if &op.owner_id != owner {
            return refused("not_found", "a node does not exist");
        }
        let (_, _, review) = live_op(&mut *tx, |g| review_op_id(op_id, g))?;
        return Ok(ProposalOutcome::Exists {
            op_id,
            status: status_of(review.as_ref()),
        });
    }
    let (Some(na), Some(nb)) = (tx.get_node(a)?, tx.get_node(b)?) else {
        return refused("not_found", "a node does not exist");
    };
    if &na.owner_id != owner || &nb.owner_id != owner {
        return refused("not_found", "a node does not exist");
    }
    if let Err(r) = admission::admit_alias(&na, &nb) {
        return Ok(ProposalOutcome::Refused(r));
    }
    // The spec recognises and reuses proposal edges that older versions
    // wrote under random ids, but never backfills them: a record written
    // now would claim a creation (inputs, time, score) nobody observed.
    // So such an edge stands for the pair's proposal, and a second link
    // is not published.
    if let Some(existing) = tx
        .edges_of(a)?
        .into_iter()
        .find(|e| is_unverified_alias_between(e, a, b))
    {
        return Ok(ProposalOutcome::Unrecorded {
            edge_id: existing.id,
        });
    }
    let now = Timestamp::now();
    // A proposal an assessor asked for is "external"; the organizer's own
    // come from a similarity or a given name ("semantic").
    let alias_type = if assessment.is_some() {
        "external"
    } else {
        "semantic"
    };
    let edge = proposal_edge(owner, &na.scope, op_id, (a, b), score, alias_type, now);
    ensure_edge_finite(&edge)?;
    let record = proposal_record((&na, &nb), alias_type, score, &edge, assessment)?;
    let op = Operation::new(
        op_id,
        OperationKind::AliasProposed,
        owner.clone(),
        na.scope.clone(),
        Some(a),
        sealed(record)?,
        now,
    );
    tx.insert_edge(&edge)?;
    tx.append_operation(&op)?;
    tx.commit()?;
    Ok(ProposalOutcome::Published(ProposalApplied {
        op_id,
        edge_id: edge.id,
        a,
        b,
        score,
    }))
}

/// The answer to a review of a proposal that was decided before (`first`):
/// the same decision with the same input replays it, any other is a
/// conflict.
fn replayed_review(
    first: &Operation,
    proposal: Uuid,
    decision: Decision,
    reason: Option<&str>,
    reviewer: Option<&str>,
) -> Result<ReviewOutcome, Error> {
    let first_record = unseal(first)?;
    let first_decision = match first.kind {
        OperationKind::AliasProposalAccepted => Decision::Accept,
        _ => Decision::Reject,
    };
    let same = first_decision == decision
        && str_at(first_record, &["reason"]) == reason
        && str_at(first_record, &["reviewer_id"]) == reviewer;
    if !same {
        return Err(OrganizerError::ReviewConflict {
            proposal,
            review: first.id,
            first: first_decision,
        }
        .into());
    }
    Ok(ReviewOutcome {
        review_op_id: first.id,
        decision,
        edge_id: uuid_at(first_record, &["edge", "id"]),
        replayed: true,
    })
}

/// The verified RELATES_TO edge an accepted proposal `prop` publishes
/// between `a` and `b`.
fn verified_edge(
    prop: &Operation,
    review_id: Uuid,
    (a, b): (Uuid, Uuid),
    alias_type: Value,
    reviewer: Option<&str>,
    now: Timestamp,
) -> Edge {
    Edge {
        id: verified_edge_id(review_id),
        owner_id: prop.owner_id.clone(),
        scope: prop.scope.clone(),
        source_id: a,
        target_id: b,
        edge_type: EdgeType::RelatesTo,
        confidence: 1.0,
        valid_from: now,
        valid_to: None,
        provenance_event_id: None,
        metadata: Some(json!({
            "relation": "alias",
            "alias_type": alias_type,
            "identity_verified": true,
            "alias_operation_id": prop.id,
            "review_operation_id": review_id,
            "reviewer_id": reviewer,
        })),
        created_at: now,
    }
}

/// The unverified RELATES_TO edge proposal `op_id` publishes between `a`
/// and `b` (its confidence the score, clamped to 0‥1).
fn proposal_edge(
    owner: &OwnerId,
    scope: &ScopeId,
    op_id: Uuid,
    (a, b): (Uuid, Uuid),
    score: f64,
    alias_type: &str,
    now: Timestamp,
) -> Edge {
    Edge {
        id: proposal_edge_id(op_id),
        owner_id: owner.clone(),
        scope: scope.clone(),
        source_id: a,
        target_id: b,
        edge_type: EdgeType::RelatesTo,
        confidence: score.clamp(0.0, 1.0),
        valid_from: now,
        valid_to: None,
        provenance_event_id: None,
        metadata: Some(json!({
            "relation": "alias",
            "alias_type": alias_type,
            "identity_verified": false,
            "alias_operation_id": op_id,
        })),
        created_at: now,
    }
}

/// The `ALIAS_PROPOSED` record of the pair `na`, `nb`: version 2 when an
/// assessment comes with it, bound to the exact node values it judged (the
/// same checksums an accept re-checks).
fn proposal_record(
    (na, nb): (&Node, &Node),
    alias_type: &str,
    score: f64,
    edge: &Edge,
    assessment: Option<&Assessment>,
) -> Result<Value, Error> {
    let checksums = json!({"a": snapshot_checksum(na)?, "b": snapshot_checksum(nb)?});
    let mut record = json!({
        "format": PROPOSAL_FORMAT,
        "policy": admission::ALIAS_POLICY,
        "pair": [na.id, nb.id],
        "alias_type": alias_type,
        "score": score,
        "nodes": {"a": snapshot(na)?, "b": snapshot(nb)?},
        "node_checksums": checksums,
        "edge": edge,
    });
    if let Some(assessment) = assessment {
        record["format"] = json!(PROPOSAL_FORMAT_V2);
        record["assessment"] = json!({
            "assessor": assessment.assessor,
            "verdict": assessment.verdict,
            "reasons": assessment.reasons,
            "node_checksums": checksums,
        });
    }
    Ok(record)
}

/// Whether `edge` is an unverified alias link between `a` and `b`, in
/// either direction: RELATES_TO with `relation: "alias"` and
/// `identity_verified: false`.
fn is_unverified_alias_between(edge: &Edge, a: Uuid, b: Uuid) -> bool {
    let meta = |key: &str| edge.metadata.as_ref().and_then(|m| m.get(key));
    edge.edge_type == EdgeType::RelatesTo
        && ordered(edge.source_id, edge.target_id) == (a, b)
        && meta("relation").and_then(Value::as_str) == Some("alias")
        && meta("identity_verified").and_then(Value::as_bool) == Some(false)
}

fn status_of(review: Option<&Operation>) -> ProposalStatus {
    match review.map(|op| op.kind) {
        Some(OperationKind::AliasProposalAccepted) => ProposalStatus::Accepted,
        Some(OperationKind::AliasProposalRejected) => ProposalStatus::Rejected,
        _ => ProposalStatus::Pending,
    }
}

fn uuid_at(v: &Value, path: &[&str]) -> Option<Uuid> {
    let mut v = v;
    for p in path {
        v = v.get(p)?;
    }
    v.as_str()?.parse().ok()
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut v = v;
    for p in path {
        v = v.get(p)?;
    }
    v.as_str()
}

/// The owner's alias proposals, oldest first, with their status.
pub(crate) fn alias_proposals(ctx: &Ctx<'_>, owner: &OwnerId) -> Result<Vec<AliasProposal>, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let ops = tx.list_operations(&OperationQuery {
        owner: owner.clone(),
        kind: Some(OperationKind::AliasProposed),
        target_id: None,
        limit: 0,
    })?;
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        // A proposal about forgotten nodes is gone with them.
        if kith_core::tombstone::is_scrubbed(&op.payload) {
            continue;
        }
        let record = unseal(&op)?;
        let (review_id, _, review) = live_op(&mut *tx, |g| review_op_id(op.id, g))?;
        let pair = record.get("pair").and_then(Value::as_array);
        let id_at = |i: usize| {
            pair.and_then(|p| p.get(i))
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok())
                .unwrap_or_default()
        };
        out.push(AliasProposal {
            op_id: op.id,
            a: id_at(0),
            b: id_at(1),
            a_name: str_at(record, &["nodes", "a", "content"])
                .unwrap_or_default()
                .to_string(),
            b_name: str_at(record, &["nodes", "b", "content"])
                .unwrap_or_default()
                .to_string(),
            score: record.get("score").and_then(Value::as_f64).unwrap_or(0.0),
            edge_id: uuid_at(record, &["edge", "id"]).unwrap_or_default(),
            status: status_of(review.as_ref()),
            review_op_id: review.is_some().then_some(review_id),
            created_at: op.created_at,
            format: str_at(record, &["format"]).unwrap_or_default().to_string(),
            assessment: record.get("assessment").cloned(),
        });
    }
    Ok(out)
}

/// Proposes two of `owner`'s entities as an unverified alias, with an
/// optional external assessment (a version-2 record), in one
/// transaction: the same admission as the organizer's proposals, and
/// nothing merges.
///
/// The proposal id is stable for the unordered pair, so a repeated
/// request returns the first committed record unchanged (`created:
/// false`), with its assessment or none: an older proposal is never
/// relabelled with evidence it did not contain.
pub(crate) fn propose_alias(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    req: &ProposeAliasRequest,
) -> Result<ProposeOutcome, Error> {
    if !(req.score.is_finite() && (0.0..=1.0).contains(&req.score)) {
        return Err(Error::Request("score: must be a number in [0, 1]".into()));
    }
    if req.a == req.b {
        return Err(Error::Request(format!(
            "a and b are the same node ({}); an alias links two entities",
            req.a
        )));
    }
    if let Some(a) = &req.assessment {
        a.check().map_err(|p| OrganizerError::InvalidAssessment {
            reason: p.to_string(),
        })?;
    }
    // Another owner's node answers not found, like a missing one.
    crate::reads::node(ctx, owner, req.a)?;
    crate::reads::node(ctx, owner, req.b)?;
    let outcome = publish_proposal(
        ctx.store,
        owner,
        req.a,
        req.b,
        req.score,
        req.assessment.as_ref(),
    )?;
    match outcome {
        ProposalOutcome::Published(p) => {
            let mut tx = ctx.store.begin(TxMode::Read)?;
            let op = tx.get_operation(p.op_id)?.ok_or_else(|| Error::NotFound {
                what: format!("alias proposal {}", p.op_id),
            })?;
            let record = unseal(&op)?;
            Ok(ProposeOutcome {
                op_id: Some(p.op_id),
                edge_id: p.edge_id,
                created: true,
                format: str_at(record, &["format"]).map(String::from),
                assessment: record.get("assessment").cloned(),
                status: ProposalStatus::Pending,
            })
        }
        ProposalOutcome::Exists { op_id, status } => {
            let mut tx = ctx.store.begin(TxMode::Read)?;
            let op = tx.get_operation(op_id)?.ok_or_else(|| Error::NotFound {
                what: format!("alias proposal {op_id}"),
            })?;
            let record = unseal(&op)?;
            Ok(ProposeOutcome {
                op_id: Some(op_id),
                edge_id: uuid_at(record, &["edge", "id"]).unwrap_or_default(),
                created: false,
                format: str_at(record, &["format"]).map(String::from),
                assessment: record.get("assessment").cloned(),
                status,
            })
        }
        ProposalOutcome::Unrecorded { edge_id } => Ok(ProposeOutcome {
            op_id: None,
            edge_id,
            created: false,
            format: None,
            assessment: None,
            status: ProposalStatus::Pending,
        }),
        ProposalOutcome::Refused(r) => Err(OrganizerError::NotAdmitted {
            code: r.code,
            detail: r.detail,
        }
        .into()),
    }
}

/// Records the owner's one decision on alias proposal `proposal`.
///
/// Accept rechecks that both proposed nodes are exactly as proposed and
/// active, then publishes a separate verified RELATES_TO edge (no
/// merge). Reject needs a `reason` and publishes no edge. The decision
/// record holds the complete proposal payload and the reviewer input.
/// The same decision with the same input again returns the first
/// record; any other decision fails with
/// [`OrganizerError::ReviewConflict`].
pub(crate) fn review_alias(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    proposal: Uuid,
    decision: Decision,
    reason: Option<&str>,
    reviewer: Option<&str>,
) -> Result<ReviewOutcome, Error> {
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    if decision == Decision::Reject && reason.is_none() {
        return Err(OrganizerError::ReasonRequired.into());
    }
    // The same decision again returns the first record, so an attempt
    // after a busy one that did commit writes nothing.
    crate::retry::on_busy("alias review", || {
        review_alias_once(ctx, owner, proposal, decision, reason, reviewer)
    })
}

fn review_alias_once(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    proposal: Uuid,
    decision: Decision,
    reason: Option<&str>,
    reviewer: Option<&str>,
) -> Result<ReviewOutcome, Error> {
    let not_found = || Error::NotFound {
        what: format!("alias proposal {proposal} of owner {owner}"),
    };
    let mut tx = ctx.store.begin(TxMode::Write)?;
    let prop = tx.get_operation(proposal)?.ok_or_else(not_found)?;
    if &prop.owner_id != owner || prop.kind != OperationKind::AliasProposed {
        return Err(not_found());
    }
    let record = unseal(&prop)?.clone();
    let (review_id, generation, existing) = live_op(&mut *tx, |g| review_op_id(proposal, g))?;
    if let Some(first) = existing {
        return replayed_review(&first, proposal, decision, reason, reviewer);
    }
    let damaged = |what: &str| OrganizerError::DamagedRecord {
        op: proposal,
        reason: format!("no {what}"),
    };
    let a: Option<Uuid> = record["pair"][0].as_str().and_then(|s| s.parse().ok());
    let b: Option<Uuid> = record["pair"][1].as_str().and_then(|s| s.parse().ok());
    let (Some(a), Some(b)) = (a, b) else {
        return Err(damaged("pair").into());
    };
    let now = Timestamp::now();
    let edge = match decision {
        Decision::Accept => {
            for (key, id) in [("a", a), ("b", b)] {
                let recorded = str_at(&record, &["node_checksums", key])
                    .ok_or_else(|| damaged("node checksums"))?;
                let current = tx.get_node(id)?;
                let unchanged = match &current {
                    Some(n) => n.lifecycle.is_active() && snapshot_checksum(n)? == recorded,
                    None => false,
                };
                if !unchanged {
                    return Err(OrganizerError::StaleProposal { proposal, node: id }.into());
                }
            }
            let alias_type = record.get("alias_type").cloned().unwrap_or(Value::Null);
            Some(verified_edge(
                &prop,
                review_id,
                (a, b),
                alias_type,
                reviewer,
                now,
            ))
        }
        Decision::Reject => None,
    };
    let review = json!({
        "format": REVIEW_FORMAT,
        "proposal_operation_id": proposal,
        "proposal_checksum": prop.checksum,
        "proposal": prop.payload,
        "generation": generation,
        "decision": decision.as_str(),
        "reason": reason,
        "reviewer_id": reviewer,
        "edge": edge,
    });
    let op = Operation::new(
        review_id,
        match decision {
            Decision::Accept => OperationKind::AliasProposalAccepted,
            Decision::Reject => OperationKind::AliasProposalRejected,
        },
        owner.clone(),
        prop.scope.clone(),
        Some(a),
        sealed(review)?,
        now,
    );
    if let Some(e) = &edge {
        tx.insert_edge(e)?;
    }
    tx.append_operation(&op)?;
    tx.commit()?;
    Ok(ReviewOutcome {
        review_op_id: review_id,
        decision,
        edge_id: edge.map(|e| e.id),
        replayed: false,
    })
}
