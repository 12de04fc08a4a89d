//! Retrieval: hybrid candidates, fusion with a trace, token-budget packing
//! and receipts.
//!
//! `retrieve(query, budget)` runs, in one read transaction:
//!
//! 1. **Lexical**: BM25 over node text.
//! 2. **Vector**: the query's embedding against note vectors (exact scan),
//!    when the memory has an embedder.
//! 3. **Graph**: entities the query names (whole words, case-insensitive),
//!    the active claims they have (HAS_FACT), and the memories the linking
//!    pass linked to them (MENTIONS with basis `entity_linking`), ranked by
//!    how many query words each shares.
//! 4. **Dated**: what was said about the times the query names, relative
//!    dates resolved on both sides ([`when`], [`spans`]); a question that
//!    asks when favours turns that state a time.
//! 5. **Fusion**: weighted reciprocal rank fusion ([`fusion`]).
//! 6. **Neighbours**: the turns just before and after each of the best
//!    hits, in their session (an answer often spans two turns).
//! 7. **Recency**: the newest notes, only when the query asks about what is
//!    recent ("latest", "now", "currently", …).
//! 8. **Current facts**: for a present-tense question, turns whose claim
//!    was superseded rank below the turn in force ([`current`]).
//! 9. **Speaker boost**: when the query names someone who speaks in the
//!    candidates (as people say names: [`names`]), their turns are
//!    multiplied by [`NAMED_SPEAKER_BOOST`] — kith knows who said what —
//!    and strong evidence by someone else keeps its place ([`speakers`]).
//!
//! Results are one per source event (a claim and its turn are one piece of
//! evidence; the others are listed in `also`). Every result has a trace.
//! The packed context ([`pack`]) never exceeds the token budget. Unless
//! asked not to, each retrieval is journaled as a `RETRIEVAL_RECORDED`
//! receipt whose id is the request id (`kith retrievals show ID`).
//!
//! Nothing crosses owners: every store call takes the request's owner.

mod current;
mod dates;
pub mod fusion;
mod graph;
mod names;
pub mod retention;
mod spans;
mod speakers;
mod when;

pub use dates::month_number;
pub mod pack;

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use kith_core::{
    ids, NodeType, Operation, OperationKind, OwnerId, Role, ScopeId, SessionId, Timestamp,
};
use kith_store::{
    LexicalHit, LexicalQuery, NodeQuery, SearchFilters, StoredEvent, Tx, TxMode, VectorQuery,
};
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use crate::error::Error;
use crate::memory::Memory;
use crate::search::Provenance;
use fusion::{PathKind, PathRank, PathWeights, Trace};
use pack::{PackItem, PackedLine};

/// The factor for turns by a speaker the query names.
pub const NAMED_SPEAKER_BOOST: f64 = 2.0;
/// Default token budget.
pub const DEFAULT_TOKEN_BUDGET: usize = 1024;
/// How much more of a question's score the turn after it inherits.
const ANSWER_SHARE: f64 = 1.5;
/// How many of the best fused hits bring their session neighbours.
const NEIGHBOUR_SOURCES: usize = 10;
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

/// Which candidate paths and boosts run (all by default; benchmarks turn
/// them off one at a time to measure each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetrievePaths {
    /// BM25.
    pub lexical: bool,
    /// Embeddings.
    pub vector: bool,
    /// Claims of entities the query names.
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
    /// The packed context's maximum size in [`pack::TOKENIZER`] tokens.
    pub token_budget: usize,
    /// Structured results to return (default 10).
    pub limit: usize,
    /// Paths and boosts to run.
    pub paths: RetrievePaths,
    /// Each path's weight in fusion.
    pub weights: PathWeights,
    /// Journal a receipt (default true).
    pub record: bool,
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
        })
    }
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievedItem {
    /// 1-based rank.
    pub rank: usize,
    /// The best node of this evidence.
    pub node_id: Uuid,
    /// Its type.
    pub node_type: NodeType,
    /// Its scope.
    pub scope: ScopeId,
    /// Its text.
    pub content: String,
    /// Where it came from.
    pub provenance: Provenance,
    /// Other nodes of the same event that were found too.
    pub also: Vec<Uuid>,
    /// Why it ranks here.
    pub trace: Trace,
}

