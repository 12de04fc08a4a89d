//! `doctor`: verifies every event checksum and the store's referential
//! integrity.

use kith_core::{canon, ids};
use kith_store::{EventQuery, TxMode};
use serde::Serialize;

use crate::context::Ctx;
use crate::error::Error;

/// What `doctor` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DoctorReport {
    /// Events whose checksums were recomputed.
    pub events_checked: u64,
    /// Journal records whose checksums were recomputed.
    #[serde(default)]
    pub operations_checked: u64,
    /// Of the events, tombstones (forgotten events) whose tombstone
    /// checksum was recomputed instead.
    #[serde(default)]
    pub tombstones_checked: u64,
    /// Problems, one sentence each. Empty means healthy.
    pub problems: Vec<String>,
    /// Checks that could not run, and why (a pack open read-only cannot
    /// run SQLite's full-text check). Not problems.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_checked: Vec<String>,
}

impl DoctorReport {
    /// True when nothing is wrong.
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What a doctor of a pack open read-only leaves out.
pub(crate) const READ_ONLY_NOTE: &str =
    "the full-text index against the nodes: the pack is open read-only, and SQLite issues \
     that check as a write";

/// Events read per page.
const PAGE: usize = 1000;
/// Problems reported at most (a badly damaged pack would otherwise print
/// millions of lines).
const MAX_PROBLEMS: usize = 200;

/// Recomputes every journal record's checksum, and every saved plan's
/// checksum against the one it was saved with.
fn check_journal(tx: &mut dyn kith_store::Tx, report: &mut DoctorReport) -> Result<(), Error> {
    let mut after = 0;
    loop {
        let page = tx.scan_operations(after, PAGE)?;
        let Some((last, _)) = page.last() else { break };
        after = *last;
        for (_, op) in &page {
            report.operations_checked += 1;
            if op.compute_checksum() != op.checksum {
                report.problems.push(format!(
                    "journal record {} ({}): checksum does not match its fields",
                    op.id, op.kind
                ));
            }
            // A record scrubbed by a forget keeps only the name of the
            // FORGOTTEN record and the old payload's SHA-256; its
            // re-computed checksum is all there is to check.
            if kith_core::tombstone::is_scrubbed(&op.payload) {
                continue;
            }
            // Organizer records seal their record with its own SHA-256
            // (merges, proposals, decisions, undos).
            if let (Some(record), Some(sha)) = (op.payload.get("record"), op.payload.get("sha256"))
            {
                if sha.as_str() != Some(canon::checksum(record).as_str()) {
                    report.problems.push(format!(
                        "journal record {} ({}): the record does not match its SHA-256",
                        op.id, op.kind
                    ));
                }
            }
            if op.kind == kith_core::OperationKind::DerivationPrepared
                && Some(canon::checksum(&op.payload["plan"]).as_str())
                    != op.payload["plan_checksum"].as_str()
            {
                report.problems.push(format!(
                    "journal record {}: the saved plan does not match its plan checksum",
                    op.id
                ));
            }
        }
        if report.problems.len() >= MAX_PROBLEMS {
            break;
        }
    }
    Ok(())
}

/// Recomputes every event's content hash, checksum and id, checks that
/// each has its note node (a forgotten event: its tombstone checksum
/// and id, and that its note is gone), recomputes every journal record's checksum
/// (one read snapshot), then runs the backend's own integrity checks.
/// Changes nothing.
pub(crate) fn doctor(ctx: &Ctx<'_>) -> Result<DoctorReport, Error> {
    let mut report = DoctorReport::default();
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let mut after = 0;
    loop {
        let page = match tx.list_events(&EventQuery {
            after_seq: after,
            limit: PAGE,
            ..EventQuery::default()
        }) {
            Ok(page) => page,
            Err(e) => {
                report.problems.push(format!("events cannot be read: {e}"));
                break;
            }
        };
        let Some(last) = page.last() else { break };
        after = last.seq;
        for stored in &page {
            report.events_checked += 1;
            let e = &stored.event;
            if let Some(t) = &stored.tombstone {
                // A forgotten event: its content is gone, so the
                // tombstone's own checksum seals what is left.
                report.tombstones_checked += 1;
                for problem in t.verify(e) {
                    report.problems.push(format!("event {}: {problem}", e.id));
                }
                if ids::event_id(&e.owner_id, &e.source_id) != e.id {
                    report.problems.push(format!(
                        "event {}: id does not match its owner and source id",
                        e.id
                    ));
                }
                if tx.get_node(ids::note_node_id(e.id))?.is_some() {
                    report.problems.push(format!(
                        "event {}: forgotten, but its note node is still there",
                        e.id
                    ));
                }
                continue;
            }
            if canon::sha256_hex(e.content.as_bytes()) != e.content_sha256 {
                report.problems.push(format!(
                    "event {}: content does not match its SHA-256",
                    e.id
                ));
            }
            if e.compute_checksum() != e.checksum {
                report.problems.push(format!(
                    "event {}: checksum does not match its fields",
                    e.id
                ));
            }
            if ids::event_id(&e.owner_id, &e.source_id) != e.id {
                report.problems.push(format!(
                    "event {}: id does not match its owner and source id",
                    e.id
                ));
            }
            if tx.get_node(ids::note_node_id(e.id))?.is_none() {
                report
                    .problems
                    .push(format!("event {}: its note node is missing", e.id));
            }
        }
        if report.problems.len() >= MAX_PROBLEMS {
            break;
        }
    }
    check_journal(&mut *tx, &mut report)?;
    drop(tx);
    // The backend's own checks run under the write lock (SQLite's FTS
    // check is a write command); the transaction is dropped, so nothing
    // changes.
    let problems = if ctx.store.is_read_only() {
        report.not_checked.push(READ_ONLY_NOTE.to_string());
        let mut tx = ctx.store.begin(TxMode::Read)?;
        tx.check_integrity()?
    } else {
        crate::retry::on_busy("check integrity", || {
            let mut tx = ctx.store.begin(TxMode::Write)?;
            Ok(tx.check_integrity()?)
        })?
    };
    report.problems.extend(problems);
    report.problems.truncate(MAX_PROBLEMS);
    Ok(report)
}
