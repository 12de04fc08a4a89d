//! Receipt retention (issue 15 item 6): `RETRIEVAL_RECORDED` receipts
//! expire by count and by age, on write and through `prune_receipts`; only
//! the owner's receipts go, never other journal records or other owners'
//! receipts; an expired receipt's id says it expired; on SQLite the bytes
//! of an expired receipt leave the pack. Every body runs on SQLite and on
//! PostgreSQL (the throwaway server of `kith_store::postgres::testing`).
//!
//! Time is injected, not waited for: old receipts are written through the
//! store with an old `created_at` (and a UUIDv7 id of that time, as
//! `retrieve` issues).

mod common;

use std::time::Duration;

use kith::retrieve::retention::ReceiptRetention;
use kith::{Error, ErrorKind, Memory, Operation, OperationKind, OwnerId, RetrieveRequest};
use kith::{ScopeId, Timestamp};
use kith_store::TxMode;
use serde_json::json;
use uuid::Uuid;

const DAY_MS: i64 = 86_400_000;

/// Runs `body` on a fresh pack.
fn on_sqlite(body: impl FnOnce(Memory)) {
    let (_tmp, _dir, m) = common::pack();
    body(m);
}

/// Runs `body` on a fresh PostgreSQL database.
fn on_postgres(body: impl FnOnce(Memory)) {
    let db = kith_store::postgres::testing::test_database();
    let m = Memory::init_database(db.url(), None).expect("init database");
    body(m);
}

fn store_some(m: &Memory, owner: &str) {
    for text in [
        "Maya adopted a grey cat called Pebble",
        "Maya's sister lives in Lisbon",
    ] {
        m.store(common::msg(owner, text)).unwrap();
    }
}

fn ask(m: &Memory, owner: &str, query: &str) -> Uuid {
    let r = m
        .retrieve(&RetrieveRequest::new(owner, query).unwrap())
        .unwrap();
    assert!(r.recorded);
    r.request_id
}

/// A record of `kind` written `days_ago` days ago, with a UUIDv7 id of that
/// time.
fn old_record(owner: &str, kind: OperationKind, days_ago: i64, text: &str) -> Operation {
    let ms = Timestamp::now().unix_millis() - days_ago * DAY_MS;
    let id = Uuid::new_v7(uuid::Timestamp::from_unix(
        uuid::NoContext,
        (ms / 1000) as u64,
        ((ms % 1000) * 1_000_000) as u32,
    ));
    Operation::new(
        id,
        kind,
        OwnerId::new(owner).unwrap(),
        ScopeId::personal(),
        None,
        json!({"query": text}),
        Timestamp::from_unix_millis(ms).unwrap(),
    )
}

fn append(m: &Memory, ops: &[&Operation]) {
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    for op in ops {
        tx.append_operation(op).unwrap();
    }
    tx.commit().unwrap();
}

fn exists(m: &Memory, id: Uuid) -> bool {
    let mut tx = m.store_backend().begin(TxMode::Read).unwrap();
    tx.get_operation(id).unwrap().is_some()
}

fn receipt_ids(m: &Memory, owner: &str) -> Vec<Uuid> {
    m.retrieval_receipts(&OwnerId::new(owner).unwrap(), 0)
        .unwrap()
        .iter()
        .map(|op| op.id)
        .collect()
}

fn assert_expired(m: &Memory, owner: &str, id: Uuid) {
    let err = m
        .retrieval_receipt(&OwnerId::new(owner).unwrap(), id)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(
        matches!(err, Error::ReceiptExpired { id: got, .. } if got == id),
        "{err:?}"
    );
    assert!(err.to_string().contains("has expired"), "{err}");
}

