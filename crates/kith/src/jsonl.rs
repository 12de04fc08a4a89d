//! JSONL import and export.
//!
//! One message a line: `{content, role, owner_id?, scope?, session_id?,
//! speaker?, event_time?, source_id?, metadata?, node_type?}`; export adds
//! `ingested_at`, `event_id` and `checksum` so that importing an export
//! rebuilds an identical log (same ids, same checksums). Unknown fields are
//! refused. A forgotten event exports as its tombstone: empty `content`, no
//! speaker or metadata, the original `checksum`, and a `forgotten` object
//! (`content_sha256`, `forgotten_at`, `reason`, `operation_id`, `checksum`);
//! import appends such a line as a tombstone only when its tombstone
//! checksum recomputes, and derives nothing from it (docs/forget.md).
//!
//! Atomicity (documented in the README): an import is checked whole before
//! anything is written, so a bad line writes nothing and names its line
//! number. The checked lines are then committed in batches; each committed
//! batch is acknowledged through the callback. If the process dies
//! mid-import, the committed batches stay and running the same import again
//! completes it without duplicates: lines without a `source_id` get
//! `import:{first 16 hex of the file's SHA-256}:{line number}`, so they map
//! to the same event ids every time.

use std::io::Write;

use kith_core::event::{InputDefaults, ValidEvent};
use kith_core::tombstone::{self, ForgottenInput};
use kith_core::{
    canon, ids, Event, EventInput, NodeType, OwnerId, ScopeId, Timestamp, Tombstone,
    ValidationError, ValidationErrorKind,
};
use kith_store::{EventQuery, TxMode};
use serde::Serialize;

use crate::context::Ctx;
use crate::error::Error;
use crate::vectors::Vectors;
use crate::write::StoreReceipt;

/// Whether an import with an owner takes lines that name another owner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForeignOwners {
    /// A line naming another owner than the import's fails the import
    /// before anything is written: one owner's import never writes into
    /// another owner's memory.
    #[default]
    Refuse,
    /// Every line goes to the owner it names (restoring an export of all
    /// owners; `kith import --all-owners`).
    Allow,
}

/// How to import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Owner for lines without `owner_id`; with [`ForeignOwners::Refuse`],
    /// also the only owner a line may name. `None`: every line names its
    /// owner, and any owner is taken.
    pub owner: Option<OwnerId>,
    /// Whether lines naming another owner than [`ImportOptions::owner`]
    /// are taken.
    pub foreign_owners: ForeignOwners,
    /// Scope for lines without `scope`.
    pub scope: ScopeId,
    /// Messages per transaction (default 1,000).
    pub batch_size: usize,
    /// Admit every message for extraction too (an `ingest` work item in the
    /// same transaction); the caller then runs `process_pending`.
    pub extract: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            owner: None,
            foreign_owners: ForeignOwners::Refuse,
            scope: ScopeId::personal(),
            batch_size: 1000,
            extract: false,
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Messages read (non-blank lines).
    pub messages: usize,
    /// Events written.
    pub created: usize,
    /// Messages already stored (same owner and source id), left as they were.
    pub existing: usize,
}

/// Checks every line of `text`, then stores them in batches, calling
/// `on_batch` with each committed batch's receipts.
pub(crate) fn import_jsonl(
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    text: &str,
    options: &ImportOptions,
    mut on_batch: impl FnMut(&[StoreReceipt]),
) -> Result<ImportReport, Error> {
    let lines = parse_jsonl(text, options)?;
    let mut report = ImportReport {
        messages: lines.len(),
        ..ImportReport::default()
    };
    for chunk in lines.chunks(options.batch_size.max(1)) {
        // Runs of live messages and of tombstones, in file order.
        let mut start = 0;
        while start < chunk.len() {
            let tombstones = matches!(chunk[start], Line::Tombstone(..));
            let end = chunk[start..]
                .iter()
                .position(|l| matches!(l, Line::Tombstone(..)) != tombstones)
                .map_or(chunk.len(), |n| start + n);
            let receipts = if tombstones {
                write_tombstones(ctx, &chunk[start..end])?
            } else {
                let valid: Vec<ValidEvent> = chunk[start..end]
                    .iter()
                    .filter_map(|l| match l {
                        Line::Live(v) => Some(v.clone()),
                        Line::Tombstone(..) => None,
                    })
                    .collect();
                if options.extract {
                    crate::ingest::Ingest { ctx: *ctx, vectors }
                        .admit(&valid, crate::ingest::IngestOptions::default())?
                } else {
                    crate::write::write_valid(ctx, vectors, &valid)?
                }
            };
            let created = receipts.iter().filter(|r| r.created).count();
            report.created += created;
            report.existing += receipts.len() - created;
            on_batch(&receipts);
            start = end;
        }
    }
    Ok(report)
}

