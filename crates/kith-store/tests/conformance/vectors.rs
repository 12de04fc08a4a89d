//! Conformance: embeddings and exact vector search.

use kith_core::{EventInput, Lifecycle, NodeType};
use kith_store::{SearchFilters, Store, StoreErrorKind, VectorQuery};
use uuid::Uuid;

use crate::fixtures::*;
use crate::{store_test, vector_test};

const MODEL: &str = "test/model-3";

/// A unit vector pointing mostly along axis `axis` of 3.
fn unit(axis: usize, lean: f32) -> Vec<f32> {
    let mut v = [lean; 3];
    v[axis] = 1.0;
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

fn vq(owner_id: &str, vector: Vec<f32>) -> VectorQuery {
    VectorQuery {
        owner: owner(owner_id),
        model: MODEL.to_string(),
        vector,
        filters: SearchFilters::default(),
        limit: 10,
    }
}

fn vsearch(store: &dyn Store, q: &VectorQuery) -> Vec<Uuid> {
    read(store, |tx| {
        hit_ids(&tx.search_vector(q).expect("search_vector"))
    })
}

store_test!(embeddings_round_trip_and_replace);
fn embeddings_round_trip_and_replace(store: &dyn Store) {
    let e = event(input("ana", "m1", "I adopted a puppy"));
    let node = write(store, |tx| {
        let (_, n) = put(tx, &e);
        tx.put_embedding(n.id, MODEL, &unit(0, 0.1)).unwrap();
        n
    });
    let got = read(store, |tx| tx.get_embedding(node.id).unwrap()).unwrap();
    assert_eq!(got.0, MODEL);
    assert_eq!(got.1, unit(0, 0.1));
    write(store, |tx| {
        tx.put_embedding(node.id, MODEL, &unit(2, 0.0)).unwrap()
    });
    let got = read(store, |tx| tx.get_embedding(node.id).unwrap()).unwrap();
    assert_eq!(got.1, unit(2, 0.0));
    let models = read(store, |tx| tx.embedding_models().unwrap());
    assert_eq!(models.len(), 1);
    assert_eq!((models[0].dimension, models[0].vectors), (3, 1));
}

store_test!(embedding_of_a_missing_node_or_bad_vector_is_refused);
fn embedding_of_a_missing_node_or_bad_vector_is_refused(store: &dyn Store) {
    let mut tx = store.begin(kith_store::TxMode::Write).unwrap();
    let err = tx
        .put_embedding(Uuid::new_v4(), MODEL, &[1.0, 0.0, 0.0])
        .unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::NotFound);
    let e = event(input("ana", "m1", "text"));
    let (_, n) = put(&mut *tx, &e);
    assert!(tx
        .put_embedding(n.id, MODEL, &[f32::NAN, 0.0, 1.0])
        .is_err());
    assert!(tx.put_embedding(n.id, MODEL, &[]).is_err());
    assert!(tx.get_embedding(n.id).unwrap().is_none());
}

vector_test!(vector_search_ranks_by_cosine_and_never_crosses_owners);
fn vector_search_ranks_by_cosine_and_never_crosses_owners(store: &dyn Store) {
    // Two owners hold identical texts and identical vectors.
    let mut ids = std::collections::HashMap::new();
    write(store, |tx| {
        for who in ["ana", "ben"] {
            for (i, axis) in [0usize, 1, 2].iter().enumerate() {
                let e = event(input(who, &format!("m{i}"), &format!("same text {i}")));
                let (_, n) = put(tx, &e);
                tx.put_embedding(n.id, MODEL, &unit(*axis, 0.2)).unwrap();
                ids.insert((who, *axis), n.id);
            }
        }
    });
    let got = vsearch(store, &vq("ana", unit(1, 0.0)));
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], ids[&("ana", 1)]);
    for id in &got {
        assert!(
            ids.iter().any(|((w, _), v)| *w == "ana" && v == id),
            "ben's node leaked"
        );
    }
    let hits = read(store, |tx| {
        tx.search_vector(&vq("ana", unit(1, 0.0))).unwrap()
    });
    assert!(hits[0].score > hits[1].score && hits[0].score <= 1.0001);
    assert_eq!(hits[0].content, "same text 1");
    assert!(hits[0].event_id.is_some(), "provenance is joined");
    // Another owner, another model, or another dimension finds nothing.
    assert!(vsearch(store, &vq("cleo", unit(1, 0.0))).is_empty());
    let mut other = vq("ana", unit(1, 0.0));
    other.model = "another/model".into();
    assert!(vsearch(store, &other).is_empty());
    assert!(vsearch(store, &vq("ana", vec![1.0, 0.0])).is_empty());
}

