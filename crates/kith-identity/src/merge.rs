//! What one organizer merge decides, given the two nodes as the publishing
//! transaction read them: whether they may merge and which one is kept
//! ([`admit`]), and what the merge changes ([`merged`]: the kept node gains
//! the retired one's evidence and the retired one is superseded by it;
//! [`copied_edges`]: the retired node's relationships move to the kept
//! one). The engine (`kith::organize::merge`) reads, asks, and writes.

use kith_core::{Edge, Lifecycle, Node, Timestamp};
use uuid::Uuid;

use crate::admission::{self, MergeKind, Refusal};

/// A pair [`admit`] lets merge.
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted<'a> {
    /// Why: `exact_copy` for a duplicate, the name match for an alias.
    pub basis: String,
    /// The node that stays.
    pub keep: &'a Node,
    /// The node superseded by it.
    pub retired: &'a Node,
}

/// Whether `a` and `b` may merge as `kind`, re-admitted on what the
/// transaction read whatever a caller saw or labelled: a duplicate by
/// [`admission::admit_duplicate`], an alias by [`admission::admit_alias`]
/// and a name match that may merge and scores at least `alias_threshold`.
/// The kept node is the canonical one of the pair.
pub fn admit<'a>(
    kind: MergeKind,
    a: &'a Node,
    b: &'a Node,
    alias_threshold: f64,
) -> Result<Admitted<'a>, Refusal> {
    match kind {
        MergeKind::Duplicate => {
            admission::admit_duplicate(a, b)?;
            let (keep, retired) = admission::duplicate_canonical(a, b);
            Ok(Admitted {
                basis: "exact_copy".into(),
                keep,
                retired,
            })
        }
        MergeKind::Alias => {
            admission::admit_alias(a, b)?;
            let Some(names) = admission::names_of(a, b).filter(|m| m.may_merge()) else {
                return Err(Refusal::new(
                    "different_name",
                    format!(
                        "{:?} and {:?} are not a known abbreviation, case variant or equal normalised name",
                        a.content, b.content
                    ),
                ));
            };
            if names.score() < alias_threshold {
                return Err(Refusal::new(
                    "below_threshold",
                    format!("name match scores {} < {}", names.score(), alias_threshold),
                ));
            }
            let (keep, retired) = admission::alias_canonical(a, b);
            Ok(Admitted {
                basis: names.as_str().to_string(),
                keep,
                retired,
            })
        }
    }
}

/// The two nodes after the merge, at `now`: `keep` with the evidence of
/// both (its own first, then the retired one's it lacked), and `retired`
/// superseded by `keep`.
pub fn merged(keep: &Node, retired: &Node, now: Timestamp) -> (Node, Node) {
    let mut keep_after = keep.clone();
    for r in &retired.evidence_refs {
        if !keep_after.evidence_refs.contains(r) {
            keep_after.evidence_refs.push(*r);
        }
    }
    keep_after.updated_at = now;
    let mut retired_after = retired.clone();
    retired_after.lifecycle = Lifecycle::Superseded;
    retired_after.superseded_by = Some(keep.id);
    retired_after.updated_at = now;
    (keep_after, retired_after)
}

