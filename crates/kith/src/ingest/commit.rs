//! Leasing work, saving extractions and plans, and committing a plan: the
//! transactional steps of a derivation (see the parent module's overview).

use std::time::Duration;

use kith_core::{Node, OperationKind, Timestamp};
use kith_extract::grounding;
use kith_extract::{Extraction, ExtractionInput};
use kith_identity::Policy;
use kith_store::{StoreErrorKind, Tx, WorkStatus};
use serde_json::json;
use uuid::Uuid;

use super::plan::{self, DerivationPlan, NodeAction};
use super::{now_ms, DerivationSummary, IngestOptions, MAX_REPLANS};
use crate::error::Error;

/// What leasing a work item found.
pub(super) enum Leased {
    /// The lease is ours; here is the event and its ingest options.
    Event(Box<kith_core::Event>, IngestOptions),
    /// Nothing to do: the item is complete or another process holds it.
    Status(WorkStatus),
}

/// Takes the work item's lease inside `tx` (attempts + 1).
pub(super) fn lease(
    tx: &mut dyn Tx,
    event_id: Uuid,
    take_over: bool,
    lease: Duration,
) -> Result<Leased, Error> {
    let Some(mut item) = tx.get_work_item(event_id)? else {
        return Err(Error::NotFound {
            what: format!("work item of event {event_id}"),
        });
    };
    let now = now_ms();
    match item.status {
        WorkStatus::Complete => return Ok(Leased::Status(WorkStatus::Complete)),
        WorkStatus::Running if !take_over && item.lease_until_ms.unwrap_or(0) > now => {
            return Ok(Leased::Status(WorkStatus::Running))
        }
        _ => {}
    }
    item.status = WorkStatus::Running;
    item.attempts += 1;
    item.lease_until_ms = Some(now + lease.as_millis() as i64);
    item.updated_at = Timestamp::now();
    tx.update_work_item(&item)?;
    let event = tx.get_event(event_id)?.ok_or_else(|| Error::NotFound {
        what: format!("event {event_id}"),
    })?;
    let options = IngestOptions {
        defer: false,
        first_person_owner: super::declared_first_person_owner(&event.event, &item.options),
    };
    Ok(Leased::Event(Box::new(event.event), options))
}

pub(super) fn extraction_input(event: &kith_core::Event) -> ExtractionInput<'_> {
    ExtractionInput {
        content: &event.content,
        role: event.role,
        speaker: event.speaker.as_ref().map(|s| s.as_str()),
        event_time: event.event_time,
    }
}

/// An event's saved extraction and the policy it was saved under (a
/// record without a policy name predates `kith_ingest_v3` and was saved
/// under `kith_ingest_v2`). A policy this build does not know is refused.
pub(super) fn saved_extraction(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
) -> Result<Option<(Extraction, Policy)>, Error> {
    let Some(op) = tx.get_operation(plan::extraction_op_id(event.id))? else {
        return Ok(None);
    };
    let policy = Policy::from_record(op.payload.get("policy").and_then(|p| p.as_str()))?;
    let extraction = Extraction::from_value(op.payload["extraction"].clone()).map_err(|e| {
        kith_store::StoreError::corrupted(format!("saved extraction of event {}: {e}", event.id))
    })?;
    Ok(Some((extraction, policy)))
}

/// Saves a provider's reply once, under the current policy; if another
/// process saved one first, that one (and its policy) wins and is returned.
pub(super) fn save_extraction(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
    reply: kith_extract::ProviderReply,
    repair: serde_json::Value,
) -> Result<(Extraction, Policy), Error> {
    if let Some(saved) = saved_extraction(tx, event)? {
        return Ok(saved);
    }
    tx.append_operation(&kith_core::Operation::new(
        plan::extraction_op_id(event.id),
        OperationKind::ExtractionValidated,
        event.owner_id.clone(),
        event.scope.clone(),
        Some(event.id),
        json!({
            "event_id": event.id.to_string(),
            "content_sha256": event.content_sha256,
            "policy": Policy::CURRENT.name(),
            "provider": reply.provider,
            "model": reply.model,
            "calls": reply.calls,
            "raw": reply.raw,
            "extraction": reply.extraction,
            "pronoun_repair": repair,
        }),
        Timestamp::now(),
    ))?;
    Ok((reply.extraction, Policy::CURRENT))
}

