//! A node with what surrounds it: the events it came from and the edges
//! and nodes next to it (what `GET /v1/nodes/{id}` and `memory_get_node`
//! show).

use kith_core::{Edge, EdgeType, Node, OwnerId};
use kith_store::{StoredEvent, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::context::Ctx;
use crate::error::Error;

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

/// A node of `owner` with its source events, edges and adjacent nodes.
/// Another owner's node is [`Error::NotFound`], exactly like a missing
/// one, so ids of other owners reveal nothing.
///
/// An unverified alias proposal (a RELATES_TO edge with
/// `identity_verified: false`) is listed among the edges but its other
/// end is not a neighbour: a proposal is not an identity link, so the
/// ordinary neighbourhood does not traverse it. [`Memory::node_view_with`]
/// opts in.
pub(crate) fn node_view(ctx: &Ctx<'_>, owner: &OwnerId, id: Uuid) -> Result<NodeView, Error> {
    node_view_with(ctx, owner, id, false)
}

/// [`Memory::node_view`], also following unverified alias proposals to
/// their other entity when `include_unverified_aliases` is true.
pub(crate) fn node_view_with(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    id: Uuid,
    include_unverified_aliases: bool,
) -> Result<NodeView, Error> {
    let node = crate::reads::node(ctx, owner, id)?;
    let mut tx = ctx.store.begin(TxMode::Read)?;
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

/// Hops a path query follows at most unless asked otherwise.
pub const DEFAULT_MAX_HOPS: usize = 6;
/// Hops a caller may ask for at most.
pub const MAX_HOPS_LIMIT: usize = 12;
/// Nodes a path query visits at most, so a dense graph cannot turn one
/// query into a scan of the owner's memory.
pub const MAX_PATH_VISITS: usize = 10_000;

/// A shortest-path query between two of an owner's nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct PathRequest {
    /// Where the path starts.
    pub from: Uuid,
    /// Where it ends.
    pub to: Uuid,
    /// Follow unverified alias proposals too (left out by default, as in
    /// the neighbourhood: a proposal is not an identity link).
    pub include_unverified_aliases: bool,
    /// Hops at most (1..=[`MAX_HOPS_LIMIT`]).
    pub max_hops: usize,
}

impl PathRequest {
    /// A request with the defaults: proposals left out,
    /// [`DEFAULT_MAX_HOPS`] hops.
    pub fn new(from: Uuid, to: Uuid) -> Self {
        PathRequest {
            from,
            to,
            include_unverified_aliases: false,
            max_hops: DEFAULT_MAX_HOPS,
        }
    }
}

/// One hop of a path: the edge taken and the node it reaches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathStep {
    /// The edge (either direction: edges are followed both ways).
    pub edge: Edge,
    /// The node reached.
    pub node: Node,
}

/// What a path query found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathReport {
    /// The start node.
    pub from: Node,
    /// The end node.
    pub to: Uuid,
    /// The hops of one shortest path, in order (empty when `from == to`
    /// or no path was found).
    pub steps: Vec<PathStep>,
    /// Whether a path was found within the bounds.
    pub found: bool,
    /// Whether unverified alias proposals could be followed.
    pub include_unverified_aliases: bool,
    /// Unverified alias proposal edges met and not followed.
    pub skipped_proposals: usize,
    /// Whether the search stopped at [`MAX_PATH_VISITS`] nodes before it
    /// had looked everywhere within `max_hops`.
    pub truncated: bool,
}

/// One shortest path (fewest edges) between two of `owner`'s nodes,
/// following edges in either direction, breadth first, within
/// `max_hops`. Like the neighbourhood, an unverified alias proposal is
/// not followed unless the request opts in; a verified alias edge is an
/// ordinary edge. Another owner's node or edge is never followed, and
/// another owner's endpoint is [`Error::NotFound`] like a missing one.
/// Among paths of equal length the one through smaller edge ids is
/// returned, so the answer is reproducible.
pub(crate) fn path(ctx: &Ctx<'_>, owner: &OwnerId, req: &PathRequest) -> Result<PathReport, Error> {
    if req.max_hops == 0 || req.max_hops > MAX_HOPS_LIMIT {
        return Err(Error::Request(format!(
            "max_hops: {} is outside 1..={MAX_HOPS_LIMIT}",
            req.max_hops
        )));
    }
    let from = crate::reads::node(ctx, owner, req.from)?;
    crate::reads::node(ctx, owner, req.to)?;
    let mut report = PathReport {
        from,
        to: req.to,
        steps: Vec::new(),
        found: req.from == req.to,
        include_unverified_aliases: req.include_unverified_aliases,
        skipped_proposals: 0,
        truncated: false,
    };
    if report.found {
        return Ok(report);
    }
    let mut tx = ctx.store.begin(TxMode::Read)?;
    // node → (edge taken to reach it, the node it came from)
    let mut came: std::collections::HashMap<Uuid, (Edge, Uuid)> = std::collections::HashMap::new();
    let mut seen: std::collections::HashSet<Uuid> = [req.from].into_iter().collect();
    let mut frontier = vec![req.from];
    let mut skipped: std::collections::HashSet<Uuid> = std::collections::HashSet::new();
    'search: for _ in 0..req.max_hops {
        let mut next = Vec::new();
        for id in &frontier {
            let mut edges: Vec<Edge> = tx
                .edges_of(*id)?
                .into_iter()
                .filter(|e| &e.owner_id == owner)
                .collect();
            edges.sort_by_key(|e| e.id);
            for edge in edges {
                if !req.include_unverified_aliases && is_unverified_alias(&edge) {
                    skipped.insert(edge.id);
                    continue;
                }
                let other = if edge.source_id == *id {
                    edge.target_id
                } else {
                    edge.source_id
                };
                if seen.contains(&other) {
                    continue;
                }
                if seen.len() >= MAX_PATH_VISITS {
                    report.truncated = true;
                    break 'search;
                }
                seen.insert(other);
                came.insert(other, (edge, *id));
                if other == req.to {
                    break 'search;
                }
                next.push(other);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    report.skipped_proposals = skipped.len();
    if !came.contains_key(&req.to) {
        return Ok(report);
    }
    let mut at = req.to;
    let mut steps = Vec::new();
    while at != req.from {
        let (edge, prev) = came
            .remove(&at)
            .expect("every reached node records how it was reached");
        let node = tx.get_node(at)?.ok_or_else(|| Error::NotFound {
            what: format!("node {at} (an edge names it, the store has no such node)"),
        })?;
        if &node.owner_id != owner {
            // An edge of this owner to another owner's node: a damaged
            // store; never show the node.
            return Ok(PathReport {
                steps: Vec::new(),
                ..report
            });
        }
        steps.push(PathStep { edge, node });
        at = prev;
    }
    steps.reverse();
    report.steps = steps;
    report.found = true;
    Ok(report)
}
