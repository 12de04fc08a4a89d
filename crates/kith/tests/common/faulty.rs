//! A `Store` that delegates to SQLite and fails on demand: the Nth write
//! call returns an error, and a chosen node reads back with a NaN
//! confidence. For fault-injection tests of multi-write transactions.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kith_core::{Edge, Event, Node, Operation, OwnerId, SourceId, Tombstone};
use kith_store::sqlite::SqliteStore;
use kith_store::{
    DeletedNodes, EmbeddingModelCount, EventQuery, LexicalHit, LexicalQuery, NodeQuery,
    OperationQuery, Stats, Store, StoreError, StoreErrorKind, StoredEvent, StoredNode, Tx, TxMode,
    VectorQuery, WorkItem, WorkQuery,
};
use uuid::Uuid;

/// What the test controls.
#[derive(Default)]
pub struct Faults {
    /// Fail the write call with this number (1-based, counted from the last
    /// `arm`); 0: never.
    pub fail_at: AtomicUsize,
    /// Write calls since the last `arm`.
    pub writes: AtomicUsize,
    /// Reads of this node return a NaN confidence.
    pub nan_node: Mutex<Option<Uuid>>,
    /// The next this-many commits fail as `Busy` (a serialization failure
    /// or deadlock on a server backend) and roll back.
    pub busy_commits: AtomicUsize,
    /// Commits refused as `Busy` so far.
    pub busy_refused: AtomicUsize,
    /// `list_nodes` with this `metadata_key` fails (a read that breaks).
    pub failing_metadata_key: Mutex<Option<String>>,
}

impl Faults {
    /// Fails the `n`th write from now (0: none).
    pub fn arm(&self, n: usize) {
        self.writes.store(0, Ordering::SeqCst);
        self.fail_at.store(n, Ordering::SeqCst);
    }

    fn write(&self, what: &str) -> Result<(), StoreError> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fail_at.load(Ordering::SeqCst) == n {
            return Err(StoreError::new(
                StoreErrorKind::Io,
                format!("injected fault at write {n} ({what})"),
            ));
        }
        Ok(())
    }
}

/// SQLite with faults.
pub struct FaultyStore {
    /// The real store.
    pub inner: SqliteStore,
    /// The switches.
    pub faults: Arc<Faults>,
}

impl Store for FaultyStore {
    fn backend_name(&self) -> &'static str {
        "faulty-sqlite"
    }

    fn begin(&self, mode: TxMode) -> Result<Box<dyn Tx + '_>, StoreError> {
        Ok(Box::new(FaultyTx {
            inner: self.inner.begin(mode)?,
            faults: &self.faults,
        }))
    }

    fn compact(&self) -> Result<Vec<String>, StoreError> {
        self.inner.compact()
    }
}

struct FaultyTx<'a> {
    inner: Box<dyn Tx + 'a>,
    faults: &'a Faults,
}

impl FaultyTx<'_> {
    fn poison(&self, mut n: Node) -> Node {
        if *self.faults.nan_node.lock().unwrap() == Some(n.id) {
            n.confidence = f64::NAN;
        }
        n
    }
}

