//! What a retrieval is asked: [`RetrieveRequest`], with the candidate
//! paths and boosts to run ([`RetrievePaths`]).

use kith_core::{OwnerId, Timestamp};
use kith_store::SearchFilters;
use serde::Serialize;

use super::fusion::PathWeights;
use super::DEFAULT_TOKEN_BUDGET;
use crate::error::Error;

/// Which candidate paths and boosts run (all by default; benchmarks turn
/// them off one at a time to measure each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetrievePaths {
    /// BM25.
    pub lexical: bool,
    /// Embeddings.
    pub vector: bool,
    /// Claims of entities the query names, and the hops from the best
    /// hits ([`super::expand`]).
    pub graph: bool,
    /// Session neighbours of the best hits.
    pub neighbours: bool,
    /// Newest notes for recency questions.
    pub recency: bool,
    /// The named-speaker boost.
    pub speaker_boost: bool,
    /// Hits around dates the query names.
    pub dated: bool,
}

impl Default for RetrievePaths {
    fn default() -> Self {
        RetrievePaths {
            lexical: true,
            vector: true,
            graph: true,
            neighbours: true,
            recency: true,
            speaker_boost: true,
            dated: true,
        }
    }
}

impl RetrievePaths {
    /// The names [`RetrievePaths::turn_off`] takes.
    pub const NAMES: &'static str =
        "lexical, vector, graph, neighbours, recency, dated or speaker_boost";

    /// Turns off the path or boost called `name` (`neighbors` is accepted
    /// too); an unknown name is given back as the error.
    pub fn turn_off(&mut self, name: &str) -> Result<(), String> {
        match name.trim() {
            "lexical" => self.lexical = false,
            "vector" => self.vector = false,
            "graph" => self.graph = false,
            "neighbours" | "neighbors" => self.neighbours = false,
            "recency" => self.recency = false,
            "speaker_boost" => self.speaker_boost = false,
            "dated" => self.dated = false,
            other => return Err(other.to_string()),
        }
        Ok(())
    }
}

/// A retrieval: always one owner.
#[derive(Debug, Clone)]
pub struct RetrieveRequest {
    /// Whose memory.
    pub owner: OwnerId,
    /// The question or the agent's current turn.
    pub query: String,
    /// Scope, session, roles, node types, lifecycle, time and `as_of`.
    pub filters: SearchFilters,
    /// The packed context's maximum size in [`super::pack::TOKENIZER`] tokens.
    pub token_budget: usize,
    /// Structured results to return (default 10).
    pub limit: usize,
    /// Paths and boosts to run.
    pub paths: RetrievePaths,
    /// Each path's weight in fusion.
    pub weights: PathWeights,
    /// Journal a receipt (default true).
    pub record: bool,
    /// When the question is asked, for the relative dates it says ("a
    /// month ago", "last Friday"). `None`: the filters' `as_of`, else the
    /// time of the owner's newest event, else the clock
    /// (the dated path). An agent that knows the time of
    /// the conversation it answers in says so here; unlike `as_of` it
    /// hides nothing.
    pub asked_at: Option<Timestamp>,
}

impl RetrieveRequest {
    /// A retrieval of `owner`'s memory with defaults.
    pub fn new(owner: &str, query: &str) -> Result<Self, Error> {
        Ok(RetrieveRequest {
            owner: OwnerId::new(owner)?,
            query: query.to_string(),
            filters: SearchFilters::default(),
            token_budget: DEFAULT_TOKEN_BUDGET,
            limit: 10,
            paths: RetrievePaths::default(),
            weights: PathWeights::default(),
            record: true,
            asked_at: None,
        })
    }
}
