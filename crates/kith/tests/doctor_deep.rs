//! Issue 20 item 3: `doctor --deep` finds damage to derived data that plain
//! `doctor` trusts (a NaN in a vector, a claim's object or polarity
//! rewritten in place), and retrieval never ranks a NaN. The damage is done
//! with SQL behind kith's back, as the attack run did.

mod common;

use std::sync::Arc;

use kith::{IngestOptions, Memory};

/// A pack with vectors (hashing embedder) and two ingested messages, one
/// with a claim (a recorded LLM reply through a real HTTP replay).
fn pack() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p.kith");
    let memory =
        Memory::init_with_embedder(&dir, Arc::new(kith_embed::HashingEmbedder::new(32))).unwrap();
    let (memory, _server) = common::with_recorded_replies(
        memory,
        vec![
            (
                "Lisbon",
                common::i_fact("lives_in", "Lisbon", "I live in Lisbon"),
            ),
            (
                "tea",
                common::i_fact("likes", "green tea", "I like green tea"),
            ),
        ],
    );
    for text in ["I live in Lisbon.", "I like green tea."] {
        let receipt = memory
            .ingest(common::msg("maya", text), IngestOptions::default())
            .unwrap();
        assert_eq!(receipt.derivation.map(|d| d.claims), Some(1), "{text}");
    }
    let report = memory.doctor_deep().unwrap();
    assert!(report.healthy(), "{:?}", report.problems);
    (tmp, dir)
}

fn damage(dir: &std::path::Path, sql: &str) {
    let conn = rusqlite::Connection::open(dir.join("kith.sqlite")).unwrap();
    let changed = conn.execute(sql, []).unwrap();
    if changed == 0 {
        let mut stmt = conn
            .prepare("SELECT node_type, content, metadata FROM nodes")
            .unwrap();
        let rows: Vec<String> = stmt
            .query_map([], |r| {
                Ok(format!(
                    "{} | {} | {}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?.unwrap_or_default()
                ))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        panic!(
            "the damage changed no row: {sql}\nnodes:\n{}",
            rows.join("\n")
        );
    }
}

#[test]
fn a_nan_in_a_vector_is_found_and_never_ranked() {
    let (_tmp, dir) = pack();
    // The first vector's first component becomes NaN (0x7fc00000, little-endian).
    damage(
        &dir,
        "UPDATE embeddings SET vector = CAST(X'0000C07F' || substr(vector, 5) AS BLOB)
         WHERE seq = (SELECT min(seq) FROM embeddings)",
    );
    let memory = Memory::open(&dir).unwrap();
    assert!(
        memory.doctor().unwrap().healthy(),
        "plain doctor trusts vectors"
    );
    let report = memory.doctor_deep().unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("its vector holds NaN") && p.contains("kith rebuild")),
        "{:?}",
        report.problems
    );
    let mut req = kith::RetrieveRequest::new("maya", "Where do I live?").unwrap();
    req.record = false;
    let found = memory.retrieve(&req).unwrap();
    assert!(!found.results.is_empty());
    let json = serde_json::to_value(&found).unwrap();
    assert!(no_null_scores(&json), "a score is null: {json}");
    // What the report offers repairs it.
    memory.rebuild_embeddings(true, &mut |_, _| {}).unwrap();
    let report = memory.doctor_deep().unwrap();
    assert!(report.healthy(), "{:?}", report.problems);
}

/// No `score` field anywhere in a retrieval is null (a NaN serialises so).
fn no_null_scores(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .all(|(k, v)| !(k.contains("score") && v.is_null()) && no_null_scores(v)),
        serde_json::Value::Array(a) => a.iter().all(no_null_scores),
        _ => true,
    }
}

#[test]
fn a_rewritten_claim_is_found_against_its_plan() {
    let (_tmp, dir) = pack();
    damage(
        &dir,
        "UPDATE nodes SET metadata = json_set(metadata, '$.object', 'Paris',
                                              '$.polarity', 'negative')
         WHERE node_type <> 'note' AND json_extract(metadata, '$.object') = 'Lisbon'",
    );
    let memory = Memory::open(&dir).unwrap();
    assert!(
        memory.doctor().unwrap().healthy(),
        "plain doctor trusts nodes"
    );
    let report = memory.doctor_deep().unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("object, polarity differ(s)") && p.contains("committed plan")),
        "{:?}",
        report.problems
    );
    // Other owners' and untouched nodes are not reported.
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
}

#[test]
fn a_node_row_that_no_longer_decodes_is_found() {
    let (_tmp, dir) = pack();
    // Invalid UTF-8 in a claim's content (0xFF never occurs in UTF-8).
    damage(
        &dir,
        "UPDATE nodes SET content = CAST(X'49206CFF6B65' AS TEXT)
         WHERE node_type = 'fact' AND content = 'I like green tea.'",
    );
    let memory = Memory::open(&dir).unwrap();
    let report = memory.doctor_deep().unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("node rows") && p.contains("cannot be read")),
        "{:?}",
        report.problems
    );
}
