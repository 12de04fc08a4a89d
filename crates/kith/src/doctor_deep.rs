//! `doctor --deep` (issue 20 item 3): what plain `doctor` trusts, checked.
//!
//! Plain `doctor` verifies the log (events, tombstones, journal checksums)
//! and the backend's quick checks. Derived rows were trusted: a NaN in a
//! vector, a claim whose object or polarity was rewritten in place, a node
//! row that no longer decodes all passed. The deep check adds, in one read
//! snapshot:
//!
//! - every node row decodes (valid UTF-8, valid fields);
//! - every vector is finite and, when made by the pack's model, of its
//!   dimension;
//! - every node a committed plan created still has the plan's content and
//!   type, and a claim its object and polarity (the plan is sealed by the
//!   checksum plain `doctor` verifies);
//! - the backend's full check (SQLite: `PRAGMA integrity_check` instead of
//!   `quick_check`, the full-text index against the nodes).
//!
//! Each problem says what is damaged and what re-derives it.

use std::collections::HashMap;

use kith_core::{Node, NodeType, OperationKind};
use kith_store::{NodeQuery, TxMode};
use serde_json::Value;
use uuid::Uuid;

use crate::context::Ctx;
use crate::doctor::DoctorReport;
use crate::error::Error;

/// How derived rows are made again. `reingest` would not do: it reuses a
/// node that exists under the planned id as it is.
const REDERIVE: &str = "the log is verified separately: restore the pack from a backup, or \
     derive it again in a new pack (`kith export`, then `kith import --extract`; organizer \
     merges and reviews are not carried)";

/// Nodes and journal records read per page.
const PAGE: usize = 1000;
/// Problems reported at most.
const MAX_PROBLEMS: usize = 200;

/// What a committed plan says a node it created holds.
struct Planned {
    node_type: NodeType,
    content: String,
    object: Option<Value>,
    polarity: Option<Value>,
}

/// [`Memory::doctor`], then the deep checks above. Changes nothing.
pub(crate) fn doctor_deep(ctx: &Ctx<'_>) -> Result<DoctorReport, Error> {
    let mut report = crate::doctor::doctor(ctx)?;
    let mut problems = Vec::new();
    let planned = {
        let mut tx = ctx.store.begin(TxMode::Read)?;
        planned_nodes(&mut *tx)?
    };
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let expected = ctx
        .embedder
        .map(|e| (e.model_id().to_string(), e.dimension()));
    let mut after = 0;
    'pages: loop {
        let page = match tx.list_nodes(&NodeQuery {
            after_seq: after,
            limit: PAGE,
            ..NodeQuery::default()
        }) {
            Ok(page) => page,
            Err(e) => {
                problems.push(format!(
                    "the node rows after position {after} cannot be read ({e}); {REDERIVE}"
                ));
                break;
            }
        };
        let Some(last) = page.last() else { break };
        after = last.seq;
        for stored in &page {
            check_vector(&mut *tx, &stored.node, expected.as_ref(), &mut problems)?;
            if let Some(plan) = planned.get(&stored.node.id) {
                check_against_plan(&stored.node, plan, &mut problems);
            }
            if problems.len() >= MAX_PROBLEMS {
                break 'pages;
            }
        }
    }
    drop(tx);
    let backend = if ctx.store.is_read_only() {
        let mut tx = ctx.store.begin(TxMode::Read)?;
        tx.check_integrity_deep()?
    } else {
        crate::retry::on_busy("check integrity in depth", || {
            let mut tx = ctx.store.begin(TxMode::Write)?;
            Ok(tx.check_integrity_deep()?)
        })?
    };
    problems.extend(backend);
    for p in problems {
        if !report.problems.contains(&p) {
            report.problems.push(p);
        }
    }
    report.problems.truncate(MAX_PROBLEMS);
    Ok(report)
}

/// What every committed plan created. The first committed plan that
/// created a node wrote its row (later ones reuse it as is), so it wins.
fn planned_nodes(tx: &mut dyn kith_store::Tx) -> Result<HashMap<Uuid, Planned>, Error> {
    let mut prepared: HashMap<String, Vec<(Uuid, Planned)>> = HashMap::new();
    let mut out = HashMap::new();
    let mut after = 0;
    loop {
        let page = tx.scan_operations(after, PAGE)?;
        let Some((last, _)) = page.last() else { break };
        after = *last;
        for (_, op) in &page {
            if kith_core::tombstone::is_scrubbed(&op.payload) {
                continue;
            }
            match op.kind {
                OperationKind::DerivationPrepared => {
                    prepared.insert(op.id.to_string(), created_nodes(&op.payload["plan"]));
                }
                OperationKind::DerivationCommitted => {
                    let Some(plan_id) = op.payload["plan_id"].as_str() else {
                        continue;
                    };
                    for (id, planned) in prepared.remove(plan_id).unwrap_or_default() {
                        out.entry(id).or_insert(planned);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The nodes a saved plan creates, as it describes them.
fn created_nodes(plan: &Value) -> Vec<(Uuid, Planned)> {
    let Some(nodes) = plan["nodes"].as_array() else {
        return Vec::new();
    };
    nodes
        .iter()
        .filter(|p| p["action"] == "create")
        // A plan node that does not parse is the plan checksum's business
        // (plain doctor); here it is just not compared.
        .filter_map(|p| serde_json::from_value::<Node>(p["node"].clone()).ok())
        .map(|node| {
            let field = |k: &str| node.metadata.as_ref().and_then(|m| m.get(k)).cloned();
            let planned = Planned {
                node_type: node.node_type,
                object: field("object"),
                polarity: field("polarity"),
                content: node.content,
            };
            (node.id, planned)
        })
        .collect()
}

fn check_vector(
    tx: &mut dyn kith_store::Tx,
    node: &Node,
    expected: Option<&(String, usize)>,
    problems: &mut Vec<String>,
) -> Result<(), Error> {
    let vector = match tx.get_embedding(node.id) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!(
                "node {}: its vector cannot be read ({e}); `kith rebuild --embeddings --all` \
                 re-embeds every node",
                node.id
            ));
            return Ok(());
        }
    };
    let Some((model, vector)) = vector else {
        return Ok(());
    };
    if let Some(bad) = vector.iter().find(|v| !v.is_finite()) {
        problems.push(format!(
            "node {}: its vector holds {bad} (vectors must be finite); \
             `kith rebuild --embeddings --all` re-embeds every node",
            node.id
        ));
    }
    if let Some((pack_model, dim)) = expected {
        if &model == pack_model && vector.len() != *dim {
            problems.push(format!(
                "node {}: its vector has {} dimensions, the model {model} makes {dim}; \
                 `kith rebuild --embeddings --all` re-embeds every node",
                node.id,
                vector.len()
            ));
        }
    }
    Ok(())
}

fn check_against_plan(node: &Node, plan: &Planned, problems: &mut Vec<String>) {
    let mut differs = Vec::new();
    if node.node_type != plan.node_type {
        differs.push("type");
    }
    if node.content != plan.content {
        differs.push("content");
    }
    let field = |k: &str| node.metadata.as_ref().and_then(|m| m.get(k));
    if plan.object.is_some() && field("object") != plan.object.as_ref() {
        differs.push("object");
    }
    if plan.polarity.is_some() && field("polarity") != plan.polarity.as_ref() {
        differs.push("polarity");
    }
    if !differs.is_empty() {
        problems.push(format!(
            "node {}: its {} differ(s) from the committed plan that created it; \
             {REDERIVE}",
            node.id,
            differs.join(", ")
        ));
    }
}
