//! Vector search for the SQLite backend.
//!
//! Vectors live in the `embeddings` table (one row per node, little-endian
//! f32). Scanning them from SQLite on every query would read the whole table,
//! so the store keeps an in-memory copy, [`VectorCache`], shared by every
//! transaction of one [`super::SqliteStore`]:
//!
//! - Searches read a published, immutable snapshot and scan it with no lock
//!   held, so concurrent searches never wait for each other. A search whose
//!   transaction sees rows the snapshot lacks brings the writer's copy up to
//!   date (under its mutex) and publishes a new snapshot; searches already
//!   scanning keep the old one.
//! - It grows incrementally: the rows whose `seq` is above the last one
//!   loaded (the table is written only under SQLite's one write lock, so
//!   `seq` follows commit order and nothing is skipped, even when another
//!   process wrote them).
//! - A replaced embedding gets a new `seq`; the cache keeps one slot per
//!   node and overwrites it.
//! - Deleting rows (forget, `delete_embeddings`) bumps
//!   `meta.embeddings_generation`; a cache that sees another generation
//!   drops every row whose `seq` the table no longer has (zeroing its
//!   numbers and taking it out of the index), without reloading the rest.
//! - Each row carries the node attributes that never change after the
//!   node's event is written (scope, session, role, type, times), so the scan
//!   filters without touching SQLite. Lifecycle can change, so the best
//!   candidates are re-checked against `nodes` in the caller's transaction,
//!   which also fetches their provenance.
//!
//! - An owner's IVF index is trained on another thread
//!   ([`IndexBuild::Background`]): until it is ready, searches scan every
//!   row (or the index it replaces). The first search to find it ready
//!   without waiting for the writer's mutex installs and publishes it.
//!
//! The scan itself (exact, or through an IVF index for big owners) is
//! [`crate::vector_scan`], shared with PostgreSQL.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use kith_core::{NodeType, Role};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection};
use uuid::Uuid;

use super::lexical::{apply_filters, decode_hit};
use super::sql::Select;
use super::{map_err, query_all};
use crate::vector_scan::{IndexBuild, Matrix, MatrixView, RowMeta};
use crate::{LexicalHit, StoreError, StoreErrorKind, VectorQuery};

/// Encodes a vector as the table stores it.
pub fn encode(vector: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vector.len() * 4);
    for v in vector {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Decodes a stored vector; `None` if the blob is not whole f32s.
pub fn decode(blob: &[u8]) -> Option<Vec<f32>> {
    let mut out = Vec::new();
    decode_into(blob, &mut out).then_some(out)
}

/// Decodes a stored vector into `out` (replacing what it held, keeping its
/// allocation); false, with `out` left empty, if the blob is not whole f32s.
fn decode_into(blob: &[u8], out: &mut Vec<f32>) -> bool {
    out.clear();
    if !blob.len().is_multiple_of(4) {
        return false;
    }
    out.extend(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    true
}

/// The in-memory copy of the `embeddings` table: a writer's copy behind a
/// mutex, and the snapshot it last published behind a read-write lock.
/// Searches clone the published `Arc` (a read lock held for a pointer copy)
/// and scan it with no lock held; only a search that finds the snapshot
/// behind its transaction takes the writer's mutex to bring it up to date.
#[derive(Debug, Default)]
pub struct VectorCache {
    published: RwLock<Arc<Snapshot>>,
    writer: Mutex<Writer>,
}

/// What searches scan: immutable once published.
#[derive(Debug, Default)]
struct Snapshot {
    generation: Option<String>,
    /// Every row up to this `seq` is in (or was deleted before) the copy.
    last_seq: i64,
    matrices: HashMap<(String, String), Arc<MatrixView>>,
    /// True while an index for one of the matrices is being trained.
    building: bool,
}

/// The copy being brought up to date.
#[derive(Debug, Default)]
struct Writer {
    generation: Option<String>,
    last_seq: i64,
    matrices: HashMap<(String, String), Matrix>,
}

/// The embeddings generation and the newest `seq` a transaction sees: the
/// highest ever handed out (`AUTOINCREMENT` keeps it in `sqlite_sequence`),
/// not `max(seq)`, which falls when the newest rows are deleted and would
/// then pass a deleted row off as one written after the transaction began.
const STATE_SQL: &str = "SELECT (SELECT value FROM meta WHERE key = 'embeddings_generation'),
        coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'embeddings'), 0)";

