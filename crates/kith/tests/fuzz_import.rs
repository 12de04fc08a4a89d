//! Fuzz-style property of the JSONL import (issue 20): any file, built from
//! good lines, exported lines tampered with, lines of another owner and
//! broken text, imports whole or is refused with a typed error naming a
//! line, and a refused import changes nothing. Bounded: a fixed number of
//! cases on one pack.

mod common;

use std::cell::Cell;

use kith::{Error, ImportOptions, OwnerId};
use proptest::prelude::*;
use serde_json::{json, Value};

/// One line of an import file.
fn line(exported: Vec<Value>) -> impl Strategy<Value = String> {
    let pick = prop::sample::select(exported);
    prop_oneof![
        // Good lines are weighted up: one bad line refuses a whole file, and
        // both outcomes must occur often.
        // A new message.
        4 => "[a-zA-Z ]{1,40}".prop_map(|c| json!({"content": c, "role": "user"}).to_string()),
        // An exported line as it is.
        4 => pick.clone().prop_map(|l| l.to_string()),
        // Tampered: content changed, checksum kept or removed.
        1 => (pick.clone(), any::<bool>(), "[a-z]{1,10}").prop_map(|(mut l, drop, c)| {
            l["content"] = Value::from(c);
            if drop {
                l.as_object_mut().unwrap().remove("checksum");
            }
            l.to_string()
        }),
        // Checksum removed, content intact: still refused (id without checksum).
        1 => pick.clone().prop_map(|mut l| {
            l.as_object_mut().unwrap().remove("checksum");
            l.to_string()
        }),
        // Another owner's line.
        1 => "[a-z]{1,8}"
            .prop_map(|o| json!({"content": "x", "role": "user", "owner_id": o}).to_string()),
        // Not finite, unknown field, wrong type, broken JSON, anything.
        1 => Just(r#"{"content": "x", "role": "user", "metadata": {"a": NaN}}"#.to_string()),
        1 => Just(r#"{"content": "x", "role": "user", "colour": "red"}"#.to_string()),
        1 => Just(r#"{"content": 5, "role": "user"}"#.to_string()),
        1 => Just(r#"{"content": "x", "role": "user""#.to_string()),
        1 => ".{0,80}",
    ]
}

#[test]
fn any_import_is_whole_or_refused_without_a_trace() {
    let (_t, _d, memory) = common::pack();
    let options = ImportOptions {
        owner: Some(OwnerId::new("maya").unwrap()),
        ..ImportOptions::default()
    };
    memory
        .import_jsonl(
            "{\"content\":\"I live in Leeds.\",\"role\":\"user\",\"source_id\":\"a\"}\n\
             {\"content\":\"I like tea.\",\"role\":\"assistant\",\"source_id\":\"b\"}\n",
            &options,
            |_| {},
        )
        .unwrap();
    let mut out = Vec::new();
    memory.export_jsonl(None, &mut out).unwrap();
    let exported: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let (accepted, refused) = (Cell::new(0), Cell::new(0));
    runner
        .run(&prop::collection::vec(line(exported), 1..4), |lines| {
            let text = lines.join("\n");
            let before = common::snapshot(&memory, "maya");
            match memory.import_jsonl(&text, &options, |_| {}) {
                Ok(report) => {
                    accepted.set(accepted.get() + 1);
                    let non_blank = text.lines().filter(|l| !l.trim().is_empty()).count();
                    prop_assert_eq!(report.messages, non_blank);
                    prop_assert_eq!(report.created + report.existing, non_blank);
                }
                Err(e) => {
                    refused.set(refused.get() + 1);
                    prop_assert!(matches!(e, Error::Line { .. }), "not a line error: {e}");
                    prop_assert!(e.to_string().starts_with("line "), "{}", e);
                    prop_assert_eq!(
                        common::snapshot(&memory, "maya"),
                        before,
                        "a refused import wrote"
                    );
                }
            }
            Ok(())
        })
        .unwrap();
    // Both outcomes were exercised (a strategy that only makes one would
    // pass vacuously).
    let (accepted, refused) = (accepted.get(), refused.get());
    assert!(
        accepted > 5 && refused > 5,
        "{accepted} accepted, {refused} refused"
    );
    assert!(memory.doctor().unwrap().healthy());
}

/// Found by `kith-core/tests/fuzz_canon.rs`: serde_json's default float
/// parser is not exact (about 3 in 10 random floats did not survive being
/// written and parsed again). A client's `1.947700395895162e-169` was
/// parsed to 1.9477003958951618e-169, checksummed and stored as that text,
/// and read back as 1.9477003958951616e-169, so the checksum no longer
/// recomputed. With exact parsing (`float_roundtrip`) such metadata is
/// stored, verified and re-imported unchanged.
#[test]
fn float_metadata_survives_storage_and_a_round_trip() {
    let (_t, _d, memory) = common::pack();
    let line = r#"{"content":"a","role":"user","source_id":"f","metadata":{"x":1.947700395895162e-169,"y":-5.9971286842412886e299}}"#;
    let options = ImportOptions {
        owner: Some(OwnerId::new("maya").unwrap()),
        ..ImportOptions::default()
    };
    memory.import_jsonl(line, &options, |_| {}).unwrap();
    let report = memory.doctor().unwrap();
    assert!(report.healthy(), "{:?}", report.problems);
    let mut out = Vec::new();
    memory.export_jsonl(None, &mut out).unwrap();
    let exported = String::from_utf8(out).unwrap();
    let (_t2, _d2, other) = common::pack();
    other.import_jsonl(&exported, &options, |_| {}).unwrap();
    let mut again = Vec::new();
    other.export_jsonl(None, &mut again).unwrap();
    assert_eq!(String::from_utf8(again).unwrap(), exported);
    assert!(other.doctor().unwrap().healthy());
}
