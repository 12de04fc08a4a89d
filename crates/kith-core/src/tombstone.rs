//! Tombstones: what stays of an event after its owner asked kith to forget it.
//!
//! The log is append-only, so a forgotten event is not removed: its row stays
//! with its id, owner, scope, session, role, source id, times, the SHA-256 of
//! the erased content and its original checksum, while the content, the
//! speaker and the metadata are erased. The tombstone seals the kept fields
//! and why they were kept with a checksum of its own, so `doctor` can verify
//! a forgotten event as strictly as a live one.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::canon;
use crate::event::Event;
use crate::timestamp::Timestamp;
use crate::validate::{ValidationError, ValidationErrorKind};

/// The longest reason a forget request may give, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// Why and when an event was erased, sealed with the event's kept fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tombstone {
    /// When the event was erased.
    pub forgotten_at: Timestamp,
    /// The caller's reason (checked by [`check_reason`]).
    pub reason: String,
    /// The `FORGOTTEN` journal record of the request that erased it.
    pub operation_id: Uuid,
    /// [`Tombstone::compute_checksum`] at erasure.
    pub checksum: String,
}

impl Tombstone {
    /// Seals a tombstone for `event` (live or already erased: only the
    /// fields a tombstone keeps are read).
    pub fn new(event: &Event, forgotten_at: Timestamp, reason: &str, operation_id: Uuid) -> Self {
        let mut t = Tombstone {
            forgotten_at,
            reason: reason.to_string(),
            operation_id,
            checksum: String::new(),
        };
        t.checksum = t.compute_checksum(event);
        t
    }

    /// SHA-256 of the canonical JSON of the event's kept fields (its
    /// original checksum included, which seals the erased ones) and the
    /// tombstone's own fields.
    pub fn compute_checksum(&self, event: &Event) -> String {
        canon::checksum(&json!({
            "id": event.id.to_string(),
            "owner_id": event.owner_id,
            "scope": event.scope,
            "session_id": event.session_id,
            "role": event.role,
            "content_sha256": event.content_sha256,
            "event_time": event.event_time,
            "ingested_at": event.ingested_at,
            "source_id": event.source_id,
            "event_checksum": event.checksum,
            "forgotten_at": self.forgotten_at,
            "reason": self.reason,
            "operation_id": self.operation_id.to_string(),
        }))
    }

    /// Problems with `event` as the erased row of this tombstone: content,
    /// speaker or metadata left, or a checksum that does not match. Empty
    /// when it verifies.
    pub fn verify(&self, event: &Event) -> Vec<String> {
        let mut problems = Vec::new();
        if !event.content.is_empty() || event.speaker.is_some() || event.metadata.is_some() {
            problems.push("a tombstone still holds content, speaker or metadata".to_string());
        }
        if self.compute_checksum(event) != self.checksum {
            problems.push("tombstone checksum does not match its fields".to_string());
        }
        problems
    }
}

/// `event` with what forgetting erases removed: content, speaker, metadata.
/// Everything else (the content's SHA-256 and the original checksum too)
/// stays.
pub fn erased(event: &Event) -> Event {
    Event {
        content: String::new(),
        speaker: None,
        metadata: None,
        ..event.clone()
    }
}

/// Checks a forget request's reason: required, at most
/// [`MAX_REASON_CHARS`] characters, no control characters.
pub fn check_reason(reason: &str) -> Result<(), ValidationError> {
    if reason.trim().is_empty() {
        return Err(ValidationError::new("reason", ValidationErrorKind::Empty));
    }
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(ValidationError::new(
            "reason",
            ValidationErrorKind::TooLong {
                max: MAX_REASON_CHARS,
                actual: chars,
                unit: "characters",
            },
        ));
    }
    if let Some(c) = reason.chars().find(|c| c.is_control()) {
        return Err(ValidationError::new(
            "reason",
            ValidationErrorKind::BadCharacter {
                found: c,
                allowed: "printable characters",
            },
        ));
    }
    Ok(())
}

