//! Issue 20 item 6: an LLM reply is bounded by grounding before anything
//! is written. The attack run's reply (10,000 entities the message never
//! mentions, 3,000 copies of one claim, names of 100 KB or with NUL, a
//! newline or a right-to-left override) goes through a real HTTP replay of
//! the provider, and the pack gains one fact and the entities the message
//! names.

mod common;

use kith::{IngestOptions, NodeType, OwnerId, WorkStatus};
use serde_json::{json, Value};

fn entity(name: &str) -> Value {
    json!({"name": name, "entity_type": "person"})
}

#[test]
fn a_hostile_reply_writes_only_what_the_message_grounds() {
    let message = "Maya moved to Lisbon.";
    let mut entities: Vec<Value> = (0..10_000)
        .map(|i| entity(&format!("Stranger{i}")))
        .collect();
    entities.push(entity("Maya"));
    entities.push(json!({"name": "Lisbon", "entity_type": "place"}));
    for bad in [
        "M".repeat(100 * 1024),
        "Maya\u{0}".to_string(),
        "Maya\nLisbon".to_string(),
        "Maya\u{202e}".to_string(),
    ] {
        entities.push(entity(&bad));
    }
    let claim = json!({
        "subject": "Maya", "predicate": "moved_to", "object": "Lisbon",
        "object_entity_type": "place", "polarity": "positive",
        "evidence_quote": "Maya moved to Lisbon", "fact_type": "fact",
        "epistemic_type": "asserted", "temporal_intent": null,
        "replaces_object": null, "condition": null, "confidence": 0.9});
    let reply = json!({
        "entities": entities,
        "facts": vec![claim; 3_000],
        "relationships": [],
    });
    let (_tmp, _dir, memory) = common::pack();
    let (memory, _server) = common::with_recorded_replies(memory, vec![("Maya", reply)]);
    let receipt = memory
        .ingest(common::msg("maya", message), IngestOptions::default())
        .unwrap();
    assert_eq!(receipt.status, WorkStatus::Complete, "{:?}", receipt.error);
    let summary = receipt.derivation.unwrap();
    assert_eq!(summary.claims, 1, "{summary:?}");
    assert_eq!(summary.dropped, 2_999, "{summary:?}");

    let owner = OwnerId::new("maya").unwrap();
    let stats = memory.stats(Some(&owner)).unwrap();
    let count = |t: NodeType| {
        stats
            .nodes_by_type
            .iter()
            .find(|(n, _)| *n == t)
            .map_or(0, |(_, c)| *c)
    };
    assert_eq!(count(NodeType::Entity), 2, "{stats:?}");
    // Every entity name stored is one the message wrote.
    let nodes = memory
        .nodes(&kith::NodeQuery {
            owner: Some(owner),
            node_types: vec![NodeType::Entity],
            ..kith::NodeQuery::default()
        })
        .unwrap();
    let mut names: Vec<String> = nodes.iter().map(|n| n.node.content.clone()).collect();
    names.sort();
    assert_eq!(names, ["Lisbon", "Maya"]);
    assert!(stats.edges < 10, "{stats:?}");
    assert!(memory.doctor().unwrap().healthy());
}
