//! Derivation plans: the deterministic list of graph writes that one event
//! and its grounded extraction produce under a named policy.
//!
//! A plan is data: built from the event, the grounded extraction and what
//! the store holds for the entity ids it would use; saved as a
//! `DERIVATION_PREPARED` journal record with its SHA-256; committed later in
//! one transaction that re-checks it. Ids are UUIDv5 of documented inputs
//! (docs/internals/formats.md), and node timestamps come from the event, never the
//! clock, so the same inputs always give the same bytes.

use kith_core::model::base_confidence;
use kith_core::{
    canon, ids, Edge, EdgeType, EpistemicType, Event, Lifecycle, Node, NodeType, OwnerId, ScopeId,
    SourceType,
};
use kith_extract::grounding::{
    Dropped, EndpointRef, Grounded, GroundedFact, GroundedRelationship, Reported,
};
use kith_extract::{FactType, Polarity};
use kith_identity::claims::{self, ClaimView};
use kith_identity::kinds::{self, TypedNode};
use kith_identity::persons;
use kith_identity::{Basis, FirstPerson, IdentityOptions, Policy};
use kith_store::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use uuid::Uuid;

/// The materialisation policy this build writes for new extractions
/// ([`Policy::CURRENT`]). A rule change that would change a plan's bytes
/// gets a new policy name; saved plans keep theirs, and a saved extraction
/// is planned under the policy it was saved under (`kith_identity::policy`).
///
/// History: `kith_ingest_v1` (entities, claims, event-local references);
/// `kith_ingest_v2` adds the identity rules: first-person binding (speaker,
/// self-introduction, first-person owner), claim merge and supersedence;
/// `kith_ingest_v3`: quotes, reported speech and possible people keep "I"
/// off the owner, name-like introductions, known people typed `person`,
/// all-or-nothing group links read past openers, attempts and intentions
/// need a non-actual predicate; `kith_ingest_v4`: a person adopts the
/// untyped entity of their name (one person, one node in either order);
/// `kith_ingest_v5`: a first person inside quotation marks stays local;
/// `kith_ingest_v6`: so does one reported after a colon ("Dev says: I'm…",
/// "Dev: I hate sushi"); `kith_ingest_v7`: a claim of such a sentence
/// whose first person and other endpoint stand in the author's own words
/// ("My boss Karen said \"…\"" → `I has_boss Karen`) binds again;
/// `kith_ingest_v8`: a claim in someone else's reported words ("Dev says
/// Ana loves sushi") is unverified, names its reporter and supersedes
/// nothing; `kith_ingest_v9`: a quoted first person a reporting frame gives
/// to a named person ("Dev says \"I love sushi\"") is that person's, and
/// one thing has one node whatever its kind (an organization adopts the
/// untyped mention of its name, and a later untyped mention is it), and a
/// speaker introducing themselves by part of their name is the speaker.
pub const POLICY: &str = Policy::CURRENT.name();

/// What the commit does with a planned node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeAction {
    /// Insert it (an existing active node with the same id is reused as is:
    /// its id already encodes the same identity).
    Create,
    /// It exists; commit checks it is unchanged (same checksum) and active.
    Reuse {
        /// [`Node::checksum`] when planned.
        checksum: String,
    },
    /// It exists and changes (a claim superseded or merged into a new one);
    /// commit checks it is unchanged since planning, then writes `node`.
    Update {
        /// [`Node::checksum`] of the node as planned against.
        before: String,
    },
}

/// A node in a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedNode {
    /// Create or reuse.
    pub action: NodeAction,
    /// The node (for a reuse, the snapshot it was planned against).
    pub node: Node,
}

/// A deterministic derivation plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DerivationPlan {
    /// The policy that built it ([`POLICY`] for new extractions, else the
    /// policy its saved extraction was saved under).
    pub policy: String,
    /// 1 for the first plan of an event; replans count up.
    pub revision: u32,
    /// The source event.
    pub event_id: Uuid,
    /// Its owner.
    pub owner_id: OwnerId,
    /// Its scope.
    pub scope: ScopeId,
    /// The event content's SHA-256 (a plan never applies to other text).
    pub content_sha256: String,
    /// The saved extraction it was built from.
    pub extraction_id: Uuid,
    /// Entities, then claims, in a stable order.
    pub nodes: Vec<PlannedNode>,
    /// HAS_FACT and MENTIONS edges.
    pub edges: Vec<Edge>,
    /// Claims grounding refused, with reasons.
    pub dropped: Vec<Dropped>,
    /// The identity options the plan was built under.
    pub identity: IdentityOptions,
}

impl DerivationPlan {
    /// SHA-256 of the plan's canonical JSON.
    pub fn checksum(&self) -> String {
        canon::checksum(&serde_json::to_value(self).unwrap_or(Value::Null))
    }
}

/// `uuid5(KITH_NS, "op:extraction:v1:{event_id}")`: the saved extraction.
pub fn extraction_op_id(event_id: Uuid) -> Uuid {
    ids::v5_name(&format!("op:extraction:v1:{event_id}"))
}

/// `uuid5(KITH_NS, "op:plan:v1:{event_id}:{revision}")`: a saved plan.
pub fn plan_op_id(event_id: Uuid, revision: u32) -> Uuid {
    ids::v5_name(&format!("op:plan:v1:{event_id}:{revision}"))
}

/// `uuid5(KITH_NS, "op:receipt:v1:{event_id}:{revision}")`: a commit receipt.
pub fn receipt_op_id(event_id: Uuid, revision: u32) -> Uuid {
    ids::v5_name(&format!("op:receipt:v1:{event_id}:{revision}"))
}

/// `uuid5(KITH_NS, "op:stale-plan:v1:{event_id}:{revision}")`: marks a saved
/// plan that went stale before its commit.
pub fn stale_op_id(event_id: Uuid, revision: u32) -> Uuid {
    ids::v5_name(&format!("op:stale-plan:v1:{event_id}:{revision}"))
}

