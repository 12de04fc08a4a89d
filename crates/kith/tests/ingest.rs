//! `ingest()`: durable admission, extraction through a real HTTP client
//! against a local replay server, grounding, deterministic plans, receipts,
//! saved extractions that are never fetched twice, and failures that keep
//! the event and say why.

mod common;

use std::sync::Arc;
use std::time::Duration;

use kith::{EventInput, IngestOptions, Memory, NodeQuery, NodeType, OwnerId, WorkStatus};
use kith_extract::openai::{OpenAiCompatible, OpenAiConfig};
use kith_extract::replay::{ReplayResponse, ReplayRule, ReplayServer};
use serde_json::{json, Value};

const MESSAGE: &str = "I moved to Lisbon last month. I work at Brightpath Labs now.";

fn good_extraction() -> Value {
    json!({
        "entities": [
            {"name": "Lisbon", "entity_type": "place"},
            {"name": "Brightpath Labs", "entity_type": "organization"}
        ],
        "facts": [
            {"subject": "I", "predicate": "lives_in", "object": "Lisbon", "object_entity_type": "place",
             "polarity": "positive", "evidence_quote": "I moved to Lisbon last month.", "fact_type": "fact",
             "epistemic_type": "asserted", "temporal_intent": "update", "replaces_object": null,
             "condition": null, "confidence": 0.9},
            {"subject": "I", "predicate": "works_at", "object": "Brightpath Labs",
             "object_entity_type": "organization", "polarity": "positive",
             "evidence_quote": "I work at Brightpath Labs now.", "fact_type": "fact",
             "epistemic_type": "asserted", "temporal_intent": null, "replaces_object": null,
             "condition": null, "confidence": 0.9},
            {"subject": "I", "predicate": "likes", "object": "tea", "polarity": "positive",
             "evidence_quote": "I love tea.", "fact_type": "preference", "epistemic_type": "asserted",
             "temporal_intent": null, "replaces_object": null, "condition": null, "confidence": 0.9}
        ],
        "relationships": []
    })
}

/// A memory whose provider is the real OpenAI-compatible client pointed at
/// a replay server with `rules`.
fn with_llm(rules: Vec<ReplayRule>) -> (tempfile::TempDir, Memory, ReplayServer) {
    let server = ReplayServer::start(rules).expect("replay server starts");
    let config = OpenAiConfig::new(server.base_url(), "replay-model")
        .with_timeout(Duration::from_millis(300))
        .with_max_retries(2)
        .with_backoff(Duration::from_millis(5), Duration::from_millis(20));
    let client = OpenAiCompatible::new(config).expect("client");
    let (tmp, _dir, memory) = common::pack();
    (tmp, memory.with_provider(Arc::new(client)), server)
}

fn message(text: &str, source: &str) -> EventInput {
    EventInput {
        owner_id: Some("maya".into()),
        session_id: Some("s1".into()),
        source_id: Some(source.into()),
        event_time: Some("2025-08-09T21:39:00+01:00".into()),
        ..EventInput::new("user", text)
    }
}

