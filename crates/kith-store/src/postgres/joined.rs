//! Reads that answer with two kinds of rows in one statement (one round
//! trip instead of two), for the retrieval steps whose second read depends
//! on the first only through SQL: edges and the nodes at their ends, the
//! events and notes of turns known by id, listed nodes with their source
//! events, and a lexical search's hits with their nodes.
//!
//! The two kinds travel in one `UNION ALL`, told apart by a `part` column:
//! each side fills the columns its decoder reads ([`rows::edge`],
//! [`rows::node`], [`rows::event`]) under their usual names and leaves the
//! other side's columns `NULL`. Columns both tables have (`id`,
//! `owner_id`, `metadata`, …) are shared, so nothing is decoded twice.

use std::collections::{HashMap, HashSet};

use kith_core::{Edge, Node, OwnerId};
use postgres::Row;
use uuid::Uuid;

use super::sql::{refs, Arg};
use super::{rows, PgTx};
use crate::{LexicalHit, StoreError, StoredEvent, StoredNode};

/// An owner's (`owner`, a placeholder) edges with either end in `ids`
/// (`= ANY($n)`, `IN (SELECT …)`): two index scans (source, target)
/// rather than one `OR` over both, each row with its `seq`.
pub(super) fn edges_at_sql(owner: &str, ids: &str) -> String {
    format!(
        "SELECT seq, {cols} FROM edges WHERE owner_id = {owner} AND source_id {ids}
         UNION
         SELECT seq, {cols} FROM edges WHERE owner_id = {owner} AND target_id {ids}",
        cols = rows::EDGE_COLUMNS
    )
}

/// The owner's nodes at either end of the edges `g` (`edges_at_sql`'s
/// rows), `owner` a placeholder.
pub(super) fn ends_sql(owner: &str, g: &str) -> String {
    format!(
        "SELECT {} FROM nodes n
         WHERE n.owner_id = {owner}
           AND n.id IN (SELECT edge_source FROM {g} UNION SELECT target_id FROM {g})",
        rows::NODE_COLUMNS
    )
}

/// An owner's edges at any of `$2`, then the owner's nodes at either end
/// of them.
fn edges_with_ends_sql() -> String {
    format!(
        "WITH g AS ({}), e AS ({})
         SELECT 0 AS part, seq, id, owner_id, scope, metadata, confidence, valid_from, valid_to,
                created_at, edge_source, target_id, edge_type, provenance_event_id,
                NULL::text AS session_id, NULL::text AS node_type, NULL::text AS content,
                NULL::text AS lifecycle, NULL::text AS epistemic_type, NULL::text AS source_type,
                NULL::text AS event_time, NULL::uuid AS superseded_by,
                NULL::uuid[] AS evidence_refs, NULL::text AS updated_at
         FROM g
         UNION ALL
         SELECT 1, seq, id, owner_id, scope, metadata, confidence, valid_from, valid_to,
                created_at, NULL::uuid, NULL::uuid, NULL::text, NULL::uuid,
                session_id, node_type, content, lifecycle, epistemic_type, source_type,
                event_time, superseded_by, evidence_refs, updated_at
         FROM e
         ORDER BY part, seq",
        edges_at_sql("$1", "= ANY($2)"),
        ends_sql("$1", "g")
    )
}

