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
//!    asks when favours turns that state a time, one that asks how many
//!    or how much those that state a figure ([`quantities`]).
//! 5. **Fusion**: weighted reciprocal rank fusion ([`fusion`]); the
//!    candidates can be ranked again by the best hit's words
//!    ([`feedback`]), one more path.
//! 6. **Neighbours**: the turns just before and after each of the best
//!    hits, in their session (an answer often spans two turns).
//!    Then hops from the best hits ([`expand`]): their linked entities or
//!    the names they mention, and replies to what those reach.
//! 7. **Recency**: the newest notes, only when the query asks about what is
//!    recent ("latest", "now", "currently", …); with a present cue, also
//!    the newest turn in which the best match's speaker names its names
//!    again ([`later`], what was said since).
//!    Then the **session prior** ([`session_prior`]): a turn is lifted by
//!    how well its session's best turn matched, so the rest of the sitting
//!    where the evidence is (replies, the turn two later) gains on turns
//!    elsewhere that only share a word.
//! 8. **Current facts**: for a present-tense question, turns whose claim
//!    was superseded rank below the turn in force ([`current`]).
//! 9. **Speaker boost**: when the query names someone who speaks in the
//!    candidates (as people say names: [`names`]), their turns are
//!    multiplied by [`NAMED_SPEAKER_BOOST`] — kith knows who said what —
//!    and strong evidence by someone else keeps its place ([`speakers`]);
//!    when the question's words point to someone it does not name
//!    ([`premise`]), all of that person's turns keep their place. The best
//!    match before boosts and the vector path's first hit stay within the
//!    first 10 ([`pool`]). A question to the assistant that names nobody
//!    favours the turns of the role it asks for: the user's for "What did
//!    I say…", the assistant's for "What did you suggest…" ([`asker`]);
//!    one that asks who someone is, the turns that introduce them
//!    ("my friend Kofi", [`who`]).
//!
//! Results are one per source event (a claim and its turn are one piece of
//! evidence; the others are listed in `also`). Every result has a trace.
//! The packed context ([`pack`]) never exceeds the token budget. Unless
//! asked not to, each retrieval is journaled as a `RETRIEVAL_RECORDED`
//! receipt whose id is the request id (`kith retrievals show ID`).
//!
//! Nothing crosses owners: every store call takes the request's owner.
//!
//! The stages, in the order [`retrieve`] runs them: [`paths`] (lexical and
//! vector, recency), [`when`] (dated), [`graph`], [`neighbours`],
//! [`session_prior`], [`current`], [`later`], [`who`], [`asker`], [`speakers`], all adding to one candidate [`pool`] under
//! the request's [`filters`]; then [`results`] (one per source event),
//! [`pack`] and [`receipt`].

mod ahead;
mod asker;
mod by_id;
mod category;
mod current;
mod dates;
mod expand;
mod feedback;
mod filters;
pub mod fusion;
mod graph;
mod kinds;
mod later;
mod lexicon;
mod mentioned;
mod names;
mod neighbours;
pub mod pack;
mod parts;
mod paths;
mod pool;
mod premise;
mod quantities;
pub(crate) mod receipt;
mod request;
mod results;
pub mod retention;
mod session_prior;
mod spans;
mod speakers;
mod when;
mod who;

pub use dates::month_number;
pub use request::{RetrievePaths, RetrieveRequest};
pub use results::{Retrieval, RetrievedItem, Timings};

use std::collections::HashSet;
use std::time::Instant;

use kith_store::{Tx, TxMode};
use uuid::Uuid;

use crate::context::Ctx;
use crate::error::Error;
use crate::vectors::Vectors;
use current::SupersededEvidence;
use pool::Pool;
use retention::ReceiptRetention;

/// The factor for turns by a speaker the query names.
pub const NAMED_SPEAKER_BOOST: f64 = 2.0;
/// Default token budget.
pub const DEFAULT_TOKEN_BUDGET: usize = 1024;

/// Finds the evidence for `req.query` and packs it into the budget
/// ([`crate::Memory::retrieve`]); journals a receipt under `retention`
/// unless the request says not to.
pub(crate) fn retrieve(
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    retention: &ReceiptRetention,
    req: &RetrieveRequest,
) -> Result<Retrieval, Error> {
    let started = Instant::now();
    if req.token_budget == 0 {
        return Err(Error::Request("token_budget must be at least 1".into()));
    }
    let limit = if req.limit == 0 { 10 } else { req.limit };
    let pool_size = (limit * 2).max(50);
    let mut timings = Timings::default();

    // The query's embedding, before the transaction.
    let t = Instant::now();
    let embedded = embed_query(ctx, vectors, req)?;
    timings.embed_ms = ms(t);

    let t = Instant::now();
    let mut found = candidates(ctx, req, &embedded, pool_size)?;
    let ranked = found.pool.ranked_for_results(&req.weights);
    let (results, items) = results::one_per_event(
        &ranked,
        limit,
        pool_size,
        &found.corrected,
        &found.superseded,
    );
    timings.search_ms = ms(t);

    let t = Instant::now();
    let packed = pack::pack(&items, req.token_budget);
    timings.pack_ms = ms(t);

    let mut out = Retrieval {
        // v7: the id carries its time, so a receipt that expired can be
        // told from one never recorded.
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
        receipt::record(ctx, retention, req, &out)?;
        out.recorded = true;
        out.timings.record_ms = ms(t);
    }
    out.timings.total_ms = ms(started);
    Ok(out)
}

