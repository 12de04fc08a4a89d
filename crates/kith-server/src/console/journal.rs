//! `GET /ui/journal`: the changes to the owner's memory, newest first —
//! merges, alias reviews, forgets, corrections, claim edits and undos —
//! each with what it did, its record, and an undo button where the engine
//! can undo it (`POST /ui/journal/{op}/undo`, the same call as `kith undo`;
//! a refusal says why and changes nothing).

use std::collections::HashSet;
use std::fmt::Write;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, Response};
use kith::{JournalQuery, Operation, OperationKind};
use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use super::html::{clip, csrf_field, esc, layout, next_link, short, when, Nav};
use super::{run, see_other, ConsoleError, FormBody, IdPath, PageResult, Params, Viewer, PAGE};
use crate::routes::AppState;

/// The kinds the journal page lists by default: what changed the memory's
/// meaning (derivation records and retrieval receipts are left to
/// `kith journal` unless asked for).
pub const CHANGES: [OperationKind; 9] = [
    OperationKind::OrganizerMerged,
    OperationKind::AliasProposed,
    OperationKind::AliasProposalAccepted,
    OperationKind::AliasProposalRejected,
    OperationKind::IdentityCorrected,
    OperationKind::ClaimRetracted,
    OperationKind::ClaimCorrected,
    OperationKind::Forgotten,
    OperationKind::Undo,
];

/// Kinds the engine can undo.
fn undoable(kind: OperationKind) -> bool {
    matches!(
        kind,
        OperationKind::OrganizerMerged
            | OperationKind::AliasProposalAccepted
            | OperationKind::IdentityCorrected
            | OperationKind::ClaimRetracted
            | OperationKind::ClaimCorrected
    )
}

/// `GET /ui/journal` parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalParams {
    /// Only this kind (any kind, `RETRIEVAL_RECORDED` included).
    pub kind: Option<String>,
    /// Only records about this node.
    pub node: Option<Uuid>,
    /// Page number (0 first).
    pub page: Option<usize>,
    /// What the last undo did.
    pub notice: Option<String>,
}

