//! Busy write transactions (a serialization failure or deadlock on a
//! server, a lock held too long on SQLite) are run again whole, a bounded
//! number of times, and reported when they stay busy. The store here
//! refuses chosen commits as `Busy` and rolls them back, as PostgreSQL does.

mod common;
#[path = "common/faulty.rs"]
mod faulty;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use kith::{ErrorKind, IngestOptions, Memory, OwnerId, WorkStatus, BUSY_ATTEMPTS};

fn memory() -> (tempfile::TempDir, Memory, Arc<faulty::Faults>) {
    let tmp = tempfile::tempdir().unwrap();
    let faults = Arc::new(faulty::Faults::default());
    let store = faulty::FaultyStore {
        inner: kith_store::sqlite::SqliteStore::open(
            &tmp.path().join("kith.sqlite"),
            kith_store::sqlite::OpenMode::CreateIfMissing,
        )
        .unwrap(),
        faults: faults.clone(),
    };
    (tmp, Memory::with_store(Box::new(store)), faults)
}

#[test]
fn a_busy_store_is_retried_and_written_once() {
    let (_t, m, faults) = memory();
    faults.busy_commits.store(2, Ordering::SeqCst);
    let r = m.store(common::msg("o", "I moved to Lisbon.")).unwrap();
    assert!(r.created);
    assert_eq!(faults.busy_refused.load(Ordering::SeqCst), 2);
    assert_eq!(m.stats(None).unwrap().events, 1);
}

#[test]
fn a_busy_ingest_is_retried_through_derivation() {
    let (_t, m, faults) = memory();
    // Admission refused once, then the reingest's transaction once.
    faults.busy_commits.store(1, Ordering::SeqCst);
    let r = m
        .ingest(
            common::msg("o", "Jordan and I started a pottery class in Berlin."),
            IngestOptions::default(),
        )
        .unwrap();
    faults.busy_commits.store(1, Ordering::SeqCst);
    let owner = OwnerId::new("o").unwrap();
    m.reingest_event(&owner, r.event_id).unwrap();
    assert_eq!(faults.busy_refused.load(Ordering::SeqCst), 2);
    assert_eq!(
        m.work_status(&owner, r.event_id).unwrap().item.status,
        WorkStatus::Complete
    );
    assert!(m.doctor().unwrap().healthy());
}

#[test]
fn a_store_that_stays_busy_is_reported_and_nothing_is_written() {
    let (_t, m, faults) = memory();
    faults.busy_commits.store(1000, Ordering::SeqCst);
    let err = m.store(common::msg("o", "never written")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("still busy after {BUSY_ATTEMPTS} attempts")),
        "{msg}"
    );
    assert_eq!(
        faults.busy_refused.load(Ordering::SeqCst),
        BUSY_ATTEMPTS as usize
    );
    faults.busy_commits.store(0, Ordering::SeqCst);
    assert_eq!(m.stats(None).unwrap().events, 0);
}
