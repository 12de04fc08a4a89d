//! [`crate::Tx::read_together`] in one statement: each read's own SQL (the
//! statement its method sends: [`search::bm25_sql`], `list_nodes`'s, …) as
//! a `WITH` entry, its parameters renumbered after the ones before, and
//! every kind of row it returns as one side of a `UNION ALL`, told apart
//! by a `part` column (as in [`super::joined`]). Every side fills the
//! columns of one decoder ([`rows::hit`], [`rows::node`], [`rows::event`])
//! under their usual names and leaves the others `NULL`; `ord` carries
//! each side's own order (a search's `rank`, a session's `rn`, a list's
//! `seq`), since SQL keeps no subquery's order. Where one read's second
//! step depends on its first only through SQL (a search's nodes, edges and
//! the nodes at their ends), both are sides of the same statement.
//!
//! A read that takes statements of its own anyway (a pasted document's
//! search, a list without an owner) is answered by its method, and the
//! entity probe of a [`Read::SearchNodes`] is taken first (from the read
//! transaction's first round trip when it answers, see
//! [`PgTx::has_nodes_to_search`]): an owner without entities sends no
//! search.

use std::collections::HashMap;

use super::sql::{refs, Arg};
use super::{joined, rows, search, session_events_sql, PgTx};
use crate::together::{read_one, Answer, Read};
use crate::{LexicalHit, StoreError, StoredEvent, StoredNode};

/// Which decoder reads a side of the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hit = 1,
    Node = 2,
    Event = 4,
    Edge = 8,
}

const H: u8 = Kind::Hit as u8;
const N: u8 = Kind::Node as u8;
const E: u8 = Kind::Event as u8;
const G: u8 = Kind::Edge as u8;

/// Every side's columns, in order: name, SQL type, and the kinds whose
/// relation has the column (the others select `NULL` of the type). The
/// names are the decoders'; a name two tables share has one type in both.
const COLUMNS: &[(&str, &str, u8)] = &[
    ("id", "uuid", H | N | E | G),
    ("scope", "text", H | N | E | G),
    ("content", "text", H | N | E),
    ("node_type", "text", H | N),
    ("seq", "bigint", N | E | G),
    ("owner_id", "text", N | E | G),
    ("session_id", "text", N | E),
    ("metadata", "text", N | E | G),
    ("event_time", "text", N | E),
    ("confidence", "float8", N | G),
    ("valid_from", "text", N | G),
    ("valid_to", "text", N | G),
    ("created_at", "text", N | G),
    ("score", "float8", H),
    ("event_id", "uuid", H),
    ("event_session", "text", H),
    ("event_role", "text", H),
    ("event_speaker", "text", H),
    ("event_event_time", "text", H),
    ("event_ingested_at", "text", H),
    ("lifecycle", "text", N),
    ("epistemic_type", "text", N),
    ("source_type", "text", N),
    ("superseded_by", "uuid", N),
    ("evidence_refs", "uuid[]", N),
    ("updated_at", "text", N),
    ("role", "text", E),
    ("speaker", "text", E),
    ("content_sha256", "text", E),
    ("ingested_at", "text", E),
    ("source_id", "text", E),
    ("checksum", "text", E),
    ("forgotten_at", "text", E),
    ("forgotten_reason", "text", E),
    ("forgotten_by", "uuid", E),
    ("tombstone_checksum", "text", E),
    ("edge_source", "uuid", G),
    ("target_id", "uuid", G),
    ("edge_type", "text", G),
    ("provenance_event_id", "uuid", G),
];

/// One side of the `UNION ALL`: rows of `kind` for read `read`, from the
/// `WITH` entry `from`, in the order of its column `ord`.
struct Side {
    read: usize,
    kind: Kind,
    from: String,
    ord: &'static str,
}

/// The statement being built.
#[derive(Default)]
struct Statement {
    with: Vec<String>,
    args: Vec<Arg>,
    sides: Vec<Side>,
}

impl Statement {
    /// Adds `sql` (whose parameters are `$1…` of `args`) as a `WITH` entry
    /// and returns its name.
    fn relation(&mut self, sql: &str, args: Vec<Arg>) -> String {
        let sql = shift_parameters(sql, self.args.len());
        self.args.extend(args);
        self.entry(sql)
    }

