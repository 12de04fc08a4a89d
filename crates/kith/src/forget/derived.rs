//! What goes, and what stays with less evidence, when events are erased.
//!
//! The rules (docs/forget.md says them for users):
//! - A node whose evidence is only erased events goes. Notes are the
//!   simplest case: one event each.
//! - A claim keeps the evidence that is left when a remaining event still
//!   says its quote (`evidence_quote`) word for word; otherwise its text is
//!   an erased message's and it goes, and the older claim it replaced comes
//!   back into force (below). A claim without a quote goes when the event
//!   that made it (the last of its evidence; earlier references are the
//!   events it repeats) is erased.
//! - An entity is only a name. It stays while a remaining event mentions
//!   it: some of its evidence is left, or an edge asserted by a remaining
//!   event links it to a node that stays. A kept entity's evidence becomes
//!   those events, and the description its first (erased) event gave it
//!   is dropped.
//! - An entity an erased turn typed (a person or, since `kith_ingest_v9`,
//!   any kind adopting the untyped mention of its name: `typed_person_by`,
//!   `typed_by`) goes back to the untyped type its id was made under: what
//!   the erased message said it is goes with the message.
//! - A node that a removed node had superseded comes back into force
//!   (tentative, open-ended), and ids of removed nodes are taken out of
//!   kept nodes' `merged_claim_ids` and `supersedes`.
//! - Forgetting a whole owner removes every node of the owner.

use std::collections::{HashMap, HashSet};

use kith_core::{Lifecycle, Node, NodeType, OwnerId, Timestamp};
use kith_store::{NodeQuery, Tx};
use serde_json::Value;
use uuid::Uuid;

use crate::error::Error;

/// Nodes read per page.
const PAGE: usize = 1000;

/// The node changes one forget makes.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Nodes to remove, in creation order.
    pub delete: Vec<Uuid>,
    /// Kept nodes in their new state.
    pub update: Vec<Node>,
}

/// Plans the node changes for erasing `erased` (events of `owner`).
pub(super) fn plan(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    erased: &HashSet<Uuid>,
    whole_owner: bool,
) -> Result<Plan, Error> {
    let nodes = owner_nodes(tx, owner)?;
    if whole_owner {
        return Ok(Plan {
            delete: nodes.iter().map(|n| n.id).collect(),
            update: Vec::new(),
        });
    }
    let (mut gone, entities) = gone_claims(tx, &nodes, erased)?;
    let mentions = entity_mentions(tx, &entities, erased, &mut gone)?;
    let now = Timestamp::now();
    let mut update = Vec::new();
    for n in nodes.iter().filter(|n| !gone.contains(&n.id)) {
        let mut after = kept(n, erased, &gone, mentions.get(&n.id));
        if after != *n {
            after.updated_at = now;
            update.push(after);
        }
    }
    // In creation order, for a stable report.
    let delete = nodes
        .iter()
        .filter(|n| gone.contains(&n.id))
        .map(|n| n.id)
        .collect();
    Ok(Plan { delete, update })
}

/// The claims and notes that go with `erased` (their evidence was only
/// erased events, or no remaining event says their quote), and the
/// entities `erased` events mentioned (decided by [`entity_mentions`]).
fn gone_claims<'n>(
    tx: &mut dyn Tx,
    nodes: &'n [Node],
    erased: &HashSet<Uuid>,
) -> Result<(HashSet<Uuid>, Vec<&'n Node>), Error> {
    let mut gone: HashSet<Uuid> = HashSet::new();
    let mut entities: Vec<&Node> = Vec::new();
    let mut texts: HashMap<Uuid, String> = HashMap::new();
    for n in nodes {
        if !n.evidence_refs.iter().any(|r| erased.contains(r)) {
            continue;
        }
        let remaining: Vec<Uuid> = n
            .evidence_refs
            .iter()
            .filter(|r| !erased.contains(r))
            .copied()
            .collect();
        let quote = n
            .metadata
            .as_ref()
            .and_then(|m| m.get("evidence_quote"))
            .and_then(Value::as_str)
            .filter(|q| !q.trim().is_empty());
        let goes = match (n.node_type, quote) {
            (NodeType::Entity, _) => {
                entities.push(n);
                false
            }
            _ if remaining.is_empty() => true,
            (_, Some(q)) => !said_by_any(tx, &remaining, q, &mut texts)?,
            // Without a quote, the text is its maker's: the last reference.
            (_, None) => n.evidence_refs.last().is_some_and(|r| erased.contains(r)),
        };
        if goes {
            gone.insert(n.id);
        }
    }
    Ok((gone, entities))
}

