//! Forgetting and fixing from the console: `POST /ui/forget` (a turn or a
//! whole session; first a dry run that lists what would go, then, once
//! confirmed, for good, exactly as `kith forget`), and a claim's
//! `POST /ui/claims/{id}/retract` and `POST /ui/claims/{id}/correct`
//! (`kith claims retract|correct`), and `POST /ui/claims/{id}/rebind` (the
//! claim is about someone else: `kith correct --claim`). Each is journaled
//! and shows in the journal page; forgetting cannot be undone, the others
//! can.

use std::fmt::Write;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use kith::{
    Correction, CorrectionTarget, ForgetReport, ForgetRequest, ForgetSelector, Memory, NodeType,
    SearchRequest, SessionId,
};
use serde::Deserialize;
use uuid::Uuid;

use super::html::{csrf_field, esc, layout, short, url_value, Nav};
use super::{run, see_other, ConsoleError, FormBody, IdPath, Viewer};
use crate::routes::AppState;

/// The forget form's fields: one of `event` and `session`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForgetForm {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: String,
    /// A turn (event id).
    pub event: Option<String>,
    /// A session id.
    pub session: Option<String>,
    /// Why (kept in the tombstones and the journal).
    #[serde(default)]
    pub reason: String,
    /// `yes`: forget for good; otherwise a dry run.
    pub confirm: Option<String>,
}

fn selector(form: &ForgetForm) -> Result<ForgetSelector, ConsoleError> {
    let invalid = |m: &str| ConsoleError::new(StatusCode::UNPROCESSABLE_ENTITY, m);
    match (form.event.as_deref(), form.session.as_deref()) {
        (Some(e), None) => Uuid::parse_str(e.trim())
            .map(ForgetSelector::Event)
            .map_err(|_| ConsoleError::new(StatusCode::NOT_FOUND, "There is no such turn.")),
        (None, Some(s)) => Ok(ForgetSelector::Session(SessionId::new(s.trim())?)),
        _ => Err(invalid("Name one turn or one session to forget.")),
    }
}

/// `POST /ui/forget`: a dry run (what would go, and a button to confirm),
/// or, with `confirm=yes`, the forget itself and its verification.
pub async fn forget(
    State(state): State<AppState>,
    viewer: Viewer,
    FormBody(form): FormBody<ForgetForm>,
) -> Result<Html<String>, ConsoleError> {
    viewer.check_csrf(&form.csrf)?;
    let selector = selector(&form)?;
    let dry_run = form.confirm.as_deref() != Some("yes");
    let request = ForgetRequest {
        selector,
        reason: form.reason.clone(),
        dry_run,
    };
    let owner = viewer.owner.clone();
    let report = run(&state, move |m| Ok(m.forget(&owner.0, &request)?)).await?;
    let what = match (&form.event, &form.session) {
        (Some(e), _) => format!("turn {}", esc(e.trim())),
        (_, Some(s)) => format!("session {}", esc(s.trim())),
        _ => String::new(),
    };
    let mut body = String::new();
    if dry_run {
        let _ = write!(
            body,
            r#"<p id="dry-run">Forgetting {what} would erase <b>{}</b> message(s) (leaving tombstones that keep the log's checksums), remove <b>{}</b> node(s) derived only from them and <b>{}</b> link(s), update {} node(s) and scrub {} journal record(s). Nothing has changed yet.</p>"#,
            report.events.len(),
            report.nodes_deleted.len(),
            report.edges_deleted,
            report.nodes_updated.len(),
            report.journal_records_scrubbed.len(),
        );
        let hidden = match (&form.event, &form.session) {
            (Some(e), _) => format!(r#"<input type="hidden" name="event" value="{}">"#, esc(e)),
            (_, Some(s)) => format!(r#"<input type="hidden" name="session" value="{}">"#, esc(s)),
            _ => String::new(),
        };
        let _ = write!(
            body,
            r#"<form method="post" action="/ui/forget" data-confirm="Forget for good? This cannot be undone.">{}{hidden}<input type="hidden" name="reason" value="{}"><input type="hidden" name="confirm" value="yes"><p>Reason: {}</p><button type="submit" class="danger" id="forget-confirm">Forget for good</button> <a href="/ui/conversation">Cancel</a></form>"#,
            csrf_field(&viewer.csrf),
            esc(&form.reason),
            esc(&form.reason),
        );
    } else {
        done(&mut body, &what, &report);
    }
    Ok(Html(layout(
        "Forget",
        Nav::Conversation,
        Some(&viewer.chrome()),
        &body,
    )))
}

fn done(out: &mut String, what: &str, report: &ForgetReport) {
    let _ = write!(
        out,
        r#"<p class="notice" id="forgotten">Forgot {what}: {} message(s) erased, {} node(s) removed, {} journal record(s) scrubbed."#,
        report.events.len(),
        report.nodes_deleted.len(),
        report.journal_records_scrubbed.len(),
    );
    if let Some(op) = report.operation_id {
        let _ = write!(
            out,
            r#" Recorded as <a href="/ui/journal?kind=FORGOTTEN">{}</a>."#,
            short(&op)
        );
    }
    out.push_str("</p>");
    if let Some(v) = &report.verification {
        let _ = write!(
            out,
            r#"<p id="verification">Checked afterwards: {} byte(s) of {} pack file(s) scanned for {} erased text(s): found in {} place(s) ({} still held by other messages). {}</p>"#,
            v.pack_bytes_scanned,
            v.pack_files_scanned.len(),
            v.texts_searched,
            v.texts_found_in_pack,
            v.texts_held_by_live_events,
            if v.clean() {
                "Clean."
            } else {
                "Not clean: run kith doctor."
            }
        );
    }
}

/// The fields of a claim's retract and correct forms.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimForm {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: String,
    /// Why.
    #[serde(default)]
    pub reason: String,
    /// The corrected value (correct only).
    pub object: Option<String>,
}

/// `POST /ui/claims/{id}/retract`: closes the claim, then back to it.
pub async fn retract(
    State(state): State<AppState>,
    viewer: Viewer,
    IdPath(id): IdPath,
    FormBody(form): FormBody<ClaimForm>,
) -> Result<Response, ConsoleError> {
    viewer.check_csrf(&form.csrf)?;
    let owner = viewer.owner.clone();
    let report = run(&state, move |m| {
        Ok(m.retract_claim(&owner.0, id, &form.reason)?)
    })
    .await?;
    Ok(see_other(&format!(
        "/ui/nodes/{}?notice={}",
        report.claim,
        url_value("retracted")
    )))
}

/// `POST /ui/claims/{id}/correct`: replaces the claim's value, then to the
/// claim that replaces it.
pub async fn correct(
    State(state): State<AppState>,
    viewer: Viewer,
    IdPath(id): IdPath,
    FormBody(form): FormBody<ClaimForm>,
) -> Result<Response, ConsoleError> {
    viewer.check_csrf(&form.csrf)?;
    let owner = viewer.owner.clone();
    let object = form.object.clone().unwrap_or_default();
    let report = run(&state, move |m| {
        Ok(m.correct_claim(&owner.0, id, &object, &form.reason)?)
    })
    .await?;
    let target = report.replacement.unwrap_or(report.claim);
    Ok(see_other(&format!("/ui/nodes/{target}?notice=corrected")).into_response())
}

/// The fields of a claim's "about someone else" form.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RebindForm {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: String,
    /// The entity the claim is wrongly about.
    #[serde(default)]
    pub entity: String,
    /// Who it is about: an existing entity's name, or a new person's.
    #[serde(default)]
    pub to: String,
    /// `yes`: make a new person named `to` (a split).
    pub new_person: Option<String>,
    /// Why.
    #[serde(default)]
    pub reason: String,
}