    /// Adds `sql` (whose parameters are this statement's) as a `WITH`
    /// entry and returns its name.
    fn entry(&mut self, sql: String) -> String {
        let name = format!("r{}", self.with.len());
        self.with.push(format!("{name} AS ({sql})"));
        name
    }

    /// Binds `value` and returns its placeholder.
    fn arg(&mut self, value: impl postgres::types::ToSql + Sync + Send + 'static) -> String {
        self.args.push(Box::new(value));
        format!("${}", self.args.len())
    }

    fn side(&mut self, read: usize, kind: Kind, from: String, ord: &'static str) {
        self.sides.push(Side {
            read,
            kind,
            from,
            ord,
        });
    }

    /// The statement's text.
    fn sql(&self) -> String {
        let sides: Vec<String> = self
            .sides
            .iter()
            .enumerate()
            .map(|(part, s)| {
                let columns: Vec<String> = COLUMNS
                    .iter()
                    .map(|(name, ty, kinds)| {
                        if kinds & s.kind as u8 != 0 {
                            name.to_string()
                        } else {
                            format!("NULL::{ty} AS {name}")
                        }
                    })
                    .collect();
                format!(
                    "SELECT {part} AS part, {} AS ord, {} FROM {}",
                    s.ord,
                    columns.join(", "),
                    s.from
                )
            })
            .collect();
        format!(
            "WITH {} {} ORDER BY part, ord",
            self.with.join(", "),
            sides.join(" UNION ALL ")
        )
    }
}

/// `sql` with each parameter `$n` outside string literals as `$(n + by)`.
fn shift_parameters(sql: &str, by: usize) -> String {
    if by == 0 {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut chars = sql.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '\'' {
            quoted = !quoted;
        } else if c == '$' && !quoted {
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            if let Ok(n) = digits.parse::<usize>() {
                out.push_str(&(n + by).to_string());
            } else {
                out.push_str(&digits);
            }
        }
    }
    out
}

/// What a read collects from the statement's rows.
#[derive(Default)]
struct Found {
    hits: Vec<LexicalHit>,
    nodes: Vec<StoredNode>,
    events: Vec<StoredEvent>,
    edges: Vec<kith_core::Edge>,
    /// Nodes of a second node side (the ends of a search's edges).
    ends: Vec<StoredNode>,
}

/// [`crate::Tx::read_together`] on PostgreSQL.
pub(super) fn read(tx: &mut PgTx<'_>, reads: &[Read]) -> Result<Vec<Answer>, StoreError> {
    if let [one] = reads {
        // Alone, a read is its method's statement.
        return Ok(vec![read_one(tx, one)?]);
    }
    let mut answers: Vec<Option<Answer>> = vec![None; reads.len()];
    let mut st = Statement::default();
    plan(tx, reads, &mut st, &mut answers)?;
    let mut found = run(tx, reads, &mut st, &mut answers)?;
    Ok(reads
        .iter()
        .enumerate()
        .map(|(i, r)| {
            answers[i]
                .take()
                .unwrap_or_else(|| answer(r, found.remove(&i).unwrap_or_default()))
        })
        .collect())
}

/// Adds each of `reads` to `st`, or answers it in `answers` when it needs
/// no statement (nothing to read) or statements of its own.
fn plan(
    tx: &mut PgTx<'_>,
    reads: &[Read],
    st: &mut Statement,
    answers: &mut [Option<Answer>],
) -> Result<(), StoreError> {
    for (i, r) in reads.iter().enumerate() {
        match r {
            Read::Search(q) | Read::SearchNodes(q) | Read::SearchNodesWithEdges(q) => {
                if let Some(done) = plan_search(tx, r, q, i, st)? {
                    answers[i] = Some(done);
                }
            }
            Read::EdgesOf(owner, ids) => {
                if ids.is_empty() {
                    answers[i] = Some(Answer::Edges(HashMap::new()));
                    continue;
                }
                let owner = st.arg(owner.as_str().to_string());
                let ids = st.arg(ids.clone());
                let g = st.entry(joined::edges_at_sql(&owner, &format!("= ANY({ids})")));
                st.side(i, Kind::Edge, g, "seq");
            }
            Read::SessionEvents(owner, sessions, limit) => {
                if sessions.is_empty() {
                    answers[i] = Some(Answer::Events(Vec::new()));
                    continue;
                }
                let (sql, args) = session_events_sql(owner, sessions, *limit);
                let events = st.relation(&sql, args);
                st.side(i, Kind::Event, events, "rn");
            }
            Read::NodesWithEvidence(q) => {
                let Some(owner) = &q.owner else {
                    answers[i] = Some(read_one(tx, r)?);
                    continue;
                };
                let (sql, args) = tx.list_nodes_sql(q)?;
                let nodes = st.relation(&sql, args);
                st.side(i, Kind::Node, nodes.clone(), "seq");
                let owner = st.arg(owner.as_str().to_string());
                let events = st.entry(format!(
                    "SELECT {} FROM events
                     WHERE owner_id = {owner} AND id IN (SELECT evidence_refs[1] FROM {nodes})",
                    rows::EVENT_COLUMNS
                ));
                st.side(i, Kind::Event, events, "seq");
            }
            Read::OwnedNodes(owner, ids) => {
                if ids.is_empty() {
                    answers[i] = Some(Answer::Nodes(Vec::new()));
                    continue;
                }
                let owner = st.arg(owner.as_str().to_string());
                let ids = st.arg(ids.clone());
                let nodes = st.entry(format!(
                    "SELECT {} FROM nodes n WHERE n.owner_id = {owner} AND n.id = ANY({ids})",
                    rows::NODE_COLUMNS
                ));
                st.side(i, Kind::Node, nodes, "seq");
            }
        }
    }
    Ok(())
}

