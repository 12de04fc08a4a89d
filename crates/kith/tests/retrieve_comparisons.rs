//! Questions that compare two things said at different times (issue 16,
//! temporal): "Which happened first, the road trip to the coast or the
//! arrival of my new prime lens?" needs the turn of each. Searched as one
//! query, ten turns about the lens, rich in the question's words, rank
//! above the one turn about the road trip. The `parts` path searches each
//! side on its own and puts both sides' best first. Turns go in through
//! `ingest_batch` (the default heuristic extractor); vectors come from the
//! hashing embedder.

mod common;

use kith::retrieve::fusion::PathKind;
use kith::{EventInput, IngestOptions, Memory, Retrieval, RetrieveRequest};

fn said(source: &str, text: &str) -> EventInput {
    common::turn("o", "Sam", source, text)
}

/// Forty turns about other things, ten about the new lens in the
/// question's words, and one about the road trip.
fn conversation() -> (tempfile::TempDir, Memory) {
    let (dir, m) = common::hashing_memory();
    let topics = [
        "gardening",
        "taxes",
        "cooking",
        "running",
        "music",
        "books",
        "chess",
        "movies",
    ];
    let mut turns: Vec<EventInput> = (0..40)
        .map(|i| {
            let topic = topics[i % topics.len()];
            said(
                &format!("f{i}"),
                &format!("Can you give me a tip about {topic}, number {i}?"),
            )
        })
        .collect();
    let lens = [
        "The new prime lens is so sharp, the first shots happened to be portraits.",
        "Since the arrival of the new prime lens I shoot every day.",
        "Which filters fit a new prime lens like mine?",
        "The prime lens arrival was the first good news of the month.",
        "My new prime lens needs a cap, the first one got lost.",
        "Is a prime lens better than a zoom for a first trip?",
        "The new prime lens happened to be on sale.",
        "How do I clean the new prime lens after the first use?",
        "A prime lens forces me to walk, which happened to help my framing.",
        "My friend wants a new prime lens now too, after the arrival of mine.",
    ];
    turns.extend(
        lens.iter()
            .enumerate()
            .map(|(i, text)| said(&format!("l{i}"), text)),
    );
    // Told on another day: in a session of its own (a short turn is
    // embedded after the turn before it in its session, and a lens turn
    // before it would lend it the lens's words).
    turns.push(EventInput {
        session_id: Some("s2".into()),
        ..said(
            "trip",
            "I just got back from a road trip to the coast with friends, the cliffs were amazing.",
        )
    });
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    (dir, m)
}

fn rank_of(m: &Memory, r: &Retrieval, source: &str) -> Option<usize> {
    common::rank_of(m, "o", r, source)
}

/// Asks `q`, checks the road trip is in the first three, found by the
/// `parts` path as `part`, and that with the path off (`--weights
/// parts=0`) it falls below; gives back the retrieval.
fn trip_found_by_its_part(m: &Memory, q: &str, part: &str) -> Retrieval {
    let r = common::ask(m, "o", q);
    let trip = rank_of(m, &r, "trip").expect("the road trip in the ten");
    assert!(trip <= 3, "{q}: the road trip at {trip}");
    let via = r.results[trip - 1]
        .trace
        .paths
        .iter()
        .find(|p| p.path == PathKind::Parts)
        .and_then(|p| p.via.clone());
    assert_eq!(via.as_deref(), Some(format!("part \"{part}\"").as_str()));
    let mut req = RetrieveRequest::new("o", q).unwrap();
    req.record = false;
    req.weights.parts = 0.0;
    let off = m.retrieve(&req).unwrap();
    let off_rank = rank_of(m, &off, "trip");
    assert!(off_rank.is_none_or(|at| at > 3), "{off_rank:?} vs {trip}");
    r
}

#[test]
fn each_side_of_a_comparison_has_its_evidence_near_the_top() {
    let (_d, m) = conversation();
    trip_found_by_its_part(
        &m,
        "Which happened first, the road trip to the coast or the arrival of the new prime lens?",
        "the road trip to the coast",
    );
}

#[test]
fn a_time_measured_between_two_events_finds_both() {
    // "How many days before … did I …" names two events; the lens's ten
    // look-alikes carry the first event's words, the road trip is said
    // once, in other words than the question's head.
    let (_d, m) = conversation();
    let r = trip_found_by_its_part(
        &m,
        "How many days before the arrival of the new prime lens did I get back from the coast?",
        "I get back from the coast",
    );
    let lens = r.results.iter().take(3).any(|i| {
        i.trace
            .paths
            .iter()
            .any(|p| p.via.as_deref() == Some("part \"the arrival of the new prime lens\""))
    });
    assert!(lens, "the lens's best turn near the top too");
}
