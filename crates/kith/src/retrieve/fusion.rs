//! Reciprocal rank fusion with path weights and boosts, keeping a trace of
//! everything that moved each result.
//!
//! A candidate's fused score is
//! `Σ over paths p that found it: weight(p) / (RRF_K + rank_p)` (ranks from
//! 1), then multiplied by every boost that applies. The weights and boosts
//! are documented in `docs/internals/retrieval.md` and exposed in the trace.

use serde::{Deserialize, Serialize};

/// The RRF constant. Cormack et al. use 60; 30 favours each path's top
/// ranks a little more, which measured better on both dev splits
/// (BENCHMARKS.md).
pub const RRF_K: f64 = 30.0;

/// A way a candidate was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// BM25 over node text.
    Lexical,
    /// Cosine similarity of embeddings.
    Vector,
    /// A claim about an entity the query names (the graph).
    Graph,
    /// A turn next to a strong hit in its session; its score is that hit's
    /// fused score.
    Neighbour,
    /// Among the newest memories, for queries about what is recent.
    Recency,
    /// Said around a date the query names.
    Dated,
    /// The turn behind a claim in force, for a present-tense question whose
    /// candidates include a turn it superseded; its score is that turn's
    /// fused score.
    Current,
    /// Reached from one of the best hits through an entity or a name it
    /// mentions, or the other speaker's reply to such a turn
    /// (`retrieve/expand.rs`); its score is a share of that hit's fused
    /// score.
    Hop,
    /// Ranked by a query built from the best hit's words
    /// (pseudo-relevance feedback, `retrieve/feedback.rs`).
    Feedback,
    /// Names a member of a category the question names ("Spain" for
    /// "European countries", `retrieve/category.rs`).
    Category,
    /// One side of a comparison the question makes ("…, A or B?",
    /// "between A and B"), searched on its own (`retrieve/parts.rs`).
    Parts,
}

/// Each path's weight in fusion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathWeights {
    /// BM25.
    pub lexical: f64,
    /// Embeddings.
    pub vector: f64,
    /// Claims of named entities.
    pub graph: f64,
    /// Session neighbours.
    pub neighbour: f64,
    /// Newest notes.
    pub recency: f64,
    /// Hits around a date the query names.
    pub dated: f64,
    /// The turns behind claims in force (a share of the superseded turn's
    /// score).
    #[serde(default = "one")]
    pub current: f64,
    /// Turns reached by a hop from the best hits (a share of the hit's
    /// score).
    #[serde(default = "half")]
    pub hop: f64,
    /// How much a hop through a name a hit mentions counts against one
    /// through a linked entity (0: that hop does not run). Off by default:
    /// it lifts LoCoMo's categories 1–4 a little but costs speaker traps
    /// and LongMemEval's recall_all@5 on the unseen halves (BENCHMARKS.md).
    #[serde(default)]
    pub mention: f64,
    /// The candidates ranked again by a query built from the best hit
    /// (pseudo-relevance feedback; 0: it does not run).
    #[serde(default = "feedback")]
    pub feedback: f64,
    /// Not a path, a switch (0 turns it off): the reply to a named
    /// speaker's question among the best hits keeps its place beside their
    /// boosted turns (`retrieve/speakers.rs`).
    #[serde(default = "one")]
    pub replies: f64,
    /// Not a path, a switch (0 turns it off): a question whose words point
    /// to someone it does not name by a smaller lead keeps only that
    /// person's turns that carry the lead (`retrieve/premise.rs`).
    #[serde(default = "one")]
    pub narrow_premise: f64,
    /// Turns naming a member of a category the question names (0: the
    /// path does not run).
    #[serde(default = "one")]
    pub category: f64,
    /// Each side of a comparison the question makes, searched on its own
    /// (0: the path does not run).
    #[serde(default = "one")]
    pub parts: f64,
    /// Not a path, a boost: for a question that asks for a count or an
    /// amount, turns that state a figure are multiplied by `1 + quantity`
    /// (`retrieve/quantities.rs`; 0 turns it off).
    #[serde(default = "quantity")]
    pub quantity: f64,
    /// Not a path, a boost: every turn is multiplied by `1 + session ×`
    /// its session's best fused score against the best of all
    /// (`retrieve/session_prior.rs`; 0 turns it off).
    #[serde(default = "session_prior")]
    pub session: f64,
    /// Not a path, a boost: in a conversation with an assistant, the turns
    /// in the role a question asks for (the user's for "What did I say…",
    /// the assistant's for "What did you suggest…") are multiplied by
    /// `1 + role` (`retrieve/asker.rs`; 0 turns it off).
    #[serde(default = "asked_role")]
    pub role: f64,
    /// Not a path, a boost: for a question that asks who someone is ("Who
    /// is Kofi?"), turns that introduce them ("my friend Kofi") are
    /// multiplied by `1 + who` (`retrieve/who.rs`; 0 turns it off).
    #[serde(default = "introduces")]
    pub who: f64,
    /// Not a path, a boost: for a question that names a person of the
    /// graph who is not a speaker ("Where does Chris work?"), turns that
    /// name them are multiplied by `1 + person` (`retrieve/mentioned.rs`;
    /// 0 turns it off).
    #[serde(default = "names_person")]
    pub person: f64,
}

