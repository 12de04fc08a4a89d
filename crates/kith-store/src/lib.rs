//! The `Store` trait and its backends.
//!
//! kith's engine talks to storage only through [`Store`] and [`Tx`]: explicit
//! transactions whose operations speak kith's model types. A backend maps its
//! own errors to a [`StoreErrorKind`] at its edge, so no `rusqlite` or
//! `postgres` type appears in the trait.
//!
//! Backends:
//! - [`sqlite::SqliteStore`], the embedded default: one SQLite database in WAL
//!   mode, FTS5 for BM25.
//! - [`postgres::PgStore`] (cargo feature `postgres`, on by default): a
//!   shared PostgreSQL server, pgvector for embeddings, full text search for
//!   lexical search.
//!
//! Architecture invariants:
//! - Events are never deleted, and never updated through this trait except
//!   once into a tombstone ([`Tx::tombstone_event`]); both schemas refuse
//!   anything else with triggers.
//! - Every query that returns memory content takes an owner.
//! - A transaction that is dropped without [`Tx::commit`] rolls back.
// Module docs name private items for maintainers: `cargo doc
// --document-private-items` links them, a public build shows their names.
#![allow(rustdoc::private_intra_doc_links)]

pub mod error;
mod filters;
#[cfg(feature = "postgres")]
pub mod postgres;
mod predicates;
pub mod query;
pub mod sqlite;
pub mod statements;
pub mod together;
pub mod vector_scan;
pub mod words;

pub use error::{StoreError, StoreErrorKind};
pub use query::{
    EmbeddingModelCount, EventQuery, LexicalHit, LexicalQuery, NodeQuery, OperationQuery,
    OperationStamp, SearchFilters, Stats, StoredEvent, StoredNode, VectorQuery, WorkItem,
    WorkQuery, WorkStatus,
};
pub use statements::{StatementLog, StatementTime};
pub use together::{Answer, HitsWithEdges, Read};

use kith_core::{
    Edge, Event, Node, Operation, OperationKind, OwnerId, SessionId, SourceId, Timestamp, Tombstone,
};
use uuid::Uuid;

/// The prefix under which [`Tx::set_setting`] keys are stored in a
/// backend's metadata table (`meta` on SQLite, `kith_meta` on PostgreSQL),
/// apart from the backend's own keys such as `schema_version`.
pub const SETTING_PREFIX: &str = "setting.";

/// The metadata key (`meta` on SQLite, `kith_meta` on PostgreSQL) under
/// which [`Tx::write_generation`] is kept: a backend key, outside the
/// settings namespace, so no setting can overwrite it.
pub const WRITE_GENERATION_KEY: &str = "write_generation";

/// The stored key of setting `key`, or an error when `key` is not 1–64
/// characters of `a-z`, `0-9` and `_`.
pub fn setting_key(key: &str) -> Result<String, StoreError> {
    let ok = !key.is_empty()
        && key.len() <= 64
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(format!("{SETTING_PREFIX}{key}"))
    } else {
        Err(StoreError::new(
            StoreErrorKind::Other,
            format!("setting key {key:?} must be 1-64 characters of a-z, 0-9 and _"),
        ))
    }
}

/// Whether a transaction will write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxMode {
    /// Reads only: sees one consistent snapshot, never blocks writers.
    Read,
    /// Reads and writes: takes the write lock when it begins, so it never
    /// fails half-way for lack of it.
    Write,
}

/// A storage backend. Cheap to share between threads.
pub trait Store: Send + Sync {
    /// A short name for messages and `kith stats` (`sqlite`, `postgres`).
    fn backend_name(&self) -> &'static str;

    /// True when this store was opened for reading only (write
    /// transactions are refused). Then [`Tx::check_integrity`] may be run
    /// in a [`TxMode::Read`] transaction, leaving out checks that need the
    /// write lock.
    fn is_read_only(&self) -> bool {
        false
    }

