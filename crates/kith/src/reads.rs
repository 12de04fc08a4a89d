//! Plain reads by id or query: one event, one node, lists, counts, and an
//! entity's claims; each checks the owner where one is given.

use kith_core::{Node, OwnerId};
use kith_store::{EventQuery, NodeQuery, Stats, StoredEvent, StoredNode, TxMode};
use uuid::Uuid;

use crate::context::Ctx;
use crate::error::Error;

/// One event by id, only if it belongs to `owner`.
pub(crate) fn event(ctx: &Ctx<'_>, owner: &OwnerId, id: Uuid) -> Result<StoredEvent, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    match tx.get_event(id)? {
        Some(e) if &e.event.owner_id == owner => Ok(e),
        _ => Err(Error::NotFound {
            what: format!("event {id} of owner {owner}"),
        }),
    }
}

/// Events in ingestion order.
pub(crate) fn events(ctx: &Ctx<'_>, query: &EventQuery) -> Result<Vec<StoredEvent>, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    Ok(tx.list_events(query)?)
}

/// One node by id, only if it belongs to `owner`.
pub(crate) fn node(ctx: &Ctx<'_>, owner: &OwnerId, id: Uuid) -> Result<Node, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    match tx.get_node(id)? {
        Some(n) if &n.owner_id == owner => Ok(n),
        _ => Err(Error::NotFound {
            what: format!("node {id} of owner {owner}"),
        }),
    }
}

/// The claims an entity of `owner` has (targets of its HAS_FACT edges),
/// current ones first, each with the basis that bound it when a
/// first-person rule did.
pub(crate) fn entity_claims(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    entity: Uuid,
) -> Result<Vec<(Node, Option<String>)>, Error> {
    let entity_node = node(ctx, owner, entity)?;
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let mut out = Vec::new();
    for edge in tx.edges_of(entity_node.id)? {
        if !edge.is_open()
            || edge.edge_type != kith_core::EdgeType::HasFact
            || edge.source_id != entity
        {
            continue;
        }
        if let Some(claim) = tx.get_node(edge.target_id)? {
            let basis = claim.metadata.as_ref().and_then(|m| {
                m.get("speaker_reference")
                    .or_else(|| m.get("owner_reference"))
                    .and_then(|r| r.get("basis"))
                    .and_then(|b| b.as_str())
                    .map(String::from)
            });
            out.push((claim, basis));
        }
    }
    out.sort_by_key(|(n, _)| (!n.lifecycle.is_active(), n.valid_from));
    Ok(out)
}

/// Nodes in creation order.
pub(crate) fn nodes(ctx: &Ctx<'_>, query: &NodeQuery) -> Result<Vec<StoredNode>, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    Ok(tx.list_nodes(query)?)
}

/// Counts for one owner, or for the whole store.
pub(crate) fn stats(ctx: &Ctx<'_>, owner: Option<&OwnerId>) -> Result<Stats, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    Ok(tx.stats(owner)?)
}
