//! Lexical search: BM25 over node text, each hit with its provenance. The
//! hybrid path (vectors, the graph, fusion, packing) is [`crate::retrieve`].

use kith_core::{NodeType, OwnerId, Role, ScopeId, SessionId, Timestamp};
use kith_store::{LexicalQuery, SearchFilters, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::context::Ctx;
use crate::error::Error;

/// A search: always one owner; every other filter optional.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Whose memory to search.
    pub owner: OwnerId,
    /// Free text.
    pub query: String,
    /// Scope, session, roles, node types, lifecycle and time filters.
    pub filters: SearchFilters,
    /// At most this many hits (default 10).
    pub limit: usize,
}

impl SearchRequest {
    /// A search of `owner`'s memory with default filters.
    pub fn new(owner: &str, query: &str) -> Result<Self, Error> {
        Ok(SearchRequest {
            owner: OwnerId::new(owner)?,
            query: query.to_string(),
            filters: SearchFilters::default(),
            limit: 10,
        })
    }
}

/// Where a hit came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    /// The source event.
    pub event_id: Uuid,
    /// Its session.
    pub session_id: Option<SessionId>,
    /// Its role.
    pub role: Role,
    /// Its speaker.
    pub speaker: Option<String>,
    /// When it was said.
    pub event_time: Option<Timestamp>,
    /// When kith received it.
    pub ingested_at: Timestamp,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// 1-based rank.
    pub rank: usize,
    /// BM25 score (higher is better).
    pub score: f64,
    /// The node found.
    pub node_id: Uuid,
    /// Its type.
    pub node_type: NodeType,
    /// Its scope.
    pub scope: ScopeId,
    /// Its text.
    pub content: String,
    /// Where it came from.
    pub provenance: Provenance,
}

/// BM25 search over node text, filtered by owner and the request's filters.
pub(crate) fn search(ctx: &Ctx<'_>, req: &SearchRequest) -> Result<Vec<SearchHit>, Error> {
    let query = LexicalQuery {
        common_share: None,
        owner: req.owner.clone(),
        text: req.query.clone(),
        filters: req.filters.clone(),
        limit: if req.limit == 0 { 10 } else { req.limit },
    };
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let hits = tx.search_lexical(&query)?;
    let mut out = Vec::with_capacity(hits.len());
    for (i, h) in hits.into_iter().enumerate() {
        // Nodes written by store() always have a source event; a node
        // without one (none exist yet) carries no provenance to show.
        let (Some(event_id), Some(role), Some(ingested_at)) = (h.event_id, h.role, h.ingested_at)
        else {
            continue;
        };
        out.push(SearchHit {
            rank: i + 1,
            score: h.score,
            node_id: h.node_id,
            node_type: h.node_type,
            scope: h.scope,
            content: h.content,
            provenance: Provenance {
                event_id,
                session_id: h.session_id,
                role,
                speaker: h.speaker,
                event_time: h.event_time,
                ingested_at,
            },
        });
    }
    Ok(out)
}
