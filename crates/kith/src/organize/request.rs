//! What a caller asks of the organizer: jobs, candidate hints, requests,
//! and which journal records to list.

use std::str::FromStr;

use kith_core::{OperationKind, OwnerId};
use serde::Serialize;
use uuid::Uuid;

use super::{LinkParams, MergeKind, DEFAULT_ALIAS_THRESHOLD, DEFAULT_BUDGET};
use crate::error::Error;

/// An organizer job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Job {
    /// Merge exact duplicates.
    Deduplicate,
    /// Merge known name variants of an entity; propose semantic ones.
    AliasResolve,
    /// Mint entities for surfaces named in several memories and link the
    /// memories to them (spec 004; `docs/linking.md`).
    LinkEntities,
}

impl Job {
    /// The job's name (`deduplicate`, `alias_resolve`, `link_entities`).
    pub fn as_str(self) -> &'static str {
        match self {
            Job::Deduplicate => "deduplicate",
            Job::AliasResolve => "alias_resolve",
            Job::LinkEntities => "link_entities",
        }
    }
}

impl FromStr for Job {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim() {
            "deduplicate" => Ok(Job::Deduplicate),
            "alias_resolve" => Ok(Job::AliasResolve),
            "link_entities" => Ok(Job::LinkEntities),
            other => Err(Error::Request(format!(
                "unknown organizer job {other:?}; expected deduplicate, alias_resolve or link_entities"
            ))),
        }
    }
}

/// A pair a caller asks the organizer to consider. It is a candidate
/// only: every check still runs on the stored nodes, and `score` counts as
/// a semantic score, which can at most create an unverified proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateHint {
    /// One node.
    pub a: Uuid,
    /// The other.
    pub b: Uuid,
    /// Which job considers it.
    pub kind: MergeKind,
    /// A similarity score in [0, 1], if the caller has one.
    pub score: Option<f64>,
}

/// What `organize` should do.
#[derive(Debug, Clone)]
pub struct OrganizeRequest {
    /// Whose memory.
    pub owner: OwnerId,
    /// Jobs, run in this order.
    pub jobs: Vec<Job>,
    /// Candidate pairs examined per job at most (0: [`DEFAULT_BUDGET`]).
    pub budget: usize,
    /// Score a name match needs to merge two entities.
    pub alias_threshold: f64,
    /// Extra candidate pairs (see [`CandidateHint`]).
    pub hints: Vec<CandidateHint>,
    /// The `link_entities` job's threshold, mention floor and read budget
    /// (spec 004's defaults: nothing is minted until the threshold is
    /// lowered).
    pub link_params: LinkParams,
    /// The scope `link_entities` links (`None`: one pass per scope the
    /// owner has memories in, each its own transaction).
    pub link_scope: Option<kith_core::ScopeId>,
}

impl OrganizeRequest {
    /// A request running `jobs` with the defaults.
    pub fn new(owner: OwnerId, jobs: Vec<Job>) -> Self {
        OrganizeRequest {
            owner,
            jobs,
            budget: DEFAULT_BUDGET,
            alias_threshold: DEFAULT_ALIAS_THRESHOLD,
            hints: Vec::new(),
            link_params: LinkParams::default(),
            link_scope: None,
        }
    }
}

/// Which journal records to list.
#[derive(Debug, Clone, Default)]
pub struct JournalQuery {
    /// Only this kind.
    pub kind: Option<OperationKind>,
    /// Only records about this node: its target, or any record whose
    /// payload names it (a merge names both nodes).
    pub node: Option<Uuid>,
    /// At most this many, oldest first (0: all).
    pub limit: usize,
}