/// The validated pronoun-repair answers saved with an event's extraction.
pub(super) fn saved_repairs(
    tx: &mut dyn Tx,
    event_id: uuid::Uuid,
) -> Result<Vec<kith_extract::pronoun::PronounAnswer>, Error> {
    Ok(tx
        .get_operation(plan::extraction_op_id(event_id))?
        .and_then(|op| serde_json::from_value(op.payload["pronoun_repair"]["answers"].clone()).ok())
        .unwrap_or_default())
}

/// Derives an event inside `tx`: replays its newest saved plan that is
/// neither committed nor stale (byte-for-byte, whatever the rules are now),
/// or builds and saves a new revision; then commits it. Returns `None` if
/// plans kept going stale.
pub(super) fn derive(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
    grounded: &grounding::Grounded,
    identity: &plan::Identity,
) -> Result<Option<(DerivationSummary, DerivationPlan)>, Error> {
    for _ in 0..MAX_REPLANS {
        let plan = prepare_plan(tx, event, grounded, identity)?;
        match commit_plan(tx, &plan)? {
            Committed::Done(summary) => return Ok(Some((summary, plan))),
            Committed::Stale(reason) => {
                tracing::info!(event = %event.id, %reason, "plan went stale; replanning");
                mark_plan_stale(tx, &plan, &reason)?;
            }
        }
    }
    Ok(None)
}

/// The newest saved plan that is neither committed nor stale, else a new
/// revision built now and saved.
pub(super) fn prepare_plan(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
    grounded: &grounding::Grounded,
    identity: &plan::Identity,
) -> Result<DerivationPlan, Error> {
    let mut revision = 1;
    while let Some(saved) = tx.get_operation(plan::plan_op_id(event.id, revision))? {
        let committed = tx
            .get_operation(plan::receipt_op_id(event.id, revision))?
            .is_some();
        let stale = tx
            .get_operation(plan::stale_op_id(event.id, revision))?
            .is_some();
        if !committed && !stale {
            return serde_json::from_value(saved.payload["plan"].clone()).map_err(|e| {
                kith_store::StoreError::corrupted(format!(
                    "saved plan {revision} of event {}: {e}",
                    event.id
                ))
                .into()
            });
        }
        revision += 1;
    }
    let plan = {
        plan::build(
            event,
            grounded,
            plan::extraction_op_id(event.id),
            revision,
            identity,
            &mut plan::TxLookup(&mut *tx),
        )?
    };
    save_plan(tx, event, &plan)?;
    Ok(plan)
}

pub(super) fn save_plan(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
    plan: &DerivationPlan,
) -> Result<(), Error> {
    tx.append_operation(&kith_core::Operation::new(
        plan::plan_op_id(event.id, plan.revision),
        OperationKind::DerivationPrepared,
        event.owner_id.clone(),
        event.scope.clone(),
        Some(event.id),
        json!({"plan": plan, "plan_checksum": plan.checksum()}),
        event.ingested_at,
    ))?;
    Ok(())
}

