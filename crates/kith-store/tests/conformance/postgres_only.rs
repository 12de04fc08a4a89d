//! POSTGRESQL-ONLY TESTS: not part of the backend-neutral conformance suite.
//!
//! These reach under the `Store` trait: they talk to the test database with
//! the `postgres` client directly, damage it on purpose, or depend on the
//! PostgreSQL schema's versioning, locking and transaction behaviour. Each
//! gets its own database from `kith_store::postgres::testing`.

use kith_core::rng::Rng;
use std::time::{Duration, Instant};

use kith_core::{EdgeType, Node};
use kith_store::postgres::testing::{test_database, TestDatabase};
use kith_store::postgres::{PgStore, SCHEMA_VERSION};
use kith_store::{EventQuery, NodeQuery, Store, StoreErrorKind, TxMode};
use postgres::{Client, NoTls};
use uuid::Uuid;

use crate::fixtures::*;

/// A new database with kith's schema, and a store on it.
fn new_store() -> (TestDatabase, PgStore) {
    let db = test_database();
    let store = PgStore::connect(db.url()).expect("connect");
    (db, store)
}

fn raw(db: &TestDatabase) -> Client {
    Client::connect(db.url(), NoTls).expect("connect with the postgres client")
}

#[test]
fn postgres_only_events_refuse_raw_update_delete_and_truncate() {
    let (db, store) = new_store();
    let e = event(input("alice", "m1", "an event that must never change"));
    let seq = write(&store, |tx| put(tx, &e).0);

    let mut conn = raw(&db);
    let attempts = [
        (
            "UPDATE events SET content = 'rewritten' WHERE id = $1",
            "never updated",
        ),
        (
            "INSERT INTO events (id, owner_id, scope, role, content, content_sha256,
                 ingested_at, ingested_at_ms, source_id, checksum)
             VALUES ($1, 'alice', 'personal', 'user', 'x', 'x', 'x', 0, 'm1', 'x')
             ON CONFLICT (id) DO UPDATE SET content = excluded.content",
            "never updated",
        ),
        // Tombstoning that also changes a kept column, or keeps content.
        (
            "UPDATE events SET content = '', speaker = NULL, metadata = NULL,
                 forgotten_at = 'x', forgotten_reason = 'r', forgotten_by = gen_random_uuid(),
                 tombstone_checksum = 'c', role = 'system' WHERE id = $1",
            "never updated",
        ),
        (
            "UPDATE events SET content = 'still here', forgotten_at = 'x',
                 forgotten_reason = 'r', forgotten_by = gen_random_uuid(),
                 tombstone_checksum = 'c'
             WHERE id = $1",
            "never updated",
        ),
        ("DELETE FROM events WHERE id = $1", "never deleted"),
        (
            "DELETE FROM events WHERE $1::uuid IS NOT NULL",
            "never deleted",
        ),
    ];
    for (sql, why) in attempts {
        let err = conn
            .execute(sql, &[&e.id])
            .expect_err(&format!("{sql} must be refused"));
        let db_err = err.as_db_error().expect("a server error");
        assert!(
            db_err.message().contains("append-only") && db_err.message().contains(why),
            "{sql}: unexpected error {err}"
        );
        // A constraint violation, which the store reports as a conflict.
        assert_eq!(&db_err.code().code()[..2], "23", "{sql}");
    }
    let err = conn.batch_execute("TRUNCATE events").unwrap_err();
    let message = err.as_db_error().map(|d| d.message().to_string());
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("never truncated")),
        "{err:?}"
    );
    drop(conn);

    read(&store, |tx| {
        let got = tx.get_event(e.id).unwrap().expect("still there");
        assert_eq!(got.seq, seq);
        assert_same(&got.event, &e);
        assert_eq!(list_events(tx, EventQuery::default()).len(), 1);
    });
}

#[test]
fn postgres_only_too_new_schema_is_refused_and_left_untouched() {
    let (db, store) = new_store();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let e = event(input("alice", "m1", "written by this kith"));
    write(&store, |tx| {
        put(tx, &e);
    });
    drop(store);
    let future = SCHEMA_VERSION + 41;
    let mut conn = raw(&db);
    conn.execute(
        "UPDATE kith_meta SET value = $1 WHERE key = 'schema_version'",
        &[&future.to_string()],
    )
    .unwrap();
    let err = match PgStore::connect(db.url()) {
        Ok(_) => panic!("a schema version {future} database must be refused"),
        Err(err) => err,
    };
    assert_eq!(err.kind(), StoreErrorKind::TooNew, "{err}");
    assert!(
        err.message().contains(&format!("version {future}")),
        "{err}"
    );
    let stored: String = conn
        .query_one(
            "SELECT value FROM kith_meta WHERE key = 'schema_version'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, future.to_string());
    let events: i64 = conn
        .query_one("SELECT count(*) FROM events", &[])
        .unwrap()
        .get(0);
    assert_eq!(events, 1);
}

#[test]
fn postgres_only_concurrent_first_opens_migrate_once() {
    let db = test_database();
    let url = db.url().to_string();
    // Eight processes' worth of first opens at once: each step must be
    // applied once (a second CREATE TABLE would fail), and all succeed.
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| PgStore::connect(&url).map(|store| store.schema_version())))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in results {
        assert_eq!(r.expect("connect").expect("version"), SCHEMA_VERSION);
    }
    let mut conn = raw(&db);
    let keys: Vec<String> = conn
        .query("SELECT key FROM kith_meta ORDER BY key", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(keys, ["embeddings_generation", "schema_version"]);
}

