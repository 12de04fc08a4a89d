//! `reingest`: re-derive events from their saved extractions, under the
//! policy each extraction was saved under and the current options, without
//! calling the provider.

use std::collections::HashSet;

use kith_core::Timestamp;
use kith_store::{StoreErrorKind, TxMode, WorkStatus};
use uuid::Uuid;

use super::commit::{commit_plan, save_plan, Committed};
use super::plan::{self, DerivationPlan, NodeAction};
use super::Ingest;
use super::ReingestOutcome;
use crate::error::Error;

impl Ingest<'_> {
    /// Re-derives one event from its saved extraction under the policy it
    /// was saved under (refused with [`Error::Policy`] when this build does
    /// not have it) and the current options. Never calls the provider. If the derivation would write the
    /// same claims and edges, nothing changes (`unchanged`); otherwise a new
    /// plan revision is saved and committed, and claims the old revision made
    /// that the new one no longer makes are archived (`rederived`).
    pub fn reingest_event(
        &self,
        owner: &kith_core::OwnerId,
        event_id: Uuid,
    ) -> Result<ReingestOutcome, Error> {
        // Re-planned from the saved extraction on every attempt, so a busy
        // attempt that rolled back is simply run again.
        crate::retry::on_busy("reingest", || self.reingest_event_once(owner, event_id))
    }

    fn reingest_event_once(
        &self,
        owner: &kith_core::OwnerId,
        event_id: Uuid,
    ) -> Result<ReingestOutcome, Error> {
        let stored = self.event(owner, event_id)?;
        if stored.tombstone.is_some() {
            // Forgotten: nothing is derived from it again, and its saved
            // extraction was scrubbed with it.
            return Ok(ReingestOutcome {
                event_id,
                outcome: "forgotten".into(),
                revision: None,
            });
        }
        let event = stored.event;
        let Some((extraction, policy)) = self.saved_extraction(&event)? else {
            return Ok(ReingestOutcome {
                event_id,
                outcome: "no_extraction".into(),
                revision: None,
            });
        };
        let mut grounded = self.ground(&event, &extraction, policy);
        let committed = self.committed_plan(&event)?;
        let Some(old) = committed else {
            // Never committed: finish the normal way, from the saved extraction.
            let status = self.run_work(event_id, true)?;
            let revision = self.committed_plan(&event)?.map(|p| p.revision);
            return Ok(ReingestOutcome {
                event_id,
                outcome: if status == WorkStatus::Complete {
                    "derived".into()
                } else {
                    status.as_str().into()
                },
                revision,
            });
        };
        let (fresh, identity, first_person_owner, retired) =
            self.replan(&event, &mut grounded, old.revision + 1, policy)?;
        let mut old = old;
        leave_history(&mut old, &retired);
        if derived_ids(&fresh) == derived_ids(&old) {
            // The same claims: only the group links (made outside plans)
            // may be missing, e.g. for memories ingested before the option.
            let mut tx = self.store_backend().begin(TxMode::Write)?;
            super::groups::link_groups(
                &mut *tx,
                &event,
                &old,
                &identity.options,
                first_person_owner,
            )?;
            tx.commit()?;
            return Ok(ReingestOutcome {
                event_id,
                outcome: "unchanged".into(),
                revision: Some(old.revision),
            });
        }
        // Save the new revision, commit it and retire what it no longer
        // makes, in one transaction.
        let mut tx = self.store_backend().begin(TxMode::Write)?;
        save_plan(&mut *tx, &event, &fresh)?;
        revive_claims(&mut *tx, &fresh, Timestamp::now())?;
        if let Committed::Stale(reason) = commit_plan(&mut *tx, &fresh)? {
            return Err(kith_store::StoreError::new(
                StoreErrorKind::Conflict,
                format!("reingest of event {event_id} went stale ({reason}); try again"),
            )
            .into());
        }
        super::groups::link_groups(
            &mut *tx,
            &event,
            &fresh,
            &identity.options,
            first_person_owner,
        )?;
        let now = Timestamp::now();
        rebind_claims(&mut *tx, &old, &fresh, now)?;
        archive_dropped(&mut *tx, &old, &fresh, now)?;
        tx.commit()?;
        Ok(ReingestOutcome {
            event_id,
            outcome: "rederived".into(),
            revision: Some(fresh.revision),
        })
    }

    /// Plans revision `revision` of `event` from its grounded extraction
    /// (in one read snapshot), leaving out the claims retired since
    /// ([`retired_claims`]). Returns the plan, the identity it was made under, whether
    /// the owner declared the first person, and the retired claims.
    fn replan(
        &self,
        event: &kith_core::Event,
        grounded: &mut kith_extract::grounding::Grounded,
        revision: u32,
        policy: kith_identity::Policy,
    ) -> Result<(DerivationPlan, plan::Identity, bool, HashSet<Uuid>), Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        let first_person_owner = tx
            .get_work_item(event.id)?
            .is_some_and(|w| super::declared_first_person_owner(event, &w.options));
        let identity = self.identity_for(&mut *tx, event, grounded, first_person_owner, policy)?;
        let mut fresh = plan::build(
            event,
            grounded,
            plan::extraction_op_id(event.id),
            revision,
            &identity,
            &mut plan::TxLookup(&mut *tx),
        )?;
        let retired = retired_claims(&mut *tx, &fresh)?;
        leave_history(&mut fresh, &retired);
        Ok((fresh, identity, first_person_owner, retired))
    }

    /// [`Memory::reingest_event`] for every ingested event of a session, in
    /// ingestion order.
    pub fn reingest_session(
        &self,
        owner: &kith_core::OwnerId,
        session: &kith_core::SessionId,
    ) -> Result<Vec<ReingestOutcome>, Error> {
        let events = self.events(&kith_store::EventQuery {
            owner: Some(owner.clone()),
            session: Some(session.clone()),
            ..kith_store::EventQuery::default()
        })?;
        let mut out = Vec::new();
        for e in events {
            let has_work = {
                let mut tx = self.store_backend().begin(TxMode::Read)?;
                tx.get_work_item(e.event.id)?.is_some()
            };
            if has_work {
                out.push(self.reingest_event(owner, e.event.id)?);
            }
        }
        Ok(out)
    }

    /// The newest committed plan of an event.
    fn committed_plan(&self, event: &kith_core::Event) -> Result<Option<DerivationPlan>, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        let mut found = None;
        let mut revision = 1;
        while let Some(saved) = tx.get_operation(plan::plan_op_id(event.id, revision))? {
            if tx
                .get_operation(plan::receipt_op_id(event.id, revision))?
                .is_some()
            {
                found = Some(saved);
            }
            revision += 1;
        }
        found
            .map(|op| {
                serde_json::from_value(op.payload["plan"].clone()).map_err(|e| {
                    kith_store::StoreError::corrupted(format!(
                        "saved plan of event {}: {e}",
                        event.id
                    ))
                    .into()
                })
            })
            .transpose()
    }
}