/// `uuid5(KITH_NS, "entity:v1:{len}:{owner}:{len}:{scope}:{len}:{type}:{len}:{key}[:gen:{n}]")`
/// where key is the trimmed, lower-cased name. Generation `n > 0` is used
/// only when the id of generation `n - 1` belongs to a retired node, which
/// is never reused.
pub fn named_entity_id(
    owner: &OwnerId,
    scope: &ScopeId,
    entity_type: &str,
    key: &str,
    generation: u32,
) -> Uuid {
    let (o, s) = (owner.as_str(), scope.as_str());
    let mut name = format!(
        "entity:v1:{}:{o}:{}:{s}:{}:{entity_type}:{}:{key}",
        o.len(),
        s.len(),
        entity_type.len(),
        key.len()
    );
    if generation > 0 {
        name.push_str(&format!(":gen:{generation}"));
    }
    ids::v5_name(&name)
}

/// The entity of (owner, scope, type, key) across generations: the active
/// node if one exists (`Ok(Ok(node))`), else the id a new one takes — the
/// first generation with no node (`Ok(Err(id))`). The one reading of
/// [`named_entity_id`]'s generations for lookups outside plan building.
pub fn live_named_entity(
    tx: &mut dyn kith_store::Tx,
    owner: &OwnerId,
    scope: &ScopeId,
    entity_type: &str,
    key: &str,
) -> Result<Result<Node, Uuid>, StoreError> {
    let mut generation = 0;
    loop {
        let id = named_entity_id(owner, scope, entity_type, key, generation);
        match tx.get_node(id)? {
            Some(node) if node.lifecycle.is_active() => return Ok(Ok(node)),
            Some(_) => generation += 1,
            None => return Ok(Err(id)),
        }
    }
}

/// `uuid5(KITH_NS, "entity:owner-ref:v1:{len}:{owner}:{len}:{scope}")`: the
/// owner's reference entity for `first_person_owner` turns (content "I").
pub fn owner_reference_id(owner: &OwnerId, scope: &ScopeId) -> Uuid {
    let (o, s) = (owner.as_str(), scope.as_str());
    ids::v5_name(&format!(
        "entity:owner-ref:v1:{}:{o}:{}:{s}",
        o.len(),
        s.len()
    ))
}

/// `uuid5(KITH_NS, "entity:ref:v1:{event_id}:{family}")`: the event-local
/// entity of a personal reference (family `I`, `we`, `you`, `he`, `she`,
/// `they`, `it`).
pub fn reference_entity_id(event_id: Uuid, family: &str) -> Uuid {
    ids::v5_name(&format!("entity:ref:v1:{event_id}:{family}"))
}

/// `uuid5(KITH_NS, "node:claim:v1:{event_id}:{digest}:{occurrence}")` where
/// digest is the first 16 hex of SHA-256 over the claim's canonical
/// `{kind, subject, predicate, object, polarity, start, end}`.
pub fn claim_id(event_id: Uuid, digest: &str, occurrence: usize) -> Uuid {
    ids::v5_name(&format!("node:claim:v1:{event_id}:{digest}:{occurrence}"))
}

/// `uuid5(KITH_NS, "edge:v1:{source}:{EDGE_TYPE}:{target}")`.
pub fn edge_id(source: Uuid, edge_type: EdgeType, target: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:v1:{source}:{}:{target}", edge_type.as_str()))
}

pub use kith_identity::references::personal_family;

/// The entity types whose nodes can be a person's, in the order
/// [`persons::person_node`] prefers them: the person entity, then an
/// untyped one (`other`, then blank; `kith_ingest_v4`).
pub const PERSON_CANDIDATE_TYPES: [&str; 3] = ["person", "other", ""];

/// What [`kinds::typed_node`] needs to know of a stored node of type
/// `id_type`.
pub fn stored_name(id_type: &str, node: &Node) -> kinds::StoredName {
    kinds::StoredName {
        id_type: id_type.to_string(),
        entity_type: node
            .metadata
            .as_ref()
            .and_then(|m| m.get("entity_type"))
            .and_then(Value::as_str)
            .unwrap_or(id_type)
            .to_string(),
    }
}

/// The node that is the person named `key` in `event`'s owner and scope
/// under `policy`, outside plan building (group links, known persons):
/// `Ok(node)` for a person's node ([`TypedNode::Existing`]),
/// `Err(Some(node))` for an untyped node a person would adopt, `Err(None)`
/// when they have none.
pub fn live_person(
    tx: &mut dyn kith_store::Tx,
    event: &Event,
    key: &str,
    policy: Policy,
) -> Result<Result<Node, Option<Node>>, StoreError> {
    let mut stored = Vec::new();
    let mut nodes = Vec::new();
    for ty in PERSON_CANDIDATE_TYPES {
        if let Ok(node) = live_named_entity(tx, &event.owner_id, &event.scope, ty, key)? {
            stored.push(stored_name(ty, &node));
            nodes.push(node);
        }
    }
    Ok(match persons::person_node(&stored, policy) {
        TypedNode::Existing(i) => Ok(nodes.swap_remove(i)),
        TypedNode::Adopt(i) => Err(Some(nodes.swap_remove(i))),
        TypedNode::New => Err(None),
    })
}

/// The active entity of (owner, scope, type, key) for `event`: generation
/// 0, or the first generation after retired ones.
pub fn active_named_entity(
    lookup: &mut dyn Lookup,
    event: &Event,
    entity_type: &str,
    key: &str,
) -> Result<Option<Node>, StoreError> {
    let mut generation = 0;
    loop {
        let id = named_entity_id(&event.owner_id, &event.scope, entity_type, key, generation);
        match lookup.node(id)? {
            Some(node) if node.lifecycle.is_active() => return Ok(Some(node)),
            Some(_) => generation += 1,
            None => return Ok(None),
        }
    }
}

