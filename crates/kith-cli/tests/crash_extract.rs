//! `kill -9` in the middle of `kith import --extract`, then `kith process`:
//! every acknowledged event is derived exactly once, and node ids and
//! checksums equal those of an uninterrupted run.

mod common;

use common::{KillTimer, TestPack};
use serde_json::Value;
use std::collections::HashSet;

const MESSAGES: usize = 800;

/// Messages the heuristic extractor reads claims from. Each line carries
/// its `ingested_at`, so two packs built from the file hold identical events
/// and must derive identical nodes.
fn file_text() -> String {
    (0..MESSAGES)
        .map(|i| {
            let content = match i % 3 {
                0 => format!("I work at Company{} Labs now.", i % 40),
                1 => format!("I moved to Town{} last spring.", i % 25),
                _ => format!("I love Dish{} and I hate Dish{}.", i % 30, (i + 7) % 30),
            };
            serde_json::json!({
                "content": content,
                "role": "user",
                "speaker": "Maya Okafor",
                "session_id": format!("s{}", i / 100),
                "source_id": format!("x-{i}"),
                "event_time": "2025-05-01T10:00:00+02:00",
                "ingested_at": format!("2025-05-01T10:{:02}:{:02}Z", (i / 60) % 60, i % 60),
            })
            .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every node as JSON without its store position, sorted by id.
fn node_snapshot(t: &TestPack) -> Vec<Value> {
    let mut nodes: Vec<Value> = t
        .json(&["nodes", "list", "--limit", "1000000"])
        .as_array()
        .expect("a list")
        .iter()
        .map(|n| {
            let mut n = n.clone();
            n.as_object_mut().expect("object").remove("seq");
            n
        })
        .collect();
    nodes.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    nodes
}

#[test]
fn kill_9_during_import_extract_then_process_derives_exactly_once() {
    // The reference: one uninterrupted run.
    let reference = TestPack::new();
    let file = reference.path("in.jsonl");
    std::fs::write(&file, file_text()).unwrap();
    reference.ok(&["import", "--extract", file.to_str().unwrap()]);
    let expected = node_snapshot(&reference);
    assert!(
        expected.len() > MESSAGES * 2,
        "the heuristic derived too little: {}",
        expected.len()
    );

    // The victim: killed at random moments, then finished by `process`.
    let t = TestPack::new();
    let file = file.to_str().unwrap();
    let mut timer = KillTimer::new();
    let mut acknowledged: HashSet<String> = HashSet::new();
    let mut kills = 0;
    for _ in 0..4 {
        let args = ["--json", "import", "--extract", file, "--batch-size", "100"];
        let (acked, killed) = common::run_and_kill(&t, &args, timer.next(30, 900));
        acknowledged.extend(acked);
        kills += usize::from(killed);
        // Finish whatever the killed run left, in admission order.
        t.ok(&["process", "--reclaim"]);
    }
    assert!(
        kills > 0,
        "every run finished before its kill; nothing was tested"
    );
    let present: HashSet<String> = common::exported_ids(&t).into_iter().collect();
    assert!(
        acknowledged.is_subset(&present),
        "acknowledged events were lost"
    );

    // Admit whatever was never acknowledged, and derive it.
    t.ok(&["import", "--extract", file]);
    assert_eq!(node_snapshot(&t), expected);
    // Exactly once: one extraction, one plan, one receipt per event.
    let stats = t.json(&["stats"]);
    assert_eq!(stats["events"], MESSAGES);
    assert_eq!(stats["operations"], 3 * MESSAGES);
    assert_eq!(stats["edges"], reference.json(&["stats"])["edges"]);
    assert!(t.ok(&["doctor"]).starts_with("healthy"));
}
