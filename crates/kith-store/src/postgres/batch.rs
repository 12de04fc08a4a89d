//! Multi-row writes: one statement per batch instead of one per row.
//!
//! Each batch is sent as parallel arrays (one per column) and expanded on
//! the server with `unnest`, so a thousand rows cost one round trip. The
//! checks the row-at-a-time statements make are kept, and made for the
//! whole batch before anything is written:
//!
//! - a key repeated within the batch is refused here, before any SQL;
//! - a key that exists already is found by a `NOT EXISTS` guard in the
//!   same statement, which then inserts nothing, so the transaction stays
//!   usable and holds none of the batch (as after a refused single row).
//!
//! The guards look keys up per owner (`owner_id` in every join) so that on
//! a database sharded by owner they stay on the owner's shard; an id taken
//! by another owner (ids hash the owner, so only by tampering) still meets
//! the primary key's `ON CONFLICT DO NOTHING`: then fewer rows come back
//! than were sent, and the transaction is marked failed so that it cannot
//! commit half a batch.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use kith_core::{Edge, Event, Node, Operation, OwnerId, SourceId};
use uuid::Uuid;

use super::rows::json_text;
use super::search::PgVector;
use super::{conflict, not_found, PgTx};
use crate::{StoreError, StoreErrorKind, WorkItem};

/// The first key that appears twice in `keys`, if any.
fn repeated<K: Hash + Eq + Clone>(keys: impl Iterator<Item = K>) -> Option<K> {
    let mut seen = HashSet::new();
    keys.into_iter().find(|k| !seen.insert(k.clone()))
}

const INSERT_EVENTS: &str = "WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[],
        $12::bigint[], $13::text[], $14::text[], $15::text[]) WITH ORDINALITY
    AS i(id, owner_id, scope, session_id, role, speaker, content, content_sha256,
         event_time, event_time_ms, ingested_at, ingested_at_ms, metadata, source_id,
         checksum, ord)
 ), ins AS (
    INSERT INTO events (id, owner_id, scope, session_id, role, speaker, content,
        content_sha256, event_time, event_time_ms, ingested_at, ingested_at_ms, metadata,
        source_id, checksum)
    SELECT id, owner_id, scope, session_id, role, speaker, content, content_sha256,
        event_time, event_time_ms, ingested_at, ingested_at_ms, metadata::json, source_id,
        checksum
    FROM input
    WHERE NOT EXISTS (SELECT 1 FROM input j JOIN events e
                      ON e.owner_id = j.owner_id AND e.source_id = j.source_id)
      AND NOT EXISTS (SELECT 1 FROM input j JOIN events e
                      ON e.owner_id = j.owner_id AND e.id = j.id)
    ORDER BY ord
    ON CONFLICT DO NOTHING
    RETURNING seq, id, owner_id, role, coalesce(event_time_ms, ingested_at_ms) AS effective_ms
 ), early AS (
    UPDATE nodes n SET source_role = ins.role, effective_ms = ins.effective_ms
    FROM ins WHERE n.owner_id = ins.owner_id AND n.source_event_id = ins.id
      AND n.source_role IS NULL
 )
 SELECT id, seq FROM ins";

const EVENT_IDS_BY_SOURCES: &str = "SELECT i.ord, e.id
 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS i(owner_id, source_id, ord)
 JOIN events e ON e.owner_id = i.owner_id AND e.source_id = i.source_id";

const INSERT_NODES: &str = "WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::float8[], $9::text[], $10::text[], $11::text[],
        $12::text[], $13::text[], $14::text[], $15::uuid[], $16::text[], $17::uuid[],
        $18::text[], $19::text[], $20::bigint[], $21::bigint[]) WITH ORDINALITY
    AS i(id, owner_id, scope, session_id, node_type, content, metadata, confidence,
         lifecycle, epistemic_type, source_type, valid_from, valid_to, event_time,
         superseded_by, evidence_refs, source_event_id, created_at, updated_at, created_ms,
         updated_ms, ord)
 ), ins AS (
    INSERT INTO nodes (id, owner_id, scope, session_id, node_type, content, metadata,
        confidence, lifecycle, epistemic_type, source_type, valid_from, valid_to,
        event_time, superseded_by, evidence_refs, source_event_id, created_at, updated_at,
        created_ms, updated_ms, source_role, effective_ms)
    SELECT i.id, i.owner_id, i.scope, i.session_id, i.node_type, i.content,
        i.metadata::json, i.confidence, i.lifecycle, i.epistemic_type, i.source_type,
        i.valid_from, i.valid_to, i.event_time, i.superseded_by, i.evidence_refs::uuid[],
        i.source_event_id, i.created_at, i.updated_at, i.created_ms, i.updated_ms,
        e.role, coalesce(e.event_time_ms, e.ingested_at_ms)
    FROM input i
    LEFT JOIN events e ON e.owner_id = i.owner_id AND e.id = i.source_event_id
    WHERE NOT EXISTS (SELECT 1 FROM input j JOIN nodes n
                      ON n.owner_id = j.owner_id AND n.id = j.id)
    ORDER BY i.ord
    ON CONFLICT DO NOTHING
    RETURNING 1
 )
 SELECT count(*) FROM ins";

