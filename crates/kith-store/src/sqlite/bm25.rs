//! The best matches of a query by FTS5's `bm25()`, without a length
//! lookup per match and without SQLite's sorter.
//!
//! `bm25()` scores each match as SQLite reads it, and each score reads the
//! row's length from `node_fts_docsize` (a b-tree lookup). At 1M rows a
//! question whose rarest word is in one row in 30 has ~33,000 matches:
//! ~58 ms a retrieve, half of it those lookups, to keep the best 400.
//!
//! Here the postings come out of the index in one call
//! ([`super::postings`]), rows' lengths from memory ([`super::lengths`]),
//! and the scoring and the choice of the best in Rust. The scores are
//! `bm25()`'s to the bit (its formula, constants and order of operations,
//! [`Bm25`]), and equal scores are ordered by rowid, as SQLite's `ORDER BY
//! bm25(..) LIMIT n` over FTS5's rowid-ordered matches keeps them; so the
//! result is the statement's (tests below compare them, ties included).
//!
//! Bounding each match's score by its least possible length (its last
//! matched position + 1) and reading true lengths only for matches that
//! could enter was tried first: on the 1M benchmark's corpus the bound
//! pruned nothing and every length was read (BENCHMARKS.md, 2026-12-02
//! night).

use std::cmp::Ordering;

use rusqlite::Connection;

use super::lengths::Lengths;
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
        // FTS5 returns `-1.0 * score`: the same bits as the negation.
        -score
    }
}

/// A ranked row, ordered best first: lower `bm25()`, then lower rowid.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    rank: f64,
    rowid: i64,
}

impl Ranked {
    fn order(&self, other: &Self) -> Ordering {
        self.rank
            .total_cmp(&other.rank)
            .then(self.rowid.cmp(&other.rowid))
    }
}

/// The best `pool` matches in `p` as (rowid, `bm25()`), best first (lower
/// bm25, then lower rowid); `len` gives a row's token count, or `None`
/// when it does not know it (then so does this).
pub(super) fn best(
    p: &Postings,
    pool: usize,
    len: impl Fn(i64) -> Option<u32>,
) -> Option<Vec<(i64, f64)>> {
    let bm25 = Bm25::new(
        p.rows,
        p.tokens,
        p.phrases.iter().map(|list| list.len() as i64),
    );
    // The phrases' rowid-ordered lists merged: one row per match, its
    // frequencies gathered from the lists' heads (few phrases: a scan).
    let mut heads = vec![0usize; p.phrases.len()];
    let mut freqs = vec![0u32; p.phrases.len()];
    let mut ranked = Vec::new();
    loop {
        let next = p
            .phrases
            .iter()
            .zip(&heads)
            .filter_map(|(list, &h)| list.get(h).map(|x| x.rowid))
            .min();
        let Some(rowid) = next else { break };
        for ((list, h), f) in p.phrases.iter().zip(heads.iter_mut()).zip(freqs.iter_mut()) {
            *f = match list.get(*h) {
                Some(x) if x.rowid == rowid => {
                    *h += 1;
                    x.freq
                }
                _ => 0,
            };
        }
        let rank = bm25.rank(|i| f64::from(freqs[i]), f64::from(len(rowid)?));
        ranked.push(Ranked { rank, rowid });
    }
    if ranked.len() > pool {
        if pool == 0 {
            return Some(Vec::new());
        }
        ranked.select_nth_unstable_by(pool - 1, Ranked::order);
        ranked.truncate(pool);
    }
    ranked.sort_unstable_by(Ranked::order);
    Some(ranked.into_iter().map(|r| (r.rowid, r.rank)).collect())
}

/// The best `pool` matches of `expr` over every owner in `conn`'s
/// snapshot (a read transaction), as (rowid, `bm25(node_fts)`) ordered by
/// bm25 then rowid: what `SELECT rowid, bm25(node_fts) AS r FROM node_fts
/// WHERE node_fts MATCH ?1 ORDER BY r LIMIT pool` returns. `None` when
/// `lengths` cannot vouch for every match's length (then that statement
/// must run).
pub(super) fn best_matches(
    conn: &Connection,
    lengths: &Lengths,
    expr: &str,
    pool: usize,
) -> Result<Option<Vec<(i64, f64)>>, StoreError> {
    let Some(p) = postings::read(conn, expr)? else {
        return Ok(Some(Vec::new()));
    };
    let newest = p
        .phrases
        .iter()
        .filter_map(|list| list.last().map(|x| x.rowid))
        .max()
        .unwrap_or(0);
    let table = lengths.covering(conn, newest)?;
    Ok(best(&p, pool, |rowid| table.get(rowid)))
}