/// The retired node's relationships moved to the kept one: each edge of
/// `original` copied under `copy_id(edge)` with the retired endpoint
/// replaced by `keep`, everything else kept. An edge between the two nodes
/// would become a self-loop: it is not copied, and its id is returned
/// second.
pub fn copied_edges(
    original: &[Edge],
    retired: Uuid,
    keep: Uuid,
    copy_id: impl Fn(&Edge) -> Uuid,
) -> (Vec<Edge>, Vec<Uuid>) {
    let mut copies = Vec::new();
    let mut collapsed = Vec::new();
    for e in original {
        let mut copy = e.clone();
        copy.id = copy_id(e);
        if copy.source_id == retired {
            copy.source_id = keep;
        }
        if copy.target_id == retired {
            copy.target_id = keep;
        }
        if copy.source_id == copy.target_id {
            collapsed.push(e.id);
        } else {
            copies.push(copy);
        }
    }
    (copies, collapsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith_core::{EdgeType, EpistemicType, NodeType, OwnerId, ScopeId, SourceType};

    fn at(text: &str) -> Timestamp {
        Timestamp::parse("t", text).unwrap()
    }

    fn entity(name: &str, evidence: &[Uuid]) -> Node {
        let t = at("2026-01-01T00:00:00Z");
        Node {
            id: Uuid::new_v4(),
            owner_id: OwnerId::new("o").unwrap(),
            scope: ScopeId::personal(),
            session_id: None,
            node_type: NodeType::Entity,
            content: name.into(),
            metadata: None,
            confidence: 0.5,
            lifecycle: Lifecycle::Stable,
            epistemic_type: EpistemicType::Asserted,
            source_type: SourceType::UserStated,
            valid_from: t,
            valid_to: None,
            event_time: None,
            superseded_by: None,
            evidence_refs: evidence.to_vec(),
            created_at: t,
            updated_at: t,
        }
    }

    fn edge(source: Uuid, target: Uuid) -> Edge {
        let t = at("2026-01-01T00:00:00Z");
        Edge {
            id: Uuid::new_v4(),
            owner_id: OwnerId::new("o").unwrap(),
            scope: ScopeId::personal(),
            source_id: source,
            target_id: target,
            edge_type: EdgeType::Mentions,
            confidence: 0.9,
            valid_from: t,
            valid_to: None,
            provenance_event_id: None,
            metadata: None,
            created_at: t,
        }
    }

    #[test]
    fn an_alias_merges_on_a_name_that_may_merge_above_the_threshold() {
        let (short, long) = (entity("JS", &[]), entity("JavaScript", &[]));
        let admitted = admit(MergeKind::Alias, &short, &long, 0.90).expect("an abbreviation");
        // The longer name is kept.
        assert_eq!(admitted.keep.id, long.id);
        assert_eq!(admitted.retired.id, short.id);
        assert_eq!(admitted.basis, "abbreviation");

        let refusal = admit(MergeKind::Alias, &short, &long, 0.99).expect_err("over the score");
        assert_eq!(refusal.code, "below_threshold");
        // A given name alone proposes, never merges.
        let (given, full) = (entity("Jordan", &[]), entity("Jordan Lee", &[]));
        let refusal = admit(MergeKind::Alias, &given, &full, 0.0).expect_err("a given name");
        assert_eq!(refusal.code, "different_name");
        // Duplicate entities need the same name; the threshold is not
        // theirs.
        let refusal = admit(MergeKind::Duplicate, &short, &long, 0.0).expect_err("not a copy");
        assert_eq!(refusal.code, "different_name");
        let again = entity("javascript", &[]);
        let admitted = admit(MergeKind::Duplicate, &long, &again, 1.0).expect("the same name");
        assert_eq!(admitted.basis, "exact_copy");
    }

    #[test]
    fn a_merge_unions_evidence_and_supersedes_the_retired_node() {
        let (e1, e2, e3) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let keep = entity("JavaScript", &[e1, e2]);
        let retired = entity("JS", &[e2, e3]);
        let now = at("2026-02-01T00:00:00Z");
        let (keep_after, retired_after) = merged(&keep, &retired, now);
        assert_eq!(keep_after.evidence_refs, vec![e1, e2, e3]);
        assert_eq!(keep_after.updated_at, now);
        assert_eq!(keep_after.lifecycle, keep.lifecycle);
        assert_eq!(retired_after.lifecycle, Lifecycle::Superseded);
        assert_eq!(retired_after.superseded_by, Some(keep.id));
        assert_eq!(retired_after.evidence_refs, retired.evidence_refs);
    }

    #[test]
    fn relationships_move_and_a_self_loop_is_dropped() {
        let (keep, retired, other) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let out = edge(retired, other);
        let inbound = edge(other, retired);
        let between = edge(keep, retired);
        let (copies, collapsed) = copied_edges(
            &[out.clone(), inbound.clone(), between.clone()],
            retired,
            keep,
            |e| Uuid::from_u128(e.id.as_u128() ^ 1),
        );
        assert_eq!(collapsed, vec![between.id]);
        assert_eq!(copies.len(), 2);
        assert_eq!((copies[0].source_id, copies[0].target_id), (keep, other));
        assert_eq!((copies[1].source_id, copies[1].target_id), (other, keep));
        assert_eq!(copies[0].id, Uuid::from_u128(out.id.as_u128() ^ 1));
        assert_eq!(copies[1].confidence, inbound.confidence);
    }
}