/// What plan building may ask the store.
pub trait Lookup {
    /// A node by id.
    fn node(&mut self, id: Uuid) -> Result<Option<Node>, StoreError>;
    /// Active claims an entity has (targets of its HAS_FACT edges) whose
    /// normalised predicate is one of `predicates`.
    fn claims_about(
        &mut self,
        subject: Uuid,
        predicates: &[String],
    ) -> Result<Vec<Node>, StoreError>;
}

/// [`Lookup`] inside a store transaction.
pub struct TxLookup<'a>(pub &'a mut dyn kith_store::Tx);

impl Lookup for TxLookup<'_> {
    fn node(&mut self, id: Uuid) -> Result<Option<Node>, StoreError> {
        self.0.get_node(id)
    }

    fn claims_about(
        &mut self,
        subject: Uuid,
        predicates: &[String],
    ) -> Result<Vec<Node>, StoreError> {
        self.0.subject_claims(subject, predicates)
    }
}

/// Who the event's singular first person is, and under which options.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The first-person decision for this event.
    pub first_person: FirstPerson,
    /// The options in force.
    pub options: IdentityOptions,
    /// Validated pronoun-repair answers (by grounded fact index and field).
    pub repairs: Vec<kith_extract::pronoun::PronounAnswer>,
    /// The policy whose rules made these decisions; the plan records it.
    pub policy: Policy,
}

/// Builds a plan, asking `lookup` (inside the transaction that saves it)
/// which entities exist and which claims their subjects already have.
pub fn build(
    event: &Event,
    grounded: &Grounded,
    extraction_id: Uuid,
    revision: u32,
    identity: &Identity,
    lookup: &mut dyn Lookup,
) -> Result<DerivationPlan, StoreError> {
    let mut b = Builder {
        event,
        identity,
        lookup,
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    // Entities first: named ones by their deterministic id.
    let entity_ids = b.entities(grounded)?;
    // Claims: facts, then relationships a fact does not already cover.
    let mut seen_digests: Vec<String> = Vec::new();
    for (index, f) in grounded.facts.iter().enumerate() {
        b.fact(index, f, &entity_ids, &mut seen_digests)?;
    }
    for r in &grounded.relationships {
        let covered = grounded.facts.iter().any(|f| {
            f.subject == r.source && f.object == r.target && f.evidence.start == r.evidence.start
        });
        if !covered {
            b.relationship(r, &entity_ids, &mut seen_digests)?;
        }
    }
    Ok(DerivationPlan {
        policy: identity.policy.name().to_string(),
        revision,
        event_id: event.id,
        owner_id: event.owner_id.clone(),
        scope: event.scope.clone(),
        content_sha256: event.content_sha256.clone(),
        extraction_id,
        nodes: b.nodes,
        edges: b.edges,
        dropped: grounded.dropped.clone(),
        identity: identity.options,
    })
}

/// The metadata of a fact's claim: its triple and evidence, how its ends
/// were linked, its typed extras, who "I" is, and what pronoun repair
/// changed.
fn fact_metadata(
    f: &GroundedFact,
    bases: (Option<&Bound>, Option<&Bound>),
    identity: &Identity,
    owner_id: &OwnerId,
    repaired: &Repaired,
) -> Map<String, Value> {
    let fact = &f.fact;
    let mut metadata = claim_metadata(
        "fact",
        [&fact.subject, &fact.predicate, &fact.object],
        fact.polarity,
        &f.evidence,
        fact.confidence,
    );
    metadata.insert("subject_link_status".into(), json!(link_status(&f.subject)));
    metadata.insert("object_link_status".into(), json!(link_status(&f.object)));
    put_opt(
        &mut metadata,
        "subject_entity_type",
        fact.subject_entity_type.as_deref(),
    );
    put_opt(
        &mut metadata,
        "object_entity_type",
        fact.object_entity_type.as_deref(),
    );
    if let Some(intent) = fact.temporal_intent {
        metadata.insert("temporal_intent".into(), json!(intent));
    }
    put_opt(
        &mut metadata,
        "replaces_object",
        fact.replaces_object.as_deref(),
    );
    if let Some(condition) = fact.condition.as_deref() {
        metadata.insert("condition".into(), json!(condition));
        metadata.insert("condition_state".into(), json!("unknown"));
    }
    put_reported(&mut metadata, f.reported_by.as_ref());
    speaker_reference(&mut metadata, bases, identity, owner_id);
    repaired.write(&mut metadata);
    metadata
}

/// `reported: {"by": …}` for a claim in someone else's reported words
/// (`kith_ingest_v8`); `by` is null for hearsay from nobody named.
fn put_reported(metadata: &mut Map<String, Value>, reported: Option<&Reported>) {
    if let Some(r) = reported {
        metadata.insert("reported".into(), json!({ "by": r.by }));
    }
}

/// What pronoun repair changed in one claim (spec: pronoun repair).
struct Repaired {
    /// Whether the `kith_ingest_v3` format applies (else `kith_ingest_v2`'s:
    /// `resolved_from_context: true` and a list of resolutions).
    v3: bool,
    /// The claim's own sentence as extracted.
    original: String,
    /// That sentence with each repaired pronoun replaced by its names.
    text: String,
    /// People a field resolved to several of: the claim mentions each.
    mentions: Vec<Uuid>,
    /// `resolved_from_context.fields`.
    fields: Map<String, Value>,
    /// `resolution.replacements`.
    replacements: Vec<Value>,
    /// Memories of the request's window that wrote a name.
    event_ids: Vec<String>,
}

impl Repaired {
    fn new(sentence: &str, v3: bool) -> Self {
        Repaired {
            v3,
            original: sentence.to_string(),
            text: sentence.to_string(),
            mentions: Vec::new(),
            fields: Map::new(),
            replacements: Vec::new(),
            event_ids: Vec::new(),
        }
    }

    fn record(&mut self, field: &str, pronoun: &str, names: &[String], found_in: &[String]) {
        self.fields.insert(
            field.to_string(),
            json!({"pronoun": pronoun, "names": names}),
        );
        let found: Vec<Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| json!({"name": n, "found_in": found_in.get(i)}))
            .collect();
        self.replacements.push(json!({
            "field": field, "pronoun": pronoun, "names": names,
            "rebound": names.len() == 1, "found": found,
        }));
        for place in found_in {
            if let Some(id) = place.strip_prefix("memory:") {
                if !self.event_ids.iter().any(|e| e == id) {
                    self.event_ids.push(id.to_string());
                }
            }
        }
    }

    /// Writes `resolved_from_context`, `resolution` and the grounding method
    /// into the claim's metadata, when anything was repaired; the claim's
    /// `evidence_quote` stays the original quote.
    fn write(&self, metadata: &mut Map<String, Value>) {
        if self.replacements.is_empty() {
            return;
        }
        if !self.v3 {
            let legacy: Vec<Value> = self
                .replacements
                .iter()
                .map(|r| {
                    json!({"field": r["field"], "pronoun": r["pronoun"], "names": r["names"],
                           "rebound": r["rebound"]})
                })
                .collect();
            metadata.insert("resolved_from_context".into(), json!(true));
            metadata.insert("resolution".into(), json!(legacy));
            return;
        }
        metadata.insert(
            "resolved_from_context".into(),
            json!({"event_ids": self.event_ids, "fields": self.fields}),
        );
        metadata.insert(
            "resolution".into(),
            json!({"sentence": self.original, "replacements": self.replacements}),
        );
        metadata.insert("grounding_method".into(), json!("pronoun_repair_v1"));
    }
}