impl Tx for FaultyTx<'_> {
    fn insert_event(&mut self, event: &Event) -> Result<i64, StoreError> {
        self.faults.write("insert_event")?;
        self.inner.insert_event(event)
    }
    fn event_id_by_source(
        &mut self,
        owner: &OwnerId,
        source_id: &SourceId,
    ) -> Result<Option<Uuid>, StoreError> {
        self.inner.event_id_by_source(owner, source_id)
    }
    fn get_event(&mut self, id: Uuid) -> Result<Option<StoredEvent>, StoreError> {
        self.inner.get_event(id)
    }
    fn list_events(&mut self, query: &EventQuery) -> Result<Vec<StoredEvent>, StoreError> {
        self.inner.list_events(query)
    }
    fn insert_node(&mut self, node: &Node) -> Result<(), StoreError> {
        self.faults.write("insert_node")?;
        self.inner.insert_node(node)
    }
    fn get_node(&mut self, id: Uuid) -> Result<Option<Node>, StoreError> {
        Ok(self.inner.get_node(id)?.map(|n| self.poison(n)))
    }
    fn list_nodes(&mut self, query: &NodeQuery) -> Result<Vec<StoredNode>, StoreError> {
        let failing = self.faults.failing_metadata_key.lock().unwrap().clone();
        if failing.is_some() && query.metadata_key == failing {
            return Err(StoreError::new(
                StoreErrorKind::Corrupted,
                format!("injected read fault (metadata key {failing:?})"),
            ));
        }
        self.inner.list_nodes(query)
    }
    fn insert_edge(&mut self, edge: &Edge) -> Result<(), StoreError> {
        self.faults.write("insert_edge")?;
        self.inner.insert_edge(edge)
    }
    fn update_node(&mut self, node: &Node) -> Result<(), StoreError> {
        self.faults.write("update_node")?;
        self.inner.update_node(node)
    }
    fn subject_claims(
        &mut self,
        subject: Uuid,
        predicates: &[String],
    ) -> Result<Vec<Node>, StoreError> {
        self.inner.subject_claims(subject, predicates)
    }
    fn edges_of(&mut self, node: Uuid) -> Result<Vec<Edge>, StoreError> {
        self.inner.edges_of(node)
    }
    fn get_edge(&mut self, id: Uuid) -> Result<Option<Edge>, StoreError> {
        self.inner.get_edge(id)
    }
    fn delete_edge(&mut self, id: Uuid) -> Result<(), StoreError> {
        self.faults.write("delete_edge")?;
        self.inner.delete_edge(id)
    }
    fn close_edge(&mut self, id: Uuid, at: kith_core::Timestamp) -> Result<(), StoreError> {
        self.faults.write("close_edge")?;
        self.inner.close_edge(id, at)
    }
    fn reopen_edge(&mut self, id: Uuid) -> Result<(), StoreError> {
        self.faults.write("reopen_edge")?;
        self.inner.reopen_edge(id)
    }
    fn tombstone_event(&mut self, id: Uuid, tombstone: &Tombstone) -> Result<(), StoreError> {
        self.faults.write("tombstone_event")?;
        self.inner.tombstone_event(id, tombstone)
    }
    fn delete_nodes(&mut self, ids: &[Uuid]) -> Result<DeletedNodes, StoreError> {
        self.faults.write("delete_nodes")?;
        self.inner.delete_nodes(ids)
    }
    fn delete_edges_from_events(
        &mut self,
        owner: &OwnerId,
        events: &[Uuid],
    ) -> Result<u64, StoreError> {
        self.inner.delete_edges_from_events(owner, events)
    }
    fn delete_work_item(&mut self, event_id: Uuid) -> Result<bool, StoreError> {
        self.inner.delete_work_item(event_id)
    }
    fn rewrite_operation(&mut self, op: &Operation) -> Result<(), StoreError> {
        self.faults.write("rewrite_operation")?;
        self.inner.rewrite_operation(op)
    }
    fn append_operation(&mut self, op: &Operation) -> Result<(), StoreError> {
        self.faults.write("append_operation")?;
        self.inner.append_operation(op)
    }
    fn get_operation(&mut self, id: Uuid) -> Result<Option<Operation>, StoreError> {
        self.inner.get_operation(id)
    }
    fn scan_operations(
        &mut self,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Operation)>, StoreError> {
        self.inner.scan_operations(after_seq, limit)
    }
    fn list_operations(&mut self, query: &OperationQuery) -> Result<Vec<Operation>, StoreError> {
        self.inner.list_operations(query)
    }
    fn count_operations(
        &mut self,
        owner: &OwnerId,
        kind: kith_core::OperationKind,
    ) -> Result<u64, StoreError> {
        self.inner.count_operations(owner, kind)
    }
    fn operation_stamps(
        &mut self,
        owner: &OwnerId,
        kind: kith_core::OperationKind,
        limit: usize,
    ) -> Result<Vec<kith_store::OperationStamp>, StoreError> {
        self.inner.operation_stamps(owner, kind, limit)
    }
    fn delete_operations(
        &mut self,
        owner: &OwnerId,
        kind: kith_core::OperationKind,
        ids: &[Uuid],
    ) -> Result<u64, StoreError> {
        self.faults.write("delete_operations")?;
        self.inner.delete_operations(owner, kind, ids)
    }
    fn insert_work_item(&mut self, item: &WorkItem) -> Result<(), StoreError> {
        self.faults.write("insert_work_item")?;
        self.inner.insert_work_item(item)
    }
    fn get_work_item(&mut self, event_id: Uuid) -> Result<Option<WorkItem>, StoreError> {
        self.inner.get_work_item(event_id)
    }
    fn update_work_item(&mut self, item: &WorkItem) -> Result<(), StoreError> {
        self.faults.write("update_work_item")?;
        self.inner.update_work_item(item)
    }
    fn list_work_items(&mut self, query: &WorkQuery) -> Result<Vec<WorkItem>, StoreError> {
        self.inner.list_work_items(query)
    }
    fn search_lexical(&mut self, query: &LexicalQuery) -> Result<Vec<LexicalHit>, StoreError> {
        self.inner.search_lexical(query)
    }
    fn put_embedding(
        &mut self,
        node_id: Uuid,
        model: &str,
        vector: &[f32],
    ) -> Result<(), StoreError> {
        self.faults.write("put_embedding")?;
        self.inner.put_embedding(node_id, model, vector)
    }
    fn get_embedding(&mut self, node_id: Uuid) -> Result<Option<(String, Vec<f32>)>, StoreError> {
        self.inner.get_embedding(node_id)
    }
    fn nodes_missing_embedding(
        &mut self,
        owner: Option<&OwnerId>,
        model: &str,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<StoredNode>, StoreError> {
        self.inner
            .nodes_missing_embedding(owner, model, after_seq, limit)
    }
    fn delete_embeddings(&mut self) -> Result<u64, StoreError> {
        self.faults.write("delete_embeddings")?;
        self.inner.delete_embeddings()
    }
    fn delete_node_embeddings(&mut self, ids: &[Uuid]) -> Result<u64, StoreError> {
        self.faults.write("delete_node_embeddings")?;
        self.inner.delete_node_embeddings(ids)
    }
    fn embedding_models(&mut self) -> Result<Vec<EmbeddingModelCount>, StoreError> {
        self.inner.embedding_models()
    }
    fn search_vector(&mut self, query: &VectorQuery) -> Result<Vec<LexicalHit>, StoreError> {
        self.inner.search_vector(query)
    }
    fn stats(&mut self, owner: Option<&OwnerId>) -> Result<Stats, StoreError> {
        self.inner.stats(owner)
    }
    fn check_integrity(&mut self) -> Result<Vec<String>, StoreError> {
        self.inner.check_integrity()
    }
    fn get_setting(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        self.inner.get_setting(key)
    }
    fn set_setting(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError> {
        self.faults.write("set_setting")?;
        self.inner.set_setting(key, value)
    }
    fn write_generation(&mut self) -> Result<Option<u64>, StoreError> {
        self.inner.write_generation()
    }
    fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.faults.write("commit")?;
        let busy = self
            .faults
            .busy_commits
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if busy.is_ok() {
            self.faults.busy_refused.fetch_add(1, Ordering::SeqCst);
            // Dropping `self` rolls the inner transaction back, as a server
            // does after a serialization failure.
            return Err(StoreError::new(
                StoreErrorKind::Busy,
                "injected serialization failure [SQLSTATE 40001]; retryable",
            ));
        }
        self.inner.commit()
    }
}
