//! Forgetting end to end (issue 15): a marker written in messages, ingested
//! (heuristic extractor), quoted by a retrieval receipt, then forgotten,
//! occurs nowhere afterwards — not in a byte of the pack (SQLite) nor in
//! `pg_dump` (PostgreSQL), not in the export, retrieval results or
//! receipts; other owners keep every id and checksum; an export taken after
//! a forget imports into an identical log; bad requests change nothing.

mod common;

use std::sync::Arc;

use common::hashing;
use kith::{
    ErrorKind, EventInput, ForgetRequest, ForgetSelector, ImportOptions, IngestOptions, Memory,
    NodeQuery, OwnerId, RetrieveRequest, SessionId, StoredEvent,
};
use kith_store::postgres::testing::{pg_dump, test_database};

/// A marker no other text contains; capitalised, so the heuristic extractor
/// makes an entity of it as well as notes and claims.
const MARKER: &str = "Zorvexquill";

fn said(owner: &str, session: &str, source: &str, text: &str) -> EventInput {
    EventInput {
        owner_id: Some(owner.into()),
        session_id: Some(session.into()),
        speaker: Some("Maya".into()),
        source_id: Some(source.into()),
        event_time: Some("2025-03-01T10:00:00+00:00".into()),
        ..EventInput::new("user", text)
    }
}

/// Two sessions for `owner`: `secret` names the marker, `kept` does not.
fn ingest_conversation(m: &Memory, owner: &str) {
    let turns = [
        (
            "secret",
            "s1",
            format!("I met {MARKER} at the harbour yesterday."),
        ),
        (
            "secret",
            "s2",
            format!(
                "{MARKER} told me the vault code is {}-77.",
                MARKER.to_lowercase()
            ),
        ),
        ("secret", "s3", format!("I really like {MARKER}.")),
        ("kept", "k1", "I like green tea in the morning.".to_string()),
        (
            "kept",
            "k2",
            "I went hiking with Jordan on Sunday.".to_string(),
        ),
    ];
    for (session, source, text) in turns {
        m.ingest(
            said(owner, session, source, &text),
            IngestOptions::default(),
        )
        .unwrap();
    }
}

fn request(selector: ForgetSelector, dry_run: bool) -> ForgetRequest {
    ForgetRequest {
        selector,
        reason: "the user asked to be forgotten".into(),
        dry_run,
    }
}

