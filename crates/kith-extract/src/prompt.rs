//! kith's extraction prompt: the system message, the user message template
//! and the JSON Schema of the reply.
//!
//! The prompt is versioned ([`PROMPT_VERSION`]): change the version whenever
//! the text or the schema changes, since saved extractions record which
//! prompt produced them.
//!
//! The reply schema ([`json_schema`]) is the [`Extraction`](crate::Extraction)
//! schema written for OpenAI's strict structured outputs: every property is
//! listed in `required`, optional fields are typed `["string", "null"]`, and
//! every object has `additionalProperties: false`. Servers that constrain
//! generation with it (OpenAI, vLLM, llama.cpp's grammar) can only produce
//! replies that [`Extraction::parse`](crate::Extraction::parse) accepts, up
//! to what it checks beyond the schema (blank strings).

use serde_json::{json, Value};

use crate::provider::ExtractionInput;

/// The version of the prompt text and reply schema, recorded with every
/// extraction an LLM provider makes.
pub const PROMPT_VERSION: &str = "kith-extract-prompt-v1";

/// The name given to the reply schema in `response_format.json_schema.name`.
pub const SCHEMA_NAME: &str = "kith_extraction";

/// The system message: the task, the reply schema and the rules.
pub const SYSTEM_PROMPT: &str = r#"You read one message from a conversation and extract what is worth remembering about the people and things it names: entities, facts and relationships. You reply with one JSON object and nothing else.

The reply has exactly three lists:

{"entities": [...], "facts": [...], "relationships": [...]}

entities: the named things the message mentions.
  - name: the name exactly as the message writes it (same spelling and capitals).
  - entity_type: one lower-case word: person, organization, place, product, project, pet, event, or another plain noun.
  - description: a few words the message itself gives about it, or null.

facts: claims the message makes, each one subject, predicate, object.
  - subject: who or what the claim is about: the name of an entity from your entities list, or a personal pronoun exactly as the message uses it (I, we, you, he, she, they).
  - subject_entity_type: the subject's entity_type when the subject is an entity, else null.
  - predicate: a short snake_case verb phrase: works_at, lives_in, moved_to, uses, prefers, owns, likes.
  - object: the value or entity the claim is about, in the message's own words; when it is an entity, its name exactly as in your entities list.
  - object_entity_type: the object's entity_type when the object is an entity, else null.
  - polarity: "positive", or "negative" when the message says it is not so ("I don't eat meat" is eats / meat / negative).
  - evidence_quote: the sentence or sentences of the message that state the claim, copied exactly.
  - fact_type: "fact", "preference" (a like, dislike or preference) or "decision" (a choice that was made).
  - epistemic_type: "asserted" (stated as true), "observed" (the speaker saw or did it), "hypothetical" (might, maybe, considering), "conditional" (holds only under a condition), "unverified" (hearsay: "I heard that ..."), or "inferred" (implied, not stated).
  - temporal_intent: "update" when the message says a value changed, "assertion" for a plain statement, or null.
  - replaces_object: the earlier value that the message explicitly says was replaced, in the message's words, else null.
  - condition: the condition, copied exactly from the message, when the claim only holds under it, else null.
  - confidence: a number from 0 to 1.

relationships: links between two entities.
  - source_entity, target_entity: names from your entities list, or a personal pronoun exactly as the message uses it.
  - relationship_type: a short snake_case phrase: partner_of, sibling_of, works_with, manager_of, friend_of, member_of.
  - polarity, evidence_quote, epistemic_type, confidence: as for facts.

Rules:
1. Every subject, object that is an entity, source_entity and target_entity is either an entity listed in entities or a literal personal pronoun (I, me, we, us, you, he, she, they). Never replace a pronoun with a name: kith decides who "I" is.
2. Write names exactly as the message does. Do not expand, shorten, translate or correct them.
3. When two different things share a name (Jordan the person and Jordan the country), list each with its own entity_type and set subject_entity_type and object_entity_type so every claim says which one it means.
4. evidence_quote is one or more complete sentences copied verbatim from the message: the same words, punctuation and capitals, consecutive, with no ellipsis, no paraphrase and nothing added.
5. Using something is not preferring it. "I use Vim" is uses / Vim / fact. Only "I prefer", "I like", "I love", "I hate", "my favourite" make a preference.
6. Set temporal_intent "update" and replaces_object only when the message explicitly says one value replaced another ("I moved from Leeds to Lisbon", "we switched from MySQL to Postgres"). Otherwise replaces_object is null.
7. Do not invent. Extract only entities the message names and claims it states. Do not use outside knowledge. Questions, greetings and small talk give nothing. A message with nothing to remember gives empty lists.
8. Reply with the JSON object only: no prose before or after it, no code fences.