/// Adds the search `r` (read `i`, query `q`) to `st`: its hits, and for a
/// search with nodes its nodes, their edges, the nodes at the edges' ends
/// and those nodes' first turns. Returns the answer instead when it needs
/// no statement (nothing to search) or statements of its own.
fn plan_search(
    tx: &mut PgTx<'_>,
    r: &Read,
    q: &crate::LexicalQuery,
    i: usize,
    st: &mut Statement,
) -> Result<Option<Answer>, StoreError> {
    let words = crate::words::query_words(&q.text);
    let with_nodes = !matches!(r, Read::Search(_));
    let with_edges = matches!(r, Read::SearchNodesWithEdges(_));
    let nothing = || match r {
        Read::Search(_) => Answer::Hits(Vec::new()),
        Read::SearchNodes(_) => Answer::HitsWithNodes(Vec::new()),
        _ => Answer::HitsWithEdges(Vec::new(), Default::default(), Vec::new()),
    };
    if words.is_empty() {
        return Ok(Some(nothing()));
    }
    if words.len() > search::MAX_SCORED_WORDS {
        // A pasted document's search takes statements of its own.
        return Ok(Some(read_one(tx, r)?));
    }
    if with_nodes && !tx.has_nodes_to_search(q)? {
        return Ok(Some(nothing()));
    }
    let avg_lexemes = tx.avg_lexemes()?;
    let (sql, args) = search::bm25_sql(q, &words, avg_lexemes);
    let hits = st.relation(&sql, args);
    st.side(i, Kind::Hit, hits.clone(), "rank");
    if with_nodes {
        let owner = st.arg(q.owner.as_str().to_string());
        let nodes = st.entry(format!(
            "SELECT {} FROM nodes n
                 WHERE n.owner_id = {owner} AND n.id IN (SELECT id FROM {hits})",
            rows::NODE_COLUMNS
        ));
        st.side(i, Kind::Node, nodes, "seq");
        if with_edges {
            let g = st.entry(joined::edges_at_sql(
                &owner,
                &format!("IN (SELECT id FROM {hits})"),
            ));
            st.side(i, Kind::Edge, g.clone(), "seq");
            let ends = st.entry(joined::ends_sql(&owner, &g));
            st.side(i, Kind::Node, ends.clone(), "seq");
            let turns = st.entry(format!(
                "SELECT {} FROM events
                     WHERE owner_id = {owner}
                       AND id IN (SELECT evidence_refs[1] FROM {ends})",
                rows::EVENT_COLUMNS
            ));
            st.side(i, Kind::Event, turns, "seq");
        }
    }
    Ok(None)
}