/// Count limit on write: each receipt written removes the owner's oldest
/// beyond `keep`; the other owner's receipts and other records stay.
fn count_limit_body(m: Memory) {
    let m = m.with_receipt_retention(ReceiptRetention {
        keep: Some(3),
        max_age: None,
    });
    store_some(&m, "alice");
    store_some(&m, "bob");
    // An old record of another kind, older than any receipt.
    let other = old_record("alice", OperationKind::Forgotten, 400, "not a receipt");
    append(&m, &[&other]);
    let bob: Vec<Uuid> = (0..2)
        .map(|i| ask(&m, "bob", &format!("cat {i}")))
        .collect();
    let alice: Vec<Uuid> = (0..5)
        .map(|i| ask(&m, "alice", &format!("where does the sister live {i}")))
        .collect();
    assert_eq!(receipt_ids(&m, "alice"), alice[2..].to_vec());
    assert_eq!(receipt_ids(&m, "bob"), bob);
    assert!(
        exists(&m, other.id),
        "other journal records are never removed"
    );
    for id in &alice[..2] {
        assert!(!exists(&m, *id));
        assert_expired(&m, "alice", *id);
    }
    // Bob has expired nothing: an id of alice's is plainly not found to him.
    let err = m
        .retrieval_receipt(&OwnerId::new("bob").unwrap(), alice[0])
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    // A live receipt of alice's is not bob's either.
    let err = m
        .retrieval_receipt(&OwnerId::new("bob").unwrap(), alice[4])
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    let report = m.doctor().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

/// Age limit: the default retention (30 days) expires alice's 40-day-old
/// receipt when she retrieves, not her 10-day-old one, not bob's old one
/// (another owner) and not an old record of another kind; prune then
/// takes bob's, and an explicit prune applies its own limits.
fn age_limit_body(m: Memory) {
    assert_eq!(m.receipt_retention(), ReceiptRetention::default());
    store_some(&m, "alice");
    let a40 = old_record(
        "alice",
        OperationKind::RetrievalRecorded,
        40,
        "old question",
    );
    let a10 = old_record(
        "alice",
        OperationKind::RetrievalRecorded,
        10,
        "newer question",
    );
    let b40 = old_record(
        "bob",
        OperationKind::RetrievalRecorded,
        40,
        "bob's question",
    );
    let other = old_record("alice", OperationKind::Forgotten, 400, "not a receipt");
    append(&m, &[&a40, &b40, &other, &a10]);
    let now = ask(&m, "alice", "grey cat");
    assert_eq!(receipt_ids(&m, "alice"), vec![a10.id, now]);
    assert!(
        exists(&m, b40.id),
        "another owner's receipts wait for their own"
    );
    assert!(exists(&m, other.id));
    assert_expired(&m, "alice", a40.id);
    // A missing id newer than what expired is plainly not found.
    let err = m
        .retrieval_receipt(&OwnerId::new("alice").unwrap(), Uuid::now_v7())
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");

    let bob = OwnerId::new("bob").unwrap();
    let report = m
        .prune_receipts(&bob, &ReceiptRetention::default())
        .unwrap();
    assert_eq!((report.removed, report.kept), (1, 0));
    assert_eq!(report.expired_through, Some(b40.created_at));
    assert!(report.compacted, "{:?}", report.compaction);
    assert!(!exists(&m, b40.id));
    assert_expired(&m, "bob", b40.id);

    // Nothing more to expire: nothing removed, nothing compacted.
    let again = m
        .prune_receipts(&bob, &ReceiptRetention::default())
        .unwrap();
    assert_eq!((again.removed, again.compacted), (0, false));

    // An explicit prune: nothing older than 5 days.
    let alice = OwnerId::new("alice").unwrap();
    let report = m
        .prune_receipts(
            &alice,
            &ReceiptRetention {
                keep: None,
                max_age: Some(Duration::from_secs(5 * 86_400)),
            },
        )
        .unwrap();
    assert_eq!((report.removed, report.kept), (1, 1));
    assert_eq!(receipt_ids(&m, "alice"), vec![now]);
    assert_expired(&m, "alice", a10.id);
    // Keep none.
    let report = m
        .prune_receipts(
            &alice,
            &ReceiptRetention {
                keep: Some(0),
                max_age: None,
            },
        )
        .unwrap();
    assert_eq!((report.removed, report.kept), (1, 0));
    assert_expired(&m, "alice", now);
    assert!(exists(&m, other.id));
    let report = m.doctor().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

/// A backlog (the limit lowered) drains a batch per receipt written, and
/// an unlimited retention removes nothing.
fn backlog_body(m: Memory) {
    store_some(&m, "alice");
    let old: Vec<Operation> = (0..20)
        .map(|i| {
            old_record(
                "alice",
                OperationKind::RetrievalRecorded,
                60 - i,
                &format!("q{i}"),
            )
        })
        .collect();
    append(&m, &old.iter().collect::<Vec<_>>());
    let m = m.with_receipt_retention(ReceiptRetention::UNLIMITED);
    ask(&m, "alice", "grey cat");
    assert_eq!(receipt_ids(&m, "alice").len(), 21);
    // An age too long for milliseconds expires nothing (it must not wrap).
    let huge = ReceiptRetention {
        keep: None,
        max_age: Some(Duration::from_secs(u64::MAX / 2)),
    };
    let report = m
        .prune_receipts(&OwnerId::new("alice").unwrap(), &huge)
        .unwrap();
    assert_eq!((report.removed, report.kept), (0, 21));
    let m = m.with_receipt_retention(ReceiptRetention::default());
    ask(&m, "alice", "grey cat");
    // 16 of the 20 expired ones go with this write, the rest with the next.
    assert_eq!(
        receipt_ids(&m, "alice").len(),
        22 - kith::retrieve::retention::ON_WRITE_BATCH
    );
    ask(&m, "alice", "grey cat");
    assert_eq!(receipt_ids(&m, "alice").len(), 3);
}

#[test]
fn count_limit_on_write_sqlite() {
    on_sqlite(count_limit_body);
}

#[test]
fn count_limit_on_write_postgres() {
    on_postgres(count_limit_body);
}

#[test]
fn age_limit_on_write_and_prune_sqlite() {
    on_sqlite(age_limit_body);
}

#[test]
fn age_limit_on_write_and_prune_postgres() {
    on_postgres(age_limit_body);
}

#[test]
fn a_backlog_drains_over_writes_sqlite() {
    on_sqlite(backlog_body);
}

#[test]
fn a_backlog_drains_over_writes_postgres() {
    on_postgres(backlog_body);
}

/// On SQLite the words of a pruned receipt leave every byte of the pack
/// (the question is quoted only in its receipt).
#[test]
fn a_pruned_receipt_leaves_no_byte_in_the_pack() {
    let (_tmp, dir, m) = common::pack();
    store_some(&m, "alice");
    let marker = "zebraquokkamarker";
    let id = ask(&m, "alice", &format!("what about {marker} and the cat"));
    let found = |dir: &std::path::Path| {
        common::dir_bytes(dir)
            .iter()
            .any(|(_, b)| b.windows(marker.len()).any(|w| w == marker.as_bytes()))
    };
    assert!(
        found(&dir),
        "the receipt quotes the question before the prune"
    );
    let report = m
        .prune_receipts(
            &OwnerId::new("alice").unwrap(),
            &ReceiptRetention {
                keep: Some(0),
                max_age: None,
            },
        )
        .unwrap();
    assert_eq!(report.removed, 1);
    assert!(report.compacted, "{:?}", report.compaction);
    assert!(
        !found(&dir),
        "the marker is gone from every file of the pack"
    );
    assert_expired(&m, "alice", id);
}