/// Events (`part` 0) and nodes (`part` 1) in one statement: the events of
/// `events` (a `FROM … WHERE` over `events`), then the nodes of `nodes` (a
/// `FROM … WHERE` over rows with the columns of `nodes`, as `n`).
fn events_and_nodes_sql(events: &str, nodes: &str) -> String {
    format!(
        "SELECT 0 AS part, seq, id, owner_id, scope, session_id, content,
                metadata::text AS metadata, event_time,
                role, speaker, content_sha256, ingested_at, source_id, checksum, forgotten_at,
                forgotten_reason, forgotten_by, tombstone_checksum,
                NULL::text AS node_type, NULL::float8 AS confidence, NULL::text AS lifecycle,
                NULL::text AS epistemic_type, NULL::text AS source_type,
                NULL::text AS valid_from, NULL::text AS valid_to, NULL::uuid AS superseded_by,
                NULL::uuid[] AS evidence_refs, NULL::text AS created_at,
                NULL::text AS updated_at
         {events}
         UNION ALL
         SELECT 1, n.seq, n.id, n.owner_id, n.scope, n.session_id, n.content,
                n.metadata::text, n.event_time,
                NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
                NULL::text, NULL::text, NULL::uuid, NULL::text,
                n.node_type, n.confidence, n.lifecycle, n.epistemic_type, n.source_type,
                n.valid_from, n.valid_to, n.superseded_by, n.evidence_refs, n.created_at,
                n.updated_at
         {nodes}"
    )
}

/// `Tx::search_lexical_nodes` after its probe, in one statement: `search`
/// (the BM25 statement, whose `$2` is the owner and whose hits carry their
/// `rank`), its hits in rank order, then the hits' nodes.
pub(super) fn hits_with_nodes(
    tx: &mut PgTx<'_>,
    search: (String, Vec<Arg>),
) -> Result<Vec<(LexicalHit, Node)>, StoreError> {
    let (search_sql, args) = search;
    // The search numbers its hits itself (`rank`, by its own ORDER BY):
    // a CTE keeps no order, so the rank is what orders them here.
    let sql = format!(
        "WITH h AS ({search_sql})
         SELECT 0 AS part, rank, score, id, node_type, content, scope, event_id, event_session,
                event_role, event_speaker, event_event_time, event_ingested_at,
                NULL::bigint AS seq, NULL::text AS owner_id, NULL::text AS session_id,
                NULL::text AS metadata, NULL::float8 AS confidence, NULL::text AS lifecycle,
                NULL::text AS epistemic_type, NULL::text AS source_type,
                NULL::text AS valid_from, NULL::text AS valid_to, NULL::text AS event_time,
                NULL::uuid AS superseded_by, NULL::uuid[] AS evidence_refs,
                NULL::text AS created_at, NULL::text AS updated_at
         FROM h
         UNION ALL
         SELECT 1, NULL, NULL, n.id, n.node_type, n.content, n.scope, NULL::uuid, NULL::text,
                NULL::text, NULL::text, NULL::text, NULL::text,
                n.seq, n.owner_id, n.session_id, n.metadata::text, n.confidence, n.lifecycle,
                n.epistemic_type, n.source_type, n.valid_from, n.valid_to, n.event_time,
                n.superseded_by, n.evidence_refs, n.created_at, n.updated_at
         FROM nodes n WHERE n.owner_id = $2 AND n.id IN (SELECT id FROM h)
         ORDER BY part, rank"
    );
    let rows = tx.query(&sql, &refs(&args))?;
    let mut hits = Vec::new();
    let mut nodes = HashMap::new();
    for row in &rows {
        match part(row)? {
            0 => hits.push(rows::hit(row)?),
            _ => {
                let n = rows::node(row)?;
                nodes.insert(n.id, n);
            }
        }
    }
    Ok(hits
        .into_iter()
        .filter_map(|h| nodes.remove(&h.node_id).map(|n| (h, n)))
        .collect())
}

/// Which side of a `UNION ALL` a row comes from.
fn part(row: &Row) -> Result<i32, StoreError> {
    row.try_get("part")
        .map_err(|e| StoreError::corrupted(format!("a joined read's row has no part: {e}")))
}

/// Each edge under every end of it that is in `wanted`, in the order
/// given: both ends for an edge between two of them, once for a loop.
pub(super) fn group_by_end(wanted: &[Uuid], edges: Vec<Edge>) -> HashMap<Uuid, Vec<Edge>> {
    let wanted: HashSet<Uuid> = wanted.iter().copied().collect();
    let mut out: HashMap<Uuid, Vec<Edge>> = HashMap::new();
    for edge in edges {
        if wanted.contains(&edge.target_id) && edge.target_id != edge.source_id {
            out.entry(edge.target_id).or_default().push(edge.clone());
        }
        if wanted.contains(&edge.source_id) {
            out.entry(edge.source_id).or_default().push(edge);
        }
    }
    out
}

