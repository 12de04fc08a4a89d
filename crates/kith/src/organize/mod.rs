//! The organizer: conservative duplicate and alias merges, alias proposals
//! and their review inbox, a checksummed journal, and undo.
//!
//! `organize` gathers candidate pairs in one read snapshot, then applies
//! each in its own write transaction that re-reads and re-admits both nodes
//! ([`admission`]); a pair admitted from a stale read is never applied.
//!
//! Stages, one module each:
//! - `request` and `report`: what a caller asks and what a run answers;
//!   the refusals a caller acts on are [`OrganizerError`] (in `crate::error`).
//! - `candidates`: gathering candidate pairs in one read snapshot.
//! - `jobs`: `organize` and its jobs on [`Memory`](crate::Memory), and the
//!   journal listing; `idle`: answering a pass with nothing new.
//! - `ids`: the deterministic ids of records and edges; `journal`: sealing
//!   and reading records, a pair's history.
//! - [`admission`]: which pairs may merge (the rules live in
//!   `kith_identity`).
//! - [`merge`]: publishing a merge (evidence union, copied relationships,
//!   retirement, one SUPERSEDES edge, the `ORGANIZER_MERGED` record).
//! - [`alias`]: unverified alias proposals, the inbox and its decisions.
//! - [`undo`]: reversing a merge or an accepted alias from its record (and
//!   sealing every kind's `UNDO` record); `undo_record`: what every undo
//!   reads and checks of the record it reverses (corrections and claim
//!   edits write their own inverse with it).
//!
//! Every record this module writes has the payload
//! `{"record": …, "sha256": SHA-256 of the record's canonical JSON}`;
//! `docs/organizer.md` documents the ids and record formats.

pub mod admission;
pub mod alias;
mod candidates;
pub(crate) mod idle;
mod ids;
pub(crate) mod jobs;
mod journal;
pub mod link_job;
/// Entity linking's pure decisions, in [`kith_identity::linking`].
pub use kith_identity::linking;
pub mod merge;
mod report;
mod request;
pub mod undo;
pub(crate) mod undo_record;

pub use crate::error::OrganizerError;
pub use admission::{MergeKind, NameMatch, Refusal, ALIAS_POLICY, DUPLICATE_POLICY};
pub use alias::{AliasProposal, Decision, ProposalStatus, ReviewOutcome};
pub use alias::{Assessment, Assessor, AssessorKind, ProposeAliasRequest, ProposeOutcome, Verdict};
pub use ids::{
    merge_op_id, merge_supersedes_edge_id, ordered, proposal_edge_id, proposal_op_id, review_op_id,
    transfer_edge_id, undo_op_id, verified_edge_id,
};
pub(crate) use journal::{
    as_read_back, ensure_edge_finite, ensure_finite, ensure_node_finite, live_op, pair_history,
    sealed, snapshot, snapshot_checksum, unseal,
};
pub use link_job::{LinkReport, LinkRequest};
pub use linking::{HeuristicEntityExtractor, LinkParams};
pub use report::{JobReport, MergeApplied, NotApplied, OrganizeReport, ProposalApplied};
pub use request::{CandidateHint, Job, JournalQuery, OrganizeRequest};
pub use undo::UndoReport;

pub use kith_identity::admission::DEFAULT_ALIAS_THRESHOLD;

/// The default budget: candidate pairs examined per job.
pub const DEFAULT_BUDGET: usize = 1000;

/// At most this many unapplied pairs are listed per job (all are counted).
const MAX_LISTED: usize = 200;

/// Nodes read per page when gathering candidates.
const PAGE: usize = 1000;

/// Nearest neighbours asked of the vector index per node.
const VECTOR_NEIGHBOURS: usize = 10;
