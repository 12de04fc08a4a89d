//! `GET /ui`: the owner's memory at a glance: counts, recent sessions,
//! the last messages stored, the extraction queue and its failures, and
//! what the organizer and the owner changed.

use std::fmt::Write;

use axum::extract::State;
use axum::response::Html;
use kith::{EventQuery, Memory, NodeType, OperationKind, StoredEvent, WorkItem, WorkStatus};

use super::html::{clip, esc, layout, url_value, when, Nav};
use super::{run, ConsoleError, PageResult, Viewer};
use crate::auth::Owner;
use crate::routes::AppState;

/// Recent messages scanned for the "recent sessions" list.
const RECENT_EVENTS: usize = 300;
/// Work items counted at most (the count says "N+" beyond).
const QUEUE_SCAN: usize = 1000;

/// What the overview shows.
struct Overview {
    stats: kith::Stats,
    recent: Vec<StoredEvent>,
    queue: Vec<WorkItem>,
    journal_counts: Vec<(OperationKind, u64)>,
}

/// The journal kinds the overview counts.
const COUNTED: [(OperationKind, &str); 7] = [
    (OperationKind::OrganizerMerged, "merges"),
    (OperationKind::AliasProposed, "alias proposals"),
    (OperationKind::AliasProposalAccepted, "accepted"),
    (OperationKind::AliasProposalRejected, "rejected"),
    (OperationKind::Undo, "undos"),
    (OperationKind::Forgotten, "forgets"),
    (OperationKind::IdentityCorrected, "corrections"),
];

fn load(m: &Memory, owner: &Owner) -> Result<Overview, ConsoleError> {
    let stats = m.stats(Some(&owner.0))?;
    let recent = m.events(&EventQuery {
        owner: Some(owner.0.clone()),
        newest_first: true,
        limit: RECENT_EVENTS,
        ..EventQuery::default()
    })?;
    let queue = m.owner_work_items(
        &owner.0,
        &[WorkStatus::Pending, WorkStatus::Running, WorkStatus::Failed],
        QUEUE_SCAN,
    )?;
    let mut journal_counts = Vec::new();
    for (kind, _) in COUNTED {
        journal_counts.push((kind, m.journal_count(&owner.0, kind)?));
    }
    Ok(Overview {
        stats,
        recent,
        queue,
        journal_counts,
    })
}

/// `GET /ui`.
pub async fn page(State(state): State<AppState>, viewer: Viewer) -> PageResult {
    let owner = viewer.owner.clone();
    let o = run(&state, move |m| load(m, &owner)).await?;
    let mut body = String::new();
    cards(&mut body, &o);
    sessions(&mut body, &o.recent);
    queue(&mut body, &o.queue);
    let _ = write!(body, "<h2>Last messages stored</h2>");
    super::conversation::turn_table(&mut body, o.recent.iter().take(10));
    organizer(&mut body, &o.journal_counts);
    Ok(Html(layout(
        "Overview",
        Nav::Overview,
        Some(&viewer.chrome()),
        &body,
    )))
}

fn cards(out: &mut String, o: &Overview) {
    let node_count = |keep: fn(NodeType) -> bool| {
        o.stats
            .nodes_by_type
            .iter()
            .filter(|(t, _)| keep(*t))
            .map(|(_, n)| *n)
            .sum::<u64>()
    };
    let figures = [
        (o.stats.events, "messages", "events"),
        (o.stats.sessions, "sessions", "sessions"),
        (
            node_count(|t| t == NodeType::Entity),
            "people and things",
            "entities",
        ),
        (
            node_count(super::conversation::is_claim),
            "claims",
            "claims",
        ),
        (o.stats.edges, "links", "edges"),
        (o.stats.operations, "journal records", "journal"),
    ];
    out.push_str(r#"<div class="cards">"#);
    for (n, label, id) in figures {
        let _ = write!(
            out,
            r#"<div class="card" id="count-{id}"><b>{n}</b><span>{label}</span></div>"#
        );
    }
    out.push_str("</div>");
}

/// Distinct sessions among the recent messages, newest first, with how
/// many of those messages each has and its latest time.
fn sessions(out: &mut String, recent: &[StoredEvent]) {
    let mut seen: Vec<(&str, usize, &StoredEvent)> = Vec::new();
    for e in recent {
        let Some(s) = e.event.session_id.as_ref() else {
            continue;
        };
        match seen.iter_mut().find(|(id, _, _)| *id == s.as_str()) {
            Some(entry) => entry.1 += 1,
            None => seen.push((s.as_str(), 1, e)),
        }
    }
    out.push_str("<h2>Recent sessions</h2>");
    if seen.is_empty() {
        out.push_str(r#"<p class="muted">No session yet.</p>"#);
        return;
    }
    out.push_str("<table><tr><th>session</th><th>recent messages</th><th>last message</th></tr>");
    for (id, n, last) in seen.iter().take(10) {
        let time = last
            .event
            .event_time
            .as_ref()
            .unwrap_or(&last.event.ingested_at);
        let _ = write!(
            out,
            r#"<tr><td><a href="/ui/conversation?session={}">{}</a></td><td>{n}</td><td>{}</td></tr>"#,
            esc(&url_value(id)),
            esc(id),
            esc(&when(time))
        );
    }
    out.push_str(r#"</table><p><a href="/ui/conversation">All sessions →</a></p>"#);
}

fn queue(out: &mut String, items: &[WorkItem]) {
    let count = |s: WorkStatus| items.iter().filter(|i| i.status == s).count();
    let more = if items.len() >= QUEUE_SCAN { "+" } else { "" };
    let _ = write!(
        out,
        r#"<h2>Extraction</h2><p id="queue">Queue: {} pending, {} running, {} failed{more}.</p>"#,
        count(WorkStatus::Pending),
        count(WorkStatus::Running),
        count(WorkStatus::Failed)
    );
    let failed: Vec<&WorkItem> = items
        .iter()
        .filter(|i| i.status == WorkStatus::Failed)
        .take(10)
        .collect();
    if failed.is_empty() {
        return;
    }
    out.push_str(
        "<table><tr><th>message</th><th>attempts</th><th>last error</th><th>since</th></tr>",
    );
    for item in failed {
        let _ = write!(
            out,
            r#"<tr><td><a href="/ui/turns/{id}">{short}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            item.attempts,
            esc(&clip(item.last_error.as_deref().unwrap_or("—"), 200)),
            esc(&when(&item.updated_at)),
            id = item.event_id,
            short = super::html::short(&item.event_id),
        );
    }
    out.push_str(
        r#"</table><p class="muted">Retry them with <code>kith process --retry-failed</code> once the cause is fixed.</p>"#,
    );
}

fn organizer(out: &mut String, counts: &[(OperationKind, u64)]) {
    out.push_str(r#"<h2>Organizer and reviews</h2><table id="journal-counts"><tr>"#);
    for (_, label) in COUNTED {
        let _ = write!(out, "<th>{label}</th>");
    }
    out.push_str("</tr><tr>");
    for (kind, n) in counts {
        let _ = write!(
            out,
            r#"<td><a href="/ui/journal?kind={}">{n}</a></td>"#,
            kind.as_str()
        );
    }
    out.push_str("</tr></table>");
}
