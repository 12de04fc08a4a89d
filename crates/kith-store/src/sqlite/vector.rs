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
    if !blob.len().is_multiple_of(4) {
        return None;
    }
    Some(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
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
        if let Err(e) = grow(conn, &mut w, &mut dirty) {
            // A copy that stopped half way would answer from half the rows.
            *w = Writer::default();
            self.publish(&w, &HashSet::new(), true)?;
            return Err(e);
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

/// Copies the rows above `w.last_seq` that `conn` sees; names the matrices
/// that changed in `dirty`.
fn grow(
    conn: &Connection,
    w: &mut Writer,
    dirty: &mut HashSet<(String, String)>,
) -> Result<(), StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT e.seq, e.node_id, e.owner_id, e.model, e.vector, n.scope, n.session_id,
                    n.source_role, n.node_type, n.effective_ms, n.created_ms
             FROM embeddings e JOIN nodes n ON n.id = e.node_id
             WHERE e.seq > ?1 ORDER BY e.seq",
        )
        .map_err(map_err)?;
    let mut rows = stmt.query(params![w.last_seq]).map_err(map_err)?;
    while let Some(r) = rows.next().map_err(map_err)? {
        let damaged = |what: String| StoreError::corrupted(format!("embedding row: {what}"));
        let seq: i64 = r.get(0).map_err(map_err)?;
        let node_id: String = r.get(1).map_err(map_err)?;
        let owner: String = r.get(2).map_err(map_err)?;
        let model: String = r.get(3).map_err(map_err)?;
        let blob: Vec<u8> = r.get(4).map_err(map_err)?;
        let vector = decode(&blob).ok_or_else(|| damaged(format!("node {node_id}: bad blob")))?;
        let role: Option<String> = r.get(7).map_err(map_err)?;
        let meta = RowMeta {
            node_id: Uuid::parse_str(&node_id).map_err(|e| damaged(e.to_string()))?,
            seq,
            scope: r.get(5).map_err(map_err)?,
            session: r.get(6).map_err(map_err)?,
            role: role
                .map(|s| Role::parse("role", &s).map_err(|e| damaged(e.to_string())))
                .transpose()?,
            node_type: NodeType::parse("node_type", &r.get::<_, String>(8).map_err(map_err)?)
                .map_err(|e| damaged(e.to_string()))?,
            effective_ms: r.get(9).map_err(map_err)?,
            created_ms: r.get(10).map_err(map_err)?,
        };
        w.last_seq = w.last_seq.max(seq);
        let key = (owner, model);
        w.matrices
            .entry(key.clone())
            .or_default()
            .upsert(meta, &vector)
            .map_err(damaged)?;
        dirty.insert(key);
    }
    Ok(())
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

    #[test]
    fn blobs_round_trip_and_reject_torn_lengths() {
        let v = vec![1.5f32, -0.25, 3.0];
        assert_eq!(decode(&encode(&v)).unwrap(), v);
        assert!(decode(&[0, 1, 2]).is_none());
    }
}
