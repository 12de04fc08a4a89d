//! The `link_entities` organizer job: one linking pass over one owner and
//! scope, written in one transaction with one journal record.
//!
//! Inside a single transaction (a write transaction, or a read one for a
//! dry run): read at most `max_records + 1` memories of the scope (one more
//! than the budget, only to know the budget is exceeded), run
//! [`linking::link_entities_in`], decide for each surface to mint whether an
//! identity entity from ingestion may take its links instead (only when the
//! organizer's admission rules agree on name and type), then insert what is
//! missing and journal `ENTITIES_LINKED`. Entity and edge ids are
//! deterministic, so a second pass over the same memories finds everything
//! written and writes nothing, not even a record.

use std::collections::{BTreeMap, HashMap};

use kith_core::{canon, ids, Edge, Node, NodeType, Operation, OperationKind, OwnerId, ScopeId};
use kith_store::{NodeQuery, Tx, TxMode};
use serde::Serialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::admission;
/// Reusing an existing entity: the rule lives in [`kith_identity::linking`].
pub use super::linking::admit_reuse;
use super::linking::{
    self, DropReason, Dropped, EntityExtractor, LinkContext, LinkParams, ReuseTarget, LINKED_BY,
    LINKING_POLICY, OTHER_KIND,
};
use super::{ensure_edge_finite, ensure_node_finite, sealed, snapshot};
use crate::context::Ctx;
use crate::error::Error;

/// The record format of `ENTITIES_LINKED`.
pub const LINK_FORMAT: &str = "kith.entity_linking.v1";

/// Nodes read per page.
const PAGE: usize = 500;

/// One linking pass to run.
#[derive(Debug, Clone)]
pub struct LinkRequest {
    /// Whose memory.
    pub owner: OwnerId,
    /// The scope read and written.
    pub scope: ScopeId,
    /// Threshold, mention floor and read budget.
    pub params: LinkParams,
    /// Compute and report only; write nothing.
    pub dry_run: bool,
}

impl LinkRequest {
    /// A pass over `owner`'s `scope` with spec 004's defaults.
    pub fn new(owner: OwnerId, scope: ScopeId) -> Self {
        LinkRequest {
            owner,
            scope,
            params: LinkParams::default(),
            dry_run: false,
        }
    }
}

/// Whether an item of the report was written now, found written, or (dry
/// run) would be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Written by this pass.
    New,
    /// Already there from an earlier pass: unchanged.
    Existing,
    /// A dry run: this pass would write it.
    WouldWrite,
}

/// An entity the pass links memories to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkedEntity {
    /// The entity node.
    pub id: Uuid,
    /// The surface.
    pub name: String,
    /// Its slug (empty for a reused identity entity).
    pub slug: String,
    /// Its entity type.
    pub entity_type: String,
    /// Memories of this pass that name it.
    pub mentions: usize,
    /// True when an existing identity entity takes the links instead of a
    /// minted one.
    pub reused: bool,
    /// New, existing or would-write.
    pub status: ItemStatus,
}

/// A MENTIONS edge the pass links with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkedEdge {
    /// The edge.
    pub id: Uuid,
    /// Its source: a memory (a mention) or an entity (a co-mention).
    pub subject: Uuid,
    /// Its target entity.
    pub object: Uuid,
    /// The source's text: the surface of an entity, or the memory's text.
    pub subject_text: String,
    /// The target's surface.
    pub object_name: String,
    /// Always MENTIONS.
    pub relationship: String,
    /// The weight (the edge's confidence).
    pub weight: f64,
    /// New, existing or would-write.
    pub status: ItemStatus,
}

/// An identity entity the pass did not reuse for a surface, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeptApart {
    /// The surface.
    pub surface: String,
    /// The existing entity.
    pub entity: Uuid,
    /// Its name.
    pub name: String,
    /// Stable code from admission (`different_entity_type`, …).
    pub reason: String,
    /// What differs.
    pub detail: String,
}

