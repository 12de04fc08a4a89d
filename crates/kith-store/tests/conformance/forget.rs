//! Conformance: the store operations forgetting is built from (issue 15):
//! tombstoning an event, removing nodes with everything hanging off them,
//! removing edges by provenance, removing work items, rewriting a journal
//! record's payload, and compaction.

use kith_core::tombstone::{erased, Tombstone};
use kith_core::{EdgeType, Lifecycle, NodeType, OperationKind};
use kith_store::{
    DeletedNodes, EventQuery, SearchFilters, Store, StoreErrorKind, TxMode, VectorQuery, WorkItem,
    WorkStatus,
};
use serde_json::json;
use uuid::Uuid;

use crate::fixtures::*;
use crate::store_test;

const MODEL: &str = "test/model-3";

fn tombstone_of(e: &kith_core::Event) -> Tombstone {
    Tombstone::new(
        e,
        ts("2025-03-01T00:00:00Z"),
        "the user asked",
        Uuid::new_v4(),
    )
}

store_test!(tombstone_erases_content_speaker_and_metadata_once);
fn tombstone_erases_content_speaker_and_metadata_once(store: &dyn Store) {
    let e = event(kith_core::EventInput {
        speaker: Some("Maya".into()),
        session_id: Some("s1".into()),
        metadata: Some(json!({"secret": "plum"})),
        ..input("alice", "m1", "my locker code is plum-42")
    });
    let other = event(input("alice", "m2", "the weather is fine"));
    write(store, |tx| {
        put(tx, &e);
        put(tx, &other);
    });
    let t = tombstone_of(&e);
    // Rolled back: nothing changes.
    {
        let mut tx = store.begin(TxMode::Write).unwrap();
        tx.tombstone_event(e.id, &t).unwrap();
    }
    read(store, |tx| {
        let got = tx.get_event(e.id).unwrap().unwrap();
        assert_same(&got.event, &e);
        assert_eq!(got.tombstone, None);
    });
    write(store, |tx| tx.tombstone_event(e.id, &t).unwrap());
    read(store, |tx| {
        let got = tx.get_event(e.id).unwrap().unwrap();
        assert_eq!(got.event, erased(&e));
        assert_eq!(got.event.content, "");
        assert_eq!(got.event.speaker, None);
        assert_eq!(got.event.metadata, None);
        assert_eq!(got.event.content_sha256, e.content_sha256);
        assert_eq!(got.event.checksum, e.checksum);
        assert_eq!(got.event.session_id, e.session_id);
        assert_eq!(got.tombstone.as_ref(), Some(&t));
        assert!(t.verify(&got.event).is_empty());
        // Listed in place, still in the log.
        let listed = list_events(tx, EventQuery::default());
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].tombstone.as_ref(), Some(&t));
        let kept = tx.get_event(other.id).unwrap().unwrap();
        assert_same(&kept.event, &other);
        assert_eq!(kept.tombstone, None);
    });
    let mut tx = store.begin(TxMode::Write).unwrap();
    let again = expect_err(tx.tombstone_event(e.id, &t), StoreErrorKind::Conflict);
    assert!(again.message().contains("already forgotten"), "{again}");
    drop(tx);
    let mut tx = store.begin(TxMode::Write).unwrap();
    expect_err(
        tx.tombstone_event(Uuid::new_v4(), &t),
        StoreErrorKind::NotFound,
    );
    drop(tx);
    let mut tx = store.begin(TxMode::Read).unwrap();
    assert!(tx.tombstone_event(other.id, &t).is_err());
}

store_test!(an_erased_event_can_be_written_then_tombstoned);
fn an_erased_event_can_be_written_then_tombstoned(store: &dyn Store) {
    // What an import of an exported tombstone does.
    let e = event(input("alice", "m1", "gone soon"));
    let t = tombstone_of(&e);
    let gone = erased(&e);
    write(store, |tx| {
        tx.insert_event(&gone).unwrap();
        tx.tombstone_event(gone.id, &t).unwrap();
    });
    read(store, |tx| {
        let got = tx.get_event(e.id).unwrap().unwrap();
        assert_eq!(got.event, gone);
        assert_eq!(got.tombstone, Some(t.clone()));
    });
    assert!(integrity(store).is_empty());
}