/// Archives the claims the old revision created that the new one no
/// longer makes. Only what this event made: a claim the old plan merged or
/// replaced is another event's, and stays as history (archiving it would
/// leave that event's own reingest unable to proceed).
fn archive_dropped(
    tx: &mut dyn kith_store::Tx,
    old: &DerivationPlan,
    fresh: &DerivationPlan,
    now: Timestamp,
) -> Result<(), Error> {
    let keep = derived_ids(fresh).0;
    for planned in &old.nodes {
        let n = &planned.node;
        if n.node_type == kith_core::NodeType::Entity
            || keep.contains(&n.id)
            || planned.action != NodeAction::Create
        {
            continue;
        }
        if let Some(mut current) = tx.get_node(n.id)? {
            if current.lifecycle.can_become(kith_core::Lifecycle::Archived) {
                current.lifecycle = kith_core::Lifecycle::Archived;
                current.updated_at = now;
                tx.update_node(&current)?;
            }
        }
    }
    Ok(())
}

/// Makes the claims of `fresh` say what it says about who they are about,
/// in the reingest's transaction: an edge of `old` that `fresh` no longer
/// makes (the claim's subject or object is now another entity) is closed at
/// `now`, so every claim keeps exactly one open subject edge (an edge of
/// `fresh` that an earlier reingest closed is reopened), and a claim
/// that both plans make gets `fresh`'s identity metadata
/// (`speaker_reference`, `owner_reference`, link statuses) instead of
/// keeping the old binding's.
///
/// A claim the caller corrected (`metadata.correction`, `Memory::correct`)
/// keeps the links and metadata the correction left: the caller's word
/// outlives a re-derivation under other options, so no edge of it is closed
/// or reopened, and an edge `fresh` makes for it that `old` did not is
/// closed at once (it stays in the plan's record, as history).
fn rebind_claims(
    tx: &mut dyn kith_store::Tx,
    old: &DerivationPlan,
    fresh: &DerivationPlan,
    now: Timestamp,
) -> Result<(), Error> {
    let mut corrected: std::collections::HashSet<Uuid> = std::collections::HashSet::new();
    for planned in &fresh.nodes {
        if planned.node.node_type == kith_core::NodeType::Entity {
            continue;
        }
        let current = tx.get_node(planned.node.id)?;
        if current
            .and_then(|n| n.metadata)
            .is_some_and(|m| m.get("correction").is_some())
        {
            corrected.insert(planned.node.id);
        }
    }
    let of_corrected =
        |e: &kith_core::Edge| corrected.contains(&e.source_id) || corrected.contains(&e.target_id);
    let fresh_edges: std::collections::HashSet<Uuid> = fresh.edges.iter().map(|e| e.id).collect();
    let old_edges: std::collections::HashSet<Uuid> = old.edges.iter().map(|e| e.id).collect();
    for edge in &old.edges {
        if edge.edge_type == kith_core::EdgeType::Supersedes
            || fresh_edges.contains(&edge.id)
            || of_corrected(edge)
        {
            continue;
        }
        for id in with_merge_copies(tx, edge)? {
            close(tx, id, now)?;
        }
    }
    for edge in &fresh.edges {
        if of_corrected(edge) {
            if !old_edges.contains(&edge.id) && edge.edge_type != kith_core::EdgeType::Supersedes {
                close(tx, edge.id, now)?;
            }
            continue;
        }
        // An edge `fresh` makes that an earlier reingest closed links again,
        // and so do the copies a merge made of it.
        for id in with_merge_copies(tx, edge)? {
            if tx.get_edge(id)?.is_some_and(|e| !e.is_open()) {
                tx.reopen_edge(id)?;
            }
        }
    }
    for planned in &fresh.nodes {
        let n = &planned.node;
        if n.node_type == kith_core::NodeType::Entity
            || planned.action != NodeAction::Create
            || corrected.contains(&n.id)
        {
            continue;
        }
        let Some(mut current) = tx.get_node(n.id)? else {
            continue;
        };
        let wanted = n.metadata.as_ref().and_then(|m| m.as_object());
        let Some(have) = current.metadata.as_mut().and_then(|m| m.as_object_mut()) else {
            continue;
        };
        let mut changed = false;
        for key in IDENTITY_KEYS {
            let value = wanted.and_then(|w| w.get(*key));
            if have.get(*key) != value {
                match value {
                    Some(v) => have.insert((*key).to_string(), v.clone()),
                    None => have.remove(*key),
                };
                changed = true;
            }
        }
        if changed {
            current.updated_at = now;
            tx.update_node(&current)?;
        }
    }
    Ok(())
}

