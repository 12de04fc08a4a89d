//! Embeddings in the engine: which model a pack uses, embedding notes as
//! they are written, and rebuilding every vector for another model.
//!
//! One pack holds vectors of one model. The model id and dimension are
//! recorded in the pack manifest when the pack is made; opening a pack with
//! another embedder is refused (`kith rebuild --embeddings` re-embeds every
//! note with the new one). Only notes (the stored turns) are embedded: claims
//! quote their note's sentence, and reach retrieval through the lexical and
//! graph paths.

use std::sync::Arc;

use kith_core::event::ValidEvent;
use kith_core::NodeType;
use kith_embed::Embedder;
use kith_store::TxMode;
use serde::Serialize;

use crate::error::Error;
use crate::memory::Memory;

/// Vectors for a batch of events' notes, in the batch's order.
pub(crate) struct NoteVectors {
    pub model: String,
    pub vectors: Vec<Vec<f32>>,
}

/// Texts per embedding call: big enough to amortise, small enough to show
/// progress.
pub const EMBED_BATCH: usize = 32;

/// What [`Memory::rebuild_embeddings`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RebuildReport {
    /// The model now in use.
    pub model: String,
    /// Vectors removed first (all, when `all` was asked).
    pub removed: u64,
    /// Notes embedded.
    pub embedded: u64,
}

impl Memory {
    /// Embeds the contents of `valid` (the notes `write_events` will make).
    pub(crate) fn embed_events(&self, valid: &[ValidEvent]) -> Result<Option<NoteVectors>, Error> {
        let Some(embedder) = self.embedder() else {
            return Ok(None);
        };
        let mut vectors = Vec::with_capacity(valid.len());
        for chunk in valid.chunks(EMBED_BATCH) {
            let texts: Vec<&str> = chunk.iter().map(|v| v.event.content.as_str()).collect();
            vectors.extend(embed_checked(embedder, &texts)?);
        }
        Ok(Some(NoteVectors {
            model: embedder.model_id().to_string(),
            vectors,
        }))
    }

    /// Re-embeds notes with this memory's embedder: every note when `all`
    /// (removing every stored vector first), else only notes without a
    /// vector of the current model. `progress(done, total)` is called after
    /// each batch.
    pub fn rebuild_embeddings(
        &self,
        all: bool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RebuildReport, Error> {
        let embedder = self.embedder().ok_or_else(|| {
            Error::Embedding(
                "this memory has no embedding model; open the pack with one (kith rebuild --embeddings --model minilm)".into(),
            )
        })?;
        let model = embedder.model_id().to_string();
        let mut report = RebuildReport {
            model: model.clone(),
            ..RebuildReport::default()
        };
        if all {
            let mut tx = self.store_backend().begin(TxMode::Write)?;
            report.removed = tx.delete_embeddings()?;
            tx.commit()?;
        }
        let total = {
            let mut tx = self.store_backend().begin(TxMode::Read)?;
            tx.stats(None)?
                .nodes_by_type
                .iter()
                .filter(|(t, _)| *t == NodeType::Note)
                .map(|(_, n)| *n)
                .sum::<u64>()
        };
        let mut after = 0i64;
        loop {
            let batch = {
                let mut tx = self.store_backend().begin(TxMode::Read)?;
                tx.nodes_missing_embedding(None, &model, after, 256)?
            };
            let Some(last) = batch.last() else { break };
            after = last.seq;
            let notes: Vec<_> = batch
                .iter()
                .filter(|s| s.node.node_type == NodeType::Note)
                .collect();
            for chunk in notes.chunks(EMBED_BATCH) {
                let texts: Vec<&str> = chunk.iter().map(|s| s.node.content.as_str()).collect();
                let vectors = embed_checked(embedder, &texts)?;
                let mut tx = self.store_backend().begin(TxMode::Write)?;
                for (s, v) in chunk.iter().zip(&vectors) {
                    tx.put_embedding(s.node.id, &model, v)?;
                }
                tx.commit()?;
                report.embedded += chunk.len() as u64;
                progress(report.embedded, total);
            }
        }
        Ok(report)
    }

    /// Refuses when the store holds vectors of another model than this
    /// memory's embedder (mixing models makes scores meaningless).
    pub fn check_embedding_model(&self) -> Result<(), Error> {
        let Some(embedder) = self.embedder() else {
            return Ok(());
        };
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        for m in tx.embedding_models()? {
            if m.model != embedder.model_id() || m.dimension != embedder.dimension() {
                return Err(Error::Embedding(format!(
                    "the store holds {} vectors of {} (dimension {}), not of {} (dimension {}); \
                     run `kith rebuild --embeddings` to re-embed with the new model",
                    m.vectors,
                    m.model,
                    m.dimension,
                    embedder.model_id(),
                    embedder.dimension()
                )));
            }
        }
        Ok(())
    }
}

/// Embeds `texts`, checking the embedder kept its promises (one vector per
/// text, of its dimension, finite).
pub(crate) fn embed_checked(
    embedder: &dyn Embedder,
    texts: &[&str],
) -> Result<Vec<Vec<f32>>, Error> {
    let vectors = embedder
        .embed(texts)
        .map_err(|e| Error::Embedding(format!("embedding with {}: {e}", embedder.model_id())))?;
    if vectors.len() != texts.len() {
        return Err(Error::Embedding(format!(
            "{} returned {} vectors for {} texts",
            embedder.model_id(),
            vectors.len(),
            texts.len()
        )));
    }
    for v in &vectors {
        if v.len() != embedder.dimension() || v.iter().any(|x| !x.is_finite()) {
            return Err(Error::Embedding(format!(
                "{} returned a vector of length {} (expected {}) or with a non-finite value",
                embedder.model_id(),
                v.len(),
                embedder.dimension()
            )));
        }
    }
    Ok(vectors)
}

/// A shared embedder handle.
pub type SharedEmbedder = Arc<dyn Embedder>;
