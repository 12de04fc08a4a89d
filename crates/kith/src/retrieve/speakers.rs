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
//!
//! That rule only keeps the few best turns. When the question's own words
//! point to someone it does not name ([`premise`]: the turns that carry its
//! rare words are the other speaker's, or said to them), every turn of that
//! person is kept level instead, labelled with who said it: the premise is
//! misattributed, and the question is about what they did.
//!
//! And a question often names the one who *asked*: "How did Caroline's
//! children handle the accident?" when Caroline asked Melanie "How did they
//! handle the accident?". Her question matches best; the answer is
//! Melanie's reply, which the neighbour path brought in. The reply to a
//! named speaker's question among the [`ANSWERED_STRONG`] best candidates
//! before the boost is kept level too, labelled with the question it
//! answers ([`answers_to_named`]; `weights.replies` = 0 turns it off).

use std::collections::HashSet;

use kith_core::Role;
use kith_store::LexicalHit;
use uuid::Uuid;

use super::fusion::PathWeights;
use super::fusion::{Boost, PathKind};
use super::names::{best_named, QueryWords};
use super::pool::{Candidate, Pool};
use super::premise::{self, Misattributed, Turn};
use super::NAMED_SPEAKER_BOOST;

/// How many of the best candidates before the speaker boost keep their
/// place when another speaker said them.
pub const KEPT_STRONG: usize = 3;

/// How far a kept turn must score above the named speakers' best before
/// the boost: more than the one-rank difference that two equal texts get
/// from a tie broken by store order (1/31 against 1/32 is 1.03), so a tie
/// still goes to the named speaker.
pub const KEPT_MARGIN: f64 = 1.1;

/// How many of the best candidates before the boost may be a named
/// speaker's question whose reply keeps its place ([`answers_to_named`]):
/// the 5 the hops start from (`expand::HOP_SOURCES`); 3, as
/// [`KEPT_STRONG`], kept fewer of the tune half's traps (0.798 against
/// 0.833 R@10) at the same R@10 on ordinary questions (BENCHMARKS.md).
pub const ANSWERED_STRONG: usize = 5;

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
        let parts = super::paths::words(&n.name);
        for w in query_words {
            if says_name(w, &parts) {
                out.insert(w.clone());
            }
        }
    }
    out
}

