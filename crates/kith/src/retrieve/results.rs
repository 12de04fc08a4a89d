//! What a retrieval returns ([`Retrieval`]): ranked evidence, one result
//! per source event, and the lines handed to packing.

use std::collections::{HashMap, HashSet};

use kith_core::{Node, NodeType, OwnerId, ScopeId};
use kith_store::Tx;
use serde::Serialize;
use uuid::Uuid;

use super::current::SupersededEvidence;
use super::fusion::Trace;
use super::pack::{PackItem, PackedLine};
use super::pool::{Candidate, Pool};
use crate::error::Error;
use crate::search::Provenance;

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievedItem {
    /// 1-based rank.
    pub rank: usize,
    /// The best node of this evidence.
    pub node_id: Uuid,
    /// Its type.
    pub node_type: NodeType,
    /// Its scope.
    pub scope: ScopeId,
    /// Its text.
    pub content: String,
    /// Where it came from.
    pub provenance: Provenance,
    /// Other nodes of the same event that were found too.
    pub also: Vec<Uuid>,
    /// Why it ranks here.
    pub trace: Trace,
}

/// Milliseconds spent per stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timings {
    /// Embedding the query.
    pub embed_ms: f64,
    /// Candidates and fusion.
    pub search_ms: f64,
    /// Packing.
    pub pack_ms: f64,
    /// Writing the receipt.
    pub record_ms: f64,
    /// Everything.
    pub total_ms: f64,
}

/// What `retrieve` returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retrieval {
    /// The request id; the receipt's id when one was recorded.
    pub request_id: Uuid,
    /// Whether a receipt was journaled.
    pub recorded: bool,
    /// The query.
    pub query: String,
    /// Ranked evidence.
    pub results: Vec<RetrievedItem>,
    /// The packed context block.
    pub context: String,
    /// Its size in tokens.
    pub tokens: usize,
    /// The budget it had.
    pub token_budget: usize,
    /// The tokenizer both are counted with.
    pub tokenizer: &'static str,
    /// The packed lines.
    pub packed: Vec<PackedLine>,
    /// Candidates that did not fit.
    pub left_out: Vec<Uuid>,
    /// The embedding model used for the vector path, if any.
    pub embedding_model: Option<String>,
    /// Where the time went.
    pub timings: Timings,
}

/// The ranked candidates as results, one per source event (the others of
/// an event are listed in its `also`), at most `limit`; and the first
/// `pack_size` of them as lines to pack. A claim in `corrected` packs as a
/// line of its own; `superseded` marks what is no longer in force.
pub(super) fn one_per_event(
    ranked: &[&Candidate],
    limit: usize,
    pack_size: usize,
    corrected: &HashSet<Uuid>,
    superseded: &SupersededEvidence,
) -> (Vec<RetrievedItem>, Vec<PackItem>) {
    let mut results: Vec<RetrievedItem> = Vec::new();
    let mut by_event: HashMap<Uuid, usize> = HashMap::new();
    let mut items: Vec<PackItem> = Vec::new();
    for c in ranked {
        let h = &c.hit;
        if items.len() < pack_size {
            items.push(PackItem {
                node_id: h.node_id,
                event_id: h.event_id.filter(|_| !corrected.contains(&h.node_id)),
                when: h.event_time.or(h.ingested_at),
                speaker: h.speaker.clone(),
                role: h.role,
                text: h.content.clone(),
                mark: superseded.mark(h.event_id),
            });
        }
        let (Some(event_id), Some(role), Some(ingested_at)) = (h.event_id, h.role, h.ingested_at)
        else {
            continue;
        };
        if let Some(&i) = by_event.get(&event_id) {
            results[i].also.push(h.node_id);
            continue;
        }
        if results.len() >= limit {
            continue;
        }
        by_event.insert(event_id, results.len());
        results.push(RetrievedItem {
            rank: results.len() + 1,
            node_id: h.node_id,
            node_type: h.node_type,
            scope: h.scope.clone(),
            content: h.content.clone(),
            provenance: Provenance {
                event_id,
                session_id: h.session_id.clone(),
                role,
                speaker: h.speaker.clone(),
                event_time: h.event_time,
                ingested_at,
            },
            also: Vec::new(),
            trace: c.trace.clone(),
        });
    }
    (results, items)
}

/// The candidates that are claims with a value the owner corrected: each
/// says what its message does not, so it gets a packed line of its own
/// instead of folding into the message's (which would show the old value
/// only).
/// `ahead`: claims asked for before (their ids) and those found, read
/// again only for the claims not asked for then.
pub(super) fn owner_corrected(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    pool: &Pool,
    ahead: &(HashSet<Uuid>, HashMap<Uuid, Node>),
) -> Result<HashSet<Uuid>, Error> {
    let (asked, found) = ahead;
    let ids = claim_ids(pool);
    let missing: Vec<Uuid> = ids
        .iter()
        .filter(|id| !asked.contains(id))
        .copied()
        .collect();
    let read = if missing.is_empty() {
        Vec::new()
    } else {
        tx.get_owned_nodes(owner, &missing)?
    };
    Ok(ids
        .iter()
        .filter_map(|id| found.get(id))
        .chain(&read)
        .filter(|n| crate::claims::is_owner_corrected(n))
        .map(|n| n.id)
        .collect())
}

/// The candidates of `pool` that are claims (neither notes nor entities).
pub(super) fn claim_ids(pool: &Pool) -> Vec<Uuid> {
    pool.by_id
        .values()
        .filter(|c| !matches!(c.hit.node_type, NodeType::Note | NodeType::Entity))
        .map(|c| c.hit.node_id)
        .collect()
}
