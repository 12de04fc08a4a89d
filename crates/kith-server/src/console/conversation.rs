//! `GET /ui/conversation`: the owner's sessions, one session as a
//! timeline of turns (speaker, role, time, and what was derived from each:
//! entities and claims), and a search box; `GET /ui/turns/{id}`: one turn
//! with everything linked to it, and the forms to forget it or its session.

use std::fmt::Write;

use axum::extract::State;
use axum::response::Html;
use kith::{EventQuery, Memory, Node, NodeQuery, NodeType, SearchRequest, SessionId, StoredEvent};
use serde::Deserialize;
use uuid::Uuid;

use super::html::{
    clip, csrf_field, esc, layout, next_link, session_link, short, url_value, when, Nav,
};
use super::{run, ConsoleError, IdPath, PageResult, Params, Viewer, PAGE};
use crate::auth::Owner;
use crate::routes::AppState;

/// Messages scanned per page of the session list.
const SESSION_SCAN: usize = 1000;
/// Search hits shown.
const HITS: usize = 50;

/// `GET /ui/conversation` parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConversationQuery {
    /// A session to show as a timeline.
    pub session: Option<String>,
    /// The timeline's next page: turns after this position.
    pub after: Option<i64>,
    /// The session list's next page: sessions of messages at or before
    /// this position.
    pub before: Option<i64>,
    /// Search text.
    pub q: Option<String>,
}

/// `GET /ui/conversation`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Params(q): Params<ConversationQuery>,
) -> PageResult {
    let owner = viewer.owner.clone();
    let search = q.q.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let mut body = search_form(search.unwrap_or_default(), q.session.as_deref());
    let title;
    if let Some(text) = search {
        title = "Search".to_string();
        let (text, session) = (text.to_string(), q.session.clone());
        let hits = run(&state, move |m| {
            let mut req = SearchRequest::new(owner.0.as_str(), &text)?;
            req.limit = HITS;
            if let Some(s) = session {
                req.filters.session = Some(SessionId::new(s)?);
            }
            Ok(m.search(&req)?)
        })
        .await?;
        search_results(&mut body, &hits);
    } else if let Some(session) = q.session.clone() {
        title = format!("Session {session}");
        let after = q.after.unwrap_or(0);
        let (turns, derived) = run(&state, move |m| timeline(m, &owner, &session, after)).await?;
        let sid = q.session.as_deref().unwrap_or_default();
        if turns.is_empty() && after == 0 {
            return Err(ConsoleError::new(
                axum::http::StatusCode::NOT_FOUND,
                format!("There is no session {sid:?} in this memory."),
            ));
        }
        let _ = write!(
            body,
            r#"<form method="post" action="/ui/forget" class="inline">{}<input type="hidden" name="session" value="{}"><input type="text" name="reason" placeholder="why forget this session" required><button type="submit" class="danger" id="forget-session">Forget this session…</button></form>"#,
            csrf_field(&viewer.csrf),
            esc(sid)
        );
        for (turn, nodes) in turns.iter().zip(&derived) {
            turn_article(&mut body, turn, nodes);
        }
        let next = (turns.len() == PAGE).then(|| {
            format!(
                "/ui/conversation?session={}&after={}",
                url_value(sid),
                turns.last().map(|t| t.seq).unwrap_or_default()
            )
        });
        body.push_str(&next_link(next));
    } else {
        title = "Conversation".to_string();
        let before = q.before;
        let (list, next) = run(&state, move |m| session_list(m, &owner, before)).await?;
        session_table(&mut body, &list);
        body.push_str(&next_link(
            next.map(|seq| format!("/ui/conversation?before={seq}")),
        ));
    }
    Ok(Html(layout(
        &title,
        Nav::Conversation,
        Some(&viewer.chrome()),
        &body,
    )))
}

fn search_form(text: &str, session: Option<&str>) -> String {
    let scope = session
        .map(|s| {
            format!(
                r#"<input type="hidden" name="session" value="{}"><span class="muted">in session {}</span>"#,
                esc(s),
                esc(s)
            )
        })
        .unwrap_or_default();
    format!(
        r#"<form method="get" action="/ui/conversation" class="inline" role="search"><input type="search" name="q" id="search" class="wide" value="{}" placeholder="Search what was said (BM25)">{scope}<button type="submit" id="search-go">Search</button></form>"#,
        esc(text)
    )
}

/// A session list entry: id, messages seen in this range, newest turn.
struct SessionRow {
    id: String,
    messages: usize,
    last: StoredEvent,
}

