//! Events: immutable source messages, and the caller input they are built from.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::canon;
use crate::ids::{self, OwnerId, ScopeId, SessionId, SourceId, Speaker};
use crate::model::{NodeType, Role};
use crate::timestamp::Timestamp;
use crate::validate::{self, ValidationError, ValidationErrorKind};

/// One immutable source message. Append-only: never updated or deleted by
/// normal operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// [`ids::event_id`] of owner and source id.
    pub id: Uuid,
    /// Whose memory this is.
    pub owner_id: OwnerId,
    /// Namespace inside the owner.
    pub scope: ScopeId,
    /// The conversation, when known.
    pub session_id: Option<SessionId>,
    /// Who produced the message.
    pub role: Role,
    /// The named person behind the turn, when the caller knows it.
    pub speaker: Option<Speaker>,
    /// The message text, exactly as given.
    pub content: String,
    /// Lower-case hex SHA-256 of the UTF-8 content.
    pub content_sha256: String,
    /// When the message was said (source time), when known.
    pub event_time: Option<Timestamp>,
    /// When kith received it.
    pub ingested_at: Timestamp,
    /// Caller metadata (a finite JSON object).
    pub metadata: Option<Value>,
    /// The caller's message id, or a generated `kith:…` one.
    pub source_id: SourceId,
    /// [`Event::compute_checksum`] at write time.
    pub checksum: String,
}

impl Event {
    /// The checksum body: every field but `checksum`, as a JSON object.
    pub fn checksum_body(&self) -> Value {
        json!({
            "id": self.id.to_string(),
            "owner_id": self.owner_id,
            "scope": self.scope,
            "session_id": self.session_id,
            "role": self.role,
            "speaker": self.speaker,
            "content": self.content,
            "content_sha256": self.content_sha256,
            "event_time": self.event_time,
            "ingested_at": self.ingested_at,
            "metadata": self.metadata,
            "source_id": self.source_id,
        })
    }

    /// SHA-256 of the canonical JSON of [`Event::checksum_body`].
    pub fn compute_checksum(&self) -> String {
        canon::checksum(&self.checksum_body())
    }

    /// The event time if known, else the ingestion time: the instant used for
    /// ordering and time-range filters.
    pub fn effective_time(&self) -> Timestamp {
        self.event_time.unwrap_or(self.ingested_at)
    }

    /// Whether the caller declared this turn's singular first person to be
    /// the owner ([`validate::FIRST_PERSON_OWNER_KEY`] in its metadata).
    pub fn declares_first_person_owner(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.get(validate::FIRST_PERSON_OWNER_KEY))
            == Some(&Value::Bool(true))
    }

    /// Writes the `first_person_owner` declaration into the event's
    /// metadata (under [`validate::FIRST_PERSON_OWNER_KEY`]) and recomputes
    /// the checksum, so the declaration is part of the event: its checksum,
    /// its export and its import. For an event not yet written; the caller
    /// has checked it is a user turn without a speaker.
    pub fn declare_first_person_owner(&mut self) {
        let metadata = self.metadata.get_or_insert_with(|| json!({}));
        if let Some(map) = metadata.as_object_mut() {
            map.insert(validate::FIRST_PERSON_OWNER_KEY.into(), Value::Bool(true));
        }
        self.checksum = self.compute_checksum();
    }
}

/// A message as a caller hands it to `store()` or as one line of an import
/// file: plain data, validated by [`EventInput::validate`].
///
/// `event_id` and `checksum` are checks written by `export`: when present
/// they must equal what kith computes, so a tampered export is refused. A
/// line that names an `event_id` must carry its `checksum` too: without
/// it, changed content would import under the original event's id. `ingested_at` restores the original ingestion time on import.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventInput {
    /// The message text.
    pub content: String,
    /// `user`, `participant`, `assistant`, `tool` or `system`.
    pub role: String,
    /// Owner; falls back to the caller's default owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
    /// Scope; falls back to the default scope (`personal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Conversation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Named person behind the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    /// RFC 3339 with offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<String>,
    /// The caller's message id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    /// A JSON object of caller metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Type of the note node (default `note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// Original ingestion time (restore from an export).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingested_at: Option<String>,
    /// Expected event id (written by export, checked on import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Expected checksum (written by export, checked on import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// Set on an exported tombstone (a forgotten event): what the log
    /// keeps of it. Only import accepts it
    /// ([`crate::tombstone::from_input`]); `validate` refuses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten: Option<crate::tombstone::ForgottenInput>,
}

