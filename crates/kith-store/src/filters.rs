//! What [`SearchFilters`] admit: the one definition, in Rust.
//!
//! Each backend's SQL (`sqlite/lexical.rs` and `postgres/search.rs`, both
//! `apply_filters`) says the same thing over a node's row, and the engine
//! applies [`SearchFilters::admits`] to what it finds outside the store's
//! searches (graph, neighbour, recency and current-fact candidates). The
//! conformance suite's `filtered_searches_admit_what_the_rule_admits`
//! generates notes and filters and checks that each backend's lexical and
//! vector searches return exactly what this rule admits, so the SQL cannot
//! drift from it silently.
//!
//! The facts the rule reads are the node's (scope, session, type,
//! lifecycle, creation and update times) and its **source event's** (the
//! first evidence reference: its role, and its event time, else its
//! ingestion time). A node whose source event is unknown has no role and no
//! time, so a role or time filter never admits it.

use kith_core::{Event, Lifecycle, Node};

use crate::query::SearchFilters;

impl SearchFilters {
    /// Whether these filters admit `node`, whose source event (its first
    /// evidence reference) is `source` (`None` when it has none or it is
    /// not known).
    ///
    /// - `scope`, `session`, `node_types`: the node's own, equal to the
    ///   filter (`session` compares the node's session, which is its
    ///   source event's for every node kith derives from one).
    /// - `roles`: the source event's role is one of them.
    /// - `time_from` ≤ effective time < `time_to`, the effective time being
    ///   the source event's [`Event::effective_time`].
    /// - `lifecycles` (empty: the active states) without `as_of`: the
    ///   node's lifecycle is one of them.
    /// - with `as_of`: the node was created at or before it, and its state
    ///   then is one asked for. kith only ever changes an active node
    ///   (retiring or superseding it), so a node updated after `as_of` was
    ///   active then: it is admitted when an active state is asked for,
    ///   and not when only inactive ones are.
    pub fn admits(&self, node: &Node, source: Option<&Event>) -> bool {
        let effective = source.map(|e| e.effective_time().unix_millis());
        self.scope.as_ref().is_none_or(|s| s == &node.scope)
            && self
                .session
                .as_ref()
                .is_none_or(|s| node.session_id.as_ref() == Some(s))
            && (self.roles.is_empty() || source.is_some_and(|e| self.roles.contains(&e.role)))
            && (self.node_types.is_empty() || self.node_types.contains(&node.node_type))
            && self
                .time_from
                .is_none_or(|t| effective.is_some_and(|ms| ms >= t.unix_millis()))
            && self
                .time_to
                .is_none_or(|t| effective.is_some_and(|ms| ms < t.unix_millis()))
            && self.admits_lifecycle(node)
    }

    /// The lifecycle part of [`SearchFilters::admits`] (with `as_of`).
    fn admits_lifecycle(&self, node: &Node) -> bool {
        let asked = |l: Lifecycle| {
            if self.lifecycles.is_empty() {
                l.is_active()
            } else {
                self.lifecycles.contains(&l)
            }
        };
        let Some(as_of) = self.as_of else {
            return asked(node.lifecycle);
        };
        let t = as_of.unix_millis();
        let changed_since = node.updated_at.unix_millis() > t;
        let wants_active = Lifecycle::ALL.iter().any(|l| l.is_active() && asked(*l));
        node.created_at.unix_millis() <= t
            && if wants_active {
                asked(node.lifecycle) || changed_since
            } else {
                asked(node.lifecycle) && !changed_since
            }
    }

    /// The lifecycle states these filters ask for: `lifecycles`, or the
    /// active states when it is empty (what the backends' SQL binds).
    pub fn lifecycle_states(&self) -> Vec<Lifecycle> {
        if self.lifecycles.is_empty() {
            Lifecycle::ALL
                .iter()
                .copied()
                .filter(|l| l.is_active())
                .collect()
        } else {
            self.lifecycles.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use kith_core::{EventInput, NodeType, ScopeId, Timestamp};

    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse("t", text).unwrap()
    }

    fn event(event_time: Option<&str>) -> Event {
        let input = EventInput {
            content: "hello".into(),
            role: "user".into(),
            owner_id: Some("o".into()),
            source_id: Some("s".into()),
            event_time: event_time.map(str::to_string),
            ..EventInput::default()
        };
        let defaults = kith_core::event::InputDefaults {
            owner_id: None,
            scope: ScopeId::personal(),
            now: at("2026-01-01T00:00:00Z"),
        };
        input.validate(&defaults).unwrap().event
    }

    #[test]
    fn no_filter_admits_active_nodes_only() {
        let e = event(None);
        let mut n = Node::note_for(&e, NodeType::Note);
        let f = SearchFilters::default();
        assert!(f.admits(&n, Some(&e)));
        n.lifecycle = Lifecycle::Archived;
        assert!(!f.admits(&n, Some(&e)));
        let archived = SearchFilters {
            lifecycles: vec![Lifecycle::Archived],
            ..SearchFilters::default()
        };
        assert!(archived.admits(&n, Some(&e)));
    }

    #[test]
    fn roles_and_times_need_the_source_event() {
        let e = event(Some("2026-03-01T10:00:00Z"));
        let n = Node::note_for(&e, NodeType::Note);
        let from = SearchFilters {
            time_from: Some(at("2026-03-01T10:00:00Z")),
            ..SearchFilters::default()
        };
        assert!(from.admits(&n, Some(&e)));
        assert!(!from.admits(&n, None));
        let before = SearchFilters {
            time_to: Some(at("2026-03-01T10:00:00Z")),
            ..SearchFilters::default()
        };
        assert!(!before.admits(&n, Some(&e)), "time_to is exclusive");
        let users = SearchFilters {
            roles: vec![e.role],
            ..SearchFilters::default()
        };
        assert!(users.admits(&n, Some(&e)));
        assert!(!users.admits(&n, None));
        let other_scope = SearchFilters {
            scope: Some(ScopeId::new("work").unwrap()),
            ..SearchFilters::default()
        };
        assert!(!other_scope.admits(&n, Some(&e)));
    }

    #[test]
    fn as_of_sees_a_node_as_it_was_then() {
        let e = event(None);
        let mut n = Node::note_for(&e, NodeType::Note);
        n.created_at = at("2026-01-01T00:00:00Z");
        n.updated_at = at("2026-02-01T00:00:00Z");
        n.lifecycle = Lifecycle::Superseded;
        let then = |t: &str, lifecycles: Vec<Lifecycle>| SearchFilters {
            as_of: Some(at(t)),
            lifecycles,
            ..SearchFilters::default()
        };
        // Superseded after as_of: active then.
        assert!(then("2026-01-15T00:00:00Z", vec![]).admits(&n, Some(&e)));
        assert!(!then("2026-01-15T00:00:00Z", vec![Lifecycle::Superseded]).admits(&n, Some(&e)));
        // Not yet created.
        assert!(!then("2025-12-31T00:00:00Z", vec![]).admits(&n, Some(&e)));
        // Superseded before as_of: as it is now.
        assert!(!then("2026-03-01T00:00:00Z", vec![]).admits(&n, Some(&e)));
        assert!(then("2026-03-01T00:00:00Z", vec![Lifecycle::Superseded]).admits(&n, Some(&e)));
    }
}