/// The claims `plan` would create that exist and are history: superseded
/// (merged into or replaced by a later claim, or corrected by the owner) or
/// retracted by the owner since this event was derived. A claim an earlier
/// reingest archived because its plan no longer made it is not history: the
/// commit brings it back ([`revive_claims`]).
fn retired_claims(
    tx: &mut dyn kith_store::Tx,
    plan: &DerivationPlan,
) -> Result<std::collections::HashSet<Uuid>, Error> {
    let mut out = std::collections::HashSet::new();
    for planned in &plan.nodes {
        let n = &planned.node;
        if n.node_type == kith_core::NodeType::Entity || planned.action != NodeAction::Create {
            continue;
        }
        if tx.get_node(n.id)?.is_some_and(|c| is_history(&c)) {
            out.insert(n.id);
        }
    }
    Ok(out)
}

/// Whether an existing claim is history a re-derivation must leave alone.
fn is_history(claim: &kith_core::Node) -> bool {
    use kith_core::Lifecycle;
    let retracted = claim
        .metadata
        .as_ref()
        .is_some_and(|m| m.get("retraction").is_some());
    match claim.lifecycle {
        Lifecycle::Superseded | Lifecycle::Deprecated => true,
        Lifecycle::Archived => retracted,
        _ => false,
    }
}