/// Values used where an [`EventInput`] leaves a field out.
#[derive(Debug, Clone)]
pub struct InputDefaults {
    /// Owner for inputs without `owner_id`.
    pub owner_id: Option<OwnerId>,
    /// Scope for inputs without `scope`.
    pub scope: ScopeId,
    /// Ingestion time for inputs without `ingested_at`.
    pub now: Timestamp,
}

/// A validated input: the event to append and the type of its note node.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidEvent {
    /// The event record, checksum included.
    pub event: Event,
    /// The note node's type.
    pub node_type: NodeType,
}

impl EventInput {
    /// An input with just a role and content; set the other fields with
    /// struct update syntax (`EventInput { speaker: …, ..EventInput::new(…) }`).
    pub fn new(role: &str, content: &str) -> Self {
        EventInput {
            content: content.to_string(),
            role: role.to_string(),
            ..EventInput::default()
        }
    }

    /// Parses one line of JSON (an import line). NaN and Infinity are named
    /// with their path; unknown and missing fields are refused.
    pub fn from_json(text: &str) -> Result<Self, ValidationError> {
        if let Some((path, token)) = canon::find_non_finite(text) {
            let field = path.trim_start_matches('.').to_string();
            return Err(ValidationError::new(
                if field.is_empty() {
                    "line".into()
                } else {
                    field
                },
                ValidationErrorKind::NonFinite { value: token },
            ));
        }
        let value: Value = serde_json::from_str(text).map_err(|err| {
            ValidationError::new(
                "line",
                ValidationErrorKind::InvalidJson {
                    reason: err.to_string(),
                },
            )
        })?;
        if !value.is_object() {
            return Err(ValidationError::new(
                "line",
                ValidationErrorKind::WrongType {
                    found: json_type_name(&value).into(),
                    expected: "one JSON object (one message) a line".into(),
                },
            ));
        }
        serde_path_to_error::deserialize(value).map_err(|err| {
            let path = err.path().to_string();
            field_error(&path, &err.into_inner().to_string())
        })
    }

    /// Validates every field and builds the event. Nothing is written.
    pub fn validate(self, defaults: &InputDefaults) -> Result<ValidEvent, ValidationError> {
        // The checks run field by field in a fixed order: the first failing
        // field is the one reported, so the order is part of the contract.
        if self.forgotten.is_some() {
            return Err(ValidationError::new(
                "forgotten",
                ValidationErrorKind::Mismatch {
                    expected: "no tombstone: only an import of an export carries one".into(),
                    actual: "a tombstone".into(),
                },
            ));
        }
        validate::check_content(&self.content)?;
        let role = Role::parse("role", &self.role)?;
        let owner_id = owner_or_default(self.owner_id, defaults)?;
        let scope = match self.scope {
            Some(s) => ScopeId::new(s)?,
            None => defaults.scope.clone(),
        };
        let session_id = self.session_id.map(SessionId::new).transpose()?;
        let speaker = checked_speaker(self.speaker)?;
        let event_time = self
            .event_time
            .as_deref()
            .map(|t| Timestamp::parse("event_time", t))
            .transpose()?;
        let ingested_at = match self.ingested_at.as_deref() {
            Some(t) => Timestamp::parse("ingested_at", t)?,
            None => defaults.now,
        };
        if let Some(metadata) = &self.metadata {
            check_input_metadata(metadata, &role, speaker.is_some())?;
        }
        let node_type = match self.node_type.as_deref() {
            Some(t) => NodeType::parse("node_type", t)?,
            None => NodeType::Note,
        };
        let source_id = source_id_or_generated(self.source_id)?;
        let id = ids::event_id(&owner_id, &source_id);
        check_claimed_id(self.event_id.as_ref(), self.checksum.is_some(), &id)?;
        let content_sha256 = canon::sha256_hex(self.content.as_bytes());
        let mut event = Event {
            id,
            owner_id,
            scope,
            session_id,
            role,
            speaker,
            content: self.content,
            content_sha256,
            event_time,
            ingested_at,
            metadata: self.metadata,
            source_id,
            checksum: String::new(),
        };
        event.checksum = event.compute_checksum();
        if let Some(expected) = &self.checksum {
            check_claimed_checksum(expected, &event.checksum)?;
        }
        Ok(ValidEvent { event, node_type })
    }
}

