//! RFC 3339 timestamps that always carry an offset.
//!
//! A timestamp without an offset is ambiguous by hours, so kith refuses it
//! rather than guessing a zone. Stored text keeps the caller's offset (the
//! local time of day matters when rendering "when was this said"); ordering and
//! range filters use the UTC instant ([`Timestamp::unix_millis`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, PrimitiveDateTime};

use crate::validate::{ValidationError, ValidationErrorKind};

/// An instant with the offset it was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp(OffsetDateTime);

impl Timestamp {
    /// Parses RFC 3339 text; `field` names the input for the error.
    pub fn parse(field: &str, text: &str) -> Result<Self, ValidationError> {
        let trimmed = text.trim();
        match OffsetDateTime::parse(trimmed, &Rfc3339) {
            Ok(t) => Ok(Self(t)),
            Err(_) if looks_naive(trimmed) => Err(ValidationError::new(
                field,
                ValidationErrorKind::NaiveTimestamp {
                    value: trimmed.to_string(),
                },
            )),
            Err(_) => Err(ValidationError::new(
                field,
                ValidationErrorKind::BadTimestamp {
                    value: trimmed.to_string(),
                },
            )),
        }
    }

    /// The current time in UTC.
    pub fn now() -> Self {
        Self(OffsetDateTime::now_utc())
    }

    /// Builds a UTC timestamp from milliseconds since the Unix epoch.
    pub fn from_unix_millis(ms: i64) -> Option<Self> {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
            .ok()
            .map(Self)
    }

    /// Milliseconds since the Unix epoch (the UTC instant).
    pub fn unix_millis(&self) -> i64 {
        (self.0.unix_timestamp_nanos() / 1_000_000) as i64
    }

    /// RFC 3339 text in the timestamp's own offset.
    pub fn to_rfc3339(&self) -> String {
        // Formatting a valid OffsetDateTime as RFC 3339 only fails for years
        // outside 0..=9999, which parsing RFC 3339 cannot produce.
        self.0
            .format(&Rfc3339)
            .unwrap_or_else(|_| self.0.unix_timestamp().to_string())
    }

    /// The calendar date in the timestamp's own offset, `YYYY-MM-DD`.
    pub fn date(&self) -> String {
        let d = self.0.date();
        format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
    }

    /// `YYYY-MM-DD HH:MM` in the timestamp's own offset, for people.
    pub fn short(&self) -> String {
        let t = self.0.time();
        format!("{} {:02}:{:02}", self.date(), t.hour(), t.minute())
    }

    /// The inner `time` value.
    pub fn as_offset_date_time(&self) -> OffsetDateTime {
        self.0
    }
}

/// True when `text` is a date-time with no offset ("2024-05-08T13:56:00").
fn looks_naive(text: &str) -> bool {
    let formats = [
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
        time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]"
        ),
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"),
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]"),
    ];
    formats
        .iter()
        .any(|f| PrimitiveDateTime::parse(text, f).is_ok())
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse("timestamp", &text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_required() {
        let t = Timestamp::parse("event_time", "2024-05-08T13:56:00+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2024-05-08T13:56:00+02:00");
        assert_eq!(t.unix_millis(), 1_715_169_360_000);
        assert_eq!(t.date(), "2024-05-08");
        assert_eq!(t.short(), "2024-05-08 13:56");
        Timestamp::parse("event_time", "2024-05-08T11:56:00Z").unwrap();

        let err = Timestamp::parse("event_time", "2024-05-08T13:56:00").unwrap_err();
        assert_eq!(
            err.kind,
            ValidationErrorKind::NaiveTimestamp {
                value: "2024-05-08T13:56:00".into()
            }
        );
        assert!(err
            .to_string()
            .starts_with("event_time is \"2024-05-08T13:56:00\", which has no UTC offset"));

        let err = Timestamp::parse("event_time", "8 May 2024").unwrap_err();
        assert!(matches!(err.kind, ValidationErrorKind::BadTimestamp { .. }));
    }

    #[test]
    fn ordering_uses_the_instant() {
        let a = Timestamp::parse("t", "2024-05-08T13:00:00+02:00").unwrap();
        let b = Timestamp::parse("t", "2024-05-08T12:30:00Z").unwrap();
        assert!(a < b);
        assert_eq!(
            Timestamp::from_unix_millis(a.unix_millis())
                .unwrap()
                .unix_millis(),
            a.unix_millis()
        );
    }
}