const INSERT_EDGES: &str = "WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::uuid[],
        $6::text[], $7::float8[], $8::text[], $9::text[], $10::uuid[], $11::text[],
        $12::text[]) WITH ORDINALITY
    AS i(id, owner_id, scope, source_id, target_id, edge_type, confidence, valid_from,
         valid_to, provenance_event_id, metadata, created_at, ord)
 ), ins AS (
    INSERT INTO edges (id, owner_id, scope, source_id, target_id, edge_type, confidence,
        valid_from, valid_to, provenance_event_id, metadata, created_at)
    SELECT id, owner_id, scope, source_id, target_id, edge_type, confidence, valid_from,
        valid_to, provenance_event_id, metadata::json, created_at
    FROM input
    WHERE NOT EXISTS (SELECT 1 FROM input j JOIN edges g
                      ON g.owner_id = j.owner_id AND g.id = j.id)
    ORDER BY ord
    ON CONFLICT DO NOTHING
    RETURNING 1
 )
 SELECT count(*) FROM ins";

const APPEND_OPERATIONS: &str = "WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::uuid[],
        $6::text[], $7::text[], $8::text[]) WITH ORDINALITY
    AS i(id, kind, owner_id, scope, target_id, payload, created_at, checksum, ord)
 ), ins AS (
    INSERT INTO operations (id, kind, owner_id, scope, target_id, payload, created_at,
        checksum)
    SELECT id, kind, owner_id, scope, target_id, payload::json, created_at, checksum
    FROM input
    WHERE NOT EXISTS (SELECT 1 FROM input j JOIN operations o
                      ON o.owner_id = j.owner_id AND o.id = j.id)
    ORDER BY ord
    ON CONFLICT DO NOTHING
    RETURNING 1
 )
 SELECT count(*) FROM ins";

const INSERT_WORK_ITEMS: &str = "WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[],
        $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[])
        WITH ORDINALITY
    AS i(event_id, owner_id, scope, status, attempts, reason_code, last_error,
         lease_until_ms, options, created_at, updated_at, ord)
 ), ins AS (
    INSERT INTO work_items (event_id, owner_id, scope, status, attempts, reason_code,
        last_error, lease_until_ms, options, created_at, updated_at)
    SELECT event_id, owner_id, scope, status, attempts, reason_code, last_error,
        lease_until_ms, options::json, created_at, updated_at
    FROM input
    WHERE NOT EXISTS (SELECT 1 FROM input j JOIN work_items w
                      ON w.owner_id = j.owner_id AND w.event_id = j.event_id)
    ORDER BY ord
    ON CONFLICT DO NOTHING
    RETURNING 1
 )
 SELECT count(*) FROM ins";

