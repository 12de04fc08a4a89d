//! Provenance-based corrections (spec 000: "doing so requires an explicit
//! provenance-based correction"): which links move when a caller says that
//! some of an entity's claims belong to someone else.
//!
//! The caller names the evidence: either the claims themselves (rebind a
//! claim's subject), or the events whose claims and mentions belong to the
//! other side (split an identity that was wrongly merged). The decision is
//! the set of open links between the entity and those claims — its
//! HAS_FACT edges to them (it is their subject) and their MENTIONS edges to
//! it (it is their object) — that move to the other entity. Nothing else
//! moves: a claim's other links, the entity's aliases and merges stay.

use std::collections::BTreeSet;

use kith_core::{Edge, EdgeType, Lifecycle, Node, NodeType, Timestamp};
use serde_json::json;
use uuid::Uuid;

/// Which of the entity's claims the correction is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These claims (each must be linked to the entity).
    Claims(Vec<Uuid>),
    /// Every claim linked to the entity whose evidence includes one of these
    /// events.
    Events(Vec<Uuid>),
}

/// Why a correction cannot be made; the engine turns each into a typed,
/// readable error and writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The selection is empty.
    NothingNamed,
    /// A named claim is not linked to the entity by an open link.
    NotLinked(Uuid),
    /// The named events select no claim of the entity.
    NoClaimInEvents,
}

/// The links that move: for each, the open edge to close.
#[derive(Debug, Clone, PartialEq)]
pub struct Moves {
    /// The claims concerned, in the order first seen.
    pub claims: Vec<Uuid>,
    /// The open edges between `entity` and those claims, to be closed and
    /// re-made with the other entity in `entity`'s place.
    pub edges: Vec<Edge>,
}

/// Decides what moves. `edges` are the entity's edges (any state); `claims`
/// the nodes at their other ends (only active claims are considered).
pub fn moves(
    entity: Uuid,
    edges: &[Edge],
    claims: &[Node],
    selection: &Selection,
) -> Result<Moves, Refusal> {
    // The entity's open claim links, by claim.
    let links = |claim: Uuid| -> Vec<&Edge> {
        edges
            .iter()
            .filter(|e| e.is_open())
            .filter(|e| {
                (e.edge_type == EdgeType::HasFact && e.source_id == entity && e.target_id == claim)
                    || (e.edge_type == EdgeType::Mentions
                        && e.target_id == entity
                        && e.source_id == claim)
            })
            .collect()
    };
    let is_claim = |n: &Node| n.node_type != NodeType::Entity && n.node_type != NodeType::Note;
    let chosen: Vec<Uuid> = match selection {
        Selection::Claims(ids) => {
            if ids.is_empty() {
                return Err(Refusal::NothingNamed);
            }
            for id in ids {
                let active = claims
                    .iter()
                    .any(|n| n.id == *id && is_claim(n) && n.lifecycle.is_active());
                if !active || links(*id).is_empty() {
                    return Err(Refusal::NotLinked(*id));
                }
            }
            dedup(ids.iter().copied())
        }
        Selection::Events(events) => {
            if events.is_empty() {
                return Err(Refusal::NothingNamed);
            }
            let wanted: BTreeSet<Uuid> = events.iter().copied().collect();
            let found = dedup(
                claims
                    .iter()
                    .filter(|n| is_claim(n) && n.lifecycle.is_active())
                    .filter(|n| n.evidence_refs.iter().any(|e| wanted.contains(e)))
                    .filter(|n| !links(n.id).is_empty())
                    .map(|n| n.id),
            );
            if found.is_empty() {
                return Err(Refusal::NoClaimInEvents);
            }
            found
        }
    };
    let edges = chosen
        .iter()
        .flat_map(|c| links(*c).into_iter().cloned())
        .collect();
    Ok(Moves {
        claims: chosen,
        edges,
    })
}

fn dedup(ids: impl Iterator<Item = Uuid>) -> Vec<Uuid> {
    let mut seen = BTreeSet::new();
    ids.filter(|id| seen.insert(*id)).collect()
}

