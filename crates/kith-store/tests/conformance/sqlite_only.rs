//! SQLITE-ONLY TESTS: not part of the backend-neutral conformance suite.
//!
//! These reach under the `Store` trait: they open the database file with
//! `rusqlite` directly, damage it on purpose, or depend on SQLite's schema
//! versioning. A PostgreSQL backend needs its own equivalents.

use std::path::{Path, PathBuf};

use kith_core::{EdgeType, Lifecycle, Node, NodeType};
use kith_store::sqlite::{OpenMode, SqliteStore, SCHEMA_VERSION};
use kith_store::{EventQuery, NodeQuery, Store, StoreErrorKind, TxMode};
use rusqlite::{params, Connection};
use uuid::Uuid;

use crate::fixtures::*;

/// A new SQLite store in a temporary directory, and the file's path.
fn new_store() -> (tempfile::TempDir, SqliteStore, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("kith.sqlite");
    let store = SqliteStore::open(&path, OpenMode::CreateIfMissing).expect("open");
    (dir, store, path)
}

fn raw(path: &Path) -> Connection {
    Connection::open(path).expect("open the database with rusqlite")
}

#[test]
fn sqlite_only_events_refuse_raw_update_and_delete() {
    let (_dir, store, path) = new_store();
    let e = event(input("alice", "m1", "an event that must never change"));
    let seq = write(&store, |tx| put(tx, &e).0);

    let conn = raw(&path);
    let id = e.id.to_string();
    let attempts = [
        (
            "UPDATE events SET content = 'rewritten' WHERE id = ?1",
            "never updated",
        ),
        (
            "UPDATE events SET seq = seq + 100 WHERE id = ?1",
            "never updated",
        ),
        (
            "INSERT INTO events (id, owner_id, scope, role, content, content_sha256,
                 ingested_at, ingested_at_ms, source_id, checksum)
             VALUES (?1, 'alice', 'personal', 'user', 'x', 'x', 'x', 0, 'm1', 'x')
             ON CONFLICT (id) DO UPDATE SET content = excluded.content",
            "exists",
        ),
        (
            "INSERT OR REPLACE INTO events (id, owner_id, scope, role, content, content_sha256,
                 ingested_at, ingested_at_ms, source_id, checksum)
             VALUES (?1, 'alice', 'personal', 'user', 'x', 'x', 'x', 0, 'm1', 'x')",
            "exists",
        ),
        // Tombstoning that also changes a kept column, or keeps content.
        (
            "UPDATE events SET content = '', speaker = NULL, metadata = NULL,
                 forgotten_at = 'x', forgotten_reason = 'r', forgotten_by = 'b',
                 tombstone_checksum = 'c', role = 'system' WHERE id = ?1",
            "never updated",
        ),
        (
            "UPDATE events SET content = 'still here', forgotten_at = 'x',
                 forgotten_reason = 'r', forgotten_by = 'b', tombstone_checksum = 'c'
             WHERE id = ?1",
            "never updated",
        ),
        ("DELETE FROM events WHERE id = ?1", "never deleted"),
        ("DELETE FROM events WHERE ?1 IS NOT NULL", "never deleted"),
    ];
    for (sql, why) in attempts {
        let err = conn
            .execute(sql, params![id])
            .expect_err(&format!("{sql} must be refused"));
        let text = err.to_string();
        assert!(
            text.contains("append-only") && text.contains(why),
            "{sql}: unexpected error {text}"
        );
    }
    // Also inside an explicit transaction, which is then committed.
    conn.execute_batch("BEGIN").unwrap();
    assert!(conn
        .execute("UPDATE events SET role = 'system'", [])
        .is_err());
    assert!(conn.execute("DELETE FROM events", []).is_err());
    conn.execute_batch("COMMIT").unwrap();
    drop(conn);

    read(&store, |tx| {
        let got = tx.get_event(e.id).unwrap().expect("still there");
        assert_eq!(got.seq, seq);
        assert_same(&got.event, &e);
        assert_eq!(list_events(tx, EventQuery::default()).len(), 1);
    });
}

