//! The organizer: conservative duplicate and alias merges, alias proposals
//! and their review inbox, a checksummed journal, and undo.
//!
//! `organize` gathers candidate pairs in one read snapshot, then applies
//! each in its own write transaction that re-reads and re-admits both nodes
//! ([`admission`]); a pair admitted from a stale read is never applied.
//!
//! - [`merge`]: publishing a merge (evidence union, copied relationships,
//!   retirement, one SUPERSEDES edge, the `ORGANIZER_MERGED` record).
//! - [`alias`]: unverified alias proposals, the inbox and its decisions.
//! - [`undo`]: reversing a merge or an accepted alias from its record.
//!
//! Every record this module writes has the payload
//! `{"record": …, "sha256": SHA-256 of the record's canonical JSON}`;
//! `docs/organizer.md` documents the ids and record formats.

pub mod admission;
pub mod alias;
mod idle;
pub mod link_job;
pub mod linking;
pub mod merge;
pub mod undo;

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::time::Instant;

use kith_core::{canon, ids, Node, NodeType, Operation, OperationKind, OwnerId, Timestamp};
use kith_identity::aliases::{LiveReview, UndoneMerge};
use kith_store::{NodeQuery, OperationQuery, SearchFilters, Tx, TxMode, VectorQuery};
use serde::Serialize;
use serde_json::{json, Value};
use thiserror::Error as ThisError;
use uuid::Uuid;

use crate::error::Error;
use crate::memory::Memory;

pub use admission::{MergeKind, NameMatch, Refusal, ALIAS_POLICY, DUPLICATE_POLICY};
pub use alias::{AliasProposal, Decision, ProposalStatus, ReviewOutcome};
pub use alias::{Assessment, Assessor, AssessorKind, ProposeAliasRequest, ProposeOutcome, Verdict};
pub use link_job::{LinkReport, LinkRequest};
pub use linking::{HeuristicEntityExtractor, LinkParams};
pub use undo::UndoReport;

/// The alias-merge threshold unless a request sets another: a name match
/// must score at least this to merge.
pub const DEFAULT_ALIAS_THRESHOLD: f64 = 0.90;

/// The default budget: candidate pairs examined per job.
pub const DEFAULT_BUDGET: usize = 1000;

/// At most this many unapplied pairs are listed per job (all are counted).
const MAX_LISTED: usize = 200;

/// Nodes read per page when gathering candidates.
const PAGE: usize = 1000;