fn poisoned() -> StoreError {
    StoreError::new(StoreErrorKind::Other, "vector cache lock poisoned")
}

impl VectorCache {
    /// The snapshot published last.
    fn current(&self) -> Result<Arc<Snapshot>, StoreError> {
        Ok(Arc::clone(&*self.published.read().map_err(|_| poisoned())?))
    }

    /// A snapshot holding every row `conn`'s transaction sees, without
    /// rows it does not (deleted ones), published for the searches after;
    /// and the newest `seq` the transaction sees (newer rows in the
    /// snapshot are skipped by the scan).
    fn snapshot_for(&self, conn: &Connection) -> Result<(Arc<Snapshot>, i64), StoreError> {
        let (generation, max_seq): (Option<String>, i64) = conn
            .query_row(STATE_SQL, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(map_err)?;
        let snap = self.current()?;
        if snap.generation == generation && snap.last_seq >= max_seq {
            if snap.building {
                // Never wait here: if the writer is busy, the next search
                // looks again.
                if let Ok(mut w) = self.writer.try_lock() {
                    let ready: HashSet<(String, String)> = w
                        .matrices
                        .iter_mut()
                        .filter_map(|(key, m)| m.install_ready().then(|| key.clone()))
                        .collect();
                    if !ready.is_empty() {
                        return Ok((self.publish(&w, &ready, false)?, max_seq));
                    }
                }
            }
            return Ok((snap, max_seq));
        }
        let mut w = self.writer.lock().map_err(|_| poisoned())?;
        // Another search may have done the work while this one waited.
        let snap = self.current()?;
        if snap.generation == generation && snap.last_seq >= max_seq {
            return Ok((snap, max_seq));
        }
        let mut dirty: HashSet<(String, String)> = HashSet::new();
        let mut all_dirty = false;
        if w.generation != generation {
            // Rows were deleted (forget, a model switch): drop from the copy
            // every row the table no longer has. By `seq`, which a row keeps
            // for life; reading the seqs alone is a walk of an index.
            if let Err(e) = reconcile(conn, &mut w, max_seq) {
                *w = Writer::default();
                self.publish(&w, &HashSet::new(), true)?;
                return Err(e);
            }
            w.generation = generation;
            all_dirty = true;
        }
        let started = std::time::Instant::now();
        match grow(conn, &mut w, &mut dirty, max_seq) {
            Ok(rows) if rows > 0 => tracing::debug!(
                rows,
                ms = started.elapsed().as_secs_f64() * 1000.0,
                "vector cache: rows copied from SQLite"
            ),
            Ok(_) => {}
            Err(e) => {
                // A copy that stopped half way would answer from half the rows.
                *w = Writer::default();
                self.publish(&w, &HashSet::new(), true)?;
                return Err(e);
            }
        }
        for (key, m) in w.matrices.iter_mut() {
            if dirty.contains(key) || m.is_building() {
                m.maintain_index(IndexBuild::Background);
                dirty.insert(key.clone());
            }
        }
        // Every row up to `max_seq` is now in (or was deleted).
        w.last_seq = w.last_seq.max(max_seq);
        Ok((self.publish(&w, &dirty, all_dirty)?, max_seq))
    }

    /// [`crate::Store::vector_probe`]: the search's and the exact scan's
    /// answers for `q` from the snapshot `conn` sees.
    pub fn probe(
        &self,
        conn: &Connection,
        q: &VectorQuery,
        k: usize,
    ) -> Result<Option<crate::VectorProbe>, StoreError> {
        let (snap, max_seq) = self.snapshot_for(conn)?;
        let Some(m) = snap
            .matrices
            .get(&(q.owner.as_str().to_string(), q.model.clone()))
        else {
            return Ok(None);
        };
        let ids = |hits: Vec<(Uuid, f32)>| hits.into_iter().map(|h| h.0).collect();
        let started = std::time::Instant::now();
        let searched = ids(m.scan(q, max_seq, k));
        let searched_ms = started.elapsed().as_secs_f64() * 1000.0;
        let started = std::time::Instant::now();
        let exact = ids(m.scan_exact(q, max_seq, k));
        let exact_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(Some(crate::VectorProbe {
            searched,
            exact,
            indexed: m.is_indexed(),
            building: snap.building,
            rows: m.len(),
            searched_ms,
            exact_ms,
        }))
    }

    /// Publishes the writer's copy: views of the matrices that changed, the
    /// previous snapshot's views of the others.
    fn publish(
        &self,
        w: &Writer,
        dirty: &HashSet<(String, String)>,
        all: bool,
    ) -> Result<Arc<Snapshot>, StoreError> {
        let old = self.current()?;
        let matrices = w
            .matrices
            .iter()
            .map(|(key, m)| {
                let view = match old.matrices.get(key) {
                    Some(v) if !all && !dirty.contains(key) => Arc::clone(v),
                    _ => m.view(),
                };
                (key.clone(), view)
            })
            .collect();
        let snap = Arc::new(Snapshot {
            generation: w.generation.clone(),
            last_seq: w.last_seq,
            matrices,
            building: w.matrices.values().any(Matrix::is_building),
        });
        *self.published.write().map_err(|_| poisoned())? = Arc::clone(&snap);
        Ok(snap)
    }
}

/// Removes from `w` the rows whose `seq` the table no longer has, as far
/// as `conn`'s transaction can tell: rows above its newest `seq`
/// (`max_seq`) were copied by a later transaction and are kept. Without
/// that, a search whose transaction began before a write and reached the
/// copy after it would drop the write's rows for good (the copy has
/// already grown past them).
fn reconcile(conn: &Connection, w: &mut Writer, max_seq: i64) -> Result<(), StoreError> {
    if w.matrices.is_empty() {
        return Ok(());
    }
    let mut stmt = conn
        .prepare_cached("SELECT seq FROM embeddings")
        .map_err(map_err)?;
    let live: HashSet<i64> = stmt
        .query_map([], |r| r.get(0))
        .map_err(map_err)?
        .collect::<Result<_, _>>()
        .map_err(map_err)?;
    for m in w.matrices.values_mut() {
        m.retain_seqs(|seq| seq > max_seq || live.contains(&seq));
    }
    w.matrices.retain(|_, m| !m.is_empty());
    Ok(())
}

/// The rows a copy is missing, in commit order, with the node attributes
/// the scan filters on.
const GROW_SQL: &str =
    "SELECT e.seq, e.node_id, e.owner_id, e.model, e.vector, n.scope, n.session_id,
            n.source_role, n.node_type, n.effective_ms, n.created_ms
     FROM embeddings e JOIN nodes n ON n.id = e.node_id
     WHERE e.seq > ?1 ORDER BY e.seq";

/// Copies of at least this many rows (by `seq`, an upper bound) read
/// SQLite on the calling thread while another absorbs the rows into the
/// matrices (copying, quantising, placing): the two halves cost about the
/// same, so on two cores a first search of a big owner loads in about
/// half the time. Smaller copies (a search after a few writes) stay on one
/// thread.
const PIPELINE_ROWS: i64 = 2_048;

/// Rows handed from the reading thread to the absorbing one at a time.
const BATCH_ROWS: usize = 512;

/// Rows read from SQLite, waiting to be absorbed.
#[derive(Default)]
struct Batch {
    /// Where each run of rows of one owner and model starts, and its key.
    runs: Vec<(usize, (String, String))>,
    metas: Vec<RowMeta>,
    /// The rows' vectors one after another; row `i` ends at `ends[i]`.
    vectors: Vec<f32>,
    ends: Vec<usize>,
}

impl Batch {
    fn push(&mut self, owner: &str, model: &str, meta: RowMeta, vector: &[f32]) {
        let same = self
            .runs
            .last()
            .is_some_and(|(_, (o, m))| o == owner && m == model);
        if !same {
            let key = (owner.to_string(), model.to_string());
            self.runs.push((self.metas.len(), key));
        }
        self.metas.push(meta);
        self.vectors.extend_from_slice(vector);
        self.ends.push(self.vectors.len());
    }

