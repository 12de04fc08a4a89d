//! Multi-row writes (`insert_events`, `insert_nodes`, `insert_edges`,
//! `append_operations`, `insert_work_items`, `put_embeddings`): the same
//! rows and the same refusals as one row at a time, on every backend.

use kith_core::{EdgeType, Event, EventInput, Lifecycle, NodeType, OperationKind};
use kith_store::{EventQuery, Store, StoreErrorKind, Tx, TxMode, WorkItem, WorkStatus};
use serde_json::json;
use uuid::Uuid;

use crate::fixtures::*;
use crate::store_test;

fn work(e: &Event) -> WorkItem {
    WorkItem {
        event_id: e.id,
        owner_id: e.owner_id.clone(),
        scope: e.scope.clone(),
        status: WorkStatus::Pending,
        attempts: 0,
        reason_code: None,
        last_error: Some("a sentence".into()),
        lease_until_ms: Some(7),
        options: json!({"first_person_owner": true}),
        created_at: ts(NOW),
        updated_at: ts(NOW),
    }
}

/// Three events of two owners, one with every optional field set.
fn three() -> Vec<Event> {
    vec![
        event(EventInput {
            session_id: Some("s1".into()),
            speaker: Some("Maya".into()),
            event_time: Some("2024-05-08T13:56:00+02:00".into()),
            metadata: Some(json!({"b": 1, "a": [true, null, 1.5, "ü"]})),
            ..input("alice", "m1", "Maya moved to Lisbon — «finally» 🎉")
        }),
        event(input("alice", "m2", "plain")),
        event(input("bob", "m1", "the same source id, another owner")),
    ]
}

store_test!(batch_writes_store_what_single_writes_store);
fn batch_writes_store_what_single_writes_store(store: &dyn Store) {
    let events = three();
    let notes: Vec<_> = events.iter().map(note).collect();
    let claim = derived(&events[0], NodeType::Fact, Lifecycle::Tentative, "a claim");
    let edges = vec![
        edge(&notes[0], &claim, EdgeType::HasFact),
        edge(&notes[1], &notes[0], EdgeType::RelatesTo),
    ];
    let ops = vec![
        operation("alice", OperationKind::LifecycleChanged, json!({"n": 1})),
        operation(
            "bob",
            OperationKind::LifecycleChanged,
            json!({"n": [2, "ü"]}),
        ),
    ];
    let items: Vec<_> = events.iter().map(work).collect();
    let v: Vec<Vec<f32>> = (0..3).map(|i| vec![i as f32, 1.0, -0.5]).collect();
    let seqs = write(store, |tx| {
        let seqs = tx.insert_events(&events).unwrap();
        let mut nodes = notes.clone();
        nodes.push(claim.clone());
        tx.insert_nodes(&nodes).unwrap();
        tx.insert_edges(&edges).unwrap();
        tx.append_operations(&ops).unwrap();
        tx.insert_work_items(&items).unwrap();
        let rows: Vec<(Uuid, &[f32])> = notes
            .iter()
            .zip(&v)
            .map(|(n, v)| (n.id, v.as_slice()))
            .collect();
        tx.put_embeddings("m", &rows).unwrap();
        seqs
    });
    assert_eq!(seqs.len(), 3);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    read(store, |tx| {
        for (e, seq) in events.iter().zip(&seqs) {
            let got = tx.get_event(e.id).unwrap().expect("stored");
            assert_eq!(got.seq, *seq);
            assert_same(&got.event, e);
        }
        for n in notes.iter().chain([&claim]) {
            assert_same(&tx.get_node(n.id).unwrap().expect("stored"), n);
        }
        for g in &edges {
            assert_same(&tx.get_edge(g.id).unwrap().expect("stored"), g);
        }
        for op in &ops {
            assert_same(&tx.get_operation(op.id).unwrap().expect("stored"), op);
        }
        let mut got = tx
            .get_work_items(&events.iter().map(|e| e.id).collect::<Vec<_>>())
            .unwrap();
        got.sort_by_key(|w| events.iter().position(|e| e.id == w.event_id));
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&items).unwrap()
        );
        for (n, v) in notes.iter().zip(&v) {
            assert_eq!(
                tx.get_embedding(n.id).unwrap(),
                Some(("m".into(), v.clone()))
            );
        }
        // Events list in the order given, per owner.
        let alice = list_events(
            tx,
            EventQuery {
                owner: Some(owner("alice")),
                ..EventQuery::default()
            },
        );
        let ids: Vec<Uuid> = alice.iter().map(|e| e.event.id).collect();
        assert_eq!(ids, vec![events[0].id, events[1].id]);
        let found = tx
            .event_ids_by_sources(&[
                (owner("bob"), events[2].source_id.clone()),
                (owner("bob"), events[1].source_id.clone()),
                (owner("alice"), events[0].source_id.clone()),
            ])
            .unwrap();
        assert_eq!(found, vec![Some(events[2].id), None, Some(events[0].id)]);
    });
    assert!(integrity(store).is_empty(), "{:?}", integrity(store));
}

