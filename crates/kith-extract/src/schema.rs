//! The extraction response schema and its strict parser.
//!
//! ```json
//! {"entities": [{"name": "...", "entity_type": "person", "description": "..."}],
//!  "facts": [{"subject": "...", "subject_entity_type": "...", "predicate": "...",
//!             "object": "...", "object_entity_type": "...", "polarity": "positive",
//!             "evidence_quote": "verbatim", "fact_type": "fact", "epistemic_type": "asserted",
//!             "temporal_intent": null, "replaces_object": null, "condition": null,
//!             "confidence": 0.9}],
//!  "relationships": [{"source_entity": "...", "target_entity": "...",
//!                     "relationship_type": "...", "polarity": "positive",
//!                     "evidence_quote": "...", "confidence": 0.8}]}
//! ```
//!
//! `docs/extraction.md` documents every field. Parsing is strict: unknown
//! fields, wrong types, unknown enum values, blank required strings and
//! confidences outside [0, 1] are refused with the path of the first problem.
//! A missing top-level array counts as empty (models often omit empty lists).

use kith_core::EpistemicType;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ExtractError;

/// One extraction: what a provider read in one message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extraction {
    /// Named things the message mentions.
    #[serde(default)]
    pub entities: Vec<ExtractedEntity>,
    /// Claims: subject, predicate, object, with a verbatim quote.
    #[serde(default)]
    pub facts: Vec<ExtractedFact>,
    /// Links between two entities, with a verbatim quote.
    #[serde(default)]
    pub relationships: Vec<ExtractedRelationship>,
}

/// An entity as extracted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractedEntity {
    /// The name as written in the message.
    pub name: String,
    /// `person`, `organization`, `place`, `product`, … (lower case).
    pub entity_type: String,
    /// A short description, when the message gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Whether a claim asserts or denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Polarity {
    /// It is so.
    Positive,
    /// It is not so.
    Negative,
}

/// The kind of claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FactType {
    /// A statement about the world.
    Fact,
    /// A like or dislike.
    Preference,
    /// A choice that was made.
    Decision,
}

/// Whether a claim updates an earlier value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TemporalIntent {
    /// It replaces what was true before (see `replaces_object`).
    Update,
    /// A plain assertion.
    Assertion,
}

/// A claim as extracted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractedFact {
    /// Who or what the claim is about: a listed entity's name, or a
    /// personal reference (I, we, …).
    pub subject: String,
    /// The subject's entity type, to tell namesakes apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_entity_type: Option<String>,
    /// What is said of it (`works_at`, `prefers`).
    pub predicate: String,
    /// The value or entity it is said of.
    pub object: String,
    /// The object's entity type, when the object is an entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_entity_type: Option<String>,
    /// Asserted or denied.
    pub polarity: Polarity,
    /// The sentence(s) it comes from, verbatim.
    pub evidence_quote: String,
    /// Fact, preference or decision.
    pub fact_type: FactType,
    /// How it is known.
    pub epistemic_type: EpistemicType,
    /// Whether it updates an earlier value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temporal_intent: Option<TemporalIntent>,
    /// The value an update replaces, verbatim from the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces_object: Option<String>,
    /// The condition under which it holds, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// The provider's confidence in [0, 1].
    pub confidence: f64,
}

/// A relationship as extracted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractedRelationship {
    /// A listed entity's name (or a personal reference).
    pub source_entity: String,
    /// A listed entity's name (or a personal reference).
    pub target_entity: String,
    /// What links them (`partner_of`, `works_with`).
    pub relationship_type: String,
    /// Asserted or denied.
    pub polarity: Polarity,
    /// The sentence(s) it comes from, verbatim.
    pub evidence_quote: String,
    /// How it is known (default `unverified`).
    #[serde(default = "unverified")]
    pub epistemic_type: EpistemicType,
    /// The provider's confidence in [0, 1].
    pub confidence: f64,
}

fn unverified() -> EpistemicType {
    EpistemicType::Unverified
}

impl Extraction {
    /// Parses reply text strictly (see the module documentation).
    pub fn parse(text: &str) -> Result<Extraction, ExtractError> {
        if let Some((path, token)) = kith_core::canon::find_non_finite(text) {
            return Err(ExtractError::Malformed {
                path: path.trim_start_matches('.').to_string(),
                reason: format!("{token} is not a finite number"),
            });
        }
        let value: Value =
            serde_json::from_str(text.trim()).map_err(|e| ExtractError::InvalidJson {
                reason: e.to_string(),
            })?;
        Self::from_value(value)
    }

    /// Checks an already parsed JSON value strictly.
    pub fn from_value(value: Value) -> Result<Extraction, ExtractError> {
        let Value::Object(map) = value else {
            return Err(malformed("", "the reply must be a JSON object"));
        };
        let mut out = Extraction::default();
        for (key, item) in map {
            match key.as_str() {
                "entities" => out.entities = list(&key, item)?,
                "facts" => out.facts = list(&key, item)?,
                "relationships" => out.relationships = list(&key, item)?,
                _ => {
                    return Err(malformed(
                        &key,
                        "unknown field; expected entities, facts, relationships",
                    ))
                }
            }
        }
        out.check()?;
        Ok(out)
    }

