//! Ranking a common query's matches on two cores.
//!
//! FTS5 scores every match of a query with `bm25()` before it keeps the
//! best ones (it has no top-k pruning, and each score reads the row's
//! length from another table). At 1M rows a question whose rarest word is
//! in 3% of them ranks 33,000 matches: 35–50 ms, most of a retrieve.
//!
//! A row's BM25 depends only on the row and the index's totals, so the
//! matches split by rowid into independent halves: the best `pool` of the
//! whole are the best `pool` of the two halves' best merged, ordered by
//! score then rowid. The upper half is ranked on a second connection, on a
//! scoped thread, while the transaction's own connection ranks the lower
//! half. Only when the second connection's snapshot holds the very index
//! the transaction reads (the same [`super::lexical::index_version`]; a
//! write committed in between makes them differ): otherwise the
//! transaction's connection ranks both halves itself. Either way the
//! answer is the one the transaction's snapshot gives.
//!
//! The second connection's statements are not counted by the statement
//! log (they run on another thread, outside the transaction).

use rusqlite::Connection;

use super::lexical::index_version;
use super::{map_err, SqliteStore};
use crate::StoreError;

/// Whether a common query may be ranked in halves at all: opt-in
/// (`KITH_SQLITE_RANK_HALVES=on`). The split wins only when a second core
/// is idle; on a busy server a retrieve then waits for two CPUs at once,
/// and under the loads measured it showed no wall-time gain (BENCHMARKS.md,
/// issue 22 at 1M), so one statement stays the default.
pub(super) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("KITH_SQLITE_RANK_HALVES").is_ok_and(|v| v.trim() == "on"))
}

/// Stores with fewer rows (nodes ever written) rank in one statement.
pub(super) const FROM_ROWS: i64 = 100_000;
/// Queries with fewer matches rank in one statement: a thread and a
/// second transaction cost more than ranking them.
pub(super) const FROM_MATCHES: usize = 4_000;

/// The best `pool` matches of `expr` over every owner, as (rowid, bm25)
/// ordered by bm25 (lower is better) then rowid; `rows` bounds the rowids
/// (the store's largest seq in `conn`'s snapshot), `version` is `conn`'s
/// index version.
pub(super) fn best_matches(
    conn: &Connection,
    store: &SqliteStore,
    expr: &str,
    pool: usize,
    rows: i64,
    version: &[u8],
) -> Result<Vec<(i64, f64)>, StoreError> {
    let middle = rows / 2;
    let mut second = Second::begin(store, version)?;
    let (lower, upper) = match second.conn.take() {
        Some(other) => {
            let (other, lower, upper) = std::thread::scope(|s| {
                let upper = s.spawn(move || {
                    let upper = rank_range(&other, expr, middle, i64::MAX, pool);
                    (other, upper)
                });
                let lower = rank_range(conn, expr, i64::MIN, middle, pool);
                match upper.join() {
                    Ok((other, upper)) => (Some(other), lower, upper),
                    Err(_) => (None, lower, Err(thread_failed())),
                }
            });
            second.conn = other;
            (lower, upper)
        }
        None => (
            rank_range(conn, expr, i64::MIN, middle, pool),
            rank_range(conn, expr, middle, i64::MAX, pool),
        ),
    };
    second.end();
    Ok(merge(lower?, upper?, pool))
}

/// The error of a ranking thread that panicked.
fn thread_failed() -> StoreError {
    StoreError::new(crate::StoreErrorKind::Other, "the ranking thread panicked")
}

/// The best `pool` matches with `after < rowid <= up_to`.
fn rank_range(
    conn: &Connection,
    expr: &str,
    after: i64,
    up_to: i64,
    pool: usize,
) -> Result<Vec<(i64, f64)>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT rowid, bm25(node_fts) AS r FROM node_fts
             WHERE node_fts MATCH ?1 AND rowid > ?2 AND rowid <= ?3
             ORDER BY r, rowid LIMIT ?4",
        )
        .map_err(map_err)?;
    let rows = stmt
        .query_map(rusqlite::params![expr, after, up_to, pool as i64], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
        })
        .map_err(map_err)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(map_err)
}

/// The best `pool` of two ranked lists, by score then rowid.
fn merge(mut a: Vec<(i64, f64)>, b: Vec<(i64, f64)>, pool: usize) -> Vec<(i64, f64)> {
    a.extend(b);
    a.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
    a.truncate(pool);
    a
}