fn one() -> f64 {
    1.0
}

fn half() -> f64 {
    0.5
}

fn quantity() -> f64 {
    QUANTITY_BOOST
}

/// The default of [`PathWeights::quantity`]: half the boost for turns
/// that state a time when the question asks when (`when.rs`), as far more
/// turns state some figure than state a time.
pub const QUANTITY_BOOST: f64 = 0.25;

fn introduces() -> f64 {
    INTRODUCES_BOOST
}

/// The default of [`PathWeights::who`]. Not fitted (one question of the
/// benchmarks asks who a name is): the size of the boost for a turn that
/// states a time when the question asks when — the answer's form, as there.
pub const INTRODUCES_BOOST: f64 = 0.5;

fn names_person() -> f64 {
    NAMES_PERSON_BOOST
}

/// The default of [`PathWeights::person`]. Not fitted (the benchmarks'
/// questions name their speakers; LongMemEval's store-only memories have
/// no person entities): the size of the boost for a turn that states a
/// time when the question asks when.
pub const NAMES_PERSON_BOOST: f64 = 0.5;

fn asked_role() -> f64 {
    ASKED_ROLE_BOOST
}

/// The default of [`PathWeights::role`]. Not fitted (no benchmark stores
/// both the user's and the assistant's turns): the size of the boost for
/// a turn that states a time when the question asks when, enough to put
/// the asker's own words ahead of a reply that repeats them, not ahead of
/// a turn that matches far better.
pub const ASKED_ROLE_BOOST: f64 = 0.5;

fn session_prior() -> f64 {
    SESSION_PRIOR
}

/// The default of [`PathWeights::session`]: a turn of the best match's
/// session gains at most half its score. Swept on LoCoMo's tune half only
/// (0.3–1.0 all lifted the speaker traps by the same four questions;
/// 0.5 kept categories 1–4 highest) and then measured once on the report
/// half (BENCHMARKS.md, 2026-12-03, session 13).
pub const SESSION_PRIOR: f64 = 0.5;

fn feedback() -> f64 {
    FEEDBACK_WEIGHT
}

/// The feedback path's default weight: on, at [`FEEDBACK_WEIGHT_ON`]. It
/// lifts LoCoMo's categories 1–4 on both halves and no report-half row
/// drops at R@10 (BENCHMARKS.md, 2026-12-02 (night)); it was off while it
/// pushed Maya's new job out of the demo's top 10 for "Where does Maya
/// work now?", which ranked there on the graph path alone until the
/// current facts of its kind joined the `current` path (`current.rs`).
/// `--weights feedback=0` turns it off.
pub const FEEDBACK_WEIGHT: f64 = FEEDBACK_WEIGHT_ON;

/// The weight the feedback path was measured at (`--weights
/// feedback=0.25`): half the vector path's, a small share beside the
/// question's own paths, picked before measuring and not swept.
pub const FEEDBACK_WEIGHT_ON: f64 = 0.25;