store_test!(empty_batches_write_nothing_and_succeed);
fn empty_batches_write_nothing_and_succeed(store: &dyn Store) {
    write(store, |tx| {
        assert!(tx.insert_events(&[]).unwrap().is_empty());
        tx.insert_nodes(&[]).unwrap();
        tx.insert_edges(&[]).unwrap();
        tx.append_operations(&[]).unwrap();
        tx.insert_work_items(&[]).unwrap();
        tx.put_embeddings("m", &[]).unwrap();
        assert!(tx.event_ids_by_sources(&[]).unwrap().is_empty());
        assert!(tx.get_work_items(&[]).unwrap().is_empty());
    });
    assert_eq!(read(store, |tx| tx.stats(None).unwrap().events), 0);
}

/// Runs `f` in a write transaction that is dropped, not committed, as the
/// engine does after an error.
fn attempt<T>(store: &dyn Store, f: impl FnOnce(&mut dyn Tx) -> T) -> T {
    let mut tx = store.begin(TxMode::Write).unwrap();
    f(&mut *tx)
}

store_test!(a_batch_with_a_repeated_or_existing_key_is_refused_and_leaves_nothing);
fn a_batch_with_a_repeated_or_existing_key_is_refused_and_leaves_nothing(store: &dyn Store) {
    let stored = event(input("alice", "m1", "first"));
    write(store, |tx| {
        put(tx, &stored);
    });
    let fresh = event(input("alice", "m2", "new"));
    let clash = event(input("alice", "m1", "another text, the same source id"));
    // The same event twice in one batch.
    let e = attempt(store, |tx| {
        tx.insert_events(&[fresh.clone(), fresh.clone()])
    });
    expect_err(e, StoreErrorKind::Conflict);
    // A source id that is stored already.
    let e = attempt(store, |tx| {
        tx.insert_events(&[fresh.clone(), clash.clone()])
    });
    expect_err(e, StoreErrorKind::Conflict);
    // A node id stored already, and one repeated.
    let n = note(&fresh);
    let e = attempt(store, |tx| tx.insert_nodes(&[n.clone(), note(&stored)]));
    expect_err(e, StoreErrorKind::Conflict);
    let e = attempt(store, |tx| tx.insert_nodes(&[n.clone(), n.clone()]));
    expect_err(e, StoreErrorKind::Conflict);
    // Edges, journal records and work items alike.
    let g = edge(&note(&stored), &note(&stored), EdgeType::RelatesTo);
    let e = attempt(store, |tx| tx.insert_edges(&[g.clone(), g.clone()]));
    expect_err(e, StoreErrorKind::Conflict);
    let op = operation("alice", OperationKind::LifecycleChanged, json!({}));
    let e = attempt(store, |tx| tx.append_operations(&[op.clone(), op.clone()]));
    expect_err(e, StoreErrorKind::Conflict);
    write(store, |tx| tx.insert_work_item(&work(&stored)).unwrap());
    let e = attempt(store, |tx| {
        tx.insert_work_items(&[work(&fresh), work(&stored)])
    });
    expect_err(e, StoreErrorKind::Conflict);
    // Vectors: a missing node, a vector that is not finite.
    let e = attempt(store, |tx| {
        tx.put_embeddings(
            "m",
            &[(note(&stored).id, &[1.0][..]), (Uuid::new_v4(), &[1.0][..])],
        )
    });
    expect_err(e, StoreErrorKind::NotFound);
    let e = attempt(store, |tx| {
        tx.put_embeddings("m", &[(note(&stored).id, &[f32::NAN][..])])
    });
    assert!(e.is_err());
    // Nothing of any refused batch is there.
    read(store, |tx| {
        let s = tx.stats(None).unwrap();
        assert_eq!((s.events, s.edges, s.operations), (1, 0, 0));
        assert!(tx.get_event(fresh.id).unwrap().is_none());
        assert!(tx.get_node(n.id).unwrap().is_none());
        assert!(tx.get_work_item(fresh.id).unwrap().is_none());
        assert!(tx.get_embedding(note(&stored).id).unwrap().is_none());
    });
}

