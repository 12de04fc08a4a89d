//! One thing, one node, whatever its kind.
//!
//! An entity's id is derived from its type and name, so one name typed two
//! ways is two nodes. `kith_ingest_v4` made that safe for people: a person
//! adopts the untyped node of their name. Other kinds had no such rule, and
//! the heuristic extractor types a name only where a pattern tells it what
//! the name is: "I work at Figma." makes Figma an organization, and a later
//! "So you work at Figma now?" or "Figma is great." mentions it untyped
//! (`other`) — a second Figma, holding half of what was said about it.
//! Under `kith_ingest_v9`:
//!
//! - an entity of any type adopts the untyped node of its name when the
//!   name has no node of that type yet ([`typed_node`]; the person rule,
//!   for every type);
//! - an untyped mention is the one node its name has among
//!   [`NAMED_TYPES`], when it has exactly one and no untyped node of its
//!   own ([`untyped_mention`]).
//!
//! Namesakes of two real types (Jordan the person and Jordan the country)
//! stay apart, and an untyped mention of such a name stays its own node:
//! which one it means, the words do not say.

use crate::policy::Policy;

/// The entity types that say nothing of what a name is: a mention nobody
/// typed. Any other type was meant.
pub const UNTYPED: &[&str] = &["other", ""];

/// The types an untyped mention may turn out to be (the extraction
/// prompt's list): a name with a node of exactly one of them is that node.
pub const NAMED_TYPES: [&str; 7] = [
    "person",
    "organization",
    "place",
    "product",
    "project",
    "pet",
    "event",
];

/// An active entity the owner's scope has under a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredName {
    /// The type its id was derived under (`person`, `other`, blank, …).
    pub id_type: String,
    /// The `entity_type` its metadata says now (the adopter's type once
    /// adopted).
    pub entity_type: String,
}

/// Which node an entity of a type and name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypedNode {
    /// `stored[i]` is its node: stored under its type, or an untyped node
    /// an entity of its type adopted earlier.
    Existing(usize),
    /// `stored[i]` is an untyped mention of the name: the entity adopts it,
    /// and it is typed from now on.
    Adopt(usize),
    /// No node is its yet: a new entity.
    New,
}

fn norm(s: &str) -> String {
    s.trim().to_lowercase()
}

fn is_untyped(s: &str) -> bool {
    UNTYPED.contains(&norm(s).as_str())
}

/// Which of `stored` (the active entities of one name in the owner's
/// scope) an entity typed `wanted` is. The node stored under `wanted`
/// first; then, once the policy has the rule (`kith_ingest_v4` for a
/// person, `kith_ingest_v9` for any other type), an untyped node already
/// adopted as `wanted`, then an untyped node nobody adopted (the oldest
/// spelling of the list wins, so the engine lists `other` before blank).
pub fn typed_node(stored: &[StoredName], wanted: &str, policy: Policy) -> TypedNode {
    let wanted = norm(wanted);
    if let Some(i) = stored.iter().position(|s| norm(&s.id_type) == wanted) {
        return TypedNode::Existing(i);
    }
    let adopts = if wanted == "person" {
        policy.has_v4_rules()
    } else {
        policy.has_v9_rules() && !is_untyped(&wanted)
    };
    if !adopts {
        return TypedNode::New;
    }
    if let Some(i) = stored
        .iter()
        .position(|s| is_untyped(&s.id_type) && norm(&s.entity_type) == wanted)
    {
        return TypedNode::Existing(i);
    }
    // A node another type adopted is that type's (none exist before
    // `kith_ingest_v9`, so older policies read the same).
    match stored
        .iter()
        .position(|s| is_untyped(&s.id_type) && is_untyped(&s.entity_type))
    {
        Some(i) => TypedNode::Adopt(i),
        None => TypedNode::New,
    }
}

/// Which of `typed` (the active nodes a name has under the
/// [`NAMED_TYPES`]) an untyped mention of it is (`kith_ingest_v9`): the
/// only one, when there is exactly one; `None` for none or several.
pub fn untyped_mention(typed: &[StoredName]) -> Option<usize> {
    match typed {
        [_] => Some(0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(list: &[(&str, &str)]) -> Vec<StoredName> {
        list.iter()
            .map(|(id_type, entity_type)| StoredName {
                id_type: id_type.to_string(),
                entity_type: entity_type.to_string(),
            })
            .collect()
    }

    #[test]
    fn any_type_adopts_the_untyped_node_of_its_name_under_v9() {
        use TypedNode::*;
        /// (id type, metadata type) of each stored node.
        type Stored<'a> = &'a [(&'a str, &'a str)];
        // (wanted, stored, under v9, under v8)
        let table: &[(&str, Stored, TypedNode, TypedNode)] = &[
            ("organization", &[], New, New),
            ("organization", &[("other", "other")], Adopt(0), New),
            ("place", &[("", "")], Adopt(0), New),
            (
                "organization",
                &[("organization", "organization")],
                Existing(0),
                Existing(0),
            ),
            // Adopted earlier: it is that type's now.
            (
                "organization",
                &[("other", "organization")],
                Existing(0),
                New,
            ),
            // Adopted by another type: not this one's, under any policy
            // (only `kith_ingest_v9` adopts for types but person).
            ("place", &[("other", "organization")], New, New),
            ("person", &[("other", "organization")], New, New),
            // The person rule is v4's, unchanged.
            ("person", &[("other", "other")], Adopt(0), Adopt(0)),
            ("person", &[("other", "person")], Existing(0), Existing(0)),
            // Untyped wants no adoption.
            ("other", &[("", "")], New, New),
        ];
        for (wanted, have, v9, v8) in table {
            let have = stored(have);
            assert_eq!(
                typed_node(&have, wanted, Policy::V9),
                *v9,
                "{wanted} {have:?}"
            );
            assert_eq!(
                typed_node(&have, wanted, Policy::V8),
                *v8,
                "{wanted} {have:?}"
            );
        }
    }

    #[test]
    fn an_untyped_mention_is_the_one_typed_node_of_its_name() {
        assert_eq!(untyped_mention(&stored(&[])), None);
        assert_eq!(
            untyped_mention(&stored(&[("organization", "organization")])),
            Some(0)
        );
        // Jordan the person and Jordan the country: which one, no word says.
        assert_eq!(
            untyped_mention(&stored(&[("person", "person"), ("place", "place")])),
            None
        );
    }
}
