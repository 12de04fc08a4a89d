//! A node with what surrounds it: the events it came from and the edges
//! and nodes next to it (what `GET /v1/nodes/{id}` and `memory_get_node`
//! show).

use kith_core::{Edge, EdgeType, Node, OwnerId};
use kith_store::{StoredEvent, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::error::Error;
use crate::memory::Memory;

/// At most this many edges are listed for one node, so a hub entity
/// cannot turn one lookup into a scan of the owner's graph.
pub const MAX_NEIGHBOUR_EDGES: usize = 200;

/// One node, its provenance and its neighbourhood.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeView {
    /// The node.
    pub node: Node,
    /// The events it was derived from (its evidence), oldest reference first.
    pub provenance: Vec<StoredEvent>,
    /// Edges that start or end at the node (at most
    /// [`MAX_NEIGHBOUR_EDGES`]).
    pub edges: Vec<Edge>,
    /// The nodes at the other end of those edges (not across an
    /// unverified alias proposal, unless the caller opted in).
    pub neighbours: Vec<Node>,
    /// Whether edges were left out because there were more than
    /// [`MAX_NEIGHBOUR_EDGES`].
    pub truncated: bool,
}

impl Memory {
    /// A node of `owner` with its source events, edges and adjacent nodes.
    /// Another owner's node is [`Error::NotFound`], exactly like a missing
    /// one, so ids of other owners reveal nothing.
    ///
    /// An unverified alias proposal (a RELATES_TO edge with
    /// `identity_verified: false`) is listed among the edges but its other
    /// end is not a neighbour: a proposal is not an identity link, so the
    /// ordinary neighbourhood does not traverse it. [`Memory::node_view_with`]
    /// opts in.
    pub fn node_view(&self, owner: &OwnerId, id: Uuid) -> Result<NodeView, Error> {
        self.node_view_with(owner, id, false)
    }

    /// [`Memory::node_view`], also following unverified alias proposals to
    /// their other entity when `include_unverified_aliases` is true.
    pub fn node_view_with(
        &self,
        owner: &OwnerId,
        id: Uuid,
        include_unverified_aliases: bool,
    ) -> Result<NodeView, Error> {
        let node = self.node(owner, id)?;
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        let mut provenance = Vec::new();
        for event_id in &node.evidence_refs {
            // Evidence always belongs to the node's owner; the check keeps
            // that true even for a damaged store.
            if let Some(e) = tx.get_event(*event_id)? {
                if &e.event.owner_id == owner {
                    provenance.push(e);
                }
            }
        }
        let mut edges: Vec<Edge> = tx
            .edges_of(id)?
            .into_iter()
            .filter(|e| &e.owner_id == owner)
            .collect();
        let truncated = edges.len() > MAX_NEIGHBOUR_EDGES;
        edges.truncate(MAX_NEIGHBOUR_EDGES);
        let mut neighbours: Vec<Node> = Vec::new();
        for edge in &edges {
            if !edge.is_open() {
                // Closed by a re-derivation: history, listed but never a link.
                continue;
            }
            if !include_unverified_aliases && is_unverified_alias(edge) {
                // Still queryable as an edge above; just not traversed.
                continue;
            }
            let other = if edge.source_id == id {
                edge.target_id
            } else {
                edge.source_id
            };
            if neighbours.iter().any(|n| n.id == other) {
                continue;
            }
            if let Some(n) = tx.get_node(other)? {
                if &n.owner_id == owner {
                    neighbours.push(n);
                }
            }
        }
        Ok(NodeView {
            node,
            provenance,
            edges,
            neighbours,
            truncated,
        })
    }
}

/// Whether `edge` is an unverified alias proposal: RELATES_TO with
/// `metadata.identity_verified` false.
fn is_unverified_alias(edge: &Edge) -> bool {
    edge.edge_type == EdgeType::RelatesTo
        && edge
            .metadata
            .as_ref()
            .and_then(|m| m.get("identity_verified"))
            .and_then(serde_json::Value::as_bool)
            == Some(false)
}
