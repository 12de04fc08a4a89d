//! The request's filters on candidates found outside the store's own
//! searches (graph, neighbour, recency and current-fact candidates), the
//! filters of the vector search, and narrowing a time range.

use kith_core::{Node, NodeType, Timestamp};
use kith_store::{SearchFilters, StoredEvent};

/// Whether a node found outside the store's own search passes the
/// request's filters (the lexical and vector paths filter in the store),
/// `event` being its source event.
pub(super) fn admitted(f: &SearchFilters, node: &Node, event: Option<&StoredEvent>) -> bool {
    let active_then = match f.as_of {
        Some(t) => {
            node.created_at.unix_millis() <= t.unix_millis()
                && (node.lifecycle.is_active() || node.updated_at.unix_millis() > t.unix_millis())
        }
        None => node.lifecycle.is_active(),
    };
    let lifecycle_ok = if f.lifecycles.is_empty() {
        active_then
    } else {
        f.lifecycles.contains(&node.lifecycle)
    };
    let effective = event.map(|e| e.event.effective_time().unix_millis());
    lifecycle_ok
        && f.scope.as_ref().is_none_or(|s| s == &node.scope)
        && f.session
            .as_ref()
            .is_none_or(|s| event.and_then(|e| e.event.session_id.as_ref()) == Some(s))
        && (f.roles.is_empty() || event.is_some_and(|e| f.roles.contains(&e.event.role)))
        && (f.node_types.is_empty() || f.node_types.contains(&node.node_type))
        && f.time_from
            .is_none_or(|t| effective.is_some_and(|ms| ms >= t.unix_millis()))
        && f.time_to
            .is_none_or(|t| effective.is_some_and(|ms| ms < t.unix_millis()))
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
