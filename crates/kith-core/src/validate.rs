//! Validation errors and the limits they enforce.
//!
//! Every rule that judges caller input lives beside its error here, so the
//! whole contract of "what kith accepts" reads in one place:
//!
//! | input | rule |
//! |---|---|
//! | `content` | non-empty after trimming, at most [`MAX_CONTENT_BYTES`] bytes of UTF-8 |
//! | `owner_id`, `scope`, `session_id` | 1–[`MAX_ID_LEN`] characters from [`ID_CHARSET`] |
//! | `speaker` | 1–[`MAX_SPEAKER_LEN`] characters after trimming, no control characters; new input also no bidirectional overrides ([`check_input_label`]) |
//! | `source_id` | 1–[`MAX_SOURCE_ID_LEN`] characters, no control characters; new input also no bidirectional overrides |
//! | timestamps | RFC 3339 with an explicit offset (`Z` or `±hh:mm`) |
//! | `metadata` | a JSON object, finite numbers only, at most [`MAX_METADATA_BYTES`] canonical bytes, no key starting with `kith_` (reserved) |

use std::fmt;

/// Largest accepted message content, in bytes of UTF-8 (64 KiB).
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;
/// Largest accepted metadata object, in bytes of its canonical JSON (64 KiB).
pub const MAX_METADATA_BYTES: usize = 64 * 1024;
/// Longest owner, scope or session id, in characters.
pub const MAX_ID_LEN: usize = 128;
/// Longest speaker name, in characters.
pub const MAX_SPEAKER_LEN: usize = 200;
/// Longest caller message id (`source_id`), in characters.
pub const MAX_SOURCE_ID_LEN: usize = 256;
/// The characters allowed in owner, scope and session ids, as prose for error messages.
pub const ID_CHARSET: &str = "ASCII letters, digits and . _ - : @";
/// Metadata keys with this prefix are reserved for kith's own bookkeeping.
pub const RESERVED_METADATA_PREFIX: &str = "kith_";

/// The one reserved key an event may carry: `true` when the caller declared
/// that the turn's singular first person is the owner (`first_person_owner`).
/// kith writes it when ingesting with the declaration, so the declaration is
/// part of the event and survives export and import; only the value `true`
/// on a user turn without a speaker is valid.
pub const FIRST_PERSON_OWNER_KEY: &str = "kith_first_person_owner_v1";

/// A field of caller input that kith refuses, and why.
///
/// Displays as a sentence naming the field and the fix, e.g.
/// `metadata.score is NaN; JSON numbers must be finite`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// The field, as a path (`metadata.score`, `event_time`, `role`).
    pub field: String,
    /// What is wrong with it.
    pub kind: ValidationErrorKind,
}

impl ValidationError {
    /// Builds an error for `field`.
    pub fn new(field: impl Into<String>, kind: ValidationErrorKind) -> Self {
        Self {
            field: field.into(),
            kind,
        }
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.field, self.kind)
    }
}

impl std::error::Error for ValidationError {}

/// The ways a field can be wrong. Each displays as the predicate of a
/// sentence whose subject is the field name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValidationErrorKind {
    /// Required and missing, or blank.
    Empty,
    /// Longer than allowed.
    TooLong {
        /// The limit.
        max: usize,
        /// What was given.
        actual: usize,
        /// The unit of both numbers ("bytes", "characters").
        unit: &'static str,
    },
    /// Contains a character outside the allowed set.
    BadCharacter {
        /// The first offending character.
        found: char,
        /// The allowed set, as prose.
        allowed: &'static str,
    },
    /// NaN, Infinity or a number that overflows an f64.
    NonFinite {
        /// The offending token as written.
        value: String,
    },
    /// A timestamp without an offset.
    NaiveTimestamp {
        /// The timestamp as written.
        value: String,
    },
    /// Not an RFC 3339 timestamp at all.
    BadTimestamp {
        /// The timestamp as written.
        value: String,
    },
    /// Not one of the known values of an enum.
    UnknownValue {
        /// What was given.
        value: String,
        /// The accepted values, as prose.
        expected: &'static str,
    },
    /// Metadata that is JSON but not an object.
    NotAnObject,
    /// A metadata key with the reserved prefix.
    ReservedKey {
        /// The key.
        key: String,
    },
    /// Text that is not JSON.
    InvalidJson {
        /// The parser's explanation.
        reason: String,
    },
    /// A required field that is absent.
    Missing,
    /// A value of the wrong JSON type (an array where an object belongs,
    /// a number where a string belongs).
    WrongType {
        /// What was given ("a JSON array", "integer `5`").
        found: String,
        /// What belongs there.
        expected: String,
    },
    /// Refused for a reason the parser gives (an unknown field).
    Refused {
        /// The parser's explanation.
        reason: String,
    },
    /// Missing, though another field makes it required.
    Required {
        /// Why it is required, as the end of a sentence.
        because: &'static str,
    },
    /// An import line for another owner than the import's.
    ForeignOwner {
        /// The owner the line names.
        named: String,
        /// The owner the import is for.
        importing_for: String,
    },
    /// Two fields that contradict each other.
    Mismatch {
        /// What the other field implies.
        expected: String,
        /// What this field holds.
        actual: String,
    },
}

