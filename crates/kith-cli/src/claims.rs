//! `kith claims`: the facts view, and retracting or correcting a claim.

use anyhow::Result;
use kith::{ClaimEdit, ClaimEditReport, ClaimHistory, EpistemicType, OwnerId};

use crate::args::{ClaimsAction, Cli};
use crate::cmd::{open, parse_id};
use crate::render;

/// Runs one `claims` action.
pub fn claims(cli: &Cli, action: &ClaimsAction) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    match action {
        ClaimsAction::List { subject, all } => {
            let history = if *all {
                ClaimHistory::All
            } else {
                ClaimHistory::Current
            };
            let facts = memory.claims(&owner, subject, history)?;
            if cli.json {
                return render::json(&facts);
            }
            if facts.is_empty() {
                println!("no claims of {subject:?}");
            }
            for f in &facts {
                let action = f.edited.as_ref().map(|e| match e {
                    ClaimEdit::Retracted { .. } => "retracted",
                    ClaimEdit::Corrected { .. } => "corrected",
                });
                let state = match action {
                    Some(action) if !f.current => format!(" [{}, {action}]", f.lifecycle),
                    Some(action) => format!(" [{action}]"),
                    None if !f.current => format!(" [{}]", f.lifecycle),
                    None => String::new(),
                };
                // Only what was seen or stated reads as a plain fact.
                let state = match (f.epistemic_type, &f.condition) {
                    (EpistemicType::Conditional, Some(c)) => {
                        format!("{state} [conditional: {c:?}]")
                    }
                    (t, _) if t.is_plain_fact() => state,
                    (other, _) => format!("{state} [{other}]"),
                };
                let state = match f.reported.as_ref().map(|r| r.by.as_deref()) {
                    Some(Some(by)) => format!("{state} [reported by {by}]"),
                    Some(None) => format!("{state} [hearsay]"),
                    None => state,
                };
                println!(
                    "{} {} {}{} {}{state}",
                    f.id,
                    f.subject,
                    if f.polarity.as_deref() == Some("negative") {
                        "NOT "
                    } else {
                        ""
                    },
                    f.predicate.as_deref().unwrap_or("-"),
                    f.object.as_deref().unwrap_or("-"),
                );
                let when = f.event_time.unwrap_or(f.valid_from);
                match &f.evidence_quote {
                    Some(q) => println!("    {when} \"{q}\""),
                    None => println!("    {when} {}", f.content),
                }
                // What the owner changed, so a replacement's quote (the
                // words said, with the old value) does not read as a
                // contradiction.
                match &f.edited {
                    Some(ClaimEdit::Corrected {
                        from_object,
                        reason,
                        ..
                    }) => println!("    corrected from {from_object:?} by the owner: {reason}"),
                    Some(ClaimEdit::Retracted { reason, .. }) => {
                        println!("    retracted by the owner: {reason}")
                    }
                    None => {}
                }
            }
        }
        ClaimsAction::Retract { id, reason } => {
            let report = memory.retract_claim(&owner, parse_id(id)?, reason)?;
            print_edit(cli, &report, "retracted")?;
        }
        ClaimsAction::Correct { id, object, reason } => {
            let report = memory.correct_claim(&owner, parse_id(id)?, object, reason)?;
            print_edit(cli, &report, "corrected")?;
        }
    }
    Ok(())
}

fn print_edit(cli: &Cli, report: &ClaimEditReport, done: &str) -> Result<()> {
    if cli.json {
        return render::json(report);
    }
    println!(
        "{done} claim {}{} — record {} {}{}",
        report.claim,
        report
            .replacement
            .map(|r| format!(", replaced by {r}"))
            .unwrap_or_default(),
        report.kind,
        report.op_id,
        if report.replayed {
            " (already applied)"
        } else {
            ""
        }
    );
    println!("undo with `kith undo {}`", report.op_id);
    Ok(())
}
