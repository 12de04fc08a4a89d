//! Owner group links, applied after a derivation's plan is committed (in the
//! same transaction, outside the plan, so saved plans keep their bytes).
//!
//! For a user turn's claims about we/us/our (the event-local `we`): a
//! MENTIONS link to the owner (`basis: group_member`, `role: speaker`), and
//! one to each other member when the session names exactly one group
//! (`named_in`: the turn that named it); then, with claim merge on, an
//! earlier copy of the same we-claim in the same session, linked to the same
//! owner as its speaker, is merged into the new one. See
//! `kith_identity::groups` for the reading rules and `docs/identity.md`.
//!
//! Every write here is journaled: one `GROUP_LINKED` record per pass that
//! wrote anything, with the links (whole edges), the merged claims (before
//! and after) and an owner entity made for the links (whole node).

use kith_core::{ids, Edge, EdgeType, Event, Lifecycle, Node, Operation, OperationKind, Role};
use kith_identity::claims;
use kith_identity::groups::{self, Members};
use kith_identity::{IdentityOptions, Policy};
use kith_store::{StoreErrorKind, Tx};
use serde_json::json;
use uuid::Uuid;

use super::plan::{self, DerivationPlan, NodeAction};
use crate::error::Error;

/// `uuid5(KITH_NS, "edge:group:v1:{claim}:{member}")`: a group-member link.
pub fn group_edge_id(claim: Uuid, member: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:group:v1:{claim}:{member}"))
}

/// What one pass of [`link_groups`] wrote: the body of its journal record.
#[derive(Debug, Default)]
struct Written {
    /// The owner entity, if this pass created it.
    owner_entity: Option<Node>,
    /// The links inserted.
    edges: Vec<Edge>,
    /// Merged repeats: the retired claim before, and the claim after.
    merged: Vec<(Node, Node)>,
}

impl Written {
    fn is_empty(&self) -> bool {
        self.owner_entity.is_none() && self.edges.is_empty() && self.merged.is_empty()
    }
}

/// `uuid5(KITH_NS, "op:group-links:v1:{event_id}:{revision}:{digest}")`
/// where digest covers the ids written, so a later pass that writes more
/// (e.g. a reingest after the option was turned on) gets its own record.
fn group_op_id(event: Uuid, revision: u32, written: &Written) -> Uuid {
    let mut ids: Vec<String> = written
        .edges
        .iter()
        .map(|e| e.id.to_string())
        .chain(written.merged.iter().map(|(old, _)| old.id.to_string()))
        .chain(written.owner_entity.iter().map(|n| n.id.to_string()))
        .collect();
    ids.sort();
    let digest = &kith_core::canon::sha256_hex(ids.join(",").as_bytes())[..16];
    ids::v5_name(&format!("op:group-links:v1:{event}:{revision}:{digest}"))
}

/// Links the plan's we-claims and journals what it wrote (one
/// `GROUP_LINKED` record); returns how many links it wrote.
pub(super) fn link_groups(
    tx: &mut dyn Tx,
    event: &Event,
    derivation: &DerivationPlan,
    options: &IdentityOptions,
    first_person_owner: bool,
) -> Result<usize, Error> {
    let mut written = Written::default();
    link_groups_into(
        tx,
        event,
        derivation,
        options,
        first_person_owner,
        &mut written,
    )?;
    if written.is_empty() {
        return Ok(0);
    }
    let merged: Vec<serde_json::Value> = written
        .merged
        .iter()
        .map(|(before, after)| json!({"retired": before, "into": after.id}))
        .collect();
    let op = Operation::new(
        group_op_id(event.id, derivation.revision, &written),
        OperationKind::GroupLinked,
        event.owner_id.clone(),
        event.scope.clone(),
        Some(event.id),
        json!({
            "event_id": event.id,
            "plan_revision": derivation.revision,
            "owner_entity_created": written.owner_entity,
            "edges": written.edges,
            "merged": merged,
        }),
        event.ingested_at,
    );
    tx.append_operation(&op)?;
    Ok(written.edges.len())
}

