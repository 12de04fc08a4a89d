//! The owner's own edits to a claim (`kith claims correct` and `retract`):
//! the text a corrected claim gets, and what a claim's metadata says about
//! its predicate, object and correction. Pure: the engine reads the claim,
//! asks these, and writes the result.

use kith_core::Node;

/// The claim's predicate, from its metadata.
pub fn predicate_of(node: &Node) -> Option<&str> {
    node.metadata.as_ref()?.get("predicate")?.as_str()
}

/// The claim's object, from its metadata.
pub fn object_of(node: &Node) -> Option<&str> {
    node.metadata.as_ref()?.get("object")?.as_str()
}

/// `text` with the first case-insensitive occurrence of `old` replaced by
/// `new`; when `old` does not occur, the text with the corrected value
/// added, so the text a search matches names the new value either way.
pub fn replace_object(text: &str, old: &str, new: &str) -> String {
    if !old.is_empty() {
        let lower = text.to_lowercase();
        // Lower-casing can change byte lengths; replace only when it did not.
        if lower.len() == text.len() {
            if let Some(at) = lower.find(&old.to_lowercase()) {
                return format!("{}{new}{}", &text[..at], &text[at + old.len()..]);
            }
        }
    }
    format!("{text} (corrected: {new})")
}

/// Whether `node` is a claim whose value the owner corrected (a
/// replacement made by the engine's `correct_claim`).
pub fn is_owner_corrected(node: &Node) -> bool {
    node.metadata
        .as_ref()
        .and_then(|m| m.get("correction"))
        .is_some_and(|c| c.get("from_object").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith_core::{EpistemicType, Lifecycle, NodeType, OwnerId, ScopeId, SourceType, Timestamp};

    #[test]
    fn the_object_is_replaced_in_the_text() {
        for (text, old, new, want) in [
            (
                "I work at Northwind.",
                "Northwind",
                "Contoso",
                "I work at Contoso.",
            ),
            (
                "I work at northwind.",
                "Northwind",
                "Contoso",
                "I work at Contoso.",
            ),
            (
                "I work there.",
                "Northwind",
                "Contoso",
                "I work there. (corrected: Contoso)",
            ),
            (
                "Maya likes tea.",
                "",
                "coffee",
                "Maya likes tea. (corrected: coffee)",
            ),
        ] {
            assert_eq!(replace_object(text, old, new), want, "{text}");
        }
    }

    fn claim_with(metadata: serde_json::Value) -> Node {
        let t = Timestamp::parse("t", "2026-01-01T00:00:00Z").unwrap();
        Node {
            id: uuid::Uuid::new_v4(),
            owner_id: OwnerId::new("o").unwrap(),
            scope: ScopeId::personal(),
            session_id: None,
            node_type: NodeType::Fact,
            content: "I work at Northwind.".into(),
            metadata: Some(metadata),
            confidence: 0.5,
            lifecycle: Lifecycle::Stable,
            epistemic_type: EpistemicType::Asserted,
            source_type: SourceType::UserStated,
            valid_from: t,
            valid_to: None,
            event_time: None,
            superseded_by: None,
            evidence_refs: Vec::new(),
            created_at: t,
            updated_at: t,
        }
    }

    #[test]
    fn metadata_says_the_predicate_object_and_an_owner_correction() {
        let plain = claim_with(serde_json::json!({"predicate": "works_at", "object": "Northwind"}));
        assert_eq!(predicate_of(&plain), Some("works_at"));
        assert_eq!(object_of(&plain), Some("Northwind"));
        assert!(!is_owner_corrected(&plain));
        let corrected = claim_with(serde_json::json!({
            "predicate": "works_at",
            "object": "Contoso",
            "correction": {"from_object": "Northwind", "reason": "moved"},
        }));
        assert!(is_owner_corrected(&corrected));
        // A retraction record, or a correction without the old value, is
        // not a corrected value.
        let retracted = claim_with(serde_json::json!({"correction": {"reason": "wrong"}}));
        assert!(!is_owner_corrected(&retracted));
        assert_eq!(predicate_of(&retracted), None);
    }
}
