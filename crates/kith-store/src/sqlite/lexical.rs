//! BM25 over node text with SQLite FTS5.
//!
//! The query text is cut into words ([`crate::words::query_words`]: Unicode
//! letters and digits, lower-cased, stopwords dropped), and each word becomes
//! a quoted FTS5 term joined by `OR`, so punctuation in a question can never
//! be read as FTS5 syntax. Scores are `-bm25()` (FTS5 ranks lower-is-better;
//! kith reports higher-is-better).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::SearchFilters;
use kith_core::{OwnerId, Role, SessionId, Timestamp};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Params};
use uuid::Uuid;

use super::sql::Select;
use super::{bm25, map_err, query_all};
use crate::{LexicalHit, LexicalQuery, StoreError};

/// The FTS5 match expression for free text, or `None` when no word is left.
#[cfg(test)]
pub fn match_expression(text: &str) -> Option<String> {
    let terms = crate::words::query_words(text);
    (!terms.is_empty()).then(|| or_expression(&terms))
}

/// Quoted words joined by `OR`.
fn or_expression(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// What a store remembers between lexical searches ([`Shares`],
/// [`KnownCounts`]).
#[derive(Debug, Default)]
pub(super) struct Memo {
    shares: Shares,
    counts: KnownCounts,
    /// Rows' lengths in the full-text index, for ranking in Rust.
    lengths: super::lengths::Lengths,
}

/// Whether an owner held a large share of the store the last time it was
/// counted. Only a choice of plan hangs on it (both plans find the same
/// hits), so an answer counted at the same store size is reused; a
/// retrieve runs several searches, and counting a big owner walks a
/// quarter of the store's nodes.
#[derive(Debug, Default)]
struct Shares(Mutex<HashMap<OwnerId, (i64, bool)>>);

/// Words' capped match counts ([`without_common_words`]), kept across
/// transactions for as long as the full-text index is unchanged: at 1M rows
/// counting a query's words walks tens of thousands of postings each, on
/// every retrieve. The index's version is the pair of FTS5 records every
/// change of its content rewrites ([`index_version`]); a count is reused
/// only under the version it was counted at, so it is always the count the
/// transaction's snapshot would give.
#[derive(Debug, Default)]
struct KnownCounts(Mutex<KnownInner>);

#[derive(Debug, Default)]
struct KnownInner {
    /// The index version the counts were taken at.
    version: Vec<u8>,
    /// (word, cap) → capped count.
    counts: HashMap<(String, i64), i64>,
}

/// More words than this are forgotten at once (a bound on memory; a
/// retrieve's words are counted again next time).
const KNOWN_WORDS_MAX: usize = 4096;

impl KnownCounts {
    fn get(&self, version: &[u8], key: &(String, i64)) -> Option<i64> {
        let inner = self.0.lock().ok()?;
        (inner.version == version)
            .then(|| inner.counts.get(key).copied())
            .flatten()
    }

    fn put(&self, version: &[u8], key: (String, i64), n: i64) {
        let Ok(mut inner) = self.0.lock() else { return };
        if inner.version != version || inner.counts.len() >= KNOWN_WORDS_MAX {
            inner.version = version.to_vec();
            inner.counts.clear();
        }
        inner.counts.insert(key, n);
    }
}

/// What one transaction's lexical searches share: in a read transaction,
/// the full-text index's version once read (its snapshot does not change);
/// `None` in a write transaction, whose own writes may change the counts,
/// so they are counted afresh and not remembered.
pub(super) type WordCounts = Option<Option<Vec<u8>>>;

/// The full-text index's version: FTS5's averages record (rows and tokens
/// indexed, id 1) and structure record (its segments and a counter of
/// leaves written, id 10), concatenated. FTS5 rewrites the structure
/// record whenever it writes index content (each flush adds a segment and
/// advances the counter; merges replace segments), so two snapshots with
/// the same version hold the same postings.
fn index_version(conn: &Connection) -> Result<Vec<u8>, StoreError> {
    conn.prepare_cached("SELECT block FROM node_fts_data WHERE id IN (1, 10) ORDER BY id")
        .and_then(|mut s| {
            let mut out = Vec::new();
            let mut rows = s.query([])?;
            while let Some(r) = rows.next()? {
                let block: Vec<u8> = r.get(0)?;
                out.extend_from_slice(&(block.len() as u64).to_le_bytes());
                out.extend_from_slice(&block);
            }
            Ok(out)
        })
        .map_err(map_err)
}

/// The index version of a read transaction (read once), or `None` in a
/// write transaction.
fn tx_version<'a>(
    conn: &Connection,
    tx: &'a mut WordCounts,
) -> Result<Option<&'a [u8]>, StoreError> {
    Ok(match tx.as_mut() {
        Some(Some(v)) => Some(&*v),
        Some(slot) => Some(&*slot.insert(index_version(conn)?)),
        None => None,
    })
}