store_test!(a_node_listed_twice_for_vectors_keeps_its_last_one);
fn a_node_listed_twice_for_vectors_keeps_its_last_one(store: &dyn Store) {
    let e = event(input("alice", "m1", "first"));
    let n = note(&e);
    write(store, |tx| {
        put(tx, &e);
        tx.put_embeddings("m", &[(n.id, &[1.0, 0.0][..]), (n.id, &[0.0, 1.0][..])])
            .unwrap();
    });
    let got = read(store, |tx| tx.get_embedding(n.id).unwrap());
    assert_eq!(got, Some(("m".into(), vec![0.0, 1.0])));
}

store_test!(multi_row_reads_answer_like_one_row_at_a_time);
fn multi_row_reads_answer_like_one_row_at_a_time(store: &dyn Store) {
    let in_session = |owner: &str, source: &str, session: &str| {
        event(EventInput {
            session_id: Some(session.into()),
            ..input(owner, source, source)
        })
    };
    let events = vec![
        in_session("alice", "a1", "s1"),
        in_session("alice", "a2", "s2"),
        in_session("alice", "a3", "s1"),
        in_session("alice", "a4", "s1"),
        in_session("bob", "b1", "s1"),
    ];
    let notes: Vec<_> = events.iter().map(note).collect();
    let edges = vec![
        edge(&notes[0], &notes[1], EdgeType::RelatesTo),
        edge(&notes[2], &notes[0], EdgeType::RelatesTo),
        edge(&notes[1], &notes[3], EdgeType::RelatesTo),
        edge(&notes[4], &notes[4], EdgeType::RelatesTo),
    ];
    write(store, |tx| {
        tx.insert_events(&events).unwrap();
        tx.insert_nodes(&notes).unwrap();
        tx.insert_edges(&edges).unwrap();
    });
    read(store, |tx| {
        // Sessions in the order asked, each in ingestion order, capped.
        let s1 = session("s1");
        let s2 = session("s2");
        let got: Vec<Uuid> = tx
            .list_session_events(&owner("alice"), &[s2.clone(), s1.clone()], 0)
            .unwrap()
            .iter()
            .map(|e| e.event.id)
            .collect();
        assert_eq!(
            got,
            vec![events[1].id, events[0].id, events[2].id, events[3].id]
        );
        let capped: Vec<Uuid> = tx
            .list_session_events(&owner("alice"), &[s1, s2], 2)
            .unwrap()
            .iter()
            .map(|e| e.event.id)
            .collect();
        assert_eq!(capped, vec![events[0].id, events[2].id, events[1].id]);
        // Events by id: the owner's only, each once.
        let ids = [events[0].id, events[4].id, events[0].id, Uuid::new_v4()];
        let got: Vec<Uuid> = tx
            .get_events(&owner("alice"), &ids)
            .unwrap()
            .iter()
            .map(|e| e.event.id)
            .collect();
        assert_eq!(got, vec![events[0].id]);
        // Edges per node, as edges_of answers for each.
        let asked = [notes[0].id, notes[1].id, notes[4].id, Uuid::new_v4()];
        let by_node = tx.edges_of_nodes(&owner("alice"), &asked).unwrap();
        for id in &asked[..2] {
            let one: Vec<Uuid> = tx.edges_of(*id).unwrap().iter().map(|e| e.id).collect();
            let many: Vec<Uuid> = by_node[id].iter().map(|e| e.id).collect();
            assert_eq!(many, one, "edges of {id}");
        }
        // Another owner's node has none of alice's edges; no edge: no entry.
        assert!(!by_node.contains_key(&notes[4].id));
        assert_eq!(by_node.len(), 2);
        let bobs = tx.edges_of_nodes(&owner("bob"), &[notes[4].id]).unwrap();
        assert_eq!(bobs[&notes[4].id].len(), 1, "a loop is listed once");
    });
}

