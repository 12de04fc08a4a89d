//! The main candidate paths — BM25 over node text and the query's
//! embedding against note vectors — with the names of the speakers the
//! question names taken out of the BM25 text; and the recency path.

use std::collections::HashMap;

use kith_core::NodeType;
use kith_store::{
    HitsWithEdges, LexicalHit, LexicalQuery, NodeQuery, Read, StoredEvent, StoredNode, Tx,
    VectorQuery,
};
use uuid::Uuid;

use super::filters::{admitted, vector_filters};
use super::fusion::PathKind;
use super::graph;
use super::pool::{hit_for, path, Pool};
use super::speakers::{self, NamedSpeaker};
use super::RetrieveRequest;
use crate::error::Error;

/// Words that mark a question about what is recent.
const RECENCY_CUES: &[&str] = &[
    "latest",
    "recent",
    "recently",
    "now",
    "current",
    "currently",
    "today",
    "newest",
    "lately",
];

/// What the lexical and vector paths found, before they join the pool.
pub(super) struct MainHits {
    /// BM25 hits, best first.
    pub lexical: Vec<LexicalHit>,
    /// Vector hits, best first.
    pub vector: Vec<LexicalHit>,
    /// The speakers the question names.
    pub named: Vec<NamedSpeaker>,
    /// The text BM25 searched: the query without the named speakers' names
    /// (the whole query when that would leave nothing).
    pub lexical_text: String,
    /// The graph path's entity search for `named` ([`graph::entity_search`])
    /// with the found entities' edges, the nodes at their ends (where its
    /// walk starts) and those nodes' first turns, when the graph path runs.
    pub entities: Option<HitsWithEdges>,
    /// The recency path's newest notes and their turns ([`recency_query`]),
    /// when the query asks about what is recent.
    pub newest: Option<(Vec<StoredNode>, Vec<StoredEvent>)>,
}

/// Runs the lexical and vector searches for `req` (at most `pool_size` hits
/// each), `embedded` being the query's model and vector; with the final
/// lexical search, the later paths' reads that need nothing more than the
/// named speakers: the graph path's entity search with the entities' edges,
/// and the recency path's newest notes (read together: one round trip on a
/// server).
pub(super) fn main_hits(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    embedded: &Option<(String, Vec<f32>)>,
    pool_size: usize,
) -> Result<MainHits, Error> {
    let search = |text: &str| LexicalQuery {
        common_share: None,
        owner: req.owner.clone(),
        text: text.to_string(),
        filters: req.filters.clone(),
        limit: pool_size,
    };
    let lexical = |tx: &mut dyn Tx, text: &str| -> Result<Vec<LexicalHit>, Error> {
        if !req.paths.lexical {
            return Ok(Vec::new());
        }
        Ok(tx.search_lexical(&search(text))?)
    };
    let vector = match embedded {
        Some((model, vector)) => tx.search_vector(&VectorQuery {
            owner: req.owner.clone(),
            model: model.clone(),
            vector: vector.clone(),
            filters: vector_filters(&req.filters),
            limit: pool_size,
        })?,
        None => Vec::new(),
    };
    // A speaker's name in the question says whose turns to favour (the
    // boost); as a search word it mostly finds the other side greeting
    // them ("Hey Caroline!"), so BM25 runs without it. The speakers come
    // from the vector hits (a second BM25 query costs more), or from a
    // first BM25 pass when there are none.
    let mut first_pass = None;
    let named = if !req.paths.speaker_boost {
        Vec::new()
    } else if vector.is_empty() {
        let hits = lexical(tx, &req.query)?;
        let named = speakers::named_speakers(&req.query, hits.iter());
        first_pass = Some(hits);
        named
    } else {
        speakers::named_speakers(&req.query, vector.iter())
    };
    let query_words = words(&req.query);
    let name_words = speakers::name_words(&named, &query_words);
    let unnamed = |w: &String| !name_words.contains(w);
    let lexical_text = if named.is_empty() || !query_words.iter().any(unnamed) {
        req.query.clone()
    } else {
        // The store's own reading of the words, so that a contraction's
        // tail ("Caroline's" → "s") stays left out once the name is.
        let rest: Vec<String> = kith_store::words::query_words(&req.query)
            .into_iter()
            .filter(unnamed)
            .collect();
        rest.join(" ")
    };
    // The first pass stands when it searched the same text.
    let search_again = req.paths.lexical && !(first_pass.is_some() && named.is_empty());
    let mut reads = Vec::new();
    if search_again {
        reads.push(Read::Search(search(&lexical_text)));
    }
    if req.paths.graph {
        reads.push(Read::SearchNodesWithEdges(graph::entity_search(
            req, &named,
        )));
    }
    let recent = req.paths.recency && asks_about_recent(&req.query);
    if recent {
        reads.push(Read::NodesWithEvidence(recency_query(req)));
    }
    let mut answers = tx.read_together(&reads)?.into_iter();
    let lexical = if search_again {
        answers.next().map(|a| a.into_hits()).unwrap_or_default()
    } else {
        first_pass.unwrap_or_default()
    };
    let entities = req
        .paths
        .graph
        .then(|| answers.next().map(|a| a.into_hits_with_edges()))
        .flatten();
    let newest = recent
        .then(|| answers.next().map(|a| a.into_nodes_with_evidence()))
        .flatten();
    Ok(MainHits {
        lexical,
        vector,
        named,
        lexical_text,
        entities,
        newest,
    })
}

