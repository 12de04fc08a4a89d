//! [`Memory`]: the engine facade over one store, and its whole public API.
//!
//! Every public method of `Memory` is here, each a short delegation to the
//! module that does the work, handing it a [`Ctx`] (the store, provider,
//! identity rules, lease), the store and embedder (`embedding`), or, where a
//! stage embeds, the memory as [`Vectors`]: never `&Memory`. No module of the engine names `Memory`
//! (`crates/kith-cli/tests/architecture.rs` checks it), so this file is the
//! one place to read the API, and no import runs back to it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::organize::linking::EntityExtractor;
use kith_core::event::ValidEvent;
use kith_core::{EventInput, Node, Operation, OperationKind, OwnerId};
use kith_embed::Embedder;
use kith_extract::heuristic::HeuristicExtractor;
use kith_extract::Provider;
use kith_store::postgres::PgOptions;
use kith_store::sqlite::{OpenMode, SqliteStore};
use kith_store::{EventQuery, NodeQuery, Stats, Store, StoredEvent, StoredNode};
use kith_store::{WorkItem, WorkStatus};
use std::io::Write;
use uuid::Uuid;

use crate::claims::{self, ClaimEditReport, ClaimFact, ClaimHistory};
use crate::context::Ctx;
use crate::correct::{self, Correction, CorrectionReport};
use crate::doctor::{self, DoctorReport};
use crate::embedding::{self, BackgroundEmbedder, BacklogStatus, NoteVectors};
use crate::error::Error;
use crate::forget::{self, ForgetReport, ForgetRequest};
use crate::ingest::{
    Ingest, IngestOptions, IngestReceipt, ProcessReport, ReingestOutcome, WorkReport,
};
use crate::jsonl::{self, ImportOptions, ImportReport};
use crate::neighbourhood::{self, NodeView, PathReport, PathRequest};
use crate::organize::{
    self, AliasProposal, Decision, Job, JournalQuery, LinkReport, LinkRequest, OrganizeReport,
    OrganizeRequest, ProposeAliasRequest, ProposeOutcome, ReviewOutcome, UndoReport,
};
use crate::pack::{self, Manifest};
use crate::retrieve::retention::{PruneReport, ReceiptRetention};
use crate::retrieve::{self, Retrieval, RetrieveRequest};
use crate::search::{self, SearchHit, SearchRequest};
use crate::vectors::Vectors;
use crate::write::{self, StoreReceipt};
use crate::{database, doctor_deep, overview, reads, RebuildReport};

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
    retention: ReceiptRetention,
    /// The background embedding worker, when notes are acknowledged before
    /// their vectors exist ([`Memory::with_background_embedding`]).
    background: Option<BackgroundEmbedder>,
}