fn export(m: &Memory, owner: Option<&OwnerId>) -> String {
    let mut out = Vec::new();
    m.export_jsonl(owner, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Any case, and stemmed: the full-text index keeps lower-case stems
/// ("zorvexquil"), so the marker's first eight letters are searched.
fn contains_marker(text: &str) -> bool {
    text.to_lowercase().contains(&MARKER[..8].to_lowercase())
}

/// The body shared by both backends: returns the forget report.
/// `storage` returns every byte the backend keeps, as text.
fn marker_is_forgotten(m: &Memory, storage: &dyn Fn() -> Vec<u8>) -> kith::ForgetReport {
    let alice = OwnerId::new("alice").unwrap();
    ingest_conversation(m, "alice");
    // A receipt that quotes the marker.
    let before = m
        .retrieve(&RetrieveRequest::new("alice", &format!("Who is {MARKER}?")).unwrap())
        .unwrap();
    assert!(before.recorded);
    assert!(before.results.iter().any(|r| contains_marker(&r.content)));
    let receipt = m.retrieval_receipt(&alice, before.request_id).unwrap();
    assert!(contains_marker(&receipt.payload.to_string()));
    assert!(contains_marker(&String::from_utf8_lossy(&storage())));
    let stats_before = m.stats(Some(&alice)).unwrap();

    // A dry run lists what would go and writes nothing.
    let session = ForgetSelector::Session(SessionId::new("secret").unwrap());
    let dry = m.forget(&alice, &request(session.clone(), true)).unwrap();
    assert!(dry.dry_run);
    assert_eq!(dry.events.len(), 3);
    assert!(!dry.nodes_deleted.is_empty());
    assert!(dry.journal_records_scrubbed.contains(&before.request_id));
    assert_eq!(dry.operation_id, None);
    assert_eq!(m.stats(Some(&alice)).unwrap(), stats_before);
    assert!(contains_marker(&export(m, Some(&alice))));

    let report = m.forget(&alice, &request(session.clone(), false)).unwrap();
    assert_eq!(report.events, dry.events);
    assert_eq!(report.nodes_deleted, dry.nodes_deleted);
    assert_eq!(
        report.journal_records_scrubbed,
        dry.journal_records_scrubbed
    );
    let op = report.operation_id.expect("a FORGOTTEN record");
    assert!(report.compacted, "{:?}", report.compaction);
    let v = report.verification.clone().expect("verified");
    assert!(v.clean(), "{v:?}");
    assert_eq!(v.tombstones_verified, 3);
    assert!(!report.compaction.is_empty());

    // Nowhere: storage bytes (any case), export, retrieval, receipts.
    let bytes = storage();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!contains_marker(&text), "the marker is still in storage");
    assert!(!contains_marker(&export(m, None)));
    let mut after =
        RetrieveRequest::new("alice", &format!("Who is {MARKER}? harbour vault code")).unwrap();
    after.record = false;
    let got = m.retrieve(&after).unwrap();
    for item in &got.results {
        assert!(!contains_marker(&item.content), "{item:?}");
        assert!(!report.events.contains(&item.provenance.event_id));
    }
    assert!(!contains_marker(&got.context));
    for r in m.retrieval_receipts(&alice, 100).unwrap() {
        assert!(!contains_marker(&r.payload.to_string()));
    }
    // The scrubbed receipt names the FORGOTTEN record; its checksum holds.
    let scrubbed = m.retrieval_receipt(&alice, before.request_id).unwrap();
    assert_eq!(
        scrubbed.payload["forgotten"]["operation_id"],
        op.to_string()
    );
    assert_eq!(scrubbed.compute_checksum(), scrubbed.checksum);
    // The kept session is still retrievable.
    let tea = m
        .retrieve(&RetrieveRequest::new("alice", "green tea").unwrap())
        .unwrap();
    assert!(tea.results.iter().any(|r| r.content.contains("green tea")));
    // The tombstones stay in the log, and doctor accepts them.
    let events: Vec<StoredEvent> = m
        .events(&kith::EventQuery {
            owner: Some(alice.clone()),
            limit: 100,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(events.len(), 5);
    assert_eq!(events.iter().filter(|e| e.tombstone.is_some()).count(), 3);
    let doctor = m.doctor().unwrap();
    assert!(doctor.healthy(), "{:?}", doctor.problems);
    assert_eq!(doctor.tombstones_checked, 3);
    // No node cites an erased event.
    for n in m
        .nodes(&NodeQuery {
            owner: Some(alice.clone()),
            limit: 10_000,
            ..Default::default()
        })
        .unwrap()
    {
        assert!(!contains_marker(&n.node.content), "{:?}", n.node);
        assert!(!n
            .node
            .evidence_refs
            .iter()
            .any(|r| report.events.contains(r)));
    }
    // The FORGOTTEN record holds ids and counts, not the content.
    let record = m
        .store_backend()
        .begin(kith_store::TxMode::Read)
        .unwrap()
        .get_operation(op)
        .unwrap()
        .unwrap();
    assert_eq!(record.kind, kith::OperationKind::Forgotten);
    assert_eq!(record.payload["counts"]["events"], 3);
    assert!(!contains_marker(&record.payload.to_string()));
    // Again: everything is a tombstone already, nothing is written.
    let again = m.forget(&alice, &request(session, false)).unwrap();
    assert_eq!(again.already_forgotten.len(), 3);
    assert!(again.events.is_empty() && again.operation_id.is_none());
    assert!(again.compacted, "asking again compacts again: {again:?}");
    report
}

#[test]
fn sqlite_forget_leaves_no_byte_of_the_marker_in_the_pack() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("p.kith");
    let m = Memory::init_with_embedder(&pack, hashing()).unwrap();
    let read_pack = || {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(&pack).unwrap() {
            let path = entry.unwrap().path();
            all.extend(std::fs::read(&path).unwrap());
        }
        all
    };
    let report = marker_is_forgotten(&m, &read_pack);
    let v = report.verification.unwrap();
    assert!(
        v.pack_files_scanned.iter().any(|f| f.ends_with(".sqlite")),
        "{v:?}"
    );
    assert_eq!(v.texts_searched, 3);
    assert_eq!(v.texts_found_in_pack, 0);
}

#[test]
fn postgres_forget_leaves_no_trace_of_the_marker_in_pg_dump() {
    let db = test_database();
    let m = Memory::init_database(db.url(), Some(hashing())).unwrap();
    let dump = || pg_dump(&db).expect("pg_dump").into_bytes();
    let report = marker_is_forgotten(&m, &dump);
    let v = report.verification.unwrap();
    assert!(v.pack_files_scanned.is_empty());
    assert!(report.compaction.iter().any(|s| s.contains("VACUUM")));
}

/// Everything one owner has, as comparable JSON: events, nodes, edges and
/// journal records with their ids and checksums.
fn snapshot(m: &Memory, owner: &OwnerId) -> serde_json::Value {
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let events = tx
        .list_events(&kith::EventQuery {
            owner: Some(owner.clone()),
            limit: 10_000,
            ..Default::default()
        })
        .unwrap();
    let nodes = tx
        .list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            limit: 10_000,
            ..Default::default()
        })
        .unwrap();
    let mut edges = Vec::new();
    for n in &nodes {
        edges.extend(tx.edges_of(n.node.id).unwrap());
    }
    let ops = tx
        .list_operations(&kith_store::OperationQuery {
            owner: owner.clone(),
            kind: None,
            target_id: None,
            limit: 0,
        })
        .unwrap();
    let vectors: Vec<_> = nodes
        .iter()
        .map(|n| tx.get_embedding(n.node.id).unwrap())
        .collect();
    serde_json::json!({
        "events": events,
        "nodes": nodes.iter().map(|n| &n.node).collect::<Vec<_>>(),
        "edges": edges,
        "operations": ops,
        "vectors": vectors.len(),
    })
}

