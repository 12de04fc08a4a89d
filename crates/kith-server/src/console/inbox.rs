//! The alias inbox: `GET /ui/inbox` lists alias proposals (pending by
//! default), each with both entities' evidence side by side (their claims
//! with the quotes, and the turns they came from); `POST
//! /ui/inbox/{op}/review` accepts or rejects one with a reason, through
//! the same engine call as `kith aliases review` and
//! `POST /v1/aliases/{op}/review`, so it writes the same review records.

use std::fmt::Write;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, Response};
use kith::{AliasProposal, Decision, Memory, Node, NodeView, ProposalStatus};
use serde::Deserialize;
use serde_json::Value;

use super::html::{clip, csrf_field, esc, layout, next_link, short, url_value, when, Nav};
use super::{run, see_other, ConsoleError, FormBody, IdPath, PageResult, Params, Viewer, PAGE};
use crate::auth::Owner;
use crate::dto::{AliasListQuery, ProposalStatusName};
use crate::routes::AppState;

/// Claims and turns shown per side.
const SHOWN: usize = 5;

/// `GET /ui/inbox` parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InboxQuery {
    /// `pending` (default), `accepted`, `rejected` or `all`.
    pub status: Option<String>,
    /// The next page: proposals after this one.
    pub after: Option<String>,
    /// What the last review did.
    pub notice: Option<String>,
}

/// One side of a proposal: the entity and its evidence.
struct Side {
    view: NodeView,
    claims: Vec<Node>,
}