#[cfg(test)]
mod tests {
    use super::best_matches;
    use crate::sqlite::lengths::{note_rewrite, Lengths};
    use crate::sqlite::postings;
    use proptest::prelude::*;
    use rusqlite::Connection;

    /// What the lexical fast path asked FTS5 for before this module: its
    /// best `pool` matches, ranked by `bm25()` in one statement.
    pub(in crate::sqlite) fn statement(
        conn: &Connection,
        expr: &str,
        pool: usize,
    ) -> Vec<(i64, f64)> {
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
    pub(in crate::sqlite) fn same(a: &[(i64, f64)], b: &[(i64, f64)]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.0 == y.0 && x.1.to_bits() == y.1.to_bits())
    }

    /// A connection holding the store's full-text table as the schema
    /// declares it (an external-content table over `nodes`) and `meta`.
    fn index() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE nodes (seq INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL);
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

    fn content(conn: &Connection, seq: i64) -> String {
        conn.query_row("SELECT content FROM nodes WHERE seq = ?1", [seq], |r| {
            r.get(0)
        })
        .unwrap()
    }

    /// A row deleted as `delete_nodes` deletes it.
    fn remove(conn: &Connection, seq: i64) {
        conn.execute(
            "INSERT INTO node_fts (node_fts, rowid, content) VALUES ('delete', ?1, ?2)",
            rusqlite::params![seq, content(conn, seq)],
        )
        .unwrap();
        conn.execute("DELETE FROM nodes WHERE seq = ?1", [seq])
            .unwrap();
    }

    /// A row's text replaced in place as `update_node` replaces it (and
    /// a forget's erasure): same rowid, new tokens and length.
    fn rewrite(conn: &Connection, seq: i64, text: &str) {
        conn.execute(
            "INSERT INTO node_fts (node_fts, rowid, content) VALUES ('delete', ?1, ?2)",
            rusqlite::params![seq, content(conn, seq)],
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
        note_rewrite(conn).unwrap();
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

        /// On generated corpora and queries the best `pool` are `bm25()`'s
        /// statement's (the same rows in the same order, bit-equal scores),
        /// and stay so with one copy of the lengths kept across deletes,
        /// in-place rewrites and inserts.
        #[test]
        fn ranks_as_fts5_bm25_across_writes(
            rows in proptest::collection::vec(proptest::collection::vec(0u8..8, 1..12), 1..120),
            deletes in proptest::collection::vec(0usize..120, 0..20),
            rewrites in proptest::collection::vec(
                (0usize..120, proptest::collection::vec(0u8..8, 0..12)), 0..20),
            queries in proptest::collection::vec(
                (proptest::collection::vec(0u8..8, 1..5), 0usize..80), 1..6),
        ) {
            let conn = index();
            let lengths = Lengths::default();
            let seqs: Vec<i64> = rows.iter().map(|r| insert(&conn, &text(r))).collect();
            let check = |conn: &Connection| -> Result<(), TestCaseError> {
                for (words, pool) in &queries {
                    let expr = query(words);
                    let ours = best_matches(conn, &lengths, &expr, *pool).unwrap();
                    let ours = ours.expect("every match's length is known");
                    let theirs = statement(conn, &expr, *pool);
                    prop_assert!(same(&ours, &theirs), "{expr} pool {pool}:\n{ours:?}\n{theirs:?}");
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
            check(&conn)?;
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

    /// A rewrite that did not say so (no new generation) would leave a
    /// stale length in the copy: the generation is what keeps it true.
    #[test]
    fn an_unannounced_rewrite_is_what_the_generation_guards_against() {
        let conn = index();
        let lengths = Lengths::default();
        let a = insert(&conn, "otter");
        insert(&conn, "otter heron heron heron");
        let expr = "\"otter\"";
        let before = best_matches(&conn, &lengths, expr, 10).unwrap().unwrap();
        assert_eq!(before[0].0, a, "the shorter row ranks first");
        // The same rewrite as `rewrite`, without its note.
        conn.execute_batch(
            "INSERT INTO node_fts (node_fts, rowid, content) VALUES ('delete', 1, 'otter');
             UPDATE nodes SET content = 'otter reeds reeds reeds reeds reeds' WHERE seq = 1;
             INSERT INTO node_fts (rowid, content) VALUES (1, 'otter reeds reeds reeds reeds reeds');",
        )
        .unwrap();
        let stale = best_matches(&conn, &lengths, expr, 10).unwrap().unwrap();
        assert!(!same(&stale, &statement(&conn, expr, 10)));
        note_rewrite(&conn).unwrap();
        let fresh = best_matches(&conn, &lengths, expr, 10).unwrap().unwrap();
        assert!(same(&fresh, &statement(&conn, expr, 10)));
        assert_ne!(fresh[0].0, a);
    }
}