impl Default for PathWeights {
    fn default() -> Self {
        PathWeights {
            // Tuned on the LoCoMo dev split (BENCHMARKS.md): MiniLM's
            // ranking is weaker than BM25's on conversational turns, and an
            // answer often continues in the next turn.
            lexical: 1.0,
            vector: 0.5,
            graph: 0.8,
            neighbour: 0.5,
            recency: 0.1,
            dated: 1.0,
            // The current turn takes the superseded turn's place: not a
            // tuned weight, the rule itself.
            current: 1.0,
            // As the neighbours: a hop is another turn's evidence, passed
            // on; not tuned.
            hop: half(),
            mention: 0.0,
            feedback: FEEDBACK_WEIGHT,
            // Rules, not weights: on.
            replies: 1.0,
            narrow_premise: 1.0,
            // A BM25 search for what the question's words mean: the
            // lexical path's weight, picked before measuring.
            category: 1.0,
            // BM25 of a part of the question: the lexical path's weight,
            // picked before measuring.
            parts: 1.0,
            quantity: QUANTITY_BOOST,
            session: SESSION_PRIOR,
            role: ASKED_ROLE_BOOST,
            who: INTRODUCES_BOOST,
            person: NAMES_PERSON_BOOST,
        }
    }
}

impl PathWeights {
    /// The weight of `path`.
    pub fn of(&self, path: PathKind) -> f64 {
        match path {
            PathKind::Lexical => self.lexical,
            PathKind::Vector => self.vector,
            PathKind::Graph => self.graph,
            PathKind::Neighbour => self.neighbour,
            PathKind::Recency => self.recency,
            PathKind::Dated => self.dated,
            PathKind::Current => self.current,
            PathKind::Hop => self.hop,
            PathKind::Feedback => self.feedback,
            PathKind::Category => self.category,
            PathKind::Parts => self.parts,
        }
    }

    /// Parses `name=value` pairs over the defaults (`vector=0.7`).
    pub fn parse(pairs: &[String]) -> Result<Self, String> {
        let mut w = PathWeights::default();
        for pair in pairs {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?}: expected name=value"))?;
            let v: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("{pair:?}: the weight must be a number ≥ 0"))?;
            match name.trim() {
                "lexical" => w.lexical = v,
                "vector" => w.vector = v,
                "graph" => w.graph = v,
                "neighbour" | "neighbours" => w.neighbour = v,
                "recency" => w.recency = v,
                "dated" => w.dated = v,
                "current" => w.current = v,
                "hop" => w.hop = v,
                "mention" | "mentions" => w.mention = v,
                "feedback" => w.feedback = v,
                "replies" => w.replies = v,
                "narrow_premise" => w.narrow_premise = v,
                "category" | "categories" => w.category = v,
                "parts" => w.parts = v,
                "quantity" | "quantities" => w.quantity = v,
                "session" | "sessions" => w.session = v,
                "role" | "roles" => w.role = v,
                "who" => w.who = v,
                "person" | "people" => w.person = v,
                other => return Err(format!("unknown path {other:?}")),
            }
        }
        Ok(w)
    }
}

impl PathKind {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            PathKind::Lexical => "lexical",
            PathKind::Vector => "vector",
            PathKind::Graph => "graph",
            PathKind::Neighbour => "neighbour",
            PathKind::Recency => "recency",
            PathKind::Dated => "dated",
            PathKind::Current => "current",
            PathKind::Hop => "hop",
            PathKind::Feedback => "feedback",
            PathKind::Category => "category",
            PathKind::Parts => "parts",
        }
    }
}

/// One path's view of a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathRank {
    /// The path.
    pub path: PathKind,
    /// 1-based rank within the path.
    pub rank: usize,
    /// The path's own score (BM25, cosine, …), when it has one.
    pub score: Option<f64>,
    /// What led there (the hit a neighbour sits next to, the entity a graph
    /// claim is about).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

impl PathRank {
    /// Whether this path hands the candidate a share of another's fused
    /// score rather than ranking it against the question.
    pub fn inherits(&self) -> bool {
        matches!(
            (self.path, self.score),
            (
                PathKind::Neighbour | PathKind::Current | PathKind::Hop,
                Some(_)
            )
        )
    }

    /// What this path adds to the fused score.
    fn share(&self, weights: &PathWeights) -> f64 {
        match (self.path, self.score) {
            // A neighbour inherits a share of the fused score of the hit
            // it sits next to (spreading activation), so it never
            // outranks that hit on the neighbour path alone.
            (PathKind::Neighbour, Some(source)) => weights.neighbour * source,
            // The turn in force inherits the score of the turn it
            // superseded.
            (PathKind::Current, Some(source)) => weights.current * source,
            (PathKind::Hop, Some(source)) => weights.hop * source,
            _ => weights.of(self.path) / (RRF_K + self.rank as f64),
        }
    }
}