/// Nearest neighbours asked of the vector index per node.
const VECTOR_NEIGHBOURS: usize = 10;

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
    fn new(job: Job) -> Self {
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

    fn refuse(&mut self, a: Uuid, b: Uuid, reason: &str, detail: String, op_id: Option<Uuid>) {
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

// ---------------------------------------------------------------------------
// Ids
// ---------------------------------------------------------------------------

/// The two ids of an unordered pair, smaller first.
pub fn ordered(x: Uuid, y: Uuid) -> (Uuid, Uuid) {
    if x <= y {
        (x, y)
    } else {
        (y, x)
    }
}

fn with_generation(name: String, generation: u32) -> Uuid {
    if generation == 0 {
        ids::v5_name(&name)
    } else {
        ids::v5_name(&format!("{name}:gen:{generation}"))
    }
}

/// `uuid5(KITH_NS, "op:organizer-merge:v1:{a}:{b}:{kind}[:gen:{n}]")`, `a < b`.
/// Generation `n > 0` exists only when generation `n - 1` was undone.
pub fn merge_op_id(x: Uuid, y: Uuid, kind: MergeKind, generation: u32) -> Uuid {
    let (a, b) = ordered(x, y);
    with_generation(
        format!("op:organizer-merge:v1:{a}:{b}:{}", kind.as_str()),
        generation,
    )
}

/// `uuid5(KITH_NS, "edge:transfer:v1:{edge}:{retired}:{keep}")`: the copy of
/// `edge` a merge of `retired` into `keep` publishes. The same merge always
/// names the same copy, so a copy left by an earlier attempt is recognised.
pub fn transfer_edge_id(edge: Uuid, retired: Uuid, keep: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:transfer:v1:{edge}:{retired}:{keep}"))
}

/// `uuid5(KITH_NS, "edge:organizer-supersedes:v1:{keep}:{retired}")`: the one
/// SUPERSEDES edge of a merge.
pub fn merge_supersedes_edge_id(keep: Uuid, retired: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:organizer-supersedes:v1:{keep}:{retired}"))
}

/// `uuid5(KITH_NS, "op:alias-proposal:v1:{a}:{b}")`, `a < b`.
pub fn proposal_op_id(x: Uuid, y: Uuid) -> Uuid {
    let (a, b) = ordered(x, y);
    ids::v5_name(&format!("op:alias-proposal:v1:{a}:{b}"))
}

/// `uuid5(KITH_NS, "edge:alias-proposal:v1:{proposal_op}")`: the unverified
/// RELATES_TO edge of a proposal.
pub fn proposal_edge_id(proposal: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:alias-proposal:v1:{proposal}"))
}

/// `uuid5(KITH_NS, "op:alias-review:v1:{proposal_op}[:gen:{n}]")`: the one
/// decision on a proposal (generation `n > 0` only after an undone accept).
pub fn review_op_id(proposal: Uuid, generation: u32) -> Uuid {
    with_generation(format!("op:alias-review:v1:{proposal}"), generation)
}

/// `uuid5(KITH_NS, "edge:alias-verified:v1:{review_op}")`: the verified alias
/// edge an acceptance publishes.
pub fn verified_edge_id(review: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:alias-verified:v1:{review}"))
}

/// `uuid5(KITH_NS, "op:undo:v1:{op}")`: the undo of a record.
pub fn undo_op_id(op: Uuid) -> Uuid {
    ids::v5_name(&format!("op:undo:v1:{op}"))
}

/// The live generation of a generational record: the first id `id(n)` that
/// is unused, or used and not undone. Returns the id, its generation and
/// the record when it exists.
pub(crate) fn live_op(
    tx: &mut dyn Tx,
    id: impl Fn(u32) -> Uuid,
) -> Result<(Uuid, u32, Option<Operation>), Error> {
    // Each generation needs an undo of the one before; a bound keeps a
    // damaged journal from looping for ever.
    for generation in 0..10_000 {
        let op_id = id(generation);
        match tx.get_operation(op_id)? {
            None => return Ok((op_id, generation, None)),
            Some(op) => {
                if tx.get_operation(undo_op_id(op_id))?.is_none() {
                    return Ok((op_id, generation, Some(op)));
                }
            }
        }
    }
    Err(Error::Damaged(
        "more than 10000 undone generations of one record".into(),
    ))
}

/// What the journal says about the unordered pair `(a, b)`, `a < b`: its
/// latest undone merge (of either kind) and its live alias review. The
/// decision is [`kith_identity::aliases::merge_gate`]'s.
pub(crate) fn pair_history(
    tx: &mut dyn Tx,
    a: Uuid,
    b: Uuid,
) -> Result<(Option<UndoneMerge>, Option<LiveReview>), Error> {
    let mut latest: Option<(Timestamp, UndoneMerge)> = None;
    for kind in [MergeKind::Duplicate, MergeKind::Alias] {
        for generation in 0..10_000 {
            let op_id = merge_op_id(a, b, kind, generation);
            let Some(op) = tx.get_operation(op_id)? else {
                break;
            };
            let Some(undo) = tx.get_operation(undo_op_id(op_id))? else {
                break;
            };
            // A forget scrubbed this history with what it named: there is
            // no decision left to honour for it.
            if kith_core::tombstone::is_scrubbed(&op.payload)
                || kith_core::tombstone::is_scrubbed(&undo.payload)
            {
                continue;
            }
            let record = unseal(&op)?;
            let undo_record = unseal(&undo)?;
            let name = |id: Uuid| -> String {
                ["keep", "retired"]
                    .iter()
                    .filter_map(|w| merge::record_node(record, "before", w))
                    .find(|n| n.id == id)
                    .map(|n| n.content)
                    .unwrap_or_default()
            };
            let undone = UndoneMerge {
                undo_op: undo.id,
                names: (name(a), name(b)),
                review_at_undo: undo_record
                    .get("pair_review")
                    .and_then(Value::as_str)
                    .and_then(|s| s.parse().ok()),
            };
            if latest.as_ref().is_none_or(|(t, _)| undo.created_at >= *t) {
                latest = Some((undo.created_at, undone));
            }
        }
    }
    let (review_id, _, review) = live_op(tx, |g| review_op_id(proposal_op_id(a, b), g))?;
    let review = review.map(|op| LiveReview {
        op: review_id,
        accepted: op.kind == OperationKind::AliasProposalAccepted,
    });
    Ok((latest.map(|(_, u)| u), review))
}

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

/// A value as it will read back from the journal. serde_json's float
/// parsing is not an exact inverse of its printing for every f64, so
/// checksums and comparisons are taken over the value after one trip.
pub(crate) fn as_read_back(value: Value) -> Result<Value, Error> {
    serde_json::from_str(&value.to_string())
        .map_err(|e| Error::Damaged(format!("journal record: {e}")))
}

/// A node as its journal snapshot.
pub(crate) fn snapshot(node: &Node) -> Result<Value, Error> {
    let value =
        serde_json::to_value(node).map_err(|e| Error::Damaged(format!("node {}: {e}", node.id)))?;
    as_read_back(value)
}

/// SHA-256 of a node's journal snapshot: equal exactly when the node is
/// unchanged.
pub(crate) fn snapshot_checksum(node: &Node) -> Result<String, Error> {
    Ok(canon::checksum(&snapshot(node)?))
}

/// `{"record": record, "sha256": SHA-256 of its canonical JSON}`.
pub(crate) fn sealed(record: Value) -> Result<Value, Error> {
    let record = as_read_back(record)?;
    let sha = canon::checksum(&record);
    Ok(json!({"record": record, "sha256": sha}))
}

/// The record of a sealed payload, if its SHA-256 matches.
pub(crate) fn unseal(op: &Operation) -> Result<&Value, Error> {
    let damaged = |reason: &str| {
        Error::from(OrganizerError::DamagedRecord {
            op: op.id,
            reason: reason.to_string(),
        })
    };
    if op.compute_checksum() != op.checksum {
        return Err(damaged("its checksum does not match its fields"));
    }
    if kith_core::tombstone::is_scrubbed(&op.payload) {
        return Err(OrganizerError::Forgotten {
            op: op.id,
            by: op.payload["forgotten"]["operation_id"]
                .as_str()
                .unwrap_or("?")
                .to_string(),
        }
        .into());
    }
    let record = op
        .payload
        .get("record")
        .ok_or_else(|| damaged("no record"))?;
    if op.payload.get("sha256").and_then(Value::as_str) != Some(&canon::checksum(record)) {
        return Err(damaged("the record does not match its SHA-256"));
    }
    Ok(record)
}

/// Rejects a non-finite number before anything is written (serde_json
/// would silently print it as `null`).
pub(crate) fn ensure_finite(path: &str, value: f64) -> Result<(), Error> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(OrganizerError::NonFinite {
            path: path.to_string(),
        }
        .into())
    }
}