/// What an export line carries for a tombstone (beside the event's kept
/// fields, an empty `content` and the original `checksum`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForgottenInput {
    /// SHA-256 of the erased content.
    pub content_sha256: String,
    /// When it was erased (RFC 3339).
    pub forgotten_at: String,
    /// Why.
    pub reason: String,
    /// The `FORGOTTEN` record of the request.
    pub operation_id: String,
    /// The tombstone's checksum.
    pub checksum: String,
}

impl ForgottenInput {
    /// The export form of `tombstone` on `event`.
    pub fn of(event: &Event, tombstone: &Tombstone) -> Self {
        ForgottenInput {
            content_sha256: event.content_sha256.clone(),
            forgotten_at: tombstone.forgotten_at.to_rfc3339(),
            reason: tombstone.reason.clone(),
            operation_id: tombstone.operation_id.to_string(),
            checksum: tombstone.checksum.clone(),
        }
    }
}

/// Validates an exported tombstone line: empty content, no speaker or
/// metadata, the event id and original checksum present, and a tombstone
/// checksum that recomputes. Returns the erased event to append and the
/// tombstone to set on it.
pub fn from_input(
    mut input: crate::event::EventInput,
    defaults: &crate::event::InputDefaults,
) -> Result<(Event, Tombstone), ValidationError> {
    let Some(f) = input.forgotten.take() else {
        return Err(ValidationError::new(
            "forgotten",
            ValidationErrorKind::Empty,
        ));
    };
    let mismatch = |field: &str, expected: &str, actual: &str| {
        ValidationError::new(
            field,
            ValidationErrorKind::Mismatch {
                expected: expected.into(),
                actual: actual.into(),
            },
        )
    };
    if !input.content.is_empty() || input.speaker.is_some() || input.metadata.is_some() {
        return Err(mismatch(
            "content",
            "no content, speaker or metadata on a tombstone",
            "some left",
        ));
    }
    let Some(checksum) = input.checksum.take() else {
        return Err(ValidationError::new("checksum", ValidationErrorKind::Empty));
    };
    // The id is checked here: validate would ask for the live event's
    // checksum beside it, and a tombstone's kept checksum is not that.
    let Some(event_id) = input.event_id.take() else {
        return Err(ValidationError::new("event_id", ValidationErrorKind::Empty));
    };
    // The kept fields validate like a live event's; a stand-in content
    // passes the content check and is then erased again.
    input.content = "-".into();
    let mut event = input.validate(defaults)?.event;
    if event.id.to_string() != event_id {
        return Err(mismatch("event_id", &event.id.to_string(), &event_id));
    }
    event.content = String::new();
    event.content_sha256 = f.content_sha256;
    event.checksum = checksum;
    let operation_id = Uuid::parse_str(&f.operation_id)
        .map_err(|_| mismatch("forgotten.operation_id", "a UUID", &f.operation_id))?;
    let tombstone = Tombstone {
        forgotten_at: Timestamp::parse("forgotten.forgotten_at", &f.forgotten_at)?,
        reason: f.reason,
        operation_id,
        checksum: f.checksum,
    };
    let want = tombstone.compute_checksum(&event);
    if want != tombstone.checksum {
        return Err(mismatch("forgotten.checksum", &want, &tombstone.checksum));
    }
    Ok((event, tombstone))
}

/// The payload a scrubbed journal record keeps: which `FORGOTTEN` record
/// scrubbed it and the SHA-256 of the payload it replaced (so a copy of the
/// old record can still be recognised, never read back).
pub fn scrubbed_payload(old_payload: &Value, forgotten_by: Uuid) -> Value {
    json!({
        "forgotten": {
            "operation_id": forgotten_by.to_string(),
            "payload_sha256": canon::checksum(old_payload),
        }
    })
}

