//! Retrieval end to end: hybrid paths, owners kept apart, packing within the
//! budget, receipts, `as_of`, the named-speaker boost and model switches.
//! Vectors come from the hashing embedder (the MiniLM path is exercised by
//! kith-embed's tests and the CLI test).

use std::sync::Arc;

use kith::embedding::EmbeddingSpec;
use kith::retrieve::fusion::PathKind;
use kith::{Embedder, EventInput, Memory, OwnerId, RetrieveRequest, Timestamp};

fn hashing() -> Arc<dyn Embedder> {
    EmbeddingSpec::parse("hashing-256")
        .unwrap()
        .load()
        .unwrap()
        .unwrap()
}

fn memory() -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init_with_embedder(&dir.path().join("p.kith"), hashing()).unwrap();
    (dir, m)
}

fn turn(owner: &str, session: &str, speaker: &str, source: &str, text: &str) -> EventInput {
    EventInput {
        owner_id: Some(owner.into()),
        session_id: Some(session.into()),
        speaker: Some(speaker.into()),
        source_id: Some(source.into()),
        event_time: Some("2025-05-08T13:56:00+00:00".into()),
        ..EventInput::new("user", text)
    }
}

fn conversation(owner: &str) -> Vec<EventInput> {
    vec![
        turn(
            owner,
            "s1",
            "Caroline",
            "1",
            "Hey Mel, how was your weekend?",
        ),
        turn(
            owner,
            "s1",
            "Melanie",
            "2",
            "Great! I took the kids camping by the lake.",
        ),
        turn(
            owner,
            "s1",
            "Caroline",
            "3",
            "I went to an LGBTQ support group on Saturday.",
        ),
        turn(
            owner,
            "s1",
            "Caroline",
            "4",
            "It was really powerful, the stories moved me.",
        ),
        turn(
            owner,
            "s1",
            "Melanie",
            "5",
            "That sounds amazing, I am proud of you.",
        ),
        turn(
            owner,
            "s2",
            "Melanie",
            "6",
            "I started pottery classes last month.",
        ),
    ]
}

#[test]
fn hybrid_retrieval_finds_the_turn_with_a_trace_and_its_neighbour() {
    let (_d, m) = memory();
    let receipts = m.store_batch(conversation("ana")).unwrap();
    let r = m
        .retrieve(
            &RetrieveRequest::new("ana", "When did Caroline go to the support group?").unwrap(),
        )
        .unwrap();
    let top = &r.results[0];
    assert_eq!(top.provenance.event_id, receipts[2].event_id);
    assert!(top.trace.has(PathKind::Lexical) && top.trace.has(PathKind::Vector));
    assert!(top.trace.boosts.iter().any(|b| b.name == "named_speaker"));
    // The next turn ("It was really powerful") joins as a neighbour.
    let next = r
        .results
        .iter()
        .find(|i| i.provenance.event_id == receipts[3].event_id)
        .expect("the neighbouring turn is a candidate");
    assert!(next.trace.has(PathKind::Neighbour));
    assert!(r
        .context
        .contains("Caroline (user): I went to an LGBTQ support group on Saturday."));
    assert!(r.tokens <= r.token_budget);
    assert_eq!(r.embedding_model.as_deref(), Some("kith/hashing-v1-256"));
}

#[test]
fn no_result_ever_crosses_owners_with_identical_texts() {
    let (_d, m) = memory();
    let a = m.store_batch(conversation("ana")).unwrap();
    let b = m.store_batch(conversation("ben")).unwrap();
    let ana: Vec<_> = a.iter().map(|r| r.event_id).collect();
    let ben: Vec<_> = b.iter().map(|r| r.event_id).collect();
    for q in [
        "support group",
        "camping with the kids",
        "pottery",
        "Caroline Melanie weekend",
    ] {
        for (owner, mine) in [("ana", &ana), ("ben", &ben)] {
            let mut req = RetrieveRequest::new(owner, q).unwrap();
            req.limit = 50;
            let r = m.retrieve(&req).unwrap();
            assert!(!r.results.is_empty());
            for item in &r.results {
                assert!(
                    mine.contains(&item.provenance.event_id),
                    "{owner} got another owner's event for {q:?}"
                );
            }
            for line in &r.packed {
                assert!(mine.contains(&line.event_id.unwrap()));
            }
        }
    }
}

#[test]
fn the_named_speaker_outranks_the_same_words_from_someone_else() {
    let (_d, m) = memory();
    let r = m
        .store_batch(vec![
            turn("ana", "s1", "Melanie", "1", "I love painting sunsets."),
            turn("ana", "s9", "Caroline", "2", "I love painting sunsets."),
        ])
        .unwrap();
    let mut req = RetrieveRequest::new("ana", "What does Caroline love painting?").unwrap();
    req.paths.neighbours = false;
    let got = m.retrieve(&req).unwrap();
    assert_eq!(got.results[0].provenance.event_id, r[1].event_id);
    req.paths.speaker_boost = false;
    let plain = m.retrieve(&req).unwrap();
    assert_eq!(
        plain.results[0].provenance.event_id, r[0].event_id,
        "without the boost the tie keeps store order"
    );
}