/// The owner's one active entity named `name` (case-insensitive); none or
/// several is a readable refusal.
fn entity_named(m: &Memory, owner: &crate::auth::Owner, name: &str) -> Result<Uuid, ConsoleError> {
    let invalid = |msg: String| ConsoleError::new(StatusCode::UNPROCESSABLE_ENTITY, msg);
    let name = name.trim();
    if name.is_empty() {
        return Err(invalid("Name who the claim is about.".into()));
    }
    let mut req = SearchRequest::new(owner.0.as_str(), name)?;
    req.filters.node_types = vec![NodeType::Entity];
    req.limit = 50;
    let matches: Vec<Uuid> = m
        .search(&req)?
        .into_iter()
        .filter(|h| h.content.trim().eq_ignore_ascii_case(name))
        .map(|h| h.node_id)
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => Err(invalid(format!(
            "No entity is named {name:?}; tick \"a new person\" to make one."
        ))),
        _ => Err(invalid(format!(
            "{} entities are named {name:?}; correct it from the entity's page with kith correct --to ID.",
            matches.len()
        ))),
    }
}

/// `POST /ui/claims/{id}/rebind`: the claim is about another entity (an
/// existing one by name, or a new person): `Memory::correct` with this
/// claim, then to the entity it is now about.
pub async fn rebind(
    State(state): State<AppState>,
    viewer: Viewer,
    IdPath(id): IdPath,
    FormBody(form): FormBody<RebindForm>,
) -> Result<Response, ConsoleError> {
    viewer.check_csrf(&form.csrf)?;
    let entity = Uuid::parse_str(form.entity.trim())
        .map_err(|_| ConsoleError::new(StatusCode::NOT_FOUND, "There is no such entity."))?;
    let owner = viewer.owner.clone();
    let report = run(&state, move |m| {
        let to = if form.new_person.as_deref() == Some("yes") {
            CorrectionTarget::NewPerson {
                name: form.to.trim().to_string(),
            }
        } else {
            CorrectionTarget::Entity {
                id: entity_named(m, &owner, &form.to)?,
            }
        };
        let correction = Correction {
            entity,
            claims: vec![id],
            events: Vec::new(),
            to,
            reason: form.reason.clone(),
        };
        Ok(m.correct(&owner.0, &correction)?)
    })
    .await?;
    Ok(see_other(&format!(
        "/ui/nodes/{}?notice=rebound",
        report.target
    )))
}