/// Commits a plan inside `tx`: a committed plan returns its receipt's
/// summary; otherwise checks the saved checksum and every referenced node,
/// then writes what is new and journals the receipt.
pub(super) fn commit_plan(tx: &mut dyn Tx, plan: &DerivationPlan) -> Result<Committed, Error> {
    let receipt_id = plan::receipt_op_id(plan.event_id, plan.revision);
    if let Some(receipt) = tx.get_operation(receipt_id)? {
        let summary =
            serde_json::from_value(receipt.payload["summary"].clone()).unwrap_or_default();
        return Ok(Committed::Done(summary));
    }
    let saved = tx
        .get_operation(plan::plan_op_id(plan.event_id, plan.revision))?
        .ok_or_else(|| {
            kith_store::StoreError::corrupted("a plan was committed without being saved")
        })?;
    let checksum = plan.checksum();
    if saved.payload["plan_checksum"] != json!(checksum) {
        return Err(kith_store::StoreError::corrupted(format!(
            "plan {} of event {} does not match its saved checksum",
            plan.revision, plan.event_id
        ))
        .into());
    }
    // Check every reference before writing anything.
    let mut to_insert = Vec::new();
    let mut summary = DerivationSummary {
        revision: plan.revision,
        plan_checksum: checksum.clone(),
        dropped: plan.dropped.len(),
        ..DerivationSummary::default()
    };
    let mut to_update = Vec::new();
    for planned in &plan.nodes {
        let current = tx.get_node(planned.node.id)?;
        match (&planned.action, current) {
            (NodeAction::Create, None) => to_insert.push(&planned.node),
            (NodeAction::Update { before }, Some(n)) if &n.checksum() == before => {
                to_update.push(&planned.node)
            }
            (NodeAction::Update { .. }, _) => {
                return Ok(Committed::Stale(format!(
                    "node {} changed since it was planned",
                    planned.node.id
                )))
            }
            (NodeAction::Create, Some(n)) if n.lifecycle.is_active() => {
                count(&mut summary, &n, false)
            }
            (NodeAction::Create, Some(n)) => {
                return Ok(Committed::Stale(format!("node {} was retired", n.id)))
            }
            (NodeAction::Reuse { checksum }, Some(n))
                if n.lifecycle.is_active() && &n.checksum() == checksum =>
            {
                count(&mut summary, &n, false)
            }
            (NodeAction::Reuse { .. }, _) => {
                return Ok(Committed::Stale(format!(
                    "node {} changed since it was planned",
                    planned.node.id
                )))
            }
        }
    }
    for node in to_insert {
        tx.insert_node(node)?;
        count(&mut summary, node, true);
    }
    for node in to_update {
        tx.update_node(node)?;
        if node.node_type == kith_core::NodeType::Entity {
            // An untyped entity a person adopted (`kith_ingest_v4`).
            summary.entities_reused += 1;
        } else {
            summary.superseded += 1;
        }
    }
    for edge in &plan.edges {
        match tx.insert_edge(edge) {
            Ok(()) => summary.edges += 1,
            // The same deterministic edge from an earlier derivation.
            Err(e) if e.kind() == StoreErrorKind::Conflict => {}
            Err(e) => return Err(e.into()),
        }
    }
    tx.append_operation(&kith_core::Operation::new(
        receipt_id,
        OperationKind::DerivationCommitted,
        plan.owner_id.clone(),
        plan.scope.clone(),
        Some(plan.event_id),
        json!({
            "plan_id": plan::plan_op_id(plan.event_id, plan.revision).to_string(),
            "plan_checksum": checksum,
            "policy": plan.policy,
            "summary": summary,
            "node_ids": plan.nodes.iter().map(|p| p.node.id.to_string()).collect::<Vec<_>>(),
            "edge_ids": plan.edges.iter().map(|e| e.id.to_string()).collect::<Vec<_>>(),
        }),
        Timestamp::now(),
    ))?;
    Ok(Committed::Done(summary))
}

/// The journal is append-only: a stale plan is marked by a follow-up
/// record, so the next prepare builds a new revision instead of replaying it.
pub(super) fn mark_plan_stale(
    tx: &mut dyn Tx,
    plan: &DerivationPlan,
    reason: &str,
) -> Result<(), Error> {
    let id = plan::stale_op_id(plan.event_id, plan.revision);
    if tx.get_operation(id)?.is_none() {
        tx.append_operation(&kith_core::Operation::new(
            id,
            OperationKind::DerivationReplanRequested,
            plan.owner_id.clone(),
            plan.scope.clone(),
            Some(plan.event_id),
            json!({"revision": plan.revision, "reason": reason}),
            Timestamp::now(),
        ))?;
    }
    Ok(())
}

pub(super) enum Committed {
    Done(DerivationSummary),
    Stale(String),
}

pub(super) fn complete_work(tx: &mut dyn Tx, event_id: Uuid) -> Result<(), Error> {
    if let Some(mut item) = tx.get_work_item(event_id)? {
        item.status = WorkStatus::Complete;
        item.lease_until_ms = None;
        item.reason_code = None;
        item.last_error = None;
        item.updated_at = Timestamp::now();
        tx.update_work_item(&item)?;
    }
    Ok(())
}

/// Counts a node in the summary: a created or reused entity, or a claim.
pub(super) fn count(summary: &mut DerivationSummary, node: &Node, created: bool) {
    match (node.node_type == kith_core::NodeType::Entity, created) {
        (true, true) => summary.entities_created += 1,
        (true, false) => summary.entities_reused += 1,
        (false, _) => summary.claims += 1,
    }
}