    /// Starts a transaction. Waits (bounded) for the write lock in
    /// [`TxMode::Write`]; reports [`StoreErrorKind::Busy`] if it stays taken.
    fn begin(&self, mode: TxMode) -> Result<Box<dyn Tx + '_>, StoreError>;

    /// Rewrites storage so that rows removed or erased by committed
    /// transactions leave no bytes behind where the backend can reach them
    /// (SQLite: WAL checkpoint with truncate, `VACUUM`, truncate again;
    /// PostgreSQL: `VACUUM` of kith's tables). Run after a forget commits,
    /// outside any transaction. Returns one line per step done.
    fn compact(&self) -> Result<Vec<String>, StoreError>;

    /// The round trips this store has made to its server and, on request,
    /// the statements it sent ([`StatementLog`]); SQLite counts the
    /// statements its transactions run while the log records; `None` for a
    /// backend that keeps no log.
    fn statement_log(&self) -> Option<&StatementLog> {
        None
    }

    /// For benchmarks of the vector index: `q`'s best `k` nodes as
    /// searches find them (through the index where there is one) and by
    /// the exact scan of every row, both from the in-process copy and with
    /// no re-check. `None` when the backend keeps no such copy of `q`'s
    /// owner and model.
    fn vector_probe(&self, _q: &VectorQuery, _k: usize) -> Result<Option<VectorProbe>, StoreError> {
        Ok(None)
    }

    /// Journals `op` in a write transaction of its own, in one round trip
    /// where the backend can, unless appending it would expire a record
    /// of its owner and kind under `check`: then writes nothing and
    /// returns `false`, and the caller journals it in a transaction that
    /// also expires what is due ([`Tx::append_operation`],
    /// [`Tx::delete_operations`]). The check may answer `false` more often
    /// than strictly needed (never less). `true` means committed, the
    /// write generation moved, as by a [`Tx::commit`]; an id that exists is
    /// a [`StoreErrorKind::Conflict`], as from [`Tx::append_operation`].
    /// The default declines every time: a backend whose transactions cost
    /// no round trips (SQLite) gains nothing from a second path.
    fn append_unless_expiring(
        &self,
        _op: &Operation,
        _check: &ExpiryCheck,
    ) -> Result<bool, StoreError> {
        Ok(false)
    }
}

/// [`Tx::search_lexical_nodes`] in three reads: the probe, the search, the
/// hits' nodes (the default, and a server backend's way for queries its
/// one-statement form does not cover).
pub fn search_lexical_nodes_in_steps<T: Tx + ?Sized>(
    tx: &mut T,
    query: &LexicalQuery,
) -> Result<Vec<(LexicalHit, Node)>, StoreError> {
    if !has_nodes_to_search(tx, query)? {
        return Ok(Vec::new());
    }
    let hits = tx.search_lexical(query)?;
    let ids: Vec<Uuid> = hits.iter().map(|h| h.node_id).collect();
    let mut nodes: std::collections::HashMap<Uuid, Node> = tx
        .get_owned_nodes(&query.owner, &ids)?
        .into_iter()
        .map(|n| (n.id, n))
        .collect();
    Ok(hits
        .into_iter()
        .filter_map(|h| nodes.remove(&h.node_id).map(|n| (h, n)))
        .collect())
}

/// The entity search's probe: whether the query's owner holds any node of
/// the types and scope it asks for (one indexed row), so an owner without
/// entities skips the search statement.
pub fn has_nodes_to_search<T: Tx + ?Sized>(
    tx: &mut T,
    query: &LexicalQuery,
) -> Result<bool, StoreError> {
    let any = tx.list_nodes(&NodeQuery {
        owner: Some(query.owner.clone()),
        scope: query.filters.scope.clone(),
        node_types: query.filters.node_types.clone(),
        limit: 1,
        ..NodeQuery::default()
    })?;
    Ok(!any.is_empty())
}

