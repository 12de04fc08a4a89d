//! Embeddings in the engine: which model a pack uses, embedding notes as
//! they are written, and rebuilding every vector for another model.
//!
//! One pack holds vectors of one model. The model id and dimension are
//! recorded in the pack manifest when the pack is made; opening a pack with
//! another embedder is refused (`kith rebuild --embeddings` re-embeds every
//! note with the new one). Notes (the stored turns) are embedded as they are
//! written (or, with [`crate::Memory::with_background_embedding`], right
//! after by a worker thread: `backlog`); claims quote their note's
//! sentence, and reach retrieval through the lexical and graph paths.
//! Entities are embedded by the organizer's `alias_resolve` job
//! ([`crate::Memory::embed_entities`]) from their name, type and a short
//! context, so look-alike names can be proposed as aliases; retrieval's
//! vector path leaves entities out unless a caller asks for them.
//!
//! The functions here take the store and the embedder, never the memory:
//! the facade (`memory.rs`) hands them over.

mod backlog;
mod context;
mod entities;
mod notes;

pub(crate) use context::{after_stored, still_newest};
pub use context::{needs_context, turn_vector_text, CONTEXT_WORDS};
pub(crate) use notes::embed_again;

use std::collections::HashSet;
use std::sync::Arc;

use kith_core::event::ValidEvent;
use kith_core::{NodeType, OwnerId};
use kith_embed::Embedder;
use kith_store::{Store, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::error::Error;

pub use backlog::{BackgroundEmbedder, BacklogStatus};

/// Vectors for a batch of events' notes, in the batch's order.
pub(crate) struct NoteVectors {
    pub model: String,
    pub vectors: Vec<Vec<f32>>,
    /// For each input, the stored event its vector was made after (a short
    /// turn's turn before, read from the store before the write
    /// transaction), which the write checks is still the session's newest
    /// ([`context::still_newest`]).
    pub stored_context: Vec<Option<Uuid>>,
}

/// Texts per embedding call: big enough to amortise, small enough to show
/// progress.
pub const EMBED_BATCH: usize = 32;

/// Texts per embedding call when storing: enough for a full batch on every
/// core (the embedder splits a call into batches and runs them in
/// parallel), bounded so that a batch of thousands does not hold all its
/// texts' working memory at once.
const STORE_EMBED_CHUNK: usize = 256;

/// What [`crate::Memory::rebuild_embeddings`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RebuildReport {
    /// The model now in use.
    pub model: String,
    /// Vectors removed first (all, when `all` was asked).
    pub removed: u64,
    /// Notes embedded.
    pub embedded: u64,
}

/// Notes (of `owner`, or of every owner) without a vector of `embedder`'s
/// model: the embedding backlog (0 without an embedder).
pub(crate) fn backlog(
    store: &dyn Store,
    embedder: Option<&dyn Embedder>,
    owner: Option<&OwnerId>,
) -> Result<u64, Error> {
    match embedder {
        Some(e) => notes::count_missing(store, owner, e.model_id()),
        None => Ok(0),
    }
}