/// How an endpoint's singular first person was bound.
#[derive(Debug, Clone, PartialEq)]
enum Bound {
    /// For this reason (the turn's speaker, the owner…).
    By(Basis),
    /// A quoted first person (`kith_ingest_v9`), bound to the person the
    /// quotation is given to, as the binding found them (read once,
    /// recorded as it was bound).
    Quoted(String),
}

impl Bound {
    fn basis(&self) -> Basis {
        match self {
            Bound::By(basis) => *basis,
            Bound::Quoted(_) => Basis::QuotedSpeaker,
        }
    }

    fn quoted_speaker(&self) -> Option<&str> {
        match self {
            Bound::Quoted(name) => Some(name),
            Bound::By(_) => None,
        }
    }
}

/// Records which endpoint a first-person binding bound, and why:
/// `speaker_reference: {speaker, fields, basis}` for a named person, or
/// `owner_reference: {owner_id, fields, basis}` for the owner's reference
/// entity of a `first_person_owner` turn. A quoted first person bound to
/// the person the quotation is given to (`kith_ingest_v9`) names that
/// person, as the binding found them; it is the one recorded when a claim
/// has both kinds.
fn speaker_reference(
    metadata: &mut Map<String, Value>,
    bases: (Option<&Bound>, Option<&Bound>),
    identity: &Identity,
    owner_id: &OwnerId,
) {
    let quoted_name = |b: Option<&Bound>| b.and_then(Bound::quoted_speaker).map(str::to_string);
    let quoted = quoted_name(bases.0).or_else(|| quoted_name(bases.1));
    let (subject, object) = if quoted.is_some() {
        (
            bases.0.filter(|b| b.quoted_speaker().is_some()),
            bases.1.filter(|b| b.quoted_speaker().is_some()),
        )
    } else {
        bases
    };
    let (subject, object) = (subject.map(Bound::basis), object.map(Bound::basis));
    let (who, name) = match (quoted, &identity.first_person) {
        (Some(name), _) => ("speaker", name),
        (None, FirstPerson::Named { name, .. }) => ("speaker", name.clone()),
        // The owner's reference has no display name: it names the owner
        // (`kith_ingest_v2` wrote the word "owner" as its speaker).
        (None, FirstPerson::OwnerReference) if identity.policy.has_v3_rules() => {
            ("owner_id", owner_id.as_str().to_string())
        }
        (None, FirstPerson::OwnerReference) => ("speaker", "owner".to_string()),
        (None, FirstPerson::Local) => return,
    };
    let mut fields = Vec::new();
    if subject.is_some() {
        fields.push("subject");
    }
    if object.is_some() {
        fields.push("object");
    }
    let Some(basis) = subject.or(object) else {
        return;
    };
    let key = if basis == Basis::FirstPersonOwner {
        "owner_reference"
    } else {
        "speaker_reference"
    };
    metadata.insert(
        key.into(),
        json!({who: name, "fields": fields, "basis": basis}),
    );
}

/// The parts of a claim the builder needs.
struct ClaimSpec<'a> {
    kind: &'static str,
    subject: &'a str,
    predicate: &'a str,
    object: &'a str,
    polarity: Polarity,
    start: usize,
    end: usize,
    node_type: NodeType,
    content: &'a str,
    metadata: Map<String, Value>,
    epistemic: EpistemicType,
    update: bool,
    replaces_object: Option<&'a str>,
}

struct Builder<'a> {
    event: &'a Event,
    identity: &'a Identity,
    lookup: &'a mut dyn Lookup,
    nodes: Vec<PlannedNode>,
    edges: Vec<Edge>,
}

