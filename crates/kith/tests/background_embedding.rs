//! Background embedding: `store()` acknowledges before the vector exists,
//! the worker makes the same vectors the synchronous path makes, the
//! backlog is what the store lacks (so a new worker finishes what a dropped
//! one left), and a failing embedder is reported, never silent.

use std::sync::Arc;

use kith::embed::{EmbedError, HashingEmbedder};
use kith::{Embedder, EventInput, Memory, OwnerId, SearchRequest};
use kith_store::TxMode;

fn message(i: usize) -> EventInput {
    EventInput {
        owner_id: Some("maya".into()),
        speaker: Some(
            if i.is_multiple_of(2) {
                "Maya"
            } else {
                "Jordan"
            }
            .into(),
        ),
        source_id: Some(format!("m-{i}")),
        ..EventInput::new("user", &format!("message {i} about marker{i} and the lake"))
    }
}

fn hashing() -> Arc<dyn Embedder> {
    Arc::new(HashingEmbedder::new(64))
}

/// Every note's vector, by node id.
fn vectors(m: &Memory) -> Vec<(uuid::Uuid, Vec<f32>)> {
    let owner = OwnerId::new("maya").unwrap();
    let nodes = m
        .nodes(&kith::NodeQuery {
            owner: Some(owner),
            limit: 10_000,
            ..Default::default()
        })
        .unwrap();
    let mut tx = m.store_backend().begin(TxMode::Read).unwrap();
    nodes
        .iter()
        .filter_map(|n| {
            tx.get_embedding(n.node.id)
                .unwrap()
                .map(|(_, v)| (n.node.id, v))
        })
        .collect()
}

#[test]
fn the_worker_makes_the_vectors_the_store_path_makes() {
    let dir = tempfile::tempdir().unwrap();
    let sync = Memory::init_with_embedder(&dir.path().join("sync.kith"), hashing()).unwrap();
    let bg = Memory::init_with_embedder(&dir.path().join("bg.kith"), hashing())
        .unwrap()
        .with_background_embedding()
        .unwrap();
    let n = 300;
    sync.store_batch((0..n).map(message).collect()).unwrap();
    bg.store_batch((0..n).map(message).collect()).unwrap();
    // Acknowledged and found by its words, whether or not its vector exists.
    let hits = bg
        .search(&SearchRequest::new("maya", &format!("marker{}", n - 1)).unwrap())
        .unwrap();
    assert_eq!(hits.len(), 1);

    bg.wait_for_embeddings().unwrap();
    assert_eq!(bg.embedding_backlog(None).unwrap(), 0);
    let status = bg.background_embedding().expect("background is on");
    assert_eq!(status.embedded, n as u64);
    assert_eq!(status.last_error, None);
    let (a, b) = (vectors(&sync), vectors(&bg));
    assert_eq!(a.len(), n);
    // Same ids (UUIDv5 of the same inputs) and the same vectors: the worker
    // embeds "Speaker: text" as the store path does.
    assert_eq!(a, b);
    // The synchronous memory never had a backlog.
    assert_eq!(sync.embedding_backlog(None).unwrap(), 0);
    assert!(sync.background_embedding().is_none());
}

#[test]
fn a_new_worker_finishes_what_a_dropped_one_left() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("p.kith");
    let total = 400;
    {
        let m = Memory::init_with_embedder(&pack, hashing())
            .unwrap()
            .with_background_embedding()
            .unwrap();
        m.store_batch((0..total).map(message).collect()).unwrap();
        // Dropped at once: the worker stops after at most its current page.
    }
    {
        // Opened without background embedding: nothing embeds, the backlog
        // is what the store lacks.
        let m = Memory::open(&pack).unwrap();
        let left = m.embedding_backlog(None).unwrap();
        assert_eq!(left as usize + vectors(&m).len(), total);
    }
    let m = Memory::open(&pack)
        .unwrap()
        .with_background_embedding()
        .unwrap();
    m.wait_for_embeddings().unwrap();
    assert_eq!(m.embedding_backlog(None).unwrap(), 0);
    assert_eq!(vectors(&m).len(), total);
}

/// An embedder whose endpoint is down.
struct Down;

impl Embedder for Down {
    fn model_id(&self) -> &str {
        "test/down"
    }
    fn dimension(&self) -> usize {
        8
    }
    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::Config("the endpoint is down".into()))
    }
}

#[test]
fn a_failing_embedder_is_reported_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init(&dir.path().join("p.kith"))
        .unwrap()
        .with_embedder(Arc::new(Down))
        .with_background_embedding()
        .unwrap();
    // Stored and acknowledged although no vector can be made.
    let receipts = m.store_batch((0..5).map(message).collect()).unwrap();
    assert!(receipts.iter().all(|r| r.created));
    let err = m.wait_for_embeddings().unwrap_err().to_string();
    assert!(err.contains("the endpoint is down"), "{err}");
    let status = m.background_embedding().unwrap();
    assert!(status.last_error.unwrap().contains("the endpoint is down"));
    assert_eq!(status.embedded, 0);
    assert_eq!(m.embedding_backlog(None).unwrap(), 5);
    let all = kith::EventQuery {
        limit: 100,
        ..Default::default()
    };
    assert_eq!(m.events(&all).unwrap().len(), 5);
}
