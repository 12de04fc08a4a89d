//! A short turn is embedded after the turn before it in its session.
//!
//! A short reply means little alone: "They were awestruck and humbled." is
//! about a visit to a military memorial only because the turns before it
//! say so, and its vector alone lands near any talk of feelings. Embedded
//! after the turn before it ("How did they react when they saw it?"), it
//! lands near the question it answers. Long turns carry their own topic and
//! are embedded alone: the turn before would only blur them (measured in
//! BENCHMARKS.md, 2026-12-03, session 12: every turn with its predecessor
//! cost LoCoMo's list questions more than it gained).
//!
//! Only the vector changes: the note's text, the lexical index and every
//! other path see the turn alone. Forgetting the turn before re-embeds the
//! short turn without it ([`crate::forget`]), so no vector keeps anything of
//! a forgotten turn.

use std::collections::HashMap;

use kith_core::event::ValidEvent;
use kith_core::{Event, OwnerId, SessionId};
use kith_store::{EventQuery, StoredEvent, Tx};

use super::vector_text;
use crate::error::Error;

/// A turn of fewer words than this is embedded after the turn before it.
/// Chosen on LoCoMo's tune half (20, 25, 30 and 35 were close; all turns,
/// or turns under 45 words, cost list questions).
pub const CONTEXT_WORDS: usize = 25;

/// Whether a turn saying `content` is short enough to be embedded after
/// the turn before it.
pub fn needs_context(content: &str) -> bool {
    content.split_whitespace().count() < CONTEXT_WORDS
}

/// The text a turn's vector is made from: [`vector_text`], after the turn
/// before it (`before`) when the turn is short ([`needs_context`]).
pub fn turn_vector_text(content: &str, speaker: Option<&str>, before: Option<&Event>) -> String {
    let own = vector_text(content, speaker);
    match before {
        Some(b) if needs_context(content) && !b.content.trim().is_empty() => {
            let speaker = b.speaker.as_ref().map(|s| s.as_str());
            format!("{} {own}", vector_text(&b.content, speaker))
        }
        _ => own,
    }
}

/// The turn before each of `valid` (events about to be written, in order)
/// in its session, for those that need it: the previous one of the batch in
/// the same session, else the newest stored one of that session (one read
/// per session whose first turn in the batch is short).
pub(crate) fn before_new(
    tx: &mut dyn Tx,
    valid: &[ValidEvent],
) -> Result<Vec<Option<Event>>, Error> {
    let mut last_in_batch: HashMap<(&OwnerId, &SessionId), usize> = HashMap::new();
    let mut out = Vec::with_capacity(valid.len());
    for (i, v) in valid.iter().enumerate() {
        let e = &v.event;
        let Some(session) = &e.session_id else {
            out.push(None);
            continue;
        };
        let before = match last_in_batch.insert((&e.owner_id, session), i) {
            _ if !needs_context(&e.content) => None,
            Some(j) => Some(valid[j].event.clone()),
            None => newest(tx, &e.owner_id, session, None)?,
        };
        out.push(before);
    }
    Ok(out)
}

/// Whether `context`, the stored turn a new short turn of `owner`'s
/// `session` was embedded after, is still the newest turn of that session
/// and not forgotten. Read inside the write transaction: between the read
/// before it ([`before_new`]) and the write, another writer may have added
/// a turn to the session, or a forget erased `context` — whose text must
/// then not be stored in a vector.
pub(crate) fn still_newest(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    session: &SessionId,
    context: uuid::Uuid,
) -> Result<bool, Error> {
    Ok(newest(tx, owner, session, None)?.is_some_and(|e| e.id == context))
}

/// The turn just before `event` (stored) in its session, when it needs one
/// ([`needs_context`]) and that turn is still there (not forgotten).
pub(crate) fn before_stored(tx: &mut dyn Tx, event: &StoredEvent) -> Result<Option<Event>, Error> {
    let e = &event.event;
    match &e.session_id {
        Some(session) if needs_context(&e.content) => {
            newest(tx, &e.owner_id, session, Some(event.seq - 1))
        }
        _ => Ok(None),
    }
}

/// The turn just after `event` in its session, when its vector was made
/// with `event` as its context (it is short and still there).
pub(crate) fn after_stored(
    tx: &mut dyn Tx,
    event: &StoredEvent,
) -> Result<Option<StoredEvent>, Error> {
    let Some(session) = &event.event.session_id else {
        return Ok(None);
    };
    let next = tx
        .list_events(&EventQuery {
            owner: Some(event.event.owner_id.clone()),
            session: Some(session.clone()),
            after_seq: event.seq,
            limit: 1,
            ..EventQuery::default()
        })?
        .into_iter()
        .next();
    Ok(next.filter(|n| n.tombstone.is_none() && needs_context(&n.event.content)))
}

/// The newest event of `owner`'s `session` (at or before seq `through`),
/// unless it was forgotten.
fn newest(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    session: &SessionId,
    through: Option<i64>,
) -> Result<Option<Event>, Error> {
    let found = tx
        .list_events(&EventQuery {
            owner: Some(owner.clone()),
            session: Some(session.clone()),
            through_seq: through,
            newest_first: true,
            limit: 1,
            ..EventQuery::default()
        })?
        .into_iter()
        .next();
    Ok(found.filter(|s| s.tombstone.is_none()).map(|s| s.event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith_core::event::{EventInput, InputDefaults};
    use kith_core::{ScopeId, Timestamp};

    fn event(speaker: &str, content: &str) -> Event {
        let input = EventInput {
            speaker: Some(speaker.into()),
            ..EventInput::new("user", content)
        };
        let defaults = InputDefaults {
            owner_id: Some(OwnerId::new("o").unwrap()),
            scope: ScopeId::personal(),
            now: Timestamp::now(),
        };
        input.validate(&defaults).unwrap().event
    }

    #[test]
    fn a_short_turn_is_embedded_after_the_turn_before_and_a_long_one_alone() {
        let before = event("Maria", "How did they react when they saw it?");
        assert_eq!(
            turn_vector_text(
                "They were awestruck and humbled.",
                Some("John"),
                Some(&before)
            ),
            "Maria: How did they react when they saw it? John: They were awestruck and humbled."
        );
        let long = "word ".repeat(CONTEXT_WORDS);
        assert_eq!(
            turn_vector_text(&long, Some("John"), Some(&before)),
            format!("John: {long}")
        );
        assert_eq!(
            turn_vector_text("Yes!", None, None),
            "Yes!",
            "no turn before: the turn alone"
        );
    }
}