fn link_groups_into(
    tx: &mut dyn Tx,
    event: &Event,
    derivation: &DerivationPlan,
    options: &IdentityOptions,
    first_person_owner: bool,
    written: &mut Written,
) -> Result<(), Error> {
    if !(options.owner_group_links && options.owner_name_carry && options.speaker_references)
        || event.role != Role::User
        || first_person_owner
    {
        return Ok(());
    }
    let we = plan::reference_entity_id(event.id, "we");
    let we_claims: Vec<&Node> = derivation
        .nodes
        .iter()
        .filter(|p| {
            p.action == NodeAction::Create && p.node.node_type != kith_core::NodeType::Entity
        })
        .map(|p| &p.node)
        .filter(|n| {
            derivation.edges.iter().any(|e| {
                (e.edge_type == EdgeType::HasFact && e.source_id == we && e.target_id == n.id)
                    || (e.edge_type == EdgeType::Mentions
                        && e.source_id == n.id
                        && e.target_id == we)
            })
        })
        .collect();
    if we_claims.is_empty() {
        return Ok(());
    }
    // The rules of the policy the plan was prepared under.
    let policy = Policy::from_record(Some(&derivation.policy))?;
    let Some(owner) = owner_entity(tx, event, policy, written)? else {
        return Ok(());
    };
    let (texts, ids) = session_turns(tx, event)?;
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let members = match groups::group_members_under(&texts, policy) {
        Members::Named(named) => {
            let found = resolve_members(tx, event, named, &ids, policy)?;
            groups::link_members(found, policy)
        }
        Members::OwnerOnly => Vec::new(),
    };
    for claim in &we_claims {
        link(
            tx,
            event,
            claim.id,
            owner,
            json!({"basis": "group_member", "role": "speaker"}),
            written,
        )?;
        for (member, named_in) in &members {
            if *member == owner {
                continue;
            }
            let meta = json!({"basis": "group_member", "named_in": named_in.to_string()});
            link(tx, event, claim.id, *member, meta, written)?;
        }
        if options.claim_merge {
            merge_repeats(tx, event, claim.id, owner, written)?;
        }
    }
    Ok(())
}

/// The owner's entity for this turn: its own speaker's person entity
/// (created, marked with the owner's name, if no claim made it yet), else
/// the newest person a user turn created under the owner's name. Under
/// `kith_ingest_v4` an untyped entity of the speaker's name is their node
/// (one person, one node); it is linked as it is, and typed `person` by the
/// first plan that binds the speaker to it.
fn owner_entity(
    tx: &mut dyn Tx,
    event: &Event,
    policy: Policy,
    written: &mut Written,
) -> Result<Option<Uuid>, Error> {
    let Some(speaker) = &event.speaker else {
        return Ok(super::newest_owner_entity(tx, event)?.map(|n| n.id));
    };
    let name = speaker.as_str().trim();
    let key = name.to_lowercase();
    match plan::live_person(tx, event, &key, policy)? {
        Ok(n) | Err(Some(n)) => return Ok(Some(n.id)),
        Err(None) => {}
    }
    match plan::live_named_entity(tx, &event.owner_id, &event.scope, "person", &key)? {
        Ok(n) => Ok(Some(n.id)),
        Err(id) => {
            let mut node = Node::note_for(event, kith_core::NodeType::Entity);
            node.id = id;
            node.content = name.to_string();
            node.confidence = 0.5;
            node.epistemic_type = kith_core::EpistemicType::Asserted;
            node.metadata = Some(json!({"entity_type": "person", "owner_name": true}));
            tx.insert_node(&node)?;
            written.owner_entity = Some(node);
            Ok(Some(id))
        }
    }
}

/// The user turns by `event`'s speaker among the newest 500 events of its
/// session up to and including `event`, oldest first, with their ids.
fn session_turns(tx: &mut dyn Tx, event: &Event) -> Result<(Vec<String>, Vec<Uuid>), Error> {
    if event.session_id.is_none() {
        return Ok((vec![event.content.clone()], vec![event.id]));
    }
    let events = super::events_through(tx, event, groups::MAX_SESSION_EVENTS)?;
    Ok(events
        .into_iter()
        .filter(|e| e.role == Role::User && e.speaker == event.speaker)
        .map(|e| (e.content, e.id))
        .unzip())
}

/// For each named member, in order, its stored person entity (by
/// [`groups::lookup_names`]: full name, else the rest after a weekday,
/// month or title) with the id of the turn that named it; `None` for a
/// member no person entity has. Whether a `None` cancels the others is the
/// policy's decision ([`groups::link_members`]).
fn resolve_members(
    tx: &mut dyn Tx,
    event: &Event,
    named: Vec<(String, usize)>,
    turn_ids: &[Uuid],
    policy: Policy,
) -> Result<Vec<Option<(Uuid, Uuid)>>, Error> {
    let mut out = Vec::new();
    for (name, index) in named {
        let mut found = None;
        for candidate in groups::lookup_names(&name) {
            let key = candidate.trim().to_lowercase();
            // A person's node: typed person, or (kith_ingest_v4) an untyped
            // one a person adopted; a mere mention is no member.
            if let Ok(node) = plan::live_person(tx, event, &key, policy)? {
                found = Some((node.id, turn_ids[index]));
                break;
            }
        }
        out.push(found);
    }
    Ok(out)
}

