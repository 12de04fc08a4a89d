//! The organizer's refusals and conflicts, each a variant a caller can act on.

use kith_identity::aliases::Decision;
use thiserror::Error as ThisError;
use uuid::Uuid;

/// The organizer's failures that callers act on.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum OrganizerError {
    /// A different decision was asked for a proposal already decided.
    #[error("alias proposal {proposal} was already decided ({first}, record {review}); a different decision is refused")]
    ReviewConflict {
        /// The proposal.
        proposal: Uuid,
        /// The first decision's record.
        review: Uuid,
        /// What was decided first.
        first: Decision,
    },
    /// A proposed node changed since the proposal, so accepting it would
    /// vouch for something the proposal never saw.
    #[error("alias proposal {proposal} is stale: node {node} changed or was retired since it was proposed")]
    StaleProposal {
        /// The proposal.
        proposal: Uuid,
        /// The node that changed.
        node: Uuid,
    },
    /// A rejection was asked without a reason.
    #[error("rejecting an alias proposal needs a reason")]
    ReasonRequired,
    /// Undo refused; nothing was written.
    #[error("cannot undo {op}: {reason}")]
    UndoRefused {
        /// The record asked to undo.
        op: Uuid,
        /// Why, naming what depends on it.
        reason: String,
    },
    /// An edge with a copy's deterministic id exists with other values.
    #[error(
        "merge {op} aborted: edge {edge} exists with other values than the copy it would publish"
    )]
    CopyConflict {
        /// The merge.
        op: Uuid,
        /// The conflicting edge.
        edge: Uuid,
    },
    /// A number the record would hold is not finite.
    #[error("{path} is not a finite number; nothing was written")]
    NonFinite {
        /// Where.
        path: String,
    },
    /// The pair may not be alias-linked (admission refused it); nothing
    /// was written.
    #[error("the pair cannot be proposed as an alias: {detail} ({code})")]
    NotAdmitted {
        /// The refusal's stable code (`different_metadata`, …).
        code: &'static str,
        /// What differs.
        detail: String,
    },
    /// An external assessment is incomplete; nothing was written.
    #[error("{reason}")]
    InvalidAssessment {
        /// What is missing.
        reason: String,
    },
    /// A journal record the organizer needs was scrubbed by a forget: what
    /// it recorded is gone, so it cannot be read, reviewed or undone.
    #[error("journal record {op} was scrubbed by the FORGOTTEN record {by}: what it recorded was forgotten")]
    Forgotten {
        /// The record.
        op: Uuid,
        /// The `FORGOTTEN` record that scrubbed it.
        by: String,
    },
    /// A journal record the organizer needs is damaged.
    #[error("journal record {op} is damaged: {reason}")]
    DamagedRecord {
        /// The record.
        op: Uuid,
        /// What is wrong.
        reason: String,
    },
}
