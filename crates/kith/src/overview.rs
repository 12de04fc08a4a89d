//! Bounded reads for an owner's overview (the web console's first page):
//! the owner's own extraction work, and how many journal records of a kind
//! the owner has, without reading them.

use kith_core::{OperationKind, OwnerId};
use kith_store::{TxMode, WorkItem, WorkQuery, WorkStatus};

use crate::context::Ctx;
use crate::error::Error;

/// `owner`'s extraction work items with one of `statuses`, at most
/// `limit` (0: all). [`Memory::work_items`] lists every owner's, for
/// the worker; this is what one owner may see.
pub(crate) fn owner_work_items(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    statuses: &[WorkStatus],
    limit: usize,
) -> Result<Vec<WorkItem>, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    Ok(tx.list_work_items(&WorkQuery {
        owner: Some(owner.clone()),
        statuses: statuses.to_vec(),
        lease_expired_before_ms: None,
        limit,
    })?)
}

/// How many journal records of `kind` `owner` has (an index count; no
/// record is read).
pub(crate) fn journal_count(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    kind: OperationKind,
) -> Result<u64, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    Ok(tx.count_operations(owner, kind)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::IngestOptions;
    use crate::Memory;
    use kith_core::EventInput;

    #[test]
    fn an_owner_sees_only_its_own_work() {
        let dir = tempfile::tempdir().expect("a directory");
        let m = Memory::init_with_embedder(
            &dir.path().join("p.kith"),
            std::sync::Arc::new(kith_embed::HashingEmbedder::new(8)),
        )
        .expect("a pack");
        let alice = OwnerId::new("alice").expect("an owner");
        let bob = OwnerId::new("bob").expect("an owner");
        let deferred = IngestOptions {
            defer: true,
            ..IngestOptions::default()
        };
        for (owner, n) in [(&alice, 2), (&bob, 3)] {
            for i in 0..n {
                let mut input = EventInput::new("user", &format!("Message {i}."));
                input.owner_id = Some(owner.to_string());
                m.ingest(input, deferred).expect("admitted");
            }
        }
        let pending = m
            .owner_work_items(&alice, &[WorkStatus::Pending], 0)
            .expect("items");
        assert_eq!(pending.len(), 2);
        assert!(pending.iter().all(|i| i.owner_id == alice));
        assert_eq!(
            m.owner_work_items(&bob, &[WorkStatus::Pending], 2)
                .expect("items")
                .len(),
            2,
            "the limit holds"
        );
        assert_eq!(
            m.journal_count(&alice, OperationKind::OrganizerMerged)
                .expect("a count"),
            0
        );
    }
}