/// What one linking pass did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkReport {
    /// Whose memory.
    pub owner: OwnerId,
    /// The scope.
    pub scope: ScopeId,
    /// The policy applied.
    pub policy: &'static str,
    /// The knobs.
    pub params: LinkParams,
    /// Memories read and extracted (at most `max_records`). Over budget it
    /// is 0: the pass lists one row more than the budget only to know it
    /// is exceeded, and extracts nothing.
    pub records_read: usize,
    /// Entities the memories are linked to (minted or reused).
    pub entities: Vec<LinkedEntity>,
    /// Entity ↔ entity co-mention links.
    pub links: Vec<LinkedEdge>,
    /// Memory → entity MENTIONS edges.
    pub mentions: Vec<LinkedEdge>,
    /// Spec 004's refusals.
    pub dropped: Vec<Dropped>,
    /// Identity entities with the same name that the pass kept apart.
    pub kept_apart: Vec<KeptApart>,
    /// The `ENTITIES_LINKED` record, when this pass wrote one.
    pub op_id: Option<Uuid>,
    /// Nodes and edges written (0 for a dry run or a repeat).
    pub written: usize,
    /// True for a dry run.
    pub dry_run: bool,
}

impl LinkReport {
    /// True when the whole pass was refused for its read budget.
    pub fn over_budget(&self) -> bool {
        self.dropped
            .iter()
            .any(|d| d.reason == DropReason::OverBudget)
    }
}

fn is_linked(node: &Node) -> bool {
    node.metadata
        .as_ref()
        .and_then(|m| m.get("linked_by"))
        .and_then(Value::as_str)
        == Some(LINKED_BY)
}

/// Nodes of `owner` in `scope` (of `types`, all when empty), in creation
/// order, until `keep` has accepted `stop_after` of them.
fn scan(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    scope: &ScopeId,
    types: Vec<NodeType>,
    keep: impl Fn(&Node) -> bool,
    stop_after: usize,
) -> Result<Vec<Node>, Error> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = tx.list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            scope: Some(scope.clone()),
            node_types: types.clone(),
            after_seq: after,
            limit: PAGE,
            ..NodeQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        for s in page {
            if keep(&s.node) {
                out.push(s.node);
                if out.len() == stop_after {
                    return Ok(out);
                }
            }
        }
    }
    Ok(out)
}

/// How many nodes of `owner` in `scope` `keep` accepts, read page by page
/// (only for a refused pass's message: a count, nothing kept).
fn count(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    scope: &ScopeId,
    keep: impl Fn(&Node) -> bool,
) -> Result<usize, Error> {
    let mut n = 0;
    let mut after = 0;
    loop {
        let page = tx.list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            scope: Some(scope.clone()),
            after_seq: after,
            limit: PAGE,
            ..NodeQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        n += page.iter().filter(|s| keep(&s.node)).count();
    }
    Ok(n)
}

/// `uuid5(KITH_NS, "op:entity-linking:v1:{len(owner)}:{owner}:{len(scope)}:{scope}:{digest}")`,
/// digest = SHA-256 of the sorted ids the pass writes: the same writes
/// always have the same record.
pub fn link_op_id(owner: &OwnerId, scope: &ScopeId, written: &[Uuid]) -> Uuid {
    let mut sorted: Vec<String> = written.iter().map(Uuid::to_string).collect();
    sorted.sort();
    let digest = canon::sha256_hex(sorted.join(",").as_bytes());
    let (o, s) = (owner.as_str(), scope.as_str());
    ids::v5_name(&format!(
        "op:entity-linking:v1:{}:{o}:{}:{s}:{digest}",
        o.len(),
        s.len()
    ))
}

/// Runs one entity-linking pass with the heuristic extractor (see
/// [`super::linking`] and `docs/linking.md`).
pub(crate) fn link_entities(ctx: &Ctx<'_>, req: &LinkRequest) -> Result<LinkReport, Error> {
    link_entities_with(ctx, req, None)
}

