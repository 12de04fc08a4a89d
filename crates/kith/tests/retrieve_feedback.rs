//! Pseudo-relevance feedback (issue 16), on the default path a user takes
//! with `weights.feedback` set (it is off by default): evidence that shares
//! no word with the question is found through the words of the best hit. Turns go in through `ingest_batch` (the default heuristic
//! extractor), in a memory without an embedding model, so nothing but the
//! feedback query can reach a turn that shares no word with the question.

mod common;

use kith::retrieve::fusion::{PathKind, FEEDBACK_WEIGHT_ON};
use kith::{EventInput, IngestOptions, Memory, OwnerId, Retrieval, RetrieveRequest};

fn maya(session: &str, source: &str, text: &str) -> EventInput {
    EventInput {
        source_id: Some(source.into()),
        ..common::maya_said("o", session, text)
    }
}

/// Maya signs up for a pottery class at the Riverside studio; weeks later,
/// in another session, the studio's kiln fires her first bowl — a turn
/// with none of the words of "What did I make in my pottery class?".
/// Around them, other classes and other days.
fn memory() -> (tempfile::TempDir, Memory) {
    let (dir, _, m) = common::pack();
    let mut turns = vec![
        maya(
            "s1",
            "signup",
            "I signed up for a pottery class at the Riverside studio downtown.",
        ),
        maya(
            "s2",
            "bowl",
            "The Riverside studio kiln fired my first glazed bowl today!",
        ),
    ];
    let chatter = [
        "My yoga class starts at seven on weekdays.",
        "The cooking class at work was fun.",
        "I want to make more time for reading.",
        "The weather was grey all week.",
        "I bought new running shoes.",
        "My sister visited on Sunday.",
    ];
    for (i, text) in chatter.iter().enumerate() {
        turns.push(maya(&format!("c{i}"), &format!("c{i}"), text));
    }
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    (dir, m)
}

fn ask(m: &Memory, feedback: Option<f64>) -> Retrieval {
    let mut req = RetrieveRequest::new("o", "What did I make in my pottery class?").unwrap();
    if let Some(w) = feedback {
        req.weights.feedback = w;
    }
    req.record = false;
    m.retrieve(&req).unwrap()
}

/// The 1-based rank of the result whose source event has `source`.
fn rank_of(m: &Memory, r: &Retrieval, source: &str) -> Option<usize> {
    let owner = OwnerId::new("o").unwrap();
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

#[test]
fn the_best_hits_words_reach_evidence_sharing_no_word_with_the_question() {
    let (_d, m) = memory();
    let r = ask(&m, Some(FEEDBACK_WEIGHT_ON));
    assert_eq!(rank_of(&m, &r, "signup"), Some(1));
    let rank = rank_of(&m, &r, "bowl").expect("the bowl turn is found");
    let item = &r.results[rank - 1];
    let path = item
        .trace
        .paths
        .iter()
        .find(|p| p.path == PathKind::Feedback)
        .expect("found by the feedback query");
    let via = path.via.as_deref().unwrap_or_default();
    assert!(
        via.contains("riverside") && via.contains("studio"),
        "the trace names the words: {via}"
    );
    // Only the feedback found it.
    assert_eq!(item.trace.paths.len(), 1, "{:?}", item.trace.paths);
    // The best hit tops the feedback ranking too: left out of it, its
    // look-alikes would gain on it.
    let seed = &r.results[0].trace;
    assert!(
        seed.paths
            .iter()
            .any(|p| p.path == PathKind::Feedback && p.rank == 1),
        "{:?}",
        seed.paths
    );
}

#[test]
fn by_default_the_feedback_does_not_run_and_it_is_not_found() {
    let (_d, m) = memory();
    let r = ask(&m, None);
    assert_eq!(rank_of(&m, &r, "signup"), Some(1));
    assert_eq!(rank_of(&m, &r, "bowl"), None);
    assert!(r
        .results
        .iter()
        .all(|i| i.trace.paths.iter().all(|p| p.path != PathKind::Feedback)));
}
