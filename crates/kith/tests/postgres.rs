//! kith on PostgreSQL through the facade: `init_database` / `connect`,
//! store → ingest → retrieve → organize → undo → doctor, busy transactions
//! retried, and concurrent writers with an organizer running.
//!
//! Every test gets a fresh database on the throwaway server of
//! `kith_store::postgres::testing` (started on first use; a missing server
//! fails the test with the reason, never skips it).

mod common;

use common::{hashing, maya_said as said};

use std::sync::Arc;

use kith::{
    ErrorKind, EventInput, IngestOptions, Job, Memory, OwnerId, RetrieveRequest, SearchRequest,
    WorkStatus,
};
use kith_store::postgres::testing::test_database;
use kith_store::TxMode;

#[test]
fn init_connect_and_refusals() {
    let db = test_database();
    // Nothing there yet: connect says how to make one.
    let err = Memory::connect(db.url()).err().expect("refused");
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(
        err.to_string().contains("kith init --database-url"),
        "{err}"
    );

    let m = Memory::init_database(db.url(), Some(hashing())).unwrap();
    assert_eq!(m.embedder().unwrap().model_id(), "kith/hashing-v1-64");
    assert!(m.database_url().is_some());
    assert_eq!(m.store_backend().backend_name(), "postgres");
    drop(m);

    // A second init is refused and changes nothing.
    let err = Memory::init_database(db.url(), None)
        .err()
        .expect("refused");
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");

    // The model comes back from the database, loaded lazily.
    let m = Memory::connect(db.url()).unwrap();
    let e = m.embedder().expect("the recorded model");
    assert_eq!((e.model_id(), e.dimension()), ("kith/hashing-v1-64", 64));

    // Switching the model is recorded in the database too.
    let mut m = m;
    m.switch_embedder(None, &mut |_, _| {}).unwrap();
    drop(m);
    assert!(Memory::connect(db.url()).unwrap().embedder().is_none());
}

#[test]
fn unreachable_server_is_an_io_error_that_names_the_url_not_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://kith:s3cret@127.0.0.1:{port}/kith?connect_timeout=2");
    let err = Memory::connect(&url).err().expect("no server there");
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    let msg = err.to_string();
    assert!(!msg.contains("s3cret"), "{msg}");
    assert!(msg.contains("is the server running"), "{msg}");
}

#[test]
fn store_ingest_retrieve_organize_undo_doctor() {
    let db = test_database();
    let m = Memory::init_database(db.url(), Some(hashing())).unwrap();
    let owner = OwnerId::new("maya").unwrap();

    let stored = m
        .store(said("maya", "s1", "I adopted a rescue dog called Biscuit."))
        .unwrap();
    assert!(stored.created);
    // Idempotent by source id.
    let again = m
        .store(EventInput {
            source_id: Some("fixed".into()),
            ..said("maya", "s1", "The best part was the food in Lisbon.")
        })
        .unwrap();
    let same = m
        .store(EventInput {
            source_id: Some("fixed".into()),
            ..said("maya", "s1", "The best part was the food in Lisbon.")
        })
        .unwrap();
    assert_eq!((again.event_id, same.created), (same.event_id, false));

    let ingested = m
        .ingest(
            said(
                "maya",
                "s2",
                "Jordan and I started a pottery class in Berlin.",
            ),
            IngestOptions::default(),
        )
        .unwrap();
    assert_eq!(
        m.work_status(&owner, ingested.event_id)
            .unwrap()
            .item
            .status,
        WorkStatus::Complete
    );

    let hits = m
        .search(&SearchRequest::new("maya", "rescue dog").unwrap())
        .unwrap();
    assert_eq!(hits[0].provenance.event_id, stored.event_id);
    let r = m
        .retrieve(&RetrieveRequest::new("maya", "What is the dog called?").unwrap())
        .unwrap();
    assert_eq!(r.results[0].provenance.event_id, stored.event_id, "{r:#?}");
    assert_eq!(r.embedding_model.as_deref(), Some("kith/hashing-v1-64"));
    assert!(r.recorded);
    assert!(m.retrieval_receipt(&owner, r.request_id).is_ok());
    // Vectors are on the server: the owner's notes all have one.
    let mut tx = m.store_backend().begin(TxMode::Read).unwrap();
    let models = tx.embedding_models().unwrap();
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].vectors, 3);
    drop(tx);

    // Two copies of one claim (different evidence): deduplicate merges
    // them in one journaled transaction, undo restores both.
    let (keep, dup) = common::claim_copies(
        &m,
        "maya",
        [stored.event_id, again.event_id],
        "Biscuit is a rescue dog.",
        serde_json::json!({"subject": "Biscuit", "predicate": "is", "object": "a rescue dog"}),
    );
    let report = m
        .organize(&owner, &[Job::Deduplicate, Job::AliasResolve], 0)
        .unwrap();
    let merges: Vec<_> = report.jobs.iter().flat_map(|j| &j.merges).collect();
    assert_eq!(merges.len(), 1, "{report:#?}");
    assert_eq!((merges[0].keep_id, merges[0].retired_id), (keep, dup));
    assert!(!m.node(&owner, dup).unwrap().lifecycle.is_active());
    // The same run again finds nothing new to do.
    let rerun = m.organize(&owner, &[Job::Deduplicate], 0).unwrap();
    assert!(rerun.jobs[0].merges.is_empty(), "{rerun:#?}");

    let undo = m.undo(&owner, merges[0].op_id).unwrap();
    assert!(!undo.replayed);
    assert!(m.node(&owner, dup).unwrap().lifecycle.is_active());
    assert!(m.undo(&owner, merges[0].op_id).unwrap().replayed);

    let doctor = m.doctor().unwrap();
    assert!(doctor.healthy(), "{:?}", doctor.problems);
    assert_eq!(doctor.events_checked, 3);
    assert!(doctor.operations_checked > 0);

    // Export and a fresh connection agree.
    let m2 = Memory::connect(db.url()).unwrap();
    let (a, b) = (common::snapshot(&m, "maya"), common::snapshot(&m2, "maya"));
    assert_eq!(a, b);
}

