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
//! How wide a walk is: pgvector's `hnsw.ef_search`, the candidates a walk
//! keeps, set for the search's transaction only from
//! [`super::PgOptions::hnsw_ef_search`] (`KITH_PG_HNSW_EF_SEARCH`, default
//! [`DEFAULT_EF_SEARCH`], chosen by measurement: BENCHMARKS.md, "Many
//! owners on PostgreSQL"). Wider finds more of the exact top k and costs
//! more index pages per search.
//!
//! Not the default path: the in-process copy is exact (up to 50,000 vectors
//! an owner; IVF past that) and local, and at many
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

/// `hnsw.ef_search` when `KITH_PG_HNSW_EF_SEARCH` is unset.
pub const DEFAULT_EF_SEARCH: u32 = 100;

/// pgvector's bounds on `hnsw.ef_search`.
const EF_SEARCH_RANGE: std::ops::RangeInclusive<u32> = 1..=1000;

/// `KITH_PG_HNSW_EF_SEARCH`: the HNSW walk's width; unset or empty: `None`
/// (the default). Anything but a whole number from 1 to 1,000 is refused.
pub fn ef_search_from_env() -> Result<Option<u32>, StoreError> {
    match std::env::var("KITH_PG_HNSW_EF_SEARCH") {
        Err(_) => Ok(None),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => parse_ef_search(&v).map(Some),
    }
}

/// Parses an `ef_search` setting: a whole number from 1 to 1,000
/// (pgvector's bounds).
pub fn parse_ef_search(text: &str) -> Result<u32, StoreError> {
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| EF_SEARCH_RANGE.contains(n))
        .ok_or_else(|| {
            StoreError::new(
                StoreErrorKind::Other,
                format!(
                    "KITH_PG_HNSW_EF_SEARCH is {text:?}; use a whole number from {} to {}",
                    EF_SEARCH_RANGE.start(),
                    EF_SEARCH_RANGE.end()
                ),
            )
        })
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
/// first, with their cosine similarity (vectors are unit length), walking
/// `ef_search` candidates wide.
pub(super) fn search(
    tx: &mut PgTx<'_>,
    q: &VectorQuery,
    k: usize,
    ef_search: u32,
) -> Result<Vec<(Uuid, f32)>, StoreError> {
    let dim = q.vector.len();
    // One round trip: the scan settings for this transaction only. The
    // iterative scan walks on past `ef_search` until `k` rows of this
    // owner are found (or pgvector's `max_scan_tuples` is reached), so a
    // width below `k` still fills `k`; the width sets how close they are
    // to the exact top k.
    let ef_search = ef_search.clamp(*EF_SEARCH_RANGE.start(), *EF_SEARCH_RANGE.end());
    tx.execute_batch(&format!(
        "SET LOCAL hnsw.iterative_scan = relaxed_order;
         SET LOCAL hnsw.ef_search = {ef_search}"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ef_search_takes_pgvectors_range_only() {
        assert_eq!(parse_ef_search("200").unwrap(), 200);
        assert_eq!(parse_ef_search(" 1 ").unwrap(), 1);
        assert_eq!(parse_ef_search("1000").unwrap(), 1000);
        for bad in ["0", "1001", "-5", "40.5", "wide", ""] {
            let err = parse_ef_search(bad).unwrap_err();
            assert!(
                err.message().contains("KITH_PG_HNSW_EF_SEARCH"),
                "{bad}: {err}"
            );
        }
    }
}
