//! Identifier newtypes and the UUIDv5 formulas behind deterministic ids.
//!
//! Every formula (also in docs/internals/formats.md) hashes a name under
//! [`kith_namespace`], itself `uuid5(NAMESPACE_URL, "https://kith.invalid/ns/v1")`.
//! Variable-length inputs are length-prefixed (`{len}:{value}`) so that no
//! value can forge a delimiter: owner `a:b` with source `c` never collides with
//! owner `a` and source `b:c`.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::validate::{check_id, check_label, ValidationError, MAX_SOURCE_ID_LEN, MAX_SPEAKER_LEN};

/// The namespace every kith UUIDv5 is derived under.
pub fn kith_namespace() -> Uuid {
    Uuid::new_v5(&Uuid::NAMESPACE_URL, b"https://kith.invalid/ns/v1")
}

fn v5(name: &str) -> Uuid {
    v5_name(name)
}

/// `uuid5(KITH_NS, name)`: the one way every kith id is derived. Callers
/// document their `name` formula beside the function that builds it.
pub fn v5_name(name: &str) -> Uuid {
    Uuid::new_v5(&kith_namespace(), name.as_bytes())
}

/// `uuid5(KITH_NS, "event:v1:{len(owner)}:{owner}:{len(source_id)}:{source_id}")`,
/// lengths in bytes. The caller's message id makes the event id, so storing
/// the same message twice finds the first copy.
pub fn event_id(owner: &OwnerId, source_id: &SourceId) -> Uuid {
    let (o, s) = (owner.as_str(), source_id.as_str());
    v5(&format!("event:v1:{}:{o}:{}:{s}", o.len(), s.len()))
}

/// `uuid5(KITH_NS, "node:note:v1:{event_id}")`: the note node that `store()`
/// writes for an event.
pub fn note_node_id(event_id: Uuid) -> Uuid {
    v5(&format!("node:note:v1:{event_id}"))
}

/// A fresh caller-independent message id, `kith:{uuid4}`, for events stored
/// without one. Export writes it out, so a re-import keeps the event id.
pub fn generated_source_id() -> SourceId {
    SourceId(format!("kith:{}", Uuid::new_v4().simple()))
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $field:literal, $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Validates and wraps `value`.
            pub fn new(value: impl Into<String>) -> Result<Self, ValidationError> {
                let value = value.into();
                let check: fn(&str, &str) -> Result<(), ValidationError> = $check;
                check($field, &value)?;
                Ok(Self(value))
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = String::deserialize(d)?;
                Self::new(value).map_err(serde::de::Error::custom)
            }
        }
    };
}

string_id!(
    /// The account whose memory this is: the tenancy boundary.
    OwnerId, "owner_id", check_id
);
string_id!(
    /// A namespace inside an owner (`personal`, `project:apollo`).
    ScopeId, "scope", check_id
);
string_id!(
    /// One conversation.
    SessionId, "session_id", check_id
);
string_id!(
    /// The caller's id for a message; makes `store()` idempotent.
    SourceId, "source_id", |f, v| check_label(f, v, MAX_SOURCE_ID_LEN)
);
string_id!(
    /// The named person behind a turn.
    Speaker, "speaker", |f, v| check_label(f, v, MAX_SPEAKER_LEN)
);

impl ScopeId {
    /// The default scope, `personal`.
    pub fn personal() -> Self {
        Self("personal".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(s: &str) -> OwnerId {
        OwnerId::new(s).unwrap()
    }
    fn source(s: &str) -> SourceId {
        SourceId::new(s).unwrap()
    }

    #[test]
    fn event_ids_follow_the_documented_formula() {
        let expected = Uuid::new_v5(
            &Uuid::new_v5(&Uuid::NAMESPACE_URL, b"https://kith.invalid/ns/v1"),
            b"event:v1:5:alice:4:m-17",
        );
        assert_eq!(event_id(&owner("alice"), &source("m-17")), expected);
        assert_eq!(expected.get_version_num(), 5);
    }

    #[test]
    fn delimiters_cannot_be_forged() {
        assert_ne!(
            event_id(&owner("a:b"), &source("c")),
            event_id(&owner("a"), &source("b:c"))
        );
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let e = event_id(&owner("alice"), &source("m-1"));
        assert_eq!(e, event_id(&owner("alice"), &source("m-1")));
        assert_ne!(e, event_id(&owner("bob"), &source("m-1")));
        assert_eq!(note_node_id(e), note_node_id(e));
        assert_ne!(note_node_id(e), e);
        assert_ne!(generated_source_id(), generated_source_id());
    }

    #[test]
    fn newtypes_validate_on_deserialize() {
        let err = serde_json::from_str::<OwnerId>("\"no spaces\"").unwrap_err();
        assert!(err.to_string().contains("owner_id contains ' '"), "{err}");
        let ok: ScopeId = serde_json::from_str("\"project:apollo\"").unwrap();
        assert_eq!(ok.as_str(), "project:apollo");
    }
}