#[test]
fn forgetting_a_whole_owner_leaves_every_other_owner_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init_with_embedder(&dir.path().join("p.kith"), hashing()).unwrap();
    ingest_conversation(&m, "alice");
    ingest_conversation(&m, "bob");
    for who in ["alice", "bob"] {
        m.retrieve(&RetrieveRequest::new(who, &format!("Who is {MARKER}?")).unwrap())
            .unwrap();
    }
    let bob = OwnerId::new("bob").unwrap();
    let alice = OwnerId::new("alice").unwrap();
    let bob_before = snapshot(&m, &bob);
    let report = m
        .forget(&alice, &request(ForgetSelector::Owner, false))
        .unwrap();
    assert_eq!(report.events.len(), 5);
    let v = report.verification.as_ref().unwrap();
    assert!(v.clean(), "{v:?}");
    // Bob said the same words: they stay in the pack, as his.
    assert_eq!((v.texts_searched, v.texts_held_by_live_events), (5, 5));
    assert_eq!(snapshot(&m, &bob), bob_before, "bob's memory changed");
    // Alice keeps only tombstones and the FORGOTTEN record.
    let stats = m.stats(Some(&alice)).unwrap();
    assert_eq!(stats.events, 5);
    assert!(
        stats.nodes_by_type.iter().all(|(_, n)| *n == 0),
        "{stats:?}"
    );
    assert_eq!(stats.edges, 0);
    let after = snapshot(&m, &alice);
    let ops = after["operations"].as_array().unwrap();
    assert!(ops
        .iter()
        .all(|op| op["kind"] == "FORGOTTEN" || op["payload"].get("forgotten").is_some()));
    let bob_retrieval = m
        .retrieve(&RetrieveRequest::new("bob", &format!("Who is {MARKER}?")).unwrap())
        .unwrap();
    assert!(bob_retrieval
        .results
        .iter()
        .any(|r| contains_marker(&r.content)));
    assert!(m.doctor().unwrap().healthy());
}

