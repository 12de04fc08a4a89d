//! Two processes writing one pack at once both succeed; no "database is
//! locked" reaches a user.

mod common;

use std::process::Stdio;

use common::TestPack;

#[test]
fn two_importers_and_a_storer_share_one_pack() {
    let t = TestPack::new();
    let a = t.path("a.jsonl");
    let b = t.path("b.jsonl");
    std::fs::write(&a, common::jsonl("a", 3000)).unwrap();
    std::fs::write(&b, common::jsonl("b", 3000)).unwrap();
    let spawn = |file: &std::path::Path| {
        t.cmd(&["import", file.to_str().unwrap(), "--batch-size", "25"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn(&a);
    let second = spawn(&b);
    // Meanwhile, single store() calls and reads from this process.
    for i in 0..50 {
        t.ok(&[
            "store",
            &format!("interleaved note {i}"),
            "--source-id",
            &format!("c-{i}"),
        ]);
        if i % 10 == 0 {
            t.ok(&["search", "city"]);
        }
    }
    for child in [first, second] {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "importer failed: {stderr}");
        assert!(
            !stderr.contains("locked") && !stderr.contains("busy"),
            "{stderr}"
        );
    }
    assert_eq!(t.json(&["stats"])["events"], 6050);
    assert!(t
        .ok(&["doctor"])
        .starts_with("healthy: 6050 events verified"));
}
