//! Lexical search (PostgreSQL full text search) and exact vector search
//! (pgvector) for the PostgreSQL backend.
//!
//! Lexical: the query is cut into words exactly as the SQLite backend does
//! ([`crate::words::query_words`]: letters and digits, lower-cased,
//! kith's stopwords dropped), and each word becomes a quoted lexeme joined
//! by `|` in `to_tsquery('english', …)`. `websearch_to_tsquery` would AND the
//! words and read `-` and `or` as syntax; the quoted OR query matches any
//! word, like FTS5's, and no character of the text can act as syntax.
//! Scores are BM25-like (see [`lexical_sql`]): IDFs from PostgreSQL's own
//! statistics, higher is better.
//!
//! Vector: an exact scan ordered by pgvector's negative inner product
//! (`<#>`); vectors are L2-normalised, so the score `-(a <#> b)` is cosine
//! similarity. No ANN index is used, so results are exact.

use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

use super::sql::{Arg, Select};
use crate::{LexicalHit, LexicalQuery, SearchFilters, StoreError, StoreErrorKind, VectorQuery};

/// The `to_tsquery` text for free text, or `None` when no word is left.
#[cfg(test)]
pub fn tsquery_text(text: &str) -> Option<String> {
    tsquery_of(&crate::words::query_words(text))
}

/// The `to_tsquery` text matching any of `words`, or `None` for none.
pub fn tsquery_of(words: &[String]) -> Option<String> {
    if words.is_empty() {
        return None;
    }
    Some(
        words
            .iter()
            // Words are letters and digits only, so they hold no quote or
            // backslash; quoting still keeps a word that happens to be an
            // operator name or holds a character the parser splits on a
            // lexeme (or a phrase), never syntax.
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" | "),
    )
}

/// The share of rows holding word `u.w` by the statistics `s` (of
/// [`WORD_STATS_SQL`] and [`bm25_sql`]): the largest share of the lexemes
/// `to_tsvector` makes of it, each found by its position in
/// `most_common_elems` (NULL for none). The word is parsed once, not once
/// per tracked lexeme (~1,000 of them: ~0.7 ms a word, at 1,000 owners ×
/// 1,000 nodes). A macro, so the `const` statement can hold it too.
macro_rules! tracked_share {
    () => {
        "SELECT max(s.freqs[array_position(s.elems, l.lexeme)])::float8
           FROM s, unnest(tsvector_to_array(to_tsvector('english', u.w))) AS l(lexeme)"
    };
}

/// For each word of `$1` (in order): the share of rows holding it as
/// PostgreSQL's statistics for `nodes.content_tsv` know it (`pg_stats`
/// `most_common_elems`; NULL when it is not among them), and the smallest
/// share those statistics track (NULL when there are no statistics yet:
/// before the first (auto)analyze), and on every row the store's size
/// (`max(seq)` of nodes). A word is looked up as the lexeme(s)
/// `to_tsvector('english', …)` makes of it, which is how it is indexed.
pub const WORD_STATS_SQL: &str = concat!(
    "WITH s AS (
   SELECT most_common_elems::text::text[] AS elems, most_common_elem_freqs AS freqs
   FROM pg_stats
   WHERE schemaname = current_schema() AND tablename = 'nodes' AND attname = 'content_tsv'
 )
 SELECT u.w,
   (",
    tracked_share!(),
    "),
   (SELECT s.freqs[array_length(s.elems, 1) + 1]::float8 FROM s),
   (SELECT coalesce(max(seq), 0) FROM nodes)
 FROM unnest($1::text[]) WITH ORDINALITY AS u(w, i)
 ORDER BY u.i"
);

/// For each word of `$1` (in order), how many rows hold it, counting no
/// further than `$2`: the shares when the statistics [`WORD_STATS_SQL`]
/// reads do not exist yet. One index probe a word, so a word nobody wrote
/// costs next to nothing, and a common one at most `$2` rows.
pub const WORD_COUNTS_SQL: &str = "SELECT (SELECT count(*) FROM (SELECT 1 FROM nodes
            WHERE content_tsv @@ to_tsquery('english', quote_literal(u.w)) LIMIT $2) c)
 FROM unnest($1::text[]) WITH ORDINALITY AS u(w, i)
 ORDER BY u.i";