#[test]
fn postgres_only_integrity_reports_damage() {
    let (db, store) = new_store();
    let alice = event(input("alice", "m1", "alice's event"));
    let bob = event(input("bob", "m1", "bob's event"));
    let missing = Uuid::new_v4();
    let (a, orphan, dangling, stolen) = write(&store, |tx| {
        let (_, a) = put(tx, &alice);
        tx.insert_event(&bob).unwrap();
        let orphan = Node {
            id: Uuid::new_v4(),
            evidence_refs: vec![missing],
            ..a.clone()
        };
        tx.insert_node(&orphan).unwrap();
        let ghost = Node {
            id: Uuid::new_v4(),
            ..a.clone()
        };
        let dangling = edge(&a, &ghost, EdgeType::Mentions);
        tx.insert_edge(&dangling).unwrap();
        let stolen = Node {
            id: Uuid::new_v4(),
            evidence_refs: vec![bob.id],
            ..a.clone()
        };
        tx.insert_node(&stolen).unwrap();
        tx.put_embedding(a.id, "m", &[1.0, 0.0]).unwrap();
        (a, orphan, dangling, stolen)
    });
    assert_eq!(integrity(&store).len(), 4);
    // Damage under the store: a node vanishes behind its embedding, and an
    // event loses its checksum format (the trigger must be bypassed for
    // that, as a careless administrator might).
    let mut conn = raw(&db);
    conn.execute("DELETE FROM nodes WHERE id = $1", &[&a.id])
        .unwrap();
    conn.batch_execute(
        "ALTER TABLE events DISABLE TRIGGER events_are_immutable;
         UPDATE events SET checksum = 'x' WHERE owner_id = 'bob';
         ALTER TABLE events ENABLE TRIGGER events_are_immutable;",
    )
    .unwrap();
    let mut problems = integrity(&store);
    problems.sort();
    let mut want = vec![
        format!("node {} cites an event that does not exist", orphan.id),
        format!(
            "node {} lists evidence that is not a stored event",
            orphan.id
        ),
        format!("edge {} points at a node that does not exist", dangling.id),
        format!(
            "node {} belongs to another owner than its source event",
            stolen.id
        ),
        format!("event {} has no well-formed checksum", bob.id),
        format!("the embedding of node {} has no node of its owner", a.id),
    ];
    want.sort();
    assert_eq!(problems, want);
}

#[test]
fn postgres_only_list_nodes_pages_by_position() {
    let (db, store) = new_store();
    let mut want = Vec::new();
    write(&store, |tx| {
        for i in 0..11 {
            let (_, n) = put(tx, &event(input("alice", &format!("a{i}"), "alice")));
            want.push(n.id);
            if i % 2 == 0 {
                put(tx, &event(input("bob", &format!("b{i}"), "bob")));
            }
        }
    });
    let mut conn = raw(&db);
    let mut position = |id: Uuid| -> i64 {
        conn.query_one("SELECT seq FROM nodes WHERE id = $1", &[&id])
            .unwrap()
            .get(0)
    };
    for page_size in [1, 3, 4, 11] {
        let mut seen = Vec::new();
        let mut after = 0;
        loop {
            let page = read(&store, |tx| {
                tx.list_nodes(&NodeQuery {
                    owner: Some(owner("alice")),
                    after_seq: after,
                    limit: page_size,
                    ..NodeQuery::default()
                })
                .unwrap()
            });
            assert!(page.len() <= page_size);
            let Some(last) = page.last() else { break };
            assert_eq!(last.seq, position(last.node.id));
            after = last.seq;
            seen.extend(page.iter().map(|n| n.node.id));
            assert!(seen.len() <= want.len(), "paging repeats nodes");
        }
        assert_eq!(seen, want, "page size {page_size}");
    }
}

