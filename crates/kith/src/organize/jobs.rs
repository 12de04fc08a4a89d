//! The organizer's entry points on [`Memory`]: `organize` and its jobs
//! (deduplicate, alias_resolve, link_entities), and the journal listing.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use kith_core::{canon, Node, NodeType, Operation, OwnerId};
use kith_store::{OperationQuery, TxMode};
use uuid::Uuid;

use super::candidates::{
    active_nodes, alias_name_pairs, creation_order, vector_pairs, Candidate, Pairs,
};
use super::{
    admission, alias, idle, linking, merge, Job, JobReport, JournalQuery, LinkRequest, MergeKind,
    NameMatch, OrganizeReport, OrganizeRequest, ProposalStatus, DEFAULT_BUDGET,
};
use crate::context::Ctx;
use crate::error::Error;
use crate::vectors::Vectors;

/// Runs organizer `jobs` over `owner`'s memory with the defaults,
/// examining at most `budget` candidate pairs per job (0: the default).
pub(crate) fn organize(
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    owner: &OwnerId,
    jobs: &[Job],
    budget: usize,
) -> Result<OrganizeReport, Error> {
    let mut req = OrganizeRequest::new(owner.clone(), jobs.to_vec());
    req.budget = budget;
    organize_with(ctx, vectors, &req)
}

/// Runs an organizer request. Each merge or proposal commits in its own
/// transaction; an error stops the run (what committed before stays,
/// and a new run finds the rest).
pub(crate) fn organize_with(
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    req: &OrganizeRequest,
) -> Result<OrganizeReport, Error> {
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
        vectors.checked_model()?
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
            if let Some((report, generation)) =
                super::idle::idle_report(ctx, req, job, &fingerprint)?
            {
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
            Job::Deduplicate => deduplicate(ctx, req, budget)?,
            Job::AliasResolve => alias_resolve(ctx, vectors, req, budget)?,
            Job::LinkEntities => (link_job(ctx, req)?, None),
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
    super::idle::save_idle(ctx, &req.owner, &finished)?;
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
fn link_job(ctx: &Ctx<'_>, req: &OrganizeRequest) -> Result<JobReport, Error> {
    let mut report = JobReport::new(Job::LinkEntities);
    let scopes = match &req.link_scope {
        Some(s) => vec![s.clone()],
        None => {
            let mut tx = ctx.store.begin(TxMode::Read)?;
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
        let pass = super::link_job::link_entities(ctx, &link)?;
        report.candidates += pass.records_read;
        report.budget_exhausted |= pass.over_budget();
        report.linking.push(pass);
    }
    Ok(report)
}

/// `deduplicate`; also returns the write generation its candidates were
/// read at (`None`: the store does not count writes).
fn deduplicate(
    ctx: &Ctx<'_>,
    req: &OrganizeRequest,
    budget: usize,
) -> Result<(JobReport, Option<u64>), Error> {
    let mut report = JobReport::new(Job::Deduplicate);
    let (nodes, mut pairs, generation) = {
        let mut tx = ctx.store.begin(TxMode::Read)?;
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
            ctx.store,
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
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    req: &OrganizeRequest,
    budget: usize,
) -> Result<(JobReport, Option<u64>), Error> {
    let mut report = JobReport::new(Job::AliasResolve);
    // Entities get vectors here, so look-alike names are proposed
    // without a caller's hint.
    let embedded = vectors.embed_entities(&req.owner, budget)?;
    let (entities, mut pairs, generation) = {
        let mut tx = ctx.store.begin(TxMode::Read)?;
        // A full batch of vectors may have left more to make: the next
        // pass makes them, so this one is not saved.
        let generation = idle::generation(&mut *tx)?.filter(|_| embedded < budget);
        let entities: Vec<Node> = active_nodes(&mut *tx, &req.owner)?
            .into_iter()
            .filter(|n| n.node_type == NodeType::Entity && !admission::is_personal_reference(n))
            .collect();
        let mut pairs = Pairs::default();
        alias_name_pairs(&entities, &mut pairs);
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
                let node = ctx.store.begin(TxMode::Read)?.get_node(id)?;
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
                ctx.store,
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
        propose(ctx, req, c, names, blocked, &mut report)?;
    }
    Ok((report, generation))
}

/// Proposes the alias `c` when a similarity, a given name or a short form
/// reaches the proposal threshold (`blocked`: an undone merge of the pair,
/// which only a proposal may reopen); else records why not in `report`.
fn propose(
    ctx: &Ctx<'_>,
    req: &OrganizeRequest,
    c: &Candidate,
    names: Option<NameMatch>,
    blocked: bool,
    report: &mut JobReport,
) -> Result<(), Error> {
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
        return Ok(());
    }
    match proposal_score {
        Some(score) if score >= admission::ALIAS_VECTOR_THRESHOLD => {
            match alias::publish_proposal(
                ctx.store,
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
    Ok(())
}

/// An owner's journal records, oldest first, filtered as `query` says.
pub(crate) fn journal(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    query: &JournalQuery,
) -> Result<Vec<Operation>, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
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
            op.target_id == Some(node) || canon::to_canonical_string(&op.payload).contains(&needle)
        })
        .collect();
    if query.limit > 0 {
        out.truncate(query.limit);
    }
    Ok(out)
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