fn side(m: &Memory, owner: &Owner, id: uuid::Uuid) -> Result<Option<Side>, ConsoleError> {
    // A side merged away or forgotten since is shown as gone, not an error.
    let view = match m.node_view(&owner.0, id) {
        Ok(v) => v,
        Err(e) if e.kind() == kith::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let claims = super::entities::claims_of(&view)
        .into_iter()
        .filter(|n| n.lifecycle.is_active())
        .take(SHOWN)
        .collect();
    Ok(Some(Side { view, claims }))
}

/// `GET /ui/inbox`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Params(q): Params<InboxQuery>,
) -> PageResult {
    let status = q.status.clone().unwrap_or_else(|| "pending".into());
    let filter = match status.as_str() {
        "pending" => Some(ProposalStatusName::Pending),
        "accepted" => Some(ProposalStatusName::Accepted),
        "rejected" => Some(ProposalStatusName::Rejected),
        "all" => None,
        other => {
            return Err(ConsoleError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("status: {other:?} is not one of pending, accepted, rejected, all"),
            ))
        }
    };
    let owner = viewer.owner.clone();
    let after = q.after.clone();
    let (page, sides) = run(&state, move |m| {
        let page = crate::routes::organize::alias_page(
            m,
            &owner,
            AliasListQuery {
                status: filter,
                limit: Some(PAGE),
                after,
            },
        )?;
        let mut sides = Vec::new();
        for p in &page.proposals {
            sides.push((side(m, &owner, p.a)?, side(m, &owner, p.b)?));
        }
        Ok((page, sides))
    })
    .await?;
    let mut body = String::new();
    match q.notice.as_deref() {
        Some("accept") => body.push_str(r#"<p class="notice" id="notice">Accepted: the two are now linked as aliases (both stay; undo it from the journal).</p>"#),
        Some("reject") => body.push_str(r#"<p class="notice" id="notice">Rejected: the pair will not be proposed again.</p>"#),
        _ => {}
    }
    body.push_str(r#"<p class="inline">Show: "#);
    for s in ["pending", "accepted", "rejected", "all"] {
        let current = if s == status {
            r#" aria-current="page""#
        } else {
            ""
        };
        let _ = write!(body, r#"<a href="/ui/inbox?status={s}"{current}>{s}</a> "#);
    }
    body.push_str("</p>");
    if page.proposals.is_empty() {
        body.push_str(r#"<p class="muted" id="empty">No proposal here.</p>"#);
    }
    for (p, (a, b)) in page.proposals.iter().zip(&sides) {
        proposal(&mut body, p, a.as_ref(), b.as_ref(), &viewer);
    }
    body.push_str(&next_link(page.next_after.map(|after| {
        format!("/ui/inbox?status={}&after={after}", url_value(&status))
    })));
    Ok(Html(layout(
        "Alias inbox",
        Nav::Inbox,
        Some(&viewer.chrome()),
        &body,
    )))
}

fn proposal(
    out: &mut String,
    p: &AliasProposal,
    a: Option<&Side>,
    b: Option<&Side>,
    viewer: &Viewer,
) {
    let status = match p.status {
        ProposalStatus::Pending => "pending",
        ProposalStatus::Accepted => "accepted",
        ProposalStatus::Rejected => "rejected",
    };
    let _ = write!(
        out,
        r#"<section class="proposal" id="proposal-{}"><p><b>{}</b> and <b>{}</b> may be the same — score {:.2}, proposed {} · <span class="status">{status}</span></p>"#,
        p.op_id,
        esc(&p.a_name),
        esc(&p.b_name),
        p.score,
        esc(&when(&p.created_at)),
    );
    if let Some(assessment) = &p.assessment {
        assessment_html(out, assessment);
    }
    out.push_str(r#"<div class="pair">"#);
    side_html(out, &p.a_name, a);
    side_html(out, &p.b_name, b);
    out.push_str("</div>");
    if p.status == ProposalStatus::Pending {
        let _ = write!(
            out,
            r#"<form method="post" action="/ui/inbox/{op}/review" class="inline">{csrf}<input type="hidden" name="decision" value="accept"><input type="text" name="reason" placeholder="reason (optional)"><input type="text" name="reviewer" value="{owner}" size="10" title="reviewer"><button type="submit" class="accept">Accept: same</button></form>
<form method="post" action="/ui/inbox/{op}/review" class="inline">{csrf}<input type="hidden" name="decision" value="reject"><input type="text" name="reason" class="reject-reason" placeholder="why they differ (required)" required><input type="text" name="reviewer" value="{owner}" size="10" title="reviewer"><button type="submit" class="secondary reject">Reject: different</button></form>"#,
            op = p.op_id,
            csrf = csrf_field(&viewer.csrf),
            owner = esc(viewer.owner.0.as_str()),
        );
    } else if let Some(review) = p.review_op_id {
        let _ = write!(
            out,
            r#"<p class="muted">Decided by record <a href="/ui/journal?node={}">{}</a>.</p>"#,
            p.a,
            short(&review)
        );
    }
    out.push_str("</section>");
}

fn assessment_html(out: &mut String, a: &Value) {
    let verdict = a.get("verdict").and_then(Value::as_str).unwrap_or("?");
    let who = a
        .get("assessor")
        .and_then(|x| x.get("id"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let reasons: Vec<String> = a
        .get("reasons")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(esc).collect())
        .unwrap_or_default();
    let _ = write!(
        out,
        r#"<p class="muted">Assessed by {}: {} — {}</p>"#,
        esc(who),
        esc(verdict),
        reasons.join("; ")
    );
}

fn side_html(out: &mut String, name: &str, side: Option<&Side>) {
    let Some(side) = side else {
        let _ = write!(
            out,
            r#"<div class="side"><h3>{}</h3><p class="muted">No longer in memory (merged or forgotten).</p></div>"#,
            esc(name)
        );
        return;
    };
    let n = &side.view.node;
    let _ = write!(
        out,
        r#"<div class="side"><h3><a href="/ui/nodes/{}">{}</a></h3><div class="muted">{} · since {}</div>"#,
        n.id,
        esc(&n.content),
        n.lifecycle.as_str(),
        esc(&when(&n.valid_from))
    );
    if side.claims.is_empty() {
        out.push_str(r#"<p class="muted">No current claim.</p>"#);
    } else {
        out.push_str("<ul>");
        for c in &side.claims {
            let quote = c
                .metadata
                .as_ref()
                .and_then(|m| m.get("evidence_quote"))
                .and_then(Value::as_str)
                .map(|q| format!(r#" <span class="muted">“{}”</span>"#, esc(&clip(q, 120))))
                .unwrap_or_default();
            let _ = write!(
                out,
                r#"<li><a href="/ui/nodes/{}">{}</a>{quote}</li>"#,
                c.id,
                esc(&c.content)
            );
        }
        out.push_str("</ul>");
    }
    out.push_str(r#"<div class="muted">said in:</div><ul>"#);
    for e in side.view.provenance.iter().take(SHOWN) {
        let ev = &e.event;
        let _ = write!(
            out,
            r#"<li><a href="/ui/turns/{}">{}</a>: {}</li>"#,
            ev.id,
            esc(ev.speaker.as_ref().map(|s| s.as_str()).unwrap_or("—")),
            esc(&clip(&ev.content, 140))
        );
    }
    out.push_str("</ul></div>");
}

/// The review form's fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewForm {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: String,
    /// `accept` or `reject`.
    #[serde(default)]
    pub decision: String,
    /// Why (required to reject).
    #[serde(default)]
    pub reason: String,
    /// Who decided (recorded; optional).
    #[serde(default)]
    pub reviewer: String,
}

/// `POST /ui/inbox/{op}/review`: records the decision, then back to the
/// inbox. A reject without a reason, or a proposal decided otherwise
/// before, answers an error page and writes nothing.
pub async fn review(
    State(state): State<AppState>,
    viewer: Viewer,
    IdPath(op): IdPath,
    FormBody(form): FormBody<ReviewForm>,
) -> Result<Response, ConsoleError> {
    viewer.check_csrf(&form.csrf)?;
    let decision = match form.decision.as_str() {
        "accept" => Decision::Accept,
        "reject" => Decision::Reject,
        other => {
            return Err(ConsoleError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("decision: {other:?} is neither accept nor reject"),
            ))
        }
    };
    let owner = viewer.owner.clone();
    let reason = Some(form.reason.trim().to_string()).filter(|r| !r.is_empty());
    let reviewer = Some(form.reviewer.trim().to_string()).filter(|r| !r.is_empty());
    run(&state, move |m| {
        Ok(m.review_alias(
            &owner.0,
            op,
            decision,
            reason.as_deref(),
            reviewer.as_deref(),
        )?)
    })
    .await?;
    Ok(see_other(&format!("/ui/inbox?notice={}", form.decision)))
}
