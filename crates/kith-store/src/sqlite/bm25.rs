//! The best matches of a query by FTS5's `bm25()`, without scoring every
//! match and without a length lookup per match.
//!
//! `bm25()` scores each match as SQLite reads it, and each score reads the
//! row's length from `node_fts_docsize` (a b-tree lookup). At 1M rows a
//! question whose rarest word is in one row in 30 has ~33,000 matches:
//! ~58 ms a retrieve, half of it those lookups, to keep the best 400.
//!
//! Here the postings come out of the index in one call
//! ([`super::postings`]) and the ranking is done in Rust:
//!
//! 1. BM25 falls as a row grows, and a row is at least as long as its last
//!    matched position + 1; so each match's score at that length is an
//!    upper bound of its true score ([`Bm25::rank`] is monotone in the
//!    length in floating point too: every operation rounds monotonically).
//! 2. Matches are taken best bound first; their true lengths are read in
//!    batches, their scores computed, until the `pool`-th best true score
//!    is better than the next bound: no match left can enter.
//!
//! The scores are `bm25()`'s to the bit (its formula, constants and order
//! of operations, [`Bm25`]), and equal scores are ordered by rowid, as
//! SQLite's `ORDER BY bm25(..) LIMIT n` over FTS5's rowid-ordered matches
//! keeps them; so the result is the statement's (tests below compare them).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rusqlite::Connection;

use super::map_err;
use super::postings::{self, Postings};
use crate::StoreError;

/// Stores with fewer rows (nodes ever written) rank in FTS5's own
/// statement: their queries match few rows, and this path's extra
/// statements cost more than it saves.
pub(super) const FROM_ROWS: i64 = 20_000;

/// BM25's `k1` in FTS5.
const K1: f64 = 1.2;
/// BM25's `b` in FTS5.
const B: f64 = 0.75;

/// The query's constants: the index's average row length and each
/// phrase's IDF, computed as FTS5's `fts5Bm25GetData` computes them.
#[derive(Debug, Clone)]
pub(super) struct Bm25 {
    avgdl: f64,
    idf: Vec<f64>,
}

impl Bm25 {
    /// From the index's totals and each phrase's number of matching rows.
    pub(super) fn new(rows: i64, tokens: i64, hits: impl IntoIterator<Item = i64>) -> Self {
        let idf = hits
            .into_iter()
            .map(|hit| {
                // FTS5 clamps a negative IDF (a phrase in over half the rows).
                let idf = (((rows - hit) as f64 + 0.5) / (hit as f64 + 0.5)).ln();
                if idf <= 0.0 {
                    1e-6
                } else {
                    idf
                }
            })
            .collect();
        Bm25 {
            avgdl: tokens as f64 / rows as f64,
            idf,
        }
    }

    /// `bm25()`'s value (lower is better) for a row of `len` tokens holding
    /// phrase `i` `freq(i)` times: the same operations in the same order.
    pub(super) fn rank(&self, freq: impl Fn(usize) -> f64, len: f64) -> f64 {
        let mut score = 0.0;
        for (i, idf) in self.idf.iter().enumerate() {
            let f = freq(i);
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * len / self.avgdl)));
        }
        -1.0 * score
    }
}

/// One match: its row, its least possible length, and where its phrase
/// frequencies start in [`Matches::freqs`].
#[derive(Debug, Clone, Copy)]
struct Match {
    rowid: i64,
    least_len: u32,
}

/// Every match of the query, in rowid order, with its frequencies.
struct Matches {
    rows: Vec<Match>,
    /// `phrases` frequencies per match, flat.
    freqs: Vec<u32>,
    phrases: usize,
}

impl Matches {
    /// Merges the phrases' rowid-ordered postings into one row per match.
    fn merge(p: &Postings) -> Self {
        let phrases = p.phrases.len();
        let mut heads = vec![0usize; phrases];
        let mut rows = Vec::new();
        let mut freqs = Vec::new();
        loop {
            // The smallest rowid at the phrases' heads (few phrases: a scan).
            let next = p
                .phrases
                .iter()
                .zip(&heads)
                .filter_map(|(list, &h)| list.get(h).map(|x| x.rowid))
                .min();
            let Some(rowid) = next else { break };
            let mut least_len = 0u32;
            for (list, h) in p.phrases.iter().zip(heads.iter_mut()) {
                match list.get(*h) {
                    Some(x) if x.rowid == rowid => {
                        freqs.push(x.freq);
                        least_len = least_len.max(x.last.saturating_add(1));
                        *h += 1;
                    }
                    _ => freqs.push(0),
                }
            }
            rows.push(Match { rowid, least_len });
        }
        Matches {
            rows,
            freqs,
            phrases,
        }
    }