/// Runs a statement returning one integer through the statement cache.
fn count(conn: &Connection, sql: &str, params: impl Params) -> Result<i64, StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut s| s.query_row(params, |r| r.get(0)))
        .map_err(map_err)
}

/// Leaves out of a query the words found in a large share of a big store
/// ([`crate::words::without_common_words`]), counting FTS5 postings, or
/// reusing counts taken at the same index version (read transactions).
fn without_common_words(
    conn: &Connection,
    rows: i64,
    share: f64,
    terms: Vec<String>,
    known: &KnownCounts,
    tx: &mut WordCounts,
) -> Result<Vec<String>, StoreError> {
    crate::words::without_common_words(terms, rows, share, |t, cap| {
        let key = (t.to_string(), cap);
        let version = tx_version(conn, tx)?;
        if let Some(n) = version.and_then(|v| known.get(v, &key)) {
            return Ok(n);
        }
        let n = count(
            conn,
            "SELECT count(*) FROM (SELECT 1 FROM node_fts WHERE node_fts MATCH ?1 LIMIT ?2)",
            rusqlite::params![format!("\"{t}\""), cap],
        )?;
        if let Some(v) = version {
            known.put(v, key, n);
        }
        Ok(n)
    })
}

/// How many of the best matches over all owners the fast path ranks first.
const FAST_POOL_MIN: usize = 400;

/// `Tx::search_lexical` for SQLite; `memo` and `counts` remember what
/// earlier searches counted ([`Memo`], [`WordCounts`]).
pub(super) fn search(
    conn: &Connection,
    q: &LexicalQuery,
    memo: &Memo,
    counts: &mut WordCounts,
) -> Result<Vec<LexicalHit>, StoreError> {
    // The store's size (nodes ever written; a bound, not a count) decides
    // both the word pruning and the owner's share.
    let rows = count(conn, "SELECT coalesce(max(seq), 0) FROM nodes", [])?;
    let terms = without_common_words(
        conn,
        rows,
        q.pruning_share(),
        crate::words::query_words(&q.text),
        &memo.counts,
        counts,
    )?;
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let expr = or_expression(&terms);
    // Fast path: FTS5 ranks its own matches without touching `nodes`, and
    // only the best `pool` of them are joined and filtered. If at least
    // `limit` survive, they are exactly the filtered top `limit` (anything
    // outside the pool scores lower than all of it); otherwise — a small
    // owner in a big shared store, a narrow filter — the full query runs.
    // An owner holding a small share of the store (one of many tenants)
    // would rarely fill the fast path's pool: go straight to the query that
    // checks membership in its own nodes.
    if q.limit > 0 && memo.shares.owns_a_large_share(conn, rows, q)? {
        let pool = (q.limit * 8).max(FAST_POOL_MIN);
        // A big store, in a read transaction: the best of the matches
        // scored in Rust, with rows' lengths from memory.
        let hits = if rows >= bm25::FROM_ROWS && counts.is_some() {
            match bm25::best_matches(conn, &memo.lengths, &expr, pool)? {
                Some(best) => joined(conn, q, &best)?,
                None => ranked(conn, q, &expr, Some(pool))?,
            }
        } else {
            ranked(conn, q, &expr, Some(pool))?
        };
        if hits.len() >= q.limit || matches_fewer_than(conn, &expr, pool)? {
            return Ok(hits);
        }
    }
    ranked(conn, q, &expr, None)
}

