//! `subject_claims`'s predicate match, shared by both backends: SQL selects
//! a superset (its own key where that key is exact, every row where it may
//! not be), and [`keep_matching`] keeps the rows whose key, by the one
//! definition ([`kith_core::text::normalize_predicate`]), is asked for.

use std::collections::HashSet;

use kith_core::text::normalize_predicate;
use kith_core::Node;

/// The wanted keys, normalised (a caller may pass `"Works at"`).
pub(crate) fn keys(predicates: &[String]) -> Vec<String> {
    let mut keys: Vec<String> = predicates.iter().map(|p| normalize_predicate(p)).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The nodes whose `metadata.predicate` normalises to one of `keys`.
pub(crate) fn keep_matching(nodes: Vec<Node>, keys: &[String]) -> Vec<Node> {
    let wanted: HashSet<&str> = keys.iter().map(String::as_str).collect();
    nodes
        .into_iter()
        .filter(|n| {
            n.metadata
                .as_ref()
                .and_then(|m| m.get("predicate"))
                .and_then(|p| p.as_str())
                .is_some_and(|p| wanted.contains(normalize_predicate(p).as_str()))
        })
        .collect()
}