/// Queries of at most this many words are scored with IDFs; longer ones
/// (a pasted document) by `ts_rank_cd`: each scored word costs a test per
/// matching row.
pub const MAX_SCORED_WORDS: usize = 64;

/// The average number of lexemes of the newest nodes (up to 2,000): BM25's
/// average length, sampled where the index is cheap to walk.
pub const AVG_LEXEMES_SQL: &str = "SELECT coalesce(avg(length(content_tsv)), 0)::float8
 FROM (SELECT content_tsv FROM nodes ORDER BY seq DESC LIMIT 2000) newest";

/// BM25's term saturation and length normalisation (the usual values).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// BM25's inverse document frequency for a word found in `share` of the
/// rows of a store of `rows` rows.
pub fn idf(share: f64, rows: f64) -> f64 {
    let rows = rows.max(1.0);
    let n = (share * rows).clamp(0.0, rows);
    (1.0 + (rows - n + 0.5) / (n + 0.5)).ln()
}

/// The SQL and parameters of a lexical search for `words` (the query's,
/// perhaps without its common ones) weighted by `idfs` (one per word; with
/// none, ranked by `ts_rank_cd`), or `None` if there is no word.
///
/// The score is BM25 with every term counted once (turns are short, and a
/// `tsvector` keeps positions, not counts): the IDFs of the words a node
/// holds, times `(k1 + 1) / (1 + k1 (1 - b + b · len / avglen))`, where
/// `len` is the node's number of lexemes and `avglen` (`avg_lexemes`) the
/// store's average. `ts_rank_cd` has no IDF, so a common word counted as much
/// as a rare one (LoCoMo recall@10 on PostgreSQL 0.739 with it, 0.759 with
/// this; SQLite's BM25 0.759).
pub fn lexical_sql(
    q: &LexicalQuery,
    words: &[String],
    idfs: &[f64],
    avg_lexemes: f64,
) -> Option<(String, Vec<super::sql::Arg>)> {
    let text = tsquery_of(words)?;
    if idfs.len() != words.len() {
        return Some(ranked_by_cover_density(q, &text));
    }
    let mut select = Select::new("");
    let query = select.arg(text);
    let owner = select.arg(q.owner.as_str().to_string());
    // Each word's tsquery is made once, in FROM: `to_tsquery` is only
    // STABLE, so written inside the score it would be parsed again for
    // every matching row (that doubled the query's time at 100k nodes).
    let mut sources = Vec::new();
    let terms: Vec<String> = words
        .iter()
        .zip(idfs)
        .enumerate()
        .map(|(i, (w, idf))| {
            let word = select.arg(format!("'{w}'"));
            let weight = select.arg(*idf);
            sources.push(format!("to_tsquery('english', {word}) AS t{i}(q)"));
            format!("(n.content_tsv @@ t{i}.q)::int * {weight}::float8")
        })
        .collect();
    // The inner query ranks and filters on `nodes` alone (role and time are
    // copied onto nodes at insert); events are joined for the top hits only.
    select.push(&format!(
        "WITH {size}
         SELECT n.id, n.node_type, n.content, n.scope, n.source_event_id, n.seq,
                ({sum}) * {norm} AS score
         FROM {matches} n, {sources}
         WHERE n.owner_id = {owner}",
        size = owner_size(&owner),
        matches = owner_matches(&owner, &format!("to_tsquery('english', {query})")),
        sum = terms.join(" + "),
        sources = sources.join(", "),
        norm = length_norm(avg_lexemes),
    ));
    Some(ranked_hits(select, q))
}