/// `Tx::edges_of_nodes_with_ends` in one statement.
pub(super) fn edges_with_ends(
    tx: &mut PgTx<'_>,
    owner: &OwnerId,
    nodes: &[Uuid],
) -> Result<crate::EdgesWithEnds, StoreError> {
    if nodes.is_empty() {
        return Ok((HashMap::new(), Vec::new()));
    }
    let mut edges = Vec::new();
    let mut ends = Vec::new();
    for row in tx.query(&edges_with_ends_sql(), &[&owner.as_str(), &nodes])? {
        match part(&row)? {
            0 => edges.push(rows::edge(&row)?),
            _ => ends.push(rows::node(&row)?),
        }
    }
    Ok((group_by_end(nodes, edges), ends))
}

/// `Tx::get_owned_events_and_nodes` in one statement.
pub(super) fn events_and_nodes(
    tx: &mut PgTx<'_>,
    owner: &OwnerId,
    event_ids: &[Uuid],
    node_ids: &[Uuid],
) -> Result<(Vec<StoredEvent>, Vec<Node>), StoreError> {
    if event_ids.is_empty() && node_ids.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let sql = events_and_nodes_sql(
        "FROM events WHERE owner_id = $1 AND id = ANY($2)",
        "FROM nodes n WHERE n.owner_id = $1 AND n.id = ANY($3)",
    );
    let rows = tx.query(&sql, &[&owner.as_str(), &event_ids, &node_ids])?;
    let (events, nodes) = split_events_and_nodes(&rows)?;
    Ok((events, nodes.into_iter().map(|n| n.node).collect()))
}

/// `Tx::list_nodes_with_evidence` in one statement: `list` (the nodes'
/// query and its arguments, as `list_nodes` builds them) in a `WITH`, and
/// the owner's events each node's first evidence reference names.
pub(super) fn nodes_with_evidence(
    tx: &mut PgTx<'_>,
    owner: Option<&OwnerId>,
    list: (String, Vec<Arg>),
    newest_first: bool,
) -> Result<(Vec<StoredNode>, Vec<StoredEvent>), StoreError> {
    let (list_sql, mut args) = list;
    let Some(owner) = owner else {
        let nodes = tx.query(&list_sql, &refs(&args))?;
        return Ok((
            nodes
                .iter()
                .map(rows::stored_node)
                .collect::<Result<_, _>>()?,
            Vec::new(),
        ));
    };
    args.push(Box::new(owner.as_str().to_string()));
    let sql = format!(
        "WITH l AS ({list_sql}) {}",
        events_and_nodes_sql(
            &format!(
                "FROM events WHERE owner_id = ${} AND id IN (SELECT evidence_refs[1] FROM l)",
                args.len()
            ),
            "FROM l n",
        )
    );
    let rows = tx.query(&sql, &refs(&args))?;
    let (events, mut nodes) = split_events_and_nodes(&rows)?;
    // A union keeps no order: the list's is by seq.
    nodes.sort_by_key(|n| if newest_first { -n.seq } else { n.seq });
    Ok((nodes, events))
}

/// The events (`part` 0) and nodes (`part` 1) of [`events_and_nodes_sql`].
fn split_events_and_nodes(rows: &[Row]) -> Result<(Vec<StoredEvent>, Vec<StoredNode>), StoreError> {
    let mut events = Vec::new();
    let mut nodes = Vec::new();
    for row in rows {
        match part(row)? {
            0 => events.push(rows::event(row)?),
            _ => nodes.push(rows::stored_node(row)?),
        }
    }
    Ok((events, nodes))
}
