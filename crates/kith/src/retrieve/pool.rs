//! The candidate pool every path adds to: one candidate per node, with the
//! trace of every path that found it, ranked by fused score.

use std::collections::{HashMap, HashSet};

use kith_store::{LexicalHit, StoredEvent};
use uuid::Uuid;

use super::fusion::{Boost, PathKind, PathRank, PathWeights, Trace};
use super::paths::words;

/// A candidate under construction.
pub(super) struct Candidate {
    /// The node as a search hit, with its source event's provenance.
    pub hit: LexicalHit,
    /// Every path that found it, and the boosts it got.
    pub trace: Trace,
    /// When it was first found: ties rank in this order.
    pub order: usize,
    /// The candidate whose question this turn answers: it comes right
    /// after that hit, which asks (`?`), in another voice (set by the
    /// neighbour path).
    pub answers: Option<Uuid>,
}

/// Candidates by node id, remembering first-seen order for stable ties.
#[derive(Default)]
pub(super) struct Pool {
    pub by_id: HashMap<Uuid, Candidate>,
}

impl Pool {
    /// Adds `hit` as found by `path` (a node found again gains a path).
    pub fn add(&mut self, hit: LexicalHit, path: PathRank) {
        let order = self.by_id.len();
        self.by_id
            .entry(hit.node_id)
            .or_insert_with(|| Candidate {
                hit,
                trace: Trace::default(),
                order,
                answers: None,
            })
            .trace
            .add_path(path);
    }

    /// The words of every speaker's name in the pool: paths that follow
    /// names leave these out, as greetings name the speakers in every
    /// other turn.
    pub fn speaker_words(&self) -> HashSet<String> {
        self.by_id
            .values()
            .filter_map(|c| c.hit.speaker.as_deref())
            .flat_map(words)
            .collect()
    }

    /// Candidates best first.
    pub fn ranked(&mut self, weights: &PathWeights) -> Vec<&Candidate> {
        for c in self.by_id.values_mut() {
            c.trace.finish(weights);
        }
        let mut all: Vec<&Candidate> = self.by_id.values().collect();
        all.sort_by(|a, b| {
            b.trace
                .score
                .total_cmp(&a.trace.score)
                .then(a.order.cmp(&b.order))
        });
        all
    }

    /// The results' order: [`Pool::ranked`], after which the best match
    /// before any boost is never below [`BEST_KEPT_WITHIN`]th place
    /// ([`Pool::keep_best`]).
    pub fn ranked_for_results(&mut self, weights: &PathWeights) -> Vec<&Candidate> {
        let mut order: Vec<Uuid> = self.ranked(weights).iter().map(|c| c.hit.node_id).collect();
        self.keep_best(&mut order);
        order.iter().map(|id| &self.by_id[id]).collect()
    }

    /// Moves the candidate the paths ranked best before any boost (highest
    /// fused score, first found on a tie) up to [`BEST_KEPT_WITHIN`]th
    /// place in `order` when the boosts pushed it further down, and says so
    /// in its trace. A boost is a prior about who or what the question is
    /// about (the named speaker, a stated time or figure); it may reorder
    /// the evidence, but the turn that matches the question best on its
    /// own words and meaning stays among the first results a caller reads.
    /// The case it mends: a question that names the wrong person ("What
    /// did Caroline realise after her charity race?" when Melanie ran it),
    /// where the named speaker's turns, multiplied by the boost, filled the
    /// first ten. Only the one best is kept: keeping the best two or three
    /// as well lost LoCoMo's tune half 0.003 R@10 on ordinary questions
    /// (BENCHMARKS.md, 2026-12-03, session 11).
    fn keep_best(&mut self, order: &mut Vec<Uuid>) {
        let Some(best) = self
            .by_id
            .values()
            .max_by(|a, b| {
                a.trace
                    .rrf
                    .total_cmp(&b.trace.rrf)
                    .then(b.order.cmp(&a.order))
            })
            .map(|c| c.hit.node_id)
        else {
            return;
        };
        let at = order.iter().position(|id| *id == best).unwrap_or(0);
        let within = BEST_KEPT_WITHIN - 1;
        if at <= within {
            return;
        }
        order.remove(at);
        order.insert(within, best);
        if let Some(c) = self.by_id.get_mut(&best) {
            c.trace.add_boost(Boost {
                name: "best_before_boosts".into(),
                factor: 1.0,
                reason: format!(
                    "the best match before boosts, ranked {} after them; kept at {BEST_KEPT_WITHIN}",
                    at + 1
                ),
            });
        }
    }
}

