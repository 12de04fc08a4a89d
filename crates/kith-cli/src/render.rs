//! Text and JSON output for people and scripts.

use std::io::{self, Write};

use anyhow::Result;
use kith::{IngestReceipt, Node, OwnerId, SearchHit, Stats, StoredEvent, StoredNode, WorkReport};
use serde::Serialize;

/// Prints `value` as pretty JSON on stdout.
pub fn json<T: Serialize>(value: &T) -> Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Shortens text to `max` characters on one line.
pub fn clip(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// `who` for a turn: the speaker's name, else the role.
pub fn who(speaker: Option<&str>, role: &str) -> String {
    match speaker {
        Some(s) => format!("{s} ({role})"),
        None => role.to_string(),
    }
}

/// One search hit on one line.
pub fn hit_line(hit: &SearchHit) -> String {
    let p = &hit.provenance;
    let when = p.event_time.unwrap_or(p.ingested_at).short();
    format!(
        "{:>2}. [{when}] {}: {}  (score {:.2}, event {})",
        hit.rank,
        who(p.speaker.as_deref(), p.role.as_str()),
        clip(&hit.content, 100),
        hit.score,
        p.event_id
    )
}

/// One event on one line.
pub fn event_line(e: &StoredEvent) -> String {
    let ev = &e.event;
    format!(
        "{:>6} {} [{}] {}{}: {}",
        e.seq,
        ev.id,
        ev.effective_time().short(),
        who(ev.speaker.as_ref().map(|s| s.as_str()), ev.role.as_str()),
        ev.session_id
            .as_ref()
            .map(|s| format!(" in {s}"))
            .unwrap_or_default(),
        match &e.tombstone {
            Some(t) => format!(
                "(forgotten {}: {})",
                t.forgotten_at.short(),
                clip(&t.reason, 60)
            ),
            None => clip(&ev.content, 80),
        }
    )
}

/// Every field of an event.
pub fn event_detail(e: &StoredEvent) {
    let ev = &e.event;
    println!("event       {}", ev.id);
    println!("seq         {}", e.seq);
    println!("owner       {}", ev.owner_id);
    println!("scope       {}", ev.scope);
    println!("session     {}", opt(ev.session_id.as_ref()));
    println!("role        {}", ev.role);
    println!("speaker     {}", opt(ev.speaker.as_ref()));
    println!("event time  {}", opt(ev.event_time.as_ref()));
    println!("ingested at {}", ev.ingested_at);
    println!("source id   {}", ev.source_id);
    println!("sha256      {}", ev.content_sha256);
    println!("checksum    {}", ev.checksum);
    if let Some(m) = &ev.metadata {
        println!("metadata    {m}");
    }
    if let Some(t) = &e.tombstone {
        // The content's SHA-256 above is of the erased text.
        println!("forgotten   {} ({})", t.forgotten_at, t.reason);
        println!("by record   {}", t.operation_id);
        println!("tombstone   {}", t.checksum);
        return;
    }
    println!("content\n{}", ev.content);
}

/// One node on one line.
pub fn node_line(stored: &StoredNode) -> String {
    let n = &stored.node;
    format!(
        "{:>6} {} {:<11} {:<10} {:.2} {}",
        stored.seq,
        n.id,
        n.node_type.as_str(),
        n.lifecycle.as_str(),
        n.confidence,
        clip(&n.content, 80)
    )
}

/// Every field of a node.
pub fn node_detail(n: &Node) {
    println!("node        {}", n.id);
    println!("type        {}", n.node_type);
    println!("owner       {}", n.owner_id);
    println!("scope       {}", n.scope);
    println!("session     {}", opt(n.session_id.as_ref()));
    println!("lifecycle   {}", n.lifecycle);
    println!("confidence  {:.2}", n.confidence);
    println!("epistemic   {}", n.epistemic_type);
    println!("source type {}", n.source_type);
    println!("valid from  {}", n.valid_from);
    println!("valid to    {}", opt(n.valid_to.as_ref()));
    let refs: Vec<String> = n.evidence_refs.iter().map(|r| r.to_string()).collect();
    println!("evidence    {}", refs.join(", "));
    if let Some(m) = &n.metadata {
        println!("metadata    {m}");
    }
    println!("content\n{}", n.content);
}

/// Counts, for people.
/// `location` is the line naming the pack or database, when there is one.
pub fn stats(s: &Stats, location: Option<&str>, owner: Option<&OwnerId>) {
    if let Some(line) = location {
        println!("{line}");
    }
    println!(
        "owner       {}",
        owner.map_or("(all owners)".to_string(), |o| o.to_string())
    );
    println!("events      {}", s.events);
    println!("sessions    {}", s.sessions);
    println!("nodes       {}", s.nodes());
    for (t, n) in &s.nodes_by_type {
        println!("  {:<10}{n}", t.as_str());
    }
    println!("edges       {}", s.edges);
    println!("journal     {}", s.operations);
    if owner.is_none() {
        println!("owners      {}", s.owners);
    }
}

fn opt<T: std::fmt::Display>(v: Option<&T>) -> String {
    v.map_or("-".to_string(), |v| v.to_string())
}

/// An ingest receipt, for people.
pub fn ingest_receipt(r: &IngestReceipt) {
    let state = if r.created {
        "ingested"
    } else {
        "already ingested"
    };
    println!("{state}: event {} ({})", r.event_id, r.status.as_str());
    if let Some(d) = &r.derivation {
        println!(
            "  {} entities new, {} reused; {} claims; {} edges; {} earlier claims superseded; {} claims dropped by grounding",
            d.entities_created, d.entities_reused, d.claims, d.edges, d.superseded, d.dropped
        );
    }
    if let Some(e) = &r.error {
        println!("  last error: {e}");
    }
}

/// An event's work, for people.
pub fn work_report(w: &WorkReport) {
    let i = &w.item;
    println!("event       {}", i.event_id);
    println!("status      {}", i.status.as_str());
    println!("attempts    {}", i.attempts);
    if i.status == kith::WorkStatus::Running {
        if let Some(ms) = i.lease_until_ms {
            // Until then no other process takes the item over (unless asked
            // to with `kith process --reclaim`).
            let until = kith::Timestamp::from_unix_millis(ms)
                .map(|t| t.to_rfc3339())
                .unwrap_or_else(|| format!("{ms} ms after the Unix epoch"));
            println!("lease until {until}");
        }
    }
    if let Some(code) = &i.reason_code {
        println!("reason      {code}");
    }
    if let Some(e) = &i.last_error {
        println!("last error  {e}");
    }
    if let Some(d) = &w.derivation {
        println!(
            "derivation  revision {}: {} entities new, {} reused, {} claims, {} edges, {} dropped",
            d.revision, d.entities_created, d.entities_reused, d.claims, d.edges, d.dropped
        );
        println!("plan sha256 {}", d.plan_checksum);
    }
    for d in &w.dropped {
        let what = match d.kind {
            kith::extract::grounding::ClaimKind::Fact => "facts",
            kith::extract::grounding::ClaimKind::Relationship => "relationships",
        };
        let reason = serde_json::to_value(&d.reason)
            .map(|v| v.to_string())
            .unwrap_or_default();
        println!("dropped     {what}[{}]: {reason}", d.index);
    }
    println!("journal     {}", w.journal.join(", "));
}

/// An entity's claims and what bound them, for people.
pub fn entity_claims(claims: &[(Node, Option<String>)]) {
    for (c, basis) in claims {
        let m = c.metadata.as_ref();
        let field = |k: &str| {
            m.and_then(|m| m.get(k))
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        let negative = if field("polarity") == "negative" {
            "NOT "
        } else {
            ""
        };
        let bound = basis
            .as_ref()
            .map(|b| format!(", bound by {b}"))
            .unwrap_or_default();
        println!(
            "  [{}] {negative}{} {} ({}{bound}) \"{}\"",
            c.lifecycle.as_str(),
            field("predicate"),
            field("object"),
            c.valid_from.date(),
            clip(&c.content, 70)
        );
    }
}
