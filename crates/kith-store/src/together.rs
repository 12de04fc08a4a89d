//! Reads that do not depend on each other, handed to the store together
//! ([`crate::Tx::read_together`]) so a server backend can answer them in
//! one round trip instead of one each. Each [`Read`] is one of the `Tx`
//! methods, and its [`Answer`] is exactly what that method returns: the
//! default runs them one after another (SQLite, which has no round trips),
//! PostgreSQL in one statement (`postgres/together.rs`).

use std::collections::HashMap;

use kith_core::{Edge, Node, OwnerId, SessionId};
use uuid::Uuid;

use crate::{
    EdgesWithEnds, LexicalHit, LexicalQuery, NodeQuery, StoreError, StoredEvent, StoredNode, Tx,
};

/// One read of [`crate::Tx::read_together`], named for the method it stands
/// for.
#[derive(Debug, Clone)]
pub enum Read {
    /// [`crate::Tx::search_lexical`].
    Search(LexicalQuery),
    /// [`crate::Tx::search_lexical_nodes`].
    SearchNodes(LexicalQuery),
    /// [`crate::Tx::search_lexical_nodes`], then
    /// [`crate::Tx::edges_of_nodes_with_ends`] of every node found.
    SearchNodesWithEdges(LexicalQuery),
    /// [`crate::Tx::edges_of_nodes`].
    EdgesOf(OwnerId, Vec<Uuid>),
    /// [`crate::Tx::list_session_events`].
    SessionEvents(OwnerId, Vec<SessionId>, usize),
    /// [`crate::Tx::list_nodes_with_evidence`].
    NodesWithEvidence(NodeQuery),
    /// [`crate::Tx::get_owned_nodes`].
    OwnedNodes(OwnerId, Vec<Uuid>),
}

/// What one [`Read`] found: what its method returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Of [`Read::Search`].
    Hits(Vec<LexicalHit>),
    /// Of [`Read::SearchNodes`].
    HitsWithNodes(Vec<(LexicalHit, Node)>),
    /// Of [`Read::SearchNodesWithEdges`], and the owner's events the ends'
    /// first evidence references name (in `seq` order): a claim reached
    /// through an entity needs its turn, read in the same round trip.
    HitsWithEdges(Vec<(LexicalHit, Node)>, EdgesWithEnds, Vec<StoredEvent>),
    /// Of [`Read::EdgesOf`].
    Edges(HashMap<Uuid, Vec<Edge>>),
    /// Of [`Read::SessionEvents`].
    Events(Vec<StoredEvent>),
    /// Of [`Read::NodesWithEvidence`].
    NodesWithEvidence(Vec<StoredNode>, Vec<StoredEvent>),
    /// Of [`Read::OwnedNodes`].
    Nodes(Vec<Node>),
}

impl Answer {
    /// The hits of a [`Read::Search`]; nothing for any other read.
    pub fn into_hits(self) -> Vec<LexicalHit> {
        match self {
            Answer::Hits(h) => h,
            _ => Vec::new(),
        }
    }

    /// The hits and nodes of a [`Read::SearchNodes`]; nothing for any other
    /// read.
    pub fn into_hits_with_nodes(self) -> Vec<(LexicalHit, Node)> {
        match self {
            Answer::HitsWithNodes(h) => h,
            _ => Vec::new(),
        }
    }

    /// The hits, nodes, edges, ends and the ends' events of a
    /// [`Read::SearchNodesWithEdges`]; nothing for any other read.
    pub fn into_hits_with_edges(self) -> HitsWithEdges {
        match self {
            Answer::HitsWithEdges(h, e, v) => (h, e, v),
            _ => (Vec::new(), (HashMap::new(), Vec::new()), Vec::new()),
        }
    }

    /// The edges of a [`Read::EdgesOf`]; nothing for any other read.
    pub fn into_edges(self) -> HashMap<Uuid, Vec<Edge>> {
        match self {
            Answer::Edges(e) => e,
            _ => HashMap::new(),
        }
    }

    /// The events of a [`Read::SessionEvents`]; nothing for any other read.
    pub fn into_events(self) -> Vec<StoredEvent> {
        match self {
            Answer::Events(e) => e,
            _ => Vec::new(),
        }
    }

    /// The nodes and events of a [`Read::NodesWithEvidence`]; nothing for
    /// any other read.
    pub fn into_nodes_with_evidence(self) -> (Vec<StoredNode>, Vec<StoredEvent>) {
        match self {
            Answer::NodesWithEvidence(n, e) => (n, e),
            _ => (Vec::new(), Vec::new()),
        }
    }

    /// The nodes of a [`Read::OwnedNodes`]; nothing for any other read.
    pub fn into_nodes(self) -> Vec<Node> {
        match self {
            Answer::Nodes(n) => n,
            _ => Vec::new(),
        }
    }
}

/// What [`Answer::into_hits_with_edges`] gives: the entities found, their
/// edges and the nodes at the ends, and the ends' first turns.
pub type HitsWithEdges = (Vec<(LexicalHit, Node)>, EdgesWithEnds, Vec<StoredEvent>);

/// The first evidence reference of each of `nodes` that has one, once each.
pub fn first_evidence(nodes: &[Node]) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = nodes
        .iter()
        .filter_map(|n| n.evidence_refs.first().copied())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Runs `read` through its own method.
pub fn read_one<T: Tx + ?Sized>(tx: &mut T, read: &Read) -> Result<Answer, StoreError> {
    Ok(match read {
        Read::Search(q) => Answer::Hits(tx.search_lexical(q)?),
        Read::SearchNodes(q) => Answer::HitsWithNodes(tx.search_lexical_nodes(q)?),
        Read::SearchNodesWithEdges(q) => {
            let found = tx.search_lexical_nodes(q)?;
            let ids: Vec<Uuid> = found.iter().map(|(h, _)| h.node_id).collect();
            let edges = tx.edges_of_nodes_with_ends(&q.owner, &ids)?;
            let firsts = first_evidence(&edges.1);
            let mut events = tx.get_events(&q.owner, &firsts)?;
            events.sort_by_key(|e| e.seq);
            Answer::HitsWithEdges(found, edges, events)
        }
        Read::EdgesOf(owner, ids) => Answer::Edges(tx.edges_of_nodes(owner, ids)?),
        Read::SessionEvents(owner, sessions, limit) => {
            Answer::Events(tx.list_session_events(owner, sessions, *limit)?)
        }
        Read::NodesWithEvidence(q) => {
            let (nodes, events) = tx.list_nodes_with_evidence(q)?;
            Answer::NodesWithEvidence(nodes, events)
        }
        Read::OwnedNodes(owner, ids) => Answer::Nodes(tx.get_owned_nodes(owner, ids)?),
    })
}

/// [`crate::Tx::read_together`] one read after another.
pub fn read_in_turn<T: Tx + ?Sized>(tx: &mut T, reads: &[Read]) -> Result<Vec<Answer>, StoreError> {
    reads.iter().map(|r| read_one(tx, r)).collect()
}
