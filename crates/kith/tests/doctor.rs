//! `doctor` verifies every event checksum and referential integrity.

mod common;

use kith::{ImportOptions, Memory, OwnerId};

fn damaged_pack(sql: &str) -> kith::DoctorReport {
    let (_t, dir, memory) = common::pack();
    memory
        .import_jsonl(
            "{\"content\":\"I live in Leeds.\",\"role\":\"user\",\"source_id\":\"a\"}\n\
             {\"content\":\"I like tea.\",\"role\":\"user\",\"source_id\":\"b\"}\n",
            &ImportOptions {
                owner: Some(OwnerId::new("maya").unwrap()),
                ..ImportOptions::default()
            },
            |_| {},
        )
        .unwrap();
    assert!(memory.doctor().unwrap().healthy());
    drop(memory);
    // Damage the database behind kith's back (the triggers that keep events
    // append-only must be dropped first: normal operation cannot do this).
    let conn = rusqlite::Connection::open(dir.join("kith.sqlite")).unwrap();
    conn.execute_batch("DROP TRIGGER events_are_immutable; DROP TRIGGER events_are_permanent;")
        .unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    Memory::open(&dir).unwrap().doctor().unwrap()
}

#[test]
fn healthy_pack_is_healthy() {
    let (_t, _d, memory) = common::pack();
    memory.store(common::msg("maya", "hello")).unwrap();
    let report = memory.doctor().unwrap();
    assert!(report.healthy(), "{:?}", report.problems);
    assert_eq!(report.events_checked, 1);
}

#[test]
fn edited_content_is_found() {
    let report =
        damaged_pack("UPDATE events SET content = 'I live in Paris.' WHERE source_id = 'a'");
    assert!(!report.healthy());
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("content does not match its SHA-256")),
        "{:?}",
        report.problems
    );
}

#[test]
fn edited_field_is_found_by_the_checksum() {
    let report = damaged_pack("UPDATE events SET role = 'assistant' WHERE source_id = 'b'");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("checksum does not match its fields")),
        "{:?}",
        report.problems
    );
}

#[test]
fn a_deleted_event_leaves_a_dangling_node() {
    let report = damaged_pack("DELETE FROM events WHERE source_id = 'a'");
    assert_eq!(report.events_checked, 1);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("cites an event that does not exist")),
        "{:?}",
        report.problems
    );
}

#[test]
fn a_missing_note_is_found() {
    let report = damaged_pack(
        "DELETE FROM node_fts; DELETE FROM nodes WHERE content = 'I like tea.';
         INSERT INTO node_fts(node_fts) VALUES ('rebuild');",
    );
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("its note node is missing")),
        "{:?}",
        report.problems
    );
}

#[test]
fn the_journal_is_verified() {
    let (_t, dir, memory) = common::pack();
    memory
        .ingest(
            kith::EventInput {
                speaker: Some("Maya".into()),
                ..common::msg("maya", "I work at Northwind Analytics.")
            },
            kith::IngestOptions::default(),
        )
        .unwrap();
    let report = memory.doctor().unwrap();
    assert!(report.healthy(), "{:?}", report.problems);
    assert_eq!(report.operations_checked, 3);
    drop(memory);
    // Edit a saved plan behind kith's back.
    let conn = rusqlite::Connection::open(dir.join("kith.sqlite")).unwrap();
    conn.execute(
        "UPDATE operations SET payload = replace(payload, 'Northwind', 'Southwind')
         WHERE kind = 'DERIVATION_PREPARED'",
        [],
    )
    .unwrap();
    drop(conn);
    let report = Memory::open(&dir).unwrap().doctor().unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("(DERIVATION_PREPARED): checksum does not match its fields")),
        "{:?}",
        report.problems
    );
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("the saved plan does not match its plan checksum")),
        "{:?}",
        report.problems
    );
}