vector_test!(vector_search_applies_filters_and_lifecycle);
fn vector_search_applies_filters_and_lifecycle(store: &dyn Store) {
    let (a, b, c) = write(store, |tx| {
        let mut e1 = input("ana", "m1", "first");
        e1.session_id = Some("s1".into());
        let (_, a) = put(tx, &event(e1));
        let mut e2 = input("ana", "m2", "second");
        e2.session_id = Some("s2".into());
        let (_, b) = put(tx, &event(e2));
        let e3 = event(input("ana", "m3", "third"));
        tx.insert_event(&e3).unwrap();
        let c = derived(&e3, NodeType::Fact, Lifecycle::Tentative, "a claim");
        tx.insert_node(&c).unwrap();
        for n in [&a, &b, &c] {
            tx.put_embedding(n.id, MODEL, &unit(0, 0.3)).unwrap();
        }
        (a, b, c)
    });
    let mut q = vq("ana", unit(0, 0.0));
    q.filters.session = Some(session("s2"));
    assert_eq!(vsearch(store, &q), vec![b.id]);
    let mut q = vq("ana", unit(0, 0.0));
    q.filters.node_types = vec![NodeType::Fact];
    assert_eq!(vsearch(store, &q), vec![c.id]);
    // Retiring a node takes it out of default searches at once.
    write(store, |tx| {
        let mut gone = a.clone();
        gone.lifecycle = Lifecycle::Superseded;
        tx.update_node(&gone).unwrap();
    });
    let got = vsearch(store, &vq("ana", unit(0, 0.0)));
    assert_eq!(sorted(got), sorted(vec![b.id, c.id]));
    let mut q = vq("ana", unit(0, 0.0));
    q.filters.lifecycles = vec![Lifecycle::Superseded];
    assert_eq!(vsearch(store, &q), vec![a.id]);
    // limit holds.
    let mut q = vq("ana", unit(0, 0.0));
    q.limit = 1;
    assert_eq!(vsearch(store, &q).len(), 1);
}

vector_test!(vectors_written_later_are_seen_by_later_searches);
fn vectors_written_later_are_seen_by_later_searches(store: &dyn Store) {
    let first = write(store, |tx| {
        let (_, n) = put(tx, &event(input("ana", "m1", "one")));
        tx.put_embedding(n.id, MODEL, &unit(0, 0.0)).unwrap();
        n
    });
    assert_eq!(vsearch(store, &vq("ana", unit(0, 0.0))), vec![first.id]);
    let second = write(store, |tx| {
        let (_, n) = put(tx, &event(input("ana", "m2", "two")));
        tx.put_embedding(n.id, MODEL, &unit(1, 0.0)).unwrap();
        n
    });
    assert_eq!(vsearch(store, &vq("ana", unit(1, 0.0)))[0], second.id);
    // A replaced vector moves its node.
    write(store, |tx| {
        tx.put_embedding(first.id, MODEL, &unit(2, 0.0)).unwrap()
    });
    assert_eq!(vsearch(store, &vq("ana", unit(2, 0.0)))[0], first.id);
    assert_eq!(vsearch(store, &vq("ana", unit(0, 0.0))).len(), 2);
    // Deleting every vector empties search; new ones come back.
    let n = write(store, |tx| tx.delete_embeddings().unwrap());
    assert_eq!(n, 2);
    assert!(vsearch(store, &vq("ana", unit(0, 0.0))).is_empty());
    write(store, |tx| {
        tx.put_embedding(second.id, MODEL, &unit(1, 0.0)).unwrap()
    });
    assert_eq!(vsearch(store, &vq("ana", unit(1, 0.0))), vec![second.id]);
}

