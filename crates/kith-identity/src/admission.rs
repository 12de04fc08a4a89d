//! Admission: which pairs of nodes the organizer may merge or alias-link,
//! and which node of a pair is kept.
//!
//! Pure functions over two node snapshots. The organizer (`kith::organize`)
//! runs them when it gathers candidates and again inside the transaction
//! that would publish a merge, so a pair admitted from a stale read is
//! never applied. Nothing a caller supplies (a label, a score) can make a
//! pair pass: the checks read only the nodes.

pub use crate::aliases::{
    alias_key, given_name_key, is_given_name_of, is_short_form_of, name_key, name_match,
    short_form_key, NameMatch, PairKind, ABBREVIATION_SCORE, GIVEN_NAME_SCORE, NAME_VARIANT_SCORE,
};
use kith_core::{canon, Node, NodeType};
use serde::Serialize;
use serde_json::Value;

/// The duplicate-merge policy this build applies (reported by `organize`).
pub const DUPLICATE_POLICY: &str = "exact_content_provenance_validity_v1";

/// The alias policy this build applies (reported by `organize`).
pub const ALIAS_POLICY: &str = "alias_names_v2";

/// Vector similarity at or above which two nodes become duplicate
/// candidates (they still need byte-equal content to merge).
pub const DUPLICATE_VECTOR_THRESHOLD: f64 = 0.92;
/// Vector similarity at or above which two entities become alias
/// candidates (alone, it only ever proposes).
pub const ALIAS_VECTOR_THRESHOLD: f64 = 0.85;

/// The alias-merge threshold unless a request sets another: a name match
/// must score at least this to merge.
pub const DEFAULT_ALIAS_THRESHOLD: f64 = 0.90;

/// What kind of merge a record is: an exact duplicate, or two names of
/// one entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeKind {
    /// Two copies of the same node.
    Duplicate,
    /// Two names of the same entity.
    Alias,
}

impl MergeKind {
    /// The stable text form (also part of the merge's operation id).
    pub fn as_str(self) -> &'static str {
        match self {
            MergeKind::Duplicate => "duplicate",
            MergeKind::Alias => "alias",
        }
    }
}

/// Why a pair is not admitted: a stable code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// Stable code (`different_metadata`, `personal_reference`, …).
    pub code: &'static str,
    /// What differs, for people.
    pub detail: String,
}

impl Refusal {
    /// A refusal with its stable code and a sentence.
    pub fn new(code: &'static str, detail: impl Into<String>) -> Self {
        Refusal {
            code,
            detail: detail.into(),
        }
    }
}

/// Whether both nodes are entities typed `person` (only people can match
/// by a given name).
pub fn both_people(a: &Node, b: &Node) -> bool {
    [a, b].iter().all(|n| {
        n.node_type == NodeType::Entity
            && metadata_field(n, "entity_type").and_then(Value::as_str) == Some("person")
    })
}

/// How two entities' names match ([`crate::aliases::name_match`]
/// over their contents and types).
pub fn names_of(a: &Node, b: &Node) -> Option<NameMatch> {
    name_match(&a.content, &b.content, both_people(a, b)).or_else(|| short_form_of(a, b))
}

/// [`NameMatch::ShortForm`] when one entity is a person and the other, a
/// person or untyped (`other` or blank), is one word that begins the
/// person's first name ("Mel" for "Melanie"): a nickname is proposed as an
/// alias of the person, never made a second person. And
/// [`NameMatch::GivenName`] when the untyped one is the person's first
/// name ("Jake" and "Jake Miller"): the heuristic types a name it cannot
/// place `other`, so "Hey Jake!" said to a speaker not yet seen is
/// proposed as that speaker when he speaks (two people are compared by
/// [`crate::aliases::name_match`]).
fn short_form_of(a: &Node, b: &Node) -> Option<NameMatch> {
    let is_person = |n: &Node| entity_type_of(n) == Some("person");
    let untyped = |n: &Node| matches!(entity_type_of(n), None | Some("" | "other"));
    let fits = |short: &Node, full: &Node| {
        if !is_person(full) || !(untyped(short) || is_person(short)) {
            return None;
        }
        if crate::aliases::is_short_form_of(&short.content, &full.content) {
            return Some(NameMatch::ShortForm);
        }
        (untyped(short) && crate::aliases::is_given_name_of(&short.content, &full.content))
            .then_some(NameMatch::GivenName)
    };
    fits(a, b).or_else(|| fits(b, a))
}

fn entity_type_of(n: &Node) -> Option<&str> {
    if n.node_type != NodeType::Entity {
        return None;
    }
    metadata_field(n, "entity_type").and_then(Value::as_str)
}

