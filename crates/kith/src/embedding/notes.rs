//! Embedding notes that are already stored: the pages of notes without a
//! vector, their texts, and writing their vectors. Shared by `rebuild
//! --embeddings` and the background worker ([`super::backlog`]).

use std::collections::{HashMap, HashSet};

use kith_core::{Event, Node, NodeType, OwnerId};
use kith_embed::Embedder;
use kith_store::{Store, StoredNode, TxMode};
use uuid::Uuid;

use super::context::before_stored;
use super::{embed_checked, turn_vector_text};
use crate::error::Error;

/// Nodes read per page when looking for notes without a vector.
pub(crate) const PAGE: usize = 256;

/// The next page of nodes (of every type) after `after` that have no vector
/// of `model`, in creation order, and the notes among them.
pub(crate) fn missing_page(
    store: &dyn Store,
    owner: Option<&OwnerId>,
    model: &str,
    after: i64,
) -> Result<(Option<i64>, Vec<StoredNode>), Error> {
    let mut tx = store.begin(TxMode::Read)?;
    let page = tx.nodes_missing_embedding(owner, model, after, PAGE)?;
    let last = page.last().map(|s| s.seq);
    let notes = page
        .into_iter()
        .filter(|s| s.node.node_type == NodeType::Note)
        .collect();
    Ok((last, notes))
}

/// How many notes (of `owner`, or of every owner) have no vector of
/// `model`: the embedding backlog. Reads every node without a vector, so it
/// costs a scan of those, not of the store.
pub(crate) fn count_missing(
    store: &dyn Store,
    owner: Option<&OwnerId>,
    model: &str,
) -> Result<u64, Error> {
    let (mut after, mut count) = (0i64, 0u64);
    loop {
        let (last, notes) = missing_page(store, owner, model, after)?;
        let Some(last) = last else {
            return Ok(count);
        };
        count += notes.len() as u64;
        after = last;
    }
}

/// Embeds `notes` (their turn with its speaker, and the turn before when
/// short, as at store time) and saves
/// the vectors in one write transaction. Saving replaces, so embedding a
/// note twice (two workers, a retry) is harmless.
pub(crate) fn embed_and_save(
    store: &dyn Store,
    embedder: &dyn Embedder,
    notes: &[&Node],
) -> Result<(), Error> {
    if notes.is_empty() {
        return Ok(());
    }
    let (texts, contexts) = vector_texts(store, notes)?;
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embed_checked(embedder, &texts)?;
    save(store, embedder.model_id(), notes, &vectors, &contexts)
}

/// Each note's vector text, and the stored turn it is embedded after (if
/// any), read in one transaction.
fn vector_texts(
    store: &dyn Store,
    notes: &[&Node],
) -> Result<(Vec<String>, Vec<Option<Uuid>>), Error> {
    let mut tx = store.begin(TxMode::Read)?;
    // Each note's turn, read per owner in one call (a rebuild spans
    // owners; one round trip each on a server, not one per note).
    let mut wanted: HashMap<&OwnerId, Vec<Uuid>> = HashMap::new();
    for s in notes {
        if let Some(id) = s.evidence_refs.first() {
            wanted.entry(&s.owner_id).or_default().push(*id);
        }
    }
    // Each turn's speaker and, when it is short, the turn before it
    // (one more read per short turn).
    let mut turns: HashMap<Uuid, (Option<String>, Option<Event>)> = HashMap::new();
    for (owner, ids) in wanted {
        for e in tx.get_events(owner, &ids)? {
            let before = before_stored(&mut *tx, &e)?;
            let speaker = e.event.speaker.map(|s| s.as_str().to_string());
            turns.insert(e.event.id, (speaker, before));
        }
    }
    Ok(notes
        .iter()
        .map(|s| {
            let turn = s.evidence_refs.first().and_then(|id| turns.get(id));
            let speaker = turn.and_then(|t| t.0.as_deref());
            let before = turn.and_then(|t| t.1.as_ref());
            (
                turn_vector_text(&s.content, speaker, before),
                before.map(|b| b.id),
            )
        })
        .unzip())
}