store_test!(nodes_missing_embedding_lists_each_node_once);
fn nodes_missing_embedding_lists_each_node_once(store: &dyn Store) {
    let nodes = write(store, |tx| {
        (0..5)
            .map(|i| put(tx, &event(input("ana", &format!("m{i}"), &format!("t{i}")))).1)
            .collect::<Vec<_>>()
    });
    write(store, |tx| {
        let other = put(tx, &event(input("ben", "m1", "b"))).1;
        tx.put_embedding(nodes[1].id, MODEL, &unit(0, 0.0)).unwrap();
        tx.put_embedding(nodes[3].id, "other/model", &unit(0, 0.0))
            .unwrap();
        other
    });
    let missing = read(store, |tx| {
        tx.nodes_missing_embedding(Some(&owner("ana")), MODEL, 0, 100)
            .unwrap()
    });
    let ids: Vec<Uuid> = missing.iter().map(|s| s.node.id).collect();
    assert_eq!(
        ids,
        vec![nodes[0].id, nodes[2].id, nodes[3].id, nodes[4].id]
    );
    // Paging by seq and every-owner listing.
    let page = read(store, |tx| {
        tx.nodes_missing_embedding(Some(&owner("ana")), MODEL, missing[1].seq, 1)
            .unwrap()
    });
    assert_eq!(page[0].node.id, nodes[3].id);
    let all = read(store, |tx| {
        tx.nodes_missing_embedding(None, MODEL, 0, 0).unwrap()
    });
    assert_eq!(all.len(), 5);
}

vector_test!(as_of_sees_memory_as_it_was);
fn as_of_sees_memory_as_it_was(store: &dyn Store) {
    let early = ts("2026-01-01T00:00:00Z");
    let later = ts("2026-03-01T00:00:00Z");
    let (old, new) = write(store, |tx| {
        let e1 = event(input("ana", "m1", "the lisbon office"));
        tx.insert_event(&e1).unwrap();
        let mut old = note(&e1);
        old.created_at = early;
        old.updated_at = early;
        tx.insert_node(&old).unwrap();
        let e2 = event(input("ana", "m2", "the porto office"));
        tx.insert_event(&e2).unwrap();
        let mut new = note(&e2);
        new.created_at = later;
        new.updated_at = later;
        tx.insert_node(&new).unwrap();
        for n in [&old, &new] {
            tx.put_embedding(n.id, MODEL, &unit(0, 0.0)).unwrap();
        }
        (old, new)
    });
    // The old node is superseded at `later`.
    write(store, |tx| {
        let mut o = old.clone();
        o.lifecycle = Lifecycle::Superseded;
        o.updated_at = later;
        tx.update_node(&o).unwrap();
    });
    let between = ts("2026-02-01T00:00:00Z");
    let mut q = lexical("ana", "office");
    q.filters.as_of = Some(between);
    assert_eq!(hit_ids(&search_ok(store, &q)), vec![old.id]);
    q.filters.as_of = None;
    assert_eq!(hit_ids(&search_ok(store, &q)), vec![new.id]);
    let mut v = vq("ana", unit(0, 0.0));
    v.filters.as_of = Some(between);
    assert_eq!(vsearch(store, &v), vec![old.id]);
    v.filters.as_of = Some(ts("2026-04-01T00:00:00Z"));
    assert_eq!(vsearch(store, &v), vec![new.id]);
}

fn search_ok(store: &dyn Store, q: &kith_store::LexicalQuery) -> Vec<kith_store::LexicalHit> {
    read(store, |tx| search(tx, q))
}