#[test]
fn postgres_only_writers_queue_like_sqlite() {
    let (_db, store) = new_store();
    let first = store.begin(TxMode::Write).unwrap();
    let hold = Duration::from_millis(400);
    let waited = std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let started = Instant::now();
            let mut tx = store.begin(TxMode::Write).expect("second writer");
            let waited = started.elapsed();
            put(&mut *tx, &event(input("alice", "m2", "second")));
            tx.commit().unwrap();
            waited
        });
        std::thread::sleep(hold);
        let mut first = first;
        put(&mut *first, &event(input("alice", "m1", "first")));
        first.commit().unwrap();
        waiter.join().unwrap()
    });
    assert!(waited >= hold / 2, "second writer did not wait: {waited:?}");
    // Readers never wait for writers.
    let _writer = store.begin(TxMode::Write).unwrap();
    let started = Instant::now();
    let n = read(&store, |tx| list_events(tx, EventQuery::default()).len());
    // A reader that waited for the writer would wait for good (it holds its
    // lock until dropped): any bound far from zero tells the two apart
    // without depending on how loaded the machine is.
    assert!(started.elapsed() < Duration::from_secs(10), "reader waited");
    assert_eq!(n, 2);
}

#[test]
fn postgres_only_concurrent_writers_lose_nothing() {
    let (_db, store) = new_store();
    std::thread::scope(|s| {
        for w in 0..4 {
            let store = &store;
            s.spawn(move || {
                for i in 0..25 {
                    write(store, |tx| {
                        put(tx, &event(input("alice", &format!("w{w}-{i}"), "busy")));
                    });
                }
            });
        }
    });
    read(&store, |tx| {
        let listed = list_events(tx, EventQuery::default());
        assert_eq!(listed.len(), 100);
        assert!(listed.windows(2).all(|p| p[0].seq < p[1].seq));
        assert_eq!(tx.stats(None).unwrap().nodes(), 100);
    });
}

#[test]
fn postgres_only_a_failed_statement_makes_commit_fail_not_vanish() {
    let (_db, store) = new_store();
    let e = event(input("alice", "m1", "kept only if the commit says so"));
    let mut tx = store.begin(TxMode::Write).unwrap();
    let (_, n) = put(&mut *tx, &e);
    // pgvector refuses more than 16000 dimensions, on the server.
    let huge = vec![0.01f32; 20_000];
    assert!(tx.put_embedding(n.id, "m", &huge).is_err());
    // The server has aborted the transaction: later work and the commit
    // say so instead of pretending.
    assert!(tx.get_event(e.id).is_err());
    let err = tx.commit().expect_err("commit after a failed statement");
    assert!(err.message().contains("nothing was written"), "{err}");
    read(&store, |tx| assert_eq!(tx.get_event(e.id).unwrap(), None));
    // The store is still usable.
    write(&store, |tx| {
        put(tx, &e);
    });
}

#[test]
fn postgres_only_unreachable_server_is_an_io_error() {
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("host=127.0.0.1 port={port} user=kith dbname=kith connect_timeout=2");
    let err = match PgStore::connect(&url) {
        Ok(_) => panic!("connected to nothing"),
        Err(e) => e,
    };
    assert_eq!(err.kind(), StoreErrorKind::Io, "{err}");
    let err = match PgStore::connect("not a url at all ===") {
        Ok(_) => panic!("accepted a malformed URL"),
        Err(e) => e,
    };
    assert_eq!(err.kind(), StoreErrorKind::Other, "{err}");
}

#[test]
fn postgres_only_a_role_that_may_not_enable_pgvector_is_told_how() {
    // pgvector is installed on the test server, but only a superuser may
    // enable it (it is not a trusted extension): a plain role owning a
    // database without it must be told what to ask for.
    let db = test_database();
    let mut admin = raw(&db);
    let suffix = format!("{}_{}", std::process::id(), Uuid::new_v4().simple());
    let role = format!("kith_plain_{}", &suffix[..20]);
    let name = format!("kith_novec_{}", &suffix[..20]);
    // One statement per call: CREATE DATABASE refuses a transaction block.
    for sql in [
        format!("CREATE ROLE {role} LOGIN PASSWORD 'kith'"),
        format!("CREATE DATABASE {name} TEMPLATE template0 OWNER {role}"),
    ] {
        admin
            .batch_execute(&sql)
            .expect("create a plain role and a database without pgvector");
    }
    let config: postgres::Config = db.url().parse().expect("test URL parses");
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let url = format!("host={host} port={port} user={role} password=kith dbname={name}");
    let err = match PgStore::connect(&url) {
        Ok(_) => panic!("a role that may not create pgvector migrated anyway"),
        Err(e) => e,
    };
    let msg = err.to_string();
    assert!(msg.contains("CREATE EXTENSION vector"), "{msg}");
    assert!(msg.contains("superuser"), "{msg}");
    // Nothing was left half made: the migration rolled back.
    let mut check = Client::connect(&url, NoTls).expect("connect as the plain role");
    let tables: i64 = check
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0);
    drop(check);
    // Once a superuser enables it, the same role migrates.
    let mut on_new = Client::connect(
        &format!("host={host} port={port} user=postgres dbname={name}"),
        NoTls,
    )
    .expect("connect as the superuser");
    on_new.batch_execute("CREATE EXTENSION vector").unwrap();
    drop(on_new);
    let store = PgStore::connect(&url).expect("migrates once pgvector is enabled");
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    drop(store);
    for sql in [
        format!("DROP DATABASE {name} WITH (FORCE)"),
        format!("DROP ROLE {role}"),
    ] {
        admin.batch_execute(&sql).unwrap();
    }
}

