//! People and things: `GET /ui/entities` (the owner's entities, paged, or
//! found by name) and `GET /ui/nodes/{id}` (one node: an entity with its
//! aliases, its current and superseded claims with the evidence quote and
//! the turn each came from, and its neighbourhood drawn; a claim with its
//! subject, evidence and the forms to retract or correct it).

use std::fmt::Write;

use axum::extract::State;
use axum::response::Html;
use kith::{EdgeType, Memory, Node, NodeQuery, NodeType, NodeView, SearchRequest};
use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use super::conversation::{is_claim, node_tags};
use super::graph;
use super::html::{clip, csrf_field, esc, layout, next_link, session_link, short, when, Nav};
use super::{run, ConsoleError, IdPath, PageResult, Params, Viewer, PAGE};
use crate::auth::Owner;
use crate::routes::AppState;

/// `GET /ui/entities` parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityQuery {
    /// Find entities by name (BM25).
    pub q: Option<String>,
    /// The next page: entities after this position.
    pub after: Option<i64>,
}

/// `GET /ui/entities`.
pub async fn list(
    State(state): State<AppState>,
    viewer: Viewer,
    Params(q): Params<EntityQuery>,
) -> PageResult {
    let owner = viewer.owner.clone();
    let text = q.q.clone().unwrap_or_default().trim().to_string();
    let after = q.after.unwrap_or(0);
    let search = text.clone();
    let (entities, next) = run(&state, move |m| {
        if search.is_empty() {
            let page = m.nodes(&NodeQuery {
                owner: Some(owner.0.clone()),
                node_types: vec![NodeType::Entity],
                after_seq: after,
                limit: PAGE,
                ..NodeQuery::default()
            })?;
            let next = (page.len() == PAGE)
                .then(|| page.last().map(|n| n.seq))
                .flatten();
            Ok((page.into_iter().map(|s| s.node).collect::<Vec<_>>(), next))
        } else {
            let mut req = SearchRequest::new(owner.0.as_str(), &search)?;
            req.filters.node_types = vec![NodeType::Entity];
            req.limit = PAGE;
            let ids: Vec<Uuid> = m.search(&req)?.into_iter().map(|h| h.node_id).collect();
            let mut nodes = Vec::new();
            for id in ids {
                nodes.push(m.node(&owner.0, id)?);
            }
            Ok((nodes, None))
        }
    })
    .await?;
    let mut body = format!(
        r#"<form method="get" action="/ui/entities" class="inline" role="search"><input type="search" name="q" id="entity-search" value="{}" placeholder="A name"><button type="submit" id="entity-go">Find</button></form>"#,
        esc(&text)
    );
    if entities.is_empty() {
        body.push_str(r#"<p class="muted">No entity here.</p>"#);
    } else {
        body.push_str(r#"<table id="entities"><tr><th>name</th><th>kind</th><th>since</th><th>state</th></tr>"#);
        for e in &entities {
            let kind = e
                .metadata
                .as_ref()
                .and_then(|m| m.get("entity_type"))
                .and_then(Value::as_str)
                .unwrap_or("—");
            let _ = write!(
                body,
                r#"<tr><td><a class="entity" href="/ui/nodes/{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                e.id,
                esc(&e.content),
                esc(kind),
                esc(&when(&e.valid_from)),
                e.lifecycle.as_str()
            );
        }
        body.push_str("</table>");
    }
    body.push_str(&next_link(
        next.map(|seq| format!("/ui/entities?after={seq}")),
    ));
    Ok(Html(layout(
        "People and things",
        Nav::Entities,
        Some(&viewer.chrome()),
        &body,
    )))
}

/// `GET /ui/nodes/{id}` parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodePageQuery {
    /// What the last form did (`retracted`, `corrected`).
    pub notice: Option<String>,
}

/// What a node page shows.
struct NodePage {
    view: NodeView,
    /// An entity's claims, current first (with the turn each came from).
    claims: Vec<Node>,
}

fn load(m: &Memory, owner: &Owner, id: Uuid) -> Result<NodePage, ConsoleError> {
    let view = m.node_view(&owner.0, id)?;
    let claims = claims_of(&view);
    Ok(NodePage { view, claims })
}

/// An entity's claims among its neighbourhood (the targets of its
/// `HAS_FACT` links), current first, newest first. The neighbourhood is
/// bounded ([`NodeView::truncated`] says when links were left out), so
/// the page stays small for an entity with thousands of claims.
pub fn claims_of(view: &NodeView) -> Vec<Node> {
    let id = view.node.id;
    let mut claims: Vec<Node> = view
        .neighbours
        .iter()
        .filter(|n| {
            view.edges.iter().any(|e| {
                e.edge_type == EdgeType::HasFact && e.source_id == id && e.target_id == n.id
            })
        })
        .cloned()
        .collect();
    claims.sort_by(|a, b| {
        b.lifecycle
            .is_active()
            .cmp(&a.lifecycle.is_active())
            .then(b.valid_from.cmp(&a.valid_from))
    });
    claims
}

/// `GET /ui/nodes/{id}`: another owner's node is 404.
pub async fn node(
    State(state): State<AppState>,
    viewer: Viewer,
    IdPath(id): IdPath,
    Params(q): Params<NodePageQuery>,
) -> PageResult {
    let owner = viewer.owner.clone();
    let page = run(&state, move |m| load(m, &owner, id)).await?;
    let n = &page.view.node;
    let mut body = String::new();
    match q.notice.as_deref() {
        Some("retracted") => body.push_str(r#"<p class="notice" id="notice">The claim was retracted. Undo it from the journal.</p>"#),
        Some("corrected") => body.push_str(r#"<p class="notice" id="notice">This claim replaces the old value. Undo it from the journal.</p>"#),
        Some("rebound") => body.push_str(r#"<p class="notice" id="notice">The claim is now about this entity. Undo it from the journal.</p>"#),
        _ => {}
    }
    let _ = write!(
        body,
        r#"<p class="muted">{} · {} · since {}{} · <a href="/ui/journal?node={}">journal</a></p>"#,
        n.node_type.as_str(),
        n.lifecycle.as_str(),
        esc(&when(&n.valid_from)),
        n.valid_to
            .as_ref()
            .map(|t| format!(" until {}", esc(&when(t))))
            .unwrap_or_default(),
        n.id
    );
    if n.node_type == NodeType::Entity {
        entity(&mut body, &page);
    } else if is_claim(n.node_type) {
        claim(&mut body, &page.view, &viewer.csrf);
    } else {
        let _ = write!(
            body,
            r#"<div class="turn"><div class="text">{}</div></div>"#,
            esc(&n.content)
        );
    }
    evidence(&mut body, &page.view);
    let labelled: Vec<(Node, String)> = page
        .view
        .neighbours
        .iter()
        .map(|nb| (nb.clone(), link_label(&page.view, nb.id)))
        .collect();
    body.push_str("<h2>Neighbourhood</h2>");
    body.push_str(&graph::neighbourhood(n, &labelled));
    if labelled.len() > graph::MAX_DRAWN || page.view.truncated {
        body.push_str(r#"<div class="derived">all linked: "#);
        node_tags(&mut body, &page.view.neighbours);
        body.push_str("</div>");
    }
    Ok(Html(layout(
        &clip(&n.content, 80),
        Nav::Entities,
        Some(&viewer.chrome()),
        &body,
    )))
}

/// The type of the (first) link between the page's node and `other`.
fn link_label(view: &NodeView, other: Uuid) -> String {
    view.edges
        .iter()
        .find(|e| e.source_id == other || e.target_id == other)
        .map(|e| e.edge_type.as_str().to_string())
        .unwrap_or_default()
}

fn meta_str<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.metadata.as_ref()?.get(key)?.as_str()
}

fn entity(out: &mut String, page: &NodePage) {
    let view = &page.view;
    // Aliases: RELATES_TO links with `relation: alias`; verified ones lead
    // to a neighbour, unverified ones wait in the inbox.
    let mut aliases = String::new();
    for e in view
        .edges
        .iter()
        .filter(|e| e.edge_type == EdgeType::RelatesTo && e.is_open())
    {
        let meta = |k: &str| e.metadata.as_ref().and_then(|m| m.get(k));
        if meta("relation").and_then(Value::as_str) != Some("alias") {
            continue;
        }
        let other = if e.source_id == view.node.id {
            e.target_id
        } else {
            e.source_id
        };
        let verified = meta("identity_verified").and_then(Value::as_bool) == Some(true);
        let name = view
            .neighbours
            .iter()
            .find(|n| n.id == other)
            .map(|n| esc(&n.content))
            .unwrap_or_else(|| format!("entity {}", short(&other)));
        if verified {
            let _ = write!(
                aliases,
                r#"<a class="tag alias" href="/ui/nodes/{other}">{name}</a>"#
            );
        } else {
            let _ = write!(
                aliases,
                r#"<a class="tag proposed" href="/ui/inbox" title="an unverified proposal: review it in the inbox">{name}?</a>"#
            );
        }
    }
    if let Some(kind) = meta_str(&view.node, "entity_type") {
        let _ = write!(out, r#"<p>Kind: {}</p>"#, esc(kind));
    }
    let _ = write!(
        out,
        r#"<p id="aliases">Aliases: {}</p>"#,
        if aliases.is_empty() {
            "none".to_string()
        } else {
            aliases
        }
    );
    let (current, past): (Vec<&Node>, Vec<&Node>) =
        page.claims.iter().partition(|c| c.lifecycle.is_active());
    if view.truncated {
        out.push_str(r#"<p class="muted">This entity has more links than a page shows; the claims below are some of them (<code>kith claims list --subject NAME --all</code> lists every one).</p>"#);
    }
    out.push_str(r#"<h2>Current claims</h2>"#);
    claim_table(out, &current, "current-claims");
    out.push_str(r#"<h2>Superseded and retracted</h2>"#);
    claim_table(out, &past, "past-claims");
}

fn claim_table(out: &mut String, claims: &[&Node], id: &str) {
    if claims.is_empty() {
        let _ = write!(out, r#"<p class="muted" id="{id}">None.</p>"#);
        return;
    }
    let _ = write!(
        out,
        r#"<table id="{id}"><tr><th>claim</th><th>evidence</th><th>from</th><th>valid</th></tr>"#
    );
    for c in claims {
        let quote = meta_str(c, "evidence_quote").unwrap_or("—");
        let turn = c
            .evidence_refs
            .first()
            .map(|e| format!(r#"<a href="/ui/turns/{e}">turn {}</a>"#, short(e)))
            .unwrap_or_else(|| "—".into());
        let state = match c.superseded_by {
            Some(by) => format!(r#" <a class="muted" href="/ui/nodes/{by}">superseded</a>"#),
            None if !c.lifecycle.is_active() => {
                format!(" <span class=\"muted\">{}</span>", c.lifecycle.as_str())
            }
            None => String::new(),
        };
        // Only what was seen or stated reads as a plain fact.
        let state = if c.epistemic_type.is_plain_fact() {
            state
        } else {
            format!(
                "{state} <span class=\"muted epistemic\">{}</span>",
                c.epistemic_type.as_str()
            )
        };
        // Someone else's words, as the author reported them.
        let reported = c.metadata.as_ref().and_then(|m| m.get("reported"));
        let state = match reported.map(|r| r["by"].as_str()) {
            Some(Some(by)) => format!(
                "{state} <span class=\"muted reported\">reported by {}</span>",
                esc(by)
            ),
            Some(None) => format!("{state} <span class=\"muted reported\">hearsay</span>"),
            None => state,
        };
        let _ = write!(
            out,
            r#"<tr class="claim"><td><a href="/ui/nodes/{}">{}</a>{state}</td><td>“{}”</td><td>{turn}</td><td>{}{}</td></tr>"#,
            c.id,
            esc(&c.content),
            esc(quote),
            esc(&when(&c.valid_from)),
            c.valid_to
                .as_ref()
                .map(|t| format!(" – {}", esc(&when(t))))
                .unwrap_or_default()
        );
    }
    out.push_str("</table>");
}

fn claim(out: &mut String, view: &NodeView, csrf: &str) {
    let n = &view.node;
    let _ = write!(
        out,
        r#"<div class="turn"><div class="text" id="claim-text">{}</div>"#,
        esc(&n.content)
    );
    if let Some(q) = meta_str(n, "evidence_quote") {
        let _ = write!(out, r#"<div class="muted">evidence: “{}”</div>"#, esc(q));
    }
    out.push_str("</div>");
    let subjects: Vec<Node> = view
        .neighbours
        .iter()
        .filter(|nb| {
            nb.node_type == NodeType::Entity
                && view.edges.iter().any(|e| {
                    e.edge_type == EdgeType::HasFact && e.source_id == nb.id && e.target_id == n.id
                })
        })
        .cloned()
        .collect();
    if !subjects.is_empty() {
        out.push_str("<p>About: ");
        node_tags(out, &subjects);
        out.push_str("</p>");
    }
    if let Some(by) = n.superseded_by {
        let _ = write!(
            out,
            r#"<p>Superseded by <a href="/ui/nodes/{by}">{}</a>.</p>"#,
            short(&by)
        );
    }
    if let Some(r) = n.metadata.as_ref().and_then(|m| m.get("retraction")) {
        let _ = write!(
            out,
            r#"<p id="retraction">Retracted: {}</p>"#,
            esc(r.get("reason").and_then(Value::as_str).unwrap_or(""))
        );
    }
    if n.lifecycle.is_active() {
        for subject in &subjects {
            let _ = write!(
                out,
                r#"<form method="post" action="/ui/claims/{id}/rebind" class="inline">{csrf}<input type="hidden" name="entity" value="{subject}">Not about {name}? It is about <input type="text" name="to" class="rebind-to" placeholder="who" required><label><input type="checkbox" name="new_person" value="yes"> a new person</label><input type="text" name="reason" class="rebind-reason" placeholder="why" required><button type="submit" class="secondary rebind">Move</button></form>"#,
                id = n.id,
                csrf = csrf_field(csrf),
                subject = subject.id,
                name = esc(&subject.content),
            );
        }
        let _ = write!(
            out,
            r#"<h2>Fix this claim</h2><form method="post" action="/ui/claims/{id}/correct" class="inline">{csrf}<input type="text" name="object" id="correct-object" placeholder="the right value" required><input type="text" name="reason" id="correct-reason" placeholder="why" required><button type="submit" id="correct">Correct</button></form>
<form method="post" action="/ui/claims/{id}/retract" class="inline">{csrf}<input type="text" name="reason" id="retract-reason" placeholder="why it is wrong" required><button type="submit" class="danger" id="retract">Retract</button></form>"#,
            id = n.id,
            csrf = csrf_field(csrf),
        );
    }
}

fn evidence(out: &mut String, view: &NodeView) {
    if view.provenance.is_empty() {
        return;
    }
    out.push_str(r#"<h2>From the conversation</h2><table id="provenance"><tr><th>turn</th><th>who, when</th><th>said</th></tr>"#);
    for e in view.provenance.iter().take(20) {
        let ev = &e.event;
        let session = ev
            .session_id
            .as_ref()
            .map(|s| format!(" in {}", session_link(s.as_str())))
            .unwrap_or_default();
        let _ = write!(
            out,
            r#"<tr><td><a href="/ui/turns/{}">{}</a></td><td>{} ({}) {}{session}</td><td>{}</td></tr>"#,
            ev.id,
            short(&ev.id),
            esc(ev.speaker.as_ref().map(|s| s.as_str()).unwrap_or("—")),
            ev.role.as_str(),
            esc(&when(ev.event_time.as_ref().unwrap_or(&ev.ingested_at))),
            esc(&clip(&ev.content, 200)),
        );
    }
    out.push_str("</table>");
}