/// What the candidate stage leaves for the results.
struct Found {
    /// Every candidate, with its trace.
    pool: Pool,
    /// Evidence whose claim was superseded (marked when packed).
    superseded: SupersededEvidence,
    /// Claims whose value the owner corrected (packed on their own line).
    corrected: HashSet<Uuid>,
}

/// Every candidate path, then every boost, in one read transaction: each
/// stage adds to or re-scores the pool the earlier ones left (the order
/// matters: ties rank in first-found order, and the neighbour path starts
/// from the best candidates so far).
fn candidates(
    ctx: &Ctx<'_>,
    req: &RetrieveRequest,
    embedded: &Option<(String, Vec<f32>)>,
    pool_size: usize,
) -> Result<Found, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let tx: &mut dyn Tx = &mut *tx;
    let mut pool = Pool::default();
    let mut main = paths::main_hits(tx, req, embedded, pool_size)?;
    if req.paths.dated {
        let asked = when::question_spans(tx, req)?;
        when::dated_candidates(tx, req, &asked, &main.lexical_text, embedded, &mut pool)?;
    }
    let lexical_text = main.lexical_text.clone();
    // Read with the lexical search, used at their paths' turns.
    let (entities, newest) = (main.entities.take(), main.newest.take());
    let mut named = main.add_to(req, &mut pool);
    category::candidates(tx, req, &named, &mut pool)?;
    parts::candidates(tx, req, &mut pool)?;
    let mut superseded = SupersededEvidence::default();
    let mut named_people = Vec::new();
    if req.paths.graph {
        let found = graph::candidates(tx, req, &named, entities, &mut pool)?;
        if req.paths.speaker_boost {
            speakers::add_reached(&mut named, &found.people, &pool);
        }
        superseded = found.superseded;
        named_people = found.named_people;
    }
    feedback::rerank(req, &lexical_text, &mut pool);
    // What was said since, the expansion's links and the pool's claims are
    // read with the neighbours' sessions, and used where they still cover
    // their stage.
    let said_since = later::plan(req, &mut pool);
    let mut read_ahead = ahead::Ahead::default();
    if req.paths.neighbours {
        let sources = neighbours::sources(&mut pool, &req.weights);
        let reads = ahead::reads(req, &mut pool, said_since.as_ref());
        let answers = neighbours::candidates(tx, req, &sources, &mut pool, &reads)?;
        read_ahead = ahead::found(&reads, answers);
    }
    if req.paths.graph {
        expand::candidates(tx, req, &mut pool, read_ahead.links.as_ref())?;
    }
    if req.paths.recency && paths::asks_about_recent(&req.query) {
        paths::recency_candidates(tx, req, newest, &mut pool)?;
    }
    if let Some(said_since) = &said_since {
        later::bring_in(tx, said_since, read_ahead.later.take(), &mut pool)?;
    }

    // Boosts.
    session_prior::lift(&req.query, &req.weights, &mut pool);
    let names_a_date = !dates::mentioned_dates(&req.query).is_empty();
    if !superseded.is_empty() && current::asks_about_present(&req.query, names_a_date) {
        current::put_current_first(tx, req, &superseded, &mut pool)?;
    }
    if req.paths.dated {
        when::boost_stated_times(&req.query, &mut pool);
    }
    quantities::boost_stated_quantities(&req.query, &req.weights, &mut pool);
    who::boost_introductions(&req.query, &req.weights, &mut pool);
    mentioned::boost_named_people(&named_people, &named, &req.weights, &mut pool);
    if named.is_empty() {
        asker::boost_asked_role(&req.query, &req.weights, &mut pool);
    }
    if !named.is_empty() {
        let misattributed = speakers::check_premise(&req.query, &named, &mut pool, &req.weights);
        speakers::boost(&named, misattributed.as_ref(), &mut pool, &req.weights);
    }
    let corrected = results::owner_corrected(tx, &req.owner, &pool, &read_ahead.claims)?;
    Ok(Found {
        pool,
        superseded,
        corrected,
    })
}

/// The query's embedding and its model, when the memory has an embedder and
/// the vector path runs. The store's model is checked either way: a pack
/// holding another model's vectors is refused whatever the request.
fn embed_query(
    ctx: &Ctx<'_>,
    vectors: &dyn Vectors,
    req: &RetrieveRequest,
) -> Result<Option<(String, Vec<f32>)>, Error> {
    let model = vectors.checked_model()?;
    match (model, ctx.embedder, req.paths.vector) {
        (Some(model), Some(e), true) if !req.query.trim().is_empty() => {
            let v = crate::embedding::embed_checked(e, &[req.query.as_str()])?;
            Ok(Some((model, v.into_iter().next().unwrap_or_default())))
        }
        _ => Ok(None),
    }
}

/// Milliseconds since `since`.
fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