/// Milliseconds spent per stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timings {
    /// Embedding the query.
    pub embed_ms: f64,
    /// Candidates and fusion.
    pub search_ms: f64,
    /// Packing.
    pub pack_ms: f64,
    /// Writing the receipt.
    pub record_ms: f64,
    /// Everything.
    pub total_ms: f64,
}

/// What `retrieve` returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retrieval {
    /// The request id; the receipt's id when one was recorded.
    pub request_id: Uuid,
    /// Whether a receipt was journaled.
    pub recorded: bool,
    /// The query.
    pub query: String,
    /// Ranked evidence.
    pub results: Vec<RetrievedItem>,
    /// The packed context block.
    pub context: String,
    /// Its size in tokens.
    pub tokens: usize,
    /// The budget it had.
    pub token_budget: usize,
    /// The tokenizer both are counted with.
    pub tokenizer: &'static str,
    /// The packed lines.
    pub packed: Vec<PackedLine>,
    /// Candidates that did not fit.
    pub left_out: Vec<Uuid>,
    /// The embedding model used for the vector path, if any.
    pub embedding_model: Option<String>,
    /// Where the time went.
    pub timings: Timings,
}

/// A candidate under construction.
struct Candidate {
    hit: LexicalHit,
    trace: Trace,
    order: usize,
}

/// Candidates by node id, remembering first-seen order for stable ties.
#[derive(Default)]
struct Pool {
    by_id: HashMap<Uuid, Candidate>,
}

impl Pool {
    fn add(&mut self, hit: LexicalHit, path: PathRank) {
        let order = self.by_id.len();
        self.by_id
            .entry(hit.node_id)
            .or_insert_with(|| Candidate {
                hit,
                trace: Trace::default(),
                order,
            })
            .trace
            .add_path(path);
    }