Example. The message "I moved from Leeds to Lisbon last spring. My sister Ana still lives in Leeds." gives:

{"entities": [{"name": "Leeds", "entity_type": "place", "description": null}, {"name": "Lisbon", "entity_type": "place", "description": null}, {"name": "Ana", "entity_type": "person", "description": "my sister"}], "facts": [{"subject": "I", "subject_entity_type": null, "predicate": "lives_in", "object": "Lisbon", "object_entity_type": "place", "polarity": "positive", "evidence_quote": "I moved from Leeds to Lisbon last spring.", "fact_type": "fact", "epistemic_type": "asserted", "temporal_intent": "update", "replaces_object": "Leeds", "condition": null, "confidence": 0.9}, {"subject": "Ana", "subject_entity_type": "person", "predicate": "lives_in", "object": "Leeds", "object_entity_type": "place", "polarity": "positive", "evidence_quote": "My sister Ana still lives in Leeds.", "fact_type": "fact", "epistemic_type": "asserted", "temporal_intent": "assertion", "replaces_object": null, "condition": null, "confidence": 0.9}], "relationships": [{"source_entity": "Ana", "target_entity": "I", "relationship_type": "sibling_of", "polarity": "positive", "evidence_quote": "My sister Ana still lives in Leeds.", "epistemic_type": "asserted", "confidence": 0.9}]}"#;

/// The user message for one input: the message's role, speaker and event
/// time (when known) and its text between `<message>` tags.
///
/// ```
/// use kith_core::Role;
/// use kith_extract::{prompt, ExtractionInput};
///
/// let input = ExtractionInput {
///     content: "I moved to Lisbon.",
///     role: Role::User,
///     speaker: Some("Maya"),
///     event_time: None,
/// };
/// let text = prompt::user_message(&input);
/// assert!(text.contains("Role: user (the person whose memory this is)\nSpeaker: Maya\n"));
/// assert!(text.contains("<message>\nI moved to Lisbon.\n</message>"));
/// ```
pub fn user_message(input: &ExtractionInput<'_>) -> String {
    let mut out = String::with_capacity(input.content.len() + 256);
    out.push_str("Extract entities, facts and relationships from this message.\n\n");
    out.push_str("Role: ");
    out.push_str(input.role.as_str());
    out.push_str(role_gloss(input.role));
    out.push('\n');
    if let Some(speaker) = input.speaker.map(str::trim).filter(|s| !s.is_empty()) {
        out.push_str("Speaker: ");
        out.push_str(speaker);
        out.push('\n');
    }
    if let Some(t) = input.event_time {
        out.push_str("Event time: ");
        out.push_str(&t.to_rfc3339());
        out.push('\n');
    }
    out.push_str("\n<message>\n");
    out.push_str(input.content);
    out.push_str("\n</message>");
    out
}

/// A few words on who produced a message of each role.
fn role_gloss(role: kith_core::Role) -> &'static str {
    use kith_core::Role;
    match role {
        Role::User => " (the person whose memory this is)",
        Role::Participant => " (another person in the conversation)",
        Role::Assistant => " (the AI assistant)",
        Role::Tool => " (a tool's output)",
        Role::System => " (a system message)",
    }
}

/// The JSON Schema of the reply, for
/// `response_format: {"type": "json_schema", "json_schema": {"name":
/// "kith_extraction", "strict": true, "schema": …}}`.
///
/// A [`Value`] sorts object keys; send [`json_schema_text`] instead, which
/// keeps the properties in the order a model should write them.
pub fn json_schema() -> Value {
    serde_json::to_value(reply_schema()).unwrap_or(Value::Null)
}

/// [`json_schema`] as JSON text with every object's properties in
/// declaration order (`name` before `description`, `subject` before
/// `object`). Constrained decoders (llama.cpp, vLLM, OpenAI) generate
/// properties in the order the schema lists them, so this is what kith sends.
pub fn json_schema_text() -> String {
    // Serialising strings, numbers and ordered maps cannot fail.
    serde_json::to_string(&reply_schema()).unwrap_or_else(|_| json_schema().to_string())
}

