//! `kith organize`, `kith aliases`, `kith undo` and `kith journal`: thin
//! calls into the organizer, rendered as text or `--json`.

use anyhow::{Context, Result};
use kith::organize::AssessorKind;
use kith::{
    AliasProposal, Assessment, Assessor, Decision, Job, JournalQuery, LinkReport, LinkRequest,
    OperationKind, OwnerId, PathRequest, ProposeAliasRequest, ProposeOutcome, ScopeId, Verdict,
};

use crate::args::{AliasesAction, Cli, LinkArgs};
use crate::cmd::{open, parse_id};
use crate::render;

/// `kith organize --jobs … [--budget N]`.
pub fn organize(cli: &Cli, jobs: &[String], budget: usize) -> Result<()> {
    let jobs = jobs
        .iter()
        .filter(|j| !j.trim().is_empty())
        .map(|j| j.parse::<Job>())
        .collect::<Result<Vec<_>, _>>()?;
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let report = memory.organize(&owner, &jobs, budget)?;
    if cli.json {
        return render::json(&report);
    }
    for job in &report.jobs {
        println!(
            "{}: {} candidate(s), {} merged, {} proposed, {} not applied (policy {}){}{}",
            job.job.as_str(),
            job.candidates,
            job.merges.len(),
            job.proposals.len(),
            job.not_applied_total,
            job.merge_policy,
            if job.budget_exhausted {
                "; budget exhausted, run again for the rest"
            } else {
                ""
            },
            if job.unchanged {
                "; nothing written since the last pass, its report repeated"
            } else {
                ""
            }
        );
        for m in &job.merges {
            println!(
                "  merged {} into {} ({}, {}) — record {}",
                m.retired_id,
                m.keep_id,
                m.kind.as_str(),
                m.basis,
                m.op_id
            );
        }
        for p in &job.proposals {
            println!(
                "  proposed alias {} ~ {} (score {:.3}) — record {}",
                p.a, p.b, p.score, p.op_id
            );
        }
        for n in &job.not_applied {
            println!(
                "  not applied {} ~ {}: {} ({})",
                n.a, n.b, n.reason, n.detail
            );
        }
        for pass in &job.linking {
            print_link(pass, "  ");
        }
    }
    Ok(())
}

/// `kith link --scope S [--threshold X] [--min-mentions N] [--max-records N] [--dry-run]`.
pub fn link(cli: &Cli, args: &LinkArgs) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let scope = ScopeId::new(&args.scope)?;
    let mut req = LinkRequest::new(owner, scope);
    req.params.confidence_threshold = args.threshold;
    req.params.min_mention_count = args.min_mentions;
    req.params.max_records = args.max_records;
    req.dry_run = args.dry_run;
    let report = memory.link_entities(&req)?;
    if cli.json {
        return render::json(&report);
    }
    print_link(&report, "");
    Ok(())
}

/// One linking pass as text: a summary line, then entities, links,
/// mentions, identity entities kept apart and refusals.
fn print_link(r: &LinkReport, indent: &str) {
    let status = |s: kith::organize::link_job::ItemStatus| match s {
        kith::organize::link_job::ItemStatus::New => "new",
        kith::organize::link_job::ItemStatus::Existing => "existing",
        kith::organize::link_job::ItemStatus::WouldWrite => "would write",
    };
    println!(
        "{indent}link_entities {}: {} memories read, {} entit{}, {} link(s), {} mention(s), {} refused (threshold {}, min mentions {}, max records {}){}",
        r.scope,
        r.records_read,
        r.entities.len(),
        if r.entities.len() == 1 { "y" } else { "ies" },
        r.links.len(),
        r.mentions.len(),
        r.dropped.len(),
        r.params.confidence_threshold,
        r.params.min_mention_count,
        r.params.max_records,
        match (r.dry_run, r.op_id) {
            (true, _) => " — dry run, nothing written".to_string(),
            (false, Some(op)) => format!(" — {} written, record {op}", r.written),
            (false, None) => " — nothing new".to_string(),
        }
    );
    for e in &r.entities {
        println!(
            "{indent}  entity {} {:?} [{}] {} ({} mention(s), {}{})",
            e.id,
            e.name,
            if e.slug.is_empty() { "-" } else { &e.slug },
            e.entity_type,
            e.mentions,
            status(e.status),
            if e.reused {
                ", reused identity entity"
            } else {
                ""
            }
        );
    }
    for l in &r.links {
        println!(
            "{indent}  link {:?} {} {:?} (weight {}, {})",
            l.subject_text,
            l.relationship,
            l.object_name,
            l.weight,
            status(l.status)
        );
    }
    for l in &r.mentions {
        println!(
            "{indent}  memory {} {} {:?} ({})",
            l.subject,
            l.relationship,
            l.object_name,
            status(l.status)
        );
    }
    for k in &r.kept_apart {
        println!(
            "{indent}  kept apart {:?} from entity {} {:?}: {} ({})",
            k.surface, k.entity, k.name, k.reason, k.detail
        );
    }
    for d in &r.dropped {
        let surface = if d.surface.is_empty() {
            "(whole pass)".to_string()
        } else {
            format!("{:?}", d.surface)
        };
        println!(
            "{indent}  refused {surface}: {} — {}",
            d.reason.as_str(),
            d.detail
        );
    }
}