/// Whether the query word `word` (lower case) says the name whose
/// lower-case words are `parts`: one of them, a short form of the first
/// name of at least three letters ("Mel" for Melanie), or a pet form of it
/// ("Tommy" for Tom, [`super::names`]).
pub fn says_name(word: &str, parts: &[String]) -> bool {
    let first = parts.first().map_or("", String::as_str);
    parts.iter().any(|p| p == word) || super::names::is_short_or_pet_form(word, first)
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
/// speaker). A reply's share of a named speaker's statement it follows
/// (the neighbour path) does not count towards that: an acknowledgement
/// ("Noted! Enjoy Lisbon." after Maya's "I moved to Lisbon in September.")
/// says nothing the statement did not, while an answer to a named
/// speaker's question (which asks, `?`) carries what was asked and keeps
/// its share.
///
/// When the question's words point to someone it does not name
/// (`misattributed`, [`premise::check`]), every turn of that person is
/// kept level instead (or those that carry the lead, when it is narrow),
/// labelled with who really said it: the question is about what they
/// did, whoever it names. The reply to a named speaker's question keeps
/// its place in both cases.
pub fn boost(
    named: &[NamedSpeaker],
    misattributed: Option<&Misattributed>,
    pool: &mut Pool,
    weights: &PathWeights,
) {
    let is_named = |speaker: Option<&str>| named.iter().find(|n| Some(n.name.as_str()) == speaker);
    let names: Vec<&str> = named.iter().map(|n| n.name.as_str()).collect();
    let strong = match misattributed {
        Some(_) => Vec::new(),
        None => strong_others(named, pool, weights),
    };
    // The reply to a named speaker's question keeps its place whether or
    // not the premise is misattributed: either way it is where the answer
    // to what they asked is.
    let answers = if weights.replies > 0.0 {
        answers_to_named(named, pool, weights)
    } else {
        Vec::new()
    };
    let reply_to = |id: Uuid| {
        answers
            .iter()
            .find(|(a, _)| *a == id)
            .map(|(_, question)| format!("kept level, as the reply to their question \"{question}\", one of the {ANSWERED_STRONG} best matches before the speaker boost"))
    };
    for c in pool.by_id.values_mut() {
        if c.hit.role == Some(Role::System) {
            continue;
        }
        let speaker = c.hit.speaker.as_deref();
        let who = speaker.unwrap_or("someone else");
        let kept = match misattributed {
            Some(m) if speaker == Some(m.about.as_str()) && m.keeps(c.hit.node_id) => {
                Some(m.describe(&names))
            }
            None if strong.contains(&c.hit.node_id) => Some(format!(
                "kept level, as one of the {KEPT_STRONG} best matches before the speaker boost, above every turn of theirs"
            )),
            _ => reply_to(c.hit.node_id),
        };
        if let Some(n) = is_named(speaker) {
            c.trace.add_boost(Boost {
                name: "named_speaker".into(),
                factor: NAMED_SPEAKER_BOOST,
                reason: format!("the query names {} ({}), who said this", n.name, n.how),
            });
        } else if let Some(why) = kept {
            c.trace.add_boost(Boost {
                name: "other_speaker".into(),
                factor: NAMED_SPEAKER_BOOST,
                reason: format!("said by {who}, not by {}: {why}", names.join(" or ")),
            });
        }
    }
}

/// The turns by someone else among the [`KEPT_STRONG`] best before the
/// boost that score above every turn of the named speakers by more than
/// [`KEPT_MARGIN`] (see [`boost`]).
fn strong_others(named: &[NamedSpeaker], pool: &mut Pool, weights: &PathWeights) -> Vec<Uuid> {
    let is_named = |speaker: Option<&str>| named.iter().any(|n| Some(n.name.as_str()) == speaker);
    let order: Vec<Uuid> = pool.ranked(weights).iter().map(|c| c.hit.node_id).collect();
    let pool: &Pool = pool;
    let ranked: Vec<&Candidate> = order.iter().filter_map(|id| pool.by_id.get(id)).collect();
    let best_named = ranked
        .iter()
        .find(|c| is_named(c.hit.speaker.as_deref()))
        .map(|c| c.trace.rrf)
        .unwrap_or(0.0);
    ranked
        .iter()
        .take(KEPT_STRONG)
        .filter(|c| {
            !is_named(c.hit.speaker.as_deref())
                && standing(c, pool, named, weights) > best_named * KEPT_MARGIN
        })
        .map(|c| c.hit.node_id)
        .collect()
}

/// The replies, by someone the question does not name, to a named
/// speaker's turn that asks (`?`) and is among the [`ANSWERED_STRONG`]
/// best candidates before the boost, each with an excerpt of that question.
/// The question matched the question's words; its reply is where the
/// answer is ("How did they handle the accident?" asked by Caroline,
/// "They were scared but we reassured them…" by Melanie), and doubling
/// every turn of the named speaker would bury it.
fn answers_to_named(
    named: &[NamedSpeaker],
    pool: &mut Pool,
    weights: &PathWeights,
) -> Vec<(Uuid, String)> {
    let is_named = |speaker: Option<&str>| named.iter().any(|n| Some(n.name.as_str()) == speaker);
    let asked: Vec<(Uuid, String)> = pool
        .ranked(weights)
        .iter()
        .take(ANSWERED_STRONG)
        .filter(|c| is_named(c.hit.speaker.as_deref()) && c.hit.content.contains('?'))
        .map(|c| (c.hit.node_id, excerpt(&c.hit.content)))
        .collect();
    pool.by_id
        .values()
        .filter(|c| !is_named(c.hit.speaker.as_deref()))
        .filter_map(|c| {
            let (_, q) = asked.iter().find(|(id, _)| Some(*id) == c.answers)?;
            Some((c.hit.node_id, q.clone()))
        })
        .collect()
}

/// The first 60 characters of `text`, for a trace.
fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(60).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Whether the question's words point to someone it does not name
/// ([`premise::check`]), read from the candidates' turns best first (so a
/// tie between two turns of one person names the same one every time).
pub fn check_premise(
    query: &str,
    named: &[NamedSpeaker],
    pool: &mut Pool,
    weights: &PathWeights,
) -> Option<Misattributed> {
    let ranked = pool.ranked(weights);
    let turns: Vec<Turn<'_>> = ranked
        .iter()
        .filter(|c| c.hit.role != Some(Role::System))
        .filter_map(|c| {
            Some(Turn {
                speaker: c.hit.speaker.as_deref()?,
                text: &c.hit.content,
            })
        })
        .collect();
    let names: Vec<&str> = named.iter().map(|n| n.name.as_str()).collect();
    let ids: Vec<Uuid> = ranked
        .iter()
        .filter(|c| c.hit.role != Some(Role::System) && c.hit.speaker.is_some())
        .map(|c| c.hit.node_id)
        .collect();
    let narrow = weights.narrow_premise > 0.0;
    premise::check(query, &names, &turns).or_else(|| {
        if !narrow {
            return None;
        }
        let mut m = premise::check_with_margin(query, &names, &turns, premise::NARROW_MARGIN)?;
        m.only = Some(m.strongest.iter().map(|i| ids[*i]).collect());
        Some(m)
    })
}

/// A candidate's fused score less what it inherited as the reply to a
/// named speaker's statement (see [`boost`]).
fn standing(c: &Candidate, pool: &Pool, named: &[NamedSpeaker], weights: &PathWeights) -> f64 {
    let is_named = |speaker: Option<&str>| named.iter().any(|n| Some(n.name.as_str()) == speaker);
    let mut score = c.trace.rrf;
    for p in c
        .trace
        .paths
        .iter()
        .filter(|p| p.path == PathKind::Neighbour)
    {
        let source = p
            .via
            .as_deref()
            .and_then(|v| v.strip_prefix("node "))
            .and_then(|id| Uuid::parse_str(id).ok())
            .and_then(|id| pool.by_id.get(&id));
        if let (Some(source), Some(inherited)) = (source, p.score) {
            if is_named(source.hit.speaker.as_deref()) && !source.hit.content.contains('?') {
                score -= weights.neighbour * inherited;
            }
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use kith_core::{NodeType, ScopeId};

    use super::*;
    use crate::retrieve::fusion::PathRank;

    type Found<'a> = (PathKind, usize, Option<f64>, Option<&'a str>);

    #[test]
    fn a_query_word_says_a_name_whole_or_by_its_first_names_short_form() {
        let maya = vec!["maya".to_string(), "okafor".to_string()];
        for word in ["maya", "okafor", "may"] {
            assert!(says_name(word, &maya), "{word}");
        }
        // Too short, another word, or a short form of the surname.
        for word in ["ma", "mayan", "oka", "work"] {
            assert!(!says_name(word, &maya), "{word}");
        }
        assert!(!says_name("mel", &[]));
        // A pet form of the first name.
        let tom = vec!["tom".to_string()];
        assert!(says_name("tommy", &tom));
        assert!(!says_name("tomas", &tom));
    }

    fn turn(pool: &mut Pool, speaker: &str, text: &str, paths: &[Found<'_>]) -> Uuid {
        let id = Uuid::new_v4();
        for (path, rank, score, via) in paths {
            pool.add(
                LexicalHit {
                    node_id: id,
                    score: 0.0,
                    node_type: NodeType::Note,
                    content: text.into(),
                    scope: ScopeId::personal(),
                    event_id: Some(Uuid::new_v4()),
                    session_id: None,
                    role: Some(Role::User),
                    speaker: Some(speaker.into()),
                    event_time: None,
                    ingested_at: None,
                },
                PathRank {
                    path: *path,
                    rank: *rank,
                    score: *score,
                    via: via.map(str::to_string),
                },
            );
        }
        id
    }

    fn top(pool: &mut Pool) -> Uuid {
        pool.ranked(&PathWeights::default())[0].hit.node_id
    }

    fn maya() -> [NamedSpeaker; 1] {
        [NamedSpeaker {
            name: "Maya".into(),
            how: "by full name".into(),
        }]
    }

    /// Maya's turn found by the graph; the reply after it by vectors and
    /// as her turn's neighbour, which lifts it above her turn before the
    /// boost. Which one leads after it?
    fn after_boost(said: &str) -> (Uuid, Uuid, Uuid) {
        let mut pool = Pool::default();
        let m = turn(&mut pool, "Maya", said, &[(PathKind::Graph, 1, None, None)]);
        let via = format!("node {m}");
        let reply = turn(
            &mut pool,
            "assistant",
            "Noted! Enjoy Lisbon.",
            &[
                (PathKind::Vector, 2, None, None),
                (PathKind::Neighbour, 1, Some(0.026), Some(via.as_str())),
            ],
        );
        assert_eq!(top(&mut pool), reply);
        boost(&maya(), None, &mut pool, &PathWeights::default());
        (m, reply, top(&mut pool))
    }

    #[test]
    fn an_acknowledgement_of_the_named_speakers_statement_is_not_kept_level() {
        let (m, _, top) = after_boost("I moved to Lisbon in September.");
        assert_eq!(top, m);
        // The answer to her question keeps its share, and its place.
        let (_, reply, top) = after_boost("Where should I move to?");
        assert_eq!(top, reply);
    }

    /// "What did Maria recently get promoted to?": the question's words
    /// point to John's "I got promoted at work!" by a narrow lead, so only
    /// that turn of his is kept level; his answer to Maria's "How did you
    /// feel when you found out?" carries none of the words and is kept as
    /// the reply to her question all the same.
    #[test]
    fn the_reply_to_the_named_speakers_question_is_kept_when_the_premise_is_misattributed() {
        let mut pool = Pool::default();
        let asks = turn(
            &mut pool,
            "Maria",
            "Congrats! How did you feel when you found out?",
            &[(PathKind::Lexical, 2, None, None)],
        );
        let lead = turn(
            &mut pool,
            "John",
            "I got promoted at work!",
            &[(PathKind::Lexical, 1, None, None)],
        );
        let reply = turn(
            &mut pool,
            "John",
            "Over the moon: I'm an assistant manager now.",
            &[(PathKind::Vector, 4, None, None)],
        );
        pool.by_id.get_mut(&reply).unwrap().answers = Some(asks);
        let other = turn(
            &mut pool,
            "John",
            "The kids loved the beach.",
            &[(PathKind::Vector, 5, None, None)],
        );
        let narrow = Misattributed {
            about: "John".into(),
            words: vec!["promot".into()],
            scores: (4.8, 2.9),
            strongest: Vec::new(),
            only: Some(vec![lead]),
        };
        let maria = [NamedSpeaker {
            name: "Maria".into(),
            how: "by full name".into(),
        }];
        boost(&maria, Some(&narrow), &mut pool, &PathWeights::default());
        let label = |id: Uuid| {
            pool.by_id[&id]
                .trace
                .boosts
                .iter()
                .find(|b| b.name == "other_speaker")
                .map(|b| b.reason.clone())
        };
        assert!(label(lead).unwrap().contains("point to John"));
        assert!(label(reply).unwrap().contains("reply to their question"));
        // John's other turns are not kept: the lead was narrow.
        assert_eq!(label(other), None);
    }
}