impl Shares {
    /// Whether the query's owner holds at least a quarter of the store's
    /// nodes (counting stops there, so the check is bounded), as counted
    /// last at this store size `rows`.
    fn owns_a_large_share(
        &self,
        conn: &Connection,
        rows: i64,
        q: &LexicalQuery,
    ) -> Result<bool, StoreError> {
        let known = self.0.lock().ok().and_then(|m| m.get(&q.owner).copied());
        if let Some((at, large)) = known {
            if at == rows {
                return Ok(large);
            }
        }
        let quarter = (rows / 4).max(1);
        let owned = count(
            conn,
            "SELECT count(*) FROM (SELECT 1 FROM nodes WHERE owner_id = ?1 LIMIT ?2)",
            rusqlite::params![q.owner.as_str(), quarter],
        )?;
        let large = owned >= quarter;
        if let Ok(mut m) = self.0.lock() {
            m.insert(q.owner.clone(), (rows, large));
        }
        Ok(large)
    }
}

/// Whether `expr` matches fewer than `n` rows over every owner (then the
/// fast path saw them all).
fn matches_fewer_than(conn: &Connection, expr: &str, n: usize) -> Result<bool, StoreError> {
    let matched = count(
        conn,
        &format!(
            "SELECT count(*) FROM (SELECT rowid FROM node_fts WHERE node_fts MATCH ?1 LIMIT {n})"
        ),
        [expr],
    )?;
    Ok((matched as usize) < n)
}

/// The hits among `best` (rowid and bm25, best first, over every owner)
/// that are `q`'s owner's and pass its filters: the best `q.limit` by
/// bm25 then seq, as [`ranked`] orders them. Only the kept hits are
/// joined to their events (the pool is 8× the limit or more).
fn joined(
    conn: &Connection,
    q: &LexicalQuery,
    best: &[(i64, f64)],
) -> Result<Vec<LexicalHit>, StoreError> {
    let seqs: Vec<String> = best.iter().map(|(seq, _)| seq.to_string()).collect();
    let rank: HashMap<i64, f64> = best.iter().copied().collect();
    // `j.key` is the match's place in `best`: its order by (bm25, seq).
    let mut select = Select::new(
        "SELECT n.id, n.node_type, n.content, n.scope, n.source_event_id, n.seq, j.key AS pos
         FROM json_each(?1) j JOIN nodes n ON n.seq = j.value
         WHERE +n.owner_id = ?2",
        vec![
            SqlValue::Text(format!("[{}]", seqs.join(","))),
            SqlValue::Text(q.owner.as_str().to_string()),
        ],
    );
    apply_filters(&mut select, &q.filters);
    let (sql, args) = select.finish("pos", q.limit);
    let sql = format!(
        "SELECT t.id, 0.0, t.node_type, t.content, t.scope, e.id, e.session_id, e.role,
                e.speaker, e.event_time, e.ingested_at, t.seq
         FROM ({sql}) t LEFT JOIN events e ON e.id = t.source_event_id
         ORDER BY t.pos"
    );
    query_all(conn, &sql, &args, |r| {
        let seq: i64 = r.get(11).map_err(map_err)?;
        let r_of = rank.get(&seq).copied().unwrap_or(f64::INFINITY);
        decode_hit(r, Some(-r_of))
    })
}