// ---------------------------------------------------------------------------
// The in-process copy of vectors (postgres/vectors.rs)
// ---------------------------------------------------------------------------

/// A deterministic unit vector of `dim` dimensions.
fn random_unit(rng: &mut Rng, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|_| rng.signed_unit()).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// `count` notes of `owner` in sessions s0..s3 with random vectors; every
/// fifth one is superseded after its vector is written.
fn notes_with_vectors(store: &PgStore, owner_id: &str, count: usize, seed: u64) -> Vec<Uuid> {
    let mut state = Rng::new(seed);
    write(store, |tx| {
        (0..count)
            .map(|i| {
                let mut e = input(owner_id, &format!("v{seed}-{i}"), &format!("note {i}"));
                e.session_id = Some(format!("s{}", i % 4));
                let (_, n) = put(tx, &event(e));
                tx.put_embedding(n.id, "test/rand-16", &random_unit(&mut state, 16))
                    .unwrap();
                if i % 5 == 4 {
                    let mut gone = n.clone();
                    gone.lifecycle = kith_core::Lifecycle::Superseded;
                    tx.update_node(&gone).unwrap();
                }
                n.id
            })
            .collect()
    })
}

/// A search of ana's `test/rand-16` vectors for a random one.
fn random_query(state: &mut Rng, limit: usize) -> kith_store::VectorQuery {
    kith_store::VectorQuery {
        owner: owner("ana"),
        model: "test/rand-16".into(),
        vector: random_unit(state, 16),
        filters: kith_store::SearchFilters::default(),
        limit,
    }
}

fn vector_hits(store: &PgStore, q: &kith_store::VectorQuery) -> Vec<(Uuid, f64)> {
    read(store, |tx| {
        tx.search_vector(q)
            .unwrap()
            .iter()
            .map(|h| (h.node_id, h.score))
            .collect()
    })
}

/// The same searches, answered by pgvector's exact scan and by the
/// in-process copy, return the same nodes in the same order with the same
/// scores — across filters, lifecycle, limits, and vectors written after
/// the copy was made (by this process and by another one).
#[test]
fn postgres_only_vector_copy_answers_like_the_sql_scan() {
    use kith_store::postgres::{PgOptions, VectorCacheMode};
    let db = test_database();
    // Configured at connect (typed options), not through the environment.
    let with = |mode| PgOptions {
        vector_cache: mode,
        ..PgOptions::default()
    };
    let sql = PgStore::connect_with(db.url(), with(VectorCacheMode::Off)).expect("connect");
    let copy = PgStore::connect_with(db.url(), with(VectorCacheMode::Eager)).expect("connect");
    notes_with_vectors(&copy, "ana", 300, 7);
    notes_with_vectors(&copy, "ben", 50, 8);
    let mut state = Rng::new(99);
    let compare = |state: &mut Rng, round: usize| {
        for i in 0..12 {
            let mut q = random_query(state, [5, 10, 40][i % 3]);
            match i % 4 {
                1 => q.filters.session = Some(session("s2")),
                2 => q.filters.lifecycles = vec![kith_core::Lifecycle::Superseded],
                3 => q.filters.as_of = Some(ts("2020-01-01T00:00:00Z")),
                _ => {}
            }
            let want = vector_hits(&sql, &q);
            let got = vector_hits(&copy, &q);
            let ids = |h: &[(Uuid, f64)]| h.iter().map(|x| x.0).collect::<Vec<_>>();
            assert_eq!(ids(&got), ids(&want), "round {round}, query {i}");
            for (g, w) in got.iter().zip(&want) {
                assert!((g.1 - w.1).abs() < 1e-5, "score {} vs {}", g.1, w.1);
            }
            // Not vacuous: unfiltered searches fill their limit (round 2
            // has only 24 active vectors).
            if i % 4 == 0 {
                assert_eq!(got.len(), q.limit.min(if round == 2 { 24 } else { 1000 }));
            }
        }
    };
    compare(&mut state, 0);
    assert_eq!(copy.vector_cache_owners(), vec![("ana".to_string(), 300)]);
    assert!(sql.vector_cache_owners().is_empty(), "Off holds no copy");
    // Written by this process after the copy, then by another one.
    notes_with_vectors(&copy, "ana", 40, 9);
    notes_with_vectors(&sql, "ana", 40, 10);
    compare(&mut state, 1);
    assert_eq!(copy.vector_cache_owners(), vec![("ana".to_string(), 380)]);
    // Another process rebuilds every vector: the copy starts over.
    write(&sql, |tx| tx.delete_embeddings().unwrap());
    let q = random_query(&mut state, 10);
    assert!(vector_hits(&copy, &q).is_empty());
    notes_with_vectors(&sql, "ana", 30, 11);
    compare(&mut state, 2);
    assert_eq!(copy.vector_cache_owners(), vec![("ana".to_string(), 30)]);
}

