//! The dated path: what was said about the time a question asks about.
//!
//! The question's times ([`spans`]: "on 3 June, 2023", "in May", "last
//! week", "the Sunday before 15 July 2023", "two years ago") are resolved
//! against the time it is asked: the request's `asked_at` or `as_of`, else the time of
//! the owner's newest event (memory's own "now": a conversation imported
//! long after it happened is asked about as of its end), else the clock.
//! Each of the first [`MAX_SPANS`] spans then searches (BM25 and vectors,
//! as the main paths) among turns said from a day before it until it could
//! still be told about ([`Span::told_within_ms`]), and keeps the turns that
//! are about it: said during it, or stating a time in it once their own
//! relative dates are resolved against their own time ("last week", said
//! on 12 June, is 5–11 June). Each kept turn is a `dated` path rank whose
//! `via` names the span and how the turn matched it.

use kith_core::Timestamp;
use kith_store::{EventQuery, LexicalHit, LexicalQuery, Tx, VectorQuery};

use super::filters::{max_time, min_time, vector_filters};
use super::fusion::{Boost, PathKind};
use super::pool::{path, Pool};
use super::spans::{spans, Span};
use super::RetrieveRequest;
use crate::error::Error;

/// Spans of one question searched at most (each costs two searches).
pub const MAX_SPANS: usize = 2;
/// Hits per search around a span, before keeping those about it.
const AROUND: usize = 40;
const DAY_MS: i64 = 86_400_000;

/// The spans `req.query` asks about, resolved against the time it is asked
/// (see the module doc). A query without a time word costs no store call.
pub fn question_spans(tx: &mut dyn Tx, req: &RetrieveRequest) -> Result<Vec<Span>, Error> {
    let clock = Timestamp::now().unix_millis();
    // Parsed once against the clock to learn whether it names a time at
    // all; most questions do not.
    if spans(&req.query, clock).is_empty() {
        return Ok(Vec::new());
    }
    let asked_at = match req.asked_at.or(req.filters.as_of) {
        Some(t) => t.unix_millis(),
        None => tx
            .list_events(&EventQuery {
                owner: Some(req.owner.clone()),
                scope: req.filters.scope.clone(),
                newest_first: true,
                limit: 1,
                ..EventQuery::default()
            })?
            .first()
            .map(|e| e.event.effective_time().unix_millis())
            .unwrap_or(clock),
    };
    Ok(spans(&req.query, asked_at))
}

/// Adds, for each of the first [`MAX_SPANS`] of `asked`, the turns about it
/// as `dated` candidates (ranked as the search ranked them).
pub fn dated_candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    asked: &[Span],
    lexical_text: &str,
    embedded: &Option<(String, Vec<f32>)>,
    pool: &mut Pool,
) -> Result<(), Error> {
    let wants_entities = req
        .filters
        .node_types
        .contains(&kith_core::NodeType::Entity);
    for span in asked.iter().take(MAX_SPANS) {
        let mut filters = req.filters.clone();
        filters.time_from = max_time(
            filters.time_from,
            Timestamp::from_unix_millis(span.from - DAY_MS),
        );
        filters.time_to = min_time(
            filters.time_to,
            Timestamp::from_unix_millis(span.to + span.told_within_ms()),
        );
        let lexical = if req.paths.lexical {
            tx.search_lexical(&LexicalQuery {
                common_share: None,
                owner: req.owner.clone(),
                text: lexical_text.to_string(),
                filters: filters.clone(),
                limit: AROUND,
            })?
        } else {
            Vec::new()
        };
        let vector = match embedded {
            Some((model, vector)) => tx.search_vector(&VectorQuery {
                owner: req.owner.clone(),
                model: model.clone(),
                vector: vector.clone(),
                filters: vector_filters(&filters),
                limit: AROUND,
            })?,
            None => Vec::new(),
        };
        // Each list keeps its own order among the turns about the span; a
        // hit in both keeps its better rank.
        for list in [lexical, vector] {
            let about: Vec<(LexicalHit, String)> = list
                .into_iter()
                .filter(|h| wants_entities || h.node_type != kith_core::NodeType::Entity)
                .filter_map(|h| {
                    let how = about(span, &h)?;
                    Some((h, how))
                })
                .collect();
            for (r, (h, how)) in about.into_iter().enumerate() {
                pool.add(h, path(PathKind::Dated, r, None, Some(how)));
            }
        }
    }
    Ok(())
}

/// How `hit` is about `span` ("said 2023-06-12, in last week
/// (2023-06-05..2023-06-12)"), or `None` when it is not.
fn about(span: &Span, hit: &LexicalHit) -> Option<String> {
    let said = hit.event_time.or(hit.ingested_at)?.unix_millis();
    let asked = format!("{} ({})", span.words, span.short());
    if span.covers(said, &[]) {
        return Some(format!("said in {asked}"));
    }
    let stated = spans(&hit.content, said);
    let s = stated.iter().find(|s| s.overlaps(span))?;
    Some(format!("says \"{}\" ({}), in {asked}", s.words, s.short()))
}

/// The factor for a turn that states a time when the query asks when. Not
/// fitted: the same size as a soft speaker boost, enough to put a turn that
/// says when ahead of one that matches as well but cannot answer, not
/// ahead of one that matches far better.
pub const STATES_A_TIME_BOOST: f64 = 1.5;

/// For a query that asks when ([`super::spans::asks_when`]): boosts the
/// candidates that state a time ([`spans`] finds one in their text, read
/// against when they were said), as the answer must be a time. The boost's
/// reason names the words and the days they resolve to.
pub fn boost_stated_times(query: &str, pool: &mut Pool) {
    if !super::spans::asks_when(query) {
        return;
    }
    for c in pool.by_id.values_mut() {
        let Some(said) = c.hit.event_time.or(c.hit.ingested_at) else {
            continue;
        };
        if let Some(s) = spans(&c.hit.content, said.unix_millis()).first() {
            c.trace.add_boost(Boost {
                name: "states_a_time".into(),
                factor: STATES_A_TIME_BOOST,
                reason: format!(
                    "the query asks when; this says \"{}\" ({})",
                    s.words,
                    s.short()
                ),
            });
        }
    }
}