/// Claims `plan` makes that an earlier reingest archived (its plan no
/// longer made them): made again, they become current again, in the
/// reingest's transaction, before the plan is committed (a commit never
/// brings a retired node back by itself).
fn revive_claims(
    tx: &mut dyn kith_store::Tx,
    plan: &DerivationPlan,
    now: Timestamp,
) -> Result<(), Error> {
    for planned in &plan.nodes {
        let n = &planned.node;
        if n.node_type == kith_core::NodeType::Entity || planned.action != NodeAction::Create {
            continue;
        }
        let Some(mut current) = tx.get_node(n.id)? else {
            continue;
        };
        if current.lifecycle == kith_core::Lifecycle::Archived && !is_history(&current) {
            current.lifecycle = n.lifecycle;
            current.updated_at = now;
            tx.update_node(&current)?;
        }
    }
    Ok(())
}

/// Takes the `retired` claims and their links out of `plan`. A retired
/// claim is history — the claim that retired it carries its evidence — and
/// a commit never brings a retired node back, so a reingest leaves it and
/// its links as they are instead of failing as stale on every attempt.
fn leave_history(plan: &mut DerivationPlan, retired: &std::collections::HashSet<Uuid>) {
    if retired.is_empty() {
        return;
    }
    plan.nodes.retain(|p| !retired.contains(&p.node.id));
    plan.edges
        .retain(|e| !retired.contains(&e.source_id) && !retired.contains(&e.target_id));
}

/// `edge` and the copies organizer merges made of it: when a merge retired
/// one of its endpoints, it copied the edge to the node it kept
/// (`organize::transfer_edge_id`), and that copy is the live link. A
/// reingest that closes or reopens the edge does the same to its copies
/// (following merges of merges), so a claim whose subject was merged never
/// keeps the old binding through the copy beside the new one.
fn with_merge_copies(
    tx: &mut dyn kith_store::Tx,
    edge: &kith_core::Edge,
) -> Result<Vec<Uuid>, Error> {
    let mut out = vec![edge.id];
    let mut pending = vec![(edge.id, edge.source_id, edge.target_id)];
    while let Some((id, source, target)) = pending.pop() {
        for end in [source, target] {
            let Some(keep) = tx.get_node(end)?.and_then(|n| n.superseded_by) else {
                continue;
            };
            let copy = crate::organize::transfer_edge_id(id, end, keep);
            if out.contains(&copy) || tx.get_edge(copy)?.is_none() {
                continue;
            }
            out.push(copy);
            let (s, t) = if end == source {
                (keep, target)
            } else {
                (source, keep)
            };
            pending.push((copy, s, t));
        }
    }
    Ok(out)
}

/// Closes an edge at `now`; one already closed, or taken back by an undo,
/// links nothing and is left as it is.
fn close(tx: &mut dyn kith_store::Tx, edge: Uuid, now: Timestamp) -> Result<(), Error> {
    match tx.close_edge(edge, now) {
        Ok(()) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                StoreErrorKind::Conflict | StoreErrorKind::NotFound
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// The claim metadata that says who a claim is about; everything else a
/// claim carries (merged ids, evidence) is its history and stays.
const IDENTITY_KEYS: &[&str] = &[
    "speaker_reference",
    "owner_reference",
    "subject_link_status",
    "object_link_status",
    "resolved_from_context",
    "resolution",
];

/// The ids of the claims (not entities) and edges a plan writes.
fn derived_ids(plan: &DerivationPlan) -> (Vec<Uuid>, Vec<Uuid>) {
    let mut nodes: Vec<Uuid> = plan
        .nodes
        .iter()
        .filter(|p| p.node.node_type != kith_core::NodeType::Entity)
        .filter(|p| p.action == NodeAction::Create)
        .map(|p| p.node.id)
        .collect();
    // Supersedence depends on what else the owner said since; a reingest
    // compares what the event itself derives.
    let mut edges: Vec<Uuid> = plan
        .edges
        .iter()
        .filter(|e| e.edge_type != kith_core::EdgeType::Supersedes)
        .map(|e| e.id)
        .collect();
    nodes.sort();
    edges.sort();
    (nodes, edges)
}
