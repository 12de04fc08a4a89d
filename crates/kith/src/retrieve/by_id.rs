//! The candidates' nodes and events looked up by id: one many-key store call
//! each (one round trip on a server), keyed for the paths that join them.

use std::collections::HashMap;

use kith_core::{Node, OwnerId};
use kith_store::{StoreError, StoredEvent, Tx};
use uuid::Uuid;

/// `owner`'s nodes among `ids`, by id (missing and other owners' ids absent).
pub(super) fn nodes(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, Node>, StoreError> {
    Ok(tx
        .get_owned_nodes(owner, ids)?
        .into_iter()
        .map(|n| (n.id, n))
        .collect())
}

/// `owner`'s events among `ids`, by id.
pub(super) fn events(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, StoredEvent>, StoreError> {
    Ok(tx
        .get_events(owner, ids)?
        .into_iter()
        .map(|e| (e.event.id, e))
        .collect())
}

/// Events and nodes by id.
pub(super) type EventsAndNodes = (HashMap<Uuid, StoredEvent>, HashMap<Uuid, Node>);

/// `owner`'s events among `event_ids` and nodes among `node_ids`, by id, in
/// one store call (one round trip on a server).
pub(super) fn events_and_nodes(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    event_ids: &[Uuid],
    node_ids: &[Uuid],
) -> Result<EventsAndNodes, StoreError> {
    let (events, nodes) = tx.get_owned_events_and_nodes(owner, event_ids, node_ids)?;
    Ok((
        events.into_iter().map(|e| (e.event.id, e)).collect(),
        nodes.into_iter().map(|n| (n.id, n)).collect(),
    ))
}