// ---- opening and configuring -------------------------------------------

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
            pack::record_model(dir, manifest, Some(embedder.as_ref()))?;
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
        let embedder = pack::recorded_embedder(&manifest)?;
        let mut memory = Memory::assemble(Box::new(store), Some((dir.to_path_buf(), manifest)));
        memory.embedder = embedder;
        Ok(memory)
    }

    /// Makes a new memory in the PostgreSQL database at `url` (which must
    /// hold no kith memory yet): creates kith's schema, and records
    /// `embedder`'s model id and dimension when given (else no vectors).
    pub fn init_database(url: &str, embedder: Option<Arc<dyn Embedder>>) -> Result<Memory, Error> {
        Memory::init_database_with(url, embedder, PgOptions::from_env()?)
    }

    /// [`Memory::init_database`] with the store configured by `options`
    /// rather than the environment.
    pub fn init_database_with(
        url: &str,
        embedder: Option<Arc<dyn Embedder>>,
        options: PgOptions,
    ) -> Result<Memory, Error> {
        Ok(Memory::on_database(database::init(url, embedder, options)?))
    }

    /// Opens the memory in the PostgreSQL database at `url`, migrating
    /// kith's schema if it is older. The embedding model the database
    /// records is loaded on first use. A database `init_database` did not
    /// make is refused, with the command that makes one.
    ///
    /// The store is configured by `KITH_PG_VECTOR_CACHE` and
    /// `KITH_VECTOR_CACHE_MB` ([`PgOptions::from_env`]); a program that
    /// chooses for itself calls [`Memory::connect_with`].
    pub fn connect(url: &str) -> Result<Memory, Error> {
        Memory::connect_with(url, PgOptions::from_env()?)
    }

    /// [`Memory::connect`] with the store configured by `options`.
    pub fn connect_with(url: &str, options: PgOptions) -> Result<Memory, Error> {
        Ok(Memory::on_database(database::connect(url, options)?))
    }

    fn on_database(opened: database::Opened) -> Memory {
        let mut memory = Memory::with_store(Box::new(opened.store));
        memory.database = Some(opened.shown);
        match opened.embedder {
            Some(e) => memory.with_embedder(e),
            None => memory,
        }
    }

    /// Switches the pack to `embedder` (recorded in the manifest) and
    /// re-embeds every note with it; `None` turns vectors off and removes
    /// them. `progress(done, total)` follows the re-embedding.
    pub fn switch_embedder(
        &mut self,
        embedder: Option<Arc<dyn Embedder>>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RebuildReport, Error> {
        // The worker would keep embedding with the old model.
        self.background = None;
        self.embedder = embedder;
        self.model_checked = std::sync::OnceLock::new();
        if let Some((dir, manifest)) = &mut self.pack {
            pack::record_model(dir, manifest, self.embedder.as_deref())?;
        }
        if self.database.is_some() {
            database::record_model(self.store.as_ref(), self.embedder.as_deref())?;
        }
        match self.embedder {
            Some(_) => self.rebuild_embeddings(true, progress),
            None => write::remove_vectors(self.store.as_ref()),
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
            retention: ReceiptRetention::default(),
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

    /// Applies `retention` to retrieval receipts written from now on (the
    /// default is [`ReceiptRetention::default`]).
    pub fn with_receipt_retention(mut self, retention: ReceiptRetention) -> Memory {
        self.retention = retention;
        self
    }
}

// ---- what this memory is made of ----------------------------------------

impl Memory {
    /// The parts a module function works with, borrowed for one call.
    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            store: self.store.as_ref(),
            provider: self.provider.as_ref(),
            identity: self.identity,
            lease: self.lease(),
            pack_dir: self.pack_dir(),
            embedder: self.embedder.as_deref(),
        }
    }

    /// The ingest stage over this memory.
    fn ingest_stage(&self) -> Ingest<'_> {
        Ingest {
            ctx: self.ctx(),
            vectors: self,
        }
    }

    /// The embedder, when vectors are on.
    pub fn embedder(&self) -> Option<&dyn Embedder> {
        self.embedder.as_deref()
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
        crate::ingest::sized_lease(self.lease, self.provider.as_ref())
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

    /// The retention applied when a retrieval receipt is written.
    pub fn receipt_retention(&self) -> ReceiptRetention {
        self.retention
    }

    /// The store, for layers built on the facade.
    pub fn store_backend(&self) -> &dyn Store {
        self.store.as_ref()
    }
}

/// What stages that embed ask of the memory (its embedder, checked once).
impl Vectors for Memory {
    fn embed_notes(&self, valid: &[ValidEvent]) -> Result<Option<NoteVectors>, Error> {
        // The worker makes the vectors after the commit.
        if self.background.is_some() {
            return Ok(None);
        }
        embedding::embed_valid(self.store.as_ref(), self.checked_embedder()?, valid)
    }

    fn checked_model(&self) -> Result<Option<String>, Error> {
        Ok(self.checked_embedder()?.map(|e| e.model_id().to_string()))
    }

    fn embed_entities(&self, owner: &OwnerId, limit: usize) -> Result<usize, Error> {
        Memory::embed_entities(self, owner, limit)
    }

    fn notes_committed(&self) {
        if let Some(worker) = &self.background {
            worker.notify();
        }
    }
}

// ---- embeddings -----------------------------------------------------------

