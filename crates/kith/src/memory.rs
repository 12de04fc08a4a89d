//! [`Memory`]: the engine facade over one store.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kith_embed::Embedder;
use kith_extract::heuristic::HeuristicExtractor;
use kith_extract::Provider;

use kith_core::event::{InputDefaults, ValidEvent};
use kith_core::{ids, EventInput, Node, OwnerId, ScopeId, Timestamp};
use kith_store::sqlite::{OpenMode, SqliteStore};
use kith_store::{EventQuery, NodeQuery, Stats, Store, StoredEvent, StoredNode, Tx, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::error::Error;
use crate::pack::{self, Manifest};

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

/// Long-term memory over one store: a pack directory, a PostgreSQL
/// database ([`Memory::connect`]), or any [`Store`].
pub struct Memory {
    store: Arc<dyn Store>,
    pack: Option<(PathBuf, Manifest)>,
    /// The PostgreSQL URL (password hidden) when this memory is a server
    /// database.
    database: Option<String>,
    provider: Arc<dyn Provider>,
    /// The lease set with [`Memory::with_lease`]; `None`: sized from the
    /// provider ([`Memory::lease`]).
    lease: Option<Duration>,
    identity: kith_identity::IdentityOptions,
    embedder: Option<Arc<dyn Embedder>>,
    /// Set once the store was found to hold no vectors of another model
    /// than `embedder`'s (checked on first use, not on every call).
    model_checked: std::sync::OnceLock<()>,
    /// How long retrieval receipts are kept (applied as each is written).
    pub(crate) retention: crate::retrieve::retention::ReceiptRetention,
    /// The background embedding worker, when notes are acknowledged before
    /// their vectors exist ([`Memory::with_background_embedding`]).
    pub(crate) background: Option<crate::embedding::BackgroundEmbedder>,
}

impl Memory {
    /// Creates a new pack at `dir` (which must be missing or empty).
    pub fn init(dir: &Path) -> Result<Memory, Error> {
        let manifest = pack::create(dir)?;
        let store = SqliteStore::open(&dir.join(&manifest.database), OpenMode::CreateIfMissing)?;
        Ok(Memory::assemble(
            Box::new(store),
            Some((dir.to_path_buf(), manifest)),
        ))
    }

    /// Creates a new pack at `dir` whose notes are embedded with
    /// `embedder`; the manifest records its model id and dimension.
    pub fn init_with_embedder(dir: &Path, embedder: Arc<dyn Embedder>) -> Result<Memory, Error> {
        let mut memory = Memory::init(dir)?;
        if let Some((dir, manifest)) = &mut memory.pack {
            manifest.embedding_model = Some(embedder.model_id().to_string());
            manifest.embedding_dimension = Some(embedder.dimension() as u32);
            pack::write_manifest(dir, manifest)?;
        }
        Ok(memory.with_embedder(embedder))
    }

    /// Opens the pack at `dir`, migrating an older format. The embedding
    /// model its manifest records is loaded on first use.
    pub fn open(dir: &Path) -> Result<Memory, Error> {
        Memory::open_with(dir, OpenMode::MustExist)
    }

    /// Opens the pack at `dir` for reading only: nothing is migrated or
    /// written (a write fails, naming the pack), and a pack on read-only
    /// storage can be read. For commands that only read.
    pub fn open_read_only(dir: &Path) -> Result<Memory, Error> {
        Memory::open_with(dir, OpenMode::ReadOnly)
    }

    fn open_with(dir: &Path, mode: OpenMode) -> Result<Memory, Error> {
        let (manifest, db) = pack::open(dir)?;
        let store = SqliteStore::open(&db, mode)?;
        let embedder = match (&manifest.embedding_model, manifest.embedding_dimension) {
            (Some(model), Some(dim)) => {
                let spec = crate::embedding::EmbeddingSpec::parse(model)?;
                Some(Arc::new(crate::embedding::LazyEmbedder::new(
                    spec,
                    model.clone(),
                    dim as usize,
                )) as Arc<dyn Embedder>)
            }
            _ => None,
        };
        let mut memory = Memory::assemble(Box::new(store), Some((dir.to_path_buf(), manifest)));
        memory.embedder = embedder;
        Ok(memory)
    }

    /// Switches the pack to `embedder` (recorded in the manifest) and
    /// re-embeds every note with it; `None` turns vectors off and removes
    /// them. `progress(done, total)` follows the re-embedding.
    pub fn switch_embedder(
        &mut self,
        embedder: Option<Arc<dyn Embedder>>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<crate::RebuildReport, Error> {
        // The worker would keep embedding with the old model.
        self.background = None;
        self.embedder = embedder;
        self.model_checked = std::sync::OnceLock::new();
        if let Some((dir, manifest)) = &mut self.pack {
            manifest.embedding_model = self.embedder.as_ref().map(|e| e.model_id().to_string());
            manifest.embedding_dimension = self.embedder.as_ref().map(|e| e.dimension() as u32);
            pack::write_manifest(dir, manifest)?;
        }
        if self.database.is_some() {
            crate::retry::on_busy("record the embedding model", || {
                let mut tx = self.store.begin(TxMode::Write)?;
                crate::database::write_model(&mut *tx, self.embedder.as_deref())?;
                tx.commit()?;
                Ok(())
            })?;
        }
        match self.embedder {
            Some(_) => self.rebuild_embeddings(true, progress),
            None => {
                let removed = crate::retry::on_busy("remove the vectors", || {
                    let mut tx = self.store.begin(TxMode::Write)?;
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
        }
    }

    /// Wraps any store (tests, other backends).
    pub fn with_store(store: Box<dyn Store>) -> Memory {
        Memory::assemble(store, None)
    }

    fn assemble(store: Box<dyn Store>, pack: Option<(PathBuf, Manifest)>) -> Memory {
        Memory {
            store: Arc::from(store),
            pack,
            database: None,
            provider: Arc::new(HeuristicExtractor::default()),
            lease: None,
            identity: kith_identity::IdentityOptions::default(),
            embedder: None,
            model_checked: std::sync::OnceLock::new(),
            retention: crate::retrieve::retention::ReceiptRetention::default(),
            background: None,
        }
    }

    /// Uses `provider` for `ingest()` from now on (the default is the
    /// offline heuristic extractor).
    pub fn with_provider(mut self, provider: Arc<dyn Provider>) -> Memory {
        self.provider = provider;
        self
    }

    /// Sets how long a process holds a work item before another may take
    /// it, instead of sizing it from the provider ([`Memory::lease`]).
    pub fn with_lease(mut self, lease: Duration) -> Memory {
        self.lease = Some(lease);
        self
    }

    /// Sets which identity rules `ingest()` applies (default: all on).
    pub fn with_identity(mut self, options: kith_identity::IdentityOptions) -> Memory {
        self.identity = options;
        self
    }

    /// Embeds every new note with `embedder` from now on, and lets
    /// `retrieve` search by vector. Vectors of one model only: see
    /// [`Memory::rebuild_embeddings`] to change models.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Memory {
        // A background worker embeds with the embedder it started with.
        self.background = None;
        self.embedder = Some(embedder);
        self.model_checked = std::sync::OnceLock::new();
        self
    }

    /// The embedder, when vectors are on.
    pub fn embedder(&self) -> Option<&dyn Embedder> {
        self.embedder.as_deref()
    }

    /// A shared handle on the embedder, for the background worker.
    pub(crate) fn embedder_shared(&self) -> Option<Arc<dyn Embedder>> {
        self.embedder.clone()
    }

    /// The embedder, after checking (once) that the store holds no vectors
    /// of another model: they would never be compared (searches are per
    /// model), but a pack half on one model and half on another finds
    /// only half of itself.
    pub(crate) fn checked_embedder(&self) -> Result<Option<&dyn Embedder>, Error> {
        if self.embedder.is_some() && self.model_checked.get().is_none() {
            self.check_embedding_model()?;
            let _ = self.model_checked.set(());
        }
        Ok(self.embedder.as_deref())
    }

    /// The identity rules in force.
    pub fn identity_options(&self) -> kith_identity::IdentityOptions {
        self.identity
    }

    /// The extraction provider.
    pub fn provider(&self) -> &dyn Provider {
        self.provider.as_ref()
    }

    /// How long a process holds a work item before another may take it
    /// over: the lease set with [`Memory::with_lease`], else the provider's
    /// worst case (extraction and pronoun repair, each with every timeout
    /// and retry) plus [`crate::ingest::LEASE_MARGIN`], and never less than
    /// [`crate::ingest::DEFAULT_LEASE`]. A lease shorter than an extraction
    /// let a second `kith process` call the LLM again for a live item.
    pub fn lease(&self) -> Duration {
        if let Some(lease) = self.lease {
            return lease;
        }
        match self.provider.worst_case() {
            Some(one_call) => one_call
                .saturating_mul(2)
                .saturating_add(crate::ingest::LEASE_MARGIN)
                .max(crate::ingest::DEFAULT_LEASE),
            None => crate::ingest::DEFAULT_LEASE,
        }
    }

    /// The pack's manifest, when this memory is a pack.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.pack.as_ref().map(|(_, m)| m)
    }

    /// The pack's directory, when this memory is a pack.
    pub fn pack_dir(&self) -> Option<&Path> {
        self.pack.as_ref().map(|(d, _)| d.as_path())
    }

    /// The PostgreSQL database's URL (password hidden), when this memory
    /// is one.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_deref()
    }

    pub(crate) fn set_database(&mut self, shown_url: String) {
        self.database = Some(shown_url);
    }

    /// The store, for layers built on the facade.
    pub fn store_backend(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// A shared handle on the store, for work that outlives a call (the
    /// background embedding worker).
    pub(crate) fn store_shared(&self) -> Arc<dyn Store> {
        Arc::clone(&self.store)
    }

    /// Stores one message: the event and its note node (with its lexical
    /// row) in one transaction. `input.owner_id` is required. The same
    /// `(owner, source_id)` again returns the first ids and writes nothing.
    pub fn store(&self, input: EventInput) -> Result<StoreReceipt, Error> {
        let mut receipts = self.store_batch(vec![input])?;
        Ok(receipts.remove(0))
    }

    /// Stores several messages in one transaction: all are validated first,
    /// and either every new one is written or none is.
    pub fn store_batch(&self, inputs: Vec<EventInput>) -> Result<Vec<StoreReceipt>, Error> {
        self.write_valid(&validate_all(inputs)?)
    }

    /// Writes already validated events in one transaction.
    pub(crate) fn write_valid(&self, valid: &[ValidEvent]) -> Result<Vec<StoreReceipt>, Error> {
        // Embedding happens before the write lock is taken, and the vectors
        // commit with their notes: an acknowledged note is searchable by
        // vector at once, and a crash leaves no note half-indexed.
        let vectors = self.embed_events(valid)?;
        // Idempotent on retry: events are keyed by (owner, source_id).
        let receipts = crate::retry::on_busy("store", || {
            let mut tx = self.store.begin(TxMode::Write)?;
            let receipts = write_events(&mut *tx, valid, vectors.as_ref())?;
            tx.commit()?;
            Ok(receipts)
        })?;
        self.notes_committed();
        Ok(receipts)
    }

    /// One event by id, only if it belongs to `owner`.
    pub fn event(&self, owner: &OwnerId, id: Uuid) -> Result<StoredEvent, Error> {
        let mut tx = self.store.begin(TxMode::Read)?;
        match tx.get_event(id)? {
            Some(e) if &e.event.owner_id == owner => Ok(e),
            _ => Err(Error::NotFound {
                what: format!("event {id} of owner {owner}"),
            }),
        }
    }

    /// Events in ingestion order.
    pub fn events(&self, query: &EventQuery) -> Result<Vec<StoredEvent>, Error> {
        let mut tx = self.store.begin(TxMode::Read)?;
        Ok(tx.list_events(query)?)
    }

    /// One node by id, only if it belongs to `owner`.
    pub fn node(&self, owner: &OwnerId, id: Uuid) -> Result<Node, Error> {
        let mut tx = self.store.begin(TxMode::Read)?;
        match tx.get_node(id)? {
            Some(n) if &n.owner_id == owner => Ok(n),
            _ => Err(Error::NotFound {
                what: format!("node {id} of owner {owner}"),
            }),
        }
    }

    /// The claims an entity of `owner` has (targets of its HAS_FACT edges),
    /// current ones first, each with the basis that bound it when a
    /// first-person rule did (`speaker`, `self_introduction`,
    /// `first_person_owner`).
    pub fn entity_claims(
        &self,
        owner: &OwnerId,
        entity: Uuid,
    ) -> Result<Vec<(Node, Option<String>)>, Error> {
        let entity_node = self.node(owner, entity)?;
        let mut tx = self.store.begin(TxMode::Read)?;
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
    pub fn nodes(&self, query: &NodeQuery) -> Result<Vec<StoredNode>, Error> {
        let mut tx = self.store.begin(TxMode::Read)?;
        Ok(tx.list_nodes(query)?)
    }

    /// Counts for one owner, or for the whole store.
    pub fn stats(&self, owner: Option<&OwnerId>) -> Result<Stats, Error> {
        let mut tx = self.store.begin(TxMode::Read)?;
        Ok(tx.stats(owner)?)
    }
}

/// Writes events and their note nodes inside `tx`; an event whose
/// `(owner, source_id)` exists is not written again and its first ids are
/// returned.
pub(crate) fn write_events(
    tx: &mut dyn Tx,
    valid: &[ValidEvent],
    vectors: Option<&crate::embedding::NoteVectors>,
) -> Result<Vec<StoreReceipt>, Error> {
    let mut receipts = Vec::with_capacity(valid.len());
    for v in valid {
        let event = &v.event;
        if let Some(existing) = tx.event_id_by_source(&event.owner_id, &event.source_id)? {
            receipts.push(StoreReceipt {
                event_id: existing,
                node_id: ids::note_node_id(existing),
                created: false,
            });
            continue;
        }
        tx.insert_event(event)?;
        let node = Node::note_for(event, v.node_type);
        tx.insert_node(&node)?;
        if let Some(vectors) = vectors {
            tx.put_embedding(node.id, &vectors.model, &vectors.vectors[receipts.len()])?;
        }
        receipts.push(StoreReceipt {
            event_id: event.id,
            node_id: node.id,
            created: true,
        });
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
