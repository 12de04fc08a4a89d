//! "Where does Chris work?" (issue 16: what someone asking their agent
//! would expect): Chris is no speaker, someone the user talks about, and
//! the user's own turns about their own work say the question's words as
//! often. The turns that name him come first. Turns go in through
//! `ingest_batch` (the default heuristic extractor, which types Chris a
//! person from "my buddy Chris"); vectors come from the hashing embedder.

mod common;

use kith::{IngestOptions, Memory};

/// Daniel talks about his own work, his buddy Chris, and a restaurant.
fn conversation() -> (tempfile::TempDir, Memory) {
    let (dir, m) = common::hashing_memory();
    let said = |source: &str, text: &str| common::turn("o", "Daniel", source, text);
    let turns = vec![
        said(
            "own",
            "Where I work now, the work never stops: I work doubles at work every week.",
        ),
        said("buddy", "I'm living with my buddy Chris in Oakland now."),
        said(
            "chris",
            "Chris is at a bike shop on Telegraph and fixes wheels all day.",
        ),
        said("place", "I left Olive & Thyme, I'm head chef at Ember now."),
    ];
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    (dir, m)
}

#[test]
fn a_question_about_someone_spoken_about_ranks_the_turns_that_name_them_first() {
    let (_d, m) = conversation();
    let r = common::ask(&m, "o", "Where does Chris work?");
    let first = common::rank_of(&m, "o", &r, "chris").min(common::rank_of(&m, "o", &r, "buddy"));
    assert_eq!(first, Some(1), "{:?}", r.results[0].content);
    let boosts = &r.results[0].trace.boosts;
    let named = boosts.iter().find(|b| b.name == "names_person");
    assert!(
        named.is_some_and(|b| b.reason.contains("Chris")),
        "{boosts:?}"
    );
    // Daniel's own turn is not about Chris.
    let own = r
        .results
        .iter()
        .find(|i| i.content.starts_with("Where I work"))
        .unwrap();
    assert!(own.trace.boosts.iter().all(|b| b.name != "names_person"));
}

/// `--weights person=0` turns the rule off: Daniel's own turn, which says
/// "work" four times, ranks first, which is why the test above is the
/// rule's doing.
#[test]
fn the_person_weight_at_zero_turns_the_rule_off() {
    let (_d, m) = conversation();
    let mut req = kith::RetrieveRequest::new("o", "Where does Chris work?").unwrap();
    req.record = false;
    req.weights = kith::retrieve::fusion::PathWeights::parse(&["person=0".to_string()]).unwrap();
    let r = m.retrieve(&req).unwrap();
    assert_eq!(common::rank_of(&m, "o", &r, "own"), Some(1));
    assert!(!common::any_boosted(&r, "names_person"));
}

/// Only the graph's people count: Ember is an entity, but no person, so a
/// question about it boosts nothing; nor does a question about the speaker.
#[test]
fn a_name_that_is_no_person_or_is_the_speaker_gets_no_boost() {
    let (_d, m) = conversation();
    for q in ["Where is Ember?", "Where does Daniel work?"] {
        let r = common::ask(&m, "o", q);
        assert!(!common::any_boosted(&r, "names_person"), "{q}");
    }
}