/// The person a split creates, named `name`, as a copy of the split
/// `entity` under `id`: tentative, with no evidence of its own yet, and
/// metadata saying where it came from.
pub fn split_person(entity: &Node, id: Uuid, name: &str, op_id: Uuid, now: Timestamp) -> Node {
    let mut n = entity.clone();
    n.id = id;
    n.content = name.to_string();
    n.metadata = Some(json!({
        "entity_type": "person",
        "split_from": entity.id,
        "correction_op_id": op_id,
    }));
    n.lifecycle = Lifecycle::Tentative;
    n.superseded_by = None;
    n.valid_to = None;
    n.evidence_refs = Vec::new();
    n.created_at = now;
    n.updated_at = now;
    n
}

/// A moved claim after the correction: the identity bindings the rules made
/// (`speaker_reference`, `owner_reference`) give way to the correction's
/// record of where it moved from and to.
pub fn rebound_claim(claim: &Node, op_id: Uuid, from: Uuid, to: Uuid, now: Timestamp) -> Node {
    let mut after = claim.clone();
    let md = after.metadata.get_or_insert_with(|| json!({}));
    if let Some(map) = md.as_object_mut() {
        map.remove("speaker_reference");
        map.remove("owner_reference");
        map.insert(
            "correction".into(),
            json!({"op_id": op_id, "from": from, "to": to}),
        );
    }
    after.updated_at = now;
    after
}