/// The place the best match before boosts is kept within: the first page
/// of results (a retrieve's default limit).
pub const BEST_KEPT_WITHIN: usize = 10;

/// The rank of the `index`th (0-based) hit of a path.
pub(super) fn path(
    kind: PathKind,
    index: usize,
    score: Option<f64>,
    via: Option<String>,
) -> PathRank {
    PathRank {
        path: kind,
        rank: index + 1,
        score,
        via,
    }
}

/// A hit for a node found outside the store's searches, with provenance
/// from its source event.
pub(super) fn hit_for(node: &kith_core::Node, event: Option<&StoredEvent>) -> LexicalHit {
    LexicalHit {
        node_id: node.id,
        score: 0.0,
        node_type: node.node_type,
        content: node.content.clone(),
        scope: node.scope.clone(),
        event_id: event.map(|e| e.event.id),
        session_id: event.and_then(|e| e.event.session_id.clone()),
        role: event.map(|e| e.event.role),
        speaker: event.and_then(|e| e.event.speaker.as_ref().map(|s| s.as_str().to_string())),
        event_time: event.and_then(|e| e.event.event_time),
        ingested_at: event.map(|e| e.event.ingested_at),
    }
}

#[cfg(test)]
mod tests {
    use kith_core::{NodeType, ScopeId};

    use super::*;

    fn add(pool: &mut Pool, speaker: &str, lexical_rank: usize) -> Uuid {
        let id = Uuid::new_v4();
        let hit = LexicalHit {
            node_id: id,
            score: 0.0,
            node_type: NodeType::Note,
            content: format!("{speaker} said something"),
            scope: ScopeId::personal(),
            event_id: Some(Uuid::new_v4()),
            session_id: None,
            role: None,
            speaker: Some(speaker.into()),
            event_time: None,
            ingested_at: None,
        };
        pool.add(hit, path(PathKind::Lexical, lexical_rank - 1, None, None));
        id
    }

    /// Melanie's turn is the best match; a dozen of Caroline's rank just
    /// below it and a boost doubles them (a question that names Caroline).
    fn boosted() -> (Pool, Uuid) {
        let mut pool = Pool::default();
        let melanie = add(&mut pool, "Melanie", 1);
        for rank in 2..=13 {
            let caroline = add(&mut pool, "Caroline", rank);
            pool.by_id
                .get_mut(&caroline)
                .unwrap()
                .trace
                .add_boost(Boost {
                    name: "named_speaker".into(),
                    factor: 2.0,
                    reason: "test".into(),
                });
        }
        (pool, melanie)
    }

    #[test]
    fn the_best_match_before_boosts_stays_in_the_first_page() {
        let (mut pool, melanie) = boosted();
        let weights = PathWeights::default();
        // Ranked by score alone, the boosts bury it.
        let plain = pool.ranked(&weights);
        assert_eq!(plain.last().unwrap().hit.node_id, melanie);
        // The results' order keeps it at 10th place, and says why.
        let ranked = pool.ranked_for_results(&weights);
        let at = ranked.iter().position(|c| c.hit.node_id == melanie);
        assert_eq!(at, Some(BEST_KEPT_WITHIN - 1));
        let kept = &ranked[BEST_KEPT_WITHIN - 1].trace.boosts;
        assert!(
            kept.iter()
                .any(|b| b.name == "best_before_boosts" && b.reason.contains("ranked 13")),
            "{kept:?}"
        );
        // Everything else keeps its order.
        assert_eq!(ranked.len(), 13);
        assert!(ranked.iter().filter(|c| c.hit.node_id != melanie).all(|c| c
            .hit
            .speaker
            .as_deref()
            == Some("Caroline")));
    }

    #[test]
    fn a_best_match_already_in_the_first_page_is_left_where_it_is() {
        let mut pool = Pool::default();
        let best = add(&mut pool, "Melanie", 1);
        let other = add(&mut pool, "Caroline", 2);
        pool.by_id.get_mut(&other).unwrap().trace.add_boost(Boost {
            name: "named_speaker".into(),
            factor: 2.0,
            reason: "test".into(),
        });
        let ranked = pool.ranked_for_results(&PathWeights::default());
        assert_eq!(ranked[0].hit.node_id, other);
        assert_eq!(ranked[1].hit.node_id, best);
        assert!(ranked[1].trace.boosts.is_empty());
    }
}