/// Checks a node's numbers and metadata are finite.
pub(crate) fn ensure_node_finite(node: &Node) -> Result<(), Error> {
    ensure_finite(&format!("node {} confidence", node.id), node.confidence)?;
    if let Some(m) = &node.metadata {
        kith_core::canon::ensure_finite(&format!("node {} metadata", node.id), m)?;
    }
    Ok(())
}

/// Checks an edge's numbers and metadata are finite.
pub(crate) fn ensure_edge_finite(edge: &kith_core::Edge) -> Result<(), Error> {
    ensure_finite(&format!("edge {} confidence", edge.id), edge.confidence)?;
    if let Some(m) = &edge.metadata {
        kith_core::canon::ensure_finite(&format!("edge {} metadata", edge.id), m)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// organize
// ---------------------------------------------------------------------------

/// A candidate pair and where it came from.
struct Candidate {
    a: Uuid,
    b: Uuid,
    /// A semantic score (vector similarity or a caller's), if any.
    semantic: Option<f64>,
    /// A caller's hint: checked only inside the transaction.
    hinted: bool,
}

/// Unordered pairs in first-seen order.
#[derive(Default)]
struct Pairs {
    seen: HashMap<(Uuid, Uuid), usize>,
    list: Vec<Candidate>,
}

impl Pairs {
    /// Puts caller-hinted pairs first, then pairs by their newer member,
    /// newest first (`order`: a node's position in creation order). A run
    /// that stops at its budget has then examined what changed since the
    /// last run, instead of the same oldest pairs (refused last time too)
    /// on every run.
    fn newest_first(&mut self, order: &HashMap<Uuid, usize>) {
        let at = |id: &Uuid| order.get(id).copied().unwrap_or(usize::MAX);
        self.list.sort_by_key(|c| {
            let (x, y) = (at(&c.a), at(&c.b));
            // Among pairs of one newest node, the oldest partner first: copies
            // then fold into the oldest node, not into a chain.
            (
                std::cmp::Reverse(c.hinted),
                std::cmp::Reverse(x.max(y)),
                x.min(y),
            )
        });
        self.seen = self
            .list
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.a, c.b), i))
            .collect();
    }

    fn add(&mut self, x: Uuid, y: Uuid, semantic: Option<f64>, hinted: bool) {
        if x == y {
            return;
        }
        let key = ordered(x, y);
        match self.seen.get(&key) {
            Some(&i) => {
                let c = &mut self.list[i];
                c.hinted |= hinted;
                if let Some(s) = semantic {
                    c.semantic = Some(c.semantic.map_or(s, |t| t.max(s)));
                }
            }
            None => {
                self.seen.insert(key, self.list.len());
                self.list.push(Candidate {
                    a: key.0,
                    b: key.1,
                    semantic,
                    hinted,
                });
            }
        }
    }
}