/// The SQL and parameters of a lexical search for a query of `words`
/// (1 to [`MAX_SCORED_WORDS`] of them) in one statement, so one round trip.
///
/// It takes, in the server, the steps [`lexical_sql`]'s caller takes in
/// Rust between two round trips (the rule is the same; the two must not
/// drift): each word's share of the rows from [`WORD_STATS_SQL`]'s
/// statistics (a word they do not track: half the smallest share they
/// do), or, before the first (auto)analyze, counted as
/// [`WORD_COUNTS_SQL`] counts them (for 2+ words, up to a cap); in a store
/// of [`crate::words::PRUNE_FROM_ROWS`]+ rows, words in
/// [`LexicalQuery::pruning_share`]+ of them are left out when a rarer one
/// is left; then [`idf`] of each kept word (1 without a share) and the
/// BM25-like score of [`lexical_sql`].
///
/// `tracked` and `shares` are `MATERIALIZED`: each is read in several
/// places, and inlined, its per-word lookups (a statistics scan, or before
/// the first analyze a capped count of matches) ran once per place: at
/// 1,000 owners × 1,000 nodes the word statistics took 10–15 ms of a
/// 20–25 ms search (BENCHMARKS.md, "Many owners on PostgreSQL").
pub fn bm25_sql(q: &LexicalQuery, words: &[String], avg_lexemes: f64) -> (String, Vec<Arg>) {
    let mut select = Select::new("");
    let words_arg = select.arg(words.to_vec());
    let owner = select.arg(q.owner.as_str().to_string());
    let common = select.arg(q.pruning_share());
    let count = select.arg((2..=MAX_SCORED_WORDS).contains(&words.len()));
    let prune = select.arg(words.len() >= 2);
    let prune_from = select.arg(crate::words::PRUNE_FROM_ROWS as f64);
    select.push(&format!(
        "WITH s AS (
           SELECT most_common_elems::text::text[] AS elems, most_common_elem_freqs AS freqs
           FROM pg_stats
           WHERE schemaname = current_schema() AND tablename = 'nodes'
             AND attname = 'content_tsv'
         ),
         total AS (SELECT coalesce(max(seq), 0)::float8 AS n FROM nodes),
         tracked AS MATERIALIZED (
           SELECT u.w, u.i, ({share}) AS share,
             (SELECT s.freqs[array_length(s.elems, 1) + 1]::float8 FROM s) AS smallest
           FROM unnest({words_arg}::text[]) WITH ORDINALITY AS u(w, i)
         ),
         shares AS MATERIALIZED (
           SELECT r.w, r.i, greatest(t.n, 1.0) AS n, CASE
             WHEN r.smallest IS NOT NULL THEN coalesce(r.share, r.smallest / 2)
             WHEN {count} AND t.n > 0 THEN (SELECT count(*) FROM (SELECT 1 FROM nodes
                 WHERE content_tsv @@ to_tsquery('english', quote_literal(r.w))
                 LIMIT greatest(floor(t.n * {common}), 100)::bigint) c)::float8 / t.n
             END AS share,
             NOT ({prune} AND t.n >= {prune_from}) AS keep_all
           FROM tracked r, total t
         ),
         marked AS (
           SELECT w, i, n, share,
             keep_all OR share IS NULL OR share < {common} AS rare,
             least(greatest(share * n, 0.0), n) AS holding
           FROM shares
         ),
         {size},
         kept AS (
           SELECT w, i, to_tsquery('english', quote_literal(w)) AS q,
             CASE WHEN share IS NULL THEN 1.0::float8
                  ELSE ln(1.0 + (n - holding + 0.5) / (holding + 0.5)) END AS idf
           FROM marked
           WHERE rare OR NOT EXISTS (SELECT 1 FROM marked WHERE rare)
         )
         SELECT n.id, n.node_type, n.content, n.scope, n.source_event_id, n.seq,
                coalesce((SELECT sum(k.idf) FROM kept k WHERE n.content_tsv @@ k.q), 0.0)
                  * {norm} AS score
         FROM {matches} n
         WHERE n.owner_id = {owner}",
        share = tracked_share!(),
        size = owner_size(&owner),
        matches = owner_matches(
            &owner,
            "to_tsquery('english', string_agg(quote_literal(w), ' | ' ORDER BY i)) FROM kept"
        ),
        norm = length_norm(avg_lexemes),
    ));
    ranked_hits(select, q)
}