/// By default the first search of an owner is answered in SQL while a
/// background thread copies the owner's vectors; later searches use the
/// copy, with the same answers.
#[test]
fn postgres_only_vectors_are_copied_in_the_background() {
    use kith_store::postgres::VectorCacheMode;
    let (_db, store) = new_store();
    store.set_vector_cache(VectorCacheMode::Background);
    notes_with_vectors(&store, "ana", 120, 3);
    let mut state = Rng::new(5);
    let q = random_query(&mut state, 10);
    let first = vector_hits(&store, &q);
    assert_eq!(first.len(), 10);
    let deadline = Instant::now() + Duration::from_secs(60);
    while store.vector_cache_owners().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the owner's vectors were never copied"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(store.vector_cache_owners(), vec![("ana".to_string(), 120)]);
    let again = vector_hits(&store, &q);
    let ids = |h: &[(Uuid, f64)]| h.iter().map(|x| x.0).collect::<Vec<_>>();
    assert_eq!(ids(&again), ids(&first));
    // Turning the copy off drops it; searches still answer.
    store.set_vector_cache(VectorCacheMode::Off);
    assert!(store.vector_cache_owners().is_empty());
    assert_eq!(ids(&vector_hits(&store, &q)), ids(&first));
}

/// In a big store (20k+ nodes ever written), a word the statistics find in
/// 6%+ of rows (or the query's own share) is left out of a query that has
/// rarer words, as on SQLite; alone, it is still searched.
#[test]
fn postgres_only_common_words_are_left_out_of_queries_with_rarer_ones() {
    let (db, store) = new_store();
    // Make the store look big (seq counts every node ever written).
    raw(&db)
        .batch_execute("ALTER TABLE nodes ALTER COLUMN seq RESTART WITH 30000")
        .unwrap();
    let violin = write(&store, |tx| {
        let mut violin = Vec::new();
        for i in 0..300 {
            let text = match i % 100 {
                0..=39 => format!("we walked along the harbour, day {i}"),
                40..=42 => format!("she practised the violin, day {i}"),
                _ => format!("a quiet afternoon at home, day {i}"),
            };
            let (_, n) = put(tx, &event(input("ana", &format!("m{i}"), &text)));
            if text.contains("violin") {
                violin.push(n.id);
            }
        }
        violin
    });
    let q = lexical("ana", "harbour violin");
    // Before statistics exist nothing is left out: harbour notes match too.
    let before = read(&store, |tx| search(tx, &q));
    assert!(before.len() > violin.len());
    raw(&db).batch_execute("ANALYZE nodes").unwrap();
    let after = read(&store, |tx| search(tx, &q));
    let violins = violin.len();
    assert_eq!(sorted(hit_ids(&after)), sorted(violin));
    // A query that asks for a larger share of its own keeps "harbour"
    // (40%); the smaller share a category's members ask for is the same
    // rule (`LexicalQuery::pruning_share`).
    let mut wide = lexical("ana", "harbour violin");
    wide.common_share = Some(0.5);
    let kept = read(&store, |tx| search(tx, &wide));
    assert!(kept.len() > violins, "{}", kept.len());
    // The same past the scored words' bound (the statistics read first,
    // then the search): words that match nothing pad the query.
    let padding: String = (0..70).map(|i| format!(" zzpad{i}")).collect();
    let long = lexical("ana", &format!("harbour violin{padding}"));
    let pruned = read(&store, |tx| search(tx, &long));
    assert_eq!(pruned.len(), violins);
    let mut long_wide = long.clone();
    long_wide.common_share = Some(0.5);
    let kept = read(&store, |tx| search(tx, &long_wide));
    assert!(kept.len() > violins, "{}", kept.len());
    // A common word alone is still searched.
    let alone = read(&store, |tx| search(tx, &lexical("ana", "harbour")));
    assert!(alone.len() >= 10, "{}", alone.len());
}

