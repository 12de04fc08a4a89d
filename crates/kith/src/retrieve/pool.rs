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

    /// Multiplies by `factor`, as the boost `name`, every candidate that
    /// `why` gives a reason for, with that reason: the loop of the boosts
    /// that read a candidate's own turn (a stated figure, an introduction,
    /// the role asked for, a person named).
    pub fn boost_each(
        &mut self,
        name: &str,
        factor: f64,
        mut why: impl FnMut(&Candidate) -> Option<String>,
    ) {
        for c in self.by_id.values_mut() {
            if let Some(reason) = why(c) {
                c.trace.add_boost(Boost {
                    name: name.into(),
                    factor,
                    reason,
                });
            }
        }
    }

    /// The results' order: [`Pool::ranked`], after which the best match
    /// before any boost and the vector path's first hit are never below
    /// [`BEST_KEPT_WITHIN`]th place ([`Pool::keep_best`]), and a clear
    /// winner moves up past what the question's form favours no more
    /// ([`Pool::put_clear_winner_first`]).
    pub fn ranked_for_results(&mut self, weights: &PathWeights) -> Vec<&Candidate> {
        let mut order: Vec<Uuid> = self.ranked(weights).iter().map(|c| c.hit.node_id).collect();
        self.keep_best(&mut order, weights);
        self.put_clear_winner_first(&mut order);
        order.iter().map(|id| &self.by_id[id]).collect()
    }

    /// The lexical path's first hit when it scores at least
    /// [`CLEAR_MARGIN`] times the best BM25 of another turn and the vector
    /// path ranks it (or another node of its turn) within its first
    /// [`CLEAR_VECTOR_RANK`]: the question's words find it far ahead of any
    /// other turn, and its meaning agrees. A claim quotes its turn's
    /// sentence, so the two are one piece of evidence: the claim "Also my
    /// brother Rafa is visiting from Madrid" first and its turn second was
    /// no contest. Gives the first hit, its turn and why.
    fn clear_winner(&self) -> Option<(Uuid, Option<Uuid>, String)> {
        let rank_on = |c: &Candidate, kind: PathKind| {
            c.trace
                .paths
                .iter()
                .find(|p| p.path == kind)
                .map(|p| (p.rank, p.score))
        };
        let first = self
            .by_id
            .values()
            .find(|c| rank_on(c, PathKind::Lexical).is_some_and(|(rank, _)| rank == 1))?;
        let top = rank_on(first, PathKind::Lexical)?.1.unwrap_or(0.0);
        let event = first.hit.event_id;
        let same = |c: &Candidate| {
            c.hit.node_id == first.hit.node_id || (event.is_some() && c.hit.event_id == event)
        };
        let second = self
            .by_id
            .values()
            .filter(|c| !same(c))
            .filter_map(|c| rank_on(c, PathKind::Lexical).and_then(|(_, s)| s))
            .fold(0.0, f64::max);
        let vector = self
            .by_id
            .values()
            .filter(|c| same(c))
            .filter_map(|c| rank_on(c, PathKind::Vector).map(|(rank, _)| rank))
            .min()?;
        let clear = top > 0.0 && top >= CLEAR_MARGIN * second && vector <= CLEAR_VECTOR_RANK;
        clear.then(|| {
            let margin = if second > 0.0 {
                format!("{:.1} times another turn's best score", top / second)
            } else {
                "the only match".to_string()
            };
            (
                first.hit.node_id,
                event,
                format!("first on the lexical path at {margin}, #{vector} on the vector path"),
            )
        })
    }

    /// Moves a clear winner ([`Pool::clear_winner`]) up, towards the first
    /// place, and says so in its trace. Fusion adds up ranks, not scores:
    /// in a small memory a turn that two paths rank second, lifted by a
    /// neighbour's share and the session prior that share raised, passed
    /// the turn whose words the question says far more of ("Is Jen
    /// pregnant?" ranked "Jen's husband Dev is a pilot" above "Jen … told
    /// me she's pregnant!!"). It passes only candidates that the question's
    /// form favours no more than it ([`form_boost`]): a turn stating a
    /// figure for "How many hours…?" keeps its place above it, and so does
    /// one the `current` path brought (said since, or in force). Every
    /// other candidate keeps its order.
    fn put_clear_winner_first(&mut self, order: &mut Vec<Uuid>) {
        let Some((first, event, why)) = self.clear_winner() else {
            return;
        };
        // Its turn's place: the first of its nodes in the order.
        let Some(at) = order
            .iter()
            .position(|x| *x == first || (event.is_some() && self.by_id[x].hit.event_id == event))
        else {
            return;
        };
        let id = order[at];
        let own = form_boost(&self.by_id[&id]);
        // Nor past a turn said since, or in force, for a question about now:
        // "Update: I switched from Duolingo…" stays above "I started
        // learning Dutch on Duolingo", however clearly the words find it.
        let passes = |c: &Candidate| {
            form_boost(c) <= own && !c.trace.paths.iter().any(|p| p.path == PathKind::Current)
        };
        let mut to = at;
        while to > 0 && passes(&self.by_id[&order[to - 1]]) {
            to -= 1;
        }
        if to == at {
            return;
        }
        order.remove(at);
        order.insert(to, id);
        if let Some(c) = self.by_id.get_mut(&id) {
            c.trace.add_boost(Boost {
                name: "clear_winner".into(),
                factor: 1.0,
                reason: format!("{why}; ranked {} after fusion and boosts", at + 1),
            });
        }
    }

    /// The best match on its own ([`Trace::own_match`]: what a neighbour,
    /// the turn in force or a hop inherits left out), the first found on a
    /// tie; fused scores are those of the last [`Pool::ranked`].
    pub fn best_match(&self, weights: &PathWeights) -> Option<&Candidate> {
        self.by_id.values().max_by(|a, b| {
            a.trace
                .own_match(weights)
                .total_cmp(&b.trace.own_match(weights))
                .then(b.order.cmp(&a.order))
        })
    }

    /// Moves two candidates up to the first [`BEST_KEPT_WITHIN`] places of
    /// `order` when fusion and the boosts left them further down, and says
    /// so in their traces:
    ///
    /// - **the best match before boosts** (highest fused score of the paths
    ///   that matched it on its own, [`super::fusion::Trace::own_match`];
    ///   first found on a tie). A boost is a prior about who or what the
    ///   question is about (the named speaker, a stated time or figure); it may reorder
    ///   the evidence, but not push the turn that matches the question best
    ///   off the first page. The case: a question that names the wrong
    ///   person ("What did Caroline realise after her charity race?" when
    ///   Melanie ran it), where the named speaker's turns, doubled, filled
    ///   the first ten.
    /// - **the vector path's first hit**: the closest in meaning, found
    ///   whatever words it uses. Fusion adds up paths, and most of them
    ///   (lexical, feedback, category, parts, dated) reward shared words,
    ///   so a paraphrase that only the embedding finds can be outvoted by
    ///   turns that repeat the question's words.
    ///
    /// Kept in that order, after the first page's other candidates. Only
    /// these two: the best two or three before boosts cost LoCoMo's tune
    /// half 0.003 R@10 on ordinary questions, and the lexical path's first
    /// hit as well lost the trap row's gain (BENCHMARKS.md, 2026-12-03,
    /// session 11).
    fn keep_best(&mut self, order: &mut Vec<Uuid>, weights: &PathWeights) {
        let best = self.best_match(weights).map(|c| {
            (
                c.hit.node_id,
                "best_before_boosts",
                "the best match before boosts",
            )
        });
        let closest = self
            .by_id
            .values()
            .find(|c| {
                c.trace
                    .paths
                    .iter()
                    .any(|p| p.path == PathKind::Vector && p.rank == 1)
            })
            .map(|c| {
                (
                    c.hit.node_id,
                    "closest_in_meaning",
                    "the vector path's first hit",
                )
            });
        let within = BEST_KEPT_WITHIN;
        let mut kept: Vec<(Uuid, &str, &str, usize)> = Vec::new();
        for (id, name, what) in best.into_iter().chain(closest) {
            if kept.iter().any(|k| k.0 == id) {
                continue;
            }
            match order.iter().position(|x| *x == id) {
                Some(at) if at >= within => kept.push((id, name, what, at)),
                _ => {}
            }
        }
        if kept.is_empty() {
            return;
        }
        order.retain(|id| !kept.iter().any(|k| k.0 == *id));
        let from = (within - kept.len()).min(order.len());
        for (i, (id, name, what, at)) in kept.into_iter().enumerate() {
            order.insert(from + i, id);
            if let Some(c) = self.by_id.get_mut(&id) {
                c.trace.add_boost(Boost {
                    name: name.into(),
                    factor: 1.0,
                    reason: format!(
                        "{what}, ranked {} after fusion and boosts; kept within the first {BEST_KEPT_WITHIN}",
                        at + 1
                    ),
                });
            }
        }
    }
}