vector_test!(a_filter_on_lifecycle_reaches_past_many_closer_vectors);
/// Lifecycle can change after a vector is written, so it is checked after
/// the scan; a search for retired nodes must still find them when a hundred
/// active nodes lie closer to the query.
fn a_filter_on_lifecycle_reaches_past_many_closer_vectors(store: &dyn Store) {
    let retired = write(store, |tx| {
        for i in 0..100 {
            let (_, n) = put(tx, &event(input("ana", &format!("a{i}"), "close")));
            tx.put_embedding(n.id, MODEL, &unit(0, 0.01 * (i % 7) as f32))
                .unwrap();
        }
        (0..5)
            .map(|i| {
                let (_, n) = put(tx, &event(input("ana", &format!("r{i}"), "far")));
                tx.put_embedding(n.id, MODEL, &unit(1, 0.1 * i as f32))
                    .unwrap();
                let mut gone = n.clone();
                gone.lifecycle = Lifecycle::Superseded;
                tx.update_node(&gone).unwrap();
                n.id
            })
            .collect::<Vec<_>>()
    });
    let mut q = vq("ana", unit(0, 0.0));
    q.filters.lifecycles = vec![Lifecycle::Superseded];
    q.limit = 5;
    assert_eq!(sorted(vsearch(store, &q)), sorted(retired));
    // And the default (active) search fills its limit from the close ones.
    let mut q = vq("ana", unit(0, 0.0));
    q.limit = 50;
    assert_eq!(vsearch(store, &q).len(), 50);
}

vector_test!(an_entity_search_after_a_vector_search_answers_as_in_steps);
/// An entity search after a vector search in one read transaction (the
/// order retrieval asks them in; on PostgreSQL the vector search's first
/// read also answers the entity search's probe) finds what the search in
/// its three steps finds in a transaction of its own: for an owner whose
/// entities are all in one scope, an owner without entities and an owner
/// without vectors, with no scope, that scope and another, for entities
/// alone and for entities with notes.
fn an_entity_search_after_a_vector_search_answers_as_in_steps(store: &dyn Store) {
    let at_work = event(EventInput {
        scope: Some("work".into()),
        ..input("ana", "a0", "Ana met Porto's mayor")
    });
    let at_home = event(input("ana", "a1", "a quiet evening about Porto"));
    let bob = event(input("bob", "b0", "bob talked about Porto"));
    let carl = event(input("carl", "c0", "carl has no vectors but knows Porto"));
    write(store, |tx| {
        for e in [&at_work, &at_home, &bob] {
            let (_, n) = put(tx, e);
            tx.put_embedding(n.id, MODEL, &unit(0, 0.1)).unwrap();
        }
        put(tx, &carl);
        for (from, name) in [(&at_work, "Porto"), (&carl, "Porto")] {
            tx.insert_node(&derived(from, NodeType::Entity, Lifecycle::Stable, name))
                .unwrap();
        }
    });
    let types = [
        vec![NodeType::Entity],
        vec![NodeType::Entity, NodeType::Note],
    ];
    let mut found = 0;
    for who in ["ana", "bob", "carl"] {
        for scope_asked in [None, Some("work"), Some("home")] {
            for node_types in &types {
                let q = kith_store::LexicalQuery {
                    common_share: None,
                    filters: SearchFilters {
                        scope: scope_asked.map(scope),
                        node_types: node_types.clone(),
                        ..SearchFilters::default()
                    },
                    ..lexical(who, "Porto")
                };
                let got = read(store, |tx| {
                    tx.search_vector(&vq(who, unit(0, 0.2))).unwrap();
                    tx.search_lexical_nodes(&q).unwrap()
                });
                let want = read(store, |tx| {
                    kith_store::search_lexical_nodes_in_steps(tx, &q).unwrap()
                });
                assert_eq!(got, want, "{who}, {q:?}");
                found += got.len();
            }
        }
    }
    // ana: her entity (no scope, work) alone (1 + 1) and with her notes
    // (3 + 2); bob: his note, with entities asked too (1); carl: his entity
    // alone (1) and with his note (2). "home" holds nothing.
    assert_eq!(found, 7 + 1 + 3, "the searches find what they should");
}