    fn rank(&self, bm25: &Bm25, i: usize, len: u32) -> f64 {
        let freqs = &self.freqs[i * self.phrases..(i + 1) * self.phrases];
        bm25.rank(|p| f64::from(freqs[p]), f64::from(len))
    }
}

/// A ranked row, ordered best first: lower `bm25()`, then lower rowid.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    rank: f64,
    rowid: i64,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank
            .total_cmp(&other.rank)
            .then(self.rowid.cmp(&other.rowid))
    }
}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Ranked {}

/// Rows' true lengths are read this many at a time.
const BATCH: usize = 512;

/// What [`best`] did: matches, and the lengths it had to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Effort {
    /// Rows matching the query.
    pub matches: usize,
    /// Rows whose length was read.
    pub lengths_read: usize,
}

/// The best `pool` matches in `p` as (rowid, `bm25()`), best first (lower
/// bm25, then lower rowid); `lengths` gives the true lengths of the rows
/// asked (sorted rowids), in their order.
pub(super) fn best(
    p: &Postings,
    pool: usize,
    mut lengths: impl FnMut(&[i64]) -> Result<Vec<u32>, StoreError>,
) -> Result<(Vec<(i64, f64)>, Effort), StoreError> {
    let bm25 = Bm25::new(
        p.rows,
        p.tokens,
        p.phrases.iter().map(|list| list.len() as i64),
    );
    let matches = Matches::merge(p);
    let mut effort = Effort {
        matches: matches.rows.len(),
        lengths_read: 0,
    };
    if pool == 0 {
        return Ok((Vec::new(), effort));
    }
    // Each match's best possible rank, best first.
    let mut order: Vec<(f64, u32)> = (0..matches.rows.len())
        .map(|i| {
            let m = matches.rows[i];
            (matches.rank(&bm25, i, m.least_len), i as u32)
        })
        .collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    // The best `pool` found so far; its top is the worst of them.
    let mut kept: BinaryHeap<Ranked> = BinaryHeap::with_capacity(pool + 1);
    let mut next = 0;
    while next < order.len() {
        // A match whose bound is worse than `pool` true ranks cannot enter;
        // nor can any after it. An equal bound might tie and win on rowid.
        let bar = match kept.peek() {
            Some(worst) if kept.len() >= pool => worst.rank,
            _ => f64::INFINITY,
        };
        let end = order[next..]
            .iter()
            .take(BATCH)
            .take_while(|(bound, _)| *bound <= bar)
            .count()
            + next;
        if end == next {
            break;
        }
        let mut batch: Vec<(i64, u32)> = order[next..end]
            .iter()
            .map(|&(_, i)| (matches.rows[i as usize].rowid, i))
            .collect();
        batch.sort_unstable();
        let rowids: Vec<i64> = batch.iter().map(|b| b.0).collect();
        let lens = lengths(&rowids)?;
        if lens.len() != rowids.len() {
            return Err(StoreError::corrupted(
                "full-text index: a matching row has no recorded length",
            ));
        }
        effort.lengths_read += lens.len();
        for (&(rowid, i), &len) in batch.iter().zip(&lens) {
            let ranked = Ranked {
                rank: matches.rank(&bm25, i as usize, len),
                rowid,
            };
            if kept.len() < pool {
                kept.push(ranked);
            } else if kept.peek().is_some_and(|worst| ranked < *worst) {
                kept.pop();
                kept.push(ranked);
            }
        }
        next = end;
    }
    let best = kept
        .into_sorted_vec()
        .into_iter()
        .map(|r| (r.rowid, r.rank))
        .collect();
    Ok((best, effort))
}

/// The best `pool` matches of `expr` over every owner in `conn`'s
/// snapshot, as (rowid, `bm25(node_fts)`) ordered by bm25 then rowid: what
/// `SELECT rowid, bm25(node_fts) AS r FROM node_fts WHERE node_fts MATCH
/// ?1 ORDER BY r LIMIT pool` returns.
pub(super) fn best_matches(
    conn: &Connection,
    expr: &str,
    pool: usize,
) -> Result<(Vec<(i64, f64)>, Effort), StoreError> {
    let Some(p) = postings::read(conn, expr)? else {
        return Ok((Vec::new(), Effort::default()));
    };
    best(&p, pool, |rowids| lengths(conn, rowids))
}