/// What [`Tx::edges_of_nodes_with_ends`] reads: each node's edges (as
/// [`Tx::edges_of_nodes`]) and the nodes at their ends.
pub type EdgesWithEnds = (std::collections::HashMap<Uuid, Vec<Edge>>, Vec<Node>);

/// The retention [`Store::append_unless_expiring`] checks: a record
/// expires when its owner has more than `keep` of its kind (the new one
/// included), or when it is among the oldest `scan` of them (by `seq`)
/// and was created before `cutoff_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpiryCheck {
    /// The most records of the owner and kind kept; `None`: any number.
    pub keep: Option<u64>,
    /// Records created before this instant (Unix milliseconds) expire;
    /// `None`: of any age.
    pub cutoff_ms: Option<i64>,
    /// How many of the oldest records the age limit looks at.
    pub scan: usize,
}

/// What [`Store::vector_probe`] found.
#[derive(Debug, Clone, Default)]
pub struct VectorProbe {
    /// Node ids as searches rank them, best first.
    pub searched: Vec<Uuid>,
    /// Node ids as the exact scan ranks them, best first.
    pub exact: Vec<Uuid>,
    /// True when searches went through an index.
    pub indexed: bool,
    /// True while an index is being built in the background (searches
    /// scan without it until it is ready).
    pub building: bool,
    /// Vectors held for the owner and model.
    pub rows: usize,
    /// Time of the search, in ms.
    pub searched_ms: f64,
    /// Time of the exact scan, in ms.
    pub exact_ms: f64,
}

/// What [`Tx::delete_nodes`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeletedNodes {
    /// Nodes (each with its lexical row).
    pub nodes: u64,
    /// Edges that started or ended at one of them.
    pub edges: u64,
    /// Their embeddings.
    pub vectors: u64,
}

/// One transaction. All reads see the transaction's own writes. Writes in a
/// [`TxMode::Read`] transaction are refused.
pub trait Tx {
    /// Appends an event; returns its ingestion sequence number.
    /// Fails with [`StoreErrorKind::Conflict`] if its id or
    /// `(owner, source_id)` already exists.
    fn insert_event(&mut self, event: &Event) -> Result<i64, StoreError>;

    /// The id of the event an owner stored under `source_id`, if any.
    fn event_id_by_source(
        &mut self,
        owner: &OwnerId,
        source_id: &SourceId,
    ) -> Result<Option<Uuid>, StoreError>;

    /// One event by id.
    fn get_event(&mut self, id: Uuid) -> Result<Option<StoredEvent>, StoreError>;

    /// `owner`'s events of `ids` that exist, each once, in no particular
    /// order (one round trip on a server backend; the owner keeps it on
    /// one shard of a sharded database).
    fn get_events(
        &mut self,
        owner: &OwnerId,
        ids: &[Uuid],
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut events = Vec::new();
        for id in ids {
            if seen.insert(*id) {
                events.extend(self.get_event(*id)?.filter(|e| &e.event.owner_id == owner));
            }
        }
        Ok(events)
    }

    /// Events in ingestion order (see [`EventQuery`]).
    fn list_events(&mut self, query: &EventQuery) -> Result<Vec<StoredEvent>, StoreError>;

    /// Appends several events; returns their sequence numbers in order.
    /// Fails with [`StoreErrorKind::Conflict`] if an id or
    /// `(owner, source_id)` exists or repeats within `events`. As with
    /// [`Tx::insert_event`] one at a time (the default), a failed call is
    /// undone by dropping the transaction; a server backend writes it in
    /// one statement and writes none of its rows when it fails.
    fn insert_events(&mut self, events: &[Event]) -> Result<Vec<i64>, StoreError> {
        events.iter().map(|e| self.insert_event(e)).collect()
    }

