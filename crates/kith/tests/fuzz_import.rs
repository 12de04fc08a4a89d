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
        // A new message.
        "[a-zA-Z ]{1,40}".prop_map(|c| json!({"content": c, "role": "user"}).to_string()),
        // An exported line as it is.
        pick.clone().prop_map(|l| l.to_string()),
        // Tampered: content changed, checksum kept or removed.
        (pick.clone(), any::<bool>(), "[a-z]{1,10}").prop_map(|(mut l, drop, c)| {
            l["content"] = Value::from(c);
            if drop {
                l.as_object_mut().unwrap().remove("checksum");
            }
            l.to_string()
        }),
        // Checksum removed, content intact: still refused (id without checksum).
        pick.clone().prop_map(|mut l| {
            l.as_object_mut().unwrap().remove("checksum");
            l.to_string()
        }),
        // Another owner's line.
        "[a-z]{1,8}"
            .prop_map(|o| json!({"content": "x", "role": "user", "owner_id": o}).to_string()),
        // Not finite, unknown field, wrong type, broken JSON, anything.
        Just(r#"{"content": "x", "role": "user", "metadata": {"a": NaN}}"#.to_string()),
        Just(r#"{"content": "x", "role": "user", "colour": "red"}"#.to_string()),
        Just(r#"{"content": 5, "role": "user"}"#.to_string()),
        Just(r#"{"content": "x", "role": "user""#.to_string()),
        ".{0,80}",
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
        .run(&prop::collection::vec(line(exported), 1..5), |lines| {
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