/// What the question's form makes of a candidate: the product of its
/// boosts but the session prior, which is read from fused scores (and so
/// from the very shares a clear winner is kept from losing to).
fn form_boost(c: &Candidate) -> f64 {
    c.trace
        .boosts
        .iter()
        .filter(|b| b.name != "session")
        .map(|b| b.factor)
        .product()
}

/// How many times the best BM25 of another turn the first lexical hit must score to
/// be a clear winner ([`Pool::clear_winner`]): picked before measuring,
/// not swept.
pub const CLEAR_MARGIN: f64 = 2.0;
/// The vector path's rank a clear winner needs at most: five, not three,
/// since "Dev says he hates sushi" (BM25 three times the next) ranked
/// fourth of twelve turns by meaning for "What does Dev hate?"; no
/// benchmark figure moved (BENCHMARKS.md, session 24).
pub const CLEAR_VECTOR_RANK: usize = 5;

/// The places the best match before boosts and the closest in meaning
/// are kept within: the first page of results (a retrieve's default
/// limit).
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
    fn the_closest_in_meaning_stays_in_the_first_page_beside_the_best_match() {
        // Twelve turns found by two word paths each; the vector path's
        // first hit, found by it alone, fuses below all of them. The best
        // match before boosts (Melanie's, boosted down to last) is kept too.
        let (mut pool, melanie) = boosted();
        let closest = add(&mut pool, "Caroline", 40);
        let c = pool.by_id.get_mut(&closest).unwrap();
        c.trace.paths.clear();
        c.trace
            .add_path(path(PathKind::Vector, 0, Some(0.61), None));
        let weights = PathWeights::default();
        let plain: Vec<Uuid> = pool
            .ranked(&weights)
            .iter()
            .map(|c| c.hit.node_id)
            .collect();
        assert!(plain.iter().position(|id| *id == closest).unwrap() >= BEST_KEPT_WITHIN);
        let ranked: Vec<Uuid> = pool
            .ranked_for_results(&weights)
            .iter()
            .map(|c| c.hit.node_id)
            .collect();
        assert_eq!(ranked[BEST_KEPT_WITHIN - 2], melanie);
        assert_eq!(ranked[BEST_KEPT_WITHIN - 1], closest);
        let label = &pool.by_id[&closest].trace.boosts;
        assert!(
            label.iter().any(|b| b.name == "closest_in_meaning"),
            "{label:?}"
        );
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

    /// Two candidates: the lexical path's first hit scoring `top` (and
    /// the vector path's `vector`th), and the second scoring `second`,
    /// lifted above it by a neighbour's share.
    fn lifted_past(top: f64, second: f64, vector: usize) -> (Pool, Uuid, Uuid) {
        let mut pool = Pool::default();
        let first = add(&mut pool, "Noor", 1);
        let lifted = add(&mut pool, "Noor", 2);
        let c = pool.by_id.get_mut(&first).unwrap();
        c.trace.paths[0].score = Some(top);
        c.trace
            .add_path(path(PathKind::Vector, vector - 1, Some(0.4), None));
        let c = pool.by_id.get_mut(&lifted).unwrap();
        c.trace.paths[0].score = Some(second);
        c.trace.add_path(path(PathKind::Vector, 0, Some(0.5), None));
        c.trace
            .add_path(path(PathKind::Neighbour, 0, Some(0.05), None));
        (pool, first, lifted)
    }

    #[test]
    fn a_clear_winner_on_the_words_that_the_meaning_agrees_with_is_first() {
        let weights = PathWeights::default();
        let (mut pool, first, lifted) = lifted_past(4.0, 1.5, CLEAR_VECTOR_RANK);
        assert_eq!(pool.ranked(&weights)[0].hit.node_id, lifted);
        let ranked = pool.ranked_for_results(&weights);
        assert_eq!(ranked[0].hit.node_id, first);
        assert_eq!(ranked[1].hit.node_id, lifted);
        let label = &ranked[0].trace.boosts;
        assert!(
            label.iter().any(|b| b.name == "clear_winner"
                && b.reason.contains("2.7 times")
                && b.reason.contains("ranked 2")),
            "{label:?}"
        );
    }

    /// A claim quotes its turn: the claim first and its turn second on the
    /// lexical path is one piece of evidence ahead of every other turn,
    /// and the turn (the first of its nodes in the order) moves up.
    #[test]
    fn a_claim_and_its_own_turn_are_no_contest() {
        let weights = PathWeights::default();
        let (mut pool, turn, lifted) = lifted_past(4.0, 1.5, 2);
        // The turn's claim, first on the lexical path and found by nothing
        // else; the turn itself second, its old rival third.
        let claim = add(&mut pool, "Noor", 1);
        let event = pool.by_id[&turn].hit.event_id;
        let c = pool.by_id.get_mut(&claim).unwrap();
        c.hit.event_id = event;
        c.hit.node_type = NodeType::Fact;
        c.trace.paths[0].score = Some(4.4);
        for (id, rank) in [(turn, 1), (lifted, 2)] {
            let p = &mut pool.by_id.get_mut(&id).unwrap().trace.paths[0];
            p.rank = rank + 1;
        }
        let ranked = pool.ranked_for_results(&weights);
        assert_eq!(ranked[0].hit.node_id, turn);
        assert!(ranked[0]
            .trace
            .boosts
            .iter()
            .any(|b| b.name == "clear_winner" && b.reason.contains("2.9 times another turn")));
    }

    #[test]
    fn a_narrow_lead_or_a_meaning_that_disagrees_moves_nothing() {
        let weights = PathWeights::default();
        // 1.6 times the second's score: not clear.
        let (mut pool, _, lifted) = lifted_past(2.4, 1.5, 1);
        assert_eq!(pool.ranked_for_results(&weights)[0].hit.node_id, lifted);
        // Far ahead on the words, but past the vector path's first five.
        let (mut pool, _, lifted) = lifted_past(4.0, 1.5, CLEAR_VECTOR_RANK + 1);
        let ranked = pool.ranked_for_results(&weights);
        assert_eq!(ranked[0].hit.node_id, lifted);
        assert!(ranked
            .iter()
            .all(|c| c.trace.boosts.iter().all(|b| b.name != "clear_winner")));
    }

    #[test]
    fn a_clear_winner_passes_no_turn_the_questions_form_favours_more() {
        let weights = PathWeights::default();
        let boost = |name: &str, factor: f64| Boost {
            name: name.into(),
            factor,
            reason: "test".into(),
        };
        // A turn stating the figure "How many…?" asks for stays above it.
        let (mut pool, _, lifted) = lifted_past(4.0, 1.5, 1);
        let c = pool.by_id.get_mut(&lifted).unwrap();
        c.trace.add_boost(boost("states_a_quantity", 1.25));
        assert_eq!(pool.ranked_for_results(&weights)[0].hit.node_id, lifted);
        // The session prior is not the question's form: passed.
        let (mut pool, first, lifted) = lifted_past(4.0, 1.5, 1);
        let c = pool.by_id.get_mut(&lifted).unwrap();
        c.trace.add_boost(boost("session", 1.5));
        assert_eq!(pool.ranked_for_results(&weights)[0].hit.node_id, first);
    }
}
