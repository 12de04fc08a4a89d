//! The `kith` binary, command by command, in a temporary pack.

mod common;

use common::TestPack;

#[test]
fn store_search_show_round() {
    let t = TestPack::new();
    let receipt = t.json(&[
        "store",
        "I started my new job at Brightpath Labs.",
        "--speaker",
        "Maya Okafor",
        "--session",
        "s1",
        "--event-time",
        "2025-08-09T21:33:00+01:00",
        "--source-id",
        "m1",
        "--metadata",
        "{\"channel\":\"chat\"}",
    ]);
    assert_eq!(receipt["created"], true);
    let event_id = receipt["event_id"].as_str().unwrap().to_string();
    let node_id = receipt["node_id"].as_str().unwrap().to_string();

    // Idempotent by source id.
    let again = t.json(&["store", "different text", "--source-id", "m1"]);
    assert_eq!(again["created"], false);
    assert_eq!(again["event_id"].as_str().unwrap(), event_id);

    let hits = t.json(&["search", "Brightpath job"]);
    assert_eq!(hits.as_array().unwrap().len(), 1);
    assert_eq!(hits[0]["provenance"]["speaker"], "Maya Okafor");
    assert_eq!(
        hits[0]["provenance"]["event_time"],
        "2025-08-09T21:33:00+01:00"
    );

    let text = t.ok(&["search", "Brightpath"]);
    assert!(
        text.contains("[2025-08-09 21:33] Maya Okafor (user): I started my new job"),
        "{text}"
    );

    let event = t.json(&["events", "show", &event_id]);
    assert_eq!(event["content"], "I started my new job at Brightpath Labs.");
    assert_eq!(event["metadata"]["channel"], "chat");
    let node = t.json(&["nodes", "show", &node_id]);
    assert_eq!(node["node_type"], "note");

    let list = t.json(&["events", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 1);
    let nodes = t.json(&["nodes", "list"]);
    assert_eq!(nodes.as_array().unwrap().len(), 1);
    assert!(t
        .ok(&["events", "list"])
        .contains("Maya Okafor (user) in s1"));

    let stats = t.json(&["stats"]);
    assert_eq!(stats["events"], 1);
    assert_eq!(stats["sessions"], 1);

    // Another owner sees nothing of maya's.
    let jordan = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
            .arg("--pack")
            .arg(&t.pack)
            .args(["--owner", "jordan"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = jordan(&["--json", "search", "Brightpath"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    let err = jordan(&["events", "show", &event_id]);
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("not found"));
}

#[test]
fn failures_exit_nonzero_with_one_readable_line() {
    let t = TestPack::new();
    let cases: [(&[&str], &str); 6] = [
        (
            &["store", "hi", "--role", "robot"],
            "error: role is \"robot\"; expected one of",
        ),
        (
            &["store", "hi", "--event-time", "2025-01-01T10:00:00"],
            "which has no UTC offset",
        ),
        (
            &["store", "hi", "--metadata", "{\"x\": NaN}"],
            "error: metadata.x is NaN; JSON numbers must be finite",
        ),
        (&["store", "  "], "error: content is empty"),
        (&["events", "show", "not-a-uuid"], "is not a UUID"),
        (
            &["events", "show", "6f1c9c55-3c1a-4f5e-9a0e-1f1f1f1f1f1f"],
            "not found",
        ),
    ];
    for (args, message) in cases {
        let stderr = t.fails(args);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    assert_eq!(t.json(&["stats"])["events"], 0);

    let missing = common::kith_cmd(&t.path("nope.kith"), &["stats"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    let pack = t.path("nope.kith");
    // Said once (it was `error: X: X`).
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: {} is not a kith pack (no manifest.json); create one with `kith init {}`",
            pack.display(),
            pack.display()
        ),
    );
}

#[test]
fn import_names_what_is_wrong_with_a_line() {
    let t = TestPack::new();
    let file = t.path("in.jsonl");
    let good = "{\"content\": \"fine\", \"role\": \"user\"}\n";
    let cases = [
        (
            "[{\"content\": \"x\", \"role\": \"user\"}]",
            "error: line 2: line is a JSON array; expected one JSON object (one message) a line",
        ),
        (
            "{\"content\": \"x\"}",
            "error: line 2: role is missing; it is required",
        ),
        (
            "{\"content\": \"x\", \"role\": \"user\", \"speaker\": 7}",
            "error: line 2: speaker is integer `7`; expected a string",
        ),
    ];
    for (line, message) in cases {
        std::fs::write(&file, format!("{good}{line}\n")).unwrap();
        let stderr = t.fails(&["import", file.to_str().unwrap()]);
        assert_eq!(stderr.trim_end(), message, "{line}");
    }
    // Nothing of any refused file was written.
    assert_eq!(t.json(&["stats"])["events"], 0);
}

#[test]
fn import_reports_the_bad_line_and_writes_nothing() {
    let t = TestPack::new();
    let file = t.path("in.jsonl");
    let mut text = common::jsonl("a", 20);
    text.push_str("\n{\"content\": \"broken\", \"role\": \"user\"\n");
    std::fs::write(&file, &text).unwrap();
    let stderr = t.fails(&["import", file.to_str().unwrap()]);
    assert!(
        stderr.starts_with("error: line 21: line is not valid JSON"),
        "{stderr}"
    );
    assert_eq!(t.json(&["stats"])["events"], 0);

    std::fs::write(&file, common::jsonl("a", 20)).unwrap();
    let out = t.ok(&["import", file.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "imported 20 messages: 20 stored, 0 already present"
    );
    let out = t.ok(&["import", file.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "imported 20 messages: 0 stored, 20 already present"
    );
}

#[test]
fn export_then_import_rebuilds_the_same_log() {
    let t = TestPack::new();
    let file = t.path("in.jsonl");
    std::fs::write(&file, common::jsonl("a", 300)).unwrap();
    t.ok(&["import", file.to_str().unwrap()]);
    let export = t.path("out.jsonl");
    t.ok(&["export", "--out", export.to_str().unwrap()]);

    let other = TestPack::new();
    other.ok(&["import", export.to_str().unwrap()]);
    assert_eq!(t.ok(&["export"]), other.ok(&["export"]));
    assert_eq!(
        other.ok(&["doctor"]).trim(),
        "healthy: 300 events verified, 0 journal records verified"
    );
}

#[test]
fn doctor_exits_one_on_damage() {
    let t = TestPack::new();
    t.ok(&["store", "I live in Leeds.", "--source-id", "x"]);
    assert_eq!(t.json(&["doctor"])["problems"].as_array().unwrap().len(), 0);
    let conn = rusqlite::Connection::open(t.pack.join("kith.sqlite")).unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_are_immutable; UPDATE events SET content = 'I live in Paris.';",
    )
    .unwrap();
    drop(conn);
    let out = t.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("DAMAGED:"), "{text}");
    assert!(
        text.contains("content does not match its SHA-256"),
        "{text}"
    );
}

#[test]
fn demo_answers_from_memory_with_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    let keep = tmp.path().join("demo.kith");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
        .args(["demo", "--keep", keep.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("kith demo: stored 53 messages from 4 sessions"),
        "{text}"
    );
    assert!(
        text.contains("extracted offline from 53 messages:"),
        "{text}"
    );
    assert!(text.contains("Q: Which city did Maya move to?"), "{text}");
    assert!(text.contains("A: [2025-"), "{text}");
    assert!(text.contains("Maya Okafor (user)"), "{text}");
    assert!(
        text.contains("labelled evidence in the top 3 for 8 of 8 questions"),
        "{text}"
    );
    // The pack it leaves is a normal, healthy pack.
    let doctor = common::kith_cmd(&keep, &["doctor"]).output().unwrap();
    assert!(doctor.status.success());
}

#[test]
fn config_show_prints_effective_options() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
        .args(["--json", "config", "show"])
        .env("KITH_ENABLE_SPEAKER_REFERENCES", "off")
        .env_remove("KITH_LLM_BASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["identity"].as_array().unwrap();
    let speaker = rows
        .iter()
        .find(|r| r["option"] == "speaker_references")
        .unwrap();
    assert_eq!(speaker["env"], "KITH_ENABLE_SPEAKER_REFERENCES");
    assert_eq!(speaker["value"], false);
    assert!(v["provider"].as_str().unwrap().starts_with("heuristic"));

    // A flag overrides the environment.
    let flagged = std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
        .args([
            "--json",
            "--identity",
            "speaker_references=on",
            "config",
            "show",
        ])
        .env("KITH_ENABLE_SPEAKER_REFERENCES", "off")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&flagged.stdout).unwrap();
    assert_eq!(v["identity"][0]["value"], true);

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
        .args(["config", "show"])
        .env("KITH_ENABLE_CLAIM_MERGE", "perhaps")
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("KITH_ENABLE_CLAIM_MERGE=\"perhaps\" is not a boolean"));
}

#[test]
fn ingest_binds_the_speaker_and_status_explains() {
    let t = TestPack::new();
    let a = t.json(&[
        "ingest",
        "I work at Northwind Analytics.",
        "--speaker",
        "Maya Okafor",
        "--event-time",
        "2025-03-04T19:15:00+00:00",
    ]);
    assert_eq!(a["status"], "complete");
    let b = t.json(&[
        "ingest",
        "Big news: I left Northwind Analytics at the end of July.",
        "--speaker",
        "Maya Okafor",
        "--event-time",
        "2025-08-09T21:30:00+01:00",
    ]);
    assert_eq!(b["derivation"]["superseded"], 1);
    let status = t.ok(&["events", "status", b["event_id"].as_str().unwrap()]);
    assert!(status.contains("status      complete"), "{status}");
    assert!(status.contains("DERIVATION_COMMITTED"), "{status}");
    // Both claims hang off one Maya Okafor.
    let nodes = t.json(&["nodes", "list", "--limit", "100"]);
    let people: Vec<&serde_json::Value> = nodes
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["content"] == "Maya Okafor")
        .collect();
    assert_eq!(people.len(), 1);
    let refused = t.fails(&[
        "ingest",
        "I like tea.",
        "--speaker",
        "Maya",
        "--first-person-owner",
    ]);
    assert!(
        refused.contains("first_person_owner is set on a turn with a speaker"),
        "{refused}"
    );
}