#[test]
fn receipts_explain_what_was_packed_and_can_be_turned_off() {
    let (_d, m) = memory();
    m.store_batch(conversation("ana")).unwrap();
    let mut req = RetrieveRequest::new("ana", "pottery classes").unwrap();
    req.token_budget = 40;
    let r = m.retrieve(&req).unwrap();
    assert!(r.recorded);
    let owner = OwnerId::new("ana").unwrap();
    let op = m.retrieval_receipt(&owner, r.request_id).unwrap();
    assert_eq!(op.payload["query"], "pottery classes");
    assert_eq!(op.payload["tokens"], r.tokens);
    assert_eq!(
        op.payload["packed"].as_array().unwrap().len(),
        r.packed.len()
    );
    assert!(op.payload["results"][0]["trace"]["paths"].is_array());
    assert!(op.checksum == op.compute_checksum());
    // Another owner cannot read it.
    assert!(m
        .retrieval_receipt(&OwnerId::new("ben").unwrap(), r.request_id)
        .is_err());
    req.record = false;
    let quiet = m.retrieve(&req).unwrap();
    assert!(!quiet.recorded);
    assert!(m.retrieval_receipt(&owner, quiet.request_id).is_err());
    assert_eq!(m.retrieval_receipts(&owner, 0).unwrap().len(), 1);
    assert!(m.doctor().unwrap().healthy());
}

#[test]
fn as_of_sees_only_what_had_been_stored_then() {
    let (_d, m) = memory();
    let first = m
        .store(turn(
            "ana",
            "s1",
            "Ana",
            "1",
            "My favourite colour is green.",
        ))
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let between = Timestamp::now();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let second = m
        .store(turn(
            "ana",
            "s1",
            "Ana",
            "2",
            "My favourite colour is now blue.",
        ))
        .unwrap();
    let mut req = RetrieveRequest::new("ana", "favourite colour").unwrap();
    let now: Vec<_> = m
        .retrieve(&req)
        .unwrap()
        .results
        .iter()
        .map(|i| i.provenance.event_id)
        .collect();
    assert!(now.contains(&first.event_id) && now.contains(&second.event_id));
    req.filters.as_of = Some(between);
    let then: Vec<_> = m
        .retrieve(&req)
        .unwrap()
        .results
        .iter()
        .map(|i| i.provenance.event_id)
        .collect();
    assert_eq!(then, vec![first.event_id]);
}

#[test]
fn a_zero_budget_is_refused_and_a_tiny_one_is_respected() {
    let (_d, m) = memory();
    m.store_batch(conversation("ana")).unwrap();
    let mut req = RetrieveRequest::new("ana", "support group").unwrap();
    req.token_budget = 0;
    assert_eq!(
        m.retrieve(&req).unwrap_err().kind(),
        kith::ErrorKind::InvalidInput
    );
    for budget in [1, 5, 12, 64] {
        req.token_budget = budget;
        let r = m.retrieve(&req).unwrap();
        assert!(r.tokens <= budget, "{} > {budget}", r.tokens);
    }
}

#[test]
fn switching_models_re_embeds_and_mixing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.kith");
    let m = Memory::init_with_embedder(&path, hashing()).unwrap();
    m.store_batch(conversation("ana")).unwrap();
    // Opening with the manifest's model works; a different embedder on the
    // same store is refused until the pack is rebuilt.
    drop(m);
    let reopened = Memory::open(&path).unwrap();
    assert_eq!(
        reopened.embedder().unwrap().model_id(),
        "kith/hashing-v1-256"
    );
    reopened.check_embedding_model().unwrap();
    let other = EmbeddingSpec::parse("hashing-32")
        .unwrap()
        .load()
        .unwrap()
        .unwrap();
    let mut mixed = reopened.with_embedder(other.clone());
    let err = mixed.check_embedding_model().unwrap_err();
    // Writing or retrieving with the other model is refused, and writes
    // nothing.
    let before = mixed.stats(None).unwrap();
    assert!(mixed
        .store(turn("ana", "s9", "Ana", "x", "new text"))
        .is_err());
    assert!(mixed
        .retrieve(&RetrieveRequest::new("ana", "pottery").unwrap())
        .is_err());
    assert_eq!(mixed.stats(None).unwrap(), before);
    assert!(
        err.to_string().contains("kith rebuild --embeddings"),
        "{err}"
    );
    let mut seen = Vec::new();
    let report = mixed
        .switch_embedder(Some(other), &mut |d, t| seen.push((d, t)))
        .unwrap();
    assert_eq!((report.removed, report.embedded), (6, 6));
    assert_eq!(seen.last(), Some(&(6, 6)));
    mixed.check_embedding_model().unwrap();
    drop(mixed);
    let again = Memory::open(&path).unwrap();
    assert_eq!(again.embedder().unwrap().model_id(), "kith/hashing-v1-32");
    let r = again
        .retrieve(&RetrieveRequest::new("ana", "pottery").unwrap())
        .unwrap();
    assert!(r.results[0].trace.has(PathKind::Vector));
}