/// Saves `vectors` (one per note, made after `contexts`) in one write
/// transaction, but none of a note forgotten since, nor of one made after
/// a turn forgotten since.
fn save(
    store: &dyn Store,
    model: &str,
    notes: &[&Node],
    vectors: &[Vec<f32>],
    contexts: &[Option<Uuid>],
) -> Result<(), Error> {
    crate::retry::on_busy("save vectors", || {
        let mut tx = store.begin(TxMode::Write)?;
        // Per owner (a rebuild spans owners), one read and one write: a
        // note forgotten since it was read has no row to attach to, and its
        // vector is not wanted either. Nor is one made after a turn
        // forgotten since it was read (one more read, when any is short):
        // the note stays in the backlog and is embedded without it next.
        let mut owners: Vec<&OwnerId> = Vec::new();
        for s in notes {
            if !owners.contains(&&s.owner_id) {
                owners.push(&s.owner_id);
            }
        }
        for owner in owners {
            let ids: Vec<Uuid> = notes
                .iter()
                .filter(|s| &s.owner_id == owner)
                .map(|s| s.id)
                .collect();
            let live: HashSet<Uuid> = tx
                .get_owned_nodes(owner, &ids)?
                .into_iter()
                .map(|n| n.id)
                .collect();
            let before: Vec<Uuid> = notes
                .iter()
                .zip(contexts)
                .filter(|(s, _)| &s.owner_id == owner)
                .filter_map(|(_, c)| *c)
                .collect();
            let live_before: HashSet<Uuid> = if before.is_empty() {
                HashSet::new()
            } else {
                tx.get_events(owner, &before)?
                    .into_iter()
                    .filter(|e| e.tombstone.is_none())
                    .map(|e| e.event.id)
                    .collect()
            };
            let rows: Vec<(Uuid, &[f32])> = notes
                .iter()
                .zip(vectors)
                .zip(contexts)
                .filter(|((s, _), c)| {
                    &s.owner_id == owner
                        && live.contains(&s.id)
                        && c.is_none_or(|c| live_before.contains(&c))
                })
                .map(|((s, v), _)| (s.id, v.as_slice()))
                .collect();
            tx.put_owned_embeddings(owner, model, &rows)?;
        }
        tx.commit()?;
        Ok(())
    })
}

/// Embeds `owner`'s notes `ids` again (those still there), when the
/// memory has an embedder of the store's model: a forget took away the
/// turn a short note was embedded after ([`super::context`]). Returns how
/// many were embedded; without a usable embedder the notes stay without a
/// vector, in the backlog `kith rebuild --embeddings` fills.
pub(crate) fn embed_again(
    store: &dyn Store,
    embedder: Option<&dyn Embedder>,
    owner: &OwnerId,
    ids: &[Uuid],
) -> Result<usize, Error> {
    let Some(embedder) = embedder else {
        return Ok(0);
    };
    if ids.is_empty() || super::check_model(store, embedder).is_err() {
        return Ok(0);
    }
    let nodes = store.begin(TxMode::Read)?.get_owned_nodes(owner, ids)?;
    let notes: Vec<&Node> = nodes.iter().collect();
    embed_and_save(store, embedder, &notes)?;
    Ok(notes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{hashing, mayas_turn, on_both_backends, tombstone, Backend};
    use crate::write::{validate_all, write_events};

    /// The background worker's two transactions with `meanwhile` between
    /// them: "Sure thing." is read after "Want to see my new flat?" and
    /// embedded; returns whether its vector was saved.
    fn worker_race(backend: Backend, meanwhile: impl FnOnce(&dyn Store, Uuid)) -> bool {
        let opened = backend.open();
        let store = &*opened.store;
        let embedder = hashing();
        let valid = validate_all(vec![
            mayas_turn("Want to see my new flat?"),
            mayas_turn("Sure thing."),
        ])
        .unwrap();
        let mut tx = store.begin(TxMode::Write).unwrap();
        let written = write_events(&mut *tx, &valid, None).unwrap();
        tx.commit().unwrap();
        let owner = OwnerId::new("o").unwrap();
        let reply = written.receipts[1].node_id;
        let nodes = store
            .begin(TxMode::Read)
            .unwrap()
            .get_owned_nodes(&owner, &[reply])
            .unwrap();
        let notes: Vec<&Node> = nodes.iter().collect();

        let (texts, contexts) = vector_texts(store, &notes).unwrap();
        assert_eq!(contexts, vec![Some(valid[0].event.id)]);
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = embed_checked(&*embedder, &texts).unwrap();
        meanwhile(store, valid[0].event.id);
        save(store, embedder.model_id(), &notes, &vectors, &contexts).unwrap();
        let saved = store.begin(TxMode::Read).unwrap().get_embedding(reply);
        saved.unwrap().is_some()
    }

    fn the_worker_saves_a_vector_whose_turn_before_is_still_there(b: Backend) {
        assert!(worker_race(b, |_, _| {}));
    }

    fn the_worker_drops_a_vector_made_after_a_turn_forgotten_meanwhile(b: Backend) {
        let saved = worker_race(b, |store, before| tombstone(store, before));
        assert!(!saved, "a vector made with a forgotten turn was saved");
    }

    on_both_backends!(
        the_worker_saves_a_vector_whose_turn_before_is_still_there,
        the_worker_drops_a_vector_made_after_a_turn_forgotten_meanwhile,
    );
}
