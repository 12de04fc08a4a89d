//! `kill -9` of a `kith import --background-embeddings` after every message
//! was acknowledged but before every vector was made: the notes without a
//! vector are the backlog (`kith stats` counts them), they are found by
//! the lexical path meanwhile, and the next process opened with background
//! embedding embeds them all.
//!
//! Uses all-MiniLM-L6-v2 (installed on first use, like `kith init` does),
//! whose embedding is slow enough next to storing that a backlog exists.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::TestPack;

const MESSAGES: usize = 1_500;

fn backlog(t: &TestPack) -> u64 {
    t.json(&["stats"])["embedding_backlog"]
        .as_u64()
        .expect("stats has embedding_backlog")
}

#[test]
fn kill_9_mid_backlog_loses_no_embedding_work() {
    let tmp = tempfile::tempdir().unwrap();
    let t = TestPack {
        pack: tmp.path().join("minilm.kith"),
        tmp,
    };
    t.ok(&["init", "--embeddings", "minilm"]);
    let file = t.path("turns.jsonl");
    std::fs::write(&file, common::jsonl("bg", MESSAGES)).unwrap();
    let file = file.to_str().unwrap();

    // Kill the import as soon as its last batch is acknowledged: every
    // message is durable, most vectors are still to come.
    let mut child = t
        .cmd(&[
            "--json",
            "import",
            file,
            "--batch-size",
            "100",
            "--background-embeddings",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kith starts");
    let mut acked = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        acked += v["committed"].as_array().map_or(0, Vec::len);
        if acked == MESSAGES {
            break;
        }
    }
    assert_eq!(acked, MESSAGES, "every message is acknowledged");
    child.kill().expect("SIGKILL");
    child.wait().unwrap();

    assert_eq!(common::exported_ids(&t).len(), MESSAGES);
    let pending = backlog(&t);
    assert!(
        pending > 0 && pending <= MESSAGES as u64,
        "the kill left {pending} notes to embed; nothing was tested"
    );
    // A note still without a vector is found by its words.
    let hits = t.json(&["search", &format!("bg message {}", MESSAGES - 1)]);
    let found = hits
        .as_array()
        .expect("search returns a list")
        .iter()
        .any(|h| {
            h.to_string()
                .contains(&format!("bg message {}:", MESSAGES - 1))
        });
    assert!(
        found,
        "the last message is searchable before its vector: {hits}"
    );
    assert!(t.ok(&["doctor"]).starts_with("healthy"));

    // The next process with background embedding drains the backlog (the
    // import has nothing new to write, then waits for the vectors).
    let out = t
        .cmd(&["import", file])
        .env("KITH_EMBEDDING_BACKGROUND", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(backlog(&t), 0, "the backlog drained");
    assert_eq!(common::exported_ids(&t).len(), MESSAGES);
    assert!(t.ok(&["doctor"]).starts_with("healthy"));
}

#[test]
fn a_bad_background_setting_is_refused() {
    let t = TestPack::new();
    let file = t.path("one.jsonl");
    std::fs::write(&file, common::jsonl("x", 1)).unwrap();
    let err = {
        let out = t
            .cmd(&["import", file.to_str().unwrap()])
            .env("KITH_EMBEDDING_BACKGROUND", "sometimes")
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(err.contains("KITH_EMBEDDING_BACKGROUND"), "{err}");
    // Nothing was written.
    assert!(common::exported_ids(&t).is_empty());
}
