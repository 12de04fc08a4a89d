//! Retrieval receipts: each retrieval, unless asked not to, is journaled as
//! a `RETRIEVAL_RECORDED` record whose id is the request id, quoting the
//! request, what was found and what was packed (`kith retrievals show ID`).
//!
//! Writing a receipt also expires a few old ones of the same owner
//! ([`super::retention`]); reading one that expired says so
//! ([`Error::ReceiptExpired`]) rather than "not found".

use kith_core::{Operation, OperationKind, OwnerId, ScopeId, Timestamp};
use kith_store::{OperationQuery, TxMode};
use serde_json::{json, Value};
use uuid::Uuid;

use super::retention::{self, ReceiptRetention};
use super::{Retrieval, RetrieveRequest};
use crate::context::Ctx;
use crate::error::Error;

/// Journals `r` as the receipt of `req` in one write transaction, with up
/// to [`retention::ON_WRITE_BATCH`] of the owner's receipts that
/// `retention` expires (alone when none does, where the store can:
/// [`kith_store::Store::append_unless_expiring`]).
pub(crate) fn record(
    ctx: &Ctx<'_>,
    retention: &ReceiptRetention,
    req: &RetrieveRequest,
    r: &Retrieval,
) -> Result<(), Error> {
    // The checksum is taken over the value as it reads back.
    let payload = crate::organize::as_read_back(payload(req, r))?;
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
    // Most receipts expire nothing: the store journals those alone, in
    // one round trip on PostgreSQL; the others, and every receipt on a
    // store without that path, take the transaction below.
    let check = retention::on_write_check(retention, now);
    if ctx.store.append_unless_expiring(&op, &check)? {
        return Ok(());
    }
    let mut tx = ctx.store.begin(TxMode::Write)?;
    tx.append_operation(&op)?;
    // Retention rides on the write (no daemon): a few expired receipts
    // of this owner go in the same transaction.
    retention::expire(
        &mut *tx,
        &req.owner,
        retention,
        now,
        retention::ON_WRITE_BATCH,
    )?;
    tx.commit()?;
    Ok(())
}

/// The receipt's payload: the request, the results with their traces, the
/// packed lines and the timings.
fn payload(req: &RetrieveRequest, r: &Retrieval) -> Value {
    let f = &req.filters;
    json!({
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
    })
}

/// A retrieval receipt by id, only if it belongs to `owner`.
pub(crate) fn receipt(ctx: &Ctx<'_>, owner: &OwnerId, id: Uuid) -> Result<Operation, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    match tx.get_operation(id)? {
        Some(op) if &op.owner_id == owner && op.kind == OperationKind::RetrievalRecorded => Ok(op),
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
pub(crate) fn receipts(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    limit: usize,
) -> Result<Vec<Operation>, Error> {
    let mut tx = ctx.store.begin(TxMode::Read)?;
    Ok(tx.list_operations(&OperationQuery {
        owner: owner.clone(),
        kind: Some(OperationKind::RetrievalRecorded),
        target_id: None,
        limit,
    })?)
}