/// The owner's active nodes in creation order.
fn active_nodes(tx: &mut dyn Tx, owner: &OwnerId) -> Result<Vec<Node>, Error> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = tx.list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            after_seq: after,
            limit: PAGE,
            ..NodeQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        out.extend(
            page.into_iter()
                .map(|s| s.node)
                .filter(|n| n.lifecycle.is_active()),
        );
    }
    Ok(out)
}

/// Each node's position in `nodes` (which are in creation order).
fn creation_order(nodes: &[Node]) -> HashMap<Uuid, usize> {
    nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect()
}

/// Pairs of `nodes` whose vectors are at least `threshold` similar, within
/// one scope; at most `budget` nodes are searched, in the order given
/// (callers give the newest first).
fn vector_pairs(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    nodes: &[&Node],
    threshold: f64,
    budget: usize,
    pairs: &mut Pairs,
) -> Result<bool, Error> {
    let allowed: HashSet<Uuid> = nodes.iter().map(|n| n.id).collect();
    let mut searched = 0;
    for node in nodes {
        let Some((model, vector)) = tx.get_embedding(node.id)? else {
            continue;
        };
        if searched == budget {
            return Ok(true);
        }
        searched += 1;
        let hits = tx.search_vector(&VectorQuery {
            owner: owner.clone(),
            model,
            vector,
            filters: SearchFilters {
                scope: Some(node.scope.clone()),
                ..SearchFilters::default()
            },
            limit: VECTOR_NEIGHBOURS,
        })?;
        for hit in hits {
            if hit.node_id != node.id && hit.score >= threshold && allowed.contains(&hit.node_id) {
                pairs.add(node.id, hit.node_id, Some(hit.score), false);
            }
        }
    }
    Ok(false)
}

