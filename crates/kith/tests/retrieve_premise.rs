//! Speaker traps on the default path (issue 16, item 4): a question that
//! names the wrong speaker ("What did Caroline realize after her charity
//! race?" when Melanie ran it) finds the true speaker's answer, labelled
//! with who said it, while an ordinary question about what Caroline did
//! keeps the boost for her turns. Turns go in through `ingest_batch` (the
//! default heuristic extractor); vectors come from the hashing embedder.

mod common;

use kith::{EventInput, IngestOptions, Memory, Retrieval};

fn said(speaker: &str, source: &str, text: &str) -> EventInput {
    common::turn("o", speaker, source, text)
}

/// Caroline's turns `texts`, with sources `c0`, `c1`…
fn carolines(texts: &[&str]) -> Vec<EventInput> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| said("Caroline", &format!("c{i}"), text))
        .collect()
}

/// A memory (hashing vectors) holding `turns`, ingested in one batch.
fn ingested(turns: Vec<EventInput>) -> (tempfile::TempDir, Memory) {
    let (dir, m) = common::hashing_memory();
    m.ingest_batch(turns, IngestOptions::default()).unwrap();
    (dir, m)
}

/// Melanie tells of her charity race, Caroline asks what she realised
/// after it, and Melanie's answer names neither the race nor the charity;
/// around it, a dozen turns of Caroline's that use "realize" and the
/// question's other common words.
fn conversation(extra: Vec<EventInput>) -> (tempfile::TempDir, Memory) {
    let mut turns = vec![
        said(
            "Melanie",
            "race",
            "I ran a charity race for mental health last Saturday.",
        ),
        said(
            "Caroline",
            "ask",
            "That charity race sounds great! What did you realize after it?",
        ),
        said(
            "Melanie",
            "answer",
            "It made me see that self-care is really important.",
        ),
    ];
    let chatter = [
        "I realize I never told you about my new job.",
        "I did not realize how late it was yesterday.",
        "I realize now that moving was the right call.",
        "Did I tell you what I did after the move?",
        "I realize my cousin is visiting next week.",
        "After lunch I usually take a long walk.",
        "I realize I forgot my umbrella again.",
        "What did I do after the party? I slept.",
        "I realize the library closes early on Sundays.",
        "I never realize how fast the year goes.",
        "After the concert I could not sleep.",
        "I realize my phone needs a new battery.",
    ];
    turns.extend(carolines(&chatter));
    turns.extend(extra);
    ingested(turns)
}

fn ask(m: &Memory, q: &str) -> Retrieval {
    common::ask(m, "o", q)
}

fn rank_of(m: &Memory, r: &Retrieval, source: &str) -> Option<usize> {
    common::rank_of(m, "o", r, source)
}

#[test]
fn a_question_naming_the_wrong_speaker_finds_the_true_speakers_answer() {
    let (_d, m) = conversation(Vec::new());
    let q = "What did Caroline realize after her charity race?";
    let r = ask(&m, q);
    let rank = rank_of(&m, &r, "answer").expect("Melanie's answer is in the results");
    assert!(rank <= 5, "{q}: Melanie's answer ranks {rank}");
    let item = &r.results[rank - 1];
    assert_eq!(item.provenance.speaker.as_deref(), Some("Melanie"));
    let label = item
        .trace
        .boosts
        .iter()
        .find(|b| b.name == "other_speaker")
        .expect("labelled with who said it");
    assert!(
        label.reason.contains("said by Melanie, not by Caroline")
            && label.reason.contains("charity"),
        "{}",
        label.reason
    );
    // The packed context says who said it.
    assert!(
        r.context
            .lines()
            .any(|l| l.contains("Melanie") && l.contains("self-care")),
        "{}",
        r.context
    );
}

#[test]
fn an_ordinary_question_keeps_the_boost_for_the_named_speaker() {
    // Caroline painted the lake; Melanie's compliment to her carries far
    // more of the question's words than Caroline's own turn, but speaks
    // *to* Caroline about her work: the premise is Caroline's.
    let (_d, m) = conversation(vec![
        said("Caroline", "painted", "I finally painted again yesterday!"),
        said(
            "Melanie",
            "compliment",
            "Your painting of the lake at sunset is gorgeous, show it off!",
        ),
    ]);
    let q = "What did Caroline paint at the lake at sunset?";
    let r = ask(&m, q);
    let rank = rank_of(&m, &r, "painted").expect("Caroline's turn is found");
    let boosts = &r.results[rank - 1].trace.boosts;
    assert!(
        boosts.iter().any(|b| b.name == "named_speaker"),
        "{boosts:?}"
    );
    assert!(
        r.results
            .iter()
            .all(|i| i.trace.boosts.iter().all(|b| b.name != "other_speaker")),
        "no turn of Melanie's is kept level"
    );
}

#[test]
fn the_speaker_boost_never_pushes_the_best_match_off_the_first_page() {
    // Melanie adopted the kitten; a dozen of Caroline's turns each share
    // a word or two with the question, so no rule sees the premise as
    // Melanie's, and her turn wins before the boost by too little to be
    // kept level. Doubled, Caroline's turns would fill the first ten.
    let mut turns = vec![said(
        "Melanie",
        "kitten",
        "We adopted a kitten from the shelter on Friday, her name is Biscuit.",
    )];
    let chatter = [
        "I volunteer with every kitten at the animal shelter.",
        "Deciding to adopt a kitten is such a big step.",
        "The shelter wants people to adopt before winter.",
        "I watched a shelter kitten video this morning.",
        "My neighbour wants to adopt a dog from a shelter.",
        "A kitten sleeps all day, would you adopt one?",
        "The shelter downtown had a kitten open day.",
        "I want to adopt a kitten someday too.",
        "That shelter kitten in the window was cute.",
        "I donated towels so the shelter can help them adopt.",
        "We talked about whether to adopt or foster a kitten.",
        "Every shelter kitten deserves a warm home.",
    ];
    turns.extend(carolines(&chatter));
    let (_d, m) = ingested(turns);
    let r = ask(&m, "What kitten did Caroline adopt from the shelter?");
    let rank = rank_of(&m, &r, "kitten").expect("Melanie's turn is in the results");
    assert!(rank <= 10, "Melanie's turn ranks {rank}");
    let boosts = &r.results[rank - 1].trace.boosts;
    assert!(
        boosts.iter().any(|b| b.name == "best_before_boosts"),
        "kept by the rule that keeps the best match: {boosts:?}"
    );
}
