//! A small memory, as a new user builds it (issue 16: what someone asking
//! their agent would expect): fusion adds up ranks, not scores, so the
//! turn that says far more of the question's words could lose the first
//! place to one that two paths rank second, lifted by a neighbour's share
//! ("Is Jen pregnant?" ranked "Jen's husband Dev is a pilot…" first).
//! Turns go in through `ingest` (the default heuristic extractor);
//! vectors come from the hashing embedder.

mod common;

use kith::{EventInput, IngestOptions, Memory};

fn noor() -> (tempfile::TempDir, Memory) {
    let (dir, m) = common::hashing_memory();
    let turns = [
        (
            "b1",
            "2025-03-03T20:00:00Z",
            "Noor",
            "user",
            "intro",
            "omg long week. Btw I'm Noor, I run a small bakery called Crumb & Co in Leeds.",
        ),
        (
            "b1",
            "2025-03-03T20:00:10Z",
            "assistant",
            "assistant",
            "hello",
            "Hi Noor! Happy to help. What's on your mind?",
        ),
        (
            "b1",
            "2025-03-03T20:02:00Z",
            "Noor",
            "user",
            "pregnant",
            "Jen (my coworker) told me she's pregnant!! Due in August.",
        ),
        (
            "b2",
            "2025-03-10T09:00:00Z",
            "Noor",
            "user",
            "mum",
            "Mum keeps saying \"you never call me\" which, fair.",
        ),
        (
            "b2",
            "2025-03-10T09:01:00Z",
            "Noor",
            "user",
            "dev",
            "Anyway, Jen's husband Dev is a pilot for EasyJet and Jen loves it.",
        ),
        (
            "b2",
            "2025-03-10T09:01:20Z",
            "assistant",
            "assistant",
            "call",
            "A weekly call on Sundays might help with Jen and your mum.",
        ),
        (
            "b4",
            "2025-04-20T18:00:00Z",
            "Noor",
            "user",
            "profit",
            "According to my accountant, the bakery made a profit in Q1 for the first time.",
        ),
        (
            "b5",
            "2025-07-28T12:00:00Z",
            "Noor",
            "user",
            "rosa",
            "Well, Jen had the baby early! A girl named Rosa.",
        ),
    ];
    for (session, at, speaker, role, source, text) in turns {
        let input = EventInput {
            owner_id: Some("noor".into()),
            session_id: Some(session.into()),
            speaker: Some(speaker.into()),
            source_id: Some(source.into()),
            event_time: Some(at.into()),
            ..EventInput::new(role, text)
        };
        m.ingest(input, IngestOptions::default()).unwrap();
    }
    (dir, m)
}

#[test]
fn the_turn_far_ahead_on_the_words_is_first() {
    let (_d, m) = noor();
    for (q, source) in [
        ("Is Jen pregnant?", "pregnant"),
        ("Did the bakery make a profit?", "profit"),
        ("What's the name of Jen's baby?", "rosa"),
    ] {
        let r = common::ask(&m, "noor", q);
        assert_eq!(
            common::rank_of(&m, "noor", &r, source),
            Some(1),
            "{q}: {:?}",
            r.results.iter().map(|i| &i.content).collect::<Vec<_>>()
        );
    }
}

/// Without a clear lead on the words nothing moves: "Jen" alone matches
/// four turns about as well.
#[test]
fn no_clear_lead_moves_nothing() {
    let (_d, m) = noor();
    let r = common::ask(&m, "noor", "What about Jen?");
    assert!(!common::any_boosted(&r, "clear_winner"));
}
