//! What an organizer run reports: merges applied, proposals made, pairs
//! not applied and why, per job.

use super::{linking, Job, LinkReport, MergeKind, ALIAS_POLICY, DUPLICATE_POLICY, MAX_LISTED};
use kith_core::OwnerId;
use serde::Serialize;
use uuid::Uuid;

/// One merge `organize` applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergeApplied {
    /// The `ORGANIZER_MERGED` record.
    pub op_id: Uuid,
    /// Duplicate or alias.
    pub kind: MergeKind,
    /// The node kept.
    pub keep_id: Uuid,
    /// The node retired (superseded by `keep_id`).
    pub retired_id: Uuid,
    /// `exact_copy`, or how the names matched.
    pub basis: String,
    /// Relationships copied to the kept node.
    pub copied_edges: usize,
}

/// One alias proposal `organize` published.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposalApplied {
    /// The `ALIAS_PROPOSED` record.
    pub op_id: Uuid,
    /// The unverified RELATES_TO edge.
    pub edge_id: Uuid,
    /// The smaller node id.
    pub a: Uuid,
    /// The larger node id.
    pub b: Uuid,
    /// The semantic score.
    pub score: f64,
}

/// A candidate pair that was not applied, and why.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct NotApplied {
    /// One node.
    pub a: Uuid,
    /// The other.
    pub b: Uuid,
    /// Stable code (`different_metadata`, `already_merged`, …).
    pub reason: String,
    /// What differs, for people.
    pub detail: String,
    /// The existing record, when the pair was handled before.
    pub op_id: Option<Uuid>,
}

/// What one job did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobReport {
    /// The job.
    pub job: Job,
    /// The policy it applied.
    pub merge_policy: &'static str,
    /// Candidate pairs found (and examined, within the budget).
    pub candidates: usize,
    /// Merges applied.
    pub merges: Vec<MergeApplied>,
    /// Alias proposals published.
    pub proposals: Vec<ProposalApplied>,
    /// Pairs not applied (at most 200 listed).
    pub not_applied: Vec<NotApplied>,
    /// Pairs not applied, all counted.
    pub not_applied_total: usize,
    /// True when the budget ran out before every candidate was examined.
    pub budget_exhausted: bool,
    /// `link_entities` only: one report per scope linked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub linking: Vec<LinkReport>,
    /// True when nothing was written to the store since the last complete
    /// pass of this job with the same request, which applied nothing: the
    /// report is that pass's, and no candidates were gathered again
    /// (`docs/organizer.md`, "Passes with nothing new").
    pub unchanged: bool,
}

impl JobReport {
    pub(super) fn new(job: Job) -> Self {
        JobReport {
            job,
            merge_policy: match job {
                Job::Deduplicate => DUPLICATE_POLICY,
                Job::AliasResolve => ALIAS_POLICY,
                Job::LinkEntities => linking::LINKING_POLICY,
            },
            candidates: 0,
            merges: Vec::new(),
            proposals: Vec::new(),
            not_applied: Vec::new(),
            not_applied_total: 0,
            budget_exhausted: false,
            linking: Vec::new(),
            unchanged: false,
        }
    }

    pub(super) fn refuse(
        &mut self,
        a: Uuid,
        b: Uuid,
        reason: &str,
        detail: String,
        op_id: Option<Uuid>,
    ) {
        self.not_applied_total += 1;
        if self.not_applied.len() < MAX_LISTED {
            self.not_applied.push(NotApplied {
                a,
                b,
                reason: reason.to_string(),
                detail,
                op_id,
            });
        }
    }
}

/// What `organize` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrganizeReport {
    /// Whose memory.
    pub owner: OwnerId,
    /// One report per job, in the order run.
    pub jobs: Vec<JobReport>,
    /// Wall time.
    pub duration_ms: f64,
}