#[test]
fn an_export_after_a_forget_imports_into_the_same_log() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("a.kith")).unwrap();
    ingest_conversation(&m, "alice");
    let alice = OwnerId::new("alice").unwrap();
    let one = m
        .events(&kith::EventQuery {
            owner: Some(alice.clone()),
            limit: 1,
            ..Default::default()
        })
        .unwrap()[0]
        .event
        .id;
    m.forget(&alice, &request(ForgetSelector::Event(one), false))
        .unwrap();
    m.forget(
        &alice,
        &request(
            ForgetSelector::SourceId(kith::SourceId::new("k2").unwrap()),
            false,
        ),
    )
    .unwrap();
    let exported = export(&m, None);
    assert_eq!(exported.matches("\"forgotten\"").count(), 2);

    let copy = Memory::init(&dir.path().join("b.kith")).unwrap();
    let report = copy
        .import_jsonl(&exported, &ImportOptions::default(), |_| {})
        .unwrap();
    assert_eq!((report.messages, report.created), (5, 5));
    let events = |mem: &Memory| {
        mem.events(&kith::EventQuery {
            limit: 100,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|s| (s.event, s.tombstone))
        .collect::<Vec<_>>()
    };
    assert_eq!(events(&copy), events(&m));
    assert_eq!(export(&copy, None), exported);
    let doctor = copy.doctor().unwrap();
    assert!(doctor.healthy(), "{:?}", doctor.problems);
    assert_eq!(doctor.tombstones_checked, 2);
    // Again: nothing new.
    let again = copy
        .import_jsonl(&exported, &ImportOptions::default(), |_| {})
        .unwrap();
    assert_eq!((again.created, again.existing), (0, 5));
    // A tampered tombstone line is refused and nothing is written.
    let fresh = Memory::init(&dir.path().join("c.kith")).unwrap();
    let tampered = exported.replacen("the user asked", "someone else asked", 1);
    let err = fresh
        .import_jsonl(&tampered, &ImportOptions::default(), |_| {})
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("forgotten.checksum"), "{err}");
    assert_eq!(fresh.stats(None).unwrap().events, 0);
}

#[test]
fn bad_forget_requests_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("p.kith")).unwrap();
    ingest_conversation(&m, "alice");
    ingest_conversation(&m, "bob");
    let alice = OwnerId::new("alice").unwrap();
    let before = snapshot(&m, &alice);
    let bob_event = m
        .events(&kith::EventQuery {
            owner: Some(OwnerId::new("bob").unwrap()),
            limit: 1,
            ..Default::default()
        })
        .unwrap()[0]
        .event
        .id;
    let cases: Vec<(ForgetRequest, ErrorKind, &str)> = vec![
        (
            ForgetRequest {
                reason: "  ".into(),
                ..request(ForgetSelector::Owner, false)
            },
            ErrorKind::InvalidInput,
            "reason is empty",
        ),
        (
            request(ForgetSelector::Event(uuid::Uuid::new_v4()), false),
            ErrorKind::NotFound,
            "of owner alice",
        ),
        // Another owner's event answers like a missing one.
        (
            request(ForgetSelector::Event(bob_event), false),
            ErrorKind::NotFound,
            "of owner alice",
        ),
        (
            request(
                ForgetSelector::SourceId(kith::SourceId::new("nope").unwrap()),
                false,
            ),
            ErrorKind::NotFound,
            "source id nope",
        ),
        (
            request(
                ForgetSelector::Session(SessionId::new("nope").unwrap()),
                false,
            ),
            ErrorKind::NotFound,
            "session nope",
        ),
    ];
    for (req, kind, text) in cases {
        let err = m.forget(&alice, &req).unwrap_err();
        assert_eq!(err.kind(), kind, "{err}");
        assert!(err.to_string().contains(text), "{err}");
    }
    // Before a time earlier than everything: nothing selected, nothing written.
    let early = kith::Timestamp::parse("t", "2000-01-01T00:00:00Z").unwrap();
    let none = m
        .forget(&alice, &request(ForgetSelector::Before(early), false))
        .unwrap();
    assert!(none.events.is_empty() && none.operation_id.is_none());
    assert_eq!(snapshot(&m, &alice), before);
}

