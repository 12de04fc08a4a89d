//! `kith forget` through the real binary (issue 15): a dry run lists and
//! writes nothing, a forget prints what it verified, the marker is gone from
//! every byte of the pack and from `kith export`, and doctor passes.

mod common;

use common::TestPack;

const MARKER: &str = "Zorvexquill";

fn pack_bytes(t: &TestPack) -> String {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(&t.pack).unwrap() {
        all.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    String::from_utf8_lossy(&all).to_lowercase()
}

#[test]
fn forget_dry_run_then_erase_and_verify() {
    let t = TestPack::new();
    for (session, source, text) in [
        ("secret", "m1", format!("I met {MARKER} at the harbour.")),
        ("secret", "m2", format!("{MARKER} knows the vault code.")),
        ("kept", "m3", "I like green tea.".to_string()),
    ] {
        t.ok(&["ingest", &text, "--session", session, "--source-id", source]);
    }
    let receipt = t.json(&["retrieve", &format!("Who is {MARKER}?")]);
    let request_id = receipt["request_id"].as_str().unwrap().to_string();
    let needle = MARKER[..8].to_lowercase();
    assert!(pack_bytes(&t).contains(&needle));

    // Refusals: no selector, two selectors, no reason, a bad time.
    for args in [
        vec!["forget", "--reason", "x"],
        vec![
            "forget",
            "--session",
            "secret",
            "--whole-owner",
            "--reason",
            "x",
        ],
        vec!["forget", "--session", "secret"],
        vec!["forget", "--before", "2025-01-01", "--reason", "x"],
        vec!["forget", "--session", "nope", "--reason", "x"],
    ] {
        t.fails(&args);
    }
    let err = t.fails(&["forget", "--before", "2025-01-01", "--reason", "x"]);
    assert!(err.contains("not an RFC 3339 timestamp"), "{err}");

    let dry = t.ok(&[
        "forget",
        "--session",
        "secret",
        "--reason",
        "asked",
        "--dry-run",
    ]);
    assert!(dry.contains("would forget 2 event(s)"), "{dry}");
    assert!(dry.contains("nothing was written"), "{dry}");
    assert!(t.ok(&["export"]).contains(MARKER));

    let out = t.ok(&["forget", "--session", "secret", "--reason", "asked"]);
    assert!(out.contains("forgot 2 event(s)"), "{out}");
    assert!(out.contains("compacted: VACUUM"), "{out}");
    assert!(out.contains("verified: 2 tombstone(s) check out"), "{out}");
    assert!(
        out.contains("erased text(s) searched in every byte of 4 pack file(s)"),
        "{out}"
    );
    assert!(out.contains(": 0 found"), "{out}");
    assert!(!out.contains("NOT ERASED"), "{out}");

    assert!(
        !pack_bytes(&t).contains(&needle),
        "the marker is still in the pack"
    );
    let export = t.ok(&["export"]);
    assert!(!export.to_lowercase().contains(&needle));
    assert_eq!(export.matches("\"forgotten\"").count(), 2);
    assert!(t.ok(&["doctor"]).starts_with("healthy"));
    let shown = t.ok(&["retrievals", "show", &request_id]);
    assert!(
        shown.contains("scrubbed by the FORGOTTEN record"),
        "{shown}"
    );
    let listed = t.ok(&["events", "list"]);
    assert_eq!(listed.matches("(forgotten ").count(), 2, "{listed}");
    assert!(listed.contains("I like green tea."), "{listed}");
    let json = t.json(&["forget", "--source-id", "m3", "--reason", "asked"]);
    assert_eq!(json["events"].as_array().unwrap().len(), 1);
    assert_eq!(json["verification"]["tombstones_verified"], 1);
}
