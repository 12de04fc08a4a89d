//! Forgetting (issue 15): erase an event, a source id, a session, everything
//! before a time, or a whole owner, in one transaction per request, then
//! compact the store and verify what can be verified.
//!
//! What one request does, in its one write transaction:
//! - each selected event becomes a tombstone ([`kith_core::tombstone`]): its
//!   content, speaker and metadata erased, its id, owner, times and the
//!   erased content's SHA-256 kept, sealed with a reason;
//! - what was derived only from erased events goes (`derived.rs`): notes,
//!   claims whose text came from an erased event, entities no remaining
//!   event mentions, edges the erased events asserted, vectors, lexical
//!   rows, work items; claims other events also support keep the rest of
//!   their evidence;
//! - journal records that name or quote what went are scrubbed
//!   (`journal.rs`): payload replaced by a tombstone naming the `FORGOTTEN`
//!   record and the old payload's SHA-256, checksum re-computed;
//! - one `FORGOTTEN` record says what was erased (ids and counts), for
//!   which owner, when and why — never the content.
//!
//! After the commit the store compacts ([`kith_store::Store::compact`]) and
//! `verify.rs` checks the result (and, for a pack, every file's bytes).

mod derived;
mod journal;
mod select;
pub(crate) mod verify;

use std::collections::HashSet;

use kith_core::tombstone::{self, Tombstone};
use kith_core::{ids, Operation, OperationKind, OwnerId, ScopeId, SessionId, SourceId, Timestamp};
use kith_store::{Tx, TxMode};
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::context::Ctx;
use crate::embedding;
use crate::error::Error;

pub use verify::Verification;

/// Which events a forget request erases. Every selector is within one
/// owner: the caller's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForgetSelector {
    /// One event, by id.
    Event(Uuid),
    /// The event stored under the caller's message id.
    SourceId(SourceId),
    /// Every event of one session.
    Session(SessionId),
    /// Every event whose effective time (event time if known, else
    /// ingestion time) is strictly before this instant.
    Before(Timestamp),
    /// Every event of the owner.
    Owner,
}

/// A request to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgetRequest {
    /// What to erase.
    pub selector: ForgetSelector,
    /// Why (required; kept in every tombstone and the `FORGOTTEN` record).
    pub reason: String,
    /// List what would go and write nothing.
    pub dry_run: bool,
}

/// What a forget did (or, on a dry run, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ForgetReport {
    /// True when nothing was written.
    pub dry_run: bool,
    /// The `FORGOTTEN` journal record (none on a dry run or when nothing
    /// was selected).
    pub operation_id: Option<Uuid>,
    /// Events erased (now tombstones).
    pub events: Vec<Uuid>,
    /// Selected events that were tombstones already (left as they were).
    pub already_forgotten: Vec<Uuid>,
    /// Nodes removed (notes, claims, entities), with their lexical rows.
    pub nodes_deleted: Vec<Uuid>,
    /// Nodes kept with the erased evidence taken out (or brought back from
    /// a supersedence by a removed node).
    pub nodes_updated: Vec<Uuid>,
    /// Edges removed.
    pub edges_deleted: u64,
    /// Vectors removed (the erased notes', and those of `notes_reembedded`).
    pub vectors_deleted: u64,
    /// Short turns right after an erased one in its session: their vector
    /// was made with the erased turn in front (`embedding::context`), so it
    /// went, and was made again without it after the commit when the memory
    /// has an embedder of the store's model (else they wait in the
    /// embedding backlog for `kith rebuild --embeddings`).
    pub notes_reembedded: Vec<Uuid>,
    /// Ingestion work items removed.
    pub work_items_deleted: u64,
    /// Journal records whose payload was replaced by a scrub tombstone.
    pub journal_records_scrubbed: Vec<Uuid>,
    /// The storage compaction steps run after the commit.
    pub compaction: Vec<String>,
    /// Whether every compaction step ran (false on a dry run, when nothing
    /// was forgotten, or when a step failed: `compaction` says which; run
    /// the forget of the same events again to compact again).
    pub compacted: bool,
    /// What was checked after the commit (none on a dry run).
    pub verification: Option<Verification>,
}

/// Forgets what `request` selects among `owner`'s events (see the
/// module documentation). A reason is required; a missing event or
/// source id, or a session without events, is [`Error::NotFound`]
/// (another owner's ids answer exactly like missing ones). Selecting
/// only tombstones, or nothing (`Before` an early time), writes nothing.
pub(crate) fn forget(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    request: &ForgetRequest,
) -> Result<ForgetReport, Error> {
    tombstone::check_reason(&request.reason)?;
    let operation_id = Uuid::new_v4();
    let now = Timestamp::now();
    let (mut report, erased_texts) = crate::retry::on_busy("forget", || {
        let mode = if request.dry_run {
            TxMode::Read
        } else {
            TxMode::Write
        };
        let mut tx = ctx.store.begin(mode)?;
        let out = forget_in(&mut *tx, owner, request, operation_id, now)?;
        if !request.dry_run {
            tx.commit()?;
        }
        Ok(out)
    })?;
    // Asking again for events that are tombstones already writes
    // nothing but compacts again (the way to finish a compaction that
    // failed after its forget committed).
    if report.dry_run || (report.operation_id.is_none() && report.already_forgotten.is_empty()) {
        return Ok(report);
    }
    // The short turns embedded after an erased one get a vector without
    // it (a failure leaves them in the embedding backlog, not the forget
    // undone).
    if let Err(e) = embedding::embed_again(ctx.store, ctx.embedder, owner, &report.notes_reembedded)
    {
        tracing::warn!("forget: re-embedding the turns after the erased ones failed: {e}");
    }
    // The forget has committed: a compaction that fails (a reader held
    // the WAL past the busy timeout, a server refusing VACUUM) is
    // reported, and the verification below shows what it left, rather
    // than turning a done forget into an error. A reader that keeps the
    // WAL from being truncated is usually gone a moment later, and every
    // step can run again, so a busy compaction is retried like a busy write.
    match crate::retry::on_busy("compaction", || ctx.store.compact().map_err(Error::from)) {
        Ok(steps) => {
            report.compaction = steps;
            report.compacted = true;
        }
        Err(e) => report.compaction = vec![format!("not completed: {e}")],
    }
    if report.operation_id.is_some() {
        report.verification = Some(verify::verify(ctx, owner, &report, &erased_texts)?);
    }
    Ok(report)
}