/// `kith aliases list|review`.
pub fn aliases(cli: &Cli, action: &AliasesAction) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    match action {
        AliasesAction::List => {
            let list = memory.alias_proposals(&owner)?;
            if cli.json {
                return render::json(&list);
            }
            print_alias_proposals(&list);
        }
        AliasesAction::Propose {
            a,
            b,
            score,
            assessor,
            verdict,
            reason,
        } => {
            let assessment = match assessor {
                None => None,
                Some(who) => Some(assessment(who, verdict.as_deref(), reason)?),
            };
            let outcome = memory.propose_alias(
                &owner,
                &ProposeAliasRequest {
                    a: parse_id(a)?,
                    b: parse_id(b)?,
                    score: *score,
                    assessment,
                },
            )?;
            if cli.json {
                return render::json(&outcome);
            }
            print_proposed(a, b, &outcome);
        }
        AliasesAction::Review {
            op,
            accept,
            reject: _,
            reason,
            reviewer,
        } => {
            let decision = if *accept {
                Decision::Accept
            } else {
                Decision::Reject
            };
            let outcome = memory.review_alias(
                &owner,
                parse_id(op)?,
                decision,
                reason.as_deref(),
                reviewer.as_deref(),
            )?;
            if cli.json {
                return render::json(&outcome);
            }
            println!(
                "{} {} — record {}{}",
                decision,
                op,
                outcome.review_op_id,
                if outcome.replayed {
                    " (already recorded)"
                } else {
                    ""
                }
            );
            if let Some(edge) = outcome.edge_id {
                println!("verified alias edge {edge}");
            }
        }
    }
    Ok(())
}

/// Prints alias proposals one line each, as `kith aliases list` shows them.
fn print_alias_proposals(list: &[AliasProposal]) {
    if list.is_empty() {
        println!("no alias proposals");
    }
    for p in list {
        // A version-2 proposal shows who judged it and how.
        let assessed = p
            .assessment
            .as_ref()
            .map(|a| {
                format!(
                    "  assessed {} by {}:{}",
                    a["verdict"].as_str().unwrap_or("?"),
                    a["assessor"]["kind"].as_str().unwrap_or("?"),
                    a["assessor"]["id"].as_str().unwrap_or("?")
                )
            })
            .unwrap_or_default();
        println!(
            "{}  {:<8} {:?} ~ {:?}  score {:.3}{assessed}",
            p.op_id,
            p.status.as_str(),
            p.a_name,
            p.b_name,
            p.score
        );
    }
}

/// Prints what proposing `a ~ b` did: a new record, an earlier one that
/// stands, or an unrecorded edge that already links the pair.
fn print_proposed(a: &str, b: &str, outcome: &ProposeOutcome) {
    match (outcome.created, outcome.op_id) {
        (true, Some(op)) => println!(
            "proposed {} ~ {} ({}) — record {op}",
            a,
            b,
            outcome.format.as_deref().unwrap_or("")
        ),
        (false, Some(op)) => println!(
            "already proposed ({}, {}) — record {op}; the first record stands{}",
            outcome.status.as_str(),
            outcome.format.as_deref().unwrap_or(""),
            if outcome.assessment.is_none() {
                ", without an assessment"
            } else {
                ""
            }
        ),
        _ => println!(
            "an unverified alias edge {} written without a record already links the pair; nothing written",
            outcome.edge_id
        ),
    }
}

/// `reviewer:NAME` or `model:ID`, a verdict and reasons as an assessment.
fn assessment(who: &str, verdict: Option<&str>, reasons: &[String]) -> Result<Assessment> {
    let (kind, id) = who
        .split_once(':')
        .with_context(|| format!("--assessor {who:?}: write reviewer:NAME or model:ID"))?;
    let kind = match kind.trim() {
        "reviewer" => AssessorKind::Reviewer,
        "model" => AssessorKind::Model,
        other => anyhow::bail!("--assessor {who:?}: {other:?} is neither reviewer nor model"),
    };
    let verdict = match verdict.map(str::trim) {
        Some("same") => Verdict::Same,
        Some("different") => Verdict::Different,
        Some("unsure") => Verdict::Unsure,
        other => anyhow::bail!(
            "--verdict {:?}: expected same, different or unsure",
            other.unwrap_or("")
        ),
    };
    Ok(Assessment {
        assessor: Assessor {
            kind,
            id: id.to_string(),
        },
        verdict,
        reasons: reasons.to_vec(),
    })
}