/// Embeddings are keyed by node; the owner comes from the node, as in the
/// single-row statement. Nothing is written unless every node is found.
const PUT_EMBEDDINGS: &str = "WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::vector[]) AS i(node_id, vector)
 ), found AS (
    SELECT n.id, n.owner_id, i.vector FROM input i JOIN nodes n ON n.id = i.node_id
 ), ins AS (";

/// [`PUT_EMBEDDINGS`] for the nodes of one owner (`$4`): the join names
/// the owner, so a sharded database finds the nodes on one shard.
const PUT_OWNED_EMBEDDINGS: &str = "WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::vector[]) AS i(node_id, vector)
 ), found AS (
    SELECT n.id, n.owner_id, i.vector FROM input i
    JOIN nodes n ON n.owner_id = $4::text AND n.id = i.node_id
 ), ins AS (";

/// The insert both [`PUT_EMBEDDINGS`] and [`PUT_OWNED_EMBEDDINGS`] end with.
const PUT_EMBEDDINGS_INSERT: &str = "
    INSERT INTO embeddings (node_id, owner_id, model, dim, vector)
    SELECT id, owner_id, $3::text, vector_dims(vector), vector FROM found
    WHERE (SELECT count(*) FROM found) = cardinality($1::uuid[])
    ON CONFLICT (node_id) DO UPDATE SET owner_id = excluded.owner_id,
        model = excluded.model, dim = excluded.dim, vector = excluded.vector,
        seq = DEFAULT
    RETURNING 1
 )
 SELECT (SELECT count(*) FROM found), (SELECT count(*) FROM ins)";

const GET_WORK_ITEMS: &str = "SELECT {} FROM work_items WHERE event_id = ANY($1)";

