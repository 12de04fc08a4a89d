//! A question that names the one who asked (issue 16, speaker traps): "How
//! did Caroline's children handle the accident?" when Caroline asked
//! Melanie "How did they handle the accident?" and Melanie's reply is the
//! answer. Caroline's question matches the question's words best; the
//! speaker boost doubled every turn of hers, and the reply, which says
//! neither "handle" nor "accident", fell below her chatter. The reply to a
//! named speaker's question among the best matches keeps its place,
//! labelled with who said it. Turns go in through `ingest_batch` (the
//! default heuristic extractor); vectors come from the hashing embedder.

mod common;

use kith::{EventInput, IngestOptions, Memory, Retrieval, RetrieveRequest};

fn said(speaker: &str, source: &str, text: &str) -> EventInput {
    common::turn("o", speaker, source, text)
}

/// Melanie's son had an accident on a road trip; Caroline asks how the
/// children handled it and Melanie answers. Before it, fifteen turns of
/// Caroline's on other days that use the question's words, each doubled by
/// the boost; three say all three, so the reply is not among the three
/// best matches on its own (another rule keeps those level).
fn conversation() -> (tempfile::TempDir, Memory) {
    let (dir, m) = common::hashing_memory();
    let chatter = [
        "I can handle a lot more stress at work these days.",
        "My children's book club meets every Friday.",
        "I saw an accident on the highway this morning.",
        "Teaching children to paint is my favourite thing.",
        "I had to handle a difficult client yesterday.",
        "The accident report at the office took all day.",
        "Children at the shelter love the art classes.",
        "I learned to handle criticism better this year.",
        "My neighbour's children made me a card.",
        "Nobody was hurt in the accident at the crossing.",
        "I handle the paperwork for the support group.",
        "The children's choir sang at the pride event.",
        // Three that say all three words: they match the question better
        // than the reply does on its own.
        "The children handle every accident drill calmly.",
        "An accident drill shows how children handle fear.",
        "Children handle an accident better than adults.",
    ];
    let mut turns: Vec<EventInput> = chatter
        .iter()
        .enumerate()
        .map(|(i, text)| EventInput {
            // Said on other days: each in a session of its own.
            session_id: Some(format!("day{i}")),
            ..said("Caroline", &format!("c{i}"), text)
        })
        .collect();
    turns.extend([
        said(
            "Melanie",
            "trip",
            "Our road trip last weekend was scary, my son got into an accident.",
        ),
        said(
            "Caroline",
            "ask",
            "The kids look so cute! How did the children handle the accident?",
        ),
        said(
            "Melanie",
            "answer",
            "They were scared, but we reassured them their brother would be fine. Tough kids.",
        ),
    ]);
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    (dir, m)
}

fn ask(m: &Memory, q: &str) -> Retrieval {
    common::ask(m, "o", q)
}

fn rank_of(m: &Memory, r: &Retrieval, source: &str) -> Option<usize> {
    common::rank_of(m, "o", r, source)
}

#[test]
fn the_reply_to_the_named_speakers_question_keeps_its_place_labelled() {
    let (_d, m) = conversation();
    let q = "How did Caroline's children handle the accident?";
    let r = ask(&m, q);
    let asked = rank_of(&m, &r, "ask").expect("Caroline's question");
    // Without the rule it ranked below every turn of Caroline's that says
    // "children", "handle" or "accident": out of the ten.
    let answer = rank_of(&m, &r, "answer").expect("Melanie's reply in the ten");
    assert!(
        answer <= 10,
        "{q}: the reply at {answer}, the question at {asked}"
    );
    let boost = r.results[answer - 1]
        .trace
        .boosts
        .iter()
        .find(|b| b.name == "other_speaker")
        .expect("kept level");
    assert!(
        boost.reason.contains("said by Melanie, not by Caroline")
            && boost.reason.contains("reply to their question"),
        "{}",
        boost.reason
    );
    // Switched off (`--weights replies=0`), it falls out of the ten.
    let mut req = RetrieveRequest::new("o", q).unwrap();
    req.record = false;
    req.weights.replies = 0.0;
    let off = m.retrieve(&req).unwrap();
    assert_eq!(rank_of(&m, &off, "answer"), None);
    // Caroline's own turns keep the boost.
    assert!(r.results[asked - 1]
        .trace
        .boosts
        .iter()
        .any(|b| b.name == "named_speaker"));
}

#[test]
fn a_reply_to_a_statement_is_not_kept_level() {
    // The same conversation, the question asked of Melanie's statement:
    // Caroline's reply to it ("The kids look so cute!…") asks, but it is
    // Melanie who is named; her own turns are boosted, and Caroline's
    // question is not a reply to a question of hers.
    let (_d, m) = conversation();
    let r = ask(&m, "What happened to Melanie's son on the road trip?");
    assert_eq!(rank_of(&m, &r, "trip"), Some(1));
    assert!(r.results.iter().all(|i| i
        .trace
        .boosts
        .iter()
        .all(|b| !b.reason.contains("reply to their question"))));
}