/// An owner holding fewer nodes than this has its lexical matches found
/// by reading its own nodes (one owner-led index walk, each row's
/// `tsvector` tested); a larger one through the `tsvector` GIN index,
/// which spans every owner's rows. See [`owner_matches`]. Set from one
/// measurement, not swept: 1,000 rows read and tested took 1.3 ms, so
/// 5,000 take ~6.5 ms, under the 7–15 ms the index took at 1M rows.
pub const OWNER_FIRST_BELOW: i64 = 5_000;

/// The `WITH` item [`owner_matches`] reads: whether the owner bound at
/// `owner` (a placeholder) holds fewer than [`OWNER_FIRST_BELOW`] nodes,
/// counted no further than that through `nodes_owner_seq`.
fn owner_size(owner: &str) -> String {
    format!(
        "owner_size AS (
           SELECT count(*) < {OWNER_FIRST_BELOW} AS small
           FROM (SELECT 1 FROM nodes WHERE owner_id = {owner} LIMIT {OWNER_FIRST_BELOW}) o
         )"
    )
}

/// The rows of `nodes` of the owner bound at `owner` (a placeholder)
/// whose `content_tsv` matches the `tsquery` the SQL `tsquery` computes
/// (the body of a scalar subquery, `SELECT` left out: it runs once), as a
/// `FROM` item with every column of `nodes`; the statement defines
/// [`owner_size`] in its `WITH`.
///
/// The GIN index on `content_tsv` holds every owner's rows, so a common
/// word's postings run to a share of the whole store before the owner
/// filter keeps an owner's few: at 1,000 owners × 1,000 nodes the search
/// of a small owner cost 10–55 ms (BENCHMARKS.md, "Many owners on
/// PostgreSQL"). For an owner of fewer than [`OWNER_FIRST_BELOW`] nodes
/// (counted up to that bound through `nodes_owner_seq`) its own rows are
/// read and tested instead: `ts_match_vq` is the function behind `@@`,
/// the same test, but no index serves a function call, so the planner
/// cannot choose the GIN index for that branch. A larger owner's branch
/// keeps `@@` and the index. Both are one statement: the count gates each
/// branch as a one-time filter, so only one of them runs.
fn owner_matches(owner: &str, tsquery: &str) -> String {
    format!(
        "(SELECT m.* FROM nodes m
           WHERE m.owner_id = {owner} AND (SELECT small FROM owner_size)
             AND ts_match_vq(m.content_tsv, (SELECT {tsquery}))
         UNION ALL
         SELECT m.* FROM nodes m
           WHERE m.owner_id = {owner} AND NOT (SELECT small FROM owner_size)
             AND m.content_tsv @@ (SELECT {tsquery}))"
    )
}

/// BM25's length factor, `(k1 + 1) / (1 + k1 (1 - b + b · len / avglen))`,
/// as SQL over a node `n` (`len`: its lexemes; `avglen`: `avg_lexemes`).
fn length_norm(avg_lexemes: f64) -> String {
    format!(
        "{k1p1} / (1.0 + {K1} * (1.0 - {B} + {B} * length(n.content_tsv) / {avg}::float8))",
        k1p1 = K1 + 1.0,
        avg = avg_lexemes.max(1.0),
    )
}

/// A lexical search's statement from its ranking `select` (rows of `nodes`
/// `n` with a `score`): the request's filters, the best `q.limit`, and
/// only then their events joined (role and time are copied onto nodes at
/// insert, so ranking and filtering need `nodes` alone). Each hit carries
/// its place in that order as `rank` (from 1), numbered by the same
/// `ORDER BY` the rows come in: a statement that wraps this one (a
/// `UNION`, a CTE) orders by `rank`, since SQL keeps no subquery's order.
fn ranked_hits(mut select: Select, q: &LexicalQuery) -> (String, Vec<Arg>) {
    apply_filters(&mut select, &q.filters);
    let (inner, args) = select.finish("score DESC, n.seq", q.limit);
    let sql = format!(
        "SELECT n.score::float8 AS score, {},
                row_number() OVER (ORDER BY n.score DESC, n.seq) AS rank
         FROM ({inner}) n
         LEFT JOIN events e ON e.id = n.source_event_id
         ORDER BY n.score DESC, n.seq",
        super::rows::HIT_COLUMNS
    );
    (sql, args)
}