impl Builder<'_> {
    /// The plan's entity for each grounded entity, in order; `None` for a
    /// listed pronoun (a reference, not a name: claims that use it resolve
    /// through the first-person rules instead).
    fn entities(&mut self, grounded: &Grounded) -> Result<Vec<Option<Uuid>>, StoreError> {
        let mut entity_ids = Vec::with_capacity(grounded.entities.len());
        let short_name = kith_identity::first_person::speakers_short_name(
            &self.identity.first_person,
            &self.event.content,
            &grounded.entities,
            self.identity.policy,
        );
        for entity in &grounded.entities {
            let entity_type = entity.entity_type.trim().to_lowercase();
            if personal_family(&entity.name, Some(&entity_type)).is_some() {
                entity_ids.push(None);
                continue;
            }
            // The speaker introducing themselves by a short name is the
            // speaker (`kith_ingest_v9`).
            if let (Some(short), FirstPerson::Named { name, .. }) =
                (&short_name, &self.identity.first_person)
            {
                if entity.name.trim().eq_ignore_ascii_case(short.trim()) {
                    let name = name.clone();
                    entity_ids.push(Some(self.named_entity(&name, "person", None)?));
                    continue;
                }
            }
            let id =
                self.named_entity(&entity.name, &entity_type, entity.description.as_deref())?;
            entity_ids.push(Some(id));
        }
        Ok(entity_ids)
    }

    /// Plans the claim of grounded fact `index` and its links.
    fn fact(
        &mut self,
        index: usize,
        f: &GroundedFact,
        entity_ids: &[Option<Uuid>],
        seen_digests: &mut Vec<String>,
    ) -> Result<(), StoreError> {
        let sentence = f.evidence.sentence.as_str();
        let (mut subject, subject_basis) = self.endpoint(
            &f.subject,
            &f.fact.subject,
            &f.fact.object,
            entity_ids,
            sentence,
        )?;
        let (mut object, object_basis) = self.endpoint(
            &f.object,
            &f.fact.object,
            &f.fact.subject,
            entity_ids,
            sentence,
        )?;
        let repaired = self.repair_pronouns(index, f, &mut subject, &mut object)?;
        let fact = &f.fact;
        let identity = self.identity;
        let metadata = fact_metadata(
            f,
            (subject_basis.as_ref(), object_basis.as_ref()),
            identity,
            &self.event.owner_id,
            &repaired,
        );
        let node_type = match fact.fact_type {
            FactType::Fact => NodeType::Fact,
            FactType::Preference => NodeType::Preference,
            FactType::Decision => NodeType::Decision,
        };
        let spec = ClaimSpec {
            kind: "fact",
            subject: &fact.subject,
            predicate: &fact.predicate,
            object: &fact.object,
            polarity: fact.polarity,
            start: f.evidence.start,
            end: f.evidence.end,
            node_type,
            content: &repaired.text,
            metadata,
            epistemic: fact.epistemic_type,
            // What someone else is said to have said retires nothing the
            // person said themselves.
            update: fact.temporal_intent == Some(kith_extract::TemporalIntent::Update)
                && f.reported_by.is_none(),
            replaces_object: fact.replaces_object.as_deref(),
        };
        let id = self.claim(spec, subject, seen_digests)?;
        self.link(subject, EdgeType::HasFact, Some(id), fact.confidence);
        self.link(Some(id), EdgeType::Mentions, object, fact.confidence);
        for person in repaired.mentions {
            self.link(Some(id), EdgeType::Mentions, Some(person), fact.confidence);
        }
        Ok(())
    }

    /// Applies the pronoun-repair answers of fact `index`: one name
    /// rebinds the field to that person; several keep the pronoun entity
    /// and each becomes an entity the claim mentions. The claim's text
    /// names them; its quote stays verbatim. (`kith_ingest_v2` kept the
    /// text and only rebound a single name.)
    fn repair_pronouns(
        &mut self,
        index: usize,
        f: &GroundedFact,
        subject: &mut Option<Uuid>,
        object: &mut Option<Uuid>,
    ) -> Result<Repaired, StoreError> {
        let identity = self.identity;
        let v3 = identity.policy.has_v3_rules();
        let mut repaired = Repaired::new(&f.evidence.sentence, v3);
        for repair in identity.repairs.iter().filter(|r| r.index == index) {
            let (slot, pronoun) = match repair.field.as_str() {
                "subject" => (&mut *subject, &f.fact.subject),
                "object" => (&mut *object, &f.fact.object),
                _ => continue,
            };
            if v3 {
                let Some(text) =
                    kith_extract::pronoun::replace_pronoun(&repaired.text, pronoun, &repair.names)
                else {
                    continue;
                };
                repaired.text = text;
            }
            if let [name] = repair.names.as_slice() {
                *slot = Some(self.named_entity(name, "person", None)?);
            } else if v3 {
                for name in &repair.names {
                    let id = self.named_entity(name, "person", None)?;
                    repaired.mentions.push(id);
                }
            }
            repaired.record(&repair.field, pronoun, &repair.names, &repair.found_in);
        }
        Ok(repaired)
    }

    /// Plans the claim of a grounded relationship no fact covers, and its
    /// links.
    fn relationship(
        &mut self,
        r: &GroundedRelationship,
        entity_ids: &[Option<Uuid>],
        seen_digests: &mut Vec<String>,
    ) -> Result<(), StoreError> {
        let sentence = r.evidence.sentence.as_str();
        let rel = &r.relationship;
        let (source, source_basis) = self.endpoint(
            &r.source,
            &rel.source_entity,
            &rel.target_entity,
            entity_ids,
            sentence,
        )?;
        let (target, target_basis) = self.endpoint(
            &r.target,
            &rel.target_entity,
            &rel.source_entity,
            entity_ids,
            sentence,
        )?;
        let mut metadata = claim_metadata(
            "relationship",
            [
                &rel.source_entity,
                &rel.relationship_type,
                &rel.target_entity,
            ],
            rel.polarity,
            &r.evidence,
            rel.confidence,
        );
        put_reported(&mut metadata, r.reported_by.as_ref());
        speaker_reference(
            &mut metadata,
            (source_basis.as_ref(), target_basis.as_ref()),
            self.identity,
            &self.event.owner_id,
        );
        let spec = ClaimSpec {
            kind: "relationship",
            subject: &rel.source_entity,
            predicate: &rel.relationship_type,
            object: &rel.target_entity,
            polarity: rel.polarity,
            start: r.evidence.start,
            end: r.evidence.end,
            node_type: NodeType::Fact,
            content: &r.evidence.sentence,
            metadata,
            epistemic: rel.epistemic_type,
            update: false,
            replaces_object: None,
        };
        let id = self.claim(spec, source, seen_digests)?;
        self.link(source, EdgeType::HasFact, Some(id), rel.confidence);
        self.link(Some(id), EdgeType::Mentions, target, rel.confidence);
        Ok(())
    }

    fn push_node(&mut self, planned: PlannedNode) {
        if !self.nodes.iter().any(|p| p.node.id == planned.node.id) {
            self.nodes.push(planned);
        }
    }

    /// Plans an existing node as it is (commit checks it is unchanged).
    fn reuse(&mut self, node: Node) {
        self.push_node(PlannedNode {
            action: NodeAction::Reuse {
                checksum: node.checksum(),
            },
            node,
        });
    }

    /// Plans a new entity of this event (tentative, asserted, confidence 0.5).
    fn create_entity(&mut self, id: Uuid, content: &str, metadata: Map<String, Value>) {
        let node = self.node(
            id,
            NodeType::Entity,
            content,
            metadata,
            EpistemicType::Asserted,
            0.5,
        );
        self.push_node(PlannedNode {
            action: NodeAction::Create,
            node,
        });
    }

    /// The planned version of a node, if the plan already holds it.
    fn planned(&self, id: Uuid) -> Option<&Node> {
        self.nodes.iter().find(|p| p.node.id == id).map(|p| &p.node)
    }

    /// A new node carrying the event's owner, scope, session and times.
    fn node(
        &self,
        id: Uuid,
        node_type: NodeType,
        content: &str,
        metadata: Map<String, Value>,
        epistemic_type: EpistemicType,
        confidence: f64,
    ) -> Node {
        let e = self.event;
        Node {
            id,
            owner_id: e.owner_id.clone(),
            scope: e.scope.clone(),
            session_id: e.session_id.clone(),
            node_type,
            content: content.to_string(),
            metadata: Some(Value::Object(metadata)),
            confidence,
            lifecycle: Lifecycle::Tentative,
            epistemic_type,
            source_type: SourceType::for_role(e.role),
            valid_from: e.effective_time(),
            valid_to: None,
            event_time: e.event_time,
            superseded_by: None,
            evidence_refs: vec![e.id],
            created_at: e.ingested_at,
            updated_at: e.ingested_at,
        }
    }

    /// The named entity of (owner, scope, type, name): reused when active,
    /// else created (a retired id moves to the next generation).
    fn named_entity(
        &mut self,
        name: &str,
        entity_type: &str,
        description: Option<&str>,
    ) -> Result<Uuid, StoreError> {
        let e = self.event;
        let key = name.trim().to_lowercase();
        let policy = self.identity.policy;
        let untyped = kinds::UNTYPED.contains(&entity_type);
        if (entity_type == "person" && policy.has_v4_rules()) || (!untyped && policy.has_v9_rules())
        {
            if let Some(id) = self.untyped_node(entity_type, &key)? {
                return Ok(id);
            }
        }
        if untyped && policy.has_v9_rules() {
            if let Some(id) = self.typed_node_of_mention(entity_type, &key)? {
                return Ok(id);
            }
        }
        let mut generation = 0;
        loop {
            let id = named_entity_id(&e.owner_id, &e.scope, entity_type, &key, generation);
            if self.planned(id).is_some() {
                return Ok(id);
            }
            match self.lookup.node(id)? {
                Some(node) if node.lifecycle.is_active() => {
                    self.reuse(node);
                    return Ok(id);
                }
                Some(_) => generation += 1,
                None => {
                    let mut metadata = Map::new();
                    metadata.insert("entity_type".into(), json!(entity_type));
                    if let Some(d) = description.filter(|d| !d.trim().is_empty()) {
                        metadata.insert("description".into(), json!(d));
                    }
                    if self.marks_owner_name(name, entity_type) {
                        // Written once, with the node: later user turns that
                        // name nobody carry this name (owner name carry).
                        metadata.insert("owner_name".into(), json!(true));
                    }
                    self.create_entity(id, name.trim(), metadata);
                    return Ok(id);
                }
            }
        }
    }

    /// The live node of (type, key) in this plan or the store: the plan's
    /// version when it holds one, else the active generation.
    fn live_named(&mut self, entity_type: &str, key: &str) -> Result<Option<Node>, StoreError> {
        let e = self.event;
        let mut generation = 0;
        loop {
            let id = named_entity_id(&e.owner_id, &e.scope, entity_type, key, generation);
            if let Some(node) = self.planned(id) {
                return Ok(Some(node.clone()));
            }
            match self.lookup.node(id)? {
                Some(node) if node.lifecycle.is_active() => return Ok(Some(node)),
                Some(_) => generation += 1,
                None => return Ok(None),
            }
        }
    }

    /// One thing, one node (`kith_ingest_v4` for a person, `kith_ingest_v9`
    /// for any type): the untyped node an entity of `entity_type` named
    /// `key` is, when [`kinds::typed_node`] says it has one — adopted earlier
    /// (reused) or adopted now (planned as an update that types it, checked
    /// against its checksum at commit). `None`: the entity of its own type
    /// is the one to use or create.
    fn untyped_node(&mut self, entity_type: &str, key: &str) -> Result<Option<Uuid>, StoreError> {
        let mut stored = Vec::new();
        let mut nodes = Vec::new();
        for ty in [entity_type, "other", ""] {
            if let Some(node) = self.live_named(ty, key)? {
                stored.push(stored_name(ty, &node));
                nodes.push(node);
            }
        }
        let (i, adopt) = match kinds::typed_node(&stored, entity_type, self.identity.policy) {
            TypedNode::New => return Ok(None),
            TypedNode::Existing(i) if stored[i].id_type == entity_type => return Ok(None),
            TypedNode::Existing(i) => (i, false),
            TypedNode::Adopt(i) => (i, true),
        };
        let node = nodes.swap_remove(i);
        let id = node.id;
        if !adopt {
            if self.planned(id).is_none() {
                self.reuse(node);
            }
            return Ok(Some(id));
        }
        let event_id = self.event.id.to_string();
        let at = self.event.ingested_at;
        // Its id keeps the type it was first stored under; the metadata
        // says what it is now, and which turn made it so.
        let typed_by = if entity_type == "person" {
            "typed_person_by"
        } else {
            "typed_by"
        };
        let adopt_into = |n: &mut Node| {
            if let Some(m) = n.metadata.as_mut().and_then(Value::as_object_mut) {
                m.insert("entity_type".into(), json!(entity_type));
                m.insert(typed_by.into(), json!(event_id));
            }
        };
        if let Some(planned) = self.nodes.iter_mut().find(|p| p.node.id == id) {
            // This plan already holds it: created now, or reused as is.
            if let NodeAction::Reuse { checksum } = &planned.action {
                planned.action = NodeAction::Update {
                    before: checksum.clone(),
                };
                planned.node.updated_at = at;
            }
            adopt_into(&mut planned.node);
            return Ok(Some(id));
        }
        let before = node.checksum();
        let mut typed = node;
        adopt_into(&mut typed);
        typed.updated_at = at;
        self.push_node(PlannedNode {
            action: NodeAction::Update { before },
            node: typed,
        });
        Ok(Some(id))
    }

    /// The node an untyped mention named `key` is when its name has one
    /// typed node (`kith_ingest_v9`, [`kinds::untyped_mention`]): `None`
    /// when the mention's own untyped node exists (it stays the one), or
    /// the name has no node, or several, among [`kinds::NAMED_TYPES`].
    fn typed_node_of_mention(
        &mut self,
        entity_type: &str,
        key: &str,
    ) -> Result<Option<Uuid>, StoreError> {
        if self.live_named(entity_type, key)?.is_some() {
            return Ok(None);
        }
        let mut stored = Vec::new();
        let mut nodes = Vec::new();
        for ty in kinds::NAMED_TYPES {
            if let Some(node) = self.live_named(ty, key)? {
                stored.push(stored_name(ty, &node));
                nodes.push(node);
            }
        }
        let Some(i) = kinds::untyped_mention(&stored) else {
            return Ok(None);
        };
        let node = nodes.swap_remove(i);
        let id = node.id;
        if self.planned(id).is_none() {
            self.reuse(node);
        }
        Ok(Some(id))
    }

    /// The node an endpoint stands for, and the first-person basis when a
    /// singular first person was bound; `None` for a plain value.
    /// `sentence` is the claim's evidence sentence: a first person it
    /// quotes (`kith_ingest_v5`) or reports after a colon
    /// (`kith_ingest_v6`) stays local, unless the claim's first person and
    /// its `other` endpoint both stand in the author's own words
    /// (`kith_ingest_v7`).
    fn endpoint(
        &mut self,
        r: &EndpointRef,
        surface: &str,
        other: &str,
        entity_ids: &[Option<Uuid>],
        sentence: &str,
    ) -> Result<(Option<Uuid>, Option<Bound>), StoreError> {
        let family = match r {
            EndpointRef::Entity { index } => match entity_ids.get(*index).copied().flatten() {
                Some(id) => return Ok((Some(id), None)),
                // A listed pronoun.
                None => personal_family(surface, None),
            },
            EndpointRef::Personal { surface } => personal_family(surface, None),
            EndpointRef::Value => return Ok((None, None)),
        };
        let Some(family) = family else {
            return Ok((None, None));
        };
        if family != "I" {
            return Ok((Some(self.reference(family)), None));
        }
        let policy = self.identity.policy;
        if persons::first_person_is_someone_elses(sentence, other, policy) {
            // Someone else's "I": theirs when the sentence names whose it is.
            let named = policy
                .has_v9_rules()
                .then(|| persons::relayed_speaker(sentence));
            if let Some(name) = named.flatten() {
                let id = self.named_entity(&name, "person", None)?;
                return Ok((Some(id), Some(Bound::Quoted(name))));
            }
        } else {
            match self.identity.first_person.clone() {
                FirstPerson::Named { name, basis } => {
                    let id = self.named_entity(&name, "person", None)?;
                    return Ok((Some(id), Some(Bound::By(basis))));
                }
                FirstPerson::OwnerReference => {
                    let id = self.owner_reference()?;
                    return Ok((Some(id), Some(Bound::By(Basis::FirstPersonOwner))));
                }
                FirstPerson::Local => {}
            }
        }
        Ok((Some(self.reference(family)), None))
    }

    /// Whether a person entity created now under `name` is the owner's: a
    /// user turn's own speaker or self-introduction.
    fn marks_owner_name(&self, name: &str, entity_type: &str) -> bool {
        match &self.identity.first_person {
            FirstPerson::Named { name: bound, .. } => {
                self.identity.options.owner_name_carry
                    && entity_type == "person"
                    && self.identity.first_person.names_the_owner(self.event.role)
                    && bound.trim().eq_ignore_ascii_case(name.trim())
            }
            _ => false,
        }
    }

    /// The owner's reference entity (one per owner and scope).
    fn owner_reference(&mut self) -> Result<Uuid, StoreError> {
        let e = self.event;
        let id = owner_reference_id(&e.owner_id, &e.scope);
        if self.planned(id).is_some() {
            return Ok(id);
        }
        match self.lookup.node(id)? {
            Some(node) => {
                self.reuse(node);
            }
            None => {
                let mut metadata = Map::new();
                metadata.insert("entity_type".into(), json!("person"));
                metadata.insert("identity_status".into(), json!("owner_reference"));
                metadata.insert("owner_id".into(), json!(e.owner_id));
                metadata.insert("kith_first_person_owner_v1".into(), json!(true));
                self.create_entity(id, "I", metadata);
            }
        }
        Ok(id)
    }

    fn reference(&mut self, family: &'static str) -> Uuid {
        let e = self.event;
        let id = reference_entity_id(e.id, family);
        let mut metadata = Map::new();
        metadata.insert("entity_type".into(), json!("personal_reference"));
        metadata.insert("identity_status".into(), json!("unresolved_reference"));
        metadata.insert("reference_event_id".into(), json!(e.id.to_string()));
        self.create_entity(id, family, metadata);
        id
    }

    /// Plans a claim node; merges it with a claim it repeats and supersedes
    /// claims it replaces (both only for a subject with history).
    fn claim(
        &mut self,
        mut spec: ClaimSpec<'_>,
        subject: Option<Uuid>,
        seen_digests: &mut Vec<String>,
    ) -> Result<Uuid, StoreError> {
        let e = self.event;
        let digest_input = json!({
            "kind": spec.kind,
            "subject": spec.subject,
            "predicate": spec.predicate,
            "object": spec.object,
            "polarity": spec.polarity,
            "start": spec.start,
            "end": spec.end,
        });
        let digest = canon::checksum(&digest_input)[..16].to_string();
        let occurrence = seen_digests.iter().filter(|d| **d == digest).count();
        seen_digests.push(digest.clone());
        let id = claim_id(e.id, &digest, occurrence);
        let source_type = SourceType::for_role(e.role);
        let confidence = base_confidence(spec.epistemic, source_type);
        let view = ClaimView {
            node_type: spec.node_type,
            epistemic: spec.epistemic,
            source_type,
            predicate: spec.predicate,
            object: spec.object,
            positive: spec.polarity == Polarity::Positive,
            conditional: spec.metadata.contains_key("condition"),
            valid_from_ms: e.effective_time().unix_millis(),
        };

        let mut evidence = vec![e.id];
        let mut merged = Vec::new();
        let mut superseded = Vec::new();
        let options = self.identity.options;
        let history = match subject {
            // Event-local references have no history by construction.
            Some(s) if options.claim_merge || options.supersedence => self
                .lookup
                .claims_about(s, &claims::related_predicates(spec.predicate))?,
            _ => Vec::new(),
        };
        for old in history {
            // A claim this event already made (a replay or a reingest) is
            // not history.
            if old.evidence_refs.contains(&e.id) {
                continue;
            }
            let Some(old_view) = view_of(&old) else {
                continue;
            };
            let repeat = options.claim_merge && claims::is_repeat(&view, &old_view);
            let replaced = options.supersedence
                && spec.update
                && claims::replaces(&view, spec.replaces_object, &old_view);
            if !(repeat || replaced) {
                continue;
            }
            if repeat {
                for r in &old.evidence_refs {
                    if !evidence.contains(r) {
                        evidence.insert(evidence.len() - 1, *r);
                    }
                }
                merged.push(old.id.to_string());
            }
            superseded.push(old.id.to_string());
            let before = old.checksum();
            let mut retired = old;
            retired.lifecycle = Lifecycle::Superseded;
            retired.superseded_by = Some(id);
            retired.valid_to = Some(e.effective_time());
            retired.updated_at = e.ingested_at;
            let retired_id = retired.id;
            self.push_node(PlannedNode {
                action: NodeAction::Update { before },
                node: retired,
            });
            self.link(Some(id), EdgeType::Supersedes, Some(retired_id), 1.0);
        }
        if !merged.is_empty() {
            spec.metadata
                .insert("merged_claim_ids".into(), json!(merged));
        }
        if !superseded.is_empty() {
            spec.metadata.insert("supersedes".into(), json!(superseded));
        }
        let mut node = self.node(
            id,
            spec.node_type,
            spec.content,
            spec.metadata,
            spec.epistemic,
            confidence,
        );
        node.evidence_refs = evidence;
        self.push_node(PlannedNode {
            action: NodeAction::Create,
            node,
        });
        Ok(id)
    }

    fn link(
        &mut self,
        source: Option<Uuid>,
        edge_type: EdgeType,
        target: Option<Uuid>,
        confidence: f64,
    ) {
        let (Some(source), Some(target)) = (source, target) else {
            return;
        };
        let id = edge_id(source, edge_type, target);
        if self.edges.iter().any(|e| e.id == id) {
            return;
        }
        let e = self.event;
        self.edges.push(Edge {
            id,
            owner_id: e.owner_id.clone(),
            scope: e.scope.clone(),
            source_id: source,
            target_id: target,
            edge_type,
            confidence,
            valid_from: e.effective_time(),
            valid_to: None,
            provenance_event_id: Some(e.id),
            metadata: None,
            created_at: e.ingested_at,
        });
    }
}