/// A real deadlock on the server: another client holds a table lock kith's
/// writer needs and then asks for kith's write lock. PostgreSQL aborts
/// kith's transaction (SQLSTATE 40P01, `Busy`); the engine runs it again
/// once the other client is done, and the store succeeds.
#[test]
fn a_deadlocked_write_is_retried_and_succeeds() {
    let db = test_database();
    let m = Memory::init_database(db.url(), None).unwrap();
    let mut other = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
    // The other side waits long before checking for deadlocks, so it is
    // kith's transaction that the server picks to abort.
    other
        .batch_execute(
            "SET deadlock_timeout = '30s';
             BEGIN;
             LOCK TABLE nodes IN SHARE ROW EXCLUSIVE MODE;",
        )
        .unwrap();
    let writer = std::thread::spawn({
        let url = db.url().to_string();
        move || {
            let m = Memory::connect(&url).unwrap();
            m.store(said("maya", "s1", "written after a deadlock"))
        }
    });
    // Let kith take its write lock and block on the nodes table.
    std::thread::sleep(std::time::Duration::from_millis(500));
    other
        .batch_execute(&format!(
            "SELECT pg_advisory_xact_lock({});",
            kith_store::postgres::WRITE_LOCK_KEY
        ))
        .unwrap();
    // kith's writer was aborted (the lock is ours now); let go.
    other.batch_execute("COMMIT").unwrap();
    let receipt = writer.join().unwrap().expect("retried after the deadlock");
    assert!(receipt.created);
    assert_eq!(m.stats(None).unwrap().events, 1);
    assert!(m.doctor().unwrap().healthy());
}

#[path = "common/identity_bodies.rs"]
mod identity_bodies;

/// Issue 13 items 11, 14 and 15 on PostgreSQL: undo sticks until an
/// accept, version-2 proposals, and paths that skip proposals.
#[test]
fn undo_sticks_proposals_and_paths_on_postgres() {
    let db = test_database();
    let m = Memory::init_database(db.url(), None).unwrap();
    identity_bodies::undo_sticks(&m);
    identity_bodies::version_two_proposals(&m);
    identity_bodies::paths_skip_proposals(&m);
}

/// Issue 13 item 12 on PostgreSQL: entity vectors, look-alikes proposed.
#[test]
fn entity_vectors_and_look_alike_proposals_on_postgres() {
    let db = test_database();
    let letters = Arc::new(identity_bodies::Letters::default());
    let m = Memory::init_database(db.url(), Some(letters.clone())).unwrap();
    identity_bodies::look_alikes_proposed(&m, &letters);
}