    /// [`Tx::event_id_by_source`] for several `(owner, source id)` pairs,
    /// answered in their order (one round trip on a server backend).
    fn event_ids_by_sources(
        &mut self,
        keys: &[(OwnerId, SourceId)],
    ) -> Result<Vec<Option<Uuid>>, StoreError> {
        keys.iter()
            .map(|(o, s)| self.event_id_by_source(o, s))
            .collect()
    }

    /// The events of several of `owner`'s sessions, each session's in
    /// ingestion order and at most `limit` of them (the first ones), the
    /// sessions one after another in the order given (one round trip on a
    /// server backend).
    fn list_session_events(
        &mut self,
        owner: &OwnerId,
        sessions: &[SessionId],
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let mut out = Vec::new();
        for s in sessions {
            out.extend(self.list_events(&EventQuery {
                owner: Some(owner.clone()),
                session: Some(s.clone()),
                limit,
                ..EventQuery::default()
            })?);
        }
        Ok(out)
    }

    /// Writes a node and its lexical index row.
    fn insert_node(&mut self, node: &Node) -> Result<(), StoreError>;

    /// [`Tx::insert_node`] for several nodes (an id that exists or repeats
    /// is a [`StoreErrorKind::Conflict`]; failure as with
    /// [`Tx::insert_events`]).
    fn insert_nodes(&mut self, nodes: &[Node]) -> Result<(), StoreError> {
        nodes.iter().try_for_each(|n| self.insert_node(n))
    }

    /// [`Tx::insert_edge`] for several edges (failure as with
    /// [`Tx::insert_events`]).
    fn insert_edges(&mut self, edges: &[Edge]) -> Result<(), StoreError> {
        edges.iter().try_for_each(|e| self.insert_edge(e))
    }

    /// One node by id.
    fn get_node(&mut self, id: Uuid) -> Result<Option<Node>, StoreError>;