/// [`lexical_sql`] for queries too long to score word by word:
/// `ts_rank_cd` (cover density, no IDF).
fn ranked_by_cover_density(q: &LexicalQuery, text: &str) -> (String, Vec<super::sql::Arg>) {
    let mut select = Select::new("");
    let query = select.arg(text.to_string());
    let owner = select.arg(q.owner.as_str().to_string());
    select.push(&format!(
        "WITH {size}
         SELECT n.id, n.node_type, n.content, n.scope, n.source_event_id, n.seq,
                ts_rank_cd(n.content_tsv, tq.q)::float8 AS score
         FROM {matches} n, to_tsquery('english', {query}) AS tq(q)
         WHERE n.owner_id = {owner}",
        size = owner_size(&owner),
        matches = owner_matches(&owner, &format!("to_tsquery('english', {query})")),
    ));
    ranked_hits(select, q)
}

/// The SQL and parameters of an exact vector search, or `None` when the
/// query cannot match anything (an empty vector).
pub fn vector_sql(q: &VectorQuery) -> Result<Option<(String, Vec<super::sql::Arg>)>, StoreError> {
    if q.vector.iter().any(|v| !v.is_finite()) {
        return Err(StoreError::new(
            StoreErrorKind::Other,
            "the query vector holds a non-finite number",
        ));
    }
    if q.vector.is_empty() {
        return Ok(None);
    }
    let limit = if q.limit == 0 { 10 } else { q.limit };
    let mut select = Select::new("");
    let vector = select.arg(PgVector(q.vector.clone()));
    let owner = select.arg(q.owner.as_str().to_string());
    let model = select.arg(q.model.clone());
    let dim = select.arg(q.vector.len() as i32);
    // The inner query scans and filters on embeddings and nodes only;
    // events are joined for the top hits, not for every vector.
    select.push(&format!(
        "SELECT n.id, n.node_type, n.content, n.scope, n.source_event_id, n.seq,
                m.vector <#> {vector} AS distance
         FROM embeddings m JOIN nodes n ON n.id = m.node_id
         WHERE m.owner_id = {owner} AND m.model = {model} AND m.dim = {dim}
           AND n.owner_id = {owner}"
    ));
    apply_filters(&mut select, &q.filters);
    let (inner, args) = select.finish("distance, n.seq", limit);
    let sql = format!(
        "SELECT (-n.distance)::float8 AS score, {}
         FROM ({inner}) n LEFT JOIN events e ON e.id = n.source_event_id
         ORDER BY n.distance, n.seq",
        super::rows::HIT_COLUMNS
    );
    Ok(Some((sql, args)))
}

/// The SQL and parameters that re-check vector candidates found in memory
/// ([`super::vectors`]): those still passing every filter (lifecycle can
/// have changed since they were copied), with their provenance. Scores are
/// the caller's.
pub fn candidates_sql(ids: Vec<uuid::Uuid>, q: &VectorQuery) -> (String, Vec<super::sql::Arg>) {
    let mut select = Select::new("");
    let ids = select.arg(ids);
    let owner = select.arg(q.owner.as_str().to_string());
    select.push(&format!(
        "SELECT 0::float8 AS score, {} FROM nodes n LEFT JOIN events e ON e.id = n.source_event_id
         WHERE n.id = ANY({ids}) AND n.owner_id = {owner}",
        super::rows::HIT_COLUMNS
    ));
    apply_filters(&mut select, &q.filters);
    // Unordered: the caller orders by score, and an ORDER BY tempts the
    // planner to walk the seq index instead of looking the ids up.
    select.into_parts()
}