/// The sessions of the owner's messages at or before `before` (newest
/// first), from at most [`SESSION_SCAN`] messages; and where the next page
/// starts when older messages remain.
fn session_list(
    m: &Memory,
    owner: &Owner,
    before: Option<i64>,
) -> Result<(Vec<SessionRow>, Option<i64>), ConsoleError> {
    let events = m.events(&EventQuery {
        owner: Some(owner.0.clone()),
        through_seq: before,
        newest_first: true,
        limit: SESSION_SCAN,
        ..EventQuery::default()
    })?;
    let mut rows: Vec<SessionRow> = Vec::new();
    for e in &events {
        let Some(s) = e.event.session_id.as_ref() else {
            continue;
        };
        match rows.iter_mut().find(|r| r.id == s.as_str()) {
            Some(r) => r.messages += 1,
            None => rows.push(SessionRow {
                id: s.as_str().to_string(),
                messages: 1,
                last: e.clone(),
            }),
        }
    }
    let next = (events.len() == SESSION_SCAN)
        .then(|| events.last().map(|e| e.seq - 1))
        .flatten();
    Ok((rows, next))
}

fn session_table(out: &mut String, rows: &[SessionRow]) {
    if rows.is_empty() {
        out.push_str(r#"<p class="muted">No session here.</p>"#);
        return;
    }
    out.push_str(
        r#"<table id="sessions"><tr><th>session</th><th>messages</th><th>last message</th><th>said</th></tr>"#,
    );
    for r in rows {
        let e = &r.last.event;
        let _ = write!(
            out,
            r#"<tr><td><a href="/ui/conversation?session={}">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(&url_value(&r.id)),
            esc(&r.id),
            r.messages,
            esc(&when(e.event_time.as_ref().unwrap_or(&e.ingested_at))),
            esc(&clip(&e.content, 120)),
        );
    }
    out.push_str("</table>");
}

/// A page of a session's turns and, for each, the nodes derived from it
/// (claims and the entities it introduced; its own note left out).
fn timeline(
    m: &Memory,
    owner: &Owner,
    session: &str,
    after: i64,
) -> Result<(Vec<StoredEvent>, Vec<Vec<Node>>), ConsoleError> {
    let turns = m.events(&EventQuery {
        owner: Some(owner.0.clone()),
        session: Some(SessionId::new(session)?),
        after_seq: after,
        limit: PAGE,
        ..EventQuery::default()
    })?;
    let mut derived = Vec::with_capacity(turns.len());
    for t in &turns {
        derived.push(derived_nodes(m, owner, t.event.id)?);
    }
    Ok((turns, derived))
}

/// Whether nodes of type `t` are claims (facts, preferences, decisions,
/// tasks, …): neither entities nor a message's own note or a summary.
pub fn is_claim(t: NodeType) -> bool {
    !matches!(t, NodeType::Entity | NodeType::Note | NodeType::Summary)
}

/// The entities and claims whose first evidence is `event`.
pub fn derived_nodes(m: &Memory, owner: &Owner, event: Uuid) -> Result<Vec<Node>, ConsoleError> {
    Ok(m.nodes(&NodeQuery {
        owner: Some(owner.0.clone()),
        event_id: Some(event),
        limit: 100,
        ..NodeQuery::default()
    })?
    .into_iter()
    .map(|s| s.node)
    .filter(|n| n.node_type == NodeType::Entity || is_claim(n.node_type))
    .collect())
}

/// Who said a turn and when: `Maya · user · 2025-03-04 19:02`.
fn turn_meta(e: &StoredEvent) -> String {
    let ev = &e.event;
    format!(
        r#"<b class="speaker">{}</b> · <span class="role">{}</span> · <time>{}</time>"#,
        esc(ev
            .speaker
            .as_ref()
            .map(|s| s.as_str())
            .unwrap_or("(no speaker)")),
        ev.role.as_str(),
        esc(&when(ev.event_time.as_ref().unwrap_or(&ev.ingested_at))),
    )
}

/// A turn's text, or what is left of a forgotten one.
fn turn_text(e: &StoredEvent) -> String {
    match &e.tombstone {
        Some(t) => format!(
            r#"<div class="text muted forgotten">Forgotten: {}</div>"#,
            esc(&t.reason)
        ),
        None => format!(r#"<div class="text">{}</div>"#, esc(&e.event.content)),
    }
}

/// Tags linking to nodes.
pub fn node_tags(out: &mut String, nodes: &[Node]) {
    for n in nodes {
        let _ = write!(
            out,
            r#"<a class="tag {}" href="/ui/nodes/{}" title="{}">{}</a>"#,
            n.lifecycle.as_str(),
            n.id,
            n.node_type.as_str(),
            esc(&clip(&n.content, 80))
        );
    }
}

fn turn_article(out: &mut String, e: &StoredEvent, derived: &[Node]) {
    let _ = write!(
        out,
        r#"<article class="turn role-{}" id="turn-{}"><div class="meta">{} · <a href="/ui/turns/{}">turn {}</a></div>{}"#,
        e.event.role.as_str(),
        e.event.id,
        turn_meta(e),
        e.event.id,
        short(&e.event.id),
        turn_text(e),
    );
    let (entities, claims): (Vec<Node>, Vec<Node>) = derived
        .iter()
        .cloned()
        .partition(|n| n.node_type == NodeType::Entity);
    if !derived.is_empty() {
        out.push_str(r#"<div class="derived">"#);
        if !entities.is_empty() {
            out.push_str("entities: ");
            node_tags(out, &entities);
        }
        if !claims.is_empty() {
            out.push_str(" claims: ");
            node_tags(out, &claims);
        }
        out.push_str("</div>");
    }
    out.push_str("</article>");
}

/// A compact table of turns (the overview's last messages).
pub fn turn_table<'a>(out: &mut String, turns: impl Iterator<Item = &'a StoredEvent>) {
    out.push_str("<table><tr><th>when</th><th>who</th><th>session</th><th>said</th></tr>");
    for e in turns {
        let ev = &e.event;
        let session = ev
            .session_id
            .as_ref()
            .map(|s| session_link(s.as_str()))
            .unwrap_or_else(|| "—".into());
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td>{} ({})</td><td>{session}</td><td><a href="/ui/turns/{}">{}</a></td></tr>"#,
            esc(&when(ev.event_time.as_ref().unwrap_or(&ev.ingested_at))),
            esc(ev.speaker.as_ref().map(|s| s.as_str()).unwrap_or("—")),
            ev.role.as_str(),
            ev.id,
            esc(&clip(&ev.content, 120)),
        );
    }
    out.push_str("</table>");
}

fn search_results(out: &mut String, hits: &[kith::SearchHit]) {
    let _ = write!(
        out,
        r#"<p class="muted" id="hit-count">{} hits</p>"#,
        hits.len()
    );
    out.push_str(r#"<table id="hits"><tr><th>#</th><th>score</th><th>who, when</th><th>found</th><th>session</th></tr>"#);
    for h in hits {
        let p = &h.provenance;
        let session = p
            .session_id
            .as_ref()
            .map(|s| session_link(s.as_str()))
            .unwrap_or_else(|| "—".into());
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td>{:.2}</td><td>{} ({}) {}</td><td><span class="tag">{}</span> <a class="hit" href="/ui/turns/{}">{}</a></td><td>{session}</td></tr>"#,
            h.rank,
            h.score,
            esc(p.speaker.as_deref().unwrap_or("—")),
            p.role.as_str(),
            esc(&when(p.event_time.as_ref().unwrap_or(&p.ingested_at))),
            h.node_type.as_str(),
            p.event_id,
            esc(&clip(&h.content, 200)),
        );
    }
    out.push_str("</table>");
}

/// `GET /ui/turns/{id}`: one turn, what came from it, and the forms to
/// forget it or its session. Another owner's turn is 404.
pub async fn turn(State(state): State<AppState>, viewer: Viewer, IdPath(id): IdPath) -> PageResult {
    let owner = viewer.owner.clone();
    let (event, derived, linked) = run(&state, move |m| {
        let event = m.event(&owner.0, id)?;
        let derived = derived_nodes(m, &owner, id)?;
        // The turn's note and what links to it (the entities it mentions).
        let note = m
            .nodes(&NodeQuery {
                owner: Some(owner.0.clone()),
                event_id: Some(id),
                node_types: vec![NodeType::Note],
                limit: 1,
                ..NodeQuery::default()
            })?
            .into_iter()
            .next();
        let linked = match note {
            Some(n) => m.node_view(&owner.0, n.node.id)?.neighbours,
            None => Vec::new(),
        };
        Ok((event, derived, linked))
    })
    .await?;
    let mut body = String::new();
    turn_article(&mut body, &event, &derived);
    if let Some(s) = &event.event.session_id {
        let _ = write!(
            body,
            r#"<p>In session <a href="/ui/conversation?session={}">{}</a>.</p>"#,
            esc(&url_value(s.as_str())),
            esc(s.as_str())
        );
    }
    let mentioned: Vec<Node> = linked
        .into_iter()
        .filter(|n| !derived.iter().any(|d| d.id == n.id))
        .collect();
    if !mentioned.is_empty() {
        body.push_str(r#"<div class="derived">also linked: "#);
        node_tags(&mut body, &mentioned);
        body.push_str("</div>");
    }
    if event.tombstone.is_none() {
        let _ = write!(
            body,
            r#"<h2>Forget</h2><form method="post" action="/ui/forget" class="inline">{}<input type="hidden" name="event" value="{}"><input type="text" name="reason" id="forget-reason" placeholder="why (kept in the journal)" required><button type="submit" class="danger" id="forget-turn">Forget this turn…</button></form><p class="muted">You will see what goes before anything is erased.</p>"#,
            csrf_field(&viewer.csrf),
            event.event.id
        );
    }
    Ok(Html(layout(
        &format!("Turn {}", short(&event.event.id)),
        Nav::Conversation,
        Some(&viewer.chrome()),
        &body,
    )))
}
