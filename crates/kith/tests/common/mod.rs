//! Helpers shared by the facade's end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kith::{EventInput, ImportOptions, Memory, OwnerId, Retrieval, RetrievePaths, RetrieveRequest};

/// The 64-dimension hashing embedder: vectors on every path, no model
/// to download.
pub fn hashing() -> std::sync::Arc<dyn kith::Embedder> {
    kith::embedding::EmbeddingSpec::parse("hashing-64")
        .unwrap()
        .load()
        .unwrap()
        .expect("an embedder")
}

/// A fresh pack with the [`hashing`] embedder in a temporary directory
/// (kept alive by the returned guard): the retrieval tests' memory.
pub fn hashing_memory() -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init_with_embedder(&dir.path().join("p.kith"), hashing()).unwrap();
    (dir, m)
}

/// Maya's user message in `owner`'s `session`, at a fixed time.
pub fn maya_said(owner: &str, session: &str, text: &str) -> EventInput {
    EventInput {
        owner_id: Some(owner.into()),
        session_id: Some(session.into()),
        speaker: Some("Maya".into()),
        event_time: Some("2025-03-01T10:00:00+00:00".into()),
        ..EventInput::new("user", text)
    }
}

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

/// `memory` reading through an LLM whose replies were recorded: a replay
/// server answers each extraction request with the first rule whose
/// message substring it contains. Keep the server alive as long as the
/// memory.
pub fn with_recorded_replies(
    memory: Memory,
    rules: Vec<(&str, serde_json::Value)>,
) -> (Memory, kith_extract::replay::ReplayServer) {
    use kith_extract::replay::{ReplayResponse, ReplayRule, ReplayServer};
    let server = ReplayServer::start(
        rules
            .into_iter()
            .map(|(when, x)| ReplayRule::new(when, vec![ReplayResponse::extraction(&x)]))
            .collect(),
    )
    .expect("replay server");
    let config = kith_extract::openai::OpenAiConfig::new(server.base_url(), "recorded")
        .with_timeout(std::time::Duration::from_secs(5))
        .with_max_retries(0);
    let provider = kith_extract::openai::OpenAiCompatible::new(config).expect("provider");
    (memory.with_provider(std::sync::Arc::new(provider)), server)
}

/// A recorded extraction of one first-person fact, `I <predicate> <object>`,
/// quoting `quote`.
pub fn i_fact(predicate: &str, object: &str, quote: &str) -> serde_json::Value {
    serde_json::json!({"entities": [], "relationships": [], "facts": [{
        "subject": "I", "predicate": predicate, "object": object, "polarity": "positive",
        "evidence_quote": quote, "fact_type": "fact", "epistemic_type": "asserted",
        "temporal_intent": null, "replaces_object": null, "condition": null, "confidence": 0.9}]})
}

/// The names of a claim's subjects through its open HAS_FACT edges.
pub fn open_subjects(memory: &Memory, claim: &kith::Node) -> Vec<String> {
    let mut tx = memory
        .store_backend()
        .begin(kith_store::TxMode::Read)
        .expect("read");
    let edges = tx.edges_of(claim.id).expect("edges");
    edges
        .into_iter()
        .filter(|e| e.edge_type == kith::EdgeType::HasFact && e.target_id == claim.id)
        .filter(kith::Edge::is_open)
        .map(|e| {
            tx.get_node(e.source_id)
                .expect("read")
                .expect("subject")
                .content
        })
        .collect()
}

/// The one active claim of `owner` whose text is `sentence`.
pub fn active_claim(memory: &Memory, owner: &str, sentence: &str) -> kith::Node {
    let found: Vec<kith::Node> = memory
        .nodes(&kith::NodeQuery {
            owner: Some(OwnerId::new(owner).expect("owner")),
            ..kith::NodeQuery::default()
        })
        .expect("nodes")
        .into_iter()
        .map(|s| s.node)
        .filter(|n| !matches!(n.node_type, kith::NodeType::Entity | kith::NodeType::Note))
        .filter(|n| n.lifecycle.is_active() && n.content == sentence)
        .collect();
    assert_eq!(found.len(), 1, "one active claim {sentence:?}: {found:?}");
    found.into_iter().next().expect("one")
}

/// `speaker`'s turn in `owner`'s session `s1`, known by `source`, at one
/// fixed time (the retrieval tests' conversations).
pub fn turn(owner: &str, speaker: &str, source: &str, text: &str) -> EventInput {
    EventInput {
        owner_id: Some(owner.into()),
        session_id: Some("s1".into()),
        speaker: Some(speaker.into()),
        source_id: Some(source.into()),
        event_time: Some("2023-05-08T13:56:00+00:00".into()),
        ..EventInput::new("user", text)
    }
}

/// A request for `q` on the graph path alone, leaving no receipt: what it
/// finds was reached through an entity, not by its words.
pub fn graph_only(owner: &str, q: &str) -> RetrieveRequest {
    let mut req = RetrieveRequest::new(owner, q).unwrap();
    req.paths = RetrievePaths {
        lexical: false,
        vector: false,
        graph: true,
        neighbours: false,
        recency: false,
        speaker_boost: false,
        dated: false,
    };
    req.record = false;
    req
}

/// `q` retrieved for `owner` with the defaults, leaving no receipt.
pub fn ask(m: &Memory, owner: &str, q: &str) -> Retrieval {
    let mut req = RetrieveRequest::new(owner, q).unwrap();
    req.record = false;
    m.retrieve(&req).unwrap()
}

/// Whether any result of `r` got the boost named `boost`.
pub fn any_boosted(r: &Retrieval, boost: &str) -> bool {
    r.results
        .iter()
        .any(|i| i.trace.boosts.iter().any(|b| b.name == boost))
}

/// The rank (1-based) of the result whose source event has `source`.
pub fn rank_of(m: &Memory, owner: &str, r: &Retrieval, source: &str) -> Option<usize> {
    let owner = OwnerId::new(owner).unwrap();
    r.results
        .iter()
        .position(|i| {
            m.event(&owner, i.provenance.event_id)
                .unwrap()
                .event
                .source_id
                .as_str()
                == source
        })
        .map(|p| p + 1)
}

/// Imports the demo pack's conversation (`kith demo`) into owner `maya`
/// and extracts it with the default heuristic extractor.
pub fn import_demo(m: &Memory) {
    let owner = OwnerId::new("maya").unwrap();
    m.import_jsonl(
        include_str!("../../../kith-cli/demo/conversation.jsonl"),
        &ImportOptions {
            owner: Some(owner.clone()),
            extract: true,
            ..ImportOptions::default()
        },
        |_| {},
    )
    .unwrap();
    m.process_pending(Some(&owner), 0, false, false, |_| {})
        .unwrap();
}
