//! `GET|POST /ui/ask`: a question → exactly what `retrieve` answers: the
//! context packed into the token budget, and the ranked evidence, each
//! with its trace (the paths that found it with their ranks, the fused
//! score, the boosts). The retrieval is recorded like any other (its
//! receipt id is shown), so a form post it is, with the CSRF token.

use std::fmt::Write;

use axum::extract::State;
use axum::response::Html;
use kith::{Retrieval, RetrieveRequest};
use serde::Deserialize;

use super::html::{clip, csrf_field, esc, layout, session_link, when, Nav};
use super::{run, FormBody, PageResult, Viewer};
use crate::routes::AppState;

/// The ask form's fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskForm {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: String,
    /// The question.
    #[serde(default)]
    pub q: String,
    /// Token budget of the packed context (default 1024).
    pub budget: Option<usize>,
    /// Results at most (default 10, at most 100).
    pub limit: Option<usize>,
}

fn form_html(csrf: &str, q: &str, budget: usize, limit: usize) -> String {
    format!(
        r#"<form method="post" action="/ui/ask" class="inline">{}<input type="search" name="q" id="question" class="wide" value="{}" placeholder="Ask what the memory knows" required><label>budget <input type="text" name="budget" value="{budget}" size="5"></label><label>results <input type="text" name="limit" value="{limit}" size="3"></label><button type="submit" id="ask">Ask</button></form>"#,
        csrf_field(csrf),
        esc(q)
    )
}

/// `GET /ui/ask`: the empty form.
pub async fn form(viewer: Viewer) -> Html<String> {
    let body = form_html(&viewer.csrf, "", 1024, 10);
    Html(layout("Ask", Nav::Ask, Some(&viewer.chrome()), &body))
}

/// `POST /ui/ask`: retrieves and shows the answer.
pub async fn submit(
    State(state): State<AppState>,
    viewer: Viewer,
    FormBody(form): FormBody<AskForm>,
) -> PageResult {
    viewer.check_csrf(&form.csrf)?;
    let budget = form.budget.unwrap_or(1024);
    let limit = form.limit.unwrap_or(10);
    let owner = viewer.owner.clone();
    let q = form.q.clone();
    let retrieval = run(&state, move |m| {
        let mut req = RetrieveRequest::new(owner.0.as_str(), &q)?;
        req.token_budget = budget;
        req.limit = limit;
        Ok(m.retrieve(&req)?)
    })
    .await?;
    let mut body = form_html(&viewer.csrf, &form.q, budget, limit);
    answer(&mut body, &retrieval);
    Ok(Html(layout("Ask", Nav::Ask, Some(&viewer.chrome()), &body)))
}

fn answer(out: &mut String, r: &Retrieval) {
    let _ = write!(
        out,
        r#"<p class="muted" id="receipt">{} result(s); {} of {} tokens ({}); {:.1} ms; receipt <code>{}</code>{}</p>"#,
        r.results.len(),
        r.tokens,
        r.token_budget,
        esc(r.tokenizer),
        r.timings.total_ms,
        r.request_id,
        if r.recorded { "" } else { " (not recorded)" }
    );
    let _ = write!(
        out,
        r#"<h2>Packed context</h2><pre id="context">{}</pre>"#,
        esc(&r.context)
    );
    out.push_str(
        r#"<h2>Ranked evidence</h2><table id="results"><tr><th>#</th><th>evidence</th><th>who, when</th><th>trace</th><th>score</th></tr>"#,
    );
    for item in &r.results {
        let p = &item.provenance;
        let session = p
            .session_id
            .as_ref()
            .map(|s| format!(" in {}", session_link(s.as_str())))
            .unwrap_or_default();
        let mut trace = String::new();
        for path in &item.trace.paths {
            let _ = write!(
                trace,
                r#"<span class="tag path">{} #{}{}{}</span>"#,
                path.path.as_str(),
                path.rank,
                path.score.map(|s| format!(" ({s:.3})")).unwrap_or_default(),
                path.via
                    .as_deref()
                    .map(|v| format!(" via {}", esc(v)))
                    .unwrap_or_default(),
            );
        }
        for boost in &item.trace.boosts {
            let _ = write!(
                trace,
                r#"<span class="tag boost" title="{}">{} ×{:.2}</span>"#,
                esc(&boost.reason),
                esc(&boost.name),
                boost.factor
            );
        }
        let _ = write!(
            out,
            r#"<tr class="result"><td>{}</td><td><span class="tag">{}</span> <a href="/ui/turns/{}">{}</a></td><td>{} ({}) {}{session}</td><td>{trace}<div class="muted">rrf {:.4}</div></td><td>{:.4}</td></tr>"#,
            item.rank,
            item.node_type.as_str(),
            p.event_id,
            esc(&clip(&item.content, 300)),
            esc(p.speaker.as_deref().unwrap_or("—")),
            p.role.as_str(),
            esc(&when(p.event_time.as_ref().unwrap_or(&p.ingested_at))),
            item.trace.rrf,
            item.trace.score,
        );
    }
    out.push_str("</table>");
}