impl Memory {
    /// Runs organizer `jobs` over `owner`'s memory with the defaults,
    /// examining at most `budget` candidate pairs per job (0: the default).
    pub fn organize(
        &self,
        owner: &OwnerId,
        jobs: &[Job],
        budget: usize,
    ) -> Result<OrganizeReport, Error> {
        let mut req = OrganizeRequest::new(owner.clone(), jobs.to_vec());
        req.budget = budget;
        self.organize_with(&req)
    }

    /// Runs an organizer request. Each merge or proposal commits in its own
    /// transaction; an error stops the run (what committed before stays,
    /// and a new run finds the rest).
    pub fn organize_with(&self, req: &OrganizeRequest) -> Result<OrganizeReport, Error> {
        let started = Instant::now();
        if !(req.alias_threshold.is_finite() && (0.0..=1.0).contains(&req.alias_threshold)) {
            return Err(Error::Request(
                "the alias threshold must be a number in [0, 1]".into(),
            ));
        }
        for h in &req.hints {
            if let Some(s) = h.score {
                if !(s.is_finite() && (0.0..=1.0).contains(&s)) {
                    return Err(Error::Request(format!(
                        "candidate {}–{}: the score must be a number in [0, 1]",
                        h.a, h.b
                    )));
                }
            }
        }
        let budget = if req.budget == 0 {
            DEFAULT_BUDGET
        } else {
            req.budget
        };
        // alias_resolve embeds entities with the memory's model, so the
        // model is part of what decides its pass.
        let model = if req.jobs.contains(&Job::AliasResolve) {
            self.checked_embedder()?.map(|e| e.model_id().to_string())
        } else {
            None
        };
        let mut jobs = Vec::new();
        let mut finished = Vec::new();
        for &job in &req.jobs {
            let fingerprint = idle::fingerprint(
                req,
                job,
                budget,
                model.as_deref().filter(|_| job == Job::AliasResolve),
            );
            if job != Job::LinkEntities {
                if let Some((report, generation)) = self.idle_report(req, job, &fingerprint)? {
                    finished.push(idle::Finished {
                        job,
                        fingerprint,
                        generation,
                        report: report.clone(),
                        answered: true,
                    });
                    jobs.push(report);
                    continue;
                }
            }
            let (report, generation) = match job {
                Job::Deduplicate => self.deduplicate(req, budget)?,
                Job::AliasResolve => self.alias_resolve(req, budget)?,
                Job::LinkEntities => (self.link_job(req)?, None),
            };
            if let Some(generation) = generation.filter(|_| idle::eligible(req)) {
                if idle::saveable(&report) {
                    finished.push(idle::Finished {
                        job,
                        fingerprint,
                        generation,
                        report: report.clone(),
                        answered: false,
                    });
                }
            }
            jobs.push(report);
        }
        self.save_idle(&req.owner, &finished)?;
        Ok(OrganizeReport {
            owner: req.owner.clone(),
            jobs,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }

    /// `link_entities`: one pass per scope (or the requested one). A pass
    /// over its read budget is refused whole and reported; the others run.
    /// `candidates` counts memories read; `budget_exhausted` says a scope
    /// was refused for its budget.
    fn link_job(&self, req: &OrganizeRequest) -> Result<JobReport, Error> {
        let mut report = JobReport::new(Job::LinkEntities);
        let scopes = match &req.link_scope {
            Some(s) => vec![s.clone()],
            None => {
                let mut tx = self.store_backend().begin(TxMode::Read)?;
                let mut scopes: Vec<kith_core::ScopeId> = active_nodes(&mut *tx, &req.owner)?
                    .into_iter()
                    .filter(linking::is_linkable_memory)
                    .map(|n| n.scope)
                    .collect();
                scopes.sort_by(|a, b| a.as_str().cmp(b.as_str()));
                scopes.dedup();
                scopes
            }
        };
        for scope in scopes {
            let mut link = LinkRequest::new(req.owner.clone(), scope);
            link.params = req.link_params;
            let pass = self.link_entities(&link)?;
            report.candidates += pass.records_read;
            report.budget_exhausted |= pass.over_budget();
            report.linking.push(pass);
        }
        Ok(report)
    }

    /// `deduplicate`; also returns the write generation its candidates were
    /// read at (`None`: the store does not count writes).
    fn deduplicate(
        &self,
        req: &OrganizeRequest,
        budget: usize,
    ) -> Result<(JobReport, Option<u64>), Error> {
        let mut report = JobReport::new(Job::Deduplicate);
        let (nodes, mut pairs, generation) = {
            let mut tx = self.store_backend().begin(TxMode::Read)?;
            let generation = idle::generation(&mut *tx)?;
            let nodes = active_nodes(&mut *tx, &req.owner)?;
            let mut pairs = Pairs::default();
            // Same scope and same text once trimmed and lower-cased: the
            // admission checks then decide (a name for entities, the exact
            // bytes for everything else).
            let mut groups: HashMap<(String, String), Vec<Uuid>> = HashMap::new();
            for n in &nodes {
                let group = groups
                    .entry((n.scope.to_string(), admission::name_key(&n.content)))
                    .or_default();
                for &other in group.iter() {
                    pairs.add(other, n.id, None, false);
                }
                group.push(n.id);
            }
            // Newest first: nodes written since the last run are searched
            // before a budget runs out.
            let all: Vec<&Node> = nodes.iter().rev().collect();
            report.budget_exhausted |= vector_pairs(
                &mut *tx,
                &req.owner,
                &all,
                admission::DUPLICATE_VECTOR_THRESHOLD,
                budget,
                &mut pairs,
            )?;
            (nodes, pairs, generation)
        };
        for h in req.hints.iter().filter(|h| h.kind == MergeKind::Duplicate) {
            pairs.add(h.a, h.b, h.score, true);
        }
        pairs.newest_first(&creation_order(&nodes));
        let by_id: HashMap<Uuid, &Node> = nodes.iter().map(|n| (n.id, n)).collect();
        let mut retired: HashSet<Uuid> = HashSet::new();
        for c in &pairs.list {
            if retired.contains(&c.a) || retired.contains(&c.b) {
                // Merged away earlier in this run: the pair is settled.
                continue;
            }
            if report.candidates == budget {
                report.budget_exhausted = true;
                break;
            }
            report.candidates += 1;
            if !c.hinted {
                // Refuse early from the snapshot; an admitted pair is
                // checked again inside its transaction.
                if let (Some(x), Some(y)) = (by_id.get(&c.a), by_id.get(&c.b)) {
                    if let Err(r) = admission::admit_duplicate(x, y) {
                        report.refuse(c.a, c.b, r.code, r.detail, None);
                        continue;
                    }
                }
            }
            let outcome = merge::publish_merge(
                self.store_backend(),
                &req.owner,
                c.a,
                c.b,
                MergeKind::Duplicate,
                req.alias_threshold,
            )?;
            record_merge(&mut report, c, outcome, &mut retired);
        }
        Ok((report, generation))
    }

    /// `alias_resolve`; also returns the write generation its candidates
    /// were read at, or `None` when the pass is not complete without more
    /// writes (entities left without a vector) or the store does not count
    /// writes.
    fn alias_resolve(
        &self,
        req: &OrganizeRequest,
        budget: usize,
    ) -> Result<(JobReport, Option<u64>), Error> {
        let mut report = JobReport::new(Job::AliasResolve);
        // Entities get vectors here, so look-alike names are proposed
        // without a caller's hint.
        let embedded = self.embed_entities(&req.owner, budget)?;
        let (entities, mut pairs, generation) = {
            let mut tx = self.store_backend().begin(TxMode::Read)?;
            // A full batch of vectors may have left more to make: the next
            // pass makes them, so this one is not saved.
            let generation = idle::generation(&mut *tx)?.filter(|_| embedded < budget);
            let entities: Vec<Node> = active_nodes(&mut *tx, &req.owner)?
                .into_iter()
                .filter(|n| n.node_type == NodeType::Entity && !admission::is_personal_reference(n))
                .collect();
            let mut pairs = Pairs::default();
            let mut groups: HashMap<(String, String), Vec<Uuid>> = HashMap::new();
            for n in &entities {
                let mut keys = vec![admission::alias_key(&n.content)];
                // People also meet by first name: "Jordan" and "Jordan Lee"
                // (a proposal at most; the name rule decides).
                if admission::both_people(n, n) {
                    keys.push(format!("given:{}", admission::given_name_key(&n.content)));
                }
                for key in keys {
                    if key.is_empty() || key == "given:" {
                        continue;
                    }
                    let group = groups.entry((n.scope.to_string(), key)).or_default();
                    for &other in group.iter() {
                        pairs.add(other, n.id, None, false);
                    }
                    group.push(n.id);
                }
            }
            // Nicknames meet the people whose first name they begin ("Mel"
            // and "Melanie"; a proposal at most).
            let mut people: HashMap<(String, String), Vec<&Node>> = HashMap::new();
            for n in entities.iter().filter(|n| admission::both_people(n, n)) {
                let key = admission::short_form_key(&n.content);
                people
                    .entry((n.scope.to_string(), key))
                    .or_default()
                    .push(n);
            }
            for n in &entities {
                let key = (n.scope.to_string(), admission::short_form_key(&n.content));
                for p in people.get(&key).into_iter().flatten() {
                    if p.id != n.id && admission::is_short_form_of(&n.content, &p.content) {
                        pairs.add(p.id, n.id, None, false);
                    }
                }
            }
            let all: Vec<&Node> = entities.iter().rev().collect();
            report.budget_exhausted |= vector_pairs(
                &mut *tx,
                &req.owner,
                &all,
                admission::ALIAS_VECTOR_THRESHOLD,
                budget,
                &mut pairs,
            )?;
            (entities, pairs, generation)
        };
        for h in req.hints.iter().filter(|h| h.kind == MergeKind::Alias) {
            pairs.add(h.a, h.b, h.score, true);
        }
        pairs.newest_first(&creation_order(&entities));
        let mut by_id: HashMap<Uuid, Node> = entities.into_iter().map(|n| (n.id, n)).collect();
        let mut retired: HashSet<Uuid> = HashSet::new();
        for c in &pairs.list {
            if retired.contains(&c.a) || retired.contains(&c.b) {
                continue;
            }
            if report.candidates == budget {
                report.budget_exhausted = true;
                break;
            }
            report.candidates += 1;
            // A hinted pair may name nodes the snapshot left out (retired,
            // personal, other owners): read them, to decide between a merge
            // and a proposal; the transaction re-checks everything.
            for id in [c.a, c.b] {
                if let std::collections::hash_map::Entry::Vacant(slot) = by_id.entry(id) {
                    // Another owner's node is "not found", never a refusal
                    // that would say something about it.
                    let node = self.store_backend().begin(TxMode::Read)?.get_node(id)?;
                    if let Some(n) = node.filter(|n| n.owner_id == req.owner) {
                        slot.insert(n);
                    }
                }
            }
            let (Some(x), Some(y)) = (by_id.get(&c.a), by_id.get(&c.b)) else {
                report.refuse(c.a, c.b, "not_found", "a node does not exist".into(), None);
                continue;
            };
            if !c.hinted {
                if let Err(r) = admission::admit_alias(x, y) {
                    report.refuse(c.a, c.b, r.code, r.detail, None);
                    continue;
                }
            }
            let names = admission::names_of(x, y);
            let mut blocked = false;
            if names.is_some_and(|m| m.may_merge() && m.score() >= req.alias_threshold) {
                let outcome = merge::publish_merge(
                    self.store_backend(),
                    &req.owner,
                    c.a,
                    c.b,
                    MergeKind::Alias,
                    req.alias_threshold,
                )?;
                blocked = matches!(outcome, merge::MergeOutcome::Blocked { .. });
                record_merge(&mut report, c, outcome, &mut retired);
                if !blocked {
                    continue;
                }
                // An undone pair is never merged again on the same names,
                // but a similarity may still propose it: accepting that
                // proposal is how the owner reopens the pair.
            }
            // A given name or a short form is evidence for a proposal, as a
            // similarity is.
            let given = names
                .filter(|m| matches!(m, NameMatch::GivenName | NameMatch::ShortForm))
                .map(NameMatch::score);
            let proposal_score = match (c.semantic, given) {
                (Some(s), Some(g)) => Some(s.max(g)),
                (s, g) => s.or(g),
            };
            if blocked && proposal_score.is_none() {
                continue;
            }
            match proposal_score {
                Some(score) if score >= admission::ALIAS_VECTOR_THRESHOLD => {
                    match alias::publish_proposal(
                        self.store_backend(),
                        &req.owner,
                        c.a,
                        c.b,
                        score,
                        None,
                    )? {
                        alias::ProposalOutcome::Published(p) => report.proposals.push(p),
                        alias::ProposalOutcome::Exists { .. } if blocked => {}
                        alias::ProposalOutcome::Exists { op_id, status } => report.refuse(
                            c.a,
                            c.b,
                            match status {
                                ProposalStatus::Rejected => "proposal_rejected",
                                _ => "already_proposed",
                            },
                            format!("alias proposal {op_id} is {}", status.as_str()),
                            Some(op_id),
                        ),
                        alias::ProposalOutcome::Unrecorded { edge_id } => report.refuse(
                            c.a,
                            c.b,
                            "already_proposed",
                            format!(
                                "unverified alias edge {edge_id} already links the pair (written without a record); reused, nothing written"
                            ),
                            None,
                        ),
                        alias::ProposalOutcome::Refused(r) => {
                            report.refuse(c.a, c.b, r.code, r.detail, None)
                        }
                    }
                }
                _ => report.refuse(
                    c.a,
                    c.b,
                    "below_threshold",
                    match names {
                        Some(m) => format!(
                            "the names match ({:?}, score {}) below the threshold {}",
                            m,
                            m.score(),
                            req.alias_threshold
                        ),
                        None => "the names do not match and no semantic score reaches the proposal threshold".into(),
                    },
                    None,
                ),
            }
        }
        Ok((report, generation))
    }

    /// An owner's journal records, oldest first, filtered as `query` says.
    pub fn journal(&self, owner: &OwnerId, query: &JournalQuery) -> Result<Vec<Operation>, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        let ops = tx.list_operations(&OperationQuery {
            owner: owner.clone(),
            kind: query.kind,
            target_id: None,
            limit: if query.node.is_some() { 0 } else { query.limit },
        })?;
        let Some(node) = query.node else {
            return Ok(ops);
        };
        let needle = node.to_string();
        let mut out: Vec<Operation> = ops
            .into_iter()
            .filter(|op| {
                op.target_id == Some(node)
                    || canon::to_canonical_string(&op.payload).contains(&needle)
            })
            .collect();
        if query.limit > 0 {
            out.truncate(query.limit);
        }
        Ok(out)
    }
}

fn record_merge(
    report: &mut JobReport,
    c: &Candidate,
    outcome: merge::MergeOutcome,
    retired: &mut HashSet<Uuid>,
) {
    match outcome {
        merge::MergeOutcome::Applied(m) => {
            retired.insert(m.retired_id);
            report.merges.push(m);
        }
        merge::MergeOutcome::Exists { op_id } => report.refuse(
            c.a,
            c.b,
            "already_merged",
            format!("the pair was merged by {op_id}; nothing changed"),
            Some(op_id),
        ),
        merge::MergeOutcome::Refused(r) => report.refuse(c.a, c.b, r.code, r.detail, None),
        merge::MergeOutcome::Blocked { undo_op } => report.refuse(
            c.a,
            c.b,
            "undone_merge",
            format!(
                "the owner undid a merge of this pair ({undo_op}); only an accepted alias review or a changed name merges it again"
            ),
            Some(undo_op),
        ),
    }
}