/// Runs one entity-linking pass with `extractor` (the heuristic one
/// when `None`).
pub(crate) fn link_entities_with(
    ctx: &Ctx<'_>,
    req: &LinkRequest,
    extractor: Option<&dyn EntityExtractor>,
) -> Result<LinkReport, Error> {
    let t = req.params.confidence_threshold;
    if !(t.is_finite() && (0.0..=1.0).contains(&t)) {
        return Err(Error::Request(
            "the linking threshold must be a number in [0, 1]".into(),
        ));
    }
    let mode = if req.dry_run {
        TxMode::Read
    } else {
        TxMode::Write
    };
    let mut txn = ctx.store.begin(mode)?;
    let tx: &mut dyn Tx = &mut *txn;
    let (owner, scope) = (&req.owner, &req.scope);
    let mut report = LinkReport {
        owner: owner.clone(),
        scope: scope.clone(),
        policy: LINKING_POLICY,
        params: req.params,
        records_read: 0,
        entities: Vec::new(),
        links: Vec::new(),
        mentions: Vec::new(),
        dropped: Vec::new(),
        kept_apart: Vec::new(),
        op_id: None,
        written: 0,
        dry_run: req.dry_run,
    };

    // One more than the budget tells the pass it is over budget without
    // reading the rest of the history.
    let records = scan(
        tx,
        owner,
        scope,
        Vec::new(),
        linking::is_linkable_memory,
        req.params.max_records.saturating_add(1),
    )?;
    report.records_read = if records.len() > req.params.max_records {
        0
    } else {
        records.len()
    };

    // First pass: which surfaces mint. The store then says which of
    // them an identity entity may take and which slugs are taken.
    let first = linking::link_entities(&records, owner, scope, extractor, &req.params);
    if first
        .dropped
        .iter()
        .any(|d| d.reason == DropReason::OverBudget)
    {
        // The pass read one more than the budget to know it is over;
        // a refusal should still say how many there are.
        let total = count(tx, owner, scope, linking::is_linkable_memory)?;
        report.dropped = vec![linking::over_budget(total, req.params.max_records)];
        return Ok(report);
    }
    let link_ctx = reuse_context(tx, owner, scope, &first, &mut report.kept_apart)?;
    let result =
        linking::link_entities_in(&records, owner, scope, extractor, &req.params, &link_ctx);
    report.dropped = result.dropped.clone();

    let (new_nodes, refused_targets) = entity_rows(tx, &result, req.dry_run, &mut report)?;
    let new_edges = edge_rows(
        tx,
        &records,
        &result,
        &refused_targets,
        req.dry_run,
        &mut report,
    )?;

    if req.dry_run || (new_nodes.is_empty() && new_edges.is_empty()) {
        // Nothing new: a repeat pass writes nothing, not even a record.
        return Ok(report);
    }
    let (op_id, written) = publish(tx, req, &report, &new_nodes, &new_edges)?;
    txn.commit()?;
    report.op_id = Some(op_id);
    report.written = written;
    Ok(report)
}

/// Reports each edge of the pass (links between entities, then mentions)
/// in `report`, leaving out those to a refused target; returns the edges
/// not stored yet.
fn edge_rows<'r>(
    tx: &mut dyn Tx,
    records: &[Node],
    result: &'r linking::LinkingResult,
    refused_targets: &[Uuid],
    dry_run: bool,
    report: &mut LinkReport,
) -> Result<Vec<&'r Edge>, Error> {
    // Names of every entity an edge points at, for the report.
    let mut names: HashMap<Uuid, String> = HashMap::new();
    for (surface, id) in &result.surfaces {
        names.insert(*id, surface.clone());
    }
    let texts: HashMap<Uuid, &str> = records.iter().map(|r| (r.id, r.content.as_str())).collect();
    let status = |exists: bool| item_status(exists, dry_run);

    let mut new_edges: Vec<&Edge> = Vec::new();
    for (edges, out, is_mention) in [
        (&result.links, &mut report.links, false),
        (&result.mentions, &mut report.mentions, true),
    ] {
        for e in edges.iter() {
            if refused_targets.contains(&e.target_id) || refused_targets.contains(&e.source_id) {
                continue;
            }
            let exists = tx.get_edge(e.id)?.is_some();
            if !exists {
                new_edges.push(e);
            }
            let subject_text = if is_mention {
                texts
                    .get(&e.source_id)
                    .copied()
                    .unwrap_or_default()
                    .to_string()
            } else {
                names.get(&e.source_id).cloned().unwrap_or_default()
            };
            out.push(LinkedEdge {
                id: e.id,
                subject: e.source_id,
                object: e.target_id,
                subject_text,
                object_name: names.get(&e.target_id).cloned().unwrap_or_default(),
                relationship: e.edge_type.to_string(),
                weight: e.confidence,
                status: status(exists),
            });
        }
    }
    Ok(new_edges)
}