impl PgTx<'_> {
    /// The batch was refused by a guard although it passed the checks made
    /// here, or came back short: say so, and keep the transaction from
    /// committing part of it.
    fn short_batch(&mut self, what: &str, sent: usize, written: usize) -> StoreError {
        let err = conflict(format!(
            "{what}: {written} of {sent} rows written; a row of another owner has one of these ids"
        ));
        if written > 0 {
            self.failed = Some(err.clone());
        }
        err
    }

    pub(super) fn batch_insert_events(&mut self, events: &[Event]) -> Result<Vec<i64>, StoreError> {
        self.writable()?;
        if events.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(id) = repeated(events.iter().map(|e| e.id)) {
            return Err(conflict(format!("event {id} is listed twice in one batch")));
        }
        if let Some((o, s)) = repeated(events.iter().map(|e| (&e.owner_id, &e.source_id))) {
            return Err(conflict(format!(
                "source id {s} of owner {o} is listed twice in one batch"
            )));
        }
        let ids: Vec<Uuid> = events.iter().map(|e| e.id).collect();
        let owners: Vec<&str> = events.iter().map(|e| e.owner_id.as_str()).collect();
        let scopes: Vec<&str> = events.iter().map(|e| e.scope.as_str()).collect();
        let sessions: Vec<Option<&str>> = events
            .iter()
            .map(|e| e.session_id.as_ref().map(|s| s.as_str()))
            .collect();
        let roles: Vec<&str> = events.iter().map(|e| e.role.as_str()).collect();
        let speakers: Vec<Option<&str>> = events
            .iter()
            .map(|e| e.speaker.as_ref().map(|s| s.as_str()))
            .collect();
        let contents: Vec<&str> = events.iter().map(|e| e.content.as_str()).collect();
        let hashes: Vec<&str> = events.iter().map(|e| e.content_sha256.as_str()).collect();
        let times: Vec<Option<String>> = events
            .iter()
            .map(|e| e.event_time.map(|t| t.to_rfc3339()))
            .collect();
        let times_ms: Vec<Option<i64>> = events
            .iter()
            .map(|e| e.event_time.map(|t| t.unix_millis()))
            .collect();
        let ingested: Vec<String> = events.iter().map(|e| e.ingested_at.to_rfc3339()).collect();
        let ingested_ms: Vec<i64> = events.iter().map(|e| e.ingested_at.unix_millis()).collect();
        let metadata: Vec<Option<String>> = events.iter().map(|e| json_text(&e.metadata)).collect();
        let sources: Vec<&str> = events.iter().map(|e| e.source_id.as_str()).collect();
        let checksums: Vec<&str> = events.iter().map(|e| e.checksum.as_str()).collect();
        let rows = self.query(
            INSERT_EVENTS,
            &[
                &ids,
                &owners,
                &scopes,
                &sessions,
                &roles,
                &speakers,
                &contents,
                &hashes,
                &times,
                &times_ms,
                &ingested,
                &ingested_ms,
                &metadata,
                &sources,
                &checksums,
            ],
        )?;
        if rows.len() != events.len() {
            if rows.is_empty() {
                return Err(conflict(
                    "events: an event with one of these ids or (owner, source id) pairs exists; \
                     events are append-only; none of the batch was written"
                        .to_string(),
                ));
            }
            return Err(self.short_batch("events", events.len(), rows.len()));
        }
        let seq: HashMap<Uuid, i64> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        Ok(ids.iter().map(|id| seq[id]).collect())
    }

    pub(super) fn batch_event_ids_by_sources(
        &mut self,
        keys: &[(OwnerId, SourceId)],
    ) -> Result<Vec<Option<Uuid>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let owners: Vec<&str> = keys.iter().map(|(o, _)| o.as_str()).collect();
        let sources: Vec<&str> = keys.iter().map(|(_, s)| s.as_str()).collect();
        let mut out = vec![None; keys.len()];
        for row in self.query(EVENT_IDS_BY_SOURCES, &[&owners, &sources])? {
            let ord: i64 = row.get(0);
            out[(ord - 1) as usize] = Some(row.get(1));
        }
        Ok(out)
    }

    pub(super) fn batch_insert_nodes(&mut self, nodes: &[Node]) -> Result<(), StoreError> {
        self.writable()?;
        if nodes.is_empty() {
            return Ok(());
        }
        if let Some(id) = repeated(nodes.iter().map(|n| n.id)) {
            return Err(conflict(format!("node {id} is listed twice in one batch")));
        }
        let col = |f: &dyn Fn(&Node) -> String| nodes.iter().map(f).collect::<Vec<String>>();
        let opt = |f: &dyn Fn(&Node) -> Option<String>| {
            nodes.iter().map(f).collect::<Vec<Option<String>>>()
        };
        let ids: Vec<Uuid> = nodes.iter().map(|n| n.id).collect();
        let owners = col(&|n| n.owner_id.as_str().to_string());
        let scopes = col(&|n| n.scope.as_str().to_string());
        let sessions = opt(&|n| n.session_id.as_ref().map(|s| s.as_str().to_string()));
        let types = col(&|n| n.node_type.as_str().to_string());
        let contents = col(&|n| n.content.clone());
        let metadata = opt(&|n| json_text(&n.metadata));
        let confidence: Vec<f64> = nodes.iter().map(|n| n.confidence).collect();
        let lifecycles = col(&|n| n.lifecycle.as_str().to_string());
        let epistemic = col(&|n| n.epistemic_type.as_str().to_string());
        let source_types = col(&|n| n.source_type.as_str().to_string());
        let valid_from = col(&|n| n.valid_from.to_rfc3339());
        let valid_to = opt(&|n| n.valid_to.map(|t| t.to_rfc3339()));
        let event_times = opt(&|n| n.event_time.map(|t| t.to_rfc3339()));
        let superseded: Vec<Option<Uuid>> = nodes.iter().map(|n| n.superseded_by).collect();
        // uuid[] per row cannot ride in a two-dimensional array (rows differ
        // in length), so each travels as an array literal of plain uuids.
        let evidence = col(&|n| uuid_array_literal(&n.evidence_refs));
        let source_events: Vec<Option<Uuid>> = nodes
            .iter()
            .map(|n| n.evidence_refs.first().copied())
            .collect();
        let created = col(&|n| n.created_at.to_rfc3339());
        let updated = col(&|n| n.updated_at.to_rfc3339());
        let created_ms: Vec<i64> = nodes.iter().map(|n| n.created_at.unix_millis()).collect();
        let updated_ms: Vec<i64> = nodes.iter().map(|n| n.updated_at.unix_millis()).collect();
        let rows = self.query(
            INSERT_NODES,
            &[
                &ids,
                &owners,
                &scopes,
                &sessions,
                &types,
                &contents,
                &metadata,
                &confidence,
                &lifecycles,
                &epistemic,
                &source_types,
                &valid_from,
                &valid_to,
                &event_times,
                &superseded,
                &evidence,
                &source_events,
                &created,
                &updated,
                &created_ms,
                &updated_ms,
            ],
        )?;
        self.counted(
            "nodes",
            "a node with one of these ids exists",
            nodes.len(),
            &rows,
        )
    }

    pub(super) fn batch_insert_edges(&mut self, edges: &[Edge]) -> Result<(), StoreError> {
        self.writable()?;
        if edges.is_empty() {
            return Ok(());
        }
        if let Some(id) = repeated(edges.iter().map(|e| e.id)) {
            return Err(conflict(format!("edge {id} is listed twice in one batch")));
        }
        let ids: Vec<Uuid> = edges.iter().map(|e| e.id).collect();
        let owners: Vec<&str> = edges.iter().map(|e| e.owner_id.as_str()).collect();
        let scopes: Vec<&str> = edges.iter().map(|e| e.scope.as_str()).collect();
        let sources: Vec<Uuid> = edges.iter().map(|e| e.source_id).collect();
        let targets: Vec<Uuid> = edges.iter().map(|e| e.target_id).collect();
        let types: Vec<&str> = edges.iter().map(|e| e.edge_type.as_str()).collect();
        let confidence: Vec<f64> = edges.iter().map(|e| e.confidence).collect();
        let valid_from: Vec<String> = edges.iter().map(|e| e.valid_from.to_rfc3339()).collect();
        let valid_to: Vec<Option<String>> = edges
            .iter()
            .map(|e| e.valid_to.map(|t| t.to_rfc3339()))
            .collect();
        let provenance: Vec<Option<Uuid>> = edges.iter().map(|e| e.provenance_event_id).collect();
        let metadata: Vec<Option<String>> = edges.iter().map(|e| json_text(&e.metadata)).collect();
        let created: Vec<String> = edges.iter().map(|e| e.created_at.to_rfc3339()).collect();
        let rows = self.query(
            INSERT_EDGES,
            &[
                &ids,
                &owners,
                &scopes,
                &sources,
                &targets,
                &types,
                &confidence,
                &valid_from,
                &valid_to,
                &provenance,
                &metadata,
                &created,
            ],
        )?;
        self.counted(
            "edges",
            "an edge with one of these ids exists",
            edges.len(),
            &rows,
        )
    }

    pub(super) fn batch_append_operations(&mut self, ops: &[Operation]) -> Result<(), StoreError> {
        self.writable()?;
        if ops.is_empty() {
            return Ok(());
        }
        if let Some(id) = repeated(ops.iter().map(|o| o.id)) {
            return Err(conflict(format!(
                "journal record {id} is listed twice in one batch"
            )));
        }
        let ids: Vec<Uuid> = ops.iter().map(|o| o.id).collect();
        let kinds: Vec<&str> = ops.iter().map(|o| o.kind.as_str()).collect();
        let owners: Vec<&str> = ops.iter().map(|o| o.owner_id.as_str()).collect();
        let scopes: Vec<&str> = ops.iter().map(|o| o.scope.as_str()).collect();
        let targets: Vec<Option<Uuid>> = ops.iter().map(|o| o.target_id).collect();
        let payloads: Vec<String> = ops
            .iter()
            .map(|o| kith_core::canon::to_canonical_string(&o.payload))
            .collect();
        let created: Vec<String> = ops.iter().map(|o| o.created_at.to_rfc3339()).collect();
        let checksums: Vec<&str> = ops.iter().map(|o| o.checksum.as_str()).collect();
        let rows = self.query(
            APPEND_OPERATIONS,
            &[
                &ids, &kinds, &owners, &scopes, &targets, &payloads, &created, &checksums,
            ],
        )?;
        self.counted(
            "operations",
            "a journal record with one of these ids exists",
            ops.len(),
            &rows,
        )
    }

    pub(super) fn batch_insert_work_items(&mut self, items: &[WorkItem]) -> Result<(), StoreError> {
        self.writable()?;
        if items.is_empty() {
            return Ok(());
        }
        if let Some(id) = repeated(items.iter().map(|w| w.event_id)) {
            return Err(conflict(format!(
                "the work item of event {id} is listed twice in one batch"
            )));
        }
        let ids: Vec<Uuid> = items.iter().map(|w| w.event_id).collect();
        let owners: Vec<&str> = items.iter().map(|w| w.owner_id.as_str()).collect();
        let scopes: Vec<&str> = items.iter().map(|w| w.scope.as_str()).collect();
        let statuses: Vec<&str> = items.iter().map(|w| w.status.as_str()).collect();
        let attempts: Vec<i64> = items.iter().map(|w| i64::from(w.attempts)).collect();
        let reasons: Vec<Option<&str>> = items.iter().map(|w| w.reason_code.as_deref()).collect();
        let errors: Vec<Option<&str>> = items.iter().map(|w| w.last_error.as_deref()).collect();
        let leases: Vec<Option<i64>> = items.iter().map(|w| w.lease_until_ms).collect();
        let options: Vec<String> = items
            .iter()
            .map(|w| kith_core::canon::to_canonical_string(&w.options))
            .collect();
        let created: Vec<String> = items.iter().map(|w| w.created_at.to_rfc3339()).collect();
        let updated: Vec<String> = items.iter().map(|w| w.updated_at.to_rfc3339()).collect();
        let rows = self.query(
            INSERT_WORK_ITEMS,
            &[
                &ids, &owners, &scopes, &statuses, &attempts, &reasons, &errors, &leases, &options,
                &created, &updated,
            ],
        )?;
        self.counted(
            "work items",
            "one of these events has a work item",
            items.len(),
            &rows,
        )
    }

    pub(super) fn batch_get_work_items(
        &mut self,
        event_ids: &[Uuid],
    ) -> Result<Vec<WorkItem>, StoreError> {
        if event_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = GET_WORK_ITEMS.replace("{}", super::rows::WORK_COLUMNS);
        self.query_map(&sql, &[&event_ids], super::rows::work_item)
    }

    pub(super) fn batch_put_embeddings(
        &mut self,
        owner: Option<&kith_core::OwnerId>,
        model: &str,
        rows: &[(Uuid, &[f32])],
    ) -> Result<(), StoreError> {
        for (id, v) in rows {
            super::check_vector(*id, v)?;
        }
        self.writable()?;
        // A node listed twice keeps its last vector, as one call at a time
        // would; one statement may not write a row twice, so earlier ones
        // are dropped here.
        let last: HashMap<Uuid, usize> = rows.iter().enumerate().map(|(i, r)| (r.0, i)).collect();
        let kept: Vec<&(Uuid, &[f32])> = rows
            .iter()
            .enumerate()
            .filter(|(i, r)| last[&r.0] == *i)
            .map(|(_, r)| r)
            .collect();
        if kept.is_empty() {
            return Ok(());
        }
        let ids: Vec<Uuid> = kept.iter().map(|r| r.0).collect();
        let vectors: Vec<PgVector> = kept.iter().map(|r| PgVector(r.1.to_vec())).collect();
        let found = match owner {
            None => self.query(
                &format!("{PUT_EMBEDDINGS}{PUT_EMBEDDINGS_INSERT}"),
                &[&ids, &vectors, &model],
            )?,
            Some(owner) => self.query(
                &format!("{PUT_OWNED_EMBEDDINGS}{PUT_EMBEDDINGS_INSERT}"),
                &[&ids, &vectors, &model, &owner.as_str()],
            )?,
        };
        let (nodes, written): (i64, i64) = found.first().map_or((0, 0), |r| (r.get(0), r.get(1)));
        if nodes as usize != ids.len() {
            return Err(not_found(format!(
                "{} of {} nodes to embed do not exist; none of the batch was written",
                ids.len() - nodes as usize,
                ids.len()
            )));
        }
        if written as usize != ids.len() {
            return Err(StoreError::new(
                StoreErrorKind::Other,
                format!("{written} of {} embeddings written", ids.len()),
            ));
        }
        Ok(())
    }

    /// Checks a guarded batch's `count(*)` of rows written.
    fn counted(
        &mut self,
        what: &str,
        clash: &str,
        sent: usize,
        rows: &[postgres::Row],
    ) -> Result<(), StoreError> {
        let written: i64 = rows.first().map_or(0, |r| r.get(0));
        match written as usize {
            n if n == sent => Ok(()),
            0 => Err(conflict(format!(
                "{what}: {clash}; none of the batch was written"
            ))),
            n => Err(self.short_batch(what, sent, n)),
        }
    }
}

/// `{id,id,…}`: a PostgreSQL array literal of uuids (no quoting needed).
fn uuid_array_literal(ids: &[Uuid]) -> String {
    let mut s = String::with_capacity(2 + ids.len() * 37);
    s.push('{');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&id.to_string());
    }
    s.push('}');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_finds_the_first_key_seen_twice() {
        assert_eq!(repeated([1, 2, 3].into_iter()), None);
        assert_eq!(repeated([1, 2, 1, 2].into_iter()), Some(1));
        assert_eq!(repeated(std::iter::empty::<u8>()), None);
    }

    #[test]
    fn uuid_array_literals_are_braced_and_comma_separated() {
        assert_eq!(uuid_array_literal(&[]), "{}");
        let a = Uuid::from_u128(1);
        let b = Uuid::from_u128(2);
        assert_eq!(uuid_array_literal(&[a, b]), format!("{{{a},{b}}}"));
    }
}
