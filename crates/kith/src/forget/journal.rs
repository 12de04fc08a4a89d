//! Which journal records a forget scrubs.
//!
//! A record is scrubbed when it is about something that goes (its target
//! is an erased event or a removed node), names one anywhere in its payload
//! (saved extraction replies, plans and receipts name their event; merge,
//! group, correction and retrieval records name nodes), or — for the kinds
//! that keep raw text (extraction replies, plans, derivation receipts,
//! retrieval receipts) — quotes an erased message (any payload string of
//! [`MIN_QUOTE`]+ characters found in an erased text). Organizer,
//! correction and linking records are scrubbed by ids only: they describe
//! live nodes too, and the names they hold are kept nodes' own, which other
//! messages still say. Forgetting a whole owner scrubs every record of the owner.
//! `FORGOTTEN` records are never scrubbed: they hold ids and counts only,
//! and they are the account of what was erased. Records scrubbed before
//! are left as they are.

use std::collections::HashSet;

use kith_core::{tombstone, Operation, OperationKind, OwnerId};
use kith_store::Tx;
use serde_json::Value;
use uuid::Uuid;

use crate::error::Error;

/// Journal records read per page.
const PAGE: usize = 1000;

/// The shortest payload string checked for being a quote of an erased
/// message (shorter ones, like `"user"` or `"fact"`, match anything).
const MIN_QUOTE: usize = 12;

/// The owner's records to scrub, in journal order.
pub(super) fn to_scrub(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    named: &HashSet<Uuid>,
    erased_texts: &[String],
    whole_owner: bool,
) -> Result<Vec<Operation>, Error> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = tx.scan_operations(after, PAGE)?;
        let Some((last, _)) = page.last() else { break };
        after = *last;
        for (_, op) in page {
            if &op.owner_id != owner
                || op.kind == OperationKind::Forgotten
                || tombstone::is_scrubbed(&op.payload)
            {
                continue;
            }
            let texts = if keeps_raw_text(op.kind) {
                erased_texts
            } else {
                &[]
            };
            if whole_owner
                || op.target_id.is_some_and(|t| named.contains(&t))
                || names_or_quotes(&op.payload, named, texts)
            {
                out.push(op);
            }
        }
    }
    Ok(out)
}

/// The record kinds that keep raw text of the messages (a reply, a plan's
/// quotes, a receipt's packed lines), so a quote of an erased message
/// scrubs them even when no id names it.
pub(super) fn keeps_raw_text(kind: OperationKind) -> bool {
    matches!(
        kind,
        OperationKind::ExtractionValidated
            | OperationKind::DerivationPrepared
            | OperationKind::DerivationCommitted
            | OperationKind::DerivationReplanRequested
            | OperationKind::RetrievalRecorded
            // Their node snapshots hold the claim's text.
            | OperationKind::ClaimRetracted
            | OperationKind::ClaimCorrected
    )
}

/// Whether any string (or object key) in `value` holds one of the `named`
/// ids, or is a quote of one of `texts`.
pub(super) fn names_or_quotes(value: &Value, named: &HashSet<Uuid>, texts: &[String]) -> bool {
    match value {
        Value::String(s) => names(s, named) || quotes(s, texts),
        Value::Array(items) => items.iter().any(|v| names_or_quotes(v, named, texts)),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| names(k, named) || names_or_quotes(v, named, texts)),
        _ => false,
    }
}

/// Whether `s` contains a hyphenated UUID that is in `named`.
fn names(s: &str, named: &HashSet<Uuid>) -> bool {
    let b = s.as_bytes();
    if b.len() < 36 || named.is_empty() {
        return false;
    }
    (0..=b.len() - 36).any(|i| {
        let w = &b[i..i + 36];
        let shaped = w.iter().enumerate().all(|(j, c)| match j {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        });
        // The window is ASCII, so slicing `s` there is on char boundaries.
        shaped && Uuid::parse_str(&s[i..i + 36]).is_ok_and(|id| named.contains(&id))
    })
}

/// Whether `s` is long enough to mean something and occurs in an erased
/// text (a quote, a saved reply's excerpt, a receipt's snippet).
fn quotes(s: &str, texts: &[String]) -> bool {
    let s = s.trim();
    s.chars().count() >= MIN_QUOTE && texts.iter().any(|t| t.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_anywhere_and_quotes_are_found_short_words_are_not() {
        let id = Uuid::new_v4();
        let named: HashSet<Uuid> = [id].into();
        let texts = vec!["my locker code is plum-42, remember it".to_string()];
        let cases = [
            (json!({"event_id": id.to_string()}), true),
            (json!({"results": [{"ref": format!("note:{id}")}]}), true),
            (json!({ id.to_string(): 1 }), true),
            (json!({"quote": "locker code is plum-42"}), true),
            (json!({"role": "user", "kind": "fact"}), false),
            (json!({"other": Uuid::new_v4().to_string()}), false),
            (json!({"n": 3, "ok": true}), false),
        ];
        for (payload, want) in cases {
            assert_eq!(names_or_quotes(&payload, &named, &texts), want, "{payload}");
        }
    }
}