store_test!(delete_nodes_removes_lexical_rows_vectors_and_edges);
fn delete_nodes_removes_lexical_rows_vectors_and_edges(store: &dyn Store) {
    let e1 = event(input("alice", "m1", "the quokkazebra lives here"));
    let e2 = event(input("alice", "m2", "an ordinary day"));
    let e3 = event(input("bob", "m1", "the quokkazebra lives here"));
    let (a, b, c, bob) = write(store, |tx| {
        let (_, a) = put(tx, &e1);
        let (_, b) = put(tx, &e2);
        let c = derived(&e2, NodeType::Entity, Lifecycle::Tentative, "Day");
        tx.insert_node(&c).unwrap();
        let (_, bob) = put(tx, &e3);
        tx.insert_edge(&edge(&a, &b, EdgeType::RelatesTo)).unwrap();
        tx.insert_edge(&edge(&c, &a, EdgeType::Mentions)).unwrap();
        tx.insert_edge(&edge(&b, &c, EdgeType::Mentions)).unwrap();
        tx.put_embedding(a.id, MODEL, &[1.0, 0.0, 0.0]).unwrap();
        tx.put_embedding(b.id, MODEL, &[0.0, 1.0, 0.0]).unwrap();
        tx.put_embedding(bob.id, MODEL, &[1.0, 0.0, 0.0]).unwrap();
        (a, b, c, bob)
    });
    let vq = |who: &str| VectorQuery {
        owner: owner(who),
        model: MODEL.into(),
        vector: vec![1.0, 0.0, 0.0],
        filters: SearchFilters::default(),
        limit: 10,
    };
    // Searched once before, so an in-process copy holds a's vector.
    let before = read(store, |tx| {
        hit_ids(&tx.search_vector(&vq("alice")).unwrap())
    });
    assert_eq!(before.first(), Some(&a.id));

    let deleted = write(store, |tx| {
        tx.delete_nodes(&[a.id, Uuid::new_v4()]).unwrap()
    });
    assert_eq!(
        deleted,
        DeletedNodes {
            nodes: 1,
            edges: 2,
            vectors: 1
        }
    );
    read(store, |tx| {
        assert!(tx.get_node(a.id).unwrap().is_none());
        assert!(tx.get_embedding(a.id).unwrap().is_none());
        assert!(search(tx, &lexical("alice", "quokkazebra")).is_empty());
        // Another owner's identical text is untouched.
        assert_eq!(
            hit_ids(&search(tx, &lexical("bob", "quokkazebra"))),
            vec![bob.id]
        );
        let left: Vec<Uuid> = tx.edges_of(c.id).unwrap().iter().map(|g| g.id).collect();
        assert_eq!(left.len(), 1, "only b → c is left");
        assert!(tx.get_node(b.id).unwrap().is_some());
        let hits = hit_ids(&tx.search_vector(&vq("alice")).unwrap());
        assert_eq!(hits, vec![b.id], "a removed node is never a vector hit");
        assert_eq!(
            hit_ids(&tx.search_vector(&vq("bob")).unwrap()),
            vec![bob.id]
        );
    });
    assert!(integrity(store).is_empty(), "{:?}", integrity(store));
    assert_eq!(
        write(store, |tx| tx.delete_nodes(&[]).unwrap()),
        DeletedNodes::default()
    );
}

