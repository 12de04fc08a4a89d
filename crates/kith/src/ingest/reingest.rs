//! `reingest`: re-derive events from their saved extractions, under the
//! policy each extraction was saved under and the current options, without
//! calling the provider.

use kith_core::Timestamp;
use kith_store::{StoreErrorKind, TxMode, WorkStatus};
use uuid::Uuid;

use super::commit::{commit_plan, save_plan, Committed};
use super::plan::{self, DerivationPlan, NodeAction};
use super::ReingestOutcome;
use crate::error::Error;
use crate::memory::Memory;

impl Memory {
    /// Re-derives one event from its saved extraction under the policy it
    /// was saved under (refused with [`Error::Policy`] when this build does
    /// not have it) and the current options. Never calls the provider. If the derivation would write the
    /// same claims and edges, nothing changes (`unchanged`); otherwise a new
    /// plan revision is saved and committed, and claims of the old revision
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
        let (fresh, identity, first_person_owner) = {
            let mut tx = self.store_backend().begin(TxMode::Read)?;
            let first_person_owner = tx
                .get_work_item(event.id)?
                .is_some_and(|w| super::declared_first_person_owner(&event, &w.options));
            let identity =
                self.identity_for(&mut *tx, &event, &mut grounded, first_person_owner, policy)?;
            let fresh = plan::build(
                &event,
                &grounded,
                plan::extraction_op_id(event.id),
                old.revision + 1,
                &identity,
                &mut plan::TxLookup(&mut *tx),
            )?;
            (fresh, identity, first_person_owner)
        };
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
        let keep = derived_ids(&fresh).0;
        for planned in &old.nodes {
            let n = &planned.node;
            if n.node_type == kith_core::NodeType::Entity || keep.contains(&n.id) {
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
        tx.commit()?;
        Ok(ReingestOutcome {
            event_id,
            outcome: "rederived".into(),
            revision: Some(fresh.revision),
        })
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

/// Makes the claims of `fresh` say what it says about who they are about,
/// in the reingest's transaction: an edge of `old` that `fresh` no longer
/// makes (the claim's subject or object is now another entity) is closed at
/// `now`, so every claim keeps exactly one open subject edge (an edge of
/// `fresh` that an earlier reingest closed is reopened), and a claim
/// that both plans make gets `fresh`'s identity metadata
/// (`speaker_reference`, `owner_reference`, link statuses) instead of
/// keeping the old binding's.
fn rebind_claims(
    tx: &mut dyn kith_store::Tx,
    old: &DerivationPlan,
    fresh: &DerivationPlan,
    now: Timestamp,
) -> Result<(), Error> {
    let fresh_edges: std::collections::HashSet<Uuid> = fresh.edges.iter().map(|e| e.id).collect();
    for edge in &old.edges {
        if edge.edge_type == kith_core::EdgeType::Supersedes || fresh_edges.contains(&edge.id) {
            continue;
        }
        match tx.close_edge(edge.id, now) {
            Ok(()) => {}
            // Already closed, or taken back by an undo: nothing links.
            Err(e)
                if matches!(
                    e.kind(),
                    StoreErrorKind::Conflict | StoreErrorKind::NotFound
                ) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // An edge `fresh` makes that an earlier reingest closed links again.
    for edge in &fresh.edges {
        if tx.get_edge(edge.id)?.is_some_and(|e| !e.is_open()) {
            tx.reopen_edge(edge.id)?;
        }
    }
    for planned in &fresh.nodes {
        let n = &planned.node;
        if n.node_type == kith_core::NodeType::Entity || planned.action != NodeAction::Create {
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