/// On PostgreSQL a batch is one statement whatever its size, and a refused
/// batch writes none of its rows while the transaction stays usable (the
/// guard inserts nothing rather than failing the statement).
#[test]
fn postgres_only_a_batch_is_one_round_trip_and_a_refused_one_leaves_the_tx_usable() {
    let (_db, store) = new_store();
    let log = store
        .statement_log()
        .expect("a server store counts round trips");
    let events: Vec<_> = (0..500)
        .map(|i| event(input("alice", &format!("m{i}"), &format!("message {i}"))))
        .collect();
    let notes: Vec<Node> = events.iter().map(note).collect();
    let mut tx = store.begin(TxMode::Write).unwrap();
    // Prepare the statements first, so the count below is the steady state.
    tx.insert_events(&[]).unwrap();
    let before = log.round_trips();
    tx.insert_events(&events[..250]).unwrap();
    tx.insert_nodes(&notes[..250]).unwrap();
    let first = log.round_trips() - before;
    let before = log.round_trips();
    tx.insert_events(&events[250..]).unwrap();
    tx.insert_nodes(&notes[250..]).unwrap();
    // Two statements (and their first preparation) for 250 rows, then two.
    assert!(first <= 4, "{first} round trips for two batches");
    assert_eq!(log.round_trips() - before, 2);

    // A batch with one stored source id: refused, none of it written, and
    // the transaction still commits what came before.
    let late = event(input("alice", "late", "not written"));
    let clash = event(input("alice", "m7", "the source id of a stored event"));
    let err = tx.insert_events(&[late.clone(), clash]).unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Conflict, "{err}");
    assert!(tx.get_event(late.id).unwrap().is_none());
    tx.commit()
        .expect("the refused batch did not abort the transaction");
    let s = read(&store, |tx| tx.stats(None).unwrap());
    assert_eq!(s.events, 500);
}