/// Adds the filters every search shares (scope, session, roles, node types,
/// lifecycle, time range, `as_of`) to a query over `nodes n`: in SQL, what
/// [`SearchFilters::admits`] says (the conformance suite checks it), as the
/// SQLite backend's.
pub(super) fn apply_filters(select: &mut Select, f: &SearchFilters) {
    let states = f.lifecycle_states();
    let wants_active = states.iter().any(|l| l.is_active());
    let lifecycles: Vec<String> = states.iter().map(|l| l.as_str().to_string()).collect();
    select
        .eq("n.scope", f.scope.as_ref().map(|s| s.as_str()))
        .eq("n.session_id", f.session.as_ref().map(|s| s.as_str()))
        .any("n.source_role", f.roles.iter().map(|r| r.as_str()))
        .any("n.node_type", f.node_types.iter().map(|t| t.as_str()))
        .int("n.effective_ms >=", f.time_from.map(|t| t.unix_millis()))
        .int("n.effective_ms <", f.time_to.map(|t| t.unix_millis()));
    match f.as_of {
        None => {
            let p = select.arg(lifecycles);
            select.and(&format!("n.lifecycle = ANY({p})"));
        }
        Some(as_of) => {
            // A node changed after `as_of` was, at `as_of`, in a state the
            // store no longer holds; kith only ever changes an active node
            // (retiring or superseding it), so it counts as active then.
            let ms = select.arg(as_of.unix_millis());
            select.and(&format!("n.created_ms <= {ms}"));
            let states = select.arg(lifecycles);
            if wants_active {
                select.and(&format!(
                    "(n.lifecycle = ANY({states}) OR n.updated_ms > {ms})"
                ));
            } else {
                select.and(&format!(
                    "(n.lifecycle = ANY({states}) AND n.updated_ms <= {ms})"
                ));
            }
        }
    }
}

/// Runs a search built by [`lexical_sql`] or [`vector_sql`].
pub fn decode_hits(rows: &[postgres::Row]) -> Result<Vec<LexicalHit>, StoreError> {
    rows.iter().map(super::rows::hit).collect()
}

/// A pgvector `vector` in its binary wire form: dimension (u16), a reserved
/// u16 (0), then big-endian f32s. Binary keeps every float exact, which the
/// text form only does if both sides print shortest round-trip decimals.
#[derive(Debug, Clone, PartialEq)]
pub struct PgVector(pub Vec<f32>);

impl ToSql for PgVector {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let dim = u16::try_from(self.0.len())
            .map_err(|_| format!("a vector of {} dimensions is too long", self.0.len()))?;
        out.extend_from_slice(&dim.to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes());
        for v in &self.0 {
            out.extend_from_slice(&v.to_be_bytes());
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "vector"
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for PgVector {
    fn from_sql(
        _ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        if raw.len() < 4 {
            return Err("a vector shorter than its header".into());
        }
        let dim = u16::from_be_bytes([raw[0], raw[1]]) as usize;
        let body = &raw[4..];
        if body.len() != dim * 4 {
            return Err(format!(
                "a vector of dimension {dim} with {} bytes of values",
                body.len()
            )
            .into());
        }
        Ok(PgVector(
            body.chunks_exact(4)
                .map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ))
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "vector"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_become_quoted_or_lexemes() {
        assert_eq!(
            tsquery_text("Where does Maya work now?").as_deref(),
            Some("'maya' | 'work' | 'now'")
        );
        // Operators are text; the "s" after an apostrophe is a
        // possessive's tail, not a word (`crate::words::query_words`).
        assert_eq!(
            tsquery_text("NEAR(\"x\" & y:*) | !drop <-> 'it''s'").as_deref(),
            Some("'near' | 'x' | 'y' | 'drop'")
        );
        assert_eq!(tsquery_text("s & t").as_deref(), Some("'s' | 't'"));
        assert_eq!(tsquery_text("what is it?"), None);
    }

    #[test]
    fn vectors_round_trip_through_the_wire_form() {
        let v = PgVector(vec![1.5, -0.25, f32::MIN_POSITIVE, 0.1]);
        let mut out = postgres::types::private::BytesMut::new();
        let ty = Type::TEXT; // not checked by to_sql
        v.to_sql(&ty, &mut out).unwrap();
        assert_eq!(&out[..4], &[0, 4, 0, 0]);
        assert_eq!(PgVector::from_sql(&ty, &out).unwrap(), v);
        assert!(PgVector::from_sql(&ty, &out[..7]).is_err());
    }
}
