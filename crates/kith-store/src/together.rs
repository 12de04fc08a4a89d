//! Reads that do not depend on each other, handed to the store together
//! ([`crate::Tx::read_together`]) so a server backend can answer them in
//! one round trip instead of one each. Each [`Read`] is one of the `Tx`
//! methods, and its [`Answer`] is exactly what that method returns: the
//! default runs them one after another (SQLite, which has no round trips),
//! PostgreSQL in one statement (`postgres/together.rs`).

use kith_core::{Node, OwnerId};
use uuid::Uuid;

use crate::{LexicalHit, LexicalQuery, NodeQuery, StoreError, StoredEvent, StoredNode, Tx};

/// One read of [`crate::Tx::read_together`], named for the method it stands
/// for.
#[derive(Debug, Clone)]
pub enum Read {
    /// [`crate::Tx::search_lexical`].
    Search(LexicalQuery),
    /// [`crate::Tx::search_lexical_nodes`].
    SearchNodes(LexicalQuery),
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

/// Runs `read` through its own method.
pub fn read_one<T: Tx + ?Sized>(tx: &mut T, read: &Read) -> Result<Answer, StoreError> {
    Ok(match read {
        Read::Search(q) => Answer::Hits(tx.search_lexical(q)?),
        Read::SearchNodes(q) => Answer::HitsWithNodes(tx.search_lexical_nodes(q)?),
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