/// The whole request inside `tx`: returns the report and the erased texts
/// (kept in memory only, for the byte check after compaction).
fn forget_in(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    request: &ForgetRequest,
    operation_id: Uuid,
    now: Timestamp,
) -> Result<(ForgetReport, Vec<String>), Error> {
    let selected = select::events(tx, owner, &request.selector)?;
    let mut report = ForgetReport {
        dry_run: request.dry_run,
        ..ForgetReport::default()
    };
    let mut live = Vec::new();
    for s in selected {
        if s.tombstone.is_some() {
            report.already_forgotten.push(s.event.id);
        } else {
            report.events.push(s.event.id);
            live.push(s);
        }
    }
    if live.is_empty() {
        return Ok((report, Vec::new()));
    }
    let whole_owner = request.selector == ForgetSelector::Owner;
    let erased: HashSet<Uuid> = live.iter().map(|s| s.event.id).collect();
    // A short turn right after an erased one was embedded with it in front
    // (when a whole owner goes, no turn is left after an erased one).
    if !whole_owner {
        for s in &live {
            let next = embedding::after_stored(tx, s)?;
            if let Some(next) = next.filter(|n| !erased.contains(&n.event.id)) {
                report
                    .notes_reembedded
                    .push(ids::note_node_id(next.event.id));
            }
        }
    }
    let texts: Vec<String> = live.iter().map(|s| s.event.content.clone()).collect();
    let plan = derived::plan(tx, owner, &erased, whole_owner)?;
    let mut named: HashSet<Uuid> = erased.clone();
    named.extend(plan.delete.iter().copied());
    let scrub = journal::to_scrub(tx, owner, &named, &texts, whole_owner)?;
    report.nodes_deleted = plan.delete.clone();
    report.nodes_updated = plan.update.iter().map(|n| n.id).collect();
    report.journal_records_scrubbed = scrub.iter().map(|op| op.id).collect();
    if request.dry_run {
        return Ok((report, texts));
    }

    let mut work_items = 0;
    for e in live.iter().map(|s| &s.event) {
        let t = Tombstone::new(e, now, &request.reason, operation_id);
        tx.tombstone_event(e.id, &t)?;
        if tx.delete_work_item(e.id)? {
            work_items += 1;
        }
    }
    let events: Vec<Uuid> = live.iter().map(|s| s.event.id).collect();
    let asserted = tx.delete_edges_from_events(owner, &events)?;
    let deleted = tx.delete_nodes(&plan.delete)?;
    for node in &plan.update {
        tx.update_node(node)?;
    }
    for op in &scrub {
        let mut scrubbed = op.clone();
        scrubbed.payload = tombstone::scrubbed_payload(&op.payload, operation_id);
        scrubbed.checksum = scrubbed.compute_checksum();
        tx.rewrite_operation(&scrubbed)?;
    }
    let context_vectors = tx.delete_node_embeddings(&report.notes_reembedded)?;
    report.edges_deleted = asserted + deleted.edges;
    report.vectors_deleted = deleted.vectors + context_vectors;
    report.work_items_deleted = work_items;
    report.operation_id = Some(operation_id);
    let scope = live
        .first()
        .map_or_else(ScopeId::personal, |s| s.event.scope.clone());
    let target = match request.selector {
        ForgetSelector::Event(id) => Some(id),
        _ => None,
    };
    tx.append_operation(&Operation::new(
        operation_id,
        OperationKind::Forgotten,
        owner.clone(),
        scope,
        target,
        record(owner, request, &report, now),
        now,
    ))?;
    Ok((report, texts))
}

/// The `FORGOTTEN` record's payload: ids and counts, never content.
fn record(
    owner: &OwnerId,
    request: &ForgetRequest,
    report: &ForgetReport,
    now: Timestamp,
) -> serde_json::Value {
    json!({
        "owner_id": owner,
        "selector": request.selector,
        "reason": request.reason,
        "forgotten_at": now,
        "events": report.events,
        "nodes_deleted": report.nodes_deleted,
        "nodes_updated": report.nodes_updated,
        "journal_records_scrubbed": report.journal_records_scrubbed,
        "counts": {
            "events": report.events.len(),
            "nodes_deleted": report.nodes_deleted.len(),
            "nodes_updated": report.nodes_updated.len(),
            "edges_deleted": report.edges_deleted,
            "vectors_deleted": report.vectors_deleted,
            "notes_reembedded": report.notes_reembedded.len(),
            "work_items_deleted": report.work_items_deleted,
            "journal_records_scrubbed": report.journal_records_scrubbed.len(),
        },
    })
}