/// The input's owner, or the defaults' when it names none.
fn owner_or_default(
    owner_id: Option<String>,
    defaults: &InputDefaults,
) -> Result<OwnerId, ValidationError> {
    match owner_id {
        Some(o) => Ok(OwnerId::new(o)?),
        None => defaults
            .owner_id
            .clone()
            .ok_or_else(|| ValidationError::new("owner_id", ValidationErrorKind::Empty)),
    }
}

/// The input's speaker, checked as an input label first.
fn checked_speaker(speaker: Option<String>) -> Result<Option<Speaker>, ValidationError> {
    if let Some(speaker) = &speaker {
        validate::check_input_label("speaker", speaker, validate::MAX_SPEAKER_LEN)?;
    }
    speaker.map(Speaker::new).transpose()
}

/// Checks the input's metadata, and that only a user turn without a
/// speaker declares the first-person owner.
fn check_input_metadata(
    metadata: &Value,
    role: &Role,
    has_speaker: bool,
) -> Result<(), ValidationError> {
    validate::check_metadata(metadata)?;
    if metadata.get(validate::FIRST_PERSON_OWNER_KEY).is_some()
        && (*role != Role::User || has_speaker)
    {
        return Err(ValidationError::new(
            format!("metadata.{}", validate::FIRST_PERSON_OWNER_KEY),
            ValidationErrorKind::Mismatch {
                expected: "a user turn without a speaker".into(),
                actual: "set on another turn".into(),
            },
        ));
    }
    Ok(())
}

/// The input's source id, checked as an input label, or a generated one.
fn source_id_or_generated(source_id: Option<String>) -> Result<SourceId, ValidationError> {
    match source_id {
        Some(s) => {
            validate::check_input_label("source_id", &s, validate::MAX_SOURCE_ID_LEN)?;
            Ok(SourceId::new(s)?)
        }
        None => Ok(ids::generated_source_id()),
    }
}

/// Checks a claimed event id: it comes with a checksum, and it is `id`.
fn check_claimed_id(
    claimed: Option<&String>,
    has_checksum: bool,
    id: &Uuid,
) -> Result<(), ValidationError> {
    if claimed.is_some() && !has_checksum {
        return Err(ValidationError::new(
            "checksum",
            ValidationErrorKind::Required {
                because: "a line that names an event_id must carry that event's checksum \
                          (export writes both); remove event_id to import the line as a \
                          new message",
            },
        ));
    }
    if let Some(expected) = claimed {
        if expected != &id.to_string() {
            return Err(ValidationError::new(
                "event_id",
                ValidationErrorKind::Mismatch {
                    expected: id.to_string(),
                    actual: expected.clone(),
                },
            ));
        }
    }
    Ok(())
}

/// Checks a claimed checksum against the event's own.
fn check_claimed_checksum(claimed: &str, actual: &str) -> Result<(), ValidationError> {
    if claimed != actual {
        return Err(ValidationError::new(
            "checksum",
            ValidationErrorKind::Mismatch {
                expected: actual.to_string(),
                actual: claimed.to_string(),
            },
        ));
    }
    Ok(())
}

impl Event {
    /// The export form of this event: an [`EventInput`] that validates back
    /// into an identical event (same id, same checksum).
    pub fn to_input(&self, node_type: NodeType) -> EventInput {
        EventInput {
            content: self.content.clone(),
            role: self.role.as_str().to_string(),
            owner_id: Some(self.owner_id.as_str().to_string()),
            scope: Some(self.scope.as_str().to_string()),
            session_id: self.session_id.as_ref().map(|s| s.as_str().to_string()),
            speaker: self.speaker.as_ref().map(|s| s.as_str().to_string()),
            event_time: self.event_time.map(|t| t.to_rfc3339()),
            source_id: Some(self.source_id.as_str().to_string()),
            metadata: self.metadata.clone(),
            node_type: (node_type != NodeType::Note).then(|| node_type.as_str().to_string()),
            ingested_at: Some(self.ingested_at.to_rfc3339()),
            event_id: Some(self.id.to_string()),
            checksum: Some(self.checksum.clone()),
            forgotten: None,
        }
    }
}