/// `kith path FROM TO [--include-unverified-aliases] [--max-hops N]`.
pub fn path(
    cli: &Cli,
    from: &str,
    to: &str,
    include_unverified_aliases: bool,
    max_hops: usize,
) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let mut req = PathRequest::new(parse_id(from)?, parse_id(to)?);
    req.include_unverified_aliases = include_unverified_aliases;
    req.max_hops = max_hops;
    let report = memory.path(&owner, &req)?;
    if cli.json {
        return render::json(&report);
    }
    if !report.found {
        println!(
            "no path from {from} to {to} within {max_hops} hop(s){}{}",
            if report.skipped_proposals > 0 && !include_unverified_aliases {
                format!(
                    "; {} unverified alias proposal(s) not followed (--include-unverified-aliases follows them)",
                    report.skipped_proposals
                )
            } else {
                String::new()
            },
            if report.truncated {
                "; the search stopped at its visit limit"
            } else {
                ""
            }
        );
        return Ok(());
    }
    println!(
        "{} hop(s): {:?} ({})",
        report.steps.len(),
        report.from.content,
        report.from.id
    );
    for s in &report.steps {
        println!(
            "  —{}→ {:?} ({})",
            s.edge.edge_type, s.node.content, s.node.id
        );
    }
    Ok(())
}

/// `kith undo OP`.
pub fn undo(cli: &Cli, op: &str) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let report = memory.undo(&owner, parse_id(op)?)?;
    if cli.json {
        return render::json(&report);
    }
    println!(
        "undid {} {} — record {}{}",
        report.undone_kind,
        report.undone_op_id,
        report.undo_op_id,
        if report.replayed {
            " (already undone)"
        } else {
            ""
        }
    );
    println!(
        "restored {} node(s), removed {} edge(s)",
        report.restored_nodes.len(),
        report.removed_edges.len()
    );
    Ok(())
}

/// `kith correct --entity E (--claim C… | --event EV…) (--to E2 | --new-person NAME) --reason R`.
pub fn correct(cli: &Cli, a: &crate::args::CorrectArgs) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let ids = |raw: &[String]| raw.iter().map(|r| parse_id(r)).collect::<Result<Vec<_>>>();
    let to = match (&a.to, &a.new_person) {
        (Some(to), None) => kith::CorrectionTarget::Entity { id: parse_id(to)? },
        (None, Some(name)) => kith::CorrectionTarget::NewPerson { name: name.clone() },
        _ => anyhow::bail!("give exactly one of --to and --new-person"),
    };
    let report = memory.correct(
        &owner,
        &kith::Correction {
            entity: parse_id(&a.entity)?,
            claims: ids(&a.claim)?,
            events: ids(&a.event)?,
            to,
            reason: a.reason.clone(),
        },
    )?;
    if cli.json {
        return render::json(&report);
    }
    println!(
        "moved {} claim(s) to {}{} — record {}{}",
        report.moved_claims.len(),
        report.target,
        if report.created_target {
            " (a new person)"
        } else {
            ""
        },
        report.op_id,
        if report.replayed {
            " (already applied)"
        } else {
            ""
        }
    );
    println!(
        "closed {} link(s), made {}; undo with `kith undo {}`",
        report.closed_edges.len(),
        report.opened_edges.len(),
        report.op_id
    );
    Ok(())
}

/// `kith journal [--kind K] [--node ID]`.
pub fn journal(cli: &Cli, kind: Option<&str>, node: Option<&str>, limit: usize) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let kind = kind
        .map(|k| {
            k.trim()
                .to_uppercase()
                .parse::<OperationKind>()
                .with_context(|| format!("--kind {k}"))
        })
        .transpose()?;
    let ops = memory.journal(
        &owner,
        &JournalQuery {
            kind,
            node: node.map(parse_id).transpose()?,
            limit,
        },
    )?;
    if cli.json {
        return render::json(&ops);
    }
    for op in &ops {
        println!(
            "{}  {}  {:<28} target {}",
            op.created_at.to_rfc3339(),
            op.id,
            op.kind.as_str(),
            op.target_id
                .map(|t| t.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    Ok(())
}
