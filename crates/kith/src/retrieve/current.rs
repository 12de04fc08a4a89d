//! Current facts first: for a question about the present ("Where does Maya
//! work now?"), a turn whose claim was superseded ranks below the turn that
//! superseded it, and the packed context says it is superseded.
//!
//! The graph path already walks the claims of the entities a question
//! names; on the way it notes each superseded claim (`superseded_by`) and
//! follows the chain to the claim in force. A turn that grounds the old
//! claim but not the one in force (a merge repeats its evidence, so a
//! repeat is never "superseded") is *superseded evidence*: it is marked in
//! the packed context whatever the question; for a present-tense question
//! it is also multiplied by [`SUPERSEDED_FACTOR`] and the turn that
//! grounds the claim in force joins the candidates with the old turn's
//! fused score (path `current`), so it ranks above. So do the turns of
//! the other claims in force of the same kind about the same subject,
//! said since (`works_at Brightpath Labs` beside `NOT works_at Northwind
//! Analytics`, which replaced `works_at Northwind Analytics`): "I left"
//! says where she no longer works, the new job says where she works now.

use std::collections::HashMap;

use kith_core::ids;
use kith_store::Tx;
use uuid::Uuid;

use super::by_id;
use super::filters::admitted;
use super::fusion::{Boost, PathKind, PathRank};
use super::pool::{hit_for, path, Pool};
use super::RetrieveRequest;
use crate::error::Error;

/// Turns of one claim in force brought in at most (its newest evidence).
const CURRENT_TURNS: usize = 3;

/// The factor for superseded evidence under a present-tense question.
pub const SUPERSEDED_FACTOR: f64 = 0.25;

/// Words that ask about the present.
const PRESENT_CUES: &[&str] = &[
    "now",
    "currently",
    "current",
    "still",
    "today",
    "presently",
    "nowadays",
    "anymore",
];

/// Present-tense verbs that make a question ask about what holds now
/// ("Where does she work?", "Who is her employer?").
const PRESENT_VERBS: &[&str] = &["does", "do", "is", "are", "has", "have"];

/// Words that ask about the past, or about a change over time.
const PAST_CUES: &[&str] = &[
    "did",
    "was",
    "were",
    "had",
    "used",
    "before",
    "previously",
    "previous",
    "originally",
    "formerly",
    "former",
    "old",
    "first",
    "ago",
    "last",
    "when",
    "until",
];

/// Whether `query` asks about the present: a present cue ("now",
/// "currently", "still"…), or a present-tense verb with no past cue and
/// no date named.
pub fn asks_about_present(query: &str, names_a_date: bool) -> bool {
    if has_present_cue(query) {
        return true;
    }
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    has(PRESENT_VERBS) && !has(PAST_CUES) && !names_a_date && !has_year(&words)
}

/// Whether `query` says it asks about now in so many words ("now",
/// "currently", "still"…), not only by a present-tense verb.
pub fn has_present_cue(query: &str) -> bool {
    query
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| PRESENT_CUES.contains(&w.to_lowercase().as_str()))
}

/// A four-digit year (1900–2099) among `words`.
fn has_year(words: &[String]) -> bool {
    words
        .iter()
        .any(|w| w.len() == 4 && w.parse::<u32>().is_ok_and(|y| (1900..2100).contains(&y)))
}

/// One superseded turn: the event that grounds an old claim, and what
/// replaced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Superseded {
    /// The old claim's text.
    pub old_claim: String,
    /// The claim in force.
    pub current_claim: Uuid,
    /// Its text.
    pub current_text: String,
    /// The events that ground the claim in force, newest last.
    pub current_events: Vec<Uuid>,
    /// Other claims in force of the same kind about the same subject, said
    /// after the old one (`works_at Brightpath Labs` beside `NOT works_at
    /// Northwind Analytics`), each with its events, newest last.
    pub also_current: Vec<(Uuid, Vec<Uuid>)>,
}

/// Superseded evidence by event id, gathered by the graph path.
#[derive(Debug, Default)]
pub struct SupersededEvidence {
    /// Event id of a superseded turn → what replaced its claim.
    pub by_event: HashMap<Uuid, Superseded>,
}