impl MainHits {
    /// Adds the lexical, then the vector hits to `pool` (entities only when
    /// the request asks for them), and gives back the named speakers.
    pub(super) fn add_to(self, req: &RetrieveRequest, pool: &mut Pool) -> Vec<NamedSpeaker> {
        let wants_entities = req.filters.node_types.contains(&NodeType::Entity);
        let keep = |h: &LexicalHit| wants_entities || h.node_type != NodeType::Entity;
        for (i, h) in self.lexical.into_iter().filter(keep).enumerate() {
            let score = Some(h.score);
            pool.add(h, path(PathKind::Lexical, i, score, None));
        }
        for (i, h) in self.vector.into_iter().filter(keep).enumerate() {
            let score = Some(h.score);
            pool.add(h, path(PathKind::Vector, i, score, None));
        }
        self.named
    }
}

/// Lower-cased words of letters and digits.
pub(super) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether the query asks about what is recent ("latest", "now", …).
pub(super) fn asks_about_recent(query: &str) -> bool {
    words(query)
        .iter()
        .any(|w| RECENCY_CUES.contains(&w.as_str()))
}

/// The recency path's read: the newest notes, with their source events.
fn recency_query(req: &RetrieveRequest) -> NodeQuery {
    NodeQuery {
        owner: Some(req.owner.clone()),
        scope: req.filters.scope.clone(),
        node_types: vec![NodeType::Note],
        newest_first: true,
        limit: 10,
        ..NodeQuery::default()
    }
}

/// The newest notes, for questions about what is recent: `read` when they
/// were read already ([`MainHits::newest`]), else read here.
pub(super) fn recency_candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    read: Option<(Vec<StoredNode>, Vec<StoredEvent>)>,
    pool: &mut Pool,
) -> Result<(), Error> {
    // With their source events, in one read (one round trip on a server).
    let (newest, events) = match read {
        Some(found) => found,
        None => tx.list_nodes_with_evidence(&recency_query(req))?,
    };
    let events: HashMap<Uuid, StoredEvent> = events.into_iter().map(|e| (e.event.id, e)).collect();
    let mut rank = 0;
    for s in newest {
        let event = s
            .node
            .evidence_refs
            .first()
            .and_then(|id| events.get(id))
            .cloned();
        if !admitted(&req.filters, &s.node, event.as_ref()) {
            continue;
        }
        pool.add(
            hit_for(&s.node, event.as_ref()),
            path(PathKind::Recency, rank, None, None),
        );
        rank += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recency_cues_are_words() {
        assert!(asks_about_recent("Where does Maya work now?"));
        assert!(!asks_about_recent("Where does Maya know people from?"));
    }
}
