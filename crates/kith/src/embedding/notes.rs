//! Embedding notes that are already stored: the pages of notes without a
//! vector, their texts, and writing their vectors. Shared by `rebuild
//! --embeddings` and the background worker ([`super::backlog`]).

use kith_core::{NodeType, OwnerId};
use kith_embed::Embedder;
use kith_store::{Store, StoredNode, TxMode};

use super::{embed_checked, vector_text};
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

/// Embeds `notes` (their turn with its speaker, as at store time) and saves
/// the vectors in one write transaction. Saving replaces, so embedding a
/// note twice (two workers, a retry) is harmless.
pub(crate) fn embed_and_save(
    store: &dyn Store,
    embedder: &dyn Embedder,
    notes: &[StoredNode],
) -> Result<(), Error> {
    if notes.is_empty() {
        return Ok(());
    }
    let texts: Vec<String> = {
        let mut tx = store.begin(TxMode::Read)?;
        let mut texts = Vec::with_capacity(notes.len());
        for s in notes {
            let speaker = match s.node.evidence_refs.first() {
                Some(id) => tx.get_event(*id)?.and_then(|e| e.event.speaker),
                None => None,
            };
            texts.push(vector_text(
                &s.node.content,
                speaker.as_ref().map(|s| s.as_str()),
            ));
        }
        texts
    };
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embed_checked(embedder, &texts)?;
    let model = embedder.model_id();
    crate::retry::on_busy("save vectors", || {
        let mut tx = store.begin(TxMode::Write)?;
        for (s, v) in notes.iter().zip(&vectors) {
            // A note forgotten since it was read has no row to attach to:
            // its vector is not wanted either.
            if tx.get_node(s.node.id)?.is_some() {
                tx.put_embedding(s.node.id, model, v)?;
            }
        }
        tx.commit()?;
        Ok(())
    })
}