store_test!(nodes_by_id_with_their_owner_leave_out_other_owners);
fn nodes_by_id_with_their_owner_leave_out_other_owners(store: &dyn Store) {
    let events = three();
    let notes: Vec<_> = events.iter().map(note).collect();
    write(store, |tx| {
        tx.insert_events(&events).unwrap();
        tx.insert_nodes(&notes).unwrap();
    });
    read(store, |tx| {
        let ids = [notes[0].id, notes[2].id, notes[0].id, Uuid::new_v4()];
        // Alice's node once, as get_node reads it; bob's left out like a
        // missing one.
        let alices = tx.get_owned_nodes(&owner("alice"), &ids).unwrap();
        assert_eq!(alices, vec![tx.get_node(notes[0].id).unwrap().unwrap()]);
        let bobs = tx.get_owned_nodes(&owner("bob"), &ids).unwrap();
        assert_eq!(bobs, vec![tx.get_node(notes[2].id).unwrap().unwrap()]);
        assert!(tx.get_owned_nodes(&owner("alice"), &[]).unwrap().is_empty());
    });
}

store_test!(vectors_written_for_an_owner_refuse_another_owners_node);
fn vectors_written_for_an_owner_refuse_another_owners_node(store: &dyn Store) {
    let events = three();
    let notes: Vec<_> = events.iter().map(note).collect();
    write(store, |tx| {
        tx.insert_events(&events).unwrap();
        tx.insert_nodes(&notes).unwrap();
    });
    // Bob's note among alice's: refused as missing, nothing written.
    let rows = [
        (notes[0].id, &[1.0, 0.0][..]),
        (notes[2].id, &[0.0, 1.0][..]),
    ];
    let err = attempt(store, |tx| {
        tx.put_owned_embeddings(&owner("alice"), "m", &rows)
            .unwrap_err()
    });
    assert_eq!(err.kind(), StoreErrorKind::NotFound, "{err}");
    read(store, |tx| {
        assert_eq!(tx.get_embedding(notes[0].id).unwrap(), None);
        assert_eq!(tx.get_embedding(notes[2].id).unwrap(), None);
    });
    // Alice's own: written as put_embeddings writes them.
    write(store, |tx| {
        tx.put_owned_embeddings(&owner("alice"), "m", &rows[..1])
            .unwrap();
        tx.put_owned_embeddings(&owner("bob"), "m", &rows[1..])
            .unwrap();
    });
    read(store, |tx| {
        assert_eq!(
            tx.get_embedding(notes[0].id).unwrap(),
            Some(("m".into(), vec![1.0, 0.0]))
        );
        assert_eq!(
            tx.get_embedding(notes[2].id).unwrap(),
            Some(("m".into(), vec![0.0, 1.0]))
        );
    });
}