/// A schema node whose object properties serialise in declaration order.
enum Schema {
    /// Any schema written as a JSON value (no properties to order).
    Leaf(Value),
    /// A strict object: every property required, nothing else allowed.
    Object(Vec<(&'static str, Schema)>),
    /// A list of `items`.
    Array(Box<Schema>),
}

impl serde::Serialize for Schema {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;

        /// The properties of an object, as an ordered map.
        struct Properties<'a>(&'a [(&'static str, Schema)]);
        impl serde::Serialize for Properties<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(self.0.len()))?;
                for (name, schema) in self.0 {
                    map.serialize_entry(name, schema)?;
                }
                map.end()
            }
        }

        match self {
            Schema::Leaf(v) => v.serialize(s),
            Schema::Array(items) => {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("type", "array")?;
                map.serialize_entry("items", items)?;
                map.end()
            }
            Schema::Object(properties) => {
                let required: Vec<&str> = properties.iter().map(|(name, _)| *name).collect();
                let mut map = s.serialize_map(Some(4))?;
                map.serialize_entry("type", "object")?;
                map.serialize_entry("properties", &Properties(properties))?;
                map.serialize_entry("required", &required)?;
                map.serialize_entry("additionalProperties", &false)?;
                map.end()
            }
        }
    }
}