    /// The nodes of `ids` that exist, each once, in no particular order.
    /// One round trip on a server backend; the default asks one at a time
    /// (cheap in-process).
    fn get_nodes(&mut self, ids: &[Uuid]) -> Result<Vec<Node>, StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut nodes = Vec::new();
        for id in ids {
            if seen.insert(*id) {
                if let Some(n) = self.get_node(*id)? {
                    nodes.push(n);
                }
            }
        }
        Ok(nodes)
    }

    /// `owner`'s nodes of `ids` that exist, each once, in no particular
    /// order; another owner's id is left out like a missing one. What
    /// [`Tx::get_nodes`] finds, but with the owner, which keeps the lookup
    /// on one shard of an owner-sharded database (docs/deploy.md). One
    /// round trip on a server backend.
    fn get_owned_nodes(&mut self, owner: &OwnerId, ids: &[Uuid]) -> Result<Vec<Node>, StoreError> {
        let mut nodes = self.get_nodes(ids)?;
        nodes.retain(|n| &n.owner_id == owner);
        Ok(nodes)
    }

    /// [`Tx::get_events`] of `event_ids` and [`Tx::get_owned_nodes`] of
    /// `node_ids` in one read where the backend can (one round trip on a
    /// server instead of two).
    fn get_owned_events_and_nodes(
        &mut self,
        owner: &OwnerId,
        event_ids: &[Uuid],
        node_ids: &[Uuid],
    ) -> Result<(Vec<StoredEvent>, Vec<Node>), StoreError> {
        let events = self.get_events(owner, event_ids)?;
        Ok((events, self.get_owned_nodes(owner, node_ids)?))
    }

    /// Nodes in creation order (see [`NodeQuery`]).
    fn list_nodes(&mut self, query: &NodeQuery) -> Result<Vec<StoredNode>, StoreError>;

    /// [`Tx::list_nodes`], with [`Tx::get_events`] of the events that the
    /// nodes' first evidence references name (a note's source turn), in
    /// one read where the backend can (one round trip on a server instead
    /// of two). No events when the query names no owner.
    fn list_nodes_with_evidence(
        &mut self,
        query: &NodeQuery,
    ) -> Result<(Vec<StoredNode>, Vec<StoredEvent>), StoreError> {
        let nodes = self.list_nodes(query)?;
        let Some(owner) = &query.owner else {
            return Ok((nodes, Vec::new()));
        };
        let firsts: Vec<Uuid> = nodes
            .iter()
            .filter_map(|s| s.node.evidence_refs.first().copied())
            .collect();
        let events = self.get_events(owner, &firsts)?;
        Ok((nodes, events))
    }

    /// Writes an edge.
    fn insert_edge(&mut self, edge: &Edge) -> Result<(), StoreError>;

    /// Replaces a node's mutable state (lifecycle, confidence, metadata,
    /// content, validity, superseded_by, evidence, updated_at) and keeps its
    /// lexical row in step. Fails with [`StoreErrorKind::NotFound`] if it
    /// does not exist; owner, scope, type and id never change.
    fn update_node(&mut self, node: &Node) -> Result<(), StoreError>;

    /// The active claims (non-entity nodes) an entity has through HAS_FACT
    /// edges whose normalised predicate
    /// ([`kith_core::text::normalize_predicate`] of `metadata.predicate`)
    /// is one of `predicates` (normalised the same way).
    fn subject_claims(
        &mut self,
        subject: Uuid,
        predicates: &[String],
    ) -> Result<Vec<Node>, StoreError>;

    /// Edges that start or end at `node`.
    fn edges_of(&mut self, node: Uuid) -> Result<Vec<Edge>, StoreError>;

    /// [`Tx::edges_of`] for several of `owner`'s nodes: each node's edges
    /// (incoming and outgoing, `owner`'s only) in creation order, keyed by
    /// node; a node with none is left out (one round trip on a server
    /// backend).
    fn edges_of_nodes(
        &mut self,
        owner: &OwnerId,
        nodes: &[Uuid],
    ) -> Result<std::collections::HashMap<Uuid, Vec<Edge>>, StoreError> {
        let mut out = std::collections::HashMap::new();
        for id in nodes {
            if !out.contains_key(id) {
                let mut edges = self.edges_of(*id)?;
                edges.retain(|e| &e.owner_id == owner);
                if !edges.is_empty() {
                    out.insert(*id, edges);
                }
            }
        }
        Ok(out)
    }

    /// [`Tx::edges_of_nodes`], with [`Tx::get_owned_nodes`] of every end
    /// of those edges (the nodes asked about among them), in one read
    /// where the backend can (one round trip on a server instead of two).
    fn edges_of_nodes_with_ends(
        &mut self,
        owner: &OwnerId,
        nodes: &[Uuid],
    ) -> Result<EdgesWithEnds, StoreError> {
        let edges = self.edges_of_nodes(owner, nodes)?;
        let mut ends: Vec<Uuid> = edges
            .values()
            .flatten()
            .flat_map(|e| [e.source_id, e.target_id])
            .collect();
        ends.sort_unstable();
        ends.dedup();
        let ends = self.get_owned_nodes(owner, &ends)?;
        Ok((edges, ends))
    }

    /// One edge by id.
    fn get_edge(&mut self, id: Uuid) -> Result<Option<Edge>, StoreError>;

    /// Removes one edge by id (the organizer's undo takes back the edges a
    /// merge or an accepted alias published). Fails with
    /// [`StoreErrorKind::NotFound`] if it does not exist, so a caller that
    /// expected it learns that something else removed it.
    fn delete_edge(&mut self, id: Uuid) -> Result<(), StoreError>;

    /// Closes one open edge: sets its `valid_to` to `at`, keeping the edge
    /// as history (a re-derivation that binds a claim to another subject
    /// closes the old subject's edge). A closed edge no longer links its
    /// endpoints for [`Tx::subject_claims`] and the engine's traversals.
    /// Fails with [`StoreErrorKind::NotFound`] if it does not exist and with
    /// [`StoreErrorKind::Conflict`] if it is already closed.
    fn close_edge(&mut self, id: Uuid, at: Timestamp) -> Result<(), StoreError>;

    /// Opens a closed edge again (clears `valid_to`): a later re-derivation
    /// makes the same link again. Fails with [`StoreErrorKind::NotFound`] if
    /// it does not exist and with [`StoreErrorKind::Conflict`] if it is open.
    fn reopen_edge(&mut self, id: Uuid) -> Result<(), StoreError>;

    /// Turns a live event into a tombstone: erases its content, speaker and
    /// metadata and records `tombstone` (the only change the append-only log
    /// accepts). Fails with [`StoreErrorKind::NotFound`] if the event does
    /// not exist and with [`StoreErrorKind::Conflict`] if it already is a
    /// tombstone.
    fn tombstone_event(&mut self, id: Uuid, tombstone: &Tombstone) -> Result<(), StoreError>;

    /// Removes nodes with everything hanging off them: their lexical rows,
    /// their vectors and every edge that starts or ends at one of them.
    /// Ids that do not exist are skipped. Removing a vector makes in-process
    /// vector copies start over (as [`Tx::delete_embeddings`] does), so no
    /// copy can return a removed node.
    fn delete_nodes(&mut self, ids: &[Uuid]) -> Result<DeletedNodes, StoreError>;

    /// Removes `owner`'s edges whose provenance is one of `events`; returns
    /// how many.
    fn delete_edges_from_events(
        &mut self,
        owner: &OwnerId,
        events: &[Uuid],
    ) -> Result<u64, StoreError>;

    /// Removes an event's work item; returns whether it had one.
    fn delete_work_item(&mut self, event_id: Uuid) -> Result<bool, StoreError>;

    /// Replaces a journal record's payload and checksum (forgetting scrubs
    /// records that quote erased events). Id, kind, owner, scope, target
    /// and time must equal the stored record's, else
    /// [`StoreErrorKind::Conflict`]; [`StoreErrorKind::NotFound`] if there
    /// is no such record.
    fn rewrite_operation(&mut self, op: &Operation) -> Result<(), StoreError>;

    /// Appends a journal record. Fails with [`StoreErrorKind::Conflict`] if
    /// its id exists.
    fn append_operation(&mut self, op: &Operation) -> Result<(), StoreError>;

    /// [`Tx::append_operation`] for several records (failure as with
    /// [`Tx::insert_events`]).
    fn append_operations(&mut self, ops: &[Operation]) -> Result<(), StoreError> {
        ops.iter().try_for_each(|op| self.append_operation(op))
    }

    /// One journal record by id.
    fn get_operation(&mut self, id: Uuid) -> Result<Option<Operation>, StoreError>;

    /// Every owner's journal records in journal order, with their position,
    /// after position `after_seq` (maintenance: `doctor`).
    fn scan_operations(
        &mut self,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Operation)>, StoreError>;

    /// Journal records in journal order (see [`OperationQuery`]).
    fn list_operations(&mut self, query: &OperationQuery) -> Result<Vec<Operation>, StoreError>;

    /// How many journal records of `kind` `owner` has (an index count:
    /// retention asks on every receipt it writes).
    fn count_operations(&mut self, owner: &OwnerId, kind: OperationKind)
        -> Result<u64, StoreError>;

    /// The oldest `limit` (0: all) of `owner`'s records of `kind`, in
    /// journal order, as stamps without payloads.
    fn operation_stamps(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
        limit: usize,
    ) -> Result<Vec<OperationStamp>, StoreError>;

    /// Removes `owner`'s records of `kind` among `ids` (receipt retention:
    /// the only journal records kith ever deletes); ids of another owner or
    /// kind, and missing ones, are left alone. Returns how many went.
    fn delete_operations(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
        ids: &[Uuid],
    ) -> Result<u64, StoreError>;

    /// Admits a work item. Fails with [`StoreErrorKind::Conflict`] if the
    /// event has one.
    fn insert_work_item(&mut self, item: &WorkItem) -> Result<(), StoreError>;

    /// [`Tx::insert_work_item`] for several items (failure as with
    /// [`Tx::insert_events`]).
    fn insert_work_items(&mut self, items: &[WorkItem]) -> Result<(), StoreError> {
        items.iter().try_for_each(|w| self.insert_work_item(w))
    }

    /// The work item of an event.
    fn get_work_item(&mut self, event_id: Uuid) -> Result<Option<WorkItem>, StoreError>;

    /// The work items of `event_ids` that exist, in no particular order.
    fn get_work_items(&mut self, event_ids: &[Uuid]) -> Result<Vec<WorkItem>, StoreError> {
        let mut items = Vec::new();
        for id in event_ids {
            items.extend(self.get_work_item(*id)?);
        }
        Ok(items)
    }

    /// Saves a work item's new status, attempts, error and lease.
    fn update_work_item(&mut self, item: &WorkItem) -> Result<(), StoreError>;

    /// Work items in admission order (see [`WorkQuery`]).
    fn list_work_items(&mut self, query: &WorkQuery) -> Result<Vec<WorkItem>, StoreError>;

    /// BM25 search over node text, filtered as [`LexicalQuery`] says.
    fn search_lexical(&mut self, query: &LexicalQuery) -> Result<Vec<LexicalHit>, StoreError>;

    /// [`Tx::search_lexical`]'s hits in its order, each with its node (a
    /// hit whose node is not the owner's is left out), in fewer reads where
    /// the backend can (two round trips on PostgreSQL instead of three). An
    /// owner without a node of the query's types in its scope is answered
    /// without a full text search: one indexed probe, which saves the
    /// search for the many owners who have, say, no entities.
    fn search_lexical_nodes(
        &mut self,
        query: &LexicalQuery,
    ) -> Result<Vec<(LexicalHit, Node)>, StoreError> {
        search_lexical_nodes_in_steps(self, query)
    }

    /// Reads that do not depend on each other, each answered as its own
    /// method would ([`Answer`], in the order of `reads`), in fewer round
    /// trips where the backend can (one statement on PostgreSQL for those
    /// it can join; one after another by default).
    fn read_together(&mut self, reads: &[Read]) -> Result<Vec<Answer>, StoreError> {
        together::read_in_turn(self, reads)
    }

    /// Saves a node's embedding under `model`, replacing one it had. Fails
    /// with [`StoreErrorKind::NotFound`] if the node does not exist.
    fn put_embedding(
        &mut self,
        node_id: Uuid,
        model: &str,
        vector: &[f32],
    ) -> Result<(), StoreError>;

    /// [`Tx::put_embedding`] for several nodes under one `model`; a node
    /// listed twice keeps its last vector, as one call at a time would.
    /// A vector that is empty or not finite, or a node that does not
    /// exist, fails the call (failure as with [`Tx::insert_events`]).
    fn put_embeddings(&mut self, model: &str, rows: &[(Uuid, &[f32])]) -> Result<(), StoreError> {
        rows.iter()
            .try_for_each(|(id, v)| self.put_embedding(*id, model, v))
    }

    /// [`Tx::put_embeddings`] for nodes of `owner` only: a node of another
    /// owner fails the call like a missing one ([`StoreErrorKind::NotFound`],
    /// nothing written). The owner keeps the write on one shard of an
    /// owner-sharded database (docs/deploy.md).
    fn put_owned_embeddings(
        &mut self,
        owner: &OwnerId,
        model: &str,
        rows: &[(Uuid, &[f32])],
    ) -> Result<(), StoreError> {
        let ids: Vec<Uuid> = rows.iter().map(|r| r.0).collect();
        let owned: std::collections::HashSet<Uuid> = self
            .get_owned_nodes(owner, &ids)?
            .into_iter()
            .map(|n| n.id)
            .collect();
        if let Some((id, _)) = rows.iter().find(|r| !owned.contains(&r.0)) {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("node {id} of owner {owner} does not exist; none of the batch was written"),
            ));
        }
        self.put_embeddings(model, rows)
    }

    /// A node's embedding: its model and vector.
    fn get_embedding(&mut self, node_id: Uuid) -> Result<Option<(String, Vec<f32>)>, StoreError>;

    /// Nodes (of `owner`, or every owner) that have no embedding made by
    /// `model`, in creation order after `after_seq`, at most `limit`.
    fn nodes_missing_embedding(
        &mut self,
        owner: Option<&OwnerId>,
        model: &str,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<StoredNode>, StoreError>;

    /// Removes every stored embedding (before re-embedding with another
    /// model); returns how many there were.
    fn delete_embeddings(&mut self) -> Result<u64, StoreError>;

    /// Removes the vectors of the nodes `ids` (of any model; the nodes
    /// stay); returns how many there were.
    fn delete_node_embeddings(&mut self, ids: &[Uuid]) -> Result<u64, StoreError>;

    /// The models whose vectors the store holds.
    fn embedding_models(&mut self) -> Result<Vec<EmbeddingModelCount>, StoreError>;

    /// Exact nearest neighbours by cosine similarity among the owner's
    /// vectors of the query's model, filtered as [`VectorQuery`] says, best
    /// first.
    fn search_vector(&mut self, query: &VectorQuery) -> Result<Vec<LexicalHit>, StoreError>;

    /// Counts, for one owner or the whole store.
    fn stats(&mut self, owner: Option<&OwnerId>) -> Result<Stats, StoreError>;

    /// Problems the backend finds in its own structures (page damage, index
    /// rows out of step, dangling references). Empty when healthy. Needs a
    /// [`TxMode::Write`] transaction (some checks are issued as writes on
    /// SQLite); it changes nothing, and the caller should drop it after.
    /// On a read-only store ([`Store::is_read_only`]) a [`TxMode::Read`]
    /// transaction runs every check that does not need the write lock.
    fn check_integrity(&mut self) -> Result<Vec<String>, StoreError>;

    /// [`Tx::check_integrity`] with the backend's slowest, most thorough
    /// checks (`doctor --deep`; SQLite: `PRAGMA integrity_check` over every
    /// page and index). By default the same checks.
    fn check_integrity_deep(&mut self) -> Result<Vec<String>, StoreError> {
        self.check_integrity()
    }

    /// A setting the engine keeps in the store itself (the embedding model
    /// of a server database, where there is no pack manifest), by key.
    /// Settings live beside the backend's own bookkeeping but in their own
    /// namespace, so no key can overwrite the schema version.
    fn get_setting(&mut self, key: &str) -> Result<Option<String>, StoreError>;

    /// Saves a setting (`Some`) or removes it (`None`). Keys are 1–64
    /// characters of `a-z`, `0-9` and `_`; others are refused with
    /// [`StoreErrorKind::Other`].
    fn set_setting(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError>;

    /// The store's write generation: how many write transactions that
    /// changed at least one row have committed (`None`: the backend does not
    /// count them). A committing write transaction that changed anything
    /// adds exactly one, in the same commit, so an equal generation read
    /// later means nothing at all was written in between. Callers use it to
    /// skip work whose inputs did not change (a no-op `organize` pass); the
    /// count lives in the backend's own metadata ([`WRITE_GENERATION_KEY`]),
    /// so packs written before it existed read 0 until their next write.
    fn write_generation(&mut self) -> Result<Option<u64>, StoreError> {
        Ok(None)
    }

    /// Makes every write of the transaction durable, or none of them.
    fn commit(self: Box<Self>) -> Result<(), StoreError>;
}
