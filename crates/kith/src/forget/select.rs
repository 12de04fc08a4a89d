//! Which of an owner's events a selector names.

use kith_core::OwnerId;
use kith_store::{EventQuery, StoredEvent, Tx};

use super::ForgetSelector;
use crate::error::Error;

/// Events read per page.
const PAGE: usize = 1000;

/// The owner's events `selector` names, tombstones included (the caller
/// skips them), in ingestion order. A named event or source id that is not
/// the owner's, and a session without events, are [`Error::NotFound`].
pub(super) fn events(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    selector: &ForgetSelector,
) -> Result<Vec<StoredEvent>, Error> {
    match selector {
        ForgetSelector::Event(id) => match tx.get_event(*id)? {
            Some(e) if &e.event.owner_id == owner => Ok(vec![e]),
            _ => Err(Error::NotFound {
                what: format!("event {id} of owner {owner}"),
            }),
        },
        ForgetSelector::SourceId(source) => {
            let id = tx
                .event_id_by_source(owner, source)?
                .ok_or_else(|| Error::NotFound {
                    what: format!("event with source id {source} of owner {owner}"),
                })?;
            Ok(tx.get_event(id)?.into_iter().collect())
        }
        ForgetSelector::Session(session) => {
            let all = page_all(tx, owner, Some(session))?;
            if all.is_empty() {
                return Err(Error::NotFound {
                    what: format!("session {session} of owner {owner}"),
                });
            }
            Ok(all)
        }
        ForgetSelector::Before(t) => Ok(page_all(tx, owner, None)?
            .into_iter()
            .filter(|e| e.event.effective_time() < *t)
            .collect()),
        ForgetSelector::Owner => page_all(tx, owner, None),
    }
}

fn page_all(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    session: Option<&kith_core::SessionId>,
) -> Result<Vec<StoredEvent>, Error> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = tx.list_events(&EventQuery {
            owner: Some(owner.clone()),
            session: session.cloned(),
            after_seq: after,
            limit: PAGE,
            ..EventQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        out.extend(page);
    }
    Ok(out)
}
