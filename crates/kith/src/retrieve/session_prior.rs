//! The session prior: a turn is lifted by how well the best turn of its
//! session matched the question.
//!
//! People talk about one thing for a while. The turn that matches the
//! question best sits in a sitting where the rest of the answer usually is
//! too: the reply that says what happened ("They were awestruck and
//! humbled."), the turn two later that says how it ended, the other
//! speaker's account when the question names the wrong person. Those turns
//! share few of the question's words, so on their own they rank below
//! turns from other days that share one word. The prior multiplies every
//! turn by `1 + w × best(session) / best(all)`, where `best` is the fused
//! score before boosts: turns of the best session gain up to `w`, turns of
//! a session with nothing that matches gain nothing. It reorders what the
//! paths found; it finds nothing new.
//!
//! Measured in BENCHMARKS.md (2026-12-03, session 13): on LoCoMo it lifts
//! the speaker traps on both halves (R@10 tune 0.881 → 0.929, report
//! 0.813 → 0.857) with categories 1–4 a little up on both; on LongMemEval
//! recall_all@10 and nDCG rise on the report half while recall_all@5 falls
//! there. `--weights session=0` turns it off.
//!
//! Not for a question that asks for a count or an amount ("How many hours
//! have I spent playing games in total?", [`asks_for_quantity`]): its
//! answer is added up from several sittings, each turn stating its own
//! figure, and lifting the best match's sitting pushes the others' figures
//! down (BENCHMARKS.md, session 22).

use std::collections::HashMap;

use kith_core::SessionId;

use super::fusion::{Boost, PathWeights};
use super::pool::Pool;
use super::quantities::asks_for_quantity;

/// Lifts every candidate that has a session by its session's best fused
/// score against the pool's best (see the module docs); `weights.session`
/// is the most a turn can gain (0: off). Nothing for a `query` that asks
/// for a count or an amount.
pub(super) fn lift(query: &str, weights: &PathWeights, pool: &mut Pool) {
    if weights.session <= 0.0 || asks_for_quantity(query) {
        return;
    }
    let mut best_of: HashMap<SessionId, f64> = HashMap::new();
    for c in pool.by_id.values() {
        if let Some(session) = &c.hit.session_id {
            let best = best_of.entry(session.clone()).or_insert(0.0);
            *best = best.max(c.trace.rrf);
        }
    }
    let best = best_of.values().copied().fold(0.0, f64::max);
    if best <= 0.0 {
        return;
    }
    for c in pool.by_id.values_mut() {
        let Some(session) = &c.hit.session_id else {
            continue;
        };
        let share = best_of[session] / best;
        if share <= 0.0 {
            continue;
        }
        c.trace.add_boost(Boost {
            name: "session".into(),
            factor: 1.0 + weights.session * share,
            reason: format!(
                "in the session of a match scoring {:.0}% of the best",
                share * 100.0
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use kith_core::{NodeType, Role, ScopeId};
    use kith_store::LexicalHit;
    use uuid::Uuid;

    use super::*;
    use crate::retrieve::fusion::{PathKind, PathRank};

    /// A turn of `session` found by each of `paths` at its rank.
    fn turn(pool: &mut Pool, session: Option<&str>, paths: &[(PathKind, usize)]) -> Uuid {
        let id = Uuid::new_v4();
        for (path, rank) in paths {
            found(pool, id, session, *path, *rank);
        }
        id
    }

    fn found(pool: &mut Pool, id: Uuid, session: Option<&str>, path: PathKind, rank: usize) {
        pool.add(
            LexicalHit {
                node_id: id,
                score: 0.0,
                node_type: NodeType::Note,
                content: "a turn".into(),
                scope: ScopeId::personal(),
                event_id: Some(Uuid::new_v4()),
                session_id: session.map(|s| SessionId::new(s).unwrap()),
                role: Some(Role::User),
                speaker: Some("Maya".into()),
                event_time: None,
                ingested_at: None,
            },
            PathRank {
                path,
                rank,
                score: None,
                via: None,
            },
        );
    }

    const ASKED: &str = "What did Maya say about the trip?";

    fn order(pool: &mut Pool, weights: &PathWeights) -> Vec<Uuid> {
        pool.ranked(weights).iter().map(|c| c.hit.node_id).collect()
    }

    #[test]
    fn a_weaker_turn_of_the_best_session_passes_a_stronger_one_from_elsewhere() {
        let mut pool = Pool::default();
        // The best match, found by words and meaning; a turn from another
        // day that shares a word; the reply after the best match, a little
        // weaker.
        use PathKind::{Lexical, Vector};
        let best = turn(&mut pool, Some("monday"), &[(Lexical, 1), (Vector, 1)]);
        let elsewhere = turn(&mut pool, Some("friday"), &[(Lexical, 2)]);
        let reply = turn(&mut pool, Some("monday"), &[(Lexical, 4)]);
        let unsessioned = turn(&mut pool, None, &[(Lexical, 6)]);
        let off = PathWeights {
            session: 0.0,
            ..PathWeights::default()
        };
        lift(ASKED, &off, &mut pool);
        assert_eq!(
            order(&mut pool, &off),
            vec![best, elsewhere, reply, unsessioned]
        );

        let on = PathWeights::default();
        lift(ASKED, &on, &mut pool);
        assert_eq!(
            order(&mut pool, &on),
            vec![best, reply, elsewhere, unsessioned]
        );
        let trace = &pool.by_id[&reply].trace;
        let boost = trace.boosts.iter().find(|b| b.name == "session").unwrap();
        assert!((boost.factor - (1.0 + on.session)).abs() < 1e-9);
        // A turn with no session is left as it was.
        assert!(pool.by_id[&unsessioned].trace.boosts.is_empty());
    }

    /// A count is added up from several sittings: the best match's does
    /// not decide where the other figures are.
    #[test]
    fn a_question_that_asks_for_a_count_lifts_no_session() {
        let mut pool = Pool::default();
        use PathKind::{Lexical, Vector};
        let best = turn(&mut pool, Some("monday"), &[(Lexical, 1), (Vector, 1)]);
        let elsewhere = turn(&mut pool, Some("friday"), &[(Lexical, 2)]);
        let reply = turn(&mut pool, Some("monday"), &[(Lexical, 4)]);
        let weights = PathWeights::default();
        lift(
            "How many hours did Maya spend on games in total?",
            &weights,
            &mut pool,
        );
        assert_eq!(order(&mut pool, &weights), vec![best, elsewhere, reply]);
        assert!(pool.by_id.values().all(|c| c.trace.boosts.is_empty()));
    }
}