/// The link that replaces a moved one: `old` under `id` with `to` in the
/// place of `from`, open from `now`, its metadata saying it is a
/// correction's and which link it replaces.
pub fn reopened_edge(
    old: &Edge,
    id: Uuid,
    from: Uuid,
    to: Uuid,
    op_id: Uuid,
    now: Timestamp,
) -> Edge {
    let mut new = old.clone();
    new.id = id;
    if new.source_id == from {
        new.source_id = to;
    }
    if new.target_id == from {
        new.target_id = to;
    }
    new.valid_from = now;
    new.valid_to = None;
    new.created_at = now;
    let mut md = old.metadata.clone().unwrap_or_else(|| json!({}));
    if let Some(map) = md.as_object_mut() {
        map.insert("basis".into(), json!("correction"));
        map.insert("correction_op_id".into(), json!(op_id));
        map.insert("replaces_edge".into(), json!(old.id));
    }
    new.metadata = Some(md);
    new
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith_core::{EpistemicType, Lifecycle, OwnerId, ScopeId, SourceType, Timestamp};

    fn node(node_type: NodeType, events: &[Uuid]) -> Node {
        let t = Timestamp::parse("t", "2026-01-01T00:00:00Z").unwrap();
        Node {
            id: Uuid::new_v4(),
            owner_id: OwnerId::new("o").unwrap(),
            scope: ScopeId::personal(),
            session_id: None,
            node_type,
            content: "x".into(),
            metadata: None,
            confidence: 0.5,
            lifecycle: Lifecycle::Tentative,
            epistemic_type: EpistemicType::Asserted,
            source_type: SourceType::UserStated,
            valid_from: t,
            valid_to: None,
            event_time: None,
            superseded_by: None,
            evidence_refs: events.to_vec(),
            created_at: t,
            updated_at: t,
        }
    }

    fn edge(source: Uuid, edge_type: EdgeType, target: Uuid) -> Edge {
        let t = Timestamp::parse("t", "2026-01-01T00:00:00Z").unwrap();
        Edge {
            id: Uuid::new_v4(),
            owner_id: OwnerId::new("o").unwrap(),
            scope: ScopeId::personal(),
            source_id: source,
            target_id: target,
            edge_type,
            confidence: 0.9,
            valid_from: t,
            valid_to: None,
            provenance_event_id: None,
            metadata: None,
            created_at: t,
        }
    }

    #[test]
    fn claims_and_events_select_the_open_links_only() {
        let (e1, e2) = (Uuid::new_v4(), Uuid::new_v4());
        let jordan = node(NodeType::Entity, &[e1, e2]);
        let hikes = node(NodeType::Fact, &[e1]);
        let sushi = node(NodeType::Preference, &[e2]);
        let met = node(NodeType::Fact, &[e2]);
        let other = node(NodeType::Fact, &[e2]);
        let mut closed = edge(jordan.id, EdgeType::HasFact, other.id);
        closed.valid_to = Some(Timestamp::parse("t", "2026-02-01T00:00:00Z").unwrap());
        let edges = vec![
            edge(jordan.id, EdgeType::HasFact, hikes.id),
            edge(jordan.id, EdgeType::HasFact, sushi.id),
            edge(met.id, EdgeType::Mentions, jordan.id),
            closed,
        ];
        let claims = vec![hikes.clone(), sushi.clone(), met.clone(), other.clone()];

        let m = moves(jordan.id, &edges, &claims, &Selection::Events(vec![e2])).unwrap();
        assert_eq!(
            m.claims,
            vec![sushi.id, met.id],
            "the closed link is history"
        );
        assert_eq!(m.edges.len(), 2);

        let m = moves(
            jordan.id,
            &edges,
            &claims,
            &Selection::Claims(vec![hikes.id]),
        )
        .unwrap();
        assert_eq!(m.claims, vec![hikes.id]);
        assert_eq!(m.edges, vec![edges[0].clone()]);

        for (selection, refusal) in [
            (Selection::Claims(vec![]), Refusal::NothingNamed),
            (Selection::Events(vec![]), Refusal::NothingNamed),
            (
                Selection::Claims(vec![other.id]),
                Refusal::NotLinked(other.id),
            ),
            (
                Selection::Claims(vec![jordan.id]),
                Refusal::NotLinked(jordan.id),
            ),
            (
                Selection::Events(vec![Uuid::new_v4()]),
                Refusal::NoClaimInEvents,
            ),
        ] {
            assert_eq!(
                moves(jordan.id, &edges, &claims, &selection),
                Err(refusal),
                "{selection:?}"
            );
        }
    }

    #[test]
    fn a_split_person_is_a_tentative_copy_without_evidence() {
        let entity = node(NodeType::Entity, &[Uuid::new_v4()]);
        let (id, op) = (Uuid::new_v4(), Uuid::new_v4());
        let now = Timestamp::parse("t", "2026-03-01T00:00:00Z").unwrap();
        let p = split_person(&entity, id, "Sam", op, now);
        assert_eq!((p.id, p.content.as_str()), (id, "Sam"));
        assert_eq!(p.lifecycle, Lifecycle::Tentative);
        assert!(p.evidence_refs.is_empty());
        assert_eq!((p.created_at, p.updated_at), (now, now));
        let md = p.metadata.expect("metadata");
        assert_eq!(md["entity_type"], "person");
        assert_eq!(md["split_from"], entity.id.to_string());
        assert_eq!(md["correction_op_id"], op.to_string());
    }

    #[test]
    fn a_rebound_claim_loses_its_identity_bindings_and_names_the_move() {
        let mut claim = node(NodeType::Fact, &[]);
        claim.metadata = Some(serde_json::json!({
            "predicate": "works_at",
            "speaker_reference": {"basis": "speaker"},
            "owner_reference": {"basis": "first_person_owner"},
        }));
        let (op, from, to) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let now = Timestamp::parse("t", "2026-03-01T00:00:00Z").unwrap();
        let after = rebound_claim(&claim, op, from, to, now);
        let md = after.metadata.expect("metadata");
        assert_eq!(md["predicate"], "works_at");
        assert!(md.get("speaker_reference").is_none() && md.get("owner_reference").is_none());
        assert_eq!(md["correction"]["from"], from.to_string());
        assert_eq!(md["correction"]["to"], to.to_string());
        assert_eq!(after.updated_at, now);
    }

    #[test]
    fn a_reopened_edge_points_at_the_target_from_now() {
        let (entity, claim, target) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let old = edge(entity, EdgeType::HasFact, claim);
        let (id, op) = (Uuid::new_v4(), Uuid::new_v4());
        let now = Timestamp::parse("t", "2026-03-01T00:00:00Z").unwrap();
        let new = reopened_edge(&old, id, entity, target, op, now);
        assert_eq!((new.id, new.source_id, new.target_id), (id, target, claim));
        assert_eq!(
            (new.valid_from, new.valid_to, new.created_at),
            (now, None, now)
        );
        let md = new.metadata.expect("metadata");
        assert_eq!(md["basis"], "correction");
        assert_eq!(md["replaces_edge"], old.id.to_string());
        // An inbound link moves its target end.
        let inbound = edge(claim, EdgeType::Mentions, entity);
        let moved = reopened_edge(&inbound, id, entity, target, op, now);
        assert_eq!((moved.source_id, moved.target_id), (claim, target));
    }
}