impl Memory {
    /// Acknowledges `store()` after the durable write, without the note's
    /// vector: a worker thread embeds notes in the background, starting
    /// with every note already stored without a vector (the backlog of a
    /// process that stopped before it finished). Until embedded, a note is
    /// found by every retrieval path but the vector path. Without an
    /// embedder, or on a read-only store, nothing changes. Call it after
    /// choosing the embedder ([`Memory::with_embedder`] stops the worker).
    pub fn with_background_embedding(mut self) -> Result<Memory, Error> {
        self.background = None;
        if self.store.is_read_only() {
            return Ok(self);
        }
        if let Some(embedder) = self.embedder.clone() {
            self.checked_embedder()?;
            let store = Arc::clone(&self.store);
            self.background = Some(BackgroundEmbedder::start(store, embedder)?);
        }
        Ok(self)
    }

    /// The background worker's progress and last failure, when background
    /// embedding is on.
    pub fn background_embedding(&self) -> Option<BacklogStatus> {
        self.background.as_ref().map(BackgroundEmbedder::status)
    }

    /// Blocks until the background worker has embedded every note committed
    /// before the call (at once without background embedding); returns the
    /// embedder's error if it fails meanwhile.
    pub fn wait_for_embeddings(&self) -> Result<(), Error> {
        match &self.background {
            Some(worker) => worker.wait_idle(),
            None => Ok(()),
        }
    }

    /// Notes (of `owner`, or of every owner) without a vector of this
    /// memory's model: the embedding backlog (0 without an embedder).
    pub fn embedding_backlog(&self, owner: Option<&OwnerId>) -> Result<u64, Error> {
        embedding::backlog(self.store.as_ref(), self.embedder(), owner)
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
        embedding::rebuild_embeddings(self.store.as_ref(), self.embedder(), all, progress)
    }

    /// Refuses when the store holds vectors of another model than this
    /// memory's embedder (mixing models makes scores meaningless).
    pub fn check_embedding_model(&self) -> Result<(), Error> {
        embedding::check_embedding_model(self.store.as_ref(), self.embedder())
    }

    /// Embeds up to `limit` of `owner`'s active entities that have no
    /// vector of this memory's model (oldest first; each run embeds the
    /// next `limit`), and returns how many.
    /// Personal references are left out (they are never aliased). Without
    /// an embedder nothing happens. The vectors are derived data, like a
    /// note's: `rebuild --embeddings` may drop them and the next run makes
    /// them again.
    pub fn embed_entities(&self, owner: &OwnerId, limit: usize) -> Result<usize, Error> {
        embedding::embed_entities(self.store.as_ref(), self.checked_embedder()?, owner, limit)
    }
}

// ---- storing and reading ------------------------------------------------

