//! Exact vector search for the SQLite backend.
//!
//! Vectors live in the `embeddings` table (one row per node, little-endian
//! f32). Scanning them from SQLite on every query would read the whole table,
//! so the store keeps an in-memory copy, [`VectorCache`], shared by every
//! transaction of one [`super::SqliteStore`]:
//!
//! - It grows incrementally: each search first reads the rows whose `seq` is
//!   above the last one loaded (the table is written only under SQLite's one
//!   write lock, so `seq` follows commit order and nothing is skipped, even
//!   when another process wrote them).
//! - A replaced embedding gets a new `seq`; the cache keeps one slot per
//!   node and overwrites it.
//! - `delete_embeddings` bumps `meta.embeddings_generation`; a cache that
//!   sees another generation starts over.
//! - Each row carries the node attributes that never change after the
//!   node's event is written (scope, session, role, type, times), so the scan
//!   filters without touching SQLite. Lifecycle can change, so the best
//!   candidates are re-checked against `nodes` in the caller's transaction,
//!   which also fetches their provenance.
//!
//! The scan itself is [`crate::vector_scan`], shared with PostgreSQL.

use std::collections::HashMap;

use kith_core::{NodeType, Role};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension};
use uuid::Uuid;

use super::lexical::{apply_filters, decode_hit};
use super::sql::Select;
use super::{map_err, query_all};
use crate::vector_scan::{Matrix, RowMeta};
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

/// The in-memory copy of the `embeddings` table.
#[derive(Debug, Default)]
pub struct VectorCache {
    generation: Option<String>,
    last_seq: i64,
    matrices: HashMap<(String, String), Matrix>,
}

impl VectorCache {
    /// The best `k` rows of one owner and model visible at `max_seq`.
    fn scan(&self, q: &VectorQuery, max_seq: i64, k: usize) -> Vec<(Uuid, f32)> {
        self.matrices
            .get(&(q.owner.as_str().to_string(), q.model.clone()))
            .map_or_else(Vec::new, |m| m.scan(q, max_seq, k))
    }

    /// Brings the cache up to what `conn`'s transaction sees.
    fn refresh(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let generation: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'embeddings_generation'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(map_err)?;
        if generation != self.generation {
            *self = VectorCache {
                generation,
                ..VectorCache::default()
            };
        }
        let mut stmt = conn
            .prepare_cached(
                "SELECT e.seq, e.node_id, e.owner_id, e.model, e.vector, n.scope, n.session_id,
                        n.source_role, n.node_type, n.effective_ms, n.created_ms
                 FROM embeddings e JOIN nodes n ON n.id = e.node_id
                 WHERE e.seq > ?1 ORDER BY e.seq",
            )
            .map_err(map_err)?;
        let mut rows = stmt.query(params![self.last_seq]).map_err(map_err)?;
        while let Some(r) = rows.next().map_err(map_err)? {
            let damaged = |what: String| StoreError::corrupted(format!("embedding row: {what}"));
            let seq: i64 = r.get(0).map_err(map_err)?;
            let node_id: String = r.get(1).map_err(map_err)?;
            let owner: String = r.get(2).map_err(map_err)?;
            let model: String = r.get(3).map_err(map_err)?;
            let blob: Vec<u8> = r.get(4).map_err(map_err)?;
            let vector =
                decode(&blob).ok_or_else(|| damaged(format!("node {node_id}: bad blob")))?;
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
            self.last_seq = seq;
            self.matrices
                .entry((owner, model))
                .or_default()
                .upsert(meta, &vector)
                .map_err(damaged)?;
        }
        Ok(())
    }
}

/// `Tx::search_vector` for SQLite: refresh the cache, scan it, then re-check
/// lifecycle and fetch provenance for the best candidates in `conn`'s
/// transaction.
pub fn search(
    conn: &Connection,
    cache: &std::sync::Mutex<VectorCache>,
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
    // already be in the shared cache and are skipped.
    let max_seq: i64 = conn
        .query_row("SELECT coalesce(max(seq), 0) FROM embeddings", [], |r| {
            r.get(0)
        })
        .map_err(map_err)?;
    // Lifecycle is re-checked below, so take some slack for candidates that
    // are no longer active (or not of the lifecycle asked for); if the
    // re-check drops too many, ask the scan for more until it runs out.
    let mut k = limit * 2 + 16;
    loop {
        let candidates = {
            let mut cache = cache.lock().map_err(|_| {
                StoreError::new(StoreErrorKind::Other, "vector cache lock poisoned")
            })?;
            cache.refresh(conn)?;
            cache.scan(q, max_seq, k)
        };
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
