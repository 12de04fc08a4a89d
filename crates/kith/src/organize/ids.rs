//! The organizer's deterministic ids (`uuid5(KITH_NS, name)`): records,
//! edges and pairs, documented in docs/organizer.md.

use super::MergeKind;
use kith_core::ids;
use uuid::Uuid;

/// The two ids of an unordered pair, smaller first.
pub fn ordered(x: Uuid, y: Uuid) -> (Uuid, Uuid) {
    if x <= y {
        (x, y)
    } else {
        (y, x)
    }
}

fn with_generation(name: String, generation: u32) -> Uuid {
    if generation == 0 {
        ids::v5_name(&name)
    } else {
        ids::v5_name(&format!("{name}:gen:{generation}"))
    }
}

/// `uuid5(KITH_NS, "op:organizer-merge:v1:{a}:{b}:{kind}[:gen:{n}]")`, `a < b`.
/// Generation `n > 0` exists only when generation `n - 1` was undone.
pub fn merge_op_id(x: Uuid, y: Uuid, kind: MergeKind, generation: u32) -> Uuid {
    let (a, b) = ordered(x, y);
    with_generation(
        format!("op:organizer-merge:v1:{a}:{b}:{}", kind.as_str()),
        generation,
    )
}

/// `uuid5(KITH_NS, "edge:transfer:v1:{edge}:{retired}:{keep}")`: the copy of
/// `edge` a merge of `retired` into `keep` publishes. The same merge always
/// names the same copy, so a copy left by an earlier attempt is recognised.
pub fn transfer_edge_id(edge: Uuid, retired: Uuid, keep: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:transfer:v1:{edge}:{retired}:{keep}"))
}

/// `uuid5(KITH_NS, "edge:organizer-supersedes:v1:{keep}:{retired}")`: the one
/// SUPERSEDES edge of a merge.
pub fn merge_supersedes_edge_id(keep: Uuid, retired: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:organizer-supersedes:v1:{keep}:{retired}"))
}

/// `uuid5(KITH_NS, "op:alias-proposal:v1:{a}:{b}")`, `a < b`.
pub fn proposal_op_id(x: Uuid, y: Uuid) -> Uuid {
    let (a, b) = ordered(x, y);
    ids::v5_name(&format!("op:alias-proposal:v1:{a}:{b}"))
}

/// `uuid5(KITH_NS, "edge:alias-proposal:v1:{proposal_op}")`: the unverified
/// RELATES_TO edge of a proposal.
pub fn proposal_edge_id(proposal: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:alias-proposal:v1:{proposal}"))
}

/// `uuid5(KITH_NS, "op:alias-review:v1:{proposal_op}[:gen:{n}]")`: the one
/// decision on a proposal (generation `n > 0` only after an undone accept).
pub fn review_op_id(proposal: Uuid, generation: u32) -> Uuid {
    with_generation(format!("op:alias-review:v1:{proposal}"), generation)
}

/// `uuid5(KITH_NS, "edge:alias-verified:v1:{review_op}")`: the verified alias
/// edge an acceptance publishes.
pub fn verified_edge_id(review: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:alias-verified:v1:{review}"))
}

/// `uuid5(KITH_NS, "op:undo:v1:{op}")`: the undo of a record.
pub fn undo_op_id(op: Uuid) -> Uuid {
    ids::v5_name(&format!("op:undo:v1:{op}"))
}
