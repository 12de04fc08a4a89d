//! Reads of many rows by key in one statement each: the ids (or session
//! names) go in as one JSON array that `json_each` unrolls, so the SQL
//! text is the same whatever their number (one cached statement, no limit
//! on host parameters) and each key is looked up through its index.
//!
//! Retrieval asks for a candidate's neighbours, events, nodes and edges
//! several at a time; SQLite answered the trait's default one statement a
//! key, each a VM run of its own (issue 16's latency bar). What each
//! returns is exactly what the default in `lib.rs` returns.

use std::collections::{HashMap, HashSet};

use kith_core::{Edge, Node, OwnerId, SessionId};
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use uuid::Uuid;

use super::{query_all, rows};
use crate::{StoreError, StoredEvent};

/// `keys` as a JSON array of strings, each once (first occurrence kept).
fn json_keys<'a>(keys: impl Iterator<Item = &'a str>) -> SqlValue {
    let mut seen = HashSet::new();
    let unique: Vec<&str> = keys.filter(|k| seen.insert(*k)).collect();
    SqlValue::Text(serde_json::Value::from(unique).to_string())
}

/// Text forms of `ids`, as the tables store them.
fn texts(ids: &[Uuid]) -> Vec<String> {
    ids.iter().map(Uuid::to_string).collect()
}

/// `Tx::get_events`: `owner`'s events of `ids` that exist, each once.
pub(super) fn events(
    conn: &Connection,
    owner: &OwnerId,
    ids: &[Uuid],
) -> Result<Vec<StoredEvent>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = texts(ids);
    // `+owner_id`: look each id up by its key, never walk the owner's rows.
    let sql = format!(
        "SELECT {} FROM events WHERE id IN (SELECT value FROM json_each(?1)) AND +owner_id = ?2",
        rows::EVENT_COLUMNS
    );
    let args = [
        json_keys(ids.iter().map(String::as_str)),
        SqlValue::Text(owner.as_str().to_string()),
    ];
    query_all(conn, &sql, &args, rows::event)
}

/// `Tx::get_nodes` (no owner) and `Tx::get_owned_nodes` (`owner`'s only):
/// the nodes of `ids` that exist, each once.
pub(super) fn nodes(
    conn: &Connection,
    owner: Option<&OwnerId>,
    ids: &[Uuid],
) -> Result<Vec<Node>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = texts(ids);
    let mut args = vec![json_keys(ids.iter().map(String::as_str))];
    let mut sql = format!(
        "SELECT {} FROM nodes WHERE id IN (SELECT value FROM json_each(?1))",
        rows::NODE_COLUMNS
    );
    if let Some(owner) = owner {
        sql.push_str(" AND +owner_id = ?2");
        args.push(SqlValue::Text(owner.as_str().to_string()));
    }
    query_all(conn, &sql, &args, rows::node)
}

/// `Tx::list_session_events`: the first `limit` events of each of
/// `owner`'s `sessions` in ingestion order, the sessions in the order
/// given (one named twice is listed twice, as the default does).
pub(super) fn session_events(
    conn: &Connection,
    owner: &OwnerId,
    sessions: &[SessionId],
    limit: usize,
) -> Result<Vec<StoredEvent>, StoreError> {
    if sessions.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<&str> = sessions.iter().map(SessionId::as_str).collect();
    // Not `json_keys`: a repeated session is asked for again.
    let list = SqlValue::Text(serde_json::Value::from(names).to_string());
    let sql = format!(
        "SELECT {cols} FROM (
             SELECT e.*, s.key AS asked,
                    row_number() OVER (PARTITION BY s.key ORDER BY e.seq) AS nth
             FROM json_each(?2) s JOIN events e ON e.owner_id = ?1 AND e.session_id = s.value
         ) WHERE nth <= ?3 ORDER BY asked, seq",
        cols = rows::EVENT_COLUMNS
    );
    let limit = if limit == 0 { i64::MAX } else { limit as i64 };
    let args = [
        SqlValue::Text(owner.as_str().to_string()),
        list,
        SqlValue::Integer(limit),
    ];
    query_all(conn, &sql, &args, rows::event)
}

/// `Tx::edges_of_nodes`: each of `nodes`' edges (incoming and outgoing,
/// `owner`'s only) in creation order, keyed by node; a node with none is
/// left out.
pub(super) fn edges_of_nodes(
    conn: &Connection,
    owner: &OwnerId,
    nodes: &[Uuid],
) -> Result<HashMap<Uuid, Vec<Edge>>, StoreError> {
    if nodes.is_empty() {
        return Ok(HashMap::new());
    }
    let ids = texts(nodes);
    // Outgoing, then incoming but not a loop (already listed as
    // outgoing): each through its own index.
    let sql = format!(
        "SELECT * FROM (
             SELECT s.value AS asked, g.seq AS edge_seq, {cols} FROM json_each(?1) s
                 JOIN edges g ON g.source_id = s.value WHERE g.owner_id = ?2
             UNION ALL
             SELECT s.value, g.seq, {cols} FROM json_each(?1) s
                 JOIN edges g ON g.target_id = s.value
                 WHERE g.owner_id = ?2 AND g.source_id <> s.value
         ) ORDER BY edge_seq",
        cols = edge_columns("g")
    );
    let args = [
        json_keys(ids.iter().map(String::as_str)),
        SqlValue::Text(owner.as_str().to_string()),
    ];
    let found = query_all(conn, &sql, &args, |r| {
        let asked: String = r.get("asked").map_err(super::map_err)?;
        let node = Uuid::parse_str(&asked)
            .map_err(|e| StoreError::corrupted(format!("edge lookup key {asked:?}: {e}")))?;
        Ok((node, rows::edge(r)?))
    })?;
    let mut out: HashMap<Uuid, Vec<Edge>> = HashMap::new();
    for (node, edge) in found {
        out.entry(node).or_default().push(edge);
    }
    Ok(out)
}

/// [`rows::EDGE_COLUMNS`] qualified by `table`, keeping their names.
fn edge_columns(table: &str) -> String {
    rows::EDGE_COLUMNS
        .split(',')
        .map(|c| {
            let c = c.trim();
            format!("{table}.{c} AS {c}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}