impl Memory {
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
        write::store_batch(&self.ctx(), self, inputs)
    }

    /// One event by id, only if it belongs to `owner`.
    pub fn event(&self, owner: &OwnerId, id: Uuid) -> Result<StoredEvent, Error> {
        reads::event(&self.ctx(), owner, id)
    }

    /// Events in ingestion order.
    pub fn events(&self, query: &EventQuery) -> Result<Vec<StoredEvent>, Error> {
        reads::events(&self.ctx(), query)
    }

    /// One node by id, only if it belongs to `owner`.
    pub fn node(&self, owner: &OwnerId, id: Uuid) -> Result<Node, Error> {
        reads::node(&self.ctx(), owner, id)
    }

    /// The claims an entity of `owner` has (targets of its HAS_FACT edges),
    /// current ones first, each with the basis that bound it when a
    /// first-person rule did (`speaker`, `self_introduction`,
    /// `owner_name`, `quoted_speaker`, `first_person_owner`).
    pub fn entity_claims(
        &self,
        owner: &OwnerId,
        entity: Uuid,
    ) -> Result<Vec<(Node, Option<String>)>, Error> {
        reads::entity_claims(&self.ctx(), owner, entity)
    }

    /// Nodes in creation order.
    pub fn nodes(&self, query: &NodeQuery) -> Result<Vec<StoredNode>, Error> {
        reads::nodes(&self.ctx(), query)
    }

    /// Counts for one owner, or for the whole store.
    pub fn stats(&self, owner: Option<&OwnerId>) -> Result<Stats, Error> {
        reads::stats(&self.ctx(), owner)
    }

    /// Checks every line of `text`, then stores them in batches, calling
    /// `on_batch` with each committed batch's receipts.
    pub fn import_jsonl(
        &self,
        text: &str,
        options: &ImportOptions,
        on_batch: impl FnMut(&[StoreReceipt]),
    ) -> Result<ImportReport, Error> {
        jsonl::import_jsonl(&self.ctx(), self, text, options, on_batch)
    }

    /// Writes every event of `owner` (or of every owner) in ingestion order,
    /// one JSON object a line. Returns the number of lines.
    pub fn export_jsonl(&self, owner: Option<&OwnerId>, out: &mut dyn Write) -> Result<u64, Error> {
        jsonl::export_jsonl(&self.ctx(), owner, out)
    }

    /// BM25 search over node text, filtered by owner and the request's filters.
    pub fn search(&self, req: &SearchRequest) -> Result<Vec<SearchHit>, Error> {
        search::search(&self.ctx(), req)
    }

    /// Retracts `owner`'s claim `claim` (see [`crate::claims`]),
    /// journaled as `CLAIM_RETRACTED`. An unknown id or another owner's
    /// claim is [`Error::NotFound`]; a node that is not a claim, a claim no
    /// longer current or an empty reason is invalid input; none writes
    /// anything.
    pub fn retract_claim(
        &self,
        owner: &OwnerId,
        claim: Uuid,
        reason: &str,
    ) -> Result<ClaimEditReport, Error> {
        claims::retract_claim(&self.ctx(), owner, claim, reason)
    }

    /// Replaces the object of `owner`'s claim `claim` with `new_object`
    /// (see [`crate::claims`]), journaled as `CLAIM_CORRECTED`.
    /// Errors as [`Memory::retract_claim`]'s, and an empty object or the
    /// object the claim already has is invalid input.
    pub fn correct_claim(
        &self,
        owner: &OwnerId,
        claim: Uuid,
        new_object: &str,
        reason: &str,
    ) -> Result<ClaimEditReport, Error> {
        claims::correct_claim(&self.ctx(), owner, claim, new_object, reason)
    }

    /// The facts view (like mem0's `get_all`): the claims of `owner`'s
    /// entities named `subject` (case-insensitive, surrounding spaces
    /// ignored), through their open HAS_FACT links; current claims only
    /// unless `history` is [`ClaimHistory::All`]. Current first, then by
    /// time. A name no entity has gives an empty list.
    pub fn claims(
        &self,
        owner: &OwnerId,
        subject: &str,
        history: ClaimHistory,
    ) -> Result<Vec<ClaimFact>, Error> {
        claims::claims(&self.ctx(), owner, subject, history)
    }

    /// A node of `owner` with its source events, edges and adjacent nodes.
    /// Another owner's node is [`Error::NotFound`], exactly like a missing
    /// one, so ids of other owners reveal nothing.
    ///
    /// An unverified alias proposal (a RELATES_TO edge with
    /// `identity_verified: false`) is listed among the edges but its other
    /// end is not a neighbour: a proposal is not an identity link, so the
    /// ordinary neighbourhood does not traverse it. [`Memory::node_view_with`]
    /// opts in.
    pub fn node_view(&self, owner: &OwnerId, id: Uuid) -> Result<NodeView, Error> {
        neighbourhood::node_view(&self.ctx(), owner, id)
    }

    /// [`Memory::node_view`], also following unverified alias proposals to
    /// their other entity when `include_unverified_aliases` is true.
    pub fn node_view_with(
        &self,
        owner: &OwnerId,
        id: Uuid,
        include_unverified_aliases: bool,
    ) -> Result<NodeView, Error> {
        neighbourhood::node_view_with(&self.ctx(), owner, id, include_unverified_aliases)
    }

    /// One shortest path (fewest edges) between two of `owner`'s nodes,
    /// following edges in either direction, breadth first, within
    /// `max_hops`. Like the neighbourhood, an unverified alias proposal is
    /// not followed unless the request opts in; a verified alias edge is an
    /// ordinary edge. Another owner's node or edge is never followed, and
    /// another owner's endpoint is [`Error::NotFound`] like a missing one.
    /// Among paths of equal length the one through smaller edge ids is
    /// returned, so the answer is reproducible.
    pub fn path(&self, owner: &OwnerId, req: &PathRequest) -> Result<PathReport, Error> {
        neighbourhood::path(&self.ctx(), owner, req)
    }

    /// Re-derives one event from its saved extraction under the policy it
    /// was saved under (refused with [`Error::Policy`] when this build does
    /// not have it) and the current options. Never calls the provider. If the derivation would write the
    /// same claims and edges, nothing changes (`unchanged`); otherwise a new
    /// plan revision is saved and committed, and claims the old revision made
    /// that the new one no longer makes are archived (`rederived`).
    pub fn reingest_event(
        &self,
        owner: &kith_core::OwnerId,
        event_id: Uuid,
    ) -> Result<ReingestOutcome, Error> {
        self.ingest_stage().reingest_event(owner, event_id)
    }

    /// [`Memory::reingest_event`] for every ingested event of a session, in
    /// ingestion order.
    pub fn reingest_session(
        &self,
        owner: &kith_core::OwnerId,
        session: &kith_core::SessionId,
    ) -> Result<Vec<ReingestOutcome>, Error> {
        self.ingest_stage().reingest_session(owner, session)
    }

    /// Ingests one message: stores the event, its note and a work item in
    /// one transaction (the event id is acknowledged from then on), then,
    /// unless `defer`, extracts and derives inline.
    pub fn ingest(
        &self,
        input: EventInput,
        options: IngestOptions,
    ) -> Result<IngestReceipt, Error> {
        self.ingest_stage().ingest(input, options)
    }

    /// Ingests several messages: validates all, admits them (events, notes,
    /// work items) in one transaction, then, unless `defer`, derives each in
    /// order. Returns one receipt per message.
    pub fn ingest_batch(
        &self,
        inputs: Vec<EventInput>,
        options: IngestOptions,
    ) -> Result<Vec<IngestReceipt>, Error> {
        self.ingest_stage().ingest_batch(inputs, options)
    }

    /// The work item, receipt and journal of one event.
    pub fn work_status(
        &self,
        owner: &kith_core::OwnerId,
        event_id: Uuid,
    ) -> Result<WorkReport, Error> {
        self.ingest_stage().work_status(owner, event_id)
    }

    /// Runs pending work (and running work whose lease ended; with
    /// `reclaim`, running work whatever its lease, for when no other process
    /// works on this pack; with `retry_failed`, failed work too), oldest
    /// first, at most `limit` items (0: all).
    pub fn process_pending(
        &self,
        owner: Option<&kith_core::OwnerId>,
        limit: usize,
        reclaim: bool,
        retry_failed: bool,
        progress: impl FnMut(&ProcessReport),
    ) -> Result<ProcessReport, Error> {
        self.ingest_stage()
            .process_pending(owner, limit, reclaim, retry_failed, progress)
    }

    /// Resumes work a crashed process left behind: running items whose lease
    /// has ended (pending items are left alone: they may be deferred on
    /// purpose). Called by the CLI's ingest commands when they open a pack.
    pub fn resume_interrupted(
        &self,
        owner: Option<&kith_core::OwnerId>,
    ) -> Result<ProcessReport, Error> {
        self.ingest_stage().resume_interrupted(owner)
    }

    /// Every owner's work items in these statuses (all statuses when
    /// empty), oldest first, at most `limit` (0: all). What a background
    /// worker reads to decide what to process; it changes nothing.
    pub fn work_items(
        &self,
        statuses: &[WorkStatus],
        limit: usize,
    ) -> Result<Vec<WorkItem>, Error> {
        self.ingest_stage().work_items(statuses, limit)
    }

    /// Extracts and derives one admitted event now.
    pub fn process_event(&self, event_id: Uuid) -> Result<WorkStatus, Error> {
        self.ingest_stage().process_event(event_id)
    }

    /// [`Memory::doctor`], then the deep checks (every node row decodes,
    /// every vector is finite and of its dimension, derived nodes still
    /// match their committed plans, the backend's full check). Changes
    /// nothing.
    pub fn doctor_deep(&self) -> Result<DoctorReport, Error> {
        doctor_deep::doctor_deep(&self.ctx())
    }

    /// Forgets what `request` selects among `owner`'s events (see
    /// [`crate::forget`]). A reason is required; a missing event or
    /// source id, or a session without events, is [`Error::NotFound`]
    /// (another owner's ids answer exactly like missing ones). Selecting
    /// only tombstones, or nothing (`Before` an early time), writes nothing.
    pub fn forget(&self, owner: &OwnerId, request: &ForgetRequest) -> Result<ForgetReport, Error> {
        forget::forget(&self.ctx(), owner, request)
    }

    /// Runs organizer `jobs` over `owner`'s memory with the defaults,
    /// examining at most `budget` candidate pairs per job (0: the default).
    pub fn organize(
        &self,
        owner: &OwnerId,
        jobs: &[Job],
        budget: usize,
    ) -> Result<OrganizeReport, Error> {
        organize::jobs::organize(&self.ctx(), self, owner, jobs, budget)
    }

    /// Runs an organizer request. Each merge or proposal commits in its own
    /// transaction; an error stops the run (what committed before stays,
    /// and a new run finds the rest).
    pub fn organize_with(&self, req: &OrganizeRequest) -> Result<OrganizeReport, Error> {
        organize::jobs::organize_with(&self.ctx(), self, req)
    }

    /// An owner's journal records, oldest first, filtered as `query` says.
    pub fn journal(&self, owner: &OwnerId, query: &JournalQuery) -> Result<Vec<Operation>, Error> {
        organize::jobs::journal(&self.ctx(), owner, query)
    }

    /// Undoes an `ORGANIZER_MERGED`, `ALIAS_PROPOSAL_ACCEPTED`,
    /// `IDENTITY_CORRECTED`, `CLAIM_RETRACTED` or `CLAIM_CORRECTED` record of `owner` in one transaction, journaled
    /// as `UNDO`. Refused (typed
    /// [`crate::OrganizerError::UndoRefused`], nothing written) when later changes
    /// depend on it. Undoing twice returns the first undo.
    pub fn undo(&self, owner: &OwnerId, op_id: Uuid) -> Result<UndoReport, Error> {
        organize::undo::undo(&self.ctx(), owner, op_id)
    }

    /// Runs one entity-linking pass with the heuristic extractor (see
    /// [`crate::organize::linking`] and `docs/linking.md`).
    pub fn link_entities(&self, req: &LinkRequest) -> Result<LinkReport, Error> {
        organize::link_job::link_entities(&self.ctx(), req)
    }

    /// Runs one entity-linking pass with `extractor` (the heuristic one
    /// when `None`).
    pub fn link_entities_with(
        &self,
        req: &LinkRequest,
        extractor: Option<&dyn EntityExtractor>,
    ) -> Result<LinkReport, Error> {
        organize::link_job::link_entities_with(&self.ctx(), req, extractor)
    }

    /// The owner's alias proposals, oldest first, with their status.
    pub fn alias_proposals(&self, owner: &OwnerId) -> Result<Vec<AliasProposal>, Error> {
        organize::alias::alias_proposals(&self.ctx(), owner)
    }

    /// Proposes two of `owner`'s entities as an unverified alias, with an
    /// optional external assessment (a version-2 record), in one
    /// transaction: the same admission as the organizer's proposals, and
    /// nothing merges.
    ///
    /// The proposal id is stable for the unordered pair, so a repeated
    /// request returns the first committed record unchanged (`created:
    /// false`), with its assessment or none: an older proposal is never
    /// relabelled with evidence it did not contain.
    pub fn propose_alias(
        &self,
        owner: &OwnerId,
        req: &ProposeAliasRequest,
    ) -> Result<ProposeOutcome, Error> {
        organize::alias::propose_alias(&self.ctx(), owner, req)
    }

    /// Records the owner's one decision on alias proposal `proposal`.
    ///
    /// Accept rechecks that both proposed nodes are exactly as proposed and
    /// active, then publishes a separate verified RELATES_TO edge (no
    /// merge). Reject needs a `reason` and publishes no edge. The decision
    /// record holds the complete proposal payload and the reviewer input.
    /// The same decision with the same input again returns the first
    /// record; any other decision fails with
    /// [`crate::OrganizerError::ReviewConflict`].
    pub fn review_alias(
        &self,
        owner: &OwnerId,
        proposal: Uuid,
        decision: Decision,
        reason: Option<&str>,
        reviewer: Option<&str>,
    ) -> Result<ReviewOutcome, Error> {
        organize::alias::review_alias(&self.ctx(), owner, proposal, decision, reason, reviewer)
    }

    /// `owner`'s extraction work items with one of `statuses`, at most
    /// `limit` (0: all). [`Memory::work_items`] lists every owner's, for
    /// the worker; this is what one owner may see.
    pub fn owner_work_items(
        &self,
        owner: &OwnerId,
        statuses: &[WorkStatus],
        limit: usize,
    ) -> Result<Vec<WorkItem>, Error> {
        overview::owner_work_items(&self.ctx(), owner, statuses, limit)
    }

    /// How many journal records of `kind` `owner` has (an index count; no
    /// record is read).
    pub fn journal_count(&self, owner: &OwnerId, kind: OperationKind) -> Result<u64, Error> {
        overview::journal_count(&self.ctx(), owner, kind)
    }

    /// Recomputes every event's content hash, checksum and id, checks that
    /// each has its note node (a forgotten event: its tombstone checksum
    /// and id, and that its note is gone), recomputes every journal record's checksum
    /// (one read snapshot), then runs the backend's own integrity checks.
    /// Changes nothing.
    pub fn doctor(&self) -> Result<DoctorReport, Error> {
        doctor::doctor(&self.ctx())
    }

    /// Applies a correction for `owner` in one transaction (see the module
    /// documentation). Bad requests (nothing named, a claim not linked to
    /// the entity, another owner's or a retired node, no reason) are typed
    /// errors and write nothing.
    pub fn correct(
        &self,
        owner: &OwnerId,
        request: &Correction,
    ) -> Result<CorrectionReport, Error> {
        correct::correct(&self.ctx(), owner, request)
    }
}