    /// Candidates best first.
    fn ranked(&mut self, weights: &PathWeights) -> Vec<&Candidate> {
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

impl Memory {
    /// Finds the evidence for `req.query` and packs it into the budget.
    pub fn retrieve(&self, req: &RetrieveRequest) -> Result<Retrieval, Error> {
        let started = Instant::now();
        if req.token_budget == 0 {
            return Err(Error::Request("token_budget must be at least 1".into()));
        }
        let limit = if req.limit == 0 { 10 } else { req.limit };
        let pool_size = (limit * 2).max(50);
        let mut timings = Timings::default();

        // The query's embedding, before the transaction.
        let t = Instant::now();
        let embedded = match (self.checked_embedder()?, req.paths.vector) {
            (Some(e), true) if !req.query.trim().is_empty() => {
                let v = crate::embedding::embed_checked(e, &[req.query.as_str()])?;
                Some((
                    e.model_id().to_string(),
                    v.into_iter().next().unwrap_or_default(),
                ))
            }
            _ => None,
        };
        timings.embed_ms = ms(t);

        let t = Instant::now();
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        let mut pool = Pool::default();
        let wants_entities = req.filters.node_types.contains(&NodeType::Entity);
        let keep = |h: &LexicalHit| wants_entities || h.node_type != NodeType::Entity;

        let lexical = |tx: &mut dyn Tx, text: &str| -> Result<Vec<LexicalHit>, Error> {
            if !req.paths.lexical {
                return Ok(Vec::new());
            }
            Ok(tx.search_lexical(&LexicalQuery {
                owner: req.owner.clone(),
                text: text.to_string(),
                filters: req.filters.clone(),
                limit: pool_size,
            })?)
        };
        let vector_filters = vector_filters(&req.filters);
        let vector_hits = match &embedded {
            Some((model, vector)) => tx.search_vector(&VectorQuery {
                owner: req.owner.clone(),
                model: model.clone(),
                vector: vector.clone(),
                filters: vector_filters.clone(),
                limit: pool_size,
            })?,
            None => Vec::new(),
        };
        // A speaker's name in the question says whose turns to favour (the
        // boost below); as a search word it mostly finds the other side
        // greeting them ("Hey Caroline!"), so BM25 runs without it. The
        // speakers come from the vector hits (a second BM25 query costs
        // more), or from a first BM25 pass when there are none.
        let mut first_pass = None;
        let named = if !req.paths.speaker_boost {
            Vec::new()
        } else if vector_hits.is_empty() {
            let hits = lexical(&mut *tx, &req.query)?;
            let named = speakers::named_speakers(&req.query, hits.iter());
            first_pass = Some(hits);
            named
        } else {
            speakers::named_speakers(&req.query, vector_hits.iter())
        };
        let query_words = words(&req.query);
        let name_words = speakers::name_words(&named, &query_words);
        let rest: Vec<String> = query_words
            .into_iter()
            .filter(|w| !name_words.contains(w))
            .collect();
        let lexical_text = if named.is_empty() || rest.is_empty() {
            req.query.clone()
        } else {
            rest.join(" ")
        };
        let lexical_hits = match first_pass {
            Some(hits) if named.is_empty() => hits,
            _ => lexical(&mut *tx, &lexical_text)?,
        };
        let named_dates = dates::mentioned_dates(&req.query);
        if req.paths.dated {
            let asked = when::question_spans(&mut *tx, req)?;
            when::dated_candidates(&mut *tx, req, &asked, &lexical_text, &embedded, &mut pool)?;
        }
        for (i, h) in lexical_hits.into_iter().filter(keep).enumerate() {
            let score = Some(h.score);
            pool.add(h, path(PathKind::Lexical, i, score, None));
        }
        for (i, h) in vector_hits.into_iter().filter(keep).enumerate() {
            let score = Some(h.score);
            pool.add(h, path(PathKind::Vector, i, score, None));
        }
        let mut named = named;
        let mut superseded = current::SupersededEvidence::default();
        if req.paths.graph {
            let found = graph::candidates(&mut *tx, req, &named, &mut pool)?;
            if req.paths.speaker_boost {
                speakers::add_reached(&mut named, &found.people, &pool);
            }
            superseded = found.superseded;
        }
        if req.paths.neighbours {
            let sources: Vec<Source> = pool
                .ranked(&req.weights)
                .into_iter()
                .take(NEIGHBOUR_SOURCES)
                .map(|c| Source {
                    node_id: c.hit.node_id,
                    event_id: c.hit.event_id,
                    session: c.hit.session_id.clone(),
                    score: c.trace.rrf,
                    asks: c.hit.content.contains('?'),
                    voice: (c.hit.speaker.clone(), c.hit.role),
                })
                .collect();
            neighbour_candidates(&mut *tx, req, &sources, &mut pool)?;
        }
        if req.paths.recency && asks_about_recent(&req.query) {
            recency_candidates(&mut *tx, req, &mut pool)?;
        }
        if !superseded.is_empty()
            && current::asks_about_present(&req.query, !named_dates.is_empty())
        {
            current::put_current_first(&mut *tx, req, &superseded, &mut pool)?;
        }
        if req.paths.dated {
            when::boost_stated_times(&req.query, &mut pool);
        }
        if !named.is_empty() {
            speakers::boost(&named, &mut pool, &req.weights);
        }
        // A claim the owner corrected says what its message does not: it
        // gets a packed line of its own instead of folding into the
        // message's (which would show the old value only).
        let corrected = owner_corrected(&mut *tx, &req.owner, &pool)?;
        drop(tx);

        // One result per source event.
        let ranked = pool.ranked(&req.weights);
        let mut results: Vec<RetrievedItem> = Vec::new();
        let mut by_event: HashMap<Uuid, usize> = HashMap::new();
        let mut items: Vec<PackItem> = Vec::new();
        for c in &ranked {
            let h = &c.hit;
            if items.len() < pool_size {
                items.push(PackItem {
                    node_id: h.node_id,
                    event_id: h.event_id.filter(|_| !corrected.contains(&h.node_id)),
                    when: h.event_time.or(h.ingested_at),
                    speaker: h.speaker.clone(),
                    role: h.role,
                    text: h.content.clone(),
                    mark: superseded.mark(h.event_id),
                });
            }
            let (Some(event_id), Some(role), Some(ingested_at)) =
                (h.event_id, h.role, h.ingested_at)
            else {
                continue;
            };
            if let Some(&i) = by_event.get(&event_id) {
                results[i].also.push(h.node_id);
                continue;
            }
            if results.len() >= limit {
                continue;
            }
            by_event.insert(event_id, results.len());
            results.push(RetrievedItem {
                rank: results.len() + 1,
                node_id: h.node_id,
                node_type: h.node_type,
                scope: h.scope.clone(),
                content: h.content.clone(),
                provenance: Provenance {
                    event_id,
                    session_id: h.session_id.clone(),
                    role,
                    speaker: h.speaker.clone(),
                    event_time: h.event_time,
                    ingested_at,
                },
                also: Vec::new(),
                trace: c.trace.clone(),
            });
        }
        timings.search_ms = ms(t);

        let t = Instant::now();
        let packed = pack::pack(&items, req.token_budget);
        timings.pack_ms = ms(t);

        let mut out = Retrieval {
            // v7: the id carries its time, so a receipt that expired can
            // be told from one never recorded.
            request_id: Uuid::now_v7(),
            recorded: false,
            query: req.query.clone(),
            results,
            context: packed.context,
            tokens: packed.tokens,
            token_budget: req.token_budget,
            tokenizer: pack::TOKENIZER,
            packed: packed.lines,
            left_out: packed.left_out,
            embedding_model: embedded.map(|(m, _)| m),
            timings,
        };
        if req.record {
            let t = Instant::now();
            self.record_receipt(req, &out)?;
            out.recorded = true;
            out.timings.record_ms = ms(t);
        }
        out.timings.total_ms = ms(started);
        Ok(out)
    }

    fn record_receipt(&self, req: &RetrieveRequest, r: &Retrieval) -> Result<(), Error> {
        let f = &req.filters;
        let payload = json!({
            "query": req.query,
            "filters": {
                "scope": f.scope.as_ref().map(|s| s.as_str()),
                "session": f.session.as_ref().map(|s| s.as_str()),
                "roles": f.roles.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
                "node_types": f.node_types.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
                "lifecycles": f.lifecycles.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
                "time_from": f.time_from.map(|t| t.to_rfc3339()),
                "time_to": f.time_to.map(|t| t.to_rfc3339()),
                "as_of": f.as_of.map(|t| t.to_rfc3339()),
            },
            "paths": req.paths,
            "weights": req.weights,
            "limit": req.limit,
            "token_budget": r.token_budget,
            "tokenizer": r.tokenizer,
            "tokens": r.tokens,
            "embedding_model": r.embedding_model,
            "results": r.results.iter().map(|i| json!({
                "rank": i.rank,
                "node_id": i.node_id,
                "event_id": i.provenance.event_id,
                "speaker": i.provenance.speaker,
                "content": i.content,
                "also": i.also,
                "trace": i.trace,
            })).collect::<Vec<_>>(),
            "packed": r.packed.iter().map(|l| json!({
                "node_id": l.node_id,
                "event_id": l.event_id,
                "folded": l.folded,
                "tokens": l.tokens,
                "truncated": l.truncated,
                "text": l.text,
            })).collect::<Vec<_>>(),
            "left_out": r.left_out,
            "timings": r.timings,
        });
        // The checksum is taken over the value as it reads back.
        let payload = crate::organize::as_read_back(payload)?;
        let scope = req.filters.scope.clone().unwrap_or_else(ScopeId::personal);
        let now = Timestamp::now();
        let op = Operation::new(
            r.request_id,
            OperationKind::RetrievalRecorded,
            req.owner.clone(),
            scope,
            None,
            payload,
            now,
        );
        let mut tx = self.store_backend().begin(TxMode::Write)?;
        tx.append_operation(&op)?;
        // Retention rides on the write (no daemon): a few expired receipts
        // of this owner go in the same transaction.
        retention::expire(
            &mut *tx,
            &req.owner,
            &self.retention,
            now,
            retention::ON_WRITE_BATCH,
        )?;
        tx.commit()?;
        Ok(())
    }

    /// A retrieval receipt by id, only if it belongs to `owner`.
    pub fn retrieval_receipt(&self, owner: &OwnerId, id: Uuid) -> Result<Operation, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        match tx.get_operation(id)? {
            Some(op) if &op.owner_id == owner && op.kind == OperationKind::RetrievalRecorded => {
                Ok(op)
            }
            // Another owner's id answers exactly like a missing one.
            _ => match retention::expired_through(&mut *tx, owner)? {
                Some(through) if retention::expired_id(id, Some(through)) => {
                    Err(Error::ReceiptExpired {
                        id,
                        owner: owner.clone(),
                        expired_through: through,
                    })
                }
                _ => Err(Error::NotFound {
                    what: format!("retrieval {id} of owner {owner}"),
                }),
            },
        }
    }

    /// An owner's retrieval receipts, oldest first (at most `limit`; 0: all).
    pub fn retrieval_receipts(
        &self,
        owner: &OwnerId,
        limit: usize,
    ) -> Result<Vec<Operation>, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        Ok(tx.list_operations(&kith_store::OperationQuery {
            owner: owner.clone(),
            kind: Some(OperationKind::RetrievalRecorded),
            target_id: None,
            limit,
        })?)
    }
}

