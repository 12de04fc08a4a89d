//! Fuzz-style properties of the extraction reply parser and of grounding
//! with the engine's bounds (issue 20): arbitrary reply text, and arbitrary
//! (but well-typed) replies against arbitrary messages. Each case must end
//! in a typed error or a valid result, never a panic. Bounded: a fixed
//! number of cases, run by plain `cargo test`.

use kith_extract::bounds::{
    keep_grounded_entities, valid_entity_name, MAX_CLAIMS_PER_LIST, MAX_ENTITIES_PER_MESSAGE,
};
use kith_extract::grounding::{ground, EndpointRef, Grounded};
use kith_extract::{ExtractError, Extraction};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Words replies and messages are made of, hostile ones included.
const WORDS: &[&str] = &[
    "Maya",
    "Tom",
    "Lisbon",
    "I",
    "me",
    "my",
    "we",
    "it",
    "if",
    "may",
    "trying",
    "to",
    "moved",
    "likes",
    "tea",
    "\"",
    "'",
    "\u{201c}",
    "\u{2019}",
    ".",
    "!",
    "?",
    "\n",
    "\u{0}",
    "\u{202e}",
    "Ünïcødé",
    "東京",
    "🙂",
    "",
    "  ",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..24).prop_map(|w| w.join(" "))
}

/// One to four words, mostly plain ones (a claim's parts).
fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&WORDS[..16]), 1..4).prop_map(|w| w.join(" "))
}

fn fact(texts: (String, String, String, String), typed: Option<String>) -> Value {
    let (subject, object, predicate, quote) = texts;
    json!({
        "subject": subject, "predicate": predicate, "object": object,
        "object_entity_type": typed, "polarity": "positive",
        "evidence_quote": quote, "fact_type": "fact", "epistemic_type": "asserted",
        "temporal_intent": null, "replaces_object": null, "condition": null,
        "confidence": 0.5})
}

/// A reply that parses (mostly): entities and claims built from words.
fn reply() -> impl Strategy<Value = Value> {
    // Names of one to five words, hostile ones included (NUL, a
    // right-to-left override, blanks): the bounds must drop the invalid.
    let name =
        prop::collection::vec(prop::sample::select(&WORDS[..28]), 1..6).prop_map(|w| w.join(" "));
    let entity = (
        name,
        prop::sample::select(&["person", "place", "country", "other"][..]),
    )
        .prop_map(|(name, t)| json!({"name": name, "entity_type": t}));
    let claim = (
        (words(), words(), words(), words()),
        prop::option::of(Just("place".to_string())),
    )
        .prop_map(|(t, typed)| fact(t, typed));
    let relationship = (words(), words(), words()).prop_map(|(a, b, q)| {
        json!({"source_entity": a, "relationship_type": "knows", "target_entity": b,
               "polarity": "positive", "evidence_quote": q, "epistemic_type": "asserted",
               "confidence": 0.5})
    });
    (
        prop::collection::vec(entity, 0..12),
        prop::collection::vec(claim, 0..12),
        prop::collection::vec(relationship, 0..6),
        0usize..3,
    )
        .prop_map(|(entities, mut facts, relationships, copies)| {
            // Repeat the first claim: duplicates must collapse.
            if let Some(first) = facts.first().cloned() {
                facts.extend(std::iter::repeat_n(first, copies * 40));
            }
            json!({"entities": entities, "facts": facts, "relationships": relationships})
        })
}

/// What must hold of any grounded, bounded extraction of `content`.
fn check(content: &str, g: &Grounded) {
    assert!(g.entities.len() <= MAX_ENTITIES_PER_MESSAGE);
    assert!(g.facts.len() <= MAX_CLAIMS_PER_LIST);
    assert!(g.relationships.len() <= MAX_CLAIMS_PER_LIST);
    for e in &g.entities {
        assert!(valid_entity_name(&e.name), "{:?}", e.name);
    }
    let in_range = |r: &EndpointRef| match r {
        EndpointRef::Entity { index } => *index < g.entities.len(),
        _ => true,
    };
    for f in &g.facts {
        assert!(in_range(&f.subject) && in_range(&f.object));
        let ev = &f.evidence;
        assert!(ev.start <= ev.end && ev.end <= content.len());
        assert_eq!(content.get(ev.start..ev.end), Some(ev.quote.as_str()));
    }
    for r in &g.relationships {
        assert!(in_range(&r.source) && in_range(&r.target));
        let ev = &r.evidence;
        assert_eq!(content.get(ev.start..ev.end), Some(ev.quote.as_str()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any text: a typed error or an extraction, never a panic.
    #[test]
    fn any_reply_text_parses_or_is_refused(raw in ".{0,400}") {
        match Extraction::parse(&raw) {
            Ok(_) => {}
            Err(ExtractError::InvalidJson { .. } | ExtractError::Malformed { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
        }
    }
}

/// Replies built from the message's words (and hostile ones), grounded and
/// bounded as the engine does: valid, bounded results. Some replies are
/// cut short or break the schema (a blank name): those must be refused
/// with a typed error; a quarter of the cases at least must parse, so
/// grounding is exercised (counted, since a vacuous run would pass).
#[test]
fn any_reply_grounds_within_bounds() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let parsed = AtomicUsize::new(0);
    let cases = 256;
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &(text(), reply(), any::<bool>()),
            |(content, reply, cut)| {
                let mut raw = reply.to_string();
                if cut {
                    let mut at = raw.len() / 2;
                    while !raw.is_char_boundary(at) {
                        at -= 1;
                    }
                    raw.truncate(at);
                }
                let extraction = match Extraction::parse(&raw) {
                    Ok(x) => x,
                    Err(ExtractError::InvalidJson { .. } | ExtractError::Malformed { .. }) => {
                        return Ok(());
                    }
                    Err(other) => panic!("unexpected error kind: {other}"),
                };
                parsed.fetch_add(1, Ordering::Relaxed);
                let mut g = ground(&content, &extraction);
                keep_grounded_entities(&content, None, &mut g);
                check(&content, &g);
                // Grounding is a function of its inputs.
                let mut again = ground(&content, &extraction);
                keep_grounded_entities(&content, None, &mut again);
                prop_assert_eq!(g, again);
                Ok(())
            },
        )
        .unwrap();
    let parsed = parsed.into_inner();
    assert!(
        parsed * 4 >= cases as usize,
        "only {parsed} of {cases} replies parsed: the strategy no longer exercises grounding"
    );
}
