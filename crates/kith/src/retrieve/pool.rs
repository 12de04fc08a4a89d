//! The candidate pool every path adds to: one candidate per node, with the
//! trace of every path that found it, ranked by fused score.

use std::collections::{HashMap, HashSet};

use kith_store::{LexicalHit, StoredEvent};
use uuid::Uuid;

use super::fusion::{PathKind, PathRank, PathWeights, Trace};
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
}

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