/// The token counts of `rowids` (ascending) from FTS5's `node_fts_docsize`,
/// in their order.
fn lengths(conn: &Connection, rowids: &[i64]) -> Result<Vec<u32>, StoreError> {
    let list = format!(
        "[{}]",
        rowids
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, sz FROM node_fts_docsize
             WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
        )
        .map_err(map_err)?;
    let mut rows = stmt.query([list]).map_err(map_err)?;
    let mut out = Vec::with_capacity(rowids.len());
    while let Some(row) = rows.next().map_err(map_err)? {
        let id: i64 = row.get(0).map_err(map_err)?;
        let rusqlite::types::ValueRef::Blob(size) = row.get_ref(1).map_err(map_err)? else {
            return Err(StoreError::corrupted("full-text index: a row length is not a blob"));
        };
        if rowids.get(out.len()) != Some(&id) {
            break;
        }
        out.push(
            first_varint(size)
                .ok_or_else(|| StoreError::corrupted("full-text index: a malformed row length"))?,
        );
    }
    Ok(out)
}

/// The first of FTS5's varints in a `docsize` record (one per column; the
/// table has one column): SQLite's varint, 7 bits a byte, big-endian,
/// the ninth byte whole.
fn first_varint(bytes: &[u8]) -> Option<u32> {
    let mut value: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            value = (value << 8) | u64::from(b);
            return u32::try_from(value).ok();
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return u32::try_from(value).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{best_matches, first_varint, FROM_ROWS};
    use crate::sqlite::lexical::tests::write;
    use crate::sqlite::{postings, OpenMode, SqliteStore};
    use proptest::prelude::*;
    use rusqlite::Connection;

    /// What the lexical fast path asked FTS5 for before this module: its
    /// best `pool` matches, ranked by `bm25()` in one statement.
    fn statement(conn: &Connection, expr: &str, pool: usize) -> Vec<(i64, f64)> {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT rowid, bm25(node_fts) AS r FROM node_fts WHERE node_fts MATCH ?1
                 ORDER BY r LIMIT {pool}"
            ))
            .unwrap();
        let rows = stmt
            .query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    /// Equal rowids and bit-equal scores.
    fn same(a: &[(i64, f64)], b: &[(i64, f64)]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.0 == y.0 && x.1.to_bits() == y.1.to_bits())
    }

    /// A connection holding the store's full-text table as the schema
    /// declares it (an external-content table over `nodes`).
    fn index() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE nodes (seq INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL);
             CREATE VIRTUAL TABLE node_fts USING fts5 (
                 content, content = 'nodes', content_rowid = 'seq',
                 tokenize = 'porter unicode61 remove_diacritics 2');",
        )
        .unwrap();
        postings::register(&conn).unwrap();
        conn
    }

    fn insert(conn: &Connection, text: &str) -> i64 {
        conn.execute("INSERT INTO nodes (content) VALUES (?1)", [text])
            .unwrap();
        let seq = conn.last_insert_rowid();
        conn.execute(
            "INSERT INTO node_fts (rowid, content) VALUES (?1, ?2)",
            rusqlite::params![seq, text],
        )
        .unwrap();
        seq
    }

    fn remove(conn: &Connection, seq: i64) {
        let text: String = conn
            .query_row("SELECT content FROM nodes WHERE seq = ?1", [seq], |r| {
                r.get(0)
            })
            .unwrap();
        conn.execute(
            "INSERT INTO node_fts (node_fts, rowid, content) VALUES ('delete', ?1, ?2)",
            rusqlite::params![seq, text],
        )
        .unwrap();
        conn.execute("DELETE FROM nodes WHERE seq = ?1", [seq])
            .unwrap();
    }

    /// A row's text replaced in place (as `update_node` and a forget's
    /// erasure do): same rowid, new tokens and length.
    fn rewrite(conn: &Connection, seq: i64, text: &str) {
        let old: String = conn
            .query_row("SELECT content FROM nodes WHERE seq = ?1", [seq], |r| {
                r.get(0)
            })
            .unwrap();
        conn.execute(
            "INSERT INTO node_fts (node_fts, rowid, content) VALUES ('delete', ?1, ?2)",
            rusqlite::params![seq, old],
        )
        .unwrap();
        conn.execute(
            "UPDATE nodes SET content = ?2 WHERE seq = ?1",
            rusqlite::params![seq, text],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO node_fts (rowid, content) VALUES (?1, ?2)",
            rusqlite::params![seq, text],
        )
        .unwrap();
    }

    /// Few words, short rows: many rows score exactly alike, so the
    /// order of ties at the pool's edge is tested too. "hiking" and
    /// "hikes" share a stem: two phrases on one token.
    const WORDS: [&str; 8] = [
        "otter", "heron", "hiking", "hikes", "pottery", "reeds", "the", "café",
    ];

    fn text(words: &[u8]) -> String {
        words
            .iter()
            .map(|&w| WORDS[w as usize % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn query(words: &[u8]) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for &w in words {
            let w = WORDS[w as usize % WORDS.len()];
            if !seen.contains(&w) {
                seen.push(w);
            }
        }
        seen.iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// On generated corpora and queries, after inserts, deletes and
        /// in-place rewrites, the best `pool` are `bm25()`'s statement's:
        /// the same rows in the same order with bit-equal scores.
        #[test]
        fn ranks_as_fts5_bm25(
            rows in proptest::collection::vec(proptest::collection::vec(0u8..8, 1..12), 1..120),
            deletes in proptest::collection::vec(0usize..120, 0..20),
            rewrites in proptest::collection::vec(
                (0usize..120, proptest::collection::vec(0u8..8, 0..12)), 0..20),
            queries in proptest::collection::vec(
                (proptest::collection::vec(0u8..8, 1..5), 1usize..80), 1..6),
        ) {
            let conn = index();
            let seqs: Vec<i64> = rows.iter().map(|r| insert(&conn, &text(r))).collect();
            let check = |conn: &Connection| -> Result<(), TestCaseError> {
                for (words, pool) in &queries {
                    let expr = query(words);
                    let (ours, effort) = best_matches(conn, &expr, *pool).unwrap();
                    let theirs = statement(conn, &expr, *pool);
                    prop_assert!(same(&ours, &theirs), "{expr} pool {pool}:\n{ours:?}\n{theirs:?}");
                    prop_assert!(effort.lengths_read <= effort.matches);
                }
                Ok(())
            };
            check(&conn)?;
            let mut gone = std::collections::HashSet::new();
            for d in deletes {
                let seq = seqs[d % seqs.len()];
                if gone.insert(seq) {
                    remove(&conn, seq);
                }
            }
            for (r, words) in &rewrites {
                let seq = seqs[r % seqs.len()];
                if !gone.contains(&seq) {
                    rewrite(&conn, seq, &text(words));
                }
            }
            check(&conn)?;
            for r in rows.iter().take(10) {
                insert(&conn, &text(r));
            }
            check(&conn)?;
        }
    }

    /// At a size where most matches cannot enter the pool, their lengths
    /// are not read, and the answer is still the statement's.
    #[test]
    fn most_lengths_are_never_read() {
        let conn = index();
        conn.execute_batch("BEGIN").unwrap();
        for i in 0..20_000u32 {
            // Rows of 1 to 40 tokens; "otter" in every 7th, "heron" in every 11th.
            let mut words: Vec<&str> = vec!["filler"; (i % 40) as usize];
            if i % 7 == 0 {
                words.push("otter");
            }
            if i % 11 == 0 {
                words.insert(0, "heron");
            }
            if words.is_empty() {
                words.push("empty");
            }
            insert(&conn, &words.join(" "));
        }
        conn.execute_batch("COMMIT").unwrap();
        let expr = "\"otter\" OR \"heron\"";
        let (ours, effort) = best_matches(&conn, expr, 400).unwrap();
        assert!(same(&ours, &statement(&conn, expr, 400)));
        assert!(effort.matches > 4_000, "{effort:?}");
        assert!(effort.lengths_read < effort.matches / 2, "{effort:?}");
    }

    /// A store past [`FROM_ROWS`] searches through this path (its
    /// connections have the function), inside a write transaction too,
    /// where the transaction's own uncommitted rows are ranked.
    #[test]
    fn a_big_store_ranks_its_own_uncommitted_rows() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            SqliteStore::open(&dir.path().join("k.sqlite"), OpenMode::CreateIfMissing).unwrap();
        let texts: Vec<String> = (0..FROM_ROWS as usize)
            .map(|i| format!("note {i} about {}", ["otter", "heron", "reeds"][i % 3]))
            .collect();
        write(&store, 0, &texts);
        let conn = store.take().unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.execute(
            "INSERT INTO node_fts (rowid, content) VALUES (?1, 'otter otter')",
            [FROM_ROWS * 10],
        )
        .unwrap();
        let (ours, _) = best_matches(&conn, "\"otter\"", 50).unwrap();
        assert_eq!(ours[0].0, FROM_ROWS * 10);
        assert!(same(&ours, &statement(&conn, "\"otter\"", 50)));
        conn.execute_batch("ROLLBACK").unwrap();
        store.release(conn);
    }

    #[test]
    fn varints_decode_as_sqlite_writes_them() {
        assert_eq!(first_varint(&[0x05]), Some(5));
        assert_eq!(first_varint(&[0x81, 0x00]), Some(128));
        assert_eq!(first_varint(&[0x83, 0xff, 0x7f, 0x02]), Some((3 << 14) | (0x7f << 7) | 0x7f));
        assert_eq!(first_varint(&[0x81]), None);
        assert_eq!(first_varint(&[]), None);
    }
}