/// The events that still mention each of `entities`: directly, or through
/// an edge to a node that stays. An entity no remaining event mentions
/// joins `gone`.
fn entity_mentions(
    tx: &mut dyn Tx,
    entities: &[&Node],
    erased: &HashSet<Uuid>,
    gone: &mut HashSet<Uuid>,
) -> Result<HashMap<Uuid, Vec<Uuid>>, Error> {
    let mut mentions: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    for n in entities {
        let mut events: Vec<Uuid> = n
            .evidence_refs
            .iter()
            .filter(|r| !erased.contains(r))
            .copied()
            .collect();
        for edge in tx.edges_of(n.id)? {
            let other = if edge.source_id == n.id {
                edge.target_id
            } else {
                edge.source_id
            };
            if let Some(p) = edge.provenance_event_id {
                if !erased.contains(&p) && !gone.contains(&other) && !events.contains(&p) {
                    events.push(p);
                }
            }
        }
        if events.is_empty() {
            gone.insert(n.id);
        } else {
            mentions.insert(n.id, events);
        }
    }
    Ok(mentions)
}

/// A node that stays, without what came from `erased` events or pointed
/// at `gone` nodes (its updated time left to the caller). `mentions`: the
/// events that still mention it, when it is an entity.
fn kept(
    n: &Node,
    erased: &HashSet<Uuid>,
    gone: &HashSet<Uuid>,
    mentions: Option<&Vec<Uuid>>,
) -> Node {
    let mut after = n.clone();
    if let Some(events) = mentions {
        if n.evidence_refs.first().is_some_and(|r| erased.contains(r)) {
            if let Some(Value::Object(m)) = &mut after.metadata {
                m.remove("description");
            }
        }
        after.evidence_refs = events.clone();
    } else {
        after.evidence_refs.retain(|r| !erased.contains(r));
    }
    untype(&mut after, erased);
    if after.superseded_by.is_some_and(|s| gone.contains(&s)) {
        after.superseded_by = None;
        after.valid_to = None;
        if !after.lifecycle.is_active() {
            after.lifecycle = Lifecycle::Tentative;
        }
    }
    if let Some(Value::Object(m)) = &mut after.metadata {
        for key in ["merged_claim_ids", "supersedes"] {
            if let Some(Value::Array(ids)) = m.get_mut(key) {
                ids.retain(|v| {
                    v.as_str()
                        .and_then(|s| Uuid::parse_str(s).ok())
                        .is_none_or(|id| !gone.contains(&id))
                });
                if ids.is_empty() {
                    m.remove(key);
                }
            }
        }
    }
    after
}

/// Metadata keys naming the turn that typed an untyped entity.
const TYPED_BY: [&str; 2] = ["typed_person_by", "typed_by"];

/// Gives an entity an erased turn typed the untyped type its id was made
/// under (`other` or blank, found by deriving the id again), and drops the
/// key naming that turn.
fn untype(node: &mut Node, erased: &HashSet<Uuid>) {
    let Some(Value::Object(m)) = &mut node.metadata else {
        return;
    };
    let by_erased = |key: &str| {
        m.get(key)
            .and_then(Value::as_str)
            .and_then(|s| Uuid::parse_str(s).ok())
            .is_some_and(|id| erased.contains(&id))
    };
    let Some(key) = TYPED_BY.into_iter().find(|k| by_erased(k)) else {
        return;
    };
    let name = node.content.trim().to_lowercase();
    let id_type = kith_identity::kinds::UNTYPED.iter().find(|ty| {
        (0..=GENERATIONS).any(|generation| {
            crate::ingest::plan::named_entity_id(&node.owner_id, &node.scope, ty, &name, generation)
                == node.id
        })
    });
    if let Some(ty) = id_type {
        m.insert("entity_type".into(), Value::from(*ty));
        m.remove(key);
    }
}

/// How many generations of a retired name [`untype`] looks through.
const GENERATIONS: u32 = 64;

/// Whether one of `events` (remaining, so live) says `quote` word for word.
fn said_by_any(
    tx: &mut dyn Tx,
    events: &[Uuid],
    quote: &str,
    texts: &mut HashMap<Uuid, String>,
) -> Result<bool, Error> {
    for id in events {
        if !texts.contains_key(id) {
            let text = tx
                .get_event(*id)?
                .map(|s| s.event.content)
                .unwrap_or_default();
            texts.insert(*id, text);
        }
        if texts[id].contains(quote) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Every node of `owner`, in creation order.
fn owner_nodes(tx: &mut dyn Tx, owner: &OwnerId) -> Result<Vec<Node>, Error> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = tx.list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            after_seq: after,
            limit: PAGE,
            ..NodeQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        out.extend(page.into_iter().map(|s| s.node));
    }
    Ok(out)
}