    fn clear(&mut self) {
        self.runs.clear();
        self.metas.clear();
        self.vectors.clear();
        self.ends.clear();
    }
}

/// Copies the rows above `w.last_seq` that `conn` sees (up to `max_seq`,
/// which only decides whether to pipeline); names the matrices that
/// changed in `dirty`; returns how many rows it copied.
///
/// A first search of a big owner copies every row here (a million at 384
/// dimensions is 1.5 GB of blobs), so rows are read borrowing SQLite's
/// columns (no per-row copies of strings or blobs) and big copies are
/// pipelined ([`PIPELINE_ROWS`]).
fn grow(
    conn: &Connection,
    w: &mut Writer,
    dirty: &mut HashSet<(String, String)>,
    max_seq: i64,
) -> Result<usize, StoreError> {
    let mut stmt = conn.prepare_cached(GROW_SQL).map_err(map_err)?;
    let mut rows = stmt.query(params![w.last_seq]).map_err(map_err)?;
    let pipelined = max_seq - w.last_seq >= PIPELINE_ROWS;
    let Writer {
        matrices, last_seq, ..
    } = w;
    if !pipelined {
        return read_batches(&mut rows, |mut batch| {
            absorb(matrices, last_seq, dirty, &mut batch)?;
            Ok(Some(batch))
        });
    }
    std::thread::scope(|s| {
        let (send, receive) = std::sync::mpsc::sync_channel::<Batch>(4);
        let (give_back, take_back) = std::sync::mpsc::channel::<Batch>();
        let absorber = s.spawn(move || -> Result<(), StoreError> {
            for mut batch in receive {
                absorb(matrices, last_seq, dirty, &mut batch)?;
                // The reader reuses the batch's buffers.
                let _ = give_back.send(batch);
            }
            Ok(())
        });
        let read = read_batches(&mut rows, |batch| {
            if send.send(batch).is_err() {
                // The absorber stopped on an error: it is reported below.
                return Ok(None);
            }
            Ok(Some(take_back.try_recv().unwrap_or_default()))
        });
        drop(send);
        let absorbed = absorber.join().map_err(|_| {
            StoreError::new(StoreErrorKind::Other, "the vector copy's thread panicked")
        })?;
        absorbed?;
        read
    })
}

/// Reads every row of `rows` into batches of [`BATCH_ROWS`] handed to
/// `hand_over`, which returns an empty batch to fill next, or `None` to
/// stop; returns the rows read.
fn read_batches(
    rows: &mut rusqlite::Rows<'_>,
    mut hand_over: impl FnMut(Batch) -> Result<Option<Batch>, StoreError>,
) -> Result<usize, StoreError> {
    let mut vector: Vec<f32> = Vec::new();
    let mut batch = Batch::default();
    let mut copied = 0;
    while let Some(r) = rows.next().map_err(map_err)? {
        let (meta, owner, model) = read_row(r, &mut vector)?;
        batch.push(owner, model, meta, &vector);
        copied += 1;
        if batch.metas.len() == BATCH_ROWS {
            match hand_over(batch)? {
                Some(next) => batch = next,
                None => return Ok(copied),
            }
        }
    }
    if !batch.metas.is_empty() {
        hand_over(batch)?;
    }
    Ok(copied)
}

/// Writes a batch's rows into their matrices (leaving the batch empty).
fn absorb(
    matrices: &mut HashMap<(String, String), Matrix>,
    last_seq: &mut i64,
    dirty: &mut HashSet<(String, String)>,
    batch: &mut Batch,
) -> Result<(), StoreError> {
    let mut metas = batch.metas.drain(..).enumerate().peekable();
    for (r, (_, key)) in batch.runs.iter().enumerate() {
        let end = batch
            .runs
            .get(r + 1)
            .map_or(batch.ends.len(), |next| next.0);
        if !dirty.contains(key) {
            dirty.insert(key.clone());
        }
        let matrix = matrices.entry(key.clone()).or_default();
        while let Some((i, meta)) = metas.next_if(|(i, _)| *i < end) {
            let start = if i == 0 { 0 } else { batch.ends[i - 1] };
            *last_seq = (*last_seq).max(meta.seq);
            matrix
                .upsert(meta, &batch.vectors[start..batch.ends[i]])
                .map_err(|e| StoreError::corrupted(format!("embedding row: {e}")))?;
        }
    }
    drop(metas);
    batch.clear();
    Ok(())
}

/// One row of [`GROW_SQL`]: the scan's attributes, the owner and the model
/// (borrowed from the row); the vector is decoded into `vector`.
fn read_row<'r>(
    r: &'r rusqlite::Row<'_>,
    vector: &mut Vec<f32>,
) -> Result<(RowMeta, &'r str, &'r str), StoreError> {
    let damaged = |what: String| StoreError::corrupted(format!("embedding row: {what}"));
    let value = |i: usize| r.get_ref(i).map_err(map_err);
    let text = |i: usize, what: &str| {
        value(i)?
            .as_str()
            .map_err(|e| damaged(format!("{what}: {e}")))
    };
    let text_or_null = |i: usize, what: &str| {
        value(i)?
            .as_str_or_null()
            .map_err(|e| damaged(format!("{what}: {e}")))
    };
    let int_or_null = |i: usize, what: &str| {
        value(i)?
            .as_i64_or_null()
            .map_err(|e| damaged(format!("{what}: {e}")))
    };
    let seq = value(0)?
        .as_i64()
        .map_err(|e| damaged(format!("seq: {e}")))?;
    let node_id = text(1, "node_id")?;
    let node = Uuid::parse_str(node_id).map_err(|e| damaged(format!("node {node_id}: {e}")))?;
    let blob = value(4)?
        .as_blob()
        .map_err(|e| damaged(format!("node {node_id}: vector: {e}")))?;
    if !decode_into(blob, vector) {
        return Err(damaged(format!(
            "node {node_id}: a vector of {} bytes is not whole f32s",
            blob.len()
        )));
    }
    let meta = RowMeta {
        node_id: node,
        seq,
        scope: text(5, "scope")?.to_string(),
        session: text_or_null(6, "session_id")?.map(str::to_string),
        role: text_or_null(7, "source_role")?
            .map(|s| Role::parse("role", s).map_err(|e| damaged(e.to_string())))
            .transpose()?,
        node_type: NodeType::parse("node_type", text(8, "node_type")?)
            .map_err(|e| damaged(e.to_string()))?,
        effective_ms: int_or_null(9, "effective_ms")?,
        created_ms: int_or_null(10, "created_ms")?,
    };
    Ok((meta, text(2, "owner_id")?, text(3, "model")?))
}

