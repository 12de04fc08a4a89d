//! Who the question is about: the speakers it names ([`names`] reads names
//! as people say them), the boost their turns get, and the strong evidence
//! by someone else that keeps its place.
//!
//! kith knows who said what, so "What did Caroline say about the adoption?"
//! favours Caroline's turns over Melanie's asking about it: turns by a
//! named speaker are multiplied by [`NAMED_SPEAKER_BOOST`]. But a question
//! can name the wrong person ("What did Caroline realise after her charity
//! race?" when Melanie ran it), and then the boost buries the one turn that
//! says what happened. So a turn by someone else that, *before* the boost,
//! is among the [`KEPT_STRONG`] best candidates and outranks every turn of
//! the named speakers (by more than [`KEPT_MARGIN`]) keeps its place: it gets the same factor, labelled
//! `other_speaker` with who really said it. The reasoning generalises: a
//! turn that matches the question better on its own words than anything
//! the named person said is evidence whoever said it; the boost only
//! decides among the rest. (Measured in BENCHMARKS.md: speaker traps'
//! R@5 doubles on both halves of LoCoMo at a cost of under 0.01 R@5 on
//! ordinary questions.)

use std::collections::HashSet;

use kith_core::Role;
use kith_store::LexicalHit;
use uuid::Uuid;

use super::fusion::Boost;
use super::names::{best_named, QueryWords};
use super::{PathWeights, Pool, NAMED_SPEAKER_BOOST};

/// How many of the best candidates before the speaker boost keep their
/// place when another speaker said them.
pub const KEPT_STRONG: usize = 3;

/// How far a kept turn must score above the named speakers' best before
/// the boost: more than the one-rank difference that two equal texts get
/// from a tie broken by store order (1/31 against 1/32 is 1.03), so a tie
/// still goes to the named speaker.
pub const KEPT_MARGIN: f64 = 1.1;

/// A speaker the question names.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedSpeaker {
    /// The speaker as stored.
    pub name: String,
    /// How the question names them ("by first name", …).
    pub how: String,
}

/// The speakers among `hits` whom the query names: by full name, first
/// name, surname or a short form of the first name ([`names`]).
pub fn named_speakers<'a>(
    query: &str,
    hits: impl Iterator<Item = &'a LexicalHit>,
) -> Vec<NamedSpeaker> {
    let mut seen = HashSet::new();
    let speakers: Vec<String> = hits
        .filter_map(|h| h.speaker.clone())
        .filter(|s| seen.insert(s.clone()))
        .collect();
    let q = QueryWords::new(query);
    best_named(&q, speakers.iter().map(|s| (s.as_str(), true)))
        .into_iter()
        .map(|(name, how)| NamedSpeaker {
            name: name.to_string(),
            how: how.describe().to_string(),
        })
        .collect()
}

/// The query's words that say a named speaker's name (the name's own words,
/// and a short form of its first name), left out of BM25's query: their
/// turns rarely contain them.
pub fn name_words(named: &[NamedSpeaker], query_words: &[String]) -> HashSet<String> {
    let mut out = HashSet::new();
    for n in named {
        let parts = super::words(&n.name);
        let first = parts.first().cloned().unwrap_or_default();
        for w in query_words {
            if parts.contains(w) || (w.chars().count() >= 3 && first.starts_with(w.as_str())) {
                out.insert(w.clone());
            }
        }
    }
    out
}

/// Adds the speakers named through the graph: a candidate's speaker whose
/// name is a person entity the graph path reached through an accepted
/// alias ("Mel", accepted as Melanie's alias, names the speaker Melanie).
pub fn add_reached(named: &mut Vec<NamedSpeaker>, people: &[String], pool: &Pool) {
    let mut seen: HashSet<String> = named.iter().map(|n| n.name.clone()).collect();
    for c in pool.by_id.values() {
        let Some(speaker) = &c.hit.speaker else {
            continue;
        };
        if seen.contains(speaker) {
            continue;
        }
        if people
            .iter()
            .any(|p| p.to_lowercase() == speaker.to_lowercase())
        {
            seen.insert(speaker.clone());
            named.push(NamedSpeaker {
                name: speaker.clone(),
                how: "through an accepted alias".into(),
            });
        }
    }
}

/// Boosts turns by the named speakers, and keeps another speaker's turn
/// level with them when, before the boost, it is among the
/// [`KEPT_STRONG`] best candidates and scores above every turn of the
/// named speakers by more than [`KEPT_MARGIN`] (a tie goes to the named
/// speaker).
pub fn boost(named: &[NamedSpeaker], pool: &mut Pool, weights: &PathWeights) {
    let is_named = |speaker: Option<&str>| named.iter().find(|n| Some(n.name.as_str()) == speaker);
    let strong: Vec<Uuid> = {
        let ranked = pool.ranked(weights);
        let best_named = ranked
            .iter()
            .find(|c| is_named(c.hit.speaker.as_deref()).is_some())
            .map(|c| c.trace.rrf)
            .unwrap_or(0.0);
        ranked
            .iter()
            .take(KEPT_STRONG)
            .filter(|c| {
                is_named(c.hit.speaker.as_deref()).is_none()
                    && c.trace.rrf > best_named * KEPT_MARGIN
            })
            .map(|c| c.hit.node_id)
            .collect()
    };
    let names: Vec<&str> = named.iter().map(|n| n.name.as_str()).collect();
    for c in pool.by_id.values_mut() {
        if c.hit.role == Some(Role::System) {
            continue;
        }
        let speaker = c.hit.speaker.as_deref();
        if let Some(n) = is_named(speaker) {
            c.trace.add_boost(Boost {
                name: "named_speaker".into(),
                factor: NAMED_SPEAKER_BOOST,
                reason: format!("the query names {} ({}), who said this", n.name, n.how),
            });
        } else if strong.contains(&c.hit.node_id) {
            let who = speaker.unwrap_or("someone else");
            c.trace.add_boost(Boost {
                name: "other_speaker".into(),
                factor: NAMED_SPEAKER_BOOST,
                reason: format!(
                    "said by {who}, not by {}: kept level, as one of the {KEPT_STRONG} best matches before the speaker boost, above every turn of theirs",
                    names.join(" or ")
                ),
            });
        }
    }
}