/// The comparable parts of a stored claim, from its metadata.
pub(super) fn view_of(node: &Node) -> Option<ClaimView<'_>> {
    let m = node.metadata.as_ref()?;
    Some(ClaimView {
        node_type: node.node_type,
        epistemic: node.epistemic_type,
        source_type: node.source_type,
        predicate: m.get("predicate")?.as_str()?,
        object: m.get("object")?.as_str()?,
        positive: m.get("polarity")?.as_str()? == "positive",
        conditional: m.get("condition").is_some(),
        valid_from_ms: node.valid_from.unix_millis(),
    })
}

/// The metadata every claim carries: what was extracted (kind, subject,
/// predicate, object, polarity, confidence) and where its evidence stands.
fn claim_metadata(
    kind: &str,
    [subject, predicate, object]: [&String; 3],
    polarity: Polarity,
    evidence: &kith_extract::grounding::Evidence,
    confidence: f64,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("extraction_kind".into(), json!(kind));
    m.insert("subject".into(), json!(subject));
    m.insert("predicate".into(), json!(predicate));
    m.insert("object".into(), json!(object));
    m.insert("polarity".into(), json!(polarity));
    m.insert("evidence_quote".into(), json!(evidence.quote));
    m.insert(
        "evidence_span".into(),
        json!([evidence.start, evidence.end]),
    );
    m.insert("grounding_method".into(), json!("claim_sentences_v1"));
    m.insert("extraction_confidence".into(), json!(confidence));
    m
}

fn link_status(r: &EndpointRef) -> &'static str {
    match r {
        EndpointRef::Entity { .. } => "resolved",
        EndpointRef::Personal { .. } => "personal_reference",
        EndpointRef::Value => "value",
    }
}

fn put_opt(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(v) = value {
        map.insert(key.into(), json!(v));
    }
}