/// Ranks the matches of `expr` for `q`: all of them, or (with `pool`) only
/// the best `pool` over every owner.
fn ranked(
    conn: &Connection,
    q: &LexicalQuery,
    expr: &str,
    pool: Option<usize>,
) -> Result<Vec<LexicalHit>, StoreError> {
    let mut args = vec![
        SqlValue::Text(expr.to_string()),
        SqlValue::Text(q.owner.as_str().to_string()),
    ];
    let source = match pool {
        // Every match, but FTS5 only checks membership in the set of the
        // owner's nodes that pass the filters (built once from `nodes`'
        // indexes) instead of looking each match up in `nodes`: a narrow
        // filter (entities, a time window, a session) under a big owner
        // stays cheap.
        None => {
            let mut members =
                Select::new("SELECT n.seq FROM nodes n WHERE n.owner_id = ?2", vec![]);
            apply_filters(&mut members, &q.filters);
            let (members, member_args) = members.into_parts();
            args.extend(member_args);
            format!(
                "node_fts JOIN nodes n ON n.seq = node_fts.rowid
                 WHERE node_fts MATCH ?1 AND n.owner_id = ?2 AND +node_fts.rowid IN ({members})"
            )
        }
        // The best `pool` matches over every owner, ranked inside FTS5;
        // only they are looked up in `nodes`.
        Some(pool) => format!(
            "(SELECT rowid AS seq, bm25(node_fts) AS r FROM node_fts WHERE node_fts MATCH ?1
              ORDER BY r LIMIT {pool}) f JOIN nodes n ON n.seq = f.seq
             WHERE n.owner_id = ?2"
        ),
    };
    let rank = if pool.is_some() {
        "f.r"
    } else {
        "bm25(node_fts)"
    };
    let mut select = Select::new(
        format!(
            "SELECT n.id, n.node_type, n.content, n.scope, n.source_event_id, n.seq, {rank} AS r
             FROM {source}"
        ),
        args,
    );
    apply_filters(&mut select, &q.filters);
    let (sql, args) = select.finish("r, n.seq", q.limit);
    let sql = format!(
        "SELECT t.id, -t.r, t.node_type, t.content, t.scope, e.id, e.session_id, e.role,
                e.speaker, e.event_time, e.ingested_at
         FROM ({sql}) t LEFT JOIN events e ON e.id = t.source_event_id
         ORDER BY t.r, t.seq"
    );
    query_all(conn, &sql, &args, |r| decode_hit(r, None))
}

/// Adds the filters every search shares (scope, session, roles, node types,
/// lifecycle, time range, `as_of`) to a query over `nodes n`: in SQL, what
/// [`SearchFilters::admits`] says (the conformance suite checks it).
pub(super) fn apply_filters(select: &mut Select, f: &SearchFilters) {
    let lifecycles = f.lifecycle_states();
    select
        .eq("n.scope", f.scope.as_ref().map(|s| s.as_str()))
        .eq("n.session_id", f.session.as_ref().map(|s| s.as_str()))
        .any("n.source_role", f.roles.iter().map(|r| r.as_str()))
        .any("n.node_type", f.node_types.iter().map(|t| t.as_str()))
        .int("n.effective_ms >= ?", f.time_from.map(|t| t.unix_millis()))
        .int("n.effective_ms < ?", f.time_to.map(|t| t.unix_millis()));
    match f.as_of {
        None => {
            select.any("n.lifecycle", lifecycles.iter().map(|l| l.as_str()));
        }
        Some(as_of) => {
            // A node changed after `as_of` was, at `as_of`, in a state the
            // store no longer holds; kith only ever changes an active node
            // (retiring or superseding it), so it counts as active then.
            let ms = as_of.unix_millis();
            select.int("n.created_ms <= ?", Some(ms));
            let marks = vec!["?"; lifecycles.len()].join(", ");
            let mut values: Vec<SqlValue> = lifecycles
                .iter()
                .map(|l| SqlValue::Text(l.as_str().to_string()))
                .collect();
            let wants_active = lifecycles.iter().any(|l| l.is_active());
            if wants_active {
                values.push(SqlValue::Integer(ms));
                select.raw(
                    &format!("(n.lifecycle IN ({marks}) OR n.updated_ms > ?)"),
                    values,
                );
            } else {
                values.push(SqlValue::Integer(ms));
                select.raw(
                    &format!("(n.lifecycle IN ({marks}) AND n.updated_ms <= ?)"),
                    values,
                );
            }
        }
    }
}

