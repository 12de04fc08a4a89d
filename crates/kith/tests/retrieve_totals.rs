//! Questions that ask for a figure ("How many…", "How much…", "in total")
//! favour turns that state one (`retrieve/quantities.rs`). Vectors come from
//! the hashing embedder.

mod common;

use kith::retrieve::fusion::PathWeights;
use kith::{EventInput, Memory, Retrieval, RetrieveRequest};

fn memory() -> (tempfile::TempDir, Memory) {
    common::hashing_memory()
}

fn said(source: &str, text: &str) -> EventInput {
    common::turn("ana", "Ana", source, text)
}

/// Plants talked about twice, once with a count; and filler.
fn plants() -> Vec<EventInput> {
    vec![
        said(
            "1",
            "The plants on the balcony are thriving, I love those plants.",
        ),
        said("2", "The weather was grey all week."),
        said("3", "I got three plants at the market on Saturday."),
        said("4", "We cooked soup with the kids."),
        said("5", "My sister called about her new flat."),
    ]
}

fn ask(m: &Memory, query: &str, quantity: Option<f64>) -> Retrieval {
    let mut req = RetrieveRequest::new("ana", query).unwrap();
    req.record = false;
    if let Some(q) = quantity {
        req.weights = PathWeights {
            quantity: q,
            ..PathWeights::default()
        };
    }
    m.retrieve(&req).unwrap()
}

#[test]
fn a_count_question_puts_the_turn_that_states_the_count_first() {
    let (_d, m) = memory();
    let r = m.store_batch(plants()).unwrap();
    let (counted, talked) = (r[2].event_id, r[0].event_id);
    let q = "How many plants did I get?";

    // Without the boost, the turn that repeats the question's word ranks
    // first: this is what the boost is for.
    let off = ask(&m, q, Some(0.0));
    assert_eq!(off.results[0].provenance.event_id, talked);
    assert!(!common::any_boosted(&off, "states_a_quantity"));

    let on = ask(&m, q, None);
    let top = &on.results[0];
    assert_eq!(top.provenance.event_id, counted);
    let boost = top
        .trace
        .boosts
        .iter()
        .find(|b| b.name == "states_a_quantity")
        .expect("the counting turn is boosted");
    assert!(boost.reason.contains("three"), "{}", boost.reason);
    // The turn without a figure is not.
    let other = on
        .results
        .iter()
        .find(|i| i.provenance.event_id == talked)
        .expect("still found");
    assert!(other
        .trace
        .boosts
        .iter()
        .all(|b| b.name != "states_a_quantity"));
}

#[test]
fn a_question_that_asks_for_no_figure_boosts_nothing() {
    let (_d, m) = memory();
    m.store_batch(plants()).unwrap();
    let got = ask(&m, "Where did I get plants?", None);
    assert!(!got.results.is_empty());
    assert!(!common::any_boosted(&got, "states_a_quantity"));
}

#[test]
fn the_weight_parses_by_name_and_defaults_on() {
    let w = PathWeights::parse(&["quantity=0.5".into()]).unwrap();
    assert_eq!(w.quantity, 0.5);
    assert!(PathWeights::default().quantity > 0.0);
    // A weights object from before the boost existed still reads, with it
    // on.
    let mut old = serde_json::to_value(PathWeights::default()).unwrap();
    old.as_object_mut().unwrap().remove("quantity");
    let read: PathWeights = serde_json::from_value(old).unwrap();
    assert_eq!(read.quantity, PathWeights::default().quantity);
}

/// A total is added up from several sittings: for a question that asks for
/// a count or an amount the session prior lifts no sitting (the best
/// match's sitting says nothing about where the other figures are), and
/// every figure comes before the chatter. Asked without a count, the same
/// memory gets the prior.
#[test]
fn a_total_gathers_figures_from_every_sitting() {
    let (_d, m) = memory();
    let sat = |session: &str, source: &str, text: &str| EventInput {
        session_id: Some(session.into()),
        ..said(source, text)
    };
    m.store_batch(vec![
        sat(
            "s1",
            "celeste",
            "Celeste took me 10 hours playing, what a game.",
        ),
        sat(
            "s1",
            "chatter",
            "I spent the whole evening playing games again, so many games.",
        ),
        sat("s1", "music", "Games and music, playing both all evening."),
        sat(
            "s2",
            "hades",
            "After a long winter of evenings with friends and far too much coffee, Hades is done: 30 hours.",
        ),
        sat(
            "s3",
            "knight",
            "Hollow Knight, with its lovely hand-drawn caves and that long rainy ending, was 25 hours for me.",
        ),
        sat("s4", "soup", "We cooked soup with the kids."),
    ])
    .unwrap();
    let got = ask(
        &m,
        "How many hours have I spent playing games in total?",
        None,
    );
    let rank = |s: &str| common::rank_of(&m, "ana", &got, s).unwrap_or(usize::MAX);
    for figure in ["celeste", "hades", "knight"] {
        assert!(
            rank(figure) < rank("chatter"),
            "{figure}: {:?}",
            got.results
        );
    }
    assert!(!common::any_boosted(&got, "session"));
    let other = ask(&m, "What games have I been playing?", None);
    assert!(common::any_boosted(&other, "session"));
}