/// `GET /ui/journal`.
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Params(q): Params<JournalParams>,
) -> PageResult {
    let kinds: Vec<OperationKind> = match q.kind.as_deref().map(str::trim) {
        None | Some("") => CHANGES.to_vec(),
        Some(k) => vec![k.to_uppercase().parse::<OperationKind>().map_err(|e| {
            ConsoleError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("kind: {e}"))
        })?],
    };
    let owner = viewer.owner.clone();
    let node = q.node;
    let (records, undone) = run(&state, move |m| {
        let mut all: Vec<Operation> = Vec::new();
        for kind in &kinds {
            all.extend(m.journal(
                &owner.0,
                &JournalQuery {
                    kind: Some(*kind),
                    node,
                    limit: 0,
                },
            )?);
        }
        let undos = m.journal(
            &owner.0,
            &JournalQuery {
                kind: Some(OperationKind::Undo),
                node: None,
                limit: 0,
            },
        )?;
        let undone: HashSet<Uuid> = undos
            .iter()
            .filter_map(|u| {
                record(u)?
                    .get("undone_operation_id")?
                    .as_str()?
                    .parse()
                    .ok()
            })
            .collect();
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok((all, undone))
    })
    .await?;
    let page = q.page.unwrap_or(0);
    let mut body = String::new();
    if q.notice.as_deref() == Some("undone") {
        body.push_str(r#"<p class="notice" id="notice">Undone, and journaled as UNDO.</p>"#);
    }
    filter_form(&mut body, q.kind.as_deref().unwrap_or(""), q.node);
    let shown: Vec<&Operation> = records.iter().skip(page * PAGE).take(PAGE).collect();
    if shown.is_empty() {
        body.push_str(r#"<p class="muted" id="empty">No record here.</p>"#);
    } else {
        body.push_str(
            r#"<table id="journal"><tr><th>when</th><th>what</th><th>record</th><th></th></tr>"#,
        );
        for op in shown {
            row(&mut body, op, undone.contains(&op.id), &viewer.csrf);
        }
        body.push_str("</table>");
    }
    let next = (records.len() > (page + 1) * PAGE).then(|| {
        let mut href = format!("/ui/journal?page={}", page + 1);
        if let Some(k) = &q.kind {
            href.push_str(&format!("&kind={}", super::html::url_value(k)));
        }
        if let Some(n) = q.node {
            href.push_str(&format!("&node={n}"));
        }
        href
    });
    body.push_str(&next_link(next));
    Ok(Html(layout(
        "Journal",
        Nav::Journal,
        Some(&viewer.chrome()),
        &body,
    )))
}

fn filter_form(out: &mut String, kind: &str, node: Option<Uuid>) {
    out.push_str(r#"<form method="get" action="/ui/journal" class="inline"><select name="kind" id="kind"><option value="">all changes</option>"#);
    for k in CHANGES.iter().chain([&OperationKind::RetrievalRecorded]) {
        let selected = if k.as_str().eq_ignore_ascii_case(kind) {
            " selected"
        } else {
            ""
        };
        let _ = write!(out, r#"<option{selected}>{}</option>"#, k.as_str());
    }
    out.push_str("</select>");
    if let Some(n) = node {
        let _ = write!(
            out,
            r#"<input type="hidden" name="node" value="{n}"><span class="muted">about node <a href="/ui/nodes/{n}">{}</a></span>"#,
            short(&n)
        );
    }
    out.push_str(r#"<button type="submit">Show</button></form>"#);
}

/// A sealed record's content (`payload.record`), when it has one.
fn record(op: &Operation) -> Option<&Value> {
    op.payload.get("record")
}

fn text<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(*k))?.as_str()
}

/// One sentence saying what a record did.
fn summary(op: &Operation) -> String {
    if kith::tombstone::is_scrubbed(&op.payload) {
        return "(scrubbed by a forget)".into();
    }
    // Organizer and claim records are sealed (`{record, sha256}`); a
    // forget's record is the payload itself.
    let r = record(op).unwrap_or(&op.payload);
    let q = |s: Option<&str>| esc(&clip(s.unwrap_or("?"), 80));
    match op.kind {
        OperationKind::OrganizerMerged => format!(
            "merged “{}” into “{}” ({})",
            q(text(r, &["before", "retired", "content"])),
            q(text(r, &["before", "keep", "content"])),
            q(text(r, &["basis"]))
        ),
        OperationKind::AliasProposalAccepted | OperationKind::AliasProposalRejected => format!(
            "{} “{}” = “{}”{}{}",
            q(text(r, &["decision"])),
            q(text(r, &["proposal", "record", "nodes", "a", "content"])),
            q(text(r, &["proposal", "record", "nodes", "b", "content"])),
            text(r, &["reason"])
                .map(|x| format!(": {}", esc(x)))
                .unwrap_or_default(),
            text(r, &["reviewer_id"])
                .map(|x| format!(" (by {})", esc(x)))
                .unwrap_or_default(),
        ),
        OperationKind::AliasProposed => format!(
            "proposed “{}” = “{}”",
            q(text(r, &["nodes", "a", "content"])),
            q(text(r, &["nodes", "b", "content"]))
        ),
        OperationKind::Undo => format!(
            "undid {} {}",
            q(text(r, &["undone_kind"])),
            q(text(r, &["undone_operation_id"]).map(|s| s.get(..8).unwrap_or(s)))
        ),
        OperationKind::Forgotten => format!(
            "forgot {} message(s): {}",
            r.get("events")
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
            q(text(r, &["reason"]))
        ),
        _ => text(r, &["request", "reason"])
            .or_else(|| text(r, &["reason"]))
            .map(|x| format!("reason: {}", esc(x)))
            .unwrap_or_default(),
    }
}

fn row(out: &mut String, op: &Operation, undone: bool, csrf: &str) {
    let target = op
        .target_id
        .map(|t| format!(r#" · <a href="/ui/nodes/{t}">target</a>"#))
        .unwrap_or_default();
    let action = if undone {
        r#"<span class="muted">undone</span>"#.to_string()
    } else if undoable(op.kind) {
        format!(
            r#"<form method="post" action="/ui/journal/{}/undo" class="inline">{}<button type="submit" class="secondary undo">Undo</button></form>"#,
            op.id,
            csrf_field(csrf)
        )
    } else {
        String::new()
    };
    let payload = serde_json::to_string_pretty(&op.payload).unwrap_or_default();
    let _ = write!(
        out,
        r#"<tr class="record kind-{}" id="op-{}"><td>{}</td><td><b>{}</b> {}{target}</td><td><details><summary>{}</summary><pre>{}</pre></details></td><td>{action}</td></tr>"#,
        op.kind.as_str(),
        op.id,
        esc(&when(&op.created_at)),
        op.kind.as_str(),
        summary(op),
        short(&op.id),
        esc(&clip(&payload, 20_000)),
    );
}

/// The undo form's fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UndoForm {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: String,
}

/// `POST /ui/journal/{op}/undo`: undoes the record (or says why not: 409,
/// nothing written), then back to the journal.
pub async fn undo(
    State(state): State<AppState>,
    viewer: Viewer,
    IdPath(op): IdPath,
    FormBody(form): FormBody<UndoForm>,
) -> Result<Response, ConsoleError> {
    viewer.check_csrf(&form.csrf)?;
    let owner = viewer.owner.clone();
    run(&state, move |m| Ok(m.undo(&owner.0, op)?)).await?;
    Ok(see_other("/ui/journal?notice=undone"))
}