store_test!(delete_edges_from_events_is_per_owner_and_provenance);
fn delete_edges_from_events_is_per_owner_and_provenance(store: &dyn Store) {
    let e1 = event(input("alice", "m1", "one"));
    let e2 = event(input("alice", "m2", "two"));
    let eb = event(input("bob", "m1", "bob's"));
    let (keep, bob_edge) = write(store, |tx| {
        let (_, a) = put(tx, &e1);
        let (_, b) = put(tx, &e2);
        let (_, c) = put(tx, &eb);
        let from_e1 = kith_core::Edge {
            provenance_event_id: Some(e1.id),
            ..edge(&a, &b, EdgeType::RelatesTo)
        };
        let from_e2 = kith_core::Edge {
            provenance_event_id: Some(e2.id),
            ..edge(&b, &a, EdgeType::RelatesTo)
        };
        // Bob's edge naming alice's event id must not go with hers.
        let bob_edge = kith_core::Edge {
            provenance_event_id: Some(e1.id),
            ..edge(&c, &c, EdgeType::RelatesTo)
        };
        for g in [&from_e1, &from_e2, &bob_edge] {
            tx.insert_edge(g).unwrap();
        }
        (from_e2, bob_edge)
    });
    let removed = write(store, |tx| {
        tx.delete_edges_from_events(&owner("alice"), &[e1.id])
            .unwrap()
    });
    assert_eq!(removed, 1);
    read(store, |tx| {
        assert!(tx.get_edge(keep.id).unwrap().is_some());
        assert!(tx.get_edge(bob_edge.id).unwrap().is_some());
    });
}

store_test!(delete_work_item_reports_whether_there_was_one);
fn delete_work_item_reports_whether_there_was_one(store: &dyn Store) {
    let e = event(input("alice", "m1", "work"));
    write(store, |tx| {
        put(tx, &e);
        tx.insert_work_item(&WorkItem {
            event_id: e.id,
            owner_id: owner("alice"),
            scope: scope("personal"),
            status: WorkStatus::Pending,
            attempts: 0,
            reason_code: None,
            last_error: None,
            lease_until_ms: None,
            options: json!({}),
            created_at: ts(NOW),
            updated_at: ts(NOW),
        })
        .unwrap();
    });
    assert!(write(store, |tx| tx.delete_work_item(e.id).unwrap()));
    assert!(!write(store, |tx| tx.delete_work_item(e.id).unwrap()));
    assert!(read(store, |tx| tx.get_work_item(e.id).unwrap()).is_none());
}

store_test!(rewrite_operation_changes_only_payload_and_checksum);
fn rewrite_operation_changes_only_payload_and_checksum(store: &dyn Store) {
    let op = operation(
        "alice",
        OperationKind::RetrievalRecorded,
        json!({"quote": "plum-42"}),
    );
    write(store, |tx| tx.append_operation(&op).unwrap());
    let mut scrubbed = op.clone();
    scrubbed.payload = kith_core::tombstone::scrubbed_payload(&op.payload, Uuid::nil());
    scrubbed.checksum = scrubbed.compute_checksum();
    write(store, |tx| tx.rewrite_operation(&scrubbed).unwrap());
    let got = read(store, |tx| tx.get_operation(op.id).unwrap().unwrap());
    assert_eq!(got, scrubbed);
    assert_eq!(got.compute_checksum(), got.checksum);

    let mut moved = scrubbed.clone();
    moved.kind = OperationKind::Undo;
    let mut tx = store.begin(TxMode::Write).unwrap();
    expect_err(tx.rewrite_operation(&moved), StoreErrorKind::Conflict);
    drop(tx);
    let mut missing = scrubbed.clone();
    missing.id = Uuid::new_v4();
    let mut tx = store.begin(TxMode::Write).unwrap();
    expect_err(tx.rewrite_operation(&missing), StoreErrorKind::NotFound);
    drop(tx);
    assert_eq!(
        read(store, |tx| tx.get_operation(op.id).unwrap().unwrap()),
        scrubbed
    );
}

