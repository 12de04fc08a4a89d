//! Helpers shared by the facade's end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kith::{EventInput, Memory, OwnerId};

/// A fresh pack in a temporary directory (kept alive by the returned guard).
pub fn pack() -> (tempfile::TempDir, PathBuf, Memory) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("test.kith");
    let memory = Memory::init(&dir).expect("init pack");
    (tmp, dir, memory)
}

/// A user message of `owner`.
pub fn msg(owner: &str, content: &str) -> EventInput {
    EventInput {
        owner_id: Some(owner.into()),
        ..EventInput::new("user", content)
    }
}

/// Everything observable about an owner's memory: the export text and the
/// counts. Two equal snapshots mean nothing changed.
pub fn snapshot(memory: &Memory, owner: &str) -> (String, kith::Stats, kith::Stats) {
    let mut out = Vec::new();
    memory
        .export_jsonl(None, &mut out)
        .expect("export succeeds");
    let owner = OwnerId::new(owner).expect("owner");
    (
        String::from_utf8(out).expect("utf-8"),
        memory.stats(Some(&owner)).expect("stats"),
        memory.stats(None).expect("stats"),
    )
}

/// Bytes of every file in a directory, sorted by name.
pub fn dir_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("entry");
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Two claim nodes of `owner` with the same text, metadata and validity
/// start, one per evidence event, the first with the higher confidence: a
/// pair `deduplicate` merges, keeping the first. Returns (kept, retired).
pub fn claim_copies(
    m: &Memory,
    owner: &str,
    evidence: [uuid::Uuid; 2],
    content: &str,
    metadata: serde_json::Value,
) -> (uuid::Uuid, uuid::Uuid) {
    let t = kith::Timestamp::parse("t", "2025-03-01T10:00:00+00:00").unwrap();
    let keep = kith::Node {
        id: uuid::Uuid::new_v4(),
        owner_id: OwnerId::new(owner).unwrap(),
        scope: kith::ScopeId::personal(),
        session_id: None,
        node_type: kith::NodeType::Fact,
        content: content.into(),
        metadata: Some(metadata),
        confidence: 0.8,
        lifecycle: kith::Lifecycle::Tentative,
        epistemic_type: kith_core::EpistemicType::Asserted,
        source_type: kith_core::SourceType::UserStated,
        valid_from: t,
        valid_to: None,
        event_time: Some(t),
        superseded_by: None,
        evidence_refs: vec![evidence[0]],
        created_at: t,
        updated_at: t,
    };
    let retired = kith::Node {
        id: uuid::Uuid::new_v4(),
        confidence: 0.6,
        evidence_refs: vec![evidence[1]],
        ..keep.clone()
    };
    let mut tx = m.store_backend().begin(kith_store::TxMode::Write).unwrap();
    tx.insert_node(&keep).unwrap();
    tx.insert_node(&retired).unwrap();
    tx.commit().unwrap();
    (keep.id, retired.id)
}