/// `Tx::search_vector` for SQLite: refresh the cache, scan it, then re-check
/// lifecycle and fetch provenance for the best candidates in `conn`'s
/// transaction.
pub fn search(
    conn: &Connection,
    cache: &VectorCache,
    q: &VectorQuery,
) -> Result<Vec<LexicalHit>, StoreError> {
    if q.vector.iter().any(|v| !v.is_finite()) {
        return Err(StoreError::new(
            StoreErrorKind::Other,
            "the query vector holds a non-finite number",
        ));
    }
    let limit = if q.limit == 0 { 10 } else { q.limit };
    // What this transaction can see: rows committed after its snapshot may
    // already be in the shared cache and are skipped by `max_seq`.
    let (snap, max_seq) = cache.snapshot_for(conn)?;
    let matrix = snap
        .matrices
        .get(&(q.owner.as_str().to_string(), q.model.clone()));
    // Lifecycle is re-checked below, so take some slack for candidates that
    // are no longer active (or not of the lifecycle asked for); if the
    // re-check drops too many, ask the scan for more until it runs out.
    let mut k = limit * 2 + 16;
    loop {
        let candidates = matrix.map_or_else(Vec::new, |m| m.scan(q, max_seq, k));
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let mut hits = Vec::with_capacity(candidates.len());
        // Bounded IN lists keep far below SQLite's parameter limit.
        for chunk in candidates.chunks(500) {
            hits.extend(recheck(conn, q, chunk)?);
        }
        if hits.len() < limit && candidates.len() == k {
            k *= 4;
            continue;
        }
        // Rank and exact score of each candidate, as the scan ordered them.
        let rank_of: HashMap<Uuid, (usize, f32)> = candidates
            .iter()
            .enumerate()
            .map(|(rank, (id, score))| (*id, (rank, *score)))
            .collect();
        for h in &mut hits {
            h.score = f64::from(rank_of.get(&h.node_id).map_or(f32::MIN, |r| r.1));
        }
        hits.sort_by_key(|h| rank_of.get(&h.node_id).map_or(usize::MAX, |r| r.0));
        hits.truncate(limit);
        return Ok(hits);
    }
}