#[test]
fn a_claim_supported_by_a_kept_event_keeps_the_rest_of_its_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("p.kith")).unwrap();
    // The same preference twice, in two sessions: the second claim repeats
    // the first and carries both events as evidence.
    m.ingest(
        said("alice", "a", "a1", "I like green tea."),
        IngestOptions::default(),
    )
    .unwrap();
    m.ingest(
        said("alice", "b", "b1", "I like green tea."),
        IngestOptions::default(),
    )
    .unwrap();
    let alice = OwnerId::new("alice").unwrap();
    let claims = |m: &Memory| {
        m.nodes(&NodeQuery {
            owner: Some(alice.clone()),
            limit: 1000,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|s| s.node)
        .filter(|n| n.node_type != kith::NodeType::Note && n.node_type != kith::NodeType::Entity)
        .collect::<Vec<_>>()
    };
    let before = claims(&m);
    let second = before
        .iter()
        .find(|c| c.evidence_refs.len() == 2)
        .expect("a repeated claim with two events")
        .clone();
    let first_event = second.evidence_refs[0];
    let report = m
        .forget(&alice, &request(ForgetSelector::Event(first_event), false))
        .unwrap();
    assert!(report.nodes_updated.contains(&second.id), "{report:?}");
    let after = claims(&m);
    let kept = after.iter().find(|c| c.id == second.id).expect("kept");
    assert_eq!(kept.evidence_refs, vec![second.evidence_refs[1]]);
    assert!(kept.lifecycle.is_active());
    assert!(after
        .iter()
        .all(|c| !c.evidence_refs.contains(&first_event)));
    // Forgetting the second event too leaves no claim.
    m.forget(
        &alice,
        &request(ForgetSelector::Event(second.evidence_refs[1]), false),
    )
    .unwrap();
    assert!(claims(&m).is_empty());
    assert!(m.doctor().unwrap().healthy());
}

/// An entity node of `o` named `name`, evidenced by `evidence`.
fn entity(o: &str, evidence: uuid::Uuid, name: &str) -> kith::Node {
    let at = kith::Timestamp::parse("t", "2025-03-01T10:00:00+00:00").unwrap();
    kith::Node {
        id: uuid::Uuid::new_v4(),
        owner_id: OwnerId::new(o).unwrap(),
        scope: kith::ScopeId::personal(),
        session_id: Some(SessionId::new("s1").unwrap()),
        node_type: kith::NodeType::Entity,
        content: name.into(),
        metadata: Some(serde_json::json!({"entity_type": "technology"})),
        confidence: 0.5,
        lifecycle: kith::Lifecycle::Tentative,
        epistemic_type: kith_core::EpistemicType::Asserted,
        source_type: kith_core::SourceType::UserStated,
        valid_from: at,
        valid_to: None,
        event_time: Some(at),
        superseded_by: None,
        evidence_refs: vec![evidence],
        created_at: at,
        updated_at: at,
    }
}

#[test]
fn a_merge_record_scrubbed_by_a_forget_refuses_undo_and_the_organizer_runs_on() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("p.kith")).unwrap();
    let o = OwnerId::new("o").unwrap();
    let said = |text: &str| {
        m.store(EventInput {
            owner_id: Some("o".into()),
            session_id: Some("s1".into()),
            ..EventInput::new("user", text)
        })
        .unwrap()
        .event_id
    };
    let e1 = said("I mostly write JS these days.");
    let e2 = said("JavaScript runs everywhere.");
    let js = entity("o", e1, "JS");
    let long = entity("o", e2, "JavaScript");
    {
        let mut tx = m.store_backend().begin(kith_store::TxMode::Write).unwrap();
        tx.insert_node(&js).unwrap();
        tx.insert_node(&long).unwrap();
        tx.commit().unwrap();
    }
    let r = m
        .organize(&o, &[kith::Job::Deduplicate, kith::Job::AliasResolve], 0)
        .unwrap();
    let merge = r.jobs[1]
        .merges
        .first()
        .expect("the abbreviation merges")
        .op_id;

    let report = m
        .forget(&o, &request(ForgetSelector::Event(e1), false))
        .unwrap();
    assert!(report.nodes_deleted.contains(&js.id), "{report:?}");
    assert!(
        report.journal_records_scrubbed.contains(&merge),
        "{report:?}"
    );
    let kept = m.node(&o, long.id).unwrap();
    assert_eq!(kept.evidence_refs, vec![e2]);
    assert!(kept.lifecycle.is_active());

    let err = m.undo(&o, merge).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(
        err.to_string().contains("scrubbed by the FORGOTTEN record"),
        "{err}"
    );
    // The organizer, the alias inbox and doctor carry on.
    m.organize(&o, &[kith::Job::Deduplicate, kith::Job::AliasResolve], 0)
        .unwrap();
    m.alias_proposals(&o).unwrap();
    let doctor = m.doctor().unwrap();
    assert!(doctor.healthy(), "{:?}", doctor.problems);
}

