//! The `kith` binary on PostgreSQL: `--database-url` and
//! `KITH_DATABASE_URL`, every command on a server database, several writer
//! processes with an organizer, and the errors a user sees. Each test gets
//! a fresh database on the throwaway server of
//! `kith_store::postgres::testing` (a missing server fails, never skips).

mod common;

use std::process::{Command, Output, Stdio};

use kith_store::postgres::testing::{test_database, TestDatabase};

/// `kith --database-url URL --owner maya ARGS…`, with no pack or database
/// in the environment.
fn kith(url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kith"));
    c.args(["--database-url", url, "--owner", "maya"])
        .args(args);
    c.env_remove("KITH_PACK")
        .env_remove("KITH_DATABASE_URL")
        .env_remove("KITH_OWNER")
        .env_remove("KITH_LOG");
    c
}

fn run(c: &mut Command) -> Output {
    c.output().expect("kith runs")
}

fn ok(db: &TestDatabase, args: &[&str]) -> String {
    let out = run(&mut kith(db.url(), args));
    assert!(
        out.status.success(),
        "kith {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn json(db: &TestDatabase, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(db, &all)).expect("JSON output")
}

#[test]
fn every_command_runs_on_a_database() {
    let db = test_database();
    let tmp = tempfile::tempdir().unwrap();
    let out = ok(&db, &["init", "--embeddings", "hashing-64"]);
    assert!(
        out.contains("created memory in PostgreSQL database"),
        "{out}"
    );
    assert!(out.contains("kith/hashing-v1-64"), "{out}");
    // No pack was made anywhere.
    assert!(!std::path::Path::new("memory.kith").exists());

    ok(
        &db,
        &[
            "store",
            "I adopted a rescue dog called Biscuit.",
            "--session",
            "s1",
        ],
    );
    let r = json(
        &db,
        &[
            "ingest",
            "Jordan and I started a pottery class in Berlin.",
            "--session",
            "s1",
        ],
    );
    let event = r["event_id"].as_str().unwrap().to_string();
    let jsonl = tmp.path().join("in.jsonl");
    std::fs::write(&jsonl, common::jsonl("imp", 30)).unwrap();
    ok(&db, &["import", jsonl.to_str().unwrap(), "--extract"]);

    assert!(ok(&db, &["search", "rescue dog"]).contains("Biscuit"));
    let r = json(&db, &["retrieve", "What is the dog called?"]);
    assert!(r["context"].as_str().unwrap().contains("Biscuit"), "{r}");
    assert_eq!(r["embedding_model"], "kith/hashing-v1-64");
    let request = r["request_id"].as_str().unwrap().to_string();
    ok(&db, &["retrievals", "show", &request]);
    let status = json(&db, &["events", "status", &event]);
    assert_eq!(status["item"]["status"], "complete", "{status}");
    ok(&db, &["nodes", "list"]);
    ok(&db, &["events", "list"]);
    ok(&db, &["organize"]);
    ok(&db, &["journal"]);
    ok(&db, &["aliases", "list"]);
    ok(&db, &["reingest", "--event", &event]);
    ok(&db, &["rebuild", "--embeddings"]);

    let stats = ok(&db, &["stats"]);
    assert!(stats.contains("database"), "{stats}");
    assert_eq!(json(&db, &["stats"])["events"], 32);
    let exported = ok(&db, &["export"]);
    assert_eq!(exported.lines().count(), 32);

    // The same database through the environment variable.
    let out = Command::new(env!("CARGO_BIN_EXE_kith"))
        .args(["--owner", "maya", "doctor"])
        .env("KITH_DATABASE_URL", db.url())
        .env_remove("KITH_PACK")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.starts_with("healthy: 32 events verified"),
        "{stdout}"
    );

    // A second init is refused.
    let out = run(&mut kith(db.url(), &["init", "--embeddings", "none"]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already holds a kith memory"));
}

#[test]
fn a_database_without_a_memory_and_an_unreachable_server_are_explained() {
    let db = test_database();
    let out = run(&mut kith(db.url(), &["stats"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kith init --database-url"), "{err}");

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://kith:s3cret@127.0.0.1:{port}/kith?connect_timeout=2");
    let out = run(&mut kith(&url, &["stats"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("is the server running"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
}

#[test]
fn writer_processes_and_an_organizer_share_one_database() {
    let db = test_database();
    ok(&db, &["init", "--embeddings", "none"]);
    let tmp = tempfile::tempdir().unwrap();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let file = tmp.path().join(format!("w{w}.jsonl"));
            std::fs::write(&file, common::jsonl(&format!("w{w}"), 100)).unwrap();
            kith(
                db.url(),
                &[
                    "import",
                    file.to_str().unwrap(),
                    "--extract",
                    "--batch-size",
                    "10",
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    // Meanwhile the organizer, as its own processes.
    for _ in 0..5 {
        ok(&db, &["organize"]);
    }
    for child in writers {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "writer failed: {stderr}");
    }
    ok(&db, &["organize"]);
    assert_eq!(json(&db, &["stats"])["events"], 400);
    assert!(ok(&db, &["doctor"]).starts_with("healthy: 400 events verified"));
}

/// `kith forget` on a database (issue 15): the session goes, the rows are
/// vacuumed, `pg_dump` no longer holds the marker, doctor passes.
#[test]
fn forget_on_a_database_leaves_nothing_in_pg_dump() {
    let db = test_database();
    ok(&db, &["init", "--embeddings", "hashing-64"]);
    for (session, text) in [
        ("secret", "I met Zorvexquill at the harbour."),
        ("secret", "Zorvexquill knows the vault code."),
        ("kept", "I like green tea."),
    ] {
        ok(&db, &["ingest", text, "--session", session]);
    }
    ok(&db, &["retrieve", "Who is Zorvexquill?"]);
    let dump = || {
        kith_store::postgres::testing::pg_dump(&db)
            .expect("pg_dump")
            .to_lowercase()
    };
    assert!(dump().contains("zorvexqu"));
    let out = ok(&db, &["forget", "--session", "secret", "--reason", "asked"]);
    assert!(out.contains("forgot 2 event(s)"), "{out}");
    assert!(out.contains("compacted: VACUUM"), "{out}");
    assert!(out.contains("rows through the store only"), "{out}");
    assert!(!out.contains("NOT "), "{out}");
    assert!(
        !dump().contains("zorvexqu"),
        "the marker is still in pg_dump"
    );
    assert!(ok(&db, &["doctor"]).starts_with("healthy"));
    let hits = json(&db, &["retrieve", "green tea", "--no-record"]);
    assert!(hits.to_string().contains("green tea"));
}

/// Issue 15 item 6 on a server database: `KITH_RECEIPTS_KEEP` applies as
/// receipts are written, `kith retrievals prune` removes by count and
/// vacuums, and `show` of an expired receipt says it expired.
#[test]
fn retrievals_prune_on_a_database() {
    let db = test_database();
    ok(&db, &["init", "--embeddings", "none"]);
    ok(&db, &["store", "Maya adopted a grey cat called Pebble"]);
    let ask = |i: usize| {
        let out = run(kith(db.url(), &["--json", "retrieve", &format!("cat {i}")])
            .env("KITH_RECEIPTS_KEEP", "2"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        r["request_id"].as_str().unwrap().to_string()
    };
    let ids: Vec<String> = (0..3).map(ask).collect();
    let listed = |db: &TestDatabase| -> Vec<String> {
        json(db, &["retrievals", "list"])
            .as_array()
            .unwrap()
            .iter()
            .map(|op| op["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(listed(&db), ids[1..].to_vec());
    let out = ok(&db, &["retrievals", "prune", "--keep", "1"]);
    assert!(out.contains("pruned 1 receipt(s) of maya"), "{out}");
    assert!(out.contains("VACUUM"), "{out}");
    assert_eq!(listed(&db), vec![ids[2].clone()]);
    for id in &ids[..2] {
        let out = run(&mut kith(db.url(), &["retrievals", "show", id]));
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("has expired"), "{err}");
    }
}

/// `kith mcp` on a database ends cleanly when its client closes stdin:
/// the store used to be closed on a thread driving the async runtime,
/// where the PostgreSQL driver's blocking close panics (the process then
/// aborted instead of exiting 0).
#[test]
fn mcp_on_a_database_exits_cleanly_when_the_client_leaves() {
    use std::io::Write;
    let db = test_database();
    ok(&db, &["init", "--embeddings", "none"]);
    let mut child = kith(db.url(), &["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"content":"I moved to Lisbon in September."}}}"#,
    ];
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stdout.contains("event_id"), "{stdout}");
    assert_eq!(json(&db, &["stats"])["events"], 1);
}