store_test!(delete_operations_removes_only_the_owners_records_of_the_kind);
fn delete_operations_removes_only_the_owners_records_of_the_kind(store: &dyn Store) {
    let receipt = |owner_id: &str, at: &str| {
        let mut op = operation(
            owner_id,
            OperationKind::RetrievalRecorded,
            json!({"query": "plum-42"}),
        );
        op.created_at = ts(at);
        op.checksum = op.compute_checksum();
        op
    };
    let a1 = receipt("alice", "2025-01-01T00:00:00Z");
    let a2 = receipt("alice", "2025-01-02T00:00:00+02:00");
    let a3 = receipt("alice", "2025-01-03T00:00:00Z");
    let bob = receipt("bob", "2025-01-01T00:00:00Z");
    let other_kind = operation("alice", OperationKind::Forgotten, json!({"n": 1}));
    write(store, |tx| {
        for op in [&a1, &bob, &other_kind, &a2, &a3] {
            tx.append_operation(op).unwrap();
        }
    });
    let alice = owner("alice");
    let kind = OperationKind::RetrievalRecorded;
    read(store, |tx| {
        assert_eq!(tx.count_operations(&alice, kind).unwrap(), 3);
        assert_eq!(tx.count_operations(&owner("bob"), kind).unwrap(), 1);
        let stamps = tx.operation_stamps(&alice, kind, 2).unwrap();
        let got: Vec<_> = stamps.iter().map(|s| (s.id, s.created_at)).collect();
        assert_eq!(got, vec![(a1.id, a1.created_at), (a2.id, a2.created_at)]);
        assert!(stamps[0].seq < stamps[1].seq);
        assert_eq!(tx.operation_stamps(&alice, kind, 0).unwrap().len(), 3);
    });
    // Rolled back: nothing goes.
    {
        let mut tx = store.begin(TxMode::Write).unwrap();
        assert_eq!(tx.delete_operations(&alice, kind, &[a1.id]).unwrap(), 1);
    }
    assert_eq!(
        read(store, |tx| tx.count_operations(&alice, kind).unwrap()),
        3
    );
    // Another owner's id, another kind's id and a missing id are left alone.
    let removed = write(store, |tx| {
        tx.delete_operations(
            &alice,
            kind,
            &[a1.id, bob.id, other_kind.id, Uuid::new_v4(), a2.id],
        )
        .unwrap()
    });
    assert_eq!(removed, 2);
    read(store, |tx| {
        assert!(tx.get_operation(a1.id).unwrap().is_none());
        assert!(tx.get_operation(a2.id).unwrap().is_none());
        assert_eq!(tx.get_operation(a3.id).unwrap().unwrap(), a3);
        assert_eq!(tx.get_operation(bob.id).unwrap().unwrap(), bob);
        assert_eq!(
            tx.get_operation(other_kind.id).unwrap().unwrap(),
            other_kind
        );
    });
    let mut tx = store.begin(TxMode::Read).unwrap();
    assert!(tx.delete_operations(&alice, kind, &[a3.id]).is_err());
}

store_test!(compaction_runs_after_deletes_and_leaves_a_working_store);
fn compaction_runs_after_deletes_and_leaves_a_working_store(store: &dyn Store) {
    let e = event(input("alice", "m1", "the quokkazebra lives here"));
    let keep = event(input("alice", "m2", "an ordinary day"));
    let n = write(store, |tx| {
        put(tx, &keep);
        put(tx, &e).1
    });
    write(store, |tx| {
        tx.delete_nodes(&[n.id]).unwrap();
        tx.tombstone_event(e.id, &tombstone_of(&e)).unwrap();
    });
    let steps = store.compact().expect("compact");
    assert!(!steps.is_empty());
    assert!(
        steps.iter().any(|s| s.contains("VACUUM")),
        "compaction vacuums: {steps:?}"
    );
    read(store, |tx| {
        assert_eq!(list_events(tx, EventQuery::default()).len(), 2);
        assert_eq!(search(tx, &lexical("alice", "ordinary")).len(), 1);
    });
    assert!(integrity(store).is_empty());
}