// ---- retrieving -----------------------------------------------------------

impl Memory {
    /// Finds the evidence for `req.query` and packs it into the budget (see
    /// [`crate::retrieve`]); unless `req.record` is false, journals a
    /// receipt, expiring a few old ones under [`Memory::receipt_retention`].
    pub fn retrieve(&self, req: &RetrieveRequest) -> Result<Retrieval, Error> {
        retrieve::retrieve(&self.ctx(), self, &self.retention, req)
    }

    /// A retrieval receipt by id, only if it belongs to `owner`. One that
    /// retention removed is [`Error::ReceiptExpired`]; another owner's id
    /// answers exactly like a missing one ([`Error::NotFound`]).
    pub fn retrieval_receipt(&self, owner: &OwnerId, id: Uuid) -> Result<Operation, Error> {
        retrieve::receipt::receipt(&self.ctx(), owner, id)
    }

    /// An owner's retrieval receipts, oldest first (at most `limit`; 0: all).
    pub fn retrieval_receipts(
        &self,
        owner: &OwnerId,
        limit: usize,
    ) -> Result<Vec<Operation>, Error> {
        retrieve::receipt::receipts(&self.ctx(), owner, limit)
    }

    /// Removes every receipt of `owner` that `retention` expires, in one
    /// transaction, then compacts the store (SQLite: WAL checkpoint,
    /// `VACUUM`; PostgreSQL: `VACUUM`) so their bytes go at once. Other
    /// journal records and other owners' receipts are never touched.
    pub fn prune_receipts(
        &self,
        owner: &OwnerId,
        retention: &ReceiptRetention,
    ) -> Result<PruneReport, Error> {
        retrieve::retention::prune(&self.ctx(), owner, retention)
    }
}
