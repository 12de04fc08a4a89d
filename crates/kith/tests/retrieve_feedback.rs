//! Pseudo-relevance feedback (issue 16), on the default path a user takes
//! (on by default; `weights.feedback = 0` turns it off): a candidate that
//! shares no word with the question, found far down by the vector path, is
//! ranked up by the words of the best hit. Turns go in through
//! `ingest_batch` (the default heuristic extractor); vectors come from the
//! hashing embedder, which only knows shared words, so before the feedback
//! nothing tells the answer from the chatter around it.

mod common;

use kith::retrieve::fusion::{PathKind, FEEDBACK_WEIGHT_ON};
use kith::{EventInput, IngestOptions, Memory, Retrieval, RetrieveRequest};

fn maya(session: &str, source: &str, text: &str) -> EventInput {
    EventInput {
        source_id: Some(source.into()),
        ..common::maya_said("o", session, text)
    }
}

/// Maya signs up for a pottery class at the Riverside studio; weeks later,
/// in another session, the studio's kiln fires her first bowl — a turn
/// with none of the words of "What did I make in my pottery class?".
/// Around them, two dozen turns about other days.
fn memory() -> (tempfile::TempDir, Memory) {
    let (dir, m) = common::hashing_memory();
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
        "The weather was grey all week.",
        "I bought new running shoes.",
        "My sister visited on Sunday.",
        "The train was late again this morning.",
        "We watched a documentary about whales.",
        "Our neighbour adopted a grey cat.",
        "I finally fixed the leaking kitchen tap.",
        "The library had a sale on old novels.",
        "My phone battery died at the concert.",
        "We planted tomatoes in the garden.",
        "The bakery on the corner closed early.",
        "I spent the evening answering emails.",
        "The park was full of kids on bikes.",
        "My cousin got engaged last weekend.",
        "The coffee machine at work broke down.",
        "I walked the dog along the river.",
        "Traffic was terrible on the way home.",
        "We ordered pizza and played board games.",
        "The museum opened a new dinosaur hall.",
        "I tried a new recipe for lentil soup.",
        "The gym was quiet on Friday night.",
        "My friend lent me a camping stove.",
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

fn rank_of(m: &Memory, r: &Retrieval, source: &str) -> Option<usize> {
    common::rank_of(m, "o", r, source)
}

#[test]
fn the_best_hits_words_rank_up_evidence_sharing_no_word_with_the_question() {
    let (_d, m) = memory();
    let r = ask(&m, Some(FEEDBACK_WEIGHT_ON));
    assert_eq!(rank_of(&m, &r, "signup"), Some(1));
    assert_eq!(rank_of(&m, &r, "bowl"), Some(2), "{:#?}", r.results);
    let trace = &r.results[1].trace;
    let path = trace
        .paths
        .iter()
        .find(|p| p.path == PathKind::Feedback)
        .expect("ranked by the feedback query");
    let via = path.via.as_deref().unwrap_or_default();
    assert!(
        via.contains("riverside") && via.contains("studio"),
        "the trace names the words: {via}"
    );
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
fn by_default_the_feedback_runs_and_off_it_stays_among_the_chatter() {
    let (_d, m) = memory();
    let by_default = ask(&m, None);
    assert_eq!(rank_of(&m, &by_default, "bowl"), Some(2));
    let r = ask(&m, Some(0.0));
    assert_eq!(rank_of(&m, &r, "signup"), Some(1));
    let rank = rank_of(&m, &r, "bowl");
    assert!(rank.is_none_or(|r| r > 2), "bowl ranks {rank:?}");
    assert!(r
        .results
        .iter()
        .all(|i| i.trace.paths.iter().all(|p| p.path != PathKind::Feedback)));
}