impl SupersededEvidence {
    /// Records that `old_events` grounded `old_claim`, now replaced by the
    /// claim in force grounded in `current_events`. Events that ground both
    /// (a repeat merged into the current claim) are not superseded.
    pub fn note(
        &mut self,
        old_events: &[Uuid],
        old_claim: &str,
        current_claim: Uuid,
        current_text: &str,
        current_events: &[Uuid],
    ) {
        for event in old_events {
            if current_events.contains(event) {
                continue;
            }
            self.by_event.entry(*event).or_insert_with(|| Superseded {
                old_claim: old_claim.to_string(),
                current_claim,
                current_text: current_text.to_string(),
                current_events: current_events.to_vec(),
                also_current: Vec::new(),
            });
        }
    }

    /// Records that `claim`, grounded in `events`, is also in force where
    /// `old_events` were superseded: another claim of the same kind about
    /// the same subject, said after the old one ("I started my new job at
    /// Brightpath Labs" beside "I left Northwind Analytics"). An event that
    /// grounds it is no longer superseded (the old claim was said again).
    pub fn also_in_force(&mut self, old_events: &[Uuid], claim: Uuid, events: &[Uuid]) {
        for event in events {
            self.by_event.remove(event);
        }
        for event in old_events {
            if let Some(s) = self.by_event.get_mut(event) {
                if !s.also_current.iter().any(|(c, _)| *c == claim) {
                    s.also_current.push((claim, events.to_vec()));
                }
            }
        }
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.by_event.is_empty()
    }

    /// The packed context's mark for evidence from `event`, when it is
    /// superseded: `superseded by: <the claim in force>` (at most 100
    /// characters of it).
    pub fn mark(&self, event: Option<Uuid>) -> Option<String> {
        let s = self.by_event.get(&event?)?;
        let mut text: String = s.current_text.chars().take(100).collect();
        if text.len() < s.current_text.len() {
            text.push('…');
        }
        Some(format!("superseded by: {text}"))
    }
}

/// For a present-tense question: multiplies superseded candidates by
/// [`SUPERSEDED_FACTOR`] and brings in the turns behind the claims in force
/// (the one that replaced it, and the others of its kind said since) with
/// the superseded turn's fused score (path `current`).
pub fn put_current_first(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    superseded: &SupersededEvidence,
    pool: &mut Pool,
) -> Result<(), Error> {
    // (the superseded candidate, its fused score, what replaced it)
    let mut sources: Vec<(Uuid, f64, &Superseded)> = Vec::new();
    for c in pool.ranked(&req.weights) {
        if let Some(s) = c.hit.event_id.and_then(|e| superseded.by_event.get(&e)) {
            sources.push((c.hit.node_id, c.trace.rrf, s));
        }
    }
    for (node_id, _, s) in &sources {
        if let Some(c) = pool.by_id.get_mut(node_id) {
            c.trace.add_boost(Boost {
                name: "superseded".into(),
                factor: SUPERSEDED_FACTOR,
                reason: format!(
                    "the question asks about now, and its claim \"{}\" was superseded by \"{}\"",
                    s.old_claim, s.current_text
                ),
            });
        }
    }
    // Every turn to bring in, with its note, in one read (one round trip
    // on a server), not two per turn.
    let turns: Vec<Uuid> = sources
        .iter()
        .flat_map(|(_, _, s)| in_force_turns(s).into_iter().map(|(e, _)| e))
        .collect();
    let note_ids: Vec<Uuid> = turns.iter().map(|e| ids::note_node_id(*e)).collect();
    let (events, notes) = by_id::events_and_nodes(tx, &req.owner, &turns, &note_ids)?;
    for (i, (node_id, score, s)) in sources.iter().enumerate() {
        for (event_id, claim) in in_force_turns(s) {
            let Some(event) = events.get(&event_id).cloned() else {
                continue;
            };
            let Some(note) = notes.get(&ids::note_node_id(event_id)).cloned() else {
                continue;
            };
            if note.owner_id != req.owner || !admitted(&req.filters, &note, Some(&event)) {
                continue;
            }
            let graph_rank = claim_graph_rank(pool, claim);
            let hit = hit_for(&note, Some(&event));
            pool.add(
                hit.clone(),
                path(
                    PathKind::Current,
                    i,
                    Some(*score),
                    Some(format!("claim in force {claim}, replaces node {node_id}")),
                ),
            );
            if let Some(rank) = graph_rank {
                pool.add(hit, rank);
            }
        }
    }
    Ok(())
}