/// Whether a journal payload is a scrub tombstone ([`scrubbed_payload`]).
pub fn is_scrubbed(payload: &Value) -> bool {
    payload
        .as_object()
        .is_some_and(|m| m.len() == 1 && m.contains_key("forgotten"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventInput, InputDefaults};
    use crate::ids::{OwnerId, ScopeId};

    fn event() -> Event {
        let defaults = InputDefaults {
            owner_id: Some(OwnerId::new("alice").unwrap()),
            scope: ScopeId::personal(),
            now: Timestamp::parse("now", "2025-01-01T00:00:00Z").unwrap(),
        };
        EventInput {
            speaker: Some("Alice".into()),
            metadata: Some(json!({"k": "v"})),
            ..EventInput::new("user", "my secret is plum")
        }
        .validate(&defaults)
        .unwrap()
        .event
    }

    #[test]
    fn a_tombstone_verifies_its_erased_event_and_nothing_else() {
        let live = event();
        let at = Timestamp::parse("at", "2025-02-01T00:00:00Z").unwrap();
        let t = Tombstone::new(&live, at, "asked to", Uuid::nil());
        let gone = erased(&live);
        assert!(t.verify(&gone).is_empty(), "{:?}", t.verify(&gone));
        assert_eq!(gone.content_sha256, live.content_sha256);
        assert_eq!(
            t.verify(&live),
            vec!["a tombstone still holds content, speaker or metadata"]
        );
        let mut moved = gone.clone();
        moved.role = crate::Role::Assistant;
        assert_eq!(
            t.verify(&moved),
            vec!["tombstone checksum does not match its fields"]
        );
    }

    #[test]
    fn an_exported_tombstone_imports_only_when_it_verifies() {
        let live = event();
        let at = Timestamp::parse("at", "2025-02-01T00:00:00Z").unwrap();
        let t = Tombstone::new(&live, at, "asked to", Uuid::new_v4());
        let gone = erased(&live);
        let line = EventInput {
            forgotten: Some(ForgottenInput::of(&gone, &t)),
            ..gone.to_input(crate::NodeType::Note)
        };
        let defaults = InputDefaults {
            owner_id: None,
            scope: ScopeId::personal(),
            now: at,
        };
        let (e, back) = from_input(line.clone(), &defaults).unwrap();
        assert_eq!(e, gone);
        assert_eq!(back, t);
        // validate refuses it: only import takes a tombstone.
        assert_eq!(
            line.clone().validate(&defaults).unwrap_err().field,
            "forgotten"
        );
        let mut tampered = line.clone();
        tampered.forgotten.as_mut().unwrap().reason = "other".into();
        assert_eq!(
            from_input(tampered, &defaults).unwrap_err().field,
            "forgotten.checksum"
        );
        let mut with_text = line;
        with_text.content = "back again".into();
        assert_eq!(
            from_input(with_text, &defaults).unwrap_err().field,
            "content"
        );
    }

    #[test]
    fn reasons_are_required_bounded_and_printable() {
        assert!(check_reason("user asked").is_ok());
        assert_eq!(
            check_reason("  ").unwrap_err().to_string(),
            "reason is empty; give a non-empty value"
        );
        assert!(matches!(
            check_reason(&"x".repeat(501)).unwrap_err().kind,
            ValidationErrorKind::TooLong { max: 500, .. }
        ));
        assert!(matches!(
            check_reason("a\nb").unwrap_err().kind,
            ValidationErrorKind::BadCharacter { found: '\n', .. }
        ));
    }

    #[test]
    fn scrubbed_payloads_name_the_record_and_the_old_hash() {
        let old = json!({"quote": "plum"});
        let p = scrubbed_payload(&old, Uuid::nil());
        assert!(is_scrubbed(&p));
        assert!(!is_scrubbed(&old));
        assert!(!p.to_string().contains("plum"));
        assert_eq!(p["forgotten"]["payload_sha256"], canon::checksum(&old));
    }
}
