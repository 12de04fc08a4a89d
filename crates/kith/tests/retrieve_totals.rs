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
    assert!(off.results.iter().all(|i| i
        .trace
        .boosts
        .iter()
        .all(|b| b.name != "states_a_quantity")));

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
    assert!(got.results.iter().all(|i| i
        .trace
        .boosts
        .iter()
        .all(|b| b.name != "states_a_quantity")));
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
