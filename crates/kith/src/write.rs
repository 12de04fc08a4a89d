//! Storing messages (`store`, `store_batch`): validating inputs and writing
//! events with their note nodes, and the vectors of those notes, in one
//! transaction.

use std::collections::HashMap;

use kith_core::event::{InputDefaults, ValidEvent};
use kith_core::{ids, EventInput, Node, OwnerId, ScopeId, Timestamp};
use kith_store::{Tx, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::context::Ctx;
use crate::embedding::{still_newest, NoteVectors};
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
    let written = crate::retry::on_busy("store", || {
        let mut tx = ctx.store.begin(TxMode::Write)?;
        let written = write_events(&mut *tx, valid, notes.as_ref())?;
        tx.commit()?;
        Ok(written)
    })?;
    embed_stale(ctx, &written.stale);
    vectors.notes_committed();
    Ok(written.receipts)
}

/// What [`write_events`] wrote.
pub(crate) struct Written {
    /// One per input, in order.
    pub receipts: Vec<StoreReceipt>,
    /// Notes written without their vector, by owner: each is a short turn
    /// embedded after a stored turn that, by the write, was no longer the
    /// one before it (another writer added a turn to the session, or a
    /// forget erased it). [`embed_stale`] embeds them after the commit.
    pub stale: Vec<(OwnerId, Uuid)>,
}

/// Embeds the `stale` notes of a write again, after its commit, from the
/// turns now before them. A failure is logged, not returned: the write has
/// committed, and the notes wait in the embedding backlog
/// (`kith rebuild --embeddings`).
pub(crate) fn embed_stale(ctx: &Ctx<'_>, stale: &[(OwnerId, Uuid)]) {
    let mut by_owner: HashMap<&OwnerId, Vec<Uuid>> = HashMap::new();
    for (owner, id) in stale {
        by_owner.entry(owner).or_default().push(*id);
    }
    for (owner, ids) in by_owner {
        if let Err(e) = crate::embedding::embed_again(ctx.store, ctx.embedder, owner, &ids) {
            tracing::warn!(
                "store: embedding a short turn again after its turn before changed failed: {e}"
            );
        }
    }
}

