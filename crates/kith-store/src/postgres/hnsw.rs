//! pgvector's HNSW index as an opt-in vector path (`KITH_PG_VECTOR_INDEX=hnsw`
//! or [`super::PgOptions::hnsw`]), measured against the in-process copy by
//! `kith bench owners --hnsw` (BENCHMARKS.md).
//!
//! The `embeddings.vector` column has no fixed dimension (models differ),
//! and an HNSW index needs one, so the index is on the expression
//! `vector::vector(N)` for the rows with `dim = N` (a partial index per
//! dimension, made by [`create_index`]). A search asks for the owner's rows
//! of the model in the index's order, with pgvector's iterative scan on so
//! that the owner filter (applied after the graph walk) still fills `k`
//! rows. The engine re-checks the candidates as for the exact paths.
//!
//! Not the default: the exact in-process copy answers exactly, and at many
//! owners each owner's rows are few, which an index over every owner's
//! vectors does not know.

use std::time::{Duration, Instant};

use kith_core::OwnerId;
use postgres::NoTls;
use uuid::Uuid;

use super::search::PgVector;
use super::{map_err, PgTx};
use crate::{StoreError, StoreErrorKind, VectorQuery};

/// Whether `KITH_PG_VECTOR_INDEX` asks for HNSW (`hnsw`); unset or `none`:
/// no.
pub fn from_env() -> Result<bool, StoreError> {
    match std::env::var("KITH_PG_VECTOR_INDEX")
        .as_deref()
        .map(str::trim)
    {
        Err(_) | Ok("") | Ok("none") => Ok(false),
        Ok("hnsw") => Ok(true),
        Ok(other) => Err(StoreError::new(
            StoreErrorKind::Other,
            format!("KITH_PG_VECTOR_INDEX is {other:?}; use none or hnsw"),
        )),
    }
}

/// The index's name for `dim`-dimensional vectors.
fn index_name(dim: usize) -> String {
    format!("embeddings_hnsw_{dim}")
}

/// Builds the HNSW index (cosine distance) over the database's
/// `dim`-dimensional vectors, if it does not exist; returns how long it
/// took. `m` and `ef_construction` are pgvector's defaults (16, 64).
pub fn create_index(url: &str, dim: usize) -> Result<Duration, StoreError> {
    if dim == 0 || dim > 2000 {
        return Err(StoreError::new(
            StoreErrorKind::Other,
            format!("an HNSW index holds 1 to 2,000 dimensions, not {dim}"),
        ));
    }
    let mut client = postgres::Client::connect(url, NoTls).map_err(map_err)?;
    let started = Instant::now();
    client
        .batch_execute(&format!(
            "SET maintenance_work_mem = '1GB';
             CREATE INDEX IF NOT EXISTS {name} ON embeddings
                 USING hnsw ((vector::vector({dim})) vector_cosine_ops) WHERE dim = {dim}",
            name = index_name(dim)
        ))
        .map_err(|e| map_err(e).context_hnsw())?;
    Ok(started.elapsed())
}

/// The `k` nearest of `q.owner`'s vectors of `q.model` by the index, best
/// first, with their cosine similarity (vectors are unit length).
pub(super) fn search(
    tx: &mut PgTx<'_>,
    q: &VectorQuery,
    k: usize,
) -> Result<Vec<(Uuid, f32)>, StoreError> {
    let dim = q.vector.len();
    // One round trip: the scan settings for this transaction only.
    // ef_search bounds the candidates a walk keeps; below k it returns
    // fewer than k.
    tx.execute_batch(&format!(
        "SET LOCAL hnsw.iterative_scan = relaxed_order;
         SET LOCAL hnsw.ef_search = {}",
        k.clamp(40, 1000)
    ))?;
    let sql = format!(
        "SELECT node_id, (1 - (vector::vector({dim}) <=> $3::vector({dim})))::float4
         FROM embeddings
         WHERE owner_id = $1 AND model = $2 AND dim = {dim}
         ORDER BY vector::vector({dim}) <=> $3::vector({dim})
         LIMIT $4"
    );
    let owner: &OwnerId = &q.owner;
    let rows = tx.query(
        &sql,
        &[
            &owner.as_str(),
            &q.model,
            &PgVector(q.vector.clone()),
            &(k as i64),
        ],
    )?;
    let mut found: Vec<(Uuid, f32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    // relaxed_order may return rows slightly out of order.
    found.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(found)
}

/// Adds what was being done to an index build's error.
trait HnswContext {
    fn context_hnsw(self) -> StoreError;
}

impl HnswContext for StoreError {
    fn context_hnsw(self) -> StoreError {
        let message = format!("build the HNSW index: {}", self.message());
        self.with_message(message)
    }
}
