//! Retrieval and the people in a question (issue 16): names as people say
//! them ("Maya", "Ms Okafor", "Mel"), a question that names the wrong
//! speaker, and current facts first on the demo pack's conversation
//! ("Where does Maya work now?" after she changed jobs). Vectors come from
//! the hashing embedder; the demo's claims from the default heuristic
//! extractor.

mod common;

use std::sync::Arc;

use common::{ask, rank_of};
use kith::embedding::EmbeddingSpec;
use kith::retrieve::fusion::PathKind;
use kith::{Embedder, EventInput, Memory, Retrieval, RetrieveRequest};

fn memory() -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let hashing: Arc<dyn Embedder> = EmbeddingSpec::parse("hashing-256")
        .unwrap()
        .load()
        .unwrap()
        .unwrap();
    let m = Memory::init_with_embedder(&dir.path().join("p.kith"), hashing).unwrap();
    (dir, m)
}

fn turn(speaker: &str, source: &str, text: &str) -> EventInput {
    common::turn("ana", speaker, source, text)
}

fn boost_reason(r: &Retrieval, rank: usize, name: &str) -> Option<String> {
    r.results[rank - 1]
        .trace
        .boosts
        .iter()
        .find(|b| b.name == name)
        .map(|b| b.reason.clone())
}

#[test]
fn a_short_form_or_a_surname_names_the_speaker() {
    let (_d, m) = memory();
    m.store_batch(vec![
        turn(
            "Melanie Price",
            "1",
            "I started pottery classes last month.",
        ),
        turn(
            "Caroline Reyes",
            "2",
            "I started pottery classes last month.",
        ),
    ])
    .unwrap();
    for (q, who, how) in [
        (
            "What did Mel start last month?",
            "Melanie Price",
            "short form",
        ),
        (
            "What did Ms Price start last month?",
            "Melanie Price",
            "surname",
        ),
        (
            "What did Caroline start last month?",
            "Caroline Reyes",
            "first name",
        ),
        (
            "What did Ms Reyes start last month?",
            "Caroline Reyes",
            "surname",
        ),
    ] {
        let r = ask(&m, "ana", q);
        let top = &r.results[0];
        assert_eq!(top.provenance.speaker.as_deref(), Some(who), "{q}");
        let reason = boost_reason(&r, 1, "named_speaker").expect("boosted");
        assert!(reason.contains(how), "{q}: {reason}");
    }
    // A lower-case word or a month is no name: no speaker is boosted.
    for q in ["what did mel start last month?", "What started in May?"] {
        let r = ask(&m, "ana", q);
        assert!(
            r.results
                .iter()
                .all(|i| i.trace.boosts.iter().all(|b| !b.name.ends_with("_speaker"))),
            "{q} boosted someone"
        );
    }
}

/// "Tommy" names the speaker Tom: his own turn comes before Jess's
/// "Thanks Tommy", which says the question's word. Before, the pet form
/// named nobody and that turn ranked first.
#[test]
fn a_pet_form_of_the_first_name_names_the_speaker() {
    let (_d, m) = memory();
    m.store_batch(vec![
        turn("Jess", "1", "Rent is due Friday, everyone ok?"),
        turn("Tom", "2", "Paid my share of the rent just now!"),
        turn("Jess", "3", "Thanks Tommy. The plumber came this morning."),
        turn("Priya", "4", "The boiler is fixed, finally."),
    ])
    .unwrap();
    let r = ask(&m, "ana", "Did Tommy pay the rent?");
    assert_eq!(rank_of(&m, "ana", &r, "2"), Some(1), "{:?}", r.results);
    let reason = boost_reason(&r, 1, "named_speaker").expect("boosted");
    assert!(reason.contains("pet form"), "{reason}");
}

/// "Sammy" names the speaker Samantha Cole: a pet form of a short form of
/// her first name. Her own turn comes before Jake's "Sammy that's huge!!",
/// which says the question's word; before, "Sammy" named nobody.
#[test]
fn a_pet_form_of_a_short_form_names_the_speaker() {
    let (_d, m) = memory();
    m.store_batch(vec![
        turn(
            "Samantha Cole",
            "1",
            "I run the flower shop on Atlantic Ave.",
        ),
        turn("Jake Miller", "2", "Sammy that's huge!! Proud of you."),
        turn("Jake Miller", "3", "I cook risotto most Sundays."),
    ])
    .unwrap();
    let r = ask(&m, "ana", "What does Sammy do?");
    assert_eq!(rank_of(&m, "ana", &r, "1"), Some(1), "{:?}", r.results);
    let reason = boost_reason(&r, 1, "named_speaker").expect("boosted");
    assert!(reason.contains("pet form"), "{reason}");
}

