//! `kith forget`: one forget request, its report, and what was verified.

use anyhow::Result;
use kith::{ForgetReport, ForgetRequest, ForgetSelector, OwnerId, SessionId, Timestamp};

use crate::args::{Cli, ForgetArgs};
use crate::cmd::{open, parse_id};
use crate::render;

/// Runs the request; returns false when the verification found something
/// left (the exit status is then a failure).
pub fn forget(cli: &Cli, a: &ForgetArgs) -> Result<bool> {
    let selector = if let Some(id) = &a.event {
        ForgetSelector::Event(parse_id(id)?)
    } else if let Some(source) = &a.source_id {
        ForgetSelector::SourceId(kith::SourceId::new(source)?)
    } else if let Some(session) = &a.session {
        ForgetSelector::Session(SessionId::new(session)?)
    } else if let Some(before) = &a.before {
        ForgetSelector::Before(Timestamp::parse("--before", before)?)
    } else {
        ForgetSelector::Owner
    };
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let report = memory.forget(
        &owner,
        &ForgetRequest {
            selector,
            reason: a.reason.clone(),
            dry_run: a.dry_run,
        },
    )?;
    let clean = report.verification.as_ref().is_none_or(|v| v.clean())
        && (report.compacted
            || (report.operation_id.is_none() && report.already_forgotten.is_empty()));
    if cli.json {
        render::json(&report)?;
    } else {
        print(&report);
    }
    Ok(clean)
}

fn print(r: &ForgetReport) {
    let verb = if r.dry_run { "would forget" } else { "forgot" };
    println!(
        "{verb} {} event(s){}",
        r.events.len(),
        if r.already_forgotten.is_empty() {
            String::new()
        } else {
            format!(" ({} already forgotten)", r.already_forgotten.len())
        }
    );
    for id in &r.events {
        println!("  event {id}");
    }
    let (nodes, updated) = (r.nodes_deleted.len(), r.nodes_updated.len());
    let scrubbed = r.journal_records_scrubbed.len();
    if r.dry_run {
        println!(
            "would remove {nodes} node(s), keep {updated} with less evidence, scrub {scrubbed} journal record(s); nothing was written"
        );
        return;
    }
    println!(
        "removed {nodes} node(s), {} edge(s), {} vector(s), {} work item(s); kept {updated} node(s) with less evidence; scrubbed {scrubbed} journal record(s)",
        r.edges_deleted, r.vectors_deleted, r.work_items_deleted
    );
    if !r.notes_reembedded.is_empty() {
        println!(
            "embedded {} short turn(s) again without the erased turn before them",
            r.notes_reembedded.len()
        );
    }
    if let Some(op) = r.operation_id {
        println!("journal record FORGOTTEN {op}");
    }
    for step in &r.compaction {
        println!("compacted: {step}");
    }
    if !r.compacted && !r.compaction.is_empty() {
        println!(
            "NOT COMPACTED: the forget is done, but storage may still hold the erased bytes; run the same forget again to compact"
        );
    }
    if let Some(v) = &r.verification {
        println!(
            "verified: {} tombstone(s) check out; {} node(s) still cite an erased event; {} journal record(s) still name or quote one",
            v.tombstones_verified, v.nodes_citing_erased, v.journal_records_naming_erased
        );
        if v.pack_files_scanned.is_empty() {
            println!(
                "verified: rows through the store only (a database server's files are not kith's to read)"
            );
        } else {
            println!(
                "verified: {} erased text(s) searched in every byte of {} pack file(s) ({} bytes: {}): {} found",
                v.texts_searched,
                v.pack_files_scanned.len(),
                v.pack_bytes_scanned,
                v.pack_files_scanned.join(", "),
                v.texts_found_in_pack
            );
        }
        if !v.clean() {
            println!("NOT ERASED: something of the forgotten messages is still there (see above)");
        }
    }
}