/// The candidates that pass every filter in `conn`'s transaction, with
/// their provenance (scores left to the caller).
fn recheck(
    conn: &Connection,
    q: &VectorQuery,
    candidates: &[(Uuid, f32)],
) -> Result<Vec<LexicalHit>, StoreError> {
    let marks = vec!["?"; candidates.len()].join(", ");
    let mut args: Vec<SqlValue> = candidates
        .iter()
        .map(|(id, _)| SqlValue::Text(id.to_string()))
        .collect();
    args.push(SqlValue::Text(q.owner.as_str().to_string()));
    let mut select = Select::new(
        format!(
            "SELECT n.id, 0.0, n.node_type, n.content, n.scope, e.id, e.session_id, e.role,
                    e.speaker, e.event_time, e.ingested_at
             FROM nodes n LEFT JOIN events e ON e.id = n.source_event_id
             WHERE n.id IN ({marks}) AND +n.owner_id = ?"
        ),
        args,
    );
    apply_filters(&mut select, &q.filters);
    // No ORDER BY: sorting by seq would tempt the planner to walk the whole
    // table in seq order instead of looking the candidates up by id; the
    // caller orders the hits.
    let (sql, args) = select.into_parts();
    query_all(conn, &sql, &args, |r| decode_hit(r, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::{OpenMode, SqliteStore};
    use crate::{Store, TxMode};
    use kith_core::event::InputDefaults;
    use kith_core::{Node, ScopeId, Timestamp};

    #[test]
    fn blobs_round_trip_and_reject_torn_lengths() {
        let v = vec![1.5f32, -0.25, 3.0];
        assert_eq!(decode(&encode(&v)).unwrap(), v);
        assert!(decode(&[0, 1, 2]).is_none());
        let mut reused = vec![9.0f32; 7];
        assert!(decode_into(&encode(&v), &mut reused));
        assert_eq!(reused, v);
        assert!(!decode_into(&[0; 5], &mut reused));
        assert!(reused.is_empty());
    }

    /// What a test stored for one node: its owner, model, attributes and
    /// vector as given to `put_embedding`.
    struct Stored {
        owner: String,
        model: String,
        meta: RowMeta,
        vector: Vec<f32>,
    }

    const TYPES: [NodeType; 3] = [NodeType::Note, NodeType::Fact, NodeType::Preference];

    /// Writes `count` nodes numbered from `first` with embeddings: owners,
    /// models, roles, sessions, event times and node types vary by number
    /// (in runs, as bulk imports write them, and interleaved).
    fn store_nodes(store: &SqliteStore, first: usize, count: usize) -> Vec<Stored> {
        let mut rng = kith_core::rng::Rng::new(0x10ad ^ first as u64);
        let mut tx = store.begin(TxMode::Write).unwrap();
        let mut out = Vec::new();
        for i in first..first + count {
            let owner = if i % 500 < 430 { "ana" } else { "ben" };
            let model = if owner == "ben" && i % 3 == 0 {
                "m/b"
            } else {
                "m/a"
            };
            let input = kith_core::EventInput {
                content: format!("message {i}"),
                role: ["user", "assistant"][i % 2].to_string(),
                owner_id: Some(owner.to_string()),
                session_id: (i % 7 != 0).then(|| format!("s{}", i / 40)),
                event_time: (i % 5 == 0).then(|| format!("2024-03-{:02}T10:00:00Z", 1 + i % 28)),
                source_id: Some(format!("m{i}")),
                ..kith_core::EventInput::default()
            };
            let defaults = InputDefaults {
                owner_id: None,
                scope: ScopeId::personal(),
                now: Timestamp::parse("now", "2025-01-01T00:00:00Z").unwrap(),
            };
            let event = input.validate(&defaults).unwrap().event;
            let node = Node::note_for(&event, TYPES[i % 3]);
            tx.insert_event(&event).unwrap();
            tx.insert_node(&node).unwrap();
            let vector: Vec<f32> = (0..4).map(|_| rng.signed_unit() * 3.0).collect();
            tx.put_embedding(node.id, model, &vector).unwrap();
            out.push(Stored {
                owner: owner.to_string(),
                model: model.to_string(),
                meta: RowMeta {
                    node_id: node.id,
                    seq: 0,
                    scope: node.scope.as_str().to_string(),
                    session: node.session_id.as_ref().map(|s| s.as_str().to_string()),
                    role: Some(event.role),
                    node_type: node.node_type,
                    effective_ms: Some(event.effective_time().unix_millis()),
                    created_ms: Some(node.created_at.unix_millis()),
                },
                vector,
            });
        }
        tx.commit().unwrap();
        out
    }

    /// Gives stored node `i` a new vector (a new row, a new seq).
    fn replace(store: &SqliteStore, stored: &mut [Stored], i: usize) {
        let vector: Vec<f32> = stored[i].vector.iter().map(|x| -x * 0.5).collect();
        let mut tx = store.begin(TxMode::Write).unwrap();
        tx.put_embedding(stored[i].meta.node_id, &stored[i].model, &vector)
            .unwrap();
        tx.commit().unwrap();
        stored[i].vector = vector;
    }

    /// Every stored row is in the snapshot, in its owner's and model's
    /// matrix, with its attributes and the very bits of its vector; and
    /// nothing else is.
    fn assert_copy_is(snap: &Snapshot, stored: &[Stored]) {
        let mut want: HashMap<(String, String), Vec<&Stored>> = HashMap::new();
        for s in stored {
            want.entry((s.owner.clone(), s.model.clone()))
                .or_default()
                .push(s);
        }
        assert_eq!(snap.matrices.len(), want.len());
        for (key, rows) in want {
            let m = &snap.matrices[&key];
            let got: HashMap<Uuid, (&RowMeta, &[f32])> = m
                .live_rows()
                .into_iter()
                .map(|(meta, v)| (meta.node_id, (meta, v)))
                .collect();
            assert_eq!(got.len(), rows.len(), "{key:?}");
            for s in rows {
                let (meta, vector) = got[&s.meta.node_id];
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(vector), bits(&s.vector), "{key:?}");
                assert_eq!(
                    *meta,
                    RowMeta {
                        seq: meta.seq,
                        ..s.meta.clone()
                    }
                );
                assert!(meta.seq > 0 && meta.seq <= snap.last_seq);
            }
        }
    }

    /// Issue 22 goal 2: the first search of a big owner copies every row in
    /// one pass (the loop borrowing SQLite's columns); what it copies must
    /// be what was stored, across segments, owners, models, replacements
    /// and a later incremental copy.
    #[test]
    fn the_copy_holds_exactly_what_was_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kith.sqlite");
        let store = SqliteStore::open(&path, OpenMode::CreateIfMissing).unwrap();
        let mut stored = store_nodes(&store, 0, 2_600);
        for i in [3, 1_500, 2_599] {
            replace(&store, &mut stored, i);
        }
        let conn = Connection::open(&path).unwrap();
        let cache = VectorCache::default();
        let (snap, _) = cache.snapshot_for(&conn).unwrap();
        assert!(snap.matrices[&("ana".into(), "m/a".into())].len() > 2 * 1024);
        assert_copy_is(&snap, &stored);
        // More rows and replacements, copied into the existing matrices.
        stored.extend(store_nodes(&store, 2_600, 700));
        for i in [0, 2_000, 3_000] {
            replace(&store, &mut stored, i);
        }
        let (snap, _) = cache.snapshot_for(&conn).unwrap();
        assert_copy_is(&snap, &stored);
    }

    /// A torn blob (not whole f32s) or a vector of another dimension is a
    /// typed corruption error naming the node, and leaves no half copy:
    /// the cache is empty until the row is mended, then whole. (The test
    /// above covers both the pipelined first copy and a small one after.)
    #[test]
    fn a_damaged_row_is_refused_and_leaves_no_half_copy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kith.sqlite");
        let store = SqliteStore::open(&path, OpenMode::CreateIfMissing).unwrap();
        // Enough rows for a pipelined copy, the damaged one past the first
        // batches: the torn blob stops the reading thread, the wrong
        // dimension the absorbing one.
        let stored = store_nodes(&store, 0, PIPELINE_ROWS as usize + 100);
        let conn = Connection::open(&path).unwrap();
        let victim = stored[1_700].meta.node_id.to_string();
        let good = encode(&stored[1_700].vector);
        for (blob, says) in [
            (vec![0u8, 1, 2, 3, 4, 5, 6], "not whole f32s"),
            (encode(&[0.5, 0.5]), "dimension 2"),
        ] {
            conn.execute(
                "UPDATE embeddings SET vector = ?1 WHERE node_id = ?2",
                params![blob, victim],
            )
            .unwrap();
            let cache = VectorCache::default();
            let err = cache.snapshot_for(&conn).unwrap_err();
            assert_eq!(err.kind(), StoreErrorKind::Corrupted);
            let text = err.to_string();
            assert!(text.contains(&victim) && text.contains(says), "{text}");
            assert!(cache.current().unwrap().matrices.is_empty());
        }
        conn.execute(
            "UPDATE embeddings SET vector = ?1 WHERE node_id = ?2",
            params![good, victim],
        )
        .unwrap();
        let cache = VectorCache::default();
        let (snap, _) = cache.snapshot_for(&conn).unwrap();
        assert_copy_is(&snap, &stored);
    }
}
