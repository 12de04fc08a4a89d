//! The neighbour path: the turns just before and after each of the best
//! hits, in their session (an answer often spans two turns; the turn after
//! a question is likely its answer).

use std::collections::HashMap;

use kith_core::{ids, NodeType, Role, SessionId};
use kith_store::{Answer, Read, StoredEvent, Tx};
use uuid::Uuid;

use super::by_id;
use super::filters::admitted;
use super::fusion::{PathKind, PathWeights};
use super::pool::{hit_for, path, Pool};
use super::RetrieveRequest;
use crate::error::Error;

/// How much more of a question's score the turn after it inherits.
const ANSWER_SHARE: f64 = 1.5;
/// How many of the best fused hits bring their session neighbours.
const NEIGHBOUR_SOURCES: usize = 10;

/// The best [`NEIGHBOUR_SOURCES`] candidates of `pool` so far, as sources.
pub(super) fn sources(pool: &mut Pool, weights: &PathWeights) -> Vec<Source> {
    pool.ranked(weights)
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
        .collect()
}

/// A strong hit whose session neighbours join the candidates.
pub(super) struct Source {
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
/// else said them; `riders` (later stages' reads that need nothing this
/// one finds) are read with the sessions, and their answers returned.
pub(super) fn candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    sources: &[Source],
    pool: &mut Pool,
    riders: &[Read],
) -> Result<Vec<Answer>, Error> {
    // Every source's session in one call (one round trip on a server).
    let mut names: Vec<SessionId> = Vec::new();
    for s in sources.iter().filter(|s| s.event_id.is_some()) {
        if let Some(session) = &s.session {
            if !names.contains(session) {
                names.push(session.clone());
            }
        }
    }
    let (sessions, answers) = session_events_with(tx, req, &names, riders)?;
    // (source index, session, position of the neighbour, share, whether
    // it is the reply to a source that asks)
    let mut wanted: Vec<(usize, SessionId, usize, f64, bool)> = Vec::new();
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
            if another_voice(e, source.voice.0.as_deref(), source.voice.1) {
                wanted.push((i, session.clone(), j, share, source.asks && j == at + 1));
            }
        }
    }
    // Every neighbour's note in one call (one round trip on a server).
    let note_ids: Vec<Uuid> = wanted
        .iter()
        .map(|(_, session, j, _, _)| ids::note_node_id(sessions[session][*j].event.id))
        .collect();
    let notes = by_id::nodes(tx, &req.owner, &note_ids)?;
    for ((i, session, j, share, answers), note_id) in wanted.into_iter().zip(note_ids) {
        let e = &sessions[&session][j];
        let source = &sources[i];
        let Some(note) = notes.get(&note_id) else {
            continue;
        };
        if note.owner_id != req.owner || !admitted(&req.filters, note, Some(e)) {
            continue;
        }
        if req.filters.node_types.is_empty() && note.node_type == NodeType::Entity {
            continue;
        }
        let hit = hit_for(note, Some(e));
        let id = hit.node_id;
        pool.add(
            hit,
            path(
                PathKind::Neighbour,
                i,
                Some(source.score * share),
                Some(format!("node {}", source.node_id)),
            ),
        );
        if answers {
            if let Some(c) = pool.by_id.get_mut(&id) {
                c.answers.get_or_insert(source.node_id);
            }
        }
    }
    Ok(answers)
}

/// The events of the sessions `names`, each session's in order, in one
/// call (one round trip on a server).
pub(super) fn session_events(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    names: &[SessionId],
) -> Result<HashMap<SessionId, Vec<StoredEvent>>, Error> {
    Ok(session_events_with(tx, req, names, &[])?.0)
}

/// Each session's events, in order.
type Sessions = HashMap<SessionId, Vec<StoredEvent>>;

/// [`session_events`], with `riders` read in the same call (one round trip
/// on a server) and their answers.
fn session_events_with(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    names: &[SessionId],
    riders: &[Read],
) -> Result<(Sessions, Vec<Answer>), Error> {
    let mut sessions: Sessions = names.iter().map(|s| (s.clone(), Vec::new())).collect();
    let mut reads = vec![Read::SessionEvents(
        req.owner.clone(),
        names.to_vec(),
        5_000,
    )];
    reads.extend(riders.iter().cloned());
    let mut answers = tx.read_together(&reads)?;
    let events = answers.remove(0).into_events();
    for e in events {
        if let Some(list) = e
            .event
            .session_id
            .as_ref()
            .and_then(|s| sessions.get_mut(s))
        {
            list.push(e);
        }
    }
    Ok((sessions, answers))
}

/// Whether `e` is said by another voice than (`speaker`, `role`): only a
/// reply, or what a hit replies to, is taken from around it; the same
/// voice again (a user's next message to an assistant whose turns are not
/// stored, say) is a new topic as often as not.
pub(super) fn another_voice(e: &StoredEvent, speaker: Option<&str>, role: Option<Role>) -> bool {
    e.event.speaker.as_ref().map(|s| s.as_str()) != speaker || Some(e.event.role) != role
}
