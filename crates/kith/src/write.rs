//! Storing messages (`store`, `store_batch`): validating inputs and writing
//! events with their note nodes, and the vectors of those notes, in one
//! transaction.

use kith_core::event::{InputDefaults, ValidEvent};
use kith_core::{ids, EventInput, Node, ScopeId, Timestamp};
use kith_store::{Tx, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::context::Ctx;
use crate::embedding::NoteVectors;
use crate::error::Error;
use crate::vectors::Vectors;

/// What `store()` returns: the ids of the event and its note node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StoreReceipt {
    /// The event's id.
    pub event_id: Uuid,
    /// The note node's id.
    pub node_id: Uuid,
    /// False when the `(owner, source_id)` was stored before and nothing was
    /// written: the ids are the first call's.
    pub created: bool,
}

/// Stores several messages in one transaction: all are validated first,
/// and either every new one is written or none is.
pub(crate) fn store_batch(
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    inputs: Vec<EventInput>,
) -> Result<Vec<StoreReceipt>, Error> {
    write_valid(ctx, vectors, &validate_all(inputs)?)
}

/// Writes already validated events in one transaction.
pub(crate) fn write_valid(
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    valid: &[ValidEvent],
) -> Result<Vec<StoreReceipt>, Error> {
    // Embedding happens before the write lock is taken, and the vectors
    // commit with their notes: an acknowledged note is searchable by
    // vector at once, and a crash leaves no note half-indexed.
    let notes = vectors.embed_notes(valid)?;
    // Idempotent on retry: events are keyed by (owner, source_id).
    let receipts = crate::retry::on_busy("store", || {
        let mut tx = ctx.store.begin(TxMode::Write)?;
        let receipts = write_events(&mut *tx, valid, notes.as_ref())?;
        tx.commit()?;
        Ok(receipts)
    })?;
    vectors.notes_committed();
    Ok(receipts)
}

/// Writes events and their note nodes inside `tx`; an event whose
/// `(owner, source_id)` exists is not written again and its first ids are
/// returned.
pub(crate) fn write_events(
    tx: &mut dyn Tx,
    valid: &[ValidEvent],
    vectors: Option<&NoteVectors>,
) -> Result<Vec<StoreReceipt>, Error> {
    let keys: Vec<_> = valid
        .iter()
        .map(|v| (v.event.owner_id.clone(), v.event.source_id.clone()))
        .collect();
    let stored = tx.event_ids_by_sources(&keys)?;
    // The first input of each (owner, source id) in this batch.
    let mut first: std::collections::HashMap<_, Uuid> = std::collections::HashMap::new();
    let mut receipts = Vec::with_capacity(valid.len());
    let (mut events, mut nodes, mut embedded) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (v, existing)) in valid.iter().zip(stored).enumerate() {
        let event = &v.event;
        if let Some(existing) = existing.or_else(|| first.get(&keys[i]).copied()) {
            receipts.push(StoreReceipt {
                event_id: existing,
                node_id: ids::note_node_id(existing),
                created: false,
            });
            continue;
        }
        first.insert(keys[i].clone(), event.id);
        let node = Node::note_for(event, v.node_type);
        if let Some(vectors) = vectors {
            // Vectors are in input order, one per input.
            embedded.push((&event.owner_id, node.id, vectors.vectors[i].as_slice()));
        }
        receipts.push(StoreReceipt {
            event_id: event.id,
            node_id: node.id,
            created: true,
        });
        events.push(event.clone());
        nodes.push(node);
    }
    tx.insert_events(&events)?;
    tx.insert_nodes(&nodes)?;
    if let Some(vectors) = vectors {
        // One statement per owner (a batch is usually one owner's): the
        // owner keeps it on one shard of a sharded database.
        let mut owners: Vec<&kith_core::OwnerId> = Vec::new();
        for (owner, _, _) in &embedded {
            if !owners.contains(owner) {
                owners.push(owner);
            }
        }
        for owner in owners {
            let rows: Vec<(Uuid, &[f32])> = embedded
                .iter()
                .filter(|(o, _, _)| *o == owner)
                .map(|(_, id, v)| (*id, *v))
                .collect();
            tx.put_owned_embeddings(owner, &vectors.model, &rows)?;
        }
    }
    Ok(receipts)
}

/// Validates every input (owner required, scope `personal` by default,
/// ingested now); the first invalid one fails the whole call.
pub(crate) fn validate_all(inputs: Vec<EventInput>) -> Result<Vec<ValidEvent>, Error> {
    let defaults = InputDefaults {
        owner_id: None,
        scope: ScopeId::personal(),
        now: Timestamp::now(),
    };
    inputs
        .into_iter()
        .map(|i| i.validate(&defaults).map_err(Error::from))
        .collect()
}

/// Removes every vector (vectors turned off), in its own transaction.
pub(crate) fn remove_vectors(store: &dyn kith_store::Store) -> Result<crate::RebuildReport, Error> {
    let removed = crate::retry::on_busy("remove the vectors", || {
        let mut tx = store.begin(TxMode::Write)?;
        let removed = tx.delete_embeddings()?;
        tx.commit()?;
        Ok(removed)
    })?;
    Ok(crate::RebuildReport {
        model: "none".into(),
        removed,
        embedded: 0,
    })
}