/// A second connection in a read transaction whose snapshot holds the
/// same index as the caller's, or none.
struct Second<'s> {
    store: &'s SqliteStore,
    conn: Option<Connection>,
}

impl<'s> Second<'s> {
    /// Takes a pooled connection and begins a read; keeps it only when its
    /// index version is `version`.
    fn begin(store: &'s SqliteStore, version: &[u8]) -> Result<Self, StoreError> {
        let conn = store.take()?;
        let mut second = Second {
            store,
            conn: Some(conn),
        };
        let same = match second.conn.as_ref() {
            Some(c) => {
                c.execute_batch("BEGIN DEFERRED").map_err(map_err)?;
                index_version(c).map(|v| v == version)
            }
            None => Ok(false),
        };
        match same {
            Ok(true) => Ok(second),
            Ok(false) => {
                second.end();
                Ok(second)
            }
            Err(e) => {
                second.end();
                Err(e)
            }
        }
    }

    /// Ends the read and gives the connection back to the pool (or drops
    /// it, when even that fails).
    fn end(&mut self) {
        if let Some(c) = self.conn.take() {
            if c.is_autocommit() || c.execute_batch("ROLLBACK").is_ok() {
                self.store.release(c);
            }
        }
    }
}

impl Drop for Second<'_> {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::{best_matches, merge, rank_range};
    use crate::sqlite::lexical::{index_version, tests::write};
    use crate::sqlite::{OpenMode, SqliteStore};
    use proptest::prelude::*;

    /// The whole ranking in one statement, as `conn`'s snapshot gives it.
    fn whole(conn: &rusqlite::Connection, expr: &str, pool: usize) -> Vec<(i64, f64)> {
        rank_range(conn, expr, i64::MIN, i64::MAX, pool).unwrap()
    }

    /// On a real index with many equal scores, the halves (on two
    /// connections) give exactly the one statement's best `pool`; and when
    /// a write commits after the transaction began, the second connection
    /// is not used and the answer is still the transaction's snapshot's.
    #[test]
    fn halves_rank_as_one_statement_in_the_transactions_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            SqliteStore::open(&dir.path().join("k.sqlite"), OpenMode::CreateIfMissing).unwrap();
        let words = [
            "otter",
            "heron",
            "otter heron",
            "otter otter",
            "heron in the reeds",
        ];
        let texts: Vec<String> = (0..3_000)
            .map(|i| format!("{} {}", words[i % 5], "x ".repeat(i % 4)))
            .collect();
        write(&store, 0, &texts);
        let conn = store.take().unwrap();
        conn.execute_batch("BEGIN DEFERRED").unwrap();
        let version = index_version(&conn).unwrap();
        let rows: i64 = conn
            .query_row("SELECT max(seq) FROM nodes", [], |r| r.get(0))
            .unwrap();
        let cases = [
            ("\"otter\"", 50),
            ("\"otter\" OR \"heron\"", 400),
            ("\"reeds\"", 5_000),
        ];
        for (expr, pool) in cases {
            let halves = best_matches(&conn, &store, expr, pool, rows, &version).unwrap();
            assert_eq!(halves, whole(&conn, expr, pool), "{expr}, pool {pool}");
            assert_eq!(halves.len(), pool.min(whole(&conn, expr, 10_000).len()));
        }
        // A write commits: the transaction's snapshot does not see it.
        let before = whole(&conn, "\"otter\"", 100);
        write(&store, texts.len(), &vec!["otter".to_string(); 200]);
        let halves = best_matches(&conn, &store, "\"otter\"", 100, rows, &version).unwrap();
        assert_eq!(halves, before);
        conn.execute_batch("COMMIT").unwrap();
        store.release(conn);
    }

    proptest! {
        /// Merging two halves' best `pool` gives the whole's best `pool`:
        /// ranking by halves changes nothing, ties included.
        #[test]
        fn halves_merge_to_the_whole(
            scores in proptest::collection::vec(0u8..6, 0..60),
            pool in 1usize..20,
            middle in 0i64..60,
        ) {
            let rows: Vec<(i64, f64)> = scores
                .iter()
                .enumerate()
                .map(|(i, s)| (i as i64, -f64::from(*s)))
                .collect();
            let best = |part: Vec<(i64, f64)>| merge(part, Vec::new(), pool);
            let whole = best(rows.clone());
            let (lower, upper): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| r.0 <= middle);
            prop_assert_eq!(merge(best(lower), best(upper), pool), whole);
        }
    }
}