/// The reply schema, properties in the order a model should write them.
fn reply_schema() -> Schema {
    let text = || Schema::Leaf(json!({"type": "string"}));
    let nullable_text = || Schema::Leaf(json!({"type": ["string", "null"]}));
    let polarity = || Schema::Leaf(json!({"type": "string", "enum": ["positive", "negative"]}));
    // `deprecated` is never valid for a new claim, so it is not offered.
    let epistemic = || {
        Schema::Leaf(json!({"type": "string", "enum": [
            "observed", "asserted", "inferred", "hypothetical", "conditional", "unverified"
        ]}))
    };
    let confidence = || Schema::Leaf(json!({"type": "number", "minimum": 0, "maximum": 1}));

    let entity = Schema::Object(vec![
        ("name", text()),
        ("entity_type", text()),
        ("description", nullable_text()),
    ]);
    let fact = Schema::Object(vec![
        ("subject", text()),
        ("subject_entity_type", nullable_text()),
        ("predicate", text()),
        ("object", text()),
        ("object_entity_type", nullable_text()),
        ("polarity", polarity()),
        ("evidence_quote", text()),
        (
            "fact_type",
            Schema::Leaf(json!({"type": "string", "enum": ["fact", "preference", "decision"]})),
        ),
        ("epistemic_type", epistemic()),
        (
            "temporal_intent",
            Schema::Leaf(
                json!({"type": ["string", "null"], "enum": ["update", "assertion", null]}),
            ),
        ),
        ("replaces_object", nullable_text()),
        ("condition", nullable_text()),
        ("confidence", confidence()),
    ]);
    let relationship = Schema::Object(vec![
        ("source_entity", text()),
        ("target_entity", text()),
        ("relationship_type", text()),
        ("polarity", polarity()),
        ("evidence_quote", text()),
        ("epistemic_type", epistemic()),
        ("confidence", confidence()),
    ]);
    Schema::Object(vec![
        ("entities", Schema::Array(Box::new(entity))),
        ("facts", Schema::Array(Box::new(fact))),
        ("relationships", Schema::Array(Box::new(relationship))),
    ])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use kith_core::{EpistemicType, Role, Timestamp};

    use super::*;
    use crate::schema::{
        ExtractedEntity, ExtractedFact, ExtractedRelationship, Extraction, FactType, Polarity,
        TemporalIntent,
    };

    /// The example reply in the system prompt, and the message it is for.
    fn prompt_example() -> (&'static str, &'static str) {
        let (_, after) = SYSTEM_PROMPT
            .split_once("Example. The message \"")
            .expect("the prompt has an example");
        let (message, after) = after.split_once("\" gives:").expect("example message");
        (message, after.trim())
    }

    #[test]
    fn the_prompt_example_parses_and_quotes_verbatim() {
        let (message, reply) = prompt_example();
        let e = Extraction::parse(reply).unwrap();
        assert_eq!(
            (e.entities.len(), e.facts.len(), e.relationships.len()),
            (3, 2, 1)
        );
        for f in &e.facts {
            assert!(message.contains(&f.evidence_quote), "{}", f.evidence_quote);
        }
        for r in &e.relationships {
            assert!(message.contains(&r.evidence_quote), "{}", r.evidence_quote);
        }
        // Every property the strict schema requires is present in the example.
        let value: Value = serde_json::from_str(reply).unwrap();
        assert_conforms(&json_schema(), &value, "");
    }

    /// A small checker for the subset of JSON Schema that `json_schema` uses.
    fn assert_conforms(schema: &Value, value: &Value, path: &str) {
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            assert!(
                allowed.contains(value),
                "{path}: {value} not in {allowed:?}"
            );
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            other => panic!("{path}: bad type {other}"),
        };
        let actual = match value {
            Value::Null => "null",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Bool(_) => "boolean",
        };
        assert!(types.contains(&actual), "{path}: {actual} is not {types:?}");
        match value {
            Value::Object(map) => {
                let props = schema["properties"].as_object().unwrap();
                let keys: BTreeSet<&String> = map.keys().collect();
                let expected: BTreeSet<&String> = props.keys().collect();
                assert_eq!(keys, expected, "{path}");
                for (k, v) in map {
                    assert_conforms(&props[k], v, &format!("{path}.{k}"));
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    assert_conforms(&schema["items"], item, &format!("{path}[{i}]"));
                }
            }
            Value::Number(n) => {
                let n = n.as_f64().unwrap();
                assert!((0.0..=1.0).contains(&n), "{path}: {n}");
            }
            _ => {}
        }
    }

    /// Strict mode: every object lists all its properties as required and
    /// allows no others.
    fn assert_strict(schema: &Value, path: &str) {
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            assert_eq!(schema["additionalProperties"], Value::Bool(false), "{path}");
            let required: BTreeSet<&str> = schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let names: BTreeSet<&str> = props.keys().map(String::as_str).collect();
            assert_eq!(required, names, "{path}");
            for (k, v) in props {
                assert_strict(v, &format!("{path}.{k}"));
            }
        }
        if let Some(items) = schema.get("items") {
            assert_strict(items, &format!("{path}[]"));
        }
    }

    #[test]
    fn the_schema_text_keeps_declaration_order() {
        let text = json_schema_text();
        // The first place `name` stands as a key.
        let at = |name: &str| {
            let needle = format!("\"{name}\":{{");
            text.find(&needle).unwrap_or_else(|| panic!("{needle}"))
        };
        assert!(at("entities") < at("facts") && at("facts") < at("relationships"));
        assert!(at("name") < at("description"));
        assert!(at("subject") < at("predicate") && at("predicate") < at("object"));
        assert!(at("evidence_quote") < at("confidence"));
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, json_schema());
    }

    #[test]
    fn the_schema_is_strict() {
        assert_strict(&json_schema(), "");
    }

    fn property_names(schema: &Value) -> BTreeSet<String> {
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    fn serialized_keys<T: serde::Serialize>(v: &T) -> BTreeSet<String> {
        serde_json::to_value(v)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    #[test]
    fn the_schema_names_exactly_the_fields_of_the_parser() {
        let schema = json_schema();
        let entity = ExtractedEntity {
            name: "n".into(),
            entity_type: "t".into(),
            description: Some("d".into()),
        };
        let fact = ExtractedFact {
            subject: "s".into(),
            subject_entity_type: Some("t".into()),
            predicate: "p".into(),
            object: "o".into(),
            object_entity_type: Some("t".into()),
            polarity: Polarity::Positive,
            evidence_quote: "q".into(),
            fact_type: FactType::Fact,
            epistemic_type: EpistemicType::Asserted,
            temporal_intent: Some(TemporalIntent::Assertion),
            replaces_object: Some("r".into()),
            condition: Some("c".into()),
            confidence: 0.5,
        };
        let relationship = ExtractedRelationship {
            source_entity: "a".into(),
            target_entity: "b".into(),
            relationship_type: "r".into(),
            polarity: Polarity::Negative,
            evidence_quote: "q".into(),
            epistemic_type: EpistemicType::Unverified,
            confidence: 0.5,
        };
        let top = &schema["properties"];
        assert_eq!(
            property_names(&top["entities"]["items"]),
            serialized_keys(&entity)
        );
        assert_eq!(
            property_names(&top["facts"]["items"]),
            serialized_keys(&fact)
        );
        assert_eq!(
            property_names(&top["relationships"]["items"]),
            serialized_keys(&relationship)
        );
        assert_eq!(
            property_names(&schema),
            serialized_keys(&Extraction::default())
        );
    }

    #[test]
    fn the_user_message_carries_role_speaker_and_time_when_known() {
        let t = Timestamp::parse("t", "2023-05-08T13:56:00+01:00").unwrap();
        let full = user_message(&ExtractionInput {
            content: "Jordan is my partner.",
            role: Role::Participant,
            speaker: Some("Maya"),
            event_time: Some(t),
        });
        assert!(full.contains("Role: participant (another person in the conversation)\n"));
        assert!(full.contains("Speaker: Maya\n"));
        assert!(full.contains("Event time: 2023-05-08T13:56:00+01:00\n"));
        assert!(full.ends_with("<message>\nJordan is my partner.\n</message>"));

        let bare = user_message(&ExtractionInput {
            content: "hi",
            role: Role::Assistant,
            speaker: Some("  "),
            event_time: None,
        });
        assert!(!bare.contains("Speaker:"));
        assert!(!bare.contains("Event time:"));
    }
}