/// What a linked or unlinked item is: stored already, or new (written, or
/// only reported on a dry run).
fn item_status(exists: bool, dry_run: bool) -> ItemStatus {
    match (exists, dry_run) {
        (true, _) => ItemStatus::Existing,
        (false, true) => ItemStatus::WouldWrite,
        (false, false) => ItemStatus::New,
    }
}

/// Reports each entity the pass links to (minted or reused) in `report`;
/// returns the minted entities not stored yet, and the targets refused
/// because a minted entity was retired since an earlier pass.
fn entity_rows(
    tx: &mut dyn Tx,
    result: &linking::LinkingResult,
    dry_run: bool,
    report: &mut LinkReport,
) -> Result<(Vec<Node>, Vec<Uuid>), Error> {
    let status = |exists: bool| item_status(exists, dry_run);
    let mut new_nodes: Vec<Node> = Vec::new();
    let mut refused_targets: Vec<Uuid> = Vec::new();
    let minted: HashMap<Uuid, &Node> = result.entities.iter().map(|n| (n.id, n)).collect();
    for (surface, id) in &result.surfaces {
        let mentions = result
            .mentions
            .iter()
            .filter(|e| e.target_id == *id)
            .count();
        let (exists, reused, slug, kind) = match minted.get(id) {
            Some(node) => {
                let stored = tx.get_node(*id)?;
                if let Some(s) = &stored {
                    // A minted entity an earlier pass wrote and someone
                    // since retired (an organizer merge): not revived.
                    if !s.lifecycle.is_active() {
                        report.kept_apart.push(KeptApart {
                            surface: surface.clone(),
                            entity: *id,
                            name: s.content.clone(),
                            reason: "inactive".into(),
                            detail: format!("the linked entity is {}", s.lifecycle),
                        });
                        refused_targets.push(*id);
                        continue;
                    }
                } else {
                    new_nodes.push((*node).clone());
                }
                let meta = node.metadata.as_ref();
                let field = |k: &str| {
                    meta.and_then(|m| m.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                (stored.is_some(), false, field("slug"), field("entity_type"))
            }
            None => {
                let kind = tx
                    .get_node(*id)?
                    .and_then(|n| n.metadata)
                    .and_then(|m| {
                        m.get("entity_type")
                            .and_then(Value::as_str)
                            .map(String::from)
                    })
                    .unwrap_or_else(|| OTHER_KIND.into());
                (true, true, String::new(), kind)
            }
        };
        report.entities.push(LinkedEntity {
            id: *id,
            name: surface.clone(),
            slug,
            entity_type: kind,
            mentions,
            reused,
            status: status(exists),
        });
    }
    Ok((new_nodes, refused_targets))
}

/// The entities a pass may reuse instead of minting: the slugs earlier
/// passes took in `scope`, and for each surface of the `first` pass the
/// oldest identity entity admission accepts ([`admit_reuse`]); every other
/// same-name entity goes to `kept_apart` with the refusal.
fn reuse_context(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    scope: &ScopeId,
    first: &linking::LinkingResult,
    kept_apart: &mut Vec<KeptApart>,
) -> Result<LinkContext, Error> {
    let mut ctx = LinkContext::default();
    if first.surfaces.is_empty() {
        return Ok(ctx);
    }
    let entities = scan(
        tx,
        owner,
        scope,
        vec![NodeType::Entity],
        |_| true,
        usize::MAX,
    )?;
    for e in entities.iter().filter(|e| is_linked(e)) {
        if let Some(slug) = e
            .metadata
            .as_ref()
            .and_then(|m| m.get("slug"))
            .and_then(Value::as_str)
        {
            ctx.taken_slugs.insert(slug.to_string(), e.content.clone());
        }
    }
    // Keys computed once: a scope may hold many entities.
    let identity: Vec<(String, String, &Node)> = entities
        .iter()
        .filter(|e| !is_linked(e) && e.lifecycle.is_active())
        .map(|e| {
            (
                admission::name_key(&e.content),
                admission::alias_key(&e.content),
                e,
            )
        })
        .collect();
    let kinds: HashMap<&str, &str> = first
        .entities
        .iter()
        .map(|n| {
            let kind = n
                .metadata
                .as_ref()
                .and_then(|m| m.get("entity_type"))
                .and_then(Value::as_str)
                .unwrap_or(OTHER_KIND);
            (n.content.as_str(), kind)
        })
        .collect();
    for surface in first.surfaces.keys() {
        let kind = kinds.get(surface.as_str()).copied().unwrap_or(OTHER_KIND);
        // Identity entities of the same name key or alias key are
        // the only ones admission could accept.
        let key = admission::alias_key(surface);
        let mut same_name: Vec<&Node> = identity
            .iter()
            .filter(|(name, alias, _)| {
                *name == admission::name_key(surface) || (!key.is_empty() && *alias == key)
            })
            .map(|(_, _, e)| *e)
            .collect();
        // Oldest first, then by id: the same store always reuses the
        // same entity.
        same_name.sort_by(|a, b| {
            a.created_at
                .unix_millis()
                .cmp(&b.created_at.unix_millis())
                .then(a.id.cmp(&b.id))
        });
        let mut chosen = None;
        for e in same_name {
            match admit_reuse(e, surface, kind) {
                Ok(()) if chosen.is_none() => chosen = Some(e.id),
                Ok(()) => {}
                Err(r) => kept_apart.push(KeptApart {
                    surface: surface.clone(),
                    entity: e.id,
                    name: e.content.clone(),
                    reason: r.code.to_string(),
                    detail: r.detail,
                }),
            }
        }
        if let Some(id) = chosen {
            ctx.reuse.insert(surface.clone(), ReuseTarget { id });
        }
    }
    Ok(ctx)
}

/// Writes a pass's new nodes and edges and its sealed `ENTITIES_LINKED`
/// record inside `tx` (the caller commits); returns the record's id and
/// how many rows were written.
fn publish(
    tx: &mut dyn Tx,
    req: &LinkRequest,
    report: &LinkReport,
    new_nodes: &[Node],
    new_edges: &[&Edge],
) -> Result<(Uuid, usize), Error> {
    for n in new_nodes {
        ensure_node_finite(n)?;
    }
    for e in new_edges {
        ensure_edge_finite(e)?;
    }
    let written_ids: Vec<Uuid> = new_nodes
        .iter()
        .map(|n| n.id)
        .chain(new_edges.iter().map(|e| e.id))
        .collect();
    let (owner, scope) = (&req.owner, &req.scope);
    let op_id = link_op_id(owner, scope, &written_ids);
    let nodes: Vec<Value> = new_nodes.iter().map(snapshot).collect::<Result<_, _>>()?;
    let reused: BTreeMap<&str, Uuid> = report
        .entities
        .iter()
        .filter(|e| e.reused)
        .map(|e| (e.name.as_str(), e.id))
        .collect();
    let record = json!({
        "format": LINK_FORMAT,
        "policy": LINKING_POLICY,
        "scope": scope,
        "params": req.params,
        "records_read": report.records_read,
        "minted": nodes,
        "reused": reused,
        "published_edges": new_edges,
        "dropped_total": report.dropped.len(),
        "kept_apart": report.kept_apart,
    });
    let now = kith_core::Timestamp::now();
    let op = Operation::new(
        op_id,
        OperationKind::EntitiesLinked,
        owner.clone(),
        scope.clone(),
        None,
        sealed(record)?,
        now,
    );
    for n in new_nodes {
        tx.insert_node(n)?;
    }
    for e in new_edges {
        tx.insert_edge(e)?;
    }
    tx.append_operation(&op)?;
    Ok((op_id, written_ids.len()))
}
