//! Reads taken ahead of their stage: the neighbour path's read carries
//! those of three later stages (one round trip on a server instead of
//! four), each used at its stage only where it still covers what that
//! stage asks for, and read again there otherwise. The pool is read at the
//! same snapshot either way, so what each stage finds is the same.
//!
//! - The expansion's links: the edges of the best hits before the
//!   neighbour path adds its turns ([`expand::HOP_SOURCES`] of them); the
//!   expansion starts from the best hits after it, which are the same
//!   unless a neighbour turn ranks among them.
//! - What was said since ([`super::later`]): the store read for the turns naming
//!   the best match's names again, fixed before the neighbours.
//! - The owner-corrected check's claims ([`results::owner_corrected`]):
//!   the claims in the pool so far; the expansion may add others, read at
//!   the check.

use std::collections::{HashMap, HashSet};

use kith_core::{Edge, Node};
use kith_store::{Answer, LexicalHit, Read};
use uuid::Uuid;

use super::later::Later;
use super::pool::Pool;
use super::{expand, results, RetrieveRequest};

/// What was read ahead.
#[derive(Default)]
pub(super) struct Ahead {
    /// The hits whose edges were read, and their edges.
    pub links: Option<Links>,
    /// The claims of the pool asked for, and those found, by id.
    pub claims: (HashSet<Uuid>, HashMap<Uuid, Node>),
    /// The hits of what was said since, when it was planned.
    pub later: Option<Vec<LexicalHit>>,
}

/// Edges of some nodes ([`kith_store::Tx::edges_of_nodes`]) and which nodes
/// they are the edges of (a node without edges has no entry).
pub(super) struct Links {
    pub of: HashSet<Uuid>,
    pub edges: HashMap<Uuid, Vec<Edge>>,
}

impl Links {
    /// The edges of `ids` when all of them were read.
    pub fn covering(&self, ids: &[Uuid]) -> Option<HashMap<Uuid, Vec<Edge>>> {
        ids.iter().all(|id| self.of.contains(id)).then(|| {
            ids.iter()
                .filter_map(|id| self.edges.get(id).map(|e| (*id, e.clone())))
                .collect()
        })
    }
}

/// The reads to take ahead for `req` from `pool` as it stands (and for
/// `later`, when planned).
pub(super) fn reads(req: &RetrieveRequest, pool: &mut Pool, later: Option<&Later>) -> Vec<Read> {
    let mut reads = Vec::new();
    if let Some(later) = later {
        reads.push(Read::Search(later.query.clone()));
    }
    if req.paths.graph {
        reads.push(Read::EdgesOf(
            req.owner.clone(),
            expand::source_ids(req, pool),
        ));
    }
    reads.push(Read::OwnedNodes(
        req.owner.clone(),
        results::claim_ids(pool),
    ));
    reads
}

/// What `answers` to `reads` (as [`reads`] made them) found.
pub(super) fn found(reads: &[Read], answers: Vec<Answer>) -> Ahead {
    let mut ahead = Ahead::default();
    for (read, answer) in reads.iter().zip(answers) {
        match read {
            Read::EdgesOf(_, ids) => {
                ahead.links = Some(Links {
                    of: ids.iter().copied().collect(),
                    edges: answer.into_edges(),
                })
            }
            Read::OwnedNodes(_, ids) => {
                ahead.claims = (
                    ids.iter().copied().collect(),
                    answer.into_nodes().into_iter().map(|n| (n.id, n)).collect(),
                )
            }
            Read::Search(_) => ahead.later = Some(answer.into_hits()),
            _ => {}
        }
    }
    ahead
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith_core::EdgeType;

    fn edge(from: Uuid, to: Uuid) -> Edge {
        let now = kith_core::Timestamp::now();
        Edge {
            id: Uuid::new_v4(),
            owner_id: kith_core::OwnerId::new("o").unwrap(),
            scope: kith_core::ScopeId::personal(),
            source_id: from,
            target_id: to,
            edge_type: EdgeType::RelatesTo,
            confidence: 1.0,
            valid_from: now,
            valid_to: None,
            provenance_event_id: None,
            metadata: None,
            created_at: now,
        }
    }

    #[test]
    fn links_cover_only_what_was_read() {
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let e = edge(a, c);
        let links = Links {
            of: [a, b].into_iter().collect(),
            edges: [(a, vec![e.clone()])].into_iter().collect(),
        };
        // b was read and has no edges: covered, with no entry.
        let got = links.covering(&[b, a]).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[&a], vec![e]);
        // c was not read (its edges are not all in `edges`): not covered.
        assert!(links.covering(&[a, c]).is_none());
        assert!(links.covering(&[]).unwrap().is_empty());
    }
}