/// Runs `st` and sorts its rows by read; a read that turned out to be the
/// only one joined sends its own statement instead.
fn run(
    tx: &mut PgTx<'_>,
    reads: &[Read],
    st: &mut Statement,
    answers: &mut [Option<Answer>],
) -> Result<HashMap<usize, Found>, StoreError> {
    let mut found: HashMap<usize, Found> = HashMap::new();
    let joined: Vec<usize> = st.sides.iter().map(|s| s.read).collect();
    if let Some(&only) = joined.first().filter(|i| joined.iter().all(|j| j == *i)) {
        // (A search with nodes took its probe already, which its method
        // would take again.)
        if !matches!(
            reads[only],
            Read::SearchNodes(_) | Read::SearchNodesWithEdges(_)
        ) {
            // The others needed no statement: this read's own is plainer
            // (no columns of other kinds to fill), and the same round trip.
            answers[only] = Some(read_one(tx, &reads[only])?);
            st.sides.clear();
        }
    }
    if !st.sides.is_empty() {
        let rows = tx.query(&st.sql(), &refs(&st.args))?;
        for row in &rows {
            let part: i32 = row.try_get("part").map_err(|e| {
                StoreError::corrupted(format!("a joined read's row has no part: {e}"))
            })?;
            let side = st.sides.get(part as usize).ok_or_else(|| {
                StoreError::corrupted(format!("a joined read's row has part {part}"))
            })?;
            // A read's second node side (after its first) holds the ends
            // of its edges.
            let second_nodes = st.sides[..part as usize]
                .iter()
                .any(|s| s.read == side.read && s.kind == Kind::Node);
            let f = found.entry(side.read).or_default();
            match side.kind {
                Kind::Hit => f.hits.push(rows::hit(row)?),
                Kind::Node if second_nodes => f.ends.push(rows::stored_node(row)?),
                Kind::Node => f.nodes.push(rows::stored_node(row)?),
                Kind::Event => f.events.push(rows::event(row)?),
                Kind::Edge => f.edges.push(rows::edge(row)?),
            }
        }
    }
    Ok(found)
}

/// `r`'s answer from the rows `f` the statement returned for it.
fn answer(r: &Read, f: Found) -> Answer {
    match r {
        Read::Search(_) => Answer::Hits(f.hits),
        Read::SearchNodes(_) | Read::SearchNodesWithEdges(_) => {
            let mut nodes: HashMap<_, _> =
                f.nodes.into_iter().map(|n| (n.node.id, n.node)).collect();
            let found: Vec<_> = f
                .hits
                .into_iter()
                .filter_map(|h| nodes.remove(&h.node_id).map(|n| (h, n)))
                .collect();
            if matches!(r, Read::SearchNodes(_)) {
                Answer::HitsWithNodes(found)
            } else {
                let ids: Vec<_> = found.iter().map(|(h, _)| h.node_id).collect();
                let ends = f.ends.into_iter().map(|n| n.node).collect();
                let edges = joined::group_by_end(&ids, f.edges);
                Answer::HitsWithEdges(found, (edges, ends), f.events)
            }
        }
        Read::EdgesOf(_, ids) => Answer::Edges(joined::group_by_end(ids, f.edges)),
        Read::SessionEvents(..) => Answer::Events(f.events),
        Read::NodesWithEvidence(q) => {
            let mut nodes = f.nodes;
            // The side's order is by seq; the list's may be newest first.
            if q.newest_first {
                nodes.reverse();
            }
            Answer::NodesWithEvidence(nodes, f.events)
        }
        Read::OwnedNodes(..) => Answer::Nodes(f.nodes.into_iter().map(|n| n.node).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_shift_outside_literals_only() {
        assert_eq!(
            shift_parameters("a = $1 AND b = $12", 3),
            "a = $4 AND b = $15"
        );
        assert_eq!(
            shift_parameters("x = '$1' OR y = $2", 2),
            "x = '$1' OR y = $4"
        );
        assert_eq!(shift_parameters("'it''s $1' || $1", 1), "'it''s $1' || $2");
        assert_eq!(shift_parameters("cost $ 5", 1), "cost $ 5");
        assert_eq!(shift_parameters("$1", 0), "$1");
    }

    #[test]
    fn every_side_has_every_column_and_the_kinds_own_theirs() {
        let mut st = Statement::default();
        st.side(0, Kind::Hit, "r0".into(), "rank");
        st.side(1, Kind::Event, "r1".into(), "seq");
        st.with.push("r0 AS (SELECT 1)".into());
        let sql = st.sql();
        let sides: Vec<&str> = sql.split(" UNION ALL ").collect();
        assert_eq!(sides.len(), 2);
        assert!(sides[0].contains(", score,") && sides[0].contains("NULL::text AS role"));
        assert!(sides[1].contains("NULL::float8 AS score") && sides[1].contains(", role,"));
        assert!(sql.ends_with("ORDER BY part, ord"));
    }
}
