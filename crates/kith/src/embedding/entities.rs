//! Entity vectors for the organizer's alias proposals (see
//! [`crate::Memory::embed_entities`]).

use kith_core::{EdgeType, NodeType, OwnerId};
use kith_embed::Embedder;
use kith_store::{Store, TxMode};
use uuid::Uuid;

use super::{embed_checked, entity_vector_text, EMBED_BATCH, ENTITY_CONTEXT_CLAIMS};
use crate::error::Error;

/// Embeds up to `limit` of `owner`'s active entities without a vector of
/// `embedder`'s model; returns how many.
pub(crate) fn embed(
    store: &dyn Store,
    embedder: &dyn Embedder,
    owner: &OwnerId,
    limit: usize,
) -> Result<usize, Error> {
    let model = embedder.model_id().to_string();
    let todo: Vec<(Uuid, String)> = {
        let mut tx = store.begin(TxMode::Read)?;
        // The store finds what lacks a vector (one query per page), so a
        // run over a memory whose entities all have one costs a scan of
        // the nodes without vectors, not a read per entity.
        let mut entities = Vec::new();
        let mut after = 0;
        while entities.len() < limit {
            let page = tx.nodes_missing_embedding(Some(owner), &model, after, 256)?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            entities.extend(page.into_iter().map(|s| s.node).filter(|n| {
                n.node_type == NodeType::Entity
                    && n.lifecycle.is_active()
                    && !crate::organize::admission::is_personal_reference(n)
            }));
        }
        entities.truncate(limit);
        let mut out = Vec::with_capacity(entities.len());
        for n in entities {
            let mut context = Vec::new();
            for e in tx.edges_of(n.id)? {
                if context.len() == ENTITY_CONTEXT_CLAIMS {
                    break;
                }
                if e.edge_type == EdgeType::HasFact && e.source_id == n.id {
                    if let Some(claim) = tx.get_node(e.target_id)? {
                        if claim.owner_id == *owner && claim.lifecycle.is_active() {
                            context.push(claim.content);
                        }
                    }
                }
            }
            let entity_type = n
                .metadata
                .as_ref()
                .and_then(|m| m.get("entity_type"))
                .and_then(serde_json::Value::as_str)
                .map(String::from);
            out.push((
                n.id,
                entity_vector_text(&n.content, entity_type.as_deref(), &context),
            ));
        }
        out
    };
    for chunk in todo.chunks(EMBED_BATCH) {
        let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embed_checked(embedder, &texts)?;
        crate::retry::on_busy("save entity vectors", || {
            let mut tx = store.begin(TxMode::Write)?;
            // One statement for the chunk on a server, not one per entity.
            let rows: Vec<(Uuid, &[f32])> = chunk
                .iter()
                .zip(&vectors)
                .map(|((id, _), v)| (*id, v.as_slice()))
                .collect();
            tx.put_owned_embeddings(owner, &model, &rows)?;
            tx.commit()?;
            Ok(())
        })?;
    }
    Ok(todo.len())
}
