//! `export` writes JSONL that `import` turns back into an identical log.

mod common;

use kith::{EventQuery, ImportOptions, Memory, OwnerId};

/// 5,000 varied messages: several owners' worth of sessions, speakers,
/// offsets, metadata, node types, with and without source ids.
fn messages() -> String {
    let roles = ["user", "participant", "assistant", "tool", "system"];
    let mut lines = Vec::new();
    for i in 0..5000 {
        let mut m = serde_json::json!({
            "content": format!("Message {i}: I moved to city {} and I like \"tea\" ☕ #{}", i % 37, i % 11),
            "role": roles[i % roles.len()],
            "session_id": format!("session-{}", i / 50),
        });
        if i % 2 == 0 {
            m["speaker"] = serde_json::json!(format!("Person {}", i % 7));
        }
        if i % 3 != 0 {
            m["event_time"] = serde_json::json!(format!(
                "2024-{:02}-{:02}T{:02}:{:02}:00{}",
                1 + i % 12,
                1 + i % 28,
                i % 24,
                i % 60,
                ["Z", "+02:00", "-05:30"][i % 3]
            ));
        }
        if i % 5 != 0 {
            m["source_id"] = serde_json::json!(format!("src-{i}"));
        }
        if i % 4 == 0 {
            m["metadata"] = serde_json::json!({"n": i, "f": 0.5, "tags": ["a", "b"], "nested": {"z": 1, "a": null}});
        }
        if i % 9 == 0 {
            m["node_type"] = serde_json::json!("fact");
        }
        if i % 10 == 0 {
            m["scope"] = serde_json::json!("project:apollo");
        }
        lines.push(m.to_string());
    }
    lines.join("\n")
}

fn checksums(memory: &Memory) -> Vec<(uuid::Uuid, String)> {
    memory
        .events(&EventQuery::default())
        .unwrap()
        .into_iter()
        .map(|e| (e.event.id, e.event.checksum))
        .collect()
}

#[test]
fn import_export_import_gives_identical_checksums() {
    let (_t, _d, first) = common::pack();
    let options = ImportOptions {
        owner: Some(OwnerId::new("maya").unwrap()),
        batch_size: 700,
        ..ImportOptions::default()
    };
    let report = first.import_jsonl(&messages(), &options, |_| {}).unwrap();
    assert_eq!((report.messages, report.created), (5000, 5000));

    let mut exported = Vec::new();
    assert_eq!(first.export_jsonl(None, &mut exported).unwrap(), 5000);
    let exported = String::from_utf8(exported).unwrap();

    let (_t2, _d2, second) = common::pack();
    // No default owner: every exported line names its own.
    let report = second
        .import_jsonl(&exported, &ImportOptions::default(), |_| {})
        .unwrap();
    assert_eq!(report.created, 5000);

    let a = checksums(&first);
    assert_eq!(a.len(), 5000);
    assert_eq!(a, checksums(&second));

    // And the second export is byte-identical to the first.
    let mut again = Vec::new();
    second.export_jsonl(None, &mut again).unwrap();
    assert_eq!(String::from_utf8(again).unwrap(), exported);

    // Note node types survive too.
    let owner = OwnerId::new("maya").unwrap();
    let facts = |m: &Memory| {
        m.stats(Some(&owner))
            .unwrap()
            .nodes_by_type
            .into_iter()
            .find(|(t, _)| *t == kith::NodeType::Fact)
            .map(|(_, n)| n)
    };
    assert_eq!(facts(&first), Some(556));
    assert_eq!(facts(&first), facts(&second));
    assert!(second.doctor().unwrap().healthy());
}

#[test]
fn reimporting_the_same_file_is_idempotent() {
    let (_t, _d, memory) = common::pack();
    let options = ImportOptions {
        owner: Some(OwnerId::new("maya").unwrap()),
        ..ImportOptions::default()
    };
    let text =
        "{\"content\":\"a\",\"role\":\"user\"}\n\n{\"content\":\"b\",\"role\":\"assistant\"}\n";
    let first = memory.import_jsonl(text, &options, |_| {}).unwrap();
    assert_eq!((first.messages, first.created, first.existing), (2, 2, 0));
    let second = memory.import_jsonl(text, &options, |_| {}).unwrap();
    assert_eq!(
        (second.messages, second.created, second.existing),
        (2, 0, 2)
    );
}

#[test]
fn a_tampered_export_line_is_refused() {
    let (_t, _d, memory) = common::pack();
    memory
        .store(common::msg("maya", "I live in Leeds."))
        .unwrap();
    let mut out = Vec::new();
    memory.export_jsonl(None, &mut out).unwrap();
    let tampered = String::from_utf8(out).unwrap().replace("Leeds", "Paris");
    let (_t2, _d2, other) = common::pack();
    let err = other
        .import_jsonl(&tampered, &ImportOptions::default(), |_| {})
        .unwrap_err();
    assert!(err.to_string().starts_with("line 1: checksum is"), "{err}");
    assert_eq!(other.stats(None).unwrap().events, 0);
}