/// The candidates that are claims with a value the owner corrected.
fn owner_corrected(tx: &mut dyn Tx, owner: &OwnerId, pool: &Pool) -> Result<HashSet<Uuid>, Error> {
    let ids: Vec<Uuid> = pool
        .by_id
        .values()
        .filter(|c| !matches!(c.hit.node_type, NodeType::Note | NodeType::Entity))
        .map(|c| c.hit.node_id)
        .collect();
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    Ok(tx
        .get_owned_nodes(owner, &ids)?
        .iter()
        .filter(|n| crate::claims::is_owner_corrected(n))
        .map(|n| n.id)
        .collect())
}

/// The filters of a vector search. Entities have vectors for the
/// organizer's alias proposals; a question's vector hits are memories
/// unless entities are asked for, so entity vectors never take a note's
/// place in the pool.
fn vector_filters(filters: &SearchFilters) -> SearchFilters {
    let mut f = filters.clone();
    if f.node_types.is_empty() {
        f.node_types = NodeType::ALL
            .iter()
            .copied()
            .filter(|t| *t != NodeType::Entity)
            .collect();
    }
    f
}

fn max_time(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a.unix_millis() >= b.unix_millis() {
            a
        } else {
            b
        }),
        (a, b) => a.or(b),
    }
}