#[test]
fn sqlite_only_integrity_reports_a_node_citing_a_missing_event() {
    let (_dir, store, _path) = new_store();
    let e = event(input("alice", "m1", "a real event"));
    let missing = Uuid::new_v4();
    let orphan = Node {
        id: Uuid::new_v4(),
        evidence_refs: vec![missing],
        ..note(&e)
    };
    write(&store, |tx| {
        put(tx, &e);
        tx.insert_node(&orphan).unwrap();
    });
    {
        let problems = integrity(&store);
        assert_eq!(
            problems,
            vec![format!(
                "node {} cites an event that does not exist",
                orphan.id
            )],
            "integrity problems"
        );
    }
}

#[test]
fn sqlite_only_integrity_reports_dangling_edges_and_foreign_owners() {
    let (_dir, store, _path) = new_store();
    let alice = event(input("alice", "m1", "alice's event"));
    let bob = event(input("bob", "m1", "bob's event"));
    let (dangling, stolen) = write(&store, |tx| {
        let (_, a) = put(tx, &alice);
        tx.insert_event(&bob).unwrap();
        let ghost = Node {
            id: Uuid::new_v4(),
            ..a.clone()
        };
        let dangling = edge(&a, &ghost, EdgeType::Mentions);
        tx.insert_edge(&dangling).unwrap();
        // A node of alice's derived from bob's event.
        let stolen = Node {
            id: Uuid::new_v4(),
            evidence_refs: vec![bob.id],
            ..a
        };
        tx.insert_node(&stolen).unwrap();
        (dangling, stolen)
    });
    let mut problems = write(&store, |tx| tx.check_integrity().unwrap());
    problems.sort();
    let mut want = vec![
        format!("edge {} points at a node that does not exist", dangling.id),
        format!(
            "node {} belongs to another owner than its source event",
            stolen.id
        ),
    ];
    want.sort();
    assert_eq!(problems, want);
}

#[test]
fn sqlite_only_integrity_reports_a_lexical_index_out_of_step() {
    let (_dir, store, path) = new_store();
    let e = event(input("alice", "m1", "kayak on the river"));
    let n = write(&store, |tx| put(tx, &e).1);
    // Remove the node row behind the index's back.
    raw(&path)
        .execute("DELETE FROM nodes WHERE id = ?1", params![n.id.to_string()])
        .unwrap();
    let problems = write(&store, |tx| tx.check_integrity().unwrap());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("lexical index does not match the nodes"),
        "{problems:?}"
    );
    // Search still answers, without the missing node.
    read(&store, |tx| {
        assert!(search(tx, &lexical("alice", "kayak")).is_empty());
    });
}

#[test]
fn sqlite_only_list_nodes_pages_by_position() {
    let (_dir, store, path) = new_store();
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
    // The position of a node is its `nodes.seq`; list_nodes does not return
    // it, so read it from the file.
    let conn = raw(&path);
    let position = |id: Uuid| -> i64 {
        conn.query_row(
            "SELECT seq FROM nodes WHERE id = ?1",
            params![id.to_string()],
            |r| r.get(0),
        )
        .unwrap()
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
fn sqlite_only_too_new_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kith.sqlite");
    let e = event(input("alice", "m1", "written by this kith"));
    {
        let store = SqliteStore::open(&path, OpenMode::CreateIfMissing).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        write(&store, |tx| {
            put(tx, &e);
        });
    }
    let future = SCHEMA_VERSION + 41;
    {
        let conn = raw(&path);
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            params![future.to_string()],
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let files_before = dir_listing(dir.path());

    for mode in [OpenMode::CreateIfMissing, OpenMode::MustExist] {
        let err = match SqliteStore::open(&path, mode) {
            Ok(_) => panic!("a schema version {future} database must be refused"),
            Err(err) => err,
        };
        assert_eq!(err.kind(), StoreErrorKind::TooNew, "{err}");
        let message = err.message();
        assert!(
            message.contains(&format!("version {future}")),
            "names the file's version: {message}"
        );
        assert!(
            message
                .replace(&future.to_string(), "")
                .contains(&SCHEMA_VERSION.to_string()),
            "names this build's version: {message}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "file modified");
        assert_eq!(dir_listing(dir.path()), files_before);
    }
    let stored: String = raw(&path)
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, future.to_string());
}

fn dir_listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn sqlite_only_must_exist_refuses_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.sqlite");
    let err = match SqliteStore::open(&path, OpenMode::MustExist) {
        Ok(_) => panic!("opened a database that does not exist"),
        Err(err) => err,
    };
    assert_eq!(err.kind(), StoreErrorKind::NotFound, "{err}");
    assert!(!path.exists(), "MustExist created the file");
    assert_eq!(dir_listing(dir.path()), Vec::<String>::new());
}

/// A store error keeps SQLite's own error as its source, so a caller (or
/// the engine's error chain) can still reach it.
#[test]
fn sqlite_only_errors_keep_sqlites_error_as_their_source() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kith.sqlite");
    std::fs::write(&path, vec![0x5a; 8192]).unwrap();
    let err = match SqliteStore::open(&path, OpenMode::MustExist) {
        Ok(_) => panic!("opened a file that is not a database"),
        Err(err) => err,
    };
    assert_eq!(err.kind(), StoreErrorKind::Corrupted, "{err}");
    let source = std::error::Error::source(&err).expect("a source");
    let sqlite = source
        .downcast_ref::<rusqlite::Error>()
        .expect("SQLite's error");
    assert_eq!(
        sqlite.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase)
    );
}