/// A multiplier applied after fusion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Boost {
    /// Its name (`named_speaker`, `names_person`, …).
    pub name: String,
    /// The factor.
    pub factor: f64,
    /// Why it applied.
    pub reason: String,
}

/// Why a result ranks where it does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Every path that found it.
    pub paths: Vec<PathRank>,
    /// The fused score before boosts.
    pub rrf: f64,
    /// Boosts applied.
    pub boosts: Vec<Boost>,
    /// The final score.
    pub score: f64,
}

impl Trace {
    /// Records a path's rank, keeping the best rank if the path saw the
    /// candidate twice.
    pub fn add_path(&mut self, path: PathRank) {
        match self.paths.iter_mut().find(|p| p.path == path.path) {
            Some(p) if p.rank <= path.rank => {}
            Some(p) => *p = path,
            None => self.paths.push(path),
        }
    }

    /// Has a path found it?
    pub fn has(&self, path: PathKind) -> bool {
        self.paths.iter().any(|p| p.path == path)
    }

    /// Adds a boost (once per name).
    pub fn add_boost(&mut self, boost: Boost) {
        if !self.boosts.iter().any(|b| b.name == boost.name) {
            self.boosts.push(boost);
        }
    }

    /// Computes `rrf` and `score` from the paths and boosts.
    pub fn finish(&mut self, weights: &PathWeights) {
        self.rrf = self.paths.iter().map(|p| p.share(weights)).sum();
        self.score = self.boosts.iter().fold(self.rrf, |s, b| s * b.factor);
    }

    /// The fused score of the paths that matched it on its own: the
    /// paths through which it inherits another candidate's score (a
    /// neighbour, the turn in force, a hop) left out. The turn beside the
    /// best match, lifted by it, does not match the question better than
    /// the turn it borrows from.
    pub fn own_match(&self, weights: &PathWeights) -> f64 {
        self.paths
            .iter()
            .filter(|p| !p.inherits())
            .map(|p| p.share(weights))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: PathKind, rank: usize) -> PathRank {
        PathRank {
            path,
            rank,
            score: None,
            via: None,
        }
    }

    #[test]
    fn its_own_match_leaves_out_what_it_inherits() {
        let w = PathWeights::default();
        let mut t = Trace::default();
        t.add_path(at(PathKind::Lexical, 11));
        t.add_path(PathRank {
            score: Some(0.06),
            ..at(PathKind::Neighbour, 1)
        });
        t.finish(&w);
        let own = 1.0 / 41.0;
        assert!((t.own_match(&w) - own).abs() < 1e-12);
        assert!(t.rrf > own + 0.01, "the neighbour's share counts in rrf");
    }

    #[test]
    fn rrf_sums_weighted_reciprocal_ranks() {
        let mut t = Trace::default();
        t.add_path(at(PathKind::Lexical, 1));
        t.add_path(at(PathKind::Vector, 3));
        t.finish(&PathWeights::default());
        let want = 1.0 / 31.0 + 0.5 / 33.0;
        assert!((t.rrf - want).abs() < 1e-12);
        assert_eq!(t.score, t.rrf);
    }

    #[test]
    fn a_path_keeps_its_best_rank_and_boosts_multiply_once() {
        let mut t = Trace::default();
        t.add_path(at(PathKind::Neighbour, 5));
        t.add_path(at(PathKind::Neighbour, 2));
        t.add_path(at(PathKind::Neighbour, 9));
        let b = Boost {
            name: "named_speaker".into(),
            factor: 1.5,
            reason: "x".into(),
        };
        t.add_boost(b.clone());
        t.add_boost(b);
        t.finish(&PathWeights::default());
        assert_eq!(t.paths.len(), 1);
        assert_eq!(t.paths[0].rank, 2);
        assert!((t.score - 1.5 * 0.5 / 32.0).abs() < 1e-12);
    }

    #[test]
    fn two_paths_beat_one_at_equal_rank() {
        let mut both = Trace::default();
        both.add_path(at(PathKind::Lexical, 4));
        both.add_path(at(PathKind::Vector, 4));
        both.finish(&PathWeights::default());
        let mut one = Trace::default();
        one.add_path(at(PathKind::Lexical, 1));
        one.finish(&PathWeights::default());
        assert!(both.score > one.score);
    }
}
