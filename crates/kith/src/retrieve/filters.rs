//! The request's filters on candidates found outside the store's own
//! searches (graph, neighbour, recency and current-fact candidates: the
//! store's rule, [`SearchFilters::admits`]), the filters of the vector
//! search, and narrowing a time range.

use kith_core::{Node, NodeType, Timestamp};
use kith_store::{SearchFilters, StoredEvent};

/// Whether a node found outside the store's own searches passes the
/// request's filters, `event` being its source event: the store's one
/// definition ([`SearchFilters::admits`]), so these candidates are
/// filtered exactly as the lexical and vector paths are in SQL.
pub(super) fn admitted(f: &SearchFilters, node: &Node, event: Option<&StoredEvent>) -> bool {
    f.admits(node, event.map(|e| &e.event))
}

/// The filters of a vector search. Entities have vectors for the
/// organizer's alias proposals; a question's vector hits are memories
/// unless entities are asked for, so entity vectors never take a note's
/// place in the pool.
pub(super) fn vector_filters(filters: &SearchFilters) -> SearchFilters {
    let mut f = filters.clone();
    if f.node_types.is_empty() {
        f.node_types = NodeType::ALL
            .iter()
            .copied()
            .filter(|t| *t != NodeType::Entity)
            .collect();
    }
    f
}

/// The later of two optional times (a range's narrower start).
pub(super) fn max_time(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a.unix_millis() >= b.unix_millis() {
            a
        } else {
            b
        }),
        (a, b) => a.or(b),
    }
}

/// The earlier of two optional times (a range's narrower end).
pub(super) fn min_time(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a.unix_millis() <= b.unix_millis() {
            a
        } else {
            b
        }),
        (a, b) => a.or(b),
    }
}