impl fmt::Display for ValidationErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "is empty; give a non-empty value"),
            Self::TooLong { max, actual, unit } => {
                write!(f, "is {actual} {unit} long; the limit is {max} {unit}")
            }
            Self::BadCharacter { found, allowed } => {
                write!(f, "contains {found:?}; use only {allowed}")
            }
            Self::NonFinite { value } => {
                write!(f, "is {value}; JSON numbers must be finite")
            }
            Self::NaiveTimestamp { value } => write!(
                f,
                "is {value:?}, which has no UTC offset; add one, e.g. \"{value}Z\" or \"{value}+02:00\""
            ),
            Self::BadTimestamp { value } => write!(
                f,
                "is {value:?}, which is not an RFC 3339 timestamp (e.g. \"2024-05-08T13:56:00+02:00\")"
            ),
            Self::UnknownValue { value, expected } => {
                write!(f, "is {value:?}; expected one of {expected}")
            }
            Self::NotAnObject => write!(f, "must be a JSON object"),
            Self::ReservedKey { key } => write!(
                f,
                "uses the reserved key {key:?}; keys starting with \"{RESERVED_METADATA_PREFIX}\" belong to kith"
            ),
            Self::InvalidJson { reason } => write!(f, "is not valid JSON: {reason}"),
            Self::Missing => write!(f, "is missing; it is required"),
            Self::WrongType { found, expected } => write!(f, "is {found}; expected {expected}"),
            Self::Refused { reason } => write!(f, "is refused: {reason}"),
            Self::Required { because } => write!(f, "is missing; {because}"),
            Self::ForeignOwner {
                named,
                importing_for,
            } => write!(
                f,
                "is {named:?}, but this import is for owner {importing_for:?}; nothing was \
                 written. Import another owner's lines as that owner (--owner {named}), or \
                 every owner's with `kith import --all-owners`"
            ),
            Self::Mismatch { expected, actual } => {
                write!(f, "is {actual}, but the other fields give {expected}")
            }
        }
    }
}

/// Checks an owner, scope or session id: 1–[`MAX_ID_LEN`] characters from [`ID_CHARSET`].
pub fn check_id(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.is_empty() {
        return Err(ValidationError::new(field, ValidationErrorKind::Empty));
    }
    let len = value.chars().count();
    if len > MAX_ID_LEN {
        return Err(ValidationError::new(
            field,
            ValidationErrorKind::TooLong {
                max: MAX_ID_LEN,
                actual: len,
                unit: "characters",
            },
        ));
    }
    if let Some(found) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@')))
    {
        return Err(ValidationError::new(
            field,
            ValidationErrorKind::BadCharacter {
                found,
                allowed: ID_CHARSET,
            },
        ));
    }
    Ok(())
}

/// Checks free text that names something (speaker, source id): non-empty,
/// at most `max` characters, no control characters.
pub fn check_label(field: &str, value: &str, max: usize) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        return Err(ValidationError::new(field, ValidationErrorKind::Empty));
    }
    let len = value.chars().count();
    if len > max {
        return Err(ValidationError::new(
            field,
            ValidationErrorKind::TooLong {
                max,
                actual: len,
                unit: "characters",
            },
        ));
    }
    if let Some(found) = value.chars().find(|c| c.is_control()) {
        return Err(ValidationError::new(
            field,
            ValidationErrorKind::BadCharacter {
                found,
                allowed: "printable characters",
            },
        ));
    }
    Ok(())
}

/// [`check_label`] for new input: also refuses bidirectional overrides,
/// embeddings and isolates, which make a name display as other text than
/// it is ("alice\u{202e}moc.evil"). Applied where input enters (a message's
/// speaker and source id, an extracted entity's name), not when stored rows
/// are read back, so a pack that holds such a name from before still opens.
pub fn check_input_label(field: &str, value: &str, max: usize) -> Result<(), ValidationError> {
    check_label(field, value, max)?;
    if let Some(found) = value.chars().find(|c| is_bidi_control(*c)) {
        return Err(ValidationError::new(
            field,
            ValidationErrorKind::BadCharacter {
                found,
                allowed: "printable characters without bidirectional overrides",
            },
        ));
    }
    Ok(())
}

