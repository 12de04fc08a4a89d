//! Skipping an organizer pass whose inputs did not change.
//!
//! A `deduplicate` or `alias_resolve` pass is a function of the store's
//! contents and of the request: it reads the owner's nodes, vectors and
//! journal in one snapshot, examines pairs in a fixed order and writes only
//! what it applies. So when a pass applied nothing (and, for `alias_resolve`,
//! left no entity without a vector), a later pass over the same contents with
//! the same request would examine the same pairs and refuse them for the same
//! reasons — also when its budget ran out: the budget takes the same newest
//! pairs first, so running again without a change examines the same ones. The store's write generation ([`kith_store::Tx::write_generation`])
//! tells whether anything at all was written since: every committed write
//! transaction that changed a row (an ingest, a correction, a merge, an undo, a
//! review, a forget, an import, a vector) advances it.
//!
//! After such a pass the organizer saves, per owner and job, the request's
//! fingerprint, the generation and the refusals it reported; the next pass
//! with the same fingerprint that finds the generation unchanged answers that
//! report (marked `unchanged`) without gathering candidates. Anything written
//! in between, by anyone, makes the next pass a full one. A store that does not
//! count writes never skips.

use kith_core::{canon, OwnerId};
use kith_store::{Tx, TxMode};
use serde::{Deserialize, Serialize};

use super::{Job, JobReport, NotApplied, OrganizeRequest};
use crate::context::Ctx;
use crate::error::Error;

/// The format of a saved state; a state of another format is ignored.
const FORMAT: &str = "kith.organizer_idle.v1";

/// What a complete pass that applied nothing saves.
#[derive(Debug, Serialize, Deserialize)]
struct IdleState {
    format: String,
    /// The request as far as it decides the pass (see [`fingerprint`]).
    fingerprint: String,
    /// The write generation the pass's state is valid at.
    generation: u64,
    candidates: usize,
    not_applied: Vec<NotApplied>,
    not_applied_total: usize,
    budget_exhausted: bool,
}

/// A pass that may be saved once the whole request has run: its job, what
/// it reported and the generation its candidates were read at.
pub(crate) struct Finished {
    pub job: Job,
    pub fingerprint: String,
    pub generation: u64,
    pub report: JobReport,
    /// Answered from its saved state: saved again only beside a new one
    /// (saving is a write, which would leave it stale otherwise).
    pub answered: bool,
}

/// The setting key of `owner`'s state for `job` (settings keys are short
/// and `[a-z0-9_]`, so the owner goes in hashed).
fn key(owner: &OwnerId, job: Job) -> String {
    let digest = canon::sha256_hex(format!("{}\u{0}{}", owner.as_str(), job.as_str()).as_bytes());
    format!("organizer_idle_{}", &digest[..40])
}

/// Everything besides the store's contents that decides a pass: the job,
/// the owner, budget, alias threshold and the embedding model (which decides
/// which entity vectors `alias_resolve` makes), and this build's version
/// (a new version may judge pairs differently).
pub(crate) fn fingerprint(
    req: &OrganizeRequest,
    job: Job,
    budget: usize,
    model: Option<&str>,
) -> String {
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "job": job.as_str(),
        "owner": req.owner.as_str(),
        "budget": budget,
        "alias_threshold": req.alias_threshold.to_bits(),
        "model": model,
    })
    .to_string()
}

/// Whether a request may be answered from a saved state at all: hints are
/// not part of the store, so a request with hints always runs.
pub(crate) fn eligible(req: &OrganizeRequest) -> bool {
    req.hints.is_empty()
}

/// The saved report of `job` when nothing was written since the last
/// complete pass with the same fingerprint; `None`: run the pass.
pub(crate) fn idle_report(
    ctx: &Ctx<'_>,
    req: &OrganizeRequest,
    job: Job,
    fingerprint: &str,
) -> Result<Option<(JobReport, u64)>, Error> {
    if !eligible(req) {
        return Ok(None);
    }
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let Some(generation) = tx.write_generation()? else {
        return Ok(None);
    };
    let Some(text) = tx.get_setting(&key(&req.owner, job))? else {
        return Ok(None);
    };
    // A state that does not parse (an older format, damage) is only a
    // missed shortcut: the pass runs and saves a new one.
    let Ok(state) = serde_json::from_str::<IdleState>(&text) else {
        return Ok(None);
    };
    if state.format != FORMAT || state.fingerprint != fingerprint || state.generation != generation
    {
        return Ok(None);
    }
    let mut report = JobReport::new(job);
    report.candidates = state.candidates;
    report.not_applied = state.not_applied;
    report.not_applied_total = state.not_applied_total;
    report.budget_exhausted = state.budget_exhausted;
    report.unchanged = true;
    Ok(Some((report, generation)))
}

/// Saves the passes of one request that applied nothing, when nothing
/// was written since they read their candidates. All in one
/// transaction: that transaction is itself a write, so the states are
/// saved at the generation its commit makes, and the passes answered
/// from a state are saved again beside the new ones (else the write
/// would leave them stale). When every pass was answered nothing is
/// written: a pass with nothing new stays a read.
pub(crate) fn save_idle(ctx: &Ctx<'_>, owner: &OwnerId, passes: &[Finished]) -> Result<(), Error> {
    if passes.iter().all(|p| p.answered) || ctx.store.is_read_only() {
        return Ok(());
    }
    let mut tx = ctx.store.begin(TxMode::Write)?;
    let Some(now) = tx.write_generation()? else {
        return Ok(());
    };
    let mut saved = 0;
    for pass in passes.iter().filter(|p| p.generation == now) {
        let state = IdleState {
            format: FORMAT.to_string(),
            fingerprint: pass.fingerprint.clone(),
            // This transaction changes a row, so its commit adds one.
            generation: now + 1,
            candidates: pass.report.candidates,
            not_applied: pass.report.not_applied.clone(),
            not_applied_total: pass.report.not_applied_total,
            budget_exhausted: pass.report.budget_exhausted,
        };
        let text = serde_json::to_string(&state)
            .map_err(|e| Error::Damaged(format!("organizer state: {e}")))?;
        tx.set_setting(&key(owner, pass.job), Some(&text))?;
        saved += 1;
    }
    if saved > 0 {
        tx.commit()?;
    }
    Ok(())
}

/// Whether a finished pass may be saved: it applied nothing. (A pass that
/// merged or proposed changed what the next one reads, and its writes moved
/// the generation anyway.)
pub(crate) fn saveable(report: &JobReport) -> bool {
    report.merges.is_empty() && report.proposals.is_empty()
}

/// The generation a read transaction sees (`None`: not counted).
pub(crate) fn generation(tx: &mut dyn Tx) -> Result<Option<u64>, Error> {
    Ok(tx.write_generation()?)
}