/// What a JSON value is, as an error message names it.
fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a JSON array",
        Value::Object(_) => "a JSON object",
    }
}

/// Turns serde's message about one field of an input line into an error
/// that names the field: serde reports a missing field at its parent
/// (`missing field `role``) and a wrong type without the field's name.
fn field_error(path: &str, message: &str) -> ValidationError {
    let at = |field: &str| {
        if path.is_empty() || path == "." {
            field.to_string()
        } else {
            format!("{path}.{field}")
        }
    };
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return ValidationError::new(at(field), ValidationErrorKind::Missing);
    }
    // serde names an unknown field in its message; the path would say it twice.
    let field = if path.is_empty() || path == "." || message.starts_with("unknown field") {
        "line".to_string()
    } else {
        path.to_string()
    };
    if let Some((found, expected)) = message
        .strip_prefix("invalid type: ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        return ValidationError::new(
            field,
            ValidationErrorKind::WrongType {
                found: found.into(),
                expected: expected.into(),
            },
        );
    }
    ValidationError::new(
        field,
        ValidationErrorKind::Refused {
            reason: message.into(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> InputDefaults {
        InputDefaults {
            owner_id: Some(OwnerId::new("alice").unwrap()),
            scope: ScopeId::personal(),
            now: Timestamp::parse("now", "2025-01-01T00:00:00Z").unwrap(),
        }
    }

    fn input(content: &str) -> EventInput {
        EventInput {
            content: content.into(),
            role: "user".into(),
            source_id: Some("m1".into()),
            ..EventInput::default()
        }
    }

    #[test]
    fn validated_event_has_ids_and_checksums() {
        let v = input("I moved to Lisbon.").validate(&defaults()).unwrap();
        let e = &v.event;
        assert_eq!(e.id, ids::event_id(&e.owner_id, &e.source_id));
        assert_eq!(e.content_sha256, canon::sha256_hex(b"I moved to Lisbon."));
        assert_eq!(e.checksum, e.compute_checksum());
        assert_eq!(v.node_type, NodeType::Note);
        assert_eq!(e.scope.as_str(), "personal");
    }

    #[test]
    fn export_form_validates_back_to_the_same_event() {
        let mut i = input("hello");
        i.metadata = Some(serde_json::json!({"b": 1, "a": [true, null]}));
        i.event_time = Some("2024-05-08T13:56:00+02:00".into());
        i.speaker = Some("Maya".into());
        let e = i.validate(&defaults()).unwrap().event;
        let back = e.to_input(NodeType::Note);
        let line = serde_json::to_string(&back).unwrap();
        let again = EventInput::from_json(&line)
            .unwrap()
            .validate(&InputDefaults {
                owner_id: None,
                ..defaults()
            })
            .unwrap()
            .event;
        assert_eq!(again, e);
    }

    #[test]
    fn checksum_covers_every_field() {
        let e = input("hello").validate(&defaults()).unwrap().event;
        let mut changed = e.clone();
        changed.content.push('!');
        assert_ne!(changed.compute_checksum(), e.checksum);
        let mut changed = e.clone();
        changed.role = Role::Assistant;
        assert_ne!(changed.compute_checksum(), e.checksum);
    }

    #[test]
    fn tampered_export_is_refused() {
        let e = input("hello").validate(&defaults()).unwrap().event;
        let mut back = e.to_input(NodeType::Note);
        back.content = "hullo".into();
        let err = back.validate(&defaults()).unwrap_err();
        assert_eq!(err.field, "checksum");
    }

    /// Issue 20 item 6: names are validated alike; a right-to-left override
    /// in a new speaker or source id is refused (stored ones still read).
    #[test]
    fn bidi_overrides_in_new_names_are_refused() {
        for (field, input) in [
            (
                "speaker",
                EventInput {
                    speaker: Some("Maya\u{202e}".into()),
                    ..input("x")
                },
            ),
            (
                "source_id",
                EventInput {
                    source_id: Some("id\u{2066}1".into()),
                    ..input("x")
                },
            ),
        ] {
            let err = input.validate(&defaults()).unwrap_err();
            assert_eq!(err.field, field);
            assert!(matches!(err.kind, ValidationErrorKind::BadCharacter { .. }));
        }
    }

    /// Issue 20 item 4: deleting the checksum no longer lets changed
    /// content through under the original id.
    #[test]
    fn an_event_id_without_its_checksum_is_refused() {
        let e = input("hello").validate(&defaults()).unwrap().event;
        let mut back = e.to_input(NodeType::Note);
        back.content = "hullo".into();
        back.checksum = None;
        let err = back.clone().validate(&defaults()).unwrap_err();
        assert_eq!(err.field, "checksum");
        assert!(matches!(err.kind, ValidationErrorKind::Required { .. }));
        assert!(err
            .to_string()
            .starts_with("checksum is missing; a line that names an event_id"));
        // Without the id it is just a new message.
        back.event_id = None;
        assert!(back.validate(&defaults()).is_ok());
    }

    #[test]
    fn bad_inputs_are_typed() {
        let cases: Vec<(EventInput, &str)> = vec![
            (input(""), "content"),
            (
                EventInput {
                    role: "robot".into(),
                    ..input("x")
                },
                "role",
            ),
            (
                EventInput {
                    event_time: Some("2024-05-08T13:56:00".into()),
                    ..input("x")
                },
                "event_time",
            ),
            (
                EventInput {
                    scope: Some("bad scope".into()),
                    ..input("x")
                },
                "scope",
            ),
            (
                EventInput {
                    metadata: Some(serde_json::json!("text")),
                    ..input("x")
                },
                "metadata",
            ),
            (
                EventInput {
                    node_type: Some("memo".into()),
                    ..input("x")
                },
                "node_type",
            ),
        ];
        for (i, field) in cases {
            assert_eq!(i.validate(&defaults()).unwrap_err().field, field);
        }
        let no_owner = InputDefaults {
            owner_id: None,
            ..defaults()
        };
        assert_eq!(
            input("x").validate(&no_owner).unwrap_err().field,
            "owner_id"
        );
    }

    #[test]
    fn json_lines_are_strict() {
        let err =
            EventInput::from_json(r#"{"content":"x","role":"user","colour":"red"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `colour`"), "{err}");
        let err =
            EventInput::from_json(r#"{"content":"x","role":"user","metadata":{"score":NaN}}"#)
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "metadata.score is NaN; JSON numbers must be finite"
        );
    }

    #[test]
    fn a_bad_line_names_what_is_wrong() {
        let cases = [
            (r#"{"role":"user"}"#, "content is missing; it is required"),
            (r#"{"content":"x"}"#, "role is missing; it is required"),
            (
                r#"[{"content":"x","role":"user"}]"#,
                "line is a JSON array; expected one JSON object (one message) a line",
            ),
            (
                r#""hello""#,
                "line is a string; expected one JSON object (one message) a line",
            ),
            (
                r#"{"content":"x","role":5}"#,
                "role is integer `5`; expected a string",
            ),
            (
                r#"{"content":"x","role":"user","speaker":["a"]}"#,
                "speaker is sequence; expected a string",
            ),
            (
                r#"{"content":"x","role":"user","colour":"red"}"#,
                "line is refused: unknown field `colour`, expected one of `content`, `role`, \
                 `owner_id`, `scope`, `session_id`, `speaker`, `event_time`, `source_id`, \
                 `metadata`, `node_type`, `ingested_at`, `event_id`, `checksum`, `forgotten`",
            ),
            (
                r#"{"content": "x", "role": "#,
                "line is not valid JSON: EOF while parsing a value at line 1 column 25",
            ),
        ];
        for (line, message) in cases {
            let err = EventInput::from_json(line).unwrap_err();
            assert_eq!(err.to_string(), message, "{line}");
        }
    }
}