fn link(
    tx: &mut dyn Tx,
    event: &Event,
    claim: Uuid,
    target: Uuid,
    metadata: serde_json::Value,
    written: &mut Written,
) -> Result<(), Error> {
    let edge = Edge {
        id: group_edge_id(claim, target),
        owner_id: event.owner_id.clone(),
        scope: event.scope.clone(),
        source_id: claim,
        target_id: target,
        edge_type: EdgeType::Mentions,
        confidence: 1.0,
        valid_from: event.effective_time(),
        valid_to: None,
        provenance_event_id: Some(event.id),
        metadata: Some(metadata),
        created_at: event.ingested_at,
    };
    match tx.insert_edge(&edge) {
        Ok(()) => {
            written.edges.push(edge);
            Ok(())
        }
        Err(e) if e.kind() == StoreErrorKind::Conflict => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Merges an earlier copy of the same we-claim, said by the same owner in
/// the same session, into the new claim.
fn merge_repeats(
    tx: &mut dyn Tx,
    event: &Event,
    claim_id: Uuid,
    owner: Uuid,
    written: &mut Written,
) -> Result<(), Error> {
    let Some(mut new) = tx.get_node(claim_id)? else {
        return Ok(());
    };
    // Compare against a snapshot: `new` gains evidence as copies merge in.
    let snapshot = new.clone();
    let Some(new_view) = plan::view_of(&snapshot) else {
        return Ok(());
    };
    let mut merged: Vec<Node> = Vec::new();
    for edge in tx.edges_of(owner)?.into_iter().filter(Edge::is_open) {
        let said_by_owner = edge.edge_type == EdgeType::Mentions
            && edge.target_id == owner
            && edge.source_id != claim_id
            && edge
                .metadata
                .as_ref()
                .is_some_and(|m| m["basis"] == "group_member" && m["role"] == "speaker");
        if !said_by_owner {
            continue;
        }
        let Some(mut old) = tx.get_node(edge.source_id)? else {
            continue;
        };
        if !old.lifecycle.is_active()
            || old.session_id != event.session_id
            || old.evidence_refs.contains(&event.id)
        {
            continue;
        }
        let repeat = plan::view_of(&old).is_some_and(|v| claims::is_repeat(&new_view, &v));
        if !repeat {
            continue;
        }
        let before = old.clone();
        for r in old.evidence_refs.clone() {
            if !new.evidence_refs.contains(&r) {
                let at = new.evidence_refs.len() - 1;
                new.evidence_refs.insert(at, r);
            }
        }
        if let Some(m) = new.metadata.as_mut().and_then(|m| m.as_object_mut()) {
            let list = m.entry("merged_claim_ids").or_insert_with(|| json!([]));
            if let Some(items) = list.as_array_mut() {
                items.push(json!(old.id.to_string()));
            }
        }
        old.lifecycle = Lifecycle::Superseded;
        old.superseded_by = Some(new.id);
        old.valid_to = Some(event.effective_time());
        old.updated_at = event.ingested_at;
        tx.update_node(&old)?;
        link_supersedes(tx, event, new.id, old.id, written)?;
        merged.push(before);
    }
    if !merged.is_empty() {
        tx.update_node(&new)?;
        for before in merged {
            written.merged.push((before, new.clone()));
        }
    }
    Ok(())
}

fn link_supersedes(
    tx: &mut dyn Tx,
    event: &Event,
    new: Uuid,
    old: Uuid,
    written: &mut Written,
) -> Result<(), Error> {
    let edge = Edge {
        id: plan::edge_id(new, EdgeType::Supersedes, old),
        owner_id: event.owner_id.clone(),
        scope: event.scope.clone(),
        source_id: new,
        target_id: old,
        edge_type: EdgeType::Supersedes,
        confidence: 1.0,
        valid_from: event.effective_time(),
        valid_to: None,
        provenance_event_id: Some(event.id),
        metadata: Some(json!({"basis": "group_member"})),
        created_at: event.ingested_at,
    };
    match tx.insert_edge(&edge) {
        Ok(()) => {
            written.edges.push(edge);
            Ok(())
        }
        Err(e) if e.kind() == StoreErrorKind::Conflict => Ok(()),
        Err(e) => Err(e.into()),
    }
}