/// The graph path's rank of the claim in force `claim`, to be its turn's
/// too: a result is scored by its best node, so the rank the claim earned
/// (it answers what is asked of the entity) would otherwise never reach the
/// turn brought in for it, and the turn of the new job could rank below
/// the other speaker's chatter.
fn claim_graph_rank(pool: &Pool, claim: Uuid) -> Option<PathRank> {
    let graph = pool
        .by_id
        .get(&claim)?
        .trace
        .paths
        .iter()
        .find(|p| p.path == PathKind::Graph)?;
    let how = graph.via.as_deref().unwrap_or("the graph");
    Some(PathRank {
        via: Some(format!("claim in force {claim}, reached via {how}")),
        ..graph.clone()
    })
}

/// The turns to bring in for `s`, each with the claim in force it grounds:
/// the [`CURRENT_TURNS`] newest of the claim that replaced it, then the
/// newest of each other claim in force of its kind.
fn in_force_turns(s: &Superseded) -> Vec<(Uuid, Uuid)> {
    let mut out: Vec<(Uuid, Uuid)> = s
        .current_events
        .iter()
        .rev()
        .take(CURRENT_TURNS)
        .map(|e| (*e, s.current_claim))
        .collect();
    for (claim, events) in &s.also_current {
        if let Some(e) = events.last() {
            if !out.iter().any(|(seen, _)| seen == e) {
                out.push((*e, *claim));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_tense_questions() {
        let table = [
            ("Where does Maya work now?", false, true),
            ("Where does Maya work?", false, true),
            ("Is Maya still at Northwind?", false, true),
            ("Who is Maya's current employer?", false, true),
            ("Where did Maya work?", false, false),
            ("Where did Maya work before Brightpath?", false, false),
            ("Where does Maya work? (as of 2024)", false, false),
            ("Where does Maya work on 3 May 2024?", true, false),
            ("When did Maya start her new job?", false, false),
            ("What was Maya's first job?", false, false),
            ("Maya's job", false, false),
        ];
        for (q, dated, want) in table {
            assert_eq!(asks_about_present(q, dated), want, "{q:?}");
        }
    }

    #[test]
    fn a_merged_repeat_is_not_superseded() {
        let (a, b, c) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        let current = Uuid::from_u128(9);
        let mut s = SupersededEvidence::default();
        // a and b said the old value; b is also the current claim's evidence.
        s.note(
            &[a, b],
            "works_at Northwind",
            current,
            "left Northwind",
            &[b, c],
        );
        assert!(s.by_event.contains_key(&a));
        assert!(!s.by_event.contains_key(&b));
        assert_eq!(s.by_event[&a].current_events, vec![b, c]);
        assert!(!s.is_empty());
        assert_eq!(
            s.mark(Some(a)).as_deref(),
            Some("superseded by: left Northwind")
        );
        assert_eq!(s.mark(Some(b)), None);
        assert_eq!(s.mark(None), None);
    }

    #[test]
    fn a_claim_of_the_same_kind_said_since_is_in_force_too() {
        let (old, left, new_job, repeat) = (
            Uuid::from_u128(1),
            Uuid::from_u128(2),
            Uuid::from_u128(3),
            Uuid::from_u128(4),
        );
        let (in_force, brightpath) = (Uuid::from_u128(9), Uuid::from_u128(10));
        let mut s = SupersededEvidence::default();
        s.note(
            &[old, repeat],
            "works_at Northwind",
            in_force,
            "NOT works_at Northwind",
            &[left],
        );
        s.also_in_force(&[old, repeat], brightpath, &[new_job]);
        s.also_in_force(&[old, repeat], brightpath, &[new_job]);
        // Brought in once, after the claim that replaced the old one.
        assert_eq!(
            in_force_turns(&s.by_event[&old]),
            vec![(left, in_force), (new_job, brightpath)]
        );
        // A turn that grounds a claim in force is not superseded.
        s.also_in_force(&[old], Uuid::from_u128(11), &[repeat]);
        assert!(!s.by_event.contains_key(&repeat));
        assert!(s.by_event.contains_key(&old));
    }
}