store_test!(many_key_reads_answer_like_one_key_reads_for_any_keys);
/// Any mix of keys (repeated, missing, another owner's, loops, sessions
/// named twice or not at all): each multi-key read answers what its
/// one-key reads answer, on a store of random sessions and edges.
fn many_key_reads_answer_like_one_key_reads_for_any_keys(store: &dyn Store) {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use std::collections::HashSet;

    // Per event: (owner is bob, session 0..3); edges: (from, to) indexes;
    // asked: indexes, where one past the events is a missing id.
    let case = (
        prop::collection::vec((any::<bool>(), 0..3usize), 1..10),
        prop::collection::vec((0..10usize, 0..10usize), 0..12),
        prop::collection::vec(0..11usize, 0..8),
        prop::collection::vec(0..4usize, 0..5),
    );
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case, |(specs, links, asked, sessions)| {
            let tag = Uuid::new_v4().simple().to_string();
            let (alice, bob) = (format!("a{tag}"), format!("b{tag}"));
            let events: Vec<Event> = specs
                .iter()
                .enumerate()
                .map(|(i, (is_bob, s))| {
                    let who = if *is_bob { &bob } else { &alice };
                    event(EventInput {
                        session_id: Some(format!("s{s}")),
                        ..input(who, &format!("m{i}"), &format!("turn {i}"))
                    })
                })
                .collect();
            let notes: Vec<_> = events.iter().map(note).collect();
            let at = |i: usize| &notes[i % notes.len()];
            let edges: Vec<_> = links
                .iter()
                .filter(|(a, b)| at(*a).owner_id == at(*b).owner_id)
                .map(|(a, b)| edge(at(*a), at(*b), EdgeType::RelatesTo))
                .collect();
            write(store, |tx| {
                tx.insert_events(&events).unwrap();
                tx.insert_nodes(&notes).unwrap();
                tx.insert_edges(&edges).unwrap();
            });
            let missing = Uuid::new_v4();
            let pick = |i: usize, ids: &dyn Fn(usize) -> Uuid| {
                if i >= events.len() {
                    missing
                } else {
                    ids(i)
                }
            };
            let event_ids: Vec<Uuid> = asked.iter().map(|i| pick(*i, &|i| events[i].id)).collect();
            let node_ids: Vec<Uuid> = asked.iter().map(|i| pick(*i, &|i| notes[i].id)).collect();
            let names: Vec<_> = sessions.iter().map(|s| session(&format!("s{s}"))).collect();
            let alice = owner(&alice);
            read(store, |tx| {
                let once = |ids: &[Uuid]| {
                    let mut seen = HashSet::new();
                    ids.iter()
                        .copied()
                        .filter(|i| seen.insert(*i))
                        .collect::<Vec<_>>()
                };
                // Events and nodes: the owner's that exist, each once.
                let mut got: Vec<Uuid> = tx
                    .get_events(&alice, &event_ids)
                    .unwrap()
                    .iter()
                    .map(|e| e.event.id)
                    .collect();
                let mut want: Vec<Uuid> = once(&event_ids)
                    .into_iter()
                    .filter(|id| {
                        tx.get_event(*id)
                            .unwrap()
                            .is_some_and(|e| e.event.owner_id == alice)
                    })
                    .collect();
                got.sort();
                want.sort();
                prop_assert_eq!(got, want);
                let mut got = tx.get_owned_nodes(&alice, &node_ids).unwrap();
                let mut want: Vec<_> = once(&node_ids)
                    .into_iter()
                    .filter_map(|id| tx.get_node(id).unwrap())
                    .filter(|n| n.owner_id == alice)
                    .collect();
                got.sort_by_key(|n| n.id);
                want.sort_by_key(|n| n.id);
                prop_assert_eq!(got, want);
                let mut all = tx.get_nodes(&node_ids).unwrap();
                all.sort_by_key(|n| n.id);
                let mut want: Vec<_> = once(&node_ids)
                    .into_iter()
                    .filter_map(|id| tx.get_node(id).unwrap())
                    .collect();
                want.sort_by_key(|n| n.id);
                prop_assert_eq!(all, want);
                // Sessions: in the order named, each in ingestion order.
                for limit in [0, 1, 2] {
                    let got: Vec<Uuid> = tx
                        .list_session_events(&alice, &names, limit)
                        .unwrap()
                        .iter()
                        .map(|e| e.event.id)
                        .collect();
                    let mut want = Vec::new();
                    for s in &names {
                        want.extend(event_ids_of(tx, &alice, s, limit));
                    }
                    prop_assert_eq!(got, want, "limit {}", limit);
                }
                // Edges: each node's, as edges_of answers, the owner's only.
                let by_node = tx.edges_of_nodes(&alice, &node_ids).unwrap();
                for id in once(&node_ids) {
                    let one: Vec<Uuid> = tx
                        .edges_of(id)
                        .unwrap()
                        .into_iter()
                        .filter(|e| e.owner_id == alice)
                        .map(|e| e.id)
                        .collect();
                    let many: Vec<Uuid> = by_node
                        .get(&id)
                        .map(|v| v.iter().map(|e| e.id).collect())
                        .unwrap_or_default();
                    prop_assert_eq!(many, one, "edges of {}", id);
                }
                prop_assert!(by_node.keys().all(|k| node_ids.contains(k)));
                Ok(())
            })
        })
        .unwrap();
}

/// `owner`'s events of `session`, the first `limit` (0: all), as one
/// session's listing answers.
fn event_ids_of(
    tx: &mut dyn Tx,
    owner: &kith_core::OwnerId,
    session: &kith_core::SessionId,
    limit: usize,
) -> Vec<Uuid> {
    tx.list_events(&EventQuery {
        owner: Some(owner.clone()),
        session: Some(session.clone()),
        limit,
        ..EventQuery::default()
    })
    .unwrap()
    .iter()
    .map(|e| e.event.id)
    .collect()
}