/// Writes events and their note nodes inside `tx`; an event whose
/// `(owner, source_id)` exists is not written again and its first ids are
/// returned. A short turn's vector made after a stored turn is written only
/// when that turn is still its session's newest ([`Written::stale`]).
pub(crate) fn write_events(
    tx: &mut dyn Tx,
    valid: &[ValidEvent],
    vectors: Option<&NoteVectors>,
) -> Result<Written, Error> {
    let keys: Vec<_> = valid
        .iter()
        .map(|v| (v.event.owner_id.clone(), v.event.source_id.clone()))
        .collect();
    let stored = tx.event_ids_by_sources(&keys)?;
    // The first input of each (owner, source id) in this batch.
    let mut first: HashMap<_, Uuid> = HashMap::new();
    let mut receipts = Vec::with_capacity(valid.len());
    let (mut events, mut nodes, mut embedded) = (Vec::new(), Vec::new(), Vec::new());
    let mut stale = Vec::new();
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
            let current = match (vectors.stored_context[i], &event.session_id) {
                (Some(before), Some(session)) => {
                    still_newest(tx, &event.owner_id, session, before)?
                }
                _ => true,
            };
            if current {
                embedded.push((&event.owner_id, node.id, vectors.vectors[i].as_slice()));
            } else {
                stale.push((event.owner_id.clone(), node.id));
            }
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
    Ok(Written { receipts, stale })
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

#[cfg(test)]
mod tests {
    use kith_store::Store;

    use super::*;
    use crate::embedding::embed_valid;
    use crate::testing::{hashing, mayas_turn, on_both_backends, tombstone, Backend};

    fn short_turn(text: &str) -> ValidEvent {
        validate_all(vec![mayas_turn(text)]).unwrap().remove(0)
    }

    /// Embeds "Sure thing." after the stored "Want to see my new flat?",
    /// lets `meanwhile` change the session before the write (as another
    /// writer or a forget would, between the two transactions), then
    /// writes it with that vector: returns the write and whether the note
    /// got a vector.
    fn race(backend: Backend, meanwhile: impl FnOnce(&dyn Store, &ValidEvent)) -> (Written, bool) {
        let (written, has_vector, _) = race_then_embed_again(backend, meanwhile);
        (written, has_vector)
    }

    /// The reply's vector after it was embedded again, and the vector of
    /// the reply alone.
    type Again = (Vec<f32>, Vec<f32>);

    /// [`race`], then the stale notes embedded again as the store path does
    /// after its commit: also returns the reply's vector then, beside the
    /// vector of the reply alone.
    fn race_then_embed_again(
        backend: Backend,
        meanwhile: impl FnOnce(&dyn Store, &ValidEvent),
    ) -> (Written, bool, Option<Again>) {
        let opened = backend.open();
        let store = &*opened.store;
        let embedder = hashing();
        let write = |valid: &[ValidEvent], vectors: Option<&NoteVectors>| {
            let mut tx = store.begin(TxMode::Write).unwrap();
            let written = write_events(&mut *tx, valid, vectors).unwrap();
            tx.commit().unwrap();
            written
        };
        let asked = [short_turn("Want to see my new flat?")];
        let v = embed_valid(store, Some(&*embedder), &asked).unwrap();
        write(&asked, v.as_ref());

        let reply = [short_turn("Sure thing.")];
        let v = embed_valid(store, Some(&*embedder), &reply)
            .unwrap()
            .unwrap();
        assert_eq!(v.stored_context, vec![Some(asked[0].event.id)]);
        meanwhile(store, &asked[0]);
        let written = write(&reply, Some(&v));
        let node = written.receipts[0].node_id;
        let has_vector = store
            .begin(TxMode::Read)
            .unwrap()
            .get_embedding(node)
            .unwrap()
            .is_some();
        let owner = OwnerId::new("o").unwrap();
        let ids: Vec<Uuid> = written.stale.iter().map(|(_, id)| *id).collect();
        crate::embedding::embed_again(store, Some(&*embedder), &owner, &ids).unwrap();
        let again = store
            .begin(TxMode::Read)
            .unwrap()
            .get_embedding(node)
            .unwrap();
        let alone = embedder.embed(&["Maya: Sure thing."]).unwrap().remove(0);
        (written, has_vector, again.map(|(_, v)| (v, alone)))
    }

    fn a_short_turns_vector_is_written_when_its_turn_before_is_still_the_newest(b: Backend) {
        let (written, has_vector) = race(b, |_, _| {});
        assert!(written.stale.is_empty());
        assert!(has_vector);
    }

    fn a_turn_before_forgotten_meanwhile_never_reaches_a_vector(b: Backend) {
        let (written, has_vector) = race(b, |store, asked| tombstone(store, asked.event.id));
        assert_eq!(written.stale.len(), 1);
        assert!(
            !has_vector,
            "the vector made with the forgotten turn was written"
        );
    }

    fn after_the_commit_the_stale_turn_is_embedded_from_what_is_before_it_now(b: Backend) {
        let (_, _, again) =
            race_then_embed_again(b, |store, asked| tombstone(store, asked.event.id));
        let (vector, alone) = again.expect("embedded again");
        assert_eq!(
            vector, alone,
            "embedded alone: the turn before is forgotten"
        );
    }

    fn a_turn_added_meanwhile_by_another_writer_makes_the_vector_stale(b: Backend) {
        let (written, has_vector) = race(b, |store, _| {
            let other = [short_turn("Or coffee first?")];
            let mut tx = store.begin(TxMode::Write).unwrap();
            write_events(&mut *tx, &other, None).unwrap();
            tx.commit().unwrap();
        });
        assert_eq!(written.stale.len(), 1);
        assert!(!has_vector);
    }

    on_both_backends!(
        a_short_turns_vector_is_written_when_its_turn_before_is_still_the_newest,
        a_turn_before_forgotten_meanwhile_never_reaches_a_vector,
        after_the_commit_the_stale_turn_is_embedded_from_what_is_before_it_now,
        a_turn_added_meanwhile_by_another_writer_makes_the_vector_stale,
    );
}