/// A forget while another thread stores messages and another retrieves:
/// nobody fails, a retrieval that starts after the forget returned never
/// sees the marker, the writer's messages all stay, and the pack ends up
/// without a byte of it.
#[test]
fn forget_under_concurrent_writers_and_retrievals() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("p.kith");
    let m = Arc::new(Memory::init_with_embedder(&pack, hashing()).unwrap());
    ingest_conversation(&m, "alice");
    let stop = Arc::new(AtomicBool::new(false));
    let forgotten = Arc::new(AtomicBool::new(false));
    let reads_after = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writes_after = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let (m, stop, forgotten, writes_after) = (
            Arc::clone(&m),
            Arc::clone(&stop),
            Arc::clone(&forgotten),
            Arc::clone(&writes_after),
        );
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let done = forgotten.load(Ordering::SeqCst);
                let text = format!("an ordinary note, number {n}");
                m.store(said("alice", "live", &format!("w{n}"), &text))
                    .expect("a store beside a forget");
                n += 1;
                if done {
                    writes_after.fetch_add(1, Ordering::SeqCst);
                }
            }
            n
        })
    };
    let reader = {
        let (m, stop, forgotten, reads_after) = (
            Arc::clone(&m),
            Arc::clone(&stop),
            Arc::clone(&forgotten),
            Arc::clone(&reads_after),
        );
        std::thread::spawn(move || {
            let mut after = 0;
            while !stop.load(Ordering::SeqCst) {
                let done = forgotten.load(Ordering::SeqCst);
                let mut q =
                    RetrieveRequest::new("alice", &format!("Who is {MARKER}? harbour")).unwrap();
                q.record = false;
                let got = m.retrieve(&q).expect("a retrieval beside a forget");
                if done {
                    after += 1;
                    reads_after.fetch_add(1, Ordering::SeqCst);
                    assert!(
                        got.results.iter().all(|r| !contains_marker(&r.content)),
                        "a retrieval after the forget returned it"
                    );
                }
            }
            after
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    let alice = OwnerId::new("alice").unwrap();
    let report = m
        .forget(
            &alice,
            &request(
                ForgetSelector::Session(SessionId::new("secret").unwrap()),
                false,
            ),
        )
        .unwrap();
    forgotten.store(true, Ordering::SeqCst);
    // Until a few retrievals and writes ran after the forget (bounded:
    // a loaded machine is slow, not wrong).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while (reads_after.load(Ordering::SeqCst) < 3 || writes_after.load(Ordering::SeqCst) < 3)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    stop.store(true, Ordering::SeqCst);
    let written = writer.join().unwrap();
    let checked = reader.join().unwrap();
    assert!(
        written > 0 && checked > 0,
        "{written} writes, {checked} reads after"
    );
    assert_eq!(report.events.len(), 3);
    assert!(report.compacted, "{:?}", report.compaction);
    assert!(report.verification.as_ref().unwrap().clean());
    let live = m
        .events(&kith::EventQuery {
            owner: Some(alice.clone()),
            session: Some(SessionId::new("live").unwrap()),
            limit: 100_000,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(live.len(), written);
    assert!(live.iter().all(|e| e.tombstone.is_none()));
    // Compact once more with nobody else reading: no byte of the marker.
    m.forget(
        &alice,
        &request(
            ForgetSelector::Session(SessionId::new("secret").unwrap()),
            false,
        ),
    )
    .unwrap();
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(&pack).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    assert!(!contains_marker(&String::from_utf8_lossy(&bytes)));
    assert!(m.doctor().unwrap().healthy());
}

#[test]
fn forgetting_the_newer_of_two_repeated_claims_leaves_one_on_the_older_message() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("p.kith")).unwrap();
    let first = m
        .ingest(
            said("alice", "a", "a1", "I like green tea."),
            IngestOptions::default(),
        )
        .unwrap()
        .event_id;
    let second = m
        .ingest(
            said("alice", "b", "b1", "I like green tea."),
            IngestOptions::default(),
        )
        .unwrap()
        .event_id;
    let alice = OwnerId::new("alice").unwrap();
    m.forget(&alice, &request(ForgetSelector::Event(second), false))
        .unwrap();
    let claims: Vec<kith::Node> = m
        .nodes(&NodeQuery {
            owner: Some(alice.clone()),
            limit: 1000,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|s| s.node)
        .filter(|n| n.node_type != kith::NodeType::Note && n.node_type != kith::NodeType::Entity)
        .collect();
    let active: Vec<&kith::Node> = claims.iter().filter(|c| c.lifecycle.is_active()).collect();
    assert_eq!(active.len(), 1, "{claims:#?}");
    assert_eq!(active[0].evidence_refs, vec![first]);
    assert!(claims.iter().all(|c| !c.evidence_refs.contains(&second)));
    assert!(claims.iter().all(|c| c
        .superseded_by
        .is_none_or(|s| claims.iter().any(|k| k.id == s))));
    assert!(m.doctor().unwrap().healthy());
}

#[test]
fn forgetting_before_a_time_takes_the_event_time_else_the_ingestion_time() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("p.kith")).unwrap();
    let at = |source: &str, time: Option<&str>, text: &str| {
        m.store(EventInput {
            owner_id: Some("alice".into()),
            source_id: Some(source.into()),
            event_time: time.map(String::from),
            ..EventInput::new("user", text)
        })
        .unwrap()
        .event_id
    };
    let old = at("old", Some("2025-03-01T10:00:00+00:00"), "an old message");
    let new = at("new", Some("2025-06-01T10:00:00+00:00"), "a newer message");
    // No event time: stored now, so after the cut.
    let untimed = at("untimed", None, "a message without a time");
    let alice = OwnerId::new("alice").unwrap();
    let cut = kith::Timestamp::parse("t", "2025-04-01T00:00:00+02:00").unwrap();
    let report = m
        .forget(&alice, &request(ForgetSelector::Before(cut), false))
        .unwrap();
    assert_eq!(report.events, vec![old]);
    for (id, gone) in [(old, true), (new, false), (untimed, false)] {
        assert_eq!(m.event(&alice, id).unwrap().tombstone.is_some(), gone);
    }
    let ingested_later = kith::Timestamp::now();
    let all = m
        .forget(
            &alice,
            &request(ForgetSelector::Before(ingested_later), false),
        )
        .unwrap();
    assert_eq!(all.events, vec![new, untimed]);
    assert_eq!(all.already_forgotten, vec![old]);
}

/// What a forgotten turn said a name is goes with it: an organization
/// (`kith_ingest_v9`) or a person (`kith_ingest_v4`) that adopted the
/// untyped mention of its name in the erased turn is untyped again, and no
/// node names that turn any more (heuristic extractor).
#[test]
fn forgetting_the_turn_that_typed_a_name_untypes_it() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("p.kith")).unwrap();
    let say = |source: &str, speaker: &str, text: &str| {
        m.ingest(
            EventInput {
                owner_id: Some("alice".into()),
                session_id: Some("s".into()),
                speaker: Some(speaker.into()),
                source_id: Some(source.into()),
                ..EventInput::new("participant", text)
            },
            IngestOptions::default(),
        )
        .unwrap()
        .event_id
    };
    say("m1", "Sam", "So you work at Brightpath now? I like Jordan.");
    let typed = [
        say("m2", "Maya", "I work at Brightpath."),
        say("m3", "Jordan", "I love cilantro."),
    ];
    let alice = OwnerId::new("alice").unwrap();
    let entity = |name: &str| {
        let found: Vec<kith::Node> = m
            .nodes(&NodeQuery {
                owner: Some(alice.clone()),
                node_types: vec![kith::NodeType::Entity],
                limit: 1000,
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .map(|s| s.node)
            .filter(|n| n.content == name)
            .collect();
        assert_eq!(found.len(), 1, "one {name}: {found:#?}");
        found.into_iter().next().unwrap()
    };
    for (name, kind, key, by) in [
        ("Brightpath", "organization", "typed_by", typed[0]),
        ("Jordan", "person", "typed_person_by", typed[1]),
    ] {
        let md = entity(name).metadata.unwrap();
        assert_eq!(md["entity_type"], kind, "{name}: {md}");
        assert_eq!(md[key], by.to_string(), "{name}: {md}");
    }
    for id in typed {
        m.forget(&alice, &request(ForgetSelector::Event(id), false))
            .unwrap();
    }
    for name in ["Brightpath", "Jordan"] {
        let node = entity(name);
        let md = node.metadata.clone().unwrap();
        assert_eq!(md["entity_type"], "other", "{name}: {md}");
        let text = serde_json::to_string(&node).unwrap();
        for id in typed {
            assert!(!text.contains(&id.to_string()), "{name} names {id}: {text}");
        }
    }
    assert!(m.doctor().unwrap().healthy());
}