/// Decodes a hit row: `id, score, node_type, content, scope, event id,
/// session, role, speaker, event time, ingested at`. `score` overrides the
/// row's score when given.
pub(super) fn decode_hit(
    r: &rusqlite::Row<'_>,
    score: Option<f64>,
) -> Result<LexicalHit, StoreError> {
    let damaged = |what: String| StoreError::corrupted(format!("search hit: {what}"));
    let text = |i: usize| r.get::<_, Option<String>>(i).map_err(map_err);
    let id: String = r.get(0).map_err(map_err)?;
    let time = |i: usize| -> Result<Option<Timestamp>, StoreError> {
        text(i)?
            .map(|t| Timestamp::parse("time", &t).map_err(|e| damaged(e.to_string())))
            .transpose()
    };
    Ok(LexicalHit {
        node_id: Uuid::parse_str(&id).map_err(|e| damaged(e.to_string()))?,
        score: match score {
            Some(s) => s,
            None => r.get(1).map_err(map_err)?,
        },
        node_type: kith_core::NodeType::parse(
            "node_type",
            &r.get::<_, String>(2).map_err(map_err)?,
        )
        .map_err(|e| damaged(e.to_string()))?,
        content: r.get(3).map_err(map_err)?,
        scope: kith_core::ScopeId::new(r.get::<_, String>(4).map_err(map_err)?)
            .map_err(|e| damaged(e.to_string()))?,
        event_id: text(5)?
            .map(|t| Uuid::parse_str(&t).map_err(|e| damaged(e.to_string())))
            .transpose()?,
        session_id: text(6)?
            .map(|s| SessionId::new(s).map_err(|e| damaged(e.to_string())))
            .transpose()?,
        role: text(7)?
            .map(|s| Role::parse("role", &s).map_err(|e| damaged(e.to_string())))
            .transpose()?,
        speaker: text(8)?,
        event_time: time(9)?,
        ingested_at: time(10)?,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::match_expression;
    use crate::sqlite::{OpenMode, SqliteStore};
    use crate::{LexicalQuery, SearchFilters, Store, TxMode};
    use kith_core::event::InputDefaults;
    use kith_core::{Node, NodeType, OwnerId, ScopeId, Timestamp};
    use uuid::Uuid;

    /// Writes one note per text for owner "ana" in one transaction; their ids.
    pub(in crate::sqlite) fn write(
        store: &SqliteStore,
        first: usize,
        texts: &[String],
    ) -> Vec<Uuid> {
        let defaults = InputDefaults {
            owner_id: None,
            scope: ScopeId::personal(),
            now: Timestamp::parse("now", "2025-01-01T00:00:00Z").unwrap(),
        };
        let mut tx = store.begin(TxMode::Write).unwrap();
        let mut ids = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let input = kith_core::EventInput {
                content: text.clone(),
                owner_id: Some("ana".to_string()),
                source_id: Some(format!("m{}", first + i)),
                ..kith_core::EventInput::new("user", text)
            };
            let event = input.validate(&defaults).unwrap().event;
            let node = Node::note_for(&event, NodeType::Note);
            tx.insert_event(&event).unwrap();
            tx.insert_node(&node).unwrap();
            ids.push(node.id);
        }
        tx.commit().unwrap();
        ids
    }

    /// How many of "zebra rare"'s hits do not hold "rare": zero once
    /// "zebra" is left out as a common word.
    fn zebra_only_hits(store: &SqliteStore) -> usize {
        zebra_only_hits_at(store, None)
    }

    /// [`zebra_only_hits`] with the query's own common-word share.
    fn zebra_only_hits_at(store: &SqliteStore, common_share: Option<f64>) -> usize {
        let mut tx = store.begin(TxMode::Read).unwrap();
        let q = LexicalQuery {
            common_share,
            owner: OwnerId::new("ana").unwrap(),
            text: "zebra rare".into(),
            filters: SearchFilters::default(),
            limit: 0,
        };
        // Twice in one transaction: the second search reuses the counts.
        let first = tx.search_lexical(&q).unwrap();
        let again = tx.search_lexical(&q).unwrap();
        assert_eq!(first, again);
        first.iter().filter(|h| !h.content.contains("rare")).count()
    }

    /// Words' counts are remembered across transactions, but never past a
    /// change of the index: a word crossing the common-word share by one
    /// row, either way (an insert, a delete that leaves the store's size
    /// bound as it was), changes the query at once.
    #[test]
    fn remembered_word_counts_follow_every_change_of_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            SqliteStore::open(&dir.path().join("k.sqlite"), OpenMode::CreateIfMissing).unwrap();
        // 20,000 rows (pruning starts there): the cap is 1,200 rows, and
        // "zebra" is in 1,199 of them.
        let cap = (crate::words::PRUNE_FROM_ROWS as f64 * crate::words::COMMON_SHARE) as usize;
        let texts: Vec<String> = (0..crate::words::PRUNE_FROM_ROWS as usize)
            .map(|i| match i {
                0 => "a rare zebra".to_string(),
                i if i < cap - 1 => format!("zebra number {i}"),
                i => format!("filler number {i}"),
            })
            .collect();
        write(&store, 0, &texts);
        // A second transaction finds the counts remembered.
        assert_eq!(zebra_only_hits(&store), cap - 2);
        // A query that asks for a smaller share (a category's members)
        // leaves "zebra" out at 6%; one asking for a larger share keeps it.
        assert_eq!(zebra_only_hits_at(&store, Some(0.01)), 0);
        assert_eq!(zebra_only_hits_at(&store, Some(0.5)), cap - 2);
        assert_eq!(zebra_only_hits(&store), cap - 2);
        // One more "zebra" row reaches the cap (still 1,200 at 20,001 rows).
        let extra = write(&store, texts.len(), &["zebra again".to_string()]);
        assert_eq!(zebra_only_hits(&store), 0);
        // Deleting it leaves the store's size bound (its largest seq) but not the count.
        let mut tx = store.begin(TxMode::Write).unwrap();
        tx.delete_nodes(&extra).unwrap();
        tx.commit().unwrap();
        assert_eq!(zebra_only_hits(&store), cap - 2);
    }

    /// Through the store past [`super::bm25::FROM_ROWS`] rows: a read
    /// transaction's lexical search (ranked in Rust, rows' lengths from
    /// the store's copy) returns what FTS5's statement gives, and keeps
    /// doing so after an update of a node's text, a delete and new notes.
    #[test]
    fn a_big_store_ranks_as_fts5_across_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            SqliteStore::open(&dir.path().join("k.sqlite"), OpenMode::CreateIfMissing).unwrap();
        let words = ["otter", "heron", "reeds", "otter heron", "the lake"];
        let texts: Vec<String> = (0..super::bm25::FROM_ROWS as usize)
            .map(|i| format!("{} {}", words[i % 5], "x ".repeat(i % 7)))
            .collect();
        let ids = write(&store, 0, &texts);
        let q = LexicalQuery {
            common_share: None,
            owner: OwnerId::new("ana").unwrap(),
            text: "otter heron".into(),
            filters: SearchFilters::default(),
            limit: 10,
        };
        let compare = || {
            let conn = store.take().unwrap();
            conn.execute_batch("BEGIN DEFERRED").unwrap();
            let ours = super::search(&conn, &q, &store.lexical, &mut Some(None)).unwrap();
            let expr = super::or_expression(&["otter".into(), "heron".into()]);
            let theirs = super::ranked(&conn, &q, &expr, Some(super::FAST_POOL_MIN)).unwrap();
            conn.execute_batch("COMMIT").unwrap();
            store.release(conn);
            assert_eq!(ours.len(), 10);
            assert_eq!(ours, theirs);
            ours
        };
        let first = compare();
        // The best hit's text grows: it falls (same rowid, a new length).
        let best = first[0].node_id;
        let mut tx = store.begin(TxMode::Write).unwrap();
        let mut node = tx.get_node(best).unwrap().unwrap();
        node.content = format!("otter heron {}", "y ".repeat(30));
        tx.update_node(&node).unwrap();
        tx.commit().unwrap();
        let after_update = compare();
        assert!(after_update.iter().all(|h| h.node_id != best));
        // The new best is deleted; new short notes come in.
        let mut tx = store.begin(TxMode::Write).unwrap();
        tx.delete_nodes(&[after_update[0].node_id]).unwrap();
        tx.commit().unwrap();
        assert!(compare()
            .iter()
            .all(|h| h.node_id != after_update[0].node_id));
        let fresh = write(
            &store,
            ids.len(),
            &vec!["otter otter heron heron".to_string(); 3],
        );
        let last = compare();
        assert!(fresh.iter().all(|id| last.iter().any(|h| h.node_id == *id)));
    }

    #[test]
    fn questions_become_quoted_or_terms() {
        assert_eq!(
            match_expression("Where does Maya work now?").as_deref(),
            Some("\"maya\" OR \"work\" OR \"now\"")
        );
        assert_eq!(
            match_expression("NEAR(\"x\" AND y*) -- drop").as_deref(),
            Some("\"near\" OR \"x\" OR \"y\" OR \"drop\"")
        );
        assert_eq!(match_expression("what is it?"), None);
    }
}