fn nodes(memory: &Memory, t: NodeType) -> Vec<kith::Node> {
    memory
        .nodes(&NodeQuery {
            owner: Some(OwnerId::new("maya").unwrap()),
            node_types: vec![t],
            ..NodeQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|s| s.node)
        .collect()
}

#[test]
fn an_llm_extraction_becomes_grounded_entities_claims_and_edges() {
    let (_t, memory, server) = with_llm(vec![ReplayRule::new(
        "Brightpath",
        vec![ReplayResponse::extraction(&good_extraction())],
    )]);
    let r = memory
        .ingest(message(MESSAGE, "m1"), IngestOptions::default())
        .unwrap();
    assert_eq!(r.status, WorkStatus::Complete, "{:?}", r.error);
    let d = r.derivation.expect("derivation summary");
    // Lisbon, Brightpath Labs and the event-local "I".
    assert_eq!((d.entities_created, d.claims, d.dropped), (3, 2, 1));
    assert_eq!(server.requests().len(), 1);

    let entities = nodes(&memory, NodeType::Entity);
    let me = entities
        .iter()
        .find(|n| n.content == "I")
        .expect("event-local I");
    let meta = me.metadata.as_ref().unwrap();
    assert_eq!(meta["identity_status"], "unresolved_reference");
    assert_eq!(meta["reference_event_id"], r.event_id.to_string());
    let lisbon = entities.iter().find(|n| n.content == "Lisbon").unwrap();
    assert_eq!(lisbon.metadata.as_ref().unwrap()["entity_type"], "place");

    let facts = nodes(&memory, NodeType::Fact);
    let lives = facts
        .iter()
        .find(|n| n.metadata.as_ref().unwrap()["predicate"] == "lives_in")
        .unwrap();
    assert_eq!(lives.content, "I moved to Lisbon last month.");
    assert_eq!(lives.evidence_refs, vec![r.event_id]);
    let m = lives.metadata.as_ref().unwrap();
    assert_eq!(m["evidence_quote"], "I moved to Lisbon last month.");
    assert_eq!(m["temporal_intent"], "update");

    // HAS_FACT I → claim, MENTIONS claim → Lisbon.
    let mut tx = memory
        .store_backend()
        .begin(kith_store::TxMode::Read)
        .unwrap();
    let edges = tx.edges_of(lives.id).unwrap();
    assert!(edges
        .iter()
        .any(|e| e.edge_type == kith::EdgeType::HasFact && e.source_id == me.id));
    assert!(edges
        .iter()
        .any(|e| e.edge_type == kith::EdgeType::Mentions && e.target_id == lisbon.id));

    // The ungrounded preference ("I love tea." is not in the message) is
    // dropped, with its reason in the plan; its siblings stay.
    let status = memory
        .work_status(&OwnerId::new("maya").unwrap(), r.event_id)
        .unwrap();
    assert_eq!(
        status.journal,
        vec![
            "EXTRACTION_VALIDATED",
            "DERIVATION_PREPARED",
            "DERIVATION_COMMITTED"
        ]
    );
    assert!(nodes(&memory, NodeType::Preference).is_empty());
    assert_eq!(status.dropped.len(), 1);
    assert_eq!(status.dropped[0].index, 2);
    assert_eq!(
        status.dropped[0].reason,
        kith_extract::grounding::DropReason::QuoteNotFound {
            quote: "I love tea.".into()
        }
    );
}

#[test]
fn named_entities_are_reused_and_references_stay_event_local() {
    let (_t, memory, _server) = with_llm(vec![ReplayRule::new(
        "Brightpath",
        vec![ReplayResponse::extraction(&good_extraction())],
    )]);
    let a = memory
        .ingest(message(MESSAGE, "m1"), IngestOptions::default())
        .unwrap();
    let b = memory
        .ingest(message(MESSAGE, "m2"), IngestOptions::default())
        .unwrap();
    let da = a.derivation.unwrap();
    let db = b.derivation.unwrap();
    assert_eq!((da.entities_created, da.entities_reused), (3, 0));
    // Lisbon and Brightpath reused; a new "I" for the second event.
    assert_eq!((db.entities_created, db.entities_reused), (1, 2));
    let entities = nodes(&memory, NodeType::Entity);
    assert_eq!(entities.iter().filter(|n| n.content == "Lisbon").count(), 1);
    assert_eq!(entities.iter().filter(|n| n.content == "I").count(), 2);
}

#[test]
fn replays_never_call_the_provider_again_or_write_twice() {
    let (_t, memory, server) = with_llm(vec![ReplayRule::new(
        "Brightpath",
        vec![ReplayResponse::extraction(&good_extraction())],
    )]);
    let r = memory
        .ingest(message(MESSAGE, "m1"), IngestOptions::default())
        .unwrap();
    let before = common::snapshot(&memory, "maya");
    let node_count = memory.stats(None).unwrap();
    // Ingesting the same message id again, processing again, reingesting:
    // no new call, nothing new written.
    let again = memory
        .ingest(message(MESSAGE, "m1"), IngestOptions::default())
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.derivation, r.derivation);
    assert_eq!(
        memory.process_event(r.event_id).unwrap(),
        WorkStatus::Complete
    );
    let outcome = memory
        .reingest_event(&OwnerId::new("maya").unwrap(), r.event_id)
        .unwrap();
    assert_eq!(outcome.outcome, "unchanged");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(common::snapshot(&memory, "maya"), before);
    assert_eq!(memory.stats(None).unwrap(), node_count);
}

/// Each bad reply: the event is kept, the status says why.
#[test]
fn bad_provider_replies_keep_the_event_and_say_why() {
    let slow = ReplayResponse::extraction(&good_extraction()).with_delay(1500);
    let cases: Vec<(&str, Vec<ReplayResponse>, &str)> = vec![
        ("timeout", vec![slow], "timeout"),
        (
            "http500",
            vec![ReplayResponse::status(500, "{\"error\": \"boom\"}")],
            "http_status",
        ),
        (
            "badjson",
            vec![ReplayResponse::chat("this is not json")],
            "invalid_json",
        ),
        (
            "schema",
            vec![ReplayResponse::extraction(
                &json!({"entities": [{"name": "Lisbon"}]}),
            )],
            "schema",
        ),
    ];
    for (tag, responses, code) in cases {
        let (_t, memory, _server) = with_llm(vec![ReplayRule::new(tag, responses)]);
        let text = format!("{tag}: I moved to Lisbon last month.");
        let r = memory
            .ingest(message(&text, tag), IngestOptions::default())
            .unwrap();
        assert_eq!(r.status, WorkStatus::Failed, "{tag}");
        let owner = OwnerId::new("maya").unwrap();
        let status = memory.work_status(&owner, r.event_id).unwrap();
        assert_eq!(status.item.reason_code.as_deref(), Some(code), "{tag}");
        assert!(status.item.last_error.is_some());
        // The event is kept and searchable as a note.
        assert_eq!(
            memory.event(&owner, r.event_id).unwrap().event.content,
            text
        );
        assert!(nodes(&memory, NodeType::Entity).is_empty(), "{tag}");
        assert!(status.journal.is_empty(), "{tag}: {:?}", status.journal);
    }
}

