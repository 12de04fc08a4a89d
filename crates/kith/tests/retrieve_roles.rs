//! "What did I say about…" asks for the user's own words (issue 16: what
//! someone asking their agent would expect). In a conversation with an
//! assistant, its reply often repeats the user's words ("Sorry to hear
//! about your knee") and matches the question as well or better; a
//! question in the first person puts the user's turns first, one that asks
//! what the assistant said ("What did you suggest…") the assistant's.
//! Turns go in through `ingest_batch` (the default heuristic extractor);
//! vectors come from the hashing embedder.

mod common;

use kith::{EventInput, IngestOptions, Memory, Retrieval};

/// A turn of Sam's (`user`) or the assistant's, in session `s1`.
fn said(role: &str, source: &str, text: &str) -> EventInput {
    EventInput {
        speaker: (role == "user").then(|| "Sam".to_string()),
        role: role.into(),
        ..common::turn("o", "Sam", source, text)
    }
}

/// Sam hurt a knee and said so; the assistant's reply repeats the
/// question's words ("your knee", twice) and gives advice; around them,
/// chatter of both.
fn conversation() -> (tempfile::TempDir, Memory) {
    let (dir, m) = common::hashing_memory();
    let turns = vec![
        said("user", "u0", "I booked flights to Lisbon for April."),
        said(
            "assistant",
            "a0",
            "Lisbon in April is lovely, enjoy the trip!",
        ),
        said(
            "user",
            "knee",
            "Well, my knee started hurting after the hike, so I booked a physio.",
        ),
        said(
            "assistant",
            "advice",
            "Sorry about your knee! Rest your knee and ice it until the physio.",
        ),
        said("user", "u1", "My sister Ana had a baby girl called Lucia."),
        said("assistant", "a1", "Congratulations to Ana and the family!"),
    ];
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    (dir, m)
}

/// Whether the best result is the turn known by `source`.
fn first_is(m: &Memory, r: &Retrieval, source: &str) -> bool {
    common::rank_of(m, "o", r, source) == Some(1)
}

#[test]
fn a_question_in_the_first_person_puts_the_users_words_first() {
    let (_d, m) = conversation();
    for q in ["What did I say about my knee?", "How is my knee?"] {
        let r = common::ask(&m, "o", q);
        assert!(first_is(&m, &r, "knee"), "{q}");
        let boost = &r.results[0].trace.boosts;
        assert!(
            boost.iter().any(|b| b.name == "asked_role"),
            "{q}: {boost:?}"
        );
        assert_eq!(common::rank_of(&m, "o", &r, "advice"), Some(2), "{q}");
    }
}

/// The question says more of Sam's words than of the reply's: without the
/// rule, Sam's turn ranks first.
#[test]
fn a_question_about_what_the_assistant_said_puts_its_words_first() {
    let (_d, m) = conversation();
    for q in [
        "What did you suggest when my knee started hurting after the hike?",
        "What was your advice when my knee started hurting?",
    ] {
        let r = common::ask(&m, "o", q);
        assert!(first_is(&m, &r, "advice"), "{q}");
    }
}

/// Without the rule, the reply that repeats the words ranks first: the
/// test above is the rule's doing, not the conversation's.
#[test]
fn a_question_in_the_third_person_leaves_the_ranking_to_the_words() {
    let (_d, m) = conversation();
    let r = common::ask(&m, "o", "What happened to the knee?");
    assert!(first_is(&m, &r, "advice"));
    assert!(!common::any_boosted(&r, "asked_role"));
}

/// A conversation between people (no assistant) is left as it is: every
/// turn is a user's, and "I" is whoever asks.
#[test]
fn a_conversation_without_an_assistant_gets_no_role_boost() {
    let (_d, m) = common::hashing_memory();
    let turns = vec![
        common::turn("o", "Sam", "s0", "My knee hurts after the hike."),
        common::turn("o", "Kofi", "k0", "Sorry about your knee, rest it."),
    ];
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    let r = common::ask(&m, "o", "What did I say about my knee?");
    assert!(!r.results.is_empty());
    assert!(!common::any_boosted(&r, "asked_role"));
}

/// `--weights role=0` turns the rule off: the reply that repeats the words
/// ranks first again.
#[test]
fn the_role_weight_at_zero_turns_the_rule_off() {
    let (_d, m) = conversation();
    let mut req = kith::RetrieveRequest::new("o", "What did I say about my knee?").unwrap();
    req.record = false;
    req.weights = kith::retrieve::fusion::PathWeights::parse(&["role=0".to_string()]).unwrap();
    let r = m.retrieve(&req).unwrap();
    assert!(first_is(&m, &r, "advice"));
    assert!(!common::any_boosted(&r, "asked_role"));
}

/// "Where do I work?" asks what the user does: the user's turn that says
/// "works" only of someone else ("My girlfriend Lena works days…") is not
/// boosted as the asker's, and the user's own word for it ranks above it.
#[test]
fn a_users_turn_about_someone_else_is_not_the_askers() {
    let (_d, m) = common::hashing_memory();
    let turns = vec![
        said(
            "user",
            "lena",
            "My girlfriend Lena works days at a law firm, she works a lot.",
        ),
        said("assistant", "a0", "That sounds like a busy household!"),
        said(
            "user",
            "own",
            "Night shifts at the hospital are long, but I love my work there.",
        ),
        said("assistant", "a1", "Nurses are heroes, honestly."),
    ];
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    let r = common::ask(&m, "o", "Where do I work?");
    let lena = common::rank_of(&m, "o", &r, "lena").unwrap();
    let own = common::rank_of(&m, "o", &r, "own").unwrap();
    assert!(own < lena, "own {own}, Lena's {lena}");
    assert!(!r.results[lena - 1]
        .trace
        .boosts
        .iter()
        .any(|b| b.name == "asked_role"));
    assert!(r.results[own - 1]
        .trace
        .boosts
        .iter()
        .any(|b| b.name == "asked_role"));
}