/// [`crate::Memory::rebuild_embeddings`]: refused without an embedder.
pub(crate) fn rebuild_embeddings(
    store: &dyn Store,
    embedder: Option<&dyn Embedder>,
    all: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RebuildReport, Error> {
    let embedder = embedder.ok_or_else(|| {
        Error::embedding(
            "this memory has no embedding model; open the pack with one (kith rebuild --embeddings --model minilm)",
        )
    })?;
    rebuild(store, embedder, all, progress)
}

/// [`crate::Memory::check_embedding_model`]: nothing to check without an
/// embedder.
pub(crate) fn check_embedding_model(
    store: &dyn Store,
    embedder: Option<&dyn Embedder>,
) -> Result<(), Error> {
    match embedder {
        Some(embedder) => check_model(store, embedder),
        None => Ok(()),
    }
}

/// [`crate::Memory::embed_entities`] with an embedder whose model was
/// checked (nothing happens without one).
pub(crate) fn embed_entities(
    store: &dyn Store,
    embedder: Option<&dyn Embedder>,
    owner: &OwnerId,
    limit: usize,
) -> Result<usize, Error> {
    match embedder {
        Some(embedder) => entities::embed(store, embedder, owner, limit),
        None => Ok(0),
    }
}

/// Vectors for the notes `valid` will make, in batches of [`EMBED_BATCH`]
/// texts (`None` without an embedder). A short turn's text has the turn
/// before it in front ([`context`]), read from the batch or the store.
pub(crate) fn embed_valid(
    store: &dyn Store,
    embedder: Option<&dyn Embedder>,
    valid: &[ValidEvent],
) -> Result<Option<NoteVectors>, Error> {
    let Some(embedder) = embedder else {
        return Ok(None);
    };
    let short_in_session =
        |v: &ValidEvent| v.event.session_id.is_some() && context::needs_context(&v.event.content);
    let before = if valid.iter().any(short_in_session) {
        let mut tx = store.begin(TxMode::Read)?;
        context::before_new(&mut *tx, valid)?
    } else {
        vec![None; valid.len()]
    };
    let texts: Vec<String> = valid
        .iter()
        .zip(&before)
        .map(|(v, before)| {
            let speaker = v.event.speaker.as_ref().map(|s| s.as_str());
            turn_vector_text(&v.event.content, speaker, before.as_ref())
        })
        .collect();
    let mut vectors = Vec::with_capacity(valid.len());
    for chunk in texts.chunks(STORE_EMBED_CHUNK) {
        let texts: Vec<&str> = chunk.iter().map(String::as_str).collect();
        vectors.extend(embed_checked(embedder, &texts)?);
    }
    // A turn before that is not in the batch was read from the store.
    let in_batch: HashSet<Uuid> = valid.iter().map(|v| v.event.id).collect();
    let stored_context = before
        .iter()
        .map(|b| b.as_ref().map(|e| e.id).filter(|id| !in_batch.contains(id)))
        .collect();
    Ok(Some(NoteVectors {
        model: embedder.model_id().to_string(),
        vectors,
        stored_context,
    }))
}

/// [`crate::Memory::rebuild_embeddings`] over a store and an embedder.
fn rebuild(
    store: &dyn Store,
    embedder: &dyn Embedder,
    all: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RebuildReport, Error> {
    let model = embedder.model_id().to_string();
    let mut report = RebuildReport {
        model: model.clone(),
        ..RebuildReport::default()
    };
    if all {
        report.removed = crate::retry::on_busy("remove the vectors", || {
            let mut tx = store.begin(TxMode::Write)?;
            let removed = tx.delete_embeddings()?;
            tx.commit()?;
            Ok(removed)
        })?;
    }
    let total = {
        let mut tx = store.begin(TxMode::Read)?;
        tx.stats(None)?
            .nodes_by_type
            .iter()
            .filter(|(t, _)| *t == NodeType::Note)
            .map(|(_, n)| *n)
            .sum::<u64>()
    };
    let mut after = 0i64;
    loop {
        let (last, notes) = notes::missing_page(store, None, &model, after)?;
        let Some(last) = last else { break };
        after = last;
        for chunk in notes.chunks(EMBED_BATCH) {
            let chunk: Vec<&kith_core::Node> = chunk.iter().map(|s| &s.node).collect();
            notes::embed_and_save(store, embedder, &chunk)?;
            report.embedded += chunk.len() as u64;
            progress(report.embedded, total);
        }
    }
    Ok(report)
}

/// [`crate::Memory::check_embedding_model`] over a store and an embedder.
fn check_model(store: &dyn Store, embedder: &dyn Embedder) -> Result<(), Error> {
    let mut tx = store.begin(TxMode::Read)?;
    for m in tx.embedding_models()? {
        if m.model != embedder.model_id() || m.dimension != embedder.dimension() {
            return Err(Error::embedding(format!(
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

/// Claims quoted in an entity's vector text at most.
pub(crate) const ENTITY_CONTEXT_CLAIMS: usize = 2;
/// Characters of context in an entity's vector text at most.
const ENTITY_CONTEXT_CHARS: usize = 240;

/// The text an entity's vector is made from: its name, its type and a
/// short context (up to two of its claims, at most 240 characters), as
/// `Jordan Lee (person): Jordan Lee moved to Berlin.`. The context keeps
/// two people who only share a first name apart; the name leads, so two
/// spellings of one name land close.
pub fn entity_vector_text(name: &str, entity_type: Option<&str>, context: &[String]) -> String {
    let mut text = match entity_type {
        Some(t) if !t.trim().is_empty() => format!("{} ({})", name.trim(), t.trim()),
        _ => name.trim().to_string(),
    };
    let context: String = context
        .join(" ")
        .chars()
        .take(ENTITY_CONTEXT_CHARS)
        .collect();
    if !context.trim().is_empty() {
        text.push_str(": ");
        text.push_str(context.trim());
    }
    text
}

/// A turn with its speaker (`Caroline: I went to the support group`), so
/// that "what did Caroline say" lands near Caroline's turns: what a note's
/// vector is made from, after the turn before it when the turn is short
/// ([`turn_vector_text`]).
pub fn vector_text(content: &str, speaker: Option<&str>) -> String {
    match speaker {
        Some(s) if !s.trim().is_empty() => format!("{s}: {content}"),
        _ => content.to_string(),
    }
}

/// An embedder that answered, but not as it promised: the upstream's fault
/// (kind [`crate::ErrorKind::Upstream`]), never the caller's.
fn broken_promise(embedder: &dyn Embedder, what: String) -> Error {
    let source = kith_embed::EmbedError::BadResponse {
        url: embedder.model_id().to_string(),
        reason: format!("returned {what}"),
    };
    Error::Embedding {
        message: format!("{} returned {what}", embedder.model_id()),
        source: Some(source),
    }
}

/// Embeds `texts`, checking the embedder kept its promises (one vector per
/// text, of its dimension, finite).
pub(crate) fn embed_checked(
    embedder: &dyn Embedder,
    texts: &[&str],
) -> Result<Vec<Vec<f32>>, Error> {
    let vectors = embedder.embed(texts).map_err(|e| Error::Embedding {
        message: format!("embedding with {}: {e}", embedder.model_id()),
        source: Some(e),
    })?;
    if vectors.len() != texts.len() {
        return Err(broken_promise(
            embedder,
            format!("{} vectors for {} texts", vectors.len(), texts.len()),
        ));
    }
    for v in &vectors {
        if v.len() != embedder.dimension() || v.iter().any(|x| !x.is_finite()) {
            return Err(broken_promise(
                embedder,
                format!(
                    "a vector of length {} (expected {}) or with a non-finite value",
                    v.len(),
                    embedder.dimension()
                ),
            ));
        }
    }
    Ok(vectors)
}

/// A shared embedder handle.
pub type SharedEmbedder = Arc<dyn Embedder>;

/// The embedding model a pack or a command asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbeddingSpec {
    /// No vectors: lexical and graph retrieval only.
    None,
    /// all-MiniLM-L6-v2 on the CPU (the default).
    MiniLm,
    /// Feature hashing with this many dimensions: for tests only.
    Hashing(usize),
    /// An OpenAI-compatible `/v1/embeddings` endpoint (`KITH_EMBEDDING_*`).
    OpenAi,
}

impl EmbeddingSpec {
    /// Parses `none`, `minilm` (or its model id), `hashing-N` (or
    /// `kith/hashing-v1-N`), `openai` (or `openai:MODEL`).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("none") {
            return Ok(EmbeddingSpec::None);
        }
        if t.eq_ignore_ascii_case("minilm") || t == kith_embed::MINILM_MODEL_ID {
            return Ok(EmbeddingSpec::MiniLm);
        }
        if t == "openai" || t.starts_with("openai:") {
            return Ok(EmbeddingSpec::OpenAi);
        }
        let dims = t
            .strip_prefix("kith/hashing-v1-")
            .or_else(|| t.strip_prefix("hashing-"));
        if let Some(d) = dims.and_then(|d| d.parse::<usize>().ok()) {
            if (1..=4096).contains(&d) {
                return Ok(EmbeddingSpec::Hashing(d));
            }
        }
        Err(Error::Request(format!(
            "unknown embedding model {text:?}; use minilm, none, openai or hashing-N (tests only)"
        )))
    }

    /// Loads the embedder (`None` for [`EmbeddingSpec::None`]). MiniLM's
    /// files are found as `kith_embed::MiniLm::locate` says; when missing,
    /// the error says how to install them.
    pub fn load(&self) -> Result<Option<Arc<dyn Embedder>>, Error> {
        let err = |e: kith_embed::EmbedError| Error::Embedding {
            message: e.to_string(),
            source: Some(e),
        };
        Ok(match self {
            EmbeddingSpec::None => None,
            EmbeddingSpec::MiniLm => Some(Arc::new(kith_embed::MiniLm::open(None).map_err(err)?)),
            EmbeddingSpec::Hashing(d) => Some(Arc::new(kith_embed::HashingEmbedder::new(*d))),
            EmbeddingSpec::OpenAi => Some(Arc::new(
                kith_embed::OpenAiEmbedder::from_env().map_err(err)?,
            )),
        })
    }
}

/// An embedder that loads its model on first use, so commands that never
/// embed (listing events, `doctor`) do not pay for reading the weights.
pub struct LazyEmbedder {
    spec: EmbeddingSpec,
    model_id: String,
    dimension: usize,
    loaded: std::sync::OnceLock<Result<Arc<dyn Embedder>, String>>,
}

impl LazyEmbedder {
    /// An embedder for `spec` that claims `model_id` and `dimension` (from
    /// the pack manifest) until loaded, and checks them when it loads.
    pub fn new(spec: EmbeddingSpec, model_id: String, dimension: usize) -> Self {
        LazyEmbedder {
            spec,
            model_id,
            dimension,
            loaded: std::sync::OnceLock::new(),
        }
    }

    fn get(&self) -> Result<&Arc<dyn Embedder>, kith_embed::EmbedError> {
        let loaded = self.loaded.get_or_init(|| match self.spec.load() {
            Ok(Some(e)) if e.model_id() == self.model_id && e.dimension() == self.dimension => {
                Ok(e)
            }
            Ok(Some(e)) => Err(format!(
                "the pack records {} (dimension {}) but the model loaded is {} (dimension {})",
                self.model_id,
                self.dimension,
                e.model_id(),
                e.dimension()
            )),
            Ok(None) => Err("no embedding model".to_string()),
            Err(e) => Err(e.to_string()),
        });
        loaded
            .as_ref()
            .map_err(|m| kith_embed::EmbedError::Config(m.clone()))
    }
}

impl Embedder for LazyEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, kith_embed::EmbedError> {
        self.get()?.embed(texts)
    }
}