#[test]
fn a_failed_extraction_is_retried_by_process() {
    let (_t, memory, server) = with_llm(vec![ReplayRule::new(
        "Brightpath",
        vec![
            ReplayResponse::status(503, "{}"),
            ReplayResponse::status(503, "{}"),
            ReplayResponse::status(503, "{}"),
            ReplayResponse::extraction(&good_extraction()),
        ],
    )]);
    let r = memory
        .ingest(message(MESSAGE, "m1"), IngestOptions::default())
        .unwrap();
    assert_eq!(r.status, WorkStatus::Failed);
    assert_eq!(server.requests().len(), 3, "max_retries 2 → 3 calls");
    let report = memory
        .process_pending(None, 0, false, true, |_| {})
        .unwrap();
    assert_eq!((report.taken, report.completed), (1, 1));
    let owner = OwnerId::new("maya").unwrap();
    let status = memory.work_status(&owner, r.event_id).unwrap();
    assert_eq!(status.item.status, WorkStatus::Complete);
    assert_eq!(status.item.attempts, 2);
    assert_eq!(status.item.last_error, None);
}

#[test]
fn deferred_ingest_waits_for_process() {
    let (_t, _d, memory) = common::pack();
    let r = memory
        .ingest(
            EventInput {
                speaker: Some("Maya Okafor".into()),
                ..message("I work at Northwind Analytics.", "m1")
            },
            IngestOptions {
                defer: true,
                ..IngestOptions::default()
            },
        )
        .unwrap();
    assert_eq!(r.status, WorkStatus::Pending);
    assert!(r.derivation.is_none());
    let report = memory
        .process_pending(None, 0, false, false, |_| {})
        .unwrap();
    assert_eq!(report.completed, 1);
    let owner = OwnerId::new("maya").unwrap();
    let status = memory.work_status(&owner, r.event_id).unwrap();
    assert_eq!(status.item.status, WorkStatus::Complete);
    // The heuristic extractor found the organisation.
    assert!(nodes(&memory, NodeType::Entity)
        .iter()
        .any(|n| n.content == "Northwind Analytics"));
}

#[test]
fn store_only_events_have_no_work() {
    let (_t, _d, memory) = common::pack();
    let r = memory.store(message("hello", "m1")).unwrap();
    let err = memory
        .work_status(&OwnerId::new("maya").unwrap(), r.event_id)
        .unwrap_err();
    assert_eq!(err.kind(), kith::ErrorKind::NotFound);
}

#[test]
fn interrupted_work_is_resumed_once_its_lease_ends() {
    let (_t, dir, memory) = common::pack();
    let r = memory
        .ingest(
            message("I work at Northwind Analytics.", "m1"),
            IngestOptions {
                defer: true,
                ..IngestOptions::default()
            },
        )
        .unwrap();
    // Simulate a process that took the lease and died.
    {
        let mut tx = memory
            .store_backend()
            .begin(kith_store::TxMode::Write)
            .unwrap();
        let mut item = tx.get_work_item(r.event_id).unwrap().unwrap();
        item.status = WorkStatus::Running;
        item.attempts = 1;
        item.lease_until_ms = Some(kith::Timestamp::now().unix_millis() + 60_000);
        tx.update_work_item(&item).unwrap();
        tx.commit().unwrap();
    }
    // Lease still live: nothing is taken, by resume or by plain process.
    assert_eq!(memory.resume_interrupted(None).unwrap().taken, 0);
    assert_eq!(
        memory
            .process_pending(None, 0, false, false, |_| {})
            .unwrap()
            .taken,
        0
    );
    // A pack opened with a short lease, after the lease ends, resumes it.
    drop(memory);
    {
        let conn = rusqlite::Connection::open(dir.join("kith.sqlite")).unwrap();
        conn.execute("UPDATE work_items SET lease_until_ms = 1", [])
            .unwrap();
    }
    let memory = Memory::open(&dir).unwrap();
    let report = memory.resume_interrupted(None).unwrap();
    assert_eq!((report.taken, report.completed), (1, 1));
    let status = memory
        .work_status(&OwnerId::new("maya").unwrap(), r.event_id)
        .unwrap();
    assert_eq!(status.item.status, WorkStatus::Complete);
    assert_eq!(status.item.attempts, 2);
}