/// The bidirectional embedding, override and isolate characters
/// (U+202A–U+202E, U+2066–U+2069).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Checks message content: not blank, at most [`MAX_CONTENT_BYTES`] bytes.
pub fn check_content(value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        return Err(ValidationError::new("content", ValidationErrorKind::Empty));
    }
    if value.len() > MAX_CONTENT_BYTES {
        return Err(ValidationError::new(
            "content",
            ValidationErrorKind::TooLong {
                max: MAX_CONTENT_BYTES,
                actual: value.len(),
                unit: "bytes",
            },
        ));
    }
    Ok(())
}

/// Checks metadata: an object, finite, not too large, no reserved keys.
pub fn check_metadata(value: &serde_json::Value) -> Result<(), ValidationError> {
    let map = value
        .as_object()
        .ok_or_else(|| ValidationError::new("metadata", ValidationErrorKind::NotAnObject))?;
    crate::canon::ensure_finite("metadata", value)?;
    let reserved = map.iter().find(|(k, v)| {
        k.starts_with(RESERVED_METADATA_PREFIX)
            && !(k.as_str() == FIRST_PERSON_OWNER_KEY && **v == serde_json::Value::Bool(true))
    });
    if let Some((key, _)) = reserved {
        return Err(ValidationError::new(
            format!("metadata.{key}"),
            ValidationErrorKind::ReservedKey { key: key.clone() },
        ));
    }
    let size = crate::canon::to_canonical_string(value).len();
    if size > MAX_METADATA_BYTES {
        return Err(ValidationError::new(
            "metadata",
            ValidationErrorKind::TooLong {
                max: MAX_METADATA_BYTES,
                actual: size,
                unit: "bytes",
            },
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_follow_the_charset() {
        for ok in [
            "alice",
            "project:apollo",
            "user@example.com",
            "a.b_c-d",
            "X",
        ] {
            check_id("owner_id", ok).unwrap();
        }
        let cases = [
            ("", ValidationErrorKind::Empty),
            (
                "has space",
                ValidationErrorKind::BadCharacter {
                    found: ' ',
                    allowed: ID_CHARSET,
                },
            ),
            (
                "a/b",
                ValidationErrorKind::BadCharacter {
                    found: '/',
                    allowed: ID_CHARSET,
                },
            ),
            (
                "café",
                ValidationErrorKind::BadCharacter {
                    found: 'é',
                    allowed: ID_CHARSET,
                },
            ),
        ];
        for (input, kind) in cases {
            assert_eq!(
                check_id("owner_id", input).unwrap_err().kind,
                kind,
                "{input:?}"
            );
        }
        let long = "a".repeat(MAX_ID_LEN + 1);
        assert!(matches!(
            check_id("scope", &long).unwrap_err().kind,
            ValidationErrorKind::TooLong { actual: 129, .. }
        ));
    }

    #[test]
    fn content_limits() {
        assert_eq!(
            check_content("  \n").unwrap_err().kind,
            ValidationErrorKind::Empty
        );
        check_content(&"x".repeat(MAX_CONTENT_BYTES)).unwrap();
        let err = check_content(&"x".repeat(MAX_CONTENT_BYTES + 1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "content is 65537 bytes long; the limit is 65536 bytes"
        );
    }

    #[test]
    fn metadata_rules() {
        check_metadata(&json!({"channel": "slack", "n": 1.5})).unwrap();
        assert_eq!(
            check_metadata(&json!([1, 2])).unwrap_err().kind,
            ValidationErrorKind::NotAnObject
        );
        let err = check_metadata(&json!({"kith_speaker": "x"})).unwrap_err();
        assert_eq!(err.field, "metadata.kith_speaker");
        let big = json!({"blob": "x".repeat(MAX_METADATA_BYTES)});
        assert!(matches!(
            check_metadata(&big).unwrap_err().kind,
            ValidationErrorKind::TooLong { .. }
        ));
    }

    #[test]
    fn labels_reject_control_characters() {
        check_label("speaker", "Maya Okafor", MAX_SPEAKER_LEN).unwrap();
        for bidi in ["Maya\u{202e}moc", "\u{2066}Maya", "Ma\u{202a}ya"] {
            // Stored rows still decode; new input is refused.
            check_label("speaker", bidi, MAX_SPEAKER_LEN).unwrap();
            let err = check_input_label("speaker", bidi, MAX_SPEAKER_LEN).unwrap_err();
            assert!(
                matches!(err.kind, ValidationErrorKind::BadCharacter { .. }),
                "{bidi:?}"
            );
        }
        assert!(matches!(
            check_label("speaker", "Maya\u{0}", MAX_SPEAKER_LEN)
                .unwrap_err()
                .kind,
            ValidationErrorKind::BadCharacter { found: '\u{0}', .. }
        ));
        assert_eq!(
            check_label("speaker", "   ", MAX_SPEAKER_LEN)
                .unwrap_err()
                .kind,
            ValidationErrorKind::Empty
        );
    }
}