    /// Checks what serde cannot: non-blank strings, confidences in [0, 1],
    /// and no `deprecated` epistemic type (never valid at creation).
    fn check(&self) -> Result<(), ExtractError> {
        for (i, e) in self.entities.iter().enumerate() {
            let at = |f: &str| format!("entities[{i}].{f}");
            non_blank(&at("name"), &e.name)?;
            non_blank(&at("entity_type"), &e.entity_type)?;
        }
        for (i, f) in self.facts.iter().enumerate() {
            let at = |n: &str| format!("facts[{i}].{n}");
            non_blank(&at("subject"), &f.subject)?;
            non_blank(&at("predicate"), &f.predicate)?;
            non_blank(&at("object"), &f.object)?;
            non_blank(&at("evidence_quote"), &f.evidence_quote)?;
            unit_interval(&at("confidence"), f.confidence)?;
            not_deprecated(&at("epistemic_type"), f.epistemic_type)?;
        }
        for (i, r) in self.relationships.iter().enumerate() {
            let at = |n: &str| format!("relationships[{i}].{n}");
            non_blank(&at("source_entity"), &r.source_entity)?;
            non_blank(&at("target_entity"), &r.target_entity)?;
            non_blank(&at("relationship_type"), &r.relationship_type)?;
            non_blank(&at("evidence_quote"), &r.evidence_quote)?;
            unit_interval(&at("confidence"), r.confidence)?;
            not_deprecated(&at("epistemic_type"), r.epistemic_type)?;
        }
        Ok(())
    }
}

fn malformed(path: &str, reason: impl Into<String>) -> ExtractError {
    ExtractError::Malformed {
        path: if path.is_empty() {
            "(top level)".into()
        } else {
            path.into()
        },
        reason: reason.into(),
    }
}

/// Deserialises each element of a list on its own, so an error names it.
fn list<T: serde::de::DeserializeOwned>(key: &str, value: Value) -> Result<Vec<T>, ExtractError> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                serde_json::from_value(item)
                    .map_err(|e| malformed(&format!("{key}[{i}]"), e.to_string()))
            })
            .collect(),
        _ => Err(malformed(key, "must be a list")),
    }
}

fn non_blank(path: &str, value: &str) -> Result<(), ExtractError> {
    if value.trim().is_empty() {
        Err(malformed(path, "must not be blank"))
    } else {
        Ok(())
    }
}

fn unit_interval(path: &str, value: f64) -> Result<(), ExtractError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(malformed(path, format!("{value} is outside [0, 1]")))
    }
}

fn not_deprecated(path: &str, value: EpistemicType) -> Result<(), ExtractError> {
    if value == EpistemicType::Deprecated {
        Err(malformed(path, "deprecated is never valid for a new claim"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
      "entities": [{"name": "Maya", "entity_type": "person"}, {"name": "Lisbon", "entity_type": "place"}],
      "facts": [{"subject": "I", "predicate": "moved_to", "object": "Lisbon", "object_entity_type": "place",
                 "polarity": "positive", "evidence_quote": "I moved to Lisbon.", "fact_type": "fact",
                 "epistemic_type": "asserted", "temporal_intent": "update", "replaces_object": "Leeds",
                 "condition": null, "confidence": 0.9}],
      "relationships": []
    }"#;

    #[test]
    fn a_good_reply_parses() {
        let e = Extraction::parse(GOOD).unwrap();
        assert_eq!(e.entities.len(), 2);
        assert_eq!(e.facts[0].temporal_intent, Some(TemporalIntent::Update));
        assert_eq!(e.facts[0].condition, None);
        assert_eq!(Extraction::parse("{}").unwrap(), Extraction::default());
    }

    #[test]
    fn each_way_of_being_wrong_is_typed() {
        let cases: &[(&str, &str)] = &[
            ("not json", "invalid_json"),
            ("[1, 2]", "(top level)"),
            (r#"{"entities": [], "notes": []}"#, "notes"),
            (r#"{"entities": {"name": "x"}}"#, "entities"),
            (r#"{"entities": [{"name": "x"}]}"#, "entities[0]"),
            (
                r#"{"entities": [{"name": " ", "entity_type": "person"}]}"#,
                "entities[0].name",
            ),
            (
                r#"{"facts": [{"subject": "I", "predicate": "p", "object": "o", "polarity": "maybe",
                   "evidence_quote": "q", "fact_type": "fact", "epistemic_type": "asserted", "confidence": 1}]}"#,
                "facts[0]",
            ),
            (
                r#"{"facts": [{"subject": "I", "predicate": "p", "object": "o", "polarity": "positive",
                   "evidence_quote": "q", "fact_type": "fact", "epistemic_type": "asserted", "confidence": 1.5}]}"#,
                "facts[0].confidence",
            ),
            (
                r#"{"facts": [{"subject": "I", "predicate": "p", "object": "o", "polarity": "positive",
                   "evidence_quote": "q", "fact_type": "fact", "epistemic_type": "deprecated", "confidence": 1}]}"#,
                "facts[0].epistemic_type",
            ),
            (
                r#"{"relationships": [{"source_entity": "a", "target_entity": "b", "relationship_type": "r",
                   "polarity": "positive", "evidence_quote": "q", "confidence": NaN}]}"#,
                "relationships[0].confidence",
            ),
        ];
        for (text, where_) in cases {
            let err = Extraction::parse(text).unwrap_err();
            match &err {
                ExtractError::InvalidJson { .. } => assert_eq!(*where_, "invalid_json", "{text}"),
                ExtractError::Malformed { path, .. } => assert_eq!(path, where_, "{text}: {err}"),
                other => panic!("{text}: unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn relationship_epistemic_type_defaults_to_unverified() {
        let e = Extraction::parse(
            r#"{"relationships": [{"source_entity": "Maya", "target_entity": "Jordan", "relationship_type": "partner_of",
                "polarity": "positive", "evidence_quote": "Jordan is my partner.", "confidence": 0.8}]}"#,
        )
        .unwrap();
        assert_eq!(e.relationships[0].epistemic_type, EpistemicType::Unverified);
    }
}