/// Whether `node` is a personal reference: an event-local "I"/"we"/…
/// entity, the owner's reference entity, or a legacy entity whose name is
/// a personal pronoun with no named type. These are never merged or
/// alias-linked: they are not canonical identities.
pub fn is_personal_reference(node: &Node) -> bool {
    if node.node_type != NodeType::Entity {
        return false;
    }
    let meta = |key: &str| {
        node.metadata
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
    };
    if matches!(
        meta("identity_status"),
        Some("unresolved_reference" | "owner_reference")
    ) || meta("entity_type") == Some("personal_reference")
    {
        return true;
    }
    crate::references::personal_family(&node.content, meta("entity_type")).is_some()
}

fn metadata_field<'a>(node: &'a Node, key: &str) -> Option<&'a Value> {
    node.metadata.as_ref().and_then(|m| m.get(key))
}

fn canonical(value: &Option<Value>) -> String {
    value
        .as_ref()
        .map(canon::to_canonical_string)
        .unwrap_or_else(|| "null".into())
}

/// The checks every organizer pair must pass: same owner, scope, node
/// type, source type, epistemic type, validity end, retention, pinning and
/// metadata; both active; no personal reference; and for duplicates also
/// the same session and event time
/// ([`crate::aliases::requires_same_provenance`]). kith nodes have no separate retention or pinning
/// fields: they live in metadata (`ttl_days`, `pinned`), so they are
/// checked by name first (for a precise reason) and again with the rest of
/// the metadata.
pub fn compatible(a: &Node, b: &Node, kind: PairKind) -> Result<(), Refusal> {
    // The order of the steps is the order of the refusals callers see.
    same_standing(a, b)?;
    same_types(a, b)?;
    // Session and event time: see `requires_same_provenance` for why
    // aliases are not held to them.
    if crate::aliases::requires_same_provenance(kind) {
        same_provenance(a, b)?;
    }
    same_validity_end(a, b)?;
    same_metadata(a, b)
}

/// Refuses a pair that is one node, spans owners or scopes, holds an
/// inactive node or holds a personal reference.
fn same_standing(a: &Node, b: &Node) -> Result<(), Refusal> {
    if a.id == b.id {
        return Err(Refusal::new("same_node", "a node cannot merge with itself"));
    }
    if a.owner_id != b.owner_id {
        return Err(Refusal::new(
            "different_owner",
            "the nodes have different owners",
        ));
    }
    if a.scope != b.scope {
        return Err(Refusal::new(
            "different_scope",
            format!("scopes {} and {}", a.scope, b.scope),
        ));
    }
    for n in [a, b] {
        if !n.lifecycle.is_active() {
            return Err(Refusal::new(
                "inactive",
                format!("node {} is {}", n.id, n.lifecycle),
            ));
        }
    }
    if is_personal_reference(a) || is_personal_reference(b) {
        return Err(Refusal::new(
            "personal_reference",
            "personal references and the owner's reference entity are never merged or aliased",
        ));
    }
    Ok(())
}

/// Refuses with `code` and "`what` x ≠ y" when the two renderings differ.
fn differ(code: &'static str, what: &str, x: String, y: String) -> Result<(), Refusal> {
    if x == y {
        Ok(())
    } else {
        Err(Refusal::new(code, format!("{what} {x} ≠ {y}")))
    }
}

/// An optional field's rendering in a refusal: its text, or "none".
fn or_none(t: Option<String>) -> String {
    t.unwrap_or_else(|| "none".into())
}

/// Refuses a pair whose node, source or epistemic types differ.
fn same_types(a: &Node, b: &Node) -> Result<(), Refusal> {
    differ(
        "different_node_type",
        "node type",
        a.node_type.to_string(),
        b.node_type.to_string(),
    )?;
    differ(
        "different_source_type",
        "source type",
        a.source_type.to_string(),
        b.source_type.to_string(),
    )?;
    differ(
        "different_epistemic_type",
        "epistemic type",
        a.epistemic_type.to_string(),
        b.epistemic_type.to_string(),
    )
}

/// Refuses a pair from different sessions or with different event times.
fn same_provenance(a: &Node, b: &Node) -> Result<(), Refusal> {
    differ(
        "different_session",
        "session",
        or_none(a.session_id.as_ref().map(|s| s.to_string())),
        or_none(b.session_id.as_ref().map(|s| s.to_string())),
    )?;
    // Instants compare, not text: one moment written in two offsets is the
    // same event time.
    if a.event_time != b.event_time {
        return Err(Refusal::new(
            "different_event_time",
            format!(
                "event time {} ≠ {}",
                or_none(a.event_time.map(|t| t.to_rfc3339())),
                or_none(b.event_time.map(|t| t.to_rfc3339()))
            ),
        ));
    }
    Ok(())
}

/// Refuses a pair whose validity ends differ.
fn same_validity_end(a: &Node, b: &Node) -> Result<(), Refusal> {
    if a.valid_to != b.valid_to {
        return Err(Refusal::new(
            "different_valid_to",
            format!(
                "validity end {} ≠ {}",
                or_none(a.valid_to.map(|t| t.to_rfc3339())),
                or_none(b.valid_to.map(|t| t.to_rfc3339()))
            ),
        ));
    }
    Ok(())
}