#[test]
fn sqlite_only_commits_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kith.sqlite");
    let e = event(input("alice", "m1", "durable words"));
    let f = Node {
        id: Uuid::new_v4(),
        lifecycle: Lifecycle::Stable,
        node_type: NodeType::Fact,
        ..note(&e)
    };
    let (seq, n) = {
        let store = SqliteStore::open(&path, OpenMode::CreateIfMissing).unwrap();
        let out = write(&store, |tx| {
            let out = put(tx, &e);
            tx.insert_node(&f).unwrap();
            out
        });
        // An uncommitted transaction at close leaves nothing.
        let mut tx = store.begin(TxMode::Write).unwrap();
        tx.insert_event(&event(input("alice", "m2", "lost")))
            .unwrap();
        drop(tx);
        out
    };
    let store = SqliteStore::open(&path, OpenMode::MustExist).unwrap();
    assert_eq!(store.backend_name(), "sqlite");
    assert_eq!(store.path(), path.as_path());
    read(&store, |tx| {
        let got = tx.get_event(e.id).unwrap().expect("persisted");
        assert_eq!(got.seq, seq);
        assert_same(&got.event, &e);
        assert_same(&tx.get_node(n.id).unwrap().unwrap(), &n);
        assert_eq!(
            sorted(hit_ids(&search(tx, &lexical("alice", "durable")))),
            sorted(vec![n.id, f.id])
        );
        assert_eq!(list_events(tx, EventQuery::default()).len(), 1);
    });
    assert_eq!(integrity(&store), Vec::<String>::new());
}

/// In a store of 20,000+ rows, a word found in more than 6% of them is left
/// out of a query that has rarer words (its matches cost time and its IDF
/// adds little); a query of common words only keeps them all.
#[test]
fn sqlite_only_common_words_are_pruned_from_big_stores() {
    let (_dir, store, _path) = new_store();
    write(&store, |tx| {
        for i in 0..21_000 {
            let text = if i % 1000 == 0 {
                format!("weather report with a rare zeppelin sighting {i}")
            } else if i % 7 == 0 {
                format!("weather report number {i}")
            } else {
                format!("plain note number {i}")
            };
            put(tx, &event(input("ana", &format!("m{i}"), &text)));
        }
    });
    let ids = |text: &str| {
        let mut q = lexical("ana", text);
        q.limit = 100;
        read(&store, |tx| hit_ids(&search(tx, &q)))
    };
    // "weather" (3,000 rows, 14%) is dropped: only the zeppelin rows come
    // back, as for "zeppelin" alone.
    let both = ids("weather zeppelin");
    assert_eq!(both.len(), 21);
    assert_eq!(sorted(both), sorted(ids("zeppelin")));
    // Common words alone still search.
    assert_eq!(ids("weather report").len(), 100);
}