/// The opt-in HNSW path: after `hnsw::create_index`, a store with
/// `hnsw: true` answers from the index, one owner's rows only, with the
/// engine's re-check (lifecycle filters) applied; on a few hundred vectors
/// the graph walk finds what the exact scan finds.
#[test]
fn postgres_only_the_hnsw_path_answers_one_owner_like_the_exact_scan() {
    let db = test_database();
    let exact = PgStore::connect_with(
        db.url(),
        kith_store::postgres::PgOptions {
            vector_cache: kith_store::postgres::VectorCacheMode::Off,
            ..Default::default()
        },
    )
    .expect("connect");
    notes_with_vectors(&exact, "ana", 300, 7);
    notes_with_vectors(&exact, "ben", 300, 8);
    let built = kith_store::postgres::hnsw::create_index(db.url(), 16).expect("build");
    assert!(built.as_nanos() > 0);
    // Building again is a no-op, not an error.
    kith_store::postgres::hnsw::create_index(db.url(), 16).expect("exists");
    let hnsw = PgStore::connect_with(
        db.url(),
        kith_store::postgres::PgOptions {
            hnsw: true,
            ..Default::default()
        },
    )
    .expect("connect");
    let mut state = Rng::new(5);
    let mut same = 0;
    for i in 0..20 {
        let mut q = random_query(&mut state, 10);
        if i % 2 == 1 {
            q.filters.lifecycles = vec![kith_core::Lifecycle::Superseded];
        }
        let want = vector_hits(&exact, &q);
        let got = vector_hits(&hnsw, &q);
        assert_eq!(got.len(), want.len(), "query {i}");
        let ids = |h: &[(Uuid, f64)]| {
            h.iter()
                .map(|x| x.0)
                .collect::<std::collections::HashSet<_>>()
        };
        same += ids(&got).intersection(&ids(&want)).count();
        for (g, _) in &got {
            let owner = read(&hnsw, |tx| tx.get_node(*g).unwrap().unwrap().owner_id);
            assert_eq!(owner, owner_for("ana"));
        }
    }
    // Recall@10 over 20 queries: near 1 at this size.
    assert!(same >= 190, "{same} of 200");
    // The index exists; whether a search walks it or sorts the owner's
    // rows found through (owner_id, model, dim) is the planner's choice by
    // cost (a small owner: the sort), which `kith bench owners --hnsw`
    // measures.
    let mut conn = raw(&db);
    let n: i64 = conn
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'embeddings_hnsw_16'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

fn owner_for(id: &str) -> kith_core::OwnerId {
    owner(id)
}

/// `append_unless_expiring` (one round trip: schema step 4) journals a
/// record alone only when the retention rule would expire nothing: never
/// more records than `keep`, none of the oldest `scan` created before the
/// cutoff. Attacked with times within a few milliseconds of the cutoff
/// (nanoseconds, which PostgreSQL rounds to microseconds): an answer of
/// `true` always means nothing was due, and `false` wrote nothing and is
/// only given when something was due or a time sat within the
/// millisecond of margin. Records of another kind or owner never count.
#[test]
fn postgres_only_append_unless_expiring_follows_the_retention_rule() {
    use kith_core::{Operation, OperationKind, ScopeId, Timestamp};
    use kith_store::ExpiryCheck;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let (_db, store) = new_store();
    let kind = OperationKind::RetrievalRecorded;
    // 2025-01-01T00:00:05Z; stamps fall within 3 ms of it.
    let cutoff_ms: i64 = 1_735_689_605_000;
    let at = |delta_ns: i64| {
        let ns = 5_000_000_000 + delta_ns;
        ts(&format!(
            "2025-01-01T00:00:{:02}.{:09}Z",
            ns / 1_000_000_000,
            ns % 1_000_000_000
        ))
    };
    let generation = |store: &PgStore| {
        let mut tx = store.begin(TxMode::Read).unwrap();
        tx.write_generation().unwrap().unwrap()
    };
    let case = (
        prop::collection::vec(-3_000_000i64..3_000_000, 0..6),
        prop::option::of(1u64..7),
        any::<bool>(),
        1usize..5,
        // The receipt's text, written into the statement as a literal.
        prop_oneof![any::<String>(), "[a-z'\\\\$;E ]{0,12}"],
    );
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case, |(deltas, keep, aged, scan, text)| {
            let who = format!("o{}", Uuid::new_v4().simple());
            let record = |created_at: Timestamp, kind: OperationKind| {
                Operation::new(
                    Uuid::new_v4(),
                    kind,
                    owner(&who),
                    ScopeId::personal(),
                    None,
                    serde_json::json!({"q": text}),
                    created_at,
                )
            };
            let stamps: Vec<Timestamp> = deltas.iter().map(|d| at(*d)).collect();
            write(&store, |tx| {
                for s in &stamps {
                    tx.append_operation(&record(*s, kind)).unwrap();
                }
                // Neither counts: another kind, another owner.
                tx.append_operation(&record(
                    ts("2000-01-01T00:00:00Z"),
                    OperationKind::ExtractionValidated,
                ))
                .unwrap();
                tx.append_operation(&operation("someone-else", kind, serde_json::json!({})))
                    .unwrap();
            });
            let check = ExpiryCheck {
                keep,
                cutoff_ms: aged.then_some(cutoff_ms),
                scan,
            };
            let oldest = || stamps.iter().take(scan).map(|s| s.unix_millis());
            let due = keep.is_some_and(|k| stamps.len() as u64 + 1 > k)
                || check.cutoff_ms.is_some_and(|c| oldest().any(|m| m < c));
            let near = check.cutoff_ms.is_some_and(|c| oldest().any(|m| m == c));
            let before = generation(&store);
            let op = record(ts("2025-01-01T00:00:09Z"), kind);
            let appended = store.append_unless_expiring(&op, &check).unwrap();
            let count = {
                let mut tx = store.begin(TxMode::Read).unwrap();
                tx.count_operations(&owner(&who), kind).unwrap()
            };
            if appended {
                prop_assert!(!due, "appended although a record was due");
                prop_assert_eq!(count, stamps.len() as u64 + 1);
                prop_assert_eq!(generation(&store), before + 1);
                let stored = {
                    let mut tx = store.begin(TxMode::Read).unwrap();
                    tx.get_operation(op.id).unwrap()
                };
                prop_assert_eq!(
                    stored.as_ref(),
                    Some(&op),
                    "the record reads back as written"
                );
                let again = store.append_unless_expiring(
                    &op,
                    &ExpiryCheck {
                        keep: None,
                        cutoff_ms: None,
                        scan,
                    },
                );
                prop_assert_eq!(again.unwrap_err().kind(), StoreErrorKind::Conflict);
            } else {
                prop_assert!(due || near, "declined with nothing due");
                prop_assert_eq!(count, stamps.len() as u64);
                prop_assert_eq!(generation(&store), before);
            }
            Ok(())
        })
        .unwrap();
}