#[test]
fn strong_evidence_by_the_other_speaker_keeps_its_place_labelled() {
    let (_d, m) = memory();
    m.store_batch(vec![
        turn("Caroline", "1", "Hey Mel, how are you doing today?"),
        turn(
            "Melanie",
            "2",
            "After the charity race I realized that self-care is really important.",
        ),
        turn("Caroline", "3", "I love painting, it keeps me calm."),
        turn("Caroline", "4", "My friends took me hiking on Sunday."),
        turn("Caroline", "5", "I am researching adoption agencies."),
        turn("Caroline", "6", "Thanks, that means a lot to me."),
    ])
    .unwrap();
    // The question names the wrong person: Melanie ran the race.
    let q = "What did Caroline realize after her charity race?";
    let r = ask(&m, "ana", q);
    let rank = rank_of(&m, "ana", &r, "2").expect("Melanie's turn is found");
    assert_eq!(rank, 1, "{q}");
    let reason = boost_reason(&r, rank, "other_speaker").expect("labelled");
    assert!(
        reason.contains("said by Melanie, not by Caroline"),
        "{reason}"
    );
    assert_eq!(r.results[0].provenance.speaker.as_deref(), Some("Melanie"));
    // Without the boost it ranks first too: the rule only keeps its place.
    let mut req = RetrieveRequest::new("ana", q).unwrap();
    req.record = false;
    req.paths.speaker_boost = false;
    let plain = m.retrieve(&req).unwrap();
    assert_eq!(
        plain.results[0].provenance.event_id,
        r.results[0].provenance.event_id
    );
    // Caroline's own turns still carry the boost.
    assert!(r
        .results
        .iter()
        .filter(|i| i.provenance.speaker.as_deref() == Some("Caroline"))
        .all(|i| i.trace.boosts.iter().any(|b| b.name == "named_speaker")));
}

fn demo() -> (tempfile::TempDir, Memory) {
    let (d, m) = memory();
    common::import_demo(&m);
    (d, m)
}

#[test]
fn current_facts_rank_first_and_superseded_evidence_is_marked() {
    let (_d, m) = demo();
    // demo-s1-08: "I work at Northwind Analytics…" (superseded);
    // demo-s3-01: "I left Northwind Analytics…" (the claim in force);
    // demo-s3-03: "I started my new job at Brightpath Labs…".
    for q in [
        "Where does Maya work now?",
        "Where does Maya Okafor work now?",
        "Where does Ms Okafor work now?",
    ] {
        let r = ask(&m, "maya", q);
        let left = rank_of(&m, "maya", &r, "demo-s3-01").expect("the turn in force");
        let new_job = rank_of(&m, "maya", &r, "demo-s3-03").expect("the new job");
        assert!(new_job <= 10, "{q}: new job at {new_job}");
        let left_item = &r.results[left - 1];
        assert!(left_item.trace.has(PathKind::Current), "{q}");
        if let Some(old) = rank_of(&m, "maya", &r, "demo-s1-08") {
            assert!(old > left && old > new_job, "{q}: superseded turn at {old}");
            let reason = boost_reason(&r, old, "superseded").expect("demoted");
            assert!(reason.contains("Northwind"), "{reason}");
        }
        // Graph hits came through Maya Okafor's entity however she was named.
        assert!(r
            .results
            .iter()
            .any(|i| i.trace.paths.iter().any(|p| p.path == PathKind::Graph
                && p.via.as_deref().is_some_and(|v| v.contains("Maya Okafor")))));
    }
    // The packed context marks the superseded turn whenever it is packed.
    let mut req = RetrieveRequest::new("maya", "Where did Maya work in March?").unwrap();
    req.record = false;
    req.token_budget = 4000;
    req.limit = 50;
    let r = m.retrieve(&req).unwrap();
    let line = r
        .context
        .lines()
        .find(|l| l.contains("I work at Northwind Analytics"))
        .expect("the old job is packed");
    assert!(line.contains("[superseded by: "), "{line}");
    // A past-tense question does not demote it.
    let old = rank_of(&m, "maya", &r, "demo-s1-08").expect("found");
    assert!(boost_reason(&r, old, "superseded").is_none());
}