/// Refuses a pair whose retention, pinning or other metadata differ.
fn same_metadata(a: &Node, b: &Node) -> Result<(), Refusal> {
    // Retention and pinning first, by name, for a precise reason.
    for (code, key) in [
        ("different_retention", "ttl_days"),
        ("different_pinning", "pinned"),
    ] {
        if metadata_field(a, key) != metadata_field(b, key) {
            return Err(Refusal::new(code, format!("metadata.{key} differs")));
        }
    }
    if canonical(&a.metadata) != canonical(&b.metadata) {
        let which = match (
            metadata_field(a, "entity_type"),
            metadata_field(b, "entity_type"),
        ) {
            (x, y) if x != y => "entity type".to_string(),
            _ => {
                let keys = ["subject", "predicate"];
                match keys
                    .iter()
                    .find(|k| metadata_field(a, k) != metadata_field(b, k))
                {
                    Some(k) => format!("claim {k}"),
                    None => "metadata".to_string(),
                }
            }
        };
        return Err(Refusal::new(
            "different_metadata",
            format!("{which} differs"),
        ));
    }
    Ok(())
}

/// Whether two nodes are exact duplicates: compatible, and either named
/// entities with the same trimmed, case-insensitive name, or other nodes
/// with byte-equal content and the same validity start. Two observations
/// whose text differs only in case stay two.
pub fn admit_duplicate(a: &Node, b: &Node) -> Result<(), Refusal> {
    compatible(a, b, PairKind::Duplicate)?;
    if a.node_type == NodeType::Entity {
        if name_key(&a.content) != name_key(&b.content) {
            return Err(Refusal::new(
                "different_name",
                format!("names {:?} and {:?} differ", a.content, b.content),
            ));
        }
        return Ok(());
    }
    if a.content != b.content {
        return Err(Refusal::new(
            "different_content",
            "the texts are not byte-equal",
        ));
    }
    if a.valid_from != b.valid_from {
        return Err(Refusal::new(
            "different_valid_from",
            format!(
                "validity start {} ≠ {}",
                a.valid_from.to_rfc3339(),
                b.valid_from.to_rfc3339()
            ),
        ));
    }
    Ok(())
}

/// Whether two entities may be alias-linked at all (compatible, both
/// entities). The name decides between a merge and a proposal.
pub fn admit_alias(a: &Node, b: &Node) -> Result<(), Refusal> {
    let short_form = short_form_of(a, b).is_some();
    let given_name =
        both_people(a, b) && name_match(&a.content, &b.content, true) == Some(NameMatch::GivenName);
    if short_form || given_name {
        // A nickname's node is untyped where its person's is a person: their
        // types differ by nature. And the owner's mark is written once, on
        // the node a user turn made first: the speaker "Daniel" carries it,
        // the "Daniel Reyes" of his "Hey, I'm Daniel Reyes." does not. So
        // the metadata is compared without them (a given name's two nodes
        // are people both, so their types are still compared).
        let strip = |n: &Node| {
            let mut n = n.clone();
            if let Some(m) = n.metadata.as_mut().and_then(Value::as_object_mut) {
                if short_form {
                    m.remove("entity_type");
                }
                m.remove("owner_name");
            }
            n
        };
        compatible(&strip(a), &strip(b), PairKind::Alias)?;
        return Ok(());
    }
    compatible(a, b, PairKind::Alias)?;
    if a.node_type != NodeType::Entity {
        return Err(Refusal::new("not_entities", "aliases link entities only"));
    }
    Ok(())
}

/// The node a duplicate merge keeps: higher confidence, then more
/// evidence, then the older, then the smaller id. Returns `(keep, retire)`.
pub fn duplicate_canonical<'a>(a: &'a Node, b: &'a Node) -> (&'a Node, &'a Node) {
    let better = |x: &Node, y: &Node| {
        x.confidence
            .total_cmp(&y.confidence)
            .then(x.evidence_refs.len().cmp(&y.evidence_refs.len()))
            .then(y.created_at.cmp(&x.created_at))
            .then(y.id.cmp(&x.id))
    };
    if better(a, b).is_ge() {
        (a, b)
    } else {
        (b, a)
    }
}

/// The node an alias merge keeps: the longer name, then what
/// [`duplicate_canonical`] prefers. Returns `(keep, retire)`.
pub fn alias_canonical<'a>(a: &'a Node, b: &'a Node) -> (&'a Node, &'a Node) {
    let (la, lb) = (
        a.content.trim().chars().count(),
        b.content.trim().chars().count(),
    );
    match la.cmp(&lb) {
        std::cmp::Ordering::Greater => (a, b),
        std::cmp::Ordering::Less => (b, a),
        std::cmp::Ordering::Equal => duplicate_canonical(a, b),
    }
}