/// A read transaction's `ROLLBACK` waits for its connection's next
/// statement and travels with it (one round trip), and never waits longer
/// than `read_end_wait`: the next transaction on that connection sees what
/// another store committed meanwhile, and a connection left alone leaves
/// its transaction within the wait (checked from the server's side).
#[test]
fn postgres_only_a_read_transactions_end_travels_with_the_next_statement() {
    use kith_core::OperationKind;
    use kith_store::postgres::PgOptions;

    let db = test_database();
    let with_wait = |wait| {
        PgStore::connect_with(
            db.url(),
            PgOptions {
                read_end_wait: wait,
                ..PgOptions::default()
            },
        )
        .expect("connect")
    };
    let kind = OperationKind::RetrievalRecorded;
    let count = |store: &PgStore| {
        read(store, |tx| {
            tx.count_operations(&owner("ana"), kind).unwrap()
        })
    };
    let append = |store: &PgStore| {
        write(store, |tx| {
            tx.append_operation(&operation("ana", kind, serde_json::json!({})))
                .unwrap()
        })
    };
    let patient = with_wait(Duration::from_secs(60));
    let other = with_wait(Duration::from_secs(60));
    append(&patient);
    assert_eq!(count(&patient), 1);
    append(&other);
    let log = patient.statement_log().expect("PostgreSQL counts");
    log.start_recording();
    assert_eq!(count(&patient), 2, "a new snapshot after the deferred end");
    let sent = log.take_recorded();
    assert!(
        sent.first()
            .is_some_and(|s| s.starts_with("ROLLBACK; BEGIN")),
        "{sent:#?}"
    );

    let mut server = Client::connect(db.url(), NoTls).expect("connect");
    let waiting = |server: &mut Client| -> i64 {
        server
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND state = 'idle in transaction'",
                &[],
            )
            .expect("pg_stat_activity")
            .get(0)
    };
    // `patient`'s last read waits (for a minute); a store waiting 50 ms
    // ends its own soon.
    assert_eq!(waiting(&mut server), 1);
    let brief = with_wait(Duration::from_millis(50));
    assert_eq!(count(&brief), 2);
    assert_eq!(waiting(&mut server), 2);
    let started = Instant::now();
    while waiting(&mut server) > 1 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a read transaction waited past its bound"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(patient);
    drop(brief);
}

// ---------------------------------------------------------------------------
// Lexical search at many owners (postgres/search.rs, `owner_matches`)
// ---------------------------------------------------------------------------

/// Whether the plan node that `needle`'s line belongs to (the nearest
/// node line at or above it, `->` or the root) ran; `None` when no line
/// holds `needle`.
fn ran(plan: &[String], needle: impl Fn(&str) -> bool) -> Option<bool> {
    let at = plan.iter().position(|l| needle(l))?;
    let node = plan[..=at]
        .iter()
        .rev()
        .find(|l| l.contains("->"))
        .unwrap_or(&plan[0]);
    Some(!node.contains("never executed"))
}

/// A small owner's lexical search reads and tests its own rows; the
/// store-wide `tsvector` index (every owner's rows) is left for owners of
/// `OWNER_FIRST_BELOW` nodes or more. Read from the executed plan: exactly
/// one of the two branches runs, chosen by the owner's size.
#[test]
fn postgres_only_a_small_owner_is_searched_through_its_own_rows() {
    let (db, store) = new_store();
    let big = kith_store::postgres::OWNER_FIRST_BELOW as usize;
    write(&store, |tx| {
        for (who, count) in [("ana", 30), ("ben", 30), ("cai", big)] {
            let events: Vec<_> = (0..count)
                .map(|i| {
                    let text = match i % 3 {
                        0 => format!("we walked along the harbour, day {i}"),
                        1 => format!("she practised the violin, day {i}"),
                        _ => format!("a quiet afternoon at home, day {i}"),
                    };
                    event(input(who, &format!("m{i}"), &text))
                })
                .collect();
            for chunk in events.chunks(500) {
                tx.insert_events(chunk).unwrap();
                tx.insert_nodes(&chunk.iter().map(note).collect::<Vec<_>>())
                    .unwrap();
            }
        }
    });
    raw(&db).batch_execute("ANALYZE").unwrap();
    let plan = |who: &str| {
        store
            .explain_lexical(&lexical(who, "harbour violin"))
            .expect("explain")
            .expect("a query with words")
    };
    let own_rows = |l: &str| l.contains("ts_match_vq(");
    let index = |l: &str| {
        l.split("content_tsv @@ ")
            .skip(1)
            .any(|rest| rest.starts_with('$'))
    };
    let small = plan("ana");
    assert_eq!(ran(&small, own_rows), Some(true), "{}", small.join("\n"));
    assert_eq!(ran(&small, index), Some(false), "{}", small.join("\n"));
    let large = plan("cai");
    assert_eq!(ran(&large, own_rows), Some(false), "{}", large.join("\n"));
    assert_eq!(ran(&large, index), Some(true), "{}", large.join("\n"));
    // And both answer: 20 and 3,334 matching notes, the best 100 of them.
    for (who, want) in [("ana", 20), ("cai", 100)] {
        let hits = read(&store, |tx| search(tx, &lexical(who, "harbour violin")));
        assert_eq!(hits.len(), want, "{who}");
    }
}