/// Writes every event of `owner` (or of every owner) in ingestion order,
/// one JSON object a line. Returns the number of lines.
pub(crate) fn export_jsonl(
    ctx: &Ctx<'_>,
    owner: Option<&OwnerId>,
    out: &mut dyn Write,
) -> Result<u64, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let mut after = 0;
    let mut lines = 0;
    loop {
        let page = tx.list_events(&EventQuery {
            owner: owner.cloned(),
            after_seq: after,
            limit: 1000,
            ..EventQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        for stored in &page {
            let node_type = tx
                .get_node(ids::note_node_id(stored.event.id))?
                .map_or(NodeType::Note, |n| n.node_type);
            let mut input = stored.event.to_input(node_type);
            // A tombstone exports as what the log keeps of it, so an
            // import reproduces it (and doctor verifies it) exactly.
            input.forgotten = stored
                .tombstone
                .as_ref()
                .map(|t| ForgottenInput::of(&stored.event, t));
            let line = serde_json::to_string(&input)
                .map_err(|e| Error::io("export", std::io::Error::other(e)))?;
            writeln!(out, "{line}").map_err(|e| Error::io("export", e))?;
            lines += 1;
        }
    }
    out.flush().map_err(|e| Error::io("export", e))?;
    Ok(lines)
}

/// One checked import line.
enum Line {
    /// A message to store.
    Live(ValidEvent),
    /// An exported tombstone: the erased event and its tombstone.
    Tombstone(Event, Tombstone),
}

/// Appends exported tombstones in one transaction: the erased event,
/// then its tombstone, with no note (nothing is derived from a
/// forgotten message). A `(owner, source_id)` already stored is left
/// as it is.
fn write_tombstones(ctx: &Ctx<'_>, lines: &[Line]) -> Result<Vec<StoreReceipt>, Error> {
    crate::retry::on_busy("import tombstones", || {
        let mut tx = ctx.store.begin(TxMode::Write)?;
        let mut receipts = Vec::new();
        for line in lines {
            let Line::Tombstone(event, t) = line else {
                continue;
            };
            let existing = tx.event_id_by_source(&event.owner_id, &event.source_id)?;
            if existing.is_none() {
                tx.insert_event(event)?;
                tx.tombstone_event(event.id, t)?;
            }
            receipts.push(StoreReceipt {
                event_id: existing.unwrap_or(event.id),
                node_id: ids::note_node_id(existing.unwrap_or(event.id)),
                created: existing.is_none(),
            });
        }
        tx.commit()?;
        Ok(receipts)
    })
}

/// Parses and validates every line; the first bad one fails the whole import.
fn parse_jsonl(text: &str, options: &ImportOptions) -> Result<Vec<Line>, Error> {
    let file_tag = &canon::sha256_hex(text.as_bytes())[..16];
    let defaults = InputDefaults {
        owner_id: options.owner.clone(),
        scope: options.scope.clone(),
        now: Timestamp::now(),
    };
    let mut valid = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let at_line = |error| Error::Line {
            line: line_no,
            error,
        };
        let mut input = EventInput::from_json(line).map_err(at_line)?;
        if input.source_id.is_none() {
            input.source_id = Some(format!("import:{file_tag}:{line_no}"));
        }
        let line = if input.forgotten.is_some() {
            let (event, t) = tombstone::from_input(input, &defaults).map_err(at_line)?;
            Line::Tombstone(event, t)
        } else {
            Line::Live(input.validate(&defaults).map_err(at_line)?)
        };
        check_owner(&line, options).map_err(at_line)?;
        valid.push(line);
    }
    Ok(valid)
}

/// Refuses a line that names another owner than the import's, unless the
/// import takes every owner's lines.
fn check_owner(line: &Line, options: &ImportOptions) -> Result<(), ValidationError> {
    let (Some(owner), ForeignOwners::Refuse) = (&options.owner, options.foreign_owners) else {
        return Ok(());
    };
    let named = match line {
        Line::Live(v) => &v.event.owner_id,
        Line::Tombstone(event, _) => &event.owner_id,
    };
    if named == owner {
        return Ok(());
    }
    Err(ValidationError::new(
        "owner_id",
        ValidationErrorKind::ForeignOwner {
            named: named.as_str().to_string(),
            importing_for: owner.as_str().to_string(),
        },
    ))
}