fn min_time(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a.unix_millis() <= b.unix_millis() {
            a
        } else {
            b
        }),
        (a, b) => a.or(b),
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

fn path(kind: PathKind, index: usize, score: Option<f64>, via: Option<String>) -> PathRank {
    PathRank {
        path: kind,
        rank: index + 1,
        score,
        via,
    }
}

/// Lower-cased words of letters and digits.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn asks_about_recent(query: &str) -> bool {
    words(query)
        .iter()
        .any(|w| RECENCY_CUES.contains(&w.as_str()))
}

/// A hit for a node, with provenance from its source event.
fn hit_for(node: &kith_core::Node, event: Option<&StoredEvent>) -> LexicalHit {
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

/// Whether a node found outside the store's own search passes the request's
/// filters (the lexical and vector paths filter in the store).
fn passes(node: &kith_core::Node, event: Option<&StoredEvent>, f: &SearchFilters) -> bool {
    let active_then = match f.as_of {
        Some(t) => {
            node.created_at.unix_millis() <= t.unix_millis()
                && (node.lifecycle.is_active() || node.updated_at.unix_millis() > t.unix_millis())
        }
        None => node.lifecycle.is_active(),
    };
    let lifecycle_ok = if f.lifecycles.is_empty() {
        active_then
    } else {
        f.lifecycles.contains(&node.lifecycle)
    };
    let effective = event.map(|e| e.event.effective_time().unix_millis());
    lifecycle_ok
        && f.scope.as_ref().is_none_or(|s| s == &node.scope)
        && f.session
            .as_ref()
            .is_none_or(|s| event.and_then(|e| e.event.session_id.as_ref()) == Some(s))
        && (f.roles.is_empty() || event.is_some_and(|e| f.roles.contains(&e.event.role)))
        && (f.node_types.is_empty() || f.node_types.contains(&node.node_type))
        && f.time_from
            .is_none_or(|t| effective.is_some_and(|ms| ms >= t.unix_millis()))
        && f.time_to
            .is_none_or(|t| effective.is_some_and(|ms| ms < t.unix_millis()))
}

/// A strong hit whose session neighbours join the candidates.
struct Source {
    node_id: Uuid,
    event_id: Option<Uuid>,
    session: Option<SessionId>,
    /// Its fused score before boosts.
    score: f64,
    /// Whether it asks something (its next turn likely answers).
    asks: bool,
    /// Who said it, in which role.
    voice: (Option<String>, Option<Role>),
}

/// The turns before and after each source hit in its session, when someone
/// else said them.
fn neighbour_candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    sources: &[Source],
    pool: &mut Pool,
) -> Result<(), Error> {
    // Every source's session in one call (one round trip on a server).
    let mut names: Vec<SessionId> = Vec::new();
    for s in sources.iter().filter(|s| s.event_id.is_some()) {
        if let Some(session) = &s.session {
            if !names.contains(session) {
                names.push(session.clone());
            }
        }
    }
    let mut sessions: HashMap<SessionId, Vec<StoredEvent>> =
        names.iter().map(|s| (s.clone(), Vec::new())).collect();
    for e in tx.list_session_events(&req.owner, &names, 5_000)? {
        if let Some(list) = e
            .event
            .session_id
            .as_ref()
            .and_then(|s| sessions.get_mut(s))
        {
            list.push(e);
        }
    }
    // (source index, session, position of the neighbour, share)
    let mut wanted: Vec<(usize, SessionId, usize, f64)> = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let (Some(event_id), Some(session)) = (&source.event_id, &source.session) else {
            continue;
        };
        let events = &sessions[session];
        let Some(at) = events.iter().position(|e| e.event.id == *event_id) else {
            continue;
        };
        // The turn after a question is likely its answer.
        let after = if source.asks { ANSWER_SHARE } else { 1.0 };
        let around = [(at.checked_sub(1), 1.0), (Some(at + 1), after)];
        for (j, share) in around {
            let Some(j) = j else { continue };
            let Some(e) = events.get(j) else { continue };
            // Only a reply, or what the hit replies to: the same voice
            // again (a user's next message to an assistant whose turns are
            // not stored, say) is a new topic as often as not.
            let voice = (
                e.event.speaker.as_ref().map(|s| s.as_str().to_string()),
                Some(e.event.role),
            );
            if voice != source.voice {
                wanted.push((i, session.clone(), j, share));
            }
        }
    }
    // Every neighbour's note in one call (one round trip on a server).
    let note_ids: Vec<Uuid> = wanted
        .iter()
        .map(|(_, session, j, _)| ids::note_node_id(sessions[session][*j].event.id))
        .collect();
    let notes: HashMap<Uuid, kith_core::Node> = tx
        .get_owned_nodes(&req.owner, &note_ids)?
        .into_iter()
        .map(|n| (n.id, n))
        .collect();
    for ((i, session, j, share), note_id) in wanted.into_iter().zip(note_ids) {
        let e = &sessions[&session][j];
        let source = &sources[i];
        let Some(note) = notes.get(&note_id) else {
            continue;
        };
        if note.owner_id != req.owner || !passes(note, Some(e), &req.filters) {
            continue;
        }
        if req.filters.node_types.is_empty() && note.node_type == NodeType::Entity {
            continue;
        }
        let hit = hit_for(note, Some(e));
        pool.add(
            hit,
            path(
                PathKind::Neighbour,
                i,
                Some(source.score * share),
                Some(format!("node {}", source.node_id)),
            ),
        );
    }
    Ok(())
}

/// The newest notes, for questions about what is recent.
fn recency_candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    pool: &mut Pool,
) -> Result<(), Error> {
    let newest = tx.list_nodes(&NodeQuery {
        owner: Some(req.owner.clone()),
        scope: req.filters.scope.clone(),
        node_types: vec![NodeType::Note],
        newest_first: true,
        limit: 10,
        ..NodeQuery::default()
    })?;
    // Their source events in one read.
    let firsts: Vec<Uuid> = newest
        .iter()
        .filter_map(|s| s.node.evidence_refs.first().copied())
        .collect();
    let events: HashMap<Uuid, StoredEvent> = tx
        .get_events(&req.owner, &firsts)?
        .into_iter()
        .map(|e| (e.event.id, e))
        .collect();
    let mut rank = 0;
    for s in newest {
        let event = s
            .node
            .evidence_refs
            .first()
            .and_then(|id| events.get(id))
            .cloned();
        if !passes(&s.node, event.as_ref(), &req.filters) {
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
