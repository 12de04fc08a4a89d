//! `store()`: one transaction writes the event, its note node and the
//! lexical row; `(owner, source_id)` makes it idempotent.

mod common;

use common::{msg, pack};
use kith::{EventInput, NodeType, OwnerId, SearchRequest};
use kith_core::ids;

#[test]
fn store_writes_event_note_and_lexical_row() {
    let (_tmp, _dir, memory) = pack();
    let receipt = memory
        .store(EventInput {
            session_id: Some("s1".into()),
            speaker: Some("Maya Okafor".into()),
            event_time: Some("2025-08-09T21:33:00+01:00".into()),
            metadata: Some(serde_json::json!({"channel": "chat"})),
            source_id: Some("m-1".into()),
            ..msg("maya", "I started my new job at Brightpath Labs on Monday.")
        })
        .unwrap();
    assert!(receipt.created);
    let owner = OwnerId::new("maya").unwrap();
    assert_eq!(
        receipt.event_id,
        ids::event_id(&owner, &kith_core::SourceId::new("m-1").unwrap())
    );
    assert_eq!(receipt.node_id, ids::note_node_id(receipt.event_id));

    let event = memory.event(&owner, receipt.event_id).unwrap().event;
    assert_eq!(event.speaker.as_ref().unwrap().as_str(), "Maya Okafor");
    assert_eq!(
        event.event_time.unwrap().to_rfc3339(),
        "2025-08-09T21:33:00+01:00"
    );
    assert_eq!(event.checksum, event.compute_checksum());

    let node = memory.node(&owner, receipt.node_id).unwrap();
    assert_eq!(node.node_type, NodeType::Note);
    assert_eq!(node.content, event.content);
    assert_eq!(node.evidence_refs, vec![event.id]);

    let hits = memory
        .search(&SearchRequest::new("maya", "Brightpath job").unwrap())
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].node_id, receipt.node_id);
    assert_eq!(hits[0].provenance.speaker.as_deref(), Some("Maya Okafor"));
}

#[test]
fn same_source_id_returns_first_ids_and_writes_nothing() {
    let (_tmp, _dir, memory) = pack();
    let first = memory
        .store(EventInput {
            source_id: Some("msg-42".into()),
            ..msg("maya", "I prefer green tea.")
        })
        .unwrap();
    let before = common::snapshot(&memory, "maya");
    // Same owner and source id, different content: still the first ids.
    let again = memory
        .store(EventInput {
            source_id: Some("msg-42".into()),
            ..msg("maya", "Something else entirely.")
        })
        .unwrap();
    assert_eq!(
        (again.event_id, again.node_id),
        (first.event_id, first.node_id)
    );
    assert!(first.created && !again.created);
    assert_eq!(common::snapshot(&memory, "maya"), before);

    // Another owner with the same source id is a different message.
    let other = memory
        .store(EventInput {
            source_id: Some("msg-42".into()),
            ..msg("jordan", "I prefer coffee.")
        })
        .unwrap();
    assert!(other.created);
    assert_ne!(other.event_id, first.event_id);
}

#[test]
fn events_without_source_id_get_distinct_generated_ones() {
    let (_tmp, _dir, memory) = pack();
    let a = memory.store(msg("maya", "hello")).unwrap();
    let b = memory.store(msg("maya", "hello")).unwrap();
    assert_ne!(a.event_id, b.event_id);
    let owner = OwnerId::new("maya").unwrap();
    let e = memory.event(&owner, a.event_id).unwrap().event;
    assert!(e.source_id.as_str().starts_with("kith:"), "{}", e.source_id);
}

#[test]
fn node_type_and_role_shape_the_note() {
    let (_tmp, _dir, memory) = pack();
    let r = memory
        .store(EventInput {
            node_type: Some("instruction".into()),
            ..EventInput {
                owner_id: Some("maya".into()),
                ..EventInput::new("system", "Always answer in English.")
            }
        })
        .unwrap();
    let n = memory
        .node(&OwnerId::new("maya").unwrap(), r.node_id)
        .unwrap();
    assert_eq!(n.node_type, NodeType::Instruction);
    assert_eq!(n.epistemic_type, kith_core::EpistemicType::Observed);
}
